/* tests/libjit/q_amx_test.c: the AMX-INT8 Conv / FC variants (targets/x86_64/kernels/x86_amx.c, __amx),
 * compiled natively, bit for bit against the scalar kernels of q_layers.c, with weights and bias packed
 * by src/lower/pack.c (the avx512vnni operands). SKIPPED (never passed) unless the CPU has AMX-TILE and
 * AMX-INT8 (cpuid leaf 7: EDX bits 24, 25), the OS enables the tile state (XCR0 bits 17, 18) and Linux
 * grants the process the tile data (arch_prctl(ARCH_REQ_XCOMP_PERM, XFEATURE_XTILEDATA)). Shapes: row,
 * channel and pixel counts below, at and past 16 (the overlapping last tile), K with and without a tail
 * of k4 groups (the tail tile shapes), groups, padding, strides, both input and output kinds.
 * The 2x2-blocked kernels (conv2dcl__amx, the conv with implicit im2col, weights T64N16; fc__amx2, K64N16),
 * packed by their rows' packers (qllc_packer_T64N16 / _K64N16, bias unshifted): every case in the four
 * layout combinations (NCHW / NHWC input and output; an NHWC input right after or ending at an
 * inaccessible page, so a tile row read past the input faults), channel counts below, at and past 64 and
 * not a multiple of 64, 1x1, 3x3 and 7x7 kernels, strides 1 and 2, padding, dilation along H, image
 * widths below, at and past 16 (tile rows = the interior width), both input and output kinds. */
#include <cpuid.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "../../targets/x86_64/kernels/variants.h"
#include "kernels_q.h"
#include "lower/pack.h"

#ifndef Q_TEST_SEED
#define Q_TEST_SEED 0xbb67ae8584caa73bULL
#endif
#include "q_x86_test_util.h"
#define Q_CATALOG_DEF "../../targets/x86_64/kernels/variants.def"
#include "q_catalog.h" /* q_conv_geom */

static int have_amx(void) {
  unsigned a, b, c, d;
  if (!__get_cpuid_count(7, 0, &a, &b, &c, &d) || !(d & (1u << 24)) || !(d & (1u << 25))) return 0;
  if (!__get_cpuid(1, &a, &b, &c, &d) || !(c & (1u << 27))) return 0; /* OSXSAVE */
  unsigned lo, hi;
  __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
  if ((lo & (3u << 17)) != (3u << 17)) return 0;
  return syscall(SYS_arch_prctl, 0x1023 /* ARCH_REQ_XCOMP_PERM */, 18 /* XFEATURE_XTILEDATA */) == 0;
}
/* q_amx_emu_test.c includes this file with QLLC_AMX_EMU defined: the tiles are emulated in C there */
static void need_amx(void) {
#ifdef QLLC_AMX_EMU
  return;
#endif
  if (!have_amx()) {
    print_message("amx: this CPU (or OS) has no AMX-INT8 tile data\n");
    skip();
  }
}

#define REFS(ti, TI, to, TO)                                                                                        \
  static void fr_##ti##_##to(void *y, const void *x, const int8_t *w, const int32_t *b, const int32_t *m,           \
                             const int32_t *n, int64_t M, int64_t N, int64_t K, int32_t zx, int32_t zy, int32_t lo,  \
                             int32_t hi, uint8_t *s, int var) {                                                    \
    if (var) qllc_k_fc_##ti##_i8_##to##__amx((TO *)y, (const TI *)x, w, b, m, n, M, N, K, zx, zy, lo, hi, s);       \
    else qllc_k_fc_##ti##_i8_##to((TO *)y, (const TI *)x, w, b, m, n, M, N, K, zx, zy, lo, hi);                      \
  }                                                                                                                \
  static void cr_##ti##_##to(void *y, const void *x, const int8_t *w, const int32_t *b, const int32_t *m,           \
                             const int32_t *n, const int64_t *d, int32_t zx, int32_t zy, int32_t lo, int32_t hi,    \
                             uint8_t *s, int var) {                                                                \
    if (var)                                                                                                       \
      qllc_k_conv2d_##ti##_i8_##to##__amx((TO *)y, (const TI *)x, w, b, m, n, d[0], d[1], d[2], d[3], d[4], d[5], \
                                          d[6], d[7], d[8], d[9], d[10], d[11], d[12], d[13], d[14], d[15], zx, zy, \
                                          lo, hi, s);                                                              \
    else                                                                                                           \
      qllc_k_conv2d_##ti##_i8_##to((TO *)y, (const TI *)x, w, b, m, n, d[0], d[1], d[2], d[3], d[4], d[5], d[6],   \
                                   d[7], d[8], d[9], d[10], d[11], d[12], d[13], d[14], d[15], zx, zy, lo, hi);    \
  }
REFS(i8, int8_t, i8, int8_t)
REFS(i8, int8_t, u8, uint8_t)
REFS(u8, uint8_t, i8, int8_t)
REFS(u8, uint8_t, u8, uint8_t)
typedef void fcr_fn(void *, const void *, const int8_t *, const int32_t *, const int32_t *, const int32_t *, int64_t,
                    int64_t, int64_t, int32_t, int32_t, int32_t, int32_t, uint8_t *, int);
typedef void cvr_fn(void *, const void *, const int8_t *, const int32_t *, const int32_t *, const int32_t *,
                    const int64_t *, int32_t, int32_t, int32_t, int32_t, uint8_t *, int);
static fcr_fn *const fcs[4] = {fr_i8_i8, fr_i8_u8, fr_u8_i8, fr_u8_u8};
static cvr_fn *const cvs[4] = {cr_i8_i8, cr_i8_u8, cr_u8_i8, cr_u8_u8};

static void run_fc(int combo, int64_t M, int64_t N, int64_t K) {
  const kind ki = cin(combo), ko = cout_(combo);
  const int32_t z_x = pick_zx(ki);
  int32_t *xv = ivec(M * K), *wv = ivec(N * K);
  fill(xv, M * K, kmin(ki), kmax(ki), (int)irand(0, 4));
  fill(wv, N * K, -128, 127, (int)irand(0, 4));
  uint8_t *x = malloc((size_t)(M * K));
  int8_t *w = malloc((size_t)(N * K));
  int32_t *bias = ivec(N), *m = ivec(N), *n = ivec(N), *bias_c = ivec(N);
  for (int64_t i = 0; i < M * K; i++) x[i] = (uint8_t)xv[i];
  for (int64_t i = 0; i < N * K; i++) w[i] = (int8_t)wv[i];
  make_bias(bias, wv, N, K, z_x, 0);
  pick_mn(m, n, N, acc_scale(xv, M * K, wv, N * K, K, z_x), 0);
  int32_t z_y, lo, hi;
  pick_out(ko, (int)irand(0, 4), &z_y, &lo, &hi);
  int8_t *wp = malloc(qllc_pack_size(QLLC_LAYOUT_K4N16, N, K));
  qllc_pack_w8(QLLC_LAYOUT_K4N16, wp, w, N, K);
  qllc_pack_bias8(bias_c, bias, w, N, K, ki == K_I8);
  const size_t ssz = (size_t)qllc_scratch_fc(M, K, 1);
  uint8_t *scratch = gzone(ssz), *want = calloc((size_t)(M * N), 1), *got = gzone((size_t)(M * N));
  fcs[combo](want, x, w, bias, m, n, M, N, K, z_x, z_y, lo, hi, NULL, 0);
  fcs[combo](got, x, wp, bias_c, m, n, M, N, K, z_x, z_y, lo, hi, scratch, 1);
  for (int64_t i = 0; i < M * N; i++)
    if (tget(ko, got, i) != tget(ko, want, i))
      fail_msg("fc amx combo %d M=%lld N=%lld K=%lld: [%lld] got %d want %d", combo, (long long)M, (long long)N,
               (long long)K, (long long)i, tget(ko, got, i), tget(ko, want, i));
  if (!guard_ok(got, (size_t)(M * N)) || !guard_ok(scratch, ssz)) fail_msg("fc amx: wrote past y or the scratch");
  free(xv), free(wv), free(x), free(w), free(bias), free(m), free(n), free(bias_c), free(wp), free(scratch), free(want),
      free(got);
}

static void fc_amx(void **state) {
  (void)state;
  need_amx();
  static const int64_t Ms[] = {1, 2, 15, 16, 17, 33, 64, 65, 130};
  static const int64_t Ns[] = {1, 15, 16, 17, 32, 33, 100};
  static const int64_t Ks[] = {1, 3, 4, 60, 64, 65, 127, 128, 300, 1024};
  for (int i = 0; i < 160; i++) run_fc(i % 4, Ms[irand(0, 8)], Ns[irand(0, 6)], Ks[irand(0, 9)]);
}

static void run_conv(int combo, const int64_t *d) {
  const kind ki = cin(combo), ko = cout_(combo);
  const int64_t N = d[0], C = d[1], H = d[2], W = d[3], M = d[4], OH = d[5], OW = d[6];
  const int64_t K = C / d[15] * d[7] * d[8], nx = N * C * H * W, nw = M * K, ny = N * M * OH * OW;
  const int32_t z_x = pick_zx(ki);
  int32_t *xv = ivec(nx), *wv = ivec(nw);
  fill(xv, nx, kmin(ki), kmax(ki), (int)irand(0, 4));
  fill(wv, nw, -128, 127, (int)irand(0, 4));
  uint8_t *x = malloc((size_t)nx);
  int8_t *w = malloc((size_t)nw);
  int32_t *bias = ivec(M), *m = ivec(M), *n = ivec(M), *bias_c = ivec(M);
  for (int64_t i = 0; i < nx; i++) x[i] = (uint8_t)xv[i];
  for (int64_t i = 0; i < nw; i++) w[i] = (int8_t)wv[i];
  make_bias(bias, wv, M, K, z_x, 0);
  pick_mn(m, n, M, acc_scale(xv, nx, wv, nw, K, z_x), 0);
  int32_t z_y, lo, hi;
  pick_out(ko, (int)irand(0, 4), &z_y, &lo, &hi);
  int8_t *wp = malloc(qllc_pack_size(QLLC_LAYOUT_ROWS_K4, M, K));
  qllc_pack_w8(QLLC_LAYOUT_ROWS_K4, wp, w, M, K);
  qllc_pack_bias8(bias_c, bias, w, M, K, ki == K_I8);
  const size_t ssz = (size_t)qllc_scratch_conv(K, 1);
  uint8_t *scratch = gzone(ssz), *want = calloc((size_t)ny, 1), *got = gzone((size_t)ny);
  cvs[combo](want, x, w, bias, m, n, d, z_x, z_y, lo, hi, NULL, 0);
  cvs[combo](got, x, wp, bias_c, m, n, d, z_x, z_y, lo, hi, scratch, 1);
  for (int64_t i = 0; i < ny; i++)
    if (tget(ko, got, i) != tget(ko, want, i))
      fail_msg("conv amx combo %d C=%lld H=%lld W=%lld M=%lld K=%lldx%lld g=%lld: y[%lld] got %d want %d", combo,
               (long long)C, (long long)H, (long long)W, (long long)M, (long long)d[7], (long long)d[8],
               (long long)d[15], (long long)i, tget(ko, got, i), tget(ko, want, i));
  if (!guard_ok(got, (size_t)ny) || !guard_ok(scratch, ssz)) fail_msg("conv amx: wrote past y or the scratch");
  free(xv), free(wv), free(x), free(w), free(bias), free(m), free(n), free(bias_c), free(wp), free(scratch), free(want),
      free(got);
}

static void conv_amx(void **state) {
  (void)state;
  need_amx();
  /* N C H W M KH KW sh sw pt pl dh dw g (OH, OW computed; no bottom / right padding) */
  static const int64_t e[][14] = {
      {1, 16, 9, 9, 24, 1, 1, 1, 1, 0, 0, 1, 1, 1},  {2, 5, 17, 13, 7, 3, 3, 1, 1, 1, 1, 1, 1, 1},
      {1, 3, 30, 30, 16, 7, 7, 2, 2, 3, 3, 1, 1, 1}, {1, 64, 14, 14, 64, 3, 3, 1, 1, 1, 1, 1, 1, 1},
      {1, 130, 7, 7, 21, 3, 3, 1, 1, 1, 1, 1, 1, 1}, {1, 24, 7, 7, 18, 3, 3, 1, 1, 1, 1, 1, 1, 3},
      {1, 64, 14, 14, 7, 1, 1, 2, 2, 0, 0, 1, 1, 1}, {1, 8, 3, 130, 33, 3, 3, 1, 1, 1, 1, 1, 1, 1},
      {1, 4, 13, 14, 6, 3, 3, 1, 1, 2, 2, 2, 2, 2},  {1, 6, 1, 1, 17, 1, 1, 1, 1, 0, 0, 1, 1, 1},
  };
  for (size_t i = 0; i < sizeof e / sizeof e[0]; i++)
    for (int combo = 0; combo < 4; combo++) {
      const int64_t *v = e[i];
      const int64_t OH = (v[2] + v[9] - ((v[5] - 1) * v[11] + 1)) / v[7] + 1;
      const int64_t OW = (v[3] + v[10] - ((v[6] - 1) * v[12] + 1)) / v[8] + 1;
      const int64_t d[16] = {v[0], v[1], v[2], v[3], v[4], OH, OW, v[5], v[6], v[7], v[8], v[9], v[10], v[11], v[12], v[13]};
      run_conv(combo, d);
    }
}

/* ---- the 2x2-blocked kernels ----------------------------------------------------------------------------- */
#define REFS2(ti, TI, to, TO)                                                                                       \
  static void f2_##ti##_##to(void *y, const void *x, const int8_t *w, const int32_t *b, const int32_t *m,           \
                             const int32_t *n, int64_t M, int64_t N, int64_t K, int32_t zx, int32_t zy, int32_t lo,  \
                             int32_t hi, uint8_t *s) {                                                             \
    qllc_k_fc_##ti##_i8_##to##__amx2((TO *)y, (const TI *)x, w, b, m, n, M, N, K, zx, zy, lo, hi, s);              \
  }                                                                                                                \
  static void c2_##ti##_##to(void *y, const void *x, const int8_t *w, const int32_t *b, const int32_t *m,           \
                             const int32_t *n, const int64_t *d, int32_t zx, int32_t zy, int32_t lo, int32_t hi,    \
                             uint8_t *s, int64_t xl, int64_t yl) {                                                 \
    qllc_k_conv2dcl_##ti##_i8_##to##__amx((TO *)y, (const TI *)x, w, b, m, n, d[0], d[1], d[2], d[3], d[4], d[5],  \
                                          d[6], d[7], d[8], d[9], d[10], d[11], d[12], d[13], d[14], d[15], zx, zy, \
                                          lo, hi, s, xl, yl);                                                      \
  }
REFS2(i8, int8_t, i8, int8_t)
REFS2(i8, int8_t, u8, uint8_t)
REFS2(u8, uint8_t, i8, int8_t)
REFS2(u8, uint8_t, u8, uint8_t)
typedef void fc2_fn(void *, const void *, const int8_t *, const int32_t *, const int32_t *, const int32_t *, int64_t,
                    int64_t, int64_t, int32_t, int32_t, int32_t, int32_t, uint8_t *);
typedef void cv2_fn(void *, const void *, const int8_t *, const int32_t *, const int32_t *, const int32_t *,
                    const int64_t *, int32_t, int32_t, int32_t, int32_t, uint8_t *, int64_t, int64_t);
static fc2_fn *const fc2s[4] = {f2_i8_i8, f2_i8_u8, f2_u8_i8, f2_u8_u8};
static cv2_fn *const cv2s[4] = {c2_i8_i8, c2_i8_u8, c2_u8_i8, c2_u8_u8};

static void run_fc2(int combo, int64_t M, int64_t N, int64_t K) {
  const kind ki = cin(combo), ko = cout_(combo);
  const int32_t z_x = pick_zx(ki);
  q8_operands o;
  q8_operands_make(&o, ki, ko, M * K, N, K, z_x, (int)irand(0, 4), (int)irand(0, 4), (int)irand(0, 2), 0,
                   (int)irand(0, 5), (int)irand(0, 1));
  int8_t *wp = malloc(qllc_pack_size(QLLC_LAYOUT_K64N16, N, K));
  int32_t *bias_c = ivec(N);
  const qllc_pack_src src = {o.w, 1, ki == K_I8, o.bias, o.n, o.z_y, N, K, 1, 0};
  qllc_packer_K64N16(&src, wp, bias_c);
  const qllc_layer_geom g = {.conv = 0, .fc_m = M, .fc_n = N, .K = K};
  const size_t ssz = (size_t)qllc_vscratch_amxfc(&g);
  uint8_t *scratch = gzone(ssz), *want = calloc((size_t)(M * N), 1), *got = gzone((size_t)(M * N));
  fcs[combo](want, o.x, o.w, o.bias, o.m, o.n, M, N, K, z_x, o.z_y, o.lo, o.hi, NULL, 0);
  fc2s[combo](got, o.x, wp, bias_c, o.m, o.n, M, N, K, z_x, o.z_y, o.lo, o.hi, scratch);
  for (int64_t i = 0; i < M * N; i++)
    if (tget(ko, got, i) != tget(ko, want, i))
      fail_msg("fc amx2 combo %d M=%lld N=%lld K=%lld: [%lld] got %d want %d", combo, (long long)M, (long long)N,
               (long long)K, (long long)i, tget(ko, got, i), tget(ko, want, i));
  if (!guard_ok(got, (size_t)(M * N)) || !guard_ok(scratch, ssz)) fail_msg("fc amx2: wrote past y or the scratch");
  q8_operands_free(&o);
  free(wp), free(bias_c), free(scratch), free(want), free(got);
}

static void fc_amx2(void **state) {
  (void)state;
  need_amx();
  static const int64_t Ms[] = {1, 2, 15, 16, 17, 31, 33, 64, 65, 130};
  static const int64_t Ns[] = {1, 15, 16, 17, 32, 33, 48, 100};
  static const int64_t Ks[] = {1, 3, 4, 60, 64, 65, 127, 128, 192, 300, 1024};
  for (int i = 0; i < 200; i++) run_fc2(i % 4, Ms[irand(0, 9)], Ns[irand(0, 7)], Ks[irand(0, 10)]);
}

/* d: N C H W M OH OW KH KW sh sw pt pl dh dw g; xl / yl: the input / output layout (1: NHWC) */
static void run_conv2(int combo, const int64_t *d, int64_t xl, int64_t yl) {
  const kind ki = cin(combo), ko = cout_(combo);
  const int64_t N = d[0], C = d[1], H = d[2], W = d[3], M = d[4], OH = d[5], OW = d[6], T = d[7] * d[8];
  const int64_t K = C * T, nx = N * C * H * W, ny = N * M * OH * OW;
  const int32_t z_x = pick_zx(ki);
  const qllc_layer_geom g = q_conv_geom(d);
  char why[160];
  assert_int_equal(qllc_fits_amxcl(&g, why, sizeof why), 1);
  q8_operands o;
  const int xpat = (int)irand(0, 4); /* several images: random ones, so that mixing them up shows */
  q8_operands_make(&o, ki, ko, nx, M, K, z_x, N > 1 ? xpat % 2 * 4 : xpat, (int)irand(0, 4), (int)irand(0, 2), 0,
                   (int)irand(0, 5), 0);
  gbuf gxl;
  uint8_t *xn = galloc_at(&gxl, (size_t)nx, (int)irand(0, 1)); /* NHWC copy against an inaccessible page */
  for (int64_t b = 0; b < N; b++)
    for (int64_t c = 0; c < C; c++)
      for (int64_t p = 0; p < H * W; p++) xn[(b * H * W + p) * C + c] = ((uint8_t *)o.x)[(b * C + c) * H * W + p];
  int8_t *wp = malloc(qllc_pack_size_taps(QLLC_LAYOUT_T64N16, M, K, T));
  int32_t *bias_c = ivec(M);
  const qllc_pack_src src = {o.w, 1, ki == K_I8, o.bias, o.n, o.z_y, M, K, T, 0};
  qllc_packer_T64N16(&src, wp, bias_c);
  const size_t ssz = (size_t)qllc_vscratch_amxcl(&g);
  uint8_t *scratch = gzone(ssz), *want = calloc((size_t)ny, 1), *got = gzone((size_t)ny);
  cvs[combo](want, o.x, o.w, o.bias, o.m, o.n, d, z_x, o.z_y, o.lo, o.hi, NULL, 0);
  cv2s[combo](got, xl ? xn : o.x, wp, bias_c, o.m, o.n, d, z_x, o.z_y, o.lo, o.hi, scratch, xl, yl);
  const int64_t P = OH * OW;
  for (int64_t b = 0; b < N; b++)
    for (int64_t c = 0; c < M; c++)
      for (int64_t p = 0; p < P; p++) {
        const int64_t i = (b * M + c) * P + p, j = yl ? (b * P + p) * M + c : i;
        if (tget(ko, got, j) != tget(ko, want, i))
          fail_msg("conv2dcl amx combo %d in %s out %s N=%lld C=%lld H=%lld W=%lld M=%lld K=%lldx%lld s=%lldx%lld "
                   "p=%lld,%lld d=%lld: image %lld channel %lld pixel (%lld, %lld) got %d want %d", combo,
                   xl ? "NHWC" : "NCHW", yl ? "NHWC" : "NCHW", (long long)N, (long long)C, (long long)H, (long long)W,
                   (long long)M, (long long)d[7], (long long)d[8], (long long)d[9], (long long)d[10], (long long)d[11],
                   (long long)d[12], (long long)d[13], (long long)b, (long long)c, (long long)(p / OW),
                   (long long)(p % OW), tget(ko, got, j), tget(ko, want, i));
      }
  if (!guard_ok(got, (size_t)ny) || !guard_ok(scratch, ssz)) fail_msg("conv2dcl amx: wrote past y or the scratch");
  q8_operands_free(&o);
  gfree(&gxl);
  free(wp), free(bias_c), free(scratch), free(want), free(got);
}

/* N C H W M KH KW sh sw pt pl pb pr dh (group 1, dw 1): channel tails (C = 4, 16, 60, 64, 96, 200),
   widths below, at and past 16, every pad, output channels by 16 and not; both forms of the kernel (row
   strips, and virtual pixels over a padded copy or, without padding, over the NHWC input itself) */
static const int64_t conv2_cases[][14] = {
    {1, 64, 18, 18, 64, 3, 3, 1, 1, 1, 1, 1, 1, 1},  {1, 16, 20, 37, 17, 3, 3, 1, 1, 1, 1, 1, 1, 1},
    {2, 96, 9, 21, 40, 3, 3, 1, 1, 1, 1, 1, 1, 1},   {1, 200, 7, 7, 33, 3, 3, 1, 1, 1, 1, 1, 1, 1},
    {1, 4, 23, 23, 16, 7, 7, 2, 2, 3, 3, 2, 2, 1},   {1, 64, 14, 14, 48, 1, 1, 2, 2, 0, 0, 0, 0, 1},
    {1, 128, 8, 36, 32, 1, 1, 1, 1, 0, 0, 0, 0, 1},  {1, 60, 19, 17, 20, 3, 3, 2, 2, 1, 1, 1, 1, 1},
    {1, 64, 28, 28, 64, 3, 3, 2, 2, 1, 1, 0, 0, 1},  {1, 32, 12, 40, 16, 3, 3, 1, 1, 2, 2, 2, 2, 2},
    {1, 8, 5, 5, 4, 3, 3, 1, 1, 0, 0, 0, 0, 1},      {1, 12, 3, 40, 24, 3, 5, 1, 1, 1, 2, 1, 2, 1},
    {1, 256, 7, 7, 64, 3, 3, 1, 1, 1, 1, 1, 1, 1},   {1, 72, 30, 30, 16, 7, 7, 2, 2, 3, 3, 3, 3, 1},
    {1, 16, 2, 2, 20, 3, 3, 1, 1, 1, 1, 1, 1, 1},    {1, 4, 17, 33, 64, 5, 1, 1, 2, 0, 2, 0, 1, 1},
    {2, 32, 6, 20, 24, 1, 1, 1, 1, 0, 0, 0, 0, 1},   {2, 8, 9, 9, 16, 3, 3, 2, 2, 0, 0, 0, 0, 1},
};
static void conv_amx2(void **state) {
  (void)state;
  need_amx();
  for (size_t i = 0; i < sizeof conv2_cases / sizeof conv2_cases[0]; i++) {
    const int64_t *v = conv2_cases[i];
    const int64_t OH = (v[2] + v[9] + v[11] - ((v[5] - 1) * v[13] + 1)) / v[7] + 1;
    const int64_t OW = (v[3] + v[10] + v[12] - v[6]) / v[8] + 1;
    const int64_t d[16] = {v[0], v[1], v[2], v[3], v[4], OH, OW, v[5], v[6], v[7], v[8], v[9], v[10], v[13], 1, 1};
    for (int lay = 0; lay < 4; lay++)
      for (int combo = 0; combo < 4; combo++) run_conv2(combo, d, lay & 1, lay >> 1);
  }
}

/* The predicate: group 1, C a multiple of 4, no dilation along W */
static void amxcl_fits(void **state) {
  (void)state;
  char why[160];
  const int64_t ok[16] = {1, 64, 8, 8, 16, 8, 8, 3, 3, 1, 1, 1, 1, 2, 1, 1};
  qllc_layer_geom g = q_conv_geom(ok);
  assert_int_equal(qllc_fits_amxcl(&g, why, sizeof why), 1);
  const int64_t c3[16] = {1, 3, 8, 8, 16, 4, 4, 7, 7, 2, 2, 3, 3, 1, 1, 1}; /* the 3-channel stem: not taken */
  g = q_conv_geom(c3);
  assert_int_equal(qllc_fits_amxcl(&g, why, sizeof why), 0);
  assert_non_null(strstr(why, "3 input channels"));
  const int64_t dw2[16] = {1, 64, 8, 8, 16, 8, 6, 3, 3, 1, 1, 1, 1, 1, 2, 1};
  g = q_conv_geom(dw2);
  assert_int_equal(qllc_fits_amxcl(&g, why, sizeof why), 0);
  const int64_t grp[16] = {1, 64, 8, 8, 16, 8, 8, 3, 3, 1, 1, 1, 1, 1, 1, 2};
  g = q_conv_geom(grp);
  assert_int_equal(qllc_fits_amxcl(&g, why, sizeof why), 0);
  const int64_t dwc[16] = {1, 64, 8, 8, 64, 8, 8, 3, 3, 1, 1, 1, 1, 1, 1, 64}; /* depthwise: not its class */
  g = q_conv_geom(dwc);
  assert_int_equal(qllc_fits_amxcl(&g, why, sizeof why), -1);
}

int main(void) {
  const struct CMUnitTest tests[] = {cmocka_unit_test(fc_amx), cmocka_unit_test(conv_amx), cmocka_unit_test(fc_amx2),
                                     cmocka_unit_test(conv_amx2), cmocka_unit_test(amxcl_fits)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
