/* src/qllc.c: the public API (include/qllc.h) on top of the modules.
 *
 * This file only glues: import + graph passes (src/ir), lowering (src/lower), code generation
 * (src/llvmgen). It owns the handles' lifetimes, the bundle's all-or-nothing file writing, and the JIT's
 * input checking and buffers. It never prints; errors go to the caller's qllc_diag.
 *
 * Lifetimes: a qllc_model holds the optimized float graph. A qllc_jit borrows the model's graph (its
 * program points into it), so the model is reference-counted: qllc_model_free on a model that still has
 * live JITs only marks it, and the last qllc_jit_free releases it.
 */
#define _POSIX_C_SOURCE 200809L
#include "qllc.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ir/ir.h"
#include "llvmgen/llvmgen.h"
#include "lower/lower.h"

struct qllc_model {
  char *path;
  qllc_graph *graph; /* after qllc_graph_optimize (options-independent float passes) */
  int refs;          /* live JITs borrowing `graph` */
  int freed;         /* qllc_model_free was called while refs > 0 */
};

struct qllc_jit {
  qllc_model *model;       /* referenced (see refs) */
  qllc_graph *own_graph;   /* a private graph (made for --dump-after), or NULL */
  qllc_program *prog;
  qllc_jit_code *code;
  qllc_entry_fn entry;
  int n_in, n_out;
  qllc_tensor *in, *out;   /* descriptions (data NULL); names owned */
  uint8_t *mut, *act;      /* QLLC_MEM_ALIGN-aligned, allocated once, reused by every run */
};

/* ---- small helpers ---------------------------------------------------------------------------- */

static char *xstrdup(const char *s) {
  size_t n = strlen(s) + 1;
  char *d = malloc(n);
  if (d) memcpy(d, s, n);
  return d;
}

static void *aligned_buffer(uint64_t size) {
  uint64_t n = (size + QLLC_MEM_ALIGN - 1) / QLLC_MEM_ALIGN * QLLC_MEM_ALIGN;
  if (n == 0) n = QLLC_MEM_ALIGN;
  void *p = aligned_alloc(QLLC_MEM_ALIGN, n);
  if (p) memset(p, 0, n);
  return p;
}

static const char *const graph_passes[] = {
    /* the order of qllc_graph_optimize (src/ir/pipeline.c); "import" is the graph as loaded */
    "import", "fold_constants", "fold_batchnorm", "gemm_to_fc", "fuse_activation", "eliminate_identity",
};
static const char *const program_passes[] = {"lower", "memory_plan"};

static int in_list(const char *s, const char *const *list, size_t n) {
  for (size_t i = 0; i < n; i++)
    if (strcmp(s, list[i]) == 0) return 1;
  return 0;
}

#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

static qllc_status check_dump_after(const char *pass, qllc_diag *diag) {
  if (!pass || in_list(pass, graph_passes, COUNT(graph_passes)) ||
      in_list(pass, program_passes, COUNT(program_passes)))
    return QLLC_OK;
  char list[512] = "";
  for (size_t i = 0; i < COUNT(graph_passes); i++) {
    strcat(list, graph_passes[i]);
    strcat(list, ", ");
  }
  strcat(list, "lower, memory_plan");
  return qllc_fail(diag, QLLC_ERR_INVALID, NULL, "unknown pass '%s' for --dump-after (passes: %s)", pass, list);
}

/* Quantization is issue 3: until src/quant lands, only float compiles. */
static qllc_status check_precision(const qllc_options *o, qllc_diag *diag) {
  if (o->precision != QLLC_PREC_FLOAT ||
      (o->weight_precision != QLLC_PREC_FLOAT && o->weight_precision != o->precision))
    return qllc_fail(diag, QLLC_ERR_UNSUPPORTED, NULL, "quantization is not implemented yet");
  return QLLC_OK;
}

static FILE *dump_stream(const qllc_options *o) { return o->dump_stream ? (FILE *)o->dump_stream : stderr; }

/* The graph a compile starts from. Without --dump-after it is the model's own (already optimized at
 * load); with it, the model file is loaded again and optimized with the dump so the user sees every
 * pass. *owned tells the caller to free the graph. This is also where the quantizer will go: it must
 * quantize a fresh (owned) graph so the model's float graph stays reusable for other options. */
static qllc_status graph_for(qllc_model *m, const qllc_options *o, qllc_graph **g, int *owned, qllc_diag *diag) {
  qllc_status st = check_precision(o, diag);
  if (st == QLLC_OK) st = check_dump_after(o->dump_after, diag);
  if (st != QLLC_OK) return st;
  *owned = 0;
  *g = m->graph;
  if (!o->dump_after || in_list(o->dump_after, program_passes, COUNT(program_passes))) return QLLC_OK;
  qllc_graph *fresh = NULL;
  st = qllc_onnx_load(m->path, &fresh, diag);
  if (st == QLLC_OK && strcmp(o->dump_after, "import") == 0) {
    fprintf(dump_stream(o), "# after import\n");
    qllc_graph_print(fresh, dump_stream(o));
  }
  if (st == QLLC_OK) st = qllc_graph_optimize(fresh, o->dump_after, dump_stream(o), diag);
  if (st != QLLC_OK) {
    if (fresh) qllc_graph_free(fresh);
    qllc_diag_set_file(diag, m->path);
    return st;
  }
  *g = fresh;
  *owned = 1;
  return QLLC_OK;
}

static qllc_status lower_graph(qllc_model *m, qllc_graph *g, const qllc_options *o, qllc_program **p,
                               qllc_diag *diag) {
  qllc_status st = qllc_lower(g, p, diag);
  if (st != QLLC_OK) {
    qllc_diag_set_file(diag, m->path);
    return st;
  }
  if (o->dump_after && in_list(o->dump_after, program_passes, COUNT(program_passes))) {
    fprintf(dump_stream(o), "# after %s\n", o->dump_after);
    qllc_program_print(*p, dump_stream(o));
  }
  return QLLC_OK;
}

/* ---- options and models ----------------------------------------------------------------------- */

void qllc_options_init(qllc_options *o) {
  memset(o, 0, sizeof *o);
  o->precision = QLLC_PREC_FLOAT;
  o->weight_precision = QLLC_PREC_FLOAT; /* FLOAT here means "same as precision" */
  o->schema = QLLC_SCHEMA_ASYMMETRIC;
  o->calibration = QLLC_CAL_MINMAX;
  o->target = NULL; /* x86_64 */
  o->cpu = NULL;
  o->features = NULL;
  o->reloc_pic = 1;
  o->weights_file = 0;
}

qllc_status qllc_model_load(const char *path, qllc_model **out, qllc_diag *diag) {
  *out = NULL;
  if (!path) return qllc_fail(diag, QLLC_ERR_INVALID, NULL, "no model path given");
  qllc_graph *g = NULL;
  qllc_status st = qllc_onnx_load(path, &g, diag);
  if (st == QLLC_OK) st = qllc_graph_optimize(g, NULL, NULL, diag);
  if (st != QLLC_OK) {
    if (g) qllc_graph_free(g);
    qllc_diag_set_file(diag, path);
    return st;
  }
  qllc_model *m = calloc(1, sizeof *m);
  if (!m || !(m->path = xstrdup(path))) {
    free(m);
    qllc_graph_free(g);
    qllc_fail(diag, QLLC_ERR_NOMEM, NULL, "out of memory");
    qllc_diag_set_file(diag, path);
    return QLLC_ERR_NOMEM;
  }
  m->graph = g;
  *out = m;
  return QLLC_OK;
}

static void model_release(qllc_model *m) {
  qllc_graph_free(m->graph);
  free(m->path);
  free(m);
}

void qllc_model_free(qllc_model *m) {
  if (!m) return;
  if (m->refs > 0) {
    m->freed = 1;
    return;
  }
  model_release(m);
}

qllc_status qllc_model_describe(qllc_model *m, const qllc_options *opts, void *stream, qllc_diag *diag) {
  FILE *f = stream ? (FILE *)stream : stdout;
  qllc_options dflt;
  if (!opts) {
    qllc_options_init(&dflt);
    opts = &dflt;
  }
  qllc_graph *g = NULL;
  int owned = 0;
  qllc_status st = graph_for(m, opts, &g, &owned, diag);
  if (st != QLLC_OK) {
    qllc_diag_set_file(diag, m->path);
    return st;
  }
  qllc_program *p = NULL;
  st = lower_graph(m, g, opts, &p, diag);
  if (st == QLLC_OK) {
    fprintf(f, "model: %s\n", m->path);
    fprintf(f, "\n== graph ==\n");
    qllc_graph_print(g, f);
    fprintf(f, "\n== precision ==\n");
    fprintf(f, "all nodes float (%d nodes)\n", g->n_nodes);
    fprintf(f, "\n== memory ==\n");
    fprintf(f, "constant:    %llu bytes\n", (unsigned long long)p->const_size);
    fprintf(f, "mutable:     %llu bytes (inputs and outputs)\n", (unsigned long long)p->mutable_size);
    fprintf(f, "activations: %llu bytes peak (planned), %llu bytes without reuse", (unsigned long long)p->act_size,
            (unsigned long long)p->act_sum);
    if (p->act_sum > 0) fprintf(f, " (%.1f%%)", 100.0 * (double)p->act_size / (double)p->act_sum);
    fprintf(f, "\n\n== program ==\n");
    qllc_program_print(p, f);
    qllc_program_free(p);
  }
  if (owned) qllc_graph_free(g);
  return st;
}

/* ---- bundles ---------------------------------------------------------------------------------- */

static int is_c_identifier(const char *s) {
  if (!s || !*s || (s[0] >= '0' && s[0] <= '9')) return 0;
  for (const char *c = s; *c; c++)
    if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') || *c == '_'))
      return 0;
  return 1;
}

enum { B_OBJ, B_HDR, B_WEIGHTS, B_COUNT };
static const char *const bundle_ext[B_COUNT] = {".o", ".h", ".weights.bin"};

qllc_status qllc_compile_bundle(qllc_model *m, const qllc_options *opts, const char *dir, const char *name,
                                qllc_diag *diag) {
  qllc_options dflt;
  if (!opts) {
    qllc_options_init(&dflt);
    opts = &dflt;
  }
  if (!dir || !*dir) return qllc_fail(diag, QLLC_ERR_INVALID, NULL, "no output directory given");
  if (!is_c_identifier(name))
    return qllc_fail(diag, QLLC_ERR_INVALID, NULL, "bundle name '%s' is not a C identifier", name ? name : "");

  /* Everything that can fail without touching the disk comes first. */
  qllc_graph *g = NULL;
  int owned = 0;
  qllc_program *p = NULL;
  qllc_status st = graph_for(m, opts, &g, &owned, diag);
  if (st == QLLC_OK) st = lower_graph(m, g, opts, &p, diag);
  qllc_codegen_opts cg;
  memset(&cg, 0, sizeof cg);
  if (st == QLLC_OK) {
    st = qllc_codegen_resolve(opts, 0, &cg, diag);
    cg.entry_name = name;
    cg.reloc_pic = opts->reloc_pic;
    cg.weights_in_object = !opts->weights_file;
  }
  if (st != QLLC_OK) goto done;

  /* The directory: created when missing (one level only). */
  int created = 0;
  struct stat sb;
  if (stat(dir, &sb) == 0) {
    if (!S_ISDIR(sb.st_mode)) {
      st = qllc_fail(diag, QLLC_ERR_IO, NULL, "output directory '%s' is not a directory", dir);
      qllc_diag_set_file(diag, dir);
      goto done;
    }
  } else if (mkdir(dir, 0777) == 0) {
    created = 1;
  } else {
    st = qllc_fail(diag, QLLC_ERR_IO, NULL, "cannot create output directory '%s': %s", dir, strerror(errno));
    qllc_diag_set_file(diag, dir);
    goto done;
  }

  /* Write every file under a hidden temporary name, then rename them all: a failure anywhere leaves
   * nothing new in DIR. */
  char tmp[B_COUNT][4096], fin[B_COUNT][4096];
  int written[B_COUNT] = {0}, renamed[B_COUNT] = {0};
  int want[B_COUNT] = {1, 1, opts->weights_file != 0};
  for (int i = 0; i < B_COUNT; i++) {
    int n1 = snprintf(tmp[i], sizeof tmp[i], "%s/.%s.tmp-%ld%s", dir, name, (long)getpid(), bundle_ext[i]);
    int n2 = snprintf(fin[i], sizeof fin[i], "%s/%s%s", dir, name, bundle_ext[i]);
    if (n1 >= (int)sizeof tmp[i] || n2 >= (int)sizeof fin[i]) {
      st = qllc_fail(diag, QLLC_ERR_IO, NULL, "output path too long");
      qllc_diag_set_file(diag, dir);
      goto cleanup;
    }
  }
  for (int i = 0; i < B_COUNT && st == QLLC_OK; i++) {
    if (!want[i]) continue;
    written[i] = 1; /* a writer may leave a partial file behind on failure */
    if (i == B_OBJ) st = qllc_codegen_object(p, &cg, tmp[i], diag);
    if (i == B_HDR) st = qllc_bundle_write_header(p, &cg, tmp[i], diag);
    if (i == B_WEIGHTS) st = qllc_bundle_write_weights(p, tmp[i], diag);
    if (st != QLLC_OK && diag && strncmp(diag->file, tmp[i], strlen(tmp[i])) == 0) {
      /* name the bundle file the user asked for, not our temporary name */
      diag->file[0] = '\0';
      qllc_diag_set_file(diag, fin[i]);
    }
  }
  for (int i = 0; i < B_COUNT && st == QLLC_OK; i++) {
    if (!want[i]) continue;
    if (rename(tmp[i], fin[i]) != 0) {
      st = qllc_fail(diag, QLLC_ERR_IO, NULL, "cannot write '%s': %s", fin[i], strerror(errno));
      qllc_diag_set_file(diag, fin[i]);
    } else {
      renamed[i] = 1;
    }
  }

cleanup:
  if (st != QLLC_OK) {
    for (int i = 0; i < B_COUNT; i++) {
      if (written[i] && !renamed[i]) unlink(tmp[i]);
      if (renamed[i]) unlink(fin[i]);
    }
    if (created) rmdir(dir);
  }

done:
  if (p) qllc_program_free(p);
  if (owned) qllc_graph_free(g);
  if (st != QLLC_OK && diag && !diag->file[0]) qllc_diag_set_file(diag, m->path);
  return st;
}

/* ---- JIT -------------------------------------------------------------------------------------- */

static int describe_io(const qllc_io_desc *io, qllc_tensor *t) {
  const qllc_value *v = io->value;
  memset(t, 0, sizeof *t);
  t->name = xstrdup(v->name);
  t->elem = (qllc_elem_kind)v->elem;
  t->rank = (uint32_t)v->rank;
  for (int d = 0; d < v->rank && d < QLLC_MAX_RANK; d++) t->dims[d] = v->dims[d];
  t->scale = v->elem == QLLC_ELEM_F32 ? 1.0f : v->scale;
  t->zero_point = v->elem == QLLC_ELEM_F32 ? 0 : v->zero_point;
  t->data = NULL;
  return t->name != NULL;
}

void qllc_jit_free(qllc_jit *j) {
  if (!j) return;
  if (j->code) qllc_jit_code_free(j->code);
  if (j->prog) qllc_program_free(j->prog);
  if (j->own_graph) qllc_graph_free(j->own_graph);
  for (int i = 0; j->in && i < j->n_in; i++) free(j->in[i].name);
  for (int i = 0; j->out && i < j->n_out; i++) free(j->out[i].name);
  free(j->in);
  free(j->out);
  free(j->mut);
  free(j->act);
  if (j->model && --j->model->refs == 0 && j->model->freed) model_release(j->model);
  free(j);
}

static const char *host_target(void) {
#if defined(__x86_64__)
  return "x86_64";
#elif defined(__aarch64__)
  return "aarch64";
#else
  return "";
#endif
}

qllc_status qllc_jit_compile(qllc_model *m, const qllc_options *opts, qllc_jit **out, qllc_diag *diag) {
  *out = NULL;
  qllc_options dflt;
  if (!opts) {
    qllc_options_init(&dflt);
    opts = &dflt;
  }
  if (opts->target && strcmp(opts->target, host_target()) != 0) {
    qllc_fail(diag, QLLC_ERR_UNSUPPORTED, NULL, "the JIT runs on the host (%s), not on target '%s'",
              host_target(), opts->target);
    qllc_diag_set_file(diag, m->path);
    return QLLC_ERR_UNSUPPORTED;
  }
  qllc_jit *j = calloc(1, sizeof *j);
  if (!j) return qllc_fail(diag, QLLC_ERR_NOMEM, NULL, "out of memory");
  j->model = m;
  m->refs++;

  qllc_graph *g = NULL;
  int owned = 0;
  qllc_status st = graph_for(m, opts, &g, &owned, diag);
  if (st == QLLC_OK && owned) j->own_graph = g;
  if (st == QLLC_OK) st = lower_graph(m, g, opts, &j->prog, diag);
  qllc_codegen_opts cg;
  memset(&cg, 0, sizeof cg);
  if (st == QLLC_OK) {
    st = qllc_codegen_resolve(opts, 1, &cg, diag);
    cg.weights_in_object = 1; /* the JIT passes no constant_weights */
    if (!cg.entry_name) cg.entry_name = "qllc_jit_entry";
  }
  if (st == QLLC_OK) st = qllc_codegen_jit(j->prog, &cg, &j->code, &j->entry, diag);
  if (st == QLLC_OK) {
    j->n_in = j->prog->n_inputs;
    j->n_out = j->prog->n_outputs;
    j->in = calloc(j->n_in ? j->n_in : 1, sizeof *j->in);
    j->out = calloc(j->n_out ? j->n_out : 1, sizeof *j->out);
    j->mut = aligned_buffer(j->prog->mutable_size);
    j->act = aligned_buffer(j->prog->act_size);
    int ok = j->in && j->out && j->mut && j->act;
    for (int i = 0; ok && i < j->n_in; i++) ok = describe_io(&j->prog->inputs[i], &j->in[i]);
    for (int i = 0; ok && i < j->n_out; i++) ok = describe_io(&j->prog->outputs[i], &j->out[i]);
    if (!ok) st = qllc_fail(diag, QLLC_ERR_NOMEM, NULL, "out of memory");
  }
  if (st != QLLC_OK) {
    if (diag && !diag->file[0]) qllc_diag_set_file(diag, m->path);
    qllc_jit_free(j);
    return st;
  }
  *out = j;
  return QLLC_OK;
}

int qllc_jit_num_inputs(const qllc_jit *j) { return j ? j->n_in : 0; }
int qllc_jit_num_outputs(const qllc_jit *j) { return j ? j->n_out : 0; }
const qllc_tensor *qllc_jit_input(const qllc_jit *j, int i) {
  return j && i >= 0 && i < j->n_in ? &j->in[i] : NULL;
}
const qllc_tensor *qllc_jit_output(const qllc_jit *j, int i) {
  return j && i >= 0 && i < j->n_out ? &j->out[i] : NULL;
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

qllc_status qllc_jit_run(qllc_jit *j, const qllc_tensor *inputs, int n_inputs, qllc_tensor *outputs,
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

  for (int i = 0; i < j->n_in; i++) {
    const qllc_buffer *b = j->prog->inputs[i].buf;
    uint64_t n = tensor_bytes(&j->in[i]);
    memcpy(j->mut + b->offset, match[i]->data, n < b->size ? n : b->size);
  }
  int rc = j->entry(NULL, j->mut, j->act);
  if (rc != 0) return qllc_fail(diag, QLLC_ERR_RUNTIME, NULL, "the compiled model returned error %d", rc);

  for (int i = 0; i < j->n_out; i++) memset(&outputs[i], 0, sizeof outputs[i]);
  for (int i = 0; i < j->n_out; i++) {
    const qllc_buffer *b = j->prog->outputs[i].buf;
    qllc_tensor *o = &outputs[i];
    *o = j->out[i];
    uint64_t n = tensor_bytes(&j->out[i]);
    o->name = xstrdup(j->out[i].name);
    o->data = malloc(n ? n : 1);
    if (!o->name || !o->data) {
      for (int k = 0; k <= i; k++) qllc_tensor_free(&outputs[k]);
      return qllc_fail(diag, QLLC_ERR_NOMEM, NULL, "out of memory");
    }
    memcpy(o->data, j->mut + b->offset, n < b->size ? n : b->size);
  }
  return QLLC_OK;
}
