/* libjit/bitcode/ops_rt.c: kernels for operands known only at run time and for index-map padding
 * (issue 15): Clip with bounds given as graph inputs, constant Pad with its value given as a graph input,
 * Pad modes reflect, edge and wrap (pad_map, every element kind), MaxPool with its Indices output and
 * BatchNormalization with run-time statistics. */
#include "kernels_f32.h"
#include "qllc_math.h"

QLLC_KERNEL void qllc_k_clip_rt_f32_f32(float *QLLC_RESTRICT y, const float *QLLC_RESTRICT x, int64_t n,
                                        const float *lo_p, const float *hi_p, float lo, float hi) {
  if (lo_p) lo = *lo_p;
  if (hi_p) hi = *hi_p;
  for (int64_t i = 0; i < n; i++) y[i] = qm_min(qm_max(x[i], lo), hi);
}

QLLC_KERNEL void qllc_k_pad_rt_f32_f32(float *QLLC_RESTRICT y, const float *QLLC_RESTRICT x, int64_t rank,
                                       const int64_t *out_dims, const int64_t *in_dims, const int64_t *pads_begin,
                                       const float *value_p) {
  qllc_k_pad_f32_f32(y, x, rank, out_dims, in_dims, pads_begin, *value_p);
}

/* Walks all but the last axis with an index counter (rank <= 8); the last axis is one loop. */
#define PAD_MAP(T, t)                                                                                   \
  QLLC_KERNEL void qllc_k_pad_map_##t##_##t(T *QLLC_RESTRICT y, const T *QLLC_RESTRICT x, int64_t rank,    \
                                            const int64_t *out_dims, const int64_t *map) {              \
    const int64_t *m[8] = {0};                                                                          \
    int64_t idx[8] = {0}, outer = 1;                                                                    \
    for (int64_t d = 0, at = 0; d < rank; at += out_dims[d], d++) m[d] = map + at;                      \
    for (int64_t d = 0; d < rank - 1; d++) outer *= out_dims[d];                                        \
    const int64_t inner = out_dims[rank - 1], *ml = m[rank - 1];                                        \
    for (int64_t o = 0; o < outer; o++) {                                                               \
      int64_t base = 0;                                                                                 \
      for (int64_t d = 0; d < rank - 1; d++) base += m[d][idx[d]];                                      \
      T *yr = y + o * inner;                                                                            \
      for (int64_t i = 0; i < inner; i++) yr[i] = x[base + ml[i]];                                      \
      for (int64_t d = rank - 2; d >= 0; d--) {                                                         \
        if (++idx[d] < out_dims[d]) break;                                                              \
        idx[d] = 0;                                                                                     \
      }                                                                                                 \
    }                                                                                                   \
  }
PAD_MAP(float, f32)
PAD_MAP(int8_t, i8)
PAD_MAP(uint8_t, u8)
PAD_MAP(int16_t, i16)
PAD_MAP(int32_t, i32)

/* One window at a time, taps in (kh, kw) order; a strictly greater value replaces the maximum, so the
 * first maximum wins (onnxruntime's rule). Padded taps are skipped. A window with no tap inside the
 * image (possible only with pads >= the kernel) gives -inf and index -1. */
QLLC_KERNEL void qllc_k_maxpool2d_idx_f32_f32(float *QLLC_RESTRICT y, int64_t *QLLC_RESTRICT ind,
                                              const float *QLLC_RESTRICT x, int64_t NC, int64_t H, int64_t W,
                                              int64_t OH, int64_t OW, int64_t KH, int64_t KW, int64_t stride_h,
                                              int64_t stride_w, int64_t pad_top, int64_t pad_left, int64_t pad_bottom,
                                              int64_t pad_right, int64_t dil_h, int64_t dil_w, int64_t storage_order) {
  (void)pad_bottom, (void)pad_right;
  for (int64_t c = 0; c < NC; c++) {
    const float *xc = x + c * H * W;
    for (int64_t oh = 0; oh < OH; oh++)
      for (int64_t ow = 0; ow < OW; ow++) {
        float best = -__builtin_inff();
        int64_t at = -1;
        for (int64_t kh = 0; kh < KH; kh++) {
          const int64_t ih = oh * stride_h - pad_top + kh * dil_h;
          if (ih < 0 || ih >= H) continue;
          for (int64_t kw = 0; kw < KW; kw++) {
            const int64_t iw = ow * stride_w - pad_left + kw * dil_w;
            if (iw < 0 || iw >= W) continue;
            const float v = xc[ih * W + iw];
            if (at < 0 || v > best) best = v, at = storage_order ? iw * H + ih : ih * W + iw;
          }
        }
        y[(c * OH + oh) * OW + ow] = best;
        ind[(c * OH + oh) * OW + ow] = at < 0 ? -1 : c * H * W + at;
      }
  }
}

QLLC_KERNEL void qllc_k_batchnorm_f32_f32(float *QLLC_RESTRICT y, const float *QLLC_RESTRICT x, const float *scale,
                                          const float *bias, const float *mean, const float *var, int64_t N, int64_t C,
                                          int64_t inner, float eps) {
  for (int64_t c = 0; c < C; c++) {
    const float a = (float)((double)scale[c] / __builtin_sqrt((double)var[c] + (double)eps)), m = mean[c], b = bias[c];
    for (int64_t n = 0; n < N; n++) {
      const float *xr = x + (n * C + c) * inner;
      float *yr = y + (n * C + c) * inner;
      for (int64_t i = 0; i < inner; i++) yr[i] = (xr[i] - m) * a + b;
    }
  }
}
