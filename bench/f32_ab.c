/* bench/f32_ab.c: A/B of two builds of the x86_64 float FC and panel-conv variants (qllc_k_fc_f32_f32_f32__avx512,
 * qllc_k_conv2d_f32_f32_f32__avx512) in one process: the calls of build A and build B alternate, each timed
 * alone in thread CPU time. Not a test. Built by bench/f32_ab.sh (targets/x86_64/kernels/x86_dw8.c of two
 * source trees, clang-19 -O3 as the native tuning kernels, symbols renamed A_* and B_*):
 *
 *   bench/f32_ab.sh TREE_A TREE_B OUT
 *   taskset -c 1 OUT fc CALLS M N K                   # FC, bias, no clamp
 *   taskset -c 1 OUT conv CALLS C HW M KHW STRIDE PAD # Conv, square, N 1, bias, ReLU
 *
 * Inputs and weights are random floats (the weights laid out as F32_N32 / F32_M24 blocks are just random
 * floats there too: both builds read the same ones). The shapes are runtime arguments here, where a bundle
 * specialises the kernel on them, so a figure here is the kernels' and not a bundle's (bench/bundle_ab.c).
 * Prints min, 10th percentile and median per build and B / A; fails if the two builds' outputs differ. */
#define _POSIX_C_SOURCE 199309L
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "timing.h"
#define FCA float *, const float *, const float *, const float *, int64_t, int64_t, int64_t, float, float, uint8_t *
#define CVA float *, const float *, const float *, const float *, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, float, float, uint8_t *
void A_qllc_k_fc_f32_f32_f32__avx512(FCA); void B_qllc_k_fc_f32_f32_f32__avx512(FCA);
void A_qllc_k_conv2d_f32_f32_f32__avx512(CVA); void B_qllc_k_conv2d_f32_f32_f32__avx512(CVA);
static float rnd(void) { return (float)(rand() % 2001 - 1000) / 997.0f; }
int main(int argc, char **argv) {
  if (argc < 6 || (strcmp(argv[1], "fc") && strcmp(argv[1], "conv")) || (!strcmp(argv[1], "conv") && argc < 9))
    return fprintf(stderr, "usage: f32_ab fc CALLS M N K | conv CALLS C HW M KHW STRIDE PAD\n"), 2;
  int fc = !strcmp(argv[1], "fc");
  int calls = atoi(argv[2]);
  int64_t M, N, K, C, H, W, KH, S, P, OH, OW;
  size_t ny, nx, nw, nb;
  if (fc) { M = atoll(argv[3]), N = atoll(argv[4]), K = atoll(argv[5]); ny = M*N; nx = M*K; nw = (N+31)/32*32*K; nb = N; }
  else { C = atoll(argv[3]); H = W = atoll(argv[4]); M = atoll(argv[5]); KH = atoll(argv[6]); S = atoll(argv[7]); P = atoll(argv[8]);
    OH = OW = (H + 2*P - KH)/S + 1; K = C*KH*KH; ny = M*OH*OW; nx = C*H*W; nw = (M+23)/24*24*K; nb = M; }
  srand(1);
  float *x = aligned_alloc(64, nx*4+64), *w = aligned_alloc(64, nw*4+64), *b = malloc(nb*4);
  float *y[2] = {aligned_alloc(64, ny*4+64), aligned_alloc(64, ny*4+64)};
  for (size_t i = 0; i < nx; i++) x[i] = rnd();
  for (size_t i = 0; i < nw; i++) w[i] = rnd();
  for (size_t i = 0; i < nb; i++) b[i] = rnd();
  size_t ss = 1 << 22; /* more than either scratch */
  uint8_t *s[2] = {aligned_alloc(64, ss), aligned_alloc(64, ss)};
  double *t[2] = {malloc(8*calls), malloc(8*calls)};
  for (int i = -5; i < calls; i++) for (int v = 0; v < 2; v++) {
    double t0 = thread_cpu_ns();
    if (fc) (v ? B_qllc_k_fc_f32_f32_f32__avx512 : A_qllc_k_fc_f32_f32_f32__avx512)(y[v], x, w, b, M, N, K, -1e30f, 1e30f, s[v]);
    else (v ? B_qllc_k_conv2d_f32_f32_f32__avx512 : A_qllc_k_conv2d_f32_f32_f32__avx512)(y[v], x, w, b, 1, C, H, W, M, OH, OW, KH, KH, S, S, P, P, 1, 1, 1, 0.0f, 1e30f, s[v]);
    if (i >= 0) t[v][i] = (thread_cpu_ns() - t0) * 1e-3;
  }
  if (memcmp(y[0], y[1], ny*4)) { fprintf(stderr, "f32_ab: the two builds' outputs differ\n"); return 1; }
  for (int v = 0; v < 2; v++) qsort(t[v], calls, 8, cmp_double);
  int p10 = calls/10, p50 = calls/2;
  printf("%s A min %.1f p10 %.1f med %.1f | B min %.1f p10 %.1f med %.1f | B/A p10 %.3f med %.3f\n", argv[1], t[0][0], t[0][p10], t[0][p50], t[1][0], t[1][p10], t[1][p50], t[1][p10]/t[0][p10], t[1][p50]/t[0][p50]);
}
