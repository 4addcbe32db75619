/* targets/x86_64/kernels/x86_amx.c: AMX-INT8 variants (__amx) of the fused 8-bit Conv and FC layers,
 * bit-identical to the scalar qllc_k_conv2d_* / qllc_k_fc_* of q_layers.c.
 *
 * Same operands as the avx512vnni variants (variants.def, packed by src/lower/pack.c): the VNNI-4
 * layouts are already AMX tile layouts.
 *  - FC: weights QLLC_LAYOUT_K4N16. The 16 x 64-byte lines (k4, k4+1, ..., k4+15) of one block of 16
 *    output channels are one B tile (16 rows of 4 reductions x 16 channels, stride 64). Up to 64 input
 *    rows are packed in the scratch as u8 (x ^ 0x80 for i8 inputs), K padded to a multiple of 4 with
 *    zeros: A tiles of 16 rows x 64 bytes, stride Kp4. C = 16 rows x 16 channels of int32.
 *  - Conv: weights QLLC_LAYOUT_ROWS_K4 are A tiles (16 output channels x 64 bytes, stride Kp4); the
 *    activation panel, packed in the scratch as [Kp4/4][64 pixels][4] u8 (the avx512vnni panel), gives
 *    B tiles of 16 k4 rows x 16 pixels (stride 256). C = 16 channels x 16 pixels, written as NCHW rows.
 *    The signed operand is A here: TDPBSUD (s8 x u8), where FC's is TDPBUSD (u8 x s8).
 * Both are u8 x s8 products of 4 with int32 accumulation modulo 2^32, exactly vpdpbusd: bias_c already
 * holds the -128 * sum_k w term for i8 inputs (layouts.h). A reduction of K = 64 q + 4 t bytes runs q full
 * A/B tiles and one tail pair (A: 4 t bytes a row, B: t rows), each shape a tile register of its own,
 * so one tile configuration (LDTILECFG) serves the whole call. Rows / channels that do not fill 16:
 * when there are at least 16, the last tile starts 16 before the end (overlapping rows are computed
 * twice, identically); with fewer, the tiles have that many rows.
 * Epilogue: the C tiles are stored to a 2 KiB stack buffer, then bias, REQUANT (int64, exact), z_y,
 * clamp and the low byte in AVX-512 (as the avx512vnni variant). TILERELEASE before returning.
 * The JIT asks Linux for the tile data permission first (src/llvmgen/jit.c); a bundle's host must
 * (the bundle header says so). */
#include <immintrin.h>

#include "q_common.h"
#include "variants.h"
#include "x86_q8_epilogue.h"
#include "x86_tr4.h"

#define QM_T "amx-tile,amx-int8,avx512f,avx512bw,avx512vl,avx512dq,avx512vnni"
/* Every store a kernel here makes into its scratch buffer is reported through this hook, with its byte
   count: nothing in the built kernels; tests/libjit/q_amx_emu_test.c counts the bytes per call. */
#ifndef QM_SCRATCH_WROTE
#define QM_SCRATCH_WROTE(bytes) ((void)0)
#endif
#define QM_INL static inline __attribute__((always_inline, target(QM_T)))

/* tile registers (literal numbers: gcc's intrinsics paste them into the instruction text): C0, C1
   accumulators; A main; B0, B1 main; A tail; B0, B1 tail */
#define T_C0 0
#define T_C1 1
#define T_A 2
#define T_B0 3
#define T_B1 4
#define T_AT 5
#define T_BT0 6
#define T_BT1 7

typedef struct qm_cfg {
  uint8_t palette, start_row, reserved[14];
  uint16_t colsb[16];
  uint8_t rows[16];
} qm_cfg;

/* R rows of A and C (1..16), a tail of t k4 groups (0..15) */
QM_INL void qm_config(int R, int t) {
  qm_cfg c;
  __builtin_memset(&c, 0, sizeof c);
  c.palette = 1;
  c.rows[T_C0] = c.rows[T_C1] = (uint8_t)R, c.colsb[T_C0] = c.colsb[T_C1] = 64;
  c.rows[T_A] = (uint8_t)R, c.colsb[T_A] = 64;
  c.rows[T_B0] = c.rows[T_B1] = 16, c.colsb[T_B0] = c.colsb[T_B1] = 64;
  if (t) {
    c.rows[T_AT] = (uint8_t)R, c.colsb[T_AT] = (uint16_t)(4 * t);
    c.rows[T_BT0] = c.rows[T_BT1] = (uint8_t)t, c.colsb[T_BT0] = c.colsb[T_BT1] = 64;
  }
  _tile_loadconfig(&c);
}

/* C0 (and C1 when two) += A[a .. a + K) x B0 (B1): A rows of pitch lda bytes from a, B tiles of 16 k4
   rows from b0 (b1) with row stride ldb; nk4 = Kp4 / 4 groups of 4 reductions. FC: A unsigned (the
   activations), B signed (TDPBUSD); conv (sa): A signed (the weights), B unsigned (TDPBSUD). */
#define QM_DP(sa, c, a, b)                                                                           \
  do {                                                                                               \
    if (sa) _tile_dpbsud(c, a, b);                                                                   \
    else _tile_dpbusd(c, a, b);                                                                      \
  } while (0)
QM_INL void qm_dot(int two, int sa, const uint8_t *a, int64_t lda, const uint8_t *b0, const uint8_t *b1, int64_t ldb,
                   int64_t nk4) {
  _tile_zero(T_C0);
  if (two) _tile_zero(T_C1);
  int64_t k4 = 0;
  for (; k4 + 16 <= nk4; k4 += 16) {
    _tile_loadd(T_A, a + k4 * 4, lda);
    _tile_loadd(T_B0, b0 + k4 * ldb, ldb);
    QM_DP(sa, T_C0, T_A, T_B0);
    if (two) {
      _tile_loadd(T_B1, b1 + k4 * ldb, ldb);
      QM_DP(sa, T_C1, T_A, T_B1);
    }
  }
  if (k4 < nk4) {
    _tile_loadd(T_AT, a + k4 * 4, lda);
    _tile_loadd(T_BT0, b0 + k4 * ldb, ldb);
    QM_DP(sa, T_C0, T_AT, T_BT0);
    if (two) {
      _tile_loadd(T_BT1, b1 + k4 * ldb, ldb);
      QM_DP(sa, T_C1, T_AT, T_BT1);
    }
  }
}

/* 16 lanes: acc + bias, REQUANT(., m, n) + z_y, clamp; the low bytes of the first cnt lanes stored. */
QM_INL void qm_out16(uint8_t *d, __m512i acc, __m512i bias, __m512i m, __m512i n, int32_t z_y, int32_t lo, int32_t hi,
                     int64_t cnt) {
  const __m512i lo32 = _mm512_set1_epi64(0xffffffff), one = _mm512_set1_epi64(1);
  const __m512i zy = _mm512_set1_epi64(z_y), l = _mm512_set1_epi64(lo), h = _mm512_set1_epi64(hi);
  acc = _mm512_add_epi32(acc, bias);
  n = _mm512_max_epi32(n, _mm512_setzero_si512()); /* REQUANT shifts only for n > 0 */
  const __m512i ne = _mm512_and_si512(n, lo32), no = _mm512_srli_epi64(n, 32);
  const __m512i re = _mm512_srli_epi64(_mm512_sllv_epi64(one, ne), 1), ro = _mm512_srli_epi64(_mm512_sllv_epi64(one, no), 1);
  __m512i pe = _mm512_mul_epi32(acc, m), po = _mm512_mul_epi32(_mm512_srli_epi64(acc, 32), _mm512_srli_epi64(m, 32));
  pe = _mm512_add_epi64(_mm512_srav_epi64(_mm512_add_epi64(pe, re), ne), zy);
  po = _mm512_add_epi64(_mm512_srav_epi64(_mm512_add_epi64(po, ro), no), zy);
  pe = _mm512_min_epi64(_mm512_max_epi64(pe, l), h);
  po = _mm512_min_epi64(_mm512_max_epi64(po, l), h);
  const __m512i v = _mm512_mask_blend_epi32(0xAAAA, pe, _mm512_slli_epi64(po, 32));
  const __mmask16 k = cnt >= 16 ? (__mmask16)0xffff : (__mmask16)((1u << cnt) - 1);
  _mm_mask_storeu_epi8(d, k, _mm512_cvtepi32_epi8(v));
}

/* ---- FC -------------------------------------------------------------------------------------------- */
QM_INL void qm_fc(uint8_t *y, const uint8_t *x, const int8_t *wp, const int32_t *bias, const int32_t *m,
                  const int32_t *n, int64_t M, int64_t N, int64_t K, uint8_t flip, int32_t z_y, int32_t lo, int32_t hi,
                  uint8_t *scratch) {
  if (M <= 0 || N <= 0) return;
  const int64_t Kp4 = qllc_round_up(K, 4), nk4 = Kp4 / 4, nbt = (N + 15) / 16;
  const int64_t P = M < QLLC_FC_MB ? M : QLLC_FC_MB, R = P < 16 ? P : 16;
  int32_t cbuf[2][16][16] __attribute__((aligned(64)));
  qm_config((int)R, (int)(nk4 % 16));
  for (int64_t r0 = 0; r0 < M; r0 += P) {
    const int64_t p0 = r0 + P <= M ? r0 : M - P; /* the last panel ends at M (overlapping rows) */
    for (int64_t i = 0; i < P; i++) { /* u8 rows, zeros past K */
      const uint8_t *s = x + (p0 + i) * K;
      uint8_t *d = scratch + i * Kp4;
      for (int64_t k = 0; k < K; k++) d[k] = s[k] ^ flip;
      for (int64_t k = K; k < Kp4; k++) d[k] = 0;
      QM_SCRATCH_WROTE(Kp4);
    }
    for (int64_t t0 = 0; t0 < P; t0 += R) {
      const int64_t ti = t0 + R <= P ? t0 : P - R;
      for (int64_t nb = 0; nb < nbt; nb += 2) {
        const int two = nb + 1 < nbt;
        const uint8_t *b0 = (const uint8_t *)wp + nb * nk4 * 64;
        qm_dot(two, 0, scratch + ti * Kp4, Kp4, b0, b0 + nk4 * 64, 64, nk4);
        _tile_stored(T_C0, cbuf[0], 64);
        if (two) _tile_stored(T_C1, cbuf[1], 64);
        for (int j = 0; j < 1 + two; j++) {
          const int64_t c0 = (nb + j) * 16, ch = N - c0 < 16 ? N - c0 : 16;
          const __mmask16 km = (__mmask16)((1u << ch) - 1);
          const __m512i bv = _mm512_maskz_loadu_epi32(km, bias + c0), mv = _mm512_maskz_loadu_epi32(km, m + c0);
          const __m512i nv = _mm512_maskz_loadu_epi32(km, n + c0);
          for (int64_t r = 0; r < R; r++)
            qm_out16(y + (p0 + ti + r) * N + c0, _mm512_load_si512(cbuf[j][r]), bv, mv, nv, z_y, lo, hi, ch);
        }
      }
    }
  }
  _tile_release();
}

/* ---- Conv ------------------------------------------------------------------------------------------ */
/* The four tap rows (already flipped) interleaved at d (qx_tr4_512). */
QM_INL void qm_tr4(uint8_t *d, uint8_t (*rows)[QLLC_CONV_PB]) {
  QM_SCRATCH_WROTE(4 * QLLC_CONV_PB);
  qx_tr4_512(d, _mm512_loadu_si512(rows[0]), _mm512_loadu_si512(rows[1]), _mm512_loadu_si512(rows[2]),
             _mm512_loadu_si512(rows[3]), 0);
}

/* The panel [Kp4/4][64][4] of output pixels p0 .. p0+np-1 of one image and group (u8, padding zu): each
   tap's 64 pixels as a contiguous row (a plain copy for stride 1, which the compiler vectorizes), four
   taps interleaved at a time (qm_tr4). Pixels past np hold zeros, never stored. */
QM_INL void qm_pack(uint8_t *panel, const uint8_t *xg, int64_t Cg, int64_t H, int64_t W, int64_t OW, int64_t KH,
                    int64_t KW, int64_t sh, int64_t sw, int64_t pt, int64_t pl, int64_t dh, int64_t dw, int64_t p0,
                    int64_t np, int64_t Kp4, uint8_t zu, uint8_t flip) {
  uint8_t rows[4][QLLC_CONV_PB] __attribute__((aligned(64)));
  __builtin_memset(rows, 0, sizeof rows);
  int64_t k = 0;
  for (int64_t c = 0; c < Cg; c++)
    for (int64_t kh = 0; kh < KH; kh++)
      for (int64_t kw = 0; kw < KW; kw++, k++) {
        qk_tap_row_u8(rows[k % 4], xg + c * H * W, H, W, OW, sh, sw, kh * dh - pt, kw * dw - pl, p0, np, zu, flip);
        if (k % 4 == 3) qm_tr4(panel + (k / 4) * QLLC_CONV_PB * 4, rows);
      }
  if (k % 4) { /* the taps past K read 0 against zero weights */
    for (int64_t r = k % 4; r < 4; r++) __builtin_memset(rows[r], 0, QLLC_CONV_PB);
    qm_tr4(panel + (k / 4) * QLLC_CONV_PB * 4, rows);
  }
  (void)Kp4;
}

QM_INL void qm_convk(uint8_t *y, const uint8_t *x, const int8_t *wp, const int32_t *bias, const int32_t *m,
                     const int32_t *n, const qllc_conv_shape *s, uint8_t flip, uint8_t *scratch) {
  const int64_t Cg = s->C / s->group, Mg = s->M / s->group, K = Cg * s->KH * s->KW, NP = s->OH * s->OW;
  if (Mg <= 0 || NP <= 0 || s->N <= 0) return;
  const int64_t Kp4 = qllc_round_up(K, 4), nk4 = Kp4 / 4, R = Mg < 16 ? Mg : 16, PB = QLLC_CONV_PB;
  const uint8_t zu = (uint8_t)((uint8_t)s->z_x ^ flip);
  int32_t cbuf[2][16][16] __attribute__((aligned(64)));
  qm_config((int)R, (int)(nk4 % 16));
  for (int64_t b = 0; b < s->N; b++)
    for (int64_t g = 0; g < s->group; g++) {
      const uint8_t *xg = x + (b * s->C + g * Cg) * s->H * s->W;
      for (int64_t p0 = 0; p0 < NP; p0 += PB) {
        const int64_t np = NP - p0 < PB ? NP - p0 : PB;
        qm_pack(scratch, xg, Cg, s->H, s->W, s->OW, s->KH, s->KW, s->sh, s->sw, s->pt, s->pl, s->dh, s->dw, p0, np,
                Kp4, zu, flip);
        for (int64_t c0 = 0; c0 < Mg; c0 += R) {
          const int64_t oc = c0 + R <= Mg ? c0 : Mg - R, o = g * Mg + oc;
          for (int64_t pv = 0; pv < np; pv += 32) {
            const int two = pv + 16 < np;
            qm_dot(two, 1, (const uint8_t *)wp + o * Kp4, Kp4, scratch + pv * 4, scratch + (pv + 16) * 4, PB * 4, nk4);
            _tile_stored(T_C0, cbuf[0], 64);
            if (two) _tile_stored(T_C1, cbuf[1], 64);
            for (int64_t r = 0; r < R; r++) {
              const __m512i bv = _mm512_set1_epi32(bias[o + r]), mv = _mm512_set1_epi32(m[o + r]);
              const __m512i nv = _mm512_set1_epi32(n[o + r]);
              uint8_t *yr = y + (b * s->M + o + r) * NP + p0 + pv;
              for (int j = 0; j < 1 + two; j++) {
                const int64_t cnt = np - pv - 16 * j < 16 ? np - pv - 16 * j : 16;
                qm_out16(yr + 16 * j, _mm512_load_si512(cbuf[j][r]), bv, mv, nv, s->z_y, s->lo, s->hi, cnt);
              }
            }
          }
        }
      }
    }
  _tile_release();
}

/* ==== 2x2 accumulator blocking: the conv with implicit im2col (conv2dcl__amx) and FC (fc__amx2) ========
 * Four C tiles (tile a or b of pixels / rows x block 0 or 1 of 16 output channels), two A and two B tiles:
 * every step loads A_a, A_b, B_0, B_1 and runs the four TDPs, so a tile load feeds two TDPs. An i8 input is
 * multiplied as signed (TDPBSSD), a u8 input as unsigned (TDPBUSD), against signed weights, so the input is
 * read where it lies, never copied to shift it, and the bias is the scalar kernel's (layouts.h). One tile
 * configuration per call (q2_config); each C tile is stored to a 1 KiB stack block (AMX has no move from
 * a tile to a vector register) and requantized from there at once, 16 channels a row, with the epilogue
 * helpers of the avx512vnni kernels (x86_q8_epilogue.h). */
#define Q2_CA0 0
#define Q2_CA1 1
#define Q2_CB0 2
#define Q2_CB1 3
#define Q2_AA 4
#define Q2_AB 5
#define Q2_B0 6
#define Q2_B1 7

/* C tiles: TR rows x 16 int32; A tiles: TR rows x kc bytes; B tiles: kc / 4 rows x 64 bytes */
QM_INL void q2_config(int TR, int kc) {
  qm_cfg c;
  __builtin_memset(&c, 0, sizeof c);
  c.palette = 1;
  for (int t = Q2_CA0; t <= Q2_CB1; t++) c.rows[t] = (uint8_t)TR, c.colsb[t] = 64;
  c.rows[Q2_AA] = c.rows[Q2_AB] = (uint8_t)TR, c.colsb[Q2_AA] = c.colsb[Q2_AB] = (uint16_t)kc;
  c.rows[Q2_B0] = c.rows[Q2_B1] = (uint8_t)(kc / 4), c.colsb[Q2_B0] = c.colsb[Q2_B1] = 64;
  _tile_loadconfig(&c);
}
#define Q2_DP(sgn, c, a, b)                                                                                   \
  do {                                                                                                       \
    if (sgn) _tile_dpbssd(c, a, b);                                                                          \
    else _tile_dpbusd(c, a, b);                                                                              \
  } while (0)
QM_INL void q2_zero(int two_a, int two_b) {
  _tile_zero(Q2_CA0);
  if (two_b) _tile_zero(Q2_CA1);
  if (two_a) _tile_zero(Q2_CB0);
  if (two_a && two_b) _tile_zero(Q2_CB1);
}
/* One step: A tiles from pa / pb (row strides sa / sb bytes), B tiles from b0 / b1 (stride 64). */
QM_INL void q2_step(int sgn, int two_a, int two_b, const uint8_t *pa, int64_t sa, const uint8_t *pb, int64_t sb,
                    const int8_t *b0, const int8_t *b1) {
  _tile_loadd(Q2_AA, pa, sa);
  _tile_loadd(Q2_B0, b0, 64);
  Q2_DP(sgn, Q2_CA0, Q2_AA, Q2_B0);
  if (two_b) {
    _tile_loadd(Q2_B1, b1, 64);
    Q2_DP(sgn, Q2_CA1, Q2_AA, Q2_B1);
  }
  if (two_a) {
    _tile_loadd(Q2_AB, pb, sb);
    Q2_DP(sgn, Q2_CB0, Q2_AB, Q2_B0);
    if (two_b) Q2_DP(sgn, Q2_CB1, Q2_AB, Q2_B1);
  }
}

/* The requantization of one block of 16 output channels from c0 (cnt of them exist). */
typedef struct q2_rq {
  __m512i bias, m, mo, r, sh; /* fast: the 32-bit path (z_reqh) holds for every lane */
  qx_zq q;
  int fast;
  __mmask16 in; /* the channels that exist */
} q2_rq;
QM_INL void q2_rqprep(q2_rq *q, const int32_t *bias, const int32_t *m, const int32_t *n, int64_t c0, int64_t cnt,
                      int32_t z_y) {
  const __mmask16 in = (__mmask16)qx_bits(cnt);
  const __m512i mv = _mm512_maskz_loadu_epi32(in, m + c0), nv = _mm512_mask_loadu_epi32(_mm512_set1_epi32(40), in, n + c0);
  int32_t nn[16], rr[16];
  _mm512_storeu_si512(nn, nv);
  q->in = in, q->bias = _mm512_maskz_loadu_epi32(in, bias + c0), q->fast = 1;
  for (int i = 0; i < 16; i++) q->fast &= qllc_req32_fits(nn[i], z_y);
  for (int i = 0; i < 16; i++) rr[i] = q->fast ? qx_req32_r(nn[i], z_y) : 0;
  q->m = mv, q->mo = _mm512_srli_epi64(mv, 32), q->sh = _mm512_sub_epi32(nv, _mm512_set1_epi32(32));
  q->r = _mm512_loadu_si512(rr);
  z_qprep(&q->q, mv, nv);
}
/* 16 accumulators (one pixel or row, 16 channels) -> their 16 output bytes */
QM_INL __m128i q2_req(__m512i acc, const q2_rq *q, int32_t z_y, int32_t lo, int32_t hi) {
  acc = _mm512_add_epi32(acc, q->bias);
  if (q->fast) return _mm512_cvtepi32_epi8(z_reqh(acc, q->m, q->mo, q->r, q->sh, _mm512_set1_epi32(lo), _mm512_set1_epi32(hi)));
  return _mm512_cvtepi32_epi8(z_req(acc, &q->q, _mm512_set1_epi64(z_y), _mm512_set1_epi64(lo), _mm512_set1_epi64(hi)));
}

/* ---- Conv with implicit im2col (qllc_k_conv2dcl_*__amx, weights QLLC_LAYOUT_T64N16) --------------------
 * Group 1, C a multiple of 4, no dilation along W (qllc_fits_amxcl). The input image is channel-last:
 * an NHWC input where it lies, an NCHW input converted into the scratch once per call (H W C bytes).
 * The A tile of a tap (kh, kw) and channel block cb is TR output pixels x kc channels, each row the
 * kc bytes of one input pixel, the rows one pixel step apart in the input: a row of 16 pixels of an
 * output row is one tile load with stride sw C bytes (stride 2: a strided row read, nothing copied). The
 * output pixels are cut into strips whose every tap lies either wholly inside the input or wholly in
 * the padding for all their pixels:
 *  - each output row's columns whose kernel window lies inside the input columns (h-interior): the
 *    taps of a row lie inside or outside the input rows together;
 *  - each other (edge) column's rows whose window lies inside the input rows (v-interior), pixels sh W C
 *    bytes apart: its taps lie inside or outside the input columns together.
 * A padded tap's A tile is a 64-byte row of z_x on the stack loaded with stride 0 (so TDP computes the
 * zero point's products exactly as the scalar kernel sums them); nothing of the input is copied. A strip
 * runs in tiles of TR pixels (16, or the h-interior width when narrower: one configuration for the call),
 * the last tile overlapping the one before it (pixels computed twice, identically), two tiles at a time.
 * The pixels left (the corners, and strips shorter than TR) run one at a time in AVX-512 VNNI over the
 * same B lines (q2_pixel). The output is written 16 channels a pixel: NHWC with one masked 16-byte store;
 * NCHW one byte per channel plane. */
typedef struct q2_cv {
  const uint8_t *x; /* the image, NHWC */
  uint8_t *y;       /* the image's output */
  const int8_t *wp;
  int64_t C, H, W, M, OH, OW, KH, KW, sh, sw, pt, pl, dh;
  int64_t kc, ncb, bstep; /* channels per block, blocks per tap, bytes per block of 16 output channels */
  int64_t TR, y_nhwc;
  int64_t Wv, Wp; /* virtual pixels (Wv > 0): Wv per output row over a padded image of rows of Wp pixels */
  int32_t z_y, lo, hi;
  int sgn;    /* i8 input */
  uint8_t zu; /* z_x's byte */
} q2_cv;
typedef struct q2_strip {
  int64_t oh, ow, doh, dow, L; /* L pixels from (oh, ow) in steps of (doh, dow) */
} q2_strip;

/* The 16 outputs of pixel (oh, ow) from c0 (their accumulators, less the bias). */
QM_INL void q2_conv_px(const q2_cv *g, int64_t oh, int64_t ow, __m512i acc, const q2_rq *q, int64_t c0) {
  const __m128i v = q2_req(acc, q, g->z_y, g->lo, g->hi);
  const int64_t P = oh * g->OW + ow;
  if (g->y_nhwc) {
    _mm_mask_storeu_epi8(g->y + P * g->M + c0, q->in, v);
    return;
  }
  uint8_t b[16];
  _mm_storeu_si128((__m128i *)b, v);
  const int64_t cnt = g->M - c0 < 16 ? g->M - c0 : 16, OHW = g->OH * g->OW;
  for (int64_t j = 0; j < cnt; j++) g->y[(c0 + j) * OHW + P] = b[j];
}
/* A stored C tile: the TR pixels of strip s from q0 (virtual pixels: those that are output pixels). */
QM_INL void q2_conv_tile(const q2_cv *g, const q2_strip *s, int64_t q0, int32_t (*cb)[16], const q2_rq *q, int64_t c0) {
  for (int64_t r = 0; r < g->TR; r++) {
    if (g->Wv) {
      const int64_t u = q0 + r, ow = u % g->Wv;
      if (ow < g->OW) q2_conv_px(g, u / g->Wv, ow, _mm512_load_si512(cb[r]), q, c0);
      continue;
    }
    q2_conv_px(g, s->oh + (q0 + r) * s->doh, s->ow + (q0 + r) * s->dow, _mm512_load_si512(cb[r]), q, c0);
  }
}
/* Tap (kh, kw) of the tile of strip pixels from q: its first pixel's kc bytes and the row stride, or the
   zero-point row and stride 0 where the tap lies in the padding (for the whole tile, by construction). */
QM_INL const uint8_t *q2_src(const q2_cv *g, const q2_strip *s, int64_t q, int64_t kh, int64_t kw, const uint8_t *zp,
                             int64_t *st) {
  if (g->Wv) { /* virtual pixel q of the padded image: never in the padding */
    *st = g->sw * g->C;
    return g->x + (q * g->sw + kh * g->dh * g->Wp + kw) * g->C;
  }
  const int64_t ih = (s->oh + q * s->doh) * g->sh - g->pt + kh * g->dh, iw = (s->ow + q * s->dow) * g->sw - g->pl + kw;
  if (ih < 0 || ih >= g->H || iw < 0 || iw >= g->W) {
    *st = 0;
    return zp;
  }
  *st = (s->doh * g->sh * g->W + s->dow * g->sw) * g->C;
  return g->x + (ih * g->W + iw) * g->C;
}
/* Tiles a (strip pixels from qa) and b (from qb, when two_a) x the channel blocks nb and nb + 1 (when
   two_b): the whole reduction, then the four C tiles out. */
QM_INL void q2_conv_pair(const q2_cv *g, const q2_strip *s, int64_t qa, int64_t qb, int two_a, int64_t nb, int two_b,
                         const uint8_t *zp, const q2_rq *q) {
  const int8_t *w0 = g->wp + nb * g->bstep;
  const int64_t tb = g->ncb * g->kc * 16; /* bytes per tap */
  q2_zero(two_a, two_b);
  for (int64_t kh = 0; kh < g->KH; kh++)
    for (int64_t kw = 0; kw < g->KW; kw++) {
      int64_t sa, sb = 0;
      const uint8_t *pa = q2_src(g, s, qa, kh, kw, zp, &sa), *pb = two_a ? q2_src(g, s, qb, kh, kw, zp, &sb) : pa;
      const int8_t *wt = w0 + (kh * g->KW + kw) * tb;
      for (int64_t cb = 0; cb < g->ncb; cb++) {
        const int64_t co = qllc_t64_c0(g->C, cb);
        q2_step(g->sgn, two_a, two_b, sa ? pa + co : zp, sa, sb ? pb + co : zp, sb, wt + cb * g->kc * 16,
                wt + cb * g->kc * 16 + g->bstep);
      }
    }
  int32_t cbuf[16][16] __attribute__((aligned(64)));
  _tile_stored(Q2_CA0, cbuf, 64);
  q2_conv_tile(g, s, qa, cbuf, &q[0], nb * 16);
  if (two_b) {
    _tile_stored(Q2_CA1, cbuf, 64);
    q2_conv_tile(g, s, qa, cbuf, &q[1], nb * 16 + 16);
  }
  if (two_a) {
    _tile_stored(Q2_CB0, cbuf, 64);
    q2_conv_tile(g, s, qb, cbuf, &q[0], nb * 16);
  }
  if (two_a && two_b) {
    _tile_stored(Q2_CB1, cbuf, 64);
    q2_conv_tile(g, s, qb, cbuf, &q[1], nb * 16 + 16);
  }
}
/* A strip in tiles of TR pixels, two at a time (the last tile ends at the strip's end). */
QM_INL void q2_conv_strip(const q2_cv *g, const q2_strip *s, int64_t nb, int two_b, const uint8_t *zp, const q2_rq *q) {
  const int64_t nt = (s->L + g->TR - 1) / g->TR;
  for (int64_t i = 0; i < nt; i += 2) {
    const int64_t qa = i * g->TR + g->TR <= s->L ? i * g->TR : s->L - g->TR;
    const int64_t qb = (i + 1) * g->TR + g->TR <= s->L ? (i + 1) * g->TR : s->L - g->TR;
    q2_conv_pair(g, s, qa, qb, i + 1 < nt, nb, two_b, zp, q);
  }
}
/* One pixel x the 16 channels of block nb in AVX-512 VNNI over the same B lines (a line is 16 channels x 4
   bytes): vpdpbusd is u8 x s8, so an i8 input is shifted to u8 (x ^ 0x80) and 128 times the channels'
   weight sums (wsum) taken off again. Padded taps read z_x. */
QM_INL __m512i q2_pixel(const q2_cv *g, int64_t oh, int64_t ow, int64_t nb, __m512i wsum) {
  const uint8_t flip = g->sgn ? 0x80 : 0;
  const __m512i fv = _mm512_set1_epi8((char)flip), zv = _mm512_set1_epi8((char)(g->zu ^ flip));
  const int8_t *w0 = g->wp + nb * g->bstep;
  __m512i acc = _mm512_setzero_si512();
  for (int64_t kh = 0; kh < g->KH; kh++)
    for (int64_t kw = 0; kw < g->KW; kw++) {
      const int64_t ih = oh * g->sh - g->pt + kh * g->dh, iw = ow * g->sw - g->pl + kw;
      const int in = ih >= 0 && ih < g->H && iw >= 0 && iw < g->W;
      const uint8_t *px = in ? g->x + (ih * g->W + iw) * g->C : NULL;
      const int8_t *wt = w0 + (kh * g->KW + kw) * g->ncb * g->kc * 16;
      for (int64_t cb = 0; cb < g->ncb; cb++) {
        const int64_t co = qllc_t64_c0(g->C, cb);
        for (int64_t k = 0; k < g->kc; k += 4) {
          const __m512i b = in ? _mm512_xor_si512(z_bcast(px + co + k), fv) : zv;
          acc = _mm512_dpbusd_epi32(acc, b, _mm512_loadu_si512(wt + (cb * g->kc + k) * 16));
        }
      }
    }
  return _mm512_sub_epi32(acc, _mm512_slli_epi32(wsum, 7));
}
/* The weight sums of block nb's channels (q2_pixel's i8 correction; 0 for a u8 input). */
QM_INL __m512i q2_wsum(const q2_cv *g, int64_t nb) {
  __m512i s = _mm512_setzero_si512();
  if (!g->sgn) return s;
  const __m512i one = _mm512_set1_epi8(1);
  for (int64_t i = 0; i < g->bstep; i += 64) s = _mm512_dpbusd_epi32(s, one, _mm512_loadu_si512(g->wp + nb * g->bstep + i));
  return s;
}
QM_INL void q2_pixels(const q2_cv *g, int64_t oh0, int64_t oh1, int64_t ow0, int64_t ow1, int64_t nb, int two_b,
                      const __m512i *ws, const q2_rq *q) {
  for (int64_t oh = oh0; oh < oh1; oh++)
    for (int64_t ow = ow0; ow < ow1; ow++)
      for (int j = 0; j < 1 + two_b; j++) q2_conv_px(g, oh, ow, q2_pixel(g, oh, ow, nb + j, ws[j]), &q[j], (nb + j) * 16);
}

/* Channels c0 .. c0 + 3 of n <= 64 consecutive pixels of one NCHW row (s: channel c0's, planes HW bytes
   apart) to their channel-last places d + p C (4 bytes a pixel): four masked row loads, the 4 x 64 byte
   interleave of x86_tr4.h, four 16-dword scatters. */
QM_INL void q2_tr4(uint8_t *d, int64_t C, const uint8_t *s, int64_t HW, int64_t n) {
  const __mmask64 k = qx_bits(n);
  uint8_t t[256] __attribute__((aligned(64)));
  qx_tr4_512(t, _mm512_maskz_loadu_epi8(k, s), _mm512_maskz_loadu_epi8(k, s + HW), _mm512_maskz_loadu_epi8(k, s + 2 * HW),
             _mm512_maskz_loadu_epi8(k, s + 3 * HW), 0);
  const __m512i idx = _mm512_mullo_epi32(_mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15),
                                         _mm512_set1_epi32((int32_t)C));
  for (int64_t j = 0; j < 4 && 16 * j < n; j++)
    _mm512_mask_i32scatter_epi32(d + 16 * j * C, (__mmask16)qx_bits(n - 16 * j), idx, _mm512_load_si512(t + 64 * j), 1);
}
/* One input image (x: NHWC, or NCHW when !x_nhwc) channel-last into d as Hp rows of Wp pixels, input row
   ih at row ih + pt and column iw at iw + pl, z_x (zu) everywhere else: the row strips' unpadded copy of an
   NCHW image (Hp = H, Wp = W, no padding) or the padded virtual-pixel form. Row copies for an NHWC input. */
QM_INL void q2_image(uint8_t *d, int x_nhwc, const uint8_t *x, int64_t C, int64_t H, int64_t W, int64_t Hp, int64_t Wp,
                     int64_t pt, int64_t pl, uint8_t zu) {
  const int64_t row = Wp * C, left = pl * C, right = (Wp - pl - W) * C;
  for (int64_t r = 0; r < Hp; r++, d += row) {
    const int64_t ih = r - pt;
    if (ih < 0 || ih >= H) {
      __builtin_memset(d, zu, (size_t)row);
      continue;
    }
    __builtin_memset(d, zu, (size_t)left);
    __builtin_memset(d + left + W * C, zu, (size_t)right);
    if (x_nhwc) __builtin_memcpy(d + left, x + ih * W * C, (size_t)(W * C));
    else
      for (int64_t c0 = 0; c0 < C; c0 += 4)
        for (int64_t w0 = 0; w0 < W; w0 += 64)
          q2_tr4(d + left + w0 * C + c0, C, x + c0 * H * W + ih * W + w0, H * W, W - w0 < 64 ? W - w0 : 64);
  }
  QM_SCRATCH_WROTE(Hp * row);
}

/* First index i >= 0 with i s - p >= 0; one past the last with i s - p + span <= n (>= first, <= cnt). */
QM_INL int64_t q2_lo(int64_t p, int64_t s) { return p > 0 ? (p + s - 1) / s : 0; }
QM_INL int64_t q2_hi(int64_t p, int64_t s, int64_t span, int64_t n, int64_t lo, int64_t cnt) {
  const int64_t e = n - span + p < 0 ? 0 : (n - span + p) / s + 1;
  return e < lo ? lo : e > cnt ? cnt : e;
}

QM_INL void q2_convk(uint8_t *y, const uint8_t *x, const int8_t *wp, const int32_t *bias, const int32_t *m,
                     const int32_t *n, const qllc_conv_shape *s, int sgn, uint8_t *scratch, int64_t x_nhwc,
                     int64_t y_nhwc) {
  const int64_t C = s->C, H = s->H, W = s->W, M = s->M, OH = s->OH, OW = s->OW, P = OH * OW;
  if (M <= 0 || P <= 0 || s->N <= 0) return;
  q2_cv g = {NULL, NULL, wp, C, H, W, M, OH, OW, s->KH, s->KW, s->sh, s->sw, s->pt, s->pl, s->dh,
             qllc_t64_kc(C), qllc_t64_ncb(C), 0, 0, y_nhwc, 0, 0, s->z_y, s->lo, s->hi, sgn, (uint8_t)s->z_x};
  g.bstep = s->KH * s->KW * g.ncb * g.kc * 16;
  const int64_t nbt = (M + 15) / 16;
  /* h-interior columns [owa, owe), v-interior rows [oha, ohe) */
  const int64_t owa = q2_lo(s->pl, s->sw) < OW ? q2_lo(s->pl, s->sw) : OW;
  const int64_t owe = q2_hi(s->pl, s->sw, s->KW, W, owa, OW);
  const int64_t oha = q2_lo(s->pt, s->sh) < OH ? q2_lo(s->pt, s->sh) : OH;
  const int64_t ohe = q2_hi(s->pt, s->sh, (s->KH - 1) * s->dh + 1, H, oha, OH);
  const int64_t Lr = owe - owa, Lc = ohe - oha;
  g.TR = Lr >= 16 ? 16 : Lr > 0 ? Lr : Lc >= 16 ? 16 : Lc;
  /* Virtual pixels instead of strips where they take fewer tiles: an NCHW input is copied anyway (into the
     padded form instead); an NHWC one is its own padded form when the conv has no padding (read where it
     lies), else it is copied only for a quarter fewer tiles (narrow images). Needs sh = sw, so that Wv =
     Wp virtual pixels per output row are sw C bytes apart across rows too. */
  const int64_t Wp = qllc_amxcl_wp(W, OW, s->KW, s->sw, s->pl), Hp = (OH - 1) * s->sh + (s->KH - 1) * s->dh + 1;
  const int64_t NV = (OH - 1) * Wp + OW, TRv = NV < 16 ? NV : 16, ntv = (NV + TRv - 1) / TRv;
  const int64_t nts = g.TR > 0 ? OH * ((Lr + g.TR - 1) / g.TR) + (OW - Lr) * ((Lc + g.TR - 1) / g.TR) : 1 << 30;
  const int inplace = x_nhwc && s->pt == 0 && s->pl == 0 && Wp == W && Hp <= H;
  if (s->sh == s->sw && (inplace ? ntv <= nts : x_nhwc ? 4 * ntv < 3 * nts : ntv < nts)) g.Wv = Wp, g.Wp = Wp, g.TR = TRv;
  uint8_t zp[64] __attribute__((aligned(64)));
  __builtin_memset(zp, g.zu, sizeof zp);
  if (g.TR > 0) q2_config((int)g.TR, (int)g.kc);
  for (int64_t b = 0; b < s->N; b++) {
    const uint8_t *xi = x + b * C * H * W; /* image b in either layout */
    if (g.Wv && !inplace) q2_image(scratch, (int)x_nhwc, xi, C, H, W, Hp, Wp, s->pt, s->pl, g.zu);
    else if (!g.Wv && !x_nhwc) q2_image(scratch, 0, xi, C, H, W, H, W, 0, 0, g.zu);
    g.x = x_nhwc && (inplace || !g.Wv) ? xi : scratch;
    g.y = y + b * M * P;
    for (int64_t nb = 0; nb < nbt; nb += 2) {
      const int two_b = nb + 1 < nbt;
      q2_rq q[2];
      __m512i ws[2];
      for (int j = 0; j < 1 + two_b; j++) {
        q2_rqprep(&q[j], bias, m, n, (nb + j) * 16, M - (nb + j) * 16, s->z_y);
        ws[j] = q2_wsum(&g, nb + j);
      }
      if (g.Wv) {
        const q2_strip st = {0, 0, 0, 1, NV};
        q2_conv_strip(&g, &st, nb, two_b, zp, q);
        continue;
      }
      for (int64_t oh = 0; oh < OH; oh++) { /* rows: their h-interior columns */
        const q2_strip st = {oh, owa, 0, 1, Lr};
        if (g.TR > 0 && Lr >= g.TR) q2_conv_strip(&g, &st, nb, two_b, zp, q);
        else q2_pixels(&g, oh, oh + 1, owa, owe, nb, two_b, ws, q);
      }
      for (int64_t ow = 0; ow < OW; ow++) { /* edge columns: their v-interior rows, then the corners */
        if (ow == owa) ow = owe;
        if (ow >= OW) break;
        const q2_strip st = {oha, ow, 1, 0, Lc};
        if (g.TR > 0 && Lc >= g.TR) q2_conv_strip(&g, &st, nb, two_b, zp, q);
        else q2_pixels(&g, oha, ohe, ow, ow + 1, nb, two_b, ws, q);
        q2_pixels(&g, 0, oha, ow, ow + 1, nb, two_b, ws, q);
        q2_pixels(&g, ohe, OH, ow, ow + 1, nb, two_b, ws, q);
      }
    }
  }
  if (g.TR > 0) _tile_release();
}

/* ---- FC (qllc_k_fc_*__amx2, weights QLLC_LAYOUT_K64N16) -------------------------------------------------
 * A tiles of TR input rows x 64 reductions (TR = 16, or M when fewer), read where the rows lie (stride K)
 * when K is a multiple of 64, else from panels of up to QLLC_FC_MB rows copied into the scratch with
 * zeros to K rounded up to 64; B tiles of 16 K4N16 lines of a block of 16 channels. The last row tile
 * ends at the last row (rows computed twice, identically). */
QM_INL void q2_fc(uint8_t *y, const uint8_t *x, const int8_t *wp, const int32_t *bias, const int32_t *m,
                  const int32_t *n, int64_t M, int64_t N, int64_t K, int sgn, int32_t z_y, int32_t lo, int32_t hi,
                  uint8_t *scratch) {
  if (M <= 0 || N <= 0) return;
  const int64_t Kp = qllc_round_up(K, 64), nk = Kp / 64, nbt = (N + 15) / 16, TR = M < 16 ? M : 16;
  const int direct = K % 64 == 0;
  const int64_t P = direct ? M : M < QLLC_FC_MB ? M : QLLC_FC_MB, lda = direct ? K : Kp;
  int32_t cbuf[16][16] __attribute__((aligned(64)));
  q2_config((int)TR, 64);
  for (int64_t r0 = 0; r0 < M; r0 += P) {
    const int64_t p0 = r0 + P <= M ? r0 : M - P; /* the last panel ends at M */
    const uint8_t *a = x + p0 * K;
    if (!direct) {
      for (int64_t i = 0; i < P; i++) {
        __builtin_memcpy(scratch + i * Kp, x + (p0 + i) * K, (size_t)K);
        __builtin_memset(scratch + i * Kp + K, 0, (size_t)(Kp - K));
      }
      QM_SCRATCH_WROTE(P * Kp);
      a = scratch;
    }
    const int64_t nt = (P + TR - 1) / TR;
    for (int64_t nb = 0; nb < nbt; nb += 2) {
      const int two_b = nb + 1 < nbt;
      q2_rq q[2];
      for (int j = 0; j < 1 + two_b; j++) q2_rqprep(&q[j], bias, m, n, (nb + j) * 16, N - (nb + j) * 16, z_y);
      const int8_t *b0 = wp + nb * nk * 1024;
      for (int64_t i = 0; i < nt; i += 2) {
        const int two_a = i + 1 < nt;
        const int64_t ta = i * TR + TR <= P ? i * TR : P - TR, tb = (i + 1) * TR + TR <= P ? (i + 1) * TR : P - TR;
        q2_zero(two_a, two_b);
        for (int64_t kb = 0; kb < nk; kb++)
          q2_step(sgn, two_a, two_b, a + ta * lda + kb * 64, lda, a + tb * lda + kb * 64, lda, b0 + kb * 1024,
                  b0 + (nk + kb) * 1024);
#define Q2_FC_OUT(T, row0, j)                                                                                 \
  do {                                                                                                       \
    _tile_stored(T, cbuf, 64);                                                                               \
    for (int64_t r = 0; r < TR; r++)                                                                         \
      _mm_mask_storeu_epi8(y + (p0 + (row0) + r) * N + (nb + (j)) * 16, q[j].in,                             \
                           q2_req(_mm512_load_si512(cbuf[r]), &q[j], z_y, lo, hi));                          \
  } while (0)
        Q2_FC_OUT(Q2_CA0, ta, 0);
        if (two_b) Q2_FC_OUT(Q2_CA1, ta, 1);
        if (two_a) Q2_FC_OUT(Q2_CB0, tb, 0);
        if (two_a && two_b) Q2_FC_OUT(Q2_CB1, tb, 1);
#undef Q2_FC_OUT
      }
    }
  }
  _tile_release();
}

/* ---- the registry's entry points ------------------------------------------------------------------ */
#define QM_DEF(TI, ti, TO, to)                                                                                   \
  QLLC_KERNEL __attribute__((target(QM_T))) void qllc_k_fc_##ti##_i8_##to##__amx(                                \
      TO *y, const TI *x, const int8_t *wp, const int32_t *bias_c, const int32_t *m, const int32_t *n, int64_t M, \
      int64_t N, int64_t K, int32_t z_x, int32_t z_y, int32_t act_lo, int32_t act_hi, uint8_t *scratch) {         \
    (void)z_x;                                                                                                   \
    qm_fc((uint8_t *)y, (const uint8_t *)x, wp, bias_c, m, n, M, N, K, (uint8_t)((TI)-1 < 0 ? 0x80 : 0), z_y,    \
          act_lo, act_hi, scratch);                                                                              \
  }                                                                                                              \
  QLLC_KERNEL __attribute__((target(QM_T))) void qllc_k_conv2d_##ti##_i8_##to##__amx(                            \
      TO *y, const TI *x, const int8_t *wp, const int32_t *bias_c, const int32_t *m, const int32_t *n, int64_t N, \
      int64_t C, int64_t H, int64_t W, int64_t M, int64_t OH, int64_t OW, int64_t KH, int64_t KW,                \
      int64_t stride_h, int64_t stride_w, int64_t pad_top, int64_t pad_left, int64_t dil_h, int64_t dil_w,       \
      int64_t group, int32_t z_x, int32_t z_y, int32_t act_lo, int32_t act_hi, uint8_t *scratch) {               \
    const qllc_conv_shape s = {N, C, H, W, M, OH, OW, KH, KW, stride_h, stride_w, pad_top, pad_left,             \
                               dil_h, dil_w, group, z_x, z_y, act_lo, act_hi};                                   \
    qm_convk((uint8_t *)y, (const uint8_t *)x, wp, bias_c, m, n, &s, (uint8_t)((TI)-1 < 0 ? 0x80 : 0), scratch); \
  }
#define Q2_DEF(TI, ti, TO, to)                                                                                   \
  QLLC_KERNEL __attribute__((target(QM_T))) void qllc_k_fc_##ti##_i8_##to##__amx2(                               \
      TO *y, const TI *x, const int8_t *wp, const int32_t *bias_c, const int32_t *m, const int32_t *n, int64_t M, \
      int64_t N, int64_t K, int32_t z_x, int32_t z_y, int32_t act_lo, int32_t act_hi, uint8_t *scratch) {         \
    (void)z_x;                                                                                                   \
    q2_fc((uint8_t *)y, (const uint8_t *)x, wp, bias_c, m, n, M, N, K, (TI)-1 < 0, z_y, act_lo, act_hi, scratch); \
  }                                                                                                              \
  QLLC_KERNEL __attribute__((target(QM_T))) void qllc_k_conv2dcl_##ti##_i8_##to##__amx(                          \
      TO *y, const TI *x, const int8_t *wp, const int32_t *bias_c, const int32_t *m, const int32_t *n, int64_t N, \
      int64_t C, int64_t H, int64_t W, int64_t M, int64_t OH, int64_t OW, int64_t KH, int64_t KW,                \
      int64_t stride_h, int64_t stride_w, int64_t pad_top, int64_t pad_left, int64_t dil_h, int64_t dil_w,       \
      int64_t group, int32_t z_x, int32_t z_y, int32_t act_lo, int32_t act_hi, uint8_t *scratch, int64_t x_nhwc, \
      int64_t y_nhwc) {                                                                                          \
    const qllc_conv_shape s = {N, C, H, W, M, OH, OW, KH, KW, stride_h, stride_w, pad_top, pad_left,             \
                               dil_h, dil_w, group, z_x, z_y, act_lo, act_hi};                                   \
    q2_convk((uint8_t *)y, (const uint8_t *)x, wp, bias_c, m, n, &s, (TI)-1 < 0, scratch, x_nhwc, y_nhwc);       \
  }
Q2_DEF(int8_t, i8, int8_t, i8)
Q2_DEF(int8_t, i8, uint8_t, u8)
Q2_DEF(uint8_t, u8, int8_t, i8)
Q2_DEF(uint8_t, u8, uint8_t, u8)
QM_DEF(int8_t, i8, int8_t, i8)
QM_DEF(int8_t, i8, uint8_t, u8)
QM_DEF(uint8_t, u8, int8_t, i8)
QM_DEF(uint8_t, u8, uint8_t, u8)
