/* tests/llvmgen/bundle_test.c: objects and headers from src/llvmgen (codegen.c, bundle.c).
 *
 * Writes x86_64 bundles (weights in the object, and weights in a file) and an aarch64 bundle for the
 * hand-made program of prog.h, then checks them with the real tools: llvm-nm (the only undefined
 * symbols are memcpy/memset), gcc and g++ (the headers compile, alone and two together, with and
 * without qllc.h), and a C program linked with both x86_64 objects that checks the qllc_io tables and
 * the outputs against hand-computed values. The aarch64 program runs under qemu-aarch64 when the
 * cross compiler and qemu are installed (skipped otherwise). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "prog.h"

#define LLVM_NM "/usr/lib/llvm-19/bin/llvm-nm"

static char dir[256];
static const float in_x[8] = {-3.0f, 1.0f, 2.0f, 0.25f, -7.5f, 5.0f, -1.0f, -20.0f};

static int sh(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int sh(const char *fmt, ...) {
  char cmd[4096];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(cmd, sizeof cmd, fmt, ap);
  va_end(ap);
  int r = system(cmd);
  if (r != 0) print_message("command failed (%d): %s\n", r, cmd);
  return r;
}

static qllc_codegen_opts opts_for(const char *target, const char *name, int weights_file, int pic) {
  qllc_options o;
  qllc_options_init(&o);
  o.target = target;
  o.weights_file = weights_file;
  o.reloc_pic = pic;
  qllc_codegen_opts cg;
  qllc_diag d = {0};
  if (qllc_codegen_resolve(o.target, o.cpu, o.features, 0, &cg, &d) != QLLC_OK) fail_msg("%s", d.message);
  cg.reloc_pic = o.reloc_pic;
  cg.weights_in_object = !o.weights_file;
  cg.entry_name = name;
  return cg;
}

static void write_bundle(const char *target, const char *name, int weights_file, int pic) {
  test_prog t;
  test_prog_init(&t);
  qllc_codegen_opts cg = opts_for(target, name, weights_file, pic);
  char path[512];
  qllc_diag d = {0};
  snprintf(path, sizeof path, "%s/%s.o", dir, name);
  if (qllc_codegen_object(&t.p, &cg, path, &d) != QLLC_OK) fail_msg("%s", d.message);
  snprintf(path, sizeof path, "%s/%s.h", dir, name);
  if (qllc_bundle_write_header(&t.p, &cg, path, &d) != QLLC_OK) fail_msg("%s", d.message);
  if (weights_file) {
    snprintf(path, sizeof path, "%s/%s.weights.bin", dir, name);
    if (qllc_bundle_write_weights(&t.p, path, &d) != QLLC_OK) fail_msg("%s", d.message);
  }
}

/* Every undefined symbol of the object must be memcpy or memset. */
static void check_undefined(const char *name) {
  char cmd[1024], line[512];
  snprintf(cmd, sizeof cmd, LLVM_NM " -u %s/%s.o", dir, name);
  FILE *p = popen(cmd, "r");
  assert_non_null(p);
  int n = 0;
  while (fgets(line, sizeof line, p)) {
    char sym[256] = "";
    if (sscanf(line, " U %255s", sym) != 1) continue;
    if (strcmp(sym, "memcpy") != 0 && strcmp(sym, "memset") != 0) fail_msg("%s.o needs symbol %s", name, sym);
    n++;
  }
  assert_int_equal(pclose(p), 0);
  /* and it defines the entry and both tables */
  snprintf(cmd, sizeof cmd, LLVM_NM " --defined-only %s/%s.o | grep -cE ' (T %s|[DR] %s_inputs|[DR] %s_outputs)$'", dir,
           name, name, name, name);
  p = popen(cmd, "r");
  assert_non_null(p);
  int defs = 0;
  assert_int_equal(fscanf(p, "%d", &defs), 1);
  pclose(p);
  assert_int_equal(defs, 3);
}

/* A function run_NAME() in C that calls bundle NAME and checks everything against the reference. */
static void emit_runner(FILE *f, const char *N, int weights_file) {
  fprintf(f,
          "static int run_%s(const char *wpath) {\n"
          "  if (%s_NUM_INPUTS != 1 || %s_NUM_OUTPUTS != 2 || %s_MEM_ALIGN != 64) return 10;\n"
          "  if (%s_MUTABLE_MEM_SIZE != 192 || %s_ACTIVATIONS_MEM_SIZE != 64) return 11;\n"
          "  if (%s_CONSTANT_MEM_SIZE != %d) return 12;\n"
          "  const qllc_io *i0 = &%s_inputs[0], *o0 = &%s_outputs[0], *o1 = &%s_outputs[1];\n"
          "  if (strcmp(i0->name, \"x\") || i0->elem_kind != QLLC_F32 || i0->rank != 1 || i0->dims[0] != 8 ||\n"
          "      i0->dims[1] != 0 || i0->offset != %s_x_OFFSET || i0->size != 32 || i0->scale != 1.0f ||\n"
          "      i0->zero_point != 0) return 13;\n"
          "  if (strcmp(o0->name, \"out.y\") || o0->offset != %s_out_y_OFFSET || o0->offset != 64 || o0->size != 32)\n"
          "    return 14;\n"
          "  if (strcmp(o1->name, \"out-y\") || o1->offset != %s_out_y_2_OFFSET || o1->offset != 128 ||\n"
          "      o1->dims[0] != 4 || o1->size != 16) return 15;\n"
          "  uint8_t *mut, *act, *cw = NULL;\n"
          "  if (posix_memalign((void **)&mut, 64, %s_MUTABLE_MEM_SIZE) || posix_memalign((void **)&act, 64, "
          "%s_ACTIVATIONS_MEM_SIZE)) return 16;\n"
          "  if (%s_CONSTANT_MEM_SIZE) {\n"
          "    FILE *w = fopen(wpath, \"rb\");\n"
          "    if (!w || posix_memalign((void **)&cw, 64, %s_CONSTANT_MEM_SIZE + 0)) return 17;\n"
          "    if (fread(cw, 1, %s_CONSTANT_MEM_SIZE + 0, w) != %s_CONSTANT_MEM_SIZE + 0) return 18;\n"
          "    fclose(w);\n"
          "  }\n"
          "  memset(mut, 0x55, %s_MUTABLE_MEM_SIZE);\n"
          "  memcpy(mut + %s_x_OFFSET, in_x, sizeof in_x);\n"
          "  if (%s(cw, mut, act) != 0) return 19;\n"
          "  if (memcmp(mut + %s_out_y_OFFSET, want_y, sizeof want_y)) return 20;\n"
          "  if (memcmp(mut + %s_out_y_2_OFFSET, want_z, sizeof want_z)) return 21;\n"
          "  free(mut); free(act); free(cw);\n"
          "  return 0;\n"
          "}\n",
          N, N, N, N, N, N, N, weights_file ? 192 : 0, N, N, N, N, N, N, N, N, N, N, N, N, N, N, N, N, N);
}

static void emit_floats(FILE *f, const char *name, const float *v, int n) {
  fprintf(f, "static const float %s[%d] = {", name, n);
  for (int i = 0; i < n; i++) fprintf(f, "%s%a", i ? ", " : "", (double)v[i]);
  fprintf(f, "};\n");
}

/* main.c for the given bundles (each with its weights flag). */
static void write_main(const char *path, const char *const *names, const int *wf, int n) {
  FILE *f = fopen(path, "w");
  assert_non_null(f);
  float y[8], z[4];
  test_prog_expect(in_x, y, z);
  fputs("#include <stdio.h>\n#include <stdlib.h>\n#include <string.h>\n", f);
  for (int i = 0; i < n; i++) fprintf(f, "#include \"%s.h\"\n", names[i]);
  emit_floats(f, "in_x", in_x, 8);
  emit_floats(f, "want_y", y, 8);
  emit_floats(f, "want_z", z, 4);
  for (int i = 0; i < n; i++) emit_runner(f, names[i], wf[i]);
  fputs("int main(int argc, char **argv) {\n  int r;\n", f);
  for (int i = 0; i < n; i++)
    fprintf(f, "  if ((r = run_%s(\"%s/%s.weights.bin\"))) { printf(\"%s: check %%d failed\\n\", r); return r; }\n",
            names[i], dir, names[i], names[i]);
  fputs("  puts(\"ok\");\n  return 0;\n}\n", f);
  fclose(f);
}

static void test_x86_64_bundles(void **state) {
  write_bundle("x86_64", "net_a", 0, 1);
  write_bundle("x86_64", "net_b", 1, 1);
  write_bundle("x86_64", "net_s", 0, 0);
  check_undefined("net_a");
  check_undefined("net_b");
  check_undefined("net_s");

  /* the headers compile on their own, together, after qllc.h, and as C++ */
  char path[512];
  snprintf(path, sizeof path, "%s/hdr.c", dir);
  FILE *f = fopen(path, "w");
  fputs("#include \"net_a.h\"\n#include \"net_b.h\"\n#include \"net_a.h\"\n"
        "int f(void) { return net_a_NUM_INPUTS + net_b_inputs[0].elem_kind + QLLC_I64; }\n",
        f);
  fclose(f);
  snprintf(path, sizeof path, "%s/hdr2.c", dir);
  f = fopen(path, "w");
  fputs("#include \"qllc.h\"\n#include \"net_a.h\"\nint f(void) { return net_a_outputs[0].elem_kind == QLLC_F32; }\n", f);
  fclose(f);
  assert_int_equal(sh("cd %s && gcc -std=c99 -Wall -Wextra -Werror -pedantic -c hdr.c -o hdr.o", dir), 0);
  assert_int_equal(sh("cd %s && gcc -std=c11 -Wall -Werror -I%s/include -I%s/include -c hdr2.c -o hdr2.o", dir,
                      QLLC_SOURCE_DIR, QLLC_BUILD_DIR), 0); /* qllc.h includes the generated qllc_version.h */
  assert_int_equal(sh("cd %s && g++ -Wall -Wextra -Werror -x c++ -c hdr.c -o hdrpp.o", dir), 0);

  /* link both bundles into one program and run it */
  const char *names[2] = {"net_a", "net_b"};
  const int wf[2] = {0, 1};
  snprintf(path, sizeof path, "%s/main.c", dir);
  write_main(path, names, wf, 2);
  assert_int_equal(sh("cd %s && gcc -std=c11 -D_POSIX_C_SOURCE=200112L -Wall -Werror main.c net_a.o net_b.o -o main && ./main", dir), 0);
  /* the same with a C++ caller */
  assert_int_equal(sh("cd %s && g++ -Wall -x c++ main.c -x none net_a.o net_b.o -o mainpp && ./mainpp", dir), 0);
  /* a static-relocation object links into a non-PIE program */
  const char *sn[1] = {"net_s"};
  const int swf[1] = {0};
  snprintf(path, sizeof path, "%s/main_s.c", dir);
  write_main(path, sn, swf, 1);
  assert_int_equal(sh("cd %s && gcc -no-pie main_s.c net_s.o -o main_s && ./main_s", dir), 0);
}

static void test_weights_file(void **state) {
  test_prog t;
  test_prog_init(&t);
  char path[512];
  qllc_diag d = {0};
  snprintf(path, sizeof path, "%s/w.bin", dir);
  assert_int_equal(qllc_bundle_write_weights(&t.p, path, &d), QLLC_OK);
  uint8_t want[192] = {0}, got[256];
  memcpy(want, test_w, 32);
  memcpy(want + 64, t.dims, 8);
  memcpy(want + 128, t.strides, 8);
  FILE *f = fopen(path, "rb");
  assert_non_null(f);
  assert_int_equal(fread(got, 1, sizeof got, f), 192);
  fclose(f);
  assert_memory_equal(got, want, 192);
}

static void test_aarch64_bundle(void **state) {
  write_bundle("aarch64", "net_arm", 0, 1);
  check_undefined("net_arm");
  /* the object really is AArch64 */
  assert_int_equal(sh("/usr/lib/llvm-19/bin/llvm-readelf -h %s/net_arm.o | grep -q AArch64", dir), 0);
  if (system("command -v aarch64-linux-gnu-gcc > /dev/null && command -v qemu-aarch64 > /dev/null") != 0) {
    print_message("aarch64-linux-gnu-gcc or qemu-aarch64 missing: not running the aarch64 bundle\n");
    return;
  }
  const char *names[1] = {"net_arm"};
  const int wf[1] = {0};
  char path[512];
  snprintf(path, sizeof path, "%s/main_arm.c", dir);
  write_main(path, names, wf, 1);
  assert_int_equal(sh("cd %s && aarch64-linux-gnu-gcc -std=c11 -D_POSIX_C_SOURCE=200112L main_arm.c net_arm.o -o main_arm"
                      " && qemu-aarch64 -L /usr/aarch64-linux-gnu ./main_arm",
                      dir),
                   0);
}

/* Unwritable paths: an error naming the file, and nothing left behind. */
static void test_write_errors(void **state) {
  test_prog t;
  test_prog_init(&t);
  qllc_codegen_opts cg = opts_for("x86_64", "net_e", 0, 1);
  qllc_diag d = {0};
  assert_int_equal(qllc_codegen_object(&t.p, &cg, "/nonexistent/dir/net_e.o", &d), QLLC_ERR_IO);
  assert_non_null(strstr(d.message, "/nonexistent/dir/net_e.o"));
  memset(&d, 0, sizeof d);
  assert_int_equal(qllc_bundle_write_header(&t.p, &cg, "/nonexistent/dir/net_e.h", &d), QLLC_ERR_IO);
  assert_non_null(strstr(d.message, "/nonexistent/dir/net_e.h"));
  memset(&d, 0, sizeof d);
  assert_int_equal(qllc_bundle_write_weights(&t.p, "/nonexistent/dir/w.bin", &d), QLLC_ERR_IO);
  /* a directory where the file should be: the temporary file is removed again */
  char path[512];
  snprintf(path, sizeof path, "%s/adir.o", dir);
  assert_int_equal(mkdir(path, 0755), 0);
  memset(&d, 0, sizeof d);
  assert_int_equal(qllc_codegen_object(&t.p, &cg, path, &d), QLLC_ERR_IO);
  snprintf(path, sizeof path, "%s/adir.o.tmp", dir);
  assert_int_not_equal(access(path, F_OK), 0);
  /* a bundle name that is not a C identifier */
  cg.entry_name = "3net";
  memset(&d, 0, sizeof d);
  snprintf(path, sizeof path, "%s/bad.h", dir);
  assert_int_equal(qllc_bundle_write_header(&t.p, &cg, path, &d), QLLC_ERR_INVALID);
  assert_int_equal(qllc_codegen_object(&t.p, &cg, path, &d), QLLC_ERR_INVALID);
  assert_int_not_equal(access(path, F_OK), 0);
}

int main(void) {
  snprintf(dir, sizeof dir, "/tmp/qllc_llvmgen_bundle_XXXXXX");
  if (!mkdtemp(dir)) return 1;
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_x86_64_bundles),
      cmocka_unit_test(test_weights_file),
      cmocka_unit_test(test_aarch64_bundle),
      cmocka_unit_test(test_write_errors),
  };
  int r = cmocka_run_group_tests(tests, NULL, NULL);
  if (r == 0) {
    char cmd[512];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    if (system(cmd) != 0) r = 1;
  } else {
    fprintf(stderr, "files kept in %s\n", dir);
  }
  return r;
}
