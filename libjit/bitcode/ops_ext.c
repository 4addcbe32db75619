/* libjit/bitcode/ops_ext.c: float kernels of the transformer and mobile ops (issue 15): Erf, GELU,
 * Sqrt, Exp, Neg, Reciprocal, Pow by a constant, HardSigmoid, HardSwish, LayerNormalization, the
 * reductions over one block of axes, PRelu, and Resize (nearest and linear, from index tables the
 * lowering computes). No libm: erf and GELU are float polynomial approximations (qllc_math.h); sqrt is
 * the correctly rounded llvm.sqrt (the same bits on every target); kernels are built with
 * -ffp-contract=off, so the results do not depend on the target. */
#include "kernels_f32.h"
#include "qllc_math.h"

/* erf, GELU and GELU's tanh form: the float approximations of qllc_math.h (errors measured in
 * tests/libjit/activation_test.c and docs/ops_notes.md), vectorised after specialisation. */
QLLC_KERNEL void qllc_k_erf_f32_f32(float *QLLC_RESTRICT y, const float *QLLC_RESTRICT x, int64_t n) {
  for (int64_t i = 0; i < n; i++) y[i] = qm_erf(x[i]);
}

QLLC_KERNEL void qllc_k_gelu_f32_f32(float *QLLC_RESTRICT y, const float *QLLC_RESTRICT x, int64_t n) {
  for (int64_t i = 0; i < n; i++) y[i] = qm_gelu(x[i]);
}

QLLC_KERNEL void qllc_k_gelu_tanh_f32_f32(float *QLLC_RESTRICT y, const float *QLLC_RESTRICT x, int64_t n) {
  for (int64_t i = 0; i < n; i++) y[i] = qm_gelu_tanh(x[i]);
}

QLLC_KERNEL void qllc_k_sqrt_f32_f32(float *QLLC_RESTRICT y, const float *QLLC_RESTRICT x, int64_t n) {
  for (int64_t i = 0; i < n; i++) y[i] = __builtin_sqrtf(x[i]);
}

QLLC_KERNEL void qllc_k_exp_f32_f32(float *QLLC_RESTRICT y, const float *QLLC_RESTRICT x, int64_t n) {
  for (int64_t i = 0; i < n; i++) y[i] = qm_exp(x[i]);
}

QLLC_KERNEL void qllc_k_neg_f32_f32(float *QLLC_RESTRICT y, const float *QLLC_RESTRICT x, int64_t n) {
  for (int64_t i = 0; i < n; i++) y[i] = -x[i];
}

QLLC_KERNEL void qllc_k_reciprocal_f32_f32(float *QLLC_RESTRICT y, const float *QLLC_RESTRICT x, int64_t n) {
  for (int64_t i = 0; i < n; i++) y[i] = 1.0f / x[i];
}

/* x^e for a constant e the lowering accepted: an integer in [-16, 16], or +-0.5. The exponent is a
 * constant argument, so specialisation folds the branches away. */
QLLC_KERNEL void qllc_k_pow_f32_f32(float *QLLC_RESTRICT y, const float *QLLC_RESTRICT x, int64_t n, float e) {
  if (e == 0.5f || e == -0.5f) {
    for (int64_t i = 0; i < n; i++) y[i] = e > 0 ? __builtin_sqrtf(x[i]) : 1.0f / __builtin_sqrtf(x[i]);
    return;
  }
  int32_t k = (int32_t)e, ak = k < 0 ? -k : k;
  for (int64_t i = 0; i < n; i++) {
    float p = 1.0f, b = x[i];
    for (int32_t j = 0; j < ak; j++) p *= b;
    y[i] = k < 0 ? 1.0f / p : p;
  }
}

/* max(0, min(1, alpha x + beta)) */
QLLC_KERNEL void qllc_k_hardsigmoid_f32_f32(float *QLLC_RESTRICT y, const float *QLLC_RESTRICT x, int64_t n,
                                            float alpha, float beta) {
  for (int64_t i = 0; i < n; i++) y[i] = qm_max(qm_min(x[i] * alpha + beta, 1.0f), 0.0f);
}

/* x * max(0, min(1, x / 6 + 1/2)) */
QLLC_KERNEL void qllc_k_hardswish_f32_f32(float *QLLC_RESTRICT y, const float *QLLC_RESTRICT x, int64_t n) {
  for (int64_t i = 0; i < n; i++) y[i] = x[i] * qm_max(qm_min(x[i] * (1.0f / 6.0f) + 0.5f, 1.0f), 0.0f);
}

/* LayerNormalization over the last axis block: x[outer][len], gamma[len], beta[len] or NULL;
 * mean and variance in double (two passes), y = (x - mean) / sqrt(var + eps) * gamma + beta. */
QLLC_KERNEL void qllc_k_layernorm_f32_f32(float *QLLC_RESTRICT y, const float *QLLC_RESTRICT x,
                                          const float *QLLC_RESTRICT gamma, const float *QLLC_RESTRICT beta,
                                          int64_t outer, int64_t len, float eps) {
  for (int64_t o = 0; o < outer; o++) {
    const float *X = x + o * len;
    float *Y = y + o * len;
    double s = 0;
    for (int64_t i = 0; i < len; i++) s += X[i];
    double mean = s / (double)len, v = 0;
    for (int64_t i = 0; i < len; i++) v += ((double)X[i] - mean) * ((double)X[i] - mean);
    float inv = (float)(1.0 / __builtin_sqrt(v / (double)len + (double)eps));
    float m = (float)mean;
    for (int64_t i = 0; i < len; i++) {
      float t = (X[i] - m) * inv * gamma[i];
      Y[i] = beta ? t + beta[i] : t;
    }
  }
}

/* LayerNormalization's optional outputs: mean[outer] and invstd[outer] = 1 / sqrt(var + eps), each may be
 * NULL (computed as in layernorm). */
QLLC_KERNEL void qllc_k_layernorm_stats_f32_f32(float *QLLC_RESTRICT mean, float *QLLC_RESTRICT invstd,
                                                const float *QLLC_RESTRICT x, int64_t outer, int64_t len, float eps) {
  for (int64_t o = 0; o < outer; o++) {
    const float *X = x + o * len;
    double s = 0;
    for (int64_t i = 0; i < len; i++) s += X[i];
    double m = s / (double)len, v = 0;
    for (int64_t i = 0; i < len; i++) v += ((double)X[i] - m) * ((double)X[i] - m);
    if (mean) mean[o] = (float)m;
    if (invstd) invstd[o] = (float)(1.0 / __builtin_sqrt(v / (double)len + (double)eps));
  }
}

/* Reductions along the middle axis of x[outer][len][inner] -> y[outer][inner]. */
QLLC_KERNEL void qllc_k_reduce_sum_f32_f32(float *QLLC_RESTRICT y, const float *QLLC_RESTRICT x, int64_t outer,
                                           int64_t len, int64_t inner) {
  for (int64_t o = 0; o < outer; o++)
    for (int64_t i = 0; i < inner; i++) {
      float s = 0.0f;
      for (int64_t a = 0; a < len; a++) s += x[(o * len + a) * inner + i];
      y[o * inner + i] = s;
    }
}

QLLC_KERNEL void qllc_k_reduce_mean_f32_f32(float *QLLC_RESTRICT y, const float *QLLC_RESTRICT x, int64_t outer,
                                            int64_t len, int64_t inner) {
  for (int64_t o = 0; o < outer; o++)
    for (int64_t i = 0; i < inner; i++) {
      float s = 0.0f;
      for (int64_t a = 0; a < len; a++) s += x[(o * len + a) * inner + i];
      y[o * inner + i] = s / (float)len;
    }
}

QLLC_KERNEL void qllc_k_reduce_max_f32_f32(float *QLLC_RESTRICT y, const float *QLLC_RESTRICT x, int64_t outer,
                                           int64_t len, int64_t inner) {
  for (int64_t o = 0; o < outer; o++)
    for (int64_t i = 0; i < inner; i++) {
      float m = x[o * len * inner + i];
      for (int64_t a = 1; a < len; a++) {
        float v = x[(o * len + a) * inner + i];
        m = v > m ? v : m;
      }
      y[o * inner + i] = m;
    }
}

/* PRelu: y = a < 0 ? a * b : a, b broadcast like the binary kernels (elementwise.c). */
QLLC_KERNEL void qllc_k_prelu_f32_f32_f32(float *QLLC_RESTRICT y, const float *QLLC_RESTRICT a,
                                          const float *QLLC_RESTRICT b, int64_t rank, const int64_t *dims,
                                          const int64_t *as, const int64_t *bs) {
  int64_t total = 1;
  for (int64_t d = 0; d < rank; d++) total *= dims[d];
  int64_t idx[8] = {0}, ao = 0, bo = 0;
  for (int64_t i = 0; i < total; i++) {
    float v = a[ao];
    y[i] = v < 0.0f ? v * b[bo] : v;
    for (int64_t d = rank - 1; d >= 0; d--) {
      ao += as[d], bo += bs[d];
      if (++idx[d] < dims[d]) break;
      ao -= as[d] * dims[d], bo -= bs[d] * dims[d];
      idx[d] = 0;
    }
  }
}

/* Max / Min with broadcasting (the binary kernels' arguments); NaN propagates as in ONNX's reference
 * (numpy maximum/minimum). */
#define MINMAX(op, CMP)                                                                                   \
  QLLC_KERNEL void qllc_k_##op##_f32_f32_f32(float *QLLC_RESTRICT y, const float *QLLC_RESTRICT a,           \
                                             const float *QLLC_RESTRICT b, int64_t rank, const int64_t *dims, \
                                             const int64_t *as, const int64_t *bs) {                       \
    int64_t total = 1;                                                                                    \
    for (int64_t d = 0; d < rank; d++) total *= dims[d];                                                  \
    int64_t idx[8] = {0}, ao = 0, bo = 0;                                                                 \
    for (int64_t i = 0; i < total; i++) {                                                                 \
      float u = a[ao], v = b[bo];                                                                         \
      y[i] = u != u ? u : v != v ? v : (u CMP v ? u : v);                                                 \
      for (int64_t d = rank - 1; d >= 0; d--) {                                                           \
        ao += as[d], bo += bs[d];                                                                         \
        if (++idx[d] < dims[d]) break;                                                                    \
        ao -= as[d] * dims[d], bo -= bs[d] * dims[d];                                                     \
        idx[d] = 0;                                                                                       \
      }                                                                                                   \
    }                                                                                                     \
  }
MINMAX(max, >=)
MINMAX(min, <=)

/* Where with a constant condition: mask (the condition broadcast to y's shape, contiguous, made at compile
 * time) picks a or b, both broadcast as the binary kernels' operands. */
QLLC_KERNEL void qllc_k_where_f32_f32_f32(float *QLLC_RESTRICT y, const uint8_t *QLLC_RESTRICT mask,
                                          const float *QLLC_RESTRICT a, const float *QLLC_RESTRICT b, int64_t rank,
                                          const int64_t *dims, const int64_t *as, const int64_t *bs) {
  int64_t total = 1;
  for (int64_t d = 0; d < rank; d++) total *= dims[d];
  int64_t idx[8] = {0}, ao = 0, bo = 0;
  for (int64_t i = 0; i < total; i++) {
    y[i] = mask[i] ? a[ao] : b[bo];
    for (int64_t d = rank - 1; d >= 0; d--) {
      ao += as[d], bo += bs[d];
      if (++idx[d] < dims[d]) break;
      ao -= as[d] * dims[d], bo -= bs[d] * dims[d];
      idx[d] = 0;
    }
  }
}

/* ConvTranspose 2-D: x[N][C][H][W], w[C][M/group][KH][KW], b[M] (may be NULL) -> y[N][M][OH][OW]; each
 * output sums the inputs whose scattered position oh = ih * sh - pt + kh * dh lands on it (gathered:
 * ih = (oh + pt - kh * dh) / sh when that divides exactly and is inside the input). */
QLLC_KERNEL void qllc_k_conv_transpose2d_f32_f32_f32(float *QLLC_RESTRICT y, const float *QLLC_RESTRICT x,
                                                     const float *QLLC_RESTRICT w, const float *QLLC_RESTRICT b,
                                                     int64_t N, int64_t C, int64_t H, int64_t W, int64_t M,
                                                     int64_t OH, int64_t OW, int64_t KH, int64_t KW, int64_t sh,
                                                     int64_t sw, int64_t pt, int64_t pl, int64_t dh, int64_t dw,
                                                     int64_t group) {
  const int64_t cg = C / group, mg = M / group;
  for (int64_t n = 0; n < N; n++)
    for (int64_t m = 0; m < M; m++) {
      const int64_t gi = m / mg, ml = m % mg;
      for (int64_t oh = 0; oh < OH; oh++)
        for (int64_t ow = 0; ow < OW; ow++) {
          float acc = b ? b[m] : 0.0f;
          for (int64_t c = gi * cg; c < (gi + 1) * cg; c++)
            for (int64_t kh = 0; kh < KH; kh++) {
              int64_t th = oh + pt - kh * dh;
              if (th < 0 || th % sh) continue;
              int64_t ih = th / sh;
              if (ih >= H) continue;
              for (int64_t kw = 0; kw < KW; kw++) {
                int64_t tw = ow + pl - kw * dw;
                if (tw < 0 || tw % sw) continue;
                int64_t iw = tw / sw;
                if (iw >= W) continue;
                acc += x[((n * C + c) * H + ih) * W + iw] * w[((c * mg + ml) * KH + kh) * KW + kw];
              }
            }
          y[((n * M + m) * OH + oh) * OW + ow] = acc;
        }
    }
}

/* Resize of x[NC][H][W] to y[NC][OH][OW].
 * nearest: y[p][oy][ox] = x[p][iy[oy]][ix[ox]] (every element kind: it only moves data);
 * linear:  iy[2 oy], iy[2 oy + 1] are the two source rows, wy[oy] the weight of the second (same
 *          for columns); y = (1-wy)((1-wx) x00 + wx x01) + wy((1-wx) x10 + wx x11). */
#define RESIZE_NEAREST(T, t)                                                                              \
  QLLC_KERNEL void qllc_k_resize_nearest_##t##_##t(T *QLLC_RESTRICT y, const T *QLLC_RESTRICT x, int64_t NC, \
                                                   int64_t H, int64_t W, int64_t OH, int64_t OW,            \
                                                   const int64_t *iy, const int64_t *ix) {                  \
    for (int64_t p = 0; p < NC; p++)                                                                      \
      for (int64_t oy = 0; oy < OH; oy++) {                                                               \
        const T *X = x + (p * H + iy[oy]) * W;                                                            \
        T *Y = y + (p * OH + oy) * OW;                                                                    \
        for (int64_t ox = 0; ox < OW; ox++) Y[ox] = X[ix[ox]];                                            \
      }                                                                                                   \
  }
RESIZE_NEAREST(float, f32)
RESIZE_NEAREST(int8_t, i8)
RESIZE_NEAREST(uint8_t, u8)
RESIZE_NEAREST(int16_t, i16)

QLLC_KERNEL void qllc_k_resize_linear_f32_f32(float *QLLC_RESTRICT y, const float *QLLC_RESTRICT x, int64_t NC,
                                              int64_t H, int64_t W, int64_t OH, int64_t OW, const int64_t *iy,
                                              const int64_t *ix, const float *wy, const float *wx) {
  for (int64_t p = 0; p < NC; p++)
    for (int64_t oy = 0; oy < OH; oy++) {
      const float *X0 = x + (p * H + iy[2 * oy]) * W, *X1 = x + (p * H + iy[2 * oy + 1]) * W;
      float *Y = y + (p * OH + oy) * OW;
      float b = wy[oy], a = 1.0f - b;
      for (int64_t ox = 0; ox < OW; ox++) {
        int64_t c0 = ix[2 * ox], c1 = ix[2 * ox + 1];
        float d = wx[ox], cc = 1.0f - d;
        Y[ox] = a * (cc * X0[c0] + d * X0[c1]) + b * (cc * X1[c0] + d * X1[c1]);
      }
    }
}
