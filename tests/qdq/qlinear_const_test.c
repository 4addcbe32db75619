/* tests/qdq/qlinear_const_test.c: QLinearConv / QLinearMatMul whose scales, zero points (and weights)
 * are constants compile to the quantizer's kernels with compile-time requantization (issue 6), not to
 * the run-time float path of kernels_qdq.h. Models and references: tests/qdq/make_qlinear_const.py
 * (the references follow onnxruntime's definition, checked against onnxruntime 1.30 when generated;
 * the *_act models carry the ONNX backend tests' own expected outputs).
 *   - the recognition: QLinearConv with constant int8 weights -> Conv with a FUSED record whose m/n are
 *     qllc_requant_make(x_s * w_s[c] / y_s); QLinearMatMul with a constant 2-D B -> FullyConnected
 *     (FUSED); QLinearMatMul of two activations -> MatMul (MATMUL record);
 *   - the outputs: equal to the reference on every element, or at most 1 LSB off where the float
 *     product lands on a half (the figure is printed; the backend tests' outputs must be exact);
 *   - run-time parameters (the backend test models themselves) are left to the run-time kernels.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "qdq_test_util.h"

#include "ir/ir.h"
#include "qllc.h"
#include "quant/quant.h"

#define DATA QLLC_SOURCE_DIR "/tests/qdq/data/"

/* The only live node of a one-node model. */
static const qllc_node *only_node(const qllc_graph *g) {
  const qllc_node *n = NULL;
  for (int i = 0; i < g->n_nodes; i++)
    if (!g->nodes[i]->dead) {
      assert_null(n);
      n = g->nodes[i];
    }
  assert_non_null(n);
  return n;
}

static void recognition(void **state) {
  (void)state;
  qllc_graph *g = load_recognised(DATA "qlc_conv.onnx");
  const qllc_node *n = only_node(g);
  assert_int_equal(n->op, QLLC_OP_CONV);
  const qllc_qnode *q = n->quant;
  assert_non_null(q);
  assert_int_equal(q->kind, QLLC_QK_FUSED);
  assert_int_equal(q->channels, 6);
  assert_int_equal(q->in_elem, QLLC_ELEM_U8);
  assert_int_equal(q->z_x, 131);
  assert_int_equal(q->z_y, 120);
  /* M[c] = x_s * w_s[c] / y_s from the model's constants, decomposed at compile time */
  qllc_graph *raw = NULL;
  qllc_diag d;
  assert_int_equal(qllc_onnx_load(DATA "qlc_conv.onnx", &raw, &d), QLLC_OK);
  const float *ws = qllc_graph_find_value(raw, "w_s")->data;
  const int32_t *B = qllc_graph_find_value(raw, "B")->data;
  for (int c = 0; c < 6; c++) {
    qllc_requant r;
    assert_int_equal(qllc_requant_make((double)0.021f * ws[c] / 0.047f, &r, &d), QLLC_OK);
    assert_int_equal(q->m[c], r.m);
    assert_int_equal(q->n[c], r.n);
    assert_int_equal(q->qbias[c], B[c]); /* the model's int32 bias, as is */
  }
  qllc_graph_free(raw);
  qllc_graph_free(g);

  g = load_recognised(DATA "qlc_mm.onnx");
  n = only_node(g);
  assert_int_equal(n->op, QLLC_OP_FC);
  assert_int_equal(((const qllc_qnode *)n->quant)->kind, QLLC_QK_FUSED);
  assert_int_equal(((const qllc_qnode *)n->quant)->channels, 8);
  qllc_graph_free(g);

  g = load_recognised(DATA "qlc_mm2d_act.onnx");
  n = only_node(g);
  assert_int_equal(n->op, QLLC_OP_MATMUL);
  assert_int_equal(((const qllc_qnode *)n->quant)->kind, QLLC_QK_MATMUL);
  assert_int_equal(((const qllc_qnode *)n->quant)->z_w, 114);
  qllc_graph_free(g);

  /* scales given at run time: left to the run-time kernels */
  g = load_recognised("/usr/share/libonnx-testdata/data/node/test_qlinearconv/model.onnx");
  n = only_node(g);
  assert_int_equal(n->op, QLLC_OP_QLINEAR_CONV);
  assert_null(n->quant);
  qllc_graph_free(g);
}

/* Runs model NAME on its samples; returns the elements that differ from the reference, worst in *worst. */
static long run_model(const char *name, int samples, int n_in, long *total, long *worst) {
  char p[512];
  qllc_diag d;
  memset(&d, 0, sizeof d);
  qllc_model *m = NULL;
  snprintf(p, sizeof p, DATA "%s.onnx", name);
  assert_int_equal(qllc_model_load(p, &m, &d), QLLC_OK);
  qllc_options o;
  qllc_options_init(&o);
  qllc_jit *j = NULL;
  qllc_status st = qllc_jit_compile(m, &o, &j, &d);
  if (st) fprintf(stderr, "%s: compile: %s\n", name, d.message);
  assert_int_equal(st, QLLC_OK);
  long differ = 0;
  *total = 0, *worst = 0;
  for (int s = 0; s < samples; s++) {
    qllc_tensor in[2], got, want;
    for (int k = 0; k < n_in; k++) {
      snprintf(p, sizeof p, DATA "%s_input_%d.pb", name, n_in > 1 ? k : s);
      assert_int_equal(qllc_tensor_read(p, &in[k], &d), QLLC_OK);
    }
    assert_int_equal(qllc_jit_run(j, in, n_in, &got, &d), QLLC_OK);
    snprintf(p, sizeof p, DATA "%s_output_%d.pb", name, s);
    assert_int_equal(qllc_tensor_read(p, &want, &d), QLLC_OK);
    assert_int_equal(got.elem, QLLC_U8);
    int64_t cnt = 1;
    for (uint32_t r = 0; r < want.rank; r++) cnt *= (int64_t)want.dims[r];
    for (int64_t i = 0; i < cnt; i++) {
      long e = labs((long)((const uint8_t *)got.data)[i] - (long)((const uint8_t *)want.data)[i]);
      differ += e != 0;
      if (e > *worst) *worst = e;
    }
    *total += cnt;
    for (int k = 0; k < n_in; k++) qllc_tensor_free(&in[k]);
    qllc_tensor_free(&got);
    qllc_tensor_free(&want);
  }
  printf("%s: %ld of %ld outputs differ from the reference, worst %ld LSB\n", name, differ, *total, *worst);
  qllc_jit_free(j);
  qllc_model_free(m);
  return differ;
}

static void outputs(void **state) {
  (void)state;
  long total, worst;
  run_model("qlc_conv", 4, 1, &total, &worst);
  assert_true(worst <= 1);
  run_model("qlc_mm", 4, 1, &total, &worst);
  assert_true(worst <= 1);
  assert_int_equal(run_model("qlc_mm2d_act", 1, 2, &total, &worst), 0);
  assert_int_equal(run_model("qlc_mm3d_act", 1, 2, &total, &worst), 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {cmocka_unit_test(recognition), cmocka_unit_test(outputs)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
