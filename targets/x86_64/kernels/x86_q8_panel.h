/* targets/x86_64/kernels/x86_q8_panel.h: the x86_64 variants of the fused 8-bit Conv as an implicit
 * GEMM over im2col panels (variants.def: qllc_k_conv2d_*__avx512vnni, __avxvnni, __avx2),
 * bit-identical to the scalar qllc_k_conv2d_* of q_layers.c (a part of x86_q8.c, which describes the
 * family). Included twice: by x86_q8.c for the out-of-line packers, then by x86_q8_isa.h once per ISA
 * (QX_TEMPLATE defined) for the tiles and the layer body; x86_q8_isa.h defines the exported kernels.
 *
 * Conv (weights QLLC_LAYOUT_ROWS_K4): implicit GEMM per image and group. A panel of up to
 * QLLC_CONV_PB output pixels is packed as [Kp4/4][64 pixels][4] u8 (the taps in the weights' order c,
 * kh, kw; padding reads z_x; taps past K read 0 against zero weights), then a tile of CV_R output
 * channels x CV_NJ vectors of VL pixels broadcasts 4 weight bytes of a channel's row against it and
 * writes the NCHW output rows. Packing, four taps at a time, then a 4 x 64 byte transpose:
 *  - stride 1 (and 2 with AVX-512): the panel is 64 consecutive output pixels (flattened oh * OW + ow,
 *    any number of output-row segments; a pointwise conv is one long row). AVX-512 builds each tap row
 *    in a register with one masked byte load per segment (stride 2: two loads of the even bytes,
 *    vpackuswb, vpermq); AVX2 merges full 32-byte loads under byte masks (loads that would leave the
 *    input buffer go byte by byte). AVX-512, stride 2 with a kernel 3 to 10 wide (the 7x7/2 stem):
 *    no tap rows; each k4 group's bytes are picked straight from 16-byte windows of one or two input
 *    rows by vpshufb (z_pack_s2w);
 *  - other strides: whole output rows (or a chunk of one) per panel, gathered byte by byte.
 * The packers and the tile driver are separate (not inlined) functions: a vector constant of the
 * packing must not stay live across the tiles' accumulator loops. The packers' pieces are in
 * x86_q8_pack.h. */
#ifndef QX_TEMPLATE
#include "x86_q8_epilogue.h"
#include "x86_q8_pack.h"

/* ---- AVX-512 packers ----------------------------------------------------------------------------------- */
ZP void z_pack_s1(uint8_t *panel, const uint8_t *xg, int64_t cg, int64_t H, int64_t W, int64_t OW, int64_t KH,
                  int64_t KW, int64_t sh, int64_t pt, int64_t pl, int64_t dh, int64_t dw, int64_t p0, int64_t np,
                  uint8_t zx, uint8_t flip, uintptr_t xlo, uintptr_t xhi) {
  (void)xlo, (void)xhi; /* masked loads touch only the bytes they keep */
  qx_seg seg[QX_PB];
  const int64_t nseg = qx_segments(seg, p0, np, OW, sh, pt), T = KH * KW, HW = H * W;
  const int64_t cp = T % 4 == 0 ? 1 : T % 2 == 0 ? 2 : 4, P = cp * T; /* lcm(T, 4) */
  const __m512i zv = _mm512_set1_epi8((char)zx);
  if (P * nseg <= QX_TT) {
    qx_tl tt[QX_TT];
    int64_t i = 0;
    for (int64_t kh = 0; kh < KH; kh++)
      for (int64_t kw = 0; kw < KW; kw++)
        for (int64_t s = 0; s < nseg; s++) tt[i++] = qx_tap_s1(&seg[s], kh, kw, H, W, pl, dh, dw);
    for (int64_t c = 1; c < cp; c++) /* the next channels of the period: the same entries, c * H * W on */
      for (int64_t j = 0; j < T * nseg; j++, i++) tt[i].off = tt[j].off + c * HW, tt[i].mask = tt[j].mask;
    const int64_t KT = cg * T, cpHW = cp * HW;
#define QX_TAPS(NS) z_taps_s1(NS, 1, panel, xg, KT, cpHW, P, nseg, tt, zv, flip)
    switch (nseg) {
    case 1: QX_TAPS(1); break;
    case 2: QX_TAPS(2); break;
    case 3: QX_TAPS(3); break;
    case 4: QX_TAPS(4); break;
    default: QX_TAPS(0);
    }
#undef QX_TAPS
    return;
  }
  /* too many entries to tabulate: each tap's from the segments (tall, narrow images, wide kernels) */
  const __m512i pv = _mm512_set1_epi8((char)flip);
  __m512i r[4] = {pv, pv, pv, pv};
  int t = 0;
  int64_t k4 = 0;
  for (int64_t c = 0; c < cg; c++)
    for (int64_t kh = 0; kh < KH; kh++)
      for (int64_t kw = 0; kw < KW; kw++) {
        __m512i v = zv;
        for (int64_t s = 0; s < nseg; s++) {
          const qx_tl e = qx_tap_s1(&seg[s], kh, kw, H, W, pl, dh, dw);
          v = _mm512_mask_loadu_epi8(v, e.mask, xg + c * HW + e.off);
        }
        r[t++] = v;
        if (t == 4) qx_tr4_512(panel + k4 * (QX_PB * 4), r[0], r[1], r[2], r[3], flip), k4++, t = 0;
      }
  if (t) {
    for (; t < 4; t++) r[t] = pv;
    qx_tr4_512(panel + k4 * (QX_PB * 4), r[0], r[1], r[2], r[3], flip);
  }
}

ZP void z_pack_s2w(uint8_t *panel, const uint8_t *xg, int64_t cg, int64_t H, int64_t W, int64_t OW, int64_t KH,
                   int64_t KW, int64_t sh, int64_t pt, int64_t pl, int64_t dh, int64_t dw, int64_t p0, int64_t np,
                   uint8_t zx, uint8_t flip) {
  (void)np; /* all four vectors are written: the lanes past np continue the last row (never stored) */
  qx_s2w ix;
  uint8_t base[16];
  for (int b = 0; b < 16; b++) base[b] = (uint8_t)(2 * (b >> 2) + (b & 3) * dw);
  const __m512i bv = _mm512_broadcast_i32x4(_mm_loadu_si128((const __m128i *)base));
  static const uint64_t kbm[4] = {0xeeeeeeeeeeeeeeeeull, 0xccccccccccccccccull, 0x8888888888888888ull, 0};
  for (int64_t kw = 0; kw < KW; kw++) {
    const int64_t m = KW - kw < 4 ? KW - kw : 4;
    ix.ia[kw] = _mm512_add_epi8(bv, _mm512_set1_epi8((char)(kw * dw)));
    ix.ib[kw] = _mm512_sub_epi8(bv, _mm512_set1_epi8((char)(m * dw)));
    ix.kb[kw] = kbm[m - 1];
  }
  const __m512i zv = _mm512_set1_epi8((char)zx), fv = _mm512_set1_epi8((char)flip);
  const int64_t ng = (cg * KH * KW + 3) / 4;
  int64_t ih0[4], col0[4], n1[4], split = 0;
  for (int64_t j = 0; j < QX_PB / 16; j++) {
    const int64_t p = p0 + 16 * j, oh = p / OW, a = p - oh * OW;
    ih0[j] = oh * sh - pt, col0[j] = 2 * a - pl, n1[j] = OW - a, split |= n1[j] < 16;
  }
  if (!split) { /* every vector inside one output row: the four at once */
    z_vecs_s2w(4, panel, xg, &ix, ng, cg, H, W, KH, KW, dh, ih0, col0, ~(__mmask64)0, zv, fv);
    return;
  }
  for (int64_t j = 0; j < QX_PB / 16; j++) {
    uint8_t *d = panel + 64 * j;
    z_vecs_s2w(1, d, xg, &ix, ng, cg, H, W, KH, KW, dh, &ih0[j], &col0[j], ~(__mmask64)0, zv, fv);
    if (n1[j] < 16) { /* lanes n1 .. 15: the next output row from its column 0 */
      const int64_t ih1 = ih0[j] + sh, c1 = -2 * n1[j] - pl;
      z_vecs_s2w(1, d, xg, &ix, ng, cg, H, W, KH, KW, dh, &ih1, &c1, ~qx_bits(4 * n1[j]), zv, fv);
    }
  }
}

ZP void z_pack_s2(uint8_t *panel, const uint8_t *xg, int64_t cg, int64_t H, int64_t W, int64_t OW, int64_t KH,
                  int64_t KW, int64_t sh, int64_t pt, int64_t pl, int64_t dh, int64_t dw, int64_t p0, int64_t np,
                  uint8_t zx, uint8_t flip, uintptr_t xlo, uintptr_t xhi) {
  (void)xlo, (void)xhi; /* masked loads touch only the bytes they keep */
  if (qx_s2w_fits(KH, KW, dw, OW)) {
    z_pack_s2w(panel, xg, cg, H, W, OW, KH, KW, sh, pt, pl, dh, dw, p0, np, zx, flip);
    return;
  }
  qx_seg seg[QX_PB];
  const int64_t nseg = qx_segments(seg, p0, np, OW, sh, pt), T = KH * KW, HW = H * W;
  const __m512i zv = _mm512_set1_epi8((char)zx);
  if (T * nseg <= QX_TT2 && KW * nseg <= QX_HM2) {
    qx_tl2 tt[QX_TT2];
    qx_m2 hm[QX_HM2]; /* per (kw, segment): the lanes inside the row, the same for every kh */
    for (int64_t kw = 0; kw < KW; kw++)
      for (int64_t s = 0; s < nseg; s++) hm[kw * nseg + s] = qx_mask_s2(kw * dw - pl, W, OW, &seg[s]);
    for (int64_t kh = 0, i = 0; kh < KH; kh++)
      for (int64_t kw = 0; kw < KW; kw++)
        for (int64_t s = 0; s < nseg; s++) tt[i++] = qx_tap_s2(&seg[s], kh, kw, H, W, pl, dh, dw, &hm[kw * nseg + s]);
    if (nseg == 1) z_taps_s2(1, panel, xg, cg, HW, T, nseg, tt, zv, flip);
    else if (nseg == 2) z_taps_s2(2, panel, xg, cg, HW, T, nseg, tt, zv, flip);
    else z_taps_s2(0, panel, xg, cg, HW, T, nseg, tt, zv, flip);
    return;
  }
  const __m512i order = _mm512_setr_epi64(0, 2, 4, 6, 1, 3, 5, 7), pv = _mm512_set1_epi8((char)flip);
  __m512i r[4] = {pv, pv, pv, pv};
  int t = 0;
  int64_t k4 = 0;
  for (int64_t c = 0; c < cg; c++)
    for (int64_t kh = 0; kh < KH; kh++)
      for (int64_t kw = 0; kw < KW; kw++) {
        __m512i v = zv;
        for (int64_t s = 0; s < nseg; s++) {
          const qx_m2 hm = qx_mask_s2(kw * dw - pl, W, OW, &seg[s]);
          const qx_tl2 e = qx_tap_s2(&seg[s], kh, kw, H, W, pl, dh, dw, &hm);
          v = z_row_s2(1, 1, &e, xg + c * HW, v, order);
        }
        r[t++] = v;
        if (t == 4) qx_tr4_512(panel + k4 * (QX_PB * 4), r[0], r[1], r[2], r[3], flip), k4++, t = 0;
      }
  if (t) {
    for (; t < 4; t++) r[t] = pv;
    qx_tr4_512(panel + k4 * (QX_PB * 4), r[0], r[1], r[2], r[3], flip);
  }
}

/* The last few pixels of a panel (t = np % 16 of them, np - t + 16 t <= 64) as dot products along K
   instead of a mostly empty pixel vector: their columns are first compacted inside the panel, the
   16 k4 groups q * 16 .. q * 16 + 15 of tail pixel j into the 64 bytes at row q, byte 4 * p + 64 j
   (p = np - t: past the bytes the tiles read; a chunk's rows are read before its row is written, and
   no later chunk reads that row), then each channel's weight row is multiplied by them 64 bytes at a
   time, reduced and requantized as the scalar kernel does. */
ZI void z_tail_rows(const int T, uint8_t *y, int64_t ldy, const uint8_t *cols, const int8_t *w, int64_t Kp4,
                    int64_t nq, int64_t kq, const int32_t *bias, const int32_t *m, const int32_t *n, int64_t rows,
                    int32_t z_y, int32_t act_lo, int32_t act_hi) {
  for (int64_t o = 0; o < rows; o += 4) {
    const int8_t *wr[4];
    QX_UNROLL for (int r = 0; r < 4; r++) wr[r] = w + (o + r < rows ? o + r : o) * Kp4;
    __m512i acc[4][4];
    QX_UNROLL for (int r = 0; r < 4; r++) QX_UNROLL for (int j = 0; j < T; j++) acc[r][j] = _mm512_setzero_si512();
    int64_t q = 0;
    for (; q < nq; q++) { /* whole chunks of 64 bytes */
      __m512i c[4];
      QX_UNROLL for (int j = 0; j < T; j++) c[j] = _mm512_loadu_si512(cols + q * (QX_PB * 4) + 64 * j);
      QX_UNROLL for (int r = 0; r < 4; r++) {
        const __m512i wv = _mm512_loadu_si512(wr[r] + q * 64);
        QX_UNROLL for (int j = 0; j < T; j++) acc[r][j] = _mm512_dpbusd_epi32(acc[r][j], c[j], wv);
      }
    }
    if (kq) { /* the last kq bytes of the rows */
      const __mmask64 km = qx_bits(kq);
      __m512i c[4];
      QX_UNROLL for (int j = 0; j < T; j++) c[j] = _mm512_maskz_loadu_epi8(km, cols + q * (QX_PB * 4) + 64 * j);
      QX_UNROLL for (int r = 0; r < 4; r++) {
        const __m512i wv = _mm512_maskz_loadu_epi8(km, wr[r] + q * 64);
        QX_UNROLL for (int j = 0; j < T; j++) acc[r][j] = _mm512_dpbusd_epi32(acc[r][j], c[j], wv);
      }
    }
    QX_UNROLL for (int r = 0; r < 4; r++) {
      if (o + r >= rows) break;
      QX_UNROLL for (int j = 0; j < T; j++) {
        const int32_t a = (int32_t)((uint32_t)bias[o + r] + (uint32_t)_mm512_reduce_add_epi32(acc[r][j]));
        y[(o + r) * ldy + j] = (uint8_t)qk_out(qk_req32(a, m[o + r], n[o + r]), z_y, act_lo, act_hi);
      }
    }
  }
}
ZP void z_tail_compact(uint8_t *panel, int64_t nk4, int64_t p, int64_t t) {
  const __m512i idx = _mm512_setr_epi32(0, 64, 128, 192, 256, 320, 384, 448, 512, 576, 640, 704, 768, 832, 896, 960);
  for (int64_t q = 0; q * 16 < nk4; q++) {
    const __mmask16 km = (__mmask16)qx_bits(nk4 - q * 16);
    __m512i c[4];
    for (int64_t j = 0; j < t; j++)
      c[j] = _mm512_mask_i32gather_epi32(_mm512_setzero_si512(), km, idx, panel + q * 16 * (QX_PB * 4) + 4 * (p + j), 4);
    for (int64_t j = 0; j < t; j++) _mm512_storeu_si512(panel + q * (QX_PB * 4) + 4 * p + 64 * j, c[j]);
  }
}
/* The t tail pixels of rows channels (weights w, Kp4 bytes apart), cols the compacted columns, y the
   first tail pixel of the first channel (ldy bytes apart). Called after the tiles of the same
   channels, while their weights are in the cache. */
ZP void z_tail_run(uint8_t *y, int64_t ldy, const uint8_t *cols, const int8_t *w, int64_t Kp4, const int32_t *bias,
                   const int32_t *m, const int32_t *n, int64_t rows, int64_t t, int32_t z_y, int32_t act_lo,
                   int32_t act_hi) {
  const int64_t nq = Kp4 / 64, kq = Kp4 % 64;
  switch (t) {
  case 1: z_tail_rows(1, y, ldy, cols, w, Kp4, nq, kq, bias, m, n, rows, z_y, act_lo, act_hi); break;
  case 2: z_tail_rows(2, y, ldy, cols, w, Kp4, nq, kq, bias, m, n, rows, z_y, act_lo, act_hi); break;
  case 3: z_tail_rows(3, y, ldy, cols, w, Kp4, nq, kq, bias, m, n, rows, z_y, act_lo, act_hi); break;
  default: z_tail_rows(4, y, ldy, cols, w, Kp4, nq, kq, bias, m, n, rows, z_y, act_lo, act_hi); break;
  }
}

/* ---- AVX2 packer -------------------------------------------------------------------------------------- */
/* Stride 1: tap rows of two ymm halves, merged from 32-byte loads (y_merge, x86_q8_pack.h). */
YP void y_pack_s1(uint8_t *panel, const uint8_t *xg, int64_t cg, int64_t H, int64_t W, int64_t OW, int64_t KH,
                  int64_t KW, int64_t sh, int64_t pt, int64_t pl, int64_t dh, int64_t dw, int64_t p0, int64_t np,
                  uint8_t zx, uint8_t flip, uintptr_t xlo, uintptr_t xhi) {
  qx_seg seg[QX_PB];
  uintptr_t rp[QX_PB];
  uint64_t vm[QX_PB];
  uint64_t mt[QX_MT];
  const int64_t nseg = qx_segments(seg, p0, np, OW, sh, pt);
  const int tab = nseg * KW <= QX_MT;
  if (tab)
    for (int64_t s = 0; s < nseg; s++)
      for (int64_t kw = 0; kw < KW; kw++) mt[s * KW + kw] = qx_mask_s1(kw * dw - pl, W, seg[s].a, seg[s].len) << seg[s].pos;
  const __m256i zv = _mm256_set1_epi8((char)zx);
  __m256i a0 = zv, a1 = zv, b0 = zv, b1 = zv, c0 = zv, c1 = zv;
  int t = 0;
  int64_t k4 = 0;
  for (int64_t c = 0; c < cg; c++)
    for (int64_t kh = 0; kh < KH; kh++) {
      for (int64_t s = 0; s < nseg; s++) {
        const int64_t ih = seg[s].ih0 + kh * dh;
        const int in = ih >= 0 && ih < H;
        rp[s] = in ? (uintptr_t)(xg + (c * H + ih) * W) + (uintptr_t)(int64_t)seg[s].delta : (uintptr_t)xg;
        vm[s] = in ? ~(uint64_t)0 : 0;
      }
      for (int64_t kw = 0; kw < KW; kw++) {
        const int64_t off = kw * dw - pl;
        __m256i v0 = zv, v1 = zv; /* lanes 0..31, 32..63 */
        for (int64_t s = 0; s < nseg; s++) {
          const uint64_t mk = (tab ? mt[s * KW + kw] : qx_mask_s1(off, W, seg[s].a, seg[s].len) << seg[s].pos) & vm[s];
          const uintptr_t src = rp[s] + (uintptr_t)off;
          if ((uint32_t)mk) v0 = y_merge(v0, src, (uint32_t)mk, xlo, xhi);
          if (mk >> 32) v1 = y_merge(v1, src + 32, (uint32_t)(mk >> 32), xlo, xhi);
        }
        switch (t) {
        case 0: a0 = v0, a1 = v1, t = 1; break;
        case 1: b0 = v0, b1 = v1, t = 2; break;
        case 2: c0 = v0, c1 = v1, t = 3; break;
        default:
          y_tr4h(panel + k4 * (QX_PB * 4), a0, b0, c0, v0, flip);
          y_tr4h(panel + k4 * (QX_PB * 4) + 128, a1, b1, c1, v1, flip);
          k4++, t = 0;
        }
      }
    }
  if (t) { /* the taps past K read 0 (after the flip) against zero weights */
    const __m256i pv = _mm256_set1_epi8((char)flip);
    if (t < 2) b0 = b1 = pv;
    if (t < 3) c0 = c1 = pv;
    y_tr4h(panel + k4 * (QX_PB * 4), a0, b0, c0, pv, flip);
    y_tr4h(panel + k4 * (QX_PB * 4) + 128, a1, b1, c1, pv, flip);
  }
}

#else /* QX_TEMPLATE: one ISA's Conv -------------------------------------------------------------------- */

#ifdef VREQH
/* One channel's nj pixel vectors requantized by the int64 path and stored (npx pixels). */
static __attribute__((noinline)) QT void QN(qx_req_row)(uint8_t *y, const V *a, int nj, int32_t m, int32_t n,
                                                       int32_t z_y, int32_t act_lo, int32_t act_hi, int64_t npx) {
  const V zy = VSET64(z_y), lo = VSET64(act_lo), hi = VSET64(act_hi);
  VQ q;
  VQPREP(&q, VSET1(m), VSET1(n));
  for (int j = 0; j < nj; j++) {
    const int64_t c = npx - j * VL;
    if (c > 0) VSTORE8(y + j * VL, VREQ(a[j], &q, zy, lo, hi), c > VL ? VL : c);
  }
}
#endif

/* Conv tile: R output channels (weight rows w, ldw bytes apart) x NJ (<= CV_NJ) vectors of VL pixels
   of the panel (R <= CV_R when NJ = CV_NJ, else <= CV_RMAX); writes the first npx pixels of each
   channel's output (ldy bytes apart). */
QI void QN(qx_cv_tile)(const int R, const int NJ, uint8_t *y, int64_t ldy, const uint8_t *panel, const int8_t *w,
                       int64_t ldw, int64_t nk4, const int32_t *bias, const int32_t *m, const int32_t *n, int32_t z_y,
                       int32_t act_lo, int32_t act_hi, int64_t npx) {
  V acc[CV_RMAX][CV_NJ];
  QX_UNROLL for (int r = 0; r < R; r++) {
    const V b = VSET1(bias[r]);
    QX_UNROLL for (int j = 0; j < NJ; j++) acc[r][j] = b;
  }
  for (int64_t k4 = 0; k4 < nk4; k4++) {
    V p[CV_NJ];
    QX_UNROLL for (int j = 0; j < NJ; j++) p[j] = VLOAD(panel + k4 * (QX_PB * 4) + j * (VL * 4));
    QX_UNROLL for (int r = 0; r < R; r++) {
      const V b = VBCAST(w + r * ldw + k4 * 4);
      QX_UNROLL for (int j = 0; j < NJ; j++) acc[r][j] = VDP(acc[r][j], p[j], b);
    }
  }
#ifndef VREQH
  const V zy = VSET64(z_y), lo = VSET64(act_lo), hi = VSET64(act_hi);
#endif
  QX_UNROLL for (int r = 0; r < R; r++) {
#ifdef VREQH
    if (qllc_req32_fits(n[r], z_y)) { /* the usual shifts: 32-bit lanes (VREQH) */
      const V mv = VSET1(m[r]), rv = VSET1(qx_req32_r(n[r], z_y)), sh = VSET1(n[r] - 32);
      const V l32 = VSET1(act_lo), h32 = VSET1(act_hi);
#ifdef VSTORE8X4
      if (NJ == 4 && npx >= 4 * VL) { /* a whole row of the tile: one 64-byte store */
        V h[4];
        QX_UNROLL for (int j = 0; j < 4; j++) h[j] = VREQH(acc[r][j], mv, mv, rv, sh, l32, h32);
        VSTORE8X4(y + r * ldy, h, act_lo < 0);
        continue;
      }
#endif
      QX_UNROLL for (int j = 0; j < NJ; j++) {
        const int64_t c = npx - j * VL;
        if (c > 0) VSTORE8(y + r * ldy + j * VL, VREQH(acc[r][j], mv, mv, rv, sh, l32, h32), c > VL ? VL : c);
      }
      continue;
    }
    { /* other shifts: the int64 path, out of line (one body for every tile shape) */
      V a[CV_NJ];
      QX_UNROLL for (int j = 0; j < NJ; j++) a[j] = acc[r][j];
      QN(qx_req_row)(y + r * ldy, a, NJ, m[r], n[r], z_y, act_lo, act_hi, npx);
    }
#else
    VQ q;
    VQPREP(&q, VSET1(m[r]), VSET1(n[r]));
    QX_UNROLL for (int j = 0; j < NJ; j++) {
      const int64_t c = npx - j * VL;
      if (c > 0) VSTORE8(y + r * ldy + j * VL, VREQ(acc[r][j], &q, zy, lo, hi), c > VL ? VL : c);
    }
#endif
  }
}

#ifdef VCV_TAIL
#define QX_TAIL_HOOK(O, RR)                                                                                        \
  if (tl)                                                                                                          \
    VCV_TAIL(y + (b * M + (O)) * NP + p0 + np, NP, panel + 4 * np, wp + (O) * Kp4, Kp4, bias + (O), m + (O), n + (O), \
             (RR), tl, z_y, act_lo, act_hi)
#else
#define QX_TAIL_HOOK(O, RR) (void)tl
#endif
/* The channel tiles of a panel narrower than CV_NJ vectors (the last panel of an image): NJ vectors
   of pixels, RM channels a tile (as many accumulators as the full tile), the channels left over in
   tiles of 4 and 1 (fewer bodies to compile). */
QI void QN(qx_cv_narrow)(const int NJ, const int RM, uint8_t *y, const uint8_t *panel, const int8_t *wp,
                         const int32_t *bias, const int32_t *m, const int32_t *n, int64_t b, int64_t g, int64_t M,
                         int64_t mg, int64_t NP, int64_t Kp4, int64_t p0, int64_t np, int64_t tl, int32_t z_y,
                         int32_t act_lo, int32_t act_hi) {
  const int64_t nk4 = Kp4 / 4;
  for (int64_t oc = 0; oc < mg;) {
    const int64_t rem = mg - oc, o = g * mg + oc;
    const int r = rem >= RM ? RM : rem >= 4 ? 4 : 1;
    uint8_t *yo = y + (b * M + o) * NP + p0;
    const int8_t *wr = wp + o * Kp4;
#define QX_NR_CASE(RR) \
  case RR: QN(qx_cv_tile)(RR, NJ, yo, NP, panel, wr, Kp4, nk4, bias + o, m + o, n + o, z_y, act_lo, act_hi, np); break;
    if (r == RM) QN(qx_cv_tile)(RM, NJ, yo, NP, panel, wr, Kp4, nk4, bias + o, m + o, n + o, z_y, act_lo, act_hi, np);
    else switch (r) {
        QX_NR_CASE(4)
        default: QN(qx_cv_tile)(1, NJ, yo, NP, panel, wr, Kp4, nk4, bias + o, m + o, n + o, z_y, act_lo, act_hi, np);
      }
#undef QX_NR_CASE
    QX_TAIL_HOOK(o, r);
    oc += r;
  }
}

/* Any stride: a panel of nseg whole output rows from oh0 (or a chunk of len pixels of one row from
   ow0), the rows of four taps assembled in a buffer, then interleaved. */
static __attribute__((noinline)) QT void QN(qx_pack_rows)(uint8_t *panel, const uint8_t *xg, int64_t cg, int64_t H,
                                                        int64_t W, int64_t OW, int64_t KH, int64_t KW, int64_t sh,
                                                        int64_t sw, int64_t pt, int64_t pl, int64_t dh, int64_t dw,
                                                        int64_t oh0, int64_t ow0, int64_t nseg, int64_t len,
                                                        uint8_t zx, uint8_t flip) {
  uint8_t rows[4][QX_PB + QX_RSLACK] __attribute__((aligned(64)));
  __builtin_memset(rows, 0, sizeof rows); /* pixels past the panel's end are computed, never stored */
  const uint8_t *srow[QX_PB];
  int64_t lot[QX_KWMAX], hit[QX_KWMAX];
  if (KW <= QX_KWMAX)
    for (int64_t kw = 0; kw < KW; kw++) qx_lohi(kw * dw - pl, sw, W, OW, ow0, len, &lot[kw], &hit[kw]);
  /* taps in the weights' order (c, kh, kw), four at a time */
  int t = 0;
  int64_t k4 = 0;
  for (int64_t c = 0; c < cg; c++)
    for (int64_t kh = 0; kh < KH; kh++) {
      for (int64_t s = 0; s < nseg; s++) {
        const int64_t ih = (oh0 + s) * sh - pt + kh * dh;
        srow[s] = ih >= 0 && ih < H ? xg + (c * H + ih) * W : 0;
      }
      for (int64_t kw = 0; kw < KW; kw++) {
        const int64_t off = kw * dw - pl;
        int64_t l, h;
        if (KW <= QX_KWMAX) l = lot[kw], h = hit[kw];
        else qx_lohi(off, sw, W, OW, ow0, len, &l, &h);
        uint8_t *d = rows[t];
        for (int64_t s = 0; s < nseg; s++, d += len) {
          if (!srow[s]) VFILLS1(d, 0, 0, 0, len, zx);
          else if (sw == 1) VFILLS1(d, (uintptr_t)srow[s] + (uintptr_t)(ow0 + off), l, h, len, zx);
          else qx_fill_gen(d, (uintptr_t)srow[s] + (uintptr_t)(ow0 * sw + off), sw, l, h, len, zx);
        }
        if (++t == 4) {
          VTR4(panel + k4 * (QX_PB * 4), rows[0], QX_PB + QX_RSLACK, flip);
          k4++, t = 0;
        }
      }
    }
  if (t) { /* the taps past K read 0 (after the flip) against zero weights */
    for (; t < 4; t++) VFILLS1(rows[t], 0, 0, 0, QX_PB, flip);
    VTR4(panel + k4 * (QX_PB * 4), rows[0], QX_PB + QX_RSLACK, flip);
  }
}

/* The channel tiles of one group over the panel of pixels p0 .. p0+np-1 (output y of image b). */
static __attribute__((noinline)) QT void QN(qx_cv_tiles)(uint8_t *y, const uint8_t *panel, const int8_t *wp, const int32_t *bias, const int32_t *m,
                        const int32_t *n, int64_t b, int64_t g, int64_t M, int64_t mg, int64_t NP, int64_t Kp4,
                        int64_t p0, int64_t np, int32_t z_y, int32_t act_lo, int32_t act_hi) {
  const int64_t nk4 = Kp4 / 4;
  int64_t tl = 0; /* pixels past the last whole vector done as dot products along K (VCV_TAIL) */
#ifdef VCV_TAIL
  {
    const int64_t t = np % VL, p = np - t;
    if (t && p + 16 * t <= QX_PB) {
      VTAIL_COMPACT((uint8_t *)panel, nk4, p, t); /* rearranges the panel past the p pixels the tiles read */
      tl = t, np = p;
      if (!p) {
        const int64_t o = g * mg;
        VCV_TAIL(y + (b * M + o) * NP + p0, NP, panel, wp + o * Kp4, Kp4, bias + o, m + o, n + o, mg, t, z_y, act_lo,
                 act_hi);
        return;
      }
    }
  }
#endif
  if (np <= (CV_NJ - 1) * VL) { /* a narrow panel: fewer pixel vectors, more channels a tile */
#if CV_NJ > 3
    if (np > 2 * VL) {
      QN(qx_cv_narrow)(3, CV_R3, y, panel, wp, bias, m, n, b, g, M, mg, NP, Kp4, p0, np, tl, z_y, act_lo, act_hi);
      return;
    }
#endif
#if CV_NJ > 2
    if (np > VL) {
      QN(qx_cv_narrow)(2, CV_R2, y, panel, wp, bias, m, n, b, g, M, mg, NP, Kp4, p0, np, tl, z_y, act_lo, act_hi);
      return;
    }
#endif
    QN(qx_cv_narrow)(1, CV_R1, y, panel, wp, bias, m, n, b, g, M, mg, NP, Kp4, p0, np, tl, z_y, act_lo, act_hi);
    return;
  }
  for (int64_t oc = 0; oc < mg; oc += CV_R) {
    const int64_t rr = mg - oc < CV_R ? mg - oc : CV_R, o = g * mg + oc;
    const int8_t *wr = wp + o * Kp4;
    for (int64_t px = 0; px < np; px += CV_NJ * VL) {
      uint8_t *yo = y + (b * M + o) * NP + p0 + px;
      const uint8_t *pp = panel + px * 4;
#define QX_CV_CASE(RR) \
  case RR: QN(qx_cv_tile)(RR, CV_NJ, yo, NP, pp, wr, Kp4, nk4, bias + o, m + o, n + o, z_y, act_lo, act_hi, np - px); break;
      switch (rr) {
#if CV_R >= 6
        QX_CV_CASE(6)
#endif
#if CV_R >= 5
        QX_CV_CASE(5)
#endif
#if CV_R >= 4
        QX_CV_CASE(4)
#endif
        QX_CV_CASE(3)
        QX_CV_CASE(2)
        default: QN(qx_cv_tile)(1, CV_NJ, yo, NP, pp, wr, Kp4, nk4, bias + o, m + o, n + o, z_y, act_lo, act_hi, np - px);
      }
#undef QX_CV_CASE
    }
  }
}

QS void QN(qx_conv)(uint8_t *y, const uint8_t *x, const int xi8, const int8_t *wp, const int32_t *bias,
                    const int32_t *m, const int32_t *n, int64_t N, int64_t C, int64_t H, int64_t W, int64_t M,
                    int64_t OH, int64_t OW, int64_t KH, int64_t KW, int64_t sh, int64_t sw, int64_t pt, int64_t pl,
                    int64_t dh, int64_t dw, int64_t group, int32_t z_x, int32_t z_y, int32_t act_lo, int32_t act_hi,
                    uint8_t *scratch) {
  const int64_t cg = C / group, mg = M / group, K = cg * KH * KW, Kp4 = (K + 3) & ~(int64_t)3;
  const int64_t NP = OH * OW, HW = H * W;
  if (KH == 1 && KW == 1 && sh == 1 && sw == 1 && pt == 0 && pl == 0 && OH == H && OW == W)
    OW = W = NP, OH = H = 1; /* pointwise: every channel is one row of H * W pixels */
  const uint8_t flip = xi8 ? 0x80 : 0, zx = (uint8_t)z_x; /* raw bytes: the transpose flips */
  const uintptr_t xlo = (uintptr_t)x, xhi = (uintptr_t)(x + N * C * HW); /* the input buffer */
#ifdef VPACK_S2
  const int s12 = sw == 1 || sw == 2;
#else
  const int s12 = sw == 1;
#endif
  if (s12) { /* panels of 64 consecutive output pixels */
    for (int64_t b = 0; b < N; b++)
      for (int64_t g = 0; g < group; g++) {
        const uint8_t *xg = x + (b * C + g * cg) * HW;
        for (int64_t p0 = 0; p0 < NP; p0 += QX_PB) {
          const int64_t np = NP - p0 < QX_PB ? NP - p0 : QX_PB;
#ifdef VPACK_S2
          if (sw == 2) VPACK_S2(scratch, xg, cg, H, W, OW, KH, KW, sh, pt, pl, dh, dw, p0, np, zx, flip, xlo, xhi);
          else
#endif
          VPACK_S1(scratch, xg, cg, H, W, OW, KH, KW, sh, pt, pl, dh, dw, p0, np, zx, flip, xlo, xhi);
          QN(qx_cv_tiles)(y, scratch, wp, bias, m, n, b, g, M, mg, NP, Kp4, p0, np, z_y, act_lo, act_hi);
        }
      }
    return;
  }
  /* other strides: panels of whole output rows (or a chunk of one), rows assembled in a buffer */
  const int64_t rpp = OW <= QX_PB ? QX_PB / OW : 1; /* output rows per panel */
  for (int64_t b = 0; b < N; b++)
    for (int64_t g = 0; g < group; g++) {
      const uint8_t *xg = x + (b * C + g * cg) * HW;
      for (int64_t oh0 = 0; oh0 < OH; oh0 += rpp)
        for (int64_t ow0 = 0; ow0 < OW; ow0 += QX_PB) {
          const int64_t nseg = OW <= QX_PB ? (OH - oh0 < rpp ? OH - oh0 : rpp) : 1;
          const int64_t len = OW - ow0 < QX_PB ? OW - ow0 : QX_PB;
          QN(qx_pack_rows)(scratch, xg, cg, H, W, OW, KH, KW, sh, sw, pt, pl, dh, dw, oh0, ow0, nseg, len, zx, flip);
          QN(qx_cv_tiles)(y, scratch, wp, bias, m, n, b, g, M, mg, NP, Kp4, oh0 * OW + ow0, nseg * len, z_y, act_lo,
                          act_hi);
        }
    }
}
#undef QX_TAIL_HOOK
#endif /* QX_TEMPLATE */
