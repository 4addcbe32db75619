/* tests/libjit/f32_cases.h: the float FC and Conv rows' cases, and the runs of one row on one case,
 * shared by the x86_64 test (f32_x86_test.c, cmocka) and the aarch64 one (q_arm_kernels.c under qemu,
 * q_arm_shim/cmocka.h). Each case: random inputs, weights and bias in [-1, 1), the weights packed by the
 * row's packer into its layout, the row's output compared bit for bit with its reference on the plain
 * weights: FC (tails in M, N and K, k blocks, groups of rows, one row, no bias, a clamp, special values) with
 * qllc_k_fc_f32_f32_f32 (libjit/bitcode/fc.c, checked against double sums in gemm_test.c); Conv (pixel and
 * channel tails, strides, dilations, padding, 1x1, 7x7, k chunks; depthwise: strides 1 to 4, pads, 3x3,
 * 5x5, 1x1, 7x7, dilation, widths below and above 16, special values), each conv row on the cases of its
 * class, with qllc_k_conv2d_f32_f32_f32
 * (conv.c, checked against double in conv_test.c). Inputs and weights end at a PROT_NONE page, so a read
 * past them faults; output and scratch carry a guard zone that must stay untouched.
 *
 * Include after q_x86_test_util.h, kernels_f32.h and q_catalog.h. */
#ifndef QLLC_F32_CASES_H
#define QLLC_F32_CASES_H
#include <math.h>

/* uniform in [-1, 1) */
static float frand(void) { return (float)((double)(next() >> 11) / 9007199254740992.0 * 2.0 - 1.0); }

typedef struct f32_fc_case {
  int64_t M, N, K;
  int bias;     /* 0: NULL */
  float lo, hi; /* the fused clamp */
  int special;  /* a few inputs inf, -inf, NaN, -0 */
} f32_fc_case;

static const f32_fc_case f32_fc_cases[] = {
    {1, 1, 1, 1, -INFINITY, INFINITY, 0},   {1, 10, 1024, 1, -INFINITY, INFINITY, 0},
    {1, 128, 64, 0, -INFINITY, INFINITY, 0}, {1, 1024, 1024, 1, -INFINITY, INFINITY, 0},
    {1, 160, 33, 1, 0.0f, INFINITY, 0},     {2, 31, 5, 1, -INFINITY, INFINITY, 0},
    {3, 33, 7, 0, -0.5f, 0.5f, 0},           {8, 32, 16, 1, -INFINITY, INFINITY, 0},
    {9, 65, 513, 1, 0.0f, 6.0f, 0},          {13, 64, 3, 1, -INFINITY, INFINITY, 1},
    {17, 100, 1030, 1, -INFINITY, INFINITY, 0}, {64, 96, 600, 0, 0.0f, INFINITY, 0},
    {64, 256, 256, 1, -INFINITY, INFINITY, 1},  {7, 1, 2000, 1, -INFINITY, INFINITY, 0},
    {5, 200, 0, 1, -1.0f, 1.0f, 0},
    /* row tails of the 4-row tile (aarch64) too: 4 + 1, 4 + 2, 2 + 1 */
    {5, 47, 300, 1, -INFINITY, INFINITY, 0},    {6, 16, 4, 0, -2.0f, 2.0f, 0},
    {3, 80, 1025, 1, 0.0f, INFINITY, 1},
    /* more rows than one group of 72 copied rows: a second group of one row, of 28 rows with K chunks */
    {73, 40, 20, 1, -INFINITY, INFINITY, 0},    {100, 70, 1030, 1, 0.0f, 6.0f, 0},
};

/* One row on one case: 0 when it gives the reference's bytes. */
static void f32_run_fc(const q_vrow *r, const f32_fc_case *c) {
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
typedef struct f32_conv_case {
  int64_t d[16];
  int bias;
  float lo, hi;
} f32_conv_case;
static const f32_conv_case f32_conv_cases[] = {
    {{1, 3, 8, 8, 4, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1}, 1, -INFINITY, INFINITY},
    {{1, 16, 14, 14, 16, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1}, 1, 0.0f, INFINITY},    /* 196 pixels: a 4-pixel tail */
    {{2, 8, 9, 7, 13, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 1}, 0, -INFINITY, INFINITY},  /* stride 2, 13 channels */
    {{1, 32, 10, 10, 24, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1, 1}, 1, -1.0f, 1.0f},      /* 1x1 */
    {{1, 64, 12, 12, 64, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1}, 1, -INFINITY, INFINITY}, /* K = 576: k chunks */
    {{1, 8, 11, 11, 12, 3, 3, 1, 1, 2, 2, 2, 2, 2, 2, 1}, 1, -INFINITY, INFINITY}, /* dilation 2 */
    {{1, 24, 9, 9, 50, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1}, 1, -INFINITY, INFINITY},  /* 50 channels: 24 24 2 */
    {{1, 3, 23, 23, 8, 7, 7, 2, 2, 3, 3, 3, 3, 1, 1, 1}, 1, 0.0f, 6.0f},           /* a 7x7 stem */
    {{1, 128, 6, 6, 5, 3, 3, 1, 1, 0, 0, 0, 0, 1, 1, 1}, 0, -INFINITY, INFINITY},  /* K = 1152 */
    /* 30 channels (24 + 4 + 2), 3x5, strides 2 x 1, uneven padding, dilation 1 x 2 */
    {{1, 5, 10, 13, 30, 3, 5, 2, 1, 2, 1, 0, 3, 1, 2, 1}, 0, -0.25f, 0.25f},
    {{3, 2, 5, 5, 7, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1, 1}, 1, -INFINITY, INFINITY},   /* 3 images, 7 channels */
    /* stride 1, for the direct conv too: rows of pixels in the padded pitch, in place (1x1, no padding) */
    {{2, 5, 7, 7, 30, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1, 1}, 1, -INFINITY, INFINITY},  /* 1x1 in place, N 2, 49 pixels */
    {{1, 16, 8, 8, 7, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1, 1}, 0, 0.0f, INFINITY},        /* 1x1 in place, 64 pixels */
    {{1, 6, 5, 9, 9, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1}, 1, -INFINITY, INFINITY},   /* 1x1 padded */
    {{2, 7, 13, 5, 25, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1}, 1, -0.25f, 0.25f},      /* width 5 < 16, N 2 */
    {{2, 3, 7, 5, 4, 3, 2, 1, 1, 0, 0, 0, 0, 1, 1, 1}, 1, -INFINITY, INFINITY},   /* 3x2: 16 lanes over 4 rows */
    {{1, 2, 9, 2, 3, 1, 1, 1, 1, 0, 1, 0, 1, 1, 1, 1}, 0, -INFINITY, INFINITY},   /* 1x1 padded, width 4: 4 rows */
    {{1, 9, 11, 20, 48, 5, 5, 1, 1, 2, 2, 2, 2, 1, 1, 1}, 1, -INFINITY, INFINITY}, /* 5x5, width 20 */
    {{1, 4, 9, 33, 17, 3, 3, 1, 1, 0, 0, 0, 0, 1, 1, 1}, 0, -INFINITY, INFINITY},  /* no padding, width 33 */
    {{1, 5, 12, 17, 10, 3, 3, 1, 1, 2, 2, 2, 2, 2, 2, 1}, 1, 0.0f, 6.0f},         /* dilation 2, width 17 */
    {{1, 3, 10, 12, 8, 3, 5, 1, 1, 3, 1, 2, 2, 3, 1, 1}, 1, -INFINITY, INFINITY},  /* 3x5, dilation 3x1 */
    {{1, 6, 9, 11, 31, 1, 7, 1, 1, 0, 3, 0, 3, 1, 1, 1}, 1, -INFINITY, INFINITY},  /* 1x7 */
    {{1, 6, 11, 9, 8, 7, 1, 1, 1, 3, 0, 3, 0, 1, 1, 1}, 0, -INFINITY, INFINITY},   /* 7x1 */
    {{1, 5, 8, 10, 9, 3, 3, 1, 1, 0, 1, 2, 0, 1, 1, 1}, 1, -INFINITY, INFINITY},   /* pads 0 1 2 0 */
    {{1, 4, 1, 1, 24, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1}, 1, -INFINITY, INFINITY},   /* one pixel */
    {{1, 40, 28, 28, 72, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1}, 1, -INFINITY, INFINITY}, /* 28x28, M 72 */
    /* rows wide enough for the x86 direct row's predicate (pad columns at most 1/16 of a row) */
    {{1, 8, 5, 32, 10, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1}, 1, -INFINITY, INFINITY},   /* 3x3, 32 wide: the narrowest */
    {{1, 16, 6, 56, 24, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1}, 1, 0.0f, INFINITY},        /* 56 wide (ResNet's) */
    {{2, 4, 4, 70, 9, 5, 5, 1, 1, 2, 2, 2, 2, 1, 1, 1}, 0, -INFINITY, INFINITY},     /* 5x5, 70 wide, N 2 */
    {{1, 3, 5, 70, 5, 3, 3, 1, 1, 2, 2, 2, 2, 2, 2, 1}, 1, -1.0f, 1.0f},             /* dilation 2, 70 wide */
    /* stride 2 on rows wide enough for the panel packer's 16 pixels from 32 floats */
    {{1, 3, 9, 75, 10, 7, 7, 2, 2, 3, 3, 3, 3, 1, 1, 1}, 1, 0.0f, INFINITY},         /* a 7x7 stem, 75 wide */
    {{1, 4, 6, 70, 26, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 1}, 1, -INFINITY, INFINITY},    /* 3x3, 70 wide */
    {{1, 6, 4, 66, 9, 1, 1, 2, 2, 0, 0, 0, 0, 1, 1, 1}, 0, -INFINITY, INFINITY},     /* 1x1, 66 wide */
    /* the transposed x86 row: runs of 7 pixels with 4 vectors of channels, 100 = 64 + 32 + 4; runs of 8
       and 7 in a row of 15 (2 and 4 vectors), 64 channels; 16 + 4 channels (1 vector, then 1) */
    {{1, 16, 7, 7, 100, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1}, 1, -INFINITY, INFINITY},   /* 7x7, M 100 */
    {{1, 8, 4, 15, 64, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1}, 0, 0.0f, INFINITY},         /* 15 wide, M 64 */
    {{1, 5, 6, 29, 20, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1}, 1, -0.5f, 0.5f},            /* 29 wide: 10 10 9 */
};

/* depthwise: group == C == M. special: a few inputs inf, -inf, NaN, -0; channel 0's first weight inf (its
   padded taps add inf * 0: NaN; not in the channel of the NaN input, whose sign a sum of two NaNs leaves to
   the compiler's operand order); the bias -0 in the even channels. */
typedef struct f32_dw_case {
  f32_conv_case c;
  int special;
} f32_dw_case;
static const f32_dw_case f32_dw_cases[] = {
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

/* One row on one case: 1 when it ran (then with the reference's bytes), 0 when the case is not of the
   row's class (its predicate answers -1: a depthwise case for a group-1 row, and the other way round) or
   an ALT row refuses its shape (the x86 direct conv takes stride 1 only). special: see f32_dw_cases.
   force: run it even where the predicate refuses the shape (0), for a kernel that computes more shapes
   than its row is chosen for. */
static int f32_run_conv_as(const q_vrow *r, const f32_conv_case *cc, int special, int force) {
  const int64_t *d = cc->d;
  const int64_t N = d[0], C = d[1], H = d[2], W = d[3], M = d[4], KH = d[5], KW = d[6], sh = d[7], sw = d[8];
  const int64_t pt = d[9], pl = d[10], pb = d[11], pr = d[12], dh = d[13], dw = d[14], group = d[15];
  const int64_t OH = (H + pt + pb - (KH - 1) * dh - 1) / sh + 1, OW = (W + pl + pr - (KW - 1) * dw - 1) / sw + 1;
  const int64_t K = C / group * KH * KW, nx = N * C * H * W, nw = M * K, ny = N * M * OH * OW;
  const int64_t geo[16] = {N, C, H, W, M, OH, OW, KH, KW, sh, sw, pt, pl, dh, dw, group};
  const qllc_layer_geom g = q_conv_geom(geo);
  char why[160];
  const int fits = r->fits(&g, why, sizeof why);
  if (fits == -1 || (fits == 0 && !force && (r->alt & QLLC_VF_ALT_T))) return 0;
  assert_int_equal(fits, force && fits == 0 ? 0 : 1);
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

static int f32_run_conv(const q_vrow *r, const f32_conv_case *cc, int special) {
  return f32_run_conv_as(r, cc, special, 0);
}

/* Every case of the row's op that its predicate takes; returns how many. */
static int f32_run_row(const q_vrow *r) {
  int n = 0;
  if (r->fcf_fn)
    for (size_t i = 0; i < sizeof f32_fc_cases / sizeof f32_fc_cases[0]; i++) f32_run_fc(r, &f32_fc_cases[i]), n++;
  if (r->convf_fn)
    for (size_t i = 0; i < sizeof f32_conv_cases / sizeof f32_conv_cases[0]; i++)
      n += f32_run_conv(r, &f32_conv_cases[i], 0);
  if (r->convf_fn)
    for (size_t i = 0; i < sizeof f32_dw_cases / sizeof f32_dw_cases[0]; i++)
      n += f32_run_conv(r, &f32_dw_cases[i].c, f32_dw_cases[i].special);
  return n;
}

#endif
