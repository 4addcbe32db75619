/* tests/cli/api_test.c: the public API (src/qllc.c) through include/qllc.h only.
 *
 * Uses tests/cli/data (made by make_models.py; references computed with numpy at generation time).
 */
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

#include "qllc.h"

#define DATA QLLC_SOURCE_DIR "/tests/cli/data/"

static qllc_tensor read_npy(const char *path) {
  qllc_tensor t;
  qllc_diag d;
  memset(&d, 0, sizeof d);
  assert_int_equal(qllc_tensor_read(path, &t, &d), QLLC_OK);
  return t;
}

static void test_options_defaults(void **state) {
  qllc_options o;
  memset(&o, 0xab, sizeof o);
  qllc_options_init(&o);
  assert_int_equal(o.precision, QLLC_PREC_FLOAT);
  assert_int_equal(o.weight_precision, QLLC_PREC_FLOAT);
  assert_int_equal(o.schema, QLLC_SCHEMA_DEFAULT); /* asymmetric at int8, symmetric at int16 */
  assert_int_equal(o.calibration, QLLC_CAL_MINMAX);
  assert_int_equal(o.reloc_pic, 1);
  assert_int_equal(o.weights_file, 0);
  assert_int_equal(o.per_tensor, 0);
  assert_int_equal(o.strict, 0);
  assert_int_equal(o.quantized_io, 0);
  assert_null(o.target);
  assert_null(o.cpu);
  assert_null(o.profile_path);
  assert_null(o.dump_after);
  assert_int_equal(o.n_keep_float, 0);
  assert_int_equal(o.n_kernel_files, 0);
}

static void test_load_errors_name_file(void **state) {
  qllc_diag d;
  memset(&d, 0, sizeof d);
  qllc_model *m = (qllc_model *)1;
  assert_int_not_equal(qllc_model_load(DATA "no_such_model.onnx", &m, &d), QLLC_OK);
  assert_null(m);
  assert_non_null(strstr(d.file, "no_such_model.onnx"));
  memset(&d, 0, sizeof d);
  assert_int_equal(qllc_model_load(DATA "unsupported.onnx", &m, &d), QLLC_ERR_UNSUPPORTED);
  assert_string_equal(d.node, "logsoftmax_node");
  assert_non_null(strstr(d.file, "unsupported.onnx"));
}

/* Runs small.onnx twice (buffers are reused) and checks against the numpy reference; frees the model
 * before the JIT (the JIT keeps it alive). */
static void test_jit_run_small(void **state) {
  qllc_diag d;
  memset(&d, 0, sizeof d);
  qllc_model *m = NULL;
  assert_int_equal(qllc_model_load(DATA "small.onnx", &m, &d), QLLC_OK);
  qllc_jit *j = NULL;
  assert_int_equal(qllc_jit_compile(m, NULL, &j, &d), QLLC_OK);
  qllc_model_free(m);

  assert_int_equal(qllc_jit_num_inputs(j), 1);
  assert_int_equal(qllc_jit_num_outputs(j), 1);
  const qllc_tensor *in = qllc_jit_input(j, 0), *out = qllc_jit_output(j, 0);
  assert_string_equal(in->name, "x");
  assert_int_equal(in->elem, QLLC_F32);
  assert_int_equal(in->rank, 4);
  assert_int_equal(in->dims[3], 5);
  assert_null(in->data);
  assert_string_equal(out->name, "y");
  assert_int_equal(out->rank, 2);
  assert_int_equal(out->dims[1], 4);
  assert_null(qllc_jit_input(j, 1));

  qllc_tensor x = read_npy(DATA "small_x.npy"), ref = read_npy(DATA "small_y_ref.npy");
  for (int run = 0; run < 2; run++) {
    qllc_tensor y;
    assert_int_equal(qllc_jit_run(j, &x, 1, &y, &d), QLLC_OK);
    assert_string_equal(y.name, "y");
    assert_int_equal(y.elem, QLLC_F32);
    for (int i = 0; i < 4; i++) assert_float_equal(((float *)y.data)[i], ((float *)ref.data)[i], 1e-4);
    qllc_tensor_free(&y);
  }
  qllc_tensor_free(&x);
  qllc_tensor_free(&ref);
  qllc_jit_free(j);
}

static void test_jit_run_input_checks(void **state) {
  qllc_diag d;
  memset(&d, 0, sizeof d);
  qllc_model *m = NULL;
  assert_int_equal(qllc_model_load(DATA "two_io.onnx", &m, &d), QLLC_OK);
  qllc_jit *j = NULL;
  assert_int_equal(qllc_jit_compile(m, NULL, &j, &d), QLLC_OK);
  qllc_tensor a = read_npy(DATA "two_io_a.npy"), b = read_npy(DATA "two_io_b.npy");
  qllc_tensor outs[2];

  /* by name, in the "wrong" order */
  qllc_tensor in[2] = {b, a};
  in[0].name = "b";
  in[1].name = "a";
  assert_int_equal(qllc_jit_run(j, in, 2, outs, &d), QLLC_OK);
  assert_string_equal(outs[0].name, "sum:0");
  assert_string_equal(outs[1].name, "out/relu");
  assert_float_equal(((float *)outs[0].data)[0], 1.5f, 0);
  assert_float_equal(((float *)outs[1].data)[1], 0.0f, 0);
  qllc_tensor_free(&outs[0]);
  qllc_tensor_free(&outs[1]);

  /* by position */
  in[0] = a;
  in[1] = b;
  in[0].name = in[1].name = NULL;
  assert_int_equal(qllc_jit_run(j, in, 2, outs, &d), QLLC_OK);
  assert_float_equal(((float *)outs[0].data)[5], 2.0f, 0);
  qllc_tensor_free(&outs[0]);
  qllc_tensor_free(&outs[1]);

  /* missing */
  memset(&d, 0, sizeof d);
  assert_int_equal(qllc_jit_run(j, in, 1, outs, &d), QLLC_ERR_INVALID);
  assert_non_null(strstr(d.message, "missing input 'b'"));
  /* unknown name */
  in[1].name = "c";
  assert_int_equal(qllc_jit_run(j, in, 2, outs, &d), QLLC_ERR_INVALID);
  assert_non_null(strstr(d.message, "'c'"));
  /* wrong shape and wrong kind: the message says expected and got */
  in[1].name = "b";
  in[1].dims[1] = 2;
  assert_int_equal(qllc_jit_run(j, in, 2, outs, &d), QLLC_ERR_INVALID);
  assert_non_null(strstr(d.message, "input 'b'"));
  assert_non_null(strstr(d.message, "expected f32<2 x 3>"));
  assert_non_null(strstr(d.message, "got f32<2 x 2>"));
  in[1].dims[1] = 3;
  in[1].elem = QLLC_I32;
  assert_int_equal(qllc_jit_run(j, in, 2, outs, &d), QLLC_ERR_INVALID);
  assert_non_null(strstr(d.message, "got i32<2 x 3>"));
  /* the same input twice */
  in[1] = a;
  in[0].name = in[1].name = "a";
  assert_int_equal(qllc_jit_run(j, in, 2, outs, &d), QLLC_ERR_INVALID);
  assert_non_null(strstr(d.message, "twice"));

  qllc_tensor_free(&a);
  qllc_tensor_free(&b);
  qllc_jit_free(j);
  qllc_model_free(m);
}

static void test_describe_and_bundle(void **state) {
  qllc_diag d;
  memset(&d, 0, sizeof d);
  qllc_model *m = NULL;
  assert_int_equal(qllc_model_load(DATA "small.onnx", &m, &d), QLLC_OK);
  qllc_options o;
  qllc_options_init(&o);

  char *text = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&text, &len);
  assert_int_equal(qllc_model_describe(m, &o, f, &d), QLLC_OK);
  fclose(f);
  assert_non_null(strstr(text, "f32<1 x 2 x 5 x 5>"));
  assert_non_null(strstr(text, "all nodes float"));
  assert_non_null(strstr(text, "peak"));
  assert_non_null(strstr(text, "qllc_k_conv2d_f32_f32_f32"));
  free(text);

  char dir[] = "/tmp/qllc_api_test_XXXXXX";
  assert_non_null(mkdtemp(dir));
  char sub[600], path[700];
  snprintf(sub, sizeof sub, "%s/out", dir);
  assert_int_equal(qllc_compile_bundle(m, &o, sub, "net", &d), QLLC_OK);
  struct stat sb;
  snprintf(path, sizeof path, "%s/net.o", sub);
  assert_int_equal(stat(path, &sb), 0);
  snprintf(path, sizeof path, "%s/net.h", sub);
  assert_int_equal(stat(path, &sb), 0);
  unlink(path);
  snprintf(path, sizeof path, "%s/net.o", sub);
  unlink(path);
  rmdir(sub);

  /* failures leave nothing: a bad name, quantization (not yet), an unknown CPU */
  assert_int_equal(qllc_compile_bundle(m, &o, sub, "9net", &d), QLLC_ERR_INVALID);
  o.precision = QLLC_PREC_INT8;
  assert_int_not_equal(qllc_compile_bundle(m, &o, sub, "net", &d), QLLC_OK);
  o.precision = QLLC_PREC_FLOAT;
  o.cpu = "no-such-cpu";
  assert_int_not_equal(qllc_compile_bundle(m, &o, sub, "net", &d), QLLC_OK);
  assert_int_not_equal(stat(sub, &sb), 0);
  assert_int_equal(rmdir(dir), 0); /* empty */
  qllc_model_free(m);
}

/* .npz: the deflated file numpy wrote holds the same floats as the per-sample .npy files; a written
 * .npz reads back; qllc_tensor_read refuses an .npz of several arrays. */
static void test_npz(void **state) {
  qllc_diag d;
  memset(&d, 0, sizeof d);
  qllc_tensor *all = NULL;
  int n = 0;
  assert_int_equal(qllc_tensor_read_all(DATA "shapes/digits20.npz", &all, &n, &d), QLLC_OK);
  assert_int_equal(n, 1);
  assert_string_equal(all[0].name, "input");
  assert_int_equal(all[0].rank, 4);
  assert_int_equal(all[0].dims[0], 20);
  qllc_tensor s7 = read_npy(DATA "shapes/digits20/s07.npy");
  assert_memory_equal((float *)all[0].data + 7 * 64, s7.data, 64 * sizeof(float));
  qllc_tensor two[2] = {all[0], s7};
  two[1].name = "s7";
  char path[] = "/tmp/qllc_api_npz_XXXXXX";
  int fd = mkstemp(path);
  assert_true(fd >= 0);
  close(fd);
  assert_int_equal(qllc_tensor_write_npz(path, two, 2, &d), QLLC_OK);
  qllc_tensor *back = NULL;
  int nb = 0;
  assert_int_equal(qllc_tensor_read_all(path, &back, &nb, &d), QLLC_OK);
  assert_int_equal(nb, 2);
  assert_string_equal(back[1].name, "s7");
  assert_memory_equal(back[0].data, all[0].data, 20 * 64 * sizeof(float));
  assert_memory_equal(back[1].data, s7.data, 64 * sizeof(float));
  qllc_tensor one;
  assert_int_equal(qllc_tensor_read(path, &one, &d), QLLC_ERR_INVALID);
  assert_non_null(strstr(d.message, "2 arrays ('input', 's7')"));
  two[1].name = "input";
  assert_int_equal(qllc_tensor_write_npz(path, two, 2, &d), QLLC_ERR_INVALID); /* two arrays of one name */
  remove(path);
  for (int i = 0; i < nb; i++) qllc_tensor_free(&back[i]);
  free(back);
  qllc_tensor_free(&all[0]);
  free(all);
  qllc_tensor_free(&s7);
}

static void note(void *ctx, const char *text) {
  (*(int *)ctx)++;
  assert_non_null(strstr(text, "'x' axis 0 ('batch')"));
}

/* qllc_model_load_opts: shapes pin symbolic dims, the default is one note; qllc_bench's result. */
static void test_shapes_and_bench(void **state) {
  qllc_diag d;
  memset(&d, 0, sizeof d);
  qllc_model *m = NULL;
  int notes = 0;
  qllc_load_options lo;
  memset(&lo, 0, sizeof lo);
  lo.note = note, lo.note_ctx = &notes;
  assert_int_equal(qllc_model_load_opts(DATA "shapes/dynbatch.onnx", &lo, &m, &d), QLLC_OK);
  assert_int_equal(notes, 1);
  qllc_model_free(m);
  qllc_tensor shape;
  memset(&shape, 0, sizeof shape);
  shape.name = "x", shape.rank = 4, shape.dims[0] = 4, shape.dims[1] = 3, shape.dims[2] = 8, shape.dims[3] = 8;
  lo.shapes = &shape, lo.n_shapes = 1;
  assert_int_equal(qllc_model_load_opts(DATA "shapes/dynbatch.onnx", &lo, &m, &d), QLLC_OK);
  assert_int_equal(notes, 1);
  qllc_jit *j = NULL;
  assert_int_equal(qllc_jit_compile(m, NULL, &j, &d), QLLC_OK);
  assert_int_equal(qllc_jit_input(j, 0)->dims[0], 4);
  assert_int_equal(qllc_jit_output(j, 0)->dims[0], 4);
  qllc_jit_free(j);

  qllc_bench_result *r = NULL;
  assert_int_equal(qllc_bench(m, NULL, NULL, 0, 0, 0, &r, &d), QLLC_ERR_INVALID); /* runs 0 */
  assert_int_equal(qllc_bench(m, NULL, NULL, 0, 5, 1, &r, &d), QLLC_OK);
  assert_int_equal(r->runs, 5);
  assert_true(r->n_layers >= 3);
  assert_true(r->min_ns > 0 && r->min_ns <= r->median_ns && r->median_ns <= r->p90_ns);
  assert_string_equal(r->layers[0].op, "Conv");
  assert_true(r->layers[0].ops == 2.0 * 4 * 8 * 8 * 8 * 27); /* 2 x outputs x (3 x 3 x 3) */
  qllc_bench_result_free(r);
  qllc_model_free(m);

  shape.dims[1] = 5; /* a fixed dim changed */
  assert_int_equal(qllc_model_load_opts(DATA "shapes/dynbatch.onnx", &lo, &m, &d), QLLC_ERR_INVALID);
  assert_non_null(strstr(d.message, "--input-shape x: axis 1 is 3 in the model, 5 given"));
  assert_non_null(strstr(d.file, "dynbatch.onnx"));
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_options_defaults),   cmocka_unit_test(test_load_errors_name_file),
      cmocka_unit_test(test_jit_run_small),      cmocka_unit_test(test_jit_run_input_checks),
      cmocka_unit_test(test_describe_and_bundle), cmocka_unit_test(test_npz), cmocka_unit_test(test_shapes_and_bench),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
