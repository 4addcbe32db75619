/* src/ir/infer_ext.c: normalisation and shape inference of the transformer and mobile ops (issue 15).
 *
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
#include <math.h>
#include <string.h>

#include "ir/infer_internal.h"

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
      double d = floor((double)x->dims[i] * (double)sc[i]);
      if (!(d < 0x1p62)) /* checked before the conversion (an inf or 1e39 would be undefined) */
        return FAIL(QLLC_ERR_INVALID, "scale %g makes an output dimension of %g", (double)sc[i], d);
      od[i] = (int64_t)d;
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

qllc_status qllc_norm_ext(qllc_graph *g, qllc_node *n, qllc_diag *diag) {
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
    if (!x->data && !(e == 0.5f || e == -0.5f || (e >= -16 && e <= 16 && e == (float)(int)e)))
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
    if ((st = qllc_norm_axes(g, n, x->rank, &cnt, axes, diag))) return st;
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

qllc_status qllc_infer_ext(qllc_graph *g, qllc_node *n, qllc_diag *diag) {
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

