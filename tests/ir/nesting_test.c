/* tests/ir/nesting_test.c: a model whose sub-messages nest thousands deep (graphs in attributes of nodes
 * in graphs, about 35 KB of file) is refused by the nesting-depth check (QLLC_MAX_PROTO_DEPTH,
 * docs/limits.md) before protobuf-c's recursive unpack, which overflowed the stack on it (SIGSEGV).
 * The files are written here byte by byte; the library API and the CLI give an error, not a crash. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "qllc.h"

typedef struct buf {
  uint8_t *p;
  size_t n, cap;
} buf;

static void put(buf *b, const void *p, size_t n) {
  if (n == 0) return; /* an empty message: memcpy must not see its NULL buffer */
  if (b->n + n > b->cap) {
    b->cap = (b->n + n) * 2;
    b->p = realloc(b->p, b->cap);
    assert_non_null(b->p);
  }
  memcpy(b->p + b->n, p, n);
  b->n += n;
}

static void put_varint(buf *b, uint64_t v) {
  uint8_t t[10];
  size_t n = 0;
  do {
    t[n++] = (uint8_t)((v & 0x7f) | (v > 0x7f ? 0x80 : 0));
    v >>= 7;
  } while (v);
  put(b, t, n);
}

/* field `field` (wire type 2) holding inner's bytes */
static void put_msg(buf *b, unsigned field, const buf *inner) {
  put_varint(b, (uint64_t)field << 3 | 2);
  put_varint(b, inner->n);
  put(b, inner->p, inner->n);
}

/* A ModelProto whose graph holds a node whose attribute 'g' is a graph holding a node ... `levels` times
 * (each level is GraphProto > NodeProto > AttributeProto: 3 levels of sub-messages). */
static void write_nested(const char *path, int levels) {
  buf g = {0};
  for (int i = 0; i < levels; i++) {
    buf attr = {0}, node = {0}, outer = {0};
    put_msg(&attr, 1, &(buf){(uint8_t *)"g", 1, 1}); /* name */
    put_varint(&attr, 20 << 3 | 0);                  /* type = GRAPH (5) */
    put_varint(&attr, 5);
    put_msg(&attr, 6, &g); /* g */
    put_msg(&node, 4, &(buf){(uint8_t *)"If", 2, 2}); /* op_type */
    put_msg(&node, 5, &attr);                          /* attribute */
    put_msg(&outer, 1, &node);                         /* graph.node */
    free(g.p), free(attr.p), free(node.p);
    g = outer;
  }
  buf opset = {0}, m = {0};
  put_varint(&opset, 2 << 3 | 0); /* version 13 */
  put_varint(&opset, 13);
  put_varint(&m, 1 << 3 | 0); /* ir_version 8 */
  put_varint(&m, 8);
  put_msg(&m, 8, &opset);
  put_msg(&m, 7, &g);
  FILE *f = fopen(path, "wb");
  assert_non_null(f);
  assert_int_equal(fwrite(m.p, 1, m.n, f), m.n);
  fclose(f);
  free(g.p), free(opset.p), free(m.p);
}

static char deep_path[256], shallow_path[256];

static void test_deep_model_api(void **state) {
  (void)state;
  write_nested(deep_path, 3000);
  qllc_model *m = NULL;
  qllc_diag d;
  memset(&d, 0, sizeof d);
  qllc_status st = qllc_model_load(deep_path, &m, &d);
  print_message("%s\n", d.message);
  assert_int_not_equal(st, QLLC_OK);
  assert_null(m);
  assert_non_null(strstr(d.message, "nested more than 64 levels deep"));
  assert_string_equal(d.file, deep_path);
}

static void test_shallow_nesting_passes(void **state) {
  (void)state;
  /* 20 graph levels are 60 levels of sub-messages: within the limit, so the nesting check lets it through
   * (whatever the importer then says about an If without inputs) */
  write_nested(shallow_path, 20);
  qllc_model *m = NULL;
  qllc_diag d;
  memset(&d, 0, sizeof d);
  qllc_status st = qllc_model_load(shallow_path, &m, &d);
  if (st == QLLC_OK) qllc_model_free(m);
  assert_null(strstr(d.message, "nested more than"));
  /* a normal model still loads */
  memset(&d, 0, sizeof d);
  assert_int_equal(qllc_model_load(QLLC_SOURCE_DIR "/tests/cli/data/small.onnx", &m, &d), QLLC_OK);
  qllc_model_free(m);
}

static void test_deep_model_cli(void **state) {
  (void)state;
  write_nested(deep_path, 3000);
  char cmd[1024], err_path[300], line[1024], first[1024] = "";
  snprintf(err_path, sizeof err_path, "%s.err", deep_path);
  snprintf(cmd, sizeof cmd, "timeout 20 '%s/qllc' info '%s' >/dev/null 2>'%s'", QLLC_BUILD_DIR, deep_path, err_path);
  int rc = system(cmd);
  assert_true(WIFEXITED(rc));
  assert_int_equal(WEXITSTATUS(rc), 1);
  FILE *f = fopen(err_path, "r");
  assert_non_null(f);
  int lines = 0;
  while (fgets(line, sizeof line, f))
    if (!lines++) strcpy(first, line);
  fclose(f);
  remove(err_path);
  print_message("%s", first);
  assert_int_equal(lines, 1);
  assert_non_null(strstr(first, "qllc: error: "));
  assert_non_null(strstr(first, deep_path));
  assert_non_null(strstr(first, "nested more than 64 levels deep"));
}

int main(void) {
  snprintf(deep_path, sizeof deep_path, "/tmp/qllc_nesting_test_%ld_deep.onnx", (long)getpid());
  snprintf(shallow_path, sizeof shallow_path, "/tmp/qllc_nesting_test_%ld_shallow.onnx", (long)getpid());
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_deep_model_api),
      cmocka_unit_test(test_shallow_nesting_passes),
      cmocka_unit_test(test_deep_model_cli),
  };
  int r = cmocka_run_group_tests(tests, NULL, NULL);
  remove(deep_path);
  remove(shallow_path);
  return r;
}
