/* qllc.h: the public C API of qllc, a compiler for quantized neural networks.
 *
 * Everything is reached through opaque handles. Every function returns a qllc_status and, on failure,
 * fills the caller-owned qllc_diag (when it is not NULL) with one line of text and the ONNX node it
 * concerns. The library never prints, never exits and never aborts.
 *
 * Ownership: each constructor names its dispose call. Strings passed in are copied.
 */
#ifndef QLLC_H
#define QLLC_H

#include <stddef.h>
#include <stdint.h>

#include "qllc_version.h" /* QLLC_VERSION "MAJOR.MINOR.PATCH": the version of this header (docs/install.md) */

#ifdef __cplusplus
extern "C" {
#endif

/* The version of the library linked at run time ("0.2.0"; compare with QLLC_VERSION, the header's). */
const char *qllc_version(void);

typedef enum qllc_status {
  QLLC_OK = 0,
  QLLC_ERR_IO,          /* a file could not be read or written */
  QLLC_ERR_PARSE,       /* malformed ONNX, .npy, .pb or YAML */
  QLLC_ERR_UNSUPPORTED, /* an op, attribute, type or feature qllc does not handle */
  QLLC_ERR_INVALID,     /* inconsistent model or arguments (shapes, types, names) */
  QLLC_ERR_MISMATCH,    /* a profile or kernel file that does not belong to this model/target */
  QLLC_ERR_LLVM,        /* LLVM reported an error (message attached) */
  QLLC_ERR_NOMEM,
  QLLC_ERR_STRICT,      /* --strict: a node left in float, a bias clipped, a variant skipped for the CPU */
  QLLC_ERR_RUNTIME      /* the compiled code returned an error */
} qllc_status;

/* Caller-owned diagnostic. `node` is the ONNX node name ("" when not about a node), `file` the file. */
typedef struct qllc_diag {
  qllc_status status;
  char message[1024];
  char node[256];
  char file[512];
} qllc_diag;

/* Element kinds; the numbers are stable and appear in bundle headers (qllc_io.elem_kind). A bundle
 * header included before this one defines the same names as macros with the same values; drop them so
 * the enum below compiles in either include order. */
#undef QLLC_F32
#undef QLLC_I8
#undef QLLC_U8
#undef QLLC_I16
#undef QLLC_I32
#undef QLLC_I64
typedef enum qllc_elem_kind {
  QLLC_F32 = 0,
  QLLC_I8 = 1,
  QLLC_U8 = 2,
  QLLC_I16 = 3,
  QLLC_I32 = 4,
  QLLC_I64 = 5
} qllc_elem_kind;

#define QLLC_MAX_RANK 8

/* A dense row-major tensor. Used for inputs and outputs of qllc_run. When returned by the library,
 * `name` and `data` are owned by the tensor and freed by qllc_tensor_free. */
typedef struct qllc_tensor {
  char *name;
  qllc_elem_kind elem;
  uint32_t rank;
  int64_t dims[QLLC_MAX_RANK];
  float scale;        /* quantized tensors only; 1.0 for float */
  int32_t zero_point; /* quantized tensors only; 0 for float */
  void *data;
} qllc_tensor;

/* Frees name and data of a tensor returned by the library (not the struct itself). */
void qllc_tensor_free(qllc_tensor *t);

/* Reads a tensor from a .npy or ONNX TensorProto .pb file (chosen by content). Free with qllc_tensor_free. */
qllc_status qllc_tensor_read(const char *path, qllc_tensor *out, qllc_diag *diag);
/* Writes a tensor as .npy. */
qllc_status qllc_tensor_write_npy(const char *path, const qllc_tensor *t, qllc_diag *diag);
/* .npz files (numpy's np.savez / np.savez_compressed: a zip of .npy arrays, stored or deflated)
 * are read wherever a .npy is: qllc_tensor_read gives an .npz's only array (several: QLLC_ERR_INVALID
 * naming them). qllc_tensor_read_all reads every tensor of a file: one per array of an .npz, named by
 * the array ("x" for x.npy in the zip), or the one tensor of a .npy or .pb. *out is malloc'ed: free
 * each tensor with qllc_tensor_free, then the array with free(). */
qllc_status qllc_tensor_read_all(const char *path, qllc_tensor **out, int *n, qllc_diag *diag);
/* The tensor for the input called `name` in the file at path: a .npy's or .pb's tensor, or of an .npz the
 * array called `name` (or its only array; none of that name among several is QLLC_ERR_INVALID naming
 * the arrays). Free with qllc_tensor_free. */
qllc_status qllc_tensor_read_named(const char *path, const char *name, qllc_tensor *out, qllc_diag *diag);
/* Writes n tensors as an uncompressed .npz, each array named by its tensor's name (which must be set and
 * distinct); np.load reads it. */
qllc_status qllc_tensor_write_npz(const char *path, const qllc_tensor *ts, int n, qllc_diag *diag);

const char *qllc_status_name(qllc_status s);
const char *qllc_elem_name(qllc_elem_kind k); /* "f32", "i8", ... */
size_t qllc_elem_size(qllc_elem_kind k);

/* ---- Options ---------------------------------------------------------------------------------- */

typedef enum qllc_precision { QLLC_PREC_FLOAT = 0, QLLC_PREC_INT8 = 1, QLLC_PREC_INT16 = 2 } qllc_precision;
typedef enum qllc_schema {
  QLLC_SCHEMA_ASYMMETRIC = 0,
  QLLC_SCHEMA_SYMMETRIC,
  QLLC_SCHEMA_SYMMETRIC_UINT8,
  QLLC_SCHEMA_POWER2,
  QLLC_SCHEMA_DEFAULT /* asymmetric at int8, symmetric (z = 0) at int16 (docs/quantization.md) */
} qllc_schema;
/* MSE: the clipping range minimising the expected squared quantization error of the profiled
 * histogram (docs/quantization.md, "Calibration"). */
typedef enum qllc_calibration { QLLC_CAL_MINMAX = 0, QLLC_CAL_PERCENTILE, QLLC_CAL_KL, QLLC_CAL_MSE } qllc_calibration;

/* Compile options. Initialise with qllc_options_init, then set fields. String fields are borrowed
 * for the duration of the call that uses them. */
typedef struct qllc_options {
  /* quantization */
  qllc_precision precision;        /* default float: no quantization */
  qllc_precision weight_precision; /* default = precision; INT8 with INT16 gives the 16x8 mode */
  qllc_schema schema;              /* default QLLC_SCHEMA_DEFAULT: asymmetric int8, symmetric int16 */
  qllc_calibration calibration;    /* default minmax */
  int per_tensor;                  /* weights per tensor instead of per output channel */
  const char *profile_path;        /* profile YAML (required for int8/int16) */
  const char *const *keep_float;   /* op types or node names kept in float */
  int n_keep_float;
  int strict;                      /* any node left in float, bias clipped, or fused layer on the portable
                                     kernel for a feature the named CPU (cpu, features; the JIT: the host)
                                     lacks (or refused AMX), is an error */
  int quantized_io;                /* inputs and outputs stay integer */
  /* target */
  const char *target;              /* "x86_64" (default) or "aarch64" */
  const char *cpu;                 /* NULL: the host CPU for x86_64 JIT, a generic CPU otherwise */
  const char *features;            /* "+f,-g" or NULL */
  int reloc_pic;                   /* 1: position-independent object (default 1) */
  int weights_file;                /* 1: write NAME.weights.bin instead of embedding weights */
  const char *const *kernel_files; /* user bitcode files (--kernels, docs/kernels.md): custom-op kernels
                                      and overrides of built-in kernels by name; made by clang-19 for the
                                      target's triple. Read by describe, compile, JIT and profile */
  int n_kernel_files;
  const char *dump_after;          /* print the IR after this pass to dump_stream (NULL: none) */
  void *dump_stream;               /* FILE *; NULL means stderr */
  /* automatic mixed precision (issue 13; docs/quantization.md, "Mixed precision") */
  double min_sqnr_db;              /* > 0: choose int8, 16x8 or int16 per layer, with as few wide MACs
                                      as the search finds, so that every model output reaches this SQNR
                                      against float on the search samples; 0: off */
  const char *const *search_dataset; /* the samples of that search (data set specs as for
                                      qllc_profile_dataset); NULL: the calibration samples kept in
                                      the profile (its first ones, up to 32; docs/quantization.md), or
                                      for a profile without them samples drawn from its histograms */
  int n_search_dataset;
  const char *precision_map;       /* replay a precision map file (node -> precision), as written by
                                      precision_map_out; exclusive with min_sqnr_db */
  const char *precision_map_out;   /* write the precision chosen for each layer to this file */
  /* kernel variants (since 0.3; docs/targets.md, "Kernel variants") */
  int no_tune;                     /* 1: where the target CPU is this machine (the JIT, cpu "native"), the
                                      rule table chooses each fused layer's variant instead of a measurement */
  const char *tune_cache;          /* a file of variant timings: read, used before measuring, and extended
                                      with what was measured (the same file gives the same choices) */
  /* notes for the user, not errors (since 0.3): e.g. a bundle compiled for the default generic CPU on a
     host whose CPU runs faster kernels. Called with one line of text (no newline); NULL: none. */
  void (*note)(void *ctx, const char *text);
  void *note_ctx;
  /* progress of a long step (since 0.3): the precision search and qllc_compare call it with one short
     line (no newline) that replaces the previous one, and with NULL when the step ends. NULL: none.
     The qllc tool draws it on stderr when stderr is a terminal. */
  void (*progress)(void *ctx, const char *text);
  void *progress_ctx;
} qllc_options;

void qllc_options_init(qllc_options *o);

/* ---- Models ----------------------------------------------------------------------------------- */

typedef struct qllc_model qllc_model;

/* Loads an ONNX model. Dispose with qllc_model_free. Nodes of a non-default domain (custom ops) load
 * without any kernel file (their outputs are typed from the model's value_info); whether a user kernel
 * implements them is checked when the model is described, compiled, JIT-compiled or profiled with
 * opts->kernel_files: an error names the node, the function it needs and the files searched. */
qllc_status qllc_model_load(const char *path, qllc_model **out, qllc_diag *diag);
/* The same with graph inputs bound to compile-time constants (qllc compiles for fixed shapes, and many
 * models take shapes, axes, pads or bounds as graph inputs). Each of the n_bound tensors names a graph
 * input (bound[i].name) and gives its value: its element kind and shape must match the input's
 * declaration (a symbolic dim matches any size; a declared DOUBLE reads as f32 and BOOL as u8, as
 * qllc_tensor_read does) else QLLC_ERR_INVALID naming the input; a name that is not a graph input is an
 * error too. A bound input becomes an initializer before shape inference and folding, so it is no
 * longer an input of the compiled code; integer inputs (int64 shapes ...) may be bound. The tensors
 * are copied; every later use of the model (describe, compile, JIT, profile) sees the same bindings. */
qllc_status qllc_model_load_bound(const char *path, const qllc_tensor *bound, int n_bound, qllc_model **out,
                                  qllc_diag *diag);
void qllc_model_free(qllc_model *m);

/* loading with options. Zero the struct, then set what you need. */
typedef struct qllc_load_options {
  const qllc_tensor *bound;        /* graph inputs bound to constants, as for qllc_model_load_bound */
  int n_bound;
  const qllc_tensor *shapes;       /* input shapes (`--input-shape NAME=1x3x224x224`): each names a graph
                                      input and gives its rank and dims (data unused). A symbolic dim of the
                                      declaration takes the size given; a fixed dim must be given as declared;
                                      the rank must be the declared one. An unknown or bound name, a rank or
                                      fixed-dim mismatch, a size < 1, or a name given twice is QLLC_ERR_INVALID
                                      naming the input */
  int n_shapes;
  void (*note)(void *ctx, const char *text); /* one line (no newline): e.g. the symbolic dims that no shape
                                      pinned and that were taken as 1 (docs/limits.md); NULL: none */
  void *note_ctx;
} qllc_load_options;
/* qllc_model_load_bound with input shapes: every later use of the model sees those shapes. A symbolic
 * dim that no shape pins is taken as 1 (and reported through lo->note), at every axis. lo may be NULL. */
qllc_status qllc_model_load_opts(const char *path, const qllc_load_options *lo, qllc_model **out, qllc_diag *diag);

/* Writes a human-readable description of the model as it will be compiled with `opts`: the graph,
 * every value's type, the precision report and the memory plan. `stream` is a FILE *.
 * With opts->precision int8 or int16, opts->profile_path must name a profile of this model (from
 * qllc_profile_dataset); the same holds for qllc_compile_bundle and qllc_jit_compile. */
qllc_status qllc_model_describe(qllc_model *m, const qllc_options *opts, void *stream, qllc_diag *diag);
/* Writes the model as it will be compiled with `opts` (after the graph passes and quantization) as a
 * Graphviz digraph to `stream` (a FILE *): nodes coloured by precision, edges labelled with type, scale
 * and zero point, fused layers grouped (docs/graph.md). */
qllc_status qllc_model_write_dot(qllc_model *m, const qllc_options *opts, void *stream, qllc_diag *diag);

/* The model's inputs and outputs as the float model computes them (bound inputs are constants, not
 * inputs): name, element kind and shape, data NULL (since 0.3). The pointers stay valid while the model
 * lives; an index out of range gives NULL. A JIT's own (qllc_jit_input) differ only with quantized_io. */
int qllc_model_num_inputs(const qllc_model *m);
int qllc_model_num_outputs(const qllc_model *m);
const qllc_tensor *qllc_model_input(const qllc_model *m, int i);
const qllc_tensor *qllc_model_output(const qllc_model *m, int i);

/* Writes DIR/NAME.o and DIR/NAME.h (and DIR/NAME.weights.bin with opts->weights_file). On failure
 * nothing is left behind in DIR. */
qllc_status qllc_compile_bundle(qllc_model *m, const qllc_options *opts, const char *dir, const char *name,
                                qllc_diag *diag);

/* ---- Profiling (calibration) ------------------------------------------------------------------ */

/* Called after each sample with the number done and the total. */
typedef void (*qllc_progress_fn)(void *ctx, int64_t done, int64_t total);

/* What a profiling run recorded. */
typedef struct qllc_profile_summary {
  int64_t samples;   /* samples run */
  int values;        /* values recorded (every non-constant float value of the optimized graph) */
} qllc_profile_summary;

/* Runs the model's float code on every sample of a data set, instrumented, and writes the profile
 * (docs/quantization.md: per value min, max and a histogram of `bins` bins, 0 = the default 2048; keyed
 * by value name, with the graph's hash) to `out_yaml` (written under a temporary name, renamed at the
 * end: a failure leaves no file). The model itself is not changed.
 *
 * A dataset spec is one of
 *   FILE.npy (or .pb)  the samples along the leading axis: for an input of shape [1, ...] a tensor of
 *                      shape [S, ...] or [S, 1, ...]; for an input of shape D, [S, D...]; a tensor of
 *                      exactly the input's shape is one sample
 *   DIR                one sample per .npy / .pb file in DIR, in file name order
 *   NAME=SPEC          the same for the input called NAME
 * Specs without a name fill the inputs not named, in model order. Every input needs a spec, and every
 * spec must give the same number of samples. `progress` may be NULL; `summary` may be NULL. */
qllc_status qllc_profile_dataset(qllc_model *m, const char *const *dataset_specs, int n_specs, int bins,
                                 const char *out_yaml, qllc_progress_fn progress, void *progress_ctx,
                                 qllc_profile_summary *summary, qllc_diag *diag);
/* The same with options; only opts->kernel_files / n_kernel_files are read (a model with custom ops, or
 * whose float run should use overridden kernels, needs its user kernels to be profiled). opts may be NULL. */
qllc_status qllc_profile_dataset_opts(qllc_model *m, const qllc_options *opts, const char *const *dataset_specs,
                                      int n_specs, int bins, const char *out_yaml, qllc_progress_fn progress,
                                      void *progress_ctx, qllc_profile_summary *summary, qllc_diag *diag);

/* ---- Compare (where quantization loses accuracy) ---------------------------------------------- */

/* One value of the model, float against quantized. */
typedef struct qllc_compare_row {
  const char *value;      /* ONNX value name */
  const char *node;       /* the node of the quantized graph that produced it */
  const char *op;         /* its op type */
  char types[48];         /* what that node computes: "i8 x i8 -> i8", "i16 -> i16", "f32" (kept in float) */
  qllc_elem_kind elem;    /* the value's element kind in the quantized graph */
  float scale;            /* its scale and zero point (1 and 0 for f32) */
  int32_t zero_point;
  int is_output;          /* a model output */
  int64_t count;          /* elements compared (every sample) */
  double sqnr_db;         /* 10 log10(sum f^2 / sum (q - f)^2), f float, q quantized (dequantized); +inf exact */
  double max_abs_err;     /* max |q - f| */
  double saturated;       /* share of elements whose float value lies outside the integer range (clipped) */
  double signal_rms;      /* sqrt(mean f^2) */
  double grid_sqnr_db;    /* the SQNR of the float value rounded to this value's own grid (its scale, zero
                             point and range): the best any computation ending on this grid can do; a
                             row within ~1 dB of it is limited by its grid, not by the layers before */
} qllc_compare_row;

typedef struct qllc_compare_result {
  int64_t samples;        /* samples run */
  int drawn;              /* 0: the data set; 2: the calibration samples kept in the profile (no data set
                             given); 1: drawn from the profile's input histograms (no data set, and a
                             profile without samples) */
  int n_rows;
  qllc_compare_row *rows; /* the model outputs first, then every other value; each group worst first */
} qllc_compare_result;

/* Runs the float model and the model quantized as opts asks (opts->precision int8 or int16 and a
 * profile; quantized_io is ignored) on the same samples, every intermediate value exposed, and compares
 * them value by value. dataset_specs as for qllc_profile_dataset; none (n_specs 0): the calibration
 * samples kept in the profile (its first ones, up to 32), or, for a profile without them, `max_samples`
 * samples (0: 32) drawn from the profile's histograms of the inputs. max_samples > 0 also caps a data
 * set or the kept samples. Dispose of *out with qllc_compare_result_free. */
qllc_status qllc_compare(qllc_model *m, const qllc_options *opts, const char *const *dataset_specs, int n_specs,
                         int64_t max_samples, qllc_compare_result **out, qllc_diag *diag);
void qllc_compare_result_free(qllc_compare_result *r);

/* ---- JIT -------------------------------------------------------------------------------------- */

typedef struct qllc_jit qllc_jit;

/* Compiles the model in-process for the host. Dispose with qllc_jit_free. */
qllc_status qllc_jit_compile(qllc_model *m, const qllc_options *opts, qllc_jit **out, qllc_diag *diag);
void qllc_jit_free(qllc_jit *j);

int qllc_jit_num_inputs(const qllc_jit *j);
int qllc_jit_num_outputs(const qllc_jit *j);
/* Describes input/output i (data == NULL). The pointers stay valid while the JIT lives. */
const qllc_tensor *qllc_jit_input(const qllc_jit *j, int i);
const qllc_tensor *qllc_jit_output(const qllc_jit *j, int i);

/* Runs once. `inputs` are matched by name (or by position when names are NULL); float inputs are
 * quantized on entry unless the model was compiled with quantized_io. `outputs` must have room for
 * qllc_jit_num_outputs() tensors; each is filled and must be freed with qllc_tensor_free.
 * Thread safety: any number of threads may call qllc_jit_run on the same JIT at once; each call works
 * in its own input/output and scratch memory (taken from a pool the JIT keeps: a thread that calls
 * repeatedly reuses memory, a new concurrent call allocates one more set). qllc_jit_free must not run
 * while a call is in progress. */
qllc_status qllc_jit_run(qllc_jit *j, const qllc_tensor *inputs, int n_inputs, qllc_tensor *outputs,
                         qllc_diag *diag);

/* Runs every sample of a data set through the JIT, one after the other (dataset_specs as for
 * qllc_profile_dataset; the JIT's inputs must be float). outputs[i] (room for qllc_jit_num_outputs())
 * gets output i of every sample, stacked along a new leading axis ([S, dims of the output...]), the same
 * bytes as S calls of qllc_jit_run; free each with qllc_tensor_free. *samples (may be NULL) gets S.
 * progress may be NULL. */
qllc_status qllc_jit_run_dataset(qllc_jit *j, const char *const *dataset_specs, int n_specs, qllc_progress_fn progress,
                                 void *progress_ctx, qllc_tensor *outputs, int64_t *samples, qllc_diag *diag);

/* ---- Benchmark (qllc bench) ------------------------------------------------------------------- */

/* One kernel call of the compiled program. */
typedef struct qllc_bench_layer {
  const char *node;   /* the ONNX node it computes */
  const char *op;     /* its op type */
  const char *kernel; /* the kernel function (variant) it calls */
  double ns;          /* its time in the instrumented build: the mean over the middle half of the runs,
                         ranked by their total (so the layers add up to layers_ns) */
  double ops;         /* arithmetic operations per call: 2 per multiply-accumulate of a Conv, Gemm, MatMul or
                         FullyConnected layer; 0 for other layers (no GOPS shown) */
} qllc_bench_layer;

typedef struct qllc_bench_result {
  char cpu[64];                     /* the CPU the code was compiled for (LLVM's name, e.g. "znver4") */
  int runs;
  double median_ns, min_ns, p90_ns; /* the compiled program per inference (JIT, not instrumented; without the
                                       input and output copies qllc_jit_run adds) */
  double layers_ns;                 /* the instrumented build's first kernel to last, the mean over the middle
                                       half of its runs ranked by this total, less the stamps' cost */
  double stamp_ns;                  /* what one time stamp costs (two clock reads in a row, median), taken off
                                       each layer's time (a layer shorter than the noise of that can show 0 or
                                       less) */
  int n_layers;
  qllc_bench_layer *layers;         /* one per kernel call, in program order */
} qllc_bench_result;

/* JIT-compiles the model as qllc_jit_compile does, then times `runs` calls (after `warmup` untimed ones)
 * on the inputs (matched as by qllc_jit_run; n_inputs 0: fixed pseudo-random floats in [0, 1), zeros for
 * integer inputs); and builds the same program again with a time stamp around each kernel call
 * (docs/benchmarks.md), run as often, interleaved with the first, for the per-layer times.
 * Dispose of *out with qllc_bench_result_free. */
qllc_status qllc_bench(qllc_model *m, const qllc_options *opts, const qllc_tensor *inputs, int n_inputs, int runs,
                       int warmup, qllc_bench_result **out, qllc_diag *diag);
void qllc_bench_result_free(qllc_bench_result *r);

#ifdef __cplusplus
}
#endif
#endif
