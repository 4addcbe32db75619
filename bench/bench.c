/* bench: compile time and time per inference of one model through the public API (JIT), single call
 * at a time on one thread.
 *
 *   bench MODEL.onnx [--name NAME] [--runs N] [--warmup W] [--input FILE.npy]
 *         [--precision float|int8|int16] [--profile FILE]
 *
 * Times qllc_model_load, qllc_jit_compile (LLVM codegen included), then W warm-up runs and N timed
 * runs of qllc_jit_run on the same input (the first sample of --input, or a fixed pseudo-random input
 * in [0, 1)). Prints one line:
 *   qllc model=NAME precision=P load_ms=... compile_ms=... median_ms=... min_ms=... cpu_median_ms=...
 *        compile_cpu_ms=... runs=N
 * median/min are wall time; cpu_* are the process CPU time (CLOCK_PROCESS_CPUTIME_ID), which a busy
 * machine disturbs much less.
 * Timing is CLOCK_MONOTONIC around each qllc_jit_run call, so it includes the entry/exit conversions
 * and the output allocation that a library user pays too.
 */
#define _POSIX_C_SOURCE 199309L
#include <qllc.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

static int cmp_double(const void *a, const void *b);

/* CPU time of the process (covers any compile or worker threads): on a shared, loaded machine it is
 * far steadier than wall time. */
static double cpu_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

static double median_of(double *v, int n) {
  qsort(v, (size_t)n, sizeof(double), cmp_double);
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static int fail(const char *what, const qllc_diag *d) {
  fprintf(stderr, "bench: %s: %s: %s", what, qllc_status_name(d->status), d->message);
  if (d->node[0]) fprintf(stderr, " (node %s)", d->node);
  if (d->file[0]) fprintf(stderr, " [%s]", d->file);
  fputc('\n', stderr);
  return 1;
}

static int64_t numel(const qllc_tensor *t) {
  int64_t n = 1;
  for (uint32_t i = 0; i < t->rank; i++) n *= t->dims[i];
  return n;
}

int main(int argc, char **argv) {
  const char *model_path = NULL, *name = NULL, *input_path = NULL;
  int runs = 20, warmup = 3;
  qllc_options opts;
  qllc_options_init(&opts);
  /* "16x8": int16 activations with int8 weights (--precision int16 --weight-precision int8) */
  static const char *const precisions[] = {"float", "int8", "int16", "16x8"};
  const char *prec_name = "float";

  for (int i = 1; i < argc; i++) {
    const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
    if (a[0] != '-') { model_path = a; continue; }
    if (!v) { fprintf(stderr, "bench: %s needs a value\n", a); return 2; }
    i++;
    if (strcmp(a, "--name") == 0) name = v;
    else if (strcmp(a, "--runs") == 0) runs = atoi(v);
    else if (strcmp(a, "--warmup") == 0) warmup = atoi(v);
    else if (strcmp(a, "--input") == 0) input_path = v;
    else if (strcmp(a, "--profile") == 0) opts.profile_path = v;
    else if (strcmp(a, "--precision") == 0) {
      int k = -1;
      for (int j = 0; j < 4; j++) if (strcmp(v, precisions[j]) == 0) k = j;
      if (k < 0) { fprintf(stderr, "bench: --precision float|int8|int16|16x8\n"); return 2; }
      prec_name = precisions[k];
      opts.precision = k == 3 ? QLLC_PREC_INT16 : (qllc_precision)k;
      opts.weight_precision = k == 3 ? QLLC_PREC_INT8 : opts.precision;
    } else { fprintf(stderr, "bench: unknown option %s\n", a); return 2; }
  }
  if (!model_path || runs < 1 || warmup < 0) {
    fprintf(stderr, "usage: bench MODEL.onnx [--name NAME] [--runs N] [--warmup W] [--input FILE.npy]\n"
                    "             [--precision float|int8|int16|16x8] [--profile FILE]\n");
    return 2;
  }
  if (!name) name = model_path;

  qllc_diag diag;
  memset(&diag, 0, sizeof diag);
  qllc_model *model = NULL;
  qllc_jit *jit = NULL;
  qllc_tensor file_in = {0};
  float *data = NULL;
  double *times = NULL, *cpu = NULL;
  int rc = 1;

  double t0 = now_ms();
  if (qllc_model_load(model_path, &model, &diag) != QLLC_OK) { fail("load", &diag); goto out; }
  double t1 = now_ms(), c1 = cpu_ms();
  if (qllc_jit_compile(model, &opts, &jit, &diag) != QLLC_OK) { fail("compile", &diag); goto out; }
  double t2 = now_ms(), c2 = cpu_ms();

  int nin = qllc_jit_num_inputs(jit), nout = qllc_jit_num_outputs(jit);
  if (nin != 1) { fprintf(stderr, "bench: only single-input models (this one has %d)\n", nin); goto out; }
  qllc_tensor in = *qllc_jit_input(jit, 0);
  int64_t n = numel(&in);
  if (in.elem != QLLC_F32) { fprintf(stderr, "bench: input is not float\n"); goto out; }
  data = malloc((size_t)n * sizeof(float));
  if (!data) goto out;
  if (input_path) {
    if (qllc_tensor_read(input_path, &file_in, &diag) != QLLC_OK) { fail("input", &diag); goto out; }
    if (file_in.elem != QLLC_F32 || numel(&file_in) < n) {
      fprintf(stderr, "bench: %s: need at least %lld float32 values\n", input_path, (long long)n);
      goto out;
    }
    memcpy(data, file_in.data, (size_t)n * sizeof(float)); /* the first sample */
  } else {
    uint32_t s = 12345u;
    for (int64_t i = 0; i < n; i++) {
      s = s * 1664525u + 1013904223u;
      data[i] = (float)(s >> 8) / 16777216.0f;
    }
  }
  in.data = data;

  times = malloc(sizeof(double) * (size_t)runs);
  cpu = malloc(sizeof(double) * (size_t)runs);
  qllc_tensor *outs = calloc((size_t)nout, sizeof(qllc_tensor));
  if (!times || !cpu || !outs) { free(outs); goto out; }
  for (int r = 0; r < warmup + runs; r++) {
    double cs = cpu_ms(), s = now_ms();
    qllc_status st = qllc_jit_run(jit, &in, 1, outs, &diag);
    double e = now_ms(), ce = cpu_ms();
    for (int o = 0; st == QLLC_OK && o < nout; o++) qllc_tensor_free(&outs[o]);
    if (st != QLLC_OK) { free(outs); fail("run", &diag); goto out; }
    if (r >= warmup) {
      times[r - warmup] = e - s;
      cpu[r - warmup] = ce - cs;
    }
  }
  free(outs);
  double median = median_of(times, runs), cpu_median = median_of(cpu, runs);
  printf("qllc model=%s precision=%s load_ms=%.2f compile_ms=%.2f median_ms=%.4f min_ms=%.4f "
         "cpu_median_ms=%.4f compile_cpu_ms=%.2f runs=%d\n",
         name, prec_name, t1 - t0, t2 - t1, median, times[0], cpu_median, c2 - c1, runs);
  rc = 0;

out:
  free(times);
  free(cpu);
  free(data);
  qllc_tensor_free(&file_in);
  qllc_jit_free(jit);
  qllc_model_free(model);
  return rc;
}
