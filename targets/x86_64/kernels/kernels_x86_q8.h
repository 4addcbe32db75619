/* targets/x86_64/kernels/kernels_x86_q8.h: the x86_64 ISA variants of the fused 8-bit Conv and FC
 * layers (x86_q8.c). Same contract as qllc_k_conv2d_* / qllc_k_fc_* of kernels_q.h, except:
 *  - weights packed at compile time (src/lower/pack.c): FC in QLLC_LAYOUT_K4N16, conv in
 *    QLLC_LAYOUT_ROWS_K4 (libjit/bitcode/layouts.h);
 *  - bias_c as layouts.h says for u8 x s8 variants (i8 inputs are shifted to u8 inside the kernel);
 *  - scratch: qllc_scratch_fc(M, K, 1) / qllc_scratch_conv(K, 1) bytes, 64-byte aligned, overwritten.
 * The results are bit-identical to the scalar kernels. ISAs: avx512vnni (AVX-512 F/BW/VL/DQ + VNNI),
 * avxvnni (AVX2 + AVX-VNNI), avx2 (exact emulation of vpdpbusd with vpmaddwd). */
#ifndef QLLC_KERNELS_X86_Q8_H
#define QLLC_KERNELS_X86_Q8_H
#include "kernels_variants.h"

QLLC_VARIANT_Q8(avx512vnni)
QLLC_VARIANT_Q8(avxvnni)
QLLC_VARIANT_Q8(avx2)
/* The direct conv over channels by 4 (weights QLLC_LAYOUT_ROWS_C4, scratch qllc_scratch_c4(), shapes
   qllc_c4_fits()), AVX-512 VNNI only. */
QLLC_VARIANT_Q8_IO(QLLC_VARIANT_CONV, conv2dc4, avx512vnni)
/* The direct conv with output channels in the lanes (weights QLLC_LAYOUT_C4N16, scratch
   qllc_scratch_cl(), shapes qllc_cl_fits()), AVX-512 VNNI only. */
QLLC_VARIANT_Q8_IO(QLLC_VARIANT_CONV, conv2dcl, avx512vnni)

#endif
