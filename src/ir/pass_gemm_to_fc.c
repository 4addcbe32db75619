/* src/ir/pass_gemm_to_fc.c: Gemm, and MatMul followed by an Add of a constant, become FC.
 *
 * FC is the one op that quantizes with the int32 bias fused into the accumulator (docs/quantization.md, "The arithmetic"):
 * y[M][N] = x[M][K] * W[N][K]^T + b[N], W and b constant.
 *
 * Algorithm.
 *  - Gemm(A, B, C) with transA == 0, A 2-D, B a 2-D f32 constant and C absent or an f32 constant that
 *    broadcasts along N only ([N], [1][N], [1], [1][1] or a scalar): the node becomes
 *    FC(A, W, b) with W[n][k] = alpha * op(B)[k][n] (B itself when transB, its transpose otherwise) and
 *    b[n] = beta * C[n] (no bias when C is absent). A Gemm that does not fit stays a Gemm.
 *  - MatMul(x, B) with x 2-D, B a 2-D f32 constant [K][N], whose output is used by exactly one node, an
 *    Add with the other operand an f32 constant of shape [N] or [1][N], and is not a graph output: the
 *    MatMul becomes FC(x, B^T, bias) writing the Add's output value, and the Add dies.
 *  - Any other MatMul(x, B) with x 2-D and B a 2-D f32 constant becomes FC(x, B^T) without a bias: the
 *    quantizer then gives it the same fused integer kernel.
 *  - x of rank > 2 ([..., M', K], e.g. a transformer's [batch, tokens, K]) is first flattened to
 *    [M, K] by a Reshape (a view: no copy) and the FC's [M, N] result is reshaped back, so the batched
 *    MatMul(+Add) is one fused layer too, never a MatMul rounded before its bias.
 * Products are computed in double and rounded once to f32.
 *
 * Invariants. The node keeps its name and ONNX index (errors still name the model's node); only op and
 * op_type change. W and b are rewritten under their own names when this node is their only user, and
 * are new constants otherwise (the old ones feed other nodes; unused ones are dropped by
 * qllc_graph_compact). The graph output names never change: for MatMul+Add the Add's output
 * value, which may be a graph output, is the FC's output. Node order is unchanged.
 */
#include <string.h>

#include "ir/ir.h"

static int is_f32_const(const qllc_value *v) { return v && v->data && v->elem == QLLC_ELEM_F32; }


static void become_fc(qllc_graph *g, qllc_node *n, qllc_value **in3, qllc_value *x, qllc_value *w, qllc_value *b) {
  n->op = QLLC_OP_FC;
  n->op_type = qllc_op_name(QLLC_OP_FC);
  n->domain = "";
  n->in = in3;
  n->in[0] = x;
  n->in[1] = w;
  n->in[2] = b;
  n->n_in = 3;
  qllc_node_remove_attr(n, "transA");
  qllc_node_remove_attr(n, "transB");
  qllc_node_remove_attr(n, "alpha");
  qllc_node_remove_attr(n, "beta");
}

/* Returns 1 when rewritten, 0 when it does not fit, -1 on OOM. */
static int gemm(qllc_graph *g, qllc_node *n) {
  qllc_value *A = n->in[0], *B = n->in[1], *C = n->n_in > 2 ? n->in[2] : NULL, *y = n->out[0];
  if (!A || A->rank != 2 || A->elem != QLLC_ELEM_F32 || !is_f32_const(B) || B->rank != 2 || !y || y->rank != 2)
    return 0;
  if (qllc_attr_int(n, "transA", 0) != 0) return 0;
  int tb = qllc_attr_int(n, "transB", 0) != 0;
  int64_t K = A->dims[1], N = tb ? B->dims[0] : B->dims[1];
  if ((tb ? B->dims[1] : B->dims[0]) != K || y->dims[1] != N) return 0;
  if (C) {
    if (!is_f32_const(C) || C->rank > 2) return 0;
    int64_t cn = C->rank >= 1 ? C->dims[C->rank - 1] : 1, cm = C->rank == 2 ? C->dims[0] : 1;
    if (cm != 1 || (cn != 1 && cn != N)) return 0;
  }
  double alpha = qllc_attr_float(n, "alpha", 1.0f), beta = qllc_attr_float(n, "beta", 1.0f);
  int64_t wd[2] = {N, K}, bd[1] = {N};
  const float *sb = B->data, *sc = C ? C->data : NULL;
  int bcast = C && qllc_value_numel(C) == 1;
  qllc_value *w = qllc_const_rewrite(g, B, NULL, 2, wd);
  qllc_value *b = C ? qllc_const_rewrite(g, C, NULL, 1, bd) : NULL;
  qllc_value **in3 = qllc_arena_alloc(g->arena, sizeof *in3 * 3);
  if (!w || (C && !b) || !in3) return -1;
  float *dw = w->data;
  for (int64_t i = 0; i < N; i++)
    for (int64_t k = 0; k < K; k++)
      dw[i * K + k] = (float)(alpha * (double)(tb ? sb[i * K + k] : sb[k * N + i]));
  if (C)
    for (int64_t i = 0; i < N; i++) ((float *)b->data)[i] = (float)(beta * (double)sc[bcast ? 0 : i]);
  become_fc(g, n, in3, A, w, b);
  return 1;
}

/* MatMul with a constant 2-D B and no Add to fuse: FC(x, B^T) without bias, same output value. */
static int matmul_nobias(qllc_graph *g, qllc_node *n, qllc_value *x, qllc_value *B, int64_t K, int64_t N) {
  int64_t wd[2] = {N, K};
  const float *sb = B->data;
  qllc_value *w = qllc_const_rewrite(g, B, NULL, 2, wd);
  qllc_value **in3 = qllc_arena_alloc(g->arena, sizeof *in3 * 3);
  if (!w || !in3) return -1;
  float *dw = w->data;
  for (int64_t i = 0; i < N; i++)
    for (int64_t k = 0; k < K; k++) dw[i * K + k] = sb[k * N + i];
  become_fc(g, n, in3, x, w, NULL);
  return 1;
}

/* Makes a Reshape node `from` -> a new value of shape dims[rank] named `name`, placed before `before`
 * (at the end when NULL). Returns the new value, NULL on OOM. */
static qllc_value *reshape_to(qllc_graph *g, qllc_value *from, const char *name, int rank, const int64_t *dims,
                              const qllc_node *before, qllc_value *into) {
  qllc_node *r = qllc_node_new(g, QLLC_OP_RESHAPE, qllc_arena_printf(g->arena, "%s:reshape", name), 1, 1);
  qllc_value *v = into ? into : qllc_value_new(g, name, QLLC_ELEM_F32, rank, dims);
  if (!r || !v || !qllc_node_set_attr_ints(g, r, "shape", rank, dims)) return NULL;
  r->in[0] = from;
  r->out[0] = v;
  v->producer = r;
  qllc_graph_insert_before(g, r, before);
  return v;
}

static int matmul_add(qllc_graph *g, qllc_node *n);

/* MatMul of x[..., K] (rank > 2) by a constant B[K][N]: Reshape x to [M, K], MatMul on that (made an
 * FC by matmul_add, with the Add when there is one), Reshape the [M, N] result back to y's shape. */
static int matmul_flatten(qllc_graph *g, qllc_node *n) {
  qllc_value *x = n->in[0], *B = n->in[1], *y = n->out[0];
  int64_t K = B->dims[0], N = B->dims[1], M = qllc_value_numel(x) / K;
  if (x->dims[x->rank - 1] != K || y->rank != x->rank) return 0;
  /* the value the final Reshape must write: y, or the Add's output when the Add will fuse */
  qllc_node *add = NULL;
  qllc_value *last = y;
  if (y->n_uses == 1 && !y->is_output && qllc_value_users(g, y, &add, 1) == 1 && add->op == QLLC_OP_ADD &&
      add->n_in == 2) {
    qllc_value *c = add->in[0] == y ? add->in[1] : add->in[0];
    qllc_value *z = add->out[0];
    if (c != y && is_f32_const(c) &&
        ((c->rank == 1 && c->dims[0] == N) || (c->rank >= 2 && qllc_value_numel(c) == N && c->dims[c->rank - 1] == N)) &&
        z && z->rank == y->rank && qllc_value_numel(z) == qllc_value_numel(y)) {
      if (c->rank != 1) { /* [1, ..., 1, N] -> [N]: matmul_add takes [N] */
        int64_t nd[1] = {N};
        qllc_value *c1 = qllc_const_new(g, c->name, QLLC_ELEM_F32, 1, nd, c->data);
        if (!c1) return -1;
        if (add->in[0] == c) add->in[0] = c1; else add->in[1] = c1;
      }
      last = z;
    } else {
      add = NULL;
    }
  } else {
    add = NULL;
  }
  int64_t xd[2] = {M, K}, yd[2] = {M, N};
  qllc_value *x2 = reshape_to(g, x, qllc_arena_printf(g->arena, "%s.2d", x->name), 2, xd, n, NULL);
  qllc_value *y2 = qllc_value_new(g, qllc_arena_printf(g->arena, "%s.2d", last->name), QLLC_ELEM_F32, 2, yd);
  if (!x2 || !y2) return -1;
  int ni = -1; /* n moved one place down when the first Reshape went in before it */
  for (int i = 0; i < g->n_nodes; i++) if (g->nodes[i] == n) ni = i;
  const qllc_node *after = ni + 1 < g->n_nodes ? g->nodes[ni + 1] : NULL;
  if (add) { /* the Add reads the 2-D product and writes a 2-D sum; the Reshape back writes z */
    int ai = -1;
    for (int i = 0; i < g->n_nodes; i++) if (g->nodes[i] == add) ai = i;
    after = ai + 1 < g->n_nodes ? g->nodes[ai + 1] : NULL;
    qllc_value *p2 = qllc_value_new(g, qllc_arena_printf(g->arena, "%s.2d", y->name), QLLC_ELEM_F32, 2, yd);
    if (!p2) return -1;
    n->out[0] = p2;
    p2->producer = n;
    if (add->in[0] == y) add->in[0] = p2; else add->in[1] = p2;
    add->out[0] = y2;
    y2->producer = add;
    y->producer = NULL;
  } else {
    n->out[0] = y2;
    y2->producer = n;
  }
  n->in[0] = x2;
  if (!reshape_to(g, y2, last->name, last->rank, last->dims, after, last)) return -1;
  qllc_graph_recount_uses(g);
  return matmul_add(g, n) < 0 ? -1 : 1;
}

/* MatMul whose only user is Add(mm, const) or Add(const, mm). */
static int matmul_add(qllc_graph *g, qllc_node *n) {
  qllc_value *x = n->in[0], *B = n->in[1], *y = n->out[0];
  if (!x || x->rank != 2 || x->elem != QLLC_ELEM_F32 || !is_f32_const(B) || B->rank != 2 || !y || y->rank != 2)
    return 0;
  int64_t K = B->dims[0], N = B->dims[1];
  if (x->dims[1] != K) return 0;
  qllc_node *add = NULL;
  qllc_value *c = NULL, *z = NULL;
  int with_add = y->n_uses == 1 && !y->is_output && qllc_value_users(g, y, &add, 1) == 1 &&
                 add->op == QLLC_OP_ADD && add->n_in == 2;
  if (with_add) {
    c = add->in[0] == y ? add->in[1] : add->in[0];
    z = add->out[0];
    with_add = c != y && is_f32_const(c) &&
               ((c->rank == 1 && c->dims[0] == N) || (c->rank == 2 && c->dims[0] == 1 && c->dims[1] == N)) && z &&
               z->rank == 2 && z->dims[0] == y->dims[0] && z->dims[1] == N;
  }
  if (!with_add) return matmul_nobias(g, n, x, B, K, N);
  int64_t wd[2] = {N, K}, bd[1] = {N};
  const float *sb = B->data, *sc = c->data;
  qllc_value *w = qllc_const_rewrite(g, B, NULL, 2, wd);
  qllc_value *b = qllc_const_rewrite(g, c, NULL, 1, bd);
  qllc_value **in3 = qllc_arena_alloc(g->arena, sizeof *in3 * 3);
  if (!w || !b || !in3) return -1;
  memcpy(b->data, sc, sizeof(float) * (size_t)N);
  float *dw = w->data;
  for (int64_t i = 0; i < N; i++)
    for (int64_t k = 0; k < K; k++) dw[i * K + k] = sb[k * N + i];
  become_fc(g, n, in3, x, w, b);
  n->out[0] = z;
  z->producer = n;
  y->producer = NULL;
  add->dead = 1;
  return 1;
}

qllc_status qllc_pass_gemm_to_fc(qllc_graph *g, qllc_diag *diag) {
  qllc_graph_recount_uses(g);
  int changed = 0;
  for (int i = 0; i < g->n_nodes; i++) {
    qllc_node *n = g->nodes[i];
    if (n->dead || n->n_out < 1) continue;
    int r = 0;
    if (n->op == QLLC_OP_GEMM)
      r = gemm(g, n);
    else if (n->op == QLLC_OP_MATMUL && n->in[0] && n->in[0]->rank > 2 && is_f32_const(n->in[1]) &&
             n->in[1]->rank == 2)
      r = matmul_flatten(g, n);
    else if (n->op == QLLC_OP_MATMUL)
      r = matmul_add(g, n);
    if (r < 0) return qllc_fail(diag, QLLC_ERR_NOMEM, n->name, "node '%s': out of memory making FC", n->name);
    changed |= r;
  }
  if (changed) qllc_graph_compact(g);
  return QLLC_OK;
}
