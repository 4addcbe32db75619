/* libjit/bitcode/fc.c: fully connected and ONNX Gemm, float (batched MatMul: matmul.c).
 *
 * FC runs blocks of 8 rows x 32 columns on the register-blocked tile of gemm_tile_f32.h (as conv.c
 * does), the rest as below; the order of each sum is the same either way. Both accumulate rows: y[m][*] starts at the bias (or 0) and adds x[m][k] * w[k][*] for k
 * ascending, so the innermost loop runs over contiguous n without a float reduction and the
 * summation order per element is fixed (bias, then k ascending). Gemm with trans_b reads b[n][k]
 * row-wise instead, as a dot product per element (k ascending, same order). */
#include "kernels_f32.h"
#include "gemm_tile_f32.h"
#include "qllc_math.h"

/* Rows m_begin .. m_end-1, columns n_begin .. n_end-1 of y, row by row: the plain loop. */
QLLC_INLINE void fc_rows(float *QLLC_RESTRICT y, const float *QLLC_RESTRICT x, const float *QLLC_RESTRICT w,
                         const float *QLLC_RESTRICT b, int64_t m_begin, int64_t m_end, int64_t n_begin,
                         int64_t n_end, int64_t N, int64_t K, float act_lo, float act_hi) {
  for (int64_t m = m_begin; m < m_end; m++) {
    float *yr = y + m * N;
    const float *xr = x + m * K;
    if (b)
      for (int64_t n = n_begin; n < n_end; n++) yr[n] = b[n];
    else
      for (int64_t n = n_begin; n < n_end; n++) yr[n] = 0.0f;
    for (int64_t k = 0; k < K; k++) {
      const float xv = xr[k];
      const float *wr = w + k * N;
      for (int64_t n = n_begin; n < n_end; n++) yr[n] += xv * wr[n];
    }
    for (int64_t n = n_begin; n < n_end; n++) yr[n] = qm_min(qm_max(yr[n], act_lo), act_hi);
  }
}

/* Blocks of 8 rows x 32 columns run on the register-blocked tile (gemm_tile_f32.h): the tile's 16
 * accumulators stay in registers over all of k, where the row loop loads and stores y for every k. The
 * rest (fewer than 8 rows, fewer than 32 columns; batch 1 is all rest) uses the row loop. Both sum
 * bias, then k ascending, so the result does not depend on which path an element took. */
QLLC_KERNEL void qllc_k_fc_f32_f32_f32(float *QLLC_RESTRICT y, const float *QLLC_RESTRICT x,
                                       const float *QLLC_RESTRICT w, const float *QLLC_RESTRICT b, int64_t M,
                                       int64_t N, int64_t K, float act_lo, float act_hi) {
  const int64_t n_tiles = N / QLLC_TILE_NR * QLLC_TILE_NR; /* columns covered by whole tiles */
  int64_t m0 = 0;
  for (; m0 + QLLC_TILE_MR <= M; m0 += QLLC_TILE_MR) {
    for (int64_t n0 = 0; n0 < n_tiles; n0 += QLLC_TILE_NR) {
      float *c = y + m0 * N + n0;
      for (int64_t i = 0; i < QLLC_TILE_MR; i++)
        for (int64_t j = 0; j < QLLC_TILE_NR; j++) c[i * N + j] = b ? b[n0 + j] : 0.0f;
      qllc_gemm_tile_8x32(c, N, x + m0 * K, K, w + n0, N, K, NULL, 1, act_lo, act_hi);
    }
    fc_rows(y, x, w, b, m0, m0 + QLLC_TILE_MR, n_tiles, N, N, K, act_lo, act_hi);
  }
  fc_rows(y, x, w, b, m0, M, 0, N, N, K, act_lo, act_hi);
}

QLLC_KERNEL void qllc_k_gemm_f32_f32_f32(float *QLLC_RESTRICT y, const float *QLLC_RESTRICT a,
                                         const float *QLLC_RESTRICT b, const float *QLLC_RESTRICT c, int64_t M,
                                         int64_t N, int64_t K, int64_t trans_a, int64_t trans_b, float alpha,
                                         float beta, int64_t c_stride_m, int64_t c_stride_n, float act_lo,
                                         float act_hi) {
  /* a[m][k] is a[m * a_sm + k * a_sk]. */
  const int64_t a_sm = trans_a ? 1 : K, a_sk = trans_a ? M : 1;
  for (int64_t m = 0; m < M; m++) {
    float *yr = y + m * N;
    if (trans_b) {
      for (int64_t n = 0; n < N; n++) {
        const float *br = b + n * K;
        float s = 0.0f;
        for (int64_t k = 0; k < K; k++) s += a[m * a_sm + k * a_sk] * br[k];
        yr[n] = s;
      }
    } else {
      for (int64_t n = 0; n < N; n++) yr[n] = 0.0f;
      for (int64_t k = 0; k < K; k++) {
        const float av = a[m * a_sm + k * a_sk];
        const float *br = b + k * N;
        for (int64_t n = 0; n < N; n++) yr[n] += av * br[n];
      }
    }
    if (c) {
      const float *cr = c + m * c_stride_m;
      for (int64_t n = 0; n < N; n++) yr[n] = alpha * yr[n] + beta * cr[n * c_stride_n];
    } else {
      for (int64_t n = 0; n < N; n++) yr[n] = alpha * yr[n];
    }
    for (int64_t n = 0; n < N; n++) yr[n] = qm_min(qm_max(yr[n], act_lo), act_hi);
  }
}
