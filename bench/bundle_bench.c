/* bench/bundle_bench.c: times the entry function of one ahead-of-time bundle (`qllc compile`), for
 * bench/side_by_side.sh. No qllc library: only the bundle's object and header.
 *
 * Build, for a bundle NAME compiled into DIR:
 *   cc -O2 -DBUNDLE=NAME -I DIR bench/bundle_bench.c DIR/NAME.o -lm -o NAME_bench
 * Run:
 *   NAME_bench [--ms RUN_MS] [--warmup-ms W] [--macs M] [--save OUT.f32]
 *
 * The input is the same for every precision: a fixed pseudo-random sequence uniform in [0, 1), stored
 * as the bundle's input kind (float as is; int8/uint8/int16 quantized with the header's scale and zero
 * point, rounded half to even and saturated). Then: warm-up calls for W ms (default 50), then calls for
 * about RUN_MS ms (default 200), at least 20, each timed alone with CLOCK_MONOTONIC around the entry
 * function only. Prints one line:
 *   qllc bundle=NAME in=KIND out=KIND macs=M calls=N median_ns=... min_ns=...
 * --save writes the output of the last call, dequantized to float32 (raw, C order), so that
 * side_by_side.sh can compare the quantized bundles with the float one.
 * It first calls NAME_prepare() (the AMX tile data, as the host of a bundle with __amx kernels must;
 * 0 at once for any other bundle) and stops when it is refused.
 */
#define _POSIX_C_SOURCE 200112L
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#ifndef BUNDLE
#error "build with -DBUNDLE=NAME -I DIR (the directory of NAME.h)"
#endif
#define CAT_(a, b) a##b
#define CAT(a, b) CAT_(a, b)
#define STR_(a) #a
#define STR(a) STR_(a)
#include STR(BUNDLE.h)
#define MUT_SIZE CAT(BUNDLE, _MUTABLE_MEM_SIZE)
#define ACT_SIZE CAT(BUNDLE, _ACTIVATIONS_MEM_SIZE)
#define CONST_SIZE CAT(BUNDLE, _CONSTANT_MEM_SIZE)
#define MEM_ALIGN CAT(BUNDLE, _MEM_ALIGN)
#define INPUTS CAT(BUNDLE, _inputs)
#define OUTPUTS CAT(BUNDLE, _outputs)

#include "timing.h"

static const char *kind_name(int k) {
  static const char *const names[] = {"f32", "i8", "u8", "i16", "i32", "i64"};
  return k >= 0 && k < 6 ? names[k] : "?";
}

static int64_t io_count(const qllc_io *io) {
  int64_t n = 1;
  for (uint32_t i = 0; i < io->rank; i++) n *= (int64_t)io->dims[i];
  return n;
}

static long quant(const qllc_io *io, float x, long lo, long hi) {
  long q = (long)nearbyintf(x / io->scale) + io->zero_point; /* nearbyint: to nearest even */
  return q < lo ? lo : q > hi ? hi : q;
}

static int store_input(const qllc_io *io, uint8_t *dst) {
  uint32_t s = 12345u;
  for (int64_t i = 0, n = io_count(io); i < n; i++) {
    s = s * 1664525u + 1013904223u;
    float x = (float)(s >> 8) / 16777216.0f;
    switch (io->elem_kind) {
    case QLLC_F32: memcpy(dst + 4 * i, &x, 4); break;
    case QLLC_I8: ((int8_t *)dst)[i] = (int8_t)quant(io, x, -128, 127); break;
    case QLLC_U8: dst[i] = (uint8_t)quant(io, x, 0, 255); break;
    case QLLC_I16: {
      int16_t v = (int16_t)quant(io, x, -32768, 32767);
      memcpy(dst + 2 * i, &v, 2);
      break;
    }
    default: return -1;
    }
  }
  return 0;
}

static float load_output(const qllc_io *io, const uint8_t *src, int64_t i) {
  float f;
  int16_t h;
  switch (io->elem_kind) {
  case QLLC_F32: memcpy(&f, src + 4 * i, 4); return f;
  case QLLC_I8: return io->scale * (float)(((const int8_t *)src)[i] - io->zero_point);
  case QLLC_U8: return io->scale * (float)(src[i] - io->zero_point);
  case QLLC_I16: memcpy(&h, src + 2 * i, 2); return io->scale * (float)(h - io->zero_point);
  default: return NAN;
  }
}

static void *alloc_aligned(size_t size) {
  void *p = NULL;
  size_t a = MEM_ALIGN < sizeof(void *) ? sizeof(void *) : MEM_ALIGN;
  if (posix_memalign(&p, a, size ? size : a) != 0) return NULL;
  memset(p, 0, size ? size : a);
  return p;
}

int main(int argc, char **argv) {
  if (CAT(BUNDLE, _prepare)() != 0) { /* the AMX tile data (0 at once for a bundle without AMX kernels) */
    fprintf(stderr, "%s_prepare() refused: this process may not use AMX\n", STR(BUNDLE));
    return 1;
  }
  double run_ms = 200, warm_ms = 50;
  long long macs = 0;
  const char *save = NULL;
  for (int i = 1; i < argc; i++) {
    if (i + 1 >= argc) { fprintf(stderr, "%s: %s needs a value\n", argv[0], argv[i]); return 2; }
    if (strcmp(argv[i], "--ms") == 0) run_ms = atof(argv[++i]);
    else if (strcmp(argv[i], "--warmup-ms") == 0) warm_ms = atof(argv[++i]);
    else if (strcmp(argv[i], "--macs") == 0) macs = atoll(argv[++i]);
    else if (strcmp(argv[i], "--save") == 0) save = argv[++i];
    else {
      fprintf(stderr, "usage: %s [--ms RUN_MS] [--warmup-ms W] [--macs M] [--save OUT.f32]\n", argv[0]);
      return 2;
    }
  }
  if (CONST_SIZE > 0) { fprintf(stderr, "compile the bundle with its weights inside the object\n"); return 2; }
  const qllc_io *in = &INPUTS[0], *out = &OUTPUTS[0];
  uint8_t *mut = alloc_aligned(MUT_SIZE), *act = alloc_aligned(ACT_SIZE);
  if (!mut || !act) { fprintf(stderr, "out of memory\n"); return 1; }
  if (store_input(in, mut + in->offset) != 0) { fprintf(stderr, "input kind %d not handled\n", in->elem_kind); return 1; }

  double t0 = now_ns(), one = 0;
  int warm = 0;
  while (now_ns() - t0 < warm_ms * 1e6 || warm < 3) {
    double s = now_ns();
    if (BUNDLE(NULL, mut, act) != 0) { fprintf(stderr, STR(BUNDLE) "() failed\n"); return 1; }
    one = now_ns() - s;
    warm++;
  }
  int calls = (int)(run_ms * 1e6 / (one > 1 ? one : 1));
  if (calls < 20) calls = 20;
  if (calls > 200000) calls = 200000;
  double *times = malloc(sizeof(double) * (size_t)calls);
  if (!times) return 1;
  for (int r = 0; r < calls; r++) {
    double s = now_ns();
    BUNDLE(NULL, mut, act);
    times[r] = now_ns() - s;
  }
  qsort(times, (size_t)calls, sizeof(double), cmp_double);
  double med = calls % 2 ? times[calls / 2] : 0.5 * (times[calls / 2 - 1] + times[calls / 2]);
  printf("qllc bundle=%s in=%s out=%s macs=%lld calls=%d median_ns=%.0f min_ns=%.0f\n", STR(BUNDLE),
         kind_name(in->elem_kind), kind_name(out->elem_kind), macs, calls, med, times[0]);
  if (save) {
    FILE *f = fopen(save, "wb");
    if (!f) { fprintf(stderr, "%s: cannot write\n", save); return 1; }
    for (int64_t i = 0, n = io_count(out); i < n; i++) {
      float v = load_output(out, mut + out->offset, i);
      fwrite(&v, 4, 1, f);
    }
    fclose(f);
  }
  free(times);
  free(mut);
  free(act);
  return 0;
}
