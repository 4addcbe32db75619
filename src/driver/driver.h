/* src/driver/driver.h: the pipeline and the runner, the layer the facade (src/qllc.c) calls.
 *
 * The driver owns the order of the stages: load (src/ir) -> graph passes (src/ir) -> quantize
 * (src/quant) -> lower (src/lower) -> code generation (src/llvmgen), and everything that compiles and
 * runs a graph in order to decide something: profiling (probe.c), compare (compare.c), the precision
 * search (search.c); also the JIT's run buffers and input matching (runner.c), and writing a bundle's
 * files all or nothing (bundle_out.c). The modules below it never call it and never see the public
 * qllc_options: the driver turns the options into each module's own (qllc_quant_opts,
 * qllc_lower_target, qllc_codegen_opts). It never prints to the terminal; `describe` and `write_dot`
 * write to the stream they are given.
 *
 * Lifetimes are the facade's: it allocates a qllc_drv_model / qllc_drv_jit inside its handles and
 * calls the release functions here exactly once.
 */
#ifndef QLLC_DRIVER_H
#define QLLC_DRIVER_H

#include <pthread.h>
#include <stdio.h>

#include "ir/ir.h"
#include "llvmgen/llvmgen.h"
#include "lower/lower.h"
#include "quant/quant.h"

/* A loaded model: its file, its graph after the options-independent float passes, and the last
 * precision search's answer (so `compile --verbose`, which describes and then compiles, searches once). */
typedef struct qllc_drv_model {
  char *path;
  qllc_graph *graph;    /* after qllc_graph_optimize (and the QDQ pass for a pre-quantized model) */
  pthread_mutex_t lock; /* guards lowering `graph` (which recounts its uses) and the search fields; the
                           facade also guards its reference count with it */
  qllc_tensor *bound;   /* graph inputs bound to constants: copies, applied on every reload */
  int n_bound;
  qllc_tensor *shapes;  /* input shapes (--input-shape): copies (no data), applied on every reload */
  int n_shapes;
  char *search_key;     /* the last precision search: what it depended on, its map and the map file's */
  qllc_prec_map *search_map; /* comment (search.c) */
  char *search_comment;
} qllc_drv_model;

/* Loads and optimizes the model file into *m (zeroed first) with lo's bindings and input shapes (lo->note
 * hears of symbolic dims taken as 1). Errors name the file. On failure nothing is left to release. */
qllc_status qllc_drv_model_load(qllc_drv_model *m, const char *path, const qllc_load_options *lo, qllc_diag *diag);
void qllc_drv_model_release(qllc_drv_model *m);

/* `qllc info`: the graph, the precision report, user kernels, the kernel per fused layer, memory and the
 * program, written to f. */
qllc_status qllc_drv_describe(qllc_drv_model *m, const qllc_options *o, FILE *f, qllc_diag *diag);
/* `qllc info --dot`: the compiled graph as Graphviz (dot.c). */
qllc_status qllc_drv_write_dot(qllc_drv_model *m, const qllc_options *o, FILE *f, qllc_diag *diag);
/* Writes DIR/NAME.o, DIR/NAME.h (and DIR/NAME.weights.bin with o->weights_file): every file or none. */
qllc_status qllc_drv_compile_bundle(qllc_drv_model *m, const qllc_options *o, const char *dir, const char *name,
                                    qllc_diag *diag);
/* Describes value v as a tensor (data NULL; name strdup'ed, freed by qllc_tensor_free). 0 on OOM. */
int qllc_drv_value_desc(const qllc_value *v, qllc_tensor *t);
/* The model's graph inputs then outputs, described (qllc_model_input): *io malloc'ed, n_in + n_out tensors;
 * free each with qllc_tensor_free, then *io. */
qllc_status qllc_drv_model_io(const qllc_drv_model *m, qllc_tensor **io, int *n_in, int *n_out, qllc_diag *diag);

/* ---- the runner (runner.c) ----------------------------------------------------------------------- */

typedef struct qllc_run_bufs qllc_run_bufs;
/* A JIT-compiled model and the buffers its runs use. */
typedef struct qllc_drv_jit {
  qllc_graph *own_graph;   /* a private graph (quantized, or made for --dump-after), or NULL */
  qllc_program *prog;
  qllc_jit_code *code;
  qllc_entry_fn entry;
  int n_in, n_out;
  qllc_tensor *in, *out;   /* descriptions (data NULL); names owned */
  /* Run buffers (mutable + activation regions, QLLC_MEM_ALIGN-aligned): a call takes a pair from the
     free list, or allocates one when every pair is in use by another thread, and gives it back when it
     returns; so concurrent runs never share bytes, and a single thread reuses one pair. */
  pthread_mutex_t lock;
  qllc_run_bufs *free_bufs;
} qllc_drv_jit;

/* Compiles m for this machine into *j (zeroed first); on failure *j is released already. */
qllc_status qllc_drv_jit_build(qllc_drv_model *m, const qllc_options *o, qllc_drv_jit *j, qllc_diag *diag);
void qllc_drv_jit_release(qllc_drv_jit *j);
/* Matches the inputs (by name, else by position), checks their types, runs, and fills outputs
 * (malloc'ed data; the caller frees each with qllc_tensor_free). */
qllc_status qllc_drv_jit_run(qllc_drv_jit *j, const qllc_tensor *inputs, int n_inputs, qllc_tensor *outputs,
                             qllc_diag *diag);

/* Runs every sample of the data set (specs) through j; outputs stacked along a new leading axis
 * (qllc_jit_run_dataset). */
qllc_status qllc_drv_jit_run_dataset(qllc_drv_jit *j, const char *const *specs, int n_specs, qllc_progress_fn progress,
                                     void *progress_ctx, qllc_tensor *outputs, int64_t *samples, qllc_diag *diag);
/* `qllc bench` (bench.c): whole-program and per-kernel times (qllc_bench, include/qllc.h). */
qllc_status qllc_drv_bench(qllc_drv_model *m, const qllc_options *o, const qllc_tensor *inputs, int n_inputs, int runs,
                           int warmup, qllc_bench_result **out, qllc_diag *diag);

/* ---- decisions made by running (probe.c, compare.c) ---------------------------------------------- */

/* Calibrates m on the data set and writes the profile to out_yaml (replaced only when complete). */
qllc_status qllc_drv_profile(qllc_drv_model *m, const qllc_options *o, const char *const *specs, int n_specs,
                             int bins, const char *out_yaml, qllc_progress_fn progress, void *progress_ctx,
                             qllc_profile_summary *summary, qllc_diag *diag);
/* Float against quantized per value, on the data set or samples drawn from the profile. */
qllc_status qllc_drv_compare(qllc_drv_model *m, const qllc_options *o, const char *const *specs, int n_specs,
                             int64_t max_samples, qllc_compare_result **out, qllc_diag *diag);

#endif
