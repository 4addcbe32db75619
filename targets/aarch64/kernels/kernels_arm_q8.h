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
#include "kernels_variants.h"

QLLC_VARIANT_Q8(dotprod)
QLLC_VARIANT_Q8(i8mm)

/* The i8mm conv's activation panel: pixels a panel (a multiple of 16, at most QLLC_CONV_PB) such that
   the panel of K rounded up to 8 rows fits in qllc_scratch_conv(K, 1) bytes. */
static inline int64_t qllc_arm_mm_panel(int64_t K) {
  const int64_t kp4 = qllc_round_up(K, 4), kp8 = qllc_round_up(K, 8);
  return kp8 == kp4 ? QLLC_CONV_PB : kp4 * QLLC_CONV_PB / kp8 / 16 * 16;
}

#endif
