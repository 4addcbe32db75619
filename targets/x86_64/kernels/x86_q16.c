/* targets/x86_64/kernels/x86_q16.c: AVX512-VNNI variants of the fused 16-bit input layers (Conv, FC),
 * 16x8 (int8 weights, packed widened to int16) and int16 x int16 (weights split into lo/hi planes).
 * Declarations and the contract: kernels_x86_q16.h; layouts and run bounds: layouts.h.
 *
 * Exactness: vpdpwssd adds two signed 16 x 16 products per 32-bit lane, wrapping. Sums are taken over
 * runs of at most QLLC_RUN_16X8 / QLLC_RUN_SPLIT pairs, which layouts.h shows never leave int32, and
 * every run's sums are added into int64 accumulators (split: acc += run_hi * 256 + run_lo): the int64
 * sum is exactly the scalar kernel's, for every input. The requantization is the scalar qk_req64 /
 * qk_out per output.
 *
 * FC: lanes over 16 output channels (one K2N16 line is one zmm of 16 channels x 2 reductions); each
 * input row's reduction pair is broadcast as one 32-bit value. Tile: FC_R rows x FC_NBC blocks of 16
 * channels (16 zmm accumulators, twice that for split). Rows of odd K are copied to the scratch with a
 * zero after them (the pair load would otherwise read past the row).
 * Conv: implicit GEMM with lanes over output pixels. The taps of up to QLLC_CONV_PB = 64 output pixels
 * are packed into the scratch as a panel [Kp2 / 2][64][2] int16 (padded taps read z_x), so one pair of
 * taps of 16 pixels is one zmm; a weight pair of a row (ROWS_K2) is broadcast. Tile: CV_R output
 * channels x 4 zmm of pixels. */
#include <immintrin.h>

#include "kernels_x86_q16.h"
#include "q_common.h"

#define QX_ISA "avx512f,avx512bw,avx512vl,avx512dq,avx512vnni"
#define QX_FN static inline __attribute__((always_inline, target(QX_ISA)))
#define QX_KERNEL QLLC_KERNEL __attribute__((target(QX_ISA)))

/* a pair of int16 read as one 32-bit value (2-byte aligned; the panels and rows are int16 arrays) */
typedef int32_t qx_pair __attribute__((may_alias, aligned(2)));

#define FC_R 4   /* FC tile rows */
#define FC_NBC 4 /* FC tile blocks of 16 channels */
#define CV_R8 6  /* conv tile output channels, 16x8: 6 x 4 accumulators */
#define CV_R16 3 /* conv tile output channels, int16 split: 3 x 4 x 2 accumulators */
#define CV_RMAX 6

QX_FN __m512i qx_bcast(const int16_t *p) { return _mm512_set1_epi32(*(const qx_pair *)p); }

/* The epilogue of 8 outputs: clamp(sat32((acc * m + 2^(n-1)) >> n) + z_y, lo, hi) in int64 lanes, the
 * bits of qk_out(qk_req64(acc, m, n), z_y, lo, hi) without 128-bit arithmetic. m in [0, 2^31), n in
 * [0, 62]. With acc = ah * 2^32 + al (al unsigned 32-bit, |ah| <= 2^31):
 *   u = al * m + 2^(n-1)          < 2^63 + 2^61: exact in uint64
 *   H = ah * m + (u >> 32)        |H| < 2^62 + 2^32, and acc * m + 2^(n-1) = H * 2^32 + (u mod 2^32)
 *   n >= 32: floor(.. / 2^n) = H >> (n - 32)          (the low 32 bits cannot carry into the floor)
 *   n <  32: = H * 2^(32-n) + ((u mod 2^32) >> n), with H first clamped to [-2^31, 2^31): an H outside
 *            saturates either way (|result| >= 2^32 - 2^31 > 2^31 on the same side), inside it is exact
 *            and the sum stays within int64. */
QX_FN __m512i qx_req8(__m512i acc, __m512i m, __m512i n, __m512i zy, __m512i lo, __m512i hi) {
  const __m512i one = _mm512_set1_epi64(1), c32 = _mm512_set1_epi64(32), lo32 = _mm512_set1_epi64(0xffffffff);
  const __m512i rnd = _mm512_sllv_epi64(one, _mm512_sub_epi64(n, one)); /* n = 0: a count >= 64 gives 0 */
  const __m512i u = _mm512_add_epi64(_mm512_mul_epu32(acc, m), rnd);
  const __m512i H = _mm512_add_epi64(_mm512_mul_epi32(_mm512_srai_epi64(acc, 32), m), _mm512_srli_epi64(u, 32));
  const __m512i big = _mm512_srav_epi64(H, _mm512_sub_epi64(n, c32)); /* n >= 32 */
  const __m512i Hc = _mm512_min_epi64(_mm512_max_epi64(H, _mm512_set1_epi64(INT32_MIN)), _mm512_set1_epi64(INT32_MAX));
  const __m512i small = _mm512_add_epi64(_mm512_sllv_epi64(Hc, _mm512_sub_epi64(c32, n)),
                                         _mm512_srlv_epi64(_mm512_and_si512(u, lo32), n));
  __m512i v = _mm512_mask_blend_epi64(_mm512_cmpge_epi64_mask(n, c32), small, big);
  v = _mm512_min_epi64(_mm512_max_epi64(v, _mm512_set1_epi64(INT32_MIN)), _mm512_set1_epi64(INT32_MAX));
  return _mm512_min_epi64(_mm512_max_epi64(_mm512_add_epi64(v, zy), lo), hi);
}

/* d[0..16) += the 16 int32 lanes of lo (+ 256 * those of hi when split), in int64 */
QX_FN void qx_add64(int64_t *d, __m512i lo, __m512i hi, const int split) {
  __m512i l0 = _mm512_cvtepi32_epi64(_mm512_castsi512_si256(lo));
  __m512i l1 = _mm512_cvtepi32_epi64(_mm512_extracti64x4_epi64(lo, 1));
  if (split) {
    l0 = _mm512_add_epi64(l0, _mm512_slli_epi64(_mm512_cvtepi32_epi64(_mm512_castsi512_si256(hi)), 8));
    l1 = _mm512_add_epi64(l1, _mm512_slli_epi64(_mm512_cvtepi32_epi64(_mm512_extracti64x4_epi64(hi, 1)), 8));
  }
  _mm512_storeu_si512((void *)d, _mm512_add_epi64(_mm512_loadu_si512((const void *)d), l0));
  _mm512_storeu_si512((void *)(d + 8), _mm512_add_epi64(_mm512_loadu_si512((const void *)(d + 8)), l1));
}

/* ---- FC ---------------------------------------------------------------------------------------------- */

/* acc[r * 64 + j] += sum_k x[r][k] * w[nb0 * 16 + j][k] for r < R, j < NBC * 16. xr: row 0 of the tile
   (ldx int16 per row, at least 2P readable), wb: block nb0 of the packed weights, P pairs. */
QX_FN void fc_tile(int64_t *acc, const int16_t *xr, int64_t ldx, const int16_t *wb, int64_t P, const int R,
                   const int NBC, const int split) {
  const int64_t S = split ? 64 : 32, bs = P * S, run = split ? QLLC_RUN_SPLIT : QLLC_RUN_16X8;
  for (int64_t k0 = 0; k0 < P; k0 += run) {
    const int64_t k1 = P - k0 < run ? P : k0 + run;
    __m512i a[FC_R][FC_NBC], h[FC_R][FC_NBC];
#pragma GCC unroll 4
    for (int r = 0; r < R; r++)
#pragma GCC unroll 4
      for (int j = 0; j < NBC; j++) a[r][j] = h[r][j] = _mm512_setzero_si512();
    for (int64_t k = k0; k < k1; k++) {
      const int16_t *wk = wb + k * S;
      __m512i wl[FC_NBC], wh[FC_NBC];
#pragma GCC unroll 4
      for (int j = 0; j < NBC; j++) {
        wl[j] = _mm512_loadu_si512((const void *)(wk + j * bs));
        if (split) wh[j] = _mm512_loadu_si512((const void *)(wk + j * bs + 32));
      }
#pragma GCC unroll 4
      for (int r = 0; r < R; r++) {
        const __m512i xb = qx_bcast(xr + r * ldx + 2 * k);
#pragma GCC unroll 4
        for (int j = 0; j < NBC; j++) {
          a[r][j] = _mm512_dpwssd_epi32(a[r][j], wl[j], xb);
          if (split) h[r][j] = _mm512_dpwssd_epi32(h[r][j], wh[j], xb);
        }
      }
    }
#pragma GCC unroll 4
    for (int r = 0; r < R; r++)
#pragma GCC unroll 4
      for (int j = 0; j < NBC; j++) qx_add64(acc + r * 64 + j * 16, a[r][j], h[r][j], split);
  }
}

QX_FN void fc_tile_nbc(int64_t *acc, const int16_t *xr, int64_t ldx, const int16_t *wb, int64_t P, const int R,
                       int64_t nbc, const int split) {
  switch (nbc) {
  case 1: fc_tile(acc, xr, ldx, wb, P, R, 1, split); break;
  case 2: fc_tile(acc, xr, ldx, wb, P, R, 2, split); break;
  case 3: fc_tile(acc, xr, ldx, wb, P, R, 3, split); break;
  default: fc_tile(acc, xr, ldx, wb, P, R, 4, split); break;
  }
}

QX_FN void fc_impl(int16_t *QLLC_RESTRICT y, const int16_t *QLLC_RESTRICT x, const int16_t *QLLC_RESTRICT wp,
                   const int64_t *bias, const int32_t *m, const int32_t *n, int64_t M, int64_t N, int64_t K,
                   int32_t z_y, int32_t act_lo, int32_t act_hi, uint8_t *scratch, const int split) {
  const int64_t P = (K + 1) / 2, Kp2 = 2 * P, NBt = (N + QLLC_NB - 1) / QLLC_NB, S = split ? 64 : 32;
  int16_t *xs = (int16_t *)scratch;
  int64_t acc[FC_R * 64] __attribute__((aligned(64)));
  const __m512i zy = _mm512_set1_epi64(z_y), lo = _mm512_set1_epi64(act_lo), hi = _mm512_set1_epi64(act_hi);
  for (int64_t i0 = 0; i0 < M; i0 += QLLC_FC_MB) {
    const int64_t mb = M - i0 < QLLC_FC_MB ? M - i0 : QLLC_FC_MB;
    const int16_t *xb = x + i0 * K;
    int64_t ldx = K;
    if (K & 1) { /* odd K: rows with a zero pair partner after them (its weight is zero too) */
      for (int64_t r = 0; r < mb; r++) {
        for (int64_t k = 0; k < K; k++) xs[r * Kp2 + k] = x[(i0 + r) * K + k];
        xs[r * Kp2 + K] = 0;
      }
      xb = xs, ldx = Kp2;
    }
    for (int64_t nb0 = 0; nb0 < NBt; nb0 += FC_NBC) {
      const int64_t nbc = NBt - nb0 < FC_NBC ? NBt - nb0 : FC_NBC, c0 = nb0 * QLLC_NB;
      const int64_t c1 = c0 + nbc * QLLC_NB < N ? c0 + nbc * QLLC_NB : N;
      const int16_t *wb = wp + nb0 * P * S;
      for (int64_t r0 = 0; r0 < mb; r0 += FC_R) {
        const int64_t rr = mb - r0 < FC_R ? mb - r0 : FC_R;
        for (int64_t r = 0; r < rr; r++)
          for (int64_t c = c0; c < c1; c++) acc[r * 64 + (c - c0)] = bias[c];
        if (rr == FC_R) fc_tile_nbc(acc, xb + r0 * ldx, ldx, wb, P, FC_R, nbc, split);
        else
          for (int64_t r = 0; r < rr; r++) fc_tile_nbc(acc + r * 64, xb + (r0 + r) * ldx, ldx, wb, P, 1, nbc, split);
        for (int64_t c = c0; c < c1; c += 8) { /* the epilogue, 8 channels at a time */
          const __mmask8 mk = c1 - c >= 8 ? 0xff : (__mmask8)((1u << (c1 - c)) - 1);
          const __m512i mv = _mm512_cvtepi32_epi64(_mm256_maskz_loadu_epi32(mk, (const void *)(m + c)));
          const __m512i nv = _mm512_cvtepi32_epi64(_mm256_maskz_loadu_epi32(mk, (const void *)(n + c)));
          for (int64_t r = 0; r < rr; r++) {
            const __m512i o = qx_req8(_mm512_load_si512((const void *)(acc + r * 64 + (c - c0))), mv, nv, zy, lo, hi);
            _mm_mask_storeu_epi16((void *)(y + (i0 + r0 + r) * N + c), mk, _mm512_cvtepi64_epi16(o));
          }
        }
      }
    }
  }
}

/* ---- Conv -------------------------------------------------------------------------------------------- */

/* idx for vpermt2w: the interleaving of a[0..16) with b[0..16) (lo) and of a[16..32) with b[16..32) (hi) */
static const int16_t qx_ilv[64] __attribute__((aligned(64))) = {
    0,  32, 1,  33, 2,  34, 3,  35, 4,  36, 5,  37, 6,  38, 7,  39, 8,  40, 9,  41, 10, 42,
    11, 43, 12, 44, 13, 45, 14, 46, 15, 47, 16, 48, 17, 49, 18, 50, 19, 51, 20, 52, 21, 53,
    22, 54, 23, 55, 24, 56, 25, 57, 26, 58, 27, 59, 28, 60, 29, 61, 30, 62, 31, 63};

/* t[0..64): input tap (c, kh, kw) of output pixels p0 .. p0 + np (z_x where the tap is in the padding
   and past np). xc: input channel c of the image and group. */
QX_FN void conv_tap_row(int16_t *t, const int16_t *xc, int64_t p0, int64_t np, int64_t kh, int64_t kw, int64_t H,
                        int64_t W, int64_t OW, int64_t stride_h, int64_t stride_w, int64_t pad_top, int64_t pad_left,
                        int64_t dil_h, int64_t dil_w, __m512i zx) {
  _mm512_store_si512((void *)t, zx);
  _mm512_store_si512((void *)(t + 32), zx);
  const int64_t off = kw * dil_w - pad_left; /* iw = ow * stride_w + off */
  const int64_t fi = qk_first_inside(off, stride_w), ei = qk_end_inside(off, stride_w, W, OW);
  if (fi >= ei) return;
  int64_t oh = p0 / OW, owa = p0 % OW;
  for (int64_t q = 0; q < np; oh++, owa = 0) {
    const int64_t len = OW - owa < np - q ? OW - owa : np - q;
    const int64_t ih = oh * stride_h - pad_top + kh * dil_h;
    if (ih >= 0 && ih < H) {
      const int64_t lo = owa > fi ? owa : fi, hi = owa + len < ei ? owa + len : ei;
      if (lo < hi) {
        int16_t *d = t + q + (lo - owa);
        const int16_t *s = xc + ih * W + lo * stride_w + off;
        const int64_t cnt = hi - lo;
        if (stride_w == 1) {
          for (int64_t j = 0; j < cnt; j += 32) {
            const __mmask32 mk = cnt - j >= 32 ? 0xffffffffu : (__mmask32)((1u << (cnt - j)) - 1);
            _mm512_mask_storeu_epi16((void *)(d + j), mk, _mm512_maskz_loadu_epi16(mk, (const void *)(s + j)));
          }
        } else {
          for (int64_t j = 0; j < cnt; j++) d[j] = s[j * stride_w];
        }
      }
    }
    q += len;
  }
}

/* The panel [P][64][2] of pixels p0 .. p0 + np of one image and group (xg: its first input channel). */
QX_FN void conv_pack(int16_t *panel, const int16_t *xg, int64_t p0, int64_t np, int64_t K, int64_t P, int64_t H,
                     int64_t W, int64_t OW, int64_t KH, int64_t KW, int64_t stride_h, int64_t stride_w,
                     int64_t pad_top, int64_t pad_left, int64_t dil_h, int64_t dil_w, int32_t z_x) {
  int16_t t[2][64] __attribute__((aligned(64)));
  const __m512i zx = _mm512_set1_epi16((int16_t)z_x), zero = _mm512_setzero_si512();
  const __m512i ilo = _mm512_load_si512((const void *)qx_ilv), ihi = _mm512_load_si512((const void *)(qx_ilv + 32));
  int64_t c = 0, kh = 0, kw = 0; /* tap k = (c, kh, kw), advanced incrementally */
  for (int64_t k2 = 0; k2 < P; k2++) {
    for (int s = 0; s < 2; s++) {
      if (2 * k2 + s >= K) { /* the odd K's pair partner: its weight is zero */
        _mm512_store_si512((void *)t[s], zero);
        _mm512_store_si512((void *)(t[s] + 32), zero);
        continue;
      }
      conv_tap_row(t[s], xg + c * H * W, p0, np, kh, kw, H, W, OW, stride_h, stride_w, pad_top, pad_left, dil_h,
                   dil_w, zx);
      if (++kw == KW) {
        kw = 0;
        if (++kh == KH) kh = 0, c++;
      }
    }
    const __m512i a0 = _mm512_load_si512((const void *)t[0]), a1 = _mm512_load_si512((const void *)(t[0] + 32));
    const __m512i b0 = _mm512_load_si512((const void *)t[1]), b1 = _mm512_load_si512((const void *)(t[1] + 32));
    int16_t *d = panel + k2 * 128;
    _mm512_store_si512((void *)d, _mm512_permutex2var_epi16(a0, ilo, b0));
    _mm512_store_si512((void *)(d + 32), _mm512_permutex2var_epi16(a0, ihi, b0));
    _mm512_store_si512((void *)(d + 64), _mm512_permutex2var_epi16(a1, ilo, b1));
    _mm512_store_si512((void *)(d + 96), _mm512_permutex2var_epi16(a1, ihi, b1));
  }
}

/* acc[r * 64 + p] += sum_k w[oc0 + r][k] * panel[k][p] for r < R, p < NV * 16. w0: row oc0 (lo plane
   when split), w1: row oc0 of the hi plane, Kp2 int16 per row. */
QX_FN void conv_tile(int64_t *acc, const int16_t *panel, const int16_t *w0, const int16_t *w1, int64_t Kp2,
                     int64_t P, const int R, const int NV, const int split) {
  const int64_t run = split ? QLLC_RUN_SPLIT : QLLC_RUN_16X8;
  for (int64_t k0 = 0; k0 < P; k0 += run) {
    const int64_t k1 = P - k0 < run ? P : k0 + run;
    __m512i a[CV_RMAX][4], h[CV_RMAX][4];
#pragma GCC unroll 6
    for (int r = 0; r < R; r++)
#pragma GCC unroll 4
      for (int v = 0; v < NV; v++) a[r][v] = h[r][v] = _mm512_setzero_si512();
    for (int64_t k = k0; k < k1; k++) {
      __m512i pv[4];
#pragma GCC unroll 4
      for (int v = 0; v < NV; v++) pv[v] = _mm512_load_si512((const void *)(panel + k * 128 + v * 32));
#pragma GCC unroll 6
      for (int r = 0; r < R; r++) {
        const __m512i wl = qx_bcast(w0 + r * Kp2 + 2 * k);
#pragma GCC unroll 4
        for (int v = 0; v < NV; v++) a[r][v] = _mm512_dpwssd_epi32(a[r][v], pv[v], wl);
        if (split) {
          const __m512i wh = qx_bcast(w1 + r * Kp2 + 2 * k);
#pragma GCC unroll 4
          for (int v = 0; v < NV; v++) h[r][v] = _mm512_dpwssd_epi32(h[r][v], pv[v], wh);
        }
      }
    }
#pragma GCC unroll 6
    for (int r = 0; r < R; r++)
#pragma GCC unroll 4
      for (int v = 0; v < NV; v++) qx_add64(acc + r * 64 + v * 16, a[r][v], h[r][v], split);
  }
}

QX_FN void conv_tile_nv(int64_t *acc, const int16_t *panel, const int16_t *w0, const int16_t *w1, int64_t Kp2,
                        int64_t P, const int R, int64_t nv, const int split) {
  switch (nv) {
  case 1: conv_tile(acc, panel, w0, w1, Kp2, P, R, 1, split); break;
  case 2: conv_tile(acc, panel, w0, w1, Kp2, P, R, 2, split); break;
  case 3: conv_tile(acc, panel, w0, w1, Kp2, P, R, 3, split); break;
  default: conv_tile(acc, panel, w0, w1, Kp2, P, R, 4, split); break;
  }
}

QX_FN void conv_impl(int16_t *QLLC_RESTRICT y, const int16_t *QLLC_RESTRICT x, const int16_t *QLLC_RESTRICT wp,
                     const int64_t *bias, const int32_t *m, const int32_t *n, int64_t N, int64_t C, int64_t H,
                     int64_t W, int64_t M, int64_t OH, int64_t OW, int64_t KH, int64_t KW, int64_t stride_h,
                     int64_t stride_w, int64_t pad_top, int64_t pad_left, int64_t dil_h, int64_t dil_w, int64_t group,
                     int32_t z_x, int32_t z_y, int32_t act_lo, int32_t act_hi, uint8_t *scratch, const int split) {
  const int64_t cg = C / group, mg = M / group, K = cg * KH * KW, P = (K + 1) / 2, Kp2 = 2 * P, NP = OH * OW;
  const int R = split ? CV_R16 : CV_R8;
  int16_t *panel = (int16_t *)scratch;
  int64_t acc[CV_RMAX * 64] __attribute__((aligned(64)));
  const __m512i zy = _mm512_set1_epi64(z_y), lo = _mm512_set1_epi64(act_lo), hi = _mm512_set1_epi64(act_hi);
  for (int64_t b = 0; b < N; b++)
    for (int64_t g = 0; g < group; g++) {
      const int16_t *xg = x + (b * C + g * cg) * H * W;
      for (int64_t p0 = 0; p0 < NP; p0 += QLLC_CONV_PB) {
        const int64_t np = NP - p0 < QLLC_CONV_PB ? NP - p0 : QLLC_CONV_PB, nv = (np + 15) / 16;
        conv_pack(panel, xg, p0, np, K, P, H, W, OW, KH, KW, stride_h, stride_w, pad_top, pad_left, dil_h, dil_w,
                  z_x);
        for (int64_t oc0 = g * mg; oc0 < (g + 1) * mg; oc0 += R) {
          const int64_t rr = (g + 1) * mg - oc0 < R ? (g + 1) * mg - oc0 : R;
          for (int64_t r = 0; r < rr; r++)
            for (int64_t p = 0; p < nv * 16; p++) acc[r * 64 + p] = bias[oc0 + r];
          const int16_t *w0 = wp + oc0 * Kp2, *w1 = wp + (M + oc0) * Kp2;
          if (rr == R) {
            if (split) conv_tile_nv(acc, panel, w0, w1, Kp2, P, CV_R16, nv, 1);
            else conv_tile_nv(acc, panel, w0, w1, Kp2, P, CV_R8, nv, 0);
          } else {
            for (int64_t r = 0; r < rr; r++)
              conv_tile_nv(acc + r * 64, panel, w0 + r * Kp2, w1 + r * Kp2, Kp2, P, 1, nv, split);
          }
          for (int64_t r = 0; r < rr; r++) { /* the epilogue, 8 pixels at a time */
            const __m512i mv = _mm512_set1_epi64(m[oc0 + r]), nv = _mm512_set1_epi64(n[oc0 + r]);
            int16_t *yr = y + (b * M + oc0 + r) * NP + p0;
            for (int64_t p = 0; p < np; p += 8) {
              const __mmask8 mk = np - p >= 8 ? 0xff : (__mmask8)((1u << (np - p)) - 1);
              const __m512i o = qx_req8(_mm512_load_si512((const void *)(acc + r * 64 + p)), mv, nv, zy, lo, hi);
              _mm_mask_storeu_epi16((void *)(yr + p), mk, _mm512_cvtepi64_epi16(o));
            }
          }
        }
      }
    }
}

/* ---- the kernels ------------------------------------------------------------------------------------- */

#define QX_KERNELS(tw, SPLIT)                                                                                   \
  QX_KERNEL void qllc_k_fc_i16_##tw##_i16__avx512vnni(                                                          \
      int16_t *y, const int16_t *x, const int16_t *wp, const int64_t *bias, const int32_t *m, const int32_t *n,  \
      int64_t M, int64_t N, int64_t K, int32_t z_x, int32_t z_y, int32_t act_lo, int32_t act_hi,                 \
      uint8_t *scratch) {                                                                                       \
    (void)z_x; /* folded into the bias */                                                                       \
    fc_impl(y, x, wp, bias, m, n, M, N, K, z_y, act_lo, act_hi, scratch, SPLIT);                                \
  }                                                                                                             \
  QX_KERNEL void qllc_k_conv2d_i16_##tw##_i16__avx512vnni(                                                      \
      int16_t *y, const int16_t *x, const int16_t *wp, const int64_t *bias, const int32_t *m, const int32_t *n,  \
      int64_t N, int64_t C, int64_t H, int64_t W, int64_t M, int64_t OH, int64_t OW, int64_t KH, int64_t KW,       \
      int64_t stride_h, int64_t stride_w, int64_t pad_top, int64_t pad_left, int64_t dil_h, int64_t dil_w,        \
      int64_t group, int32_t z_x, int32_t z_y, int32_t act_lo, int32_t act_hi, uint8_t *scratch) {               \
    conv_impl(y, x, wp, bias, m, n, N, C, H, W, M, OH, OW, KH, KW, stride_h, stride_w, pad_top, pad_left, dil_h,  \
              dil_w, group, z_x, z_y, act_lo, act_hi, scratch, SPLIT);                                          \
  }
QX_KERNELS(i8, 0)
QX_KERNELS(i16, 1)
