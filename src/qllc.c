/* src/qllc.c: the public API (include/qllc.h), a facade over the driver (src/driver/driver.h).
 *
 * It holds handles, ownership and argument checks, nothing else: every function checks its arguments,
 * fills in default options, and calls the driver, which runs the pipeline (load -> graph passes ->
 * quantize -> lower -> code generation) and everything that compiles and runs a graph to decide
 * something. It never prints; errors go to the caller's qllc_diag.
 *
 * Lifetimes: a qllc_model holds the optimized float graph. A qllc_jit borrows the model's graph (its
 * program points into it), so the model is reference-counted: qllc_model_free on a model that still has
 * live JITs only marks it, and the last qllc_jit_free releases it.
 */
#include "qllc.h"

#include <stdlib.h>
#include <string.h>

#include "driver/driver.h"

struct qllc_model {
  qllc_drv_model d;
  int refs;  /* live JITs borrowing d.graph; under d.lock */
  int freed; /* qllc_model_free was called while refs > 0; under d.lock */
  qllc_tensor *io; /* the inputs then the outputs, described (qllc_model_input) */
  int n_in, n_out;
};

struct qllc_jit {
  qllc_model *model; /* referenced (see refs) */
  qllc_drv_jit d;
};

const char *qllc_version(void) { return QLLC_VERSION; }

/* The options a NULL opts means. */
static const qllc_options *or_default(const qllc_options *opts, qllc_options *dflt) {
  if (opts) return opts;
  qllc_options_init(dflt);
  return dflt;
}

/* Every error of a call on a model names the model file unless it names another already. */
static qllc_status on_model(const qllc_model *m, qllc_status st, qllc_diag *diag) {
  if (st != QLLC_OK && diag && !diag->file[0]) qllc_diag_set_file(diag, m->d.path);
  return st;
}

/* ---- models ------------------------------------------------------------------------------------ */

qllc_status qllc_model_load(const char *path, qllc_model **out, qllc_diag *diag) {
  return qllc_model_load_bound(path, NULL, 0, out, diag);
}

qllc_status qllc_model_load_bound(const char *path, const qllc_tensor *bound, int n_bound, qllc_model **out,
                                  qllc_diag *diag) {
  qllc_load_options lo;
  memset(&lo, 0, sizeof lo);
  lo.bound = bound, lo.n_bound = n_bound;
  return qllc_model_load_opts(path, &lo, out, diag);
}

qllc_status qllc_model_load_opts(const char *path, const qllc_load_options *opts, qllc_model **out, qllc_diag *diag) {
  qllc_load_options none;
  memset(&none, 0, sizeof none);
  const qllc_load_options *lo = opts ? opts : &none;
  const qllc_tensor *bound = lo->bound;
  int n_bound = lo->n_bound;
  if (lo->n_shapes < 0 || (lo->n_shapes > 0 && !lo->shapes)) {
    qllc_fail(diag, QLLC_ERR_INVALID, NULL, "qllc_model_load_opts: no shapes given for n_shapes = %d", lo->n_shapes);
    qllc_diag_set_file(diag, path);
    return QLLC_ERR_INVALID;
  }
  if (!out) return qllc_fail(diag, QLLC_ERR_INVALID, NULL, "qllc_model_load: no place for the model (out is NULL)");
  *out = NULL;
  if (!path) return qllc_fail(diag, QLLC_ERR_INVALID, NULL, "no model path given");
  if (n_bound < 0 || (n_bound > 0 && !bound)) {
    qllc_fail(diag, QLLC_ERR_INVALID, NULL, "qllc_model_load_bound: no bindings given for n_bound = %d", n_bound);
    qllc_diag_set_file(diag, path);
    return QLLC_ERR_INVALID;
  }
  qllc_model *m = calloc(1, sizeof *m);
  if (!m) {
    qllc_fail(diag, QLLC_ERR_NOMEM, NULL, "out of memory");
    qllc_diag_set_file(diag, path);
    return QLLC_ERR_NOMEM;
  }
  qllc_status st = qllc_drv_model_load(&m->d, path, lo, diag);
  if (st != QLLC_OK) {
    free(m);
    return st;
  }
  if ((st = qllc_drv_model_io(&m->d, &m->io, &m->n_in, &m->n_out, diag)) != QLLC_OK) {
    qllc_diag_set_file(diag, path);
    qllc_drv_model_release(&m->d); /* m->io is NULL */
    free(m);
    return st;
  }
  *out = m;
  return QLLC_OK;
}

static void model_release(qllc_model *m) {
  for (int i = 0; m->io && i < m->n_in + m->n_out; i++) qllc_tensor_free(&m->io[i]);
  free(m->io);
  qllc_drv_model_release(&m->d);
  free(m);
}

void qllc_model_free(qllc_model *m) {
  if (!m) return;
  pthread_mutex_lock(&m->d.lock);
  int busy = m->refs > 0;
  if (busy) m->freed = 1;
  pthread_mutex_unlock(&m->d.lock);
  if (!busy) model_release(m);
}

int qllc_model_num_inputs(const qllc_model *m) { return m ? m->n_in : 0; }
int qllc_model_num_outputs(const qllc_model *m) { return m ? m->n_out : 0; }
const qllc_tensor *qllc_model_input(const qllc_model *m, int i) {
  return m && i >= 0 && i < m->n_in ? &m->io[i] : NULL;
}
const qllc_tensor *qllc_model_output(const qllc_model *m, int i) {
  return m && i >= 0 && i < m->n_out ? &m->io[m->n_in + i] : NULL;
}

qllc_status qllc_model_describe(qllc_model *m, const qllc_options *opts, void *stream, qllc_diag *diag) {
  if (!m) return qllc_fail(diag, QLLC_ERR_INVALID, NULL, "no model");
  qllc_options dflt;
  return on_model(m, qllc_drv_describe(&m->d, or_default(opts, &dflt), stream ? (FILE *)stream : stdout, diag), diag);
}

qllc_status qllc_model_write_dot(qllc_model *m, const qllc_options *opts, void *stream, qllc_diag *diag) {
  if (!m) return qllc_fail(diag, QLLC_ERR_INVALID, NULL, "no model");
  qllc_options dflt;
  return on_model(m, qllc_drv_write_dot(&m->d, or_default(opts, &dflt), stream ? (FILE *)stream : stdout, diag),
                  diag);
}

/* ---- bundles ----------------------------------------------------------------------------------- */

static int is_c_identifier(const char *s) {
  if (!s || !*s || (s[0] >= '0' && s[0] <= '9')) return 0;
  for (const char *c = s; *c; c++)
    if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') || *c == '_'))
      return 0;
  return 1;
}

/* Why a bundle name cannot be the entry symbol of a header that C and C++ include, or NULL: a keyword
 * of C11 or C++, a name the C library or the header's own types and macros use, or one reserved to the
 * implementation (leading underscore and capital, or two underscores). */
static const char *reserved_name(const char *s) {
  static const char *const keywords[] = {
      "auto", "break", "case", "char", "const", "continue", "default", "do", "double", "else", "enum", "extern",
      "float", "for", "goto", "if", "inline", "int", "long", "register", "restrict", "return", "short", "signed",
      "sizeof", "static", "struct", "switch", "typedef", "union", "unsigned", "void", "volatile", "while",
      "_Alignas", "_Alignof", "_Atomic", "_Bool", "_Complex", "_Generic", "_Imaginary", "_Noreturn",
      "_Static_assert", "_Thread_local", "alignas", "alignof", "and", "and_eq", "asm", "bitand", "bitor", "bool",
      "catch", "char8_t", "char16_t", "char32_t", "class", "compl", "concept", "consteval", "constexpr",
      "constinit", "const_cast", "co_await", "co_return", "co_yield", "decltype", "delete", "dynamic_cast",
      "explicit", "export", "false", "friend", "mutable", "namespace", "new", "noexcept", "not", "not_eq",
      "nullptr", "operator", "or", "or_eq", "private", "protected", "public", "reinterpret_cast", "requires",
      "static_assert", "static_cast", "template", "this", "thread_local", "throw", "true", "try", "typeid",
      "typename", "using", "virtual", "wchar_t", "xor", "xor_eq", NULL};
  static const char *const library[] = {"main", "memcpy", "memset", "memmove", "malloc", "free", "abort",
                                        "exit", "errno", "qllc_io", "NULL", "int8_t", "uint8_t", "int32_t",
                                        "uint32_t", "int64_t", "uint64_t", "size_t", NULL};
  for (int i = 0; keywords[i]; i++)
    if (!strcmp(s, keywords[i])) return "a C or C++ keyword";
  for (int i = 0; library[i]; i++)
    if (!strcmp(s, library[i])) return "a name the C library or the header itself uses";
  if ((s[0] == '_' && s[1] >= 'A' && s[1] <= 'Z') || strstr(s, "__")) return "reserved to the C implementation";
  return NULL;
}

qllc_status qllc_compile_bundle(qllc_model *m, const qllc_options *opts, const char *dir, const char *name,
                                qllc_diag *diag) {
  if (!m) return qllc_fail(diag, QLLC_ERR_INVALID, NULL, "no model");
  if (!dir || !*dir) return qllc_fail(diag, QLLC_ERR_INVALID, NULL, "no output directory given");
  if (!is_c_identifier(name))
    return qllc_fail(diag, QLLC_ERR_INVALID, NULL, "bundle name '%s' is not a C identifier", name ? name : "");
  const char *why = reserved_name(name);
  if (why)
    return qllc_fail(diag, QLLC_ERR_INVALID, NULL,
                     "bundle name '%s' is %s: the header would not compile; choose another with --name", name, why);
  qllc_options dflt;
  return on_model(m, qllc_drv_compile_bundle(&m->d, or_default(opts, &dflt), dir, name, diag), diag);
}

/* ---- JIT --------------------------------------------------------------------------------------- */

qllc_status qllc_jit_compile(qllc_model *m, const qllc_options *opts, qllc_jit **out, qllc_diag *diag) {
  if (!out) return qllc_fail(diag, QLLC_ERR_INVALID, NULL, "qllc_jit_compile: no place for the JIT (out is NULL)");
  *out = NULL;
  if (!m) return qllc_fail(diag, QLLC_ERR_INVALID, NULL, "no model");
  qllc_jit *j = calloc(1, sizeof *j);
  if (!j) return qllc_fail(diag, QLLC_ERR_NOMEM, NULL, "out of memory");
  qllc_options dflt;
  qllc_status st = qllc_drv_jit_build(&m->d, or_default(opts, &dflt), &j->d, diag);
  if (st != QLLC_OK) {
    free(j);
    return on_model(m, st, diag);
  }
  j->model = m;
  pthread_mutex_lock(&m->d.lock);
  m->refs++;
  pthread_mutex_unlock(&m->d.lock);
  *out = j;
  return QLLC_OK;
}

void qllc_jit_free(qllc_jit *j) {
  if (!j) return;
  qllc_drv_jit_release(&j->d);
  qllc_model *m = j->model;
  pthread_mutex_lock(&m->d.lock);
  int last = --m->refs == 0 && m->freed;
  pthread_mutex_unlock(&m->d.lock);
  if (last) model_release(m);
  free(j);
}

int qllc_jit_num_inputs(const qllc_jit *j) { return j ? j->d.n_in : 0; }
int qllc_jit_num_outputs(const qllc_jit *j) { return j ? j->d.n_out : 0; }
const qllc_tensor *qllc_jit_input(const qllc_jit *j, int i) {
  return j && i >= 0 && i < j->d.n_in ? &j->d.in[i] : NULL;
}
const qllc_tensor *qllc_jit_output(const qllc_jit *j, int i) {
  return j && i >= 0 && i < j->d.n_out ? &j->d.out[i] : NULL;
}

qllc_status qllc_jit_run(qllc_jit *j, const qllc_tensor *inputs, int n_inputs, qllc_tensor *outputs,
                         qllc_diag *diag) {
  if (!j) return qllc_fail(diag, QLLC_ERR_INVALID, NULL, "no JIT");
  if (n_inputs < 0 || (n_inputs > 0 && !inputs))
    return qllc_fail(diag, QLLC_ERR_INVALID, NULL, "qllc_jit_run: no inputs given for n_inputs = %d", n_inputs);
  if (!outputs && j->d.n_out > 0) return qllc_fail(diag, QLLC_ERR_INVALID, NULL, "qllc_jit_run: no outputs array");
  return qllc_drv_jit_run(&j->d, inputs, n_inputs, outputs, diag);
}

qllc_status qllc_jit_run_dataset(qllc_jit *j, const char *const *dataset_specs, int n_specs, qllc_progress_fn progress,
                                 void *progress_ctx, qllc_tensor *outputs, int64_t *samples, qllc_diag *diag) {
  if (samples) *samples = 0;
  if (!j) return qllc_fail(diag, QLLC_ERR_INVALID, NULL, "no JIT");
  if (n_specs <= 0 || !dataset_specs) return qllc_fail(diag, QLLC_ERR_INVALID, NULL, "no data set given");
  if (!outputs && j->d.n_out > 0) return qllc_fail(diag, QLLC_ERR_INVALID, NULL, "qllc_jit_run_dataset: no outputs array");
  return qllc_drv_jit_run_dataset(&j->d, dataset_specs, n_specs, progress, progress_ctx, outputs, samples, diag);
}

/* ---- benchmark --------------------------------------------------------------------------------- */

qllc_status qllc_bench(qllc_model *m, const qllc_options *opts, const qllc_tensor *inputs, int n_inputs, int runs,
                       int warmup, qllc_bench_result **out, qllc_diag *diag) {
  if (!out) return qllc_fail(diag, QLLC_ERR_INVALID, NULL, "qllc_bench: no place for the result (out is NULL)");
  *out = NULL;
  if (!m) return qllc_fail(diag, QLLC_ERR_INVALID, NULL, "no model");
  if (runs < 1 || runs > 1000000 || warmup < 0 || warmup > 1000000)
    return qllc_fail(diag, QLLC_ERR_INVALID, NULL, "qllc_bench: runs %d, warmup %d (runs 1 to 1000000, warmup 0 to 1000000)",
                     runs, warmup);
  if (n_inputs < 0 || (n_inputs > 0 && !inputs))
    return qllc_fail(diag, QLLC_ERR_INVALID, NULL, "qllc_bench: no inputs given for n_inputs = %d", n_inputs);
  qllc_options dflt;
  return on_model(m, qllc_drv_bench(&m->d, or_default(opts, &dflt), inputs, n_inputs, runs, warmup, out, diag), diag);
}

/* ---- profiling and compare --------------------------------------------------------------------- */

qllc_status qllc_profile_dataset(qllc_model *m, const char *const *dataset_specs, int n_specs, int bins,
                                 const char *out_yaml, qllc_progress_fn progress, void *progress_ctx,
                                 qllc_profile_summary *summary, qllc_diag *diag) {
  return qllc_profile_dataset_opts(m, NULL, dataset_specs, n_specs, bins, out_yaml, progress, progress_ctx, summary,
                                   diag);
}

qllc_status qllc_profile_dataset_opts(qllc_model *m, const qllc_options *opts, const char *const *dataset_specs,
                                      int n_specs, int bins, const char *out_yaml, qllc_progress_fn progress,
                                      void *progress_ctx, qllc_profile_summary *summary, qllc_diag *diag) {
  if (summary) memset(summary, 0, sizeof *summary);
  if (!m) return qllc_fail(diag, QLLC_ERR_INVALID, NULL, "no model");
  if (!out_yaml || !*out_yaml) return qllc_fail(diag, QLLC_ERR_INVALID, NULL, "no profile output file given");
  if (n_specs <= 0 || !dataset_specs) return qllc_fail(diag, QLLC_ERR_INVALID, NULL, "no data set given");
  if (bins < 0 || (bins > 0 && (bins < 16 || bins % 2 != 0 || bins > (1 << 24))))
    return qllc_fail(diag, QLLC_ERR_INVALID, NULL, "--bins %d: the histogram needs an even count >= 16", bins);
  qllc_options dflt;
  return qllc_drv_profile(&m->d, or_default(opts, &dflt), dataset_specs, n_specs, bins, out_yaml, progress,
                          progress_ctx, summary, diag);
}

qllc_status qllc_compare(qllc_model *m, const qllc_options *opts, const char *const *dataset_specs, int n_specs,
                         int64_t max_samples, qllc_compare_result **out, qllc_diag *diag) {
  if (!out) return qllc_fail(diag, QLLC_ERR_INVALID, NULL, "compare: no place for the result (out is NULL)");
  *out = NULL;
  if (!m || !opts) return qllc_fail(diag, QLLC_ERR_INVALID, NULL, "compare: no model or options");
  return qllc_drv_compare(&m->d, opts, dataset_specs, n_specs, max_samples, out, diag);
}
