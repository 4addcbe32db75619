/* targets/x86_64/kernels/x86_q8_direct.h: the direct 8-bit convs over planes of 4 channels,
 * AVX-512 VNNI only (variants.def: qllc_k_conv2dc4_*__avx512vnni, qllc_k_conv2dcl_*__avx512vnni),
 * bit-identical to the scalar qllc_k_conv2d_* of q_layers.c (a part of x86_q8.c, which describes the family).
 * Both convert the input of one image and group once into padded planes of 4 channels (zc4_convert):
 *  - conv2dc4 (weights QLLC_LAYOUT_ROWS_C4): stride 1; output pixels in the lanes ("virtual" pixels
 *    of the padded rows), tiles of output channels x 4 vectors of 16 pixels;
 *  - conv2dcl (weights QLLC_LAYOUT_C4N16): any stride; output channels in the lanes, tiles of 6 pixels
 *    x 4 vectors of 16 channels, staged and transposed into the NCHW output. It also reads and writes
 *    channel-last (NHWC) activations (its x_nhwc / y_nhwc arguments, set by the layout pass,
 *    src/lower/layout.c): an NHWC input is copied row by row into padded pixel-major rows (no
 *    transpose), an NHWC output is stored 16 channels a pixel straight from the tiles (no staging). */
#include "x86_q8_epilogue.h"
#include "x86_tr4.h"

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

/* Where a tile stores its 16 bytes of pixel i, channel block j: at d + i * ldi + j * ldj, the lanes om[j]
   (the staging: ldi 16, ldj QX_CL_PC * 16, every lane; an NHWC output: ldi the row of all channels, ldj 16,
   the block's channels that exist). */
typedef struct qx_clout {
  int64_t ldi, ldj;
  __mmask16 om[QX_CL_NO];
} qx_clout;

/* NP pixels (byte offsets px[i] of their first tap in xs) x NO channel blocks (weights w, g->wstep bytes
   apart); stores pixel i of block j as ot says, from d. On the way it prefetches the npf lines from pf
   into L2 (T1), spread over its channel quads. */
ZI void zcl_tile(const int NP, const int NO, uint8_t *dst, const qx_clout *ot, const uint8_t *xs, const int64_t *px,
                 const int8_t *w, const qx_cl *g, const qx_clq *cq, int32_t z_y, int32_t act_lo, int32_t act_hi,
                 const int8_t *pf, int64_t npf) {
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
    uint8_t *d = dst + j * ot->ldj;
    const __mmask16 om = ot->om[j];
    __m128i v[QX_CL_NP];
    if (cq[j].fast) {
      QX_UNROLL for (int i = 0; i < NP; i++)
        v[i] = z_reqh8(acc[i][j], cq[j].m, cq[j].mo, cq[j].r, cq[j].sh, lo32, hi32, act_lo, act_hi);
    } else {
      const __m512i zy = _mm512_set1_epi64(z_y), lo = _mm512_set1_epi64(act_lo), hi = _mm512_set1_epi64(act_hi);
      QX_UNROLL for (int i = 0; i < NP; i++) v[i] = _mm512_cvtepi32_epi8(z_req(acc[i][j], &cq[j].q, zy, lo, hi));
    }
    if (om == 0xFFFF) QX_UNROLL for (int i = 0; i < NP; i++) _mm_storeu_si128((__m128i *)(d + i * ot->ldi), v[i]);
    else QX_UNROLL for (int i = 0; i < NP; i++) _mm_mask_storeu_epi8(d + i * ot->ldi, om, v[i]);
  }
}

/* The np pixels of a chunk in tiles of as equal sizes as QX_CL_NP allows (49 pixels: 5 x 5 + 4 x 6, never
   a lone pixel that would reload every weight line for one broadcast). Each tile prefetches the next npf
   lines from *pf (not past pf_end) and moves *pf on. */
ZP void zcl_tiles(const int NO, int64_t np, uint8_t *dst, const qx_clout *ot, const uint8_t *xs, const int64_t *px,
                  const int8_t *w, const qx_cl *g, const qx_clq *cq, int32_t z_y, int32_t act_lo, int32_t act_hi,
                  const int8_t **pf, const int8_t *pf_end, int64_t npf) {
  const int64_t nt = (np + QX_CL_NP - 1) / QX_CL_NP;
  for (int64_t ti = 0, t = 0; ti < nt; ti++) {
    const int64_t sz = (np - t) / (nt - ti); /* the later tiles take the remainder: sizes differ by 1 at most */
    uint8_t *s = dst + t * ot->ldi;
    const int64_t left = (pf_end - *pf) / 64, n = npf < left ? npf : left;
#define QX_CL_CASE(P, O) \
  case P: zcl_tile(P, O, s, ot, xs, px + t, w, g, cq, z_y, act_lo, act_hi, *pf, n); break;
#define QX_CL_SW(O)                                                                                              \
  switch ((int)sz) {                                                                                             \
    QX_CL_CASE(6, O)                                                                                             \
    QX_CL_CASE(5, O)                                                                                             \
    QX_CL_CASE(4, O)                                                                                             \
    QX_CL_CASE(3, O)                                                                                             \
    QX_CL_CASE(2, O)                                                                                             \
    default: zcl_tile(1, O, s, ot, xs, px + t, w, g, cq, z_y, act_lo, act_hi, *pf, n);                          \
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

/* n bytes of value v at d; n bytes from s to d, each xor flip (an i8 input shifted to u8). */
ZI void zcl_fill(uint8_t *d, int64_t n, uint8_t v) {
  const __m512i vv = _mm512_set1_epi8((char)v);
  for (int64_t j = 0; j < n; j += 64) _mm512_mask_storeu_epi8(d + j, qx_bits(n - j), vv);
}
ZI void zcl_copy(uint8_t *d, const uint8_t *s, int64_t n, uint8_t flip) {
  const __m512i f = _mm512_set1_epi8((char)flip);
  int64_t j = 0;
  for (; j + 64 <= n; j += 64) _mm512_storeu_si512(d + j, _mm512_xor_si512(_mm512_loadu_si512(s + j), f));
  if (j < n) {
    const __mmask64 k = qx_bits(n - j);
    _mm512_mask_storeu_epi8(d + j, k, _mm512_xor_si512(_mm512_maskz_loadu_epi8(k, s + j), f));
  }
}

/* An NHWC input (channels cg of C from xg, one image) into padded pixel-major rows: byte (r Wp + c) cg + k
   of xs is channel k of input row r - pt, column c - pl, z_x outside (Hp rows, then one row of z_x and
   256 bytes of slack, as zc4_convert's planes; the right padding of a row is the left padding of the
   next). Row copies only: the channels are already innermost. */
ZP void zcl_copy_nhwc(uint8_t *xs, const uint8_t *xg, int64_t C, int64_t cg, int64_t H, int64_t W, int64_t Hp,
                      int64_t Wp, int64_t pt, int64_t pl, uint8_t zx, uint8_t flip) {
  const uint8_t pad = (uint8_t)(zx ^ flip);
  const int64_t row = Wp * cg, right = (Wp - pl - W) * cg;
  uint8_t *d = xs;
  for (int64_t r = 0; r <= Hp; r++, d += row) {
    const int64_t ih = r - pt;
    if (ih < 0 || ih >= H) {
      zcl_fill(d, row, pad);
      continue;
    }
    zcl_fill(d, pl * cg, pad);
    const uint8_t *s = xg + ih * W * C;
    if (cg == C) zcl_copy(d + pl * cg, s, W * C, flip);
    else for (int64_t iw = 0; iw < W; iw++) zcl_copy(d + (pl + iw) * cg, s + iw * C, cg, flip);
    zcl_fill(d + (pl + W) * cg, right, pad);
  }
  zcl_fill(d, 256, 0); /* the slack: read by the last pixels, never stored */
}

ZI void zcl_conv(uint8_t *y, const uint8_t *x, const int xi8, const int8_t *wp, const int32_t *bias,
                 const int32_t *m, const int32_t *n, int64_t N, int64_t C, int64_t H, int64_t W, int64_t M,
                 int64_t OH, int64_t OW, int64_t KH, int64_t KW, int64_t sh, int64_t sw, int64_t pt, int64_t pl,
                 int64_t dh, int64_t dw, int64_t group, int32_t z_x, int32_t z_y, int32_t act_lo, int32_t act_hi,
                 uint8_t *scratch, int64_t x_nhwc, int64_t y_nhwc) {
  const int64_t cg = C / group, mg = M / group, Hp = (OH - 1) * sh + (KH - 1) * dh + 1;
  const int64_t pr = (OW - 1) * sw + (KW - 1) * dw + 1 - W - pl, Wp = W + (pl > pr ? pl : pr), P = OH * OW;
  const int64_t K = cg * KH * KW, nk4 = K / 4, mgp = (mg + 15) & ~(int64_t)15;
  /* the input's 4-channel groups: planes (NCHW input) or the pixels' channel runs (NHWC input) */
  const int64_t pb = x_nhwc ? cg : 4; /* bytes per padded pixel in one plane / row */
  const qx_cl g = {cg / 4, KH, KW, dh * Wp * pb, dw * pb, x_nhwc ? 4 : (Hp + 1) * Wp * 4, nk4 * 64};
  uint8_t *stg = scratch + qllc_round_up(cg * (Hp + 1) * Wp + 256, 64);
  const uint8_t flip = xi8 ? 0x80 : 0;
  /* An NHWC u8 input that no tap reads outside of (no padding, every window inside the image: Wp = W,
     Hp <= H) already is the padded pixel-major rows zcl_copy_nhwc would make: the tiles read it in place
     (only output pixels' taps are read, so the slack row is not needed). */
  const int in_place = x_nhwc && !flip && cg == C && pt == 0 && pl == 0 && Wp == W && Hp <= H;
  for (int64_t b = 0; b < N; b++)
    for (int64_t gi = 0; gi < group; gi++) {
      const uint8_t *xs = scratch;
      if (in_place) xs = x + b * H * W * C;
      else if (x_nhwc) zcl_copy_nhwc(scratch, x + b * H * W * C + gi * cg, C, cg, H, W, Hp, Wp, pt, pl, (uint8_t)z_x, flip);
      else zc4_convert(scratch, x + (b * C + gi * cg) * H * W, g.ncq, H, W, Hp, Wp, pt, pl, (uint8_t)z_x, flip);
      uint8_t *yg = y_nhwc ? y + b * P * M + gi * mg : y + (b * M + gi * mg) * P;
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
            px[i] = (oh * sh * Wp + ow * sw) * pb;
            if (++ow == OW) ow = 0, oh++;
          }
          if (y_nhwc) { /* straight into the pixels' channel runs */
            qx_clout ot = {M, 16, {0}};
            for (int j = 0; j < no; j++) ot.om[j] = (__mmask16)qx_bits(mg - ob - 16 * j);
            zcl_tiles(no, np, yg + p0 * M + ob, &ot, xs, px, wo, &g, cq, z_y, act_lo, act_hi, &pf, pf_end, npf);
            p0 += np;
            continue;
          }
          const qx_clout ot = {16, QX_CL_PC * 16, {0xFFFF, 0xFFFF, 0xFFFF, 0xFFFF}};
          zcl_tiles(no, np, stg, &ot, xs, px, wo, &g, cq, z_y, act_lo, act_hi, &pf, pf_end, npf);
          for (int j = 0; j < no; j++)
            for (int64_t s0 = 0; s0 < np; s0 += 16)
              zcl_tr16(yg + (ob + 16 * j) * P + p0 + s0, P, stg + j * (QX_CL_PC * 16) + s0 * 16, np - s0,
                       mg - ob - 16 * j);
          p0 += np;
        }
      }
    }
}

/* The entry points of both direct convs: qllc_k_<stem>_<in>_i8_<out>__avx512vnni calls drv, passing on
   the parameters its row's flags F add (kernels_variants.h: conv2dcl's ALT_NHWC, the layouts). */
#define QX_DIRECT_WRAP(stem, drv, TI, ti, TO, to, xi8, F)                                                      \
  QLLC_KERNEL __attribute__((target(QX_TZ))) void qllc_k_##stem##_##ti##_i8_##to##__avx512vnni(                 \
      TO *y, const TI *x, const int8_t *wp, const int32_t *bias_c, const int32_t *m, const int32_t *n,          \
      int64_t N, int64_t C, int64_t H, int64_t W, int64_t M, int64_t OH, int64_t OW, int64_t KH, int64_t KW,    \
      int64_t stride_h, int64_t stride_w, int64_t pad_top, int64_t pad_left, int64_t dil_h, int64_t dil_w,      \
      int64_t group, int32_t z_x, int32_t z_y, int32_t act_lo, int32_t act_hi,                                  \
      uint8_t *scratch QLLC_VX_PARAMS_##F) {                                                                    \
    drv((uint8_t *)y, (const uint8_t *)x, xi8, wp, bias_c, m, n, N, C, H, W, M, OH, OW, KH, KW, stride_h,      \
        stride_w, pad_top, pad_left, dil_h, dil_w, group, z_x, z_y, act_lo, act_hi, scratch QLLC_VX_ARGS_##F); \
  }
#define QX_DIRECT_WRAPS(stem, drv, F)                           \
  QX_DIRECT_WRAP(stem, drv, int8_t, i8, int8_t, i8, 1, F)       \
  QX_DIRECT_WRAP(stem, drv, int8_t, i8, uint8_t, u8, 1, F)      \
  QX_DIRECT_WRAP(stem, drv, uint8_t, u8, int8_t, i8, 0, F)      \
  QX_DIRECT_WRAP(stem, drv, uint8_t, u8, uint8_t, u8, 0, F)
QX_DIRECT_WRAPS(conv2dc4, zc4_conv, ALT)
QX_DIRECT_WRAPS(conv2dcl, zcl_conv, ALT_NHWC)
#undef QX_DIRECT_WRAPS
#undef QX_DIRECT_WRAP
