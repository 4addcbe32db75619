/* src/ir/ir.h: the graph IR and the pieces every module shares (arena, diagnostics, element traits).
 *
 * A qllc_graph owns an arena; every value, node, attribute and constant payload is allocated from it
 * and freed with the graph (qllc_graph_free). Passes never free single nodes: they mark them dead and
 * call qllc_graph_compact. Nodes are kept in a valid topological order at all times.
 *
 * Every value carries its element kind, shape, and (when quantized) scale and zero point, per tensor
 * or per channel. Every node remembers the ONNX node it came from (name, index) so errors can name it.
 */
#ifndef QLLC_IR_H
#define QLLC_IR_H

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>

#include "qllc.h"

/* ---- element kinds ---------------------------------------------------------------------------- */

typedef enum qllc_elem {
#define ELEM(E, id, size, name) QLLC_ELEM_##E = id,
#include "elem.def"
#undef ELEM
  QLLC_ELEM_COUNT
} qllc_elem;

/* qllc_elem_size / qllc_elem_name are declared in qllc.h and take the same numbers. */
int qllc_elem_parse(const char *name, qllc_elem *out); /* "i8" -> QLLC_ELEM_I8; 0 on success */

/* ---- diagnostics ------------------------------------------------------------------------------ */

/* Fills diag (when not NULL) and returns status. `node` may be NULL. printf-style message. */
qllc_status qllc_fail(qllc_diag *diag, qllc_status status, const char *node, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* Sets diag->file (when not NULL and not already set). Returns diag->status or QLLC_OK. */
void qllc_diag_set_file(qllc_diag *diag, const char *file);

/* ---- files the user named (outfile.c; docs/limits.md, "Files qllc writes") ------------------------ */

/* A file being written. An existing path that is not a regular file (a device, a FIFO; symlinks
 * followed) is written in place; a regular file or a new path goes to a unique temporary in the same
 * directory, renamed over the final file (a symlink's target) by qllc_outfile_commit. */
typedef struct qllc_outfile {
  FILE *f;     /* write here */
  char *tmp;   /* the temporary (NULL when in place) */
  char *final; /* what tmp is renamed to */
  char *user;  /* the path as given (for errors) */
  int in_place;
} qllc_outfile;
/* Opens path for writing; on failure diag names the file and nothing is left behind. */
qllc_status qllc_outfile_open(qllc_outfile *o, const char *path, qllc_diag *diag);
/* Closes, checks every write, renames; on failure removes the temporary and names the file. */
qllc_status qllc_outfile_commit(qllc_outfile *o, qllc_diag *diag);
/* Closes and removes the temporary (the final path keeps what it had); safe on a zeroed or closed o. */
void qllc_outfile_abort(qllc_outfile *o);
/* "DIR/.BASE.tmp-PID-N" for path "DIR/BASE", unique per call in this process (malloc'ed; NULL on OOM). */
char *qllc_outfile_tmp_name(const char *path);

/* ---- checked sizes (docs/limits.md) ----------------------------------------------------------- */

/* The largest tensor qllc accepts, in bytes (2^48 = 256 TiB): far above any real model, far below the
 * 64-bit wrap, so byte sizes of values, offsets and sums of a few of them never overflow. Checked at
 * load for every initializer, graph input and inferred value. Ranks are at most QLLC_MAX_RANK (qllc.h). */
#define QLLC_MAX_TENSOR_BYTES ((int64_t)1 << 48)

/* *out = a * b (resp. a + b) for counts and byte sizes. Returns 0, or -1 (and leaves *out alone) when an
 * operand is negative or the result does not fit in int64_t. Callers turn -1 into an error naming the
 * node or value. */
int qllc_mul_size(int64_t a, int64_t b, int64_t *out);
int qllc_add_size(int64_t a, int64_t b, int64_t *out);
/* The byte size of a dense tensor of `elem` and dims[0..rank): 0, or -1 when the rank is out of
 * [0, QLLC_MAX_RANK], a dim is negative, or the size overflows or exceeds QLLC_MAX_TENSOR_BYTES. */
int qllc_shape_bytes(qllc_elem elem, int rank, const int64_t *dims, int64_t *bytes);

/* ---- bounded file reading (docs/limits.md) ---------------------------------------------------- */

/* The most bytes qllc reads from each kind of input file. */
#define QLLC_MAX_MODEL_FILE_BYTES ((uint64_t)2 << 30)    /* an ONNX model: 2 GiB, protobuf's own limit */
#define QLLC_MAX_KERNEL_FILE_BYTES ((uint64_t)256 << 20) /* a --kernels bitcode file: 256 MiB */
#define QLLC_MAX_TEXT_FILE_BYTES ((uint64_t)256 << 20)   /* a precision map, profile or tuning cache */
#define QLLC_MAX_PB_TENSOR_FILE_BYTES ((uint64_t)2 << 30) /* a TensorProto .pb: 2 GiB, as a model */
#define QLLC_NPY_SLACK_BYTES ((uint64_t)64 << 10)         /* a .npy: its header, its data, and 64 KiB more */
/* The deepest nesting of length-delimited protobuf fields in a model file: ModelProto > GraphProto >
 * NodeProto > AttributeProto > GraphProto ... Real models nest a few levels (a Loop in an If in a
 * Loop is about 12); protobuf-c's unpack recurses once per level, so a deeper file is refused before. */
#define QLLC_MAX_PROTO_DEPTH 64

/* Reads the file at path whole into a new buffer (*out, free() it; NUL-terminated after *len bytes).
 * `what` names the kind of file in errors ("model", "kernel file"). At most `limit` bytes: a larger file
 * (regular or not: /dev/zero, a FIFO) is an error naming the file and the limit, after reading at most
 * limit + 1 bytes. The _ex form calls refine(head, n, ctx, limit) once with the first 64 KiB (or the
 * whole file, when smaller) and uses the limit it returns (a tensor's size from its header) when it is
 * lower; QLLC_READ_STOP stops reading there and returns those bytes (the caller reports their error). */
#define QLLC_READ_STOP UINT64_MAX
typedef uint64_t (*qllc_read_limit_fn)(const uint8_t *head, size_t n, void *ctx, uint64_t limit);
qllc_status qllc_read_file(const char *path, const char *what, uint64_t limit, uint8_t **out, size_t *len,
                           qllc_diag *diag);
/* For a refine function of a protobuf file: -1 when head[0..n) is not the start of any protobuf message
 * (a field number 0 or a group; /dev/zero), else 0. */
int qllc_proto_head_check(const uint8_t *head, size_t n);
qllc_status qllc_read_file_ex(const char *path, const char *what, uint64_t limit, qllc_read_limit_fn refine,
                              void *ctx, uint8_t **out, size_t *len, qllc_diag *diag);

/* ---- arena ------------------------------------------------------------------------------------ */

typedef struct qllc_arena qllc_arena;
qllc_arena *qllc_arena_new(void); /* dispose: qllc_arena_free */
void qllc_arena_free(qllc_arena *a);
void *qllc_arena_alloc(qllc_arena *a, size_t size);  /* zeroed, 16-byte aligned; NULL only on OOM */
void *qllc_arena_memdup(qllc_arena *a, const void *p, size_t size);
char *qllc_arena_strdup(qllc_arena *a, const char *s);
char *qllc_arena_printf(qllc_arena *a, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* ---- values and nodes ------------------------------------------------------------------------- */

typedef enum qllc_op {
#define OP(E, onnx, min_in, max_in, max_out) QLLC_OP_##E,
#include "ops.def"
#undef OP
  QLLC_OP_COUNT
} qllc_op;

const char *qllc_op_name(qllc_op op);         /* the ONNX op type, e.g. "Conv" */
int qllc_op_lookup(const char *onnx_op_type); /* -1 when unknown */

typedef struct qllc_node qllc_node;

typedef struct qllc_value {
  int id;                     /* index in graph->values */
  const char *name;           /* ONNX value name (unique in the graph) */
  qllc_elem elem;
  int rank;
  int64_t dims[QLLC_MAX_RANK];
  /* quantization (elem != F32): per tensor when q_axis < 0, else per channel along q_axis */
  float scale;
  int32_t zero_point;
  int q_axis;                 /* -1: per tensor */
  int64_t q_count;            /* channels when per channel */
  float *q_scales;            /* [q_count], arena */
  int32_t *q_zero_points;     /* [q_count], arena */
  void *data;                 /* constant payload (row-major, elem-typed), arena; NULL if computed */
  qllc_node *producer;        /* NULL for graph inputs and constants */
  int is_input;               /* graph input (not an initializer) */
  int is_output;              /* graph output */
  int n_uses;                 /* maintained by qllc_graph_recount_uses */
} qllc_value;

typedef enum qllc_attr_kind {
  QLLC_ATTR_INT,
  QLLC_ATTR_FLOAT,
  QLLC_ATTR_STRING,
  QLLC_ATTR_INTS,
  QLLC_ATTR_FLOATS,
  QLLC_ATTR_TENSOR
} qllc_attr_kind;

typedef struct qllc_attr {
  const char *name;
  qllc_attr_kind kind;
  int64_t i;
  float f;
  const char *s;
  int n;                      /* count for INTS / FLOATS */
  int64_t *ints;
  float *floats;
  qllc_value *t;              /* TENSOR: a constant value not in graph->values */
} qllc_attr;

/* Fused activation of Conv/Gemm/FC/MatMul nodes: y = clamp(y, act_lo, act_hi). */
typedef enum qllc_act { QLLC_ACT_NONE = 0, QLLC_ACT_RELU, QLLC_ACT_CLIP } qllc_act;

struct qllc_node {
  qllc_op op;
  const char *name;           /* ONNX node name, or "<OpType>#<index>" when the model has none */
  int onnx_index;             /* index in the ONNX graph's node list; -1 for nodes made by passes */
  const char *domain;         /* "" for the default domain */
  const char *op_type;        /* the ONNX op type as written in the model */
  int n_in;
  qllc_value **in;            /* an absent optional input is NULL */
  int n_out;
  qllc_value **out;
  int n_attr;
  qllc_attr *attrs;
  qllc_act act;
  float act_lo, act_hi;       /* valid when act != NONE (RELU: 0, +inf) */
  int keep_float;             /* set by the quantizer: the node stays in float */
  const char *float_reason;   /* why (for the precision report) */
  void *quant;                /* src/quant's per-node data (see src/quant/quant.h); NULL in float */
  int dead;                   /* removed by a pass; dropped by qllc_graph_compact */
};

typedef struct qllc_graph {
  qllc_arena *arena;
  const char *path;           /* the model file, for diagnostics */
  const char *graph_name;
  int64_t opset;              /* default-domain opset version */
  int n_values, cap_values;
  qllc_value **values;
  int n_nodes, cap_nodes;
  qllc_node **nodes;          /* topological order */
  int n_inputs;
  qllc_value **inputs;        /* graph inputs, in ONNX order (initializers excluded) */
  int n_outputs;
  qllc_value **outputs;       /* graph outputs, in ONNX order */
  int64_t const_bytes;        /* bytes of the constants made by qllc_const_new (initializers, tensor attributes) */
  int64_t fold_bytes;         /* bytes constant folding has made so far (qllc_fold_alloc) */
} qllc_graph;

qllc_graph *qllc_graph_new(const char *path); /* dispose: qllc_graph_free */
/* An in-memory copy of an optimized graph (graph_copy.c): same values (ids, names, constant bytes), nodes,
 * attributes, inputs and outputs, so the same hash; the copy owns all its memory (dispose:
 * qllc_graph_free). UNSUPPORTED for a graph with quantization records (a pre-quantized model): load the
 * file again instead. */
qllc_status qllc_graph_copy(const qllc_graph *src, qllc_graph **out, qllc_diag *diag);
/* A new graph of `copies` copies of each of the n_nodes nodes (made[i * copies + j]: copy j of nodes[i],
 * named "NAME#j"): their non-constant inputs become graph inputs (one per source value, shared by the
 * copies), their constant inputs are copied, each copy's outputs are its own graph outputs ("VALUE#j").
 * The copies share the source nodes' quantization records: the source graph must outlive the extract.
 * For running one layer alone (variant tuning, src/driver/tune.c). Dispose with qllc_graph_free. */
qllc_status qllc_graph_extract(const qllc_graph *src, const qllc_node *const *nodes, int n_nodes, int copies,
                               qllc_graph **out, qllc_node **made, qllc_diag *diag);
void qllc_graph_free(qllc_graph *g);

/* Creates a value with a unique name (a suffix is added if `name` is taken; NULL makes one up). NULL on
 * OOM or when the shape fails qllc_shape_bytes (callers that take dims from a file check it first, to
 * name the value in the error). */
qllc_value *qllc_value_new(qllc_graph *g, const char *name, qllc_elem elem, int rank, const int64_t *dims);
/* Creates a constant value; `data` is copied into the arena. */
qllc_value *qllc_const_new(qllc_graph *g, const char *name, qllc_elem elem, int rank, const int64_t *dims,
                           const void *data);
qllc_value *qllc_graph_find_value(qllc_graph *g, const char *name);
/* For passes that rewrite a constant operand (BatchNorm folding, FC weight transposes): a constant of
 * shape dims[rank] with fresh zeroed f32 data to write into — `old` itself when its one user is the
 * node being rewritten (the model's name is kept), else a new constant named after it (`name` when
 * old is NULL). Read old->data before calling: it is replaced. NULL on OOM. */
qllc_value *qllc_const_rewrite(qllc_graph *g, qllc_value *old, const char *name, int rank, const int64_t *dims);
/* Element count and byte size. Every value in a graph has a shape that passed qllc_shape_bytes (at
 * creation and after inference), so these never wrap; a shape that does not pass (a graph broken by a
 * caller) gives INT64_MAX / SIZE_MAX, which no allocation satisfies, never a small number. */
int64_t qllc_value_numel(const qllc_value *v);
size_t qllc_value_bytes(const qllc_value *v);
int qllc_value_is_const(const qllc_value *v);
void qllc_value_copy_type(qllc_value *dst, const qllc_value *src); /* elem, shape and quant params */

/* Creates a node and appends it at the end of the node list (use qllc_graph_insert_before to place it). */
qllc_node *qllc_node_new(qllc_graph *g, qllc_op op, const char *name, int n_in, int n_out);
void qllc_graph_insert_before(qllc_graph *g, qllc_node *n, const qllc_node *before);
/* Replaces every use of `from` (node inputs and graph outputs) by `to`, except in the node that
 * produces `to` (which would become a cycle). */
void qllc_graph_replace_uses(qllc_graph *g, qllc_value *from, qllc_value *to);
void qllc_graph_compact(qllc_graph *g);   /* drops dead nodes and unused non-io values */
void qllc_graph_recount_uses(qllc_graph *g);
/* Nodes that consume v (up to max); returns the total count. */
int qllc_value_users(const qllc_graph *g, const qllc_value *v, qllc_node **users, int max);

/* Attribute accessors (default returned when the attribute is absent). */
const qllc_attr *qllc_node_attr(const qllc_node *n, const char *name);
int64_t qllc_attr_int(const qllc_node *n, const char *name, int64_t dflt);
float qllc_attr_float(const qllc_node *n, const char *name, float dflt);
const char *qllc_attr_string(const qllc_node *n, const char *name, const char *dflt);
/* INTS attribute: returns its count and sets *out (NULL and 0 when absent). */
int qllc_attr_ints(const qllc_node *n, const char *name, const int64_t **out);
qllc_attr *qllc_node_set_attr_int(qllc_graph *g, qllc_node *n, const char *name, int64_t v);
qllc_attr *qllc_node_set_attr_ints(qllc_graph *g, qllc_node *n, const char *name, int count, const int64_t *v);
qllc_attr *qllc_node_set_attr_float(qllc_graph *g, qllc_node *n, const char *name, float v);
qllc_attr *qllc_node_set_attr_floats(qllc_graph *g, qllc_node *n, const char *name, int count, const float *v);
qllc_attr *qllc_node_set_attr_string(qllc_graph *g, qllc_node *n, const char *name, const char *s);
/* The slot for attribute `name` (cleared, kind to be set by the caller), appended when absent. */
qllc_attr *qllc_node_attr_slot(qllc_graph *g, qllc_node *n, const char *name);
void qllc_node_remove_attr(qllc_node *n, const char *name);

/* Appends v to g->inputs (sets is_input) / g->outputs (sets is_output). 0 on success, -1 on OOM. */
int qllc_graph_add_input(qllc_graph *g, qllc_value *v);
int qllc_graph_add_output(qllc_graph *g, qllc_value *v);

/* ---- import, checks, printing ----------------------------------------------------------------- */

/* Loads an ONNX file: protobuf-c decode, initializers and Constant nodes to constants, op table
 * dispatch, shape inference for every value, constant folding of shape subgraphs. On failure returns
 * NULL in *out and a diagnostic naming the file (and node). Dispose with qllc_graph_free. */
qllc_status qllc_onnx_load(const char *path, qllc_graph **out, qllc_diag *diag);
/* The same with graph inputs bound to constants: each tensor of `bound` (n_bound of them) names a graph
 * input, whose declared element type and shape it must match (a symbolic dim matches any size); the
 * input becomes a constant before shape inference and folding. A name that is not a graph input, or
 * is bound twice, is an error. The tensors are copied. */
qllc_status qllc_onnx_load_bound(const char *path, const qllc_tensor *bound, int n_bound, qllc_graph **out,
                                 qllc_diag *diag);
/* The same with input shapes (qllc_load_options.shapes in include/qllc.h: name, rank, dims): a symbolic
 * dim of a graph input takes the size given for it, a fixed one must equal it. A symbolic leading dim
 * with no shape given is taken as 1 and listed in `pinned` ("'x' axis 0 ('batch'), ...", "" when none;
 * pinned may be NULL); any other symbolic dim without one is an error. */
qllc_status qllc_onnx_load_shaped(const char *path, const qllc_tensor *bound, int n_bound, const qllc_tensor *shapes,
                                  int n_shapes, char *pinned, size_t pinned_size, qllc_graph **out, qllc_diag *diag);

/* Infers the output element kinds and shapes of one node from its inputs (and constant inputs such as
 * Reshape's shape). Used by the importer and by passes that make nodes. */
qllc_status qllc_infer_node(qllc_graph *g, qllc_node *n, qllc_diag *diag);

/* Brings a node's attributes into the one form later stages read (see the table at the top of
 * src/ir/infer.c): defaults made explicit, auto_pad/ceil_mode resolved into pads, constant operand
 * inputs (axes, pads, min/max, shape) turned into attributes and dropped. Idempotent; qllc_infer_node
 * calls it first. */
qllc_status qllc_normalize_node(qllc_graph *g, qllc_node *n, qllc_diag *diag);
/* Reads a constant integer value (i64, i32, i16, i8, u8) into out[0..max); returns the element count,
 * or -1 when v is not a constant integer tensor or has more than max elements. */
int qllc_value_ints(const qllc_value *v, int64_t *out, int max);
/* Pad (issue 15): the input index output index o reads along one axis; -1 for the constant value. */
int64_t qllc_pad_source(const char *mode, int64_t o, int64_t begin, int64_t dim);
/* Multidirectional (numpy) broadcast of two shapes; returns the result rank, -1 when incompatible. */
int qllc_broadcast_shape(int ra, const int64_t *a, int rb, const int64_t *b, int64_t *out);

/* Constant evaluation (src/ir/const_eval.c): when every input n needs is known at compile time
 * (constants, or only the shape of a value with a known shape, as for Shape), computes n's outputs as
 * constants (n->out[i]->data), marks n dead and sets *folded to 1; otherwise *folded = 0 and the graph
 * is unchanged. Used by the importer for each node and by qllc_pass_fold_constants. */
/* the largest constant folding makes (const_eval.c, const_eval_ext.c) */
#define QLLC_MAX_FOLD_BYTES ((int64_t)1 << 30)
qllc_status qllc_const_eval(qllc_graph *g, qllc_node *n, int *folded, qllc_diag *diag);
/* The folding budget (docs/limits.md): constant folding may make at most QLLC_FOLD_BUDGET_BASE bytes plus
 * QLLC_FOLD_BUDGET_FACTOR times the bytes of the graph's own constants (g->const_bytes), in total over the
 * graph's life, and no single folded constant over QLLC_MAX_FOLD_BYTES. qllc_fold_alloc gives the zeroed
 * buffer for n's output o and charges it to g->fold_bytes (not for Constant, whose value is already one of
 * the graph's constants); over a limit it allocates nothing and is an error naming the node. */
#define QLLC_MAX_FOLD_BYTES ((int64_t)1 << 30)
#define QLLC_FOLD_BUDGET_BASE ((int64_t)64 << 20)
#define QLLC_FOLD_BUDGET_FACTOR 4
qllc_status qllc_fold_alloc(qllc_graph *g, const qllc_node *n, const qllc_value *o, void **out, qllc_diag *diag);

/* Checks arities (from ops.def), that every input is defined before use, shapes and kinds agree,
 * and that quantized values have scales. */
qllc_status qllc_graph_verify(const qllc_graph *g, qllc_diag *diag);

/* Text form of a value's type, e.g. "f32<1 x 3 x 8 x 8>" or "i8[s=0.0039216 z=-128]<1 x 8 x 8 x 16>".
 * Writes at most `size` bytes to buf; returns buf. */
char *qllc_type_str(const qllc_value *v, char *buf, size_t size);
void qllc_graph_print(const qllc_graph *g, FILE *f);

/* ---- graph passes (src/ir/pass_*.c, one file per pass) ------------------------------------------
 * Each pass: qllc_status qllc_pass_<name>(qllc_graph *g, qllc_diag *diag). The float pipeline, in
 * order, is qllc_graph_optimize() (src/ir/pipeline.c): fold_constants, transformer, fold_batchnorm, gemm_to_fc,
 * fuse_activation, eliminate_identity. */
qllc_status qllc_pass_fold_constants(qllc_graph *g, qllc_diag *diag);
qllc_status qllc_pass_fold_batchnorm(qllc_graph *g, qllc_diag *diag);
qllc_status qllc_pass_gemm_to_fc(qllc_graph *g, qllc_diag *diag);
qllc_status qllc_pass_fuse_activation(qllc_graph *g, qllc_diag *diag);
qllc_status qllc_pass_eliminate_identity(qllc_graph *g, qllc_diag *diag);
/* issue 15: LayerNorm and GELU patterns to single ops, Div by a constant to Mul, Split to Slices */
qllc_status qllc_pass_transformer(qllc_graph *g, qllc_diag *diag);
/* 3-D Conv / MaxPool / AveragePool rewritten as 2-D ones (pass_spatial3d.c, issue 15) */
qllc_status qllc_pass_spatial3d(qllc_graph *g, qllc_diag *diag);
/* Runs the float pipeline. When dump_after names a pass, the graph is printed to dump after it. */
qllc_status qllc_graph_optimize(qllc_graph *g, const char *dump_after, FILE *dump, qllc_diag *diag);
/* The names of the passes qllc_graph_optimize runs, in order, NULL-terminated (for --dump-after). */
const char *const *qllc_graph_pass_names(void);

/* The user kernel a CUSTOM node calls (custom_kernel_name.c; docs/kernels.md, "Custom ops"):
 * qllc_k_custom_<D>_<T>_<in..>_<out..> with the node's element kinds; force != QLLC_ELEM_COUNT names the
 * kernel as if every computed float value had that kind (the quantizer's question). 0 on success, -1
 * when it does not fit `size`. */
int qllc_custom_kernel_name(const qllc_node *n, qllc_elem force, char *buf, size_t size);

#endif
