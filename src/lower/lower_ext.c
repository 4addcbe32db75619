/* src/lower/lower_ext.c: lowering of the transformer and mobile ops (issue 15), float and quantized.
 *
 *   Erf, Sqrt, Exp, Neg, Reciprocal, Pow (constant exponent), HardSigmoid, HardSwish, qllc.Gelu:
 *       float: one unary kernel each (ops_ext.c); quantized: the lut kernel (lower_q.c's table lowering,
 *       the record's table).
 *   LayerNormalization: layernorm over the last axes [axis:], gamma and beta the node's inputs (float) or
 *       the record's g, b arrays (quantized: gamma / s_y, beta / s_y + z_y, and eps / s_x^2).
 *   ReduceMean / ReduceSum / ReduceMax: the reduced axes, size-1 dims aside, must be one contiguous block
 *       (else UNSUPPORTED): x is then [outer][len][inner]. Quantized: reduce_sum with the record's m[0],
 *       n[0]; reduce_max with the same parameters in and out.
 *   PRelu: float: the broadcast prelu kernel; quantized: lut_channel with one table per slope channel
 *       (the record's tables, channels = the slope's size: 1, or the input's dim 1).
 *   Slice (constant starts/ends/steps): transpose kernel (a strided copy) from the first element with
 *       strides x_stride * step; Expand: transpose with stride 0 on the broadcast dims; Split: copy2d per
 *       output; Gather with constant indices: copy2d per index (at most 1024 indices). These move data
 *       only: quantized, the input and output parameters must be equal (the quantizer's SAME kind).
 *   Max / Min / Mean: see minmax_f32 / minmax_q below.
 *   ConvTranspose (1-D and 2-D), Where (constant condition): float only (the quantizer keeps them float,
 *       saying so).
 *   Resize / Upsample (rank 4, along H and W): index tables (and weights for linear) computed here in
 *       double from the normalised attributes (src/ir/infer_ext.c): nearest for every kind; linear with float
 *       weights, or Q14 integer weights when quantized (same parameters in and out).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "lower/lower_internal.h"
#include "quant/quant.h"

typedef qllc_lower_ctx ctx;
typedef qllc_lower_roles roles;

qllc_status qllc_lower_ext_f32(ctx *c, const qllc_node *n);
qllc_status qllc_lower_ext_q(ctx *c, const qllc_node *n);

static const char *k2(ctx *c, const char *base, qllc_elem a, qllc_elem b) {
  qllc_elem e[2] = {a, b};
  return qllc_lower_kname(c, base, 2, e);
}

static qllc_buffer *const_bytes(ctx *c, const qllc_node *n, const char *what, qllc_elem elem, int64_t count,
                                const void *data) {
  char *name = qllc_arena_printf(c->p->arena, "%s.%s", n->name, what);
  if (!name) return NULL;
  size_t bytes = (size_t)count * qllc_elem_size((qllc_elem_kind)elem);
  qllc_buffer *b = qllc_lower_buffer_new(c, name, QLLC_REGION_CONST, elem, bytes);
  if (!b) return NULL;
  b->data = qllc_arena_memdup(c->p->arena, data, bytes ? bytes : 1);
  return b->data ? b : NULL;
}

static qllc_status same_params(ctx *c, const qllc_node *n, const qllc_value *x, const qllc_value *y) {
  if (x->elem == y->elem && (x->elem == QLLC_ELEM_F32 || (x->scale == y->scale && x->zero_point == y->zero_point &&
                                                            x->q_axis < 0 && y->q_axis < 0)))
    return QLLC_OK;
  return qllc_lower_invalid(c, n, "moves data without arithmetic, but its input and output parameters differ");
}

/* ---- elementwise ---------------------------------------------------------------------------------- */

static qllc_status unary_f32(ctx *c, const qllc_node *n) {
  qllc_value *x = n->in[0], *y = n->out[0];
  const char *stem = NULL;
  roles r = {.set = {0}};
  switch (n->op) {
  case QLLC_OP_ERF: stem = "erf"; break;
  case QLLC_OP_GELU: stem = strcmp(qllc_attr_string(n, "approximate", "none"), "tanh") ? "gelu" : "gelu_tanh"; break;
  case QLLC_OP_SQRT: stem = "sqrt"; break;
  case QLLC_OP_EXP: stem = "exp"; break;
  case QLLC_OP_NEG: stem = "neg"; break;
  case QLLC_OP_RECIPROCAL: stem = "reciprocal"; break;
  case QLLC_OP_HARD_SWISH: stem = "hardswish"; break;
  case QLLC_OP_POW:
    stem = "pow";
    if (!qllc_node_attr(n, "exponent")) return qllc_lower_unsupported(c, n, "the exponent must be a constant");
    qllc_role_float(&r, QLLC_ROLE_ALPHA, qllc_attr_float(n, "exponent", 1.0f));
    break;
  case QLLC_OP_HARD_SIGMOID:
    stem = "hardsigmoid";
    qllc_role_float(&r, QLLC_ROLE_ALPHA, qllc_attr_float(n, "alpha", 0.2f));
    qllc_role_float(&r, QLLC_ROLE_BETA, qllc_attr_float(n, "beta", 0.5f));
    break;
  default: return qllc_lower_invalid(c, n, "not an elementwise op");
  }
  qllc_lower_roles_yx(&r, c, x, y);
  qllc_role_int(&r, QLLC_ROLE_COUNT, qllc_value_numel(y));
  return qllc_lower_call(c, n, k2(c, stem, x->elem, y->elem), &r);
}

static qllc_status prelu_f32(ctx *c, const qllc_node *n) {
  qllc_value *a = n->in[0], *b = n->in[1], *y = n->out[0];
  int64_t dims[QLLC_MAX_RANK], as[QLLC_MAX_RANK], bs[QLLC_MAX_RANK];
  int r = a->rank > y->rank || b->rank > y->rank ? 0 : qllc_lower_broadcast(y, a, b, dims, as, bs);
  if (r == 0) return qllc_lower_invalid(c, n, "operands do not broadcast to the output shape");
  roles rv = {.set = {0}};
  qllc_lower_roles_bcast(&rv, c, n, r, dims, as, bs);
  qllc_elem e[3] = {a->elem, b->elem, y->elem};
  return qllc_lower_call(c, n, qllc_lower_kname(c, "prelu", 3, e), &rv);
}

/* ---- LayerNorm and reductions ------------------------------------------------------------------------ */

static void ln_geom(const qllc_node *n, int64_t *outer, int64_t *len) {
  const qllc_value *x = n->in[0];
  int axis = (int)qllc_attr_int(n, "axis", x->rank - 1);
  *outer = qllc_lower_prod(x->dims, 0, axis);
  *len = qllc_lower_prod(x->dims, axis, x->rank);
}

static qllc_status layernorm(ctx *c, const qllc_node *n, int quant) {
  qllc_value *x = n->in[0], *y = n->out[0];
  int64_t outer, len;
  ln_geom(n, &outer, &len);
  int stats = 0;
  for (int k = 1; k < n->n_out; k++) stats |= n->out[k] && (n->out[k]->n_uses > 0 || n->out[k]->is_output);
  if (stats && quant) return qllc_lower_unsupported(c, n, "the Mean and InvStdDev outputs in integer mode");
  if (stats) {
    roles rs = {.set = {0}};
    qllc_value *mv = n->out[1], *iv = n->n_out > 2 ? n->out[2] : NULL;
    if (mv) qllc_role_buf(&rs, QLLC_ROLE_Y, qllc_lower_buf_of(c, mv), 0);
    else qllc_role_null(&rs, QLLC_ROLE_Y);
    if (iv) qllc_role_buf(&rs, QLLC_ROLE_B, qllc_lower_buf_of(c, iv), 0);
    else qllc_role_null(&rs, QLLC_ROLE_B);
    qllc_role_buf(&rs, QLLC_ROLE_X, qllc_lower_buf_of(c, x), 0);
    qllc_role_int(&rs, QLLC_ROLE_OUTER, outer);
    qllc_role_int(&rs, QLLC_ROLE_AXIS_LEN, len);
    qllc_role_float(&rs, QLLC_ROLE_EPS, qllc_attr_float(n, "epsilon", 1e-5f));
    qllc_status st = qllc_lower_call(c, n, k2(c, "layernorm_stats", x->elem, x->elem), &rs);
    if (st) return st;
  }
  roles r = {.set = {0}};
  qllc_lower_roles_yx(&r, c, x, y);
  qllc_role_int(&r, QLLC_ROLE_OUTER, outer);
  qllc_role_int(&r, QLLC_ROLE_AXIS_LEN, len);
  if (!quant) {
    qllc_role_buf(&r, QLLC_ROLE_W, qllc_lower_buf_of(c, n->in[1]), 0);
    if (n->n_in > 2 && n->in[2]) qllc_role_buf(&r, QLLC_ROLE_BIAS, qllc_lower_buf_of(c, n->in[2]), 0);
    else qllc_role_null(&r, QLLC_ROLE_BIAS);
    qllc_role_float(&r, QLLC_ROLE_EPS, qllc_attr_float(n, "epsilon", 1e-5f));
    return qllc_lower_call(c, n, k2(c, "layernorm", x->elem, y->elem), &r);
  }
  const qllc_qnode *q = n->quant;
  if (!q || q->kind != QLLC_QK_LAYERNORM || !q->ln_g || !q->ln_b || q->ln_len != len)
    return qllc_lower_invalid(c, n, "no LayerNorm quantization record of the right length");
  qllc_role_buf(&r, QLLC_ROLE_W, const_bytes(c, n, "ln_g", QLLC_ELEM_F32, len, q->ln_g), 0);
  qllc_role_buf(&r, QLLC_ROLE_BIAS, const_bytes(c, n, "ln_b", QLLC_ELEM_F32, len, q->ln_b), 0);
  qllc_role_float(&r, QLLC_ROLE_EPS, q->ln_eps_q);
  qllc_role_int(&r, QLLC_ROLE_ACT_LO, q->act_lo);
  qllc_role_int(&r, QLLC_ROLE_ACT_HI, q->act_hi);
  return qllc_lower_call(c, n, k2(c, "layernorm", x->elem, y->elem), &r);
}

/* [outer][len][inner] for the normalised axes; -1 when they are not one block. */
static int reduce_geom(const qllc_node *n, int64_t *outer, int64_t *len, int64_t *inner) {
  const qllc_value *x = n->in[0];
  const int64_t *axes;
  int cnt = qllc_attr_ints(n, "axes", &axes);
  int red[QLLC_MAX_RANK] = {0};
  for (int i = 0; i < cnt; i++) red[axes[i]] = 1;
  int first = -1, last = -1;
  for (int d = 0; d < x->rank; d++)
    if (red[d] && x->dims[d] != 1) {
      if (first < 0) first = d;
      last = d;
    }
  if (first < 0) { /* only size-1 dims reduced: a copy */
    *outer = 1, *len = 1, *inner = qllc_value_numel(x);
    return 0;
  }
  for (int d = first; d <= last; d++)
    if (!red[d] && x->dims[d] != 1) return -1;
  *outer = qllc_lower_prod(x->dims, 0, first);
  *len = qllc_lower_prod(x->dims, first, last + 1);
  *inner = qllc_lower_prod(x->dims, last + 1, x->rank);
  return 0;
}

static qllc_status reduce(ctx *c, const qllc_node *n, int quant) {
  qllc_value *x = n->in[0], *y = n->out[0];
  int64_t outer, len, inner;
  if (reduce_geom(n, &outer, &len, &inner))
    return qllc_lower_unsupported(c, n, "reduced axes that are not adjacent (size-1 dims aside)");
  roles r = {.set = {0}};
  qllc_lower_roles_yx(&r, c, x, y);
  qllc_role_int(&r, QLLC_ROLE_OUTER, outer);
  qllc_role_int(&r, QLLC_ROLE_AXIS_LEN, len);
  qllc_role_int(&r, QLLC_ROLE_INNER, inner);
  int is_max = n->op == QLLC_OP_REDUCE_MAX;
  if (!quant) {
    const char *stem = is_max ? "reduce_max" : n->op == QLLC_OP_REDUCE_SUM ? "reduce_sum" : "reduce_mean";
    return qllc_lower_call(c, n, k2(c, stem, x->elem, y->elem), &r);
  }
  if (is_max) {
    qllc_status st = same_params(c, n, x, y);
    return st ? st : qllc_lower_call(c, n, k2(c, "reduce_max", x->elem, y->elem), &r);
  }
  const qllc_qnode *q = n->quant;
  if (!q || q->kind != QLLC_QK_RESCALE || !q->m || !q->n) return qllc_lower_invalid(c, n, "no rescale record (m[0], n[0])");
  if (q->z_y != y->zero_point || q->z_x != x->zero_point) return qllc_lower_invalid(c, n, "record zero points differ from the values'");
  qllc_role_int(&r, QLLC_ROLE_Z_X, x->zero_point);
  qllc_role_int(&r, QLLC_ROLE_MULT, q->m[0]);
  qllc_role_int(&r, QLLC_ROLE_SHIFT, q->n[0]);
  qllc_role_int(&r, QLLC_ROLE_Z_Y, y->zero_point);
  qllc_role_int(&r, QLLC_ROLE_ACT_LO, q->act_lo);
  qllc_role_int(&r, QLLC_ROLE_ACT_HI, q->act_hi);
  return qllc_lower_call(c, n, k2(c, "reduce_sum", x->elem, y->elem), &r);
}

static qllc_status prelu_q(ctx *c, const qllc_node *n) {
  qllc_value *x = n->in[0], *y = n->out[0];
  const qllc_qnode *q = n->quant;
  if (!q || q->kind != QLLC_QK_TABLE || !q->table) return qllc_lower_invalid(c, n, "no table record");
  int64_t C = q->channels, per = y->elem == QLLC_ELEM_I16 ? 513 : 256;
  int64_t N, inner;
  if (C == 1) N = 1, inner = qllc_value_numel(x);
  else if (x->rank >= 2 && x->dims[1] == C) N = x->dims[0], inner = qllc_lower_prod(x->dims, 2, x->rank);
  else return qllc_lower_invalid(c, n, "the record's channels do not match the input's dim 1");
  if (q->table_len != C * per) return qllc_lower_invalid(c, n, "table size does not match the channels");
  roles r = {.set = {0}};
  qllc_lower_roles_yx(&r, c, x, y);
  qllc_role_buf(&r, QLLC_ROLE_TABLE, const_bytes(c, n, "tables", y->elem, C * per, q->table), 0);
  qllc_role_int(&r, QLLC_ROLE_DIM_N, N);
  qllc_role_int(&r, QLLC_ROLE_DIM_C, C);
  qllc_role_int(&r, QLLC_ROLE_INNER, inner);
  return qllc_lower_call(c, n, k2(c, "lut_channel", x->elem, y->elem), &r);
}

/* ---- data movement ------------------------------------------------------------------------------------- */

static qllc_status strided(ctx *c, const qllc_node *n, qllc_value *x, qllc_value *y, int r, const int64_t *od,
                           const int64_t *is, int64_t off) {
  roles rv = {.set = {0}};
  qllc_role_buf(&rv, QLLC_ROLE_Y, qllc_lower_buf_of(c, y), 0);
  qllc_role_buf(&rv, QLLC_ROLE_X, qllc_lower_buf_of(c, x), (uint64_t)off * qllc_elem_size((qllc_elem_kind)x->elem));
  qllc_role_int(&rv, QLLC_ROLE_RANK, r);
  qllc_role_buf(&rv, QLLC_ROLE_OUT_DIMS, qllc_lower_const_i64(c, n, "out_dims", r, od), 0);
  qllc_role_buf(&rv, QLLC_ROLE_IN_STRIDES, qllc_lower_const_i64(c, n, "in_strides", r, is), 0);
  return qllc_lower_call(c, n, k2(c, "transpose", x->elem, y->elem), &rv);
}

static qllc_status slice(ctx *c, const qllc_node *n) {
  qllc_value *x = n->in[0], *y = n->out[0];
  const int64_t *st, *sp;
  if (qllc_attr_ints(n, "q_starts", &st) != x->rank || qllc_attr_ints(n, "q_steps", &sp) != x->rank)
    return qllc_lower_unsupported(c, n, "Slice without resolved constant starts and steps");
  int64_t xs[QLLC_MAX_RANK], is[QLLC_MAX_RANK], od[QLLC_MAX_RANK], s = 1, off = 0;
  for (int d = x->rank - 1; d >= 0; d--) xs[d] = s, s *= x->dims[d];
  for (int d = 0; d < x->rank; d++) is[d] = xs[d] * sp[d], od[d] = y->dims[d], off += st[d] * xs[d];
  if (x->rank == 0) return qllc_lower_invalid(c, n, "Slice of a scalar");
  return strided(c, n, x, y, x->rank, od, is, off);
}

static qllc_status expand(ctx *c, const qllc_node *n) {
  qllc_value *x = n->in[0], *y = n->out[0];
  int r = y->rank;
  int64_t is[QLLC_MAX_RANK], od[QLLC_MAX_RANK], s = 1;
  for (int d = r - 1; d >= 0; d--) {
    int xd = d - (r - x->rank);
    int64_t dim = xd >= 0 ? x->dims[xd] : 1;
    is[d] = dim == 1 ? 0 : s;
    s *= dim;
    od[d] = y->dims[d];
  }
  if (r == 0) r = 1, od[0] = 1, is[0] = 0;
  return strided(c, n, x, y, r, od, is, 0);
}

static qllc_status rows_copy(ctx *c, const qllc_node *n, qllc_value *x, qllc_value *y, uint64_t yoff, uint64_t xoff,
                             int64_t rows, int64_t cols, int64_t ys, int64_t xs) {
  roles r = {.set = {0}};
  qllc_role_buf(&r, QLLC_ROLE_Y, qllc_lower_buf_of(c, y), yoff);
  qllc_role_buf(&r, QLLC_ROLE_X, qllc_lower_buf_of(c, x), xoff);
  qllc_role_int(&r, QLLC_ROLE_ROWS, rows);
  qllc_role_int(&r, QLLC_ROLE_COLS, cols);
  qllc_role_int(&r, QLLC_ROLE_Y_STRIDE, ys);
  qllc_role_int(&r, QLLC_ROLE_X_STRIDE, xs);
  return qllc_lower_call(c, n, k2(c, "copy2d", x->elem, y->elem), &r);
}

static qllc_status split(ctx *c, const qllc_node *n) {
  qllc_value *x = n->in[0];
  int64_t axis = qllc_attr_int(n, "axis", 0);
  const int64_t *sp;
  if (qllc_attr_ints(n, "split", &sp) != n->n_out) return qllc_lower_invalid(c, n, "split sizes missing");
  int64_t outer = qllc_lower_prod(x->dims, 0, (int)axis), inner = qllc_lower_prod(x->dims, (int)axis + 1, x->rank);
  size_t es = qllc_elem_size((qllc_elem_kind)x->elem);
  int64_t at = 0;
  for (int k = 0; k < n->n_out; k++) {
    qllc_value *y = n->out[k];
    if (y) {
      qllc_status st = same_params(c, n, x, y);
      if (!st) st = rows_copy(c, n, x, y, 0, (uint64_t)(at * inner) * es, outer, sp[k] * inner, sp[k] * inner,
                              x->dims[axis] * inner);
      if (st) return st;
    }
    at += sp[k];
  }
  return QLLC_OK;
}

static qllc_status gather(ctx *c, const qllc_node *n) {
  qllc_value *x = n->in[0], *idx = n->in[1], *y = n->out[0];
  int64_t axis = qllc_attr_int(n, "axis", 0);
  int64_t cnt = qllc_value_numel(idx);
  if (!idx->data) return qllc_lower_unsupported(c, n, "indices computed at run time are not supported");
  if (cnt > 1024) return qllc_lower_unsupported(c, n, "more than 1024 constant indices");
  int64_t *iv = malloc(sizeof *iv * (size_t)(cnt ? cnt : 1));
  if (!iv) return qllc_lower_oom(c);
  if (qllc_value_ints(idx, iv, (int)cnt) != cnt) {
    free(iv);
    return qllc_lower_unsupported(c, n, "indices must be integers");
  }
  int64_t D = x->dims[axis], outer = qllc_lower_prod(x->dims, 0, (int)axis);
  int64_t inner = qllc_lower_prod(x->dims, (int)axis + 1, x->rank);
  size_t es = qllc_elem_size((qllc_elem_kind)x->elem);
  qllc_status st = same_params(c, n, x, y);
  for (int64_t j = 0; j < cnt && !st; j++) {
    int64_t i = iv[j] < 0 ? iv[j] + D : iv[j];
    if (i < 0 || i >= D) {
      st = qllc_lower_invalid(c, n, "an index is out of range");
      break;
    }
    st = rows_copy(c, n, x, y, (uint64_t)(j * inner) * es, (uint64_t)(i * inner) * es, outer, inner, cnt * inner, D * inner);
  }
  free(iv);
  return st;
}

/* ---- resize ----------------------------------------------------------------------------------------------- */

/* Source coordinate of output index o along an axis (ONNX's coordinate transformations). */
static double src_coord(const char *coord, int64_t o, int64_t in, int64_t out, double scale) {
  if (!strcmp(coord, "align_corners")) return out == 1 ? 0.0 : (double)o * (double)(in - 1) / (double)(out - 1);
  if (!strcmp(coord, "asymmetric")) return (double)o / scale;
  if (!strcmp(coord, "pytorch_half_pixel")) return out > 1 ? ((double)o + 0.5) / scale - 0.5 : 0.0;
  if (!strcmp(coord, "tf_half_pixel_for_nn")) return ((double)o + 0.5) / scale;
  return ((double)o + 0.5) / scale - 0.5; /* half_pixel */
}

static int64_t clampi(int64_t v, int64_t lo, int64_t hi) { return v < lo ? lo : v > hi ? hi : v; }

static qllc_status resize(ctx *c, const qllc_node *n, int quant) {
  qllc_value *x = n->in[0], *y = n->out[0];
  const qllc_attr *sa = qllc_node_attr(n, "q_scales");
  if (x->rank != 4 || y->rank != 4 || !sa || sa->n != 4) return qllc_lower_unsupported(c, n, "only rank-4 resizing is supported");
  const char *mode = qllc_attr_string(n, "mode", "nearest"), *coord = qllc_attr_string(n, "coord", "half_pixel");
  const char *nm = qllc_attr_string(n, "nearest_mode", "round_prefer_floor");
  int linear = !strcmp(mode, "linear");
  int64_t in[2] = {x->dims[2], x->dims[3]}, out[2] = {y->dims[2], y->dims[3]};
  int64_t *idx[2] = {NULL, NULL};
  float *wf[2] = {NULL, NULL};
  int32_t *wq[2] = {NULL, NULL};
  qllc_status st = QLLC_OK;
  for (int a = 0; a < 2; a++) {
    idx[a] = calloc((size_t)(2 * out[a]), sizeof **idx);
    wf[a] = calloc((size_t)out[a], sizeof **wf);
    wq[a] = calloc((size_t)out[a], sizeof **wq);
    if (!idx[a] || !wf[a] || !wq[a]) st = qllc_lower_oom(c);
    for (int64_t o = 0; !st && o < out[a]; o++) {
      double s = src_coord(coord, o, in[a], out[a], (double)sa->floats[2 + a]);
      if (!linear) {
        double f = floor(s), fr = s - f;
        double r = !strcmp(nm, "floor") ? f : !strcmp(nm, "ceil") ? ceil(s)
                   : fr == 0.5 ? (!strcmp(nm, "round_prefer_ceil") ? f + 1 : f)
                               : floor(s + 0.5);
        idx[a][o] = clampi((int64_t)r, 0, in[a] - 1);
      } else {
        double f = floor(s), w = s - f;
        idx[a][2 * o] = clampi((int64_t)f, 0, in[a] - 1);
        idx[a][2 * o + 1] = clampi((int64_t)f + 1, 0, in[a] - 1);
        wf[a][o] = (float)w;
        wq[a][o] = (int32_t)floor(w * 16384.0 + 0.5);
      }
    }
  }
  if (!st && quant) st = same_params(c, n, x, y);
  if (!st) {
    roles r = {.set = {0}};
    qllc_lower_roles_yx(&r, c, x, y);
    qllc_role_int(&r, QLLC_ROLE_NC, x->dims[0] * x->dims[1]);
    qllc_role_int(&r, QLLC_ROLE_DIM_H, in[0]);
    qllc_role_int(&r, QLLC_ROLE_DIM_W, in[1]);
    qllc_role_int(&r, QLLC_ROLE_OH, out[0]);
    qllc_role_int(&r, QLLC_ROLE_OW, out[1]);
    int per = linear ? 2 : 1;
    qllc_role_buf(&r, QLLC_ROLE_IDX_H, qllc_lower_const_i64(c, n, "idx_h", (int)(per * out[0]), idx[0]), 0);
    qllc_role_buf(&r, QLLC_ROLE_IDX_W, qllc_lower_const_i64(c, n, "idx_w", (int)(per * out[1]), idx[1]), 0);
    if (linear) {
      int f = x->elem == QLLC_ELEM_F32;
      qllc_role_buf(&r, QLLC_ROLE_WT_H, f ? const_bytes(c, n, "wt_h", QLLC_ELEM_F32, out[0], wf[0])
                                          : const_bytes(c, n, "wt_h", QLLC_ELEM_I32, out[0], wq[0]), 0);
      qllc_role_buf(&r, QLLC_ROLE_WT_W, f ? const_bytes(c, n, "wt_w", QLLC_ELEM_F32, out[1], wf[1])
                                          : const_bytes(c, n, "wt_w", QLLC_ELEM_I32, out[1], wq[1]), 0);
    }
    st = qllc_lower_call(c, n, k2(c, linear ? "resize_linear" : "resize_nearest", x->elem, y->elem), &r);
  }
  for (int a = 0; a < 2; a++) free(idx[a]), free(wf[a]), free(wq[a]);
  return st;
}

/* ---- Max / Min / Mean ---------------------------------------------------------------------------------------------
 * float: a chain of binary kernels (max, min; add for Mean, then mul by the constant 1/n) through
 * activation buffers; quantized (two inputs, the quantizer's RESCALE record, as Add): the max/min kernels,
 * or add for Mean (its multipliers s_i / (2 s_y)). */

static qllc_status bcast_call(ctx *c, const qllc_node *n, const char *stem, qllc_elem e, qllc_buffer *yb,
                              const qllc_value *y, qllc_buffer *ab, const qllc_value *a, qllc_buffer *bb,
                              const qllc_value *b, roles *extra) {
  int64_t dims[QLLC_MAX_RANK], as[QLLC_MAX_RANK], bs[QLLC_MAX_RANK];
  int r = a->rank > y->rank || b->rank > y->rank ? 0 : qllc_lower_broadcast(y, a, b, dims, as, bs);
  if (r == 0) return qllc_lower_invalid(c, n, "operands do not broadcast to the output shape");
  roles rv = extra ? *extra : (roles){.set = {0}};
  qllc_role_buf(&rv, QLLC_ROLE_Y, yb, 0);
  qllc_role_buf(&rv, QLLC_ROLE_A, ab, 0);
  qllc_role_buf(&rv, QLLC_ROLE_B, bb, 0);
  qllc_role_int(&rv, QLLC_ROLE_RANK, r);
  qllc_role_buf(&rv, QLLC_ROLE_DIMS, qllc_lower_const_i64(c, n, "dims", r, dims), 0);
  qllc_role_buf(&rv, QLLC_ROLE_A_STRIDES, qllc_lower_const_i64(c, n, "a_strides", r, as), 0);
  qllc_role_buf(&rv, QLLC_ROLE_B_STRIDES, qllc_lower_const_i64(c, n, "b_strides", r, bs), 0);
  qllc_elem el[3] = {e, e, e};
  return qllc_lower_call(c, n, qllc_lower_kname(c, stem, 3, el), &rv);
}

static qllc_status minmax_f32(ctx *c, const qllc_node *n) {
  qllc_value *y = n->out[0];
  int mean = n->op == QLLC_OP_MEAN;
  const char *stem = n->op == QLLC_OP_MAX ? "max" : n->op == QLLC_OP_MIN ? "min" : "add";
  if (n->n_in == 1 && !mean) {
    int64_t od[QLLC_MAX_RANK], is[QLLC_MAX_RANK], s = 1;
    for (int d = y->rank - 1; d >= 0; d--) od[d] = y->dims[d], is[d] = s, s *= y->dims[d];
    if (y->rank == 0) return qllc_lower_unsupported(c, n, "a scalar");
    return strided(c, n, n->in[0], y, y->rank, od, is, 0);
  }
  qllc_value part = *n->in[0]; /* the running result's shape */
  qllc_buffer *pb = qllc_lower_buf_of(c, n->in[0]);
  for (int k = 1; k < n->n_in || (mean && k == n->n_in); k++) {
    int last = mean ? k == n->n_in : k == n->n_in - 1;
    qllc_value nxt;
    qllc_value *b = k < n->n_in ? n->in[k] : NULL;
    qllc_buffer *bb;
    float inv = 1.0f / (float)n->n_in;
    memset(&nxt, 0, sizeof nxt);
    nxt.elem = QLLC_ELEM_F32;
    if (b) {
      nxt.rank = qllc_broadcast_shape(part.rank, part.dims, b->rank, b->dims, nxt.dims);
      bb = qllc_lower_buf_of(c, b);
    } else { /* Mean's scale: a constant scalar */
      nxt.rank = part.rank;
      memcpy(nxt.dims, part.dims, sizeof nxt.dims);
      bb = const_bytes(c, n, "inv_n", QLLC_ELEM_F32, 1, &inv);
    }
    if (nxt.rank < 0) return qllc_lower_invalid(c, n, "inputs do not broadcast");
    qllc_buffer *ob = last ? qllc_lower_buf_of(c, y) : NULL;
    if (!ob) {
      char *nm = qllc_arena_printf(c->p->arena, "%s.part%d", n->name, k);
      ob = nm ? qllc_lower_buffer_new(c, nm, QLLC_REGION_ACT, QLLC_ELEM_F32, (uint64_t)qllc_value_numel(&nxt) * 4) : NULL;
      if (!ob) return qllc_lower_oom(c);
    }
    qllc_value bv;
    memset(&bv, 0, sizeof bv);
    bv.rank = 0;
    const qllc_value *bshape = b ? b : &bv;
    qllc_status st = bcast_call(c, n, b ? stem : "mul", QLLC_ELEM_F32, ob, &nxt, pb, &part, bb, bshape, NULL);
    if (st) return st;
    part = nxt, pb = ob;
  }
  return QLLC_OK;
}

static qllc_status minmax_q(ctx *c, const qllc_node *n) {
  qllc_value *a = n->in[0], *b = n->n_in > 1 ? n->in[1] : NULL, *y = n->out[0];
  const qllc_qnode *q = n->quant;
  if (!b || n->n_in != 2 || !q || q->kind != QLLC_QK_RESCALE || !q->inputs || q->n_inputs < 2)
    return qllc_lower_invalid(c, n, "no two-input rescale record");
  if (q->inputs[0].zero_point != a->zero_point || q->inputs[1].zero_point != b->zero_point || q->z_y != y->zero_point)
    return qllc_lower_invalid(c, n, "record zero points differ from the values'");
  roles r = {.set = {0}};
  qllc_role_int(&r, QLLC_ROLE_Z_A, a->zero_point);
  qllc_role_int(&r, QLLC_ROLE_M_A, q->inputs[0].m);
  qllc_role_int(&r, QLLC_ROLE_Z_B, b->zero_point);
  qllc_role_int(&r, QLLC_ROLE_M_B, q->inputs[1].m);
  qllc_role_int(&r, QLLC_ROLE_SHIFT, q->shared_n);
  qllc_role_int(&r, QLLC_ROLE_Z_Y, y->zero_point);
  qllc_role_int(&r, QLLC_ROLE_ACT_LO, q->act_lo);
  qllc_role_int(&r, QLLC_ROLE_ACT_HI, q->act_hi);
  const char *stem = n->op == QLLC_OP_MAX ? "max" : n->op == QLLC_OP_MIN ? "min" : "add";
  return bcast_call(c, n, stem, y->elem, qllc_lower_buf_of(c, y), y, qllc_lower_buf_of(c, a), a,
                    qllc_lower_buf_of(c, b), b, &r);
}

/* ---- ConvTranspose (float) ---------------------------------------------------------------------------------------- */

static qllc_status conv_transpose(ctx *c, const qllc_node *n) {
  qllc_value *x = n->in[0], *w = n->in[1], *b = n->n_in > 2 ? n->in[2] : NULL, *y = n->out[0];
  const int64_t *k, *s, *d, *p;
  if (qllc_attr_ints(n, "kernel_shape", &k) != 2 || qllc_attr_ints(n, "strides", &s) != 2 ||
      qllc_attr_ints(n, "dilations", &d) != 2 || qllc_attr_ints(n, "pads", &p) != 4)
    return qllc_lower_invalid(c, n, "ConvTranspose attributes not normalised");
  int one_d = x->rank == 3;
  roles r = {.set = {0}};
  qllc_lower_roles_yx(&r, c, x, y);
  qllc_role_buf(&r, QLLC_ROLE_W, qllc_lower_buf_of(c, w), 0);
  if (b) qllc_role_buf(&r, QLLC_ROLE_BIAS, qllc_lower_buf_of(c, b), 0);
  else qllc_role_null(&r, QLLC_ROLE_BIAS);
  int64_t v[] = {x->dims[0], x->dims[1], one_d ? 1 : x->dims[2], x->dims[x->rank - 1], y->dims[1], one_d ? 1 : y->dims[2],
                 y->dims[y->rank - 1], k[0], k[1], s[0], s[1], p[0], p[1], d[0], d[1], qllc_attr_int(n, "group", 1)};
  static const qllc_role rk[] = {QLLC_ROLE_DIM_N, QLLC_ROLE_DIM_C, QLLC_ROLE_DIM_H, QLLC_ROLE_DIM_W, QLLC_ROLE_DIM_M,
                                 QLLC_ROLE_OH, QLLC_ROLE_OW, QLLC_ROLE_KH, QLLC_ROLE_KW, QLLC_ROLE_STRIDE_H,
                                 QLLC_ROLE_STRIDE_W, QLLC_ROLE_PAD_TOP, QLLC_ROLE_PAD_LEFT, QLLC_ROLE_DIL_H,
                                 QLLC_ROLE_DIL_W, QLLC_ROLE_GROUP};
  for (size_t i = 0; i < sizeof rk / sizeof *rk; i++) qllc_role_int(&r, rk[i], v[i]);
  qllc_elem e[3] = {x->elem, w->elem, y->elem};
  return qllc_lower_call(c, n, qllc_lower_kname(c, "conv_transpose2d", 3, e), &r);
}

/* ---- Where (float, constant condition) ---------------------------------------------------------------------------- */

static qllc_status where(ctx *c, const qllc_node *n) {
  qllc_value *cv = n->in[0], *a = n->in[1], *b = n->in[2], *y = n->out[0];
  if (!cv->data) return qllc_lower_unsupported(c, n, "the condition must be a constant");
  if (a->elem != QLLC_ELEM_F32 || b->elem != QLLC_ELEM_F32 || y->elem != QLLC_ELEM_F32)
    return qllc_lower_unsupported(c, n, "Where of integer values (it runs in float)");
  int64_t total = qllc_value_numel(y);
  uint8_t *mask = malloc((size_t)(total ? total : 1));
  if (!mask) return qllc_lower_oom(c);
  int64_t cs[QLLC_MAX_RANK], s = 1;
  for (int d = cv->rank - 1; d >= 0; d--) cs[d] = cv->dims[d] == 1 ? 0 : s, s *= cv->dims[d];
  size_t es = qllc_elem_size((qllc_elem_kind)cv->elem);
  for (int64_t i = 0; i < total; i++) {
    int64_t rem = i, off = 0;
    for (int d = y->rank - 1; d >= 0; d--) {
      int64_t idx = rem % y->dims[d];
      rem /= y->dims[d];
      int cd = d - (y->rank - cv->rank);
      if (cd >= 0) off += idx * cs[cd];
    }
    const uint8_t *p = (const uint8_t *)cv->data + (size_t)off * es;
    uint8_t nz = 0;
    for (size_t k = 0; k < es; k++) nz |= p[k];
    mask[i] = nz != 0;
  }
  qllc_buffer *mb = const_bytes(c, n, "mask", QLLC_ELEM_U8, total, mask);
  free(mask);
  roles r = {.set = {0}};
  qllc_role_buf(&r, QLLC_ROLE_C, mb, 0);
  return bcast_call(c, n, "where", y->elem, qllc_lower_buf_of(c, y), y, qllc_lower_buf_of(c, a), a,
                    qllc_lower_buf_of(c, b), b, &r);
}

/* ---- dispatch (lower.c's table) ------------------------------------------------------------------------------- */

qllc_status qllc_lower_ext_f32(ctx *c, const qllc_node *n) {
  switch (n->op) {
  case QLLC_OP_LAYER_NORM: return layernorm(c, n, 0);
  case QLLC_OP_REDUCE_MEAN: case QLLC_OP_REDUCE_SUM: case QLLC_OP_REDUCE_MAX: return reduce(c, n, 0);
  case QLLC_OP_PRELU: return prelu_f32(c, n);
  case QLLC_OP_SLICE: return slice(c, n);
  case QLLC_OP_EXPAND: return expand(c, n);
  case QLLC_OP_SPLIT: return split(c, n);
  case QLLC_OP_GATHER: return gather(c, n);
  case QLLC_OP_RESIZE: case QLLC_OP_UPSAMPLE: return resize(c, n, 0);
  case QLLC_OP_MAX: case QLLC_OP_MIN: case QLLC_OP_MEAN: return minmax_f32(c, n);
  case QLLC_OP_CONV_TRANSPOSE: return conv_transpose(c, n);
  case QLLC_OP_WHERE: return where(c, n);
  default: return unary_f32(c, n);
  }
}

qllc_status qllc_lower_ext_q(ctx *c, const qllc_node *n) {
  switch (n->op) {
  case QLLC_OP_LAYER_NORM: return layernorm(c, n, 1);
  case QLLC_OP_REDUCE_MEAN: case QLLC_OP_REDUCE_SUM: case QLLC_OP_REDUCE_MAX: return reduce(c, n, 1);
  case QLLC_OP_PRELU: return prelu_q(c, n);
  case QLLC_OP_SLICE: case QLLC_OP_EXPAND: {
    qllc_status st = same_params(c, n, n->in[0], n->out[0]);
    return st ? st : n->op == QLLC_OP_SLICE ? slice(c, n) : expand(c, n);
  }
  case QLLC_OP_SPLIT: return split(c, n);
  case QLLC_OP_GATHER: return gather(c, n);
  case QLLC_OP_RESIZE: case QLLC_OP_UPSAMPLE: return resize(c, n, 1);
  case QLLC_OP_MAX: case QLLC_OP_MIN: case QLLC_OP_MEAN: return minmax_q(c, n);
  default: return qllc_lower_q_table(c, n);
  }
}
