/* src/llvmgen/resolve.c: public target options -> validated codegen options.
 *
 * Everything a user can type (--target, --cpu, --features) is checked here, before LLVM sees it:
 * LLVM itself only prints a warning to stderr for an unknown CPU or feature and carries on, which
 * would hide a typo in a bundle for an embedded board. An error lists the valid values.
 *
 * Rules:
 *   target   NULL -> the host's architecture for the JIT (host = 1), else "x86_64".
 *   cpu      NULL -> the host CPU (with the host's features) for the JIT, else the target's default;
 *            "native" -> the host CPU and features (only when the target is the host's architecture);
 *            anything else must be in the target description's list.
 *   features "+a,-b,...": each name must be in the target description's list; for the JIT with the
 *            host CPU they are appended to the host's own feature string (so "-avx512f" works).
 *
 * Lifetime: the resolved cpu and feature strings are interned for the life of the process (a small
 * mutex-protected list that only grows with distinct strings), so a qllc_codegen_opts may be copied
 * and kept freely. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include <llvm-c/Core.h>
#include <llvm-c/TargetMachine.h>

#include "llvmgen/llvmgen.h"

typedef struct interned {
  struct interned *next;
  char s[];
} interned;

static pthread_mutex_t intern_lock = PTHREAD_MUTEX_INITIALIZER;
static interned *intern_list;

/* Returns a process-lifetime copy of s (NULL on out of memory). */
static const char *intern(const char *s) {
  const char *r = NULL;
  pthread_mutex_lock(&intern_lock);
  for (interned *i = intern_list; i; i = i->next)
    if (strcmp(i->s, s) == 0) {
      r = i->s;
      break;
    }
  if (!r) {
    size_t n = strlen(s) + 1;
    interned *i = malloc(sizeof *i + n);
    if (i) {
      memcpy(i->s, s, n);
      i->next = intern_list;
      intern_list = i;
      r = i->s;
    }
  }
  pthread_mutex_unlock(&intern_lock);
  return r;
}

/* The architecture part of LLVM's default (host) triple: "x86_64", "aarch64", ... */
static void host_arch(char *buf, size_t size) {
  char *t = LLVMGetDefaultTargetTriple();
  size_t n = strcspn(t, "-");
  if (n >= size) n = size - 1;
  memcpy(buf, t, n);
  buf[n] = 0;
  LLVMDisposeMessage(t);
  if (strcmp(buf, "arm64") == 0) strcpy(buf, "aarch64");
}

/* "a, b, c" from a NULL-terminated list, into buf. */
static const char *join(const char *const *list, char *buf, size_t size) {
  size_t len = 0;
  buf[0] = 0;
  for (int i = 0; list && list[i]; i++) {
    int n = snprintf(buf + len, size - len, "%s%s", i ? ", " : "", list[i]);
    if (n < 0 || (size_t)n >= size - len) break;
    len += (size_t)n;
  }
  return buf;
}

static int in_list(const char *const *list, const char *s, size_t n) {
  for (int i = 0; list && list[i]; i++)
    if (strlen(list[i]) == n && strncmp(list[i], s, n) == 0) return 1;
  return 0;
}

/* Validates a "+a,-b" string against the target's feature names and appends the normalised form
 * (no empty items, no spaces) to out. */
static qllc_status check_features(const qllc_target_desc *t, const char *f, char *out, size_t size,
                                  qllc_diag *diag) {
  char valid[4096];
  const char *p = f;
  while (*p) {
    while (*p == ' ' || *p == ',') p++;
    if (!*p) break;
    size_t n = strcspn(p, ",");
    while (n && p[n - 1] == ' ') n--;
    if (p[0] != '+' && p[0] != '-')
      return qllc_fail(diag, QLLC_ERR_INVALID, NULL,
                       "feature '%.*s' must start with '+' or '-' (e.g. +%s); valid features for %s: %s",
                       (int)n, p, t->features && t->features[0] ? t->features[0] : "name", t->name,
                       join(t->features, valid, sizeof valid));
    if (!in_list(t->features, p + 1, n - 1))
      return qllc_fail(diag, QLLC_ERR_INVALID, NULL, "unknown feature '%.*s' for target %s; valid features: %s",
                       (int)(n - 1), p + 1, t->name, join(t->features, valid, sizeof valid));
    size_t len = strlen(out);
    if (len + n + 2 > size) return qllc_fail(diag, QLLC_ERR_INVALID, NULL, "feature string too long");
    if (len) out[len++] = ',';
    memcpy(out + len, p, n);
    out[len + n] = 0;
    p += n;
    while (*p && *p != ',') p++;
  }
  return QLLC_OK;
}

qllc_status qllc_codegen_resolve(const char *target, const char *cpu_name, const char *features, int host,
                                 qllc_codegen_opts *out, qllc_diag *diag) {
  char harch[32], valid[4096];
  host_arch(harch, sizeof harch);
  memset(out, 0, sizeof *out);

  const char *tname = target;
  if (!tname || !*tname) tname = host && qllc_target_lookup(harch) ? harch : "x86_64";
  const qllc_target_desc *t = qllc_target_lookup(tname);
  if (!t) return qllc_fail(diag, QLLC_ERR_INVALID, NULL, "unknown target '%s' (valid targets: x86_64, aarch64)", tname);
  if (host && strcmp(t->name, harch) != 0)
    return qllc_fail(diag, QLLC_ERR_INVALID, NULL,
                     "the JIT runs on this machine (%s); target '%s' can only be compiled to a bundle", harch,
                     t->name);

  int use_host = 0;
  const char *cpu = cpu_name;
  char *host_cpu = NULL;
  if (cpu && strcmp(cpu, "native") == 0) {
    if (strcmp(t->name, harch) != 0)
      return qllc_fail(diag, QLLC_ERR_INVALID, NULL, "--cpu native needs an %s host (this machine is %s)", t->name,
                       harch);
    use_host = 1;
  } else if (!cpu || !*cpu) {
    if (host) use_host = 1;
    else cpu = t->default_cpu;
  } else if (!in_list(t->cpus, cpu, strlen(cpu))) {
    return qllc_fail(diag, QLLC_ERR_INVALID, NULL, "unknown CPU '%s' for target %s; valid CPUs: %s", cpu,
                     t->name, join(t->cpus, valid, sizeof valid));
  }

  char feats[8192] = "";
  if (use_host) {
    host_cpu = LLVMGetHostCPUName();
    char *hf = LLVMGetHostCPUFeatures();
    snprintf(feats, sizeof feats, "%s", hf ? hf : "");
    LLVMDisposeMessage(hf);
    cpu = host_cpu;
  }
  qllc_status st = QLLC_OK;
  char kfeats[8192] = "";
  if (use_host) snprintf(kfeats, sizeof kfeats, "%s", feats);
  else
    for (int i = 0; t->cpu_features && t->cpu_features[i]; i += 2)
      if (strcmp(t->cpu_features[i], cpu) == 0) snprintf(kfeats, sizeof kfeats, "%s", t->cpu_features[i + 1]);
  if (features) st = check_features(t, features, feats, sizeof feats, diag);
  if (st == QLLC_OK && features) st = check_features(t, features, kfeats, sizeof kfeats, diag);
  if (st == QLLC_OK) {
    out->target = t;
    out->cpu = intern(cpu);
    out->features = intern(feats);
    out->kernel_features = intern(kfeats);
    if (!out->cpu || !out->features || !out->kernel_features)
      st = qllc_fail(diag, QLLC_ERR_NOMEM, NULL, "out of memory");
  }
  if (host_cpu) LLVMDisposeMessage(host_cpu);
  if (st != QLLC_OK) return st;
  out->reloc_pic = 1;
  out->weights_in_object = 1;
  return QLLC_OK;
}
