/* src/ir/const_eval.c: compile-time evaluation of nodes whose inputs are known.
 *
 * Exporters wrap Reshape in small integer subgraphs (Shape -> Gather -> Unsqueeze -> Concat -> Reshape)
 * that only depend on shapes, which qllc knows at compile time. qllc_const_eval computes such a node's
 * outputs as constants so that the consumer (typically Reshape) sees a constant operand.
 *
 * A node folds when:
 *   - it is Constant (value from its attribute), or
 *   - it is Shape (the shape of every value is known), or
 *   - all its present inputs are constants and its op is one of: Gather, Cast, Concat, Unsqueeze,
 *     Squeeze, Slice, ConstantOfShape, Reshape, Flatten, Identity, Dropout, Add, Sub, Mul, Div,
 *     Transpose.
 * The node must have been normalised and inferred (qllc_infer_node) first: the evaluator reads the
 * normalised attributes and the output shapes. Arithmetic is done in double for f32 and in int64 for
 * integer kinds (integer Div truncates toward zero, as onnxruntime does; integer Add/Sub/Mul wrap
 * modulo 2^64 as two's complement, and INT64_MIN / -1 is INT64_MIN, instead of undefined behaviour).
 *
 * Sizes are checked (qllc_fold_alloc, also used by const_eval_ext.c): the output's byte size goes through
 * qllc_shape_bytes; a folded constant larger than QLLC_MAX_FOLD_BYTES (1 GiB), or one that takes the
 * graph's folded total past its folding budget (64 MiB plus 4 times the bytes of the graph's own
 * constants), is an error naming the node rather than a huge allocation. Real exporters fold shape
 * tensors of a few bytes and transposes or casts of the weights the model carries; without the budget a
 * few hundred bytes of ONNX (ConstantOfShape, then Add/Concat/... on the result) made several
 * constants of just under 1 GiB each.
 */
#include <math.h>
#include <string.h>

#include "ir/ir.h"

static double load_f(const qllc_value *v, int64_t i) {
  switch (v->elem) {
  case QLLC_ELEM_F32: return ((const float *)v->data)[i];
  case QLLC_ELEM_I8: return ((const int8_t *)v->data)[i];
  case QLLC_ELEM_U8: return ((const uint8_t *)v->data)[i];
  case QLLC_ELEM_I16: return ((const int16_t *)v->data)[i];
  case QLLC_ELEM_I32: return ((const int32_t *)v->data)[i];
  case QLLC_ELEM_I64: return (double)((const int64_t *)v->data)[i];
  default: return 0;
  }
}

/* double -> int64 saturating (NaN -> 0): a plain cast of an out-of-range value is undefined. */
static int64_t f2i(double f) {
  if (f != f) return 0;
  if (f >= 9223372036854775807.0) return INT64_MAX; /* the constant rounds to 2^63 */
  if (f <= -9223372036854775807.0 - 1.0) return INT64_MIN;
  return (int64_t)f;
}

static int64_t load_i(const qllc_value *v, int64_t i) {
  if (v->elem == QLLC_ELEM_F32) return f2i(((const float *)v->data)[i]);
  if (v->elem == QLLC_ELEM_I64) return ((const int64_t *)v->data)[i];
  return f2i(load_f(v, i));
}

static void store(qllc_elem e, void *data, int64_t i, double f, int64_t k) {
  switch (e) {
  case QLLC_ELEM_F32: ((float *)data)[i] = (float)f; break;
  case QLLC_ELEM_I8: ((int8_t *)data)[i] = (int8_t)k; break;
  case QLLC_ELEM_U8: ((uint8_t *)data)[i] = (uint8_t)k; break;
  case QLLC_ELEM_I16: ((int16_t *)data)[i] = (int16_t)k; break;
  case QLLC_ELEM_I32: ((int32_t *)data)[i] = (int32_t)k; break;
  case QLLC_ELEM_I64: ((int64_t *)data)[i] = k; break;
  default: break;
  }
}

/* Index into `v` (broadcast against the output shape `od` of rank `r`) for output coordinates c. */
static int64_t bcast_index(const qllc_value *v, int r, const int64_t *c) {
  int64_t idx = 0;
  for (int i = 0; i < v->rank; i++) {
    int oi = r - v->rank + i;
    idx = idx * v->dims[i] + (v->dims[i] == 1 ? 0 : c[oi]);
  }
  return idx;
}

static void next_coord(int64_t *c, const int64_t *dims, int r) {
  for (int i = r - 1; i >= 0; i--) {
    if (++c[i] < dims[i]) return;
    c[i] = 0;
  }
}

qllc_status qllc_fold_alloc(qllc_graph *g, const qllc_node *n, const qllc_value *o, void **out, qllc_diag *diag) {
  int64_t obytes, budget, after;
  *out = NULL;
  if (qllc_shape_bytes(o->elem, o->rank, o->dims, &obytes))
    return qllc_fail(diag, QLLC_ERR_INVALID, n->name, "node '%s' (%s): output '%s' is larger than %lld bytes (the largest tensor qllc takes)",
                     n->name, qllc_op_name(n->op), o->name, (long long)QLLC_MAX_TENSOR_BYTES);
  if (obytes > QLLC_MAX_FOLD_BYTES)
    return qllc_fail(diag, QLLC_ERR_UNSUPPORTED, n->name,
                     "node '%s' (%s): folding it makes a constant '%s' of %lld bytes, over the %lld qllc folds at compile time",
                     n->name, qllc_op_name(n->op), o->name, (long long)obytes, (long long)QLLC_MAX_FOLD_BYTES);
  int charged = n->op != QLLC_OP_CONSTANT; /* a Constant's value is counted in g->const_bytes already */
  if (qllc_mul_size(g->const_bytes, QLLC_FOLD_BUDGET_FACTOR, &budget) || qllc_add_size(budget, QLLC_FOLD_BUDGET_BASE, &budget))
    budget = INT64_MAX;
  if (qllc_add_size(g->fold_bytes, charged ? obytes : 0, &after)) after = INT64_MAX;
  if (after > budget)
    return qllc_fail(diag, QLLC_ERR_UNSUPPORTED, n->name,
                     "node '%s' (%s): folding it makes a constant '%s' of %lld bytes, which takes the bytes folded in this "
                     "model to %lld, over its folding budget of %lld (%lld MiB + %d x its %lld bytes of constants)",
                     n->name, qllc_op_name(n->op), o->name, (long long)obytes, (long long)after, (long long)budget,
                     (long long)(QLLC_FOLD_BUDGET_BASE >> 20), QLLC_FOLD_BUDGET_FACTOR, (long long)g->const_bytes);
  if (!(*out = qllc_arena_alloc(g->arena, (size_t)obytes)))
    return qllc_fail(diag, QLLC_ERR_NOMEM, n->name, "out of memory folding node '%s'", n->name);
  g->fold_bytes = after;
  return QLLC_OK;
}

/* issue 15: the elementwise ops of the transformer and mobile list (const_eval_ext.c) */
qllc_status qllc_const_eval_ext(qllc_graph *g, qllc_node *n, int *folded, qllc_diag *diag);

qllc_status qllc_const_eval(qllc_graph *g, qllc_node *n, int *folded, qllc_diag *diag) {
  *folded = 0;
  if (n->dead || n->n_out < 1 || !n->out[0]) return QLLC_OK;
  for (int k = 1; k < n->n_out; k++)
    if (n->out[k] && n->out[k]->n_uses > 0 && !(n->op == QLLC_OP_DROPOUT)) return QLLC_OK;
  qllc_value *o = n->out[0];
  if (o->data) return QLLC_OK;
  switch (n->op) {
  case QLLC_OP_CONSTANT:
  case QLLC_OP_SHAPE:
    break;
  case QLLC_OP_GATHER: case QLLC_OP_CAST: case QLLC_OP_CONCAT: case QLLC_OP_UNSQUEEZE: case QLLC_OP_SQUEEZE:
  case QLLC_OP_SLICE: case QLLC_OP_CONSTANT_OF_SHAPE: case QLLC_OP_RESHAPE: case QLLC_OP_FLATTEN:
  case QLLC_OP_IDENTITY: case QLLC_OP_DROPOUT: case QLLC_OP_ADD: case QLLC_OP_SUB: case QLLC_OP_MUL:
  case QLLC_OP_DIV: case QLLC_OP_TRANSPOSE:
    for (int k = 0; k < n->n_in; k++)
      if (n->in[k] && !n->in[k]->data) return QLLC_OK;
    if (n->n_in < 1 || !n->in[0]) return QLLC_OK;
    break;
  default:
    return qllc_const_eval_ext(g, n, folded, diag); /* issue 15 */
  }
  if (o->elem != QLLC_ELEM_F32 && o->elem != QLLC_ELEM_I8 && o->elem != QLLC_ELEM_U8 && o->elem != QLLC_ELEM_I16 &&
      o->elem != QLLC_ELEM_I32 && o->elem != QLLC_ELEM_I64)
    return QLLC_OK;
  int64_t total = qllc_value_numel(o);
  size_t esz = qllc_elem_size((qllc_elem_kind)o->elem);
  if (n->op == QLLC_OP_CONCAT) /* the blocks below are copied at the output's element size and rank */
    for (int k = 0; k < n->n_in; k++)
      if (n->in[k]->elem != o->elem || n->in[k]->rank != o->rank)
        return qllc_fail(diag, QLLC_ERR_INVALID, n->name, "node '%s' (Concat): input '%s' differs from the output '%s' in element type or rank",
                         n->name, n->in[k]->name, o->name);
  void *buf;
  qllc_status st = qllc_fold_alloc(g, n, o, &buf, diag);
  if (st) return st;
  unsigned char *out = buf;
  const qllc_value *x = n->n_in > 0 ? n->in[0] : NULL;
  int64_t c[QLLC_MAX_RANK] = {0};

  switch (n->op) {
  case QLLC_OP_CONSTANT: {
    const qllc_attr *a = &n->attrs[0];
    for (int i = 0; i < n->n_attr; i++)
      if (strcmp(n->attrs[i].name, "value") == 0 || strncmp(n->attrs[i].name, "value_", 6) == 0) a = &n->attrs[i];
    switch (a->kind) {
    case QLLC_ATTR_TENSOR: memcpy(out, a->t->data, (size_t)total * esz); break;
    case QLLC_ATTR_FLOAT: ((float *)out)[0] = a->f; break;
    case QLLC_ATTR_INT: ((int64_t *)out)[0] = a->i; break;
    case QLLC_ATTR_FLOATS: memcpy(out, a->floats, sizeof(float) * (size_t)a->n); break;
    case QLLC_ATTR_INTS: memcpy(out, a->ints, sizeof(int64_t) * (size_t)a->n); break;
    default: return QLLC_OK;
    }
    break;
  }
  case QLLC_OP_SHAPE: {
    int64_t start = qllc_attr_int(n, "start", 0);
    for (int64_t i = 0; i < total; i++) ((int64_t *)out)[i] = x->dims[start + i];
    break;
  }
  case QLLC_OP_RESHAPE: case QLLC_OP_FLATTEN: case QLLC_OP_IDENTITY: case QLLC_OP_DROPOUT:
  case QLLC_OP_SQUEEZE: case QLLC_OP_UNSQUEEZE:
    memcpy(out, x->data, (size_t)total * esz);
    break;
  case QLLC_OP_CAST: {
    int to_bool = qllc_attr_int(n, "to", 1) == 9;
    for (int64_t i = 0; i < total; i++) {
      double f = load_f(x, i);
      int64_t k = x->elem == QLLC_ELEM_F32 ? f2i(f) : load_i(x, i);
      if (to_bool) k = f != 0, f = k;
      store(o->elem, out, i, f, k);
    }
    break;
  }
  case QLLC_OP_CONSTANT_OF_SHAPE: {
    const qllc_attr *a = qllc_node_attr(n, "value");
    for (int64_t i = 0; i < total; i++) {
      if (a && a->kind == QLLC_ATTR_TENSOR && a->t->data) memcpy(out + i * esz, a->t->data, esz);
      else ((float *)out)[i] = 0.0f;
    }
    break;
  }
  case QLLC_OP_ADD: case QLLC_OP_SUB: case QLLC_OP_MUL: case QLLC_OP_DIV: {
    const qllc_value *b = n->in[1];
    int fl = o->elem == QLLC_ELEM_F32;
    for (int64_t i = 0; i < total; i++, next_coord(c, o->dims, o->rank)) {
      int64_t ia = bcast_index(x, o->rank, c), ib = bcast_index(b, o->rank, c);
      if (fl) {
        double p = load_f(x, ia), q = load_f(b, ib), r;
        switch (n->op) {
        case QLLC_OP_ADD: r = (float)p + (float)q; break;
        case QLLC_OP_SUB: r = (float)p - (float)q; break;
        case QLLC_OP_MUL: r = (float)p * (float)q; break;
        default: r = (float)p / (float)q; break;
        }
        store(o->elem, out, i, r, 0);
      } else {
        int64_t p = load_i(x, ia), q = load_i(b, ib), r;
        switch (n->op) { /* two's complement wrap, computed in uint64_t (no signed overflow) */
        case QLLC_OP_ADD: r = (int64_t)((uint64_t)p + (uint64_t)q); break;
        case QLLC_OP_SUB: r = (int64_t)((uint64_t)p - (uint64_t)q); break;
        case QLLC_OP_MUL: r = (int64_t)((uint64_t)p * (uint64_t)q); break;
        default:
          if (q == 0) return qllc_fail(diag, QLLC_ERR_INVALID, n->name, "node '%s' (Div): integer division by zero", n->name);
          r = q == -1 ? (int64_t)(0 - (uint64_t)p) : p / q;
          break;
        }
        store(o->elem, out, i, (double)r, r);
      }
    }
    break;
  }
  case QLLC_OP_GATHER: {
    const qllc_value *idx = n->in[1];
    int64_t axis = qllc_attr_int(n, "axis", 0), outer = 1, inner = 1, ni = qllc_value_numel(idx), d = x->dims[axis];
    for (int i = 0; i < axis; i++) outer *= x->dims[i];
    for (int i = (int)axis + 1; i < x->rank; i++) inner *= x->dims[i];
    unsigned char *p = out;
    for (int64_t a = 0; a < outer; a++)
      for (int64_t j = 0; j < ni; j++) {
        int64_t k = load_i(idx, j);
        if (k < 0) k += d;
        if (k < 0 || k >= d)
          return qllc_fail(diag, QLLC_ERR_INVALID, n->name, "node '%s' (Gather): index %lld out of range [0, %lld)", n->name,
                           (long long)load_i(idx, j), (long long)d);
        memcpy(p, (const unsigned char *)x->data + ((a * d + k) * inner) * esz, (size_t)inner * esz);
        p += inner * esz;
      }
    break;
  }
  case QLLC_OP_CONCAT: {
    int64_t axis = qllc_attr_int(n, "axis", 0), outer = 1;
    for (int i = 0; i < axis; i++) outer *= o->dims[i];
    unsigned char *p = out;
    for (int64_t a = 0; a < outer; a++)
      for (int k = 0; k < n->n_in; k++) {
        const qllc_value *v = n->in[k];
        int64_t block = 1;
        for (int i = (int)axis; i < v->rank; i++) block *= v->dims[i];
        memcpy(p, (const unsigned char *)v->data + a * block * esz, (size_t)block * esz);
        p += block * esz;
      }
    break;
  }
  case QLLC_OP_TRANSPOSE: {
    const int64_t *perm;
    int r = qllc_attr_ints(n, "perm", &perm);
    int64_t stride[QLLC_MAX_RANK];
    int64_t s = 1;
    for (int i = x->rank - 1; i >= 0; i--) stride[i] = s, s *= x->dims[i];
    for (int64_t i = 0; i < total; i++, next_coord(c, o->dims, r)) {
      int64_t src = 0;
      for (int k = 0; k < r; k++) src += c[k] * stride[perm[k]];
      memcpy(out + i * esz, (const unsigned char *)x->data + src * esz, esz);
    }
    break;
  }
  case QLLC_OP_SLICE: {
    const int64_t *st, *sp;
    qllc_attr_ints(n, "q_starts", &st);
    qllc_attr_ints(n, "q_steps", &sp);
    int64_t stride[QLLC_MAX_RANK];
    int64_t s = 1;
    for (int i = x->rank - 1; i >= 0; i--) stride[i] = s, s *= x->dims[i];
    for (int64_t i = 0; i < total; i++, next_coord(c, o->dims, o->rank)) {
      int64_t src = 0;
      for (int k = 0; k < o->rank; k++) src += (st[k] + c[k] * sp[k]) * stride[k];
      memcpy(out + i * esz, (const unsigned char *)x->data + src * esz, esz);
    }
    break;
  }
  default:
    return QLLC_OK;
  }
  o->data = out;
  o->producer = NULL;
  n->dead = 1;
  *folded = 1;
  return QLLC_OK;
}

