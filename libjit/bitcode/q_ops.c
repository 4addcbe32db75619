/* libjit/bitcode/q_ops.c: scalar reference kernels of the quantized non-layer ops: elementwise with
 * rescale, requantize (concat), clamp, pools, lookup tables, softmax, and quantize/dequantize at the
 * model's boundary. Numerics as written in kernels_q.h. */
#include "q_common.h"

/* Walks y (contiguous dims[rank]) at `pos` and the broadcast offsets ao, bo of a and b. */
#define BROADCAST_LOOP(BODY)                                                                                     \
  int64_t idx[8] = {0, 0, 0, 0, 0, 0, 0, 0}, total = 1, ao = 0, bo = 0;                                          \
  for (int64_t d = 0; d < rank; d++) total *= dims[d];                                                           \
  for (int64_t pos = 0; pos < total; pos++) {                                                                          \
    BODY;                                                                                                        \
    for (int64_t d = rank - 1; d >= 0; d--) {                                                                    \
      idx[d]++, ao += a_strides[d], bo += b_strides[d];                                                          \
      if (idx[d] < dims[d]) break;                                                                               \
      ao -= a_strides[d] * dims[d], bo -= b_strides[d] * dims[d], idx[d] = 0;                                    \
    }                                                                                                            \
  }

#define ELTWISE(T, t)                                                                                            \
  QLLC_KERNEL void qllc_k_add_##t##_##t##_##t(T *QLLC_RESTRICT y, const T *a, const T *b, int64_t rank,           \
                                              const int64_t *dims, const int64_t *a_strides,                     \
                                              const int64_t *b_strides, int32_t z_a, int32_t m_a, int32_t z_b,   \
                                              int32_t m_b, int32_t n, int32_t z_y, int32_t act_lo,               \
                                              int32_t act_hi) {                                                  \
    int64_t half = n > 0 ? (int64_t)1 << (n - 1) : 0;                                                            \
    BROADCAST_LOOP({                                                                                             \
      int64_t v = ((int64_t)((int32_t)a[ao] - z_a) * m_a + (int64_t)((int32_t)b[bo] - z_b) * m_b + half) >> n;  \
      y[pos] = (T)qk_out(v, z_y, act_lo, act_hi);                                                                  \
    })                                                                                                           \
  }                                                                                                              \
  QLLC_KERNEL void qllc_k_sub_##t##_##t##_##t(T *QLLC_RESTRICT y, const T *a, const T *b, int64_t rank,           \
                                              const int64_t *dims, const int64_t *a_strides,                     \
                                              const int64_t *b_strides, int32_t z_a, int32_t m_a, int32_t z_b,   \
                                              int32_t m_b, int32_t n, int32_t z_y, int32_t act_lo,               \
                                              int32_t act_hi) {                                                  \
    int64_t half = n > 0 ? (int64_t)1 << (n - 1) : 0;                                                            \
    BROADCAST_LOOP({                                                                                             \
      int64_t v = ((int64_t)((int32_t)a[ao] - z_a) * m_a - (int64_t)((int32_t)b[bo] - z_b) * m_b + half) >> n;  \
      y[pos] = (T)qk_out(v, z_y, act_lo, act_hi);                                                                  \
    })                                                                                                           \
  }                                                                                                              \
  QLLC_KERNEL void qllc_k_mul_##t##_##t##_##t(T *QLLC_RESTRICT y, const T *a, const T *b, int64_t rank,           \
                                              const int64_t *dims, const int64_t *a_strides,                     \
                                              const int64_t *b_strides, int32_t z_a, int32_t z_b, int32_t m,     \
                                              int32_t n, int32_t z_y, int32_t act_lo, int32_t act_hi) {          \
    BROADCAST_LOOP({                                                                                             \
      int64_t p = (int64_t)((int32_t)a[ao] - z_a) * (int64_t)((int32_t)b[bo] - z_b);                             \
      y[pos] = (T)qk_out(qk_req64(p, m, n), z_y, act_lo, act_hi);                                                  \
    })                                                                                                           \
  }

#define UNARY(T, t, QMIN)                                                                                        \
  QLLC_KERNEL void qllc_k_requantize_##t##_##t(T *y, const T *x, int64_t rows, int64_t cols, int64_t y_stride,    \
                                               int64_t x_stride, int32_t z_x, int32_t m, int32_t n, int32_t z_y, \
                                               int32_t act_lo, int32_t act_hi) {                                 \
    for (int64_t r = 0; r < rows; r++)                                                                           \
      for (int64_t c = 0; c < cols; c++)                                                                         \
        y[r * y_stride + c] =                                                                                    \
            (T)qk_out(qk_req32((int32_t)x[r * x_stride + c] - z_x, m, n), z_y, act_lo, act_hi);                  \
  }                                                                                                              \
  QLLC_KERNEL void qllc_k_clamp_##t##_##t(T *y, const T *x, int64_t count, int32_t lo, int32_t hi) {               \
    for (int64_t i = 0; i < count; i++) y[i] = (T)qk_out(x[i], 0, lo, hi);                                        \
  }                                                                                                              \
  QLLC_KERNEL void qllc_k_maxpool2d_##t##_##t(T *QLLC_RESTRICT y, const T *QLLC_RESTRICT x, int64_t NC, int64_t H, \
                                              int64_t W, int64_t OH, int64_t OW, int64_t KH, int64_t KW,          \
                                              int64_t stride_h, int64_t stride_w, int64_t pad_top,               \
                                              int64_t pad_left, int64_t pad_bottom, int64_t pad_right,           \
                                              int64_t dil_h, int64_t dil_w) {                                    \
    (void)pad_bottom, (void)pad_right;                                                                           \
    for (int64_t p = 0; p < NC; p++)                                                                             \
      for (int64_t oh = 0; oh < OH; oh++)                                                                        \
        for (int64_t ow = 0; ow < OW; ow++) {                                                                    \
          int32_t best = QMIN;                                                                                   \
          for (int64_t kh = 0; kh < KH; kh++) {                                                                  \
            int64_t ih = oh * stride_h - pad_top + kh * dil_h;                                                   \
            if (ih < 0 || ih >= H) continue;                                                                     \
            for (int64_t kw = 0; kw < KW; kw++) {                                                                \
              int64_t iw = ow * stride_w - pad_left + kw * dil_w;                                                \
              if (iw < 0 || iw >= W) continue;                                                                   \
              int32_t v = x[(p * H + ih) * W + iw];                                                              \
              if (v > best) best = v;                                                                            \
            }                                                                                                    \
          }                                                                                                      \
          y[(p * OH + oh) * OW + ow] = (T)best;                                                                  \
        }                                                                                                        \
  }                                                                                                              \
  QLLC_KERNEL void qllc_k_avgpool2d_##t##_##t(                                                                    \
      T *QLLC_RESTRICT y, const T *QLLC_RESTRICT x, const int32_t *m, const int32_t *n, int64_t NC, int64_t H,     \
      int64_t W, int64_t OH, int64_t OW, int64_t KH, int64_t KW, int64_t stride_h, int64_t stride_w,             \
      int64_t pad_top, int64_t pad_left, int64_t pad_bottom, int64_t pad_right, int64_t count_include_pad,        \
      int32_t z_x, int32_t z_y, int32_t act_lo, int32_t act_hi) {                                                \
    for (int64_t p = 0; p < NC; p++)                                                                             \
      for (int64_t oh = 0; oh < OH; oh++)                                                                        \
        for (int64_t ow = 0; ow < OW; ow++) {                                                                    \
          int64_t sum = 0, cnt = 0;                                                                              \
          for (int64_t kh = 0; kh < KH; kh++) {                                                                  \
            int64_t ih = oh * stride_h - pad_top + kh;                                                           \
            for (int64_t kw = 0; kw < KW; kw++) {                                                                \
              int64_t iw = ow * stride_w - pad_left + kw;                                                        \
              if (ih >= 0 && ih < H && iw >= 0 && iw < W) {                                                      \
                sum += (int32_t)x[(p * H + ih) * W + iw] - z_x;                                                  \
                cnt++;                                                                                           \
              } else if (count_include_pad && ih >= -pad_top && ih < H + pad_bottom && iw >= -pad_left &&        \
                         iw < W + pad_right) {                                                                   \
                cnt++; /* a padded zero: (z_x - z_x) adds nothing */                                             \
              }                                                                                                  \
            }                                                                                                    \
          }                                                                                                      \
          y[(p * OH + oh) * OW + ow] = (T)(cnt ? qk_out(qk_req64(sum, m[cnt], n[cnt]), z_y, act_lo, act_hi)     \
                                             : qk_out(0, z_y, act_lo, act_hi));                                  \
        }                                                                                                        \
  }                                                                                                              \
  QLLC_KERNEL void qllc_k_global_avgpool_##t##_##t(T *QLLC_RESTRICT y, const T *QLLC_RESTRICT x, int64_t NC,       \
                                                   int64_t HW, int32_t z_x, int32_t m, int32_t n, int32_t z_y,   \
                                                   int32_t act_lo, int32_t act_hi) {                             \
    for (int64_t p = 0; p < NC; p++) {                                                                           \
      int64_t sum = 0;                                                                                           \
      for (int64_t i = 0; i < HW; i++) sum += (int32_t)x[p * HW + i] - z_x;                                      \
      y[p] = (T)qk_out(qk_req64(sum, m, n), z_y, act_lo, act_hi);                                                \
    }                                                                                                            \
  }

ELTWISE(int8_t, i8)
ELTWISE(uint8_t, u8)
ELTWISE(int16_t, i16)
UNARY(int8_t, i8, -128)
UNARY(uint8_t, u8, 0)
UNARY(int16_t, i16, -32768)

/* ---- tables ---- */
QLLC_KERNEL void qllc_k_lut_i8_i8(int8_t *y, const int8_t *x, const int8_t *table, int64_t count) {
  for (int64_t i = 0; i < count; i++) y[i] = table[(int32_t)x[i] + 128];
}
QLLC_KERNEL void qllc_k_lut_u8_u8(uint8_t *y, const uint8_t *x, const uint8_t *table, int64_t count) {
  for (int64_t i = 0; i < count; i++) y[i] = table[x[i]];
}
QLLC_INLINE int32_t interp513(const int32_t lo, const int32_t hi, int32_t f) { return lo + (((hi - lo) * f + 64) >> 7); }
QLLC_KERNEL void qllc_k_lut_i16_i16(int16_t *y, const int16_t *x, const int16_t *table, int64_t count) {
  for (int64_t i = 0; i < count; i++) {
    int32_t u = (int32_t)x[i] + 32768, j = u >> 7;
    y[i] = (int16_t)interp513(table[j], table[j + 1], u & 127);
  }
}

/* ---- softmax ---- */
#define SOFTMAX(T, t, WIDE)                                                                                      \
  QLLC_KERNEL void qllc_k_softmax_##t##_##t(T *QLLC_RESTRICT y, const T *QLLC_RESTRICT x, const int32_t *exp_table, \
                                            int64_t outer, int64_t axis_len, int64_t inner, int32_t recip,       \
                                            int32_t z_y, int32_t act_lo, int32_t act_hi) {                       \
    for (int64_t o = 0; o < outer; o++)                                                                          \
      for (int64_t i = 0; i < inner; i++) {                                                                      \
        const T *X = x + o * axis_len * inner + i;                                                               \
        T *Y = y + o * axis_len * inner + i;                                                                     \
        int32_t mx = X[0];                                                                                       \
        for (int64_t a = 1; a < axis_len; a++)                                                                   \
          if (X[a * inner] > mx) mx = X[a * inner];                                                              \
        int64_t S = 0;                                                                                           \
        for (int64_t a = 0; a < axis_len; a++) {                                                                 \
          int32_t d = mx - (int32_t)X[a * inner];                                                                \
          S += WIDE ? interp513(exp_table[d >> 7], exp_table[(d >> 7) + 1], d & 127) : exp_table[d];             \
        }                                                                                                        \
        for (int64_t a = 0; a < axis_len; a++) {                                                                 \
          int32_t d = mx - (int32_t)X[a * inner];                                                                \
          int64_t e = WIDE ? interp513(exp_table[d >> 7], exp_table[(d >> 7) + 1], d & 127) : exp_table[d];     \
          Y[a * inner] = (T)qk_out((e * recip + S / 2) / S, z_y, act_lo, act_hi);                                \
        }                                                                                                        \
      }                                                                                                          \
  }
SOFTMAX(int8_t, i8, 0)
SOFTMAX(uint8_t, u8, 0)
SOFTMAX(int16_t, i16, 1)

/* ---- the boundary ---- */
/* round half to even without libm: for |v| < 2^22, (v + 1.5 * 2^23) - 1.5 * 2^23 rounds to an integer
   in the default rounding mode (kernels are built with -ffp-contract=off, no fast-math). v is clamped
   to the type's range first, which is equivalent to rounding then saturating (the bounds are integers). */
#define QDQ(T, t, QMIN, QMAX)                                                                                    \
  QLLC_KERNEL void qllc_k_quantize_f32_##t(T *y, const float *x, int64_t count, float scale, int32_t z) {         \
    float lo = (float)(QMIN - z), hi = (float)(QMAX - z);                                                        \
    for (int64_t i = 0; i < count; i++) {                                                                        \
      float v = x[i] / scale;                                                                                    \
      if (v != v) v = 0;                                                                                         \
      if (v < lo) v = lo;                                                                                        \
      if (v > hi) v = hi;                                                                                        \
      float r = (v + 12582912.0f) - 12582912.0f; /* not folded: no fast-math */                                  \
      y[i] = (T)((int32_t)r + z);                                                                                \
    }                                                                                                            \
  }                                                                                                              \
  QLLC_KERNEL void qllc_k_dequantize_##t##_f32(float *y, const T *x, int64_t count, float scale, int32_t z) {     \
    for (int64_t i = 0; i < count; i++) y[i] = (float)((int32_t)x[i] - z) * scale;                               \
  }
QDQ(int8_t, i8, -128, 127)
QDQ(uint8_t, u8, 0, 255)
QDQ(int16_t, i16, -32768, 32767)
