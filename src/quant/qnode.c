/* src/quant/qnode.c: building the per-node record of a fused layer (docs/numerics.md: the fused bias).
 *
 * Order of decisions, each made once here so kernels only apply them:
 *   1. weight scales per output channel (or per tensor), optionally widened so the bias fits int32;
 *   2. weights quantized symmetric (z_w = 0), kept in [channels][K], the scalar kernels' layout;
 *   3. bias quantized with s_b = s_x * s_w[c] and the input zero point folded in
 *      (int32 for 8-bit inputs, int64 for int16 inputs);
 *   4. M[c] = s_x * s_w[c] / s_y as (m[c], n[c]);
 *   5. the fused activation as an integer clamp in the output domain.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "quant.h"

void qllc_quant_act_clamp(float act_lo, float act_hi, const qllc_qparams *out, int32_t *qlo, int32_t *qhi) {
  int32_t qmin, qmax;
  qllc_quant_range(out->elem, 0, &qmin, &qmax);
  /* NaN bounds mean "none" */
  *qlo = act_lo == act_lo ? qllc_quantize_one(act_lo, out->scale, out->zero_point, qmin, qmax) : qmin;
  *qhi = act_hi == act_hi ? qllc_quantize_one(act_hi, out->scale, out->zero_point, qmin, qmax) : qmax;
  if (*qlo > *qhi) *qlo = *qhi; /* an empty clip range [lo > hi]: ONNX Clip gives hi */
}

/* Re-issues the diagnostic of a helper with the node's name attached. */
static qllc_status at_node(qllc_diag *diag, qllc_status st, const char *node, const char *prefix) {
  if (!diag) return st;
  char msg[sizeof diag->message];
  snprintf(msg, sizeof msg, "%s", diag->message);
  return qllc_fail(diag, st, node, "%s%s", prefix, msg);
}

qllc_status qllc_qnode_fused(qllc_arena *arena, const char *node, const qllc_qparams *x, const qllc_qparams *y,
                             const float *w, int64_t channels, int64_t K, const float *b, qllc_elem w_elem,
                             int per_tensor, int power2, int widen_for_bias, float act_lo, float act_hi,
                             qllc_qnode **out, qllc_diag *diag) {
  *out = NULL;
  if (channels <= 0 || K <= 0)
    return qllc_fail(diag, QLLC_ERR_INVALID, node, "bad layer shape: %lld channels of %lld weights",
                     (long long)channels, (long long)K);
  if (w_elem != QLLC_ELEM_I8 && w_elem != QLLC_ELEM_I16)
    return qllc_fail(diag, QLLC_ERR_INVALID, node, "weights must be i8 or i16");
  int32_t qmin, qmax;
  if (qllc_quant_range(x->elem, 0, &qmin, &qmax) || qllc_quant_range(y->elem, 0, &qmin, &qmax))
    return qllc_fail(diag, QLLC_ERR_INVALID, node, "input and output must be i8, u8 or i16");
  if (x->elem == QLLC_ELEM_I16 ? y->elem != QLLC_ELEM_I16 : (y->elem == QLLC_ELEM_I16 || w_elem != QLLC_ELEM_I8))
    return qllc_fail(diag, QLLC_ERR_UNSUPPORTED, node, "no fused kernel for %s x %s -> %s", qllc_elem_name((qllc_elem_kind)x->elem),
                     qllc_elem_name((qllc_elem_kind)w_elem), qllc_elem_name((qllc_elem_kind)y->elem));
  qllc_qnode *q = qllc_arena_alloc(arena, sizeof *q);
  size_t wsize = w_elem == QLLC_ELEM_I8 ? 1 : 2;
  qllc_elem acc = x->elem == QLLC_ELEM_I16 ? QLLC_ELEM_I64 : QLLC_ELEM_I32;
  size_t bsize = acc == QLLC_ELEM_I64 ? 8 : 4;
  float *minsc = NULL;
  if (q) {
    q->bias = qllc_arena_alloc(arena, bsize * (size_t)channels);
    q->qbias = qllc_arena_alloc(arena, 4 * (size_t)channels);
    q->m = qllc_arena_alloc(arena, 4 * (size_t)channels);
    q->n = qllc_arena_alloc(arena, 4 * (size_t)channels);
    q->w_scales = qllc_arena_alloc(arena, 4 * (size_t)channels);
    q->w_packed = qllc_arena_alloc(arena, wsize * (size_t)(channels * K));
    if (widen_for_bias && b) minsc = qllc_arena_alloc(arena, 4 * (size_t)channels);
  }
  if (!q || !q->bias || !q->qbias || !q->m || !q->n || !q->w_scales || !q->w_packed || (widen_for_bias && b && !minsc))
    return qllc_fail(diag, QLLC_ERR_NOMEM, node, "out of memory quantizing the layer");
  if (minsc)
    for (int64_t c = 0; c < channels; c++) minsc[c] = qllc_bias_min_weight_scale(b[c], x->scale);
  qllc_status st = qllc_quantize_weights(w, channels, K, w_elem, per_tensor, power2, minsc, q->w_scales, q->w_packed, diag);
  if (st != QLLC_OK) return at_node(diag, st, node, "");
  if (per_tensor)
    for (int64_t c = 1; c < channels; c++) q->w_scales[c] = q->w_scales[0];
  st = qllc_quantize_bias(b, channels, K, x->scale, q->w_scales, channels, x->zero_point, q->w_packed, w_elem, acc,
                          q->bias, q->qbias, &q->bias_report, diag);
  if (st != QLLC_OK) return at_node(diag, st, node, "");
  for (int64_t c = 0; c < channels; c++) {
    qllc_requant r;
    st = qllc_requant_make((double)x->scale * (double)q->w_scales[c] / (double)y->scale, &r, diag);
    if (st != QLLC_OK) {
      char prefix[64];
      snprintf(prefix, sizeof prefix, "output channel %lld: ", (long long)c);
      return at_node(diag, st, node, prefix);
    }
    q->m[c] = r.m;
    q->n[c] = r.n;
  }
  q->kind = QLLC_QK_FUSED;
  q->in_elem = x->elem;
  q->w_elem = w_elem;
  q->out_elem = y->elem;
  q->acc_elem = acc;
  q->z_x = x->zero_point;
  q->z_y = y->zero_point;
  q->channels = channels;
  qllc_quant_act_clamp(act_lo, act_hi, y, &q->act_lo, &q->act_hi);
  *out = q;
  return QLLC_OK;
}
