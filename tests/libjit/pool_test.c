/* tests/libjit/pool_test.c: MaxPool, AveragePool (count_include_pad 0 and 1) and GlobalAveragePool
 * against naive double references written here from the ONNX definitions: every window position is
 * visited and classified as inside the image, inside the padding, or beyond the padded extent
 * (ceil_mode windows). Odd sizes, strides, asymmetric pads, dilations. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <cmocka.h>

#include "kernels_f32.h"

static uint32_t rng = 99u;
static float frand(void) {
  rng = rng * 1664525u + 1013904223u;
  return (float)((rng >> 8) * (1.0 / 8388608.0)) - 1.0f;
}

typedef struct {
  int64_t NC, H, W, KH, KW, sh, sw, pt, pl, pb, pr, dh, dw, ceil_mode;
} pool_case;

static int64_t out_size(int64_t in, int64_t p0, int64_t p1, int64_t k, int64_t d, int64_t s, int64_t ceil_mode) {
  const int64_t span = in + p0 + p1 - d * (k - 1) - 1;
  int64_t o = (ceil_mode ? (span + s - 1) / s : span / s) + 1;
  if (ceil_mode && (o - 1) * s >= in + p0) o--; /* ONNX: the last window must start inside the input or left pad */
  return o;
}

static void run_case(const pool_case *t) {
  const int64_t OH = out_size(t->H, t->pt, t->pb, t->KH, t->dh, t->sh, t->ceil_mode);
  const int64_t OW = out_size(t->W, t->pl, t->pr, t->KW, t->dw, t->sw, t->ceil_mode);
  const int64_t nx = t->NC * t->H * t->W, ny = t->NC * OH * OW;
  float *x = malloc(nx * sizeof *x), *y = malloc(ny * sizeof *y);
  for (int64_t i = 0; i < nx; i++) x[i] = frand() * 5.0f - 2.0f; /* mostly negative: padding must not win */
  qllc_k_maxpool2d_f32_f32(y, x, t->NC, t->H, t->W, OH, OW, t->KH, t->KW, t->sh, t->sw, t->pt, t->pl, t->pb, t->pr,
                           t->dh, t->dw);
  for (int64_t c = 0; c < t->NC; c++)
    for (int64_t oh = 0; oh < OH; oh++)
      for (int64_t ow = 0; ow < OW; ow++) {
        double m = -INFINITY;
        for (int64_t kh = 0; kh < t->KH; kh++)
          for (int64_t kw = 0; kw < t->KW; kw++) {
            const int64_t ih = oh * t->sh - t->pt + kh * t->dh, iw = ow * t->sw - t->pl + kw * t->dw;
            if (ih >= 0 && ih < t->H && iw >= 0 && iw < t->W && x[(c * t->H + ih) * t->W + iw] > m)
              m = x[(c * t->H + ih) * t->W + iw];
          }
        if (y[(c * OH + oh) * OW + ow] != (float)m)
          fail_msg("maxpool c=%ld oh=%ld ow=%ld: got %g want %g", (long)c, (long)oh, (long)ow,
                   y[(c * OH + oh) * OW + ow], m);
      }
  if (t->dh == 1 && t->dw == 1) {
    for (int cip = 0; cip < 2; cip++) {
      qllc_k_avgpool2d_f32_f32(y, x, t->NC, t->H, t->W, OH, OW, t->KH, t->KW, t->sh, t->sw, t->pt, t->pl, t->pb,
                               t->pr, cip);
      for (int64_t c = 0; c < t->NC; c++)
        for (int64_t oh = 0; oh < OH; oh++)
          for (int64_t ow = 0; ow < OW; ow++) {
            double s = 0;
            int64_t count = 0;
            for (int64_t kh = 0; kh < t->KH; kh++)
              for (int64_t kw = 0; kw < t->KW; kw++) {
                const int64_t ih = oh * t->sh - t->pt + kh, iw = ow * t->sw - t->pl + kw;
                const int in_image = ih >= 0 && ih < t->H && iw >= 0 && iw < t->W;
                const int in_padded = ih >= -t->pt && ih < t->H + t->pb && iw >= -t->pl && iw < t->W + t->pr;
                if (in_image) s += x[(c * t->H + ih) * t->W + iw];
                if (cip ? in_padded : in_image) count++;
              }
            const double want = s / count;
            const float got = y[(c * OH + oh) * OW + ow];
            if (!(fabs(got - want) <= 1e-6 * (fabs(want) + 1.0)))
              fail_msg("avgpool cip=%d c=%ld oh=%ld ow=%ld: got %.9g want %.9g", cip, (long)c, (long)oh, (long)ow,
                       got, want);
          }
    }
  }
  free(x);
  free(y);
}

static void test_pools(void **state) {
  (void)state;
  static const pool_case cases[] = {
    /* NC  H   W  KH KW sh sw pt pl pb pr dh dw ceil */
    {1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1, 0},
    {3, 7, 17, 2, 2, 2, 2, 0, 0, 0, 0, 1, 1, 0},
    {3, 7, 17, 2, 2, 2, 2, 0, 0, 0, 0, 1, 1, 1},  /* ceil_mode: last window cut at the border */
    {2, 17, 7, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 0},  /* same padding */
    {1, 17, 17, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 1}, /* resnet stem style, ceil mode */
    {2, 7, 17, 3, 5, 2, 3, 1, 2, 0, 1, 1, 1, 0},  /* asymmetric pads */
    {1, 7, 7, 3, 3, 3, 3, 1, 0, 2, 1, 1, 1, 1},   /* ceil_mode past the padded extent */
    {2, 17, 7, 3, 2, 1, 2, 2, 1, 2, 1, 2, 3, 0},  /* dilations (max only) */
    {1, 3, 3, 3, 3, 1, 1, 2, 2, 2, 2, 1, 1, 0},   /* pads of kernel-1 */
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) run_case(&cases[i]);
}

static void test_hand_computed(void **state) {
  (void)state;
  const float x[4] = {1, 2, 3, 4};
  float y[4];
  /* 2x2 image, 2x2 kernel, stride 1, pads 1 on top/left: 2x2 outputs covering 1, 2, 4 and 4 pixels */
  qllc_k_avgpool2d_f32_f32(y, x, 1, 2, 2, 2, 2, 2, 2, 1, 1, 1, 1, 0, 0, 0);
  assert_true(y[0] == 1.0f && y[1] == 1.5f && y[2] == 2.0f && y[3] == 2.5f);
  qllc_k_avgpool2d_f32_f32(y, x, 1, 2, 2, 2, 2, 2, 2, 1, 1, 1, 1, 0, 0, 1);
  assert_true(y[0] == 0.25f && y[1] == 0.75f && y[2] == 1.0f && y[3] == 2.5f);
  const float neg[4] = {-1, -2, -3, -4};
  qllc_k_maxpool2d_f32_f32(y, neg, 1, 2, 2, 2, 2, 2, 2, 1, 1, 1, 1, 0, 0, 1, 1);
  assert_true(y[0] == -1.0f && y[1] == -1.0f && y[2] == -1.0f && y[3] == -1.0f);
}

static void test_global_avgpool(void **state) {
  (void)state;
  static const int64_t hws[] = {1, 3, 7, 8, 9, 17, 49, 1000};
  for (size_t t = 0; t < sizeof hws / sizeof *hws; t++) {
    const int64_t NC = 3, HW = hws[t];
    float *x = malloc(NC * HW * sizeof *x), y[3];
    for (int64_t i = 0; i < NC * HW; i++) x[i] = frand() + 0.5f;
    qllc_k_global_avgpool_f32_f32(y, x, NC, HW);
    for (int64_t c = 0; c < NC; c++) {
      double s = 0;
      for (int64_t i = 0; i < HW; i++) s += x[c * HW + i];
      if (!(fabs(y[c] - s / HW) <= 1e-6 * (fabs(s / HW) + 1.0)))
        fail_msg("global avg HW=%ld c=%ld: got %.9g want %.9g", (long)HW, (long)c, y[c], s / HW);
    }
    free(x);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_pools),
    cmocka_unit_test(test_hand_computed),
    cmocka_unit_test(test_global_avgpool),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
