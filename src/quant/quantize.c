/* src/quant/quantize.c: the graph quantizer (quant.h section 7, docs/numerics.md).
 *
 * Input: the OPTIMIZED float graph (qllc_graph_optimize done: Conv/FC carry their fused Relu/Clip in
 * node->act, BatchNorm folded or a CHANNEL_AFFINE), and a profile made on that same graph. Output: the
 * same graph, in place, with every value computed by a quantized node integer-typed (elem, scale, zero
 * point), a qllc_qnode on every quantized node (node->quant), and QUANTIZE/DEQUANTIZE nodes at the
 * model's boundary and around nodes kept in float.
 *
 * Algorithm (the phases run in this order; nothing in the graph changes before phase 5, so an error
 * leaves the float graph as it was, apart from arena memory):
 *  0. Check the options and the profile's graph hash (qllc_profile_check).
 *  1. Decide per node: float when --keep-float names its op type or node name (an FC also answers to
 *     "Gemm", "MatMul" and "FullyConnected", a ChannelAffine to "BatchNormalization"), or when it has no
 *     quantized form (a Gemm that gemm_to_fc could not turn into FC, Div, an unfolded BatchNorm, a
 *     Conv/FC with run-time weights, ops of the fold list): node->float_reason says why. Otherwise a
 *     qkind: FUSED (Conv, FC, ChannelAffine), MATMUL (MatMul: any operand may be a constant, which is
 *     then quantized like an activation, per tensor), RESCALE (Add, Sub, Mul, Concat, AveragePool,
 *     GlobalAveragePool), TABLE (Sigmoid, Tanh, LeakyRelu), SOFTMAX, SAME (MaxPool, Relu/Clip as a
 *     clamp, views, Transpose, Pad), CUSTOM (a custom op whose inputs are all computed float tensors,
 *     when o->supports says the user's kernel files define its variant with act_elem everywhere; not
 *     under symmetric_uint8; else float with a reason naming the function looked for).
 *  2. symmetric_uint8 only: kernels other than the fused layers take one element kind for all their
 *     operands and result, so values joined by such a node (union-find) form a class, which is uint8
 *     when every calibrated range in it is non-negative, else symmetric int8. Other schemas use
 *     act_elem everywhere.
 *  3. Parameters and records, in node order. A value's parameters are chosen once (qllc_quant_choose,
 *     role ACT, on the calibrated range qllc_profile_get + qllc_calibrate), by its producer, or by its
 *     first quantized consumer when it comes from a graph input, a float node or a constant. Per kind:
 *       FUSED    qllc_qnode_fused: weights per channel unless per_tensor, w_elem, power2 under the
 *                power2 schema, widen_for_bias; the output from the profile; node->act as the clamp.
 *                A ChannelAffine is the K = 1 case (w = a, b = its offset).
 *       MATMUL   m[0]/n[0] of s_a * s_b / s_y; z_x = z_a, z_w = z_b; inputs[] has both zero points.
 *       RESCALE  Add/Sub: inputs[i].m of s_i / s_y with one shift (qllc_requant_make_shared), shared_n.
 *                Mul: m[0]/n[0] of s_a * s_b / s_y, repeated in inputs[0].m/n (inputs[1].m/n = 0).
 *                Concat: output params equal to the inputs' when they all agree (the lowering then
 *                copies), else from the profile; inputs[i].m/n of s_i / s_y.
 *                AveragePool: pool_m/pool_n[KH*KW + 1] (qllc_quant_pool_multipliers), inputs[0].zp.
 *                GlobalAveragePool: m[0]/n[0] (and inputs[0].m/n) of s_x / (s_y * H*W).
 *       TABLE    qllc_quant_table (LeakyRelu's alpha from its attribute); output from the profile.
 *       SOFTMAX  qllc_quant_softmax fixes the output parameters.
 *       CUSTOM   no arithmetic: the output from the profile; the lowering passes every value's scale and
 *                zero point to the user kernel (src/lower/lower_custom.c).
 *       SAME     output params = input params (they hold the same real values; the profile's range is
 *                ignored). Relu/Clip: act_lo/act_hi is the clamp in the integer domain. Pad: z_x is the
 *                integer pad value (the zero point when the pad value is 0, i.e. real 0).
 *     Every record has in_elem, out_elem, acc_elem (I32 for 8-bit inputs, I64 for int16), z_x, z_y and
 *     act_lo/act_hi (the type's range when there is no clamp). Then o->supports (when set) is asked for
 *     (in, w, out); a "no" is QLLC_ERR_UNSUPPORTED naming the node (issue 4: never a quiet fallback).
 *  4. --strict: the first node left in float, or the first clipped bias, is QLLC_ERR_STRICT.
 *  5. Rewrite. Values produced by quantized nodes become integer in place. Where an f32 value feeds a
 *     quantized node, one QUANTIZE (input: the f32 value only, no attributes: its output value carries
 *     the scale and zero point) is shared by all its quantized consumers and placed before the first;
 *     a constant operand of a MatMul/Add/Sub/Mul/Concat is replaced by an integer constant "<name>.q".
 *     Where an integer value feeds a float node, one DEQUANTIZE ("<name>.f") is shared likewise. A
 *     quantized graph output keeps its ONNX name and stays f32: the producer writes a new integer value
 *     "<name>.q" and a DEQUANTIZE right after it writes the original value. With quantized_io, f32
 *     graph inputs become integer themselves (no QUANTIZE) and graph outputs stay integer (no
 *     DEQUANTIZE; an output computed by a float node gets a QUANTIZE whose output is the original
 *     value, the float node writing "<name>.f").
 *
 * Constant weights and biases of FUSED nodes stay the f32 constant inputs of the node, so the graph
 * still prints and hashes as the model; the lowering reads qnode->w_packed, bias, m, n instead.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "quant.h"

typedef struct qz {
  qllc_graph *g;
  const qllc_profile *prof;
  const qllc_quant_opts *o;
  qllc_calib_opts calib;
  qllc_diag *diag;
  int u8mode;                 /* symmetric_uint8 at 8 bits: per-class element kinds */
  int n0, nn;                 /* values and nodes before quantization */
  qllc_node **nodes;          /* [nn] snapshot of the node order */
  /* per node (index in `nodes`) */
  qllc_qkind *kind;           /* QLLC_QK_NONE: float */
  const char **reason;        /* float nodes: why */
  qllc_qnode **qn;
  /* per value id < n0 */
  int *parent;                /* union-find (u8mode) */
  signed char *cls_u8;        /* per class root: 1 uint8, 0 int8 */
  char *ranged;
  float *lo, *hi;
  char *have;
  qllc_qparams *qp;
  char *int_dom;              /* the value itself becomes integer */
  char *member;               /* the value gets parameters */
  int *prod;                  /* index of the producing node, -1 for none */
  /* mixed precision (o->map): per node its precision and input kind, per value its kind and its
     parameters in the other kind (for a requantize node), and the inputs that need one */
  qllc_nprec *np;             /* [nn] */
  qllc_elem *nin;             /* [nn] the kind of the node's data inputs (QLLC_ELEM_COUNT: as they come) */
  qllc_elem *velem;           /* [n0] QLLC_ELEM_COUNT: not decided (the base kind) */
  qllc_qparams *alt;          /* [n0] parameters in the kind a consumer wants */
  char *has_alt;
  int n_conv, cap_conv;
  struct conv_req { int node, input, value; } *conv;
} qz;

/* ---- small helpers ---------------------------------------------------------------------------- */

static const char *opname(const qllc_node *n) { return n->op_type ? n->op_type : qllc_op_name(n->op); }
static const char *ename(qllc_elem e) { return qllc_elem_name((qllc_elem_kind)e); }
static int is_f32(const qllc_value *v) { return v && v->elem == QLLC_ELEM_F32; }
static int is_const_f32(const qllc_value *v) { return is_f32(v) && v->data; }

/* Re-issues the diagnostic of a helper with "node 'X' (Op): " in front. */
static qllc_status at_node(qz *z, const qllc_node *n, qllc_status st) {
  if (!z->diag) return st;
  char msg[sizeof z->diag->message];
  snprintf(msg, sizeof msg, "%s", z->diag->message);
  if (!strncmp(msg, "node '", 6)) return qllc_fail(z->diag, st, n->name, "%s", msg);
  return qllc_fail(z->diag, st, n->name, "node '%s' (%s): %s", n->name, opname(n), msg);
}

/* Errors about a value (missing from the profile, bad range) keep their message, which names the value
 * and the profile file, and get the node that needed it as diag->node. */
static qllc_status for_node(qz *z, const qllc_node *n, qllc_status st) {
  if (z->diag) snprintf(z->diag->node, sizeof z->diag->node, "%s", n->name);
  return st;
}

static qllc_status oom(qz *z, const qllc_node *n) {
  return qllc_fail(z->diag, QLLC_ERR_NOMEM, n ? n->name : NULL, "out of memory quantizing the graph");
}

static int find(qz *z, int id) {
  while (z->parent[id] != id) id = z->parent[id] = z->parent[z->parent[id]];
  return id;
}
static void unite(qz *z, const qllc_value *a, const qllc_value *b) {
  if (!a || !b || a->id >= z->n0 || b->id >= z->n0) return;
  int ra = find(z, a->id), rb = find(z, b->id);
  if (ra != rb) z->parent[ra] = rb;
}

/* ---- phase 1: decisions ----------------------------------------------------------------------- */

/* Does keep-float entry `k` name this node (its name, op type, or an alias of a pass-made op)? */
static int keep_matches(const qllc_node *n, const char *k) {
  if (!strcmp(k, n->name) || !strcmp(k, opname(n)) || !strcmp(k, qllc_op_name(n->op))) return 1;
  if (n->op == QLLC_OP_FC) return !strcmp(k, "Gemm") || !strcmp(k, "MatMul") || !strcmp(k, "FullyConnected");
  if (n->op == QLLC_OP_CHANNEL_AFFINE) return !strcmp(k, "BatchNormalization") || !strcmp(k, "ChannelAffine");
  return 0;
}

/* Number of leading inputs that carry activations (the rest are a fused layer's constants). */
static int data_inputs(const qllc_node *n, qllc_qkind k) {
  if (k == QLLC_QK_FUSED) return 1;
  switch (n->op) {
  case QLLC_OP_MATMUL: case QLLC_OP_ADD: case QLLC_OP_SUB: case QLLC_OP_MUL: return 2;
  case QLLC_OP_MAX: case QLLC_OP_MIN: case QLLC_OP_MEAN: return n->n_in; /* issue 15 */
  case QLLC_OP_CONCAT: case QLLC_OP_CUSTOM: return n->n_in;
  default: return 1;
  }
}

/* The qkind of a node, or NONE with *why set. */
static qllc_qkind classify(qllc_graph *g, const qllc_node *n, const char **why) {
  const char *op = opname(n);
  *why = NULL;
  for (int k = 1; k < n->n_out; k++)
    if (n->out[k]) {
      *why = qllc_arena_printf(g->arena, "its output %d ('%s') has no quantized form", k, n->out[k]->name);
      return QLLC_QK_NONE;
    }
  if (n->n_out < 1 || !is_f32(n->out[0])) {
    *why = "it does not compute a float tensor";
    return QLLC_QK_NONE;
  }
  qllc_qkind k = QLLC_QK_NONE;
  switch (n->op) {
  case QLLC_OP_CONV:
  case QLLC_OP_FC:
  case QLLC_OP_CHANNEL_AFFINE:
    if (!is_const_f32(n->in[1]) || (n->op == QLLC_OP_CHANNEL_AFFINE && !is_const_f32(n->in[2])))
      *why = qllc_arena_printf(g->arena, "%s with run-time weights has no fused integer kernel", op);
    else if (n->n_in > 2 && n->in[2] && !is_const_f32(n->in[2]))
      *why = qllc_arena_printf(g->arena, "%s with a run-time bias has no fused integer kernel", op);
    else k = QLLC_QK_FUSED;
    break;
  case QLLC_OP_GEMM: /* gemm_to_fc turned every Gemm that is a fully-connected layer into FC */
    if (n->in[1] && !n->in[1]->data)
      *why = "a Gemm whose B is computed at run time has no integer kernel (only constant weights fuse)";
    else if (qllc_attr_int(n, "transA", 0))
      *why = "a Gemm with transA = 1 has no integer kernel";
    else
      *why = "a Gemm whose bias C is not one value per output column has no integer kernel";
    break;
  case QLLC_OP_MATMUL: k = QLLC_QK_MATMUL; break;
  case QLLC_OP_ADD: case QLLC_OP_SUB: case QLLC_OP_MUL: case QLLC_OP_CONCAT:
  case QLLC_OP_AVGPOOL: case QLLC_OP_GLOBAL_AVGPOOL:
    k = QLLC_QK_RESCALE;
    break;
  case QLLC_OP_SIGMOID: case QLLC_OP_TANH: case QLLC_OP_LEAKY_RELU: k = QLLC_QK_TABLE; break;
  case QLLC_OP_SOFTMAX: k = QLLC_QK_SOFTMAX; break;
  case QLLC_OP_RELU: case QLLC_OP_CLIP: case QLLC_OP_MAXPOOL: case QLLC_OP_FLATTEN: case QLLC_OP_RESHAPE:
  case QLLC_OP_TRANSPOSE: case QLLC_OP_IDENTITY: case QLLC_OP_DROPOUT: case QLLC_OP_SQUEEZE:
  case QLLC_OP_UNSQUEEZE: case QLLC_OP_PAD:
    k = QLLC_QK_SAME;
    break;
  case QLLC_OP_DIV: *why = "Div has no integer kernel"; break;
  case QLLC_OP_BATCHNORM:
    *why = "a BatchNormalization that could not be folded (run-time parameters or training mode) has no "
           "integer kernel";
    break;
  case QLLC_OP_CUSTOM: k = QLLC_QK_CUSTOM; break; /* issue 7: custom_choice() asks for the user's kernel */
  /* issue 15 */
  case QLLC_OP_ERF: case QLLC_OP_SQRT: case QLLC_OP_EXP: case QLLC_OP_NEG: case QLLC_OP_RECIPROCAL: case QLLC_OP_POW:
  case QLLC_OP_HARD_SIGMOID: case QLLC_OP_HARD_SWISH: case QLLC_OP_GELU:
    k = QLLC_QK_TABLE;
    break;
  case QLLC_OP_PRELU: {
    const qllc_value *x = n->in[0], *s = n->in[1];
    int64_t cnt = qllc_value_numel(s);
    int ok = is_const_f32(s) && (cnt == 1 || (x->rank >= 2 && cnt == x->dims[1] && s->rank <= x->rank - 1 &&
                                               s->dims[0 + (s->rank - (x->rank - 1))] == x->dims[1]));
    if (ok && cnt > 1) /* per channel: the slope's dims after the channel's are all 1 */
      for (int i = s->rank - (x->rank - 1) + 1; i < s->rank; i++) ok &= i >= 0 && s->dims[i] == 1;
    if (ok) k = QLLC_QK_TABLE;
    else *why = "a PRelu whose slope is not a constant scalar or one value per channel (dim 1) has no integer kernel";
    break;
  }
  case QLLC_OP_LAYER_NORM:
    if (!is_const_f32(n->in[1]) || (n->n_in > 2 && n->in[2] && !is_const_f32(n->in[2])))
      *why = "a LayerNormalization with run-time scale or bias has no integer kernel";
    else k = QLLC_QK_LAYERNORM;
    break;
  case QLLC_OP_REDUCE_MEAN: case QLLC_OP_REDUCE_SUM: k = QLLC_QK_RESCALE; break;
  case QLLC_OP_MAX: case QLLC_OP_MIN: case QLLC_OP_MEAN:
    if (n->n_in == 2) k = QLLC_QK_RESCALE;
    else *why = qllc_arena_printf(g->arena, "%s of %d inputs has no integer kernel (two inputs have)", op, n->n_in);
    break;
  case QLLC_OP_REDUCE_MAX: case QLLC_OP_SLICE: case QLLC_OP_EXPAND: case QLLC_OP_GATHER: case QLLC_OP_RESIZE:
  case QLLC_OP_UPSAMPLE:
    k = QLLC_QK_SAME;
    break;
  case QLLC_OP_CONV_TRANSPOSE:
    *why = "ConvTranspose has no integer kernel yet (it runs in float; docs/ops_notes.md)";
    break;
  case QLLC_OP_WHERE:
    *why = "Where has no integer kernel (its operands are inputs 1 and 2; it runs in float; docs/ops_notes.md)";
    break;
  case QLLC_OP_SPLIT:
    *why = "Split has several outputs (the transformer pass rewrites it as Slices before quantization)";
    break;
  default: *why = qllc_arena_printf(g->arena, "%s has no quantized form", op); break;
  }
  if (k == QLLC_QK_NONE) {
    if (!*why) *why = "no quantized form";
    return k;
  }
  int nd = data_inputs(n, k);
  for (int i = 0; i < nd && i < n->n_in; i++) {
    const qllc_value *v = n->in[i];
    if (!is_f32(v)) {
      *why = qllc_arena_printf(g->arena, "input %d is not a float tensor", i);
      return QLLC_QK_NONE;
    }
    /* a constant is quantized like an activation only where a second operand is usual */
    if (v->data && k == QLLC_QK_CUSTOM) {
      *why = qllc_arena_printf(g->arena,
                               "custom op %s:%s runs its user kernel in float (its input '%s' is a constant; custom "
                               "kernels are quantized only when every input is computed)",
                               n->domain ? n->domain : "", op, v->name);
      return QLLC_QK_NONE;
    }
    if (v->data && (k == QLLC_QK_FUSED || nd == 1 || (k == QLLC_QK_MATMUL && n->in[1 - i]->data))) {
      *why = qllc_arena_printf(g->arena, "its input '%s' is a constant (the graph should have been folded)", v->name);
      return QLLC_QK_NONE;
    }
  }
  if (n->op == QLLC_OP_CLIP && n->n_in > 1) {
    *why = "a Clip with run-time bounds has no integer kernel (docs/ops_notes.md)";
    return QLLC_QK_NONE;
  }
  if (n->op == QLLC_OP_PAD && n->n_in > 2 && n->in[2] && !n->in[2]->data) {
    *why = "a Pad whose value is computed at run time has no integer kernel (docs/ops_notes.md)";
    return QLLC_QK_NONE;
  }
  return k;
}

/* A custom node that classify() let through: quantized when the user's kernel files define its
 * quantized variant (every input and the output of act_elem; asked through o->supports, which the
 * facade answers from the files), else float with a reason naming the function looked for. */
static qllc_qkind custom_choice(qz *z, const qllc_node *n, const char **why) {
  qllc_graph *g = z->g;
  char name[512];
  const char *d = n->domain ? n->domain : "", *t = n->op_type ? n->op_type : "?";
  if (qllc_custom_kernel_name(n, z->o->act_elem, name, sizeof name)) snprintf(name, sizeof name, "(a name too long)");
  if (z->u8mode) {
    *why = qllc_arena_printf(g->arena,
                             "custom op %s:%s runs its user kernel in float (symmetric_uint8 picks u8 or i8 per value; "
                             "custom kernels are quantized under the other schemas, as %s)", d, t, name);
  } else if (!z->o->supports) {
    *why = qllc_arena_printf(g->arena, "custom op %s:%s runs its user kernel in float (no kernel query to look for %s)",
                             d, t, name);
  } else if (!z->o->supports(z->o->supports_ctx, n, z->o->act_elem, QLLC_ELEM_COUNT, z->o->act_elem)) {
    *why = qllc_arena_printf(g->arena, "custom op %s:%s runs its user kernel in float (the kernel files define no %s)",
                             d, t, name);
  } else {
    return QLLC_QK_CUSTOM;
  }
  return QLLC_QK_NONE;
}

/* ---- ranges and parameters -------------------------------------------------------------------- */

static qllc_status value_range(qz *z, const qllc_value *v, float *lo, float *hi) {
  if (v->id < z->n0 && z->ranged[v->id]) {
    *lo = z->lo[v->id], *hi = z->hi[v->id];
    return QLLC_OK;
  }
  if (v->data) { /* a constant operand: its exact range */
    const float *d = v->data;
    int64_t cnt = qllc_value_numel(v);
    float a = INFINITY, b = -INFINITY;
    for (int64_t i = 0; i < cnt; i++)
      if (isfinite(d[i])) a = fminf(a, d[i]), b = fmaxf(b, d[i]);
    if (a > b) a = b = 0;
    *lo = a, *hi = b;
  } else {
    const qllc_hist *h;
    qllc_status st = qllc_profile_get(z->prof, v->name, &h, z->diag);
    if (st != QLLC_OK) return st;
    st = qllc_calibrate(h, &z->calib, lo, hi, z->diag);
    if (st != QLLC_OK) {
      char msg[sizeof z->diag->message];
      snprintf(msg, sizeof msg, "%s", z->diag ? z->diag->message : "");
      return qllc_fail(z->diag, st, NULL, "value '%s': %s", v->name, msg);
    }
    /* the output of a bounded op: the range observed, within the bound (issue 13) */
    int pi = v->id < z->n0 ? z->prod[v->id] : -1;
    qllc_op pop = pi >= 0 ? z->nodes[pi]->op : QLLC_OP_COUNT;
    float blo = pop == QLLC_OP_TANH ? -1.0f : 0.0f, bhi = 1.0f;
    if (pop == QLLC_OP_SOFTMAX || pop == QLLC_OP_SIGMOID || pop == QLLC_OP_TANH) {
      *lo = fminf(fmaxf(*lo, blo), bhi);
      *hi = fminf(fmaxf(*hi, blo), bhi);
    }
  }
  if (v->id < z->n0) z->ranged[v->id] = 1, z->lo[v->id] = *lo, z->hi[v->id] = *hi;
  return QLLC_OK;
}

/* Values whose parameters are not taken from the profile but from another value. */
static int derived(qz *z, const qllc_value *v) {
  int i = v->data || v->id >= z->n0 ? -1 : z->prod[v->id];
  return i >= 0 && (z->kind[i] == QLLC_QK_SAME || z->kind[i] == QLLC_QK_SOFTMAX);
}

static qllc_elem kind_for(qz *z, const qllc_value *v) {
  if (z->velem && v->id < z->n0 && z->velem[v->id] != QLLC_ELEM_COUNT) return z->velem[v->id];
  if (!z->u8mode) return z->o->act_elem;
  return z->cls_u8[find(z, v->id)] ? QLLC_ELEM_U8 : QLLC_ELEM_I8;
}

static void set_params(qz *z, const qllc_value *v, const qllc_qparams *p) {
  z->qp[v->id] = *p;
  z->have[v->id] = 1;
}

/* The parameters of v: already chosen, or chosen now from its calibrated range. */
static qllc_status params(qz *z, const qllc_value *v, qllc_qparams *p) {
  if (z->have[v->id]) {
    *p = z->qp[v->id];
    return QLLC_OK;
  }
  float lo, hi;
  qllc_status st = value_range(z, v, &lo, &hi);
  if (st != QLLC_OK) return st;
  qllc_elem want = kind_for(z, v);
  qllc_schema schema = z->velem && want == QLLC_ELEM_I16 ? z->o->schema16 : z->o->schema;
  if (z->u8mode) {
    schema = QLLC_SCHEMA_SYMMETRIC;
    if (want == QLLC_ELEM_U8 && lo < 0) lo = 0;
  }
  st = qllc_quant_choose(lo, hi, schema, want, QLLC_QROLE_ACT, p, z->diag);
  if (st != QLLC_OK) {
    char msg[sizeof z->diag->message];
    snprintf(msg, sizeof msg, "%s", z->diag ? z->diag->message : "");
    return qllc_fail(z->diag, st, NULL, "value '%s': %s", v->name, msg);
  }
  set_params(z, v, p);
  return QLLC_OK;
}

static qllc_status requant(qz *z, const qllc_node *n, double M, int32_t *m, int32_t *sh) {
  qllc_requant r;
  qllc_status st = qllc_requant_make(M, &r, z->diag);
  if (st != QLLC_OK) return at_node(z, n, st);
  *m = r.m, *sh = r.n;
  return QLLC_OK;
}

/* ---- phase 3: one node ------------------------------------------------------------------------ */

static qllc_status fused(qz *z, qllc_node *n, const qllc_qparams *x, const qllc_qparams *y, qllc_qnode **out) {
  qllc_graph *g = z->g;
  const qllc_value *w = n->in[1];
  const qllc_value *b = n->n_in > 2 ? n->in[2] : NULL;
  int64_t channels = n->op == QLLC_OP_CHANNEL_AFFINE ? qllc_value_numel(w) : w->dims[0];
  int64_t K = n->op == QLLC_OP_CHANNEL_AFFINE ? 1 : qllc_value_numel(w) / (channels > 0 ? channels : 1);
  const float *bias = NULL;
  if (b) {
    int64_t nb = qllc_value_numel(b);
    if (nb == channels) {
      bias = b->data;
    } else if (nb == 1) { /* a scalar bias, broadcast */
      float *t = qllc_arena_alloc(g->arena, sizeof *t * (size_t)channels);
      if (!t) return oom(z, n);
      for (int64_t c = 0; c < channels; c++) t[c] = *(const float *)b->data;
      bias = t;
    } else {
      return qllc_fail(z->diag, QLLC_ERR_INVALID, n->name, "node '%s' (%s): bias '%s' has %lld values for %lld channels",
                       n->name, opname(n), b->name, (long long)nb, (long long)channels);
    }
  }
  float lo = -INFINITY, hi = INFINITY;
  if (n->act != QLLC_ACT_NONE) lo = n->act_lo, hi = n->act_hi;
  qllc_elem w_elem = z->o->w_elem;
  for (int i = 0; z->np && i < z->nn; i++)
    if (z->nodes[i] == n && z->np[i] != QLLC_NP_BASE) w_elem = z->np[i] == QLLC_NP_INT16 ? QLLC_ELEM_I16 : QLLC_ELEM_I8;
  qllc_status st = qllc_qnode_fused(g->arena, n->name, x, y, w->data, channels, K, bias, w_elem, z->o->per_tensor,
                                    z->o->schema == QLLC_SCHEMA_POWER2, z->o->widen_for_bias, lo, hi, out, z->diag);
  if (st != QLLC_OK) return at_node(z, n, st);
  return QLLC_OK;
}

static qllc_status quantize_node(qz *z, int idx) {
  qllc_node *n = z->nodes[idx];
  qllc_graph *g = z->g;
  qllc_qkind kind = z->kind[idx];
  qllc_value *yv = n->out[0];
  int nd = data_inputs(n, kind);
  qllc_qparams in[nd > 0 ? nd : 1], y;
  qllc_status st;
  for (int i = 0; i < nd; i++)
    if ((st = params(z, n->in[i], &in[i])) != QLLC_OK) return for_node(z, n, st);
  /* mixed precision: an input of the other kind is requantized to the node's kind (rewrite() inserts the
     node); the parameters it gets there come from the same calibrated range */
  for (int i = 0; z->nin && z->nin[idx] != QLLC_ELEM_COUNT && i < nd; i++) {
    const qllc_value *v = n->in[i];
    if (in[i].elem == z->nin[idx] || v->id >= z->n0) continue;
    if (!z->has_alt[v->id]) {
      float lo, hi;
      if ((st = value_range(z, v, &lo, &hi)) != QLLC_OK) return for_node(z, n, st);
      qllc_schema sc = z->nin[idx] == QLLC_ELEM_I16 ? z->o->schema16 : z->o->schema;
      if ((st = qllc_quant_choose(lo, hi, sc, z->nin[idx], QLLC_QROLE_ACT, &z->alt[v->id], z->diag)) != QLLC_OK)
        return for_node(z, n, st);
      z->has_alt[v->id] = 1;
    }
    in[i] = z->alt[v->id];
    if (z->n_conv == z->cap_conv) {
      int cap = z->cap_conv ? 2 * z->cap_conv : 16;
      struct conv_req *c = realloc(z->conv, sizeof *c * (size_t)cap);
      if (!c) return oom(z, n);
      z->conv = c, z->cap_conv = cap;
    }
    z->conv[z->n_conv++] = (struct conv_req){idx, i, v->id};
  }
  qllc_qnode *q = NULL;
  float act_lo = -INFINITY, act_hi = INFINITY; /* the clamp in real values */
  if (n->act != QLLC_ACT_NONE) act_lo = n->act_lo, act_hi = n->act_hi;

  /* An Add/Sub whose only consumer is a Relu: the Relu is fused into the rescale's clamp and the output
     grid covers the Relu's range (issue 13: half of the grid was spent on negatives the Relu drops, as
     PyTorch's add_relu avoids). The Relu then passes the values on unchanged. */
  const qllc_node *relu = NULL;
  if (kind == QLLC_QK_RESCALE && (n->op == QLLC_OP_ADD || n->op == QLLC_OP_SUB) && !yv->is_output && yv->id < z->n0) {
    int users = 0;
    for (int j = 0; j < z->nn; j++)
      for (int k = 0; k < z->nodes[j]->n_in; k++)
        if (z->nodes[j]->in[k] == yv) users++, relu = z->nodes[j];
    if (users != 1 || relu->op != QLLC_OP_RELU || relu->out[0]->id >= z->n0 || z->kind[z->prod[relu->out[0]->id]] != QLLC_QK_SAME ||
        kind_for(z, relu->out[0]) != kind_for(z, yv))
      relu = NULL;
  }

  /* the output's parameters */
  if (relu) {
    if ((st = params(z, relu->out[0], &y)) != QLLC_OK) return for_node(z, n, st);
    set_params(z, yv, &y);
    act_lo = 0.0f, act_hi = INFINITY;
  } else if (kind == QLLC_QK_SAME) {
    y = in[0];
    set_params(z, yv, &y);
  } else if (kind == QLLC_QK_RESCALE && n->op == QLLC_OP_CONCAT) {
    int equal = 1;
    for (int i = 1; i < nd; i++)
      equal &= in[i].scale == in[0].scale && in[i].zero_point == in[0].zero_point && in[i].elem == in[0].elem;
    if (equal) y = in[0], set_params(z, yv, &y);
    else if ((st = params(z, yv, &y)) != QLLC_OK) return for_node(z, n, st);
  } else {
    /* Softmax too: the output grid covers the probabilities observed, not all of [0, 1] (issue 13);
       qllc_quant_softmax_range then makes its scale 1 / R for an integer R */
    if ((st = params(z, yv, &y)) != QLLC_OK) return for_node(z, n, st);
  }

  if (kind == QLLC_QK_FUSED) {
    if ((st = fused(z, n, &in[0], &y, &q)) != QLLC_OK) return st;
  } else {
    q = qllc_arena_alloc(g->arena, sizeof *q);
    if (!q) return oom(z, n);
    q->kind = kind;
    q->in_elem = q->w_elem = in[0].elem;
    q->z_x = in[0].zero_point;
    q->channels = 1;
    q->n_inputs = nd;
    q->inputs = qllc_arena_alloc(g->arena, sizeof *q->inputs * (size_t)nd);
    q->m = qllc_arena_alloc(g->arena, sizeof *q->m);
    q->n = qllc_arena_alloc(g->arena, sizeof *q->n);
    if (!q->inputs || !q->m || !q->n) return oom(z, n);
    for (int i = 0; i < nd; i++) q->inputs[i].zero_point = in[i].zero_point;
    if (nd >= 2) q->w_elem = in[1].elem;
    switch (kind) {
    case QLLC_QK_MATMUL:
      q->z_w = in[1].zero_point;
      if ((st = requant(z, n, (double)in[0].scale * in[1].scale / y.scale, &q->m[0], &q->n[0])) != QLLC_OK) return st;
      break;
    case QLLC_QK_RESCALE:
      if (n->op == QLLC_OP_ADD || n->op == QLLC_OP_SUB || n->op == QLLC_OP_MAX || n->op == QLLC_OP_MIN ||
          n->op == QLLC_OP_MEAN) { /* issue 15: Max/Min rescale both inputs as Add; Mean is Add halved */
        double half = n->op == QLLC_OP_MEAN ? 0.5 : 1.0;
        double M[2] = {half * in[0].scale / y.scale, half * in[1].scale / y.scale};
        int32_t ms[2];
        st = qllc_requant_make_shared(M, 2, ms, &q->shared_n, z->diag);
        if (st != QLLC_OK) return at_node(z, n, st);
        for (int i = 0; i < 2; i++) q->inputs[i].m = ms[i], q->inputs[i].n = q->shared_n;
      } else if (n->op == QLLC_OP_MUL) {
        if ((st = requant(z, n, (double)in[0].scale * in[1].scale / y.scale, &q->m[0], &q->n[0])) != QLLC_OK) return st;
        q->inputs[0].m = q->m[0], q->inputs[0].n = q->n[0];
      } else if (n->op == QLLC_OP_CONCAT) {
        for (int i = 0; i < nd; i++)
          if ((st = requant(z, n, (double)in[i].scale / y.scale, &q->inputs[i].m, &q->inputs[i].n)) != QLLC_OK) return st;
      } else if (n->op == QLLC_OP_AVGPOOL) {
        const int64_t *ks;
        int64_t cnt = 1;
        int nk = qllc_attr_ints(n, "kernel_shape", &ks);
        for (int i = 0; i < nk; i++) cnt *= ks[i];
        q->pool_m = qllc_arena_alloc(g->arena, sizeof *q->pool_m * (size_t)(cnt + 1));
        q->pool_n = qllc_arena_alloc(g->arena, sizeof *q->pool_n * (size_t)(cnt + 1));
        if (!q->pool_m || !q->pool_n) return oom(z, n);
        st = qllc_quant_pool_multipliers(in[0].scale, y.scale, cnt, q->pool_m, q->pool_n, z->diag);
        if (st != QLLC_OK) return at_node(z, n, st);
      } else if (n->op == QLLC_OP_REDUCE_MEAN || n->op == QLLC_OP_REDUCE_SUM) { /* issue 15 */
        const qllc_value *x = n->in[0], *yo = n->out[0];
        double len = (double)qllc_value_numel(x) / (double)qllc_value_numel(yo);
        double M = (double)in[0].scale / ((double)y.scale * (n->op == QLLC_OP_REDUCE_MEAN ? len : 1.0));
        if ((st = requant(z, n, M, &q->m[0], &q->n[0])) != QLLC_OK) return st;
        q->inputs[0].m = q->m[0], q->inputs[0].n = q->n[0];
      } else { /* GLOBAL_AVGPOOL */
        const qllc_value *x = n->in[0];
        int64_t hw = 1;
        for (int i = 2; i < x->rank; i++) hw *= x->dims[i];
        if ((st = requant(z, n, (double)in[0].scale / ((double)y.scale * (double)hw), &q->m[0], &q->n[0])) != QLLC_OK)
          return st;
        q->inputs[0].m = q->m[0], q->inputs[0].n = q->n[0];
      }
      break;
    case QLLC_QK_TABLE: {
      if (n->op == QLLC_OP_PRELU) { /* issue 15: one LeakyRelu table per slope channel */
        const qllc_value *sv = n->in[1];
        int64_t C = qllc_value_numel(sv), per = in[0].elem == QLLC_ELEM_I16 ? 513 : 256;
        size_t es = in[0].elem == QLLC_ELEM_I16 ? 2 : 1;
        unsigned char *t = qllc_arena_alloc(g->arena, (size_t)(C * 513) * 2);
        if (!t) return oom(z, n);
        for (int64_t c = 0; c < C; c++) {
          int32_t len;
          st = qllc_quant_table(QLLC_QF_LEAKY_RELU, ((const float *)sv->data)[c], &in[0], &y, t + (size_t)(c * per) * es, &len, z->diag);
          if (st != QLLC_OK) return at_node(z, n, st);
        }
        q->table = t;
        q->table_len = (int32_t)(C * per);
        q->channels = C;
        break;
      }
      if (n->op != QLLC_OP_SIGMOID && n->op != QLLC_OP_TANH && n->op != QLLC_OP_LEAKY_RELU) { /* issue 15 */
        int tanh_gelu = n->op == QLLC_OP_GELU && !strcmp(qllc_attr_string(n, "approximate", "none"), "tanh");
        qllc_qfunc f = n->op == QLLC_OP_ERF ? QLLC_QF_ERF : tanh_gelu ? QLLC_QF_GELU_TANH : n->op == QLLC_OP_GELU ? QLLC_QF_GELU
                     : n->op == QLLC_OP_SQRT ? QLLC_QF_SQRT : n->op == QLLC_OP_EXP ? QLLC_QF_EXP
                     : n->op == QLLC_OP_NEG ? QLLC_QF_NEG : n->op == QLLC_OP_RECIPROCAL ? QLLC_QF_RECIPROCAL
                     : n->op == QLLC_OP_POW ? QLLC_QF_POW : n->op == QLLC_OP_HARD_SIGMOID ? QLLC_QF_HARD_SIGMOID
                     : QLLC_QF_HARD_SWISH;
        float a1 = n->op == QLLC_OP_POW ? qllc_attr_float(n, "exponent", 1.0f) : qllc_attr_float(n, "alpha", 0.2f);
        q->table = qllc_arena_alloc(g->arena, 513 * sizeof(int16_t));
        if (!q->table) return oom(z, n);
        st = qllc_quant_table2(f, a1, qllc_attr_float(n, "beta", 0.5f), &in[0], &y, q->table, &q->table_len, z->diag);
        if (st != QLLC_OK) return at_node(z, n, st);
        break;
      }
      qllc_qfunc f = n->op == QLLC_OP_SIGMOID ? QLLC_QF_SIGMOID : n->op == QLLC_OP_TANH ? QLLC_QF_TANH : QLLC_QF_LEAKY_RELU;
      q->table = qllc_arena_alloc(g->arena, 513 * sizeof(int16_t));
      if (!q->table) return oom(z, n);
      st = qllc_quant_table(f, qllc_attr_float(n, "alpha", 0.01f), &in[0], &y, q->table, &q->table_len, z->diag);
      if (st != QLLC_OK) return at_node(z, n, st);
      break;
    }
    case QLLC_QK_SOFTMAX:
      q->table = qllc_arena_alloc(g->arena, 513 * sizeof(int32_t));
      if (!q->table) return oom(z, n);
      st = qllc_quant_softmax_range(&in[0], &y, &q->softmax_recip, q->table, &q->table_len, z->diag);
      if (st != QLLC_OK) return at_node(z, n, st);
      set_params(z, yv, &y);
      break;
    case QLLC_QK_LAYERNORM: { /* issue 15 */
      const qllc_value *x = n->in[0], *gv = n->in[1], *bv = n->n_in > 2 ? n->in[2] : NULL;
      int64_t len = qllc_value_numel(gv);
      q->ln_len = len;
      q->ln_g = qllc_arena_alloc(g->arena, sizeof(float) * (size_t)len);
      q->ln_b = qllc_arena_alloc(g->arena, sizeof(float) * (size_t)len);
      if (!q->ln_g || !q->ln_b) return oom(z, n);
      for (int64_t i = 0; i < len; i++) {
        q->ln_g[i] = (float)((double)((const float *)gv->data)[i] / (double)y.scale);
        q->ln_b[i] = (float)((bv ? (double)((const float *)bv->data)[i] : 0.0) / (double)y.scale + y.zero_point);
      }
      q->ln_eps_q = (float)((double)qllc_attr_float(n, "epsilon", 1e-5f) / ((double)in[0].scale * (double)in[0].scale));
      (void)x;
      break;
    }
    case QLLC_QK_SAME:
      if (n->op == QLLC_OP_RELU) act_lo = 0.0f, act_hi = INFINITY;
      if (n->op == QLLC_OP_CLIP) act_lo = qllc_attr_float(n, "min", -INFINITY), act_hi = qllc_attr_float(n, "max", INFINITY);
      if (n->op == QLLC_OP_PAD) {
        int32_t qmin, qmax;
        qllc_quant_range(in[0].elem, 0, &qmin, &qmax);
        q->z_x = qllc_quantize_one(qllc_attr_float(n, "value", 0.0f), in[0].scale, in[0].zero_point, qmin, qmax);
      }
      break;
    default: break;
    }
    q->out_elem = y.elem;
    q->acc_elem = in[0].elem == QLLC_ELEM_I16 ? QLLC_ELEM_I64 : QLLC_ELEM_I32;
    q->z_y = y.zero_point;
    qllc_quant_act_clamp(act_lo, act_hi, &y, &q->act_lo, &q->act_hi);
  }
  if (q->in_elem != q->out_elem && kind != QLLC_QK_FUSED)
    return qllc_fail(z->diag, QLLC_ERR_INVALID, n->name, "node '%s' (%s): input %s and output %s differ", n->name,
                     opname(n), ename(q->in_elem), ename(q->out_elem));
  for (int i = 1; i < nd; i++)
    if (in[i].elem != in[0].elem)
      return qllc_fail(z->diag, QLLC_ERR_INVALID, n->name, "node '%s' (%s): inputs of kinds %s and %s", n->name,
                       opname(n), ename(in[0].elem), ename(in[i].elem));
  if (z->o->supports) {
    qllc_elem w = kind == QLLC_QK_FUSED ? q->w_elem : nd >= 2 ? in[1].elem : QLLC_ELEM_COUNT;
    if (!z->o->supports(z->o->supports_ctx, n, q->in_elem, w, q->out_elem)) {
      char prec[64];
      if (w != QLLC_ELEM_COUNT) snprintf(prec, sizeof prec, "%s x %s -> %s", ename(q->in_elem), ename(w), ename(q->out_elem));
      else snprintf(prec, sizeof prec, "%s -> %s", ename(q->in_elem), ename(q->out_elem));
      return qllc_fail(z->diag, QLLC_ERR_UNSUPPORTED, n->name, "node '%s' (%s): the target has no %s kernel for it",
                       n->name, opname(n), prec);
    }
  }
  z->qn[idx] = q;
  return QLLC_OK;
}

/* ---- phase 5: rewriting ----------------------------------------------------------------------- */

static void set_type(qllc_value *v, const qllc_qparams *p) {
  v->elem = p->elem;
  v->scale = p->scale;
  v->zero_point = p->zero_point;
  v->q_axis = -1;
}

/* Places n right after `after` in the node order. */
static void insert_after(qllc_graph *g, qllc_node *n, const qllc_node *after) {
  for (int i = 0; i < g->n_nodes; i++)
    if (g->nodes[i] == after) {
      qllc_graph_insert_before(g, n, i + 1 < g->n_nodes ? g->nodes[i + 1] : NULL);
      return;
    }
}

/* A new value named `name` + `suffix` with v's shape. */
static qllc_value *twin(qllc_graph *g, const qllc_value *v, const char *suffix, qllc_elem elem) {
  char *nm = qllc_arena_printf(g->arena, "%s%s", v->name, suffix);
  return nm ? qllc_value_new(g, nm, elem, v->rank, v->dims) : NULL;
}

static qllc_node *conv_node(qllc_graph *g, qllc_op op, qllc_value *in, qllc_value *out) {
  const char *nm = qllc_arena_printf(g->arena, "%s%s", out->name, op == QLLC_OP_QUANTIZE ? ":quantize" : ":dequantize");
  qllc_node *n = nm ? qllc_node_new(g, op, nm, 1, 1) : NULL;
  if (!n) return NULL;
  n->in[0] = in;
  n->out[0] = out;
  out->producer = n;
  return n;
}

/* A node converting integer value x to the kind and parameters p: y = clamp(REQUANT(x - z_x, m, n) + z_y)
 * with M = s_x / s_y, the type's range as the clamp (a Clip node with a RESCALE record, op type
 * "Requantize": the lowering calls qllc_k_requantize_<x>_<y>). Placed before `before`. */
static qllc_status requantize_node(qz *z, qllc_value *x, const qllc_qparams *p, qllc_node *before, qllc_value **out) {
  qllc_graph *g = z->g;
  const char *sfx = p->elem == QLLC_ELEM_I16 ? ".i16" : p->elem == QLLC_ELEM_U8 ? ".u8" : ".i8";
  qllc_value *y = twin(g, x, sfx, p->elem);
  const char *nm = y ? qllc_arena_printf(g->arena, "%s:requantize", y->name) : NULL;
  qllc_node *n = nm ? qllc_node_new(g, QLLC_OP_CLIP, nm, 1, 1) : NULL;
  qllc_qnode *q = n ? qllc_arena_alloc(g->arena, sizeof *q) : NULL;
  if (q) {
    q->inputs = qllc_arena_alloc(g->arena, sizeof *q->inputs);
    q->m = qllc_arena_alloc(g->arena, sizeof *q->m);
    q->n = qllc_arena_alloc(g->arena, sizeof *q->n);
  }
  if (!q || !q->inputs || !q->m || !q->n) return oom(z, before);
  set_type(y, p);
  n->op_type = "Requantize";
  n->in[0] = x;
  n->out[0] = y;
  y->producer = n;
  q->kind = QLLC_QK_RESCALE;
  q->in_elem = q->w_elem = x->elem;
  q->out_elem = p->elem;
  q->acc_elem = x->elem == QLLC_ELEM_I16 ? QLLC_ELEM_I64 : QLLC_ELEM_I32;
  q->z_x = x->zero_point;
  q->z_y = p->zero_point;
  q->channels = 1;
  q->n_inputs = 1;
  qllc_quant_range(p->elem, 0, &q->act_lo, &q->act_hi);
  qllc_status st = requant(z, before, (double)x->scale / (double)p->scale, &q->m[0], &q->n[0]);
  if (st != QLLC_OK) return st;
  q->inputs[0].m = q->m[0], q->inputs[0].n = q->n[0], q->inputs[0].zero_point = x->zero_point;
  n->quant = q;
  qllc_graph_insert_before(g, n, before);
  *out = y;
  return QLLC_OK;
}

static qllc_status rewrite(qz *z) {
  qllc_graph *g = z->g;
  const qllc_quant_opts *o = z->o;
  qllc_value **qcache = calloc((size_t)z->n0 + 1, sizeof *qcache); /* QUANTIZE or integer constant */
  qllc_value **fcache = calloc((size_t)z->n0 + 1, sizeof *fcache); /* DEQUANTIZE */
  qllc_status st = QLLC_OK;
  if (!qcache || !fcache) {
    st = oom(z, NULL);
    goto done;
  }
  for (int i = 0; i < z->nn; i++) {
    qllc_node *n = z->nodes[i];
    n->quant = z->qn[i];
    n->keep_float = z->kind[i] == QLLC_QK_NONE;
    n->float_reason = n->keep_float ? z->reason[i] : NULL;
  }
  /* graph outputs at the boundary */
  for (int i = 0; i < g->n_outputs; i++) {
    qllc_value *v = g->outputs[i];
    if (v->id >= z->n0 || v->data || v->is_input) continue;
    qllc_node *p = v->producer;
    if (!p) continue;
    int pk = -1;
    for (int k = 0; k < p->n_out; k++)
      if (p->out[k] == v) pk = k;
    if (pk < 0) continue;
    if (z->int_dom[v->id] && !o->quantized_io) {
      /* the producer writes "<name>.q"; a DEQUANTIZE writes the ONNX output; quantized users read .q */
      qllc_value *vq = twin(g, v, ".q", z->qp[v->id].elem);
      qllc_node *dq = vq ? conv_node(g, QLLC_OP_DEQUANTIZE, vq, v) : NULL;
      if (!dq) {
        st = oom(z, p);
        goto done;
      }
      set_type(vq, &z->qp[v->id]);
      p->out[pk] = vq;
      vq->producer = p;
      insert_after(g, dq, p);
      for (int j = 0; j < z->nn; j++)
        if (z->kind[j] != QLLC_QK_NONE)
          for (int k = 0; k < z->nodes[j]->n_in; k++)
            if (z->nodes[j]->in[k] == v) z->nodes[j]->in[k] = vq;
      z->int_dom[v->id] = 0;
    } else if (o->quantized_io && is_f32(v) && z->have[v->id] && !z->int_dom[v->id]) {
      /* computed in float: the float node writes "<name>.f", a QUANTIZE writes the ONNX output */
      qllc_value *vf = twin(g, v, ".f", QLLC_ELEM_F32);
      qllc_node *qn = vf ? conv_node(g, QLLC_OP_QUANTIZE, vf, v) : NULL;
      if (!qn) {
        st = oom(z, p);
        goto done;
      }
      p->out[pk] = vf;
      vf->producer = p;
      insert_after(g, qn, p);
      for (int j = 0; j < z->nn; j++)
        if (z->kind[j] == QLLC_QK_NONE)
          for (int k = 0; k < z->nodes[j]->n_in; k++)
            if (z->nodes[j]->in[k] == v) z->nodes[j]->in[k] = vf;
      z->int_dom[v->id] = 1;
    }
  }
  for (int id = 0; id < z->n0; id++)
    if (z->int_dom[id]) set_type(g->values[id], &z->qp[id]);
  /* QUANTIZE / integer constants before quantized nodes, DEQUANTIZE before float nodes */
  for (int i = 0; i < z->nn; i++) {
    qllc_node *n = z->nodes[i];
    if (z->kind[i] != QLLC_QK_NONE) {
      int nd = data_inputs(n, z->kind[i]);
      for (int k = 0; k < nd && k < n->n_in; k++) {
        qllc_value *v = n->in[k];
        if (!v || !is_f32(v) || v->id >= z->n0) continue;
        if (!qcache[v->id]) {
          const qllc_qparams *p = &z->qp[v->id];
          qllc_value *vq;
          if (v->data) {
            vq = qllc_const_new(g, qllc_arena_printf(g->arena, "%s.q", v->name), p->elem, v->rank, v->dims, NULL);
            if (vq) {
              set_type(vq, p);
              st = qllc_quantize_tensor(v->data, qllc_value_numel(v), p->scale, p->zero_point, p->elem, vq->data, z->diag);
              if (st != QLLC_OK) {
                st = at_node(z, n, st);
                goto done;
              }
            }
          } else {
            vq = twin(g, v, ".q", p->elem);
            qllc_node *qn = vq ? conv_node(g, QLLC_OP_QUANTIZE, v, vq) : NULL;
            if (!qn) vq = NULL;
            else {
              set_type(vq, p);
              qllc_graph_insert_before(g, qn, n);
            }
          }
          if (!vq) {
            st = oom(z, n);
            goto done;
          }
          qcache[v->id] = vq;
        }
        n->in[k] = qcache[v->id];
      }
    } else {
      for (int k = 0; k < n->n_in; k++) {
        qllc_value *v = n->in[k];
        if (!v || v->id >= z->n0 || !z->int_dom[v->id] || v->data) continue;
        if (!fcache[v->id]) {
          qllc_value *vf = twin(g, v, ".f", QLLC_ELEM_F32);
          qllc_node *dq = vf ? conv_node(g, QLLC_OP_DEQUANTIZE, v, vf) : NULL;
          if (!dq) {
            st = oom(z, n);
            goto done;
          }
          qllc_graph_insert_before(g, dq, n);
          fcache[v->id] = vf;
        }
        n->in[k] = fcache[v->id];
      }
    }
  }
  /* mixed precision: one requantize node per value and kind, before its first consumer of that kind */
  for (int r = 0; r < z->n_conv && st == QLLC_OK; r++) {
    qllc_node *n = z->nodes[z->conv[r].node];
    qllc_value *cur = n->in[z->conv[r].input];
    const qllc_qparams *p = &z->alt[z->conv[r].value];
    if (cur->elem == p->elem) continue;
    qllc_value *done_v = NULL;
    for (int k = 0; k < r && !done_v; k++) /* made already for an earlier consumer */
      if (z->conv[k].value == z->conv[r].value && z->nodes[z->conv[k].node]->in[z->conv[k].input]->elem == p->elem &&
          z->nodes[z->conv[k].node]->in[z->conv[k].input]->producer &&
          z->nodes[z->conv[k].node]->in[z->conv[k].input]->producer->in[0] == cur)
        done_v = z->nodes[z->conv[k].node]->in[z->conv[k].input];
    if (!done_v) {
      st = requantize_node(z, cur, p, n, &done_v);
      if (st != QLLC_OK) goto done;
    }
    n->in[z->conv[r].input] = done_v;
  }
  qllc_graph_recount_uses(g);
done:
  free(qcache);
  free(fcache);
  return st;
}

/* ---- the driver ------------------------------------------------------------------------------- */

static void qz_free(qz *z) {
  free(z->nodes), free(z->kind), free(z->reason), free(z->qn);
  free(z->parent), free(z->cls_u8), free(z->ranged), free(z->lo), free(z->hi), free(z->have), free(z->qp);
  free(z->int_dom), free(z->member), free(z->prod);
  free(z->np), free(z->nin), free(z->velem), free(z->alt), free(z->has_alt), free(z->conv);
}

/* The kind a value nothing quantized computes (a graph input) takes under a map: that of its first
 * consumer that computes, looked for through the SAME nodes (views, max pool, clamps) between them, so
 * that a Reshape before an int16 layer is int16 from the graph input's quantize on, as at --precision
 * int16 (issue 27); act_elem when no such consumer. */
static qllc_elem consumer_kind(const qz *z, const qllc_value *v, int depth) {
  for (int i = 0; i < z->nn && depth < 64; i++) {
    const qllc_node *n = z->nodes[i];
    if (z->kind[i] == QLLC_QK_NONE) continue;
    int uses = 0;
    for (int k = 0; k < data_inputs(n, z->kind[i]) && k < n->n_in; k++) uses |= n->in[k] == v;
    if (!uses) continue;
    if (z->kind[i] == QLLC_QK_CUSTOM) return z->o->act_elem;
    if (z->kind[i] == QLLC_QK_SAME) return consumer_kind(z, n->out[0], depth + 1);
    return z->np[i] == QLLC_NP_16X8 || z->np[i] == QLLC_NP_INT16 ? QLLC_ELEM_I16 : QLLC_ELEM_I8;
  }
  return z->o->act_elem;
}

/* Mixed precision: each node's precision from the map, the kind of its inputs, and each value's kind
 * (a compute node's output: its precision's; a SAME node's: its input's; a value nothing quantized
 * computes: its first computing consumer's, consumer_kind). */
static qllc_status mixed_kinds(qz *z) {
  const qllc_quant_opts *o = z->o;
  size_t nv = (size_t)z->n0 + 1, nn = (size_t)z->nn + 1;
  z->np = calloc(nn, sizeof *z->np);
  z->nin = malloc(nn * sizeof *z->nin);
  z->velem = malloc(nv * sizeof *z->velem);
  z->alt = calloc(nv, sizeof *z->alt);
  z->has_alt = calloc(nv, 1);
  if (!z->np || !z->nin || !z->velem || !z->alt || !z->has_alt) return oom(z, NULL);
  for (int k = 0; k < o->map->n; k++) {
    int found = 0;
    for (int i = 0; i < z->nn; i++)
      if (!strcmp(z->nodes[i]->name, o->map->nodes[k])) z->np[i] = o->map->prec[k], found = 1;
    if (!found)
      return qllc_fail(z->diag, QLLC_ERR_INVALID, NULL, "precision map: the model has no node '%s'", o->map->nodes[k]);
  }
  for (int i = 0; i < z->n0; i++) z->velem[i] = QLLC_ELEM_COUNT;
  for (int i = 0; i < z->nn; i++) {
    qllc_node *n = z->nodes[i];
    z->nin[i] = QLLC_ELEM_COUNT;
    if (z->kind[i] == QLLC_QK_NONE) continue;
    int nd = data_inputs(n, z->kind[i]);
    qllc_elem e = z->np[i] == QLLC_NP_16X8 || z->np[i] == QLLC_NP_INT16 ? QLLC_ELEM_I16 : QLLC_ELEM_I8;
    if (z->kind[i] == QLLC_QK_SAME || z->kind[i] == QLLC_QK_CUSTOM) {
      const qllc_value *x = n->in[0];
      if (z->kind[i] == QLLC_QK_CUSTOM) e = o->act_elem;
      else e = x->id < z->n0 && z->velem[x->id] != QLLC_ELEM_COUNT ? z->velem[x->id] : consumer_kind(z, x, 0);
    } else {
      z->nin[i] = e;
    }
    if (z->kind[i] == QLLC_QK_CUSTOM) z->nin[i] = e;
    for (int k = 0; k < nd && k < n->n_in; k++)
      if (n->in[k] && n->in[k]->id < z->n0 && z->velem[n->in[k]->id] == QLLC_ELEM_COUNT) z->velem[n->in[k]->id] = e;
    if (n->out[0]->id < z->n0) z->velem[n->out[0]->id] = e;
  }
  return QLLC_OK;
}

static qllc_status run(qz *z) {
  qllc_graph *g = z->g;
  const qllc_quant_opts *o = z->o;
  qllc_status st;
  size_t nv = (size_t)z->n0 + 1, nn = (size_t)z->nn + 1;
  z->nodes = malloc(nn * sizeof *z->nodes);
  z->kind = calloc(nn, sizeof *z->kind);
  z->reason = calloc(nn, sizeof *z->reason);
  z->qn = calloc(nn, sizeof *z->qn);
  z->parent = malloc(nv * sizeof *z->parent);
  z->cls_u8 = malloc(nv);
  z->ranged = calloc(nv, 1);
  z->lo = calloc(nv, sizeof *z->lo);
  z->hi = calloc(nv, sizeof *z->hi);
  z->have = calloc(nv, 1);
  z->qp = calloc(nv, sizeof *z->qp);
  z->int_dom = calloc(nv, 1);
  z->member = calloc(nv, 1);
  z->prod = malloc(nv * sizeof *z->prod);
  if (!z->prod || !z->nodes || !z->kind || !z->reason || !z->qn || !z->parent || !z->cls_u8 || !z->ranged || !z->lo || !z->hi ||
      !z->have || !z->qp || !z->int_dom || !z->member)
    return oom(z, NULL);
  if (z->nn) memcpy(z->nodes, g->nodes, (size_t)z->nn * sizeof *z->nodes); /* a graph of no nodes has none */
  for (int i = 0; i < z->n0; i++) z->parent[i] = i, z->cls_u8[i] = 1, z->prod[i] = -1;
  for (int i = 0; i < z->nn; i++)
    for (int k = 0; k < z->nodes[i]->n_out; k++)
      if (z->nodes[i]->out[k] && z->nodes[i]->out[k]->id < z->n0) z->prod[z->nodes[i]->out[k]->id] = i;

  /* 1. decisions */
  for (int k = 0; k < o->n_keep_float; k++) {
    const char *name = o->keep_float[k];
    int found = qllc_op_lookup(name) >= 0 || !strcmp(name, "FullyConnected") || !strcmp(name, "ChannelAffine");
    for (int i = 0; i < z->nn && !found; i++) found = !strcmp(z->nodes[i]->name, name);
    if (!found)
      return qllc_fail(z->diag, QLLC_ERR_INVALID, NULL, "--keep-float %s: no node or op type of that name", name);
  }
  for (int i = 0; i < z->nn; i++) {
    qllc_node *n = z->nodes[i];
    const char *kept = NULL;
    for (int k = 0; k < o->n_keep_float && !kept; k++)
      if (keep_matches(n, o->keep_float[k])) kept = o->keep_float[k];
    if (kept) {
      z->kind[i] = QLLC_QK_NONE;
      z->reason[i] = qllc_arena_printf(g->arena, "kept in float by --keep-float %s", kept);
    } else {
      z->kind[i] = classify(g, n, &z->reason[i]);
      if (z->kind[i] == QLLC_QK_CUSTOM) z->kind[i] = custom_choice(z, n, &z->reason[i]);
    }
    if (!z->reason[i] && z->kind[i] == QLLC_QK_NONE) return oom(z, n);
  }
  /* which values get parameters, and which become integer themselves */
  for (int i = 0; i < z->nn; i++) {
    qllc_node *n = z->nodes[i];
    if (z->kind[i] == QLLC_QK_NONE) continue;
    int nd = data_inputs(n, z->kind[i]);
    for (int k = 0; k < nd && k < n->n_in; k++) z->member[n->in[k]->id] = 1;
    z->member[n->out[0]->id] = z->int_dom[n->out[0]->id] = 1;
    if (z->kind[i] != QLLC_QK_FUSED)
      for (int k = 0; k < nd && k < n->n_in; k++) unite(z, n->in[k], n->out[0]);
  }
  if (o->quantized_io) {
    for (int i = 0; i < g->n_inputs; i++)
      if (is_f32(g->inputs[i]) && g->inputs[i]->id < z->n0)
        z->member[g->inputs[i]->id] = z->int_dom[g->inputs[i]->id] = 1;
    for (int i = 0; i < g->n_outputs; i++)
      if (is_f32(g->outputs[i]) && !g->outputs[i]->data && g->outputs[i]->id < z->n0) z->member[g->outputs[i]->id] = 1;
  }

  if (o->map && (st = mixed_kinds(z)) != QLLC_OK) return st;

  /* 2. element-kind classes (symmetric_uint8) */
  if (z->u8mode) {
    for (int id = 0; id < z->n0; id++) {
      qllc_value *v = g->values[id];
      if (!z->member[id] || derived(z, v)) continue;
      float lo, hi;
      if ((st = value_range(z, v, &lo, &hi)) != QLLC_OK) return st;
      if (lo < 0) z->cls_u8[find(z, id)] = 0;
    }
  }

  /* 3. parameters and records */
  for (int i = 0; i < g->n_inputs; i++) {
    qllc_value *v = g->inputs[i];
    qllc_qparams p;
    if (v->id < z->n0 && z->int_dom[v->id] && (st = params(z, v, &p)) != QLLC_OK) return st;
  }
  for (int i = 0; i < z->nn; i++)
    if (z->kind[i] != QLLC_QK_NONE && (st = quantize_node(z, i)) != QLLC_OK) return st;
  for (int i = 0; i < g->n_outputs; i++) {
    qllc_value *v = g->outputs[i];
    qllc_qparams p;
    if (v->id < z->n0 && z->member[v->id] && (st = params(z, v, &p)) != QLLC_OK) return st;
  }

  /* 4. strict */
  if (o->strict) {
    for (int i = 0; i < z->nn; i++) {
      qllc_node *n = z->nodes[i];
      if (z->kind[i] == QLLC_QK_NONE)
        return qllc_fail(z->diag, QLLC_ERR_STRICT, n->name, "node '%s' (%s) would stay in float: %s (--strict)", n->name,
                         opname(n), z->reason[i]);
      const qllc_bias_report *r = z->qn[i] && z->qn[i]->kind == QLLC_QK_FUSED ? &z->qn[i]->bias_report : NULL;
      if (r && r->n_clipped)
        return qllc_fail(z->diag, QLLC_ERR_STRICT, n->name,
                         "node '%s' (%s): bias clipped to int32 in %lld channel(s), worst %.4g (float %g) (--strict)",
                         n->name, opname(n), (long long)r->n_clipped, r->worst_value, (double)r->worst_real);
    }
  }

  /* 5. rewrite */
  return rewrite(z);
}

qllc_status qllc_quantize_graph(qllc_graph *g, const qllc_profile *prof, const qllc_quant_opts *o, qllc_diag *diag) {
  if (!g || !o) return qllc_fail(diag, QLLC_ERR_INVALID, NULL, "quantize: no graph or options");
  if (!prof) return qllc_fail(diag, QLLC_ERR_INVALID, NULL, "quantization needs a profile (qllc profile, then --profile FILE)");
  if (o->act_elem != QLLC_ELEM_I8 && o->act_elem != QLLC_ELEM_U8 && o->act_elem != QLLC_ELEM_I16)
    return qllc_fail(diag, QLLC_ERR_INVALID, NULL, "activations must be int8, uint8 or int16");
  if (o->w_elem != QLLC_ELEM_I8 && o->w_elem != QLLC_ELEM_I16)
    return qllc_fail(diag, QLLC_ERR_INVALID, NULL, "weights must be int8 or int16");
  if (o->act_elem != QLLC_ELEM_I16 && o->w_elem == QLLC_ELEM_I16)
    return qllc_fail(diag, QLLC_ERR_UNSUPPORTED, NULL,
                     "8-bit activations with int16 weights is not a supported mode (int16 with int8 weights is)");
  qllc_status st = qllc_profile_check(prof, g, diag);
  if (st != QLLC_OK) return st;
  qz z;
  memset(&z, 0, sizeof z);
  z.g = g;
  z.prof = prof;
  z.o = o;
  z.diag = diag;
  z.calib = o->calib;
  if (z.calib.kl_levels == 0 && o->act_elem == QLLC_ELEM_I16) z.calib.kl_levels = 32767; /* capped to bins / 2 */
  /* mse: the grid the range will be cut into (symmetric schemas: [-T, T] in 2 qmax steps) */
  z.calib.symmetric = o->schema != QLLC_SCHEMA_ASYMMETRIC;
  if (z.calib.levels == 0) z.calib.levels = o->act_elem == QLLC_ELEM_I16 ? (z.calib.symmetric ? 65534 : 65535)
                                                                         : (z.calib.symmetric ? 254 : 255);
  z.u8mode = o->schema == QLLC_SCHEMA_SYMMETRIC_UINT8 && o->act_elem != QLLC_ELEM_I16;
  if (o->map && (o->act_elem != QLLC_ELEM_I8 || z.u8mode))
    return qllc_fail(diag, QLLC_ERR_UNSUPPORTED, NULL,
                     "mixed precision starts from int8 activations (not int16, not symmetric_uint8)");
  z.n0 = g->n_values;
  z.nn = g->n_nodes;
  st = run(&z);
  if (st != QLLC_OK) qllc_diag_set_file(diag, g->path); /* profile errors named their file already */
  qz_free(&z);
  return st;
}
