/* tests/ir/sizes_test.c: checked sizes past the loader (issue 11, item 3; docs/limits.md).
 *
 *   - the memory plan (src/lower/memory_plan.c): activation buffers live at the same time whose offsets
 *     would pass 2^63, a constant region that would, a buffer whose size came from an overflowed
 *     qllc_value_bytes (SIZE_MAX), and input/output buffers laid out past 2^63 by lowering are errors
 *     naming the buffer's value, never wrapped offsets; a small plan is still laid out as before;
 *   - constant folding (src/ir/const_eval.c): a ConstantOfShape of [2^40] floats is refused naming the
 *     node before anything is allocated (was: a 4 TiB allocation), and integer Add/Mul/Div that overflow
 *     int64 wrap as two's complement (INT64_MIN / -1 included) instead of undefined behaviour;
 *   - the folding budget: a graph folds at most 64 MiB plus 4 times the bytes of its own constants in
 *     total; the fold that would go past it is an error naming the node, allocates nothing and leaves
 *     the node unfolded (was: any number of folded constants of up to 1 GiB each). A Constant node is
 *     not charged (its value is one of the graph's constants already).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "ir/ir.h"
#include "lower/lower.h"

/* ---- the memory plan, on programs made by hand -------------------------------------------------- */

typedef struct hand {
  qllc_program p;
  qllc_buffer b[8], *bp[8];
} hand;

static void hand_init(hand *h) {
  memset(h, 0, sizeof *h);
  h->p.buffers = h->bp;
}

static qllc_buffer *hand_buf(hand *h, const char *name, qllc_region r, uint64_t size, int first, int last) {
  qllc_buffer *b = &h->b[h->p.n_buffers];
  b->id = h->p.n_buffers;
  b->name = name;
  b->region = r;
  b->elem = QLLC_ELEM_F32;
  b->size = size;
  b->first_use = first;
  b->last_use = last;
  h->bp[h->p.n_buffers++] = b;
  return b;
}

static void expect_plan_error(hand *h, const char *name) {
  qllc_diag d = {0};
  qllc_status st = qllc_pass_memory_plan(&h->p, &d);
  if (st == QLLC_OK) fprintf(stderr, "plan accepted: act_size %llu const_size %llu\n",
                             (unsigned long long)h->p.act_size, (unsigned long long)h->p.const_size);
  assert_int_equal(st, QLLC_ERR_INVALID);
  char want[64];
  snprintf(want, sizeof want, "value '%s'", name);
  if (!strstr(d.message, want) || !strstr(d.message, "2^63")) fprintf(stderr, "message: %s\n", d.message);
  assert_non_null(strstr(d.message, want));
  assert_non_null(strstr(d.message, "2^63"));
}

static void test_plan_small(void **state) {
  (void)state;
  hand h;
  hand_init(&h);
  qllc_buffer *a = hand_buf(&h, "a", QLLC_REGION_ACT, 100, 0, 1);
  qllc_buffer *b = hand_buf(&h, "b", QLLC_REGION_ACT, 64, 1, 2);
  qllc_buffer *c = hand_buf(&h, "c", QLLC_REGION_ACT, 10, 2, 3); /* a is dead by then: reuses its bytes */
  qllc_buffer *w = hand_buf(&h, "w", QLLC_REGION_CONST, 3, -1, -1);
  qllc_buffer *v = hand_buf(&h, "v", QLLC_REGION_CONST, 70, -1, -1);
  qllc_diag d = {0};
  assert_int_equal(qllc_pass_memory_plan(&h.p, &d), QLLC_OK);
  assert_int_equal(a->offset, 0);
  assert_int_equal(b->offset, 128);
  assert_int_equal(c->offset, 0);
  assert_int_equal(h.p.act_size, 192);
  assert_int_equal(h.p.act_sum, 128 + 64 + 64);
  assert_int_equal(w->offset, 0);
  assert_int_equal(v->offset, 64);
  assert_int_equal(h.p.const_size, 192);
}

/* Five activations of 2^62 bytes live together: the fifth would start at 2^64, which wrapped to 0 and
 * overlapped the first (the plan reported a peak of 2^64 - ... and success). */
static void test_plan_act_overflow(void **state) {
  (void)state;
  hand h;
  hand_init(&h);
  static const char *names[] = {"t0", "t1", "t2", "t3", "t4"};
  for (int i = 0; i < 5; i++) hand_buf(&h, names[i], QLLC_REGION_ACT, (uint64_t)1 << 62, 0, 1);
  expect_plan_error(&h, "t1"); /* t0 ends at 2^62, t1 at 2^63: over */
}

static void test_plan_const_overflow(void **state) {
  (void)state;
  hand h;
  hand_init(&h);
  static const char *names[] = {"w0", "w1", "w2", "w3", "w4"};
  for (int i = 0; i < 5; i++) hand_buf(&h, names[i], QLLC_REGION_CONST, (uint64_t)1 << 62, -1, -1);
  expect_plan_error(&h, "w1");
}

static void test_plan_size_max(void **state) {
  (void)state;
  hand h;
  hand_init(&h);
  hand_buf(&h, "huge", QLLC_REGION_ACT, SIZE_MAX, 0, 0); /* qllc_value_bytes' answer on overflow */
  expect_plan_error(&h, "huge");
}

/* Input/output buffers as lowering lays them out, one after the other (a model needs 32,768 inputs at
 * the 2^48-byte limit to get there): the third of three 2^62-byte ones would end at 3 * 2^62, past
 * 2^63 (the running offset of a model with more of them wraps, and a later buffer lands at a small
 * offset inside an earlier one). */
static void test_plan_mutable_overflow(void **state) {
  (void)state;
  hand h;
  hand_init(&h);
  static const char *names[] = {"x0", "x1", "x2", "y"};
  for (int i = 0; i < 4; i++) {
    qllc_buffer *b = hand_buf(&h, names[i], QLLC_REGION_MUTABLE, (uint64_t)1 << 62, -1, -1);
    b->offset = (uint64_t)i << 62; /* the fourth: 2^64 wrapped to 0 */
  }
  h.p.mutable_size = 0; /* 4 * 2^62 wrapped */
  expect_plan_error(&h, "x1");
  /* and a layout that does fit is accepted */
  hand_init(&h);
  hand_buf(&h, "x", QLLC_REGION_MUTABLE, 100, -1, -1)->offset = 0;
  hand_buf(&h, "y", QLLC_REGION_MUTABLE, 8, -1, -1)->offset = 128;
  h.p.mutable_size = 192;
  qllc_diag d = {0};
  assert_int_equal(qllc_pass_memory_plan(&h.p, &d), QLLC_OK);
}

/* ---- constant folding ----------------------------------------------------------------------------- */

/* A ConstantOfShape node named `name` making `count` zero floats from a new shape constant. */
static qllc_node *cos_node(qllc_graph *g, const char *name, int64_t count) {
  int64_t one = 1;
  qllc_node *n = qllc_node_new(g, QLLC_OP_CONSTANT_OF_SHAPE, name, 1, 1);
  n->in[0] = qllc_const_new(g, NULL, QLLC_ELEM_I64, 1, &one, &count);
  n->out[0] = qllc_value_new(g, name, QLLC_ELEM_F32, 0, NULL);
  n->out[0]->producer = n;
  qllc_diag d = {0};
  assert_int_equal(qllc_infer_node(g, n, &d), QLLC_OK);
  assert_true(n->out[0]->dims[0] == count);
  return n;
}

static qllc_status fold(qllc_graph *g, qllc_node *n, int *folded, qllc_diag *d) {
  *folded = -1;
  return qllc_const_eval(g, n, folded, d);
}

/* Folding n is refused (UNSUPPORTED) with a message containing `what` and `why`; nothing is folded. */
static void expect_fold_refused(qllc_graph *g, qllc_node *n, const char *what, const char *why) {
  int folded;
  qllc_diag d = {0};
  qllc_status st = fold(g, n, &folded, &d);
  if (st != QLLC_ERR_UNSUPPORTED) fprintf(stderr, "status %d: %s\n", (int)st, d.message);
  assert_int_equal(st, QLLC_ERR_UNSUPPORTED);
  assert_int_equal(folded, 0);
  assert_non_null(strstr(d.message, what));
  assert_non_null(strstr(d.message, why));
  assert_null(n->out[0]->data);
  assert_false(n->dead);
}

static void test_fold_huge_constant_of_shape(void **state) {
  (void)state;
  qllc_graph *g = qllc_graph_new("t.onnx");
  /* 4 TiB of floats: under the 2^48 tensor limit */
  expect_fold_refused(g, cos_node(g, "cos", (int64_t)1 << 40), "node 'cos' (ConstantOfShape)", "4398046511104 bytes");
  qllc_graph_free(g);
}

static void test_fold_budget(void **state) {
  (void)state;
  const int64_t base = QLLC_FOLD_BUDGET_BASE;
  assert_int_equal(base, (int64_t)64 << 20);
  qllc_graph *g = qllc_graph_new("t.onnx");
  int folded;
  qllc_diag d = {0};
  /* 48 MiB folds: within the 64 MiB a graph without big constants may fold */
  qllc_node *a = cos_node(g, "a", (int64_t)48 << 18); /* 2^18 floats = 1 MiB */
  assert_int_equal(fold(g, a, &folded, &d), QLLC_OK);
  assert_int_equal(folded, 1);
  assert_true(g->fold_bytes == (int64_t)48 << 20);
  /* 32 MiB more would make 80 MiB: refused, naming the node; nothing folded or charged */
  qllc_node *b = cos_node(g, "b", (int64_t)32 << 18);
  expect_fold_refused(g, b, "node 'b' (ConstantOfShape)", "over its folding budget of");
  assert_true(g->fold_bytes == (int64_t)48 << 20);
  /* a Constant node is not charged, however big (its value is already one of the graph's constants) */
  int64_t cnt = (int64_t)20 << 18;
  qllc_value *t = qllc_const_new(g, "t", QLLC_ELEM_F32, 1, &cnt, NULL);
  qllc_node *c = qllc_node_new(g, QLLC_OP_CONSTANT, "c", 0, 1);
  qllc_attr *at = qllc_node_attr_slot(g, c, "value");
  assert_non_null(at);
  at->kind = QLLC_ATTR_TENSOR;
  at->t = t;
  c->out[0] = qllc_value_new(g, "c_out", QLLC_ELEM_F32, 0, NULL);
  c->out[0]->producer = c;
  assert_int_equal(qllc_infer_node(g, c, &d), QLLC_OK);
  assert_int_equal(fold(g, c, &folded, &d), QLLC_OK);
  assert_int_equal(folded, 1);
  assert_true(g->fold_bytes == (int64_t)48 << 20);
  /* the 20 MiB constant raised the budget by 80 MiB: b now folds */
  assert_int_equal(fold(g, b, &folded, &d), QLLC_OK);
  assert_int_equal(folded, 1);
  assert_true(g->fold_bytes == (int64_t)80 << 20);
  qllc_graph_free(g);
}

/* y = a OP b on int64 constants of 3 elements; returns y's data. */
static const int64_t *fold_i64(qllc_graph *g, qllc_op op, const int64_t *a, const int64_t *b) {
  int64_t three = 3;
  qllc_node *n = qllc_node_new(g, op, "op", 2, 1);
  n->in[0] = qllc_const_new(g, "a", QLLC_ELEM_I64, 1, &three, a);
  n->in[1] = qllc_const_new(g, "b", QLLC_ELEM_I64, 1, &three, b);
  n->out[0] = qllc_value_new(g, "y", QLLC_ELEM_I64, 0, NULL);
  n->out[0]->producer = n;
  qllc_diag d = {0};
  assert_int_equal(qllc_infer_node(g, n, &d), QLLC_OK);
  int folded = 0;
  assert_int_equal(qllc_const_eval(g, n, &folded, &d), QLLC_OK);
  assert_int_equal(folded, 1);
  return n->out[0]->data;
}

static void test_fold_int64_wraps(void **state) {
  (void)state;
  qllc_graph *g = qllc_graph_new("t.onnx");
  const int64_t a[3] = {INT64_MAX, INT64_MIN, 7}, b[3] = {1, -1, -2};
  const int64_t *y = fold_i64(g, QLLC_OP_ADD, a, b);
  assert_true(y[0] == INT64_MIN && y[1] == INT64_MAX && y[2] == 5);
  y = fold_i64(g, QLLC_OP_SUB, a, b);
  assert_true(y[0] == INT64_MAX - 1 && y[1] == INT64_MIN + 1 && y[2] == 9);
  const int64_t c[3] = {INT64_MAX, INT64_MIN, (int64_t)1 << 62}, e[3] = {2, -1, 4};
  y = fold_i64(g, QLLC_OP_MUL, c, e);
  assert_true(y[0] == -2 && y[1] == INT64_MIN && y[2] == 0);
  y = fold_i64(g, QLLC_OP_DIV, c, e);
  assert_true(y[0] == INT64_MAX / 2 && y[1] == INT64_MIN && y[2] == (int64_t)1 << 60);
  qllc_graph_free(g);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_plan_small),
      cmocka_unit_test(test_plan_act_overflow),
      cmocka_unit_test(test_plan_const_overflow),
      cmocka_unit_test(test_plan_size_max),
      cmocka_unit_test(test_plan_mutable_overflow),
      cmocka_unit_test(test_fold_huge_constant_of_shape),
      cmocka_unit_test(test_fold_int64_wraps),
      cmocka_unit_test(test_fold_budget),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
