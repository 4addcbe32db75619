/* src/lower/pack.h: compile-time packing of a fused layer's constants into an ISA variant's layout
 * (libjit/bitcode/layouts.h defines every layout and the bias each variant expects).
 *
 * Inputs are what the scalar kernel would get from the quantizer (src/quant, qllc_qnode): w[ch][K] in
 * the plain layout (conv: [M][C/g*KH*KW], fc: [N][K]), bias[ch] (int32 for 8-bit inputs with the
 * -z_x * sum w term already folded in, int64 for 16-bit inputs). Outputs go to caller-owned buffers of
 * the sizes the *_size functions return. Pure functions: no allocation, no LLVM, usable from tests.
 */
#ifndef QLLC_PACK_H
#define QLLC_PACK_H
#include <stddef.h>
#include <stdint.h>

#include "../../libjit/bitcode/layouts.h"

/* Bytes of the packed weights of `ch` output channels of K reductions in layout l (the layout fixes the
 * element size: int8 for PLAIN, ROWS_K4 and K4N16, int16 for the others). */
size_t qllc_pack_size(qllc_layout l, int64_t ch, int64_t K);

/* 8-bit weights: ROWS_K4 and K4N16. in_is_i8: the input is int8 (the variant shifts it to u8), so the
 * packed bias is bias - 128 * sum_k w[c][k] (mod 2^32); else bias_c = bias. */
void qllc_pack_w8(qllc_layout l, void *wp, const int8_t *w, int64_t ch, int64_t K);
/* ROWS_C4: conv weights of `taps` = KH*KW taps per input channel (K / taps channels, a multiple of 4),
 * each row reordered to (c / 4, tap, c % 4). Writes qllc_pack_size(ROWS_C4, ch, K) bytes. */
void qllc_pack_w8_c4(void *wp, const int8_t *w, int64_t ch, int64_t K, int64_t taps);
/* C4N16: conv weights (group 1, K / taps channels, a multiple of 4) as K4N16 lines of the ROWS_C4 order.
 * Writes qllc_pack_size(C4N16, ch, K) bytes. */
void qllc_pack_w8_c4n16(void *wp, const int8_t *w, int64_t ch, int64_t K, int64_t taps);
void qllc_pack_bias8(int32_t *bias_c, const int32_t *bias, const int8_t *w, int64_t ch, int64_t K, int in_is_i8);

/* 16-bit inputs: ROWS_K2, K2N16 (w8 != NULL: 16x8 weights, widened) and ROWS_K2_SPLIT, K2N16_SPLIT
 * (w16 != NULL: int16 weights split into lo/hi planes). The bias is used as it is. */
void qllc_pack_w16(qllc_layout l, void *wp, const int8_t *w8, const int16_t *w16, int64_t ch, int64_t K);
/* The same for conv weights of `taps` taps per channel, which the C2 layouts reorder (K / taps channels,
 * an even number); for the other layouts taps is not read. */
void qllc_pack_w16_c2(qllc_layout l, void *wp, const int8_t *w8, const int16_t *w16, int64_t ch, int64_t K,
                      int64_t taps);
/* ROWS_C2's trailer (after qllc_pack_w16_c2 wrote wp, which leaves it 0): per output channel c, 1 when
 * qllc_c2_int32(sum_k |w8[c][k]|, bias[c]) and qllc_req32_fits(n[c], z_y) (libjit/bitcode/layouts.h),
 * from the plain w8[ch][K], the int64 bias, the shifts and the output zero point the kernel gets.
 * Returns the number of channels set. */
int64_t qllc_pack_c2_int32(void *wp, const int8_t *w8, const int64_t *bias, const int32_t *n, int32_t z_y, int64_t ch,
                           int64_t K);

#endif
