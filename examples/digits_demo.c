/* digits_demo: loads the sample model (models/digits/digits.onnx), JIT-compiles it for this machine
 * through the public API, runs every held-out test image and prints the accuracy and the mean time per
 * image.
 *
 *   digits_demo [MODEL [TEST_X [TEST_Y]]] [--model FILE] [--test-x FILE] [--test-y FILE]
 *               [--precision float|int8|int16] [--profile FILE] [--schema NAME] [--calibration NAME]
 *               [--per-tensor] [--keep-float OP_OR_NODE]... [--strict] [--quiet]
 *
 * The defaults are the files committed under models/digits of the source tree this was built from.
 * Exit status: 0 on success, 1 on a qllc error (the diagnostic is printed), 2 on bad arguments.
 */
#define _POSIX_C_SOURCE 199309L
#include <qllc.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* Median of v[0..n) (sorts v); the mean alone is dominated by preemptions on a busy machine. */
static double median(double *v, int64_t n) {
  if (n == 0) return 0;
  qsort(v, (size_t)n, sizeof(double), cmp_double);
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

#ifndef QLLC_SOURCE_DIR
#define QLLC_SOURCE_DIR "."
#endif

#define MAX_KEEP 32

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int fail(const char *what, const qllc_diag *d) {
  fprintf(stderr, "digits_demo: %s: %s: %s", what, qllc_status_name(d->status), d->message);
  if (d->node[0]) fprintf(stderr, " (node %s)", d->node);
  if (d->file[0]) fprintf(stderr, " [%s]", d->file);
  fputc('\n', stderr);
  return 1;
}

static int usage(const char *msg) {
  if (msg) fprintf(stderr, "digits_demo: %s\n", msg);
  fprintf(stderr,
          "usage: digits_demo [MODEL [TEST_X [TEST_Y]]] [--model FILE] [--test-x FILE] [--test-y FILE]\n"
          "                   [--precision float|int8|int16] [--profile FILE] [--schema NAME]\n"
          "                   [--calibration minmax|percentile|kl] [--per-tensor]\n"
          "                   [--keep-float OP_OR_NODE]... [--strict] [--quiet]\n");
  return 2;
}

static int lookup(const char *s, const char *const *names, int n) {
  for (int i = 0; i < n; i++)
    if (strcmp(s, names[i]) == 0) return i;
  return -1;
}

static int64_t numel(const qllc_tensor *t, uint32_t from) {
  int64_t n = 1;
  for (uint32_t i = from; i < t->rank; i++) n *= t->dims[i];
  return n;
}

int main(int argc, char **argv) {
  const char *model_path = QLLC_SOURCE_DIR "/models/digits/digits.onnx";
  const char *x_path = QLLC_SOURCE_DIR "/models/digits/test_x.npy";
  const char *y_path = QLLC_SOURCE_DIR "/models/digits/test_y.npy";
  const char *keep[MAX_KEEP];
  int quiet = 0;
  qllc_options opts;
  qllc_options_init(&opts);

  static const char *const precisions[] = {"float", "int8", "int16"};
  static const char *const schemas[] = {"asymmetric", "symmetric", "symmetric_uint8", "power2"};
  static const char *const calibrations[] = {"minmax", "percentile", "kl"};
  int positional = 0;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    const char *v = i + 1 < argc ? argv[i + 1] : NULL;
    int k;
    if (strcmp(a, "--per-tensor") == 0) { opts.per_tensor = 1; continue; }
    if (strcmp(a, "--strict") == 0) { opts.strict = 1; continue; }
    if (strcmp(a, "--quiet") == 0) { quiet = 1; continue; }
    if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) { usage(NULL); return 0; }
    if (a[0] != '-') { /* MODEL TEST_X TEST_Y, in that order */
      if (positional == 0) model_path = a;
      else if (positional == 1) x_path = a;
      else if (positional == 2) y_path = a;
      else return usage("too many arguments");
      positional++;
      continue;
    }
    static const char *const valued[] = {"--model", "--test-x", "--test-y", "--profile",
                                         "--precision", "--schema", "--calibration", "--keep-float"};
    if (lookup(a, valued, 8) < 0) { fprintf(stderr, "digits_demo: unknown option %s\n", a); return usage(NULL); }
    if (!v) return usage("option needs a value");
    i++;
    if (strcmp(a, "--model") == 0) model_path = v;
    else if (strcmp(a, "--test-x") == 0) x_path = v;
    else if (strcmp(a, "--test-y") == 0) y_path = v;
    else if (strcmp(a, "--profile") == 0) opts.profile_path = v;
    else if (strcmp(a, "--precision") == 0) {
      if ((k = lookup(v, precisions, 3)) < 0) return usage("--precision: float, int8 or int16");
      opts.precision = (qllc_precision)k;
      opts.weight_precision = (qllc_precision)k;
    } else if (strcmp(a, "--schema") == 0) {
      if ((k = lookup(v, schemas, 4)) < 0) return usage("--schema: unknown schema");
      opts.schema = (qllc_schema)k;
    } else if (strcmp(a, "--calibration") == 0) {
      if ((k = lookup(v, calibrations, 3)) < 0) return usage("--calibration: minmax, percentile or kl");
      opts.calibration = (qllc_calibration)k;
    } else if (strcmp(a, "--keep-float") == 0) {
      if (opts.n_keep_float >= MAX_KEEP) return usage("too many --keep-float");
      keep[opts.n_keep_float++] = v;
      opts.keep_float = keep;
    } else return usage("unknown option");
  }

  qllc_diag diag;
  memset(&diag, 0, sizeof diag);
  qllc_model *model = NULL;
  qllc_jit *jit = NULL;
  qllc_tensor xs = {0}, ys = {0};
  int rc = 1;

  if (qllc_tensor_read(x_path, &xs, &diag) != QLLC_OK) { fail("reading test images", &diag); goto out; }
  if (qllc_tensor_read(y_path, &ys, &diag) != QLLC_OK) { fail("reading test labels", &diag); goto out; }
  if (xs.elem != QLLC_F32 || xs.rank < 2 || ys.elem != QLLC_I64 || ys.rank != 1 || ys.dims[0] != xs.dims[0]) {
    fprintf(stderr, "digits_demo: %s must be f32 [N,...] and %s i64 [N]\n", x_path, y_path);
    goto out;
  }

  double t0 = now_s();
  if (qllc_model_load(model_path, &model, &diag) != QLLC_OK) { fail("loading the model", &diag); goto out; }
  double t1 = now_s();
  if (qllc_jit_compile(model, &opts, &jit, &diag) != QLLC_OK) { fail("compiling", &diag); goto out; }
  double t2 = now_s();

  if (qllc_jit_num_inputs(jit) != 1 || qllc_jit_num_outputs(jit) != 1) {
    fprintf(stderr, "digits_demo: expected a model with one input and one output\n");
    goto out;
  }
  const qllc_tensor *in_desc = qllc_jit_input(jit, 0);
  const qllc_tensor *out_desc = qllc_jit_output(jit, 0);
  int64_t n = xs.dims[0], per = numel(&xs, 1);
  if (numel(in_desc, 0) != per) {
    fprintf(stderr, "digits_demo: model input has %lld elements, each test image %lld\n",
            (long long)numel(in_desc, 0), (long long)per);
    goto out;
  }

  qllc_tensor in = *in_desc; /* shape and name from the model, data from the test set */
  const float *images = (const float *)xs.data;
  const int64_t *labels = (const int64_t *)ys.data;
  int64_t correct = 0;
  double run_time = 0, first_run = 0;
  double *per_image = malloc(sizeof(double) * (size_t)(n > 0 ? n : 1));
  if (!per_image) goto out;
  /* One untimed call first: it touches the code and the weights for the first time (page faults,
   * caches), which is not the steady state a per-image time should describe. */
  if (n > 0) {
    qllc_tensor out = {0};
    in.data = (void *)images;
    double s = now_s();
    if (qllc_jit_run(jit, &in, 1, &out, &diag) != QLLC_OK) { fail("running", &diag); goto out; }
    first_run = now_s() - s;
    qllc_tensor_free(&out);
  }
  for (int64_t i = 0; i < n; i++) {
    qllc_tensor out = {0};
    in.data = (void *)(images + i * per);
    double s = now_s();
    if (qllc_jit_run(jit, &in, 1, &out, &diag) != QLLC_OK) { free(per_image); fail("running", &diag); goto out; }
    per_image[i] = now_s() - s;
    run_time += per_image[i];
    if (out.elem != QLLC_F32) {
      fprintf(stderr, "digits_demo: output %s is %s, expected f32\n", out_desc->name, qllc_elem_name(out.elem));
      qllc_tensor_free(&out);
      free(per_image);
      goto out;
    }
    const float *logits = (const float *)out.data;
    int64_t classes = numel(&out, 0), best = 0;
    for (int64_t c = 1; c < classes; c++)
      if (logits[c] > logits[best]) best = c;
    correct += best == labels[i];
    qllc_tensor_free(&out);
  }

  if (!quiet) {
    printf("model     %s\n", model_path);
    printf("precision %s\n", precisions[opts.precision]);
    printf("load      %.1f ms\n", (t1 - t0) * 1e3);
    printf("compile   %.1f ms\n", (t2 - t1) * 1e3);
    printf("first run %.1f us\n", first_run * 1e6);
  }
  printf("jit accuracy %.2f%% (%lld/%lld), %.2f us per image (mean), %.2f us (median)\n",
         n ? 100.0 * correct / n : 0.0, (long long)correct, (long long)n, n ? run_time / n * 1e6 : 0.0,
         median(per_image, n) * 1e6);
  free(per_image);
  rc = 0;

out:
  qllc_jit_free(jit);
  qllc_model_free(model);
  qllc_tensor_free(&xs);
  qllc_tensor_free(&ys);
  return rc;
}
