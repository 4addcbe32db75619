/* targets/aarch64/target.c: the aarch64 target description (data only; no logic lives here).
 *
 * default_cpu is "generic" (Armv8-A with NEON), which runs on every 64-bit Arm Linux board; name the
 * core with --cpu (cortex-a76, neoverse-n1, ...) to let LLVM schedule and use dotprod/i8mm, and to
 * select the kernel variants the core runs (cpu_features below).
 * data_layout is exactly what clang-19 emits for the triple (checked by
 * tests/libjit/bitcode_symbols_test.sh). */
#include "llvmgen/target.h"

extern const unsigned char qllc_bitcode_aarch64[]; /* gen/bitcode_aarch64.S (libjit/bitcode/bitcode.cmake) */
extern const size_t qllc_bitcode_aarch64_size;

static const char *const cpus[] = {
  "generic", "cortex-a53", "cortex-a55", "cortex-a72", "cortex-a76", "cortex-a78", "cortex-a710", "neoverse-n1",
  "neoverse-v1", "neoverse-n2", "neoverse-v2", "apple-m1", "apple-m2", NULL,
};

/* What each CPU implies for kernel selection (src/lower/kernels.def names the features a variant needs),
 * as LLVM 19's CPU definitions have them (clang-19 -mcpu=X -dM -E: __ARM_FEATURE_DOTPROD,
 * __ARM_FEATURE_MATMUL_INT8): every AArch64 CPU has NEON; dotprod from Cortex-A55/A76 and Neoverse N1
 * on; i8mm on the Armv8.6+ cores (Neoverse V1, N2, V2, Cortex-A710, Apple M2). "native" is the host's
 * own feature list. docs/targets.md has the resulting variant per CPU. */
#define NEON "+neon"
#define DOT NEON ",+dotprod"
#define MM DOT ",+i8mm"
static const char *const cpu_features[] = {
  "generic", NEON, "cortex-a53", NEON, "cortex-a72", NEON,
  "cortex-a55", DOT, "cortex-a76", DOT, "cortex-a78", DOT, "neoverse-n1", DOT, "apple-m1", DOT,
  "neoverse-v1", MM, "neoverse-n2", MM, "neoverse-v2", MM, "cortex-a710", MM, "apple-m2", MM,
  NULL,
};
#undef NEON
#undef DOT
#undef MM

/* LLVM's own feature names (llc-19 -mtriple=aarch64-unknown-linux-gnu -mattr=help): half-precision
 * arithmetic is "fullfp16" there, not "fp16". */
static const char *const features[] = {
  "neon", "fp-armv8", "crc", "lse", "rcpc", "dotprod", "i8mm", "fullfp16", "fp16fml", "bf16", "sve",
  "sve2", "sme", "aes", "sha2", "sha3", NULL,
};

const qllc_target_desc qllc_target_aarch64 = {
  .name = "aarch64",
  .triple = "aarch64-unknown-linux-gnu",
  .data_layout = "e-m:e-i8:8:32-i16:16:32-i64:64-i128:128-n32:64-S128-Fn32",
  .default_cpu = "generic",
  .cpus = cpus,
  .features = features,
  .cpu_features = cpu_features,
  .bitcode = qllc_bitcode_aarch64,
  .bitcode_size = &qllc_bitcode_aarch64_size,
};
