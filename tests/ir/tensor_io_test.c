/* tests/ir/tensor_io_test.c: src/ir/tensor_io.c against files written by numpy and onnx
 * (tests/ir/data/make_tio.py; the expected values below are the ones that script writes), against
 * ONNX's own test data, and round trips through qllc_tensor_write_npy. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "ir/ir.h"

#define DATA QLLC_SOURCE_DIR "/tests/ir/data/"
#define RELU_DIR "/usr/share/libonnx-testdata/data/node/test_relu/test_data_set_0/"

static qllc_tensor read_ok(const char *path) {
  qllc_tensor t;
  qllc_diag d;
  memset(&d, 0, sizeof d);
  qllc_status st = qllc_tensor_read(path, &t, &d);
  if (st != QLLC_OK)
    fail_msg("%s: %s", path, d.message);
  return t;
}

static void check_shape(const qllc_tensor *t, qllc_elem_kind elem, uint32_t rank, const int64_t *dims) {
  assert_int_equal(t->elem, elem);
  assert_int_equal(t->rank, rank);
  for (uint32_t i = 0; i < rank; i++)
    assert_int_equal(t->dims[i], dims[i]);
  assert_non_null(t->data);
  assert_true(t->scale == 1.0f);
  assert_int_equal(t->zero_point, 0);
}

static void test_npy_f32(void **state) {
  qllc_tensor t = read_ok(DATA "tio_f32.npy");
  check_shape(&t, QLLC_F32, 2, (int64_t[]){2, 3});
  assert_null(t.name);
  const float want[6] = {-1.0f, -0.5f, 0.0f, 0.5f, 1.0f, 1.5f};
  assert_memory_equal(t.data, want, sizeof want);
  qllc_tensor_free(&t);
  assert_null(t.data);
}

static void test_npy_f64_converted(void **state) {
  qllc_tensor t = read_ok(DATA "tio_f64.npy");
  check_shape(&t, QLLC_F32, 1, (int64_t[]){3});
  const float *f = t.data;
  assert_true(f[0] == 1.5f && f[1] == -2.25f && f[2] == (float)1e-3);
  qllc_tensor_free(&t);
}

static void test_npy_ints(void **state) {
  qllc_tensor t = read_ok(DATA "tio_i8.npy");
  check_shape(&t, QLLC_I8, 1, (int64_t[]){4});
  assert_memory_equal(t.data, ((int8_t[]){-128, -1, 0, 127}), 4);
  qllc_tensor_free(&t);

  t = read_ok(DATA "tio_u8.npy");
  check_shape(&t, QLLC_U8, 1, (int64_t[]){4});
  assert_memory_equal(t.data, ((uint8_t[]){0, 1, 200, 255}), 4);
  qllc_tensor_free(&t);

  t = read_ok(DATA "tio_i16.npy");
  check_shape(&t, QLLC_I16, 2, (int64_t[]){2, 2});
  assert_memory_equal(t.data, ((int16_t[]){-32768, -2, 3, 32767}), 8);
  qllc_tensor_free(&t);

  t = read_ok(DATA "tio_i32.npy");
  check_shape(&t, QLLC_I32, 1, (int64_t[]){3});
  assert_memory_equal(t.data, ((int32_t[]){INT32_MIN, 7, INT32_MAX}), 12);
  qllc_tensor_free(&t);

  t = read_ok(DATA "tio_i64.npy");
  check_shape(&t, QLLC_I64, 1, (int64_t[]){3});
  assert_memory_equal(t.data, ((int64_t[]){-((int64_t)1 << 40), 5, ((int64_t)1 << 62) + 3}), 24);
  qllc_tensor_free(&t);

  t = read_ok(DATA "tio_bool.npy");
  check_shape(&t, QLLC_U8, 1, (int64_t[]){3});
  assert_memory_equal(t.data, ((uint8_t[]){1, 0, 1}), 3);
  qllc_tensor_free(&t);
}

static void test_npy_shapes(void **state) {
  qllc_tensor t = read_ok(DATA "tio_scalar.npy");
  check_shape(&t, QLLC_F32, 0, NULL);
  assert_true(*(float *)t.data == 3.25f);
  qllc_tensor_free(&t);

  t = read_ok(DATA "tio_empty.npy");
  check_shape(&t, QLLC_F32, 2, (int64_t[]){0, 3});
  qllc_tensor_free(&t);

  t = read_ok(DATA "tio_rank4.npy");
  check_shape(&t, QLLC_F32, 4, (int64_t[]){1, 2, 3, 4});
  for (int i = 0; i < 24; i++)
    assert_true(((float *)t.data)[i] == (float)i);
  qllc_tensor_free(&t);
}

static void test_npy_versions(void **state) {
  qllc_tensor t = read_ok(DATA "tio_v2.npy");
  check_shape(&t, QLLC_I32, 2, (int64_t[]){2, 2});
  assert_memory_equal(t.data, ((int32_t[]){1, 2, 3, 4}), 16);
  qllc_tensor_free(&t);

  t = read_ok(DATA "tio_v3.npy");
  check_shape(&t, QLLC_F32, 1, (int64_t[]){2});
  assert_memory_equal(t.data, ((float[]){0.25f, -0.5f}), 8);
  qllc_tensor_free(&t);
}

static void test_pb_fields(void **state) {
  qllc_tensor t = read_ok(DATA "tio_f32_raw.pb");
  check_shape(&t, QLLC_F32, 2, (int64_t[]){2, 2});
  assert_string_equal(t.name, "x_raw");
  assert_memory_equal(t.data, ((float[]){1.0f, -2.0f, 0.5f, 8.0f}), 16);
  qllc_tensor_free(&t);
  assert_null(t.name);

  t = read_ok(DATA "tio_f32_typed.pb");
  check_shape(&t, QLLC_F32, 1, (int64_t[]){3});
  assert_string_equal(t.name, "x_typed");
  assert_memory_equal(t.data, ((float[]){0.125f, -7.0f, 100.0f}), 12);
  qllc_tensor_free(&t);

  t = read_ok(DATA "tio_f64_typed.pb");
  check_shape(&t, QLLC_F32, 1, (int64_t[]){2});
  assert_memory_equal(t.data, ((float[]){2.5f, -0.75f}), 8);
  qllc_tensor_free(&t);

  t = read_ok(DATA "tio_i8_typed.pb");
  check_shape(&t, QLLC_I8, 1, (int64_t[]){4});
  assert_memory_equal(t.data, ((int8_t[]){-128, -5, 0, 127}), 4);
  qllc_tensor_free(&t);

  t = read_ok(DATA "tio_u8_typed.pb");
  check_shape(&t, QLLC_U8, 1, (int64_t[]){2});
  assert_memory_equal(t.data, ((uint8_t[]){7, 255}), 2);
  qllc_tensor_free(&t);

  t = read_ok(DATA "tio_i16_typed.pb");
  check_shape(&t, QLLC_I16, 1, (int64_t[]){2});
  assert_memory_equal(t.data, ((int16_t[]){-300, 32767}), 4);
  qllc_tensor_free(&t);

  t = read_ok(DATA "tio_i32_typed.pb");
  check_shape(&t, QLLC_I32, 2, (int64_t[]){1, 3});
  assert_string_equal(t.name, "i");
  assert_memory_equal(t.data, ((int32_t[]){-1, 0, 123456}), 12);
  qllc_tensor_free(&t);

  t = read_ok(DATA "tio_i64_typed.pb");
  check_shape(&t, QLLC_I64, 1, (int64_t[]){2});
  assert_memory_equal(t.data, ((int64_t[]){-((int64_t)1 << 40), 9}), 16);
  qllc_tensor_free(&t);

  t = read_ok(DATA "tio_i64_raw.pb");
  check_shape(&t, QLLC_I64, 1, (int64_t[]){2});
  assert_memory_equal(t.data, ((int64_t[]){3, -4}), 16);
  qllc_tensor_free(&t);

  t = read_ok(DATA "tio_bool_typed.pb");
  check_shape(&t, QLLC_U8, 1, (int64_t[]){3});
  assert_memory_equal(t.data, ((uint8_t[]){1, 0, 1}), 3);
  qllc_tensor_free(&t);
}

/* ONNX's own Relu test: output must be max(input, 0) element for element. */
static void test_pb_onnx_relu(void **state) {
  FILE *probe = fopen(RELU_DIR "input_0.pb", "rb");
  if (!probe)
    skip();
  fclose(probe);
  qllc_tensor x = read_ok(RELU_DIR "input_0.pb");
  qllc_tensor y = read_ok(RELU_DIR "output_0.pb");
  check_shape(&x, QLLC_F32, 3, (int64_t[]){3, 4, 5});
  check_shape(&y, QLLC_F32, 3, (int64_t[]){3, 4, 5});
  assert_string_equal(x.name, "x");
  assert_string_equal(y.name, "y");
  const float *xf = x.data, *yf = y.data;
  assert_float_equal(xf[0], 1.7640524f, 1e-6); /* numpy.random.seed(0); randn()[0] */
  int neg = 0;
  for (int i = 0; i < 60; i++) {
    assert_true(yf[i] == (xf[i] > 0 ? xf[i] : 0.0f));
    neg += xf[i] < 0;
  }
  assert_true(neg > 0);
  qllc_tensor_free(&x);
  qllc_tensor_free(&y);
}

static uint8_t *slurp(const char *path, size_t *n) {
  FILE *f = fopen(path, "rb");
  assert_non_null(f);
  uint8_t *p = malloc(1 << 16);
  *n = fread(p, 1, 1 << 16, f);
  fclose(f);
  return p;
}

/* What we write must be byte for byte what numpy writes for the same array. */
static void check_same_bytes(const qllc_tensor *t, const char *numpy_file) {
  const char *out = QLLC_BUILD_DIR "/tio_test_out.npy";
  qllc_diag d;
  memset(&d, 0, sizeof d);
  assert_int_equal(qllc_tensor_write_npy(out, t, &d), QLLC_OK);
  size_t na, nb;
  uint8_t *a = slurp(out, &na), *b = slurp(numpy_file, &nb);
  assert_int_equal(na, nb);
  assert_memory_equal(a, b, na);
  size_t hlen = (size_t)a[8] | (size_t)a[9] << 8;
  assert_int_equal((10 + hlen) % 64, 0);
  free(a);
  free(b);
  remove(out);
}

static void test_write_matches_numpy(void **state) {
  const char *files[] = {"tio_f32.npy", "tio_i8.npy", "tio_u8.npy", "tio_i16.npy", "tio_i32.npy",
                         "tio_i64.npy", "tio_scalar.npy", "tio_empty.npy", "tio_rank4.npy"};
  for (size_t i = 0; i < sizeof files / sizeof *files; i++) {
    char path[1024];
    snprintf(path, sizeof path, DATA "%s", files[i]);
    qllc_tensor t = read_ok(path);
    check_same_bytes(&t, path);
    qllc_tensor_free(&t);
  }
}

/* write -> read for every element kind, a rank-3 shape and values that use every byte. */
static void test_round_trip(void **state) {
  const char *out = QLLC_BUILD_DIR "/tio_test_rt.npy";
  const qllc_elem_kind kinds[] = {QLLC_F32, QLLC_I8, QLLC_U8, QLLC_I16, QLLC_I32, QLLC_I64};
  for (size_t k = 0; k < sizeof kinds / sizeof *kinds; k++) {
    qllc_tensor t = {0};
    t.elem = kinds[k];
    t.rank = 3;
    t.dims[0] = 2;
    t.dims[1] = 3;
    t.dims[2] = 5;
    t.scale = 1.0f;
    size_t bytes = 30 * qllc_elem_size(t.elem);
    uint8_t *p = malloc(bytes);
    for (size_t i = 0; i < bytes; i++)
      p[i] = (uint8_t)(i * 37 + 11 + k);
    if (t.elem == QLLC_F32) /* keep the floats finite and exact */
      for (int i = 0; i < 30; i++)
        ((float *)p)[i] = (float)(i - 15) * 0.375f;
    t.data = p;
    qllc_diag d;
    memset(&d, 0, sizeof d);
    assert_int_equal(qllc_tensor_write_npy(out, &t, &d), QLLC_OK);
    qllc_tensor r = read_ok(out);
    check_shape(&r, t.elem, 3, t.dims);
    assert_memory_equal(r.data, p, bytes);
    qllc_tensor_free(&r);
    free(p);
  }
  remove(out);
}

static void expect_fail(const char *path, qllc_status want, const char *needle) {
  qllc_tensor t;
  qllc_diag d;
  memset(&d, 0, sizeof d);
  qllc_status st = qllc_tensor_read(path, &t, &d);
  if (st != want)
    fail_msg("%s: status %d (%s), want %d", path, (int)st, d.message, (int)want);
  assert_int_equal(d.status, want);
  assert_string_equal(d.file, path);
  assert_non_null(strstr(d.message, path));
  if (needle && !strstr(d.message, needle))
    fail_msg("%s: message '%s' lacks '%s'", path, d.message, needle);
  assert_null(t.data);
  assert_null(t.name);
}

static void test_errors(void **state) {
  expect_fail(DATA "tio_does_not_exist.npy", QLLC_ERR_IO, "No such file");
  expect_fail(DATA, QLLC_ERR_IO, "directory");
  expect_fail(DATA "tio_fortran.npy", QLLC_ERR_UNSUPPORTED, "fortran");
  expect_fail(DATA "tio_bigendian.npy", QLLC_ERR_UNSUPPORTED, ">f4");
  expect_fail(DATA "tio_f16.npy", QLLC_ERR_UNSUPPORTED, "<f2");
  expect_fail(DATA "tio_trunc.npy", QLLC_ERR_PARSE, "expected 40 bytes, found 34");
  expect_fail(DATA "tio_badheader.npy", QLLC_ERR_PARSE, "shape");
  expect_fail(DATA "tio_shorthead.npy", QLLC_ERR_PARSE, "expected 64 bytes, found 8");
  expect_fail(DATA "tio_pb_short.pb", QLLC_ERR_PARSE, "expected 24 bytes, found 20");
  expect_fail(DATA "tio_pb_f16.pb", QLLC_ERR_UNSUPPORTED, "data_type 10");
  expect_fail(DATA "tio_garbage.pb", QLLC_ERR_PARSE, "TensorProto");

  /* an empty file is neither format */
  const char *empty = QLLC_BUILD_DIR "/tio_test_empty.bin";
  FILE *f = fopen(empty, "wb");
  assert_non_null(f);
  fclose(f);
  expect_fail(empty, QLLC_ERR_PARSE, NULL);
  /* every strict prefix of a good .npy is rejected, never read past its end */
  size_t n;
  uint8_t *good = slurp(DATA "tio_f32.npy", &n);
  const char *cut = QLLC_BUILD_DIR "/tio_test_cut.npy";
  for (size_t len = 1; len < n; len += 7) {
    f = fopen(cut, "wb");
    fwrite(good, 1, len, f);
    fclose(f);
    expect_fail(cut, QLLC_ERR_PARSE, NULL);
  }
  free(good);
  remove(cut);
  remove(empty);
}

static void test_write_errors(void **state) {
  float v[2] = {1, 2};
  qllc_tensor t = {.elem = QLLC_F32, .rank = 1, .dims = {2}, .scale = 1.0f, .data = v};
  qllc_diag d;
  memset(&d, 0, sizeof d);
  const char *bad = QLLC_BUILD_DIR "/tio_no_such_dir/x.npy";
  assert_int_equal(qllc_tensor_write_npy(bad, &t, &d), QLLC_ERR_IO);
  assert_non_null(strstr(d.message, bad));
  assert_non_null(strstr(d.message, "No such file"));
  assert_string_equal(d.file, bad);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_npy_f32),       cmocka_unit_test(test_npy_f64_converted),
      cmocka_unit_test(test_npy_ints),      cmocka_unit_test(test_npy_shapes),
      cmocka_unit_test(test_npy_versions),  cmocka_unit_test(test_pb_fields),
      cmocka_unit_test(test_pb_onnx_relu),  cmocka_unit_test(test_write_matches_numpy),
      cmocka_unit_test(test_round_trip),    cmocka_unit_test(test_errors),
      cmocka_unit_test(test_write_errors),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
