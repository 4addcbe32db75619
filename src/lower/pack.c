/* src/lower/pack.c: packing of 8-bit fused-layer weights and biases into the layouts of
 * libjit/bitcode/layouts.h (ROWS_K4, ROWS_C4 and C4N16 for conv, K4N16 for FC, DW_Q4 for depthwise conv), and the packed
 * size of every layout. The 16-bit packers are in pack16.c. */
#include "lower/pack.h"

#include <string.h>

size_t qllc_pack_size(qllc_layout l, int64_t ch, int64_t K) {
  const int64_t Kp4 = qllc_round_up(K, 4), Kp2 = qllc_round_up(K, 2), Np = qllc_round_up(ch, QLLC_NB);
  switch (l) {
  case QLLC_LAYOUT_PLAIN: return (size_t)(ch * K); /* 8-bit elements; the plain layout is never packed */
  case QLLC_LAYOUT_ROWS_K4: return (size_t)(ch * Kp4);
  case QLLC_LAYOUT_K4N16: return (size_t)(Np * Kp4);
  case QLLC_LAYOUT_ROWS_K2: return (size_t)(ch * Kp2 * 2);
  case QLLC_LAYOUT_ROWS_K2_SPLIT: return (size_t)(2 * ch * Kp2 * 2);
  case QLLC_LAYOUT_K2N16: return (size_t)(Np * Kp2 * 2);
  case QLLC_LAYOUT_K2N16_SPLIT: return (size_t)(2 * Np * Kp2 * 2);
  case QLLC_LAYOUT_DW_Q4: return (size_t)(ch * qllc_dw_row(K));
  case QLLC_LAYOUT_ROWS_C4: return (size_t)(ch * K);
  case QLLC_LAYOUT_C4N16: return (size_t)(Np * K);
  case QLLC_LAYOUT_ROWS_C2: return (size_t)(ch * Kp2 * 2 + qllc_round_up(ch, 2)); /* + the int32 trailer */
  case QLLC_LAYOUT_ROWS_C2_SPLIT: return (size_t)(2 * ch * Kp2 * 2);
  }
  return 0;
}

void qllc_pack_w8(qllc_layout l, void *wp, const int8_t *w, int64_t ch, int64_t K) {
  int8_t *d = wp;
  const int64_t Kp4 = qllc_round_up(K, 4);
  memset(d, 0, qllc_pack_size(l, ch, K));
  if (l == QLLC_LAYOUT_ROWS_K4) {
    for (int64_t c = 0; c < ch; c++) memcpy(d + c * Kp4, w + c * K, (size_t)K);
  } else if (l == QLLC_LAYOUT_K4N16) {
    for (int64_t c = 0; c < ch; c++) {
      const int64_t nb = c / QLLC_NB, j = c % QLLC_NB;
      for (int64_t k = 0; k < K; k++) d[((nb * (Kp4 / 4) + k / 4) * QLLC_NB + j) * 4 + k % 4] = w[c * K + k];
    }
  } else if (l == QLLC_LAYOUT_DW_Q4) {
    const int64_t R = qllc_dw_row(K);
    for (int64_t c = 0; c < ch; c++) memcpy(d + c * R, w + c * K, (size_t)K);
  }
}

void qllc_pack_w8_c4(void *wp, const int8_t *w, int64_t ch, int64_t K, int64_t taps) {
  int8_t *d = wp;
  const int64_t cg = taps > 0 ? K / taps : 0;
  for (int64_t o = 0; o < ch; o++)
    for (int64_t c = 0; c < cg; c++)
      for (int64_t t = 0; t < taps; t++) d[o * K + ((c / 4) * taps + t) * 4 + c % 4] = w[(o * cg + c) * taps + t];
}

void qllc_pack_w8_c4n16(void *wp, const int8_t *w, int64_t ch, int64_t K, int64_t taps) {
  int8_t *d = wp;
  const int64_t cg = taps > 0 ? K / taps : 0;
  memset(d, 0, qllc_pack_size(QLLC_LAYOUT_C4N16, ch, K));
  for (int64_t o = 0; o < ch; o++)
    for (int64_t c = 0; c < cg; c++)
      for (int64_t t = 0; t < taps; t++)
        d[(((o / QLLC_NB) * (K / 4) + (c / 4) * taps + t) * QLLC_NB + o % QLLC_NB) * 4 + c % 4] = w[(o * cg + c) * taps + t];
}

void qllc_pack_bias8(int32_t *bias_c, const int32_t *bias, const int8_t *w, int64_t ch, int64_t K, int in_is_i8) {
  for (int64_t c = 0; c < ch; c++) {
    uint32_t b = (uint32_t)bias[c];
    if (in_is_i8) {
      uint32_t s = 0; /* sum_k w[c][k] modulo 2^32, as the int32 accumulator wraps */
      for (int64_t k = 0; k < K; k++) s += (uint32_t)(int32_t)w[c * K + k];
      b -= 128u * s;
    }
    bias_c[c] = (int32_t)b;
  }
}
