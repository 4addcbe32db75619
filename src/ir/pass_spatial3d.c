/* src/ir/pass_spatial3d.c: 3-D Conv, MaxPool and AveragePool become 2-D ones (issue 15).
 *
 * A rank-5 node ([N, C, D, H, W]; infer_spatial.c normalised it to 3-entry kernel_shape/strides/dilations and
 * 6-entry pads [front, top, left, back, bottom, right]) is rewritten into ops qllc already runs in float
 * and in int8/int16, so a volumetric model is quantized like a 2-D one:
 *
 *  Pools (max and average are separable: a box window is the product of its axes, and so is the number
 *  of cells an average counts, with or without count_include_pad):
 *     Reshape [N, C*D, H, W] -> Pool 2-D over (H, W) -> Reshape [N, C, D, OH*OW]
 *     -> Pool 2-D over (D, 1) -> Reshape [N, C, OD, OH, OW]
 *  (an average of averages differs from the one-step average by float rounding only; quantized, each
 *  step requantizes once.)
 *
 *  Conv (im2col along depth: each output depth od reads the KD input slices od*sd + kd*dd - front):
 *     [Pad D by (front, back) with zeros] -> Gather axis 2, constant indices [OD*KD]
 *     -> Reshape [N, C, OD, KD, H, W] -> Transpose (0, 2, 1, 3, 4, 5) -> Reshape [N*OD, C*KD, H, W]
 *     -> Conv 2-D with W reshaped to [M, C/group*KD, KH, KW] (channel c*KD + kd, so groups stay
 *        contiguous), the bias, (kh, kw) strides, dilations and pads, the same group
 *     -> Reshape [N, OD, M, OH*OW] -> Transpose (0, 2, 1, 3) -> Reshape [N, M, OD, OH, OW]
 *  The gather copies each input slice KD / sd times: memory, not arithmetic, grows.
 * The rewritten node's output value is kept (its name, graph-output status and users do not change).
 * Runs first in the pipeline, so fold_constants folds the weight's Reshape.
 */
#include <string.h>

#include "ir/ir.h"

#define NOMEM(n) qllc_fail(diag, QLLC_ERR_NOMEM, (n)->name, "out of memory")

typedef struct {
  qllc_graph *g;
  qllc_node *at; /* new nodes go before it */
  const char *base;
  int seq;
  qllc_diag *diag;
} builder;

/* A new node of `op` reading x (and x2 when not NULL), placed before b->at, writing `out` (a new value
 * when NULL); attributes are set by `set` before inference. Returns its output, NULL on failure (diag set). */
static qllc_node *node_begin(builder *b, qllc_op op, qllc_value *x, qllc_value *x2, qllc_value *out) {
  qllc_graph *g = b->g;
  qllc_node *n = qllc_node_new(g, op, qllc_arena_printf(g->arena, "%s.3d%d", b->base, b->seq++), x2 ? 2 : 1, 1);
  if (!n) return NULL;
  n->in[0] = x;
  if (x2) n->in[1] = x2;
  if (!out) out = qllc_value_new(g, qllc_arena_printf(g->arena, "%s.3d%d", b->base, b->seq - 1), x->elem, 0, NULL);
  if (!out) return NULL;
  n->out[0] = out;
  out->producer = n;
  qllc_graph_insert_before(g, n, b->at);
  return n;
}

static qllc_value *node_end(builder *b, qllc_node *n, qllc_status *st) {
  *st = qllc_infer_node(b->g, n, b->diag);
  return *st ? NULL : n->out[0];
}

static qllc_value *reshape(builder *b, qllc_value *x, int rank, const int64_t *dims, qllc_value *out, qllc_status *st) {
  qllc_node *n = node_begin(b, QLLC_OP_RESHAPE, x, NULL, out);
  if (!n) return *st = qllc_fail(b->diag, QLLC_ERR_NOMEM, b->base, "out of memory"), NULL;
  qllc_node_set_attr_ints(b->g, n, "shape", rank, dims);
  return node_end(b, n, st);
}

static qllc_value *transpose(builder *b, qllc_value *x, int rank, const int64_t *perm, qllc_status *st) {
  qllc_node *n = node_begin(b, QLLC_OP_TRANSPOSE, x, NULL, NULL);
  if (!n) return *st = qllc_fail(b->diag, QLLC_ERR_NOMEM, b->base, "out of memory"), NULL;
  qllc_node_set_attr_ints(b->g, n, "perm", rank, perm);
  return node_end(b, n, st);
}

/* A 2-D pool (or conv, with w and bias) of src with normalised attributes from src node `o`. */
static qllc_node *spatial2d(builder *b, const qllc_node *o, qllc_value *x, const int64_t *k, const int64_t *s,
                            const int64_t *d, const int64_t *p, const int64_t *cp) {
  qllc_node *n = node_begin(b, o->op, x, NULL, NULL);
  if (!n) return NULL;
  qllc_graph *g = b->g;
  qllc_node_set_attr_ints(g, n, "kernel_shape", 2, k);
  qllc_node_set_attr_ints(g, n, "strides", 2, s);
  qllc_node_set_attr_ints(g, n, "dilations", 2, d);
  qllc_node_set_attr_ints(g, n, "pads", 4, p);
  if (cp) qllc_node_set_attr_ints(g, n, "ceil_pads", 4, cp);
  if (o->op == QLLC_OP_AVGPOOL) qllc_node_set_attr_int(g, n, "count_include_pad", qllc_attr_int(o, "count_include_pad", 0));
  return n;
}

typedef struct {
  const int64_t *k, *s, *d, *p, *cp; /* 3, 3, 3, 6 and 6 (cp NULL: no ceil_mode) entries */
} geom3;

static qllc_status pool3d(builder *b, qllc_node *o, const geom3 *G) {
  qllc_value *x = o->in[0], *y = o->out[0];
  const int64_t *xd = x->dims, *yd = y->dims;
  qllc_status st = QLLC_OK;
  int64_t s1[4] = {xd[0], xd[1] * xd[2], xd[3], xd[4]};
  qllc_value *v = reshape(b, x, 4, s1, NULL, &st);
  if (!v) return st;
  /* over (H, W) */
  int64_t k[2] = {G->k[1], G->k[2]}, s[2] = {G->s[1], G->s[2]}, d[2] = {G->d[1], G->d[2]};
  int64_t p[4] = {G->p[1], G->p[2], G->p[4], G->p[5]}, cp[4] = {0, 0, G->cp ? G->cp[4] : 0, G->cp ? G->cp[5] : 0};
  qllc_node *n = spatial2d(b, o, v, k, s, d, p, G->cp ? cp : NULL);
  if (!n) return qllc_fail(b->diag, QLLC_ERR_NOMEM, o->name, "out of memory");
  if (!(v = node_end(b, n, &st))) return st;
  int64_t s2[4] = {xd[0], xd[1], xd[2], yd[3] * yd[4]};
  if (!(v = reshape(b, v, 4, s2, NULL, &st))) return st;
  /* over (D, 1) */
  int64_t k2[2] = {G->k[0], 1}, st2[2] = {G->s[0], 1}, d2[2] = {G->d[0], 1};
  int64_t p2[4] = {G->p[0], 0, G->p[3], 0}, cp2[4] = {0, 0, G->cp ? G->cp[3] : 0, 0};
  n = spatial2d(b, o, v, k2, st2, d2, p2, G->cp ? cp2 : NULL);
  if (!n) return qllc_fail(b->diag, QLLC_ERR_NOMEM, o->name, "out of memory");
  if (!(v = node_end(b, n, &st))) return st;
  o->dead = 1; /* y gets a new producer below */
  return reshape(b, v, 5, yd, y, &st) ? QLLC_OK : st;
}

static qllc_status conv3d(builder *b, qllc_node *o, const geom3 *G) {
  qllc_graph *g = b->g;
  qllc_diag *diag = b->diag;
  qllc_value *x = o->in[0], *w = o->in[1], *bias = o->n_in > 2 ? o->in[2] : NULL, *y = o->out[0];
  int64_t N = x->dims[0], C = x->dims[1], H = x->dims[3], W = x->dims[4];
  int64_t M = y->dims[1], OD = y->dims[2], OH = y->dims[3], OW = y->dims[4], KD = G->k[0];
  qllc_status st = QLLC_OK;
  qllc_value *v = x;
  if (G->p[0] || G->p[3]) {
    qllc_node *pn = node_begin(b, QLLC_OP_PAD, v, NULL, NULL);
    if (!pn) return NOMEM(o);
    int64_t pads[10] = {0, 0, G->p[0], 0, 0, 0, 0, G->p[3], 0, 0};
    qllc_node_set_attr_ints(g, pn, "pads", 10, pads);
    qllc_node_set_attr_float(g, pn, "value", 0.0f);
    qllc_node_set_attr_string(g, pn, "mode", "constant");
    if (!(v = node_end(b, pn, &st))) return st;
  }
  int64_t cnt = OD * KD;
  int64_t *idx = qllc_arena_alloc(g->arena, sizeof *idx * (size_t)cnt);
  if (!idx) return NOMEM(o);
  for (int64_t od = 0; od < OD; od++)
    for (int64_t kd = 0; kd < KD; kd++) idx[od * KD + kd] = od * G->s[0] + kd * G->d[0];
  int identity = cnt == v->dims[2];
  for (int64_t i = 0; i < cnt && identity; i++) identity = idx[i] == i;
  if (!identity) { /* (KD = 1, stride 1: every slice once, in order) */
    qllc_value *iv = qllc_const_new(g, qllc_arena_printf(g->arena, "%s.depth_index", o->name), QLLC_ELEM_I64, 1, &cnt, idx);
    if (!iv) return NOMEM(o);
    qllc_node *gn = node_begin(b, QLLC_OP_GATHER, v, iv, NULL);
    if (!gn) return NOMEM(o);
    qllc_node_set_attr_int(g, gn, "axis", 2);
    if (!(v = node_end(b, gn, &st))) return st;
  }
  int64_t s6[6] = {N, C, OD, KD, H, W}, perm6[6] = {0, 2, 1, 3, 4, 5}, s4[4] = {N * OD, C * KD, H, W};
  if (!(v = reshape(b, v, 6, s6, NULL, &st)) || !(v = transpose(b, v, 6, perm6, &st)) ||
      !(v = reshape(b, v, 4, s4, NULL, &st)))
    return st;
  int64_t ws[4] = {w->dims[0], w->dims[1] * KD, w->dims[3], w->dims[4]};
  qllc_value *w2 = reshape(b, w, 4, ws, NULL, &st);
  if (!w2) return st;
  int64_t k[2] = {G->k[1], G->k[2]}, s[2] = {G->s[1], G->s[2]}, d[2] = {G->d[1], G->d[2]};
  int64_t p[4] = {G->p[1], G->p[2], G->p[4], G->p[5]};
  qllc_node *cn = qllc_node_new(g, QLLC_OP_CONV, qllc_arena_printf(g->arena, "%s.3d%d", b->base, b->seq++), bias ? 3 : 2, 1);
  qllc_value *co = qllc_value_new(g, qllc_arena_printf(g->arena, "%s.conv2d", o->name), x->elem, 0, NULL);
  if (!cn || !co) return NOMEM(o);
  cn->in[0] = v, cn->in[1] = w2;
  if (bias) cn->in[2] = bias;
  cn->out[0] = co;
  co->producer = cn;
  qllc_graph_insert_before(g, cn, b->at);
  qllc_node_set_attr_ints(g, cn, "kernel_shape", 2, k);
  qllc_node_set_attr_ints(g, cn, "strides", 2, s);
  qllc_node_set_attr_ints(g, cn, "dilations", 2, d);
  qllc_node_set_attr_ints(g, cn, "pads", 4, p);
  qllc_node_set_attr_int(g, cn, "group", qllc_attr_int(o, "group", 1));
  if (!(v = node_end(b, cn, &st))) return st;
  int64_t r1[4] = {N, OD, M, OH * OW}, perm4[4] = {0, 2, 1, 3};
  if (!(v = reshape(b, v, 4, r1, NULL, &st)) || !(v = transpose(b, v, 4, perm4, &st))) return st;
  o->dead = 1;
  return reshape(b, v, 5, y->dims, y, &st) ? QLLC_OK : st;
}

qllc_status qllc_pass_spatial3d(qllc_graph *g, qllc_diag *diag) {
  int changed = 0;
  int n0 = g->n_nodes;
  for (int i = 0; i < n0; i++) {
    qllc_node *n = g->nodes[i];
    if (n->dead || !n->n_in || !n->in[0] || n->in[0]->rank != 5) continue;
    if (n->op != QLLC_OP_CONV && n->op != QLLC_OP_MAXPOOL && n->op != QLLC_OP_AVGPOOL) continue;
    geom3 G;
    if (qllc_attr_ints(n, "kernel_shape", &G.k) != 3 || qllc_attr_ints(n, "strides", &G.s) != 3 ||
        qllc_attr_ints(n, "dilations", &G.d) != 3 || qllc_attr_ints(n, "pads", &G.p) != 6)
      return qllc_fail(diag, QLLC_ERR_INVALID, n->name, "node '%s': 3-D attributes not normalised", n->name);
    if (qllc_attr_ints(n, "ceil_pads", &G.cp) != 6) G.cp = NULL;
    if (n->n_out > 1 && n->out[1])
      return qllc_fail(diag, QLLC_ERR_UNSUPPORTED, n->name, "node '%s' (%s): the Indices output of a 3-D MaxPool is not supported",
                       n->name, qllc_op_name(n->op));
    if (n->op == QLLC_OP_CONV && (!n->in[1] || n->in[1]->rank != 5))
      return qllc_fail(diag, QLLC_ERR_INVALID, n->name, "node '%s': 3-D Conv weight must have rank 5", n->name);
    builder b = {g, n, n->name, 0, diag};
    /* the nodes list grows: g->nodes[i] stays valid (insertions are before n, so n moves later) */
    qllc_status st = n->op == QLLC_OP_CONV ? conv3d(&b, n, &G) : pool3d(&b, n, &G);
    if (st) return st;
    changed = 1;
    /* the inserted nodes pushed n (and every later node) along */
    i += b.seq;
    n0 = g->n_nodes;
  }
  if (changed) {
    qllc_graph_compact(g);
    qllc_graph_recount_uses(g);
  }
  return QLLC_OK;
}
