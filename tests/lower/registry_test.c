/* tests/lower/registry_test.c: src/lower/registry.c and the rows of src/lower/kernels.def.
 *
 *  - every ISA variant row names a function the embedded bitcode of its architecture defines, whose
 *    reference kernel is defined too (a misspelt row, or a kernel file left out of the build, fails);
 *  - every row's name is <reference>__<isa> (the grammar docs/kernels.md promises);
 *  - every reference row's name is spelt from its stem and element columns, and a variant takes its
 *    reference's argument roles plus SCRATCH;
 *  - the generic emitter orders a call's arguments by the kernel's row: each argument of a lowered
 *    instruction holds the value of the role the row lists at its position (tests/lower/lower_test.c
 *    checks the same calls against the C declarations' order, so a row out of order fails there);
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
#include <math.h>

#include "llvmgen/llvmgen.h"
#include "lower/lower.h"
#include "lower_test_util.h"

static void rows_are_spelt_from_columns(void **state) {
  (void)state;
  int n = qllc_lower_kernel_count();
  assert_true(n > 100);
  for (int i = 0; i < n; i++) {
    const char *stem, *in, *w, *out, *name = qllc_lower_kernel_name(i, &stem, &in, &w, &out);
    char want[160];
    if (strcmp(w, "none") == 0) snprintf(want, sizeof want, "qllc_k_%s_%s_%s", stem, in, out);
    else snprintf(want, sizeof want, "qllc_k_%s_%s_%s_%s", stem, in, w, out);
    if (strcmp(name, want) != 0) fail_msg("row %d: %s, but its columns spell %s", i, name, want);
    const char *roles[40];
    int k = qllc_lower_kernel_roles(name, roles, 40);
    if (k < 3 || strcmp(roles[0], "Y") != 0) fail_msg("%s: %d roles, the first %s", name, k, k > 0 ? roles[0] : "-");
  }
  assert_null(qllc_lower_kernel_name(n, NULL, NULL, NULL, NULL));
  /* a variant: its reference's roles, then SCRATCH (the first row without the NHWC layouts after it) */
  const char *ref = NULL, *vname = qllc_lower_variant_name(0, &ref, NULL);
  for (int i = 1; vname && strstr(vname, "conv2dcl"); i++) vname = qllc_lower_variant_name(i, &ref, NULL);
  const char *rr[40], *vr[40];
  int kr = qllc_lower_kernel_roles(ref, rr, 40), kv = qllc_lower_kernel_roles(vname, vr, 40);
  assert_int_equal(kv, kr + 1);
  for (int i = 0; i < kr; i++) assert_string_equal(rr[i], vr[i]);
  assert_string_equal(vr[kr], "SCRATCH");
  assert_int_equal(qllc_lower_kernel_roles("qllc_k_nothing_f32_f32", rr, 40), -1);
}

/* A float Conv whose shapes all differ, lowered; each argument checked against the value of the role
 * the row puts at its position. */
static void emitter_orders_by_row(void **state) {
  (void)state;
  qllc_graph *g = qllc_graph_new(NULL);
  const int64_t xd[] = {2, 3, 9, 10}, wd[] = {6, 3, 2, 4}, bd[] = {6}, yd[] = {2, 6, 4, 3};
  qllc_value *x = qllc_value_new(g, "x", QLLC_ELEM_F32, 4, xd);
  float wdata[6 * 3 * 2 * 4] = {0}, bdata[6] = {0};
  qllc_value *w = qllc_const_new(g, "w", QLLC_ELEM_F32, 4, wd, wdata);
  qllc_value *b = qllc_const_new(g, "b", QLLC_ELEM_F32, 1, bd, bdata);
  qllc_value *y = qllc_value_new(g, "y", QLLC_ELEM_F32, 4, yd);
  qllc_graph_add_input(g, x);
  qllc_graph_add_output(g, y);
  qllc_node *n = node(g, QLLC_OP_CONV, "conv", 3, (qllc_value *[]){x, w, b}, y);
  qllc_node_set_attr_ints(g, n, "strides", 2, (const int64_t[]){2, 3});
  qllc_program *p = lower_ok(g);
  assert_int_equal(p->n_instrs, 1);
  const qllc_instr *in = &p->instrs[0];
  static const struct {
    const char *role;
    int64_t v;
  } ints[] = {{"DIM_N", 2}, {"DIM_C", 3},    {"DIM_H", 9},    {"DIM_W", 10},  {"DIM_M", 6},    {"OH", 4},
              {"OW", 3},    {"KH", 2},       {"KW", 4},       {"STRIDE_H", 2}, {"STRIDE_W", 3}, {"PAD_TOP", 0},
              {"PAD_LEFT", 0}, {"DIL_H", 1}, {"DIL_W", 1},    {"GROUP", 1}};
  const char *roles[40];
  int k = qllc_lower_kernel_roles(in->kernel, roles, 40);
  assert_int_equal(k, in->n_args);
  int checked = 0;
  for (int i = 0; i < k; i++) {
    const qllc_arg *a = &in->args[i];
    if (!strcmp(roles[i], "Y")) assert_ptr_equal(a->buf, p->outputs[0].buf);
    else if (!strcmp(roles[i], "X")) assert_ptr_equal(a->buf, p->inputs[0].buf);
    else if (!strcmp(roles[i], "W")) assert_ptr_equal(a->buf->data, w->data);
    else if (!strcmp(roles[i], "BIAS")) assert_ptr_equal(a->buf->data, b->data);
    else if (!strcmp(roles[i], "ACT_LO")) assert_true(a->kind == QLLC_ARG_FLOAT && isinf(a->f) && a->f < 0);
    else if (!strcmp(roles[i], "ACT_HI")) assert_true(a->kind == QLLC_ARG_FLOAT && isinf(a->f) && a->f > 0);
    else {
      size_t j = 0;
      while (j < sizeof ints / sizeof ints[0] && strcmp(ints[j].role, roles[i])) j++;
      if (j == sizeof ints / sizeof ints[0]) fail_msg("%s: unexpected role %s", in->kernel, roles[i]);
      if (a->kind != QLLC_ARG_INT || a->i != ints[j].v)
        fail_msg("%s argument %d (%s): kind %d value %lld, want %lld", in->kernel, i, roles[i], (int)a->kind,
                 (long long)a->i, (long long)ints[j].v);
    }
    checked++;
  }
  assert_int_equal(checked, 22);
  qllc_program_free(p);
  qllc_graph_free(g);
}

static void every_variant_is_defined(void **state) {
  (void)state;
  int n = qllc_lower_variant_count();
  assert_true(n >= 32); /* 8-bit: 2 ops x 4 type pairs x 3 ISAs, depthwise: 4; 16-bit: 4 */
  for (int i = 0; i < n; i++) {
    const char *ref = NULL, *arch = NULL;
    const char *name = qllc_lower_variant_name(i, &ref, &arch);
    assert_non_null(name);
    const qllc_target_desc *t = qllc_target_lookup(arch);
    assert_non_null(t);
    if (!qllc_codegen_has_kernel(t, name)) fail_msg("%s: registry row, but %s's bitcode does not define it", name, arch);
    if (!qllc_codegen_has_kernel(t, ref)) fail_msg("%s: reference %s not defined", name, ref);
    /* ref__isa, or for a variant of one class of shapes the class in its op: depthwise
       qllc_k_conv2d_i8_i8_i8 -> qllc_k_dwconv2d_i8_i8_i8__isa, direct over channels by 4 ->
       qllc_k_conv2dc4_i8_i8_i8__isa, direct with channel lanes -> qllc_k_conv2dcl_i8_i8_i8__isa, 16-bit
       direct over channel pairs -> qllc_k_conv2dc2_i16_i8_i16__isa, float direct of stride 1 ->
       qllc_k_conv2ds1_f32_f32_f32__isa, and transposed -> qllc_k_conv2dt1_f32_f32_f32__isa */
    char want[160];
    if (strncmp(name, "qllc_k_dw", 9) == 0) snprintf(want, sizeof want, "qllc_k_dw%s", ref + 7);
    else if ((strncmp(name, "qllc_k_conv2dc4_", 16) == 0 || strncmp(name, "qllc_k_conv2dcl_", 16) == 0 ||
              strncmp(name, "qllc_k_conv2dc2_", 16) == 0 || strncmp(name, "qllc_k_conv2ds1_", 16) == 0 ||
              strncmp(name, "qllc_k_conv2dt1_", 16) == 0) &&
             strncmp(ref, "qllc_k_conv2d_", 14) == 0)
      snprintf(want, sizeof want, "%.16s%s", name, ref + 14);
    else snprintf(want, sizeof want, "%s", ref);
    size_t rl = strlen(want);
    if (!(strncmp(name, want, rl) == 0 && name[rl] == '_' && name[rl + 1] == '_' && name[rl + 2]))
      fail_msg("%s: not %s__<isa>", name, want);
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
  assert_int_equal(qllc_codegen_resolve(o.target, o.cpu, o.features, 0, &cg, &d), QLLC_OK);
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
      cmocka_unit_test(rows_are_spelt_from_columns),
      cmocka_unit_test(emitter_orders_by_row),
      cmocka_unit_test(features),
      cmocka_unit_test(cpu_features),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
