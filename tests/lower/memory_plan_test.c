/* tests/lower/memory_plan_test.c: src/lower/memory_plan.c, directly on hand-made buffer sets and through
 * qllc_lower on a chain and on a pseudo-random graph. The random graph is also executed: the program
 * runs over planned regions with a small interpreter (its kernels written here from the specification in
 * kernels_f32.h), the graph is evaluated value by value with one array each, and the outputs must agree:
 * any two live buffers sharing bytes would corrupt the result. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "lower/lower.h"

#define D(...) ((const int64_t[]){__VA_ARGS__})

static qllc_program *lower_ok(qllc_graph *g) {
  qllc_program *p = NULL;
  qllc_diag d;
  memset(&d, 0, sizeof d);
  if (qllc_lower(g, &p, &d) != QLLC_OK) fail_msg("qllc_lower: %s", d.message);
  return p;
}

static int live_overlap(const qllc_buffer *a, const qllc_buffer *b) {
  return a->first_use <= b->last_use && b->first_use <= a->last_use;
}
static int byte_overlap(uint64_t ao, uint64_t as, uint64_t bo, uint64_t bs) {
  return as && bs && ao < bo + bs && bo < ao + as;
}

/* Every invariant of a plan: alignment, within the peak, no shared bytes between buffers alive at
 * the same instruction, the peak no larger than the sum; and that the recorded live ranges cover
 * every instruction that references a buffer. */
static void check_plan(const qllc_program *p) {
  uint64_t sum = 0, peak = 0;
  for (int i = 0; i < p->n_buffers; i++) {
    const qllc_buffer *a = p->buffers[i];
    if (a->region == QLLC_REGION_CONST) assert_int_equal(a->offset % QLLC_MEM_ALIGN, 0);
    if (a->region != QLLC_REGION_ACT || a->first_use < 0) continue;
    uint64_t asz = (a->size + QLLC_MEM_ALIGN - 1) / QLLC_MEM_ALIGN * QLLC_MEM_ALIGN;
    sum += asz;
    if (a->offset + asz > peak) peak = a->offset + asz;
    assert_int_equal(a->offset % QLLC_MEM_ALIGN, 0);
    assert_true(a->offset + a->size <= p->act_size);
    for (int j = 0; j < i; j++) {
      const qllc_buffer *b = p->buffers[j];
      if (b->region != QLLC_REGION_ACT || b->first_use < 0) continue;
      if (live_overlap(a, b) && byte_overlap(a->offset, a->size, b->offset, b->size))
        fail_msg("%s [%d,%d] @%llu+%llu overlaps %s [%d,%d] @%llu+%llu", a->name, a->first_use, a->last_use,
                 (unsigned long long)a->offset, (unsigned long long)a->size, b->name, b->first_use, b->last_use,
                 (unsigned long long)b->offset, (unsigned long long)b->size);
    }
  }
  assert_int_equal(p->act_sum, sum);
  assert_int_equal(p->act_size, peak);
  assert_true(p->act_size <= p->act_sum);
  for (int i = 0; i < p->n_instrs; i++)
    for (int k = 0; k < p->instrs[i].n_args; k++) {
      const qllc_arg *a = &p->instrs[i].args[k];
      if (a->kind != QLLC_ARG_BUF || a->buf->region != QLLC_REGION_ACT) continue;
      assert_true(a->buf->first_use <= i && i <= a->buf->last_use);
    }
}

/* ---- the pass on hand-made buffers ------------------------------------------------------------ */

static qllc_buffer *act(qllc_program *p, const char *name, uint64_t size, int first, int last) {
  qllc_buffer *b = qllc_arena_alloc(p->arena, sizeof *b);
  b->id = p->n_buffers;
  b->name = name;
  b->region = QLLC_REGION_ACT;
  b->size = size;
  b->first_use = first;
  b->last_use = last;
  p->buffers[p->n_buffers++] = b;
  return b;
}

static void test_pass_inclusive_ranges(void **state) {
  (void)state;
  qllc_program p;
  memset(&p, 0, sizeof p);
  p.arena = qllc_arena_new();
  qllc_buffer *bufs[8];
  p.buffers = bufs;
  p.cap_buffers = 8;
  qllc_buffer *a = act(&p, "a", 100, 0, 1);  /* 128 aligned */
  qllc_buffer *b = act(&p, "b", 64, 1, 2);   /* read-and-written at 1 with a: must not share */
  qllc_buffer *c = act(&p, "c", 128, 2, 3);  /* may take a's place */
  qllc_buffer *d = act(&p, "d", 1, 3, 4);    /* may take b's place */
  qllc_buffer *k = qllc_arena_alloc(p.arena, sizeof *k);
  k->region = QLLC_REGION_CONST;
  k->size = 10;
  k->id = p.n_buffers;
  bufs[p.n_buffers++] = k;
  qllc_buffer *k2 = qllc_arena_alloc(p.arena, sizeof *k2);
  k2->region = QLLC_REGION_CONST;
  k2->size = 70;
  k2->id = p.n_buffers;
  bufs[p.n_buffers++] = k2;
  assert_int_equal(qllc_pass_memory_plan(&p, NULL), QLLC_OK);
  check_plan(&p);
  assert_false(byte_overlap(a->offset, 128, b->offset, 64));
  assert_false(byte_overlap(b->offset, 64, c->offset, 128));
  assert_false(byte_overlap(c->offset, 128, d->offset, 64));
  assert_int_equal(p.act_sum, 128 + 64 + 128 + 64);
  assert_int_equal(p.act_size, 192);
  assert_int_equal(k->offset, 0);
  assert_int_equal(k2->offset, 64);
  assert_int_equal(p.const_size, 192);
  qllc_arena_free(p.arena);
}

/* ---- a chain through qllc_lower --------------------------------------------------------------- */

static void test_chain_two_slots(void **state) {
  (void)state;
  qllc_graph *g = qllc_graph_new(NULL);
  qllc_value *v[6];
  const char *names[6] = {"x", "a", "b", "c", "d", "y"};
  for (int i = 0; i < 6; i++) v[i] = qllc_value_new(g, names[i], QLLC_ELEM_F32, 2, D(1, 40)); /* 160 B */
  qllc_graph_add_input(g, v[0]);
  qllc_graph_add_output(g, v[5]);
  for (int i = 0; i < 5; i++) {
    qllc_node *n = qllc_node_new(g, i % 2 ? QLLC_OP_TANH : QLLC_OP_RELU, NULL, 1, 1);
    n->in[0] = v[i];
    n->out[0] = v[i + 1];
  }
  qllc_program *p = lower_ok(g);
  if (getenv("QLLC_TEST_VERBOSE")) qllc_program_print(p, stderr);
  assert_int_equal(p->n_instrs, 5);
  check_plan(p);
  const uint64_t slot = 192; /* 160 aligned */
  assert_int_equal(p->act_sum, 4 * slot);
  assert_int_equal(p->act_size, 2 * slot);
  /* a, b, c, d alternate between the two slots */
  const qllc_buffer *ab = p->instrs[0].args[0].buf, *bb = p->instrs[1].args[0].buf;
  const qllc_buffer *cb = p->instrs[2].args[0].buf, *db = p->instrs[3].args[0].buf;
  assert_int_equal(ab->first_use, 0);
  assert_int_equal(ab->last_use, 1);
  assert_int_not_equal(ab->offset, bb->offset);
  assert_int_equal(ab->offset, cb->offset);
  assert_int_equal(bb->offset, db->offset);
  qllc_program_free(p);
  qllc_graph_free(g);
}

/* ---- a pseudo-random graph, planned and executed ---------------------------------------------- */

static uint32_t rng_state;
static uint32_t rnd(void) {
  rng_state = rng_state * 1664525u + 1013904223u;
  return rng_state >> 8;
}

typedef struct refval {
  qllc_value *v;
  float *data; /* reference result */
} refval;

/* Reference semantics of the graph, straight from the ONNX definitions (all values are [1, k]). */
static void eval_node(const qllc_node *n, refval *vals, int nv) {
  float *in[2] = {NULL, NULL}, *out = NULL;
  for (int i = 0; i < nv; i++) {
    for (int k = 0; k < n->n_in && k < 2; k++)
      if (vals[i].v == n->in[k]) in[k] = vals[i].data;
    if (vals[i].v == n->out[0]) out = vals[i].data;
  }
  int64_t len = qllc_value_numel(n->out[0]);
  switch (n->op) {
  case QLLC_OP_RELU:
    for (int64_t i = 0; i < len; i++) out[i] = in[0][i] > 0 ? in[0][i] : 0;
    break;
  case QLLC_OP_ADD:
    for (int64_t i = 0; i < len; i++) out[i] = in[0][i] + in[1][i];
    break;
  case QLLC_OP_CONCAT: {
    int64_t k0 = qllc_value_numel(n->in[0]);
    for (int64_t i = 0; i < len; i++) out[i] = i < k0 ? in[0][i] : in[1][i - k0];
    break;
  }
  case QLLC_OP_RESHAPE:
    memcpy(out, in[0], (size_t)len * 4);
    break;
  default:
    fail_msg("unexpected op");
  }
}

/* The interpreter: the four kernels the random graph lowers to, per kernels_f32.h. */
static void *ptr(const qllc_arg *a, uint8_t *mut, uint8_t *actv) {
  const qllc_buffer *b = a->buf;
  uint8_t *base = b->region == QLLC_REGION_CONST ? (uint8_t *)b->data : b->region == QLLC_REGION_MUTABLE ? mut + b->offset : actv + b->offset;
  return base + a->byte_offset;
}

static void run(const qllc_program *p, uint8_t *mut, uint8_t *actv) {
  for (int i = 0; i < p->n_instrs; i++) {
    const qllc_instr *in = &p->instrs[i];
    const qllc_arg *a = in->args;
    float *y = ptr(&a[0], mut, actv), *x = ptr(&a[1], mut, actv);
    if (strcmp(in->kernel, "qllc_k_relu_f32_f32") == 0) {
      for (int64_t k = 0; k < a[2].i; k++) y[k] = x[k] > 0 ? x[k] : 0;
    } else if (strcmp(in->kernel, "qllc_k_copy_f32_f32") == 0) {
      for (int64_t k = 0; k < a[2].i; k++) y[k] = x[k];
    } else if (strcmp(in->kernel, "qllc_k_copy2d_f32_f32") == 0) {
      for (int64_t r = 0; r < a[2].i; r++)
        for (int64_t c = 0; c < a[3].i; c++) y[r * a[4].i + c] = x[r * a[5].i + c];
    } else if (strcmp(in->kernel, "qllc_k_add_f32_f32_f32") == 0) {
      const float *bb = ptr(&a[2], mut, actv);
      int64_t rank = a[3].i;
      const int64_t *dims = ptr(&a[4], mut, actv), *as = ptr(&a[5], mut, actv), *bs = ptr(&a[6], mut, actv);
      int64_t total = 1;
      for (int d = 0; d < rank; d++) total *= dims[d];
      for (int64_t f = 0; f < total; f++) {
        int64_t rem = f, ao = 0, bo = 0;
        for (int d = (int)rank - 1; d >= 0; d--) {
          ao += rem % dims[d] * as[d];
          bo += rem % dims[d] * bs[d];
          rem /= dims[d];
        }
        y[f] = x[ao] + bb[bo];
      }
    } else {
      fail_msg("interpreter: no %s", in->kernel);
    }
  }
}

static void random_graph(uint32_t seed) {
  rng_state = seed;
  qllc_graph *g = qllc_graph_new(NULL);
  enum { NV = 80 };
  refval vals[NV];
  int nv = 0;
  vals[nv++].v = qllc_value_new(g, "in0", QLLC_ELEM_F32, 2, D(1, 8));
  vals[nv++].v = qllc_value_new(g, "in1", QLLC_ELEM_F32, 2, D(1, 24));
  qllc_graph_add_input(g, vals[0].v);
  qllc_graph_add_input(g, vals[1].v);
  while (nv < NV) {
    /* Prefer recent values so that lifetimes vary but the graph stays connected. */
    int i = nv - 1 - (int)(rnd() % (nv < 6 ? nv : 6));
    if (rnd() % 5 == 0) i = (int)(rnd() % nv);
    qllc_value *x = vals[i].v;
    int64_t k = x->dims[1];
    int choice = (int)(rnd() % 4);
    qllc_value *x2 = NULL;
    for (int j = nv - 1; j >= 0 && choice != 0 && choice != 3; j--) {
      int64_t k2 = vals[j].v->dims[1];
      if (j != i && (choice == 1 ? k2 == k : k + k2 <= 200)) {
        x2 = vals[j].v;
        break;
      }
    }
    if (!x2 && (choice == 1 || choice == 2)) choice = 0;
    qllc_op op = choice == 0 ? QLLC_OP_RELU : choice == 1 ? QLLC_OP_ADD : choice == 2 ? QLLC_OP_CONCAT : QLLC_OP_RESHAPE;
    int64_t ko = op == QLLC_OP_CONCAT ? k + x2->dims[1] : k;
    qllc_value *y = qllc_value_new(g, NULL, QLLC_ELEM_F32, 2, D(1, ko));
    qllc_node *n = qllc_node_new(g, op, NULL, x2 ? 2 : 1, 1);
    n->in[0] = x;
    if (x2) n->in[1] = x2;
    n->out[0] = y;
    if (op == QLLC_OP_CONCAT) qllc_node_set_attr_int(g, n, "axis", 1);
    vals[nv++].v = y;
  }
  qllc_graph_add_output(g, vals[nv - 1].v);
  qllc_graph_add_output(g, vals[nv / 2].v);
  qllc_graph_add_output(g, vals[1].v);           /* an input as an output: copied */
  qllc_graph_add_output(g, vals[nv - 1 - (int)(rnd() % 10)].v);

  /* reference */
  for (int i = 0; i < nv; i++) {
    vals[i].data = calloc((size_t)qllc_value_numel(vals[i].v), sizeof(float));
    if (i < 2)
      for (int64_t e = 0; e < qllc_value_numel(vals[i].v); e++) vals[i].data[e] = (float)((int)(rnd() % 200) - 100) / 8;
  }
  for (int i = 0; i < g->n_nodes; i++) eval_node(g->nodes[i], vals, nv);

  qllc_program *p = lower_ok(g);
  if (getenv("QLLC_TEST_VERBOSE")) qllc_program_print(p, stderr);
  check_plan(p);
  assert_true(p->act_size < p->act_sum); /* reuse happened */
  /* A kernel's output never shares bytes with its own inputs. */
  for (int i = 0; i < p->n_instrs; i++) {
    const qllc_instr *in = &p->instrs[i];
    const qllc_arg *o = &in->args[0];
    for (int k = 1; k < in->n_args; k++) {
      const qllc_arg *a = &in->args[k];
      if (a->kind != QLLC_ARG_BUF || a->buf->region != o->buf->region || a->buf->region == QLLC_REGION_CONST) continue;
      assert_false(byte_overlap(o->buf->offset, o->buf->size, a->buf->offset, a->buf->size));
    }
  }

  uint8_t *mut = malloc(p->mutable_size + 1), *actv = malloc(p->act_size + 1);
  memset(mut, 0xff, p->mutable_size + 1); /* NaN everywhere */
  memset(actv, 0xff, p->act_size + 1);
  for (int i = 0; i < p->n_inputs; i++) {
    int vi = -1;
    for (int j = 0; j < nv; j++)
      if (vals[j].v == p->inputs[i].value) vi = j;
    memcpy(mut + p->inputs[i].buf->offset, vals[vi].data, p->inputs[i].buf->size);
  }
  run(p, mut, actv);
  for (int i = 0; i < p->n_outputs; i++) {
    int vi = -1;
    for (int j = 0; j < nv; j++)
      if (vals[j].v == p->outputs[i].value) vi = j;
    const float *got = (const float *)(mut + p->outputs[i].buf->offset);
    for (int64_t e = 0; e < qllc_value_numel(vals[vi].v); e++)
      if (got[e] != vals[vi].data[e])
        fail_msg("seed %u output %d (%s)[%lld]: %g, want %g", seed, i, vals[vi].v->name, (long long)e, got[e],
                 vals[vi].data[e]);
  }
  free(mut);
  free(actv);
  for (int i = 0; i < nv; i++) free(vals[i].data);
  qllc_program_free(p);
  qllc_graph_free(g);
}

static void test_random_graphs(void **state) {
  (void)state;
  for (uint32_t seed = 1; seed <= 40; seed++) random_graph(seed * 7919u);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_pass_inclusive_ranges),
      cmocka_unit_test(test_chain_two_slots),
      cmocka_unit_test(test_random_graphs),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
