/* src/ir/pass_fold_constants.c: evaluate every node that can be computed at compile time.
 *
 * Walks the nodes in topological order and calls qllc_const_eval on each, so a chain of foldable
 * nodes folds in one sweep (each node sees its producers' results). Folded nodes are marked dead;
 * qllc_graph_compact then drops them and any constant no longer used. Graph outputs that fold keep
 * their value (now a constant), so the model still produces them.
 */
#include "ir/ir.h"

qllc_status qllc_pass_fold_constants(qllc_graph *g, qllc_diag *diag) {
  qllc_graph_recount_uses(g);
  for (int i = 0; i < g->n_nodes; i++) {
    qllc_node *n = g->nodes[i];
    if (n->dead) continue;
    int folded = 0;
    qllc_status st = qllc_const_eval(g, n, &folded, diag);
    if (st) return st;
  }
  qllc_graph_compact(g);
  return QLLC_OK;
}
