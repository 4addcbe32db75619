/* tests/cli/model_io_test.c: qllc_model_num_inputs/outputs and qllc_model_input/output (src/qllc.c),
 * through include/qllc.h only, on tests/cli/data (made by make_models.py). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "qllc.h"

#define DATA QLLC_SOURCE_DIR "/tests/cli/data/"

static void test_model_io(void **state) {
  qllc_diag d;
  memset(&d, 0, sizeof d);
  qllc_model *m = NULL;
  assert_int_equal(qllc_model_load(DATA "two_io.onnx", &m, &d), QLLC_OK);
  assert_int_equal(qllc_model_num_inputs(m), 2);
  assert_int_equal(qllc_model_num_outputs(m), 2);
  const char *names[] = {"a", "b", "sum:0", "out/relu"};
  for (int i = 0; i < 4; i++) {
    const qllc_tensor *t = i < 2 ? qllc_model_input(m, i) : qllc_model_output(m, i - 2);
    assert_non_null(t);
    assert_string_equal(t->name, names[i]);
    assert_int_equal(t->elem, QLLC_F32);
    assert_int_equal(t->rank, 2);
    assert_int_equal(t->dims[0], 2);
    assert_int_equal(t->dims[1], 3);
    assert_null(t->data);
  }
  assert_null(qllc_model_input(m, 2));
  assert_null(qllc_model_output(m, -1));
  assert_null(qllc_model_input(NULL, 0));
  assert_int_equal(qllc_model_num_inputs(NULL), 0);
  qllc_model_free(m);
}

/* A bound input is a constant, not an input. */
static void test_model_io_bound(void **state) {
  qllc_diag d;
  memset(&d, 0, sizeof d);
  qllc_tensor shape;
  assert_int_equal(qllc_tensor_read(DATA "reshape_bind_shape.npy", &shape, &d), QLLC_OK);
  free(shape.name);
  shape.name = "shape";
  qllc_model *m = NULL;
  assert_int_equal(qllc_model_load_bound(DATA "reshape_bind.onnx", &shape, 1, &m, &d), QLLC_OK);
  shape.name = NULL;
  qllc_tensor_free(&shape);
  assert_int_equal(qllc_model_num_inputs(m), 1);
  assert_string_equal(qllc_model_input(m, 0)->name, "x");
  qllc_model_free(m);
}

int main(void) {
  const struct CMUnitTest tests[] = {cmocka_unit_test(test_model_io), cmocka_unit_test(test_model_io_bound)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
