/* tests/quant/quantize_test.c: the graph quantizer on small float graphs built by hand, with profiles
 * made in memory from known data. Expected scales, zero points, weights, biases and multipliers are
 * worked out here from docs/numerics.md (not by calling the functions under test on the same
 * inputs, except qllc_requant_make, which has its own tests, for the multiplier decomposition). */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "quant/quant.h"

static qllc_graph *G;
static qllc_profile *P;
static qllc_diag D;

static int setup(void **state) {
  (void)state;
  G = qllc_graph_new("t.onnx");
  P = qllc_profile_new(0, 64);
  memset(&D, 0, sizeof D);
  return G && P ? 0 : -1;
}
static int teardown(void **state) {
  (void)state;
  qllc_graph_free(G);
  qllc_profile_free(P);
  G = NULL, P = NULL;
  return 0;
}

static qllc_value *val(const char *name, int64_t d0, int64_t d1) {
  int64_t dims[2] = {d0, d1};
  qllc_value *v = qllc_value_new(G, name, QLLC_ELEM_F32, 2, dims);
  assert_non_null(v);
  return v;
}
static qllc_value *cst(const char *name, int rank, int64_t d0, int64_t d1, const float *data) {
  int64_t dims[2] = {d0, d1};
  qllc_value *v = qllc_const_new(G, name, QLLC_ELEM_F32, rank, dims, data);
  assert_non_null(v);
  return v;
}
static qllc_node *node(qllc_op op, const char *name, qllc_value *a, qllc_value *b, qllc_value *c, qllc_value *y) {
  int n_in = c ? 3 : b ? 2 : 1;
  qllc_node *n = qllc_node_new(G, op, name, n_in, 1);
  assert_non_null(n);
  n->in[0] = a;
  if (b) n->in[1] = b;
  if (c) n->in[2] = c;
  n->out[0] = y;
  y->producer = n;
  return n;
}
/* The profile sees exactly lo and hi (minmax calibration gives [lo, hi]). */
static void range(const char *name, float lo, float hi) {
  qllc_hist *h = qllc_profile_add(P, name);
  assert_non_null(h);
  float v[2] = {lo, hi};
  qllc_hist_record(h, v, 2);
}
static void seal(void) {
  qllc_graph_recount_uses(G);
  P->graph_hash = qllc_graph_hash(G);
}

static qllc_quant_opts opts(qllc_elem act, qllc_elem w) {
  qllc_quant_opts o;
  memset(&o, 0, sizeof o);
  o.act_elem = act;
  o.w_elem = w;
  o.schema = QLLC_SCHEMA_ASYMMETRIC;
  o.calib.method = QLLC_CAL_MINMAX;
  o.widen_for_bias = 1;
  return o;
}

static int count_op(qllc_op op) {
  int c = 0;
  for (int i = 0; i < G->n_nodes; i++) c += !G->nodes[i]->dead && G->nodes[i]->op == op;
  return c;
}
static qllc_node *find_node(const char *name) {
  for (int i = 0; i < G->n_nodes; i++)
    if (!strcmp(G->nodes[i]->name, name)) return G->nodes[i];
  fail_msg("no node %s", name);
  return NULL;
}
static void verify(void) {
  qllc_diag d;
  memset(&d, 0, sizeof d);
  if (qllc_graph_verify(G, &d) != QLLC_OK) fail_msg("verify: %s", d.message);
}
static void expect_params(const qllc_value *v, qllc_elem e, float s, int32_t z) {
  assert_int_equal(v->elem, e);
  if (v->scale != s) fail_msg("%s: scale %.9g, expected %.9g", v->name, (double)v->scale, (double)s);
  assert_int_equal(v->zero_point, z);
}

/* x[1,4] in [-1, 3] -> fc1 (W[2][4], b[2], fused Relu) -> y in [0, 6], a graph output. */
static const float W1[8] = {0.5f, -0.25f, 1.0f, 0.125f, -2.0f, 0.75f, 0.3f, -0.6f};
static const float B1[2] = {0.2f, -0.1f};
static qllc_node *fc_graph(void) {
  qllc_value *x = val("x", 1, 4), *y = val("y", 1, 2);
  qllc_graph_add_input(G, x);
  qllc_node *fc = node(QLLC_OP_FC, "fc1", x, cst("W", 2, 2, 4, W1), cst("b", 1, 2, 1, B1), y);
  fc->act = QLLC_ACT_RELU, fc->act_lo = 0, fc->act_hi = INFINITY;
  qllc_graph_add_output(G, y);
  range("x", -1, 3);
  range("y", 0, 6);
  seal();
  return fc;
}

static void test_fc_int8(void **state) {
  (void)state;
  qllc_node *fc = fc_graph();
  qllc_quant_opts o = opts(QLLC_ELEM_I8, QLLC_ELEM_I8);
  assert_int_equal(qllc_quantize_graph(G, P, &o, &D), QLLC_OK);
  verify();
  /* asymmetric int8: x: s = 4 / 255, z = round(-128 + 1 / s) = round(-64.25) = -64;
                      y: s = 6 / 255, z = round(-128 - 0) = -128 */
  float sx = (float)(4.0 / 255), sy = (float)(6.0 / 255);
  assert_int_equal(G->n_nodes, 3); /* QUANTIZE, fc1, DEQUANTIZE */
  assert_int_equal(G->nodes[0]->op, QLLC_OP_QUANTIZE);
  assert_ptr_equal(G->nodes[1], fc);
  assert_int_equal(G->nodes[2]->op, QLLC_OP_DEQUANTIZE);
  qllc_value *x = G->inputs[0], *y = G->outputs[0];
  assert_string_equal(x->name, "x");
  assert_int_equal(x->elem, QLLC_ELEM_F32);
  assert_ptr_equal(G->nodes[0]->in[0], x);
  assert_int_equal(G->nodes[0]->n_in, 1);
  expect_params(fc->in[0], QLLC_ELEM_I8, sx, -64);
  assert_ptr_equal(fc->in[0]->producer, G->nodes[0]);
  /* the output keeps its ONNX name and stays float; the fused layer writes "y.q" */
  assert_string_equal(y->name, "y");
  assert_int_equal(y->elem, QLLC_ELEM_F32);
  assert_ptr_equal(y->producer, G->nodes[2]);
  assert_string_equal(fc->out[0]->name, "y.q");
  expect_params(fc->out[0], QLLC_ELEM_I8, sy, -128);
  assert_ptr_equal(G->nodes[2]->in[0], fc->out[0]);
  /* weights stay the f32 constant inputs */
  assert_int_equal(fc->in[1]->elem, QLLC_ELEM_F32);
  assert_false(fc->keep_float);

  const qllc_qnode *q = fc->quant;
  assert_non_null(q);
  assert_int_equal(q->kind, QLLC_QK_FUSED);
  assert_int_equal(q->in_elem, QLLC_ELEM_I8), assert_int_equal(q->w_elem, QLLC_ELEM_I8);
  assert_int_equal(q->out_elem, QLLC_ELEM_I8), assert_int_equal(q->acc_elem, QLLC_ELEM_I32);
  assert_int_equal(q->channels, 2);
  assert_int_equal(q->z_x, -64), assert_int_equal(q->z_y, -128);
  assert_int_equal(q->act_lo, -128), assert_int_equal(q->act_hi, 127); /* Relu: [z_y, 127] */
  /* per-channel weights: s_w[0] = 1 / 127, s_w[1] = 2 / 127; q_w = rint(w / s_w) */
  float sw[2] = {1.0f / 127, 2.0f / 127};
  const int8_t *qw = q->w_packed;
  for (int c = 0; c < 2; c++) {
    assert_true(q->w_scales[c] == sw[c]);
    int32_t wsum = 0;
    for (int k = 0; k < 4; k++) {
      int e = (int)rint(W1[c * 4 + k] / sw[c]);
      assert_int_equal(qw[c * 4 + k], e);
      wsum += e;
    }
    /* bias with s_b = s_x * s_w, then -z_x * sum q_w folded in */
    double sb = (double)sx * sw[c];
    int32_t qb = (int32_t)rint(B1[c] / sb);
    assert_int_equal(q->qbias[c], qb);
    assert_int_equal(((const int32_t *)q->bias)[c], qb + 64 * wsum);
    qllc_requant r;
    assert_int_equal(qllc_requant_make((double)sx * sw[c] / sy, &r, NULL), QLLC_OK);
    assert_int_equal(q->m[c], r.m), assert_int_equal(q->n[c], r.n);
  }
  assert_int_equal(q->bias_report.n_clipped, 0);
}

/* Pinned numbers for one channel, so that a change in any rounding shows: x s = 4/255 z = -64;
 * channel 0: q_w = [64, -32, 127, 16] (sum 175), b = 0.2 -> 0.2 / (4/255 / 127) = 1619.5 -> 1620 (half
 * to even, computed in double from the float scales: 1619.4999.. or 1619.50..; check by value). */
static void test_fc_int8_pinned(void **state) {
  (void)state;
  qllc_node *fc = fc_graph();
  qllc_quant_opts o = opts(QLLC_ELEM_I8, QLLC_ELEM_I8);
  assert_int_equal(qllc_quantize_graph(G, P, &o, &D), QLLC_OK);
  const qllc_qnode *q = fc->quant;
  const int8_t *qw = q->w_packed;
  int8_t e0[4] = {64, -32, 127, 16};
  assert_memory_equal(qw, e0, 4);
  int32_t qb = q->qbias[0];
  assert_true(qb == 1619 || qb == 1620);
  assert_int_equal(((const int32_t *)q->bias)[0], qb + 64 * 175);
}

static void test_int16_and_16x8(void **state) {
  (void)state;
  for (int mode = 0; mode < 2; mode++) {
    if (mode) teardown(NULL), setup(NULL);
    qllc_node *fc = fc_graph();
    qllc_quant_opts o = opts(QLLC_ELEM_I16, mode ? QLLC_ELEM_I8 : QLLC_ELEM_I16);
    assert_int_equal(qllc_quantize_graph(G, P, &o, &D), QLLC_OK);
    verify();
    /* asymmetric int16: x: s = 4 / 65535, z = round(-32768 + 1 / s) = round(-16384.25) = -16384 */
    float sx = (float)(4.0 / 65535), sy = (float)(6.0 / 65535);
    expect_params(fc->in[0], QLLC_ELEM_I16, sx, -16384);
    expect_params(fc->out[0], QLLC_ELEM_I16, sy, -32768);
    const qllc_qnode *q = fc->quant;
    assert_int_equal(q->acc_elem, QLLC_ELEM_I64);
    assert_int_equal(q->in_elem, QLLC_ELEM_I16);
    assert_int_equal(q->w_elem, mode ? QLLC_ELEM_I8 : QLLC_ELEM_I16);
    int qmax = mode ? 127 : 32767;
    for (int c = 0; c < 2; c++) {
      float sw = (float)((c ? 2.0 : 1.0) / qmax);
      assert_true(q->w_scales[c] == sw);
      int64_t wsum = 0;
      for (int k = 0; k < 4; k++) {
        int e = (int)rint(W1[c * 4 + k] / sw);
        int got = mode ? ((const int8_t *)q->w_packed)[c * 4 + k] : ((const int16_t *)q->w_packed)[c * 4 + k];
        assert_int_equal(got, e);
        wsum += e;
      }
      int32_t qb = (int32_t)rint(B1[c] / ((double)sx * sw));
      assert_int_equal(q->qbias[c], qb);
      assert_true(((const int64_t *)q->bias)[c] == (int64_t)qb + 16384 * wsum);
    }
    assert_int_equal(q->act_lo, -32768);
  }
}

static void test_quantized_io(void **state) {
  (void)state;
  qllc_node *fc = fc_graph();
  qllc_quant_opts o = opts(QLLC_ELEM_I8, QLLC_ELEM_I8);
  o.quantized_io = 1;
  assert_int_equal(qllc_quantize_graph(G, P, &o, &D), QLLC_OK);
  verify();
  assert_int_equal(G->n_nodes, 1);
  assert_int_equal(count_op(QLLC_OP_QUANTIZE) + count_op(QLLC_OP_DEQUANTIZE), 0);
  expect_params(G->inputs[0], QLLC_ELEM_I8, (float)(4.0 / 255), -64);
  expect_params(G->outputs[0], QLLC_ELEM_I8, (float)(6.0 / 255), -128);
  assert_string_equal(G->outputs[0]->name, "y");
  assert_ptr_equal(fc->in[0], G->inputs[0]);
  assert_ptr_equal(fc->out[0], G->outputs[0]);
}

static void test_hash_mismatch(void **state) {
  (void)state;
  fc_graph();
  P->graph_hash ^= 1;
  qllc_quant_opts o = opts(QLLC_ELEM_I8, QLLC_ELEM_I8);
  assert_int_equal(qllc_quantize_graph(G, P, &o, &D), QLLC_ERR_MISMATCH);
  assert_non_null(strstr(D.message, "another model"));
  assert_int_equal(G->n_nodes, 1); /* untouched */
  assert_null(G->nodes[0]->quant);
}

static void test_missing_value(void **state) {
  (void)state;
  qllc_value *x = val("x", 1, 4), *y = val("y", 1, 2);
  qllc_graph_add_input(G, x);
  node(QLLC_OP_FC, "fc1", x, cst("W", 2, 2, 4, W1), NULL, y);
  qllc_graph_add_output(G, y);
  range("x", -1, 3); /* no "y" */
  seal();
  qllc_quant_opts o = opts(QLLC_ELEM_I8, QLLC_ELEM_I8);
  assert_int_equal(qllc_quantize_graph(G, P, &o, &D), QLLC_ERR_INVALID);
  assert_non_null(strstr(D.message, "'y'"));
  assert_non_null(strstr(D.message, "missing from the profile"));
  assert_string_equal(D.node, "fc1");
  assert_int_equal(G->outputs[0]->elem, QLLC_ELEM_F32);
}

static int no_i16(void *ctx, const qllc_node *n, qllc_elem in, qllc_elem w, qllc_elem out) {
  (*(int *)ctx)++;
  (void)n, (void)w, (void)out;
  return in != QLLC_ELEM_I16;
}

static void test_unsupported(void **state) {
  (void)state;
  fc_graph();
  int calls = 0;
  qllc_quant_opts o = opts(QLLC_ELEM_I16, QLLC_ELEM_I16);
  o.supports = no_i16;
  o.supports_ctx = &calls;
  assert_int_equal(qllc_quantize_graph(G, P, &o, &D), QLLC_ERR_UNSUPPORTED);
  assert_int_equal(calls, 1);
  assert_non_null(strstr(D.message, "'fc1'"));
  assert_non_null(strstr(D.message, "FullyConnected"));
  assert_non_null(strstr(D.message, "i16 x i16 -> i16"));
  assert_string_equal(D.node, "fc1");
  /* and never a quiet float fallback: the graph is untouched */
  assert_int_equal(G->n_nodes, 1);
  assert_false(G->nodes[0]->keep_float);
  /* int8 is supported by the same callback */
  o.act_elem = o.w_elem = QLLC_ELEM_I8;
  assert_int_equal(qllc_quantize_graph(G, P, &o, &D), QLLC_OK);
  assert_int_equal(calls, 2);
}

/* x -> fc1 -> h -> relu -> r -> fc2 -> y   (the Relu is a separate node) */
static void chain_graph(void) {
  qllc_value *x = val("x", 1, 4), *h = val("h", 1, 2), *r = val("r", 1, 2), *y = val("y", 1, 2);
  qllc_graph_add_input(G, x);
  node(QLLC_OP_FC, "fc1", x, cst("W", 2, 2, 4, W1), cst("b", 1, 2, 1, B1), h);
  node(QLLC_OP_RELU, "relu", h, NULL, NULL, r);
  static const float W2[4] = {1, -1, 0.5f, 2};
  node(QLLC_OP_FC, "fc2", r, cst("W2", 2, 2, 2, W2), NULL, y);
  qllc_graph_add_output(G, y);
  range("x", -1, 3), range("h", -5, 5), range("r", 0, 4), range("y", -8, 8);
  seal();
}

static void test_keep_float_op_type(void **state) {
  (void)state;
  chain_graph();
  const char *keep[] = {"Relu"};
  qllc_quant_opts o = opts(QLLC_ELEM_I8, QLLC_ELEM_I8);
  o.keep_float = keep, o.n_keep_float = 1;
  assert_int_equal(qllc_quantize_graph(G, P, &o, &D), QLLC_OK);
  verify();
  qllc_node *relu = find_node("relu"), *fc1 = find_node("fc1"), *fc2 = find_node("fc2");
  assert_true(relu->keep_float);
  assert_null(relu->quant);
  assert_string_equal(relu->float_reason, "kept in float by --keep-float Relu");
  /* fc1 -> DEQUANTIZE -> relu (float) -> QUANTIZE -> fc2 -> DEQUANTIZE -> y */
  assert_int_equal(count_op(QLLC_OP_QUANTIZE), 2);
  assert_int_equal(count_op(QLLC_OP_DEQUANTIZE), 2);
  assert_int_equal(relu->in[0]->elem, QLLC_ELEM_F32);
  assert_int_equal(relu->in[0]->producer->op, QLLC_OP_DEQUANTIZE);
  assert_ptr_equal(relu->in[0]->producer->in[0], fc1->out[0]);
  assert_string_equal(fc1->out[0]->name, "h");
  /* z = round(-128 + 5 / s): 127.5 in reals, so the float scale's rounding decides the tie */
  float sh = (float)(10.0 / 255);
  expect_params(fc1->out[0], QLLC_ELEM_I8, sh, (int32_t)rint(-128.0 + 5.0 / (double)sh));
  assert_int_equal(relu->out[0]->elem, QLLC_ELEM_F32);
  assert_int_equal(fc2->in[0]->producer->op, QLLC_OP_QUANTIZE);
  assert_ptr_equal(fc2->in[0]->producer->in[0], relu->out[0]);
  expect_params(fc2->in[0], QLLC_ELEM_I8, (float)(4.0 / 255), -128);
  assert_non_null(fc1->quant), assert_non_null(fc2->quant);
  FILE *devnull = fopen("/dev/null", "w");
  assert_int_equal(qllc_quant_report_print(G, devnull, ""), 1);
  fclose(devnull);
}

static void test_keep_float_node_name(void **state) {
  (void)state;
  chain_graph();
  const char *keep[] = {"fc2"};
  qllc_quant_opts o = opts(QLLC_ELEM_I8, QLLC_ELEM_I8);
  o.keep_float = keep, o.n_keep_float = 1;
  assert_int_equal(qllc_quantize_graph(G, P, &o, &D), QLLC_OK);
  verify();
  qllc_node *relu = find_node("relu"), *fc2 = find_node("fc2");
  assert_true(fc2->keep_float);
  assert_string_equal(fc2->float_reason, "kept in float by --keep-float fc2");
  /* the Relu is a quantized clamp: output params = input params, clamp from z */
  const qllc_qnode *q = relu->quant;
  assert_int_equal(q->kind, QLLC_QK_SAME);
  float sh = (float)(10.0 / 255);
  int32_t zh = (int32_t)rint(-128.0 + 5.0 / (double)sh);
  expect_params(relu->out[0], QLLC_ELEM_I8, sh, zh);
  assert_int_equal(q->act_lo, zh), assert_int_equal(q->act_hi, 127);
  assert_int_equal(fc2->in[0]->producer->op, QLLC_OP_DEQUANTIZE);
  assert_ptr_equal(fc2->in[0]->producer->in[0], relu->out[0]);
  /* the output is computed in float: no DEQUANTIZE after it */
  assert_ptr_equal(G->outputs[0]->producer, fc2);
  assert_int_equal(G->outputs[0]->elem, QLLC_ELEM_F32);
  assert_int_equal(count_op(QLLC_OP_QUANTIZE), 1);
  assert_int_equal(count_op(QLLC_OP_DEQUANTIZE), 1);
  /* an FC also answers to the op type it came from */
  teardown(NULL), setup(NULL);
  chain_graph();
  const char *keep2[] = {"Gemm"};
  o.keep_float = keep2;
  assert_int_equal(qllc_quantize_graph(G, P, &o, &D), QLLC_OK);
  assert_true(find_node("fc1")->keep_float && find_node("fc2")->keep_float);
  assert_false(find_node("relu")->keep_float);
}

static void test_keep_float_unknown(void **state) {
  (void)state;
  chain_graph();
  const char *keep[] = {"fc3"};
  qllc_quant_opts o = opts(QLLC_ELEM_I8, QLLC_ELEM_I8);
  o.keep_float = keep, o.n_keep_float = 1;
  assert_int_equal(qllc_quantize_graph(G, P, &o, &D), QLLC_ERR_INVALID);
  assert_non_null(strstr(D.message, "fc3"));
}

static void test_strict(void **state) {
  (void)state;
  chain_graph();
  const char *keep[] = {"Relu"};
  qllc_quant_opts o = opts(QLLC_ELEM_I8, QLLC_ELEM_I8);
  o.keep_float = keep, o.n_keep_float = 1;
  o.strict = 1;
  assert_int_equal(qllc_quantize_graph(G, P, &o, &D), QLLC_ERR_STRICT);
  assert_string_equal(D.node, "relu");
  assert_non_null(strstr(D.message, "--keep-float Relu"));
  assert_int_equal(count_op(QLLC_OP_QUANTIZE), 0); /* nothing rewritten */
  o.n_keep_float = 0;
  memset(&D, 0, sizeof D);
  assert_int_equal(qllc_quantize_graph(G, P, &o, &D), QLLC_OK); /* all quantized: boundary Q/DQ are fine */
  assert_int_equal(count_op(QLLC_OP_QUANTIZE), 1);
}

/* A Div has no integer kernel: float with a reason, and a strict error naming it. */
static void test_div_not_quantizable(void **state) {
  (void)state;
  for (int strict = 0; strict < 2; strict++) {
    if (strict) teardown(NULL), setup(NULL);
    qllc_value *x = val("x", 1, 4), *h = val("h", 1, 4), *y = val("y", 1, 4);
    static const float two[1] = {2};
    qllc_graph_add_input(G, x);
    node(QLLC_OP_RELU, "relu", x, NULL, NULL, h);
    node(QLLC_OP_DIV, "div", h, cst("two", 1, 1, 1, two), NULL, y);
    qllc_graph_add_output(G, y);
    range("x", -1, 1), range("h", 0, 1), range("y", 0, 0.5f);
    seal();
    qllc_quant_opts o = opts(QLLC_ELEM_I8, QLLC_ELEM_I8);
    o.strict = strict;
    qllc_status st = qllc_quantize_graph(G, P, &o, &D);
    if (strict) {
      assert_int_equal(st, QLLC_ERR_STRICT);
      assert_string_equal(D.node, "div");
      assert_non_null(strstr(D.message, "Div has no integer kernel"));
    } else {
      assert_int_equal(st, QLLC_OK);
      verify();
      qllc_node *div = find_node("div");
      assert_true(div->keep_float);
      assert_non_null(strstr(div->float_reason, "Div"));
      assert_int_equal(div->in[0]->producer->op, QLLC_OP_DEQUANTIZE);
      assert_int_equal(div->in[1]->elem, QLLC_ELEM_F32); /* the constant stays */
    }
  }
}

/* Issue 15: a Clip whose max and a Pad whose value are graph inputs stay float with their reason (the
 * integer kernels take them as compile-time constants); strict names the node. */
static void test_runtime_operands_float(void **state) {
  (void)state;
  static const char *const names[] = {"clip", "pad"};
  static const char *const why[] = {"Clip with run-time bounds", "Pad whose value is computed at run time"};
  for (int k = 0; k < 4; k++) {
    int op = k / 2, strict = k % 2;
    teardown(NULL), setup(NULL);
    qllc_value *x = val("x", 1, 4), *h = val("h", 1, 4), *r = val("r", 1, 1), *y = val("y", 1, op ? 6 : 4);
    qllc_graph_add_input(G, x);
    qllc_graph_add_input(G, r);
    node(QLLC_OP_RELU, "relu", x, NULL, NULL, h);
    qllc_node *n = node(op ? QLLC_OP_PAD : QLLC_OP_CLIP, names[op], h, NULL, r, y); /* input 1 absent */
    if (op) {
      static const int64_t pads[4] = {0, 1, 0, 1};
      qllc_node_set_attr_ints(G, n, "pads", 4, pads);
      qllc_node_set_attr_float(G, n, "value", 0.0f);
    }
    qllc_graph_add_output(G, y);
    range("x", -1, 1), range("h", 0, 1), range("r", 0, 0.5f), range("y", 0, 1);
    seal();
    qllc_quant_opts o = opts(QLLC_ELEM_I8, QLLC_ELEM_I8);
    o.strict = strict;
    memset(&D, 0, sizeof D);
    qllc_status st = qllc_quantize_graph(G, P, &o, &D);
    if (strict) {
      assert_int_equal(st, QLLC_ERR_STRICT);
      assert_string_equal(D.node, names[op]);
      assert_non_null(strstr(D.message, why[op]));
    } else {
      assert_int_equal(st, QLLC_OK);
      verify();
      qllc_node *f = find_node(names[op]);
      assert_true(f->keep_float);
      assert_non_null(strstr(f->float_reason, why[op]));
      assert_int_equal(f->in[2], r); /* the run-time operand is read as it is */
    }
  }
}

/* Residual: x -> fc1 -> a, x -> fc2 -> b, add(a, b) -> y. One shared QUANTIZE of x. */
static void test_add_rescale(void **state) {
  (void)state;
  qllc_value *x = val("x", 1, 4), *a = val("a", 1, 2), *b = val("b", 1, 2), *y = val("y", 1, 2);
  qllc_graph_add_input(G, x);
  node(QLLC_OP_FC, "fc1", x, cst("W", 2, 2, 4, W1), NULL, a);
  node(QLLC_OP_FC, "fc2", x, cst("W2", 2, 2, 4, W1), NULL, b);
  qllc_node *add = node(QLLC_OP_ADD, "add", a, b, NULL, y);
  qllc_graph_add_output(G, y);
  range("x", -1, 3), range("a", -2, 2), range("b", -1, 1), range("y", -4, 4);
  seal();
  qllc_quant_opts o = opts(QLLC_ELEM_I8, QLLC_ELEM_I8);
  o.schema = QLLC_SCHEMA_SYMMETRIC;
  assert_int_equal(qllc_quantize_graph(G, P, &o, &D), QLLC_OK);
  verify();
  assert_int_equal(count_op(QLLC_OP_QUANTIZE), 1);
  assert_ptr_equal(find_node("fc1")->in[0], find_node("fc2")->in[0]);
  /* symmetric: s = max|r| / 127, z = 0 */
  float sa = (float)(2.0 / 127), sb = (float)(1.0 / 127), sy = (float)(4.0 / 127);
  expect_params(add->in[0], QLLC_ELEM_I8, sa, 0);
  expect_params(add->in[1], QLLC_ELEM_I8, sb, 0);
  expect_params(add->out[0], QLLC_ELEM_I8, sy, 0);
  const qllc_qnode *q = add->quant;
  assert_int_equal(q->kind, QLLC_QK_RESCALE);
  assert_int_equal(q->n_inputs, 2);
  /* M_a = sa / sy ~ 1/2, M_b ~ 1/4: the shift of the larger one (m in [2^30, 2^31)), shared */
  double Ma = (double)sa / sy, Mb = (double)sb / sy;
  int32_t n = q->shared_n;
  assert_true(q->inputs[0].m >= (1 << 30));
  assert_true(fabs(q->inputs[0].m - ldexp(Ma, n)) <= 0.5);
  assert_true(fabs(q->inputs[1].m - ldexp(Mb, n)) <= 0.5);
  assert_int_equal(q->inputs[1].n, n);
}

/* Views and max pool pass the input's parameters on, whatever the profile says of their output. */
static void test_same_overrides_profile(void **state) {
  (void)state;
  qllc_value *x = val("x", 1, 4), *h = val("h", 1, 2);
  int64_t d1[1] = {2};
  qllc_value *y = qllc_value_new(G, "y", QLLC_ELEM_F32, 1, d1);
  qllc_graph_add_input(G, x);
  node(QLLC_OP_FC, "fc1", x, cst("W", 2, 2, 4, W1), NULL, h);
  qllc_node *r = node(QLLC_OP_FLATTEN, "flat", h, NULL, NULL, y);
  qllc_graph_add_output(G, y);
  range("x", -1, 3), range("h", -2, 6), range("y", -100, 100);
  seal();
  qllc_quant_opts o = opts(QLLC_ELEM_I8, QLLC_ELEM_I8);
  assert_int_equal(qllc_quantize_graph(G, P, &o, &D), QLLC_OK);
  verify();
  float sh = (float)(8.0 / 255); /* z = round(-128 + 2 / sh) = round(-64.25) = -64 */
  expect_params(h, QLLC_ELEM_I8, sh, -64);
  expect_params(r->out[0], QLLC_ELEM_I8, sh, -64);
  assert_string_equal(r->out[0]->name, "y.q");
  assert_int_equal(((const qllc_qnode *)r->quant)->kind, QLLC_QK_SAME);
  assert_string_equal(G->outputs[0]->name, "y");
}

/* Softmax's output grid covers the range observed (issue 13: scale 1 / R, R integer); Sigmoid gets a table. */
static void test_softmax_and_table(void **state) {
  (void)state;
  qllc_value *x = val("x", 1, 4), *s = val("s", 1, 4), *y = val("y", 1, 4);
  qllc_graph_add_input(G, x);
  qllc_node *sg = node(QLLC_OP_SIGMOID, "sig", x, NULL, NULL, s);
  qllc_node *sm = node(QLLC_OP_SOFTMAX, "sm", s, NULL, NULL, y);
  qllc_graph_add_output(G, y);
  range("x", -4, 4), range("s", 0, 1), range("y", 0, 1);
  seal();
  qllc_quant_opts o = opts(QLLC_ELEM_I8, QLLC_ELEM_I8);
  assert_int_equal(qllc_quantize_graph(G, P, &o, &D), QLLC_OK);
  verify();
  expect_params(sm->out[0], QLLC_ELEM_I8, 1.0f / 255, -128); /* [0, 1] observed: s = 1/255, R = 255 */
  const qllc_qnode *q = sm->quant;
  assert_int_equal(q->kind, QLLC_QK_SOFTMAX);
  assert_int_equal(q->softmax_recip, 255);
  assert_int_equal(q->table_len, 256);
  assert_int_equal(((const int32_t *)q->table)[0], 1 << 24); /* exp(0) * 2^24 */
  q = sg->quant;
  assert_int_equal(q->kind, QLLC_QK_TABLE);
  assert_int_equal(q->table_len, 256);
  /* entry for q = z_x (real 0): sigmoid(0) = 0.5 -> y: s = 1/255, z = -128 */
  int32_t zx = sg->in[0]->zero_point;
  float ss = (float)(1.0 / 255);
  expect_params(sg->out[0], QLLC_ELEM_I8, ss, -128);
  int8_t e = ((const int8_t *)q->table)[zx + 128];
  assert_int_equal(e, (int)rint(0.5 / (double)ss) - 128);
  /* the lowest input, -4 * (1 + tiny): sigmoid(-4) = 0.018 -> round(4.58) - 128 = -123 */
  assert_int_equal(((const int8_t *)q->table)[0], (int)rint(1.0 / (1.0 + exp(-(double)sg->in[0]->scale * (-128 - zx))) / (double)ss) - 128);
}

/* A softmax whose probabilities stay within [0.04, 0.122] (issue 13's 12-class case): the grid is [0, 0.122],
 * s = 1 / floor(255 / 0.122) = 1/2090, not the whole [0, 1); a Tanh observed beyond its bound is cut to
 * [-1, 1], a Sigmoid observed in [0.2, 0.6] gets [0, 0.6]. */
static void test_bounded_ranges(void **state) {
  (void)state;
  qllc_value *x = val("x", 1, 4), *t = val("t", 1, 4), *s = val("s", 1, 4), *y = val("y", 1, 4);
  qllc_graph_add_input(G, x);
  qllc_node *th = node(QLLC_OP_TANH, "th", x, NULL, NULL, t);
  qllc_node *sg = node(QLLC_OP_SIGMOID, "sig", t, NULL, NULL, s);
  qllc_node *sm = node(QLLC_OP_SOFTMAX, "sm", s, NULL, NULL, y);
  qllc_graph_add_output(G, y);
  range("x", -4, 4), range("t", -1.5f, 1.5f), range("s", 0.2f, 0.6f), range("y", 0.04f, 0.122f);
  seal();
  qllc_quant_opts o = opts(QLLC_ELEM_I8, QLLC_ELEM_I8);
  assert_int_equal(qllc_quantize_graph(G, P, &o, &D), QLLC_OK);
  verify();
  float st = (float)(2.0 / 255);
  expect_params(th->out[0], QLLC_ELEM_I8, st, (int32_t)qllc_round_half_even(-128.0 + 1.0 / (double)st));
  expect_params(sg->out[0], QLLC_ELEM_I8, (float)((double)0.6f / 255), -128);
  const qllc_qnode *q = sm->quant;
  assert_int_equal(q->softmax_recip, 2090);
  expect_params(sm->out[0], QLLC_ELEM_I8, (float)(1.0 / 2090), -128);
}

/* An Add whose only consumer is a Relu (issue 13): the Add's output grid is the Relu's range ([0, 3],
 * not [-4, 3]) and its clamp starts at the zero point (real 0); the Relu passes the values on. An Add
 * with a second consumer keeps its own range. */
static void test_add_relu_fused(void **state) {
  (void)state;
  qllc_value *x = val("x", 1, 2), *b = val("b", 1, 2), *y = val("y", 1, 2), *r = val("r", 1, 2);
  qllc_value *y2 = val("y2", 1, 2), *r2 = val("r2", 1, 2);
  qllc_graph_add_input(G, x);
  qllc_graph_add_input(G, b);
  qllc_node *add = node(QLLC_OP_ADD, "add", x, b, NULL, y);
  qllc_node *relu = node(QLLC_OP_RELU, "relu", y, NULL, NULL, r);
  qllc_node *add2 = node(QLLC_OP_ADD, "add2", x, b, NULL, y2);
  node(QLLC_OP_RELU, "relu2", y2, NULL, NULL, r2);
  qllc_graph_add_output(G, r);
  qllc_graph_add_output(G, r2);
  qllc_graph_add_output(G, y2);
  range("x", -2, 2), range("b", -2, 1), range("y", -4, 3), range("r", 0, 3), range("y2", -4, 3), range("r2", 0, 3);
  seal();
  qllc_quant_opts o = opts(QLLC_ELEM_I8, QLLC_ELEM_I8);
  assert_int_equal(qllc_quantize_graph(G, P, &o, &D), QLLC_OK);
  verify();
  float s = (float)(3.0 / 255);
  expect_params(add->out[0], QLLC_ELEM_I8, s, -128);
  expect_params(relu->out[0], QLLC_ELEM_I8, s, -128);
  assert_int_equal(((const qllc_qnode *)add->quant)->act_lo, -128);
  float s2 = (float)(7.0 / 255);
  expect_params(add2->out[0], QLLC_ELEM_I8, s2, (int32_t)qllc_round_half_even(-128.0 + 4.0 / (double)s2));
}

/* symmetric_uint8: a non-negative class is uint8 with z = 0, a signed one symmetric int8. */
static void test_symmetric_uint8(void **state) {
  (void)state;
  qllc_value *x = val("x", 1, 4), *h = val("h", 1, 2), *y = val("y", 1, 2);
  qllc_graph_add_input(G, x);
  qllc_node *fc = node(QLLC_OP_FC, "fc1", x, cst("W", 2, 2, 4, W1), NULL, h);
  fc->act = QLLC_ACT_RELU, fc->act_lo = 0, fc->act_hi = INFINITY;
  qllc_node *mp = node(QLLC_OP_IDENTITY, "id", h, NULL, NULL, y);
  qllc_graph_add_output(G, y);
  range("x", -1, 3), range("h", 0, 5.1f), range("y", 0, 5.1f);
  seal();
  qllc_quant_opts o = opts(QLLC_ELEM_I8, QLLC_ELEM_I8);
  o.schema = QLLC_SCHEMA_SYMMETRIC_UINT8;
  assert_int_equal(qllc_quantize_graph(G, P, &o, &D), QLLC_OK);
  verify();
  expect_params(fc->in[0], QLLC_ELEM_I8, (float)(3.0 / 127), 0);
  expect_params(fc->out[0], QLLC_ELEM_U8, (float)(5.1f / 255.0), 0);
  expect_params(mp->out[0], QLLC_ELEM_U8, (float)(5.1f / 255.0), 0);
  assert_int_equal(((const qllc_qnode *)fc->quant)->out_elem, QLLC_ELEM_U8);
}

/* A ChannelAffine is a K = 1 fused layer: a as the weights, b as the bias. */
static void test_channel_affine(void **state) {
  (void)state;
  int64_t d[4] = {1, 2, 2, 2};
  qllc_value *x = qllc_value_new(G, "x", QLLC_ELEM_F32, 4, d), *y = qllc_value_new(G, "y", QLLC_ELEM_F32, 4, d);
  qllc_graph_add_input(G, x);
  static const float A[2] = {0.5f, -2.0f}, Bc[2] = {0.25f, 1.0f};
  qllc_node *ca = node(QLLC_OP_CHANNEL_AFFINE, "bn", x, cst("a", 1, 2, 1, A), cst("bb", 1, 2, 1, Bc), y);
  qllc_graph_add_output(G, y);
  range("x", -1, 1), range("y", -3, 3);
  seal();
  qllc_quant_opts o = opts(QLLC_ELEM_I16, QLLC_ELEM_I16);
  o.schema = QLLC_SCHEMA_SYMMETRIC;
  assert_int_equal(qllc_quantize_graph(G, P, &o, &D), QLLC_OK);
  verify();
  const qllc_qnode *q = ca->quant;
  assert_int_equal(q->kind, QLLC_QK_FUSED);
  assert_int_equal(q->channels, 2);
  /* symmetric i16, z = 0: a quantizes to +-32767 with s_w = |a| / 32767 */
  const int16_t *qa = q->w_packed;
  assert_int_equal(qa[0], 32767), assert_int_equal(qa[1], -32767);
  float sx = (float)(1.0 / 32767);
  for (int c = 0; c < 2; c++) {
    float sw = (float)(fabs(A[c]) / 32767);
    assert_int_equal(q->qbias[c], (int32_t)rint(Bc[c] / ((double)sx * sw)));
  }
}

/* Concat of inputs with different parameters rescales each; with equal ones, the output takes them. */
static void test_concat(void **state) {
  (void)state;
  qllc_value *x = val("x", 1, 4), *a = val("a", 1, 2), *b = val("b", 1, 2), *y = val("y", 1, 4);
  qllc_graph_add_input(G, x);
  node(QLLC_OP_FC, "fc1", x, cst("W", 2, 2, 4, W1), NULL, a);
  node(QLLC_OP_FC, "fc2", x, cst("W2", 2, 2, 4, W1), NULL, b);
  qllc_node *cc = node(QLLC_OP_CONCAT, "cat", a, b, NULL, y);
  qllc_node_set_attr_int(G, cc, "axis", 1);
  qllc_graph_add_output(G, y);
  range("x", -1, 3), range("a", -1, 1), range("b", -2, 2), range("y", -2, 2);
  seal();
  qllc_quant_opts o = opts(QLLC_ELEM_I8, QLLC_ELEM_I8);
  o.schema = QLLC_SCHEMA_SYMMETRIC;
  assert_int_equal(qllc_quantize_graph(G, P, &o, &D), QLLC_OK);
  verify();
  const qllc_qnode *q = cc->quant;
  assert_int_equal(q->kind, QLLC_QK_RESCALE);
  /* a: s = 1/127 into y: s = 2/127 -> M = 1/2: m = 2^30, n = 31; b: M = 1 -> m = 2^30, n = 30 */
  assert_int_equal(q->inputs[0].m, 1 << 30), assert_int_equal(q->inputs[0].n, 31);
  assert_int_equal(q->inputs[1].m, 1 << 30), assert_int_equal(q->inputs[1].n, 30);
}


/* issue 4's model after the float passes: Conv (+Relu) -> ChannelAffine (BatchNorm after the Relu) ->
 * Reshape. At int16 in every schema: every activation int16, the weights int16, int64 accumulators,
 * float only at the boundary, and none with quantized_io. */
static void test_issue4_model(void **state) {
  (void)state;
  qllc_schema schemas[4] = {QLLC_SCHEMA_ASYMMETRIC, QLLC_SCHEMA_SYMMETRIC, QLLC_SCHEMA_SYMMETRIC_UINT8, QLLC_SCHEMA_POWER2};
  for (int run = 0; run < 8; run++) {
    if (run) teardown(NULL), setup(NULL);
    int64_t dx[4] = {1, 2, 8, 8}, dh[4] = {1, 16, 8, 8}, dw[4] = {16, 2, 3, 3}, dy[2] = {1, 1024}, d16[1] = {16};
    float w[16 * 18], b[16], a[16], c[16];
    for (int i = 0; i < 16 * 18; i++) w[i] = (float)((i * 37 % 101) - 50) / 100.0f;
    for (int i = 0; i < 16; i++) b[i] = 0.01f * i, a[i] = 0.5f + 0.1f * i, c[i] = -0.2f + 0.03f * i;
    qllc_value *x = qllc_value_new(G, "input", QLLC_ELEM_F32, 4, dx);
    qllc_value *h = qllc_value_new(G, "h", QLLC_ELEM_F32, 4, dh), *h2 = qllc_value_new(G, "h2", QLLC_ELEM_F32, 4, dh);
    qllc_value *y = qllc_value_new(G, "output", QLLC_ELEM_F32, 2, dy);
    qllc_graph_add_input(G, x);
    qllc_node *conv = node(QLLC_OP_CONV, "conv1", x, qllc_const_new(G, "w", QLLC_ELEM_F32, 4, dw, w),
                           qllc_const_new(G, "b", QLLC_ELEM_F32, 1, d16, b), h);
    conv->act = QLLC_ACT_RELU, conv->act_lo = 0, conv->act_hi = INFINITY;
    qllc_node *bn = node(QLLC_OP_CHANNEL_AFFINE, "bn1", h, qllc_const_new(G, "a", QLLC_ELEM_F32, 1, d16, a),
                         qllc_const_new(G, "c", QLLC_ELEM_F32, 1, d16, c), h2);
    qllc_node *rs = node(QLLC_OP_RESHAPE, "reshape", h2, NULL, NULL, y);
    qllc_graph_add_output(G, y);
    range("input", 0, 1), range("h", 0, 3), range("h2", -0.2f, 5), range("output", -0.2f, 5);
    seal();
    qllc_quant_opts o = opts(QLLC_ELEM_I16, QLLC_ELEM_I16);
    o.schema = schemas[run % 4];
    o.quantized_io = run >= 4;
    o.strict = 1;
    if (qllc_quantize_graph(G, P, &o, &D) != QLLC_OK) fail_msg("run %d: %s", run, D.message);
    verify();
    for (int i = 0; i < G->n_nodes; i++) {
      qllc_node *n = G->nodes[i];
      assert_false(n->keep_float);
      for (int k = 0; k < n->n_out; k++)
        if (n->op != QLLC_OP_DEQUANTIZE) assert_int_equal(n->out[k]->elem, QLLC_ELEM_I16);
    }
    assert_int_equal(count_op(QLLC_OP_QUANTIZE) + count_op(QLLC_OP_DEQUANTIZE), o.quantized_io ? 0 : 2);
    assert_int_equal(G->inputs[0]->elem, o.quantized_io ? QLLC_ELEM_I16 : QLLC_ELEM_F32);
    assert_int_equal(G->outputs[0]->elem, o.quantized_io ? QLLC_ELEM_I16 : QLLC_ELEM_F32);
    assert_string_equal(G->outputs[0]->name, "output");
    const qllc_qnode *qc = conv->quant, *qb = bn->quant;
    assert_int_equal(qc->acc_elem, QLLC_ELEM_I64), assert_int_equal(qc->w_elem, QLLC_ELEM_I16);
    assert_int_equal(qc->channels, 16);
    assert_int_equal(qb->kind, QLLC_QK_FUSED), assert_int_equal(qb->acc_elem, QLLC_ELEM_I64);
    assert_int_equal(((const qllc_qnode *)rs->quant)->kind, QLLC_QK_SAME);
    if (o.schema == QLLC_SCHEMA_POWER2) { /* scales are powers of two */
      int e;
      assert_true(frexpf(h->scale, &e) == 0.5f);
      assert_true(frexpf(qc->w_scales[3], &e) == 0.5f);
    }
  }
}

/* A quantized graph output that another quantized node also reads: the reader takes "<name>.q". */
static void test_output_also_consumed(void **state) {
  (void)state;
  qllc_value *x = val("x", 1, 4), *h = val("h", 1, 2), *y = val("y", 1, 2);
  qllc_graph_add_input(G, x);
  qllc_node *fc = node(QLLC_OP_FC, "fc1", x, cst("W", 2, 2, 4, W1), NULL, h);
  qllc_node *relu = node(QLLC_OP_RELU, "relu", h, NULL, NULL, y);
  qllc_graph_add_output(G, h);
  qllc_graph_add_output(G, y);
  range("x", -1, 3), range("h", -2, 2), range("y", 0, 2);
  seal();
  qllc_quant_opts o = opts(QLLC_ELEM_I8, QLLC_ELEM_I8);
  assert_int_equal(qllc_quantize_graph(G, P, &o, &D), QLLC_OK);
  verify();
  assert_string_equal(fc->out[0]->name, "h.q");
  assert_ptr_equal(relu->in[0], fc->out[0]);
  assert_ptr_equal(G->outputs[0], h);
  assert_int_equal(h->elem, QLLC_ELEM_F32);
  assert_int_equal(h->producer->op, QLLC_OP_DEQUANTIZE);
  assert_int_equal(y->elem, QLLC_ELEM_F32);
  assert_int_equal(count_op(QLLC_OP_DEQUANTIZE), 2);
}

/* An Add of a constant: the constant becomes an integer constant with its own exact range. */
static void test_const_operand(void **state) {
  (void)state;
  qllc_value *x = val("x", 1, 4), *h = val("h", 1, 2), *y = val("y", 1, 2);
  static const float C[2] = {-0.5f, 1.5f};
  qllc_graph_add_input(G, x);
  node(QLLC_OP_FC, "fc1", x, cst("W", 2, 2, 4, W1), NULL, h);
  qllc_node *add = node(QLLC_OP_ADD, "add", h, cst("c", 2, 1, 2, C), NULL, y);
  qllc_graph_add_output(G, y);
  range("x", -1, 3), range("h", -2, 2), range("y", -2, 4);
  seal();
  qllc_quant_opts o = opts(QLLC_ELEM_I8, QLLC_ELEM_I8);
  o.schema = QLLC_SCHEMA_SYMMETRIC;
  assert_int_equal(qllc_quantize_graph(G, P, &o, &D), QLLC_OK);
  verify();
  qllc_value *cq = add->in[1];
  assert_string_equal(cq->name, "c.q");
  assert_non_null(cq->data);
  expect_params(cq, QLLC_ELEM_I8, (float)(1.5 / 127), 0);
  const int8_t *d = cq->data;
  assert_int_equal(d[0], (int)rint(-0.5 / (double)(float)(1.5 / 127)));
  assert_int_equal(d[1], 127);
}

/* MatMul of two activations: one multiplier s_a * s_b / s_y and both zero points. */
static void test_matmul(void **state) {
  (void)state;
  qllc_value *a = val("a", 2, 3), *b = val("b", 3, 2), *y = val("y", 2, 2);
  qllc_graph_add_input(G, a), qllc_graph_add_input(G, b);
  qllc_node *mm = node(QLLC_OP_MATMUL, "mm", a, b, NULL, y);
  qllc_graph_add_output(G, y);
  range("a", -1, 3), range("b", 0, 2), range("y", -6, 18);
  seal();
  qllc_quant_opts o = opts(QLLC_ELEM_I8, QLLC_ELEM_I8);
  assert_int_equal(qllc_quantize_graph(G, P, &o, &D), QLLC_OK);
  verify();
  const qllc_qnode *q = mm->quant;
  assert_int_equal(q->kind, QLLC_QK_MATMUL);
  float sa = (float)(4.0 / 255), sb = (float)(2.0 / 255), sy = (float)(24.0 / 255);
  assert_int_equal(q->z_x, -64), assert_int_equal(q->z_w, -128);
  assert_int_equal(q->z_y, (int32_t)rint(-128.0 + 6.0 / (double)sy));
  qllc_requant r;
  qllc_requant_make((double)sa * sb / sy, &r, NULL);
  assert_int_equal(q->m[0], r.m), assert_int_equal(q->n[0], r.n);
  assert_int_equal(count_op(QLLC_OP_QUANTIZE), 2);
}

/* AveragePool: one multiplier per window count. */
static void test_avgpool(void **state) {
  (void)state;
  int64_t dx[4] = {1, 1, 4, 4}, dy[4] = {1, 1, 2, 2};
  qllc_value *x = qllc_value_new(G, "x", QLLC_ELEM_F32, 4, dx), *y = qllc_value_new(G, "y", QLLC_ELEM_F32, 4, dy);
  qllc_graph_add_input(G, x);
  qllc_node *ap = node(QLLC_OP_AVGPOOL, "ap", x, NULL, NULL, y);
  int64_t ks[2] = {2, 2};
  qllc_node_set_attr_ints(G, ap, "kernel_shape", 2, ks);
  qllc_graph_add_output(G, y);
  range("x", -2, 2), range("y", -1, 1);
  seal();
  qllc_quant_opts o = opts(QLLC_ELEM_I8, QLLC_ELEM_I8);
  o.schema = QLLC_SCHEMA_SYMMETRIC;
  assert_int_equal(qllc_quantize_graph(G, P, &o, &D), QLLC_OK);
  const qllc_qnode *q = ap->quant;
  assert_int_equal(q->kind, QLLC_QK_RESCALE);
  /* s_x / s_y = 2: count c -> M = 2 / c: c = 1: m = 2^30, n = 29; c = 2: n = 30; c = 4: n = 31 */
  assert_int_equal(q->pool_m[1], 1 << 30), assert_int_equal(q->pool_n[1], 29);
  assert_int_equal(q->pool_m[2], 1 << 30), assert_int_equal(q->pool_n[2], 30);
  assert_int_equal(q->pool_m[4], 1 << 30), assert_int_equal(q->pool_n[4], 31);
}

/* quantized_io around float nodes: an input read by a float node is dequantized for it, an output
 * computed in float is quantized under its own name (the float node writes "<name>.f"). */
static void test_quantized_io_float_ends(void **state) {
  (void)state;
  chain_graph();
  const char *keep[] = {"fc1", "fc2"};
  qllc_quant_opts o = opts(QLLC_ELEM_I8, QLLC_ELEM_I8);
  o.keep_float = keep, o.n_keep_float = 2;
  o.quantized_io = 1;
  assert_int_equal(qllc_quantize_graph(G, P, &o, &D), QLLC_OK);
  verify();
  qllc_node *fc1 = find_node("fc1"), *fc2 = find_node("fc2");
  expect_params(G->inputs[0], QLLC_ELEM_I8, (float)(4.0 / 255), -64);
  assert_int_equal(fc1->in[0]->elem, QLLC_ELEM_F32);
  assert_int_equal(fc1->in[0]->producer->op, QLLC_OP_DEQUANTIZE);
  assert_ptr_equal(fc1->in[0]->producer->in[0], G->inputs[0]);
  /* y in [-8, 8]: s = 16 / 255, z = round(-128 + 8 / s) (127.5 in reals) */
  float sy = (float)(16.0 / 255);
  qllc_value *y = G->outputs[0];
  assert_string_equal(y->name, "y");
  expect_params(y, QLLC_ELEM_I8, sy, (int32_t)rint(-128.0 + 8.0 / (double)sy));
  assert_int_equal(y->producer->op, QLLC_OP_QUANTIZE);
  assert_string_equal(fc2->out[0]->name, "y.f");
  assert_int_equal(fc2->out[0]->elem, QLLC_ELEM_F32);
  assert_ptr_equal(y->producer->in[0], fc2->out[0]);
  /* the Relu between them is quantized: fc1's output is quantized for it, dequantized for fc2 */
  assert_int_equal(count_op(QLLC_OP_QUANTIZE), 2);
  assert_int_equal(count_op(QLLC_OP_DEQUANTIZE), 2);
}

/* symmetric_uint8: an Add joins a non-negative value (a Relu layer's output) and a signed one; their
 * kernel takes one element kind, so the whole class is symmetric int8, while a lone non-negative value
 * elsewhere is uint8. */
static void test_symmetric_uint8_classes(void **state) {
  (void)state;
  qllc_value *x = val("x", 1, 4), *a = val("a", 1, 2), *b = val("b", 1, 2), *y = val("y", 1, 2), *z = val("z", 1, 2);
  qllc_graph_add_input(G, x);
  qllc_node *fc1 = node(QLLC_OP_FC, "fc1", x, cst("W", 2, 2, 4, W1), NULL, a);
  fc1->act = QLLC_ACT_RELU, fc1->act_lo = 0, fc1->act_hi = INFINITY;
  node(QLLC_OP_FC, "fc2", x, cst("W2", 2, 2, 4, W1), NULL, b);
  qllc_node *add = node(QLLC_OP_ADD, "add", a, b, NULL, y);
  static const float W3[4] = {1, -1, 0.5f, 2};
  qllc_node *fc3 = node(QLLC_OP_FC, "fc3", y, cst("W3", 2, 2, 2, W3), NULL, z);
  fc3->act = QLLC_ACT_RELU, fc3->act_lo = 0, fc3->act_hi = INFINITY;
  qllc_graph_add_output(G, z);
  range("x", 0, 1), range("a", 0, 2.54f), range("b", -1, 1), range("y", -1, 3), range("z", 0, 5.1f);
  seal();
  qllc_quant_opts o = opts(QLLC_ELEM_I8, QLLC_ELEM_I8);
  o.schema = QLLC_SCHEMA_SYMMETRIC_UINT8;
  assert_int_equal(qllc_quantize_graph(G, P, &o, &D), QLLC_OK);
  verify();
  expect_params(fc1->in[0], QLLC_ELEM_U8, (float)(1.0 / 255), 0);       /* x alone: uint8 */
  expect_params(add->in[0], QLLC_ELEM_I8, (float)(2.54f / 127.0), 0);   /* a >= 0 but joined to b */
  expect_params(add->in[1], QLLC_ELEM_I8, (float)(1.0 / 127), 0);
  expect_params(add->out[0], QLLC_ELEM_I8, (float)(3.0 / 127), 0);
  expect_params(fc3->out[0], QLLC_ELEM_U8, (float)(5.1f / 255.0), 0);   /* z alone: uint8 */
  assert_int_equal(((const qllc_qnode *)fc1->quant)->in_elem, QLLC_ELEM_U8);
  assert_int_equal(((const qllc_qnode *)fc1->quant)->out_elem, QLLC_ELEM_I8);
}

/* A Gemm left by gemm_to_fc (run-time B) stays in float with the reason; with nothing quantized around
 * it, no Quantize/Dequantize appears. */
static void test_gemm_runtime_b(void **state) {
  (void)state;
  qllc_value *a = val("a", 2, 3), *b = val("b", 3, 2), *y = val("y", 2, 2);
  qllc_graph_add_input(G, a), qllc_graph_add_input(G, b);
  qllc_node *gm = node(QLLC_OP_GEMM, "gemm", a, b, NULL, y);
  qllc_graph_add_output(G, y);
  range("a", -1, 1), range("b", -1, 1), range("y", -3, 3);
  seal();
  qllc_quant_opts o = opts(QLLC_ELEM_I8, QLLC_ELEM_I8);
  assert_int_equal(qllc_quantize_graph(G, P, &o, &D), QLLC_OK);
  assert_true(gm->keep_float);
  assert_non_null(strstr(gm->float_reason, "B is computed at run time"));
  assert_int_equal(G->n_nodes, 1);
  assert_int_equal(y->elem, QLLC_ELEM_F32);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_fc_int8, setup, teardown),
      cmocka_unit_test_setup_teardown(test_fc_int8_pinned, setup, teardown),
      cmocka_unit_test_setup_teardown(test_int16_and_16x8, setup, teardown),
      cmocka_unit_test_setup_teardown(test_quantized_io, setup, teardown),
      cmocka_unit_test_setup_teardown(test_hash_mismatch, setup, teardown),
      cmocka_unit_test_setup_teardown(test_missing_value, setup, teardown),
      cmocka_unit_test_setup_teardown(test_unsupported, setup, teardown),
      cmocka_unit_test_setup_teardown(test_keep_float_op_type, setup, teardown),
      cmocka_unit_test_setup_teardown(test_keep_float_node_name, setup, teardown),
      cmocka_unit_test_setup_teardown(test_keep_float_unknown, setup, teardown),
      cmocka_unit_test_setup_teardown(test_strict, setup, teardown),
      cmocka_unit_test_setup_teardown(test_div_not_quantizable, setup, teardown),
      cmocka_unit_test_setup_teardown(test_add_rescale, setup, teardown),
      cmocka_unit_test_setup_teardown(test_same_overrides_profile, setup, teardown),
      cmocka_unit_test_setup_teardown(test_softmax_and_table, setup, teardown),
      cmocka_unit_test_setup_teardown(test_bounded_ranges, setup, teardown),
      cmocka_unit_test_setup_teardown(test_add_relu_fused, setup, teardown),
      cmocka_unit_test_setup_teardown(test_symmetric_uint8, setup, teardown),
      cmocka_unit_test_setup_teardown(test_channel_affine, setup, teardown),
      cmocka_unit_test_setup_teardown(test_concat, setup, teardown),
      cmocka_unit_test_setup_teardown(test_issue4_model, setup, teardown),
      cmocka_unit_test_setup_teardown(test_output_also_consumed, setup, teardown),
      cmocka_unit_test_setup_teardown(test_const_operand, setup, teardown),
      cmocka_unit_test_setup_teardown(test_matmul, setup, teardown),
      cmocka_unit_test_setup_teardown(test_avgpool, setup, teardown),
      cmocka_unit_test_setup_teardown(test_quantized_io_float_ends, setup, teardown),
      cmocka_unit_test_setup_teardown(test_symmetric_uint8_classes, setup, teardown),
      cmocka_unit_test_setup_teardown(test_gemm_runtime_b, setup, teardown),
      cmocka_unit_test_setup_teardown(test_runtime_operands_float, setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
