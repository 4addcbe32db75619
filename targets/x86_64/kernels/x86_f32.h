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
 * FC (QLLC_LAYOUT_F32_N32, packed at compile time): the columns of y in the lanes, the weights in blocks
 * of 32 columns, the 32 weights of each k together; the rows of x in the tile's rows, copied per block of
 * MR rows and FC_KC k into the scratch as [k][MR]. One row (a GEMV) runs with the row of x in place and
 * FC_GV vectors of columns side by side instead, so that FC_GV independent add chains hide the add's
 * latency (memory-bound anyway).
 * Conv (QLLC_LAYOUT_F32_M24, packed at compile time: per block of 24 output channels, the 24 weights of
 * each k together): the reference's GEMM y[m][p] = b[m] + sum_k w[m][k] X[k][p] with the output channels
 * in the tile's rows and 16 pixels in the lanes; X packed in panels of pixels x k chunks in the scratch
 * by the reference's own packer (libjit/bitcode/conv_panel_f32.h).
 *
 * Order of every sum: bias (0 without one), then k ascending, one multiply and one add per term (no FMA:
 * the kernels are built with -ffp-contract=off), the lanes holding different outputs; k chunks continue
 * through y itself. That is the references' order, so the result is the same bits on every target
 * (tests/cross); the clamp is qv_clamp, the reference's qm_min(qm_max()) rule. A last strip narrower than
 * 16 columns or pixels runs on a copy in the scratch.
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

#define F_V 16     /* floats per vector: the tile's columns */
#define F_NB 32    /* columns per F32_N32 block (QLLC_F32_NB) */
#define F_MR 24    /* rows per F32_M24 block, and the widest tile (QLLC_F32_MB) */
#define FC_KC 512  /* k per FC chunk: x's rows packed [FC_KC][MR] */
#define FC_GV 8    /* column vectors side by side for one row */
#define CV_PANEL 16384 /* floats of one conv panel: 64 KiB (8192, 4096 and 256 or 64 pixels measured slower) */
#define CV_NPB 128     /* pixels per conv panel */

#define UNROLL _Pragma("GCC unroll 24")

/* mr rows x nv vectors of c (row stride ldc; vector v at c + 16 v) += a b over k < kc: a[i][k] at
   a[k * a_sk + i]; b's vector v of row k at b + (v / 2) * bstride + (v % 2) * 16 + k * ldb, or with an
   offset table boff (one vector: the direct conv's taps) at b + boff[k]. first: start
   from init (NULL: 0; row_init: init[i] in all of row i, else init[16 v ..] per column), else from c;
   last: clamp. */
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

/* rows (<= mr) rows x one vector: the tile of exactly that many rows (a constant per call, so each is
   its own unrolled code), by binary decomposition */
QLLC_INLINE void f32_rows(const int mr, int64_t rows, float *QLLC_RESTRICT c, int64_t ldc,
                          const float *QLLC_RESTRICT a, int64_t a_sk, const float *QLLC_RESTRICT b, int64_t ldb,
                          const int64_t *QLLC_RESTRICT boff, int64_t kc, const float *QLLC_RESTRICT init,
                          const int row_init, int first, int last, float lo, float hi) {
#define F32_PART(r)                                                                                              \
  if (mr >= r && rows - i >= r) {                                                                               \
    f32_tile(r, 1, c + i * ldc, ldc, a + i, a_sk, b, 0, ldb, boff, kc, init && row_init ? init + i : init,      \
             row_init, first, last, lo, hi);                                                                   \
    i += r;                                                                                                    \
  }
  int64_t i = 0;
  if (rows == mr) {
    F32_PART(mr)
  } else {
    F32_PART(16) F32_PART(8) F32_PART(4) F32_PART(2) F32_PART(1)
  }
#undef F32_PART
}

/* ---- FC -------------------------------------------------------------------------------------------------- */
/* The column vector q of the packed weights (block q / 2, half q % 2) at row k0 */
QLLC_INLINE const float *fc_bvec(const float *QLLC_RESTRICT wp, int64_t K, int64_t q, int64_t k0) {
  return wp + (q / 2) * F_NB * K + (q % 2) * F_V + k0 * F_NB;
}

QLLC_INLINE void fc_f32_body(const int mr, float *QLLC_RESTRICT y, const float *QLLC_RESTRICT x,
                             const float *QLLC_RESTRICT wp, const float *QLLC_RESTRICT b, int64_t M, int64_t N,
                             int64_t K, float lo, float hi, float *QLLC_RESTRICT scratch) {
  if (K == 0) { /* bias only */
    for (int64_t m = 0; m < M; m++)
      for (int64_t n = 0; n < N; n++) y[m * N + n] = qm_min(qm_max(b ? b[n] : 0.0f, lo), hi);
    return;
  }
  const int64_t nq = N / F_V, nt = N - nq * F_V; /* whole column vectors, and the columns after them */
  float *QLLC_RESTRICT xs = scratch, *QLLC_RESTRICT tmp = scratch + FC_KC * F_MR;
  float tinit[F_V];
  for (int64_t j = 0; j < F_V; j++) tinit[j] = b && j < nt ? b[nq * F_V + j] : 0.0f;
  for (int64_t k0 = 0; k0 < K; k0 += FC_KC) {
    const int64_t kc = K - k0 < FC_KC ? K - k0 : FC_KC;
    const int first = k0 == 0, last = k0 + kc == K;
    if (M == 1) { /* one row: x in place, FC_GV vectors at once */
      int64_t q = 0;
      for (; q + FC_GV <= nq; q += FC_GV)
        f32_tile(1, FC_GV, y + q * F_V, 0, x + k0, 1, fc_bvec(wp, K, q, k0), F_NB * K, F_NB, NULL, kc,
                 b ? b + q * F_V : NULL, 0, first, last, lo, hi);
      for (; q < nq; q++)
        f32_tile(1, 1, y + q * F_V, 0, x + k0, 1, fc_bvec(wp, K, q, k0), 0, F_NB, NULL, kc, b ? b + q * F_V : NULL, 0,
                 first, last, lo, hi);
    }
    for (int64_t m0 = 0; m0 < M; m0 += mr) {
      const int64_t rows = M - m0 < mr ? M - m0 : mr;
      if (M > 1) {
        for (int64_t k = 0; k < kc; k++) /* x[m0 .. m0 + rows)[k0 .. k0 + kc) as [k][mr] */
          for (int64_t i = 0; i < rows; i++) xs[k * mr + i] = x[(m0 + i) * K + k0 + k];
        for (int64_t q = 0; q < nq; q++)
          f32_rows(mr, rows, y + m0 * N + q * F_V, N, xs, mr, fc_bvec(wp, K, q, k0), F_NB, NULL, kc,
                   b ? b + q * F_V : NULL, 0, first, last, lo, hi);
      }
      if (nt) { /* the last columns, on a copy (the packed weights are 0 past N) */
        float *yt = y + m0 * N + nq * F_V;
        if (!first)
          for (int64_t i = 0; i < rows; i++)
            for (int64_t j = 0; j < F_V; j++) tmp[i * F_V + j] = j < nt ? yt[i * N + j] : 0.0f;
        if (M > 1)
          f32_rows(mr, rows, tmp, F_V, xs, mr, fc_bvec(wp, K, nq, k0), F_NB, NULL, kc, b ? tinit : NULL, 0, first, last,
                   lo, hi);
        else
          f32_tile(1, 1, tmp, 0, x + k0, 1, fc_bvec(wp, K, nq, k0), 0, F_NB, NULL, kc, b ? tinit : NULL, 0, first, last,
                   lo, hi);
        for (int64_t i = 0; i < rows; i++)
          for (int64_t j = 0; j < nt; j++) yt[i * N + j] = tmp[i * F_V + j];
      }
    }
  }
}

/* ---- Conv ------------------------------------------------------------------------------------------------ */
QLLC_INLINE void conv_f32_body(const int mr, float *QLLC_RESTRICT y, const float *QLLC_RESTRICT x,
                               const float *QLLC_RESTRICT wp, const float *QLLC_RESTRICT b, int64_t N, int64_t C,
                               int64_t H, int64_t W, int64_t M, int64_t OH, int64_t OW, int64_t KH, int64_t KW,
                               int64_t sh, int64_t sw, int64_t pt, int64_t pl, int64_t dh, int64_t dw, float lo,
                               float hi, float *QLLC_RESTRICT scratch) {
  const int64_t K = C * KH * KW, NP = OH * OW; /* group 1 (the rows' predicate) */
  if (NP <= 0 || M <= 0) return;
  float *QLLC_RESTRICT panel = scratch, *QLLC_RESTRICT tmp = scratch + CV_PANEL;
  int64_t npb = imin((NP + F_V - 1) / F_V * F_V, CV_NPB);
  if (K * npb > CV_PANEL && CV_PANEL / K >= 2 * F_V) npb = CV_PANEL / K / F_V * F_V;
  const int64_t kc_max = CV_PANEL / npb;
  const int64_t n_chunks = (K + kc_max - 1) / kc_max;
  const int64_t kc_step = n_chunks > 0 ? (K + n_chunks - 1) / n_chunks : 1;
  const int64_t wblock = F_MR * K; /* floats per block of 24 output channels */
  for (int64_t n = 0; n < N; n++) {
    const float *xn = x + n * C * H * W;
    float *yn = y + n * M * NP;
    for (int64_t p0 = 0; p0 < NP; p0 += npb) {
      const int64_t np = imin(npb, NP - p0), ldp = (np + F_V - 1) / F_V * F_V;
      if (K == 0) { /* no input channels: bias only */
        for (int64_t m = 0; m < M; m++)
          for (int64_t j = 0; j < np; j++) yn[m * NP + p0 + j] = qm_min(qm_max(b ? b[m] : 0.0f, lo), hi);
        continue;
      }
      for (int64_t k0 = 0; k0 < K; k0 += kc_step) {
        const int64_t kc = imin(kc_step, K - k0);
        const int first = k0 == 0, last = k0 + kc == K;
        pack_panel(panel, ldp, xn, k0, kc, p0, np, H, W, OW, KH, KW, sh, sw, pt, pl, dh, dw);
        for (int64_t j0 = 0; j0 < np; j0 += F_V) {
          const int64_t nj = imin(F_V, np - j0);
          for (int64_t m0 = 0; m0 < M; m0 += mr) {
            const int64_t rows = imin(mr, M - m0);
            /* the weights of channels m0 .. m0 + rows at k0: block m0 / 24, row m0 % 24 (mr divides 24) */
            const float *a = wp + (m0 / F_MR) * wblock + k0 * F_MR + m0 % F_MR;
            const float *bi = b ? b + m0 : NULL;
            float *yb = yn + m0 * NP + p0 + j0;
            if (nj == F_V) {
              f32_rows(mr, rows, yb, NP, a, F_MR, panel + j0, ldp, NULL, kc, bi, 1, first, last, lo, hi);
              continue;
            }
            if (!first) /* fewer than 16 pixels: on a copy */
              for (int64_t i = 0; i < rows; i++)
                for (int64_t j = 0; j < F_V; j++) tmp[i * F_V + j] = j < nj ? yb[i * NP + j] : 0.0f;
            f32_rows(mr, rows, tmp, F_V, a, F_MR, panel + j0, ldp, NULL, kc, bi, 1, first, last, lo, hi);
            for (int64_t i = 0; i < rows; i++)
              for (int64_t j = 0; j < nj; j++) yb[i * NP + j] = tmp[i * F_V + j];
          }
        }
      }
    }
  }
}

/* ---- Direct conv, stride 1 ------------------------------------------------------------------------------ */
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
    if (!in_place) { /* the input's rows in vectors, zeros around them (a loop with the bounds test
                        inside, as conv_panel_f32.h's, took 10 % of a 56x56 conv on 64-bit index vectors) */
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
  __attribute__((target(target_features))) void qllc_k_conv2d_f32_f32_f32__##isa(                                 \
      float *y, const float *x, const float *wp, const float *bias, int64_t N, int64_t C, int64_t H, int64_t W,    \
      int64_t M, int64_t OH, int64_t OW, int64_t KH, int64_t KW, int64_t stride_h, int64_t stride_w,              \
      int64_t pad_top, int64_t pad_left, int64_t dil_h, int64_t dil_w, int64_t group, float act_lo, float act_hi, \
      uint8_t *scratch) {                                                                                          \
    (void)group;                                                                                                   \
    conv_f32_body(mr, y, x, wp, bias, N, C, H, W, M, OH, OW, KH, KW, stride_h, stride_w, pad_top, pad_left, dil_h, \
                  dil_w, act_lo, act_hi, (float *)scratch);                                                        \
  }                                                                                                                \
  __attribute__((target(target_features))) void qllc_k_conv2ds1_f32_f32_f32__##isa(                                \
      float *y, const float *x, const float *wp, const float *bias, int64_t N, int64_t C, int64_t H, int64_t W,    \
      int64_t M, int64_t OH, int64_t OW, int64_t KH, int64_t KW, int64_t stride_h, int64_t stride_w,              \
      int64_t pad_top, int64_t pad_left, int64_t dil_h, int64_t dil_w, int64_t group, float act_lo, float act_hi, \
      uint8_t *scratch) {                                                                                          \
    (void)stride_h, (void)stride_w, (void)group; /* 1, 1, 1: the row's predicate */                               \
    conv_f32d_body(mr, y, x, wp, bias, N, C, H, W, M, OH, OW, KH, KW, pad_top, pad_left, dil_h, dil_w, act_lo,     \
                   act_hi, (float *)scratch);                                                                      \
  }
F32_VARIANTS(avx512, "avx512f", 24)
F32_VARIANTS(avx2, "avx2", 8)

#endif
