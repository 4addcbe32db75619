/* digits_bundle_main: runs the sample model as an ahead-of-time bundle, with no qllc library at all.
 *
 * Build (scripts/demo does this):
 *   qllc compile models/digits/digits.onnx -o OUT --name digits [quantization options]
 *   cc -O2 -I OUT examples/digits_bundle_main.c OUT/digits.o -o digits_bundle      (no -lm needed)
 *   ./digits_bundle models/digits/test_x.npy models/digits/test_y.npy [OUT/digits.weights.bin]
 *
 * It reads the test split with a tiny .npy reader (float32 and int64, C order, little endian only),
 * calls digits() once per image and prints the accuracy and the mean time per call. Inputs and outputs
 * may be float or, for a bundle compiled with --quantized-io, integer: the qllc_io tables give the
 * element kind, scale and zero point, and this program converts.
 */
#define _POSIX_C_SOURCE 200112L
#include "digits.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* Median of v[0..n) (sorts v); the mean alone is dominated by preemptions on a busy machine. */
static double median(double *v, int64_t n) {
  if (n == 0) return 0;
  qsort(v, (size_t)n, sizeof(double), cmp_double);
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* The macro prefix is the bundle name; accept it in either case. */
#if defined(DIGITS_MUTABLE_MEM_SIZE)
#define MUT_SIZE DIGITS_MUTABLE_MEM_SIZE
#define ACT_SIZE DIGITS_ACTIVATIONS_MEM_SIZE
#define CONST_SIZE DIGITS_CONSTANT_MEM_SIZE
#define MEM_ALIGN DIGITS_MEM_ALIGN
#define PREPARE DIGITS_prepare
#else
#define MUT_SIZE digits_MUTABLE_MEM_SIZE
#define ACT_SIZE digits_ACTIVATIONS_MEM_SIZE
#define CONST_SIZE digits_CONSTANT_MEM_SIZE
#define MEM_ALIGN digits_MEM_ALIGN
#define PREPARE digits_prepare
#endif

/* ---- a minimal .npy reader ---------------------------------------------------------------------- */

typedef struct npy {
  char kind;       /* 'f' (float32) or 'i' (int64) */
  int rank;
  int64_t dims[8];
  int64_t count;   /* number of elements */
  void *data;
} npy;

/* Finds `key` in the header dict and returns a pointer just past the ':' that follows it. */
static const char *dict_value(const char *hdr, const char *key) {
  const char *p = strstr(hdr, key);
  if (!p) return NULL;
  p = strchr(p + strlen(key), ':');
  if (!p) return NULL;
  p++;
  while (*p == ' ') p++;
  return p;
}

static int npy_read(const char *path, npy *out) {
  memset(out, 0, sizeof *out);
  FILE *f = fopen(path, "rb");
  if (!f) { fprintf(stderr, "%s: cannot open\n", path); return -1; }
  unsigned char pre[10];
  char *hdr = NULL;
  int rc = -1;
  if (fread(pre, 1, 8, f) != 8 || memcmp(pre, "\x93NUMPY", 6) != 0) {
    fprintf(stderr, "%s: not a .npy file\n", path);
    goto done;
  }
  uint32_t hlen;
  if (pre[6] == 1) {
    if (fread(pre + 8, 1, 2, f) != 2) goto trunc;
    hlen = pre[8] | (uint32_t)pre[9] << 8;
  } else if (pre[6] == 2 || pre[6] == 3) {
    unsigned char b[4];
    if (fread(b, 1, 4, f) != 4) goto trunc;
    hlen = b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 | (uint32_t)b[3] << 24;
  } else {
    fprintf(stderr, "%s: unknown .npy version %d\n", path, pre[6]);
    goto done;
  }
  if (hlen > (1u << 20) || !(hdr = malloc(hlen + 1))) goto trunc;
  if (fread(hdr, 1, hlen, f) != hlen) goto trunc;
  hdr[hlen] = 0;

  const char *d = dict_value(hdr, "'descr'");
  size_t esize;
  if (d && strncmp(d, "'<f4'", 5) == 0) { out->kind = 'f'; esize = 4; }
  else if (d && strncmp(d, "'<i8'", 5) == 0) { out->kind = 'i'; esize = 8; }
  else { fprintf(stderr, "%s: only little-endian float32 and int64 are supported\n", path); goto done; }
  const char *fo = dict_value(hdr, "'fortran_order'");
  if (!fo || strncmp(fo, "False", 5) != 0) { fprintf(stderr, "%s: Fortran order not supported\n", path); goto done; }
  const char *s = dict_value(hdr, "'shape'");
  if (!s || *s != '(') { fprintf(stderr, "%s: no shape\n", path); goto done; }
  s++;
  out->count = 1;
  for (;;) {
    while (*s == ' ' || *s == ',') s++;
    if (*s == ')') break;
    char *end;
    long long v = strtoll(s, &end, 10);
    if (end == s || v < 0 || out->rank == 8) { fprintf(stderr, "%s: bad shape\n", path); goto done; }
    out->dims[out->rank++] = v;
    out->count *= v;
    s = end;
  }
  out->data = malloc(out->count * esize + 1);
  if (!out->data) goto trunc;
  if (fread(out->data, esize, out->count, f) != (size_t)out->count) goto trunc;
  rc = 0;
  goto done;
trunc:
  fprintf(stderr, "%s: truncated or too large\n", path);
done:
  if (rc != 0) { free(out->data); out->data = NULL; }
  free(hdr);
  fclose(f);
  return rc;
}

/* ---- element conversion at the boundary --------------------------------------------------------- */

static int64_t io_count(const qllc_io *io) {
  int64_t n = 1;
  for (uint32_t i = 0; i < io->rank; i++) n *= (int64_t)io->dims[i];
  return n;
}

static long clampl(long v, long lo, long hi) { return v < lo ? lo : v > hi ? hi : v; }

/* Round half to even, by hand so that the program needs no -lm (scripts/demo links it without). */
static long round_even(float x) {
  if (!(x > -2e9f && x < 2e9f)) return x > 0 ? 2000000000L : -2000000000L; /* clamped later anyway */
  long i = (long)x; /* truncates toward zero */
  float f = x - (float)i;
  if (f > 0.5f || (f == 0.5f && (i & 1))) i++;
  else if (f < -0.5f || (f == -0.5f && (i & 1))) i--;
  return i;
}

static int store_input(const qllc_io *io, uint8_t *dst, const float *src, int64_t n) {
  for (int64_t i = 0; i < n; i++) {
    float x = src[i];
    long q = io->elem_kind == 0 ? 0 : round_even(x / io->scale) + io->zero_point;
    switch (io->elem_kind) {
    case 0: memcpy(dst + 4 * i, &x, 4); break;
    case 1: ((int8_t *)dst)[i] = (int8_t)clampl(q, -128, 127); break;
    case 2: dst[i] = (uint8_t)clampl(q, 0, 255); break;
    case 3: { int16_t v = (int16_t)clampl(q, -32768, 32767); memcpy(dst + 2 * i, &v, 2); break; }
    default: return -1;
    }
  }
  return 0;
}

static float load_output(const qllc_io *io, const uint8_t *src, int64_t i) {
  float f;
  int16_t h;
  switch (io->elem_kind) {
  case 0: memcpy(&f, src + 4 * i, 4); return f;
  case 1: return io->scale * (float)(((const int8_t *)src)[i] - io->zero_point);
  case 2: return io->scale * (float)(src[i] - io->zero_point);
  case 3: memcpy(&h, src + 2 * i, 2); return io->scale * (float)(h - io->zero_point);
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

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

int main(int argc, char **argv) {
  if (argc < 3 || argc > 4) {
    fprintf(stderr, "usage: %s TEST_X.npy TEST_Y.npy [digits.weights.bin]\n", argv[0]);
    return 2;
  }
  npy xs, ys;
  if (npy_read(argv[1], &xs) != 0 || npy_read(argv[2], &ys) != 0) return 1;
  if (xs.kind != 'f' || ys.kind != 'i' || ys.rank != 1 || xs.rank < 1 || xs.dims[0] != ys.dims[0]) {
    fprintf(stderr, "expected float32 images [N,...] and int64 labels [N]\n");
    return 1;
  }
  const qllc_io *in = &digits_inputs[0], *out = &digits_outputs[0];
  int64_t n = xs.dims[0], per = n ? xs.count / n : 0, classes = io_count(out);
  if (io_count(in) != per) {
    fprintf(stderr, "bundle input %s has %lld elements, each image %lld\n", in->name, (long long)io_count(in),
            (long long)per);
    return 1;
  }

  uint8_t *constant = NULL;
  if (CONST_SIZE > 0) {
    if (argc < 4) { fprintf(stderr, "this bundle keeps its weights in a file: pass digits.weights.bin\n"); return 2; }
    FILE *wf = fopen(argv[3], "rb");
    constant = alloc_aligned(CONST_SIZE);
    if (!wf || !constant || fread(constant, 1, CONST_SIZE, wf) != (size_t)CONST_SIZE) {
      fprintf(stderr, "%s: cannot read %lld bytes of weights\n", argv[3], (long long)CONST_SIZE);
      return 1;
    }
    fclose(wf);
  }
  uint8_t *mut = alloc_aligned(MUT_SIZE), *act = alloc_aligned(ACT_SIZE);
  if (!mut || !act) { fprintf(stderr, "out of memory\n"); return 1; }

  const float *images = xs.data;
  const int64_t *labels = ys.data;
  int64_t correct = 0;
  double t = 0;
  double *per_image = malloc(sizeof(double) * (size_t)(n > 0 ? n : 1));
  if (!per_image) { fprintf(stderr, "out of memory\n"); return 1; }
  if (PREPARE() != 0) { /* AMX tile data (0 at once for a bundle without AMX kernels) */
    fprintf(stderr, "this process may not use AMX: compile the bundle for a CPU without it\n");
    return 1;
  }
  /* One untimed call first (first touch of code and weights), as digits_demo does. */
  if (n > 0 && (store_input(in, mut + in->offset, images, per) != 0 || digits(constant, mut, act) != 0)) {
    fprintf(stderr, "digits() failed on the warm-up call\n");
    return 1;
  }
  for (int64_t i = 0; i < n; i++) {
    if (store_input(in, mut + in->offset, images + i * per, per) != 0) {
      fprintf(stderr, "unsupported input element kind %d\n", in->elem_kind);
      return 1;
    }
    double s = now_s();
    int rc = digits(constant, mut, act);
    per_image[i] = now_s() - s;
    t += per_image[i];
    if (rc != 0) { fprintf(stderr, "digits() returned %d on image %lld\n", rc, (long long)i); return 1; }
    int64_t best = 0;
    float bv = load_output(out, mut + out->offset, 0);
    for (int64_t c = 1; c < classes; c++) {
      float v = load_output(out, mut + out->offset, c);
      if (v > bv) { bv = v; best = c; }
    }
    correct += best == labels[i];
  }
  printf("bundle accuracy %.2f%% (%lld/%lld), %.2f us per image (mean), %.2f us (median)\n",
         n ? 100.0 * correct / n : 0.0, (long long)correct, (long long)n, n ? t / n * 1e6 : 0.0,
         median(per_image, n) * 1e6);
  free(per_image);
  free(constant);
  free(mut);
  free(act);
  free(xs.data);
  free(ys.data);
  return 0;
}
