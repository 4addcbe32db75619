/* src/ir/const_eval_ext.c: compile-time evaluation of the elementwise float ops of issue 15 (Erf,
 * Sqrt, Exp, Neg, Reciprocal, Pow by a constant, HardSigmoid, HardSwish, GELU) and of Pad (every mode
 * and element kind) when their input is a constant; called by qllc_const_eval (const_eval.c) for the ops it does not fold itself. */
#include <math.h>
#include <string.h>

#include "ir/ir.h"

qllc_status qllc_const_eval_ext(qllc_graph *g, qllc_node *n, int *folded, qllc_diag *diag);

/* Issue 15: the elementwise float ops of the transformer and mobile list, on a constant f32 input (a
 * constant subgraph an exporter left, e.g. Sqrt of a constant), computed in double. */
/* Pad of a constant (any element kind, every mode; the value a constant), element by element. */
static qllc_status fold_pad(qllc_graph *g, qllc_node *n, int *folded, qllc_diag *diag) {
  qllc_value *o = n->out[0], *x = n->in[0];
  if (!x->data || (n->n_in > 2 && n->in[2] && !n->in[2]->data)) return QLLC_OK;
  const int64_t *pads;
  if (qllc_attr_ints(n, "pads", &pads) != 2 * x->rank || x->rank < 1) return QLLC_OK;
  const char *mode = qllc_attr_string(n, "mode", "constant");
  double value = qllc_attr_float(n, "value", 0.0f);
  size_t es = qllc_elem_size((qllc_elem_kind)x->elem);
  int64_t total = qllc_value_numel(o);
  void *buf = NULL;
  qllc_status st = qllc_fold_alloc(g, n, o, &buf, diag); /* the size limits and the folding budget */
  if (st) return st;
  unsigned char *out = buf, fill[8] = {0};
  switch (x->elem) { /* the constant value in the data's kind */
  case QLLC_ELEM_F32: { float f = (float)value; memcpy(fill, &f, 4); break; }
  case QLLC_ELEM_I8: case QLLC_ELEM_U8: fill[0] = (unsigned char)(int64_t)value; break;
  case QLLC_ELEM_I16: { int16_t v = (int16_t)value; memcpy(fill, &v, 2); break; }
  case QLLC_ELEM_I32: { int32_t v = (int32_t)value; memcpy(fill, &v, 4); break; }
  case QLLC_ELEM_I64: { int64_t v = (int64_t)value; memcpy(fill, &v, 8); break; }
  default: return QLLC_OK;
  }
  for (int64_t k = 0; k < total; k++) {
    int64_t rem = k, src = 0, stride = 1;
    for (int d = x->rank - 1; d >= 0 && src >= 0; d--) {
      int64_t i = qllc_pad_source(mode, rem % o->dims[d], pads[d], x->dims[d]);
      rem /= o->dims[d];
      src = i < 0 ? -1 : src + i * stride;
      stride *= x->dims[d];
    }
    memcpy(out + (size_t)k * es, src < 0 ? fill : (const unsigned char *)x->data + (size_t)src * es, es);
  }
  o->data = out;
  o->producer = NULL;
  n->dead = 1;
  *folded = 1;
  return QLLC_OK;
}

qllc_status qllc_const_eval_ext(qllc_graph *g, qllc_node *n, int *folded, qllc_diag *diag) {
  qllc_value *o = n->out[0], *x = n->n_in > 0 ? n->in[0] : NULL;
  if (n->op == QLLC_OP_PAD && x) return fold_pad(g, n, folded, diag);
  if (!x || !x->data || x->elem != QLLC_ELEM_F32 || o->elem != QLLC_ELEM_F32) return QLLC_OK;
  switch (n->op) {
  case QLLC_OP_ERF: case QLLC_OP_SQRT: case QLLC_OP_EXP: case QLLC_OP_NEG: case QLLC_OP_RECIPROCAL:
  case QLLC_OP_POW: case QLLC_OP_HARD_SIGMOID: case QLLC_OP_HARD_SWISH: case QLLC_OP_GELU:
    break;
  default:
    return QLLC_OK;
  }
  if (n->n_in > 1) return QLLC_OK; /* Pow's exponent not yet an attribute */
  int64_t total = qllc_value_numel(o);
  void *buf;
  qllc_status st = qllc_fold_alloc(g, n, o, &buf, diag); /* the size limits and the folding budget */
  if (st) return st;
  float *out = buf;
  const float *in = x->data;
  double e = qllc_attr_float(n, "exponent", 1.0f), al = qllc_attr_float(n, "alpha", 0.2f), be = qllc_attr_float(n, "beta", 0.5f);
  for (int64_t i = 0; i < total; i++) {
    double v = in[i], r = v;
    switch (n->op) {
    case QLLC_OP_ERF: r = erf(v); break;
    case QLLC_OP_SQRT: r = sqrt(v); break;
    case QLLC_OP_EXP: r = exp(v); break;
    case QLLC_OP_NEG: r = -v; break;
    case QLLC_OP_RECIPROCAL: r = 1.0 / v; break;
    case QLLC_OP_POW: r = pow(v, e); break;
    case QLLC_OP_HARD_SIGMOID: r = fmax(0.0, fmin(1.0, al * v + be)); break;
    case QLLC_OP_HARD_SWISH: r = v * fmax(0.0, fmin(1.0, v / 6.0 + 0.5)); break;
    case QLLC_OP_GELU:
      r = strcmp(qllc_attr_string(n, "approximate", "none"), "tanh")
              ? 0.5 * v * (1.0 + erf(v / sqrt(2.0)))
              : 0.5 * v * (1.0 + tanh(0.7978845608028654 * (v + 0.044715 * v * v * v)));
      break;
    default: break;
    }
    out[i] = (float)r;
  }
  o->data = out;
  o->producer = NULL;
  n->dead = 1;
  *folded = 1;
  return QLLC_OK;
}
