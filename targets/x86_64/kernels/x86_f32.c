/* targets/x86_64/kernels/x86_f32.c: the x86_64 variants of the float FC layer (rows in variants.def),
 * bit-identical to the scalar qllc_k_fc_f32_f32_f32 of libjit/bitcode/fc.c.
 *
 * Weights: QLLC_LAYOUT_F32_N32 (layouts.h), packed at compile time: per block of 32 output columns, the
 * 32 weights of each k one after another, so a tile reads one contiguous 128-byte line per k instead of
 * two vectors 4 KiB apart (the reference's w[K][N] rows), which kept the reference at a fraction of the
 * core's rate on FC 64x1024x1024.
 *
 * Tile: MR rows of x x 32 columns (two 16-float vectors) of accumulators in registers over a block of k;
 * per k, two vector loads of the packed line, MR broadcasts of x and 2*MR multiplies + 2*MR adds. MR is
 * 8 with AVX-512 (16 zmm accumulators), 4 with AVX2 (the same 16 vectors as 32 ymm halves would spill:
 * the NARROW row runs 4 rows at a time). A row block of fewer rows runs the same tile with a smaller
 * MR; one row (a GEMV) runs FC_GV blocks of 32 columns side by side, so that 2*FC_GV independent add
 * chains hide the add's latency (one block alone waits on two chains).
 *
 * Order of every sum: bias (0 without one), then k ascending, one multiply and one add per term (no FMA:
 * the kernels are built with -ffp-contract=off), the lanes holding different outputs; the k blocks
 * continue through y itself. That is the reference's order, so the result is the same bits; the clamp is
 * qv_clamp, the reference's qm_min(qm_max()) rule. A last block narrower than 32 columns (N not a
 * multiple of 32; the packed weights are 0 past N) runs on a copy of its y columns on the stack. */
#include "gemm_tile_f32.h"
#include "qllc_math.h"
#include "variants.h"

#define FC_NR 32   /* columns per packed block */
#define FC_KC 512  /* k per block: a 64 KiB slice of the packed block, read MR rows at a time */
#define FC_GV 4    /* blocks of 32 columns side by side for one row */
#define FC512_MR 6 /* avx512: 6 rows x 2 blocks = 24 zmm accumulators (8x1, 4x2, 12x1, 3x4 measured slower) */
#define FC512_NB 2
#define FC2_MR 4   /* avx2: 4 rows x 1 block = 16 accumulators of two ymm each */
#define FC_MR_MAX 8
#define FC_NB_MAX 4

#define UNROLL _Pragma("GCC unroll 16")

/* mr rows x nb blocks of 32 columns of c (row stride ldc; block j at c + 32 j), k0 .. k0 + kc of the
   product; packed block j at bp + j * bstride; first: start from init (NULL: 0) else from c; last: clamp. */
QLLC_INLINE void f32_tile(const int mr, const int nb, float *QLLC_RESTRICT c, int64_t ldc,
                          const float *QLLC_RESTRICT a, int64_t lda, const float *QLLC_RESTRICT bp, int64_t bstride,
                          int64_t kc, const float *QLLC_RESTRICT init, int first, int last, float lo, float hi) {
  qllc_v16f acc[FC_MR_MAX][2 * FC_NB_MAX];
  UNROLL for (int i = 0; i < mr; i++) UNROLL for (int v = 0; v < 2 * nb; v++) {
    if (first) acc[i][v] = init ? qv_load(init + 16 * v) : qv_splat(0.0f);
    else acc[i][v] = qv_load(c + i * ldc + 16 * v);
  }
  for (int64_t k = 0; k < kc; k++) {
    qllc_v16f bv[2 * FC_NB_MAX];
    UNROLL for (int v = 0; v < 2 * nb; v++) bv[v] = qv_load(bp + (v / 2) * bstride + k * FC_NR + 16 * (v % 2));
    UNROLL for (int i = 0; i < mr; i++) {
      const float s = a[i * lda + k];
      UNROLL for (int v = 0; v < 2 * nb; v++) acc[i][v] += s * bv[v];
    }
  }
  if (last) {
    const qllc_v16f l = qv_splat(lo), h = qv_splat(hi);
    UNROLL for (int i = 0; i < mr; i++) UNROLL for (int v = 0; v < 2 * nb; v++) acc[i][v] = qv_clamp(acc[i][v], l, h);
  }
  UNROLL for (int i = 0; i < mr; i++) UNROLL for (int v = 0; v < 2 * nb; v++) qv_store(c + i * ldc + 16 * v, acc[i][v]);
}

/* rows rows of nb blocks: tiles of mr_max rows, the rest by tiles of 4, 2 and 1 */
QLLC_INLINE void f32_rows(const int mr_max, const int nb, int64_t rows, float *QLLC_RESTRICT c, int64_t ldc,
                          const float *QLLC_RESTRICT a, int64_t lda, const float *QLLC_RESTRICT bp, int64_t bstride,
                          int64_t kc, const float *QLLC_RESTRICT init, int first, int last, float lo, float hi) {
  int64_t i = 0;
  for (; i + mr_max <= rows; i += mr_max)
    f32_tile(mr_max, nb, c + i * ldc, ldc, a + i * lda, lda, bp, bstride, kc, init, first, last, lo, hi);
  if (mr_max > 4 && i + 4 <= rows)
    f32_tile(4, nb, c + i * ldc, ldc, a + i * lda, lda, bp, bstride, kc, init, first, last, lo, hi), i += 4;
  if (mr_max > 2 && i + 2 <= rows)
    f32_tile(2, nb, c + i * ldc, ldc, a + i * lda, lda, bp, bstride, kc, init, first, last, lo, hi), i += 2;
  for (; i < rows; i++) f32_tile(1, nb, c + i * ldc, ldc, a + i * lda, lda, bp, bstride, kc, init, first, last, lo, hi);
}

/* The kernel body: tiles of mr rows x nbw blocks of 32 columns. Loop order: k blocks outside (a KC slice
   of the packed columns stays in L2 while every row sweeps it), groups of nbw column blocks, then row
   tiles; the column blocks left over run one at a time, the last narrower one on a copy (tmp: mr x 32).
   One row (M == 1) takes FC_GV column blocks at once. */
QLLC_INLINE void fc_f32_body(const int mr, const int nbw, float *QLLC_RESTRICT y, const float *QLLC_RESTRICT x,
                             const float *QLLC_RESTRICT wp, const float *QLLC_RESTRICT b, int64_t M, int64_t N,
                             int64_t K, float lo, float hi, float *QLLC_RESTRICT tmp) {
  const int64_t nb_full = N / FC_NR, nb_all = (N + FC_NR - 1) / FC_NR, bstride = K * FC_NR;
  if (K == 0) { /* bias only */
    for (int64_t m = 0; m < M; m++)
      for (int64_t n = 0; n < N; n++) y[m * N + n] = qm_min(qm_max(b ? b[n] : 0.0f, lo), hi);
    return;
  }
  for (int64_t k0 = 0; k0 < K; k0 += FC_KC) {
    const int64_t kc = K - k0 < FC_KC ? K - k0 : FC_KC;
    const int first = k0 == 0, last = k0 + kc == K;
    const float *xk = x + k0, *wk = wp + k0 * FC_NR;
    int64_t nb = 0;
    if (M == 1)
      for (; nb + FC_GV <= nb_full; nb += FC_GV)
        f32_tile(1, FC_GV, y + nb * FC_NR, N, xk, K, wk + nb * bstride, bstride, kc, b ? b + nb * FC_NR : NULL,
                 first, last, lo, hi);
    for (; nb + nbw <= nb_full; nb += nbw)
      f32_rows(mr, nbw, M, y + nb * FC_NR, N, xk, K, wk + nb * bstride, bstride, kc, b ? b + nb * FC_NR : NULL, first,
               last, lo, hi);
    for (; nb < nb_full; nb++)
      f32_rows(mr, 1, M, y + nb * FC_NR, N, xk, K, wk + nb * bstride, bstride, kc, b ? b + nb * FC_NR : NULL, first,
               last, lo, hi);
    if (nb_full < nb_all) { /* the last, narrower block: on a copy of its columns, mr rows at a time */
      const int64_t n0 = nb_full * FC_NR, nn = N - n0;
      float init[FC_NR];
      for (int64_t j = 0; j < FC_NR; j++) init[j] = b && j < nn ? b[n0 + j] : 0.0f;
      for (int64_t m0 = 0; m0 < M; m0 += mr) {
        const int64_t rows = M - m0 < mr ? M - m0 : mr;
        if (!first)
          for (int64_t i = 0; i < rows; i++)
            for (int64_t j = 0; j < FC_NR; j++) tmp[i * FC_NR + j] = j < nn ? y[(m0 + i) * N + n0 + j] : 0.0f;
        f32_rows(mr, 1, rows, tmp, FC_NR, xk + m0 * K, K, wk + nb_full * bstride, bstride, kc, b ? init : NULL, first,
                 last, lo, hi);
        for (int64_t i = 0; i < rows; i++)
          for (int64_t j = 0; j < nn; j++) y[(m0 + i) * N + n0 + j] = tmp[i * FC_NR + j];
      }
    }
  }
}

__attribute__((target("avx512f"))) void qllc_k_fc_f32_f32_f32__avx512(float *y, const float *x, const float *wp,
                                                                     const float *bias, int64_t M, int64_t N,
                                                                     int64_t K, float act_lo, float act_hi,
                                                                     uint8_t *scratch) {
  fc_f32_body(FC512_MR, FC512_NB, y, x, wp, bias, M, N, K, act_lo, act_hi, (float *)scratch);
}

__attribute__((target("avx2"))) void qllc_k_fc_f32_f32_f32__avx2(float *y, const float *x, const float *wp,
                                                               const float *bias, int64_t M, int64_t N, int64_t K,
                                                               float act_lo, float act_hi, uint8_t *scratch) {
  fc_f32_body(FC2_MR, 1, y, x, wp, bias, M, N, K, act_lo, act_hi, (float *)scratch);
}
