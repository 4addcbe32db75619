/* tests/ir/import_test.c: src/ir/onnx_import.c on the small models made by tests/ir/data/make_models.py.
 *
 * Expected shapes and pads are computed by hand in the comments (and match the shapes onnx's own shape
 * inference writes into the models' outputs). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "ir/ir.h"

#define DATA QLLC_SOURCE_DIR "/tests/ir/data/"

static qllc_graph *load_ok(const char *path) {
  qllc_graph *g = NULL;
  qllc_diag d;
  memset(&d, 0, sizeof d);
  qllc_status st = qllc_onnx_load(path, &g, &d);
  if (st) fprintf(stderr, "%s: %s\n", path, d.message);
  assert_int_equal(st, QLLC_OK);
  assert_non_null(g);
  assert_int_equal(qllc_graph_verify(g, &d), QLLC_OK);
  return g;
}

static void load_fail(const char *path, qllc_status want, qllc_diag *d) {
  qllc_graph *g = (qllc_graph *)0x1;
  memset(d, 0, sizeof *d);
  qllc_status st = qllc_onnx_load(path, &g, d);
  assert_int_equal(st, want);
  assert_int_equal(d->status, want);
  assert_null(g);
  assert_string_equal(d->file, path);
  assert_true(d->message[0] != 0);
}

static void check_dims(const qllc_value *v, int rank, const int64_t *dims) {
  assert_int_equal(v->rank, rank);
  for (int i = 0; i < rank; i++) assert_int_equal(v->dims[i], dims[i]);
}

/* Shape -> Gather -> Unsqueeze -> Concat -> Reshape folds at load time: one node left, a Reshape with a
 * constant shape [1, 48] (batch "batch" taken as 1). */
static void test_shape_chain_folds(void **state) {
  (void)state;
  qllc_graph *g = load_ok(DATA "shape_chain.onnx");
  assert_int_equal(g->opset, 13);
  assert_int_equal(g->n_inputs, 1);
  check_dims(g->inputs[0], 4, (const int64_t[]){1, 3, 4, 4});
  assert_int_equal(g->n_nodes, 1);
  qllc_node *r = g->nodes[0];
  assert_int_equal(r->op, QLLC_OP_RESHAPE);
  assert_string_equal(r->name, "reshape");
  assert_int_equal(r->onnx_index, 7);
  const int64_t *shape;
  assert_int_equal(qllc_attr_ints(r, "shape", &shape), 2);
  assert_int_equal(shape[0], 1);
  assert_int_equal(shape[1], 48);
  for (int k = 1; k < r->n_in; k++) assert_true(r->in[k] == NULL || qllc_value_is_const(r->in[k]));
  check_dims(r->out[0], 2, (const int64_t[]){1, 48});
  assert_ptr_equal(g->outputs[0], r->out[0]);
  /* the folded values are gone (unused constants are dropped) */
  assert_null(qllc_graph_find_value(g, "s"));
  assert_null(qllc_graph_find_value(g, "shape"));
  qllc_graph_free(g);
}

/* The same chain through qllc_pass_fold_constants on a graph built by hand. */
static void test_fold_constants_pass(void **state) {
  (void)state;
  qllc_graph *g = qllc_graph_new("");
  qllc_diag d;
  const int64_t dx[3] = {2, 3, 5};
  qllc_value *x = qllc_value_new(g, "x", QLLC_ELEM_F32, 3, dx);
  qllc_graph_add_input(g, x);
  qllc_node *sh = qllc_node_new(g, QLLC_OP_SHAPE, "shape", 1, 1);
  sh->in[0] = x;
  sh->out[0] = qllc_value_new(g, "s", QLLC_ELEM_F32, 0, NULL);
  assert_int_equal(qllc_infer_node(g, sh, &d), QLLC_OK);
  const int64_t two = 2, idx[2] = {2, 0};
  qllc_value *ind = qllc_const_new(g, "ind", QLLC_ELEM_I64, 1, &two, idx);
  qllc_node *ga = qllc_node_new(g, QLLC_OP_GATHER, "gather", 2, 1);
  ga->in[0] = sh->out[0], ga->in[1] = ind;
  ga->out[0] = qllc_value_new(g, "gs", QLLC_ELEM_F32, 0, NULL);
  assert_int_equal(qllc_infer_node(g, ga, &d), QLLC_OK);
  qllc_node *mul = qllc_node_new(g, QLLC_OP_MUL, "mul", 2, 1);
  mul->in[0] = ga->out[0], mul->in[1] = ga->out[0];
  mul->out[0] = qllc_value_new(g, "sq", QLLC_ELEM_F32, 0, NULL);
  assert_int_equal(qllc_infer_node(g, mul, &d), QLLC_OK);
  qllc_node *relu = qllc_node_new(g, QLLC_OP_RELU, "relu", 1, 1);
  relu->in[0] = x;
  relu->out[0] = qllc_value_new(g, "y", QLLC_ELEM_F32, 0, NULL);
  assert_int_equal(qllc_infer_node(g, relu, &d), QLLC_OK);
  qllc_graph_add_output(g, relu->out[0]);
  qllc_graph_add_output(g, mul->out[0]);
  assert_int_equal(qllc_pass_fold_constants(g, &d), QLLC_OK);
  assert_int_equal(g->n_nodes, 1);
  assert_ptr_equal(g->nodes[0], relu);
  qllc_value *sq = qllc_graph_find_value(g, "sq");
  assert_non_null(sq);
  assert_true(qllc_value_is_const(sq));
  assert_int_equal(sq->elem, QLLC_ELEM_I64);
  assert_int_equal(((int64_t *)sq->data)[0], 25);
  assert_int_equal(((int64_t *)sq->data)[1], 4);
  assert_int_equal(qllc_graph_verify(g, &d), QLLC_OK);
  qllc_graph_free(g);
}

/* W is both an initializer and a graph input: it is a constant, and x is the only input. B is stored
 * as float_data instead of raw_data. */
static void test_initializer_as_input(void **state) {
  (void)state;
  qllc_graph *g = load_ok(DATA "init_as_input.onnx");
  assert_int_equal(g->opset, 9);
  assert_int_equal(g->n_inputs, 1);
  assert_string_equal(g->inputs[0]->name, "x");
  qllc_value *w = qllc_graph_find_value(g, "W");
  assert_non_null(w);
  assert_true(qllc_value_is_const(w));
  assert_false(w->is_input);
  check_dims(w, 2, (const int64_t[]){3, 4});
  for (int i = 0; i < 12; i++) assert_true(((float *)w->data)[i] == (float)i);
  qllc_value *b = qllc_graph_find_value(g, "B");
  assert_true(((float *)b->data)[3] == 3.25f);
  assert_int_equal(g->n_nodes, 2);
  assert_string_equal(g->nodes[0]->name, "MatMul#0"); /* nameless nodes are "<OpType>#<index>" */
  assert_string_equal(g->nodes[1]->name, "Add#1");
  check_dims(g->outputs[0], 2, (const int64_t[]){2, 4});
  qllc_graph_free(g);
}

static void test_external_data(void **state) {
  (void)state;
  qllc_diag d;
  load_fail(DATA "external_data.onnx", QLLC_ERR_UNSUPPORTED, &d);
  assert_non_null(strstr(d.message, "'W'"));
  assert_non_null(strstr(d.message, "weights.bin"));
}

static void test_truncated(void **state) {
  (void)state;
  qllc_diag d;
  load_fail(DATA "truncated.onnx", QLLC_ERR_PARSE, &d);
  assert_non_null(strstr(d.message, "not a valid ONNX model"));
  load_fail(DATA "does_not_exist.onnx", QLLC_ERR_IO, &d);
  /* a file that is not protobuf at all */
  load_fail(QLLC_SOURCE_DIR "/tests/ir/data/make_models.py", QLLC_ERR_PARSE, &d);
}

static void test_unknown_op(void **state) {
  (void)state;
  qllc_diag d;
  load_fail(DATA "unknown_op.onnx", QLLC_ERR_UNSUPPORTED, &d);
  assert_string_equal(d.node, "mystery");
  assert_non_null(strstr(d.message, "'Foo'"));
  assert_non_null(strstr(d.message, "node 'mystery'"));
}

/* 5x7 input, 2x2 kernel, stride 2, SAME_UPPER: output ceil(5/2) x ceil(7/2) = 3 x 4; total padding
 * (3-1)*2+2-5 = 1 and (4-1)*2+2-7 = 1, the odd one at the end: pads [0, 0, 1, 1]. */
static void test_conv_same_upper(void **state) {
  (void)state;
  qllc_graph *g = load_ok(DATA "conv_same_upper.onnx");
  assert_int_equal(g->n_nodes, 1);
  qllc_node *c = g->nodes[0];
  assert_int_equal(c->op, QLLC_OP_CONV);
  assert_null(qllc_node_attr(c, "auto_pad"));
  const int64_t *p;
  assert_int_equal(qllc_attr_ints(c, "pads", &p), 4);
  assert_int_equal(p[0], 0);
  assert_int_equal(p[1], 0);
  assert_int_equal(p[2], 1);
  assert_int_equal(p[3], 1);
  assert_int_equal(qllc_attr_ints(c, "dilations", &p), 2);
  assert_int_equal(qllc_attr_int(c, "group", 0), 1);
  check_dims(c->out[0], 4, (const int64_t[]){1, 4, 3, 4});
  qllc_graph_free(g);
}

/* Squeeze with a constant axes input [-1, 0] (opset 13): axes attribute [0, 2], input dropped. */
static void test_squeeze13(void **state) {
  (void)state;
  qllc_graph *g = load_ok(DATA "squeeze13.onnx");
  qllc_node *s = g->nodes[0];
  assert_int_equal(s->op, QLLC_OP_SQUEEZE);
  assert_int_equal(s->n_in, 1);
  const int64_t *a;
  assert_int_equal(qllc_attr_ints(s, "axes", &a), 2);
  assert_int_equal(a[0], 0);
  assert_int_equal(a[1], 2);
  check_dims(s->out[0], 1, (const int64_t[]){3});
  assert_null(qllc_graph_find_value(g, "axes"));
  qllc_graph_free(g);
}

static void test_dynamic_dim(void **state) {
  (void)state;
  qllc_diag d;
  load_fail(DATA "dynamic_dim.onnx", QLLC_ERR_UNSUPPORTED, &d);
  assert_non_null(strstr(d.message, "'channels'"));
  assert_non_null(strstr(d.message, "'x'"));
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_shape_chain_folds), cmocka_unit_test(test_fold_constants_pass),
      cmocka_unit_test(test_initializer_as_input), cmocka_unit_test(test_external_data),
      cmocka_unit_test(test_truncated),         cmocka_unit_test(test_unknown_op),
      cmocka_unit_test(test_conv_same_upper),   cmocka_unit_test(test_squeeze13),
      cmocka_unit_test(test_dynamic_dim),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
