/* src/lower/lower.h: the instruction IR.
 *
 * A qllc_program is a list of kernel calls over explicit buffers. Lowering (graph -> program) picks
 * the kernel for each node by name (qllc_k_<op>_<in>_<w>_<out>), computes every shape-derived
 * argument as an immediate or a small constant buffer, makes reshape-like ops views of their input's
 * buffer, and plans activation memory by liveness so buffers whose lifetimes do not overlap share
 * bytes. llvmgen then emits one call per instruction without knowing any op.
 *
 * Memory regions (the bundle's three arguments):
 *   CONST   weights and small constant arrays; in the object by default, else in constant_weights
 *   MUTABLE model inputs and outputs (each at its own offset; never shared)
 *   ACT     activations: scratch, reused across layers according to the liveness plan
 * All offsets are multiples of QLLC_MEM_ALIGN.
 */
#ifndef QLLC_LOWER_H
#define QLLC_LOWER_H

#include "../ir/ir.h"

#define QLLC_MEM_ALIGN 64

typedef enum qllc_region { QLLC_REGION_CONST = 0, QLLC_REGION_MUTABLE, QLLC_REGION_ACT } qllc_region;

typedef struct qllc_buffer {
  int id;
  const char *name;           /* the value name it was made for (or a made-up name) */
  qllc_region region;
  qllc_elem elem;
  uint64_t size;              /* bytes */
  uint64_t offset;            /* bytes within its region (set by the memory plan for ACT) */
  const void *data;           /* CONST: the payload (size bytes) */
  qllc_value *value;          /* the graph value, when there is one */
  int first_use, last_use;    /* instruction indices (liveness), ACT only */
  int nhwc;                   /* an activation held channel-last (NHWC) between kernels that take it (the
                                 layout pass, layout.c); 0: the value's own layout (NCHW) */
} qllc_buffer;

typedef enum qllc_arg_kind {
  QLLC_ARG_BUF,               /* pointer to buf + byte_offset */
  QLLC_ARG_NULL,              /* a null pointer (absent optional input, e.g. no bias) */
  QLLC_ARG_INT,               /* integer immediate, converted to the parameter's integer width */
  QLLC_ARG_FLOAT              /* float immediate, converted to the parameter's float type */
} qllc_arg_kind;

typedef struct qllc_arg {
  qllc_arg_kind kind;
  qllc_buffer *buf;
  uint64_t byte_offset;
  int64_t i;
  double f;
} qllc_arg;

typedef struct qllc_instr {
  const char *kernel;         /* function name in the kernel bitcode */
  const char *why;            /* for a fused layer: why this kernel and not a faster variant (arena; may be NULL) */
  int reference_for_cpu;      /* a fused layer on its portable reference kernel because the target CPU lacks
                                 a feature every ISA variant of it needs (--strict refuses it) */
  const char *mode;           /* for a fused layer: what its packed constants select in the kernel, e.g.
                                 "int32 sums: 60 of 64 output channels" (arena; NULL: nothing to say) */
  int n_args;
  qllc_arg *args;
  const qllc_node *node;      /* the graph node it implements (for diagnostics and reports) */
  unsigned char converts;     /* layout conversions left inside the kernel (layout.c): QLLC_CONV_IN (its NCHW
                                 input into 4-channel planes), QLLC_CONV_OUT (its output transposed to NCHW) */
  unsigned char nhwc_only;    /* a fused layer on a row taken only for its channel-last ends (pack.h's
                                 predicates: 2); lower.c lowers again without it where an end stayed NCHW */
} qllc_instr;
enum { QLLC_CONV_IN = 1, QLLC_CONV_OUT = 2 };

typedef struct qllc_io_desc {
  qllc_value *value;          /* graph input or output */
  qllc_buffer *buf;           /* its MUTABLE buffer */
} qllc_io_desc;

typedef struct qllc_program {
  qllc_graph *graph;          /* borrowed; must outlive the program */
  qllc_arena *arena;          /* owned: everything below */
  int n_buffers, cap_buffers;
  qllc_buffer **buffers;
  int n_instrs, cap_instrs;
  qllc_instr *instrs;
  int n_inputs, n_outputs;
  qllc_io_desc *inputs, *outputs;
  uint64_t const_size;        /* bytes of the CONST region when laid out as a file */
  uint64_t mutable_size;
  uint64_t act_size;          /* peak of the memory plan */
  uint64_t act_sum;           /* sum of all activation buffers (what no reuse would cost) */
} qllc_program;

/* The CPU a program is lowered for, as far as kernel selection needs it: the architecture
 * ("x86_64", "aarch64"), the CPU name, and its features as LLVM spells them ("+avx2,+avx512vnni,-amx-tile":
 * the CPU's own features first, then the user's --features; the last mention of a feature wins). */
typedef struct qllc_lower_target {
  const char *arch;
  const char *cpu;
  const char *features;
  /* when not NULL: 1 if the user's --kernels files define this kernel name, whose layers then call it
     (an override of a reference kernel is never bypassed by a variant) */
  int (*user_defines)(void *ctx, const char *kernel);
  void *user_ctx;
  /* Measured choice (src/driver/tune.c), for a target CPU that is this machine. When not NULL, asked for
     each fused layer that more than one catalogue row could run on the CPU: cands[0] is the rule table's
     choice, the others follow in catalogue order; shape describes the layer ("conv N C H W M OH OW KH KW
     sh sw pt pl pb pr dh dw group" or "fc M N K"). Returns the index of the row to run (and fills why for
     the report), or -1 for the rule's choice. */
  int (*choose)(void *ctx, const qllc_node *n, const char *shape, const char *const *cands, int n_cands, char *why,
                size_t why_size);
  void *choose_ctx;
} qllc_lower_target;

/* Lowers a verified graph (float, or quantized by src/quant) to a program. Dispose with
 * qllc_program_free. Errors name the node. With a target, each fused quantized layer runs the catalogue
 * row (targets/<arch>/kernels/variants.def) the rule table or the target's choose hook picks among those
 * the target has, its weights packed at compile time; without one (NULL), the scalar reference kernels,
 * which every target has. */
qllc_status qllc_lower_for(qllc_graph *g, const qllc_lower_target *t, qllc_program **out, qllc_diag *diag);
qllc_status qllc_lower(qllc_graph *g, qllc_program **out, qllc_diag *diag); /* qllc_lower_for(g, NULL, ...) */

/* 1 when the feature string f ("+a,-b,...", the last mention wins) enables every name of the
 * comma-separated list `need`; else 0 and the missing names ("a, b") in missing. */
int qllc_lower_has_features(const char *f, const char *need, char *missing, size_t size);

/* Registry rows, for tests and tools: the number of ISA variants, and row i's kernel name, its
 * reference kernel and architecture (NULL past the end). */
int qllc_lower_variant_count(void);
const char *qllc_lower_variant_name(int i, const char **ref, const char **arch);

/* Reference kernel rows, for tests and tools: the number of rows, and row i's name with its stem and
 * element names ("none" for an absent <w>) (NULL past the end). */
int qllc_lower_kernel_count(void);
const char *qllc_lower_kernel_name(int i, const char **stem, const char **in, const char **w, const char **out);
/* The role names of kernel's parameters in order (a variant: its reference's, then "SCRATCH"): the
 * count (at most max names written), or -1 when the registry has no such kernel. */
int qllc_lower_kernel_roles(const char *kernel, const char **names, int max);

/* --strict's check of the kernel choice: QLLC_ERR_STRICT naming the first fused layer left on its portable
 * reference kernel because the target CPU lacks every variant's features (qllc_instr.reference_for_cpu). */
qllc_status qllc_program_check_portable(const qllc_program *p, qllc_diag *diag);

/* "node NAME (OpType): kernel  (mode)  [why]" lines for every fused layer of p (mode and why when set) (malloc'ed, free() it; NULL on
 * out of memory; "" when p has none). */
char *qllc_program_kernel_report(const qllc_program *p);
void qllc_program_free(qllc_program *p);

/* Activation layouts (layout.c): each activation channel-last (NHWC) where every kernel that writes or
 * reads it takes that layout, else NCHW; sets qllc_buffer.nhwc, the layout arguments of the kernels that
 * take them, and qllc_instr.converts. Called by qllc_lower before liveness. */
qllc_status qllc_pass_layout(qllc_program *p, qllc_diag *diag);
/* The layout section of `qllc info`: the activations held NHWC and the conversions left inside kernels,
 * with their count (malloc'ed, free() it; NULL on out of memory). */
char *qllc_program_layout_report(const qllc_program *p);

/* Liveness-based placement of ACT buffers; sets offset of each and p->act_size. Called by qllc_lower. */
qllc_status qllc_pass_memory_plan(qllc_program *p, qllc_diag *diag);

void qllc_program_print(const qllc_program *p, FILE *f);

/* The kernel lowering will call for node n once quantized with input kind `in`, weight (or second
 * input) kind `w` (QLLC_ELEM_COUNT: none) and output kind `out`, e.g. "qllc_k_conv2d_i8_i8_i8": what the
 * quantizer's target query looks up. Returns 0, or -1 when buf is too small. */
int qllc_lower_quant_kernel_name(const qllc_node *n, qllc_elem in, qllc_elem w, qllc_elem out, char *buf,
                                 size_t size);
/* 1 when the kernel catalogue has that kernel for node n (its op's QOP row and a QKERNEL row of the
 * name above): the quantizer's "is there a kernel" query, answered without a bitcode lookup. */
int qllc_lower_has_quant_kernel(const qllc_node *n, qllc_elem in, qllc_elem w, qllc_elem out);

/* qllc_custom_kernel_name, the user kernel a CUSTOM node calls, is declared in src/ir/ir.h. */

#endif
