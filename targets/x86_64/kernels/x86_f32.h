/* targets/x86_64/kernels/x86_f32.h: the x86_64 variants of the float FC and Conv layers (rows in
 * variants.def), bit-identical to the scalar qllc_k_fc_f32_f32_f32 (libjit/bitcode/fc.c) and
 * qllc_k_conv2d_f32_f32_f32 (conv.c).
 *
 * One register tile does the work: MR rows x 16 columns (one 16-float vector per row) of accumulators
 * over a run of k; per k, one vector load of b, and per row one multiply of a scalar of a by it and one
 * add. The MR scalars of a given k are packed next to each other, so that each multiply takes its scalar
 * as an embedded broadcast from memory (vmulps zmm, zmm, m32{1to16}). Why: on AMD Zen 4 the tile of 6
 * rows x 64 columns with its scalars broadcast into registers ran at 75-90 GFLOPS, held back by the
 * broadcasts, while 24 rows x 16 columns with the broadcasts in the multiplies ran at 115 GFLOPS, the
 * rate of the same tile with FMA (the multiply-add we may not use: see below). MR is 24 with AVX-512 (24
 * zmm accumulators) and 8 with AVX2 (8 rows x two ymm halves).
 *
 * The loops around the tile (k chunks, blocks of rows, strips, tails, the FC's copy of x and the conv's
 * panels) are libjit/bitcode/f32_blocked.h's, shared with the aarch64 NEON variants; this file holds the
 * tile, f32_tile, and the exported variants; x86_f32t.h, included at its end, the stride-1 conv with the
 * tile transposed. FC_GV: 8 strips of 16 columns side by side for one row (a
 * GEMV), so that 8 independent add chains hide the add's latency (memory-bound anyway).
 *
 * Order of every sum: bias (0 without one), then k ascending, one multiply and one add per term (no FMA:
 * the kernels are built with -ffp-contract=off), the lanes holding different outputs. That is the
 * references' order, so the result is the same bits on every target (tests/cross); the clamp is qv_clamp,
 * the reference's qm_min(qm_max()) rule.
 *
 * Compiled as the end of x86_dw8.c's translation unit, not as a .c file of its own: every linked file adds
 * its llvm.ident to the kernel library, which every bundle's object carries in .comment, so a new file
 * would change the bytes of every x86_64 bundle, float or not (x86_q8.c says more). */
#ifndef QLLC_X86_F32_H
#define QLLC_X86_F32_H
#include "conv_panel_f32.h"
#include "gemm_tile_f32.h"
#include "qllc_math.h"
#include "variants.h"

#define FC_GV 8 /* column vectors side by side for one row */
#include "f32_blocked.h"

#define UNROLL _Pragma("GCC unroll 24")

/* The tile f32_blocked.h declares (its arguments are described there): strip v of 16 floats as one
   16-float vector, the scalar of a broadcast in the multiply. */
QLLC_INLINE void f32_tile(const int mr, const int nv, float *QLLC_RESTRICT c, int64_t ldc,
                          const float *QLLC_RESTRICT a, int64_t a_sk, const float *QLLC_RESTRICT b, int64_t bstride,
                          int64_t ldb, const int64_t *QLLC_RESTRICT boff, int64_t kc, const float *QLLC_RESTRICT init,
                          const int row_init, int first, int last, float lo, float hi) {
  qllc_v16f acc[F_MR][FC_GV];
  UNROLL for (int i = 0; i < mr; i++) UNROLL for (int v = 0; v < nv; v++) {
    if (first) acc[i][v] = !init ? qv_splat(0.0f) : row_init ? qv_splat(init[i]) : qv_load(init + F_V * v);
    else acc[i][v] = qv_load(c + i * ldc + F_V * v);
  }
  for (int64_t k = 0; k < kc; k++) {
    qllc_v16f bv[FC_GV];
    UNROLL for (int v = 0; v < nv; v++)
      bv[v] = qv_load(b + (v / 2) * bstride + (v % 2) * F_V + (boff ? boff[k] : k * ldb));
    UNROLL for (int i = 0; i < mr; i++) {
      const float s = a[k * a_sk + i];
      UNROLL for (int v = 0; v < nv; v++) acc[i][v] += s * bv[v];
    }
  }
  if (last) {
    const qllc_v16f l = qv_splat(lo), h = qv_splat(hi);
    UNROLL for (int i = 0; i < mr; i++) UNROLL for (int v = 0; v < nv; v++) acc[i][v] = qv_clamp(acc[i][v], l, h);
  }
  UNROLL for (int i = 0; i < mr; i++) UNROLL for (int v = 0; v < nv; v++) qv_store(c + i * ldc + F_V * v, acc[i][v]);
}

/* ---- Direct conv, stride 1 ------------------------------------------------------------------------------ */
/* The input image xn (C x H x W) zero-padded into xp as C planes of Hp x Wp, pt rows and pl columns of
   zeros before it: the rows copied in vectors between zeroed pad columns (a loop with the bounds test
   inside, as conv_panel_f32.h's, took 10 % of a 56x56 conv on 64-bit index vectors) */
QLLC_INLINE void f32d_pad(float *QLLC_RESTRICT xp, const float *QLLC_RESTRICT xn, int64_t C, int64_t H, int64_t W,
                          int64_t Hp, int64_t Wp, int64_t pt, int64_t pl) {
  const int64_t c0 = imin(pl, Wp), c1 = imax(c0, imin(pl + W, Wp)); /* columns [c0, c1) hold the row */
  for (int64_t c = 0; c < C; c++)
    for (int64_t r = 0; r < Hp; r++) {
      const int64_t ih = r - pt;
      float *d = xp + (c * Hp + r) * Wp;
      if (ih < 0 || ih >= H) {
        for (int64_t col = 0; col < Wp; col++) d[col] = 0.0f;
        continue;
      }
      const float *xr = xn + (c * H + ih) * W - pl; /* xr[col]: column col's input */
      for (int64_t col = 0; col < c0; col++) d[col] = 0.0f;
      int64_t col = c0;
      for (; col + F_V <= c1; col += F_V) qv_store(d + col, qv_load(xr + col));
      for (; col < c1; col++) d[col] = xr[col];
      for (col = c1; col < Wp; col++) d[col] = 0.0f;
    }
}

/* The same GEMM with no panel: the input padded once per image into the scratch (C planes of Hp x Wp,
 * layouts.h, qllc_scratch_conv_f32d; a 1x1 conv without padding reads it in place), the output pixels
 * taken in the padded pitch, q = oh * Wp + ow, so that tap k = (c, kh, kw) of 16 consecutive q is one
 * vector at xp + off[k] + q, off[k] = c Hp Wp + kh dh Wp + kw dw. The lanes on pad columns (ow >= OW) are
 * computed and dropped: a strip of 16 q inside one output row is stored in place, any other runs on the
 * tile's copy and its lanes are scattered to their pixels. The whole K in one pass (the accumulators
 * stay in registers); per strip every block of output channels, so the strip's input stays in L1. The
 * padding is 0.0f, as the panel packer's, so the sums are the reference's. */
QLLC_INLINE void conv_f32d_body(const int mr, float *QLLC_RESTRICT y, const float *QLLC_RESTRICT x,
                                const float *QLLC_RESTRICT wp, const float *QLLC_RESTRICT b, int64_t N, int64_t C,
                                int64_t H, int64_t W, int64_t M, int64_t OH, int64_t OW, int64_t KH, int64_t KW,
                                int64_t pt, int64_t pl, int64_t dh, int64_t dw, float lo, float hi,
                                float *QLLC_RESTRICT scratch) {
  const int64_t K = C * KH * KW, NP = OH * OW;
  if (NP <= 0 || M <= 0) return;
  if (K == 0) { /* no input channels: bias only */
    for (int64_t i = 0; i < N * M * NP; i++) y[i] = qm_min(qm_max(b ? b[i / NP % M] : 0.0f, lo), hi);
    return;
  }
  const int in_place = qllc_f32d_in_place(H, W, OH, OW, KH, KW, pt, pl);
  const int64_t Hp = OH + (KH - 1) * dh, Wp = OW + (KW - 1) * dw, plane = in_place ? H * W : Hp * Wp;
  const int64_t NQ = (OH - 1) * Wp + OW; /* q of the last pixel, plus one */
  float *QLLC_RESTRICT tmp = scratch;
  int64_t *QLLC_RESTRICT off = (int64_t *)(scratch + F_MR * F_V);
  int64_t *QLLC_RESTRICT toff = off + (K + 7) / 8 * 8; /* in place, the last strip's copy: c * 16 */
  float *QLLC_RESTRICT xp = (float *)(toff + (K + 7) / 8 * 8);
  for (int64_t k = 0; k < K; k++) {
    const int64_t c = k / (KH * KW), kh = k / KW % KH, kw = k % KW;
    off[k] = c * plane + kh * dh * Wp + kw * dw;
    toff[k] = c * F_V;
  }
  const int64_t wblock = F_MR * K;
  for (int64_t n = 0; n < N; n++) {
    const float *xn = x + n * C * H * W;
    float *yn = y + n * M * NP;
    if (!in_place) {
      f32d_pad(xp, xn, C, H, W, Hp, Wp, pt, pl);
      for (int64_t j = 0; j < F_V; j++) xp[C * plane + j] = 0.0f; /* the slack the last strip reads */
    }
    for (int64_t q0 = 0; q0 < NQ; q0 += F_V) {
      const int64_t oh = q0 / Wp, ow = q0 % Wp;
      /* 16 pixels one after another in y: inside one output row, or rows without pad columns */
      const int whole = ow + F_V <= OW || (Wp == OW && q0 + F_V <= NQ);
      /* else the runs of lanes that are pixels: lanes [j0, j1) of run u at pixel j + d (one per output row) */
      int64_t run_j0[F_V], run_j1[F_V], run_d[F_V], nrun = 0;
      for (int64_t j = 0, r = oh, cl = ow; !whole && j < F_V && q0 + j < NQ;) {
        if (cl >= OW) { /* a pad column: to the next row */
          j += Wp - cl, cl = 0, r++;
          continue;
        }
        const int64_t len = imin(imin(OW - cl, F_V - j), NQ - q0 - j);
        run_j0[nrun] = j, run_j1[nrun] = j + len, run_d[nrun++] = r * OW + cl - j;
        j += len, cl += len;
      }
      const float *bq = in_place ? xn + q0 : xp + q0;
      const int64_t *bo = off;
      if (in_place && q0 + F_V > NQ) { /* the last strip reads a copy, not past the input */
        for (int64_t c = 0; c < C; c++)
          for (int64_t j = 0; j < F_V; j++) xp[c * F_V + j] = q0 + j < NQ ? xn[c * plane + q0 + j] : 0.0f;
        bq = xp, bo = toff;
      }
      for (int64_t m0 = 0; m0 < M; m0 += mr) {
        const int64_t rows = imin(mr, M - m0);
        const float *a = wp + (m0 / F_MR) * wblock + m0 % F_MR; /* block m0 / 24, row m0 % 24 (mr divides 24) */
        const float *bi = b ? b + m0 : NULL;
        float *yb = yn + m0 * NP;
        if (whole) {
          f32_rows(mr, rows, yb + oh * OW + ow, NP, a, F_MR, bq, 0, bo, K, bi, 1, 1, 1, lo, hi);
          continue;
        }
        f32_rows(mr, rows, tmp, F_V, a, F_MR, bq, 0, bo, K, bi, 1, 1, 1, lo, hi);
        for (int64_t u = 0; u < nrun; u++) { /* lane-predicated copies: masked vector stores */
          const int64_t j0 = run_j0[u], j1 = run_j1[u];
          float *QLLC_RESTRICT yd = yb + run_d[u];
          for (int64_t i = 0; i < rows; i++) {
            const qllc_v16f t = qv_load(tmp + i * F_V);
            for (int j = 0; j < F_V; j++)
              if (j >= j0 && j < j1) yd[i * NP + j] = t[j];
          }
        }
      }
    }
  }
}

/* ---- the exported variants ------------------------------------------------------------------------------ */
#define F32_VARIANTS(isa, target_features, mr)                                                                    \
  __attribute__((target(target_features))) void qllc_k_fc_f32_f32_f32__##isa(                                     \
      float *y, const float *x, const float *wp, const float *bias, int64_t M, int64_t N, int64_t K,               \
      float act_lo, float act_hi, uint8_t *scratch) {                                                              \
    fc_f32_body(mr, y, x, wp, bias, M, N, K, act_lo, act_hi, (float *)scratch);                                    \
  }                                                                                                                \
  __attribute__((target(target_features))) void qllc_k_conv2d_f32_f32_f32__##isa(F32_CONV_PARAMS) {               \
    (void)group;                                                                                                   \
    conv_f32_body(mr, y, x, wp, bias, N, C, H, W, M, OH, OW, KH, KW, stride_h, stride_w, pad_top, pad_left, dil_h, \
                  dil_w, act_lo, act_hi, (float *)scratch);                                                        \
  }                                                                                                                \
  __attribute__((target(target_features))) void qllc_k_conv2ds1_f32_f32_f32__##isa(F32_CONV_PARAMS) {             \
    (void)stride_h, (void)stride_w, (void)group; /* 1, 1, 1: the row's predicate */                               \
    conv_f32d_body(mr, y, x, wp, bias, N, C, H, W, M, OH, OW, KH, KW, pad_top, pad_left, dil_h, dil_w, act_lo,     \
                   act_hi, (float *)scratch);                                                                      \
  }
F32_VARIANTS(avx512, "avx512f", 24)
F32_VARIANTS(avx2, "avx2", 8)
#include "x86_f32t.h"

#endif
