/* The ONNX backend test suite from Debian's libonnx-testdata, run through qllc's JIT.
 *
 * For every test directory under /usr/share/libonnx-testdata/data/{node,pytorch-converted,
 * pytorch-operator,simple} (model.onnx + test_data_set_N/{input,output}_K.pb):
 *   - a model qllc rejects as unsupported (an op, attribute or type it does not handle) is SKIPPED,
 *     with qllc's own one-line reason; the list of skips is printed at the end, grouped by reason;
 *   - any other failure (a load error that is not "unsupported", a compile error, a crash, a timeout,
 *     a wrong shape or a value outside tolerance) is a FAILURE.
 * Values are compared as the ONNX backend runner does: |got - want| <= atol + rtol * |want| with
 * rtol = 1e-3, atol = 1e-7 (onnx/backend/test/runner defaults); integer outputs exactly.
 * Each test runs in a forked child so one crash cannot take the suite down.
 * Inputs whose test data is not float32 (int64 shapes, axes, pads ...) are bound as compile-time
 * constants (qllc_model_load_bound; see run_one), since qllc compiles for constant shapes.
 *
 * Usage: onnx_backend_test [--data DIR] [--only SUBSTRING] [--verbose]
 * Last line: "N passed, N failed, N skipped". Exit status 1 when anything failed, 77 when the data is
 * not installed.
 */
#define _GNU_SOURCE
/* Paths and messages here are built with bounded snprintf; a truncated diagnostic line is acceptable. */
#pragma GCC diagnostic ignored "-Wformat-truncation"
#if defined(__SANITIZE_ADDRESS__)
#define QLLC_CONFORMANCE_LSAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define QLLC_CONFORMANCE_LSAN 1
#endif
#endif
#if QLLC_CONFORMANCE_LSAN
#include <sanitizer/lsan_interface.h>
#endif
#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "qllc.h"

#define RTOL 1e-3
#define ATOL 1e-7
#define TIMEOUT_S 60

enum { R_PASS = 0, R_FAIL = 1, R_SKIP = 2 };

static int is_dir(const char *p) {
  struct stat st;
  return stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}
static int is_file(const char *p) {
  struct stat st;
  return stat(p, &st) == 0 && S_ISREG(st.st_mode);
}

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* Sorted list of subdirectory names; caller frees. */
static char **list_dirs(const char *dir, int *n) {
  DIR *d = opendir(dir);
  char **v = NULL;
  int cap = 0;
  *n = 0;
  if (!d) return NULL;
  struct dirent *e;
  while ((e = readdir(d))) {
    if (e->d_name[0] == '.') continue;
    char p[4096];
    snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
    if (!is_dir(p)) continue;
    if (*n == cap) v = realloc(v, sizeof(char *) * (cap = cap ? 2 * cap : 64));
    v[(*n)++] = strdup(e->d_name);
  }
  closedir(d);
  qsort(v, *n, sizeof(char *), cmp_str);
  return v;
}

static double elem_at(const qllc_tensor *t, int64_t i) {
  switch (t->elem) {
  case QLLC_F32: return ((const float *)t->data)[i];
  case QLLC_I8: return ((const int8_t *)t->data)[i];
  case QLLC_U8: return ((const uint8_t *)t->data)[i];
  case QLLC_I16: return ((const int16_t *)t->data)[i];
  case QLLC_I32: return ((const int32_t *)t->data)[i];
  case QLLC_I64: return (double)((const int64_t *)t->data)[i];
  }
  return NAN;
}

static int64_t numel(const qllc_tensor *t) {
  int64_t n = 1;
  for (uint32_t i = 0; i < t->rank; i++) n *= t->dims[i];
  return n;
}

/* Whether two bindings are the same: names, kinds, shapes and bytes. */
static int same_bound(const qllc_tensor *a, int na, const qllc_tensor *b, int nb) {
  if (na != nb) return 0;
  for (int i = 0; i < na; i++) {
    if (strcmp(a[i].name ? a[i].name : "", b[i].name ? b[i].name : "") || a[i].elem != b[i].elem || a[i].rank != b[i].rank)
      return 0;
    for (uint32_t k = 0; k < a[i].rank; k++)
      if (a[i].dims[k] != b[i].dims[k]) return 0;
    if (memcmp(a[i].data, b[i].data, (size_t)numel(&a[i]) * qllc_elem_size(a[i].elem))) return 0;
  }
  return 1;
}

/* Tests whose non-float inputs are NOT bound as constants (they stay skipped as unsupported inputs),
 * each with the reason. Empty: every binding case passes. */
static const char *const no_binding[] = {NULL};

static int binding_allowed(const char *dir) {
  const char *base = strrchr(dir, '/');
  base = base ? base + 1 : dir;
  for (int i = 0; no_binding[i]; i++)
    if (!strcmp(base, no_binding[i])) return 0;
  return 1;
}

static void diag_msg(char *msg, size_t msz, const char *what, const qllc_diag *d) {
  snprintf(msg, msz, "%s%s%s%s%s", what, d->node[0] ? "node '" : "", d->node, d->node[0] ? "': " : "", d->message);
}

/* Frees the tensors of a binding list and the list. */
static void free_bound(qllc_tensor *b, int n) {
  for (int i = 0; i < n; i++) qllc_tensor_free(&b[i]);
  free(b);
}

/* Writes a one-line reason into msg; returns R_*. Runs in the child.
 * qllc compiles for constant shapes, so every input whose test data is not float32 (int64 shapes, axes,
 * pads, bool conditions ...) is bound to its data as a compile-time constant (qllc_model_load_bound);
 * only the float inputs are fed at run time. The model is loaded again for a data set whose bound
 * inputs differ from the previous one's. */
static int run_one(const char *dir, char *msg, size_t msz) {
  char path[4096];
  qllc_diag diag;
  memset(&diag, 0, sizeof diag);
  char model_path[4096];
  snprintf(model_path, sizeof model_path, "%s/model.onnx", dir);
  qllc_model *m = NULL;
  qllc_jit *j = NULL;
  qllc_tensor *cur_bound = NULL; /* the bindings m was loaded with */
  int n_cur_bound = -1;          /* -1: nothing loaded yet */
  qllc_options opts;
  qllc_options_init(&opts);
  int bind = binding_allowed(dir);
  int nsets = 0;
  char **sets = list_dirs(dir, &nsets);
  int result = R_PASS, any_set = 0;
  double worst = 0;
  for (int s = 0; s < nsets && result == R_PASS; s++) {
    if (strncmp(sets[s], "test_data_set_", 14) != 0) continue;
    any_set = 1;
    /* every input_K.pb of the set, split into float (fed) and the rest (bound) */
    qllc_tensor *all = NULL;
    int nall = 0;
    for (;; nall++) {
      snprintf(path, sizeof path, "%s/%s/input_%d.pb", dir, sets[s], nall);
      if (!is_file(path)) break;
      all = realloc(all, sizeof *all * (nall + 1));
      memset(&all[nall], 0, sizeof *all);
      if (qllc_tensor_read(path, &all[nall], &diag) != QLLC_OK) {
        snprintf(msg, msz, "input: %s", diag.message);
        result = diag.status == QLLC_ERR_UNSUPPORTED ? R_SKIP : R_FAIL;
        /* a model qllc rejects anyway (optional or sequence inputs ...) is skipped for that reason */
        qllc_diag d2;
        memset(&d2, 0, sizeof d2);
        qllc_model *m2 = NULL;
        if (qllc_model_load(model_path, &m2, &d2) == QLLC_ERR_UNSUPPORTED) {
          diag_msg(msg, msz, "", &d2);
          result = R_SKIP;
        }
        qllc_model_free(m2);
        break;
      }
    }
    /* binding is by name: a set with an unnamed non-float input is run unbound (it stays skipped
       as an unsupported input type, as before binding existed) */
    int bind_set = bind;
    for (int i = 0; i < nall && result == R_PASS; i++)
      if (all[i].elem != QLLC_F32 && (!all[i].name || !all[i].name[0])) bind_set = 0;
    qllc_tensor *in = calloc(nall + 1, sizeof *in), *bound = calloc(nall + 1, sizeof *bound);
    int nin_given = 0, nbound = 0;
    for (int i = 0; i < nall && result == R_PASS; i++) {
      if (bind_set && all[i].elem != QLLC_F32) {
        bound[nbound++] = all[i];
      } else {
        in[nin_given] = all[i];
        in[nin_given++].name = NULL; /* match by position: the .pb names are the ONNX input names anyway */
      }
    }
    int adopted = 0; /* cur_bound took this set's bound tensors */
    if (result == R_PASS && (n_cur_bound < 0 || !same_bound(cur_bound, n_cur_bound, bound, nbound))) {
      qllc_jit_free(j);
      qllc_model_free(m);
      j = NULL, m = NULL;
      free_bound(cur_bound, n_cur_bound);
      cur_bound = malloc(sizeof *bound * (nbound + 1));
      memcpy(cur_bound, bound, sizeof *bound * nbound);
      n_cur_bound = nbound;
      adopted = 1;
      qllc_status st = qllc_model_load_bound(model_path, bound, nbound, &m, &diag);
      if (st != QLLC_OK) {
        diag_msg(msg, msz, "", &diag);
        result = st == QLLC_ERR_UNSUPPORTED ? R_SKIP : R_FAIL;
      } else if ((st = qllc_jit_compile(m, &opts, &j, &diag)) != QLLC_OK) {
        diag_msg(msg, msz, "compile: ", &diag);
        result = st == QLLC_ERR_UNSUPPORTED ? R_SKIP : R_FAIL;
      }
    }
    int nin = j ? qllc_jit_num_inputs(j) : 0, nout = j ? qllc_jit_num_outputs(j) : 0;
    qllc_tensor *want = calloc(nout + 1, sizeof *want), *got = calloc(nout + 1, sizeof *got);
    if (result == R_PASS && nin_given != nin) {
      snprintf(msg, msz, "%s: expected %d inputs, found %d", sets[s], nin, nin_given);
      result = R_FAIL;
    }
    if (result == R_PASS && qllc_jit_run(j, in, nin, got, &diag) != QLLC_OK) {
      snprintf(msg, msz, "run: %s", diag.message);
      result = R_FAIL;
    }
    for (int o = 0; o < nout && result == R_PASS; o++) {
      snprintf(path, sizeof path, "%s/%s/output_%d.pb", dir, sets[s], o);
      if (qllc_tensor_read(path, &want[o], &diag) != QLLC_OK) {
        snprintf(msg, msz, "expected output: %s", diag.message);
        result = diag.status == QLLC_ERR_UNSUPPORTED ? R_SKIP : R_FAIL;
        break;
      }
      int64_t n = numel(&want[o]);
      if (numel(&got[o]) != n) {
        snprintf(msg, msz, "output %d: %lld elements, expected %lld", o, (long long)numel(&got[o]), (long long)n);
        result = R_FAIL;
        break;
      }
      for (int64_t i = 0; i < n; i++) {
        double g = elem_at(&got[o], i), w = elem_at(&want[o], i);
        double err = fabs(g - w);
        int ok = (isnan(w) && isnan(g)) || (isinf(w) && g == w) ||
                 (want[o].elem == QLLC_F32 ? err <= ATOL + RTOL * fabs(w) : g == w);
        if (!ok) {
          snprintf(msg, msz, "output %d element %lld: got %.9g, expected %.9g", o, (long long)i, g, w);
          result = R_FAIL;
          break;
        }
        if (isfinite(err) && err > worst) worst = err;
      }
    }
    /* the set's tensors: when the model was (re)loaded for this set, cur_bound owns the bound ones
       (freed at the next reload or at the end); every other tensor is freed here */
    for (int i = 0; i < nall; i++)
      if (!(adopted && bind_set && all[i].elem != QLLC_F32)) qllc_tensor_free(&all[i]);
    for (int o = 0; o < nout; o++) {
      qllc_tensor_free(&want[o]);
      qllc_tensor_free(&got[o]);
    }
    free(all);
    free(in);
    free(bound);
    free(want);
    free(got);
  }
  if (result == R_PASS && !any_set) {
    snprintf(msg, msz, "no test_data_set_*");
    result = R_FAIL;
  }
  if (result == R_PASS) snprintf(msg, msz, "max abs error %.3g", worst);
  for (int s = 0; s < nsets; s++) free(sets[s]);
  free(sets);
  free_bound(cur_bound, n_cur_bound);
  qllc_jit_free(j);
  qllc_model_free(m);
  return result;
}

/* Forks, runs one test with a timeout, returns R_* and the child's message. */
static int run_isolated(const char *dir, char *msg, size_t msz) {
  int fd[2];
  if (pipe(fd) != 0) {
    snprintf(msg, msz, "pipe: %s", strerror(errno));
    return R_FAIL;
  }
  fflush(stdout);
  pid_t pid = fork();
  if (pid == 0) {
#if QLLC_CONFORMANCE_LSAN
    __lsan_enable(); /* count what this child allocates (main's own lists are allocated with LSan off) */
#endif
    close(fd[0]);
    alarm(TIMEOUT_S);
    char m[1024] = "";
    int r = run_one(dir, m, sizeof m);
#if QLLC_CONFORMANCE_LSAN
    /* under ASan (scripts/test --sanitize) the child checks for leaks before _exit, which skips the
       exit-time check: what one test leaked makes it fail */
    if (__lsan_do_recoverable_leak_check()) {
      snprintf(m, sizeof m, "memory leaked (LeakSanitizer's report is on stderr)");
      r = R_FAIL;
    }
#endif
    dprintf(fd[1], "%d %s", r, m);
    _exit(0);
  }
  close(fd[1]);
  char buf[1200];
  ssize_t len = 0, k;
  while (len < (ssize_t)sizeof buf - 1 && (k = read(fd[0], buf + len, sizeof buf - 1 - len)) > 0) len += k;
  buf[len] = 0;
  close(fd[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  if (WIFSIGNALED(status)) {
    snprintf(msg, msz, "%s", WTERMSIG(status) == SIGALRM ? "timed out" : strsignal(WTERMSIG(status)));
    return R_FAIL;
  }
  int r = R_FAIL;
  int off = 0;
  if (sscanf(buf, "%d %n", &r, &off) < 1) {
    snprintf(msg, msz, "no result from the test process");
    return R_FAIL;
  }
  snprintf(msg, msz, "%s", buf + off);
  return r;
}

typedef struct { char *reason; int count; char *example; } skip_reason;

int main(int argc, char **argv) {
  const char *root = "/usr/share/libonnx-testdata/data";
  const char *only = NULL;
  int verbose = 0;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--data") && i + 1 < argc) root = argv[++i];
    else if (!strcmp(argv[i], "--only") && i + 1 < argc) only = argv[++i];
    else if (!strcmp(argv[i], "--verbose")) verbose = 1;
    else {
      fprintf(stderr, "usage: %s [--data DIR] [--only SUBSTRING] [--verbose]\n", argv[0]);
      return 2;
    }
  }
#if QLLC_CONFORMANCE_LSAN
  __lsan_disable(); /* the parent's lists: a forked child's check would see them as its own leaks */
#endif
  if (!is_dir(root)) {
    printf("skipped: %s is not installed (Debian package libonnx-testdata)\n", root);
    return 77;
  }
  static const char *suites[] = {"node", "pytorch-converted", "pytorch-operator", "simple"};
  int pass = 0, fail = 0, skip = 0;
  /* The whole report also goes to conformance-report.txt in the working directory (ctest runs us in
   * the build tree), so scripts/test can show its summary after ctest's. */
  FILE *report = fopen("conformance-report.txt", "w");
#define OUT(...) do { printf(__VA_ARGS__); if (report) fprintf(report, __VA_ARGS__); } while (0)
  skip_reason *reasons = NULL;
  int nreasons = 0, capreasons = 0;
  char **failures = NULL;
  for (size_t s = 0; s < sizeof suites / sizeof *suites; s++) {
    char sd[4096];
    snprintf(sd, sizeof sd, "%s/%s", root, suites[s]);
    int n = 0;
    char **tests = list_dirs(sd, &n);
    for (int t = 0; t < n; t++) {
      char name[4096], dir[8192], msg[1024];
      snprintf(name, sizeof name, "%s/%s", suites[s], tests[t]);
      snprintf(dir, sizeof dir, "%s/%s", sd, tests[t]);
      free(tests[t]);
      if (only && !strstr(name, only)) continue;
      if (!is_file(strcat(strcpy(msg, dir), "/model.onnx"))) continue;
      int r = run_isolated(dir, msg, sizeof msg);
      if (r == R_PASS) {
        pass++;
        OUT("PASS %s (%s)\n", name, msg);
      } else if (r == R_FAIL) {
        fail++;
        OUT("FAIL %s: %s\n", name, msg);
        failures = realloc(failures, sizeof(char *) * fail);
        failures[fail - 1] = strdup(name);
      } else {
        skip++;
        if (verbose) OUT("SKIP %s: %s\n", name, msg);
        /* group skips by reason with the test-specific node name removed */
        char key[1024];
        const char *p = strstr(msg, "': ");
        snprintf(key, sizeof key, "%s", (!strncmp(msg, "node '", 6) && p) ? p + 3 : msg);
        int k;
        for (k = 0; k < nreasons && strcmp(reasons[k].reason, key); k++) {}
        if (k == nreasons) {
          if (nreasons == capreasons) reasons = realloc(reasons, sizeof *reasons * (capreasons = capreasons ? 2 * capreasons : 64));
          reasons[nreasons++] = (skip_reason){strdup(key), 0, strdup(name)};
        }
        reasons[k].count++;
      }
      fflush(stdout);
    }
    free(tests);
  }
  OUT("\nSkipped (unsupported by qllc), by reason:\n");
  for (int k = 0; k < nreasons; k++) OUT("  %4d  %s  (e.g. %s)\n", reasons[k].count, reasons[k].reason, reasons[k].example);
  if (fail) {
    OUT("\nFailed:\n");
    for (int i = 0; i < fail; i++) OUT("  %s\n", failures[i]);
  }
  OUT("\n%d passed, %d failed, %d skipped\n", pass, fail, skip);
  if (report) fclose(report);
  for (int k = 0; k < nreasons; k++) free(reasons[k].reason), free(reasons[k].example);
  free(reasons);
  for (int i = 0; i < fail; i++) free(failures[i]);
  free(failures);
  return fail ? 1 : 0;
}
