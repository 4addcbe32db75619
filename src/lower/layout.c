/* src/lower/layout.c: the activation layout pass (qllc_pass_layout).
 *
 * Every value is NCHW in the graph and at the bundle's boundary. Some kernels also read and write
 * activations channel-last (NHWC): the catalogue rows flagged ALT_NHWC (variants.def), which take
 * LAYOUT_X and LAYOUT_Y arguments (0 NCHW, 1 NHWC) after SCRATCH. Keeping a value NHWC between two such
 * kernels saves the producer's transpose into NCHW and the consumer's conversion of NCHW into its
 * 4-channel planes.
 *
 * Algorithm, on the lowered program (kernels already chosen, before liveness):
 *  1. Classes. The activation buffers (region ACT, not a kernel's scratch) that elementwise kernels tie
 *     together are one class (union-find): Add/Sub/Mul without broadcasting, Clamp, Requantize, tables,
 *     Quantize/Dequantize, when every operand has the node's output shape and starts at byte 0. Such a
 *     kernel computes the same bytes in any layout, as long as all its operands share it.
 *  2. Vetoes. A class stays NCHW when any other kernel touches one of its buffers other than as the X
 *     or Y of an ALT_NHWC row, or of a kernel with a channel-last twin (kernels.def, QTWIN: the 8-bit max
 *     pool and global average pool), at byte 0 (another pool, a concat writing into a part, a view read
 *     by a Flatten's consumer: the buffer is the same, so its readers are), or when an elementwise kernel
 *     of it also reads or writes the bundle's inputs, outputs or constants (those keep the model's layout).
 *  3. A class without a veto that an ALT_NHWC kernel touches becomes NHWC: its buffers' nhwc, and the
 *     LAYOUT_X / LAYOUT_Y arguments of the kernels reading or writing it, are set. A twin kernel alone
 *     does not make a class NHWC (it gains nothing by it); where its input or output is NHWC, the twin
 *     replaces the kernel, with DIM_C, LAYOUT_X and LAYOUT_Y appended (elsewhere the call is unchanged).
 *  4. The kernels that flagged a choice as taken for its channel-last ends (qllc_instr.nhwc_only: the
 *     conv2dcl rows whose predicate said 2, pack.h) are checked: one left with an NCHW end is returned
 *     in the caller's list, and the lowering runs again with that layer on its next row (lower.c).
 * No conversion instruction is ever inserted: a kernel that takes both layouts converts inside where a
 * neighbour needs NCHW, as it did before this pass, so no layer gets slower; qllc_instr.converts records
 * the conversions left (an ALT_NHWC row's or twin's NCHW input or output; the 4-channel-plane convs'
 * input, which they convert from NCHW always), which `qllc info` lists (qllc_program_layout_report). An
 * output of one pixel per channel (a global pool's) is the same bytes in both layouts: no conversion.
 */
#include <stdlib.h>
#include <string.h>

#include "lower/lower.h"
#include "lower/lower_internal.h"

typedef struct lay {
  int *parent;  /* union-find over buffer ids */
  char *veto;   /* per class root: stays NCHW */
  char *wants;  /* per class root: an ALT_NHWC kernel reads or writes it */
} lay;

static int find(lay *l, int i) {
  while (l->parent[i] != i) i = l->parent[i] = l->parent[l->parent[i]];
  return i;
}
static void unite(lay *l, int a, int b) {
  a = find(l, a), b = find(l, b);
  if (a != b) l->parent[b] = a;
}

static int is_operand(unsigned char role) {
  return role == QLLC_ROLE_Y || role == QLLC_ROLE_X || role == QLLC_ROLE_A || role == QLLC_ROLE_B;
}
static int is_act(const qllc_arg *a) { return a->kind == QLLC_ARG_BUF && a->buf && a->buf->region == QLLC_REGION_ACT; }

static int same_dims(const qllc_value *a, const qllc_value *b) {
  if (!a || !b || a->rank != b->rank) return 0;
  for (int i = 0; i < a->rank; i++)
    if (a->dims[i] != b->dims[i]) return 0;
  return 1;
}

/* 1 when instruction in is an elementwise kernel whose operands all have its node's output shape: the
   same bytes in any layout. */
static int elementwise(const qllc_instr *in) {
  const qllc_krow *r = qllc_lower_row(in->kernel);
  if (!r || !in->node) return 0;
  switch (r->sig) {
  case QLLC_SIG_addsub_q:
  case QLLC_SIG_mul_q:
  case QLLC_SIG_requantize_q:
  case QLLC_SIG_clamp_q:
  case QLLC_SIG_lut_q:
  case QLLC_SIG_qdq_q:
  case QLLC_SIG_unary:
  case QLLC_SIG_clip_f: break;
  default: return 0;
  }
  const qllc_node *n = in->node;
  if (n->n_out != 1 || !n->out[0]) return 0;
  for (int i = 0; i < n->n_in; i++)
    if (n->in[i] && !n->in[i]->data && !same_dims(n->in[i], n->out[0])) return 0;
  return 1;
}

/* 1 when instruction in's kernel has a channel-last twin it can be swapped for: a rank-4 pool. */
static const char *twin_of(const qllc_instr *in) {
  const char *t = qllc_lower_nhwc_twin(in->kernel);
  if (!t || !in->node || in->node->n_in < 1 || !in->node->in[0] || in->node->in[0]->rank != 4) return NULL;
  return t;
}

/* Swaps instruction in for its twin: the same arguments, then C and the layouts xl, yl. */
static int swap_twin(qllc_program *p, qllc_instr *in, const char *twin, int64_t xl, int64_t yl) {
  qllc_arg *args = qllc_arena_alloc(p->arena, (size_t)(in->n_args + 3) * sizeof *args);
  if (!args) return -1;
  memcpy(args, in->args, (size_t)in->n_args * sizeof *args);
  const int64_t v[3] = {in->node->in[0]->dims[1], xl, yl};
  for (int k = 0; k < 3; k++) args[in->n_args + k] = (qllc_arg){.kind = QLLC_ARG_INT, .i = v[k]};
  in->args = args, in->n_args += 3, in->kernel = twin;
  return 0;
}

/* The layouts (1 NHWC) of instruction in's X and Y after step 3; returns its role count (roles: its roles). */
static int operand_layouts(const qllc_instr *in, unsigned char *roles, int *xl, int *yl) {
  const int k = qllc_lower_kernel_role_ids(in->kernel, roles, QLLC_LOWER_MAX_ARGS);
  *xl = *yl = 0;
  for (int a = 0; a < k && a < in->n_args; a++) {
    const qllc_arg *ar = &in->args[a];
    if (roles[a] == QLLC_ROLE_X) *xl = is_act(ar) && ar->buf->nhwc;
    if (roles[a] == QLLC_ROLE_Y) *yl = is_act(ar) && ar->buf->nhwc;
  }
  return k;
}

/* 1 when a rank-4 value has one pixel per channel: NCHW and NHWC are the same bytes. */
static int one_pixel(const qllc_value *v) { return v && v->rank == 4 && v->dims[2] * v->dims[3] == 1; }

qllc_status qllc_pass_layout(qllc_program *p, qllc_diag *diag) {
  int any = 0; /* a kernel that takes NHWC at all: else nothing to do */
  for (int i = 0; i < p->n_instrs && !any; i++) {
    const qllc_kvariant *v = qllc_lower_variant_of(p->instrs[i].kernel);
    any = v && (v->flags & QLLC_VF_NHWC);
  }
  lay l = {calloc((size_t)p->n_buffers + 1, sizeof(int)), calloc((size_t)p->n_buffers + 1, 1),
           calloc((size_t)p->n_buffers + 1, 1)};
  if (!l.parent || !l.veto || !l.wants) {
    free(l.parent), free(l.veto), free(l.wants);
    return qllc_fail(diag, QLLC_ERR_NOMEM, NULL, "out of memory in the layout pass");
  }
  for (int i = 0; i < p->n_buffers; i++) l.parent[i] = i;
  unsigned char roles[QLLC_LOWER_MAX_ARGS];

  /* 1. classes */
  for (int i = 0; any && i < p->n_instrs; i++) {
    const qllc_instr *in = &p->instrs[i];
    if (!elementwise(in)) continue;
    const int k = qllc_lower_kernel_role_ids(in->kernel, roles, QLLC_LOWER_MAX_ARGS);
    int first = -1;
    for (int a = 0; a < k && a < in->n_args; a++)
      if (is_operand(roles[a]) && is_act(&in->args[a])) {
        const int id = in->args[a].buf->id;
        if (first < 0) first = id;
        else unite(&l, first, id);
      }
  }
  /* 2. vetoes, and which classes an ALT_NHWC kernel touches */
  for (int i = 0; any && i < p->n_instrs; i++) {
    const qllc_instr *in = &p->instrs[i];
    const qllc_kvariant *v = qllc_lower_variant_of(in->kernel);
    const int nhwc_row = v && (v->flags & QLLC_VF_NHWC), elt = elementwise(in), twin = twin_of(in) != NULL;
    const int k = qllc_lower_kernel_role_ids(in->kernel, roles, QLLC_LOWER_MAX_ARGS);
    int outside = 0; /* an elementwise kernel with an operand outside the activations */
    for (int a = 0; a < in->n_args; a++) {
      const qllc_arg *ar = &in->args[a];
      const unsigned char role = a < k ? roles[a] : QLLC_ROLE_SCRATCH;
      if (elt && is_operand(role) && ar->kind == QLLC_ARG_BUF && ar->buf && !is_act(ar)) outside = 1;
      if (!is_act(ar) || role == QLLC_ROLE_SCRATCH) continue;
      const int c = find(&l, ar->buf->id);
      if (elt && is_operand(role) && ar->byte_offset == 0) continue;
      if ((nhwc_row || twin) && (role == QLLC_ROLE_X || role == QLLC_ROLE_Y) && ar->byte_offset == 0) {
        if (nhwc_row) l.wants[c] = 1;
      } else l.veto[c] = 1;
    }
    if (outside)
      for (int a = 0; a < in->n_args; a++)
        if (is_act(&in->args[a])) l.veto[find(&l, in->args[a].buf->id)] = 1;
  }
  /* 3. the layouts, the kernels' layout arguments and the conversions left */
  for (int i = 0; i < p->n_buffers; i++) {
    const int c = find(&l, i);
    p->buffers[i]->nhwc = any && p->buffers[i]->region == QLLC_REGION_ACT && l.wants[c] && !l.veto[c];
  }
  for (int i = 0; i < p->n_instrs; i++) {
    qllc_instr *in = &p->instrs[i];
    const qllc_kvariant *v = qllc_lower_variant_of(in->kernel);
    in->converts = 0;
    const char *twin = twin_of(in);
    if (twin) {
      int xl, yl;
      operand_layouts(in, roles, &xl, &yl);
      if (!xl && !yl) continue;
      if (one_pixel(in->node->out[0])) yl = xl;
      if (swap_twin(p, in, twin, xl, yl)) {
        free(l.parent), free(l.veto), free(l.wants);
        return qllc_fail(diag, QLLC_ERR_NOMEM, NULL, "out of memory in the layout pass");
      }
      in->converts = (unsigned char)(xl == yl ? 0 : xl ? QLLC_CONV_OUT : QLLC_CONV_IN);
      continue;
    }
    if (!v) continue;
    if (v->layout == QLLC_LAYOUT_ROWS_C4 || v->layout == QLLC_LAYOUT_ROWS_C2 || v->layout == QLLC_LAYOUT_ROWS_C2_SPLIT)
      in->converts = QLLC_CONV_IN; /* NCHW into 4- or 2-channel planes, always */
    if (!(v->flags & QLLC_VF_NHWC)) continue;
    int xl, yl;
    const int k = operand_layouts(in, roles, &xl, &yl);
    for (int a = 0; a < k && a < in->n_args; a++) {
      if (roles[a] == QLLC_ROLE_LAYOUT_X) in->args[a].i = xl;
      if (roles[a] == QLLC_ROLE_LAYOUT_Y) in->args[a].i = yl;
    }
    in->converts = (unsigned char)((xl ? 0 : QLLC_CONV_IN) | (yl ? 0 : QLLC_CONV_OUT));
  }
  free(l.parent), free(l.veto), free(l.wants);
  return QLLC_OK;
}
