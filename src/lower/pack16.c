/* src/lower/pack16.c: qllc_pack_w16 (src/lower/pack.h), the weights of the 16-bit input variants in
 * the layouts of libjit/bitcode/layouts.h: ROWS_K2 / K2N16 (16x8 weights widened to int16) and their
 * _SPLIT forms, ROWS_C2 / ROWS_C2_SPLIT (ROWS_K2 rows in the channel-pair order of the direct conv)
 * (int16 weights as lo = w & 0xff, hi = (w - lo) >> 8, so w = hi * 256 + lo). Everything
 * past K (and past ch in the N16 blocks) is zero. ROWS_C2's int32 trailer: qllc_pack_c2_int32. */
#include "pack.h"

#include <string.h>

/* The value of weight (c, k) as the layout stores it: the whole value (plane < 0), or its lo (plane 0)
   or hi (plane 1) part; zero outside the ch x K matrix. */
static int16_t wval(const int8_t *w8, const int16_t *w16, int64_t ch, int64_t K, int64_t c, int64_t k, int plane) {
  if (c >= ch || k >= K) return 0;
  int32_t v = w8 ? (int32_t)w8[c * K + k] : (int32_t)w16[c * K + k];
  if (plane < 0) return (int16_t)v;
  int32_t lo = v & 0xff;
  return (int16_t)(plane == 0 ? lo : (v - lo) / 256); /* v - lo is a multiple of 256: exact division */
}

/* Reduction index kk of the channel-pair order (q, tap, c % 2) -> the ONNX order (c, tap), T taps. */
static int64_t c2_k(int64_t kk, int64_t T) {
  const int64_t q = kk / (2 * T), t = kk % (2 * T) / 2, i = kk % 2;
  return (2 * q + i) * T + t;
}

void qllc_pack_w16(qllc_layout l, void *wp, const int8_t *w8, const int16_t *w16, int64_t ch, int64_t K) {
  qllc_pack_w16_c2(l, wp, w8, w16, ch, K, 0);
}

void qllc_pack_w16_c2(qllc_layout l, void *wp, const int8_t *w8, const int16_t *w16, int64_t ch, int64_t K,
                      int64_t taps) {
  int16_t *o = (int16_t *)wp;
  const int64_t Kp2 = qllc_round_up(K, 2), P = Kp2 / 2, NBt = qllc_round_up(ch, QLLC_NB) / QLLC_NB;
  switch (l) {
  case QLLC_LAYOUT_ROWS_K2:
  case QLLC_LAYOUT_ROWS_C2: /* C2: the same rows in the channel-pair order, then the int32 trailer (0) */
    for (int64_t c = 0; c < ch; c++)
      for (int64_t k = 0; k < Kp2; k++)
        o[c * Kp2 + k] = wval(w8, w16, ch, K, c, l == QLLC_LAYOUT_ROWS_C2 && k < K ? c2_k(k, taps) : k, -1);
    if (l == QLLC_LAYOUT_ROWS_C2) memset(o + ch * Kp2, 0, (size_t)qllc_round_up(ch, 2));
    break;
  case QLLC_LAYOUT_ROWS_K2_SPLIT:
  case QLLC_LAYOUT_ROWS_C2_SPLIT:
    for (int plane = 0; plane < 2; plane++)
      for (int64_t c = 0; c < ch; c++)
        for (int64_t k = 0; k < Kp2; k++)
          o[(plane * ch + c) * Kp2 + k] =
              wval(w8, w16, ch, K, c, l == QLLC_LAYOUT_ROWS_C2_SPLIT && k < K ? c2_k(k, taps) : k, plane);
    break;
  case QLLC_LAYOUT_K2N16:
    for (int64_t nb = 0; nb < NBt; nb++)
      for (int64_t k2 = 0; k2 < P; k2++)
        for (int64_t j = 0; j < QLLC_NB; j++)
          for (int64_t t = 0; t < 2; t++)
            o[((nb * P + k2) * QLLC_NB + j) * 2 + t] = wval(w8, w16, ch, K, nb * QLLC_NB + j, k2 * 2 + t, -1);
    break;
  case QLLC_LAYOUT_K2N16_SPLIT:
    for (int64_t nb = 0; nb < NBt; nb++)
      for (int64_t k2 = 0; k2 < P; k2++)
        for (int plane = 0; plane < 2; plane++)
          for (int64_t j = 0; j < QLLC_NB; j++)
            for (int64_t t = 0; t < 2; t++)
              o[(((nb * P + k2) * 2 + plane) * QLLC_NB + j) * 2 + t] =
                  wval(w8, w16, ch, K, nb * QLLC_NB + j, k2 * 2 + t, plane);
    break;
  default: /* not a 16-bit layout: nothing to pack (the caller never asks) */
    break;
  }
}

int64_t qllc_pack_c2_int32(void *wp, const int8_t *w8, const int64_t *bias, const int32_t *n, int32_t z_y, int64_t ch,
                           int64_t K) {
  uint8_t *fl = (uint8_t *)wp + ch * qllc_round_up(K, 2) * 2;
  int64_t count = 0;
  for (int64_t c = 0; c < ch; c++) {
    int64_t wabs = 0;
    for (int64_t k = 0; k < K; k++) wabs += w8[c * K + k] < 0 ? -(int64_t)w8[c * K + k] : w8[c * K + k];
    fl[c] = (uint8_t)(qllc_c2_int32(wabs, bias[c]) && qllc_req32_fits(n[c], z_y));
    count += fl[c];
  }
  return count;
}
