/* tests/lower/lower_test.c: src/lower/lower.c on hand-built graphs. Expected kernel arguments are
 * computed by hand from the ONNX semantics (written out in each test), not by the code under test. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "lower_test_util.h"

#include "lower/lower.h"

#define D(...) ((const int64_t[]){__VA_ARGS__})
#define IN(...) ((qllc_value *[]){__VA_ARGS__})

static qllc_value *val(qllc_graph *g, const char *name, int rank, const int64_t *dims) {
  qllc_value *v = qllc_value_new(g, name, QLLC_ELEM_F32, rank, dims);
  assert_non_null(v);
  return v;
}

/* A float constant filled with 0, 1, 2, ... */
static qllc_value *cst(qllc_graph *g, const char *name, int rank, const int64_t *dims) {
  int64_t n = 1;
  for (int i = 0; i < rank; i++) n *= dims[i];
  float *d = malloc((size_t)(n ? n : 1) * sizeof *d);
  for (int64_t i = 0; i < n; i++) d[i] = (float)i;
  qllc_value *v = qllc_const_new(g, name, QLLC_ELEM_F32, rank, dims, d);
  free(d);
  assert_non_null(v);
  return v;
}

/* The int64 array a CONST buffer argument points to. */
static const int64_t *i64_arg(const qllc_program *p, int instr, int k, int count) {
  const qllc_arg *a = arg(p, instr, k);
  assert_int_equal(a->kind, QLLC_ARG_BUF);
  assert_int_equal(a->buf->region, QLLC_REGION_CONST);
  assert_int_equal(a->buf->elem, QLLC_ELEM_I64);
  assert_int_equal(a->buf->size, (uint64_t)count * 8);
  assert_non_null(a->buf->data);
  return (const int64_t *)a->buf->data;
}

static void check_i64_arr(const int64_t *got, const int64_t *want, int count) {
  for (int i = 0; i < count; i++)
    if (got[i] != want[i]) fail_msg("[%d]: %lld, want %lld", i, (long long)got[i], (long long)want[i]);
}

static void dump(const qllc_program *p) {
  if (getenv("QLLC_TEST_VERBOSE")) qllc_program_print(p, stderr);
}

/* ---- conv ------------------------------------------------------------------------------------- */

static void test_conv_args(void **state) {
  (void)state;
  qllc_graph *g = qllc_graph_new("conv.onnx");
  qllc_value *x = val(g, "x", 4, D(1, 3, 8, 8));
  qllc_value *w = cst(g, "w", 4, D(4, 3, 3, 3));
  qllc_value *b = cst(g, "b", 1, D(4));
  qllc_value *y = val(g, "y", 4, D(1, 4, 4, 4));
  qllc_graph_add_input(g, x);
  qllc_graph_add_output(g, y);
  qllc_node *n = node(g, QLLC_OP_CONV, "conv1", 3, IN(x, w, b), y);
  qllc_node_set_attr_ints(g, n, "strides", 2, D(2, 2));
  qllc_node_set_attr_ints(g, n, "pads", 4, D(1, 0, 1, 0)); /* t, l, b, r */
  qllc_node_set_attr_ints(g, n, "dilations", 2, D(1, 1));
  n->act = QLLC_ACT_RELU;
  n->act_lo = 0;
  n->act_hi = INFINITY;
  qllc_program *p = lower_ok(g);
  dump(p);
  assert_int_equal(p->n_instrs, 1);
  assert_string_equal(p->instrs[0].kernel, "qllc_k_conv2d_f32_f32_f32");
  assert_ptr_equal(p->instrs[0].node, n);
  assert_int_equal(p->instrs[0].n_args, 22);
  assert_ptr_equal(arg(p, 0, 0)->buf, p->outputs[0].buf);
  assert_ptr_equal(arg(p, 0, 1)->buf, p->inputs[0].buf);
  assert_int_equal(arg(p, 0, 2)->buf->region, QLLC_REGION_CONST);
  assert_ptr_equal(arg(p, 0, 2)->buf->data, w->data);
  assert_ptr_equal(arg(p, 0, 3)->buf->data, b->data);
  /* N C H W M OH OW KH KW sh sw pt pl dh dw group */
  check_ints(p, 0, 4, 16, D(1, 3, 8, 8, 4, 4, 4, 3, 3, 2, 2, 1, 0, 1, 1, 1));
  assert_int_equal(arg(p, 0, 20)->kind, QLLC_ARG_FLOAT);
  assert_true(arg(p, 0, 20)->f == 0.0);
  assert_true(isinf(arg(p, 0, 21)->f) && arg(p, 0, 21)->f > 0);
  /* Two constants plus nothing else in CONST; both inputs and outputs in MUTABLE. */
  assert_int_equal(p->mutable_size, 3 * 64 * 4 + 4 * 16 * 4);
  assert_int_equal(p->outputs[0].buf->offset, 3 * 64 * 4);
  assert_int_equal(p->const_size, 448 + 64); /* 432 B of w aligned to 448, then b */
  qllc_program_free(p);
  qllc_graph_free(g);
}

/* 1-D conv normalised to rank 3 with 2-D attributes, no bias, no activation: H = 1, KH = 1. */
static void test_conv1d(void **state) {
  (void)state;
  qllc_graph *g = qllc_graph_new(NULL);
  qllc_value *x = val(g, "x", 3, D(2, 4, 10));
  qllc_value *w = cst(g, "w", 3, D(6, 2, 3));
  qllc_value *y = val(g, "y", 3, D(2, 6, 4));
  qllc_graph_add_input(g, x);
  qllc_graph_add_output(g, y);
  qllc_node *n = node(g, QLLC_OP_CONV, "c1d", 2, IN(x, w), y);
  qllc_node_set_attr_ints(g, n, "strides", 2, D(1, 3));
  qllc_node_set_attr_ints(g, n, "pads", 4, D(0, 1, 0, 1));
  qllc_node_set_attr_int(g, n, "group", 2);
  qllc_program *p = lower_ok(g);
  assert_int_equal(arg(p, 0, 3)->kind, QLLC_ARG_NULL);
  check_ints(p, 0, 4, 16, D(2, 4, 1, 10, 6, 1, 4, 1, 3, 1, 3, 0, 1, 1, 1, 2));
  assert_true(isinf(arg(p, 0, 20)->f) && arg(p, 0, 20)->f < 0);
  qllc_program_free(p);
  qllc_graph_free(g);
}

/* ---- views and outputs ------------------------------------------------------------------------ */

/* x -> Relu -> a -> Reshape -> r -> Sigmoid -> y: the Reshape makes no instruction, r shares a's buffer. */
static void test_reshape_is_view(void **state) {
  (void)state;
  qllc_graph *g = qllc_graph_new(NULL);
  qllc_value *x = val(g, "x", 2, D(2, 6));
  qllc_value *a = val(g, "a", 2, D(2, 6));
  qllc_value *shape = qllc_const_new(g, "shape", QLLC_ELEM_I64, 1, D(2), D(3, 4));
  qllc_value *r = val(g, "r", 2, D(3, 4));
  qllc_value *y = val(g, "y", 2, D(3, 4));
  qllc_graph_add_input(g, x);
  qllc_graph_add_output(g, y);
  node(g, QLLC_OP_RELU, "relu", 1, IN(x), a);
  node(g, QLLC_OP_RESHAPE, "reshape", 2, IN(a, shape), r);
  qllc_node *s = node(g, QLLC_OP_SIGMOID, "sig", 1, IN(r), y);
  qllc_program *p = lower_ok(g);
  dump(p);
  assert_int_equal(p->n_instrs, 2);
  assert_string_equal(p->instrs[0].kernel, "qllc_k_relu_f32_f32");
  assert_string_equal(p->instrs[1].kernel, "qllc_k_sigmoid_f32_f32");
  assert_ptr_equal(p->instrs[1].node, s);
  qllc_buffer *ab = arg(p, 0, 0)->buf;
  assert_ptr_equal(arg(p, 1, 1)->buf, ab);
  assert_int_equal(arg(p, 1, 1)->byte_offset, 0);
  assert_int_equal(ab->region, QLLC_REGION_ACT);
  assert_int_equal(ab->first_use, 0);
  assert_int_equal(ab->last_use, 1);
  check_ints(p, 0, 2, 1, D(12));
  /* The shape constant is not a kernel operand: no buffer for it. */
  for (int i = 0; i < p->n_buffers; i++) assert_ptr_not_equal(p->buffers[i]->data, shape->data);
  qllc_program_free(p);
  qllc_graph_free(g);
}

/* A graph output computed by a node is written in place, also through a view chain. */
static void test_output_in_place(void **state) {
  (void)state;
  qllc_graph *g = qllc_graph_new(NULL);
  qllc_value *x = val(g, "x", 2, D(4, 4));
  qllc_value *a = val(g, "a", 2, D(4, 4));
  qllc_value *f = val(g, "f", 2, D(4, 4));
  qllc_value *y1 = val(g, "y1", 2, D(4, 4));
  qllc_value *t = val(g, "t", 2, D(4, 4));
  qllc_value *y2 = val(g, "y2", 1, D(16));
  qllc_graph_add_input(g, x);
  qllc_graph_add_output(g, y1);
  qllc_graph_add_output(g, y2);
  node(g, QLLC_OP_RELU, "r1", 1, IN(x), y1);                 /* y1 written directly */
  node(g, QLLC_OP_TANH, "th", 1, IN(y1), a);                 /* reads the output buffer */
  node(g, QLLC_OP_SIGMOID, "sg", 1, IN(a), t);               /* t -> Identity -> Flatten -> y2 */
  node(g, QLLC_OP_IDENTITY, "id", 1, IN(t), f);
  node(g, QLLC_OP_FLATTEN, "fl", 1, IN(f), y2);
  qllc_program *p = lower_ok(g);
  dump(p);
  assert_int_equal(p->n_instrs, 3);
  assert_ptr_equal(arg(p, 0, 0)->buf, p->outputs[0].buf);
  assert_ptr_equal(arg(p, 1, 1)->buf, p->outputs[0].buf);
  assert_ptr_equal(arg(p, 2, 0)->buf, p->outputs[1].buf); /* the chain's activation IS the output */
  assert_int_equal(p->outputs[1].buf->region, QLLC_REGION_MUTABLE);
  /* Only `a` is an activation. */
  int n_act = 0;
  for (int i = 0; i < p->n_buffers; i++) n_act += p->buffers[i]->region == QLLC_REGION_ACT;
  assert_int_equal(n_act, 1);
  assert_int_equal(p->act_size, 64);
  assert_int_equal(p->outputs[0].buf->offset, 64);
  assert_int_equal(p->outputs[1].buf->offset, 128);
  assert_int_equal(p->mutable_size, 192);
  qllc_program_free(p);
  qllc_graph_free(g);
}

/* Output = Identity(input), output = input itself, output = view of a constant, two outputs of one
 * class: copies, placed after the computing instructions. */
static void test_output_copies(void **state) {
  (void)state;
  qllc_graph *g = qllc_graph_new(NULL);
  qllc_value *x = val(g, "x", 1, D(5));
  qllc_value *y = val(g, "y", 1, D(5));
  qllc_value *k = cst(g, "k", 2, D(2, 3));
  qllc_value *kv = val(g, "kv", 1, D(6));
  qllc_value *r = val(g, "r", 1, D(5));
  qllc_value *rv = val(g, "rv", 2, D(1, 5));
  qllc_graph_add_input(g, x);
  qllc_graph_add_output(g, y);
  qllc_graph_add_output(g, x);
  qllc_graph_add_output(g, kv);
  qllc_graph_add_output(g, rv);
  qllc_graph_add_output(g, r);
  node(g, QLLC_OP_IDENTITY, "id", 1, IN(x), y);
  node(g, QLLC_OP_FLATTEN, "fk", 1, IN(k), kv);
  node(g, QLLC_OP_RELU, "relu", 1, IN(x), r);
  node(g, QLLC_OP_UNSQUEEZE, "us", 1, IN(r), rv);
  qllc_program *p = lower_ok(g);
  dump(p);
  assert_int_equal(p->n_outputs, 5);
  assert_int_equal(p->n_instrs, 5);
  /* relu writes rv's buffer (the first output of its class), r copies from it */
  assert_string_equal(p->instrs[0].kernel, "qllc_k_relu_f32_f32");
  assert_ptr_equal(arg(p, 0, 0)->buf, p->outputs[3].buf);
  const qllc_buffer *src[4] = {p->inputs[0].buf, p->inputs[0].buf, NULL, p->outputs[3].buf};
  const int dst[4] = {0, 1, 2, 4};
  const int64_t n[4] = {5, 5, 6, 5};
  for (int i = 0; i < 4; i++) {
    int ins = i + 1;
    assert_string_equal(p->instrs[ins].kernel, "qllc_k_copy_f32_f32");
    assert_ptr_equal(arg(p, ins, 0)->buf, p->outputs[dst[i]].buf);
    if (src[i]) assert_ptr_equal(arg(p, ins, 1)->buf, src[i]);
    check_ints(p, ins, 2, 1, &n[i]);
  }
  assert_int_equal(arg(p, 3, 1)->buf->region, QLLC_REGION_CONST);
  assert_ptr_equal(arg(p, 3, 1)->buf->data, k->data);
  for (int i = 0; i < 5; i++) assert_int_equal(p->outputs[i].buf->region, QLLC_REGION_MUTABLE);
  assert_ptr_not_equal(p->outputs[1].buf, p->inputs[0].buf);
  qllc_program_free(p);
  qllc_graph_free(g);
}

/* An i64 constant output (a folded Shape) is copied as twice as many i32: libjit has no i64 kernels. */
static void test_output_i64_const(void **state) {
  (void)state;
  qllc_graph *g = qllc_graph_new(NULL);
  qllc_value *s = qllc_const_new(g, "shape", QLLC_ELEM_I64, 1, D(3), D(1, 2, 3));
  qllc_graph_add_output(g, s);
  qllc_program *p = lower_ok(g);
  assert_int_equal(p->n_instrs, 1);
  assert_string_equal(p->instrs[0].kernel, "qllc_k_copy_i32_i32");
  assert_ptr_equal(arg(p, 0, 0)->buf, p->outputs[0].buf);
  assert_ptr_equal(arg(p, 0, 1)->buf->data, s->data);
  check_ints(p, 0, 2, 1, D(6));
  assert_int_equal(p->outputs[0].buf->size, 24);
  qllc_program_free(p);
  qllc_graph_free(g);
}

/* ---- elementwise broadcasting ----------------------------------------------------------------- */

static void test_add_broadcast(void **state) {
  (void)state;
  qllc_graph *g = qllc_graph_new(NULL);
  qllc_value *a = val(g, "a", 3, D(2, 3, 4));
  qllc_value *b = val(g, "b", 2, D(3, 1));
  qllc_value *c = cst(g, "c", 1, D(4));
  qllc_value *y = val(g, "y", 3, D(2, 3, 4));
  qllc_value *z = val(g, "z", 3, D(2, 3, 4));
  qllc_graph_add_input(g, a);
  qllc_graph_add_input(g, b);
  qllc_graph_add_output(g, z);
  node(g, QLLC_OP_ADD, "add", 2, IN(a, b), y);
  node(g, QLLC_OP_MUL, "mul", 2, IN(c, y), z);
  qllc_program *p = lower_ok(g);
  dump(p);
  assert_int_equal(p->n_instrs, 2);
  assert_string_equal(p->instrs[0].kernel, "qllc_k_add_f32_f32_f32");
  assert_string_equal(p->instrs[1].kernel, "qllc_k_mul_f32_f32_f32");
  /* [2,3,4] + [3,1]: a contiguous (12, 4, 1); b[j][0] at j: strides (0, 1, 0). Nothing merges. */
  check_ints(p, 0, 3, 1, D(3));
  check_i64_arr(i64_arg(p, 0, 4, 3), D(2, 3, 4), 3);
  check_i64_arr(i64_arg(p, 0, 5, 3), D(12, 4, 1), 3);
  check_i64_arr(i64_arg(p, 0, 6, 3), D(0, 1, 0), 3);
  /* [4] * [2,3,4]: the two outer dims merge: dims (6, 4), c (0, 1), y (4, 1). */
  check_ints(p, 1, 3, 1, D(2));
  check_i64_arr(i64_arg(p, 1, 4, 2), D(6, 4), 2);
  check_i64_arr(i64_arg(p, 1, 5, 2), D(0, 1), 2);
  check_i64_arr(i64_arg(p, 1, 6, 2), D(4, 1), 2);
  /* Independently: every output element reads a and b where numpy says. */
  const int64_t *dims = i64_arg(p, 0, 4, 3), *as = i64_arg(p, 0, 5, 3), *bs = i64_arg(p, 0, 6, 3);
  for (int i = 0; i < 2; i++)
    for (int j = 0; j < 3; j++)
      for (int k = 0; k < 4; k++) {
        int64_t flat = (i * 3 + j) * 4 + k, rem = flat, ao = 0, bo = 0;
        for (int d = 2; d >= 0; d--) {
          int64_t idx = rem % dims[d];
          rem /= dims[d];
          ao += idx * as[d];
          bo += idx * bs[d];
        }
        assert_int_equal(ao, flat);
        assert_int_equal(bo, j);
      }
  qllc_program_free(p);
  qllc_graph_free(g);
}

/* ---- matmul batch offsets --------------------------------------------------------------------- */

static void test_matmul_batches(void **state) {
  (void)state;
  qllc_graph *g = qllc_graph_new(NULL);
  qllc_value *a = val(g, "a", 4, D(2, 1, 3, 4));
  qllc_value *b = cst(g, "b", 3, D(3, 4, 5));
  qllc_value *y = val(g, "y", 4, D(2, 3, 3, 5));
  qllc_value *v = val(g, "v", 1, D(5));
  qllc_value *w = val(g, "w", 3, D(2, 5, 2));
  qllc_value *z = val(g, "z", 2, D(2, 2));
  qllc_graph_add_input(g, a);
  qllc_graph_add_input(g, v);
  qllc_graph_add_input(g, w);
  qllc_graph_add_output(g, y);
  qllc_graph_add_output(g, z);
  node(g, QLLC_OP_MATMUL, "mm", 2, IN(a, b), y);
  node(g, QLLC_OP_MATMUL, "mv", 2, IN(v, w), z); /* [5] x [2,5,2] -> [2,2] */
  qllc_program *p = lower_ok(g);
  dump(p);
  assert_int_equal(p->n_instrs, 2);
  assert_string_equal(p->instrs[0].kernel, "qllc_k_matmul_f32_f32_f32");
  /* batches M N K */
  check_ints(p, 0, 3, 4, D(6, 3, 5, 4));
  /* batch (i, j), i < 2, j < 3: a broadcasts over j (a matrix = 12 elements), b over i (20). */
  check_i64_arr(i64_arg(p, 0, 7, 6), D(0, 0, 0, 12, 12, 12), 6);
  check_i64_arr(i64_arg(p, 0, 8, 6), D(0, 20, 40, 0, 20, 40), 6);
  check_ints(p, 1, 3, 4, D(2, 1, 2, 5));
  check_i64_arr(i64_arg(p, 1, 7, 2), D(0, 0), 2);
  check_i64_arr(i64_arg(p, 1, 8, 2), D(0, 10), 2);
  qllc_program_free(p);
  qllc_graph_free(g);
}

/* ---- concat ----------------------------------------------------------------------------------- */

static void test_concat_offsets(void **state) {
  (void)state;
  qllc_graph *g = qllc_graph_new(NULL);
  qllc_value *a = val(g, "a", 3, D(2, 2, 3));
  qllc_value *b = cst(g, "b", 3, D(2, 2, 1));
  qllc_value *c = val(g, "c", 3, D(2, 2, 4));
  qllc_value *y = val(g, "y", 3, D(2, 2, 8));
  qllc_graph_add_input(g, a);
  qllc_graph_add_input(g, c);
  qllc_graph_add_output(g, y);
  qllc_node *n = node(g, QLLC_OP_CONCAT, "cat", 3, IN(a, b, c), y);
  qllc_node_set_attr_int(g, n, "axis", -1);
  qllc_program *p = lower_ok(g);
  dump(p);
  assert_int_equal(p->n_instrs, 3);
  /* rows = 2*2, y row stride 8; column offsets 0, 3, 4 elements = 0, 12, 16 bytes */
  const uint64_t off[3] = {0, 12, 16};
  const int64_t cols[3] = {3, 1, 4};
  for (int i = 0; i < 3; i++) {
    assert_string_equal(p->instrs[i].kernel, "qllc_k_copy2d_f32_f32");
    assert_ptr_equal(arg(p, i, 0)->buf, p->outputs[0].buf);
    assert_int_equal(arg(p, i, 0)->byte_offset, off[i]);
    check_ints(p, i, 2, 4, D(4, cols[i], 8, cols[i]));
  }
  assert_ptr_equal(arg(p, 1, 1)->buf->data, b->data);
  qllc_program_free(p);
  qllc_graph_free(g);
}

/* ---- other ops -------------------------------------------------------------------------------- */

static void test_fc_packs_weights(void **state) {
  (void)state;
  qllc_graph *g = qllc_graph_new(NULL);
  qllc_value *x = val(g, "x", 2, D(5, 3));
  qllc_value *w = cst(g, "w", 2, D(2, 3)); /* W[n][k] = 3n + k */
  qllc_value *y = val(g, "y", 2, D(5, 2));
  qllc_value *x2 = val(g, "x2", 2, D(1, 3));
  qllc_value *y2 = val(g, "y2", 2, D(1, 2));
  qllc_graph_add_input(g, x);
  qllc_graph_add_input(g, x2);
  qllc_graph_add_output(g, y);
  qllc_graph_add_output(g, y2);
  qllc_node *n = node(g, QLLC_OP_FC, "fc", 2, IN(x, w), y);
  node(g, QLLC_OP_FC, "fc2", 2, IN(x2, w), y2); /* same weights: packed once */
  n->act = QLLC_ACT_CLIP;
  n->act_lo = -1;
  n->act_hi = 6;
  qllc_program *p = lower_ok(g);
  assert_string_equal(p->instrs[0].kernel, "qllc_k_fc_f32_f32_f32");
  const qllc_buffer *wb = arg(p, 0, 2)->buf;
  assert_int_equal(wb->region, QLLC_REGION_CONST);
  assert_int_equal(wb->size, 24);
  const float want[6] = {0, 3, 1, 4, 2, 5}; /* [k][n] */
  assert_memory_equal(wb->data, want, sizeof want);
  assert_int_equal(arg(p, 0, 3)->kind, QLLC_ARG_NULL);
  check_ints(p, 0, 4, 3, D(5, 2, 3));
  assert_true(arg(p, 0, 7)->f == -1.0 && arg(p, 0, 8)->f == 6.0);
  assert_ptr_equal(arg(p, 1, 2)->buf, wb);
  check_ints(p, 1, 4, 3, D(1, 2, 3));
  int n_const = 0;
  for (int i = 0; i < p->n_buffers; i++) n_const += p->buffers[i]->region == QLLC_REGION_CONST;
  assert_int_equal(n_const, 1); /* the unpacked W is not emitted */
  qllc_program_free(p);
  qllc_graph_free(g);
}

static void test_gemm_softmax_pool(void **state) {
  (void)state;
  qllc_graph *g = qllc_graph_new(NULL);
  qllc_value *a = val(g, "a", 2, D(6, 4));  /* transA: op(a) is [4][6] */
  qllc_value *b = cst(g, "b", 2, D(6, 3));
  qllc_value *c = cst(g, "c", 1, D(3));
  qllc_value *y = val(g, "y", 2, D(4, 3));
  qllc_value *s = val(g, "s", 2, D(4, 3));
  qllc_value *x = val(g, "x", 4, D(1, 2, 7, 7));
  qllc_value *m = val(g, "m", 4, D(1, 2, 3, 3));
  qllc_value *sm = val(g, "sm", 4, D(1, 2, 3, 3));
  qllc_graph_add_input(g, a);
  qllc_graph_add_input(g, x);
  qllc_graph_add_output(g, s);
  qllc_graph_add_output(g, sm);
  qllc_node *gm = node(g, QLLC_OP_GEMM, "gemm", 3, IN(a, b, c), y);
  qllc_node_set_attr_int(g, gm, "transA", 1);
  qllc_node_set_attr_float(g, gm, "alpha", 0.5f);
  qllc_node *so = node(g, QLLC_OP_SOFTMAX, "softmax", 1, IN(y), s);
  qllc_node_set_attr_int(g, so, "axis", 1);
  qllc_node *mp = node(g, QLLC_OP_MAXPOOL, "pool", 1, IN(x), m);
  qllc_node_set_attr_ints(g, mp, "kernel_shape", 2, D(3, 2));
  qllc_node_set_attr_ints(g, mp, "strides", 2, D(2, 3));
  qllc_node_set_attr_ints(g, mp, "pads", 4, D(0, 1, 1, 0));
  qllc_node *sm2 = node(g, QLLC_OP_SOFTMAX, "sm_c2d", 1, IN(m), sm);
  qllc_node_set_attr_int(g, sm2, "axis", 1);
  qllc_node_set_attr_int(g, sm2, "coerce2d", 1);
  qllc_program *p = lower_ok(g);
  dump(p);
  assert_int_equal(p->n_instrs, 4);
  assert_string_equal(p->instrs[0].kernel, "qllc_k_gemm_f32_f32_f32");
  check_ints(p, 0, 4, 5, D(4, 3, 6, 1, 0));
  assert_true(arg(p, 0, 9)->f == 0.5 && arg(p, 0, 10)->f == 1.0);
  check_ints(p, 0, 11, 2, D(0, 1)); /* c[N]: broadcast over m */
  assert_string_equal(p->instrs[1].kernel, "qllc_k_softmax_f32_f32");
  check_ints(p, 1, 2, 3, D(4, 3, 1));
  assert_string_equal(p->instrs[2].kernel, "qllc_k_maxpool2d_f32_f32");
  /* NC H W OH OW KH KW sh sw pt pl pb pr dh dw */
  check_ints(p, 2, 2, 15, D(2, 7, 7, 3, 3, 3, 2, 2, 3, 0, 1, 1, 0, 1, 1));
  check_ints(p, 3, 2, 3, D(1, 18, 1));
  qllc_program_free(p);
  qllc_graph_free(g);
}

static void test_transpose_pad(void **state) {
  (void)state;
  qllc_graph *g = qllc_graph_new(NULL);
  qllc_value *x = val(g, "x", 3, D(2, 3, 4));
  qllc_value *t = val(g, "t", 3, D(4, 2, 3));
  qllc_value *y = val(g, "y", 3, D(5, 2, 6));
  qllc_graph_add_input(g, x);
  qllc_graph_add_output(g, y);
  qllc_node *tr = node(g, QLLC_OP_TRANSPOSE, "tr", 1, IN(x), t);
  qllc_node_set_attr_ints(g, tr, "perm", 3, D(2, 0, 1));
  qllc_node *pd = node(g, QLLC_OP_PAD, "pad", 1, IN(t), y);
  qllc_node_set_attr_ints(g, pd, "pads", 6, D(1, 0, 2, 0, 0, 1));
  qllc_node_set_attr_float(g, pd, "value", 2.5f);
  qllc_program *p = lower_ok(g);
  dump(p);
  assert_string_equal(p->instrs[0].kernel, "qllc_k_transpose_f32_f32");
  check_ints(p, 0, 2, 1, D(3));
  check_i64_arr(i64_arg(p, 0, 3, 3), D(4, 2, 3), 3);
  check_i64_arr(i64_arg(p, 0, 4, 3), D(1, 12, 4), 3);
  assert_string_equal(p->instrs[1].kernel, "qllc_k_pad_f32_f32");
  check_i64_arr(i64_arg(p, 1, 3, 3), D(5, 2, 6), 3);
  check_i64_arr(i64_arg(p, 1, 4, 3), D(4, 2, 3), 3);
  check_i64_arr(i64_arg(p, 1, 5, 3), D(1, 0, 2), 3);
  assert_true(arg(p, 1, 6)->kind == QLLC_ARG_FLOAT && arg(p, 1, 6)->f == 2.5);
  qllc_program_free(p);
  qllc_graph_free(g);
}

/* ---- errors ----------------------------------------------------------------------------------- */

static void expect_unsupported(qllc_graph *g, const char *node_name, const char *kernel) {
  qllc_program *p = (qllc_program *)1;
  qllc_diag d;
  memset(&d, 0, sizeof d);
  assert_int_equal(qllc_lower(g, &p, &d), QLLC_ERR_UNSUPPORTED);
  assert_null(p);
  assert_string_equal(d.node, node_name);
  if (!strstr(d.message, kernel)) fail_msg("message '%s' does not name %s", d.message, kernel);
  if (!strstr(d.message, node_name)) fail_msg("message '%s' does not name %s", d.message, node_name);
}

static void test_unsupported(void **state) {
  (void)state;
  qllc_graph *g = qllc_graph_new("m.onnx");
  qllc_value *x = qllc_value_new(g, "x", QLLC_ELEM_I64, 1, D(4));
  qllc_value *y = qllc_value_new(g, "y", QLLC_ELEM_I64, 1, D(4));
  qllc_graph_add_input(g, x);
  qllc_graph_add_output(g, y);
  node(g, QLLC_OP_RELU, "relu64", 1, IN(x), y);
  expect_unsupported(g, "relu64", "qllc_k_relu_i64_i64");
  qllc_graph_free(g);

  g = qllc_graph_new("m.onnx");
  x = val(g, "x", 1, D(4));
  y = val(g, "y", 1, D(4));
  qllc_graph_add_input(g, x);
  qllc_graph_add_output(g, y);
  node(g, QLLC_OP_QUANTIZE, "q", 1, IN(x), y);
  expect_unsupported(g, "q", "qllc_k_quantize_linear_f32_f32");
  qllc_graph_free(g);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_conv_args),       cmocka_unit_test(test_conv1d),
      cmocka_unit_test(test_reshape_is_view), cmocka_unit_test(test_output_in_place),
      cmocka_unit_test(test_output_copies),   cmocka_unit_test(test_output_i64_const),
      cmocka_unit_test(test_add_broadcast),
      cmocka_unit_test(test_matmul_batches),  cmocka_unit_test(test_concat_offsets),
      cmocka_unit_test(test_fc_packs_weights), cmocka_unit_test(test_gemm_softmax_pool),
      cmocka_unit_test(test_transpose_pad),   cmocka_unit_test(test_unsupported),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
