/* tests/libjit/q_x86_dw_test.c: every x86_64 depthwise 8-bit Conv row of the kernel catalogue (shape
 * predicate dw: targets/x86_64/kernels/x86_dw8.c, qllc_k_dwconv2d_<ti>_i8_<to>__avx512vnni), compiled
 * natively, bit for bit against its reference qllc_k_conv2d_<ti>_i8_<to> of q_layers.c with group == C
 * == M, weights and bias packed by the row's packer (DW_Q4). SKIPPED when the host lacks the row's CPU
 * features. Inputs, packed weights, the parameter arrays and the scratch (of
 * exactly qllc_scratch_dw bytes, filled with garbage first) end at (the input sometimes starts right
 * after) a PROT_NONE page, so an access outside any of them faults; the output carries a guard zone
 * that must stay untouched.
 * Also: qllc_pack_size / qllc_pack_w8 for DW_Q4, qllc_dw_fits and qllc_scratch_dw. */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../targets/x86_64/kernels/variants.h"
#include "kernels_q.h"
#include "lower/pack.h"

#define Q_TEST_SEED 0x3d7a9e11b5c40f27ULL
#include "q_x86_test_util.h"
#define Q_CATALOG_DEF "../../targets/x86_64/kernels/variants.def"
#include "q_catalog.h"

static const q_group *G; /* the variant under test */
/* Skips the test unless the host runs the variant. */
static void begin_group(void **state) {
  G = *state;
  for (int c = 0; c < 4; c++)
    if (G->row[c] && !q_row_runs(G->row[c])) {
      print_message("%s: needs %s, which this CPU lacks\n", G->row[c]->name, G->row[c]->features);
      skip();
    }
}

/* ---- the depthwise conv ------------------------------------------------------------------------------ */
typedef struct dw_case {
  int64_t d[16]; /* N C H W M OH OW KH KW sh sw pt pl dh dw group (M = group = C) */
  int32_t z_x;
  int xpat, wpat, outvar, bmode, mnmode, x_at_start;
} dw_case;

static int64_t n_out, n_inside, n_cases;

/* A depthwise shape with pads (top, left, bottom, right); 0 when the output would be empty. */
static int dw_shape(dw_case *t, int64_t N, int64_t C, int64_t H, int64_t W, int64_t KH, int64_t KW, int64_t sh,
                    int64_t sw, int64_t pt, int64_t pl, int64_t pb, int64_t pr, int64_t dh, int64_t dw) {
  if (H + pt + pb < (KH - 1) * dh + 1 || W + pl + pr < (KW - 1) * dw + 1) return 0;
  const int64_t OH = (H + pt + pb - ((KH - 1) * dh + 1)) / sh + 1, OW = (W + pl + pr - ((KW - 1) * dw + 1)) / sw + 1;
  const int64_t v[16] = {N, C, H, W, C, OH, OW, KH, KW, sh, sw, pt, pl, dh, dw, C};
  memcpy(t->d, v, sizeof v);
  memset(&t->z_x, 0, sizeof *t - offsetof(dw_case, z_x));
  return 1;
}

static void run_dw(int combo, const dw_case *t) {
  const q_vrow *r = G->row[combo];
  if (!r) return;
  const kind ki = cin(combo), ko = cout_(combo);
  const int64_t *d = t->d;
  const int64_t N = d[0], C = d[1], H = d[2], W = d[3], OH = d[5], OW = d[6], KH = d[7], KW = d[8];
  const int64_t K = KH * KW, nx = N * C * H * W, ny = N * C * OH * OW;
  assert_true(qllc_dw_fits(KH, KW, d[10], d[14]));
  q8_operands o;
  q8_operands_make(&o, ki, ko, nx, C, K, t->z_x, t->xpat, t->wpat, t->bmode, t->mnmode, t->outvar, t->x_at_start);
  gbuf gwp, gbc, gs;
  int8_t *wp = galloc(&gwp, qllc_pack_size(r->layout, C, K));
  int32_t *bias_c = galloc(&gbc, (size_t)C * 4);
  const qllc_pack_src src = {o.w, 1, ki == K_I8, o.bias, o.n, o.z_y, C, K, K, 0};
  r->pack(&src, wp, bias_c);
  const qllc_layer_geom lg = q_conv_geom(d);
  const size_t ssz = (size_t)r->scratch(&lg);
  uint8_t *scratch = galloc(&gs, ssz), *want = calloc((size_t)ny, 1), *got = gzone((size_t)ny);
  memset(scratch, 0x5a, ssz);
  r->conv_ref(want, o.x, o.w, o.bias, o.m, o.n, d, t->z_x, o.z_y, o.lo, o.hi, NULL);
  r->conv_fn(got, o.x, wp, bias_c, o.m, o.n, d, t->z_x, o.z_y, o.lo, o.hi, scratch);
  const int64_t i = q8_compare(ko, got, want, ny, o.lo, o.hi, &n_out, &n_inside);
  if (i >= 0) {
    const int32_t g = tget(ko, got, i), e = tget(ko, want, i);
    const int64_t oc = i / (OH * OW) % C;
    fail_msg("%s N=%lld C=%lld H=%lld W=%lld OH=%lld OW=%lld K=%lldx%lld s=%lld,%lld p=%lld,%lld d=%lld,%lld "
             "z_x=%d pat %d/%d out %d bias %d mn %d: y[%lld] (c %lld, oh %lld, ow %lld) got %d want %d (m=%d n=%d)",
             r->name, (long long)N, (long long)C, (long long)H, (long long)W, (long long)OH, (long long)OW,
             (long long)KH, (long long)KW, (long long)d[9], (long long)d[10], (long long)d[11], (long long)d[12],
             (long long)d[13], (long long)d[14], t->z_x, t->xpat, t->wpat, t->outvar, t->bmode, t->mnmode,
             (long long)i, (long long)oc, (long long)(i / OW % OH), (long long)(i % OW), g, e, o.m[oc], o.n[oc]);
  }
  if (!guard_ok(got, (size_t)ny)) fail_msg("dw: wrote past y");
  n_cases++;
  q8_operands_free(&o);
  free(want), free(got);
  gfree(&gwp), gfree(&gbc), gfree(&gs);
}

/* A random shape the variant takes (qllc_dw_fits), pads up to the kernel reach and sometimes far past it. */
static void dw_random(dw_case *t, int combo) {
  for (;;) {
    static const int64_t ks[] = {1, 2, 3, 3, 3, 5, 5, 7, 4, 8, 9, 11};
    const int64_t KH = ks[irand(0, 11)], KW = irand(0, 3) ? KH : ks[irand(0, 11)];
    const int64_t sh = irand(1, 3), sw = irand(0, 2) ? (sh < 3 ? sh : 2) : irand(1, 4);
    const int64_t dh = irand(0, 3) ? 1 : irand(2, 3), dw = irand(0, 3) ? 1 : irand(2, 4);
    if (!qllc_dw_fits(KH, KW, sw, dw)) continue;
    const int64_t H = irand(1, 20), W = irand(0, 4) ? irand(1, 40) : irand(41, 150);
    const int64_t far = irand(0, 7) == 0 ? 40 : 0;
    const int64_t pt = irand(0, (KH - 1) * dh + far), pb = irand(0, (KH - 1) * dh + far);
    const int64_t pl = irand(0, (KW - 1) * dw + far), pr = irand(0, (KW - 1) * dw + far);
    if (dw_shape(t, irand(1, 2), irand(1, 9), H, W, KH, KW, sh, sw, pt, pl, pb, pr, dh, dw)) break;
  }
  t->z_x = pick_zx(cin(combo));
  t->outvar = (int)irand(0, 4);
  t->bmode = irand(0, 12) == 0 ? (int)irand(1, 2) : 0;
  t->x_at_start = (int)irand(0, 1);
}

static void test_dw(void **state) {
  begin_group(state);
  n_out = n_inside = n_cases = 0;
  for (int i = 0; i < 600; i++) {
    dw_case t;
    dw_random(&t, i % 4);
    run_dw(i % 4, &t);
  }
  /* fixed shapes: N KH KW ... as dw_shape */
  struct {
    int64_t N, C, H, W, KH, KW, sh, sw, pt, pl, pb, pr, dh, dw;
  } e[] = {
      {1, 64, 56, 56, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1}, {2, 5, 56, 56, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1}, /* MobileNet */
      {2, 3, 28, 28, 3, 3, 2, 2, 0, 0, 1, 1, 1, 1},  {1, 4, 14, 14, 5, 5, 1, 1, 2, 2, 2, 2, 1, 1},
      {1, 3, 17, 19, 5, 5, 2, 2, 2, 2, 2, 2, 1, 1},  {1, 3, 21, 23, 7, 7, 1, 1, 3, 3, 3, 3, 1, 1},
      {1, 2, 15, 33, 7, 7, 2, 2, 3, 3, 3, 3, 1, 1},  {1, 5, 9, 9, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1},
      {2, 3, 7, 37, 1, 1, 2, 2, 0, 0, 0, 0, 1, 1},   {1, 3, 1, 1, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1},
      {1, 3, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1},    {2, 4, 2, 3, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1},
      {1, 2, 2, 3, 3, 3, 2, 2, 2, 2, 2, 2, 1, 1},    {1, 3, 12, 16, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1},
      {1, 3, 12, 17, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1},  {1, 3, 5, 63, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1},
      {1, 3, 5, 64, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1},   {1, 3, 5, 65, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1},
      {1, 2, 4, 200, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1},  {1, 2, 4, 201, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1},
      {1, 3, 10, 10, 3, 3, 1, 1, 2, 2, 2, 2, 2, 2},  {1, 3, 20, 30, 3, 3, 1, 1, 4, 4, 4, 4, 4, 4}, /* dilations */
      {1, 2, 16, 40, 5, 5, 1, 1, 3, 0, 1, 4, 1, 1},  {1, 2, 6, 6, 3, 3, 1, 1, 2, 0, 0, 2, 1, 1}, /* asymmetric */
      {1, 2, 5, 7, 3, 3, 1, 1, 6, 9, 7, 40, 1, 1},   {1, 2, 3, 2, 3, 3, 2, 2, 10, 70, 12, 90, 1, 1}, /* far pads */
      {1, 2, 4, 5, 1, 1, 1, 1, 3, 5, 2, 100, 1, 1},  {1, 2, 30, 4, 3, 3, 1, 3, 1, 1, 1, 1, 1, 1},
      {1, 2, 9, 50, 3, 3, 1, 4, 1, 1, 1, 1, 1, 1},   {1, 2, 9, 50, 2, 16, 1, 1, 0, 7, 1, 8, 1, 1},
      {1, 2, 9, 50, 3, 8, 1, 1, 1, 3, 1, 4, 1, 6},   {1, 2, 9, 50, 3, 4, 1, 2, 1, 3, 1, 4, 1, 11},
      {1, 2, 40, 9, 16, 3, 3, 1, 3, 1, 4, 1, 1, 1},  {1, 2, 40, 9, 4, 3, 1, 1, 3, 1, 4, 1, 9, 1},
  };
  for (size_t i = 0; i < sizeof e / sizeof e[0]; i++)
    for (int combo = 0; combo < 4; combo++) {
      dw_case t;
      assert_true(dw_shape(&t, e[i].N, e[i].C, e[i].H, e[i].W, e[i].KH, e[i].KW, e[i].sh, e[i].sw, e[i].pt, e[i].pl,
                           e[i].pb, e[i].pr, e[i].dh, e[i].dw));
      t.z_x = pick_zx(cin(combo)), t.outvar = (int)irand(0, 4), t.x_at_start = combo & 1;
      run_dw(combo, &t);
    }
  /* extreme values: all min / max / alternating inputs and weights, z_x at both ends, biases at the bound,
     n = 0 and n = 62 on every channel */
  for (int combo = 0; combo < 4; combo++)
    for (int xp = 0; xp < 4; xp++)
      for (int wp = 0; wp < 4; wp++) {
        dw_case t;
        dw_random(&t, combo);
        const kind ki = cin(combo);
        t.xpat = xp, t.wpat = wp, t.z_x = (xp + wp) % 2 ? kmin(ki) : kmax(ki), t.bmode = (int)irand(0, 2);
        t.mnmode = (int)irand(0, 1);
        run_dw(combo, &t);
      }
  print_message("dw: %lld cases, %lld outputs, %lld inside the clamp range\n", (long long)n_cases, (long long)n_out,
                (long long)n_inside);
  if (n_inside * 4 < n_out) fail_msg("dw: too few outputs inside the clamp range");
}

/* n = 0 (m tiny) and n = 62 on every channel, so REQUANT's shift extremes are hit for sure. */
static void test_dw_shift_extremes(void **state) {
  begin_group(state);
  for (int combo = 0; combo < 4; combo++)
    for (int sel = 0; sel < 3; sel++) {
      dw_case t;
      assert_true(dw_shape(&t, 1, 16, 9, 21, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1));
      t.z_x = pick_zx(cin(combo)), t.outvar = (int)irand(0, 4), t.bmode = sel;
      for (int mn = 2; mn <= 3; mn++) t.mnmode = mn, run_dw(combo, &t);
    }
}

/* ---- the layout and the shape rule -------------------------------------------------------------------- */
static void test_pack_dw(void **state) {
  (void)state;
  static const int64_t chs[] = {1, 3, 16, 17, 64}, Ks[] = {1, 2, 3, 4, 5, 8, 9, 25, 49, 64};
  for (int a = 0; a < 5; a++)
    for (int b = 0; b < 10; b++) {
      const int64_t ch = chs[a], K = Ks[b], R = (K + 3 + 3) / 4 * 4;
      assert_int_equal(qllc_dw_row(K), R);
      const size_t sz = qllc_pack_size(QLLC_LAYOUT_DW_Q4, ch, K);
      assert_int_equal(sz, ch * R);
      int8_t *w = malloc((size_t)(ch * K)), *p = malloc(sz);
      for (int64_t i = 0; i < ch * K; i++) w[i] = (int8_t)irand(-128, 127);
      memset(p, 0x5a, sz);
      qllc_pack_w8(QLLC_LAYOUT_DW_Q4, p, w, ch, K);
      size_t at = 0;
      for (int64_t c = 0; c < ch; c++)
        for (int64_t k = 0; k < R; k++, at++) assert_int_equal(p[at], k < K ? w[c * K + k] : 0);
      assert_int_equal(at, sz);
      /* the kernel's last 32-bit quad load of every (KH, KW) with KH * KW = K stays inside the row */
      for (int64_t KW = 1; KW <= K; KW++)
        if (K % KW == 0)
          for (int64_t q = 0; q < (KW + 3) / 4; q++) assert_true((K / KW - 1) * KW + 4 * q + 4 <= R);
      free(w), free(p);
    }
}

static void test_dw_fits(void **state) {
  (void)state;
  assert_true(qllc_dw_fits(3, 3, 1, 1));
  assert_true(qllc_dw_fits(3, 3, 2, 1));
  assert_true(qllc_dw_fits(5, 5, 2, 1));
  assert_true(qllc_dw_fits(7, 7, 2, 1));
  assert_true(qllc_dw_fits(1, 1, 4, 1));   /* 60 */
  assert_true(qllc_dw_fits(3, 3, 3, 4));   /* 45 + 8 */
  assert_true(qllc_dw_fits(3, 16, 1, 3));  /* 15 + 45 = 60 */
  assert_true(qllc_dw_fits(3, 3, 1, 24));  /* 15 + 48 = 63 */
  assert_false(qllc_dw_fits(3, 3, 1, 25)); /* 65 */
  assert_false(qllc_dw_fits(3, 3, 4, 3));  /* 60 + 6 */
  assert_false(qllc_dw_fits(1, 1, 5, 1));  /* 75 */
  assert_false(qllc_dw_fits(3, 17, 1, 1)); /* more than 4 quads */
  assert_true(qllc_dw_fits(16, 16, 1, 1));
  assert_false(qllc_dw_fits(17, 16, 1, 1)); /* 68 weight quads */
  assert_true(qllc_dw_fits(64, 3, 1, 1));
  assert_false(qllc_dw_fits(65, 3, 1, 1));
  assert_false(qllc_dw_fits(0, 3, 1, 1));
  assert_false(qllc_dw_fits(3, 0, 1, 1));
  assert_false(qllc_dw_fits(3, 3, 0, 1));
  assert_false(qllc_dw_fits(3, 3, 1, 0));
  /* the scratch: H + 1 rows of a pitch that is a multiple of 64 and leaves >= 64 bytes after the data */
  for (int64_t W = 1; W < 300; W += 7)
    for (int64_t pl = 0; pl < 70; pl += 3) {
      const int64_t P = qllc_dw_pitch(W, pl);
      assert_int_equal(P % 64, 0);
      assert_true(P >= pl + W + 64 && P < pl + W + 128);
      assert_int_equal(qllc_scratch_dw(5, W, 3, 3, 1, pl, 1, 1), 6 * P);
    }
}

int main(void) {
  static const struct CMUnitTest fixed[] = {cmocka_unit_test(test_pack_dw), cmocka_unit_test(test_dw_fits)};
  static q_group groups[Q_NROWS];
  static struct CMUnitTest tests[sizeof fixed / sizeof fixed[0] + 2 * Q_NROWS];
  static char names[Q_NROWS][128];
  int nt = 0;
  for (size_t i = 0; i < sizeof fixed / sizeof fixed[0]; i++) tests[nt++] = fixed[i];
  const int ng = q_groups(Q_SUITE_DW, groups);
  for (int k = 0; k < ng; k++) {
    snprintf(names[k], sizeof names[k], "%s (shift extremes)", groups[k].label);
    const struct CMUnitTest t = {groups[k].label, test_dw, NULL, NULL, &groups[k]};
    const struct CMUnitTest t2 = {names[k], test_dw_shift_extremes, NULL, NULL, &groups[k]};
    tests[nt++] = t, tests[nt++] = t2;
  }
  return _cmocka_run_group_tests("q_x86_dw_test", tests, (size_t)nt, NULL, NULL);
}
