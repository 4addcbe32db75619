/* tests/quant/params_test.c: scale / zero point choice per schema and precision, tensor and weight
 * quantization. Every expected value is worked out by hand in the comment beside it. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "quant/quant.h"

static qllc_qparams choose(float lo, float hi, qllc_schema s, qllc_elem e, qllc_qrole role) {
  qllc_qparams p;
  qllc_diag d;
  memset(&d, 0, sizeof d);
  qllc_status st = qllc_quant_choose(lo, hi, s, e, role, &p, &d);
  assert_int_equal(st, QLLC_OK);
  return p;
}

#define ASSERT_SCALE(p, expect) assert_true((p).scale == (float)(expect))

static void test_ranges(void **state) {
  int32_t lo, hi;
  assert_int_equal(qllc_quant_range(QLLC_ELEM_I8, 0, &lo, &hi), 0);
  assert_int_equal(lo, -128), assert_int_equal(hi, 127);
  qllc_quant_range(QLLC_ELEM_I8, 1, &lo, &hi);
  assert_int_equal(lo, -127), assert_int_equal(hi, 127);
  qllc_quant_range(QLLC_ELEM_U8, 1, &lo, &hi);
  assert_int_equal(lo, 0), assert_int_equal(hi, 255);
  qllc_quant_range(QLLC_ELEM_I16, 0, &lo, &hi);
  assert_int_equal(lo, -32768), assert_int_equal(hi, 32767);
  qllc_quant_range(QLLC_ELEM_I16, 1, &lo, &hi);
  assert_int_equal(lo, -32767), assert_int_equal(hi, 32767);
  assert_int_equal(qllc_quant_range(QLLC_ELEM_F32, 0, &lo, &hi), -1);
}

static void test_round_half_even(void **state) {
  assert_true(qllc_round_half_even(2.5) == 2.0);
  assert_true(qllc_round_half_even(3.5) == 4.0);
  assert_true(qllc_round_half_even(-2.5) == -2.0);
  assert_true(qllc_round_half_even(-3.5) == -4.0);
  assert_true(qllc_round_half_even(2.4999) == 2.0);
  assert_true(qllc_round_half_even(-0.5) == 0.0);
  assert_true(qllc_round_half_even(0.5000001) == 1.0);
  assert_true(qllc_round_half_even(4503599627370497.0) == 4503599627370497.0); /* 2^52 + 1 */
}

static void test_asymmetric(void **state) {
  /* int8 [-1, 3]: s = 4/255; z = round(-128 + 63.75) = round(-64.25) = -64 */
  qllc_qparams p = choose(-1, 3, QLLC_SCHEMA_ASYMMETRIC, QLLC_ELEM_I8, QLLC_QROLE_ACT);
  ASSERT_SCALE(p, 4.0 / 255.0);
  assert_int_equal(p.zero_point, -64);
  assert_int_equal(p.elem, QLLC_ELEM_I8);
  /* uint8 [-1, 3]: z = round(0 + 63.75) = 64 */
  p = choose(-1, 3, QLLC_SCHEMA_ASYMMETRIC, QLLC_ELEM_U8, QLLC_QROLE_ACT);
  ASSERT_SCALE(p, 4.0 / 255.0);
  assert_int_equal(p.zero_point, 64);
  /* int16 [-1, 3]: s = 4/65535, z = round(-32768 + 16383.75) = -16384 */
  p = choose(-1, 3, QLLC_SCHEMA_ASYMMETRIC, QLLC_ELEM_I16, QLLC_QROLE_ACT);
  ASSERT_SCALE(p, 4.0 / 65535.0);
  assert_int_equal(p.zero_point, -16384);
  /* [0.5, 2] widens to [0, 2]: s = 2/255, z = qmin */
  p = choose(0.5f, 2, QLLC_SCHEMA_ASYMMETRIC, QLLC_ELEM_I8, QLLC_QROLE_ACT);
  ASSERT_SCALE(p, 2.0 / 255.0);
  assert_int_equal(p.zero_point, -128);
  /* [-2, -1] widens to [-2, 0]: z = -128 + 255 = 127 */
  p = choose(-2, -1, QLLC_SCHEMA_ASYMMETRIC, QLLC_ELEM_I8, QLLC_QROLE_ACT);
  ASSERT_SCALE(p, 2.0 / 255.0);
  assert_int_equal(p.zero_point, 127);
  /* half-even zero point: [-2.25, 125.25] -> s = 127.5/255 = 0.5 exactly, -lo/s = 4.5:
     uint8 z = round(4.5) = 4 (half away from zero would give 5); int8 z = round(-123.5) = -124 */
  p = choose(-2.25f, 125.25f, QLLC_SCHEMA_ASYMMETRIC, QLLC_ELEM_U8, QLLC_QROLE_ACT);
  assert_true(p.scale == 0.5f);
  assert_int_equal(p.zero_point, 4);
  p = choose(-2.25f, 125.25f, QLLC_SCHEMA_ASYMMETRIC, QLLC_ELEM_I8, QLLC_QROLE_ACT);
  assert_int_equal(p.zero_point, -124);
}

static void test_symmetric(void **state) {
  /* int8 [-1, 3]: s = 3/127, z = 0 */
  qllc_qparams p = choose(-1, 3, QLLC_SCHEMA_SYMMETRIC, QLLC_ELEM_I8, QLLC_QROLE_ACT);
  ASSERT_SCALE(p, 3.0 / 127.0);
  assert_int_equal(p.zero_point, 0);
  /* int16 [-5, 3]: s = 5/32767 */
  p = choose(-5, 3, QLLC_SCHEMA_SYMMETRIC, QLLC_ELEM_I16, QLLC_QROLE_ACT);
  ASSERT_SCALE(p, 5.0 / 32767.0);
  assert_int_equal(p.zero_point, 0);
  /* uint8 symmetric [0, 2]: s = 2/255, z = 0; a negative range is refused */
  p = choose(0, 2, QLLC_SCHEMA_SYMMETRIC, QLLC_ELEM_U8, QLLC_QROLE_ACT);
  ASSERT_SCALE(p, 2.0 / 255.0);
  qllc_diag d;
  memset(&d, 0, sizeof d);
  assert_int_equal(qllc_quant_choose(-1, 2, QLLC_SCHEMA_SYMMETRIC, QLLC_ELEM_U8, QLLC_QROLE_ACT, &p, &d),
                   QLLC_ERR_INVALID);
}

static void test_symmetric_uint8(void **state) {
  /* non-negative: uint8, s = 2/255, z = 0 */
  qllc_qparams p = choose(0.5f, 2, QLLC_SCHEMA_SYMMETRIC_UINT8, QLLC_ELEM_I8, QLLC_QROLE_ACT);
  assert_int_equal(p.elem, QLLC_ELEM_U8);
  ASSERT_SCALE(p, 2.0 / 255.0);
  assert_int_equal(p.zero_point, 0);
  /* signed: int8 symmetric, s = 2/127 */
  p = choose(-1, 2, QLLC_SCHEMA_SYMMETRIC_UINT8, QLLC_ELEM_I8, QLLC_QROLE_ACT);
  assert_int_equal(p.elem, QLLC_ELEM_I8);
  ASSERT_SCALE(p, 2.0 / 127.0);
  assert_int_equal(p.zero_point, 0);
  /* int16: no uint16, plain symmetric int16 */
  p = choose(0, 2, QLLC_SCHEMA_SYMMETRIC_UINT8, QLLC_ELEM_I16, QLLC_QROLE_ACT);
  assert_int_equal(p.elem, QLLC_ELEM_I16);
  ASSERT_SCALE(p, 2.0 / 32767.0);
}

static void test_power2(void **state) {
  /* [-1, 3]: 3/127 = 0.0236 -> up to 2^-5 = 0.03125 */
  qllc_qparams p = choose(-1, 3, QLLC_SCHEMA_POWER2, QLLC_ELEM_I8, QLLC_QROLE_ACT);
  assert_true(p.scale == 0.03125f);
  assert_int_equal(p.zero_point, 0);
  /* [-1, 127]: 127/127 = 1 is a power of two already */
  p = choose(-1, 127, QLLC_SCHEMA_POWER2, QLLC_ELEM_I8, QLLC_QROLE_ACT);
  assert_true(p.scale == 1.0f);
  /* int16 [0, 1]: 1/32767 = 3.05185e-5 is just above 2^-15 = 3.05176e-5 -> 2^-14 */
  p = choose(0, 1, QLLC_SCHEMA_POWER2, QLLC_ELEM_I16, QLLC_QROLE_ACT);
  assert_true(p.scale == ldexpf(1, -14));
  /* int16 [0, 0.5]: 0.5/32767 -> 2^-15 */
  p = choose(0, 0.5f, QLLC_SCHEMA_POWER2, QLLC_ELEM_I16, QLLC_QROLE_ACT);
  assert_true(p.scale == ldexpf(1, -15));
  /* weights under power2 are power2 too: 0.5/127 = 0.003937 -> 2^-7 */
  p = choose(-0.5f, 0.25f, QLLC_SCHEMA_POWER2, QLLC_ELEM_I8, QLLC_QROLE_WEIGHT);
  assert_true(p.scale == ldexpf(1, -7));
}

static void test_weights_role(void **state) {
  /* weights are symmetric narrow whatever the schema: 0.5/127 and 0.5/32767 */
  qllc_qparams p = choose(-0.5f, 0.25f, QLLC_SCHEMA_ASYMMETRIC, QLLC_ELEM_I8, QLLC_QROLE_WEIGHT);
  ASSERT_SCALE(p, 0.5 / 127.0);
  assert_int_equal(p.zero_point, 0);
  p = choose(-0.5f, 0.25f, QLLC_SCHEMA_ASYMMETRIC, QLLC_ELEM_I16, QLLC_QROLE_WEIGHT);
  ASSERT_SCALE(p, 0.5 / 32767.0);
  assert_int_equal(p.zero_point, 0);
}

static void test_degenerate_and_invalid(void **state) {
  /* [0, 0]: s = 1; asymmetric int8 z = round(-128 - 0) = -128, symmetric z = 0 */
  qllc_qparams p = choose(0, 0, QLLC_SCHEMA_ASYMMETRIC, QLLC_ELEM_I8, QLLC_QROLE_ACT);
  assert_true(p.scale == 1.0f);
  assert_int_equal(p.zero_point, -128);
  p = choose(0, 0, QLLC_SCHEMA_SYMMETRIC, QLLC_ELEM_I16, QLLC_QROLE_ACT);
  assert_true(p.scale == 1.0f);
  assert_int_equal(p.zero_point, 0);
  /* a denormal range: s would be below FLT_MIN -> 1 */
  p = choose(0, 1e-40f, QLLC_SCHEMA_SYMMETRIC, QLLC_ELEM_I8, QLLC_QROLE_ACT);
  assert_true(p.scale == 1.0f);
  qllc_diag d;
  memset(&d, 0, sizeof d);
  assert_int_equal(qllc_quant_choose(2, 1, QLLC_SCHEMA_ASYMMETRIC, QLLC_ELEM_I8, QLLC_QROLE_ACT, &p, &d),
                   QLLC_ERR_INVALID);
  assert_non_null(strstr(d.message, "range"));
  assert_int_equal(qllc_quant_choose(NAN, 1, QLLC_SCHEMA_ASYMMETRIC, QLLC_ELEM_I8, QLLC_QROLE_ACT, &p, &d),
                   QLLC_ERR_INVALID);
  assert_int_equal(qllc_quant_choose(0, INFINITY, QLLC_SCHEMA_ASYMMETRIC, QLLC_ELEM_I8, QLLC_QROLE_ACT, &p, &d),
                   QLLC_ERR_INVALID);
  assert_int_equal(qllc_quant_choose(0, 1, (qllc_schema)17, QLLC_ELEM_I8, QLLC_QROLE_ACT, &p, &d),
                   QLLC_ERR_INVALID);
  assert_int_equal(qllc_quant_choose(0, 1, QLLC_SCHEMA_SYMMETRIC, QLLC_ELEM_F32, QLLC_QROLE_ACT, &p, &d),
                   QLLC_ERR_INVALID);
  assert_int_equal(qllc_quant_choose(2, 1, QLLC_SCHEMA_ASYMMETRIC, QLLC_ELEM_I8, QLLC_QROLE_ACT, &p, NULL),
                   QLLC_ERR_INVALID);
}

static void test_zero_exact(void **state) {
  /* r = 0 must quantize to z exactly for every schema and many ranges */
  for (int i = 1; i < 2000; i++) {
    float lo = -(float)i * 0.0137f, hi = (float)(2000 - i) * 0.0071f;
    for (int s = 0; s < 4; s++) {
      qllc_qparams p = choose(lo, hi, (qllc_schema)s, QLLC_ELEM_I8, QLLC_QROLE_ACT);
      int32_t qmin, qmax;
      qllc_quant_range(p.elem, 0, &qmin, &qmax);
      assert_int_equal(qllc_quantize_one(0.0f, p.scale, p.zero_point, qmin, qmax), p.zero_point);
      /* lo and hi are within half a step of the ends of the grid (asymmetric) */
      if (s == 0) {
        float rl = p.scale * (float)(qmin - p.zero_point), rh = p.scale * (float)(qmax - p.zero_point);
        assert_true(fabsf(rl - lo) <= p.scale * 0.5001f);
        assert_true(fabsf(rh - hi) <= p.scale * 0.5001f);
      }
    }
  }
}

static void test_quantize_tensor(void **state) {
  /* half to even, saturation, zero point */
  float x[] = {2.5f, 3.5f, -2.5f, -3.5f, 1000.0f, -1000.0f, 0.24f, NAN};
  int8_t q[8];
  qllc_diag d;
  memset(&d, 0, sizeof d);
  assert_int_equal(qllc_quantize_tensor(x, 8, 1.0f, 0, QLLC_ELEM_I8, q, &d), QLLC_OK);
  int8_t e[] = {2, 4, -2, -4, 127, -128, 0, 0};
  assert_memory_equal(q, e, sizeof e);
  /* uint8 with z = 10, s = 0.5: 2.5/0.5 = 5 -> 15; -10/0.5 = -20 -> -10 -> 0 (saturates) */
  float y[] = {2.5f, -10.0f, 0.25f, 0.75f};
  uint8_t u[4];
  assert_int_equal(qllc_quantize_tensor(y, 4, 0.5f, 10, QLLC_ELEM_U8, u, &d), QLLC_OK);
  /* 0.25/0.5 = 0.5 -> 0 -> 10; 0.75/0.5 = 1.5 -> 2 -> 12 */
  uint8_t eu[] = {15, 0, 10, 12};
  assert_memory_equal(u, eu, sizeof eu);
  int16_t h[2];
  float z[] = {1e9f, -0.5f};
  assert_int_equal(qllc_quantize_tensor(z, 2, 0.25f, -5, QLLC_ELEM_I16, h, &d), QLLC_OK);
  assert_int_equal(h[0], 32767);
  assert_int_equal(h[1], -7); /* -2 - 5 */
  float back[2];
  assert_int_equal(qllc_dequantize_tensor(h, 2, 0.25f, -5, QLLC_ELEM_I16, back, &d), QLLC_OK);
  assert_true(back[1] == -0.5f);
  assert_true(back[0] == 0.25f * 32772.0f);
  int32_t i32[1] = {INT32_MIN};
  assert_int_equal(qllc_dequantize_tensor(i32, 1, 1.0f, 1, QLLC_ELEM_I32, back, &d), QLLC_OK);
  assert_true(back[0] == -2147483649.0f);
  assert_int_equal(qllc_quantize_tensor(x, 1, 1.0f, 0, QLLC_ELEM_I32, q, &d), QLLC_ERR_INVALID);
}

static void test_weights(void **state) {
  /* ch0 [127, -254, 63.5]: s = 254/127 = 2 -> [round(63.5) = 64, -127, round(31.75) = 32]
     ch1 zeros: s = 1, q = 0
     ch2 [-4, 1, 0.0078125]: s = 4/127 -> [-127, round(31.75) = 32, round(0.248) = 0] */
  float w[9] = {127, -254, 63.5f, 0, 0, 0, -4, 1, 0.0078125f};
  float s[3];
  int8_t q[9];
  qllc_diag d;
  memset(&d, 0, sizeof d);
  assert_int_equal(qllc_quantize_weights(w, 3, 3, QLLC_ELEM_I8, 0, 0, NULL, s, q, &d), QLLC_OK);
  assert_true(s[0] == 2.0f);
  assert_true(s[1] == 1.0f);
  assert_true(s[2] == (float)(4.0 / 127.0));
  int8_t e[9] = {64, -127, 32, 0, 0, 0, -127, 32, 0};
  assert_memory_equal(q, e, sizeof e);
  /* per tensor: s = 2 -> ch2 [-2, round(0.5) = 0 (half even), 0] */
  assert_int_equal(qllc_quantize_weights(w, 3, 3, QLLC_ELEM_I8, 1, 0, NULL, s, q, &d), QLLC_OK);
  assert_true(s[0] == 2.0f);
  int8_t et[9] = {64, -127, 32, 0, 0, 0, -2, 0, 0};
  assert_memory_equal(q, et, sizeof et);
  /* power2: ch2 s = 4/127 = 0.0315 (just above 2^-5) -> 2^-4: [-64, 16, round(0.125) = 0];
     ch0 s = 2 stays */
  assert_int_equal(qllc_quantize_weights(w, 3, 3, QLLC_ELEM_I8, 0, 1, NULL, s, q, &d), QLLC_OK);
  assert_true(s[0] == 2.0f);
  assert_true(s[2] == 0.0625f);
  assert_int_equal(q[6], -64);
  assert_int_equal(q[7], 16);
  assert_int_equal(q[8], 0);
  /* power2 where the rounding saturates: [-128 * 2^-5 ... ] amax 4 with s forced to 2^-5 by min_scale
     is impossible (min_scale only widens), so check the narrow clamp directly: 1 / (1/127) = 127 */
  float w1[2] = {-1.0f, 1.0f};
  assert_int_equal(qllc_quantize_weights(w1, 1, 2, QLLC_ELEM_I8, 0, 0, NULL, s, q, &d), QLLC_OK);
  assert_int_equal(q[0], -127);
  assert_int_equal(q[1], 127);
  /* min_scale on channel 0: s = 4 -> [round(31.75) = 32, round(-63.5) = -64, round(15.875) = 16] */
  float mins[3] = {4, 0, 0};
  assert_int_equal(qllc_quantize_weights(w, 3, 3, QLLC_ELEM_I8, 0, 0, mins, s, q, &d), QLLC_OK);
  assert_true(s[0] == 4.0f);
  assert_int_equal(q[0], 32);
  assert_int_equal(q[1], -64);
  assert_int_equal(q[2], 16);
  /* int16: [3, -1, 0] -> s = 3/32767, q = [32767, round(-10922.33) = -10922, 0] */
  float w16[3] = {3, -1, 0};
  int16_t q16[3];
  assert_int_equal(qllc_quantize_weights(w16, 1, 3, QLLC_ELEM_I16, 0, 0, NULL, s, q16, &d), QLLC_OK);
  assert_true(s[0] == (float)(3.0 / 32767.0));
  assert_int_equal(q16[0], 32767);
  assert_int_equal(q16[1], -10922);
  assert_int_equal(q16[2], 0);
  /* bad kinds and values */
  assert_int_equal(qllc_quantize_weights(w, 3, 3, QLLC_ELEM_U8, 0, 0, NULL, s, q, &d), QLLC_ERR_INVALID);
  float bad[2] = {1, NAN};
  assert_int_equal(qllc_quantize_weights(bad, 1, 2, QLLC_ELEM_I8, 0, 0, NULL, s, q, &d), QLLC_ERR_INVALID);
}

static void test_names(void **state) {
  qllc_schema s;
  qllc_calibration c;
  assert_int_equal(qllc_schema_parse("symmetric_uint8", &s), 0);
  assert_int_equal(s, QLLC_SCHEMA_SYMMETRIC_UINT8);
  assert_int_equal(qllc_schema_parse("power2", &s), 0);
  assert_int_equal(s, QLLC_SCHEMA_POWER2);
  assert_int_equal(qllc_schema_parse("Asymmetric", &s), -1);
  assert_int_equal(qllc_schema_parse(NULL, &s), -1);
  assert_string_equal(qllc_schema_name(QLLC_SCHEMA_ASYMMETRIC), "asymmetric");
  assert_int_equal(qllc_calibration_parse("kl", &c), 0);
  assert_int_equal(c, QLLC_CAL_KL);
  assert_int_equal(qllc_calibration_parse("entropy", &c), -1);
  assert_string_equal(qllc_calibration_name(QLLC_CAL_PERCENTILE), "percentile");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_ranges),         cmocka_unit_test(test_round_half_even),
      cmocka_unit_test(test_asymmetric),     cmocka_unit_test(test_symmetric),
      cmocka_unit_test(test_symmetric_uint8), cmocka_unit_test(test_power2),
      cmocka_unit_test(test_weights_role),   cmocka_unit_test(test_degenerate_and_invalid),
      cmocka_unit_test(test_zero_exact),     cmocka_unit_test(test_quantize_tensor),
      cmocka_unit_test(test_weights),        cmocka_unit_test(test_names),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
