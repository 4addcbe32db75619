/* bench/timing.h: the clock and the sort comparison shared by the benchmark programs
 * (bundle_bench.c, onednn.c). */
#ifndef QLLC_BENCH_TIMING_H
#define QLLC_BENCH_TIMING_H
#include <time.h>

static double now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}
#endif
