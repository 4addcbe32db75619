/* libjit/bitcode/q_qdq_ext.c: scalar kernels of kernels_qdq.h (pre-quantized ONNX models: per-axis and
 * run-time-parameter QuantizeLinear/DequantizeLinear, DynamicQuantizeLinear, MatMulInteger,
 * ConvInteger, QLinearMatMul/QLinearConv with run-time scales). Numerics as written there. */
#include "kernels_qdq.h"

/* round half to even of v, |v| < 2^22 (callers clamp to the type's range first) */
QLLC_INLINE float qd_rne(float v) { return (v + 12582912.0f) - 12582912.0f; }

/* saturate(round(v) + z) into [qmin, qmax]: v is clamped to [qmin - z, qmax - z] first (NaN -> 0) */
QLLC_INLINE int32_t qd_sat(float v, int32_t z, int32_t qmin, int32_t qmax) {
  float lo = (float)(qmin - z), hi = (float)(qmax - z);
  if (v != v) v = 0;
  if (v < lo) v = lo;
  if (v > hi) v = hi;
  return (int32_t)qd_rne(v) + z;
}

#define QDQ_AXIS(T, t, QMIN, QMAX)                                                                               \
  QLLC_KERNEL void qllc_k_quantize_axis_f32_##t(T *y, const float *x, const float *scale, const T *zp,            \
                                                int64_t outer, int64_t C, int64_t inner) {                       \
    for (int64_t o = 0; o < outer; o++)                                                                          \
      for (int64_t c = 0; c < C; c++) {                                                                          \
        float s = scale[c];                                                                                      \
        int32_t z = zp[c];                                                                                       \
        const float *xp = x + (o * C + c) * inner;                                                               \
        T *yp = y + (o * C + c) * inner;                                                                         \
        for (int64_t i = 0; i < inner; i++) yp[i] = (T)qd_sat(xp[i] / s, z, QMIN, QMAX);                          \
      }                                                                                                          \
  }                                                                                                              \
  QLLC_KERNEL void qllc_k_dequantize_axis_##t##_f32(float *y, const T *x, const float *scale, const T *zp,        \
                                                    int64_t outer, int64_t C, int64_t inner) {                   \
    for (int64_t o = 0; o < outer; o++)                                                                          \
      for (int64_t c = 0; c < C; c++) {                                                                          \
        float s = scale[c];                                                                                      \
        int32_t z = zp[c];                                                                                       \
        const T *xp = x + (o * C + c) * inner;                                                                   \
        float *yp = y + (o * C + c) * inner;                                                                     \
        for (int64_t i = 0; i < inner; i++) yp[i] = (float)((int64_t)xp[i] - z) * s;                             \
      }                                                                                                          \
  }
QDQ_AXIS(int8_t, i8, -128, 127)
QDQ_AXIS(uint8_t, u8, 0, 255)
#undef QDQ_AXIS

QLLC_KERNEL void qllc_k_dequantize_axis_i32_f32(float *y, const int32_t *x, const float *scale, const int32_t *zp,
                                                int64_t outer, int64_t C, int64_t inner) {
  for (int64_t o = 0; o < outer; o++)
    for (int64_t c = 0; c < C; c++) {
      float s = scale[c];
      int64_t z = zp[c];
      for (int64_t i = 0; i < inner; i++) y[(o * C + c) * inner + i] = (float)((int64_t)x[(o * C + c) * inner + i] - z) * s;
    }
}

QLLC_KERNEL void qllc_k_dynamic_quantize_f32_u8(uint8_t *y, float *y_scale, uint8_t *y_zp, const float *x,
                                                int64_t count) {
  float lo = 0.0f, hi = 0.0f;
  for (int64_t i = 0; i < count; i++) {
    if (x[i] < lo) lo = x[i];
    if (x[i] > hi) hi = x[i];
  }
  float s = (hi - lo) / 255.0f;
  if (!(s > 0.0f)) { /* all zeros (or NaN): nothing to scale */
    *y_scale = 0.0f;
    *y_zp = 0;
    for (int64_t i = 0; i < count; i++) y[i] = 0;
    return;
  }
  int32_t z = qd_sat(0.0f - lo / s, 0, 0, 255);
  *y_scale = s;
  *y_zp = (uint8_t)z;
  for (int64_t i = 0; i < count; i++) y[i] = (uint8_t)qd_sat(x[i] / s, z, 0, 255);
}

/* The integer convolution accumulator of output (nn, m, oh, ow): sum (x - zx) * (w - zw). */
#define CONV_ACC(TB, acc)                                                                                            \
  int64_t cg = C / group, mg = M / group, gi = m / mg;                                                           \
  const TB *wm = w + m * cg * KH * KW;                                                                           \
  for (int64_t ci = 0; ci < cg; ci++)                                                                            \
    for (int64_t kh = 0; kh < KH; kh++) {                                                                        \
      int64_t ih = oh * stride_h - pad_top + kh * dil_h;                                                         \
      for (int64_t kw = 0; kw < KW; kw++) {                                                                      \
        int64_t iw = ow * stride_w - pad_left + kw * dil_w;                                                      \
        int32_t xv = zx;                                                                                         \
        if (ih >= 0 && ih < H && iw >= 0 && iw < W) xv = x[((nn * C + gi * cg + ci) * H + ih) * W + iw];          \
        acc += (xv - zx) * ((int32_t)wm[(ci * KH + kh) * KW + kw] - zw);                                         \
      }                                                                                                          \
    }

#define INTEGER_OPS(TA, ta, TB, tb)                                                                              \
  QLLC_KERNEL void qllc_k_matmul_integer_##ta##_##tb##_i32(                                                      \
      int32_t *y, const TA *a, const TB *b, int64_t batches, int64_t M, int64_t N, int64_t K,                    \
      const int64_t *a_off, const int64_t *b_off, const TA *a_zp, int64_t a_zp_n, const TB *b_zp,                 \
      int64_t b_zp_n) {                                                                                          \
    for (int64_t bt = 0; bt < batches; bt++)                                                                     \
      for (int64_t i = 0; i < M; i++) {                                                                          \
        int32_t za = a_zp[a_zp_n == 1 ? 0 : i];                                                                  \
        for (int64_t j = 0; j < N; j++) {                                                                        \
          int32_t zb = b_zp[b_zp_n == 1 ? 0 : j], acc = 0;                                                       \
          for (int64_t k = 0; k < K; k++)                                                                        \
            acc += ((int32_t)a[a_off[bt] + i * K + k] - za) * ((int32_t)b[b_off[bt] + k * N + j] - zb);          \
          y[(bt * M + i) * N + j] = acc;                                                                         \
        }                                                                                                        \
      }                                                                                                          \
  }                                                                                                              \
  QLLC_KERNEL void qllc_k_conv_integer_##ta##_##tb##_i32(                                                        \
      int32_t *y, const TA *x, const TB *w, const TA *x_zp, const TB *w_zp, int64_t w_zp_n, int64_t N, int64_t C, \
      int64_t H, int64_t W, int64_t M, int64_t OH, int64_t OW, int64_t KH, int64_t KW, int64_t stride_h,          \
      int64_t stride_w, int64_t pad_top, int64_t pad_left, int64_t dil_h, int64_t dil_w, int64_t group) {         \
    int32_t zx = x_zp[0];                                                                                        \
    for (int64_t nn = 0; nn < N; nn++)                                                                           \
      for (int64_t m = 0; m < M; m++) {                                                                          \
        int32_t zw = w_zp[w_zp_n == 1 ? 0 : m];                                                                  \
        for (int64_t oh = 0; oh < OH; oh++)                                                                      \
          for (int64_t ow = 0; ow < OW; ow++) {                                                                  \
            int32_t acc = 0;                                                                                     \
            CONV_ACC(TB, acc)                                                                                      \
            y[((nn * M + m) * OH + oh) * OW + ow] = acc;                                                         \
          }                                                                                                      \
      }                                                                                                          \
  }
INTEGER_OPS(uint8_t, u8, uint8_t, u8)
INTEGER_OPS(uint8_t, u8, int8_t, i8)
INTEGER_OPS(int8_t, i8, int8_t, i8)
INTEGER_OPS(int8_t, i8, uint8_t, u8)
#undef INTEGER_OPS

#define QLINEAR_OPS(TA, ta, TB, tb, TY, ty, YMIN, YMAX)                                                          \
  QLLC_KERNEL void qllc_k_qlinear_matmul_##ta##_##tb##_##ty(                                                     \
      TY *y, const TA *a, const TB *b, int64_t batches, int64_t M, int64_t N, int64_t K, const int64_t *a_off,    \
      const int64_t *b_off, const float *a_scale, const TA *a_zp, const float *b_scale, const TB *b_zp,           \
      int64_t b_n, const float *y_scale, const TY *y_zp) {                                                       \
    int32_t za = a_zp[0], zy = y_zp[0];                                                                          \
    for (int64_t bt = 0; bt < batches; bt++)                                                                     \
      for (int64_t i = 0; i < M; i++)                                                                            \
        for (int64_t j = 0; j < N; j++) {                                                                        \
          int64_t c = b_n == 1 ? 0 : j;                                                                          \
          int32_t zb = b_zp[c], acc = 0;                                                                         \
          for (int64_t k = 0; k < K; k++)                                                                        \
            acc += ((int32_t)a[a_off[bt] + i * K + k] - za) * ((int32_t)b[b_off[bt] + k * N + j] - zb);          \
          float mult = a_scale[0] * b_scale[c] / y_scale[0];                                                     \
          y[(bt * M + i) * N + j] = (TY)qd_sat((float)acc * mult, zy, YMIN, YMAX);                               \
        }                                                                                                        \
  }                                                                                                              \
  QLLC_KERNEL void qllc_k_qlinear_conv_##ta##_##tb##_##ty(                                                       \
      TY *y, const TA *x, const TB *w, const int32_t *bias, const float *x_scale, const TA *x_zp,                \
      const float *w_scale, const TB *w_zp, int64_t w_n, const float *y_scale, const TY *y_zp, int64_t N,        \
      int64_t C, int64_t H, int64_t W, int64_t M, int64_t OH, int64_t OW, int64_t KH, int64_t KW,                 \
      int64_t stride_h, int64_t stride_w, int64_t pad_top, int64_t pad_left, int64_t dil_h, int64_t dil_w,        \
      int64_t group) {                                                                                           \
    int32_t zx = x_zp[0], zy = y_zp[0];                                                                          \
    for (int64_t nn = 0; nn < N; nn++)                                                                           \
      for (int64_t m = 0; m < M; m++) {                                                                          \
        int64_t c = w_n == 1 ? 0 : m;                                                                            \
        int32_t zw = w_zp[c];                                                                                    \
        float mult = x_scale[0] * w_scale[c] / y_scale[0];                                                       \
        for (int64_t oh = 0; oh < OH; oh++)                                                                      \
          for (int64_t ow = 0; ow < OW; ow++) {                                                                  \
            int32_t acc = bias[m];                                                                               \
            CONV_ACC(TB, acc)                                                                                      \
            y[((nn * M + m) * OH + oh) * OW + ow] = (TY)qd_sat((float)acc * mult, zy, YMIN, YMAX);               \
          }                                                                                                      \
      }                                                                                                          \
  }
QLINEAR_OPS(uint8_t, u8, uint8_t, u8, uint8_t, u8, 0, 255)
QLINEAR_OPS(uint8_t, u8, int8_t, i8, uint8_t, u8, 0, 255)
QLINEAR_OPS(int8_t, i8, int8_t, i8, int8_t, i8, -128, 127)
QLINEAR_OPS(int8_t, i8, uint8_t, u8, int8_t, i8, -128, 127)
#undef QLINEAR_OPS
