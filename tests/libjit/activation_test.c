/* tests/libjit/activation_test.c: the unary activation kernels, the libm-free exp used by softmax
 * (qm_exp in libjit/bitcode/qllc_math.h), and the erf / GELU kernels (ops_ext.c, same helpers).
 *
 * Each is compared with glibc in double (erf, erfc, exp, tanh; GELU as x erfc(-x / sqrt 2) / 2, its
 * tanh form as x / (1 + exp(-w)), which has no cancellation for x < 0) over a dense sweep of float
 * bit patterns (every 97th pattern, both signs: normals, subnormals, +-0, +-inf, NaNs) plus
 * hand-picked extremes. QLLC_SWEEP_STEP=N in the environment sweeps every Nth pattern instead (1: every
 * float, tens of minutes here). The error is measured in ulps of the exact (double) result, with the
 * subnormal ulp 2^-149 below FLT_MIN. Largest errors measured (docs/numerics.md): exp 1.05, sigmoid
 * 1.97, tanh 1.94, erf 1.15, gelu 1.48, gelu_tanh 1.13 over every float. The
 * asserted bounds: 1.5 for exp, erf, gelu and gelu_tanh, 2 for sigmoid and tanh. Infinities and NaNs must come out
 * exactly as libm's (GELU(-inf) = -0, its limit). */
#include <float.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "kernels_f32.h"
#include "qllc_math.h"

#define CHUNK 4096

static double ulp_error(float got, double ref) {
  if (isnan(ref)) return isnan(got) ? 0.0 : INFINITY;
  const float rf = (float)ref;
  if (isinf(rf) || isinf(got)) return got == rf ? 0.0 : INFINITY; /* overflow must round like libm */
  double u = 0x1p-149;
  if (fabs(ref) >= 0x1p-126) {
    int e;
    frexp(ref, &e);
    u = ldexp(1.0, e - 24);
  }
  return fabs((double)got - ref) / u;
}

typedef void (*unary_fn)(float *, const float *, int64_t);
static void qm_exp_kernel(float *y, const float *x, int64_t n) {
  for (int64_t i = 0; i < n; i++) y[i] = qm_exp(x[i]);
}
static double ref_exp(double x) { return exp(x); }
static double ref_sigmoid(double x) { return 1.0 / (1.0 + exp(-x)); }
static double ref_tanh(double x) { return tanh(x); }
static double ref_erf(double x) { return erf(x); }
static double ref_gelu(double x) { return isinf(x) ? (x < 0 ? -0.0 : x) : 0.5 * x * erfc(-x / sqrt(2.0)); }
static double ref_gelu_tanh(double x) {
  if (isinf(x)) return x < 0 ? -0.0 : x;
  const double w = 2.0 * sqrt(2.0 / acos(-1.0)) * (x + 0.044715 * x * x * x);
  return x / (1.0 + exp(-w));
}

/* every 97th bit pattern, or QLLC_SWEEP_STEP's */
static uint64_t sweep_step(void) {
  const char *e = getenv("QLLC_SWEEP_STEP");
  const long long v = e ? atoll(e) : 0;
  return v > 0 ? (uint64_t)v : 97;
}

/* Max ulp error of fn over the sweep and the extremes. */
static double sweep(unary_fn fn, double (*ref)(double), float *worst_x) {
  static float x[CHUNK], y[CHUNK];
  static const float extremes[] = {0.0f, -0.0f, INFINITY, -INFINITY, NAN, -NAN, FLT_MAX, -FLT_MAX, FLT_MIN,
                                   -FLT_MIN, 0x1p-149f, -0x1p-149f, 88.72283f, 88.72284f, 88.7f, 89.0f,
                                   -87.33654f, -103.97208f, -103.97207f, -104.0f, -150.0f, 0.4f, -0.4f,
                                   0.39999998f, 9.0f, -9.0f, 1e-20f, -1e-20f, 0.5f, 1.0f, 20.0f, -20.0f,
                                   0.49999997f, -0.6629126f, 0.6629126f, -0.66291255f, -14.0f, -14.2f, 15.0f,
                                   -15.0f, 10.5f, -5.3f, -5.4f, 3.92f, -1.375f};
  const uint64_t step = sweep_step();
  double worst = 0.0;
  int n = 0;
  for (uint64_t u = 0; u <= 0xffffffffu; u += step) {
    const uint32_t bits = (uint32_t)u;
    memcpy(&x[n++], &bits, sizeof bits);
    if (n == CHUNK || u + step > 0xffffffffu) {
      if (u + step > 0xffffffffu) {
        for (size_t i = 0; i < sizeof extremes / sizeof *extremes && n < CHUNK; i++) x[n++] = extremes[i];
      }
      fn(y, x, n);
      for (int i = 0; i < n; i++) {
        const double e = ulp_error(y[i], ref((double)x[i]));
        if (e > worst) worst = e, *worst_x = x[i];
      }
      n = 0;
    }
  }
  return worst;
}

static void test_exp(void **state) {
  (void)state;
  float wx = 0;
  const double e = sweep(qm_exp_kernel, ref_exp, &wx);
  print_message("exp: max %.3f ulp at %a\n", e, wx);
  assert_true(e <= 1.5);
  assert_true(qm_exp(0.0f) == 1.0f && qm_exp(-INFINITY) == 0.0f && qm_exp(INFINITY) == INFINITY);
  assert_true(isnan(qm_exp(NAN)) && qm_exp(89.0f) == INFINITY && qm_exp(-104.0f) == 0.0f);
  assert_true(qm_exp(-103.0f) > 0.0f); /* subnormal, not flushed */
}

static void test_sigmoid(void **state) {
  (void)state;
  float wx = 0;
  const double e = sweep(qllc_k_sigmoid_f32_f32, ref_sigmoid, &wx);
  print_message("sigmoid: max %.3f ulp at %a\n", e, wx);
  assert_true(e <= 2.0);
  float x[4] = {INFINITY, -INFINITY, 0.0f, -100.0f}, y[4];
  qllc_k_sigmoid_f32_f32(y, x, 4);
  assert_true(y[0] == 1.0f && y[1] == 0.0f && y[2] == 0.5f && y[3] > 0.0f);
}

static void test_tanh(void **state) {
  (void)state;
  float wx = 0;
  const double e = sweep(qllc_k_tanh_f32_f32, ref_tanh, &wx);
  print_message("tanh: max %.3f ulp at %a\n", e, wx);
  assert_true(e <= 2.0);
  float x[5] = {INFINITY, -INFINITY, -0.0f, 1e-30f, 50.0f}, y[5];
  qllc_k_tanh_f32_f32(y, x, 5);
  assert_true(y[0] == 1.0f && y[1] == -1.0f && y[2] == 0.0f && signbit(y[2]) && y[3] == 1e-30f && y[4] == 1.0f);
}

static void test_erf(void **state) {
  (void)state;
  float wx = 0;
  const double e = sweep(qllc_k_erf_f32_f32, ref_erf, &wx);
  print_message("erf: max %.3f ulp at %a\n", e, wx);
  assert_true(e <= 1.5);
  float x[6] = {INFINITY, -INFINITY, -0.0f, 0x1p-149f, 4.0f, NAN}, y[6];
  qllc_k_erf_f32_f32(y, x, 6);
  assert_true(y[0] == 1.0f && y[1] == -1.0f && y[2] == 0.0f && signbit(y[2]) && y[3] == 0x1p-149f);
  assert_true(y[4] == 1.0f && isnan(y[5]));
}

static void test_gelu(void **state) {
  (void)state;
  float wx = 0;
  const double e = sweep(qllc_k_gelu_f32_f32, ref_gelu, &wx);
  print_message("gelu: max %.3f ulp at %a\n", e, wx);
  assert_true(e <= 1.5);
  float x[6] = {INFINITY, -INFINITY, -0.0f, -14.0f, -20.0f, NAN}, y[6];
  qllc_k_gelu_f32_f32(y, x, 6);
  assert_true(y[0] == INFINITY && y[1] == 0.0f && signbit(y[1]) && y[2] == 0.0f && signbit(y[2]));
  assert_true(y[3] < 0.0f && y[3] > -1e-42f && y[4] == 0.0f && isnan(y[5])); /* -1.1e-43, subnormal */
}

static void test_gelu_tanh(void **state) {
  (void)state;
  float wx = 0;
  const double e = sweep(qllc_k_gelu_tanh_f32_f32, ref_gelu_tanh, &wx);
  print_message("gelu_tanh: max %.3f ulp at %a\n", e, wx);
  assert_true(e <= 1.5);
  float x[5] = {INFINITY, -INFINITY, -0.0f, 1e30f, NAN}, y[5];
  qllc_k_gelu_tanh_f32_f32(y, x, 5);
  assert_true(y[0] == INFINITY && y[1] == 0.0f && signbit(y[1]) && y[2] == 0.0f && signbit(y[2]));
  assert_true(y[3] == 1e30f && isnan(y[4]));
}

static void test_relu_leaky_clip(void **state) {
  (void)state;
  const float x[7] = {-3.5f, -0.0f, 0.0f, 1e-30f, 2.25f, -INFINITY, INFINITY};
  float y[7];
  qllc_k_relu_f32_f32(y, x, 7);
  const float relu[7] = {0, -0.0f, 0, 1e-30f, 2.25f, 0, INFINITY};
  for (int i = 0; i < 7; i++) assert_true(y[i] == relu[i]);
  qllc_k_leakyrelu_f32_f32(y, x, 7, 0.1f);
  const float leaky[7] = {-3.5f * 0.1f, 0, 0, 1e-30f, 2.25f, -INFINITY, INFINITY};
  for (int i = 0; i < 7; i++) assert_true(y[i] == leaky[i]);
  qllc_k_clip_f32_f32(y, x, 7, -1.0f, 2.0f);
  const float clip[7] = {-1.0f, 0, 0, 1e-30f, 2.0f, -1.0f, 2.0f};
  for (int i = 0; i < 7; i++) assert_true(y[i] == clip[i]);
  qllc_k_clip_f32_f32(y, x, 7, -INFINITY, INFINITY); /* Clip without bounds is the identity */
  for (int i = 0; i < 7; i++) assert_true(y[i] == x[i]);
  const float nan_in[1] = {NAN};
  qllc_k_relu_f32_f32(y, nan_in, 1);
  assert_true(isnan(y[0]));
  /* odd lengths through the kernels' loops */
  float big[17], out[17];
  for (int i = 0; i < 17; i++) big[i] = (float)(i - 8) * 0.5f;
  qllc_k_leakyrelu_f32_f32(out, big, 17, 0.25f);
  for (int i = 0; i < 17; i++) assert_true(out[i] == (big[i] < 0 ? big[i] * 0.25f : big[i]));
}

int main(void) {
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_exp),
    cmocka_unit_test(test_sigmoid),
    cmocka_unit_test(test_tanh),
    cmocka_unit_test(test_erf),
    cmocka_unit_test(test_gelu),
    cmocka_unit_test(test_gelu_tanh),
    cmocka_unit_test(test_relu_leaky_clip),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
