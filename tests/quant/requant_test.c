/* tests/quant/requant_test.c: M = m * 2^-n, the reference rounding (checked against an independent
 * 128-bit computation made of 32-bit limbs, without __int128), the overflow bound, and the fused bias
 * with its saturation report. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "quant/quant.h"

static qllc_requant make(double M) {
  qllc_requant r;
  qllc_diag d;
  memset(&d, 0, sizeof d);
  assert_int_equal(qllc_requant_make(M, &r, &d), QLLC_OK);
  return r;
}

static void test_make(void **state) {
  qllc_requant r = make(0.5); /* 0.5 = 2^30 * 2^-31 */
  assert_int_equal(r.m, 1 << 30), assert_int_equal(r.n, 31), assert_int_equal(r.denormal, 0);
  r = make(1.0); /* 2^30 * 2^-30 */
  assert_int_equal(r.m, 1 << 30), assert_int_equal(r.n, 30);
  r = make(0.75); /* 0.75 * 2^31 = 1610612736 */
  assert_int_equal(r.m, 1610612736), assert_int_equal(r.n, 31);
  r = make(3.0); /* 0.75 * 2^2 */
  assert_int_equal(r.m, 1610612736), assert_int_equal(r.n, 29);
  r = make(1.0 - ldexp(1, -40)); /* m rounds to 2^31: becomes 2^30 with n - 1 */
  assert_int_equal(r.m, 1 << 30), assert_int_equal(r.n, 30);
  r = make(2147483647.0); /* largest accepted: n = 0 */
  assert_int_equal(r.m, 2147483647), assert_int_equal(r.n, 0);
  /* 0.1: f = 0.8, e = -3: m = round(0.8 * 2^31) = 1717986918 (0.8 * 2^31 = 1717986918.4), n = 34 */
  r = make(0.1);
  assert_int_equal(r.m, 1717986918), assert_int_equal(r.n, 34);
  /* tiny: 2^-40 -> n would be 70: m = 2^22, n = 62 */
  r = make(ldexp(1, -40));
  assert_int_equal(r.m, 1 << 22), assert_int_equal(r.n, 62), assert_int_equal(r.denormal, 1);
  r = make(ldexp(1, -100)); /* effectively zero */
  assert_int_equal(r.m, 0), assert_int_equal(r.n, 62), assert_int_equal(r.denormal, 1);
  r = make(ldexp(1, -32)); /* exactly at the edge: m = 2^30, n = 62 */
  assert_int_equal(r.m, 1 << 30), assert_int_equal(r.n, 62), assert_int_equal(r.denormal, 0);
  /* m always in [2^30, 2^31) and close to M */
  for (int i = 0; i < 10000; i++) {
    double M = exp(-20.0 + 25.0 * i / 10000.0);
    r = make(M);
    assert_true(r.m >= (1 << 30));
    assert_true(fabs(ldexp(r.m, -r.n) / M - 1.0) <= ldexp(1, -30));
  }
}

static void test_make_invalid(void **state) {
  qllc_requant r;
  qllc_diag d;
  memset(&d, 0, sizeof d);
  assert_int_equal(qllc_requant_make(0.0, &r, &d), QLLC_ERR_INVALID);
  assert_int_equal(qllc_requant_make(-1.0, &r, &d), QLLC_ERR_INVALID);
  assert_int_equal(qllc_requant_make(NAN, &r, &d), QLLC_ERR_INVALID);
  assert_int_equal(qllc_requant_make(INFINITY, &r, &d), QLLC_ERR_INVALID);
  assert_int_equal(qllc_requant_make(2147483648.0, &r, &d), QLLC_ERR_INVALID);
  assert_non_null(strstr(d.message, "too large"));
}

static void test_make_shared(void **state) {
  double M[3] = {0.5, 0.25, 0.1};
  int32_t m[3], n;
  qllc_diag d;
  memset(&d, 0, sizeof d);
  assert_int_equal(qllc_requant_make_shared(M, 3, m, &n, &d), QLLC_OK);
  assert_int_equal(n, 31);
  assert_int_equal(m[0], 1 << 30);
  assert_int_equal(m[1], 1 << 29);
  assert_int_equal(m[2], 214748365); /* 0.1 * 2^31 = 214748364.8 */
  double bad[2] = {0.5, 0};
  assert_int_equal(qllc_requant_make_shared(bad, 2, m, &n, &d), QLLC_ERR_INVALID);
}

static void test_apply_hand(void **state) {
  int32_t h = 1 << 30; /* with n = 31: M = 0.5 */
  assert_int_equal(qllc_requant_apply(5, h, 31), 3);   /* 2.5 -> 3 (half up) */
  assert_int_equal(qllc_requant_apply(-5, h, 31), -2); /* -2.5 -> -2 (half up, not away from zero) */
  assert_int_equal(qllc_requant_apply(-6, h, 31), -3);
  assert_int_equal(qllc_requant_apply(-7, h, 31), -3); /* -3.5 -> -3 */
  assert_int_equal(qllc_requant_apply(7, 1610612736, 31), 5);   /* 5.25 */
  assert_int_equal(qllc_requant_apply(-7, 1610612736, 31), -5); /* -5.25 */
  assert_int_equal(qllc_requant_apply(3, 5, 0), 15);
  assert_int_equal(qllc_requant_apply(0, 2147483647, 62), 0);
  /* saturation */
  assert_int_equal(qllc_requant_apply(INT64_MAX, 2147483647, 1), INT32_MAX);
  assert_int_equal(qllc_requant_apply(INT64_MIN, 2147483647, 1), INT32_MIN);
  assert_int_equal(qllc_requant_apply((int64_t)1 << 40, 1 << 30, 30), INT32_MAX);
  /* at the overflow bound of the int64 accumulator: (2^63 - 1) * 2^30 / 2^62 = 2^31 - 2^-32 -> 2^31,
     saturates; -2^63 * 2^30 / 2^62 = -2^31 exactly */
  assert_int_equal(qllc_requant_apply(INT64_MAX, 1 << 30, 62), INT32_MAX);
  assert_int_equal(qllc_requant_apply(INT64_MIN, 1 << 30, 62), INT32_MIN);
  /* -2^62 * (2^31 - 1) / 2^62 = -(2^31 - 1) exactly; the largest products representable */
  assert_int_equal(qllc_requant_apply(-((int64_t)1 << 62), 2147483647, 62), -2147483647);
  /* (2^62 - 1) * (2^31 - 1) / 2^62 = 2^31 - 1 - 4.7e-10: rounds to 2^31 - 1, no saturation */
  assert_int_equal(qllc_requant_apply(((int64_t)1 << 62) - 1, 2147483647, 62), 2147483647);
  /* (2^63 - 1) * (2^31 - 1) / 2^62 = 2 * (2^31 - 1) - small: saturates */
  assert_int_equal(qllc_requant_apply(INT64_MAX, 2147483647, 62), INT32_MAX);
}

/* Independent reference: the signed 128-bit product acc * m from 32-bit limbs in uint64, plus
   2^(n-1), arithmetic shift right by n, saturate. No __int128. */
typedef struct { uint64_t hi, lo; } u128;
static u128 mul_u64_u32(uint64_t a, uint32_t b) {
  uint64_t lo = (a & 0xffffffffu) * b, hi = (a >> 32) * b;
  u128 r;
  r.lo = lo + (hi << 32);
  r.hi = (hi >> 32) + (r.lo < lo);
  return r;
}
static int32_t ref_apply(int64_t acc, int32_t m, int32_t n) {
  int neg = acc < 0;
  uint64_t a = neg ? (uint64_t)0 - (uint64_t)acc : (uint64_t)acc;
  u128 p = mul_u64_u32(a, (uint32_t)m);
  if (neg) { /* two's complement negate */
    p.lo = ~p.lo + 1;
    p.hi = ~p.hi + (p.lo == 0);
  }
  if (n > 0) {
    uint64_t add = (uint64_t)1 << (n - 1);
    uint64_t lo = p.lo + add;
    p.hi += lo < p.lo;
    p.lo = lo;
    /* arithmetic shift of (hi, lo) by n in [1, 62] */
    p.lo = (p.lo >> n) | (p.hi << (64 - n));
    p.hi = (uint64_t)((int64_t)p.hi >> n);
  }
  int64_t hi = (int64_t)p.hi;
  if (hi > 0 || (hi == 0 && p.lo > (uint64_t)INT32_MAX)) return INT32_MAX;
  if (hi < -1 || (hi == -1 && p.lo < (uint64_t)INT32_MIN)) return INT32_MIN;
  return (int32_t)(int64_t)p.lo;
}

static uint64_t rng = 0x9e3779b97f4a7c15ULL;
static uint64_t next(void) {
  rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
  return rng;
}

static void test_apply_random(void **state) {
  for (int i = 0; i < 2000000; i++) {
    uint64_t r = next();
    int64_t acc;
    switch (i % 4) {
    case 0: acc = (int64_t)next(); break;                      /* any int64 */
    case 1: acc = (int32_t)next(); break;                      /* int32 accumulator */
    case 2: acc = (int64_t)next() >> (next() % 63); break;     /* every magnitude */
    default: acc = (i & 8) ? INT64_MAX - (int64_t)(r % 5) : INT64_MIN + (int64_t)(r % 5); break; /* the bound */
    }
    int32_t m = (int32_t)((1u << 30) + (uint32_t)(next() % (1u << 30)));
    if (i % 7 == 0) m = (int32_t)(next() % (1u << 30)); /* denormal multipliers */
    int32_t n = (int32_t)(next() % 63);
    int32_t got = qllc_requant_apply(acc, m, n), want = ref_apply(acc, m, n);
    if (got != want) fail_msg("acc=%lld m=%d n=%d: got %d want %d", (long long)acc, m, n, got, want);
    /* int8 kernels may use plain int64 arithmetic for int32 accumulators: same bits */
    if (i % 4 == 1 && n > 0) {
      int64_t v = ((int64_t)acc * m + ((int64_t)1 << (n - 1))) >> n;
      int32_t k = v > INT32_MAX ? INT32_MAX : v < INT32_MIN ? INT32_MIN : (int32_t)v;
      assert_int_equal(k, got);
    }
  }
}

/* The real result: round(acc * M) is within 1 of qllc_requant_apply(acc, make(M)) over int16 ranges. */
static void test_apply_vs_real(void **state) {
  for (int i = 0; i < 200000; i++) {
    double M = exp(-12.0 + 12.0 * (double)(next() % 100000) / 100000.0);
    qllc_requant r = make(M);
    int64_t acc = (int64_t)(next() % (1ULL << 40)) - ((int64_t)1 << 39);
    double real = (double)acc * M;
    if (fabs(real) > 2e9) continue;
    int32_t got = qllc_requant_apply(acc, r.m, r.n);
    assert_true(fabs((double)got - real) <= 0.5 + fabs(real) * ldexp(1, -30) + 1e-9);
  }
}

static void test_bias_hand(void **state) {
  /* s_x = 0.5, s_w = {0.25, 0.125}: s_b = {0.125, 0.0625}; b = {1.0, -0.3}:
     q_b = {8, round(-4.8) = -5}; z_x = 3, w = [[1, 2], [-3, 4]]: sums {3, 1};
     folded = {8 - 9, -5 - 3} = {-1, -8} */
  float b[2] = {1.0f, -0.3f}, sw[2] = {0.25f, 0.125f};
  int8_t w[4] = {1, 2, -3, 4};
  int32_t bias[2], qb[2];
  int64_t bias64[2];
  qllc_bias_report rep;
  qllc_diag d;
  memset(&d, 0, sizeof d);
  assert_int_equal(qllc_quantize_bias(b, 2, 2, 0.5f, sw, 2, 3, w, QLLC_ELEM_I8, QLLC_ELEM_I32, bias, qb, &rep, &d),
                   QLLC_OK);
  assert_int_equal(qb[0], 8), assert_int_equal(qb[1], -5);
  assert_int_equal(bias[0], -1), assert_int_equal(bias[1], -8);
  assert_int_equal(rep.n_clipped, 0), assert_int_equal(rep.worst_channel, -1);
  /* no bias: only the folded term; per-tensor weight scale */
  assert_int_equal(qllc_quantize_bias(NULL, 2, 2, 0.5f, sw, 1, 3, w, QLLC_ELEM_I8, QLLC_ELEM_I64, bias64, qb, &rep, &d),
                   QLLC_OK);
  assert_true(bias64[0] == -9 && bias64[1] == -3);
  /* half even: 0.1875 / 0.125 = 1.5 -> 2; 0.0625 / 0.125 = 0.5 -> 0 (s_w per tensor = 0.25) */
  float b2[2] = {0.1875f, 0.0625f};
  assert_int_equal(qllc_quantize_bias(b2, 2, 2, 0.5f, sw, 1, 0, w, QLLC_ELEM_I8, QLLC_ELEM_I32, bias, qb, &rep, &d),
                   QLLC_OK);
  assert_int_equal(qb[0], 2), assert_int_equal(qb[1], 0);
  /* int16 weights, int64 fold: z_x = -30000, w = [32767, 32767, 32767]: fold = +30000 * 98301 */
  int16_t w16[3] = {32767, 32767, 32767};
  float b1 = 0, s1 = 1;
  assert_int_equal(
      qllc_quantize_bias(&b1, 1, 3, 1.0f, &s1, 1, -30000, w16, QLLC_ELEM_I16, QLLC_ELEM_I64, bias64, qb, &rep, &d),
      QLLC_OK);
  assert_true(bias64[0] == (int64_t)30000 * 98301);
  assert_int_equal(rep.n_clipped, 0);
  /* the same through a 32-bit accumulator: 2949030000 > 2^31 - 1 -> clipped and reported */
  assert_int_equal(
      qllc_quantize_bias(&b1, 1, 3, 1.0f, &s1, 1, -30000, w16, QLLC_ELEM_I16, QLLC_ELEM_I32, bias, qb, &rep, &d),
      QLLC_OK);
  assert_int_equal(bias[0], INT32_MAX);
  assert_int_equal(rep.n_clipped, 1);
  assert_true(rep.worst_value == 2949030000.0);
}

static void test_bias_saturation(void **state) {
  /* s_x = 1e-3, s_w = 1e-6: 1e4 / 1e-9 = 1e13 -> clipped; -5e3 -> -5e12 clipped; 1e-3 -> 1e6 fine */
  float b[3] = {1e4f, -5e3f, 1e-3f}, sw[3] = {1e-6f, 1e-6f, 1e-6f};
  int8_t w[3] = {0, 0, 0};
  int32_t bias[3], qb[3];
  qllc_bias_report rep;
  qllc_diag d;
  memset(&d, 0, sizeof d);
  assert_int_equal(qllc_quantize_bias(b, 3, 1, 1e-3f, sw, 3, 0, w, QLLC_ELEM_I8, QLLC_ELEM_I32, bias, qb, &rep, &d),
                   QLLC_OK);
  assert_int_equal(rep.n_clipped, 2);
  assert_int_equal(rep.worst_channel, 0);
  assert_true(fabs(rep.worst_value - 1e13) < 1e7);
  assert_true(rep.worst_real == 1e4f);
  assert_int_equal(qb[0], INT32_MAX), assert_int_equal(qb[1], INT32_MIN);
  assert_true(fabs(qb[2] - 1e6) <= 1);
  /* the way out: a weight scale floor that makes the bias fit */
  float sw2[3];
  for (int c = 0; c < 3; c++) sw2[c] = fmaxf(sw[c], qllc_bias_min_weight_scale(b[c], 1e-3f));
  assert_true(sw2[0] > 4.6e-3f && sw2[0] < 4.7e-3f); /* 1e4 / (1e-3 * 2^31) = 4.66e-3 */
  assert_int_equal(qllc_quantize_bias(b, 3, 1, 1e-3f, sw2, 3, 0, w, QLLC_ELEM_I8, QLLC_ELEM_I32, bias, qb, &rep, &d),
                   QLLC_OK);
  assert_int_equal(rep.n_clipped, 0);
  assert_true(qb[0] > 2147000000);
  /* the real bias is still represented within half a step */
  assert_true(fabs((double)qb[0] * 1e-3 * (double)sw2[0] - 1e4) <= 0.5 * 1e-3 * (double)sw2[0] * 1.0001 + 1e-3);
  /* invalid input */
  assert_int_equal(qllc_quantize_bias(b, 3, 1, 0.0f, sw, 3, 0, w, QLLC_ELEM_I8, QLLC_ELEM_I32, bias, qb, &rep, &d),
                   QLLC_ERR_INVALID);
  assert_int_equal(qllc_quantize_bias(b, 3, 1, 1.0f, sw, 2, 0, w, QLLC_ELEM_I8, QLLC_ELEM_I32, bias, qb, &rep, &d),
                   QLLC_ERR_INVALID);
}

/* The point of the fused bias: an FC whose bias is large next to W x. acc = q_b + sum q_x q_w with one
   final rounding stays within 1 LSB of the float result requantized with the same scales. */
static void test_fused_fc_within_one_lsb(void **state) {
  enum { K = 64, N = 16 };
  float x[K], w[N * K], b[N];
  for (int k = 0; k < K; k++) x[k] = (float)((int64_t)(next() % 2001) - 1000) / 1000.0f;
  for (int i = 0; i < N * K; i++) w[i] = (float)((int64_t)(next() % 2001) - 1000) / 20000.0f;
  for (int c = 0; c < N; c++) b[c] = (float)((int64_t)(next() % 2001) - 1000) / 50.0f; /* |b| up to 20 */
  qllc_diag d;
  memset(&d, 0, sizeof d);
  qllc_qparams px, py;
  assert_int_equal(qllc_quant_choose(-1, 1, QLLC_SCHEMA_ASYMMETRIC, QLLC_ELEM_I8, QLLC_QROLE_ACT, &px, &d), QLLC_OK);
  assert_int_equal(qllc_quant_choose(-25, 25, QLLC_SCHEMA_ASYMMETRIC, QLLC_ELEM_I8, QLLC_QROLE_ACT, &py, &d), QLLC_OK);
  int8_t qx[K], qw[N * K];
  float sw[N];
  assert_int_equal(qllc_quantize_tensor(x, K, px.scale, px.zero_point, QLLC_ELEM_I8, qx, &d), QLLC_OK);
  assert_int_equal(qllc_quantize_weights(w, N, K, QLLC_ELEM_I8, 0, 0, NULL, sw, qw, &d), QLLC_OK);
  int32_t bias[N];
  qllc_bias_report rep;
  assert_int_equal(qllc_quantize_bias(b, N, K, px.scale, sw, N, px.zero_point, qw, QLLC_ELEM_I8, QLLC_ELEM_I32, bias,
                                      NULL, &rep, &d),
                   QLLC_OK);
  for (int c = 0; c < N; c++) {
    qllc_requant r = make((double)px.scale * sw[c] / py.scale);
    int32_t acc = bias[c];
    for (int k = 0; k < K; k++) acc += qx[k] * qw[c * K + k];
    int32_t y = qllc_requant_apply(acc, r.m, r.n) + py.zero_point;
    /* the float result on the dequantized inputs, requantized with the same output scale */
    double real = b[c];
    for (int k = 0; k < K; k++) real += (double)px.scale * (qx[k] - px.zero_point) * (double)sw[c] * qw[c * K + k];
    double yr = real / py.scale + py.zero_point;
    assert_true(fabs((double)y - yr) <= 1.0);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_make),          cmocka_unit_test(test_make_invalid),
      cmocka_unit_test(test_make_shared),   cmocka_unit_test(test_apply_hand),
      cmocka_unit_test(test_apply_random),  cmocka_unit_test(test_apply_vs_real),
      cmocka_unit_test(test_bias_hand),     cmocka_unit_test(test_bias_saturation),
      cmocka_unit_test(test_fused_fc_within_one_lsb),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
