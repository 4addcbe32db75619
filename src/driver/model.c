/* src/driver/model.c: a loaded model (qllc_drv_model): the file read and optimized once, its bound
 * inputs kept, and the private graphs a compile, profiling or compare start from (a copy in memory, or
 * the file loaded again when the graph cannot be copied or every pass must be dumped).
 */
#define _POSIX_C_SOURCE 200809L
#include <stdlib.h>
#include <string.h>

#include "driver/driver_internal.h"

static void free_bound(qllc_tensor *b, int n) {
  for (int i = 0; b && i < n; i++) qllc_tensor_free(&b[i]);
  free(b);
}

/* Deep copies of the bindings (name and data). NULL on OOM (or when n is 0). */
static qllc_tensor *copy_bound(const qllc_tensor *b, int n) {
  if (n <= 0) return NULL;
  qllc_tensor *c = calloc((size_t)n, sizeof *c);
  if (!c) return NULL;
  for (int i = 0; i < n; i++) {
    c[i] = b[i];
    c[i].name = NULL, c[i].data = NULL;
    size_t bytes = qllc_elem_size(b[i].elem);
    for (uint32_t k = 0; k < b[i].rank && k < QLLC_MAX_RANK; k++) bytes *= b[i].dims[k] > 0 ? (size_t)b[i].dims[k] : 0;
    c[i].name = strdup(b[i].name ? b[i].name : "");
    c[i].data = malloc(bytes ? bytes : 1);
    if (!c[i].name || !c[i].data) {
      free_bound(c, i + 1);
      return NULL;
    }
    if (bytes && b[i].data) memcpy(c[i].data, b[i].data, bytes);
  }
  return c;
}

/* Copies of the input shapes: name, rank and dims (no data). NULL on OOM (or when n is 0). */
static qllc_tensor *copy_shapes(const qllc_tensor *sh, int n) {
  if (n <= 0) return NULL;
  qllc_tensor *c = calloc((size_t)n, sizeof *c);
  if (!c) return NULL;
  for (int i = 0; i < n; i++) {
    c[i] = sh[i];
    c[i].data = NULL;
    if (!(c[i].name = strdup(sh[i].name ? sh[i].name : ""))) {
      free_bound(c, i);
      return NULL;
    }
  }
  return c;
}

qllc_status qllc_drv_model_load(qllc_drv_model *m, const char *path, const qllc_load_options *lo, qllc_diag *diag) {
  memset(m, 0, sizeof *m);
  const qllc_tensor *bound = lo->bound;
  int n_bound = lo->n_bound;
  qllc_graph *g = NULL;
  char pinned[1024];
  qllc_status st = qllc_onnx_load_shaped(path, bound, n_bound, lo->shapes, lo->n_shapes, pinned, sizeof pinned, &g, diag);
  if (st == QLLC_OK) st = qllc_graph_optimize(g, NULL, NULL, diag);
  if (st == QLLC_OK && qllc_graph_has_qdq(g)) st = qllc_pass_qdq(g, diag); /* pre-quantized model */
  if (st != QLLC_OK) {
    if (g) qllc_graph_free(g);
    qllc_diag_set_file(diag, path);
    return st;
  }
  if (!(m->path = strdup(path)) || (n_bound > 0 && !(m->bound = copy_bound(bound, n_bound))) ||
      (lo->n_shapes > 0 && !(m->shapes = copy_shapes(lo->shapes, lo->n_shapes)))) {
    free(m->path);
    free_bound(m->bound, n_bound);
    qllc_graph_free(g);
    memset(m, 0, sizeof *m);
    qllc_fail(diag, QLLC_ERR_NOMEM, NULL, "out of memory");
    qllc_diag_set_file(diag, path);
    return QLLC_ERR_NOMEM;
  }
  m->n_bound = n_bound;
  m->n_shapes = lo->n_shapes;
  m->graph = g;
  if (pinned[0] && lo->note) { /* once per model, not on reloads */
    char text[1200];
    snprintf(text, sizeof text, "%s: symbolic input dimension%s taken as 1: %s (set with --input-shape NAME=DxDx...)",
             path, strchr(pinned, ',') ? "s" : "", pinned);
    lo->note(lo->note_ctx, text);
  }
  pthread_mutex_init(&m->lock, NULL);
  return QLLC_OK;
}

void qllc_drv_model_release(qllc_drv_model *m) {
  free(m->search_key);
  free(m->search_comment);
  qllc_prec_map_free(m->search_map);
  pthread_mutex_destroy(&m->lock);
  qllc_graph_free(m->graph);
  free_bound(m->bound, m->n_bound);
  free_bound(m->shapes, m->n_shapes);
  free(m->path);
  memset(m, 0, sizeof *m);
}

/* Loads the model file again and runs the float pipeline on it (dumping after a graph pass when asked):
 * a private graph equal to the model's, which the caller may change and must free. */
qllc_status qllc_drv_reload(qllc_drv_model *m, const char *dump_after, FILE *dump, qllc_graph **out, qllc_diag *diag) {
  qllc_graph *fresh = NULL;
  *out = NULL;
  qllc_status st = qllc_onnx_load_shaped(m->path, m->bound, m->n_bound, m->shapes, m->n_shapes, NULL, 0, &fresh, diag);
  if (st == QLLC_OK && dump_after && strcmp(dump_after, "import") == 0) {
    fprintf(dump, "# after import\n");
    qllc_graph_print(fresh, dump);
  }
  if (st == QLLC_OK) st = qllc_graph_optimize(fresh, dump_after, dump, diag);
  if (st == QLLC_OK && qllc_graph_has_qdq(fresh)) st = qllc_pass_qdq(fresh, diag); /* pre-quantized model */
  if (st != QLLC_OK) {
    if (fresh) qllc_graph_free(fresh);
    qllc_diag_set_file(diag, m->path);
    return st;
  }
  *out = fresh;
  return QLLC_OK;
}

/* A private copy of the model's optimized graph, which the caller may change and must free: copied in
 * memory (qllc_graph_copy), or, for a pre-quantized model whose records cannot be copied, loaded from
 * the file again. */
qllc_status qllc_drv_model_graph(qllc_drv_model *m, qllc_graph **out, qllc_diag *diag) {
  pthread_mutex_lock(&m->lock); /* a float compile may be lowering the model's graph (recounting uses) */
  qllc_status st = qllc_graph_copy(m->graph, out, NULL);
  pthread_mutex_unlock(&m->lock);
  if (st == QLLC_ERR_UNSUPPORTED) return qllc_drv_reload(m, NULL, NULL, out, diag);
  if (st != QLLC_OK) return qllc_fail(diag, st, NULL, "out of memory copying the model's graph");
  return QLLC_OK;
}

int qllc_drv_value_desc(const qllc_value *v, qllc_tensor *t) {
  memset(t, 0, sizeof *t);
  t->name = strdup(v->name);
  t->elem = (qllc_elem_kind)v->elem;
  t->rank = (uint32_t)v->rank;
  for (int d = 0; d < v->rank && d < QLLC_MAX_RANK; d++) t->dims[d] = v->dims[d];
  t->scale = v->elem == QLLC_ELEM_F32 ? 1.0f : v->scale;
  t->zero_point = v->elem == QLLC_ELEM_F32 ? 0 : v->zero_point;
  t->data = NULL;
  return t->name != NULL;
}

qllc_status qllc_drv_model_io(const qllc_drv_model *m, qllc_tensor **io, int *n_in, int *n_out, qllc_diag *diag) {
  const qllc_graph *g = m->graph;
  int n = g->n_inputs + g->n_outputs, ok = 1;
  *io = calloc((size_t)n + 1, sizeof **io);
  for (int i = 0; *io && ok && i < n; i++)
    ok = qllc_drv_value_desc(i < g->n_inputs ? g->inputs[i] : g->outputs[i - g->n_inputs], &(*io)[i]);
  if (!*io || !ok) {
    for (int i = 0; *io && i < n; i++) qllc_tensor_free(&(*io)[i]);
    free(*io);
    *io = NULL;
    return qllc_fail(diag, QLLC_ERR_NOMEM, NULL, "out of memory");
  }
  *n_in = g->n_inputs;
  *n_out = g->n_outputs;
  return QLLC_OK;
}
