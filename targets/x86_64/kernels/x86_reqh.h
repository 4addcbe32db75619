/* targets/x86_64/kernels/x86_reqh.h: the 32-bit requantization of 16 int32 accumulators for a shift n
 * in 33..62, shared by the 8-bit kernels (x86_q8.c, z_reqh) and the 16x8 direct conv's int32 tiles
 * (x86_q16.c). Always inline, with the AVX-512 subset it needs, so it takes its caller's target. */
#ifndef QLLC_X86_REQH_H
#define QLLC_X86_REQH_H
#include <immintrin.h>

/* clamp(((acc * m + 2^(n-1)) >> n) + zy, lo, hi) per lane, the bits of qk_out(qk_req32(acc, m, n), ...)
   (and of qk_req64 for an accumulator inside int32), for m in [0, 2^31) and 33 <= n <= 62; m, zy, lo,
   hi broadcast, r = 2^(n-33) in every lane, sh = n - 32. With P = acc * m (|P| <= 2^62) and h = P >> 32
   (|h| <= 2^30), (P + 2^(n-1)) >> n equals (h + 2^(n-33)) >> (n - 32), because the low half adds less
   than one unit to h + 2^(n-33), which a floor by the power of two 2^(n-32) cannot see;
   |h + 2^(n-33)| < 2^31 and the result and zy + it stay far inside int32 (no saturation to int32 is
   needed), so the clamp in 32 bits is exact too. */
static inline __attribute__((always_inline, target("avx512f"))) __m512i
qx_reqh_512(__m512i acc, __m512i m, __m512i r, __m128i sh, __m512i zy, __m512i lo, __m512i hi) {
  const __m512i pe = _mm512_mul_epi32(acc, m), po = _mm512_mul_epi32(_mm512_srli_epi64(acc, 32), m);
  const __m512i h = _mm512_mask_blend_epi32(0xAAAA, _mm512_srli_epi64(pe, 32), po);
  const __m512i v = _mm512_add_epi32(_mm512_sra_epi32(_mm512_add_epi32(h, r), sh), zy);
  return _mm512_min_epi32(_mm512_max_epi32(v, lo), hi);
}

#endif
