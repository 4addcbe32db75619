/* examples/custom_kernel/kernels_q.c: the int8 variant of kernels.c's custom op, in a second kernel file
 * (docs/kernels.md, "Custom ops", quantization). Built by CMake like kernels.c (custom_kernel.cmake):
 *
 *   clang-19 -O2 -emit-llvm -c kernels_q.c -I include -o kernels_q_x86_64.bc
 *
 * and given next to it: `qllc compile model.onnx --precision int8 --profile p.yaml
 * --kernels kernels_x86_64.bc --kernels kernels_q_x86_64.bc`. Because this file defines
 * qllc_k_custom_com_acme_HardSwish_i8_i8, the quantizer quantizes the HardSwish node: its input arrives
 * as int8 and its output must be int8, with the scales and zero points the quantizer chose (the output's
 * from the profile), passed after the attributes: output (scale, zero point), then input.
 */
#include "qllc_kernel.h"

/* Round half away from zero, then saturate to int8 (no libm: a kernel may call nothing). */
static inline int8_t sat_i8(float q) {
  int32_t r = q >= 0.0f ? (int32_t)(q + 0.5f) : -(int32_t)(-q + 0.5f);
  return (int8_t)(r < -128 ? -128 : r > 127 ? 127 : r);
}

/* y = x * clamp(x + offset, 0, 6) * beta on real values: dequantize, compute in float, requantize. */
QLLC_KERNEL void qllc_k_custom_com_acme_HardSwish_i8_i8(int8_t *QLLC_RESTRICT y, const int8_t *QLLC_RESTRICT x,
                                                        int64_t y0, int64_t y1, int64_t x0, int64_t x1,
                                                        float beta, int64_t offset,
                                                        float y_scale, int32_t y_zero_point,
                                                        float x_scale, int32_t x_zero_point) {
  (void)x0, (void)x1; /* elementwise: the same shape as y */
  float off = (float)offset;
  for (int64_t i = 0; i < y0 * y1; i++) {
    float r = x_scale * (float)(x[i] - x_zero_point);
    float c = r + off;
    c = c < 0.0f ? 0.0f : c > 6.0f ? 6.0f : c;
    y[i] = sat_i8(r * c * beta / y_scale + (float)y_zero_point);
  }
}
