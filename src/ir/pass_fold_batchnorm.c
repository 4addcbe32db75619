/* src/ir/pass_fold_batchnorm.c: BatchNormalization (inference) folded away.
 *
 * Algorithm. For each BatchNormalization y = (x - mean) / sqrt(var + eps) * scale + B whose four
 * parameters are f32 constants of C = x.dims[1] elements, let a = scale / sqrt(var + eps) and
 * b = B - mean * a (per channel c, computed in double). Then
 *  - when x is produced by a Conv (weights W[M][C/g][kh][kw], M == C), an FC (W[N][K]) or a Gemm with
 *    constant weights and bias, and x has no other use and is not a graph output: the producer's
 *    output channel c is scaled by a[c] and shifted by b[c]: W'[c] = W[c] * a[c],
 *    bias'[c] = (bias[c] - mean[c]) * a[c] + B[c] (bias 0 when absent; a bias is created). For Gemm,
 *    column c of op(B) is scaled and C' = (beta*C - mean) * a + B with beta set to 1 (C' broadcast to
 *    [M][N] when C was [M][N] or [M][1], else [N]). The producer then writes the BatchNorm's output
 *    value directly and the BatchNorm node dies;
 *  - otherwise the node becomes CHANNEL_AFFINE(x, a, b), computing the same thing at run time.
 * A BatchNormalization with non-constant parameters, training_mode set, per-element parameters (old
 * spatial=0) or used extra outputs (running mean/var) is left alone: lowering reports it.
 *
 * Invariants. A weight or bias that feeds another node too is never changed: the folded one is a new
 * constant; one used only here is rewritten under its own name (as model authors and bundle headers
 * know it). Value names that may be graph outputs are kept: the BatchNorm's output
 * value survives, the producer's old output value becomes unused and is dropped by qllc_graph_compact.
 * Node order is unchanged, so it stays topological.
 */
#include <math.h>
#include <string.h>

#include "ir/ir.h"

static qllc_status oom(qllc_diag *diag, const qllc_node *n) {
  return qllc_fail(diag, QLLC_ERR_NOMEM, n->name, "node '%s': out of memory folding BatchNormalization", n->name);
}

static int is_f32_const(const qllc_value *v) { return v && v->data && v->elem == QLLC_ELEM_F32; }


/* The BatchNorm's per-channel a and b in double, or 0 when the node cannot be rewritten at all. */
static int bn_params(const qllc_node *bn, int64_t *C, double **a, double **b, qllc_arena *arena) {
  const qllc_value *x = bn->in[0];
  if (bn->n_in != 5 || !x || x->rank < 2 || x->elem != QLLC_ELEM_F32) return 0;
  if (qllc_attr_int(bn, "training_mode", 0) != 0 || qllc_attr_int(bn, "spatial", 1) != 1) return 0;
  for (int k = 1; k < bn->n_out; k++)
    if (bn->out[k] && (bn->out[k]->n_uses > 0 || bn->out[k]->is_output)) return 0;
  int64_t c = x->dims[1];
  for (int k = 1; k < 5; k++)
    if (!is_f32_const(bn->in[k]) || qllc_value_numel(bn->in[k]) != c) return 0;
  double eps = qllc_attr_float(bn, "epsilon", 1e-5f);
  const float *scale = bn->in[1]->data, *B = bn->in[2]->data, *mean = bn->in[3]->data, *var = bn->in[4]->data;
  double *pa = qllc_arena_alloc(arena, sizeof *pa * (size_t)(c ? c : 1));
  double *pb = qllc_arena_alloc(arena, sizeof *pb * (size_t)(c ? c : 1));
  if (!pa || !pb) return -1;
  for (int64_t i = 0; i < c; i++) {
    pa[i] = (double)scale[i] / sqrt((double)var[i] + eps);
    pb[i] = (double)B[i] - (double)mean[i] * pa[i];
  }
  *C = c;
  *a = pa;
  *b = pb;
  return 1;
}

/* Gives p a third input slot (the bias) when it was made with two. 0 on success. */
static int ensure_bias_slot(qllc_graph *g, qllc_node *p) {
  if (p->n_in >= 3) return 0;
  qllc_value **in = qllc_arena_alloc(g->arena, sizeof *in * 3);
  if (!in) return -1;
  for (int k = 0; k < p->n_in; k++) in[k] = p->in[k];
  p->in = in;
  p->n_in = 3;
  return 0;
}

/* Folds into Conv or FC: W's leading dim is the channel. Returns 1 when folded, 0 when not foldable. */
static int fold_into_weights_rows(qllc_graph *g, qllc_node *p, const qllc_node *bn, int64_t C, const double *a) {
  qllc_value *w = p->in[1], *bias = p->n_in > 2 ? p->in[2] : NULL;
  if (!is_f32_const(w) || w->rank < 2 || w->dims[0] != C) return 0;
  if (bias && (!is_f32_const(bias) || qllc_value_numel(bias) != C)) return 0;
  const float *mean = bn->in[3]->data, *B = bn->in[2]->data;
  int64_t per = qllc_value_numel(w) / (C ? C : 1);
  const float *src = w->data, *ob = bias ? bias->data : NULL;
  int64_t bd[1] = {C};
  qllc_value *nw = qllc_const_rewrite(g, w, NULL, w->rank, w->dims);
  qllc_value *nb = qllc_const_rewrite(g, bias, qllc_arena_printf(g->arena, "%s.bias", p->name), 1, bd);
  if (!nw || !nb || ensure_bias_slot(g, p)) return -1;
  float *dw = nw->data, *db = nb->data;
  for (int64_t c = 0; c < C; c++) {
    for (int64_t i = 0; i < per; i++) dw[c * per + i] = (float)((double)src[c * per + i] * a[c]);
    db[c] = (float)(((ob ? (double)ob[c] : 0.0) - (double)mean[c]) * a[c] + (double)B[c]);
  }
  p->in[1] = nw;
  p->in[2] = nb;
  return 1;
}

/* Folds into Gemm y = alpha op(A) op(B) + beta C (output channel = column n of y). */
static int fold_into_gemm(qllc_graph *g, qllc_node *p, const qllc_node *bn, int64_t C, const double *a) {
  qllc_value *bm = p->in[1], *cv = p->n_in > 2 ? p->in[2] : NULL, *y = p->out[0];
  if (!is_f32_const(bm) || bm->rank != 2 || y->rank != 2 || y->dims[1] != C) return 0;
  if (cv && (!is_f32_const(cv) || cv->rank > 2)) return 0;
  int64_t tb = qllc_attr_int(p, "transB", 0), M = y->dims[0], N = C;
  if ((tb ? bm->dims[0] : bm->dims[1]) != N) return 0;
  /* C's broadcast strides over [M][N] */
  int64_t cm = 1, cn = 1;
  if (cv) {
    cm = cv->rank == 2 ? cv->dims[0] : 1;
    cn = cv->rank >= 1 ? cv->dims[cv->rank - 1] : 1;
    if ((cm != 1 && cm != M) || (cn != 1 && cn != N)) return 0;
  }
  int full = cv && cm == M && M != 1; /* C varies along m: the new C is [M][N] */
  double beta = qllc_attr_float(p, "beta", 1.0f);
  const float *mean = bn->in[3]->data, *B = bn->in[2]->data;
  const float *sb = bm->data, *sc = cv ? cv->data : NULL;
  int64_t cd[2] = {M, N};
  qllc_value *nbm = qllc_const_rewrite(g, bm, NULL, 2, bm->dims);
  qllc_value *ncv = full ? qllc_const_rewrite(g, cv, NULL, 2, cd)
                         : qllc_const_rewrite(g, cv, qllc_arena_printf(g->arena, "%s.bias", p->name), 1, cd + 1);
  if (!nbm || !ncv || ensure_bias_slot(g, p)) return -1;
  float *db = nbm->data, *dc = ncv->data;
  int64_t rows = bm->dims[0], cols = bm->dims[1];
  for (int64_t r = 0; r < rows; r++)
    for (int64_t k = 0; k < cols; k++) {
      int64_t n = tb ? r : k;
      db[r * cols + k] = (float)((double)sb[r * cols + k] * a[n]);
    }
  int64_t crow = full ? M : 1;
  for (int64_t m = 0; m < crow; m++)
    for (int64_t n = 0; n < N; n++) {
      double c0 = sc ? beta * (double)sc[(cm == 1 ? 0 : m) * cn + (cn == 1 ? 0 : n)] : 0.0;
      dc[m * N + n] = (float)((c0 - (double)mean[n]) * a[n] + (double)B[n]);
    }
  p->in[1] = nbm;
  p->in[2] = ncv;
  if (!qllc_node_set_attr_float(g, p, "beta", 1.0f)) return -1;
  return 1;
}

/* Turns the BatchNorm node itself into CHANNEL_AFFINE(x, a, b). */
static int to_channel_affine(qllc_graph *g, qllc_node *bn, int64_t C, const double *a, const double *b) {
  int64_t d[1] = {C};
  qllc_value *va = qllc_const_new(g, qllc_arena_printf(g->arena, "%s.a", bn->name), QLLC_ELEM_F32, 1, d, NULL);
  qllc_value *vb = qllc_const_new(g, qllc_arena_printf(g->arena, "%s.b", bn->name), QLLC_ELEM_F32, 1, d, NULL);
  if (!va || !vb) return -1;
  float *fa = va->data, *fb = vb->data;
  for (int64_t c = 0; c < C; c++) {
    fa[c] = (float)a[c];
    fb[c] = (float)b[c];
  }
  bn->op = QLLC_OP_CHANNEL_AFFINE;
  bn->op_type = qllc_op_name(QLLC_OP_CHANNEL_AFFINE);
  bn->domain = "";
  bn->in[1] = va;
  bn->in[2] = vb;
  bn->n_in = 3;
  bn->n_out = 1;
  bn->n_attr = 0;
  return 1;
}

qllc_status qllc_pass_fold_batchnorm(qllc_graph *g, qllc_diag *diag) {
  qllc_graph_recount_uses(g);
  int changed = 0;
  for (int i = 0; i < g->n_nodes; i++) {
    qllc_node *bn = g->nodes[i];
    if (bn->dead || bn->op != QLLC_OP_BATCHNORM || !bn->out[0]) continue;
    int64_t C;
    double *a, *b;
    int ok = bn_params(bn, &C, &a, &b, g->arena);
    if (ok < 0) return oom(diag, bn);
    if (!ok) continue;
    qllc_value *x = bn->in[0], *y = bn->out[0];
    qllc_node *p = x->producer;
    int folded = 0;
    if (p && !p->dead && x->n_uses == 1 && !x->is_output && p->n_out >= 1 && p->out[0] == x &&
        p->act == QLLC_ACT_NONE) {
      if (p->op == QLLC_OP_CONV || p->op == QLLC_OP_FC)
        folded = fold_into_weights_rows(g, p, bn, C, a);
      else if (p->op == QLLC_OP_GEMM)
        folded = fold_into_gemm(g, p, bn, C, a);
      if (folded < 0) return oom(diag, bn);
    }
    if (folded) {
      p->out[0] = y;
      y->producer = p;
      x->producer = NULL;
      bn->dead = 1;
    } else if (to_channel_affine(g, bn, C, a, b) < 0) {
      return oom(diag, bn);
    }
    changed = 1;
  }
  if (changed) qllc_graph_compact(g);
  return QLLC_OK;
}
