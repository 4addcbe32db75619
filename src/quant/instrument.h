/* src/quant/instrument.h: instrumented runs, shared by profiling, `qllc compare` and the precision
 * search (issue 13).
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
#ifndef QLLC_QUANT_INSTRUMENT_H
#define QLLC_QUANT_INSTRUMENT_H

#include "../llvmgen/llvmgen.h"
#include "../lower/lower.h"
#include "quant.h"

/* An in-memory copy of an optimized graph (copy.c): same values (ids, names, constant bytes), nodes,
 * attributes, inputs and outputs, so the same hash; the copy owns all its memory. UNSUPPORTED for a
 * graph with quantization records (a pre-quantized model): load the file again instead. */
qllc_status qllc_quant_graph_copy(const qllc_graph *src, qllc_graph **out, qllc_diag *diag);

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

/* ---- mixed precision (mixed.c) ----------------------------------------------------------------- */

/* Quantizes graph g in place with the options the caller holds and the precision map. */
typedef qllc_status (*qllc_quantize_fn)(void *ctx, qllc_graph *g, const qllc_prec_map *map, qllc_diag *diag);

void qllc_prec_map_free(qllc_prec_map *m);
qllc_prec_map *qllc_prec_map_copy(const qllc_prec_map *m); /* NULL on OOM */
const char *qllc_nprec_name(qllc_nprec p); /* "int8", "16x8", "int16" */
/* The map file (format at the top of mixed.c). read: MISMATCH when made for a graph of another hash. */
qllc_status qllc_prec_map_write(const char *path, const qllc_prec_map *m, uint64_t graph_hash, const char *comment,
                                qllc_diag *diag);
qllc_status qllc_prec_map_read(const char *path, uint64_t graph_hash, qllc_prec_map **out, qllc_diag *diag);
/* The search for --min-sqnr (mixed.c): fg the float graph, base the same quantized at int8 (for the
 * candidates and their kinds), ds the samples. *out the map (empty when int8 reaches the target),
 * *summary what was chosen and measured (malloc'ed text, several lines). An unreachable target is
 * QLLC_ERR_INVALID naming the layers that cost most. */
qllc_status qllc_precision_search(const qllc_graph *fg, const qllc_graph *base, qllc_dataset *ds, double target_db,
                                  qllc_quantize_fn quantize, void *qctx, const qllc_probe_hooks *h,
                                  qllc_prec_map **out, char **summary, qllc_diag *diag);

#endif
