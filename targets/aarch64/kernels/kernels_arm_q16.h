/* targets/aarch64/kernels/kernels_arm_q16.h: the aarch64 NEON variants (__neon) of the fused 16-bit-input
 * Conv and FC layers (arm_q16.c): int16 x int8 (16x8) and int16 x int16. Same contract as
 * qllc_k_conv2d_i16_* / qllc_k_fc_i16_* of kernels_q.h, except: weights packed at compile time
 * (src/lower/pack16.c) in QLLC_LAYOUT_K2N16 (FC) / QLLC_LAYOUT_ROWS_K2 (conv), int16 values (16x8
 * weights widened); the bias as the scalar kernel's (int64); scratch qllc_scratch_conv(K, 2) bytes
 * (conv; FC does not touch its qllc_scratch_fc(M, K, 2) bytes). Bit-identical to the scalar kernels. */
#ifndef QLLC_KERNELS_ARM_Q16_H
#define QLLC_KERNELS_ARM_Q16_H
#include "layouts.h"
#include "qllc_kernel.h"

#define QLLC_ARM_Q16_DECL(tw)                                                                                    \
  void qllc_k_fc_i16_##tw##_i16__neon(int16_t *y, const int16_t *x, const int16_t *wp, const int64_t *bias,     \
                                      const int32_t *m, const int32_t *n, int64_t M, int64_t N, int64_t K,      \
                                      int32_t z_x, int32_t z_y, int32_t act_lo, int32_t act_hi,                 \
                                      uint8_t *scratch);                                                        \
  void qllc_k_conv2d_i16_##tw##_i16__neon(                                                                      \
      int16_t *y, const int16_t *x, const int16_t *wp, const int64_t *bias, const int32_t *m, const int32_t *n, \
      int64_t N, int64_t C, int64_t H, int64_t W, int64_t M, int64_t OH, int64_t OW, int64_t KH, int64_t KW,    \
      int64_t stride_h, int64_t stride_w, int64_t pad_top, int64_t pad_left, int64_t dil_h, int64_t dil_w,      \
      int64_t group, int32_t z_x, int32_t z_y, int32_t act_lo, int32_t act_hi, uint8_t *scratch);
QLLC_ARM_Q16_DECL(i8)
QLLC_ARM_Q16_DECL(i16)
#undef QLLC_ARM_Q16_DECL

#endif
