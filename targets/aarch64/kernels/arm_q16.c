/* targets/aarch64/kernels/arm_q16.c: aarch64 NEON variants (__neon) of the fused 16-bit-input Conv and
 * FC layers (rows in variants.def), int16 x int8 (16x8) and int16 x int16, bit-identical to the scalar
 * qllc_k_conv2d_i16_* / qllc_k_fc_i16_* of q_layers.c (the int64 accumulator contract).
 *
 * Weights (src/lower/pack16.c, plain int16 values, never split): FC QLLC_LAYOUT_K2N16 (per block of 16
 * channels, per pair of reductions, 16 x 2 int16), conv QLLC_LAYOUT_ROWS_K2 (a row of Kp2 int16 per
 * output channel). Bias: int64, as the scalar kernel's.
 *  - 16x8: SMLAL / SMLAL2 (vmlal_s16, vmlal_high_s16) into int32 lanes. A product is at most 2^22 in
 *    magnitude (|x| <= 2^15, |w| <= 2^7); a lane takes at most QA16_RUN products before it is widened
 *    into int64 (SADALP, vpadalq_s32): QA16_RUN * 2^22 = 2^30 < 2^31, exact.
 *  - 16x16: SMULL / SMULL2 (products below 2^30 + 1, exact in int32) straight into int64 with SADALP.
 * FC: 2 input rows x 16 channels a tile, the input pairs (x[2k], x[2k+1]) broadcast against the K2N16
 * line; the lanes hold (channel, k parity) and SADALP adds the parities into the channel's int64.
 * Conv: implicit GEMM per image and group: up to 64 output pixels are packed into the scratch buffer
 * (qllc_scratch_conv(K, 2) bytes) as rows of Kp2 int16 taps (padding reads z_x, taps past K read 0);
 * 4 channels x 4 pixels a tile of dot products along K, 8 taps a step.
 * The requantization (REQUANT on int64, a 128-bit product) is the scalar one (qk_req64), per output. */
#include <arm_neon.h>

#include "q_common.h"
#include "variants.h"

#define QA16_INL static inline __attribute__((always_inline))
#define QA16_UNROLL _Pragma("GCC unroll 16")
#define QA16_RUN 256 /* 16x8 products a lane takes per exact int32 run (FC: 1 a step, conv: 2) */

/* ---- FC ------------------------------------------------------------------------------------------- */
/* R rows (1..2) from row i0 against block c0 (16 channels, ch of them real). */
QA16_INL void qa16_fc_tile(const int R, const int w8, int16_t *y, const int16_t *x, const int16_t *wb,
                           const int64_t *bias, const int32_t *m, const int32_t *n, int64_t i0, int64_t N, int64_t K,
                           int64_t c0, int64_t ch, int32_t z_y, int32_t lo, int32_t hi) {
  const int64_t P = (K + 1) / 2; /* pairs */
  int64x2_t acc[2][8];
  QA16_UNROLL for (int r = 0; r < 2; r++) QA16_UNROLL for (int j = 0; j < 8; j++) acc[r][j] = vdupq_n_s64(0);
  for (int64_t p0 = 0; p0 < P; p0 += QA16_RUN) {
    const int64_t pe = P - p0 < QA16_RUN ? P : p0 + QA16_RUN;
    int32x4_t a32[2][8];
    QA16_UNROLL for (int r = 0; r < 2; r++) QA16_UNROLL for (int j = 0; j < 8; j++) a32[r][j] = vdupq_n_s32(0);
    for (int64_t p = p0; p < pe; p++) {
      int16x8_t xv[2];
      QA16_UNROLL for (int r = 0; r < R; r++) {
        const int16_t *xr = x + (i0 + r) * K + 2 * p;
        const int16_t x0 = xr[0], x1 = 2 * p + 1 < K ? xr[1] : 0;
        const int16x4_t pair = vset_lane_s16(x1, vdup_n_s16(x0), 1);
        xv[r] = vreinterpretq_s16_s32(vdupq_n_s32(vget_lane_s32(vreinterpret_s32_s16(pair), 0)));
      }
      const int16_t *wl = wb + p * 32;
      QA16_UNROLL for (int q = 0; q < 4; q++) {
        const int16x8_t wv = vld1q_s16(wl + 8 * q); /* channels 4q .. 4q+3, both parities */
        QA16_UNROLL for (int r = 0; r < R; r++) {
          if (w8) {
            a32[r][2 * q] = vmlal_s16(a32[r][2 * q], vget_low_s16(wv), vget_low_s16(xv[r]));
            a32[r][2 * q + 1] = vmlal_high_s16(a32[r][2 * q + 1], wv, xv[r]);
          } else {
            acc[r][2 * q] = vpadalq_s32(acc[r][2 * q], vmull_s16(vget_low_s16(wv), vget_low_s16(xv[r])));
            acc[r][2 * q + 1] = vpadalq_s32(acc[r][2 * q + 1], vmull_high_s16(wv, xv[r]));
          }
        }
      }
    }
    if (w8)
      QA16_UNROLL for (int r = 0; r < R; r++) QA16_UNROLL for (int j = 0; j < 8; j++) acc[r][j] =
          vpadalq_s32(acc[r][j], a32[r][j]);
  }
  QA16_UNROLL for (int r = 0; r < R; r++) {
    int64_t s[16];
    QA16_UNROLL for (int j = 0; j < 8; j++) vst1q_s64(s + 2 * j, acc[r][j]);
    int16_t *yr = y + (i0 + r) * N + c0;
    for (int64_t j = 0; j < ch; j++)
      yr[j] = (int16_t)qk_out(qk_req64(s[j] + bias[c0 + j], m[c0 + j], n[c0 + j]), z_y, lo, hi);
  }
}

QA16_INL void qa16_fc(const int w8, int16_t *y, const int16_t *x, const int16_t *wp, const int64_t *bias,
                      const int32_t *m, const int32_t *n, int64_t M, int64_t N, int64_t K, int32_t z_y, int32_t lo,
                      int32_t hi) {
  const int64_t P = (K + 1) / 2;
  for (int64_t c0 = 0; c0 < N; c0 += 16) {
    const int64_t ch = N - c0 < 16 ? N - c0 : 16;
    const int16_t *wb = wp + (c0 / 16) * P * 32;
    int64_t i0 = 0;
    for (; i0 + 2 <= M; i0 += 2) qa16_fc_tile(2, w8, y, x, wb, bias, m, n, i0, N, K, c0, ch, z_y, lo, hi);
    if (i0 < M) qa16_fc_tile(1, w8, y, x, wb, bias, m, n, i0, N, K, c0, ch, z_y, lo, hi);
  }
}

/* ---- Conv ------------------------------------------------------------------------------------------ */
/* Pixel rows of Kp2 taps: tap k of pixel j at j * Kp2 + k (padding z_x, taps past K 0). */
QA16_INL void qa16_pack(int16_t *panel, const int16_t *xg, int64_t Cg, int64_t H, int64_t W, int64_t OW, int64_t KH,
                        int64_t KW, int64_t sh, int64_t sw, int64_t pt, int64_t pl, int64_t dh, int64_t dw, int64_t p0,
                        int64_t np, int64_t Kp2, int16_t zx) {
  int64_t k = 0;
  for (int64_t c = 0; c < Cg; c++)
    for (int64_t kh = 0; kh < KH; kh++)
      for (int64_t kw = 0; kw < KW; kw++, k++) {
        int16_t *d = panel + k;
        const int64_t off = kw * dw - pl;
        for (int64_t j = 0, p = p0; j < np;) {
          const int64_t oh = p / OW, ow = p % OW, seg = np - j < OW - ow ? np - j : OW - ow;
          const int64_t ih = oh * sh - pt + kh * dh;
          int16_t *dj = d + j * Kp2;
          if (ih < 0 || ih >= H) {
            for (int64_t t = 0; t < seg; t++) dj[t * Kp2] = zx;
          } else {
            const int16_t *row = xg + (c * H + ih) * W + off;
            int64_t lo = qk_first_inside(off, sw) - ow, hi = qk_end_inside(off, sw, W, OW) - ow;
            lo = lo < 0 ? 0 : lo > seg ? seg : lo;
            hi = hi < lo ? lo : hi > seg ? seg : hi;
            int64_t t = 0;
            for (; t < lo; t++) dj[t * Kp2] = zx;
            for (; t < hi; t++) dj[t * Kp2] = row[(ow + t) * sw];
            for (; t < seg; t++) dj[t * Kp2] = zx;
          }
          j += seg, p += seg;
        }
      }
  for (; k < Kp2; k++)
    for (int64_t j = 0; j < np; j++) panel[j * Kp2 + k] = 0;
}

/* CR channels (1..4) of weight rows from wr x PR pixels (1..4) of the panel from pixel j0. */
QA16_INL void qa16_cv_tile(const int CR, const int PR, const int w8, int16_t *y, int64_t NP, const int16_t *panel,
                           const int16_t *wr, int64_t K, int64_t Kp2, const int64_t *bias, const int32_t *m,
                           const int32_t *n, int64_t j0, int32_t z_y, int32_t lo, int32_t hi) {
  int64x2_t acc[4][4];
  QA16_UNROLL for (int c = 0; c < 4; c++) QA16_UNROLL for (int p = 0; p < 4; p++) acc[c][p] = vdupq_n_s64(0);
  int16x8_t wv[4], xv[4];
  const int64_t K8 = K / 8 * 8;
  for (int64_t k0 = 0; k0 < K8; k0 += 8 * (QA16_RUN / 2)) {
    const int64_t ke = K8 - k0 < 8 * (QA16_RUN / 2) ? K8 : k0 + 8 * (QA16_RUN / 2);
    int32x4_t a32[4][4];
    QA16_UNROLL for (int c = 0; c < 4; c++) QA16_UNROLL for (int p = 0; p < 4; p++) a32[c][p] = vdupq_n_s32(0);
    for (int64_t k = k0; k < ke; k += 8) {
      QA16_UNROLL for (int c = 0; c < CR; c++) wv[c] = vld1q_s16(wr + c * Kp2 + k);
      QA16_UNROLL for (int p = 0; p < PR; p++) xv[p] = vld1q_s16(panel + (j0 + p) * Kp2 + k);
      QA16_UNROLL for (int c = 0; c < CR; c++) QA16_UNROLL for (int p = 0; p < PR; p++) {
        if (w8) {
          a32[c][p] = vmlal_s16(a32[c][p], vget_low_s16(wv[c]), vget_low_s16(xv[p]));
          a32[c][p] = vmlal_high_s16(a32[c][p], wv[c], xv[p]);
        } else {
          acc[c][p] = vpadalq_s32(acc[c][p], vmull_s16(vget_low_s16(wv[c]), vget_low_s16(xv[p])));
          acc[c][p] = vpadalq_s32(acc[c][p], vmull_high_s16(wv[c], xv[p]));
        }
      }
    }
    if (w8) QA16_UNROLL for (int c = 0; c < CR; c++) QA16_UNROLL for (int p = 0; p < PR; p++) acc[c][p] =
        vpadalq_s32(acc[c][p], a32[c][p]);
  }
  QA16_UNROLL for (int c = 0; c < CR; c++) QA16_UNROLL for (int p = 0; p < PR; p++) {
    int64_t s = vaddvq_s64(acc[c][p]);
    for (int64_t k = K8; k < K; k++) s += (int64_t)wr[c * Kp2 + k] * panel[(j0 + p) * Kp2 + k];
    y[c * NP + j0 + p] = (int16_t)qk_out(qk_req64(s + bias[c], m[c], n[c]), z_y, lo, hi);
  }
}

#define QA16_CV_CASE(CC, PP) \
  case (CC) * 8 + (PP): qa16_cv_tile(CC, PP, w8, yo, NP, panel, wr, K, Kp2, bias + o, m + o, n + o, j, s->z_y, s->lo, s->hi); break;
#define QA16_CV_CASES(CC) QA16_CV_CASE(CC, 1) QA16_CV_CASE(CC, 2) QA16_CV_CASE(CC, 3) QA16_CV_CASE(CC, 4)

QA16_INL void qa16_conv(const int w8, int16_t *y, const int16_t *x, const int16_t *wp, const int64_t *bias,
                        const int32_t *m, const int32_t *n, const qllc_conv_shape *s, uint8_t *scratch) {
  const int64_t Cg = s->C / s->group, Mg = s->M / s->group, K = Cg * s->KH * s->KW, NP = s->OH * s->OW;
  const int64_t Kp2 = qllc_round_up(K, 2), PB = QLLC_CONV_PB;
  int16_t *panel = (int16_t *)scratch;
  for (int64_t b = 0; b < s->N; b++)
    for (int64_t g = 0; g < s->group; g++) {
      const int16_t *xg = x + (b * s->C + g * Cg) * s->H * s->W;
      for (int64_t p0 = 0; p0 < NP; p0 += PB) {
        const int64_t np = NP - p0 < PB ? NP - p0 : PB;
        qa16_pack(panel, xg, Cg, s->H, s->W, s->OW, s->KH, s->KW, s->sh, s->sw, s->pt, s->pl, s->dh, s->dw, p0, np, Kp2,
                  (int16_t)s->z_x);
        for (int64_t oc = 0; oc < Mg; oc += 4) {
          const int64_t o = g * Mg + oc, cr = Mg - oc < 4 ? Mg - oc : 4;
          int16_t *yo = y + (b * s->M + o) * NP + p0;
          const int16_t *wr = wp + o * Kp2;
          for (int64_t j = 0; j < np; j += 4) {
            const int64_t pr = np - j < 4 ? np - j : 4;
            switch (cr * 8 + pr) {
              QA16_CV_CASES(1) QA16_CV_CASES(2) QA16_CV_CASES(3) QA16_CV_CASES(4)
            default: break;
            }
          }
        }
      }
    }
}

/* ---- the registry's entry points ------------------------------------------------------------------ */
#define QA16_DEF(TW, tw, W8)                                                                                     \
  QLLC_KERNEL void qllc_k_fc_i16_##tw##_i16__neon(int16_t *y, const int16_t *x, const int16_t *wp,               \
                                                  const int64_t *bias, const int32_t *m, const int32_t *n,       \
                                                  int64_t M, int64_t N, int64_t K, int32_t z_x, int32_t z_y,     \
                                                  int32_t act_lo, int32_t act_hi, uint8_t *scratch) {            \
    (void)z_x, (void)scratch;                                                                                    \
    qa16_fc(W8, y, x, wp, bias, m, n, M, N, K, z_y, act_lo, act_hi);                                             \
  }                                                                                                              \
  QLLC_KERNEL void qllc_k_conv2d_i16_##tw##_i16__neon(                                                           \
      int16_t *y, const int16_t *x, const int16_t *wp, const int64_t *bias, const int32_t *m, const int32_t *n,  \
      int64_t N, int64_t C, int64_t H, int64_t W, int64_t M, int64_t OH, int64_t OW, int64_t KH, int64_t KW,     \
      int64_t stride_h, int64_t stride_w, int64_t pad_top, int64_t pad_left, int64_t dil_h, int64_t dil_w,       \
      int64_t group, int32_t z_x, int32_t z_y, int32_t act_lo, int32_t act_hi, uint8_t *scratch) {               \
    const qllc_conv_shape s = {N, C, H, W, M, OH, OW, KH, KW, stride_h, stride_w, pad_top, pad_left,             \
                               dil_h, dil_w, group, z_x, z_y, act_lo, act_hi};                                   \
    qa16_conv(W8, y, x, wp, bias, m, n, &s, scratch);                                                            \
  }
QA16_DEF(int8_t, i8, 1)
QA16_DEF(int16_t, i16, 0)
