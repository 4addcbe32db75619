/* examples/custom_kernel/kernels.c: a user's kernel file for qllc (docs/kernels.md, "Writing your own
 * kernels"). Compiled by CMake (examples/custom_kernel/custom_kernel.cmake), once per target:
 *
 *   clang-19 -O2 -emit-llvm -c kernels.c -I include -o kernels_x86_64.bc
 *   clang-19 -O2 -emit-llvm -c kernels.c -I include --target=aarch64-unknown-linux-gnu -o kernels_aarch64.bc
 *
 * and used as `qllc run|compile|info model.onnx --kernels kernels_x86_64.bc`.
 */
#include "qllc_kernel.h"

/* A custom op: com.acme:HardSwish with a float attribute `beta` and an int attribute `offset`:
 *   y = x * clamp(x + offset, 0, 6) * beta
 * Name: qllc_k_custom_<domain, '.' -> '_'>_<op type>_<input types>_<output types>.
 * Arguments: the output, the input, the output's dims, the input's dims (rank 2 here, as the model
 * declares them), then the attributes sorted by name: beta (float), offset (int64_t). Every argument
 * but the pointers is a compile-time constant, so after inlining the loop bounds are known. */
QLLC_KERNEL void qllc_k_custom_com_acme_HardSwish_f32_f32(float *QLLC_RESTRICT y, const float *QLLC_RESTRICT x,
                                                          int64_t y0, int64_t y1, int64_t x0, int64_t x1,
                                                          float beta, int64_t offset) {
  (void)x0, (void)x1; /* elementwise: the same shape as y */
  float off = (float)offset;
  for (int64_t i = 0; i < y0 * y1; i++) {
    float c = x[i] + off;
    c = c < 0.0f ? 0.0f : c > 6.0f ? 6.0f : c;
    y[i] = x[i] * c * beta;
  }
}

/* An override: the built-in Relu kernel's name and signature (libjit/bitcode/kernels_f32.h), with a
 * different body: a leaky ReLU of slope 1/8, so the effect is visible in the output. Every Relu node
 * that is not fused into a layer calls it. */
QLLC_KERNEL void qllc_k_relu_f32_f32(float *QLLC_RESTRICT y, const float *QLLC_RESTRICT x, int64_t n) {
  for (int64_t i = 0; i < n; i++) y[i] = x[i] > 0.0f ? x[i] : x[i] * 0.125f;
}
