/* tests/libjit/q_table_test.c: lut (8-bit), lut_i16 (interpolated 513-entry table) and softmax, for
 * every input value, against their documented formulas (kernels_q.h) written here with explicit floor
 * divisions, cross-checked with src/quant's qllc_lut16_eval; tables built by src/quant
 * (qllc_quant_table, qllc_quant_softmax) are also checked against the float functions within the
 * documented error. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "kernels_q.h"
#include "quant/quant.h"

#define Q_TEST_SEED 0xda942042e4dd58b5ULL
#include "q_test_util.h"

static int64_t floor_div(int64_t a, int64_t b) { /* b > 0 */
  int64_t q = a / b;
  return (a % b != 0 && a < 0) ? q - 1 : q;
}

static void test_lut8(void **state) {
  (void)state;
  int8_t x8[256], t8[256], y8[256];
  uint8_t xu[256], tu[256], yu[256];
  for (int r = 0; r < 4; r++) {
    for (int i = 0; i < 256; i++) {
      t8[i] = (int8_t)(r == 0 ? irand(-128, 127) : r == 1 ? (i & 1 ? 127 : -128) : r == 2 ? 255 - i - 128 : i - 128);
      tu[i] = (uint8_t)(r == 0 ? irand(0, 255) : r == 1 ? (i & 1 ? 255 : 0) : r == 2 ? 255 - i : i);
      x8[i] = (int8_t)(i - 128), xu[i] = (uint8_t)(255 - i);
    }
    qllc_k_lut_i8_i8(y8, x8, t8, 256);
    qllc_k_lut_u8_u8(yu, xu, tu, 256);
    for (int i = 0; i < 256; i++) {
      assert_int_equal(y8[i], t8[x8[i] + 128]);
      assert_int_equal(yu[i], tu[xu[i]]);
    }
  }
}

/* The documented lut_i16 formula, with a floor division instead of a shift. */
static int32_t ref_lut16(const int16_t *t, int32_t x) {
  int32_t u = x + 32768, i = u / 128, f = u % 128;
  return t[i] + (int32_t)floor_div((int64_t)(t[i + 1] - t[i]) * f + 64, 128);
}

static void test_lut16_all_inputs(void **state) {
  (void)state;
  int16_t *t = malloc(513 * sizeof *t), *x = malloc(65536 * sizeof *x), *y = malloc(65536 * sizeof *y);
  for (int32_t i = 0; i < 65536; i++) x[i] = (int16_t)(i - 32768);
  for (int r = 0; r < 5; r++) {
    for (int j = 0; j < 513; j++)
      t[j] = (int16_t)(r == 0 ? irand(-32768, 32767)
                       : r == 1 ? ((j & 1) ? 32767 : -32768) /* steps of +-65535 */
                       : r == 2 ? 32767 - (j * 65535) / 512
                       : r == 3 ? -32768 + (j * 65535) / 512
                                : (j == 512 ? 32767 : -32768));
    qllc_k_lut_i16_i16(y, x, t, 65536);
    for (int32_t i = 0; i < 65536; i++) {
      int32_t want = ref_lut16(t, x[i]);
      assert_int_equal(want, qllc_lut16_eval(t, x[i]));
      if (y[i] != want) fail_msg("lut_i16 table %d x=%d: got %d want %d", r, x[i], y[i], want);
    }
    /* exact at the table's nodes */
    for (int j = 0; j < 512; j++) assert_int_equal(y[j * 128], t[j]);
  }
  free(t), free(x), free(y);
}

/* A table from the quantizer (tanh, int16) read by the kernel stays within the documented error of
   quantize(tanh(dequantize(x))): the interpolation error h^2/8 * max|f''| (h = 128 input steps,
   |tanh''| <= 4 / (3 sqrt 3)) in output LSB, plus rounding (1/2 LSB at the nodes, 1/2 in the kernel). */
static void test_lut16_tanh(void **state) {
  (void)state;
  qllc_qparams in = {8.0f / 32768, 0, QLLC_ELEM_I16}, out = {1.0f / 32767, 0, QLLC_ELEM_I16};
  int16_t t[513];
  int32_t len = 0;
  assert_int_equal(qllc_quant_table(QLLC_QF_TANH, 0, &in, &out, t, &len, NULL), QLLC_OK);
  assert_int_equal(len, 513);
  int16_t *x = malloc(65536 * sizeof *x), *y = malloc(65536 * sizeof *y);
  for (int32_t i = 0; i < 65536; i++) x[i] = (int16_t)(i - 32768);
  qllc_k_lut_i16_i16(y, x, t, 65536);
  double h = 128.0 * in.scale, bound = h * h / 8 * (4 / (3 * sqrt(3.0))) / out.scale + 1.0, worst = 0;
  for (int32_t i = 0; i < 65536; i++) {
    double want = tanh((double)in.scale * x[i]) / out.scale, err = fabs(y[i] - want);
    if (err > worst) worst = err;
  }
  if (worst > bound) fail_msg("lut_i16 tanh: error %.3f LSB > bound %.3f", worst, bound);
  free(x), free(y);
}

/* Softmax, the documented formula: d = max - x, e = table (8-bit: exp_table[d]; int16: interpolated
   between entries d / 128 and d / 128 + 1), S = sum e, y = clamp(z_y + floor((e * recip + S / 2) / S)). */
static int64_t ref_e(kind k, const int32_t *et, int32_t d) {
  if (k != K_I16) return et[d];
  int32_t i = d / 128, f = d % 128;
  return et[i] + floor_div((int64_t)(et[i + 1] - et[i]) * f + 64, 128);
}

static void run_softmax(kind k, float s_x, int64_t outer, int64_t L, int64_t inner, int pattern, int check_float) {
  qllc_qparams in = {s_x, 0, k == K_I8 ? QLLC_ELEM_I8 : k == K_U8 ? QLLC_ELEM_U8 : QLLC_ELEM_I16}, out;
  int32_t et[513], recip, len;
  assert_int_equal(qllc_quant_softmax(&in, &out, &recip, et, &len, NULL), QLLC_OK);
  int64_t count = outer * L * inner;
  int32_t *xv = calloc((size_t)count, sizeof *xv);
  for (int64_t i = 0; i < count; i++)
    xv[i] = pattern == 0 ? (int32_t)irand(kmin(k), kmax(k)) : pattern == 1 ? kmin(k) : pattern == 2 ? kmax(k)
          : ((i / inner) % L == 0 ? kmax(k) : kmin(k)); /* one max per row, the rest at d = range */
  void *x = malloc((size_t)count * 2), *y = malloc((size_t)count * 2);
  for (int64_t i = 0; i < count; i++) {
    if (k == K_I8) ((int8_t *)x)[i] = (int8_t)xv[i];
    else if (k == K_U8) ((uint8_t *)x)[i] = (uint8_t)xv[i];
    else ((int16_t *)x)[i] = (int16_t)xv[i];
  }
  int32_t lo = kmin(k), hi = kmax(k), z_y = out.zero_point;
  if (k == K_I8) qllc_k_softmax_i8_i8(y, x, et, outer, L, inner, recip, z_y, lo, hi);
  if (k == K_U8) qllc_k_softmax_u8_u8(y, x, et, outer, L, inner, recip, z_y, lo, hi);
  if (k == K_I16) qllc_k_softmax_i16_i16(y, x, et, outer, L, inner, recip, z_y, lo, hi);
  /* float: the documented tolerance is the output rounding (1/2 LSB), the clamp of a probability of 1
     (recip maps to one past the top), the table's rounding, and for int16 the interpolation error of
     exp over 128 input steps (relative h^2/8, twice: numerator and sum) */
  double h = 128.0 * s_x, tol = 1.0 + (k == K_I16 ? 2 * recip * h * h / 8 : 0.0) + 1e-3;
  for (int64_t o = 0; o < outer; o++)
    for (int64_t i = 0; i < inner; i++) {
      int32_t mx = kmin(k);
      for (int64_t a = 0; a < L; a++) mx = xv[(o * L + a) * inner + i] > mx ? xv[(o * L + a) * inner + i] : mx;
      int64_t S = 0;
      double fs = 0;
      for (int64_t a = 0; a < L; a++) {
        int32_t d = mx - xv[(o * L + a) * inner + i];
        S += ref_e(k, et, d);
        fs += exp(-(double)s_x * d);
      }
      for (int64_t a = 0; a < L; a++) {
        int64_t at = (o * L + a) * inner + i;
        int32_t d = mx - xv[at];
        int32_t want = clampi(z_y + floor_div(ref_e(k, et, d) * recip + S / 2, S), lo, hi);
        int32_t got = k == K_I8 ? ((int8_t *)y)[at] : k == K_U8 ? ((uint8_t *)y)[at] : ((int16_t *)y)[at];
        if (got != want)
          fail_msg("softmax kind %d s_x=%g [%lld][%lld][%lld]: got %d want %d", (int)k, s_x, (long long)o, (long long)a,
                   (long long)i, got, want);
        if (check_float) {
          double p = exp(-(double)s_x * d) / fs, fy = p * recip + z_y;
          if (fy > hi) fy = hi;
          if (fabs(fy - got) > tol) fail_msg("softmax kind %d: %d is %g from the float %g", (int)k, got, fabs(fy - got), fy);
        }
      }
    }
  free(xv), free(x), free(y);
}

static void test_softmax(void **state) {
  (void)state;
  static const float scales[] = {0.01f, 0.1f, 0.05f};
  for (int k = 0; k < 3; k++)
    for (int t = 0; t < 48; t++) {
      float s = k == K_I16 ? scales[t % 3] / 256 : scales[t % 3];
      int64_t outer = 1 + t % 3, L = (int64_t[]){1, 3, 7, 17, 100}[t % 5], inner = 1 + (t / 5) % 3;
      run_softmax((kind)k, s, outer, L, inner, t < 24 ? 0 : t % 4, 1);
    }
  /* large input scales: exp underflows to 0 in most of the table (only the formula is checked) */
  for (int k = 0; k < 3; k++) run_softmax((kind)k, k == K_I16 ? 0.01f : 2.0f, 2, 9, 2, 0, 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_lut8),
      cmocka_unit_test(test_lut16_all_inputs),
      cmocka_unit_test(test_lut16_tanh),
      cmocka_unit_test(test_softmax),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
