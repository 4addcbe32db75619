/* libjit/bitcode/q_layers.c: kernels of the fused quantized layers (Conv, FC, per-channel affine) and
 * of MatMul between activations. The contract, numerics and layouts are in kernels_q.h; every ISA
 * variant must reproduce these bits. One template per kernel, instantiated for every element
 * combination: the accumulator type and the requantization width come from the input kind (int32 /
 * qk_req32 for 8-bit, int64 / qk_req64 for int16).
 *
 * Conv and FC run as dot products over a packed int16 panel (the GEMM fronts below); the direct loops
 * (CONV2D_DIRECT, FC_DIRECT) are the plain reference and still run the layers the GEMM front does not
 * take (depthwise and other narrow groups, tiny or very long reductions). Both give the same bits:
 * integer sums do not depend on the order. */
#include "q_common.h"

/* Direct conv: for each output row, ow is processed in chunks of QK_CHUNK accumulators on the stack (a kernel
   may not allocate). Each chunk starts at the bias; then for every input channel of the group and
   every tap (kh, kw), acc[ow] += w * x[ih][ow * stride_w + off] over the ow range whose input column is
   inside the image (computed once per tap, as the float conv.c does): the innermost loop is contiguous
   in acc and, for stride 1, in x, with no test per element, so it vectorizes after specialisation.
   Taps in the padding add z_x * w (the padded input reads z_x, real 0; the folded bias cancels it):
   a whole padded row adds z_x * sum_kw w, the columns outside [lo, hi) add z_x * w each. Integer
   sums are exact in any order within the documented accumulator bound. */

#define CONV2D_DIRECT(TI, ti, TW, tw, TO, to, TB, ACC, REQ)                                                      \
  QLLC_INLINE void conv_direct_##ti##_##tw##_##to(                                                                \
      TO *QLLC_RESTRICT y, const TI *QLLC_RESTRICT x, const TW *QLLC_RESTRICT w, const TB *QLLC_RESTRICT bias,     \
      const int32_t *m, const int32_t *n, int64_t N, int64_t C, int64_t H, int64_t W, int64_t M, int64_t OH,      \
      int64_t OW, int64_t KH, int64_t KW, int64_t stride_h, int64_t stride_w, int64_t pad_top, int64_t pad_left, \
      int64_t dil_h, int64_t dil_w, int64_t group, int32_t z_x, int32_t z_y, int32_t act_lo, int32_t act_hi) {    \
    const int64_t Cg = C / group, Mg = M / group;                                                                 \
    ACC acc[QK_CHUNK];                                                                                            \
    for (int64_t b = 0; b < N; b++)                                                                               \
      for (int64_t oc = 0; oc < M; oc++) {                                                                        \
        const TI *xg = x + (b * C + oc / Mg * Cg) * H * W;                                                        \
        const TW *wm = w + oc * Cg * KH * KW;                                                                     \
        TO *ym = y + (b * M + oc) * OH * OW;                                                                      \
        const int32_t mc = m[oc], nc = n[oc];                                                                     \
        for (int64_t oh = 0; oh < OH; oh++)                                                                       \
          for (int64_t ow0 = 0; ow0 < OW; ow0 += QK_CHUNK) {                                                      \
            const int64_t cnt = OW - ow0 < QK_CHUNK ? OW - ow0 : QK_CHUNK;                                        \
            for (int64_t j = 0; j < cnt; j++) acc[j] = (ACC)bias[oc];                                             \
            for (int64_t ic = 0; ic < Cg; ic++)                                                                   \
              for (int64_t kh = 0; kh < KH; kh++) {                                                               \
                const int64_t ih = oh * stride_h - pad_top + kh * dil_h;                                          \
                const TW *wk = wm + (ic * KH + kh) * KW;                                                          \
                if (ih < 0 || ih >= H) { /* a padded row: every tap reads z_x */                                  \
                  ACC ws = 0;                                                                                     \
                  for (int64_t kw = 0; kw < KW; kw++) ws += (ACC)wk[kw];                                          \
                  for (int64_t j = 0; j < cnt; j++) acc[j] += (ACC)z_x * ws;                                      \
                  continue;                                                                                       \
                }                                                                                                 \
                const TI *xr = xg + (ic * H + ih) * W;                                                            \
                for (int64_t kw = 0; kw < KW; kw++) {                                                             \
                  const int64_t off = kw * dil_w - pad_left; /* iw = ow * stride_w + off */                       \
                  int64_t lo = qk_first_inside(off, stride_w) - ow0, hi = qk_end_inside(off, stride_w, W, OW) - ow0; \
                  lo = lo < 0 ? 0 : lo > cnt ? cnt : lo;                                                          \
                  hi = hi < lo ? lo : hi > cnt ? cnt : hi;                                                        \
                  const ACC wv = (ACC)wk[kw], zw = (ACC)z_x * wv;                                                 \
                  const TI *xs = xr + ow0 * stride_w + off;                                                       \
                  for (int64_t j = 0; j < lo; j++) acc[j] += zw;                                                  \
                  for (int64_t j = lo; j < hi; j++) acc[j] += wv * (ACC)xs[j * stride_w];                         \
                  for (int64_t j = hi; j < cnt; j++) acc[j] += zw;                                                \
                }                                                                                                 \
              }                                                                                                   \
            TO *yr = ym + oh * OW + ow0;                                                                          \
            for (int64_t j = 0; j < cnt; j++) yr[j] = (TO)qk_out(REQ(acc[j], mc, nc), z_y, act_lo, act_hi);     \
          }                                                                                                       \
      }                                                                                                           \
  }

#define FC_DIRECT(TI, ti, TW, tw, TO, to, TB, ACC, REQ)                                                          \
  QLLC_INLINE void fc_direct_##ti##_##tw##_##to(TO *QLLC_RESTRICT y, const TI *QLLC_RESTRICT x,                   \
                                                const TW *QLLC_RESTRICT w, const TB *QLLC_RESTRICT bias,          \
                                                const int32_t *m, const int32_t *n, int64_t M, int64_t N,        \
                                                int64_t K, int32_t z_x, int32_t z_y, int32_t act_lo,             \
                                                int32_t act_hi) {                                                 \
    (void)z_x; /* folded into the bias */                                                                         \
    for (int64_t i = 0; i < M; i++)                                                                               \
      for (int64_t c = 0; c < N; c++) {                                                                           \
        ACC acc = (ACC)bias[c];                                                                                   \
        for (int64_t k = 0; k < K; k++) acc += (ACC)x[i * K + k] * (ACC)w[c * K + k];                              \
        y[i * N + c] = (TO)qk_out(REQ(acc, m[c], n[c]), z_y, act_lo, act_hi);                                     \
      }                                                                                                           \
  }

#define AFFINE(TI, ti, TW, tw, TO, to, TB, ACC, REQ)                                                             \
  QLLC_KERNEL void qllc_k_channel_affine_##ti##_##tw##_##to(                                                      \
      TO *QLLC_RESTRICT y, const TI *QLLC_RESTRICT x, const TW *QLLC_RESTRICT a, const TB *QLLC_RESTRICT bias,     \
      const int32_t *m, const int32_t *n, int64_t N, int64_t C, int64_t inner, int32_t z_y, int32_t act_lo,       \
      int32_t act_hi) {                                                                                           \
    for (int64_t b = 0; b < N; b++)                                                                               \
      for (int64_t c = 0; c < C; c++)                                                                             \
        for (int64_t i = 0; i < inner; i++) {                                                                     \
          int64_t at = (b * C + c) * inner + i;                                                                   \
          ACC acc = (ACC)bias[c] + (ACC)x[at] * (ACC)a[c];                                                        \
          y[at] = (TO)qk_out(REQ(acc, m[c], n[c]), z_y, act_lo, act_hi);                                          \
        }                                                                                                         \
  }


/* ---- GEMM fronts -------------------------------------------------------------------------------------
 * Conv per image and group is the product y[m][p] = bias[m] + sum_k w[m][k] * X[k][p] (k = (c, kh, kw),
 * X[k][p] the input tap k of output pixel p, z_x in the padding), FC is y[i][c] = bias[c] + sum_k
 * x[i][k] * w[c][k]. Both run as dot products along k: the pixels' taps are packed into an int16 panel
 * on the stack, one row of K contiguous values per pixel (at most QP_PANEL values: 32 KiB, the L1 of the
 * target CPUs), and each output is one dot product of a panel row with a weight row, which is already
 * contiguous in k in both layouts (used in place, no weight packing). Why int16 and dot products: the
 * loop vectorizer turns `s += (int32)x16 * (int32)w8` into a reduction that x86 lowers to vpmaddwd, and
 * with AVX512-VNNI / AVX-VNNI to vpdpwssd (checked in `qllc compile --cpu znver4` objects): 2 MACs per
 * 32-bit lane per instruction, exact for every 8-bit operand (|x| <= 255, |w| <= 128: a pair sums to
 * < 2^17). A u8 input widened straight to int32 does not match (vpmulld), hence the int16 panel for
 * every input kind. Why not a register-blocked outer-product tile as the float conv: a shared operand
 * (one pixel vector against several weight rows) defeats that match (x86's partial-reduction rewrite
 * wants single-use extends), and the explicit even/odd vpmaddwd pattern in generic vectors is split
 * by LLVM's Reassociate pass before instruction selection; vpdpbusd (4 MACs per lane) is not reachable
 * from portable C at all. Those belong to an ISA variant under targets/x86_64/kernels/.
 * The integer sum is the same in any order (int32 wraps identically; within the documented bound it does
 * not wrap at all), so the bits equal the direct loops above. Layers the panel does not fit (K > QP_PANEL)
 * or too narrow to pay for packing (depthwise: fewer than QP_MIN_ROWS outputs per group) run the direct
 * loops, which stay as the reference. */
#ifndef QP_PANEL
#define QP_PANEL 16384 /* int16 panel entries: 32 KiB */
#endif
#define QP_NPB 64      /* pixels (rows) per panel */
#define QP_KALIGN 64   /* conv panel rows and dot lengths are padded with zeros to a multiple of this */
#define QP_SLACK 8     /* panel entries past QP_PANEL that conv packing may overwrite (kwp - KW < 4) */
#ifndef QP_MIN_ROWS /* overridable so that a test build can send every shape through the GEMM path */
#define QP_MIN_ROWS 8 /* output channels per group below which conv runs the direct loop */
#endif
#ifndef QP_MIN_K
#define QP_MIN_K 8 /* reduction length below which the dot products do not pay */
#endif

/* The dot loops: 32 lanes (one zmm of vpdpwssd with AVX-512) and two accumulator chains, measured best
 * on ResNet-18 shapes (Zen 4): the default choice (16 lanes, one chain) ran 30 % slower, 4 chains left
 * a slow remainder for K = 576. A compiler hint, not an ISA test; other compilers ignore it. */
#if defined(__clang__) && !defined(QP_NO_PRAGMA)
#define QP_DOT_LOOP _Pragma("clang loop vectorize_width(QP_VW) interleave_count(QP_IC)")
#else
#define QP_DOT_LOOP
#endif
#ifndef QP_VW
#define QP_VW 32
#endif
#ifndef QP_IC
#define QP_IC 2
#endif
QLLC_INLINE int32_t qk_dot32_i8(const int16_t *QLLC_RESTRICT x, const int8_t *QLLC_RESTRICT w, int64_t k) {
  int32_t s = 0;
  QP_DOT_LOOP
  for (int64_t i = 0; i < k; i++) s += (int32_t)x[i] * (int32_t)w[i];
  return s;
}
/* int16 x int8 (16x8): |product| <= 2^15 * 2^7 = 2^22, so runs of QP_RUN16X8 = 448 products sum exactly
 * in int32 (448 * 2^22 < 2^31; a multiple of the 64-tap padding) and take the same vpmaddwd path as the
 * 8-bit kernels; the runs add up in int64. */
#define QP_RUN16X8 448
QLLC_INLINE int64_t qk_dot64_i8(const int16_t *QLLC_RESTRICT x, const int8_t *QLLC_RESTRICT w, int64_t k) {
  int64_t s = 0;
  for (int64_t k0 = 0; k0 < k; k0 += QP_RUN16X8)
    s += qk_dot32_i8(x + k0, w + k0, k - k0 < QP_RUN16X8 ? k - k0 : QP_RUN16X8);
  return s;
}
/* int16 x int16: each product fits int32 (|p| <= 2^30), the sum is int64 */
QLLC_INLINE int64_t qk_dot64_i16(const int16_t *QLLC_RESTRICT x, const int16_t *QLLC_RESTRICT w, int64_t k) {
  int64_t s = 0;
  for (int64_t i = 0; i < k; i++) s += (int64_t)((int32_t)x[i] * (int32_t)w[i]);
  return s;
}

/* Packs the K = cg*KH*KW taps of output pixels p0 .. p0+np of one image and group (xg: its first input
 * channel) into panel rows of K int16 values; padded taps read z_x. */
#define CONV_PACK(TI, ti)                                                                                        \
  QLLC_INLINE void conv_pack_##ti(int16_t *QLLC_RESTRICT panel, const TI *QLLC_RESTRICT xg, int64_t p0,         \
                                  int64_t np, int64_t cg, int64_t H, int64_t W, int64_t OW, int64_t KH,         \
                                  int64_t KW, int64_t stride_h, int64_t stride_w, int64_t pad_top,              \
                                  int64_t pad_left, int64_t dil_h, int64_t dil_w, int32_t z_x, int64_t ld) {     \
    const int64_t K = cg * KH * KW;                                                                             \
    const int16_t zx = (int16_t)z_x;                                                                            \
    for (int64_t p = 0; p < np; p++) {                                                                          \
      const int64_t oh = (p0 + p) / OW, ow = (p0 + p) % OW;                                                     \
      const int64_t ih0 = oh * stride_h - pad_top, iw0 = ow * stride_w - pad_left;                              \
      int16_t *d = panel + p * ld;                                                                              \
      if (ih0 >= 0 && ih0 + (KH - 1) * dil_h < H && iw0 >= 0 && iw0 + (KW - 1) * dil_w < W) {                    \
        /* the whole window inside the image (most pixels): plain copies, no test per tap */                    \
        const TI *xw = xg + ih0 * W + iw0;                                                                      \
        const int64_t kwp = (KW + 3) & ~(int64_t)3;                                                             \
        if (dil_w == 1 && iw0 + kwp <= W) {                                                                     \
          /* copies of kwp >= KW taps (a whole vector: one load, one widening, one store per row of the      \
             window); the kwp - KW extra values land where the next row of the window (or the next pixel)    \
             is written right after, and the panel has QP_SLACK entries past its end for the last one */     \
          for (int64_t c = 0; c < cg; c++)                                                                      \
            for (int64_t kh = 0; kh < KH; kh++, d += KW) {                                                      \
              const TI *xr = xw + (c * H + kh * dil_h) * W;                                                     \
              for (int64_t kw = 0; kw < kwp; kw++) d[kw] = (int16_t)xr[kw];                                     \
            }                                                                                                   \
          continue;                                                                                             \
        }                                                                                                       \
        for (int64_t c = 0; c < cg; c++)                                                                        \
          for (int64_t kh = 0; kh < KH; kh++, d += KW) {                                                        \
            const TI *xr = xw + (c * H + kh * dil_h) * W;                                                       \
            for (int64_t kw = 0; kw < KW; kw++) d[kw] = (int16_t)xr[kw * dil_w];                                \
          }                                                                                                     \
        continue;                                                                                               \
      }                                                                                                         \
      for (int64_t c = 0; c < cg; c++) {                                                                        \
        const TI *xc = xg + c * H * W;                                                                          \
        for (int64_t kh = 0; kh < KH; kh++, d += KW) {                                                          \
          const int64_t ih = ih0 + kh * dil_h;                                                                  \
          const int row_in = ih >= 0 && ih < H;                                                                 \
          const TI *xr = xc + (row_in ? ih : 0) * W;                                                            \
          for (int64_t kw = 0; kw < KW; kw++) {                                                                 \
            const int64_t iw = iw0 + kw * dil_w;                                                                \
            d[kw] = row_in && iw >= 0 && iw < W ? (int16_t)xr[iw] : zx;                                         \
          }                                                                                                     \
        }                                                                                                       \
      }                                                                                                         \
    }                                                                                                           \
    for (int64_t p = 0; p < np; p++) /* zero the row tails (and what the vector copies left there) */          \
      for (int64_t j = K; j < ld; j++) panel[p * ld + j] = 0;                                                    \
  }
CONV_PACK(int8_t, i8)
CONV_PACK(uint8_t, u8)
CONV_PACK(int16_t, i16)

#define CONV2D_GEMM(TI, ti, TW, tw, TO, to, TB, ACC, REQ, DOT)                                                   \
  QLLC_KERNEL void qllc_k_conv2d_##ti##_##tw##_##to(                                                              \
      TO *QLLC_RESTRICT y, const TI *QLLC_RESTRICT x, const TW *QLLC_RESTRICT w, const TB *QLLC_RESTRICT bias,     \
      const int32_t *m, const int32_t *n, int64_t N, int64_t C, int64_t H, int64_t W, int64_t M, int64_t OH,      \
      int64_t OW, int64_t KH, int64_t KW, int64_t stride_h, int64_t stride_w, int64_t pad_top, int64_t pad_left, \
      int64_t dil_h, int64_t dil_w, int64_t group, int32_t z_x, int32_t z_y, int32_t act_lo, int32_t act_hi) {    \
    const int64_t cg = C / group, mg = M / group, K = cg * KH * KW, NP = OH * OW;                                 \
    const int64_t Kp = (K + QP_KALIGN - 1) & ~(int64_t)(QP_KALIGN - 1); /* panel row: whole vector steps */  \
    if (mg < QP_MIN_ROWS || K < QP_MIN_K || Kp > QP_PANEL) {                                                      \
      conv_direct_##ti##_##tw##_##to(y, x, w, bias, m, n, N, C, H, W, M, OH, OW, KH, KW, stride_h, stride_w,      \
                                     pad_top, pad_left, dil_h, dil_w, group, z_x, z_y, act_lo, act_hi);          \
      return;                                                                                                     \
    }                                                                                                             \
    int64_t npb = QP_PANEL / Kp;                                                                                  \
    if (npb > QP_NPB) npb = QP_NPB;                                                                               \
    int16_t panel[QP_PANEL + QP_SLACK] __attribute__((aligned(64)));                                              \
    TW wpad[QP_PANEL]; /* a weight row padded with zeros to Kp, when K is not a multiple of QP_KALIGN */           \
    ACC acc[QP_NPB];                                                                                              \
    for (int64_t b = 0; b < N; b++)                                                                               \
      for (int64_t g = 0; g < group; g++) {                                                                       \
        const TI *xg = x + (b * C + g * cg) * H * W;                                                              \
        for (int64_t p0 = 0; p0 < NP; p0 += npb) {                                                                \
          const int64_t np = NP - p0 < npb ? NP - p0 : npb;                                                       \
          conv_pack_##ti(panel, xg, p0, np, cg, H, W, OW, KH, KW, stride_h, stride_w, pad_top, pad_left, dil_h,  \
                         dil_w, z_x, Kp);                                                                         \
          for (int64_t oc = g * mg; oc < (g + 1) * mg; oc++) {                                                    \
            const TW *wr = w + oc * K;                                                                            \
            if (Kp != K) {                                                                                        \
              for (int64_t j = 0; j < K; j++) wpad[j] = wr[j];                                                    \
              for (int64_t j = K; j < Kp; j++) wpad[j] = 0;                                                       \
              wr = wpad;                                                                                          \
            }                                                                                                     \
            const ACC b0 = (ACC)bias[oc];                                                                         \
            const int32_t mc = m[oc], nc = n[oc];                                                                 \
            TO *yr = y + (b * M + oc) * NP + p0;                                                                  \
            for (int64_t p = 0; p < np; p++) acc[p] = b0 + DOT(panel + p * Kp, wr, Kp);                             \
            /* a separate pass over the row: the requantization vectorizes across pixels */                       \
            for (int64_t p = 0; p < np; p++) yr[p] = (TO)qk_out(REQ(acc[p], mc, nc), z_y, act_lo, act_hi);       \
          }                                                                                                       \
        }                                                                                                         \
      }                                                                                                           \
  }

#define FC_GEMM(TI, ti, TW, tw, TO, to, TB, ACC, REQ, DOT)                                                       \
  QLLC_KERNEL void qllc_k_fc_##ti##_##tw##_##to(TO *QLLC_RESTRICT y, const TI *QLLC_RESTRICT x,                   \
                                                const TW *QLLC_RESTRICT w, const TB *QLLC_RESTRICT bias,          \
                                                const int32_t *m, const int32_t *n, int64_t M, int64_t N,        \
                                                int64_t K, int32_t z_x, int32_t z_y, int32_t act_lo,             \
                                                int32_t act_hi) {                                                 \
    if (K < QP_MIN_K || K > QP_PANEL) {                                                                           \
      fc_direct_##ti##_##tw##_##to(y, x, w, bias, m, n, M, N, K, z_x, z_y, act_lo, act_hi);                       \
      return;                                                                                                     \
    }                                                                                                             \
    int64_t npb = QP_PANEL / K;                                                                                   \
    if (npb > QP_NPB) npb = QP_NPB;                                                                               \
    int16_t panel[QP_PANEL] __attribute__((aligned(64)));                                                         \
    for (int64_t i0 = 0; i0 < M; i0 += npb) {                                                                     \
      const int64_t np = M - i0 < npb ? M - i0 : npb;                                                             \
      for (int64_t j = 0; j < np * K; j++) panel[j] = (int16_t)x[i0 * K + j];                                     \
      for (int64_t c = 0; c < N; c++) {                                                                           \
        const TW *wr = w + c * K;                                                                                 \
        const ACC b0 = (ACC)bias[c];                                                                              \
        const int32_t mc = m[c], nc = n[c];                                                                       \
        for (int64_t p = 0; p < np; p++)                                                                          \
          y[(i0 + p) * N + c] = (TO)qk_out(REQ(b0 + DOT(panel + p * K, wr, K), mc, nc), z_y, act_lo, act_hi);    \
      }                                                                                                           \
    }                                                                                                             \
  }

#define LAYER(TI, ti, TW, tw, TO, to, TB, ACC, REQ, DOT) \
  CONV2D_DIRECT(TI, ti, TW, tw, TO, to, TB, ACC, REQ)    \
  CONV2D_GEMM(TI, ti, TW, tw, TO, to, TB, ACC, REQ, DOT) \
  FC_DIRECT(TI, ti, TW, tw, TO, to, TB, ACC, REQ)        \
  FC_GEMM(TI, ti, TW, tw, TO, to, TB, ACC, REQ, DOT)     \
  AFFINE(TI, ti, TW, tw, TO, to, TB, ACC, REQ)
LAYER(int8_t, i8, int8_t, i8, int8_t, i8, int32_t, int32_t, qk_req32, qk_dot32_i8)
LAYER(int8_t, i8, int8_t, i8, uint8_t, u8, int32_t, int32_t, qk_req32, qk_dot32_i8)
LAYER(uint8_t, u8, int8_t, i8, int8_t, i8, int32_t, int32_t, qk_req32, qk_dot32_i8)
LAYER(uint8_t, u8, int8_t, i8, uint8_t, u8, int32_t, int32_t, qk_req32, qk_dot32_i8)
LAYER(int16_t, i16, int16_t, i16, int16_t, i16, int64_t, int64_t, qk_req64, qk_dot64_i16)
LAYER(int16_t, i16, int8_t, i8, int16_t, i16, int64_t, int64_t, qk_req64, qk_dot64_i8)

/* Direct MatMul of two activations: for each output row, columns in chunks of QK_CHUNK accumulators; for
   each k, acc[c] += (a[r][k] - z_a) * (b[k][c] - z_b) runs contiguously along b's row (vectorizes). */
#define MATMUL_DIRECT(T, t, ACC, REQ)                                                                            \
  QLLC_INLINE void matmul_direct_##t(T *QLLC_RESTRICT y, const T *QLLC_RESTRICT a,                                \
                                                 const T *QLLC_RESTRICT b, int64_t batches, int64_t M, int64_t N, \
                                                 int64_t K, const int64_t *a_off, const int64_t *b_off,          \
                                                 int32_t z_a, int32_t z_b, int32_t m, int32_t n, int32_t z_y,    \
                                                 int32_t act_lo, int32_t act_hi) {                               \
    ACC acc[QK_CHUNK];                                                                                            \
    for (int64_t i = 0; i < batches; i++) {                                                                       \
      const T *A = a + a_off[i], *B = b + b_off[i];                                                               \
      T *Y = y + i * M * N;                                                                                       \
      for (int64_t r = 0; r < M; r++)                                                                             \
        for (int64_t c0 = 0; c0 < N; c0 += QK_CHUNK) {                                                            \
          const int64_t cnt = N - c0 < QK_CHUNK ? N - c0 : QK_CHUNK;                                              \
          for (int64_t j = 0; j < cnt; j++) acc[j] = 0;                                                           \
          for (int64_t k = 0; k < K; k++) {                                                                       \
            const ACC av = (ACC)((int32_t)A[r * K + k] - z_a);                                                    \
            const T *Bk = B + k * N + c0;                                                                         \
            for (int64_t j = 0; j < cnt; j++) acc[j] += av * (ACC)((int32_t)Bk[j] - z_b);                         \
          }                                                                                                       \
          for (int64_t j = 0; j < cnt; j++) Y[r * N + c0 + j] = (T)qk_out(REQ(acc[j], m, n), z_y, act_lo, act_hi); \
        }                                                                                                         \
    }                                                                                                             \
  }

/* 8-bit MatMul as dot products, as the fused layers: per batch and block of columns, the columns of B
 * minus z_b are packed as int16 rows of Kp values (Kp = K padded with zeros to QP_KALIGN), each row of
 * A minus z_a likewise, and every output is one dot product (the vpmaddwd / vpdpwssd path). Exact:
 * |a - z_a|, |b - z_b| <= 255 fit int16, a product pair sums to < 2^17, and the int32 sum is the same
 * in any order. int16 MatMul (differences up to 2^16 do not fit int16) and shapes the panel does not
 * fit run the direct loop. */
QLLC_INLINE int32_t qk_dot32_i16(const int16_t *QLLC_RESTRICT x, const int16_t *QLLC_RESTRICT w, int64_t k) {
  int32_t s = 0;
  QP_DOT_LOOP
  for (int64_t i = 0; i < k; i++) s += (int32_t)x[i] * (int32_t)w[i];
  return s;
}
#define MATMUL8(T, t)                                                                                            \
  QLLC_KERNEL void qllc_k_matmul_##t##_##t##_##t(T *QLLC_RESTRICT y, const T *QLLC_RESTRICT a,                    \
                                                 const T *QLLC_RESTRICT b, int64_t batches, int64_t M, int64_t N, \
                                                 int64_t K, const int64_t *a_off, const int64_t *b_off,          \
                                                 int32_t z_a, int32_t z_b, int32_t m, int32_t n, int32_t z_y,    \
                                                 int32_t act_lo, int32_t act_hi) {                               \
    const int64_t Kp = (K + QP_KALIGN - 1) & ~(int64_t)(QP_KALIGN - 1);                                          \
    if (K < QP_MIN_K || N < QP_MIN_ROWS || Kp > QP_PANEL) {                                                       \
      matmul_direct_##t(y, a, b, batches, M, N, K, a_off, b_off, z_a, z_b, m, n, z_y, act_lo, act_hi);           \
      return;                                                                                                     \
    }                                                                                                             \
    int64_t ncb = QP_PANEL / Kp;                                                                                  \
    if (ncb > QP_NPB) ncb = QP_NPB;                                                                               \
    int16_t bt[QP_PANEL] __attribute__((aligned(64)));                                                            \
    int16_t ar[QP_PANEL] __attribute__((aligned(64)));                                                            \
    int32_t acc[QP_NPB];                                                                                          \
    for (int64_t i = 0; i < batches; i++) {                                                                       \
      const T *A = a + a_off[i], *B = b + b_off[i];                                                               \
      T *Y = y + i * M * N;                                                                                       \
      for (int64_t c0 = 0; c0 < N; c0 += ncb) {                                                                   \
        const int64_t nc = N - c0 < ncb ? N - c0 : ncb;                                                           \
        for (int64_t k = 0; k < K; k++)                                                                           \
          for (int64_t c = 0; c < nc; c++) bt[c * Kp + k] = (int16_t)((int32_t)B[k * N + c0 + c] - z_b);         \
        for (int64_t c = 0; c < nc; c++)                                                                          \
          for (int64_t k = K; k < Kp; k++) bt[c * Kp + k] = 0;                                                    \
        for (int64_t r = 0; r < M; r++) {                                                                         \
          for (int64_t k = 0; k < K; k++) ar[k] = (int16_t)((int32_t)A[r * K + k] - z_a);                        \
          for (int64_t k = K; k < Kp; k++) ar[k] = 0;                                                             \
          for (int64_t c = 0; c < nc; c++) acc[c] = qk_dot32_i16(ar, bt + c * Kp, Kp);                            \
          T *yr = Y + r * N + c0;                                                                                 \
          for (int64_t c = 0; c < nc; c++) yr[c] = (T)qk_out(qk_req32(acc[c], m, n), z_y, act_lo, act_hi);       \
        }                                                                                                         \
      }                                                                                                           \
    }                                                                                                             \
  }
MATMUL_DIRECT(int8_t, i8, int32_t, qk_req32)
MATMUL_DIRECT(uint8_t, u8, int32_t, qk_req32)
MATMUL_DIRECT(int16_t, i16, int64_t, qk_req64)
MATMUL8(int8_t, i8)
MATMUL8(uint8_t, u8)
QLLC_KERNEL void qllc_k_matmul_i16_i16_i16(int16_t *QLLC_RESTRICT y, const int16_t *QLLC_RESTRICT a,
                                           const int16_t *QLLC_RESTRICT b, int64_t batches, int64_t M, int64_t N,
                                           int64_t K, const int64_t *a_off, const int64_t *b_off, int32_t z_a,
                                           int32_t z_b, int32_t m, int32_t n, int32_t z_y, int32_t act_lo,
                                           int32_t act_hi) {
  matmul_direct_i16(y, a, b, batches, M, N, K, a_off, b_off, z_a, z_b, m, n, z_y, act_lo, act_hi);
}
