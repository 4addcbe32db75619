/* targets/x86_64/kernels/x86_q8.c: x86_64 variants of the fused 8-bit Conv and FC layers
 * (kernels_x86_q8.h), bit-identical to the scalar qllc_k_conv2d_* / qllc_k_fc_* of q_layers.c.
 *
 * All three ISAs compute u8 x s8 dot products of 4 bytes per 32-bit lane, added to the int32
 * accumulator modulo 2^32 (vpdpbusd is not saturating; the avx2 variant emulates it exactly with two
 * vpmaddwd of zero-/sign-extended 16-bit halves, never vpmaddubsw, which saturates). An int8 input is
 * shifted to u8 (x ^ 0x80) when it is packed into the scratch buffer; the bias the compiler packed
 * (qllc_pack_bias8) already holds the -128 * sum_k w correction. The sums wrap identically in any
 * order, so every variant gives the scalar kernel's accumulator exactly.
 *
 * FC (weights QLLC_LAYOUT_K4N16): up to QLLC_FC_MB input rows are copied to scratch (u8, K padded to a
 * multiple of 4 with zeros); a register tile of FC_R rows x FC_NJ vectors of VL output channels
 * broadcasts 4 input bytes of a row against the 64-byte weight line of 16 channels (ymm: one half).
 * One row (GEMV) keeps two accumulator sets, for even and odd k4, to hide the vpdpbusd latency; it is
 * bound by the weights' bandwidth.
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
 * packing must not stay live across the tiles' accumulator loops.
 *
 * Requantization in vectors, exactly REQUANT: the even and odd int32 lanes are multiplied by m into
 * int64 (vpmuldq), + (1 << n) >> 1, arithmetic shift by n (AVX-512 vpsravq; AVX2 emulates it with
 * xor of the sign), + z_y, clamp to [act_lo, act_hi] in int64, then the low byte of each lane.
 *
 * The three ISAs are one template: this file includes itself once per ISA (QX_TEMPLATE) with the
 * vector type, the primitives and the tile sizes defined as macros. The four element combinations of
 * an ISA share one body per layer. */
#ifndef QX_TEMPLATE
#include <immintrin.h>

#include "q_common.h"
#include "variants.h"
#include "x86_reqh.h"
#include "x86_tr4.h"

typedef int32_t qx_i32u __attribute__((may_alias, aligned(1)));
typedef uint64_t qx_u64u __attribute__((may_alias, aligned(1)));

#define QX_PB QLLC_CONV_PB /* panel pixels (64) */
#define QX_RSLACK 32      /* bytes past a row buffer's 64 that the AVX2 row fills may write */
#define QX_MT 192         /* (segment, kw) masks tabulated per panel (1.5 KiB) */
#define QX_KWMAX 32        /* kernel widths whose valid column ranges are tabulated per panel */
#define QX_UNROLL _Pragma("GCC unroll 16")

QLLC_INLINE uint64_t qx_bits(int64_t n) { return n <= 0 ? 0 : n >= 64 ? ~(uint64_t)0 : ((uint64_t)1 << n) - 1; }

/* Output columns j in [lo, hi) of a panel row of len pixels starting at ow0 read input column
   j * s + off + ow0 * s inside [0, W); the others are padding. */
QLLC_INLINE void qx_lohi(int64_t off, int64_t s, int64_t W, int64_t OW, int64_t ow0, int64_t len, int64_t *lo,
                         int64_t *hi) {
  int64_t l = qk_first_inside(off, s) - ow0, h = qk_end_inside(off, s, W, OW) - ow0;
  l = l < 0 ? 0 : l > len ? len : l;
  h = h < l ? l : h > len ? len : h;
  *lo = l, *hi = h;
}

/* A panel row of any stride: d[j] = src[j * s] for j in [lo, hi), zx elsewhere. */
QLLC_INLINE void qx_fill_gen(uint8_t *d, uintptr_t src, int64_t s, int64_t lo, int64_t hi, int64_t len, uint8_t zx) {
  int64_t j = 0;
  for (; j < lo; j++) d[j] = zx;
  for (; j < hi; j++) d[j] = *(const uint8_t *)(src + (uintptr_t)(j * s));
  for (; j < len; j++) d[j] = zx;
}

/* ---- AVX-512 (F, BW, VL, DQ, VNNI) primitives ------------------------------------------------------ */
#define QX_TZ "avx512f,avx512bw,avx512vl,avx512dq,avx512vnni"
#define ZI static inline __attribute__((always_inline, target(QX_TZ)))
/* the panel packers are called once per panel, never inlined: their vector constants would stay live
   across the tiles' loops and crowd out the accumulators */
#define ZP static __attribute__((noinline, target(QX_TZ)))
typedef struct qx_zq {
  __m512i me, mo, ne, no, re, ro; /* m, n and the rounding term of the even and odd lanes, as int64 */
} qx_zq;
ZI __m512i z_set1(int32_t v) { return _mm512_set1_epi32(v); }
ZI __m512i z_set64(int64_t v) { return _mm512_set1_epi64(v); }
ZI __m512i z_load(const void *p) { return _mm512_loadu_si512(p); }
ZI __m512i z_bcast(const void *p) { return _mm512_set1_epi32(*(const qx_i32u *)p); }
ZI __m512i z_dp(__m512i acc, __m512i u8, __m512i s8) { return _mm512_dpbusd_epi32(acc, u8, s8); }
ZI __m512i z_add(__m512i a, __m512i b) { return _mm512_add_epi32(a, b); }
ZI void z_qprep(qx_zq *q, __m512i m, __m512i n) {
  const __m512i lo32 = _mm512_set1_epi64(0xffffffff), one = _mm512_set1_epi64(1);
  q->me = m, q->mo = _mm512_srli_epi64(m, 32);
  q->ne = _mm512_and_si512(n, lo32), q->no = _mm512_srli_epi64(n, 32);
  q->re = _mm512_srli_epi64(_mm512_sllv_epi64(one, q->ne), 1);
  q->ro = _mm512_srli_epi64(_mm512_sllv_epi64(one, q->no), 1);
}
ZI __m512i z_req(__m512i acc, const qx_zq *q, __m512i zy, __m512i lo, __m512i hi) {
  __m512i pe = _mm512_mul_epi32(acc, q->me), po = _mm512_mul_epi32(_mm512_srli_epi64(acc, 32), q->mo);
  pe = _mm512_add_epi64(_mm512_srav_epi64(_mm512_add_epi64(pe, q->re), q->ne), zy);
  po = _mm512_add_epi64(_mm512_srav_epi64(_mm512_add_epi64(po, q->ro), q->no), zy);
  pe = _mm512_min_epi64(_mm512_max_epi64(pe, lo), hi);
  po = _mm512_min_epi64(_mm512_max_epi64(po, lo), hi);
  return _mm512_mask_blend_epi32(0xAAAA, pe, _mm512_slli_epi64(po, 32));
}
/* The same requantization for 33 <= n <= 62 from the high halves of the products alone, in 32-bit
   lanes (x86_reqh.h says when and why it is exact: qllc_req32_fits). */
ZI __m512i z_reqh(__m512i acc, __m512i m, __m512i mo, __m512i r, __m512i sh, __m512i lo, __m512i hi) {
  return qx_reqh_512(acc, m, mo, r, sh, lo, hi);
}
/* The low bytes of the first cnt lanes (values already inside the output type's range). */
ZI void z_store8(uint8_t *d, __m512i v, int64_t cnt) {
  __m128i b = _mm512_cvtepi32_epi8(v);
  if (cnt >= 16) _mm_storeu_si128((__m128i *)d, b);
  else _mm_mask_storeu_epi8(d, (__mmask16)qx_bits(cnt), b);
}
/* 4 x 16 int32 lanes as 64 bytes in order, each lane saturated to [-128, 127] when sgn, else to
   [0, 255] (so exact for values already inside that range): two saturating packs give per 128-bit
   lane l the 4 lanes 4l .. 4l+3 of v[0], v[1], v[2], v[3]; one vpermd puts them in order. */
ZI __m512i z_pack8x4(const __m512i *v, int sgn) {
  const __m512i a = _mm512_packs_epi32(v[0], v[1]), b = _mm512_packs_epi32(v[2], v[3]);
  const __m512i p = sgn ? _mm512_packs_epi16(a, b) : _mm512_packus_epi16(a, b);
  const __m512i ord = _mm512_setr_epi32(0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15);
  return _mm512_permutexvar_epi32(ord, p);
}
/* The low bytes of 4 x 16 lanes (values already inside the output type's range: [-128, 127] when
   sgn, else [0, 255]) as 64 consecutive bytes. */
ZI void z_store8x4(uint8_t *d, const __m512i *v, int sgn) { _mm512_storeu_si512(d, z_pack8x4(v, sgn)); }
/* d[0, n) = s ^ flip, d[n, np) = 0. */
ZI void z_copyflip(uint8_t *d, const uint8_t *s, int64_t n, int64_t np, uint8_t flip) {
  const __m512i f = _mm512_set1_epi8((char)flip);
  int64_t j = 0;
  for (; j + 64 <= n; j += 64) _mm512_storeu_si512(d + j, _mm512_xor_si512(_mm512_loadu_si512(s + j), f));
  for (; j < np; j += 64) {
    const __mmask64 lm = qx_bits(n - j);
    __m512i v = _mm512_maskz_mov_epi8(lm, _mm512_xor_si512(_mm512_maskz_loadu_epi8(lm, s + j), f));
    _mm512_mask_storeu_epi8(d + j, qx_bits(np - j), v);
  }
}
/* A stride-1 panel row: d[j] = src[j] for j in [lo, hi), zx elsewhere in [0, len). Masked loads touch
   only [lo, hi) (src may point before the row). */
ZI void z_fill_s1(uint8_t *d, uintptr_t src, int64_t lo, int64_t hi, int64_t len, uint8_t zx) {
  const __mmask64 in = qx_bits(hi) & ~qx_bits(lo);
  __m512i v = _mm512_mask_loadu_epi8(_mm512_set1_epi8((char)zx), in, (const void *)src);
  _mm512_mask_storeu_epi8(d, qx_bits(len), v);
}
ZI void z_tr4(uint8_t *dst, const uint8_t *rows, int64_t ld, uint8_t flip) {
  qx_tr4_512(dst, z_load(rows), z_load(rows + ld), z_load(rows + 2 * ld), z_load(rows + 3 * ld), flip);
}

/* Stride-1 panels: np <= 64 consecutive output pixels p0 .. (flattened oh * OW + ow), cut into
   segments (runs within one output row). Lane L of segment s reads input column L + delta + off of
   row ih0 + kh * dh (off = kw * dw - pad_left) when that column is inside the row. */
typedef struct qx_seg {
  int64_t ih0;      /* the input row of kh = 0 */
  uint64_t lenbits; /* len ones */
  int32_t delta, a, len, pos; /* a: first output column, pos: first lane, len: lanes */
} qx_seg;
QLLC_INLINE int64_t qx_segments(qx_seg *seg, int64_t p0, int64_t np, int64_t OW, int64_t sh, int64_t pt) {
  int64_t nseg = 0;
  for (int64_t p = p0; p < p0 + np; nseg++) {
    const int64_t oh = p / OW, a = p - oh * OW, len = OW - a < p0 + np - p ? OW - a : p0 + np - p;
    seg[nseg].ih0 = oh * sh - pt, seg[nseg].a = (int32_t)a, seg[nseg].len = (int32_t)len;
    seg[nseg].pos = (int32_t)(p - p0), seg[nseg].delta = (int32_t)(a - (p - p0)), seg[nseg].lenbits = qx_bits(len);
    p += len;
  }
  return nseg;
}
/* Lanes j in [0, len) of a stride-1 row segment starting at output column a whose input column
   a + j + off lies in [0, W): [lo, hi) and as a mask. */
QLLC_INLINE void qx_range_s1(int64_t off, int64_t W, int64_t a, int64_t len, int64_t *lo, int64_t *hi) {
  const int64_t l = -off - a, h = W - off - a < len ? W - off - a : len;
  *lo = l < 0 ? 0 : l, *hi = h < *lo ? *lo : h;
}
QLLC_INLINE uint64_t qx_mask_s1(int64_t off, int64_t W, int64_t a, int64_t len) {
  int64_t lo, hi;
  qx_range_s1(off, W, a, len, &lo, &hi);
  return qx_bits(hi) & ~qx_bits(lo);
}
/* AVX-512: the row of tap (c, kh, kw) is built by one masked byte load per segment straight into a
   zmm (lanes of padding keep z_x; the mask keeps the load inside the input row), and four rows are
   interleaved by qx_tr4_512. The loads of a tap depend on the channel only by c * H * W: per panel, each
   (kh, kw, segment) gets its offset from the channel's first byte and its lane mask (0 when the input
   row is padding) in a table, when KH * KW * nseg <= QX_TT, and the taps then run as a flat sequence. */
typedef struct qx_tl {
  int64_t off;   /* from the channel's first byte to the byte of lane 0 */
  uint64_t mask; /* the lanes read */
} qx_tl;
QLLC_INLINE qx_tl qx_tap_s1(const qx_seg *sg, int64_t kh, int64_t kw, int64_t H, int64_t W, int64_t pl, int64_t dh,
                            int64_t dw) {
  const int64_t ih = sg->ih0 + kh * dh, off = kw * dw - pl;
  qx_tl e = {0, 0};
  if (ih >= 0 && ih < H) e.off = ih * W + sg->delta + off, e.mask = qx_mask_s1(off, W, sg->a, sg->len) << sg->pos;
  return e;
}
#define QX_TT 384 /* (tap, segment) entries tabulated per panel (6 KiB) */
/* One tap row from NS (> 0: a constant; 0: nseg) segments' entries. */
ZI __m512i z_row_s1(const int NS, int64_t nseg, const qx_tl *e, const uint8_t *base, __m512i zv) {
  __m512i v = zv;
  const int64_t ns = NS ? NS : nseg;
  QX_UNROLL for (int64_t s = 0; s < ns; s++) v = _mm512_mask_loadu_epi8(v, e[s].mask, base + e[s].off);
  return v;
}
/* The taps of the panel from the table tt of one period of P = lcm(KH * KW, 4) taps (cp channels):
   four taps a k4 group, the table restarting cp channels further on after P taps. FL: xor the rows
   with flip (0 for u8 inputs; one body for both: a bit faster without, but not worth the code). */
ZI void z_taps_s1(const int NS, const int FL, uint8_t *panel, const uint8_t *xg, int64_t KT, int64_t cpHW,
                  int64_t P, int64_t nseg, const qx_tl *tt, __m512i zv, uint8_t flip) {
  const int64_t step = NS ? NS : nseg;
  const __m512i fv = _mm512_set1_epi8((char)flip);
  const uint8_t *base = xg;
  const qx_tl *e = tt, *const end = tt + P * step;
  int64_t k = 0;
  for (; k + 4 <= KT; k += 4) {
    __m512i r[4];
    QX_UNROLL for (int j = 0; j < 4; j++) {
      r[j] = z_row_s1(NS, nseg, e + j * step, base, zv);
      if (FL) r[j] = _mm512_xor_si512(r[j], fv);
    }
    qx_tr4_512(panel + k * (QX_PB), r[0], r[1], r[2], r[3], 0);
    e += 4 * step;
    if (e == end) e = tt, base += cpHW;
  }
  if (k < KT) { /* the taps past K read 0 (after the flip) against zero weights */
    const __m512i z = _mm512_setzero_si512();
    __m512i r[3] = {z, z, z};
    for (int j = 0; k + j < KT; j++) {
      r[j] = z_row_s1(NS, nseg, e + j * step, base, zv);
      if (FL) r[j] = _mm512_xor_si512(r[j], fv);
    }
    qx_tr4_512(panel + k * (QX_PB), r[0], r[1], r[2], z, 0);
  }
}
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

/* Stride 2: lane L of a segment reads byte 2 L + 2 delta + off of the row. Two zero-masked byte loads
   fetch the even bytes of 128 (e0, e1: the lane mask spread to even bits), vpackuswb packs them per
   128-bit lane and vpermq puts the qwords in order; the lanes then merge into the row. */
typedef struct qx_m2 {
  uint64_t lanes, e0, e1;
} qx_m2;
QLLC_INLINE uint64_t qx_spread32(uint64_t x) { /* bit i -> bit 2 i */
  x &= 0xffffffffu;
  x = (x | x << 16) & 0x0000ffff0000ffffull;
  x = (x | x << 8) & 0x00ff00ff00ff00ffull;
  x = (x | x << 4) & 0x0f0f0f0f0f0f0f0full;
  x = (x | x << 2) & 0x3333333333333333ull;
  return (x | x << 1) & 0x5555555555555555ull;
}
QLLC_INLINE qx_m2 qx_mask_s2(int64_t off, int64_t W, int64_t OW, const qx_seg *sg) {
  int64_t lo, hi;
  qx_lohi(off, 2, W, OW, sg->a, sg->len, &lo, &hi);
  qx_m2 m;
  m.lanes = (qx_bits(hi) & ~qx_bits(lo)) << sg->pos;
  m.e0 = qx_spread32(m.lanes), m.e1 = qx_spread32(m.lanes >> 32);
  return m;
}
typedef struct qx_tl2 { /* a (kh, kw, segment) entry of a stride-2 panel, as qx_tl */
  int64_t off;
  qx_m2 m;
} qx_tl2;
/* hm: the segment's masks for column kw (qx_mask_s2, the same for every kh) */
QLLC_INLINE qx_tl2 qx_tap_s2(const qx_seg *sg, int64_t kh, int64_t kw, int64_t H, int64_t W, int64_t pl, int64_t dh,
                             int64_t dw, const qx_m2 *hm) {
  const int64_t ih = sg->ih0 + kh * dh, off = kw * dw - pl;
  qx_tl2 e = {0, {0, 0, 0}};
  if (ih >= 0 && ih < H) e.off = ih * W + 2 * (int64_t)sg->delta + off, e.m = *hm;
  return e;
}
#define QX_TT2 128 /* stride-2 entries tabulated per panel (4 KiB) */
#define QX_HM2 48  /* and their (kw, segment) masks (1.1 KiB) */
ZI __m512i z_row_s2(const int NS, int64_t nseg, const qx_tl2 *e, const uint8_t *base, __m512i zv, __m512i order) {
  __m512i v = zv;
  const int64_t ns = NS ? NS : nseg;
  QX_UNROLL for (int64_t s = 0; s < ns; s++) {
    const uint8_t *b = base + e[s].off;
    const __m512i lo = _mm512_maskz_loadu_epi8(e[s].m.e0, b), hi = _mm512_maskz_loadu_epi8(e[s].m.e1, b + 64);
    v = _mm512_mask_mov_epi8(v, e[s].m.lanes, _mm512_permutexvar_epi64(order, _mm512_packus_epi16(lo, hi)));
  }
  return v;
}
ZI void z_taps_s2(const int NS, uint8_t *panel, const uint8_t *xg, int64_t cg, int64_t HW, int64_t T, int64_t nseg,
                  const qx_tl2 *tt, __m512i zv, uint8_t flip) {
  const __m512i order = _mm512_setr_epi64(0, 2, 4, 6, 1, 3, 5, 7);
  const int64_t KT = cg * T, step = NS ? NS : nseg;
  const uint8_t *base = xg;
  const qx_tl2 *e = tt, *const end = tt + T * step;
  int64_t k = 0;
  for (; k + 4 <= KT; k += 4) {
    __m512i r[4];
    QX_UNROLL for (int j = 0; j < 4; j++) {
      r[j] = z_row_s2(NS, nseg, e, base, zv, order);
      e += step;
      if (e == end) e = tt, base += HW;
    }
    qx_tr4_512(panel + k * (QX_PB), r[0], r[1], r[2], r[3], flip);
  }
  if (k < KT) { /* the taps past K read 0 (after the flip) against zero weights */
    const __m512i pv = _mm512_set1_epi8((char)flip);
    __m512i r[3] = {pv, pv, pv};
    for (int j = 0; k + j < KT; j++) {
      r[j] = z_row_s2(NS, nseg, e, base, zv, order);
      e += step;
      if (e == end) e = tt, base += HW;
    }
    qx_tr4_512(panel + k * (QX_PB), r[0], r[1], r[2], pv, flip);
  }
}
/* Stride 2 with a kernel at least 3 wide (the 7x7/2 stem): "windows". The 4 taps of a k4 group are
   consecutive in the weights' order (c, kh, kw); with KW >= 3 they lie in at most two input rows (c, kh)
   of the reduction: m = min(4, KW - kwA) taps of row A from column kwA, then the first 4 - m of the next
   row B. So for 4 consecutive output pixels of one output row the group's 16 panel bytes are picked
   from two 16-byte windows of those rows by one vpshufb and one masked vpshufb. One vector of 16 pixels
   (lanes 0..15 from output column a0) loads each reduction row once: a masked 64-byte load of the
   columns 2 a0 - pl + [0, 64) inside [0, W) (z_x elsewhere and for padded rows), xor flip, then vpermq
   puts bytes [8q, 8q + 16) in 128-bit lane q (pixels 4q .. 4q+3), where pixel p' of the lane and tap kw
   read byte 2 p' + kw dw. Shapes: 2 * 3 + (KW - 1) dw <= 15 (every byte of a lane's window inside its
   16 bytes) and OW >= 16 (a vector spans at most two output rows; the second one's lanes are then
   stored under a byte mask). The taps past K read row B = the row after the last: z_x (their weights
   are 0). No scratch beyond the panel: the windows come straight from the NCHW input. */
#define QX_S2W_KW 10 /* widest kernel the windows take (dilation 1) */
#define QX_S2W_KH 16 /* tallest (its rows' offsets are tabulated per panel) */
QLLC_INLINE int qx_s2w_fits(int64_t KH, int64_t KW, int64_t dw, int64_t OW) {
  return KH <= QX_S2W_KH && KW >= 3 && 6 + (KW - 1) * dw <= 15 && OW >= 16;
}
typedef struct qx_s2w {
  __m512i ia[QX_S2W_KW], ib[QX_S2W_KW]; /* per kwA: the vpshufb indices of rows A and B */
  uint64_t kb[QX_S2W_KW];               /* and the bytes from row B (taps i >= m of each pixel) */
} qx_s2w;
/* The group rows of NV vectors of the panel (dst: the first one's first byte at group 0), vector j from
   output row ih0[j] (its input row at kh = 0), columns from col0[j] = 2 a0 - pl; sm: the bytes stored
   (~0: all; NV = 1 only). Each reduction row's windows are loaded once for the NV vectors. */
ZI void z_vecs_s2w(const int NV, uint8_t *dst, const uint8_t *xg, const qx_s2w *ix, int64_t ng, int64_t cg,
                   int64_t H, int64_t W, int64_t KH, int64_t KW, int64_t dh, const int64_t *ih0, const int64_t *col0,
                   __mmask64 sm, __m512i zv, __m512i fv) {
  const __m512i ord = _mm512_setr_epi64(0, 1, 1, 2, 2, 3, 3, 4), zf = _mm512_xor_si512(zv, fv);
  const int64_t HW = H * W;
  /* per kh and vector: the window's offset from its channel's first byte and its mask (0: padded row) */
  int64_t off[QX_S2W_KH][4];
  __mmask64 msk[QX_S2W_KH][4];
  for (int64_t kh = 0; kh < KH; kh++)
    QX_UNROLL for (int j = 0; j < NV; j++) {
      const int64_t ih = ih0[j] + kh * dh;
      const int in = ih >= 0 && ih < H;
      off[kh][j] = (in ? ih * W : 0) + col0[j];
      msk[kh][j] = in ? qx_bits(W - col0[j]) & ~qx_bits(-col0[j]) : 0; /* the columns inside the row */
    }
  __m512i wa[4], wb[4];
#define QX_WIN(XC, KH_, J)                                                                                   \
  _mm512_permutexvar_epi64(                                                                                 \
      ord, _mm512_xor_si512(_mm512_mask_loadu_epi8(zv, msk[KH_][J], (const void *)((XC) + (uintptr_t)off[KH_][J])), fv))
  uintptr_t xc = (uintptr_t)xg; /* channel c */
  QX_UNROLL for (int j = 0; j < NV; j++) wa[j] = QX_WIN(xc, 0, j);
  int64_t g = 0, t0 = 0;
  for (int64_t c = 0; c < cg; c++, xc += (uintptr_t)HW)
    for (int64_t kh = 0; kh < KH; kh++, t0 += KW) {
      /* the next row of the reduction: (c, kh + 1), (c + 1, 0) or, past the last, z_x */
      if (kh + 1 < KH) QX_UNROLL for (int j = 0; j < NV; j++) wb[j] = QX_WIN(xc, kh + 1, j);
      else if (c + 1 < cg) QX_UNROLL for (int j = 0; j < NV; j++) wb[j] = QX_WIN(xc + (uintptr_t)HW, 0, j);
      else QX_UNROLL for (int j = 0; j < NV; j++) wb[j] = zf;
      for (; g < ng && 4 * g < t0 + KW; g++) {
        const int64_t kw = 4 * g - t0;
        const __m512i ia = ix->ia[kw], ib = ix->ib[kw];
        const __mmask64 kb = ix->kb[kw];
        __m512i v[4];
        QX_UNROLL for (int j = 0; j < NV; j++) v[j] = _mm512_shuffle_epi8(wa[j], ia);
        if (kb) QX_UNROLL for (int j = 0; j < NV; j++) v[j] = _mm512_mask_shuffle_epi8(v[j], kb, wb[j], ib);
        QX_UNROLL for (int j = 0; j < NV; j++) {
          if (NV > 1 || sm == ~(__mmask64)0) _mm512_storeu_si512(dst + g * (QX_PB * 4) + 64 * j, v[j]);
          else _mm512_mask_storeu_epi8(dst + g * (QX_PB * 4), sm, v[j]);
        }
      }
      QX_UNROLL for (int j = 0; j < NV; j++) wa[j] = wb[j];
    }
#undef QX_WIN
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

/* ---- AVX2 primitives (shared by avxvnni and avx2) ----------------------------------------------------- */
#define YI static inline __attribute__((always_inline, target("avx2")))
#define YP static __attribute__((noinline, target("avx2")))
typedef struct qx_yq {
  __m256i me, mo, ne, no, re, ro;
} qx_yq;
YI __m256i y_set1(int32_t v) { return _mm256_set1_epi32(v); }
YI __m256i y_set64(int64_t v) { return _mm256_set1_epi64x(v); }
YI __m256i y_load(const void *p) { return _mm256_loadu_si256((const __m256i *)p); }
YI __m256i y_bcast(const void *p) { return _mm256_set1_epi32(*(const qx_i32u *)p); }
YI __m256i y_add(__m256i a, __m256i b) { return _mm256_add_epi32(a, b); }
/* Exact vpdpbusd: acc + sum of the 4 products u8 * s8 of each 32-bit lane, modulo 2^32. The 16-bit
   halves are exact (0..255 and -128..127) and a vpmaddwd pair sum stays below 2^16 in magnitude. */
YI __m256i ye_dp(__m256i acc, __m256i u, __m256i s) {
  const __m256i m8 = _mm256_set1_epi16(0x00ff);
  const __m256i ue = _mm256_and_si256(u, m8), uo = _mm256_srli_epi16(u, 8);
  const __m256i se = _mm256_srai_epi16(_mm256_slli_epi16(s, 8), 8), so = _mm256_srai_epi16(s, 8);
  return _mm256_add_epi32(acc, _mm256_add_epi32(_mm256_madd_epi16(ue, se), _mm256_madd_epi16(uo, so)));
}
YI void y_qprep(qx_yq *q, __m256i m, __m256i n) {
  const __m256i lo32 = _mm256_set1_epi64x(0xffffffff), one = _mm256_set1_epi64x(1);
  q->me = m, q->mo = _mm256_srli_epi64(m, 32);
  q->ne = _mm256_and_si256(n, lo32), q->no = _mm256_srli_epi64(n, 32);
  q->re = _mm256_srli_epi64(_mm256_sllv_epi64(one, q->ne), 1);
  q->ro = _mm256_srli_epi64(_mm256_sllv_epi64(one, q->no), 1);
}
/* Arithmetic right shift of int64 lanes (AVX2 has only the logical one): ~(~v >> n) for v < 0. */
YI __m256i y_sra64(__m256i v, __m256i n) {
  const __m256i s = _mm256_cmpgt_epi64(_mm256_setzero_si256(), v);
  return _mm256_xor_si256(_mm256_srlv_epi64(_mm256_xor_si256(v, s), n), s);
}
YI __m256i y_clamp64(__m256i v, __m256i lo, __m256i hi) {
  v = _mm256_blendv_epi8(v, lo, _mm256_cmpgt_epi64(lo, v));
  return _mm256_blendv_epi8(v, hi, _mm256_cmpgt_epi64(v, hi));
}
YI __m256i y_req(__m256i acc, const qx_yq *q, __m256i zy, __m256i lo, __m256i hi) {
  __m256i pe = _mm256_mul_epi32(acc, q->me), po = _mm256_mul_epi32(_mm256_srli_epi64(acc, 32), q->mo);
  pe = y_clamp64(_mm256_add_epi64(y_sra64(_mm256_add_epi64(pe, q->re), q->ne), zy), lo, hi);
  po = y_clamp64(_mm256_add_epi64(y_sra64(_mm256_add_epi64(po, q->ro), q->no), zy), lo, hi);
  return _mm256_blend_epi32(pe, _mm256_slli_epi64(po, 32), 0xAA);
}
YI void y_store8(uint8_t *d, __m256i v, int64_t cnt) {
  const __m256i idx = _mm256_setr_epi8(0, 4, 8, 12, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, 0, 4, 8, 12, -1,
                                       -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1);
  const __m256i b = _mm256_shuffle_epi8(v, idx);
  const __m128i r = _mm_unpacklo_epi32(_mm256_castsi256_si128(b), _mm256_extracti128_si256(b, 1));
  if (cnt >= 8) {
    _mm_storel_epi64((__m128i *)d, r);
    return;
  }
  const uint64_t u = (uint64_t)_mm_cvtsi128_si64(r);
  for (int64_t j = 0; j < cnt; j++) d[j] = (uint8_t)(u >> (8 * j));
}
YI void y_copyflip(uint8_t *d, const uint8_t *s, int64_t n, int64_t np, uint8_t flip) {
  const __m256i f = _mm256_set1_epi8((char)flip);
  int64_t j = 0;
  for (; j + 32 <= n; j += 32) _mm256_storeu_si256((__m256i *)(d + j), _mm256_xor_si256(y_load(s + j), f));
  for (; j < n; j++) d[j] = s[j] ^ flip;
  for (; j < np; j++) d[j] = 0;
}
/* A stride-1 panel row segment: d[j] = src[j] for j in [lo, hi), zx elsewhere in [0, len). The zx
   stores may run up to 31 bytes past len (the row buffers have QX_RSLACK bytes of slack; the next
   segment is written after); the copies are overlapping vectors inside [lo, hi). */
YI void y_fill_s1(uint8_t *d, uintptr_t src, int64_t lo, int64_t hi, int64_t len, uint8_t zx) {
  const uint8_t *s = (const uint8_t *)src;
  if (lo > 0 || hi < len) {
    const __m256i z = _mm256_set1_epi8((char)zx);
    for (int64_t j = 0; j < len; j += 32) _mm256_storeu_si256((__m256i *)(d + j), z);
  }
  const int64_t n = hi - lo;
  if (n >= 32) {
    for (int64_t j = lo; j + 32 < hi; j += 32) _mm256_storeu_si256((__m256i *)(d + j), y_load(s + j));
    _mm256_storeu_si256((__m256i *)(d + hi - 32), y_load(s + hi - 32));
  } else if (n >= 8) {
    for (int64_t j = lo; j + 8 < hi; j += 8) *(qx_u64u *)(d + j) = *(const qx_u64u *)(s + j);
    *(qx_u64u *)(d + hi - 8) = *(const qx_u64u *)(s + hi - 8);
  } else {
    for (int64_t j = lo; j < hi; j++) d[j] = s[j];
  }
}
/* 4 rows of 32 bytes (taps k..k+3 of 32 pixels) -> 32 x 4 interleaved bytes, ^ flip. */
YI void y_tr4h(uint8_t *dst, __m256i a, __m256i b, __m256i c, __m256i d, uint8_t flip) {
  const __m256i f = _mm256_set1_epi8((char)flip);
  a = _mm256_xor_si256(a, f), b = _mm256_xor_si256(b, f), c = _mm256_xor_si256(c, f), d = _mm256_xor_si256(d, f);
  const __m256i t0 = _mm256_unpacklo_epi8(a, b), t1 = _mm256_unpackhi_epi8(a, b);
  const __m256i t2 = _mm256_unpacklo_epi8(c, d), t3 = _mm256_unpackhi_epi8(c, d);
  /* lane 0 / lane 1: u0 = pixels 0..3 / 16..19, u1 = 4..7 / 20..23, u2 = 8..11 / 24..27, u3 = 12..15 / 28..31 */
  const __m256i u0 = _mm256_unpacklo_epi16(t0, t2), u1 = _mm256_unpackhi_epi16(t0, t2);
  const __m256i u2 = _mm256_unpacklo_epi16(t1, t3), u3 = _mm256_unpackhi_epi16(t1, t3);
  __m256i *o = (__m256i *)dst;
  _mm256_storeu_si256(o, _mm256_permute2x128_si256(u0, u1, 0x20));
  _mm256_storeu_si256(o + 1, _mm256_permute2x128_si256(u2, u3, 0x20));
  _mm256_storeu_si256(o + 2, _mm256_permute2x128_si256(u0, u1, 0x31));
  _mm256_storeu_si256(o + 3, _mm256_permute2x128_si256(u2, u3, 0x31));
}
/* 4 rows of 64 bytes (ld apart) -> 64 x 4 interleaved bytes. */
YI void y_tr4(uint8_t *dst, const uint8_t *rows, int64_t ld, uint8_t flip) {
  for (int h = 0; h < 2; h++)
    y_tr4h(dst + 128 * h, y_load(rows + 32 * h), y_load(rows + ld + 32 * h), y_load(rows + 2 * ld + 32 * h),
           y_load(rows + 3 * ld + 32 * h), flip);
}
/* AVX2 has no byte-masked loads: a tap row is two ymm halves, each segment's bytes come from a full
   32-byte load merged under a byte mask, when the 32 bytes lie inside the input buffer [xlo, xhi)
   (they may reach past the row: the mask drops them); near the buffer's ends, byte by byte. */
YI __m256i y_expand(uint32_t m) { /* bit j -> byte j all ones */
  const __m256i idx = _mm256_setr_epi8(0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1, 2, 2, 2, 2, 2, 2, 2, 2, 3, 3, 3,
                                       3, 3, 3, 3, 3);
  const __m256i bit = _mm256_set1_epi64x((int64_t)0x8040201008040201ull);
  const __m256i t = _mm256_shuffle_epi8(_mm256_set1_epi32((int32_t)m), idx);
  return _mm256_cmpeq_epi8(_mm256_and_si256(t, bit), bit);
}
YI __m256i y_merge(__m256i v, uintptr_t src, uint32_t m, uintptr_t xlo, uintptr_t xhi) {
  if (src >= xlo && src + 32 <= xhi) return _mm256_blendv_epi8(v, y_load((const void *)src), y_expand(m));
  uint8_t b[32] __attribute__((aligned(32)));
  _mm256_store_si256((__m256i *)b, v);
  for (int j = 0; j < 32; j++)
    if (m >> j & 1) b[j] = *(const uint8_t *)(src + (uintptr_t)j);
  return _mm256_load_si256((const __m256i *)b);
}
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
#define YVI static inline __attribute__((always_inline, target("avx2,avxvnni")))
YVI __m256i yv_dp(__m256i acc, __m256i u8, __m256i s8) { return _mm256_dpbusd_avx_epi32(acc, u8, s8); }

/* ---- the template, once per ISA ----------------------------------------------------------------------- */
#define QX_C2(a, b) a##__##b
#define QX_C(a, b) QX_C2(a, b)
#define QN(name) QX_C(name, ISA)
#define QT __attribute__((target(TGT)))
#define QI static inline __attribute__((always_inline)) QT
#define QS static QT /* the layer bodies: one per ISA, shared by the four element combinations */
#define QX_TEMPLATE 1

#define ISA avx512vnni
#define TGT QX_TZ
#define V __m512i
#define VL 16
#define VQ qx_zq
#define VSET1 z_set1
#define VSET64 z_set64
#define VLOAD z_load
#define VBCAST z_bcast
#define VDP z_dp
#define VADD z_add
#define VQPREP z_qprep
#define VREQ z_req
#define VREQH z_reqh
#define VSTORE8 z_store8
#define VSTORE8X4 z_store8x4
#define VCOPYFLIP z_copyflip
#define VFILLS1 z_fill_s1
#define VTR4 z_tr4
#define VPACK_S1 z_pack_s1
#define VPACK_S2 z_pack_s2
#define VCV_TAIL z_tail_run
#define VTAIL_COMPACT z_tail_compact
#define FC_R 6  /* FC tile: 6 rows x 4 zmm (64 channels): 24 accumulators */
#define FC_NJ 4
#define CV_R 6  /* conv tile: 6 channels x 4 zmm (64 pixels) */
#define CV_NJ 4
#define CV_R3 8 /* narrow panels: 8 channels x 3 zmm, 12 x 2, 16 x 1 */
#define CV_R2 12
#define CV_R1 16
#define CV_RMAX 16
#include "x86_q8.c"

#define ISA avxvnni
#define TGT "avx2,avxvnni"
#define V __m256i
#define VL 8
#define VQ qx_yq
#define VSET1 y_set1
#define VSET64 y_set64
#define VLOAD y_load
#define VBCAST y_bcast
#define VDP yv_dp
#define VADD y_add
#define VQPREP y_qprep
#define VREQ y_req
#define VSTORE8 y_store8
#define VCOPYFLIP y_copyflip
#define VFILLS1 y_fill_s1
#define VTR4 y_tr4
#define VPACK_S1 y_pack_s1
#define FC_R 6  /* 6 rows x 2 ymm (16 channels): 12 accumulators + 2 weights + 1 broadcast of 16 registers */
#define FC_NJ 2
#define CV_R 6  /* 6 channels x 2 ymm (16 pixels) */
#define CV_NJ 2
#define CV_R1 12 /* narrow panels: 12 channels x 1 ymm */
#define CV_RMAX 12
#include "x86_q8.c"

#define ISA avx2
#define TGT "avx2"
#define V __m256i
#define VL 8
#define VQ qx_yq
#define VSET1 y_set1
#define VSET64 y_set64
#define VLOAD y_load
#define VBCAST y_bcast
#define VDP ye_dp
#define VADD y_add
#define VQPREP y_qprep
#define VREQ y_req
#define VSTORE8 y_store8
#define VCOPYFLIP y_copyflip
#define VFILLS1 y_fill_s1
#define VTR4 y_tr4
#define VPACK_S1 y_pack_s1
#define FC_R 3  /* the emulation needs the split halves of the operands in registers too */
#define FC_NJ 2
#define CV_R 3
#define CV_NJ 2
#define CV_R1 6
#define CV_RMAX 6
#include "x86_q8.c"


/* ---- Direct conv over channels by 4 (avx512vnni, QLLC_LAYOUT_ROWS_C4) ------------------------------- */
/* Stride 1, C/group a multiple of 4, a kernel larger than 1x1 (qllc_c4_fits). Instead of an im2col
   panel per 64 pixels (every input byte copied KH * KW times), the input of one image and group is
   converted once into planes of 4 channels, padded with z_x: byte ((q * (Hp + 1) + r) * Wp + c) * 4 + i
   is channel 4q + i of input row r - pad_top, column c - pad_left (Hp = OH + (KH-1) dh rows of Wp =
   W + max(pad_left, pad_right) columns, then one row of z_x). In that layout the 4 bytes every
   vpdpbusd lane needs for tap (kh, kw) and channels 4q .. 4q+3 of output pixel (oh, ow) sit at p * 4 +
   (kh dh Wp + kw dw) * 4 of plane q, where p = oh * Wp + ow is the pixel's "virtual" index: 64
   consecutive virtual pixels are one 256-byte load per tap, shifted by a constant. The right padding
   of a row is the left padding of the next (a read past a row's Wp columns lands in the next row's
   first pad_left columns, or the extra row), so only Wp - OW = (KW-1) dw - min(pad_left, pad_right)
   virtual pixels per row are not output pixels (1 of 57 for a 3x3 conv padded by 1 at 56x56): they are
   computed and dropped, the epilogue compressing the valid lanes of each vector (vpcompressd) and
   storing them contiguously, since valid virtual pixels in order are the output pixels in order (a run
   of 64 virtual pixels over at most 3 output rows: packed into 64 bytes, one masked store a row). The
   weights are packed in the matching reduction order (q, kh, kw, i). */
typedef struct qx_c4 {
  int64_t K, ncq, KH, KW, rstep, cstep, PS; /* rstep = dh Wp 4, cstep = dw 4, PS = plane bytes */
} qx_c4;
/* Where the outputs of one run of 4 vectors of 16 virtual pixels go. Vector j stores its lanes mk[j] (cm[j]:
   as many low bits as mk[j] has) at oo[j]. When the run spans at most QX_C4_NS output rows (ns > 0), the
   64 lanes packed into 64 bytes in order (z_pack8x4) can be stored instead as ns masked stores, one per
   output row: lanes sm[s] at so[s] (lane i of row r is output pixel p0 + i - r (Wp - OW); the bytes
   a mask leaves out, which may lie outside the output, are neither written nor faulted on). */
#define QX_C4_NS 3
typedef struct qx_c4run {
  __mmask16 mk[4], cm[4];
  int64_t oo[4];
  __mmask64 sm[QX_C4_NS];
  int64_t so[QX_C4_NS];
  int ns;
} qx_c4run;

/* Planes of cq_n x 4 channels of one image and group (xg: its first channel, NCHW) into xs. Each
   64-column chunk is 4 masked row loads and a 4 x 64 byte transpose; its 256 bytes may run into the
   next row (written later) or, on the last row, into the 256 bytes of slack past the planes. */
ZP void zc4_convert(uint8_t *xs, const uint8_t *xg, int64_t cq_n, int64_t H, int64_t W, int64_t Hp, int64_t Wp,
                    int64_t pt, int64_t pl, uint8_t zx, uint8_t flip) {
  const __m512i zv = _mm512_set1_epi8((char)zx), pad = _mm512_set1_epi8((char)(zx ^ flip));
  const int64_t HW = H * W;
  uint8_t *d = xs;
  for (int64_t cq = 0; cq < cq_n; cq++)
    for (int64_t r = 0; r <= Hp; r++, d += Wp * 4) { /* row Hp: z_x (rows past H are padding) */
      const int64_t ih = r - pt;
      if (ih < 0 || ih >= H) {
        for (int64_t j = 0; j < Wp * 4; j += 64) _mm512_mask_storeu_epi8(d + j, qx_bits(Wp * 4 - j), pad);
        continue;
      }
      const uintptr_t s = (uintptr_t)(xg + cq * 4 * HW + ih * W);
      for (int64_t c0 = 0; c0 < Wp; c0 += 64) {
        const __mmask64 in = qx_bits(pl + W - c0) & ~qx_bits(pl - c0); /* lanes on input columns */
        const uintptr_t a = s + (uintptr_t)(c0 - pl);
        qx_tr4_512(d + c0 * 4, _mm512_mask_loadu_epi8(zv, in, (const void *)a),
               _mm512_mask_loadu_epi8(zv, in, (const void *)(a + (uintptr_t)HW)),
               _mm512_mask_loadu_epi8(zv, in, (const void *)(a + (uintptr_t)(2 * HW))),
               _mm512_mask_loadu_epi8(zv, in, (const void *)(a + (uintptr_t)(3 * HW))), flip);
      }
    }
  _mm512_storeu_si512(d, _mm512_setzero_si512()); /* the slack: read by the last pixels, never stored */
  _mm512_storeu_si512(d + 64, _mm512_setzero_si512());
  _mm512_storeu_si512(d + 128, _mm512_setzero_si512());
  _mm512_storeu_si512(d + 192, _mm512_setzero_si512());
}

/* R output channels (weight rows w, g->K bytes apart; outputs ldy bytes apart) x NJ vectors of 16
   virtual pixels from xs (R * NJ <= 24, R <= 16), stored as ru says (by rows when NJ = 4 and ru->ns > 0). */
ZI void zc4_tile(const int R, const int NJ, uint8_t *y, int64_t ldy, const uint8_t *xs, const int8_t *w, const qx_c4 *g,
                 const int32_t *bias, const int32_t *m, const int32_t *n, int32_t z_y, int32_t act_lo,
                 int32_t act_hi, const qx_c4run *ru) {
  __m512i acc[16][4];
  QX_UNROLL for (int r = 0; r < R; r++) {
    const __m512i b = _mm512_set1_epi32(bias[r]);
    QX_UNROLL for (int j = 0; j < NJ; j++) acc[r][j] = b;
  }
  const int8_t *wk = w;
  for (int64_t cq = 0; cq < g->ncq; cq++)
    for (int64_t kh = 0; kh < g->KH; kh++) {
      const uint8_t *ph = xs + cq * g->PS + kh * g->rstep;
      for (int64_t kw = 0; kw < g->KW; kw++, wk += 4) {
        const uint8_t *pp = ph + kw * g->cstep;
        __m512i p[4];
        QX_UNROLL for (int j = 0; j < NJ; j++) p[j] = z_load(pp + 64 * j);
        QX_UNROLL for (int r = 0; r < R; r++) {
          const __m512i b = z_bcast(wk + r * g->K);
          QX_UNROLL for (int j = 0; j < NJ; j++) acc[r][j] = z_dp(acc[r][j], p[j], b);
        }
      }
    }
  /* by rows: the packs saturate to [act_lo, act_hi] themselves when that is the whole of [-128, 127] or [0, 255] */
  const int rows = NJ == 4 && ru->ns > 0, sgn = act_lo < 0;
  const int sat = rows && ((act_lo == -128 && act_hi == 127) || (act_lo == 0 && act_hi == 255));
  QX_UNROLL for (int r = 0; r < R; r++) {
    __m512i v[4];
    if (qllc_req32_fits(n[r], z_y)) {
      const __m512i mv = _mm512_set1_epi32(m[r]), rv = _mm512_set1_epi32(qx_req32_r(n[r], z_y));
      const __m512i sh = _mm512_set1_epi32(n[r] - 32), l32 = _mm512_set1_epi32(act_lo), h32 = _mm512_set1_epi32(act_hi);
      if (sat) QX_UNROLL for (int j = 0; j < NJ; j++) v[j] = qx_reqh_512_nc(acc[r][j], mv, mv, rv, sh);
      else QX_UNROLL for (int j = 0; j < NJ; j++) v[j] = z_reqh(acc[r][j], mv, mv, rv, sh, l32, h32);
    } else {
      qx_zq q;
      z_qprep(&q, _mm512_set1_epi32(m[r]), _mm512_set1_epi32(n[r]));
      const __m512i zy = _mm512_set1_epi64(z_y), lo = _mm512_set1_epi64(act_lo), hi = _mm512_set1_epi64(act_hi);
      QX_UNROLL for (int j = 0; j < NJ; j++) v[j] = z_req(acc[r][j], &q, zy, lo, hi);
    }
    if (rows) {
      const __m512i b = z_pack8x4(v, sgn);
      for (int s = 0; s < ru->ns; s++) _mm512_mask_storeu_epi8(y + r * ldy + ru->so[s], ru->sm[s], b);
      continue;
    }
    QX_UNROLL for (int j = 0; j < NJ; j++) {
      uint8_t *d = y + r * ldy + ru->oo[j];
      const __mmask16 mk = ru->mk[j];
      if (mk == 0xFFFF) _mm_storeu_si128((__m128i *)d, _mm512_cvtepi32_epi8(v[j]));
      else if (mk) _mm_mask_storeu_epi8(d, ru->cm[j], _mm512_cvtepi32_epi8(_mm512_maskz_compress_epi32(mk, v[j])));
    }
  }
}

/* The output channels of a group over NJ vectors of virtual pixels: tiles of 6 channels for 4 vectors;
   for the last, narrower run of pixels (NJ < 4) more channels a tile (8, 12, 16), the rest by 4 and 1. */
ZP void zc4_tiles(const int NJ, uint8_t *y, int64_t ldy, const uint8_t *xs, const int8_t *w, const qx_c4 *g,
                  int64_t mg, const int32_t *bias, const int32_t *m, const int32_t *n, int32_t z_y, int32_t act_lo,
                  int32_t act_hi, const qx_c4run *ru) {
  const int RM = NJ == 4 ? 6 : NJ == 3 ? 8 : NJ == 2 ? 12 : 16;
  for (int64_t oc = 0; oc < mg;) {
    const int64_t left = mg - oc;
    const int rr = left >= RM ? RM : NJ < 4 ? (left >= 4 ? 4 : 1) : (int)left;
    uint8_t *yo = y + oc * ldy;
    const int8_t *wo = w + oc * g->K;
#define QX_C4_CASE(RR, J) \
  case RR: zc4_tile(RR, J, yo, ldy, xs, wo, g, bias + oc, m + oc, n + oc, z_y, act_lo, act_hi, ru); break;
    if (NJ == 4) switch (rr) {
        QX_C4_CASE(6, 4)
        QX_C4_CASE(5, 4)
        QX_C4_CASE(4, 4)
        QX_C4_CASE(3, 4)
        QX_C4_CASE(2, 4)
        default: zc4_tile(1, 4, yo, ldy, xs, wo, g, bias + oc, m + oc, n + oc, z_y, act_lo, act_hi, ru);
      }
    else if (NJ == 3) switch (rr) {
        QX_C4_CASE(8, 3)
        QX_C4_CASE(4, 3)
        default: zc4_tile(1, 3, yo, ldy, xs, wo, g, bias + oc, m + oc, n + oc, z_y, act_lo, act_hi, ru);
      }
    else if (NJ == 2) switch (rr) {
        QX_C4_CASE(12, 2)
        QX_C4_CASE(4, 2)
        default: zc4_tile(1, 2, yo, ldy, xs, wo, g, bias + oc, m + oc, n + oc, z_y, act_lo, act_hi, ru);
      }
    else switch (rr) {
        QX_C4_CASE(16, 1)
        QX_C4_CASE(4, 1)
        default: zc4_tile(1, 1, yo, ldy, xs, wo, g, bias + oc, m + oc, n + oc, z_y, act_lo, act_hi, ru);
      }
#undef QX_C4_CASE
    oc += rr;
  }
}

ZI void zc4_conv(uint8_t *y, const uint8_t *x, const int xi8, const int8_t *wp, const int32_t *bias,
                 const int32_t *m, const int32_t *n, int64_t N, int64_t C, int64_t H, int64_t W, int64_t M,
                 int64_t OH, int64_t OW, int64_t KH, int64_t KW, int64_t sh, int64_t sw, int64_t pt, int64_t pl,
                 int64_t dh, int64_t dw, int64_t group, int32_t z_x, int32_t z_y, int32_t act_lo, int32_t act_hi,
                 uint8_t *scratch) {
  (void)sh, (void)sw; /* 1 (qllc_c4_fits) */
  const int64_t cg = C / group, mg = M / group, Hp = OH + (KH - 1) * dh, pr = OW + (KW - 1) * dw - W - pl;
  const int64_t Wp = W + (pl > pr ? pl : pr), NV = (OH - 1) * Wp + OW, ldy = OH * OW;
  const qx_c4 g = {cg * KH * KW, cg / 4, KH, KW, dh * Wp * 4, dw * 4, (Hp + 1) * Wp * 4};
  const uint8_t flip = xi8 ? 0x80 : 0;
  for (int64_t b = 0; b < N; b++)
    for (int64_t gi = 0; gi < group; gi++) {
      zc4_convert(scratch, x + (b * C + gi * cg) * H * W, g.ncq, H, W, Hp, Wp, pt, pl, (uint8_t)z_x, flip);
      uint8_t *yg = y + (b * M + gi * mg) * ldy;
      for (int64_t p0 = 0; p0 < NV; p0 += 64) {
        qx_c4run ru;
        __mmask16 *mk = ru.mk, *cm = ru.cm;
        int64_t *oo = ru.oo;
        for (int j = 0; j < 4; j++) { /* the lanes of virtual pixels v .. v+15 that are output pixels */
          const int64_t v = p0 + 16 * j, row = v / Wp, col = v % Wp;
          uint64_t bits = 0;
          for (int64_t at = -col; at < 16; at += Wp) /* lane of the start of each row in the vector */
            bits |= qx_bits(at + OW) & ~qx_bits(at);
          bits &= qx_bits(NV - v) & 0xFFFF;
          uint64_t cnt = bits - ((bits >> 1) & 0x5555); /* popcount of 16 bits, no libcall */
          cnt = (cnt & 0x3333) + ((cnt >> 2) & 0x3333);
          cnt = (cnt + (cnt >> 4)) & 0x0F0F;
          cnt = (cnt + (cnt >> 8)) & 0x1F;
          mk[j] = (__mmask16)bits, cm[j] = (__mmask16)qx_bits((int64_t)cnt);
          oo[j] = col < OW ? row * OW + col : (row + 1) * OW; /* its first valid lane's output pixel */
        }
        const int64_t left = NV - p0;
        const int nj = left >= 64 ? 4 : (int)((left + 15) / 16); /* the last run: only its vectors */
        const int64_t r0 = p0 / Wp, r1 = (p0 + 63) / Wp;
        ru.ns = 0;
        if (nj == 4 && r1 - r0 < QX_C4_NS) {
          const uint64_t all = mk[0] | (uint64_t)mk[1] << 16 | (uint64_t)mk[2] << 32 | (uint64_t)mk[3] << 48;
          for (int64_t r = r0; r <= r1; r++) {
            const uint64_t sm = all & qx_bits((r + 1) * Wp - p0) & ~qx_bits(r * Wp - p0);
            if (sm) ru.sm[ru.ns] = sm, ru.so[ru.ns++] = p0 - r * (Wp - OW);
          }
        }
        zc4_tiles(nj, yg, ldy, scratch + p0 * 4, wp + gi * mg * g.K, &g, mg, bias + gi * mg, m + gi * mg,
                  n + gi * mg, z_y, act_lo, act_hi, &ru);
      }
    }
}


/* ---- Direct conv with output channels in the lanes (avx512vnni, QLLC_LAYOUT_C4N16) ------------------ */
/* Any stride and kernel size, C/group a multiple of 4 (qllc_cl_fits). The input of one image and group
   is converted into the padded planes of 4 channels of the conv above (zc4_convert), with Hp = (OH-1)
   sh + (KH-1) dh + 1 rows. A tile is NP (<= 6) output pixels x NO (<= 4) vectors of 16 output
   channels: per (channel quad q, kh, kw) it loads the NO weight lines of 16 channels x 4 bytes and
   broadcasts each pixel's 4 input bytes (plane q, row oh sh + kh dh, column ow sw + kw dw) against
   them. Only output pixels are computed (no virtual pixels: the pixels of a tile may span output
   rows), so small images and strides waste nothing. The epilogue requantizes per lane (per output
   channel) and writes each pixel's 16 channels as 16 bytes to a staging area (pixel-major, per block
   of 16 channels); every QX_CL_PC pixels the staging is transposed 16 x 16 bytes at a time into the
   NCHW output rows.
   The tiles of a 64-channel block read all its weights (64 K bytes, up to 295 KB) from L2; the first
   tile fetches them from L3 or memory at the speed of demand misses (a layer's weights do not stay in
   L2 between calls, and not always in L3 inside a network of 11 MB of weights). So each tile also
   prefetches its share of the next block's weights: all of them by the end of the block. */
#define QX_CL_NP 6   /* pixels per tile */
#define QX_CL_NO 4   /* vectors of 16 output channels per tile */
#define QX_CL_PC 48  /* pixels per staged chunk: a multiple of 16 */
typedef struct qx_cl {
  int64_t ncq, KH, KW, rstep, cstep, PS, wstep; /* wstep: bytes between the weights of two 16-channel blocks */
} qx_cl;

/* The requantization constants of one block of 16 output channels. */
typedef struct qx_clq {
  __m512i bias, m, mo, r, sh; /* fast: the 32-bit path (z_reqh) applies to every lane */
  qx_zq q;
  int fast;
} qx_clq;

/* NP pixels (byte offsets px[i] of their first tap in the planes xs) x NO channel blocks (weights w,
   g->wstep bytes apart); stores pixel i of block j at stg + j * QX_CL_PC * 16 + i * 16. On the way it
   prefetches the npf lines from pf into L2 (T1), spread over its channel quads. */
ZI void zcl_tile(const int NP, const int NO, uint8_t *stg, const uint8_t *xs, const int64_t *px, const int8_t *w,
                 const qx_cl *g, const qx_clq *cq, int32_t z_y, int32_t act_lo, int32_t act_hi, const int8_t *pf,
                 int64_t npf) {
  __m512i acc[QX_CL_NP][QX_CL_NO];
  QX_UNROLL for (int i = 0; i < NP; i++) QX_UNROLL for (int j = 0; j < NO; j++) acc[i][j] = cq[j].bias;
  const int8_t *wk = w;
  const uint8_t *p[QX_CL_NP];
  QX_UNROLL for (int i = 0; i < NP; i++) p[i] = xs + px[i];
  int64_t pa = 0;
  for (int64_t q = 0; q < g->ncq; q++) {
    for (pa += npf; pa >= g->ncq; pa -= g->ncq, pf += 64) _mm_prefetch((const char *)pf, _MM_HINT_T1);
    for (int64_t kh = 0; kh < g->KH; kh++) {
      const int64_t ro = q * g->PS + kh * g->rstep;
      for (int64_t kw = 0; kw < g->KW; kw++, wk += 64) {
        const int64_t o = ro + kw * g->cstep;
        __m512i wv[QX_CL_NO];
        QX_UNROLL for (int j = 0; j < NO; j++) wv[j] = z_load(wk + j * g->wstep);
        QX_UNROLL for (int i = 0; i < NP; i++) {
          const __m512i b = z_bcast(p[i] + o);
          QX_UNROLL for (int j = 0; j < NO; j++) acc[i][j] = z_dp(acc[i][j], b, wv[j]);
        }
      }
    }
  }
  const __m512i lo32 = _mm512_set1_epi32(act_lo), hi32 = _mm512_set1_epi32(act_hi);
  QX_UNROLL for (int j = 0; j < NO; j++) {
    uint8_t *d = stg + j * (QX_CL_PC * 16);
    if (cq[j].fast) {
      QX_UNROLL for (int i = 0; i < NP; i++)
        _mm_storeu_si128((__m128i *)(d + i * 16),
                         _mm512_cvtepi32_epi8(z_reqh(acc[i][j], cq[j].m, cq[j].mo, cq[j].r, cq[j].sh, lo32, hi32)));
    } else {
      const __m512i zy = _mm512_set1_epi64(z_y), lo = _mm512_set1_epi64(act_lo), hi = _mm512_set1_epi64(act_hi);
      QX_UNROLL for (int i = 0; i < NP; i++)
        _mm_storeu_si128((__m128i *)(d + i * 16), _mm512_cvtepi32_epi8(z_req(acc[i][j], &cq[j].q, zy, lo, hi)));
    }
  }
}

/* The np pixels of a chunk in tiles of as equal sizes as QX_CL_NP allows (49 pixels: 5 x 5 + 4 x 6, never
   a lone pixel that would reload every weight line for one broadcast). Each tile prefetches the next npf
   lines from *pf (not past pf_end) and moves *pf on. */
ZP void zcl_tiles(const int NO, int64_t np, uint8_t *stg, const uint8_t *xs, const int64_t *px, const int8_t *w,
                  const qx_cl *g, const qx_clq *cq, int32_t z_y, int32_t act_lo, int32_t act_hi, const int8_t **pf,
                  const int8_t *pf_end, int64_t npf) {
  const int64_t nt = (np + QX_CL_NP - 1) / QX_CL_NP;
  for (int64_t ti = 0, t = 0; ti < nt; ti++) {
    const int64_t sz = (np - t) / (nt - ti); /* the later tiles take the remainder: sizes differ by 1 at most */
    uint8_t *s = stg + t * 16;
    const int64_t left = (pf_end - *pf) / 64, n = npf < left ? npf : left;
#define QX_CL_CASE(P, O) \
  case P: zcl_tile(P, O, s, xs, px + t, w, g, cq, z_y, act_lo, act_hi, *pf, n); break;
#define QX_CL_SW(O)                                                                                              \
  switch ((int)sz) {                                                                                             \
    QX_CL_CASE(6, O)                                                                                             \
    QX_CL_CASE(5, O)                                                                                             \
    QX_CL_CASE(4, O)                                                                                             \
    QX_CL_CASE(3, O)                                                                                             \
    QX_CL_CASE(2, O)                                                                                             \
    default: zcl_tile(1, O, s, xs, px + t, w, g, cq, z_y, act_lo, act_hi, *pf, n);                              \
  }
    if (NO == 4) QX_CL_SW(4)
    else if (NO == 3) QX_CL_SW(3)
    else if (NO == 2) QX_CL_SW(2)
    else QX_CL_SW(1)
#undef QX_CL_SW
#undef QX_CL_CASE
    t += sz, *pf += 64 * n;
  }
}

/* 16 staged pixels x 16 channels (s: pixel-major, 16 bytes a pixel) -> the first nrows channels' rows
   (ldy bytes apart), npx pixels each. Dword transpose within each 4-pixel vector, byte 4 x 4 transpose
   within each dword group, then a 4 x 4 dword transpose across the four vectors. */
ZI void zcl_tr16(uint8_t *y, int64_t ldy, const uint8_t *s, int64_t npx, int64_t nrows) {
  const __m512i dperm = _mm512_set_epi32(15, 11, 7, 3, 14, 10, 6, 2, 13, 9, 5, 1, 12, 8, 4, 0);
  const __m512i bshuf = _mm512_broadcast_i32x4(_mm_setr_epi8(0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15));
  __m512i z[4];
  QX_UNROLL for (int k = 0; k < 4; k++) z[k] = _mm512_shuffle_epi8(_mm512_permutexvar_epi32(dperm, z_load(s + 64 * k)), bshuf);
  const __m512i t0 = _mm512_unpacklo_epi32(z[0], z[1]), t1 = _mm512_unpackhi_epi32(z[0], z[1]);
  const __m512i t2 = _mm512_unpacklo_epi32(z[2], z[3]), t3 = _mm512_unpackhi_epi32(z[2], z[3]);
  __m512i r[4];
  r[0] = _mm512_unpacklo_epi64(t0, t2), r[1] = _mm512_unpackhi_epi64(t0, t2);
  r[2] = _mm512_unpacklo_epi64(t1, t3), r[3] = _mm512_unpackhi_epi64(t1, t3);
  const __mmask16 mk = (__mmask16)qx_bits(npx);
  __m128i l[16];
  QX_UNROLL for (int b = 0; b < 4; b++) {
    l[b] = _mm512_castsi512_si128(r[b]);
    l[4 + b] = _mm512_extracti32x4_epi32(r[b], 1);
    l[8 + b] = _mm512_extracti32x4_epi32(r[b], 2);
    l[12 + b] = _mm512_extracti32x4_epi32(r[b], 3);
  }
  if (npx >= 16 && nrows >= 16) {
    QX_UNROLL for (int o = 0; o < 16; o++) _mm_storeu_si128((__m128i *)(y + o * ldy), l[o]);
  } else {
    for (int o = 0; o < nrows && o < 16; o++) _mm_mask_storeu_epi8(y + o * ldy, mk, l[o]);
  }
}

ZI void zcl_conv(uint8_t *y, const uint8_t *x, const int xi8, const int8_t *wp, const int32_t *bias,
                 const int32_t *m, const int32_t *n, int64_t N, int64_t C, int64_t H, int64_t W, int64_t M,
                 int64_t OH, int64_t OW, int64_t KH, int64_t KW, int64_t sh, int64_t sw, int64_t pt, int64_t pl,
                 int64_t dh, int64_t dw, int64_t group, int32_t z_x, int32_t z_y, int32_t act_lo, int32_t act_hi,
                 uint8_t *scratch) {
  const int64_t cg = C / group, mg = M / group, Hp = (OH - 1) * sh + (KH - 1) * dh + 1;
  const int64_t pr = (OW - 1) * sw + (KW - 1) * dw + 1 - W - pl, Wp = W + (pl > pr ? pl : pr), P = OH * OW;
  const int64_t K = cg * KH * KW, nk4 = K / 4, mgp = (mg + 15) & ~(int64_t)15;
  const qx_cl g = {cg / 4, KH, KW, dh * Wp * 4, dw * 4, (Hp + 1) * Wp * 4, nk4 * 64};
  uint8_t *stg = scratch + qllc_round_up(cg * (Hp + 1) * Wp + 256, 64);
  const uint8_t flip = xi8 ? 0x80 : 0;
  for (int64_t b = 0; b < N; b++)
    for (int64_t gi = 0; gi < group; gi++) {
      zc4_convert(scratch, x + (b * C + gi * cg) * H * W, g.ncq, H, W, Hp, Wp, pt, pl, (uint8_t)z_x, flip);
      uint8_t *yg = y + (b * M + gi * mg) * P;
      const int8_t *wg = wp + gi * mgp * K;
      for (int64_t ob = 0; ob < mg; ob += 16 * QX_CL_NO) {
        const int64_t nleft = mg - ob;
        const int no = nleft >= 16 * QX_CL_NO ? QX_CL_NO : (int)((nleft + 15) / 16);
        qx_clq cq[QX_CL_NO];
        for (int j = 0; j < no; j++) {
          const int64_t c = gi * mg + ob + 16 * j;
          const __mmask16 in = (__mmask16)qx_bits(mg - ob - 16 * j);
          const __m512i mv = _mm512_maskz_loadu_epi32(in, m + c), nv = _mm512_mask_loadu_epi32(_mm512_set1_epi32(40), in, n + c);
          cq[j].bias = _mm512_maskz_loadu_epi32(in, bias + c);
          int32_t nn[16];
          _mm512_storeu_si512(nn, nv);
          cq[j].fast = 1;
          for (int i = 0; i < 16; i++) cq[j].fast &= qllc_req32_fits(nn[i], z_y);
          cq[j].m = mv, cq[j].mo = _mm512_srli_epi64(mv, 32);
          cq[j].sh = _mm512_sub_epi32(nv, _mm512_set1_epi32(32));
          if (cq[j].fast) {
            int32_t rr[16];
            for (int i = 0; i < 16; i++) rr[i] = qx_req32_r(nn[i], z_y);
            cq[j].r = _mm512_loadu_si512(rr);
          }
          z_qprep(&cq[j].q, mv, nv);
        }
        const int8_t *wo = wg + ob * K;
        const int64_t nch = (P + QX_CL_PC - 1) / QX_CL_PC; /* chunks of equal sizes (differing by 1) */
        int64_t ntile = 0;
        for (int64_t ci = 0, p0 = 0; ci < nch; ci++) {
          const int64_t np = (P - p0) / (nch - ci);
          ntile += (np + QX_CL_NP - 1) / QX_CL_NP, p0 += np;
        }
        int64_t nbn = mg - ob - 16 * QX_CL_NO; /* channels of the next block: its weights, npf lines a tile */
        if (nbn > 16 * QX_CL_NO) nbn = 16 * QX_CL_NO;
        const int8_t *pf = wo + 16 * QX_CL_NO * K, *pf_end = nbn > 0 ? pf + ((nbn + 15) & ~(int64_t)15) * K : pf;
        const int64_t npf = ((pf_end - pf) / 64 + ntile - 1) / ntile;
        for (int64_t ci = 0, p0 = 0; ci < nch; ci++) {
          const int64_t np = (P - p0) / (nch - ci);
          int64_t px[QX_CL_PC];
          for (int64_t i = 0, oh = p0 / OW, ow = p0 % OW; i < np; i++) {
            px[i] = (oh * sh * Wp + ow * sw) * 4;
            if (++ow == OW) ow = 0, oh++;
          }
          zcl_tiles(no, np, stg, scratch, px, wo, &g, cq, z_y, act_lo, act_hi, &pf, pf_end, npf);
          for (int j = 0; j < no; j++)
            for (int64_t s0 = 0; s0 < np; s0 += 16)
              zcl_tr16(yg + (ob + 16 * j) * P + p0 + s0, P, stg + j * (QX_CL_PC * 16) + s0 * 16, np - s0,
                       mg - ob - 16 * j);
          p0 += np;
        }
      }
    }
}

/* The entry points of both direct convs: qllc_k_<stem>_<in>_i8_<out>__avx512vnni calls drv. */
#define QX_DIRECT_WRAP(stem, drv, TI, ti, TO, to, xi8)                                                         \
  QLLC_KERNEL __attribute__((target(QX_TZ))) void qllc_k_##stem##_##ti##_i8_##to##__avx512vnni(                 \
      TO *y, const TI *x, const int8_t *wp, const int32_t *bias_c, const int32_t *m, const int32_t *n,          \
      int64_t N, int64_t C, int64_t H, int64_t W, int64_t M, int64_t OH, int64_t OW, int64_t KH, int64_t KW,    \
      int64_t stride_h, int64_t stride_w, int64_t pad_top, int64_t pad_left, int64_t dil_h, int64_t dil_w,      \
      int64_t group, int32_t z_x, int32_t z_y, int32_t act_lo, int32_t act_hi, uint8_t *scratch) {              \
    drv((uint8_t *)y, (const uint8_t *)x, xi8, wp, bias_c, m, n, N, C, H, W, M, OH, OW, KH, KW, stride_h,      \
        stride_w, pad_top, pad_left, dil_h, dil_w, group, z_x, z_y, act_lo, act_hi, scratch);                  \
  }
#define QX_DIRECT_WRAPS(stem, drv)                           \
  QX_DIRECT_WRAP(stem, drv, int8_t, i8, int8_t, i8, 1)       \
  QX_DIRECT_WRAP(stem, drv, int8_t, i8, uint8_t, u8, 1)      \
  QX_DIRECT_WRAP(stem, drv, uint8_t, u8, int8_t, i8, 0)      \
  QX_DIRECT_WRAP(stem, drv, uint8_t, u8, uint8_t, u8, 0)
QX_DIRECT_WRAPS(conv2dc4, zc4_conv)
QX_DIRECT_WRAPS(conv2dcl, zcl_conv)
#undef QX_DIRECT_WRAPS
#undef QX_DIRECT_WRAP

#else /* QX_TEMPLATE: one ISA's kernels ------------------------------------------------------------------ */

/* FC tile: R (<= FC_R) rows of the packed input (xs, ldx bytes apart) x FC_NJ vectors of VL channels
   (wc[j]: the channels' first 64-byte weight line; 64 bytes per k4). Accumulators start at the bias;
   the epilogue writes cnt[j] channels of each row. */
QI void QN(qx_fc_tile)(const int R, uint8_t *y, int64_t ldy, const uint8_t *xs, int64_t ldx,
                       const int8_t *const *wc, int64_t nk4, const V *bv, const VQ *q, int32_t z_y,
                       int32_t act_lo, int32_t act_hi, const int64_t *cnt) {
  V acc[FC_R][FC_NJ];
  QX_UNROLL for (int r = 0; r < R; r++) QX_UNROLL for (int j = 0; j < FC_NJ; j++) acc[r][j] = bv[j];
  int64_t k4 = 0;
  if (R == 1) { /* GEMV: two accumulator sets (even / odd k4) */
    V acc2[FC_NJ];
    QX_UNROLL for (int j = 0; j < FC_NJ; j++) acc2[j] = VSET1(0);
    for (; k4 + 2 <= nk4; k4 += 2) {
      const V b0 = VBCAST(xs + k4 * 4), b1 = VBCAST(xs + k4 * 4 + 4);
      QX_UNROLL for (int j = 0; j < FC_NJ; j++) {
        acc[0][j] = VDP(acc[0][j], b0, VLOAD(wc[j] + k4 * 64));
        acc2[j] = VDP(acc2[j], b1, VLOAD(wc[j] + k4 * 64 + 64));
      }
    }
    QX_UNROLL for (int j = 0; j < FC_NJ; j++) acc[0][j] = VADD(acc[0][j], acc2[j]);
  }
  for (; k4 < nk4; k4++) {
    V w[FC_NJ];
    QX_UNROLL for (int j = 0; j < FC_NJ; j++) w[j] = VLOAD(wc[j] + k4 * 64);
    QX_UNROLL for (int r = 0; r < R; r++) {
      const V b = VBCAST(xs + r * ldx + k4 * 4);
      QX_UNROLL for (int j = 0; j < FC_NJ; j++) acc[r][j] = VDP(acc[r][j], b, w[j]);
    }
  }
  /* the output constants are made here, not kept in registers across the loop */
  const V zy = VSET64(z_y), lo = VSET64(act_lo), hi = VSET64(act_hi);
  QX_UNROLL for (int j = 0; j < FC_NJ; j++) {
    if (cnt[j] <= 0) continue;
    QX_UNROLL for (int r = 0; r < R; r++) VSTORE8(y + r * ldy + j * VL, VREQ(acc[r][j], &q[j], zy, lo, hi), cnt[j]);
  }
}

QS void QN(qx_fc)(uint8_t *y, const uint8_t *x, const int xi8, const int8_t *wp, const int32_t *bias,
                  const int32_t *m, const int32_t *n, int64_t M, int64_t N, int64_t K, int32_t z_y, int32_t act_lo,
                  int32_t act_hi, uint8_t *scratch) {
  enum { CB = FC_NJ * VL };
  const int64_t Kp4 = (K + 3) & ~(int64_t)3, nk4 = Kp4 / 4, Np = (N + 15) & ~(int64_t)15;
  const uint8_t flip = xi8 ? 0x80 : 0;
  int32_t bl[CB] __attribute__((aligned(64))), ml[CB] __attribute__((aligned(64))), nl[CB] __attribute__((aligned(64)));
  for (int64_t i0 = 0; i0 < M; i0 += QLLC_FC_MB) {
    const int64_t mb = M - i0 < QLLC_FC_MB ? M - i0 : QLLC_FC_MB;
    for (int64_t r = 0; r < mb; r++) VCOPYFLIP(scratch + r * Kp4, x + (i0 + r) * K, K, Kp4, flip);
    for (int64_t c0 = 0; c0 < N; c0 += CB) {
      const int8_t *wc[FC_NJ];
      int64_t cnt[FC_NJ];
      V bv[FC_NJ];
      VQ q[FC_NJ];
      QX_UNROLL for (int j = 0; j < FC_NJ; j++) {
        const int64_t c = c0 + j * VL, left = N - c;
        /* a vector past the packed channels re-reads the first one; its results are not stored */
        const int64_t cc = c < Np ? c : c0;
        wc[j] = wp + ((cc / QLLC_NB) * nk4 * QLLC_NB + cc % QLLC_NB) * 4;
        cnt[j] = left < 0 ? 0 : left > VL ? VL : left;
      }
      for (int t = 0; t < CB; t++) {
        const int in = c0 + t < N;
        bl[t] = in ? bias[c0 + t] : 0, ml[t] = in ? m[c0 + t] : 0, nl[t] = in ? n[c0 + t] : 0;
      }
      QX_UNROLL for (int j = 0; j < FC_NJ; j++) {
        bv[j] = VLOAD(bl + j * VL);
        VQPREP(&q[j], VLOAD(ml + j * VL), VLOAD(nl + j * VL));
      }
      for (int64_t r0 = 0; r0 < mb; r0 += FC_R) {
        const int64_t rr = mb - r0 < FC_R ? mb - r0 : FC_R;
        uint8_t *yr = y + (i0 + r0) * N + c0;
        const uint8_t *xr = scratch + r0 * Kp4;
#define QX_FC_CASE(RR) \
  case RR: QN(qx_fc_tile)(RR, yr, N, xr, Kp4, wc, nk4, bv, q, z_y, act_lo, act_hi, cnt); break;
        switch (rr) {
#if FC_R >= 6
          QX_FC_CASE(6)
#endif
#if FC_R >= 5
          QX_FC_CASE(5)
#endif
#if FC_R >= 4
          QX_FC_CASE(4)
#endif
          QX_FC_CASE(3)
          QX_FC_CASE(2)
          default: QN(qx_fc_tile)(1, yr, N, xr, Kp4, wc, nk4, bv, q, z_y, act_lo, act_hi, cnt);
        }
#undef QX_FC_CASE
      }
    }
  }
}

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

/* The exported kernels: every input / output combination, calling the one body of the ISA. The
   output type only names the bytes (act_lo / act_hi clamp to its range); the input type only decides
   the value xored into every input byte (0x80: i8 -> u8). */
#define QX_WRAP(TI, ti, TO, to, xi8)                                                                             \
  QLLC_KERNEL QT void QX_C(qllc_k_fc_##ti##_i8_##to, ISA)(TO *y, const TI *x, const int8_t *wp,                  \
                                                          const int32_t *bias_c, const int32_t *m,               \
                                                          const int32_t *n, int64_t M, int64_t N, int64_t K,     \
                                                          int32_t z_x, int32_t z_y, int32_t act_lo,              \
                                                          int32_t act_hi, uint8_t *scratch) {                    \
    (void)z_x; /* folded into bias_c */                                                                          \
    QN(qx_fc)((uint8_t *)y, (const uint8_t *)x, xi8, wp, bias_c, m, n, M, N, K, z_y, act_lo, act_hi, scratch);   \
  }                                                                                                              \
  QLLC_KERNEL QT void QX_C(qllc_k_conv2d_##ti##_i8_##to, ISA)(                                                   \
      TO *y, const TI *x, const int8_t *wp, const int32_t *bias_c, const int32_t *m, const int32_t *n,          \
      int64_t N, int64_t C, int64_t H, int64_t W, int64_t M, int64_t OH, int64_t OW, int64_t KH, int64_t KW,    \
      int64_t stride_h, int64_t stride_w, int64_t pad_top, int64_t pad_left, int64_t dil_h, int64_t dil_w,      \
      int64_t group, int32_t z_x, int32_t z_y, int32_t act_lo, int32_t act_hi, uint8_t *scratch) {              \
    QN(qx_conv)((uint8_t *)y, (const uint8_t *)x, xi8, wp, bias_c, m, n, N, C, H, W, M, OH, OW, KH, KW,          \
                stride_h, stride_w, pad_top, pad_left, dil_h, dil_w, group, z_x, z_y, act_lo, act_hi, scratch);  \
  }
QX_WRAP(int8_t, i8, int8_t, i8, 1)
QX_WRAP(int8_t, i8, uint8_t, u8, 1)
QX_WRAP(uint8_t, u8, int8_t, i8, 0)
QX_WRAP(uint8_t, u8, uint8_t, u8, 0)
#undef QX_WRAP

#undef ISA
#undef TGT
#undef V
#undef VL
#undef VQ
#undef VSET1
#undef VSET64
#undef VLOAD
#undef VBCAST
#undef VDP
#undef VADD
#undef VQPREP
#undef VREQ
#undef VREQH
#undef VSTORE8
#undef VSTORE8X4
#undef VCOPYFLIP
#undef VFILLS1
#undef VTR4
#undef VPACK_S1
#undef VPACK_S2
#undef VCV_TAIL
#undef VTAIL_COMPACT
#undef QX_TAIL_HOOK
#undef FC_R
#undef FC_NJ
#undef CV_R
#undef CV_NJ
#undef CV_R1
#undef CV_R2
#undef CV_R3
#undef CV_RMAX
#endif /* QX_TEMPLATE */
