/* src/lower/registry.c: the kernel registry (kernels.def) expanded, and variant selection.
 *
 * Selection (qllc_lower_pick) happens per fused layer while lowering, before its weights are written:
 * among the registry's variants of the layer's reference kernel for the target's architecture, the
 * first (fastest) whose features the target CPU has all of, unless the layer's shape is one the
 * variants do not pay for (the caller says so). The reason the choice fell where it did is kept on the
 * instruction for the per-node report: the CPU features missing for the faster variants, or the shape.
 */
#include <stdio.h>
#include <string.h>

#include "lower/lower_internal.h"
#include "lower/pack.h"

/* The scalar declarations the rows are checked against (a name kernels_q.h does not declare does not
 * compile). Only the declarations are used, never the symbols. */
#include "../../libjit/bitcode/kernels_q.h"

static const char *const scalar_kernels[] = {
#define QKERNEL(fn) (sizeof(&fn) ? #fn : NULL),
#include "lower/kernels.def"
};

static const qllc_kvariant variants[] = {
#define QVARIANT(fn, ref, arch, isa, features, layout, esize) {#fn, #ref, arch, isa, features, layout, esize},
#include "lower/kernels.def"
};
#define N_VARIANTS ((int)(sizeof variants / sizeof variants[0]))

int qllc_lower_q_known(const char *kernel) {
  for (size_t i = 0; i < sizeof scalar_kernels / sizeof scalar_kernels[0]; i++)
    if (strcmp(scalar_kernels[i], kernel) == 0) return 1;
  for (int i = 0; i < N_VARIANTS; i++)
    if (strcmp(variants[i].name, kernel) == 0) return 1;
  return 0;
}

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

const qllc_kvariant *qllc_lower_pick(qllc_lower_ctx *c, const char *ref, const char *shape_reason,
                                     const char **why) {
  *why = NULL;
  const qllc_lower_target *t = c->target;
  char buf[512] = "";
  size_t len = 0;
  int any = 0;
  for (int i = 0; i < N_VARIANTS; i++) {
    const qllc_kvariant *v = &variants[i];
    if (strcmp(v->ref, ref) != 0) continue;
    if (t && t->arch && strcmp(v->arch, t->arch) != 0) continue;
    any = 1;
    if (!t) {
      snprintf(buf, sizeof buf, "no target CPU given: the reference kernel");
      break;
    }
    char missing[256];
    if (!qllc_lower_has_features(t->features, v->features, missing, sizeof missing)) {
      int n = snprintf(buf + len, sizeof buf - len, "%s__%s needs %s", len ? "; " : "", v->isa, missing);
      if (n > 0 && (size_t)n < sizeof buf - len) len += (size_t)n;
      continue;
    }
    if (shape_reason) {
      snprintf(buf + len, sizeof buf - len, "%s%s", len ? "; " : "", shape_reason);
      break;
    }
    if (len) *why = qllc_arena_printf(c->p->arena, "cpu %s: %s", t->cpu ? t->cpu : "?", buf);
    return v;
  }
  if (!any) snprintf(buf, sizeof buf, "no ISA variant for %s", t && t->arch ? t->arch : "this target");
  else if (t && !shape_reason && len) {
    char tmp[512];
    snprintf(tmp, sizeof tmp, "cpu %s: %s", t->cpu ? t->cpu : "?", buf);
    memcpy(buf, tmp, sizeof buf);
  }
  *why = qllc_arena_strdup(c->p->arena, buf);
  return NULL;
}
