/* libjit/bitcode/move.c: data movement kernels (transpose, copy2d, copy, constant pad), instantiated
 * for f32, i8, u8, i16 and i32 by one macro per kernel; element type is all that changes.
 *
 * Rank-generic kernels walk all but the last dimension with an index counter (rank <= 8) and move the
 * last dimension as one loop, contiguous in y. Contiguous runs use memcpy/memset (the only libc a
 * kernel may call; LLVM expands them inline when the size is a small constant). */
#include "kernels_f32.h"

/* y (contiguous, out_dims) [i0..] = x[sum_d i_d * in_strides[d]]. */
#define TRANSPOSE(T, t)                                                                                 \
  QLLC_KERNEL void qllc_k_transpose_##t##_##t(T *QLLC_RESTRICT y, const T *QLLC_RESTRICT x, int64_t rank,  \
                                              const int64_t *out_dims, const int64_t *in_strides) {     \
    const int64_t inner = out_dims[rank - 1], s = in_strides[rank - 1];                                 \
    int64_t outer = 1;                                                                                  \
    for (int64_t d = 0; d < rank - 1; d++) outer *= out_dims[d];                                        \
    int64_t idx[8] = {0};                                                                               \
    int64_t off = 0;                                                                                    \
    for (int64_t o = 0; o < outer; o++) {                                                               \
      T *yr = y + o * inner;                                                                            \
      if (s == 1)                                                                                       \
        __builtin_memcpy(yr, x + off, (size_t)inner * sizeof(T));                                       \
      else                                                                                              \
        for (int64_t i = 0; i < inner; i++) yr[i] = x[off + i * s];                                     \
      for (int64_t d = rank - 2; d >= 0; d--) {                                                         \
        off += in_strides[d];                                                                           \
        if (++idx[d] < out_dims[d]) break;                                                              \
        off -= in_strides[d] * out_dims[d];                                                             \
        idx[d] = 0;                                                                                     \
      }                                                                                                 \
    }                                                                                                   \
  }

#define COPY2D(T, t)                                                                                    \
  QLLC_KERNEL void qllc_k_copy2d_##t##_##t(T *QLLC_RESTRICT y, const T *QLLC_RESTRICT x, int64_t rows,     \
                                           int64_t cols, int64_t y_stride, int64_t x_stride) {          \
    for (int64_t r = 0; r < rows; r++)                                                                  \
      __builtin_memcpy(y + r * y_stride, x + r * x_stride, (size_t)cols * sizeof(T));                   \
  }

#define COPY(T, t)                                                                                      \
  QLLC_KERNEL void qllc_k_copy_##t##_##t(T *QLLC_RESTRICT y, const T *QLLC_RESTRICT x, int64_t n) {        \
    __builtin_memcpy(y, x, (size_t)n * sizeof(T));                                                      \
  }

/* Constant pad: fill y with value, then copy each row of x to its place, x index i in dimension d going
 * to i + pads_begin[d]. A negative pads_begin (or an out_dims smaller than in_dims + pads_begin) crops:
 * only the part of x that lands inside y is copied. */
#define PAD(T, t, VT)                                                                                   \
  QLLC_KERNEL void qllc_k_pad_##t##_##t(T *QLLC_RESTRICT y, const T *QLLC_RESTRICT x, int64_t rank,        \
                                        const int64_t *out_dims, const int64_t *in_dims,                \
                                        const int64_t *pads_begin, VT value) {                          \
    const T v = (T)value;                                                                               \
    int64_t total = 1;                                                                                  \
    for (int64_t d = 0; d < rank; d++) total *= out_dims[d];                                            \
    for (int64_t i = 0; i < total; i++) y[i] = v;                                                       \
    /* per dimension, the x index range [lo, hi) that lands inside y, and the strides */                \
    int64_t lo[8], hi[8], xs[8], ys[8];                                                                 \
    int64_t xst = 1, yst = 1;                                                                           \
    for (int64_t d = rank - 1; d >= 0; d--) {                                                           \
      lo[d] = pads_begin[d] < 0 ? -pads_begin[d] : 0;                                                   \
      hi[d] = out_dims[d] - pads_begin[d] < in_dims[d] ? out_dims[d] - pads_begin[d] : in_dims[d];      \
      if (hi[d] <= lo[d]) return; /* nothing of x is inside y */                                        \
      xs[d] = xst;                                                                                      \
      ys[d] = yst;                                                                                      \
      xst *= in_dims[d];                                                                                \
      yst *= out_dims[d];                                                                               \
    }                                                                                                   \
    int64_t idx[8];                                                                                     \
    int64_t xo = 0, yo = 0;                                                                             \
    for (int64_t d = 0; d < rank; d++) {                                                                \
      idx[d] = lo[d];                                                                                   \
      xo += lo[d] * xs[d];                                                                              \
      yo += (lo[d] + pads_begin[d]) * ys[d];                                                            \
    }                                                                                                   \
    const int64_t n = hi[rank - 1] - lo[rank - 1];                                                      \
    for (;;) {                                                                                          \
      __builtin_memcpy(y + yo, x + xo, (size_t)n * sizeof(T));                                          \
      int64_t d = rank - 2;                                                                             \
      for (; d >= 0; d--) {                                                                             \
        xo += xs[d];                                                                                    \
        yo += ys[d];                                                                                    \
        if (++idx[d] < hi[d]) break;                                                                    \
        xo -= (hi[d] - lo[d]) * xs[d];                                                                  \
        yo -= (hi[d] - lo[d]) * ys[d];                                                                  \
        idx[d] = lo[d];                                                                                 \
      }                                                                                                 \
      if (d < 0) return;                                                                                \
    }                                                                                                   \
  }

#define MOVE_KERNELS(T, t) TRANSPOSE(T, t) COPY2D(T, t) COPY(T, t)
MOVE_KERNELS(float, f32)
MOVE_KERNELS(int8_t, i8)
MOVE_KERNELS(uint8_t, u8)
MOVE_KERNELS(int16_t, i16)
MOVE_KERNELS(int32_t, i32)
PAD(float, f32, float)
PAD(int8_t, i8, int32_t)
PAD(uint8_t, u8, int32_t)
PAD(int16_t, i16, int32_t)
PAD(int32_t, i32, int32_t)
