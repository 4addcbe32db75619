/* tests/qdq/qdq_model_test.c: pre-quantized ONNX models (issue 6).
 *
 * qdq_cnn.onnx (tests/qdq/make_qdq_model.py, onnx.helper): uint8 activations, int8 per-channel weights
 * behind DequantizeLinear, float biases: Conv+Relu, Conv, Add (residual), MaxPool, GlobalAveragePool,
 * Flatten, Gemm, each wrapped in DequantizeLinear/QuantizeLinear. The references were computed by
 * the generator with numpy from the QDQ definition (float op on dequantized values, QuantizeLinear
 * rounding half to even); qllc runs the fused integer kernels, so a result may differ by one step
 * where the float value sits near a rounding boundary. Checked:
 *   - every unit is recognised (the graph after qllc_pass_qdq has quantization records on every op and
 *     only the model's boundary QuantizeLinear/DequantizeLinear left);
 *   - outputs within 1 LSB on >= 99% of elements and never more than 2 LSB off (figure printed);
 *   - a float bias is quantized at s_x * s_w[c] (the record's qbias against a hand computation).
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
#define NSAMPLES 8

static void recognised(void **state) {
  (void)state;
  qllc_graph *g = load_recognised(DATA "qdq_cnn.onnx");
  int with_record = 0, q = 0, dq = 0, fused = 0;
  for (int i = 0; i < g->n_nodes; i++) {
    const qllc_node *n = g->nodes[i];
    if (n->op == QLLC_OP_QUANTIZE) q++;
    else if (n->op == QLLC_OP_DEQUANTIZE) dq++;
    else {
      assert_non_null(n->quant);
      assert_false(n->keep_float);
      with_record++;
      if (((const qllc_qnode *)n->quant)->kind == QLLC_QK_FUSED) fused++;
    }
  }
  assert_int_equal(with_record, 7); /* Conv, Conv, Add, MaxPool, GlobalAveragePool, Flatten, Gemm */
  assert_int_equal(fused, 3);
  assert_int_equal(q, 1);           /* the input's */
  assert_int_equal(dq, 2);          /* the two outputs' */
  /* the first Conv: uint8 in (z = 128), its bias at s_x * s_w[c] */
  const qllc_node *c1 = NULL;
  for (int i = 0; i < g->n_nodes && !c1; i++)
    if (g->nodes[i]->op == QLLC_OP_CONV) c1 = g->nodes[i];
  assert_non_null(c1);
  const qllc_qnode *r = c1->quant;
  assert_int_equal(r->in_elem, QLLC_ELEM_U8);
  assert_int_equal(r->z_x, 128);
  assert_int_equal(r->z_y, 0);
  assert_int_equal(r->act_lo, 0); /* the Relu: z_y */
  qllc_graph_free(g);
  /* the float bias b1 from the original model, quantized by hand */
  qllc_graph *raw = NULL;
  qllc_diag d;
  assert_int_equal(qllc_onnx_load(DATA "qdq_cnn.onnx", &raw, &d), QLLC_OK);
  const qllc_value *b1 = qllc_graph_find_value(raw, "b1"), *s1 = qllc_graph_find_value(raw, "w1_s");
  assert_non_null(b1);
  assert_non_null(s1);
  g = load_recognised(DATA "qdq_cnn.onnx");
  for (int i = 0; i < g->n_nodes; i++)
    if (g->nodes[i]->op == QLLC_OP_CONV) {
      r = g->nodes[i]->quant;
      break;
    }
  for (int c = 0; c < 8; c++) {
    double sb = (double)0.02f * ((const float *)s1->data)[c];
    long want = lrint(((const float *)b1->data)[c] / sb);
    assert_true(labs(want - r->qbias[c]) <= 1);
    assert_true(fabsf(r->w_scales[c] - ((const float *)s1->data)[c]) == 0.0f);
  }
  qllc_graph_free(raw);
  qllc_graph_free(g);
}

static void outputs_match(void **state) {
  (void)state;
  qllc_diag d;
  memset(&d, 0, sizeof d);
  qllc_model *m = NULL;
  assert_int_equal(qllc_model_load(DATA "qdq_cnn.onnx", &m, &d), QLLC_OK);
  qllc_options o;
  qllc_options_init(&o);
  qllc_jit *j = NULL;
  qllc_status st = qllc_jit_compile(m, &o, &j, &d);
  if (st) fprintf(stderr, "compile: %s\n", d.message);
  assert_int_equal(st, QLLC_OK);
  const char *outs[2] = {"output", "feat"};
  const float lsb[2] = {0.04f, 0.06f};
  long total = 0, within1 = 0, worst = 0;
  for (int s = 0; s < NSAMPLES; s++) {
    char p[512];
    qllc_tensor in, got[2], want;
    snprintf(p, sizeof p, DATA "qdq_cnn_input_%d.pb", s);
    assert_int_equal(qllc_tensor_read(p, &in, &d), QLLC_OK);
    assert_int_equal(qllc_jit_run(j, &in, 1, got, &d), QLLC_OK);
    for (int k = 0; k < 2; k++) {
      snprintf(p, sizeof p, DATA "qdq_cnn_%s_%d.pb", k ? "feat" : "output", s);
      assert_int_equal(qllc_tensor_read(p, &want, &d), QLLC_OK);
      int64_t n = 1;
      for (uint32_t r = 0; r < want.rank; r++) n *= (int64_t)want.dims[r];
      for (int64_t i = 0; i < n; i++) {
        long e = lrintf(fabsf(((const float *)got[k].data)[i] - ((const float *)want.data)[i]) / lsb[k]);
        total++;
        within1 += e <= 1;
        if (e > worst) worst = e;
      }
      qllc_tensor_free(&want);
      (void)outs;
    }
    qllc_tensor_free(&in);
    qllc_tensor_free(&got[0]);
    qllc_tensor_free(&got[1]);
  }
  printf("qdq_cnn: %ld of %ld elements (%.2f%%) within 1 LSB of the QDQ reference, worst %ld LSB\n", within1, total,
         100.0 * within1 / total, worst);
  assert_true(within1 * 100 >= total * 99);
  assert_true(worst <= 2);
  qllc_jit_free(j);
  qllc_model_free(m);
}

/* torch_qnnpack.onnx (tests/qdq/make_torch_model.py): eager-mode quantized by torch 1.13 (qnnpack),
 * exported as QDQ; torch's own quantized outputs for 40 inputs. Every unit must fuse, and qllc must
 * match torch within 1 LSB on >= 99% of the elements. */
static void torch_model(void **state) {
  (void)state;
  qllc_graph *g = load_recognised(DATA "torch_qnnpack.onnx");
  for (int i = 0; i < g->n_nodes; i++)
    if (g->nodes[i]->op != QLLC_OP_QUANTIZE && g->nodes[i]->op != QLLC_OP_DEQUANTIZE) assert_non_null(g->nodes[i]->quant);
  qllc_graph_free(g);
  enum { N = 40, IN = 3 * 8 * 8, OUT = 5 };
  static float xs[N * IN], ys[N * OUT];
  FILE *f = fopen(DATA "torch_in.bin", "rb");
  assert_non_null(f);
  assert_int_equal(fread(xs, sizeof(float), N * IN, f), N * IN);
  fclose(f);
  f = fopen(DATA "torch_out.bin", "rb");
  assert_non_null(f);
  assert_int_equal(fread(ys, sizeof(float), N * OUT, f), N * OUT);
  fclose(f);
  qllc_diag d;
  qllc_model *m = NULL;
  assert_int_equal(qllc_model_load(DATA "torch_qnnpack.onnx", &m, &d), QLLC_OK);
  qllc_options o;
  qllc_options_init(&o);
  qllc_jit *j = NULL;
  assert_int_equal(qllc_jit_compile(m, &o, &j, &d), QLLC_OK);
  const float lsb = 0.001230805180966854f; /* the fc output scale torch chose */
  long within1 = 0, worst = 0;
  for (int s = 0; s < N; s++) {
    qllc_tensor in = {0}, got;
    in.elem = QLLC_F32;
    in.rank = 4;
    in.dims[0] = 1, in.dims[1] = 3, in.dims[2] = 8, in.dims[3] = 8;
    in.data = xs + s * IN;
    assert_int_equal(qllc_jit_run(j, &in, 1, &got, &d), QLLC_OK);
    for (int i = 0; i < OUT; i++) {
      long e = lrintf(fabsf(((const float *)got.data)[i] - ys[s * OUT + i]) / lsb);
      within1 += e <= 1;
      if (e > worst) worst = e;
    }
    qllc_tensor_free(&got);
  }
  printf("torch 1.13 qnnpack model: %ld of %d elements (%.2f%%) within 1 LSB of torch, worst %ld LSB\n", within1, N * OUT,
         100.0 * within1 / (N * OUT), worst);
  assert_true(within1 * 100 >= N * OUT * 99);
  qllc_jit_free(j);
  qllc_model_free(m);
}

int main(void) {
  const struct CMUnitTest tests[] = {cmocka_unit_test(recognised), cmocka_unit_test(outputs_match),
                                     cmocka_unit_test(torch_model)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
