/* src/lower/lower_internal.h: what lower.c (float ops, the dispatch, buffers) shares with lower_q.c
 * (quantized ops), lower_qdq.c and registry.c (the kernel registry, kernels.def, and the generic call
 * emitter). Private to src/lower: other modules include lower.h only. */
#ifndef QLLC_LOWER_INTERNAL_H
#define QLLC_LOWER_INTERNAL_H

#include <string.h>

#include "lower/lower.h"
#include "lower/pack.h"

#define QLLC_LOWER_MAX_ARGS 32

/* The arguments of one kernel call, in the kernel's parameter order. */
typedef struct qllc_lower_args {
  qllc_arg a[QLLC_LOWER_MAX_ARGS];
  int n;
} qllc_lower_args;

struct qllc_lower_ctx;
typedef struct qllc_lower_ctx {
  qllc_graph *g;
  qllc_program *p;
  qllc_diag *diag;
  qllc_buffer **cls;    /* [n_values]: buffer of the alias class rooted at value id (roots only) */
  qllc_buffer **packed; /* [n_values]: FC weights already packed, by the weight value's id */
  const qllc_lower_target *target; /* NULL: reference kernels only */
  int pick_missed;                 /* the last qllc_lower_choose passed over a variant for a missing CPU feature */
  const char *pack_mode;           /* the mode the last variant's packed constants select (qllc_instr.mode) */
  int pick_nhwc_only;              /* the last qllc_lower_choose took a row for its channel-last ends (its
                                      predicate said 2: pack.h), which the layout pass must give it */
  int no_nhwc_only;                /* set by the caller: the layer is refused such a row (in refused) */
  const qllc_node **refused;       /* the layers refused it: they got an NCHW end in an earlier round */
  int n_refused;
} qllc_lower_ctx;

/* ---- registry.c: the kernel registry (kernels.def) ------------------------------------------------ */

/* Argument roles and signatures (kernels.def's QROLE and QSIG rows). */
typedef enum qllc_role {
#define QROLE(r) QLLC_ROLE_##r,
#include "lower/kernels.def"
  QLLC_N_ROLES
} qllc_role;
typedef enum qllc_sig {
#define QSIG(sig, ...) QLLC_SIG_##sig,
#include "lower/kernels.def"
  QLLC_N_SIGS
} qllc_sig;

/* A reference kernel's row (QKERNEL). */
typedef struct qllc_krow {
  const char *name;                /* qllc_k_<stem>_<in>[_<w>]_<out> */
  const char *stem;
  const char *in, *w, *out, *acc;  /* element names; "none" where the kernel has none */
  int sig;                         /* qllc_sig: its parameters' roles */
} qllc_krow;

/* The values of one call's arguments by role (set[r]: v[r] holds one), filled per node and read by
 * qllc_lower_call in the order of the kernel's signature. */
typedef struct qllc_lower_roles {
  qllc_arg v[QLLC_N_ROLES];
  unsigned char set[QLLC_N_ROLES];
} qllc_lower_roles;

static inline qllc_arg *qllc_role_set(qllc_lower_roles *r, qllc_role role, qllc_arg_kind kind) {
  qllc_arg *a = &r->v[role];
  memset(a, 0, sizeof *a);
  a->kind = kind;
  r->set[role] = 1;
  return a;
}
static inline void qllc_role_buf(qllc_lower_roles *r, qllc_role role, qllc_buffer *b, uint64_t off) {
  qllc_arg *a = qllc_role_set(r, role, QLLC_ARG_BUF);
  a->buf = b;
  a->byte_offset = off;
}
static inline void qllc_role_int(qllc_lower_roles *r, qllc_role role, int64_t i) {
  qllc_role_set(r, role, QLLC_ARG_INT)->i = i;
}
static inline void qllc_role_float(qllc_lower_roles *r, qllc_role role, double f) {
  qllc_role_set(r, role, QLLC_ARG_FLOAT)->f = f;
}
static inline void qllc_role_null(qllc_lower_roles *r, qllc_role role) { qllc_role_set(r, role, QLLC_ARG_NULL); }

/* Emits a call of `kernel` with the arguments its registry row lists, taken from rv (a variant: its
 * reference's, then SCRATCH). A role left unset is an internal INVALID error naming the kernel and the
 * role; a kernel the registry lacks is UNSUPPORTED as in qllc_lower_emit; kernel NULL means OOM. */
qllc_status qllc_lower_call(struct qllc_lower_ctx *c, const qllc_node *n, const char *kernel,
                            const qllc_lower_roles *rv);
/* The row of reference kernel `kernel` (NULL: none); 1 when the registry has the kernel or variant. */
const qllc_krow *qllc_lower_row(const char *kernel);
int qllc_lower_known(const char *kernel);
/* The number of arguments the registry says kernel takes (-1: not in the registry). */
int qllc_lower_arity(const char *kernel);
/* The roles of kernel's parameters in order (kernels.def's, a variant's as qllc_lower_call lays them out):
 * the count (at most max written), or -1 when the registry has no such kernel. */
int qllc_lower_kernel_role_ids(const char *kernel, unsigned char *roles, int max);
/* The stem a quantized node calls (kernels.def's QOP rows) and its arity (3: with <w>), NULL when none. */
const char *qllc_lower_q_stem(const qllc_node *n, int *arity);
/* kernel_name.c: the stem an op without a registry row would have, by the naming grammar:
 * "LeakyRelu" -> "leaky_relu", "qllc.Foo" -> "foo" (for messages naming a missing kernel). */
void qllc_lower_op_stem(qllc_op op, char *buf, size_t size);

/* An ISA variant's row of the kernel catalogue (targets/<arch>/kernels/variants.def), expanded. */
typedef struct qllc_kvariant {
  const char *name;         /* qllc_k_<kstem>_<in>_<w>_<out>__<isa> */
  const char *ref;          /* the reference kernel it replaces, qllc_k_<op>_<in>_<w>_<out> */
  const char *arch, *isa;
  const char *features;     /* LLVM feature names it needs, comma-separated */
  int layout;               /* qllc_layout of its packed weights (libjit/bitcode/layouts.h) */
  int esize;                /* input element bytes: 1 (int32 bias, int8 weights) or 2 (int64, int16) */
  qllc_fits_fn *fits;       /* its shape predicate (pack.h) */
  qllc_packer_fn *pack;     /* its layout's packer */
  qllc_vscratch_fn *scratch; /* its scratch bytes */
  int flags;                /* QLLC_VF_* */
} qllc_kvariant;
/* ALT: a direct variant, taken instead of the general row of the same ISA listed after it where its
   predicate takes the layer, and never named in the report.
   NARROW: the same kernel as an earlier row (same function stem and layout) in narrower vectors, for
   CPUs without the wider ISA: not measured against that row where the CPU has both.
   MEASURED: taken only by measurement on the CPU that runs it (the JIT, --cpu native): the rule table
   passes over it, since it was not measured faster on real hardware for the layers it takes. */
enum { QLLC_VF_NONE = 0, QLLC_VF_ALT = 1, QLLC_VF_NARROW = 2, QLLC_VF_MEASURED = 4, QLLC_VF_NHWC = 8,
       QLLC_VF_ALT_NHWC = QLLC_VF_ALT | QLLC_VF_NHWC, /* NHWC: takes LAYOUT_X, LAYOUT_Y after SCRATCH */
       QLLC_VF_ALT_MEASURED = QLLC_VF_ALT | QLLC_VF_MEASURED,   /* an ALT row only a measurement takes */
       QLLC_VF_ALT_NARROW = QLLC_VF_ALT | QLLC_VF_NARROW,       /* an ALT row's kernel in narrower vectors */
       QLLC_VF_NHWC_MEASURED = QLLC_VF_ALT_NHWC | QLLC_VF_MEASURED }; /* an ALT_NHWC row only a measurement takes */

/* The catalogue's row the lowering runs the fused layer of reference kernel `ref` and geometry g on,
 * on c's target: the first row of ref for the target's architecture whose predicate takes g and whose
 * features the target CPU has all of; NULL for the reference itself (no such row, no target, or a user
 * kernel for ref). *why: NULL when the fastest row was chosen, else why not (arena string: the CPU
 * features missing for the faster rows, or the shape); c->pick_missed: a row was passed over for a
 * missing feature. */
/* The channel-last twin of reference kernel `kernel` (kernels.def, QTWIN), NULL when it has none. */
const char *qllc_lower_nhwc_twin(const char *kernel);
/* The catalogue row of variant `kernel` (NULL: not a variant). */
const qllc_kvariant *qllc_lower_variant_of(const char *kernel);
const qllc_kvariant *qllc_lower_choose(struct qllc_lower_ctx *c, const char *ref, const qllc_layer_geom *g,
                                       const char **why);
/* The rows a measurement may choose among for that layer (the target's choose hook): every row of ref
 * whose predicate takes g and whose features the CPU has, in catalogue order, less the NARROW rows of a
 * kernel a wider row already offers; the rule's choice `first` (may be NULL) is put first. Returns the
 * count (at most max). */
int qllc_lower_candidates(struct qllc_lower_ctx *c, const char *ref, const qllc_layer_geom *g,
                          const qllc_kvariant *first, const qllc_kvariant **out, int max);

/* lower_q.c: a fused layer's row (NULL: the reference ref), chosen by the rule table or, where the target
 * has a choose hook, by measurement among qllc_lower_candidates; *why for the report; *scratch the
 * "<node>.scratch" buffer the row sizes. Used by the quantized Conv/FC lowerings and the float FC. */
qllc_status qllc_lower_fused_pick(qllc_lower_ctx *c, const qllc_node *n, const char *ref, const qllc_layer_geom *g,
                                  const qllc_kvariant **v, qllc_buffer **scratch, const char **why);
/* Emits the layer's call: v's (with SCRATCH, and NCHW layouts for an ALT_NHWC row) or ref's, and records
 * why for the report. */
qllc_status qllc_lower_emit_fused(qllc_lower_ctx *c, const qllc_node *n, const char *ref, const qllc_kvariant *v,
                                  qllc_buffer *scratch, const char *why, qllc_lower_roles *r);

typedef qllc_status (*qllc_lower_fn)(qllc_lower_ctx *c, const qllc_node *n);

static inline qllc_arg *qllc_lower_push(qllc_lower_args *av, qllc_arg_kind kind) {
  qllc_arg *a = &av->a[av->n++];
  memset(a, 0, sizeof *a);
  a->kind = kind;
  return a;
}
static inline void qllc_lower_arg_buf(qllc_lower_args *av, qllc_buffer *b, uint64_t off) {
  qllc_arg *a = qllc_lower_push(av, QLLC_ARG_BUF);
  a->buf = b;
  a->byte_offset = off;
}
static inline void qllc_lower_arg_int(qllc_lower_args *av, int64_t i) { qllc_lower_push(av, QLLC_ARG_INT)->i = i; }
static inline void qllc_lower_arg_float(qllc_lower_args *av, double f) { qllc_lower_push(av, QLLC_ARG_FLOAT)->f = f; }

/* ---- lower.c --------------------------------------------------------------------------------- */

/* The buffer holding value v (through its alias class; made on first use); NULL on OOM. */
qllc_buffer *qllc_lower_buf_of(qllc_lower_ctx *c, qllc_value *v);
/* A new buffer appended to the program (elem, size in bytes); NULL on OOM. */
qllc_buffer *qllc_lower_buffer_new(qllc_lower_ctx *c, const char *name, qllc_region region, qllc_elem elem,
                                   uint64_t size);
/* A small CONST int64 array named "<node>.<what>"; NULL on OOM. */
qllc_buffer *qllc_lower_const_i64(qllc_lower_ctx *c, const qllc_node *n, const char *what, int count,
                                  const int64_t *vals);
/* Appends the call (checking the kernel name against libjit's list); an unknown kernel is UNSUPPORTED
 * naming the node and the kernel. kernel NULL or a NULL buffer argument means OOM. */
qllc_status qllc_lower_emit(qllc_lower_ctx *c, const qllc_node *n, const char *kernel, const qllc_lower_args *av);
/* qllc_k_<base>_<e0>_<e1>... in the program arena (NULL on OOM). */
const char *qllc_lower_kname(qllc_lower_ctx *c, const char *base, int n_elems, const qllc_elem *elems);
/* UNSUPPORTED / INVALID: "node 'NAME': OpType: what". */
qllc_status qllc_lower_unsupported(qllc_lower_ctx *c, const qllc_node *n, const char *what);
qllc_status qllc_lower_invalid(qllc_lower_ctx *c, const qllc_node *n, const char *what);
qllc_status qllc_lower_oom(qllc_lower_ctx *c);
int64_t qllc_lower_prod(const int64_t *d, int from, int to);

/* Spatial geometry shared by Conv and the pools (1-D inputs as H = 1; pads resolved). */
typedef struct qllc_lower_geom {
  int64_t H, W, OH, OW, KH, KW, sh, sw, pt, pl, pb, pr, dh, dw;
} qllc_lower_geom;
qllc_status qllc_lower_spatial(qllc_lower_ctx *c, const qllc_node *n, const qllc_value *x, const qllc_value *y,
                               int64_t kh, int64_t kw, int has_kernel_attr, qllc_lower_geom *g);
/* Numpy broadcasting of y = a op b collapsed to the fewest dims; the rank, or 0 when it does not
 * broadcast. */
int qllc_lower_broadcast(const qllc_value *y, const qllc_value *a, const qllc_value *b, int64_t *dims,
                         int64_t *as, int64_t *bs);
/* MatMul geometry (numpy matmul broadcasting): M, N, K, the batch count and the CONST per-batch
 * element offsets of a and b ("<node>.a_off", "<node>.b_off"). */
qllc_status qllc_lower_matmul_geom(qllc_lower_ctx *c, const qllc_node *n, int64_t *M, int64_t *N, int64_t *K,
                                   int64_t *batches, qllc_buffer **a_off, qllc_buffer **b_off);
/* Softmax: [outer][len][inner] around the axis (coerce2d for opset < 13 semantics). */
qllc_status qllc_lower_softmax_geom(qllc_lower_ctx *c, const qllc_node *n, int64_t *outer, int64_t *len,
                                    int64_t *inner);
/* Pad: sets Y, X, RANK, OUT_DIMS, IN_DIMS, PADS_BEGIN and returns the pad value as written in the
 * model (a real number); the caller sets VALUE in the kernel's type. Modes reflect, edge and wrap:
 * sets Y, X, RANK, OUT_DIMS, AXIS_MAP instead and returns NaN (the caller calls pad_map). */
qllc_status qllc_lower_pad_roles(qllc_lower_ctx *c, const qllc_node *n, qllc_lower_roles *r, double *value);
/* Roles several lowerings set alike (a buffer that cannot be made is left NULL: the emitter reports
 * out of memory). */
void qllc_lower_roles_yx(qllc_lower_roles *r, qllc_lower_ctx *c, qllc_value *x, qllc_value *y); /* Y, X */
/* DIM_N DIM_C DIM_H DIM_W DIM_M OH OW KH KW STRIDE_H STRIDE_W PAD_TOP PAD_LEFT DIL_H DIL_W GROUP */
void qllc_lower_roles_conv(qllc_lower_roles *r, const qllc_value *x, const qllc_lower_geom *g, int64_t M,
                           int64_t group);
/* NC DIM_H DIM_W OH OW KH KW STRIDE_H STRIDE_W PAD_* DIL_H DIL_W COUNT_INCLUDE_PAD */
void qllc_lower_roles_pool(qllc_lower_roles *r, const qllc_node *n, const qllc_value *x, const qllc_lower_geom *g);
/* Y A B BATCHES DIM_M DIM_N DIM_K A_OFF B_OFF */
void qllc_lower_roles_batched(qllc_lower_roles *r, qllc_lower_ctx *c, qllc_buffer *yb, qllc_value *a, qllc_value *b,
                              int64_t batches, int64_t M, int64_t N, int64_t K, qllc_buffer *a_off,
                              qllc_buffer *b_off);
/* Y A B (n's output and first two inputs) RANK DIMS A_STRIDES B_STRIDES */
void qllc_lower_roles_bcast(qllc_lower_roles *r, qllc_lower_ctx *c, const qllc_node *n, int rank,
                            const int64_t *dims, const int64_t *as, const int64_t *bs);
/* Y (at byte offset yoff) X ROWS COLS Y_STRIDE X_STRIDE: copy2d and requantize */
void qllc_lower_roles_rows(qllc_lower_roles *r, qllc_buffer *yb, uint64_t yoff, qllc_buffer *xb, int64_t rows,
                           int64_t cols, int64_t y_stride, int64_t x_stride);
/* Float lowerings whose arguments do not depend on the element kind (pure data movement). */
qllc_status qllc_lower_plain_transpose(qllc_lower_ctx *c, const qllc_node *n);
qllc_status qllc_lower_plain_maxpool(qllc_lower_ctx *c, const qllc_node *n);
/* Views make no instruction (their output shares the input's bytes). */
qllc_status qllc_lower_view(qllc_lower_ctx *c, const qllc_node *n);

/* ---- lower_q.c: quantized nodes ------------------------------------------------------------------ */

/* 1 when n must take the quantized path: it has a quantization record, or its first input or output
 * is an integer activation (i8, u8, i16). */
int qllc_lower_is_quantized(const qllc_node *n);

qllc_status qllc_lower_q_conv(qllc_lower_ctx *c, const qllc_node *n);
qllc_status qllc_lower_q_fc(qllc_lower_ctx *c, const qllc_node *n); /* FC, Gemm, MatMul with FUSED records */
qllc_status qllc_lower_q_matmul(qllc_lower_ctx *c, const qllc_node *n);
qllc_status qllc_lower_q_channel_affine(qllc_lower_ctx *c, const qllc_node *n);
qllc_status qllc_lower_q_binary(qllc_lower_ctx *c, const qllc_node *n);
qllc_status qllc_lower_q_clamp(qllc_lower_ctx *c, const qllc_node *n);   /* Relu, Clip */
qllc_status qllc_lower_q_table(qllc_lower_ctx *c, const qllc_node *n);   /* Sigmoid, Tanh, LeakyRelu */
qllc_status qllc_lower_q_maxpool(qllc_lower_ctx *c, const qllc_node *n);
qllc_status qllc_lower_q_avgpool(qllc_lower_ctx *c, const qllc_node *n);
qllc_status qllc_lower_q_global_avgpool(qllc_lower_ctx *c, const qllc_node *n);
qllc_status qllc_lower_q_softmax(qllc_lower_ctx *c, const qllc_node *n);
qllc_status qllc_lower_q_concat(qllc_lower_ctx *c, const qllc_node *n);
qllc_status qllc_lower_q_transpose(qllc_lower_ctx *c, const qllc_node *n);
qllc_status qllc_lower_q_pad(qllc_lower_ctx *c, const qllc_node *n);
qllc_status qllc_lower_q_view(qllc_lower_ctx *c, const qllc_node *n);
qllc_status qllc_lower_q_quantize(qllc_lower_ctx *c, const qllc_node *n);
qllc_status qllc_lower_q_dequantize(qllc_lower_ctx *c, const qllc_node *n);

/* ---- lower_custom.c: custom ONNX ops (float and quantized) --------------------------------------- */
qllc_status qllc_lower_custom(qllc_lower_ctx *c, const qllc_node *n);

#endif
