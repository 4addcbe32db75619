/* tests/llvmgen/codegen_test.c: src/llvmgen codegen.c, jit.c and resolve.c on a hand-made program
 * (tests/llvmgen/prog.h) calling the real float kernel library. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "prog.h"

static qllc_codegen_opts host_opts(qllc_diag *d) {
  qllc_options o;
  qllc_options_init(&o);
  qllc_codegen_opts cg;
  assert_int_equal(qllc_codegen_resolve(o.target, o.cpu, o.features, 1, &cg, d), QLLC_OK);
  cg.entry_name = "testnet";
  return cg;
}

static void run_and_check(qllc_entry_fn fn, const uint8_t *constw) {
  uint8_t *mut = aligned_alloc(64, 192), *act = aligned_alloc(64, 64);
  memset(mut, 0xAB, 192);
  float x[8] = {-3.0f, 1.0f, 2.0f, 0.25f, -7.5f, 5.0f, -1.0f, -20.0f}, y[8], z[4];
  memcpy(mut, x, sizeof x);
  assert_int_equal(fn(constw, mut, act), 0);
  test_prog_expect(x, y, z);
  assert_memory_equal(mut + 64, y, sizeof y);
  assert_memory_equal(mut + 128, z, sizeof z);
  free(mut);
  free(act);
}

static void test_jit_runs(void **state) {
  test_prog t;
  test_prog_init(&t);
  qllc_diag d = {0};
  qllc_codegen_opts cg = host_opts(&d);
  qllc_jit_code *code = NULL;
  qllc_entry_fn fn = NULL;
  qllc_status st = qllc_codegen_jit(&t.p, &cg, &code, &fn, &d);
  if (st != QLLC_OK) fail_msg("%s", d.message);
  run_and_check(fn, NULL);
  /* a second, independent JIT in the same process */
  qllc_jit_code *code2 = NULL;
  qllc_entry_fn fn2 = NULL;
  assert_int_equal(qllc_codegen_jit(&t.p, &cg, &code2, &fn2, &d), QLLC_OK);
  qllc_jit_code_free(code);
  run_and_check(fn2, NULL);
  qllc_jit_code_free(code2);
}

/* After O3 every kernel is inlined into the entry and specialised: no qllc_k_ symbol is left. */
static void test_specialised(void **state) {
  test_prog t;
  test_prog_init(&t);
  qllc_diag d = {0};
  qllc_codegen_opts cg = host_opts(&d);
  for (int wio = 0; wio < 2; wio++) {
    cg.weights_in_object = wio;
    char *ir = NULL;
    if (qllc_codegen_ir_text(&t.p, &cg, &ir, &d) != QLLC_OK) fail_msg("%s", d.message);
    if (strstr(ir, "@qllc_k_")) {
      FILE *f = fopen("llvmgen_specialised_fail.ll", "w");
      if (f) fputs(ir, f), fclose(f);
      fail_msg("a kernel is left in the optimised module (see llvmgen_specialised_fail.ll)");
    }
    assert_non_null(strstr(ir, "@testnet(ptr"));
    int defines = 0; /* nothing but the entry is left */
    for (const char *q = ir; (q = strstr(q, "\ndefine ")); q++) defines++;
    assert_int_equal(defines, 1);
    assert_non_null(strstr(ir, "@testnet_inputs"));
    assert_non_null(strstr(ir, "@testnet_outputs"));
    /* the CPU and features chosen by resolve are on the entry */
    char want[256];
    snprintf(want, sizeof want, "\"target-cpu\"=\"%s\"", cg.cpu);
    assert_non_null(strstr(ir, want));
    free(ir);
  }
}

/* quick (the precision search's runs): the kernels stay functions that the entry calls, and the
 * program computes the same outputs. */
static void test_quick(void **state) {
  (void)state;
  test_prog t;
  test_prog_init(&t);
  qllc_diag d = {0};
  qllc_codegen_opts cg = host_opts(&d);
  cg.quick = 1;
  char *ir = NULL;
  if (qllc_codegen_ir_text(&t.p, &cg, &ir, &d) != QLLC_OK) fail_msg("%s", d.message);
  assert_non_null(strstr(ir, "call "));
  assert_non_null(strstr(ir, "@qllc_k_"));
  free(ir);
  qllc_jit_code *code = NULL;
  qllc_entry_fn fn = NULL;
  if (qllc_codegen_jit(&t.p, &cg, &code, &fn, &d) != QLLC_OK) fail_msg("%s", d.message);
  run_and_check(fn, NULL);
  qllc_jit_code_free(code);
}

static qllc_status compile_err(test_prog *t, qllc_diag *d) {
  qllc_diag hd = {0};
  qllc_codegen_opts cg = host_opts(&hd);
  memset(d, 0, sizeof *d);
  char *ir = NULL;
  qllc_status st = qllc_codegen_ir_text(&t->p, &cg, &ir, d);
  free(ir);
  return st;
}

static void test_wrong_arg_type(void **state) {
  test_prog t;
  test_prog_init(&t);
  t.args[1][2] = (qllc_arg){.kind = QLLC_ARG_FLOAT, .f = 8.0}; /* relu's n is int64_t */
  qllc_diag d;
  assert_int_not_equal(compile_err(&t, &d), QLLC_OK);
  assert_non_null(strstr(d.message, "qllc_k_relu_f32_f32"));
  assert_non_null(strstr(d.message, "argument 2"));
  assert_string_equal(d.node, "relu_node");

  test_prog_init(&t);
  t.args[0][2] = int_arg(3); /* a pointer parameter given an integer */
  assert_int_not_equal(compile_err(&t, &d), QLLC_OK);
  assert_non_null(strstr(d.message, "qllc_k_add_f32_f32_f32"));
  assert_non_null(strstr(d.message, "argument 2"));
  assert_string_equal(d.node, "add_node");

  test_prog_init(&t);
  t.ins[1].n_args = 2; /* arity */
  assert_int_not_equal(compile_err(&t, &d), QLLC_OK);
  assert_non_null(strstr(d.message, "qllc_k_relu_f32_f32 takes 3"));

  test_prog_init(&t);
  t.ins[2].kernel = "qllc_k_nosuch_f32_f32";
  assert_int_equal(compile_err(&t, &d), QLLC_ERR_UNSUPPORTED);
  assert_non_null(strstr(d.message, "qllc_k_nosuch_f32_f32 not found in the kernel library"));
  assert_string_equal(d.node, "tail_node");

  test_prog_init(&t);
  t.args[2][1].byte_offset = 64; /* past the end of x */
  assert_int_equal(compile_err(&t, &d), QLLC_ERR_INVALID);
  assert_non_null(strstr(d.message, "qllc_k_copy_f32_f32"));
}

/* No instructions, no inputs or outputs: still a valid entry that returns 0, and empty tables. */
static void test_empty_program(void **state) {
  qllc_program p;
  memset(&p, 0, sizeof p);
  qllc_diag d = {0};
  qllc_codegen_opts cg = host_opts(&d);
  qllc_jit_code *code = NULL;
  qllc_entry_fn fn = NULL;
  if (qllc_codegen_jit(&p, &cg, &code, &fn, &d) != QLLC_OK) fail_msg("%s", d.message);
  assert_int_equal(fn(NULL, NULL, NULL), 0);
  qllc_jit_code_free(code);
}

/* An integer immediate must fit the parameter's width (here the int32_t pad value of qllc_k_pad_i8_i8). */
static void test_int_range(void **state) {
  test_prog t;
  test_prog_init(&t);
  /* qllc_k_pad_i8_i8(y, x, rank, out_dims, in_dims, pads_begin, int32_t value) */
  qllc_arg a[7];
  a[0] = buf_arg(&t, B_T, 0);
  a[1] = buf_arg(&t, B_X, 0);
  a[2] = int_arg(1);
  a[3] = buf_arg(&t, B_DIMS, 0);
  a[4] = buf_arg(&t, B_DIMS, 0);
  a[5] = buf_arg(&t, B_STRIDES, 0);
  a[6] = int_arg(INT64_C(1) << 33);
  t.ins[2] = (qllc_instr){.kernel = "qllc_k_pad_i8_i8", .n_args = 7, .args = a, .node = &t.nodes[2]};
  qllc_diag d;
  assert_int_equal(compile_err(&t, &d), QLLC_ERR_INVALID);
  assert_non_null(strstr(d.message, "qllc_k_pad_i8_i8"));
  assert_non_null(strstr(d.message, "argument 6"));
  assert_non_null(strstr(d.message, "i32"));
  a[6] = int_arg(-128);
  assert_int_equal(compile_err(&t, &d), QLLC_OK);
}

static void test_resolve(void **state) {
  qllc_options o;
  qllc_codegen_opts cg;
  qllc_diag d = {0};
  qllc_options_init(&o);
  /* bundles default to x86_64 with its default CPU */
  assert_int_equal(qllc_codegen_resolve(o.target, o.cpu, o.features, 0, &cg, &d), QLLC_OK);
  assert_string_equal(cg.target->name, "x86_64");
  assert_string_equal(cg.cpu, qllc_target_x86_64.default_cpu);
  assert_string_equal(cg.features, "");

  o.target = "aarch64";
  o.cpu = "cortex-a76";
  o.features = "+dotprod, -sve";
  assert_int_equal(qllc_codegen_resolve(o.target, o.cpu, o.features, 0, &cg, &d), QLLC_OK);
  assert_string_equal(cg.target->name, "aarch64");
  assert_string_equal(cg.cpu, "cortex-a76");
  assert_string_equal(cg.features, "+dotprod,-sve");

  o.target = "riscv64";
  assert_int_equal(qllc_codegen_resolve(o.target, o.cpu, o.features, 0, &cg, &d), QLLC_ERR_INVALID);
  assert_non_null(strstr(d.message, "riscv64"));
  assert_non_null(strstr(d.message, "x86_64, aarch64"));

  o.target = "x86_64";
  o.cpu = "pentium-pro-max";
  o.features = NULL;
  assert_int_equal(qllc_codegen_resolve(o.target, o.cpu, o.features, 0, &cg, &d), QLLC_ERR_INVALID);
  assert_non_null(strstr(d.message, "pentium-pro-max"));
  assert_non_null(strstr(d.message, "skylake"));
  assert_non_null(strstr(d.message, "x86-64-v3"));

  o.cpu = "x86-64-v3";
  o.features = "+avx2,+avx9000";
  assert_int_equal(qllc_codegen_resolve(o.target, o.cpu, o.features, 0, &cg, &d), QLLC_ERR_INVALID);
  assert_non_null(strstr(d.message, "avx9000"));
  assert_non_null(strstr(d.message, "avx512vnni"));

  o.features = "avx2";
  assert_int_equal(qllc_codegen_resolve(o.target, o.cpu, o.features, 0, &cg, &d), QLLC_ERR_INVALID);
  assert_non_null(strstr(d.message, "'+' or '-'"));

  /* the JIT takes the host CPU and its features, and the user's extra features after them */
  qllc_options_init(&o);
  o.features = "-avx512f";
  assert_int_equal(qllc_codegen_resolve(o.target, o.cpu, o.features, 1, &cg, &d), QLLC_OK);
  assert_true(strlen(cg.cpu) > 0);
  size_t n = strlen(cg.features);
  assert_true(n >= 8 && strcmp(cg.features + n - 8, "-avx512f") == 0);
  /* the JIT cannot run aarch64 code here */
  o.target = "aarch64";
  o.features = NULL;
  assert_int_equal(qllc_codegen_resolve(o.target, o.cpu, o.features, 1, &cg, &d), QLLC_ERR_INVALID);
  /* native is the host */
  qllc_options_init(&o);
  o.cpu = "native";
  assert_int_equal(qllc_codegen_resolve(o.target, o.cpu, o.features, 0, &cg, &d), QLLC_OK);
  qllc_codegen_opts h;
  qllc_options_init(&o);
  assert_int_equal(qllc_codegen_resolve(o.target, o.cpu, o.features, 1, &h, &d), QLLC_OK);
  assert_string_equal(cg.cpu, h.cpu);
  assert_ptr_equal(cg.features, h.features); /* interned */
  o.target = "aarch64";
  o.cpu = "native";
  assert_int_equal(qllc_codegen_resolve(o.target, o.cpu, o.features, 0, &cg, &d), QLLC_ERR_INVALID);
}

/* ---- user bitcode ------------------------------------------------------------------------------- */

static char tmpdir[256];

static int make_bitcode(const char *name, const char *triple, const char *src, char *out, size_t size) {
  char c_path[512], cmd[2048];
  snprintf(c_path, sizeof c_path, "%s/%s.c", tmpdir, name);
  snprintf(out, size, "%s/%s.bc", tmpdir, name);
  FILE *f = fopen(c_path, "w");
  if (!f) return -1;
  fputs(src, f);
  fclose(f);
  snprintf(cmd, sizeof cmd, "clang-19 --target=%s -O2 -emit-llvm -c -I%s/include %s -o %s", triple,
           QLLC_SOURCE_DIR, c_path, out);
  return system(cmd);
}

static const char *user_src =
    "#include \"qllc_kernel.h\"\n"
    /* an override: relu that also adds 100 (so we can see it ran) */
    "QLLC_KERNEL void qllc_k_relu_f32_f32(float *y, const float *x, int64_t n) {\n"
    "  for (int64_t i = 0; i < n; i++) y[i] = (x[i] > 0 ? x[i] : 0) + 100.0f;\n}\n";

static void test_user_bitcode(void **state) {
  if (system("clang-19 --version > /dev/null 2>&1") != 0) skip();
  char bc[600], arm_bc[600];
  assert_int_equal(make_bitcode("override", "x86_64-pc-linux-gnu", user_src, bc, sizeof bc), 0);
  assert_int_equal(make_bitcode("override_arm", "aarch64-unknown-linux-gnu", user_src, arm_bc, sizeof arm_bc), 0);

  test_prog t;
  test_prog_init(&t);
  qllc_diag d = {0};
  qllc_codegen_opts cg = host_opts(&d);
  const char *files[1] = {bc};
  cg.kernel_files = files;
  cg.n_kernel_files = 1;
  qllc_jit_code *code = NULL;
  qllc_entry_fn fn = NULL;
  if (qllc_codegen_jit(&t.p, &cg, &code, &fn, &d) != QLLC_OK) fail_msg("%s", d.message);
  uint8_t *mut = aligned_alloc(64, 192), *act = aligned_alloc(64, 64);
  float x[8] = {-3.0f, 1.0f, 2.0f, 0.25f, -7.5f, 5.0f, -1.0f, -20.0f}, y[8], z[4];
  memcpy(mut, x, sizeof x);
  assert_int_equal(fn(NULL, mut, act), 0);
  test_prog_expect(x, y, z);
  for (int i = 0; i < 8; i++) y[i] += 100.0f;
  assert_memory_equal(mut + 64, y, sizeof y);
  free(mut);
  free(act);
  qllc_jit_code_free(code);

  /* wrong triple: error naming the file */
  files[0] = arm_bc;
  char *ir = NULL;
  memset(&d, 0, sizeof d);
  assert_int_equal(qllc_codegen_ir_text(&t.p, &cg, &ir, &d), QLLC_ERR_MISMATCH);
  assert_non_null(strstr(d.message, arm_bc));
  assert_non_null(strstr(d.message, "aarch64"));
  assert_string_equal(d.file, arm_bc);

  /* not bitcode at all */
  char junk[600];
  snprintf(junk, sizeof junk, "%s/junk.bc", tmpdir);
  FILE *f = fopen(junk, "w");
  fputs("this is not bitcode\n", f);
  fclose(f);
  files[0] = junk;
  memset(&d, 0, sizeof d);
  assert_int_equal(qllc_codegen_ir_text(&t.p, &cg, &ir, &d), QLLC_ERR_PARSE);
  assert_non_null(strstr(d.message, junk));

  /* missing file */
  files[0] = "/nonexistent/k.bc";
  memset(&d, 0, sizeof d);
  assert_int_equal(qllc_codegen_ir_text(&t.p, &cg, &ir, &d), QLLC_ERR_IO);
  assert_non_null(strstr(d.message, "/nonexistent/k.bc"));

  /* an override with another signature */
  char bad[600];
  assert_int_equal(make_bitcode("badsig", "x86_64-unknown-linux-gnu",
                                "#include \"qllc_kernel.h\"\n"
                                "QLLC_KERNEL void qllc_k_relu_f32_f32(float *y, const float *x, int32_t n) {\n"
                                "  for (int32_t i = 0; i < n; i++) y[i] = x[i];\n}\n",
                                bad, sizeof bad),
                   0);
  files[0] = bad;
  memset(&d, 0, sizeof d);
  assert_int_equal(qllc_codegen_ir_text(&t.p, &cg, &ir, &d), QLLC_ERR_MISMATCH);
  assert_non_null(strstr(d.message, "qllc_k_relu_f32_f32"));
  assert_non_null(strstr(d.message, bad));
}

int main(void) {
  snprintf(tmpdir, sizeof tmpdir, "/tmp/qllc_llvmgen_codegen_XXXXXX");
  if (!mkdtemp(tmpdir)) return 1;
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_jit_runs),      cmocka_unit_test(test_specialised), cmocka_unit_test(test_quick), cmocka_unit_test(test_wrong_arg_type),
      cmocka_unit_test(test_empty_program), cmocka_unit_test(test_int_range),
      cmocka_unit_test(test_resolve),       cmocka_unit_test(test_user_bitcode),
  };
  int r = cmocka_run_group_tests(tests, NULL, NULL);
  char cmd[512];
  snprintf(cmd, sizeof cmd, "rm -rf %s", tmpdir);
  if (system(cmd) != 0) r = r ? r : 1;
  return r;
}
