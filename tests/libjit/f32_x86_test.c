/* tests/libjit/f32_x86_test.c: the float rows of the x86_64 kernel catalogue (targets/x86_64/kernels/
 * variants.def, in f32; q_catalog.h, Q_SUITE_F32), each run on the table of FC and Conv shapes of
 * f32_cases.h (shared with the aarch64 rows' test, q_arm_kernels.c), packed by the row's packer into its
 * layout and compared bit for bit with its reference (the x86 depthwise rows on its depthwise cases). A
 * row whose features the host lacks is SKIPPED. Also the F32_M24 and F32_N32 packers against an
 * independent enumeration, the depthwise rows' predicate, and the float MaxPool's ISA copies against
 * qllc_k_maxpool2d_f32_f32, and its GlobalAveragePool's against qllc_k_global_avgpool_f32_f32. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../targets/x86_64/kernels/variants.h"
#include "kernels_f32.h"
#include "kernels_q.h"
#include "lower/pack.h"

#define Q_TEST_SEED 0x26f32f32a5a5c3c3ULL
#include "q_x86_test_util.h"
#define Q_CATALOG_DEF "../../targets/x86_64/kernels/variants.def"
#include "q_catalog.h"

#include "f32_cases.h"

static void test_row(void **state) {
  const q_vrow *r = *state;
  if (!q_row_runs(r)) {
    print_message("%s: needs %s, which this CPU lacks\n", r->name, r->features);
    skip();
  }
  const int n = f32_run_row(r);
  assert_true(!r->convf_fn || n >= 8); /* each conv row has a table of its class */
}

/* The direct float conv (conv2ds1) on every stride-1 case, also those its row's predicate leaves to the
   panel conv for speed (narrow rows: most strips then cross output rows, through the tile's copy). */
static void test_direct_any_width(void **state) {
  (void)state;
  int ran = 0, rows = 0;
  for (int i = 0; i < Q_NROWS; i++) {
    const q_vrow *r = &q_rows[i];
    if (!r->convf_fn || !strstr(r->name, "conv2ds1") || !q_row_runs(r)) continue;
    rows++;
    for (size_t c = 0; c < sizeof f32_conv_cases / sizeof f32_conv_cases[0]; c++) {
      const int64_t *d = f32_conv_cases[c].d;
      if (d[7] == 1 && d[8] == 1 && d[15] == 1) ran += f32_run_conv_as(r, &f32_conv_cases[c], 0, 1);
    }
  }
  if (!rows) {
    print_message("no conv2ds1 row this CPU runs\n");
    skip();
  }
  assert_true(ran >= 20 * rows);
}

/* The float MaxPool's ISA copies (QISA rows of src/lower/kernels.def, x86_f32pool.h) bit for bit against
   qllc_k_maxpool2d_f32_f32: strides 1, 2, 3, pads, dilation, ceil-mode outputs past the pads, rows
   narrower and wider than 16, special values (NaN, whose later taps may replace it, -0 and +0, inf). */
typedef void maxpool_fn(float *y, const float *x, int64_t NC, int64_t H, int64_t W, int64_t OH, int64_t OW,
                        int64_t KH, int64_t KW, int64_t sh, int64_t sw, int64_t pt, int64_t pl, int64_t pb, int64_t pr,
                        int64_t dh, int64_t dw);
static void run_maxpool(const char *name, maxpool_fn *fn, const char *features) {
  /* NC H W KH KW sh sw pt pl pb pr dh dw, ceil (one more output row and column where the pads allow) */
  static const int64_t cases[][14] = {
      {64, 112, 112, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 0}, /* ResNet-18's */
      {3, 20, 20, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 0},    {5, 9, 7, 2, 2, 2, 2, 0, 0, 0, 0, 1, 1, 0},
      {2, 33, 70, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 1},    {2, 17, 40, 5, 5, 1, 1, 2, 2, 2, 2, 1, 1, 0},
      {2, 15, 50, 3, 3, 1, 2, 0, 1, 2, 0, 2, 3, 0},    {3, 16, 45, 3, 3, 3, 3, 1, 1, 1, 1, 1, 1, 1},
      {1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1, 0},      {4, 7, 7, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 0},
  };
  if (!q_host_has(features)) {
    print_message("%s: needs %s, which this CPU lacks\n", name, features);
    skip();
  }
  for (size_t t = 0; t < sizeof cases / sizeof cases[0]; t++) {
    const int64_t *d = cases[t];
    const int64_t NC = d[0], H = d[1], W = d[2], KH = d[3], KW = d[4], sh = d[5], sw = d[6], pt = d[7], pl = d[8];
    const int64_t pb = d[9], pr = d[10], dh = d[11], dw = d[12];
    const int64_t eh = H + pt + pb - (KH - 1) * dh - 1, ew = W + pl + pr - (KW - 1) * dw - 1;
    const int64_t OH = (d[13] ? eh + sh - 1 : eh) / sh + 1, OW = (d[13] ? ew + sw - 1 : ew) / sw + 1;
    const int64_t nx = NC * H * W, ny = NC * OH * OW;
    gbuf gx;
    float *x = galloc(&gx, (size_t)nx * sizeof(float));
    for (int64_t i = 0; i < nx; i++) x[i] = frand();
    for (int64_t i = 0; i < nx; i += 37) x[i] = (i / 37) % 4 == 0 ? NAN : (i / 37) % 4 == 1 ? -0.0f : (i / 37) % 4 == 2 ? 0.0f : INFINITY;
    const size_t yb = (size_t)ny * sizeof(float);
    uint8_t *yv = gzone(yb), *yr = gzone(yb);
    qllc_k_maxpool2d_f32_f32((float *)yr, x, NC, H, W, OH, OW, KH, KW, sh, sw, pt, pl, pb, pr, dh, dw);
    fn((float *)yv, x, NC, H, W, OH, OW, KH, KW, sh, sw, pt, pl, pb, pr, dh, dw);
    for (int64_t i = 0; i < ny; i++) {
      uint32_t a, e;
      memcpy(&a, yv + i * 4, 4), memcpy(&e, yr + i * 4, 4);
      if (a != e)
        fail_msg("%s: case %zu: y[%lld] = %a, reference %a", name, t, (long long)i, ((float *)yv)[i], ((float *)yr)[i]);
    }
    assert_true(guard_ok(yv, yb));
    free(yv), free(yr);
    gfree(&gx);
  }
}
static void test_maxpool_avx512(void **state) {
  (void)state;
  run_maxpool("qllc_k_maxpool2d_f32_f32__avx512", qllc_k_maxpool2d_f32_f32__avx512, "avx512f");
}
static void test_maxpool_avx2(void **state) {
  (void)state;
  run_maxpool("qllc_k_maxpool2d_f32_f32__avx2", qllc_k_maxpool2d_f32_f32__avx2, "avx2");
}

/* The float GlobalAveragePool's copies against qllc_k_global_avgpool_f32_f32: groups of 8 rows and the
   rows after them, rows shorter than 8 and with tails, special values */
typedef void gap_fn(float *y, const float *x, int64_t NC, int64_t HW);
static void run_gap(const char *name, gap_fn *fn, const char *features) {
  static const int64_t cases[][2] = {{256, 3136}, {13, 49}, {9, 1}, {8, 7}, {17, 65}, {1, 8}, {24, 100}};
  if (!q_host_has(features)) {
    print_message("%s: needs %s, which this CPU lacks\n", name, features);
    skip();
  }
  for (size_t t = 0; t < sizeof cases / sizeof cases[0]; t++) {
    const int64_t NC = cases[t][0], HW = cases[t][1], nx = NC * HW;
    gbuf gx;
    float *x = galloc(&gx, (size_t)nx * sizeof(float));
    for (int64_t i = 0; i < nx; i++) x[i] = frand() * 100.0f;
    for (int64_t i = 5; i < nx; i += 41) x[i] = (i / 41) % 4 == 0 ? NAN : (i / 41) % 4 == 1 ? -0.0f : (i / 41) % 4 == 2 ? 0.0f : INFINITY;
    const size_t yb = (size_t)NC * sizeof(float);
    uint8_t *yv = gzone(yb), *yr = gzone(yb);
    qllc_k_global_avgpool_f32_f32((float *)yr, x, NC, HW);
    fn((float *)yv, x, NC, HW);
    for (int64_t i = 0; i < NC; i++) {
      uint32_t a, e;
      memcpy(&a, yv + i * 4, 4), memcpy(&e, yr + i * 4, 4);
      if (a != e)
        fail_msg("%s: NC=%lld HW=%lld: y[%lld] = %a, reference %a", name, (long long)NC, (long long)HW, (long long)i,
                 ((float *)yv)[i], ((float *)yr)[i]);
    }
    assert_true(guard_ok(yv, yb));
    free(yv), free(yr);
    gfree(&gx);
  }
}
static void test_gap_avx512(void **state) {
  (void)state;
  run_gap("qllc_k_global_avgpool_f32_f32__avx512", qllc_k_global_avgpool_f32_f32__avx512, "avx512f");
}
static void test_gap_avx2(void **state) {
  (void)state;
  run_gap("qllc_k_global_avgpool_f32_f32__avx2", qllc_k_global_avgpool_f32_f32__avx2, "avx2");
}

/* The float depthwise rows' predicate: depthwise layers of strides up to 4 (the scratch's phase planes). */
static void test_fits_f32dw(void **state) {
  (void)state;
  const int64_t dw[16] = {1, 8, 16, 16, 8, 16, 16, 3, 3, 1, 1, 1, 1, 1, 1, 8};
  int64_t geo[16];
  char why[160] = "";
  memcpy(geo, dw, sizeof geo);
  assert_int_equal(qllc_fits_f32dw(&(qllc_layer_geom){0}, why, sizeof why), -1); /* an FC */
  qllc_layer_geom g = q_conv_geom(geo);
  assert_int_equal(qllc_fits_f32dw(&g, why, sizeof why), 1);
  geo[10] = 5; /* stride_w 5 */
  g = q_conv_geom(geo);
  assert_int_equal(qllc_fits_f32dw(&g, why, sizeof why), 0);
  assert_non_null(strstr(why, "stride 1x5"));
  geo[10] = 1, geo[15] = 1; /* group 1: not depthwise */
  g = q_conv_geom(geo);
  assert_int_equal(qllc_fits_f32dw(&g, why, sizeof why), -1);
  assert_int_equal(qllc_fits_f32conv(&g, why, sizeof why), 1);
}

/* The stride-1 float rows' predicates: the transposed row from 16 output channels at any width, the direct
   row for rows of at least 16 (KW-1) dw pixels; neither for stride 2. */
static void test_fits_f32t(void **state) {
  (void)state;
  int64_t geo[16] = {1, 8, 7, 7, 16, 7, 7, 3, 3, 1, 1, 1, 1, 1, 1, 1}; /* 3x3, 8 -> 16 channels, 7x7 */
  char why[160] = "";
  qllc_layer_geom g = q_conv_geom(geo);
  assert_int_equal(qllc_fits_f32t(&g, why, sizeof why), 1);
  assert_int_equal(qllc_fits_f32d(&g, why, sizeof why), 0); /* rows of 7 */
  geo[4] = 8; /* 8 output channels */
  g = q_conv_geom(geo);
  assert_int_equal(qllc_fits_f32t(&g, why, sizeof why), 0);
  assert_non_null(strstr(why, "8 output channels"));
  geo[4] = 64, geo[9] = 2; /* stride 2 */
  g = q_conv_geom(geo);
  assert_int_equal(qllc_fits_f32t(&g, why, sizeof why), 0);
  assert_non_null(strstr(why, "stride 2x1: the transposed"));
  assert_int_equal(qllc_fits_f32d(&g, why, sizeof why), 0);
  assert_non_null(strstr(why, "stride 2x1: the direct"));
  geo[15] = 8; /* depthwise: not theirs */
  geo[1] = geo[4] = 8, geo[9] = 1;
  g = q_conv_geom(geo);
  assert_int_equal(qllc_fits_f32t(&g, why, sizeof why), -1);
}

/* A blocked float layout of B channels a block (F32_M24: B 24, F32_N32: B 32): w[c][k] at ((c / B) * K + k) * B
   + c % B, zeros in the channels past ch; checked against this enumeration for every ch and K given. */
static void check_blocked_pack(qllc_layout l, qllc_packer_fn *pack, int64_t B, const int64_t *chs, int nch,
                               const int64_t *Ks, int nk) {
  for (int a = 0; a < nch; a++)
    for (int bk = 0; bk < nk; bk++) {
      const int64_t ch = chs[a], K = Ks[bk], cp = (ch + B - 1) / B * B;
      assert_int_equal(qllc_pack_size(l, ch, K), (size_t)(cp * K) * sizeof(float));
      float *w = malloc((size_t)(ch * K) * sizeof(float)), *d = malloc((size_t)(cp * K) * sizeof(float));
      for (int64_t i = 0; i < ch * K; i++) w[i] = (float)(i + 1);
      const qllc_pack_src src = {.w = w, .ch = ch, .K = K, .taps = 1, .w_f32 = 1};
      assert_int_equal(pack(&src, d, NULL), -1);
      int64_t i = 0; /* storage order: block, k, channel */
      for (int64_t cb = 0; cb < cp / B; cb++)
        for (int64_t k = 0; k < K; k++)
          for (int64_t j = 0; j < B; j++, i++) {
            const int64_t c = cb * B + j;
            assert_true(d[i] == (c < ch ? w[c * K + k] : 0.0f));
          }
      const qllc_pack_src q8 = {.w = w, .w_i8 = 1, .ch = ch, .K = K, .taps = 1};
      assert_int_equal(pack(&q8, d, NULL), -2); /* not float weights */
      free(w), free(d);
    }
}

static void test_pack_m24(void **state) {
  (void)state;
  static const int64_t chs[] = {1, 23, 24, 25, 64}, Ks[] = {1, 9, 27};
  check_blocked_pack(QLLC_LAYOUT_F32_M24, qllc_packer_F32_M24, 24, chs, 5, Ks, 3);
}

static void test_pack_n32(void **state) {
  (void)state;
  static const int64_t chs[] = {1, 31, 32, 33, 100}, Ks[] = {1, 2, 7, 64};
  check_blocked_pack(QLLC_LAYOUT_F32_N32, qllc_packer_F32_N32, 32, chs, 5, Ks, 4);
}

int main(void) {
  static struct CMUnitTest tests[Q_NROWS + 9];
  int nt = 0;
  tests[nt++] = (struct CMUnitTest)cmocka_unit_test(test_pack_n32);
  tests[nt++] = (struct CMUnitTest)cmocka_unit_test(test_pack_m24);
  tests[nt++] = (struct CMUnitTest)cmocka_unit_test(test_fits_f32dw);
  tests[nt++] = (struct CMUnitTest)cmocka_unit_test(test_fits_f32t);
  tests[nt++] = (struct CMUnitTest)cmocka_unit_test(test_direct_any_width);
  tests[nt++] = (struct CMUnitTest)cmocka_unit_test(test_maxpool_avx512);
  tests[nt++] = (struct CMUnitTest)cmocka_unit_test(test_maxpool_avx2);
  tests[nt++] = (struct CMUnitTest)cmocka_unit_test(test_gap_avx512);
  tests[nt++] = (struct CMUnitTest)cmocka_unit_test(test_gap_avx2);
  for (int i = 0; i < Q_NROWS; i++)
    if (q_row_suite(&q_rows[i]) == Q_SUITE_F32)
      tests[nt++] = (struct CMUnitTest){q_rows[i].name, test_row, NULL, NULL, (void *)&q_rows[i]};
  assert_true(nt > 5);
  return _cmocka_run_group_tests("f32_x86_test", tests, (size_t)nt, NULL, NULL);
}
