/* src/ir/infer_tensor.c: normalisation and shape inference of the ops that move or reshape tensors:
 * Reshape, Flatten, Transpose, Concat, Squeeze, Unsqueeze, Pad, Gather, Slice, Shape, Constant,
 * ConstantOfShape (the normalised forms are listed in infer.c). */
#include <stdlib.h>
#include <string.h>

#include "ir/infer_internal.h"

static int cmp_i64(const void *a, const void *b) {
  int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
  return x < y ? -1 : x > y;
}

/* Reads axes from the attribute or the constant input 1 (dropping it); normalises against `rank`. */
qllc_status qllc_norm_axes(qllc_graph *g, qllc_node *n, int rank, int *count, int64_t *axes, qllc_diag *diag) {
  const int64_t *a;
  int cnt = qllc_attr_ints(n, "axes", &a);
  int have = qllc_node_attr(n, "axes") != NULL;
  if (have && cnt > QLLC_MAX_RANK) return FAIL(QLLC_ERR_INVALID, "axes has %d entries (at most %d)", cnt, QLLC_MAX_RANK);
  if (have && cnt > 0) memcpy(axes, a, sizeof *a * (size_t)cnt);
  if (n->n_in > 1 && n->in[1]) {
    cnt = qllc_value_ints(n->in[1], axes, QLLC_MAX_RANK);
    if (cnt < 0) return FAIL(QLLC_ERR_UNSUPPORTED, "axes computed at run time ('%s') are not supported", n->in[1]->name);
    have = 1;
  }
  drop_inputs_from(n, 1);
  if (!have) {
    *count = -1;
    return QLLC_OK;
  }
  for (int i = 0; i < cnt; i++)
    if (norm_axis(axes[i], rank, &axes[i])) return FAIL(QLLC_ERR_INVALID, "axis %lld out of range for rank %d", (long long)axes[i], rank);
  qsort(axes, (size_t)cnt, sizeof *axes, cmp_i64);
  for (int i = 1; i < cnt; i++)
    if (axes[i] == axes[i - 1]) return FAIL(QLLC_ERR_INVALID, "axis %lld repeated", (long long)axes[i]);
  *count = cnt;
  qllc_node_set_attr_ints(g, n, "axes", cnt, axes);
  return QLLC_OK;
}

/* The normalisation of the tensor ops (qllc_normalize_node's cases). */
qllc_status qllc_norm_tensor(qllc_graph *g, qllc_node *n, qllc_diag *diag) {
  qllc_status st;
  const qllc_value *x = n->n_in > 0 ? n->in[0] : NULL;
  switch (n->op) {
  case QLLC_OP_SQUEEZE: {
    int cnt;
    int64_t axes[QLLC_MAX_RANK];
    if ((st = qllc_norm_axes(g, n, x->rank, &cnt, axes, diag))) return st;
    if (cnt < 0) {
      cnt = 0;
      for (int i = 0; i < x->rank; i++)
        if (x->dims[i] == 1) axes[cnt++] = i;
      qllc_node_set_attr_ints(g, n, "axes", cnt, axes);
    }
    return QLLC_OK;
  }
  case QLLC_OP_UNSQUEEZE: {
    const int64_t *a;
    int cnt = qllc_attr_ints(n, "axes", &a);
    if (n->n_in > 1 && n->in[1]) cnt = (int)qllc_value_numel(n->in[1]);
    int cnt2;
    int64_t axes[QLLC_MAX_RANK];
    if (x->rank + cnt > QLLC_MAX_RANK) return FAIL(QLLC_ERR_UNSUPPORTED, "result rank above %d", QLLC_MAX_RANK);
    if ((st = qllc_norm_axes(g, n, x->rank + cnt, &cnt2, axes, diag))) return st;
    if (cnt2 < 0) return FAIL(QLLC_ERR_INVALID, "Unsqueeze needs axes");
    return QLLC_OK;
  }
  case QLLC_OP_PAD: {
    const char *mode = qllc_attr_string(n, "mode", "constant");
    int is_const = !strcmp(mode, "constant");
    if (!is_const && strcmp(mode, "reflect") && strcmp(mode, "edge") && strcmp(mode, "wrap"))
      return FAIL(QLLC_ERR_UNSUPPORTED, "Pad mode '%s' is not supported (constant, reflect, edge and wrap are)", mode);
    int64_t pads[2 * QLLC_MAX_RANK];
    const int64_t *a;
    int cnt = qllc_attr_ints(n, "pads", &a);
    if (cnt > 2 * QLLC_MAX_RANK) return FAIL(QLLC_ERR_INVALID, "pads has %d entries (at most %d)", cnt, 2 * QLLC_MAX_RANK);
    if (cnt) memcpy(pads, a, sizeof *a * (size_t)cnt);
    float value = qllc_attr_float(n, "value", 0.0f);
    if (n->n_in > 1 && n->in[1]) {
      cnt = qllc_value_ints(n->in[1], pads, 2 * QLLC_MAX_RANK);
      if (cnt < 0) return FAIL(QLLC_ERR_UNSUPPORTED, "pads computed at run time ('%s') are not supported", n->in[1]->name);
    }
    /* a run-time value stays input 2 (float scalar); a constant one becomes the attribute */
    qllc_value *rt = NULL;
    if (is_const && n->n_in > 2 && n->in[2] && value_float(n->in[2], &value)) {
      if (n->in[2]->elem != QLLC_ELEM_F32 || qllc_value_numel(n->in[2]) != 1 || x->elem != QLLC_ELEM_F32)
        return FAIL(QLLC_ERR_UNSUPPORTED, "a constant_value computed at run time must be a float scalar padding float data");
      rt = n->in[2];
    }
    if (n->n_in > 3 && n->in[3]) return FAIL(QLLC_ERR_UNSUPPORTED, "Pad with an axes input is not supported");
    if (cnt != 2 * x->rank) return FAIL(QLLC_ERR_INVALID, "pads has %d entries for rank %d", cnt, x->rank);
    for (int i = 0; i < cnt; i++)
      if (pads[i] < 0) return FAIL(QLLC_ERR_UNSUPPORTED, "negative pads (cropping) are not supported");
    for (int i = 0; !is_const && i < x->rank; i++) {
      int64_t most = !strcmp(mode, "reflect") ? x->dims[i] - 1 : !strcmp(mode, "wrap") ? x->dims[i] : INT64_MAX;
      if (x->dims[i] == 0 && (pads[i] || pads[i + x->rank]))
        return FAIL(QLLC_ERR_INVALID, "Pad mode '%s' of an empty axis %d", mode, i);
      if (pads[i] > most || pads[i + x->rank] > most)
        return FAIL(QLLC_ERR_UNSUPPORTED, "Pad mode '%s' with pads larger than %lld on axis %d is not supported", mode,
                    (long long)most, i);
    }
    drop_inputs_from(n, rt ? 3 : 1);
    if (rt) n->in[1] = NULL;
    qllc_node_set_attr_ints(g, n, "pads", cnt, pads);
    qllc_node_set_attr_float(g, n, "value", value);
    return QLLC_OK;
  }
  case QLLC_OP_RESHAPE: {
    int64_t shape[QLLC_MAX_RANK + 1];
    const int64_t *a;
    int cnt;
    if (n->n_in > 1 && n->in[1]) {
      cnt = qllc_value_ints(n->in[1], shape, QLLC_MAX_RANK + 1);
      if (cnt < 0)
        return FAIL(QLLC_ERR_UNSUPPORTED, "the target shape '%s' is computed at run time; qllc needs it constant",
                    n->in[1]->name);
    } else {
      cnt = qllc_attr_ints(n, "shape", &a);
      if (!qllc_node_attr(n, "shape")) return FAIL(QLLC_ERR_INVALID, "Reshape without a shape");
      if (cnt > QLLC_MAX_RANK) return FAIL(QLLC_ERR_UNSUPPORTED, "rank %d above %d", cnt, QLLC_MAX_RANK);
      if (cnt) memcpy(shape, a, sizeof *a * (size_t)cnt);
    }
    if (cnt > QLLC_MAX_RANK) return FAIL(QLLC_ERR_UNSUPPORTED, "rank %d above %d", cnt, QLLC_MAX_RANK);
    int allowzero = (int)qllc_attr_int(n, "allowzero", 0);
    int64_t known = 1, infer_at = -1, total = qllc_value_numel(x);
    for (int i = 0; i < cnt; i++) {
      if (shape[i] == 0 && !allowzero) {
        if (i >= x->rank) return FAIL(QLLC_ERR_INVALID, "shape[%d] = 0 but the input has rank %d", i, x->rank);
        shape[i] = x->dims[i];
      }
      if (shape[i] == -1) {
        if (infer_at >= 0) return FAIL(QLLC_ERR_INVALID, "more than one -1 in the target shape");
        infer_at = i;
      } else if (shape[i] < 0) {
        return FAIL(QLLC_ERR_INVALID, "negative dim %lld in the target shape", (long long)shape[i]);
      } else if (qllc_mul_size(known, shape[i], &known)) {
        return FAIL(QLLC_ERR_INVALID, "the target shape's element count overflows (dim %d is %lld)", i, (long long)shape[i]);
      }
    }
    if (infer_at >= 0) {
      if (known == 0 || total % known) return FAIL(QLLC_ERR_INVALID, "cannot infer the -1 dim: %lld elements into %lld-sized blocks",
                                                   (long long)total, (long long)known);
      shape[infer_at] = total / known;
      known = total; /* known * (total / known), exact */
    }
    if (known != total)
      return FAIL(QLLC_ERR_INVALID, "cannot reshape %lld elements into %lld", (long long)total, (long long)known);
    drop_inputs_from(n, 1);
    qllc_node_remove_attr(n, "allowzero");
    qllc_node_set_attr_ints(g, n, "shape", cnt, shape);
    return QLLC_OK;
  }
  case QLLC_OP_FLATTEN: {
    int64_t axis = qllc_attr_int(n, "axis", 1);
    if (axis < -x->rank || axis > x->rank) return FAIL(QLLC_ERR_INVALID, "axis %lld out of range", (long long)axis);
    qllc_node_set_attr_int(g, n, "axis", axis < 0 ? axis + x->rank : axis);
    return QLLC_OK;
  }
  case QLLC_OP_CONCAT: {
    int64_t axis;
    if (!qllc_node_attr(n, "axis")) return FAIL(QLLC_ERR_INVALID, "Concat needs an axis");
    if (norm_axis(qllc_attr_int(n, "axis", 0), x->rank, &axis)) return FAIL(QLLC_ERR_INVALID, "axis out of range");
    qllc_node_set_attr_int(g, n, "axis", axis);
    return QLLC_OK;
  }
  case QLLC_OP_GATHER: {
    int64_t axis;
    if (norm_axis(qllc_attr_int(n, "axis", 0), x->rank, &axis)) return FAIL(QLLC_ERR_INVALID, "axis out of range");
    qllc_node_set_attr_int(g, n, "axis", axis);
    return QLLC_OK;
  }
  case QLLC_OP_TRANSPOSE: {
    const int64_t *a;
    int cnt = qllc_attr_ints(n, "perm", &a);
    int64_t perm[QLLC_MAX_RANK];
    int seen[QLLC_MAX_RANK] = {0};
    if (!qllc_node_attr(n, "perm")) {
      cnt = x->rank;
      for (int i = 0; i < cnt; i++) perm[i] = cnt - 1 - i;
    } else {
      if (cnt != x->rank) return FAIL(QLLC_ERR_INVALID, "perm has %d entries for rank %d", cnt, x->rank);
      for (int i = 0; i < cnt; i++) {
        if (norm_axis(a[i], cnt, &perm[i]) || seen[perm[i]]++) return FAIL(QLLC_ERR_INVALID, "perm is not a permutation");
      }
    }
    qllc_node_set_attr_ints(g, n, "perm", cnt, perm);
    return QLLC_OK;
  }
  case QLLC_OP_SHAPE: {
    int64_t start = qllc_attr_int(n, "start", 0), end = qllc_attr_int(n, "end", x->rank);
    if (start < 0) start += x->rank;
    if (end < 0) end += x->rank;
    start = start < 0 ? 0 : start > x->rank ? x->rank : start;
    end = end < 0 ? 0 : end > x->rank ? x->rank : end;
    if (end < start) end = start;
    qllc_node_set_attr_int(g, n, "start", start);
    qllc_node_set_attr_int(g, n, "end", end);
    return QLLC_OK;
  }
  default:
    return QLLC_OK;
  }
}

/* The shape inference of the tensor ops (qllc_infer_node's cases, after qllc_normalize_node). */
qllc_status qllc_infer_tensor(qllc_graph *g, qllc_node *n, qllc_diag *diag) {
  const qllc_value *x = n->n_in > 0 ? n->in[0] : NULL;
  int64_t dims[QLLC_MAX_RANK];
  char t1[160], t2[160];
  switch (n->op) {
  case QLLC_OP_FLATTEN: {
    int64_t axis = qllc_attr_int(n, "axis", 1), a = 1, b = 1;
    for (int i = 0; i < x->rank; i++)
      if (qllc_mul_size(i < axis ? a : b, x->dims[i], i < axis ? &a : &b))
        return FAIL(QLLC_ERR_INVALID, "input %s has too many elements", x->name);
    dims[0] = a, dims[1] = b;
    set_out(n, 0, x->elem, 2, dims);
    return QLLC_OK;
  }
  case QLLC_OP_RESHAPE: {
    const int64_t *s;
    int cnt = qllc_attr_ints(n, "shape", &s);
    set_out(n, 0, x->elem, cnt, s);
    return QLLC_OK;
  }
  case QLLC_OP_TRANSPOSE: {
    const int64_t *perm;
    int cnt = qllc_attr_ints(n, "perm", &perm);
    for (int i = 0; i < cnt; i++) dims[i] = x->dims[perm[i]];
    set_out(n, 0, x->elem, cnt, dims);
    return QLLC_OK;
  }
  case QLLC_OP_CONCAT: {
    int64_t axis = qllc_attr_int(n, "axis", 0), sum = 0;
    for (int k = 0; k < n->n_in; k++) {
      const qllc_value *v = n->in[k];
      if (!v) return FAIL(QLLC_ERR_INVALID, "input %d is missing", k);
      int ok = v->rank == x->rank;
      for (int i = 0; ok && i < x->rank; i++) ok = i == axis || v->dims[i] == x->dims[i];
      if (!ok) return FAIL(QLLC_ERR_INVALID, "input %d %s does not match input 0 %s outside axis %lld", k,
                           qllc_type_str(v, t1, sizeof t1), qllc_type_str(x, t2, sizeof t2), (long long)axis);
      sum += v->dims[axis];
    }
    memcpy(dims, x->dims, sizeof dims);
    dims[axis] = sum;
    set_out(n, 0, x->elem, x->rank, dims);
    return QLLC_OK;
  }
  case QLLC_OP_SQUEEZE: {
    const int64_t *axes;
    int cnt = qllc_attr_ints(n, "axes", &axes), r = 0;
    for (int i = 0, j = 0; i < x->rank; i++) {
      if (j < cnt && axes[j] == i) {
        if (x->dims[i] != 1) return FAIL(QLLC_ERR_INVALID, "cannot squeeze axis %d of size %lld", i, (long long)x->dims[i]);
        j++;
        continue;
      }
      dims[r++] = x->dims[i];
    }
    set_out(n, 0, x->elem, r, dims);
    return QLLC_OK;
  }
  case QLLC_OP_UNSQUEEZE: {
    const int64_t *axes;
    int cnt = qllc_attr_ints(n, "axes", &axes), r = x->rank + cnt;
    for (int i = 0, j = 0, s = 0; i < r; i++) dims[i] = j < cnt && axes[j] == i ? (j++, 1) : x->dims[s++];
    set_out(n, 0, x->elem, r, dims);
    return QLLC_OK;
  }
  case QLLC_OP_PAD: {
    const int64_t *p;
    qllc_attr_ints(n, "pads", &p);
    for (int i = 0; i < x->rank; i++)
      if (padded_extent(x->dims[i], p[i], p[i + x->rank], &dims[i]))
        return FAIL(QLLC_ERR_INVALID, "pads %lld, %lld overflow axis %d", (long long)p[i], (long long)p[i + x->rank], i);
    set_out(n, 0, x->elem, x->rank, dims);
    return QLLC_OK;
  }
  case QLLC_OP_CONSTANT: {
    const qllc_attr *a = NULL;
    for (int i = 0; i < n->n_attr && !a; i++) a = &n->attrs[i];
    if (!a) return FAIL(QLLC_ERR_INVALID, "Constant without a value");
    switch (a->kind) {
    case QLLC_ATTR_TENSOR: set_out(n, 0, a->t->elem, a->t->rank, a->t->dims); break;
    case QLLC_ATTR_FLOAT: set_out(n, 0, QLLC_ELEM_F32, 0, dims); break;
    case QLLC_ATTR_INT: set_out(n, 0, QLLC_ELEM_I64, 0, dims); break;
    case QLLC_ATTR_FLOATS: dims[0] = a->n; set_out(n, 0, QLLC_ELEM_F32, 1, dims); break;
    case QLLC_ATTR_INTS: dims[0] = a->n; set_out(n, 0, QLLC_ELEM_I64, 1, dims); break;
    default: return FAIL(QLLC_ERR_UNSUPPORTED, "Constant attribute '%s' is not supported", a->name);
    }
    return QLLC_OK;
  }
  case QLLC_OP_SHAPE:
    dims[0] = qllc_attr_int(n, "end", x->rank) - qllc_attr_int(n, "start", 0);
    set_out(n, 0, QLLC_ELEM_I64, 1, dims);
    return QLLC_OK;
  case QLLC_OP_GATHER: {
    const qllc_value *idx = n->in[1];
    int64_t axis = qllc_attr_int(n, "axis", 0);
    int r = 0;
    if (x->rank + idx->rank - 1 > QLLC_MAX_RANK) return FAIL(QLLC_ERR_UNSUPPORTED, "rank above %d", QLLC_MAX_RANK);
    for (int i = 0; i < axis; i++) dims[r++] = x->dims[i];
    for (int i = 0; i < idx->rank; i++) dims[r++] = idx->dims[i];
    for (int i = (int)axis + 1; i < x->rank; i++) dims[r++] = x->dims[i];
    set_out(n, 0, x->elem, r, dims);
    return QLLC_OK;
  }
  case QLLC_OP_SLICE: {
    /* starts/ends/axes/steps: attributes (opset < 10) or constant inputs 1..4 */
    int64_t starts[QLLC_MAX_RANK], ends[QLLC_MAX_RANK], axes[QLLC_MAX_RANK], steps[QLLC_MAX_RANK];
    int ns, ne, na = -1, nst = -1;
    const int64_t *a;
    if (n->n_in > 1) {
      ns = qllc_value_ints(n->in[1], starts, QLLC_MAX_RANK);
      ne = n->n_in > 2 ? qllc_value_ints(n->in[2], ends, QLLC_MAX_RANK) : -1;
      if (n->n_in > 3 && n->in[3] && (na = qllc_value_ints(n->in[3], axes, QLLC_MAX_RANK)) < 0) ns = -1;
      if (n->n_in > 4 && n->in[4] && (nst = qllc_value_ints(n->in[4], steps, QLLC_MAX_RANK)) < 0) ns = -1;
      if (ns < 0 || ne < 0) return FAIL(QLLC_ERR_UNSUPPORTED, "Slice with run-time starts/ends/axes/steps is not supported");
    } else {
      /* attributes longer than the rank limit are refused before they are copied */
      if (qllc_attr_ints(n, "starts", &a) > QLLC_MAX_RANK || qllc_attr_ints(n, "ends", &a) > QLLC_MAX_RANK ||
          qllc_attr_ints(n, "axes", &a) > QLLC_MAX_RANK)
        return FAIL(QLLC_ERR_INVALID, "starts/ends/axes have more than %d entries", QLLC_MAX_RANK);
      if ((ns = qllc_attr_ints(n, "starts", &a)) > 0) memcpy(starts, a, sizeof *a * (size_t)ns);
      if ((ne = qllc_attr_ints(n, "ends", &a)) > 0) memcpy(ends, a, sizeof *a * (size_t)ne);
      if (qllc_node_attr(n, "axes") && (na = qllc_attr_ints(n, "axes", &a)) > 0) memcpy(axes, a, sizeof *a * (size_t)na);
    }
    if (ns != ne || (na >= 0 && na != ns) || (nst >= 0 && nst != ns)) return FAIL(QLLC_ERR_INVALID, "starts/ends/axes/steps differ in length");
    int64_t st_[QLLC_MAX_RANK], sp_[QLLC_MAX_RANK];
    memcpy(dims, x->dims, sizeof dims);
    for (int i = 0; i < x->rank; i++) st_[i] = 0, sp_[i] = 1;
    for (int i = 0; i < ns; i++) {
      int64_t ax = na >= 0 ? axes[i] : i, step = nst >= 0 ? steps[i] : 1;
      if (norm_axis(ax, x->rank, &ax) || step == 0) return FAIL(QLLC_ERR_INVALID, "bad axis or step");
      int64_t d = x->dims[ax], s = starts[i], e = ends[i];
      if (s < 0) s += d;
      if (e < 0) e += d;
      if (step > 0) {
        s = s < 0 ? 0 : s > d ? d : s;
        e = e < 0 ? 0 : e > d ? d : e;
        dims[ax] = e > s ? 1 + (e - s - 1) / step : 0; /* ceil((e - s) / step), no overflow for a huge step */
      } else {
        s = s < 0 ? -1 : s > d - 1 ? d - 1 : s;
        e = e < -1 ? -1 : e > d - 1 ? d - 1 : e;
        dims[ax] = s > e ? 1 + (int64_t)((uint64_t)(s - e - 1) / (0 - (uint64_t)step)) : 0; /* -step may not fit */
      }
      st_[ax] = s, sp_[ax] = step;
    }
    for (int i = 0; i < x->rank; i++)
      if (dims[i] <= 0) return FAIL(QLLC_ERR_UNSUPPORTED, "Slice producing an empty tensor is not supported");
    /* record the resolved form for the evaluator */
    qllc_node_set_attr_ints(g, n, "q_starts", x->rank, st_);
    qllc_node_set_attr_ints(g, n, "q_steps", x->rank, sp_);
    set_out(n, 0, x->elem, x->rank, dims);
    return QLLC_OK;
  }
  case QLLC_OP_CONSTANT_OF_SHAPE: {
    int cnt = qllc_value_ints(x, dims, QLLC_MAX_RANK);
    if (cnt < 0) return FAIL(QLLC_ERR_UNSUPPORTED, "ConstantOfShape with a run-time shape is not supported");
    for (int i = 0; i < cnt; i++)
      if (dims[i] <= 0) return FAIL(QLLC_ERR_UNSUPPORTED, "ConstantOfShape producing an empty tensor is not supported");
    const qllc_attr *a = qllc_node_attr(n, "value");
    set_out(n, 0, a && a->kind == QLLC_ATTR_TENSOR ? a->t->elem : QLLC_ELEM_F32, cnt, dims);
    return QLLC_OK;
  }
  default:
    return FAIL(QLLC_ERR_INVALID, "no shape inference for this op");
  }
}
