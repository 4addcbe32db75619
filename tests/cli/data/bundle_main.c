/* bundle_main: a C driver for a qllc bundle, used by tests/cli/bundle_test.sh.
 *
 *   cc -DBUNDLE=small -DBUNDLE_HEADER='"small.h"' bundle_main.c small.o -o driver
 *   driver WEIGHTS.bin|- IN_0.npy ... IN_{n-1}.npy OUT_0.npy ... OUT_{m-1}.npy
 *
 * Uses the bundle exactly as its header documents: buffers of NAME_*_MEM_SIZE aligned to
 * NAME_MEM_ALIGN, inputs copied to and outputs read from the offsets in NAME_inputs / NAME_outputs,
 * element kinds, ranks and dims from those tables. Inputs are little-endian .npy; outputs are written
 * as .npy. Only float32 inputs/outputs are handled (what the float pipeline produces).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include BUNDLE_HEADER

#define CAT_(a, b) a##b
#define CAT(a, b) CAT_(a, b)
#define SYM(s) CAT(BUNDLE, s)

static void *alloc_aligned(size_t size) {
  size_t n = (size + SYM(_MEM_ALIGN) - 1) / SYM(_MEM_ALIGN) * SYM(_MEM_ALIGN);
  void *p = aligned_alloc(SYM(_MEM_ALIGN), n ? n : SYM(_MEM_ALIGN));
  if (!p) exit(3);
  memset(p, 0, n ? n : SYM(_MEM_ALIGN));
  return p;
}

/* Reads the payload of a .npy file into dst, checking that it holds exactly `size` bytes of '<f4'. */
static int read_npy(const char *path, uint8_t *dst, uint64_t size) {
  FILE *f = fopen(path, "rb");
  unsigned char h[10];
  if (!f || fread(h, 1, 10, f) != 10 || memcmp(h, "\x93NUMPY", 6) != 0) {
    fprintf(stderr, "bundle_main: %s: not a .npy file\n", path);
    return -1;
  }
  long hlen = h[8] | (long)h[9] << 8, start = 10 + hlen;
  if (h[6] != 1) { /* version 2/3: 4-byte header length */
    unsigned char l2[2];
    if (fread(l2, 1, 2, f) != 2) return -1;
    hlen = h[8] | (long)h[9] << 8 | (long)l2[0] << 16 | (long)l2[1] << 24;
    start = 12 + hlen;
  }
  char hdr[4096] = "";
  fseek(f, start - hlen, SEEK_SET);
  if (hlen >= (long)sizeof hdr || fread(hdr, 1, (size_t)hlen, f) != (size_t)hlen || !strstr(hdr, "<f4")) {
    fprintf(stderr, "bundle_main: %s: expected a float32 .npy\n", path);
    return -1;
  }
  fseek(f, 0, SEEK_END);
  if ((uint64_t)(ftell(f) - start) != size) {
    fprintf(stderr, "bundle_main: %s: %ld bytes of data, the bundle wants %llu\n", path, ftell(f) - start,
            (unsigned long long)size);
    return -1;
  }
  fseek(f, start, SEEK_SET);
  int ok = fread(dst, 1, size, f) == size;
  fclose(f);
  return ok ? 0 : -1;
}

static int write_npy(const char *path, const qllc_io *io, const uint8_t *src) {
  char shape[256] = "";
  size_t n = 0;
  for (uint32_t d = 0; d < io->rank; d++)
    n += (size_t)snprintf(shape + n, sizeof shape - n, "%llu,%s", (unsigned long long)io->dims[d],
                          d + 1 < io->rank ? " " : "");
  if (io->rank > 1) shape[n - 1] = '\0'; /* numpy writes (1,) for rank 1 only */
  char hdr[512];
  int len = snprintf(hdr, sizeof hdr, "{'descr': '<f4', 'fortran_order': False, 'shape': (%s), }", shape);
  int total = 10 + len + 1, pad = (64 - total % 64) % 64;
  FILE *f = fopen(path, "wb");
  if (!f) return -1;
  unsigned short hl = (unsigned short)(len + pad + 1);
  fwrite("\x93NUMPY\x01\x00", 1, 8, f);
  fputc(hl & 0xff, f);
  fputc(hl >> 8, f);
  fwrite(hdr, 1, (size_t)len, f);
  for (int i = 0; i < pad; i++) fputc(' ', f);
  fputc('\n', f);
  fwrite(src, 1, io->size, f);
  return fclose(f);
}

int main(int argc, char **argv) {
  if (argc != 2 + SYM(_NUM_INPUTS) + SYM(_NUM_OUTPUTS)) {
    fprintf(stderr, "usage: %s WEIGHTS.bin|- IN.npy x%d OUT.npy x%d\n", argv[0], SYM(_NUM_INPUTS),
            SYM(_NUM_OUTPUTS));
    return 2;
  }
  uint8_t *weights = NULL;
  if (strcmp(argv[1], "-") != 0) { /* --weights file: the constant region comes from NAME.weights.bin */
    weights = alloc_aligned(SYM(_CONSTANT_MEM_SIZE));
    FILE *f = fopen(argv[1], "rb");
    if (!f || fread(weights, 1, SYM(_CONSTANT_MEM_SIZE), f) != SYM(_CONSTANT_MEM_SIZE)) {
      fprintf(stderr, "bundle_main: %s: cannot read %llu bytes\n", argv[1],
              (unsigned long long)SYM(_CONSTANT_MEM_SIZE));
      return 1;
    }
    fclose(f);
  }
  uint8_t *mut = alloc_aligned(SYM(_MUTABLE_MEM_SIZE));
  uint8_t *act = alloc_aligned(SYM(_ACTIVATIONS_MEM_SIZE));

  for (int i = 0; i < SYM(_NUM_INPUTS); i++) {
    const qllc_io *io = &SYM(_inputs)[i];
    if (io->elem_kind != 0) {
      fprintf(stderr, "bundle_main: input '%s' is not float32\n", io->name);
      return 1;
    }
    if (read_npy(argv[2 + i], mut + io->offset, io->size) != 0) return 1;
  }
  if (SYM(_prepare)() != 0) { /* AMX tile data (0 at once without AMX kernels) */
    fprintf(stderr, "bundle_main: the bundle's _prepare() refused (AMX tile data)\n");
    return 1;
  }
  int rc = BUNDLE(weights, mut, act);
  if (rc != 0) {
    fprintf(stderr, "bundle_main: the bundle returned %d\n", rc);
    return 1;
  }
  for (int i = 0; i < SYM(_NUM_OUTPUTS); i++) {
    const qllc_io *io = &SYM(_outputs)[i];
    if (write_npy(argv[2 + SYM(_NUM_INPUTS) + i], io, mut + io->offset) != 0) return 1;
  }
  free(weights);
  free(mut);
  free(act);
  return 0;
}
