/* targets/x86_64/kernels/x86_tr4.h: the interleave of four tap rows into the [k4][64 pixels][4] conv
 * activation panel, shared by the avx512vnni (x86_q8_pack.h, x86_q8_panel.h) and AMX (x86_amx.c) panel
 * packers. Always inline, with the AVX-512 subset it needs, so it takes its caller's target. */
#ifndef QLLC_X86_TR4_H
#define QLLC_X86_TR4_H
#include <immintrin.h>
#include <stdint.h>

/* 4 rows of 64 bytes (taps k..k+3 of 64 pixels) -> 64 x 4 interleaved bytes at dst (pixel j: a[j] b[j]
   c[j] d[j]), each ^ flip. */
static inline __attribute__((always_inline, target("avx512f,avx512bw"))) void
qx_tr4_512(uint8_t *dst, __m512i a, __m512i b, __m512i c, __m512i d, uint8_t flip) {
  const __m512i f = _mm512_set1_epi8((char)flip);
  a = _mm512_xor_si512(a, f), b = _mm512_xor_si512(b, f), c = _mm512_xor_si512(c, f), d = _mm512_xor_si512(d, f);
  const __m512i t0 = _mm512_unpacklo_epi8(a, b), t1 = _mm512_unpackhi_epi8(a, b);
  const __m512i t2 = _mm512_unpacklo_epi8(c, d), t3 = _mm512_unpackhi_epi8(c, d);
  /* per 128-bit lane l: u0 = pixels 16l+0..3, u1 = 16l+4..7, u2 = 16l+8..11, u3 = 16l+12..15 */
  const __m512i u0 = _mm512_unpacklo_epi16(t0, t2), u1 = _mm512_unpackhi_epi16(t0, t2);
  const __m512i u2 = _mm512_unpacklo_epi16(t1, t3), u3 = _mm512_unpackhi_epi16(t1, t3);
  const __m512i v0 = _mm512_shuffle_i64x2(u0, u1, 0x88), v1 = _mm512_shuffle_i64x2(u2, u3, 0x88);
  const __m512i v2 = _mm512_shuffle_i64x2(u0, u1, 0xDD), v3 = _mm512_shuffle_i64x2(u2, u3, 0xDD);
  _mm512_storeu_si512(dst, _mm512_shuffle_i64x2(v0, v1, 0x88));
  _mm512_storeu_si512(dst + 64, _mm512_shuffle_i64x2(v2, v3, 0x88));
  _mm512_storeu_si512(dst + 128, _mm512_shuffle_i64x2(v0, v1, 0xDD));
  _mm512_storeu_si512(dst + 192, _mm512_shuffle_i64x2(v2, v3, 0xDD));
}

#endif
