/* targets/x86_64/kernels/x86_f32pool.h: the x86_64 copies of the float MaxPool and GlobalAveragePool (QISA
 * rows in src/lower/kernels.def), bit-identical to qllc_k_maxpool2d_f32_f32 and
 * qllc_k_global_avgpool_f32_f32 (libjit/bitcode/pool.c).
 *
 * The reference takes, per output, max = -inf, then for kh, kw ascending over the taps inside the image
 * max = qm_max(x, max) (x < max ? max : x: a NaN tap is taken, a later tap can replace it). Here the
 * outputs of a row go 16 at a time, one vector per tap (stride 1: an unaligned load; stride 2: 32 floats
 * split into their even ones by a shuffle) and the same compare and select per lane; rows of taps outside
 * the image are skipped as the reference skips them, and at the row's ends the lanes whose tap column is
 * outside keep their max. Where a vector's loads would leave x (the first and last rows of the tensor),
 * and for strides above 2, the reference's loop runs output by output. Measured: docs/benchmarks.md, "Float depthwise conv and pooling".
 *
 * Compiled as the end of x86_dw8.c's translation unit (x86_f32.h's opening comment says why). */
#ifndef QLLC_X86_F32POOL_H
#define QLLC_X86_F32POOL_H
#include "gemm_tile_f32.h"
#include "qllc_math.h"

/* 16 outputs ow .. ow + 15 of row oh (stride_w 1 or 2). masked: lanes whose tap column is outside the image
   keep their max (the reference skips those taps); else every tap column is inside. The loads stay inside
   x: the caller checked. */
QLLC_INLINE qllc_v16f mp_vec(const int masked, const float *QLLC_RESTRICT xc, int64_t H, int64_t W, int64_t oh,
                             int64_t ow, int64_t KH, int64_t KW, int64_t sh, int64_t sw, int64_t pt, int64_t pl,
                             int64_t dh, int64_t dw) {
  const qllc_v16i lane = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15};
  qllc_v16f m = qv_splat(-__builtin_inff());
  for (int64_t kh = 0; kh < KH; kh++) {
    const int64_t ih = oh * sh - pt + kh * dh;
    if (ih < 0 || ih >= H) continue;
    const float *xr = xc + ih * W + ow * sw - pl;
    for (int64_t kw = 0; kw < KW; kw++) {
      qllc_v16f v;
      if (sw == 1) {
        v = qv_load(xr + kw * dw);
      } else {
        const qllc_v16f a = qv_load(xr + kw * dw), b = qv_load(xr + kw * dw + 16);
        v = __builtin_shufflevector(a, b, 0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
      }
      qllc_v16i keep = v < m; /* qm_max(v, m): m where v < m, else v */
      if (masked) {
        const qllc_v16i iw = lane * (int32_t)sw + (int32_t)(ow * sw - pl + kw * dw);
        keep |= ~((iw >= 0) & (iw < (int32_t)W));
      }
      m = (qllc_v16f)(((qllc_v16i)m & keep) | ((qllc_v16i)v & ~keep));
    }
  }
  return m;
}

/* The reference's loop for one output */
QLLC_INLINE float mp_one(const float *QLLC_RESTRICT xc, int64_t H, int64_t W, int64_t oh, int64_t ow, int64_t KH,
                         int64_t KW, int64_t sh, int64_t sw, int64_t pt, int64_t pl, int64_t dh, int64_t dw) {
  float m = -__builtin_inff();
  for (int64_t kh = 0; kh < KH; kh++) {
    const int64_t ih = oh * sh - pt + kh * dh;
    if (ih < 0 || ih >= H) continue;
    for (int64_t kw = 0; kw < KW; kw++) {
      const int64_t iw = ow * sw - pl + kw * dw;
      if (iw >= 0 && iw < W) m = qm_max(xc[ih * W + iw], m);
    }
  }
  return m;
}

QLLC_INLINE void maxpool_f32_body(float *QLLC_RESTRICT y, const float *QLLC_RESTRICT x, int64_t NC, int64_t H,
                                  int64_t W, int64_t OH, int64_t OW, int64_t KH, int64_t KW, int64_t sh, int64_t sw,
                                  int64_t pt, int64_t pl, int64_t dh, int64_t dw) {
  const int64_t nx = NC * H * W;
  for (int64_t c = 0; c < NC; c++) {
    const float *xc = x + c * H * W;
    for (int64_t oh = 0; oh < OH; oh++) {
      float *yr = y + (c * OH + oh) * OW;
      for (int64_t ow = 0; ow < OW; ow += 16) {
        /* the vector's first and last tap column, and the span its loads read around its rows */
        const int64_t c0 = ow * sw - pl, c1 = (ow + 15) * sw - pl + (KW - 1) * dw;
        const int64_t lo = c * H * W + c0, hi = c * H * W + (H - 1) * W + c1 + sw; /* + sw: stride 2's odd */
        if (sw > 2 || lo < 0 || hi >= nx) { /* one by one */
          for (int64_t o = ow; o < ow + 16 && o < OW; o++) yr[o] = mp_one(xc, H, W, oh, o, KH, KW, sh, sw, pt, pl, dh, dw);
          continue;
        }
        const qllc_v16f m = c0 >= 0 && c1 < W ? mp_vec(0, xc, H, W, oh, ow, KH, KW, sh, sw, pt, pl, dh, dw)
                                              : mp_vec(1, xc, H, W, oh, ow, KH, KW, sh, sw, pt, pl, dh, dw);
        if (ow + 16 <= OW) {
          qv_store(yr + ow, m);
        } else {
          float t[16];
          qv_store(t, m);
          for (int64_t o = ow; o < OW; o++) yr[o] = t[o - ow];
        }
      }
    }
  }
}

#define F32POOL_VARIANT(isa, target_features)                                                                    \
  __attribute__((target(target_features))) void qllc_k_maxpool2d_f32_f32__##isa(                                 \
      float *y, const float *x, int64_t NC, int64_t H, int64_t W, int64_t OH, int64_t OW, int64_t KH, int64_t KW, \
      int64_t stride_h, int64_t stride_w, int64_t pad_top, int64_t pad_left, int64_t pad_bottom,                 \
      int64_t pad_right, int64_t dil_h, int64_t dil_w) {                                                         \
    (void)pad_bottom, (void)pad_right; /* OH, OW and the image bounds say it */                                 \
    maxpool_f32_body(y, x, NC, H, W, OH, OW, KH, KW, stride_h, stride_w, pad_top, pad_left, dil_h, dil_w);       \
  }
F32POOL_VARIANT(avx512, "avx512f")
F32POOL_VARIANT(avx2, "avx2")

/* ---- GlobalAveragePool ---------------------------------------------------------------------------------- */
/* The reference (qllc_k_global_avgpool_f32_f32) sums each row of HW floats in 8 partial sums s[j] += x[i + j]
 * (from 0.0f; the tail into s[0 ..]), adds them as ((s0 + s1) + (s2 + s3)) + ((s4 + s5) + (s6 + s7)) and
 * divides by HW. Its 8 sums are one vector of 8 here, and R rows run side by side, so that R chains of
 * dependent adds hide the add's latency (the reference's one chain per row ran at half of memory speed on
 * the 56x56 layer); the order per row is the reference's, so are the bits. The rows past the last group
 * of R go one at a time. */
typedef float gap_v8f __attribute__((vector_size(32), aligned(4)));

QLLC_INLINE void gap_rows(const int R, float *QLLC_RESTRICT y, const float *QLLC_RESTRICT x, int64_t HW) {
  gap_v8f s[8];
  _Pragma("GCC unroll 8") for (int r = 0; r < R; r++) s[r] = (gap_v8f){0};
  int64_t i = 0;
  for (; i + 8 <= HW; i += 8)
    _Pragma("GCC unroll 8") for (int r = 0; r < R; r++) {
      gap_v8f v;
      __builtin_memcpy(&v, x + r * HW + i, sizeof v);
      s[r] += v;
    }
  for (int r = 0; r < R; r++) {
    float t[8];
    __builtin_memcpy(t, &s[r], sizeof t);
    for (int64_t j = 0; i + j < HW; j++) t[j] += x[r * HW + i + j];
    y[r] = (((t[0] + t[1]) + (t[2] + t[3])) + ((t[4] + t[5]) + (t[6] + t[7]))) / (float)HW;
  }
}

#define GAP_R 8 /* rows side by side */
#define F32GAP_VARIANT(isa, target_features)                                                                     \
  __attribute__((target(target_features))) void qllc_k_global_avgpool_f32_f32__##isa(                           \
      float *y, const float *x, int64_t NC, int64_t HW) {                                                        \
    int64_t c = 0;                                                                                               \
    for (; c + GAP_R <= NC; c += GAP_R) gap_rows(GAP_R, y + c, x + c * HW, HW);                                  \
    for (; c < NC; c++) gap_rows(1, y + c, x + c * HW, HW);                                                      \
  }
F32GAP_VARIANT(avx512, "avx512f")
F32GAP_VARIANT(avx2, "avx2")

#endif
