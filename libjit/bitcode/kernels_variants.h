/* libjit/bitcode/kernels_variants.h: the declarations of the ISA variants of the fused Conv and FC
 * layers (targets/<arch>/kernels/), one macro per signature for every architecture's header. A
 * variant takes its reference's arguments (kernels_q.h: qllc_k_fc_* / qllc_k_conv2d_*) with the
 * weights packed in its layout (layouts.h) and one more argument, scratch; the headers that use these
 * macros say which layout, bias and scratch size each variant expects. */
#ifndef QLLC_KERNELS_VARIANTS_H
#define QLLC_KERNELS_VARIANTS_H
#include "layouts.h"
#include "qllc_kernel.h"

/* FC / Conv of the reference's shape, named `name`: TI in, TW packed weights, TB bias, TO out */
#define QLLC_VARIANT_FC(name, TI, TW, TB, TO)                                                                      \
  void name(TO *y, const TI *x, const TW *wp, const TB *bias_c, const int32_t *m, const int32_t *n, int64_t M,     \
            int64_t N, int64_t K, int32_t z_x, int32_t z_y, int32_t act_lo, int32_t act_hi, uint8_t *scratch);
#define QLLC_VARIANT_CONV(name, TI, TW, TB, TO)                                                                    \
  void name(TO *y, const TI *x, const TW *wp, const TB *bias_c, const int32_t *m, const int32_t *n, int64_t N,     \
            int64_t C, int64_t H, int64_t W, int64_t M, int64_t OH, int64_t OW, int64_t KH, int64_t KW,            \
            int64_t stride_h, int64_t stride_w, int64_t pad_top, int64_t pad_left, int64_t dil_h, int64_t dil_w,   \
            int64_t group, int32_t z_x, int32_t z_y, int32_t act_lo, int32_t act_hi, uint8_t *scratch);

/* A conv variant's arguments after its operands, in QLLC_VARIANT_CONV's order, as one record for the
   variants whose drivers take them by pointer: shape, strides, pads (top, left), dilations, group,
   zero points and the activation clamp. */
typedef struct qllc_conv_shape {
  int64_t N, C, H, W, M, OH, OW, KH, KW, sh, sw, pt, pl, dh, dw, group;
  int32_t z_x, z_y, lo, hi;
} qllc_conv_shape;

/* The four 8-bit input / output combinations of one op stem (fc, conv2d, dwconv2d, conv2dc4) and ISA:
   qllc_k_<stem>_<in>_i8_<out>__<isa> */
#define QLLC_VARIANT_Q8_IO(KIND, stem, isa)                                                  \
  KIND(qllc_k_##stem##_i8_i8_i8__##isa, int8_t, int8_t, int32_t, int8_t)                     \
  KIND(qllc_k_##stem##_i8_i8_u8__##isa, int8_t, int8_t, int32_t, uint8_t)                    \
  KIND(qllc_k_##stem##_u8_i8_i8__##isa, uint8_t, int8_t, int32_t, int8_t)                    \
  KIND(qllc_k_##stem##_u8_i8_u8__##isa, uint8_t, int8_t, int32_t, uint8_t)
/* 8-bit FC and Conv of one ISA */
#define QLLC_VARIANT_Q8(isa)                      \
  QLLC_VARIANT_Q8_IO(QLLC_VARIANT_FC, fc, isa)    \
  QLLC_VARIANT_Q8_IO(QLLC_VARIANT_CONV, conv2d, isa)
/* 16-bit inputs, 16x8 and int16 x int16 (int16 packed weights, int64 bias), FC and Conv of one ISA */
#define QLLC_VARIANT_Q16(isa)                                                         \
  QLLC_VARIANT_FC(qllc_k_fc_i16_i8_i16__##isa, int16_t, int16_t, int64_t, int16_t)    \
  QLLC_VARIANT_FC(qllc_k_fc_i16_i16_i16__##isa, int16_t, int16_t, int64_t, int16_t)   \
  QLLC_VARIANT_CONV(qllc_k_conv2d_i16_i8_i16__##isa, int16_t, int16_t, int64_t, int16_t) \
  QLLC_VARIANT_CONV(qllc_k_conv2d_i16_i16_i16__##isa, int16_t, int16_t, int64_t, int16_t)

#endif
