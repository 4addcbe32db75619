/* libjit/bitcode/conv_panel_f32.h: the input panel of the float conv as a GEMM (conv.c, and the x86_64
 * float conv variants of targets/x86_64/kernels/x86_f32.c): X[k][p], the input pixel tap k of output
 * pixel p sees (0 in the padding), packed for k0 <= k < k0 + kc and p0 <= p < p0 + np of one image and
 * group. conv.c's opening comment says how the panels are used. */
#ifndef QLLC_CONV_PANEL_F32_H
#define QLLC_CONV_PANEL_F32_H
#include "gemm_tile_f32.h"
#include "qllc_kernel.h"

/* The strided copy of a strided conv is not left to the loop vectorizer: it turns it into gathers, which
 * measured slower (ResNet-18 stem 2.0 ms -> 1.7 ms without them). Stride 2 takes 16 pixels at once from
 * two vector loads and a shuffle of their even lanes (the generic vectors of gemm_tile_f32.h; one
 * vpermt2ps with AVX-512); the rest stays scalar. A compiler test, not an ISA one. */
#ifdef __clang__
#define NO_VECTORIZE _Pragma("clang loop vectorize(disable)")
#else
#define NO_VECTORIZE
#endif

QLLC_INLINE int64_t imin(int64_t a, int64_t b) { return a < b ? a : b; }
QLLC_INLINE int64_t imax(int64_t a, int64_t b) { return a > b ? a : b; }

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

/* Packs X[k0 .. k0+kc)[p0 .. p0+np) of one image and group into panel (row stride ldp >= np; columns
 * np .. ldp-1 are zeroed). xg: the group's first input channel. */
QLLC_INLINE void pack_panel(float *QLLC_RESTRICT panel, int64_t ldp, const float *QLLC_RESTRICT xg, int64_t k0,
                            int64_t kc, int64_t p0, int64_t np, int64_t H, int64_t W, int64_t OW, int64_t KH,
                            int64_t KW, int64_t stride_h, int64_t stride_w, int64_t pad_top, int64_t pad_left,
                            int64_t dil_h, int64_t dil_w) {
  for (int64_t kk = 0; kk < kc; kk++) {
    const int64_t k = k0 + kk;
    const int64_t c = k / (KH * KW), kh = k / KW % KH, kw = k % KW;
    const int64_t off = kw * dil_w - pad_left; /* iw = ow * stride_w + off */
    const int64_t in_lo = first_inside(off, stride_w), in_hi = end_inside(off, stride_w, W, OW);
    const float *xc = xg + c * H * W;
    float *dst = panel + kk * ldp;
    int64_t oh = p0 / OW, ow = p0 % OW;
    for (int64_t j = 0; j < np;) {
      const int64_t seg = imin(OW - ow, np - j); /* pixels of output row oh in this panel */
      const int64_t ih = oh * stride_h - pad_top + kh * dil_h;
      const int row_in = ih >= 0 && ih < H;
      const float *xr = xc + (row_in ? ih : 0) * W;
      float *d = dst + j - ow; /* d[o] is the column of pixel (oh, o) */
      /* One loop with the bounds test inside, not zero-fill / copy / zero-fill loops: LLVM turns those
       * into memset and memcpy calls of a few bytes each, which cost as much as the arithmetic. */
      if (stride_w == 1) {
        for (int64_t o = ow; o < ow + seg; o++) {
          const int64_t iw = o + off;
          d[o] = row_in && iw >= 0 && iw < W ? xr[iw] : 0.0f;
        }
      } else if (!row_in) {
        for (int64_t o = ow; o < ow + seg; o++) d[o] = 0.0f;
      } else { /* strided: the bounds test inside the loop measured slower here than three loops */
        const int64_t lo = imin(imax(in_lo, ow), ow + seg), hi = imax(imin(in_hi, ow + seg), lo);
        int64_t o = ow;
        for (; o < lo; o++) d[o] = 0.0f;
        if (stride_w == 2) /* 16 pixels from 32 floats of the row read whole (inside it), every other one */
          for (; o + 16 <= hi && o * 2 + off + 32 <= W; o += 16) {
            const qllc_v16f a = qv_load(xr + o * 2 + off), b = qv_load(xr + o * 2 + off + 16);
            qv_store(d + o, __builtin_shufflevector(a, b, 0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30));
          }
        NO_VECTORIZE
        for (; o < hi; o++) d[o] = xr[o * stride_w + off];
        for (; o < ow + seg; o++) d[o] = 0.0f;
      }
      j += seg;
      ow = 0;
      oh++;
    }
    for (int64_t j = np; j < ldp; j++) dst[j] = 0.0f;
  }
}

#endif
