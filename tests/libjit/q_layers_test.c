/* tests/libjit/q_layers_test.c: the fused quantized layers (conv2d, fc, channel_affine, every element
 * combination of kernels_q.h) and the activation MatMul, compiled natively, bit for bit against naive
 * references written here. The references are independent of the kernels' formulation: the bias is
 * given UNFOLDED (q_b), the input zero point is subtracted explicitly (padding contributes nothing),
 * sums are __int128, and the one rounding is src/quant's qllc_requant_apply. The kernels get the
 * folded bias q_b - z_x * sum_k w, as the quantizer builds it.
 * Cases: odd shapes (1, 3, 7, 17), strides, asymmetric pads, dilations, groups and depthwise,
 * per-channel m/n, clamp ranges, zero points at both ends of the range, all -128 / 127 / 0 / 255 /
 * -32768 / 32767 inputs, the int32 accumulator at its documented bound, and the int16 worst case:
 * long reductions of -32768 * -32768 with extreme int64 biases (acc * m needs 94 bits). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "kernels_q.h"
#include "quant/quant.h"

#define Q_TEST_SEED 0x9e3779b97f4a7c15ULL
#include "q_test_util.h"


static int64_t ilog2(uint64_t v) {
  int64_t l = 0;
  while (v >>= 1) l++;
  return l;
}

/* Fills v[n] with a pattern: 0 random, 1 all min, 2 all max, 3 alternating min/max. */
static void fill(int32_t *v, int64_t n, int32_t lo, int32_t hi, int pattern) {
  for (int64_t i = 0; i < n; i++)
    v[i] = pattern == 0 ? (int32_t)irand(lo, hi) : pattern == 1 ? lo : pattern == 2 ? hi : (i & 1) ? hi : lo;
}

/* Outputs seen by ref_out, and how many were not clamped: the random cases must exercise the
   rounding, not only the clamp (checked by the tests that use random multipliers). */
static int64_t n_total, n_inside;
static void reset_counts(void) { n_total = n_inside = 0; }
static void check_counts(const char *what) {
  if (n_inside * 3 < n_total) fail_msg("%s: only %lld of %lld outputs inside the clamp range", what, (long long)n_inside, (long long)n_total);
}

/* The reference output of one accumulator (acc already exact, must fit int64). */
static int32_t ref_out(__int128 acc, int32_t m, int32_t n, int32_t z_y, int32_t lo, int32_t hi) {
  assert_true(acc <= INT64_MAX && acc >= INT64_MIN);
  int64_t v = (int64_t)qllc_requant_apply((int64_t)acc, m, n) + z_y;
  n_total++;
  if (v > lo && v < hi) n_inside++;
  return clampi(v, lo, hi);
}

/* Multipliers: m in [2^30, 2^31) and n chosen from the largest accumulator magnitude of each channel
   (mag[c], computed by the reference first) so that outputs land around the output range: most inside,
   some clamped. */
static void pick_mn(int32_t *m, int32_t *n, int64_t channels, const double *mag, kind ko) {
  int64_t range_bits = ko == K_I16 ? 15 : 7;
  for (int64_t c = 0; c < channels; c++) {
    m[c] = (int32_t)irand(1 << 30, INT32_MAX);
    int64_t nn = 31 + ilog2((uint64_t)(mag[c] < 1 ? 1 : mag[c])) - range_bits + irand(0, 2);
    n[c] = (int32_t)(nn < 0 ? 0 : nn > 62 ? 62 : nn);
  }
}
static double dabs128(__int128 v) { return v < 0 ? -(double)v : (double)v; }

/* The fused combinations of kernels_q.h. */
typedef struct combo {
  kind in, w, out;
} combo;
static const combo combos[] = {{K_I8, K_I8, K_I8},   {K_I8, K_I8, K_U8},   {K_U8, K_I8, K_I8},
                               {K_U8, K_I8, K_U8},   {K_I16, K_I16, K_I16}, {K_I16, K_I8, K_I16}};
#define NCOMBOS 6

static int32_t *bias32(const int64_t *b, int64_t n) {
  int32_t *p = ivec(n);
  for (int64_t i = 0; i < n; i++) {
    assert_true(b[i] >= INT32_MIN && b[i] <= INT32_MAX);
    p[i] = (int32_t)b[i];
  }
  return p;
}

/* ---- FC -------------------------------------------------------------------------------------------- */
static void call_fc(combo k, void *y, const void *x, const void *w, const int64_t *bias, const int32_t *m,
                    const int32_t *n, int64_t M, int64_t N, int64_t K, int32_t z_x, int32_t z_y, int32_t lo, int32_t hi) {
  if (k.in == K_I16) {
    if (k.w == K_I16) qllc_k_fc_i16_i16_i16(y, x, w, bias, m, n, M, N, K, z_x, z_y, lo, hi);
    else qllc_k_fc_i16_i8_i16(y, x, w, bias, m, n, M, N, K, z_x, z_y, lo, hi);
    return;
  }
  int32_t *b = bias32(bias, N);
  if (k.in == K_I8 && k.out == K_I8) qllc_k_fc_i8_i8_i8(y, x, w, b, m, n, M, N, K, z_x, z_y, lo, hi);
  if (k.in == K_I8 && k.out == K_U8) qllc_k_fc_i8_i8_u8(y, x, w, b, m, n, M, N, K, z_x, z_y, lo, hi);
  if (k.in == K_U8 && k.out == K_I8) qllc_k_fc_u8_i8_i8(y, x, w, b, m, n, M, N, K, z_x, z_y, lo, hi);
  if (k.in == K_U8 && k.out == K_U8) qllc_k_fc_u8_i8_u8(y, x, w, b, m, n, M, N, K, z_x, z_y, lo, hi);
  free(b);
}

typedef struct layer_case {
  int32_t z_x, z_y, lo, hi;
  int xpat, wpat;       /* fill patterns */
} layer_case;

/* Output zero point and clamp: variant 0 full range, 1 relu-like [z_y, max], 2 a random sub-range. */
static void pick_out(kind ko, int variant, int32_t *z_y, int32_t *lo, int32_t *hi) {
  int64_t zy = variant == 3 ? kmin(ko) : variant == 4 ? kmax(ko) : irand(kmin(ko), kmax(ko));
  *z_y = (int32_t)zy;
  *lo = kmin(ko), *hi = kmax(ko);
  if (variant == 1) *lo = *z_y;
  if (variant == 2) {
    int32_t a = (int32_t)irand(kmin(ko), kmax(ko)), b = (int32_t)irand(kmin(ko), kmax(ko));
    *lo = a < b ? a : b, *hi = a < b ? b : a;
  }
}

static int32_t pick_zx(kind ki, int variant) {
  return variant == 0 ? kmin(ki) : variant == 1 ? kmax(ki) : ki == K_I16 ? 0 : (int32_t)irand(kmin(ki), kmax(ki));
}

/* One FC run: unfolded q_b (|q_b| <= qb_mag) and explicit (x - z_x) in the reference. */
static void run_fc(combo k, int64_t M, int64_t N, int64_t K, int32_t z_x, int xpat, int wpat, int64_t qb_mag,
                   int outvar) {
  int32_t *xv = ivec(M * K), *wv = ivec(N * K), *m = ivec(N), *n = ivec(N);
  int64_t *qb = calloc((size_t)N, sizeof *qb), *bias = calloc((size_t)N, sizeof *bias);
  fill(xv, M * K, kmin(k.in), kmax(k.in), xpat);
  fill(wv, N * K, kmin(k.w), kmax(k.w), wpat);
  for (int64_t c = 0; c < N; c++) {
    qb[c] = irand(-qb_mag, qb_mag);
    int64_t ws = 0;
    for (int64_t i = 0; i < K; i++) ws += wv[c * K + i];
    bias[c] = qb[c] - (int64_t)z_x * ws;
  }
  __int128 *accs = malloc(sizeof(__int128) * (size_t)(M * N));
  double *mag = calloc((size_t)N, sizeof *mag);
  for (int64_t i = 0; i < M; i++)
    for (int64_t c = 0; c < N; c++) {
      __int128 acc = qb[c];
      for (int64_t j = 0; j < K; j++) acc += (__int128)(xv[i * K + j] - z_x) * wv[c * K + j];
      accs[i * N + c] = acc;
      if (dabs128(acc) > mag[c]) mag[c] = dabs128(acc);
    }
  pick_mn(m, n, N, mag, k.out);
  int32_t z_y, lo, hi;
  pick_out(k.out, outvar, &z_y, &lo, &hi);
  void *x = tbuf(k.in, xv, M * K), *w = tbuf(k.w, wv, N * K);
  void *y = calloc((size_t)(M * N), ksize(k.out));
  call_fc(k, y, x, w, bias, m, n, M, N, K, z_x, z_y, lo, hi);
  for (int64_t i = 0; i < M; i++)
    for (int64_t c = 0; c < N; c++) {
      int32_t want = ref_out(accs[i * N + c], m[c], n[c], z_y, lo, hi), got = tget(k.out, y, i * N + c);
      if (got != want)
        fail_msg("fc_%s_%s_%s M=%lld N=%lld K=%lld z_x=%d [%lld][%lld]: got %d want %d (m=%d n=%d)", kname[k.in],
                 kname[k.w], kname[k.out], (long long)M, (long long)N, (long long)K, z_x, (long long)i, (long long)c,
                 got, want, m[c], n[c]);
    }
  free(xv), free(wv), free(m), free(n), free(qb), free(bias), free(x), free(w), free(y), free(accs), free(mag);
}

static const int64_t sizes[] = {1, 3, 7, 17};

static void test_fc_shapes(void **state) {
  (void)state;
  reset_counts();
  for (int ci = 0; ci < NCOMBOS; ci++)
    for (int a = 0; a < 4; a++)
      for (int b = 0; b < 4; b++)
        for (int c = 0; c < 4; c++) {
          combo k = combos[ci];
          int var = (a + b + c) % 5;
          run_fc(k, sizes[a], sizes[b], sizes[c], pick_zx(k.in, (a + c) % 3), 0, 0, 1 << 20, var);
        }
  check_counts("fc");
}

static void test_fc_extremes(void **state) {
  (void)state;
  for (int ci = 0; ci < NCOMBOS; ci++)
    for (int xp = 0; xp < 4; xp++)
      for (int wp = 0; wp < 4; wp++)
        for (int zv = 0; zv < 3; zv++)
          for (int ov = 0; ov < 5; ov++) {
            combo k = combos[ci];
            run_fc(k, 3, 5, 17, pick_zx(k.in, zv), xp, wp, 1000, ov);
          }
}

/* The 8-bit accumulator at its documented bound: |bias| + K * 255 * 127 < 2^31 (u8 inputs), reached
   exactly: acc == INT32_MAX and acc == INT32_MIN + 1. A requantization that narrowed or wrapped the
   accumulator, or multiplied it by m in 32 bits, gives other bits. */
static void test_fc_int32_bound(void **state) {
  (void)state;
  const int64_t K = 66000; /* 66000 * 255 * 127 = 2137410000 < 2^31 */
  int32_t *xv = ivec(K), *wv = ivec(2 * K);
  for (int64_t i = 0; i < K; i++) xv[i] = 255, wv[i] = 127, wv[K + i] = -127;
  int64_t prod = K * 255 * 127;
  int64_t bias[2] = {INT32_MAX - prod, INT32_MIN + 1 + prod};
  uint8_t *x = tbuf(K_U8, xv, K);
  int8_t *w = tbuf(K_I8, wv, 2 * K);
  static const int32_t ns[] = {0, 1, 17, 31, 32, 40, 62};
  for (int t = 0; t < 7; t++)
    for (int mi = 0; mi < 3; mi++) {
      int32_t mm = mi == 0 ? (1 << 30) : mi == 1 ? INT32_MAX : 1234567891;
      int32_t m[2] = {mm, mm}, n[2] = {ns[t], ns[t]};
      int32_t b32[2] = {(int32_t)bias[0], (int32_t)bias[1]};
      int8_t y8[2];
      uint8_t yu[2];
      int32_t z_y = -3;
      qllc_k_fc_u8_i8_i8(y8, x, w, b32, m, n, 1, 2, K, 0, z_y, -128, 127);
      qllc_k_fc_u8_i8_u8(yu, x, w, b32, m, n, 1, 2, K, 0, 7, 0, 255);
      int32_t want0 = clampi((int64_t)qllc_requant_apply(INT32_MAX, mm, ns[t]) + z_y, -128, 127);
      int32_t want1 = clampi((int64_t)qllc_requant_apply(INT32_MIN + 1, mm, ns[t]) + z_y, -128, 127);
      assert_int_equal(y8[0], want0);
      assert_int_equal(y8[1], want1);
      assert_int_equal(yu[0], clampi((int64_t)qllc_requant_apply(INT32_MAX, mm, ns[t]) + 7, 0, 255));
      assert_int_equal(yu[1], clampi((int64_t)qllc_requant_apply(INT32_MIN + 1, mm, ns[t]) + 7, 0, 255));
    }
  /* and a value that must not saturate: acc = INT32_MAX with M = 2^-31 (m = 2^30, n = 61): 1 exactly
     (0.99999999953 rounds to 1), and -1 for acc == INT32_MIN + 1 */
  int32_t b32[2] = {(int32_t)bias[0], (int32_t)bias[1]}, m[2] = {1 << 30, 1 << 30}, n[2] = {61, 61};
  int8_t y8[2];
  qllc_k_fc_u8_i8_i8(y8, x, w, b32, m, n, 1, 2, K, 0, 0, -128, 127);
  assert_int_equal(y8[0], 1);
  assert_int_equal(y8[1], -1);
  free(xv), free(wv), free(x), free(w);
}

/* Ties: M = 1/2 (m = 2^30, n = 31), acc odd: half rounds UP (towards +inf), also for negatives. */
static void test_fc_ties(void **state) {
  (void)state;
  int8_t x[1] = {1}, w[1] = {1};
  int32_t m[1] = {1 << 30}, n[1] = {31};
  static const int32_t accs[] = {-5, -3, -1, 1, 3, 5, -4, 4};
  static const int32_t want[] = {-2, -1, 0, 1, 2, 3, -2, 2};
  for (int i = 0; i < 8; i++) {
    int32_t b[1] = {accs[i] - 1}; /* acc = bias + 1 * 1 */
    int8_t y[1];
    qllc_k_fc_i8_i8_i8(y, x, w, b, m, n, 1, 1, 1, 0, 0, -128, 127);
    assert_int_equal(y[0], want[i]);
    assert_int_equal(want[i], qllc_requant_apply(accs[i], 1 << 30, 31));
    int16_t x16[1] = {1}, w16[1] = {1}, y16[1];
    int64_t b64[1] = {accs[i] - 1};
    qllc_k_fc_i16_i16_i16(y16, x16, w16, b64, m, n, 1, 1, 1, 0, 0, -32768, 32767);
    assert_int_equal(y16[0], want[i]);
  }
}

/* int16 worst case for overflow: K products of -32768 * -32768 (2^30 each; for 16x8 -32768 * -128),
   with an extreme int64 bias so the accumulator reaches INT64_MAX / INT64_MIN exactly, and realistic
   long reductions (bias near the int32 limits) whose acc * m needs ~78 bits. The reference sums in
   __int128 and checks the sum is representable before calling qllc_requant_apply. */
static void run_fc16_worst(int w16, int64_t K, int sign, int64_t bias_v, int32_t mm, int32_t nn, int32_t z_y) {
  int16_t *x = malloc(sizeof(int16_t) * K);
  void *w = malloc((size_t)K * (w16 ? 2 : 1));
  for (int64_t i = 0; i < K; i++) {
    x[i] = -32768;
    if (w16) ((int16_t *)w)[i] = sign > 0 ? -32768 : 32767;
    else ((int8_t *)w)[i] = sign > 0 ? -128 : 127;
  }
  __int128 acc = bias_v;
  for (int64_t i = 0; i < K; i++) acc += (__int128)x[i] * (w16 ? ((int16_t *)w)[i] : ((int8_t *)w)[i]);
  int64_t b[1] = {bias_v};
  int32_t m[1] = {mm}, n[1] = {nn};
  int16_t y[1];
  if (w16) qllc_k_fc_i16_i16_i16(y, x, w, b, m, n, 1, 1, K, 0, z_y, -32768, 32767);
  else qllc_k_fc_i16_i8_i16(y, x, w, b, m, n, 1, 1, K, 0, z_y, -32768, 32767);
  int32_t want = ref_out(acc, mm, nn, z_y, -32768, 32767);
  if (y[0] != want)
    fail_msg("fc_i16_%s_i16 K=%lld sign=%d bias=%lld m=%d n=%d: got %d want %d", w16 ? "i16" : "i8", (long long)K,
             sign, (long long)bias_v, mm, nn, y[0], want);
  free(x), free(w);
}

static void test_fc_i16_worst_case(void **state) {
  (void)state;
  static const int64_t Ks[] = {4096, 8191, 65536};
  static const int32_t ms[] = {1, 3, 12345, 1 << 30, INT32_MAX};
  for (int w16 = 0; w16 <= 1; w16++)
    for (int ki = 0; ki < 3; ki++)
      for (int sign = -1; sign <= 1; sign += 2) {
        int64_t K = Ks[ki], p = w16 ? (sign > 0 ? 1073741824LL : -1073709056LL) : (sign > 0 ? 4194304LL : -4161536LL);
        int64_t extreme = sign > 0 ? INT64_MAX - K * p : INT64_MIN - K * p; /* acc == INT64_MAX / MIN */
        for (int mi = 0; mi < 5; mi++)
          for (int32_t nn = 0; nn <= 62; nn += (nn < 40 ? 20 : 2)) {
            run_fc16_worst(w16, K, sign, extreme, ms[mi], nn, 0);
            run_fc16_worst(w16, K, sign, sign > 0 ? INT32_MAX : INT32_MIN, ms[mi], nn, 5);
            run_fc16_worst(w16, K, sign, sign > 0 ? INT32_MIN : INT32_MAX, ms[mi], nn, -5);
          }
      }
}

/* ---- channel_affine -------------------------------------------------------------------------------- */
static void call_affine(combo k, void *y, const void *x, const void *a, const int64_t *bias, const int32_t *m,
                        const int32_t *n, int64_t N, int64_t C, int64_t inner, int32_t z_y, int32_t lo, int32_t hi) {
  if (k.in == K_I16) {
    if (k.w == K_I16) qllc_k_channel_affine_i16_i16_i16(y, x, a, bias, m, n, N, C, inner, z_y, lo, hi);
    else qllc_k_channel_affine_i16_i8_i16(y, x, a, bias, m, n, N, C, inner, z_y, lo, hi);
    return;
  }
  int32_t *b = bias32(bias, C);
  if (k.in == K_I8 && k.out == K_I8) qllc_k_channel_affine_i8_i8_i8(y, x, a, b, m, n, N, C, inner, z_y, lo, hi);
  if (k.in == K_I8 && k.out == K_U8) qllc_k_channel_affine_i8_i8_u8(y, x, a, b, m, n, N, C, inner, z_y, lo, hi);
  if (k.in == K_U8 && k.out == K_I8) qllc_k_channel_affine_u8_i8_i8(y, x, a, b, m, n, N, C, inner, z_y, lo, hi);
  if (k.in == K_U8 && k.out == K_U8) qllc_k_channel_affine_u8_i8_u8(y, x, a, b, m, n, N, C, inner, z_y, lo, hi);
  free(b);
}

static void test_channel_affine(void **state) {
  (void)state;
  for (int ci = 0; ci < NCOMBOS; ci++)
    for (int t = 0; t < 40; t++) {
      combo k = combos[ci];
      int64_t N = sizes[t % 2], C = sizes[(t / 2) % 4], inner = sizes[(t / 8) % 4];
      int xp = t < 20 ? 0 : t % 4, ap = t < 20 ? 0 : (t / 4) % 4;
      int32_t z_x = pick_zx(k.in, t % 3);
      int32_t *xv = ivec(N * C * inner), *av = ivec(C), *m = ivec(C), *n = ivec(C);
      int64_t *qb = calloc((size_t)C, sizeof *qb), *bias = calloc((size_t)C, sizeof *bias);
      fill(xv, N * C * inner, kmin(k.in), kmax(k.in), xp);
      fill(av, C, kmin(k.w), kmax(k.w), ap);
      for (int64_t c = 0; c < C; c++) qb[c] = irand(-100000, 100000), bias[c] = qb[c] - (int64_t)z_x * av[c];
      double *mag = calloc((size_t)C, sizeof *mag);
      for (int64_t at = 0; at < N * C * inner; at++) {
        int64_t c = (at / inner) % C;
        double v = dabs128((__int128)qb[c] + (__int128)(xv[at] - z_x) * av[c]);
        if (v > mag[c]) mag[c] = v;
      }
      pick_mn(m, n, C, mag, k.out);
      free(mag);
      int32_t z_y, lo, hi;
      pick_out(k.out, t % 5, &z_y, &lo, &hi);
      void *x = tbuf(k.in, xv, N * C * inner), *a = tbuf(k.w, av, C), *y = calloc((size_t)(N * C * inner), 2);
      call_affine(k, y, x, a, bias, m, n, N, C, inner, z_y, lo, hi);
      for (int64_t b = 0; b < N; b++)
        for (int64_t c = 0; c < C; c++)
          for (int64_t i = 0; i < inner; i++) {
            int64_t at = (b * C + c) * inner + i;
            int32_t want = ref_out((__int128)qb[c] + (__int128)(xv[at] - z_x) * av[c], m[c], n[c], z_y, lo, hi);
            if (tget(k.out, y, at) != want)
              fail_msg("channel_affine_%s_%s_%s case %d at %lld: got %d want %d", kname[k.in], kname[k.w],
                       kname[k.out], t, (long long)at, tget(k.out, y, at), want);
          }
      free(xv), free(av), free(m), free(n), free(qb), free(bias), free(x), free(a), free(y);
    }
}

/* ---- conv2d ---------------------------------------------------------------------------------------- */
static void call_conv(combo k, void *y, const void *x, const void *w, const int64_t *bias, const int32_t *m,
                      const int32_t *n, const int64_t *s /* N C H W M OH OW KH KW sh sw pt pl dh dw g */,
                      int32_t z_x, int32_t z_y, int32_t lo, int32_t hi) {
#define CONV_ARGS                                                                                              \
  m, n, s[0], s[1], s[2], s[3], s[4], s[5], s[6], s[7], s[8], s[9], s[10], s[11], s[12], s[13], s[14], s[15], z_x, \
      z_y, lo, hi
  if (k.in == K_I16) {
    if (k.w == K_I16) qllc_k_conv2d_i16_i16_i16(y, x, w, bias, CONV_ARGS);
    else qllc_k_conv2d_i16_i8_i16(y, x, w, bias, CONV_ARGS);
    return;
  }
  int32_t *b = bias32(bias, s[4]);
  if (k.in == K_I8 && k.out == K_I8) qllc_k_conv2d_i8_i8_i8(y, x, w, b, CONV_ARGS);
  if (k.in == K_I8 && k.out == K_U8) qllc_k_conv2d_i8_i8_u8(y, x, w, b, CONV_ARGS);
  if (k.in == K_U8 && k.out == K_I8) qllc_k_conv2d_u8_i8_i8(y, x, w, b, CONV_ARGS);
  if (k.in == K_U8 && k.out == K_U8) qllc_k_conv2d_u8_i8_u8(y, x, w, b, CONV_ARGS);
  free(b);
#undef CONV_ARGS
}

/* Runs one convolution; returns 0 when the geometry has no output (skipped). */
static int run_conv(combo k, int64_t N, int64_t C, int64_t H, int64_t W, int64_t M, int64_t KH, int64_t KW,
                    int64_t sh, int64_t sw, int64_t pt, int64_t pl, int64_t pb, int64_t pr, int64_t dh, int64_t dw,
                    int64_t g, int32_t z_x, int xp, int wp, int outvar) {
  int64_t ekh = dh * (KH - 1) + 1, ekw = dw * (KW - 1) + 1;
  if (H + pt + pb < ekh || W + pl + pr < ekw) return 0;
  int64_t OH = (H + pt + pb - ekh) / sh + 1, OW = (W + pl + pr - ekw) / sw + 1;
  int64_t Cg = C / g, Mg = M / g, R = Cg * KH * KW;
  int32_t *xv = ivec(N * C * H * W), *wv = ivec(M * R), *m = ivec(M), *n = ivec(M);
  int64_t *qb = calloc((size_t)M, sizeof *qb), *bias = calloc((size_t)M, sizeof *bias);
  fill(xv, N * C * H * W, kmin(k.in), kmax(k.in), xp);
  fill(wv, M * R, kmin(k.w), kmax(k.w), wp);
  for (int64_t c = 0; c < M; c++) {
    qb[c] = irand(-50000, 50000);
    int64_t ws = 0;
    for (int64_t i = 0; i < R; i++) ws += wv[c * R + i];
    bias[c] = qb[c] - (int64_t)z_x * ws;
  }
  __int128 *accs = malloc(sizeof(__int128) * (size_t)(N * M * OH * OW));
  double *mag = calloc((size_t)M, sizeof *mag);
  for (int64_t b = 0; b < N; b++)
    for (int64_t oc = 0; oc < M; oc++)
      for (int64_t oh = 0; oh < OH; oh++)
        for (int64_t ow = 0; ow < OW; ow++) {
          __int128 acc = qb[oc];
          int64_t gi = oc / Mg;
          for (int64_t ic = 0; ic < Cg; ic++)
            for (int64_t kh = 0; kh < KH; kh++)
              for (int64_t kw = 0; kw < KW; kw++) {
                int64_t ih = oh * sh + kh * dh - pt, iw = ow * sw + kw * dw - pl;
                if (ih < 0 || ih >= H || iw < 0 || iw >= W) continue; /* real zero */
                acc += (__int128)(xv[((b * C + gi * Cg + ic) * H + ih) * W + iw] - z_x) *
                       wv[((oc * Cg + ic) * KH + kh) * KW + kw];
              }
          accs[((b * M + oc) * OH + oh) * OW + ow] = acc;
          if (dabs128(acc) > mag[oc]) mag[oc] = dabs128(acc);
        }
  pick_mn(m, n, M, mag, k.out);
  int32_t z_y, lo, hi;
  pick_out(k.out, outvar, &z_y, &lo, &hi);
  void *x = tbuf(k.in, xv, N * C * H * W), *w = tbuf(k.w, wv, M * R);
  void *y = calloc((size_t)(N * M * OH * OW), 2);
  int64_t s[16] = {N, C, H, W, M, OH, OW, KH, KW, sh, sw, pt, pl, dh, dw, g};
  call_conv(k, y, x, w, bias, m, n, s, z_x, z_y, lo, hi);
  for (int64_t b = 0; b < N; b++)
    for (int64_t oc = 0; oc < M; oc++)
      for (int64_t oh = 0; oh < OH; oh++)
        for (int64_t ow = 0; ow < OW; ow++) {
          int64_t at = ((b * M + oc) * OH + oh) * OW + ow;
          int32_t want = ref_out(accs[at], m[oc], n[oc], z_y, lo, hi), got = tget(k.out, y, at);
          if (got != want)
            fail_msg("conv2d_%s_%s_%s N%lld C%lld H%lld W%lld M%lld K%lldx%lld s%lld,%lld p%lld,%lld,%lld,%lld "
                     "d%lld,%lld g%lld z_x=%d at [%lld][%lld][%lld][%lld]: got %d want %d",
                     kname[k.in], kname[k.w], kname[k.out], (long long)N, (long long)C, (long long)H, (long long)W,
                     (long long)M, (long long)KH, (long long)KW, (long long)sh, (long long)sw, (long long)pt,
                     (long long)pl, (long long)pb, (long long)pr, (long long)dh, (long long)dw, (long long)g, z_x,
                     (long long)b, (long long)oc, (long long)oh, (long long)ow, got, want);
        }
  free(xv), free(wv), free(m), free(n), free(qb), free(bias), free(x), free(w), free(y), free(accs), free(mag);
  return 1;
}

static void test_conv_directed(void **state) {
  (void)state;
  for (int ci = 0; ci < NCOMBOS; ci++) {
    combo k = combos[ci];
    for (int zv = 0; zv < 3; zv++) {
      int32_t z_x = pick_zx(k.in, zv);
      /* plain 3x3 pad 1 */
      run_conv(k, 1, 3, 7, 7, 5, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, z_x, 0, 0, zv);
      /* 1x1, odd sizes */
      run_conv(k, 2, 7, 3, 17, 3, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1, 1, z_x, 0, 0, 1);
      /* stride 2, asymmetric pads */
      run_conv(k, 1, 2, 7, 7, 3, 3, 3, 2, 2, 0, 1, 2, 1, 1, 1, 1, z_x, 0, 0, 2);
      /* dilation 2, pads 2 */
      run_conv(k, 1, 3, 7, 7, 2, 3, 3, 1, 1, 2, 2, 2, 2, 2, 2, 1, z_x, 0, 0, 3);
      /* depthwise 3x3 stride 2 pad 1, and depthwise with multiplier 2 */
      run_conv(k, 1, 7, 7, 7, 7, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 7, z_x, 0, 0, 4);
      run_conv(k, 2, 3, 3, 17, 6, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 3, z_x, 0, 0, 0);
      /* groups 2 */
      run_conv(k, 1, 4, 7, 3, 6, 3, 1, 1, 1, 1, 0, 1, 0, 1, 1, 2, z_x, 0, 0, 1);
      /* wide rows (kernels may process a row in chunks): OW = 150, 100 (stride 2), 137 (dilation 3) */
      run_conv(k, 1, 2, 3, 150, 2, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, z_x, 0, 0, zv);
      run_conv(k, 1, 2, 2, 200, 3, 1, 3, 1, 2, 0, 1, 0, 1, 1, 1, 1, z_x, 0, 0, 1);
      run_conv(k, 1, 3, 5, 140, 3, 3, 3, 2, 1, 2, 2, 2, 3, 1, 3, 3, z_x, 0, 0, 2);
      /* kernel larger than the input, all padding outside: 1x1 input, 3x3 kernel, pad 2 */
      run_conv(k, 1, 1, 1, 1, 1, 3, 3, 1, 1, 2, 2, 2, 2, 1, 1, 1, z_x, 0, 0, 2);
      /* extremes */
      for (int xp = 1; xp < 4; xp++)
        for (int wp = 1; wp < 4; wp++) run_conv(k, 1, 3, 3, 7, 3, 3, 3, 1, 2, 1, 1, 1, 0, 1, 1, 1, z_x, xp, wp, (xp + wp) % 5);
    }
  }
}

static void test_conv_random(void **state) {
  (void)state;
  int ran = 0;
  reset_counts();
  for (int t = 0; t < 600; t++) {
    combo k = combos[t % NCOMBOS];
    int64_t g = irand(1, 3), Cg = irand(1, 3), Mg = irand(1, 3);
    int depthwise = irand(0, 3) == 0;
    if (depthwise) Cg = 1, g = irand(1, 7);
    int64_t C = Cg * g, M = Mg * g;
    int64_t N = irand(1, 2), H = sizes[irand(0, 3)], W = sizes[irand(0, 3)];
    int64_t KH = irand(1, 3), KW = irand(1, 3), sh = irand(1, 3), sw = irand(1, 3);
    int64_t dh = irand(1, 2), dw = irand(1, 2);
    int64_t pt = irand(0, 2), pl = irand(0, 2), pb = irand(0, 2), pr = irand(0, 2);
    ran += run_conv(k, N, C, H, W, M, KH, KW, sh, sw, pt, pl, pb, pr, dh, dw, g, pick_zx(k.in, (int)irand(0, 2)),
                    irand(0, 4) == 0 ? (int)irand(1, 3) : 0, 0, (int)irand(0, 4));
  }
  assert_true(ran > 400);
  check_counts("conv2d");
}

/* int16 conv whose reduction is long (C * KH * KW = 4608) over -32768 * -32768 with padding. */
static void test_conv_i16_long(void **state) {
  (void)state;
  run_conv(combos[4], 1, 512, 3, 3, 2, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 1, 1, 0);
  run_conv(combos[4], 1, 512, 3, 3, 2, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, -32768, 1, 3, 1);
  run_conv(combos[5], 1, 512, 3, 3, 2, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 32767, 1, 1, 2);
}

/* ---- matmul ---------------------------------------------------------------------------------------- */
static void call_matmul(kind k, void *y, const void *a, const void *b, int64_t B, int64_t M, int64_t N, int64_t K,
                        const int64_t *ao, const int64_t *bo, int32_t za, int32_t zb, int32_t m, int32_t n,
                        int32_t z_y, int32_t lo, int32_t hi) {
  if (k == K_I8) qllc_k_matmul_i8_i8_i8(y, a, b, B, M, N, K, ao, bo, za, zb, m, n, z_y, lo, hi);
  if (k == K_U8) qllc_k_matmul_u8_u8_u8(y, a, b, B, M, N, K, ao, bo, za, zb, m, n, z_y, lo, hi);
  if (k == K_I16) qllc_k_matmul_i16_i16_i16(y, a, b, B, M, N, K, ao, bo, za, zb, m, n, z_y, lo, hi);
}

static void run_matmul(kind k, int64_t B, int64_t M, int64_t N, int64_t K, int bcast, int32_t za, int32_t zb, int ap,
                       int bp, int outvar, int32_t mm, int32_t nn) {
  /* bcast 0: both batched; 1: b shared; 2: a shared */
  int64_t na = bcast == 2 ? 1 : B, nb = bcast == 1 ? 1 : B;
  int32_t *av = ivec(na * M * K), *bv = ivec(nb * K * N);
  fill(av, na * M * K, kmin(k), kmax(k), ap);
  fill(bv, nb * K * N, kmin(k), kmax(k), bp);
  int64_t *ao = calloc((size_t)B, sizeof *ao), *bo = calloc((size_t)B, sizeof *bo);
  for (int64_t i = 0; i < B; i++) ao[i] = na == 1 ? 0 : i * M * K, bo[i] = nb == 1 ? 0 : i * K * N;
  int32_t z_y, lo, hi;
  pick_out(k, outvar, &z_y, &lo, &hi);
  if (mm == 0) {
    int32_t mv, nv;
    double mag = 0;
    for (int64_t i = 0; i < B; i++)
      for (int64_t r = 0; r < M; r++)
        for (int64_t c = 0; c < N; c++) {
          __int128 acc = 0;
          for (int64_t j = 0; j < K; j++) acc += (__int128)(av[ao[i] + r * K + j] - za) * (bv[bo[i] + j * N + c] - zb);
          if (dabs128(acc) > mag) mag = dabs128(acc);
        }
    pick_mn(&mv, &nv, 1, &mag, k);
    mm = mv, nn = nv;
  }
  void *a = tbuf(k, av, na * M * K), *b = tbuf(k, bv, nb * K * N), *y = calloc((size_t)(B * M * N), 2);
  call_matmul(k, y, a, b, B, M, N, K, ao, bo, za, zb, mm, nn, z_y, lo, hi);
  for (int64_t i = 0; i < B; i++)
    for (int64_t r = 0; r < M; r++)
      for (int64_t c = 0; c < N; c++) {
        __int128 acc = 0;
        for (int64_t j = 0; j < K; j++)
          acc += (__int128)(av[ao[i] + r * K + j] - za) * (bv[bo[i] + j * N + c] - zb);
        int32_t want = ref_out(acc, mm, nn, z_y, lo, hi), got = tget(k, y, (i * M + r) * N + c);
        if (got != want)
          fail_msg("matmul_%s B%lld M%lld N%lld K%lld bcast%d za=%d zb=%d [%lld][%lld][%lld]: got %d want %d", kname[k],
                   (long long)B, (long long)M, (long long)N, (long long)K, bcast, za, zb, (long long)i, (long long)r,
                   (long long)c, got, want);
      }
  free(av), free(bv), free(ao), free(bo), free(a), free(b), free(y);
}

static void test_matmul(void **state) {
  (void)state;
  reset_counts();
  for (int k = 0; k < 3; k++)
    for (int t = 0; t < 60; t++) {
      int64_t M = sizes[t % 4], N = sizes[(t / 4) % 4], K = sizes[(t / 16) % 4], B = 1 + t % 3;
      int ap = t < 30 ? 0 : t % 4, bp = t < 30 ? 0 : (t / 3) % 4;
      int32_t za = pick_zx((kind)k, t % 3), zb = pick_zx((kind)k, (t / 3) % 3);
      run_matmul((kind)k, B, M, N, K, t % 3, za, zb, ap, bp, t % 5, 0, 0);
    }
  for (int k = 0; k < 3; k++) /* wide rows: N = 130, 64, 65 */
    for (int t = 0; t < 3; t++)
      run_matmul((kind)k, 2, 3, (int64_t[]){130, 64, 65}[t], 17, t, pick_zx((kind)k, t), pick_zx((kind)k, 2 - t), 0, 0, t, 0, 0);
  check_counts("matmul");
}

/* The documented bounds: 8-bit K * 255^2 < 2^31 reached with K = 33024 (|a - z_a| = |b - z_b| = 255);
   int16 |a - z_a| = 65535 with K = 4096 (acc ~ 2^44, acc * m ~ 2^75). */
static void test_matmul_bounds(void **state) {
  (void)state;
  static const int32_t ns[] = {0, 31, 45, 55, 62};
  for (int i = 0; i < 5; i++) {
    run_matmul(K_I8, 1, 1, 2, 33024, 0, 127, 127, 1, 1, 0, INT32_MAX, ns[i]);
    run_matmul(K_I8, 1, 1, 2, 33024, 0, 127, -128, 1, 2, 0, INT32_MAX, ns[i]);
    run_matmul(K_U8, 1, 1, 2, 33024, 0, 255, 0, 1, 2, 1, (1 << 30) + 7, ns[i]);
    run_matmul(K_I16, 1, 1, 2, 4096, 0, 32767, 32767, 1, 1, 0, INT32_MAX, ns[i]);
    run_matmul(K_I16, 1, 1, 2, 4096, 0, -32768, 32767, 2, 1, 2, INT32_MAX - 5, ns[i]);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_fc_shapes),       cmocka_unit_test(test_fc_extremes),
      cmocka_unit_test(test_fc_int32_bound),  cmocka_unit_test(test_fc_ties),
      cmocka_unit_test(test_fc_i16_worst_case), cmocka_unit_test(test_channel_affine),
      cmocka_unit_test(test_conv_directed),   cmocka_unit_test(test_conv_random),
      cmocka_unit_test(test_conv_i16_long),   cmocka_unit_test(test_matmul),
      cmocka_unit_test(test_matmul_bounds),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
