/* tests/quant/report_test.c: the precision report of a quantized graph names every node, its precision
 * and scales, each node kept in float with the reason, and each clipped bias with its worst value. */
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

static qllc_value *val(const char *name, int64_t d0, int64_t d1) {
  int64_t dims[2] = {d0, d1};
  return qllc_value_new(G, name, QLLC_ELEM_F32, 2, dims);
}
static void range(const char *name, float lo, float hi) {
  float v[2] = {lo, hi};
  qllc_hist_record(qllc_profile_add(P, name), v, 2);
}

/* x -> fc1 (bias far too large for s_x * s_w in int32) -> h -> relu -> r -> sm (Softmax) -> y */
static void build(void) {
  G = qllc_graph_new("t.onnx");
  P = qllc_profile_new(0, 64);
  qllc_value *x = val("x", 1, 4), *h = val("h", 1, 2), *r = val("r", 1, 2), *y = val("y", 1, 2);
  static const float W[8] = {0.5f, -0.25f, 1.0f, 0.125f, -2.0f, 0.75f, 0.3f, -0.6f};
  static const float B[2] = {1.0e6f, 0.1f};
  int64_t wd[2] = {2, 4}, bd[1] = {2};
  qllc_graph_add_input(G, x);
  qllc_node *fc = qllc_node_new(G, QLLC_OP_FC, "fc1", 3, 1);
  fc->in[0] = x, fc->in[1] = qllc_const_new(G, "W", QLLC_ELEM_F32, 2, wd, W);
  fc->in[2] = qllc_const_new(G, "b", QLLC_ELEM_F32, 1, bd, B);
  fc->out[0] = h, h->producer = fc;
  qllc_node *relu = qllc_node_new(G, QLLC_OP_RELU, "relu", 1, 1);
  relu->in[0] = h, relu->out[0] = r, r->producer = relu;
  qllc_node *sm = qllc_node_new(G, QLLC_OP_SOFTMAX, "sm", 1, 1);
  sm->in[0] = r, sm->out[0] = y, y->producer = sm;
  qllc_graph_add_output(G, y);
  range("x", -1, 3), range("h", -4, 4), range("r", 0, 4), range("y", 0, 1);
  qllc_graph_recount_uses(G);
  P->graph_hash = qllc_graph_hash(G);
}

static char *report(int *n_float) {
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);
  assert_non_null(f);
  *n_float = qllc_quant_report_print(G, f, " * ");
  fclose(f);
  fputs(buf, stdout); /* for ctest -V */
  return buf;
}

static int count_lines(const char *s) {
  int n = 0;
  for (; *s; s++) n += *s == '\n';
  return n;
}

static void test_report_int8(void **state) {
  (void)state;
  build();
  const char *keep[] = {"Softmax"};
  qllc_quant_opts o;
  memset(&o, 0, sizeof o);
  o.act_elem = o.w_elem = QLLC_ELEM_I8;
  o.schema = QLLC_SCHEMA_ASYMMETRIC;
  o.keep_float = keep, o.n_keep_float = 1;
  o.widen_for_bias = 0;
  qllc_diag d;
  memset(&d, 0, sizeof d);
  assert_int_equal(qllc_quantize_graph(G, P, &o, &d), QLLC_OK);
  int n_float;
  char *r = report(&n_float);
  assert_int_equal(n_float, 1);
  /* every node has its line, every line the prefix */
  for (int i = 0; i < G->n_nodes; i++) assert_non_null(strstr(r, G->nodes[i]->name));
  for (const char *l = r; *l; l = strchr(l, '\n') + 1) assert_memory_equal(l, " * ", 3);
  assert_non_null(strstr(r, "FullyConnected    i8 x i8 -> i8  acc i32  bias i32"));
  assert_non_null(strstr(r, "w per-channel(2)  BIAS CLIPPED"));
  assert_null(strstr(r, "widened"));
  /* x: s = 4/255 printed with enough digits to read back, z = -64 */
  char xs[64];
  snprintf(xs, sizeof xs, "x s=%.8g z=-64", (double)(float)(4.0 / 255));
  assert_non_null(strstr(r, xs));
  assert_non_null(strstr(r, "float  (kept in float by --keep-float Softmax)"));
  assert_non_null(strstr(r, "bias clipped: node 'fc1': 1 channel, worst"));
  /* the worst value: 1e6 / (s_x * s_w[0]) with s_w[0] = 1/127 */
  double worst = 1.0e6 / ((double)(float)(4.0 / 255) * (double)(1.0f / 127));
  char ws[32];
  snprintf(ws, sizeof ws, "worst %.4g", worst);
  assert_non_null(strstr(r, ws));
  assert_non_null(strstr(r, "(float 1e+06)"));
  assert_non_null(strstr(r, "QuantizeLinear    f32 -> i8"));
  assert_non_null(strstr(r, "DequantizeLinear  i8 -> f32"));
  assert_non_null(strstr(r, "Softmax           float  (kept in float by --keep-float Softmax)"));
  assert_non_null(strstr(r, "summary: 2 nodes quantized (int8), 1 in float, 2 quantize/dequantize, 1 clipped bias"));
  /* header + 5 nodes (Q, fc1, relu, DQ, sm) + 1 clipped bias + summary */
  assert_int_equal(count_lines(r), 1 + 5 + 1 + 1);
  free(r);
  /* --strict turns the clipped bias (and the float node) into an error */
  qllc_graph_free(G), qllc_profile_free(P);
  build();
  o.n_keep_float = 0;
  o.strict = 1;
  assert_int_equal(qllc_quantize_graph(G, P, &o, &d), QLLC_ERR_STRICT);
  assert_string_equal(d.node, "fc1");
  assert_non_null(strstr(d.message, "bias clipped"));
  qllc_graph_free(G), qllc_profile_free(P);
}

static void test_report_16x8(void **state) {
  (void)state;
  build();
  qllc_quant_opts o;
  memset(&o, 0, sizeof o);
  o.act_elem = QLLC_ELEM_I16, o.w_elem = QLLC_ELEM_I8;
  o.schema = QLLC_SCHEMA_SYMMETRIC;
  o.widen_for_bias = 1; /* the way out: the wider weight scale keeps the bias in int32 */
  qllc_diag d;
  memset(&d, 0, sizeof d);
  assert_int_equal(qllc_quantize_graph(G, P, &o, &d), QLLC_OK);
  int n_float;
  char *r = report(&n_float);
  assert_int_equal(n_float, 0);
  assert_non_null(strstr(r, "i16 x i8 -> i16  acc i64  bias i32"));
  assert_non_null(strstr(r, "Softmax"));
  assert_null(strstr(r, "bias clipped"));
  /* the bias 1e6 did not fit with s_w = 2/127: channel 0's weight scale was widened, channel 1's not */
  assert_non_null(strstr(r, "w per-channel(2)  w widened for the bias in 1 channel\n"));
  assert_null(strstr(r, "float  ("));
  assert_non_null(strstr(r, "summary: 3 nodes quantized (int16), 0 in float, 2 quantize/dequantize, 0 clipped biases"));
  /* the Relu's clamp starts at z = 0 */
  assert_non_null(strstr(r, "clamp [0, 32767]"));
  free(r);
  qllc_graph_free(G), qllc_profile_free(P);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_report_int8),
      cmocka_unit_test(test_report_16x8),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
