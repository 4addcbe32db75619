/* src/llvmgen/target.h: what a target description (targets/<arch>/target.c) provides. */
#ifndef QLLC_TARGET_H
#define QLLC_TARGET_H

#include <stddef.h>

typedef struct qllc_target_desc {
  const char *name;             /* "x86_64", "aarch64" (the --target value) */
  const char *triple;           /* e.g. "x86_64-unknown-linux-gnu" */
  const char *data_layout;      /* must equal the kernel bitcode's */
  const char *default_cpu;      /* for bundles when --cpu is absent */
  const char *const *cpus;      /* accepted --cpu values, NULL-terminated */
  const char *const *features;  /* accepted feature names (without +/-), NULL-terminated */
  const char *const *cpu_features; /* pairs: a --cpu name, the features it implies that kernel selection
                                      reads ("+avx2,+avx512vnni"), ...; NULL-terminated. A CPU not listed
                                      implies none (the reference kernels) */
  const unsigned char *bitcode; /* the embedded kernel library for this target */
  const size_t *bitcode_size;
} qllc_target_desc;

extern const qllc_target_desc qllc_target_x86_64;
extern const qllc_target_desc qllc_target_aarch64;

/* By --target name; NULL when unknown. */
const qllc_target_desc *qllc_target_lookup(const char *name);

#endif
