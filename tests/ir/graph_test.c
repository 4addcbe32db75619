/* tests/ir/graph_test.c: src/ir/graph.c, arena.c, diag.c, elem.c, print.c and verify.c.
 *
 * Graphs are built by hand; expected strings and counts are written out literally. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "ir/ir.h"

static const int64_t D4[4] = {1, 3, 8, 8};

static qllc_node *unary(qllc_graph *g, qllc_op op, const char *name, qllc_value *x, const char *out) {
  qllc_node *n = qllc_node_new(g, op, name, 1, 1);
  assert_non_null(n);
  n->in[0] = x;
  n->out[0] = qllc_value_new(g, out, x->elem, x->rank, x->dims);
  n->out[0]->producer = n;
  return n;
}

static void test_arena(void **state) {
  (void)state;
  qllc_arena *a = qllc_arena_new();
  assert_non_null(a);
  for (int i = 0; i < 1000; i++) {
    unsigned char *p = qllc_arena_alloc(a, (size_t)(i * 7 + 1));
    assert_non_null(p);
    assert_int_equal((uintptr_t)p % 16, 0);
    for (int k = 0; k < i * 7 + 1; k++) assert_int_equal(p[k], 0);
    memset(p, 0xab, (size_t)(i * 7 + 1));
  }
  unsigned char *big = qllc_arena_alloc(a, 1 << 20);
  assert_non_null(big);
  assert_int_equal(big[(1 << 20) - 1], 0);
  assert_string_equal(qllc_arena_strdup(a, "abc"), "abc");
  assert_string_equal(qllc_arena_printf(a, "%s#%d", "Conv", 12), "Conv#12");
  int x[3] = {1, 2, 3};
  int *y = qllc_arena_memdup(a, x, sizeof x);
  assert_int_equal(y[2], 3);
  qllc_arena_free(a);
}

static void test_elem_and_status(void **state) {
  (void)state;
  assert_string_equal(qllc_elem_name(QLLC_F32), "f32");
  assert_string_equal(qllc_elem_name(QLLC_I16), "i16");
  assert_int_equal(qllc_elem_size(QLLC_F32), 4);
  assert_int_equal(qllc_elem_size(QLLC_I8), 1);
  assert_int_equal(qllc_elem_size(QLLC_U8), 1);
  assert_int_equal(qllc_elem_size(QLLC_I16), 2);
  assert_int_equal(qllc_elem_size(QLLC_I32), 4);
  assert_int_equal(qllc_elem_size(QLLC_I64), 8);
  /* the ids are stable (written into bundle headers) */
  assert_int_equal(QLLC_ELEM_I64, 5);
  assert_int_equal(QLLC_ELEM_U8, 2);
  qllc_elem e;
  assert_int_equal(qllc_elem_parse("u8", &e), 0);
  assert_int_equal(e, QLLC_ELEM_U8);
  assert_int_not_equal(qllc_elem_parse("f16", &e), 0);
  assert_string_equal(qllc_status_name(QLLC_OK), "ok");
  assert_string_equal(qllc_status_name(QLLC_ERR_PARSE), "parse error");
  assert_string_equal(qllc_status_name(QLLC_ERR_UNSUPPORTED), "unsupported");
  assert_string_equal(qllc_op_name(QLLC_OP_CONV), "Conv");
  assert_string_equal(qllc_op_name(QLLC_OP_FC), "qllc.FullyConnected");
  assert_int_equal(qllc_op_lookup("BatchNormalization"), QLLC_OP_BATCHNORM);
  assert_int_equal(qllc_op_lookup("Foo"), -1);
}

static void test_diag(void **state) {
  (void)state;
  qllc_diag d;
  memset(&d, 0, sizeof d);
  assert_int_equal(qllc_fail(&d, QLLC_ERR_INVALID, "conv1", "bad %d", 42), QLLC_ERR_INVALID);
  assert_int_equal(d.status, QLLC_ERR_INVALID);
  assert_string_equal(d.message, "bad 42");
  assert_string_equal(d.node, "conv1");
  qllc_diag_set_file(&d, "a.onnx");
  qllc_diag_set_file(&d, "b.onnx"); /* not overwritten */
  assert_string_equal(d.file, "a.onnx");
  assert_int_equal(qllc_fail(NULL, QLLC_ERR_IO, NULL, "x"), QLLC_ERR_IO);
  qllc_fail(&d, QLLC_ERR_IO, NULL, "y");
  assert_string_equal(d.node, "");
}

static void test_values(void **state) {
  (void)state;
  qllc_graph *g = qllc_graph_new("m.onnx");
  assert_non_null(g);
  assert_string_equal(g->path, "m.onnx");
  qllc_value *x = qllc_value_new(g, "x", QLLC_ELEM_F32, 4, D4);
  assert_string_equal(x->name, "x");
  assert_int_equal(x->q_axis, -1);
  assert_int_equal(qllc_value_numel(x), 192);
  assert_int_equal(qllc_value_bytes(x), 768);
  assert_false(qllc_value_is_const(x));
  /* a taken name gets a suffix; NULL makes one up; all stay unique and findable */
  qllc_value *x2 = qllc_value_new(g, "x", QLLC_ELEM_F32, 0, NULL);
  assert_string_not_equal(x2->name, "x");
  qllc_value *anon = qllc_value_new(g, NULL, QLLC_ELEM_I8, 1, D4);
  assert_non_null(anon->name);
  assert_ptr_equal(qllc_graph_find_value(g, "x"), x);
  assert_ptr_equal(qllc_graph_find_value(g, x2->name), x2);
  assert_ptr_equal(qllc_graph_find_value(g, anon->name), anon);
  assert_null(qllc_graph_find_value(g, "nope"));
  float w[3] = {1.5f, -2.0f, 3.0f};
  int64_t d3 = 3;
  qllc_value *c = qllc_const_new(g, "w", QLLC_ELEM_F32, 1, &d3, w);
  w[0] = 0; /* copied */
  assert_true(qllc_value_is_const(c));
  assert_true(((float *)c->data)[0] == 1.5f);
  /* many values: the name map grows */
  for (int i = 0; i < 3000; i++) {
    char nm[32];
    snprintf(nm, sizeof nm, "v%d", i);
    qllc_value *v = qllc_value_new(g, nm, QLLC_ELEM_F32, 1, &d3);
    assert_int_equal(v->id, g->n_values - 1);
  }
  assert_non_null(qllc_graph_find_value(g, "v2999"));
  assert_ptr_equal(qllc_graph_find_value(g, "w"), c);
  qllc_value *q = qllc_value_new(g, "q", QLLC_ELEM_I8, 4, D4);
  q->scale = 0.5f;
  q->zero_point = 3;
  qllc_value_copy_type(x2, q);
  assert_int_equal(x2->elem, QLLC_ELEM_I8);
  assert_int_equal(x2->rank, 4);
  assert_int_equal(x2->dims[1], 3);
  assert_true(x2->scale == 0.5f);
  assert_int_equal(x2->zero_point, 3);
  qllc_graph_free(g);
}

static void test_nodes_and_uses(void **state) {
  (void)state;
  qllc_graph *g = qllc_graph_new("m.onnx");
  qllc_value *x = qllc_value_new(g, "x", QLLC_ELEM_F32, 4, D4);
  assert_int_equal(qllc_graph_add_input(g, x), 0);
  assert_true(x->is_input);
  qllc_node *a = unary(g, QLLC_OP_RELU, "a", x, "ya");
  qllc_node *b = unary(g, QLLC_OP_SIGMOID, NULL, a->out[0], "yb");
  assert_string_equal(b->name, "Sigmoid#1");
  assert_int_equal(b->onnx_index, -1);
  assert_string_equal(b->op_type, "Sigmoid");
  qllc_node *c = qllc_node_new(g, QLLC_OP_ADD, "c", 2, 1);
  c->in[0] = a->out[0];
  c->in[1] = b->out[0];
  c->out[0] = qllc_value_new(g, "yc", QLLC_ELEM_F32, 4, D4);
  assert_int_equal(qllc_graph_add_output(g, c->out[0]), 0);
  qllc_graph_recount_uses(g);
  assert_int_equal(x->n_uses, 1);
  assert_int_equal(a->out[0]->n_uses, 2);
  assert_int_equal(c->out[0]->n_uses, 1); /* graph output */
  assert_ptr_equal(c->out[0]->producer, c); /* repaired by recount */
  qllc_node *users[4];
  assert_int_equal(qllc_value_users(g, a->out[0], users, 4), 2);
  assert_ptr_equal(users[0], b);
  assert_ptr_equal(users[1], c);
  assert_int_equal(qllc_value_users(g, a->out[0], users, 1), 2); /* total even when max is smaller */

  /* a new node placed before b */
  qllc_node *t = unary(g, QLLC_OP_TANH, "t", a->out[0], "yt");
  assert_ptr_equal(g->nodes[3], t);
  qllc_graph_insert_before(g, t, b);
  assert_ptr_equal(g->nodes[0], a);
  assert_ptr_equal(g->nodes[1], t);
  assert_ptr_equal(g->nodes[2], b);
  assert_ptr_equal(g->nodes[3], c);
  qllc_graph_insert_before(g, t, NULL); /* back to the end */
  assert_ptr_equal(g->nodes[3], t);
  qllc_graph_insert_before(g, t, b);

  /* b now reads t's output; c's output is replaced by t's as graph output */
  qllc_graph_replace_uses(g, a->out[0], t->out[0]);
  assert_ptr_equal(b->in[0], t->out[0]);
  assert_ptr_equal(c->in[0], t->out[0]);
  assert_ptr_equal(t->in[0], a->out[0]); /* t itself still reads a */
  qllc_diag d;
  assert_int_equal(qllc_graph_verify(g, &d), QLLC_OK);

  /* killing c: its output is the graph output, so replace that use first */
  qllc_graph_replace_uses(g, c->out[0], b->out[0]);
  assert_ptr_equal(g->outputs[0], b->out[0]);
  assert_true(b->out[0]->is_output);
  c->dead = 1;
  int nv = g->n_values;
  qllc_graph_compact(g);
  assert_int_equal(g->n_nodes, 3);
  assert_int_equal(g->n_values, nv - 1); /* yc dropped */
  assert_null(qllc_graph_find_value(g, "yc"));
  for (int i = 0; i < g->n_values; i++) assert_int_equal(g->values[i]->id, i);
  assert_ptr_equal(qllc_graph_find_value(g, "yt"), t->out[0]);
  assert_int_equal(qllc_graph_verify(g, &d), QLLC_OK);
  qllc_graph_free(g);
}

static void test_attrs(void **state) {
  (void)state;
  qllc_graph *g = qllc_graph_new("");
  qllc_node *n = qllc_node_new(g, QLLC_OP_CONV, "conv", 2, 1);
  const int64_t pads[4] = {1, 2, 3, 4};
  assert_int_equal(qllc_attr_int(n, "group", 7), 7);
  qllc_node_set_attr_int(g, n, "group", 2);
  qllc_node_set_attr_ints(g, n, "pads", 4, pads);
  qllc_node_set_attr_float(g, n, "alpha", 0.25f);
  qllc_node_set_attr_string(g, n, "auto_pad", "VALID");
  const float fl[2] = {1, 2};
  qllc_node_set_attr_floats(g, n, "fs", 2, fl);
  assert_int_equal(qllc_attr_int(n, "group", 1), 2);
  qllc_node_set_attr_int(g, n, "group", 3); /* replaces */
  assert_int_equal(qllc_attr_int(n, "group", 1), 3);
  assert_int_equal(n->n_attr, 5);
  const int64_t *p;
  assert_int_equal(qllc_attr_ints(n, "pads", &p), 4);
  assert_int_equal(p[3], 4);
  assert_int_equal(qllc_attr_ints(n, "strides", &p), 0);
  assert_null(p);
  assert_true(qllc_attr_float(n, "alpha", 1.0f) == 0.25f);
  assert_string_equal(qllc_attr_string(n, "auto_pad", "NOTSET"), "VALID");
  assert_string_equal(qllc_attr_string(n, "missing", "dflt"), "dflt");
  assert_int_equal(qllc_node_attr(n, "fs")->kind, QLLC_ATTR_FLOATS);
  qllc_node_remove_attr(n, "auto_pad");
  assert_null(qllc_node_attr(n, "auto_pad"));
  assert_int_equal(n->n_attr, 4);
  assert_int_equal(qllc_attr_int(n, "group", 1), 3);
  qllc_graph_free(g);
}

static void test_type_str(void **state) {
  (void)state;
  qllc_graph *g = qllc_graph_new("");
  char buf[128];
  qllc_value *x = qllc_value_new(g, "x", QLLC_ELEM_F32, 4, D4);
  assert_string_equal(qllc_type_str(x, buf, sizeof buf), "f32<1 x 3 x 8 x 8>");
  qllc_value *s = qllc_value_new(g, "s", QLLC_ELEM_F32, 0, NULL);
  assert_string_equal(qllc_type_str(s, buf, sizeof buf), "f32<>");
  const int64_t dq[4] = {1, 8, 8, 16};
  qllc_value *q = qllc_value_new(g, "q", QLLC_ELEM_I8, 4, dq);
  q->scale = 1.0f / 255.0f;
  q->zero_point = -128;
  assert_string_equal(qllc_type_str(q, buf, sizeof buf), "i8[s=0.0039216 z=-128]<1 x 8 x 8 x 16>");
  const int64_t dw[4] = {16, 3, 3, 3};
  qllc_value *w = qllc_value_new(g, "w", QLLC_ELEM_I8, 4, dw);
  w->q_axis = 0;
  w->q_count = 16;
  w->q_scales = qllc_arena_alloc(g->arena, 16 * sizeof(float));
  w->q_zero_points = qllc_arena_alloc(g->arena, 16 * sizeof(int32_t));
  assert_string_equal(qllc_type_str(w, buf, sizeof buf), "i8[s=per-channel(16) axis=0 z=0]<16 x 3 x 3 x 3>");
  qllc_value *u = qllc_value_new(g, "u", QLLC_ELEM_U8, 1, dq);
  u->scale = 0.5f;
  assert_string_equal(qllc_type_str(u, buf, sizeof buf), "u8[s=0.5 z=0]<1>");
  /* truncation stays NUL-terminated */
  assert_string_equal(qllc_type_str(x, buf, 6), "f32<1");
  qllc_graph_free(g);
}

static void test_print(void **state) {
  (void)state;
  qllc_graph *g = qllc_graph_new("");
  g->graph_name = "tiny";
  qllc_value *x = qllc_value_new(g, "x", QLLC_ELEM_F32, 4, D4);
  qllc_graph_add_input(g, x);
  const int64_t dw[4] = {4, 3, 3, 3};
  qllc_value *w = qllc_const_new(g, "W", QLLC_ELEM_F32, 4, dw, NULL);
  qllc_node *n = qllc_node_new(g, QLLC_OP_CONV, "conv1", 2, 1);
  n->in[0] = x, n->in[1] = w;
  const int64_t y4[4] = {1, 4, 8, 8}, pads[4] = {1, 1, 1, 1};
  n->out[0] = qllc_value_new(g, "y", QLLC_ELEM_F32, 4, y4);
  qllc_node_set_attr_ints(g, n, "pads", 4, pads);
  n->act = QLLC_ACT_RELU;
  qllc_graph_add_output(g, n->out[0]);
  char *text = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&text, &len);
  qllc_graph_print(g, f);
  fclose(f);
  assert_non_null(strstr(text, "graph tiny"));
  assert_non_null(strstr(text, "  input %x : f32<1 x 3 x 8 x 8>\n"));
  assert_non_null(strstr(text, "  const %W : f32<4 x 3 x 3 x 3>\n"));
  assert_non_null(strstr(text, "  %y = Conv(%x, %W) {pads=[1, 1, 1, 1]} act=relu : f32<1 x 4 x 8 x 8>  # conv1\n"));
  assert_non_null(strstr(text, "  output %y\n"));
  free(text);
  qllc_graph_free(g);
}

static void test_verify(void **state) {
  (void)state;
  qllc_diag d;
  /* use before definition */
  qllc_graph *g = qllc_graph_new("");
  qllc_value *x = qllc_value_new(g, "x", QLLC_ELEM_F32, 4, D4);
  qllc_graph_add_input(g, x);
  qllc_node *a = unary(g, QLLC_OP_RELU, "a", x, "ya");
  qllc_node *b = unary(g, QLLC_OP_RELU, "b", a->out[0], "yb");
  qllc_graph_add_output(g, b->out[0]);
  assert_int_equal(qllc_graph_verify(g, &d), QLLC_OK);
  qllc_graph_insert_before(g, b, a);
  memset(&d, 0, sizeof d);
  assert_int_equal(qllc_graph_verify(g, &d), QLLC_ERR_INVALID);
  assert_string_equal(d.node, "b");
  assert_non_null(strstr(d.message, "before it is defined"));
  qllc_graph_insert_before(g, a, b);
  assert_int_equal(qllc_graph_verify(g, &d), QLLC_OK);
  /* arity */
  a->n_in = 2;
  a->in = qllc_arena_alloc(g->arena, 2 * sizeof *a->in);
  a->in[0] = a->in[1] = x;
  assert_int_equal(qllc_graph_verify(g, &d), QLLC_ERR_INVALID);
  assert_string_equal(d.node, "a");
  a->n_in = 1;
  assert_int_equal(qllc_graph_verify(g, &d), QLLC_OK);
  /* quantized without scale; non-positive dim */
  a->out[0]->elem = QLLC_ELEM_I8;
  a->out[0]->scale = 0.0f;
  assert_int_equal(qllc_graph_verify(g, &d), QLLC_ERR_INVALID);
  assert_non_null(strstr(d.message, "scale"));
  a->out[0]->scale = 0.1f;
  assert_int_equal(qllc_graph_verify(g, &d), QLLC_OK);
  b->out[0]->dims[2] = 0;
  assert_int_equal(qllc_graph_verify(g, &d), QLLC_ERR_INVALID);
  assert_non_null(strstr(d.message, "yb"));
  qllc_graph_free(g);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_arena),        cmocka_unit_test(test_elem_and_status), cmocka_unit_test(test_diag),
      cmocka_unit_test(test_values),       cmocka_unit_test(test_nodes_and_uses),  cmocka_unit_test(test_attrs),
      cmocka_unit_test(test_type_str),     cmocka_unit_test(test_print),           cmocka_unit_test(test_verify),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
