/* tests/ir/limits_test.c: size limits and checked size arithmetic (issue 11; docs/limits.md).
 *
 * Every model and tensor file is built here with the protobuf-c ONNX messages and written to a fresh
 * temporary directory. Each hostile input must be a clear error naming the tensor, value or node,
 * reported BEFORE anything of the claimed size is allocated: the data-length tests claim 2^44 floats
 * (64 TiB, under the 2^48-byte limit, so only the data check can catch them) with 64 bytes of data; a
 * loader that allocates first fails with "out of memory" (or an allocator abort) instead. The last test
 * runs the qllc CLI: exit 1, one line on stderr, no bundle.
 */
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

#include "ir/ir.h"
#include "onnx/onnx.pb-c.h"

static char dir[64];

static int setup(void **state) {
  (void)state;
  strcpy(dir, "/tmp/qllc_limits_XXXXXX");
  return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state) {
  (void)state;
  char cmd[128];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
  return system(cmd) == 0 ? 0 : -1;
}

static const char *path_of(const char *name) {
  static char p[4][128];
  static int k;
  k = (k + 1) % 4;
  snprintf(p[k], sizeof p[k], "%s/%s", dir, name);
  return p[k];
}

static void write_file(const char *path, const uint8_t *buf, size_t n) {
  FILE *f = fopen(path, "wb");
  assert_non_null(f);
  assert_int_equal(fwrite(buf, 1, n, f), n);
  assert_int_equal(fclose(f), 0);
}

/* A float TensorProto `name` of dims[rank] carrying `nbytes` bytes of raw_data (zeros). */
static void make_tensor(Onnx__TensorProto *t, const char *name, int rank, int64_t *dims, size_t nbytes) {
  static uint8_t zeros[256];
  onnx__tensor_proto__init(t);
  t->name = (char *)name;
  t->has_data_type = 1;
  t->data_type = ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT;
  t->n_dims = (size_t)rank;
  t->dims = dims;
  t->has_raw_data = 1;
  t->raw_data.len = nbytes;
  t->raw_data.data = zeros;
}

/* ---- a tiny model builder: float graph input "x" of dims, Identity (or one given node) to "y" ---- */

typedef struct model {
  Onnx__ModelProto m;
  Onnx__GraphProto g;
  Onnx__OperatorSetIdProto opset, *opsets[1];
  Onnx__ValueInfoProto in, out, *ins[1], *outs[1];
  Onnx__TypeProto in_t, out_t;
  Onnx__TypeProto__Tensor in_tt, out_tt;
  Onnx__TensorShapeProto in_shape;
  Onnx__TensorShapeProto__Dimension in_dim[QLLC_MAX_RANK], *in_dims[QLLC_MAX_RANK];
  Onnx__NodeProto node, *nodes[1];
  char *node_in[2], *node_out[1];
  Onnx__TensorProto *inits[1];
} model;

/* A float tensor value `name` (shape: shape, or none). */
static void value_info(Onnx__ValueInfoProto *v, Onnx__TypeProto *t, Onnx__TypeProto__Tensor *tt, const char *name,
                       Onnx__TensorShapeProto *shape) {
  onnx__value_info_proto__init(v);
  onnx__type_proto__init(t);
  onnx__type_proto__tensor__init(tt);
  tt->has_elem_type = 1;
  tt->elem_type = ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT;
  tt->shape = shape;
  t->value_case = ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE;
  t->tensor_type = tt;
  v->name = (char *)name;
  v->type = t;
}

static void model_init(model *md, int rank, const int64_t *dims) {
  memset(md, 0, sizeof *md);
  onnx__model_proto__init(&md->m);
  onnx__graph_proto__init(&md->g);
  onnx__operator_set_id_proto__init(&md->opset);
  md->opset.domain = "";
  md->opset.has_version = 1;
  md->opset.version = 13;
  md->opsets[0] = &md->opset;
  md->m.has_ir_version = 1;
  md->m.ir_version = 7;
  md->m.n_opset_import = 1;
  md->m.opset_import = md->opsets;
  md->m.graph = &md->g;
  md->g.name = "limits";

  onnx__tensor_shape_proto__init(&md->in_shape);
  for (int i = 0; i < rank; i++) {
    onnx__tensor_shape_proto__dimension__init(&md->in_dim[i]);
    md->in_dim[i].value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE;
    md->in_dim[i].dim_value = dims[i];
    md->in_dims[i] = &md->in_dim[i];
  }
  md->in_shape.n_dim = (size_t)rank;
  md->in_shape.dim = md->in_dims;
  value_info(&md->in, &md->in_t, &md->in_tt, "x", &md->in_shape);
  md->ins[0] = &md->in;
  md->g.n_input = 1;
  md->g.input = md->ins;

  value_info(&md->out, &md->out_t, &md->out_tt, "y", NULL);
  md->outs[0] = &md->out;
  md->g.n_output = 1;
  md->g.output = md->outs;

  onnx__node_proto__init(&md->node);
  md->node.name = "id";
  md->node.op_type = "Identity";
  md->node_in[0] = "x";
  md->node.n_input = 1;
  md->node.input = md->node_in;
  md->node_out[0] = "y";
  md->node.n_output = 1;
  md->node.output = md->node_out;
  md->nodes[0] = &md->node;
  md->g.n_node = 1;
  md->g.node = md->nodes;
}

/* w as the model's one initializer */
static void model_add_init(model *md, Onnx__TensorProto *w) {
  md->inits[0] = w;
  md->g.n_initializer = 1;
  md->g.initializer = md->inits;
}

static const char *model_write(model *md, const char *name) {
  size_t n = onnx__model_proto__get_packed_size(&md->m);
  uint8_t *buf = malloc(n ? n : 1);
  assert_non_null(buf);
  onnx__model_proto__pack(&md->m, buf);
  const char *p = path_of(name);
  write_file(p, buf, n);
  free(buf);
  return p;
}

/* Loads `path`, expects a failure whose message holds every needle (NULL-terminated) and no
 * "out of memory". */
static void expect_load_error(const char *path, ...) {
  qllc_graph *g = NULL;
  qllc_diag d = {0};
  qllc_status st = qllc_onnx_load(path, &g, &d);
  print_message("%s: %s\n", path, d.message);
  assert_int_not_equal(st, QLLC_OK);
  assert_null(g);
  assert_null(strstr(d.message, "out of memory"));
  va_list ap;
  va_start(ap, path);
  for (const char *needle; (needle = va_arg(ap, const char *));) {
    if (!strstr(d.message, needle)) print_message("missing '%s'\n", needle);
    assert_non_null(strstr(d.message, needle));
  }
  va_end(ap);
}

/* ---- validate before allocating ---------------------------------------------------------------- */

/* A model whose load must fail: graph input x of dims (rank 1 or 2) and, with init, one float initializer
   of init_dims carrying init_bytes bytes of raw_data, or, with typed, that many float_data values
   instead. The error must name needle[0] and say needle[1]. cli: the qllc CLI is tried on it too. */
typedef struct load_case {
  const char *file;
  int rank;
  int64_t dims[2];
  const char *init;
  int init_rank;
  int64_t init_dims[2];
  size_t init_bytes, typed;
  const char *needle[2];
  int cli;
} load_case;

#define P2(n) ((int64_t)1 << (n))
static const load_case load_cases[] = {
    /* validate before allocating: 2^44 floats = 64 TiB, with 64 bytes */
    {"short_raw.onnx", 1, {4}, "huge_w", 2, {P2(22), P2(22)}, 64, 0, {"huge_w", "raw_data has 64 bytes"}, 1},
    /* the case: 2^31 floats (8 GiB) with 64 bytes */
    {"short_raw31.onnx", 1, {4}, "w31", 1, {P2(31)}, 64, 0, {"w31", "raw_data has 64 bytes"}, 0},
    /* 2^44 floats with 16 float_data values */
    {"short_typed.onnx", 1, {4}, "typed_w", 2, {P2(22), P2(22)}, 0, 16, {"typed_w", "16 values"}, 0},
    /* 2^62 floats: 2^64 bytes wraps to 0 */
    {"wrap_init.onnx", 1, {4}, "wrap_w", 2, {P2(31), P2(31)}, 0, 0, {"wrap_w", "larger than"}, 0},
    /* checked sizes of graph inputs: 2^80 elements, 2^62 + 1 elements, 2^23 x (2^23 + 1) floats (just past
       2^48 bytes) */
    {"in_2p80.onnx", 2, {P2(40), P2(40)}, NULL, 0, {0}, 0, 0, {"graph input 'x'", "larger than"}, 1},
    {"in_2p62.onnx", 1, {P2(62) + 1}, NULL, 0, {0}, 0, 0, {"graph input 'x'", "larger than"}, 1},
    {"in_over.onnx", 2, {P2(23), P2(23) + 1}, NULL, 0, {0}, 0, 0, {"graph input 'x'", "larger than"}, 0},
};

/* Builds case c in md (w: its initializer) and writes it under prefix + c->file. */
static const char *load_case_write(model *md, Onnx__TensorProto *w, const load_case *c, const char *prefix) {
  static float vals[16];
  char name[64];
  model_init(md, c->rank, c->dims);
  if (c->init) {
    make_tensor(w, c->init, c->init_rank, (int64_t *)c->init_dims, c->init_bytes);
    if (c->typed) {
      assert_true(c->typed <= sizeof vals / sizeof vals[0]);
      w->has_raw_data = 0;
      w->n_float_data = c->typed;
      w->float_data = vals;
    }
    model_add_init(md, w);
  }
  snprintf(name, sizeof name, "%s%s", prefix, c->file);
  return model_write(md, name);
}

static void test_load_errors(void **state) {
  (void)state;
  for (size_t i = 0; i < sizeof load_cases / sizeof load_cases[0]; i++) {
    const load_case *c = &load_cases[i];
    model md;
    Onnx__TensorProto w;
    expect_load_error(load_case_write(&md, &w, c, ""), c->needle[0], c->needle[1], NULL);
  }
}

static void test_input_at_the_limit(void **state) {
  (void)state;
  /* 2^46 floats = 2^48 bytes exactly: accepted (nothing is allocated for an input); one more row is
     over (load_cases' in_over.onnx) */
  int64_t xd[2] = {P2(23), P2(23)};
  model md;
  model_init(&md, 2, xd);
  qllc_graph *g = NULL;
  qllc_diag d = {0};
  assert_int_equal(qllc_onnx_load(model_write(&md, "in_limit.onnx"), &g, &d), QLLC_OK);
  assert_int_equal(qllc_value_bytes(g->inputs[0]), (size_t)1 << 48);
  qllc_graph_free(g);
}

static void test_pb_short_raw_data(void **state) {
  (void)state;
  int64_t dims[2] = {(int64_t)1 << 22, (int64_t)1 << 22};
  Onnx__TensorProto t;
  make_tensor(&t, "pb_t", 2, dims, 64);
  size_t n = onnx__tensor_proto__get_packed_size(&t);
  uint8_t buf[512];
  assert_true(n <= sizeof buf);
  onnx__tensor_proto__pack(&t, buf);
  const char *p = path_of("short.pb");
  write_file(p, buf, n);
  qllc_tensor out;
  qllc_diag d = {0};
  assert_int_not_equal(qllc_tensor_read(p, &out, &d), QLLC_OK);
  print_message("%s\n", d.message);
  assert_non_null(strstr(d.message, p));
  assert_non_null(strstr(d.message, "pb_t"));
  assert_non_null(strstr(d.message, "found 64"));

  int64_t wrap[2] = {(int64_t)1 << 31, (int64_t)1 << 31};
  make_tensor(&t, "pb_wrap", 2, wrap, 0);
  n = onnx__tensor_proto__get_packed_size(&t);
  onnx__tensor_proto__pack(&t, buf);
  write_file(p, buf, n);
  memset(&d, 0, sizeof d);
  assert_int_not_equal(qllc_tensor_read(p, &out, &d), QLLC_OK);
  print_message("%s\n", d.message);
  assert_non_null(strstr(d.message, "pb_wrap"));
}

/* ---- checked sizes of inferred shapes ------------------------------------------------------------ */

/* Conv x[1,1,8,8] * w[1,1,3,3] with the given dilations/pads/strides attribute. */
static void conv_model(model *md, Onnx__TensorProto *w, int64_t *wd, Onnx__AttributeProto *a, Onnx__AttributeProto **as,
                       const char *attr, int64_t *vals, int nvals) {
  static int64_t xd[4] = {1, 1, 8, 8};
  static float wv[9];
  model_init(md, 4, xd);
  make_tensor(w, "w", 4, wd, sizeof wv);
  w->raw_data.data = (uint8_t *)wv;
  model_add_init(md, w);
  md->node.name = "conv";
  md->node.op_type = "Conv";
  md->node_in[1] = "w";
  md->node.n_input = 2;
  onnx__attribute_proto__init(a);
  a->name = (char *)attr;
  a->has_type = 1;
  a->type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS;
  a->n_ints = (size_t)nvals;
  a->ints = vals;
  as[0] = a;
  md->node.n_attribute = 1;
  md->node.attribute = as;
}

static void test_conv_dilation_int64_max(void **state) {
  (void)state;
  model md;
  Onnx__TensorProto w;
  int64_t wd[4] = {1, 1, 3, 3};
  Onnx__AttributeProto a, *as[1];
  int64_t dil[2] = {INT64_MAX, 1};
  conv_model(&md, &w, wd, &a, as, "dilations", dil, 2);
  expect_load_error(model_write(&md, "conv_dil.onnx"), "node 'conv'", "dilation", NULL);

  int64_t pads[4] = {INT64_MAX, 0, INT64_MAX, 0};
  conv_model(&md, &w, wd, &a, as, "pads", pads, 4);
  expect_load_error(model_write(&md, "conv_pads.onnx"), "node 'conv'", "pads", NULL);

  int64_t strides[2] = {INT64_MAX, INT64_MAX}; /* legal: one output row and column */
  conv_model(&md, &w, wd, &a, as, "strides", strides, 2);
  qllc_graph *g = NULL;
  qllc_diag d = {0};
  assert_int_equal(qllc_onnx_load(model_write(&md, "conv_strides.onnx"), &g, &d), QLLC_OK);
  assert_int_equal(g->outputs[0]->dims[2], 1);
  assert_int_equal(g->outputs[0]->dims[3], 1);
  qllc_graph_free(g);
}

static void test_size_helpers(void **state) {
  (void)state;
  int64_t r = 7;
  assert_int_equal(qllc_mul_size((int64_t)1 << 31, (int64_t)1 << 31, &r), 0);
  assert_int_equal(r, (int64_t)1 << 62);
  assert_int_equal(qllc_mul_size((int64_t)1 << 32, (int64_t)1 << 31, &r), -1);
  assert_int_equal(r, (int64_t)1 << 62); /* untouched on failure */
  assert_int_equal(qllc_mul_size(-1, 1, &r), -1);
  assert_int_equal(qllc_add_size(INT64_MAX, 1, &r), -1);
  assert_int_equal(qllc_add_size(INT64_MAX - 1, 1, &r), 0);
  assert_int_equal(r, INT64_MAX);
  int64_t dims[2] = {(int64_t)1 << 40, (int64_t)1 << 40}, b;
  assert_int_equal(qllc_shape_bytes(QLLC_ELEM_F32, 2, dims, &b), -1);
  dims[0] = dims[1] = (int64_t)1 << 23;
  assert_int_equal(qllc_shape_bytes(QLLC_ELEM_F32, 2, dims, &b), 0);
  assert_int_equal(b, QLLC_MAX_TENSOR_BYTES);
  assert_int_equal(qllc_shape_bytes(QLLC_ELEM_F32, QLLC_MAX_RANK + 1, dims, &b), -1);
  /* a graph refuses to make a value past the limit */
  qllc_graph *g = qllc_graph_new("x.onnx");
  dims[0] = dims[1] = (int64_t)1 << 40;
  assert_null(qllc_value_new(g, "big", QLLC_ELEM_F32, 2, dims));
  qllc_graph_free(g);
}

/* ---- the CLI: exit 1, one line naming the value or node, no bundle ------------------------------- */

static void expect_cli_error(const char *model_path, const char *needle) {
  char cmd[1024], err_path[160], line[1024];
  snprintf(err_path, sizeof err_path, "%s/err.txt", dir);
  const char *bundle = path_of("bundle");
  snprintf(cmd, sizeof cmd, "'%s/qllc' compile '%s' -o '%s' >/dev/null 2>'%s'", QLLC_BUILD_DIR, model_path, bundle,
           err_path);
  int rc = system(cmd);
  assert_true(WIFEXITED(rc));
  assert_int_equal(WEXITSTATUS(rc), 1);
  FILE *f = fopen(err_path, "r");
  assert_non_null(f);
  int lines = 0;
  char first[1024] = "";
  while (fgets(line, sizeof line, f)) {
    if (!lines++) strcpy(first, line);
  }
  fclose(f);
  print_message("%s", first);
  assert_int_equal(lines, 1);
  assert_non_null(strstr(first, "qllc: error: "));
  assert_non_null(strstr(first, needle));
  assert_int_not_equal(access(bundle, F_OK), 0);
}

static void test_cli(void **state) {
  (void)state;
  model md;
  Onnx__TensorProto w;
  for (size_t i = 0; i < sizeof load_cases / sizeof load_cases[0]; i++)
    if (load_cases[i].cli) expect_cli_error(load_case_write(&md, &w, &load_cases[i], "cli_"), load_cases[i].needle[0]);
  int64_t wd[4] = {1, 1, 3, 3};
  Onnx__AttributeProto a, *as[1];
  int64_t dil[2] = {INT64_MAX, 1};
  conv_model(&md, &w, wd, &a, as, "dilations", dil, 2);
  expect_cli_error(model_write(&md, "cli_dil.onnx"), "node 'conv'");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_size_helpers),
      cmocka_unit_test(test_load_errors),
      cmocka_unit_test(test_pb_short_raw_data),
      cmocka_unit_test(test_input_at_the_limit),
      cmocka_unit_test(test_conv_dilation_int64_max),
      cmocka_unit_test(test_cli),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
