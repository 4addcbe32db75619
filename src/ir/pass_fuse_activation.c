/* src/ir/pass_fuse_activation.c: Relu and Clip fused into the Conv, FC or Gemm before them.
 *
 * Algorithm. For each Relu or Clip node r with input x: when x is produced by a live Conv, FC or Gemm
 * node p (as its output 0), x has no other use and x is not a graph output, then p->act becomes the
 * clamp [lo, hi] (Relu: [0, +inf]; Clip: the "min"/"max" float attributes the importer normalises,
 * -inf/+inf when absent, or constant scalar min/max inputs if they are still there), p writes r's
 * output value directly, and r dies. When p already has a clamp [lo0, hi0] (Conv -> Relu -> Clip), the
 * two compose into [max(lo0, lo), min(hi0, hi)], provided that range is not empty (an empty range makes
 * a constant output, which a clamp cannot express: those are left alone). act is RELU when the
 * result is [0, +inf], CLIP otherwise.
 *
 * Through a view: when x is produced by a Reshape or Flatten v (single use, not a graph output) whose
 * input is such a layer output (e.g. gemm_to_fc's [M, K] FC wrapped in Reshapes for a batched MatMul),
 * the clamp goes into the layer the same way and v writes r's output value instead: an elementwise
 * clamp commutes with a view.
 *
 * Invariants. r's output value (which may be a graph output) keeps its name; x becomes unused and is
 * dropped by qllc_graph_compact. Nodes are only removed, so the order stays topological. Only f32
 * nodes are fused: this pass runs on the float graph, before quantization.
 */
#include <math.h>

#include "ir/ir.h"

/* A constant f32 scalar input, or `dflt` when the slot is absent. Returns 0 when it is not constant. */
static int scalar_input(const qllc_node *n, int k, float dflt, float *out) {
  if (k >= n->n_in || !n->in[k]) {
    *out = dflt;
    return 1;
  }
  const qllc_value *v = n->in[k];
  if (!v->data || v->elem != QLLC_ELEM_F32 || qllc_value_numel(v) != 1) return 0;
  *out = *(const float *)v->data;
  return 1;
}

/* The clamp range of a Relu or Clip node; 0 when it cannot be known at compile time. */
static int act_range(const qllc_node *r, float *lo, float *hi) {
  if (r->op == QLLC_OP_RELU) {
    *lo = 0.0f;
    *hi = INFINITY;
    return 1;
  }
  if (!scalar_input(r, 1, -INFINITY, lo) || !scalar_input(r, 2, INFINITY, hi)) return 0;
  if (qllc_node_attr(r, "min")) *lo = qllc_attr_float(r, "min", -INFINITY);
  if (qllc_node_attr(r, "max")) *hi = qllc_attr_float(r, "max", INFINITY);
  return !isnan(*lo) && !isnan(*hi);
}

qllc_status qllc_pass_fuse_activation(qllc_graph *g, qllc_diag *diag) {
  qllc_graph_recount_uses(g);
  int changed = 0;
  for (int i = 0; i < g->n_nodes; i++) {
    qllc_node *r = g->nodes[i];
    if (r->dead || (r->op != QLLC_OP_RELU && r->op != QLLC_OP_CLIP) || r->n_out < 1 || !r->out[0]) continue;
    qllc_value *x = r->in[0], *y = r->out[0];
    if (!x || x->elem != QLLC_ELEM_F32 || x->n_uses != 1 || x->is_output) continue;
    qllc_node *p = x->producer, *view = NULL;
    if (p && !p->dead && (p->op == QLLC_OP_RESHAPE || p->op == QLLC_OP_FLATTEN) && p->n_in >= 1 && p->in[0] &&
        p->in[0]->elem == QLLC_ELEM_F32 && p->in[0]->n_uses == 1 && !p->in[0]->is_output) {
      view = p;
      x = p->in[0];
      p = x->producer;
    }
    if (!p || p->dead || p->n_out < 1 || p->out[0] != x) continue;
    if (p->op != QLLC_OP_CONV && p->op != QLLC_OP_FC && p->op != QLLC_OP_GEMM) continue;
    float lo, hi;
    if (!act_range(r, &lo, &hi)) continue;
    if (p->act != QLLC_ACT_NONE) {
      if (p->act_lo > lo) lo = p->act_lo;
      if (p->act_hi < hi) hi = p->act_hi;
    }
    if (!(lo <= hi)) continue;
    p->act = lo == 0.0f && hi == INFINITY ? QLLC_ACT_RELU : QLLC_ACT_CLIP;
    p->act_lo = lo;
    p->act_hi = hi;
    if (view) { /* layer -> x -> view -> r: the view now writes y, the layer keeps writing x */
      qllc_value *vx = view->out[0];
      view->out[0] = y;
      y->producer = view;
      vx->producer = NULL;
      vx->n_uses = 0;
    } else {
      p->out[0] = y;
      y->producer = p;
      x->producer = NULL;
      x->n_uses = 0;
    }
    r->dead = 1;
    changed = 1;
  }
  if (changed) qllc_graph_compact(g);
  return QLLC_OK;
}
