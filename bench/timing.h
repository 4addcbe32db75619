/* bench/timing.h: the clocks and the sort comparison shared by the benchmark programs
 * (bundle_bench.c, onednn.c, kernel_ab.c). */
#ifndef QLLC_BENCH_TIMING_H
#define QLLC_BENCH_TIMING_H
#include <time.h>

static inline double now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

/* the calling thread's CPU time: what a loaded machine's other work does not add to (kernel_ab.c) */
static inline double thread_cpu_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}
#endif
