/* src/lower/pack.c: packing of 8-bit fused-layer weights and biases into the layouts of
 * libjit/bitcode/layouts.h (ROWS_K4, ROWS_C4, C4N16 and T64N16 for conv, K4N16 and K64N16 for FC, DW_Q4 for
 * depthwise conv; and the float FC's F32_N32 and conv's F32_M24), and the packed
 * size of every layout. The 16-bit packers are in pack16.c. Also the functions the kernel catalogue's rows
 * name (pack.h): one packer per layout, the scratch sizes and the shape predicates. */
#include "lower/pack.h"

#include <stdio.h>
#include <string.h>

size_t qllc_pack_size(qllc_layout l, int64_t ch, int64_t K) {
  const int64_t Kp4 = qllc_round_up(K, 4), Kp2 = qllc_round_up(K, 2), Np = qllc_round_up(ch, QLLC_NB);
  switch (l) {
  case QLLC_LAYOUT_PLAIN: return (size_t)(ch * K); /* 8-bit elements; the plain layout is never packed */
  case QLLC_LAYOUT_ROWS_K4: return (size_t)(ch * Kp4);
  case QLLC_LAYOUT_K4N16: return (size_t)(Np * Kp4);
  case QLLC_LAYOUT_ROWS_K2: return (size_t)(ch * Kp2 * 2);
  case QLLC_LAYOUT_ROWS_K2_SPLIT: return (size_t)(2 * ch * Kp2 * 2);
  case QLLC_LAYOUT_K2N16: return (size_t)(Np * Kp2 * 2);
  case QLLC_LAYOUT_K2N16_SPLIT: return (size_t)(2 * Np * Kp2 * 2);
  case QLLC_LAYOUT_DW_Q4: return (size_t)(ch * qllc_dw_row(K));
  case QLLC_LAYOUT_ROWS_C4: return (size_t)(ch * K);
  case QLLC_LAYOUT_C4N16: return (size_t)(Np * K);
  case QLLC_LAYOUT_ROWS_C2: return (size_t)(ch * Kp2 * 2 + qllc_round_up(ch, 2)); /* + the int32 trailer */
  case QLLC_LAYOUT_ROWS_C2_SPLIT: return (size_t)(2 * ch * Kp2 * 2);
  case QLLC_LAYOUT_T64N16: return 0; /* its size depends on the taps: qllc_pack_size_taps */
  case QLLC_LAYOUT_K64N16: return (size_t)(Np * qllc_round_up(K, 64));
  case QLLC_LAYOUT_F32_N32: return (size_t)(qllc_round_up(ch, QLLC_F32_NB) * K) * sizeof(float);
  case QLLC_LAYOUT_F32_M24: return (size_t)(qllc_round_up(ch, QLLC_F32_MB) * K) * sizeof(float);
  }
  return 0;
}

size_t qllc_pack_size_taps(qllc_layout l, int64_t ch, int64_t K, int64_t taps) {
  if (l == QLLC_LAYOUT_T64N16) return taps > 0 ? (size_t)qllc_t64n16_size(ch, K / taps, taps) : 0;
  return qllc_pack_size(l, ch, K);
}

void qllc_pack_w8_t64n16(void *wp, const int8_t *w, int64_t ch, int64_t K, int64_t taps) {
  int8_t *d = wp;
  const int64_t C = taps > 0 ? K / taps : 0, kc = qllc_t64_kc(C), ncb = qllc_t64_ncb(C);
  memset(d, 0, qllc_pack_size_taps(QLLC_LAYOUT_T64N16, ch, K, taps));
  for (int64_t o = 0; o < ch; o++)
    for (int64_t t = 0; t < taps; t++)
      for (int64_t cb = 0; cb < ncb; cb++) {
        const int64_t c0 = qllc_t64_c0(C, cb);
        for (int64_t k = 0; k < kc; k++) {
          const int64_t c = c0 + k;
          if (c < 64 * cb) continue; /* the last block's channels that the block before it holds */
          d[(((o / QLLC_NB) * taps + t) * ncb + cb) * kc * QLLC_NB + (k / 4) * 64 + (o % QLLC_NB) * 4 + k % 4] =
              w[(o * C + c) * taps + t];
        }
      }
}

void qllc_pack_w8_k64n16(void *wp, const int8_t *w, int64_t ch, int64_t K) {
  int8_t *d = wp;
  const int64_t Kp = qllc_round_up(K, 64);
  memset(d, 0, qllc_pack_size(QLLC_LAYOUT_K64N16, ch, K));
  for (int64_t c = 0; c < ch; c++)
    for (int64_t k = 0; k < K; k++) d[(((c / QLLC_NB) * (Kp / 4) + k / 4) * QLLC_NB + c % QLLC_NB) * 4 + k % 4] = w[c * K + k];
}

void qllc_pack_w8(qllc_layout l, void *wp, const int8_t *w, int64_t ch, int64_t K) {
  int8_t *d = wp;
  const int64_t Kp4 = qllc_round_up(K, 4);
  memset(d, 0, qllc_pack_size(l, ch, K));
  if (l == QLLC_LAYOUT_ROWS_K4) {
    for (int64_t c = 0; c < ch; c++) memcpy(d + c * Kp4, w + c * K, (size_t)K);
  } else if (l == QLLC_LAYOUT_K4N16) {
    for (int64_t c = 0; c < ch; c++) {
      const int64_t nb = c / QLLC_NB, j = c % QLLC_NB;
      for (int64_t k = 0; k < K; k++) d[((nb * (Kp4 / 4) + k / 4) * QLLC_NB + j) * 4 + k % 4] = w[c * K + k];
    }
  } else if (l == QLLC_LAYOUT_DW_Q4) {
    const int64_t R = qllc_dw_row(K);
    for (int64_t c = 0; c < ch; c++) memcpy(d + c * R, w + c * K, (size_t)K);
  }
}

void qllc_pack_w8_c4(void *wp, const int8_t *w, int64_t ch, int64_t K, int64_t taps) {
  int8_t *d = wp;
  const int64_t cg = taps > 0 ? K / taps : 0;
  for (int64_t o = 0; o < ch; o++)
    for (int64_t c = 0; c < cg; c++)
      for (int64_t t = 0; t < taps; t++) d[o * K + ((c / 4) * taps + t) * 4 + c % 4] = w[(o * cg + c) * taps + t];
}

void qllc_pack_w8_c4n16(void *wp, const int8_t *w, int64_t ch, int64_t K, int64_t taps) {
  int8_t *d = wp;
  const int64_t cg = taps > 0 ? K / taps : 0;
  memset(d, 0, qllc_pack_size(QLLC_LAYOUT_C4N16, ch, K));
  for (int64_t o = 0; o < ch; o++)
    for (int64_t c = 0; c < cg; c++)
      for (int64_t t = 0; t < taps; t++)
        d[(((o / QLLC_NB) * (K / 4) + (c / 4) * taps + t) * QLLC_NB + o % QLLC_NB) * 4 + c % 4] = w[(o * cg + c) * taps + t];
}

void qllc_pack_bias8(int32_t *bias_c, const int32_t *bias, const int8_t *w, int64_t ch, int64_t K, int in_is_i8) {
  for (int64_t c = 0; c < ch; c++) {
    uint32_t b = (uint32_t)bias[c];
    if (in_is_i8) {
      uint32_t s = 0; /* sum_k w[c][k] modulo 2^32, as the int32 accumulator wraps */
      for (int64_t k = 0; k < K; k++) s += (uint32_t)(int32_t)w[c * K + k];
      b -= 128u * s;
    }
    bias_c[c] = (int32_t)b;
  }
}

/* ---- the catalogue's per-layout functions (pack.h) ---------------------------------------------------- */

int qllc_geom_depthwise(const qllc_layer_geom *g) {
  return g->conv && g->group > 1 && g->group == g->C && g->group == g->M;
}

int qllc_fits_fc(const qllc_layer_geom *g, char *why, size_t size) {
  (void)why, (void)size;
  return g->conv ? -1 : 1;
}

/* an FC of 64 rows or more: where the AMX FC was measured faster than AVX-512 VNNI (docs/targets.md);
   fewer rows are not this row's class: no AMX FC is offered them (a GEMV was measured slower there) */
int qllc_fits_fc64(const qllc_layer_geom *g, char *why, size_t size) {
  (void)why, (void)size;
  return g->conv || g->fc_m < 64 ? -1 : 1;
}

/* narrower groups run the reference's direct loop, which vectorizes along the output row */
int qllc_fits_panel(const qllc_layer_geom *g, char *why, size_t size) {
  if (!g->conv || qllc_geom_depthwise(g)) return -1;
  const int64_t mg = g->group > 0 ? g->M / g->group : g->M;
  if (mg >= 4) return 1;
  snprintf(why, size, "%lld output channel%s per group: the reference's direct loop", (long long)mg,
           mg == 1 ? "" : "s");
  return 0;
}

int qllc_fits_dw(const qllc_layer_geom *g, char *why, size_t size) {
  if (!qllc_geom_depthwise(g)) return -1;
  if (qllc_dw_fits(g->KH, g->KW, g->sw, g->dw)) return 1;
  snprintf(why, size, "depthwise %lldx%lld, stride %lld, dilation %lld: outside the depthwise variant's window",
           (long long)g->KH, (long long)g->KW, (long long)g->sw, (long long)g->dw);
  return 0;
}

/* the float conv variants: group 1 (their weight blocks do not follow groups); a depthwise conv is not their
   class (the reference's direct loop) */
int qllc_fits_f32conv(const qllc_layer_geom *g, char *why, size_t size) {
  if (!g->conv || qllc_geom_depthwise(g)) return -1;
  if (g->group == 1) return 1;
  snprintf(why, size, "%lld groups: the float variants take group 1", (long long)g->group);
  return 0;
}

/* the stride-1 float convs' common part: an f32conv conv (group 1) of stride 1 */
static int fits_f32s1(const qllc_layer_geom *g, const char *which, char *why, size_t size) {
  const int p = qllc_fits_f32conv(g, why, size);
  if (p != 1) return p;
  if (g->sh == 1 && g->sw == 1) return 1;
  snprintf(why, size, "stride %lldx%lld: the %s float conv takes stride 1", (long long)g->sh, (long long)g->sw, which);
  return 0;
}

/* the direct float conv (x86_f32.h): group 1, stride 1 (its pixels are shifted runs of the padded input),
   and rows wide enough that the pad columns it computes and drops, (KW-1)*dw of every OW + (KW-1)*dw, are
   at most 1/16 of its lanes (a 1x1 conv has none): narrower, the panel conv was faster in ResNet-18's
   layers (docs/benchmarks.md, "The stride-1 float conv without im2col"; at 7x7 1.25x faster). The kernel
   itself computes any stride-1 shape (tests/libjit/f32_x86_test.c runs it on narrow ones too). */
int qllc_fits_f32d(const qllc_layer_geom *g, char *why, size_t size) {
  const int p = fits_f32s1(g, "direct", why, size);
  if (p != 1) return p;
  const int64_t pad_cols = (g->KW - 1) * g->dw;
  if (pad_cols * 16 <= g->OW) return 1;
  snprintf(why, size, "output rows of %lld: the direct float conv takes rows of at least %lld here", (long long)g->OW,
           (long long)(pad_cols * 16));
  return 0;
}

/* the float conv with the tile transposed (x86_f32t.h): group 1 and stride 1, any width (it computes no
   pad column), at least 16 output channels (its lanes; 8 channels at 32x32 took 1.4x the direct conv's
   time in the tuner's timings) */
int qllc_fits_f32t(const qllc_layer_geom *g, char *why, size_t size) {
  const int p = fits_f32s1(g, "transposed", why, size);
  if (p != 1) return p;
  if (g->M >= 16) return 1;
  snprintf(why, size, "%lld output channels: the transposed float conv takes 16 and more", (long long)g->M);
  return 0;
}

/* the float depthwise variants: any kernel, pad and dilation; strides up to QLLC_DWF32_MAX_STRIDE (the
   scratch holds stride_h x stride_w phase planes of one channel) */
int qllc_fits_f32dw(const qllc_layer_geom *g, char *why, size_t size) {
  if (!qllc_geom_depthwise(g)) return -1;
  if (g->sh <= QLLC_DWF32_MAX_STRIDE && g->sw <= QLLC_DWF32_MAX_STRIDE) return 1;
  snprintf(why, size, "depthwise stride %lldx%lld: the float depthwise variants take strides up to %d",
           (long long)g->sh, (long long)g->sw, QLLC_DWF32_MAX_STRIDE);
  return 0;
}

int qllc_fits_c4(const qllc_layer_geom *g, char *why, size_t size) {
  const int p = qllc_fits_panel(g, why, size);
  if (p != 1) return p;
  return qllc_c4_fits(g->C, g->group, g->KH, g->KW, g->sh, g->sw);
}

/* the AMX conv with implicit im2col: tiles of pixels x 64 channels of one tap, read from channel-last
   rows (group 1, C a multiple of 4 so that a tile row of kc bytes stays inside its pixel, kernel columns
   next to each other: no dilation along W) */
int qllc_fits_amxcl(const qllc_layer_geom *g, char *why, size_t size) {
  const int p = qllc_fits_panel(g, why, size);
  if (p != 1) return p;
  if (g->group == 1 && g->C % 4 == 0 && g->dw == 1) return 1;
  snprintf(why, size, "group %lld, %lld input channels, dilation %lld along W: not the AMX implicit conv's",
           (long long)g->group, (long long)g->C, (long long)g->dw);
  return 0;
}

/* With NCHW ends, a pointwise conv keeps the panel variant (its short reductions leave CL's epilogue and
   transposes too large a share) and a layer C4 fits with few wasted lanes keeps C4; with both ends
   channel-last, CL is faster on both (bench/conv_variants.c, "cl_nhwc": the strided pointwise convs read
   their input in place), so there it answers 2: taken only where the layout pass gives it NHWC ends. */
int qllc_fits_cl(const qllc_layer_geom *g, char *why, size_t size) {
  const int p = qllc_fits_panel(g, why, size);
  if (p != 1) return p;
  if (!qllc_cl_fits(g->C, g->group, g->KH, g->KW)) return 0;
  if (g->KH * g->KW <= 1)
    return (g->sh > 1 || g->sw > 1) && g->pt == 0 && g->pl == 0 && g->pb == 0 && g->pr == 0 ? 2 : 0;
  if (qllc_c4_fits(g->C, g->group, g->KH, g->KW, g->sh, g->sw) &&
      qllc_c4_lanes_used(g->W, g->OH, g->OW, g->KW, g->pl, g->dw) >= QLLC_C4_MIN_LANES)
    return 2;
  return 1;
}

int64_t qllc_vscratch_conv1(const qllc_layer_geom *g) { return qllc_scratch_conv(g->K, 1); }
int64_t qllc_vscratch_conv2(const qllc_layer_geom *g) { return qllc_scratch_conv(g->K, 2); }
int64_t qllc_vscratch_fc1(const qllc_layer_geom *g) { return qllc_scratch_fc(g->fc_m, g->K, 1); }
int64_t qllc_vscratch_fc2(const qllc_layer_geom *g) { return qllc_scratch_fc(g->fc_m, g->K, 2); }
int64_t qllc_vscratch_dw(const qllc_layer_geom *g) {
  return qllc_scratch_dw(g->H, g->W, g->KH, g->KW, g->pt, g->pl, g->dh, g->dw);
}
int64_t qllc_vscratch_c4(const qllc_layer_geom *g) {
  return qllc_scratch_c4(g->C, g->group, g->W, g->OH, g->OW, g->KH, g->KW, g->pl, g->dh, g->dw);
}
int64_t qllc_vscratch_c2(const qllc_layer_geom *g) {
  return qllc_scratch_c2(g->C, g->group, g->W, g->OH, g->OW, g->KH, g->KW, g->pl, g->dh, g->dw);
}
int64_t qllc_vscratch_amxcl(const qllc_layer_geom *g) {
  return qllc_scratch_amxcl(g->C, g->H, g->W, g->OH, g->OW, g->KH, g->KW, g->sh, g->sw, g->pl, g->dh);
}
int64_t qllc_vscratch_amxfc(const qllc_layer_geom *g) { return qllc_scratch_amxfc(g->fc_m, g->K); }
int64_t qllc_vscratch_f32fc(const qllc_layer_geom *g) {
  return qllc_scratch_fc_f32(g->fc_m);
}
int64_t qllc_vscratch_f32conv(const qllc_layer_geom *g) {
  (void)g;
  return qllc_scratch_conv_f32();
}
int64_t qllc_vscratch_f32d(const qllc_layer_geom *g) {
  return qllc_scratch_conv_f32d(g->C, g->H, g->W, g->OH, g->OW, g->KH, g->KW, g->pt, g->pl, g->dh, g->dw);
}
int64_t qllc_vscratch_f32dw(const qllc_layer_geom *g) {
  return qllc_scratch_dw_f32(g->OH, g->OW, g->KH, g->KW, g->sh, g->sw, g->dh, g->dw);
}
int64_t qllc_vscratch_cl(const qllc_layer_geom *g) {
  return qllc_scratch_cl(g->C, g->W, g->OH, g->OW, g->KH, g->KW, g->sh, g->sw, g->pl, g->dh, g->dw);
}

/* 8-bit layouts: the weights, then the bias with the u8 shift's correction */
static int64_t pack8(qllc_layout l, const qllc_pack_src *s, void *wp, void *bias_c) {
  if (!s->w_i8) return -2;
  if (l == QLLC_LAYOUT_ROWS_C4) qllc_pack_w8_c4(wp, s->w, s->ch, s->K, s->taps);
  else if (l == QLLC_LAYOUT_C4N16) qllc_pack_w8_c4n16(wp, s->w, s->ch, s->K, s->taps);
  else if (l == QLLC_LAYOUT_T64N16) qllc_pack_w8_t64n16(wp, s->w, s->ch, s->K, s->taps);
  else if (l == QLLC_LAYOUT_K64N16) qllc_pack_w8_k64n16(wp, s->w, s->ch, s->K);
  else qllc_pack_w8(l, wp, s->w, s->ch, s->K);
  /* the AMX layouts' kernels multiply an i8 input as signed: no u8 shift to correct */
  const int amx = l == QLLC_LAYOUT_T64N16 || l == QLLC_LAYOUT_K64N16;
  qllc_pack_bias8(bias_c, s->bias, s->w, s->ch, s->K, s->in_i8 && !amx);
  return -1;
}
/* 16-bit layouts: the weights (int8 widened, or int16 split where the layout says), the bias as given */
static int64_t pack16(qllc_layout l, const qllc_pack_src *s, void *wp, void *bias_c) {
  qllc_pack_w16_c2(l, wp, s->w_i8 ? s->w : NULL, s->w_i8 ? NULL : s->w, s->ch, s->K, s->taps);
  memcpy(bias_c, s->bias, (size_t)s->ch * sizeof(int64_t));
  return -1;
}
#define QLLC_PACKER(layout, fn)                                                                           \
  int64_t qllc_packer_##layout(const qllc_pack_src *s, void *wp, void *bias_c) {                          \
    return fn(QLLC_LAYOUT_##layout, s, wp, bias_c);                                                       \
  }
QLLC_PACKER(ROWS_K4, pack8)
QLLC_PACKER(K4N16, pack8)
QLLC_PACKER(DW_Q4, pack8)
QLLC_PACKER(ROWS_C4, pack8)
QLLC_PACKER(C4N16, pack8)
QLLC_PACKER(T64N16, pack8)
QLLC_PACKER(K64N16, pack8)
QLLC_PACKER(ROWS_K2, pack16)
QLLC_PACKER(ROWS_K2_SPLIT, pack16)
QLLC_PACKER(K2N16, pack16)
QLLC_PACKER(K2N16_SPLIT, pack16)
QLLC_PACKER(ROWS_C2_SPLIT, pack16)
#undef QLLC_PACKER
/* The float layouts: blocks of nb output channels (F32_M24 for the conv: 24; F32_N32 for the FC: 32), each
   k's nb weights together, zeros past ch; no bias to make (the float kernels add the plain one) */
static int64_t pack_f32_blocks(const qllc_pack_src *s, void *wp, qllc_layout l, int64_t nb) {
  if (!s->w_f32) return -2;
  float *d = wp;
  const float *w = s->w;
  memset(d, 0, qllc_pack_size(l, s->ch, s->K));
  for (int64_t c = 0; c < s->ch; c++)
    for (int64_t k = 0; k < s->K; k++) d[((c / nb) * s->K + k) * nb + c % nb] = w[c * s->K + k];
  return -1;
}
int64_t qllc_packer_F32_M24(const qllc_pack_src *s, void *wp, void *bias_c) {
  (void)bias_c;
  return pack_f32_blocks(s, wp, QLLC_LAYOUT_F32_M24, QLLC_F32_MB);
}
int64_t qllc_packer_F32_N32(const qllc_pack_src *s, void *wp, void *bias_c) {
  (void)bias_c;
  return pack_f32_blocks(s, wp, QLLC_LAYOUT_F32_N32, QLLC_F32_NB);
}
/* ROWS_C2 (16x8 only): and the trailer of the channels whose constants bound their sums inside int32 */
int64_t qllc_packer_ROWS_C2(const qllc_pack_src *s, void *wp, void *bias_c) {
  if (!s->w_i8) return -2;
  pack16(QLLC_LAYOUT_ROWS_C2, s, wp, bias_c);
  return qllc_pack_c2_int32(wp, s->w, s->bias, s->n, s->z_y, s->ch, s->K);
}
