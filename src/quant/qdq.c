/* src/quant/qdq.c: the recognition pass for pre-quantized ONNX models (issue 6).
 *
 * A QDQ model (onnxruntime's default, PyTorch's ONNX export of a quantized model) writes every
 * quantized layer as DequantizeLinear -> float op -> QuantizeLinear, its weights as int8 constants
 * behind a DequantizeLinear (per tensor or per output channel) and its bias as float (or as int32
 * behind a DequantizeLinear). This pass turns each such unit into the node the quantizer would have
 * made, with the MODEL's scales and zero points (no profile):
 *   - Conv, Gemm (transA = 0, alpha = beta = 1), MatMul with a constant 2-D weight, optionally followed
 *     by an Add of a constant bias (becomes a FullyConnected): a FUSED record. Weights stay the model's
 *     integers (w - z_w must fit int8: int8 with z_w = 0, or uint8 with z_w = 128); a float bias is
 *     quantized to int32 at s_x * s_w[c] (qllc_quantize_bias, clipping reported); an int32 bias whose
 *     scale is s_x * s_w[c] is taken as is. M[c] = s_x * s_w[c] / s_y. A Relu/Clip fused by the float
 *     pipeline becomes the clamp.
 *   - Add, AveragePool, GlobalAveragePool, Concat: RESCALE records as the quantizer's.
 *   - MaxPool, Reshape, Flatten, Transpose, Squeeze, Unsqueeze, Identity (same parameters on both
 *     sides) and Relu/Clip: SAME records (a Relu/Clip that changes parameters is a requantize with clamp).
 * The unit's inputs become the integer values the DequantizeLinear nodes read, its output the value
 * the QuantizeLinear makes; the DequantizeLinear/QuantizeLinear nodes that are no longer used are
 * dropped. uint8 and int8 activations are handled alike (the kernels exist for every pair).
 *
 * What is not fused stays: QuantizeLinear/DequantizeLinear become run-time kernels (lower_qdq.c), a
 * DequantizeLinear of a constant is folded into a float constant, and every float op between them is
 * marked keep_float with the reason it could not be fused, so the precision report names it.
 *
 * Invariant: a unit is rewritten only when every integer value it reads carries, on the value itself,
 * the parameters its DequantizeLinear uses (a graph input of integer kind gets them from its first
 * DequantizeLinear), because lower_q.c reads zero points from the values.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "quant/quant.h"

typedef struct pass {
  qllc_graph *g;
  qllc_diag *diag;
} pass;

static int is_q8(qllc_elem e) { return e == QLLC_ELEM_I8 || e == QLLC_ELEM_U8; }
static int is_model_qdq(const qllc_node *n, qllc_op op) { return n && !n->dead && n->op == op && n->n_in >= 2; }

int qllc_graph_has_qdq(const qllc_graph *g) {
  for (int i = 0; i < g->n_nodes; i++)
    if (is_model_qdq(g->nodes[i], QLLC_OP_QUANTIZE) || is_model_qdq(g->nodes[i], QLLC_OP_DEQUANTIZE) ||
        (!g->nodes[i]->dead && (g->nodes[i]->op == QLLC_OP_QLINEAR_CONV || g->nodes[i]->op == QLLC_OP_QLINEAR_MATMUL)))
      return 1;
  return 0;
}

static int32_t int_at(const qllc_value *v, int64_t i) {
  switch (v->elem) {
  case QLLC_ELEM_I8: return ((const int8_t *)v->data)[i];
  case QLLC_ELEM_U8: return ((const uint8_t *)v->data)[i];
  case QLLC_ELEM_I16: return ((const int16_t *)v->data)[i];
  default: return ((const int32_t *)v->data)[i];
  }
}

/* Constant per-tensor parameters of a model Q/DQ node. */
static int const_params(const qllc_node *n, qllc_qparams *p) {
  const qllc_value *s = n->in[1], *z = n->n_in > 2 ? n->in[2] : NULL;
  if (!s->data || qllc_value_numel(s) != 1 || (z && (!z->data || qllc_value_numel(z) != 1))) return 0;
  p->scale = ((const float *)s->data)[0];
  p->zero_point = z ? int_at(z, 0) : 0;
  p->elem = n->op == QLLC_OP_QUANTIZE ? n->out[0]->elem : n->in[0]->elem;
  return is_q8(p->elem);
}

/* The integer value behind input i of n when it comes from a per-tensor DequantizeLinear whose
 * parameters the value carries (or can be given: a graph input); NULL otherwise. */
static qllc_value *dq_input(const qllc_node *n, int i, qllc_qparams *p, const char **why) {
  qllc_value *v = i < n->n_in ? n->in[i] : NULL;
  qllc_node *dq = v ? v->producer : NULL;
  if (!is_model_qdq(dq, QLLC_OP_DEQUANTIZE)) {
    *why = "its input is not dequantized from an integer tensor (no DequantizeLinear before it)";
    return NULL;
  }
  if (!const_params(dq, p)) {
    *why = "its input's DequantizeLinear has per-axis or run-time parameters";
    return NULL;
  }
  qllc_value *x = dq->in[0];
  if (x->data) {
    *why = "its input is a constant";
    return NULL;
  }
  if (x->is_input && !x->producer && x->q_axis < 0 && x->scale == 1.0f && x->zero_point == 0) {
    x->scale = p->scale, x->zero_point = p->zero_point; /* a quantized graph input: first use decides */
  }
  if (x->q_axis >= 0 || x->scale != p->scale || x->zero_point != p->zero_point) {
    *why = "its input is read with other parameters elsewhere";
    return NULL;
  }
  return x;
}

/* The QuantizeLinear consuming n's only output (per tensor, constant parameters); NULL otherwise. */
static qllc_node *q_output(pass *ps, const qllc_node *n, qllc_qparams *p, const char **why) {
  qllc_value *y = n->out[0];
  qllc_node *users[2];
  int cnt = qllc_value_users(ps->g, y, users, 2);
  if (y->is_output || cnt != 1 || !is_model_qdq(users[0], QLLC_OP_QUANTIZE) || users[0]->in[0] != y) {
    *why = "its output is not quantized by a single QuantizeLinear";
    return NULL;
  }
  if (!const_params(users[0], p)) {
    *why = "its QuantizeLinear has per-axis or run-time parameters";
    return NULL;
  }
  return users[0];
}

/* Makes n compute q's integer output directly. */
static void take_output(qllc_node *n, qllc_node *q) {
  qllc_value *y = q->out[0];
  n->out[0] = y;
  y->producer = n;
  q->dead = 1;
}

static qllc_status oom(pass *ps, const qllc_node *n) {
  return qllc_fail(ps->diag, QLLC_ERR_NOMEM, n->name, "out of memory");
}

static qllc_status requant(pass *ps, const qllc_node *n, double M, int32_t *m, int32_t *sh) {
  qllc_requant r;
  qllc_status st = qllc_requant_make(M, &r, ps->diag);
  if (st != QLLC_OK)
    return qllc_fail(ps->diag, st, n->name, "node '%s' (%s): %s", n->name, n->op_type ? n->op_type : "", ps->diag->message);
  *m = r.m, *sh = r.n;
  return QLLC_OK;
}

/* ---- fused layers ---------------------------------------------------------------------------------- */

typedef struct wq {
  const qllc_node *dq;       /* the weight's DequantizeLinear (NULL for QLinearConv/QLinearMatMul) */
  const qllc_value *q;       /* its integer constant */
  const qllc_value *s, *z;   /* its scale and zero point (z may be NULL) */
  int64_t axis;              /* the scale's axis when it has more than one element */
  int64_t channels, K;
  int transposed;            /* q is [K][channels] (MatMul, Gemm transB = 0) rather than [channels][K] */
} wq;

/* Reads the weight: int8 [channels][K] and a scale per channel (expanded), or why not. */
static const char *weights(pass *ps, wq *w, int8_t *packed, float *scales) {
  const qllc_value *s = w->s, *z = w->z;
  if (!s->data || (z && !z->data)) return "its weight's DequantizeLinear has run-time parameters";
  int64_t ns = qllc_value_numel(s);
  int64_t axis = w->axis;
  int64_t want_axis = w->transposed ? 1 : 0;
  if (ns != 1 && (ns != w->channels || axis != want_axis)) return "its weight scales are not per tensor or per output channel";
  for (int64_t c = 0; c < w->channels; c++) scales[c] = ((const float *)s->data)[ns == 1 ? 0 : c];
  for (int64_t c = 0; c < w->channels; c++)
    for (int64_t k = 0; k < w->K; k++) {
      int64_t i = w->transposed ? k * w->channels + c : c * w->K + k;
      int32_t v = int_at(w->q, i) - (z ? int_at(z, ns == 1 ? 0 : c) : 0);
      if (v < -128 || v > 127) return "its weights minus their zero point do not fit int8";
      packed[c * w->K + k] = (int8_t)v;
    }
  (void)ps;
  return NULL;
}

/* The bias operand b (float constant, or DequantizeLinear of an int32 constant), or NULL with *why
 * unchanged when it is absent. Returns 0 when b cannot be used. */
typedef struct bq {
  const float *f;            /* float bias [channels], or NULL */
  const qllc_value *q;       /* int32 bias, or NULL */
  float s;                   /* its scale (per tensor), or */
  const float *s_c;          /* one per channel (onnxruntime writes s_x * s_w[c] per channel), or NULL */
  const qllc_node *dq;
  int exact;                 /* q's scale is s_x * s_w[c] by definition (QLinearConv's B) */
} bq;

static int bias_operand(qllc_value *b, int64_t channels, bq *out) {
  memset(out, 0, sizeof *out);
  if (!b) return 1;
  if (qllc_value_numel(b) != channels) return 0;
  if (b->data && b->elem == QLLC_ELEM_F32) {
    out->f = b->data;
    return 1;
  }
  qllc_node *dq = b->producer;
  if (!is_model_qdq(dq, QLLC_OP_DEQUANTIZE) || !dq->in[0]->data || dq->in[0]->elem != QLLC_ELEM_I32 || !dq->in[1]->data)
    return 0;
  int64_t ns = qllc_value_numel(dq->in[1]);
  if (ns != 1 && ns != channels) return 0;
  if (dq->n_in > 2 && dq->in[2]) { /* the zero point of an int32 bias must be 0 */
    if (!dq->in[2]->data) return 0;
    for (int64_t c = 0; c < qllc_value_numel(dq->in[2]); c++)
      if (int_at(dq->in[2], c) != 0) return 0;
  }
  out->q = dq->in[0];
  out->s = ((const float *)dq->in[1]->data)[0];
  out->s_c = ns == channels && ns > 1 ? dq->in[1]->data : NULL;
  out->dq = dq;
  return 1;
}

static qllc_status fuse_layer(pass *ps, qllc_node *n, qllc_node *add, const qllc_qparams *x, const qllc_qparams *y,
                              wq *w, const bq *b, qllc_qnode **out, const char **why) {
  qllc_arena *a = ps->g->arena;
  int64_t C = w->channels, K = w->K;
  qllc_qnode *q = qllc_arena_alloc(a, sizeof *q);
  int8_t *packed = qllc_arena_alloc(a, (size_t)(C * K));
  float *scales = qllc_arena_alloc(a, sizeof(float) * (size_t)C);
  int32_t *bias = qllc_arena_alloc(a, sizeof(int32_t) * (size_t)C), *qb = qllc_arena_alloc(a, sizeof(int32_t) * (size_t)C);
  int32_t *m = qllc_arena_alloc(a, sizeof(int32_t) * (size_t)C), *sh = qllc_arena_alloc(a, sizeof(int32_t) * (size_t)C);
  if (!q || !packed || !scales || !bias || !qb || !m || !sh) return oom(ps, n);
  *out = NULL;
  if ((*why = weights(ps, w, packed, scales))) return QLLC_OK;
  qllc_status st;
  q->bias_report.worst_channel = -1;
  if (b->q) {
    /* an int32 bias: usable as is when its scale is s_x * s_w[c] (to float precision) */
    for (int64_t c = 0; c < C && !b->exact; c++) {
      double want = (double)x->scale * scales[c], have = b->s_c ? b->s_c[c] : b->s;
      if (fabs(have - want) > 1e-6 * want) {
        *why = "its int32 bias does not have the scale s_x * s_w";
        return QLLC_OK;
      }
    }
    for (int64_t c = 0; c < C; c++) {
      int64_t sum = 0;
      for (int64_t k = 0; k < K; k++) sum += packed[c * K + k];
      int64_t v = (int64_t)int_at(b->q, c) - (int64_t)x->zero_point * sum;
      qb[c] = int_at(b->q, c);
      if (v > INT32_MAX || v < INT32_MIN) {
        q->bias_report.n_clipped++;
        q->bias_report.worst_channel = c, q->bias_report.worst_value = (double)v;
        v = v > 0 ? INT32_MAX : INT32_MIN;
      }
      bias[c] = (int32_t)v;
    }
  } else {
    st = qllc_quantize_bias(b->f, C, K, x->scale, scales, C, x->zero_point, packed, QLLC_ELEM_I8, QLLC_ELEM_I32, bias, qb,
                            &q->bias_report, ps->diag);
    if (st) return qllc_fail(ps->diag, st, n->name, "node '%s': %s", n->name, ps->diag->message);
  }
  for (int64_t c = 0; c < C; c++)
    if ((st = requant(ps, n, (double)x->scale * scales[c] / y->scale, &m[c], &sh[c]))) return st;
  q->kind = QLLC_QK_FUSED;
  q->in_elem = x->elem, q->w_elem = QLLC_ELEM_I8, q->out_elem = y->elem, q->acc_elem = QLLC_ELEM_I32;
  q->z_x = x->zero_point, q->z_y = y->zero_point;
  float lo = -INFINITY, hi = INFINITY;
  if (n->act != QLLC_ACT_NONE) lo = n->act_lo, hi = n->act_hi;
  qllc_quant_act_clamp(lo, hi, y, &q->act_lo, &q->act_hi);
  q->channels = C, q->bias = bias, q->qbias = qb, q->m = m, q->n = sh, q->w_scales = scales, q->w_packed = packed;
  (void)add;
  *out = q;
  return QLLC_OK;
}

/* An int8 constant holding the packed weights, shaped as the node reads them, with the scales on it. */
static qllc_value *weight_value(pass *ps, const wq *w, const qllc_qnode *q, int rank, const int64_t *dims) {
  qllc_value *v = qllc_const_new(ps->g, w->q->name, QLLC_ELEM_I8, rank, dims, q->w_packed);
  if (!v) return NULL;
  v->q_axis = 0, v->q_count = w->channels, v->q_scales = q->w_scales;
  v->q_zero_points = qllc_arena_alloc(ps->g->arena, sizeof(int32_t) * (size_t)w->channels);
  v->scale = q->w_scales[0];
  return v->q_zero_points ? v : NULL;
}

static qllc_value *bias_value(pass *ps, const qllc_node *n, const qllc_value *orig, const qllc_qnode *q) {
  int64_t d = q->channels;
  const char *name = orig ? orig->name : qllc_arena_printf(ps->g->arena, "%s.bias", n->name);
  return qllc_const_new(ps->g, name, QLLC_ELEM_I32, 1, &d, q->qbias);
}

static qllc_status try_fused(pass *ps, qllc_node *n, const char **why) {
  qllc_qparams x, y;
  qllc_value *xv = dq_input(n, 0, &x, why);
  if (!xv) return QLLC_OK;
  qllc_value *wv = n->in[1];
  wq w = {.dq = wv ? wv->producer : NULL};
  if (!is_model_qdq(w.dq, QLLC_OP_DEQUANTIZE) || !w.dq->in[0]->data) {
    *why = "its weights are not an integer constant behind a DequantizeLinear";
    return QLLC_OK;
  }
  w.q = w.dq->in[0], w.s = w.dq->in[1], w.z = w.dq->n_in > 2 ? w.dq->in[2] : NULL;
  w.axis = qllc_attr_int(w.dq, "axis", 1);
  if (w.axis < 0) w.axis += w.q->rank;
  qllc_value *bv = n->n_in > 2 ? n->in[2] : NULL;
  qllc_node *add = NULL, *tail = n;
  switch (n->op) {
  case QLLC_OP_CONV:
    w.channels = wv->dims[0], w.K = qllc_value_numel(wv) / w.channels;
    break;
  case QLLC_OP_GEMM:
    if (qllc_attr_int(n, "transA", 0) || qllc_attr_float(n, "alpha", 1.0f) != 1.0f ||
        (bv && qllc_attr_float(n, "beta", 1.0f) != 1.0f)) {
      *why = "a Gemm with transA, alpha or beta has no fused integer kernel";
      return QLLC_OK;
    }
    w.transposed = !qllc_attr_int(n, "transB", 0);
    w.channels = wv->dims[w.transposed ? 1 : 0], w.K = wv->dims[w.transposed ? 0 : 1];
    break;
  case QLLC_OP_MATMUL: {
    if (wv->rank != 2 || xv->rank != 2) {
      *why = "a MatMul whose operands are not 2-D has no fused integer kernel";
      return QLLC_OK;
    }
    w.transposed = 1, w.channels = wv->dims[1], w.K = wv->dims[0];
    qllc_node *users[2];
    if (qllc_value_users(ps->g, n->out[0], users, 2) == 1 && !n->out[0]->is_output && users[0]->op == QLLC_OP_ADD) {
      add = users[0];
      bv = add->in[0] == n->out[0] ? add->in[1] : add->in[0];
      tail = add;
    }
    break;
  }
  default:
    return QLLC_OK;
  }
  bq b;
  if (!bias_operand(bv, w.channels, &b)) {
    *why = "its bias is not a constant (float, or int32 behind a DequantizeLinear) with one value per channel";
    return QLLC_OK;
  }
  qllc_node *qn = q_output(ps, tail, &y, why);
  if (!qn) return QLLC_OK;
  qllc_qnode *rec;
  qllc_status st = fuse_layer(ps, n, add, &x, &y, &w, &b, &rec, why);
  if (st || !rec) return st;
  /* rewrite */
  int64_t nk[2] = {w.channels, w.K};
  qllc_value *nw = n->op == QLLC_OP_CONV ? weight_value(ps, &w, rec, wv->rank, wv->dims) : weight_value(ps, &w, rec, 2, nk);
  if (!nw) return oom(ps, n);
  if (n->op != QLLC_OP_CONV) { /* Gemm and MatMul(+Add) become a FullyConnected: W[N][K] */
    qllc_node *fc = qllc_node_new(ps->g, QLLC_OP_FC, n->name, 3, 1);
    if (!fc) return oom(ps, n);
    fc->onnx_index = n->onnx_index, fc->op_type = n->op_type, fc->domain = n->domain;
    fc->act = n->act, fc->act_lo = n->act_lo, fc->act_hi = n->act_hi;
    qllc_graph_insert_before(ps->g, fc, n);
    n->dead = 1;
    if (add) add->dead = 1;
    fc->out[0] = n->out[0];
    n = fc;
  } else if (n->n_in < 3) {
    qllc_value **in = qllc_arena_alloc(ps->g->arena, 3 * sizeof *in);
    if (!in) return oom(ps, n);
    in[0] = n->in[0], in[1] = n->in[1];
    n->in = in, n->n_in = 3;
  }
  qllc_value *nb = bias_value(ps, n, bv && b.dq ? b.dq->in[0] : bv, rec);
  if (!nb) return oom(ps, n);
  n->in[0] = xv, n->in[1] = nw, n->in[2] = nb;
  take_output(n, qn);
  n->quant = rec;
  return QLLC_OK;
}

/* ---- QLinearConv / QLinearMatMul with constant parameters ------------------------------------------ */

static qllc_qnode *record(pass *ps, qllc_qkind kind, const qllc_qparams *x, const qllc_qparams *y, int nin);

static int is_const(const qllc_value *v) { return !v || v->data; }

/* Per-tensor constant parameters (s, z) as qparams of kind e; 0 when not constant or not per tensor. */
static int tensor_params(const qllc_value *s, const qllc_value *z, qllc_elem e, qllc_qparams *p) {
  if (!s || !s->data || s->elem != QLLC_ELEM_F32 || qllc_value_numel(s) != 1 || !is_const(z) ||
      (z && qllc_value_numel(z) != 1))
    return 0;
  p->scale = ((const float *)s->data)[0], p->zero_point = z ? int_at(z, 0) : 0, p->elem = e;
  return is_q8(e) && p->scale > 0;
}

/* The integer activation a QLinear op reads: it must carry the op's parameters on the value (lower_q.c
 * reads zero points from values); a graph input still at the placeholder gets them. */
static int carries(qllc_value *x, const qllc_qparams *p) {
  if (x->data || !is_q8(x->elem) || x->elem != p->elem || x->q_axis >= 0) return 0;
  if (x->producer && x->producer->op == QLLC_OP_DYNAMIC_QUANTIZE) return 0; /* run-time parameters */
  if (x->is_input && !x->producer && x->scale == 1.0f && x->zero_point == 0)
    x->scale = p->scale, x->zero_point = p->zero_point;
  return x->scale == p->scale && x->zero_point == p->zero_point;
}

/* QLinearConv (x, x_s, x_z, w, w_s, w_z, y_s, y_z[, B]) and QLinearMatMul (a, a_s, a_z, b, b_s, b_z, y_s,
 * y_z) whose parameters are all constants become the quantizer's nodes, with the requantization
 * multiplier made at compile time: a Conv or FullyConnected with a FUSED record when the weights are
 * constant, a MatMul with a MATMUL record when both operands are activations. Otherwise (parameters
 * given at run time) the node stays for lower_qdq.c's run-time kernels; nothing is reported then, the
 * node is still integer. */
static qllc_status try_qlinear(pass *ps, qllc_node *n) {
  int conv = n->op == QLLC_OP_QLINEAR_CONV;
  qllc_value *xv = n->in[0], *wv = n->in[3], *yv = n->out[0];
  qllc_qparams x, y;
  for (int i = 1; i < n->n_in; i++)
    if (i != 3 && !is_const(n->in[i])) return QLLC_OK;
  if (!tensor_params(n->in[1], n->in[2], xv->elem, &x) || !tensor_params(n->in[6], n->in[7], yv->elem, &y) ||
      !carries(xv, &x) || yv->q_axis >= 0 || yv->scale != y.scale || yv->zero_point != y.zero_point)
    return QLLC_OK;
  if (!wv->data) {
    /* QLinearMatMul of two activations: per-tensor parameters on both */
    qllc_qparams b;
    if (conv || !tensor_params(n->in[4], n->in[5], wv->elem, &b) || !carries(wv, &b)) return QLLC_OK;
    if (xv->elem != wv->elem || yv->elem != xv->elem) return QLLC_OK; /* the MatMul kernels are t x t -> t */
    qllc_qnode *q = record(ps, QLLC_QK_MATMUL, &x, &y, 2);
    if (!q) return oom(ps, n);
    q->w_elem = b.elem, q->z_w = b.zero_point;
    q->inputs[0].zero_point = x.zero_point, q->inputs[1].zero_point = b.zero_point;
    qllc_status st = requant(ps, n, (double)x.scale * b.scale / y.scale, &q->m[0], &q->n[0]);
    if (st) return st;
    q->inputs[0].m = q->m[0], q->inputs[0].n = q->n[0];
    n->op = QLLC_OP_MATMUL;
    n->in[1] = wv, n->n_in = 2;
    n->quant = q;
    return QLLC_OK;
  }
  wq w = {.q = wv, .s = n->in[4], .z = n->in[5]};
  if (conv) {
    w.channels = wv->dims[0], w.K = qllc_value_numel(wv) / w.channels, w.axis = 0;
  } else {
    if (wv->rank != 2 || xv->rank < 2) return QLLC_OK; /* a batched constant B: the run-time kernel */
    w.transposed = 1, w.channels = wv->dims[1], w.K = wv->dims[0], w.axis = 1;
  }
  bq b = {.exact = 1};
  qllc_value *bv = conv && n->n_in > 8 ? n->in[8] : NULL;
  if (bv) {
    if (bv->elem != QLLC_ELEM_I32 || qllc_value_numel(bv) != w.channels) return QLLC_OK;
    b.q = bv, b.s = 0;
  }
  const char *why = NULL;
  qllc_qnode *rec;
  qllc_status st = fuse_layer(ps, n, NULL, &x, &y, &w, &b, &rec, &why);
  if (st || !rec) return st; /* weights minus zero point beyond int8: the run-time kernel */
  int64_t nk[2] = {w.channels, w.K};
  qllc_value *nw = conv ? weight_value(ps, &w, rec, wv->rank, wv->dims) : weight_value(ps, &w, rec, 2, nk);
  qllc_value *nb = nw ? bias_value(ps, n, bv, rec) : NULL;
  if (!nw || !nb) return oom(ps, n);
  n->op = conv ? QLLC_OP_CONV : QLLC_OP_FC;
  n->in[0] = xv, n->in[1] = nw, n->in[2] = nb, n->n_in = 3;
  n->quant = rec;
  return QLLC_OK;
}

/* ---- the other units ------------------------------------------------------------------------------- */

static qllc_qnode *record(pass *ps, qllc_qkind kind, const qllc_qparams *x, const qllc_qparams *y, int nin) {
  qllc_arena *a = ps->g->arena;
  qllc_qnode *q = qllc_arena_alloc(a, sizeof *q);
  if (!q) return NULL;
  q->kind = kind;
  q->in_elem = q->w_elem = x->elem, q->out_elem = y->elem, q->acc_elem = QLLC_ELEM_I32;
  q->z_x = x->zero_point, q->z_y = y->zero_point;
  q->channels = 1;
  q->n_inputs = nin;
  q->inputs = qllc_arena_alloc(a, sizeof *q->inputs * (size_t)(nin ? nin : 1));
  q->m = qllc_arena_alloc(a, sizeof *q->m);
  q->n = qllc_arena_alloc(a, sizeof *q->n);
  if (!q->inputs || !q->m || !q->n) return NULL;
  qllc_quant_act_clamp(-INFINITY, INFINITY, y, &q->act_lo, &q->act_hi);
  return q;
}

static int same(const qllc_qparams *a, const qllc_qparams *b) {
  return a->elem == b->elem && a->scale == b->scale && a->zero_point == b->zero_point;
}

static qllc_status try_other(pass *ps, qllc_node *n, const char **why) {
  int nin = n->op == QLLC_OP_ADD ? 2 : n->op == QLLC_OP_CONCAT ? n->n_in : 1;
  if (nin < 1 || nin > 64) return QLLC_OK;
  qllc_qparams x[64], y;
  qllc_value *xv[64];
  for (int i = 0; i < nin; i++)
    if (!(xv[i] = dq_input(n, i, &x[i], why))) return QLLC_OK;
  /* Add -> Relu -> QuantizeLinear (onnxruntime's residual blocks): the Relu becomes the clamp */
  qllc_node *relu = NULL, *users[2];
  if (n->op == QLLC_OP_ADD && n->act == QLLC_ACT_NONE && !n->out[0]->is_output &&
      qllc_value_users(ps->g, n->out[0], users, 2) == 1 && users[0]->op == QLLC_OP_RELU && !users[0]->quant)
    relu = users[0];
  qllc_node *qn = q_output(ps, relu ? relu : n, &y, why);
  if (!qn) return QLLC_OK;
  for (int i = 0; i < nin; i++)
    if (x[i].elem != y.elem) {
      *why = "its input and output integer kinds differ (no kernel converts between them)";
      return QLLC_OK;
    }
  qllc_qnode *q = record(ps, QLLC_QK_RESCALE, &x[0], &y, nin);
  if (!q) return oom(ps, n);
  for (int i = 0; i < nin; i++) q->inputs[i].zero_point = x[i].zero_point;
  qllc_status st;
  float lo = -INFINITY, hi = INFINITY;
  switch (n->op) {
  case QLLC_OP_ADD: {
    double M[2] = {(double)x[0].scale / y.scale, (double)x[1].scale / y.scale};
    int32_t ms[2];
    if ((st = qllc_requant_make_shared(M, 2, ms, &q->shared_n, ps->diag)))
      return qllc_fail(ps->diag, st, n->name, "node '%s': %s", n->name, ps->diag->message);
    for (int i = 0; i < 2; i++) q->inputs[i].m = ms[i], q->inputs[i].n = q->shared_n;
    lo = n->act != QLLC_ACT_NONE ? n->act_lo : lo, hi = n->act != QLLC_ACT_NONE ? n->act_hi : hi;
    if (relu) lo = 0.0f, relu->dead = 1;
    break;
  }
  case QLLC_OP_CONCAT:
    for (int i = 0; i < nin; i++)
      if ((st = requant(ps, n, (double)x[i].scale / y.scale, &q->inputs[i].m, &q->inputs[i].n))) return st;
    break;
  case QLLC_OP_AVGPOOL: {
    const int64_t *ks;
    int64_t cnt = 1;
    int nk = qllc_attr_ints(n, "kernel_shape", &ks);
    for (int i = 0; i < nk; i++) cnt *= ks[i];
    q->pool_m = qllc_arena_alloc(ps->g->arena, sizeof *q->pool_m * (size_t)(cnt + 1));
    q->pool_n = qllc_arena_alloc(ps->g->arena, sizeof *q->pool_n * (size_t)(cnt + 1));
    if (!q->pool_m || !q->pool_n) return oom(ps, n);
    if ((st = qllc_quant_pool_multipliers(x[0].scale, y.scale, cnt, q->pool_m, q->pool_n, ps->diag)))
      return qllc_fail(ps->diag, st, n->name, "node '%s': %s", n->name, ps->diag->message);
    break;
  }
  case QLLC_OP_GLOBAL_AVGPOOL: {
    int64_t hw = 1;
    for (int i = 2; i < n->in[0]->rank; i++) hw *= n->in[0]->dims[i];
    if ((st = requant(ps, n, (double)x[0].scale / ((double)y.scale * (double)hw), &q->m[0], &q->n[0]))) return st;
    q->inputs[0].m = q->m[0], q->inputs[0].n = q->n[0];
    break;
  }
  case QLLC_OP_RELU:
  case QLLC_OP_CLIP:
    if (n->op == QLLC_OP_RELU) lo = 0.0f;
    else lo = qllc_attr_float(n, "min", -INFINITY), hi = qllc_attr_float(n, "max", INFINITY);
    if (same(&x[0], &y)) {
      q->kind = QLLC_QK_SAME;
    } else {
      if ((st = requant(ps, n, (double)x[0].scale / y.scale, &q->m[0], &q->n[0]))) return st;
      q->inputs[0].m = q->m[0], q->inputs[0].n = q->n[0];
    }
    break;
  default: /* data movement: the parameters must not change */
    if (!same(&x[0], &y)) {
      *why = "it moves data without arithmetic but its QuantizeLinear has other parameters than its input";
      return QLLC_OK;
    }
    q->kind = QLLC_QK_SAME;
    break;
  }
  qllc_quant_act_clamp(lo, hi, &y, &q->act_lo, &q->act_hi);
  for (int i = 0; i < nin; i++) n->in[i] = xv[i];
  take_output(n, qn);
  n->quant = q;
  return QLLC_OK;
}

/* ---- the pass ---------------------------------------------------------------------------------------- */

static int unit_op(qllc_op op) {
  switch (op) {
  case QLLC_OP_CONV: case QLLC_OP_GEMM: case QLLC_OP_MATMUL: case QLLC_OP_ADD: case QLLC_OP_CONCAT:
  case QLLC_OP_AVGPOOL: case QLLC_OP_GLOBAL_AVGPOOL: case QLLC_OP_MAXPOOL: case QLLC_OP_RELU: case QLLC_OP_CLIP:
  case QLLC_OP_RESHAPE: case QLLC_OP_FLATTEN: case QLLC_OP_TRANSPOSE: case QLLC_OP_SQUEEZE: case QLLC_OP_UNSQUEEZE:
  case QLLC_OP_IDENTITY: case QLLC_OP_DROPOUT:
    return 1;
  default:
    return 0;
  }
}

/* Does n read a DequantizeLinear's output or feed a QuantizeLinear (so it belongs to the quantized
 * part of the model, and staying in float is worth reporting)? */
static int touches_qdq(pass *ps, const qllc_node *n) {
  for (int i = 0; i < n->n_in; i++)
    if (n->in[i] && is_model_qdq(n->in[i]->producer, QLLC_OP_DEQUANTIZE) && !n->in[i]->producer->in[0]->data) return 1;
  qllc_node *users[8];
  int cnt = qllc_value_users(ps->g, n->out[0], users, 8);
  for (int i = 0; i < cnt && i < 8; i++)
    if (is_model_qdq(users[i], QLLC_OP_QUANTIZE)) return 1;
  return 0;
}

qllc_status qllc_pass_qdq(qllc_graph *g, qllc_diag *diag) {
  pass ps = {g, diag};
  qllc_status st;
  qllc_graph_recount_uses(g);
  int count = g->n_nodes; /* nodes made here are appended and need no visit */
  for (int i = 0; i < count; i++) {
    qllc_node *n = g->nodes[i];
    if (n->dead || n->quant || !n->out[0]) continue;
    if (n->op == QLLC_OP_QLINEAR_CONV || n->op == QLLC_OP_QLINEAR_MATMUL) {
      if ((st = try_qlinear(&ps, n))) return st;
      continue;
    }
    if (n->out[0]->elem != QLLC_ELEM_F32) continue;
    if (!unit_op(n->op)) {
      /* a float op inside the quantized part of the model that the pass has no integer form for */
      if (n->op != QLLC_OP_QUANTIZE && n->op != QLLC_OP_DEQUANTIZE && touches_qdq(&ps, n)) {
        n->keep_float = 1;
        n->float_reason = qllc_arena_printf(g->arena, "pre-quantized model: not fused, %s has no integer form "
                                                      "recognised between DequantizeLinear and QuantizeLinear",
                                            n->op_type ? n->op_type : qllc_op_name(n->op));
      }
      continue;
    }
    const char *why = NULL;
    int fused = n->op == QLLC_OP_CONV || n->op == QLLC_OP_GEMM || n->op == QLLC_OP_MATMUL;
    st = fused ? try_fused(&ps, n, &why) : try_other(&ps, n, &why);
    if (st) return st;
    qllc_graph_recount_uses(g);
    if (!n->quant && !n->dead && why && touches_qdq(&ps, n)) {
      n->keep_float = 1;
      n->float_reason = qllc_arena_printf(g->arena, "pre-quantized model: not fused, %s", why);
    }
    count = count < g->n_nodes ? count : g->n_nodes;
    /* insert_before may have shifted n: find the next unvisited node by identity */
    for (int k = 0; k < g->n_nodes; k++)
      if (g->nodes[k] == n) {
        i = k;
        break;
      }
  }
  /* Q/DQ nodes nobody reads any more go; a DequantizeLinear of a constant left over becomes a float
   * constant (the float op after it keeps a constant operand, which every float kernel takes). */
  for (int changed = 1; changed;) {
    changed = 0;
    qllc_graph_recount_uses(g);
    for (int i = 0; i < g->n_nodes; i++) {
      qllc_node *n = g->nodes[i];
      if (n->dead || (n->op != QLLC_OP_QUANTIZE && n->op != QLLC_OP_DEQUANTIZE && n->op != QLLC_OP_IDENTITY)) continue;
      if (n->out[0]->n_uses == 0 && !n->out[0]->is_output) n->dead = 1, changed = 1;
    }
  }
  for (int i = 0; i < g->n_nodes; i++) {
    qllc_node *n = g->nodes[i];
    if (n->dead || !is_model_qdq(n, QLLC_OP_DEQUANTIZE) || !n->in[0]->data || !n->in[1]->data ||
        (n->n_in > 2 && n->in[2] && !n->in[2]->data) || n->out[0]->is_output)
      continue;
    qllc_value *x = n->in[0], *s = n->in[1], *z = n->n_in > 2 ? n->in[2] : NULL, *y = n->out[0];
    int64_t cnt = qllc_value_numel(x), ns = qllc_value_numel(s);
    int64_t axis = ns == 1 ? 0 : qllc_attr_int(n, "axis", 1);
    int64_t inner = 1;
    for (int d = (int)axis + 1; d < x->rank; d++) inner *= x->dims[d];
    float *f = qllc_arena_alloc(g->arena, sizeof(float) * (size_t)(cnt ? cnt : 1));
    if (!f) return oom(&ps, n);
    for (int64_t k = 0; k < cnt; k++) {
      int64_t c = ns == 1 ? 0 : (k / inner) % ns;
      f[k] = (float)((int64_t)int_at(x, k) - (z ? int_at(z, c) : 0)) * ((const float *)s->data)[c];
    }
    y->data = f;
    y->producer = NULL;
    n->dead = 1;
  }
  qllc_graph_recount_uses(g);
  qllc_graph_compact(g);
  return qllc_graph_verify(g, diag);
}
