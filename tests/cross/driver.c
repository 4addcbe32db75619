/* tests/cross/driver.c: a generic driver for any qllc bundle, for the cross-compile tests.
 *
 *   cc -DBUNDLE_NAME=digits -DBUNDLE_HEADER='"digits.h"' -I OUT driver.c OUT/digits.o -o drv
 *   drv WEIGHTS.bin|- IN_0.raw ... IN_{n-1}.raw OUT_0.raw ... OUT_{m-1}.raw
 *
 * Knows nothing about the model: everything comes from the header's NAME_inputs / NAME_outputs tables
 * (offset and size in bytes within the mutable region) and the NAME_*_MEM_SIZE / NAME_MEM_ALIGN macros.
 * Inputs and outputs are raw bytes in the bundle's own layout and element kind (float32, or int8/int16
 * with --quantized-io), so the outputs of two bundles can be compared byte for byte with cmp(1).
 *
 * Batching: when every input file holds k times its tensor's size, the bundle is called k times (sample
 * i from each input file) and each output file receives the k results one after the other. qemu start-up
 * dominates a run, so this lets one process classify several images.
 *
 * WEIGHTS.bin is the NAME.weights.bin of a `--weights file` bundle; "-" when the weights are in the
 * object. Only libc is used (no libm), so the same source links for x86_64 and for aarch64, and it is
 * also valid C++17 (g++ -x c++), which is how cross_test.sh checks that the header works from C++.
 * Exit status: 0 ok, 1 usage or I/O error, 2 the bundle returned non-zero. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include BUNDLE_HEADER

#define CAT_(a, b) a##b
#define CAT(a, b) CAT_(a, b)
#define SYM(s) CAT(BUNDLE_NAME, s) /* SYM(_inputs) -> NAME_inputs */

static uint8_t *alloc_aligned(uint64_t size) {
  uint64_t n = (size + SYM(_MEM_ALIGN) - 1) / SYM(_MEM_ALIGN) * SYM(_MEM_ALIGN);
  if (n == 0) n = SYM(_MEM_ALIGN);
  uint8_t *p = (uint8_t *)aligned_alloc(SYM(_MEM_ALIGN), (size_t)n);
  if (p) memset(p, 0, (size_t)n);
  return p;
}

/* The whole file into a fresh buffer (*size bytes); NULL on error. */
static uint8_t *read_file(const char *path, uint64_t *size) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  uint8_t *buf = NULL;
  long n = -1;
  if (fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) >= 0 && fseek(f, 0, SEEK_SET) == 0 &&
      (buf = (uint8_t *)malloc(n ? (size_t)n : 1)) != NULL && fread(buf, 1, (size_t)n, f) != (size_t)n) {
    free(buf);
    buf = NULL;
  }
  fclose(f);
  *size = (uint64_t)n;
  return buf;
}

int main(int argc, char **argv) {
  const int ni = SYM(_NUM_INPUTS), no = SYM(_NUM_OUTPUTS);
  if (argc != 2 + ni + no) {
    fprintf(stderr, "usage: %s WEIGHTS.bin|- IN*%d OUT*%d (raw bytes)\n", argv[0], ni, no);
    return 1;
  }
  uint8_t *constant = NULL;
  if (strcmp(argv[1], "-") != 0) {
    uint64_t n = 0;
    uint8_t *w = read_file(argv[1], &n);
    if (!w || n != (uint64_t)SYM(_CONSTANT_MEM_SIZE)) {
      fprintf(stderr, "driver: %s: cannot read %llu bytes of weights\n", argv[1],
              (unsigned long long)SYM(_CONSTANT_MEM_SIZE));
      return 1;
    }
    if (!(constant = alloc_aligned(n))) return 1;
    memcpy(constant, w, (size_t)n);
    free(w);
  }

  uint8_t *in[SYM(_NUM_INPUTS) > 0 ? SYM(_NUM_INPUTS) : 1];
  uint64_t batch = 1;
  for (int i = 0; i < ni; i++) {
    const qllc_io *io = &SYM(_inputs)[i];
    uint64_t n = 0;
    if (!(in[i] = read_file(argv[2 + i], &n))) {
      fprintf(stderr, "driver: cannot read input %s\n", argv[2 + i]);
      return 1;
    }
    uint64_t k = io->size ? n / io->size : 0;
    if (k == 0 || k * io->size != n || (i > 0 && k != batch)) {
      fprintf(stderr, "driver: %s: %llu bytes, input '%s' wants a multiple of %llu (same count for all inputs)\n",
              argv[2 + i], (unsigned long long)n, io->name, (unsigned long long)io->size);
      return 1;
    }
    batch = k;
  }

  uint8_t *mutable_mem = alloc_aligned(SYM(_MUTABLE_MEM_SIZE));
  uint8_t *activations = alloc_aligned(SYM(_ACTIVATIONS_MEM_SIZE));
  FILE *out[SYM(_NUM_OUTPUTS) > 0 ? SYM(_NUM_OUTPUTS) : 1];
  if (!mutable_mem || !activations) return 1;
  for (int o = 0; o < no; o++)
    if (!(out[o] = fopen(argv[2 + ni + o], "wb"))) {
      fprintf(stderr, "driver: cannot write %s\n", argv[2 + ni + o]);
      return 1;
    }
  if (SYM(_prepare)() != 0) { /* AMX tile data (0 at once without AMX kernels) */
    fprintf(stderr, "driver: the bundle's _prepare() refused\n");
    return 1;
  }
  for (uint64_t b = 0; b < batch; b++) {
    for (int i = 0; i < ni; i++) {
      const qllc_io *io = &SYM(_inputs)[i];
      memcpy(mutable_mem + io->offset, in[i] + b * io->size, (size_t)io->size);
    }
    int rc = BUNDLE_NAME(constant, mutable_mem, activations);
    if (rc != 0) {
      fprintf(stderr, "driver: the bundle returned %d\n", rc);
      return 2;
    }
    for (int o = 0; o < no; o++) {
      const qllc_io *io = &SYM(_outputs)[o];
      if (fwrite(mutable_mem + io->offset, 1, (size_t)io->size, out[o]) != io->size) return 1;
    }
  }
  for (int o = 0; o < no; o++)
    if (fclose(out[o]) != 0) return 1;
  for (int i = 0; i < ni; i++) free(in[i]);
  free(mutable_mem);
  free(activations);
  free(constant);
  return 0;
}
