/* targets/x86_64/kernels/x86_q8_vec.h: the vector primitives shared by the x86_64 variants of the
 * fused 8-bit Conv and FC layers (x86_q8.c lists their parts): the types, the panel's constants, the
 * function attributes of each ISA and the loads, broadcasts and dot products. Always inline. */
#ifndef QLLC_X86_Q8_VEC_H
#define QLLC_X86_Q8_VEC_H
#include <immintrin.h>

#include "q_common.h"
#include "variants.h"

typedef int32_t qx_i32u __attribute__((may_alias, aligned(1)));
typedef uint64_t qx_u64u __attribute__((may_alias, aligned(1)));

#define QX_PB QLLC_CONV_PB /* panel pixels (64) */
#define QX_RSLACK 32      /* bytes past a row buffer's 64 that the AVX2 row fills may write */
#define QX_MT 192         /* (segment, kw) masks tabulated per panel (1.5 KiB) */
#define QX_KWMAX 32        /* kernel widths whose valid column ranges are tabulated per panel */
#define QX_UNROLL _Pragma("GCC unroll 16")

QLLC_INLINE uint64_t qx_bits(int64_t n) { return n <= 0 ? 0 : n >= 64 ? ~(uint64_t)0 : ((uint64_t)1 << n) - 1; }

/* ---- AVX-512 (F, BW, VL, DQ, VNNI) primitives ------------------------------------------------------ */
#define QX_TZ "avx512f,avx512bw,avx512vl,avx512dq,avx512vnni"
#define ZI static inline __attribute__((always_inline, target(QX_TZ)))
/* the panel packers are called once per panel, never inlined: their vector constants would stay live
   across the tiles' loops and crowd out the accumulators */
#define ZP static __attribute__((noinline, target(QX_TZ)))
ZI __m512i z_set1(int32_t v) { return _mm512_set1_epi32(v); }
ZI __m512i z_set64(int64_t v) { return _mm512_set1_epi64(v); }
ZI __m512i z_load(const void *p) { return _mm512_loadu_si512(p); }
ZI __m512i z_bcast(const void *p) { return _mm512_set1_epi32(*(const qx_i32u *)p); }
ZI __m512i z_dp(__m512i acc, __m512i u8, __m512i s8) { return _mm512_dpbusd_epi32(acc, u8, s8); }
ZI __m512i z_add(__m512i a, __m512i b) { return _mm512_add_epi32(a, b); }

/* ---- AVX2 primitives (shared by avxvnni and avx2) ----------------------------------------------------- */
#define YI static inline __attribute__((always_inline, target("avx2")))
#define YP static __attribute__((noinline, target("avx2")))
YI __m256i y_set1(int32_t v) { return _mm256_set1_epi32(v); }
YI __m256i y_set64(int64_t v) { return _mm256_set1_epi64x(v); }
YI __m256i y_load(const void *p) { return _mm256_loadu_si256((const __m256i *)p); }
YI __m256i y_bcast(const void *p) { return _mm256_set1_epi32(*(const qx_i32u *)p); }
YI __m256i y_add(__m256i a, __m256i b) { return _mm256_add_epi32(a, b); }
/* Exact vpdpbusd: acc + sum of the 4 products u8 * s8 of each 32-bit lane, modulo 2^32. The 16-bit
   halves are exact (0..255 and -128..127) and a vpmaddwd pair sum stays below 2^16 in magnitude. */
YI __m256i ye_dp(__m256i acc, __m256i u, __m256i s) {
  const __m256i m8 = _mm256_set1_epi16(0x00ff);
  const __m256i ue = _mm256_and_si256(u, m8), uo = _mm256_srli_epi16(u, 8);
  const __m256i se = _mm256_srai_epi16(_mm256_slli_epi16(s, 8), 8), so = _mm256_srai_epi16(s, 8);
  return _mm256_add_epi32(acc, _mm256_add_epi32(_mm256_madd_epi16(ue, se), _mm256_madd_epi16(uo, so)));
}
#define YVI static inline __attribute__((always_inline, target("avx2,avxvnni")))
YVI __m256i yv_dp(__m256i acc, __m256i u8, __m256i s8) { return _mm256_dpbusd_avx_epi32(acc, u8, s8); }
#endif
