/* src/ir/infer_spatial.c: normalisation and shape inference of the spatial ops: Conv, MaxPool,
 * AveragePool (1-D, 2-D and 3-D; the normalised forms are listed in infer.c), also used for the window
 * of ConvInteger and QLinearConv (infer_quant.c). */
#include <string.h>

#include "ir/infer_internal.h"

/* (k - 1) * d + 1, the extent of a dilated window; -1 on overflow (k, d >= 1). */
static int window_extent(int64_t k, int64_t d, int64_t *ek) {
  return qllc_mul_size(k - 1, d, ek) || qllc_add_size(*ek, 1, ek) ? -1 : 0;
}

static void shape_str(const qllc_value *v, char *buf, size_t size) { qllc_type_str(v, buf, size); }

qllc_status qllc_norm_spatial(qllc_graph *g, qllc_node *n, qllc_diag *diag) {
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

qllc_status qllc_infer_spatial(qllc_node *n, qllc_diag *diag) {
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

