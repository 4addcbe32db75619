/* targets/x86_64/kernels/kernels_x86_amx.h: the AMX-INT8 variants (__amx) of the fused 8-bit Conv and FC
 * layers (x86_amx.c). Same contract and packed operands as the avx512vnni variants (kernels_x86_q8.h):
 * weights QLLC_LAYOUT_K4N16 (FC) / QLLC_LAYOUT_ROWS_K4 (conv), bias_c for u8 x s8, scratch
 * qllc_scratch_fc(M, K, 1) / qllc_scratch_conv(K, 1) bytes (overwritten); about 2.2 KiB of stack
 * (two C tiles and the tile configuration). Needs AMX-TILE and AMX-INT8 (Sapphire Rapids, Granite
 * Rapids) and, on Linux, the process's XTILEDATA permission: arch_prctl(ARCH_REQ_XCOMP_PERM = 0x1023,
 * XFEATURE_XTILEDATA = 18) before the first call, or the first tile instruction faults (SIGILL). */
#ifndef QLLC_KERNELS_X86_AMX_H
#define QLLC_KERNELS_X86_AMX_H
#include "layouts.h"
#include "qllc_kernel.h"

#define QLLC_X86_AMX_DECL(TI, ti, TO, to)                                                                        \
  void qllc_k_fc_##ti##_i8_##to##__amx(TO *y, const TI *x, const int8_t *wp, const int32_t *bias_c,             \
                                       const int32_t *m, const int32_t *n, int64_t M, int64_t N, int64_t K,     \
                                       int32_t z_x, int32_t z_y, int32_t act_lo, int32_t act_hi,                \
                                       uint8_t *scratch);                                                       \
  void qllc_k_conv2d_##ti##_i8_##to##__amx(                                                                     \
      TO *y, const TI *x, const int8_t *wp, const int32_t *bias_c, const int32_t *m, const int32_t *n,          \
      int64_t N, int64_t C, int64_t H, int64_t W, int64_t M, int64_t OH, int64_t OW, int64_t KH, int64_t KW,    \
      int64_t stride_h, int64_t stride_w, int64_t pad_top, int64_t pad_left, int64_t dil_h, int64_t dil_w,      \
      int64_t group, int32_t z_x, int32_t z_y, int32_t act_lo, int32_t act_hi, uint8_t *scratch);
QLLC_X86_AMX_DECL(int8_t, i8, int8_t, i8)
QLLC_X86_AMX_DECL(int8_t, i8, uint8_t, u8)
QLLC_X86_AMX_DECL(uint8_t, u8, int8_t, i8)
QLLC_X86_AMX_DECL(uint8_t, u8, uint8_t, u8)
#undef QLLC_X86_AMX_DECL

#endif
