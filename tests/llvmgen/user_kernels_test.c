/* tests/llvmgen/user_kernels_test.c: src/llvmgen/user_kernels.c, the LLVM version check of --kernels files
 * and the function names they define.
 *
 * Foreign bitcode: the IDENTIFICATION block of a real clang-19 file is replaced by one this test writes
 * (bit by bit, as LLVM's writer lays it out: ENTER_SUBBLOCK 13, a STRING record with the producer, an
 * EPOCH record, END_BLOCK), once with the producer "LLVM19.1.7" (must be accepted, which shows the
 * spliced file is valid bitcode that LLVM 19 reads) and once each with "LLVM18.1.8", "LLVM20.1.0" and
 * "APPLE_1_15" (must be rejected naming the file and the producer). The STRING record is written
 * both unabbreviated and with a char6 array abbreviation (what clang writes). Also: the bitcode
 * wrapper header, a file that is not bitcode, and the names a real file defines.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "llvmgen/llvmgen.h"

static char tmpdir[256];

/* ---- a bit writer (LSB first, as LLVM's bitstream) ---- */
typedef struct bw {
  uint8_t buf[4096];
  size_t pos; /* bits */
} bw;
static void put(bw *w, uint64_t v, unsigned n) {
  for (unsigned i = 0; i < n; i++, w->pos++)
    if ((v >> i) & 1) w->buf[w->pos >> 3] |= (uint8_t)(1u << (w->pos & 7));
}
static void put_vbr(bw *w, uint64_t v, unsigned n) {
  uint64_t hi = 1ull << (n - 1);
  while (v >= hi) {
    put(w, (v & (hi - 1)) | hi, n);
    v >>= n - 1;
  }
  put(w, v, n);
}
static void align32(bw *w) { w->pos = (w->pos + 31) & ~(size_t)31; }
static int char6(char c) {
  if (c >= 'a' && c <= 'z') return c - 'a';
  if (c >= 'A' && c <= 'Z') return c - 'A' + 26;
  if (c >= '0' && c <= '9') return c - '0' + 52;
  return c == '.' ? 62 : 63;
}

/* An IDENTIFICATION block (bytes, a multiple of 4) with the given producer. */
static size_t ident_block(const char *producer, int abbreviated, uint8_t *out) {
  bw w;
  memset(&w, 0, sizeof w);
  put(&w, 1, 2);      /* ENTER_SUBBLOCK at the top level (abbrev width 2) */
  put_vbr(&w, 13, 8); /* IDENTIFICATION_BLOCK_ID */
  put_vbr(&w, 5, 4);  /* abbrev width inside */
  align32(&w);
  size_t len_at = w.pos;
  put(&w, 0, 32); /* length in words, patched below */
  size_t start = w.pos;
  size_t n = strlen(producer);
  if (abbreviated) {
    put(&w, 2, 5);     /* DEFINE_ABBREV */
    put_vbr(&w, 3, 5); /* 3 operands: literal 1, array, char6 */
    put(&w, 1, 1), put_vbr(&w, 1, 8);
    put(&w, 0, 1), put(&w, 3, 3);
    put(&w, 0, 1), put(&w, 4, 3);
    put(&w, 4, 5); /* the first defined abbreviation */
    put_vbr(&w, n, 6);
    for (size_t i = 0; i < n; i++) put(&w, (uint64_t)char6(producer[i]), 6);
  } else {
    put(&w, 3, 5); /* UNABBREV_RECORD */
    put_vbr(&w, 1, 6);
    put_vbr(&w, n, 6);
    for (size_t i = 0; i < n; i++) put_vbr(&w, (unsigned char)producer[i], 6);
  }
  if (abbreviated) { /* as LLVM's writer: EPOCH through an abbreviation [literal 2, vbr6] */
    put(&w, 2, 5), put_vbr(&w, 2, 5);
    put(&w, 1, 1), put_vbr(&w, 2, 8);
    put(&w, 0, 1), put(&w, 2, 3), put_vbr(&w, 6, 5);
    put(&w, 5, 5), put_vbr(&w, 0, 6);
  } else {
    put(&w, 3, 5), put_vbr(&w, 2, 6), put_vbr(&w, 1, 6), put_vbr(&w, 0, 6); /* EPOCH 0 */
  }
  put(&w, 0, 5); /* END_BLOCK */
  align32(&w);
  uint32_t words = (uint32_t)((w.pos - start) / 32);
  for (int i = 0; i < 4; i++) w.buf[len_at / 8 + i] = (uint8_t)(words >> (8 * i));
  memcpy(out, w.buf, w.pos / 8);
  return w.pos / 8;
}

static uint8_t *read_file(const char *path, size_t *size) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  uint8_t *b = malloc((size_t)n);
  *size = fread(b, 1, (size_t)n, f);
  fclose(f);
  return b;
}

/* Writes `path`: the real bitcode `bc` with its IDENTIFICATION block replaced. */
static void splice(const uint8_t *bc, size_t size, const char *producer, int abbreviated, const char *path) {
  assert_true(size > 12 && bc[0] == 'B' && bc[1] == 'C');
  /* the real file's first block: 2 + 8 + 4 bits, aligned, then its length in words at byte 8 */
  assert_int_equal(bc[4] & 3, 1);
  uint32_t words = bc[8] | bc[9] << 8 | bc[10] << 16 | (uint32_t)bc[11] << 24;
  size_t rest = 12 + (size_t)words * 4;
  assert_true(rest <= size);
  uint8_t ident[4096];
  size_t n = ident_block(producer, abbreviated, ident);
  /* the module block records offsets from the start of the file (the value symbol table's), so the
     new block must have the old one's length for LLVM to read the result */
  if (abbreviated) assert_int_equal(n, rest - 4);
  FILE *f = fopen(path, "wb");
  assert_non_null(f);
  fwrite(bc, 1, 4, f);
  fwrite(ident, 1, n, f);
  fwrite(bc + rest, 1, size - rest, f);
  fclose(f);
}

static const char *src =
    "#include \"qllc_kernel.h\"\n"
    "QLLC_KERNEL void qllc_k_custom_com_acme_Twice_f32_f32(float *y, const float *x, int64_t n0, int64_t m0) {\n"
    "  for (int64_t i = 0; i < n0; i++) y[i] = 2 * x[i];\n}\n"
    "static void helper(void) {}\n";

static void test_version_check(void **state) {
  if (system("clang-19 --version > /dev/null 2>&1") != 0) skip();
  char c_path[600], bc_path[600], cmd[2048];
  snprintf(c_path, sizeof c_path, "%s/k.c", tmpdir);
  snprintf(bc_path, sizeof bc_path, "%s/k.bc", tmpdir);
  FILE *f = fopen(c_path, "w");
  fputs(src, f);
  fclose(f);
  snprintf(cmd, sizeof cmd, "clang-19 -O2 -emit-llvm -c -I%s/include %s -o %s", QLLC_SOURCE_DIR, c_path, bc_path);
  assert_int_equal(system(cmd), 0);
  size_t size = 0;
  uint8_t *bc = read_file(bc_path, &size);
  assert_non_null(bc);
  qllc_diag d;
  size_t n = 0;

  /* the real file passes, and defines the kernel (not the static helper) */
  memset(&d, 0, sizeof d);
  assert_int_equal(qllc_bitcode_check_version(bc, size, bc_path, &d), QLLC_OK);
  qllc_user_kernels *uk = NULL;
  const char *files[1] = {bc_path};
  assert_int_equal(qllc_user_kernels_load(files, 1, &uk, &d), QLLC_OK);
  assert_string_equal(qllc_user_kernels_find(uk, "qllc_k_custom_com_acme_Twice_f32_f32"), bc_path);
  assert_null(qllc_user_kernels_find(uk, "helper"));
  assert_null(qllc_user_kernels_find(uk, "qllc_k_relu_f32_f32"));
  qllc_user_kernels_free(uk);

  char path[700];
  for (int abbr = 0; abbr < 2; abbr++) {
    /* same version, spliced: accepted and still readable by LLVM (the splice itself is sound) */
    snprintf(path, sizeof path, "%s/same%d.bc", tmpdir, abbr);
    splice(bc, size, "LLVM19.1.7", abbr, path);
    files[0] = path;
    memset(&d, 0, sizeof d);
    if (abbr) { /* same length as clang-19's block: LLVM reads the whole file */
      if (qllc_user_kernels_load(files, 1, &uk, &d) != QLLC_OK) fail_msg("%s", d.message);
      assert_non_null(qllc_user_kernels_find(uk, "qllc_k_custom_com_acme_Twice_f32_f32"));
      qllc_user_kernels_free(uk);
    } else {
      uint8_t *same = read_file(path, &n);
      assert_int_equal(qllc_bitcode_check_version(same, n, path, &d), QLLC_OK);
      free(same);
    }

    /* same length as "LLVM19.1.7", so the abbreviated splices stay readable bitcode */
    static const char *const foreign[] = {"LLVM18.1.8", "LLVM20.1.0", "APPLE_1_15"};
    for (int i = 0; i < 3; i++) {
      snprintf(path, sizeof path, "%s/foreign%d_%d.bc", tmpdir, abbr, i);
      splice(bc, size, foreign[i], abbr, path);
      files[0] = path;
      memset(&d, 0, sizeof d);
      assert_int_equal(qllc_user_kernels_load(files, 1, &uk, &d), QLLC_ERR_MISMATCH);
      assert_non_null(strstr(d.message, path));
      assert_non_null(strstr(d.message, foreign[i]));
      assert_non_null(strstr(d.message, "clang-19"));
      assert_string_equal(d.file, path);
    }
  }

  /* the bitcode wrapper header (Darwin style) around a foreign file is looked through */
  uint8_t ident[4096];
  n = ident_block("LLVM18.1.8", 1, ident);
  size_t inner = 4 + n, total = 20 + inner;
  uint8_t *wrapped = calloc(1, total);
  const uint8_t magic[4] = {0xDE, 0xC0, 0x17, 0x0B};
  memcpy(wrapped, magic, 4);
  wrapped[8] = 20;                           /* offset */
  wrapped[12] = (uint8_t)inner, wrapped[13] = (uint8_t)(inner >> 8); /* size */
  memcpy(wrapped + 20, bc, 4);
  memcpy(wrapped + 24, ident, n);
  memset(&d, 0, sizeof d);
  assert_int_equal(qllc_bitcode_check_version(wrapped, total, "w.bc", &d), QLLC_ERR_MISMATCH);
  assert_non_null(strstr(d.message, "LLVM18.1.8"));
  free(wrapped);

  /* not bitcode */
  memset(&d, 0, sizeof d);
  assert_int_equal(qllc_bitcode_check_version("int main(void) { return 0; }", 28, "x.c", &d), QLLC_ERR_PARSE);
  assert_non_null(strstr(d.message, "x.c"));
  free(bc);
}

static void test_files_list(void **state) {
  char buf[256];
  assert_string_equal(qllc_user_kernels_files(NULL, buf, sizeof buf), "(no --kernels files given)");
  qllc_diag d = {0};
  const char *files[1] = {"/nonexistent/a.bc"};
  qllc_user_kernels *uk = (qllc_user_kernels *)1;
  assert_int_equal(qllc_user_kernels_load(files, 1, &uk, &d), QLLC_ERR_IO);
  assert_null(uk);
  assert_non_null(strstr(d.message, "/nonexistent/a.bc"));
}

int main(void) {
  snprintf(tmpdir, sizeof tmpdir, "/tmp/qllc_user_kernels_XXXXXX");
  if (!mkdtemp(tmpdir)) return 1;
  const struct CMUnitTest tests[] = {cmocka_unit_test(test_version_check), cmocka_unit_test(test_files_list)};
  int rc = cmocka_run_group_tests(tests, NULL, NULL);
  char cmd[400];
  snprintf(cmd, sizeof cmd, "rm -rf %s", tmpdir);
  if (system(cmd)) rc = rc ? rc : 1;
  return rc;
}
