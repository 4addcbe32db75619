/* tests/llvmgen/prog.h: a hand-made instruction-IR program shared by the llvmgen tests.
 *
 *   inputs:  x f32[8]            (MUTABLE offset 0)
 *   outputs: y f32[8]            (MUTABLE offset 64)   y  = relu(x + w)
 *            z f32[4]            (MUTABLE offset 128)  z  = x[4..8]   (a buffer argument with byte_offset)
 *   consts:  w f32[8], dims i64[1] = {8}, strides i64[1] = {1}
 *   act:     t f32[8]            (ACT offset 0)
 *
 *   add_node:  qllc_k_add_f32_f32_f32(t, x, w, 1, dims, strides, strides)
 *   relu_node: qllc_k_relu_f32_f32(y, t, 8)
 *   tail_node: qllc_k_copy_f32_f32(z, x + 16 bytes, 4)
 */
#ifndef QLLC_TEST_LLVMGEN_PROG_H
#define QLLC_TEST_LLVMGEN_PROG_H

#include <string.h>

#include "llvmgen/llvmgen.h"

enum { B_W, B_DIMS, B_STRIDES, B_X, B_Y, B_Z, B_T, NB };

typedef struct test_prog {
  qllc_program p;
  qllc_buffer bufs[NB];
  qllc_buffer *bp[NB];
  qllc_instr ins[3];
  qllc_arg args[3][8];
  qllc_node nodes[3];
  qllc_value vx, vy, vz, vw;
  qllc_io_desc in[1], out[2];
  float w[8];
  int64_t dims[1], strides[1];
} test_prog;

static const float test_w[8] = {1.0f, -2.0f, 0.5f, -0.25f, 3.0f, -4.0f, 0.0f, 10.0f};

static void set_buf(test_prog *t, int i, const char *name, qllc_region r, qllc_elem e, uint64_t size,
                    uint64_t off, const void *data, qllc_value *v) {
  qllc_buffer *b = &t->bufs[i];
  b->id = i;
  b->name = name;
  b->region = r;
  b->elem = e;
  b->size = size;
  b->offset = off;
  b->data = data;
  b->value = v;
  t->bp[i] = b;
}

static void set_value(qllc_value *v, const char *name, int64_t n) {
  v->name = name;
  v->elem = QLLC_ELEM_F32;
  v->rank = 1;
  v->dims[0] = n;
  v->scale = 1.0f;
  v->q_axis = -1;
}

static qllc_arg buf_arg(test_prog *t, int b, uint64_t off) {
  qllc_arg a = {.kind = QLLC_ARG_BUF, .buf = &t->bufs[b], .byte_offset = off};
  return a;
}
static qllc_arg int_arg(int64_t i) {
  qllc_arg a = {.kind = QLLC_ARG_INT, .i = i};
  return a;
}

static void test_prog_init(test_prog *t) {
  memset(t, 0, sizeof *t);
  memcpy(t->w, test_w, sizeof t->w);
  t->dims[0] = 8;
  t->strides[0] = 1;
  set_value(&t->vx, "x", 8);
  set_value(&t->vy, "out.y", 8); /* not a C identifier: the header must sanitise it */
  set_value(&t->vz, "out-y", 4); /* sanitises to the same text: must be made unique */
  set_value(&t->vw, "w", 8);
  set_buf(t, B_W, "w", QLLC_REGION_CONST, QLLC_ELEM_F32, 32, 0, t->w, &t->vw);
  set_buf(t, B_DIMS, "dims", QLLC_REGION_CONST, QLLC_ELEM_I64, 8, 64, t->dims, NULL);
  set_buf(t, B_STRIDES, "strides", QLLC_REGION_CONST, QLLC_ELEM_I64, 8, 128, t->strides, NULL);
  set_buf(t, B_X, "x", QLLC_REGION_MUTABLE, QLLC_ELEM_F32, 32, 0, NULL, &t->vx);
  set_buf(t, B_Y, "out.y", QLLC_REGION_MUTABLE, QLLC_ELEM_F32, 32, 64, NULL, &t->vy);
  set_buf(t, B_Z, "out-y", QLLC_REGION_MUTABLE, QLLC_ELEM_F32, 16, 128, NULL, &t->vz);
  set_buf(t, B_T, "t", QLLC_REGION_ACT, QLLC_ELEM_F32, 32, 0, NULL, NULL);

  t->nodes[0].name = "add_node";
  t->nodes[1].name = "relu_node";
  t->nodes[2].name = "tail_node";
  qllc_arg *a = t->args[0];
  a[0] = buf_arg(t, B_T, 0);
  a[1] = buf_arg(t, B_X, 0);
  a[2] = buf_arg(t, B_W, 0);
  a[3] = int_arg(1);
  a[4] = buf_arg(t, B_DIMS, 0);
  a[5] = buf_arg(t, B_STRIDES, 0);
  a[6] = buf_arg(t, B_STRIDES, 0);
  t->ins[0] = (qllc_instr){.kernel = "qllc_k_add_f32_f32_f32", .n_args = 7, .args = a, .node = &t->nodes[0]};
  a = t->args[1];
  a[0] = buf_arg(t, B_Y, 0);
  a[1] = buf_arg(t, B_T, 0);
  a[2] = int_arg(8);
  t->ins[1] = (qllc_instr){.kernel = "qllc_k_relu_f32_f32", .n_args = 3, .args = a, .node = &t->nodes[1]};
  a = t->args[2];
  a[0] = buf_arg(t, B_Z, 0);
  a[1] = buf_arg(t, B_X, 16);
  a[2] = int_arg(4);
  t->ins[2] = (qllc_instr){.kernel = "qllc_k_copy_f32_f32", .n_args = 3, .args = a, .node = &t->nodes[2]};

  t->in[0] = (qllc_io_desc){&t->vx, &t->bufs[B_X]};
  t->out[0] = (qllc_io_desc){&t->vy, &t->bufs[B_Y]};
  t->out[1] = (qllc_io_desc){&t->vz, &t->bufs[B_Z]};

  t->p.n_buffers = t->p.cap_buffers = NB;
  t->p.buffers = t->bp;
  t->p.n_instrs = t->p.cap_instrs = 3;
  t->p.instrs = t->ins;
  t->p.n_inputs = 1;
  t->p.n_outputs = 2;
  t->p.inputs = t->in;
  t->p.outputs = t->out;
  t->p.const_size = 192;
  t->p.mutable_size = 192;
  t->p.act_size = 64;
  t->p.act_sum = 64;
}

/* Hand-computed reference: y = relu(x + w), z = x[4..8]. */
static void test_prog_expect(const float *x, float *y, float *z) {
  for (int i = 0; i < 8; i++) {
    float s = x[i] + test_w[i];
    y[i] = s > 0 ? s : 0;
  }
  for (int i = 0; i < 4; i++) z[i] = x[4 + i];
}

#endif
