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
#include "x86_tr4.h"

#define QM_T "amx-tile,amx-int8,avx512f,avx512bw,avx512vl,avx512dq,avx512vnni"
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
QM_DEF(int8_t, i8, int8_t, i8)
QM_DEF(int8_t, i8, uint8_t, u8)
QM_DEF(uint8_t, u8, int8_t, i8)
QM_DEF(uint8_t, u8, uint8_t, u8)
