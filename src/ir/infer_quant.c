/* src/ir/infer_quant.c: shape inference of the pre-quantized ops (issue 6): QuantizeLinear,
 * DequantizeLinear, QLinearConv, QLinearMatMul, ConvInteger, MatMulInteger, DynamicQuantizeLinear, and
 * the quantization parameters of the values they make.
 *
 * QuantizeLinear / DequantizeLinear made by the importer have their scale (input 1) and optional zero
 * point (input 2); the quantizer's own (one input) carry their parameters on the integer value and are
 * typed by the quantizer, so they are left alone here. The integer value a QuantizeLinear (or a
 * QLinearConv / QLinearMatMul) makes gets the model's parameters when they are constants: per tensor
 * in value->scale/zero_point, per axis in q_axis/q_scales/q_zero_points. Parameters computed at run
 * time (graph inputs, DynamicQuantizeLinear) leave the placeholder scale 1, zero point 0: such a value
 * is only read by the run-time-parameter kernels of libjit/bitcode/kernels_qdq.h. */
#include <math.h>

#include "ir/infer_internal.h"

static int is_q8(qllc_elem e) { return e == QLLC_ELEM_I8 || e == QLLC_ELEM_U8; }

/* Sets y's quantization from a scale and zero point (either may be NULL or non-constant). `axis` is
 * the normalised per-axis channel dimension, used when the scale has more than one element. */
static qllc_status set_qparams(qllc_graph *g, qllc_node *n, qllc_value *y, const qllc_value *s, const qllc_value *z,
                               int64_t axis, qllc_diag *diag) {
  y->scale = 1.0f, y->zero_point = 0, y->q_axis = -1, y->q_count = 0, y->q_scales = NULL, y->q_zero_points = NULL;
  if (!s || !s->data || s->elem != QLLC_ELEM_F32 || (z && !z->data)) return QLLC_OK; /* run time */
  int64_t cnt = qllc_value_numel(s);
  const float *sv = s->data;
  for (int64_t i = 0; i < cnt; i++)
    if (!(sv[i] > 0.0f) || sv[i] == INFINITY)
      return FAIL(QLLC_ERR_INVALID, "scale '%s' has a non-positive or non-finite value %g", s->name, (double)sv[i]);
  int64_t zv[1];
  if (cnt == 1) {
    y->scale = sv[0];
    if (z && (qllc_value_numel(z) != 1 || qllc_value_ints(z, zv, 1) != 1))
      return FAIL(QLLC_ERR_INVALID, "zero point '%s' must have one element like its scale", z->name);
    y->zero_point = z ? (int32_t)zv[0] : 0;
    return QLLC_OK;
  }
  if (z && qllc_value_numel(z) != cnt)
    return FAIL(QLLC_ERR_INVALID, "zero point '%s' has %lld elements, its scale %lld", z->name,
                (long long)qllc_value_numel(z), (long long)cnt);
  y->q_axis = (int)axis;
  y->q_count = cnt;
  y->q_scales = qllc_arena_memdup(g->arena, sv, (size_t)cnt * sizeof(float));
  y->q_zero_points = qllc_arena_alloc(g->arena, (size_t)cnt * sizeof(int32_t));
  if (!y->q_scales || !y->q_zero_points) return FAIL(QLLC_ERR_NOMEM, "out of memory");
  for (int64_t i = 0; i < cnt; i++) {
    int32_t v = 0;
    if (z) v = z->elem == QLLC_ELEM_I8 ? ((const int8_t *)z->data)[i] : z->elem == QLLC_ELEM_U8 ? ((const uint8_t *)z->data)[i]
                                                                                             : ((const int32_t *)z->data)[i];
    y->q_zero_points[i] = v;
  }
  y->scale = y->q_scales[0], y->zero_point = y->q_zero_points[0];
  return QLLC_OK;
}

/* Checks a scale / zero point operand: a scalar or 1-D of 1 or `channels` elements (channels <= 0:
 * per tensor only); zero point of kind `ze` when ze is not COUNT. */
static qllc_status check_qparam(qllc_node *n, const qllc_value *v, const char *what, int64_t channels, int is_scale,
                                qllc_diag *diag) {
  if (!v) return QLLC_OK;
  int64_t cnt = qllc_value_numel(v);
  if (v->rank > 1 || (cnt != 1 && (channels <= 0 || cnt != channels)))
    return FAIL(QLLC_ERR_UNSUPPORTED, "%s '%s' has shape %s; qllc takes one value per tensor%s", what, v->name,
                v->rank ? "of rank >= 1" : "()", channels > 0 ? " or one per channel of the axis" : "");
  if (is_scale && v->elem != QLLC_ELEM_F32)
    return FAIL(QLLC_ERR_UNSUPPORTED, "%s '%s' is %s; only float scales are supported", what, v->name,
                qllc_elem_name((qllc_elem_kind)v->elem));
  return QLLC_OK;
}

qllc_status qllc_infer_qop(qllc_graph *g, qllc_node *n, qllc_diag *diag) {
  qllc_value *x = n->in[0];
  qllc_status st;
  switch (n->op) {
  case QLLC_OP_QUANTIZE:
  case QLLC_OP_DEQUANTIZE: {
    if (n->n_in < 2) return QLLC_OK; /* the quantizer's own: typed by it */
    int quant = n->op == QLLC_OP_QUANTIZE;
    const qllc_value *s = n->in[1], *z = n->n_in > 2 ? n->in[2] : NULL;
    if (!s) return FAIL(QLLC_ERR_INVALID, "input %s is missing", quant ? "y_scale" : "x_scale"); /* named "" */
    int64_t axis = 1;
    int has_axis = qllc_node_attr(n, "axis") != NULL;
    if (has_axis && g->opset < 13) return FAIL(QLLC_ERR_INVALID, "attribute axis needs opset 13 (model has %lld)", (long long)g->opset);
    axis = qllc_attr_int(n, "axis", 1);
    int64_t cnt = qllc_value_numel(s);
    if (cnt > 1 || (s->rank == 1 && !has_axis && x->rank > 1)) {
      if (norm_axis(axis, x->rank, &axis)) return FAIL(QLLC_ERR_INVALID, "axis %lld out of range for rank %d", (long long)axis, x->rank);
    } else {
      axis = x->rank > 1 ? 1 : 0;
    }
    int64_t ch = x->rank ? x->dims[axis] : 1;
    if ((st = check_qparam(n, s, quant ? "y_scale" : "x_scale", ch, 1, diag)) ||
        (st = check_qparam(n, z, quant ? "y_zero_point" : "x_zero_point", ch, 0, diag)))
      return st;
    if (z && qllc_value_numel(z) != cnt)
      return FAIL(QLLC_ERR_INVALID, "zero point '%s' and scale '%s' differ in size", z->name, s->name);
    qllc_node_set_attr_int(g, n, "axis", axis);
    if (quant) {
      qllc_elem e = z ? z->elem : QLLC_ELEM_U8;
      if (x->elem != QLLC_ELEM_F32) return FAIL(QLLC_ERR_UNSUPPORTED, "input '%s' is %s; QuantizeLinear takes float", x->name, qllc_elem_name((qllc_elem_kind)x->elem));
      if (!is_q8(e))
        return FAIL(QLLC_ERR_UNSUPPORTED, "QuantizeLinear to %s: opsets up to 17 quantize to int8 or uint8 only (int16 came with opset 21, which qllc does not read)",
                    qllc_elem_name((qllc_elem_kind)e));
      set_out(n, 0, e, x->rank, x->dims);
      return set_qparams(g, n, n->out[0], s, z, axis, diag);
    }
    if (!is_q8(x->elem) && x->elem != QLLC_ELEM_I32)
      return FAIL(QLLC_ERR_UNSUPPORTED, "DequantizeLinear of %s (int8, uint8 and int32 are supported)", qllc_elem_name((qllc_elem_kind)x->elem));
    if (z && z->elem != x->elem) return FAIL(QLLC_ERR_INVALID, "zero point '%s' is not of the input's kind", z->name);
    if (x->elem == QLLC_ELEM_I32 && z && z->data) {
      int64_t zv[1];
      for (int64_t i = 0; i < qllc_value_numel(z); i++)
        if (((const int32_t *)z->data)[i] != 0) return FAIL(QLLC_ERR_INVALID, "an int32 input needs zero point 0");
      (void)zv;
    }
    set_out(n, 0, QLLC_ELEM_F32, x->rank, x->dims);
    return QLLC_OK;
  }
  case QLLC_OP_MATMUL_INTEGER:
  case QLLC_OP_QLINEAR_MATMUL: {
    int ql = n->op == QLLC_OP_QLINEAR_MATMUL;
    qllc_value *b = n->in[ql ? 3 : 1];
    if (!b) return FAIL(QLLC_ERR_INVALID, "input B is missing");
    if (!is_q8(x->elem) || !is_q8(b->elem)) return FAIL(QLLC_ERR_UNSUPPORTED, "operands must be int8 or uint8");
    qllc_value *save = n->in[1];
    n->in[1] = b;
    st = qllc_infer_matmul(n, diag);
    n->in[1] = save;
    if (st) return st;
    int64_t N = b->rank == 1 ? 1 : b->dims[b->rank - 1], M = x->rank == 1 ? 1 : x->dims[x->rank - 2];
    if (!ql) {
      if ((st = check_qparam(n, n->n_in > 2 ? n->in[2] : NULL, "a_zero_point", M, 0, diag)) ||
          (st = check_qparam(n, n->n_in > 3 ? n->in[3] : NULL, "b_zero_point", N, 0, diag)))
        return st;
      if ((n->n_in > 2 && n->in[2] && n->in[2]->elem != x->elem) || (n->n_in > 3 && n->in[3] && n->in[3]->elem != b->elem))
        return FAIL(QLLC_ERR_INVALID, "a zero point is not of its operand's kind");
      set_out(n, 0, QLLC_ELEM_I32, n->out[0]->rank, n->out[0]->dims);
      return QLLC_OK;
    }
    static const char *const names[] = {"a", "a_scale", "a_zero_point", "b", "b_scale", "b_zero_point", "y_scale", "y_zero_point"};
    for (int k = 0; k < 8; k++) {
      if (!n->in[k]) return FAIL(QLLC_ERR_INVALID, "input %s is missing", names[k]);
      if (k != 0 && k != 3 && (st = check_qparam(n, n->in[k], names[k], k >= 4 && k <= 5 ? N : 0, k == 1 || k == 4 || k == 6, diag))) return st;
    }
    if (n->in[2]->elem != x->elem || n->in[5]->elem != b->elem || !is_q8(n->in[7]->elem))
      return FAIL(QLLC_ERR_INVALID, "zero point kinds do not match their operands");
    set_out(n, 0, n->in[7]->elem, n->out[0]->rank, n->out[0]->dims);
    return set_qparams(g, n, n->out[0], n->in[6], n->in[7], 0, diag);
  }
  case QLLC_OP_CONV_INTEGER:
  case QLLC_OP_QLINEAR_CONV: {
    int ql = n->op == QLLC_OP_QLINEAR_CONV;
    qllc_value *w = n->in[ql ? 3 : 1];
    if (!w) return FAIL(QLLC_ERR_INVALID, "input w is missing");
    if (!is_q8(x->elem) || !is_q8(w->elem)) return FAIL(QLLC_ERR_UNSUPPORTED, "x and w must be int8 or uint8");
    if ((st = qllc_infer_spatial(n, diag))) return st;
    int64_t M = w->dims[0];
    if (!ql) {
      if ((st = check_qparam(n, n->n_in > 2 ? n->in[2] : NULL, "x_zero_point", 0, 0, diag)) ||
          (st = check_qparam(n, n->n_in > 3 ? n->in[3] : NULL, "w_zero_point", M, 0, diag)))
        return st;
      if ((n->n_in > 2 && n->in[2] && n->in[2]->elem != x->elem) || (n->n_in > 3 && n->in[3] && n->in[3]->elem != w->elem))
        return FAIL(QLLC_ERR_INVALID, "a zero point is not of its operand's kind");
      set_out(n, 0, QLLC_ELEM_I32, n->out[0]->rank, n->out[0]->dims);
      return QLLC_OK;
    }
    static const char *const names[] = {"x", "x_scale", "x_zero_point", "w", "w_scale", "w_zero_point", "y_scale", "y_zero_point"};
    for (int k = 0; k < 8; k++) {
      if (!n->in[k]) return FAIL(QLLC_ERR_INVALID, "input %s is missing", names[k]);
      if (k != 0 && k != 3 && (st = check_qparam(n, n->in[k], names[k], k >= 4 && k <= 5 ? M : 0, k == 1 || k == 4 || k == 6, diag))) return st;
    }
    if (n->in[2]->elem != x->elem || n->in[5]->elem != w->elem || !is_q8(n->in[7]->elem))
      return FAIL(QLLC_ERR_INVALID, "zero point kinds do not match their operands");
    if (n->n_in > 8 && n->in[8] && n->in[8]->elem != QLLC_ELEM_I32) return FAIL(QLLC_ERR_INVALID, "bias must be int32");
    set_out(n, 0, n->in[7]->elem, n->out[0]->rank, n->out[0]->dims);
    return set_qparams(g, n, n->out[0], n->in[6], n->in[7], 0, diag);
  }
  case QLLC_OP_DYNAMIC_QUANTIZE: {
    if (x->elem != QLLC_ELEM_F32) return FAIL(QLLC_ERR_INVALID, "input must be float");
    set_out(n, 0, QLLC_ELEM_U8, x->rank, x->dims);
    n->out[0]->scale = 1.0f, n->out[0]->zero_point = 0;
    if (n->n_out > 1) set_out(n, 1, QLLC_ELEM_F32, 0, NULL);
    if (n->n_out > 2 && n->out[2]) {
      set_out(n, 2, QLLC_ELEM_U8, 0, NULL);
      n->out[2]->scale = 1.0f, n->out[2]->zero_point = 0;
    }
    return QLLC_OK;
  }
  default:
    return FAIL(QLLC_ERR_INVALID, "not a quantized op");
  }
}

