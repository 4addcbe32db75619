/* src/lower/lower.c: graph IR -> instruction IR.
 *
 * Algorithm:
 *  1. Buffers. Every value belongs to an alias class: reshape-like ops (Reshape, Flatten, Squeeze,
 *     Unsqueeze, Identity, Dropout) make no instruction, their output shares its input's bytes, so the
 *     class is named by its root (the first value up the view chain that is not a view). The class's
 *     buffer is:
 *       - root is a graph input:  the input's MUTABLE buffer (never written);
 *       - root is a constant:     a CONST buffer (data = value->data), made when a kernel reads it;
 *       - root is computed:       the MUTABLE buffer of the first graph output in the class, so the
 *                                 producer writes the output in place; else one ACT buffer.
 *     A graph output whose class buffer is not its own (a view of an input, of a constant or of another
 *     output) gets its own MUTABLE buffer and a copy kernel at the end of the program. Copies only read
 *     MUTABLE or CONST bytes, which nothing overwrites, so placing them last is always correct and does
 *     not lengthen any activation's life.
 *     MUTABLE layout: inputs first, in order, then outputs, each at a QLLC_MEM_ALIGN multiple.
 *  2. Instructions. Nodes are visited in the graph's topological order; each op has one row in the
 *     dispatch table `lowerers`: a float function (here) and a quantized one (lower_q.c, taken when
 *     the node has a quantization record or an integer activation; see qllc_lower_is_quantized). Each
 *     computes shape-derived arguments as immediates or small CONST int64 arrays, sets them by role
 *     (Y, X, W, DIM_H, ...) and calls qllc_lower_call, which orders them as the kernel's registry row
 *     says (src/lower/kernels.def, whose signatures are libjit's declarations). Kernel
 *     names are built from the element kinds of the node's values (qllc_k_<op>_<in>_<w>_<out>) and
 *     checked against the kernel registry (src/lower/kernels.def, whose rows registry.c checks against
 *     libjit's declarations), so an unhandled element kind is an UNSUPPORTED error naming the node
 *     and the missing kernel; a call whose argument count differs from the row's signature is an
 *     internal error.
 *  3. Layouts (layout.c): activations between kernels that take channel-last data become NHWC.
 *  4. Liveness. first_use/last_use of each ACT buffer are the first and last instruction that
 *     references it through any alias (inclusive), then qllc_pass_memory_plan places them.
 */
#include "lower/lower.h"
#include "lower/lower_internal.h"
#include "lower/lower_qdq.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef qllc_lower_args argv;
typedef qllc_lower_roles roles;
typedef qllc_lower_ctx ctx;
typedef qllc_lower_fn lower_fn;

/* ---- small helpers ----------------------------------------------------------------------------- */

static uint64_t align_up(uint64_t x) { return (x + QLLC_MEM_ALIGN - 1) / QLLC_MEM_ALIGN * QLLC_MEM_ALIGN; }

static int64_t prod(const int64_t *d, int from, int to) {
  int64_t r = 1;
  for (int i = from; i < to; i++) r *= d[i];
  return r;
}

static const char *ename(qllc_elem e) { return qllc_elem_name((qllc_elem_kind)e); }

static int is_view(qllc_op op) {
  switch (op) {
  case QLLC_OP_RESHAPE:
  case QLLC_OP_FLATTEN:
  case QLLC_OP_SQUEEZE:
  case QLLC_OP_UNSQUEEZE:
  case QLLC_OP_IDENTITY:
  case QLLC_OP_DROPOUT:
    return 1;
  default:
    return 0;
  }
}

/* The first value up the view chain that is not itself the output of a view. */
static qllc_value *root_of(qllc_value *v) {
  while (v->producer && is_view(v->producer->op) && v->producer->out[0] == v && v->producer->n_in > 0 &&
         v->producer->in[0])
    v = v->producer->in[0];
  return v;
}

static int is_const(const qllc_value *v) { return v->data != NULL; }

static qllc_status oom(ctx *c) { return qllc_fail(c->diag, QLLC_ERR_NOMEM, NULL, "out of memory while lowering"); }

static qllc_buffer *buffer_new(ctx *c, const char *name, qllc_region region, qllc_elem elem, uint64_t size) {
  qllc_program *p = c->p;
  if (p->n_buffers == p->cap_buffers) {
    int cap = p->cap_buffers ? 2 * p->cap_buffers : 32;
    qllc_buffer **nb = qllc_arena_alloc(p->arena, (size_t)cap * sizeof *nb);
    if (!nb) return NULL;
    if (p->n_buffers) memcpy(nb, p->buffers, (size_t)p->n_buffers * sizeof *nb);
    p->buffers = nb;
    p->cap_buffers = cap;
  }
  qllc_buffer *b = qllc_arena_alloc(p->arena, sizeof *b);
  if (!b) return NULL;
  b->id = p->n_buffers;
  b->name = qllc_arena_strdup(p->arena, name ? name : "");
  b->region = region;
  b->elem = elem;
  b->size = size;
  b->first_use = b->last_use = -1;
  b->nhwc = 0;
  p->buffers[p->n_buffers++] = b;
  return b;
}

/* The buffer holding value v (through its alias class); NULL on OOM or a value not in the graph. */
static qllc_buffer *buf_of(ctx *c, qllc_value *v) {
  qllc_value *r = root_of(v);
  if (r->id < 0 || r->id >= c->g->n_values || c->g->values[r->id] != r) return NULL;
  if (c->cls[r->id]) return c->cls[r->id];
  qllc_buffer *b;
  if (is_const(r)) {
    b = buffer_new(c, r->name, QLLC_REGION_CONST, r->elem, qllc_value_bytes(r));
    if (b) b->data = r->data;
  } else {
    b = buffer_new(c, r->name, QLLC_REGION_ACT, r->elem, qllc_value_bytes(r));
  }
  if (b) b->value = r;
  c->cls[r->id] = b;
  return b;
}

/* A small CONST array of int64 (strides, dims, offsets) made up by lowering. */
static qllc_buffer *const_i64(ctx *c, const qllc_node *n, const char *what, int count, const int64_t *vals) {
  char *name = qllc_arena_printf(c->p->arena, "%s.%s", n ? n->name : "program", what);
  if (!name) return NULL;
  qllc_buffer *b = buffer_new(c, name, QLLC_REGION_CONST, QLLC_ELEM_I64, (uint64_t)count * sizeof(int64_t));
  if (!b) return NULL;
  b->data = qllc_arena_memdup(c->p->arena, vals, (size_t)(count ? count : 1) * sizeof(int64_t));
  return b->data ? b : NULL;
}

static void r_buf(roles *r, qllc_role role, qllc_buffer *b) { qllc_role_buf(r, role, b, 0); }
static void r_int(roles *r, qllc_role role, int64_t i) { qllc_role_int(r, role, i); }
static void r_float(roles *r, qllc_role role, double f) { qllc_role_float(r, role, f); }
/* an optional input: its buffer, or a null pointer */
static void r_opt(ctx *c, roles *r, qllc_role role, qllc_value *v);

/* Fails (UNSUPPORTED) when the registry (kernels.def: every kernel libjit declares, and the ISA
 * variants) has no such kernel. */
static qllc_status check_kernel(ctx *c, const qllc_node *n, const char *kernel) {
  /* custom ops call the user's bitcode: the facade checks those names against the --kernels files */
  if (n && n->op == QLLC_OP_CUSTOM && strncmp(kernel, "qllc_k_custom_", 14) == 0) return QLLC_OK;
  if (qllc_lower_known(kernel)) return QLLC_OK;
  return qllc_fail(c->diag, QLLC_ERR_UNSUPPORTED, n ? n->name : NULL,
                   "node '%s': %s: no kernel %s for these element kinds", n ? n->name : "?",
                   n ? n->op_type ? n->op_type : qllc_op_name(n->op) : "?", kernel);
}

/* Kernel name qllc_k_<base>_<e0>_<e1>...; n_elems element kinds (in, [w,] out). */
static const char *kname(ctx *c, const char *base, int n_elems, const qllc_elem *elems) {
  char buf[256];
  int len = snprintf(buf, sizeof buf, "qllc_k_%s", base);
  for (int i = 0; i < n_elems && len < (int)sizeof buf; i++)
    len += snprintf(buf + len, sizeof buf - (size_t)len, "_%s", ename(elems[i]));
  return qllc_arena_strdup(c->p->arena, buf);
}

static const char *kname2(ctx *c, const char *base, qllc_elem in, qllc_elem out) {
  qllc_elem e[2] = {in, out};
  return kname(c, base, 2, e);
}
static const char *kname3(ctx *c, const char *base, qllc_elem in, qllc_elem w, qllc_elem out) {
  qllc_elem e[3] = {in, w, out};
  return kname(c, base, 3, e);
}

static qllc_status emit(ctx *c, const qllc_node *n, const char *kernel, const argv *av) {
  qllc_program *p = c->p;
  if (!kernel) return oom(c);
  qllc_status st = check_kernel(c, n, kernel);
  if (st) return st;
  int arity = qllc_lower_arity(kernel); /* -1 for a user's custom kernel */
  if (arity >= 0 && arity != av->n)
    return qllc_fail(c->diag, QLLC_ERR_INVALID, n ? n->name : NULL,
                     "node '%s': internal error: %d arguments for %s, whose registry row has %d",
                     n ? n->name : "?", av->n, kernel, arity);
  for (int i = 0; i < av->n; i++)
    if (av->a[i].kind == QLLC_ARG_BUF && !av->a[i].buf) return oom(c);
  if (p->n_instrs == p->cap_instrs) {
    int cap = p->cap_instrs ? 2 * p->cap_instrs : 64;
    qllc_instr *ni = qllc_arena_alloc(p->arena, (size_t)cap * sizeof *ni);
    if (!ni) return oom(c);
    if (p->n_instrs) memcpy(ni, p->instrs, (size_t)p->n_instrs * sizeof *ni);
    p->instrs = ni;
    p->cap_instrs = cap;
  }
  qllc_instr *in = &p->instrs[p->n_instrs];
  in->kernel = kernel;
  in->n_args = av->n;
  in->args = qllc_arena_memdup(p->arena, av->a, (size_t)(av->n ? av->n : 1) * sizeof(qllc_arg));
  if (!in->args) return oom(c);
  in->node = n;
  in->why = NULL;
  in->reference_for_cpu = 0;
  in->mode = NULL;
  in->converts = 0;
  p->n_instrs++;
  return QLLC_OK;
}

static qllc_status call(ctx *c, const qllc_node *n, const char *kernel, const roles *r) {
  return qllc_lower_call(c, n, kernel, r);
}

static void r_opt(ctx *c, roles *r, qllc_role role, qllc_value *v) {
  if (v) r_buf(r, role, buf_of(c, v));
  else qllc_role_null(r, role);
}

/* ---- roles several lowerings share (lower_internal.h) ----------------------------------------------- */

void qllc_lower_roles_yx(roles *r, ctx *c, qllc_value *x, qllc_value *y) {
  r_buf(r, QLLC_ROLE_Y, buf_of(c, y));
  r_buf(r, QLLC_ROLE_X, buf_of(c, x));
}

void qllc_lower_roles_conv(roles *r, const qllc_value *x, const qllc_lower_geom *g, int64_t M, int64_t group) {
  int64_t v[] = {x->dims[0], x->dims[1], g->H, g->W, M, g->OH, g->OW, g->KH, g->KW,
                 g->sh, g->sw, g->pt, g->pl, g->dh, g->dw, group};
  static const qllc_role k[] = {QLLC_ROLE_DIM_N, QLLC_ROLE_DIM_C, QLLC_ROLE_DIM_H, QLLC_ROLE_DIM_W,
                                QLLC_ROLE_DIM_M, QLLC_ROLE_OH, QLLC_ROLE_OW, QLLC_ROLE_KH, QLLC_ROLE_KW,
                                QLLC_ROLE_STRIDE_H, QLLC_ROLE_STRIDE_W, QLLC_ROLE_PAD_TOP, QLLC_ROLE_PAD_LEFT,
                                QLLC_ROLE_DIL_H, QLLC_ROLE_DIL_W, QLLC_ROLE_GROUP};
  for (size_t i = 0; i < sizeof k / sizeof k[0]; i++) r_int(r, k[i], v[i]);
}

void qllc_lower_roles_pool(roles *r, const qllc_node *n, const qllc_value *x, const qllc_lower_geom *g) {
  int64_t v[] = {x->dims[0] * x->dims[1], g->H, g->W, g->OH, g->OW, g->KH, g->KW, g->sh, g->sw,
                 g->pt, g->pl, g->pb, g->pr, g->dh, g->dw, qllc_attr_int(n, "count_include_pad", 0)};
  static const qllc_role k[] = {QLLC_ROLE_NC, QLLC_ROLE_DIM_H, QLLC_ROLE_DIM_W, QLLC_ROLE_OH, QLLC_ROLE_OW,
                                QLLC_ROLE_KH, QLLC_ROLE_KW, QLLC_ROLE_STRIDE_H, QLLC_ROLE_STRIDE_W,
                                QLLC_ROLE_PAD_TOP, QLLC_ROLE_PAD_LEFT, QLLC_ROLE_PAD_BOTTOM, QLLC_ROLE_PAD_RIGHT,
                                QLLC_ROLE_DIL_H, QLLC_ROLE_DIL_W, QLLC_ROLE_COUNT_INCLUDE_PAD};
  for (size_t i = 0; i < sizeof k / sizeof k[0]; i++) r_int(r, k[i], v[i]);
}

void qllc_lower_roles_batched(roles *r, ctx *c, qllc_buffer *yb, qllc_value *a, qllc_value *b, int64_t batches,
                              int64_t M, int64_t N, int64_t K, qllc_buffer *a_off, qllc_buffer *b_off) {
  r_buf(r, QLLC_ROLE_Y, yb);
  r_buf(r, QLLC_ROLE_A, buf_of(c, a));
  r_buf(r, QLLC_ROLE_B, buf_of(c, b));
  r_int(r, QLLC_ROLE_BATCHES, batches);
  r_int(r, QLLC_ROLE_DIM_M, M);
  r_int(r, QLLC_ROLE_DIM_N, N);
  r_int(r, QLLC_ROLE_DIM_K, K);
  r_buf(r, QLLC_ROLE_A_OFF, a_off);
  r_buf(r, QLLC_ROLE_B_OFF, b_off);
}

void qllc_lower_roles_bcast(roles *r, ctx *c, const qllc_node *n, int rank, const int64_t *dims, const int64_t *as,
                            const int64_t *bs) {
  r_buf(r, QLLC_ROLE_Y, buf_of(c, n->out[0]));
  r_buf(r, QLLC_ROLE_A, buf_of(c, n->in[0]));
  r_buf(r, QLLC_ROLE_B, buf_of(c, n->in[1]));
  r_int(r, QLLC_ROLE_RANK, rank);
  r_buf(r, QLLC_ROLE_DIMS, const_i64(c, n, "dims", rank, dims));
  r_buf(r, QLLC_ROLE_A_STRIDES, const_i64(c, n, "a_strides", rank, as));
  r_buf(r, QLLC_ROLE_B_STRIDES, const_i64(c, n, "b_strides", rank, bs));
}

void qllc_lower_roles_rows(roles *r, qllc_buffer *yb, uint64_t yoff, qllc_buffer *xb, int64_t rows, int64_t cols,
                           int64_t y_stride, int64_t x_stride) {
  qllc_role_buf(r, QLLC_ROLE_Y, yb, yoff);
  r_buf(r, QLLC_ROLE_X, xb);
  r_int(r, QLLC_ROLE_ROWS, rows);
  r_int(r, QLLC_ROLE_COLS, cols);
  r_int(r, QLLC_ROLE_Y_STRIDE, y_stride);
  r_int(r, QLLC_ROLE_X_STRIDE, x_stride);
}

static qllc_status unsupported(ctx *c, const qllc_node *n, const char *what) {
  return qllc_fail(c->diag, QLLC_ERR_UNSUPPORTED, n->name, "node '%s': %s: %s", n->name,
                   n->op_type ? n->op_type : qllc_op_name(n->op), what);
}

static qllc_status invalid(ctx *c, const qllc_node *n, const char *what) {
  return qllc_fail(c->diag, QLLC_ERR_INVALID, n->name, "node '%s': %s: %s", n->name,
                   n->op_type ? n->op_type : qllc_op_name(n->op), what);
}

static float act_lo(const qllc_node *n) { return n->act == QLLC_ACT_NONE ? -INFINITY : n->act_lo; }
static float act_hi(const qllc_node *n) { return n->act == QLLC_ACT_NONE ? INFINITY : n->act_hi; }

/* Reads an INTS attribute of exactly `count` entries into out (defaults kept when absent).
 * Returns 0, or -1 when present with another count. */
static int ints_attr(const qllc_node *n, const char *name, int count, int64_t *out) {
  const int64_t *v;
  int k = qllc_attr_ints(n, name, &v);
  if (!v) return 0;
  if (k != count) return -1;
  for (int i = 0; i < k; i++) out[i] = v[i];
  return 0;
}

/* ---- per-op lowering --------------------------------------------------------------------------- */

/* Spatial geometry shared by Conv and the pools. Rank-3 tensors (1-D ops) are treated as H = 1;
 * attributes may then have 2 entries per spatial axis list (normalised) or 1 (raw 1-D). */
typedef qllc_lower_geom geom;

static qllc_status spatial(ctx *c, const qllc_node *n, const qllc_value *x, const qllc_value *y, int64_t kh,
                           int64_t kw, int has_kernel_attr, geom *g) {
  if (x->rank != 4 && x->rank != 3) return unsupported(c, n, "only 1-D and 2-D spatial inputs are supported");
  if (y->rank != x->rank) return invalid(c, n, "output rank differs from input rank");
  int one_d = x->rank == 3;
  g->H = one_d ? 1 : x->dims[2];
  g->W = x->dims[x->rank - 1];
  g->OH = one_d ? 1 : y->dims[2];
  g->OW = y->dims[y->rank - 1];
  int64_t ks[2] = {kh, kw}, st[2] = {1, 1}, dl[2] = {1, 1}, pd[4] = {0, 0, 0, 0};
  int64_t ks1[1] = {kw}, st1[1] = {1}, dl1[1] = {1}, pd1[2] = {0, 0};
  int bad = 0;
  const int64_t *tmp;
  int nspat = qllc_attr_ints(n, "strides", &tmp);
  if (!tmp) nspat = qllc_attr_ints(n, "kernel_shape", &tmp);
  if (!tmp) nspat = qllc_attr_ints(n, "pads", &tmp) / 2;
  if (!tmp) nspat = qllc_attr_ints(n, "dilations", &tmp);
  if (!tmp) nspat = 2;
  if (one_d && nspat == 1) {
    bad |= has_kernel_attr && ints_attr(n, "kernel_shape", 1, ks1);
    bad |= ints_attr(n, "strides", 1, st1) | ints_attr(n, "dilations", 1, dl1) | ints_attr(n, "pads", 2, pd1);
    ks[0] = 1, ks[1] = ks1[0], st[1] = st1[0], dl[1] = dl1[0], pd[1] = pd1[0], pd[3] = pd1[1];
  } else if (nspat == 2) {
    if (has_kernel_attr) bad |= ints_attr(n, "kernel_shape", 2, ks);
    bad |= ints_attr(n, "strides", 2, st) | ints_attr(n, "dilations", 2, dl) | ints_attr(n, "pads", 4, pd);
  } else {
    bad = 1;
  }
  if (bad) return invalid(c, n, "kernel_shape/strides/pads/dilations do not match the input rank");
  g->KH = ks[0], g->KW = ks[1], g->sh = st[0], g->sw = st[1], g->dh = dl[0], g->dw = dl[1];
  g->pt = pd[0], g->pl = pd[1], g->pb = pd[2], g->pr = pd[3];
  /* auto_pad left for us: derive the pads from the output size the importer inferred. */
  const char *ap = qllc_attr_string(n, "auto_pad", "NOTSET");
  if (strcmp(ap, "SAME_UPPER") == 0 || strcmp(ap, "SAME_LOWER") == 0) {
    int64_t th = (g->OH - 1) * g->sh + (g->KH - 1) * g->dh + 1 - g->H;
    int64_t tw = (g->OW - 1) * g->sw + (g->KW - 1) * g->dw + 1 - g->W;
    if (th < 0) th = 0;
    if (tw < 0) tw = 0;
    int lower = ap[5] == 'L';
    g->pt = lower ? th - th / 2 : th / 2, g->pb = th - g->pt;
    g->pl = lower ? tw - tw / 2 : tw / 2, g->pr = tw - g->pl;
  } else if (strcmp(ap, "VALID") == 0) {
    g->pt = g->pl = g->pb = g->pr = 0;
  }
  if (g->sh <= 0 || g->sw <= 0 || g->dh <= 0 || g->dw <= 0 || g->pt < 0 || g->pl < 0 || g->pb < 0 || g->pr < 0)
    return invalid(c, n, "non-positive stride/dilation or negative pad");
  return QLLC_OK;
}

/* The constant float weights w[ch][K] of a Conv or FC packed in float row v's layout, as the buffer
   "<w>.packed" (*wb). */
static qllc_status pack_float_variant(ctx *c, const qllc_node *n, const qllc_kvariant *v, const qllc_value *w,
                                      int64_t ch, int64_t K, qllc_buffer **wb) {
  const size_t bytes = qllc_pack_size(v->layout, ch, K);
  void *packed = qllc_arena_alloc(c->p->arena, bytes ? bytes : 1);
  if (!packed) return oom(c);
  const qllc_pack_src src = {.w = w->data, .ch = ch, .K = K, .taps = 1, .w_f32 = 1};
  if (v->pack(&src, packed, NULL) == -2) return invalid(c, n, "float variant for weights that are not float");
  char *pname = qllc_arena_printf(c->p->arena, "%s.packed", w->name);
  *wb = pname ? buffer_new(c, pname, QLLC_REGION_CONST, w->elem, (uint64_t)bytes) : NULL;
  if (!*wb) return oom(c);
  (*wb)->data = packed;
  (*wb)->value = (qllc_value *)w;
  return QLLC_OK;
}

static qllc_status lower_conv(ctx *c, const qllc_node *n) {
  qllc_value *x = n->in[0], *w = n->in[1], *b = n->n_in > 2 ? n->in[2] : NULL, *y = n->out[0];
  if (w->rank != x->rank) return invalid(c, n, "weight rank differs from input rank");
  int64_t KH = w->rank == 4 ? w->dims[2] : 1, KW = w->dims[w->rank - 1];
  geom g;
  qllc_status st = spatial(c, n, x, y, KH, KW, 0, &g);
  if (st) return st;
  int64_t group = qllc_attr_int(n, "group", 1);
  const char *ref = kname3(c, "conv2d", x->elem, w->elem, y->elem);
  /* A float Conv with constant weights runs on a catalogue row where the target has one, its weights
     packed in the row's layout (lower_fc says the same for FC). */
  const qllc_kvariant *v = NULL;
  qllc_buffer *scratch = NULL, *wb = NULL;
  const char *why = NULL;
  const int is_f32 = x->elem == QLLC_ELEM_F32 && w->elem == QLLC_ELEM_F32 && y->elem == QLLC_ELEM_F32;
  qllc_status st2;
  const int64_t M = w->dims[0], Kc = group > 0 ? x->dims[1] / group * KH * KW : 0;
  if (is_f32 && is_const(w) && group > 0 && x->rank == 4) {
    const qllc_layer_geom lg = {.conv = 1, .N = x->dims[0], .C = x->dims[1], .H = x->dims[2], .W = x->dims[3],
                                .M = M, .OH = g.OH, .OW = g.OW, .KH = g.KH, .KW = g.KW, .sh = g.sh, .sw = g.sw,
                                .pt = g.pt, .pl = g.pl, .pb = g.pb, .pr = g.pr, .dh = g.dh, .dw = g.dw,
                                .group = group, .K = Kc};
    if ((st2 = qllc_lower_fused_pick(c, n, ref, &lg, &v, &scratch, &why))) return st2;
  }
  if (v && (st2 = pack_float_variant(c, n, v, w, M, Kc, &wb))) return st2;
  roles r = {.set = {0}};
  qllc_lower_roles_yx(&r, c, x, y);
  r_buf(&r, QLLC_ROLE_W, wb ? wb : buf_of(c, w));
  r_opt(c, &r, QLLC_ROLE_BIAS, b);
  qllc_lower_roles_conv(&r, x, &g, w->dims[0], group);
  r_float(&r, QLLC_ROLE_ACT_LO, act_lo(n));
  r_float(&r, QLLC_ROLE_ACT_HI, act_hi(n));
  if (!is_f32) return call(c, n, ref, &r);
  return qllc_lower_emit_fused(c, n, ref, v, scratch, why, &r);
}

static qllc_status lower_fc(ctx *c, const qllc_node *n) {
  qllc_value *x = n->in[0], *w = n->in[1], *b = n->n_in > 2 ? n->in[2] : NULL, *y = n->out[0];
  if (w->rank != 2 || !is_const(w)) return unsupported(c, n, "weights must be a constant [N][K] matrix");
  int64_t N = w->dims[0], K = w->dims[1];
  if (K == 0 || qllc_value_numel(x) % K) return invalid(c, n, "input size is not a multiple of K");
  int64_t M = qllc_value_numel(x) / K;
  const char *ref = kname3(c, "fc", x->elem, w->elem, y->elem);
  /* A float FC runs on a catalogue row where the target has one (targets/<arch>/kernels/variants.def):
     its weights packed in the row's layout, the node's bias as it is. */
  const qllc_kvariant *v = NULL;
  qllc_buffer *scratch = NULL, *wb = NULL;
  const char *why = NULL;
  const int is_f32 = x->elem == QLLC_ELEM_F32 && w->elem == QLLC_ELEM_F32 && y->elem == QLLC_ELEM_F32;
  qllc_status st;
  if (is_f32) {
    const qllc_layer_geom lg = {.conv = 0, .fc_m = M, .fc_n = N, .K = K};
    if ((st = qllc_lower_fused_pick(c, n, ref, &lg, &v, &scratch, &why))) return st;
  }
  if (v) {
    if ((st = pack_float_variant(c, n, v, w, N, K, &wb))) return st;
  } else {
    int memo = w->id >= 0 && w->id < c->g->n_values && c->g->values[w->id] == w;
    wb = memo ? c->packed[w->id] : NULL;
    if (!wb) {
      /* Pack W[N][K] -> Wp[K][N] so the kernel's inner loop runs over contiguous n. */
      size_t es = qllc_elem_size((qllc_elem_kind)w->elem);
      uint8_t *packed = qllc_arena_alloc(c->p->arena, (size_t)(N * K) * es + 1);
      if (!packed) return oom(c);
      const uint8_t *src = w->data;
      for (int64_t i = 0; i < N; i++)
        for (int64_t k = 0; k < K; k++) memcpy(packed + (size_t)(k * N + i) * es, src + (size_t)(i * K + k) * es, es);
      char *pname = qllc_arena_printf(c->p->arena, "%s.packed", w->name);
      wb = pname ? buffer_new(c, pname, QLLC_REGION_CONST, w->elem, (uint64_t)(N * K) * es) : NULL;
      if (!wb) return oom(c);
      wb->data = packed;
      wb->value = w;
      if (memo) c->packed[w->id] = wb;
    }
  }
  roles r = {.set = {0}};
  qllc_lower_roles_yx(&r, c, x, y);
  r_buf(&r, QLLC_ROLE_W, wb);
  r_opt(c, &r, QLLC_ROLE_BIAS, b);
  r_int(&r, QLLC_ROLE_DIM_M, M);
  r_int(&r, QLLC_ROLE_DIM_N, N);
  r_int(&r, QLLC_ROLE_DIM_K, K);
  r_float(&r, QLLC_ROLE_ACT_LO, act_lo(n));
  r_float(&r, QLLC_ROLE_ACT_HI, act_hi(n));
  if (!is_f32) return call(c, n, ref, &r);
  return qllc_lower_emit_fused(c, n, ref, v, scratch, why, &r);
}

static qllc_status lower_gemm(ctx *c, const qllc_node *n) {
  qllc_value *a = n->in[0], *bm = n->in[1], *cv = n->n_in > 2 ? n->in[2] : NULL, *y = n->out[0];
  if (a->rank != 2 || bm->rank != 2 || y->rank != 2) return invalid(c, n, "Gemm operands must be 2-D");
  int64_t ta = qllc_attr_int(n, "transA", 0), tb = qllc_attr_int(n, "transB", 0);
  int64_t M = y->dims[0], N = y->dims[1], K = ta ? a->dims[0] : a->dims[1];
  int64_t csm = 0, csn = 0;
  if (cv) {
    if (cv->rank > 2) return invalid(c, n, "C has rank > 2");
    int64_t cm = cv->rank == 2 ? cv->dims[0] : 1, cn = cv->rank >= 1 ? cv->dims[cv->rank - 1] : 1;
    if ((cm != 1 && cm != M) || (cn != 1 && cn != N)) return invalid(c, n, "C does not broadcast to [M][N]");
    csn = cn == 1 ? 0 : 1;
    csm = cm == 1 ? 0 : cn;
  }
  roles r = {.set = {0}};
  r_buf(&r, QLLC_ROLE_Y, buf_of(c, y));
  r_buf(&r, QLLC_ROLE_A, buf_of(c, a));
  r_buf(&r, QLLC_ROLE_B, buf_of(c, bm));
  r_opt(c, &r, QLLC_ROLE_C, cv);
  r_int(&r, QLLC_ROLE_DIM_M, M);
  r_int(&r, QLLC_ROLE_DIM_N, N);
  r_int(&r, QLLC_ROLE_DIM_K, K);
  r_int(&r, QLLC_ROLE_TRANS_A, ta);
  r_int(&r, QLLC_ROLE_TRANS_B, tb);
  r_float(&r, QLLC_ROLE_ALPHA, qllc_attr_float(n, "alpha", 1.0f));
  r_float(&r, QLLC_ROLE_BETA, qllc_attr_float(n, "beta", 1.0f));
  r_int(&r, QLLC_ROLE_C_STRIDE_M, csm);
  r_int(&r, QLLC_ROLE_C_STRIDE_N, csn);
  r_float(&r, QLLC_ROLE_ACT_LO, act_lo(n));
  r_float(&r, QLLC_ROLE_ACT_HI, act_hi(n));
  return call(c, n, kname3(c, "gemm", a->elem, bm->elem, y->elem), &r);
}

/* A fused activation on an op whose kernel has no clamp (MatMul): the kernel writes a scratch ACT
 * buffer and a clip kernel writes y from it (kernels take restrict pointers: no in-place calls). */
static qllc_status emit_fused_clip(ctx *c, const qllc_node *n, qllc_buffer *tmp, qllc_value *y) {
  roles r = {.set = {0}};
  r_buf(&r, QLLC_ROLE_Y, buf_of(c, y));
  r_buf(&r, QLLC_ROLE_X, tmp);
  r_int(&r, QLLC_ROLE_COUNT, qllc_value_numel(y));
  r_float(&r, QLLC_ROLE_ACT_LO, n->act_lo);
  r_float(&r, QLLC_ROLE_ACT_HI, n->act_hi);
  return call(c, n, kname2(c, "clip", y->elem, y->elem), &r);
}

qllc_status qllc_lower_matmul_geom(ctx *c, const qllc_node *n, int64_t *Mo, int64_t *No, int64_t *Ko, int64_t *batches_out,
                                   qllc_buffer **a_off, qllc_buffer **b_off) {
  qllc_value *a = n->in[0], *b = n->in[1], *y = n->out[0];
  if (a->rank < 1 || b->rank < 1) return invalid(c, n, "MatMul of a scalar");
  /* 1-D operands: a[K] is [1][K] (M dropped), b[K] is [K][1] (N dropped). */
  int64_t M = a->rank == 1 ? 1 : a->dims[a->rank - 2], K = a->dims[a->rank - 1];
  int64_t N = b->rank == 1 ? 1 : b->dims[b->rank - 1];
  int64_t Kb = b->rank == 1 ? b->dims[0] : b->dims[b->rank - 2];
  if (K != Kb) return invalid(c, n, "inner dimensions differ");
  int ra = a->rank > 2 ? a->rank - 2 : 0, rb = b->rank > 2 ? b->rank - 2 : 0;
  int rbatch = ra > rb ? ra : rb;
  int64_t bd[QLLC_MAX_RANK], sa[QLLC_MAX_RANK], sb[QLLC_MAX_RANK];
  /* Batch dims aligned to the right; a batch stride is 0 where that operand broadcasts. */
  int64_t stra = M * K, strb = K * N;
  for (int d = rbatch - 1; d >= 0; d--) {
    int ia = d - (rbatch - ra), ib = d - (rbatch - rb);
    int64_t da = ia >= 0 ? a->dims[ia] : 1, db = ib >= 0 ? b->dims[ib] : 1;
    if (da != db && da != 1 && db != 1) return invalid(c, n, "batch dimensions do not broadcast");
    bd[d] = da > db ? da : db;
    if (da == 0 || db == 0) bd[d] = 0;
    sa[d] = da == 1 ? 0 : stra;
    sb[d] = db == 1 ? 0 : strb;
    stra *= da;
    strb *= db;
  }
  int64_t batches = prod(bd, 0, rbatch);
  if (batches * M * N != qllc_value_numel(y)) return invalid(c, n, "output size does not match the operands");
  int64_t *ao = malloc((size_t)(batches ? batches : 1) * sizeof *ao);
  int64_t *bo = malloc((size_t)(batches ? batches : 1) * sizeof *bo);
  if (!ao || !bo) {
    free(ao), free(bo);
    return oom(c);
  }
  for (int64_t i = 0; i < batches; i++) {
    int64_t rem = i, oa = 0, ob = 0;
    for (int d = rbatch - 1; d >= 0; d--) {
      int64_t idx = rem % bd[d];
      rem /= bd[d];
      oa += idx * sa[d];
      ob += idx * sb[d];
    }
    ao[i] = oa;
    bo[i] = ob;
  }
  qllc_buffer *aob = const_i64(c, n, "a_off", (int)batches, ao);
  qllc_buffer *bob = const_i64(c, n, "b_off", (int)batches, bo);
  free(ao);
  free(bo);
  *Mo = M, *No = N, *Ko = K, *batches_out = batches, *a_off = aob, *b_off = bob;
  return aob && bob ? QLLC_OK : oom(c);
}

static qllc_status lower_matmul(ctx *c, const qllc_node *n) {
  qllc_value *a = n->in[0], *b = n->in[1], *y = n->out[0];
  int64_t M, N, K, batches;
  qllc_buffer *aob, *bob;
  qllc_status gst = qllc_lower_matmul_geom(c, n, &M, &N, &K, &batches, &aob, &bob);
  if (gst) return gst;
  qllc_buffer *yb = buf_of(c, y);
  if (n->act != QLLC_ACT_NONE) {
    char *tn = qllc_arena_printf(c->p->arena, "%s.preact", y->name);
    yb = tn ? buffer_new(c, tn, QLLC_REGION_ACT, y->elem, qllc_value_bytes(y)) : NULL;
    if (!yb) return oom(c);
  }
  roles r = {.set = {0}};
  qllc_lower_roles_batched(&r, c, yb, a, b, batches, M, N, K, aob, bob);
  qllc_status st = call(c, n, kname3(c, "matmul", a->elem, b->elem, y->elem), &r);
  if (st || n->act == QLLC_ACT_NONE) return st;
  return emit_fused_clip(c, n, yb, y);
}

/* Numpy broadcasting for y = a op b, collapsed to the fewest dims (size-1 dims dropped, adjacent dims
 * merged when both operands are contiguous across them). Returns the rank (0 on error). */
static int broadcast(const qllc_value *y, const qllc_value *a, const qllc_value *b, int64_t *dims,
                     int64_t *as, int64_t *bs) {
  int r = y->rank;
  int64_t fd[QLLC_MAX_RANK], fa[QLLC_MAX_RANK], fb[QLLC_MAX_RANK];
  int64_t sta = 1, stb = 1;
  for (int d = r - 1; d >= 0; d--) {
    int ia = d - (r - a->rank), ib = d - (r - b->rank);
    int64_t da = ia >= 0 ? a->dims[ia] : 1, db = ib >= 0 ? b->dims[ib] : 1;
    if ((da != y->dims[d] && da != 1) || (db != y->dims[d] && db != 1)) return 0;
    fd[d] = y->dims[d];
    fa[d] = da == 1 ? 0 : sta;
    fb[d] = db == 1 ? 0 : stb;
    sta *= da;
    stb *= db;
  }
  int k = 0;
  for (int d = 0; d < r; d++) {
    if (fd[d] == 1) continue;
    if (k > 0 && as[k - 1] == fa[d] * fd[d] && bs[k - 1] == fb[d] * fd[d]) {
      dims[k - 1] *= fd[d];
      as[k - 1] = fa[d];
      bs[k - 1] = fb[d];
      continue;
    }
    dims[k] = fd[d], as[k] = fa[d], bs[k] = fb[d];
    k++;
  }
  if (k == 0) dims[0] = 1, as[0] = 0, bs[0] = 0, k = 1;
  return k;
}

static qllc_status lower_binary(ctx *c, const qllc_node *n) {
  static const char *const names[] = {[QLLC_OP_ADD] = "add", [QLLC_OP_SUB] = "sub", [QLLC_OP_MUL] = "mul",
                                       [QLLC_OP_DIV] = "div"};
  qllc_value *a = n->in[0], *b = n->in[1], *y = n->out[0];
  int64_t dims[QLLC_MAX_RANK], as[QLLC_MAX_RANK], bs[QLLC_MAX_RANK];
  int r = y->rank > QLLC_MAX_RANK || a->rank > y->rank || b->rank > y->rank ? 0 : broadcast(y, a, b, dims, as, bs);
  if (r == 0) return invalid(c, n, "operands do not broadcast to the output shape");
  roles rv = {.set = {0}};
  qllc_lower_roles_bcast(&rv, c, n, r, dims, as, bs);
  return call(c, n, kname3(c, names[n->op], a->elem, b->elem, y->elem), &rv);
}

/* Elementwise unary: Y, X, COUNT and whatever else the caller set in r (ALPHA, ACT_LO/ACT_HI). */
static qllc_status unary(ctx *c, const qllc_node *n, const char *base, roles *r) {
  qllc_value *x = n->in[0], *y = n->out[0];
  qllc_lower_roles_yx(r, c, x, y);
  r_int(r, QLLC_ROLE_COUNT, qllc_value_numel(y));
  return call(c, n, kname2(c, base, x->elem, y->elem), r);
}

static qllc_status lower_relu(ctx *c, const qllc_node *n) { return unary(c, n, "relu", &(roles){.set = {0}}); }
static qllc_status lower_sigmoid(ctx *c, const qllc_node *n) { return unary(c, n, "sigmoid", &(roles){.set = {0}}); }
static qllc_status lower_tanh(ctx *c, const qllc_node *n) { return unary(c, n, "tanh", &(roles){.set = {0}}); }
static qllc_status lower_leaky_relu(ctx *c, const qllc_node *n) {
  roles r = {.set = {0}};
  r_float(&r, QLLC_ROLE_ALPHA, qllc_attr_float(n, "alpha", 0.01f));
  return unary(c, n, "leakyrelu", &r);
}

/* A scalar float from a constant optional input (Clip min/max, Pad value in newer opsets). */
static int const_scalar(const qllc_node *n, int i, double *out) {
  if (n->n_in <= i || !n->in[i] || !n->in[i]->data || qllc_value_numel(n->in[i]) < 1) return 0;
  const qllc_value *v = n->in[i];
  switch (v->elem) {
  case QLLC_ELEM_F32: *out = *(const float *)v->data; return 1;
  case QLLC_ELEM_I8: *out = *(const int8_t *)v->data; return 1;
  case QLLC_ELEM_U8: *out = *(const uint8_t *)v->data; return 1;
  case QLLC_ELEM_I16: *out = *(const int16_t *)v->data; return 1;
  case QLLC_ELEM_I32: *out = *(const int32_t *)v->data; return 1;
  case QLLC_ELEM_I64: *out = (double)*(const int64_t *)v->data; return 1;
  default: return 0;
  }
}

/* Whether input i is a tensor computed at run time (not a constant). */
static int run_time_input(const qllc_node *n, int i) { return n->n_in > i && n->in[i] && !n->in[i]->data; }

static qllc_status lower_clip(ctx *c, const qllc_node *n) {
  double f[2] = {qllc_attr_float(n, "min", -INFINITY), qllc_attr_float(n, "max", INFINITY)};
  if (run_time_input(n, 1) || run_time_input(n, 2)) { /* bounds given as graph inputs: read by the kernel */
    roles r = {.set = {0}};
    qllc_lower_roles_yx(&r, c, n->in[0], n->out[0]);
    r_int(&r, QLLC_ROLE_COUNT, qllc_value_numel(n->out[0]));
    r_opt(c, &r, QLLC_ROLE_A, run_time_input(n, 1) ? n->in[1] : NULL);
    r_opt(c, &r, QLLC_ROLE_B, run_time_input(n, 2) ? n->in[2] : NULL);
    r_float(&r, QLLC_ROLE_ACT_LO, f[0]);
    r_float(&r, QLLC_ROLE_ACT_HI, f[1]);
    return call(c, n, kname2(c, "clip_rt", n->in[0]->elem, n->out[0]->elem), &r);
  }
  for (int i = 1; i < 3 && i < n->n_in; i++) {
    if (!n->in[i]) continue;
    if (!const_scalar(n, i, &f[i - 1])) return unsupported(c, n, "min/max must be constants");
  }
  roles r = {.set = {0}};
  r_float(&r, QLLC_ROLE_ACT_LO, f[0]);
  r_float(&r, QLLC_ROLE_ACT_HI, f[1]);
  return unary(c, n, "clip", &r);
}

static qllc_status pool(ctx *c, const qllc_node *n, int is_max) {
  qllc_value *x = n->in[0], *y = n->out[0];
  if (!qllc_node_attr(n, "kernel_shape")) return invalid(c, n, "missing kernel_shape");
  geom g;
  qllc_status st = spatial(c, n, x, y, 1, 1, 1, &g);
  if (st) return st;
  if (!is_max && (g.dh != 1 || g.dw != 1)) return unsupported(c, n, "dilated AveragePool");
  roles r = {.set = {0}};
  qllc_lower_roles_yx(&r, c, x, y);
  qllc_lower_roles_pool(&r, n, x, &g);
  if (is_max && n->n_out > 1 && n->out[1]) { /* the Indices output (issue 15) */
    r_buf(&r, QLLC_ROLE_INDICES, buf_of(c, n->out[1]));
    r_int(&r, QLLC_ROLE_STORAGE_ORDER, qllc_attr_int(n, "storage_order", 0));
    return call(c, n, kname2(c, "maxpool2d_idx", x->elem, y->elem), &r);
  }
  return call(c, n, kname2(c, is_max ? "maxpool2d" : "avgpool2d", x->elem, y->elem), &r);
}

static qllc_status lower_maxpool(ctx *c, const qllc_node *n) { return pool(c, n, 1); }
static qllc_status lower_avgpool(ctx *c, const qllc_node *n) { return pool(c, n, 0); }

static qllc_status lower_global_avgpool(ctx *c, const qllc_node *n) {
  qllc_value *x = n->in[0], *y = n->out[0];
  if (x->rank < 2) return invalid(c, n, "input rank < 2");
  roles r = {.set = {0}};
  qllc_lower_roles_yx(&r, c, x, y);
  r_int(&r, QLLC_ROLE_NC, x->dims[0] * x->dims[1]);
  r_int(&r, QLLC_ROLE_HW, prod(x->dims, 2, x->rank));
  return call(c, n, kname2(c, "global_avgpool", x->elem, y->elem), &r);
}

/* ChannelAffine (y = x * a[c] + b[c]), and BatchNormalization whose statistics are computed at run time
 * (fold_batchnorm turned every constant one into a folded layer or a ChannelAffine): its mean and var too. */
static qllc_status lower_channel_affine(ctx *c, const qllc_node *n) {
  qllc_value *x = n->in[0], *y = n->out[0];
  int bn = n->op == QLLC_OP_BATCHNORM;
  if (x->rank < 2) return invalid(c, n, "input rank < 2");
  roles r = {.set = {0}};
  qllc_lower_roles_yx(&r, c, x, y);
  r_buf(&r, QLLC_ROLE_W, buf_of(c, n->in[1]));
  r_buf(&r, QLLC_ROLE_BIAS, buf_of(c, n->in[2]));
  r_int(&r, QLLC_ROLE_DIM_N, x->dims[0]);
  r_int(&r, QLLC_ROLE_DIM_C, x->dims[1]);
  r_int(&r, QLLC_ROLE_INNER, prod(x->dims, 2, x->rank));
  if (bn) {
    r_buf(&r, QLLC_ROLE_A, buf_of(c, n->in[3]));
    r_buf(&r, QLLC_ROLE_B, buf_of(c, n->in[4]));
    r_float(&r, QLLC_ROLE_EPS, qllc_attr_float(n, "epsilon", 1e-5f));
  }
  return call(c, n, kname2(c, bn ? "batchnorm" : "channel_affine", x->elem, y->elem), &r);
}

qllc_status qllc_lower_softmax_geom(ctx *c, const qllc_node *n, int64_t *outer_out, int64_t *len_out,
                                    int64_t *inner_out) {
  qllc_value *x = n->in[0];
  int64_t axis = qllc_attr_int(n, "axis", x->rank - 1);
  if (axis < 0) axis += x->rank;
  if (x->rank == 0) axis = 0;
  else if (axis < 0 || axis >= x->rank) return invalid(c, n, "axis out of range");
  int coerce = (int)qllc_attr_int(n, "coerce2d", 0);
  int64_t outer = prod(x->dims, 0, (int)axis);
  int64_t len = coerce ? prod(x->dims, (int)axis, x->rank) : x->rank ? x->dims[axis] : 1;
  int64_t inner = coerce ? 1 : prod(x->dims, (int)axis + 1, x->rank);
  *outer_out = outer, *len_out = len, *inner_out = inner;
  return QLLC_OK;
}

static qllc_status lower_softmax(ctx *c, const qllc_node *n) {
  qllc_value *x = n->in[0], *y = n->out[0];
  int64_t outer, len, inner;
  qllc_status st = qllc_lower_softmax_geom(c, n, &outer, &len, &inner);
  if (st) return st;
  roles r = {.set = {0}};
  qllc_lower_roles_yx(&r, c, x, y);
  r_int(&r, QLLC_ROLE_OUTER, outer);
  r_int(&r, QLLC_ROLE_AXIS_LEN, len);
  r_int(&r, QLLC_ROLE_INNER, inner);
  return call(c, n, kname2(c, "softmax", x->elem, y->elem), &r);
}

static qllc_status lower_transpose(ctx *c, const qllc_node *n) {
  qllc_value *x = n->in[0], *y = n->out[0];
  int r = x->rank;
  int64_t perm[QLLC_MAX_RANK], xs[QLLC_MAX_RANK], is[QLLC_MAX_RANK], od[QLLC_MAX_RANK];
  for (int d = 0; d < r; d++) perm[d] = r - 1 - d;
  if (ints_attr(n, "perm", r, perm)) return invalid(c, n, "perm does not match the rank");
  int seen = 0;
  for (int d = 0; d < r; d++) {
    if (perm[d] < 0) perm[d] += r;
    if (perm[d] < 0 || perm[d] >= r || (seen >> perm[d]) & 1) return invalid(c, n, "perm is not a permutation");
    seen |= 1 << perm[d];
  }
  int64_t s = 1;
  for (int d = r - 1; d >= 0; d--) xs[d] = s, s *= x->dims[d];
  for (int d = 0; d < r; d++) is[d] = xs[perm[d]], od[d] = x->dims[perm[d]];
  if (r == 0) od[0] = 1, is[0] = 1, r = 1;
  roles rv = {.set = {0}};
  qllc_lower_roles_yx(&rv, c, x, y);
  r_int(&rv, QLLC_ROLE_RANK, r);
  r_buf(&rv, QLLC_ROLE_OUT_DIMS, const_i64(c, n, "out_dims", r, od));
  r_buf(&rv, QLLC_ROLE_IN_STRIDES, const_i64(c, n, "in_strides", r, is));
  return call(c, n, kname2(c, "transpose", x->elem, y->elem), &rv);
}

static qllc_status lower_concat(ctx *c, const qllc_node *n) {
  qllc_value *y = n->out[0];
  int64_t axis = qllc_attr_int(n, "axis", 0);
  if (axis < 0) axis += y->rank;
  if (axis < 0 || axis >= y->rank) return invalid(c, n, "axis out of range");
  int64_t outer = prod(y->dims, 0, (int)axis), inner = prod(y->dims, (int)axis + 1, y->rank);
  size_t es = qllc_elem_size((qllc_elem_kind)y->elem);
  qllc_buffer *yb = buf_of(c, y);
  int64_t at = 0;
  for (int i = 0; i < n->n_in; i++) {
    qllc_value *x = n->in[i];
    if (!x) continue;
    if (x->rank != y->rank) return invalid(c, n, "input rank differs from output rank");
    int64_t cols = x->dims[axis] * inner;
    if (cols > 0 && outer > 0) {
      roles r = {.set = {0}};
      qllc_lower_roles_rows(&r, yb, (uint64_t)(at * inner) * es, buf_of(c, x), outer, cols, y->dims[axis] * inner,
                            cols);
      qllc_status st = call(c, n, kname2(c, "copy2d", x->elem, y->elem), &r);
      if (st) return st;
    }
    at += x->dims[axis];
  }
  if (at != y->dims[axis]) return invalid(c, n, "input sizes along axis do not add up to the output");
  return QLLC_OK;
}

qllc_status qllc_lower_pad_roles(ctx *c, const qllc_node *n, roles *rv, double *value_out) {
  qllc_value *x = n->in[0], *y = n->out[0];
  int r = x->rank;
  const char *mode = qllc_attr_string(n, "mode", "constant");
  int64_t pads[2 * QLLC_MAX_RANK] = {0};
  const int64_t *pv;
  int k = qllc_attr_ints(n, "pads", &pv);
  if (!pv && n->n_in > 1 && n->in[1]) {
    qllc_value *pin = n->in[1];
    if (!pin->data || pin->elem != QLLC_ELEM_I64) return unsupported(c, n, "pads must be a constant");
    pv = pin->data;
    k = (int)qllc_value_numel(pin);
  }
  if (pv && k != 2 * r) return invalid(c, n, "pads must have 2*rank entries");
  for (int i = 0; pv && i < k; i++) pads[i] = pv[i];
  for (int i = 0; i < 2 * r; i++)
    if (pads[i] < 0) return unsupported(c, n, "negative pads");
  double value = qllc_attr_float(n, "value", 0.0f);
  if (n->n_in > 2 && n->in[2] && !run_time_input(n, 2) && !const_scalar(n, 2, &value))
    return unsupported(c, n, "value must be a scalar");
  int64_t od[QLLC_MAX_RANK], id[QLLC_MAX_RANK];
  for (int d = 0; d < r; d++) id[d] = x->dims[d], od[d] = y->dims[d];
  if (r == 0) return invalid(c, n, "Pad of a scalar");
  qllc_lower_roles_yx(rv, c, x, y);
  r_int(rv, QLLC_ROLE_RANK, r);
  r_buf(rv, QLLC_ROLE_OUT_DIMS, const_i64(c, n, "out_dims", r, od));
  if (strcmp(mode, "constant") != 0) {
    /* reflect, edge, wrap: each output index's source offset, per axis (infer_tensor.c bounded the pads) */
    int64_t total = 0, stride = 1, *map;
    for (int d = 0; d < r; d++) total += od[d];
    if (total > QLLC_MAX_FOLD_BYTES / (int64_t)sizeof *map) { /* a constant of the bundle, as a folded one */
      char what[200];
      snprintf(what, sizeof what,
               "mode %s needs an index map of %lld output positions (%lld bytes), more than the %lld bytes a "
               "constant may have",
               mode, (long long)total, (long long)total * (long long)sizeof *map, (long long)QLLC_MAX_FOLD_BYTES);
      return unsupported(c, n, what);
    }
    if (!(map = qllc_arena_alloc(c->p->arena, sizeof *map * (size_t)(total ? total : 1)))) return oom(c);
    for (int d = r - 1, at = (int)total; d >= 0; stride *= id[d], d--) {
      at -= (int)od[d];
      for (int64_t o = 0; o < od[d]; o++) {
        int64_t i = qllc_pad_source(mode, o, pads[d], id[d]);
        if (i < 0 || i >= id[d]) return invalid(c, n, "pads too large for the mode");
        map[at + o] = i * stride;
      }
    }
    r_buf(rv, QLLC_ROLE_AXIS_MAP, const_i64(c, n, "axis_map", (int)total, map));
    *value_out = NAN; /* no value: the caller calls pad_map */
    return QLLC_OK;
  }
  r_buf(rv, QLLC_ROLE_IN_DIMS, const_i64(c, n, "in_dims", r, id));
  r_buf(rv, QLLC_ROLE_PADS_BEGIN, const_i64(c, n, "pads_begin", r, pads));
  *value_out = value;
  return QLLC_OK;
}

static qllc_status lower_pad(ctx *c, const qllc_node *n) {
  qllc_value *x = n->in[0], *y = n->out[0];
  roles r = {.set = {0}};
  double value;
  qllc_status st = qllc_lower_pad_roles(c, n, &r, &value);
  if (st) return st;
  if (isnan(value)) return call(c, n, kname2(c, "pad_map", x->elem, y->elem), &r);
  if (run_time_input(n, 2)) { /* the value given as a graph input (infer_tensor.c: a float scalar) */
    r_buf(&r, QLLC_ROLE_C, buf_of(c, n->in[2]));
    return call(c, n, kname2(c, "pad_rt", x->elem, y->elem), &r);
  }
  if (x->elem == QLLC_ELEM_F32) r_float(&r, QLLC_ROLE_VALUE, value);
  else r_int(&r, QLLC_ROLE_VALUE, (int64_t)value);
  return call(c, n, kname2(c, "pad", x->elem, y->elem), &r);
}

/* Views: no instruction; their output shares the input's buffer (see root_of). */
qllc_status qllc_lower_view(ctx *c, const qllc_node *n) {
  for (int i = 1; i < n->n_out; i++)
    if (n->out[i] && (n->out[i]->n_uses > 0 || n->out[i]->is_output))
      return unsupported(c, n, "only the first output is supported");
  if (!n->in[0] || qllc_value_bytes(n->in[0]) != qllc_value_bytes(n->out[0]))
    return invalid(c, n, "a view must keep the number of bytes");
  return QLLC_OK;
}

/* issue 15: the transformer and mobile ops (lower_ext.c), float and quantized */
qllc_status qllc_lower_ext_f32(ctx *c, const qllc_node *n);
qllc_status qllc_lower_ext_q(ctx *c, const qllc_node *n);

/* The dispatch table: one row per op, the float lowering and the quantized one (lower_q.c). An op
 * without an entry for the node's kind is rejected by lower_node naming the kernel it would need. */
typedef struct lowerer {
  lower_fn f32;
  lower_fn q;
} lowerer;

static const lowerer lowerers[QLLC_OP_COUNT] = {
    [QLLC_OP_CONV] = {lower_conv, qllc_lower_q_conv},
    [QLLC_OP_GEMM] = {lower_gemm, qllc_lower_q_fc},
    [QLLC_OP_MATMUL] = {lower_matmul, qllc_lower_q_matmul},
    [QLLC_OP_FC] = {lower_fc, qllc_lower_q_fc},
    [QLLC_OP_ADD] = {lower_binary, qllc_lower_q_binary},
    [QLLC_OP_SUB] = {lower_binary, qllc_lower_q_binary},
    [QLLC_OP_MUL] = {lower_binary, qllc_lower_q_binary},
    [QLLC_OP_DIV] = {lower_binary, NULL},
    [QLLC_OP_RELU] = {lower_relu, qllc_lower_q_clamp},
    [QLLC_OP_LEAKY_RELU] = {lower_leaky_relu, qllc_lower_q_table},
    [QLLC_OP_CLIP] = {lower_clip, qllc_lower_q_clamp},
    [QLLC_OP_SIGMOID] = {lower_sigmoid, qllc_lower_q_table},
    [QLLC_OP_TANH] = {lower_tanh, qllc_lower_q_table},
    [QLLC_OP_MAXPOOL] = {lower_maxpool, qllc_lower_q_maxpool},
    [QLLC_OP_AVGPOOL] = {lower_avgpool, qllc_lower_q_avgpool},
    [QLLC_OP_GLOBAL_AVGPOOL] = {lower_global_avgpool, qllc_lower_q_global_avgpool},
    [QLLC_OP_CHANNEL_AFFINE] = {lower_channel_affine, qllc_lower_q_channel_affine},
    [QLLC_OP_BATCHNORM] = {lower_channel_affine, NULL}, /* run-time statistics: float (quantize.c says why) */
    [QLLC_OP_SOFTMAX] = {lower_softmax, qllc_lower_q_softmax},
    [QLLC_OP_TRANSPOSE] = {lower_transpose, qllc_lower_q_transpose},
    [QLLC_OP_CONCAT] = {lower_concat, qllc_lower_q_concat},
    [QLLC_OP_PAD] = {lower_pad, qllc_lower_q_pad},
    [QLLC_OP_RESHAPE] = {qllc_lower_view, qllc_lower_q_view},
    [QLLC_OP_FLATTEN] = {qllc_lower_view, qllc_lower_q_view},
    [QLLC_OP_SQUEEZE] = {qllc_lower_view, qllc_lower_q_view},
    [QLLC_OP_UNSQUEEZE] = {qllc_lower_view, qllc_lower_q_view},
    [QLLC_OP_IDENTITY] = {qllc_lower_view, qllc_lower_q_view},
    [QLLC_OP_DROPOUT] = {qllc_lower_view, qllc_lower_q_view},
    [QLLC_OP_QUANTIZE] = {NULL, qllc_lower_q_quantize},
    [QLLC_OP_DEQUANTIZE] = {NULL, qllc_lower_q_dequantize},
    [QLLC_OP_CUSTOM] = {qllc_lower_custom, qllc_lower_custom},
    /* issue 15: lower_ext.c */
    [QLLC_OP_ERF] = {qllc_lower_ext_f32, qllc_lower_ext_q},
    [QLLC_OP_SQRT] = {qllc_lower_ext_f32, qllc_lower_ext_q},
    [QLLC_OP_EXP] = {qllc_lower_ext_f32, qllc_lower_ext_q},
    [QLLC_OP_NEG] = {qllc_lower_ext_f32, qllc_lower_ext_q},
    [QLLC_OP_RECIPROCAL] = {qllc_lower_ext_f32, qllc_lower_ext_q},
    [QLLC_OP_POW] = {qllc_lower_ext_f32, qllc_lower_ext_q},
    [QLLC_OP_HARD_SIGMOID] = {qllc_lower_ext_f32, qllc_lower_ext_q},
    [QLLC_OP_HARD_SWISH] = {qllc_lower_ext_f32, qllc_lower_ext_q},
    [QLLC_OP_GELU] = {qllc_lower_ext_f32, qllc_lower_ext_q},
    [QLLC_OP_LAYER_NORM] = {qllc_lower_ext_f32, qllc_lower_ext_q},
    [QLLC_OP_REDUCE_MEAN] = {qllc_lower_ext_f32, qllc_lower_ext_q},
    [QLLC_OP_REDUCE_SUM] = {qllc_lower_ext_f32, qllc_lower_ext_q},
    [QLLC_OP_REDUCE_MAX] = {qllc_lower_ext_f32, qllc_lower_ext_q},
    [QLLC_OP_PRELU] = {qllc_lower_ext_f32, qllc_lower_ext_q},
    [QLLC_OP_SLICE] = {qllc_lower_ext_f32, qllc_lower_ext_q},
    [QLLC_OP_EXPAND] = {qllc_lower_ext_f32, qllc_lower_ext_q},
    [QLLC_OP_SPLIT] = {qllc_lower_ext_f32, qllc_lower_ext_q},
    [QLLC_OP_GATHER] = {qllc_lower_ext_f32, qllc_lower_ext_q},
    [QLLC_OP_RESIZE] = {qllc_lower_ext_f32, qllc_lower_ext_q},
    [QLLC_OP_UPSAMPLE] = {qllc_lower_ext_f32, qllc_lower_ext_q},
    [QLLC_OP_MAX] = {qllc_lower_ext_f32, qllc_lower_ext_q},
    [QLLC_OP_MIN] = {qllc_lower_ext_f32, qllc_lower_ext_q},
    [QLLC_OP_MEAN] = {qllc_lower_ext_f32, qllc_lower_ext_q},
    [QLLC_OP_CONV_TRANSPOSE] = {qllc_lower_ext_f32, NULL},
    [QLLC_OP_WHERE] = {qllc_lower_ext_f32, qllc_lower_ext_f32}, /* its condition is u8: float either way */
};

static qllc_status lower_node(ctx *c, const qllc_node *n) {
  if (qllc_lower_qdq_owns(n)) return qllc_lower_qdq(c, n); /* pre-quantized models: lower_qdq.c */
  int q = qllc_lower_is_quantized(n);
  lower_fn fn = n->op >= 0 && n->op < QLLC_OP_COUNT ? (q ? lowerers[n->op].q : lowerers[n->op].f32) : NULL;
  if (!fn) {
    /* Name the kernel it would need, by the same grammar. */
    char base[64];
    const char *on = n->op >= 0 && n->op < QLLC_OP_COUNT ? qllc_op_name(n->op) : "unknown";
    qllc_lower_op_stem(n->op, base, sizeof base);
    qllc_elem ein = n->n_in > 0 && n->in[0] ? n->in[0]->elem : QLLC_ELEM_F32;
    qllc_elem eout = n->n_out > 0 && n->out[0] ? n->out[0]->elem : ein;
    return qllc_fail(c->diag, QLLC_ERR_UNSUPPORTED, n->name, "node '%s': %s: not supported by lowering%s (would need kernel qllc_k_%s_%s_%s)",
                     n->name, n->op_type ? n->op_type : on, q ? " when quantized" : "", base, ename(ein), ename(eout));
  }
  for (int i = 0; i < n->n_out; i++)
    if (!n->out[i]) return invalid(c, n, "missing output");
  if (n->op == QLLC_OP_CUSTOM) return fn(c, n); /* any number of inputs, all optional */
  if (n->n_out < 1 || n->n_in < 1 || !n->in[0]) return invalid(c, n, "missing input");
  return fn(c, n);
}

/* ---- program construction ---------------------------------------------------------------------- */

typedef struct pending_copy {
  qllc_value *out;
  qllc_buffer *dst;
} pending_copy;

static qllc_status emit_copy(ctx *c, qllc_value *out, qllc_buffer *dst) {
  roles r = {.set = {0}};
  r_buf(&r, QLLC_ROLE_Y, dst);
  r_buf(&r, QLLC_ROLE_X, buf_of(c, out));
  qllc_elem e = out->elem;
  int64_t n = qllc_value_numel(out);
  /* A copy only moves bytes and libjit has no i64 kernels: an i64 output (e.g. a folded Shape) is
   * copied as twice as many i32. */
  if (e == QLLC_ELEM_I64) e = QLLC_ELEM_I32, n *= 2;
  r_int(&r, QLLC_ROLE_COUNT, n);
  const char *k = kname2(c, "copy", e, e);
  if (k && check_kernel(c, NULL, k) != QLLC_OK)
    return qllc_fail(c->diag, QLLC_ERR_UNSUPPORTED, NULL, "graph output '%s': no kernel %s to copy it", out->name, k);
  return call(c, out->producer, k, &r);
}

static void liveness(qllc_program *p) {
  for (int i = 0; i < p->n_instrs; i++) {
    const qllc_instr *in = &p->instrs[i];
    for (int k = 0; k < in->n_args; k++) {
      qllc_buffer *b = in->args[k].buf;
      if (in->args[k].kind != QLLC_ARG_BUF || !b || b->region != QLLC_REGION_ACT) continue;
      if (b->first_use < 0) b->first_use = i;
      b->last_use = i;
    }
  }
}

static qllc_status build(ctx *c) {
  qllc_graph *g = c->g;
  qllc_program *p = c->p;
  p->n_inputs = g->n_inputs;
  p->n_outputs = g->n_outputs;
  p->inputs = qllc_arena_alloc(p->arena, (size_t)(g->n_inputs + 1) * sizeof *p->inputs);
  p->outputs = qllc_arena_alloc(p->arena, (size_t)(g->n_outputs + 1) * sizeof *p->outputs);
  pending_copy *copies = qllc_arena_alloc(p->arena, (size_t)(g->n_outputs + 1) * sizeof *copies);
  if (!p->inputs || !p->outputs || !copies) return oom(c);
  for (int i = 0; i < g->n_values; i++)
    if (g->values[i]->id != i) return qllc_fail(c->diag, QLLC_ERR_INVALID, NULL, "value ids are not graph indices");

  /* Inputs: their own MUTABLE buffers, in order. */
  uint64_t off = 0;
  for (int i = 0; i < g->n_inputs; i++) {
    qllc_value *v = g->inputs[i];
    qllc_buffer *b = buffer_new(c, v->name, QLLC_REGION_MUTABLE, v->elem, qllc_value_bytes(v));
    if (!b) return oom(c);
    b->value = v;
    b->offset = off;
    off += align_up(b->size);
    c->cls[v->id] = b;
    p->inputs[i] = (qllc_io_desc){v, b};
  }
  /* Outputs: the first output of a computed alias class becomes the class's buffer; others copy. */
  int n_copies = 0;
  for (int i = 0; i < g->n_outputs; i++) {
    qllc_value *v = g->outputs[i], *r = root_of(v);
    qllc_buffer *b = buffer_new(c, v->name, QLLC_REGION_MUTABLE, v->elem, qllc_value_bytes(v));
    if (!b) return oom(c);
    b->value = v;
    b->offset = off;
    off += align_up(b->size);
    p->outputs[i] = (qllc_io_desc){v, b};
    if (!r->is_input && !is_const(r) && !c->cls[r->id]) c->cls[r->id] = b;
    else copies[n_copies++] = (pending_copy){v, b};
  }
  p->mutable_size = off;

  for (int i = 0; i < g->n_nodes; i++) {
    const qllc_node *n = g->nodes[i];
    if (n->dead) continue;
    qllc_status st = lower_node(c, n);
    if (st) return st;
  }
  for (int i = 0; i < n_copies; i++) {
    qllc_status st = emit_copy(c, copies[i].out, copies[i].dst);
    if (st) return st;
  }
  qllc_status st = qllc_pass_layout(p, c->diag);
  if (st) return st;
  liveness(p);
  return qllc_pass_memory_plan(p, c->diag);
}

qllc_status qllc_lower(qllc_graph *g, qllc_program **out, qllc_diag *diag) {
  return qllc_lower_for(g, NULL, out, diag);
}

/* The layers on a row taken only for its channel-last ends (qllc_instr.nhwc_only) that the layout pass left
   with an NCHW end join c->refused; returns how many joined. */
static int refuse_nchw_ends(ctx *c) {
  int added = 0;
  for (int i = 0; i < c->p->n_instrs; i++) {
    const qllc_instr *in = &c->p->instrs[i];
    if (!in->nhwc_only || !in->converts || !in->node) continue;
    int known = 0;
    for (int k = 0; k < c->n_refused; k++) known |= c->refused[k] == in->node;
    if (!known) c->refused[c->n_refused++] = in->node, added++;
  }
  return added;
}

/* Lowers g; when a layer taken on a row for its channel-last ends got an NCHW end, lowers again with that
   layer on its next row (its neighbours' classes may change too, hence the loop: each round refuses at
   least one more layer, so it ends). */
qllc_status qllc_lower_for(qllc_graph *g, const qllc_lower_target *t, qllc_program **out, qllc_diag *diag) {
  *out = NULL;
  const qllc_node **refused = calloc((size_t)g->n_nodes + 1, sizeof *refused);
  int n_refused = 0;
  if (!refused) return qllc_fail(diag, QLLC_ERR_NOMEM, NULL, "out of memory while lowering");
  for (;;) {
    qllc_arena *arena = qllc_arena_new();
    qllc_program *p = arena ? qllc_arena_alloc(arena, sizeof *p) : NULL;
    qllc_buffer **cls = calloc((size_t)g->n_values + 1, sizeof *cls);
    qllc_buffer **packed = calloc((size_t)g->n_values + 1, sizeof *packed);
    if (!p || !cls || !packed) {
      free(cls);
      free(packed);
      free(refused);
      if (arena) qllc_arena_free(arena);
      return qllc_fail(diag, QLLC_ERR_NOMEM, NULL, "out of memory while lowering");
    }
    p->graph = g;
    p->arena = arena;
    qllc_graph_recount_uses(g); /* producers and use counts are what root_of and the views rely on */
    ctx c = {.g = g, .p = p, .diag = diag, .cls = cls, .packed = packed, .target = t, .refused = refused,
             .n_refused = n_refused};
    qllc_status st = build(&c);
    free(cls);
    free(packed);
    if (st) {
      free(refused);
      qllc_arena_free(arena);
      qllc_diag_set_file(diag, g->path);
      return st;
    }
    if (refuse_nchw_ends(&c) > 0) {
      n_refused = c.n_refused;
      qllc_arena_free(arena);
      continue;
    }
    free(refused);
    *out = p;
    return QLLC_OK;
  }
}

void qllc_program_free(qllc_program *p) {
  if (p) qllc_arena_free(p->arena);
}

/* ---- shared with lower_q.c (lower_internal.h) --------------------------------------------------- */

qllc_buffer *qllc_lower_buf_of(ctx *c, qllc_value *v) { return buf_of(c, v); }
qllc_buffer *qllc_lower_buffer_new(ctx *c, const char *name, qllc_region region, qllc_elem elem, uint64_t size) {
  return buffer_new(c, name, region, elem, size);
}
qllc_buffer *qllc_lower_const_i64(ctx *c, const qllc_node *n, const char *what, int count, const int64_t *vals) {
  return const_i64(c, n, what, count, vals);
}
qllc_status qllc_lower_emit(ctx *c, const qllc_node *n, const char *kernel, const argv *av) {
  return emit(c, n, kernel, av);
}
const char *qllc_lower_kname(ctx *c, const char *base, int n_elems, const qllc_elem *elems) {
  return kname(c, base, n_elems, elems);
}
qllc_status qllc_lower_unsupported(ctx *c, const qllc_node *n, const char *what) { return unsupported(c, n, what); }
qllc_status qllc_lower_invalid(ctx *c, const qllc_node *n, const char *what) { return invalid(c, n, what); }
qllc_status qllc_lower_oom(ctx *c) { return oom(c); }
int64_t qllc_lower_prod(const int64_t *d, int from, int to) { return prod(d, from, to); }
qllc_status qllc_lower_spatial(ctx *c, const qllc_node *n, const qllc_value *x, const qllc_value *y, int64_t kh,
                               int64_t kw, int has_kernel_attr, qllc_lower_geom *g) {
  return spatial(c, n, x, y, kh, kw, has_kernel_attr, g);
}
int qllc_lower_broadcast(const qllc_value *y, const qllc_value *a, const qllc_value *b, int64_t *dims, int64_t *as,
                         int64_t *bs) {
  return broadcast(y, a, b, dims, as, bs);
}
qllc_status qllc_lower_plain_transpose(ctx *c, const qllc_node *n) { return lower_transpose(c, n); }
qllc_status qllc_lower_plain_maxpool(ctx *c, const qllc_node *n) { return lower_maxpool(c, n); }
