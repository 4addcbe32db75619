/* libjit/bitcode/f32_blocked.h: the blocking of the float FC and Conv ISA variants, shared by every
 * architecture (targets/x86_64/kernels/x86_f32.h, targets/aarch64/kernels/arm_f32.h): the loops over
 * k chunks, blocks of rows and strips of 16 columns or pixels, the tails, and the packing of x into the
 * scratch, around one register tile that each architecture writes in its own instructions.
 *
 * The tile, f32_tile (declared here, defined by the includer after this header): mr rows x nv strips of
 * 16 floats of c (row stride ldc; strip v at c + 16 v) += a b over k < kc, a[i][k] at a[k * a_sk + i],
 * b's strip v of row k at b + (v / 2) * bstride + (v % 2) * 16 + k * ldb, or with an offset table boff
 * (one strip: the x86 direct conv's taps) at b + boff[k]; first: start from init (NULL: 0;
 * row_init: init[i] in all of row i, else init[16 v ..] per column), else from c; last: clamp to [lo, hi]
 * with the reference's qm_min(qm_max()) rule. Every element: its start, then one multiply and one add per
 * k, k ascending (no FMA), so the result is the reference's bits. mr is at most 24 and divides 24 (the
 * F32_M24 block), nv is 1 or FC_GV (mr 1).
 *
 * FC (QLLC_LAYOUT_F32_N32): the columns of y in the lanes, the weights in blocks of 32 columns, the 32
 * weights of each k together; the rows of x in the tile's rows, copied per block of mr rows and FC_KC k
 * into the scratch as [k][mr], FC_ROWS rows (3 blocks of 24) at a time, and every strip of 16 columns
 * then taken by all those blocks in turn, so that a strip of the weights is read from memory once per 72
 * rows and by the next blocks from the caches, where a block of rows over all strips streamed the 2 MiB
 * chunk of weights once per block. The copy goes 16 k at a time, row by row: k outer over the rows read
 * 24 lines 4 KiB apart (rows of K = 1024 floats), all in one set of the L1 cache. Measured on Zen 4 in
 * process on the kernels (bench/f32_ab.sh, FC 64x1024x1024): the copy 4-5 %, the groups 3-5 % more; a
 * chunk of 256 or 1024 k, or a tile of 12 rows x 32 columns, no better. In bundles (bench/bundle_ab.c)
 * under load the two measured within the noise (docs/benchmarks.md).
 * One row (a GEMV) runs with the row of x in place and FC_GV strips side by side instead (FC_GV: the
 * includer's, before this header).
 * Conv (QLLC_LAYOUT_F32_M24: per block of 24 output channels, the 24 weights of each k together): the
 * reference's GEMM y[m][p] = b[m] + sum_k w[m][k] X[k][p] with the output channels in the tile's rows and
 * 16 pixels in a strip; X packed in panels of pixels x k chunks in the scratch by the reference's own
 * packer (conv_panel_f32.h). k chunks continue through y itself; a last strip narrower than 16 columns or
 * pixels runs on a copy in the scratch. The scratch sizes are layouts.h's qllc_scratch_fc_f32 and
 * qllc_scratch_conv_f32. */
#ifndef QLLC_F32_BLOCKED_H
#define QLLC_F32_BLOCKED_H
#include "conv_panel_f32.h"
#include "layouts.h"
#include "qllc_math.h"

#define F_V 16     /* floats per strip: the tile's columns */
#define F_NB 32    /* columns per F32_N32 block (QLLC_F32_NB) */
#define F_MR 24    /* rows per F32_M24 block, and the widest tile (QLLC_F32_MB) */
#define FC_KC QLLC_F32_FC_KC     /* k per FC chunk */
#define FC_ROWS QLLC_F32_FC_ROWS /* rows of x copied per chunk: 3 F32_M24 blocks */
#define CV_PANEL 16384 /* floats of one conv panel: 64 KiB (8192, 4096 and 256 or 64 pixels measured slower) */
#define CV_NPB 128     /* pixels per conv panel */

/* A float conv variant's parameters (every architecture's rows): the reference's
   (qllc_k_conv2d_f32_f32_f32), then scratch */
#define F32_CONV_PARAMS                                                                                           \
  float *y, const float *x, const float *wp, const float *bias, int64_t N, int64_t C, int64_t H, int64_t W,        \
      int64_t M, int64_t OH, int64_t OW, int64_t KH, int64_t KW, int64_t stride_h, int64_t stride_w,              \
      int64_t pad_top, int64_t pad_left, int64_t dil_h, int64_t dil_w, int64_t group, float act_lo, float act_hi, \
      uint8_t *scratch

QLLC_INLINE void f32_tile(const int mr, const int nv, float *QLLC_RESTRICT c, int64_t ldc,
                          const float *QLLC_RESTRICT a, int64_t a_sk, const float *QLLC_RESTRICT b, int64_t bstride,
                          int64_t ldb, const int64_t *QLLC_RESTRICT boff, int64_t kc, const float *QLLC_RESTRICT init,
                          const int row_init, int first, int last, float lo, float hi);

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
  float *QLLC_RESTRICT tmp = scratch, *QLLC_RESTRICT xs = scratch + F_MR * F_V;
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
    for (int64_t g0 = 0; g0 < M; g0 += FC_ROWS) {
      const int64_t gend = imin(g0 + FC_ROWS, M);
      if (M > 1) {
        for (int64_t m0 = g0; m0 < gend; m0 += mr) {
          const int64_t rows = imin(mr, M - m0);
          float *QLLC_RESTRICT xb = xs + (m0 - g0) * kc;
          for (int64_t kb = 0; kb < kc; kb += F_V) /* x[m0 .. m0 + rows)[k0 .. k0 + kc) as [k][mr], 16 k at once */
            for (int64_t i = 0; i < rows; i++) /* scalar: vectorized, it became scatters (slower) */
              NO_VECTORIZE for (int64_t k = kb; k < imin(kb + F_V, kc); k++) xb[k * mr + i] = x[(m0 + i) * K + k0 + k];
        }
        for (int64_t q = 0; q < nq; q++) /* a strip, then the group's blocks on it */
          for (int64_t m0 = g0; m0 < gend; m0 += mr)
            f32_rows(mr, imin(mr, M - m0), y + m0 * N + q * F_V, N, xs + (m0 - g0) * kc, mr, fc_bvec(wp, K, q, k0),
                     F_NB, NULL, kc, b ? b + q * F_V : NULL, 0, first, last, lo, hi);
      }
      for (int64_t m0 = g0; nt && m0 < gend; m0 += mr) { /* the last columns, on a copy (the packed weights are 0 past N) */
        const int64_t rows = imin(mr, M - m0);
        float *yt = y + m0 * N + nq * F_V;
        if (!first)
          for (int64_t i = 0; i < rows; i++)
            for (int64_t j = 0; j < F_V; j++) tmp[i * F_V + j] = j < nt ? yt[i * N + j] : 0.0f;
        if (M > 1)
          f32_rows(mr, rows, tmp, F_V, xs + (m0 - g0) * kc, mr, fc_bvec(wp, K, nq, k0), F_NB, NULL, kc, b ? tinit : NULL,
                   0, first, last, lo, hi);
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
#endif
