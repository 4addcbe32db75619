/* targets/x86_64/kernels/kernels_x86_q16.h: the AVX512-VNNI (vpdpwssd) variants of the fused 16-bit
 * input layers: 16x8 (int16 activations, int8 weights) and int16 x int16.
 *
 * Same contract and bits as the scalar qllc_k_fc_i16_<w>_i16 / qllc_k_conv2d_i16_<w>_i16 (kernels_q.h),
 * except that the weights come packed (libjit/bitcode/layouts.h, packed by src/lower's qllc_pack_w16):
 *   fc   16x8: QLLC_LAYOUT_K2N16      int16: QLLC_LAYOUT_K2N16_SPLIT
 *   conv 16x8: QLLC_LAYOUT_ROWS_K2    int16: QLLC_LAYOUT_ROWS_K2_SPLIT
 * and that they take a scratch buffer (64-byte aligned) of qllc_scratch_fc(M, K, 2) /
 * qllc_scratch_conv(C / group * KH * KW, 2) bytes. bias (int64, -z_x * sum w folded in), m and n have
 * N (fc) / M (conv) entries. */
#ifndef QLLC_KERNELS_X86_Q16_H
#define QLLC_KERNELS_X86_Q16_H
#include "kernels_variants.h"

QLLC_VARIANT_Q16(avx512vnni)
/* The direct conv over channel pairs: weights QLLC_LAYOUT_ROWS_C2 (16x8, with its int32 trailer) /
   ROWS_C2_SPLIT (int16), scratch qllc_scratch_c2(), the shapes qllc_c4_fits() takes. */
QLLC_VARIANT_CONV(qllc_k_conv2dc2_i16_i8_i16__avx512vnni, int16_t, int16_t, int64_t, int16_t)
QLLC_VARIANT_CONV(qllc_k_conv2dc2_i16_i16_i16__avx512vnni, int16_t, int16_t, int64_t, int16_t)

#endif
