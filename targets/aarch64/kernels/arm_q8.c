/* targets/aarch64/kernels/arm_q8.c: aarch64 variants of the fused 8-bit Conv and FC layers
 * (rows in variants.def), bit-identical to the scalar qllc_k_conv2d_* / qllc_k_fc_* of q_layers.c.
 *
 * They read the operands the x86_64 variants read (src/lower/pack.c): weights in QLLC_LAYOUT_K4N16
 * (FC) / QLLC_LAYOUT_ROWS_K4 (conv), and bias_c for u8 activations x s8 weights (an i8 input is
 * shifted to u8, x ^ 0x80, and bias_c already holds the -128 * sum_k w correction). Every sum is an
 * int32 accumulation modulo 2^32, like the scalar kernel's, so the order does not matter.
 *
 *  - i8mm: USMMLA (vusmmlaq_s32) multiplies a 2x8 u8 block by a 2x8 s8 block into a 2x2 int32 tile:
 *    exactly the u8 x s8 contract. FC: a pair of input rows (8 bytes each, read in place) against a
 *    pair of channels; the K4N16 line pair (k4, k4 + 1) gives the 8 reductions of 4 channels with one
 *    zip. Conv: the weights' ROWS_K4 rows give channel pairs, the activation panel pixel pairs.
 *  - dotprod: UDOT (vdotq_laneq_u32) is u8 x u8 only (SDOT s8 x s8). The weights are shifted to u8 in
 *    the register (w + 128 = w ^ 0x80) and the extra 128 * sum_k x_u subtracted: sum x_u * (w + 128)
 *    - 128 * sum x_u = sum x_u * w, modulo 2^32. The row sums (FC) or pixel sums (conv) are per
 *    activation, so they cost one UDOT per 16 activation bytes, shared by every output channel.
 *
 * FC reads the input rows where they are (a row's last partial 16 bytes go through a zeroed copy), so
 * it needs no scratch. Conv is an implicit GEMM per image and group over a panel of up to 64 output
 * pixels packed in the scratch buffer (qllc_scratch_conv(K, 1) bytes): [Kp4/4][64][4] u8 (dotprod) or
 * [Kp8/8][P][8] (i8mm, P = qllc_arm_mm_panel(K) pixels), taps in the weights' order (c, kh, kw),
 * padding reads z_x (shifted like the input), taps past K read 0: each tap's pixels copied as a row,
 * then 4 (ST4) or 8 (ZIP + ST4) rows interleaved at a time.
 *
 * Requantization in vectors, exactly REQUANT: int64 products (smull), + (1 << n) >> 1, arithmetic
 * shift by n (sshl by -n), saturating narrow to int32, saturating + z_y, clamp: the saturations cannot
 * change a result that the clamp to [act_lo, act_hi] (inside the output type) decides anyway. */
#include <arm_neon.h>

#include "q_common.h"
#include "variants.h"

/* The i8mm conv's activation panel: pixels a panel (a multiple of 16, at most QLLC_CONV_PB) such that
   the panel of K rounded up to 8 rows fits in qllc_scratch_conv(K, 1) bytes. */
static inline int64_t qllc_arm_mm_panel(int64_t K) {
  const int64_t kp4 = qllc_round_up(K, 4), kp8 = qllc_round_up(K, 8);
  return kp8 == kp4 ? QLLC_CONV_PB : kp4 * QLLC_CONV_PB / kp8 / 16 * 16;
}

/* clang and gcc spell the feature sets differently (gcc's arm_neon.h wants the architecture level) */
#ifdef __clang__
#define QA_T_DOT "dotprod"
#define QA_T_MM "dotprod,i8mm"
#else
#define QA_T_DOT "arch=armv8.2-a+dotprod"
#define QA_T_MM "arch=armv8.2-a+dotprod+i8mm"
#endif
#define QA_INL static inline __attribute__((always_inline))
#define QA_DOT static inline __attribute__((always_inline, target(QA_T_DOT)))
#define QA_MM static inline __attribute__((always_inline, target(QA_T_MM)))
#define QA_UNROLL _Pragma("GCC unroll 16")

/* ---- shared: requantization, stores, panels ------------------------------------------------------ */

/* REQUANT + z_y + clamp of 4 lanes with per-lane m, n. */
QA_INL int32x4_t qa_req(int32x4_t acc, int32x4_t m, int32x4_t n, int32x4_t zy, int32x4_t lo, int32x4_t hi) {
  n = vmaxq_s32(n, vdupq_n_s32(0)); /* REQUANT shifts only for n > 0 */
  const int64x2_t nl = vmovl_s32(vget_low_s32(n)), nh = vmovl_high_s32(n), one = vdupq_n_s64(1);
  const int64x2_t rl = vshlq_s64(one, vsubq_s64(nl, one)), rh = vshlq_s64(one, vsubq_s64(nh, one)); /* n = 0: 0 */
  int64x2_t pl = vmull_s32(vget_low_s32(acc), vget_low_s32(m)), ph = vmull_high_s32(acc, m);
  pl = vshlq_s64(vaddq_s64(pl, rl), vnegq_s64(nl));
  ph = vshlq_s64(vaddq_s64(ph, rh), vnegq_s64(nh));
  int32x4_t v = vqaddq_s32(vcombine_s32(vqmovn_s64(pl), vqmovn_s64(ph)), zy);
  return vminq_s32(vmaxq_s32(v, lo), hi);
}

/* 16 values (already inside the output type's range) to bytes; the first cnt stored. */
QA_INL void qa_store16(uint8_t *d, int32x4_t a, int32x4_t b, int32x4_t c, int32x4_t e, int64_t cnt) {
  const int16x8_t h0 = vcombine_s16(vmovn_s32(a), vmovn_s32(b)), h1 = vcombine_s16(vmovn_s32(c), vmovn_s32(e));
  const uint8x16_t v = vreinterpretq_u8_s8(vcombine_s8(vmovn_s16(h0), vmovn_s16(h1)));
  if (cnt >= 16) {
    vst1q_u8(d, v);
    return;
  }
  uint8_t t[16];
  vst1q_u8(t, v);
  for (int64_t i = 0; i < cnt; i++) d[i] = t[i];
}

/* Interleaves G (4 or 8) tap rows of PP pixels (PP a multiple of 16) into the panel block at d:
   pixel j's G bytes at d + j * G, tap t's byte at + t. G = 4: ST4 of bytes; G = 8: pairs of taps zipped
   into 16-bit elements, then ST4 of those. */
QA_INL void qa_interleave(uint8_t *d, uint8_t (*rows)[QLLC_CONV_PB], const int64_t G, int64_t PP) {
  for (int64_t v = 0; v < PP; v += 16) {
    if (G == 4) {
      uint8x16x4_t q = {{vld1q_u8(rows[0] + v), vld1q_u8(rows[1] + v), vld1q_u8(rows[2] + v), vld1q_u8(rows[3] + v)}};
      vst4q_u8(d + v * 4, q);
    } else {
      uint8x16_t r[8];
      QA_UNROLL for (int t = 0; t < 8; t++) r[t] = vld1q_u8(rows[t] + v);
      uint16x8x4_t lo, hi;
      QA_UNROLL for (int t = 0; t < 4; t++) {
        lo.val[t] = vreinterpretq_u16_u8(vzip1q_u8(r[2 * t], r[2 * t + 1])); /* pixels v .. v+7 */
        hi.val[t] = vreinterpretq_u16_u8(vzip2q_u8(r[2 * t], r[2 * t + 1])); /* pixels v+8 .. v+15 */
      }
      vst4q_u16((uint16_t *)(d + v * 8), lo);
      vst4q_u16((uint16_t *)(d + v * 8 + 64), hi);
    }
  }
}

/* The activation panel of output pixels p0 .. p0+np-1 (flattened oh * OW + ow) of one image and group:
   tap k of pixel j at ((k / G) * PP + j) * G + k % G, k in the weights' order (c, kh, kw); padding reads
   zu (z_x as shifted), taps K .. Kp-1 read 0. Each tap's pixels are built as a contiguous row (a plain
   copy for stride 1, which the compiler vectorizes), G rows at a time interleaved (qa_interleave).
   Pixels np .. PP-1 hold whatever the rows held (never stored). */
QA_INL void qa_pack(uint8_t *panel, const uint8_t *xg, int64_t Cg, int64_t H, int64_t W, int64_t OW, int64_t KH,
                    int64_t KW, int64_t sh, int64_t sw, int64_t pt, int64_t pl, int64_t dh, int64_t dw, int64_t p0,
                    int64_t np, const int64_t G, int64_t PP, int64_t Kp, uint8_t zu, uint8_t flip) {
  uint8_t rows[8][QLLC_CONV_PB] __attribute__((aligned(16)));
  __builtin_memset(rows, 0, sizeof rows);
  int64_t k = 0;
  for (int64_t c = 0; c < Cg; c++)
    for (int64_t kh = 0; kh < KH; kh++)
      for (int64_t kw = 0; kw < KW; kw++, k++) {
        qk_tap_row_u8(rows[k % G], xg + c * H * W, H, W, OW, sh, sw, kh * dh - pt, kw * dw - pl, p0, np, zu, flip);
        if (k % G == G - 1) qa_interleave(panel + (k / G) * PP * G, rows, G, PP);
      }
  if (k % G) { /* taps K .. Kp-1: zero rows */
    for (int64_t r = k % G; r < G; r++) __builtin_memset(rows[r], 0, QLLC_CONV_PB);
    qa_interleave(panel + (k / G) * PP * G, rows, G, PP);
    k += G - k % G;
  }
  (void)Kp;
}

/* ---- FC, dotprod ---------------------------------------------------------------------------------- */
/* R rows (1..4) from row i0 against the 16 channels of block nb: acc[r][j] holds channels 4j .. 4j+3. */
QA_DOT void qa_fc_dot_tile(const int R, uint8_t *y, const uint8_t *x, const uint8_t *wb, const int32_t *bb,
                           const int32_t *mb, const int32_t *nbv, int64_t i0, int64_t N, int64_t K, int64_t nk4,
                           int64_t ch, uint8_t flip, int32_t z_y, int32_t lo, int32_t hi) {
  const uint8x16_t f = vdupq_n_u8(flip), w80 = vdupq_n_u8(0x80), ones = vdupq_n_u8(1);
  uint32x4_t acc[4][4], rs[4];
  QA_UNROLL for (int r = 0; r < 4; r++) {
    rs[r] = vdupq_n_u32(0);
    QA_UNROLL for (int j = 0; j < 4; j++) acc[r][j] = vdupq_n_u32(0);
  }
  uint8x16_t X[4], Wv[4];
#define QA_FC_DOT_STEP(l)                                                                                    \
  {                                                                                                          \
    const uint8_t *wl = wb + (k16 * 4 + (l)) * 64;                                                           \
    QA_UNROLL for (int j = 0; j < 4; j++) Wv[j] = veorq_u8(vld1q_u8(wl + 16 * j), w80);                      \
    QA_UNROLL for (int r = 0; r < R; r++)                                                                    \
      QA_UNROLL for (int j = 0; j < 4; j++) acc[r][j] = vdotq_laneq_u32(acc[r][j], Wv[j], X[r], (l));        \
  }
  int64_t k16 = 0;
  for (; k16 * 16 + 16 <= K; k16++) {
    QA_UNROLL for (int r = 0; r < R; r++) {
      X[r] = veorq_u8(vld1q_u8(x + (i0 + r) * K + k16 * 16), f);
      rs[r] = vdotq_u32(rs[r], X[r], ones);
    }
    QA_FC_DOT_STEP(0) QA_FC_DOT_STEP(1) QA_FC_DOT_STEP(2) QA_FC_DOT_STEP(3)
  }
  if (k16 * 16 < K) { /* the last K % 16 reductions: a zeroed copy; lines past Kp4 / 4 do not exist */
    const int64_t rem = K - k16 * 16, nl = nk4 - k16 * 4;
    QA_UNROLL for (int r = 0; r < R; r++) {
      uint8_t t[16];
      for (int64_t i = 0; i < 16; i++) t[i] = i < rem ? x[(i0 + r) * K + k16 * 16 + i] ^ flip : 0;
      X[r] = vld1q_u8(t);
      rs[r] = vdotq_u32(rs[r], X[r], ones);
    }
    QA_FC_DOT_STEP(0)
    if (nl > 1) QA_FC_DOT_STEP(1)
    if (nl > 2) QA_FC_DOT_STEP(2)
    if (nl > 3) QA_FC_DOT_STEP(3)
  }
#undef QA_FC_DOT_STEP
  const int32x4_t zy = vdupq_n_s32(z_y), l32 = vdupq_n_s32(lo), h32 = vdupq_n_s32(hi);
  QA_UNROLL for (int r = 0; r < R; r++) {
    const uint32x4_t corr = vdupq_n_u32(vaddvq_u32(rs[r]) << 7); /* rs: 4 partial sums */
    int32x4_t v[4];
    QA_UNROLL for (int j = 0; j < 4; j++) {
      const uint32x4_t a = vsubq_u32(vaddq_u32(acc[r][j], vreinterpretq_u32_s32(vld1q_s32(bb + 4 * j))), corr);
      v[j] = qa_req(vreinterpretq_s32_u32(a), vld1q_s32(mb + 4 * j), vld1q_s32(nbv + 4 * j), zy, l32, h32);
    }
    qa_store16(y + (i0 + r) * N, v[0], v[1], v[2], v[3], ch);
  }
}

/* bias, m and n of the 16 channels of block nb (zeros past N) */
QA_INL void qa_block_params(int32_t *bb, int32_t *mb, int32_t *nbv, const int32_t *bias, const int32_t *m,
                            const int32_t *n, int64_t c0, int64_t ch) {
  for (int64_t j = 0; j < 16; j++) {
    bb[j] = j < ch ? bias[c0 + j] : 0;
    mb[j] = j < ch ? m[c0 + j] : 0;
    nbv[j] = j < ch ? n[c0 + j] : 0;
  }
}

/* ---- FC, i8mm ------------------------------------------------------------------------------------- */
/* RP row pairs (1..2) from row i0 (the last pair of an odd count repeats its row) against the 16
   channels of block nb: acc[p][q] is the 2x2 tile (rows 2p, 2p+1) x (channels 2q, 2q+1). */
QA_MM void qa_fc_mm_tile(const int RP, uint8_t *y, const uint8_t *x, const uint8_t *wb, const int32_t *bb,
                         const int32_t *mb, const int32_t *nbv, int64_t i0, int64_t rows, int64_t N, int64_t K,
                         int64_t nk4, int64_t ch, uint8_t flip, int32_t z_y, int32_t lo, int32_t hi) {
  const uint8x16_t f = vdupq_n_u8(flip);
  int32x4_t acc[2][8];
  const uint8_t *ra[2], *rb[2];
  QA_UNROLL for (int p = 0; p < 2; p++) {
    QA_UNROLL for (int q = 0; q < 8; q++) acc[p][q] = vdupq_n_s32(0);
    const int64_t a = i0 + 2 * p < i0 + rows ? i0 + 2 * p : i0 + rows - 1;
    const int64_t b = i0 + 2 * p + 1 < i0 + rows ? i0 + 2 * p + 1 : a;
    ra[p] = x + a * K, rb[p] = x + b * K;
  }
  uint8x16_t A[2];
  int8x16_t B[8];
#define QA_FC_MM_STEP(L1)                                                                                    \
  {                                                                                                          \
    const uint8_t *l0 = wb + k8 * 128;                                                                       \
    QA_UNROLL for (int q = 0; q < 4; q++) {                                                                  \
      const int32x4_t a0 = vld1q_s32((const int32_t *)(l0 + 16 * q));                                        \
      const int32x4_t a1 = (L1) ? vld1q_s32((const int32_t *)(l0 + 64 + 16 * q)) : vdupq_n_s32(0);          \
      B[2 * q] = vreinterpretq_s8_s32(vzip1q_s32(a0, a1));                                                   \
      B[2 * q + 1] = vreinterpretq_s8_s32(vzip2q_s32(a0, a1));                                               \
    }                                                                                                        \
    QA_UNROLL for (int p = 0; p < RP; p++)                                                                   \
      QA_UNROLL for (int q = 0; q < 8; q++) acc[p][q] = vusmmlaq_s32(acc[p][q], A[p], B[q]);                 \
  }
  int64_t k8 = 0;
  for (; k8 * 8 + 8 <= K; k8++) {
    QA_UNROLL for (int p = 0; p < RP; p++)
      A[p] = veorq_u8(vcombine_u8(vld1_u8(ra[p] + k8 * 8), vld1_u8(rb[p] + k8 * 8)), f);
    QA_FC_MM_STEP(1)
  }
  if (k8 * 8 < K) { /* the last K % 8 reductions: zeroed copies; line 2 k8 + 1 may not exist */
    const int64_t rem = K - k8 * 8;
    QA_UNROLL for (int p = 0; p < RP; p++) {
      uint8_t t[16];
      for (int64_t i = 0; i < 8; i++) {
        t[i] = i < rem ? ra[p][k8 * 8 + i] ^ flip : 0;
        t[8 + i] = i < rem ? rb[p][k8 * 8 + i] ^ flip : 0;
      }
      A[p] = vld1q_u8(t);
    }
    if (2 * k8 + 1 < nk4) QA_FC_MM_STEP(1)
    else QA_FC_MM_STEP(0)
  }
#undef QA_FC_MM_STEP
  const int32x4_t zy = vdupq_n_s32(z_y), l32 = vdupq_n_s32(lo), h32 = vdupq_n_s32(hi);
  QA_UNROLL for (int p = 0; p < RP; p++)
    QA_UNROLL for (int half = 0; half < 2; half++) {
      const int64_t r = 2 * p + half;
      if (r >= rows) break;
      int32x4_t v[4];
      QA_UNROLL for (int j = 0; j < 4; j++) {
        const int64x2_t e = vreinterpretq_s64_s32(acc[p][2 * j]), o = vreinterpretq_s64_s32(acc[p][2 * j + 1]);
        const int32x4_t a = vreinterpretq_s32_s64(half ? vzip2q_s64(e, o) : vzip1q_s64(e, o));
        v[j] = qa_req(vaddq_s32(a, vld1q_s32(bb + 4 * j)), vld1q_s32(mb + 4 * j), vld1q_s32(nbv + 4 * j), zy, l32,
                      h32);
      }
      qa_store16(y + (i0 + r) * N, v[0], v[1], v[2], v[3], ch);
    }
}

/* ---- Conv ------------------------------------------------------------------------------------------ */
/* dotprod: CR channels (1..4) from weight row wr x 16 pixels (4 vectors) of the panel from pixel pv. */
QA_DOT void qa_cv_dot_tile(const int CR, uint8_t *y, int64_t NP, const uint8_t *panel, const uint32_t *psum,
                           const uint8_t *wr, int64_t Kp4, const int32_t *bias, const int32_t *m, const int32_t *n,
                           int64_t pv, int64_t cnt, int32_t z_y, int32_t lo, int32_t hi) {
  const int64_t nk4 = Kp4 / 4, PP = QLLC_CONV_PB;
  const uint8x16_t w80 = vdupq_n_u8(0x80);
  uint32x4_t acc[4][4];
  QA_UNROLL for (int c = 0; c < 4; c++) QA_UNROLL for (int v = 0; v < 4; v++) acc[c][v] = vdupq_n_u32(0);
  uint8x16_t Wc[4], P[4];
#define QA_CV_DOT_STEP(l)                                                                                    \
  {                                                                                                          \
    const uint8_t *pk = panel + ((k16 * 4 + (l)) * PP + pv) * 4;                                             \
    QA_UNROLL for (int v = 0; v < 4; v++) P[v] = vld1q_u8(pk + 16 * v);                                      \
    QA_UNROLL for (int c = 0; c < CR; c++)                                                                   \
      QA_UNROLL for (int v = 0; v < 4; v++) acc[c][v] = vdotq_laneq_u32(acc[c][v], P[v], Wc[c], (l));        \
  }
  int64_t k16 = 0;
  for (; k16 * 4 + 4 <= nk4; k16++) {
    QA_UNROLL for (int c = 0; c < CR; c++) Wc[c] = veorq_u8(vld1q_u8(wr + c * Kp4 + k16 * 16), w80);
    QA_CV_DOT_STEP(0) QA_CV_DOT_STEP(1) QA_CV_DOT_STEP(2) QA_CV_DOT_STEP(3)
  }
  if (k16 * 4 < nk4) { /* 1 to 3 groups of 4 left in each weight row */
    const int64_t nl = nk4 - k16 * 4;
    QA_UNROLL for (int c = 0; c < CR; c++) {
      const uint32_t *src = (const uint32_t *)(wr + c * Kp4 + k16 * 16);
      uint32x4_t t = vdupq_n_u32(0);
      t = vld1q_lane_u32(src, t, 0);
      if (nl > 1) t = vld1q_lane_u32(src + 1, t, 1);
      if (nl > 2) t = vld1q_lane_u32(src + 2, t, 2);
      Wc[c] = veorq_u8(vreinterpretq_u8_u32(t), w80);
    }
    QA_CV_DOT_STEP(0)
    if (nl > 1) QA_CV_DOT_STEP(1)
    if (nl > 2) QA_CV_DOT_STEP(2)
  }
#undef QA_CV_DOT_STEP
  const int32x4_t zy = vdupq_n_s32(z_y), l32 = vdupq_n_s32(lo), h32 = vdupq_n_s32(hi);
  uint32x4_t corr[4];
  QA_UNROLL for (int v = 0; v < 4; v++) corr[v] = vshlq_n_u32(vld1q_u32(psum + pv + 4 * v), 7);
  QA_UNROLL for (int c = 0; c < CR; c++) {
    const uint32x4_t b = vdupq_n_u32((uint32_t)bias[c]);
    const int32x4_t mv = vdupq_n_s32(m[c]), nv = vdupq_n_s32(n[c]);
    int32x4_t r[4];
    QA_UNROLL for (int v = 0; v < 4; v++)
      r[v] = qa_req(vreinterpretq_s32_u32(vsubq_u32(vaddq_u32(acc[c][v], b), corr[v])), mv, nv, zy, l32, h32);
    qa_store16(y + c * NP + pv, r[0], r[1], r[2], r[3], cnt);
  }
}

/* i8mm: CP channel pairs (1..2; the last pair of an odd count repeats its channel) x 16 pixels (8 pixel
   pairs) of the panel from pixel pv; acc[p][q] = (pixels 2q, 2q+1) x (channels 2p, 2p+1). */
QA_MM void qa_cv_mm_tile(const int CP, uint8_t *y, int64_t NP, const uint8_t *panel, int64_t PP,
                         const uint8_t *wr, int64_t chans, int64_t K, int64_t Kp4, const int32_t *bias,
                         const int32_t *m, const int32_t *n, int64_t pv, int64_t cnt, int32_t z_y, int32_t lo,
                         int32_t hi) {
  const int64_t Kp8 = qllc_round_up(K, 8);
  int32x4_t acc[2][8];
  const uint8_t *wa[2], *wb[2];
  QA_UNROLL for (int p = 0; p < 2; p++) {
    QA_UNROLL for (int q = 0; q < 8; q++) acc[p][q] = vdupq_n_s32(0);
    const int64_t a = 2 * p < chans ? 2 * p : chans - 1, b = 2 * p + 1 < chans ? 2 * p + 1 : a;
    wa[p] = wr + a * Kp4, wb[p] = wr + b * Kp4;
  }
  int8x16_t A[2];
  uint8x16_t B[8];
#define QA_CV_MM_STEP                                                                                        \
  {                                                                                                          \
    const uint8_t *pk = panel + (k8 * PP + pv) * 8;                                                          \
    QA_UNROLL for (int q = 0; q < 8; q++) B[q] = vld1q_u8(pk + 16 * q);                                      \
    QA_UNROLL for (int p = 0; p < CP; p++)                                                                   \
      QA_UNROLL for (int q = 0; q < 8; q++) acc[p][q] = vusmmlaq_s32(acc[p][q], B[q], A[p]);                 \
  }
  int64_t k8 = 0;
  for (; k8 * 8 + 8 <= Kp4; k8++) {
    QA_UNROLL for (int p = 0; p < CP; p++)
      A[p] = vcombine_s8(vld1_s8((const int8_t *)wa[p] + k8 * 8), vld1_s8((const int8_t *)wb[p] + k8 * 8));
    QA_CV_MM_STEP
  }
  if (k8 * 8 < Kp8) { /* Kp4 = 8 k8 + 4: the last 4 weights of each row, zeros after them */
    QA_UNROLL for (int p = 0; p < CP; p++) {
      int32x4_t t = vdupq_n_s32(0);
      t = vld1q_lane_s32((const int32_t *)(wa[p] + k8 * 8), t, 0);
      t = vld1q_lane_s32((const int32_t *)(wb[p] + k8 * 8), t, 2);
      A[p] = vreinterpretq_s8_s32(t);
    }
    QA_CV_MM_STEP
  }
#undef QA_CV_MM_STEP
  const int32x4_t zy = vdupq_n_s32(z_y), l32 = vdupq_n_s32(lo), h32 = vdupq_n_s32(hi);
  QA_UNROLL for (int p = 0; p < CP; p++)
    QA_UNROLL for (int half = 0; half < 2; half++) {
      const int64_t c = 2 * p + half;
      if (c >= chans) break;
      const int32x4_t b = vdupq_n_s32(bias[c]), mv = vdupq_n_s32(m[c]), nv = vdupq_n_s32(n[c]);
      int32x4_t r[4];
      QA_UNROLL for (int v = 0; v < 4; v++) {
        const int32x4_t a = half ? vuzp2q_s32(acc[p][2 * v], acc[p][2 * v + 1]) : vuzp1q_s32(acc[p][2 * v], acc[p][2 * v + 1]);
        r[v] = qa_req(vaddq_s32(a, b), mv, nv, zy, l32, h32);
      }
      qa_store16(y + c * NP + pv, r[0], r[1], r[2], r[3], cnt);
    }
}

/* One FC and one conv driver per ISA (arm_q8_drivers.h, which undefines these), x as u8 after the flip. */
#define QA_FC_NAME qa_fc_dot
#define QA_CONV_NAME qa_conv_dot
#define QA_DRV_ATTR __attribute__((target(QA_T_DOT))) static
#define QA_DRV_MM 0
#include "arm_q8_drivers.h"
#define QA_FC_NAME qa_fc_mm
#define QA_CONV_NAME qa_conv_mm
#define QA_DRV_ATTR __attribute__((target(QA_T_MM))) static
#define QA_DRV_MM 1
#include "arm_q8_drivers.h"

/* ---- the registry's entry points ------------------------------------------------------------------ */
#define QA_DEF(TI, ti, TO, to, isa, T, FC, CONV)                                                                 \
  QLLC_KERNEL __attribute__((target(T))) void qllc_k_fc_##ti##_i8_##to##__##isa(                                 \
      TO *y, const TI *x, const int8_t *wp, const int32_t *bias_c, const int32_t *m, const int32_t *n, int64_t M, \
      int64_t N, int64_t K, int32_t z_x, int32_t z_y, int32_t act_lo, int32_t act_hi, uint8_t *scratch) {         \
    (void)z_x, (void)scratch;                                                                                    \
    FC((uint8_t *)y, (const uint8_t *)x, wp, bias_c, m, n, M, N, K, (uint8_t)((TI)-1 < 0 ? 0x80 : 0), z_y,      \
       act_lo, act_hi);                                                                                          \
  }                                                                                                              \
  QLLC_KERNEL __attribute__((target(T))) void qllc_k_conv2d_##ti##_i8_##to##__##isa(                             \
      TO *y, const TI *x, const int8_t *wp, const int32_t *bias_c, const int32_t *m, const int32_t *n, int64_t N, \
      int64_t C, int64_t H, int64_t W, int64_t M, int64_t OH, int64_t OW, int64_t KH, int64_t KW,                \
      int64_t stride_h, int64_t stride_w, int64_t pad_top, int64_t pad_left, int64_t dil_h, int64_t dil_w,       \
      int64_t group, int32_t z_x, int32_t z_y, int32_t act_lo, int32_t act_hi, uint8_t *scratch) {               \
    const qllc_conv_shape s = {N, C, H, W, M, OH, OW, KH, KW, stride_h, stride_w, pad_top, pad_left,             \
                               dil_h, dil_w, group, z_x, z_y, act_lo, act_hi};                                   \
    CONV((uint8_t *)y, (const uint8_t *)x, wp, bias_c, m, n, &s, (uint8_t)((TI)-1 < 0 ? 0x80 : 0), scratch);    \
  }
#define QA_DEF_ISA(isa, T, FC, CONV)                   \
  QA_DEF(int8_t, i8, int8_t, i8, isa, T, FC, CONV)     \
  QA_DEF(int8_t, i8, uint8_t, u8, isa, T, FC, CONV)    \
  QA_DEF(uint8_t, u8, int8_t, i8, isa, T, FC, CONV)    \
  QA_DEF(uint8_t, u8, uint8_t, u8, isa, T, FC, CONV)
QA_DEF_ISA(dotprod, QA_T_DOT, qa_fc_dot, qa_conv_dot)
QA_DEF_ISA(i8mm, QA_T_MM, qa_fc_mm, qa_conv_mm)

/* The float FC and Conv variants (issue 26) end this translation unit (arm_f32.h says why). */
#include "arm_f32.h"
