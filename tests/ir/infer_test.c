/* tests/ir/infer_test.c: src/ir/infer*.c (normalisation, shape inference) and src/ir/const_eval.c.
 *
 * Nodes are built by hand; every expected shape, pad and value is worked out in the comment next to
 * it from the ONNX operator definitions (and PyTorch's pooling rule for ceil_mode). */
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

#define DIMS(...) ((const int64_t[]){__VA_ARGS__})
#define NDIMS(...) ((int)(sizeof((int64_t[]){__VA_ARGS__}) / sizeof(int64_t)))

static qllc_graph *G;
static qllc_diag D;

static int setup(void **state) {
  (void)state;
  G = qllc_graph_new("t.onnx");
  G->opset = 13;
  memset(&D, 0, sizeof D);
  return 0;
}
static int teardown(void **state) {
  (void)state;
  qllc_graph_free(G);
  return 0;
}

static qllc_value *in(int rank, const int64_t *dims) { return qllc_value_new(G, "x", QLLC_ELEM_F32, rank, dims); }
static qllc_value *ci64(int n, const int64_t *v) {
  int64_t d = n;
  return qllc_const_new(G, "c", QLLC_ELEM_I64, 1, &d, v);
}
static qllc_value *cf32(int rank, const int64_t *dims, const float *v) { return qllc_const_new(G, "f", QLLC_ELEM_F32, rank, dims, v); }

/* A node with n_in inputs (NULL allowed) and one fresh output. */
static qllc_node *mk(qllc_op op, const char *name, int n_in, ...) {
  qllc_node *n = qllc_node_new(G, op, name, n_in, 1);
  va_list ap;
  va_start(ap, n_in);
  for (int k = 0; k < n_in; k++) n->in[k] = va_arg(ap, qllc_value *);
  va_end(ap);
  n->out[0] = qllc_value_new(G, "y", QLLC_ELEM_F32, 0, NULL);
  n->out[0]->producer = n;
  return n;
}

static void expect_shape(qllc_node *n, int rank, const int64_t *dims) {
  qllc_status st = qllc_infer_node(G, n, &D);
  if (st) fprintf(stderr, "%s\n", D.message);
  assert_int_equal(st, QLLC_OK);
  assert_int_equal(n->out[0]->rank, rank);
  for (int i = 0; i < rank; i++) assert_int_equal(n->out[0]->dims[i], dims[i]);
}
#define EXPECT(n, ...) expect_shape(n, NDIMS(__VA_ARGS__), DIMS(__VA_ARGS__))

static void expect_fail(qllc_node *n, qllc_status want) {
  memset(&D, 0, sizeof D);
  assert_int_equal(qllc_infer_node(G, n, &D), want);
  assert_string_equal(D.node, n->name);
  assert_non_null(strstr(D.message, n->name));
}

static void expect_ints(const qllc_node *n, const char *attr, int count, const int64_t *v) {
  const int64_t *a;
  assert_int_equal(qllc_attr_ints(n, attr, &a), count);
  for (int i = 0; i < count; i++) assert_int_equal(a[i], v[i]);
}
#define EXPECT_INTS(n, attr, ...) expect_ints(n, attr, NDIMS(__VA_ARGS__), DIMS(__VA_ARGS__))

static void test_matmul(void **state) {
  (void)state;
  /* batched: [2,3,4,5] x [5,6] -> [2,3,4,6] */
  EXPECT(mk(QLLC_OP_MATMUL, "mm1", 2, in(4, DIMS(2, 3, 4, 5)), in(2, DIMS(5, 6))), 2, 3, 4, 6);
  /* 1-D left operand is promoted to [1,5] and the 1 dropped: [5] x [2,5,6] -> [2,6] */
  EXPECT(mk(QLLC_OP_MATMUL, "mm2", 2, in(1, DIMS(5)), in(3, DIMS(2, 5, 6))), 2, 6);
  /* 1-D right operand: [3,4] x [4] -> [3] */
  EXPECT(mk(QLLC_OP_MATMUL, "mm3", 2, in(2, DIMS(3, 4)), in(1, DIMS(4))), 3);
  /* broadcast batch dims: [1,4,5] x [3,5,2] -> [3,4,2] */
  EXPECT(mk(QLLC_OP_MATMUL, "mm4", 2, in(3, DIMS(1, 4, 5)), in(3, DIMS(3, 5, 2))), 3, 4, 2);
  expect_fail(mk(QLLC_OP_MATMUL, "mm_bad", 2, in(2, DIMS(3, 4)), in(2, DIMS(5, 2))), QLLC_ERR_INVALID);
}

static void test_broadcast(void **state) {
  (void)state;
  /* [2,1,4] + [3,1] -> [2,3,4] */
  EXPECT(mk(QLLC_OP_ADD, "add", 2, in(3, DIMS(2, 1, 4)), in(2, DIMS(3, 1))), 2, 3, 4);
  EXPECT(mk(QLLC_OP_MUL, "mul_scalar", 2, in(2, DIMS(2, 3)), in(0, NULL)), 2, 3);
  expect_fail(mk(QLLC_OP_SUB, "sub_bad", 2, in(2, DIMS(2, 3)), in(1, DIMS(4))), QLLC_ERR_INVALID);
}

static void test_reshape_flatten(void **state) {
  (void)state;
  /* 0 copies dim 0, -1 takes the rest: [2,3,4] with [0,-1] -> [2,12]; the shape input becomes "shape" */
  qllc_node *r = mk(QLLC_OP_RESHAPE, "r", 2, in(3, DIMS(2, 3, 4)), ci64(2, DIMS(0, -1)));
  EXPECT(r, 2, 12);
  EXPECT_INTS(r, "shape", 2, 12);
  assert_int_equal(r->n_in, 1);
  /* idempotent: inferring again gives the same */
  EXPECT(r, 2, 12);
  expect_fail(mk(QLLC_OP_RESHAPE, "r_bad", 2, in(3, DIMS(2, 3, 4)), ci64(2, DIMS(5, -1))), QLLC_ERR_INVALID);
  expect_fail(mk(QLLC_OP_RESHAPE, "r_bad2", 2, in(3, DIMS(2, 3, 4)), ci64(2, DIMS(5, 5))), QLLC_ERR_INVALID);
  /* run-time shape */
  expect_fail(mk(QLLC_OP_RESHAPE, "r_dyn", 2, in(3, DIMS(2, 3, 4)), in(1, DIMS(2))), QLLC_ERR_UNSUPPORTED);
  /* Flatten axis -1 on [2,3,4] -> [6,4]; axis 0 -> [1,24] */
  qllc_node *f = mk(QLLC_OP_FLATTEN, "f", 1, in(3, DIMS(2, 3, 4)));
  qllc_node_set_attr_int(G, f, "axis", -1);
  EXPECT(f, 6, 4);
  assert_int_equal(qllc_attr_int(f, "axis", 9), 2);
  f = mk(QLLC_OP_FLATTEN, "f0", 1, in(3, DIMS(2, 3, 4)));
  qllc_node_set_attr_int(G, f, "axis", 0);
  EXPECT(f, 1, 24);
}

static void test_conv(void **state) {
  (void)state;
  /* channels: x has 3, W wants 2 * group 1 */
  expect_fail(mk(QLLC_OP_CONV, "conv_bad", 2, in(4, DIMS(1, 3, 8, 8)), in(4, DIMS(4, 2, 3, 3))), QLLC_ERR_INVALID);
  assert_non_null(strstr(D.message, "channels"));
  /* depthwise, pads 1, stride 2, dilation 2: (8 + 2 - ((3-1)*2+1)) / 2 + 1 = 3 */
  qllc_node *c = mk(QLLC_OP_CONV, "dw", 2, in(4, DIMS(1, 4, 8, 8)), in(4, DIMS(4, 1, 3, 3)));
  qllc_node_set_attr_int(G, c, "group", 4);
  qllc_node_set_attr_ints(G, c, "pads", 4, DIMS(1, 1, 1, 1));
  qllc_node_set_attr_ints(G, c, "strides", 2, DIMS(2, 2));
  qllc_node_set_attr_ints(G, c, "dilations", 2, DIMS(2, 2));
  EXPECT(c, 1, 4, 3, 3);
  EXPECT_INTS(c, "kernel_shape", 3, 3); /* taken from W */
  /* bias of the wrong length */
  expect_fail(mk(QLLC_OP_CONV, "conv_bias", 3, in(4, DIMS(1, 3, 8, 8)), in(4, DIMS(4, 3, 3, 3)), in(1, DIMS(5))),
              QLLC_ERR_INVALID);
  /* 1-D: [2,4,10] * [5,4,5], pads [2,2] -> [2,5,10]; normalised to 2-D attributes with H = 1 */
  c = mk(QLLC_OP_CONV, "c1d", 2, in(3, DIMS(2, 4, 10)), in(3, DIMS(5, 4, 5)));
  qllc_node_set_attr_ints(G, c, "pads", 2, DIMS(2, 2));
  EXPECT(c, 2, 5, 10);
  EXPECT_INTS(c, "kernel_shape", 1, 5);
  EXPECT_INTS(c, "pads", 0, 2, 0, 2);
  EXPECT_INTS(c, "strides", 1, 1);
  /* SAME_LOWER, 2x2 kernel, stride 1 on 4x4: total pad 1 per axis, the odd one at the start */
  c = mk(QLLC_OP_CONV, "same_lower", 2, in(4, DIMS(1, 1, 4, 4)), in(4, DIMS(1, 1, 2, 2)));
  qllc_node_set_attr_string(G, c, "auto_pad", "SAME_LOWER");
  EXPECT(c, 1, 1, 4, 4);
  EXPECT_INTS(c, "pads", 1, 1, 0, 0);
  /* VALID ignores pads */
  c = mk(QLLC_OP_CONV, "valid", 2, in(4, DIMS(1, 1, 4, 4)), in(4, DIMS(1, 1, 3, 3)));
  qllc_node_set_attr_string(G, c, "auto_pad", "VALID");
  EXPECT(c, 1, 1, 2, 2);
  /* 3-D (issue 15): [1,2,4,6,6] * [4,2,2,3,3], pads (front 1, top 1, left 0, back 0, bottom 1, right 0),
   * strides (1, 2, 1): D 4+1-2+1 = 4, H (6+2-3)/2+1 = 3, W 6-3+1 = 4; 3-entry attributes, 6 pads */
  c = mk(QLLC_OP_CONV, "c3d", 2, in(5, DIMS(1, 2, 4, 6, 6)), in(5, DIMS(4, 2, 2, 3, 3)));
  qllc_node_set_attr_ints(G, c, "pads", 6, DIMS(1, 1, 0, 0, 1, 0));
  qllc_node_set_attr_ints(G, c, "strides", 3, DIMS(1, 2, 1));
  EXPECT(c, 1, 4, 4, 3, 4);
  EXPECT_INTS(c, "kernel_shape", 2, 3, 3);
  EXPECT_INTS(c, "pads", 1, 1, 0, 0, 1, 0);
  EXPECT_INTS(c, "dilations", 1, 1, 1);
  EXPECT(c, 1, 4, 4, 3, 4); /* normalising again changes nothing */
  /* rank 5 is not read for the pre-quantized convolutions */
  expect_fail(mk(QLLC_OP_CONV_INTEGER, "ci3d", 2, in(5, DIMS(1, 1, 4, 4, 4)), in(5, DIMS(1, 1, 2, 2, 2))),
              QLLC_ERR_UNSUPPORTED);
}

static void test_pool(void **state) {
  (void)state;
  /* ONNX test maxpool_2d_ceil: 4x4, k3 s2, ceil: ceil((4-3)/2)+1 = 2; grows the end pads by
   * (2-1)*2+3-4 = 1 */
  qllc_node *p = mk(QLLC_OP_MAXPOOL, "mp", 1, in(4, DIMS(1, 1, 4, 4)));
  qllc_node_set_attr_ints(G, p, "kernel_shape", 2, DIMS(3, 3));
  qllc_node_set_attr_ints(G, p, "strides", 2, DIMS(2, 2));
  qllc_node_set_attr_int(G, p, "ceil_mode", 1);
  EXPECT(p, 1, 1, 2, 2);
  EXPECT_INTS(p, "pads", 0, 0, 1, 1);
  EXPECT_INTS(p, "ceil_pads", 0, 0, 1, 1);
  assert_null(qllc_node_attr(p, "ceil_mode"));
  /* the last window must start inside input + begin pad: 3 wide, pads 1/1, k2 s2: ceil((3+2-2)/2)+1 = 3,
   * but window 3 would start at 4 >= 3 + 1, so 2 (PyTorch and onnxruntime) */
  p = mk(QLLC_OP_AVGPOOL, "ap", 1, in(4, DIMS(1, 1, 3, 3)));
  qllc_node_set_attr_ints(G, p, "kernel_shape", 2, DIMS(2, 2));
  qllc_node_set_attr_ints(G, p, "strides", 2, DIMS(2, 2));
  qllc_node_set_attr_ints(G, p, "pads", 4, DIMS(1, 1, 1, 1));
  qllc_node_set_attr_int(G, p, "ceil_mode", 1);
  EXPECT(p, 1, 1, 2, 2);
  EXPECT_INTS(p, "pads", 1, 1, 1, 1);
  assert_int_equal(qllc_attr_int(p, "count_include_pad", 9), 0);
  /* 1-D average pool [1,2,9], k3 s3 -> [1,2,3] */
  p = mk(QLLC_OP_AVGPOOL, "ap1d", 1, in(3, DIMS(1, 2, 9)));
  qllc_node_set_attr_ints(G, p, "kernel_shape", 1, DIMS(3));
  qllc_node_set_attr_ints(G, p, "strides", 1, DIMS(3));
  EXPECT(p, 1, 2, 3);
  /* storage_order: 0 or 1 (the order of the Indices output), kept */
  p = mk(QLLC_OP_MAXPOOL, "mp_so", 1, in(4, DIMS(1, 1, 4, 4)));
  qllc_node_set_attr_ints(G, p, "kernel_shape", 2, DIMS(2, 2));
  qllc_node_set_attr_int(G, p, "storage_order", 1);
  EXPECT(p, 1, 1, 3, 3);
  assert_int_equal(qllc_attr_int(p, "storage_order", 0), 1);
  p = mk(QLLC_OP_MAXPOOL, "mp_so2", 1, in(4, DIMS(1, 1, 4, 4)));
  qllc_node_set_attr_ints(G, p, "kernel_shape", 2, DIMS(2, 2));
  qllc_node_set_attr_int(G, p, "storage_order", 2);
  expect_fail(p, QLLC_ERR_INVALID);
  /* 3-D max pool with ceil_mode (issue 15): [1,1,4,5,5], k3 s2: D ceil((4-3)/2)+1 = 2, the back pad grows
   * by (2-1)*2+3-4 = 1; H, W (5-3)/2+1 = 2 exactly */
  p = mk(QLLC_OP_MAXPOOL, "mp3d", 1, in(5, DIMS(1, 1, 4, 5, 5)));
  qllc_node_set_attr_ints(G, p, "kernel_shape", 3, DIMS(3, 3, 3));
  qllc_node_set_attr_ints(G, p, "strides", 3, DIMS(2, 2, 2));
  qllc_node_set_attr_int(G, p, "ceil_mode", 1);
  EXPECT(p, 1, 1, 2, 2, 2);
  EXPECT_INTS(p, "pads", 0, 0, 0, 1, 0, 0);
  EXPECT_INTS(p, "ceil_pads", 0, 0, 0, 1, 0, 0);
  EXPECT(mk(QLLC_OP_GLOBAL_AVGPOOL, "gap", 1, in(4, DIMS(2, 3, 5, 7))), 2, 3, 1, 1);
  EXPECT(mk(QLLC_OP_GLOBAL_AVGPOOL, "gap3", 1, in(3, DIMS(2, 3, 5))), 2, 3, 1);
}

static void test_softmax(void **state) {
  (void)state;
  qllc_node *s = mk(QLLC_OP_SOFTMAX, "sm13", 1, in(3, DIMS(2, 3, 4)));
  EXPECT(s, 2, 3, 4);
  assert_int_equal(qllc_attr_int(s, "axis", -9), 2);
  assert_int_equal(qllc_attr_int(s, "coerce2d", -9), 0);
  G->opset = 11;
  s = mk(QLLC_OP_SOFTMAX, "sm11", 1, in(3, DIMS(2, 3, 4)));
  EXPECT(s, 2, 3, 4);
  assert_int_equal(qllc_attr_int(s, "axis", -9), 1);
  assert_int_equal(qllc_attr_int(s, "coerce2d", -9), 1);
  s = mk(QLLC_OP_SOFTMAX, "sm11n", 1, in(3, DIMS(2, 3, 4)));
  qllc_node_set_attr_int(G, s, "axis", -2);
  EXPECT(s, 2, 3, 4);
  assert_int_equal(qllc_attr_int(s, "axis", -9), 1);
  G->opset = 13;
}

static void test_gemm_concat_transpose(void **state) {
  (void)state;
  /* A[2,3] * B[4,3]^T -> [2,4] */
  qllc_node *g = mk(QLLC_OP_GEMM, "gemm", 3, in(2, DIMS(2, 3)), in(2, DIMS(4, 3)), in(1, DIMS(4)));
  qllc_node_set_attr_int(G, g, "transB", 1);
  EXPECT(g, 2, 4);
  assert_true(qllc_attr_float(g, "alpha", 0) == 1.0f);
  assert_true(qllc_attr_float(g, "beta", 0) == 1.0f);
  assert_int_equal(qllc_attr_int(g, "transA", 9), 0);
  g = mk(QLLC_OP_GEMM, "gemm_c", 3, in(2, DIMS(2, 3)), in(2, DIMS(4, 3)), in(1, DIMS(3)));
  qllc_node_set_attr_int(G, g, "transB", 1);
  expect_fail(g, QLLC_ERR_INVALID);
  expect_fail(mk(QLLC_OP_GEMM, "gemm_k", 2, in(2, DIMS(2, 3)), in(2, DIMS(4, 3))), QLLC_ERR_INVALID);
  /* Concat axis -1: [2,3] ++ [2,5] -> [2,8] */
  qllc_node *c = mk(QLLC_OP_CONCAT, "cat", 2, in(2, DIMS(2, 3)), in(2, DIMS(2, 5)));
  qllc_node_set_attr_int(G, c, "axis", -1);
  EXPECT(c, 2, 8);
  assert_int_equal(qllc_attr_int(c, "axis", 9), 1);
  c = mk(QLLC_OP_CONCAT, "cat_bad", 2, in(2, DIMS(2, 3)), in(2, DIMS(3, 5)));
  qllc_node_set_attr_int(G, c, "axis", 1);
  expect_fail(c, QLLC_ERR_INVALID);
  /* Transpose default perm reverses */
  qllc_node *t = mk(QLLC_OP_TRANSPOSE, "tr", 1, in(3, DIMS(2, 3, 4)));
  EXPECT(t, 4, 3, 2);
  EXPECT_INTS(t, "perm", 2, 1, 0);
}

static void test_operand_inputs_to_attrs(void **state) {
  (void)state;
  /* Pad with constant pads and value inputs: [1,2,3,3] + begins (0,0,1,2) ends (0,0,1,2) -> [1,2,5,7] */
  float half = 0.5f;
  qllc_node *p = mk(QLLC_OP_PAD, "pad", 3, in(4, DIMS(1, 2, 3, 3)), ci64(8, DIMS(0, 0, 1, 2, 0, 0, 1, 2)),
                    cf32(0, NULL, &half));
  EXPECT(p, 1, 2, 5, 7);
  assert_int_equal(p->n_in, 1);
  assert_true(qllc_attr_float(p, "value", 0) == 0.5f);
  EXPECT_INTS(p, "pads", 0, 0, 1, 2, 0, 0, 1, 2);
  /* reflect pads at most dim - 1, wrap at most dim, edge any (issue 15) */
  qllc_node *pr = mk(QLLC_OP_PAD, "pad_reflect", 2, in(2, DIMS(2, 2)), ci64(4, DIMS(1, 1, 1, 1)));
  qllc_node_set_attr_string(G, pr, "mode", "reflect");
  EXPECT(pr, 4, 4);
  pr = mk(QLLC_OP_PAD, "pad_reflect2", 2, in(2, DIMS(2, 2)), ci64(4, DIMS(0, 2, 0, 0)));
  qllc_node_set_attr_string(G, pr, "mode", "reflect");
  expect_fail(pr, QLLC_ERR_UNSUPPORTED);
  pr = mk(QLLC_OP_PAD, "pad_wrap", 2, in(2, DIMS(2, 2)), ci64(4, DIMS(0, 2, 0, 0)));
  qllc_node_set_attr_string(G, pr, "mode", "wrap");
  EXPECT(pr, 2, 4);
  pr = mk(QLLC_OP_PAD, "pad_edge", 2, in(2, DIMS(2, 2)), ci64(4, DIMS(5, 0, 0, 0)));
  qllc_node_set_attr_string(G, pr, "mode", "edge");
  EXPECT(pr, 7, 2);
  pr = mk(QLLC_OP_PAD, "pad_mode", 2, in(2, DIMS(2, 2)), ci64(4, DIMS(0, 0, 0, 0)));
  qllc_node_set_attr_string(G, pr, "mode", "mirror");
  expect_fail(pr, QLLC_ERR_UNSUPPORTED);
  /* a value given at run time stays input 2 (input 1, the pads, dropped) */
  pr = mk(QLLC_OP_PAD, "pad_rt", 3, in(2, DIMS(2, 2)), ci64(4, DIMS(0, 1, 0, 1)), in(0, NULL));
  EXPECT(pr, 2, 4);
  assert_int_equal(pr->n_in, 3);
  assert_null(pr->in[1]);
  assert_non_null(pr->in[2]);
  expect_fail(mk(QLLC_OP_PAD, "pad_neg", 2, in(2, DIMS(2, 2)), ci64(4, DIMS(-1, 0, 0, 0))), QLLC_ERR_UNSUPPORTED);
  /* Clip with min only (max absent = +inf) */
  float zero = 0.0f;
  qllc_node *c = mk(QLLC_OP_CLIP, "clip", 2, in(2, DIMS(2, 2)), cf32(0, NULL, &zero));
  EXPECT(c, 2, 2);
  assert_int_equal(c->n_in, 1);
  assert_true(qllc_attr_float(c, "min", -1) == 0.0f);
  assert_true(isinf(qllc_attr_float(c, "max", 0)) && qllc_attr_float(c, "max", 0) > 0);
  /* a bound given at run time (a float scalar) stays an input (issue 15); the constant one is an attribute */
  c = mk(QLLC_OP_CLIP, "clip_dyn", 3, in(2, DIMS(2, 2)), cf32(0, NULL, &zero), in(0, NULL));
  EXPECT(c, 2, 2);
  assert_int_equal(c->n_in, 3);
  assert_null(c->in[1]);
  assert_true(qllc_attr_float(c, "min", -1) == 0.0f);
  c = mk(QLLC_OP_CLIP, "clip_dyn_min", 3, in(2, DIMS(2, 2)), in(0, NULL), NULL);
  EXPECT(c, 2, 2);
  assert_int_equal(c->n_in, 2); /* the absent max dropped */
  expect_fail(mk(QLLC_OP_CLIP, "clip_vec", 3, in(2, DIMS(2, 2)), NULL, in(1, DIMS(2))), QLLC_ERR_UNSUPPORTED);
  /* Unsqueeze axes [0, -1] refer to the output rank 4: [0, 3]: [3,4] -> [1,3,4,1] */
  qllc_node *u = mk(QLLC_OP_UNSQUEEZE, "unsq", 2, in(2, DIMS(3, 4)), ci64(2, DIMS(0, -1)));
  EXPECT(u, 1, 3, 4, 1);
  EXPECT_INTS(u, "axes", 0, 3);
  /* Squeeze without axes removes every 1 */
  qllc_node *s = mk(QLLC_OP_SQUEEZE, "sq", 1, in(4, DIMS(1, 3, 1, 2)));
  EXPECT(s, 3, 2);
  EXPECT_INTS(s, "axes", 0, 2);
  qllc_node *s2 = mk(QLLC_OP_SQUEEZE, "sq_bad", 2, in(2, DIMS(2, 3)), ci64(1, DIMS(0)));
  expect_fail(s2, QLLC_ERR_INVALID);
}

static void test_batchnorm(void **state) {
  (void)state;
  qllc_node *b = mk(QLLC_OP_BATCHNORM, "bn", 5, in(4, DIMS(1, 3, 2, 2)), in(1, DIMS(3)), in(1, DIMS(3)), in(1, DIMS(3)),
                    in(1, DIMS(3)));
  EXPECT(b, 1, 3, 2, 2);
  assert_true(qllc_attr_float(b, "epsilon", 0) == 1e-5f);
  expect_fail(mk(QLLC_OP_BATCHNORM, "bn_bad", 5, in(4, DIMS(1, 3, 2, 2)), in(1, DIMS(3)), in(1, DIMS(4)),
                 in(1, DIMS(3)), in(1, DIMS(3))),
              QLLC_ERR_INVALID);
  qllc_node *l = mk(QLLC_OP_LEAKY_RELU, "lr", 1, in(1, DIMS(3)));
  EXPECT(l, 3);
  assert_true(qllc_attr_float(l, "alpha", 0) == 0.01f);
}

static void fold(qllc_node *n) {
  int folded = 0;
  qllc_status st = qllc_infer_node(G, n, &D);
  if (st) fprintf(stderr, "%s\n", D.message);
  assert_int_equal(st, QLLC_OK);
  assert_int_equal(qllc_const_eval(G, n, &folded, &D), QLLC_OK);
  assert_int_equal(folded, 1);
  assert_true(n->dead);
  assert_non_null(n->out[0]->data);
}

static void test_const_eval(void **state) {
  (void)state;
  /* Slice [0..9][1:-1:2] -> 1 3 5 7 */
  int64_t r10[10];
  for (int i = 0; i < 10; i++) r10[i] = i;
  qllc_node *s = mk(QLLC_OP_SLICE, "slice", 5, ci64(10, r10), ci64(1, DIMS(1)), ci64(1, DIMS(-1)), ci64(1, DIMS(0)),
                    ci64(1, DIMS(2)));
  fold(s);
  assert_int_equal(s->out[0]->dims[0], 4);
  for (int i = 0; i < 4; i++) assert_int_equal(((int64_t *)s->out[0]->data)[i], 2 * i + 1);
  /* negative step: [0..9][8:2:-3] -> 8 5 */
  s = mk(QLLC_OP_SLICE, "slice_neg", 5, ci64(10, r10), ci64(1, DIMS(8)), ci64(1, DIMS(2)), NULL, ci64(1, DIMS(-3)));
  fold(s);
  assert_int_equal(s->out[0]->dims[0], 2);
  assert_int_equal(((int64_t *)s->out[0]->data)[1], 5);
  /* Pad of a constant, every mode (issue 15): [1,2,3] -> reflect (2, 2): 3 2 1 2 3 2 1; edge (1, 2):
   * 1 1 2 3 3 3; wrap (1, 1): 3 1 2 3 1; constant 9 (1, 0): 9 1 2 3 */
  static const char *const modes[] = {"reflect", "edge", "wrap", "constant"};
  static const int64_t pads[4][2] = {{2, 2}, {1, 2}, {1, 1}, {1, 0}};
  static const float want[4][7] = {{3, 2, 1, 2, 3, 2, 1}, {1, 1, 2, 3, 3, 3}, {3, 1, 2, 3, 1}, {9, 1, 2, 3}};
  const float v3[3] = {1, 2, 3};
  for (int k = 0; k < 4; k++) {
    qllc_node *pd = mk(QLLC_OP_PAD, "pad_fold", 2, cf32(1, DIMS(3), v3), ci64(2, pads[k]));
    qllc_node_set_attr_string(G, pd, "mode", modes[k]);
    qllc_node_set_attr_float(G, pd, "value", 9.0f);
    fold(pd);
    assert_int_equal(pd->out[0]->dims[0], 3 + pads[k][0] + pads[k][1]);
    for (int i = 0; i < pd->out[0]->dims[0]; i++) assert_true(((float *)pd->out[0]->data)[i] == want[k][i]);
  }
  /* Transpose of [[1,2,3],[4,5,6]] -> [[1,4],[2,5],[3,6]] */
  const float m[6] = {1, 2, 3, 4, 5, 6};
  qllc_node *t = mk(QLLC_OP_TRANSPOSE, "tr", 1, cf32(2, DIMS(2, 3), m));
  fold(t);
  const float mt[6] = {1, 4, 2, 5, 3, 6};
  for (int i = 0; i < 6; i++) assert_true(((float *)t->out[0]->data)[i] == mt[i]);
  /* Div on int64 truncates toward zero: [-7, 7] / 2 -> [-3, 3]; broadcast of a scalar */
  int64_t two = 2;
  qllc_node *d = mk(QLLC_OP_DIV, "div", 2, ci64(2, DIMS(-7, 7)), qllc_const_new(G, "two", QLLC_ELEM_I64, 0, NULL, &two));
  fold(d);
  assert_int_equal(((int64_t *)d->out[0]->data)[0], -3);
  assert_int_equal(((int64_t *)d->out[0]->data)[1], 3);
  /* float Sub with broadcast: [[1,2,3],[4,5,6]] - [1,1,1]... column vector [[1],[2]] -> [[0,1,2],[2,3,4]] */
  const float col[2] = {1, 2};
  qllc_node *sub = mk(QLLC_OP_SUB, "sub", 2, cf32(2, DIMS(2, 3), m), cf32(2, DIMS(2, 1), col));
  fold(sub);
  const float sr[6] = {0, 1, 2, 2, 3, 4};
  for (int i = 0; i < 6; i++) assert_true(((float *)sub->out[0]->data)[i] == sr[i]);
  /* Cast f32 -> int64 truncates: 2.7 -> 2, -2.7 -> -2 */
  const float fc[2] = {2.7f, -2.7f};
  qllc_node *c = mk(QLLC_OP_CAST, "cast", 1, cf32(1, DIMS(2), fc));
  qllc_node_set_attr_int(G, c, "to", 7);
  fold(c);
  assert_int_equal(c->out[0]->elem, QLLC_ELEM_I64);
  assert_int_equal(((int64_t *)c->out[0]->data)[1], -2);
  /* Gather with a negative index on axis 1: [[1,2,3],[4,5,6]][:, -1] -> [3, 6] */
  int64_t minus1 = -1;
  qllc_node *g = mk(QLLC_OP_GATHER, "gather", 2, cf32(2, DIMS(2, 3), m), qllc_const_new(G, "i", QLLC_ELEM_I64, 0, NULL, &minus1));
  qllc_node_set_attr_int(G, g, "axis", 1);
  fold(g);
  assert_int_equal(g->out[0]->rank, 1);
  assert_true(((float *)g->out[0]->data)[0] == 3.0f && ((float *)g->out[0]->data)[1] == 6.0f);
  /* Concat on axis 1: [[1],[2]] ++ [[1,2,3],[4,5,6]] -> [[1,1,2,3],[2,4,5,6]] */
  qllc_node *cc = mk(QLLC_OP_CONCAT, "cat", 2, cf32(2, DIMS(2, 1), col), cf32(2, DIMS(2, 3), m));
  qllc_node_set_attr_int(G, cc, "axis", 1);
  fold(cc);
  const float cr[8] = {1, 1, 2, 3, 2, 4, 5, 6};
  for (int i = 0; i < 8; i++) assert_true(((float *)cc->out[0]->data)[i] == cr[i]);
  /* ConstantOfShape [2,2] default: zeros in f32 */
  qllc_node *k = mk(QLLC_OP_CONSTANT_OF_SHAPE, "cos", 1, ci64(2, DIMS(2, 2)));
  fold(k);
  assert_int_equal(k->out[0]->elem, QLLC_ELEM_F32);
  assert_int_equal(qllc_value_numel(k->out[0]), 4);
  /* Shape of a non-constant value folds; Relu of a constant does not (not a shape op) */
  qllc_node *sh = mk(QLLC_OP_SHAPE, "shape", 1, in(3, DIMS(4, 5, 6)));
  fold(sh);
  assert_int_equal(((int64_t *)sh->out[0]->data)[2], 6);
  qllc_node *sh2 = mk(QLLC_OP_SHAPE, "shape_se", 1, in(3, DIMS(4, 5, 6)));
  qllc_node_set_attr_int(G, sh2, "start", -2);
  fold(sh2);
  assert_int_equal(sh2->out[0]->dims[0], 2);
  assert_int_equal(((int64_t *)sh2->out[0]->data)[0], 5);
  qllc_node *relu = mk(QLLC_OP_RELU, "relu", 1, cf32(1, DIMS(2), fc));
  int folded = 1;
  assert_int_equal(qllc_infer_node(G, relu, &D), QLLC_OK);
  assert_int_equal(qllc_const_eval(G, relu, &folded, &D), QLLC_OK);
  assert_int_equal(folded, 0);
  assert_false(relu->dead);
  /* Add of a run-time value does not fold */
  qllc_node *add = mk(QLLC_OP_ADD, "add", 2, in(1, DIMS(2)), cf32(1, DIMS(2), fc));
  assert_int_equal(qllc_infer_node(G, add, &D), QLLC_OK);
  assert_int_equal(qllc_const_eval(G, add, &folded, &D), QLLC_OK);
  assert_int_equal(folded, 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_matmul, setup, teardown),
      cmocka_unit_test_setup_teardown(test_broadcast, setup, teardown),
      cmocka_unit_test_setup_teardown(test_reshape_flatten, setup, teardown),
      cmocka_unit_test_setup_teardown(test_conv, setup, teardown),
      cmocka_unit_test_setup_teardown(test_pool, setup, teardown),
      cmocka_unit_test_setup_teardown(test_softmax, setup, teardown),
      cmocka_unit_test_setup_teardown(test_gemm_concat_transpose, setup, teardown),
      cmocka_unit_test_setup_teardown(test_operand_inputs_to_attrs, setup, teardown),
      cmocka_unit_test_setup_teardown(test_batchnorm, setup, teardown),
      cmocka_unit_test_setup_teardown(test_const_eval, setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
