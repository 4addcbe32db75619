/* targets/aarch64/kernels/kernels_arm_q16.h: the aarch64 NEON variants (__neon) of the fused 16-bit-input
 * Conv and FC layers (arm_q16.c): int16 x int8 (16x8) and int16 x int16. Same contract as
 * qllc_k_conv2d_i16_* / qllc_k_fc_i16_* of kernels_q.h, except: weights packed at compile time
 * (src/lower/pack16.c) in QLLC_LAYOUT_K2N16 (FC) / QLLC_LAYOUT_ROWS_K2 (conv), int16 values (16x8
 * weights widened); the bias as the scalar kernel's (int64); scratch qllc_scratch_conv(K, 2) bytes
 * (conv; FC does not touch its qllc_scratch_fc(M, K, 2) bytes). Bit-identical to the scalar kernels. */
#ifndef QLLC_KERNELS_ARM_Q16_H
#define QLLC_KERNELS_ARM_Q16_H
#include "kernels_variants.h"

QLLC_VARIANT_Q16(neon)

#endif
