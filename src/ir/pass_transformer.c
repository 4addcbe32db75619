/* src/ir/pass_transformer.c: the transformer patterns of exported models become single ops (issue 15).
 *
 * Rewrites, in this order, each over the whole graph:
 *  1. LayerNorm. The form torch < 2 exports for nn.LayerNorm (opset < 17):
 *        m = ReduceMean(x, axes A); d = Sub(x, m); p = Pow(d, 2); v = ReduceMean(p, axes A);
 *        s = Sqrt(Add(v, eps)); n = Div(d, s); [y = Mul(n, gamma)]; [o = Add(y, beta)]
 *     where A is the last k axes of x, eps a constant scalar, gamma and beta constants of (or broadcasting
 *     to) the shape dims[rank-k:], and every intermediate value used only inside the pattern (d twice),
 *     becomes LayerNormalization(x, gamma, beta) with axis = rank - k and epsilon eps (gamma = ones when
 *     absent). The Mul and Add operands may come in either order.
 *  2. GELU. The erf form torch exports for F.gelu / nn.GELU():
 *        t = Div(x, sqrt 2) or Mul(x, 1/sqrt 2); e = Erf(t); a = Add(e, 1);
 *        out = Mul(Mul(x, a), 0.5) or Mul(Mul(x, 0.5), a) (operands in either order)
 *     becomes qllc.Gelu(x). (com.microsoft Gelu is read as qllc.Gelu by the importer.)
 *  3. Div by a constant: Div(x, c) with c a float constant without zeros becomes Mul(x, 1 / c), which the
 *     quantizer has a kernel for (the attention's 1/sqrt(d), for instance). Results differ from the
 *     division by at most one rounding.
 *  4. Split: each output becomes a Slice of the input (one output per node, so the quantizer treats
 *     them as data movement).
 * Intermediate values that are graph outputs, or used outside a pattern, keep it from matching.
 * The order stays topological: a replacing node is placed where the pattern's last node was.
 */
#include <math.h>
#include <string.h>

#include "ir/ir.h"

/* The single live user of v, or NULL (none, several, or v is a graph output). */
static qllc_node *only_user(qllc_graph *g, const qllc_value *v) {
  qllc_node *u[2];
  if (!v || v->is_output) return NULL;
  return qllc_value_users(g, v, u, 2) == 1 ? u[0] : NULL;
}

static int const_scalar(const qllc_value *v, float *f) {
  if (!v || !v->data || v->elem != QLLC_ELEM_F32 || qllc_value_numel(v) != 1) return 0;
  *f = *(const float *)v->data;
  return 1;
}

static int near(float a, double b) { return fabs((double)a - b) <= 1e-5 * fabs(b); }

/* The operand of a binary node that is not `v` (NULL when neither or both are). */
static qllc_value *other(const qllc_node *n, const qllc_value *v) {
  if (n->n_in != 2) return NULL;
  if (n->in[0] == v && n->in[1] != v) return n->in[1];
  if (n->in[1] == v && n->in[0] != v) return n->in[0];
  return NULL;
}

static qllc_node *prod(const qllc_value *v, qllc_op op) {
  return v && v->producer && !v->producer->dead && v->producer->op == op ? v->producer : NULL;
}

/* The reduced axes of a ReduceMean are the last k of x: returns k, else 0. */
static int trailing_axes(const qllc_node *r, int rank) {
  const int64_t *ax;
  int cnt = qllc_attr_ints(r, "axes", &ax);
  if (cnt <= 0 || !qllc_attr_int(r, "keepdims", 1)) return 0;
  for (int i = 0; i < cnt; i++)
    if (ax[i] != rank - cnt + i) return 0;
  return cnt;
}

/* A constant usable as gamma/beta over dims[axis:] of x: of that shape, or broadcasting to it from the
 * right with leading 1s. Returns a constant of exactly that shape (a new one when reshaped), or NULL. */
static qllc_value *affine_param(qllc_graph *g, qllc_value *c, const qllc_value *x, int axis) {
  if (!c || !c->data || c->elem != QLLC_ELEM_F32) return NULL;
  int r = x->rank - axis;
  int64_t len = 1;
  for (int i = axis; i < x->rank; i++) len *= x->dims[i];
  if (c->rank > x->rank) return NULL;
  int64_t cn = qllc_value_numel(c);
  for (int i = 0; i < c->rank; i++) {
    int xi = x->rank - c->rank + i;
    if (xi < axis ? c->dims[i] != 1 : (c->dims[i] != x->dims[xi] && c->dims[i] != 1)) return NULL;
  }
  int same = c->rank == r;
  for (int i = 0; same && i < r; i++) same = c->dims[i] == x->dims[axis + i];
  if (same) return c;
  /* broadcast to dims[axis:] */
  float *d = qllc_arena_alloc(g->arena, sizeof(float) * (size_t)len);
  if (!d) return NULL;
  const float *s = c->data;
  int64_t cs[QLLC_MAX_RANK], st = 1;
  for (int i = c->rank - 1; i >= 0; i--) cs[i] = c->dims[i] == 1 ? 0 : st, st *= c->dims[i];
  for (int64_t k = 0; k < len; k++) {
    int64_t rem = k, off = 0;
    for (int i = x->rank - 1; i >= axis; i--) {
      int64_t idx = rem % x->dims[i];
      rem /= x->dims[i];
      int ci = i - (x->rank - c->rank);
      if (ci >= 0) off += idx * cs[ci];
    }
    d[k] = s[off];
  }
  (void)cn;
  return qllc_const_new(g, qllc_arena_printf(g->arena, "%s.ln", c->name), QLLC_ELEM_F32, r, x->dims + axis, d);
}

static qllc_status match_layernorm(qllc_graph *g, qllc_node *dv, int *changed, qllc_diag *diag) {
  /* dv = Div(d, s) */
  qllc_value *d = dv->in[0], *s = dv->in[1];
  qllc_node *sub = prod(d, QLLC_OP_SUB), *sq = prod(s, QLLC_OP_SQRT);
  if (!sub || !sq || only_user(g, s) != dv) return QLLC_OK;
  qllc_value *x = sub->in[0], *m = sub->in[1];
  qllc_node *rm1 = prod(m, QLLC_OP_REDUCE_MEAN);
  if (!rm1 || rm1->in[0] != x || only_user(g, m) != sub || x->elem != QLLC_ELEM_F32) return QLLC_OK;
  int k = trailing_axes(rm1, x->rank);
  if (!k) return QLLC_OK;
  qllc_node *ad = prod(sq->in[0], QLLC_OP_ADD);
  if (!ad || only_user(g, sq->in[0]) != sq) return QLLC_OK;
  float eps;
  qllc_value *v = NULL;
  if (const_scalar(ad->in[1], &eps)) v = ad->in[0];
  else if (const_scalar(ad->in[0], &eps)) v = ad->in[1];
  qllc_node *rm2 = prod(v, QLLC_OP_REDUCE_MEAN);
  if (!rm2 || only_user(g, v) != ad || trailing_axes(rm2, x->rank) != k) return QLLC_OK;
  qllc_node *pw = prod(rm2->in[0], QLLC_OP_POW);
  if (!pw || pw->in[0] != d || only_user(g, rm2->in[0]) != rm2 || qllc_attr_float(pw, "exponent", 0) != 2.0f ||
      pw->n_in != 1)
    return QLLC_OK;
  /* d is used by exactly the Pow and the Div */
  qllc_node *du[3];
  if (d->is_output || qllc_value_users(g, d, du, 3) != 2) return QLLC_OK;
  int axis = x->rank - k;
  /* optional affine */
  qllc_node *last = dv, *mul = only_user(g, dv->out[0]), *add = NULL;
  qllc_value *gamma = NULL, *beta = NULL;
  if (mul && mul->op == QLLC_OP_MUL && (gamma = affine_param(g, other(mul, dv->out[0]), x, axis))) {
    last = mul;
    add = only_user(g, mul->out[0]);
    if (add && add->op == QLLC_OP_ADD && (beta = affine_param(g, other(add, mul->out[0]), x, axis))) last = add;
  }
  if (!gamma) {
    int64_t len = 1;
    for (int i = axis; i < x->rank; i++) len *= x->dims[i];
    float *ones = qllc_arena_alloc(g->arena, sizeof(float) * (size_t)len);
    if (!ones) return qllc_fail(diag, QLLC_ERR_NOMEM, dv->name, "out of memory");
    for (int64_t i = 0; i < len; i++) ones[i] = 1.0f;
    gamma = qllc_const_new(g, qllc_arena_printf(g->arena, "%s.gamma", dv->name), QLLC_ELEM_F32, k, x->dims + axis, ones);
  }
  if (!gamma) return qllc_fail(diag, QLLC_ERR_NOMEM, dv->name, "out of memory");
  qllc_value *out = last->out[0];
  qllc_node *ln = qllc_node_new(g, QLLC_OP_LAYER_NORM, qllc_arena_printf(g->arena, "%s.layernorm", dv->name), beta ? 3 : 2, 1);
  if (!ln) return qllc_fail(diag, QLLC_ERR_NOMEM, dv->name, "out of memory");
  ln->op_type = "LayerNormalization";
  ln->domain = "";
  ln->in[0] = x, ln->in[1] = gamma;
  if (beta) ln->in[2] = beta;
  qllc_node_set_attr_int(g, ln, "axis", axis);
  qllc_node_set_attr_float(g, ln, "epsilon", eps);
  qllc_node *dead[] = {rm1, sub, pw, rm2, ad, sq, dv, last == dv ? NULL : mul, last == add ? add : NULL};
  for (size_t i = 0; i < sizeof dead / sizeof *dead; i++)
    if (dead[i]) dead[i]->dead = 1;
  ln->out[0] = out;
  out->producer = ln;
  qllc_graph_insert_before(g, ln, last);
  *changed = 1;
  return qllc_infer_node(g, ln, diag);
}

static qllc_status match_gelu(qllc_graph *g, qllc_node *e, int *changed, qllc_diag *diag) {
  qllc_value *t = e->in[0];
  qllc_node *sc = t && t->producer && !t->producer->dead ? t->producer : NULL;
  float c;
  if (!sc || only_user(g, t) != e || !const_scalar(sc->in[1], &c)) return QLLC_OK;
  if (!((sc->op == QLLC_OP_DIV && near(c, 1.4142135623730951)) || (sc->op == QLLC_OP_MUL && near(c, 0.7071067811865476))))
    return QLLC_OK;
  qllc_value *x = sc->in[0];
  qllc_node *ad = only_user(g, e->out[0]);
  float one;
  if (!ad || ad->op != QLLC_OP_ADD || !const_scalar(other(ad, e->out[0]), &one) || one != 1.0f) return QLLC_OK;
  qllc_value *a = ad->out[0];
  qllc_node *m1 = only_user(g, a);
  if (!m1 || m1->op != QLLC_OP_MUL) return QLLC_OK;
  qllc_value *o1 = other(m1, a);
  qllc_node *last = NULL, *half = NULL;
  float h;
  if (o1 == x) { /* Mul(Mul(x, a), 0.5) */
    qllc_node *m2 = only_user(g, m1->out[0]);
    if (m2 && m2->op == QLLC_OP_MUL && const_scalar(other(m2, m1->out[0]), &h) && h == 0.5f) last = m2;
  } else if (o1 && (half = prod(o1, QLLC_OP_MUL)) && only_user(g, o1) == m1 && other(half, x) &&
             const_scalar(other(half, x), &h) && h == 0.5f) { /* Mul(Mul(x, 0.5), a) */
    last = m1;
  }
  if (!last) return QLLC_OK;
  qllc_value *out = last->out[0];
  qllc_node *gn = qllc_node_new(g, QLLC_OP_GELU, qllc_arena_printf(g->arena, "%s.gelu", e->name), 1, 1);
  if (!gn) return qllc_fail(diag, QLLC_ERR_NOMEM, e->name, "out of memory");
  gn->op_type = "qllc.Gelu";
  gn->domain = "";
  gn->in[0] = x;
  qllc_node *dead[] = {sc, e, ad, m1, last, half};
  for (size_t i = 0; i < sizeof dead / sizeof *dead; i++)
    if (dead[i]) dead[i]->dead = 1;
  gn->out[0] = out;
  out->producer = gn;
  qllc_graph_insert_before(g, gn, last);
  *changed = 1;
  return qllc_infer_node(g, gn, diag);
}

static qllc_status div_to_mul(qllc_graph *g, qllc_node *n, int *changed, qllc_diag *diag) {
  qllc_value *c = n->in[1];
  if (!c || !c->data || c->elem != QLLC_ELEM_F32 || n->in[0]->data || n->in[0]->elem != QLLC_ELEM_F32) return QLLC_OK;
  int64_t cnt = qllc_value_numel(c);
  const float *s = c->data;
  for (int64_t i = 0; i < cnt; i++)
    if (s[i] == 0.0f || !isfinite(s[i])) return QLLC_OK;
  float *r = qllc_arena_alloc(g->arena, sizeof(float) * (size_t)(cnt ? cnt : 1));
  if (!r) return qllc_fail(diag, QLLC_ERR_NOMEM, n->name, "out of memory");
  for (int64_t i = 0; i < cnt; i++) r[i] = (float)(1.0 / (double)s[i]);
  qllc_value *rc = qllc_const_new(g, qllc_arena_printf(g->arena, "%s.recip", c->name), QLLC_ELEM_F32, c->rank, c->dims, r);
  if (!rc) return qllc_fail(diag, QLLC_ERR_NOMEM, n->name, "out of memory");
  n->op = QLLC_OP_MUL;
  n->op_type = "Mul"; /* what the report and the graph print; the node keeps its name */
  n->in[1] = rc;
  *changed = 1;
  return QLLC_OK;
}

static qllc_status split_to_slices(qllc_graph *g, qllc_node *n, int *changed, qllc_diag *diag) {
  qllc_value *x = n->in[0];
  const int64_t *sp;
  int cnt = qllc_attr_ints(n, "split", &sp);
  int64_t axis = qllc_attr_int(n, "axis", 0), at = 0;
  if (cnt != n->n_out) return QLLC_OK;
  for (int k = 0; k < n->n_out; k++) {
    qllc_value *y = n->out[k];
    int64_t start = at, end = at + sp[k];
    at = end;
    if (!y) continue;
    qllc_node *s = qllc_node_new(g, QLLC_OP_SLICE, qllc_arena_printf(g->arena, "%s.part%d", n->name, k), 1, 1);
    if (!s) return qllc_fail(diag, QLLC_ERR_NOMEM, n->name, "out of memory");
    s->op_type = "Slice";
    s->domain = "";
    s->in[0] = x;
    qllc_node_set_attr_ints(g, s, "starts", 1, &start);
    qllc_node_set_attr_ints(g, s, "ends", 1, &end);
    qllc_node_set_attr_ints(g, s, "axes", 1, &axis);
    s->out[0] = y;
    y->producer = s;
    qllc_graph_insert_before(g, s, n);
    qllc_status st = qllc_infer_node(g, s, diag);
    if (st) return st;
  }
  n->dead = 1;
  *changed = 1;
  return QLLC_OK;
}

qllc_status qllc_pass_transformer(qllc_graph *g, qllc_diag *diag) {
  int changed = 0;
  qllc_status st = QLLC_OK;
  for (int pass = 0; pass < 4 && !st; pass++) {
    qllc_graph_recount_uses(g);
    for (int i = 0; i < g->n_nodes && !st; i++) {
      qllc_node *n = g->nodes[i];
      if (n->dead) continue;
      if (pass == 0 && n->op == QLLC_OP_DIV && n->n_in == 2) st = match_layernorm(g, n, &changed, diag);
      else if (pass == 1 && n->op == QLLC_OP_ERF) st = match_gelu(g, n, &changed, diag);
      else if (pass == 2 && n->op == QLLC_OP_DIV && n->n_in == 2) st = div_to_mul(g, n, &changed, diag);
      else if (pass == 3 && n->op == QLLC_OP_SPLIT) st = split_to_slices(g, n, &changed, diag);
    }
    if (changed) qllc_graph_compact(g);
  }
  return st;
}
