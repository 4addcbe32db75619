/* libjit/bitcode/pool.c: MaxPool, AveragePool and GlobalAveragePool over x[NC][H][W], float.
 *
 * Like conv.c, each output row is built by whole-row updates: for each kernel tap (kh, kw) the ow range
 * whose input column lies inside the image is computed once, and y[ow] = max(y[ow], x[..]) or
 * y[ow] += x[..] runs over it contiguously. Padded positions are skipped, so they never win a max; the
 * average divides by the number of taps inside the image, or, with count_include_pad, inside the padded
 * extent [-pad_top, H + pad_bottom) x [-pad_left, W + pad_right) (a ceil_mode window may reach past it).
 * Sums run over kh, kw ascending. */
#include "kernels_f32.h"
#include "qllc_math.h"

QLLC_INLINE int64_t lo_inside(int64_t off, int64_t s) { return off >= 0 ? 0 : (-off + s - 1) / s; }
QLLC_INLINE int64_t hi_inside(int64_t off, int64_t s, int64_t n, int64_t limit) {
  if (off >= n) return 0;
  int64_t e = (n - 1 - off) / s + 1;
  return e < limit ? e : limit;
}
/* Number of integers in [lo, hi) ∩ [a, b). */
QLLC_INLINE int64_t overlap(int64_t lo, int64_t hi, int64_t a, int64_t b) {
  int64_t l = lo > a ? lo : a, h = hi < b ? hi : b;
  return h > l ? h - l : 0;
}

QLLC_KERNEL void qllc_k_maxpool2d_f32_f32(float *QLLC_RESTRICT y, const float *QLLC_RESTRICT x, int64_t NC,
                                          int64_t H, int64_t W, int64_t OH, int64_t OW, int64_t KH, int64_t KW,
                                          int64_t stride_h, int64_t stride_w, int64_t pad_top, int64_t pad_left,
                                          int64_t pad_bottom, int64_t pad_right, int64_t dil_h, int64_t dil_w) {
  for (int64_t c = 0; c < NC; c++) {
    const float *xc = x + c * H * W;
    for (int64_t oh = 0; oh < OH; oh++) {
      float *yr = y + (c * OH + oh) * OW;
      for (int64_t ow = 0; ow < OW; ow++) yr[ow] = -__builtin_inff();
      for (int64_t kh = 0; kh < KH; kh++) {
        const int64_t ih = oh * stride_h - pad_top + kh * dil_h;
        if (ih < 0 || ih >= H) continue;
        const float *xr = xc + ih * W;
        for (int64_t kw = 0; kw < KW; kw++) {
          const int64_t off = kw * dil_w - pad_left;
          const int64_t lo = lo_inside(off, stride_w), hi = hi_inside(off, stride_w, W, OW);
          for (int64_t ow = lo; ow < hi; ow++) yr[ow] = qm_max(xr[ow * stride_w + off], yr[ow]);
        }
      }
    }
  }
}

QLLC_KERNEL void qllc_k_avgpool2d_f32_f32(float *QLLC_RESTRICT y, const float *QLLC_RESTRICT x, int64_t NC,
                                          int64_t H, int64_t W, int64_t OH, int64_t OW, int64_t KH, int64_t KW,
                                          int64_t stride_h, int64_t stride_w, int64_t pad_top, int64_t pad_left,
                                          int64_t pad_bottom, int64_t pad_right, int64_t count_include_pad) {
  /* The region that counts: the image, or the padded image. */
  const int64_t h0 = count_include_pad ? -pad_top : 0, h1 = count_include_pad ? H + pad_bottom : H;
  const int64_t w0 = count_include_pad ? -pad_left : 0, w1 = count_include_pad ? W + pad_right : W;
  for (int64_t c = 0; c < NC; c++) {
    const float *xc = x + c * H * W;
    for (int64_t oh = 0; oh < OH; oh++) {
      float *yr = y + (c * OH + oh) * OW;
      const int64_t ih0 = oh * stride_h - pad_top;
      const int64_t hcount = overlap(ih0, ih0 + KH, h0, h1);
      for (int64_t ow = 0; ow < OW; ow++) yr[ow] = 0.0f;
      for (int64_t kh = 0; kh < KH; kh++) {
        const int64_t ih = ih0 + kh;
        if (ih < 0 || ih >= H) continue;
        const float *xr = xc + ih * W;
        for (int64_t kw = 0; kw < KW; kw++) {
          const int64_t off = kw - pad_left;
          const int64_t lo = lo_inside(off, stride_w), hi = hi_inside(off, stride_w, W, OW);
          for (int64_t ow = lo; ow < hi; ow++) yr[ow] += xr[ow * stride_w + off];
        }
      }
      for (int64_t ow = 0; ow < OW; ow++) {
        const int64_t iw0 = ow * stride_w - pad_left;
        const int64_t count = hcount * overlap(iw0, iw0 + KW, w0, w1);
        yr[ow] = count > 0 ? yr[ow] / (float)count : 0.0f;
      }
    }
  }
}

/* The mean of each row of x[NC][HW]. The row is summed in 8 interleaved partial sums (element i goes
 * to sum i % 8), added pairwise at the end: the loop vectorizes without reassociation, and the order
 * is fixed, so every target gives the same bits. */
QLLC_KERNEL void qllc_k_global_avgpool_f32_f32(float *QLLC_RESTRICT y, const float *QLLC_RESTRICT x, int64_t NC,
                                               int64_t HW) {
  for (int64_t c = 0; c < NC; c++) {
    const float *xr = x + c * HW;
    float s[8] = {0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f};
    int64_t i = 0;
    for (; i + 8 <= HW; i += 8)
      for (int64_t j = 0; j < 8; j++) s[j] += xr[i + j];
    for (int64_t j = 0; i + j < HW; j++) s[j] += xr[i + j];
    const float t = ((s[0] + s[1]) + (s[2] + s[3])) + ((s[4] + s[5]) + (s[6] + s[7]));
    y[c] = t / (float)HW;
  }
}
