/* targets/x86_64/kernels/x86_f32dw.h: the x86_64 variants of the float depthwise conv (group == C == M;
 * rows in variants.def): libjit/bitcode/f32_dw.h's body, 8 vectors of 16 output pixels at once with
 * AVX-512 (one zmm each), 4 with AVX2 (two ymm each).
 *
 * Compiled as the end of x86_dw8.c's translation unit, after x86_f32.h (whose opening comment says why). */
#ifndef QLLC_X86_F32DW_H
#define QLLC_X86_F32DW_H
#include "f32_dw.h"
#include "x86_f32.h"

/* ---- the exported variants ------------------------------------------------------------------------------ */
#define F32DW_VARIANT(isa, target_features, nb)                                                                   \
  __attribute__((target(target_features))) void qllc_k_dwconv2d_f32_f32_f32__##isa(F32_CONV_PARAMS) {          \
    (void)M, (void)group; /* group == C == M: the row's predicate */                                             \
    dwconv_f32_body(nb, y, x, wp, bias, N, C, H, W, OH, OW, KH, KW, stride_h, stride_w, pad_top, pad_left, dil_h,  \
                    dil_w, act_lo, act_hi, (float *)scratch);                                                      \
  }
F32DW_VARIANT(avx512, "avx512f", 8)
F32DW_VARIANT(avx2, "avx2", 4)

#endif
