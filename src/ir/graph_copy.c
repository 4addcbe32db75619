/* src/ir/graph_copy.c: an in-memory copy of an optimized float graph (qllc_graph_copy, ir.h), so that profiling,
 * quantized compiles and compare start from the model's graph instead of loading and optimizing the
 * model file again (issue 13).
 *
 * The copy is made through the IR's constructors, in the source's order: value i of the copy is value i
 * of the source (same id, name, type, constant bytes), node i is node i (op, names, attributes, fused
 * activation, inputs and outputs remapped), inputs and outputs in the same order, so it hashes as the
 * source (qllc_graph_hash) and everything after it (the quantizer, the lowering) sees the same graph.
 * Everything is copied into the new graph's arena: the copy outlives the source. A node that carries a
 * quantization record (a pre-quantized model after the QDQ pass) is not copied: UNSUPPORTED, and the
 * caller loads the file again.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir/ir.h"

static const char *dup(qllc_graph *g, const char *s) { return s ? qllc_arena_strdup(g->arena, s) : NULL; }

static int copy_value_fields(qllc_graph *g, qllc_value *d, const qllc_value *s) {
  d->scale = s->scale;
  d->zero_point = s->zero_point;
  d->q_axis = s->q_axis;
  d->q_count = s->q_count;
  if (s->q_scales && !(d->q_scales = qllc_arena_memdup(g->arena, s->q_scales, sizeof *s->q_scales * (size_t)s->q_count)))
    return -1;
  if (s->q_zero_points &&
      !(d->q_zero_points = qllc_arena_memdup(g->arena, s->q_zero_points, sizeof *s->q_zero_points * (size_t)s->q_count)))
    return -1;
  d->n_uses = s->n_uses;
  return 0;
}

static int copy_attr(qllc_graph *g, qllc_attr *d, const qllc_attr *s) {
  *d = *s;
  d->name = dup(g, s->name);
  d->s = dup(g, s->s);
  if (s->ints && !(d->ints = qllc_arena_memdup(g->arena, s->ints, sizeof *s->ints * (size_t)(s->n > 0 ? s->n : 1))))
    return -1;
  if (s->floats && !(d->floats = qllc_arena_memdup(g->arena, s->floats, sizeof *s->floats * (size_t)(s->n > 0 ? s->n : 1))))
    return -1;
  if (s->t) { /* a constant outside graph->values */
    qllc_value *t = qllc_arena_memdup(g->arena, s->t, sizeof *s->t);
    if (!t) return -1;
    t->name = dup(g, s->t->name);
    t->producer = NULL;
    if (s->t->data && !(t->data = qllc_arena_memdup(g->arena, s->t->data, qllc_value_bytes(s->t) ? qllc_value_bytes(s->t) : 1)))
      return -1;
    if (copy_value_fields(g, t, s->t)) return -1;
    d->t = t;
  }
  return (s->name && !d->name) || (s->s && !d->s) ? -1 : 0;
}

/* A node's fields and attributes but not its inputs and outputs (the caller maps those); -1 on OOM. */
static int copy_node_fields(qllc_graph *g, qllc_node *d, const qllc_node *s) {
  d->onnx_index = s->onnx_index;
  d->domain = dup(g, s->domain ? s->domain : "");
  d->op_type = dup(g, s->op_type ? s->op_type : qllc_op_name(s->op));
  d->act = s->act;
  d->act_lo = s->act_lo;
  d->act_hi = s->act_hi;
  d->keep_float = s->keep_float;
  d->float_reason = dup(g, s->float_reason);
  d->dead = s->dead;
  if (!d->domain || !d->op_type || (s->float_reason && !d->float_reason)) return -1;
  if (s->n_attr > 0) {
    if (!(d->attrs = qllc_arena_alloc(g->arena, sizeof *d->attrs * (size_t)s->n_attr))) return -1;
    for (int k = 0; k < s->n_attr; k++)
      if (copy_attr(g, &d->attrs[k], &s->attrs[k])) return -1;
    d->n_attr = s->n_attr;
  }
  return 0;
}

qllc_status qllc_graph_copy(const qllc_graph *src, qllc_graph **out, qllc_diag *diag) {
  *out = NULL;
  for (int i = 0; i < src->n_nodes; i++)
    if (src->nodes[i]->quant)
      return qllc_fail(diag, QLLC_ERR_UNSUPPORTED, NULL, "node '%s' carries a quantization record", src->nodes[i]->name);
  qllc_graph *g = qllc_graph_new(src->path);
  if (!g) return qllc_fail(diag, QLLC_ERR_NOMEM, NULL, "out of memory copying the graph");
  g->graph_name = dup(g, src->graph_name ? src->graph_name : "");
  g->opset = src->opset;
  int ok = g->graph_name != NULL;
  for (int i = 0; ok && i < src->n_values; i++) {
    const qllc_value *s = src->values[i];
    qllc_value *d = s->data ? qllc_const_new(g, s->name, s->elem, s->rank, s->dims, s->data)
                            : qllc_value_new(g, s->name, s->elem, s->rank, s->dims);
    ok = d && d->id == s->id && strcmp(d->name, s->name) == 0 && !copy_value_fields(g, d, s);
  }
  for (int i = 0; ok && i < src->n_nodes; i++) {
    const qllc_node *s = src->nodes[i];
    qllc_node *d = qllc_node_new(g, s->op, s->name, s->n_in, s->n_out);
    if (!(ok = d != NULL)) break;
    ok = !copy_node_fields(g, d, s);
    for (int k = 0; ok && k < s->n_in; k++) d->in[k] = s->in[k] ? g->values[s->in[k]->id] : NULL;
    for (int k = 0; ok && k < s->n_out; k++) {
      d->out[k] = s->out[k] ? g->values[s->out[k]->id] : NULL;
      if (d->out[k] && s->out[k]->producer == s) d->out[k]->producer = d;
    }
  }
  for (int i = 0; ok && i < src->n_inputs; i++) ok = !qllc_graph_add_input(g, g->values[src->inputs[i]->id]);
  for (int i = 0; ok && i < src->n_outputs; i++) ok = !qllc_graph_add_output(g, g->values[src->outputs[i]->id]);
  if (!ok) {
    qllc_graph_free(g);
    return qllc_fail(diag, QLLC_ERR_NOMEM, NULL, "out of memory copying the graph");
  }
  *out = g;
  return QLLC_OK;
}

/* ---- extracts ------------------------------------------------------------------------------------- */

/* The value of the extract standing for src value s (made on first use: a constant copied, any other
 * value a graph input of the same type); map is indexed by s's id. */
static qllc_value *extract_input(qllc_graph *g, qllc_value **map, const qllc_value *s) {
  if (map[s->id]) return map[s->id];
  qllc_value *d = s->data ? qllc_const_new(g, s->name, s->elem, s->rank, s->dims, s->data)
                          : qllc_value_new(g, s->name, s->elem, s->rank, s->dims);
  if (!d || copy_value_fields(g, d, s)) return NULL;
  if (!s->data && qllc_graph_add_input(g, d)) return NULL;
  return map[s->id] = d;
}

qllc_status qllc_graph_extract(const qllc_graph *src, const qllc_node *const *nodes, int n_nodes, int copies,
                               qllc_graph **out, qllc_node **made, qllc_diag *diag) {
  *out = NULL;
  qllc_graph *g = qllc_graph_new(src->path);
  qllc_value **map = calloc((size_t)src->n_values + 1, sizeof *map);
  int ok = g && map && (g->graph_name = dup(g, "extract")) != NULL;
  if (g) g->opset = src->opset;
  for (int i = 0; ok && i < n_nodes; i++) {
    const qllc_node *s = nodes[i];
    for (int j = 0; ok && j < copies; j++) {
      char name[512];
      snprintf(name, sizeof name, "%s#%d", s->name ? s->name : "node", j);
      qllc_node *d = qllc_node_new(g, s->op, name, s->n_in, s->n_out);
      if (!(ok = d != NULL)) break;
      made[i * copies + j] = d;
      d->quant = s->quant; /* shared: the source graph outlives the extract */
      ok = !copy_node_fields(g, d, s);
      for (int k = 0; ok && k < s->n_in; k++) ok = !s->in[k] || (d->in[k] = extract_input(g, map, s->in[k])) != NULL;
      for (int k = 0; ok && k < s->n_out; k++) {
        const qllc_value *so = s->out[k];
        if (!so) continue;
        snprintf(name, sizeof name, "%s#%d", so->name ? so->name : "out", j);
        qllc_value *o = qllc_value_new(g, name, so->elem, so->rank, so->dims);
        ok = o && !copy_value_fields(g, o, so) && !qllc_graph_add_output(g, o);
        if (ok) {
          o->n_uses = 0;
          o->producer = d;
          d->out[k] = o;
        }
      }
    }
  }
  free(map);
  if (!ok) {
    if (g) qllc_graph_free(g);
    return qllc_fail(diag, QLLC_ERR_NOMEM, NULL, "out of memory extracting nodes of the graph");
  }
  *out = g;
  return QLLC_OK;
}
