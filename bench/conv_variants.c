/* bench/conv_variants.c: the x86_64 8-bit conv variants side by side on ResNet-18's conv shapes, in one
 * process, one thread: the panel variant (qllc_k_conv2d_*__avx512vnni, im2col panels), the direct
 * conv with pixels in the lanes (conv2dc4, stride 1 only) and the direct conv with output channels in
 * the lanes (conv2dcl), the last also with its input and output channel-last ("cl nhwc": x_nhwc = y_nhwc =
 * 1, as the layout pass calls it between two such layers). Not a test: it times, and checks nothing but
 * that the variants agree.
 *
 *   clang-19 -O2 -fno-math-errno -ffp-contract=off -Isrc -Ilibjit/bitcode -Iinclude bench/conv_variants.c \
 *     targets/x86_64/kernels/x86_q8.c src/lower/pack.c src/lower/pack16.c -o build/conv_variants
 *   taskset -c 0 build/conv_variants [--ms MS] [--turns T] [--peak GOPS] [--shape TEXT] [--cold 1]
 *
 * Each turn runs every variant that takes the shape for about MS milliseconds (default 100) and keeps
 * the median call; the figure is the best of T turns (default 5), in microseconds and GOPS (2 ops per
 * MAC); with --peak (the machine's int8 vpdpbusd peak, e.g. from `bench/onednn peak`) also the share
 * of it. --shape runs only the shapes whose name contains TEXT (e.g. "56x56"). --cold 1 writes 64 MiB
 * before every timed call, so that each starts with its weights out of the caches, as a layer of a
 * network larger than the caches does. The lowering's choice for the shape (src/lower/lower_q.c) is
 * marked with '*'. */
#define _POSIX_C_SOURCE 199309L
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../targets/x86_64/kernels/variants.h"
#include "lower/pack.h"

static double now_us(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec * 1e-3;
}
static int cmp_d(const void *a, const void *b) {
  const double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

typedef struct shape {
  const char *name;
  int64_t C, H, W, M, KH, KW, s, p;
} shape;

enum { V_PANEL, V_C4, V_CL, V_CLH, NV };
static const char *vname[NV] = {"panel", "c4", "cl", "cl_nhwc"};

typedef struct layer {
  shape sh;
  int64_t OH, OW, K;
  uint8_t *x, *xh, *y[NV], *scratch[NV]; /* xh: x channel-last */
  int8_t *w[NV];
  int32_t *bias, *m, *n;
} layer;

static void run(const layer *l, int v) {
  const shape *s = &l->sh;
  if (v == V_CLH) {
    qllc_k_conv2dcl_u8_i8_u8__avx512vnni(l->y[v], l->xh, l->w[v], l->bias, l->m, l->n, 1, s->C, s->H, s->W, s->M, l->OH,
                                         l->OW, s->KH, s->KW, s->s, s->s, s->p, s->p, 1, 1, 1, 128, 0, 0, 255,
                                         l->scratch[v], 1, 1);
    return;
  }
  void (*f)(uint8_t *, const uint8_t *, const int8_t *, const int32_t *, const int32_t *, const int32_t *, int64_t,
            int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t,
            int64_t, int64_t, int64_t, int32_t, int32_t, int32_t, int32_t, uint8_t *) =
      v == V_PANEL ? qllc_k_conv2d_u8_i8_u8__avx512vnni : qllc_k_conv2dc4_u8_i8_u8__avx512vnni;
  if (v == V_CL) {
    qllc_k_conv2dcl_u8_i8_u8__avx512vnni(l->y[v], l->x, l->w[v], l->bias, l->m, l->n, 1, s->C, s->H, s->W, s->M, l->OH,
                                         l->OW, s->KH, s->KW, s->s, s->s, s->p, s->p, 1, 1, 1, 128, 0, 0, 255,
                                         l->scratch[v], 0, 0);
    return;
  }
  f(l->y[v], l->x, l->w[v], l->bias, l->m, l->n, 1, s->C, s->H, s->W, s->M, l->OH, l->OW, s->KH, s->KW, s->s, s->s, s->p,
    s->p, 1, 1, 1, 128, 0, 0, 255, l->scratch[v]);
}

static int cold; /* --cold: the caches flushed before every timed call */
static void flush(void) {
  enum { FB = 64 << 20 };
  static uint8_t *buf;
  if (!buf) buf = calloc(FB, 1);
  for (size_t i = 0; i < FB; i += 64) buf[i]++;
}
static double median_us(const layer *l, int v, double ms) {
  enum { MAXN = 4096 };
  static double t[MAXN];
  int n = 0;
  const double end = now_us() + ms * 1e3;
  for (int i = 0; i < 3; i++) run(l, v); /* warm-up */
  while (n < MAXN && (n < 5 || now_us() < end)) {
    if (cold) flush();
    const double a = now_us();
    run(l, v);
    t[n++] = now_us() - a;
  }
  qsort(t, (size_t)n, sizeof t[0], cmp_d);
  return t[n / 2];
}

int main(int argc, char **argv) {
  double ms = 100, peak = 0;
  int turns = 5;
  const char *only = NULL;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!strcmp(argv[i], "--ms")) ms = atof(argv[i + 1]);
    else if (!strcmp(argv[i], "--turns")) turns = atoi(argv[i + 1]);
    else if (!strcmp(argv[i], "--peak")) peak = atof(argv[i + 1]);
    else if (!strcmp(argv[i], "--shape")) only = argv[i + 1];
    else if (!strcmp(argv[i], "--cold")) cold = atoi(argv[i + 1]);
    else return fprintf(stderr, "usage: conv_variants [--ms MS] [--turns T] [--peak GOPS] [--shape TEXT] [--cold 1]\n"), 2;
  }
  __builtin_cpu_init();
  if (!__builtin_cpu_supports("avx512vnni") || !__builtin_cpu_supports("avx512bw")) {
    fprintf(stderr, "conv_variants: this CPU has no AVX512-VNNI\n");
    return 77;
  }
  static const shape shapes[] = {
      {"3x3 64->64 56x56", 64, 56, 56, 64, 3, 3, 1, 1},       {"3x3/2 64->128 56x56", 64, 56, 56, 128, 3, 3, 2, 1},
      {"1x1/2 64->128 56x56", 64, 56, 56, 128, 1, 1, 2, 0},   {"3x3 128->128 28x28", 128, 28, 28, 128, 3, 3, 1, 1},
      {"3x3/2 128->256 28x28", 128, 28, 28, 256, 3, 3, 2, 1}, {"1x1/2 128->256 28x28", 128, 28, 28, 256, 1, 1, 2, 0},
      {"3x3 256->256 14x14", 256, 14, 14, 256, 3, 3, 1, 1},   {"3x3/2 256->512 14x14", 256, 14, 14, 512, 3, 3, 2, 1},
      {"1x1/2 256->512 14x14", 256, 14, 14, 512, 1, 1, 2, 0}, {"3x3 512->512 7x7", 512, 7, 7, 512, 3, 3, 1, 1},
      {"1x1 64->256 56x56", 64, 56, 56, 256, 1, 1, 1, 0},     {"1x1 256->64 56x56", 256, 56, 56, 64, 1, 1, 1, 0},
      {"7x7/2 3->64 224x224", 3, 224, 224, 64, 7, 7, 2, 3},   {"7x7/2 4->64 224x224", 4, 224, 224, 64, 7, 7, 2, 3},
  };
  const int ns = (int)(sizeof shapes / sizeof shapes[0]);
  printf("%-24s %10s %10s %10s %10s  (us, best of %d medians; GOPS%s)\n", "shape", vname[0], vname[1], vname[2],
         vname[3], turns,
         peak > 0 ? ", % of peak" : "");
  srand(1);
  for (int si = 0; si < ns; si++) {
    if (only && !strstr(shapes[si].name, only)) continue;
    layer l = {.sh = shapes[si]};
    const shape *s = &l.sh;
    l.OH = (s->H + 2 * s->p - s->KH) / s->s + 1, l.OW = (s->W + 2 * s->p - s->KW) / s->s + 1;
    l.K = s->C * s->KH * s->KW;
    const int64_t nx = s->C * s->H * s->W, ny = s->M * l.OH * l.OW, nw = s->M * l.K;
    l.x = malloc((size_t)nx);
    int8_t *w = malloc((size_t)nw);
    l.bias = malloc((size_t)s->M * 4), l.m = malloc((size_t)s->M * 4), l.n = malloc((size_t)s->M * 4);
    for (int64_t i = 0; i < nx; i++) l.x[i] = (uint8_t)(rand() & 255);
    l.xh = malloc((size_t)nx);
    for (int64_t c = 0; c < s->C; c++)
      for (int64_t p = 0; p < s->H * s->W; p++) l.xh[p * s->C + c] = l.x[c * s->H * s->W + p];
    for (int64_t i = 0; i < nw; i++) w[i] = (int8_t)(rand() % 255 - 127);
    for (int64_t i = 0; i < s->M; i++) l.bias[i] = rand() % 1000, l.m[i] = 1 << 30, l.n[i] = 45;
    int ok[NV] = {1, s->s == 1 && qllc_c4_fits(s->C, 1, s->KH, s->KW, 1, 1), qllc_cl_fits(s->C, 1, s->KH, s->KW),
                  qllc_cl_fits(s->C, 1, s->KH, s->KW)};
    static const qllc_layout lay[NV] = {QLLC_LAYOUT_ROWS_K4, QLLC_LAYOUT_ROWS_C4, QLLC_LAYOUT_C4N16, QLLC_LAYOUT_C4N16};
    for (int v = 0; v < NV; v++) {
      if (!ok[v]) continue;
      l.w[v] = aligned_alloc(64, (qllc_pack_size(lay[v], s->M, l.K) + 63) / 64 * 64);
      if (v == V_PANEL) qllc_pack_w8(lay[v], l.w[v], w, s->M, l.K);
      else if (v == V_C4) qllc_pack_w8_c4(l.w[v], w, s->M, l.K, s->KH * s->KW);
      else qllc_pack_w8_c4n16(l.w[v], w, s->M, l.K, s->KH * s->KW);
      const int64_t ss = v == V_PANEL ? qllc_scratch_conv(l.K, 1)
                         : v == V_C4  ? qllc_scratch_c4(s->C, 1, s->W, l.OH, l.OW, s->KH, s->KW, s->p, 1, 1)
                                      : qllc_scratch_cl(s->C, s->W, l.OH, l.OW, s->KH, s->KW, s->s, s->s, s->p, 1, 1);
      l.scratch[v] = aligned_alloc(64, (size_t)(ss + 63) / 64 * 64);
      l.y[v] = malloc((size_t)ny);
    }
    double best[NV] = {0};
    for (int t = 0; t < turns; t++)
      for (int v = 0; v < NV; v++)
        if (ok[v]) {
          const double u = median_us(&l, v, ms);
          if (!best[v] || u < best[v]) best[v] = u;
        }
    if (ok[V_CLH]) { /* back to NCHW for the comparison */
      uint8_t *t = malloc((size_t)ny);
      for (int64_t c = 0; c < s->M; c++)
        for (int64_t p = 0; p < l.OH * l.OW; p++) t[c * l.OH * l.OW + p] = l.y[V_CLH][p * s->M + c];
      memcpy(l.y[V_CLH], t, (size_t)ny);
      free(t);
    }
    for (int v = 1; v < NV; v++)
      if (ok[v] && memcmp(l.y[v], l.y[V_PANEL], (size_t)ny)) {
        fprintf(stderr, "conv_variants: %s differs from the panel variant on %s\n", vname[v], s->name);
        return 1;
      }
    const int c4_pick = ok[V_C4] && (!ok[V_CL] || qllc_c4_lanes_used(s->W, l.OH, l.OW, s->KW, s->p, 1) >= QLLC_C4_MIN_LANES);
    const int pick = c4_pick ? V_C4 : ok[V_CL] && s->KH * s->KW > 1 ? V_CL : V_PANEL;
    const double gop = 2.0 * (double)ny * (double)l.K * 1e-3; /* ops per microsecond = GOPS */
    printf("%-24s", s->name);
    for (int v = 0; v < NV; v++)
      if (ok[v]) printf(" %9.1f%c", best[v], v == pick ? '*' : ' ');
      else printf(" %10s", "-");
    printf("   ");
    for (int v = 0; v < NV; v++)
      if (ok[v]) {
        if (peak > 0) printf(" %s %.0f (%.0f%%)", vname[v], gop / best[v], 100 * gop / best[v] / peak);
        else printf(" %s %.0f", vname[v], gop / best[v]);
      }
    printf("\n");
    fflush(stdout);
    free(l.x), free(l.xh), free(w), free(l.bias), free(l.m), free(l.n);
    for (int v = 0; v < NV; v++)
      if (ok[v]) free(l.w[v]), free(l.scratch[v]), free(l.y[v]);
  }
  return 0;
}
