/* libjit/bitcode/qllc_math.h: always-inline float helpers for the kernels (no libm in a bundle).
 *
 * Named qllc_math.h, not math.h: libjit/bitcode is on the include path of every test that links
 * qllc_libjit_native, and a file called math.h there would shadow the C library's <math.h>.
 *
 * Every function is branch-free (selects only) so that it vectorizes inside a kernel loop, and uses
 * only +, -, *, / and bit casts, so the result is the same on every target (kernels are built with
 * -ffp-contract=off, so no FMA changes the rounding). Errors measured against glibc in double over
 * every 97th float bit pattern (tests/libjit/activation_test.c): exp 1.00 ulp, sigmoid 2.28, tanh 1.86. */
#ifndef QLLC_MATH_H
#define QLLC_MATH_H
#include "qllc_kernel.h"

QLLC_INLINE uint32_t qm_bits(float x) {
  union { float f; uint32_t u; } v = {x};
  return v.u;
}

QLLC_INLINE float qm_float(uint32_t u) {
  union { uint32_t u; float f; } v = {u};
  return v.f;
}

QLLC_INLINE float qm_abs(float x) { return qm_float(qm_bits(x) & 0x7fffffffu); }

/* |mag| with the sign of s. */
QLLC_INLINE float qm_copysign(float mag, float s) {
  return qm_float((qm_bits(mag) & 0x7fffffffu) | (qm_bits(s) & 0x80000000u));
}

/* max/min that return the other operand when one is NaN is not needed by the kernels: these keep
 * the first operand when the comparison is false, which is what a NaN in x propagates through. */
QLLC_INLINE float qm_max(float x, float m) { return x < m ? m : x; }
QLLC_INLINE float qm_min(float x, float m) { return x > m ? m : x; }

/* exp(x) for every float x: exp(-inf) = 0, exp(+inf) = +inf, NaN stays NaN, overflow gives +inf and
 * underflow goes smoothly through the subnormals to 0.
 * Range reduction x = n ln2 + r, |r| <= ln2/2 (Cody-Waite, ln2 split so that n * ln2_hi is exact),
 * exp(r) by its Taylor series to degree 7 (truncation error < 6e-9 relative), and 2^n applied as two
 * factors 2^(n/2) so that neither factor leaves the normal range, even when the result is subnormal
 * (then the single rounding happens in the last multiply). */
QLLC_INLINE float qm_exp(float x) {
  const float shifter = 12582912.0f; /* 1.5 * 2^23: adding it rounds to an integer */
  const float log2e = 1.44269502163f;
  const float ln2_hi = 0.693145751953125f; /* 0x3f317200: low 9 bits zero */
  const float ln2_lo = 1.42860676533018e-06f;
  /* Clamp first: above 88.8 the result is +inf anyway, below -104 it rounds to 0. NaN passes
   * through both comparisons unchanged. */
  float xc = x > 88.8f ? 88.8f : x;
  xc = xc < -104.0f ? -104.0f : xc;
  float t = xc * log2e + shifter;
  float nf = t - shifter; /* round(x / ln2), exact */
  int32_t n = (int32_t)(qm_bits(t) - qm_bits(shifter));
  float r = (xc - nf * ln2_hi) - nf * ln2_lo;
  float p = 1.0f / 5040.0f;
  p = p * r + 1.0f / 720.0f;
  p = p * r + 1.0f / 120.0f;
  p = p * r + 1.0f / 24.0f;
  p = p * r + 1.0f / 6.0f;
  p = p * r + 0.5f;
  p = p * r;
  p = p * r + r; /* 1 + (r + r^2 q): add the 1 last to keep r's low bits */
  p = p + 1.0f;
  int32_t k1 = n >> 1; /* n in [-150, 128]: both halves in [-75, 64], normal scale factors */
  int32_t k2 = n - k1;
  float s1 = qm_float((uint32_t)(k1 + 127) << 23);
  float s2 = qm_float((uint32_t)(k2 + 127) << 23);
  float y = (p * s1) * s2;
  return x != x ? x + x : y;
}

/* 1 / (1 + exp(-x)), written so that no intermediate overflows: with e = exp(-|x|) in (0, 1],
 * sigmoid(x) = 1 / (1 + e) for x >= 0 and e / (1 + e) for x < 0 (small results stay accurate down
 * into the subnormals instead of flushing to 0 at x = -88). */
QLLC_INLINE float qm_sigmoid(float x) {
  float e = qm_exp(-qm_abs(x));
  float d = 1.0f + e;
  float pos = 1.0f / d;
  float neg = e / d;
  return x < 0.0f ? neg : pos; /* NaN: e is NaN, so is pos */
}

/* tanh(x): an odd Taylor polynomial for |x| < 0.4 (relative accuracy near 0, tanh(-0) = -0), and
 * 1 - 2 / (exp(2|x|) + 1) above, where the cancellation is at most a factor 1.6; the exp overflows to
 * +inf for large |x| and gives exactly +-1. NaN stays NaN. */
QLLC_INLINE float qm_tanh(float x) {
  float a = qm_abs(x);
  float x2 = x * x;
  float q = 6404582.0f / 10854718875.0f;
  q = q * x2 - 929569.0f / 638512875.0f;
  q = q * x2 + 21844.0f / 6081075.0f;
  q = q * x2 - 1382.0f / 155925.0f;
  q = q * x2 + 62.0f / 2835.0f;
  q = q * x2 - 17.0f / 315.0f;
  q = q * x2 + 2.0f / 15.0f;
  q = q * x2 - 1.0f / 3.0f;
  float small = qm_copysign(x + x * (x2 * q), x); /* x + (-0 * ..) would turn -0 into +0 */
  float e = qm_exp(a + a);
  float big = qm_copysign(1.0f - 2.0f / (e + 1.0f), x);
  return a < 0.4f ? small : big; /* NaN: a < 0.4 is false, big is NaN */
}

#endif
