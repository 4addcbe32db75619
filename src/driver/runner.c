/* src/driver/runner.c: the JIT (qllc_drv_jit): the graph compiled for this machine, the descriptions of
 * its inputs and outputs, and runs: inputs matched by name or position and checked, a pair of run
 * buffers taken from a free list (so concurrent runs never share bytes), the outputs copied out.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdlib.h>
#include <string.h>

#include "driver/driver_internal.h"

struct qllc_run_bufs {
  qllc_run_bufs *next;
  uint8_t *mut, *act;
};


static int describe_io(const qllc_io_desc *io, qllc_tensor *t) { return qllc_drv_value_desc(io->value, t); }

void qllc_drv_jit_release(qllc_drv_jit *j) {
  if (j->code) qllc_jit_code_free(j->code);
  if (j->prog) qllc_program_free(j->prog);
  if (j->own_graph) qllc_graph_free(j->own_graph);
  for (int i = 0; j->in && i < j->n_in; i++) free(j->in[i].name);
  for (int i = 0; j->out && i < j->n_out; i++) free(j->out[i].name);
  free(j->in);
  free(j->out);
  for (qllc_run_bufs *b = j->free_bufs, *next; b; b = next) {
    next = b->next;
    free(b->mut);
    free(b->act);
    free(b);
  }
  pthread_mutex_destroy(&j->lock);
  memset(j, 0, sizeof *j);
}

void qllc_drv_jit_idle_bufs(qllc_drv_jit *j, uint8_t **mut, uint8_t **act) {
  pthread_mutex_lock(&j->lock);
  *mut = j->free_bufs ? j->free_bufs->mut : NULL;
  *act = j->free_bufs ? j->free_bufs->act : NULL;
  pthread_mutex_unlock(&j->lock);
}

static qllc_run_bufs *new_run_bufs(qllc_drv_jit *j) {
  qllc_run_bufs *b = calloc(1, sizeof *b);
  if (!b) return NULL;
  b->mut = qllc_drv_aligned_buffer(j->prog->mutable_size);
  b->act = qllc_drv_aligned_buffer(j->prog->act_size);
  if (!b->mut || !b->act) {
    free(b->mut);
    free(b->act);
    free(b);
    return NULL;
  }
  return b;
}

static qllc_run_bufs *take_run_bufs(qllc_drv_jit *j) {
  pthread_mutex_lock(&j->lock);
  qllc_run_bufs *b = j->free_bufs;
  if (b) j->free_bufs = b->next;
  pthread_mutex_unlock(&j->lock);
  return b ? b : new_run_bufs(j);
}

static void give_run_bufs(qllc_drv_jit *j, qllc_run_bufs *b) {
  pthread_mutex_lock(&j->lock);
  b->next = j->free_bufs;
  j->free_bufs = b;
  pthread_mutex_unlock(&j->lock);
}


qllc_status qllc_drv_jit_codegen(const qllc_program *p, const qllc_options *opts, uint64_t stamp_offset,
                                 qllc_jit_code **code, qllc_entry_fn *entry, qllc_diag *diag) {
  qllc_codegen_opts cg;
  memset(&cg, 0, sizeof cg);
  qllc_status st = qllc_drv_codegen_opts(opts, 1, &cg, diag);
  cg.weights_in_object = 1; /* the JIT passes no constant_weights */
  if (!cg.entry_name) cg.entry_name = "qllc_jit_entry";
  cg.layer_stamps = stamp_offset > 0;
  cg.stamp_offset = stamp_offset;
  if (st == QLLC_OK) st = qllc_codegen_jit(p, &cg, code, entry, diag);
  return st;
}

qllc_status qllc_drv_jit_build(qllc_drv_model *m, const qllc_options *opts, qllc_drv_jit *j, qllc_diag *diag) {
  memset(j, 0, sizeof *j);
  if (opts->target && strcmp(opts->target, qllc_drv_host_target()) != 0) {
    qllc_fail(diag, QLLC_ERR_UNSUPPORTED, NULL, "the JIT runs on the host (%s), not on target '%s'",
              qllc_drv_host_target(), opts->target);
    qllc_diag_set_file(diag, m->path);
    return QLLC_ERR_UNSUPPORTED;
  }
  pthread_mutex_init(&j->lock, NULL);

  qllc_graph *g = NULL;
  int owned = 0;
  qllc_status st = qllc_drv_graph_for(m, opts, 1, &g, &owned, diag);
  if (st == QLLC_OK && owned) j->own_graph = g;
  if (st == QLLC_OK) st = qllc_drv_lower(m, g, opts, 1, &j->prog, NULL, diag);
  if (st == QLLC_OK) st = qllc_drv_jit_codegen(j->prog, opts, 0, &j->code, &j->entry, diag);
  st = qllc_drv_precision_map_finish(st, diag); /* --precision-map-out, once the code is built */
  if (st == QLLC_OK) {
    j->n_in = j->prog->n_inputs;
    j->n_out = j->prog->n_outputs;
    j->in = calloc(j->n_in ? j->n_in : 1, sizeof *j->in);
    j->out = calloc(j->n_out ? j->n_out : 1, sizeof *j->out);
    qllc_run_bufs *b = new_run_bufs(j);
    if (b) give_run_bufs(j, b);
    int ok = j->in && j->out && b;
    for (int i = 0; ok && i < j->n_in; i++) ok = describe_io(&j->prog->inputs[i], &j->in[i]);
    for (int i = 0; ok && i < j->n_out; i++) ok = describe_io(&j->prog->outputs[i], &j->out[i]);
    if (!ok) st = qllc_fail(diag, QLLC_ERR_NOMEM, NULL, "out of memory");
  }
  if (st != QLLC_OK) {
    if (diag && !diag->file[0]) qllc_diag_set_file(diag, m->path);
    qllc_drv_jit_release(j);
    return st;
  }
  return QLLC_OK;
}

/* "f32<1 x 3 x 8 x 8>" for a public tensor description. */
static const char *tensor_type_str(const qllc_tensor *t, char *buf, size_t size) {
  size_t n = (size_t)snprintf(buf, size, "%s<", qllc_elem_name(t->elem));
  for (uint32_t d = 0; d < t->rank && n < size; d++)
    n += (size_t)snprintf(buf + n, size - n, d ? " x %lld" : "%lld", (long long)t->dims[d]);
  if (n < size) snprintf(buf + n, size - n, ">");
  return buf;
}

static int same_type(const qllc_tensor *want, const qllc_tensor *got) {
  if (want->elem != got->elem || want->rank != got->rank) return 0;
  for (uint32_t d = 0; d < want->rank; d++)
    if (want->dims[d] != got->dims[d]) return 0;
  return 1;
}

static uint64_t tensor_bytes(const qllc_tensor *t) {
  uint64_t n = qllc_elem_size(t->elem);
  for (uint32_t d = 0; d < t->rank; d++) n *= (uint64_t)t->dims[d];
  return n;
}

qllc_status qllc_drv_jit_run(qllc_drv_jit *j, const qllc_tensor *inputs, int n_inputs, qllc_tensor *outputs,
                         qllc_diag *diag) {
  /* Match: a named tensor goes to the input of that name; an unnamed one to the input at its position. */
  const qllc_tensor *match[64];
  if (j->n_in > 64) return qllc_fail(diag, QLLC_ERR_UNSUPPORTED, NULL, "more than 64 model inputs");
  for (int i = 0; i < j->n_in; i++) match[i] = NULL;
  for (int k = 0; k < n_inputs; k++) {
    const qllc_tensor *t = &inputs[k];
    int at = -1;
    if (t->name) {
      for (int i = 0; i < j->n_in; i++)
        if (strcmp(j->in[i].name, t->name) == 0) at = i;
      if (at < 0) {
        char names[512] = "";
        for (int i = 0; i < j->n_in; i++) {
          if (strlen(names) + strlen(j->in[i].name) + 4 >= sizeof names) break;
          if (i) strcat(names, ", ");
          strcat(names, j->in[i].name);
        }
        return qllc_fail(diag, QLLC_ERR_INVALID, NULL, "the model has no input named '%s' (inputs: %s)", t->name,
                         names);
      }
    } else {
      if (k >= j->n_in)
        return qllc_fail(diag, QLLC_ERR_INVALID, NULL, "%d inputs given, the model has %d", n_inputs, j->n_in);
      at = k;
    }
    if (match[at]) return qllc_fail(diag, QLLC_ERR_INVALID, NULL, "input '%s' given twice", j->in[at].name);
    match[at] = t;
  }
  for (int i = 0; i < j->n_in; i++) {
    char want[160], got[160];
    if (!match[i]) return qllc_fail(diag, QLLC_ERR_INVALID, NULL, "missing input '%s'", j->in[i].name);
    if (!same_type(&j->in[i], match[i]))
      return qllc_fail(diag, QLLC_ERR_INVALID, NULL, "input '%s': expected %s, got %s", j->in[i].name,
                       tensor_type_str(&j->in[i], want, sizeof want), tensor_type_str(match[i], got, sizeof got));
    if (!match[i]->data) return qllc_fail(diag, QLLC_ERR_INVALID, NULL, "input '%s' has no data", j->in[i].name);
  }

  qllc_run_bufs *rb = take_run_bufs(j);
  if (!rb) return qllc_fail(diag, QLLC_ERR_NOMEM, NULL, "out of memory");
  for (int i = 0; i < j->n_in; i++) {
    const qllc_buffer *b = j->prog->inputs[i].buf;
    uint64_t n = tensor_bytes(&j->in[i]);
    memcpy(rb->mut + b->offset, match[i]->data, n < b->size ? n : b->size);
  }
  int rc = j->entry(NULL, rb->mut, rb->act);
  if (rc != 0) {
    give_run_bufs(j, rb);
    return qllc_fail(diag, QLLC_ERR_RUNTIME, NULL, "the compiled model returned error %d", rc);
  }

  for (int i = 0; i < j->n_out; i++) memset(&outputs[i], 0, sizeof outputs[i]);
  for (int i = 0; i < j->n_out; i++) {
    const qllc_buffer *b = j->prog->outputs[i].buf;
    qllc_tensor *o = &outputs[i];
    *o = j->out[i];
    uint64_t n = tensor_bytes(&j->out[i]);
    o->name = strdup(j->out[i].name);
    o->data = malloc(n ? n : 1);
    if (!o->name || !o->data) {
      for (int k = 0; k <= i; k++) qllc_tensor_free(&outputs[k]);
      give_run_bufs(j, rb);
      return qllc_fail(diag, QLLC_ERR_NOMEM, NULL, "out of memory");
    }
    memcpy(o->data, rb->mut + b->offset, n < b->size ? n : b->size);
  }
  give_run_bufs(j, rb);
  return QLLC_OK;
}
