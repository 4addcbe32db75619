/* src/ir/graph.c: graph, values, nodes and attributes.
 *
 * Invariants kept here:
 * - every value has a unique name; a private hash map (name -> value) makes lookups O(1). The map is
 *   rebuilt by qllc_graph_compact, the only call that removes values;
 * - g->nodes is in topological order; qllc_node_new appends and qllc_graph_insert_before moves a node;
 * - the growable arrays (values, nodes, inputs, outputs) are malloc'd and freed by qllc_graph_free;
 *   everything else (values, nodes, attributes, names, payloads) lives in the graph's arena.
 *
 * n_uses counts input slots of live nodes that read the value, plus one when it is a graph output.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ir/ir.h"

/* ---- op table --------------------------------------------------------------------------------- */

static const char *const op_names[QLLC_OP_COUNT] = {
#define OP(E, onnx, min_in, max_in, max_out) [QLLC_OP_##E] = onnx,
#include "ops.def"
#undef OP
};

const char *qllc_op_name(qllc_op op) {
  if ((int)op < 0 || op >= QLLC_OP_COUNT) return "?";
  return op_names[op];
}

int qllc_op_lookup(const char *onnx_op_type) {
  if (!onnx_op_type) return -1;
  for (int i = 0; i < QLLC_OP_COUNT; i++)
    if (strcmp(op_names[i], onnx_op_type) == 0) return i;
  return -1;
}

/* ---- graph ------------------------------------------------------------------------------------ */

typedef struct graph_impl {
  qllc_graph g;
  qllc_value **map; /* open addressing on name; NULL = empty */
  size_t map_cap;   /* power of two */
  size_t map_n;
  int next_anon;    /* counter for made-up names */
} graph_impl;

static graph_impl *impl(const qllc_graph *g) { return (graph_impl *)g; }

static uint64_t hash_str(const char *s) {
  uint64_t h = 1469598103934665603ull;
  for (; *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211ull;
  return h;
}

static void map_put_raw(graph_impl *gi, qllc_value *v) {
  size_t mask = gi->map_cap - 1, i = hash_str(v->name) & mask;
  while (gi->map[i]) i = (i + 1) & mask;
  gi->map[i] = v;
  gi->map_n++;
}

static int map_rebuild(graph_impl *gi, size_t cap) {
  qllc_value **m = calloc(cap, sizeof *m);
  if (!m) return -1;
  free(gi->map);
  gi->map = m;
  gi->map_cap = cap;
  gi->map_n = 0;
  for (int i = 0; i < gi->g.n_values; i++) map_put_raw(gi, gi->g.values[i]);
  return 0;
}

qllc_graph *qllc_graph_new(const char *path) {
  graph_impl *gi = calloc(1, sizeof *gi);
  if (!gi) return NULL;
  gi->g.arena = qllc_arena_new();
  if (!gi->g.arena || map_rebuild(gi, 256)) {
    qllc_arena_free(gi->g.arena);
    free(gi);
    return NULL;
  }
  gi->g.path = qllc_arena_strdup(gi->g.arena, path ? path : "");
  gi->g.graph_name = "";
  gi->g.opset = 13;
  return &gi->g;
}

void qllc_graph_free(qllc_graph *g) {
  if (!g) return;
  graph_impl *gi = impl(g);
  free(gi->map);
  free(g->values);
  free(g->nodes);
  free(g->inputs);
  free(g->outputs);
  qllc_arena_free(g->arena);
  free(gi);
}

static int grow(void **arr, int *cap, int need, size_t elt) {
  if (need <= *cap) return 0;
  int c = *cap ? *cap * 2 : 16;
  while (c < need) c *= 2;
  void *p = realloc(*arr, (size_t)c * elt);
  if (!p) return -1;
  *arr = p;
  *cap = c;
  return 0;
}

qllc_value *qllc_graph_find_value(qllc_graph *g, const char *name) {
  graph_impl *gi = impl(g);
  if (!name) return NULL;
  size_t mask = gi->map_cap - 1, i = hash_str(name) & mask;
  while (gi->map[i]) {
    if (strcmp(gi->map[i]->name, name) == 0) return gi->map[i];
    i = (i + 1) & mask;
  }
  return NULL;
}

/* ---- values ----------------------------------------------------------------------------------- */

qllc_value *qllc_value_new(qllc_graph *g, const char *name, qllc_elem elem, int rank, const int64_t *dims) {
  graph_impl *gi = impl(g);
  int64_t bytes;
  if (rank < 0 || rank > QLLC_MAX_RANK) return NULL;
  if (dims && qllc_shape_bytes(elem, rank, dims, &bytes)) return NULL;
  if ((size_t)(g->n_values + 1) * 2 > gi->map_cap && map_rebuild(gi, gi->map_cap * 2)) return NULL;
  if (grow((void **)&g->values, &g->cap_values, g->n_values + 1, sizeof *g->values)) return NULL;
  qllc_value *v = qllc_arena_alloc(g->arena, sizeof *v);
  if (!v) return NULL;
  const char *nm;
  if (name && name[0] && !qllc_graph_find_value(g, name)) {
    nm = qllc_arena_strdup(g->arena, name);
  } else {
    const char *base = name && name[0] ? name : "v";
    do nm = qllc_arena_printf(g->arena, "%s.%d", base, gi->next_anon++);
    while (nm && qllc_graph_find_value(g, nm));
  }
  if (!nm) return NULL;
  v->id = g->n_values;
  v->name = nm;
  v->elem = elem;
  v->rank = rank;
  for (int i = 0; i < rank; i++) v->dims[i] = dims ? dims[i] : 1;
  v->scale = 1.0f;
  v->q_axis = -1;
  g->values[g->n_values++] = v;
  map_put_raw(gi, v);
  return v;
}

qllc_value *qllc_const_new(qllc_graph *g, const char *name, qllc_elem elem, int rank, const int64_t *dims,
                           const void *data) {
  qllc_value *v = qllc_value_new(g, name, elem, rank, dims);
  if (!v) return NULL;
  size_t bytes = qllc_value_bytes(v);
  v->data = data ? qllc_arena_memdup(g->arena, data, bytes) : qllc_arena_alloc(g->arena, bytes);
  if (!v->data) return NULL;
  if (qllc_add_size(g->const_bytes, (int64_t)bytes, &g->const_bytes)) g->const_bytes = INT64_MAX;
  return v;
}

int qllc_mul_size(int64_t a, int64_t b, int64_t *out) {
  int64_t r;
  if (a < 0 || b < 0 || __builtin_mul_overflow(a, b, &r)) return -1;
  *out = r;
  return 0;
}

int qllc_add_size(int64_t a, int64_t b, int64_t *out) {
  int64_t r;
  if (a < 0 || b < 0 || __builtin_add_overflow(a, b, &r)) return -1;
  *out = r;
  return 0;
}

/* numel of dims[0..rank) through the checked product; -1 on a negative dim or overflow. */
static int shape_numel(int rank, const int64_t *dims, int64_t *numel) {
  int64_t n = 1;
  for (int i = 0; i < rank; i++)
    if (qllc_mul_size(n, dims[i], &n)) return -1;
  *numel = n;
  return 0;
}

int qllc_shape_bytes(qllc_elem elem, int rank, const int64_t *dims, int64_t *bytes) {
  int64_t n, b;
  if (rank < 0 || rank > QLLC_MAX_RANK || shape_numel(rank, dims, &n) ||
      qllc_mul_size(n, (int64_t)qllc_elem_size((qllc_elem_kind)elem), &b) || b > QLLC_MAX_TENSOR_BYTES)
    return -1;
  *bytes = b;
  return 0;
}

int64_t qllc_value_numel(const qllc_value *v) {
  int64_t n;
  return shape_numel(v->rank, v->dims, &n) ? INT64_MAX : n;
}

size_t qllc_value_bytes(const qllc_value *v) {
  int64_t b;
  if (shape_numel(v->rank, v->dims, &b) || qllc_mul_size(b, (int64_t)qllc_elem_size((qllc_elem_kind)v->elem), &b))
    return SIZE_MAX;
  return (size_t)b;
}

int qllc_value_is_const(const qllc_value *v) { return v && v->data != NULL; }

void qllc_value_copy_type(qllc_value *dst, const qllc_value *src) {
  dst->elem = src->elem;
  dst->rank = src->rank;
  memcpy(dst->dims, src->dims, sizeof dst->dims);
  dst->scale = src->scale;
  dst->zero_point = src->zero_point;
  dst->q_axis = src->q_axis;
  dst->q_count = src->q_count;
  dst->q_scales = src->q_scales;
  dst->q_zero_points = src->q_zero_points;
}

/* ---- nodes ------------------------------------------------------------------------------------ */

qllc_node *qllc_node_new(qllc_graph *g, qllc_op op, const char *name, int n_in, int n_out) {
  if (grow((void **)&g->nodes, &g->cap_nodes, g->n_nodes + 1, sizeof *g->nodes)) return NULL;
  qllc_node *n = qllc_arena_alloc(g->arena, sizeof *n);
  if (!n) return NULL;
  n->op = op;
  n->op_type = qllc_op_name(op);
  n->domain = "";
  n->onnx_index = -1;
  n->name = name ? qllc_arena_strdup(g->arena, name) : qllc_arena_printf(g->arena, "%s#%d", n->op_type, g->n_nodes);
  n->n_in = n_in;
  n->n_out = n_out;
  n->in = qllc_arena_alloc(g->arena, sizeof *n->in * (size_t)(n_in > 0 ? n_in : 1));
  n->out = qllc_arena_alloc(g->arena, sizeof *n->out * (size_t)(n_out > 0 ? n_out : 1));
  if (!n->name || !n->in || !n->out) return NULL;
  g->nodes[g->n_nodes++] = n;
  return n;
}

void qllc_graph_insert_before(qllc_graph *g, qllc_node *n, const qllc_node *before) {
  int from = -1;
  for (int i = 0; i < g->n_nodes; i++)
    if (g->nodes[i] == n) { from = i; break; }
  if (from < 0) return;
  memmove(g->nodes + from, g->nodes + from + 1, sizeof *g->nodes * (size_t)(g->n_nodes - from - 1));
  int to = g->n_nodes - 1; /* end, when `before` is NULL or not found */
  for (int i = 0; i < g->n_nodes - 1; i++)
    if (g->nodes[i] == before) { to = i; break; }
  memmove(g->nodes + to + 1, g->nodes + to, sizeof *g->nodes * (size_t)(g->n_nodes - 1 - to));
  g->nodes[to] = n;
}

void qllc_graph_replace_uses(qllc_graph *g, qllc_value *from, qllc_value *to) {
  if (from == to) return;
  for (int i = 0; i < g->n_nodes; i++) {
    qllc_node *n = g->nodes[i];
    /* the node that produces `to` keeps reading `from` (the usual "insert t after a, then route a's
     * users through t"); replacing there would make a cycle */
    int makes_to = 0;
    for (int k = 0; k < n->n_out; k++) makes_to |= n->out[k] == to;
    if (makes_to) continue;
    for (int k = 0; k < n->n_in; k++)
      if (n->in[k] == from) {
        n->in[k] = to;
        from->n_uses--;
        to->n_uses++;
      }
  }
  for (int i = 0; i < g->n_outputs; i++)
    if (g->outputs[i] == from) {
      g->outputs[i] = to;
      from->is_output = 0;
      to->is_output = 1;
    }
}

void qllc_graph_recount_uses(qllc_graph *g) {
  for (int i = 0; i < g->n_values; i++) {
    g->values[i]->n_uses = 0;
    g->values[i]->is_output = 0;
    g->values[i]->producer = NULL;
  }
  for (int i = 0; i < g->n_nodes; i++) {
    qllc_node *n = g->nodes[i];
    if (n->dead) continue;
    for (int k = 0; k < n->n_in; k++)
      if (n->in[k]) n->in[k]->n_uses++;
    for (int k = 0; k < n->n_out; k++)
      if (n->out[k]) n->out[k]->producer = n;
  }
  for (int i = 0; i < g->n_outputs; i++) {
    g->outputs[i]->n_uses++;
    g->outputs[i]->is_output = 1;
  }
}

void qllc_graph_compact(qllc_graph *g) {
  int k = 0;
  for (int i = 0; i < g->n_nodes; i++)
    if (!g->nodes[i]->dead) g->nodes[k++] = g->nodes[i];
  g->n_nodes = k;
  qllc_graph_recount_uses(g);
  k = 0;
  for (int i = 0; i < g->n_values; i++) {
    qllc_value *v = g->values[i];
    if (v->n_uses == 0 && !v->producer && !v->is_input && !v->is_output) continue;
    v->id = k;
    g->values[k++] = v;
  }
  g->n_values = k;
  graph_impl *gi = impl(g);
  map_rebuild(gi, gi->map_cap); /* same capacity: cannot grow, so cannot fail for lack of room */
}

int qllc_value_users(const qllc_graph *g, const qllc_value *v, qllc_node **users, int max) {
  int count = 0;
  for (int i = 0; i < g->n_nodes; i++) {
    qllc_node *n = g->nodes[i];
    if (n->dead) continue;
    for (int k = 0; k < n->n_in; k++)
      if (n->in[k] == v) {
        if (users && count < max) users[count] = n;
        count++;
        break;
      }
  }
  return count;
}

/* qllc_graph_add_input / _add_output: append to the io lists and set the flags. */
int qllc_graph_add_input(qllc_graph *g, qllc_value *v) {
  int cap = g->n_inputs;
  qllc_value **p = realloc(g->inputs, sizeof *p * (size_t)(cap + 1));
  if (!p) return -1;
  g->inputs = p;
  g->inputs[g->n_inputs++] = v;
  v->is_input = 1;
  return 0;
}

int qllc_graph_add_output(qllc_graph *g, qllc_value *v) {
  int cap = g->n_outputs;
  qllc_value **p = realloc(g->outputs, sizeof *p * (size_t)(cap + 1));
  if (!p) return -1;
  g->outputs = p;
  g->outputs[g->n_outputs++] = v;
  v->is_output = 1;
  v->n_uses++;
  return 0;
}

/* ---- attributes ------------------------------------------------------------------------------- */

const qllc_attr *qllc_node_attr(const qllc_node *n, const char *name) {
  for (int i = 0; i < n->n_attr; i++)
    if (strcmp(n->attrs[i].name, name) == 0) return &n->attrs[i];
  return NULL;
}

void qllc_node_remove_attr(qllc_node *n, const char *name) {
  for (int i = 0; i < n->n_attr; i++)
    if (strcmp(n->attrs[i].name, name) == 0) {
      memmove(n->attrs + i, n->attrs + i + 1, sizeof *n->attrs * (size_t)(n->n_attr - i - 1));
      n->n_attr--;
      return;
    }
}

int64_t qllc_attr_int(const qllc_node *n, const char *name, int64_t dflt) {
  const qllc_attr *a = qllc_node_attr(n, name);
  if (!a) return dflt;
  if (a->kind == QLLC_ATTR_INT) return a->i;
  if (a->kind == QLLC_ATTR_FLOAT) return (int64_t)a->f;
  return dflt;
}

float qllc_attr_float(const qllc_node *n, const char *name, float dflt) {
  const qllc_attr *a = qllc_node_attr(n, name);
  if (!a) return dflt;
  if (a->kind == QLLC_ATTR_FLOAT) return a->f;
  if (a->kind == QLLC_ATTR_INT) return (float)a->i;
  return dflt;
}

const char *qllc_attr_string(const qllc_node *n, const char *name, const char *dflt) {
  const qllc_attr *a = qllc_node_attr(n, name);
  return a && a->kind == QLLC_ATTR_STRING ? a->s : dflt;
}

int qllc_attr_ints(const qllc_node *n, const char *name, const int64_t **out) {
  const qllc_attr *a = qllc_node_attr(n, name);
  if (!a || a->kind != QLLC_ATTR_INTS) {
    *out = NULL;
    return 0;
  }
  *out = a->ints;
  return a->n;
}

/* Returns the attribute slot called `name`, appending a fresh one when absent. */
qllc_attr *qllc_node_attr_slot(qllc_graph *g, qllc_node *n, const char *name) {
  for (int i = 0; i < n->n_attr; i++)
    if (strcmp(n->attrs[i].name, name) == 0) {
      qllc_attr *a = &n->attrs[i];
      const char *nm = a->name;
      memset(a, 0, sizeof *a);
      a->name = nm;
      return a;
    }
  qllc_attr *attrs = qllc_arena_alloc(g->arena, sizeof *attrs * (size_t)(n->n_attr + 1));
  if (!attrs) return NULL;
  if (n->n_attr) memcpy(attrs, n->attrs, sizeof *attrs * (size_t)n->n_attr);
  n->attrs = attrs;
  qllc_attr *a = &attrs[n->n_attr++];
  a->name = qllc_arena_strdup(g->arena, name);
  return a;
}

qllc_attr *qllc_node_set_attr_int(qllc_graph *g, qllc_node *n, const char *name, int64_t v) {
  qllc_attr *a = qllc_node_attr_slot(g, n, name);
  if (!a) return NULL;
  a->kind = QLLC_ATTR_INT;
  a->i = v;
  return a;
}

qllc_attr *qllc_node_set_attr_ints(qllc_graph *g, qllc_node *n, const char *name, int count, const int64_t *v) {
  qllc_attr *a = qllc_node_attr_slot(g, n, name);
  if (!a) return NULL;
  a->kind = QLLC_ATTR_INTS;
  a->n = count;
  a->ints = qllc_arena_memdup(g->arena, v, sizeof *v * (size_t)count);
  return a;
}

qllc_attr *qllc_node_set_attr_floats(qllc_graph *g, qllc_node *n, const char *name, int count, const float *v) {
  qllc_attr *a = qllc_node_attr_slot(g, n, name);
  if (!a) return NULL;
  a->kind = QLLC_ATTR_FLOATS;
  a->n = count;
  a->floats = qllc_arena_memdup(g->arena, v, sizeof *v * (size_t)count);
  return a;
}

qllc_attr *qllc_node_set_attr_string(qllc_graph *g, qllc_node *n, const char *name, const char *s) {
  qllc_attr *a = qllc_node_attr_slot(g, n, name);
  if (!a) return NULL;
  a->kind = QLLC_ATTR_STRING;
  a->s = qllc_arena_strdup(g->arena, s);
  return a;
}

qllc_attr *qllc_node_set_attr_float(qllc_graph *g, qllc_node *n, const char *name, float v) {
  qllc_attr *a = qllc_node_attr_slot(g, n, name);
  if (!a) return NULL;
  a->kind = QLLC_ATTR_FLOAT;
  a->f = v;
  return a;
}

/* See ir.h. n_uses must be current (qllc_graph_recount_uses). */
qllc_value *qllc_const_rewrite(qllc_graph *g, qllc_value *old, const char *name, int rank, const int64_t *dims) {
  if (old && old->n_uses == 1 && !old->is_output && !old->is_input) {
    qllc_value tmp = *old;
    tmp.rank = rank;
    for (int i = 0; i < rank; i++) tmp.dims[i] = dims[i];
    void *data = qllc_arena_alloc(g->arena, qllc_value_bytes(&tmp) + 1);
    if (!data) return NULL;
    old->rank = rank;
    for (int i = 0; i < rank; i++) old->dims[i] = dims[i];
    old->data = data;
    return old;
  }
  return qllc_const_new(g, old ? old->name : name, QLLC_ELEM_F32, rank, dims, NULL);
}
