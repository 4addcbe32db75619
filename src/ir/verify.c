/* src/ir/verify.c: structural checks of a graph.
 *
 * - every live node's input and output counts are within the op table's arity (ops.def);
 * - every input is defined before use: a constant, a graph input, or the output of an EARLIER live
 *   node (so g->nodes is a valid topological order), and every graph output is defined;
 * - every value has a valid element kind and positive dims;
 * - quantized values (i8, u8, i16) have non-zero scales (per tensor, or q_count of them per channel
 *   with q_axis inside the rank and q_count equal to that dim).
 * The first failure is reported, naming the node.
 */
#include <stdlib.h>

#include "ir/ir.h"

static const struct {
  int min_in, max_in, max_out;
} arity[QLLC_OP_COUNT] = {
#define OP(E, onnx, min_in, max_in, max_out) [QLLC_OP_##E] = {min_in, max_in, max_out},
#include "ops.def"
#undef OP
};

static qllc_status check_value(const qllc_value *v, const char *node, qllc_diag *diag) {
  if ((int)v->elem < 0 || v->elem >= QLLC_ELEM_COUNT)
    return qllc_fail(diag, QLLC_ERR_INVALID, node, "value '%s' has an invalid element kind %d", v->name, (int)v->elem);
  if (v->rank < 0 || v->rank > QLLC_MAX_RANK)
    return qllc_fail(diag, QLLC_ERR_INVALID, node, "value '%s' has an invalid rank %d", v->name, v->rank);
  for (int i = 0; i < v->rank; i++)
    if (v->dims[i] <= 0)
      return qllc_fail(diag, QLLC_ERR_INVALID, node, "value '%s' has dim %d = %lld (must be positive)", v->name, i,
                       (long long)v->dims[i]);
  int quantized = v->elem == QLLC_ELEM_I8 || v->elem == QLLC_ELEM_U8 || v->elem == QLLC_ELEM_I16;
  if (quantized && !v->data) {
    if (v->q_axis >= 0) {
      if (v->q_axis >= v->rank || v->q_count != v->dims[v->q_axis] || !v->q_scales)
        return qllc_fail(diag, QLLC_ERR_INVALID, node, "value '%s': per-channel parameters do not match axis %d", v->name, v->q_axis);
      for (int64_t c = 0; c < v->q_count; c++)
        if (!(v->q_scales[c] > 0.0f))
          return qllc_fail(diag, QLLC_ERR_INVALID, node, "value '%s': channel %lld has scale %g", v->name, (long long)c,
                           (double)v->q_scales[c]);
    } else if (!(v->scale > 0.0f)) {
      return qllc_fail(diag, QLLC_ERR_INVALID, node, "quantized value '%s' has no scale", v->name);
    }
  }
  return QLLC_OK;
}

qllc_status qllc_graph_verify(const qllc_graph *g, qllc_diag *diag) {
  qllc_status st;
  /* defined[id]: 1 once the value is available */
  char *defined = calloc((size_t)g->n_values + 1, 1);
  if (!defined) return qllc_fail(diag, QLLC_ERR_NOMEM, NULL, "out of memory");
  for (int i = 0; i < g->n_values; i++) {
    const qllc_value *v = g->values[i];
    if (v->id != i) {
      free(defined);
      return qllc_fail(diag, QLLC_ERR_INVALID, NULL, "value '%s' has id %d at index %d", v->name, v->id, i);
    }
    if (v->data || v->is_input) defined[i] = 1;
  }
  for (int i = 0; i < g->n_inputs; i++)
    if (g->inputs[i]->id >= 0 && g->inputs[i]->id < g->n_values) defined[g->inputs[i]->id] = 1;
  for (int i = 0; i < g->n_nodes; i++) {
    const qllc_node *n = g->nodes[i];
    if (n->dead) continue;
    const char *nm = n->name;
    st = QLLC_OK;
    if ((int)n->op < 0 || n->op >= QLLC_OP_COUNT) {
      st = qllc_fail(diag, QLLC_ERR_INVALID, nm, "node '%s' has an invalid op %d", nm, (int)n->op);
    } else if (n->n_in < arity[n->op].min_in || (arity[n->op].max_in >= 0 && n->n_in > arity[n->op].max_in) ||
               n->n_out < 1 || n->n_out > arity[n->op].max_out) {
      st = qllc_fail(diag, QLLC_ERR_INVALID, nm, "node '%s' (%s) has %d inputs and %d outputs; the op takes %d..%d inputs, 1..%d outputs",
                     nm, qllc_op_name(n->op), n->n_in, n->n_out, arity[n->op].min_in, arity[n->op].max_in, arity[n->op].max_out);
    }
    for (int k = 0; !st && k < n->n_in; k++) {
      const qllc_value *v = n->in[k];
      if (!v) {
        if (k < arity[n->op].min_in)
          st = qllc_fail(diag, QLLC_ERR_INVALID, nm, "node '%s' (%s): required input %d is missing", nm, qllc_op_name(n->op), k);
        continue;
      }
      if (v->id < 0 || v->id >= g->n_values || g->values[v->id] != v)
        st = qllc_fail(diag, QLLC_ERR_INVALID, nm, "node '%s' (%s): input '%s' is not a value of this graph", nm,
                       qllc_op_name(n->op), v->name);
      else if (!defined[v->id])
        st = qllc_fail(diag, QLLC_ERR_INVALID, nm, "node '%s' (%s): input '%s' is used before it is defined", nm,
                       qllc_op_name(n->op), v->name);
      else
        st = check_value(v, nm, diag);
    }
    for (int k = 0; !st && k < n->n_out; k++) {
      const qllc_value *v = n->out[k];
      if (!v) {
        if (k == 0) st = qllc_fail(diag, QLLC_ERR_INVALID, nm, "node '%s' has no output 0", nm);
        continue;
      }
      if (v->id < 0 || v->id >= g->n_values || g->values[v->id] != v)
        st = qllc_fail(diag, QLLC_ERR_INVALID, nm, "node '%s': output '%s' is not a value of this graph", nm, v->name);
      else if (defined[v->id])
        st = qllc_fail(diag, QLLC_ERR_INVALID, nm, "node '%s': output '%s' is defined twice", nm, v->name);
      else {
        defined[v->id] = 1;
        st = check_value(v, nm, diag);
      }
    }
    if (st) {
      free(defined);
      return st;
    }
  }
  for (int i = 0; i < g->n_outputs; i++) {
    const qllc_value *v = g->outputs[i];
    if (v->id < 0 || v->id >= g->n_values || g->values[v->id] != v || !defined[v->id]) {
      free(defined);
      return qllc_fail(diag, QLLC_ERR_INVALID, NULL, "graph output '%s' is not defined", v->name);
    }
  }
  free(defined);
  return QLLC_OK;
}
