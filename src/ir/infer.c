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
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ir/ir.h"

#define FAIL(st, ...) fail_node(diag, st, n, __VA_ARGS__)

static qllc_status fail_node(qllc_diag *diag, qllc_status st, const qllc_node *n, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static qllc_status fail_node(qllc_diag *diag, qllc_status st, const qllc_node *n, const char *fmt, ...) {
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

static int value_float(const qllc_value *v, float *out) {
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

static void shape_str(const qllc_value *v, char *buf, size_t size) { qllc_type_str(v, buf, size); }

static void set_out(qllc_node *n, int k, qllc_elem elem, int rank, const int64_t *dims) {
  qllc_value *o = n->out[k];
  if (!o) return;
  o->elem = elem;
  o->rank = rank;
  for (int i = 0; i < rank; i++) o->dims[i] = dims[i];
}

static int norm_axis(int64_t axis, int rank, int64_t *out) {
  if (axis < -rank || axis >= rank) return -1;
  *out = axis < 0 ? axis + rank : axis;
  return 0;
}

static int cmp_i64(const void *a, const void *b) {
  int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
  return x < y ? -1 : x > y;
}

/* Drops inputs from index k on (the optional operand inputs turned into attributes). */
static void drop_inputs_from(qllc_node *n, int k) {
  if (n->n_in > k) n->n_in = k;
}

/* Pad: the input index output index o reads along an axis of size dim padded by `begin` in front, in
 * mode constant (-1: the pad value), reflect (the edge is not repeated), edge or wrap. The pads are
 * those infer.c accepted (reflect: < dim; wrap: <= dim). Shared by the lowering's index maps and folding. */
int64_t qllc_pad_source(const char *mode, int64_t o, int64_t begin, int64_t dim) {
  int64_t i = o - begin;
  if (i >= 0 && i < dim) return i;
  if (!strcmp(mode, "edge")) return i < 0 ? 0 : dim - 1;
  if (!strcmp(mode, "wrap")) return ((i % dim) + dim) % dim;
  if (!strcmp(mode, "reflect")) return i < 0 ? -i : 2 * (dim - 1) - i;
  return -1;
}

/* ---- normalisation ---------------------------------------------------------------------------- */

/* (k - 1) * d + 1, the extent of a dilated window; -1 on overflow (k, d >= 1). */
static int window_extent(int64_t k, int64_t d, int64_t *ek) {
  return qllc_mul_size(k - 1, d, ek) || qllc_add_size(*ek, 1, ek) ? -1 : 0;
}

/* in + begin + end; -1 on overflow. */
static int padded_extent(int64_t in, int64_t begin, int64_t end, int64_t *out) {
  return qllc_add_size(in, begin, out) || qllc_add_size(*out, end, out) ? -1 : 0;
}

static qllc_status norm_spatial(qllc_graph *g, qllc_node *n, qllc_diag *diag) {
  const qllc_value *x = n->in[0];
  int is_conv = n->op == QLLC_OP_CONV || n->op == QLLC_OP_CONV_INTEGER || n->op == QLLC_OP_QLINEAR_CONV;
  int wi = n->op == QLLC_OP_QLINEAR_CONV ? 3 : 1; /* the weight input */
  int vol = x->rank == 5 && (n->op == QLLC_OP_CONV || n->op == QLLC_OP_MAXPOOL || n->op == QLLC_OP_AVGPOOL);
  if (x->rank != 3 && x->rank != 4 && !vol) {
    if (x->rank == 5) return FAIL(QLLC_ERR_UNSUPPORTED, "3-D %s is not supported", qllc_op_name(n->op));
    return FAIL(QLLC_ERR_INVALID, "input must have rank 3, 4 or 5, has rank %d", x->rank);
  }
  int sp = x->rank - 2;  /* spatial dims: 1, 2 or 3 */
  int na = vol ? 3 : 2;  /* normalised axes: 2 (1-D gets H = 1), or 3 */
  int o = na - sp;       /* where the model's first spatial axis lands */
  const int64_t *a;
  int64_t k[3], s[3] = {1, 1, 1}, d[3] = {1, 1, 1}, p[6] = {0}, cp[6] = {0};
  int already = qllc_node_attr(n, "auto_pad") == NULL && qllc_node_attr(n, "ceil_mode") == NULL &&
                qllc_attr_ints(n, "pads", &a) == 2 * na && qllc_attr_ints(n, "kernel_shape", &a) == na;
  int cnt = qllc_attr_ints(n, "kernel_shape", &a);
  if (already) {
    /* normalised before: only check and fill absent defaults */
    if (qllc_attr_ints(n, "strides", &a) != na) qllc_node_set_attr_ints(g, n, "strides", na, s);
    if (qllc_attr_ints(n, "dilations", &a) != na) qllc_node_set_attr_ints(g, n, "dilations", na, d);
    if (is_conv && !qllc_node_attr(n, "group")) qllc_node_set_attr_int(g, n, "group", 1);
    return QLLC_OK;
  }
  /* kernel */
  if (cnt == 0 && is_conv && n->n_in > wi && n->in[wi] && n->in[wi]->rank == x->rank) {
    for (int i = 0; i < sp; i++) k[o + i] = n->in[wi]->dims[2 + i];
  } else if (cnt == sp) {
    for (int i = 0; i < sp; i++) k[o + i] = a[i];
  } else {
    return FAIL(QLLC_ERR_INVALID, "kernel_shape has %d entries for %d spatial dims", cnt, sp);
  }
  if (sp == 1) k[0] = 1;
  cnt = qllc_attr_ints(n, "strides", &a);
  if (cnt && cnt != sp) return FAIL(QLLC_ERR_INVALID, "strides has %d entries for %d spatial dims", cnt, sp);
  for (int i = 0; i < cnt; i++) s[o + i] = a[i];
  cnt = qllc_attr_ints(n, "dilations", &a);
  if (cnt && cnt != sp) return FAIL(QLLC_ERR_INVALID, "dilations has %d entries for %d spatial dims", cnt, sp);
  for (int i = 0; i < cnt; i++) d[o + i] = a[i];
  cnt = qllc_attr_ints(n, "pads", &a);
  if (cnt && cnt != 2 * sp) return FAIL(QLLC_ERR_INVALID, "pads has %d entries for %d spatial dims", cnt, sp);
  for (int i = 0; i < sp; i++) {
    if (cnt) {
      p[o + i] = a[i];
      p[na + o + i] = a[sp + i];
    }
  }
  for (int i = 0; i < na; i++) {
    if (k[i] <= 0 || s[i] <= 0 || d[i] <= 0)
      return FAIL(QLLC_ERR_INVALID, "kernel_shape, strides and dilations must be positive");
  }
  for (int i = 0; i < 2 * na; i++)
    if (p[i] < 0) return FAIL(QLLC_ERR_UNSUPPORTED, "negative pads are not supported");
  const char *auto_pad = qllc_attr_string(n, "auto_pad", "NOTSET");
  int64_t in[3], ek[3];
  for (int i = 0; i < na; i++) in[i] = i < o ? 1 : x->dims[2 + i - o];
  for (int i = 0; i < na; i++)
    if (window_extent(k[i], d[i], &ek[i]))
      return FAIL(QLLC_ERR_INVALID, "kernel_shape %lld with dilation %lld overflows", (long long)k[i], (long long)d[i]);
  if (!strcmp(auto_pad, "SAME_UPPER") || !strcmp(auto_pad, "SAME_LOWER")) {
    for (int i = 0; i < na; i++) {
      int64_t out = in[i] / s[i] + (in[i] % s[i] != 0), total;
      if (qllc_mul_size(out > 0 ? out - 1 : 0, s[i], &total) || qllc_add_size(total, ek[i], &total))
        return FAIL(QLLC_ERR_INVALID, "SAME padding with stride %lld overflows", (long long)s[i]);
      total -= in[i];
      if (total < 0) total = 0;
      int64_t small = total / 2, big = total - small;
      p[i] = !strcmp(auto_pad, "SAME_UPPER") ? small : big;
      p[i + na] = total - p[i];
    }
  } else if (!strcmp(auto_pad, "VALID")) {
    memset(p, 0, sizeof p);
  } else if (strcmp(auto_pad, "NOTSET") && auto_pad[0]) {
    return FAIL(QLLC_ERR_INVALID, "unknown auto_pad '%s'", auto_pad);
  }
  if (qllc_attr_int(n, "ceil_mode", 0)) {
    for (int i = 0; i < na; i++) {
      int64_t padded, begin, last;
      if (padded_extent(in[i], p[i], p[i + na], &padded) || qllc_add_size(in[i], p[i], &begin))
        return FAIL(QLLC_ERR_INVALID, "pads %lld, %lld overflow the input size", (long long)p[i], (long long)p[i + na]);
      int64_t span = padded - ek[i];
      if (span < 0) continue;
      int64_t out = span / s[i] + (span % s[i] != 0) + 1;
      if (qllc_mul_size(out - 1, s[i], &last))
        return FAIL(QLLC_ERR_INVALID, "ceil_mode with stride %lld overflows", (long long)s[i]);
      /* the last window must start inside the input or the begin padding (ONNX/PyTorch rule) */
      if (last >= begin) out--, last -= s[i];
      int64_t extra;
      if (qllc_add_size(last, ek[i], &extra))
        return FAIL(QLLC_ERR_INVALID, "ceil_mode with stride %lld overflows", (long long)s[i]);
      extra -= padded;
      if (extra > 0) {
        p[i + na] += extra;
        cp[i + na] = extra;
      }
    }
    qllc_node_set_attr_ints(g, n, "ceil_pads", 2 * na, cp);
  }
  qllc_node_remove_attr(n, "auto_pad");
  qllc_node_remove_attr(n, "ceil_mode");
  if (n->op == QLLC_OP_MAXPOOL) { /* the Indices' order: 0 row major, 1 column major */
    int64_t so = qllc_attr_int(n, "storage_order", 0);
    if (so != 0 && so != 1) return FAIL(QLLC_ERR_INVALID, "storage_order %lld (0 or 1)", (long long)so);
    qllc_node_set_attr_int(g, n, "storage_order", so);
  }
  qllc_node_set_attr_ints(g, n, "kernel_shape", na, k);
  qllc_node_set_attr_ints(g, n, "strides", na, s);
  qllc_node_set_attr_ints(g, n, "dilations", na, d);
  qllc_node_set_attr_ints(g, n, "pads", 2 * na, p);
  if (is_conv) qllc_node_set_attr_int(g, n, "group", qllc_attr_int(n, "group", 1));
  if (n->op == QLLC_OP_AVGPOOL)
    qllc_node_set_attr_int(g, n, "count_include_pad", qllc_attr_int(n, "count_include_pad", 0));
  return QLLC_OK;
}

/* Reads axes from the attribute or the constant input 1 (dropping it); normalises against `rank`. */
static qllc_status norm_axes(qllc_graph *g, qllc_node *n, int rank, int *count, int64_t *axes, qllc_diag *diag) {
  const int64_t *a;
  int cnt = qllc_attr_ints(n, "axes", &a);
  int have = qllc_node_attr(n, "axes") != NULL;
  if (have && cnt > QLLC_MAX_RANK) return FAIL(QLLC_ERR_INVALID, "axes has %d entries (at most %d)", cnt, QLLC_MAX_RANK);
  if (have && cnt > 0) memcpy(axes, a, sizeof *a * (size_t)cnt);
  if (n->n_in > 1 && n->in[1]) {
    cnt = qllc_value_ints(n->in[1], axes, QLLC_MAX_RANK);
    if (cnt < 0) return FAIL(QLLC_ERR_UNSUPPORTED, "axes computed at run time ('%s') are not supported", n->in[1]->name);
    have = 1;
  }
  drop_inputs_from(n, 1);
  if (!have) {
    *count = -1;
    return QLLC_OK;
  }
  for (int i = 0; i < cnt; i++)
    if (norm_axis(axes[i], rank, &axes[i])) return FAIL(QLLC_ERR_INVALID, "axis %lld out of range for rank %d", (long long)axes[i], rank);
  qsort(axes, (size_t)cnt, sizeof *axes, cmp_i64);
  for (int i = 1; i < cnt; i++)
    if (axes[i] == axes[i - 1]) return FAIL(QLLC_ERR_INVALID, "axis %lld repeated", (long long)axes[i]);
  *count = cnt;
  qllc_node_set_attr_ints(g, n, "axes", cnt, axes);
  return QLLC_OK;
}

/* ---- transformer and mobile ops (issue 15) -----------------------------------------------------------
 * Normalised forms:
 *   HardSigmoid  "alpha" (0.2), "beta" (0.5) explicit.
 *   Pow          "exponent" (float) from the constant scalar second input (dropped). Unless x is itself a
 *                constant (folded), the exponent must be an integer in [-16, 16] or +-0.5.
 *   LayerNormalization  "axis" non-negative, "epsilon" (1e-5); scale (and bias) have the shape
 *                dims[axis:] exactly; outputs Mean / InvStdDev are unsupported (training).
 *   ReduceMean/Sum/Max  "axes" non-negative, sorted, explicit (absent or empty: every axis), from the
 *                attribute or the constant second input (dropped); "keepdims" explicit (1).
 *                noop_with_empty_axes = 1 is unsupported.
 *   Split        "axis" non-negative, "split" the sizes (from the attribute, the constant second input,
 *                dropped, or equal parts).
 *   Expand       "shape": the output dims (the broadcast of x and the constant shape input, dropped).
 *   Resize,      "out_dims" the output dims, "q_scales" the scale of each axis (out / in when sizes
 *   Upsample     were given), "mode" nearest or linear, "coord" the coordinate transformation,
 *                "nearest_mode"; the operand inputs are dropped. Rank 4 with N and C unchanged only;
 *                cubic and tf_crop_and_resize are unsupported. Upsample and Resize-10: asymmetric
 *                coordinates, nearest rounds down (floor).
 *   PRelu        opset < 7: a constant slope of shape [C] (C = dims[1]) is reshaped to [C, 1, ...] (it
 *                applied along axis 1 then). */
static int is_ext_unary(qllc_op op) {
  switch (op) {
  case QLLC_OP_ERF: case QLLC_OP_SQRT: case QLLC_OP_EXP: case QLLC_OP_NEG: case QLLC_OP_RECIPROCAL:
  case QLLC_OP_HARD_SIGMOID: case QLLC_OP_HARD_SWISH: case QLLC_OP_GELU: case QLLC_OP_POW:
    return 1;
  default:
    return 0;
  }
}

static qllc_status norm_resize(qllc_graph *g, qllc_node *n, qllc_diag *diag) {
  const qllc_value *x = n->in[0];
  if (qllc_node_attr(n, "out_dims")) return QLLC_OK;
  int up = n->op == QLLC_OP_UPSAMPLE, legacy = up || g->opset < 11;
  const char *mode = qllc_attr_string(n, "mode", "nearest");
  if (!strcmp(mode, "bilinear")) mode = "linear";
  if (strcmp(mode, "nearest") && strcmp(mode, "linear"))
    return FAIL(QLLC_ERR_UNSUPPORTED, "mode '%s' is not supported (nearest and linear are)", mode);
  const char *coord = legacy ? "asymmetric" : qllc_attr_string(n, "coordinate_transformation_mode", "half_pixel");
  const char *nmode = legacy ? "floor" : qllc_attr_string(n, "nearest_mode", "round_prefer_floor");
  if (strcmp(coord, "half_pixel") && strcmp(coord, "asymmetric") && strcmp(coord, "align_corners") &&
      strcmp(coord, "pytorch_half_pixel") && strcmp(coord, "tf_half_pixel_for_nn"))
    return FAIL(QLLC_ERR_UNSUPPORTED, "coordinate_transformation_mode '%s' is not supported", coord);
  if (strcmp(nmode, "round_prefer_floor") && strcmp(nmode, "round_prefer_ceil") && strcmp(nmode, "floor") &&
      strcmp(nmode, "ceil"))
    return FAIL(QLLC_ERR_UNSUPPORTED, "nearest_mode '%s' is not supported", nmode);
  if (qllc_attr_int(n, "antialias", 0)) return FAIL(QLLC_ERR_UNSUPPORTED, "antialias is not supported");
  float sc[QLLC_MAX_RANK];
  int64_t od[QLLC_MAX_RANK];
  const qllc_value *scales = NULL, *sizes = NULL;
  if (up && g->opset < 9) {
    const qllc_attr *a = qllc_node_attr(n, "scales");
    if (!a || a->kind != QLLC_ATTR_FLOATS || a->n != x->rank) return FAIL(QLLC_ERR_INVALID, "Upsample needs one scale per axis");
    for (int i = 0; i < x->rank; i++) sc[i] = a->floats[i];
  } else if (legacy) {
    scales = n->n_in > 1 ? n->in[1] : NULL;
  } else {
    scales = n->n_in > 2 ? n->in[2] : NULL;
    sizes = n->n_in > 3 ? n->in[3] : NULL;
  }
  if (scales && qllc_value_numel(scales) == 0) scales = NULL;
  if (sizes) {
    int cnt = qllc_value_ints(sizes, od, QLLC_MAX_RANK);
    if (cnt < 0) return FAIL(QLLC_ERR_UNSUPPORTED, "sizes computed at run time ('%s') are not supported", sizes->name);
    if (cnt != x->rank) return FAIL(QLLC_ERR_UNSUPPORTED, "sizes has %d entries for rank %d (axes are not supported)", cnt, x->rank);
    for (int i = 0; i < x->rank; i++) sc[i] = (float)od[i] / (float)x->dims[i];
  } else if (scales || !(up && g->opset < 9)) {
    if (!scales || !scales->data || scales->elem != QLLC_ELEM_F32)
      return FAIL(QLLC_ERR_UNSUPPORTED, "scales must be a float constant");
    if (qllc_value_numel(scales) != x->rank) return FAIL(QLLC_ERR_UNSUPPORTED, "scales has %lld entries for rank %d",
                                                        (long long)qllc_value_numel(scales), x->rank);
    for (int i = 0; i < x->rank; i++) sc[i] = ((const float *)scales->data)[i];
  }
  if (!sizes)
    for (int i = 0; i < x->rank; i++) {
      if (!(sc[i] > 0)) return FAIL(QLLC_ERR_INVALID, "scale %g is not positive", (double)sc[i]);
      od[i] = (int64_t)floor((double)x->dims[i] * (double)sc[i]);
    }
  if (x->rank != 4 || od[0] != x->dims[0] || od[1] != x->dims[1])
    return FAIL(QLLC_ERR_UNSUPPORTED, "only rank-4 [N, C, H, W] inputs resized along H and W are supported");
  for (int i = 0; i < 4; i++)
    if (od[i] <= 0) return FAIL(QLLC_ERR_UNSUPPORTED, "an empty output is not supported");
  drop_inputs_from(n, 1);
  qllc_node_set_attr_ints(g, n, "out_dims", 4, od);
  qllc_node_set_attr_floats(g, n, "q_scales", 4, sc);
  qllc_node_set_attr_string(g, n, "mode", mode);
  qllc_node_set_attr_string(g, n, "coord", coord);
  qllc_node_set_attr_string(g, n, "nearest_mode", nmode);
  return QLLC_OK;
}

/* ConvTranspose: "kernel_shape", "strides", "dilations" [2], "pads" [top, left, bottom, right],
 * "output_padding" [2], "group" explicit; output_shape and auto_pad resolved into pads (ONNX's rules); 1-D
 * (rank 3) gets H = 1 as Conv does. "out_hw" records the output's spatial size. */
static qllc_status norm_conv_transpose(qllc_graph *g, qllc_node *n, qllc_diag *diag) {
  const qllc_value *x = n->in[0], *w = n->in[1];
  if (qllc_node_attr(n, "out_hw")) return QLLC_OK;
  if (x->rank == 5) return FAIL(QLLC_ERR_UNSUPPORTED, "3-D ConvTranspose is not supported");
  if ((x->rank != 3 && x->rank != 4) || w->rank != x->rank)
    return FAIL(QLLC_ERR_INVALID, "input and weight must both have rank 3 or 4");
  int sp = x->rank - 2;
  int64_t k[2] = {1, 1}, s[2] = {1, 1}, d[2] = {1, 1}, p[4] = {0, 0, 0, 0}, op[2] = {0, 0}, in[2] = {1, 1}, out[2];
  for (int i = 0; i < sp; i++) k[2 - sp + i] = w->dims[2 + i], in[2 - sp + i] = x->dims[2 + i];
  const int64_t *a;
  int cnt;
#define CT_ATTR(name, arr, mult)                                                                          \
  if ((cnt = qllc_attr_ints(n, name, &a)) != 0) {                                                         \
    if (cnt != (mult) * sp) return FAIL(QLLC_ERR_INVALID, "%s has %d entries for %d spatial dims", name, cnt, sp); \
    for (int m = 0; m < (mult); m++)                                                                      \
      for (int i = 0; i < sp; i++) arr[m * 2 + 2 - sp + i] = a[m * sp + i];                               \
  }
  CT_ATTR("kernel_shape", k, 1)
  CT_ATTR("strides", s, 1)
  CT_ATTR("dilations", d, 1)
  CT_ATTR("pads", p, 2)
  CT_ATTR("output_padding", op, 1)
#undef CT_ATTR
  for (int i = 0; i < 2; i++)
    if (k[i] <= 0 || s[i] <= 0 || d[i] <= 0 || op[i] < 0) return FAIL(QLLC_ERR_INVALID, "bad kernel_shape, strides, dilations or output_padding");
  if (k[0] != (sp == 2 ? w->dims[2] : 1) || k[1] != w->dims[x->rank - 1])
    return FAIL(QLLC_ERR_INVALID, "kernel_shape does not match the weight");
  int64_t group = qllc_attr_int(n, "group", 1);
  if (group <= 0 || x->dims[1] != w->dims[0] || w->dims[0] % group)
    return FAIL(QLLC_ERR_INVALID, "input channels %lld do not match the weight's %lld (group %lld)", (long long)x->dims[1],
                (long long)w->dims[0], (long long)group);
  const char *ap = qllc_attr_string(n, "auto_pad", "NOTSET");
  int64_t os[2] = {-1, -1};
  cnt = qllc_attr_ints(n, "output_shape", &a);
  if (cnt == sp || cnt == x->rank)
    for (int i = 0; i < sp; i++) os[2 - sp + i] = a[cnt - sp + i];
  else if (cnt) return FAIL(QLLC_ERR_INVALID, "output_shape has %d entries", cnt);
  if (!cnt && (!strcmp(ap, "SAME_UPPER") || !strcmp(ap, "SAME_LOWER")))
    for (int i = 0; i < 2; i++) os[i] = in[i] * s[i];
  else if (strcmp(ap, "NOTSET") && strcmp(ap, "VALID") && strcmp(ap, "SAME_UPPER") && strcmp(ap, "SAME_LOWER") && ap[0])
    return FAIL(QLLC_ERR_INVALID, "unknown auto_pad '%s'", ap);
  if (sp == 1) os[0] = os[1] >= 0 ? 1 : -1;
  for (int i = 0; i < 2; i++) {
    if (os[i] >= 0) {
      int64_t total = s[i] * (in[i] - 1) + op[i] + (k[i] - 1) * d[i] + 1 - os[i];
      if (total < 0) { /* larger than the full output: the extra rows/columns at the end get the bias only */
        op[i] += -total;
        p[i] = p[i + 2] = 0;
      } else if (!strcmp(ap, "SAME_UPPER")) p[i] = total / 2, p[i + 2] = total - total / 2;
      else p[i] = total - total / 2, p[i + 2] = total / 2;
    }
    out[i] = s[i] * (in[i] - 1) + op[i] + (k[i] - 1) * d[i] + 1 - p[i] - p[i + 2];
    if (out[i] <= 0) return FAIL(QLLC_ERR_INVALID, "empty output");
    if (p[i] < 0 || p[i + 2] < 0) return FAIL(QLLC_ERR_UNSUPPORTED, "negative pads are not supported");
  }
  qllc_node_remove_attr(n, "auto_pad");
  qllc_node_remove_attr(n, "output_shape");
  qllc_node_set_attr_ints(g, n, "kernel_shape", 2, k);
  qllc_node_set_attr_ints(g, n, "strides", 2, s);
  qllc_node_set_attr_ints(g, n, "dilations", 2, d);
  qllc_node_set_attr_ints(g, n, "pads", 4, p);
  qllc_node_set_attr_ints(g, n, "output_padding", 2, op);
  qllc_node_set_attr_int(g, n, "group", group);
  qllc_node_set_attr_ints(g, n, "out_hw", 2, out);
  return QLLC_OK;
}

static qllc_status norm_ext(qllc_graph *g, qllc_node *n, qllc_diag *diag) {
  qllc_status st;
  const qllc_value *x = n->in[0];
  switch (n->op) {
  case QLLC_OP_HARD_SIGMOID:
    qllc_node_set_attr_float(g, n, "alpha", qllc_attr_float(n, "alpha", 0.2f));
    qllc_node_set_attr_float(g, n, "beta", qllc_attr_float(n, "beta", 0.5f));
    return QLLC_OK;
  case QLLC_OP_POW: {
    if (n->n_in < 2) return qllc_node_attr(n, "exponent") ? QLLC_OK : FAIL(QLLC_ERR_INVALID, "Pow needs an exponent");
    float e;
    if (!n->in[1] || value_float(n->in[1], &e))
      return FAIL(QLLC_ERR_UNSUPPORTED, "only a constant scalar exponent is supported");
    if (!x->data && !(e == 0.5f || e == -0.5f || (e == (float)(int)e && e >= -16 && e <= 16)))
      return FAIL(QLLC_ERR_UNSUPPORTED, "exponent %g (integers in [-16, 16] and +-0.5 are supported)", (double)e);
    drop_inputs_from(n, 1);
    qllc_node_set_attr_float(g, n, "exponent", e);
    return QLLC_OK;
  }
  case QLLC_OP_LAYER_NORM: {
    int64_t axis;
    if (norm_axis(qllc_attr_int(n, "axis", -1), x->rank, &axis)) return FAIL(QLLC_ERR_INVALID, "axis out of range");
    qllc_node_set_attr_int(g, n, "axis", axis);
    qllc_node_set_attr_float(g, n, "epsilon", qllc_attr_float(n, "epsilon", 1e-5f));
    return QLLC_OK;
  }
  case QLLC_OP_REDUCE_MEAN:
  case QLLC_OP_REDUCE_SUM:
  case QLLC_OP_REDUCE_MAX: {
    int cnt;
    int64_t axes[QLLC_MAX_RANK];
    if ((st = norm_axes(g, n, x->rank, &cnt, axes, diag))) return st;
    if (cnt <= 0) {
      if (qllc_attr_int(n, "noop_with_empty_axes", 0))
        return FAIL(QLLC_ERR_UNSUPPORTED, "noop_with_empty_axes with empty axes is not supported");
      cnt = x->rank;
      for (int i = 0; i < cnt; i++) axes[i] = i;
      qllc_node_set_attr_ints(g, n, "axes", cnt, axes);
    }
    qllc_node_set_attr_int(g, n, "keepdims", qllc_attr_int(n, "keepdims", 1) != 0);
    return QLLC_OK;
  }
  case QLLC_OP_SPLIT: {
    int64_t axis, sp[16];
    if (norm_axis(qllc_attr_int(n, "axis", 0), x->rank, &axis)) return FAIL(QLLC_ERR_INVALID, "axis out of range");
    const int64_t *a;
    int cnt = qllc_attr_ints(n, "split", &a);
    if (cnt > 16) return FAIL(QLLC_ERR_UNSUPPORTED, "more than 16 parts");
    if (cnt) memcpy(sp, a, sizeof *a * (size_t)cnt);
    if (n->n_in > 1 && n->in[1]) {
      cnt = qllc_value_ints(n->in[1], sp, 16);
      if (cnt < 0) return FAIL(QLLC_ERR_UNSUPPORTED, "split sizes computed at run time are not supported");
    }
    if (!cnt) {
      if (x->dims[axis] % n->n_out) return FAIL(QLLC_ERR_UNSUPPORTED, "uneven split without sizes is not supported");
      cnt = n->n_out;
      for (int i = 0; i < cnt; i++) sp[i] = x->dims[axis] / n->n_out;
    }
    int64_t sum = 0;
    for (int i = 0; i < cnt; i++) {
      if (sp[i] <= 0) return FAIL(QLLC_ERR_UNSUPPORTED, "empty or negative parts are not supported");
      sum += sp[i];
    }
    if (cnt != n->n_out || sum != x->dims[axis])
      return FAIL(QLLC_ERR_INVALID, "split sizes do not match the outputs or the axis");
    drop_inputs_from(n, 1);
    qllc_node_set_attr_int(g, n, "axis", axis);
    qllc_node_set_attr_ints(g, n, "split", cnt, sp);
    return QLLC_OK;
  }
  case QLLC_OP_EXPAND: {
    if (n->n_in < 2) return qllc_node_attr(n, "shape") ? QLLC_OK : FAIL(QLLC_ERR_INVALID, "Expand needs a shape");
    int64_t shape[QLLC_MAX_RANK], dims[QLLC_MAX_RANK];
    int cnt = qllc_value_ints(n->in[1], shape, QLLC_MAX_RANK);
    if (cnt < 0) return FAIL(QLLC_ERR_UNSUPPORTED, "a shape computed at run time is not supported");
    int r = qllc_broadcast_shape(x->rank, x->dims, cnt, shape, dims);
    if (r < 0) return FAIL(QLLC_ERR_INVALID, "shape does not broadcast with the input");
    drop_inputs_from(n, 1);
    qllc_node_set_attr_ints(g, n, "shape", r, dims);
    return QLLC_OK;
  }
  case QLLC_OP_RESIZE:
  case QLLC_OP_UPSAMPLE:
    return norm_resize(g, n, diag);
  case QLLC_OP_CONV_TRANSPOSE:
    return norm_conv_transpose(g, n, diag);
  case QLLC_OP_PRELU: {
    /* opset < 7: a slope of shape [C] applies along axis 1 (no numpy broadcasting yet) */
    const qllc_value *s = n->in[1];
    if (g->opset >= 7 || !s || s->rank != 1 || x->rank < 3 || s->dims[0] != x->dims[1])
      return QLLC_OK;
    if (!s->data) return FAIL(QLLC_ERR_UNSUPPORTED, "a per-channel slope computed at run time (opset < 7) is not supported");
    int64_t d[QLLC_MAX_RANK];
    for (int i = 0; i < x->rank - 1; i++) d[i] = i ? 1 : s->dims[0];
    qllc_value *r = qllc_const_new(g, qllc_arena_printf(g->arena, "%s.channel", s->name), s->elem, x->rank - 1, d, s->data);
    if (!r) return FAIL(QLLC_ERR_NOMEM, "out of memory");
    n->in[1] = r;
    return QLLC_OK;
  }
  default:
    return QLLC_OK;
  }
}

static qllc_status infer_ext(qllc_graph *g, qllc_node *n, qllc_diag *diag) {
  const qllc_value *x = n->in[0];
  int64_t dims[QLLC_MAX_RANK];
  char t1[160], t2[160];
  if (is_ext_unary(n->op)) {
    set_out(n, 0, x->elem, x->rank, x->dims);
    return QLLC_OK;
  }
  switch (n->op) {
  case QLLC_OP_LAYER_NORM: {
    int64_t axis = qllc_attr_int(n, "axis", -1), len = 1;
    for (int i = (int)axis; i < x->rank; i++) len *= x->dims[i];
    for (int k = 1; k < 3 && k < n->n_in; k++) {
      const qllc_value *p = n->in[k];
      if (!p) continue;
      int ok = p->rank == x->rank - axis;
      for (int i = 0; ok && i < p->rank; i++) ok = p->dims[i] == x->dims[axis + i];
      if (!ok) return FAIL(QLLC_ERR_UNSUPPORTED, "%s %s is not of shape dims[axis:] of %s (broadcasting is not supported)",
                           k == 1 ? "scale" : "bias", qllc_type_str(p, t1, sizeof t1), qllc_type_str(x, t2, sizeof t2));
    }
    set_out(n, 0, x->elem, x->rank, x->dims);
    memcpy(dims, x->dims, sizeof dims);
    for (int i = (int)axis; i < x->rank; i++) dims[i] = 1;
    for (int k = 1; k < n->n_out; k++) set_out(n, k, QLLC_ELEM_F32, x->rank, dims);
    (void)len;
    return QLLC_OK;
  }
  case QLLC_OP_REDUCE_MEAN:
  case QLLC_OP_REDUCE_SUM:
  case QLLC_OP_REDUCE_MAX: {
    const int64_t *axes;
    int cnt = qllc_attr_ints(n, "axes", &axes), keep = (int)qllc_attr_int(n, "keepdims", 1), r = 0;
    for (int i = 0, j = 0; i < x->rank; i++) {
      if (j < cnt && axes[j] == i) {
        j++;
        if (keep) dims[r++] = 1;
        continue;
      }
      dims[r++] = x->dims[i];
    }
    set_out(n, 0, x->elem, r, dims);
    return QLLC_OK;
  }
  case QLLC_OP_PRELU: {
    const qllc_value *s = n->in[1];
    int r = qllc_broadcast_shape(x->rank, x->dims, s->rank, s->dims, dims);
    int ok = r == x->rank;
    for (int i = 0; ok && i < r; i++) ok = dims[i] == x->dims[i];
    if (!ok) return FAIL(QLLC_ERR_INVALID, "slope %s does not broadcast to %s", qllc_type_str(s, t1, sizeof t1),
                         qllc_type_str(x, t2, sizeof t2));
    set_out(n, 0, x->elem, x->rank, x->dims);
    return QLLC_OK;
  }
  case QLLC_OP_SPLIT: {
    const int64_t *sp;
    qllc_attr_ints(n, "split", &sp);
    int64_t axis = qllc_attr_int(n, "axis", 0);
    for (int k = 0; k < n->n_out; k++) {
      memcpy(dims, x->dims, sizeof dims);
      dims[axis] = sp[k];
      set_out(n, k, x->elem, x->rank, dims);
    }
    return QLLC_OK;
  }
  case QLLC_OP_EXPAND: {
    const int64_t *s;
    int cnt = qllc_attr_ints(n, "shape", &s);
    set_out(n, 0, x->elem, cnt, s);
    return QLLC_OK;
  }
  case QLLC_OP_WHERE: {
    const qllc_value *c = n->in[0], *a = n->in[1], *b = n->in[2];
    int64_t t[QLLC_MAX_RANK];
    if (!a || !b) return FAIL(QLLC_ERR_INVALID, "X and Y are required");
    int r = qllc_broadcast_shape(c->rank, c->dims, a->rank, a->dims, t);
    if (r >= 0) r = qllc_broadcast_shape(r, t, b->rank, b->dims, dims);
    if (r < 0) return FAIL(QLLC_ERR_INVALID, "condition, X and Y do not broadcast");
    if (a->elem != b->elem) return FAIL(QLLC_ERR_INVALID, "X and Y differ in element kind");
    if (!c->data && a->elem == QLLC_ELEM_F32)
      return FAIL(QLLC_ERR_UNSUPPORTED, "a condition computed at run time ('%s') is not supported", c->name);
    set_out(n, 0, a->elem, r, dims);
    return QLLC_OK;
  }
  case QLLC_OP_CONV_TRANSPOSE: {
    const int64_t *hw;
    const qllc_value *w = n->in[1];
    int64_t group = qllc_attr_int(n, "group", 1);
    qllc_attr_ints(n, "out_hw", &hw);
    if (n->n_in > 2 && n->in[2] && qllc_value_numel(n->in[2]) != w->dims[1] * group)
      return FAIL(QLLC_ERR_INVALID, "bias has %lld elements for %lld output channels", (long long)qllc_value_numel(n->in[2]),
                  (long long)(w->dims[1] * group));
    dims[0] = x->dims[0], dims[1] = w->dims[1] * group;
    if (x->rank == 4) dims[2] = hw[0], dims[3] = hw[1];
    else dims[2] = hw[1];
    set_out(n, 0, x->elem, x->rank, dims);
    return QLLC_OK;
  }
  case QLLC_OP_MAX:
  case QLLC_OP_MIN:
  case QLLC_OP_MEAN: {
    int r = x->rank;
    memcpy(dims, x->dims, sizeof dims);
    for (int k = 1; k < n->n_in; k++) {
      int64_t t[QLLC_MAX_RANK];
      if (!n->in[k]) return FAIL(QLLC_ERR_INVALID, "input %d is missing", k);
      r = qllc_broadcast_shape(r, dims, n->in[k]->rank, n->in[k]->dims, t);
      if (r < 0) return FAIL(QLLC_ERR_INVALID, "input %d %s does not broadcast", k, qllc_type_str(n->in[k], t1, sizeof t1));
      memcpy(dims, t, sizeof t);
    }
    set_out(n, 0, x->elem, r, dims);
    return QLLC_OK;
  }
  case QLLC_OP_RESIZE:
  case QLLC_OP_UPSAMPLE: {
    const int64_t *s;
    int cnt = qllc_attr_ints(n, "out_dims", &s);
    set_out(n, 0, x->elem, cnt, s);
    return QLLC_OK;
  }
  default:
    return FAIL(QLLC_ERR_INVALID, "no shape inference for this op");
  }
}

qllc_status qllc_normalize_node(qllc_graph *g, qllc_node *n, qllc_diag *diag) {
  qllc_status st;
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
    return norm_ext(g, n, diag); /* issue 15 */
  case QLLC_OP_CONV:
  case QLLC_OP_CONV_INTEGER:
  case QLLC_OP_QLINEAR_CONV:
  case QLLC_OP_MAXPOOL:
  case QLLC_OP_AVGPOOL:
    return norm_spatial(g, n, diag);
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
  case QLLC_OP_SQUEEZE: {
    int cnt;
    int64_t axes[QLLC_MAX_RANK];
    if ((st = norm_axes(g, n, x->rank, &cnt, axes, diag))) return st;
    if (cnt < 0) {
      cnt = 0;
      for (int i = 0; i < x->rank; i++)
        if (x->dims[i] == 1) axes[cnt++] = i;
      qllc_node_set_attr_ints(g, n, "axes", cnt, axes);
    }
    return QLLC_OK;
  }
  case QLLC_OP_UNSQUEEZE: {
    const int64_t *a;
    int cnt = qllc_attr_ints(n, "axes", &a);
    if (n->n_in > 1 && n->in[1]) cnt = (int)qllc_value_numel(n->in[1]);
    int cnt2;
    int64_t axes[QLLC_MAX_RANK];
    if (x->rank + cnt > QLLC_MAX_RANK) return FAIL(QLLC_ERR_UNSUPPORTED, "result rank above %d", QLLC_MAX_RANK);
    if ((st = norm_axes(g, n, x->rank + cnt, &cnt2, axes, diag))) return st;
    if (cnt2 < 0) return FAIL(QLLC_ERR_INVALID, "Unsqueeze needs axes");
    return QLLC_OK;
  }
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
  case QLLC_OP_PAD: {
    const char *mode = qllc_attr_string(n, "mode", "constant");
    int is_const = !strcmp(mode, "constant");
    if (!is_const && strcmp(mode, "reflect") && strcmp(mode, "edge") && strcmp(mode, "wrap"))
      return FAIL(QLLC_ERR_UNSUPPORTED, "Pad mode '%s' is not supported (constant, reflect, edge and wrap are)", mode);
    int64_t pads[2 * QLLC_MAX_RANK];
    const int64_t *a;
    int cnt = qllc_attr_ints(n, "pads", &a);
    if (cnt > 2 * QLLC_MAX_RANK) return FAIL(QLLC_ERR_INVALID, "pads has %d entries (at most %d)", cnt, 2 * QLLC_MAX_RANK);
    if (cnt) memcpy(pads, a, sizeof *a * (size_t)cnt);
    float value = qllc_attr_float(n, "value", 0.0f);
    if (n->n_in > 1 && n->in[1]) {
      cnt = qllc_value_ints(n->in[1], pads, 2 * QLLC_MAX_RANK);
      if (cnt < 0) return FAIL(QLLC_ERR_UNSUPPORTED, "pads computed at run time ('%s') are not supported", n->in[1]->name);
    }
    /* a run-time value stays input 2 (float scalar); a constant one becomes the attribute */
    qllc_value *rt = NULL;
    if (is_const && n->n_in > 2 && n->in[2] && value_float(n->in[2], &value)) {
      if (n->in[2]->elem != QLLC_ELEM_F32 || qllc_value_numel(n->in[2]) != 1 || x->elem != QLLC_ELEM_F32)
        return FAIL(QLLC_ERR_UNSUPPORTED, "a constant_value computed at run time must be a float scalar padding float data");
      rt = n->in[2];
    }
    if (n->n_in > 3 && n->in[3]) return FAIL(QLLC_ERR_UNSUPPORTED, "Pad with an axes input is not supported");
    if (cnt != 2 * x->rank) return FAIL(QLLC_ERR_INVALID, "pads has %d entries for rank %d", cnt, x->rank);
    for (int i = 0; i < cnt; i++)
      if (pads[i] < 0) return FAIL(QLLC_ERR_UNSUPPORTED, "negative pads (cropping) are not supported");
    for (int i = 0; !is_const && i < x->rank; i++) {
      int64_t most = !strcmp(mode, "reflect") ? x->dims[i] - 1 : !strcmp(mode, "wrap") ? x->dims[i] : INT64_MAX;
      if (x->dims[i] == 0 && (pads[i] || pads[i + x->rank]))
        return FAIL(QLLC_ERR_INVALID, "Pad mode '%s' of an empty axis %d", mode, i);
      if (pads[i] > most || pads[i + x->rank] > most)
        return FAIL(QLLC_ERR_UNSUPPORTED, "Pad mode '%s' with pads larger than %lld on axis %d is not supported", mode,
                    (long long)most, i);
    }
    drop_inputs_from(n, rt ? 3 : 1);
    if (rt) n->in[1] = NULL;
    qllc_node_set_attr_ints(g, n, "pads", cnt, pads);
    qllc_node_set_attr_float(g, n, "value", value);
    return QLLC_OK;
  }
  case QLLC_OP_RESHAPE: {
    int64_t shape[QLLC_MAX_RANK + 1];
    const int64_t *a;
    int cnt;
    if (n->n_in > 1 && n->in[1]) {
      cnt = qllc_value_ints(n->in[1], shape, QLLC_MAX_RANK + 1);
      if (cnt < 0)
        return FAIL(QLLC_ERR_UNSUPPORTED, "the target shape '%s' is computed at run time; qllc needs it constant",
                    n->in[1]->name);
    } else {
      cnt = qllc_attr_ints(n, "shape", &a);
      if (!qllc_node_attr(n, "shape")) return FAIL(QLLC_ERR_INVALID, "Reshape without a shape");
      if (cnt > QLLC_MAX_RANK) return FAIL(QLLC_ERR_UNSUPPORTED, "rank %d above %d", cnt, QLLC_MAX_RANK);
      if (cnt) memcpy(shape, a, sizeof *a * (size_t)cnt);
    }
    if (cnt > QLLC_MAX_RANK) return FAIL(QLLC_ERR_UNSUPPORTED, "rank %d above %d", cnt, QLLC_MAX_RANK);
    int allowzero = (int)qllc_attr_int(n, "allowzero", 0);
    int64_t known = 1, infer_at = -1, total = qllc_value_numel(x);
    for (int i = 0; i < cnt; i++) {
      if (shape[i] == 0 && !allowzero) {
        if (i >= x->rank) return FAIL(QLLC_ERR_INVALID, "shape[%d] = 0 but the input has rank %d", i, x->rank);
        shape[i] = x->dims[i];
      }
      if (shape[i] == -1) {
        if (infer_at >= 0) return FAIL(QLLC_ERR_INVALID, "more than one -1 in the target shape");
        infer_at = i;
      } else if (shape[i] < 0) {
        return FAIL(QLLC_ERR_INVALID, "negative dim %lld in the target shape", (long long)shape[i]);
      } else if (qllc_mul_size(known, shape[i], &known)) {
        return FAIL(QLLC_ERR_INVALID, "the target shape's element count overflows (dim %d is %lld)", i, (long long)shape[i]);
      }
    }
    if (infer_at >= 0) {
      if (known == 0 || total % known) return FAIL(QLLC_ERR_INVALID, "cannot infer the -1 dim: %lld elements into %lld-sized blocks",
                                                   (long long)total, (long long)known);
      shape[infer_at] = total / known;
      known = total; /* known * (total / known), exact */
    }
    if (known != total)
      return FAIL(QLLC_ERR_INVALID, "cannot reshape %lld elements into %lld", (long long)total, (long long)known);
    drop_inputs_from(n, 1);
    qllc_node_remove_attr(n, "allowzero");
    qllc_node_set_attr_ints(g, n, "shape", cnt, shape);
    return QLLC_OK;
  }
  case QLLC_OP_FLATTEN: {
    int64_t axis = qllc_attr_int(n, "axis", 1);
    if (axis < -x->rank || axis > x->rank) return FAIL(QLLC_ERR_INVALID, "axis %lld out of range", (long long)axis);
    qllc_node_set_attr_int(g, n, "axis", axis < 0 ? axis + x->rank : axis);
    return QLLC_OK;
  }
  case QLLC_OP_CONCAT: {
    int64_t axis;
    if (!qllc_node_attr(n, "axis")) return FAIL(QLLC_ERR_INVALID, "Concat needs an axis");
    if (norm_axis(qllc_attr_int(n, "axis", 0), x->rank, &axis)) return FAIL(QLLC_ERR_INVALID, "axis out of range");
    qllc_node_set_attr_int(g, n, "axis", axis);
    return QLLC_OK;
  }
  case QLLC_OP_GATHER: {
    int64_t axis;
    if (norm_axis(qllc_attr_int(n, "axis", 0), x->rank, &axis)) return FAIL(QLLC_ERR_INVALID, "axis out of range");
    qllc_node_set_attr_int(g, n, "axis", axis);
    return QLLC_OK;
  }
  case QLLC_OP_TRANSPOSE: {
    const int64_t *a;
    int cnt = qllc_attr_ints(n, "perm", &a);
    int64_t perm[QLLC_MAX_RANK];
    int seen[QLLC_MAX_RANK] = {0};
    if (!qllc_node_attr(n, "perm")) {
      cnt = x->rank;
      for (int i = 0; i < cnt; i++) perm[i] = cnt - 1 - i;
    } else {
      if (cnt != x->rank) return FAIL(QLLC_ERR_INVALID, "perm has %d entries for rank %d", cnt, x->rank);
      for (int i = 0; i < cnt; i++) {
        if (norm_axis(a[i], cnt, &perm[i]) || seen[perm[i]]++) return FAIL(QLLC_ERR_INVALID, "perm is not a permutation");
      }
    }
    qllc_node_set_attr_ints(g, n, "perm", cnt, perm);
    return QLLC_OK;
  }
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
  case QLLC_OP_SHAPE: {
    int64_t start = qllc_attr_int(n, "start", 0), end = qllc_attr_int(n, "end", x->rank);
    if (start < 0) start += x->rank;
    if (end < 0) end += x->rank;
    start = start < 0 ? 0 : start > x->rank ? x->rank : start;
    end = end < 0 ? 0 : end > x->rank ? x->rank : end;
    if (end < start) end = start;
    qllc_node_set_attr_int(g, n, "start", start);
    qllc_node_set_attr_int(g, n, "end", end);
    return QLLC_OK;
  }
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

static qllc_status infer_spatial(qllc_node *n, qllc_diag *diag) {
  const qllc_value *x = n->in[0];
  const int64_t *k, *s, *d, *p;
  int na = x->rank == 5 ? 3 : 2, o = na - (x->rank - 2);
  if (qllc_attr_ints(n, "kernel_shape", &k) != na || qllc_attr_ints(n, "strides", &s) != na ||
      qllc_attr_ints(n, "dilations", &d) != na || qllc_attr_ints(n, "pads", &p) != 2 * na)
    return FAIL(QLLC_ERR_INVALID, "kernel_shape, strides, dilations or pads of the wrong length");
  int64_t in[3], out[3];
  for (int i = 0; i < na; i++) in[i] = i < o ? 1 : x->dims[2 + i - o];
  for (int i = 0; i < na; i++) {
    int64_t ek, padded;
    if (k[i] <= 0 || s[i] <= 0 || d[i] <= 0) /* normalised already; checked again before dividing by a stride */
      return FAIL(QLLC_ERR_INVALID, "kernel_shape, strides and dilations must be positive");
    if (window_extent(k[i], n->op == QLLC_OP_AVGPOOL ? 1 : d[i], &ek))
      return FAIL(QLLC_ERR_INVALID, "kernel_shape %lld with dilation %lld overflows", (long long)k[i], (long long)d[i]);
    if (padded_extent(in[i], p[i], p[i + na], &padded))
      return FAIL(QLLC_ERR_INVALID, "pads %lld, %lld overflow the input size", (long long)p[i], (long long)p[i + na]);
    int64_t span = padded - ek;
    if (span < 0) return FAIL(QLLC_ERR_INVALID, "kernel (%lld) larger than the padded input (%lld)", (long long)ek,
                              (long long)padded);
    out[i] = span / s[i] + 1;
  }
  int64_t dims[5] = {x->dims[0], x->dims[1]};
  for (int i = o; i < na; i++) dims[2 + i - o] = out[i];
  int is_conv = n->op == QLLC_OP_CONV || n->op == QLLC_OP_CONV_INTEGER || n->op == QLLC_OP_QLINEAR_CONV;
  int wi = n->op == QLLC_OP_QLINEAR_CONV ? 3 : 1, bi = n->op == QLLC_OP_QLINEAR_CONV ? 8 : n->op == QLLC_OP_CONV ? 2 : -1;
  if (is_conv) {
    const qllc_value *w = n->in[wi];
    int64_t group = qllc_attr_int(n, "group", 1);
    char tx[128], tw[128];
    if (w->rank != x->rank) {
      shape_str(x, tx, sizeof tx), shape_str(w, tw, sizeof tw);
      return FAIL(QLLC_ERR_INVALID, "weight %s does not match input %s", tw, tx);
    }
    if (group <= 0 || x->dims[1] != w->dims[1] * group || w->dims[0] % group) {
      shape_str(x, tx, sizeof tx), shape_str(w, tw, sizeof tw);
      return FAIL(QLLC_ERR_INVALID, "input channels %lld do not match weight %s with group %lld (input %s)",
                  (long long)x->dims[1], tw, (long long)group, tx);
    }
    for (int i = 0; i < x->rank - 2; i++)
      if (w->dims[2 + i] != k[o + i]) return FAIL(QLLC_ERR_INVALID, "kernel_shape does not match the weight");
    if (bi > 0 && n->n_in > bi && n->in[bi] && (qllc_value_numel(n->in[bi]) != w->dims[0] || n->in[bi]->rank != 1))
      return FAIL(QLLC_ERR_INVALID, "bias has %lld elements for %lld output channels", (long long)qllc_value_numel(n->in[bi]),
                  (long long)w->dims[0]);
    dims[1] = w->dims[0];
  }
  set_out(n, 0, x->elem, x->rank, dims);
  if (n->op == QLLC_OP_MAXPOOL && n->n_out > 1 && n->out[1]) set_out(n, 1, QLLC_ELEM_I64, x->rank, dims); /* Indices */
  return QLLC_OK;
}

static qllc_status infer_matmul(qllc_node *n, qllc_diag *diag) {
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

/* ---- pre-quantized ops (issue 6) -------------------------------------------------------------------
 * QuantizeLinear / DequantizeLinear made by the importer have their scale (input 1) and optional zero
 * point (input 2); the quantizer's own (one input) carry their parameters on the integer value and are
 * typed by the quantizer, so they are left alone here. The integer value a QuantizeLinear (or a
 * QLinearConv / QLinearMatMul) makes gets the model's parameters when they are constants: per tensor
 * in value->scale/zero_point, per axis in q_axis/q_scales/q_zero_points. Parameters computed at run
 * time (graph inputs, DynamicQuantizeLinear) leave the placeholder scale 1, zero point 0: such a value
 * is only read by the run-time-parameter kernels of libjit/bitcode/kernels_qdq.h. */

static int is_q8(qllc_elem e) { return e == QLLC_ELEM_I8 || e == QLLC_ELEM_U8; }

/* Sets y's quantization from a scale and zero point (either may be NULL or non-constant). `axis` is
 * the normalised per-axis channel dimension, used when the scale has more than one element. */
static qllc_status set_qparams(qllc_graph *g, qllc_node *n, qllc_value *y, const qllc_value *s, const qllc_value *z,
                               int64_t axis, qllc_diag *diag) {
  y->scale = 1.0f, y->zero_point = 0, y->q_axis = -1, y->q_count = 0, y->q_scales = NULL, y->q_zero_points = NULL;
  if (!s || !s->data || s->elem != QLLC_ELEM_F32 || (z && !z->data)) return QLLC_OK; /* run time */
  int64_t cnt = qllc_value_numel(s);
  const float *sv = s->data;
  for (int64_t i = 0; i < cnt; i++)
    if (!(sv[i] > 0.0f) || sv[i] == INFINITY)
      return FAIL(QLLC_ERR_INVALID, "scale '%s' has a non-positive or non-finite value %g", s->name, (double)sv[i]);
  int64_t zv[1];
  if (cnt == 1) {
    y->scale = sv[0];
    if (z && (qllc_value_numel(z) != 1 || qllc_value_ints(z, zv, 1) != 1))
      return FAIL(QLLC_ERR_INVALID, "zero point '%s' must have one element like its scale", z->name);
    y->zero_point = z ? (int32_t)zv[0] : 0;
    return QLLC_OK;
  }
  if (z && qllc_value_numel(z) != cnt)
    return FAIL(QLLC_ERR_INVALID, "zero point '%s' has %lld elements, its scale %lld", z->name,
                (long long)qllc_value_numel(z), (long long)cnt);
  y->q_axis = (int)axis;
  y->q_count = cnt;
  y->q_scales = qllc_arena_memdup(g->arena, sv, (size_t)cnt * sizeof(float));
  y->q_zero_points = qllc_arena_alloc(g->arena, (size_t)cnt * sizeof(int32_t));
  if (!y->q_scales || !y->q_zero_points) return FAIL(QLLC_ERR_NOMEM, "out of memory");
  for (int64_t i = 0; i < cnt; i++) {
    int32_t v = 0;
    if (z) v = z->elem == QLLC_ELEM_I8 ? ((const int8_t *)z->data)[i] : z->elem == QLLC_ELEM_U8 ? ((const uint8_t *)z->data)[i]
                                                                                             : ((const int32_t *)z->data)[i];
    y->q_zero_points[i] = v;
  }
  y->scale = y->q_scales[0], y->zero_point = y->q_zero_points[0];
  return QLLC_OK;
}

/* Checks a scale / zero point operand: a scalar or 1-D of 1 or `channels` elements (channels <= 0:
 * per tensor only); zero point of kind `ze` when ze is not COUNT. */
static qllc_status check_qparam(qllc_node *n, const qllc_value *v, const char *what, int64_t channels, int is_scale,
                                qllc_diag *diag) {
  if (!v) return QLLC_OK;
  int64_t cnt = qllc_value_numel(v);
  if (v->rank > 1 || (cnt != 1 && (channels <= 0 || cnt != channels)))
    return FAIL(QLLC_ERR_UNSUPPORTED, "%s '%s' has shape %s; qllc takes one value per tensor%s", what, v->name,
                v->rank ? "of rank >= 1" : "()", channels > 0 ? " or one per channel of the axis" : "");
  if (is_scale && v->elem != QLLC_ELEM_F32)
    return FAIL(QLLC_ERR_UNSUPPORTED, "%s '%s' is %s; only float scales are supported", what, v->name,
                qllc_elem_name((qllc_elem_kind)v->elem));
  return QLLC_OK;
}

static qllc_status infer_qop(qllc_graph *g, qllc_node *n, qllc_diag *diag) {
  qllc_value *x = n->in[0];
  qllc_status st;
  switch (n->op) {
  case QLLC_OP_QUANTIZE:
  case QLLC_OP_DEQUANTIZE: {
    if (n->n_in < 2) return QLLC_OK; /* the quantizer's own: typed by it */
    int quant = n->op == QLLC_OP_QUANTIZE;
    const qllc_value *s = n->in[1], *z = n->n_in > 2 ? n->in[2] : NULL;
    if (!s) return FAIL(QLLC_ERR_INVALID, "input %s is missing", quant ? "y_scale" : "x_scale"); /* named "" */
    int64_t axis = 1;
    int has_axis = qllc_node_attr(n, "axis") != NULL;
    if (has_axis && g->opset < 13) return FAIL(QLLC_ERR_INVALID, "attribute axis needs opset 13 (model has %lld)", (long long)g->opset);
    axis = qllc_attr_int(n, "axis", 1);
    int64_t cnt = qllc_value_numel(s);
    if (cnt > 1 || (s->rank == 1 && !has_axis && x->rank > 1)) {
      if (norm_axis(axis, x->rank, &axis)) return FAIL(QLLC_ERR_INVALID, "axis %lld out of range for rank %d", (long long)axis, x->rank);
    } else {
      axis = x->rank > 1 ? 1 : 0;
    }
    int64_t ch = x->rank ? x->dims[axis] : 1;
    if ((st = check_qparam(n, s, quant ? "y_scale" : "x_scale", ch, 1, diag)) ||
        (st = check_qparam(n, z, quant ? "y_zero_point" : "x_zero_point", ch, 0, diag)))
      return st;
    if (z && qllc_value_numel(z) != cnt)
      return FAIL(QLLC_ERR_INVALID, "zero point '%s' and scale '%s' differ in size", z->name, s->name);
    qllc_node_set_attr_int(g, n, "axis", axis);
    if (quant) {
      qllc_elem e = z ? z->elem : QLLC_ELEM_U8;
      if (x->elem != QLLC_ELEM_F32) return FAIL(QLLC_ERR_UNSUPPORTED, "input '%s' is %s; QuantizeLinear takes float", x->name, qllc_elem_name((qllc_elem_kind)x->elem));
      if (!is_q8(e))
        return FAIL(QLLC_ERR_UNSUPPORTED, "QuantizeLinear to %s: opsets up to 17 quantize to int8 or uint8 only (int16 came with opset 21, which qllc does not read)",
                    qllc_elem_name((qllc_elem_kind)e));
      set_out(n, 0, e, x->rank, x->dims);
      return set_qparams(g, n, n->out[0], s, z, axis, diag);
    }
    if (!is_q8(x->elem) && x->elem != QLLC_ELEM_I32)
      return FAIL(QLLC_ERR_UNSUPPORTED, "DequantizeLinear of %s (int8, uint8 and int32 are supported)", qllc_elem_name((qllc_elem_kind)x->elem));
    if (z && z->elem != x->elem) return FAIL(QLLC_ERR_INVALID, "zero point '%s' is not of the input's kind", z->name);
    if (x->elem == QLLC_ELEM_I32 && z && z->data) {
      int64_t zv[1];
      for (int64_t i = 0; i < qllc_value_numel(z); i++)
        if (((const int32_t *)z->data)[i] != 0) return FAIL(QLLC_ERR_INVALID, "an int32 input needs zero point 0");
      (void)zv;
    }
    set_out(n, 0, QLLC_ELEM_F32, x->rank, x->dims);
    return QLLC_OK;
  }
  case QLLC_OP_MATMUL_INTEGER:
  case QLLC_OP_QLINEAR_MATMUL: {
    int ql = n->op == QLLC_OP_QLINEAR_MATMUL;
    qllc_value *b = n->in[ql ? 3 : 1];
    if (!b) return FAIL(QLLC_ERR_INVALID, "input B is missing");
    if (!is_q8(x->elem) || !is_q8(b->elem)) return FAIL(QLLC_ERR_UNSUPPORTED, "operands must be int8 or uint8");
    qllc_value *save = n->in[1];
    n->in[1] = b;
    st = infer_matmul(n, diag);
    n->in[1] = save;
    if (st) return st;
    int64_t N = b->rank == 1 ? 1 : b->dims[b->rank - 1], M = x->rank == 1 ? 1 : x->dims[x->rank - 2];
    if (!ql) {
      if ((st = check_qparam(n, n->n_in > 2 ? n->in[2] : NULL, "a_zero_point", M, 0, diag)) ||
          (st = check_qparam(n, n->n_in > 3 ? n->in[3] : NULL, "b_zero_point", N, 0, diag)))
        return st;
      if ((n->n_in > 2 && n->in[2] && n->in[2]->elem != x->elem) || (n->n_in > 3 && n->in[3] && n->in[3]->elem != b->elem))
        return FAIL(QLLC_ERR_INVALID, "a zero point is not of its operand's kind");
      set_out(n, 0, QLLC_ELEM_I32, n->out[0]->rank, n->out[0]->dims);
      return QLLC_OK;
    }
    static const char *const names[] = {"a", "a_scale", "a_zero_point", "b", "b_scale", "b_zero_point", "y_scale", "y_zero_point"};
    for (int k = 0; k < 8; k++) {
      if (!n->in[k]) return FAIL(QLLC_ERR_INVALID, "input %s is missing", names[k]);
      if (k != 0 && k != 3 && (st = check_qparam(n, n->in[k], names[k], k >= 4 && k <= 5 ? N : 0, k == 1 || k == 4 || k == 6, diag))) return st;
    }
    if (n->in[2]->elem != x->elem || n->in[5]->elem != b->elem || !is_q8(n->in[7]->elem))
      return FAIL(QLLC_ERR_INVALID, "zero point kinds do not match their operands");
    set_out(n, 0, n->in[7]->elem, n->out[0]->rank, n->out[0]->dims);
    return set_qparams(g, n, n->out[0], n->in[6], n->in[7], 0, diag);
  }
  case QLLC_OP_CONV_INTEGER:
  case QLLC_OP_QLINEAR_CONV: {
    int ql = n->op == QLLC_OP_QLINEAR_CONV;
    qllc_value *w = n->in[ql ? 3 : 1];
    if (!w) return FAIL(QLLC_ERR_INVALID, "input w is missing");
    if (!is_q8(x->elem) || !is_q8(w->elem)) return FAIL(QLLC_ERR_UNSUPPORTED, "x and w must be int8 or uint8");
    if ((st = infer_spatial(n, diag))) return st;
    int64_t M = w->dims[0];
    if (!ql) {
      if ((st = check_qparam(n, n->n_in > 2 ? n->in[2] : NULL, "x_zero_point", 0, 0, diag)) ||
          (st = check_qparam(n, n->n_in > 3 ? n->in[3] : NULL, "w_zero_point", M, 0, diag)))
        return st;
      if ((n->n_in > 2 && n->in[2] && n->in[2]->elem != x->elem) || (n->n_in > 3 && n->in[3] && n->in[3]->elem != w->elem))
        return FAIL(QLLC_ERR_INVALID, "a zero point is not of its operand's kind");
      set_out(n, 0, QLLC_ELEM_I32, n->out[0]->rank, n->out[0]->dims);
      return QLLC_OK;
    }
    static const char *const names[] = {"x", "x_scale", "x_zero_point", "w", "w_scale", "w_zero_point", "y_scale", "y_zero_point"};
    for (int k = 0; k < 8; k++) {
      if (!n->in[k]) return FAIL(QLLC_ERR_INVALID, "input %s is missing", names[k]);
      if (k != 0 && k != 3 && (st = check_qparam(n, n->in[k], names[k], k >= 4 && k <= 5 ? M : 0, k == 1 || k == 4 || k == 6, diag))) return st;
    }
    if (n->in[2]->elem != x->elem || n->in[5]->elem != w->elem || !is_q8(n->in[7]->elem))
      return FAIL(QLLC_ERR_INVALID, "zero point kinds do not match their operands");
    if (n->n_in > 8 && n->in[8] && n->in[8]->elem != QLLC_ELEM_I32) return FAIL(QLLC_ERR_INVALID, "bias must be int32");
    set_out(n, 0, n->in[7]->elem, n->out[0]->rank, n->out[0]->dims);
    return set_qparams(g, n, n->out[0], n->in[6], n->in[7], 0, diag);
  }
  case QLLC_OP_DYNAMIC_QUANTIZE: {
    if (x->elem != QLLC_ELEM_F32) return FAIL(QLLC_ERR_INVALID, "input must be float");
    set_out(n, 0, QLLC_ELEM_U8, x->rank, x->dims);
    n->out[0]->scale = 1.0f, n->out[0]->zero_point = 0;
    if (n->n_out > 1) set_out(n, 1, QLLC_ELEM_F32, 0, NULL);
    if (n->n_out > 2 && n->out[2]) {
      set_out(n, 2, QLLC_ELEM_U8, 0, NULL);
      n->out[2]->scale = 1.0f, n->out[2]->zero_point = 0;
    }
    return QLLC_OK;
  }
  default:
    return FAIL(QLLC_ERR_INVALID, "not a quantized op");
  }
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
    return infer_spatial(n, diag);
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
    return infer_matmul(n, diag);
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
  case QLLC_OP_FLATTEN: {
    int64_t axis = qllc_attr_int(n, "axis", 1), a = 1, b = 1;
    for (int i = 0; i < x->rank; i++)
      if (qllc_mul_size(i < axis ? a : b, x->dims[i], i < axis ? &a : &b))
        return FAIL(QLLC_ERR_INVALID, "input %s has too many elements", x->name);
    dims[0] = a, dims[1] = b;
    set_out(n, 0, x->elem, 2, dims);
    return QLLC_OK;
  }
  case QLLC_OP_RESHAPE: {
    const int64_t *s;
    int cnt = qllc_attr_ints(n, "shape", &s);
    set_out(n, 0, x->elem, cnt, s);
    return QLLC_OK;
  }
  case QLLC_OP_TRANSPOSE: {
    const int64_t *perm;
    int cnt = qllc_attr_ints(n, "perm", &perm);
    for (int i = 0; i < cnt; i++) dims[i] = x->dims[perm[i]];
    set_out(n, 0, x->elem, cnt, dims);
    return QLLC_OK;
  }
  case QLLC_OP_CONCAT: {
    int64_t axis = qllc_attr_int(n, "axis", 0), sum = 0;
    for (int k = 0; k < n->n_in; k++) {
      const qllc_value *v = n->in[k];
      if (!v) return FAIL(QLLC_ERR_INVALID, "input %d is missing", k);
      int ok = v->rank == x->rank;
      for (int i = 0; ok && i < x->rank; i++) ok = i == axis || v->dims[i] == x->dims[i];
      if (!ok) return FAIL(QLLC_ERR_INVALID, "input %d %s does not match input 0 %s outside axis %lld", k,
                           qllc_type_str(v, t1, sizeof t1), qllc_type_str(x, t2, sizeof t2), (long long)axis);
      sum += v->dims[axis];
    }
    memcpy(dims, x->dims, sizeof dims);
    dims[axis] = sum;
    set_out(n, 0, x->elem, x->rank, dims);
    return QLLC_OK;
  }
  case QLLC_OP_SQUEEZE: {
    const int64_t *axes;
    int cnt = qllc_attr_ints(n, "axes", &axes), r = 0;
    for (int i = 0, j = 0; i < x->rank; i++) {
      if (j < cnt && axes[j] == i) {
        if (x->dims[i] != 1) return FAIL(QLLC_ERR_INVALID, "cannot squeeze axis %d of size %lld", i, (long long)x->dims[i]);
        j++;
        continue;
      }
      dims[r++] = x->dims[i];
    }
    set_out(n, 0, x->elem, r, dims);
    return QLLC_OK;
  }
  case QLLC_OP_UNSQUEEZE: {
    const int64_t *axes;
    int cnt = qllc_attr_ints(n, "axes", &axes), r = x->rank + cnt;
    for (int i = 0, j = 0, s = 0; i < r; i++) dims[i] = j < cnt && axes[j] == i ? (j++, 1) : x->dims[s++];
    set_out(n, 0, x->elem, r, dims);
    return QLLC_OK;
  }
  case QLLC_OP_PAD: {
    const int64_t *p;
    qllc_attr_ints(n, "pads", &p);
    for (int i = 0; i < x->rank; i++)
      if (padded_extent(x->dims[i], p[i], p[i + x->rank], &dims[i]))
        return FAIL(QLLC_ERR_INVALID, "pads %lld, %lld overflow axis %d", (long long)p[i], (long long)p[i + x->rank], i);
    set_out(n, 0, x->elem, x->rank, dims);
    return QLLC_OK;
  }
  case QLLC_OP_CONSTANT: {
    const qllc_attr *a = NULL;
    for (int i = 0; i < n->n_attr && !a; i++) a = &n->attrs[i];
    if (!a) return FAIL(QLLC_ERR_INVALID, "Constant without a value");
    switch (a->kind) {
    case QLLC_ATTR_TENSOR: set_out(n, 0, a->t->elem, a->t->rank, a->t->dims); break;
    case QLLC_ATTR_FLOAT: set_out(n, 0, QLLC_ELEM_F32, 0, dims); break;
    case QLLC_ATTR_INT: set_out(n, 0, QLLC_ELEM_I64, 0, dims); break;
    case QLLC_ATTR_FLOATS: dims[0] = a->n; set_out(n, 0, QLLC_ELEM_F32, 1, dims); break;
    case QLLC_ATTR_INTS: dims[0] = a->n; set_out(n, 0, QLLC_ELEM_I64, 1, dims); break;
    default: return FAIL(QLLC_ERR_UNSUPPORTED, "Constant attribute '%s' is not supported", a->name);
    }
    return QLLC_OK;
  }
  case QLLC_OP_SHAPE:
    dims[0] = qllc_attr_int(n, "end", x->rank) - qllc_attr_int(n, "start", 0);
    set_out(n, 0, QLLC_ELEM_I64, 1, dims);
    return QLLC_OK;
  case QLLC_OP_GATHER: {
    const qllc_value *idx = n->in[1];
    int64_t axis = qllc_attr_int(n, "axis", 0);
    int r = 0;
    if (x->rank + idx->rank - 1 > QLLC_MAX_RANK) return FAIL(QLLC_ERR_UNSUPPORTED, "rank above %d", QLLC_MAX_RANK);
    for (int i = 0; i < axis; i++) dims[r++] = x->dims[i];
    for (int i = 0; i < idx->rank; i++) dims[r++] = idx->dims[i];
    for (int i = (int)axis + 1; i < x->rank; i++) dims[r++] = x->dims[i];
    set_out(n, 0, x->elem, r, dims);
    return QLLC_OK;
  }
  case QLLC_OP_CAST_LIKE: /* qllc_normalize_node made it a Cast above */
  case QLLC_OP_CAST: {
    int ok;
    qllc_elem e = onnx_cast_elem(qllc_attr_int(n, "to", 1), &ok);
    if (!ok) return FAIL(QLLC_ERR_UNSUPPORTED, "Cast to ONNX type %lld is not supported", (long long)qllc_attr_int(n, "to", 1));
    set_out(n, 0, e, x->rank, x->dims);
    return QLLC_OK;
  }
  case QLLC_OP_SLICE: {
    /* starts/ends/axes/steps: attributes (opset < 10) or constant inputs 1..4 */
    int64_t starts[QLLC_MAX_RANK], ends[QLLC_MAX_RANK], axes[QLLC_MAX_RANK], steps[QLLC_MAX_RANK];
    int ns, ne, na = -1, nst = -1;
    const int64_t *a;
    if (n->n_in > 1) {
      ns = qllc_value_ints(n->in[1], starts, QLLC_MAX_RANK);
      ne = n->n_in > 2 ? qllc_value_ints(n->in[2], ends, QLLC_MAX_RANK) : -1;
      if (n->n_in > 3 && n->in[3] && (na = qllc_value_ints(n->in[3], axes, QLLC_MAX_RANK)) < 0) ns = -1;
      if (n->n_in > 4 && n->in[4] && (nst = qllc_value_ints(n->in[4], steps, QLLC_MAX_RANK)) < 0) ns = -1;
      if (ns < 0 || ne < 0) return FAIL(QLLC_ERR_UNSUPPORTED, "Slice with run-time starts/ends/axes/steps is not supported");
    } else {
      /* attributes longer than the rank limit are refused before they are copied */
      if (qllc_attr_ints(n, "starts", &a) > QLLC_MAX_RANK || qllc_attr_ints(n, "ends", &a) > QLLC_MAX_RANK ||
          qllc_attr_ints(n, "axes", &a) > QLLC_MAX_RANK)
        return FAIL(QLLC_ERR_INVALID, "starts/ends/axes have more than %d entries", QLLC_MAX_RANK);
      if ((ns = qllc_attr_ints(n, "starts", &a)) > 0) memcpy(starts, a, sizeof *a * (size_t)ns);
      if ((ne = qllc_attr_ints(n, "ends", &a)) > 0) memcpy(ends, a, sizeof *a * (size_t)ne);
      if (qllc_node_attr(n, "axes") && (na = qllc_attr_ints(n, "axes", &a)) > 0) memcpy(axes, a, sizeof *a * (size_t)na);
    }
    if (ns != ne || (na >= 0 && na != ns) || (nst >= 0 && nst != ns)) return FAIL(QLLC_ERR_INVALID, "starts/ends/axes/steps differ in length");
    int64_t st_[QLLC_MAX_RANK], sp_[QLLC_MAX_RANK];
    memcpy(dims, x->dims, sizeof dims);
    for (int i = 0; i < x->rank; i++) st_[i] = 0, sp_[i] = 1;
    for (int i = 0; i < ns; i++) {
      int64_t ax = na >= 0 ? axes[i] : i, step = nst >= 0 ? steps[i] : 1;
      if (norm_axis(ax, x->rank, &ax) || step == 0) return FAIL(QLLC_ERR_INVALID, "bad axis or step");
      int64_t d = x->dims[ax], s = starts[i], e = ends[i];
      if (s < 0) s += d;
      if (e < 0) e += d;
      if (step > 0) {
        s = s < 0 ? 0 : s > d ? d : s;
        e = e < 0 ? 0 : e > d ? d : e;
        dims[ax] = e > s ? 1 + (e - s - 1) / step : 0; /* ceil((e - s) / step), no overflow for a huge step */
      } else {
        s = s < 0 ? -1 : s > d - 1 ? d - 1 : s;
        e = e < -1 ? -1 : e > d - 1 ? d - 1 : e;
        dims[ax] = s > e ? 1 + (int64_t)((uint64_t)(s - e - 1) / (0 - (uint64_t)step)) : 0; /* -step may not fit */
      }
      st_[ax] = s, sp_[ax] = step;
    }
    for (int i = 0; i < x->rank; i++)
      if (dims[i] <= 0) return FAIL(QLLC_ERR_UNSUPPORTED, "Slice producing an empty tensor is not supported");
    /* record the resolved form for the evaluator */
    qllc_node_set_attr_ints(g, n, "q_starts", x->rank, st_);
    qllc_node_set_attr_ints(g, n, "q_steps", x->rank, sp_);
    set_out(n, 0, x->elem, x->rank, dims);
    return QLLC_OK;
  }
  case QLLC_OP_CONSTANT_OF_SHAPE: {
    int cnt = qllc_value_ints(x, dims, QLLC_MAX_RANK);
    if (cnt < 0) return FAIL(QLLC_ERR_UNSUPPORTED, "ConstantOfShape with a run-time shape is not supported");
    for (int i = 0; i < cnt; i++)
      if (dims[i] <= 0) return FAIL(QLLC_ERR_UNSUPPORTED, "ConstantOfShape producing an empty tensor is not supported");
    const qllc_attr *a = qllc_node_attr(n, "value");
    set_out(n, 0, a && a->kind == QLLC_ATTR_TENSOR ? a->t->elem : QLLC_ELEM_F32, cnt, dims);
    return QLLC_OK;
  }
  case QLLC_OP_QUANTIZE:
  case QLLC_OP_DEQUANTIZE:
  case QLLC_OP_QLINEAR_CONV:
  case QLLC_OP_QLINEAR_MATMUL:
  case QLLC_OP_MATMUL_INTEGER:
  case QLLC_OP_CONV_INTEGER:
  case QLLC_OP_DYNAMIC_QUANTIZE:
    return infer_qop(g, n, diag);
  case QLLC_OP_ERF: case QLLC_OP_SQRT: case QLLC_OP_EXP: case QLLC_OP_NEG: case QLLC_OP_RECIPROCAL:
  case QLLC_OP_POW: case QLLC_OP_HARD_SIGMOID: case QLLC_OP_HARD_SWISH: case QLLC_OP_GELU: case QLLC_OP_LAYER_NORM:
  case QLLC_OP_REDUCE_MEAN: case QLLC_OP_REDUCE_SUM: case QLLC_OP_REDUCE_MAX: case QLLC_OP_PRELU: case QLLC_OP_SPLIT:
  case QLLC_OP_EXPAND: case QLLC_OP_RESIZE: case QLLC_OP_UPSAMPLE: case QLLC_OP_MAX: case QLLC_OP_MIN:
  case QLLC_OP_MEAN: case QLLC_OP_CONV_TRANSPOSE: case QLLC_OP_WHERE:
    return infer_ext(g, n, diag); /* issue 15 */
  case QLLC_OP_CUSTOM: /* typed by the importer from the model's value_info; nothing to infer */
    return QLLC_OK;
  case QLLC_OP_COUNT:
    break;
  }
  return FAIL(QLLC_ERR_INVALID, "no shape inference for this op");
}
