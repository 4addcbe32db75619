/* tests/libjit/gemm_test.c: qllc_k_fc_f32_f32_f32, qllc_k_gemm_f32_f32_f32 and qllc_k_matmul_f32_f32_f32
 * against naive double references written here (ONNX Gemm / MatMul definitions), on sizes 1, 3, 7, 17,
 * every transpose combination, every C broadcast pattern, and broadcast batch offsets. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <cmocka.h>

#include "kernels_f32.h"

static uint32_t rng = 777u;
static float frand(void) {
  rng = rng * 1664525u + 1013904223u;
  return (float)((rng >> 8) * (1.0 / 8388608.0)) - 1.0f;
}
static float *rand_buf(size_t n) {
  float *p = malloc((n ? n : 1) * sizeof *p);
  for (size_t i = 0; i < n; i++) p[i] = frand() * 2.0f;
  return p;
}
static void check(float got, double want, double mag, const char *what, long i, long j) {
  if (!(fabs(got - want) <= 1e-6 * (mag + 1.0))) fail_msg("%s [%ld][%ld]: got %.9g want %.9g", what, i, j, got, want);
}

static const int64_t sizes[] = {1, 3, 7, 17};

static void test_fc(void **state) {
  (void)state;
  for (int im = 0; im < 4; im++)
    for (int in = 0; in < 4; in++)
      for (int ik = 0; ik < 4; ik++)
        for (int variant = 0; variant < 3; variant++) {
          const int64_t M = sizes[im], N = sizes[in], K = sizes[ik];
          float *x = rand_buf(M * K), *wnk = rand_buf(N * K), *b = rand_buf(N), *wkn = rand_buf(K * N);
          float *y = malloc(M * N * sizeof *y);
          for (int64_t n = 0; n < N; n++) /* pack W[N][K] as the kernel wants: [K][N] */
            for (int64_t k = 0; k < K; k++) wkn[k * N + n] = wnk[n * K + k];
          const float lo = variant == 2 ? 0.0f : -INFINITY, hi = variant == 2 ? 1.0f : INFINITY;
          const float *bias = variant == 1 ? NULL : b;
          qllc_k_fc_f32_f32_f32(y, x, wkn, bias, M, N, K, lo, hi);
          for (int64_t m = 0; m < M; m++)
            for (int64_t n = 0; n < N; n++) {
              double s = bias ? bias[n] : 0.0, mag = fabs(s);
              for (int64_t k = 0; k < K; k++) {
                s += (double)x[m * K + k] * wnk[n * K + k];
                mag += fabs((double)x[m * K + k] * wnk[n * K + k]);
              }
              s = s < lo ? lo : s > hi ? hi : s;
              check(y[m * N + n], s, mag, "fc", (long)m, (long)n);
            }
          free(x), free(wnk), free(wkn), free(b), free(y);
        }
}

/* Shapes that use fc.c's 8 x 32 tiles (and the rows and columns left over), checked against the double
 * reference and bit for bit against a float loop in the documented order: bias, then k ascending. */
static void test_fc_tiled(void **state) {
  (void)state;
  const int64_t shapes[][3] = {{8, 32, 1}, {19, 77, 300}, {16, 64, 5}, {1, 1000, 512}, {9, 33, 64}};
  for (int s = 0; s < 5; s++)
    for (int variant = 0; variant < 3; variant++) {
      const int64_t M = shapes[s][0], N = shapes[s][1], K = shapes[s][2];
      float *x = rand_buf(M * K), *w = rand_buf(K * N), *b = rand_buf(N), *y = malloc(M * N * sizeof *y);
      const float lo = variant == 2 ? 0.0f : -INFINITY, hi = variant == 2 ? 1.0f : INFINITY;
      const float *bias = variant == 1 ? NULL : b;
      qllc_k_fc_f32_f32_f32(y, x, w, bias, M, N, K, lo, hi);
      for (int64_t m = 0; m < M; m++)
        for (int64_t n = 0; n < N; n++) {
          double s = bias ? bias[n] : 0.0, mag = fabs(s);
          volatile float f = bias ? bias[n] : 0.0f; /* volatile: one rounding per operation */
          for (int64_t k = 0; k < K; k++) {
            s += (double)x[m * K + k] * w[k * N + n];
            mag += fabs((double)x[m * K + k] * w[k * N + n]);
            volatile float p = x[m * K + k] * w[k * N + n];
            f = f + p;
          }
          s = s < lo ? lo : s > hi ? hi : s;
          check(y[m * N + n], s, mag, "fc tiled", (long)m, (long)n);
          float fe = f;
          fe = fe < lo ? lo : fe > hi ? hi : fe;
          if (fe != y[m * N + n])
            fail_msg("fc tiled [%ld][%ld] (M %ld N %ld K %ld): got %.9g, the float loop gives %.9g", (long)m, (long)n,
                     (long)M, (long)N, (long)K, y[m * N + n], fe);
        }
      free(x), free(w), free(b), free(y);
    }
}

/* C patterns: none, full [M][N], row [N], column [M][1], scalar. */
static void test_gemm(void **state) {
  (void)state;
  for (int im = 0; im < 4; im++)
    for (int in = 0; in < 4; in++)
      for (int ik = 0; ik < 4; ik++)
        for (int tr = 0; tr < 4; tr++)
          for (int cp = 0; cp < 5; cp++) {
            const int64_t M = sizes[im], N = sizes[in], K = sizes[ik], ta = tr & 1, tb = tr >> 1;
            const float alpha = cp == 2 ? 1.0f : 0.75f, beta = cp == 3 ? -2.5f : 1.0f;
            float *a = rand_buf(M * K), *b = rand_buf(K * N), *c = rand_buf(M * N);
            float *y = malloc(M * N * sizeof *y);
            const int64_t csm[5] = {0, N, 0, 1, 0}, csn[5] = {0, 1, 1, 0, 0};
            const float lo = cp == 4 ? -0.5f : -INFINITY, hi = cp == 4 ? 0.5f : INFINITY;
            qllc_k_gemm_f32_f32_f32(y, a, b, cp ? c : NULL, M, N, K, ta, tb, alpha, beta, csm[cp], csn[cp], lo, hi);
            for (int64_t m = 0; m < M; m++)
              for (int64_t n = 0; n < N; n++) {
                double s = 0, mag = 0;
                for (int64_t k = 0; k < K; k++) {
                  const double av = ta ? a[k * M + m] : a[m * K + k];
                  const double bv = tb ? b[n * K + k] : b[k * N + n];
                  s += av * bv;
                  mag += fabs(av * bv);
                }
                s *= alpha;
                mag *= fabs(alpha);
                if (cp) {
                  const double cv = cp == 1 ? c[m * N + n] : cp == 2 ? c[n] : cp == 3 ? c[m] : c[0];
                  s += beta * cv;
                  mag += fabs(beta * cv);
                }
                s = s < lo ? lo : s > hi ? hi : s;
                check(y[m * N + n], s, mag, "gemm", (long)m, (long)n);
              }
            free(a), free(b), free(c), free(y);
          }
}

/* Batched MatMul: a [2][3][M][K] @ b [3][K][N] broadcast over the first batch dim of a (b offsets
 * repeat), and a [1][M][K] @ b [4][K][N] (a offset 0 for every batch). */
static void test_matmul(void **state) {
  (void)state;
  for (int im = 0; im < 4; im++)
    for (int in = 0; in < 4; in++)
      for (int ik = 0; ik < 4; ik++)
        for (int pattern = 0; pattern < 2; pattern++) {
          const int64_t M = sizes[im], N = sizes[in], K = sizes[ik];
          const int64_t batches = pattern == 0 ? 6 : 4, na = pattern == 0 ? 6 : 1, nb = pattern == 0 ? 3 : 4;
          int64_t ao[6], bo[6];
          for (int64_t i = 0; i < batches; i++) {
            ao[i] = pattern == 0 ? i * M * K : 0;
            bo[i] = (pattern == 0 ? i % 3 : i) * K * N;
          }
          float *a = rand_buf(na * M * K), *b = rand_buf(nb * K * N), *y = malloc(batches * M * N * sizeof *y);
          qllc_k_matmul_f32_f32_f32(y, a, b, batches, M, N, K, ao, bo);
          for (int64_t i = 0; i < batches; i++)
            for (int64_t m = 0; m < M; m++)
              for (int64_t n = 0; n < N; n++) {
                double s = 0, mag = 0;
                for (int64_t k = 0; k < K; k++) {
                  const double p = (double)a[ao[i] + m * K + k] * b[bo[i] + k * N + n];
                  s += p;
                  mag += fabs(p);
                }
                check(y[(i * M + m) * N + n], s, mag, "matmul", (long)i, (long)(m * N + n));
              }
          free(a), free(b), free(y);
        }
}

static void test_hand_computed(void **state) {
  (void)state;
  /* [[1,2],[3,4]] @ [[5,6],[7,8]] = [[19,22],[43,50]]; Gemm alpha 2, beta 1, c row {1, -1} */
  const float a[4] = {1, 2, 3, 4}, b[4] = {5, 6, 7, 8}, c[2] = {1, -1};
  float y[4];
  const int64_t off[1] = {0};
  qllc_k_matmul_f32_f32_f32(y, a, b, 1, 2, 2, 2, off, off);
  assert_true(y[0] == 19 && y[1] == 22 && y[2] == 43 && y[3] == 50);
  qllc_k_gemm_f32_f32_f32(y, a, b, c, 2, 2, 2, 0, 0, 2.0f, 1.0f, 0, 1, -INFINITY, INFINITY);
  assert_true(y[0] == 39 && y[1] == 43 && y[2] == 87 && y[3] == 99);
  /* trans_a and trans_b: a^T b^T = (b a)^T: [[23,31],[34,46]] */
  qllc_k_gemm_f32_f32_f32(y, a, b, NULL, 2, 2, 2, 1, 1, 1.0f, 1.0f, 0, 0, -INFINITY, INFINITY);
  assert_true(y[0] == 23 && y[1] == 31 && y[2] == 34 && y[3] == 46);
}

int main(void) {
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_fc), cmocka_unit_test(test_fc_tiled),
    cmocka_unit_test(test_gemm),
    cmocka_unit_test(test_matmul),
    cmocka_unit_test(test_hand_computed),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
