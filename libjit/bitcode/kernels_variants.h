/* libjit/bitcode/kernels_variants.h: what the kernel catalogue's rows (targets/<arch>/kernels/variants.def)
 * expand to on the kernel side, and the helpers the rows are written with.
 *
 * A variant takes its reference's arguments (kernels_q.h: qllc_k_fc_* / qllc_k_conv2d_*) with the weights
 * packed in its row's layout (layouts.h), the bias as layouts.h says for that layout, and one more
 * argument, scratch (its row's scratch size); a row flagged ALT_NHWC also takes the layouts of its input and
 * output activations, x_nhwc and y_nhwc (0: NCHW, 1: NHWC, channel-last; set by the layout pass,
 * src/lower/layout.c). Its C declaration is made from its row: a kernel source
 * includes its architecture's variants.h, which declares every row of the architecture, so a
 * definition that does not match its row does not compile, and no header lists variants by hand. */
#ifndef QLLC_KERNELS_VARIANTS_H
#define QLLC_KERNELS_VARIANTS_H
#include "layouts.h"
#include "qllc_kernel.h"

/* FC / Conv of the reference's shape, named `name`: TI in, TW packed weights, TB bias, TO out */
#define QLLC_VARIANT_FC(name, TI, TW, TB, TO, PARAMS)                                                              \
  void name(TO *y, const TI *x, const TW *wp, const TB *bias_c, const int32_t *m, const int32_t *n, int64_t M,     \
            int64_t N, int64_t K, int32_t z_x, int32_t z_y, int32_t act_lo, int32_t act_hi, uint8_t *scratch PARAMS);
#define QLLC_VARIANT_CONV(name, TI, TW, TB, TO, PARAMS)                                                            \
  void name(TO *y, const TI *x, const TW *wp, const TB *bias_c, const int32_t *m, const int32_t *n, int64_t N,     \
            int64_t C, int64_t H, int64_t W, int64_t M, int64_t OH, int64_t OW, int64_t KH, int64_t KW,            \
            int64_t stride_h, int64_t stride_w, int64_t pad_top, int64_t pad_left, int64_t dil_h, int64_t dil_w,   \
            int64_t group, int32_t z_x, int32_t z_y, int32_t act_lo, int32_t act_hi, uint8_t *scratch PARAMS);

/* A float FC variant (issue 26): the float reference's arguments (kernels_f32.h: qllc_k_fc_f32_f32_f32), the
   weights packed in the row's layout, the node's bias as it is (may be NULL), then scratch. */
#define QLLC_VARIANT_FC_F32(name, TI, TW, TB, TO, PARAMS)                                                          \
  void name(float *y, const float *x, const float *wp, const float *bias, int64_t M, int64_t N, int64_t K,         \
            float act_lo, float act_hi, uint8_t *scratch PARAMS);

/* A float Conv variant: the float reference's arguments (qllc_k_conv2d_f32_f32_f32), then scratch. */
#define QLLC_VARIANT_CONV_F32(name, TI, TW, TB, TO, PARAMS)                                                        \
  void name(float *y, const float *x, const float *wp, const float *bias, int64_t N, int64_t C, int64_t H,         \
            int64_t W, int64_t M, int64_t OH, int64_t OW, int64_t KH, int64_t KW, int64_t stride_h,                \
            int64_t stride_w, int64_t pad_top, int64_t pad_left, int64_t dil_h, int64_t dil_w, int64_t group,      \
            float act_lo, float act_hi, uint8_t *scratch PARAMS);

/* The C types of a row's element kinds: activations, and by input kind the packed weights (16-bit
   inputs: int16, 16x8 weights widened) and the bias (int32 for 8-bit inputs, int64 for 16-bit). */
#define QLLC_VT_i8 int8_t
#define QLLC_VT_u8 uint8_t
#define QLLC_VT_i16 int16_t
#define QLLC_VW_i8 int8_t
#define QLLC_VW_u8 int8_t
#define QLLC_VW_i16 int16_t
#define QLLC_VB_i8 int32_t
#define QLLC_VB_u8 int32_t
#define QLLC_VB_i16 int64_t
#define QLLC_VT_f32 float
#define QLLC_VW_f32 float
#define QLLC_VB_f32 float
/* A row's prototype by op and input kind: the quantized signatures, or the float ones */
#define QLLC_VPROTO_fc_i8 QLLC_VARIANT_FC
#define QLLC_VPROTO_fc_u8 QLLC_VARIANT_FC
#define QLLC_VPROTO_fc_i16 QLLC_VARIANT_FC
#define QLLC_VPROTO_fc_f32 QLLC_VARIANT_FC_F32
#define QLLC_VPROTO_conv2d_i8 QLLC_VARIANT_CONV
#define QLLC_VPROTO_conv2d_u8 QLLC_VARIANT_CONV
#define QLLC_VPROTO_conv2d_i16 QLLC_VARIANT_CONV
#define QLLC_VPROTO_conv2d_f32 QLLC_VARIANT_CONV_F32
/* The parameters a row's flags add after scratch (QLLC_VX_PARAMS_<flags>), and the same as arguments
   (QLLC_VX_ARGS_<flags>, for wrappers passing them on): only ALT_NHWC and NHWC_MEASURED have any, the
   activation layouts. */
#define QLLC_VX_PARAMS_NONE
#define QLLC_VX_PARAMS_ALT
#define QLLC_VX_PARAMS_NARROW
#define QLLC_VX_PARAMS_MEASURED
#define QLLC_VX_PARAMS_ALT_MEASURED
#define QLLC_VX_PARAMS_ALT_NARROW
#define QLLC_VX_PARAMS_ALT_NHWC , int64_t x_nhwc, int64_t y_nhwc
#define QLLC_VX_PARAMS_NHWC_MEASURED , int64_t x_nhwc, int64_t y_nhwc
#define QLLC_VX_ARGS_NONE
#define QLLC_VX_ARGS_ALT
#define QLLC_VX_ARGS_NARROW
#define QLLC_VX_ARGS_MEASURED
#define QLLC_VX_ARGS_ALT_MEASURED
#define QLLC_VX_ARGS_ALT_NARROW
#define QLLC_VX_ARGS_ALT_NHWC , x_nhwc, y_nhwc
#define QLLC_VX_ARGS_NHWC_MEASURED , x_nhwc, y_nhwc
/* A row's declaration (variants.h defines QVARIANT as this before including variants.def). */
#define QLLC_VARIANT_DECLARE(kstem, op, in, w, out, isa, features, fits, layout, scratch, flags)                 \
  QLLC_VPROTO_##op##_##in(qllc_k_##kstem##_##in##_##w##_##out##__##isa, QLLC_VT_##in, QLLC_VW_##in, QLLC_VB_##in,        \
                   QLLC_VT_##out, QLLC_VX_PARAMS_##flags)

/* The four 8-bit input / output combinations of one variant, int8 weights: the rows
   qllc_k_<kstem>_<in>_i8_<out>__<isa> of the references qllc_k_<op>_<in>_i8_<out>. */
#define QLLC_VROWS_Q8(kstem, op, isa, features, fits, layout, scratch, flags)                                    \
  QVARIANT(kstem, op, i8, i8, i8, isa, features, fits, layout, scratch, flags)                                  \
  QVARIANT(kstem, op, i8, i8, u8, isa, features, fits, layout, scratch, flags)                                  \
  QVARIANT(kstem, op, u8, i8, i8, isa, features, fits, layout, scratch, flags)                                  \
  QVARIANT(kstem, op, u8, i8, u8, isa, features, fits, layout, scratch, flags)

/* A conv variant's arguments after its operands, in QLLC_VARIANT_CONV's order, as one record for the
   variants whose drivers take them by pointer: shape, strides, pads (top, left), dilations, group,
   zero points and the activation clamp. */
typedef struct qllc_conv_shape {
  int64_t N, C, H, W, M, OH, OW, KH, KW, sh, sw, pt, pl, dh, dw, group;
  int32_t z_x, z_y, lo, hi;
} qllc_conv_shape;

#endif
