/* src/lower/lower_qdq.c: lowering of the ops a pre-quantized ONNX model brings (issue 6).
 *
 * The recognition pass (src/quant/qdq.c) turns DequantizeLinear -> op -> QuantizeLinear units and
 * QLinearConv/QLinearMatMul with constant parameters into the quantizer's fused nodes, which lower_q.c
 * lowers. What is left comes here:
 *   - QuantizeLinear / DequantizeLinear with constant per-tensor parameters: the boundary kernels
 *     qllc_k_quantize_f32_<t> / qllc_k_dequantize_<t>_f32 of kernels_q.h, scale and zero point as
 *     immediates read from the node's inputs (not from the value: one integer value may be read by
 *     several DequantizeLinear nodes with different parameters);
 *   - per-axis or run-time parameters: qllc_k_quantize_axis_f32_<t> / qllc_k_dequantize_axis_<t>_f32
 *     (kernels_qdq.h) with the scale and zero point tensors as buffers, x seen as [outer][C][inner];
 *   - MatMulInteger, ConvInteger (int32 results, no requantization), QLinearMatMul/QLinearConv whose
 *     parameters are graph inputs (the requantization multiplier is then computed at run time in
 *     float, as onnxruntime does: kernels_qdq.h), DynamicQuantizeLinear (three outputs).
 * An absent zero point becomes a one-element CONST buffer of zeros; an absent QLinearConv bias a CONST
 * buffer of M zeros. Each call sets its arguments by role and qllc_lower_call orders them by the
 * kernel's registry row (src/lower/kernels.def).
 */
#include <stdlib.h>
#include <string.h>

#include "lower/lower_qdq.h"

int qllc_lower_qdq_owns(const qllc_node *n) {
  if (n->quant) return 0;
  switch (n->op) {
  case QLLC_OP_QUANTIZE:
  case QLLC_OP_DEQUANTIZE:
    return n->n_in >= 2;
  case QLLC_OP_QLINEAR_CONV:
  case QLLC_OP_QLINEAR_MATMUL:
  case QLLC_OP_MATMUL_INTEGER:
  case QLLC_OP_CONV_INTEGER:
  case QLLC_OP_DYNAMIC_QUANTIZE:
    return 1;
  default:
    return 0;
  }
}

typedef qllc_lower_ctx ctx;
typedef qllc_lower_roles roles;

static void r_buf(roles *r, qllc_role role, qllc_buffer *b) { qllc_role_buf(r, role, b, 0); }
static void r_int(roles *r, qllc_role role, int64_t i) { qllc_role_int(r, role, i); }

static const char *kname(ctx *c, const char *base, int k, qllc_elem e0, qllc_elem e1, qllc_elem e2) {
  qllc_elem e[3] = {e0, e1, e2};
  return qllc_lower_kname(c, base, k, e);
}

/* The buffer of an optional operand; when absent, a CONST of `count` zeros of `elem`. */
static qllc_buffer *opt_buf(ctx *c, const qllc_node *n, int k, qllc_elem elem, int64_t count, const char *what) {
  if (k < n->n_in && n->in[k]) return qllc_lower_buf_of(c, n->in[k]);
  size_t bytes = (size_t)count * qllc_elem_size((qllc_elem_kind)elem);
  const char *name = qllc_arena_printf(c->p->arena, "%s.%s", n->name, what);
  qllc_buffer *b = name ? qllc_lower_buffer_new(c, name, QLLC_REGION_CONST, elem, bytes) : NULL;
  if (!b) return NULL;
  b->data = qllc_arena_alloc(c->p->arena, bytes ? bytes : 1);
  return b->data ? b : NULL;
}

static int32_t zp_at(const qllc_value *z, int64_t i) {
  if (!z) return 0;
  switch (z->elem) {
  case QLLC_ELEM_I8: return ((const int8_t *)z->data)[i];
  case QLLC_ELEM_U8: return ((const uint8_t *)z->data)[i];
  default: return ((const int32_t *)z->data)[i];
  }
}

/* QuantizeLinear / DequantizeLinear read from the model. */
static qllc_status lower_qdq_node(ctx *c, const qllc_node *n) {
  int quant = n->op == QLLC_OP_QUANTIZE;
  qllc_value *x = n->in[0], *y = n->out[0], *s = n->in[1], *z = n->n_in > 2 ? n->in[2] : NULL;
  qllc_elem qe = quant ? y->elem : x->elem;
  int64_t cnt = qllc_value_numel(s), count = qllc_value_numel(x);
  roles r = {.set = {0}};
  qllc_lower_roles_yx(&r, c, x, y);
  if (cnt == 1 && s->data && (!z || z->data) && qe != QLLC_ELEM_I32) {
    r_int(&r, QLLC_ROLE_COUNT, count);
    qllc_role_float(&r, QLLC_ROLE_SCALE, ((const float *)s->data)[0]);
    r_int(&r, QLLC_ROLE_Z, zp_at(z, 0));
    return qllc_lower_call(c, n, kname(c, quant ? "quantize" : "dequantize", 2, x->elem, y->elem, 0), &r);
  }
  int64_t axis = cnt == 1 ? 0 : qllc_attr_int(n, "axis", 1);
  int64_t outer = cnt == 1 ? 1 : qllc_lower_prod(x->dims, 0, (int)axis);
  int64_t inner = cnt == 1 ? count : qllc_lower_prod(x->dims, (int)axis + 1, x->rank);
  if (outer * cnt * inner != count) return qllc_lower_invalid(c, n, "scale does not match the axis");
  r_buf(&r, QLLC_ROLE_SCALE_ARR, qllc_lower_buf_of(c, s));
  r_buf(&r, QLLC_ROLE_ZP_ARR, opt_buf(c, n, 2, qe, cnt, "zero_point"));
  r_int(&r, QLLC_ROLE_OUTER, outer);
  r_int(&r, QLLC_ROLE_DIM_C, cnt);
  r_int(&r, QLLC_ROLE_INNER, inner);
  return qllc_lower_call(c, n, kname(c, quant ? "quantize_axis" : "dequantize_axis", 2, x->elem, y->elem, 0), &r);
}

static qllc_status lower_matmul_like(ctx *c, const qllc_node *n) {
  int ql = n->op == QLLC_OP_QLINEAR_MATMUL;
  qllc_value *a = n->in[0], *b = n->in[ql ? 3 : 1], *y = n->out[0];
  /* the shared geometry reads in[0] and in[1]: a view of the node with B in place */
  qllc_node view = *n;
  qllc_value *ins[2] = {a, b};
  view.in = ins;
  view.n_in = 2;
  int64_t M, N, K, batches;
  qllc_buffer *aob, *bob;
  qllc_status st = qllc_lower_matmul_geom(c, &view, &M, &N, &K, &batches, &aob, &bob);
  if (st) return st;
  roles r = {.set = {0}};
  qllc_lower_roles_batched(&r, c, qllc_lower_buf_of(c, y), a, b, batches, M, N, K, aob, bob);
  if (!ql) {
    int64_t za = n->n_in > 2 && n->in[2] ? qllc_value_numel(n->in[2]) : 1;
    int64_t zb = n->n_in > 3 && n->in[3] ? qllc_value_numel(n->in[3]) : 1;
    if ((za != 1 && za != M) || (zb != 1 && zb != N)) return qllc_lower_unsupported(c, n, "zero points per batch");
    r_buf(&r, QLLC_ROLE_A_ZP, opt_buf(c, n, 2, a->elem, 1, "a_zero_point"));
    r_int(&r, QLLC_ROLE_A_ZP_N, za);
    r_buf(&r, QLLC_ROLE_B_ZP, opt_buf(c, n, 3, b->elem, 1, "b_zero_point"));
    r_int(&r, QLLC_ROLE_B_ZP_N, zb);
    return qllc_lower_call(c, n, kname(c, "matmul_integer", 3, a->elem, b->elem, QLLC_ELEM_I32), &r);
  }
  r_buf(&r, QLLC_ROLE_A_SCALE, qllc_lower_buf_of(c, n->in[1]));
  r_buf(&r, QLLC_ROLE_A_ZP, qllc_lower_buf_of(c, n->in[2]));
  r_buf(&r, QLLC_ROLE_B_SCALE, qllc_lower_buf_of(c, n->in[4]));
  r_buf(&r, QLLC_ROLE_B_ZP, qllc_lower_buf_of(c, n->in[5]));
  r_int(&r, QLLC_ROLE_B_ZP_N, qllc_value_numel(n->in[4]));
  r_buf(&r, QLLC_ROLE_Y_SCALE, qllc_lower_buf_of(c, n->in[6]));
  r_buf(&r, QLLC_ROLE_Y_ZERO_POINT, qllc_lower_buf_of(c, n->in[7]));
  return qllc_lower_call(c, n, kname(c, "qlinear_matmul", 3, a->elem, b->elem, y->elem), &r);
}

static qllc_status lower_conv_like(ctx *c, const qllc_node *n) {
  int ql = n->op == QLLC_OP_QLINEAR_CONV;
  qllc_value *x = n->in[0], *w = n->in[ql ? 3 : 1], *y = n->out[0];
  if (w->rank != x->rank || w->rank < 3) return qllc_lower_invalid(c, n, "weight rank differs from input rank");
  int64_t KH = w->rank == 4 ? w->dims[2] : 1, KW = w->dims[w->rank - 1];
  qllc_lower_geom g;
  qllc_status st = qllc_lower_spatial(c, n, x, y, KH, KW, 0, &g);
  if (st) return st;
  int64_t M = w->dims[0], group = qllc_attr_int(n, "group", 1);
  roles r = {.set = {0}};
  qllc_lower_roles_yx(&r, c, x, y);
  r_buf(&r, QLLC_ROLE_W, qllc_lower_buf_of(c, w));
  qllc_lower_roles_conv(&r, x, &g, M, group);
  if (!ql) {
    r_buf(&r, QLLC_ROLE_X_ZP, opt_buf(c, n, 2, x->elem, 1, "x_zero_point"));
    r_buf(&r, QLLC_ROLE_W_ZP, opt_buf(c, n, 3, w->elem, 1, "w_zero_point"));
    r_int(&r, QLLC_ROLE_W_ZP_N, n->n_in > 3 && n->in[3] ? qllc_value_numel(n->in[3]) : 1);
    return qllc_lower_call(c, n, kname(c, "conv_integer", 3, x->elem, w->elem, QLLC_ELEM_I32), &r);
  }
  r_buf(&r, QLLC_ROLE_BIAS, opt_buf(c, n, 8, QLLC_ELEM_I32, M, "bias"));
  r_buf(&r, QLLC_ROLE_X_SCALE, qllc_lower_buf_of(c, n->in[1]));
  r_buf(&r, QLLC_ROLE_X_ZP, qllc_lower_buf_of(c, n->in[2]));
  r_buf(&r, QLLC_ROLE_W_SCALE, qllc_lower_buf_of(c, n->in[4]));
  r_buf(&r, QLLC_ROLE_W_ZP, qllc_lower_buf_of(c, n->in[5]));
  r_int(&r, QLLC_ROLE_W_ZP_N, qllc_value_numel(n->in[4]));
  r_buf(&r, QLLC_ROLE_Y_SCALE, qllc_lower_buf_of(c, n->in[6]));
  r_buf(&r, QLLC_ROLE_Y_ZERO_POINT, qllc_lower_buf_of(c, n->in[7]));
  return qllc_lower_call(c, n, kname(c, "qlinear_conv", 3, x->elem, w->elem, y->elem), &r);
}

/* Scratch for an output the model does not use (written by the kernel, so not CONST). */
static qllc_buffer *scratch(ctx *c, const qllc_node *n, qllc_elem elem, const char *what) {
  const char *name = qllc_arena_printf(c->p->arena, "%s.%s", n->name, what);
  return name ? qllc_lower_buffer_new(c, name, QLLC_REGION_ACT, elem, qllc_elem_size((qllc_elem_kind)elem)) : NULL;
}

static qllc_status lower_dynamic(ctx *c, const qllc_node *n) {
  qllc_value *x = n->in[0];
  roles r = {.set = {0}};
  r_buf(&r, QLLC_ROLE_Y, qllc_lower_buf_of(c, n->out[0]));
  /* unused scale / zero point outputs still need somewhere to go */
  r_buf(&r, QLLC_ROLE_Y_SCALE,
        n->n_out > 1 && n->out[1] ? qllc_lower_buf_of(c, n->out[1]) : scratch(c, n, QLLC_ELEM_F32, "y_scale"));
  r_buf(&r, QLLC_ROLE_Y_ZERO_POINT,
        n->n_out > 2 && n->out[2] ? qllc_lower_buf_of(c, n->out[2]) : scratch(c, n, QLLC_ELEM_U8, "y_zero_point"));
  r_buf(&r, QLLC_ROLE_X, qllc_lower_buf_of(c, x));
  r_int(&r, QLLC_ROLE_COUNT, qllc_value_numel(x));
  return qllc_lower_call(c, n, "qllc_k_dynamic_quantize_f32_u8", &r);
}

qllc_status qllc_lower_qdq(ctx *c, const qllc_node *n) {
  switch (n->op) {
  case QLLC_OP_QUANTIZE:
  case QLLC_OP_DEQUANTIZE: return lower_qdq_node(c, n);
  case QLLC_OP_MATMUL_INTEGER:
  case QLLC_OP_QLINEAR_MATMUL: return lower_matmul_like(c, n);
  case QLLC_OP_CONV_INTEGER:
  case QLLC_OP_QLINEAR_CONV: return lower_conv_like(c, n);
  case QLLC_OP_DYNAMIC_QUANTIZE: return lower_dynamic(c, n);
  default: break;
  }
  return qllc_lower_unsupported(c, n, "not an op of pre-quantized models");
}
