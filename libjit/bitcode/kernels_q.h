/* libjit/bitcode/kernels_q.h: signatures of the quantized kernels (int8, uint8, int16, 16x8).
 *
 * The contract between src/quant (which computes every parameter once, at compile time: see
 * src/quant/quant.h, qllc_qnode), src/lower (which emits the calls with arguments in exactly this
 * order: outputs, inputs, weights/bias and parameter arrays, int64_t shapes, then int32_t/float
 * quantization scalars) and libjit (which implements them). Layouts as kernels_f32.h: NCHW, row-major,
 * counts and strides in elements.
 *
 * ---- Numerics (docs/numerics.md) -------------------------------------------------------------------
 * Real value r = s * (q - z). Weights are always symmetric (z_w = 0), so no kernel takes a weight
 * zero point (except matmul, whose second operand is an activation).
 *
 * REQUANT(acc, m, n): the one rounding of every integer kernel, bit-exact with
 *   int32_t qllc_requant_apply(int64_t acc, int32_t m, int32_t n)       (src/quant/requant.c)
 *   = saturate_int32((acc * m + (n > 0 ? 1 << (n - 1) : 0)) >> n)        arithmetic shift: half rounds UP
 * with m in [0, 2^31) (normally [2^30, 2^31)) and n in [0, 62].
 *   - 32-bit accumulators (8-bit inputs): compute in int64; |acc * m| < 2^62, + 2^61 < 2^63: exact.
 *   - 64-bit accumulators (int16 inputs, 16x8): compute the product in __int128 (multiply and shift
 *     only: a 128-bit division would call a libgcc helper, which kernels may not do); exact for every
 *     int64 acc (|acc * m| < 2^94).
 * Then the output is   y = clamp((int64_t)REQUANT(...) + z_y, act_lo, act_hi)
 * where act_lo/act_hi are in the output integer domain, already within the output type's range and
 * already include any fused Relu/Clip.
 *
 * Float <-> integer (quantize kernels only): q = saturate(round_half_even(x / scale) + z), the float
 * division in float32, as ONNX QuantizeLinear; kernels must not call rintf (libc): use the
 * 1.5 * 2^23 trick (|x / scale| < 2^22 after clamping to the type's range first) or an equivalent.
 *
 * ---- Fused layers (Conv, FC/Gemm, MatMul+Add with constant weights) ---------------------------------
 *   acc[c] = bias[c] + sum_k x[k] * w[c][k]            bias already holds q_b[c] - z_x * sum_k w[c][k]
 *   y[c]   = clamp(REQUANT(acc[c], m[c], n[c]) + z_y, act_lo, act_hi)
 * Padded input positions read z_x (real 0), which the folded bias cancels. bias, m and n are CONST
 * arrays of `channels` entries (never NULL: a layer without bias gets the folded zero-point term
 * alone, per-tensor weights get their one m/n repeated). Accumulators:
 *   8-bit in  (i8/u8 x i8):   int32 acc, int32_t bias[]. Overflow-free while |bias| + K * 255 * 127 < 2^31.
 *   16-bit in (i16 x i16, i16 x i8): int64 acc, int64_t bias[]; no overflow for K < 2^32.
 *
 * Weight layouts (packed at compile time by the lowering; ISA variants may define their own):
 *   conv2d: w[M][C/group][KH][KW] (as the float kernel and ONNX).
 *   fc:     w[N][K], i.e. the FC node's W as is, NOT the float kernel's [K][N]: each output's weights
 *           are contiguous along the reduction, which is the shape of every integer dot-product
 *           instruction (VNNI vpdpbusd, SDOT, SMMLA take groups of 4/8 consecutive k).
 *
 * ---- Element combinations ----------------------------------------------------------------------------
 * 8-bit activations are i8 or u8 (u8 under the symmetric_uint8 schema), so fused kernels exist for
 * every in/out pair: <in>_i8_<out> with in, out in {i8, u8}; int16: i16_i16_i16 and the 16x8 mode
 * i16_i8_i16. Single-input kernels come as _i8_i8, _u8_u8, _i16_i16 (input and output of the same
 * kind; rescaling between kinds is `requantize`).
 */
#ifndef QLLC_KERNELS_Q_H
#define QLLC_KERNELS_Q_H
#include "qllc_kernel.h"

/* ---- fused Conv ------------------------------------------------------------------------------------
 * x[N][C][H][W] -> y[N][M][OH][OW], shapes and attributes as qllc_k_conv2d_f32_f32_f32. */
#define QLLC_CONV2D_Q(TI, ti, TW, tw, TO, to, TB)                                                              \
  void qllc_k_conv2d_##ti##_##tw##_##to(TO *y, const TI *x, const TW *w, const TB *bias, const int32_t *m,      \
                                        const int32_t *n, int64_t N, int64_t C, int64_t H, int64_t W,         \
                                        int64_t M, int64_t OH, int64_t OW, int64_t KH, int64_t KW,            \
                                        int64_t stride_h, int64_t stride_w, int64_t pad_top, int64_t pad_left, \
                                        int64_t dil_h, int64_t dil_w, int64_t group, int32_t z_x, int32_t z_y, \
                                        int32_t act_lo, int32_t act_hi);

/* ---- fused FullyConnected (Gemm, MatMul + Add with a constant [K][N] operand) ------------------------
 * x[M][K], w[N][K] -> y[M][N]. */
#define QLLC_FC_Q(TI, ti, TW, tw, TO, to, TB)                                                                  \
  void qllc_k_fc_##ti##_##tw##_##to(TO *y, const TI *x, const TW *w, const TB *bias, const int32_t *m,          \
                                    const int32_t *n, int64_t M, int64_t N, int64_t K, int32_t z_x,           \
                                    int32_t z_y, int32_t act_lo, int32_t act_hi);

/* ---- per-channel affine (BatchNorm that could not fold, as a depthwise 1x1 layer) ---------------------
 * x[N][C][inner]: acc = bias[c] + x * a[c], a quantized like weights (symmetric, per channel);
 * y = clamp(REQUANT(acc, m[c], n[c]) + z_y, act_lo, act_hi). Accumulators and bias as the fused layers. */
#define QLLC_AFFINE_Q(TI, ti, TW, tw, TO, to, TB)                                                              \
  void qllc_k_channel_affine_##ti##_##tw##_##to(TO *y, const TI *x, const TW *a, const TB *bias,                \
                                                const int32_t *m, const int32_t *n, int64_t N, int64_t C,     \
                                                int64_t inner, int32_t z_y, int32_t act_lo, int32_t act_hi);

#define QLLC_LAYER_Q(TI, ti, TW, tw, TO, to, TB) \
  QLLC_CONV2D_Q(TI, ti, TW, tw, TO, to, TB)      \
  QLLC_FC_Q(TI, ti, TW, tw, TO, to, TB)          \
  QLLC_AFFINE_Q(TI, ti, TW, tw, TO, to, TB)
QLLC_LAYER_Q(int8_t, i8, int8_t, i8, int8_t, i8, int32_t)
QLLC_LAYER_Q(int8_t, i8, int8_t, i8, uint8_t, u8, int32_t)
QLLC_LAYER_Q(uint8_t, u8, int8_t, i8, int8_t, i8, int32_t)
QLLC_LAYER_Q(uint8_t, u8, int8_t, i8, uint8_t, u8, int32_t)
QLLC_LAYER_Q(int16_t, i16, int16_t, i16, int16_t, i16, int64_t)
QLLC_LAYER_Q(int16_t, i16, int8_t, i8, int16_t, i16, int64_t) /* 16x8 */
#undef QLLC_LAYER_Q

/* ---- MatMul of two activations (batched, numpy broadcasting as qllc_k_matmul_f32_f32_f32) -------------
 * acc = sum_k (a - z_a) * (b - z_b); y = clamp(REQUANT(acc, m, n) + z_y, act_lo, act_hi); per-tensor m, n.
 * 8-bit: int32 acc (K * 255^2 < 2^31: K < 33025); int16: int64 acc. */
#define QLLC_MATMUL_Q(T, t)                                                                                    \
  void qllc_k_matmul_##t##_##t##_##t(T *y, const T *a, const T *b, int64_t batches, int64_t M, int64_t N,      \
                                     int64_t K, const int64_t *a_off, const int64_t *b_off, int32_t z_a,       \
                                     int32_t z_b, int32_t m, int32_t n, int32_t z_y, int32_t act_lo,          \
                                     int32_t act_hi);

/* ---- elementwise with rescale (broadcasting as qllc_k_add_f32_f32_f32) -------------------------------
 * add: y = clamp(z_y + ((a - z_a) * m_a + (b - z_b) * m_b + 2^(n-1)) >> n, lo, hi)    one shared shift n
 * sub: the same with - m_b.   (qllc_requant_make_shared gives m_a, m_b, n: a single rounding.)
 *      int64 for all precisions: |a - z_a| <= 2^16, m < 2^31: each term < 2^47. (The 8-bit kernels get
 *      the same bits in int32 when n >= 16: q_ops.c, qk_sum32.)
 * mul: y = clamp(REQUANT((a - z_a) * (b - z_b), m, n) + z_y, lo, hi),  M = s_a * s_b / s_y
 *      (the product needs 32 bits for int16: its REQUANT needs __int128, as the 64-bit accumulators.) */
#define QLLC_ELTWISE_Q(T, t)                                                                                   \
  void qllc_k_add_##t##_##t##_##t(T *y, const T *a, const T *b, int64_t rank, const int64_t *dims,              \
                                  const int64_t *a_strides, const int64_t *b_strides, int32_t z_a, int32_t m_a, \
                                  int32_t z_b, int32_t m_b, int32_t n, int32_t z_y, int32_t act_lo,           \
                                  int32_t act_hi);                                                            \
  void qllc_k_sub_##t##_##t##_##t(T *y, const T *a, const T *b, int64_t rank, const int64_t *dims,              \
                                  const int64_t *a_strides, const int64_t *b_strides, int32_t z_a, int32_t m_a, \
                                  int32_t z_b, int32_t m_b, int32_t n, int32_t z_y, int32_t act_lo,           \
                                  int32_t act_hi);                                                            \
  void qllc_k_mul_##t##_##t##_##t(T *y, const T *a, const T *b, int64_t rank, const int64_t *dims,              \
                                  const int64_t *a_strides, const int64_t *b_strides, int32_t z_a, int32_t z_b, \
                                  int32_t m, int32_t n, int32_t z_y, int32_t act_lo, int32_t act_hi);

/* ---- single-input kernels ---------------------------------------------------------------------------
 * requantize: y = clamp(REQUANT(x - z_x, m, n) + z_y, lo, hi) over rows x cols with strides as
 *             qllc_k_copy2d (Concat of inputs with other scales, and any change of scale).
 *             When input and output parameters are equal, the lowering uses qllc_k_copy2d instead.
 * clamp:      y = min(max(x, lo), hi): a Relu/Clip that could not be fused (output params = input's).
 * maxpool2d:  as the float kernel; output params = input params, no arithmetic.
 * avgpool2d:  acc = sum over the window of (x - z_x) (int32 for 8-bit, int64 for int16);
 *             y = clamp(REQUANT(acc, m[cnt], n[cnt]) + z_y, lo, hi), cnt = the number of elements
 *             averaged at that position (1 .. KH*KW; constant unless padding is excluded). m and n are
 *             CONST arrays of KH*KW + 1 entries, entry cnt = s_x / (s_y * cnt): no division in the kernel.
 * global_avgpool: y[nc] = clamp(REQUANT(sum_hw (x - z_x), m, n) + z_y, lo, hi), M = s_x / (s_y * HW).
 * lut:        y = table[x - qmin(T)]: Sigmoid, Tanh, LeakyRelu (any elementwise unary op) at 8 bits;
 *             the table (256 entries of the output type) is computed by the quantizer as
 *             quantize_out(f(dequantize_in(q))) for every q.
 * lut_i16:    int16 by interpolation in a 513-entry table of int16_t: u = x + 32768 (0 .. 65535),
 *             i = u >> 7, f = u & 127, y = table[i] + ((table[i+1] - table[i]) * f + 64) >> 7, where
 *             table[j] = quantize_out(f(dequantize_in(-32768 + 128 * j))) for j = 0 .. 512 (entry 512
 *             is f evaluated at 32768, one step past the end). The error is the interpolation error of
 *             f over 128 input steps plus 1/2 LSB. A 65536-entry exact table (128 KiB per node) was
 *             rejected for firmware size.
 * softmax:    along the middle axis of x[outer][axis_len][inner]; for each row, d = max - x (>= 0),
 *             e = exp_table[d] (8-bit: 256 entries, exp_table[d] = round(2^24 * exp(-s_x * d)));
 *             int16: 513 entries over d in steps of 128, interpolated as lut_i16, 2^24 scaled);
 *             S = sum e (int64); y = clamp(z_y + (e * recip + S / 2) / S, lo, hi) with recip = 1 / s_y
 *             an integer (the quantizer fixes s_y = 1 / recip: 256 for u8, 256 with z = -128 for i8,
 *             32768 for i16). int64 division, never 128-bit. */
#define QLLC_UNARY_Q(T, t)                                                                                     \
  void qllc_k_requantize_##t##_##t(T *y, const T *x, int64_t rows, int64_t cols, int64_t y_stride,              \
                                   int64_t x_stride, int32_t z_x, int32_t m, int32_t n, int32_t z_y,          \
                                   int32_t act_lo, int32_t act_hi);                                           \
  void qllc_k_clamp_##t##_##t(T *y, const T *x, int64_t count, int32_t lo, int32_t hi);                        \
  void qllc_k_maxpool2d_##t##_##t(T *y, const T *x, int64_t NC, int64_t H, int64_t W, int64_t OH, int64_t OW,   \
                                  int64_t KH, int64_t KW, int64_t stride_h, int64_t stride_w, int64_t pad_top, \
                                  int64_t pad_left, int64_t pad_bottom, int64_t pad_right, int64_t dil_h,     \
                                  int64_t dil_w);                                                             \
  void qllc_k_avgpool2d_##t##_##t(T *y, const T *x, const int32_t *m, const int32_t *n, int64_t NC, int64_t H,  \
                                  int64_t W, int64_t OH, int64_t OW, int64_t KH, int64_t KW, int64_t stride_h, \
                                  int64_t stride_w, int64_t pad_top, int64_t pad_left, int64_t pad_bottom,    \
                                  int64_t pad_right, int64_t count_include_pad, int32_t z_x, int32_t z_y,     \
                                  int32_t act_lo, int32_t act_hi);                                            \
  void qllc_k_global_avgpool_##t##_##t(T *y, const T *x, int64_t NC, int64_t HW, int32_t z_x, int32_t m,       \
                                       int32_t n, int32_t z_y, int32_t act_lo, int32_t act_hi);               \
  void qllc_k_softmax_##t##_##t(T *y, const T *x, const int32_t *exp_table, int64_t outer, int64_t axis_len,   \
                                int64_t inner, int32_t recip, int32_t z_y, int32_t act_lo, int32_t act_hi);

QLLC_MATMUL_Q(int8_t, i8)
QLLC_MATMUL_Q(uint8_t, u8)
QLLC_MATMUL_Q(int16_t, i16)
QLLC_ELTWISE_Q(int8_t, i8)
QLLC_ELTWISE_Q(uint8_t, u8)
QLLC_ELTWISE_Q(int16_t, i16)
QLLC_UNARY_Q(int8_t, i8)
QLLC_UNARY_Q(uint8_t, u8)
QLLC_UNARY_Q(int16_t, i16)
/* The channel-last twins of the 8-bit maxpool2d and global_avgpool (libjit/bitcode/q_ops.c): the
 * reference's arguments, then C (the channels: NC = N * C) and the layouts of x and y (0 NCHW, 1 NHWC);
 * the reference's bytes in every layout. src/lower/layout.c calls one where the pool's input or output
 * is channel-last (kernels.def, QTWIN). global_avgpool's output (N x C x 1 x 1) is the same bytes in
 * both layouts. */
#define QLLC_POOL_CL_Q(T, t)                                                                                   \
  void qllc_k_maxpool2dcl_##t##_##t(T *y, const T *x, int64_t NC, int64_t H, int64_t W, int64_t OH, int64_t OW, \
                                    int64_t KH, int64_t KW, int64_t stride_h, int64_t stride_w, int64_t pad_top, \
                                    int64_t pad_left, int64_t pad_bottom, int64_t pad_right, int64_t dil_h,     \
                                    int64_t dil_w, int64_t C, int64_t x_nhwc, int64_t y_nhwc);                  \
  void qllc_k_global_avgpoolcl_##t##_##t(T *y, const T *x, int64_t NC, int64_t HW, int32_t z_x, int32_t m,       \
                                         int32_t n, int32_t z_y, int32_t act_lo, int32_t act_hi, int64_t C,     \
                                         int64_t x_nhwc, int64_t y_nhwc);
QLLC_POOL_CL_Q(int8_t, i8)
QLLC_POOL_CL_Q(uint8_t, u8)
/* requantize between 8 and 16 bits (mixed precision, issue 13): as requantize, input and output kinds differ */
#define QLLC_REQUANT_X(TI, ti, TO, to)                                                                       \
  void qllc_k_requantize_##ti##_##to(TO *y, const TI *x, int64_t rows, int64_t cols, int64_t y_stride,        \
                                     int64_t x_stride, int32_t z_x, int32_t m, int32_t n, int32_t z_y,        \
                                     int32_t act_lo, int32_t act_hi);
QLLC_REQUANT_X(int8_t, i8, int16_t, i16)
QLLC_REQUANT_X(uint8_t, u8, int16_t, i16)
QLLC_REQUANT_X(int16_t, i16, int8_t, i8)
QLLC_REQUANT_X(int16_t, i16, uint8_t, u8)
#undef QLLC_REQUANT_X
#undef QLLC_MATMUL_Q
#undef QLLC_ELTWISE_Q
#undef QLLC_UNARY_Q

void qllc_k_lut_i8_i8(int8_t *y, const int8_t *x, const int8_t *table, int64_t count);
void qllc_k_lut_u8_u8(uint8_t *y, const uint8_t *x, const uint8_t *table, int64_t count);
void qllc_k_lut_i16_i16(int16_t *y, const int16_t *x, const int16_t *table, int64_t count);

/* ---- the model's boundary ---------------------------------------------------------------------------
 * quantize:   y = saturate(round_half_even(x / scale) + z)   (float32 division, as QuantizeLinear)
 * dequantize: y = (float)(x - z) * scale                      (as DequantizeLinear) */
#define QLLC_QDQ(T, t)                                                                                         \
  void qllc_k_quantize_f32_##t(T *y, const float *x, int64_t count, float scale, int32_t z);                   \
  void qllc_k_dequantize_##t##_f32(float *y, const T *x, int64_t count, float scale, int32_t z);
QLLC_QDQ(int8_t, i8)
QLLC_QDQ(uint8_t, u8)
QLLC_QDQ(int16_t, i16)
#undef QLLC_QDQ

/* Views and copies (transpose, copy2d, copy, pad with the integer zero point as value) are the
 * integer instantiations already declared in kernels_f32.h. */

/* ---- transformer and mobile ops (issue 15; q_ops_ext.c), for i8, u8 and i16 ----
 * reduce_sum:   y[o][i] = clamp(REQUANT(sum_a (x[o][a][i] - z_x), m, n) + z_y, lo, hi) (ReduceSum
 *               M = s_x / s_y, ReduceMean M = s_x / (s_y len)); int64 sum.
 * reduce_max:   max along the axis (same parameters in and out).
 * max, min:     two inputs (broadcast as add): t_a = ((a - z_a) m_a + 2^(n-1)) >> n, likewise t_b, with the
 *               shared shift n of add; y = clamp(max(t_a, t_b) + z_y, lo, hi) (min likewise).
 * lut_channel:  y[b][c][i] = table_c[x] for x[N][C][inner], one lut table per channel (PRelu's slope):
 *               table[C][256] at 8 bits, table[C][513] interpolated as lut_i16 at 16 bits.
 * resize_linear: as the float kernel with weights in Q14 (int32), the four products summed in int64,
 *               rounded (v + 2^27) >> 28; same parameters in and out.
 * layernorm:    over x[outer][len]: S = sum q, Q = sum q^2 (int64), D = len Q - S^2; in float,
 *               inv = 1 / sqrt(D + len^2 eps_q), y = clamp(rne((len q - S) inv g[i] + b[i]), lo, hi)
 *               with eps_q = eps / s_x^2, g = gamma / s_y, b = beta / s_y + z_y. */
#define QLLC_EXT_Q(T, t)                                                                                       \
  void qllc_k_reduce_sum_##t##_##t(T *y, const T *x, int64_t outer, int64_t len, int64_t inner, int32_t z_x,   \
                                   int32_t m, int32_t n, int32_t z_y, int32_t act_lo, int32_t act_hi);        \
  void qllc_k_reduce_max_##t##_##t(T *y, const T *x, int64_t outer, int64_t len, int64_t inner);               \
  void qllc_k_max_##t##_##t##_##t(T *y, const T *a, const T *b, int64_t rank, const int64_t *dims,              \
                                  const int64_t *a_strides, const int64_t *b_strides, int32_t z_a, int32_t m_a, \
                                  int32_t z_b, int32_t m_b, int32_t n, int32_t z_y, int32_t act_lo,             \
                                  int32_t act_hi);                                                              \
  void qllc_k_min_##t##_##t##_##t(T *y, const T *a, const T *b, int64_t rank, const int64_t *dims,              \
                                  const int64_t *a_strides, const int64_t *b_strides, int32_t z_a, int32_t m_a, \
                                  int32_t z_b, int32_t m_b, int32_t n, int32_t z_y, int32_t act_lo,             \
                                  int32_t act_hi);                                                              \
  void qllc_k_lut_channel_##t##_##t(T *y, const T *x, const T *table, int64_t N, int64_t C, int64_t inner);    \
  void qllc_k_resize_linear_##t##_##t(T *y, const T *x, int64_t NC, int64_t H, int64_t W, int64_t OH,          \
                                      int64_t OW, const int64_t *iy, const int64_t *ix, const int32_t *wy,     \
                                      const int32_t *wx);                                                      \
  void qllc_k_layernorm_##t##_##t(T *y, const T *x, const float *g, const float *b, int64_t outer, int64_t len, \
                                  float eps_q, int32_t act_lo, int32_t act_hi);
QLLC_EXT_Q(int8_t, i8)
QLLC_EXT_Q(uint8_t, u8)
QLLC_EXT_Q(int16_t, i16)
#undef QLLC_EXT_Q

#endif
