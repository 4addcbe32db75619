/* targets/x86_64/kernels/x86_q8_epilogue.h: the epilogues of the 8-bit Conv and FC variants
 * (x86_q8.c lists the parts): the requantization of the int32 accumulators and the stores of their low
 * bytes, for AVX-512 and AVX2. Always inline.
 *
 * Requantization in vectors, exactly REQUANT: the even and odd int32 lanes are multiplied by m into
 * int64 (vpmuldq), + (1 << n) >> 1, arithmetic shift by n (AVX-512 vpsravq; AVX2 emulates it with
 * xor of the sign), + z_y, clamp to [act_lo, act_hi] in int64, then the low byte of each lane. The
 * usual shifts (x86_reqh.h: qllc_req32_fits) take a 32-bit path from the high halves of the products. */
#ifndef QLLC_X86_Q8_EPILOGUE_H
#define QLLC_X86_Q8_EPILOGUE_H
#include "x86_q8_vec.h"
#include "x86_reqh.h"

typedef struct qx_zq {
  __m512i me, mo, ne, no, re, ro; /* m, n and the rounding term of the even and odd lanes, as int64 */
} qx_zq;
ZI void z_qprep(qx_zq *q, __m512i m, __m512i n) {
  const __m512i lo32 = _mm512_set1_epi64(0xffffffff), one = _mm512_set1_epi64(1);
  q->me = m, q->mo = _mm512_srli_epi64(m, 32);
  q->ne = _mm512_and_si512(n, lo32), q->no = _mm512_srli_epi64(n, 32);
  q->re = _mm512_srli_epi64(_mm512_sllv_epi64(one, q->ne), 1);
  q->ro = _mm512_srli_epi64(_mm512_sllv_epi64(one, q->no), 1);
}
ZI __m512i z_req(__m512i acc, const qx_zq *q, __m512i zy, __m512i lo, __m512i hi) {
  __m512i pe = _mm512_mul_epi32(acc, q->me), po = _mm512_mul_epi32(_mm512_srli_epi64(acc, 32), q->mo);
  pe = _mm512_add_epi64(_mm512_srav_epi64(_mm512_add_epi64(pe, q->re), q->ne), zy);
  po = _mm512_add_epi64(_mm512_srav_epi64(_mm512_add_epi64(po, q->ro), q->no), zy);
  pe = _mm512_min_epi64(_mm512_max_epi64(pe, lo), hi);
  po = _mm512_min_epi64(_mm512_max_epi64(po, lo), hi);
  return _mm512_mask_blend_epi32(0xAAAA, pe, _mm512_slli_epi64(po, 32));
}
/* The same requantization for 33 <= n <= 62 from the high halves of the products alone, in 32-bit
   lanes (x86_reqh.h says when and why it is exact: qllc_req32_fits). */
ZI __m512i z_reqh(__m512i acc, __m512i m, __m512i mo, __m512i r, __m512i sh, __m512i lo, __m512i hi) {
  return qx_reqh_512(acc, m, mo, r, sh, lo, hi);
}
/* z_reqh narrowed to 16 bytes: where [act_lo, act_hi] is the whole of [-128, 127] or [0, 255], vpmovsdb /
   vpmovusdb (after a max with 0) saturate to it themselves, so the clamp is not needed (the same bytes). */
ZI __m128i z_reqh8(__m512i acc, __m512i m, __m512i mo, __m512i r, __m512i sh, __m512i lo, __m512i hi, int32_t act_lo,
                   int32_t act_hi) {
  if (act_lo == -128 && act_hi == 127) return _mm512_cvtsepi32_epi8(qx_reqh_512_nc(acc, m, mo, r, sh));
  if (act_lo == 0 && act_hi == 255)
    return _mm512_cvtusepi32_epi8(_mm512_max_epi32(qx_reqh_512_nc(acc, m, mo, r, sh), _mm512_setzero_si512()));
  return _mm512_cvtepi32_epi8(qx_reqh_512(acc, m, mo, r, sh, lo, hi));
}
/* The low bytes of the first cnt lanes (values already inside the output type's range). */
ZI void z_store8(uint8_t *d, __m512i v, int64_t cnt) {
  __m128i b = _mm512_cvtepi32_epi8(v);
  if (cnt >= 16) _mm_storeu_si128((__m128i *)d, b);
  else _mm_mask_storeu_epi8(d, (__mmask16)qx_bits(cnt), b);
}
/* 4 x 16 int32 lanes as 64 bytes in order, each lane saturated to [-128, 127] when sgn, else to
   [0, 255] (so exact for values already inside that range): two saturating packs give per 128-bit
   lane l the 4 lanes 4l .. 4l+3 of v[0], v[1], v[2], v[3]; one vpermd puts them in order. */
ZI __m512i z_pack8x4(const __m512i *v, int sgn) {
  const __m512i a = _mm512_packs_epi32(v[0], v[1]), b = _mm512_packs_epi32(v[2], v[3]);
  const __m512i p = sgn ? _mm512_packs_epi16(a, b) : _mm512_packus_epi16(a, b);
  const __m512i ord = _mm512_setr_epi32(0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15);
  return _mm512_permutexvar_epi32(ord, p);
}
/* The low bytes of 4 x 16 lanes (values already inside the output type's range: [-128, 127] when
   sgn, else [0, 255]) as 64 consecutive bytes. */
ZI void z_store8x4(uint8_t *d, const __m512i *v, int sgn) { _mm512_storeu_si512(d, z_pack8x4(v, sgn)); }

typedef struct qx_yq {
  __m256i me, mo, ne, no, re, ro;
} qx_yq;
YI void y_qprep(qx_yq *q, __m256i m, __m256i n) {
  const __m256i lo32 = _mm256_set1_epi64x(0xffffffff), one = _mm256_set1_epi64x(1);
  q->me = m, q->mo = _mm256_srli_epi64(m, 32);
  q->ne = _mm256_and_si256(n, lo32), q->no = _mm256_srli_epi64(n, 32);
  q->re = _mm256_srli_epi64(_mm256_sllv_epi64(one, q->ne), 1);
  q->ro = _mm256_srli_epi64(_mm256_sllv_epi64(one, q->no), 1);
}
/* Arithmetic right shift of int64 lanes (AVX2 has only the logical one): ~(~v >> n) for v < 0. */
YI __m256i y_sra64(__m256i v, __m256i n) {
  const __m256i s = _mm256_cmpgt_epi64(_mm256_setzero_si256(), v);
  return _mm256_xor_si256(_mm256_srlv_epi64(_mm256_xor_si256(v, s), n), s);
}
YI __m256i y_clamp64(__m256i v, __m256i lo, __m256i hi) {
  v = _mm256_blendv_epi8(v, lo, _mm256_cmpgt_epi64(lo, v));
  return _mm256_blendv_epi8(v, hi, _mm256_cmpgt_epi64(v, hi));
}
YI __m256i y_req(__m256i acc, const qx_yq *q, __m256i zy, __m256i lo, __m256i hi) {
  __m256i pe = _mm256_mul_epi32(acc, q->me), po = _mm256_mul_epi32(_mm256_srli_epi64(acc, 32), q->mo);
  pe = y_clamp64(_mm256_add_epi64(y_sra64(_mm256_add_epi64(pe, q->re), q->ne), zy), lo, hi);
  po = y_clamp64(_mm256_add_epi64(y_sra64(_mm256_add_epi64(po, q->ro), q->no), zy), lo, hi);
  return _mm256_blend_epi32(pe, _mm256_slli_epi64(po, 32), 0xAA);
}
YI void y_store8(uint8_t *d, __m256i v, int64_t cnt) {
  const __m256i idx = _mm256_setr_epi8(0, 4, 8, 12, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, 0, 4, 8, 12, -1,
                                       -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1);
  const __m256i b = _mm256_shuffle_epi8(v, idx);
  const __m128i r = _mm_unpacklo_epi32(_mm256_castsi256_si128(b), _mm256_extracti128_si256(b, 1));
  if (cnt >= 8) {
    _mm_storel_epi64((__m128i *)d, r);
    return;
  }
  const uint64_t u = (uint64_t)_mm_cvtsi128_si64(r);
  for (int64_t j = 0; j < cnt; j++) d[j] = (uint8_t)(u >> (8 * j));
}
#endif
