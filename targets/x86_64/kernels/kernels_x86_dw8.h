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
#include "layouts.h"
#include "qllc_kernel.h"

#define QLLC_X86_DW8_DECL(TI, ti, TO, to)                                                                      \
  void qllc_k_dwconv2d_##ti##_i8_##to##__avx512vnni(                                                          \
      TO *y, const TI *x, const int8_t *wp, const int32_t *bias_c, const int32_t *m, const int32_t *n,          \
      int64_t N, int64_t C, int64_t H, int64_t W, int64_t M, int64_t OH, int64_t OW, int64_t KH, int64_t KW,    \
      int64_t stride_h, int64_t stride_w, int64_t pad_top, int64_t pad_left, int64_t dil_h, int64_t dil_w,      \
      int64_t group, int32_t z_x, int32_t z_y, int32_t act_lo, int32_t act_hi, uint8_t *scratch);
QLLC_X86_DW8_DECL(int8_t, i8, int8_t, i8)
QLLC_X86_DW8_DECL(int8_t, i8, uint8_t, u8)
QLLC_X86_DW8_DECL(uint8_t, u8, int8_t, i8)
QLLC_X86_DW8_DECL(uint8_t, u8, uint8_t, u8)
#undef QLLC_X86_DW8_DECL

#endif
