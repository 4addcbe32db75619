/* libjit/bitcode/fc.c: fully connected and ONNX Gemm, float (batched MatMul: matmul.c).
 *
 * Both accumulate rows: y[m][*] starts at the bias (or 0) and adds x[m][k] * w[k][*] for k
 * ascending, so the innermost loop runs over contiguous n without a float reduction and the
 * summation order per element is fixed (bias, then k ascending). Gemm with trans_b reads b[n][k]
 * row-wise instead, as a dot product per element (k ascending, same order). */
#include "kernels_f32.h"
#include "qllc_math.h"

QLLC_KERNEL void qllc_k_fc_f32_f32_f32(float *QLLC_RESTRICT y, const float *QLLC_RESTRICT x,
                                       const float *QLLC_RESTRICT w, const float *QLLC_RESTRICT b, int64_t M,
                                       int64_t N, int64_t K, float act_lo, float act_hi) {
  for (int64_t m = 0; m < M; m++) {
    float *yr = y + m * N;
    const float *xr = x + m * K;
    if (b)
      for (int64_t n = 0; n < N; n++) yr[n] = b[n];
    else
      for (int64_t n = 0; n < N; n++) yr[n] = 0.0f;
    for (int64_t k = 0; k < K; k++) {
      const float xv = xr[k];
      const float *wr = w + k * N;
      for (int64_t n = 0; n < N; n++) yr[n] += xv * wr[n];
    }
    for (int64_t n = 0; n < N; n++) yr[n] = qm_min(qm_max(yr[n], act_lo), act_hi);
  }
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
