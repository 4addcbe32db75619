/* tests/cli/bind_api_test.c: qllc_model_load_bound (graph inputs bound to compile-time constants)
 * through include/qllc.h only.
 *
 * Model: tests/cli/data/reshape_bind.onnx, y = Relu(Reshape(x, shape)) with x f32 [2, 3, 4] and
 * shape an int64 [3] graph input (made by make_bind_models.py). The tensors here are built in C; the
 * expected output is worked out by hand: Reshape keeps the row-major order, so y[i] = max(x[i], 0).
 * Checked: the bound input disappears from the inputs, the output takes the bound shape, the caller's
 * tensors are copied, and every path that reloads the model (--dump-after, profiling, an int8
 * compile) sees the same binding; the errors name the input.
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

#include "qllc.h"

#define MODEL QLLC_SOURCE_DIR "/tests/cli/data/reshape_bind.onnx"
#define X_NPY QLLC_SOURCE_DIR "/tests/cli/data/reshape_bind_x.npy"

static float xs[24];
static int64_t shape_442[3] = {4, -1, 2};

static qllc_tensor shape_tensor(char *name, qllc_elem_kind elem, uint32_t n, void *data) {
  qllc_tensor t;
  memset(&t, 0, sizeof t);
  t.name = name;
  t.elem = elem;
  t.rank = 1;
  t.dims[0] = n;
  t.scale = 1.0f;
  t.data = data;
  return t;
}

static qllc_tensor x_tensor(void) {
  qllc_tensor t;
  memset(&t, 0, sizeof t);
  t.name = "x";
  t.elem = QLLC_F32;
  t.rank = 3;
  t.dims[0] = 2, t.dims[1] = 3, t.dims[2] = 4;
  t.scale = 1.0f;
  t.data = xs;
  return t;
}

static void fill_x(void) {
  for (int i = 0; i < 24; i++) xs[i] = (float)(i % 7) - 2.5f + 0.25f * (float)i; /* mixed signs */
}

static void check_y(const qllc_tensor *y, float tol) {
  assert_int_equal(y->elem, QLLC_F32);
  assert_int_equal(y->rank, 3);
  assert_int_equal(y->dims[0], 4);
  assert_int_equal(y->dims[1], 3);
  assert_int_equal(y->dims[2], 2);
  for (int i = 0; i < 24; i++) assert_float_equal(((float *)y->data)[i], xs[i] > 0 ? xs[i] : 0.0f, tol);
}

static void test_bound_runs(void **state) {
  fill_x();
  int64_t shape[3];
  memcpy(shape, shape_442, sizeof shape);
  char name[] = "shape";
  qllc_tensor b = shape_tensor(name, QLLC_I64, 3, shape);
  qllc_diag d;
  memset(&d, 0, sizeof d);
  qllc_model *m = NULL;
  assert_int_equal(qllc_model_load_bound(MODEL, &b, 1, &m, &d), QLLC_OK);
  /* the binding was copied: the caller's tensor can change or go */
  shape[0] = 1, shape[2] = 24;
  strcpy(name, "zzzzz");

  qllc_jit *j = NULL;
  assert_int_equal(qllc_jit_compile(m, NULL, &j, &d), QLLC_OK);
  assert_int_equal(qllc_jit_num_inputs(j), 1);
  assert_string_equal(qllc_jit_input(j, 0)->name, "x");
  qllc_tensor x = x_tensor(), y;
  assert_int_equal(qllc_jit_run(j, &x, 1, &y, &d), QLLC_OK);
  check_y(&y, 0.0f);
  qllc_tensor_free(&y);
  qllc_jit_free(j);

  /* --dump-after import reloads the model: with the binding, so the Reshape folds to [4, 3, 2] */
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);
  qllc_options o;
  qllc_options_init(&o);
  o.dump_after = "import";
  o.dump_stream = f;
  assert_int_equal(qllc_jit_compile(m, &o, &j, &d), QLLC_OK);
  fclose(f);
  assert_non_null(strstr(buf, "shape=[4, 3, 2]"));
  assert_null(strstr(buf, "input %shape"));
  free(buf);
  qllc_jit_free(j);

  /* profiling and an int8 compile reload it too */
  char yaml[] = "/tmp/qllc_bind_api_XXXXXX";
  int fd = mkstemp(yaml);
  assert_true(fd >= 0);
  close(fd);
  const char *spec = "x=" X_NPY;
  qllc_profile_summary sum;
  assert_int_equal(qllc_profile_dataset(m, &spec, 1, 0, yaml, NULL, NULL, &sum, &d), QLLC_OK);
  assert_int_equal(sum.samples, 1);
  qllc_tensor xf;
  assert_int_equal(qllc_tensor_read(X_NPY, &xf, &d), QLLC_OK);
  memcpy(xs, xf.data, sizeof xs);
  qllc_options_init(&o);
  o.precision = QLLC_PREC_INT8;
  o.profile_path = yaml;
  assert_int_equal(qllc_jit_compile(m, &o, &j, &d), QLLC_OK);
  assert_int_equal(qllc_jit_num_inputs(j), 1);
  assert_int_equal(qllc_jit_run(j, &xf, 1, &y, &d), QLLC_OK);
  float lo = 0, hi = 0;
  for (int i = 0; i < 24; i++) lo = xs[i] < lo ? xs[i] : lo, hi = xs[i] > hi ? xs[i] : hi;
  check_y(&y, 2 * (hi - lo) / 255); /* within two quantization steps of the profiled range */
  qllc_tensor_free(&y);
  qllc_tensor_free(&xf);
  qllc_jit_free(j);
  unlink(yaml);
  qllc_model_free(m);
}

static void expect_bind_error(qllc_tensor *b, int n, qllc_status want, const char *needle1, const char *needle2) {
  qllc_diag d;
  memset(&d, 0, sizeof d);
  qllc_model *m = (qllc_model *)1;
  assert_int_equal(qllc_model_load_bound(MODEL, b, n, &m, &d), want);
  assert_null(m);
  if (!strstr(d.message, needle1) || (needle2 && !strstr(d.message, needle2))) fail_msg("message: %s", d.message);
  assert_non_null(strstr(d.file, "reshape_bind.onnx"));
}

static void test_bind_errors(void **state) {
  int64_t shape[3] = {4, -1, 2}, two[2] = {4, 6};
  int32_t s32[3] = {4, -1, 2};
  qllc_tensor b = shape_tensor("shap", QLLC_I64, 3, shape);
  expect_bind_error(&b, 1, QLLC_ERR_INVALID, "'shap'", "no graph input");
  b = shape_tensor("shape", QLLC_I64, 2, two);
  expect_bind_error(&b, 1, QLLC_ERR_INVALID, "'shape'", "shape [2]");
  b = shape_tensor("shape", QLLC_I32, 3, s32);
  expect_bind_error(&b, 1, QLLC_ERR_INVALID, "'shape'", "i32");
  qllc_tensor bb[2] = {shape_tensor("shape", QLLC_I64, 3, shape), shape_tensor("shape", QLLC_I64, 3, shape)};
  expect_bind_error(bb, 2, QLLC_ERR_INVALID, "'shape' is bound twice", NULL);
  expect_bind_error(NULL, 1, QLLC_ERR_INVALID, "no bindings", NULL);
  /* unbound, the int64 input is unsupported and the message says how to bind it */
  expect_bind_error(NULL, 0, QLLC_ERR_UNSUPPORTED, "'shape'", "--const");
  /* a float input bound with the wrong shape */
  qllc_tensor x = x_tensor();
  x.dims[2] = 5;
  expect_bind_error(&x, 1, QLLC_ERR_INVALID, "'x'", "[2,3,4]");
}

int main(void) {
  const struct CMUnitTest tests[] = {cmocka_unit_test(test_bound_runs), cmocka_unit_test(test_bind_errors)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
