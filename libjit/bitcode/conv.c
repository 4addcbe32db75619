/* libjit/bitcode/conv.c: 2-D convolution, float, as a GEMM over a packed input panel.
 *
 * Per image n and group g the convolution is the matrix product
 *   y[m][p] = b[m] + sum over k of w[m][k] * X[k][p],
 * m < mg output channels, p < OH*OW output pixels, k = (c * KH + kh) * KW + kw < cg*KH*KW, where
 * X[k][p] is the input pixel tap k of output pixel p sees (0 in the padding). w[m][*] is already the
 * row w[m][k] of that product, so the weights are used in place.
 *
 * X is never built whole (kernels may not allocate): it is packed in panels of at most PANEL_FLOATS
 * floats on the stack (64 KiB; when qllc inlines every conv into one entry function, LLVM overlaps
 * their panels, so ResNet-18's whole frame is 66 KiB), NPB pixels wide (a multiple of the 32-column tile, zero beyond the last
 * pixel) and kc rows of k deep. Packing a panel row copies input row segments (clipped to the image,
 * zeros outside), so the cost per packed float is a copy, against mg multiply-adds that use it.
 * Each panel is then swept by the register-blocked 8 x 32 tile of gemm_tile_f32.h (8 output channels x
 * 32 pixels) with the rows left over by 1 x 32 tiles. A pixel block that does not fill a tile runs on a
 * copy in a small buffer, so the tile always reads and writes 32 columns.
 *
 * Summation order per output element: bias (or 0), then k = (c, kh, kw) ascending, one multiply and one
 * add per tap, across panels in k order through y itself: the same order as the plain direct loop, on
 * every target. Padded taps add w * 0 (the old direct loop skipped them). Bias and the fused clamp are
 * applied inside the tile: the bias as the starting value of the first panel, the clamp on the last. */
#include "kernels_f32.h"
#include "gemm_tile_f32.h"
#include "qllc_math.h"

#define PANEL_FLOATS 16384 /* stack panel: 64 KiB */
#define NPB_MAX 128        /* pixels per panel: 4 tiles */

#include "conv_panel_f32.h"

/* rows (8, or fewer done one at a time) output channels x nj (<= 32) pixels of y (row stride ldy),
 * plus the panel's rows k0 .. k0+kc of the product. first: start from the bias (zeros: 0); last: clamp.
 * A block narrower than the tile runs on a copy in tmp. */
QLLC_INLINE void conv_block(float *QLLC_RESTRICT y, int64_t ldy, int64_t rows, int64_t nj,
                            const float *QLLC_RESTRICT bias, const float *QLLC_RESTRICT zeros, int first, int last,
                            const float *QLLC_RESTRICT wa, int64_t lda, const float *QLLC_RESTRICT panel,
                            int64_t ldp, int64_t kc, float act_lo, float act_hi, float *QLLC_RESTRICT tmp) {
  const int direct = nj == QLLC_TILE_NR;
  float *c = direct ? y : tmp;
  const int64_t ldc = direct ? ldy : QLLC_TILE_NR;
  const float *init = first ? (bias ? bias : zeros) : NULL;
  if (!direct && !first)
    for (int64_t i = 0; i < rows; i++)
      for (int64_t j = 0; j < QLLC_TILE_NR; j++) c[i * ldc + j] = j < nj ? y[i * ldy + j] : 0.0f;
  if (rows == QLLC_TILE_MR)
    qllc_gemm_tile_8x32(c, ldc, wa, lda, panel, ldp, kc, init, last, act_lo, act_hi);
  else
    for (int64_t i = 0; i < rows; i++)
      qllc_gemm_tile_1x32(c + i * ldc, wa + i * lda, panel, ldp, kc, init ? init + i : NULL, last, act_lo, act_hi);
  if (!direct)
    for (int64_t i = 0; i < rows; i++)
      for (int64_t j = 0; j < nj; j++) y[i * ldy + j] = c[i * ldc + j];
}

QLLC_KERNEL void qllc_k_conv2d_f32_f32_f32(float *QLLC_RESTRICT y, const float *QLLC_RESTRICT x,
                                           const float *QLLC_RESTRICT w, const float *QLLC_RESTRICT b,
                                           int64_t N, int64_t C, int64_t H, int64_t W, int64_t M, int64_t OH,
                                           int64_t OW, int64_t KH, int64_t KW, int64_t stride_h,
                                           int64_t stride_w, int64_t pad_top, int64_t pad_left, int64_t dil_h,
                                           int64_t dil_w, int64_t group, float act_lo, float act_hi) {
  const int64_t cg = C / group;   /* input channels per group */
  const int64_t mg = M / group;   /* output channels per group */
  const int64_t K = cg * KH * KW; /* depth of the product */
  const int64_t NP = OH * OW;     /* output pixels */
  if (NP <= 0 || mg <= 0) return;
  int64_t npb = imin((NP + QLLC_TILE_NR - 1) / QLLC_TILE_NR * QLLC_TILE_NR, NPB_MAX);
  /* A narrower panel when that keeps k in one chunk (the 7x7 stem: k = 147) */
  if (K * npb > PANEL_FLOATS && PANEL_FLOATS / K >= 2 * QLLC_TILE_NR)
    npb = PANEL_FLOATS / K / QLLC_TILE_NR * QLLC_TILE_NR;
  const int64_t kc_max = PANEL_FLOATS / npb;
  const int64_t n_chunks = (K + kc_max - 1) / kc_max;
  const int64_t kc_step = n_chunks > 0 ? (K + n_chunks - 1) / n_chunks : 1; /* equal chunks */
  float panel[PANEL_FLOATS] __attribute__((aligned(64)));
  float tmp[QLLC_TILE_MR * QLLC_TILE_NR] __attribute__((aligned(64)));
  const float zeros[QLLC_TILE_MR] = {0};
  for (int64_t n = 0; n < N; n++) {
    for (int64_t g = 0; g < group; g++) {
      const float *xg = x + (n * C + g * cg) * H * W;
      const float *wg = w + g * mg * K;
      const float *bg = b ? b + g * mg : NULL;
      float *yg = y + (n * M + g * mg) * NP;
      for (int64_t p0 = 0; p0 < NP; p0 += npb) {
        const int64_t np = imin(npb, NP - p0);
        const int64_t ldp = (np + QLLC_TILE_NR - 1) / QLLC_TILE_NR * QLLC_TILE_NR;
        if (K == 0) { /* no input channels: bias only */
          for (int64_t m = 0; m < mg; m++)
            for (int64_t j = 0; j < np; j++)
              yg[m * NP + p0 + j] = qm_min(qm_max(bg ? bg[m] : 0.0f, act_lo), act_hi);
          continue;
        }
        for (int64_t k0 = 0; k0 < K; k0 += kc_step) {
          const int64_t kc = imin(kc_step, K - k0);
          const int first = k0 == 0, last = k0 + kc == K;
          pack_panel(panel, ldp, xg, k0, kc, p0, np, H, W, OW, KH, KW, stride_h, stride_w, pad_top, pad_left,
                     dil_h, dil_w);
          for (int64_t j0 = 0; j0 < np; j0 += QLLC_TILE_NR) {
            const int64_t nj = imin(QLLC_TILE_NR, np - j0);
            int64_t m0 = 0;
            for (; m0 + QLLC_TILE_MR <= mg; m0 += QLLC_TILE_MR)
              conv_block(yg + m0 * NP + p0 + j0, NP, QLLC_TILE_MR, nj, bg ? bg + m0 : NULL, zeros, first, last,
                         wg + m0 * K + k0, K, panel + j0, ldp, kc, act_lo, act_hi, tmp);
            if (m0 < mg)
              conv_block(yg + m0 * NP + p0 + j0, NP, mg - m0, nj, bg ? bg + m0 : NULL, zeros, first, last,
                         wg + m0 * K + k0, K, panel + j0, ldp, kc, act_lo, act_hi, tmp);
          }
        }
      }
    }
  }
}
