/* tests/ir/passes_test.c: the graph passes (src/ir/pass_*.c) and the pipeline (src/ir/pipeline.c).
 *
 * Graphs are built by hand with the graph API. Each test checks the rewritten graph (which nodes, which
 * names, which inputs) and its numerics: the test evaluates the original ops naively in double (Conv,
 * Gemm, MatMul, BatchNormalization from their ONNX definitions) and the rewritten ones (Conv with the
 * folded weights, FC, ChannelAffine from ops.def) and compares them. */
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

/* ---- building graphs ---------------------------------------------------------------------------- */

static uint32_t rng_state = 12345;
static float rnd(void) { /* uniform in [-1, 1), deterministic */
  rng_state = rng_state * 1664525u + 1013904223u;
  return (float)((rng_state >> 8) & 0xffff) / 32768.0f - 1.0f;
}

static qllc_value *input(qllc_graph *g, const char *name, int rank, const int64_t *dims) {
  qllc_value *v = qllc_value_new(g, name, QLLC_ELEM_F32, rank, dims);
  assert_non_null(v);
  assert_int_equal(qllc_graph_add_input(g, v), 0);
  return v;
}

/* A constant filled with rnd() * scale + offset. */
static qllc_value *rconst(qllc_graph *g, const char *name, int rank, const int64_t *dims, float scale, float offset) {
  qllc_value *v = qllc_const_new(g, name, QLLC_ELEM_F32, rank, dims, NULL);
  assert_non_null(v);
  float *f = v->data;
  for (int64_t i = 0; i < qllc_value_numel(v); i++) f[i] = rnd() * scale + offset;
  return v;
}

/* A node with the given inputs (NULL-terminated list not used: explicit count) and one new output. */
static qllc_node *node1(qllc_graph *g, qllc_op op, const char *name, const char *out, int rank, const int64_t *dims,
                        int n_in, ...) {
  qllc_node *n = qllc_node_new(g, op, name, n_in, 1);
  assert_non_null(n);
  va_list ap;
  va_start(ap, n_in);
  for (int k = 0; k < n_in; k++) n->in[k] = va_arg(ap, qllc_value *);
  va_end(ap);
  n->out[0] = qllc_value_new(g, out, QLLC_ELEM_F32, rank, dims);
  assert_non_null(n->out[0]);
  n->out[0]->producer = n;
  return n;
}

static void output(qllc_graph *g, qllc_value *v) { assert_int_equal(qllc_graph_add_output(g, v), 0); }

static int count_op(const qllc_graph *g, qllc_op op) {
  int c = 0;
  for (int i = 0; i < g->n_nodes; i++) c += !g->nodes[i]->dead && g->nodes[i]->op == op;
  return c;
}

static qllc_node *find_node(const qllc_graph *g, const char *name) {
  for (int i = 0; i < g->n_nodes; i++)
    if (!g->nodes[i]->dead && strcmp(g->nodes[i]->name, name) == 0) return g->nodes[i];
  return NULL;
}

static void set_conv_attrs(qllc_graph *g, qllc_node *n, int64_t k, int64_t pad, int64_t stride, int64_t group) {
  int64_t ks[2] = {k, k}, pads[4] = {pad, pad, pad, pad}, st[2] = {stride, stride}, dl[2] = {1, 1};
  qllc_node_set_attr_ints(g, n, "kernel_shape", 2, ks);
  qllc_node_set_attr_ints(g, n, "pads", 4, pads);
  qllc_node_set_attr_ints(g, n, "strides", 2, st);
  qllc_node_set_attr_ints(g, n, "dilations", 2, dl);
  qllc_node_set_attr_int(g, n, "group", group);
}

static void verify_ok(const qllc_graph *g) {
  qllc_diag d;
  memset(&d, 0, sizeof d);
  qllc_status st = qllc_graph_verify(g, &d);
  if (st != QLLC_OK) {
    qllc_graph_print(g, stderr);
    fail_msg("verify: %s", d.message);
  }
}

static void pass_ok(qllc_status (*pass)(qllc_graph *, qllc_diag *), qllc_graph *g) {
  qllc_diag d;
  memset(&d, 0, sizeof d);
  qllc_status st = pass(g, &d);
  if (st != QLLC_OK) fail_msg("pass: %s", d.message);
  verify_ok(g);
}

/* ---- reference evaluation, in double --------------------------------------------------------------- */

/* Conv 2-D NCHW, square kernel/stride/pad, group; x[1][C][H][W] -> y[1][M][OH][OW]. */
static void conv_ref(double *y, const float *x, const float *w, const float *b, int64_t C, int64_t H, int64_t W,
                     int64_t M, int64_t K, int64_t pad, int64_t stride, int64_t group) {
  int64_t OH = (H + 2 * pad - K) / stride + 1, OW = (W + 2 * pad - K) / stride + 1;
  int64_t cpg = C / group, mpg = M / group;
  for (int64_t m = 0; m < M; m++)
    for (int64_t oh = 0; oh < OH; oh++)
      for (int64_t ow = 0; ow < OW; ow++) {
        double acc = b ? b[m] : 0.0;
        int64_t gi = m / mpg;
        for (int64_t c = 0; c < cpg; c++)
          for (int64_t kh = 0; kh < K; kh++)
            for (int64_t kw = 0; kw < K; kw++) {
              int64_t ih = oh * stride - pad + kh, iw = ow * stride - pad + kw;
              if (ih < 0 || ih >= H || iw < 0 || iw >= W) continue;
              acc += (double)x[((gi * cpg + c) * H + ih) * W + iw] * w[((m * cpg + c) * K + kh) * K + kw];
            }
        y[(m * OH + oh) * OW + ow] = acc;
      }
}

/* BatchNormalization (inference) over y[1][C][inner], in place. */
static void bn_ref(double *y, int64_t C, int64_t inner, const float *scale, const float *B, const float *mean,
                   const float *var, double eps) {
  for (int64_t c = 0; c < C; c++)
    for (int64_t i = 0; i < inner; i++) {
      double *p = &y[c * inner + i];
      *p = (*p - mean[c]) / sqrt((double)var[c] + eps) * scale[c] + B[c];
    }
}

/* ONNX Gemm: y[M][N] = alpha * op(A) op(B) + beta * C, C broadcast by strides (cm, cn). */
static void gemm_ref(double *y, const float *A, const float *B, const float *C, int64_t M, int64_t N, int64_t K,
                     int ta, int tb, double alpha, double beta, int64_t c_sm, int64_t c_sn) {
  for (int64_t m = 0; m < M; m++)
    for (int64_t n = 0; n < N; n++) {
      double acc = 0;
      for (int64_t k = 0; k < K; k++)
        acc += (double)(ta ? A[k * M + m] : A[m * K + k]) * (tb ? B[n * K + k] : B[k * N + n]);
      y[m * N + n] = alpha * acc + (C ? beta * C[m * c_sm + n * c_sn] : 0.0);
    }
}

/* FC from ops.def: y[M][N] = x[M][K] W[N][K]^T + b[N]. */
static void fc_ref(double *y, const float *x, const float *W, const float *b, int64_t M, int64_t N, int64_t K) {
  for (int64_t m = 0; m < M; m++)
    for (int64_t n = 0; n < N; n++) {
      double acc = b ? b[n] : 0.0;
      for (int64_t k = 0; k < K; k++) acc += (double)x[m * K + k] * W[n * K + k];
      y[m * N + n] = acc;
    }
}

static void assert_close(const double *a, const double *b, int64_t n, double tol) {
  for (int64_t i = 0; i < n; i++) {
    double err = fabs(a[i] - b[i]), lim = tol * (1.0 + fabs(b[i]));
    if (!(err <= lim)) fail_msg("element %lld: %.9g vs %.9g (err %.3g)", (long long)i, a[i], b[i], err);
  }
}

static float *fill(int64_t n) {
  float *f = malloc(sizeof *f * (size_t)n);
  for (int64_t i = 0; i < n; i++) f[i] = rnd() * 2.0f;
  return f;
}

/* ---- fold_batchnorm -------------------------------------------------------------------------------- */

typedef struct bn_consts {
  qllc_value *scale, *B, *mean, *var;
} bn_consts;

static bn_consts bn_make(qllc_graph *g, int64_t C) {
  int64_t d[1] = {C};
  bn_consts p;
  p.scale = rconst(g, "bn_scale", 1, d, 1.0f, 0.0f);
  p.B = rconst(g, "bn_B", 1, d, 0.5f, 0.0f);
  p.mean = rconst(g, "bn_mean", 1, d, 0.3f, 0.1f);
  p.var = rconst(g, "bn_var", 1, d, 0.4f, 0.6f); /* in [0.2, 1.0) */
  return p;
}

static qllc_node *bn_node(qllc_graph *g, qllc_value *x, const bn_consts *p, const char *out, int rank,
                          const int64_t *dims, float eps) {
  qllc_node *n = node1(g, QLLC_OP_BATCHNORM, "bn", out, rank, dims, 5, x, p->scale, p->B, p->mean, p->var);
  qllc_node_set_attr_float(g, n, "epsilon", eps);
  return n;
}

/* Conv (with or without bias, plain or grouped) -> BN -> graph output: folds into the Conv. */
static void conv_bn_case(int with_bias, int64_t group) {
  const int64_t C = 4, H = 5, W = 6, M = 4, K = 3, pad = 1, stride = 1;
  qllc_graph *g = qllc_graph_new("t.onnx");
  int64_t xd[4] = {1, C, H, W}, wd[4] = {M, C / group, K, K}, bd[1] = {M}, yd[4] = {1, M, H, W};
  qllc_value *x = input(g, "x", 4, xd);
  qllc_value *w = rconst(g, "W", 4, wd, 0.5f, 0.0f);
  qllc_value *b = with_bias ? rconst(g, "b", 1, bd, 0.5f, 0.0f) : NULL;
  qllc_node *conv = with_bias ? node1(g, QLLC_OP_CONV, "conv", "conv_out", 4, yd, 3, x, w, b)
                              : node1(g, QLLC_OP_CONV, "conv", "conv_out", 4, yd, 2, x, w);
  set_conv_attrs(g, conv, K, pad, stride, group);
  bn_consts p = bn_make(g, M);
  bn_node(g, conv->out[0], &p, "y", 4, yd, 1e-3f);
  output(g, qllc_graph_find_value(g, "y"));
  verify_ok(g);

  float *xv = fill(C * H * W);
  double *ref = malloc(sizeof *ref * M * H * W), *got = malloc(sizeof *got * M * H * W);
  conv_ref(ref, xv, w->data, b ? b->data : NULL, C, H, W, M, K, pad, stride, group);
  bn_ref(ref, M, H * W, p.scale->data, p.B->data, p.mean->data, p.var->data, 1e-3);

  pass_ok(qllc_pass_fold_batchnorm, g);
  assert_int_equal(count_op(g, QLLC_OP_BATCHNORM), 0);
  assert_int_equal(count_op(g, QLLC_OP_CHANNEL_AFFINE), 0);
  assert_int_equal(g->n_nodes, 1);
  qllc_node *c = g->nodes[0];
  assert_int_equal(c->op, QLLC_OP_CONV);
  assert_string_equal(c->name, "conv");
  assert_ptr_equal(c->in[0], x);
  assert_int_equal(c->n_in, 3);
  assert_non_null(c->in[2]);
  assert_string_equal(c->out[0]->name, "y");
  assert_ptr_equal(g->outputs[0], c->out[0]);
  assert_ptr_equal(c->out[0]->producer, c);
  assert_null(qllc_graph_find_value(g, "conv_out"));
  /* used only here: rewritten under the model's names */
  assert_string_equal(c->in[1]->name, "W");
  if (with_bias) assert_string_equal(c->in[2]->name, "b");
  conv_ref(got, xv, c->in[1]->data, c->in[2]->data, C, H, W, M, K, pad, stride, group);
  assert_close(got, ref, M * H * W, 1e-5);
  free(xv);
  free(ref);
  free(got);
  qllc_graph_free(g);
}

static void test_bn_fold_conv(void **state) {
  conv_bn_case(1, 1);
  conv_bn_case(0, 1); /* bias created */
  conv_bn_case(1, 2); /* grouped */
  conv_bn_case(0, 4); /* depthwise */
}

/* W feeds two Convs, only one followed by a BN: the BN folds into a copy, the other Conv keeps W. */
static void test_bn_fold_shared_weights(void **state) {
  qllc_graph *g = qllc_graph_new("t.onnx");
  int64_t xd[4] = {1, 2, 3, 3}, wd[4] = {2, 2, 1, 1};
  qllc_value *x = input(g, "x", 4, xd);
  qllc_value *w = rconst(g, "W", 4, wd, 1.0f, 0.0f);
  float w_before[4];
  memcpy(w_before, w->data, sizeof w_before);
  qllc_node *ca = node1(g, QLLC_OP_CONV, "conv_a", "ca", 4, xd, 2, x, w);
  set_conv_attrs(g, ca, 1, 0, 1, 1);
  qllc_node *cb = node1(g, QLLC_OP_CONV, "conv_b", "cb", 4, xd, 2, x, w);
  set_conv_attrs(g, cb, 1, 0, 1, 1);
  bn_consts p = bn_make(g, 2);
  bn_node(g, ca->out[0], &p, "ya", 4, xd, 1e-5f);
  output(g, qllc_graph_find_value(g, "ya"));
  output(g, cb->out[0]);
  pass_ok(qllc_pass_fold_batchnorm, g);
  assert_int_equal(g->n_nodes, 2);
  assert_ptr_equal(cb->in[1], w);
  assert_memory_equal(w->data, w_before, sizeof w_before);
  assert_ptr_not_equal(ca->in[1], w);
  const float *wa = ca->in[1]->data, *sc = p.scale->data, *var = p.var->data;
  for (int m = 0; m < 2; m++)
    for (int c = 0; c < 2; c++)
      assert_float_equal(wa[m * 2 + c], w_before[m * 2 + c] * sc[m] / sqrt(var[m] + 1e-5), 1e-6);
  qllc_graph_free(g);
}

/* BN on a graph input: nothing to fold into, becomes ChannelAffine with a = scale/sqrt(var+eps). */
static void test_bn_to_channel_affine(void **state) {
  qllc_graph *g = qllc_graph_new("t.onnx");
  int64_t xd[4] = {2, 3, 2, 2};
  qllc_value *x = input(g, "x", 4, xd);
  bn_consts p = bn_make(g, 3);
  bn_node(g, x, &p, "y", 4, xd, 1e-5f);
  output(g, qllc_graph_find_value(g, "y"));
  pass_ok(qllc_pass_fold_batchnorm, g);
  assert_int_equal(g->n_nodes, 1);
  qllc_node *n = g->nodes[0];
  assert_int_equal(n->op, QLLC_OP_CHANNEL_AFFINE);
  assert_string_equal(n->name, "bn");
  assert_int_equal(n->n_in, 3);
  assert_int_equal(n->n_out, 1);
  assert_ptr_equal(n->in[0], x);
  assert_string_equal(n->out[0]->name, "y");
  const float *a = n->in[1]->data, *b = n->in[2]->data;
  const float *sc = p.scale->data, *B = p.B->data, *mean = p.mean->data, *var = p.var->data;
  /* hand values: the ONNX formula at a few points, through ChannelAffine's y = x*a + b */
  const float xs[3] = {-1.5f, 0.0f, 2.25f};
  for (int c = 0; c < 3; c++)
    for (int i = 0; i < 3; i++) {
      double want = (xs[i] - mean[c]) / sqrt((double)var[c] + 1e-5) * sc[c] + B[c];
      double got = (double)xs[i] * a[c] + b[c];
      assert_true(fabs(got - want) <= 1e-6 * (1 + fabs(want)));
    }
  qllc_graph_free(g);
}

/* Conv output used twice (BN and a graph output): the BN cannot fold, and the Conv is untouched. */
static void test_bn_no_fold_when_shared(void **state) {
  qllc_graph *g = qllc_graph_new("t.onnx");
  int64_t xd[4] = {1, 2, 3, 3}, wd[4] = {2, 2, 1, 1};
  qllc_value *x = input(g, "x", 4, xd);
  qllc_value *w = rconst(g, "W", 4, wd, 1.0f, 0.0f);
  qllc_node *conv = node1(g, QLLC_OP_CONV, "conv", "c", 4, xd, 2, x, w);
  set_conv_attrs(g, conv, 1, 0, 1, 1);
  bn_consts p = bn_make(g, 2);
  bn_node(g, conv->out[0], &p, "y", 4, xd, 1e-5f);
  output(g, conv->out[0]);
  output(g, qllc_graph_find_value(g, "y"));
  pass_ok(qllc_pass_fold_batchnorm, g);
  assert_int_equal(count_op(g, QLLC_OP_CHANNEL_AFFINE), 1);
  assert_ptr_equal(find_node(g, "conv")->in[1], w);
  assert_string_equal(g->outputs[0]->name, "c");
  assert_string_equal(g->outputs[1]->name, "y");
  qllc_graph_free(g);
}

/* Gemm(transB, alpha, beta, C) -> BN: folds into B and C, beta becomes 1. */
static void test_bn_fold_gemm(void **state) {
  const int64_t M = 3, K = 5, N = 4;
  qllc_graph *g = qllc_graph_new("t.onnx");
  int64_t ad[2] = {M, K}, bd[2] = {N, K}, cd[1] = {N}, yd[2] = {M, N};
  qllc_value *a = input(g, "a", 2, ad);
  qllc_value *bm = rconst(g, "B", 2, bd, 1.0f, 0.0f);
  qllc_value *c = rconst(g, "C", 1, cd, 1.0f, 0.0f);
  qllc_node *gm = node1(g, QLLC_OP_GEMM, "gemm", "g", 2, yd, 3, a, bm, c);
  qllc_node_set_attr_int(g, gm, "transA", 0);
  qllc_node_set_attr_int(g, gm, "transB", 1);
  qllc_node_set_attr_float(g, gm, "alpha", 0.75f);
  qllc_node_set_attr_float(g, gm, "beta", -2.0f);
  bn_consts p = bn_make(g, N);
  bn_node(g, gm->out[0], &p, "y", 2, yd, 1e-5f);
  output(g, qllc_graph_find_value(g, "y"));

  float *av = fill(M * K);
  double ref[12], got[12];
  gemm_ref(ref, av, bm->data, c->data, M, N, K, 0, 1, 0.75, -2.0, 0, 1);
  /* BatchNorm over [M][N]: the channel is the last axis here */
  const float *sc = p.scale->data, *B = p.B->data, *mean = p.mean->data, *var = p.var->data;
  for (int64_t m = 0; m < M; m++)
    for (int64_t n = 0; n < N; n++)
      ref[m * N + n] = (ref[m * N + n] - mean[n]) / sqrt((double)var[n] + 1e-5) * sc[n] + B[n];

  pass_ok(qllc_pass_fold_batchnorm, g);
  assert_int_equal(g->n_nodes, 1);
  qllc_node *n = g->nodes[0];
  assert_int_equal(n->op, QLLC_OP_GEMM);
  assert_string_equal(n->out[0]->name, "y");
  assert_true(qllc_attr_float(n, "beta", 0) == 1.0f);
  gemm_ref(got, av, n->in[1]->data, n->in[2]->data, M, N, K, 0, 1, qllc_attr_float(n, "alpha", 1), 1.0, 0, 1);
  assert_close(got, ref, M * N, 1e-5);

  /* and then to FC: the same numbers through the FC definition */
  pass_ok(qllc_pass_gemm_to_fc, g);
  n = g->nodes[0];
  assert_int_equal(n->op, QLLC_OP_FC);
  fc_ref(got, av, n->in[1]->data, n->in[2]->data, M, N, K);
  assert_close(got, ref, M * N, 1e-5);
  free(av);
  qllc_graph_free(g);
}

/* ---- gemm_to_fc ---------------------------------------------------------------------------------- */

/* Gemm with alpha, beta, transB and a C of shape cshape -> FC with W = alpha * op(B)^T, b = beta * C. */
static void gemm_fc_case(int tb, int crank, const int64_t *cdims, int expect_fc) {
  const int64_t M = 2, K = 3, N = 4;
  qllc_graph *g = qllc_graph_new("t.onnx");
  int64_t ad[2] = {M, K}, bdT[2] = {N, K}, bd[2] = {K, N}, yd[2] = {M, N};
  qllc_value *a = input(g, "a", 2, ad);
  qllc_value *bm = rconst(g, "B", 2, tb ? bdT : bd, 1.0f, 0.0f);
  qllc_value *c = crank >= 0 ? rconst(g, "C", crank, cdims, 1.0f, 0.0f) : NULL;
  qllc_node *gm = c ? node1(g, QLLC_OP_GEMM, "gemm", "y", 2, yd, 3, a, bm, c)
                    : node1(g, QLLC_OP_GEMM, "gemm", "y", 2, yd, 3, a, bm, NULL);
  qllc_node_set_attr_int(g, gm, "transA", 0);
  qllc_node_set_attr_int(g, gm, "transB", tb);
  qllc_node_set_attr_float(g, gm, "alpha", 2.5f);
  qllc_node_set_attr_float(g, gm, "beta", 0.5f);
  output(g, gm->out[0]);
  int64_t cn = 1, cm = 1;
  if (c && crank >= 1) cn = cdims[crank - 1];
  if (c && crank == 2) cm = cdims[0];
  float *av = fill(M * K);
  double ref[8], got[8];
  gemm_ref(ref, av, bm->data, c ? c->data : NULL, M, N, K, 0, tb, 2.5, 0.5, cm == 1 ? 0 : cn, cn == 1 ? 0 : 1);
  float bf[12], cf[8];
  memcpy(bf, bm->data, sizeof bf);
  if (c) memcpy(cf, c->data, qllc_value_bytes(c));

  pass_ok(qllc_pass_gemm_to_fc, g);
  assert_int_equal(g->n_nodes, 1);
  qllc_node *n = g->nodes[0];
  assert_string_equal(n->name, "gemm");
  assert_string_equal(n->out[0]->name, "y");
  if (!expect_fc) {
    assert_int_equal(n->op, QLLC_OP_GEMM);
    assert_ptr_equal(n->in[1], bm);
  } else {
    assert_int_equal(n->op, QLLC_OP_FC);
    assert_string_equal(n->op_type, "qllc.FullyConnected");
    assert_null(qllc_node_attr(n, "alpha"));
    qllc_value *W = n->in[1];
    assert_int_equal(W->rank, 2);
    assert_int_equal(W->dims[0], N);
    assert_int_equal(W->dims[1], K);
    const float *wf = W->data;
    assert_string_equal(W->name, "B");
    for (int64_t i = 0; i < N; i++)
      for (int64_t k = 0; k < K; k++)
        assert_true(wf[i * K + k] == (float)(2.5 * (tb ? bf[i * K + k] : bf[k * N + i])));
    if (c) {
      assert_int_equal(n->in[2]->rank, 1);
      assert_int_equal(n->in[2]->dims[0], N);
      for (int64_t i = 0; i < N; i++)
        assert_true(((float *)n->in[2]->data)[i] == 0.5f * cf[cn == 1 ? 0 : i]);
    } else {
      assert_null(n->in[2]);
    }
    fc_ref(got, av, W->data, n->in[2] ? n->in[2]->data : NULL, M, N, K);
    assert_close(got, ref, M * N, 1e-6);
  }
  free(av);
  qllc_graph_free(g);
}

static void test_gemm_to_fc(void **state) {
  int64_t n1[1] = {4}, n2[2] = {1, 4}, s1[1] = {1}, mn[2] = {2, 4}, m1[2] = {2, 1};
  gemm_fc_case(1, 1, n1, 1);
  gemm_fc_case(0, 1, n1, 1);
  gemm_fc_case(0, 2, n2, 1);
  gemm_fc_case(1, 1, s1, 1);
  gemm_fc_case(1, 0, NULL, 1);  /* scalar C */
  gemm_fc_case(0, -1, NULL, 1); /* no C */
  gemm_fc_case(1, 2, mn, 0);    /* C varies along M: stays Gemm */
  gemm_fc_case(1, 2, m1, 0);
}

static void test_gemm_stays(void **state) {
  qllc_graph *g = qllc_graph_new("t.onnx");
  int64_t ad[2] = {3, 2}, bd[2] = {3, 4}, yd[2] = {2, 4};
  qllc_value *a = input(g, "a", 2, ad);
  qllc_value *bm = rconst(g, "B", 2, bd, 1.0f, 0.0f);
  qllc_node *gm = node1(g, QLLC_OP_GEMM, "transposed_a", "y", 2, yd, 3, a, bm, NULL);
  qllc_node_set_attr_int(g, gm, "transA", 1);
  output(g, gm->out[0]);
  int64_t a2d[2] = {2, 3};
  qllc_value *a2 = input(g, "a2", 2, a2d);
  qllc_value *b2 = input(g, "b2", 2, bd); /* B computed: not a constant */
  qllc_node *g2 = node1(g, QLLC_OP_GEMM, "runtime_b", "y2", 2, yd, 3, a2, b2, NULL);
  output(g, g2->out[0]);
  pass_ok(qllc_pass_gemm_to_fc, g);
  assert_int_equal(count_op(g, QLLC_OP_GEMM), 2);
  assert_int_equal(count_op(g, QLLC_OP_FC), 0);
  qllc_graph_free(g);
}

/* MatMul(x, B) -> Add(bias) with the bias on either side -> FC named after the MatMul, writing the
 * Add's output (a graph output). */
static void matmul_add_case(int bias_first, int bias_rank) {
  const int64_t M = 3, K = 4, N = 2;
  qllc_graph *g = qllc_graph_new("t.onnx");
  int64_t xd[2] = {M, K}, bd[2] = {K, N}, yd[2] = {M, N}, cd1[1] = {N}, cd2[2] = {1, N};
  qllc_value *x = input(g, "x", 2, xd);
  qllc_value *bm = rconst(g, "B", 2, bd, 1.0f, 0.0f);
  qllc_value *c = rconst(g, "bias", bias_rank, bias_rank == 1 ? cd1 : cd2, 1.0f, 0.0f);
  qllc_node *mm = node1(g, QLLC_OP_MATMUL, "mm", "mm_out", 2, yd, 2, x, bm);
  qllc_node *add = bias_first ? node1(g, QLLC_OP_ADD, "add", "z", 2, yd, 2, c, mm->out[0])
                              : node1(g, QLLC_OP_ADD, "add", "z", 2, yd, 2, mm->out[0], c);
  output(g, add->out[0]);
  float *xv = fill(M * K);
  double ref[6], got[6];
  gemm_ref(ref, xv, bm->data, c->data, M, N, K, 0, 0, 1.0, 1.0, 0, 1);
  pass_ok(qllc_pass_gemm_to_fc, g);
  assert_int_equal(g->n_nodes, 1);
  qllc_node *n = g->nodes[0];
  assert_int_equal(n->op, QLLC_OP_FC);
  assert_string_equal(n->name, "mm");
  assert_string_equal(n->out[0]->name, "z");
  assert_ptr_equal(g->outputs[0], n->out[0]);
  assert_null(qllc_graph_find_value(g, "mm_out"));
  assert_int_equal(n->in[2]->rank, 1);
  fc_ref(got, xv, n->in[1]->data, n->in[2]->data, M, N, K);
  assert_close(got, ref, M * N, 1e-6);
  free(xv);
  qllc_graph_free(g);
}

static void test_matmul_add_to_fc(void **state) {
  matmul_add_case(0, 1);
  matmul_add_case(1, 1);
  matmul_add_case(0, 2);
}

/* MatMul output also a graph output, or the Add's other operand computed: the Add is not fused; each
 * MatMul (constant 2-D B) still becomes an FC without bias, writing its own output. */
static void test_matmul_add_stays(void **state) {
  qllc_graph *g = qllc_graph_new("t.onnx");
  int64_t xd[2] = {3, 4}, bd[2] = {4, 2}, yd[2] = {3, 2}, cd[1] = {2};
  qllc_value *x = input(g, "x", 2, xd);
  qllc_value *bm = rconst(g, "B", 2, bd, 1.0f, 0.0f);
  qllc_value *c = rconst(g, "bias", 1, cd, 1.0f, 0.0f);
  qllc_node *mm = node1(g, QLLC_OP_MATMUL, "mm", "mm_out", 2, yd, 2, x, bm);
  qllc_node *add = node1(g, QLLC_OP_ADD, "add", "z", 2, yd, 2, mm->out[0], c);
  output(g, mm->out[0]);
  output(g, add->out[0]);
  qllc_value *y2 = input(g, "y2", 2, yd);
  qllc_node *mm2 = node1(g, QLLC_OP_MATMUL, "mm2", "mm2_out", 2, yd, 2, x, bm);
  qllc_node *add2 = node1(g, QLLC_OP_ADD, "add2", "z2", 2, yd, 2, mm2->out[0], y2);
  output(g, add2->out[0]);
  pass_ok(qllc_pass_gemm_to_fc, g);
  assert_int_equal(count_op(g, QLLC_OP_MATMUL), 0);
  assert_int_equal(count_op(g, QLLC_OP_ADD), 2);
  assert_int_equal(count_op(g, QLLC_OP_FC), 2);
  for (int i = 0; i < g->n_nodes; i++) {
    qllc_node *n = g->nodes[i];
    if (n->op != QLLC_OP_FC) continue;
    assert_null(n->in[2]);
    assert_string_equal(n->out[0]->name, !strcmp(n->name, "mm") ? "mm_out" : "mm2_out");
    const float *w = n->in[1]->data, *b = bm->data; /* W[n][k] = B[k][n] */
    assert_int_equal(n->in[1]->dims[0], 2);
    for (int k = 0; k < 4; k++)
      for (int j = 0; j < 2; j++) assert_true(w[j * 4 + k] == b[k * 2 + j]); /* B is shared: never rewritten */
  }
  qllc_graph_free(g);
}


/* MatMul of x[2,3,4] by constant B[4,5] then Add c[5] (a transformer's Linear): Reshape x to [6,4], one FC
 * with the bias, Reshape back to [2,3,5] writing the Add's output z (a graph output, name kept). */
static void test_matmul_add_rank3(void **state) {
  qllc_graph *g = qllc_graph_new("t.onnx");
  int64_t xd[3] = {2, 3, 4}, bd[2] = {4, 5}, yd[3] = {2, 3, 5}, cd[1] = {5};
  qllc_value *x = input(g, "x", 3, xd);
  qllc_value *bm = rconst(g, "B", 2, bd, 1.0f, 0.0f);
  qllc_value *c = rconst(g, "bias", 1, cd, 1.0f, 0.5f);
  float Bv[20], cv[5];
  memcpy(Bv, bm->data, sizeof Bv);
  memcpy(cv, c->data, sizeof cv);
  qllc_node *mm = node1(g, QLLC_OP_MATMUL, "mm", "mm_out", 3, yd, 2, x, bm);
  qllc_node *add = node1(g, QLLC_OP_ADD, "add", "z", 3, yd, 2, mm->out[0], c);
  output(g, add->out[0]);
  pass_ok(qllc_pass_gemm_to_fc, g);
  assert_int_equal(count_op(g, QLLC_OP_MATMUL), 0);
  assert_int_equal(count_op(g, QLLC_OP_ADD), 0);
  assert_int_equal(count_op(g, QLLC_OP_FC), 1);
  assert_int_equal(count_op(g, QLLC_OP_RESHAPE), 2);
  assert_int_equal(g->n_nodes, 3);
  assert_int_equal(g->nodes[0]->op, QLLC_OP_RESHAPE);
  assert_int_equal(g->nodes[1]->op, QLLC_OP_FC);
  assert_int_equal(g->nodes[2]->op, QLLC_OP_RESHAPE);
  qllc_node *fc = g->nodes[1];
  assert_string_equal(fc->name, "mm");
  assert_ptr_equal(fc->in[0], g->nodes[0]->out[0]);
  assert_int_equal(fc->in[0]->rank, 2);
  assert_int_equal(fc->in[0]->dims[0], 6);
  assert_int_equal(fc->out[0]->dims[0], 6);
  assert_int_equal(fc->out[0]->dims[1], 5);
  assert_ptr_equal(g->nodes[2]->in[0], fc->out[0]);
  assert_string_equal(g->nodes[2]->out[0]->name, "z");
  assert_ptr_equal(g->outputs[0], g->nodes[2]->out[0]);
  assert_int_equal(qllc_graph_verify(g, NULL), QLLC_OK);
  /* numerics: y = x B + c, row-major over the flattened [6, 4] view */
  float xv[24];
  for (int i = 0; i < 24; i++) xv[i] = rnd();
  double got[30], ref[30];
  fc_ref(got, xv, fc->in[1]->data, fc->in[2]->data, 6, 5, 4);
  for (int m = 0; m < 6; m++)
    for (int n = 0; n < 5; n++) {
      double acc = cv[n];
      for (int k = 0; k < 4; k++) acc += (double)xv[m * 4 + k] * Bv[k * 5 + n];
      ref[m * 5 + n] = acc;
    }
  assert_close(got, ref, 30, 1e-6);
  qllc_graph_free(g);
}

/* ---- fuse_activation ------------------------------------------------------------------------------ */

static qllc_node *conv1x1(qllc_graph *g, const char *name, qllc_value *x, const char *out) {
  int64_t wd[4] = {x->dims[1], x->dims[1], 1, 1};
  qllc_value *w = rconst(g, NULL, 4, wd, 1.0f, 0.0f);
  qllc_node *c = node1(g, QLLC_OP_CONV, name, out, x->rank, x->dims, 2, x, w);
  set_conv_attrs(g, c, 1, 0, 1, 1);
  return c;
}

static qllc_node *clip_node(qllc_graph *g, const char *name, qllc_value *x, const char *out, float lo, float hi) {
  qllc_node *n = node1(g, QLLC_OP_CLIP, name, out, x->rank, x->dims, 1, x);
  qllc_node_set_attr_float(g, n, "min", lo);
  qllc_node_set_attr_float(g, n, "max", hi);
  return n;
}

static void test_fuse_relu(void **state) {
  qllc_graph *g = qllc_graph_new("t.onnx");
  int64_t xd[4] = {1, 2, 2, 2};
  qllc_value *x = input(g, "x", 4, xd);
  qllc_node *c = conv1x1(g, "conv", x, "c");
  qllc_node *r = node1(g, QLLC_OP_RELU, "relu", "y", 4, xd, 1, c->out[0]);
  output(g, r->out[0]);
  pass_ok(qllc_pass_fuse_activation, g);
  assert_int_equal(g->n_nodes, 1);
  assert_int_equal(count_op(g, QLLC_OP_RELU), 0);
  assert_ptr_equal(g->nodes[0], c);
  assert_int_equal(c->act, QLLC_ACT_RELU);
  assert_true(c->act_lo == 0.0f && c->act_hi == INFINITY);
  assert_string_equal(c->out[0]->name, "y");
  assert_string_equal(g->outputs[0]->name, "y");
  assert_null(qllc_graph_find_value(g, "c"));
  qllc_graph_free(g);
}

/* conv -> Reshape -> Relu: the clamp goes into the conv, the Reshape writes the Relu's output (a view
 * commutes with an elementwise clamp); a Reshape with another user is not looked through. */
static void test_fuse_relu_through_view(void **state) {
  qllc_graph *g = qllc_graph_new("t.onnx");
  int64_t xd[4] = {1, 2, 2, 2}, fd[2] = {1, 8};
  qllc_value *x = input(g, "x", 4, xd);
  qllc_node *c = conv1x1(g, "conv", x, "c");
  qllc_node *v = node1(g, QLLC_OP_RESHAPE, "view", "f", 2, fd, 1, c->out[0]);
  qllc_node_set_attr_ints(g, v, "shape", 2, fd);
  qllc_node *r = node1(g, QLLC_OP_RELU, "relu", "y", 2, fd, 1, v->out[0]);
  output(g, r->out[0]);
  pass_ok(qllc_pass_fuse_activation, g);
  assert_int_equal(count_op(g, QLLC_OP_RELU), 0);
  assert_int_equal(g->n_nodes, 2);
  assert_int_equal(c->act, QLLC_ACT_RELU);
  assert_ptr_equal(v->in[0], c->out[0]);
  assert_string_equal(v->out[0]->name, "y");
  assert_ptr_equal(g->outputs[0], v->out[0]);
  assert_null(qllc_graph_find_value(g, "f"));
  assert_int_equal(qllc_graph_verify(g, NULL), QLLC_OK);
  qllc_graph_free(g);

  g = qllc_graph_new("t.onnx"); /* the view's output is also a graph output: not fused */
  x = input(g, "x", 4, xd);
  c = conv1x1(g, "conv", x, "c");
  v = node1(g, QLLC_OP_RESHAPE, "view", "f", 2, fd, 1, c->out[0]);
  qllc_node_set_attr_ints(g, v, "shape", 2, fd);
  r = node1(g, QLLC_OP_RELU, "relu", "y", 2, fd, 1, v->out[0]);
  output(g, v->out[0]);
  output(g, r->out[0]);
  pass_ok(qllc_pass_fuse_activation, g);
  assert_int_equal(count_op(g, QLLC_OP_RELU), 1);
  assert_int_equal(c->act, QLLC_ACT_NONE);
  qllc_graph_free(g);
}

static void test_fuse_clip_gemm_fc(void **state) {
  qllc_graph *g = qllc_graph_new("t.onnx");
  int64_t ad[2] = {2, 3}, bd[2] = {3, 4}, yd[2] = {2, 4};
  qllc_value *a = input(g, "a", 2, ad);
  qllc_value *bm = rconst(g, "B", 2, bd, 1.0f, 0.0f);
  qllc_node *gm = node1(g, QLLC_OP_GEMM, "gemm", "g", 2, yd, 3, a, bm, NULL);
  qllc_node *cl = clip_node(g, "clip6", gm->out[0], "y", 0.0f, 6.0f);
  output(g, cl->out[0]);
  /* Conv -> Relu -> Clip(-1, 4) composes to clip [0, 4] */
  int64_t xd[4] = {1, 2, 2, 2};
  qllc_value *x = input(g, "x", 4, xd);
  qllc_node *c = conv1x1(g, "conv", x, "c");
  qllc_node *r = node1(g, QLLC_OP_RELU, "relu", "r", 4, xd, 1, c->out[0]);
  qllc_node *c2 = clip_node(g, "clip4", r->out[0], "y2", -1.0f, 4.0f);
  output(g, c2->out[0]);
  pass_ok(qllc_pass_fuse_activation, g);
  assert_int_equal(g->n_nodes, 2);
  assert_int_equal(gm->act, QLLC_ACT_CLIP);
  assert_true(gm->act_lo == 0.0f && gm->act_hi == 6.0f);
  assert_string_equal(gm->out[0]->name, "y");
  assert_int_equal(c->act, QLLC_ACT_CLIP);
  assert_true(c->act_lo == 0.0f && c->act_hi == 4.0f);
  assert_string_equal(c->out[0]->name, "y2");
  /* FC too */
  pass_ok(qllc_pass_gemm_to_fc, g);
  assert_int_equal(gm->op, QLLC_OP_FC);
  assert_int_equal(gm->act, QLLC_ACT_CLIP);
  qllc_graph_free(g);
}

/* Not fused: the conv output is used twice; the conv output is a graph output; the producer is an Add;
 * two clamps whose ranges do not meet. */
static void test_fuse_refused(void **state) {
  qllc_graph *g = qllc_graph_new("t.onnx");
  int64_t xd[4] = {1, 2, 2, 2};
  qllc_value *x = input(g, "x", 4, xd);
  qllc_node *c1 = conv1x1(g, "conv1", x, "c1");
  qllc_node *r1 = node1(g, QLLC_OP_RELU, "relu1", "r1", 4, xd, 1, c1->out[0]);
  qllc_node *a1 = node1(g, QLLC_OP_ADD, "add1", "s1", 4, xd, 2, c1->out[0], r1->out[0]);
  output(g, a1->out[0]);
  qllc_node *c2 = conv1x1(g, "conv2", x, "c2");
  qllc_node *r2 = node1(g, QLLC_OP_RELU, "relu2", "r2", 4, xd, 1, c2->out[0]);
  output(g, c2->out[0]);
  output(g, r2->out[0]);
  qllc_node *a3 = node1(g, QLLC_OP_ADD, "add3", "s3", 4, xd, 2, x, x);
  qllc_node *r3 = node1(g, QLLC_OP_RELU, "relu3", "r3", 4, xd, 1, a3->out[0]);
  output(g, r3->out[0]);
  qllc_node *c4 = conv1x1(g, "conv4", x, "c4");
  qllc_node *k4 = clip_node(g, "clipa", c4->out[0], "k4", 0.0f, 1.0f);
  qllc_node *k5 = clip_node(g, "clipb", k4->out[0], "k5", 2.0f, 3.0f);
  output(g, k5->out[0]);
  pass_ok(qllc_pass_fuse_activation, g);
  assert_int_equal(count_op(g, QLLC_OP_RELU), 3);
  assert_int_equal(c1->act, QLLC_ACT_NONE);
  assert_int_equal(c2->act, QLLC_ACT_NONE);
  assert_string_equal(c2->out[0]->name, "c2");
  assert_int_equal(c4->act, QLLC_ACT_CLIP); /* the first clip fuses, the second cannot */
  assert_non_null(find_node(g, "clipb"));
  assert_null(find_node(g, "clipa"));
  qllc_graph_free(g);
}

/* ---- eliminate_identity ---------------------------------------------------------------------------- */

static void test_identity_on_output_keeps_name(void **state) {
  qllc_graph *g = qllc_graph_new("t.onnx");
  int64_t xd[4] = {1, 2, 2, 2};
  qllc_value *x = input(g, "x", 4, xd);
  qllc_node *c = conv1x1(g, "conv", x, "c");
  qllc_node *id = node1(g, QLLC_OP_IDENTITY, "id", "y", 4, xd, 1, c->out[0]);
  qllc_node *r = node1(g, QLLC_OP_RELU, "relu", "r", 4, xd, 1, c->out[0]); /* another user of c */
  output(g, r->out[0]);
  output(g, id->out[0]);
  pass_ok(qllc_pass_eliminate_identity, g);
  assert_int_equal(count_op(g, QLLC_OP_IDENTITY), 0);
  assert_string_equal(c->out[0]->name, "y");
  assert_ptr_equal(r->in[0], c->out[0]);
  assert_string_equal(g->outputs[0]->name, "r");
  assert_string_equal(g->outputs[1]->name, "y");
  assert_null(qllc_graph_find_value(g, "c"));
  qllc_graph_free(g);
}

static void test_identity_input_to_output_kept(void **state) {
  qllc_graph *g = qllc_graph_new("t.onnx");
  int64_t xd[2] = {2, 3};
  qllc_value *x = input(g, "x", 2, xd);
  qllc_value *k = rconst(g, "k", 2, xd, 1.0f, 0.0f);
  qllc_node *i1 = node1(g, QLLC_OP_IDENTITY, "id_in", "y", 2, xd, 1, x);
  qllc_node *i2 = node1(g, QLLC_OP_IDENTITY, "id_const", "z", 2, xd, 1, k);
  output(g, i1->out[0]);
  output(g, i2->out[0]);
  pass_ok(qllc_pass_eliminate_identity, g);
  assert_int_equal(count_op(g, QLLC_OP_IDENTITY), 2);
  assert_string_equal(g->outputs[0]->name, "y");
  assert_string_equal(g->outputs[1]->name, "z");
  qllc_graph_free(g);
}

/* Conv -> Dropout -> Identity -> Relu -> output: both removed, the Relu reads the conv directly. A
 * Dropout whose mask is used stays. */
static void test_dropout_and_chain(void **state) {
  qllc_graph *g = qllc_graph_new("t.onnx");
  int64_t xd[4] = {1, 2, 2, 2};
  qllc_value *x = input(g, "x", 4, xd);
  qllc_node *c = conv1x1(g, "conv", x, "c");
  qllc_node *d = node1(g, QLLC_OP_DROPOUT, "drop", "d", 4, xd, 1, c->out[0]);
  qllc_node *id = node1(g, QLLC_OP_IDENTITY, "id", "i", 4, xd, 1, d->out[0]);
  qllc_node *r = node1(g, QLLC_OP_RELU, "relu", "y", 4, xd, 1, id->out[0]);
  output(g, r->out[0]);
  qllc_node *d2 = qllc_node_new(g, QLLC_OP_DROPOUT, "drop_mask", 1, 2);
  d2->in[0] = x;
  d2->out[0] = qllc_value_new(g, "d2", QLLC_ELEM_F32, 4, xd);
  d2->out[1] = qllc_value_new(g, "mask", QLLC_ELEM_U8, 4, xd);
  output(g, d2->out[0]);
  output(g, d2->out[1]);
  pass_ok(qllc_pass_eliminate_identity, g);
  assert_int_equal(count_op(g, QLLC_OP_IDENTITY), 0);
  assert_int_equal(count_op(g, QLLC_OP_DROPOUT), 1);
  assert_non_null(find_node(g, "drop_mask"));
  assert_ptr_equal(r->in[0], c->out[0]);
  assert_string_equal(c->out[0]->name, "c");
  assert_string_equal(g->outputs[0]->name, "y");
  /* then fusion sees Conv -> Relu */
  pass_ok(qllc_pass_fuse_activation, g);
  assert_int_equal(c->act, QLLC_ACT_RELU);
  assert_string_equal(c->out[0]->name, "y");
  qllc_graph_free(g);
}

/* ---- pipeline ---------------------------------------------------------------------------------------- */

static void test_pipeline_unknown_dump(void **state) {
  qllc_graph *g = qllc_graph_new("t.onnx");
  int64_t xd[2] = {2, 3};
  qllc_value *x = input(g, "x", 2, xd);
  qllc_node *i1 = node1(g, QLLC_OP_IDENTITY, "id", "y", 2, xd, 1, x);
  output(g, i1->out[0]);
  qllc_diag d;
  memset(&d, 0, sizeof d);
  assert_int_equal(qllc_graph_optimize(g, "fold_everything", NULL, &d), QLLC_ERR_INVALID);
  assert_non_null(strstr(d.message, "fold_everything"));
  assert_non_null(strstr(d.message, "fold_batchnorm"));
  assert_non_null(strstr(d.message, "eliminate_identity"));
  assert_int_equal(g->n_nodes, 1); /* nothing ran */
  /* "import" is known (the loader's caller prints it), so the pipeline runs; the Identity from an
   * input to an output stays */
  assert_int_equal(qllc_graph_optimize(g, "import", NULL, &d), QLLC_OK);
  assert_int_equal(g->n_nodes, 1);
  assert_string_equal(g->outputs[0]->name, "y");
  qllc_graph_free(g);
}

/* Conv -> BN -> Relu -> Identity(output) and MatMul -> Add -> Clip -> Dropout(output): after the pipeline,
 * a Conv with relu writing "y" and an FC with clip writing "z"; dump_after prints the graph once. */
static void test_pipeline(void **state) {
  qllc_graph *g = qllc_graph_new("t.onnx");
  int64_t xd[4] = {1, 2, 3, 3};
  qllc_value *x = input(g, "x", 4, xd);
  qllc_node *c = conv1x1(g, "conv", x, "c");
  bn_consts p = bn_make(g, 2);
  qllc_node *bn = bn_node(g, c->out[0], &p, "b", 4, xd, 1e-5f);
  qllc_node *r = node1(g, QLLC_OP_RELU, "relu", "r", 4, xd, 1, bn->out[0]);
  qllc_node *id = node1(g, QLLC_OP_IDENTITY, "id", "y", 4, xd, 1, r->out[0]);
  output(g, id->out[0]);
  int64_t md[2] = {2, 3}, wd[2] = {3, 5}, zd[2] = {2, 5}, bd[1] = {5};
  qllc_value *m = input(g, "m", 2, md);
  qllc_value *w = rconst(g, "W", 2, wd, 1.0f, 0.0f);
  qllc_value *bias = rconst(g, "bias", 1, bd, 1.0f, 0.0f);
  qllc_node *mm = node1(g, QLLC_OP_MATMUL, "mm", "mmo", 2, zd, 2, m, w);
  qllc_node *add = node1(g, QLLC_OP_ADD, "add", "addo", 2, zd, 2, mm->out[0], bias);
  qllc_node *cl = clip_node(g, "clip", add->out[0], "clo", -1.0f, 1.0f);
  qllc_node *dr = node1(g, QLLC_OP_DROPOUT, "drop", "z", 2, zd, 1, cl->out[0]);
  output(g, dr->out[0]);
  verify_ok(g);

  char *buf = NULL;
  size_t len = 0;
  FILE *dump = open_memstream(&buf, &len);
  qllc_diag d;
  memset(&d, 0, sizeof d);
  qllc_status st = qllc_graph_optimize(g, "fuse_activation", dump, &d);
  fclose(dump);
  if (st != QLLC_OK) fail_msg("optimize: %s", d.message);
  if (g->n_nodes != 2) {
    qllc_graph_print(g, stderr);
    fail_msg("%d nodes after the pipeline, want 2", g->n_nodes);
  }
  assert_ptr_equal(g->nodes[0], c);
  assert_int_equal(c->act, QLLC_ACT_RELU);
  assert_string_equal(c->out[0]->name, "y");
  assert_ptr_equal(g->nodes[1], mm);
  assert_int_equal(mm->op, QLLC_OP_FC);
  assert_int_equal(mm->act, QLLC_ACT_CLIP);
  assert_string_equal(mm->out[0]->name, "z");
  assert_string_equal(g->outputs[0]->name, "y");
  assert_string_equal(g->outputs[1]->name, "z");
  /* printed once, after fuse_activation: the Relu is gone, the Identity and Dropout still there */
  assert_non_null(strstr(buf, "# after fuse_activation"));
  assert_null(strstr(buf, "# after fold_batchnorm"));
  assert_null(strstr(buf, "Relu("));
  assert_non_null(strstr(buf, "Identity("));
  assert_non_null(strstr(buf, "act=relu"));
  free(buf);
  qllc_graph_free(g);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_bn_fold_conv),
      cmocka_unit_test(test_bn_fold_shared_weights),
      cmocka_unit_test(test_bn_to_channel_affine),
      cmocka_unit_test(test_bn_no_fold_when_shared),
      cmocka_unit_test(test_bn_fold_gemm),
      cmocka_unit_test(test_gemm_to_fc),
      cmocka_unit_test(test_gemm_stays),
      cmocka_unit_test(test_matmul_add_to_fc),
      cmocka_unit_test(test_matmul_add_stays),
      cmocka_unit_test(test_matmul_add_rank3),
      cmocka_unit_test(test_fuse_relu_through_view),
      cmocka_unit_test(test_fuse_relu),
      cmocka_unit_test(test_fuse_clip_gemm_fc),
      cmocka_unit_test(test_fuse_refused),
      cmocka_unit_test(test_identity_on_output_keeps_name),
      cmocka_unit_test(test_identity_input_to_output_kept),
      cmocka_unit_test(test_dropout_and_chain),
      cmocka_unit_test(test_pipeline_unknown_dump),
      cmocka_unit_test(test_pipeline),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
