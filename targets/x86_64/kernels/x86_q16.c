/* targets/x86_64/kernels/x86_q16.c: AVX512-VNNI variants of the fused 16-bit input layers (Conv, FC),
 * 16x8 (int8 weights, packed widened to int16) and int16 x int16 (weights split into lo/hi planes).
 * Rows and the contract: variants.def; layouts and run bounds: layouts.h.
 *
 * Exactness: vpdpwssd adds two signed 16 x 16 products per 32-bit lane, wrapping. Sums are taken over
 * runs of at most QLLC_RUN_16X8 / QLLC_RUN_SPLIT pairs, which layouts.h shows never leave int32, and
 * every run's sums are added into int64 accumulators (split: acc += run_hi * 256 + run_lo): the int64
 * sum is exactly the scalar kernel's, for every input. The requantization (qx_req8) is vector code with
 * the bits of qk_req64 / qk_out, 8 outputs at a time.
 *
 * FC: lanes over 16 output channels (one K2N16 line is one zmm of 16 channels x 2 reductions); each
 * input row's reduction pair is broadcast as one 32-bit value. Tile: 6 rows x 4 blocks of 16 channels
 * (24 accumulators; int16: 6 rows x 2 blocks x 2 planes), the weights of the blocks stream once per
 * 6 rows. Rows of odd K are copied to the scratch with a zero after them (the pair load would
 * otherwise read past the row); even K reads the input in place.
 * Conv: implicit GEMM with lanes over output pixels. The taps of up to QLLC_CONV_PB = 64 output pixels
 * are packed into the scratch as a panel [Kp2 / 2][64][2] int16 (padded taps read z_x), so one pair of
 * taps of 16 pixels is one zmm; a weight pair of a row (ROWS_K2) is broadcast. Tile: 12 output
 * channels x 32 pixels (24 accumulators; int16: 6 x 32 x 2 planes). Packing builds two taps at a time
 * in registers with masked loads (stride 1: from a per-panel table; other strides: one value at a time)
 * and interleaves them with vpermt2w.
 *
 * Direct conv (conv2dc2, the shapes qllc_c4_fits takes): the same tiles read pairs of channels straight
 * from padded planes (below), no panel. 16x8: an output channel whose ROWS_C2 trailer byte is set (the
 * compiler found 2^15 * sum |w| + |bias| < 2^31: every partial sum of any input is inside int32; and
 * qllc_req32_fits(n, z_y), which the kernel checks again) runs in ONE int32 run started at its bias, with no
 * widening, and its tile requantizes it in 32-bit lanes (x86_reqh.h) and stores it; the other channels
 * take the widened runs; tiles never mix the two kinds.
 * Speed (Zen 5, 3x3 64->64 at 56x56 and FC 64x1024x1024, specialised on the shapes as qllc does):
 * 16x8 runs at about 0.5x the int8 vpdpbusd variants, int16 at about 0.25x-0.28x: vpdpwssd does half the
 * MACs of vpdpbusd per instruction, and the split int16 weights need two of them per MAC pair. */
#include <immintrin.h>

#include "q_common.h"
#include "variants.h"
#include "x86_reqh.h"

#define QX_ISA "avx512f,avx512bw,avx512vl,avx512dq,avx512vnni"
#define QX_FN static inline __attribute__((always_inline, target(QX_ISA)))
#define QX_KERNEL QLLC_KERNEL __attribute__((target(QX_ISA)))

/* a pair of int16 read as one 32-bit value (2-byte aligned; the panels and rows are int16 arrays) */
typedef int32_t qx_pair __attribute__((may_alias, aligned(2)));

#ifndef FC_R8
#define FC_R8 6  /* FC tile rows, 16x8 */
#endif
#ifndef FC_NB8
#define FC_NB8 4 /* FC tile blocks of 16 channels, 16x8: 6 x 4 accumulators */
#endif
#ifndef FC_R16
#define FC_R16 6 /* FC tile rows, int16 */
#endif
#ifndef FC_NB16
#define FC_NB16 2 /* FC tile blocks of 16 channels, int16: 6 x 2 x 2 accumulators */
#endif
#define FC_R (FC_R8 > FC_R16 ? FC_R8 : FC_R16)
#define FC_NBC (FC_NB8 > FC_NB16 ? FC_NB8 : FC_NB16)
#ifndef CV_NVM
#define CV_NVM 2  /* conv tile pixel vectors: 16 * CV_NVM pixels of the panel's 64 at a time */
#endif
#ifndef CV_R8
#define CV_R8 12  /* conv tile output channels, 16x8: 12 x 2 accumulators */
#endif
#ifndef CV_R16
#define CV_R16 6  /* conv tile output channels, int16 split: 6 x 2 x 2 accumulators */
#endif
#define CV_RMAX (CV_R8 > CV_R16 ? CV_R8 : CV_R16)
#define CV_AS (CV_NVM * 16) /* int64 accumulators per tile channel */

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
#pragma GCC unroll 8
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
#pragma GCC unroll 8
      for (int r = 0; r < R; r++) {
        const __m512i xb = qx_bcast(xr + r * ldx + 2 * k);
#pragma GCC unroll 4
        for (int j = 0; j < NBC; j++) {
          a[r][j] = _mm512_dpwssd_epi32(a[r][j], wl[j], xb);
          if (split) h[r][j] = _mm512_dpwssd_epi32(h[r][j], wh[j], xb);
        }
      }
    }
#pragma GCC unroll 8
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
#if FC_NBC > 2
  case 3: fc_tile(acc, xr, ldx, wb, P, R, 3, split); break;
  case 4: fc_tile(acc, xr, ldx, wb, P, R, 4, split); break;
#endif
  }
}

/* rr rows of the tile (1 .. FC_R), as tiles of FC_R8 / FC_R16, 4, 2 and 1 rows */
QX_FN void fc_tile_rows(int64_t *acc, const int16_t *xr, int64_t ldx, const int16_t *wb, int64_t P, int64_t rr,
                        int64_t nbc, const int split) {
  const int RM = split ? FC_R16 : FC_R8;
  while (rr > 0) {
    const int64_t t = rr >= RM ? RM : rr >= 4 ? 4 : rr >= 2 ? 2 : 1;
    if (t == RM) fc_tile_nbc(acc, xr, ldx, wb, P, RM, nbc, split);
    else if (t == 4) fc_tile_nbc(acc, xr, ldx, wb, P, 4, nbc, split);
    else if (t == 2) fc_tile_nbc(acc, xr, ldx, wb, P, 2, nbc, split);
    else fc_tile_nbc(acc, xr, ldx, wb, P, 1, nbc, split);
    acc += t * 64, xr += t * ldx, rr -= t;
  }
}

QX_FN void fc_impl(int16_t *QLLC_RESTRICT y, const int16_t *QLLC_RESTRICT x, const int16_t *QLLC_RESTRICT wp,
                   const int64_t *bias, const int32_t *m, const int32_t *n, int64_t M, int64_t N, int64_t K,
                   int32_t z_y, int32_t act_lo, int32_t act_hi, uint8_t *scratch, const int split) {
  const int64_t P = (K + 1) / 2, Kp2 = 2 * P, NBt = (N + QLLC_NB - 1) / QLLC_NB, S = split ? 64 : 32;
  const int64_t RM = split ? FC_R16 : FC_R8, NBM = split ? FC_NB16 : FC_NB8;
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
    for (int64_t nb0 = 0; nb0 < NBt; nb0 += NBM) {
      const int64_t nbc = NBt - nb0 < NBM ? NBt - nb0 : NBM, c0 = nb0 * QLLC_NB;
      const int64_t c1 = c0 + nbc * QLLC_NB < N ? c0 + nbc * QLLC_NB : N;
      const int16_t *wb = wp + nb0 * P * S;
      for (int64_t r0 = 0; r0 < mb; r0 += RM) {
        const int64_t rr = mb - r0 < RM ? mb - r0 : RM;
        for (int64_t c = c0; c < c1; c += 8) { /* every row's accumulators start at the bias */
          const __mmask8 mk = c1 - c >= 8 ? 0xff : (__mmask8)((1u << (c1 - c)) - 1);
          const __m512i bv = _mm512_maskz_loadu_epi64(mk, (const void *)(bias + c));
          for (int64_t r = 0; r < rr; r++) _mm512_store_si512((void *)(acc + r * 64 + (c - c0)), bv);
        }
        fc_tile_rows(acc, xb + r0 * ldx, ldx, wb, P, rr, nbc, split);
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
/* idx for vpermt2w: the even values of a[0..32) and b[0..32) */
static const int16_t qx_even[32] __attribute__((aligned(64))) = {
    0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30, 32, 34, 36, 38, 40, 42, 44, 46, 48, 50, 52, 54, 56, 58, 60, 62};

/* Bits [lo, hi) of a 32-bit mask, 0 <= lo, hi <= 32 (empty when hi <= lo). */
QX_FN __mmask32 qx_range32(int64_t lo, int64_t hi) {
  lo = lo < 0 ? 0 : lo > 32 ? 32 : lo, hi = hi < 0 ? 0 : hi > 32 ? 32 : hi;
  return hi <= lo ? 0 : (__mmask32)((((uint64_t)1 << hi) - 1) & ~(((uint64_t)1 << lo) - 1));
}

/* The 64 values (two zmm, *v0 lanes 0..31 and *v1 lanes 32..63) of input tap (kh, kw) of input channel
 * xc for output pixels p0 .. p0 + np, the first of which is (oh0, ow0): z_x where the tap is in the
 * padding and past np. off = kw * dil_w - pad_left, so the input column is iw = ow * stride_w + off.
 * Stride 1: each output row's run of inside columns is one masked load per half, from the address that
 * puts its first value in its lane (the masked-off lanes are not read: no fault and no data past the
 * image). Stride 2: four masked loads of the 128 values from that address (only the run's span is
 * read), the even ones picked by vpermt2w and blended into the run's lanes. Other strides go through
 * t[64] on the stack, one value at a time. */
QX_FN void conv_tap(__m512i *v0, __m512i *v1, int16_t *t, const int16_t *xc, int64_t oh0, int64_t ow0, int64_t np,
                    int64_t kh, int64_t off, int64_t H, int64_t W, int64_t OW, int64_t stride_h, int64_t stride_w,
                    int64_t pad_top, int64_t dil_h, __m512i zx) {
  __m512i a = zx, b = zx;
  /* [fi, ei): the output columns whose input column is inside the image */
  const int64_t fi = stride_w == 1 ? (off < 0 ? -off : 0) : qk_first_inside(off, stride_w);
  const int64_t ei0 = stride_w == 1 ? W - off : qk_end_inside(off, stride_w, W, OW), ei = ei0 < OW ? ei0 : OW;
  const int scalar = stride_w > 2;
  if (scalar) {
    _mm512_store_si512((void *)t, zx);
    _mm512_store_si512((void *)(t + 32), zx);
  }
  if (fi < ei) {
    int64_t oh = oh0, owa = ow0;
    for (int64_t q = 0; q < np; oh++, owa = 0) {
      const int64_t len = OW - owa < np - q ? OW - owa : np - q;
      const int64_t ih = oh * stride_h - pad_top + kh * dil_h;
      const int64_t lo = owa > fi ? owa : fi, hi = owa + len < ei ? owa + len : ei;
      if (ih >= 0 && ih < H && lo < hi) {
        const int64_t d0 = q + (lo - owa), cnt = hi - lo; /* lanes d0 .. d0 + cnt */
        const int16_t *src = xc + ih * W + lo * stride_w + off;
        const uintptr_t at = (uintptr_t)src - (uintptr_t)(2 * stride_w * d0); /* lane 0's (never read) address */
        if (stride_w == 1) {
          const uint64_t mk = (cnt >= 64 ? ~(uint64_t)0 : (((uint64_t)1 << cnt) - 1)) << d0;
          if ((uint32_t)mk) a = _mm512_mask_loadu_epi16(a, (__mmask32)mk, (const void *)at);
          if (mk >> 32) b = _mm512_mask_loadu_epi16(b, (__mmask32)(mk >> 32), (const void *)(at + 64));
        } else if (stride_w == 2) {
          const __m512i even = _mm512_load_si512((const void *)qx_even);
          const int64_t s0 = 2 * d0, s1 = 2 * (d0 + cnt) - 1; /* the values read: [s0, s1) from at */
          if (d0 < 32) {
            const __m512i l0 = _mm512_maskz_loadu_epi16(qx_range32(s0, s1), (const void *)at);
            const __m512i l1 = _mm512_maskz_loadu_epi16(qx_range32(s0 - 32, s1 - 32), (const void *)(at + 64));
            a = _mm512_mask_blend_epi16(qx_range32(d0, d0 + cnt), a, _mm512_permutex2var_epi16(l0, even, l1));
          }
          if (d0 + cnt > 32) {
            const __m512i l2 = _mm512_maskz_loadu_epi16(qx_range32(s0 - 64, s1 - 64), (const void *)(at + 128));
            const __m512i l3 = _mm512_maskz_loadu_epi16(qx_range32(s0 - 96, s1 - 96), (const void *)(at + 192));
            b = _mm512_mask_blend_epi16(qx_range32(d0 - 32, d0 + cnt - 32), b,
                                        _mm512_permutex2var_epi16(l2, even, l3));
          }
        } else {
          for (int64_t j = 0; j < cnt; j++) t[d0 + j] = src[j * stride_w];
        }
      }
      q += len;
    }
  }
  if (scalar) a = _mm512_load_si512((const void *)t), b = _mm512_load_si512((const void *)(t + 32));
  *v0 = a, *v1 = b;
}

/* Stride 1: the masked loads of every tap (kh, kw) of a panel, computed once per panel. Tap j = kh * KW + kw
 * of input channel xc is zx with, for each entry i in [si[j], si[j + 1]), the lanes of sg[i].mk loaded
 * from xc + sg[i].at + lane (runs of output rows that continue in the input, as in a 1x1 conv, merge into
 * one entry). Returns 0 (the caller computes each tap on its own) past CV_KK taps or CV_SEGS entries. */
#define CV_KK 49
#define CV_SEGS 96
typedef struct qx_seg {
  int64_t at;
  uint64_t mk;
} qx_seg;
QX_FN int conv_segs(qx_seg *sg, int16_t *si, int64_t oh0, int64_t ow0, int64_t np, int64_t H, int64_t W, int64_t OW,
                    int64_t KH, int64_t KW, int64_t stride_h, int64_t stride_w, int64_t pad_top, int64_t pad_left,
                    int64_t dil_h, int64_t dil_w) {
  if (stride_w != 1 || KH * KW > CV_KK) return 0;
  int64_t ns = 0;
  for (int64_t kh = 0; kh < KH; kh++)
    for (int64_t kw = 0; kw < KW; kw++) {
      const int64_t j = kh * KW + kw, off = kw * dil_w - pad_left, fi = off < 0 ? -off : 0;
      const int64_t ei = W - off < OW ? W - off : OW;
      si[j] = (int16_t)ns;
      int64_t oh = oh0, owa = ow0;
      for (int64_t q = 0; q < np; oh++, owa = 0) {
        const int64_t len = OW - owa < np - q ? OW - owa : np - q;
        const int64_t ih = oh * stride_h - pad_top + kh * dil_h;
        const int64_t lo = owa > fi ? owa : fi, hi = owa + len < ei ? owa + len : ei;
        if (ih >= 0 && ih < H && lo < hi) {
          const int64_t d0 = q + (lo - owa), cnt = hi - lo, at = ih * W + lo + off - d0;
          const uint64_t mk = (cnt >= 64 ? ~(uint64_t)0 : (((uint64_t)1 << cnt) - 1)) << d0;
          if (ns > si[j] && sg[ns - 1].at == at) sg[ns - 1].mk |= mk;
          else {
            if (ns == CV_SEGS) return 0;
            sg[ns].at = at, sg[ns].mk = mk, ns++;
          }
        }
        q += len;
      }
    }
  si[KH * KW] = (int16_t)ns;
  return 1;
}

/* The panel [P][64][2] of pixels p0 .. p0 + np of one image and group (xg: its first input channel):
   two taps at a time in registers, interleaved by vpermt2w into four full stores. */
QX_FN void conv_pack(int16_t *panel, const int16_t *xg, int64_t p0, int64_t np, int64_t K, int64_t P, int64_t H,
                     int64_t W, int64_t OW, int64_t KH, int64_t KW, int64_t stride_h, int64_t stride_w,
                     int64_t pad_top, int64_t pad_left, int64_t dil_h, int64_t dil_w, int32_t z_x) {
  int16_t t[64] __attribute__((aligned(64)));
  qx_seg sg[CV_SEGS];
  int16_t si[CV_KK + 1];
  const __m512i zx = _mm512_set1_epi16((int16_t)z_x);
  const __m512i ilo = _mm512_load_si512((const void *)qx_ilv), ihi = _mm512_load_si512((const void *)(qx_ilv + 32));
  const int64_t oh0 = p0 / OW, ow0 = p0 % OW;
  const int table = conv_segs(sg, si, oh0, ow0, np, H, W, OW, KH, KW, stride_h, stride_w, pad_top, pad_left, dil_h,
                              dil_w);
  int64_t c = 0, j = 0, kh = 0, kw = 0; /* tap k = (c, j = kh * KW + kw), advanced incrementally */
#define CV_TAP(A, B)                                                                                           \
  do {                                                                                                         \
    const int16_t *xc = xg + c * H * W;                                                                        \
    if (table) {                                                                                               \
      A = B = zx;                                                                                              \
      for (int64_t i = si[j]; i < si[j + 1]; i++) {                                                            \
        const uintptr_t at = (uintptr_t)xc + (uintptr_t)(2 * sg[i].at); /* lane 0's (never read) address */   \
        const uint64_t mk = sg[i].mk;                                                                          \
        A = _mm512_mask_loadu_epi16(A, (__mmask32)mk, (const void *)at); /* an empty mask reads nothing */      \
        B = _mm512_mask_loadu_epi16(B, (__mmask32)(mk >> 32), (const void *)(at + 64));                       \
      }                                                                                                        \
    } else {                                                                                                   \
      conv_tap(&A, &B, t, xc, oh0, ow0, np, kh, kw * dil_w - pad_left, H, W, OW, stride_h, stride_w, pad_top,  \
               dil_h, zx);                                                                                     \
    }                                                                                                          \
    j++;                                                                                                       \
    if (++kw == KW) {                                                                                          \
      kw = 0;                                                                                                  \
      if (++kh == KH) kh = 0, j = 0, c++;                                                                      \
    }                                                                                                          \
  } while (0)
  for (int64_t k2 = 0; k2 < P; k2++) {
    __m512i a0, a1, b0, b1;
    CV_TAP(a0, a1);
    if (2 * k2 + 1 < K) CV_TAP(b0, b1);
    else b0 = b1 = _mm512_setzero_si512(); /* the odd K's last pair partner: its weight is zero */
    int16_t *d = panel + k2 * 128;
    _mm512_store_si512((void *)d, _mm512_permutex2var_epi16(a0, ilo, b0));
    _mm512_store_si512((void *)(d + 32), _mm512_permutex2var_epi16(a0, ihi, b0));
    _mm512_store_si512((void *)(d + 64), _mm512_permutex2var_epi16(a1, ilo, b1));
    _mm512_store_si512((void *)(d + 96), _mm512_permutex2var_epi16(a1, ihi, b1));
  }
#undef CV_TAP
}

/* Where the int32 tiles of the direct 16x8 conv write (see conv_tile): the output row of the chunk's
   first channel (y + (image * M + oc0) * NP, NP int16 per row), and per vector j of 16 virtual pixels
   the lanes kept (k16[j]: output pixels), the store's mask (s16[j]: their count) and the output pixel of
   the first kept lane (oo[j]); the output zero point and clamp in 32-bit lanes. */
typedef struct qx_c2ep {
  int16_t *y;
  int64_t NP;
  const __mmask16 *k16, *s16;
  const int64_t *oo;
  const int32_t *m, *n; /* of the chunk's first channel */
  int32_t z_y;
  __m512i lo, hi;
} qx_c2ep;

/* acc[r * CV_AS + p] += sum_k w[oc0 + r][k] * panel[k][p] for r < R, p < NV * 16. w0: row oc0 (lo plane
   when split), w1: row oc0 of the hi plane, Kp2 int16 per row. koff NULL: the packed panel, pair k at
   panel + k * 128; else the direct conv's planes, pair k of the tile's first pixel at panel + koff[k].
   i32 (16x8 direct conv, channels whose ROWS_C2 trailer is set and qllc_req32_fits: every sum bias + ...
   stays inside int32): one run from bias[r] over all P pairs, no widening, and the tile's epilogue
   straight from the registers: qx_reqh_512, the output pixels kept by vpcompressd, stored to ep's rows
   r0 + r (acc is not written). */
QX_FN void conv_tile(int64_t *acc, const int16_t *panel, const int32_t *koff, const int16_t *w0, const int16_t *w1,
                     const int64_t *bias, int64_t Kp2, int64_t P, const int R, const int NV, const int split,
                     const int i32, const qx_c2ep *ep, int64_t r0) {
  const int64_t run = i32 ? P : split ? QLLC_RUN_SPLIT : QLLC_RUN_16X8;
  for (int64_t k0 = 0; k0 < P; k0 += run) { /* i32: one run (P >= 1) */
    const int64_t k1 = P - k0 < run ? P : k0 + run;
    __m512i a[CV_RMAX][4], h[CV_RMAX][4];
#pragma GCC unroll 12
    for (int r = 0; r < R; r++)
#pragma GCC unroll 4
      for (int v = 0; v < NV; v++)
        a[r][v] = h[r][v] = i32 ? _mm512_set1_epi32((int32_t)bias[r]) : _mm512_setzero_si512();
    for (int64_t k = k0; k < k1; k++) {
      __m512i pv[4];
      const int16_t *src = koff ? panel + koff[k] : panel + k * 128;
#pragma GCC unroll 4
      for (int v = 0; v < NV; v++)
        pv[v] = koff ? _mm512_loadu_si512((const void *)(src + v * 32)) : _mm512_load_si512((const void *)(src + v * 32));
#pragma GCC unroll 12
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
    if (i32) {
#pragma GCC unroll 12
      for (int r = 0; r < R; r++) {
        const int32_t nr = ep->n[r0 + r];
        const __m512i mv = _mm512_set1_epi32(ep->m[r0 + r]), rv = _mm512_set1_epi32(qx_req32_r(nr, ep->z_y));
        const __m512i sh = _mm512_set1_epi32(nr - 32);
        int16_t *yr = ep->y + (r0 + r) * ep->NP;
#pragma GCC unroll 4
        for (int v = 0; v < NV; v++) {
          if (!ep->k16[v]) continue;
          const __m512i o = qx_reqh_512(a[r][v], mv, mv, rv, sh, ep->lo, ep->hi);
          _mm256_mask_storeu_epi16((void *)(yr + ep->oo[v]), ep->s16[v],
                                   _mm512_cvtepi32_epi16(_mm512_maskz_compress_epi32(ep->k16[v], o)));
        }
      }
    } else {
#pragma GCC unroll 12
      for (int r = 0; r < R; r++)
#pragma GCC unroll 4
        for (int v = 0; v < NV; v++) qx_add64(acc + r * CV_AS + v * 16, a[r][v], h[r][v], split);
    }
  }
}

QX_FN void conv_tile_nv(int64_t *acc, const int16_t *panel, const int32_t *koff, const int16_t *w0, const int16_t *w1,
                        const int64_t *bias, int64_t Kp2, int64_t P, const int R, int64_t nv, const int split,
                        const int i32, const qx_c2ep *ep, int64_t r0) {
  switch (nv) {
  case 1: conv_tile(acc, panel, koff, w0, w1, bias, Kp2, P, R, 1, split, i32, ep, r0); break;
#if CV_NVM > 2
  case 2: conv_tile(acc, panel, koff, w0, w1, bias, Kp2, P, R, 2, split, i32, ep, r0); break;
  case 3: conv_tile(acc, panel, koff, w0, w1, bias, Kp2, P, R, 3, split, i32, ep, r0); break;
#endif
  default: conv_tile(acc, panel, koff, w0, w1, bias, Kp2, P, R, CV_NVM, split, i32, ep, r0); break;
  }
}

/* A tile of R (a constant) channels: split, or 16x8 in one int32 run (i32, with ep) or in widened runs. */
QX_FN void conv_tile_mode(int64_t *acc, const int16_t *panel, const int32_t *koff, const int16_t *w0,
                          const int16_t *w1, const int64_t *bias, int64_t Kp2, int64_t P, const int R, int64_t nv,
                          const int split, int i32, const qx_c2ep *ep, int64_t r0) {
  if (split) conv_tile_nv(acc, panel, koff, w0, w1, bias, Kp2, P, R, nv, 1, 0, NULL, 0);
  else if (i32) conv_tile_nv(acc, panel, koff, w0, w1, bias, Kp2, P, R, nv, 0, 1, ep, r0);
  else conv_tile_nv(acc, panel, koff, w0, w1, bias, Kp2, P, R, nv, 0, 0, NULL, 0);
}

/* The channels of the next conv_channels call when rem are left: R, except that 16x8 ends in tiles of
   8 channels rather than one of 4 or fewer (64 = 4 x 12 + 2 x 8): a tile of 4 x 2 accumulators is too
   short a chain for vpdpwssd's latency. */
QX_FN int64_t conv_block(int64_t rem, const int split) {
  const int64_t R = split ? CV_R16 : CV_R8;
  if (split || R != 12 || rem >= R + 8 || (rem >= R && rem < 16)) return rem < R ? rem : R;
  return rem >= 8 ? 8 : rem;
}

/* 1 when output channel oc of the direct 16x8 conv runs in one int32 run and requantizes in 32-bit lanes:
   its ROWS_C2 trailer byte is set (fl, NULL for the other convs) and qllc_req32_fits(n, z_y) (qx_reqh_512). */
QX_FN int conv_i32(const uint8_t *fl, const int32_t *n, int32_t z_y, int64_t oc) {
  return fl && fl[oc] && qllc_req32_fits(n[oc], z_y);
}

/* The rr (<= R) output channels from oc0 over nv vectors of the panel ps: acc[r * CV_AS + p] = bias +
   the sums, in tiles of R, 8 (16x8), 4, 2 and 1 channels; except the channels conv_i32 takes, which the
   tiles requantize and store themselves (ep, whose rows start at channel oc0). A tile never mixes the
   two kinds (it ends where conv_i32 changes). */
QX_FN void conv_channels(int64_t *acc, const int16_t *ps, const int32_t *koff, const int16_t *wp, const int64_t *bias,
                         const uint8_t *fl, const int32_t *n, const qx_c2ep *ep, int64_t M, int64_t oc0, int64_t rr,
                         int64_t Kp2, int64_t P, int64_t nv, const int split) {
  const int R = split ? CV_R16 : CV_R8;
  const int32_t z_y = ep ? ep->z_y : 0; /* ep: NULL when fl is (the panel conv) */
  for (int64_t r = 0; r < rr; r++) { /* the int64 accumulators start at the bias */
    if (conv_i32(fl, n, z_y, oc0 + r)) continue;
    const __m512i bv = _mm512_set1_epi64(bias[oc0 + r]);
    for (int64_t p = 0; p < nv * 16; p += 8) _mm512_store_si512((void *)(acc + r * CV_AS + p), bv);
  }
  const int16_t *w0 = wp + oc0 * Kp2, *w1 = wp + (M + oc0) * Kp2;
  for (int64_t r = 0; r < rr;) {
    const int i32 = conv_i32(fl, n, z_y, oc0 + r);
    int64_t e = r + 1; /* [r, e): channels of the same kind */
    while (e < rr && fl && conv_i32(fl, n, z_y, oc0 + e) == i32) e++;
    if (!fl) e = rr;
    const int64_t t = e - r >= R ? R : e - r >= 8 && R == 12 && !split ? 8 : e - r >= 4 ? 4 : e - r >= 2 ? 2 : 1;
    int64_t *ar = acc + r * CV_AS;
    const int16_t *w0r = w0 + r * Kp2, *w1r = w1 + r * Kp2;
    const int64_t *br = bias + oc0 + r;
    if (t == R) {
      if (split) conv_tile_mode(ar, ps, koff, w0r, w1r, br, Kp2, P, CV_R16, nv, 1, 0, NULL, 0);
      else conv_tile_mode(ar, ps, koff, w0r, w1r, br, Kp2, P, CV_R8, nv, 0, i32, ep, r);
    } else if (t == 8) conv_tile_mode(ar, ps, koff, w0r, w1r, br, Kp2, P, 8, nv, 0, i32, ep, r);
    else if (t == 4) conv_tile_mode(ar, ps, koff, w0r, w1r, br, Kp2, P, 4, nv, split, i32, ep, r);
    else if (t == 2) conv_tile_mode(ar, ps, koff, w0r, w1r, br, Kp2, P, 2, nv, split, i32, ep, r);
    else conv_tile_mode(ar, ps, koff, w0r, w1r, br, Kp2, P, 1, nv, split, i32, ep, r);
    r += t;
  }
}

QX_FN void conv_impl(int16_t *QLLC_RESTRICT y, const int16_t *QLLC_RESTRICT x, const int16_t *QLLC_RESTRICT wp,
                     const int64_t *bias, const int32_t *m, const int32_t *n, int64_t N, int64_t C, int64_t H,
                     int64_t W, int64_t M, int64_t OH, int64_t OW, int64_t KH, int64_t KW, int64_t stride_h,
                     int64_t stride_w, int64_t pad_top, int64_t pad_left, int64_t dil_h, int64_t dil_w, int64_t group,
                     int32_t z_x, int32_t z_y, int32_t act_lo, int32_t act_hi, uint8_t *scratch, const int split) {
  const int64_t cg = C / group, mg = M / group, K = cg * KH * KW, P = (K + 1) / 2, Kp2 = 2 * P, NP = OH * OW;
  int16_t *panel = (int16_t *)scratch;
  int64_t acc[CV_RMAX * CV_AS] __attribute__((aligned(64)));
  const __m512i zy = _mm512_set1_epi64(z_y), lo = _mm512_set1_epi64(act_lo), hi = _mm512_set1_epi64(act_hi);
  for (int64_t b = 0; b < N; b++)
    for (int64_t g = 0; g < group; g++) {
      const int16_t *xg = x + (b * C + g * cg) * H * W;
      for (int64_t p0 = 0; p0 < NP; p0 += QLLC_CONV_PB) {
        const int64_t np = NP - p0 < QLLC_CONV_PB ? NP - p0 : QLLC_CONV_PB;
        conv_pack(panel, xg, p0, np, K, P, H, W, OW, KH, KW, stride_h, stride_w, pad_top, pad_left, dil_h, dil_w,
                  z_x);
        for (int64_t s0 = 0; s0 < np; s0 += CV_NVM * 16) { /* pixels p0 + s0 .. p0 + s0 + ns of the panel */
          const int64_t ns = np - s0 < CV_NVM * 16 ? np - s0 : CV_NVM * 16, nv = (ns + 15) / 16;
          const int16_t *ps = panel + s0 * 2;
          for (int64_t oc0 = g * mg, rr; oc0 < (g + 1) * mg; oc0 += rr) {
            rr = conv_block((g + 1) * mg - oc0, split);
            conv_channels(acc, ps, NULL, wp, bias, NULL, n, NULL, M, oc0, rr, Kp2, P, nv, split);
            for (int64_t r = 0; r < rr; r++) { /* the epilogue, 8 pixels at a time */
              const __m512i mv = _mm512_set1_epi64(m[oc0 + r]), nv8 = _mm512_set1_epi64(n[oc0 + r]);
              int16_t *yr = y + (b * M + oc0 + r) * NP + p0 + s0;
              for (int64_t p = 0; p < ns; p += 8) {
                const __mmask8 mk = ns - p >= 8 ? 0xff : (__mmask8)((1u << (ns - p)) - 1);
                const __m512i o = qx_req8(_mm512_load_si512((const void *)(acc + r * CV_AS + p)), mv, nv8, zy, lo, hi);
                _mm_mask_storeu_epi16((void *)(yr + p), mk, _mm512_cvtepi64_epi16(o));
              }
            }
          }
        }
      }
    }
}

/* ---- Direct conv over channel pairs (stride 1, C/group a multiple of 4, more than one tap) ------------ */
/* The conv2dc4 idea (x86_q8_direct.h) for 16-bit inputs, with no im2col panel: the input of one image and group
   is converted once into planes of 2 channels, padded with z_x: pair ((q * (Hp + 1) + r) * Wp + c) holds
   channels 2q, 2q+1 of input row r - pad_top, column c - pad_left (Hp = OH + (KH-1) dh, Wp = W +
   max(pad_left, pad_right): a row's right padding is the next row's left padding, and one more row of
   z_x). Output pixel (oh, ow) is virtual pixel p = oh * Wp + ow; its pair for tap (kh, kw) sits at p +
   kh dh Wp + kw dw of plane q, so 16 consecutive virtual pixels are one 64-byte load per pair of the
   reduction (koff: its offset), which the panel tile above multiplies as it does a packed panel. The Wp -
   OW virtual pixels between output rows are computed and dropped in the epilogue (vpcompressq). The
   weights come in the matching reduction order (q, kh, kw, c % 2): QLLC_LAYOUT_ROWS_C2(_SPLIT). */
QX_FN void c2_convert(int16_t *xs, const int16_t *xg, int64_t nq, int64_t H, int64_t W, int64_t Hp, int64_t Wp,
                      int64_t pt, int64_t pl, int16_t zx) {
  const __m512i zv = _mm512_set1_epi16(zx);
  const __m512i i0 = _mm512_load_si512((const void *)qx_ilv), i1 = _mm512_load_si512((const void *)(qx_ilv + 32));
  int16_t *d = xs;
  for (int64_t q = 0; q < nq; q++)
    for (int64_t r = 0; r <= Hp; r++, d += Wp * 2) { /* row Hp: z_x (rows past H are padding) */
      const int64_t ih = r - pt;
      if (ih < 0 || ih >= H) {
        for (int64_t j = 0; j < Wp * 2; j += 32) _mm512_mask_storeu_epi16(d + j, qx_range32(0, Wp * 2 - j), zv);
        continue;
      }
      const int16_t *s0 = xg + (2 * q * H + ih) * W, *s1 = s0 + H * W;
      for (int64_t c0 = 0; c0 < Wp; c0 += 32) { /* 32 columns: two vectors of 16 pairs (may run into the next row) */
        const __mmask32 in = qx_range32(pl - c0, pl + W - c0);
        const __m512i a = _mm512_mask_loadu_epi16(zv, in, (const void *)(s0 + c0 - pl));
        const __m512i b = _mm512_mask_loadu_epi16(zv, in, (const void *)(s1 + c0 - pl));
        _mm512_storeu_si512((void *)(d + c0 * 2), _mm512_permutex2var_epi16(a, i0, b));
        _mm512_storeu_si512((void *)(d + c0 * 2 + 32), _mm512_permutex2var_epi16(a, i1, b));
      }
    }
  for (int j = 0; j < 4; j++) _mm512_storeu_si512((void *)(d + 32 * j), _mm512_setzero_si512()); /* slack */
}

QX_FN void c2_impl(int16_t *QLLC_RESTRICT y, const int16_t *QLLC_RESTRICT x, const int16_t *QLLC_RESTRICT wp,
                   const int64_t *bias, const int32_t *m, const int32_t *n, int64_t N, int64_t C, int64_t H, int64_t W,
                   int64_t M, int64_t OH, int64_t OW, int64_t KH, int64_t KW, int64_t pt, int64_t pl, int64_t dh,
                   int64_t dw, int64_t group, int32_t z_x, int32_t z_y, int32_t act_lo, int32_t act_hi,
                   uint8_t *scratch, const int split) {
  const int64_t cg = C / group, mg = M / group, T = KH * KW, K = cg * T, P = K / 2, NP = OH * OW;
  const int64_t Hp = OH + (KH - 1) * dh, pr = OW + (KW - 1) * dw - W - pl, Wp = W + (pl > pr ? pl : pr);
  const int64_t NV = (OH - 1) * Wp + OW, PS = (Hp + 1) * Wp * 2; /* virtual pixels; int16 per plane */
  const uint8_t *fl = split ? NULL : (const uint8_t *)(wp + M * K); /* ROWS_C2's int32 trailer */
  int16_t *planes = (int16_t *)scratch;
  int32_t *koff = (int32_t *)(scratch + qllc_round_up(cg * (Hp + 1) * Wp * 2 + 256, 64));
  for (int64_t q = 0, k = 0; q < cg / 2; q++)
    for (int64_t kh = 0; kh < KH; kh++)
      for (int64_t kw = 0; kw < KW; kw++) koff[k++] = (int32_t)(q * PS + (kh * dh * Wp + kw * dw) * 2);
  int64_t acc[CV_RMAX * CV_AS] __attribute__((aligned(64)));
  const __m512i zy = _mm512_set1_epi64(z_y), lo = _mm512_set1_epi64(act_lo), hi = _mm512_set1_epi64(act_hi);
  const __m512i lo32 = _mm512_set1_epi32(act_lo), hi32 = _mm512_set1_epi32(act_hi);
  for (int64_t b = 0; b < N; b++)
    for (int64_t g = 0; g < group; g++) {
      c2_convert(planes, x + (b * C + g * cg) * H * W, cg / 2, H, W, Hp, Wp, pt, pl, (int16_t)z_x);
      for (int64_t s0 = 0; s0 < NV; s0 += CV_NVM * 16) { /* virtual pixels s0 .. s0 + ns */
        const int64_t ns = NV - s0 < CV_NVM * 16 ? NV - s0 : CV_NVM * 16, nv = (ns + 15) / 16;
        __mmask8 mk[CV_NVM * 2];
        int64_t oo[CV_NVM * 2], cnt[CV_NVM * 2];
        for (int j = 0; j < nv * 2; j++) { /* the lanes of virtual pixels v .. v+7 that are output pixels */
          const int64_t v = s0 + 8 * j, row = v / Wp, col = v % Wp;
          uint64_t bits = 0;
          for (int64_t at = -col; at < 8; at += Wp) { /* lane of the start of each row in the group */
            const int64_t a = at < 0 ? 0 : at, e = at + OW > 8 ? 8 : at + OW;
            if (e > a) bits |= (((uint64_t)1 << e) - 1) & ~(((uint64_t)1 << a) - 1);
          }
          if (NV - v < 8) bits &= ((uint64_t)1 << (NV - v > 0 ? NV - v : 0)) - 1;
          mk[j] = (__mmask8)bits;
          cnt[j] = __builtin_popcount((unsigned)bits);
          oo[j] = col < OW ? row * OW + col : (row + 1) * OW; /* its first valid lane's output pixel */
        }
        __mmask16 k16[CV_NVM], s16[CV_NVM]; /* the same for 16 lanes: which are kept, the store's mask */
        int64_t o16[CV_NVM];
        for (int j = 0; j < nv; j++) {
          k16[j] = (__mmask16)(mk[2 * j] | mk[2 * j + 1] << 8);
          s16[j] = (__mmask16)((1u << (cnt[2 * j] + cnt[2 * j + 1])) - 1), o16[j] = oo[2 * j];
        }
        for (int64_t oc0 = g * mg, rr; oc0 < (g + 1) * mg; oc0 += rr) {
          rr = conv_block((g + 1) * mg - oc0, split);
          const qx_c2ep ep = {y + (b * M + oc0) * NP, NP, k16, s16, o16, m + oc0, n + oc0, z_y, lo32, hi32};
          conv_channels(acc, planes + s0 * 2, koff, wp, bias, fl, n, &ep, M, oc0, rr, K, P, nv, split);
          for (int64_t r = 0; r < rr; r++) { /* the epilogue of the others: 8 pixels at a time in int64 */
            if (conv_i32(fl, n, z_y, oc0 + r)) continue; /* done in its tile */
            const __m512i mv = _mm512_set1_epi64(m[oc0 + r]), nv8 = _mm512_set1_epi64(n[oc0 + r]);
            int16_t *yr = y + (b * M + oc0 + r) * NP;
            for (int j = 0; j < nv * 2; j++) { /* output pixels kept (vpcompressq) */
              if (!mk[j]) continue;
              const __m512i o = qx_req8(_mm512_load_si512((const void *)(acc + r * CV_AS + 8 * j)), mv, nv8, zy, lo, hi);
              _mm_mask_storeu_epi16((void *)(yr + oo[j]), (__mmask8)((1u << cnt[j]) - 1),
                                    _mm512_cvtepi64_epi16(_mm512_maskz_compress_epi64(mk[j], o)));
            }
          }
        }
      }
    }
}

/* ---- the kernels ------------------------------------------------------------------------------------- */

/* The parameters of both 16-bit conv entry points (variants.def), for the bodies below. */
#define QX_CONV16_PARAMS                                                                                          \
  int16_t *y, const int16_t *x, const int16_t *wp, const int64_t *bias, const int32_t *m, const int32_t *n,       \
      int64_t N, int64_t C, int64_t H, int64_t W, int64_t M, int64_t OH, int64_t OW, int64_t KH, int64_t KW,       \
      int64_t stride_h, int64_t stride_w, int64_t pad_top, int64_t pad_left, int64_t dil_h, int64_t dil_w,        \
      int64_t group, int32_t z_x, int32_t z_y, int32_t act_lo, int32_t act_hi, uint8_t *scratch
#define QX_KERNELS(tw, SPLIT)                                                                                   \
  QX_KERNEL void qllc_k_fc_i16_##tw##_i16__avx512vnni(                                                          \
      int16_t *y, const int16_t *x, const int16_t *wp, const int64_t *bias, const int32_t *m, const int32_t *n,  \
      int64_t M, int64_t N, int64_t K, int32_t z_x, int32_t z_y, int32_t act_lo, int32_t act_hi,                 \
      uint8_t *scratch) {                                                                                       \
    (void)z_x; /* folded into the bias */                                                                       \
    fc_impl(y, x, wp, bias, m, n, M, N, K, z_y, act_lo, act_hi, scratch, SPLIT);                                \
  }                                                                                                             \
  QX_KERNEL void qllc_k_conv2d_i16_##tw##_i16__avx512vnni(QX_CONV16_PARAMS) {                                 \
    conv_impl(y, x, wp, bias, m, n, N, C, H, W, M, OH, OW, KH, KW, stride_h, stride_w, pad_top, pad_left, dil_h,  \
              dil_w, group, z_x, z_y, act_lo, act_hi, scratch, SPLIT);                                          \
  }                                                                                                             \
  QX_KERNEL void qllc_k_conv2dc2_i16_##tw##_i16__avx512vnni(QX_CONV16_PARAMS) {                               \
    (void)stride_h, (void)stride_w; /* 1 (qllc_c4_fits) */                                                      \
    c2_impl(y, x, wp, bias, m, n, N, C, H, W, M, OH, OW, KH, KW, pad_top, pad_left, dil_h, dil_w, group, z_x,    \
            z_y, act_lo, act_hi, scratch, SPLIT);                                                               \
  }
QX_KERNELS(i8, 0)
QX_KERNELS(i16, 1)
