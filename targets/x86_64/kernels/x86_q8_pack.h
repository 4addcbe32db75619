/* targets/x86_64/kernels/x86_q8_pack.h: the packing of the activations into the scratch operand of
 * the 8-bit FC and panel Conv variants (x86_q8_fc.h, x86_q8_panel.h): FC input rows copied with the
 * i8 -> u8 flip, and the pieces the panel packers of x86_q8_panel.h are made of (panel rows of any
 * stride, the output-row segments of a stride-1 or stride-2 panel and their (tap, segment) tables,
 * the tap rows, the 16-byte windows of the stride-2 stem, the 4 x 64 byte transposes). Always inline;
 * the packers themselves (z_pack_s1, z_pack_s2, z_pack_s2w, y_pack_s1, qx_pack_rows) are the
 * out-of-line functions of x86_q8_panel.h. */
#ifndef QLLC_X86_Q8_PACK_H
#define QLLC_X86_Q8_PACK_H
#include "x86_q8_vec.h"
#include "x86_tr4.h"

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

/* ---- AVX-512 -------------------------------------------------------------------------------------- */
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

/* ---- AVX2 ----------------------------------------------------------------------------------------- */
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
#endif
