/* libjit/bitcode/affine.c: per-channel affine y = x * a[c] + b[c] over x[N][C][inner] (the
 * BatchNormalization that could not fold into a Conv or Gemm). Multiply then add: two roundings,
 * never an FMA (kernels are built with -ffp-contract=off), so every target gives the same bits. */
#include "kernels_f32.h"

QLLC_KERNEL void qllc_k_channel_affine_f32_f32(float *QLLC_RESTRICT y, const float *QLLC_RESTRICT x,
                                               const float *QLLC_RESTRICT a, const float *QLLC_RESTRICT b,
                                               int64_t N, int64_t C, int64_t inner) {
  for (int64_t n = 0; n < N; n++) {
    for (int64_t c = 0; c < C; c++) {
      const float av = a[c], bv = b[c];
      const int64_t base = (n * C + c) * inner;
      for (int64_t i = 0; i < inner; i++) y[base + i] = x[base + i] * av + bv;
    }
  }
}
