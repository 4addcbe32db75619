/* tests/libjit/q_pool_test.c: quantized maxpool2d, avgpool2d and global_avgpool for i8, u8 and i16
 * against references written here. Max pool: the largest in-image element of each window (padding
 * never wins; a window entirely in the padding gives the type's minimum). Average pool: the sum of
 * (x - z_x) over the in-image taps, requantized with the multiplier of the window's count (taps inside
 * the image, or with count_include_pad inside the padded extent only: ceil-mode windows reach past it),
 * via qllc_requant_apply; the multipliers come from src/quant's qllc_quant_pool_multipliers.
 * Shapes: sizes 1, 3, 7, 17, strides, asymmetric pads, dilations (max), ceil-mode output sizes. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "kernels_q.h"
#include "quant/quant.h"

#define Q_TEST_SEED 0x853c49e6748fea9bULL
#include "q_test_util.h"

static void fill(int32_t *v, int64_t n, kind k, int pattern) {
  for (int64_t i = 0; i < n; i++)
    v[i] = pattern == 0 ? (int32_t)irand(kmin(k), kmax(k)) : pattern == 1 ? kmin(k) : pattern == 2 ? kmax(k)
                                                                            : (i & 1) ? kmax(k) : kmin(k);
}
/* Output size, floor or ceil mode (ceil: the last window may start in the padding but not past it). */
static int64_t out_size(int64_t in, int64_t k, int64_t s, int64_t p0, int64_t p1, int64_t d, int ceil_mode) {
  int64_t span = in + p0 + p1 - (d * (k - 1) + 1);
  if (span < 0) return 0;
  int64_t o = (ceil_mode ? (span + s - 1) / s : span / s) + 1;
  if (ceil_mode && (o - 1) * s >= in + p0) o--;
  return o;
}

static const int64_t sizes[] = {1, 3, 7, 17};

static void run_maxpool(kind k, int64_t NC, int64_t H, int64_t W, int64_t KH, int64_t KW, int64_t sh, int64_t sw,
                        int64_t pt, int64_t pl, int64_t pb, int64_t pr, int64_t dh, int64_t dw, int ceil_mode,
                        int pattern) {
  int64_t OH = out_size(H, KH, sh, pt, pb, dh, ceil_mode), OW = out_size(W, KW, sw, pl, pr, dw, ceil_mode);
  if (OH <= 0 || OW <= 0) return;
  int32_t *xv = ivec(NC * H * W);
  fill(xv, NC * H * W, k, pattern);
  void *x = tbuf(k, xv, NC * H * W), *y = calloc((size_t)(NC * OH * OW), 2);
  if (k == K_I8) qllc_k_maxpool2d_i8_i8(y, x, NC, H, W, OH, OW, KH, KW, sh, sw, pt, pl, pb, pr, dh, dw);
  if (k == K_U8) qllc_k_maxpool2d_u8_u8(y, x, NC, H, W, OH, OW, KH, KW, sh, sw, pt, pl, pb, pr, dh, dw);
  if (k == K_I16) qllc_k_maxpool2d_i16_i16(y, x, NC, H, W, OH, OW, KH, KW, sh, sw, pt, pl, pb, pr, dh, dw);
  for (int64_t c = 0; c < NC; c++)
    for (int64_t oh = 0; oh < OH; oh++)
      for (int64_t ow = 0; ow < OW; ow++) {
        int32_t best = kmin(k);
        for (int64_t kh = 0; kh < KH; kh++)
          for (int64_t kw = 0; kw < KW; kw++) {
            int64_t ih = oh * sh - pt + kh * dh, iw = ow * sw - pl + kw * dw;
            if (ih >= 0 && ih < H && iw >= 0 && iw < W && xv[(c * H + ih) * W + iw] > best)
              best = xv[(c * H + ih) * W + iw];
          }
        int32_t got = tget(k, y, (c * OH + oh) * OW + ow);
        if (got != best)
          fail_msg("maxpool2d_%s H%lld W%lld K%lldx%lld s%lld,%lld p%lld,%lld,%lld,%lld d%lld,%lld at [%lld][%lld][%lld]: "
                   "got %d want %d",
                   kname[k], (long long)H, (long long)W, (long long)KH, (long long)KW, (long long)sh, (long long)sw,
                   (long long)pt, (long long)pl, (long long)pb, (long long)pr, (long long)dh, (long long)dw,
                   (long long)c, (long long)oh, (long long)ow, got, best);
      }
  free(xv), free(x), free(y);
}

static void test_maxpool(void **state) {
  (void)state;
  for (int k = 0; k < 3; k++)
    for (int t = 0; t < 300; t++) {
      int64_t H = sizes[irand(0, 3)], W = sizes[irand(0, 3)], KH = irand(1, 3), KW = irand(1, 3);
      int64_t pt = irand(0, KH - 1), pl = irand(0, KW - 1), pb = irand(0, KH - 1), pr = irand(0, KW - 1);
      run_maxpool((kind)k, irand(1, 3), H, W, KH, KW, irand(1, 3), irand(1, 3), pt, pl, pb, pr, irand(1, 2),
                  irand(1, 2), (int)irand(0, 1), t < 200 ? 0 : (int)irand(1, 3));
    }
  for (int k = 0; k < 3; k++) { /* wide rows */
    run_maxpool((kind)k, 2, 3, 150, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0);
    run_maxpool((kind)k, 1, 4, 201, 2, 3, 2, 2, 1, 1, 1, 2, 1, 2, 1, 0);
    /* rows longer than the kernel's 512-column runs, at strides 1 to 3 (a run ends mid-window) */
    run_maxpool((kind)k, 1, 2, 1500, 3, 3, 1, 2, 1, 1, 1, 1, 1, 1, 0, 0);
    run_maxpool((kind)k, 1, 2, 1100, 2, 5, 1, 1, 0, 2, 0, 2, 1, 1, 1, 0);
    run_maxpool((kind)k, 1, 3, 1301, 3, 4, 2, 3, 1, 3, 1, 0, 2, 3, 1, 0);
    /* windows reaching 255 columns (runs) and 258 (the per-tap loop) */
    run_maxpool((kind)k, 1, 2, 700, 1, 4, 1, 2, 0, 0, 0, 0, 1, 85, 0, 0);
    run_maxpool((kind)k, 1, 2, 700, 1, 4, 1, 2, 0, 0, 0, 0, 1, 86, 0, 0);
    run_maxpool((kind)k, 3, 112, 112, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 0, 0); /* ResNet's */
  }
  /* a 1x1 image under a 3x3 window with pad 1: the only element wins, even the minimum */
  for (int k = 0; k < 3; k++) run_maxpool((kind)k, 2, 1, 1, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 0, 1);
}

static void run_avgpool(kind k, int64_t NC, int64_t H, int64_t W, int64_t KH, int64_t KW, int64_t sh, int64_t sw,
                        int64_t pt, int64_t pl, int64_t pb, int64_t pr, int include_pad, int ceil_mode, int pattern,
                        int32_t z_x, int32_t z_y, int32_t lo, int32_t hi, float s_x, float s_y, int64_t *inside,
                        int64_t *total) {
  int64_t OH = out_size(H, KH, sh, pt, pb, 1, ceil_mode), OW = out_size(W, KW, sw, pl, pr, 1, ceil_mode);
  if (OH <= 0 || OW <= 0) return;
  int32_t *xv = ivec(NC * H * W), *m = ivec(KH * KW + 1), *n = ivec(KH * KW + 1);
  fill(xv, NC * H * W, k, pattern);
  assert_int_equal(qllc_quant_pool_multipliers(s_x, s_y, KH * KW, m, n, NULL), QLLC_OK);
  void *x = tbuf(k, xv, NC * H * W), *y = calloc((size_t)(NC * OH * OW), 2);
  if (k == K_I8)
    qllc_k_avgpool2d_i8_i8(y, x, m, n, NC, H, W, OH, OW, KH, KW, sh, sw, pt, pl, pb, pr, include_pad, z_x, z_y, lo, hi);
  if (k == K_U8)
    qllc_k_avgpool2d_u8_u8(y, x, m, n, NC, H, W, OH, OW, KH, KW, sh, sw, pt, pl, pb, pr, include_pad, z_x, z_y, lo, hi);
  if (k == K_I16)
    qllc_k_avgpool2d_i16_i16(y, x, m, n, NC, H, W, OH, OW, KH, KW, sh, sw, pt, pl, pb, pr, include_pad, z_x, z_y, lo,
                             hi);
  for (int64_t c = 0; c < NC; c++)
    for (int64_t oh = 0; oh < OH; oh++)
      for (int64_t ow = 0; ow < OW; ow++) {
        int64_t sum = 0, cnt = 0;
        for (int64_t kh = 0; kh < KH; kh++)
          for (int64_t kw = 0; kw < KW; kw++) {
            int64_t ih = oh * sh - pt + kh, iw = ow * sw - pl + kw;
            int in_image = ih >= 0 && ih < H && iw >= 0 && iw < W;
            int in_padded = ih >= -pt && ih < H + pb && iw >= -pl && iw < W + pr;
            if (in_image) sum += xv[(c * H + ih) * W + iw] - z_x;
            if (include_pad ? in_padded : in_image) cnt++;
          }
        int64_t v = cnt ? (int64_t)qllc_requant_apply(sum, m[cnt], n[cnt]) + z_y : z_y;
        (*total)++;
        if (v > lo && v < hi) (*inside)++;
        int32_t want = clampi(v, lo, hi), got = tget(k, y, (c * OH + oh) * OW + ow);
        if (got != want)
          fail_msg("avgpool2d_%s H%lld W%lld K%lldx%lld s%lld,%lld p%lld,%lld,%lld,%lld incl%d z_x=%d at "
                   "[%lld][%lld][%lld] (count %lld): got %d want %d",
                   kname[k], (long long)H, (long long)W, (long long)KH, (long long)KW, (long long)sh, (long long)sw,
                   (long long)pt, (long long)pl, (long long)pb, (long long)pr, include_pad, z_x, (long long)c,
                   (long long)oh, (long long)ow, (long long)cnt, got, want);
      }
  free(xv), free(m), free(n), free(x), free(y);
}

static void test_avgpool(void **state) {
  (void)state;
  for (int k = 0; k < 3; k++) {
    int64_t inside = 0, total = 0;
    for (int t = 0; t < 400; t++) {
      int64_t H = sizes[irand(0, 3)], W = sizes[irand(0, 3)], KH = irand(1, 3), KW = irand(1, 3);
      int64_t pt = irand(0, KH - 1), pl = irand(0, KW - 1), pb = irand(0, KH - 1), pr = irand(0, KW - 1);
      int32_t z_x = t % 3 == 0 ? kmin((kind)k) : t % 3 == 1 ? kmax((kind)k) : (int32_t)irand(kmin((kind)k), kmax((kind)k));
      int32_t z_y = (int32_t)irand(kmin((kind)k), kmax((kind)k)), lo = kmin((kind)k), hi = kmax((kind)k);
      if (t % 4 == 3) lo = z_y;
      float s_x = 0.01f + (float)irand(0, 100) / 100.0f, s_y = s_x * (0.5f + (float)irand(0, 100) / 100.0f);
      run_avgpool((kind)k, irand(1, 3), H, W, KH, KW, irand(1, 3), irand(1, 3), pt, pl, pb, pr, (int)irand(0, 1),
                  (int)irand(0, 1), t < 300 ? 0 : (int)irand(1, 3), z_x, z_y, lo, hi, s_x, s_y, &inside, &total);
    }
    /* wide rows (kernels may process a row in chunks) */
    run_avgpool((kind)k, 2, 3, 150, 3, 3, 1, 1, 1, 1, 1, 1, 0, 0, 0, kmin((kind)k), 0, kmin((kind)k), kmax((kind)k),
                0.1f, 0.1f, &inside, &total);
    run_avgpool((kind)k, 1, 4, 201, 2, 3, 2, 2, 1, 1, 1, 2, 1, 1, 0, kmax((kind)k), 1, kmin((kind)k), kmax((kind)k),
                0.1f, 0.07f, &inside, &total);
    run_avgpool((kind)k, 1, 2, 140, 1, 2, 1, 1, 0, 1, 0, 1, 1, 0, 3, 5, -1, kmin((kind)k) + 1, kmax((kind)k), 0.3f,
                0.2f, &inside, &total);
    if (inside * 3 < total) fail_msg("avgpool_%s: only %lld of %lld inside", kname[k], (long long)inside, (long long)total);
  }
}

/* Hand-computed: 3x3 image of i8, 2x2 window, stride 2, pads 1 all round, z_x = 10, s_x == s_y. */
static void test_avgpool_hand(void **state) {
  (void)state;
  int8_t x[9] = {10, 14, 18, 22, 26, 30, 34, 38, 127}; /* x - z_x: 0 4 8 / 12 16 20 / 24 28 117 */
  int32_t m[5], n[5];
  assert_int_equal(qllc_quant_pool_multipliers(0.5f, 0.5f, 4, m, n, NULL), QLLC_OK);
  int8_t y[4];
  qllc_k_avgpool2d_i8_i8(y, x, m, n, 1, 3, 3, 2, 2, 2, 2, 2, 2, 1, 1, 1, 1, 0, 10, 0, -128, 127);
  /* windows: {0} -> 0; {4, 8} -> 6; {12, 24} -> 18; {16, 20, 28, 117} -> 45.25 -> 45 */
  assert_int_equal(y[0], 0);
  assert_int_equal(y[1], 6);
  assert_int_equal(y[2], 18);
  assert_int_equal(y[3], 45);
  qllc_k_avgpool2d_i8_i8(y, x, m, n, 1, 3, 3, 2, 2, 2, 2, 2, 2, 1, 1, 1, 1, 1, 10, 0, -128, 127);
  /* counting the padding: every window has 4 taps: 0, 3, 9, 45.25 -> 0 3 9 45 */
  assert_int_equal(y[0], 0);
  assert_int_equal(y[1], 3);
  assert_int_equal(y[2], 9);
  assert_int_equal(y[3], 45);
}

static void test_global_avgpool(void **state) {
  (void)state;
  static const int64_t hws[] = {1, 3, 7, 17, 49, 4096};
  for (int k = 0; k < 3; k++)
    for (int t = 0; t < 48; t++) {
      int64_t NC = sizes[t % 4], HW = hws[(t / 4) % 6];
      int pattern = t < 24 ? 0 : 1 + t % 3;
      int32_t *xv = ivec(NC * HW);
      fill(xv, NC * HW, (kind)k, pattern);
      int32_t z_x = t % 2 ? kmin((kind)k) : kmax((kind)k), z_y = (int32_t)irand(kmin((kind)k), kmax((kind)k));
      qllc_requant r;
      assert_int_equal(qllc_requant_make(1.3 / (double)HW, &r, NULL), QLLC_OK);
      void *x = tbuf((kind)k, xv, NC * HW), *y = calloc((size_t)NC, 2);
      if (k == K_I8) qllc_k_global_avgpool_i8_i8(y, x, NC, HW, z_x, r.m, r.n, z_y, kmin(k), kmax(k));
      if (k == K_U8) qllc_k_global_avgpool_u8_u8(y, x, NC, HW, z_x, r.m, r.n, z_y, kmin(k), kmax(k));
      if (k == K_I16) qllc_k_global_avgpool_i16_i16(y, x, NC, HW, z_x, r.m, r.n, z_y, kmin(k), kmax(k));
      for (int64_t c = 0; c < NC; c++) {
        int64_t sum = 0;
        for (int64_t i = 0; i < HW; i++) sum += xv[c * HW + i] - z_x;
        int32_t want = clampi((int64_t)qllc_requant_apply(sum, r.m, r.n) + z_y, kmin((kind)k), kmax((kind)k));
        if (tget((kind)k, y, c) != want)
          fail_msg("global_avgpool_%s HW=%lld [%lld]: got %d want %d", kname[k], (long long)HW, (long long)c,
                   tget((kind)k, y, c), want);
      }
      free(xv), free(x), free(y);
    }
}

/* The channel-last twins (maxpool2dcl, global_avgpoolcl) in every layout combination against the
   reference kernels' NCHW bytes (the references are checked above against the naive ones). */
static void run_maxpool_cl(kind k, int64_t N, int64_t C, int64_t H, int64_t W, int64_t KH, int64_t KW, int64_t sh,
                           int64_t sw, int64_t pt, int64_t pl, int64_t pb, int64_t pr, int64_t dh, int64_t dw,
                           int pattern) {
  const int64_t OH = out_size(H, KH, sh, pt, pb, dh, 0), OW = out_size(W, KW, sw, pl, pr, dw, 0);
  if (OH <= 0 || OW <= 0) return;
  const int64_t nx = N * C * H * W, ny = N * C * OH * OW;
  int32_t *xv = ivec(nx);
  fill(xv, nx, k, pattern);
  uint8_t *x = tbuf(k, xv, nx), *xh = malloc((size_t)nx), *want = malloc((size_t)ny), *got = malloc((size_t)ny),
          *back = malloc((size_t)ny);
  if (k == K_I8) qllc_k_maxpool2d_i8_i8((int8_t *)want, (int8_t *)x, N * C, H, W, OH, OW, KH, KW, sh, sw, pt, pl, pb, pr, dh, dw);
  else qllc_k_maxpool2d_u8_u8(want, x, N * C, H, W, OH, OW, KH, KW, sh, sw, pt, pl, pb, pr, dh, dw);
  q_relayout(xh, x, N, C, H * W, 1);
  for (int lay = 0; lay < 4; lay++) {
    const int xl = lay & 1, yl = lay >> 1;
    memset(got, 0x5a, (size_t)ny);
    if (k == K_I8)
      qllc_k_maxpool2dcl_i8_i8((int8_t *)got, xl ? (int8_t *)xh : (int8_t *)x, N * C, H, W, OH, OW, KH, KW, sh, sw, pt,
                               pl, pb, pr, dh, dw, C, xl, yl);
    else
      qllc_k_maxpool2dcl_u8_u8(got, xl ? xh : x, N * C, H, W, OH, OW, KH, KW, sh, sw, pt, pl, pb, pr, dh, dw, C, xl, yl);
    if (yl) q_relayout(back, got, N, C, OH * OW, 0);
    else memcpy(back, got, (size_t)ny);
    for (int64_t i = 0; i < ny; i++)
      if (back[i] != want[i])
        fail_msg("maxpool2dcl_%s x %s y %s N%lld C%lld H%lld W%lld K%lldx%lld s%lld,%lld p%lld,%lld,%lld,%lld "
                 "d%lld,%lld: y[%lld] (NCHW) got %d want %d",
                 kname[k], xl ? "NHWC" : "NCHW", yl ? "NHWC" : "NCHW", (long long)N, (long long)C, (long long)H,
                 (long long)W, (long long)KH, (long long)KW, (long long)sh, (long long)sw, (long long)pt, (long long)pl,
                 (long long)pb, (long long)pr, (long long)dh, (long long)dw, (long long)i, back[i], want[i]);
  }
  free(xv), free(x), free(xh), free(want), free(got), free(back);
}

static void test_pools_channel_last(void **state) {
  (void)state;
  for (int k = 0; k < 2; k++) {
    for (int t = 0; t < 200; t++) {
      const int64_t KH = irand(1, 3), KW = irand(1, 3);
      run_maxpool_cl((kind)k, irand(1, 2), irand(0, 3) ? irand(1, 40) : irand(250, 300), sizes[irand(0, 3)],
                     sizes[irand(0, 3)], KH, KW, irand(1, 3), irand(1, 3), irand(0, KH - 1), irand(0, KW - 1),
                     irand(0, KH - 1), irand(0, KW - 1), irand(1, 2), irand(1, 2), t < 150 ? 0 : (int)irand(1, 3));
    }
    run_maxpool_cl((kind)k, 1, 64, 112, 112, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 0); /* ResNet's */
    run_maxpool_cl((kind)k, 2, 5, 3, 150, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 0);
    run_maxpool_cl((kind)k, 1, 3, 2, 4200, 1, 3, 1, 1, 0, 1, 0, 1, 1, 1, 0);  /* a row wider than the staging */
    run_maxpool_cl((kind)k, 1, 300, 1, 1, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1); /* one pixel, channel runs of 256 */
  }
  static const int64_t hws[] = {1, 3, 49, 196}, cs[] = {1, 7, 64, 130, 512};
  for (int k = 0; k < 2; k++)
    for (int t = 0; t < 40; t++) {
      const int64_t N = 1 + t % 2, C = cs[t % 5], HW = hws[(t / 5) % 4], n = N * C * HW;
      int32_t *xv = ivec(n);
      fill(xv, n, (kind)k, t < 20 ? 0 : 1 + t % 3);
      const int32_t z_x = (int32_t)irand(kmin((kind)k), kmax((kind)k)), z_y = (int32_t)irand(kmin((kind)k), kmax((kind)k));
      qllc_requant r;
      assert_int_equal(qllc_requant_make(0.9 / (double)HW, &r, NULL), QLLC_OK);
      uint8_t *x = tbuf((kind)k, xv, n), *xh = malloc((size_t)n), *want = malloc((size_t)(N * C)), *got = malloc((size_t)(N * C));
      q_relayout(xh, x, N, C, HW, 1);
      if (k == K_I8) qllc_k_global_avgpool_i8_i8((int8_t *)want, (int8_t *)x, N * C, HW, z_x, r.m, r.n, z_y, -128, 127);
      else qllc_k_global_avgpool_u8_u8(want, x, N * C, HW, z_x, r.m, r.n, z_y, 0, 255);
      for (int lay = 0; lay < 4; lay++) {
        const int xl = lay & 1, yl = lay >> 1;
        memset(got, 0x5a, (size_t)(N * C));
        if (k == K_I8)
          qllc_k_global_avgpoolcl_i8_i8((int8_t *)got, (int8_t *)(xl ? xh : x), N * C, HW, z_x, r.m, r.n, z_y, -128, 127,
                                        C, xl, yl);
        else qllc_k_global_avgpoolcl_u8_u8(got, xl ? xh : x, N * C, HW, z_x, r.m, r.n, z_y, 0, 255, C, xl, yl);
        for (int64_t i = 0; i < N * C; i++)
          if (got[i] != want[i])
            fail_msg("global_avgpoolcl_%s x %s N%lld C%lld HW%lld: y[%lld] got %d want %d", kname[k],
                     xl ? "NHWC" : "NCHW", (long long)N, (long long)C, (long long)HW, (long long)i, got[i], want[i]);
      }
      free(xv), free(x), free(xh), free(want), free(got);
    }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_maxpool),
      cmocka_unit_test(test_avgpool),
      cmocka_unit_test(test_avgpool_hand),
      cmocka_unit_test(test_global_avgpool),
      cmocka_unit_test(test_pools_channel_last),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
