/* targets/x86_64/kernels/kernels_x86_dw8.h: the x86_64 AVX-512 variant of the fused 8-bit depthwise
 * Conv (x86_dw8.c). Same contract and bits as qllc_k_conv2d_<ti>_i8_<to> of kernels_q.h when
 * group == C == M (one input and one output channel per group), except:
 *  - the caller guarantees group == C == M and qllc_dw_fits(KH, KW, stride_w, dil_w) (layouts.h);
 *  - weights packed at compile time in QLLC_LAYOUT_DW_Q4 (qllc_pack_w8, K = KH*KW);
 *  - bias_c from qllc_pack_bias8 (i8 inputs: bias - 128 * sum_k w, the input is shifted to u8 inside);
 *  - scratch: qllc_scratch_dw(H, W, KH, KW, pad_top, pad_left, dil_h, dil_w) bytes, overwritten.
 * ISA: AVX-512 F/BW/VL/DQ + VNNI + VBMI (vpermb). */
#ifndef QLLC_KERNELS_X86_DW8_H
#define QLLC_KERNELS_X86_DW8_H
#include "kernels_variants.h"

QLLC_VARIANT_Q8_IO(QLLC_VARIANT_CONV, dwconv2d, avx512vnni)

#endif
