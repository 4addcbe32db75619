/* libjit/bitcode/q_ops_ext.c: integer kernels of the transformer and mobile ops (issue 15), int8,
 * uint8 and int16 (kernels_q.h says what each computes). Reductions, the resize weights and PRelu's
 * tables are integer; LayerNorm takes and gives integers but normalises in float (its statistics are
 * exact int64 sums; float only for 1/sqrt and the per-element affine, IEEE operations with no FMA
 * contraction, so the bits are the same on every target). */
#include "q_common.h"

/* round half to even of a float in [-2^22, 2^22] (adding 1.5 * 2^23 rounds in the FPU's default mode) */
QLLC_INLINE int32_t qk_rne(float v) {
  v = v > 4194304.0f ? 4194304.0f : v < -4194304.0f ? -4194304.0f : v;
  float r = (v + 12582912.0f) - 12582912.0f;
  return (int32_t)r;
}

#define QMINMAX(T, t)                                                                                          \
  QLLC_INLINE void qk_minmax_##t(T *QLLC_RESTRICT y, const T *a, const T *b, int64_t rank, const int64_t *dims,    \
                                 const int64_t *as, const int64_t *bs, int32_t z_a, int32_t m_a, int32_t z_b,    \
                                 int32_t m_b, int32_t n, int32_t z_y, int32_t act_lo, int32_t act_hi, int is_max) { \
    const int64_t half = n > 0 ? (int64_t)1 << (n - 1) : 0;                                                    \
    int64_t total = 1;                                                                                         \
    for (int64_t d = 0; d < rank; d++) total *= dims[d];                                                       \
    int64_t idx[8] = {0}, ao = 0, bo = 0;                                                                      \
    for (int64_t i = 0; i < total; i++) {                                                                      \
      int64_t u = ((int64_t)((int32_t)a[ao] - z_a) * m_a + half) >> n;                                          \
      int64_t v = ((int64_t)((int32_t)b[bo] - z_b) * m_b + half) >> n;                                          \
      y[i] = (T)qk_out(is_max ? (u > v ? u : v) : (u < v ? u : v), z_y, act_lo, act_hi);                       \
      for (int64_t d = rank - 1; d >= 0; d--) {                                                                \
        ao += as[d], bo += bs[d];                                                                              \
        if (++idx[d] < dims[d]) break;                                                                         \
        ao -= as[d] * dims[d], bo -= bs[d] * dims[d];                                                          \
        idx[d] = 0;                                                                                            \
      }                                                                                                        \
    }                                                                                                          \
  }
QMINMAX(int8_t, i8)
QMINMAX(uint8_t, u8)
QMINMAX(int16_t, i16)

#define QEXT(T, t, QMIN, WIDE)                                                                                 \
  /* sum over the middle axis of x[outer][len][inner], requantized (ReduceSum: M = s_x / s_y; ReduceMean:     \
     M = s_x / (s_y len)) */                                                                                 \
  QLLC_KERNEL void qllc_k_reduce_sum_##t##_##t(T *QLLC_RESTRICT y, const T *QLLC_RESTRICT x, int64_t outer,      \
                                               int64_t len, int64_t inner, int32_t z_x, int32_t m, int32_t n, \
                                               int32_t z_y, int32_t act_lo, int32_t act_hi) {                  \
    for (int64_t o = 0; o < outer; o++)                                                                        \
      for (int64_t i = 0; i < inner; i++) {                                                                    \
        int64_t s = 0;                                                                                         \
        for (int64_t a = 0; a < len; a++) s += (int32_t)x[(o * len + a) * inner + i] - z_x;                   \
        y[o * inner + i] = (T)qk_out(qk_req64(s, m, n), z_y, act_lo, act_hi);                                  \
      }                                                                                                        \
  }                                                                                                            \
  QLLC_KERNEL void qllc_k_reduce_max_##t##_##t(T *QLLC_RESTRICT y, const T *QLLC_RESTRICT x, int64_t outer,      \
                                               int64_t len, int64_t inner) {                                   \
    for (int64_t o = 0; o < outer; o++)                                                                        \
      for (int64_t i = 0; i < inner; i++) {                                                                    \
        T mx = x[o * len * inner + i];                                                                         \
        for (int64_t a = 1; a < len; a++) {                                                                    \
          T v = x[(o * len + a) * inner + i];                                                                  \
          mx = v > mx ? v : mx;                                                                                \
        }                                                                                                      \
        y[o * inner + i] = mx;                                                                                 \
      }                                                                                                        \
  }                                                                                                            \
  /* Max / Min of two inputs each rescaled to the output: t = ((x - z) m + 2^(n-1)) >> n, as add's terms */ \
  QLLC_KERNEL void qllc_k_max_##t##_##t##_##t(T *QLLC_RESTRICT y, const T *a, const T *b, int64_t rank,            \
                                              const int64_t *dims, const int64_t *as, const int64_t *bs,       \
                                              int32_t z_a, int32_t m_a, int32_t z_b, int32_t m_b, int32_t n,   \
                                              int32_t z_y, int32_t act_lo, int32_t act_hi) {                   \
    qk_minmax_##t(y, a, b, rank, dims, as, bs, z_a, m_a, z_b, m_b, n, z_y, act_lo, act_hi, 1);                 \
  }                                                                                                            \
  QLLC_KERNEL void qllc_k_min_##t##_##t##_##t(T *QLLC_RESTRICT y, const T *a, const T *b, int64_t rank,            \
                                              const int64_t *dims, const int64_t *as, const int64_t *bs,       \
                                              int32_t z_a, int32_t m_a, int32_t z_b, int32_t m_b, int32_t n,   \
                                              int32_t z_y, int32_t act_lo, int32_t act_hi) {                   \
    qk_minmax_##t(y, a, b, rank, dims, as, bs, z_a, m_a, z_b, m_b, n, z_y, act_lo, act_hi, 0);                 \
  }                                                                                                            \
  /* a table per channel: x[N][C][inner], table[C][256] (8-bit) or [C][513] (int16, interpolated) */         \
  QLLC_KERNEL void qllc_k_lut_channel_##t##_##t(T *QLLC_RESTRICT y, const T *QLLC_RESTRICT x, const T *table,    \
                                                int64_t N, int64_t C, int64_t inner) {                         \
    for (int64_t b = 0; b < N; b++)                                                                            \
      for (int64_t c = 0; c < C; c++) {                                                                        \
        const T *X = x + (b * C + c) * inner;                                                                  \
        T *Y = y + (b * C + c) * inner;                                                                        \
        if (WIDE) {                                                                                            \
          const T *tb = table + c * 513;                                                                       \
          for (int64_t i = 0; i < inner; i++) {                                                                \
            int32_t u = (int32_t)X[i] + 32768, j = u >> 7, f = u & 127;                                        \
            Y[i] = (T)(tb[j] + ((((int32_t)tb[j + 1] - (int32_t)tb[j]) * f + 64) >> 7));                       \
          }                                                                                                    \
        } else {                                                                                               \
          const T *tb = table + c * 256;                                                                       \
          for (int64_t i = 0; i < inner; i++) Y[i] = tb[(int32_t)X[i] - (QMIN)];                                \
        }                                                                                                      \
      }                                                                                                        \
  }                                                                                                            \
  /* bilinear resize of same-parameter values: weights w in Q14 (w = weight of the second row/column) */      \
  QLLC_KERNEL void qllc_k_resize_linear_##t##_##t(T *QLLC_RESTRICT y, const T *QLLC_RESTRICT x, int64_t NC,       \
                                                  int64_t H, int64_t W, int64_t OH, int64_t OW,                \
                                                  const int64_t *iy, const int64_t *ix, const int32_t *wy,     \
                                                  const int32_t *wx) {                                         \
    for (int64_t p = 0; p < NC; p++)                                                                           \
      for (int64_t oy = 0; oy < OH; oy++) {                                                                    \
        const T *X0 = x + (p * H + iy[2 * oy]) * W, *X1 = x + (p * H + iy[2 * oy + 1]) * W;                    \
        T *Y = y + (p * OH + oy) * OW;                                                                         \
        int64_t b = wy[oy], a = 16384 - b;                                                                     \
        for (int64_t ox = 0; ox < OW; ox++) {                                                                  \
          int64_t c0 = ix[2 * ox], c1 = ix[2 * ox + 1];                                                        \
          int64_t d = wx[ox], cc = 16384 - d;                                                                  \
          int64_t top = cc * X0[c0] + d * X0[c1], bot = cc * X1[c0] + d * X1[c1];                              \
          int64_t v = a * top + b * bot; /* Q28 */                                                             \
          Y[ox] = (T)((v + ((int64_t)1 << 27)) >> 28);                                                         \
        }                                                                                                      \
      }                                                                                                        \
  }                                                                                                            \
  /* LayerNorm over x[outer][len]: S = sum q, Q = sum q^2 (int64, exact); D = len Q - S^2 = len^2 var_q;      \
     y = clamp(rne((len q - S) / sqrt(D + len^2 eps_q) * g[i] + b[i]), lo, hi) with eps_q = eps / s_x^2,      \
     g = gamma / s_y, b = beta / s_y + z_y (the quantizer's record) */                                       \
  QLLC_KERNEL void qllc_k_layernorm_##t##_##t(T *QLLC_RESTRICT y, const T *QLLC_RESTRICT x, const float *g,       \
                                              const float *b, int64_t outer, int64_t len, float eps_q,         \
                                              int32_t act_lo, int32_t act_hi) {                                \
    for (int64_t o = 0; o < outer; o++) {                                                                      \
      const T *X = x + o * len;                                                                                \
      T *Y = y + o * len;                                                                                      \
      int64_t S = 0, Q = 0;                                                                                    \
      for (int64_t i = 0; i < len; i++) {                                                                      \
        int64_t v = X[i];                                                                                      \
        S += v;                                                                                                \
        Q += v * v;                                                                                            \
      }                                                                                                        \
      int64_t D = len * Q - S * S;                                                                             \
      float fl = (float)len;                                                                                   \
      float inv = 1.0f / __builtin_sqrtf((float)D + fl * fl * eps_q);                                          \
      for (int64_t i = 0; i < len; i++) {                                                                      \
        float d = (float)(len * (int64_t)X[i] - S);                                                            \
        int32_t q = qk_rne(d * inv * g[i] + b[i]);                                                             \
        Y[i] = (T)(q < act_lo ? act_lo : q > act_hi ? act_hi : q);                                             \
      }                                                                                                        \
    }                                                                                                          \
  }

QEXT(int8_t, i8, -128, 0)
QEXT(uint8_t, u8, 0, 0)
QEXT(int16_t, i16, -32768, 1)
