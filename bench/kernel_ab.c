/* bench/kernel_ab.c: A/B of two builds of the x86_64 8-bit direct convs (conv2dc4, conv2dcl with NCHW ends)
 * in one process: the calls of build A and build B alternate, each timed alone in thread CPU time, so
 * both see the same machine (load, clock, the other core's work) at the same moments. Not a test. Built
 * by bench/kernel_ab.sh, which compiles targets/x86_64/kernels/x86_q8.c of two source trees with their
 * exported symbols prefixed A_ and B_:
 *
 *   bench/kernel_ab.sh TREE_A TREE_B OUT        # e.g. a `git worktree` of main as A, this checkout as B
 *   taskset -c 1 OUT c4|cl C HW [CALLS [ACT_LO ACT_HI]]
 *
 * The layer: Conv 3x3, pad 1, stride 1, C -> C channels on HW x HW, i8 in and out (z_x -128, z_y -17),
 * per-channel m in [2^30, 1.5 2^30) and n in 40 .. 42 (the 32-bit requantization), output clamped to
 * [ACT_LO, ACT_HI] (default -128 127). Prints per build the minimum, 10th percentile and median of CALLS
 * calls (default 400) in microseconds, and B / A of the last two; fails if the two builds' bytes differ
 * (set NOCHECK=1 to time builds that compute something else, e.g. with a part of the kernel left out). */
#define _POSIX_C_SOURCE 199309L
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "lower/pack.h"
#include "timing.h"

#define QX_CONV_ARGS                                                                                         \
  int8_t *, const int8_t *, const int8_t *, const int32_t *, const int32_t *, const int32_t *, int64_t, int64_t, \
      int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t,       \
      int64_t, int64_t, int64_t, int32_t, int32_t, int32_t, int32_t, uint8_t *
void A_qllc_k_conv2dc4_i8_i8_i8__avx512vnni(QX_CONV_ARGS);
void B_qllc_k_conv2dc4_i8_i8_i8__avx512vnni(QX_CONV_ARGS);
void A_qllc_k_conv2dcl_i8_i8_i8__avx512vnni(QX_CONV_ARGS, int64_t, int64_t);
void B_qllc_k_conv2dcl_i8_i8_i8__avx512vnni(QX_CONV_ARGS, int64_t, int64_t);

int main(int argc, char **argv) {
  if (argc < 4 || (strcmp(argv[1], "c4") && strcmp(argv[1], "cl")))
    return fprintf(stderr, "usage: kernel_ab c4|cl C HW [CALLS [ACT_LO ACT_HI]]\n"), 2;
  const int cl = !strcmp(argv[1], "cl");
  const int64_t C = atoll(argv[2]), H = atoll(argv[3]), W = H, M = C, K = C * 9;
  const int calls = argc > 4 ? atoi(argv[4]) : 400;
  const int32_t lo = argc > 6 ? atoi(argv[5]) : -128, hi = argc > 6 ? atoi(argv[6]) : 127;
  if (C % 4 || C <= 0 || H <= 0 || calls < 10) return fprintf(stderr, "kernel_ab: C a multiple of 4, HW > 0, CALLS >= 10\n"), 2;
  __builtin_cpu_init();
  if (!__builtin_cpu_supports("avx512vnni") || !__builtin_cpu_supports("avx512bw"))
    return fprintf(stderr, "kernel_ab: this CPU has no AVX512-VNNI\n"), 77;
  srand(1);
  int8_t *x = malloc((size_t)(C * H * W)), *w = malloc((size_t)(M * K));
  int8_t *y[2] = {malloc((size_t)(M * H * W)), malloc((size_t)(M * H * W))};
  int32_t *bias = malloc((size_t)M * 4), *m = malloc((size_t)M * 4), *n = malloc((size_t)M * 4);
  for (int64_t i = 0; i < C * H * W; i++) x[i] = (int8_t)(rand() & 255);
  for (int64_t i = 0; i < M * K; i++) w[i] = (int8_t)(rand() % 255 - 127);
  for (int64_t i = 0; i < M; i++) bias[i] = rand() % 100000 - 50000, m[i] = (1 << 30) + rand() % (1 << 29), n[i] = 40 + rand() % 3;
  const qllc_layout lay = cl ? QLLC_LAYOUT_C4N16 : QLLC_LAYOUT_ROWS_C4;
  int8_t *wp = aligned_alloc(64, (size_t)(qllc_pack_size(lay, M, K) + 63) / 64 * 64);
  if (cl) qllc_pack_w8_c4n16(wp, w, M, K, 9);
  else qllc_pack_w8_c4(wp, w, M, K, 9);
  const int64_t ss = cl ? qllc_scratch_cl(C, W, H, W, 3, 3, 1, 1, 1, 1, 1) : qllc_scratch_c4(C, 1, W, H, W, 3, 3, 1, 1, 1);
  uint8_t *scratch[2] = {aligned_alloc(64, (size_t)(ss + 63) / 64 * 64), aligned_alloc(64, (size_t)(ss + 63) / 64 * 64)};
  double *t[2] = {malloc(sizeof(double) * (size_t)calls), malloc(sizeof(double) * (size_t)calls)};
  for (int i = -5; i < calls; i++) /* 5 calls of each to warm up */
    for (int v = 0; v < 2; v++) {
      const double t0 = thread_cpu_ns();
      if (cl)
        (v ? B_qllc_k_conv2dcl_i8_i8_i8__avx512vnni : A_qllc_k_conv2dcl_i8_i8_i8__avx512vnni)(
            y[v], x, wp, bias, m, n, 1, C, H, W, M, H, W, 3, 3, 1, 1, 1, 1, 1, 1, 1, -128, -17, lo, hi, scratch[v], 0, 0);
      else
        (v ? B_qllc_k_conv2dc4_i8_i8_i8__avx512vnni : A_qllc_k_conv2dc4_i8_i8_i8__avx512vnni)(
            y[v], x, wp, bias, m, n, 1, C, H, W, M, H, W, 3, 3, 1, 1, 1, 1, 1, 1, 1, -128, -17, lo, hi, scratch[v]);
      if (i >= 0) t[v][i] = (thread_cpu_ns() - t0) * 1e-3;
    }
  if (!getenv("NOCHECK") && memcmp(y[0], y[1], (size_t)(M * H * W)))
    return fprintf(stderr, "kernel_ab: the two builds' outputs differ\n"), 1;
  for (int v = 0; v < 2; v++) qsort(t[v], (size_t)calls, sizeof(double), cmp_double);
  const int p10 = calls / 10, p50 = calls / 2;
  printf("%s %lld -> %lld %lldx%lld, %d calls each: A min %.1f p10 %.1f median %.1f | B min %.1f p10 %.1f median %.1f us"
         " | B/A p10 %.3f median %.3f\n",
         argv[1], (long long)C, (long long)M, (long long)H, (long long)W, calls, t[0][0], t[0][p10], t[0][p50], t[1][0],
         t[1][p10], t[1][p50], t[1][p10] / t[0][p10], t[1][p50] / t[0][p50]);
  return 0;
}
