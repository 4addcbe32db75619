/* libjit/bitcode/gemm_tile_f32.h: the register-blocked float GEMM tile shared by conv.c and fc.c.
 *
 *   c[i][j] += sum over k = 0..kc-1 (ascending) of a[i * lda + k] * b[k * ldb + j],
 *   i < QLLC_TILE_MR (8) rows, j < QLLC_TILE_NR (32) columns.
 *
 * Why vectors written out: LLVM's loop vectorizer only widens the innermost loop and keeps a local
 * accumulator array in memory, so a plain-C tile reloads and stores its accumulators on every k
 * (measured: one vmulps per three memory operations). Here the 8 x 32 accumulators are sixteen
 * variables of GCC/Clang's generic vector type (16 floats): they live in registers across the k loop,
 * and per k the tile does 2 vector loads of b, 8 scalar broadcasts of a and 16 multiplies + 16 adds.
 * The type is target-independent (LLVM legalizes <16 x float> to one zmm with AVX-512, two ymm with
 * AVX2, four xmm with SSE2 or NEON), there is no #if on the ISA, and each element is one multiply then
 * one add in k order with no FMA (the kernels are built with -ffp-contract=off), so the result is the
 * same on every target and equal to the scalar loop `c += a * b` over k ascending. */
#ifndef QLLC_GEMM_TILE_F32_H
#define QLLC_GEMM_TILE_F32_H
#include "qllc_kernel.h"

/* The vectors never cross a call boundary (everything is always_inline), so the ABI note about
 * passing 64-byte vectors without AVX-512 does not apply. */
#pragma GCC diagnostic ignored "-Wpsabi"

#define QLLC_TILE_MR 8  /* rows of a and c per tile */
#define QLLC_TILE_NR 32 /* columns of b and c per tile: two vectors */

typedef float qllc_v16f __attribute__((vector_size(64), aligned(4)));
typedef int32_t qllc_v16i __attribute__((vector_size(64), aligned(4))); /* comparison masks */

QLLC_INLINE qllc_v16f qv_load(const float *p) {
  qllc_v16f v;
  __builtin_memcpy(&v, p, sizeof v);
  return v;
}
QLLC_INLINE void qv_store(float *p, qllc_v16f v) { __builtin_memcpy(p, &v, sizeof v); }
/* s in every lane; s - (+0) is s for every float, -0 and NaN included. */
QLLC_INLINE qllc_v16f qv_splat(float s) { return s - (qllc_v16f){0}; }
/* min(max(v, lo), hi) lane by lane with qm_max/qm_min's rule (keep v unless the comparison holds, so a
 * NaN in v stays NaN), as a bitwise select on the comparison masks. */
QLLC_INLINE qllc_v16f qv_clamp(qllc_v16f v, qllc_v16f lo, qllc_v16f hi) {
  const qllc_v16i below = v < lo, above = v > hi;
  qllc_v16i r = ((qllc_v16i)lo & below) | ((qllc_v16i)v & ~below);
  r = ((qllc_v16i)hi & above) | (r & ~above);
  return (qllc_v16f)r;
}

/* The full 8 x 32 tile. c: row stride ldc; a: row stride lda (row i of a holds the weights of output
 * row i); b: row stride ldb, 32 readable floats per row. row_init: NULL to start from c, else row i
 * starts at row_init[i] in every column. clamp: clamp to [lo, hi] before storing. */
QLLC_INLINE void qllc_gemm_tile_8x32(float *QLLC_RESTRICT c, int64_t ldc, const float *QLLC_RESTRICT a,
                                     int64_t lda, const float *QLLC_RESTRICT b, int64_t ldb, int64_t kc,
                                     const float *QLLC_RESTRICT row_init, int clamp, float lo, float hi) {
  qllc_v16f c00, c01, c10, c11, c20, c21, c30, c31, c40, c41, c50, c51, c60, c61, c70, c71;
  if (row_init) {
    c00 = c01 = qv_splat(row_init[0]);
    c10 = c11 = qv_splat(row_init[1]);
    c20 = c21 = qv_splat(row_init[2]);
    c30 = c31 = qv_splat(row_init[3]);
    c40 = c41 = qv_splat(row_init[4]);
    c50 = c51 = qv_splat(row_init[5]);
    c60 = c61 = qv_splat(row_init[6]);
    c70 = c71 = qv_splat(row_init[7]);
  } else {
    c00 = qv_load(c + 0 * ldc), c01 = qv_load(c + 0 * ldc + 16);
    c10 = qv_load(c + 1 * ldc), c11 = qv_load(c + 1 * ldc + 16);
    c20 = qv_load(c + 2 * ldc), c21 = qv_load(c + 2 * ldc + 16);
    c30 = qv_load(c + 3 * ldc), c31 = qv_load(c + 3 * ldc + 16);
    c40 = qv_load(c + 4 * ldc), c41 = qv_load(c + 4 * ldc + 16);
    c50 = qv_load(c + 5 * ldc), c51 = qv_load(c + 5 * ldc + 16);
    c60 = qv_load(c + 6 * ldc), c61 = qv_load(c + 6 * ldc + 16);
    c70 = qv_load(c + 7 * ldc), c71 = qv_load(c + 7 * ldc + 16);
  }
  for (int64_t k = 0; k < kc; k++) {
    const qllc_v16f b0 = qv_load(b + k * ldb), b1 = qv_load(b + k * ldb + 16);
    float s;
    s = a[0 * lda + k], c00 += s * b0, c01 += s * b1;
    s = a[1 * lda + k], c10 += s * b0, c11 += s * b1;
    s = a[2 * lda + k], c20 += s * b0, c21 += s * b1;
    s = a[3 * lda + k], c30 += s * b0, c31 += s * b1;
    s = a[4 * lda + k], c40 += s * b0, c41 += s * b1;
    s = a[5 * lda + k], c50 += s * b0, c51 += s * b1;
    s = a[6 * lda + k], c60 += s * b0, c61 += s * b1;
    s = a[7 * lda + k], c70 += s * b0, c71 += s * b1;
  }
  if (clamp) {
    const qllc_v16f l = qv_splat(lo), h = qv_splat(hi);
    c00 = qv_clamp(c00, l, h), c01 = qv_clamp(c01, l, h), c10 = qv_clamp(c10, l, h), c11 = qv_clamp(c11, l, h);
    c20 = qv_clamp(c20, l, h), c21 = qv_clamp(c21, l, h), c30 = qv_clamp(c30, l, h), c31 = qv_clamp(c31, l, h);
    c40 = qv_clamp(c40, l, h), c41 = qv_clamp(c41, l, h), c50 = qv_clamp(c50, l, h), c51 = qv_clamp(c51, l, h);
    c60 = qv_clamp(c60, l, h), c61 = qv_clamp(c61, l, h), c70 = qv_clamp(c70, l, h), c71 = qv_clamp(c71, l, h);
  }
  qv_store(c + 0 * ldc, c00), qv_store(c + 0 * ldc + 16, c01);
  qv_store(c + 1 * ldc, c10), qv_store(c + 1 * ldc + 16, c11);
  qv_store(c + 2 * ldc, c20), qv_store(c + 2 * ldc + 16, c21);
  qv_store(c + 3 * ldc, c30), qv_store(c + 3 * ldc + 16, c31);
  qv_store(c + 4 * ldc, c40), qv_store(c + 4 * ldc + 16, c41);
  qv_store(c + 5 * ldc, c50), qv_store(c + 5 * ldc + 16, c51);
  qv_store(c + 6 * ldc, c60), qv_store(c + 6 * ldc + 16, c61);
  qv_store(c + 7 * ldc, c70), qv_store(c + 7 * ldc + 16, c71);
}

/* One row of the tile (the rows left over when the row count is not a multiple of 8); row_init: NULL
 * or one value. */
QLLC_INLINE void qllc_gemm_tile_1x32(float *QLLC_RESTRICT c, const float *QLLC_RESTRICT a,
                                     const float *QLLC_RESTRICT b, int64_t ldb, int64_t kc,
                                     const float *QLLC_RESTRICT row_init, int clamp, float lo, float hi) {
  qllc_v16f c0, c1;
  if (row_init)
    c0 = c1 = qv_splat(row_init[0]);
  else
    c0 = qv_load(c), c1 = qv_load(c + 16);
  for (int64_t k = 0; k < kc; k++) {
    const float s = a[k];
    c0 += s * qv_load(b + k * ldb);
    c1 += s * qv_load(b + k * ldb + 16);
  }
  if (clamp) {
    const qllc_v16f l = qv_splat(lo), h = qv_splat(hi);
    c0 = qv_clamp(c0, l, h), c1 = qv_clamp(c1, l, h);
  }
  qv_store(c, c0), qv_store(c + 16, c1);
}

#endif
