/* libjit/bitcode/q_layers.c: scalar reference kernels of the fused quantized layers (Conv, FC,
 * per-channel affine) and of MatMul between activations. The contract, numerics and layouts are in
 * kernels_q.h; every ISA variant must reproduce these bits. One template per kernel, instantiated for
 * every element combination: the accumulator type and the requantization width come from the input
 * kind (int32 / qk_req32 for 8-bit, int64 / qk_req64 for int16). */
#include "q_common.h"

#define CONV2D(TI, ti, TW, tw, TO, to, TB, ACC, REQ)                                                             \
  QLLC_KERNEL void qllc_k_conv2d_##ti##_##tw##_##to(                                                              \
      TO *QLLC_RESTRICT y, const TI *QLLC_RESTRICT x, const TW *QLLC_RESTRICT w, const TB *QLLC_RESTRICT bias,     \
      const int32_t *m, const int32_t *n, int64_t N, int64_t C, int64_t H, int64_t W, int64_t M, int64_t OH,      \
      int64_t OW, int64_t KH, int64_t KW, int64_t stride_h, int64_t stride_w, int64_t pad_top, int64_t pad_left, \
      int64_t dil_h, int64_t dil_w, int64_t group, int32_t z_x, int32_t z_y, int32_t act_lo, int32_t act_hi) {    \
    int64_t Cg = C / group, Mg = M / group;                                                                       \
    for (int64_t b = 0; b < N; b++)                                                                               \
      for (int64_t oc = 0; oc < M; oc++) {                                                                        \
        int64_t g = oc / Mg;                                                                                      \
        for (int64_t oh = 0; oh < OH; oh++)                                                                       \
          for (int64_t ow = 0; ow < OW; ow++) {                                                                   \
            ACC acc = (ACC)bias[oc];                                                                              \
            for (int64_t ic = 0; ic < Cg; ic++)                                                                   \
              for (int64_t kh = 0; kh < KH; kh++) {                                                               \
                int64_t ih = oh * stride_h - pad_top + kh * dil_h;                                                \
                for (int64_t kw = 0; kw < KW; kw++) {                                                             \
                  int64_t iw = ow * stride_w - pad_left + kw * dil_w;                                             \
                  int32_t xv = (ih >= 0 && ih < H && iw >= 0 && iw < W)                                           \
                                   ? (int32_t)x[((b * C + g * Cg + ic) * H + ih) * W + iw]                        \
                                   : z_x; /* padding is real 0; the folded bias cancels it */                     \
                  acc += (ACC)xv * (ACC)w[((oc * Cg + ic) * KH + kh) * KW + kw];                                  \
                }                                                                                                 \
              }                                                                                                   \
            y[((b * M + oc) * OH + oh) * OW + ow] = (TO)qk_out(REQ(acc, m[oc], n[oc]), z_y, act_lo, act_hi);     \
          }                                                                                                       \
      }                                                                                                           \
  }

#define FC(TI, ti, TW, tw, TO, to, TB, ACC, REQ)                                                                 \
  QLLC_KERNEL void qllc_k_fc_##ti##_##tw##_##to(TO *QLLC_RESTRICT y, const TI *QLLC_RESTRICT x,                   \
                                                const TW *QLLC_RESTRICT w, const TB *QLLC_RESTRICT bias,          \
                                                const int32_t *m, const int32_t *n, int64_t M, int64_t N,        \
                                                int64_t K, int32_t z_x, int32_t z_y, int32_t act_lo,             \
                                                int32_t act_hi) {                                                 \
    (void)z_x; /* folded into the bias */                                                                         \
    for (int64_t i = 0; i < M; i++)                                                                               \
      for (int64_t c = 0; c < N; c++) {                                                                           \
        ACC acc = (ACC)bias[c];                                                                                   \
        for (int64_t k = 0; k < K; k++) acc += (ACC)x[i * K + k] * (ACC)w[c * K + k];                              \
        y[i * N + c] = (TO)qk_out(REQ(acc, m[c], n[c]), z_y, act_lo, act_hi);                                     \
      }                                                                                                           \
  }

#define AFFINE(TI, ti, TW, tw, TO, to, TB, ACC, REQ)                                                             \
  QLLC_KERNEL void qllc_k_channel_affine_##ti##_##tw##_##to(                                                      \
      TO *QLLC_RESTRICT y, const TI *QLLC_RESTRICT x, const TW *QLLC_RESTRICT a, const TB *QLLC_RESTRICT bias,     \
      const int32_t *m, const int32_t *n, int64_t N, int64_t C, int64_t inner, int32_t z_y, int32_t act_lo,       \
      int32_t act_hi) {                                                                                           \
    for (int64_t b = 0; b < N; b++)                                                                               \
      for (int64_t c = 0; c < C; c++)                                                                             \
        for (int64_t i = 0; i < inner; i++) {                                                                     \
          int64_t at = (b * C + c) * inner + i;                                                                   \
          ACC acc = (ACC)bias[c] + (ACC)x[at] * (ACC)a[c];                                                        \
          y[at] = (TO)qk_out(REQ(acc, m[c], n[c]), z_y, act_lo, act_hi);                                          \
        }                                                                                                         \
  }

#define LAYER(TI, ti, TW, tw, TO, to, TB, ACC, REQ) \
  CONV2D(TI, ti, TW, tw, TO, to, TB, ACC, REQ)      \
  FC(TI, ti, TW, tw, TO, to, TB, ACC, REQ)          \
  AFFINE(TI, ti, TW, tw, TO, to, TB, ACC, REQ)
LAYER(int8_t, i8, int8_t, i8, int8_t, i8, int32_t, int32_t, qk_req32)
LAYER(int8_t, i8, int8_t, i8, uint8_t, u8, int32_t, int32_t, qk_req32)
LAYER(uint8_t, u8, int8_t, i8, int8_t, i8, int32_t, int32_t, qk_req32)
LAYER(uint8_t, u8, int8_t, i8, uint8_t, u8, int32_t, int32_t, qk_req32)
LAYER(int16_t, i16, int16_t, i16, int16_t, i16, int64_t, int64_t, qk_req64)
LAYER(int16_t, i16, int8_t, i8, int16_t, i16, int64_t, int64_t, qk_req64)

#define MATMUL(T, t, ACC, REQ)                                                                                   \
  QLLC_KERNEL void qllc_k_matmul_##t##_##t##_##t(T *QLLC_RESTRICT y, const T *QLLC_RESTRICT a,                    \
                                                 const T *QLLC_RESTRICT b, int64_t batches, int64_t M, int64_t N, \
                                                 int64_t K, const int64_t *a_off, const int64_t *b_off,          \
                                                 int32_t z_a, int32_t z_b, int32_t m, int32_t n, int32_t z_y,    \
                                                 int32_t act_lo, int32_t act_hi) {                               \
    for (int64_t i = 0; i < batches; i++) {                                                                       \
      const T *A = a + a_off[i], *B = b + b_off[i];                                                               \
      T *Y = y + i * M * N;                                                                                       \
      for (int64_t r = 0; r < M; r++)                                                                             \
        for (int64_t c = 0; c < N; c++) {                                                                         \
          ACC acc = 0;                                                                                            \
          for (int64_t k = 0; k < K; k++) acc += (ACC)((int32_t)A[r * K + k] - z_a) * (ACC)((int32_t)B[k * N + c] - z_b); \
          Y[r * N + c] = (T)qk_out(REQ(acc, m, n), z_y, act_lo, act_hi);                                          \
        }                                                                                                         \
    }                                                                                                             \
  }
MATMUL(int8_t, i8, int32_t, qk_req32)
MATMUL(uint8_t, u8, int32_t, qk_req32)
MATMUL(int16_t, i16, int64_t, qk_req64)
