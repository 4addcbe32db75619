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
#include "layouts.h"
#include "qllc_kernel.h"

#define QLLC_X86_Q16(tw)                                                                                        \
  void qllc_k_fc_i16_##tw##_i16__avx512vnni(int16_t *y, const int16_t *x, const int16_t *wp, const int64_t *bias, \
                                             const int32_t *m, const int32_t *n, int64_t M, int64_t N, int64_t K,  \
                                             int32_t z_x, int32_t z_y, int32_t act_lo, int32_t act_hi,            \
                                             uint8_t *scratch);                                                   \
  void qllc_k_conv2d_i16_##tw##_i16__avx512vnni(                                                                 \
      int16_t *y, const int16_t *x, const int16_t *wp, const int64_t *bias, const int32_t *m, const int32_t *n,  \
      int64_t N, int64_t C, int64_t H, int64_t W, int64_t M, int64_t OH, int64_t OW, int64_t KH, int64_t KW,       \
      int64_t stride_h, int64_t stride_w, int64_t pad_top, int64_t pad_left, int64_t dil_h, int64_t dil_w,        \
      int64_t group, int32_t z_x, int32_t z_y, int32_t act_lo, int32_t act_hi, uint8_t *scratch);
QLLC_X86_Q16(i8)
QLLC_X86_Q16(i16)
#undef QLLC_X86_Q16

#endif
