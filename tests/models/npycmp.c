/* npycmp: compares two float32 .npy files element by element, without python.
 *
 *   npycmp ACTUAL.npy EXPECTED.npy ATOL RTOL
 *
 * Passes when the shapes are equal and every element satisfies |a - e| <= ATOL + RTOL * |e| (numpy's
 * allclose rule, the expected file being the reference); NaN only matches NaN. Prints the shape, the
 * largest absolute error, the largest relative error (|a - e| / |e| over elements with e != 0) and the
 * number of elements out of tolerance, and the SQNR in dB (10 log10(sum e^2 / sum (a - e)^2), "inf" when
 * equal; for judging quantized outputs, pass a large tolerance). Exit 0: within tolerance, 1: not, 2: usage or file error.
 * Reads only little-endian '<f4' C-order arrays (what torch/numpy and qllc write).
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct arr {
  int rank;
  long long dims[16];
  long long count;
  float *data;
} arr;

static const char *after_key(const char *hdr, const char *key) {
  const char *p = strstr(hdr, key);
  if (!p || !(p = strchr(p + strlen(key), ':'))) return NULL;
  for (p++; *p == ' '; p++) {}
  return p;
}

static int load(const char *path, arr *a) {
  memset(a, 0, sizeof *a);
  FILE *f = fopen(path, "rb");
  if (!f) { fprintf(stderr, "npycmp: %s: cannot open\n", path); return -1; }
  unsigned char m[8], l[4];
  char *hdr = NULL;
  uint32_t hlen = 0;
  int ok = fread(m, 1, 8, f) == 8 && memcmp(m, "\x93NUMPY", 6) == 0;
  if (ok && m[6] == 1) { ok = fread(l, 1, 2, f) == 2; hlen = l[0] | (uint32_t)l[1] << 8; }
  else if (ok && (m[6] == 2 || m[6] == 3)) {
    ok = fread(l, 1, 4, f) == 4;
    hlen = l[0] | (uint32_t)l[1] << 8 | (uint32_t)l[2] << 16 | (uint32_t)l[3] << 24;
  } else ok = 0;
  ok = ok && hlen < (1u << 20) && (hdr = calloc(1, hlen + 1)) && fread(hdr, 1, hlen, f) == hlen;
  if (!ok) { fprintf(stderr, "npycmp: %s: not a readable .npy file\n", path); goto fail; }
  const char *d = after_key(hdr, "'descr'"), *fo = after_key(hdr, "'fortran_order'"), *s = after_key(hdr, "'shape'");
  if (!d || strncmp(d, "'<f4'", 5) != 0) { fprintf(stderr, "npycmp: %s: not float32 ('<f4')\n", path); goto fail; }
  if (!fo || strncmp(fo, "False", 5) != 0) { fprintf(stderr, "npycmp: %s: Fortran order\n", path); goto fail; }
  if (!s || *s++ != '(') { fprintf(stderr, "npycmp: %s: no shape\n", path); goto fail; }
  a->count = 1;
  for (;;) {
    while (*s == ' ' || *s == ',') s++;
    if (*s == ')') break;
    char *end;
    long long v = strtoll(s, &end, 10);
    if (end == s || v < 0 || a->rank == 16) { fprintf(stderr, "npycmp: %s: bad shape\n", path); goto fail; }
    a->dims[a->rank++] = v;
    a->count *= v;
    s = end;
  }
  a->data = malloc((size_t)a->count * 4 + 4);
  if (!a->data || fread(a->data, 4, (size_t)a->count, f) != (size_t)a->count) {
    fprintf(stderr, "npycmp: %s: truncated data\n", path);
    goto fail;
  }
  free(hdr);
  fclose(f);
  return 0;
fail:
  free(hdr);
  free(a->data);
  a->data = NULL;
  fclose(f);
  return -1;
}

static void print_shape(const arr *a) {
  putchar('[');
  for (int i = 0; i < a->rank; i++) printf(i ? ",%lld" : "%lld", a->dims[i]);
  putchar(']');
}

int main(int argc, char **argv) {
  if (argc != 5) {
    fprintf(stderr, "usage: npycmp ACTUAL.npy EXPECTED.npy ATOL RTOL\n");
    return 2;
  }
  char *e1, *e2;
  double atol = strtod(argv[3], &e1), rtol = strtod(argv[4], &e2);
  if (*e1 || *e2 || atol < 0 || rtol < 0) { fprintf(stderr, "npycmp: bad tolerance\n"); return 2; }
  arr a, e;
  if (load(argv[1], &a) != 0) return 2;
  if (load(argv[2], &e) != 0) return 2;
  int same_shape = a.rank == e.rank;
  for (int i = 0; same_shape && i < a.rank; i++) same_shape = a.dims[i] == e.dims[i];
  if (!same_shape) {
    printf("shape mismatch: actual ");
    print_shape(&a);
    printf(" expected ");
    print_shape(&e);
    putchar('\n');
    return 1;
  }
  double max_abs = 0, max_rel = 0, sig = 0, noise = 0;
  long long bad = 0, worst = -1;
  for (long long i = 0; i < a.count; i++) {
    double x = a.data[i], y = e.data[i];
    if (isnan(x) || isnan(y)) {
      if (!(isnan(x) && isnan(y))) { bad++; if (worst < 0) worst = i; }
      continue;
    }
    double d = fabs(x - y);
    sig += y * y;
    noise += d * d;
    if (d > max_abs) max_abs = d;
    if (y != 0 && d / fabs(y) > max_rel) max_rel = d / fabs(y);
    if (!(d <= atol + rtol * fabs(y))) { if (worst < 0) worst = i; bad++; }
  }
  print_shape(&e);
  printf(" max_abs %.3g max_rel %.3g", max_abs, max_rel);
  if (noise > 0) printf(" sqnr_db %.2f", 10.0 * log10(sig / noise));
  else printf(" sqnr_db inf");
  printf(" out_of_tol %lld/%lld", bad, a.count);
  if (bad) printf(" (first at %lld: %.9g vs %.9g)", worst, a.data[worst], e.data[worst]);
  putchar('\n');
  free(a.data);
  free(e.data);
  return bad ? 1 : 0;
}
