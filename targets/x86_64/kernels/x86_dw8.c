/* targets/x86_64/kernels/x86_dw8.c: the AVX-512 (VNNI + VBMI) variant of the fused 8-bit depthwise
 * Conv (kernels_x86_dw8.h), bit-identical to the scalar qllc_k_conv2d_<ti>_i8_<to> of q_layers.c with
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

#include "kernels_x86_dw8.h"
#include "q_common.h"

#define DW_T "avx512f,avx512bw,avx512vl,avx512dq,avx512vnni,avx512vbmi"
#define DI static inline __attribute__((always_inline, target(DW_T)))
#define DW_U 4     /* blocks of 16 output pixels per group */
#define DW_MAXQ 4  /* quads per kernel row (KW <= 16) */
#define DW_MAXW 64 /* entries of the per-channel weight table (KH * Q) */
#define DW_UNROLL _Pragma("GCC unroll 4")

typedef uint32_t dw_u32u __attribute__((may_alias, aligned(1)));

QLLC_INLINE uint64_t dw_bits(int64_t n) { return n <= 0 ? 0 : n >= 64 ? ~(uint64_t)0 : ((uint64_t)1 << n) - 1; }

typedef struct dw_rq {
  __m512i m, r, n, lo, hi, zy; /* m, rounding term, shift (int64 lanes); clamp bounds - z_y (int64); z_y (int32) */
} dw_rq;

/* REQUANT + z_y + clamp of 16 int32 accumulators: int32 lanes inside [act_lo, act_hi]. */
DI __m512i dw_req(__m512i acc, const dw_rq *q) {
  __m512i pe = _mm512_mul_epi32(acc, q->m), po = _mm512_mul_epi32(_mm512_srli_epi64(acc, 32), q->m);
  pe = _mm512_srav_epi64(_mm512_add_epi64(pe, q->r), q->n);
  po = _mm512_srav_epi64(_mm512_add_epi64(po, q->r), q->n);
  pe = _mm512_min_epi64(_mm512_max_epi64(pe, q->lo), q->hi);
  po = _mm512_min_epi64(_mm512_max_epi64(po, q->lo), q->hi);
  return _mm512_add_epi32(_mm512_mask_blend_epi32(0xAAAA, pe, _mm512_slli_epi64(po, 32)), q->zy);
}

/* One group of U blocks of 16 output pixels of an output row (cnt of them valid, 1 <= cnt <= 16 * U):
   block u's window starts at p_row(kh) + s0 + u * bstep. */
DI void dw_group(uint8_t *yo, const uint8_t *plane, const uint8_t *padrow, int64_t RS, int64_t H, int64_t ih0,
                 int64_t dil_h, int64_t KH, int64_t Q, const int32_t *wq, const __m512i *idx, int64_t s0,
                 int64_t bstep, const int U, int64_t cnt, __m512i b0, const dw_rq *rq) {
  __m512i acc[DW_U];
  DW_UNROLL for (int u = 0; u < U; u++) acc[u] = b0;
  for (int64_t kh = 0; kh < KH; kh++) {
    const int64_t ih = ih0 + kh * dil_h;
    const uint8_t *p = ((uint64_t)ih < (uint64_t)H ? plane + ih * RS : padrow) + s0;
    for (int64_t q = 0; q < Q; q++) {
      const __m512i w = _mm512_set1_epi32(wq[kh * Q + q]), ix = idx[q];
      DW_UNROLL for (int u = 0; u < U; u++)
        acc[u] = _mm512_dpbusd_epi32(acc[u], _mm512_permutexvar_epi8(ix, _mm512_loadu_si512(p + u * bstep)), w);
    }
  }
  DW_UNROLL for (int u = 0; u < U; u++) {
    const __m128i b = _mm512_cvtepi32_epi8(dw_req(acc[u], rq));
    const int64_t c = cnt - 16 * u;
    if (c >= 16) _mm_storeu_si128((__m128i *)(yo + 16 * u), b);
    else _mm_mask_storeu_epi8(yo + 16 * u, (__mmask16)dw_bits(c), b);
  }
}

DI void dw_body(uint8_t *y, const uint8_t *x, const int8_t *wp, const int32_t *bias_c, const int32_t *m,
                const int32_t *n, int64_t N, int64_t C, int64_t H, int64_t W, int64_t OH, int64_t OW, int64_t KH,
                int64_t KW, int64_t stride_h, int64_t stride_w, int64_t pad_top, int64_t pad_left, int64_t dil_h,
                int64_t dil_w, int32_t z_x, int32_t z_y, int32_t act_lo, int32_t act_hi, uint8_t *scratch,
                const uint8_t flip) {
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
  rq.zy = _mm512_set1_epi32(z_y);
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
      for (int64_t oh = 0; oh < OH; oh++) {
        const int64_t ih0 = oh * stride_h - pad_top;
        uint8_t *yo = yc + oh * OW;
        for (int64_t ow0 = 0; ow0 < OW; ow0 += 16 * DW_U) {
          const int64_t cnt = OW - ow0 < 16 * DW_U ? OW - ow0 : 16 * DW_U, U = (cnt + 15) / 16;
          const int64_t s0 = ow0 * stride_w, bstep = 16 * stride_w;
          if (s0 + (U - 1) * bstep + 64 <= RS) {
#define DW_G(u) dw_group(yo + ow0, plane, padrow, RS, H, ih0, dil_h, KH, Q, wq, idx, s0, bstep, u, cnt, b0, &rq)
            if (U == 4) DW_G(4);
            else if (U == 3) DW_G(3);
            else if (U == 2) DW_G(2);
            else DW_G(1);
#undef DW_G
            continue;
          }
          /* a block whose window would end past the row starts past the image and the kernel's reach
             into it: every tap is right padding, so it reads the row's last 64 bytes (all z_x) */
          for (int64_t u = 0; u < U; u++) {
            const int64_t o = ow0 + 16 * u, s = o * stride_w;
            dw_group(yo + o, plane, padrow, RS, H, ih0, dil_h, KH, Q, wq, idx, s + 64 <= RS ? s : RS - 64, 0, 1,
                     OW - o < 16 ? OW - o : 16, b0, &rq);
          }
        }
      }
    }
}

#define DW8_KERNEL(TI, ti, TO, to, FLIP)                                                                          \
  QLLC_KERNEL __attribute__((target(DW_T))) void qllc_k_dwconv2d_##ti##_i8_##to##__avx512vnni(                   \
      TO *y, const TI *x, const int8_t *wp, const int32_t *bias_c, const int32_t *m, const int32_t *n, int64_t N, \
      int64_t C, int64_t H, int64_t W, int64_t M, int64_t OH, int64_t OW, int64_t KH, int64_t KW, int64_t stride_h, \
      int64_t stride_w, int64_t pad_top, int64_t pad_left, int64_t dil_h, int64_t dil_w, int64_t group,          \
      int32_t z_x, int32_t z_y, int32_t act_lo, int32_t act_hi, uint8_t *scratch) {                              \
    (void)M, (void)group;                                                                                        \
    dw_body((uint8_t *)y, (const uint8_t *)x, wp, bias_c, m, n, N, C, H, W, OH, OW, KH, KW, stride_h, stride_w,  \
            pad_top, pad_left, dil_h, dil_w, z_x, z_y, act_lo, act_hi, scratch, FLIP);                           \
  }
DW8_KERNEL(int8_t, i8, int8_t, i8, 0x80)
DW8_KERNEL(int8_t, i8, uint8_t, u8, 0x80)
DW8_KERNEL(uint8_t, u8, int8_t, i8, 0)
DW8_KERNEL(uint8_t, u8, uint8_t, u8, 0)
