/* tests/libjit/f32_x86_test.c: the float rows of the x86_64 kernel catalogue (targets/x86_64/kernels/
 * variants.def, in f32; q_catalog.h, Q_SUITE_F32), each run on a table of shapes, packed by the row's
 * packer into its layout and compared bit for bit with its reference: FC (tails in M, N and K, k blocks,
 * one row, no bias, a clamp, special values) with qllc_k_fc_f32_f32_f32 (libjit/bitcode/fc.c, checked
 * against double sums in gemm_test.c) on the plain w[K][N] it takes; Conv (pixel and channel tails,
 * strides, dilations, groups, 1x1, 7x7, k chunks) and depthwise conv (strides 1 to 4, pads, 3x3, 5x5, 1x1, 7x7,
 * dilation, widths below and above 16, clamps, no bias, special values) with qllc_k_conv2d_f32_f32_f32
 * (conv.c, checked against double in conv_test.c); each conv row on the cases of its class (its
 * predicate: not -1), which must then take them. Inputs and weights end at a
 * PROT_NONE page, so a read past them faults; output and scratch carry a guard zone that must stay
 * untouched. A row whose features the host lacks is SKIPPED. Also the F32_N32 packer against an
 * independent enumeration, and the float MaxPool's ISA copies against qllc_k_maxpool2d_f32_f32. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../targets/x86_64/kernels/variants.h"
#include "kernels_f32.h"
#include "kernels_q.h"
#include "lower/pack.h"

#define Q_TEST_SEED 0x26f32f32a5a5c3c3ULL
#include "q_x86_test_util.h"
#define Q_CATALOG_DEF "../../targets/x86_64/kernels/variants.def"
#include "q_catalog.h"

/* uniform in [-1, 1) */
static float frand(void) { return (float)((double)(next() >> 11) / 9007199254740992.0 * 2.0 - 1.0); }

typedef struct fc_case {
  int64_t M, N, K;
  int bias;     /* 0: NULL */
  float lo, hi; /* the fused clamp */
  int special;  /* a few inputs inf, -inf, NaN, -0 */
} fc_case;

static const fc_case cases[] = {
    {1, 1, 1, 1, -INFINITY, INFINITY, 0},   {1, 10, 1024, 1, -INFINITY, INFINITY, 0},
    {1, 128, 64, 0, -INFINITY, INFINITY, 0}, {1, 1024, 1024, 1, -INFINITY, INFINITY, 0},
    {1, 160, 33, 1, 0.0f, INFINITY, 0},     {2, 31, 5, 1, -INFINITY, INFINITY, 0},
    {3, 33, 7, 0, -0.5f, 0.5f, 0},           {8, 32, 16, 1, -INFINITY, INFINITY, 0},
    {9, 65, 513, 1, 0.0f, 6.0f, 0},          {13, 64, 3, 1, -INFINITY, INFINITY, 1},
    {17, 100, 1030, 1, -INFINITY, INFINITY, 0}, {64, 96, 600, 0, 0.0f, INFINITY, 0},
    {64, 256, 256, 1, -INFINITY, INFINITY, 1},  {7, 1, 2000, 1, -INFINITY, INFINITY, 0},
    {5, 200, 0, 1, -1.0f, 1.0f, 0},
};

/* One row on one case: 0 when it gives the reference's bytes. */
static void run_case(const q_vrow *r, const fc_case *c) {
  const int64_t M = c->M, N = c->N, K = c->K;
  gbuf gx, gw, gb, gp;
  float *x = galloc(&gx, (size_t)(M * K > 0 ? M * K : 1) * sizeof(float));
  float *w = galloc(&gw, (size_t)(N * K > 0 ? N * K : 1) * sizeof(float)); /* w[N][K], as the node holds it */
  float *b = galloc(&gb, (size_t)N * sizeof(float));
  for (int64_t i = 0; i < M * K; i++) x[i] = frand();
  for (int64_t i = 0; i < N * K; i++) w[i] = frand();
  for (int64_t i = 0; i < N; i++) b[i] = frand();
  if (c->special && M * K >= 4) {
    x[0] = INFINITY, x[M * K / 2] = -INFINITY, x[M * K - 1] = NAN, x[1] = -0.0f;
  }
  float *wt = malloc((size_t)(N * K > 0 ? N * K : 1) * sizeof(float)); /* the reference's w[K][N] */
  for (int64_t n = 0; n < N; n++)
    for (int64_t k = 0; k < K; k++) wt[k * N + n] = w[n * K + k];
  const size_t pbytes = qllc_pack_size(r->layout, N, K);
  void *wp = galloc(&gp, pbytes ? pbytes : 1);
  const qllc_pack_src src = {.w = w, .ch = N, .K = K, .taps = 1, .w_f32 = 1};
  assert_int_equal(r->pack(&src, wp, NULL), -1);
  const qllc_layer_geom g = q_fc_geom(M, N, K);
  char why[160];
  assert_int_equal(r->fits(&g, why, sizeof why), 1);
  const size_t sbytes = (size_t)r->scratch(&g), ybytes = (size_t)(M * N) * sizeof(float);
  uint8_t *s = gzone(sbytes), *yv = gzone(ybytes), *yr = gzone(ybytes);
  const float *bias = c->bias ? b : NULL;
  qllc_k_fc_f32_f32_f32((float *)yr, x, wt, bias, M, N, K, c->lo, c->hi);
  r->fcf_fn((float *)yv, x, wp, bias, M, N, K, c->lo, c->hi, s);
  if (memcmp(yv, yr, ybytes) != 0) {
    for (int64_t i = 0; i < M * N; i++) {
      uint32_t a, e;
      memcpy(&a, yv + i * 4, 4), memcpy(&e, yr + i * 4, 4);
      if (a != e)
        fail_msg("%s: M=%lld N=%lld K=%lld: y[%lld][%lld] = %a, reference %a", r->name, (long long)M, (long long)N,
                 (long long)K, (long long)(i / N), (long long)(i % N), ((float *)yv)[i], ((float *)yr)[i]);
    }
  }
  assert_true(guard_ok(yv, ybytes));
  assert_true(guard_ok(s, sbytes));
  free(s), free(yv), free(yr), free(wt);
  gfree(&gx), gfree(&gw), gfree(&gb), gfree(&gp);
}

/* Conv: N C H W M KH KW stride_h stride_w pad_top pad_left pad_bottom pad_right dil_h dil_w group, bias, clamp */
typedef struct conv_case {
  int64_t d[16];
  int bias;
  float lo, hi;
} conv_case;
static const conv_case conv_cases[] = {
    {{1, 3, 8, 8, 4, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1}, 1, -INFINITY, INFINITY},
    {{1, 16, 14, 14, 16, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1}, 1, 0.0f, INFINITY},    /* 196 pixels: a 4-pixel tail */
    {{2, 8, 9, 7, 13, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 1}, 0, -INFINITY, INFINITY},  /* stride 2, 13 channels */
    {{1, 32, 10, 10, 24, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1, 1}, 1, -1.0f, 1.0f},      /* 1x1 */
    {{1, 64, 12, 12, 64, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1}, 1, -INFINITY, INFINITY}, /* K = 576: k chunks */
    {{1, 8, 11, 11, 12, 3, 3, 1, 1, 2, 2, 2, 2, 2, 2, 1}, 1, -INFINITY, INFINITY}, /* dilation 2 */
    {{1, 24, 9, 9, 50, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1}, 1, -INFINITY, INFINITY},  /* 50 channels: 24 24 2 */
    {{1, 3, 23, 23, 8, 7, 7, 2, 2, 3, 3, 3, 3, 1, 1, 1}, 1, 0.0f, 6.0f},           /* a 7x7 stem */
    {{1, 128, 6, 6, 5, 3, 3, 1, 1, 0, 0, 0, 0, 1, 1, 1}, 0, -INFINITY, INFINITY},  /* K = 1152 */
};
/* depthwise: group == C == M. special: a few inputs inf, -inf, NaN, -0; channel 0's first weight inf (its
   padded taps add inf * 0: NaN; not in the channel of the NaN input, whose sign a sum of two NaNs leaves to
   the compiler's operand order); the bias -0 in the even channels. */
typedef struct dw_case {
  conv_case c;
  int special;
} dw_case;
static const dw_case dw_cases[] = {
    {{{1, 32, 20, 20, 32, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 32}, 1, -INFINITY, INFINITY}, 0}, /* 20 wide: 16 + 4 */
    {{{1, 5, 14, 14, 5, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 5}, 1, 0.0f, 6.0f}, 0},             /* stride 2, ReLU6 */
    {{{2, 3, 7, 7, 3, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 3}, 0, -INFINITY, INFINITY}, 0},      /* 7 wide, no bias */
    {{{1, 26, 9, 37, 26, 5, 5, 1, 1, 2, 2, 2, 2, 1, 1, 26}, 1, -0.5f, 0.5f}, 0},          /* 5x5, 37 wide */
    {{{1, 4, 15, 33, 4, 5, 5, 2, 2, 2, 2, 2, 2, 1, 1, 4}, 1, -INFINITY, INFINITY}, 0},    /* 5x5 stride 2 */
    {{{1, 6, 13, 19, 6, 3, 3, 1, 1, 2, 2, 2, 2, 2, 2, 6}, 1, -INFINITY, INFINITY}, 0},    /* dilation 2 */
    {{{1, 3, 16, 16, 3, 3, 3, 1, 2, 0, 1, 2, 0, 1, 3, 3}, 1, -INFINITY, INFINITY}, 0},    /* uneven pads, strides, dil */
    {{{1, 2, 17, 35, 2, 3, 5, 3, 4, 1, 2, 1, 2, 1, 1, 2}, 1, -INFINITY, INFINITY}, 0},    /* strides 3 and 4 */
    {{{1, 3, 10, 100, 3, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 3}, 1, -INFINITY, INFINITY}, 0},   /* stride 2, 100 wide */
    {{{1, 2, 5, 70, 2, 3, 3, 1, 2, 0, 0, 0, 0, 1, 1, 2}, 1, -INFINITY, INFINITY}, 0},     /* stride 1x2, no pad */
    {{{1, 2, 5, 67, 2, 3, 3, 1, 1, 0, 2, 0, 3, 1, 1, 2}, 1, -INFINITY, INFINITY}, 0},     /* pads 2 and 3 along W */
    {{{1, 8, 16, 16, 8, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1, 8}, 1, -INFINITY, INFINITY}, 0},    /* 1x1 */
    {{{1, 3, 9, 9, 3, 7, 7, 1, 1, 3, 3, 3, 3, 1, 1, 3}, 1, 0.0f, INFINITY}, 0},           /* 7x7 */
    {{{1, 1, 3, 3, 1, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1}, 1, -INFINITY, INFINITY}, 0},      /* group 1 = C = M: not dw */
    {{{1, 30, 8, 8, 30, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 30}, 1, -INFINITY, INFINITY}, 1},   /* special values */
    {{{1, 9, 6, 40, 9, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 9}, 0, -INFINITY, INFINITY}, 1},     /* special, stride 2 */
};

/* 0 when the case is not of the row's class (its predicate answers -1), else 1 after checking it */
static int run_conv_case(const q_vrow *r, const conv_case *cc, int special) {
  const int64_t *d = cc->d;
  const int64_t N = d[0], C = d[1], H = d[2], W = d[3], M = d[4], KH = d[5], KW = d[6], sh = d[7], sw = d[8];
  const int64_t pt = d[9], pl = d[10], pb = d[11], pr = d[12], dh = d[13], dw = d[14], group = d[15];
  const int64_t OH = (H + pt + pb - (KH - 1) * dh - 1) / sh + 1, OW = (W + pl + pr - (KW - 1) * dw - 1) / sw + 1;
  const int64_t K = C / group * KH * KW, nx = N * C * H * W, nw = M * K, ny = N * M * OH * OW;
  const int64_t geo[16] = {N, C, H, W, M, OH, OW, KH, KW, sh, sw, pt, pl, dh, dw, group};
  const qllc_layer_geom g = q_conv_geom(geo);
  char why[160];
  const int fits = r->fits(&g, why, sizeof why);
  if (fits == -1) return 0;
  assert_int_equal(fits, 1);
  gbuf gx, gw, gb, gp;
  float *x = galloc(&gx, (size_t)nx * sizeof(float)), *w = galloc(&gw, (size_t)nw * sizeof(float));
  float *b = galloc(&gb, (size_t)M * sizeof(float));
  for (int64_t i = 0; i < nx; i++) x[i] = frand();
  for (int64_t i = 0; i < nw; i++) w[i] = frand();
  for (int64_t i = 0; i < M; i++) b[i] = frand();
  if (special) {
    x[0] = INFINITY, x[nx / 2] = -INFINITY, x[nx - 1] = NAN, x[1] = -0.0f, w[0] = INFINITY;
    for (int64_t i = 0; i < M; i += 2) b[i] = -0.0f;
  }
  const size_t pbytes = qllc_pack_size(r->layout, M, K);
  void *wp = galloc(&gp, pbytes);
  const qllc_pack_src src = {.w = w, .ch = M, .K = K, .taps = KH * KW, .w_f32 = 1};
  assert_int_equal(r->pack(&src, wp, NULL), -1);
  const size_t sbytes = (size_t)r->scratch(&g), ybytes = (size_t)ny * sizeof(float);
  uint8_t *s = gzone(sbytes), *yv = gzone(ybytes), *yr = gzone(ybytes);
  const float *bias = cc->bias ? b : NULL;
  qllc_k_conv2d_f32_f32_f32((float *)yr, x, w, bias, N, C, H, W, M, OH, OW, KH, KW, sh, sw, pt, pl, dh, dw, group,
                            cc->lo, cc->hi);
  r->convf_fn((float *)yv, x, wp, bias, N, C, H, W, M, OH, OW, KH, KW, sh, sw, pt, pl, dh, dw, group, cc->lo, cc->hi,
              s);
  for (int64_t i = 0; i < ny; i++) {
    uint32_t a, e;
    memcpy(&a, yv + i * 4, 4), memcpy(&e, yr + i * 4, 4);
    if (a != e)
      fail_msg("%s: conv C=%lld M=%lld %lldx%lld: y[%lld] = %a, reference %a", r->name, (long long)C, (long long)M,
               (long long)KH, (long long)KW, (long long)i, ((float *)yv)[i], ((float *)yr)[i]);
  }
  assert_true(guard_ok(yv, ybytes));
  assert_true(guard_ok(s, sbytes));
  free(s), free(yv), free(yr);
  gfree(&gx), gfree(&gw), gfree(&gb), gfree(&gp);
  return 1;
}

static void test_row(void **state) {
  const q_vrow *r = *state;
  if (!q_row_runs(r)) {
    print_message("%s: needs %s, which this CPU lacks\n", r->name, r->features);
    skip();
  }
  if (r->fcf_fn)
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) run_case(r, &cases[i]);
  if (r->convf_fn) {
    int ran = 0;
    for (size_t i = 0; i < sizeof conv_cases / sizeof conv_cases[0]; i++) ran += run_conv_case(r, &conv_cases[i], 0);
    for (size_t i = 0; i < sizeof dw_cases / sizeof dw_cases[0]; i++) ran += run_conv_case(r, &dw_cases[i].c, dw_cases[i].special);
    assert_true(ran >= 8); /* each conv row has a table of its class */
  }
}

/* The float MaxPool's ISA copies (QISA rows of src/lower/kernels.def, x86_f32pool.h) bit for bit against
   qllc_k_maxpool2d_f32_f32: strides 1, 2, 3, pads, dilation, ceil-mode outputs past the pads, rows
   narrower and wider than 16, special values (NaN, whose later taps may replace it, -0 and +0, inf). */
typedef void maxpool_fn(float *y, const float *x, int64_t NC, int64_t H, int64_t W, int64_t OH, int64_t OW,
                        int64_t KH, int64_t KW, int64_t sh, int64_t sw, int64_t pt, int64_t pl, int64_t pb, int64_t pr,
                        int64_t dh, int64_t dw);
static void run_maxpool(const char *name, maxpool_fn *fn, const char *features) {
  /* NC H W KH KW sh sw pt pl pb pr dh dw, ceil (one more output row and column where the pads allow) */
  static const int64_t cases[][14] = {
      {64, 112, 112, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 0}, /* ResNet-18's */
      {3, 20, 20, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 0},    {5, 9, 7, 2, 2, 2, 2, 0, 0, 0, 0, 1, 1, 0},
      {2, 33, 70, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 1},    {2, 17, 40, 5, 5, 1, 1, 2, 2, 2, 2, 1, 1, 0},
      {2, 15, 50, 3, 3, 1, 2, 0, 1, 2, 0, 2, 3, 0},    {3, 16, 45, 3, 3, 3, 3, 1, 1, 1, 1, 1, 1, 1},
      {1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1, 0},      {4, 7, 7, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 0},
  };
  if (!q_host_has(features)) {
    print_message("%s: needs %s, which this CPU lacks\n", name, features);
    skip();
  }
  for (size_t t = 0; t < sizeof cases / sizeof cases[0]; t++) {
    const int64_t *d = cases[t];
    const int64_t NC = d[0], H = d[1], W = d[2], KH = d[3], KW = d[4], sh = d[5], sw = d[6], pt = d[7], pl = d[8];
    const int64_t pb = d[9], pr = d[10], dh = d[11], dw = d[12];
    const int64_t eh = H + pt + pb - (KH - 1) * dh - 1, ew = W + pl + pr - (KW - 1) * dw - 1;
    const int64_t OH = (d[13] ? eh + sh - 1 : eh) / sh + 1, OW = (d[13] ? ew + sw - 1 : ew) / sw + 1;
    const int64_t nx = NC * H * W, ny = NC * OH * OW;
    gbuf gx;
    float *x = galloc(&gx, (size_t)nx * sizeof(float));
    for (int64_t i = 0; i < nx; i++) x[i] = frand();
    for (int64_t i = 0; i < nx; i += 37) x[i] = (i / 37) % 4 == 0 ? NAN : (i / 37) % 4 == 1 ? -0.0f : (i / 37) % 4 == 2 ? 0.0f : INFINITY;
    const size_t yb = (size_t)ny * sizeof(float);
    uint8_t *yv = gzone(yb), *yr = gzone(yb);
    qllc_k_maxpool2d_f32_f32((float *)yr, x, NC, H, W, OH, OW, KH, KW, sh, sw, pt, pl, pb, pr, dh, dw);
    fn((float *)yv, x, NC, H, W, OH, OW, KH, KW, sh, sw, pt, pl, pb, pr, dh, dw);
    for (int64_t i = 0; i < ny; i++) {
      uint32_t a, e;
      memcpy(&a, yv + i * 4, 4), memcpy(&e, yr + i * 4, 4);
      if (a != e)
        fail_msg("%s: case %zu: y[%lld] = %a, reference %a", name, t, (long long)i, ((float *)yv)[i], ((float *)yr)[i]);
    }
    assert_true(guard_ok(yv, yb));
    free(yv), free(yr);
    gfree(&gx);
  }
}
static void test_maxpool_avx512(void **state) {
  (void)state;
  run_maxpool("qllc_k_maxpool2d_f32_f32__avx512", qllc_k_maxpool2d_f32_f32__avx512, "avx512f");
}
static void test_maxpool_avx2(void **state) {
  (void)state;
  run_maxpool("qllc_k_maxpool2d_f32_f32__avx2", qllc_k_maxpool2d_f32_f32__avx2, "avx2");
}

/* The float depthwise rows' predicate: depthwise layers of strides up to 4 (the scratch's phase planes). */
static void test_fits_f32dw(void **state) {
  (void)state;
  const int64_t dw[16] = {1, 8, 16, 16, 8, 16, 16, 3, 3, 1, 1, 1, 1, 1, 1, 8};
  int64_t geo[16];
  char why[160] = "";
  memcpy(geo, dw, sizeof geo);
  assert_int_equal(qllc_fits_f32dw(&(qllc_layer_geom){0}, why, sizeof why), -1); /* an FC */
  qllc_layer_geom g = q_conv_geom(geo);
  assert_int_equal(qllc_fits_f32dw(&g, why, sizeof why), 1);
  geo[10] = 5; /* stride_w 5 */
  g = q_conv_geom(geo);
  assert_int_equal(qllc_fits_f32dw(&g, why, sizeof why), 0);
  assert_non_null(strstr(why, "stride 1x5"));
  geo[10] = 1, geo[15] = 1; /* group 1: not depthwise */
  g = q_conv_geom(geo);
  assert_int_equal(qllc_fits_f32dw(&g, why, sizeof why), -1);
  assert_int_equal(qllc_fits_f32conv(&g, why, sizeof why), 1);
}

/* F32_M24: w[c][k] at ((c / 24) * K + k) * 24 + c % 24, zeros in the channels past ch. */
static void test_pack_m24(void **state) {
  (void)state;
  static const int64_t chs[] = {1, 23, 24, 25, 64}, Ks[] = {1, 9, 27};
  for (int a = 0; a < 5; a++)
    for (int bk = 0; bk < 3; bk++) {
      const int64_t ch = chs[a], K = Ks[bk], mp = (ch + 23) / 24 * 24;
      assert_int_equal(qllc_pack_size(QLLC_LAYOUT_F32_M24, ch, K), (size_t)(mp * K) * sizeof(float));
      float *w = malloc((size_t)(ch * K) * sizeof(float)), *d = malloc((size_t)(mp * K) * sizeof(float));
      for (int64_t i = 0; i < ch * K; i++) w[i] = (float)(i + 1);
      const qllc_pack_src src = {.w = w, .ch = ch, .K = K, .taps = 1, .w_f32 = 1};
      assert_int_equal(qllc_packer_F32_M24(&src, d, NULL), -1);
      int64_t i = 0; /* storage order: block, k, channel */
      for (int64_t mb = 0; mb < mp / 24; mb++)
        for (int64_t k = 0; k < K; k++)
          for (int64_t j = 0; j < 24; j++, i++) {
            const int64_t c = mb * 24 + j;
            assert_true(d[i] == (c < ch ? w[c * K + k] : 0.0f));
          }
      free(w), free(d);
    }
}

/* F32_N32: w[c][k] at ((c / 32) * K + k) * 32 + c % 32, zeros in the columns past ch. */
static void test_pack_n32(void **state) {
  (void)state;
  static const int64_t chs[] = {1, 31, 32, 33, 100}, Ks[] = {1, 2, 7, 64};
  for (int a = 0; a < 5; a++)
    for (int bk = 0; bk < 4; bk++) {
      const int64_t ch = chs[a], K = Ks[bk], np = (ch + 31) / 32 * 32;
      assert_int_equal(qllc_pack_size(QLLC_LAYOUT_F32_N32, ch, K), (size_t)(np * K) * sizeof(float));
      float *w = malloc((size_t)(ch * K) * sizeof(float)), *d = malloc((size_t)(np * K) * sizeof(float));
      for (int64_t i = 0; i < ch * K; i++) w[i] = (float)(i + 1);
      const qllc_pack_src src = {.w = w, .ch = ch, .K = K, .taps = 1, .w_f32 = 1};
      assert_int_equal(qllc_packer_F32_N32(&src, d, NULL), -1);
      int64_t i = 0; /* storage order: block, k, column */
      for (int64_t nb = 0; nb < np / 32; nb++)
        for (int64_t k = 0; k < K; k++)
          for (int64_t j = 0; j < 32; j++, i++) {
            const int64_t c = nb * 32 + j;
            assert_true(d[i] == (c < ch ? w[c * K + k] : 0.0f));
          }
      const qllc_pack_src q8 = {.w = w, .w_i8 = 1, .ch = ch, .K = K, .taps = 1};
      assert_int_equal(qllc_packer_F32_N32(&q8, d, NULL), -2); /* not float weights */
      free(w), free(d);
    }
}

int main(void) {
  static struct CMUnitTest tests[Q_NROWS + 5];
  int nt = 0;
  tests[nt++] = (struct CMUnitTest)cmocka_unit_test(test_pack_n32);
  tests[nt++] = (struct CMUnitTest)cmocka_unit_test(test_pack_m24);
  tests[nt++] = (struct CMUnitTest)cmocka_unit_test(test_fits_f32dw);
  tests[nt++] = (struct CMUnitTest)cmocka_unit_test(test_maxpool_avx512);
  tests[nt++] = (struct CMUnitTest)cmocka_unit_test(test_maxpool_avx2);
  for (int i = 0; i < Q_NROWS; i++)
    if (q_row_suite(&q_rows[i]) == Q_SUITE_F32)
      tests[nt++] = (struct CMUnitTest){q_rows[i].name, test_row, NULL, NULL, (void *)&q_rows[i]};
  assert_true(nt > 5);
  return _cmocka_run_group_tests("f32_x86_test", tests, (size_t)nt, NULL, NULL);
}
