/* src/ir/onnx_import.c: ONNX model file -> graph IR.
 *
 * The file is read whole and decoded by the protobuf-c code generated at build time from Debian's
 * onnx.proto. Then, in one pass over the ONNX graph:
 *   1. initializers become constant values (raw_data or the typed fields; FLOAT, DOUBLE (converted to
 *      f32), INT64, INT32, INT16, INT8, UINT8 and BOOL (as u8); anything else is unsupported, naming the
 *      tensor). Tensors stored in external files are rejected with a message saying how to embed them;
 *   2. graph inputs bound to a constant (qllc_onnx_load_bound: element type and declared shape must match)
 *      become constants like initializers, replacing an initializer of the same name; the other graph
 *      inputs that are not initializers become the graph's inputs. They must be float tensors
 *      (or int8/uint8/int32, which only pre-quantized models read: quantized data, zero points, int32
 *      biases; qllc's own ops reject them elsewhere) with known dims. A symbolic dim takes the size of an input
 *      shape given for it (qllc_onnx_load_shaped, --input-shape); else a symbolic or missing LEADING dim is
 *      taken as 1 (exporters write "batch" there; qllc compiles for one fixed shape) and listed for the
 *      caller's note; any other symbolic dim is an error asking for --input-shape;
 *   3. nodes, in file order (ONNX requires topological order): op table lookup (default domain; a node
 *      of any other domain becomes a CUSTOM node typed from value_info, see load_custom),
 *      arity check, attributes copied, qllc_infer_node (which normalises attributes, see infer.c), then
 *      qllc_const_eval, so shape subgraphs fold as they are read and a Reshape's shape input is a
 *      constant by the time Reshape is inferred. Nodes without a name are called "<OpType>#<index>";
 *   4. outputs; then checks that optional outputs qllc does not compute (BatchNormalization's training
 *      outputs, Dropout's mask, MaxPool's Indices) are unused, and that no shape-only op (Shape,
 *      Gather, Cast, Slice, ConstantOfShape, Constant) survived folding, and that integer values are
 *      computed at run time only by the quantized ops (QuantizeLinear, QLinearConv, MatMulInteger ...
 *      and the data movement between them, whose outputs keep their input's scale and zero point);
 *      dead nodes and unused constants are dropped and the graph is verified.
 * Opsets 6 and later of the default domain are accepted: 7..17 is the supported range; 6 is accepted
 * too because older PyTorch exports (and the ONNX backend tests' pytorch-* models) use it and the only
 * differences for the ops handled here (legacy broadcast attributes, BatchNormalization's spatial and
 * is_test) are checked in infer.c. Below 6, only ops whose meaning never changed are accepted (see
 * load_node). Newer opsets kept the semantics this importer reads.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir/ir.h"
#include "onnx/onnx.pb-c.h"

typedef struct importer {
  qllc_graph *g;
  qllc_diag *diag;
  const char *path;
  const Onnx__GraphProto *gp; /* for the value_info of custom ops' outputs */
  const qllc_tensor *bound;   /* graph inputs bound to constants (qllc_onnx_load_bound), or NULL */
  int n_bound;
  const qllc_tensor *shapes;  /* input shapes (qllc_onnx_load_shaped: rank and dims), or NULL */
  int n_shapes;
  char *pinned;               /* symbolic dims taken as 1 are listed here (qllc_onnx_load_shaped), or NULL */
  size_t pinned_size;
} importer;

/* ---- tensors ---------------------------------------------------------------------------------- */

static const char *onnx_type_name(int32_t t) {
  static const char *names[] = {"UNDEFINED", "FLOAT", "UINT8", "INT8", "UINT16", "INT16", "INT32", "INT64", "STRING",
                                "BOOL", "FLOAT16", "DOUBLE", "UINT32", "UINT64", "COMPLEX64", "COMPLEX128", "BFLOAT16"};
  return t >= 0 && t < (int32_t)(sizeof names / sizeof *names) ? names[t] : "unknown";
}

/* ONNX data type -> qllc element kind and the size of one source element in raw_data. */
static int map_type(int32_t t, qllc_elem *e, size_t *src_size) {
  switch (t) {
  case ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT: *e = QLLC_ELEM_F32, *src_size = 4; return 0;
  case ONNX__TENSOR_PROTO__DATA_TYPE__DOUBLE: *e = QLLC_ELEM_F32, *src_size = 8; return 0;
  case ONNX__TENSOR_PROTO__DATA_TYPE__INT64: *e = QLLC_ELEM_I64, *src_size = 8; return 0;
  case ONNX__TENSOR_PROTO__DATA_TYPE__INT32: *e = QLLC_ELEM_I32, *src_size = 4; return 0;
  case ONNX__TENSOR_PROTO__DATA_TYPE__INT16: *e = QLLC_ELEM_I16, *src_size = 2; return 0;
  case ONNX__TENSOR_PROTO__DATA_TYPE__INT8: *e = QLLC_ELEM_I8, *src_size = 1; return 0;
  case ONNX__TENSOR_PROTO__DATA_TYPE__UINT8: *e = QLLC_ELEM_U8, *src_size = 1; return 0;
  case ONNX__TENSOR_PROTO__DATA_TYPE__BOOL: *e = QLLC_ELEM_U8, *src_size = 1; return 0;
  default: return -1;
  }
}

/* Converts a TensorProto into a constant. With detached = 1 the value is not added to the graph's
 * value list (tensor attributes). `node` names the node for diagnostics (NULL for initializers). */
static qllc_status load_tensor(importer *im, const Onnx__TensorProto *t, const char *name, int detached,
                               const char *node, qllc_value **out) {
  qllc_graph *g = im->g;
  qllc_diag *diag = im->diag;
  if (!name || !name[0]) name = t->name && t->name[0] ? t->name : "tensor";
  if ((t->has_data_location && t->data_location == ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL) || t->n_external_data) {
    const char *loc = "?";
    for (size_t i = 0; i < t->n_external_data; i++)
      if (t->external_data[i]->key && !strcmp(t->external_data[i]->key, "location") && t->external_data[i]->value)
        loc = t->external_data[i]->value;
    return qllc_fail(diag, QLLC_ERR_UNSUPPORTED, node,
                     "tensor '%s' stores its data in an external file '%s'; qllc needs the data inside the model "
                     "(save it with onnx.save_model(model, path, save_as_external_data=False))",
                     name, loc);
  }
  qllc_elem e;
  size_t src;
  if (map_type(t->data_type, &e, &src))
    return qllc_fail(diag, QLLC_ERR_UNSUPPORTED, node, "tensor '%s' has data type %s (%d), which qllc does not support", name,
                     onnx_type_name(t->data_type), (int)t->data_type);
  if (t->n_dims > QLLC_MAX_RANK)
    return qllc_fail(diag, QLLC_ERR_UNSUPPORTED, node, "tensor '%s' has rank %zu (at most %d)", name, t->n_dims, QLLC_MAX_RANK);
  for (size_t i = 0; i < t->n_dims; i++)
    if (t->dims[i] < 0)
      return qllc_fail(diag, QLLC_ERR_PARSE, node, "tensor '%s' has an invalid dim %lld", name, (long long)t->dims[i]);
  int64_t numel = 1, bytes, need;
  if (qllc_shape_bytes(e, (int)t->n_dims, t->dims, &bytes))
    return qllc_fail(diag, QLLC_ERR_UNSUPPORTED, node, "tensor '%s' is larger than %lld bytes (the largest tensor qllc takes)",
                     name, (long long)QLLC_MAX_TENSOR_BYTES);
  for (size_t i = 0; i < t->n_dims; i++) qllc_mul_size(numel, t->dims[i], &numel); /* cannot fail: bytes <= 2^48 */
  if (t->segment) return qllc_fail(diag, QLLC_ERR_UNSUPPORTED, node, "tensor '%s' is segmented", name);
  /* the data the file carries must match the dims before anything of the claimed size is allocated */
  int use_raw = t->has_raw_data && (t->raw_data.len || numel == 0);
  if (use_raw) {
    if (qllc_mul_size(numel, (int64_t)src, &need) || t->raw_data.len != (size_t)need)
      return qllc_fail(diag, QLLC_ERR_PARSE, node, "tensor '%s': raw_data has %zu bytes, %lld elements of %s need %lld", name,
                       t->raw_data.len, (long long)numel, onnx_type_name(t->data_type), (long long)numel * (long long)src);
  } else {
    size_t have;
    switch (t->data_type) {
    case ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT: have = t->n_float_data; break;
    case ONNX__TENSOR_PROTO__DATA_TYPE__DOUBLE: have = t->n_double_data; break;
    case ONNX__TENSOR_PROTO__DATA_TYPE__INT64: have = t->n_int64_data; break;
    default: have = t->n_int32_data; break; /* INT32, INT16, INT8, UINT8, BOOL are stored widened */
    }
    if (have != (size_t)numel)
      return qllc_fail(diag, QLLC_ERR_PARSE, node, "tensor '%s' has %zu values for %lld elements", name, have, (long long)numel);
  }
  qllc_value *v;
  if (detached) {
    v = qllc_arena_alloc(g->arena, sizeof *v);
    if (!v) return qllc_fail(diag, QLLC_ERR_NOMEM, node, "out of memory");
    v->id = -1;
    v->name = qllc_arena_strdup(g->arena, name);
    v->elem = e;
    v->rank = (int)t->n_dims;
    for (size_t i = 0; i < t->n_dims; i++) v->dims[i] = t->dims[i];
    v->scale = 1.0f;
    v->q_axis = -1;
    v->data = qllc_arena_alloc(g->arena, (size_t)bytes);
  } else {
    v = qllc_const_new(g, name, e, (int)t->n_dims, t->dims, NULL);
  }
  if (!v || !v->data) return qllc_fail(diag, QLLC_ERR_NOMEM, node, "out of memory loading tensor '%s'", name);
  if (use_raw) {
    if (t->data_type == ONNX__TENSOR_PROTO__DATA_TYPE__DOUBLE) {
      for (int64_t i = 0; i < numel; i++) {
        double d;
        memcpy(&d, t->raw_data.data + i * 8, 8);
        ((float *)v->data)[i] = (float)d;
      }
    } else {
      if (bytes) memcpy(v->data, t->raw_data.data, (size_t)bytes); /* an empty tensor may have no data */
    }
  } else {
    switch (t->data_type) {
    case ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT: if (bytes) memcpy(v->data, t->float_data, (size_t)bytes); break;
    case ONNX__TENSOR_PROTO__DATA_TYPE__DOUBLE:
      for (int64_t i = 0; i < numel; i++) ((float *)v->data)[i] = (float)t->double_data[i];
      break;
    case ONNX__TENSOR_PROTO__DATA_TYPE__INT64: if (bytes) memcpy(v->data, t->int64_data, (size_t)bytes); break;
    default: /* INT32, INT16, INT8, UINT8, BOOL are stored widened in int32_data */
      for (int64_t i = 0; i < numel; i++) {
        int32_t x = t->int32_data[i];
        switch (e) {
        case QLLC_ELEM_I32: ((int32_t *)v->data)[i] = x; break;
        case QLLC_ELEM_I16: ((int16_t *)v->data)[i] = (int16_t)x; break;
        case QLLC_ELEM_I8: ((int8_t *)v->data)[i] = (int8_t)x; break;
        default: ((uint8_t *)v->data)[i] = (uint8_t)x; break;
        }
      }
      break;
    }
  }
  *out = v;
  return QLLC_OK;
}

/* ---- attributes ------------------------------------------------------------------------------- */

static qllc_status load_attr(importer *im, qllc_node *n, const Onnx__AttributeProto *a) {
  qllc_graph *g = im->g;
  int type = a->has_type ? (int)a->type : 0;
  if (type == ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__UNDEFINED) { /* very old files: guess from the fields */
    if (a->t) type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TENSOR;
    else if (a->n_floats) type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOATS;
    else if (a->n_ints) type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS;
    else if (a->has_s) type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRING;
    else if (a->has_f) type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOAT;
    else if (a->has_i) type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT;
  }
  const char *name = a->name ? a->name : "";
  qllc_attr *q;
  switch (type) {
  case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOAT: q = qllc_node_set_attr_float(g, n, name, a->f); break;
  case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT: q = qllc_node_set_attr_int(g, n, name, a->i); break;
  case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS: q = qllc_node_set_attr_ints(g, n, name, (int)a->n_ints, a->ints); break;
  case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOATS:
    q = qllc_node_set_attr_floats(g, n, name, (int)a->n_floats, a->floats);
    break;
  case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRING: {
    char *s = qllc_arena_alloc(g->arena, a->s.len + 1);
    if (!s) return qllc_fail(im->diag, QLLC_ERR_NOMEM, n->name, "out of memory");
    if (a->s.len) memcpy(s, a->s.data, a->s.len);
    q = qllc_node_set_attr_string(g, n, name, s);
    break;
  }
  case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TENSOR: {
    qllc_value *t;
    if (!a->t) return qllc_fail(im->diag, QLLC_ERR_PARSE, n->name, "node '%s': attribute '%s' has no tensor", n->name, name);
    qllc_status st = load_tensor(im, a->t, qllc_arena_printf(g->arena, "%s.%s", n->name, name), 1, n->name, &t);
    if (st) return st;
    q = qllc_node_attr_slot(g, n, name);
    if (q) q->kind = QLLC_ATTR_TENSOR, q->t = t;
    break;
  }
  default:
    if (n->op == QLLC_OP_CONSTANT)
      return qllc_fail(im->diag, QLLC_ERR_UNSUPPORTED, n->name, "node '%s': Constant attribute '%s' (type %d) is not supported",
                       n->name, name, type);
    return QLLC_OK; /* strings lists, graphs, sparse tensors: no op qllc handles reads them */
  }
  if (!q) return qllc_fail(im->diag, QLLC_ERR_NOMEM, n->name, "out of memory");
  return QLLC_OK;
}

/* ---- graph inputs ----------------------------------------------------------------------------- */

static const qllc_tensor *find_shape(const importer *im, const char *name) {
  for (int i = 0; i < im->n_shapes; i++)
    if (im->shapes[i].name && !strcmp(im->shapes[i].name, name)) return &im->shapes[i];
  return NULL;
}

static qllc_status load_input(importer *im, const Onnx__ValueInfoProto *vi) {
  qllc_diag *diag = im->diag;
  const char *name = vi->name ? vi->name : "";
  const Onnx__TypeProto *tp = vi->type;
  if (!tp || tp->value_case != ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE || !tp->tensor_type)
    return qllc_fail(diag, QLLC_ERR_UNSUPPORTED, NULL, "graph input '%s' is not a tensor", name);
  const Onnx__TypeProto__Tensor *tt = tp->tensor_type;
  qllc_elem elem;
  switch (tt->elem_type) {
  case ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT: elem = QLLC_ELEM_F32; break;
  /* a double input is read as float, like every double of the model (initializers, Cast to double): qllc
     computes in float32; its callers pass float data (qllc_tensor_read converts double .pb files) */
  case ONNX__TENSOR_PROTO__DATA_TYPE__DOUBLE: elem = QLLC_ELEM_F32; break;
  /* integer inputs feed pre-quantized models (quantized tensors, scales' zero points, int32 biases);
     an integer input reaching a float op fails there, naming the op */
  case ONNX__TENSOR_PROTO__DATA_TYPE__INT8: elem = QLLC_ELEM_I8; break;
  case ONNX__TENSOR_PROTO__DATA_TYPE__UINT8: elem = QLLC_ELEM_U8; break;
  case ONNX__TENSOR_PROTO__DATA_TYPE__INT32: elem = QLLC_ELEM_I32; break;
  default:
    return qllc_fail(diag, QLLC_ERR_UNSUPPORTED, NULL,
                     "graph input '%s' has element type %s; qllc takes float (and double, read as float), int8, uint8 and int32 inputs (or bind it "
                     "to a constant: qllc --const %s=FILE, qllc_model_load_bound)", name,
                     onnx_type_name(tt->elem_type), name);
  }
  const qllc_tensor *pin = find_shape(im, name);
  if (!tt->shape && !pin)
    return qllc_fail(diag, QLLC_ERR_UNSUPPORTED, NULL, "graph input '%s' has no shape; qllc needs fixed input shapes "
                     "(give one: --input-shape %s=DxDx...)", name, name);
  size_t rank = tt->shape ? tt->shape->n_dim : pin->rank;
  if (rank > QLLC_MAX_RANK)
    return qllc_fail(diag, QLLC_ERR_UNSUPPORTED, NULL, "graph input '%s' has rank %zu (at most %d)", name, rank,
                     QLLC_MAX_RANK);
  if (pin && pin->rank != rank)
    return qllc_fail(diag, QLLC_ERR_INVALID, NULL, "--input-shape %s: %u dims given, the input has %zu", name, pin->rank,
                     rank);
  int64_t dims[QLLC_MAX_RANK];
  for (size_t i = 0; i < rank; i++) {
    const Onnx__TensorShapeProto__Dimension *d = tt->shape ? tt->shape->dim[i] : NULL;
    int fixed = d && d->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE;
    const char *what = d && d->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM ? d->dim_param : NULL;
    if (fixed && d->dim_value > 0) {
      dims[i] = d->dim_value;
      if (pin && pin->dims[i] != dims[i])
        return qllc_fail(diag, QLLC_ERR_INVALID, NULL, "--input-shape %s: axis %zu is %lld in the model, %lld given", name, i,
                         (long long)dims[i], (long long)pin->dims[i]);
    } else if (pin && !fixed) {
      dims[i] = pin->dims[i]; /* a symbolic dim pinned by the user */
    } else if (i == 0 && !fixed) {
      dims[i] = 1; /* symbolic batch dim ("batch", "N"): compiled for batch 1, and said (docs/limits.md) */
      if (im->pinned) {
        size_t used = strlen(im->pinned);
        snprintf(im->pinned + used, im->pinned_size - used, "%s'%s' axis 0%s%s%s", used ? ", " : "", name,
                 what ? " ('" : "", what ? what : "", what ? "')" : "");
      }
    } else {
      if (what)
        return qllc_fail(diag, QLLC_ERR_UNSUPPORTED, NULL,
                         "graph input '%s' has a dynamic dimension '%s' at axis %zu; qllc needs fixed input shapes "
                         "(give one: --input-shape %s=DxDx...)", name, what, i, name);
      return qllc_fail(diag, QLLC_ERR_UNSUPPORTED, NULL,
                       "graph input '%s' has a dynamic or empty dimension at axis %zu; qllc needs fixed input shapes "
                       "(give one: --input-shape %s=DxDx...)", name, i, name);
    }
  }
  int64_t bytes;
  if (qllc_shape_bytes(elem, (int)rank, dims, &bytes))
    return qllc_fail(diag, QLLC_ERR_UNSUPPORTED, NULL, "graph input '%s' is larger than %lld bytes (the largest tensor qllc takes)",
                     name, (long long)QLLC_MAX_TENSOR_BYTES);
  qllc_value *v = qllc_value_new(im->g, name, elem, (int)rank, dims);
  if (!v || strcmp(v->name, name))
    return qllc_fail(diag, QLLC_ERR_INVALID, NULL, "graph input '%s' is declared twice", name);
  if (qllc_graph_add_input(im->g, v)) return qllc_fail(diag, QLLC_ERR_NOMEM, NULL, "out of memory");
  return QLLC_OK;
}

/* A graph input bound to a constant: its declared element type must be the tensor's (after the same
 * mapping as initializers: DOUBLE reads as f32, BOOL as u8) and its declared shape must match, a
 * symbolic or missing dim matching any size. The value is an initializer from here on, so shape
 * inference and folding see it. */
static qllc_status load_bound(importer *im, const Onnx__ValueInfoProto *vi, const qllc_tensor *t) {
  qllc_diag *diag = im->diag;
  const char *name = vi->name ? vi->name : "";
  const Onnx__TypeProto *tp = vi->type;
  if (!tp || tp->value_case != ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE || !tp->tensor_type)
    return qllc_fail(diag, QLLC_ERR_UNSUPPORTED, NULL, "bound graph input '%s' is not a tensor", name);
  const Onnx__TypeProto__Tensor *tt = tp->tensor_type;
  qllc_elem elem;
  size_t src;
  if (map_type(tt->elem_type, &elem, &src))
    return qllc_fail(diag, QLLC_ERR_UNSUPPORTED, NULL, "bound graph input '%s' has element type %s, which qllc does not support",
                     name, onnx_type_name(tt->elem_type));
  if ((int)elem != (int)t->elem)
    return qllc_fail(diag, QLLC_ERR_INVALID, NULL, "graph input '%s' is declared %s (%s) but is bound to a tensor of kind %s", name,
                     onnx_type_name(tt->elem_type), qllc_elem_name((qllc_elem_kind)elem), qllc_elem_name(t->elem));
  if (t->rank > QLLC_MAX_RANK)
    return qllc_fail(diag, QLLC_ERR_INVALID, NULL, "graph input '%s' is bound to a tensor of rank %u", name, t->rank);
  if (tt->shape) {
    int ok = tt->shape->n_dim == t->rank;
    for (size_t i = 0; ok && i < tt->shape->n_dim; i++) {
      const Onnx__TensorShapeProto__Dimension *d = tt->shape->dim[i];
      if (d->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE && d->dim_value != t->dims[i]) ok = 0;
    }
    if (!ok) {
      char decl[256] = "", got[256] = "";
      size_t n = 0;
      for (size_t i = 0; i < tt->shape->n_dim && n < sizeof decl - 24; i++) {
        const Onnx__TensorShapeProto__Dimension *d = tt->shape->dim[i];
        if (d->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE)
          n += (size_t)snprintf(decl + n, sizeof decl - n, "%s%lld", i ? "," : "", (long long)d->dim_value);
        else
          n += (size_t)snprintf(decl + n, sizeof decl - n, "%s?", i ? "," : "");
      }
      n = 0;
      for (uint32_t i = 0; i < t->rank && n < sizeof got - 24; i++)
        n += (size_t)snprintf(got + n, sizeof got - n, "%s%lld", i ? "," : "", (long long)t->dims[i]);
      return qllc_fail(diag, QLLC_ERR_INVALID, NULL, "graph input '%s' has shape [%s] but is bound to a tensor of shape [%s]",
                       name, decl, got);
    }
  }
  for (uint32_t i = 0; i < t->rank; i++)
    if (t->dims[i] < 0) return qllc_fail(diag, QLLC_ERR_INVALID, NULL, "graph input '%s': bound tensor has a negative dim", name);
  qllc_value *v = qllc_const_new(im->g, name, elem, (int)t->rank, t->dims, NULL);
  if (!v || !v->data) return qllc_fail(diag, QLLC_ERR_NOMEM, NULL, "out of memory binding graph input '%s'", name);
  size_t bytes = qllc_value_bytes(v);
  if (bytes && !t->data) return qllc_fail(diag, QLLC_ERR_INVALID, NULL, "graph input '%s' is bound to a tensor without data", name);
  if (bytes) memcpy(v->data, t->data, bytes);
  return QLLC_OK;
}

static const qllc_tensor *find_bound(const importer *im, const char *name) {
  for (int i = 0; i < im->n_bound; i++)
    if (im->bound[i].name && !strcmp(im->bound[i].name, name)) return &im->bound[i];
  return NULL;
}

/* ---- nodes ------------------------------------------------------------------------------------ */

static int is_q8(qllc_elem e) { return e == QLLC_ELEM_I8 || e == QLLC_ELEM_U8; }

/* Ops that only move 8-bit quantized data of a pre-quantized model (onnxruntime's QOperator format
 * puts MaxPool, Reshape, Transpose ... between QLinearConv nodes): their output is read with the
 * input's scale and zero point. */
static int moves_quantized(const qllc_node *n) {
  if (n->n_in < 1 || !n->in[0] || !is_q8(n->in[0]->elem) || !n->out[0] || n->out[0]->elem != n->in[0]->elem) return 0;
  switch (n->op) {
  case QLLC_OP_RESHAPE: case QLLC_OP_FLATTEN: case QLLC_OP_SQUEEZE: case QLLC_OP_UNSQUEEZE: case QLLC_OP_IDENTITY:
  case QLLC_OP_DROPOUT: case QLLC_OP_TRANSPOSE: case QLLC_OP_MAXPOOL: case QLLC_OP_PAD:
    return 1;
  default:
    return 0;
  }
}

/* Ops whose integer outputs are computed at run time on purpose (the quantized world of issue 6). */
static int integer_op(const qllc_node *n) {
  switch (n->op) {
  case QLLC_OP_QUANTIZE: case QLLC_OP_DEQUANTIZE: case QLLC_OP_QLINEAR_CONV: case QLLC_OP_QLINEAR_MATMUL:
  case QLLC_OP_MATMUL_INTEGER: case QLLC_OP_CONV_INTEGER: case QLLC_OP_DYNAMIC_QUANTIZE:
  case QLLC_OP_CUSTOM: /* typed by the model; the user's kernel computes what it declares */
    return 1;
  default:
    return moves_quantized(n);
  }
}

static const struct {
  int min_in, max_in, max_out;
} arity[QLLC_OP_COUNT] = {
#define OP(E, onnx, min_in, max_in, max_out) [QLLC_OP_##E] = {min_in, max_in, max_out},
#include "ops.def"
#undef OP
};

/* The declared type of value `name`: graph outputs first, then value_info. NULL when the model has none. */
static const Onnx__ValueInfoProto *declared_type(const importer *im, const char *name) {
  const Onnx__GraphProto *gp = im->gp;
  for (size_t i = 0; gp && i < gp->n_output; i++)
    if (gp->output[i]->name && !strcmp(gp->output[i]->name, name)) return gp->output[i];
  for (size_t i = 0; gp && i < gp->n_value_info; i++)
    if (gp->value_info[i]->name && !strcmp(gp->value_info[i]->name, name)) return gp->value_info[i];
  return NULL;
}

/* A node of a non-default domain (issue 7) becomes a CUSTOM node: qllc cannot infer its outputs, so
 * their element types and shapes are read from the model (value_info or the graph outputs). Whether a
 * user kernel implements it is decided at compile time, when the --kernels files are known. */
static qllc_status load_custom(importer *im, const Onnx__NodeProto *np, int index, const char *name,
                               const char *domain, const char *op_type) {
  qllc_graph *g = im->g;
  qllc_diag *diag = im->diag;
  int n_in = (int)np->n_input, n_out = (int)np->n_output;
  while (n_in > 0 && (!np->input[n_in - 1] || !np->input[n_in - 1][0])) n_in--;
  while (n_out > 0 && (!np->output[n_out - 1] || !np->output[n_out - 1][0])) n_out--;
  if (n_out < 1 || n_out > 8)
    return qllc_fail(diag, QLLC_ERR_UNSUPPORTED, name, "node '%s' (%s:%s): %d outputs (custom ops have 1 to 8)", name,
                     domain, op_type, n_out);
  qllc_node *n = qllc_node_new(g, QLLC_OP_CUSTOM, name, n_in, n_out);
  if (!n) return qllc_fail(diag, QLLC_ERR_NOMEM, name, "out of memory");
  n->onnx_index = index;
  n->op_type = qllc_arena_strdup(g->arena, op_type);
  n->domain = qllc_arena_strdup(g->arena, domain);
  for (int k = 0; k < n_in; k++) {
    const char *in = np->input[k];
    if (!in || !in[0]) continue;
    if (!(n->in[k] = qllc_graph_find_value(g, in)))
      return qllc_fail(diag, QLLC_ERR_INVALID, name,
                       "node '%s' (%s:%s): input '%s' is not a graph input, an initializer or the output of an earlier node",
                       name, domain, op_type, in);
  }
  for (size_t k = 0; k < np->n_attribute; k++) {
    qllc_status st = load_attr(im, n, np->attribute[k]);
    if (st) return st;
  }
  for (int k = 0; k < n_out; k++) {
    const char *out = np->output[k];
    if (!out || !out[0])
      return qllc_fail(diag, QLLC_ERR_UNSUPPORTED, name, "node '%s' (%s:%s): output %d is empty", name, domain, op_type, k);
    if (qllc_graph_find_value(g, out))
      return qllc_fail(diag, QLLC_ERR_INVALID, name, "node '%s' (%s:%s): output '%s' is defined twice", name, domain,
                       op_type, out);
    const Onnx__ValueInfoProto *vi = declared_type(im, out);
    const Onnx__TypeProto__Tensor *tt =
        vi && vi->type && vi->type->value_case == ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE ? vi->type->tensor_type : NULL;
    if (!tt || !tt->shape)
      return qllc_fail(diag, QLLC_ERR_UNSUPPORTED, name,
                       "node '%s' (custom op %s:%s): output '%s' has no type and shape in the model; qllc takes a "
                       "custom op's output shapes from value_info (add onnx.helper.make_tensor_value_info('%s', ...) "
                       "to graph.value_info)",
                       name, domain, op_type, out, out);
    qllc_elem e;
    size_t src;
    if (map_type(tt->elem_type, &e, &src) || tt->elem_type == ONNX__TENSOR_PROTO__DATA_TYPE__DOUBLE ||
        tt->elem_type == ONNX__TENSOR_PROTO__DATA_TYPE__BOOL)
      return qllc_fail(diag, QLLC_ERR_UNSUPPORTED, name, "node '%s' (custom op %s:%s): output '%s' has element type %s",
                       name, domain, op_type, out, onnx_type_name(tt->elem_type));
    if (tt->shape->n_dim > QLLC_MAX_RANK)
      return qllc_fail(diag, QLLC_ERR_UNSUPPORTED, name, "node '%s' (custom op %s:%s): output '%s' has rank %zu (at most %d)",
                       name, domain, op_type, out, tt->shape->n_dim, QLLC_MAX_RANK);
    int64_t dims[QLLC_MAX_RANK];
    for (size_t i = 0; i < tt->shape->n_dim; i++) {
      const Onnx__TensorShapeProto__Dimension *d = tt->shape->dim[i];
      if (d->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE && d->dim_value > 0) dims[i] = d->dim_value;
      else if (i == 0) dims[i] = 1; /* a symbolic batch dim, as for graph inputs */
      else
        return qllc_fail(diag, QLLC_ERR_UNSUPPORTED, name,
                         "node '%s' (custom op %s:%s): output '%s' has a dynamic dimension at axis %zu", name, domain,
                         op_type, out, i);
    }
    int64_t bytes;
    if (qllc_shape_bytes(e, (int)tt->shape->n_dim, dims, &bytes))
      return qllc_fail(diag, QLLC_ERR_UNSUPPORTED, name, "node '%s' (custom op %s:%s): output '%s' is larger than %lld bytes",
                       name, domain, op_type, out, (long long)QLLC_MAX_TENSOR_BYTES);
    n->out[k] = qllc_value_new(g, out, e, (int)tt->shape->n_dim, dims);
    if (!n->out[k]) return qllc_fail(diag, QLLC_ERR_NOMEM, name, "out of memory");
    n->out[k]->producer = n;
  }
  return QLLC_OK;
}

static qllc_status load_node(importer *im, const Onnx__NodeProto *np, int index) {
  qllc_graph *g = im->g;
  qllc_diag *diag = im->diag;
  const char *op_type = np->op_type ? np->op_type : "";
  const char *name = np->name && np->name[0] ? np->name : qllc_arena_printf(g->arena, "%s#%d", op_type, index);
  const char *domain = np->domain ? np->domain : "";
  int op = qllc_op_lookup(op_type);
  int default_domain = !domain[0] || !strcmp(domain, "ai.onnx");
  /* issue 15: onnxruntime's fused GELU, and FastGelu (its tanh approximation) without a bias input */
  int fast_gelu = !strcmp(domain, "com.microsoft") && !strcmp(op_type, "FastGelu") && np->n_input == 1;
  if (!strcmp(domain, "com.microsoft") && (!strcmp(op_type, "Gelu") || fast_gelu)) op = QLLC_OP_GELU, default_domain = 1;
  if (!default_domain) return load_custom(im, np, index, name, domain, op_type);
  if (op < 0 || (!strncmp(op_type, "qllc.", 5)))
    return qllc_fail(diag, QLLC_ERR_UNSUPPORTED, name, "node '%s': op '%s' (domain '%s') is not supported", name, op_type,
                     default_domain ? "ai.onnx" : domain);
  if (g->opset < 6) {
    /* before opset 6 only ops whose meaning has not changed since are taken (legacy attributes such as
     * consumed_inputs are ignored) */
    static const qllc_op stable[] = {QLLC_OP_CONV, QLLC_OP_MAXPOOL, QLLC_OP_AVGPOOL, QLLC_OP_GLOBAL_AVGPOOL,
                                     QLLC_OP_RELU, QLLC_OP_SIGMOID, QLLC_OP_TANH, QLLC_OP_IDENTITY,
                                     QLLC_OP_MATMUL, QLLC_OP_TRANSPOSE, QLLC_OP_FLATTEN, QLLC_OP_LEAKY_RELU,
                                     QLLC_OP_SOFTMAX};
    int ok = 0;
    for (size_t i = 0; i < sizeof stable / sizeof *stable; i++) ok |= stable[i] == (qllc_op)op;
    if (!ok)
      return qllc_fail(diag, QLLC_ERR_UNSUPPORTED, name,
                       "node '%s': op '%s' at opset %lld is not supported (qllc needs opset 6 or later; re-export the model)",
                       name, op_type, (long long)g->opset);
  }
  int n_in = (int)np->n_input, n_out = (int)np->n_output;
  while (n_in > 0 && (!np->input[n_in - 1] || !np->input[n_in - 1][0])) n_in--; /* trailing absent optionals */
  if (n_in < arity[op].min_in || (arity[op].max_in >= 0 && n_in > arity[op].max_in))
    return qllc_fail(diag, n_in < arity[op].min_in ? QLLC_ERR_INVALID : QLLC_ERR_UNSUPPORTED, name,
                     "node '%s' (%s): %d inputs (qllc handles %d to %d)", name, op_type, n_in, arity[op].min_in,
                     arity[op].max_in);
  while (n_out > arity[op].max_out && (!np->output[n_out - 1] || !np->output[n_out - 1][0])) n_out--;
  if (n_out < 1 || n_out > arity[op].max_out)
    return qllc_fail(diag, QLLC_ERR_UNSUPPORTED, name, "node '%s' (%s): %d outputs (qllc handles 1 to %d)", name, op_type,
                     n_out, arity[op].max_out);
  qllc_node *n = qllc_node_new(g, (qllc_op)op, name, n_in, n_out);
  if (!n) return qllc_fail(diag, QLLC_ERR_NOMEM, name, "out of memory");
  n->onnx_index = index;
  n->op_type = qllc_arena_strdup(g->arena, op_type);
  n->domain = qllc_arena_strdup(g->arena, domain);
  for (int k = 0; k < n_in; k++) {
    const char *in = np->input[k];
    if (!in || !in[0]) continue;
    n->in[k] = qllc_graph_find_value(g, in);
    if (!n->in[k])
      return qllc_fail(diag, QLLC_ERR_INVALID, name,
                       "node '%s' (%s): input '%s' is not a graph input, an initializer or the output of an earlier node",
                       name, op_type, in);
  }
  for (int k = 0; k < n_in; k++)
    if (!n->in[k] && (k < arity[op].min_in) && op != QLLC_OP_CONCAT)
      return qllc_fail(diag, QLLC_ERR_INVALID, name, "node '%s' (%s): required input %d is empty", name, op_type, k);
  for (size_t k = 0; k < np->n_attribute; k++) {
    qllc_status st = load_attr(im, n, np->attribute[k]);
    if (st) return st;
  }
  if (fast_gelu) qllc_node_set_attr_string(g, n, "approximate", "tanh");
  for (int k = 0; k < n_out; k++) {
    const char *out = np->output[k];
    if (!out || !out[0]) continue;
    if (qllc_graph_find_value(g, out))
      return qllc_fail(diag, QLLC_ERR_INVALID, name, "node '%s' (%s): output '%s' is defined twice", name, op_type, out);
    n->out[k] = qllc_value_new(g, out, QLLC_ELEM_F32, 0, NULL);
    if (!n->out[k]) return qllc_fail(diag, QLLC_ERR_NOMEM, name, "out of memory");
    n->out[k]->producer = n;
  }
  if (!n->out[0])
    return qllc_fail(diag, QLLC_ERR_UNSUPPORTED, name, "node '%s' (%s): output 0 is empty", name, op_type);
  qllc_status st = qllc_infer_node(g, n, diag);
  if (st) return st;
  int folded;
  if ((st = qllc_const_eval(g, n, &folded, diag))) return st;
  if (!folded && n->op == QLLC_OP_CAST && n->in[0]->elem == n->out[0]->elem)
    n->op = QLLC_OP_IDENTITY; /* e.g. float -> double, which qllc computes in float */
  if (!folded && moves_quantized(n)) qllc_value_copy_type(n->out[0], n->in[0]); /* same bytes, same parameters */
  return QLLC_OK;
}

/* Outputs qllc does not compute must be unused; then they are dropped so later stages see n_out = 1. */
static qllc_status check_extra_outputs(importer *im) {
  qllc_graph *g = im->g;
  for (int i = 0; i < g->n_nodes; i++) {
    qllc_node *n = g->nodes[i];
    if (n->dead || n->n_out <= 1 || n->op == QLLC_OP_DYNAMIC_QUANTIZE || n->op == QLLC_OP_CUSTOM ||
        n->op == QLLC_OP_SPLIT) /* issue 15: every output of Split is computed */
      continue;
    if (n->op == QLLC_OP_LAYER_NORM) { /* issue 15: Mean and InvStdDev are computed when used */
      int used = 0;
      for (int k = 1; k < n->n_out; k++) used |= n->out[k] && (n->out[k]->n_uses > 0 || n->out[k]->is_output);
      if (used) continue;
    }
    if (n->op == QLLC_OP_DROPOUT && n->out[1] && (n->out[1]->n_uses > 0 || n->out[1]->is_output)) {
      /* issue 15: in inference Dropout keeps every element, so its mask is a constant of ones (bool as u8) */
      qllc_value *mk = n->out[1];
      int64_t cnt = qllc_value_numel(mk);
      unsigned char *ones = qllc_arena_alloc(g->arena, (size_t)(cnt ? cnt : 1));
      if (!ones) return qllc_fail(im->diag, QLLC_ERR_NOMEM, n->name, "out of memory");
      memset(ones, 1, (size_t)cnt);
      mk->data = ones;
      mk->producer = NULL;
      n->out[1] = NULL;
    }
    if (n->op == QLLC_OP_MAXPOOL && n->out[1] && (n->out[1]->n_uses > 0 || n->out[1]->is_output)) continue; /* issue 15 */
    for (int k = 1; k < n->n_out; k++) {
      if (n->out[k] && n->out[k]->n_uses > 0) {
        const char *what = n->op == QLLC_OP_MAXPOOL ? "Indices output" : n->op == QLLC_OP_DROPOUT ? "mask output"
                                                                                                   : "training output";
        return qllc_fail(im->diag, QLLC_ERR_UNSUPPORTED, n->name, "node '%s' (%s): the %s '%s' is used; qllc supports inference only",
                         n->name, n->op_type, what, n->out[k]->name);
      }
    }
    n->n_out = 1;
  }
  return QLLC_OK;
}

static qllc_status check_folded(importer *im) {
  qllc_graph *g = im->g;
  for (int i = 0; i < g->n_nodes; i++) {
    qllc_node *n = g->nodes[i];
    if (n->dead) continue;
    switch (n->op) {
    case QLLC_OP_GATHER: /* issue 15: run-time data, constant indices (lowered as row copies) */
      if (n->in[0]->elem == QLLC_ELEM_F32 && n->in[1]->data) break;
      /* fall through */
    case QLLC_OP_SLICE: /* issue 15: run-time data, constant starts/ends/axes/steps (a strided copy) */
      if (n->op == QLLC_OP_SLICE && n->in[0]->elem == QLLC_ELEM_F32 && qllc_node_attr(n, "q_starts")) break;
      /* fall through */
    case QLLC_OP_CONSTANT: case QLLC_OP_SHAPE: case QLLC_OP_CAST:
    case QLLC_OP_CONSTANT_OF_SHAPE:
      return qllc_fail(im->diag, QLLC_ERR_UNSUPPORTED, n->name,
                       "node '%s' (%s) works on run-time data; qllc only evaluates %s at compile time, on constants", n->name,
                       n->op_type, n->op_type);
    default:
      break;
    }
    /* integer arithmetic left at run time means the model computes on integer tensors */
    if (n->out[0] && n->out[0]->elem != QLLC_ELEM_F32 && !integer_op(n))
      return qllc_fail(im->diag, QLLC_ERR_UNSUPPORTED, n->name,
                       "node '%s' (%s) computes %s values at run time; qllc handles float models", n->name, n->op_type,
                       qllc_elem_name((qllc_elem_kind)n->out[0]->elem));
  }
  return QLLC_OK;
}

static qllc_status import_model(importer *im, const Onnx__ModelProto *m) {
  qllc_graph *g = im->g;
  qllc_diag *diag = im->diag;
  qllc_status st;
  if (!m->graph) return qllc_fail(diag, QLLC_ERR_PARSE, NULL, "not a valid ONNX model (no graph)");
  int64_t opset = -1;
  for (size_t i = 0; i < m->n_opset_import; i++) {
    const Onnx__OperatorSetIdProto *o = m->opset_import[i];
    if (!o->domain || !o->domain[0] || !strcmp(o->domain, "ai.onnx")) opset = o->has_version ? o->version : 1;
  }
  int default_nodes = 0;
  for (size_t i = 0; m->graph && i < m->graph->n_node; i++) {
    const char *d = m->graph->node[i]->domain;
    if (!d || !d[0] || !strcmp(d, "ai.onnx")) default_nodes++;
  }
  if (opset < 0) {
    if (default_nodes)
      return qllc_fail(diag, QLLC_ERR_PARSE, NULL, "not a valid ONNX model (no opset for the default domain)");
    opset = 7; /* no default-domain node: the version does not matter */
  }
  if (opset < 1) return qllc_fail(diag, QLLC_ERR_PARSE, NULL, "not a valid ONNX model (opset %lld)", (long long)opset);
  g->opset = opset;
  const Onnx__GraphProto *gp = m->graph;
  g->graph_name = qllc_arena_strdup(g->arena, gp->name ? gp->name : "");
  if (gp->n_sparse_initializer)
    return qllc_fail(diag, QLLC_ERR_UNSUPPORTED, NULL, "sparse initializer '%s' is not supported",
                     gp->sparse_initializer[0]->values && gp->sparse_initializer[0]->values->name
                         ? gp->sparse_initializer[0]->values->name : "?");
  /* every binding names a graph input, once */
  for (int b = 0; b < im->n_bound; b++) {
    const char *bn = im->bound[b].name;
    if (!bn || !bn[0]) return qllc_fail(diag, QLLC_ERR_INVALID, NULL, "binding %d has no input name", b);
    size_t i = 0;
    while (i < gp->n_input && !(gp->input[i]->name && !strcmp(gp->input[i]->name, bn))) i++;
    if (i == gp->n_input) {
      char names[512] = "";
      size_t n = 0;
      for (size_t k = 0; k < gp->n_input && n < sizeof names - 64; k++)
        n += (size_t)snprintf(names + n, sizeof names - n, "%s'%s'", k ? ", " : "", gp->input[k]->name ? gp->input[k]->name : "");
      return qllc_fail(diag, QLLC_ERR_INVALID, NULL, "cannot bind '%s': the model has no graph input of that name (inputs: %s)",
                       bn, n ? names : "none");
    }
    for (int c = 0; c < b; c++)
      if (!strcmp(im->bound[c].name, bn)) return qllc_fail(diag, QLLC_ERR_INVALID, NULL, "graph input '%s' is bound twice", bn);
  }
  for (int k = 0; k < im->n_shapes; k++) { /* every input shape names a graph input that stays an input */
    const qllc_tensor *sh = &im->shapes[k];
    const char *sn = sh->name;
    if (!sn || !sn[0]) return qllc_fail(diag, QLLC_ERR_INVALID, NULL, "--input-shape %d has no input name", k + 1);
    size_t i = 0;
    while (i < gp->n_input && !(gp->input[i]->name && !strcmp(gp->input[i]->name, sn))) i++;
    int is_init = 0;
    for (size_t n = 0; n < gp->n_initializer && !is_init; n++)
      is_init = gp->initializer[n]->name && !strcmp(gp->initializer[n]->name, sn);
    if (i == gp->n_input || is_init) {
      char names[512] = "";
      size_t n = 0;
      for (size_t q = 0; q < gp->n_input && n < sizeof names - 64; q++)
        n += (size_t)snprintf(names + n, sizeof names - n, "%s'%s'", q ? ", " : "", gp->input[q]->name ? gp->input[q]->name : "");
      return qllc_fail(diag, QLLC_ERR_INVALID, NULL, "--input-shape %s: %s (inputs: %s)", sn,
                       is_init ? "that input has an initializer: it is a constant, not an input" : "the model has no graph input of that name",
                       n ? names : "none");
    }
    if (find_bound(im, sn))
      return qllc_fail(diag, QLLC_ERR_INVALID, NULL, "--input-shape %s: that input is bound to a constant (--const): its shape is the tensor's", sn);
    for (int c = 0; c < k; c++)
      if (!strcmp(im->shapes[c].name, sn)) return qllc_fail(diag, QLLC_ERR_INVALID, NULL, "--input-shape %s: given twice", sn);
    if (sh->rank < 1 || sh->rank > QLLC_MAX_RANK)
      return qllc_fail(diag, QLLC_ERR_INVALID, NULL, "--input-shape %s: %u dims (1 to %d)", sn, sh->rank, QLLC_MAX_RANK);
    for (uint32_t d = 0; d < sh->rank; d++)
      if (sh->dims[d] < 1)
        return qllc_fail(diag, QLLC_ERR_INVALID, NULL, "--input-shape %s: axis %u is %lld (sizes are >= 1)", sn, d,
                         (long long)sh->dims[d]);
  }
  for (size_t i = 0; i < gp->n_initializer; i++) {
    qllc_value *v;
    const char *name = gp->initializer[i]->name ? gp->initializer[i]->name : "";
    if (!name[0]) return qllc_fail(diag, QLLC_ERR_PARSE, NULL, "initializer %zu has no name", i);
    if (find_bound(im, name)) continue; /* a graph input with a default value: the binding replaces it */
    if (qllc_graph_find_value(g, name)) return qllc_fail(diag, QLLC_ERR_INVALID, NULL, "initializer '%s' is declared twice", name);
    if ((st = load_tensor(im, gp->initializer[i], name, 0, NULL, &v))) return st;
  }
  for (size_t i = 0; i < gp->n_input; i++) {
    const char *name = gp->input[i]->name ? gp->input[i]->name : "";
    const qllc_tensor *b = find_bound(im, name);
    if (b) {
      if (qllc_graph_find_value(g, name)) return qllc_fail(diag, QLLC_ERR_INVALID, NULL, "graph input '%s' is declared twice", name);
      if ((st = load_bound(im, gp->input[i], b))) return st;
      continue;
    }
    const qllc_value *seen = qllc_graph_find_value(g, name);
    if (seen && !seen->data) /* onnxruntime refuses this too: which of the two would a caller fill? */
      return qllc_fail(diag, QLLC_ERR_INVALID, NULL, "graph input '%s' is declared twice", name);
    if (seen) continue; /* an initializer: a constant, not an input */
    if ((st = load_input(im, gp->input[i]))) return st;
  }
  for (size_t i = 0; i < gp->n_node; i++)
    if ((st = load_node(im, gp->node[i], (int)i))) return st;
  for (size_t i = 0; i < gp->n_output; i++) {
    const char *name = gp->output[i]->name ? gp->output[i]->name : "";
    qllc_value *v = qllc_graph_find_value(g, name);
    if (!v) return qllc_fail(diag, QLLC_ERR_INVALID, NULL, "graph output '%s' is not produced by any node", name);
    const Onnx__TypeProto *tp = gp->output[i]->type; /* a declared element type must be the computed one */
    qllc_elem want;
    size_t wsize;
    if (tp && tp->value_case == ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE && tp->tensor_type &&
        tp->tensor_type->elem_type && !map_type(tp->tensor_type->elem_type, &want, &wsize) && want != v->elem)
      return qllc_fail(diag, QLLC_ERR_INVALID, v->producer ? v->producer->name : NULL,
                       "graph output '%s' is declared %s but its producer computes %s", name,
                       onnx_type_name(tp->tensor_type->elem_type), qllc_elem_name((qllc_elem_kind)v->elem));
    if (qllc_graph_add_output(g, v)) return qllc_fail(diag, QLLC_ERR_NOMEM, NULL, "out of memory");
  }
  if (g->n_outputs == 0) return qllc_fail(diag, QLLC_ERR_INVALID, NULL, "the model has no outputs");
  qllc_graph_recount_uses(g);
  if ((st = check_extra_outputs(im))) return st;
  if ((st = check_folded(im))) return st;
  qllc_graph_compact(g);
  return qllc_graph_verify(g, diag);
}

/* ---- the nesting-depth check before unpacking (docs/limits.md) ------------------------------------ */

/* protobuf-c's unpack recurses once per nested sub-message, so a few thousand graphs nested in
 * attributes (35 KB of file) overflow the stack. proto_depth walks the wire format itself, following
 * the ONNX schema's fields that can nest without bound (graphs, nodes, attributes, functions, training
 * info, value infos and types); the other messages (tensors, shapes, opsets) nest a fixed few levels.
 * Its own recursion stops one level past QLLC_MAX_PROTO_DEPTH. Malformed bytes end the walk quietly:
 * protobuf-c reports them. */
enum { PM_LEAF, PM_MODEL, PM_TRAIN, PM_GRAPH, PM_NODE, PM_FUNC, PM_ATTR, PM_VINFO, PM_TYPE, PM_TYPE_SEQ, PM_TYPE_MAP,
       PM_TYPE_OPT };

static int proto_child(int msg, uint64_t field) {
  switch (msg) {
  case PM_MODEL: return field == 7 ? PM_GRAPH : field == 20 ? PM_TRAIN : field == 25 ? PM_FUNC : PM_LEAF;
  case PM_TRAIN: return field == 1 || field == 2 ? PM_GRAPH : PM_LEAF;
  case PM_GRAPH: return field == 1 ? PM_NODE : field >= 11 && field <= 13 ? PM_VINFO : PM_LEAF;
  case PM_NODE: return field == 5 ? PM_ATTR : PM_LEAF;
  case PM_FUNC: return field == 7 ? PM_NODE : PM_LEAF;
  case PM_ATTR: return field == 6 || field == 11 ? PM_GRAPH : field == 14 || field == 15 ? PM_TYPE : PM_LEAF;
  case PM_VINFO: return field == 2 ? PM_TYPE : PM_LEAF;
  case PM_TYPE: return field == 4 ? PM_TYPE_SEQ : field == 5 ? PM_TYPE_MAP : field == 9 ? PM_TYPE_OPT : PM_LEAF;
  case PM_TYPE_SEQ:
  case PM_TYPE_OPT: return field == 1 ? PM_TYPE : PM_LEAF;
  case PM_TYPE_MAP: return field == 2 ? PM_TYPE : PM_LEAF;
  default: return PM_LEAF;
  }
}

static int read_varint(const uint8_t *p, size_t n, size_t *i, uint64_t *v) {
  *v = 0;
  for (int shift = 0; shift < 64 && *i < n; shift += 7) {
    uint8_t b = p[(*i)++];
    *v |= (uint64_t)(b & 0x7f) << shift;
    if (!(b & 0x80)) return 0;
  }
  return -1;
}

/* The deepest nesting of sub-messages in the message p[0..n) of kind msg at depth `depth` (the
 * ModelProto is at 0), stopping early once past QLLC_MAX_PROTO_DEPTH. */
static int proto_depth(const uint8_t *p, size_t n, int msg, int depth) {
  if (depth > QLLC_MAX_PROTO_DEPTH) return depth;
  int deepest = depth;
  size_t i = 0;
  while (i < n) {
    uint64_t tag, v;
    if (read_varint(p, n, &i, &tag)) break;
    switch (tag & 7) {
    case 0:
      if (read_varint(p, n, &i, &v)) return deepest;
      break;
    case 1:
      if (n - i < 8) return deepest;
      i += 8;
      break;
    case 5:
      if (n - i < 4) return deepest;
      i += 4;
      break;
    case 2: {
      if (read_varint(p, n, &i, &v) || v > n - i) return deepest;
      int child = proto_child(msg, tag >> 3);
      if (child != PM_LEAF) {
        int d = proto_depth(p + i, (size_t)v, child, depth + 1);
        if (d > deepest) deepest = d;
        if (deepest > QLLC_MAX_PROTO_DEPTH) return deepest;
      }
      i += (size_t)v;
      break;
    }
    default: return deepest; /* groups and invalid wire types: protobuf-c refuses them */
    }
  }
  return deepest;
}

/* The refine function of the model's read: bytes that start as no protobuf message does (/dev/zero) are
 * not read further than the first 64 KiB. */
static uint64_t model_head(const uint8_t *head, size_t n, void *ctx, uint64_t limit) {
  if (qllc_proto_head_check(head, n) == 0) return limit;
  *(int *)ctx = 1;
  return QLLC_READ_STOP;
}

qllc_status qllc_onnx_load(const char *path, qllc_graph **out, qllc_diag *diag) {
  return qllc_onnx_load_bound(path, NULL, 0, out, diag);
}

qllc_status qllc_onnx_load_bound(const char *path, const qllc_tensor *bound, int n_bound, qllc_graph **out,
                                 qllc_diag *diag) {
  return qllc_onnx_load_shaped(path, bound, n_bound, NULL, 0, NULL, 0, out, diag);
}

qllc_status qllc_onnx_load_shaped(const char *path, const qllc_tensor *bound, int n_bound, const qllc_tensor *shapes,
                                  int n_shapes, char *pinned, size_t pinned_size, qllc_graph **out, qllc_diag *diag) {
  *out = NULL;
  if (pinned && pinned_size) pinned[0] = 0;
  if (diag) diag->status = QLLC_OK, diag->message[0] = 0, diag->node[0] = 0, diag->file[0] = 0;
  qllc_status st;
  uint8_t *buf = NULL;
  size_t len = 0;
  int not_proto = 0;
  st = qllc_read_file_ex(path, "model", QLLC_MAX_MODEL_FILE_BYTES, model_head, &not_proto, &buf, &len, diag);
  if (st != QLLC_OK) return st;
  if (not_proto) {
    free(buf);
    st = qllc_fail(diag, QLLC_ERR_PARSE, NULL, "not a valid ONNX model (protobuf decode failed)");
    qllc_diag_set_file(diag, path);
    return st;
  }
  if (proto_depth(buf, len, PM_MODEL, 0) > QLLC_MAX_PROTO_DEPTH) {
    free(buf);
    st = qllc_fail(diag, QLLC_ERR_PARSE, NULL,
                   "%s: sub-messages (graphs in attributes of nodes in graphs, or types in types) are nested more "
                   "than %d levels deep (the limit for a model)",
                   path, QLLC_MAX_PROTO_DEPTH);
    qllc_diag_set_file(diag, path);
    return st;
  }
  Onnx__ModelProto *m = onnx__model_proto__unpack(NULL, len, buf);
  free(buf);
  if (!m) {
    st = qllc_fail(diag, QLLC_ERR_PARSE, NULL, "not a valid ONNX model (protobuf decode failed)");
    qllc_diag_set_file(diag, path);
    return st;
  }
  qllc_graph *g = qllc_graph_new(path);
  if (!g) {
    onnx__model_proto__free_unpacked(m, NULL);
    st = qllc_fail(diag, QLLC_ERR_NOMEM, NULL, "out of memory");
    qllc_diag_set_file(diag, path);
    return st;
  }
  importer im = {g, diag, path, m->graph, bound, n_bound > 0 ? n_bound : 0, shapes, n_shapes > 0 ? n_shapes : 0,
                 pinned_size ? pinned : NULL, pinned_size};
  st = import_model(&im, m);
  onnx__model_proto__free_unpacked(m, NULL);
  if (st) {
    qllc_graph_free(g);
    qllc_diag_set_file(diag, path);
    return st;
  }
  *out = g;
  return QLLC_OK;
}
