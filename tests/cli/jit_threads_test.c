/* tests/cli/jit_threads_test.c: one JIT, many threads (include/qllc.h's thread-safety contract).
 *
 * The sample digits model, float and int8 (profiled on its calibration set): 16 different test images
 * are run one at a time to get the reference outputs; then 4 threads make 1000 calls each on the same
 * JIT, each call on image (thread * 7 + call) % 16, and every output must be bit-equal to that image's
 * reference. Before per-call buffers, two threads already got about half of the outputs wrong.
 * Then 2 threads each compile 5 JITs from one shared model (float and int8) and run image 0 on each:
 * the outputs must equal the reference (compiles from one model used to write into its graph at once). */
#include <pthread.h>
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

#define DIGITS QLLC_SOURCE_DIR "/models/digits/"
#define N_IMG 16
#define THREADS 4
#define CALLS 1000

typedef struct shared {
  qllc_jit *jit;
  qllc_tensor in[N_IMG];
  qllc_tensor ref[N_IMG];
  int bad[THREADS], errors[THREADS];
  qllc_model *model;
  const qllc_options *opts;
  pthread_mutex_t count_lock;
  int compile_bad;
} shared;

static void *compile_and_run(void *arg) {
  shared *s = arg;
  for (int r = 0; r < 5; r++) {
    qllc_jit *j;
    qllc_diag d;
    memset(&d, 0, sizeof d);
    int bad = 1;
    if (qllc_jit_compile(s->model, s->opts, &j, &d) == QLLC_OK) {
      qllc_tensor out;
      if (qllc_jit_run(j, &s->in[0], 1, &out, &d) == QLLC_OK) {
        size_t n = 4;
        for (uint32_t k = 0; k < out.rank; k++) n *= out.dims[k];
        bad = memcmp(out.data, s->ref[0].data, n) != 0;
        qllc_tensor_free(&out);
      }
      qllc_jit_free(j);
    }
    pthread_mutex_lock(&s->count_lock);
    s->compile_bad += bad;
    pthread_mutex_unlock(&s->count_lock);
  }
  return NULL;
}

typedef struct worker {
  shared *s;
  int id;
} worker;

static void *work(void *arg) {
  worker *w = arg;
  shared *s = w->s;
  for (int c = 0; c < CALLS; c++) {
    int img = (w->id * 7 + c) % N_IMG;
    qllc_tensor out;
    qllc_diag d;
    memset(&d, 0, sizeof d);
    if (qllc_jit_run(s->jit, &s->in[img], 1, &out, &d) != QLLC_OK) {
      s->errors[w->id]++;
      continue;
    }
    size_t n = 4;
    for (uint32_t k = 0; k < out.rank; k++) n *= out.dims[k];
    if (memcmp(out.data, s->ref[img].data, n) != 0) s->bad[w->id]++;
    qllc_tensor_free(&out);
  }
  return NULL;
}

static void run_threads(const qllc_options *o) {
  qllc_diag d;
  memset(&d, 0, sizeof d);
  qllc_model *m;
  assert_int_equal(qllc_model_load(DIGITS "digits.onnx", &m, &d), QLLC_OK);
  static shared s;
  memset(&s, 0, sizeof s);
  pthread_mutex_init(&s.count_lock, NULL);
  if (qllc_jit_compile(m, o, &s.jit, &d) != QLLC_OK) fail_msg("%s", d.message);
  qllc_tensor all;
  assert_int_equal(qllc_tensor_read(DIGITS "test_x.npy", &all, &d), QLLC_OK);
  const qllc_tensor *want = qllc_jit_input(s.jit, 0);
  size_t bytes = 4;
  for (uint32_t k = 0; k < want->rank; k++) bytes *= want->dims[k];
  for (int i = 0; i < N_IMG; i++) {
    s.in[i] = *want;
    s.in[i].name = NULL;
    s.in[i].data = malloc(bytes);
    memcpy(s.in[i].data, (const char *)all.data + (size_t)i * bytes, bytes);
    if (qllc_jit_run(s.jit, &s.in[i], 1, &s.ref[i], &d) != QLLC_OK) fail_msg("%s", d.message);
  }
  /* compiles from the same model in two threads at once */
  s.model = m;
  s.opts = o;
  pthread_t ct[2];
  for (int i = 0; i < 2; i++) assert_int_equal(pthread_create(&ct[i], NULL, compile_and_run, &s), 0);
  for (int i = 0; i < 2; i++) pthread_join(ct[i], NULL);
  assert_int_equal(s.compile_bad, 0);
  /* the images differ, so a call that read another call's input would show */
  assert_int_not_equal(memcmp(s.ref[0].data, s.ref[1].data, 40), 0);
  pthread_t t[THREADS];
  worker w[THREADS];
  for (int i = 0; i < THREADS; i++) {
    w[i] = (worker){&s, i};
    assert_int_equal(pthread_create(&t[i], NULL, work, &w[i]), 0);
  }
  int bad = 0, errors = 0;
  for (int i = 0; i < THREADS; i++) {
    pthread_join(t[i], NULL);
    bad += s.bad[i];
    errors += s.errors[i];
  }
  printf("%d threads x %d calls: %d outputs differ from the single-threaded ones, %d errors\n", THREADS, CALLS, bad,
         errors);
  assert_int_equal(errors, 0);
  assert_int_equal(bad, 0);
  for (int i = 0; i < N_IMG; i++) {
    free(s.in[i].data);
    qllc_tensor_free(&s.ref[i]);
  }
  qllc_tensor_free(&all);
  qllc_jit_free(s.jit);
  qllc_model_free(m);
}

static void float_threads(void **state) {
  qllc_options o;
  qllc_options_init(&o);
  run_threads(&o);
}

static void int8_threads(void **state) {
  char yaml[] = "/tmp/qllc_jit_threads_XXXXXX";
  int fd = mkstemp(yaml);
  assert_true(fd >= 0);
  close(fd);
  qllc_diag d;
  memset(&d, 0, sizeof d);
  qllc_model *m;
  assert_int_equal(qllc_model_load(DIGITS "digits.onnx", &m, &d), QLLC_OK);
  const char *spec = DIGITS "calib_x.npy";
  if (qllc_profile_dataset(m, &spec, 1, 256, yaml, NULL, NULL, NULL, &d) != QLLC_OK) fail_msg("%s", d.message);
  qllc_model_free(m);
  qllc_options o;
  qllc_options_init(&o);
  o.profile_path = yaml;
  o.precision = QLLC_PREC_INT8;
  run_threads(&o);
  unlink(yaml);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(float_threads),
      cmocka_unit_test(int8_threads),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
