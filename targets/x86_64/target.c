/* targets/x86_64/target.c: the x86_64 target description (data only; no logic lives here).
 *
 * default_cpu is "x86-64" (the baseline every x86_64 Linux machine runs: SSE2), so that a bundle
 * compiled without --cpu runs anywhere, as gcc's default does. Ask for more with --cpu (e.g.
 * x86-64-v3 for AVX2/FMA) or --cpu native. The JIT uses the host CPU, not this default.
 * data_layout is exactly what clang-19 emits for the triple, so the kernel bitcode links without a
 * mismatch warning (tests/libjit/bitcode_symbols_test.sh checks it). */
#include "llvmgen/target.h"

extern const unsigned char qllc_bitcode_x86_64[]; /* gen/bitcode_x86_64.S (libjit/bitcode/bitcode.cmake) */
extern const size_t qllc_bitcode_x86_64_size;

static const char *const cpus[] = {
  "x86-64", "x86-64-v2", "x86-64-v3", "x86-64-v4", "haswell", "skylake", "skylake-avx512", "cascadelake",
  "icelake-server", "sapphirerapids", "graniterapids", "alderlake", "znver3", "znver4", "znver5", "native", NULL,
};

/* What each CPU implies for kernel selection (src/lower/kernels.def names the features a variant needs),
 * as LLVM 19's CPU definitions (X86.td) have them. "native" is the host's own feature list. */
#define V3 "+avx2"
#define V4 V3 ",+avx512f,+avx512bw,+avx512vl,+avx512dq"
static const char *const cpu_features[] = {
  "x86-64-v3", V3, "haswell", V3, "skylake", V3, "znver3", V3,
  "alderlake", V3 ",+avxvnni",
  "x86-64-v4", V4, "skylake-avx512", V4,
  "cascadelake", V4 ",+avx512vnni", "icelake-server", V4 ",+avx512vnni,+avx512vbmi",
  "znver4", V4 ",+avx512vnni,+avx512vbmi", "znver5", V4 ",+avx512vnni,+avx512vbmi,+avxvnni",
  "sapphirerapids", V4 ",+avx512vnni,+avx512vbmi,+avxvnni,+amx-tile,+amx-int8",
  "graniterapids", V4 ",+avx512vnni,+avx512vbmi,+avxvnni,+amx-tile,+amx-int8",
  NULL,
};
#undef V3
#undef V4

/* LLVM's own feature names (llc-19 -mtriple=x86_64-unknown-linux-gnu -mattr=help). */
static const char *const features[] = {
  "sse2", "sse3", "ssse3", "sse4.1", "sse4.2", "popcnt", "avx", "avx2", "fma", "f16c", "bmi", "bmi2",
  "lzcnt", "movbe", "avx512f", "avx512cd", "avx512dq", "avx512bw", "avx512vl", "avx512vnni",
  "avx512bf16", "avx512fp16", "avx512ifma", "avx512vbmi", "avxvnni", "avxvnniint8", "amx-tile",
  "amx-int8", "amx-bf16", NULL,
};

const qllc_target_desc qllc_target_x86_64 = {
  .name = "x86_64",
  .triple = "x86_64-unknown-linux-gnu",
  .data_layout = "e-m:e-p270:32:32-p271:32:32-p272:64:64-i64:64-i128:128-f80:128-n8:16:32:64-S128",
  .default_cpu = "x86-64",
  .cpus = cpus,
  .features = features,
  .cpu_features = cpu_features,
  .bitcode = qllc_bitcode_x86_64,
  .bitcode_size = &qllc_bitcode_x86_64_size,
};
