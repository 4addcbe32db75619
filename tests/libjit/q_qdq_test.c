/* tests/libjit/q_qdq_test.c: quantize_f32_{i8,u8,i16} and dequantize_{i8,u8,i16}_f32 (the model's
 * boundary) against hand-computed values: ties rounding half to even (positive and negative), the
 * float32 division of ONNX QuantizeLinear (cases where dividing in double would round the other way,
 * found by a throwaway C search at writing time), saturation at both ends with zero points at both ends,
 * NaN and infinities; then a sweep against src/quant's qllc_quantize_one, and every integer through
 * dequantize against (float)(q - z) * scale. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "kernels_q.h"
#include "quant/quant.h"

typedef struct qcase {
  float x, scale;
  int32_t z;
  int32_t want_i8, want_u8, want_i16;
} qcase;

static const qcase cases[] = {
    /* ties at scale 0.5: x / s = k + 0.5 exactly */
    {0.25f, 0.5f, 0, 0, 0, 0},       /* 0.5 -> 0 */
    {0.75f, 0.5f, 0, 2, 2, 2},       /* 1.5 -> 2 */
    {1.25f, 0.5f, 0, 2, 2, 2},       /* 2.5 -> 2 */
    {-0.25f, 0.5f, 0, 0, 0, 0},      /* -0.5 -> -0 -> 0 */
    {-0.75f, 0.5f, 0, -2, 0, -2},    /* -1.5 -> -2 (u8 saturates at 0) */
    {-1.25f, 0.5f, 0, -2, 0, -2},    /* -2.5 -> -2 */
    {-1.25f, 0.5f, 10, 8, 8, 8},     /* -2.5 -> -2, + 10 */
    {63.25f, 0.5f, 0, 126, 126, 126}, /* 126.5 -> 126 */
    {63.75f, 0.5f, 0, 127, 128, 128}, /* 127.5 -> 128: i8 saturates */
    /* not ties */
    {0.2600001f, 0.5f, 0, 1, 1, 1},
    {-0.2600001f, 0.5f, 0, -1, 0, -1},
    /* float32 division (x / s rounds to exactly k + 0.5 in float; in double it would not) */
    {-0x1.7p+2f, 0x1.99999ap-4f, 0, -58, 0, -58},      /* -57.5 -> -58 (double: -57.49999 -> -57) */
    {-0x1.69999ap+2f, 0x1.99999ap-4f, 0, -56, 0, -56}, /* -56.5 -> -56 (double: -56.5000001 -> -57) */
    {-0x1.433334p+2f, 0x1.99999ap-4f, 0, -50, 0, -50}, /* -50.5 -> -50 (double -> -51) */
    {0x1.7p+2f, 0x1.99999ap-4f, 100, 127, 158, 158},   /* 57.5 -> 58, + 100: i8 saturates */
    /* saturation, zero points at the ends */
    {1000.0f, 0.1f, 0, 127, 255, 10000},
    {-1000.0f, 0.1f, 0, -128, 0, -10000},
    {1e30f, 0.1f, 0, 127, 255, 32767},
    {-1e30f, 0.1f, 0, -128, 0, -32768},
    {-0.1f, 1.0f / 256, -128, -154 < -128 ? -128 : -154, 0, -154}, /* -25.6 -> -26, - 128 */
    {1.0f, 1.0f / 256, -128, 127, 128, 128},                       /* 256 - 128 = 128 */
    {0.0f, 0.3f, -128, -128, 0, -128},
    {0.0f, 0.3f, 127, 127, 127, 127},
    {0.0f, 0.3f, 255, 127, 255, 255},
    {-3.0f, 0.01f, 255, -128, 0, -45},                 /* -300 + 255 */
    {3276.75f, 0.1f, 0, 127, 255, 32767},              /* 32767.5 */
    {-3276.85f, 0.1f, 0, -128, 0, -32768},             /* -32768.5 */
    {0.5f, 1.0f / 65536, -32768, 127, 255, 0},         /* 32768 - 32768 */
    {-0.5f, 1.0f / 65536, 32767, -128, 0, -1},         /* -32768 + 32767 */
    {1.0f, 1.0f / 65536, -32768, 127, 255, 32767},     /* 65536 - 32768 */
};

static void test_quantize_hand(void **state) {
  (void)state;
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    const qcase *c = &cases[i];
    int8_t y8;
    uint8_t yu;
    int16_t y16;
    int32_t z8 = c->z < -128 ? -128 : c->z > 127 ? 127 : c->z, zu = c->z < 0 ? 0 : c->z > 255 ? 255 : c->z;
    qllc_k_quantize_f32_i16(&y16, &c->x, 1, c->scale, c->z);
    if (y16 != c->want_i16) fail_msg("case %zu: i16 got %d want %d", i, y16, c->want_i16);
    if (c->z == z8) {
      qllc_k_quantize_f32_i8(&y8, &c->x, 1, c->scale, c->z);
      if (y8 != c->want_i8) fail_msg("case %zu: i8 got %d want %d", i, y8, c->want_i8);
    }
    if (c->z == zu) {
      qllc_k_quantize_f32_u8(&yu, &c->x, 1, c->scale, c->z);
      if (yu != c->want_u8) fail_msg("case %zu: u8 got %d want %d", i, yu, c->want_u8);
    }
  }
}

/* NaN quantizes as 0 (to z), as src/quant does; infinities saturate. */
static void test_quantize_nonfinite(void **state) {
  (void)state;
  float x[3] = {NAN, INFINITY, -INFINITY};
  int8_t y8[3];
  uint8_t yu[3];
  int16_t y16[3];
  qllc_k_quantize_f32_i8(y8, x, 3, 0.1f, -5);
  qllc_k_quantize_f32_u8(yu, x, 3, 0.1f, 7);
  qllc_k_quantize_f32_i16(y16, x, 3, 0.1f, 300);
  assert_int_equal(y8[0], -5);
  assert_int_equal(y8[1], 127);
  assert_int_equal(y8[2], -128);
  assert_int_equal(yu[0], 7);
  assert_int_equal(yu[1], 255);
  assert_int_equal(yu[2], 0);
  assert_int_equal(y16[0], 300);
  assert_int_equal(y16[1], 32767);
  assert_int_equal(y16[2], -32768);
}

static uint64_t rng = 0x6a09e667f3bcc909ULL;
static uint64_t next(void) {
  rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
  return rng;
}

/* Many values of every magnitude, including exact ties and neighbours of ties, against qllc_quantize_one. */
static void test_quantize_sweep(void **state) {
  (void)state;
  enum { NV = 20000 };
  float *x = malloc(NV * sizeof *x);
  int8_t *y8 = malloc(NV);
  uint8_t *yu = malloc(NV);
  int16_t *y16 = malloc(NV * sizeof *y16);
  static const float scales[] = {1.0f, 0.5f, 0.1f, 0.0039215689f, 3.7e-5f, 1e-3f, 250.0f};
  static const int32_t zs[] = {0, -128, 127, 5, -77};
  for (int si = 0; si < 7; si++)
    for (int zi = 0; zi < 5; zi++) {
      float s = scales[si];
      for (int i = 0; i < NV; i++) {
        uint64_t r = next();
        float v;
        if (i % 4 == 0) v = ((float)(int32_t)(r % 80001) - 40000.0f + 0.5f) * s; /* near ties */
        else if (i % 4 == 1) v = nextafterf(((float)(int32_t)(r % 601) - 300.0f + 0.5f) * s, (r >> 40) & 1 ? 1e9f : -1e9f);
        else v = ldexpf((float)((r >> 11) & 0xffffff) / 16777216.0f, (int)((r >> 40) % 40) - 20) * ((r >> 63) ? -1.0f : 1.0f) * s * 100;
        x[i] = v;
      }
      int32_t zu = zs[zi] < 0 ? 0 : zs[zi];
      qllc_k_quantize_f32_i8(y8, x, NV, s, zs[zi]);
      qllc_k_quantize_f32_u8(yu, x, NV, s, zu);
      qllc_k_quantize_f32_i16(y16, x, NV, s, zs[zi] * 200);
      for (int i = 0; i < NV; i++) {
        int32_t w8 = qllc_quantize_one(x[i], s, zs[zi], -128, 127), wu = qllc_quantize_one(x[i], s, zu, 0, 255);
        int32_t w16 = qllc_quantize_one(x[i], s, zs[zi] * 200, -32768, 32767);
        if (y8[i] != w8 || yu[i] != wu || y16[i] != w16)
          fail_msg("x=%a s=%a z=%d: got i8 %d u8 %d i16 %d, want %d %d %d", x[i], s, zs[zi], y8[i], yu[i], y16[i], w8, wu,
                   w16);
      }
    }
  free(x), free(y8), free(yu), free(y16);
}

static void test_dequantize(void **state) {
  (void)state;
  int16_t *q16 = malloc(65536 * sizeof *q16);
  int8_t q8[256];
  uint8_t qu[256];
  float *y = malloc(65536 * sizeof *y);
  for (int i = 0; i < 65536; i++) q16[i] = (int16_t)(i - 32768);
  for (int i = 0; i < 256; i++) q8[i] = (int8_t)(i - 128), qu[i] = (uint8_t)i;
  static const float scales[] = {1.0f, 0.1f, 3.7e-5f, 0.0039215689f};
  static const int32_t zs[] = {0, -128, 127, 255, -32768, 32767};
  for (int si = 0; si < 4; si++)
    for (int zi = 0; zi < 6; zi++) {
      float s = scales[si];
      int32_t z = zs[zi];
      qllc_k_dequantize_i16_f32(y, q16, 65536, s, z);
      for (int i = 0; i < 65536; i++) assert_true(y[i] == (float)(q16[i] - z) * s);
      qllc_k_dequantize_i8_f32(y, q8, 256, s, z);
      for (int i = 0; i < 256; i++) assert_true(y[i] == (float)(q8[i] - z) * s);
      qllc_k_dequantize_u8_f32(y, qu, 256, s, z);
      for (int i = 0; i < 256; i++) assert_true(y[i] == (float)(qu[i] - z) * s);
    }
  /* hand values */
  int8_t a[2] = {-128, 127};
  qllc_k_dequantize_i8_f32(y, a, 2, 0.5f, 127);
  assert_true(y[0] == -127.5f && y[1] == 0.0f);
  int16_t b[2] = {-32768, 32767};
  qllc_k_dequantize_i16_f32(y, b, 2, 0.25f, 32767);
  assert_true(y[0] == -16383.75f && y[1] == 0.0f);
  free(q16), free(y);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_quantize_hand),
      cmocka_unit_test(test_quantize_nonfinite),
      cmocka_unit_test(test_quantize_sweep),
      cmocka_unit_test(test_dequantize),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
