/* libjit/bitcode/qllc_math.h: always-inline float helpers for the kernels (no libm in a bundle).
 *
 * Named qllc_math.h, not math.h: libjit/bitcode is on the include path of every test that links
 * qllc_libjit_native, and a file called math.h there would shadow the C library's <math.h>.
 *
 * Every function is branch-free (selects only; qm_exp_core's `fine` is a constant at each call) so
 * that it vectorizes inside a kernel loop, and uses only +, -, *, / and bit casts, so the result is
 * the same on every target (kernels are built with -ffp-contract=off, so no FMA changes the rounding;
 * the Dekker products below rely on it too). The largest errors against glibc in double, all within
 * 2 ulp, and how they were measured are in docs/numerics.md ("The float transcendental functions";
 * tests/libjit/activation_test.c asserts them). src/quant/tables.c builds the integer tables of these
 * functions from them. */
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

/* x with the low 12 bits of its significand cleared: x = hi + (x - hi) exactly, each part with at
 * most 12 significant bits, so that a product of two such parts is exact in float (Dekker's split,
 * by masking instead of Veltkamp's multiply: no overflow for large x). */
QLLC_INLINE float qm_split(float x) { return qm_float(qm_bits(x) & 0xfffff000u); }

/* The rounding error of p = a * b (a * b = p + error exactly), Dekker's two-product without FMA. */
QLLC_INLINE float qm_mul_err(float a, float b, float p) {
  float ah = qm_split(a), al = a - ah, bh = qm_split(b), bl = b - bh;
  return (((ah * bh - p) + ah * bl) + al * bh) + al * bl;
}

/* a * b - qm_split(a) * qm_split(b): with the exact product of the halves it gives a * b as a float
 * pair (the tail, about 2^-11 |a b|, rounded once: an error near 2^-35 |a b|), four operations fewer
 * than a rounded product and its qm_mul_err. */
QLLC_INLINE float qm_mul_tail(float a, float b) {
  float ah = qm_split(a), bh = qm_split(b);
  return ah * (b - bh) + (a - ah) * b;
}

/* (m + ml) exp(hi + lo), where lo is a small correction to hi (|lo| < 2^-10 |hi| or so), m a factor
 * in [2^-8, 2^8] and ml a small correction to m: the reduction x = n ln2 + r uses hi + lo, so an
 * argument known to more than float precision (-a^2 in erfc) keeps its extra bits. exp(-inf) = 0,
 * exp(+inf) = +inf, NaN stays NaN, overflow gives +inf and underflow goes smoothly through the
 * subnormals to 0. Range reduction x = n ln2 + r, |r| <= ln2/2 (Cody-Waite, ln2 split so that
 * n * ln2_hi is exact), exp(r) = 1 + R by its Taylor series to degree 7 (truncation error < 6e-9
 * relative), the result m + m R with R = exp(r) - 1 (ml ignored), or, when fine (a constant: the
 * other branch folds away), m + (m r + rest) with m r an exact float pair and r's rounding error kept
 * (more work, for erfc and GELU, whose other errors leave little room), and 2^n applied as two
 * factors 2^(n/2) so that neither factor leaves the normal range, even when the result is subnormal
 * (then the single rounding happens in the last multiply). */
QLLC_INLINE float qm_exp_core(float hi, float lo, float m, float ml, int fine) {
  const float shifter = 12582912.0f; /* 1.5 * 2^23: adding it rounds to an integer */
  const float log2e = 1.44269502163f;
  const float ln2_hi = 0.693145751953125f; /* 0x3f317200: low 9 bits zero */
  const float ln2_lo = 1.42860676533018e-06f;
  /* Clamp first: above 88.8 the result is +inf anyway, below -110 it rounds to 0 (for m <= 2^8).
   * NaN passes through both comparisons unchanged. */
  float xc = hi > 88.8f ? 88.8f : hi;
  xc = xc < -110.0f ? -110.0f : xc;
  float t = (xc + lo) * log2e + shifter;
  float nf = t - shifter; /* round(x / ln2), exact */
  int32_t n = (int32_t)(qm_bits(t) - qm_bits(shifter));
  /* r + rl = x - n ln2 + lo with rl the rounding error of the last addition (a two-sum): r's own
   * rounding would cost up to 1/4 ulp of the result */
  float s0 = xc - nf * ln2_hi; /* exact */
  float c = -(nf * ln2_lo - lo); /* rounded: about 2^-24 |lo|, far below the result's ulp */
  float r = s0 + c, z = r - s0, rl = (s0 - (r - z)) + (c - z);
  float p = 1.0f / 5040.0f;
  p = p * r + 1.0f / 720.0f;
  p = p * r + 1.0f / 120.0f;
  p = p * r + 1.0f / 24.0f;
  p = p * r + 1.0f / 6.0f;
  p = p * r + 0.5f;
  p = (p * r) * r; /* exp(r) - 1 - r */
  if (fine) {
    /* (m + ml)(1 + r + rl + p) = m + m r + [the rest], with m r as an exact float pair (the
     * product of the 12-bit halves and its tail): the one rounding that matters is the last add */
    float mr = qm_split(m) * qm_split(r);
    float rest = ((qm_mul_tail(m, r) + m * rl) + m * p) + (ml + ml * (r + p));
    p = m + (mr + rest);
  } else {
    float R = p + r; /* exp(r) - 1: add m last to keep r's low bits; ml is not used (qm_exp's 0) */
    p = m + m * R;
  }
  int32_t k1 = n >> 1; /* n in [-159, 128]: both halves in [-80, 64], normal scale factors */
  int32_t k2 = n - k1;
  float f1 = qm_float((uint32_t)(k1 + 127) << 23);
  float f2 = qm_float((uint32_t)(k2 + 127) << 23);
  return (p * f1) * f2;
}

/* exp(x) for every float x (qm_exp_core with lo = 0, m = 1). */
QLLC_INLINE float qm_exp(float x) {
  float y = qm_exp_core(x, 0.0f, 1.0f, 0.0f, 0);
  return x != x ? x + x : y;
}

/* 1 / (1 + exp(-x)), written so that no intermediate overflows: with e = exp(-|x|) in (0, 1],
 * sigmoid(x) = 1 / (1 + e) for x >= 0 and e / (1 + e) for x < 0 (small results stay accurate down
 * into the subnormals instead of flushing to 0 at x = -88), 1 + e carried as an exact float pair. */
QLLC_INLINE float qm_sigmoid(float x) {
  float e = qm_exp(-qm_abs(x));
  float d = 1.0f + e, dl = (1.0f - d) + e; /* 1 + e = d + dl exactly (e <= 1) */
  float q = (x < 0.0f ? e : 1.0f) / d;
  return q - q * (dl / d); /* num / (d + dl), dropping d's rounding error; NaN: e is NaN, so is d */
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
  float ac = qm_min(a, 10.0f); /* tanh(10) rounds to 1; e stays finite, so d + dl does */
  float e = qm_exp(ac + ac);
  float d = e + 1.0f, dl = (e - d) + 1.0f; /* e + 1 = d + dl exactly (e >= 1) */
  float g = 2.0f / d;
  float big = qm_copysign((1.0f - g) + g * (dl / d), x); /* 1 - 2 / (d + dl) */
  return a < 0.4f ? small : big; /* NaN: a < 0.4 is false, big is NaN */
}

/* m * erfc(a) for a >= 0.46 (up to +inf), given -a^2 = hi + lo (hi exact, lo its correction: a^2 in
 * float alone would be off by up to a^2 2^-24, a relative error of 2 a^2 2^-24 in erfc) and
 * d + dl = 1 + a / sqrt 2 (dl the rounding error of d). erfc(a) = exp(-a^2) H(t) / d with t = 1 / d,
 * H(t) = erfcx(a) (1 + a / sqrt 2) smooth on t in [0.118, 0.755] (a in [0.46, 10.6]; above 10.6 the exp
 * underflows and H only needs to stay finite: H(0) = 1 / sqrt(2 pi)). H is a degree-10 polynomial
 * fitted (weighted least squares iterated to minimax, coefficients rounded to float one at a time and
 * the rest refitted: scripts/fit_qllc_math.py, which also made P and Q below) to relative error 1.1e-9
 * against erfcx in double. The last Horner step is compensated, the rounding of t corrected to first
 * order, and m H / d goes to the exp as a float pair (its roundings and dl corrected), so that the
 * exp's last add and the scaling to a subnormal result are the only late roundings. Products that
 * must be exact are taken as the product of 12-bit halves plus qm_mul_tail. */
QLLC_INLINE float qm_erfc_tail(float hi, float lo, float d, float dl, float m) {
  float t = 1.0f / d;
  float h = -2.943489850e-01f;
  h = h * t + 1.387670994e+00f;
  h = h * t - 2.695082664e+00f;
  h = h * t + 2.606575251e+00f;
  h = h * t - 1.091012836e+00f;
  h = h * t + 5.929617211e-02f;
  h = h * t - 1.753217876e-01f;
  h = h * t + 1.053357497e-01f;
  h = h * t + 2.988647223e-01f;
  const float c1 = 3.989502788e-01f, c0 = 3.989423513e-01f;
  float h1 = c1 + h * t;
  /* the last step compensated (its rounding dominates): H = c0 + t h1 = sh + se, t h1 as an exact
   * pair and the sum by Fast2Sum (t h1 in [0, 0.456) and c0 in [0.25, 0.5): c0's exponent is at
   * least t h1's, so the error term is exact) */
  float th = qm_split(t), ph = qm_split(h1) * th;
  float sh = c0 + ph, se = ((c0 - sh) + ph) + qm_mul_tail(h1, t);
  /* t's rounding (its effect on H is up to 0.6 ulp): 1 / (d + dl) = t + tl, H(t + tl) = H + H' tl
   * with H' ~ h1 + t h (the rest of H' only scales the tiny tl); 1 - th dh is exact (Sterbenz) */
  float dh = qm_split(d);
  float tl = (((1.0f - th * dh) - qm_mul_tail(t, d)) - t * dl) * t;
  se = se + (h1 + t * h) * tl;
  /* m H / (d + dl) = q + ql: q = P t rounded, P = m (sh + se) = Ph + Pl, ql from the exact residual
   * P - q d (Ph - qh dh is exact, Sterbenz), so the one division is t = 1 / d */
  float Ph = qm_split(sh) * qm_split(m), Pl = qm_mul_tail(sh, m) + se * m;
  float q = (Ph + Pl) * t;
  float ql = (((Ph - qm_split(q) * dh) + Pl) - qm_mul_tail(q, d)) * t - q * (dl * t);
  return qm_exp_core(hi, lo, q, ql, 1);
}

/* erf(x) for every float x: |x| < 0.5: x + x P(x^2), P a degree-5 polynomial (fitted like H above,
 * 8.6e-10 relative), no cancellation; above, 1 - erfc(|x|) with erfc <= 0.48, so its error counts at
 * most half; erf(+-inf) = +-1, erf(-0) = -0, NaN stays NaN. */
QLLC_INLINE float qm_erf(float x) {
  float a = qm_min(qm_abs(x), 10.5f); /* erfc(10.5) underflows: erf is 1 from 3.92 on */
  float s = a * a;
  float q = -2.959665144e-04f;
  q = q * s + 4.903481342e-03f;
  q = q * s - 2.679789253e-02f;
  q = q * s + 1.128318757e-01f;
  q = q * s - 3.761262000e-01f;
  q = q * s + 1.283791661e-01f;
  float small = a + a * q;
  float ah = qm_split(a), al = a - ah;
  float pa = 0.70710677f * a, pe = qm_mul_err(0.70710677f, a, pa) + 1.210161715e-08f * a; /* a / sqrt 2 */
  float d = 1.0f + pa, dl = (pa - (d - 1.0f)) + pe;
  float big = 1.0f - qm_erfc_tail(-(ah * ah), -(al * (a + ah)), d, dl, 1.0f);
  return qm_copysign(a < 0.5f ? small : big, x); /* NaN: a is NaN, so is big */
}

/* GELU x Phi(x) = x erfc(-x / sqrt 2) / 2 for every float x. |x| < 0.6629 (x / sqrt 2 < 0.46875):
 * x/2 + x/2 (x Q(x^2)), Q a degree-6 polynomial for erf(x / sqrt 2) / x; x <= -0.6629: (x / 2) erfc(|x| /
 * sqrt 2) through qm_erfc_tail, relative accuracy down to the subnormals (GELU(-14) = -1.1e-43) with
 * a^2 = x^2 / 2 taken exactly from the split of x and d = 1 + |x| / 2 one rounding; x >= 0.6629:
 * x - x erfc(x / sqrt 2) / 2. GELU(-inf) = -0 (the limit), GELU(+inf) = +inf, NaN stays NaN. */
QLLC_INLINE float qm_gelu(float x) {
  float xc = qm_max(qm_min(x, 15.0f), -15.0f); /* beyond +-15 the tail is exactly 0 */
  float s = xc * xc;
  float q = 7.428080426e-04f;
  q = q * s - 1.103297225e-03f;
  q = q * s + 8.438830846e-04f;
  q = q * s - 2.542166272e-03f;
  q = q * s + 1.996959746e-02f;
  q = q * s - 1.329820752e-01f;
  q = q * s + 7.978845835e-01f;
  float hx = 0.5f * xc;
  float small = qm_copysign(hx + hx * (xc * q), xc); /* GELU(-0) = -0 */
  float v = qm_abs(xc), vh = qm_split(v), vl = v - vh;
  float d = 1.0f + 0.5f * v, dl = 0.5f * v - (d - 1.0f); /* both exact */
  float e = qm_erfc_tail(-0.5f * (vh * vh), -0.5f * (vl * (v + vh)), d, dl, xc < 0.0f ? hx : 0.5f);
  float big = xc < 0.0f ? e : xc - xc * e;
  float y = v < 0.6629126f ? small : big;
  return x > 15.0f ? x : y; /* NaN: xc is NaN, v < .. is false and big is NaN */
}

/* GELU's tanh form (onnxruntime's FastGelu): 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))) = x
 * sigmoid(w), w = A x + B x^3 with A = 2 sqrt(2/pi), B = 0.044715 A. For x < 0 the result is
 * x e^w / (1 + e^w), so its relative error is at least w's absolute error: w is evaluated in double-float (A, B and x^2 as float pairs, Dekker products),
 * about 2^-40 relative, instead of float's 2^-24 (which would cost |w| 2^-24, 100 ulps at x = -10). */
QLLC_INLINE float qm_gelu_tanh(float x) {
  const float a_hi = 1.595769167e+00f, a_lo = -4.534068054e-08f;
  const float b_hi = 7.135481387e-02f, b_lo = 2.398832466e-09f;
  float xc = qm_max(qm_min(x, 20.0f), -20.0f); /* beyond +-20 the result is x, or -0 */
  float sh = xc * xc, sl = qm_mul_err(xc, xc, sh);
  float ph = b_hi * sh, pl = (qm_mul_err(b_hi, sh, ph) + b_hi * sl) + b_lo * sh; /* B x^2 */
  float uh = a_hi + ph, bv = uh - a_hi;                                          /* A + B x^2, two-sum */
  float ul = ((a_hi - (uh - bv)) + (ph - bv)) + (a_lo + pl);
  float wh = xc * uh, wl = qm_mul_err(xc, uh, wh) + xc * ul; /* w = x (A + B x^2) */
  /* e = exp(-|w|) in (0, 1], 1 + e = d + dl exactly; x / (1 + e) = q + ql as a float pair (from the
   * exact residual of q d); for w >= 0 that is the result, below it is e^w (x / (1 + e^w)), so
   * the exp of w once more, with the pair as its factor: no rounding of e reaches the result */
  int neg = wh < 0.0f;
  float e = qm_exp_core(neg ? wh : -wh, neg ? wl : -wl, 1.0f, 0.0f, 1);
  float d = 1.0f + e, dl = (1.0f - d) + e, t = 1.0f / d;
  float q = xc * t, qd = q * d, qde = qm_mul_err(q, d, qd);
  float ql = (((xc - qd) - qde) - q * dl) * t;
  float y = qm_copysign(neg ? qm_exp_core(wh, wl, q, ql, 1) : q + ql, xc); /* the sign of x: -0 stays -0 */
  return x > 20.0f ? x : y; /* NaN: wh is NaN, so are e and y */
}

#endif
