/* bench/bundle_ab.c: A/B of two bundles of one model (e.g. compiled by two builds of qllc, each with its own
 * --name) in one process: their calls alternate, each timed alone in thread CPU time, on the same input
 * (random floats in [0, 1) for a float input, random bytes otherwise). Not a test. Fails if the two give
 * different bytes.
 *
 *   cc -O2 -std=c11 -Wall -Ibench -I. -DA=NAME_A -DB=NAME_B -DHA='"DIR_A/NAME_A.h"' -DHB='"DIR_B/NAME_B.h"' \
 *     bench/bundle_ab.c DIR_A/NAME_A.o DIR_B/NAME_B.o -lm -o ab
 *   taskset -c 1 ./ab [CALLS]        # CALLS (100) calls of each; prints min, 10th percentile, median, B / A
 */
#define _POSIX_C_SOURCE 199309L
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "timing.h"
#include HA
#include HB

#define CAT_(a, b) a##b
#define CAT(a, b) CAT_(a, b)

int main(int argc, char **argv) {
  const int calls = argc > 1 ? atoi(argv[1]) : 100;
  if (calls < 10) return fprintf(stderr, "usage: %s [CALLS >= 10]\n", argv[0]), 2;
  if (CAT(A, _MUTABLE_MEM_SIZE) != CAT(B, _MUTABLE_MEM_SIZE) || CAT(A, _CONSTANT_MEM_SIZE) || CAT(B, _CONSTANT_MEM_SIZE))
    return fprintf(stderr, "bundle_ab: two bundles of one model, weights inside the objects\n"), 2;
  if (CAT(A, _prepare)() != 0 || CAT(B, _prepare)() != 0) return fprintf(stderr, "bundle_ab: prepare refused\n"), 1;
  const size_t nm = (CAT(A, _MUTABLE_MEM_SIZE) + 63) / 64 * 64;
  uint8_t *mut[2] = {aligned_alloc(64, nm), aligned_alloc(64, nm)};
  uint8_t *act[2] = {aligned_alloc(64, (CAT(A, _ACTIVATIONS_MEM_SIZE) + 63) / 64 * 64 + 64),
                     aligned_alloc(64, (CAT(B, _ACTIVATIONS_MEM_SIZE) + 63) / 64 * 64 + 64)};
  srand(1);
  memset(mut[0], 0, nm);
  for (int i = 0; i < CAT(A, _NUM_INPUTS); i++) {
    const qllc_io *in = &CAT(A, _inputs)[i];
    uint8_t *p = mut[0] + in->offset;
    size_t n = 1;
    for (uint32_t d = 0; d < in->rank; d++) n *= (size_t)in->dims[d];
    for (size_t k = 0; k < n; k++)
      if (in->elem_kind == QLLC_F32) ((float *)p)[k] = (float)rand() / (float)RAND_MAX;
      else if (in->elem_kind == QLLC_I8 || in->elem_kind == QLLC_U8) p[k] = (uint8_t)rand();
      else return fprintf(stderr, "bundle_ab: input kind %d not handled\n", in->elem_kind), 2;
  }
  memcpy(mut[1], mut[0], nm);
  double *t[2] = {malloc(sizeof(double) * (size_t)calls), malloc(sizeof(double) * (size_t)calls)};
  for (int i = -3; i < calls; i++) /* 3 calls of each to warm up */
    for (int v = 0; v < 2; v++) {
      const double t0 = thread_cpu_ns();
      const int rc = v ? B(NULL, mut[1], act[1]) : A(NULL, mut[0], act[0]);
      const double dt = (thread_cpu_ns() - t0) * 1e-3;
      if (rc != 0) return fprintf(stderr, "bundle_ab: call failed\n"), 1;
      if (i >= 0) t[v][i] = dt;
    }
  if (memcmp(mut[0], mut[1], nm)) return fprintf(stderr, "bundle_ab: the two bundles' outputs differ\n"), 1;
  for (int v = 0; v < 2; v++) qsort(t[v], (size_t)calls, sizeof(double), cmp_double);
  const int p10 = calls / 10, p50 = calls / 2;
  printf("%d calls each: A min %.1f p10 %.1f median %.1f | B min %.1f p10 %.1f median %.1f us | B/A p10 %.3f median %.3f\n",
         calls, t[0][0], t[0][p10], t[0][p50], t[1][0], t[1][p10], t[1][p50], t[1][p10] / t[0][p10], t[1][p50] / t[0][p50]);
  return 0;
}
