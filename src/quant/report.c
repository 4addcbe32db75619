/* src/quant/report.c: the precision report (quant.h section 7), derived from a quantized graph only
 * (values' types and the qllc_qnode records), so `qllc info`, `qllc compile --verbose` and the bundle
 * header's comment block all print the same thing.
 *
 * One line per node, columns aligned:
 *   conv1  Conv  i8 x i8 -> i8  acc i32  bias i32  x s=0.0039216 z=-128  y s=0.021 z=-128  w per-channel(16)
 *   add1   Add   i8 -> i8  a s=.. z=..  b s=.. z=..  y s=.. z=..
 *   sm     Softmax  float  (kept in float by --keep-float Softmax)
 *   x:quantize  QuantizeLinear  f32 -> i8  y s=.. z=..
 * then one line per clipped bias:
 *   bias clipped: node 'fc1': 3 channels, worst 3.1e+09 (float 12.5)
 * and a one-line summary. Scales are printed with %.8g, zero points exactly.
 */
#include <math.h>
#include <string.h>

#include "quant.h"

static const char *ename(qllc_elem e) { return qllc_elem_name((qllc_elem_kind)e); }

static const char *shown_op(const qllc_node *n) {
  const char *op = n->op_type ? n->op_type : qllc_op_name(n->op);
  return strncmp(op, "qllc.", 5) ? op : op + 5; /* "qllc.FullyConnected" -> "FullyConnected" */
}

static void params(FILE *f, const char *label, const qllc_value *v) {
  if (!v) return;
  if (v->elem == QLLC_ELEM_F32) fprintf(f, "  %s f32", label);
  else fprintf(f, "  %s s=%.8g z=%d", label, (double)v->scale, (int)v->zero_point);
}

/* What a quantized node computes, e.g. "i8 x i8 -> i8  acc i32  bias i32". */
static void precision(FILE *f, const qllc_node *n, const qllc_qnode *q) {
  if (q->kind == QLLC_QK_FUSED) {
    fprintf(f, "%s x %s -> %s  acc %s  bias i32", ename(q->in_elem), ename(q->w_elem), ename(q->out_elem),
            ename(q->acc_elem));
    return;
  }
  if (q->kind == QLLC_QK_MATMUL) {
    fprintf(f, "%s x %s -> %s  acc %s", ename(q->in_elem), ename(q->w_elem), ename(q->out_elem), ename(q->acc_elem));
    return;
  }
  fprintf(f, "%s -> %s", ename(q->in_elem), ename(q->out_elem));
  (void)n;
}

static const char *kind_name(qllc_qkind k) {
  switch (k) {
  case QLLC_QK_FUSED: return "fused";
  case QLLC_QK_MATMUL: return "matmul";
  case QLLC_QK_RESCALE: return "rescale";
  case QLLC_QK_TABLE: return "table";
  case QLLC_QK_SOFTMAX: return "softmax";
  case QLLC_QK_SAME: return "same";
  case QLLC_QK_CUSTOM: return "custom";
  case QLLC_QK_LAYERNORM: return "layernorm";
  default: return "none";
  }
}

/* Channels whose weight scale was raised above max |w| / qmax so that the bias fits int32 (the
 * quantizer's widen_for_bias, issue 4's way out of bias saturation; it costs weight resolution on those
 * channels). Read from the f32 weights the fused node still has as its input 1. A power2 scale is up
 * to 2x its natural value without being widened. */
static int64_t widened(const qllc_node *n, const qllc_qnode *q) {
  const qllc_value *w = n->n_in > 1 ? n->in[1] : NULL;
  if (!w || !w->data || w->elem != QLLC_ELEM_F32 || !q->w_scales || q->channels < 1) return 0;
  int64_t numel = qllc_value_numel(w), C = q->channels, K = numel / C;
  if (K < 1 || K * C != numel) return 0;
  double qmax = q->w_elem == QLLC_ELEM_I16 ? 32767.0 : 127.0;
  int per_tensor = 1;
  for (int64_t c = 1; c < C; c++) per_tensor &= q->w_scales[c] == q->w_scales[0];
  const float *d = w->data;
  double all = 0;
  if (per_tensor)
    for (int64_t i = 0; i < numel; i++) all = fmax(all, fabs((double)d[i]));
  int64_t count = 0;
  for (int64_t c = 0; c < C; c++) {
    double amax = all;
    if (!per_tensor)
      for (int64_t k = 0; k < K; k++) amax = fmax(amax, fabs((double)d[c * K + k]));
    double natural = amax / qmax, s = q->w_scales[c];
    if (natural == 0) continue;
    int e;
    int pow2 = frexp(s, &e) == 0.5;
    if (s > natural * (pow2 ? 2.0 : 1.0) * (1 + 1e-6)) count++;
  }
  return per_tensor && count ? C : count;
}

/* The integer ops of the ONNX standard a pre-quantized model may use as they are (lowered by
 * lower_qdq.c when the QDQ pass did not turn them into fused records). */
static int onnx_integer_op(const qllc_node *n) {
  switch (n->op) {
  case QLLC_OP_QLINEAR_CONV: case QLLC_OP_QLINEAR_MATMUL: case QLLC_OP_MATMUL_INTEGER: case QLLC_OP_CONV_INTEGER:
  case QLLC_OP_DYNAMIC_QUANTIZE:
    return 1;
  default:
    return 0;
  }
}

/* "u8 x i8 -> u8  run-time requantization (float, as onnxruntime)" and the like. */
static void integer_op(FILE *f, const qllc_node *n) {
  if (n->op == QLLC_OP_DYNAMIC_QUANTIZE) {
    fprintf(f, "f32 -> u8  scale and zero point computed at run time");
    return;
  }
  int ql = n->op == QLLC_OP_QLINEAR_CONV || n->op == QLLC_OP_QLINEAR_MATMUL;
  const qllc_value *a = n->in[0], *b = n->n_in > (ql ? 3 : 1) ? n->in[ql ? 3 : 1] : NULL, *y = n->out[0];
  fprintf(f, "%s x %s -> %s  acc i32", ename(a->elem), b ? ename(b->elem) : "?", ename(y->elem));
  if (ql) fputs("  requantized at run time in float (parameters not all constant)", f);
  else fputs("  int32 result, no requantization", f);
}

/* The clamp, when narrower than the output type's range. */
static void clamp(FILE *f, const qllc_qnode *q) {
  int32_t qmin, qmax;
  if (qllc_quant_range(q->out_elem, 0, &qmin, &qmax)) return;
  if (q->act_lo > qmin || q->act_hi < qmax) fprintf(f, "  clamp [%d, %d]", (int)q->act_lo, (int)q->act_hi);
}

int qllc_quant_report_print(const qllc_graph *g, FILE *f, const char *prefix) {
  if (!prefix) prefix = "";
  int wname = 4, wop = 2;
  for (int i = 0; i < g->n_nodes; i++) {
    const qllc_node *n = g->nodes[i];
    if (n->dead) continue;
    int a = (int)strlen(n->name), b = (int)strlen(shown_op(n));
    if (a > wname) wname = a;
    if (b > wop) wop = b;
  }
  if (wname > 40) wname = 40;
  int n_quant = 0, n_float = 0, n_qdq = 0, n_clipped = 0;
  int has_i16 = 0, has_8 = 0;
  fprintf(f, "%sprecision report:\n", prefix);
  for (int i = 0; i < g->n_nodes; i++) {
    const qllc_node *n = g->nodes[i];
    if (n->dead) continue;
    fprintf(f, "%s  %-*s  %-*s  ", prefix, wname, n->name, wop, shown_op(n));
    const qllc_qnode *q = n->quant;
    if (n->op == QLLC_OP_QUANTIZE || n->op == QLLC_OP_DEQUANTIZE) {
      n_qdq++;
      const qllc_value *x = n->in[0], *y = n->out[0];
      fprintf(f, "%s -> %s", ename(x->elem), ename(y->elem));
      params(f, n->op == QLLC_OP_QUANTIZE ? "y" : "x", n->op == QLLC_OP_QUANTIZE ? y : x);
    } else if (!q && !n->keep_float && onnx_integer_op(n)) {
      n_quant++;
      has_8 = 1;
      integer_op(f, n);
    } else if (n->keep_float || !q) {
      n_float++;
      fprintf(f, "float  (%s)", n->float_reason ? n->float_reason : "not quantized");
    } else {
      n_quant++;
      if (q->in_elem == QLLC_ELEM_I16) has_i16 = 1;
      else has_8 = 1;
      precision(f, n, q);
      fprintf(f, "  %s", kind_name(q->kind));
      int nd = q->kind == QLLC_QK_FUSED ? 1 : q->n_inputs > 0 ? q->n_inputs : 1;
      for (int k = 0; k < nd && k < n->n_in; k++) {
        char label[16];
        if (nd == 1) snprintf(label, sizeof label, "x");
        else if (nd == 2) snprintf(label, sizeof label, "%s", k ? "b" : "a");
        else snprintf(label, sizeof label, "x%d", k);
        params(f, label, n->in[k]);
      }
      params(f, "y", n->out[0]);
      if (q->kind == QLLC_QK_FUSED) {
        int per_tensor = q->channels > 1;
        for (int64_t c = 1; c < q->channels; c++) per_tensor &= q->w_scales[c] == q->w_scales[0];
        if (per_tensor || q->channels == 1)
          fprintf(f, "  w per-tensor s=%.8g", q->w_scales ? (double)q->w_scales[0] : 0.0);
        else
          fprintf(f, "  w per-channel(%lld)", (long long)q->channels);
        int64_t wid = widened(n, q);
        if (wid) fprintf(f, "  w widened for the bias in %lld channel%s", (long long)wid, wid == 1 ? "" : "s");
        if (q->bias_report.n_clipped) fputs("  BIAS CLIPPED", f);
      }
      if (n->op == QLLC_OP_PAD && q->z_x != q->z_y) fprintf(f, "  pad %d", (int)q->z_x);
      clamp(f, q);
    }
    fputc('\n', f);
  }
  for (int i = 0; i < g->n_nodes; i++) {
    const qllc_node *n = g->nodes[i];
    const qllc_qnode *q = n->quant;
    if (n->dead || n->keep_float || !q || q->kind != QLLC_QK_FUSED || !q->bias_report.n_clipped) continue;
    n_clipped++;
    const qllc_bias_report *r = &q->bias_report;
    fprintf(f, "%sbias clipped: node '%s': %lld channel%s, worst %.4g at channel %lld (float %.6g); int32 holds "
               "+-2.1e+09\n",
            prefix, n->name, (long long)r->n_clipped, r->n_clipped == 1 ? "" : "s", r->worst_value,
            (long long)r->worst_channel, (double)r->worst_real);
  }
  fprintf(f, "%ssummary: %d node%s quantized (%s), %d in float, %d quantize/dequantize, %d clipped bias%s\n", prefix,
          n_quant, n_quant == 1 ? "" : "s",
          has_i16 && has_8 ? "int8 and int16" : has_i16 ? "int16" : has_8 ? "int8" : "none", n_float, n_qdq,
          n_clipped, n_clipped == 1 ? "" : "es");
  return n_float;
}

int qllc_graph_is_quantized(const qllc_graph *g) {
  for (int i = 0; i < g->n_nodes; i++) {
    const qllc_node *n = g->nodes[i];
    if (n->dead) continue;
    if (n->quant || n->keep_float || n->op == QLLC_OP_QUANTIZE || n->op == QLLC_OP_DEQUANTIZE || onnx_integer_op(n))
      return 1;
  }
  return 0;
}
