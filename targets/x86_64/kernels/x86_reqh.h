/* targets/x86_64/kernels/x86_reqh.h: the 32-bit requantization of 16 int32 accumulators, shared by the
 * 8-bit kernels (x86_q8_panel.h, x86_q8_direct.h: the panel, conv2dc4 and conv2dcl epilogues) and the
 * 16x8 direct conv's int32 tiles (x86_q16.c). Always inline, with the AVX-512 subset it needs, so it
 * takes its caller's target. */
#ifndef QLLC_X86_REQH_H
#define QLLC_X86_REQH_H
#include <immintrin.h>

#include "layouts.h" /* qllc_req32_fits */

/* clamp(((acc * m + 2^(n-1)) >> n) + z_y, lo, hi) per lane, the bits of qk_out(qk_req32(acc, m, n), ...)
   (and of qk_req64 for an accumulator inside int32), for m in [0, 2^31) and qllc_req32_fits(n, z_y):
   33 <= n <= 62 and |z_y| 2^(n-32) < 2^29. With P = acc * m (|P| <= 2^62) and h = P >> 32 (|h| <= 2^30),
   (P + 2^(n-1)) >> n equals (h + 2^(n-33)) >> (n - 32), because the low half adds less than one unit to
   h + 2^(n-33), which a floor by the power of two 2^(n-32) cannot see; z_y joins the rounding term as
   z_y 2^(n-32), which the floor passes through unchanged. Then |h + r| < 2^30 + 2^29 + 2^29 = 2^31 and
   the result stays far inside int32, so the clamp in 32 bits is exact too. Per lane: m; mo, m's odd
   lanes moved to the even ones (m itself when every lane holds the same m); r = qx_req32_r(n, z_y);
   sh = n - 32. The high halves of the even and odd products are picked by one vpermt2d. */
static inline int32_t qx_req32_r(int32_t n, int32_t z_y) {
  return (int32_t)(((int64_t)1 << (n - 33)) + (int64_t)z_y * ((int64_t)1 << (n - 32)));
}
/* Before the clamp (an int32 per lane, as said above). */
static inline __attribute__((always_inline, target("avx512f"))) __m512i
qx_reqh_512_nc(__m512i acc, __m512i m, __m512i mo, __m512i r, __m512i sh) {
  const __m512i pe = _mm512_mul_epi32(acc, m), po = _mm512_mul_epi32(_mm512_srli_epi64(acc, 32), mo);
  const __m512i hsel = _mm512_set_epi32(31, 15, 29, 13, 27, 11, 25, 9, 23, 7, 21, 5, 19, 3, 17, 1);
  const __m512i h = _mm512_permutex2var_epi32(pe, hsel, po); /* the odd dwords of pe and po, in order */
  return _mm512_srav_epi32(_mm512_add_epi32(h, r), sh);
}
static inline __attribute__((always_inline, target("avx512f"))) __m512i
qx_reqh_512(__m512i acc, __m512i m, __m512i mo, __m512i r, __m512i sh, __m512i lo, __m512i hi) {
  return _mm512_min_epi32(_mm512_max_epi32(qx_reqh_512_nc(acc, m, mo, r, sh), lo), hi);
}

#endif
