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
#include "layouts.h"
#include "qllc_kernel.h"

#define QLLC_X86_Q8_DECL(TI, ti, TO, to, isa)                                                                    \
  void qllc_k_fc_##ti##_i8_##to##__##isa(TO *y, const TI *x, const int8_t *wp, const int32_t *bias_c,           \
                                         const int32_t *m, const int32_t *n, int64_t M, int64_t N, int64_t K,   \
                                         int32_t z_x, int32_t z_y, int32_t act_lo, int32_t act_hi,              \
                                         uint8_t *scratch);                                                     \
  void qllc_k_conv2d_##ti##_i8_##to##__##isa(                                                                   \
      TO *y, const TI *x, const int8_t *wp, const int32_t *bias_c, const int32_t *m, const int32_t *n,          \
      int64_t N, int64_t C, int64_t H, int64_t W, int64_t M, int64_t OH, int64_t OW, int64_t KH, int64_t KW,    \
      int64_t stride_h, int64_t stride_w, int64_t pad_top, int64_t pad_left, int64_t dil_h, int64_t dil_w,      \
      int64_t group, int32_t z_x, int32_t z_y, int32_t act_lo, int32_t act_hi, uint8_t *scratch);
#define QLLC_X86_Q8_DECL_ISA(isa)                       \
  QLLC_X86_Q8_DECL(int8_t, i8, int8_t, i8, isa)         \
  QLLC_X86_Q8_DECL(int8_t, i8, uint8_t, u8, isa)        \
  QLLC_X86_Q8_DECL(uint8_t, u8, int8_t, i8, isa)        \
  QLLC_X86_Q8_DECL(uint8_t, u8, uint8_t, u8, isa)
QLLC_X86_Q8_DECL_ISA(avx512vnni)
/* The direct conv over channels by 4 (weights QLLC_LAYOUT_ROWS_C4, scratch qllc_scratch_c4(), shapes
   qllc_c4_fits()), AVX-512 VNNI only. */
#define QLLC_X86_C4_DECL(TI, ti, TO, to)                                                                         \
  void qllc_k_conv2dc4_##ti##_i8_##to##__avx512vnni(                                                            \
      TO *y, const TI *x, const int8_t *wp, const int32_t *bias_c, const int32_t *m, const int32_t *n,          \
      int64_t N, int64_t C, int64_t H, int64_t W, int64_t M, int64_t OH, int64_t OW, int64_t KH, int64_t KW,    \
      int64_t stride_h, int64_t stride_w, int64_t pad_top, int64_t pad_left, int64_t dil_h, int64_t dil_w,      \
      int64_t group, int32_t z_x, int32_t z_y, int32_t act_lo, int32_t act_hi, uint8_t *scratch);
QLLC_X86_C4_DECL(int8_t, i8, int8_t, i8)
QLLC_X86_C4_DECL(int8_t, i8, uint8_t, u8)
QLLC_X86_C4_DECL(uint8_t, u8, int8_t, i8)
QLLC_X86_C4_DECL(uint8_t, u8, uint8_t, u8)
#undef QLLC_X86_C4_DECL
QLLC_X86_Q8_DECL_ISA(avxvnni)
QLLC_X86_Q8_DECL_ISA(avx2)
#undef QLLC_X86_Q8_DECL_ISA
#undef QLLC_X86_Q8_DECL

#endif
