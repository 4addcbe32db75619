/* src/ir/pass_eliminate_identity.c: Identity and (inference) Dropout nodes removed.
 *
 * Algorithm. For each Identity, or Dropout whose mask output is unused and whose training_mode input is
 * absent or a constant false (in inference Dropout is the identity whatever its ratio), with input x
 * and output y:
 *  - y is not a graph output: every use of y reads x instead, and the node dies;
 *  - y is a graph output, x is produced by a node p and x is not itself a graph output: p writes y
 *    directly (y's name, the graph output's name, is kept), the other uses of x read y, and the node
 *    dies;
 *  - otherwise (y is a graph output and x a graph input, a constant or another graph output) the node
 *    stays: two names must exist for one tensor, and lowering makes the copy.
 * Chains (Identity -> Identity) collapse in one walk, since each step leaves a graph of the same shape.
 *
 * Invariants. Graph output names never change, and g->outputs keeps its order. Nodes are only removed
 * (p keeps its position, and x's other users already came after p), so the order stays topological.
 */
#include "ir/ir.h"

/* Dropout in inference: the mask (output 1) unused, training_mode (input 2) absent or constant 0. */
static int dropout_is_identity(const qllc_node *n) {
  if (n->n_out > 1 && n->out[1] && (n->out[1]->n_uses > 0 || n->out[1]->is_output)) return 0;
  if (n->n_in > 2 && n->in[2]) {
    const qllc_value *t = n->in[2];
    if (!t->data || qllc_value_numel(t) != 1) return 0;
    size_t sz = qllc_elem_size((qllc_elem_kind)t->elem);
    const unsigned char *p = t->data;
    for (size_t i = 0; i < sz; i++)
      if (p[i]) return 0;
  }
  return 1;
}

qllc_status qllc_pass_eliminate_identity(qllc_graph *g, qllc_diag *diag) {
  qllc_graph_recount_uses(g);
  int changed = 0;
  for (int i = 0; i < g->n_nodes; i++) {
    qllc_node *n = g->nodes[i];
    if (n->dead || (n->op != QLLC_OP_IDENTITY && n->op != QLLC_OP_DROPOUT)) continue;
    if (n->op == QLLC_OP_DROPOUT && !dropout_is_identity(n)) continue;
    qllc_value *x = n->in[0], *y = n->n_out > 0 ? n->out[0] : NULL;
    if (!x || !y || x == y) continue;
    if (!y->is_output) {
      n->dead = 1; /* first, so replace_uses does not rewire the dying node itself */
      n->in[0] = NULL;
      x->n_uses--;
      qllc_graph_replace_uses(g, y, x);
      changed = 1;
      continue;
    }
    qllc_node *p = x->producer;
    if (!p || p->dead || x->is_output || x->is_input || x->data) continue;
    int k = 0;
    while (k < p->n_out && p->out[k] != x) k++;
    if (k == p->n_out) continue;
    n->dead = 1;
    n->in[0] = NULL;
    x->n_uses--;
    p->out[k] = y;
    y->producer = p;
    x->producer = NULL;
    qllc_graph_replace_uses(g, x, y);
    changed = 1;
  }
  if (changed) qllc_graph_compact(g);
  return QLLC_OK;
}
