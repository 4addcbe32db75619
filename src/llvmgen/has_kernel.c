/* src/llvmgen/has_kernel.c: which kernels a target's embedded library defines.
 *
 * The quantizer asks, per node, whether the target can run it at a precision (src/quant/quant.h,
 * qllc_kernel_query); the facade turns the question into a kernel name and asks here. The embedded
 * bitcode is read lazily (function bodies are never materialised) once per target, its defined
 * function names sorted, and kept for the life of the process (a few kilobytes). A mutex makes the
 * first look-up safe when several threads compile at once.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include <llvm-c/BitReader.h>
#include <llvm-c/Core.h>

#include "llvmgen/llvmgen.h"

typedef struct kernel_set {
  const qllc_target_desc *target;
  int n;
  char **names; /* sorted */
} kernel_set;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static kernel_set sets[8];
static int n_sets;

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* Reads the names of t's defined functions; 0 on success. */
static int load_set(const qllc_target_desc *t, kernel_set *s) {
  memset(s, 0, sizeof *s);
  s->target = t;
  if (!t->bitcode || !t->bitcode_size || !*t->bitcode_size) return 0; /* an empty library */
  LLVMContextRef ctx = LLVMContextCreate();
  LLVMMemoryBufferRef mb =
      LLVMCreateMemoryBufferWithMemoryRangeCopy((const char *)t->bitcode, *t->bitcode_size, "qllc_kernels");
  LLVMModuleRef m = NULL;
  int rc = -1;
  if (!LLVMGetBitcodeModuleInContext2(ctx, mb, &m)) { /* takes mb */
    int cap = 0;
    rc = 0;
    for (LLVMValueRef f = LLVMGetFirstFunction(m); f && rc == 0; f = LLVMGetNextFunction(f)) {
      /* lazily loaded bodies are "materializable", which LLVMIsDeclaration reports as defined */
      if (LLVMIsDeclaration(f)) continue;
      size_t len = 0;
      const char *name = LLVMGetValueName2(f, &len);
      if (!name || !len) continue;
      if (s->n == cap) {
        cap = cap ? 2 * cap : 256;
        char **v = realloc(s->names, (size_t)cap * sizeof *v);
        if (!v) {
          rc = -1;
          break;
        }
        s->names = v;
      }
      char *c = malloc(len + 1);
      if (!c) {
        rc = -1;
        break;
      }
      memcpy(c, name, len);
      c[len] = '\0';
      s->names[s->n++] = c;
    }
    LLVMDisposeModule(m);
  }
  LLVMContextDispose(ctx);
  if (rc == 0 && s->n > 1) qsort(s->names, (size_t)s->n, sizeof *s->names, cmp_str);
  return rc;
}

int qllc_codegen_has_kernel(const qllc_target_desc *t, const char *name) {
  if (!t || !name) return 0;
  pthread_mutex_lock(&lock);
  kernel_set *s = NULL;
  for (int i = 0; i < n_sets; i++)
    if (sets[i].target == t) s = &sets[i];
  if (!s && n_sets < (int)(sizeof sets / sizeof sets[0]) && load_set(t, &sets[n_sets]) == 0) s = &sets[n_sets++];
  pthread_mutex_unlock(&lock);
  if (!s) return 0;
  return bsearch(&name, s->names, (size_t)s->n, sizeof *s->names, cmp_str) != NULL;
}
