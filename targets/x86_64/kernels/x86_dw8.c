/* targets/x86_64/kernels/x86_dw8.c: the AVX-512 (VNNI + VBMI) variant of the fused 8-bit depthwise
 * Conv (rows in variants.def), bit-identical to the scalar qllc_k_conv2d_<ti>_i8_<to> of q_layers.c with
 * group == C == M.
 *
 * Per image and channel, the input plane is copied into scratch as u8 (an i8 input is shifted by
 * x ^ 0x80; qllc_pack_bias8 folded the -128 * sum_k w correction into bias_c) with pad_left columns of
 * z_x before each row and at least 64 after it (qllc_dw_pitch); one more row of z_x stands for every
 * padded row, above or below the image. The padding columns are written once per call (z_x is the
 * same for every channel); only the W data columns of each row are copied per channel.
 *
 * An output row is computed in groups of up to DW_U blocks of 16 output pixels (one int32 lane each).
 * For each kernel row kh and each quad q of 4 taps along kw, one vpermb of the 64-byte window that
 * starts at the block's first input column (row of ih, column ow0 * stride_w in padded coordinates)
 * gathers, in 32-bit lane j, the 4 bytes at j * stride_w + (4q + t) * dil_w (t = 0..3; taps past KW
 * read byte 0 against a zero weight), and one vpdpbusd adds their products with the channel's 4
 * weights w[kh][4q .. 4q+3] (broadcast). qllc_dw_fits guarantees 15 * stride_w + (KW-1) * dil_w < 64.
 * vpdpbusd wraps modulo 2^32 like the scalar int32 accumulator, so any order gives its exact sum.
 * A block whose window would leave the padded row (only with a right padding larger than the kernel
 * reaches) has all its taps in the right padding: it reads the row's last 64 bytes, all z_x.
 *
 * Requantization exactly REQUANT (kernels_q.h) per channel: the even and odd int32 lanes multiplied
 * by m into int64 (vpmuldq), + (1 << n) >> 1, arithmetic shift by n, clamped to [act_lo - z_y,
 * act_hi - z_y] in int64, + z_y, then the low byte of each lane, stored with a byte mask at the tail. */
#include <immintrin.h>

#include "q_common.h"
#include "variants.h"

#define DW_T "avx512f,avx512bw,avx512vl,avx512dq,avx512vnni,avx512vbmi"
#define DI static inline __attribute__((always_inline, target(DW_T)))
#define DW_U 4     /* blocks of 16 output pixels per group */
#define DW_MAXQ 4  /* quads per kernel row (KW <= 16) */
#define DW_MAXW 64 /* entries of the per-channel weight table (KH * Q) */
#define DW_UNROLL _Pragma("GCC unroll 4")

typedef uint32_t dw_u32u __attribute__((may_alias, aligned(1)));

QLLC_INLINE uint64_t dw_bits(int64_t n) { return n <= 0 ? 0 : n >= 64 ? ~(uint64_t)0 : ((uint64_t)1 << n) - 1; }

typedef struct dw_rq {
  __m512i m, r, n, lo, hi; /* m, rounding term, shift, clamp bounds - z_y (int64 lanes) */
  __m512i zy, perm;        /* z_y (int16 lanes); the byte order of the packed groups (dw_group) */
} dw_rq;

/* REQUANT of 16 int32 accumulators, clamped to [act_lo - z_y, act_hi - z_y]: int32 lanes. */
DI __m512i dw_req(__m512i acc, const dw_rq *q) {
  __m512i pe = _mm512_mul_epi32(acc, q->m), po = _mm512_mul_epi32(_mm512_srli_epi64(acc, 32), q->m);
  pe = _mm512_srav_epi64(_mm512_add_epi64(pe, q->r), q->n);
  po = _mm512_srav_epi64(_mm512_add_epi64(po, q->r), q->n);
  pe = _mm512_min_epi64(_mm512_max_epi64(pe, q->lo), q->hi);
  po = _mm512_min_epi64(_mm512_max_epi64(po, q->lo), q->hi);
  return _mm512_mask_shuffle_epi32(pe, 0xAAAA, po, _MM_PERM_CDAB); /* po's low dwords into the odd lanes */
}

/* One group of RR output rows (oh, oh + 1, ...: first input row ih0, then + ihstep) x BU blocks of 16
   output pixels (cnt of each row valid, 1 <= cnt <= 16 * BU; RR * BU <= DW_U); block (r, j) reads its
   windows at p_row(ih0 + r * ihstep + kh * dil_h) + s0 + j * bstep. The results of the 4 blocks are
   packed to bytes together (int32 -> int16 -> int8 packs, then one vpermb back to pixel order) and
   stored with one masked store per row. */
DI void dw_group(uint8_t *yo, int64_t OW, const uint8_t *plane, const uint8_t *padrow, int64_t RS, int64_t H,
                 int64_t ih0, int64_t ihstep, int64_t dil_h, int64_t KH, int64_t Q, const int32_t *wq,
                 const __m512i *idx, int64_t s0, int64_t bstep, const int RR, const int BU, int64_t cnt, __m512i b0,
                 const dw_rq *rq, const int out_u8) {
  __m512i acc[DW_U];
  DW_UNROLL for (int u = 0; u < RR * BU; u++) acc[u] = b0;
  for (int64_t kh = 0; kh < KH; kh++) {
    const uint8_t *p[DW_U];
    DW_UNROLL for (int r = 0; r < RR; r++) {
      const int64_t ih = ih0 + r * ihstep + kh * dil_h;
      p[r] = ((uint64_t)ih < (uint64_t)H ? plane + ih * RS : padrow) + s0;
    }
    for (int64_t q = 0; q < Q; q++) {
      const __m512i w = _mm512_set1_epi32(wq[kh * Q + q]), ix = idx[q];
      DW_UNROLL for (int u = 0; u < RR * BU; u++)
        acc[u] = _mm512_dpbusd_epi32(
            acc[u], _mm512_permutexvar_epi8(ix, _mm512_loadu_si512(p[u / BU] + (u % BU) * bstep)), w);
    }
  }
  __m512i v[DW_U];
  DW_UNROLL for (int u = 0; u < DW_U; u++) v[u] = u < RR * BU ? dw_req(acc[u], rq) : _mm512_setzero_si512();
  /* lane l of 128 bits: words v0[4l..4l+3], v1[4l..4l+3] | v2, v3; then bytes v0, v1, v2, v3 [4l..4l+3] */
  const __m512i a = _mm512_add_epi16(_mm512_packs_epi32(v[0], v[1]), rq->zy);
  const __m512i b = _mm512_add_epi16(_mm512_packs_epi32(v[2], v[3]), rq->zy);
  const __m512i o = _mm512_permutexvar_epi8(rq->perm, out_u8 ? _mm512_packus_epi16(a, b) : _mm512_packs_epi16(a, b));
  DW_UNROLL for (int r = 0; r < RR; r++) { /* row r: bytes [16 * BU * r, + cnt) */
    const int64_t at = 16 * BU * r;
    _mm512_mask_storeu_epi8((void *)((uintptr_t)yo + (uintptr_t)(r * OW - at)), (__mmask64)(dw_bits(cnt) << at), o);
  }
}

DI void dw_body(uint8_t *y, const uint8_t *x, const int8_t *wp, const int32_t *bias_c, const int32_t *m,
                const int32_t *n, int64_t N, int64_t C, int64_t H, int64_t W, int64_t OH, int64_t OW, int64_t KH,
                int64_t KW, int64_t stride_h, int64_t stride_w, int64_t pad_top, int64_t pad_left, int64_t dil_h,
                int64_t dil_w, int32_t z_x, int32_t z_y, int32_t act_lo, int32_t act_hi, uint8_t *scratch,
                const uint8_t flip, const int out_u8) {
  const int64_t RS = qllc_dw_pitch(W, pad_left), Q = (KW + 3) / 4, R = qllc_dw_row(KH * KW);
  const uint8_t zx = (uint8_t)((uint8_t)z_x ^ flip);
  uint8_t *plane = scratch, *padrow = scratch + H * RS;
  const __m512i vz = _mm512_set1_epi8((char)zx), vf = _mm512_set1_epi8((char)flip);
  for (int64_t j = 0; j < (H + 1) * RS; j += 64) _mm512_storeu_si512(scratch + j, vz); /* RS: multiple of 64 */

  __m512i idx[DW_MAXQ]; /* quad q: lane j byte t reads window byte j * stride_w + (4q + t) * dil_w */
  for (int64_t q = 0; q < Q; q++) {
    uint8_t t[64];
    for (int64_t j = 0; j < 16; j++)
      for (int64_t tt = 0; tt < 4; tt++) {
        const int64_t k = 4 * q + tt;
        t[4 * j + tt] = (uint8_t)(k < KW ? j * stride_w + k * dil_w : 0);
      }
    idx[q] = _mm512_loadu_si512(t);
  }
  dw_rq rq;
  rq.lo = _mm512_set1_epi64((int64_t)act_lo - z_y), rq.hi = _mm512_set1_epi64((int64_t)act_hi - z_y);
  rq.zy = _mm512_set1_epi16((int16_t)z_y);
  {
    uint8_t t[64]; /* output pixel 16u + 4l + i sits at byte 16l + 4u + i after the packs */
    for (int u = 0; u < 4; u++)
      for (int l = 0; l < 4; l++)
        for (int i = 0; i < 4; i++) t[16 * u + 4 * l + i] = (uint8_t)(16 * l + 4 * u + i);
    rq.perm = _mm512_loadu_si512(t);
  }
  int32_t wq[DW_MAXW];

  for (int64_t b = 0; b < N; b++)
    for (int64_t c = 0; c < C; c++) {
      const uint8_t *xc = x + (b * C + c) * H * W;
      for (int64_t ih = 0; ih < H; ih++) /* the channel's rows, shifted to u8, between the padding */
        for (int64_t j = 0; j < W; j += 64) {
          const __mmask64 k = dw_bits(W - j);
          const __m512i v = _mm512_xor_si512(_mm512_maskz_loadu_epi8(k, xc + ih * W + j), vf);
          _mm512_mask_storeu_epi8(plane + ih * RS + pad_left + j, k, v);
        }
      const uint8_t *wr = (const uint8_t *)wp + c * R;
      for (int64_t kh = 0; kh < KH; kh++)
        for (int64_t q = 0; q < Q; q++) {
          uint32_t v = *(const dw_u32u *)(wr + kh * KW + 4 * q);
          const int64_t nv = KW - 4 * q; /* taps of this quad inside the kernel row */
          if (nv < 4) v &= ((uint32_t)1 << (8 * nv)) - 1;
          wq[kh * Q + q] = (int32_t)v;
        }
      const int32_t nc = n[c];
      rq.m = _mm512_set1_epi64(m[c]), rq.n = _mm512_set1_epi64(nc);
      rq.r = _mm512_set1_epi64(nc > 0 ? (int64_t)1 << (nc - 1) : 0);
      const __m512i b0 = _mm512_set1_epi32(bias_c[c]);
      uint8_t *yc = y + (b * C + c) * OH * OW;
      /* narrow outputs: 4 rows x 1 block or 2 rows x 2 blocks per group (never past the row: a window
         starts at most 16 * stride_w <= 64 bytes into a row of >= 128) */
      const int64_t RR = OW <= 16 ? 4 : OW <= 32 ? 2 : 1, bstep = 16 * stride_w;
      int64_t oh = 0;
#define DW_G(rr, bu, o0, s, cnt_)                                                                                \
  dw_group(yc + oh * OW + (o0), OW, plane, padrow, RS, H, oh * stride_h - pad_top, stride_h, dil_h, KH, Q, wq, \
           idx, s, bstep, rr, bu, cnt_, b0, &rq, out_u8)
      if (RR == 4)
        for (; oh + 4 <= OH; oh += 4) DW_G(4, 1, 0, 0, OW);
      if (RR == 2)
        for (; oh + 2 <= OH; oh += 2) DW_G(2, 2, 0, 0, OW);
      for (; oh < OH; oh++)
        for (int64_t ow0 = 0; ow0 < OW; ow0 += 16 * DW_U) {
          const int64_t cnt = OW - ow0 < 16 * DW_U ? OW - ow0 : 16 * DW_U, U = (cnt + 15) / 16;
          const int64_t s0 = ow0 * stride_w;
          if (s0 + (U - 1) * bstep + 64 <= RS) {
            if (U == 4) DW_G(1, 4, ow0, s0, cnt);
            else if (U == 3) DW_G(1, 3, ow0, s0, cnt);
            else if (U == 2) DW_G(1, 2, ow0, s0, cnt);
            else DW_G(1, 1, ow0, s0, cnt);
            continue;
          }
          /* a block whose window would end past the row starts past the image and the kernel's reach
             into it: every tap is right padding, so it reads the row's last 64 bytes (all z_x) */
          for (int64_t u = 0; u < U; u++) {
            const int64_t o = ow0 + 16 * u, s = o * stride_w;
            DW_G(1, 1, o, s + 64 <= RS ? s : RS - 64, OW - o < 16 ? OW - o : 16);
          }
        }
#undef DW_G
    }
}

#define DW8_KERNEL(TI, ti, TO, to, FLIP, OUT_U8)                                                                  \
  QLLC_KERNEL __attribute__((target(DW_T))) void qllc_k_dwconv2d_##ti##_i8_##to##__avx512vnni(                   \
      TO *y, const TI *x, const int8_t *wp, const int32_t *bias_c, const int32_t *m, const int32_t *n, int64_t N, \
      int64_t C, int64_t H, int64_t W, int64_t M, int64_t OH, int64_t OW, int64_t KH, int64_t KW, int64_t stride_h, \
      int64_t stride_w, int64_t pad_top, int64_t pad_left, int64_t dil_h, int64_t dil_w, int64_t group,          \
      int32_t z_x, int32_t z_y, int32_t act_lo, int32_t act_hi, uint8_t *scratch) {                              \
    (void)M, (void)group;                                                                                        \
    dw_body((uint8_t *)y, (const uint8_t *)x, wp, bias_c, m, n, N, C, H, W, OH, OW, KH, KW, stride_h, stride_w,  \
            pad_top, pad_left, dil_h, dil_w, z_x, z_y, act_lo, act_hi, scratch, FLIP, OUT_U8);                           \
  }
DW8_KERNEL(int8_t, i8, int8_t, i8, 0x80, 0)
DW8_KERNEL(int8_t, i8, uint8_t, u8, 0x80, 1)
DW8_KERNEL(uint8_t, u8, int8_t, i8, 0, 0)
DW8_KERNEL(uint8_t, u8, uint8_t, u8, 0, 1)

/* The float FC and Conv variants (issue 26) end this translation unit (x86_f32.h says why). */
#include "x86_f32.h"
#include "x86_f32dw.h"   /* and the float depthwise conv */
#include "x86_f32pool.h" /* and the float max pool */
