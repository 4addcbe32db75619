/* src/lower/registry.c: the kernel registry (kernels.def) expanded: kernel rows, argument signatures,
 * the generic call emitter, the op -> stem table, and ISA variant selection.
 *
 * The generic emitter (qllc_lower_call): a lowering function fills a per-node table of role values
 * (qllc_lower_roles: Y, X, W, BIAS, DIM_H, Z_X, ...) and names the kernel; the emitter takes the
 * kernel's row (a variant: its reference's signature followed by SCRATCH), and makes the call's
 * arguments in the signature's order. A role of the signature the node left unset is an internal
 * error naming the kernel and the role, never a call with a missing argument.
 *
 * Selection (qllc_lower_choose) happens per fused layer while lowering, before its weights are written:
 * among the kernel catalogue's rows (targets/<arch>/kernels/variants.def) of the layer's reference
 * kernel for the target's architecture, the first (fastest) whose shape predicate takes the layer and
 * whose features the target CPU has all of. The reason the choice fell where it did is kept on the
 * instruction for the per-node report: the CPU features missing for the faster variants, or the shape.
 */
#include <stdio.h>
#include <string.h>

#include "lower/lower_internal.h"
#include "lower/pack.h"

/* The declarations the rows are checked against (a name the headers do not declare does not
 * compile). Only the declarations are used, never the symbols. */
#include "../../libjit/bitcode/kernels_f32.h"
#include "../../libjit/bitcode/kernels_q.h"
#include "../../libjit/bitcode/kernels_qdq.h"
#include "../../libjit/bitcode/kernels_variants.h" /* the rows' helpers (QLLC_VROWS_Q8) */

static const char *const role_names[QLLC_N_ROLES] = {
#define QROLE(r) #r,
#include "lower/kernels.def"
};

#define R(r) QLLC_ROLE_##r
#define QSIG(sig, ...) static const unsigned char sig_##sig[] = {__VA_ARGS__};
#include "lower/kernels.def"

typedef struct sig_def {
  const unsigned char *roles;
  int n;
} sig_def;
static const sig_def sigs[QLLC_N_SIGS] = {
#define QSIG(sig, ...) [QLLC_SIG_##sig] = {sig_##sig, (int)sizeof sig_##sig},
#include "lower/kernels.def"
};
#undef R

static const qllc_krow rows[] = {
#define QKERNEL(fn, stem, in, w, out, acc, sig)                                                           \
  {sizeof(&fn) ? #fn : NULL, #stem, #in, #w, #out, #acc, QLLC_SIG_##sig},
#include "lower/kernels.def"
};
#define N_ROWS ((int)(sizeof rows / sizeof rows[0]))

/* The functions the rows name (src/lower/pack.c), declared from the rows themselves: a row with a new
   predicate, layout or scratch size needs no declaration elsewhere. */
#define QVARIANT(kstem, op, in, w, out, isa, features, fits, layout, scratch, flags)                            \
  qllc_fits_fn qllc_fits_##fits;                                                                               \
  qllc_packer_fn qllc_packer_##layout;                                                                         \
  qllc_vscratch_fn qllc_vscratch_##scratch;
#include "../../targets/x86_64/kernels/variants.def"
#define QVARIANT(kstem, op, in, w, out, isa, features, fits, layout, scratch, flags)                            \
  qllc_fits_fn qllc_fits_##fits;                                                                               \
  qllc_packer_fn qllc_packer_##layout;                                                                         \
  qllc_vscratch_fn qllc_vscratch_##scratch;
#include "../../targets/aarch64/kernels/variants.def"

/* The kernel catalogue: every architecture's rows, in their files' order (fastest first per reference). */
#define QLLC_ESIZE_i8 1
#define QLLC_ESIZE_u8 1
#define QLLC_ESIZE_i16 2
#define QLLC_ESIZE_f32 4
#define QLLC_VSTR_(x) #x
#define QLLC_VSTR(x) QLLC_VSTR_(x)
#define QVARIANT(kstem, op, in, w, out, isa, features, fits, layout, scratch, flags)                            \
  {QLLC_VSTR(qllc_k_##kstem##_##in##_##w##_##out##__##isa), QLLC_VSTR(qllc_k_##op##_##in##_##w##_##out),        \
   QLLC_VARCH, #isa, features, QLLC_LAYOUT_##layout, QLLC_ESIZE_##in, qllc_fits_##fits, qllc_packer_##layout,    \
   qllc_vscratch_##scratch, QLLC_VF_##flags},
static const qllc_kvariant variants[] = {
#define QLLC_VARCH "x86_64"
#include "../../targets/x86_64/kernels/variants.def"
#undef QLLC_VARCH
#define QVARIANT(kstem, op, in, w, out, isa, features, fits, layout, scratch, flags)                            \
  {QLLC_VSTR(qllc_k_##kstem##_##in##_##w##_##out##__##isa), QLLC_VSTR(qllc_k_##op##_##in##_##w##_##out),        \
   QLLC_VARCH, #isa, features, QLLC_LAYOUT_##layout, QLLC_ESIZE_##in, qllc_fits_##fits, qllc_packer_##layout,    \
   qllc_vscratch_##scratch, QLLC_VF_##flags},
#define QLLC_VARCH "aarch64"
#include "../../targets/aarch64/kernels/variants.def"
#undef QLLC_VARCH
};
#define N_VARIANTS ((int)(sizeof variants / sizeof variants[0]))

typedef struct op_stem {
  int op;
  const char *stem, *const_stem;
} op_stem;
static const op_stem op_stems[] = {
#define QOP(op, stem, const_stem) {QLLC_OP_##op, #stem, #const_stem},
#include "lower/kernels.def"
};

/* ---- channel-last twins ------------------------------------------------------------------------------ */

typedef struct twin_row {
  const char *fn, *twin;
} twin_row;
static const twin_row twins[] = {
#define QTWIN(fn, twin) {sizeof(&fn) && sizeof(&twin) ? #fn : NULL, #twin},
#include "lower/kernels.def"
};

const char *qllc_lower_nhwc_twin(const char *kernel) {
  for (size_t i = 0; kernel && i < sizeof twins / sizeof twins[0]; i++)
    if (strcmp(twins[i].fn, kernel) == 0) return twins[i].twin;
  return NULL;
}

/* ---- ISA copies of plain kernels ----------------------------------------------------------------------- */

typedef struct isa_row {
  const char *fn, *copy, *arch, *features;
} isa_row;
static const isa_row isa_rows[] = {
#define QISA(fn, copy, arch, features) {sizeof(&fn) ? #fn : NULL, #copy, #arch, features},
#include "lower/kernels.def"
};

/* kernel's ISA copy for the target (QISA rows), or NULL */
static const char *isa_copy(const qllc_lower_ctx *c, const char *kernel) {
  const qllc_lower_target *t = c->target;
  if (!t || !t->arch) return NULL;
  for (size_t i = 0; i < sizeof isa_rows / sizeof isa_rows[0]; i++) {
    const isa_row *r = &isa_rows[i];
    if (strcmp(r->fn, kernel) != 0 || strcmp(r->arch, t->arch) != 0) continue;
    if (t->user_defines && t->user_defines(t->user_ctx, kernel)) return NULL;
    if (qllc_lower_has_features(t->features, r->features, NULL, 0)) return r->copy;
  }
  return NULL;
}

/* ---- rows ---------------------------------------------------------------------------------------- */

/* kernel's row; an ISA copy (QISA) has its reference's */
const qllc_krow *qllc_lower_row(const char *kernel) {
  for (int i = 0; kernel && i < N_ROWS; i++)
    if (strcmp(rows[i].name, kernel) == 0) return &rows[i];
  for (size_t i = 0; kernel && i < sizeof isa_rows / sizeof isa_rows[0]; i++)
    if (strcmp(isa_rows[i].copy, kernel) == 0) return qllc_lower_row(isa_rows[i].fn);
  return NULL;
}

static const qllc_kvariant *variant_row(const char *kernel) {
  for (int i = 0; kernel && i < N_VARIANTS; i++)
    if (strcmp(variants[i].name, kernel) == 0) return &variants[i];
  return NULL;
}

int qllc_lower_known(const char *kernel) { return qllc_lower_row(kernel) || variant_row(kernel); }

/* The roles of kernel's parameters, in order (a variant: its reference's, then SCRATCH, then an NHWC row's
 * LAYOUT_X, LAYOUT_Y): the count
 * (at most max written to roles), or -1 when the registry has no such kernel. */
static int kernel_roles(const char *kernel, unsigned char *roles, int max) {
  const qllc_kvariant *v = variant_row(kernel);
  const qllc_krow *r = qllc_lower_row(v ? v->ref : kernel);
  if (!r) return -1;
  const sig_def *s = &sigs[r->sig];
  int n = 0;
  for (int i = 0; i < s->n; i++, n++)
    if (n < max) roles[n] = s->roles[i];
  if (v) {
    if (n < max) roles[n] = QLLC_ROLE_SCRATCH;
    n++;
  }
  if (v && (v->flags & QLLC_VF_NHWC)) {
    if (n < max) roles[n] = QLLC_ROLE_LAYOUT_X;
    if (n + 1 < max) roles[n + 1] = QLLC_ROLE_LAYOUT_Y;
    n += 2;
  }
  return n;
}

int qllc_lower_kernel_roles(const char *kernel, const char **names, int max) {
  unsigned char roles[QLLC_LOWER_MAX_ARGS];
  int n = kernel_roles(kernel, roles, QLLC_LOWER_MAX_ARGS);
  for (int i = 0; i < n && i < max && i < QLLC_LOWER_MAX_ARGS; i++) names[i] = role_names[roles[i]];
  return n;
}

int qllc_lower_kernel_count(void) { return N_ROWS; }

const char *qllc_lower_kernel_name(int i, const char **stem, const char **in, const char **w, const char **out) {
  if (i < 0 || i >= N_ROWS) return NULL;
  if (stem) *stem = rows[i].stem;
  if (in) *in = rows[i].in;
  if (w) *w = rows[i].w;
  if (out) *out = rows[i].out;
  return rows[i].name;
}

/* ---- the generic emitter --------------------------------------------------------------------------- */

qllc_status qllc_lower_call(qllc_lower_ctx *c, const qllc_node *n, const char *kernel, const qllc_lower_roles *rv) {
  qllc_lower_args av = {.n = 0};
  if (!kernel) return qllc_lower_oom(c);
  unsigned char roles[QLLC_LOWER_MAX_ARGS];
  int k = kernel_roles(kernel, roles, QLLC_LOWER_MAX_ARGS);
  if (k < 0) return qllc_lower_emit(c, n, kernel, &av); /* not in the registry: emit names it */
  if (k > QLLC_LOWER_MAX_ARGS)
    return qllc_fail(c->diag, QLLC_ERR_INVALID, n ? n->name : NULL, "kernel %s: more than %d arguments", kernel,
                     QLLC_LOWER_MAX_ARGS);
  for (int i = 0; i < k; i++) {
    if (!rv->set[roles[i]])
      return qllc_fail(c->diag, QLLC_ERR_INVALID, n ? n->name : NULL,
                       "node '%s': internal error: kernel %s: argument %d (%s) has no value", n ? n->name : "?",
                       kernel, i, role_names[roles[i]]);
    av.a[av.n++] = rv->v[roles[i]];
  }
  const char *copy = isa_copy(c, kernel);
  return qllc_lower_emit(c, n, copy ? copy : kernel, &av);
}

int qllc_lower_arity(const char *kernel) { return kernel_roles(kernel, NULL, 0); }
int qllc_lower_kernel_role_ids(const char *kernel, unsigned char *roles, int max) {
  return kernel_roles(kernel, roles, max);
}
const qllc_kvariant *qllc_lower_variant_of(const char *kernel) { return variant_row(kernel); }

/* ---- op -> stem ------------------------------------------------------------------------------------- */

const char *qllc_lower_q_stem(const qllc_node *n, int *arity) {
  const char *stem = NULL;
  for (size_t i = 0; i < sizeof op_stems / sizeof op_stems[0]; i++)
    if (op_stems[i].op == (int)n->op) {
      int cst = n->n_in > 1 && n->in[1] && qllc_value_is_const(n->in[1]);
      stem = cst ? op_stems[i].const_stem : op_stems[i].stem;
      break;
    }
  *arity = 2;
  if (!stem) return NULL;
  /* the arity of the stem's integer rows (a float kernel may name fewer kinds: channel_affine_f32_f32);
     a stem with float rows only (div) has theirs */
  int found = 0;
  for (int i = 0; i < N_ROWS && found < 2; i++) {
    if (strcmp(rows[i].stem, stem) != 0) continue;
    int is_float = !strcmp(rows[i].in, "f32") && !strcmp(rows[i].out, "f32");
    if (found && is_float) continue;
    *arity = strcmp(rows[i].w, "none") ? 3 : 2;
    found = is_float ? 1 : 2;
  }
  return stem;
}

/* ---- variants --------------------------------------------------------------------------------------- */

int qllc_lower_variant_count(void) { return N_VARIANTS; }

const char *qllc_lower_variant_name(int i, const char **ref, const char **arch) {
  if (i < 0 || i >= N_VARIANTS) return NULL;
  if (ref) *ref = variants[i].ref;
  if (arch) *arch = variants[i].arch;
  return variants[i].name;
}

/* The state of feature `name` (len bytes) in f: +1 enabled, -1 disabled, 0 not mentioned. */
static int feature_state(const char *f, const char *name, size_t len) {
  int st = 0;
  for (const char *p = f; p && *p;) {
    while (*p == ',' || *p == ' ') p++;
    size_t n = strcspn(p, ",");
    if (n > 1 && (p[0] == '+' || p[0] == '-') && n - 1 == len && strncmp(p + 1, name, len) == 0)
      st = p[0] == '+' ? 1 : -1;
    p += n;
  }
  return st;
}

int qllc_lower_has_features(const char *f, const char *need, char *missing, size_t size) {
  int ok = 1;
  if (missing && size) missing[0] = 0;
  for (const char *p = need; p && *p;) {
    while (*p == ',' || *p == ' ') p++;
    size_t n = strcspn(p, ",");
    if (n && feature_state(f ? f : "", p, n) <= 0) {
      ok = 0;
      if (missing && size) {
        size_t len = strlen(missing);
        snprintf(missing + len, size - len, "%s%.*s", len ? ", " : "", (int)n, p);
      }
    }
    p += n;
  }
  return ok;
}

/* One place decides: the rows of ref in order, each offered the layer by its predicate (a row for
 * another class of layer, e.g. a depthwise one, is skipped unmentioned). A row whose features the CPU
 * lacks is passed over and named in *why (an ALT row is not: the general row of its ISA after it needs
 * the same features and says so); the first row with its features that takes the layer wins. A general
 * row with its features that does not take the layer ends the search: the layer runs the reference,
 * and *why says the shape's reason after the features missed (no "cpu" prefix: the shape decided). */
const qllc_kvariant *qllc_lower_choose(qllc_lower_ctx *c, const char *ref, const qllc_layer_geom *g,
                                       const char **why) {
  *why = NULL;
  c->pick_missed = 0;
  c->pick_nhwc_only = 0;
  if (!ref) return NULL;
  const qllc_lower_target *t = c->target;
  char buf[512] = "";
  size_t len = 0;
  int any = 0, misfit = 0;
  if (t && t->user_defines && t->user_defines(t->user_ctx, ref)) {
    *why = qllc_arena_printf(c->p->arena, "%s is the user's kernel (--kernels): no variant replaces it", ref);
    return NULL;
  }
  for (int i = 0; i < N_VARIANTS; i++) {
    const qllc_kvariant *v = &variants[i];
    if (strcmp(v->ref, ref) != 0) continue;
    if (t && t->arch && strcmp(v->arch, t->arch) != 0) continue;
    char reason[160] = "";
    int fits = v->fits(g, reason, sizeof reason);
    if (fits < 0) continue;
    const int nhwc_only = fits == 2; /* taken only for its channel-last ends: not where they were refused */
    if (nhwc_only) fits = !c->no_nhwc_only;
    any = 1;
    if (!t) {
      snprintf(buf, sizeof buf, "no target CPU given: the reference kernel");
      break;
    }
    const int alt = (v->flags & QLLC_VF_ALT) != 0;
    if (!fits && alt) continue;
    char missing[256];
    if (!qllc_lower_has_features(t->features, v->features, missing, sizeof missing)) {
      if (alt) continue;
      c->pick_missed = 1;
      misfit |= !fits;
      int n = snprintf(buf + len, sizeof buf - len, "%s__%s needs %s", len ? "; " : "", v->isa, missing);
      if (n > 0 && (size_t)n < sizeof buf - len) len += (size_t)n;
      continue;
    }
    if (v->flags & QLLC_VF_MEASURED) { /* the rule table does not take it: only a measurement does */
      if (fits && !alt) { /* an ALT row is never named: the general row of its ISA after it speaks for both */
        int n = snprintf(buf + len, sizeof buf - len, "%s__%s only where measured faster (the JIT or --cpu native "
                         "on this CPU)", len ? "; " : "", v->isa);
        if (n > 0 && (size_t)n < sizeof buf - len) len += (size_t)n;
      }
      continue;
    }
    if (!fits) {
      misfit = 1;
      snprintf(buf + len, sizeof buf - len, "%s%s", len ? "; " : "", reason);
      break;
    }
    if (len) *why = qllc_arena_printf(c->p->arena, "cpu %s: %s", t->cpu ? t->cpu : "?", buf);
    c->pick_nhwc_only = nhwc_only;
    return v;
  }
  if (!any)
    snprintf(buf, sizeof buf, "no %sISA variant for %s", qllc_geom_depthwise(g) ? "depthwise " : "",
             t && t->arch ? t->arch : "this target");
  else if (t && !misfit && len) {
    char tmp[512];
    snprintf(tmp, sizeof tmp, "cpu %s: %s", t->cpu ? t->cpu : "?", buf);
    memcpy(buf, tmp, sizeof buf);
  }
  *why = qllc_arena_strdup(c->p->arena, buf);
  return NULL;
}

/* The function stem of a row: its name up to the ISA suffix ("qllc_k_conv2dc4_u8_i8_u8"). */
static size_t stem_len(const qllc_kvariant *v) {
  const char *e = strstr(v->name, "__");
  return e ? (size_t)(e - v->name) : strlen(v->name);
}

int qllc_lower_candidates(qllc_lower_ctx *c, const char *ref, const qllc_layer_geom *g, const qllc_kvariant *first,
                          const qllc_kvariant **out, int max) {
  const qllc_lower_target *t = c->target;
  int n = 0;
  if (!t || !ref || max <= 0 || (t->user_defines && t->user_defines(t->user_ctx, ref))) return 0;
  if (first) out[n++] = first;
  for (int i = 0; i < N_VARIANTS && n < max; i++) {
    const qllc_kvariant *v = &variants[i];
    if (v == first || strcmp(v->ref, ref) != 0 || (t->arch && strcmp(v->arch, t->arch) != 0)) continue;
    char reason[160];
    if (v->fits(g, reason, sizeof reason) != 1 || !qllc_lower_has_features(t->features, v->features, NULL, 0))
      continue;
    int dup = 0; /* the same function under another row, or a narrower copy of a kernel a candidate offers */
    for (int k = 0; k < n; k++) dup |= strcmp(out[k]->name, v->name) == 0;
    for (int k = 0; k < n && (v->flags & QLLC_VF_NARROW); k++)
      dup |= out[k]->layout == v->layout && stem_len(out[k]) == stem_len(v) &&
             strncmp(out[k]->name, v->name, stem_len(v)) == 0;
    if (!dup) out[n++] = v;
  }
  return n;
}
