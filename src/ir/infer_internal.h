/* src/ir/infer_internal.h: what the files of the attribute normalisation and shape inference share
 * (private to src/ir/infer*.c): the failure helper and its FAIL macro, small helpers, and each op
 * family's entry points, which the dispatch of infer.c (qllc_normalize_node, qllc_infer_node) calls:
 *   infer.c          dispatch, shared helpers; Gemm, FC, MatMul, elementwise and activation ops,
 *                    BatchNormalization, Softmax, Clip, Dropout, Cast
 *   infer_spatial.c  Conv, MaxPool, AveragePool (also the spatial part of ConvInteger, QLinearConv)
 *   infer_tensor.c   Reshape, Flatten, Transpose, Concat, Squeeze, Unsqueeze, Pad, Gather, Slice, Shape,
 *                    Constant, ConstantOfShape
 *   infer_quant.c    the pre-quantized ops (QuantizeLinear, DequantizeLinear, QLinearConv, ...)
 *   infer_ext.c      the transformer and mobile ops (issue 15) */
#ifndef QLLC_INFER_INTERNAL_H
#define QLLC_INFER_INTERNAL_H

#include "ir/ir.h"

/* Fails with st and a message naming node n (its name and op type). */
qllc_status qllc_infer_fail(qllc_diag *diag, qllc_status st, const qllc_node *n, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
#define FAIL(st, ...) qllc_infer_fail(diag, st, n, __VA_ARGS__)

static inline int value_float(const qllc_value *v, float *out) {
  if (!v || !v->data || qllc_value_numel(v) != 1) return -1;
  if (v->elem == QLLC_ELEM_F32) {
    *out = *(const float *)v->data;
    return 0;
  }
  int64_t i;
  if (qllc_value_ints(v, &i, 1) != 1) return -1;
  *out = (float)i;
  return 0;
}

static inline void set_out(qllc_node *n, int k, qllc_elem elem, int rank, const int64_t *dims) {
  qllc_value *o = n->out[k];
  if (!o) return;
  o->elem = elem;
  o->rank = rank;
  for (int i = 0; i < rank; i++) o->dims[i] = dims[i];
}

static inline int norm_axis(int64_t axis, int rank, int64_t *out) {
  if (axis < -rank || axis >= rank) return -1;
  *out = axis < 0 ? axis + rank : axis;
  return 0;
}

/* Drops inputs from index k on (the optional operand inputs turned into attributes). */
static inline void drop_inputs_from(qllc_node *n, int k) {
  if (n->n_in > k) n->n_in = k;
}

/* in + begin + end; -1 on overflow. */
static inline int padded_extent(int64_t in, int64_t begin, int64_t end, int64_t *out) {
  return qllc_add_size(in, begin, out) || qllc_add_size(*out, end, out) ? -1 : 0;
}

/* infer_spatial.c */
qllc_status qllc_norm_spatial(qllc_graph *g, qllc_node *n, qllc_diag *diag);
qllc_status qllc_infer_spatial(qllc_node *n, qllc_diag *diag);
/* infer.c */
qllc_status qllc_infer_matmul(qllc_node *n, qllc_diag *diag);
/* infer_tensor.c. qllc_norm_axes: reads axes from the attribute or the constant input 1 (dropping it)
 * and normalises them against `rank` (*count = -1: no axes given). */
qllc_status qllc_norm_axes(qllc_graph *g, qllc_node *n, int rank, int *count, int64_t *axes, qllc_diag *diag);
qllc_status qllc_norm_tensor(qllc_graph *g, qllc_node *n, qllc_diag *diag);
qllc_status qllc_infer_tensor(qllc_graph *g, qllc_node *n, qllc_diag *diag);
/* infer_quant.c */
qllc_status qllc_infer_qop(qllc_graph *g, qllc_node *n, qllc_diag *diag);
/* infer_ext.c */
qllc_status qllc_norm_ext(qllc_graph *g, qllc_node *n, qllc_diag *diag);
qllc_status qllc_infer_ext(qllc_graph *g, qllc_node *n, qllc_diag *diag);

#endif
