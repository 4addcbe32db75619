/* tests/libjit/q_q8_cases.h: the 8-bit Conv / FC variant tests' cases, shared by q_x86_q8_test.c (native,
 * cmocka) and q_arm_kernels.c (cross-compiled for aarch64, the cmocka shim): the wrappers that give every
 * case records, the random shape generators, and one run of a case on a catalogue row (q_catalog.h):
 * inputs, weights and parameter arrays made from the case, packed by the row's packer into a scratch
 * of the row's size, the variant compared bit for bit with its reference. Plain C; include after
 * q_x86_test_util.h and q_catalog.h. */
#ifndef QLLC_Q_Q8_CASES_H
#define QLLC_Q_Q8_CASES_H
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "lower/pack.h"
#include "q_catalog.h"

/* outputs compared in the current suite, and how many of them the clamp did not decide */
static int64_t n_out, n_inside;

/* ---- FC ------------------------------------------------------------------------------------------- */
typedef struct fc_case {
  int64_t M, N, K;
  int32_t z_x;
  int xpat, wpat, outvar, bmode, mnmode; /* fill patterns, pick_out variant, make_bias / pick_mn modes */
} fc_case;

/* The constants of a case packed by row r's packer (the lowering's): weights wp, bias bias_c. */
static Q_UNUSED void q8_pack(const q_vrow *r, const q8_operands *o, int64_t ch, int64_t K, int64_t taps, kind ki,
                             gbuf *gwp, gbuf *gbc, int8_t **wp, int32_t **bias_c) {
  *wp = galloc(gwp, qllc_pack_size(r->layout, ch, K));
  *bias_c = galloc(gbc, (size_t)ch * 4);
  const qllc_pack_src s = {o->w, 1, ki == K_I8, o->bias, o->n, o->z_y, ch, K, taps, 0};
  r->pack(&s, *wp, *bias_c);
}

/* One FC case on row r (its type combination) against its reference. */
static Q_UNUSED void q8_run_fc(const q_vrow *r, const fc_case *t) {
  const int combo = q_row_combo(r);
  const char *isa = r->name;
  const kind ki = cin(combo), ko = cout_(combo);
  const int64_t M = t->M, N = t->N, K = t->K;
  q8_operands o;
  q8_operands_make(&o, ki, ko, M * K, N, K, t->z_x, t->xpat, t->wpat, t->bmode, t->mnmode, t->outvar, 0);
  gbuf gwp, gbc;
  int8_t *wp;
  int32_t *bias_c;
  q8_pack(r, &o, N, K, 1, ki, &gwp, &gbc, &wp, &bias_c);
  const qllc_layer_geom g = q_fc_geom(M, N, K);
  const size_t ssz = (size_t)r->scratch(&g);
  uint8_t *scratch = gzone(ssz), *want = calloc((size_t)(M * N), 1), *got = gzone((size_t)(M * N));
  r->fc_ref(want, o.x, o.w, o.bias, o.m, o.n, M, N, K, t->z_x, o.z_y, o.lo, o.hi, NULL);
  r->fc_fn(got, o.x, wp, bias_c, o.m, o.n, M, N, K, t->z_x, o.z_y, o.lo, o.hi, scratch);
  const int64_t i = q8_compare(ko, got, want, M * N, o.lo, o.hi, &n_out, &n_inside);
  if (i >= 0) {
    const int32_t g = tget(ko, got, i), e = tget(ko, want, i);
    fail_msg("fc %s combo %d M=%lld N=%lld K=%lld z_x=%d pat %d/%d out %d bias %d mn %d: [%lld][%lld] got %d want %d "
             "(m=%d n=%d bias=%d z_y=%d lo=%d hi=%d)",
             isa, combo, (long long)M, (long long)N, (long long)K, t->z_x, t->xpat, t->wpat, t->outvar, t->bmode,
             t->mnmode, (long long)(i / N), (long long)(i % N), g, e, o.m[i % N], o.n[i % N], o.bias[i % N], o.z_y,
             o.lo, o.hi);
  }
  if (!guard_ok(got, (size_t)(M * N))) fail_msg("fc %s: wrote past y (M=%lld N=%lld)", isa, (long long)M, (long long)N);
  if (!guard_ok(scratch, ssz))
    fail_msg("fc %s: wrote past the scratch (M=%lld K=%lld)", isa, (long long)M, (long long)K);
  q8_operands_free(&o);
  free(scratch), free(want), free(got);
  gfree(&gwp), gfree(&gbc);
}

/* Extreme values: all min / max / alternating inputs and weights, z_x at both ends, biases at the bound,
   on small random shapes; run(combo, case) runs one. Returns the number of cases. */
static Q_UNUSED int fc_extremes(void (*run)(int, const fc_case *)) {
  int cases = 0;
  for (int combo = 0; combo < 4; combo++)
    for (int xp = 0; xp < 4; xp++)
      for (int wp = 0; wp < 4; wp++) {
        const kind ki = cin(combo);
        fc_case t = {(int64_t)irand(1, 9), (int64_t)irand(1, 40), (int64_t)irand(1, 300),
                     (xp + wp) % 2 ? kmin(ki) : kmax(ki), xp, wp, (int)irand(0, 4), (int)irand(0, 2), (int)irand(0, 1)};
        run(combo, &t), cases++;
      }
  return cases;
}

/* ---- Conv ------------------------------------------------------------------------------------------- */
typedef struct conv_case {
  int64_t d[16]; /* N C H W M OH OW KH KW sh sw pt pl dh dw group */
  int32_t z_x;
  int xpat, wpat, outvar, bmode, mnmode;
} conv_case;

/* An ALT_NHWC row's other layouts (x, y: NHWC/NCHW, NCHW/NHWC, NHWC/NHWC) on case t, against want (the
   reference's NCHW output): the NHWC input made from x, the NHWC output put back into NCHW. */
static Q_UNUSED void q8_run_conv_layouts(const q_vrow *r, const conv_case *t, const q8_operands *o, const int8_t *wp,
                                        const int32_t *bias_c, uint8_t *scratch, size_t ssz, const uint8_t *want) {
  const int64_t *d = t->d;
  const int64_t N = d[0], C = d[1], HW = d[2] * d[3], M = d[4], P = d[5] * d[6], ny = N * M * P;
  gbuf gx;
  uint8_t *xh = galloc(&gx, (size_t)(N * C * HW)), *got = gzone((size_t)ny), *back = malloc((size_t)ny);
  q_relayout(xh, (const uint8_t *)o->x, N, C, HW, 1);
  for (int lay = 1; lay < 4; lay++) {
    const int xl = lay & 1, yl = lay >> 1;
    r->conv_lay(got, xl ? xh : o->x, wp, bias_c, o->m, o->n, d, t->z_x, o->z_y, o->lo, o->hi, scratch, xl, yl);
    if (yl) q_relayout(back, got, N, M, P, 0);
    else memcpy(back, got, (size_t)ny);
    for (int64_t i = 0; i < ny; i++)
      if (back[i] != want[i])
        fail_msg("conv %s x %s y %s C=%lld H=%lld W=%lld M=%lld K=%lldx%lld s=%lld,%lld: y[%lld] got %d want %d",
                 r->name, xl ? "NHWC" : "NCHW", yl ? "NHWC" : "NCHW", (long long)C, (long long)d[2], (long long)d[3],
                 (long long)M, (long long)d[7], (long long)d[8], (long long)d[9], (long long)d[10], (long long)i,
                 back[i], want[i]);
    if (!guard_ok(got, (size_t)ny)) fail_msg("conv %s (layouts %d %d): wrote past y", r->name, xl, yl);
    if (!guard_ok(scratch, ssz)) fail_msg("conv %s (layouts %d %d): wrote past the scratch", r->name, xl, yl);
  }
  free(got), free(back);
  gfree(&gx);
}

/* One conv case on row r (its type combination) against its reference: a direct row (c4, cl) only on
   the shapes its kernel takes; an ALT_NHWC row also with NHWC input, output and both. */
static Q_UNUSED void q8_run_conv(const q_vrow *r, const conv_case *t) {
  const int combo = q_row_combo(r);
  const char *isa = r->name;
  const kind ki = cin(combo), ko = cout_(combo);
  const int64_t *d = t->d;
  const int64_t N = d[0], C = d[1], H = d[2], W = d[3], M = d[4], OH = d[5], OW = d[6], KH = d[7], KW = d[8];
  const int64_t group = d[15], cg = C / group, K = cg * KH * KW, ny = N * M * OH * OW;
  q8_operands o;
  q8_operands_make(&o, ki, ko, N * C * H * W, M, K, t->z_x, t->xpat, t->wpat, t->bmode, t->mnmode, t->outvar, 0);
  (void)H;
  if (!strcmp(r->fits_id, "c4") && !qllc_c4_fits(C, group, KH, KW, d[9], d[10])) fail_msg("%s: a shape it does not take", isa);
  if (!strcmp(r->fits_id, "cl") && !qllc_cl_fits(C, group, KH, KW)) fail_msg("%s: a shape it does not take", isa);
  gbuf gwp, gbc;
  int8_t *wp;
  int32_t *bias_c;
  q8_pack(r, &o, M, K, KH * KW, ki, &gwp, &gbc, &wp, &bias_c);
  const qllc_layer_geom g = q_conv_geom(d);
  const size_t ssz = (size_t)r->scratch(&g);
  uint8_t *scratch = gzone(ssz), *want = calloc((size_t)ny, 1), *got = gzone((size_t)ny);
  r->conv_ref(want, o.x, o.w, o.bias, o.m, o.n, d, t->z_x, o.z_y, o.lo, o.hi, NULL);
  r->conv_fn(got, o.x, wp, bias_c, o.m, o.n, d, t->z_x, o.z_y, o.lo, o.hi, scratch);
  const int64_t i = q8_compare(ko, got, want, ny, o.lo, o.hi, &n_out, &n_inside);
  if (i >= 0) {
    const int32_t g = tget(ko, got, i), e = tget(ko, want, i);
    const int64_t oc = i / (OH * OW) % M;
    fail_msg("conv %s combo %d N=%lld C=%lld H=%lld W=%lld M=%lld OH=%lld OW=%lld K=%lldx%lld s=%lld,%lld p=%lld,%lld "
             "d=%lld,%lld g=%lld z_x=%d pat %d/%d out %d bias %d mn %d: y[%lld] (oc %lld) got %d want %d (m=%d n=%d)",
             isa, combo, (long long)N, (long long)C, (long long)H, (long long)W, (long long)M, (long long)OH,
             (long long)OW, (long long)KH, (long long)KW, (long long)d[9], (long long)d[10], (long long)d[11],
             (long long)d[12], (long long)d[13], (long long)d[14], (long long)group, t->z_x, t->xpat, t->wpat,
             t->outvar, t->bmode, t->mnmode, (long long)i, (long long)oc, g, e, o.m[oc], o.n[oc]);
  }
  if (!guard_ok(got, (size_t)ny)) fail_msg("conv %s: wrote past y", isa);
  if (!guard_ok(scratch, ssz)) fail_msg("conv %s: wrote past the scratch (K=%lld)", isa, (long long)K);
  if (r->conv_lay) q8_run_conv_layouts(r, t, &o, wp, bias_c, scratch, ssz, want);
  q8_operands_free(&o);
  free(scratch), free(want), free(got);
  gfree(&gwp), gfree(&gbc);
}

/* A conv shape; pads (top, left, bottom, right); returns 0 when the output would be empty. */
static Q_UNUSED int conv_shape(conv_case *t, int64_t N, int64_t C, int64_t H, int64_t W, int64_t M, int64_t KH,
                               int64_t KW, int64_t sh, int64_t sw, int64_t pt, int64_t pl, int64_t pb, int64_t pr,
                               int64_t dh, int64_t dw, int64_t group) {
  const int64_t OH = (H + pt + pb - ((KH - 1) * dh + 1)) / sh + 1, OW = (W + pl + pr - ((KW - 1) * dw + 1)) / sw + 1;
  if (H + pt + pb < (KH - 1) * dh + 1 || W + pl + pr < (KW - 1) * dw + 1 || OH < 1 || OW < 1) return 0;
  const int64_t v[16] = {N, C, H, W, M, OH, OW, KH, KW, sh, sw, pt, pl, dh, dw, group};
  memcpy(t->d, v, sizeof v);
  return 1;
}

/* A fixed shape of a suite's table (pads top, left, bottom, right), which must not be empty. */
typedef struct conv_edge {
  int64_t N, C, H, W, M, KH, KW, sh, sw, pt, pl, pb, pr, dh, dw, g;
} conv_edge;
static Q_UNUSED void edge_shape(conv_case *t, const conv_edge *e) {
  assert_true(conv_shape(t, e->N, e->C, e->H, e->W, e->M, e->KH, e->KW, e->sh, e->sw, e->pt, e->pl, e->pb, e->pr,
                         e->dh, e->dw, e->g));
}

/* The rest of a random case after its shape: z_x, plain random values, an output variant, now and then a
   bias at the bound. */
static Q_UNUSED void random_case_params(conv_case *t, int combo) {
  t->z_x = pick_zx(cin(combo));
  t->xpat = t->wpat = 0;
  t->outvar = (int)irand(0, 4);
  t->bmode = irand(0, 12) == 0 ? (int)irand(1, 2) : 0;
  t->mnmode = 0;
}

/* A random conv of any stride, dilation, padding and grouping (some depthwise), H up to hw_max, W up to
   hw_max or 60 .. 140 (rows wider than a panel). */
static Q_UNUSED void conv_random_hw(conv_case *t, int combo, int64_t hw_max) {
  for (;;) {
    const int64_t gsel = irand(0, 5);
    const int64_t group = gsel < 3 ? 1 : gsel == 3 ? irand(2, 3) : gsel == 4 ? irand(1, 8) : 1;
    const int64_t cg = irand(1, 12), mg = gsel == 4 ? 1 : irand(1, 20);
    static const int64_t ks[] = {1, 1, 2, 3, 3, 3, 5, 7};
    const int64_t KH = ks[irand(0, 7)], KW = irand(0, 3) ? KH : ks[irand(0, 7)];
    const int64_t sh = irand(1, 3), sw = irand(0, 2) ? sh : irand(1, 3);
    const int64_t dh = irand(0, 3) ? 1 : 2, dw = irand(0, 3) ? dh : irand(1, 2);
    const int64_t H = irand(1, hw_max), W = irand(0, 5) ? irand(1, hw_max) : irand(60, 140);
    const int64_t pt = irand(0, (KH - 1) * dh), pb = irand(0, (KH - 1) * dh);
    const int64_t pl = irand(0, (KW - 1) * dw), pr = irand(0, (KW - 1) * dw);
    if (conv_shape(t, irand(1, 2), cg * group, H, W, mg * group, KH, KW, sh, sw, pt, pl, pb, pr, dh, dw, group)) break;
  }
  random_case_params(t, combo);
}

#endif
