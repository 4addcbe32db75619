/* tests/libjit/q_x86_q16_test.c: the x86_64 16-bit input rows of the kernel catalogue (targets/x86_64/
 * kernels/variants.def; today x86_q16.c's avx512vnni fc, conv2d and the direct conv2dc2, 16x8 and int16 x
 * int16), run ISA by ISA bit for bit against their references of q_layers.c (same native library), with
 * the weights packed by the rows' packers, whose layouts are checked first against an independent
 * decoding of every packed index.
 * Cases: several hundred random shapes (odd N / M / K, K = 1 .. 3, K > 2000, groups and depthwise,
 * strides, dilations, padding on every side, 1x1 and 7x7), inputs at a pointer inside their buffer,
 * zero points and clamps at the type's ends, n = 0 and n = 62, huge biases, and the worst cases for
 * the int32 runs: x all -32768 against w all -128 (16x8) or all -32768 / 32767 (int16) at K > 256.
 * Skipped (never passed silently) on a CPU without an ISA's features (the compiler's host features). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../targets/x86_64/kernels/variants.h"
#include "kernels_q.h"
#include "lower/pack.h"

#define Q_TEST_SEED 0x2545f4914f6cdd1dULL
#include "q_x86_test_util.h"

#define Q_CATALOG_DEF "../../targets/x86_64/kernels/variants.def"
#include "q_catalog.h"

/* The ISA under test: the tests below run once per ISA of the catalogue's 16-bit rows, on its rows
   qllc_k_<kstem>_i16_<w>_i16__<isa> (w: i8 16x8, i16 int16 x int16). */
static const char *ISA;
static const q_vrow *row16(const char *kstem, int wide) { return q_row_of(kstem, "i16", wide ? "i16" : "i8", "i16", ISA); }
/* the direct conv of the ISA (an ALT row of conv2d), NULL when it has none */
static const q_vrow *direct16(int wide) {
  for (int i = 0; i < Q_NROWS; i++) {
    const q_vrow *r = &q_rows[i];
    if (r->alt && r->conv && r->esize == 2 && !strcmp(r->isa, ISA) && !strcmp(r->w, wide ? "i16" : "i8")) return r;
  }
  return NULL;
}
/* Skips the test unless the host has the features of every row of the ISA. */
static void require_isa(void) {
  for (int i = 0; i < Q_NROWS; i++)
    if (q_row_suite(&q_rows[i]) == Q_SUITE_Q16 && !strcmp(q_rows[i].isa, ISA) && !q_row_runs(&q_rows[i])) {
      print_message("%s: needs %s, which this CPU lacks\n", q_rows[i].name, q_rows[i].features);
      skip();
    }
}
#define REQUIRE_ISA() require_isa()

/* Outputs of the plain cases (multipliers from the accumulators, full output range), and how many were
   strictly inside the range: the random cases must test the rounding, not only the clamp. */
static int64_t n_total, n_inside;
static int n_direct; /* cases that ran the direct conv too */
static int64_t n_c2_i32, n_c2_wide; /* 16x8 direct conv channels with the int32 trailer set / not */

static void check_inside(const char *what) {
  if (n_total == 0 || n_inside * 2 < n_total)
    fail_msg("%s: only %lld of %lld plain outputs inside the range", what, (long long)n_inside, (long long)n_total);
}

/* ---- qllc_pack_w16 --------------------------------------------------------------------------------- */

/* The value a packed index must hold, decoded from the index alone (the inverse of the layouts.h
   formulas, written independently of pack16.c). */
static int16_t expect_packed(qllc_layout l, int64_t idx, const int8_t *w8, const int16_t *w16, int64_t ch,
                             int64_t K) {
  const int64_t Kp2 = (K + 1) / 2 * 2, P = Kp2 / 2;
  int64_t c, k, plane = -1;
  if (l == QLLC_LAYOUT_ROWS_K2) k = idx % Kp2, c = idx / Kp2;
  else if (l == QLLC_LAYOUT_ROWS_K2_SPLIT) k = idx % Kp2, c = idx / Kp2 % ch, plane = idx / (Kp2 * ch);
  else if (l == QLLC_LAYOUT_K2N16) {
    int64_t t = idx % 2, j = idx / 2 % 16, k2 = idx / 32 % P, nb = idx / (32 * P);
    c = nb * 16 + j, k = k2 * 2 + t;
  } else {
    int64_t t = idx % 2, j = idx / 2 % 16, pl = idx / 32 % 2, k2 = idx / 64 % P, nb = idx / (64 * P);
    c = nb * 16 + j, k = k2 * 2 + t, plane = pl;
  }
  if (c >= ch || k >= K) return 0;
  int32_t v = w8 ? w8[c * K + k] : w16[c * K + k];
  if (plane < 0) return (int16_t)v;
  int32_t lo = ((v % 256) + 256) % 256, hi = (v - lo) / 256;
  assert_true(lo >= 0 && lo <= 255 && hi >= -128 && hi <= 127 && hi * 256 + lo == v);
  return (int16_t)(plane == 0 ? lo : hi);
}

static size_t expect_size(qllc_layout l, int64_t ch, int64_t K) {
  const int64_t Kp2 = (K + 1) / 2 * 2, chp = (ch + 15) / 16 * 16;
  switch (l) {
  case QLLC_LAYOUT_ROWS_K2: return (size_t)(ch * Kp2 * 2);
  case QLLC_LAYOUT_ROWS_K2_SPLIT: return (size_t)(2 * ch * Kp2 * 2);
  case QLLC_LAYOUT_K2N16: return (size_t)(chp * Kp2 * 2);
  default: return (size_t)(2 * chp * Kp2 * 2);
  }
}

static void test_pack_layouts(void **state) {
  (void)state;
  static const qllc_layout ls[] = {QLLC_LAYOUT_ROWS_K2, QLLC_LAYOUT_ROWS_K2_SPLIT, QLLC_LAYOUT_K2N16,
                                   QLLC_LAYOUT_K2N16_SPLIT};
  static const int64_t chs[] = {1, 3, 16, 17, 33, 64}, Ks[] = {1, 2, 3, 7, 64, 301};
  for (int li = 0; li < 4; li++)
    for (int a = 0; a < 6; a++)
      for (int b = 0; b < 6; b++) {
        qllc_layout l = ls[li];
        int split = l == QLLC_LAYOUT_ROWS_K2_SPLIT || l == QLLC_LAYOUT_K2N16_SPLIT;
        int64_t ch = chs[a], K = Ks[b];
        int8_t *w8 = malloc((size_t)(ch * K));
        int16_t *w16 = malloc((size_t)(ch * K) * 2);
        for (int64_t i = 0; i < ch * K; i++) {
          w8[i] = (int8_t)irand(-128, 127);
          int64_t r = irand(0, 9); /* the ends of the range and the byte boundaries often */
          w16[i] = (int16_t)(r == 0 ? -32768 : r == 1 ? 32767 : r == 2 ? -1 : r == 3 ? 255 : r == 4 ? -256 : irand(-32768, 32767));
        }
        size_t sz = qllc_pack_size(l, ch, K);
        assert_int_equal(sz, expect_size(l, ch, K));
        int16_t *wp = malloc(sz + 64);
        memset(wp, 0xa5, sz + 64);
        qllc_pack_w16(l, wp, split ? NULL : w8, split ? w16 : NULL, ch, K);
        for (int64_t i = 0; i < (int64_t)(sz / 2); i++) {
          int16_t want = expect_packed(l, i, split ? NULL : w8, split ? w16 : NULL, ch, K);
          if (wp[i] != want) fail_msg("layout %d ch=%lld K=%lld index %lld: %d, want %d", (int)l, (long long)ch, (long long)K, (long long)i, wp[i], want);
        }
        for (size_t i = sz; i < sz + 64; i++) assert_int_equal(((uint8_t *)wp)[i], 0xa5); /* no write past the size */
        free(w8), free(w16), free(wp);
      }
}

/* ---- shared ---------------------------------------------------------------------------------------- */

typedef struct qcase {
  int wide;          /* 0: 16x8 (int8 weights), 1: int16 weights */
  int xpat, wpat;    /* 0 random, 1 all min, 2 all max, 3 alternating min/max, 4 random with many extremes */
  int32_t z_x;
  int outvar;        /* 0 full range, 1 relu [z_y, max], 2 random sub-range, 3 z_y at min, 4 z_y at max */
  int mnvar;         /* 0 from the accumulator magnitude, 1 n = 0, 2 n = 62, 3 random per channel */
  int64_t qb_mag;    /* |q_b| bound */
  int xoff;          /* the input starts this many elements into its buffer */
  int guard;         /* 1: the input ends right before an inaccessible page, 2: starts right after one */
} qcase;

static void pick_out16(int variant, int32_t *z_y, int32_t *lo, int32_t *hi) {
  *z_y = variant == 3 ? -32768 : variant == 4 ? 32767 : (int32_t)irand(-32768, 32767);
  if (variant == 0 || variant == 1 || variant == 3) *z_y = (int32_t)irand(-300, 300); /* mostly inside */
  *lo = -32768, *hi = 32767;
  if (variant == 1) *lo = *z_y;
  if (variant == 2) {
    int32_t a = (int32_t)irand(-32768, 32767), b = (int32_t)irand(-32768, 32767);
    *lo = a < b ? a : b, *hi = a < b ? b : a;
  }
}

/* m in [2^30, 2^31) and n from the largest accumulator magnitude of the channel, so most outputs land
   inside the int16 range; or the extreme n. */
static void pick_mn16(int32_t *m, int32_t *n, int64_t ch, const double *mag, int mnvar) {
  for (int64_t c = 0; c < ch; c++) {
    m[c] = (int32_t)irand(1 << 30, INT32_MAX);
    int64_t nn = 31 + ilog2((uint64_t)(mag[c] < 1 ? 1 : mag[c])) - 15 + irand(-1, 1);
    if (mnvar == 1) nn = 0, m[c] = (int32_t)irand(0, 3);
    if (mnvar == 2) nn = 62, m[c] = (int32_t)irand(0, INT32_MAX);
    if (mnvar == 3) nn = irand(0, 62), m[c] = (int32_t)irand(0, INT32_MAX);
    n[c] = (int32_t)(nn < 0 ? 0 : nn > 62 ? 62 : nn);
  }
}

/* The weights of both kinds as the scalar kernel takes them, and the packed copy. */
static void *plain_w(int wide, const int32_t *wv, int64_t count) { return tbuf(wide ? K_I16 : K_I8, wv, count); }
/* The weights packed by row r's packer (the bias it makes is the one given: 16-bit layouts keep it);
   *k32: what the packer returns (ROWS_C2: the channels in one int32 run). */
static void *packed_w(const q_vrow *r, int wide, const void *w, const int64_t *bias, const int32_t *n, int32_t z_y,
                      int64_t ch, int64_t K, int64_t taps, int64_t *k32) {
  size_t sz = qllc_pack_size(r->layout, ch, K);
  void *wp = aligned_alloc(64, (sz + 63) / 64 * 64);
  int64_t *bc = malloc((size_t)(ch ? ch : 1) * 8);
  const qllc_pack_src src = {w, !wide, 0, bias, n, z_y, ch, K, taps, 0};
  const int64_t k = r->pack(&src, wp, bc);
  if (k32) *k32 = k;
  for (int64_t c = 0; c < ch; c++)
    if (bc[c] != bias[c]) fail_msg("%s: the packer changed the bias", r->name);
  free(bc);
  return wp;
}
static uint8_t *scratch_buf(int64_t bytes) {
  uint8_t *s = aligned_alloc(64, (size_t)((bytes + 64) / 64 * 64));
  memset(s, 0x5a, (size_t)((bytes + 64) / 64 * 64)); /* garbage: the kernel must not read what it did not write */
  return s;
}

/* Compares count outputs and checks the guard zone after them. */
static void compare(const char *what, const int16_t *got, const int16_t *want, int64_t count, int32_t lo, int32_t hi,
                    int plain) {
  for (int64_t i = 0; i < count; i++) {
    if (got[i] != want[i]) fail_msg("%s: output %lld is %d, want %d", what, (long long)i, got[i], want[i]);
    n_total += plain;
    if (plain && want[i] > lo && want[i] < hi) n_inside++;
  }
  if (!guard_ok((const uint8_t *)got, (size_t)count * 2)) fail_msg("%s: write past the output", what);
}
static int16_t *out_buf(int64_t count) { return (int16_t *)gzone((size_t)count * 2); }

/* The input: v[0..n) as int16 at xoff elements into a heap buffer, or flush against an inaccessible
   page (guard 1: after its end, 2: before its start), so that any read outside it faults. */
typedef struct xbuf {
  int16_t *x;
  int16_t *heap; /* NULL: in g */
  gbuf g;
} xbuf;
static xbuf xbuf_make(const int32_t *v, int64_t n, int xoff, int guard) {
  xbuf b = {0};
  if (!guard) {
    b.heap = calloc((size_t)(n + xoff + 1), 2);
    b.x = b.heap + xoff;
  } else
    b.x = galloc_at(&b.g, (size_t)n * 2, guard == 2);
  for (int64_t i = 0; i < n; i++) b.x[i] = (int16_t)v[i];
  return b;
}
static void xbuf_free(xbuf *b) {
  if (b->heap) free(b->heap);
  else gfree(&b->g);
}

/* ---- FC -------------------------------------------------------------------------------------------- */

static void run_fc(const qcase *q, int64_t M, int64_t N, int64_t K) {
  const int32_t wlo = q->wide ? -32768 : -128, whi = q->wide ? 32767 : 127;
  int32_t *xv = ivec(M * K), *wv = ivec(N * K), *m = ivec(N), *n = ivec(N);
  int64_t *bias = calloc((size_t)N, sizeof *bias);
  double *mag = calloc((size_t)N, sizeof *mag);
  fill(xv, M * K, -32768, 32767, q->xpat);
  fill(wv, N * K, wlo, whi, q->wpat);
  for (int64_t c = 0; c < N; c++) {
    int64_t ws = 0;
    for (int64_t k = 0; k < K; k++) ws += wv[c * K + k];
    bias[c] = irand(-q->qb_mag, q->qb_mag) - (int64_t)q->z_x * ws;
    for (int64_t i = 0; i < M && i < 4; i++) { /* magnitude from the first rows */
      int64_t acc = bias[c];
      for (int64_t k = 0; k < K; k++) acc += (int64_t)xv[i * K + k] * wv[c * K + k];
      double a = acc < 0 ? -(double)acc : (double)acc;
      if (a > mag[c]) mag[c] = a;
    }
  }
  pick_mn16(m, n, N, mag, q->mnvar);
  int32_t z_y, lo, hi;
  pick_out16(q->outvar, &z_y, &lo, &hi);
  xbuf xb = xbuf_make(xv, M * K, q->xoff, q->guard);
  const int16_t *x = xb.x;
  void *w = plain_w(q->wide, wv, N * K);
  const q_vrow *r = row16("fc", q->wide);
  if (!r) fail_msg("no fc row for %s", ISA);
  void *wp = packed_w(r, q->wide, w, bias, n, z_y, N, K, 1, NULL);
  const qllc_layer_geom lg = q_fc_geom(M, N, K);
  uint8_t *scratch = scratch_buf(r->scratch(&lg));
  int16_t *want = out_buf(M * N), *got = out_buf(M * N);
  r->fc_ref(want, x, w, bias, m, n, M, N, K, q->z_x, z_y, lo, hi, NULL);
  r->fc_fn(got, x, wp, bias, m, n, M, N, K, q->z_x, z_y, lo, hi, scratch);
  char what[200];
  snprintf(what, sizeof what, "fc %s M=%lld N=%lld K=%lld z_x=%d xpat=%d wpat=%d mn=%d", q->wide ? "i16" : "16x8",
           (long long)M, (long long)N, (long long)K, q->z_x, q->xpat, q->wpat, q->mnvar);
  compare(what, got, want, M * N, lo, hi, q->mnvar == 0 && q->outvar == 0);
  free(xv), free(wv), free(m), free(n), free(bias), free(mag), xbuf_free(&xb), free(w), free(wp), free(scratch);
  free(want), free(got);
}

static qcase random_case(int wide) {
  qcase q = {.wide = wide};
  int64_t r = irand(0, 9);
  q.xpat = r < 7 ? 0 : 4;
  q.wpat = irand(0, 9) < 7 ? 0 : 4;
  r = irand(0, 5);
  q.z_x = r == 0 ? -32768 : r == 1 ? 32767 : r == 2 ? 0 : (int32_t)irand(-32768, 32767);
  q.outvar = (int)irand(0, 4);
  r = irand(0, 9);
  q.mnvar = r < 7 ? 0 : (int)(r - 6);
  r = irand(0, 4);
  q.qb_mag = r == 0 ? 0 : r == 1 ? ((int64_t)1 << 40) : r == 2 ? ((int64_t)1 << 45) : 1 << 20;
  q.xoff = (int)irand(0, 3);
  q.guard = (int)irand(0, 2);
  return q;
}

static void fc_random(int wide) {
  static const int64_t Ms[] = {1, 2, 3, 4, 5, 7, 9, 64, 65, 70};
  static const int64_t Ns[] = {1, 2, 15, 16, 17, 31, 33, 48, 63, 64, 65, 100, 130};
  static const int64_t Ks[] = {1, 2, 3, 4, 5, 17, 63, 255, 256, 257, 300, 511, 513, 1000, 2049};
  for (int i = 0; i < 160; i++) {
    qcase q = random_case(wide);
    int64_t M = Ms[irand(0, 9)], N = Ns[irand(0, 12)], K = Ks[irand(0, 14)];
    if (M * N * K > 3000000) M = 3; /* keep the test quick */
    run_fc(&q, M, N, K);
  }
}

static void test_fc_16x8(void **state) {
  (void)state;
  REQUIRE_ISA();
  n_total = n_inside = 0;
  fc_random(0);
  check_inside("fc 16x8");
}
static void test_fc_i16(void **state) {
  (void)state;
  REQUIRE_ISA();
  n_total = n_inside = 0;
  fc_random(1);
  check_inside("fc i16");
}

/* The extremes: every product at its largest magnitude with one sign, long enough that a run of more
   pairs than layouts.h allows would wrap int32; both zero points at the ends; n = 0 / 62. run(q, si)
   for both weight kinds, each of nshapes shapes, every x and w pattern 1 .. 3 and 3 variants, in
   that order. */
static void run_extremes(int nshapes, void (*run)(const qcase *q, int si)) {
  for (int wide = 0; wide < 2; wide++)
    for (int si = 0; si < nshapes; si++)
      for (int xp = 1; xp <= 3; xp++)
        for (int wpat = 1; wpat <= 3; wpat++)
          for (int v = 0; v < 3; v++) {
            qcase q = {.wide = wide, .xpat = xp, .wpat = wpat, .z_x = v == 0 ? -32768 : v == 1 ? 32767 : 0,
                       .outvar = v, .mnvar = v == 2 ? 2 : v == 1 ? 1 : 0, .qb_mag = v == 1 ? ((int64_t)1 << 61) : 0,
                       .xoff = v};
            run(&q, si);
          }
}

static void fc_extreme(const qcase *q, int si) {
  static const int64_t Ks[] = {255, 256, 257, 600, 2500};
  run_fc(q, 5, 19, Ks[si]);
}
static void test_fc_extremes(void **state) {
  (void)state;
  REQUIRE_ISA();
  run_extremes(5, fc_extreme);
}

/* The requantization over its whole domain: K = 1 and 2 (the accumulator is nearly the bias), biases
   up to 2^61, every n from 0 to 62 and random m (the variants' epilogue is vector code, not qk_req64). */
static void test_epilogue(void **state) {
  (void)state;
  REQUIRE_ISA();
  for (int i = 0; i < 200; i++) {
    qcase q = {.wide = i & 1, .xpat = 4, .wpat = 4, .z_x = (int32_t)irand(-32768, 32767), .outvar = (int)irand(0, 4),
               .mnvar = 3, .qb_mag = (int64_t)1 << irand(0, 61), .xoff = i % 3};
    run_fc(&q, irand(1, 5), irand(1, 40), irand(1, 2));
  }
}

/* ---- Conv ------------------------------------------------------------------------------------------ */

typedef struct cshape {
  int64_t N, C, H, W, M, KH, KW, sh, sw, pt, pl, pb, pr, dh, dw, g;
} cshape;

static int64_t out_dim(int64_t in, int64_t k, int64_t s, int64_t p0, int64_t p1, int64_t d) {
  int64_t span = in + p0 + p1 - (d * (k - 1) + 1);
  return span < 0 ? 0 : span / s + 1;
}

static void run_conv(const qcase *q, const cshape *s) {
  const int64_t OH = out_dim(s->H, s->KH, s->sh, s->pt, s->pb, s->dh), OW = out_dim(s->W, s->KW, s->sw, s->pl, s->pr, s->dw);
  assert_true(OH > 0 && OW > 0 && s->C % s->g == 0 && s->M % s->g == 0);
  const int64_t cg = s->C / s->g, K = cg * s->KH * s->KW, M = s->M, nx = s->N * s->C * s->H * s->W;
  const int32_t wlo = q->wide ? -32768 : -128, whi = q->wide ? 32767 : 127;
  int32_t *xv = ivec(nx), *wv = ivec(M * K), *m = ivec(M), *n = ivec(M);
  int64_t *bias = calloc((size_t)M, sizeof *bias);
  double *mag = calloc((size_t)M, sizeof *mag);
  fill(xv, nx, -32768, 32767, q->xpat);
  fill(wv, M * K, wlo, whi, q->wpat);
  for (int64_t c = 0; c < M; c++) {
    int64_t ws = 0;
    for (int64_t k = 0; k < K; k++) ws += wv[c * K + k];
    bias[c] = irand(-q->qb_mag, q->qb_mag) - (int64_t)q->z_x * ws;
  }
  for (int64_t c = 0; c < M; c++) /* magnitude: the exact accumulators of a few output pixels of image 0 */
    for (int64_t oh = 0; oh < OH; oh += OH / 3 + 1)
      for (int64_t ow = 0; ow < OW; ow += OW / 3 + 1) {
        int64_t acc = bias[c], g = c / (M / s->g);
        for (int64_t k = 0; k < K; k++) {
          int64_t ci = g * cg + k / (s->KH * s->KW), kh = k / s->KW % s->KH, kw = k % s->KW;
          int64_t ih = oh * s->sh - s->pt + kh * s->dh, iw = ow * s->sw - s->pl + kw * s->dw;
          int64_t xval = ih >= 0 && ih < s->H && iw >= 0 && iw < s->W ? xv[(ci * s->H + ih) * s->W + iw] : q->z_x;
          acc += xval * wv[c * K + k];
        }
        double a = acc < 0 ? -(double)acc : (double)acc;
        if (a > mag[c]) mag[c] = a;
      }
  pick_mn16(m, n, M, mag, q->mnvar);
  int32_t z_y, lo, hi;
  pick_out16(q->outvar, &z_y, &lo, &hi);
  xbuf xb = xbuf_make(xv, nx, q->xoff, q->guard);
  const int16_t *x = xb.x;
  void *w = plain_w(q->wide, wv, M * K);
  const q_vrow *r = row16("conv2d", q->wide), *rd = direct16(q->wide);
  if (!r) fail_msg("no conv2d row for %s", ISA);
  void *wp = packed_w(r, q->wide, w, bias, n, z_y, M, K, s->KH * s->KW, NULL);
  const int64_t d[16] = {s->N, s->C, s->H, s->W, M, OH, OW, s->KH, s->KW, s->sh, s->sw, s->pt, s->pl, s->dh, s->dw, s->g};
  const qllc_layer_geom lg = q_conv_geom(d);
  uint8_t *scratch = scratch_buf(r->scratch(&lg));
  const int64_t ny = s->N * M * OH * OW;
  int16_t *want = out_buf(ny), *got = out_buf(ny);
  r->conv_ref(want, x, w, bias, m, n, d, q->z_x, z_y, lo, hi, NULL);
  r->conv_fn(got, x, wp, bias, m, n, d, q->z_x, z_y, lo, hi, scratch);
  char what[300];
  snprintf(what, sizeof what,
           "conv %s N=%lld C=%lld %lldx%lld M=%lld k=%lldx%lld s=%lld,%lld pad=%lld,%lld,%lld,%lld d=%lld,%lld g=%lld "
           "z_x=%d xpat=%d wpat=%d mn=%d",
           q->wide ? "i16" : "16x8", (long long)s->N, (long long)s->C, (long long)s->H, (long long)s->W,
           (long long)M, (long long)s->KH, (long long)s->KW, (long long)s->sh, (long long)s->sw, (long long)s->pt,
           (long long)s->pl, (long long)s->pb, (long long)s->pr, (long long)s->dh, (long long)s->dw, (long long)s->g,
           q->z_x, q->xpat, q->wpat, q->mnvar);
  compare(what, got, want, ny, lo, hi, q->mnvar == 0 && q->outvar == 0);
  if (rd && qllc_c4_fits(s->C, s->g, s->KH, s->KW, s->sh, s->sw)) { /* the direct conv over channel pairs too */
    int64_t k32;
    void *wc = packed_w(rd, q->wide, w, bias, n, z_y, M, K, s->KH * s->KW, &k32);
    if (k32 >= 0) n_c2_i32 += k32, n_c2_wide += M - k32; /* the channels whose sums stay in one int32 run */
    const int64_t ssz = rd->scratch(&lg);
    uint8_t *sc = gzone((size_t)ssz);
    int16_t *got2 = out_buf(ny);
    rd->conv_fn(got2, x, wc, bias, m, n, d, q->z_x, z_y, lo, hi, sc);
    char what2[320];
    snprintf(what2, sizeof what2, "direct (%s) %s", rd->name, what);
    compare(what2, got2, want, ny, lo, hi, 0);
    if (!guard_ok(sc, (size_t)ssz)) fail_msg("%s: wrote past the scratch", what2);
    n_direct++;
    free(wc), free(sc), free(got2);
  }
  free(xv), free(wv), free(m), free(n), free(bias), free(mag), xbuf_free(&xb), free(w), free(wp), free(scratch);
  free(want), free(got);
}

/* A random shape the direct conv takes: stride 1, C/group a multiple of 4, more than one tap. */
static cshape direct_shape(void) {
  cshape s;
  for (;;) {
    s.N = irand(1, 2), s.g = irand(0, 4) ? 1 : irand(2, 3);
    s.C = 4 * irand(1, 10) * s.g, s.M = irand(1, 30) * s.g;
    static const int64_t ks[] = {1, 2, 3, 3, 3, 5, 7};
    s.KH = ks[irand(0, 6)], s.KW = irand(0, 3) ? s.KH : ks[irand(0, 6)];
    s.H = irand(1, 24), s.W = irand(0, 4) ? irand(1, 24) : irand(30, 90);
    s.sh = s.sw = 1;
    s.dh = irand(0, 4) ? 1 : 2, s.dw = irand(0, 4) ? 1 : irand(1, 2);
    s.pt = irand(0, (s.KH - 1) * s.dh), s.pb = irand(0, (s.KH - 1) * s.dh);
    s.pl = irand(0, (s.KW - 1) * s.dw), s.pr = irand(0, (s.KW - 1) * s.dw);
    if (s.KH * s.KW > 1 && out_dim(s.H, s.KH, 1, s.pt, s.pb, s.dh) > 0 && out_dim(s.W, s.KW, 1, s.pl, s.pr, s.dw) > 0)
      return s;
  }
}

/* The direct conv (run by run_conv next to the panel variant): random shapes it takes, in 16x8 and int16,
   and ResNet's 3x3 layers. */
static void test_conv_direct(void **state) {
  (void)state;
  REQUIRE_ISA();
  n_total = n_inside = 0, n_direct = 0, n_c2_i32 = n_c2_wide = 0;
  for (int i = 0; i < 160; i++) {
    qcase q = random_case(i % 2);
    cshape s = direct_shape();
    run_conv(&q, &s);
  }
  static const cshape resnet[] = {
      {1, 64, 56, 56, 64, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1}, {1, 256, 14, 14, 256, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1},
      {1, 512, 7, 7, 20, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1}};
  for (int wide = 0; wide < 2; wide++)
    for (int i = 0; i < 3; i++) {
      qcase q = random_case(wide);
      run_conv(&q, &resnet[i]);
    }
  print_message("conv direct (conv2dc2): %d cases; 16x8 channels: %lld in one int32 run, %lld widened\n", n_direct,
                (long long)n_c2_i32, (long long)n_c2_wide);
  if (n_direct < 166) fail_msg("conv direct: only %d cases ran the direct conv", n_direct);
  if (n_c2_i32 < 200 || n_c2_wide < 200) fail_msg("conv direct: too few channels of one kind");
  check_inside("conv direct");
}

/* The int32 bound of the 16x8 direct conv (layouts.h, qllc_c2_int32) at its edge: every input -32768
 * (z_x too, so padded taps are the same), every weight of a channel of sign -sg with sum |w| = 60000,
 * the bias sg * (2^31 - 1 - 2^15 * 60000 + over): each output's sum is sg * (2^31 - 1 + over) exactly.
 * over = 0 fits (trailer set), over = 1 is one past the bound (trailer clear: the widened runs; an int32
 * run would wrap +2^31 to -2^31). kind (per channel c): 0 every channel fits, 1 none, 2 runs of 5 of
 * each; sg = -1 (negative sums) on odd channels when mixed_sign. m = 2^30, n = 46 (the 32-bit
 * requantization), so the two wrap-around results give -32768 and 32767; n31: n = 31 on every third
 * channel, where the packer leaves the trailer clear whatever the bound, and the test sets it anyway:
 * the kernel must still take the widened path (qllc_req32_fits needs n >= 33). Returns the channels set by
 * the packer. */
static int64_t run_int32_edge(int kind, int mixed_sign, int64_t M, int n31) {
  const cshape s = {1, 64, 7, 9, 0, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1};
  const int64_t K = s.C * 9, OH = 7, OW = 9, nx = s.C * s.H * s.W, ny = M * OH * OW, S = 60000;
  int16_t *x = malloc((size_t)nx * 2);
  int8_t *w = malloc((size_t)(M * K));
  int64_t *bias = malloc((size_t)M * sizeof *bias);
  int32_t *m = malloc((size_t)M * 4), *n = malloc((size_t)M * 4);
  uint8_t *want_fl = malloc((size_t)M);
  for (int64_t i = 0; i < nx; i++) x[i] = -32768;
  for (int64_t c = 0; c < M; c++) {
    const int over = kind == 0 ? 0 : kind == 1 ? 1 : (int)(c / 5 % 2);
    const int64_t sg = mixed_sign && (c & 1) ? -1 : 1;
    for (int64_t k = 0; k < K; k++) /* |w| = 104 or 105, summing to S */
      w[c * K + k] = (int8_t)(-sg * (S / K + (k < S % K)));
    bias[c] = sg * (((int64_t)1 << 31) - 1 - 32768 * S + over);
    m[c] = 1 << 30, n[c] = n31 && c % 3 == 0 ? 31 : 46;
    want_fl[c] = (uint8_t)(!over && n[c] == 46);
  }
  const qllc_layout l = QLLC_LAYOUT_ROWS_C2;
  const size_t wsz = qllc_pack_size(l, M, K);
  assert_int_equal(wsz, (size_t)(M * K * 2 + (M + 1) / 2 * 2));
  uint8_t *wc = malloc(wsz);
  memset(wc, 0xa5, wsz);
  qllc_pack_w16_c2(l, wc, w, NULL, M, K, 9);
  for (int64_t c = 0; c < M; c++) assert_int_equal(wc[M * K * 2 + c], 0); /* the packer leaves it clear */
  const int64_t k32 = qllc_pack_c2_int32(wc, w, bias, n, 0, M, K);
  for (int64_t c = 0; c < M; c++) {
    if (wc[M * K * 2 + c] != want_fl[c])
      fail_msg("int32 edge kind %d: channel %lld trailer %d, want %d", kind, (long long)c, wc[M * K * 2 + c], want_fl[c]);
    if (n[c] == 31 && (kind == 0 || c / 5 % 2 == 0)) wc[M * K * 2 + c] = 1; /* fits, but n < 33 */
  }
  const int64_t ssz = qllc_scratch_c2(s.C, 1, s.W, OH, OW, 3, 3, 1, 1, 1);
  uint8_t *sc = gzone((size_t)ssz);
  int16_t *want = out_buf(ny), *got = out_buf(ny);
  const q_vrow *rd = direct16(0);
  const int64_t d[16] = {1, s.C, s.H, s.W, M, OH, OW, 3, 3, 1, 1, 1, 1, 1, 1, 1};
  rd->conv_ref(want, x, w, bias, m, n, d, -32768, 0, -32768, 32767, NULL);
  rd->conv_fn(got, x, wc, bias, m, n, d, -32768, 0, -32768, 32767, sc);
  char what[120];
  snprintf(what, sizeof what, "int32 edge kind %d mixed_sign %d M=%lld n31 %d", kind, mixed_sign, (long long)M, n31);
  compare(what, got, want, ny, -32768, 32767, 0);
  for (int64_t c = 0; c < M; c++) /* the sums are +-(2^31 - 1 + over): saturated with the sum's sign */
    if (want[c * OH * OW] != (mixed_sign && (c & 1) ? -32768 : 32767)) fail_msg("%s: reference output of channel %lld", what, (long long)c);
  if (!guard_ok(sc, (size_t)ssz)) fail_msg("%s: wrote past the scratch", what);
  free(x), free(w), free(bias), free(m), free(n), free(want_fl), free(wc), free(sc), free(want), free(got);
  return k32;
}

static void test_conv_int32_edge(void **state) {
  (void)state;
  REQUIRE_ISA();
  if (!direct16(0)) skip(); /* no 16x8 direct conv for this ISA */
  static const int64_t Ms[] = {1, 12, 26, 31};
  for (int mi = 0; mi < 4; mi++)
    for (int kind = 0; kind < 3; kind++)
      for (int sgn = 0; sgn < 2; sgn++)
        for (int n31 = 0; n31 < 2; n31++) {
          const int64_t k32 = run_int32_edge(kind, sgn, Ms[mi], n31);
          if (!n31 && ((kind == 0 && k32 != Ms[mi]) || (kind == 1 && k32 != 0)))
            fail_msg("int32 edge: %lld channels set", (long long)k32);
        }
}

static cshape random_shape(void) {
  cshape s;
  for (;;) {
    s.N = irand(1, 2);
    int64_t r = irand(0, 9);
    s.g = r < 6 ? 1 : r < 8 ? irand(2, 3) : 0; /* 0: depthwise */
    int64_t cg = irand(1, r < 3 ? 40 : 12), mg = irand(1, 20);
    if (s.g == 0) s.g = irand(2, 12), cg = 1, mg = irand(1, 2);
    s.C = cg * s.g, s.M = mg * s.g;
    static const int64_t ks[] = {1, 1, 2, 3, 3, 3, 5, 7};
    s.KH = ks[irand(0, 7)], s.KW = irand(0, 3) ? s.KH : ks[irand(0, 7)];
    s.H = irand(1, 24), s.W = irand(1, 24);
    s.sh = irand(1, 3), s.sw = irand(0, 2) ? 1 : irand(1, 3);
    s.dh = irand(0, 4) ? 1 : irand(2, 3), s.dw = irand(0, 4) ? 1 : irand(2, 3);
    s.pt = irand(0, 3), s.pl = irand(0, 3), s.pb = irand(0, 3), s.pr = irand(0, 3);
    if (out_dim(s.H, s.KH, s.sh, s.pt, s.pb, s.dh) > 0 && out_dim(s.W, s.KW, s.sw, s.pl, s.pr, s.dw) > 0) return s;
  }
}

static void conv_random(int wide) {
  for (int i = 0; i < 170; i++) {
    qcase q = random_case(wide);
    cshape s = random_shape();
    run_conv(&q, &s);
  }
}

/* Shapes of real networks and the long reductions. */
static const cshape fixed_shapes[] = {
    /* N  C    H   W   M   KH KW sh sw pt pl pb pr dh dw g */
    {1, 64, 14, 14, 64, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1},   /* ResNet 3x3 */
    {1, 32, 9, 11, 17, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1, 1},    /* 1x1 */
    {1, 3, 32, 30, 16, 7, 7, 2, 2, 3, 3, 3, 3, 1, 1, 1},    /* 7x7 stem */
    {1, 256, 5, 5, 8, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1},     /* K = 2304 */
    {2, 240, 4, 6, 5, 3, 3, 1, 2, 0, 2, 1, 0, 1, 1, 1},     /* K = 2160, stride 2 */
    {1, 24, 17, 13, 24, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 24},  /* depthwise stride 2 */
    {1, 12, 10, 10, 12, 3, 3, 1, 1, 2, 2, 2, 2, 2, 2, 3},   /* dilated, grouped */
    {1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1, 1},       /* K = 1 */
    {1, 1, 8, 8, 3, 1, 2, 1, 1, 0, 0, 0, 1, 1, 1, 1},       /* K = 2 */
    {1, 3, 8, 70, 5, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1, 1},      /* K = 3, rows longer than a panel */
    {1, 5, 1, 130, 7, 1, 3, 1, 1, 0, 1, 0, 1, 1, 1, 1},     /* one row of 130 pixels */
    {1, 4, 130, 1, 7, 3, 1, 1, 1, 1, 0, 1, 0, 1, 1, 1},     /* one column */
    {1, 2, 3, 3, 4, 5, 5, 1, 1, 4, 4, 4, 4, 1, 1, 1},       /* padding larger than the image */
};

static void test_conv_fixed(void **state) {
  (void)state;
  REQUIRE_ISA();
  n_total = n_inside = 0;
  for (int wide = 0; wide < 2; wide++)
    for (size_t i = 0; i < sizeof fixed_shapes / sizeof fixed_shapes[0]; i++)
      for (int rep = 0; rep < 3; rep++) {
        qcase q = random_case(wide);
        q.mnvar = 0, q.xpat = 0, q.outvar = rep == 0 ? 0 : q.outvar;
        run_conv(&q, &fixed_shapes[i]);
      }
  check_inside("conv fixed");
}

static void test_conv_16x8(void **state) {
  (void)state;
  REQUIRE_ISA();
  n_total = n_inside = 0;
  conv_random(0);
  check_inside("conv 16x8");
}
static void test_conv_i16(void **state) {
  (void)state;
  REQUIRE_ISA();
  n_total = n_inside = 0;
  conv_random(1);
  check_inside("conv i16");
}

static void conv_extreme(const qcase *q, int si) {
  static const cshape sh[] = {
      {1, 40, 6, 7, 9, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1},   /* K = 360 */
      {1, 300, 3, 4, 7, 3, 3, 1, 1, 1, 0, 0, 1, 1, 1, 1},  /* K = 2700 */
      {1, 29, 9, 9, 5, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1},   /* K = 261 */
  };
  run_conv(q, &sh[si]);
}
static void test_conv_extremes(void **state) {
  (void)state;
  REQUIRE_ISA();
  run_extremes(3, conv_extreme);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_fc_16x8),         cmocka_unit_test(test_fc_i16),      cmocka_unit_test(test_fc_extremes),
      cmocka_unit_test(test_epilogue),        cmocka_unit_test(test_conv_fixed),  cmocka_unit_test(test_conv_16x8),
      cmocka_unit_test(test_conv_i16),        cmocka_unit_test(test_conv_extremes),
  };
  const struct CMUnitTest direct[] = {cmocka_unit_test(test_conv_direct), cmocka_unit_test(test_conv_int32_edge)};
  const struct CMUnitTest fixed[] = {cmocka_unit_test(test_pack_layouts)};
  int failed = cmocka_run_group_tests_name("layouts", fixed, NULL, NULL);
  /* every ISA of the 16-bit rows, in the catalogue's order */
  for (int i = 0; i < Q_NROWS; i++) {
    if (q_row_suite(&q_rows[i]) != Q_SUITE_Q16) continue;
    int seen = 0;
    for (int j = 0; j < i; j++) seen |= q_row_suite(&q_rows[j]) == Q_SUITE_Q16 && !strcmp(q_rows[j].isa, q_rows[i].isa);
    if (seen) continue;
    ISA = q_rows[i].isa;
    failed += _cmocka_run_group_tests(ISA, tests, sizeof tests / sizeof tests[0], NULL, NULL);
    if (direct16(0) || direct16(1)) failed += _cmocka_run_group_tests(ISA, direct, sizeof direct / sizeof direct[0], NULL, NULL);
  }
  return failed;
}
