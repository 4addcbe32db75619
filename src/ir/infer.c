/* src/ir/infer.c: attribute normalisation and shape inference, one case per op.
 *
 * qllc_normalize_node brings every node into ONE form so that later stages never look at ONNX
 * defaults, opset differences or optional operand inputs. It is idempotent (running it on a
 * normalised node changes nothing) and qllc_infer_node runs it first. The normalised forms:
 *
 *   Conv         "kernel_shape" [kh, kw], "strides" [sh, sw], "dilations" [dh, dw], "pads"
 *                [top, left, bottom, right], "group" (default 1). auto_pad (SAME_UPPER, SAME_LOWER,
 *                VALID) is resolved into pads and removed. 1-D Conv (X rank 3, W rank 3) keeps its
 *                rank-3 tensors but gets the 2-D attributes with H = 1 (kh = sh = dh = 1, top = bottom
 *                = 0); its output is rank 3. 3-D Conv (rank 5) gets 3-entry kernel_shape, strides and
 *                dilations and 6-entry pads [front, top, left, back, bottom, right]; pass_spatial3d.c
 *                rewrites it into 2-D ops before any other pass.
 *   MaxPool,     same four attributes (dilations only matter for MaxPool). ceil_mode is resolved by
 *   AveragePool  growing the bottom/right pads so that the floor formula gives the ceil result, the
 *                amount added is recorded in "ceil_pads" [0, 0, extra_h, extra_w] (an AveragePool with
 *                count_include_pad = 1 must not count those cells) and ceil_mode is removed.
 *                AveragePool gets "count_include_pad" (default 0); MaxPool "storage_order" (0 or 1, the
 *                order of its Indices output, int64, flattened over the whole input).
 *                Rank 5 (3-D) as Conv, "ceil_pads" then with 6 entries.
 *   GlobalAveragePool  rank 4 ([N,C,H,W] -> [N,C,1,1]) and rank 3 ([N,C,L] -> [N,C,1]).
 *   Softmax      "axis" non-negative, "coerce2d": 1 for opset < 13 (input seen as 2-D
 *                [prod(d[0:axis]), prod(d[axis:])], default axis 1), 0 from opset 13 (one axis,
 *                default -1).
 *   Squeeze,     "axes" non-negative and sorted, from the attribute (opset < 13) or the constant second
 *   Unsqueeze    input, which is then dropped (n_in = 1). Squeeze without axes lists every 1 dim.
 *                Unsqueeze axes refer to the output rank.
 *   Clip         "min", "max" floats (absent = -inf / +inf) from attributes (opset < 11) or constant
 *                inputs 2 and 3, which are dropped (NULL). A bound computed at run time (a float scalar)
 *                stays an input and overrides the attribute; trailing absent inputs are dropped.
 *   Pad          "pads" (2 * rank, ONNX order: all begins then all ends) and "value" (float), from
 *                attributes (opset < 11) or constant inputs, which are dropped. A float value computed at
 *                run time stays input 2 (input 1 NULL). Modes constant, reflect (pads < dim), edge and
 *                wrap (pads <= dim); negative pads are unsupported.
 *   Reshape      "shape": the final dims (0 and -1 resolved, allowzero honoured), from the constant
 *                second input (dropped) or the attribute (opset < 5). A run-time shape is unsupported.
 *   Flatten      "axis" non-negative (default 1).
 *   Concat       "axis" non-negative.
 *   Transpose    "perm" explicit (default: reversed dims).
 *   Gemm         "transA", "transB" (0/1), "alpha", "beta" (1.0) explicit. C is unidirectionally
 *                broadcastable to [M, N].
 *   BatchNormalization  "epsilon" (default 1e-5); training mode is unsupported. The importer checks
 *                that outputs 1..4 are unused and drops them.
 *   Dropout      inference only: ratio/training_mode inputs dropped (training_mode constant true is
 *                unsupported); the importer drops an unused mask output.
 *   LeakyRelu    "alpha" (default 0.01).
 *   Gather       "axis" non-negative. Shape: "start"/"end" (opset 15) resolved to non-negative.
 *   Binary ops   numpy broadcasting; opset < 7 "broadcast"/"axis" attributes are accepted (and removed)
 *                only where they mean the same as numpy broadcasting (B aligned with A's trailing dims).
 *
 * qllc_infer_node then sets every output's element kind and dims and fails with QLLC_ERR_INVALID,
 * naming the node, on inconsistent shapes.
 *
 * This file holds the two entry points, which dispatch by op family (infer_internal.h lists the
 * files), the helpers the families share, and the cases of the core ops: Gemm, FC, MatMul, the
 * elementwise and activation ops, BatchNormalization, Softmax, Clip, Dropout, Cast.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "ir/infer_internal.h"

qllc_status qllc_infer_fail(qllc_diag *diag, qllc_status st, const qllc_node *n, const char *fmt, ...) {
  char msg[768];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  return qllc_fail(diag, st, n->name, "node '%s' (%s): %s", n->name, n->op_type ? n->op_type : qllc_op_name(n->op),
                   msg);
}

int qllc_value_ints(const qllc_value *v, int64_t *out, int max) {
  if (!v || !v->data) return -1;
  int64_t cnt = qllc_value_numel(v);
  if (cnt > max) return -1;
  for (int64_t i = 0; i < cnt; i++) {
    switch (v->elem) {
    case QLLC_ELEM_I64: out[i] = ((const int64_t *)v->data)[i]; break;
    case QLLC_ELEM_I32: out[i] = ((const int32_t *)v->data)[i]; break;
    case QLLC_ELEM_I16: out[i] = ((const int16_t *)v->data)[i]; break;
    case QLLC_ELEM_I8: out[i] = ((const int8_t *)v->data)[i]; break;
    case QLLC_ELEM_U8: out[i] = ((const uint8_t *)v->data)[i]; break;
    default: return -1;
    }
  }
  return (int)cnt;
}

int qllc_broadcast_shape(int ra, const int64_t *a, int rb, const int64_t *b, int64_t *out) {
  int r = ra > rb ? ra : rb;
  if (r > QLLC_MAX_RANK) return -1;
  for (int i = 0; i < r; i++) {
    int64_t da = i - (r - ra) >= 0 ? a[i - (r - ra)] : 1;
    int64_t db = i - (r - rb) >= 0 ? b[i - (r - rb)] : 1;
    if (da != db && da != 1 && db != 1) return -1;
    out[i] = da == 1 ? db : da;
  }
  return r;
}

/* Pad: the input index output index o reads along an axis of size dim padded by `begin` in front, in
 * mode constant (-1: the pad value), reflect (the edge is not repeated), edge or wrap. The pads are
 * those infer_tensor.c accepted (reflect: < dim; wrap: <= dim). Shared by the lowering's index maps and folding. */
int64_t qllc_pad_source(const char *mode, int64_t o, int64_t begin, int64_t dim) {
  int64_t i = o - begin;
  if (i >= 0 && i < dim) return i;
  if (!strcmp(mode, "edge")) return i < 0 ? 0 : dim - 1;
  if (!strcmp(mode, "wrap")) return ((i % dim) + dim) % dim;
  if (!strcmp(mode, "reflect")) return i < 0 ? -i : 2 * (dim - 1) - i;
  return -1;
}

qllc_status qllc_normalize_node(qllc_graph *g, qllc_node *n, qllc_diag *diag) {
  const qllc_value *x = n->n_in > 0 ? n->in[0] : NULL;
  switch (n->op) {
  case QLLC_OP_CAST_LIKE: /* becomes Cast to float (a float or double `like`, read as float) */
    if (!n->in[1] || n->in[1]->elem != QLLC_ELEM_F32)
      return FAIL(QLLC_ERR_UNSUPPORTED, "CastLike to a type other than float or double is not supported");
    n->op = QLLC_OP_CAST;
    n->n_in = 1;
    qllc_node_set_attr_int(g, n, "to", 1);
    return QLLC_OK;
  case QLLC_OP_HARD_SIGMOID: case QLLC_OP_POW: case QLLC_OP_LAYER_NORM: case QLLC_OP_REDUCE_MEAN:
  case QLLC_OP_REDUCE_SUM: case QLLC_OP_REDUCE_MAX: case QLLC_OP_SPLIT: case QLLC_OP_EXPAND: case QLLC_OP_RESIZE:
  case QLLC_OP_UPSAMPLE: case QLLC_OP_PRELU: case QLLC_OP_CONV_TRANSPOSE:
    return qllc_norm_ext(g, n, diag); /* issue 15 */
  case QLLC_OP_CONV:
  case QLLC_OP_CONV_INTEGER:
  case QLLC_OP_QLINEAR_CONV:
  case QLLC_OP_MAXPOOL:
  case QLLC_OP_AVGPOOL:
    return qllc_norm_spatial(g, n, diag);
  case QLLC_OP_SOFTMAX:
    if (!qllc_node_attr(n, "coerce2d")) {
      int coerce = g->opset < 13;
      int64_t axis;
      if (norm_axis(qllc_attr_int(n, "axis", coerce ? 1 : -1), x->rank, &axis))
        return FAIL(QLLC_ERR_INVALID, "axis out of range for rank %d", x->rank);
      qllc_node_set_attr_int(g, n, "axis", axis);
      qllc_node_set_attr_int(g, n, "coerce2d", coerce);
    }
    return QLLC_OK;
  case QLLC_OP_CLIP: {
    float lo = qllc_attr_float(n, "min", -INFINITY), hi = qllc_attr_float(n, "max", INFINITY);
    int last = 0; /* the last run-time bound kept */
    for (int k = 1; k < 3 && k < n->n_in; k++) {
      if (!n->in[k]) continue;
      float v;
      if (value_float(n->in[k], &v)) {
        if (n->in[k]->elem != QLLC_ELEM_F32 || qllc_value_numel(n->in[k]) != 1)
          return FAIL(QLLC_ERR_UNSUPPORTED, "Clip %s '%s' computed at run time must be a float scalar",
                      k == 1 ? "min" : "max", n->in[k]->name);
        last = k;
        continue;
      }
      if (k == 1) lo = v;
      else hi = v;
      n->in[k] = NULL;
    }
    drop_inputs_from(n, last + 1);
    qllc_node_set_attr_float(g, n, "min", lo);
    qllc_node_set_attr_float(g, n, "max", hi);
    return QLLC_OK;
  }
  case QLLC_OP_SQUEEZE: case QLLC_OP_UNSQUEEZE: case QLLC_OP_PAD: case QLLC_OP_RESHAPE: case QLLC_OP_FLATTEN:
  case QLLC_OP_CONCAT: case QLLC_OP_GATHER: case QLLC_OP_TRANSPOSE: case QLLC_OP_SHAPE:
    return qllc_norm_tensor(g, n, diag);
  case QLLC_OP_GEMM:
    qllc_node_set_attr_int(g, n, "transA", qllc_attr_int(n, "transA", 0) != 0);
    qllc_node_set_attr_int(g, n, "transB", qllc_attr_int(n, "transB", 0) != 0);
    qllc_node_set_attr_float(g, n, "alpha", qllc_attr_float(n, "alpha", 1.0f));
    qllc_node_set_attr_float(g, n, "beta", qllc_attr_float(n, "beta", 1.0f));
    qllc_node_remove_attr(n, "broadcast");
    return QLLC_OK;
  case QLLC_OP_BATCHNORM:
    if (qllc_attr_int(n, "training_mode", 0)) return FAIL(QLLC_ERR_UNSUPPORTED, "training mode is not supported");
    if (qllc_attr_int(n, "spatial", 1) == 0) return FAIL(QLLC_ERR_UNSUPPORTED, "spatial = 0 (opset < 9) is not supported");
    qllc_node_set_attr_float(g, n, "epsilon", qllc_attr_float(n, "epsilon", 1e-5f));
    qllc_node_remove_attr(n, "momentum");
    qllc_node_remove_attr(n, "spatial");
    qllc_node_remove_attr(n, "is_test");
    return QLLC_OK;
  case QLLC_OP_DROPOUT:
    if (n->n_in > 2 && n->in[2]) {
      int64_t t;
      if (qllc_value_ints(n->in[2], &t, 1) != 1) return FAIL(QLLC_ERR_UNSUPPORTED, "run-time training_mode is not supported");
      if (t) return FAIL(QLLC_ERR_UNSUPPORTED, "training mode is not supported");
    }
    drop_inputs_from(n, 1);
    qllc_node_remove_attr(n, "ratio");
    qllc_node_remove_attr(n, "seed");
    qllc_node_remove_attr(n, "is_test");
    return QLLC_OK;
  case QLLC_OP_LEAKY_RELU:
    qllc_node_set_attr_float(g, n, "alpha", qllc_attr_float(n, "alpha", 0.01f));
    return QLLC_OK;
  case QLLC_OP_ADD:
  case QLLC_OP_SUB:
  case QLLC_OP_MUL:
  case QLLC_OP_DIV:
    if (qllc_attr_int(n, "broadcast", 0) || qllc_node_attr(n, "axis")) {
      /* opset < 7: B is broadcast onto A, aligned at `axis` (default: trailing). That is numpy
       * broadcasting exactly when B is aligned with A's trailing dims. */
      const qllc_value *b = n->in[1];
      int64_t axis = qllc_attr_int(n, "axis", x->rank - b->rank);
      if (axis < 0) axis += x->rank;
      if (b->rank > x->rank || axis != x->rank - b->rank)
        return FAIL(QLLC_ERR_UNSUPPORTED, "legacy (opset < 7) broadcast with axis %lld is not supported", (long long)axis);
      qllc_node_remove_attr(n, "broadcast");
      qllc_node_remove_attr(n, "axis");
    }
    return QLLC_OK;
  default:
    return QLLC_OK;
  }
}

/* ---- inference -------------------------------------------------------------------------------- */

static qllc_elem onnx_cast_elem(int64_t to, int *ok) {
  *ok = 1;
  switch (to) {
  case 1: return QLLC_ELEM_F32;
  case 11: return QLLC_ELEM_F32; /* double computed in float */
  case 2: return QLLC_ELEM_U8;
  case 9: return QLLC_ELEM_U8; /* bool */
  case 3: return QLLC_ELEM_I8;
  case 5: return QLLC_ELEM_I16;
  case 6: return QLLC_ELEM_I32;
  case 7: return QLLC_ELEM_I64;
  default: *ok = 0; return QLLC_ELEM_F32;
  }
}

qllc_status qllc_infer_matmul(qllc_node *n, qllc_diag *diag) {
  const qllc_value *a = n->in[0], *b = n->in[1];
  if (a->rank < 1 || b->rank < 1) return FAIL(QLLC_ERR_INVALID, "MatMul operands must have rank >= 1");
  int64_t ad[QLLC_MAX_RANK + 1], bd[QLLC_MAX_RANK + 1];
  int ra = a->rank, rb = b->rank;
  memcpy(ad, a->dims, sizeof a->dims);
  memcpy(bd, b->dims, sizeof b->dims);
  if (ra == 1) ad[1] = ad[0], ad[0] = 1, ra = 2;
  if (rb == 1) bd[1] = 1, rb = 2;
  if (ad[ra - 1] != bd[rb - 2]) {
    char ta[128], tb[128];
    return FAIL(QLLC_ERR_INVALID, "inner dimensions differ: %s x %s", qllc_type_str(a, ta, sizeof ta), qllc_type_str(b, tb, sizeof tb));
  }
  int64_t batch[QLLC_MAX_RANK], dims[QLLC_MAX_RANK + 2];
  int rbatch = qllc_broadcast_shape(ra - 2, ad, rb - 2, bd, batch);
  if (rbatch < 0) return FAIL(QLLC_ERR_INVALID, "batch dimensions do not broadcast");
  int r = 0;
  for (int i = 0; i < rbatch; i++) dims[r++] = batch[i];
  if (a->rank > 1) dims[r++] = ad[ra - 2];
  if (b->rank > 1) dims[r++] = bd[rb - 1];
  if (r > QLLC_MAX_RANK) return FAIL(QLLC_ERR_UNSUPPORTED, "rank above %d", QLLC_MAX_RANK);
  set_out(n, 0, a->elem, r, dims);
  return QLLC_OK;
}

static qllc_status infer_node(qllc_graph *g, qllc_node *n, qllc_diag *diag);

/* Infers, then checks that every output's byte size is within QLLC_MAX_TENSOR_BYTES (docs/limits.md),
 * so later stages can compute sizes and offsets of any value without overflow. */
qllc_status qllc_infer_node(qllc_graph *g, qllc_node *n, qllc_diag *diag) {
  qllc_status st = infer_node(g, n, diag);
  if (st) return st;
  for (int k = 0; k < n->n_out; k++) {
    const qllc_value *o = n->out[k];
    int64_t bytes;
    if (o && qllc_shape_bytes(o->elem, o->rank, o->dims, &bytes)) {
      char t[160];
      return FAIL(QLLC_ERR_UNSUPPORTED, "output '%s' %s is larger than %lld bytes (the largest tensor qllc takes)", o->name,
                  qllc_type_str(o, t, sizeof t), (long long)QLLC_MAX_TENSOR_BYTES);
    }
  }
  return QLLC_OK;
}

static qllc_status infer_node(qllc_graph *g, qllc_node *n, qllc_diag *diag) {
  qllc_status st;
  for (int k = 0; k < n->n_in; k++)
    if (!n->in[k] && k == 0 && n->op != QLLC_OP_CONSTANT) return FAIL(QLLC_ERR_INVALID, "input 0 is missing");
  if ((st = qllc_normalize_node(g, n, diag))) return st;
  const qllc_value *x = n->n_in > 0 ? n->in[0] : NULL;
  int64_t dims[QLLC_MAX_RANK];
  char t1[160], t2[160];
  switch (n->op) {
  case QLLC_OP_CONV:
  case QLLC_OP_MAXPOOL:
  case QLLC_OP_AVGPOOL:
    return qllc_infer_spatial(n, diag);
  case QLLC_OP_GLOBAL_AVGPOOL:
    if (x->rank != 3 && x->rank != 4) return FAIL(QLLC_ERR_UNSUPPORTED, "input of rank %d (only 3 and 4)", x->rank);
    memcpy(dims, x->dims, sizeof dims);
    for (int i = 2; i < x->rank; i++) dims[i] = 1;
    set_out(n, 0, x->elem, x->rank, dims);
    return QLLC_OK;
  case QLLC_OP_GEMM: {
    const qllc_value *a = n->in[0], *b = n->in[1];
    if (a->rank != 2 || b->rank != 2) return FAIL(QLLC_ERR_INVALID, "A and B must be 2-D (are %s, %s)",
                                                  qllc_type_str(a, t1, sizeof t1), qllc_type_str(b, t2, sizeof t2));
    int ta = (int)qllc_attr_int(n, "transA", 0), tb = (int)qllc_attr_int(n, "transB", 0);
    int64_t m = a->dims[ta ? 1 : 0], ka = a->dims[ta ? 0 : 1], kb = b->dims[tb ? 1 : 0], nn = b->dims[tb ? 0 : 1];
    if (ka != kb) return FAIL(QLLC_ERR_INVALID, "K differs: A %s (transA=%d), B %s (transB=%d)",
                              qllc_type_str(a, t1, sizeof t1), ta, qllc_type_str(b, t2, sizeof t2), tb);
    dims[0] = m, dims[1] = nn;
    if (n->n_in > 2 && n->in[2]) {
      int64_t bc[QLLC_MAX_RANK];
      const qllc_value *c = n->in[2];
      if (c->rank > 2 || qllc_broadcast_shape(2, dims, c->rank, c->dims, bc) != 2 || bc[0] != m || bc[1] != nn)
        return FAIL(QLLC_ERR_INVALID, "C %s does not broadcast to [%lld, %lld]", qllc_type_str(c, t1, sizeof t1),
                    (long long)m, (long long)nn);
    }
    set_out(n, 0, a->elem, 2, dims);
    return QLLC_OK;
  }
  case QLLC_OP_FC: {
    const qllc_value *w = n->in[1];
    if (x->rank != 2 || w->rank != 2 || x->dims[1] != w->dims[1])
      return FAIL(QLLC_ERR_INVALID, "x %s and W %s do not match", qllc_type_str(x, t1, sizeof t1), qllc_type_str(w, t2, sizeof t2));
    dims[0] = x->dims[0], dims[1] = w->dims[0];
    set_out(n, 0, x->elem, 2, dims);
    return QLLC_OK;
  }
  case QLLC_OP_MATMUL:
    return qllc_infer_matmul(n, diag);
  case QLLC_OP_ADD:
  case QLLC_OP_SUB:
  case QLLC_OP_MUL:
  case QLLC_OP_DIV: {
    const qllc_value *b = n->in[1];
    int r = qllc_broadcast_shape(x->rank, x->dims, b->rank, b->dims, dims);
    if (r < 0) return FAIL(QLLC_ERR_INVALID, "shapes %s and %s do not broadcast", qllc_type_str(x, t1, sizeof t1),
                           qllc_type_str(b, t2, sizeof t2));
    set_out(n, 0, x->elem, r, dims);
    return QLLC_OK;
  }
  case QLLC_OP_RELU:
  case QLLC_OP_LEAKY_RELU:
  case QLLC_OP_CLIP:
  case QLLC_OP_SIGMOID:
  case QLLC_OP_TANH:
  case QLLC_OP_IDENTITY:
  case QLLC_OP_DROPOUT:
  case QLLC_OP_SOFTMAX:
    set_out(n, 0, x->elem, x->rank, x->dims);
    if (n->op == QLLC_OP_DROPOUT && n->n_out > 1) set_out(n, 1, QLLC_ELEM_U8, x->rank, x->dims);
    return QLLC_OK;
  case QLLC_OP_CHANNEL_AFFINE:
    if (x->rank < 2) return FAIL(QLLC_ERR_INVALID, "input must have a channel dimension");
    set_out(n, 0, x->elem, x->rank, x->dims);
    return QLLC_OK;
  case QLLC_OP_BATCHNORM:
    if (x->rank < 2) return FAIL(QLLC_ERR_INVALID, "input must have a channel dimension");
    for (int k = 1; k < 5; k++)
      if (!n->in[k] || qllc_value_numel(n->in[k]) != x->dims[1])
        return FAIL(QLLC_ERR_INVALID, "parameter %d has %lld elements for %lld channels", k,
                    n->in[k] ? (long long)qllc_value_numel(n->in[k]) : 0LL, (long long)x->dims[1]);
    set_out(n, 0, x->elem, x->rank, x->dims);
    for (int k = 1; k < n->n_out; k++) set_out(n, k, x->elem, 1, &x->dims[1]);
    return QLLC_OK;
  case QLLC_OP_FLATTEN: case QLLC_OP_RESHAPE: case QLLC_OP_TRANSPOSE: case QLLC_OP_CONCAT: case QLLC_OP_SQUEEZE:
  case QLLC_OP_UNSQUEEZE: case QLLC_OP_PAD: case QLLC_OP_CONSTANT: case QLLC_OP_SHAPE: case QLLC_OP_GATHER:
  case QLLC_OP_SLICE: case QLLC_OP_CONSTANT_OF_SHAPE:
    return qllc_infer_tensor(g, n, diag);
  case QLLC_OP_CAST_LIKE: /* qllc_normalize_node made it a Cast above */
  case QLLC_OP_CAST: {
    int ok;
    qllc_elem e = onnx_cast_elem(qllc_attr_int(n, "to", 1), &ok);
    if (!ok) return FAIL(QLLC_ERR_UNSUPPORTED, "Cast to ONNX type %lld is not supported", (long long)qllc_attr_int(n, "to", 1));
    set_out(n, 0, e, x->rank, x->dims);
    return QLLC_OK;
  }
  case QLLC_OP_QUANTIZE:
  case QLLC_OP_DEQUANTIZE:
  case QLLC_OP_QLINEAR_CONV:
  case QLLC_OP_QLINEAR_MATMUL:
  case QLLC_OP_MATMUL_INTEGER:
  case QLLC_OP_CONV_INTEGER:
  case QLLC_OP_DYNAMIC_QUANTIZE:
    return qllc_infer_qop(g, n, diag);
  case QLLC_OP_ERF: case QLLC_OP_SQRT: case QLLC_OP_EXP: case QLLC_OP_NEG: case QLLC_OP_RECIPROCAL:
  case QLLC_OP_POW: case QLLC_OP_HARD_SIGMOID: case QLLC_OP_HARD_SWISH: case QLLC_OP_GELU: case QLLC_OP_LAYER_NORM:
  case QLLC_OP_REDUCE_MEAN: case QLLC_OP_REDUCE_SUM: case QLLC_OP_REDUCE_MAX: case QLLC_OP_PRELU: case QLLC_OP_SPLIT:
  case QLLC_OP_EXPAND: case QLLC_OP_RESIZE: case QLLC_OP_UPSAMPLE: case QLLC_OP_MAX: case QLLC_OP_MIN:
  case QLLC_OP_MEAN: case QLLC_OP_CONV_TRANSPOSE: case QLLC_OP_WHERE:
    return qllc_infer_ext(g, n, diag); /* issue 15 */
  case QLLC_OP_CUSTOM: /* typed by the importer from the model's value_info; nothing to infer */
    return QLLC_OK;
  case QLLC_OP_COUNT:
    break;
  }
  return FAIL(QLLC_ERR_INVALID, "no shape inference for this op");
}
