/* src/lower/lower_q.c: lowering of quantized nodes (issues 3 and 4).
 *
 * A node takes this path when it has a quantization record (node->quant, a qllc_qnode from
 * src/quant) or reads or writes an integer activation (i8, u8, i16), which every QuantizeLinear /
 * DequantizeLinear does (one of f32 -> f32 has no kernel either way). The dispatch is lower.c's one
 * table (a float and a quantized column per op).
 *
 * Every call is made by the generic emitter: a lowering sets the values of the kernel's argument
 * roles (Y X W BIAS M N, shapes, Z_X Z_Y ACT_LO ACT_HI, SCRATCH for an ISA variant) and
 * qllc_lower_call orders them by the kernel's row in src/lower/kernels.def, whose signatures follow
 * libjit/bitcode/kernels_q.h exactly. No function here knows a kernel's parameter order.
 *
 * What is read from where (the quantizer's record is the contract in src/quant/quant.h section 5):
 *   - Zero points and scales of activations come from the graph values (value->zero_point, ->scale):
 *     they are what the neighbouring kernels were lowered with. Where the record repeats one (a fused
 *     layer's z_x, folded into its bias; z_y; inputs[i].zero_point), it must agree with the value, else
 *     the lowering fails INVALID naming the node: a quantizer bug must not become wrong numbers.
 *   - Multipliers, tables, clamps and constant arrays come only from the record (computed once, in
 *     src/quant; docs/numerics.md). The lowering never derives a requantization parameter.
 *   - FUSED (Conv, FC, Gemm, MatMul with a constant operand, ChannelAffine): the weight and bias
 *     graph inputs are the FLOAT constants and are never given buffers; w_packed ([channels][K]:
 *     Conv [M][C/g][KH][KW], FC [N][K]), bias (int32 or int64 per acc_elem), m and n become CONST
 *     buffers copied into the program's arena, named after the weight / bias values (so a bundle's
 *     header lists "fc.weight i8<...>", "fc.bias i32<...>") and "<node>.m" / "<node>.n".
 *   - MATMUL: z_a = input 0's zero point, z_b = input 1's (the record's z_w must agree), m[0], n[0].
 *   - RESCALE: Add/Sub: inputs[i].m and shared_n. Mul: the product multiplier m[0], n[0] when the
 *     record has arrays, else inputs[0].m/n. Concat: inputs[i].m/n per input; an input whose value
 *     has the output's parameters is copied (copy2d), the others requantized. Global average pool and
 *     a Relu/Clip that changes parameters: inputs[0].m/n (else m[0]/n[0]). Average pool: pool_m,
 *     pool_n of KH*KW + 1 entries.
 *   - TABLE: the 256-entry (8-bit) or 513-entry (i16) table of the output type.
 *   - SOFTMAX: the int32 exp table (256 or 513) and softmax_recip.
 *   - SAME (max pool, views, transpose, pad, Relu/Clip as a clamp): output parameters must equal the
 *     input's (INVALID otherwise); a view never changes bytes, so the record is optional there. Pad:
 *     the record's z_x is the integer pad value.
 *   - act_lo/act_hi of every record that clamps must lie within the output type's range.
 * Integer immediates (zero points, m, n, clamps, recip) are QLLC_ARG_INT; the scales of
 * quantize/dequantize are QLLC_ARG_FLOAT. Anything else (per-channel activations, a missing record
 * where one is needed, an element combination libjit lacks) is UNSUPPORTED naming the node and,
 * where there is one, the kernel.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "lower/lower_internal.h"
#include "lower/pack.h"
#include "quant/quant.h"

/* ---- helpers ------------------------------------------------------------------------------------ */

typedef qllc_lower_ctx ctx;
typedef qllc_lower_roles roles;

static int is_int_act(qllc_elem e) { return e == QLLC_ELEM_I8 || e == QLLC_ELEM_U8 || e == QLLC_ELEM_I16; }

int qllc_lower_is_quantized(const qllc_node *n) {
  if (n->quant) return 1;
  if (n->n_in > 0 && n->in[0] && is_int_act(n->in[0]->elem)) return 1;
  return n->n_out > 0 && n->out[0] && is_int_act(n->out[0]->elem);
}

static const char *ename(qllc_elem e) { return qllc_elem_name((qllc_elem_kind)e); }
static const char *opname(const qllc_node *n) { return n->op_type ? n->op_type : qllc_op_name(n->op); }

static const char *kname2(ctx *c, const char *base, qllc_elem a, qllc_elem b) {
  qllc_elem e[2] = {a, b};
  return qllc_lower_kname(c, base, 2, e);
}
static const char *kname3(ctx *c, const char *base, qllc_elem a, qllc_elem b, qllc_elem o) {
  qllc_elem e[3] = {a, b, o};
  return qllc_lower_kname(c, base, 3, e);
}

static void r_buf(roles *r, qllc_role role, qllc_buffer *b) { qllc_role_buf(r, role, b, 0); }
static void r_int(roles *r, qllc_role role, int64_t i) { qllc_role_int(r, role, i); }

static qllc_status fail_node(ctx *c, const qllc_node *n, qllc_status st, const char *fmt, const char *a,
                             long long x, long long y) {
  char what[384];
  snprintf(what, sizeof what, fmt, a ? a : "", x, y);
  return st == QLLC_ERR_UNSUPPORTED ? qllc_lower_unsupported(c, n, what) : qllc_lower_invalid(c, n, what);
}

/* The record of a node that needs one (kind `want`, or any kind when want is QLLC_QK_NONE). */
static qllc_status need_record(ctx *c, const qllc_node *n, qllc_qkind want, const qllc_qnode **out) {
  const qllc_qnode *q = n->quant;
  *out = q;
  if (!q) return qllc_lower_unsupported(c, n, "integer values but no quantization record (node->quant)");
  if (want != QLLC_QK_NONE && q->kind != want)
    return fail_node(c, n, QLLC_ERR_INVALID, "quantization record of kind %s%lld, expected kind %lld", "",
                     (long long)q->kind, (long long)want);
  return QLLC_OK;
}

/* Per-tensor integer activation (per-channel activations have no kernel). */
static qllc_status check_act_value(ctx *c, const qllc_node *n, const qllc_value *v) {
  if (!is_int_act(v->elem))
    return qllc_fail(c->diag, QLLC_ERR_UNSUPPORTED, n->name,
                     "node '%s': %s: value '%s' is %s where an i8/u8/i16 activation is expected", n->name,
                     opname(n), v->name, ename(v->elem));
  if (v->q_axis >= 0)
    return qllc_fail(c->diag, QLLC_ERR_UNSUPPORTED, n->name,
                     "node '%s': %s: value '%s' has per-channel parameters; activations must be per tensor", n->name,
                     opname(n), v->name);
  return QLLC_OK;
}

/* The record repeats a zero point the graph value also has: they must agree. */
static qllc_status check_z(ctx *c, const qllc_node *n, const char *what, int32_t rec, const qllc_value *v) {
  if (rec == v->zero_point) return QLLC_OK;
  return qllc_fail(c->diag, QLLC_ERR_INVALID, n->name,
                   "node '%s': %s: quantization record's %s (%d) differs from value '%s' zero point (%d)", n->name,
                   opname(n), what, (int)rec, v->name, (int)v->zero_point);
}

static qllc_status check_clamp(ctx *c, const qllc_node *n, const qllc_qnode *q, const qllc_value *y) {
  int32_t qmin, qmax;
  if (qllc_quant_range(y->elem, 0, &qmin, &qmax) == 0 && q->act_lo <= q->act_hi && q->act_lo >= qmin &&
      q->act_hi <= qmax)
    return QLLC_OK;
  return qllc_fail(c->diag, QLLC_ERR_INVALID, n->name,
                   "node '%s': %s: quantization record's clamp [%d, %d] is not within %s's range", n->name,
                   opname(n), (int)q->act_lo, (int)q->act_hi, ename(y->elem));
}

static int same_params(const qllc_value *a, const qllc_value *b) {
  return a->elem == b->elem && a->scale == b->scale && a->zero_point == b->zero_point && a->q_axis < 0 &&
         b->q_axis < 0;
}

static qllc_status check_same(ctx *c, const qllc_node *n, const qllc_value *x, const qllc_value *y) {
  if (same_params(x, y)) return QLLC_OK;
  char tx[160], ty[160];
  return qllc_fail(c->diag, QLLC_ERR_INVALID, n->name,
                   "node '%s': %s: moves data without arithmetic, but input '%s' is %s and output '%s' is %s",
                   n->name, opname(n), x->name, qllc_type_str(x, tx, sizeof tx), y->name,
                   qllc_type_str(y, ty, sizeof ty));
}

/* A CONST buffer holding a copy of a record's array (in the program's arena). */
static qllc_buffer *qconst(ctx *c, const char *name, qllc_elem elem, int64_t count, const void *data) {
  size_t bytes = (size_t)count * qllc_elem_size((qllc_elem_kind)elem);
  qllc_buffer *b = qllc_lower_buffer_new(c, name, QLLC_REGION_CONST, elem, bytes);
  if (!b) return NULL;
  b->data = qllc_arena_memdup(c->p->arena, data, bytes ? bytes : 1);
  return b->data ? b : NULL;
}

static qllc_status missing(ctx *c, const qllc_node *n, const char *field) {
  return qllc_fail(c->diag, QLLC_ERR_INVALID, n->name, "node '%s': %s: quantization record has no %s", n->name,
                   opname(n), field);
}

/* Input i's multiplier and zero point from a RESCALE record (zero point checked against the value). */
static qllc_status rescale_input(ctx *c, const qllc_node *n, const qllc_qnode *q, int i, int32_t *m, int32_t *sh) {
  if (!q->inputs || q->n_inputs <= i) {
    char f[48];
    snprintf(f, sizeof f, "parameters for input %d", i);
    return missing(c, n, f);
  }
  *m = q->inputs[i].m;
  if (sh) *sh = q->inputs[i].n;
  char what[48];
  snprintf(what, sizeof what, "zero point of input %d", i);
  return check_z(c, n, what, q->inputs[i].zero_point, n->in[i]);
}

/* The one multiplier of a single-rescale node: inputs[0] when present, else m[0]/n[0]. */
static qllc_status single_multiplier(ctx *c, const qllc_node *n, const qllc_qnode *q, int32_t *m, int32_t *sh) {
  if (q->inputs && q->n_inputs >= 1) return rescale_input(c, n, q, 0, m, sh);
  if (q->m && q->n) {
    *m = q->m[0];
    *sh = q->n[0];
    return QLLC_OK;
  }
  return missing(c, n, "multiplier (inputs[0].m/n or m[0]/n[0])");
}

/* The roles every requantizing kernel takes: its output zero point and clamp. */
static void r_out(roles *r, const qllc_value *y, const qllc_qnode *q) {
  r_int(r, QLLC_ROLE_Z_Y, y->zero_point);
  r_int(r, QLLC_ROLE_ACT_LO, q->act_lo);
  r_int(r, QLLC_ROLE_ACT_HI, q->act_hi);
}

/* ---- fused layers --------------------------------------------------------------------------------- */

typedef struct fused_bufs {
  qllc_buffer *w, *bias, *m, *n;
} fused_bufs;

/* The constants of a fused layer in variant v's layout (libjit/bitcode/layouts.h), packed by its row's
 * packer (src/lower/pack.h): the weights, and the bias the layout expects. */
static qllc_status pack_variant(ctx *c, const qllc_node *n, const qllc_qnode *q, const qllc_kvariant *v,
                                int64_t channels, int64_t K, int64_t taps, const char *wname, const char *bname,
                                fused_bufs *fb) {
  qllc_arena *a = c->p->arena;
  size_t wbytes = qllc_pack_size_taps((qllc_layout)v->layout, channels, K, taps);
  void *wp = qllc_arena_alloc(a, wbytes ? wbytes : 1);
  if (!wp) return qllc_lower_oom(c);
  if (v->esize == 1 && (q->w_elem != QLLC_ELEM_I8 || q->acc_elem != QLLC_ELEM_I32))
    return qllc_lower_invalid(c, n, "8-bit variant for a layer whose weights are not int8");
  const size_t bsize = v->esize == 1 ? 4 : 8; /* the bias: int32 for 8-bit inputs, the int64 accumulator's else */
  void *bc = qllc_arena_alloc(a, (size_t)(channels ? channels : 1) * bsize);
  if (!bc) return qllc_lower_oom(c);
  const qllc_pack_src src = {q->w_packed, q->w_elem == QLLC_ELEM_I8, q->in_elem == QLLC_ELEM_I8, q->bias, q->n,
                             q->z_y, channels, K, taps, 0};
  int64_t k32 = v->pack(&src, wp, bc);
  if (k32 == -2) return qllc_lower_invalid(c, n, "16x8 variant for a layer whose weights are not int8");
  if (k32 >= 0) { /* the channels whose constants bound their sums inside int32 */
    c->pack_mode = qllc_arena_printf(a, "int32 sums: %lld of %lld output channels", (long long)k32,
                                     (long long)channels);
    if (!c->pack_mode) return qllc_lower_oom(c);
  }
  fb->bias = qllc_lower_buffer_new(c, bname, QLLC_REGION_CONST, v->esize == 1 ? QLLC_ELEM_I32 : q->acc_elem,
                                   (uint64_t)channels * bsize);
  if (fb->bias) fb->bias->data = bc;
  fb->w = qllc_lower_buffer_new(c, wname, QLLC_REGION_CONST, v->esize == 1 ? QLLC_ELEM_I8 : QLLC_ELEM_I16, wbytes);
  if (!fb->w || !fb->bias) return qllc_lower_oom(c);
  fb->w->data = wp;
  return QLLC_OK;
}

/* The catalogue's row for a fused layer whose reference kernel is ref (NULL: the reference), the reason
 * kept for the report in *why; and the scratch buffer its row sizes ("<node>.scratch", activation region). */
qllc_status qllc_lower_fused_pick(ctx *c, const qllc_node *n, const char *ref, const qllc_layer_geom *g,
                                  const qllc_kvariant **v, qllc_buffer **scratch, const char **why) {
  *scratch = NULL;
  if (!ref) return qllc_lower_oom(c);
  c->no_nhwc_only = 0;
  for (int i = 0; i < c->n_refused; i++) c->no_nhwc_only |= c->refused[i] == n;
  *v = qllc_lower_choose(c, ref, g, why);
  const qllc_lower_target *t = c->target;
  /* measured, among the rows this CPU runs; not a row taken for its channel-last ends, which the
     measurement (NCHW ends) cannot time as it will run */
  if (t && t->choose && !c->pick_nhwc_only) {
    const qllc_kvariant *cand[16];
    const int nc = qllc_lower_candidates(c, ref, g, *v, cand, 16);
    if (*v && nc > 1) {
      const char *names[16];
      for (int i = 0; i < nc; i++) names[i] = cand[i]->name;
      char shape[256], measured[512] = "";
      if (g->conv)
        snprintf(shape, sizeof shape, "conv %lld %lld %lld %lld %lld %lld %lld %lld %lld %lld %lld %lld %lld %lld %lld "
                 "%lld %lld %lld", (long long)g->N, (long long)g->C, (long long)g->H, (long long)g->W,
                 (long long)g->M, (long long)g->OH, (long long)g->OW, (long long)g->KH, (long long)g->KW,
                 (long long)g->sh, (long long)g->sw, (long long)g->pt, (long long)g->pl, (long long)g->pb,
                 (long long)g->pr, (long long)g->dh, (long long)g->dw, (long long)g->group);
      else
        snprintf(shape, sizeof shape, "fc %lld %lld %lld", (long long)g->fc_m, (long long)g->fc_n, (long long)g->K);
      const int k = t->choose(t->choose_ctx, n, shape, names, nc, measured, sizeof measured);
      if (k >= 0 && k < nc) {
        *v = cand[k];
        *why = measured[0] ? qllc_arena_strdup(c->p->arena, measured) : NULL;
        c->pick_missed = 0;
      }
    }
  }
  if (!*v) return QLLC_OK;
  const char *sname = qllc_arena_printf(c->p->arena, "%s.scratch", n->name);
  if (!sname) return qllc_lower_oom(c);
  *scratch = qllc_lower_buffer_new(c, sname, QLLC_REGION_ACT, QLLC_ELEM_U8, (uint64_t)(*v)->scratch(g));
  return *scratch ? QLLC_OK : qllc_lower_oom(c);
}

/* Emits a fused layer's call (a variant's: with SCRATCH) and records why its kernel was chosen. */
qllc_status qllc_lower_emit_fused(ctx *c, const qllc_node *n, const char *ref, const qllc_kvariant *v,
                                  qllc_buffer *scratch, const char *why, qllc_lower_roles *r) {
  if (v) r_buf(r, QLLC_ROLE_SCRATCH, scratch);
  if (v && (v->flags & QLLC_VF_NHWC)) /* NCHW until the layout pass (layout.c) finds a value both ends take */
    qllc_role_int(r, QLLC_ROLE_LAYOUT_X, 0), qllc_role_int(r, QLLC_ROLE_LAYOUT_Y, 0);
  const int missed = c->pick_missed; /* of the pick that chose v (the lowering picks last for v) */
  const char *mode = c->pack_mode;   /* of this layer's constants (fused_common packed them last) */
  const int nhwc_only = v && c->pick_nhwc_only;
  c->pack_mode = NULL;
  c->pick_nhwc_only = 0;
  qllc_status st = qllc_lower_call(c, n, v ? v->name : ref, r);
  if (st == QLLC_OK) {
    c->p->instrs[c->p->n_instrs - 1].nhwc_only = (unsigned char)nhwc_only;
    c->p->instrs[c->p->n_instrs - 1].why = why;
    c->p->instrs[c->p->n_instrs - 1].reference_for_cpu = !v && missed;
    c->p->instrs[c->p->n_instrs - 1].mode = v ? mode : NULL;
  }
  return st;
}


/* Checks a FUSED record against the node's values, makes the weight, bias, m and n buffers (in
 * variant v's layout when v is not NULL) and sets the roles every fused layer takes: Y X W BIAS M N,
 * Z_X, Z_Y, ACT_LO, ACT_HI. */
static qllc_status fused_common(ctx *c, const qllc_node *n, const qllc_value *x, const qllc_value *y,
                                int64_t channels, int64_t K, int64_t taps, const qllc_kvariant *v,
                                const qllc_qnode **qo, roles *r) {
  fused_bufs fbs = {0}, *fb = &fbs;
  const qllc_qnode *q;
  qllc_status st = need_record(c, n, QLLC_QK_FUSED, &q);
  if (st) return st;
  *qo = q;
  if ((st = check_act_value(c, n, x)) || (st = check_act_value(c, n, y))) return st;
  if (q->in_elem != x->elem || q->out_elem != y->elem)
    return qllc_fail(c->diag, QLLC_ERR_INVALID, n->name,
                     "node '%s': %s: quantization record is %s -> %s but the values are %s -> %s", n->name,
                     opname(n), ename(q->in_elem), ename(q->out_elem), ename(x->elem), ename(y->elem));
  qllc_elem want_acc = x->elem == QLLC_ELEM_I16 ? QLLC_ELEM_I64 : QLLC_ELEM_I32;
  if (q->acc_elem != want_acc)
    return qllc_fail(c->diag, QLLC_ERR_INVALID, n->name,
                     "node '%s': %s: accumulator %s for %s inputs (kernels_q.h: %s)", n->name, opname(n),
                     ename(q->acc_elem), ename(x->elem), ename(want_acc));
  if (q->w_elem != QLLC_ELEM_I8 && q->w_elem != QLLC_ELEM_I16)
    return qllc_fail(c->diag, QLLC_ERR_INVALID, n->name, "node '%s': %s: weight kind %s (i8 or i16 expected)",
                     n->name, opname(n), ename(q->w_elem));
  if (q->channels != channels)
    return fail_node(c, n, QLLC_ERR_INVALID, "quantization record has %s%lld channels, the layer %lld", "",
                     (long long)q->channels, (long long)channels);
  if (!q->w_packed) return missing(c, n, "packed weights (w_packed)");
  if (!q->bias) return missing(c, n, "bias");
  if (!q->m || !q->n) return missing(c, n, "multipliers (m, n)");
  if ((st = check_z(c, n, "z_x", q->z_x, x)) || (st = check_z(c, n, "z_y", q->z_y, y)) ||
      (st = check_clamp(c, n, q, y)))
    return st;
  qllc_arena *a = c->p->arena;
  const qllc_value *w = n->in[1], *b = n->n_in > 2 ? n->in[2] : NULL;
  const char *wname = w && w->name ? w->name : qllc_arena_printf(a, "%s.weight", n->name);
  const char *bname = b && b->name ? b->name : qllc_arena_printf(a, "%s.bias", n->name);
  const char *mname = qllc_arena_printf(a, "%s.m", n->name), *nname = qllc_arena_printf(a, "%s.n", n->name);
  if (!wname || !bname || !mname || !nname) return qllc_lower_oom(c);
  if (v) { /* an ISA variant: its weights packed in its layout, its bias corrected (layouts.h) */
    if ((st = pack_variant(c, n, q, v, channels, K, taps, wname, bname, fb))) return st;
  } else {
    fb->w = qconst(c, wname, q->w_elem, channels * K, q->w_packed);
    fb->bias = qconst(c, bname, q->acc_elem, channels, q->bias);
  }
  fb->m = qconst(c, mname, QLLC_ELEM_I32, channels, q->m);
  fb->n = qconst(c, nname, QLLC_ELEM_I32, channels, q->n);
  if (!fb->w || !fb->bias || !fb->m || !fb->n) return qllc_lower_oom(c);
  r_buf(r, QLLC_ROLE_Y, qllc_lower_buf_of(c, (qllc_value *)y));
  r_buf(r, QLLC_ROLE_X, qllc_lower_buf_of(c, (qllc_value *)x));
  r_buf(r, QLLC_ROLE_W, fb->w);
  r_buf(r, QLLC_ROLE_BIAS, fb->bias);
  r_buf(r, QLLC_ROLE_M, fb->m);
  r_buf(r, QLLC_ROLE_N, fb->n);
  r_int(r, QLLC_ROLE_Z_X, q->z_x);
  r_out(r, y, q);
  return QLLC_OK;
}

qllc_status qllc_lower_q_conv(ctx *c, const qllc_node *n) {
  qllc_value *x = n->in[0], *w = n->in[1], *y = n->out[0];
  if (!w || w->rank != x->rank || w->rank < 3) return qllc_lower_invalid(c, n, "weight rank differs from input rank");
  int64_t KH = w->rank == 4 ? w->dims[2] : 1, KW = w->dims[w->rank - 1];
  qllc_lower_geom g;
  qllc_status st = qllc_lower_spatial(c, n, x, y, KH, KW, 0, &g);
  if (st) return st;
  int64_t group = qllc_attr_int(n, "group", 1), M = w->dims[0], K = qllc_value_numel(w) / (M ? M : 1);
  const qllc_qnode *q = n->quant;
  const qllc_kvariant *v = NULL;
  qllc_buffer *scratch = NULL;
  const char *why = NULL, *ref = NULL;
  if (q && q->kind == QLLC_QK_FUSED) {
    ref = kname3(c, "conv2d", q->in_elem, q->w_elem, q->out_elem);
    const qllc_layer_geom lg = {.conv = 1, .N = x->dims[0], .C = x->dims[1], .H = g.H, .W = g.W, .M = M, .OH = g.OH,
                                .OW = g.OW, .KH = KH, .KW = KW, .sh = g.sh, .sw = g.sw, .pt = g.pt, .pl = g.pl,
                                .pb = g.pb, .pr = g.pr, .dh = g.dh, .dw = g.dw, .group = group, .K = K};
    if ((st = qllc_lower_fused_pick(c, n, ref, &lg, &v, &scratch, &why))) return st;
  }
  roles r = {.set = {0}};
  if ((st = fused_common(c, n, x, y, M, K, KH * KW, v, &q, &r))) return st;
  qllc_lower_roles_conv(&r, x, &g, M, group);
  return qllc_lower_emit_fused(c, n, ref, v, scratch, why, &r);
}

/* FC, and Gemm / MatMul whose constant operand the quantizer packed as [N][K]. */
qllc_status qllc_lower_q_fc(ctx *c, const qllc_node *n) {
  qllc_value *x = n->in[0], *w = n->in[1], *y = n->out[0];
  if (!w || w->rank != 2 || !w->data) return qllc_lower_unsupported(c, n, "weights must be a constant 2-D matrix");
  int64_t N, K;
  if (n->op == QLLC_OP_GEMM) {
    if (qllc_attr_int(n, "transA", 0)) return qllc_lower_unsupported(c, n, "quantized Gemm with transA");
    if (qllc_attr_float(n, "alpha", 1.0f) != 1.0f || (n->n_in > 2 && n->in[2] && qllc_attr_float(n, "beta", 1.0f) != 1.0f))
      return qllc_lower_unsupported(c, n, "quantized Gemm with alpha or beta other than 1");
    int tb = (int)qllc_attr_int(n, "transB", 0);
    N = tb ? w->dims[0] : w->dims[1];
    K = tb ? w->dims[1] : w->dims[0];
    const qllc_value *cv = n->n_in > 2 ? n->in[2] : NULL;
    if (cv && qllc_value_numel(cv) != N && qllc_value_numel(cv) != 1)
      return qllc_lower_unsupported(c, n, "quantized Gemm with a C that is not one value per output column");
  } else if (n->op == QLLC_OP_MATMUL) {
    K = w->dims[0], N = w->dims[1];
  } else {
    N = w->dims[0], K = w->dims[1];
  }
  if (K <= 0 || qllc_value_numel(x) % K) return qllc_lower_invalid(c, n, "input size is not a multiple of K");
  int64_t M = qllc_value_numel(x) / K;
  if (M * N != qllc_value_numel(y)) return qllc_lower_invalid(c, n, "output size is not M x N");
  const qllc_qnode *q = n->quant;
  const qllc_kvariant *v = NULL;
  qllc_buffer *scratch = NULL;
  const char *why = NULL, *ref = NULL;
  qllc_status st;
  if (q && q->kind == QLLC_QK_FUSED) {
    ref = kname3(c, "fc", q->in_elem, q->w_elem, q->out_elem);
    const qllc_layer_geom lg = {.conv = 0, .fc_m = M, .fc_n = N, .K = K};
    if ((st = qllc_lower_fused_pick(c, n, ref, &lg, &v, &scratch, &why))) return st;
  }
  roles r = {.set = {0}};
  if ((st = fused_common(c, n, x, y, N, K, 1, v, &q, &r))) return st;
  r_int(&r, QLLC_ROLE_DIM_M, M);
  r_int(&r, QLLC_ROLE_DIM_N, N);
  r_int(&r, QLLC_ROLE_DIM_K, K);
  return qllc_lower_emit_fused(c, n, ref, v, scratch, why, &r);
}

qllc_status qllc_lower_q_channel_affine(ctx *c, const qllc_node *n) {
  qllc_value *x = n->in[0], *y = n->out[0];
  if (x->rank < 2) return qllc_lower_invalid(c, n, "input rank < 2");
  const qllc_qnode *q;
  roles r = {.set = {0}};
  qllc_status st = fused_common(c, n, x, y, x->dims[1], 1, 1, NULL, &q, &r);
  if (st) return st;
  r_int(&r, QLLC_ROLE_DIM_N, x->dims[0]);
  r_int(&r, QLLC_ROLE_DIM_C, x->dims[1]);
  r_int(&r, QLLC_ROLE_INNER, qllc_lower_prod(x->dims, 2, x->rank));
  return qllc_lower_call(c, n, kname3(c, "channel_affine", q->in_elem, q->w_elem, q->out_elem), &r);
}

/* ---- MatMul of two activations ------------------------------------------------------------------ */

qllc_status qllc_lower_q_matmul(ctx *c, const qllc_node *n) {
  const qllc_qnode *q = n->quant;
  if (q && q->kind == QLLC_QK_FUSED) return qllc_lower_q_fc(c, n);
  qllc_value *a = n->in[0], *b = n->in[1], *y = n->out[0];
  qllc_status st = need_record(c, n, QLLC_QK_MATMUL, &q);
  if (st) return st;
  if ((st = check_act_value(c, n, a)) || (st = check_act_value(c, n, b)) || (st = check_act_value(c, n, y)))
    return st;
  if (!q->m || !q->n) return missing(c, n, "multiplier (m[0], n[0])");
  if ((st = check_z(c, n, "z_x", q->z_x, a)) || (st = check_z(c, n, "z_w", q->z_w, b)) ||
      (st = check_z(c, n, "z_y", q->z_y, y)) || (st = check_clamp(c, n, q, y)))
    return st;
  int64_t M, N, K, batches;
  qllc_buffer *aob, *bob;
  if ((st = qllc_lower_matmul_geom(c, n, &M, &N, &K, &batches, &aob, &bob))) return st;
  roles r = {.set = {0}};
  qllc_lower_roles_batched(&r, c, qllc_lower_buf_of(c, y), a, b, batches, M, N, K, aob, bob);
  r_int(&r, QLLC_ROLE_Z_A, a->zero_point);
  r_int(&r, QLLC_ROLE_Z_B, b->zero_point);
  r_int(&r, QLLC_ROLE_MULT, q->m[0]);
  r_int(&r, QLLC_ROLE_SHIFT, q->n[0]);
  r_out(&r, y, q);
  return qllc_lower_call(c, n, kname3(c, "matmul", a->elem, b->elem, y->elem), &r);
}

/* ---- elementwise Add / Sub / Mul ---------------------------------------------------------------- */

qllc_status qllc_lower_q_binary(ctx *c, const qllc_node *n) {
  static const char *const names[] = {[QLLC_OP_ADD] = "add", [QLLC_OP_SUB] = "sub", [QLLC_OP_MUL] = "mul"};
  qllc_value *a = n->in[0], *b = n->in[1], *y = n->out[0];
  const qllc_qnode *q;
  qllc_status st = need_record(c, n, QLLC_QK_RESCALE, &q);
  if (st) return st;
  if ((st = check_act_value(c, n, a)) || (st = check_act_value(c, n, b)) || (st = check_act_value(c, n, y)))
    return st;
  if ((st = check_z(c, n, "z_y", q->z_y, y)) || (st = check_clamp(c, n, q, y))) return st;
  int64_t dims[QLLC_MAX_RANK], as[QLLC_MAX_RANK], bs[QLLC_MAX_RANK];
  int r = y->rank > QLLC_MAX_RANK || a->rank > y->rank || b->rank > y->rank
              ? 0
              : qllc_lower_broadcast(y, a, b, dims, as, bs);
  if (r == 0) return qllc_lower_invalid(c, n, "operands do not broadcast to the output shape");
  int32_t ma = 0, mb = 0, m = 0, sh = 0;
  if (n->op == QLLC_OP_MUL) {
    if (q->inputs && q->n_inputs >= 2) {
      int32_t dummy;
      if ((st = rescale_input(c, n, q, 0, &dummy, NULL)) || (st = rescale_input(c, n, q, 1, &dummy, NULL)))
        return st;
    }
    if (q->m && q->n) m = q->m[0], sh = q->n[0];
    else if ((st = single_multiplier(c, n, q, &m, &sh))) return st;
  } else {
    if ((st = rescale_input(c, n, q, 0, &ma, NULL)) || (st = rescale_input(c, n, q, 1, &mb, NULL))) return st;
    sh = q->shared_n;
  }
  roles rv = {.set = {0}};
  qllc_lower_roles_bcast(&rv, c, n, r, dims, as, bs);
  r_int(&rv, QLLC_ROLE_Z_A, a->zero_point);
  r_int(&rv, QLLC_ROLE_Z_B, b->zero_point);
  r_int(&rv, QLLC_ROLE_M_A, ma); /* add, sub */
  r_int(&rv, QLLC_ROLE_M_B, mb);
  r_int(&rv, QLLC_ROLE_MULT, m); /* mul */
  r_int(&rv, QLLC_ROLE_SHIFT, sh);
  r_out(&rv, y, q);
  return qllc_lower_call(c, n, kname3(c, names[n->op], a->elem, b->elem, y->elem), &rv);
}

/* ---- single-input ops --------------------------------------------------------------------------- */

/* y = clamp(REQUANT(x - z_x, m, n) + z_y, lo, hi) over rows x cols (strides in elements). */
static qllc_status emit_requantize(ctx *c, const qllc_node *n, const qllc_qnode *q, qllc_buffer *yb, uint64_t yoff,
                                   const qllc_value *x, const qllc_value *y, int64_t rows, int64_t cols,
                                   int64_t y_stride, int64_t x_stride, int32_t m, int32_t sh) {
  roles r = {.set = {0}};
  qllc_lower_roles_rows(&r, yb, yoff, qllc_lower_buf_of(c, (qllc_value *)x), rows, cols, y_stride, x_stride);
  r_int(&r, QLLC_ROLE_Z_X, x->zero_point);
  r_int(&r, QLLC_ROLE_MULT, m);
  r_int(&r, QLLC_ROLE_SHIFT, sh);
  r_out(&r, y, q);
  return qllc_lower_call(c, n, kname2(c, "requantize", x->elem, y->elem), &r);
}

/* Relu / Clip left unfused: a clamp when the parameters stay, a requantize with clamp otherwise. */
qllc_status qllc_lower_q_clamp(ctx *c, const qllc_node *n) {
  qllc_value *x = n->in[0], *y = n->out[0];
  const qllc_qnode *q;
  qllc_status st = need_record(c, n, QLLC_QK_NONE, &q);
  if (st) return st;
  for (int i = 1; n->op == QLLC_OP_CLIP && i < n->n_in; i++)
    if (n->in[i] && !n->in[i]->data) return qllc_lower_unsupported(c, n, "a Clip with run-time bounds has no integer kernel");
  if ((st = check_act_value(c, n, x)) || (st = check_act_value(c, n, y)) || (st = check_clamp(c, n, q, y))) return st;
  int64_t count = qllc_value_numel(y);
  if (q->kind == QLLC_QK_SAME || same_params(x, y)) {
    if ((st = check_same(c, n, x, y))) return st;
    roles r = {.set = {0}};
    qllc_lower_roles_yx(&r, c, x, y);
    r_int(&r, QLLC_ROLE_COUNT, count);
    r_out(&r, y, q); /* clamp reads ACT_LO, ACT_HI */
    return qllc_lower_call(c, n, kname2(c, "clamp", x->elem, y->elem), &r);
  }
  if (q->kind != QLLC_QK_RESCALE)
    return fail_node(c, n, QLLC_ERR_INVALID, "quantization record of kind %s%lld for a Relu/Clip", "",
                     (long long)q->kind, 0);
  int32_t m, sh;
  if ((st = check_z(c, n, "z_y", q->z_y, y)) || (st = single_multiplier(c, n, q, &m, &sh))) return st;
  return emit_requantize(c, n, q, qllc_lower_buf_of(c, y), 0, x, y, 1, count, count, count, m, sh);
}

/* Sigmoid / Tanh / LeakyRelu by table. */
qllc_status qllc_lower_q_table(ctx *c, const qllc_node *n) {
  qllc_value *x = n->in[0], *y = n->out[0];
  const qllc_qnode *q;
  qllc_status st = need_record(c, n, QLLC_QK_TABLE, &q);
  if (st) return st;
  if ((st = check_act_value(c, n, x)) || (st = check_act_value(c, n, y))) return st;
  int32_t want = y->elem == QLLC_ELEM_I16 ? 513 : 256;
  if (!q->table) return missing(c, n, "table");
  if (q->table_len != want)
    return fail_node(c, n, QLLC_ERR_INVALID, "table of %s%lld entries, the kernel reads %lld", "",
                     (long long)q->table_len, (long long)want);
  const char *tn = qllc_arena_printf(c->p->arena, "%s.table", n->name);
  if (!tn) return qllc_lower_oom(c);
  roles r = {.set = {0}};
  qllc_lower_roles_yx(&r, c, x, y);
  r_buf(&r, QLLC_ROLE_TABLE, qconst(c, tn, y->elem, want, q->table));
  r_int(&r, QLLC_ROLE_COUNT, qllc_value_numel(y));
  return qllc_lower_call(c, n, kname2(c, "lut", x->elem, y->elem), &r);
}

qllc_status qllc_lower_q_maxpool(ctx *c, const qllc_node *n) {
  qllc_value *x = n->in[0], *y = n->out[0];
  qllc_status st;
  if ((st = check_act_value(c, n, x)) || (st = check_same(c, n, x, y))) return st;
  return qllc_lower_plain_maxpool(c, n);
}

qllc_status qllc_lower_q_avgpool(ctx *c, const qllc_node *n) {
  qllc_value *x = n->in[0], *y = n->out[0];
  const qllc_qnode *q;
  qllc_status st = need_record(c, n, QLLC_QK_RESCALE, &q);
  if (st) return st;
  if ((st = check_act_value(c, n, x)) || (st = check_act_value(c, n, y))) return st;
  if ((st = check_z(c, n, "z_y", q->z_y, y)) || (st = check_clamp(c, n, q, y))) return st;
  if (q->inputs && q->n_inputs >= 1 && (st = check_z(c, n, "zero point of input 0", q->inputs[0].zero_point, x)))
    return st;
  if (!qllc_node_attr(n, "kernel_shape")) return qllc_lower_invalid(c, n, "missing kernel_shape");
  qllc_lower_geom g;
  if ((st = qllc_lower_spatial(c, n, x, y, 1, 1, 1, &g))) return st;
  if (g.dh != 1 || g.dw != 1) return qllc_lower_unsupported(c, n, "dilated AveragePool");
  if (!q->pool_m || !q->pool_n) return missing(c, n, "pool multipliers (pool_m, pool_n)");
  int64_t cnt = g.KH * g.KW + 1;
  const char *mn = qllc_arena_printf(c->p->arena, "%s.pool_m", n->name);
  const char *nn = qllc_arena_printf(c->p->arena, "%s.pool_n", n->name);
  if (!mn || !nn) return qllc_lower_oom(c);
  roles r = {.set = {0}};
  qllc_lower_roles_yx(&r, c, x, y);
  qllc_lower_roles_pool(&r, n, x, &g);
  r_buf(&r, QLLC_ROLE_M, qconst(c, mn, QLLC_ELEM_I32, cnt, q->pool_m));
  r_buf(&r, QLLC_ROLE_N, qconst(c, nn, QLLC_ELEM_I32, cnt, q->pool_n));
  r_int(&r, QLLC_ROLE_Z_X, x->zero_point);
  r_out(&r, y, q);
  return qllc_lower_call(c, n, kname2(c, "avgpool2d", x->elem, y->elem), &r);
}

qllc_status qllc_lower_q_global_avgpool(ctx *c, const qllc_node *n) {
  qllc_value *x = n->in[0], *y = n->out[0];
  const qllc_qnode *q;
  qllc_status st = need_record(c, n, QLLC_QK_RESCALE, &q);
  if (st) return st;
  if ((st = check_act_value(c, n, x)) || (st = check_act_value(c, n, y))) return st;
  if (x->rank < 2) return qllc_lower_invalid(c, n, "input rank < 2");
  int32_t m, sh;
  if ((st = check_z(c, n, "z_y", q->z_y, y)) || (st = check_clamp(c, n, q, y)) ||
      (st = single_multiplier(c, n, q, &m, &sh)))
    return st;
  roles r = {.set = {0}};
  qllc_lower_roles_yx(&r, c, x, y);
  r_int(&r, QLLC_ROLE_NC, x->dims[0] * x->dims[1]);
  r_int(&r, QLLC_ROLE_HW, qllc_lower_prod(x->dims, 2, x->rank));
  r_int(&r, QLLC_ROLE_Z_X, x->zero_point);
  r_int(&r, QLLC_ROLE_MULT, m);
  r_int(&r, QLLC_ROLE_SHIFT, sh);
  r_out(&r, y, q);
  return qllc_lower_call(c, n, kname2(c, "global_avgpool", x->elem, y->elem), &r);
}

qllc_status qllc_lower_q_softmax(ctx *c, const qllc_node *n) {
  qllc_value *x = n->in[0], *y = n->out[0];
  const qllc_qnode *q;
  qllc_status st = need_record(c, n, QLLC_QK_SOFTMAX, &q);
  if (st) return st;
  if ((st = check_act_value(c, n, x)) || (st = check_act_value(c, n, y))) return st;
  if ((st = check_z(c, n, "z_y", q->z_y, y)) || (st = check_clamp(c, n, q, y))) return st;
  int32_t want = x->elem == QLLC_ELEM_I16 ? 513 : 256;
  if (!q->table) return missing(c, n, "exp table");
  if (q->table_len != want)
    return fail_node(c, n, QLLC_ERR_INVALID, "exp table of %s%lld entries, the kernel reads %lld", "",
                     (long long)q->table_len, (long long)want);
  if (q->softmax_recip <= 0) return missing(c, n, "softmax reciprocal");
  int64_t outer, len, inner;
  if ((st = qllc_lower_softmax_geom(c, n, &outer, &len, &inner))) return st;
  const char *tn = qllc_arena_printf(c->p->arena, "%s.exp_table", n->name);
  if (!tn) return qllc_lower_oom(c);
  roles r = {.set = {0}};
  qllc_lower_roles_yx(&r, c, x, y);
  r_buf(&r, QLLC_ROLE_TABLE, qconst(c, tn, QLLC_ELEM_I32, want, q->table));
  r_int(&r, QLLC_ROLE_OUTER, outer);
  r_int(&r, QLLC_ROLE_AXIS_LEN, len);
  r_int(&r, QLLC_ROLE_INNER, inner);
  r_int(&r, QLLC_ROLE_RECIP, q->softmax_recip);
  r_out(&r, y, q);
  return qllc_lower_call(c, n, kname2(c, "softmax", x->elem, y->elem), &r);
}

/* ---- data movement ------------------------------------------------------------------------------- */

/* Concat: each input is copied (same parameters as the output) or requantized into its slice. */
qllc_status qllc_lower_q_concat(ctx *c, const qllc_node *n) {
  qllc_value *y = n->out[0];
  const qllc_qnode *q = n->quant;
  qllc_status st = check_act_value(c, n, y);
  if (st) return st;
  int64_t axis = qllc_attr_int(n, "axis", 0);
  if (axis < 0) axis += y->rank;
  if (axis < 0 || axis >= y->rank) return qllc_lower_invalid(c, n, "axis out of range");
  int64_t outer = qllc_lower_prod(y->dims, 0, (int)axis), inner = qllc_lower_prod(y->dims, (int)axis + 1, y->rank);
  size_t es = qllc_elem_size((qllc_elem_kind)y->elem);
  qllc_buffer *yb = qllc_lower_buf_of(c, y);
  int64_t at = 0;
  for (int i = 0; i < n->n_in; i++) {
    qllc_value *x = n->in[i];
    if (!x) continue;
    if (x->rank != y->rank) return qllc_lower_invalid(c, n, "input rank differs from output rank");
    if ((st = check_act_value(c, n, x))) return st;
    int64_t cols = x->dims[axis] * inner, ys = y->dims[axis] * inner;
    uint64_t off = (uint64_t)(at * inner) * es;
    at += x->dims[axis];
    if (cols <= 0 || outer <= 0) continue;
    if (same_params(x, y)) {
      roles r = {.set = {0}};
      qllc_lower_roles_rows(&r, yb, off, qllc_lower_buf_of(c, x), outer, cols, ys, cols);
      if ((st = qllc_lower_call(c, n, kname2(c, "copy2d", x->elem, y->elem), &r))) return st;
      continue;
    }
    if (!q)
      return qllc_fail(c->diag, QLLC_ERR_UNSUPPORTED, n->name,
                       "node '%s': %s: input '%s' has other parameters than the output but there is no "
                       "quantization record to requantize it (kernel %s)",
                       n->name, opname(n), x->name, kname2(c, "requantize", x->elem, y->elem));
    if (q->kind != QLLC_QK_RESCALE)
      return fail_node(c, n, QLLC_ERR_INVALID, "quantization record of kind %s%lld, expected kind %lld", "",
                       (long long)q->kind, (long long)QLLC_QK_RESCALE);
    int32_t m, sh;
    if ((st = check_z(c, n, "z_y", q->z_y, y)) || (st = check_clamp(c, n, q, y)) ||
        (st = rescale_input(c, n, q, i, &m, &sh)))
      return st;
    if ((st = emit_requantize(c, n, q, yb, off, x, y, outer, cols, ys, cols, m, sh))) return st;
  }
  if (at != y->dims[axis]) return qllc_lower_invalid(c, n, "input sizes along axis do not add up to the output");
  return QLLC_OK;
}

qllc_status qllc_lower_q_transpose(ctx *c, const qllc_node *n) {
  qllc_status st;
  if ((st = check_act_value(c, n, n->in[0])) || (st = check_same(c, n, n->in[0], n->out[0]))) return st;
  return qllc_lower_plain_transpose(c, n);
}

/* Pad: the pad value in the integer domain is the record's z_x; without a record the model's (real)
 * value quantized with the output's parameters (0 gives the zero point). */
qllc_status qllc_lower_q_pad(ctx *c, const qllc_node *n) {
  qllc_value *x = n->in[0], *y = n->out[0];
  qllc_status st;
  if ((st = check_act_value(c, n, x)) || (st = check_same(c, n, x, y))) return st;
  roles r = {.set = {0}};
  double value;
  if ((st = qllc_lower_pad_roles(c, n, &r, &value))) return st;
  if (isnan(value)) return qllc_lower_call(c, n, kname2(c, "pad_map", x->elem, y->elem), &r); /* reflect, edge, wrap */
  if (n->n_in > 2 && n->in[2] && !n->in[2]->data)
    return qllc_lower_unsupported(c, n, "a Pad value computed at run time has no integer kernel");
  /* The record's z_x is the integer pad value (quant.h's quantizer: the zero point for a real 0). */
  const qllc_qnode *q = n->quant;
  int32_t qmin, qmax;
  qllc_quant_range(y->elem, 0, &qmin, &qmax);
  r_int(&r, QLLC_ROLE_VALUE, q ? q->z_x : qllc_quantize_one((float)value, y->scale, y->zero_point, qmin, qmax));
  return qllc_lower_call(c, n, kname2(c, "pad", x->elem, y->elem), &r);
}

/* A view shares its input's bytes: the output must read them with the same parameters. */
qllc_status qllc_lower_q_view(ctx *c, const qllc_node *n) {
  qllc_status st = check_same(c, n, n->in[0], n->out[0]);
  return st ? st : qllc_lower_view(c, n);
}

/* ---- the boundary ------------------------------------------------------------------------------- */

static qllc_status qdq(ctx *c, const qllc_node *n, int quantize) {
  qllc_value *x = n->in[0], *y = n->out[0];
  qllc_value *qv = quantize ? y : x, *fv = quantize ? x : y;
  qllc_status st = check_act_value(c, n, qv);
  if (st) return st;
  if (fv->elem != QLLC_ELEM_F32)
    return qllc_fail(c->diag, QLLC_ERR_UNSUPPORTED, n->name, "node '%s': %s: %s '%s' is %s, not f32", n->name,
                     opname(n), quantize ? "input" : "output", fv->name, ename(fv->elem));
  if (qllc_value_numel(x) != qllc_value_numel(y)) return qllc_lower_invalid(c, n, "input and output sizes differ");
  if (!(qv->scale > 0) || !isfinite(qv->scale))
    return qllc_fail(c->diag, QLLC_ERR_INVALID, n->name, "node '%s': %s: value '%s' has no valid scale", n->name,
                     opname(n), qv->name);
  roles r = {.set = {0}};
  qllc_lower_roles_yx(&r, c, x, y);
  r_int(&r, QLLC_ROLE_COUNT, qllc_value_numel(y));
  qllc_role_float(&r, QLLC_ROLE_SCALE, qv->scale);
  r_int(&r, QLLC_ROLE_Z, qv->zero_point);
  return qllc_lower_call(c, n, kname2(c, quantize ? "quantize" : "dequantize", x->elem, y->elem), &r);
}

qllc_status qllc_lower_q_quantize(ctx *c, const qllc_node *n) { return qdq(c, n, 1); }
qllc_status qllc_lower_q_dequantize(ctx *c, const qllc_node *n) { return qdq(c, n, 0); }
