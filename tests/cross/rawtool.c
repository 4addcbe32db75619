/* tests/cross/rawtool.c: the two things cross_test.sh needs that the shell cannot do, without python.
 *
 *   rawtool npy2raw IN.npy OUT.raw [FIRST COUNT]
 *       the payload of a little-endian C-order .npy (v1, v2 or v3), or only rows FIRST..FIRST+COUNT-1
 *       along its first axis (e.g. the first 3 images of a [360,1,8,8] array)
 *   rawtool fcmp ACTUAL.raw EXPECTED.raw ATOL
 *       compares two raw float32 files element by element; prints the element count, whether they are
 *       bit-identical, the largest absolute difference and the largest |a-e| / max(1, |e|); exit 0 when
 *       every |a - e| <= ATOL * max(1, |e|) (NaN only matches NaN), 1 when not, 2 on a usage or I/O error.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static unsigned char *slurp(const char *path, long *size) {
  FILE *f = fopen(path, "rb");
  unsigned char *buf = NULL;
  if (!f) return NULL;
  if (fseek(f, 0, SEEK_END) == 0 && (*size = ftell(f)) >= 0 && fseek(f, 0, SEEK_SET) == 0 &&
      (buf = malloc(*size ? (size_t)*size : 1)) != NULL && fread(buf, 1, (size_t)*size, f) != (size_t)*size) {
    free(buf);
    buf = NULL;
  }
  fclose(f);
  return buf;
}

static int npy2raw(int argc, char **argv) {
  long size = 0;
  unsigned char *b = slurp(argv[2], &size);
  if (!b || size < 12 || memcmp(b, "\x93NUMPY", 6) != 0) {
    fprintf(stderr, "rawtool: %s: not a .npy file\n", argv[2]);
    return 2;
  }
  long hlen, start;
  if (b[6] == 1) {
    hlen = b[8] | (long)b[9] << 8;
    start = 10 + hlen;
  } else {
    hlen = b[8] | (long)b[9] << 8 | (long)b[10] << 16 | (long)b[11] << 24;
    start = 12 + hlen;
  }
  if (start > size) return 2;
  char hdr[1024];
  snprintf(hdr, sizeof hdr, "%.*s", (int)hlen, (const char *)b + start - hlen);
  if (strstr(hdr, "'fortran_order': True") || strstr(hdr, "'descr': '>")) {
    fprintf(stderr, "rawtool: %s: only little-endian C-order arrays\n", argv[2]);
    return 2;
  }
  long first = 0, count = -1, rows = 1;
  const char *shape = strstr(hdr, "'shape': (");
  if (shape) rows = strtol(shape + 10, NULL, 10);
  if (argc == 6) {
    first = strtol(argv[4], NULL, 10);
    count = strtol(argv[5], NULL, 10);
  }
  long payload = size - start, row = rows > 0 ? payload / rows : 0;
  if (count < 0) {
    first = 0;
    count = rows > 0 ? rows : 1;
    row = rows > 0 ? row : payload;
  }
  if (first < 0 || count < 0 || (rows > 0 && first + count > rows)) {
    fprintf(stderr, "rawtool: %s: rows %ld..%ld out of %ld\n", argv[2], first, first + count - 1, rows);
    return 2;
  }
  FILE *f = fopen(argv[3], "wb");
  if (!f || fwrite(b + start + first * row, 1, (size_t)(count * row), f) != (size_t)(count * row) || fclose(f)) {
    fprintf(stderr, "rawtool: cannot write %s\n", argv[3]);
    return 2;
  }
  free(b);
  return 0;
}

static int fcmp(char **argv) {
  long na = 0, ne = 0;
  unsigned char *a = slurp(argv[2], &na), *e = slurp(argv[3], &ne);
  double atol = strtod(argv[4], NULL);
  if (!a || !e || na != ne || na % 4) {
    fprintf(stderr, "rawtool: %s (%ld bytes) and %s (%ld bytes) are not comparable float32 files\n", argv[2], na,
            argv[3], ne);
    return 2;
  }
  long n = na / 4, bad = 0;
  double max_abs = 0, max_rel = 0;
  for (long i = 0; i < n; i++) {
    float x, y;
    memcpy(&x, a + 4 * i, 4);
    memcpy(&y, e + 4 * i, 4);
    if (isnan(x) || isnan(y)) {
      if (!(isnan(x) && isnan(y))) bad++;
      continue;
    }
    double d = fabs((double)x - (double)y), r = d / fmax(1.0, fabs((double)y));
    if (d > max_abs) max_abs = d;
    if (r > max_rel) max_rel = r;
    if (r > atol) bad++;
  }
  printf("%ld elements, %s, max abs diff %.3g, max diff/max(1,|e|) %.3g, %ld beyond %g\n", n,
         memcmp(a, e, (size_t)na) == 0 ? "bit-identical" : "NOT bit-identical", max_abs, max_rel, bad, atol);
  free(a);
  free(e);
  return bad ? 1 : 0;
}

int main(int argc, char **argv) {
  if (argc >= 4 && strcmp(argv[1], "npy2raw") == 0 && (argc == 4 || argc == 6)) return npy2raw(argc, argv);
  if (argc == 5 && strcmp(argv[1], "fcmp") == 0) return fcmp(argv);
  fprintf(stderr, "usage: rawtool npy2raw IN.npy OUT.raw [FIRST COUNT] | rawtool fcmp A.raw B.raw ATOL\n");
  return 2;
}
