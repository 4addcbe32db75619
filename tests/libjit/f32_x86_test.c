/* tests/libjit/f32_x86_test.c: the float rows of the x86_64 kernel catalogue (targets/x86_64/kernels/
 * variants.def, in f32; q_catalog.h, Q_SUITE_F32), each run on the table of FC and Conv shapes of
 * f32_cases.h (shared with the aarch64 rows' test, q_arm_kernels.c), packed by the row's packer into its
 * layout and compared bit for bit with its reference. A row whose features the host lacks is SKIPPED.
 * Also the F32_M24 and F32_N32 packers against an independent enumeration. */
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
  assert_true(!r->convf_fn || n >= 20); /* every row runs most of the table (the direct row: stride 1) */
}

/* F32_M24: w[c][k] at ((c / 24) * K + k) * 24 + c % 24, zeros in the channels past ch. */
static void test_pack_m24(void **state) {
  (void)state;
  static const int64_t chs[] = {1, 23, 24, 25, 64}, Ks[] = {1, 9, 27};
  for (int a = 0; a < 5; a++)
    for (int bk = 0; bk < 3; bk++) {
      const int64_t ch = chs[a], K = Ks[bk], mp = (ch + 23) / 24 * 24;
      assert_int_equal(qllc_pack_size(QLLC_LAYOUT_F32_M24, ch, K), (size_t)(mp * K) * sizeof(float));
      float *w = malloc((size_t)(ch * K) * sizeof(float)), *d = malloc((size_t)(mp * K) * sizeof(float));
      for (int64_t i = 0; i < ch * K; i++) w[i] = (float)(i + 1);
      const qllc_pack_src src = {.w = w, .ch = ch, .K = K, .taps = 1, .w_f32 = 1};
      assert_int_equal(qllc_packer_F32_M24(&src, d, NULL), -1);
      int64_t i = 0; /* storage order: block, k, channel */
      for (int64_t mb = 0; mb < mp / 24; mb++)
        for (int64_t k = 0; k < K; k++)
          for (int64_t j = 0; j < 24; j++, i++) {
            const int64_t c = mb * 24 + j;
            assert_true(d[i] == (c < ch ? w[c * K + k] : 0.0f));
          }
      free(w), free(d);
    }
}

/* F32_N32: w[c][k] at ((c / 32) * K + k) * 32 + c % 32, zeros in the columns past ch. */
static void test_pack_n32(void **state) {
  (void)state;
  static const int64_t chs[] = {1, 31, 32, 33, 100}, Ks[] = {1, 2, 7, 64};
  for (int a = 0; a < 5; a++)
    for (int bk = 0; bk < 4; bk++) {
      const int64_t ch = chs[a], K = Ks[bk], np = (ch + 31) / 32 * 32;
      assert_int_equal(qllc_pack_size(QLLC_LAYOUT_F32_N32, ch, K), (size_t)(np * K) * sizeof(float));
      float *w = malloc((size_t)(ch * K) * sizeof(float)), *d = malloc((size_t)(np * K) * sizeof(float));
      for (int64_t i = 0; i < ch * K; i++) w[i] = (float)(i + 1);
      const qllc_pack_src src = {.w = w, .ch = ch, .K = K, .taps = 1, .w_f32 = 1};
      assert_int_equal(qllc_packer_F32_N32(&src, d, NULL), -1);
      int64_t i = 0; /* storage order: block, k, column */
      for (int64_t nb = 0; nb < np / 32; nb++)
        for (int64_t k = 0; k < K; k++)
          for (int64_t j = 0; j < 32; j++, i++) {
            const int64_t c = nb * 32 + j;
            assert_true(d[i] == (c < ch ? w[c * K + k] : 0.0f));
          }
      const qllc_pack_src q8 = {.w = w, .w_i8 = 1, .ch = ch, .K = K, .taps = 1};
      assert_int_equal(qllc_packer_F32_N32(&q8, d, NULL), -2); /* not float weights */
      free(w), free(d);
    }
}

int main(void) {
  static struct CMUnitTest tests[Q_NROWS + 2];
  int nt = 0;
  tests[nt++] = (struct CMUnitTest)cmocka_unit_test(test_pack_n32);
  tests[nt++] = (struct CMUnitTest)cmocka_unit_test(test_pack_m24);
  for (int i = 0; i < Q_NROWS; i++)
    if (q_row_suite(&q_rows[i]) == Q_SUITE_F32)
      tests[nt++] = (struct CMUnitTest){q_rows[i].name, test_row, NULL, NULL, (void *)&q_rows[i]};
  assert_true(nt > 1);
  return _cmocka_run_group_tests("f32_x86_test", tests, (size_t)nt, NULL, NULL);
}
