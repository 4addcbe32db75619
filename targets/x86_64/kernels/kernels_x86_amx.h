/* targets/x86_64/kernels/kernels_x86_amx.h: the AMX-INT8 variants (__amx) of the fused 8-bit Conv and FC
 * layers (x86_amx.c). Same contract and packed operands as the avx512vnni variants (kernels_x86_q8.h):
 * weights QLLC_LAYOUT_K4N16 (FC) / QLLC_LAYOUT_ROWS_K4 (conv), bias_c for u8 x s8, scratch
 * qllc_scratch_fc(M, K, 1) / qllc_scratch_conv(K, 1) bytes (overwritten); about 2.2 KiB of stack
 * (two C tiles and the tile configuration). Needs AMX-TILE and AMX-INT8 (Sapphire Rapids, Granite
 * Rapids) and, on Linux, the process's XTILEDATA permission: arch_prctl(ARCH_REQ_XCOMP_PERM = 0x1023,
 * XFEATURE_XTILEDATA = 18) before the first call, or the first tile instruction faults (SIGILL). */
#ifndef QLLC_KERNELS_X86_AMX_H
#define QLLC_KERNELS_X86_AMX_H
#include "kernels_variants.h"

QLLC_VARIANT_Q8(amx)

#endif
