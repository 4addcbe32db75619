/* tests/quant/calib_test.c: the histogram (binning by hand, range growth against one-shot binning at
 * the final range), and minmax / percentile / kl on distributions whose answer is known; mse against a
 * numpy search (tests/quant/make_mse_data.py, data/mse_expected.txt). */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "quant/quant.h"

static uint64_t rng = 0x243f6a8885a308d3ULL;
static uint64_t next(void) {
  rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
  return rng;
}
static double uniform(void) { return (double)(next() >> 11) * 0x1p-53; } /* [0, 1) */
static double gauss(void) {
  double u = uniform(), v = uniform();
  return sqrt(-2.0 * log(u + 1e-300)) * cos(6.283185307179586 * v);
}

static void test_bins_by_hand(void **state) {
  qllc_hist h;
  assert_int_equal(qllc_hist_init(&h, 16, NULL), QLLC_OK);
  /* zeros before any non-zero value land in bin 8 and stay there */
  float z[3] = {0, 0, -0.0f};
  qllc_hist_record(&h, z, 3);
  assert_true(h.range == 0.0f);
  assert_int_equal(h.counts[8], 3);
  /* range R = next float above 1, width R/8 (a hair above 0.125): 0.5 is just below the edge 4R/8, so
     0.5 -> rel 3 = bin 11; -0.5 -> rel -4 = bin 4; 1.0 -> bin 15; 0.25 -> rel 1 = bin 9 */
  float a[5] = {0.5f, -0.5f, 1.0f, 0.0f, 0.25f};
  qllc_hist_record(&h, a, 5);
  assert_true(h.range == nextafterf(1.0f, 2.0f));
  assert_int_equal(h.counts[11], 1);
  assert_int_equal(h.counts[4], 1);
  assert_int_equal(h.counts[15], 1);
  assert_int_equal(h.counts[9], 1);
  assert_int_equal(h.counts[8], 4);
  assert_int_equal(h.total, 8);
  assert_true(h.min == -0.5f && h.max == 1.0f);
  /* 3.0 doubles the range twice (R ~ 4, width ~ 0.5): old bins i -> (i + 8) / 2 twice:
     11 -> 9 -> 8, 4 -> 6 -> 7, 15 -> 11 -> 9, 9 -> 8 -> 8, 8 -> 8; and 3.0 -> bin 8 + 5 = 13
     (3.0 / (R/2) = 5.99..., floor 5) */
  float b[2] = {3.0f, NAN};
  qllc_hist_record(&h, b, 2);
  assert_true(h.range == 4.0f * nextafterf(1.0f, 2.0f));
  uint64_t e[16] = {0};
  e[9] = 1, e[7] = 1, e[8] = 6, e[13] = 1;
  assert_memory_equal(h.counts, e, sizeof e);
  assert_int_equal(h.nonfinite, 1);
  assert_int_equal(h.total, 9);
  qllc_hist_free(&h);
  qllc_diag d;
  memset(&d, 0, sizeof d);
  assert_int_equal(qllc_hist_init(&h, 15, &d), QLLC_ERR_INVALID);
  assert_int_equal(qllc_hist_init(&h, 0, &d), QLLC_OK); /* default */
  assert_int_equal(h.bins, QLLC_HIST_DEFAULT_BINS);
  qllc_hist_free(&h);
}

/* Range growth is exact: recording batches of growing magnitude gives the same counts as binning
   every value at once with the final range. */
static void test_growth_is_exact(void **state) {
  enum { B = 256, NB = 40, PER = 500 };
  static float all[NB * PER];
  qllc_hist h;
  assert_int_equal(qllc_hist_init(&h, B, NULL), QLLC_OK);
  for (int b = 0; b < NB; b++) {
    double scale = exp(0.3 * b) * 0.01;
    for (int i = 0; i < PER; i++) all[b * PER + i] = (float)(gauss() * scale + (b % 3) * scale);
    qllc_hist_record(&h, all + b * PER, PER);
  }
  uint64_t direct[B] = {0};
  double per = (double)B / (2.0 * h.range);
  for (int i = 0; i < NB * PER; i++) {
    int64_t k = (int64_t)floor((double)all[i] * per) + B / 2;
    assert_true(k >= 0 && k < B);
    direct[k]++;
  }
  assert_memory_equal(h.counts, direct, sizeof direct);
  qllc_hist_free(&h);
}

static float lo_, hi_;
static void calib(const qllc_hist *h, qllc_calibration m, double p) {
  qllc_calib_opts o = {.method = m, .percentile = p};
  qllc_diag d;
  memset(&d, 0, sizeof d);
  assert_int_equal(qllc_calibrate(h, &o, &lo_, &hi_, &d), QLLC_OK);
}

static void test_uniform(void **state) {
  qllc_hist h;
  assert_int_equal(qllc_hist_init(&h, 0, NULL), QLLC_OK);
  float buf[1000];
  for (int b = 0; b < 100; b++) {
    for (int i = 0; i < 1000; i++) buf[i] = (float)uniform();
    qllc_hist_record(&h, buf, 1000);
  }
  calib(&h, QLLC_CAL_MINMAX, 0);
  assert_true(lo_ == h.min && hi_ == h.max);
  assert_true(h.max > 0.9999f);
  /* percentile 99.99 of U[0, 1) ~ 0.9999: within a bin (2/2048) of max */
  calib(&h, QLLC_CAL_PERCENTILE, 99.99);
  assert_true(hi_ <= h.max && hi_ >= h.max - 0.002f);
  assert_true(lo_ >= h.min && lo_ <= 0.002f);
  /* percentile 90: hi ~ 0.9 */
  calib(&h, QLLC_CAL_PERCENTILE, 90);
  assert_true(fabsf(hi_ - 0.9f) < 0.005f);
  assert_true(fabsf(lo_ - 0.1f) < 0.005f);
  /* KL on a uniform distribution keeps (nearly) everything */
  calib(&h, QLLC_CAL_KL, 0);
  assert_true(hi_ >= 0.95f * h.max);
  qllc_hist_free(&h);
}

static void test_gauss_outlier(void **state) {
  qllc_hist h;
  assert_int_equal(qllc_hist_init(&h, 0, NULL), QLLC_OK);
  static float buf[100000];
  for (int i = 0; i < 100000; i++) buf[i] = (float)gauss();
  qllc_hist_record(&h, buf, 100000);
  /* without the outlier: KL picks a threshold of a few sigma, percentile ~ 3.9 sigma */
  calib(&h, QLLC_CAL_KL, 0);
  float kl_clean = hi_;
  assert_true(kl_clean > 2.0f && kl_clean <= h.max);
  calib(&h, QLLC_CAL_PERCENTILE, 99.99);
  assert_true(hi_ > 3.3f && hi_ < 4.6f); /* the 99.99% quantile of N(0,1) is 3.72 */
  assert_true(lo_ < -3.3f && lo_ > -4.6f);
  float outlier = 1000.0f;
  qllc_hist_record(&h, &outlier, 1);
  calib(&h, QLLC_CAL_MINMAX, 0);
  assert_true(hi_ == 1000.0f);
  calib(&h, QLLC_CAL_PERCENTILE, 99.99);
  assert_true(hi_ < 10.0f); /* one bin is ~1 wide now */
  calib(&h, QLLC_CAL_KL, 0);
  assert_true(hi_ < 250.0f); /* clipped: at most `levels` bins of ~1 */
  assert_true(lo_ >= h.min);
  qllc_hist_free(&h);
}

static void test_edge_cases(void **state) {
  qllc_hist h;
  assert_int_equal(qllc_hist_init(&h, 64, NULL), QLLC_OK);
  calib(&h, QLLC_CAL_KL, 0); /* empty */
  assert_true(lo_ == 0 && hi_ == 0);
  float z[4] = {0, 0, 0, 0};
  qllc_hist_record(&h, z, 4);
  calib(&h, QLLC_CAL_PERCENTILE, 99.9); /* all zeros */
  assert_true(lo_ == 0 && hi_ == 0);
  /* non-negative data: lo stays >= 0 (>= min) for every method */
  float r[64];
  for (int i = 0; i < 64; i++) r[i] = (float)i / 8.0f;
  qllc_hist_record(&h, r, 64);
  for (int m = 0; m < 3; m++) {
    calib(&h, (qllc_calibration)m, 99.0);
    assert_true(lo_ >= 0.0f && hi_ <= h.max && hi_ > 0.0f);
  }
  qllc_calib_opts o = {.method = QLLC_CAL_PERCENTILE, .percentile = 20.0};
  qllc_diag d;
  memset(&d, 0, sizeof d);
  assert_int_equal(qllc_calibrate(&h, &o, &lo_, &hi_, &d), QLLC_ERR_INVALID);
  qllc_hist_free(&h);
}

/* ---- mse (issue 13) ---- */

/* The samples of make_mse_data.py: splitmix64 from seed 13, Laplace(0, 1) by the inverse CDF. */
static float *laplace_samples(int64_t n) {
  float *x = malloc(sizeof *x * (size_t)n);
  for (int64_t i = 1; x && i <= n; i++) {
    uint64_t z = 13 + (uint64_t)i * 0x9E3779B97F4A7C15ull;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z ^= z >> 31;
    double u = ((double)(z >> 11) + 0.5) * 0x1p-53;
    x[i - 1] = (float)(u < 0.5 ? log(2 * u) : -log(2 * (1 - u)));
  }
  return x;
}

/* The mean squared error of quantizing x with p (as the kernels' QuantizeLinear and DequantizeLinear). */
static double true_mse(const float *x, int64_t n, const qllc_qparams *p) {
  double e = 0;
  for (int64_t i = 0; i < n; i++) {
    int32_t q = qllc_quantize_one(x[i], p->scale, p->zero_point, -128, 127);
    double d = (double)(q - p->zero_point) * (double)p->scale - (double)x[i];
    e += d * d;
  }
  return e / (double)n;
}

static void test_mse_against_numpy(void **state) {
  (void)state;
  const int64_t N = 200000;
  float *x = laplace_samples(N), *r = malloc(sizeof *r * (size_t)N);
  assert_non_null(x);
  assert_non_null(r);
  for (int64_t i = 0; i < N; i++) r[i] = x[i] > 0 ? x[i] : 0;
  FILE *f = fopen(QLLC_SOURCE_DIR "/tests/quant/data/mse_expected.txt", "r");
  assert_non_null(f);
  char line[512], set[32], grid[32];
  double best, blo, bhi, minmax;
  int rows = 0;
  while (fgets(line, sizeof line, f)) {
    if (line[0] == '#' || sscanf(line, "%31s %31s %lf %lf %lf %lf", set, grid, &best, &blo, &bhi, &minmax) != 6) continue;
    const float *v = strcmp(set, "relu") == 0 ? r : x;
    int sym = strcmp(grid, "symmetric") == 0;
    qllc_hist h;
    assert_int_equal(qllc_hist_init(&h, 0, NULL), QLLC_OK);
    for (int64_t i = 0; i < N; i += 4096) qllc_hist_record(&h, v + i, N - i < 4096 ? N - i : 4096);
    qllc_calib_opts o = {.method = QLLC_CAL_MSE, .levels = sym ? 254 : 255, .symmetric = sym};
    float lo, hi;
    assert_int_equal(qllc_calibrate(&h, &o, &lo, &hi, NULL), QLLC_OK);
    qllc_qparams p, pm;
    assert_int_equal(qllc_quant_choose(lo, hi, sym ? QLLC_SCHEMA_SYMMETRIC : QLLC_SCHEMA_ASYMMETRIC, QLLC_ELEM_I8,
                                       QLLC_QROLE_ACT, &p, NULL), QLLC_OK);
    assert_int_equal(qllc_quant_choose(h.min, h.max, sym ? QLLC_SCHEMA_SYMMETRIC : QLLC_SCHEMA_ASYMMETRIC, QLLC_ELEM_I8,
                                       QLLC_QROLE_ACT, &pm, NULL), QLLC_OK);
    double e = true_mse(v, N, &p), em = true_mse(v, N, &pm);
    printf("%s %s: qllc [%.4g, %.4g] mse %.6g; numpy best [%.4g, %.4g] %.6g; minmax %.6g (numpy %.6g)\n", set, grid,
           (double)lo, (double)hi, e, blo, bhi, best, em, minmax);
    assert_true(fabs(em - minmax) <= 1e-3 * minmax); /* the same samples and arithmetic as numpy's */
    assert_true(e <= 1.03 * best);
    assert_true(e < 0.95 * em);
    if (sym) assert_true(lo == -hi || lo == h.min || hi == h.max);
    qllc_hist_free(&h);
    rows++;
  }
  fclose(f);
  assert_int_equal(rows, 3);
  /* degenerate histograms: all zeros, one value */
  qllc_hist h;
  float z[4] = {0, 0, 0, 0}, lo, hi;
  qllc_calib_opts o = {.method = QLLC_CAL_MSE};
  assert_int_equal(qllc_hist_init(&h, 0, NULL), QLLC_OK);
  qllc_hist_record(&h, z, 4);
  assert_int_equal(qllc_calibrate(&h, &o, &lo, &hi, NULL), QLLC_OK);
  assert_true(lo == 0 && hi == 0);
  z[0] = 2.5f;
  qllc_hist_record(&h, z, 1);
  assert_int_equal(qllc_calibrate(&h, &o, &lo, &hi, NULL), QLLC_OK);
  /* a histogram bin narrower than a grid step costs less clipped than rounded: within one step of 2.5 */
  assert_true(lo == 0 && hi <= 2.5f && hi > 2.5f - 2.5f / 255);
  qllc_hist_free(&h);
  free(x);
  free(r);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_bins_by_hand), cmocka_unit_test(test_growth_is_exact),
      cmocka_unit_test(test_uniform),      cmocka_unit_test(test_gauss_outlier),
      cmocka_unit_test(test_edge_cases),   cmocka_unit_test(test_mse_against_numpy),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
