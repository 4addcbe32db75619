/* tests/quant_e2e/compare_test.c: qllc_compare (issue 13) against an independent numpy computation.
 *
 * data/outlier (made by make_compare_data.py): three FC layers, fc2 with an outlier output channel made
 * on purpose. expected.txt holds each value's int8 SQNR computed by numpy (the integer arithmetic
 * simulated from the float weights) for per-channel and per-tensor weights. qllc_compare's figures must
 * agree within 0.1 dB (the simulation and the kernels differ only in the fixed-point multiplier's
 * rounding), and with one weight scale per tensor fc2's output must come out the worst value, far below
 * the others. Also: compare with samples drawn from the profile, saturation counted when the profile
 * was made on fewer samples than the comparison runs, a float precision refused; and data/softmax12: a
 * softmax output on its calibrated grid, whose grid figure matches numpy's.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "qe2e.h"

typedef struct exp_row {
  char mode[32], value[128];
  double db;
} exp_row;

static int read_expected(exp_row *rows, int max) {
  char path[512], line[512];
  qe2e_path(path, sizeof path, "outlier", "expected.txt");
  FILE *f = fopen(path, "r");
  if (!f) return -1;
  int n = 0;
  while (n < max && fgets(line, sizeof line, f)) {
    if (line[0] == '#') continue;
    if (sscanf(line, "%31s %127s %lf", rows[n].mode, rows[n].value, &rows[n].db) == 3) n++;
  }
  fclose(f);
  return n;
}

static char profile[256];
static qllc_model *model;

static int setup(void **state) {
  char mp[512];
  qllc_diag d;
  memset(&d, 0, sizeof d);
  qe2e_path(mp, sizeof mp, "outlier", "model.onnx");
  if (qllc_model_load(mp, &model, &d) != QLLC_OK) return -1;
  return qe2e_profile(model, "outlier", profile, &d) == QLLC_OK ? 0 : -1;
}

static int teardown(void **state) {
  qllc_model_free(model);
  unlink(profile);
  return 0;
}

static qllc_compare_result *run(int per_tensor, const char *dataset, int64_t max_samples) {
  qllc_options o;
  qllc_options_init(&o);
  o.precision = QLLC_PREC_INT8;
  o.profile_path = profile;
  o.per_tensor = per_tensor;
  char ev[512];
  qe2e_path(ev, sizeof ev, "outlier", dataset ? dataset : "eval_x.npy");
  const char *specs[1] = {ev};
  qllc_diag d;
  memset(&d, 0, sizeof d);
  qllc_compare_result *r = NULL;
  qllc_status st = qllc_compare(model, &o, specs, dataset ? 1 : 0, max_samples, &r, &d);
  if (st != QLLC_OK) printf("compare: %s\n", d.message);
  assert_int_equal(st, QLLC_OK);
  return r;
}

static const qllc_compare_row *row(const qllc_compare_result *r, const char *value) {
  for (int i = 0; i < r->n_rows; i++)
    if (strcmp(r->rows[i].value, value) == 0) return &r->rows[i];
  return NULL;
}

static void test_agrees_with_numpy(void **state) {
  exp_row e[16];
  int n = read_expected(e, 16);
  assert_int_equal(n, 6);
  for (int pt = 0; pt < 2; pt++) {
    qllc_compare_result *r = run(pt, "eval_x.npy", 0);
    assert_int_equal(r->samples, 32);
    assert_int_equal(r->drawn, 0);
    assert_int_equal(r->n_rows, 3);
    for (int i = 0; i < n; i++) {
      if (strcmp(e[i].mode, pt ? "per_tensor" : "per_channel") != 0) continue;
      const qllc_compare_row *w = row(r, e[i].value);
      assert_non_null(w);
      printf("%s %-20s qllc %.3f dB numpy %.3f dB\n", e[i].mode, e[i].value, w->sqnr_db, e[i].db);
      assert_true(fabs(w->sqnr_db - e[i].db) < 0.1);
      assert_int_equal(w->count, 32 * (strcmp(e[i].value, "output") == 0 ? 8 : 32));
      assert_true(w->saturated == 0);
      assert_string_equal(w->types, "i8 x i8 -> i8");
      assert_int_equal(w->is_output, strcmp(e[i].value, "output") == 0);
    }
    /* outputs first, then worst first */
    assert_true(r->rows[0].is_output);
    assert_string_equal(r->rows[0].value, "output");
    for (int i = 2; i < r->n_rows; i++) assert_true(r->rows[i - 1].sqnr_db <= r->rows[i].sqnr_db);
    if (pt) { /* the outlier channel ruins fc2 with one weight scale per tensor */
      assert_string_equal(r->rows[1].value, "/Relu_1_output_0");
      assert_string_equal(r->rows[1].node, "/fc2/Gemm");
      assert_true(r->rows[1].sqnr_db < r->rows[2].sqnr_db - 15);
    }
    qllc_compare_result_free(r);
  }
}

static void test_drawn_samples_and_saturation(void **state) {
  /* no data set: the calibration samples kept in the profile, the first ones of calib.npy (issue 27) */
  qllc_compare_result *r = run(0, NULL, 8), *c = run(0, "calib.npy", 8);
  assert_int_equal(r->samples, 8);
  assert_int_equal(r->drawn, 2);
  assert_int_equal(r->n_rows, 3);
  assert_int_equal(c->n_rows, 3);
  for (int i = 0; i < r->n_rows; i++) {
    assert_true(r->rows[i].sqnr_db > 20 && r->rows[i].sqnr_db < 80);
    assert_string_equal(r->rows[i].value, c->rows[i].value);
    assert_true(r->rows[i].sqnr_db == c->rows[i].sqnr_db); /* the same samples, the same bits */
  }
  qllc_compare_result_free(r);
  qllc_compare_result_free(c);

  /* a profile of 4 samples, compared on 128: values beyond its ranges saturate */
  char small[256], mp[512], cal[512];
  snprintf(small, sizeof small, "%s/compare_small_%ld.yaml", QLLC_BUILD_DIR, (long)getpid());
  qe2e_path(mp, sizeof mp, "outlier", "eval_x.npy");
  qllc_diag d;
  memset(&d, 0, sizeof d);
  /* eval_x.npy holds 32 samples; a directory is not needed: profile them, compare on calib's 128 */
  const char *specs[1] = {mp};
  assert_int_equal(qllc_profile_dataset(model, specs, 1, 0, small, NULL, NULL, NULL, &d), QLLC_OK);
  qllc_options o;
  qllc_options_init(&o);
  o.precision = QLLC_PREC_INT8;
  o.profile_path = small;
  qe2e_path(cal, sizeof cal, "outlier", "calib.npy");
  const char *cspecs[1] = {cal};
  assert_int_equal(qllc_compare(model, &o, cspecs, 1, 0, &r, &d), QLLC_OK);
  assert_int_equal(r->samples, 128);
  double sat = 0;
  for (int i = 0; i < r->n_rows; i++) sat = fmax(sat, r->rows[i].saturated);
  printf("largest saturated share: %.4f\n", sat);
  assert_true(sat > 0 && sat < 0.2);
  qllc_compare_result_free(r);
  unlink(small);
}

/* data/softmax12 (issue 13's bounded-op case): 12 probabilities within about 0.04-0.17. The output grid
 * is now the calibrated [0, max] (numpy: rounding to it alone gives calibrated_grid dB, to the old fixed
 * 1/256 grid fixed_grid dB): compare's grid figure equals numpy's, and the output beats the old cap by
 * far. */
static void test_softmax_grid(void **state) {
  char mp[512], ev[512], ex[512], prof[256], line[256];
  qe2e_path(mp, sizeof mp, "softmax12", "model.onnx");
  qe2e_path(ev, sizeof ev, "softmax12", "eval_x.npy");
  qe2e_path(ex, sizeof ex, "softmax12", "expected.txt");
  double fixed = NAN, calibrated = NAN, v;
  FILE *f = fopen(ex, "r");
  assert_non_null(f);
  while (fgets(line, sizeof line, f)) {
    if (sscanf(line, "fixed_grid %lf", &v) == 1) fixed = v;
    if (sscanf(line, "calibrated_grid %lf", &v) == 1) calibrated = v;
  }
  fclose(f);
  qllc_model *m = NULL;
  qllc_diag d;
  memset(&d, 0, sizeof d);
  assert_int_equal(qllc_model_load(mp, &m, &d), QLLC_OK);
  assert_int_equal(qe2e_profile(m, "softmax12", prof, &d), QLLC_OK);
  qllc_options o;
  qllc_options_init(&o);
  o.precision = QLLC_PREC_INT8;
  o.profile_path = prof;
  const char *specs[1] = {ev};
  qllc_compare_result *r = NULL;
  assert_int_equal(qllc_compare(m, &o, specs, 1, 0, &r, &d), QLLC_OK);
  const qllc_compare_row *w = row(r, "output");
  assert_non_null(w);
  printf("softmax12: output %.2f dB, its grid %.3f dB (numpy %.3f); the fixed 1/256 grid allowed %.2f dB\n",
         w->sqnr_db, w->grid_sqnr_db, calibrated, fixed);
  assert_string_equal(w->types, "i8 -> i8");
  assert_true(fabs(w->grid_sqnr_db - calibrated) < 0.05);
  assert_true(w->sqnr_db > fixed + 10);
  assert_true(w->sqnr_db <= w->grid_sqnr_db + 0.5);
  qllc_compare_result_free(r);
  qllc_model_free(m);
  unlink(prof);
}

static void test_errors(void **state) {
  qllc_options o;
  qllc_options_init(&o);
  qllc_diag d;
  memset(&d, 0, sizeof d);
  qllc_compare_result *r = (qllc_compare_result *)1;
  assert_int_equal(qllc_compare(model, &o, NULL, 0, 0, &r, &d), QLLC_ERR_INVALID);
  assert_null(r);
  assert_non_null(strstr(d.message, "--precision"));
  o.precision = QLLC_PREC_INT8;
  o.profile_path = profile;
  const char *bad[1] = {"/nonexistent/x.npy"};
  assert_int_equal(qllc_compare(model, &o, bad, 1, 0, &r, &d), QLLC_ERR_IO);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_agrees_with_numpy),
      cmocka_unit_test(test_drawn_samples_and_saturation),
      cmocka_unit_test(test_softmax_grid),
      cmocka_unit_test(test_errors),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
