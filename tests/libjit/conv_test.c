/* tests/libjit/conv_test.c: qllc_k_conv2d_f32_f32_f32 (the natively compiled kernel) against a naive
 * reference in double written here from the ONNX Conv definition, on odd shapes, strides, asymmetric
 * pads, dilations, groups (incl. depthwise), with and without bias and fused clamp; and on ResNet-sized
 * shapes that exercise the packed-panel GEMM (several k chunks, several pixel panels, a partial last
 * tile, output channels left over from the 8-row tile), also bit for bit against a float direct loop in
 * the documented summation order (bias, then c, kh, kw ascending, padded taps adding w * 0). */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "kernels_f32.h"

static uint32_t rng = 12345u;
static float frand(void) { /* uniform in [-1, 1) */
  rng = rng * 1664525u + 1013904223u;
  return (float)((rng >> 8) * (1.0 / 8388608.0)) - 1.0f;
}

typedef struct {
  int64_t N, C, H, W, M, KH, KW, sh, sw, pt, pl, pb, pr, dh, dw, group;
  int bias;
  float lo, hi;
} conv_case;

static void run_case_exact(const conv_case *t, int exact) {
  const int64_t OH = (t->H + t->pt + t->pb - t->dh * (t->KH - 1) - 1) / t->sh + 1;
  const int64_t OW = (t->W + t->pl + t->pr - t->dw * (t->KW - 1) - 1) / t->sw + 1;
  const int64_t cg = t->C / t->group, mg = t->M / t->group;
  const size_t nx = t->N * t->C * t->H * t->W, nw = t->M * cg * t->KH * t->KW, ny = t->N * t->M * OH * OW;
  float *x = malloc(nx * sizeof *x), *w = malloc(nw * sizeof *w), *b = malloc(t->M * sizeof *b);
  float *y = malloc(ny * sizeof *y);
  for (size_t i = 0; i < nx; i++) x[i] = frand() * 3.0f;
  for (size_t i = 0; i < nw; i++) w[i] = frand();
  for (int64_t i = 0; i < t->M; i++) b[i] = frand();
  for (size_t i = 0; i < ny; i++) y[i] = NAN;
  qllc_k_conv2d_f32_f32_f32(y, x, w, t->bias ? b : NULL, t->N, t->C, t->H, t->W, t->M, OH, OW, t->KH, t->KW,
                            t->sh, t->sw, t->pt, t->pl, t->dh, t->dw, t->group, t->lo, t->hi);
  for (int64_t n = 0; n < t->N; n++)
    for (int64_t m = 0; m < t->M; m++)
      for (int64_t oh = 0; oh < OH; oh++)
        for (int64_t ow = 0; ow < OW; ow++) {
          double s = t->bias ? b[m] : 0.0, mag = fabs(s);
          const int64_t g = m / mg;
          for (int64_t c = 0; c < cg; c++)
            for (int64_t kh = 0; kh < t->KH; kh++)
              for (int64_t kw = 0; kw < t->KW; kw++) {
                const int64_t ih = oh * t->sh + kh * t->dh - t->pt, iw = ow * t->sw + kw * t->dw - t->pl;
                if (ih < 0 || ih >= t->H || iw < 0 || iw >= t->W) continue;
                const double p = (double)x[((n * t->C + g * cg + c) * t->H + ih) * t->W + iw] *
                                 w[((m * cg + c) * t->KH + kh) * t->KW + kw];
                s += p;
                mag += fabs(p);
              }
          if (s < t->lo) s = t->lo;
          if (s > t->hi) s = t->hi;
          const float got = y[((n * t->M + m) * OH + oh) * OW + ow];
          if (!(fabs(got - s) <= 1e-6 * (mag + 1.0)))
            fail_msg("n=%ld m=%ld oh=%ld ow=%ld: got %.9g want %.9g", (long)n, (long)m, (long)oh, (long)ow,
                     got, s);
          if (exact) {
            volatile float f = t->bias ? b[m] : 0.0f; /* volatile: one rounding per operation */
            for (int64_t c = 0; c < cg; c++)
              for (int64_t kh = 0; kh < t->KH; kh++)
                for (int64_t kw = 0; kw < t->KW; kw++) {
                  const int64_t ih = oh * t->sh + kh * t->dh - t->pt, iw = ow * t->sw + kw * t->dw - t->pl;
                  const int inside = ih >= 0 && ih < t->H && iw >= 0 && iw < t->W;
                  volatile float p = w[((m * cg + c) * t->KH + kh) * t->KW + kw] *
                                     (inside ? x[((n * t->C + g * cg + c) * t->H + ih) * t->W + iw] : 0.0f);
                  f = f + p;
                }
            float fe = f;
            fe = fe < t->lo ? t->lo : fe;
            fe = fe > t->hi ? t->hi : fe;
            if (memcmp(&fe, &got, sizeof got) != 0)
              fail_msg("n=%ld m=%ld oh=%ld ow=%ld: got %.9g, the float loop gives %.9g", (long)n, (long)m,
                       (long)oh, (long)ow, got, fe);
          }
        }
  free(x);
  free(w);
  free(b);
  free(y);
}

static void run_case(const conv_case *t) { run_case_exact(t, 1); }

#define NOACT -INFINITY, INFINITY

static void test_trivial(void **state) {
  (void)state;
  const conv_case t = {1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1, 1, 1, NOACT};
  run_case(&t);
}

static void test_3x3_same(void **state) {
  (void)state;
  const conv_case t = {2, 3, 7, 17, 4, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, NOACT};
  run_case(&t);
}

static void test_stride_dilation_asym_pads(void **state) {
  (void)state;
  const conv_case a = {1, 3, 17, 7, 5, 3, 5, 2, 3, 2, 1, 0, 3, 2, 1, 1, 0, NOACT};
  run_case(&a);
  const conv_case b = {1, 2, 17, 17, 3, 3, 3, 3, 2, 0, 2, 1, 0, 3, 4, 1, 1, NOACT};
  run_case(&b);
  /* pads wider than the kernel: border outputs see only padding and equal the bias */
  const conv_case c = {1, 1, 3, 7, 2, 2, 2, 1, 1, 3, 3, 3, 3, 1, 1, 1, 1, NOACT};
  run_case(&c);
}

static void test_pointwise(void **state) {
  (void)state;
  const conv_case a = {1, 17, 7, 7, 3, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1, 1, 1, NOACT};
  run_case(&a);
  const conv_case b = {3, 7, 17, 3, 17, 1, 1, 2, 2, 0, 0, 0, 0, 1, 1, 1, 0, NOACT};
  run_case(&b);
}

static void test_groups(void **state) {
  (void)state;
  const conv_case a = {1, 6, 7, 17, 9, 3, 3, 2, 1, 1, 1, 1, 1, 1, 1, 3, 1, NOACT};
  run_case(&a);
  const conv_case b = {2, 4, 7, 7, 2, 3, 1, 1, 1, 1, 0, 1, 0, 1, 1, 2, 0, NOACT};
  run_case(&b);
}

static void test_depthwise(void **state) {
  (void)state;
  const conv_case a = {1, 7, 17, 17, 7, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 7, 1, NOACT};
  run_case(&a);
  /* depthwise with channel multiplier 2, stride 2, dilation 2 */
  const conv_case b = {1, 3, 17, 7, 6, 3, 3, 2, 2, 2, 2, 2, 2, 2, 2, 3, 1, NOACT};
  run_case(&b);
}

static void test_fused_clamp(void **state) {
  (void)state;
  const conv_case relu = {1, 3, 7, 7, 5, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0.0f, INFINITY};
  run_case(&relu);
  const conv_case relu6 = {1, 3, 7, 7, 5, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, -0.5f, 0.5f};
  run_case(&relu6);
}

/* A hand-computed case: 1x1x3x3 input 1..9, 2x2 kernel of ones, pad 0 -> 2x2 sums of windows. */
static void test_hand_computed(void **state) {
  (void)state;
  const float x[9] = {1, 2, 3, 4, 5, 6, 7, 8, 9}, w[4] = {1, 1, 1, 1}, b[1] = {0.5f};
  float y[4];
  qllc_k_conv2d_f32_f32_f32(y, x, w, b, 1, 1, 3, 3, 1, 2, 2, 2, 2, 1, 1, 0, 0, 1, 1, 1, -INFINITY, INFINITY);
  assert_true(y[0] == 12.5f && y[1] == 16.5f && y[2] == 24.5f && y[3] == 28.5f);
}

/* ResNet-18-like layers at reduced size. 3x3, 64 -> 20 channels on 20x20: k = 576 in 5 panels of
 * at most 128 rows, 400 pixels in 4 panels (the last 16 pixels: a partial tile), 20 = 8 + 8 + 4 output
 * channels. */
static void test_resnet_3x3(void **state) {
  (void)state;
  const conv_case t = {1, 64, 20, 20, 20, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0.0f, INFINITY};
  run_case(&t);
}

/* The stem: 7x7 stride 2 pad 3 from 3 channels; 17 output channels (8 + 8 + 1); wide stride-2 rows. */
static void test_resnet_stem(void **state) {
  (void)state;
  const conv_case t = {1, 3, 29, 31, 17, 7, 7, 2, 2, 3, 3, 3, 3, 1, 1, 1, 1, 0.0f, INFINITY};
  run_case(&t);
  /* Rows of stride 2 wide enough for the packer's 16 pixels from 32 floats (conv_panel_f32.h): the stem
   * 75 wide, a 3x3 of pad 1 and a 1x1 70 and 66 wide, a dilation of 2, an odd width */
  const conv_case w[] = {
      {1, 3, 11, 75, 9, 7, 7, 2, 2, 3, 3, 3, 3, 1, 1, 1, 1, 0.0f, INFINITY},
      {1, 4, 6, 70, 10, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 1, 1, NOACT},
      {1, 5, 4, 66, 9, 1, 1, 2, 2, 0, 0, 0, 0, 1, 1, 1, 0, NOACT},
      {1, 2, 9, 81, 3, 3, 3, 2, 2, 2, 2, 1, 2, 2, 2, 1, 1, NOACT},
  };
  for (size_t i = 0; i < sizeof w / sizeof w[0]; i++) run_case(&w[i]);
}

/* Deep and small: k = 300 * 9 = 2700 in many chunks over 5x5 = 25 pixels (one partial tile); a 1x1
 * stride-2 downsample; two images and two groups with 12 output channels each (8 + 4). */
static void test_deep_small(void **state) {
  (void)state;
  const conv_case a = {1, 300, 5, 5, 9, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, NOACT};
  run_case(&a);
  const conv_case b = {1, 40, 13, 13, 24, 1, 1, 2, 2, 0, 0, 0, 0, 1, 1, 1, 0, NOACT};
  run_case(&b);
  const conv_case c = {2, 20, 9, 15, 24, 3, 3, 1, 2, 1, 1, 1, 1, 1, 1, 2, 1, -0.25f, 0.25f};
  run_case(&c);
}

int main(void) {
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_trivial),    cmocka_unit_test(test_3x3_same), cmocka_unit_test(test_stride_dilation_asym_pads),
    cmocka_unit_test(test_pointwise),  cmocka_unit_test(test_groups),   cmocka_unit_test(test_depthwise),
    cmocka_unit_test(test_fused_clamp), cmocka_unit_test(test_hand_computed), cmocka_unit_test(test_resnet_3x3),
    cmocka_unit_test(test_resnet_stem), cmocka_unit_test(test_deep_small),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
