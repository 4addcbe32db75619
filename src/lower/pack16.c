/* src/lower/pack16.c: qllc_pack_w16 (src/lower/pack.h), the weights of the 16-bit input variants in
 * the layouts of libjit/bitcode/layouts.h: ROWS_K2 / K2N16 (16x8 weights widened to int16) and their
 * _SPLIT forms (int16 weights as lo = w & 0xff, hi = (w - lo) >> 8, so w = hi * 256 + lo). Everything
 * past K (and past ch in the N16 blocks) is zero. */
#include "pack.h"

/* The value of weight (c, k) as the layout stores it: the whole value (plane < 0), or its lo (plane 0)
   or hi (plane 1) part; zero outside the ch x K matrix. */
static int16_t wval(const int8_t *w8, const int16_t *w16, int64_t ch, int64_t K, int64_t c, int64_t k, int plane) {
  if (c >= ch || k >= K) return 0;
  int32_t v = w8 ? (int32_t)w8[c * K + k] : (int32_t)w16[c * K + k];
  if (plane < 0) return (int16_t)v;
  int32_t lo = v & 0xff;
  return (int16_t)(plane == 0 ? lo : (v - lo) / 256); /* v - lo is a multiple of 256: exact division */
}

void qllc_pack_w16(qllc_layout l, void *wp, const int8_t *w8, const int16_t *w16, int64_t ch, int64_t K) {
  int16_t *o = (int16_t *)wp;
  const int64_t Kp2 = qllc_round_up(K, 2), P = Kp2 / 2, NBt = qllc_round_up(ch, QLLC_NB) / QLLC_NB;
  switch (l) {
  case QLLC_LAYOUT_ROWS_K2:
    for (int64_t c = 0; c < ch; c++)
      for (int64_t k = 0; k < Kp2; k++) o[c * Kp2 + k] = wval(w8, w16, ch, K, c, k, -1);
    break;
  case QLLC_LAYOUT_ROWS_K2_SPLIT:
    for (int plane = 0; plane < 2; plane++)
      for (int64_t c = 0; c < ch; c++)
        for (int64_t k = 0; k < Kp2; k++) o[(plane * ch + c) * Kp2 + k] = wval(w8, w16, ch, K, c, k, plane);
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
