/* libjit/bitcode/conv.c: direct 2-D convolution, float.
 *
 * Algorithm: for each output row y[n][m][oh][*] the row starts at the bias and accumulates, for each
 * input channel c of the group and each kernel tap (kh, kw), w[m][c][kh][kw] times an input row
 * segment: y[ow] += w * x[ih][ow * stride_w + kw * dil_w - pad_left]. The innermost loop runs over
 * ow (contiguous in y, contiguous in x when stride_w == 1), so it vectorizes without a float
 * reduction; the padding is handled by clipping the ow range per tap, not by a test per element.
 * Summation order per output element: bias, then c, kh, kw ascending (deterministic). The fused
 * activation clamp is applied when the row is complete. */
#include "kernels_f32.h"
#include "qllc_math.h"

/* Smallest o >= 0 with o * s + off >= 0, and one past the largest o < limit with o * s + off < n. */
QLLC_INLINE int64_t first_inside(int64_t off, int64_t s) {
  if (off >= 0) return 0;
  return (-off + s - 1) / s;
}
QLLC_INLINE int64_t end_inside(int64_t off, int64_t s, int64_t n, int64_t limit) {
  if (off >= n) return 0;
  int64_t e = (n - 1 - off) / s + 1;
  return e < limit ? e : limit;
}

QLLC_KERNEL void qllc_k_conv2d_f32_f32_f32(float *QLLC_RESTRICT y, const float *QLLC_RESTRICT x,
                                           const float *QLLC_RESTRICT w, const float *QLLC_RESTRICT b,
                                           int64_t N, int64_t C, int64_t H, int64_t W, int64_t M, int64_t OH,
                                           int64_t OW, int64_t KH, int64_t KW, int64_t stride_h,
                                           int64_t stride_w, int64_t pad_top, int64_t pad_left, int64_t dil_h,
                                           int64_t dil_w, int64_t group, float act_lo, float act_hi) {
  const int64_t cg = C / group; /* input channels per group */
  const int64_t mg = M / group; /* output channels per group */
  for (int64_t n = 0; n < N; n++) {
    for (int64_t m = 0; m < M; m++) {
      const int64_t g = m / mg;
      const float *xg = x + (n * C + g * cg) * H * W;
      const float *wm = w + m * cg * KH * KW;
      float *ym = y + (n * M + m) * OH * OW;
      const float bias = b ? b[m] : 0.0f;
      for (int64_t oh = 0; oh < OH; oh++) {
        float *yr = ym + oh * OW;
        for (int64_t ow = 0; ow < OW; ow++) yr[ow] = bias;
        for (int64_t c = 0; c < cg; c++) {
          for (int64_t kh = 0; kh < KH; kh++) {
            const int64_t ih = oh * stride_h - pad_top + kh * dil_h;
            if (ih < 0 || ih >= H) continue;
            const float *xr = xg + (c * H + ih) * W;
            const float *wk = wm + (c * KH + kh) * KW;
            for (int64_t kw = 0; kw < KW; kw++) {
              const int64_t off = kw * dil_w - pad_left; /* iw = ow * stride_w + off */
              const int64_t lo = first_inside(off, stride_w);
              const int64_t hi = end_inside(off, stride_w, W, OW);
              const float wv = wk[kw];
              for (int64_t ow = lo; ow < hi; ow++) yr[ow] += wv * xr[ow * stride_w + off];
            }
          }
        }
        for (int64_t ow = 0; ow < OW; ow++) yr[ow] = qm_min(qm_max(yr[ow], act_lo), act_hi);
      }
    }
  }
}
