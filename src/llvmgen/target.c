/* src/llvmgen/target.c: the table of targets qllc can compile for.
 *
 * The descriptions themselves (triple, CPUs, features, data layout, embedded kernel bitcode) live in
 * targets/<arch>/target.c; this file only knows which ones exist, in --target order. */
#include <string.h>

#include "llvmgen/target.h"

static const qllc_target_desc *const targets[] = {&qllc_target_x86_64, &qllc_target_aarch64};

const qllc_target_desc *qllc_target_lookup(const char *name) {
  if (!name) return NULL;
  for (size_t i = 0; i < sizeof targets / sizeof targets[0]; i++)
    if (strcmp(targets[i]->name, name) == 0) return targets[i];
  return NULL;
}
