/* tests/libjit/elementwise_test.c: Add/Sub/Mul/Div with numpy broadcasting, and channel_affine.
 * The reference unravels every output index and applies the op in double: for one +, -, * or / of
 * two floats, rounding the double result to float gives the correctly rounded float result, so the
 * kernel must match it bit for bit. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "kernels_f32.h"

static uint32_t rng = 4242u;
static float frand(void) {
  rng = rng * 1664525u + 1013904223u;
  return (float)((rng >> 8) * (1.0 / 8388608.0)) - 1.0f;
}

typedef void (*binary_fn)(float *, const float *, const float *, int64_t, const int64_t *, const int64_t *,
                          const int64_t *);
static const binary_fn fns[4] = {qllc_k_add_f32_f32_f32, qllc_k_sub_f32_f32_f32, qllc_k_mul_f32_f32_f32,
                                 qllc_k_div_f32_f32_f32};

static double ref_op(int op, double u, double v) {
  return op == 0 ? u + v : op == 1 ? u - v : op == 2 ? u * v : u / v;
}

/* numpy broadcasting of shapes sa[ra] and sb[rb] (right-aligned) into y; strides of a, b in y's rank. */
static int64_t broadcast(int64_t ra, const int64_t *sa, int64_t rb, const int64_t *sb, int64_t *rank,
                         int64_t *dims, int64_t *as, int64_t *bs) {
  const int64_t r = ra > rb ? ra : rb;
  int64_t sta = 1, stb = 1, total = 1;
  for (int64_t i = r - 1; i >= 0; i--) {
    const int64_t da = i - (r - ra) >= 0 ? sa[i - (r - ra)] : 1, db = i - (r - rb) >= 0 ? sb[i - (r - rb)] : 1;
    assert_true(da == db || da == 1 || db == 1); /* the shapes must broadcast: the test's own check */
    dims[i] = da > db ? da : db;
    as[i] = da == 1 ? 0 : sta;
    bs[i] = db == 1 ? 0 : stb;
    sta *= da;
    stb *= db;
    total *= dims[i];
  }
  *rank = r;
  return total;
}

/* Runs every op with explicit strides; a and b must be big enough for them. */
static void run_strided(int64_t rank, const int64_t *dims, const int64_t *as, const int64_t *bs, const float *a,
                        const float *b) {
  int64_t total = 1;
  for (int64_t i = 0; i < rank; i++) total *= dims[i];
  float *y = malloc(total * sizeof *y);
  for (int op = 0; op < 4; op++) {
    for (int64_t i = 0; i < total; i++) y[i] = NAN;
    fns[op](y, a, b, rank, dims, as, bs);
    for (int64_t i = 0; i < total; i++) {
      int64_t rem = i, ia = 0, ib = 0;
      for (int64_t d = rank - 1; d >= 0; d--) {
        const int64_t k = rem % dims[d];
        rem /= dims[d];
        ia += k * as[d];
        ib += k * bs[d];
      }
      const float want = (float)ref_op(op, a[ia], b[ib]);
      if (memcmp(&want, &y[i], sizeof want) != 0)
        fail_msg("op %d rank %ld element %ld: got %.9g want %.9g", op, (long)rank, (long)i, y[i], want);
    }
  }
  free(y);
}

static void run_shapes(int64_t ra, const int64_t *sa, int64_t rb, const int64_t *sb) {
  int64_t rank, dims[8], as[8], bs[8], na = 1, nb = 1;
  broadcast(ra, sa, rb, sb, &rank, dims, as, bs);
  for (int64_t i = 0; i < ra; i++) na *= sa[i];
  for (int64_t i = 0; i < rb; i++) nb *= sb[i];
  float *a = malloc(na * sizeof *a), *b = malloc(nb * sizeof *b);
  for (int64_t i = 0; i < na; i++) a[i] = frand() * 10.0f;
  for (int64_t i = 0; i < nb; i++) b[i] = frand() * 10.0f + (frand() < 0 ? -0.25f : 0.25f); /* no 0 divisor */
  run_strided(rank, dims, as, bs, a, b);
  free(a);
  free(b);
}

#define S(...) (const int64_t[]){__VA_ARGS__}

static void test_same_shape(void **state) {
  (void)state;
  run_shapes(1, S(1), 1, S(1));
  run_shapes(1, S(17), 1, S(17));
  run_shapes(2, S(3, 7), 2, S(3, 7));
  run_shapes(4, S(1, 3, 7, 17), 4, S(1, 3, 7, 17));
}

static void test_broadcast(void **state) {
  (void)state;
  run_shapes(4, S(2, 3, 7, 7), 4, S(1, 3, 1, 1));   /* per-channel bias */
  run_shapes(4, S(1, 3, 1, 1), 4, S(2, 3, 7, 7));   /* the same, swapped */
  run_shapes(3, S(3, 1, 17), 3, S(1, 7, 1));        /* outer product style */
  run_shapes(1, S(1), 3, S(3, 7, 17));              /* scalar on the left */
  run_shapes(3, S(3, 7, 17), 0, S(0));              /* rank-0 scalar on the right */
  run_shapes(2, S(7, 17), 3, S(3, 1, 17));          /* rank difference */
  run_shapes(3, S(17, 1, 3), 2, S(7, 3));           /* inner broadcast of a ([17,1,3] x [7] did not broadcast:
                                                       the kernel read past b, found by ASan) */
  run_shapes(8, S(2, 1, 3, 1, 2, 1, 3, 5), 8, S(1, 2, 1, 3, 1, 2, 1, 5));
  run_shapes(8, S(1, 1, 1, 1, 1, 1, 1, 1), 8, S(1, 1, 1, 1, 1, 1, 1, 1));
}

/* Non-contiguous operands (a transposed view, b every other element), as the kernel contract allows. */
static void test_general_strides(void **state) {
  (void)state;
  float a[7 * 17], b[2 * 7 * 17];
  for (int i = 0; i < 7 * 17; i++) a[i] = frand();
  for (int i = 0; i < 2 * 7 * 17; i++) b[i] = frand() + 2.0f;
  run_strided(2, S(17, 7), S(1, 17), S(2, 34), a, b);
  run_strided(3, S(7, 1, 17), S(17, 5, 1), S(34, 1, 2), a, b);
}

static void test_channel_affine(void **state) {
  (void)state;
  const int64_t shapes[][3] = {{1, 1, 1}, {2, 3, 7}, {1, 17, 49}, {3, 7, 1}};
  for (int s = 0; s < 4; s++) {
    const int64_t N = shapes[s][0], C = shapes[s][1], inner = shapes[s][2], n = N * C * inner;
    float *x = malloc(n * sizeof *x), *y = malloc(n * sizeof *y), *a = malloc(C * sizeof *a), *b = malloc(C * sizeof *b);
    for (int64_t i = 0; i < n; i++) x[i] = frand() * 4.0f;
    for (int64_t c = 0; c < C; c++) a[c] = frand(), b[c] = frand();
    qllc_k_channel_affine_f32_f32(y, x, a, b, N, C, inner);
    for (int64_t i = 0; i < n; i++) {
      const int64_t c = (i / inner) % C;
      const double want = (double)x[i] * a[c] + b[c];
      if (!(fabs(y[i] - want) <= 2e-7 * (fabs((double)x[i] * a[c]) + fabs(b[c]))))
        fail_msg("affine %ld: got %.9g want %.9g", (long)i, y[i], want);
    }
    free(x), free(y), free(a), free(b);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_same_shape),
    cmocka_unit_test(test_broadcast),
    cmocka_unit_test(test_general_strides),
    cmocka_unit_test(test_channel_affine),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
