/* tests/lower/registry_test.c: src/lower/registry.c and the rows of src/lower/kernels.def.
 *
 *  - every ISA variant row names a function the embedded bitcode of its architecture defines, whose
 *    reference kernel is defined too (a misspelt row, or a kernel file left out of the build, fails);
 *  - every row's name is <reference>__<isa> (the grammar docs/kernels.md promises);
 *  - qllc_lower_has_features: the last mention of a feature wins, missing ones are listed in order;
 *  - each x86_64 CPU that --cpu accepts implies the features LLVM gives it for the ones that matter
 *    to selection (spot checks of targets/x86_64/target.c against what is documented). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "llvmgen/llvmgen.h"
#include "lower/lower.h"

static void every_variant_is_defined(void **state) {
  (void)state;
  int n = qllc_lower_variant_count();
  assert_true(n >= 28); /* 8-bit: 2 ops x 4 type pairs x 3 ISAs; 16-bit: 4 */
  for (int i = 0; i < n; i++) {
    const char *ref = NULL, *arch = NULL;
    const char *name = qllc_lower_variant_name(i, &ref, &arch);
    assert_non_null(name);
    const qllc_target_desc *t = qllc_target_lookup(arch);
    assert_non_null(t);
    if (!qllc_codegen_has_kernel(t, name)) fail_msg("%s: registry row, but %s's bitcode does not define it", name, arch);
    if (!qllc_codegen_has_kernel(t, ref)) fail_msg("%s: reference %s not defined", name, ref);
    size_t rl = strlen(ref);
    assert_true(strncmp(name, ref, rl) == 0 && name[rl] == '_' && name[rl + 1] == '_' && name[rl + 2]);
  }
  assert_null(qllc_lower_variant_name(n, NULL, NULL));
}

static void features(void **state) {
  (void)state;
  char miss[128];
  assert_int_equal(qllc_lower_has_features("+avx2,+avx512f", "avx2", miss, sizeof miss), 1);
  assert_string_equal(miss, "");
  assert_int_equal(qllc_lower_has_features("+avx2,-avx2", "avx2", miss, sizeof miss), 0);
  assert_string_equal(miss, "avx2");
  assert_int_equal(qllc_lower_has_features("-avx2,+avx2", "avx2", miss, sizeof miss), 1);
  assert_int_equal(qllc_lower_has_features("+avx2", "avx2,avxvnni,avx512f", miss, sizeof miss), 0);
  assert_string_equal(miss, "avxvnni, avx512f");
  /* a prefix is not the feature: +avx512vnni does not give avx512v */
  assert_int_equal(qllc_lower_has_features("+avx512vnni", "avx512v", miss, sizeof miss), 0);
  assert_int_equal(qllc_lower_has_features("", "avx2", miss, sizeof miss), 0);
  assert_int_equal(qllc_lower_has_features(NULL, "avx2", NULL, 0), 0);
  assert_int_equal(qllc_lower_has_features("", "", miss, sizeof miss), 1);
}

/* The kernel features --cpu implies, through the public resolution path. */
static const char *kfeat(const char *cpu, const char *feats) {
  qllc_options o;
  qllc_options_init(&o);
  o.cpu = cpu;
  o.features = feats;
  qllc_codegen_opts cg;
  qllc_diag d = {0};
  assert_int_equal(qllc_codegen_resolve(&o, 0, &cg, &d), QLLC_OK);
  return cg.kernel_features;
}

static void cpu_features(void **state) {
  (void)state;
  const char *vnni = "avx512f,avx512bw,avx512vl,avx512dq,avx512vnni";
  assert_true(qllc_lower_has_features(kfeat("znver4", NULL), vnni, NULL, 0));
  assert_false(qllc_lower_has_features(kfeat("znver4", NULL), "avxvnni", NULL, 0));
  assert_true(qllc_lower_has_features(kfeat("znver5", NULL), "avxvnni", NULL, 0));
  assert_true(qllc_lower_has_features(kfeat("sapphirerapids", NULL), vnni, NULL, 0));
  assert_true(qllc_lower_has_features(kfeat("icelake-server", NULL), vnni, NULL, 0));
  assert_false(qllc_lower_has_features(kfeat("skylake-avx512", NULL), "avx512vnni", NULL, 0));
  assert_true(qllc_lower_has_features(kfeat("alderlake", NULL), "avx2,avxvnni", NULL, 0));
  assert_false(qllc_lower_has_features(kfeat("alderlake", NULL), "avx512f", NULL, 0));
  assert_true(qllc_lower_has_features(kfeat("haswell", NULL), "avx2", NULL, 0));
  assert_false(qllc_lower_has_features(kfeat("x86-64-v2", NULL), "avx2", NULL, 0));
  assert_false(qllc_lower_has_features(kfeat("x86-64", NULL), "avx2", NULL, 0));
  /* --features after the CPU's own */
  assert_false(qllc_lower_has_features(kfeat("znver4", "-avx512vnni"), vnni, NULL, 0));
  assert_true(qllc_lower_has_features(kfeat("x86-64", "+avx2,+avxvnni"), "avx2,avxvnni", NULL, 0));
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(every_variant_is_defined),
      cmocka_unit_test(features),
      cmocka_unit_test(cpu_features),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
