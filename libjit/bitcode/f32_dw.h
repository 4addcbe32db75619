/* libjit/bitcode/f32_dw.h: the float depthwise conv (group == C == M) of the ISA variants, shared by every
 * architecture (targets/x86_64/kernels/x86_f32dw.h, targets/aarch64/kernels/arm_f32.h), bit-identical to
 * the scalar qllc_k_conv2d_f32_f32_f32 (libjit/bitcode/conv.c), which runs such a layer as one 1-row GEMM
 * per channel: y[p] = b + sum over taps k = kh * KW + kw ascending of w[k] * X[k][p], X 0 in the padding.
 *
 * Per channel, the input is first copied into the scratch zero-padded and split by phase of the strides
 * (qllc_dwf32_plane, libjit/bitcode/layouts.h): plane (ph, pw), ph < stride_h, pw < stride_w, holds padded
 * row i * stride_h + ph and column j * stride_w + pw at i * Wv + j, so that tap (kh, kw) of the output row
 * oh is one contiguous run: plane ((kh dil_h) % sh, (kw dil_w) % sw), row oh + (kh dil_h) / sh, column
 * ow + (kw dil_w) / sw. Every tap of 16 output pixels is thus one unaligned vector load, for any stride,
 * dilation and pad; the padded taps read zeros and add w * 0 as the reference does.
 *
 * The output rows are cut into vectors of 16 pixels (the last of a row may be partial) and nb of those
 * vectors (of one row or of several; the includer's choice, at most 8: 8 with AVX-512, 4 with AVX2 and
 * NEON) run at once, each its own chain of adds: bias (0 without one), then per tap one multiply and one
 * add (no FMA: -ffp-contract=off), then the clamp qv_clamp. The vectors are gemm_tile_f32.h's generic
 * 16-float type (one zmm, two ymm, four q registers). A partial vector is stored whole: its lanes past
 * the row land on the next row's first pixels, which a later vector writes again (vectors are stored in
 * pixel order); only the channel's last pixels go through a copy.
 *
 * Weights: QLLC_LAYOUT_F32_M24 of ch = C, K = KH * KW (the float conv rows' packer, no new layout): tap k of
 * channel c at ((c / 24) * K + k) * 24 + c % 24, one scalar broadcast per tap and 16 pixels.
 *
 * Included after f32_blocked.h (F_MR). */
#ifndef QLLC_F32_DW_H
#define QLLC_F32_DW_H
#include "layouts.h"
#include "conv_panel_f32.h" /* NO_VECTORIZE */
#include "f32_blocked.h"    /* F_MR */
#include "gemm_tile_f32.h"

#define F32DW_UNROLL _Pragma("GCC unroll 8")

#define DW_V 16 /* output pixels per vector */

/* 16 floats of v with the lanes whose input column iw0 + lane step is outside [0, W) cleared */
QLLC_INLINE qllc_v16f dwf32_inside(qllc_v16f v, int64_t iw0, int64_t step, int64_t W) {
  const qllc_v16i lane = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15};
  const qllc_v16i iw = lane * (int32_t)step + (int32_t)iw0;
  return (qllc_v16f)((qllc_v16i)v & ((iw >= 0) & (iw < (int32_t)W)));
}

/* The planes of channel c of x (nx floats; channel c starts at x + xc) for image rows / columns past the pads: only the planes
   some tap reads. Stride_w 1 and 2 go 16 plane columns at a time: 16 (or 32 split into their even and odd
   ones by vector shuffles: a scalar strided copy took most of a stride-2 layer's time) input floats loaded
   whole where they lie inside x, and the lanes outside the row cleared. A vector's columns past a plane row
   land on the next row, written after it, or in the plane's slack (read only by dropped lanes). */
QLLC_INLINE void dwf32_fill(float *QLLC_RESTRICT planes, int64_t P, const float *QLLC_RESTRICT x, int64_t nx,
                            int64_t xc, int64_t H, int64_t W,
                            int64_t Hq, int64_t Wv, const unsigned char *used, int64_t sh, int64_t sw, int64_t pt,
                            int64_t pl) {
  for (int64_t ph = 0; ph < sh; ph++)
    for (int64_t pw = 0; pw < sw; pw++) {
      /* stride 2: both phases at once (a phase no tap reads is written all the same) */
      if (sw == 2 ? pw == 1 || !(used[ph * 2] || used[ph * 2 + 1]) : !used[ph * sw + pw]) continue;
      float *d0 = planes + (ph * sw + pw) * P, *d1 = sw == 2 ? d0 + P : d0; /* d1: stride 2's odd columns */
      for (int64_t i = 0; i < Hq; i++, d0 += Wv, d1 += Wv) {
        const int64_t ih = i * sh + ph - pt;
        if (ih < 0 || ih >= H) {
          for (int64_t j = 0; j < Wv; j++) d0[j] = 0.0f;
          if (sw == 2)
            for (int64_t j = 0; j < Wv; j++) d1[j] = 0.0f;
          continue;
        }
        const int64_t r0 = xc + ih * W - pl; /* x + r0: the row's column -pl */
        const float *xr = x + xc + ih * W;
        int64_t j = 0;
        if (sw == 1) {
          for (; j < Wv && r0 + j >= 0 && r0 + j + DW_V <= nx; j += DW_V)
            qv_store(d0 + j, dwf32_inside(qv_load(xr + j - pl), j - pl, 1, W));
        } else if (sw == 2) {
          for (; j < Wv && r0 + 2 * j >= 0 && r0 + 2 * j + 2 * DW_V <= nx; j += DW_V) {
            const qllc_v16f va = qv_load(xr + 2 * j - pl), vb = qv_load(xr + 2 * j - pl + DW_V);
            const qllc_v16f ev = __builtin_shufflevector(va, vb, 0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26,
                                                         28, 30),
                            od = __builtin_shufflevector(va, vb, 1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23, 25, 27,
                                                         29, 31);
            qv_store(d0 + j, dwf32_inside(ev, 2 * j - pl, 2, W));
            qv_store(d1 + j, dwf32_inside(od, 2 * j + 1 - pl, 2, W));
          }
        }
        NO_VECTORIZE for (; j < Wv; j++) { /* where a whole vector would leave x: one by one */
          const int64_t iw = j * sw + pw - pl;
          d0[j] = iw >= 0 && iw < W ? xr[iw] : 0.0f;
          if (sw == 2) d1[j] = iw + 1 >= 0 && iw + 1 < W ? xr[iw + 1] : 0.0f;
        }
      }
    }
}

/* nb vectors of one channel's output, slots s0 .. s0 + nb - 1 (a slot past the last is the last again:
   the same values stored twice). Slot s: row s / nvr, pixels 16 (s % nvr) .. + 15. toff[k]: tap k's offset
   in the planes from an output pixel's position (row * Wv + column). */
QLLC_INLINE void dwf32_block(const int nb, float *QLLC_RESTRICT yc, const float *QLLC_RESTRICT planes,
                             const int64_t *QLLC_RESTRICT toff, const float *QLLC_RESTRICT wc, int64_t K,
                             int64_t s0, int64_t S, int64_t nvr, int64_t OW, int64_t NP, int64_t Wv, float b,
                             float lo, float hi) {
  const float *p[8];
  int64_t out_off[8];
  qllc_v16f acc[8];
  int64_t oh = s0 / nvr, v = s0 % nvr; /* slot s0, then the next ones by counting (no division per slot) */
  F32DW_UNROLL for (int i = 0; i < nb; i++) {
    p[i] = planes + oh * Wv + v * DW_V, out_off[i] = oh * OW + v * DW_V;
    acc[i] = qv_splat(b);
    if (s0 + i + 1 < S && ++v == nvr) v = 0, oh++;
  }
  for (int64_t k = 0; k < K; k++) {
    const int64_t t = toff[k];
    const float s = wc[k * F_MR];
    F32DW_UNROLL for (int i = 0; i < nb; i++) acc[i] += s * qv_load(p[i] + t);
  }
  const qllc_v16f l = qv_splat(lo), h = qv_splat(hi);
  F32DW_UNROLL for (int i = 0; i < nb; i++) {
    const qllc_v16f v = qv_clamp(acc[i], l, h);
    if (out_off[i] + DW_V <= NP) {
      qv_store(yc + out_off[i], v);
    } else { /* the channel's last pixels */
      float tmp[DW_V];
      qv_store(tmp, v);
      for (int64_t j = 0; j < NP - out_off[i]; j++) yc[out_off[i] + j] = tmp[j];
    }
  }
}

QLLC_INLINE void dwconv_f32_body(const int nb, float *QLLC_RESTRICT y, const float *QLLC_RESTRICT x,
                                 const float *QLLC_RESTRICT wp, const float *QLLC_RESTRICT b, int64_t N, int64_t C,
                                 int64_t H, int64_t W, int64_t OH, int64_t OW, int64_t KH, int64_t KW, int64_t sh,
                                 int64_t sw, int64_t pt, int64_t pl, int64_t dh, int64_t dw, float lo, float hi,
                                 float *QLLC_RESTRICT planes) {
  const int64_t NP = OH * OW, K = KH * KW;
  if (NP <= 0 || C <= 0) return;
  const int64_t Hq = qllc_dwf32_rows(OH, KH, sh, dh), Wv = qllc_dwf32_cols(OW, KW, sw, dw);
  const int64_t P = qllc_dwf32_plane(OH, OW, KH, KW, sh, sw, dh, dw);
  const int64_t nvr = (OW + DW_V - 1) / DW_V, S = OH * nvr; /* vectors per row, per channel */
  int64_t *QLLC_RESTRICT toff = (int64_t *)(planes + sh * sw * P); /* after the planes */
  unsigned char used[QLLC_DWF32_MAX_STRIDE * QLLC_DWF32_MAX_STRIDE] = {0};
  for (int64_t kh = 0; kh < KH; kh++)
    for (int64_t kw = 0; kw < KW; kw++) {
      const int64_t rh = kh * dh, rw = kw * dw;
      used[rh % sh * sw + rw % sw] = 1;
      toff[kh * KW + kw] = (rh % sh * sw + rw % sw) * P + rh / sh * Wv + rw / sw;
    }
  /* the planes' slack past their rows, read by the lanes past a row's last pixel: zeros, once */
  for (int64_t q = 0; q < sh * sw; q++)
    for (int64_t j = Hq * Wv; j < P; j++) planes[q * P + j] = 0.0f;
  for (int64_t n = 0; n < N; n++)
    for (int64_t c = 0; c < C; c++) {
      dwf32_fill(planes, P, x, N * C * H * W, (n * C + c) * H * W, H, W, Hq, Wv, used, sh, sw, pt, pl);
      const float *wc = wp + ((c / F_MR) * K) * F_MR + c % F_MR;
      const float bc = b ? b[c] : 0.0f;
      float *yc = y + (n * C + c) * NP;
      for (int64_t s0 = 0; s0 < S; s0 += nb)
        dwf32_block(nb, yc, planes, toff, wc, K, s0, S, nvr, OW, NP, Wv, bc, lo, hi);
    }
}

#endif
