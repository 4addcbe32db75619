/* src/driver/driver_internal.h: what the driver's files share. The pipeline's steps (pipeline.c,
 * model.c), and instrumented runs, shared by profiling, `qllc compare` and the precision search
 * (probe.c, compare.c, search.c).
 *
 * A data set (qllc_dataset) is the user's --dataset specs opened against a graph's inputs: the samples
 * of each input, from one file along its leading axis or one file per sample in a directory (the forms
 * are described at qllc_profile_dataset in include/qllc.h).
 *
 * An instrumented program (qllc_probe) is a graph in which every non-constant value computed by a node
 * was made a graph output, lowered and JIT-compiled for the host; each run fills the inputs from one
 * sample and leaves every value's bytes in the mutable region, where qllc_probe_value_data finds them.
 * The graph is borrowed (it must outlive the program) and is changed: outputs are added.
 *
 * qllc_probe_profile is the profiling loop: the histogram of every float value over every sample.
 */
#ifndef QLLC_DRIVER_INTERNAL_H
#define QLLC_DRIVER_INTERNAL_H

#include "driver/driver.h"

/* ---- the pipeline's steps (pipeline.c, model.c) ------------------------------------------------- */

/* "x86_64" or "aarch64": the architecture this library runs on ("" elsewhere). */
const char *qllc_drv_host_target(void);
/* size bytes (at least QLLC_MEM_ALIGN), zeroed, aligned to QLLC_MEM_ALIGN; free(); NULL on OOM. */
void *qllc_drv_aligned_buffer(uint64_t size);

/* A private copy of m's optimized graph, which the caller may change and must free: copied in memory,
 * or, for a pre-quantized model whose records cannot be copied, loaded from the file again. */
qllc_status qllc_drv_model_graph(qllc_drv_model *m, qllc_graph **out, qllc_diag *diag);
/* Loads the model file again and runs the float pipeline on it, dumping after a graph pass when asked. */
qllc_status qllc_drv_reload(qllc_drv_model *m, const char *dump_after, FILE *dump, qllc_graph **out,
                            qllc_diag *diag);
/* The graph a compile starts from: m's own graph (*owned 0) for a float compile without --dump-after,
 * otherwise a private copy (*owned 1), quantized when a precision is asked for. host 1: compiled for
 * this machine (the JIT; a precision search then costs layers by their measured time). */
qllc_status qllc_drv_graph_for(qllc_drv_model *m, const qllc_options *o, int host, qllc_graph **g, int *owned,
                               qllc_diag *diag);
/* Quantizes g in place as o asks; with a precision map the nodes it names at their precision. */
qllc_status qllc_drv_quantize_map(qllc_graph *g, const qllc_options *o, const qllc_prec_map *map, qllc_diag *diag);
/* Lowers g for the CPU o and host (1: the JIT, this machine) resolve to; *user_lines (may be NULL) gets
 * the report's user-kernel lines. */
qllc_status qllc_drv_lower(qllc_drv_model *m, qllc_graph *g, const qllc_options *o, int host, qllc_program **p,
                           char **user_lines, qllc_diag *diag);
/* native.c: 1 when this build has variant `kernel` compiled for this machine; its call with the
 * instruction's arguments (buffers at their places in the two regions, constants from their data):
 * 0, or -1 when the kernel is not there or its arguments are not a Conv's or an FC's. An ALT_NHWC row runs
 * with both ends channel-last (x_nhwc = y_nhwc = 1), as inside a chain of such layers (tune.c). */
int qllc_drv_native_has(const char *kernel);
int qllc_drv_native_call(const qllc_instr *in, uint8_t *mut, uint8_t *act);
/* tune.c: how the fused layers' kernel variants are chosen: 2 by measurement (the target CPU is this
 * machine: host, the JIT, or --cpu native), 1 from the o->tune_cache file's timings only (another CPU),
 * 0 by the rule table (o->no_tune, or another CPU without a file). */
int qllc_drv_tunes(const qllc_options *o, int host);
/* Lowers g for lt with every fused layer on the variant timed fastest among the rows it could run
 * (timings from o->tune_cache, this process, or, for this machine's CPU, measured now and added to both). */
qllc_status qllc_drv_lower_tuned(qllc_drv_model *m, qllc_graph *g, const qllc_options *o, int host,
                                 qllc_lower_target *lt, qllc_program **p, qllc_diag *diag);
/* The code generator's options for o's target, CPU and features (host 1: the JIT), with o's user kernels,
 * relocation model and weight placement. */
qllc_status qllc_drv_codegen_opts(const qllc_options *o, int host, qllc_codegen_opts *cg, qllc_diag *diag);
/* runner.c: p JIT-compiled for this machine as o asks; stamp_offset > 0: the instrumented build of
 * `qllc bench` (qllc_codegen_opts.layer_stamps: time stamps from that offset of the mutable region on). */
qllc_status qllc_drv_jit_codegen(const qllc_program *p, const qllc_options *o, uint64_t stamp_offset,
                                 qllc_jit_code **code, qllc_entry_fn *entry, qllc_diag *diag);
/* runner.c: the regions of the pair of run buffers first on j's free list (NULL when none): after a
 * qllc_drv_jit_run on one thread, they hold that run's inputs (bench.c calls the entry on them). */
void qllc_drv_jit_idle_bufs(qllc_drv_jit *j, uint8_t **mut, uint8_t **act);
/* The precision report of a quantized graph as a malloc'ed string (NULL for float). */
char *qllc_drv_report_text(const qllc_graph *g, const qllc_options *o);
/* The lowering of instrumented programs (a qllc_probe_hooks.lower): reference kernels, and the same
 * custom-op check and message as a compile. ctx is the qllc_options. */
qllc_status qllc_drv_instr_lower(void *ctx, qllc_graph *g, qllc_program **p, qllc_diag *diag);
/* The map a quantized compile uses (search.c): replayed from o->precision_map, or searched for
 * o->min_sqnr_db (and written to o->precision_map_out); NULL when neither is asked. g: the clean graph.
 * host 1 (the JIT) or o->cpu "native": the target CPU is this machine, and the search's cost is each
 * layer's measured time (qllc_drv_bench); otherwise its wide MACs. */
qllc_status qllc_drv_precision_map(qllc_drv_model *m, const qllc_graph *g, const qllc_options *o, int host,
                                   qllc_prec_map **map, qllc_diag *diag);
/* --precision-map-out (when o names one): map (NULL: every layer at the base precision) kept for this
 * thread until qllc_drv_precision_map_finish, which writes it when st is QLLC_OK (returning the write's
 * status) and drops it otherwise. Every driver call that builds a graph (qllc_drv_graph_for) ends with it. */
qllc_status qllc_drv_precision_map_later(const qllc_options *o, const qllc_prec_map *map, uint64_t hash,
                                         const char *comment, qllc_diag *diag);
qllc_status qllc_drv_precision_map_finish(qllc_status st, qllc_diag *diag);
/* The compiled graph as Graphviz (dot.c): p, when not NULL, is g lowered (labels name kernels). Returns
 * 0, or -1 on a write error. */
int qllc_graph_write_dot(const qllc_graph *g, const qllc_program *p, FILE *f);

/* ---- data sets -------------------------------------------------------------------------------- */

typedef struct qllc_dataset qllc_dataset;

/* Assigns the specs to g's inputs (NAME=SPEC by name, the others in model order) and opens them; every
 * input needs a spec and all must give the same number of samples. Dispose with qllc_dataset_free. */
qllc_status qllc_dataset_open(const qllc_graph *g, const char *const *specs, int n_specs, qllc_dataset **out,
                              qllc_diag *diag);
/* A data set of `samples` samples drawn from the profile's histogram of each of g's inputs (seeded, so
 * every call gives the same samples): what compare and the precision search run on when no data set is
 * given. Each element is drawn independently from its input's value distribution. */
qllc_status qllc_dataset_from_profile(const qllc_graph *g, const qllc_profile *prof, int64_t samples,
                                      uint64_t seed, qllc_dataset **out, qllc_diag *diag);
/* A data set of the calibration samples kept in the profile (its first ones; at most `max` when > 0):
 * what compare and the precision search run on when no data set is given and the profile has them.
 * An input not sampled, or of another size, is QLLC_ERR_INVALID naming it. */
qllc_status qllc_dataset_from_kept(const qllc_graph *g, const qllc_profile *prof, int64_t max, qllc_dataset **out,
                                   qllc_diag *diag);
void qllc_dataset_free(qllc_dataset *d);
int64_t qllc_dataset_samples(const qllc_dataset *d);
/* Uses only the first `max` samples (max > 0). */
void qllc_dataset_limit(qllc_dataset *d, int64_t max);
/* Copies sample s of the input called `name` (f32, the input's element count) to dst. */
qllc_status qllc_dataset_sample(qllc_dataset *d, const char *name, int64_t s, float *dst, qllc_diag *diag);

/* ---- instrumented programs -------------------------------------------------------------------- */

/* How the program is lowered: the facade's lowering (kernel variants for the host CPU, user kernels,
 * the custom-op check). NULL lower: qllc_lower (reference kernels). `opts` gives the codegen options
 * (qllc_codegen_resolve for the host); NULL: defaults. */
typedef struct qllc_probe_hooks {
  qllc_status (*lower)(void *ctx, qllc_graph *g, qllc_program **out, qllc_diag *diag);
  void *ctx;
  const qllc_options *opts;
} qllc_probe_hooks;

typedef struct qllc_probe qllc_probe;

/* Which values become outputs. */
enum {
  QLLC_PROBE_FLOAT = 1,   /* every computed f32 value */
  QLLC_PROBE_INTEGER = 2, /* every computed i8/u8/i16 value that has a scale (quantized activations) */
  QLLC_PROBE_QUICK = 4    /* not an output choice: compile fast (qllc_codegen_opts.quick; the same results) */
};

qllc_status qllc_probe_build(qllc_graph *g, int which, const qllc_probe_hooks *h, qllc_probe **out, qllc_diag *diag);
void qllc_probe_free(qllc_probe *in);
/* Runs sample s of the data set (inputs matched by name). */
qllc_status qllc_probe_run(qllc_probe *in, qllc_dataset *d, int64_t s, qllc_diag *diag);
/* Every output of the program (the graph's own outputs first, then the added ones). */
int qllc_probe_num_values(const qllc_probe *in);
const qllc_value *qllc_probe_value(const qllc_probe *in, int i);
const void *qllc_probe_value_data(const qllc_probe *in, int i); /* after a run */
/* The program's inputs (data read from the data set on each run). */
int qllc_probe_num_inputs(const qllc_probe *in);
const qllc_value *qllc_probe_input(const qllc_probe *in, int i);
const void *qllc_probe_input_data(const qllc_probe *in, int i);

/* ---- profiling -------------------------------------------------------------------------------- */

/* Runs g (an optimized float graph, hashed here before it is instrumented) on every sample of d and
 * records each float value's histogram (`bins` bins, even >= 16) into a new profile (*out, dispose with
 * qllc_profile_free). `progress` may be NULL. g is changed (outputs added). */
qllc_status qllc_probe_profile(qllc_graph *g, qllc_dataset *d, int32_t bins, const qllc_probe_hooks *h,
                               void (*progress)(void *ctx, int64_t done, int64_t total), void *progress_ctx,
                               qllc_profile **out, qllc_diag *diag);

/* ---- compare (compare.c) ---------------------------------------------------------------------- */

/* Runs the float graph fg and its quantized copy qg (both changed: outputs added) on every sample of d
 * and fills *out (qllc_compare_result, include/qllc.h): per value SQNR, max error and saturated share,
 * the model's outputs first, each group worst first. Dispose with qllc_compare_result_free. */
qllc_status qllc_quant_compare(qllc_graph *fg, qllc_graph *qg, qllc_dataset *d, const qllc_probe_hooks *h,
                               qllc_compare_result **out, qllc_diag *diag);
/* "i8 x i8 -> i8", "i16 -> i16", "f32" (no quantization record): what node n computes. */
void qllc_quant_node_types(const qllc_node *n, char *buf, size_t size);
/* 10 log10(signal / noise); +inf when noise is 0, -inf when only the signal is. */
double qllc_sqnr_db(double signal, double noise);

/* ---- mixed precision (search.c) ---------------------------------------------------------------- */

/* Quantizes graph g in place with the options the caller holds and the precision map. */
typedef qllc_status (*qllc_quantize_fn)(void *ctx, qllc_graph *g, const qllc_prec_map *map, qllc_diag *diag);

/* The clock and the median of `qllc bench` (bench.c), shared with variant timing (tune.c): CLOCK_MONOTONIC
 * in ns; the q-quantile (0..1) of v[0..n) by nearest rank, v sorted in place. */
double qllc_drv_now_ns(void);
double qllc_drv_quantile(double *v, int n, double q);

/* Times the model compiled with a precision map, as `qllc bench` does (*out: dispose with
 * qllc_bench_result_free): the search's cost when the target CPU is this machine. */
typedef struct qllc_search_timer {
  qllc_status (*time)(void *ctx, const qllc_prec_map *map, qllc_bench_result **out, qllc_diag *diag);
  void *ctx;
} qllc_search_timer;

/* The search for --min-sqnr (search.c): fg the float graph, base the same quantized at int8 (for the
 * candidates and their kinds), ds the samples; timer NULL: a layer's cost is its wide MACs, otherwise
 * its time measured at each precision. *out the map (empty when int8 reaches the target), *summary what
 * was chosen and measured (malloc'ed text, several lines). An unreachable target is QLLC_ERR_INVALID
 * naming the layers that cost most. */
qllc_status qllc_precision_search(const qllc_graph *fg, const qllc_graph *base, qllc_dataset *ds, double target_db,
                                  qllc_quantize_fn quantize, void *qctx, const qllc_probe_hooks *h,
                                  const qllc_search_timer *timer, qllc_prec_map **out, char **summary,
                                  qllc_diag *diag);

/* The samples an accuracy measurement runs on (compare, the search): the user's specs (at most
 * max_samples of them when > 0; *drawn 0), else the calibration samples kept in o's profile (*drawn 2),
 * else, for a profile without them, samples drawn from its histograms (*drawn 1). */
qllc_status qllc_drv_samples(qllc_drv_model *m, const qllc_options *o, const char *const *specs, int n_specs,
                             int64_t max_samples, qllc_dataset **ds, int *drawn, qllc_diag *diag);

#endif
