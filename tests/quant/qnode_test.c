/* tests/quant/qnode_test.c: the fused-layer record (weights, folded bias, multipliers, clamp) worked
 * out by hand and run through the reference arithmetic; lookup tables and pool multipliers. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "quant/quant.h"

static qllc_qparams qp(float s, int32_t z, qllc_elem e) {
  qllc_qparams p = {s, z, e};
  return p;
}

static void test_fused_by_hand(void **state) {
  /* x: s = 0.5, z = 3; y: s = 0.25, z = -2 (int8)
     w ch0 = [0.25, 127/128] -> s_w = 1/128, q = [32, 127]; ch1 = [-127/64, 0.5] -> s_w = 1/64, q = [-127, 32]
     s_b = {1/256, 1/128}; b = {1.0, -0.3} -> q_b = {256, round(-38.4) = -38}
     folded with z_x = 3: {256 - 3 * 159, -38 - 3 * (-95)} = {-221, 247}
     M = {0.5 / 128 / 0.25, 0.5 / 64 / 0.25} = {1/64, 1/32} -> m = 2^30, n = {36, 35}
     Relu: [z_y, 127] = [-2, 127] */
  qllc_arena *a = qllc_arena_new();
  qllc_qparams x = qp(0.5f, 3, QLLC_ELEM_I8), y = qp(0.25f, -2, QLLC_ELEM_I8);
  float w[4] = {0.25f, 0.9921875f, -1.984375f, 0.5f}, b[2] = {1.0f, -0.3f};
  qllc_qnode *q;
  qllc_diag d;
  memset(&d, 0, sizeof d);
  assert_int_equal(qllc_qnode_fused(a, "fc1", &x, &y, w, 2, 2, b, QLLC_ELEM_I8, 0, 0, 0, 0.0f, INFINITY, &q, &d),
                   QLLC_OK);
  assert_int_equal(q->kind, QLLC_QK_FUSED);
  assert_int_equal(q->acc_elem, QLLC_ELEM_I32);
  const int8_t *qw = q->w_packed;
  int8_t ew[4] = {32, 127, -127, 32};
  assert_memory_equal(qw, ew, 4);
  assert_true(q->w_scales[0] == 1.0f / 128 && q->w_scales[1] == 1.0f / 64);
  assert_int_equal(q->qbias[0], 256), assert_int_equal(q->qbias[1], -38);
  const int32_t *bias = q->bias;
  assert_int_equal(bias[0], -221), assert_int_equal(bias[1], 247);
  assert_int_equal(q->m[0], 1 << 30), assert_int_equal(q->n[0], 36);
  assert_int_equal(q->m[1], 1 << 30), assert_int_equal(q->n[1], 35);
  assert_int_equal(q->act_lo, -2), assert_int_equal(q->act_hi, 127);
  assert_int_equal(q->z_x, 3), assert_int_equal(q->z_y, -2);
  /* run x = [5, -1] (q = [13, 1]) through the reference:
     acc0 = -221 + 13 * 32 + 127 = 322 -> 322 / 64 = 5.03 -> 5 -> y = 3   (float: 1.2578 / 0.25 = 5.03)
     acc1 = 247 - 13 * 127 + 32 = -1372 -> -42.875 -> -43 -> -45 -> Relu clamp -2   (float: -10.72 -> 0) */
  int8_t qx[2] = {13, 1};
  int32_t expect[2] = {3, -2};
  for (int c = 0; c < 2; c++) {
    int32_t acc = bias[c];
    for (int k = 0; k < 2; k++) acc += qx[k] * qw[c * 2 + k];
    int32_t v = qllc_requant_apply(acc, q->m[c], q->n[c]) + q->z_y;
    v = v < q->act_lo ? q->act_lo : v > q->act_hi ? q->act_hi : v;
    assert_int_equal(v, expect[c]);
  }
  /* per tensor: s_w = 1/64 for both */
  assert_int_equal(qllc_qnode_fused(a, "fc1", &x, &y, w, 2, 2, b, QLLC_ELEM_I8, 1, 0, 0, -INFINITY, INFINITY, &q, &d),
                   QLLC_OK);
  assert_true(q->w_scales[0] == 1.0f / 64 && q->w_scales[1] == 1.0f / 64);
  assert_int_equal(((int8_t *)q->w_packed)[1], 64); /* 0.9921875 * 64 = 63.5 -> 64 (half to even) */
  assert_int_equal(((int8_t *)q->w_packed)[0], 16);
  qllc_arena_free(a);
}

static void test_fused_int16_and_errors(void **state) {
  qllc_arena *a = qllc_arena_new();
  qllc_qparams x = qp(1.0f / 256, -100, QLLC_ELEM_I16), y = qp(1.0f / 128, 0, QLLC_ELEM_I16);
  float w[3] = {1.0f, -0.5f, 0.25f}, b[1] = {2.0f};
  qllc_qnode *q;
  qllc_diag d;
  memset(&d, 0, sizeof d);
  /* int16: s_w = 1/32767, q_w = [32767, round(-16383.5) = -16384 (half even), round(8191.75) = 8192];
     s_b = 1 / (256 * 32767): q_b = 2 * 256 * 32767 = 16776704; folded: + 100 * (32767 - 16384 + 8192) */
  assert_int_equal(qllc_qnode_fused(a, "conv", &x, &y, w, 1, 3, b, QLLC_ELEM_I16, 0, 0, 0, -INFINITY, INFINITY, &q, &d),
                   QLLC_OK);
  assert_int_equal(q->acc_elem, QLLC_ELEM_I64);
  const int16_t *qw = q->w_packed;
  assert_int_equal(qw[0], 32767), assert_int_equal(qw[1], -16384), assert_int_equal(qw[2], 8192);
  assert_int_equal(q->qbias[0], 16776704);
  assert_true(((int64_t *)q->bias)[0] == 16776704 + 100 * (32767 - 16384 + 8192));
  assert_int_equal(q->act_lo, -32768), assert_int_equal(q->act_hi, 32767);
  /* 16x8 */
  assert_int_equal(qllc_qnode_fused(a, "conv", &x, &y, w, 1, 3, b, QLLC_ELEM_I8, 0, 0, 0, -INFINITY, INFINITY, &q, &d),
                   QLLC_OK);
  assert_int_equal(q->acc_elem, QLLC_ELEM_I64);
  assert_int_equal(((int8_t *)q->w_packed)[0], 127);
  /* no kernel for i8 in, i16 out; errors carry the node name */
  qllc_qparams x8 = qp(0.5f, 0, QLLC_ELEM_I8);
  memset(&d, 0, sizeof d);
  assert_int_equal(qllc_qnode_fused(a, "conv7", &x8, &y, w, 1, 3, b, QLLC_ELEM_I8, 0, 0, 0, -INFINITY, INFINITY, &q, &d),
                   QLLC_ERR_UNSUPPORTED);
  assert_string_equal(d.node, "conv7");
  float bad[3] = {1, NAN, 0};
  memset(&d, 0, sizeof d);
  assert_int_equal(qllc_qnode_fused(a, "conv8", &x, &y, bad, 1, 3, b, QLLC_ELEM_I16, 0, 0, 0, -INFINITY, INFINITY, &q, &d),
                   QLLC_ERR_INVALID);
  assert_string_equal(d.node, "conv8");
  assert_non_null(strstr(d.message, "non-finite"));
  qllc_arena_free(a);
}

static void test_widen_for_bias(void **state) {
  /* int16 with tiny scales: s_x = 2^-20, s_w = 1e-3 / 32767: s_b = 3e-14; b = 1e-3 -> 3.3e10: clips */
  qllc_arena *a = qllc_arena_new();
  qllc_qparams x = qp(ldexpf(1, -20), 0, QLLC_ELEM_I16), y = qp(ldexpf(1, -10), 0, QLLC_ELEM_I16);
  float w[2] = {1e-3f, -1e-3f}, b[1] = {1e-3f};
  qllc_qnode *q;
  qllc_diag d;
  memset(&d, 0, sizeof d);
  assert_int_equal(qllc_qnode_fused(a, "l", &x, &y, w, 1, 2, b, QLLC_ELEM_I16, 0, 0, 0, -INFINITY, INFINITY, &q, &d),
                   QLLC_OK);
  assert_int_equal(q->bias_report.n_clipped, 1);
  assert_int_equal(q->bias_report.worst_channel, 0);
  assert_true(q->bias_report.worst_value > 3e10);
  assert_int_equal(qllc_qnode_fused(a, "l", &x, &y, w, 1, 2, b, QLLC_ELEM_I16, 0, 0, 1, -INFINITY, INFINITY, &q, &d),
                   QLLC_OK);
  assert_int_equal(q->bias_report.n_clipped, 0);
  /* the bias is now exact to half a step, the weights coarser but still well inside the range */
  double sb = (double)x.scale * q->w_scales[0];
  assert_true(fabs(q->qbias[0] * sb - (double)1e-3f) <= 0.5 * sb * 1.001);
  assert_true(abs(((int16_t *)q->w_packed)[0]) > 1000);
  qllc_arena_free(a);
}

static void test_act_clamp(void **state) {
  int32_t lo, hi;
  qllc_qparams y = qp(0.1f, -128, QLLC_ELEM_I8);
  qllc_quant_act_clamp(0.0f, 6.0f, &y, &lo, &hi); /* Relu6: [-128, -128 + 60] */
  assert_int_equal(lo, -128), assert_int_equal(hi, -68);
  qllc_quant_act_clamp(-INFINITY, INFINITY, &y, &lo, &hi);
  assert_int_equal(lo, -128), assert_int_equal(hi, 127);
  qllc_qparams u = qp(0.05f, 10, QLLC_ELEM_U8);
  qllc_quant_act_clamp(0.0f, 1.0f, &u, &lo, &hi); /* [10, 30] */
  assert_int_equal(lo, 10), assert_int_equal(hi, 30);
  qllc_quant_act_clamp(-1.0f, 100.0f, &u, &lo, &hi); /* saturate to [0, 255] */
  assert_int_equal(lo, 0), assert_int_equal(hi, 255);
}

static void test_tables(void **state) {
  int16_t t[513];
  int8_t *t8 = (int8_t *)t;
  int32_t len;
  qllc_diag d;
  memset(&d, 0, sizeof d);
  /* sigmoid, in s = 0.1 z = 0, out s = 1/256 z = -128:
     q = 0 (entry 128): 0.5 * 256 - 128 = 0; q = -128: sigmoid(-12.8) * 256 = 7e-4 -> -128;
     q = 127: 255.999 -> 256 - 128 = 128 -> 127; q = 10: sigmoid(1) = 0.731059 * 256 = 187.15 -> 59 */
  qllc_qparams in = qp(0.1f, 0, QLLC_ELEM_I8), out = qp(1.0f / 256, -128, QLLC_ELEM_I8);
  assert_int_equal(qllc_quant_table(QLLC_QF_SIGMOID, 0, &in, &out, t, &len, &d), QLLC_OK);
  assert_int_equal(len, 256);
  assert_int_equal(t8[128], 0), assert_int_equal(t8[0], -128), assert_int_equal(t8[255], 127);
  assert_int_equal(t8[138], 59);
  /* tanh, in s = 1/64, out s = 1/128: q = 64 -> tanh(1) = 0.761594 * 128 = 97.48 -> 97 */
  in = qp(1.0f / 64, 0, QLLC_ELEM_I8), out = qp(1.0f / 128, 0, QLLC_ELEM_I8);
  assert_int_equal(qllc_quant_table(QLLC_QF_TANH, 0, &in, &out, t, &len, &d), QLLC_OK);
  assert_int_equal(t8[128 + 64], 97), assert_int_equal(t8[128 - 64], -97);
  /* leaky relu u8: in s = 0.5 z = 100, out s = 0.5 z = 100, alpha 0.1: q = 0 -> r = -50 -> -5 -> q 90 */
  in = qp(0.5f, 100, QLLC_ELEM_U8), out = qp(0.5f, 100, QLLC_ELEM_U8);
  assert_int_equal(qllc_quant_table(QLLC_QF_LEAKY_RELU, 0.1f, &in, &out, t, &len, &d), QLLC_OK);
  assert_int_equal(((uint8_t *)t)[0], 90), assert_int_equal(((uint8_t *)t)[200], 200);
  /* int16 sigmoid, in s = 1/4096, out s = 1/32768 z = -16384 .. use z = 0: interpolated result within
     2 LSB of the exactly quantized function at every one of the 65536 inputs */
  in = qp(1.0f / 4096, 0, QLLC_ELEM_I16), out = qp(1.0f / 32768, 0, QLLC_ELEM_I16);
  assert_int_equal(qllc_quant_table(QLLC_QF_SIGMOID, 0, &in, &out, t, &len, &d), QLLC_OK);
  assert_int_equal(len, 513);
  assert_int_equal(t[256], 16384); /* sigmoid(0) * 32768 */
  int worst = 0;
  for (int32_t xq = -32768; xq <= 32767; xq++) {
    double e = 32768.0 / (1.0 + exp(-(double)xq / 4096));
    if (e > 32767) e = 32767;
    int diff = abs(qllc_lut16_eval(t, xq) - (int)lrint(e));
    if (diff > worst) worst = diff;
  }
  assert_true(worst <= 2);
  /* kinds must match */
  out = qp(1.0f / 256, 0, QLLC_ELEM_U8);
  in = qp(0.1f, 0, QLLC_ELEM_I8);
  assert_int_equal(qllc_quant_table(QLLC_QF_SIGMOID, 0, &in, &out, t, &len, &d), QLLC_ERR_INVALID);
}

static void test_softmax_and_pool(void **state) {
  int32_t e[513], len, recip;
  qllc_qparams in = qp(0.1f, 5, QLLC_ELEM_I8), out;
  qllc_diag d;
  memset(&d, 0, sizeof d);
  assert_int_equal(qllc_quant_softmax(&in, &out, &recip, e, &len, &d), QLLC_OK);
  assert_int_equal(len, 256), assert_int_equal(recip, 256);
  assert_true(out.scale == 1.0f / 256 && out.zero_point == -128 && out.elem == QLLC_ELEM_I8);
  assert_int_equal(e[0], 1 << 24);
  /* d = 10: 2^24 * exp(-10 * 0.1f) = 6171992.75 (s_x is the float 0.1f = 0.100000001) -> 6171993 */
  assert_int_equal(e[10], 6171993);
  assert_int_equal(e[255], 0); /* 2^24 * exp(-25.5) = 1.4e-4 */
  in = qp(1e-3f, 0, QLLC_ELEM_I16);
  assert_int_equal(qllc_quant_softmax(&in, &out, &recip, e, &len, &d), QLLC_OK);
  assert_int_equal(len, 513), assert_int_equal(recip, 32768);
  assert_true(abs(e[1] - (int32_t)lrint(16777216.0 * exp(-0.128))) <= 1);
  /* pool: s_x = 0.5, s_y = 0.25: M = 2 / c: c=1 -> (2^30, 29), c=2 -> (2^30, 30),
     c=3 -> round(2/3 * 2^31) = 1431655765, n = 31; c=4 -> (2^30, 31) */
  int32_t m[5], n[5];
  assert_int_equal(qllc_quant_pool_multipliers(0.5f, 0.25f, 4, m, n, &d), QLLC_OK);
  assert_int_equal(m[0], 0), assert_int_equal(n[0], 0);
  assert_int_equal(m[1], 1 << 30), assert_int_equal(n[1], 29);
  assert_int_equal(m[2], 1 << 30), assert_int_equal(n[2], 30);
  assert_int_equal(m[3], 1431655765), assert_int_equal(n[3], 31);
  assert_int_equal(m[4], 1 << 30), assert_int_equal(n[4], 31);
  /* average of 3 values 1, 2, 2 (sum 5) at s_x = 0.5 into s_y = 0.25: 5 * 2/3 = 3.33 -> 3 */
  assert_int_equal(qllc_requant_apply(5, m[3], n[3]), 3);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_fused_by_hand),     cmocka_unit_test(test_fused_int16_and_errors),
      cmocka_unit_test(test_widen_for_bias),    cmocka_unit_test(test_act_clamp),
      cmocka_unit_test(test_tables),            cmocka_unit_test(test_softmax_and_pool),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
