/* src/quant/requant.c: integer-only requantization (M = m * 2^-n) and the fused int32 bias.
 *
 * Requantization parameters are computed here once, at compile time, and passed to kernels as
 * constants; qllc_requant_apply is the reference every kernel mirrors bit for bit.
 *
 * Overflow bounds (why the widths are what they are):
 *  - int8 layers, int32 acc: the reference product acc * m is below 2^31 * 2^31 = 2^62; adding 2^61
 *    (n <= 62) stays below 2^63, so int64 is exact. The accumulator itself stays in int32 while
 *    |bias'| + K * 128 * 127 < 2^31 (uint8 inputs: 255 * 127).
 *  - int16 layers (and 16x8), int64 acc: each product |q_x * q_w| <= 32768 * 32767 < 2^30, the
 *    folded bias is below 2^31 + 2^15 * K * 2^15, so acc fits int64 for any K < 2^32. acc * m needs
 *    up to 63 + 31 = 94 bits plus sign: __int128 is exact for every int64 acc whatsoever.
 */
#include <math.h>
#include <stdint.h>

#include "quant.h"

qllc_status qllc_requant_make(double M, qllc_requant *out, qllc_diag *diag) {
  if (!(M > 0) || !isfinite(M))
    return qllc_fail(diag, QLLC_ERR_INVALID, NULL, "requantization multiplier %g is not positive and finite", M);
  int e;
  double f = frexp(M, &e); /* M = f * 2^e, f in [0.5, 1) */
  double mr = qllc_round_half_even(ldexp(f, 31)); /* in [2^30, 2^31] */
  int32_t n = 31 - e;
  if (mr == 2147483648.0) { /* f rounded up to 1.0 */
    mr = 1073741824.0;
    n -= 1;
  }
  if (n < 0)
    return qllc_fail(diag, QLLC_ERR_INVALID, NULL,
                     "requantization multiplier %g is too large (>= 2^31): the output scale is far too small "
                     "for its input",
                     M);
  out->denormal = 0;
  if (n > QLLC_REQUANT_MAX_SHIFT) {
    /* M < 2^-32: keep n = 62 and shift m right, rounding once from the exact f. */
    mr = qllc_round_half_even(ldexp(f, 31 - (n - QLLC_REQUANT_MAX_SHIFT)));
    n = QLLC_REQUANT_MAX_SHIFT;
    out->denormal = 1;
  }
  out->m = (int32_t)mr;
  out->n = n;
  return QLLC_OK;
}

qllc_status qllc_requant_make_shared(const double *M, int count, int32_t *ms, int32_t *n, qllc_diag *diag) {
  if (count <= 0) return qllc_fail(diag, QLLC_ERR_INVALID, NULL, "no multipliers");
  double big = 0;
  for (int i = 0; i < count; i++) {
    if (!(M[i] > 0) || !isfinite(M[i]))
      return qllc_fail(diag, QLLC_ERR_INVALID, NULL, "requantization multiplier %g is not positive and finite",
                       M[i]);
    big = fmax(big, M[i]);
  }
  qllc_requant r;
  qllc_status st = qllc_requant_make(big, &r, diag);
  if (st != QLLC_OK) return st;
  for (int i = 0; i < count; i++) {
    double v = qllc_round_half_even(ldexp(M[i], r.n));
    ms[i] = v >= 2147483647.0 ? INT32_MAX : (int32_t)v; /* the largest one is r.m (<= 2^31 - 1) */
  }
  *n = r.n;
  return QLLC_OK;
}

int32_t qllc_requant_apply(int64_t acc, int32_t m, int32_t n) {
  __int128 p = (__int128)acc * m;
  if (n > 0) p = (p + ((__int128)1 << (n - 1))) >> n; /* arithmetic shift: floor, so half rounds up */
  if (p > INT32_MAX) return INT32_MAX;
  if (p < INT32_MIN) return INT32_MIN;
  return (int32_t)p;
}

float qllc_bias_min_weight_scale(float b, float s_x) {
  /* |b| / (s_x * s_w) <= 2^31 - 2^8 (headroom for the float rounding of s_w) */
  double v = fabs((double)b) / ((double)s_x * (2147483648.0 - 256.0));
  float f = (float)v;
  if ((double)f < v) f = nextafterf(f, INFINITY);
  return f;
}

static void note_clip(qllc_bias_report *rep, int64_t c, double v, float real) {
  rep->n_clipped++;
  if (rep->worst_channel < 0 || fabs(v) > fabs(rep->worst_value)) {
    rep->worst_channel = c;
    rep->worst_value = v;
    rep->worst_real = real;
  }
}

qllc_status qllc_quantize_bias(const float *b, int64_t channels, int64_t K, float s_x, const float *s_w,
                               int64_t n_sw, int32_t z_x, const void *q_w, qllc_elem w_elem, qllc_elem acc_elem,
                               void *bias_out, int32_t *qb_out, qllc_bias_report *rep, qllc_diag *diag) {
  if (acc_elem != QLLC_ELEM_I32 && acc_elem != QLLC_ELEM_I64)
    return qllc_fail(diag, QLLC_ERR_INVALID, NULL, "bias accumulator must be i32 or i64");
  if (w_elem != QLLC_ELEM_I8 && w_elem != QLLC_ELEM_I16)
    return qllc_fail(diag, QLLC_ERR_INVALID, NULL, "weights must be i8 or i16");
  if (n_sw != 1 && n_sw != channels)
    return qllc_fail(diag, QLLC_ERR_INVALID, NULL, "%lld weight scales for %lld channels", (long long)n_sw,
                     (long long)channels);
  rep->n_clipped = 0;
  rep->worst_channel = -1;
  rep->worst_value = 0;
  rep->worst_real = 0;
  for (int64_t c = 0; c < channels; c++) {
    double sb = (double)s_x * (double)s_w[n_sw == 1 ? 0 : c];
    if (!(sb > 0) || !isfinite(sb))
      return qllc_fail(diag, QLLC_ERR_INVALID, NULL, "bias scale of channel %lld is not positive", (long long)c);
    int32_t qb = 0;
    int clipped = 0;
    if (b) {
      if (!isfinite(b[c]))
        return qllc_fail(diag, QLLC_ERR_INVALID, NULL, "non-finite bias at channel %lld", (long long)c);
      double v = qllc_round_half_even((double)b[c] / sb);
      if (v > INT32_MAX || v < INT32_MIN) {
        note_clip(rep, c, v, b[c]);
        clipped = 1;
        v = v > 0 ? INT32_MAX : INT32_MIN;
      }
      qb = (int32_t)v;
    }
    if (qb_out) qb_out[c] = qb;
    int64_t wsum = 0;
    for (int64_t k = 0; k < K; k++)
      wsum += w_elem == QLLC_ELEM_I8 ? ((const int8_t *)q_w)[c * K + k] : ((const int16_t *)q_w)[c * K + k];
    /* |z_x| <= 2^15, |wsum| <= K * 2^15: exact in int64 for K < 2^32 */
    int64_t folded = (int64_t)qb - (int64_t)z_x * wsum;
    if (acc_elem == QLLC_ELEM_I64) {
      ((int64_t *)bias_out)[c] = folded;
    } else {
      if (folded > INT32_MAX || folded < INT32_MIN) {
        /* count a channel once even if q_b was clipped already */
        if (!clipped) note_clip(rep, c, (double)folded, b ? b[c] : 0.0f);
        folded = folded > 0 ? INT32_MAX : INT32_MIN;
      }
      ((int32_t *)bias_out)[c] = (int32_t)folded;
    }
  }
  return QLLC_OK;
}
