/* libjit/bitcode/kernels_qdq.h: kernels for models that arrive already quantized (issue 6): ONNX
 * QuantizeLinear/DequantizeLinear with per-axis or run-time parameters, DynamicQuantizeLinear,
 * MatMulInteger, ConvInteger, and QLinearMatMul/QLinearConv whose scales are only known at run time.
 *
 * These are the ONNX operators' own definitions, computed as onnxruntime does; they exist because a
 * model may give scales, zero points and even weights as graph inputs. When the parameters are
 * constants the compiler uses kernels_q.h instead (the fused layers with compile-time requantization,
 * see src/quant/qdq.c). Argument order: outputs, inputs, parameter arrays, int64_t shapes.
 *
 * Rounding (float -> integer): round half to even of a float32 value clamped to the type's range first
 * (as QuantizeLinear), by the 1.5 * 2^23 trick: kernels call no libc.
 *
 * quantize_axis:   x[outer][C][inner]: y = saturate(round(x / scale[c]) + zp[c]); per tensor is C = 1.
 * dequantize_axis: y = (float)(x - zp[c]) * scale[c]  (x may be i32: DequantizeLinear of an int32 bias,
 *                  whose zero point is 0).
 * dynamic_quantize (DynamicQuantizeLinear, uint8): lo = min(0, min x), hi = max(0, max x),
 *                  s = (hi - lo) / 255, zp = saturate(round(-lo / s)), y = saturate(round(x / s) + zp).
 *                  All-zero x: s = 0 would divide by zero; the kernel writes s = 0, zp = 0, y = 0 (what
 *                  the formula's limit gives and onnxruntime writes).
 * matmul_integer:  y[b][m][n] = sum_k (a - a_zp[a_zp_n == 1 ? 0 : m]) * (b - b_zp[b_zp_n == 1 ? 0 : n]),
 *                  int32, batches and offsets as qllc_k_matmul_f32_f32_f32.
 * conv_integer:    y = sum (x - x_zp) * (w - w_zp[w_zp_n == 1 ? 0 : m]), int32; padded positions read
 *                  x_zp (contribute 0).
 * qlinear_matmul / qlinear_conv: acc as the integer ops (+ bias[m] for conv), then
 *                  y = saturate(round(clamp((float)acc * M, qmin - y_zp, qmax - y_zp)) + y_zp) with
 *                  M = x_scale * w_scale[c] / y_scale computed in float (onnxruntime's
 *                  MlasRequantizeOutput); w_scale/w_zp have w_n entries (1 or one per output column /
 *                  channel).
 */
#ifndef QLLC_KERNELS_QDQ_H
#define QLLC_KERNELS_QDQ_H
#include "qllc_kernel.h"

#define QLLC_QDQ_AXIS(T, t)                                                                                    \
  void qllc_k_quantize_axis_f32_##t(T *y, const float *x, const float *scale, const T *zp, int64_t outer,      \
                                    int64_t C, int64_t inner);                                                 \
  void qllc_k_dequantize_axis_##t##_f32(float *y, const T *x, const float *scale, const T *zp, int64_t outer,  \
                                        int64_t C, int64_t inner);
QLLC_QDQ_AXIS(int8_t, i8)
QLLC_QDQ_AXIS(uint8_t, u8)
#undef QLLC_QDQ_AXIS
void qllc_k_dequantize_axis_i32_f32(float *y, const int32_t *x, const float *scale, const int32_t *zp, int64_t outer,
                                    int64_t C, int64_t inner);

void qllc_k_dynamic_quantize_f32_u8(uint8_t *y, float *y_scale, uint8_t *y_zp, const float *x, int64_t count);

#define QLLC_INTEGER_OPS(TA, ta, TB, tb)                                                                       \
  void qllc_k_matmul_integer_##ta##_##tb##_i32(int32_t *y, const TA *a, const TB *b, int64_t batches,         \
                                               int64_t M, int64_t N, int64_t K, const int64_t *a_off,         \
                                               const int64_t *b_off, const TA *a_zp, int64_t a_zp_n,          \
                                               const TB *b_zp, int64_t b_zp_n);                               \
  void qllc_k_conv_integer_##ta##_##tb##_i32(int32_t *y, const TA *x, const TB *w, const TA *x_zp,            \
                                             const TB *w_zp, int64_t w_zp_n, int64_t N, int64_t C, int64_t H, \
                                             int64_t W, int64_t M, int64_t OH, int64_t OW, int64_t KH,        \
                                             int64_t KW, int64_t stride_h, int64_t stride_w, int64_t pad_top, \
                                             int64_t pad_left, int64_t dil_h, int64_t dil_w, int64_t group);
QLLC_INTEGER_OPS(uint8_t, u8, uint8_t, u8)
QLLC_INTEGER_OPS(uint8_t, u8, int8_t, i8)
QLLC_INTEGER_OPS(int8_t, i8, int8_t, i8)
QLLC_INTEGER_OPS(int8_t, i8, uint8_t, u8)
#undef QLLC_INTEGER_OPS

#define QLLC_QLINEAR_OPS(TA, ta, TB, tb, TY, ty)                                                               \
  void qllc_k_qlinear_matmul_##ta##_##tb##_##ty(TY *y, const TA *a, const TB *b, int64_t batches, int64_t M,  \
                                                int64_t N, int64_t K, const int64_t *a_off,                   \
                                                const int64_t *b_off, const float *a_scale, const TA *a_zp,   \
                                                const float *b_scale, const TB *b_zp, int64_t b_n,            \
                                                const float *y_scale, const TY *y_zp);                        \
  void qllc_k_qlinear_conv_##ta##_##tb##_##ty(TY *y, const TA *x, const TB *w, const int32_t *bias,           \
                                              const float *x_scale, const TA *x_zp, const float *w_scale,     \
                                              const TB *w_zp, int64_t w_n, const float *y_scale,              \
                                              const TY *y_zp, int64_t N, int64_t C, int64_t H, int64_t W,     \
                                              int64_t M, int64_t OH, int64_t OW, int64_t KH, int64_t KW,      \
                                              int64_t stride_h, int64_t stride_w, int64_t pad_top,            \
                                              int64_t pad_left, int64_t dil_h, int64_t dil_w, int64_t group);
QLLC_QLINEAR_OPS(uint8_t, u8, uint8_t, u8, uint8_t, u8)
QLLC_QLINEAR_OPS(uint8_t, u8, int8_t, i8, uint8_t, u8)
QLLC_QLINEAR_OPS(int8_t, i8, int8_t, i8, int8_t, i8)
QLLC_QLINEAR_OPS(int8_t, i8, uint8_t, u8, int8_t, i8)
#undef QLLC_QLINEAR_OPS

#endif
