/* tests/libjit/ops_ext_test.c: the kernels of issue 15 (libjit/bitcode/ops_ext.c, q_ops_ext.c), natively
 * compiled, against independent references computed here in double (or with src/quant's own
 * qllc_requant_apply / qllc_quant_table / qllc_lut16_eval, which define the integer contract):
 * (erf, gelu and gelu_tanh are tested in tests/libjit/activation_test.c, over the float range):
 *   - layernorm (float) against a double two-pass reference: 2e-6 relative to max |y|;
 *   - reduce_sum (i8, u8, i16): bit-exact against sum (x - z_x) then qllc_requant_apply, clamped;
 *   - reduce_max: exact;
 *   - lut_channel: bit-exact against qllc_quant_table's per-channel LeakyRelu tables (i8) and
 *     qllc_lut16_eval (i16);
 *   - resize_linear (i8, i16): bit-exact against the Q14 weighted sum in double, rounded half up;
 *   - layernorm (i8, i16) against the real-valued formula in double: within 1 step everywhere and equal
 *     for at least 95% of the elements (the kernel normalises in float).
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "kernels_f32.h"
#include "kernels_q.h"
#include "quant/quant.h"

static uint32_t rng = 12345;
static int32_t rnd(int32_t lo, int32_t hi) { /* [lo, hi] */
  rng = rng * 1664525u + 1013904223u;
  return lo + (int32_t)((rng >> 8) % (uint32_t)(hi - lo + 1));
}

static void test_layernorm_f32(void **state) {
  (void)state;
  enum { O = 5, L = 48 };
  float x[O * L], y[O * L], g[L], b[L];
  for (int i = 0; i < O * L; i++) x[i] = (float)rnd(-1000, 1000) / 300.0f + (i / L);
  for (int i = 0; i < L; i++) g[i] = 1.0f + (float)rnd(-100, 100) / 400.0f, b[i] = (float)rnd(-100, 100) / 200.0f;
  qllc_k_layernorm_f32_f32(y, x, g, b, O, L, 1e-5f);
  double worst = 0, big = 0;
  for (int o = 0; o < O; o++) {
    double m = 0, v = 0;
    for (int i = 0; i < L; i++) m += x[o * L + i];
    m /= L;
    for (int i = 0; i < L; i++) v += (x[o * L + i] - m) * (x[o * L + i] - m);
    v /= L;
    for (int i = 0; i < L; i++) {
      double r = (x[o * L + i] - m) / sqrt(v + 1e-5) * g[i] + b[i];
      worst = fmax(worst, fabs(r - y[o * L + i]));
      big = fmax(big, fabs(r));
    }
  }
  assert_true(worst <= 2e-6 * big);
}

#define REDUCE_CASE(T, t, LO, HI)                                                                     \
  do {                                                                                                \
    enum { O = 3, L = 37, I = 5 };                                                                    \
    T x[O * L * I], y[O * I], mx[O * I];                                                              \
    for (int i = 0; i < O * L * I; i++) x[i] = (T)rnd(LO, HI);                                         \
    int32_t zx = rnd(LO / 4, HI / 4), zy = rnd(LO / 4, HI / 4);                                        \
    qllc_requant r;                                                                                   \
    assert_int_equal(qllc_requant_make(0.8 / L, &r, NULL), QLLC_OK);                                  \
    qllc_k_reduce_sum_##t##_##t(y, x, O, L, I, zx, r.m, r.n, zy, LO, HI);                               \
    qllc_k_reduce_max_##t##_##t(mx, x, O, L, I);                                                       \
    for (int o = 0; o < O; o++)                                                                       \
      for (int i = 0; i < I; i++) {                                                                   \
        int64_t s = 0;                                                                                \
        int32_t m = x[o * L * I + i];                                                                 \
        for (int a = 0; a < L; a++) {                                                                 \
          s += (int32_t)x[(o * L + a) * I + i] - zx;                                                  \
          if (x[(o * L + a) * I + i] > m) m = x[(o * L + a) * I + i];                                 \
        }                                                                                             \
        int64_t q = (int64_t)qllc_requant_apply(s, r.m, r.n) + zy;                                    \
        q = q < LO ? LO : q > HI ? HI : q;                                                            \
        assert_int_equal(y[o * I + i], q);                                                            \
        assert_int_equal(mx[o * I + i], m);                                                           \
      }                                                                                               \
  } while (0)

static void test_reduce_q(void **state) {
  (void)state;
  REDUCE_CASE(int8_t, i8, -128, 127);
  REDUCE_CASE(uint8_t, u8, 0, 255);
  REDUCE_CASE(int16_t, i16, -32768, 32767);
}

static void test_lut_channel(void **state) {
  (void)state;
  enum { N = 2, C = 3, I = 40 };
  const float slopes[C] = {0.25f, -0.5f, 0.0f};
  qllc_qparams in = {.elem = QLLC_ELEM_I8, .scale = 0.05f, .zero_point = -7};
  qllc_qparams out = {.elem = QLLC_ELEM_I8, .scale = 0.04f, .zero_point = 3};
  int8_t t8[C * 256], x8[N * C * I], y8[N * C * I];
  int32_t len;
  for (int c = 0; c < C; c++)
    assert_int_equal(qllc_quant_table(QLLC_QF_LEAKY_RELU, slopes[c], &in, &out, t8 + c * 256, &len, NULL), QLLC_OK);
  for (int i = 0; i < N * C * I; i++) x8[i] = (int8_t)rnd(-128, 127);
  qllc_k_lut_channel_i8_i8(y8, x8, t8, N, C, I);
  for (int i = 0; i < N * C * I; i++) {
    int c = (i / I) % C;
    double r = (double)in.scale * (double)(x8[i] - in.zero_point);
    r = r >= 0 ? r : (double)slopes[c] * r;
    double q = qllc_round_half_even(r / (double)out.scale) + out.zero_point;
    q = q < -128 ? -128 : q > 127 ? 127 : q;
    assert_int_equal(y8[i], (int)q);
  }
  qllc_qparams in16 = {.elem = QLLC_ELEM_I16, .scale = 1e-3f, .zero_point = 0};
  qllc_qparams out16 = {.elem = QLLC_ELEM_I16, .scale = 8e-4f, .zero_point = 0};
  int16_t t16[C * 513], x16[N * C * I], y16[N * C * I];
  for (int c = 0; c < C; c++)
    assert_int_equal(qllc_quant_table(QLLC_QF_LEAKY_RELU, slopes[c], &in16, &out16, t16 + c * 513, &len, NULL), QLLC_OK);
  for (int i = 0; i < N * C * I; i++) x16[i] = (int16_t)rnd(-32768, 32767);
  qllc_k_lut_channel_i16_i16(y16, x16, t16, N, C, I);
  for (int i = 0; i < N * C * I; i++) assert_int_equal(y16[i], qllc_lut16_eval(t16 + ((i / I) % C) * 513, x16[i]));
}

#define RESIZE_CASE(T, t, LO, HI)                                                                     \
  do {                                                                                                \
    enum { NC = 2, H = 3, W = 4, OH = 7, OW = 9 };                                                    \
    T x[NC * H * W], y[NC * OH * OW];                                                                 \
    int64_t iy[2 * OH], ix[2 * OW];                                                                   \
    int32_t wy[OH], wx[OW];                                                                           \
    for (int i = 0; i < NC * H * W; i++) x[i] = (T)rnd(LO, HI);                                        \
    for (int o = 0; o < OH; o++) iy[2 * o] = rnd(0, H - 1), iy[2 * o + 1] = rnd(0, H - 1), wy[o] = rnd(0, 16384); \
    for (int o = 0; o < OW; o++) ix[2 * o] = rnd(0, W - 1), ix[2 * o + 1] = rnd(0, W - 1), wx[o] = rnd(0, 16384); \
    qllc_k_resize_linear_##t##_##t(y, x, NC, H, W, OH, OW, iy, ix, wy, wx);                            \
    for (int p = 0; p < NC; p++)                                                                      \
      for (int a = 0; a < OH; a++)                                                                    \
        for (int b = 0; b < OW; b++) {                                                                \
          const T *X = x + p * H * W;                                                                 \
          double fy = wy[a] / 16384.0, fx = wx[b] / 16384.0;                                           \
          double v = (1 - fy) * ((1 - fx) * X[iy[2 * a] * W + ix[2 * b]] + fx * X[iy[2 * a] * W + ix[2 * b + 1]]) + \
                     fy * ((1 - fx) * X[iy[2 * a + 1] * W + ix[2 * b]] + fx * X[iy[2 * a + 1] * W + ix[2 * b + 1]]); \
          assert_int_equal(y[(p * OH + a) * OW + b], (int64_t)floor(v + 0.5));                         \
        }                                                                                             \
  } while (0)

static void test_resize_q(void **state) {
  (void)state;
  RESIZE_CASE(int8_t, i8, -128, 127);
  RESIZE_CASE(int16_t, i16, -32768, 32767);
}

#define LN_CASE(T, t, LO, HI, SX, SY)                                                                 \
  do {                                                                                                \
    enum { O = 6, L = 64 };                                                                           \
    T x[O * L], y[O * L];                                                                             \
    float g[L], b[L], gam[L], bet[L];                                                                 \
    double sx = SX, sy = SY, eps = 1e-5;                                                              \
    int32_t zx = (LO) < 0 ? 0 : 128, zy = (LO) < 0 ? 0 : 120;                                          \
    for (int i = 0; i < O * L; i++) x[i] = (T)rnd(LO / 2, HI / 2);                                     \
    for (int i = 0; i < L; i++) {                                                                     \
      gam[i] = 1.0f + (float)rnd(-100, 100) / 300.0f, bet[i] = (float)rnd(-100, 100) / 300.0f;          \
      g[i] = (float)(gam[i] / sy), b[i] = (float)(bet[i] / sy + zy);                                   \
    }                                                                                                 \
    qllc_k_layernorm_##t##_##t(y, x, g, b, O, L, (float)(eps / (sx * sx)), LO, HI);                    \
    int exact = 0;                                                                                    \
    for (int o = 0; o < O; o++) {                                                                     \
      double m = 0, v = 0;                                                                            \
      for (int i = 0; i < L; i++) m += sx * (x[o * L + i] - zx);                                       \
      m /= L;                                                                                         \
      for (int i = 0; i < L; i++) v += (sx * (x[o * L + i] - zx) - m) * (sx * (x[o * L + i] - zx) - m); \
      v /= L;                                                                                         \
      for (int i = 0; i < L; i++) {                                                                   \
        double r = (sx * (x[o * L + i] - zx) - m) / sqrt(v + eps) * gam[i] + bet[i];                   \
        double q = qllc_round_half_even(r / sy) + zy;                                                 \
        q = q < LO ? LO : q > HI ? HI : q;                                                            \
        assert_true(fabs(q - y[o * L + i]) <= 1.0);                                                   \
        exact += q == y[o * L + i];                                                                   \
      }                                                                                               \
    }                                                                                                 \
    assert_true(exact >= 0.95 * O * L);                                                               \
  } while (0)

static void test_layernorm_q(void **state) {
  (void)state;
  LN_CASE(int8_t, i8, -128, 127, 0.05, 0.03);
  LN_CASE(uint8_t, u8, 0, 255, 0.05, 0.03);
  LN_CASE(int16_t, i16, -32768, 32767, 2e-4, 1.5e-4);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_layernorm_f32), cmocka_unit_test(test_reduce_q),
      cmocka_unit_test(test_lut_channel),    cmocka_unit_test(test_resize_q),      cmocka_unit_test(test_layernorm_q),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
