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
static void emu_fc(void **state) {
  if (!have_avx512()) skip();
  int rel = emu_released;
  fc_amx(state);
  if (emu_errors) fail_msg("%d tile operand errors", emu_errors);
  if (emu_released == rel || emu_configured) fail_msg("the tiles were not released");
}
static void emu_conv(void **state) {
  if (!have_avx512()) skip();
  conv_amx(state);
  if (emu_errors) fail_msg("%d tile operand errors", emu_errors);
  if (emu_configured) fail_msg("the tiles were not released");
}

static void emu_fc2(void **state) {
  if (!have_avx512()) skip();
  int rel = emu_released;
  fc_amx2(state);
  if (emu_errors) fail_msg("%d tile operand errors", emu_errors);
  if (emu_released == rel || emu_configured) fail_msg("the tiles were not released");
}
static void emu_conv2(void **state) {
  if (!have_avx512()) skip();
  conv_amx2(state);
  if (emu_errors) fail_msg("%d tile operand errors", emu_errors);
  if (emu_configured) fail_msg("the tiles were not released");
}

int main(void) {
  (void)q_amx_test_main;
  const struct CMUnitTest tests[] = {cmocka_unit_test(emu_fc), cmocka_unit_test(emu_conv), cmocka_unit_test(emu_fc2),
                                     cmocka_unit_test(emu_conv2), cmocka_unit_test(amxcl_fits)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
