/* targets/aarch64/kernels/kernels_arm_q8.h: the aarch64 ISA variants of the fused 8-bit Conv and FC
 * layers (arm_q8.c). Same contract as qllc_k_conv2d_* / qllc_k_fc_* of kernels_q.h, and the same
 * packed operands as the x86_64 variants (kernels_x86_q8.h), so one packer serves both architectures:
 *  - weights packed at compile time (src/lower/pack.c): FC in QLLC_LAYOUT_K4N16, conv in
 *    QLLC_LAYOUT_ROWS_K4 (libjit/bitcode/layouts.h);
 *  - bias_c as layouts.h says for u8 x s8 variants (an i8 input is shifted to u8 inside the kernel);
 *  - scratch: qllc_scratch_conv(K, 1) bytes for conv (FC reads its input rows in place: its scratch
 *    argument, qllc_scratch_fc(M, K, 1) bytes, is not touched), overwritten.
 * The results are bit-identical to the scalar kernels. ISAs: dotprod (Armv8.2 UDOT: u8 x u8 on the
 * weights shifted to u8, corrected exactly), i8mm (Armv8.6 USMMLA: u8 x s8 2x8x2 matrix products). */
#ifndef QLLC_KERNELS_ARM_Q8_H
#define QLLC_KERNELS_ARM_Q8_H
#include "layouts.h"
#include "qllc_kernel.h"

#define QLLC_ARM_Q8_DECL(TI, ti, TO, to, isa)                                                                    \
  void qllc_k_fc_##ti##_i8_##to##__##isa(TO *y, const TI *x, const int8_t *wp, const int32_t *bias_c,           \
                                         const int32_t *m, const int32_t *n, int64_t M, int64_t N, int64_t K,   \
                                         int32_t z_x, int32_t z_y, int32_t act_lo, int32_t act_hi,              \
                                         uint8_t *scratch);                                                     \
  void qllc_k_conv2d_##ti##_i8_##to##__##isa(                                                                   \
      TO *y, const TI *x, const int8_t *wp, const int32_t *bias_c, const int32_t *m, const int32_t *n,          \
      int64_t N, int64_t C, int64_t H, int64_t W, int64_t M, int64_t OH, int64_t OW, int64_t KH, int64_t KW,    \
      int64_t stride_h, int64_t stride_w, int64_t pad_top, int64_t pad_left, int64_t dil_h, int64_t dil_w,      \
      int64_t group, int32_t z_x, int32_t z_y, int32_t act_lo, int32_t act_hi, uint8_t *scratch);
#define QLLC_ARM_Q8_DECL_ISA(isa)                       \
  QLLC_ARM_Q8_DECL(int8_t, i8, int8_t, i8, isa)         \
  QLLC_ARM_Q8_DECL(int8_t, i8, uint8_t, u8, isa)        \
  QLLC_ARM_Q8_DECL(uint8_t, u8, int8_t, i8, isa)        \
  QLLC_ARM_Q8_DECL(uint8_t, u8, uint8_t, u8, isa)
QLLC_ARM_Q8_DECL_ISA(dotprod)
QLLC_ARM_Q8_DECL_ISA(i8mm)
#undef QLLC_ARM_Q8_DECL_ISA
#undef QLLC_ARM_Q8_DECL

/* The i8mm conv's activation panel: pixels a panel (a multiple of 16, at most QLLC_CONV_PB) such that
   the panel of K rounded up to 8 rows fits in qllc_scratch_conv(K, 1) bytes. */
static inline int64_t qllc_arm_mm_panel(int64_t K) {
  const int64_t kp4 = qllc_round_up(K, 4), kp8 = qllc_round_up(K, 8);
  return kp8 == kp4 ? QLLC_CONV_PB : kp4 * QLLC_CONV_PB / kp8 / 16 * 16;
}

#endif
