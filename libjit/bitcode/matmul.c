/* libjit/bitcode/matmul.c: batched MatMul, float. Like fc.c, each output row accumulates
 * a[m][k] * b[k][*] for k ascending over contiguous n (no float reduction in the inner loop). Each
 * batch's a and b come from per-batch element offsets, so numpy broadcasting of the batch dimensions
 * (resolved at compile time) costs nothing here. */
#include "kernels_f32.h"

QLLC_KERNEL void qllc_k_matmul_f32_f32_f32(float *QLLC_RESTRICT y, const float *QLLC_RESTRICT a,
                                           const float *QLLC_RESTRICT b, int64_t batches, int64_t M, int64_t N,
                                           int64_t K, const int64_t *QLLC_RESTRICT a_off,
                                           const int64_t *QLLC_RESTRICT b_off) {
  for (int64_t i = 0; i < batches; i++) {
    const float *ai = a + a_off[i];
    const float *bi = b + b_off[i];
    float *yi = y + i * M * N;
    for (int64_t m = 0; m < M; m++) {
      float *yr = yi + m * N;
      for (int64_t n = 0; n < N; n++) yr[n] = 0.0f;
      for (int64_t k = 0; k < K; k++) {
        const float av = ai[m * K + k];
        const float *br = bi + k * N;
        for (int64_t n = 0; n < N; n++) yr[n] += av * br[n];
      }
    }
  }
}
