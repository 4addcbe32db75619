/* tests/fuzz/regress_main.c: runs a fuzz target's entry point (LLVMFuzzerTestOneInput) on files, in
 * the normal build, without libFuzzer: `fuzz_regress_<target> FILE|DIR...` feeds each file (each file
 * of a directory, in name order) to it once. Used by the ctest tests fuzz/regress_<target> on the inputs
 * in tests/fuzz/regress/<target>/ (each one a crash a fuzzer found, fixed since) and on the seeds.
 * Exit status 0 when every input was run (a crash aborts the program, and the test fails). Like
 * libFuzzer's -rss_limit_mb and -timeout, an input after which the process's peak RSS is over 2 GiB, or
 * that takes more than 25 s of CPU, fails the run: a slow or memory-hungry input is a finding too (a few
 * hundred bytes of ONNX used to make constant folding build several constants of 1 GiB). */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define REGRESS_MAX_RSS_MB 2048
#define REGRESS_MAX_CPU_S 25.0

static double cpu_seconds(const struct rusage *u) {
  return (double)(u->ru_utime.tv_sec + u->ru_stime.tv_sec) + (u->ru_utime.tv_usec + u->ru_stime.tv_usec) * 1e-6;
}

static int run_file(const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f) {
    fprintf(stderr, "cannot open %s\n", path);
    return -1;
  }
  size_t cap = 1 << 16, n = 0;
  uint8_t *buf = malloc(cap);
  for (;;) {
    if (n == cap) buf = realloc(buf, cap *= 2);
    if (!buf) return -1;
    size_t k = fread(buf + n, 1, cap - n, f);
    if (k == 0) break;
    n += k;
  }
  fclose(f);
  printf("%s (%zu bytes)\n", path, n);
  fflush(stdout);
  struct rusage before, after;
  getrusage(RUSAGE_SELF, &before);
  LLVMFuzzerTestOneInput(buf, n);
  getrusage(RUSAGE_SELF, &after);
  free(buf);
  double cpu = cpu_seconds(&after) - cpu_seconds(&before);
  if (after.ru_maxrss / 1024 > REGRESS_MAX_RSS_MB || cpu > REGRESS_MAX_CPU_S) {
    fprintf(stderr, "%s: peak RSS %ld MiB, %.1f s of CPU: over the limits of %d MiB and %.0f s\n", path,
            after.ru_maxrss / 1024, cpu, REGRESS_MAX_RSS_MB, REGRESS_MAX_CPU_S);
    return -1;
  }
  return 0;
}

static int by_name(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

int main(int argc, char **argv) {
  int runs = 0;
  for (int i = 1; i < argc; i++) {
    struct stat st;
    if (stat(argv[i], &st) != 0) {
      fprintf(stderr, "no such file: %s\n", argv[i]);
      return 1;
    }
    if (!S_ISDIR(st.st_mode)) {
      if (run_file(argv[i])) return 1;
      runs++;
      continue;
    }
    DIR *d = opendir(argv[i]);
    if (!d) return 1;
    char **names = NULL;
    int n = 0;
    for (struct dirent *e; (e = readdir(d));) {
      if (e->d_name[0] == '.') continue;
      names = realloc(names, (size_t)(n + 1) * sizeof *names);
      names[n] = malloc(strlen(argv[i]) + strlen(e->d_name) + 2);
      sprintf(names[n++], "%s/%s", argv[i], e->d_name);
    }
    closedir(d);
    qsort(names, (size_t)n, sizeof *names, by_name);
    for (int k = 0; k < n; k++) {
      if (stat(names[k], &st) == 0 && S_ISREG(st.st_mode)) {
        if (run_file(names[k])) return 1;
        runs++;
      }
      free(names[k]);
    }
    free(names);
  }
  printf("%d inputs run\n", runs);
  return 0;
}
