/* tests/libjit/softmax_test.c: qllc_k_softmax_f32_f32 against a double reference (ONNX Softmax,
 * opset 13 semantics: along one axis of x[outer][axis_len][inner]), including inner > 64 (the
 * kernel's column block), large inputs that would overflow a naive exp, and -inf entries. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <cmocka.h>

#include "kernels_f32.h"

static uint32_t rng = 31337u;
static float frand(void) {
  rng = rng * 1664525u + 1013904223u;
  return (float)((rng >> 8) * (1.0 / 8388608.0)) - 1.0f;
}

static void run(int64_t outer, int64_t axis, int64_t inner, float scale, float offset, int with_neg_inf) {
  const int64_t n = outer * axis * inner;
  float *x = malloc(n * sizeof *x), *y = malloc(n * sizeof *y);
  for (int64_t i = 0; i < n; i++) x[i] = frand() * scale + offset;
  if (with_neg_inf && axis > 1)
    for (int64_t i = 0; i < n; i += 5) x[i] = -INFINITY; /* never a whole column */
  qllc_k_softmax_f32_f32(y, x, outer, axis, inner);
  for (int64_t o = 0; o < outer; o++)
    for (int64_t i = 0; i < inner; i++) {
      double m = -INFINITY, s = 0;
      for (int64_t a = 0; a < axis; a++) m = fmax(m, x[(o * axis + a) * inner + i]);
      for (int64_t a = 0; a < axis; a++) s += exp((double)x[(o * axis + a) * inner + i] - m);
      for (int64_t a = 0; a < axis; a++) {
        const int64_t k = (o * axis + a) * inner + i;
        const double want = exp((double)x[k] - m) / s;
        if (!(fabs(y[k] - want) <= 1e-6 * want + 1e-30))
          fail_msg("softmax %ldx%ldx%ld at %ld: got %.9g want %.9g", (long)outer, (long)axis, (long)inner, (long)k,
                   y[k], want);
      }
    }
  free(x);
  free(y);
}

static void test_shapes(void **state) {
  (void)state;
  run(1, 1, 1, 1.0f, 0.0f, 0);   /* a single element: 1 */
  run(3, 7, 1, 4.0f, 0.0f, 0);   /* last axis */
  run(2, 17, 3, 4.0f, 0.0f, 0);  /* middle axis */
  run(1, 10, 100, 4.0f, 0.0f, 0); /* inner spans two column blocks */
  run(7, 1, 17, 1.0f, 0.0f, 0);  /* axis of length 1: all ones */
  run(2, 1000, 1, 8.0f, 0.0f, 0);
}

static void test_extremes(void **state) {
  (void)state;
  run(3, 17, 1, 50.0f, 1000.0f, 0);  /* exp(1000) overflows without the max subtraction */
  run(3, 17, 2, 50.0f, -1000.0f, 0); /* and underflows */
  run(3, 7, 3, 4.0f, 0.0f, 1);       /* -inf entries give exactly 0 */
}

int main(void) {
  const struct CMUnitTest tests[] = {cmocka_unit_test(test_shapes), cmocka_unit_test(test_extremes)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
