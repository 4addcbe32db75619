/* tests/libjit/q_amx_emu_test.c: the AMX variants' tiling (targets/x86_64/kernels/x86_amx.c) on any
 * AVX-512 host, with the AMX instructions emulated in C: the kernel source is compiled here with
 * _tile_loadconfig, _tile_loadd, _tile_zero, _tile_dpbusd, _tile_stored and _tile_release replaced by
 * functions that follow the instructions' definitions (Intel SDM: tile rows and bytes per row from the
 * configuration, rows past a tile's configured shape zero, TDPBUSD = u8 x s8, TDPBSUD = s8 x u8 and TDPBSSD =
 * s8 x s8 groups of 4 added to int32 modulo 2^32) and check every operand's shape (A bytes per row = 4 x B rows,
 * C rows = A rows, C bytes = B bytes, at most 16 rows and 64 bytes, configured tiles only). It also counts,
 * per call, the tile configurations, TDP instructions, tile loads and stores, and the bytes the kernel
 * writes to its scratch buffer (each kernel reports its scratch stores through QM_SCRATCH_WROTE, defined
 * here): emu_counts checks that each 2x2 kernel configures the tiles once per call and that the
 * stride-1 convs with NHWC ends write no scratch, and prints the counts of the shapes of
 * docs/benchmarks.md ("AMX without an AMX host") for the old and the new kernels. The test cases are q_amx_test.c's,
 * bit for bit against the scalar kernels: what this checks is the tile configuration, the tails and
 * overlapping tiles, the strides and the epilogue; what it cannot check is the hardware itself (that is
 * q_amx_test.c's, SKIPPED without AMX). Needs AVX-512 F/BW/VL/DQ for the epilogue (else SKIPPED). */
#include <immintrin.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct emu_tile {
  int rows, colsb;
  uint8_t d[16][64];
} emu_tile;
static emu_tile emu_t[8];
static int emu_configured, emu_errors;
/* per-call counts (emu_reset) */
static long long emu_n_cfg, emu_n_tdp, emu_n_load, emu_n_store, emu_scratch;
static void emu_reset(void) { emu_n_cfg = emu_n_tdp = emu_n_load = emu_n_store = emu_scratch = 0; }
#define QM_SCRATCH_WROTE(bytes) (emu_scratch += (bytes))
#define EMU_CHECK(c, ...)                                                                          \
  do {                                                                                             \
    if (!(c)) {                                                                                    \
      if (emu_errors++ < 10) fprintf(stderr, "amx emulation: " __VA_ARGS__), fprintf(stderr, "\n"); \
    }                                                                                              \
  } while (0)

static void emu_loadconfig(const void *p) {
  const uint8_t *c = p;
  EMU_CHECK(!emu_configured, "a second tile configuration before the release");
  EMU_CHECK(c[0] == 1, "palette %d", c[0]);
  for (int t = 0; t < 8; t++) {
    uint16_t colsb;
    memcpy(&colsb, c + 16 + 2 * t, 2);
    emu_t[t].rows = c[48 + t], emu_t[t].colsb = colsb;
    EMU_CHECK(emu_t[t].rows <= 16 && colsb <= 64, "tile %d: %d rows x %d bytes", t, emu_t[t].rows, colsb);
    memset(emu_t[t].d, 0, sizeof emu_t[t].d);
  }
  emu_configured = 1;
  emu_n_cfg++;
}
static emu_tile *emu_get(int t) {
  EMU_CHECK(emu_configured, "tile %d used without a configuration", t);
  EMU_CHECK(emu_t[t].rows > 0 && emu_t[t].colsb > 0, "tile %d is not configured", t);
  return &emu_t[t];
}
static void emu_loadd(int t, const void *base, long stride) {
  emu_tile *x = emu_get(t);
  emu_n_load++;
  memset(x->d, 0, sizeof x->d);
  for (int r = 0; r < x->rows; r++) memcpy(x->d[r], (const uint8_t *)base + r * stride, (size_t)x->colsb);
}
static void emu_stored(int t, void *base, long stride) {
  emu_tile *x = emu_get(t);
  emu_n_store++;
  for (int r = 0; r < x->rows; r++) memcpy((uint8_t *)base + r * stride, x->d[r], (size_t)x->colsb);
}
static void emu_zero(int t) { memset(emu_get(t)->d, 0, sizeof emu_t[t].d); }
/* sa, sb: A, B signed */
static void emu_dp(int sa, int sb, int c, int a, int b) {
  emu_tile *C = emu_get(c), *A = emu_get(a), *B = emu_get(b);
  emu_n_tdp++;
  EMU_CHECK(A->colsb == 4 * B->rows, "tdpbusd: A has %d bytes a row, B %d rows", A->colsb, B->rows);
  EMU_CHECK(C->rows == A->rows && C->colsb == B->colsb, "tdpbusd: C %dx%d, A %d rows, B %d bytes", C->rows, C->colsb,
            A->rows, B->colsb);
  for (int m = 0; m < C->rows; m++)
    for (int n = 0; n < C->colsb / 4; n++) {
      uint32_t acc;
      memcpy(&acc, &C->d[m][4 * n], 4);
      for (int k = 0; k < A->colsb / 4; k++)
        for (int i = 0; i < 4; i++) {
          const int32_t av = sa ? (int8_t)A->d[m][4 * k + i] : A->d[m][4 * k + i];
          const int32_t bv = sb ? (int8_t)B->d[k][4 * n + i] : B->d[k][4 * n + i];
          acc += (uint32_t)(av * bv);
        }
      memcpy(&C->d[m][4 * n], &acc, 4);
    }
}
static int emu_released;
static void emu_release(void) {
  emu_configured = 0;
  emu_released++;
}
#undef _tile_loadd
#undef _tile_stored
#undef _tile_zero
#undef _tile_dpbusd
#undef _tile_dpbsud
#undef _tile_dpbssd
#define _tile_loadconfig(p) emu_loadconfig(p)
#define _tile_loadd(t, b, s) emu_loadd(t, b, s)
#define _tile_stored(t, b, s) emu_stored(t, b, s)
#define _tile_zero(t) emu_zero(t)
#define _tile_dpbusd(c, a, b) emu_dp(0, 1, c, a, b) /* A u8, B s8 */
#define _tile_dpbsud(c, a, b) emu_dp(1, 0, c, a, b) /* A s8, B u8 */
#define _tile_dpbssd(c, a, b) emu_dp(1, 1, c, a, b) /* A s8, B s8 */
#define _tile_release() emu_release()

#include "../../targets/x86_64/kernels/x86_amx.c"

#define QLLC_AMX_EMU 1
#define Q_TEST_SEED 0x3c6ef372fe94f82bULL
#undef have_amx
#define main q_amx_test_main
#include "q_amx_test.c"
#undef main

static int have_avx512(void) {
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
         __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq");
}
/* One AMX kernel test through the emulator: no tile operand error, and the tiles released at the end
   (release_counted: the kernel calls tilerelease itself, so the count must move) */
static void emu_run(void (*test)(void **), void **state, int release_counted) {
  if (!have_avx512()) skip();
  int rel = emu_released;
  test(state);
  if (emu_errors) fail_msg("%d tile operand errors", emu_errors);
  if ((release_counted && emu_released == rel) || emu_configured) fail_msg("the tiles were not released");
}
static void emu_fc(void **state) { emu_run(fc_amx, state, 1); }
static void emu_conv(void **state) { emu_run(conv_amx, state, 0); }
static void emu_fc2(void **state) { emu_run(fc_amx2, state, 1); }
static void emu_conv2(void **state) { emu_run(conv_amx2, state, 0); }

/* ---- counts per call (docs/benchmarks.md, "AMX without an AMX host") ------------------------------------ */
typedef struct emu_count {
  long long cfg, tdp, load, store, scratch;
} emu_count;
static emu_count emu_take(void) {
  const emu_count c = {emu_n_cfg, emu_n_tdp, emu_n_load, emu_n_store, emu_scratch};
  return c;
}
/* One table row: the counts, the MACs the layer needs against those the TDPs do (16 x 16 x 64 each), and
   the estimate from the published throughputs (TDP: 16 cycles; tile load: 8 cycles; the TMUL and the
   load ports work in parallel, so the larger of the two), at 2.0 GHz. */
static void emu_row(const char *kernel, const char *shape, double macs, emu_count c) {
  const double cyc_tdp = 16.0 * (double)c.tdp, cyc_load = 8.0 * (double)c.load;
  const double cyc = cyc_tdp > cyc_load ? cyc_tdp : cyc_load;
  print_message("| %s | %s | %lld | %lld | %lld | %lld | %.4f | %.0f %% | %.1f |\n", kernel, shape, c.tdp, c.load,
                c.store, c.scratch, (double)c.scratch / macs, 100.0 * macs / (16384.0 * (double)c.tdp), cyc / 2000.0);
}

/* conv d (N C H W M OH OW KH KW sh sw pt pl dh dw g), int8 in, int8 out: the old conv (panel, NCHW) and the
   implicit one (NHWC ends, then NCHW ends), bit for bit against the scalar kernel, with their counts */
static void emu_conv_counts(const char *shape, const int64_t *d, int print, int zero) {
  const int64_t C = d[1], M = d[4], P = d[5] * d[6], T = d[7] * d[8], K = C * T, nx = C * d[2] * d[3];
  const double macs = (double)P * (double)M * (double)K;
  q8_operands o;
  q8_operands_make(&o, K_I8, K_I8, nx, M, K, 3, 0, 0, 0, 1, 0, 0);
  int8_t *w1 = malloc(qllc_pack_size(QLLC_LAYOUT_ROWS_K4, M, K)), *w2 = malloc(qllc_pack_size_taps(QLLC_LAYOUT_T64N16, M, K, T));
  int32_t *b1 = ivec(M), *b2 = ivec(M);
  const qllc_pack_src src = {o.w, 1, 1, o.bias, o.n, o.z_y, M, K, T, 0};
  qllc_packer_ROWS_K4(&src, w1, b1);
  qllc_packer_T64N16(&src, w2, b2);
  const qllc_layer_geom g = q_conv_geom(d);
  uint8_t *s1 = malloc((size_t)qllc_vscratch_conv1(&g)), *s2 = malloc((size_t)qllc_vscratch_amxcl(&g));
  uint8_t *xn = malloc((size_t)nx), *want = malloc((size_t)(M * P)), *got = malloc((size_t)(M * P)), *gotn = malloc((size_t)(M * P));
  for (int64_t c = 0; c < C; c++)
    for (int64_t p = 0; p < d[2] * d[3]; p++) xn[p * C + c] = ((uint8_t *)o.x)[c * d[2] * d[3] + p];
  cr_i8_i8(want, o.x, o.w, o.bias, o.m, o.n, d, 3, o.z_y, o.lo, o.hi, NULL, 0);
  emu_reset();
  cr_i8_i8(got, o.x, w1, b1, o.m, o.n, d, 3, o.z_y, o.lo, o.hi, s1, 1);
  const emu_count old = emu_take();
  if (memcmp(got, want, (size_t)(M * P))) fail_msg("%s: conv2d__amx differs from the reference", shape);
  emu_reset();
  c2_i8_i8(gotn, xn, w2, b2, o.m, o.n, d, 3, o.z_y, o.lo, o.hi, s2, 1, 1);
  const emu_count nhwc = emu_take();
  for (int64_t c = 0; c < M; c++)
    for (int64_t p = 0; p < P; p++)
      if (gotn[p * M + c] != want[c * P + p]) fail_msg("%s: conv2dcl__amx (NHWC) differs at channel %lld pixel %lld", shape, (long long)c, (long long)p);
  emu_reset();
  c2_i8_i8(got, o.x, w2, b2, o.m, o.n, d, 3, o.z_y, o.lo, o.hi, s2, 0, 0);
  const emu_count nchw = emu_take();
  if (memcmp(got, want, (size_t)(M * P))) fail_msg("%s: conv2dcl__amx (NCHW) differs from the reference", shape);
  if (emu_errors) fail_msg("%s: %d tile operand errors", shape, emu_errors);
  if (nhwc.cfg != 1 || nchw.cfg != 1) fail_msg("%s: %lld / %lld tile configurations in a call", shape, nhwc.cfg, nchw.cfg);
  if (zero && nhwc.scratch) fail_msg("%s: %lld scratch bytes with NHWC ends", shape, nhwc.scratch);
  if (print) {
    emu_row("conv2d__amx (old, 1x2)", shape, macs, old);
    emu_row("conv2dcl__amx, NHWC ends", shape, macs, nhwc);
    emu_row("conv2dcl__amx, NCHW ends", shape, macs, nchw);
  }
  q8_operands_free(&o);
  free(w1), free(w2), free(b1), free(b2), free(s1), free(s2), free(xn), free(want), free(got), free(gotn);
}
static void emu_fc_counts(const char *shape, int64_t M, int64_t N, int64_t K, int print) {
  const double macs = (double)M * (double)N * (double)K;
  q8_operands o;
  q8_operands_make(&o, K_U8, K_U8, M * K, N, K, 7, 0, 0, 0, 1, 0, 0);
  int8_t *w1 = malloc(qllc_pack_size(QLLC_LAYOUT_K4N16, N, K)), *w2 = malloc(qllc_pack_size(QLLC_LAYOUT_K64N16, N, K));
  int32_t *b1 = ivec(N), *b2 = ivec(N);
  const qllc_pack_src src = {o.w, 1, 0, o.bias, o.n, o.z_y, N, K, 1, 0};
  qllc_packer_K4N16(&src, w1, b1);
  qllc_packer_K64N16(&src, w2, b2);
  const qllc_layer_geom g = {.conv = 0, .fc_m = M, .fc_n = N, .K = K};
  uint8_t *s1 = malloc((size_t)qllc_vscratch_fc1(&g)), *s2 = malloc((size_t)qllc_vscratch_amxfc(&g));
  uint8_t *want = malloc((size_t)(M * N)), *got = malloc((size_t)(M * N));
  fr_u8_u8(want, o.x, o.w, o.bias, o.m, o.n, M, N, K, 7, o.z_y, o.lo, o.hi, NULL, 0);
  emu_reset();
  fr_u8_u8(got, o.x, w1, b1, o.m, o.n, M, N, K, 7, o.z_y, o.lo, o.hi, s1, 1);
  const emu_count old = emu_take();
  if (memcmp(got, want, (size_t)(M * N))) fail_msg("%s: fc__amx differs from the reference", shape);
  emu_reset();
  f2_u8_u8(got, o.x, w2, b2, o.m, o.n, M, N, K, 7, o.z_y, o.lo, o.hi, s2);
  const emu_count nw = emu_take();
  if (memcmp(got, want, (size_t)(M * N))) fail_msg("%s: fc__amx2 differs from the reference", shape);
  if (nw.cfg != 1) fail_msg("%s: %lld tile configurations in a call", shape, nw.cfg);
  if (K % 64 == 0 && nw.scratch) fail_msg("%s: %lld scratch bytes with K a multiple of 64", shape, nw.scratch);
  if (print) {
    emu_row("fc__amx (old, 1x2)", shape, macs, old);
    emu_row("fc__amx2", shape, macs, nw);
  }
  q8_operands_free(&o);
  free(w1), free(w2), free(b1), free(b2), free(s1), free(s2), free(want), free(got);
}
/* ResNet-18's convs and the FCs; QLLC_AMX_COUNTS=1 runs all of them and prints the table (about
   10 s), else two convs and an FC are checked quietly. zero: with NHWC ends the conv reads its input where
   it lies (no scratch write): the stride-1 and 1x1 convs of 28x28 and 56x56 (the narrower images are
   copied into the padded virtual-pixel form, which takes a quarter fewer tiles there) */
static void emu_counts(void **state) {
  (void)state;
  if (!have_avx512()) skip();
  const int all = getenv("QLLC_AMX_COUNTS") != NULL;
  static const struct {
    const char *shape;
    int64_t d[16];
    int quick, zero;
  } cv[] = {
      {"3x3 56x56 64->64", {1, 64, 56, 56, 64, 56, 56, 3, 3, 1, 1, 1, 1, 1, 1, 1}, 1, 1},
      {"3x3 28x28 128->128", {1, 128, 28, 28, 128, 28, 28, 3, 3, 1, 1, 1, 1, 1, 1, 1}, 0, 1},
      {"3x3 14x14 256->256", {1, 256, 14, 14, 256, 14, 14, 3, 3, 1, 1, 1, 1, 1, 1, 1}, 0, 0},
      {"3x3 7x7 512->512", {1, 512, 7, 7, 512, 7, 7, 3, 3, 1, 1, 1, 1, 1, 1, 1}, 0, 0},
      {"3x3/2 56x56 64->128", {1, 64, 56, 56, 128, 28, 28, 3, 3, 2, 2, 1, 1, 1, 1, 1}, 0, 1},
      {"3x3/2 28x28 128->256", {1, 128, 28, 28, 256, 14, 14, 3, 3, 2, 2, 1, 1, 1, 1, 1}, 0, 0},
      {"3x3/2 14x14 256->512", {1, 256, 14, 14, 512, 7, 7, 3, 3, 2, 2, 1, 1, 1, 1, 1}, 0, 0},
      {"1x1/2 56x56 64->128", {1, 64, 56, 56, 128, 28, 28, 1, 1, 2, 2, 0, 0, 1, 1, 1}, 0, 1},
      {"1x1/2 28x28 128->256", {1, 128, 28, 28, 256, 14, 14, 1, 1, 2, 2, 0, 0, 1, 1, 1}, 0, 0},
      {"1x1/2 14x14 256->512", {1, 256, 14, 14, 512, 7, 7, 1, 1, 2, 2, 0, 0, 1, 1, 1}, 0, 0},
      {"1x1 28x28 128->128", {1, 128, 28, 28, 128, 28, 28, 1, 1, 1, 1, 0, 0, 1, 1, 1}, 1, 1},
      {"1x1 56x56 64->64", {1, 64, 56, 56, 64, 56, 56, 1, 1, 1, 1, 0, 0, 1, 1, 1}, 0, 1},
  };
  if (all)
    print_message("| kernel | shape | TDPs | tile loads | tile stores | scratch bytes | scratch B/MAC | MACs used | "
                  "estimate us @ 2.0 GHz |\n|---|---|---|---|---|---|---|---|---|\n");
  for (size_t i = 0; i < sizeof cv / sizeof cv[0]; i++)
    if (all || cv[i].quick) emu_conv_counts(cv[i].shape, cv[i].d, all, cv[i].zero);
  emu_fc_counts("FC 64x1024x1024", 64, 1024, 1024, all);
  if (all) emu_fc_counts("FC 1x1024x1024", 1, 1024, 1024, all);
}

int main(void) {
  (void)q_amx_test_main;
  const struct CMUnitTest tests[] = {cmocka_unit_test(emu_fc), cmocka_unit_test(emu_conv), cmocka_unit_test(emu_fc2),
                                     cmocka_unit_test(emu_conv2), cmocka_unit_test(amxcl_fits), cmocka_unit_test(emu_counts)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
