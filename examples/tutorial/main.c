/* examples/tutorial/main.c: the program of docs/tutorial.md. It runs the sample model compiled as a
 * bundle (qllc compile ... --name digits) on one image and prints the ten scores and the digit.
 *
 *   aarch64-linux-gnu-gcc -O2 -I out examples/tutorial/main.c out/digits.o -o digits_app
 *   qemu-aarch64 -L /usr/aarch64-linux-gnu ./digits_app examples/tutorial/eight.pgm
 *
 * The image is a PGM file (P2 text or P5 binary, 8x8, any maxval), as the model was trained on: pixel
 * / maxval in [0, 1]. Only the bundle header is used (docs/bundle.md): the buffer sizes, the alignment,
 * the input and output offsets, and the qllc_io tables, which say whether the bundle's input and output
 * are float or, compiled with --quantized-io, integers with a scale and zero point.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "digits.h"

/* Reads the next number of a PGM header or P2 body, skipping blanks and # comments. */
static int pgm_number(FILE *f, long *v) {
  int c;
  for (;;) {
    c = fgetc(f);
    if (c == '#')
      while (c != '\n' && c != EOF) c = fgetc(f);
    if (c == EOF) return -1;
    if (c < '0' || c > '9') continue;
    break;
  }
  *v = 0;
  for (; c >= '0' && c <= '9'; c = fgetc(f)) *v = *v * 10 + (c - '0');
  return 0;
}

/* Reads an 8x8 PGM into pixels[64] scaled to [0, 1]. */
static int read_pgm(const char *path, float pixels[64]) {
  FILE *f = fopen(path, "rb");
  if (!f) return -1;
  char magic[3] = {0};
  long w, h, maxval;
  int ok = fread(magic, 1, 2, f) == 2 && (!strcmp(magic, "P2") || !strcmp(magic, "P5")) && !pgm_number(f, &w) &&
           !pgm_number(f, &h) && !pgm_number(f, &maxval) && w == 8 && h == 8 && maxval > 0 && maxval < 256;
  for (int i = 0; ok && i < 64; i++) {
    long v;
    if (magic[1] == '2') {
      ok = !pgm_number(f, &v);
    } else {
      int c = fgetc(f);
      ok = c != EOF;
      v = c;
    }
    pixels[i] = (float)v / (float)maxval;
  }
  fclose(f);
  return ok ? 0 : -1;
}

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: %s IMAGE.pgm   (8x8 grey)\n", argv[0]);
    return 2;
  }
  float pixels[64];
  if (read_pgm(argv[1], pixels) != 0) {
    fprintf(stderr, "%s: not an 8x8 PGM image\n", argv[1]);
    return 1;
  }

  /* A bundle compiled for a CPU with AMX asks Linux for the tile data first (0 at once without AMX). */
  if (digits_prepare() != 0) {
    fprintf(stderr, "this process may not use AMX: compile the bundle for a CPU without it\n");
    return 1;
  }
  /* The two regions the bundle needs (its weights are inside the object: constant_weights is NULL). */
  uint8_t *mut = aligned_alloc(digits_MEM_ALIGN, digits_MUTABLE_MEM_SIZE);
  uint8_t *act = aligned_alloc(digits_MEM_ALIGN, digits_ACTIVATIONS_MEM_SIZE);
  if (!mut || !act) return 1;

  /* The input: float, or integers q = round(x / scale) + zero_point with --quantized-io. */
  const qllc_io *in = &digits_inputs[0];
  for (int i = 0; i < 64; i++) {
    if (in->elem_kind == QLLC_F32) {
      ((float *)(mut + in->offset))[i] = pixels[i];
    } else {
      float v = pixels[i] / in->scale; /* rounded half away from zero: no libm needed */
      long q = (long)(v >= 0 ? v + 0.5f : v - 0.5f) + in->zero_point;
      long lo = in->elem_kind == QLLC_U8 ? 0 : in->elem_kind == QLLC_I8 ? -128 : -32768;
      long hi = in->elem_kind == QLLC_U8 ? 255 : in->elem_kind == QLLC_I8 ? 127 : 32767;
      q = q < lo ? lo : q > hi ? hi : q;
      if (in->elem_kind == QLLC_I16) ((int16_t *)(mut + in->offset))[i] = (int16_t)q;
      else if (in->elem_kind == QLLC_I8) ((int8_t *)(mut + in->offset))[i] = (int8_t)q;
      else ((uint8_t *)(mut + in->offset))[i] = (uint8_t)q;
    }
  }

  if (digits(NULL, mut, act) != 0) {
    fprintf(stderr, "digits() failed\n");
    return 1;
  }

  /* The output: ten scores (logits), float or integers x = scale * (q - zero_point). */
  const qllc_io *out = &digits_outputs[0];
  int best = 0;
  float score[10];
  printf("scores:");
  for (int k = 0; k < 10; k++) {
    const uint8_t *p = mut + out->offset;
    if (out->elem_kind == QLLC_F32) score[k] = ((const float *)p)[k];
    else if (out->elem_kind == QLLC_I8) score[k] = out->scale * (float)(((const int8_t *)p)[k] - out->zero_point);
    else if (out->elem_kind == QLLC_U8) score[k] = out->scale * (float)(((const uint8_t *)p)[k] - out->zero_point);
    else score[k] = out->scale * (float)(((const int16_t *)p)[k] - out->zero_point);
    printf(" %.3f", score[k]);
    if (score[k] > score[best]) best = k;
  }
  printf("\ndigit: %d\n", best);
  free(mut);
  free(act);
  return 0;
}
