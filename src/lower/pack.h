/* src/lower/pack.h: compile-time packing of a fused layer's constants into an ISA variant's layout
 * (libjit/bitcode/layouts.h defines every layout and the bias each variant expects).
 *
 * Inputs are what the scalar kernel would get from the quantizer (src/quant, qllc_qnode): w[ch][K] in
 * the plain layout (conv: [M][C/g*KH*KW], fc: [N][K]), bias[ch] (int32 for 8-bit inputs with the
 * -z_x * sum w term already folded in, int64 for 16-bit inputs). Outputs go to caller-owned buffers of
 * the sizes the *_size functions return. Pure functions: no allocation, no LLVM, usable from tests.
 */
#ifndef QLLC_PACK_H
#define QLLC_PACK_H
#include <stddef.h>
#include <stdint.h>

#include "../../libjit/bitcode/layouts.h"

/* Bytes of the packed weights of `ch` output channels of K reductions in layout l (the layout fixes the
 * element size: int8 for PLAIN, ROWS_K4 and K4N16, float for F32_N32, int16 for the others). */
size_t qllc_pack_size(qllc_layout l, int64_t ch, int64_t K);
/* The same for a conv of `taps` = KH*KW taps (K / taps input channels): T64N16's size depends on them
   (qllc_pack_size gives 0 for it); every other layout's is qllc_pack_size's. */
size_t qllc_pack_size_taps(qllc_layout l, int64_t ch, int64_t K, int64_t taps);

/* 8-bit weights: ROWS_K4 and K4N16. in_is_i8: the input is int8 (the variant shifts it to u8), so the
 * packed bias is bias - 128 * sum_k w[c][k] (mod 2^32); else bias_c = bias. */
void qllc_pack_w8(qllc_layout l, void *wp, const int8_t *w, int64_t ch, int64_t K);
/* ROWS_C4: conv weights of `taps` = KH*KW taps per input channel (K / taps channels, a multiple of 4),
 * each row reordered to (c / 4, tap, c % 4). Writes qllc_pack_size(ROWS_C4, ch, K) bytes. */
void qllc_pack_w8_c4(void *wp, const int8_t *w, int64_t ch, int64_t K, int64_t taps);
/* C4N16: conv weights (group 1, K / taps channels, a multiple of 4) as K4N16 lines of the ROWS_C4 order.
 * Writes qllc_pack_size(C4N16, ch, K) bytes. */
void qllc_pack_w8_c4n16(void *wp, const int8_t *w, int64_t ch, int64_t K, int64_t taps);
/* T64N16: conv weights (group 1, K / taps channels, a multiple of 4) as the AMX conv's B tiles.
 * Writes qllc_pack_size_taps(T64N16, ch, K, taps) bytes. K64N16: FC weights as K4N16 with K rounded up
 * to 64. Writes qllc_pack_size(K64N16, ch, K) bytes. */
void qllc_pack_w8_t64n16(void *wp, const int8_t *w, int64_t ch, int64_t K, int64_t taps);
void qllc_pack_w8_k64n16(void *wp, const int8_t *w, int64_t ch, int64_t K);
void qllc_pack_bias8(int32_t *bias_c, const int32_t *bias, const int8_t *w, int64_t ch, int64_t K, int in_is_i8);

/* 16-bit inputs: ROWS_K2, K2N16 (w8 != NULL: 16x8 weights, widened) and ROWS_K2_SPLIT, K2N16_SPLIT
 * (w16 != NULL: int16 weights split into lo/hi planes). The bias is used as it is. */
void qllc_pack_w16(qllc_layout l, void *wp, const int8_t *w8, const int16_t *w16, int64_t ch, int64_t K);
/* The same for conv weights of `taps` taps per channel, which the C2 layouts reorder (K / taps channels,
 * an even number); for the other layouts taps is not read. */
void qllc_pack_w16_c2(qllc_layout l, void *wp, const int8_t *w8, const int16_t *w16, int64_t ch, int64_t K,
                      int64_t taps);
/* ROWS_C2's trailer (after qllc_pack_w16_c2 wrote wp, which leaves it 0): per output channel c, 1 when
 * qllc_c2_int32(sum_k |w8[c][k]|, bias[c]) and qllc_req32_fits(n[c], z_y) (libjit/bitcode/layouts.h),
 * from the plain w8[ch][K], the int64 bias, the shifts and the output zero point the kernel gets.
 * Returns the number of channels set. */
int64_t qllc_pack_c2_int32(void *wp, const int8_t *w8, const int64_t *bias, const int32_t *n, int32_t z_y, int64_t ch,
                           int64_t K);

/* ---- the catalogue's per-layout functions -------------------------------------------------------------
 * A kernel catalogue row (targets/<arch>/kernels/variants.def) names three of these by id: its shape
 * predicate qllc_fits_<id>, its packer qllc_packer_<LAYOUT> and its scratch size qllc_vscratch_<id>.
 * The lowering (src/lower/registry.c, qllc_lower_choose; lower_q.c) and the kernel tests call them
 * through the row, so a layer is packed and sized the same way wherever a variant runs. The lists below
 * are today's; registry.c and the tests also declare each function from the rows that name it. */

/* A fused layer's geometry, as the lowering sees it. */
typedef struct qllc_layer_geom {
  int conv; /* 1: a Conv (the conv fields); 0: an FC (fc_m rows of K inputs, fc_n outputs) */
  int64_t N, C, H, W, M, OH, OW, KH, KW, sh, sw, pt, pl, pb, pr, dh, dw, group;
  int64_t fc_m, fc_n;
  int64_t K; /* the reduction: C/group*KH*KW (conv), K (FC) */
} qllc_layer_geom;

/* 1 when a conv is depthwise (group == C == M, more than one group). */
int qllc_geom_depthwise(const qllc_layer_geom *g);

/* Shape predicates: 1 when the variant takes the layer; 0 when it is offered the layer but does not
 * take it (why: the reason, for the report); -1 when the layer is of a class the variant is not for
 * (a depthwise variant and a plain conv, or the reverse), which the report does not mention; 2 (an
 * ALT_NHWC row's) when it takes the layer only where both its ends are channel-last: the lowering takes
 * it and lowers again without it if the layout pass leaves an end NCHW (src/lower/lower.c).
 *   fc     every FC
 *   fc64   an FC of 64 rows or more (-1 for fewer)
 *   panel  a conv that is not depthwise, with at least 4 output channels per group (the panel
 *          variants tile 4 output channels of one group against a panel of pixels)
 *   dw     a depthwise conv that qllc_dw_fits
 *   c4     a panel conv that qllc_c4_fits (stride 1, C/group a multiple of 4, more than one tap)
 *   amxcl  a panel conv of group 1, C a multiple of 4, no dilation along W (the AMX implicit conv)
 *   cl     a panel conv of more than one tap that qllc_cl_fits (group 1, C a multiple of 4); 2 where it
 *          qllc_c4_fits with qllc_c4_lanes_used >= QLLC_C4_MIN_LANES (the C4 variant wastes fewer
 *          pixel lanes there) and for an unpadded strided 1x1 conv; list the cl row before the c4 row
 *          of the same ISA
 *   f32conv  a conv that is not depthwise, of group 1 (the float conv variants)
 *   f32d     an f32conv conv of stride 1 whose output rows are at least 16 (KW-1) dw wide (the direct float conv)
 *   f32t     an f32conv conv of stride 1 and at least 16 output channels (the float conv with the tile transposed)
 *   f32dw    a depthwise conv of strides up to QLLC_DWF32_MAX_STRIDE (the float depthwise variants) */
typedef int qllc_fits_fn(const qllc_layer_geom *g, char *why, size_t size);
qllc_fits_fn qllc_fits_fc, qllc_fits_fc64, qllc_fits_panel, qllc_fits_dw, qllc_fits_c4, qllc_fits_cl, qllc_fits_amxcl,
    qllc_fits_f32conv, qllc_fits_f32d, qllc_fits_f32t, qllc_fits_f32dw;

/* Scratch bytes (libjit/bitcode/layouts.h): conv1 / conv2 qllc_scratch_conv(K, 1 / 2), fc1 / fc2
 * qllc_scratch_fc, dw qllc_scratch_dw, c4 qllc_scratch_c4, c2 qllc_scratch_c2, cl qllc_scratch_cl,
 * amxcl qllc_scratch_amxcl, amxfc qllc_scratch_amxfc, f32d qllc_scratch_conv_f32d,
 * f32dw qllc_scratch_dw_f32. */
typedef int64_t qllc_vscratch_fn(const qllc_layer_geom *g);
qllc_vscratch_fn qllc_vscratch_conv1, qllc_vscratch_conv2, qllc_vscratch_fc1, qllc_vscratch_fc2, qllc_vscratch_dw,
    qllc_vscratch_c4, qllc_vscratch_c2, qllc_vscratch_cl, qllc_vscratch_amxcl, qllc_vscratch_amxfc,
    qllc_vscratch_f32fc, qllc_vscratch_f32conv, qllc_vscratch_f32d, qllc_vscratch_f32dw;

/* A fused layer's constants as the quantizer gives them, for a packer. */
typedef struct qllc_pack_src {
  const void *w;         /* [ch][K] in the plain layout: int8 (w_i8) or int16 */
  int w_i8;
  int in_i8;             /* the input is int8 (the 8-bit layouts' u8 shift is folded into the bias) */
  const void *bias;      /* [ch] int32 (8-bit inputs) or int64 (16-bit inputs) */
  const int32_t *n;      /* [ch] shifts and the output zero point (ROWS_C2's trailer) */
  int32_t z_y;
  int64_t ch, K, taps;   /* taps: KH*KW for a conv, 1 for an FC */
  int w_f32;             /* float weights (the float layouts; w is float[ch][K], bias is not read) */
} qllc_pack_src;
/* A layout's packer: writes qllc_pack_size(layout, ch, K) bytes of weights to wp and ch biases to
 * bias_c (int32 for the 8-bit layouts, as qllc_pack_bias8; int64 for the 16-bit ones, as given; the
 * float layouts write no bias: their variants take the node's bias as it is, bias_c may be NULL). Returns
 * -1, or for ROWS_C2 the number of output channels that accumulate in int32 (the report's mode), or
 * -2 when the weights are of a kind the layout does not take. */
typedef int64_t qllc_packer_fn(const qllc_pack_src *s, void *wp, void *bias_c);
qllc_packer_fn qllc_packer_ROWS_K4, qllc_packer_K4N16, qllc_packer_DW_Q4, qllc_packer_ROWS_C4, qllc_packer_C4N16,
    qllc_packer_T64N16, qllc_packer_K64N16,
    qllc_packer_ROWS_K2, qllc_packer_ROWS_K2_SPLIT, qllc_packer_K2N16, qllc_packer_K2N16_SPLIT, qllc_packer_ROWS_C2,
    qllc_packer_ROWS_C2_SPLIT, qllc_packer_F32_N32, qllc_packer_F32_M24;

#endif
