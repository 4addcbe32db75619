/* tests/libjit/q_test_util.h: helpers shared by the quantized-kernel tests: the three integer element
 * kinds as int32 arrays, and a seeded xorshift generator. Define Q_TEST_SEED (each test has its own, so
 * its data does not change) before including. */
#ifndef QLLC_Q_TEST_UTIL_H
#define QLLC_Q_TEST_UTIL_H
#include <stdint.h>
#include <stdlib.h>

#ifndef Q_TEST_SEED
#error "define Q_TEST_SEED before including q_test_util.h"
#endif
#define Q_UNUSED __attribute__((unused))

typedef enum { K_I8, K_U8, K_I16 } kind;
/* 1-byte tensors between NCHW and NHWC: to_nhwc 1 reads src as [N][C][HW], writes dst [N][HW][C]; 0 back. */
static Q_UNUSED void q_relayout(uint8_t *dst, const uint8_t *src, int64_t N, int64_t C, int64_t HW, int to_nhwc) {
  for (int64_t b = 0; b < N; b++)
    for (int64_t c = 0; c < C; c++)
      for (int64_t p = 0; p < HW; p++) {
        const int64_t nchw = (b * C + c) * HW + p, nhwc = (b * HW + p) * C + c;
        if (to_nhwc) dst[nhwc] = src[nchw];
        else dst[nchw] = src[nhwc];
      }
}
static const char *kname[] Q_UNUSED = {"i8", "u8", "i16"};
static Q_UNUSED int32_t kmin(kind k) { return k == K_I8 ? -128 : k == K_U8 ? 0 : -32768; }
static Q_UNUSED int32_t kmax(kind k) { return k == K_I8 ? 127 : k == K_U8 ? 255 : 32767; }
static Q_UNUSED size_t ksize(kind k) { return k == K_I16 ? 2 : 1; }
/* A buffer of kind k holding v[0..n) (at least one element, zeroed beyond n). free() it. */
static Q_UNUSED void *tbuf(kind k, const int32_t *v, int64_t n) {
  void *p = calloc((size_t)(n ? n : 1), ksize(k));
  for (int64_t i = 0; i < n; i++) {
    if (k == K_I8) ((int8_t *)p)[i] = (int8_t)v[i];
    else if (k == K_U8) ((uint8_t *)p)[i] = (uint8_t)v[i];
    else ((int16_t *)p)[i] = (int16_t)v[i];
  }
  return p;
}
static Q_UNUSED int32_t tget(kind k, const void *p, int64_t i) {
  return k == K_I8 ? ((const int8_t *)p)[i] : k == K_U8 ? ((const uint8_t *)p)[i] : ((const int16_t *)p)[i];
}
static Q_UNUSED int32_t *ivec(int64_t n) { return calloc((size_t)(n ? n : 1), sizeof(int32_t)); }

static uint64_t rng = Q_TEST_SEED;
static Q_UNUSED uint64_t next(void) {
  rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
  return rng;
}
static Q_UNUSED int64_t irand(int64_t lo, int64_t hi) { return lo + (int64_t)(next() % (uint64_t)(hi - lo + 1)); }
/* Saturates an exact (up to 128-bit) value to [lo, hi]. */
static Q_UNUSED int32_t clampi(__int128 v, int32_t lo, int32_t hi) { return v < lo ? lo : v > hi ? hi : (int32_t)v; }
#endif
