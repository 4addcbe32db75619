/* libjit/bitcode/kernels_f32.h: signatures of the float kernels. This is the contract between
 * src/lower (which emits the calls, arguments in exactly this order) and libjit (which implements
 * them). Conventions: NCHW layouts, row-major, element counts and strides in elements (not bytes),
 * act_lo/act_hi are the fused activation clamp (-INFINITY/+INFINITY when none).
 * Outputs never alias inputs (the kernels declare them restrict). Implementations: one file per family
 * in libjit/bitcode (conv.c, fc.c, matmul.c, elementwise.c, activation.c, pool.c, softmax.c, affine.c,
 * move.c); docs/kernels.md lists them. */
#ifndef QLLC_KERNELS_F32_H
#define QLLC_KERNELS_F32_H
#include "qllc_kernel.h"

/* x[N][C][H][W], w[M][C/group][KH][KW], b[M] (may be NULL) -> y[N][M][OH][OW]. Zero padding. */
void qllc_k_conv2d_f32_f32_f32(float *y, const float *x, const float *w, const float *b, int64_t N, int64_t C,
                               int64_t H, int64_t W, int64_t M, int64_t OH, int64_t OW, int64_t KH, int64_t KW,
                               int64_t stride_h, int64_t stride_w, int64_t pad_top, int64_t pad_left,
                               int64_t dil_h, int64_t dil_w, int64_t group, float act_lo, float act_hi);

/* Fully connected: x[M][K], w[K][N] (packed at compile time: the transpose of the FC node's W[N][K], so
 * the inner loop runs over contiguous n), b[N] (may be NULL) -> y[M][N] = clamp(x W^T + b). */
void qllc_k_fc_f32_f32_f32(float *y, const float *x, const float *w, const float *b, int64_t M, int64_t N,
                           int64_t K, float act_lo, float act_hi);

/* ONNX Gemm: y[M][N] = clamp(alpha * op(a) op(b) + beta * c). op(a) is [M][K] (a stored [K][M] when
 * trans_a), op(b) is [K][N] (b stored [N][K] when trans_b). c may be NULL; else c[m][n] is read at
 * c[m * c_stride_m + n * c_stride_n] (strides 0 on broadcast dims). */
void qllc_k_gemm_f32_f32_f32(float *y, const float *a, const float *b, const float *c, int64_t M, int64_t N,
                             int64_t K, int64_t trans_a, int64_t trans_b, float alpha, float beta,
                             int64_t c_stride_m, int64_t c_stride_n, float act_lo, float act_hi);

/* Batched MatMul: for batch i, y[i][M][N] = a[a_off[i] ...][M][K] * b[b_off[i] ...][K][N].
 * a_off, b_off: element offsets of each batch's matrix (numpy broadcasting resolved at compile time). */
void qllc_k_matmul_f32_f32_f32(float *y, const float *a, const float *b, int64_t batches, int64_t M,
                               int64_t N, int64_t K, const int64_t *a_off, const int64_t *b_off);

/* Elementwise binary with numpy broadcasting: y has shape dims[rank] (contiguous); a and b are read
 * with element strides a_strides[rank], b_strides[rank] (0 on broadcast dims). rank in 1..8. */
#define QLLC_BINARY_F32(op)                                                                              \
  void qllc_k_##op##_f32_f32_f32(float *y, const float *a, const float *b, int64_t rank, const int64_t *dims, \
                                 const int64_t *a_strides, const int64_t *b_strides);
QLLC_BINARY_F32(add)
QLLC_BINARY_F32(sub)
QLLC_BINARY_F32(mul)
QLLC_BINARY_F32(div)
#undef QLLC_BINARY_F32

void qllc_k_relu_f32_f32(float *y, const float *x, int64_t n);
void qllc_k_leakyrelu_f32_f32(float *y, const float *x, int64_t n, float alpha);
void qllc_k_clip_f32_f32(float *y, const float *x, int64_t n, float lo, float hi);
void qllc_k_sigmoid_f32_f32(float *y, const float *x, int64_t n);
void qllc_k_tanh_f32_f32(float *y, const float *x, int64_t n);

/* Pools over x[NC][H][W] -> y[NC][OH][OW]. Padded positions never win a max; for the average they
 * count only when count_include_pad (and then only inside H+pad_top+pad_bottom, W+pad_left+pad_right). */
void qllc_k_maxpool2d_f32_f32(float *y, const float *x, int64_t NC, int64_t H, int64_t W, int64_t OH, int64_t OW,
                              int64_t KH, int64_t KW, int64_t stride_h, int64_t stride_w, int64_t pad_top,
                              int64_t pad_left, int64_t pad_bottom, int64_t pad_right, int64_t dil_h,
                              int64_t dil_w);
void qllc_k_avgpool2d_f32_f32(float *y, const float *x, int64_t NC, int64_t H, int64_t W, int64_t OH, int64_t OW,
                              int64_t KH, int64_t KW, int64_t stride_h, int64_t stride_w, int64_t pad_top,
                              int64_t pad_left, int64_t pad_bottom, int64_t pad_right, int64_t count_include_pad);
/* y[NC] = mean of x[NC][HW]. */
void qllc_k_global_avgpool_f32_f32(float *y, const float *x, int64_t NC, int64_t HW);

/* y[n][c][i] = x[n][c][i] * a[c] + b[c] for x[N][C][inner] (BatchNorm that did not fold). */
void qllc_k_channel_affine_f32_f32(float *y, const float *x, const float *a, const float *b, int64_t N,
                                   int64_t C, int64_t inner);

/* Softmax along the middle axis of x[outer][axis_len][inner]. */
void qllc_k_softmax_f32_f32(float *y, const float *x, int64_t outer, int64_t axis_len, int64_t inner);

/* Data movement, also instantiated for i8, u8, i16, i32 (same signatures, element type changed):
 * transpose: y (contiguous, shape out_dims[rank]) from x, where in_strides[d] is the element stride
 *            in x of output dimension d.
 * copy2d:    rows x cols elements, y[r * y_stride + c] = x[r * x_stride + c] (concat, slicing).
 * pad:       constant padding; y has out_dims, x has in_dims, placed at pads_begin. value for float;
 *            the integer variants take an int32_t value.
 * copy:      n contiguous elements. */
#define QLLC_MOVE_KERNELS(T, t)                                                                           \
  void qllc_k_transpose_##t##_##t(T *y, const T *x, int64_t rank, const int64_t *out_dims,               \
                                  const int64_t *in_strides);                                            \
  void qllc_k_copy2d_##t##_##t(T *y, const T *x, int64_t rows, int64_t cols, int64_t y_stride,          \
                               int64_t x_stride);                                                        \
  void qllc_k_copy_##t##_##t(T *y, const T *x, int64_t n);
QLLC_MOVE_KERNELS(float, f32)
QLLC_MOVE_KERNELS(int8_t, i8)
QLLC_MOVE_KERNELS(uint8_t, u8)
QLLC_MOVE_KERNELS(int16_t, i16)
QLLC_MOVE_KERNELS(int32_t, i32)
#undef QLLC_MOVE_KERNELS
void qllc_k_pad_f32_f32(float *y, const float *x, int64_t rank, const int64_t *out_dims, const int64_t *in_dims,
                        const int64_t *pads_begin, float value);
#define QLLC_PAD_INT(T, t)                                                                                \
  void qllc_k_pad_##t##_##t(T *y, const T *x, int64_t rank, const int64_t *out_dims, const int64_t *in_dims, \
                            const int64_t *pads_begin, int32_t value);
QLLC_PAD_INT(int8_t, i8)
QLLC_PAD_INT(uint8_t, u8)
QLLC_PAD_INT(int16_t, i16)
QLLC_PAD_INT(int32_t, i32)
#undef QLLC_PAD_INT

/* ---- transformer and mobile ops (issue 15; ops_ext.c) ----
 * unary: erf, gelu (x Phi(x), erf form), gelu_tanh (its tanh approximation), sqrt, exp, neg, reciprocal; pow by a constant exponent e (an
 * integer in [-16, 16] or +-0.5); hardsigmoid max(0, min(1, alpha x + beta)); hardswish x hardsigmoid
 * with alpha 1/6, beta 1/2.
 * layernorm: over x[outer][len] with gamma[len], beta[len] (may be NULL), epsilon eps.
 * reduce_sum/mean/max: along the middle axis of x[outer][len][inner] -> y[outer][inner].
 * prelu: y = a < 0 ? a * b : a with b broadcast (the binary kernels' arguments).
 * resize_nearest (every element kind): y[p][oy][ox] = x[p][iy[oy]][ix[ox]] for x[NC][H][W].
 * resize_linear: iy[2 oy], iy[2 oy + 1] the two source rows, wy[oy] the second's weight (same for
 * columns). */
#define QLLC_UNARY_EXT(op) void qllc_k_##op##_f32_f32(float *y, const float *x, int64_t n);
QLLC_UNARY_EXT(erf)
QLLC_UNARY_EXT(gelu)
QLLC_UNARY_EXT(gelu_tanh)
QLLC_UNARY_EXT(sqrt)
QLLC_UNARY_EXT(exp)
QLLC_UNARY_EXT(neg)
QLLC_UNARY_EXT(reciprocal)
QLLC_UNARY_EXT(hardswish)
#undef QLLC_UNARY_EXT
void qllc_k_pow_f32_f32(float *y, const float *x, int64_t n, float e);
void qllc_k_hardsigmoid_f32_f32(float *y, const float *x, int64_t n, float alpha, float beta);
void qllc_k_layernorm_f32_f32(float *y, const float *x, const float *gamma, const float *beta, int64_t outer,
                              int64_t len, float eps);
void qllc_k_layernorm_stats_f32_f32(float *mean, float *invstd, const float *x, int64_t outer, int64_t len,
                                    float eps);
void qllc_k_reduce_sum_f32_f32(float *y, const float *x, int64_t outer, int64_t len, int64_t inner);
void qllc_k_reduce_mean_f32_f32(float *y, const float *x, int64_t outer, int64_t len, int64_t inner);
void qllc_k_reduce_max_f32_f32(float *y, const float *x, int64_t outer, int64_t len, int64_t inner);
#define QLLC_MINMAX_F32(op)                                                                              \
  void qllc_k_##op##_f32_f32_f32(float *y, const float *a, const float *b, int64_t rank, const int64_t *dims,     \
                                 const int64_t *a_strides, const int64_t *b_strides);
QLLC_MINMAX_F32(max)
QLLC_MINMAX_F32(min)
#undef QLLC_MINMAX_F32
/* Where with a constant condition: y = mask[i] ? a : b, mask the condition broadcast to y (contiguous). */
void qllc_k_where_f32_f32_f32(float *y, const uint8_t *mask, const float *a, const float *b, int64_t rank,
                              const int64_t *dims, const int64_t *a_strides, const int64_t *b_strides);
/* ConvTranspose 2-D: x[N][C][H][W], w[C][M/group][KH][KW], b[M] (may be NULL) -> y[N][M][OH][OW]. */
void qllc_k_conv_transpose2d_f32_f32_f32(float *y, const float *x, const float *w, const float *b, int64_t N,
                                         int64_t C, int64_t H, int64_t W, int64_t M, int64_t OH, int64_t OW,
                                         int64_t KH, int64_t KW, int64_t stride_h, int64_t stride_w, int64_t pad_top,
                                         int64_t pad_left, int64_t dil_h, int64_t dil_w, int64_t group);
void qllc_k_prelu_f32_f32_f32(float *y, const float *a, const float *b, int64_t rank, const int64_t *dims,
                              const int64_t *a_strides, const int64_t *b_strides);
#define QLLC_RESIZE_NEAREST(T, t)                                                                        \
  void qllc_k_resize_nearest_##t##_##t(T *y, const T *x, int64_t NC, int64_t H, int64_t W, int64_t OH,     \
                                       int64_t OW, const int64_t *iy, const int64_t *ix);
QLLC_RESIZE_NEAREST(float, f32)
QLLC_RESIZE_NEAREST(int8_t, i8)
QLLC_RESIZE_NEAREST(uint8_t, u8)
QLLC_RESIZE_NEAREST(int16_t, i16)
#undef QLLC_RESIZE_NEAREST
void qllc_k_resize_linear_f32_f32(float *y, const float *x, int64_t NC, int64_t H, int64_t W, int64_t OH,
                                  int64_t OW, const int64_t *iy, const int64_t *ix, const float *wy,
                                  const float *wx);

/* ---- run-time operands and index-map padding (issue 15; ops_rt.c) ----
 * clip_rt: clip with bounds read from one-element tensors lo_p / hi_p when not NULL (else lo / hi).
 * pad_rt: the constant pad (pad above) with its value read from the one-element tensor value_p.
 * pad_map (every element kind): y[i_0]..[i_r-1] = x[sum_d map_d[i_d]], map the rank tables of
 * out_dims[d] element offsets (already multiplied by x's strides), concatenated: Pad modes reflect
 * and edge, whose source indices the lowering computes. */
void qllc_k_clip_rt_f32_f32(float *y, const float *x, int64_t n, const float *lo_p, const float *hi_p, float lo,
                            float hi);
/* batchnorm: BatchNormalization with its statistics given at run time (a constant one folds into the layer
 * before it or becomes channel_affine): x[N][C][inner], scale, bias, mean, var [C];
 * y = (x - mean) * (scale / sqrt(var + eps)) + bias, the factor in double. */
void qllc_k_batchnorm_f32_f32(float *y, const float *x, const float *scale, const float *bias, const float *mean,
                              const float *var, int64_t N, int64_t C, int64_t inner, float eps);
/* maxpool2d_idx: MaxPool (as maxpool2d) that also writes ind, the flat index into x of each maximum (the
 * first in window order), row major (h * W + w) or, storage_order 1, column major (w * H + h), plus
 * plane * H * W. */
void qllc_k_maxpool2d_idx_f32_f32(float *y, int64_t *ind, const float *x, int64_t NC, int64_t H, int64_t W, int64_t OH,
                                  int64_t OW, int64_t KH, int64_t KW, int64_t stride_h, int64_t stride_w,
                                  int64_t pad_top, int64_t pad_left, int64_t pad_bottom, int64_t pad_right,
                                  int64_t dil_h, int64_t dil_w, int64_t storage_order);
void qllc_k_pad_rt_f32_f32(float *y, const float *x, int64_t rank, const int64_t *out_dims, const int64_t *in_dims,
                           const int64_t *pads_begin, const float *value_p);
#define QLLC_PAD_MAP(T, t)                                                                               \
  void qllc_k_pad_map_##t##_##t(T *y, const T *x, int64_t rank, const int64_t *out_dims, const int64_t *map);
QLLC_PAD_MAP(float, f32)
QLLC_PAD_MAP(int8_t, i8)
QLLC_PAD_MAP(uint8_t, u8)
QLLC_PAD_MAP(int16_t, i16)
QLLC_PAD_MAP(int32_t, i32)
#undef QLLC_PAD_MAP

#endif
