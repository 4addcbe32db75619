/* tests/qdq/ort_format_test.c: the two patterns of onnxruntime's QDQ format that qdq.c learned from the
 * ResNet-18 benchmark (commit ab45cd3), on a tiny committed model.
 *
 * ort_res.onnx (tests/qdq/make_ort_format.py, onnx.helper): uint8 activations, int8 per-channel weights
 * behind DequantizeLinear axis=0, and
 *   (1) int32 biases behind a DequantizeLinear with PER-CHANNEL scales s_x * s_w[c] (axis=0, int32
 *       zero points 0), as onnxruntime's quantizer writes them;
 *   (2) a residual Add -> Relu -> QuantizeLinear (the Relu left between the Add and its Q).
 * Graph: Q/DQ -> Conv1 -> Relu -> Q/DQ -> Conv2 -> Q/DQ -> Add(conv2, relu1) -> Relu -> Q -> DQ.
 * Checked:
 *   - after qllc_pass_qdq: both Convs are FUSED records whose qbias is exactly the model's int32 bias,
 *     the Add is a RESCALE record whose clamp floor is z_y (the Relu), the Relus are gone, only the
 *     input's QuantizeLinear and the output's DequantizeLinear are left;
 *   - the JIT's outputs against the generator's numpy reference (the QDQ definition: dequantize, float
 *     op, QuantizeLinear rounding half to even) on 4 inputs: within 1 LSB on 100% of the elements.
 *     1 LSB, not exact: qllc requantizes with a fixed-point multiplier and shift, the reference divides
 *     in float, so a value at a rounding boundary may land one step away; the measured figure is printed.
 * The Add's output range was calibrated before its Relu (z_y = 109), so dropping the Relu would also
 * show in the outputs (about 40% of them are clamped).
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
#define MODEL DATA "ort_res.onnx"
#define NSAMPLES 4

static const qllc_node *find_node(const qllc_graph *g, const char *name) {
  for (int i = 0; i < g->n_nodes; i++)
    if (g->nodes[i]->name && !strcmp(g->nodes[i]->name, name)) return g->nodes[i];
  return NULL;
}

static void recognised(void **state) {
  (void)state;
  qllc_graph *g = load_recognised(MODEL);
  int conv = 0, add = 0, q = 0, dq = 0, other = 0;
  for (int i = 0; i < g->n_nodes; i++) {
    const qllc_node *n = g->nodes[i];
    if (n->dead) continue;
    switch (n->op) {
    case QLLC_OP_QUANTIZE: q++; break;
    case QLLC_OP_DEQUANTIZE: dq++; break;
    case QLLC_OP_CONV:
      if (!n->quant) fprintf(stderr, "Conv '%s' not fused\n", n->name);
      assert_non_null(n->quant);
      assert_false(n->keep_float);
      assert_int_equal(((const qllc_qnode *)n->quant)->kind, QLLC_QK_FUSED);
      conv++;
      break;
    case QLLC_OP_ADD:
      if (!n->quant) fprintf(stderr, "Add '%s' not fused\n", n->name);
      assert_non_null(n->quant);
      assert_false(n->keep_float);
      assert_int_equal(((const qllc_qnode *)n->quant)->kind, QLLC_QK_RESCALE);
      add++;
      break;
    default:
      fprintf(stderr, "unexpected node left: %s '%s'\n", qllc_op_name(n->op), n->name ? n->name : "");
      other++;
    }
  }
  assert_int_equal(conv, 2);
  assert_int_equal(add, 1);
  assert_int_equal(other, 0); /* the Relus became clamps */
  assert_int_equal(q, 1);     /* the input's */
  assert_int_equal(dq, 1);    /* the output's */

  /* the Add: Relu folded in as the clamp floor z_y */
  const qllc_node *a = find_node(g, "add");
  assert_non_null(a);
  const qllc_qnode *ra = a->quant;
  assert_int_equal(ra->out_elem, QLLC_ELEM_U8);
  assert_int_equal(ra->z_y, 109);
  assert_int_equal(ra->act_lo, 109);
  assert_int_equal(ra->act_hi, 255);

  /* the Convs: the model's int32 biases used as they are (their per-channel scales are s_x * s_w[c]) */
  qllc_graph *raw = NULL;
  qllc_diag d;
  memset(&d, 0, sizeof d);
  assert_int_equal(qllc_onnx_load(MODEL, &raw, &d), QLLC_OK);
  const char *convs[2] = {"conv1", "conv2"}, *biases[2] = {"b1_quantized", "b2_quantized"},
             *wscales[2] = {"w1_scale", "w2_scale"};
  for (int k = 0; k < 2; k++) {
    const qllc_node *c = find_node(g, convs[k]);
    assert_non_null(c);
    const qllc_qnode *r = c->quant;
    const qllc_value *b = qllc_graph_find_value(raw, biases[k]), *s = qllc_graph_find_value(raw, wscales[k]);
    assert_non_null(b);
    assert_non_null(s);
    assert_int_equal(qllc_value_numel(b), 8);
    assert_int_equal(r->channels, 8);
    assert_int_equal(r->in_elem, QLLC_ELEM_U8);
    for (int ch = 0; ch < 8; ch++) {
      assert_int_equal(r->qbias[ch], ((const int32_t *)b->data)[ch]);
      assert_true(r->w_scales[ch] == ((const float *)s->data)[ch]);
    }
  }
  assert_int_equal(((const qllc_qnode *)find_node(g, "conv1")->quant)->act_lo, 0); /* relu1, z = 0 */
  qllc_graph_free(raw);
  qllc_graph_free(g);
}

static void outputs_match(void **state) {
  (void)state;
  qllc_diag d;
  memset(&d, 0, sizeof d);
  qllc_model *m = NULL;
  assert_int_equal(qllc_model_load(MODEL, &m, &d), QLLC_OK);
  qllc_options o;
  qllc_options_init(&o);
  qllc_jit *j = NULL;
  qllc_status st = qllc_jit_compile(m, &o, &j, &d);
  if (st) fprintf(stderr, "compile: %s\n", d.message);
  assert_int_equal(st, QLLC_OK);
  const float lsb = 0.12035297f; /* the output's scale (add_q_s) */
  long total = 0, within1 = 0, exact = 0, worst = 0;
  for (int s = 0; s < NSAMPLES; s++) {
    char p[512];
    qllc_tensor in, got, want;
    snprintf(p, sizeof p, DATA "ort_res_input_%d.pb", s);
    assert_int_equal(qllc_tensor_read(p, &in, &d), QLLC_OK);
    assert_int_equal(qllc_jit_run(j, &in, 1, &got, &d), QLLC_OK);
    snprintf(p, sizeof p, DATA "ort_res_output_%d.pb", s);
    assert_int_equal(qllc_tensor_read(p, &want, &d), QLLC_OK);
    int64_t n = 1;
    for (uint32_t r = 0; r < want.rank; r++) n *= (int64_t)want.dims[r];
    assert_int_equal(n, 8 * 8 * 8);
    for (int64_t i = 0; i < n; i++) {
      long e = lrintf(fabsf(((const float *)got.data)[i] - ((const float *)want.data)[i]) / lsb);
      total++;
      within1 += e <= 1;
      exact += e == 0;
      if (e > worst) worst = e;
    }
    qllc_tensor_free(&want);
    qllc_tensor_free(&in);
    qllc_tensor_free(&got);
  }
  printf("ort_res: %ld of %ld elements (%.2f%%) within 1 LSB of the QDQ reference (%.2f%% exact), worst %ld LSB\n",
         within1, total, 100.0 * within1 / total, 100.0 * exact / total, worst);
  assert_int_equal(within1, total);
  qllc_jit_free(j);
  qllc_model_free(m);
}

int main(void) {
  const struct CMUnitTest tests[] = {cmocka_unit_test(recognised), cmocka_unit_test(outputs_match)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
