/* tests/libjit/q_x86_q8_test.c: every x86_64 8-bit Conv / FC row of the kernel catalogue
 * (targets/x86_64/kernels/variants.def: the panel, FC and direct c4 / cl variants of every ISA but AMX,
 * which q_amx_test.c runs), compiled natively, bit for bit against its reference qllc_k_conv2d_* /
 * qllc_k_fc_* of q_layers.c, with weights and bias packed by the row's packer (src/lower/pack.c) into a
 * scratch of the row's size. One test per variant (its four type combinations), chosen by the row's
 * shape predicate (fc, panel, c4, cl); a row whose CPU features the host lacks (the compiler's host
 * features, qllc_lower_has_features) is SKIPPED. Also: every x86_64 row is run by one of the kernel
 * tests (q_catalog.h, q_row_suite). Inputs, weights and the small parameter arrays end at a
 * PROT_NONE page, so a read past any of them faults; the output and scratch buffers carry a guard
 * zone that must stay untouched.
 * Also: the packers (qllc_pack_size, qllc_pack_w8 in both 8-bit layouts, qllc_pack_bias8 with
 * wrap-around) against independent enumerations. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../targets/x86_64/kernels/variants.h"
#include "kernels_q.h"
#include "lower/pack.h"

#define Q_TEST_SEED 0x51ed27a3c0ffee11ULL
#include "q_x86_test_util.h"
#define Q_CATALOG_DEF "../../targets/x86_64/kernels/variants.def"
#include "q_q8_cases.h"

/* ---- the variants ------------------------------------------------------------------------------------ */
static const q_group *G;   /* the variant under test */
static const char *gname; /* its name in messages */

/* Skips the test unless the host runs the variant. */
static void begin_group(void **state) {
  G = *state;
  gname = G->label;
  for (int c = 0; c < 4; c++)
    if (G->row[c] && !q_row_runs(G->row[c])) {
      print_message("%s: needs %s, which this CPU lacks\n", G->row[c]->name, G->row[c]->features);
      skip();
    }
}

/* ---- FC ------------------------------------------------------------------------------------------- */
static void run_fc(int combo, const fc_case *t) {
  if (G->row[combo]) q8_run_fc(G->row[combo], t);
}

static void fc_suite(void) {
  n_out = n_inside = 0;
  static const int64_t Ms[] = {1, 2, 3, 4, 5, 6, 7, 11, 13, 63, 64, 65, 130};
  static const int64_t Ns[] = {1, 2, 3, 8, 15, 16, 17, 24, 31, 33, 63, 64, 65, 100, 129};
  static const int64_t Ks[] = {1, 2, 3, 4, 5, 7, 8, 9, 31, 64, 100, 255, 1023};
  int cases = 0;
  /* random shapes, every combination of the types */
  for (int i = 0; i < 240; i++) {
    const int combo = i % 4;
    fc_case t = {Ms[irand(0, 12)], Ns[irand(0, 14)], Ks[irand(0, 12)], pick_zx(cin(combo)), 0, 0,
                 (int)irand(0, 4), i % 13 == 0 ? 1 + (int)irand(0, 1) : 0, 0};
    if (t.M * t.N * t.K > 4000000) t.M = 3;
    run_fc(combo, &t), cases++;
  }
  /* long reductions, odd sizes */
  for (int combo = 0; combo < 4; combo++) {
    fc_case a = {3, 37, 2050, pick_zx(cin(combo)), 0, 0, 0, 0, 0}, b = {1, 70, 4099, pick_zx(cin(combo)), 0, 0, 2, 0, 0};
    fc_case c = {67, 19, 2001, pick_zx(cin(combo)), 0, 0, 1, 0, 0};
    run_fc(combo, &a), run_fc(combo, &b), run_fc(combo, &c), cases += 3;
  }
  cases += fc_extremes(run_fc);
  print_message("fc %s: %d cases, %lld outputs, %lld inside the clamp range\n", gname, cases,
                (long long)n_out, (long long)n_inside);
  if (n_inside * 4 < n_out) fail_msg("fc %s: too few outputs inside the clamp range", gname);
}

/* ---- Conv ------------------------------------------------------------------------------------------- */
static void run_conv(int combo, const conv_case *t) {
  if (G->row[combo]) q8_run_conv(G->row[combo], t);
}

static void conv_random(conv_case *t, int combo) { conv_random_hw(t, combo, 24); }

/* Random shapes of rnd's kind with extreme values (all min / max / alternating inputs and weights, z_x
   at both ends, biases at the bound), then the suite's summary: cases so far + these. */
static void conv_extremes(void (*rnd)(conv_case *, int), int cases) {
  for (int combo = 0; combo < 4; combo++)
    for (int xp = 0; xp < 4; xp++)
      for (int wp = 0; wp < 4; wp++) {
        conv_case t;
        rnd(&t, combo);
        const kind ki = cin(combo);
        t.xpat = xp, t.wpat = wp, t.z_x = (xp + wp) % 2 ? kmin(ki) : kmax(ki), t.bmode = (int)irand(0, 2);
        t.mnmode = (int)irand(0, 1);
        run_conv(combo, &t), cases++;
      }
  print_message("conv %s: %d cases, %lld outputs, %lld inside the clamp range\n", gname, cases,
                (long long)n_out, (long long)n_inside);
  if (n_inside * 4 < n_out) fail_msg("conv %s: too few outputs inside the clamp range", gname);
}

/* A random shape the direct variant takes: stride 1, C/group a multiple of 4, more than one tap. */
static void conv_random_c4(conv_case *t, int combo) {
  for (;;) {
    const int64_t group = irand(0, 4) ? 1 : irand(2, 3), cg = 4 * irand(1, 6), mg = irand(1, 20);
    static const int64_t ks[] = {1, 2, 3, 3, 3, 5, 7};
    const int64_t KH = ks[irand(0, 6)], KW = irand(0, 3) ? KH : ks[irand(0, 6)];
    const int64_t dh = irand(0, 3) ? 1 : 2, dw = irand(0, 3) ? dh : irand(1, 2);
    const int64_t H = irand(1, 24), W = irand(0, 5) ? irand(1, 24) : irand(60, 140);
    const int64_t pt = irand(0, (KH - 1) * dh), pb = irand(0, (KH - 1) * dh);
    const int64_t pl = irand(0, (KW - 1) * dw), pr = irand(0, (KW - 1) * dw);
    if (KH * KW > 1 &&
        conv_shape(t, irand(1, 2), cg * group, H, W, mg * group, KH, KW, 1, 1, pt, pl, pb, pr, dh, dw, group))
      break;
  }
  random_case_params(t, combo);
}

/* A suite: 320 random cases of rnd's kind, the fixed shapes e (mn_alt: fixed cases of odd combos with
   all-typical multipliers), then the extremes. */
static void conv_suite_of(void (*rnd)(conv_case *, int), const conv_edge *e, size_t ne, int mn_alt) {
  n_out = n_inside = 0;
  int cases = 0;
  for (int i = 0; i < 320; i++) {
    conv_case t;
    rnd(&t, i % 4);
    run_conv(i % 4, &t), cases++;
  }
  for (size_t i = 0; i < ne; i++)
    for (int combo = 0; combo < 4; combo++) {
      conv_case t;
      edge_shape(&t, &e[i]);
      t.z_x = pick_zx(cin(combo)), t.xpat = t.wpat = 0, t.outvar = (int)irand(0, 4), t.bmode = 0;
      t.mnmode = mn_alt ? combo & 1 : 0;
      run_conv(combo, &t), cases++;
    }
  conv_extremes(rnd, cases);
}

/* ResNet's 3x3 layers, rows wider than 64 columns, one pixel, a 1-row image, padding larger than the
   kernel needs on one side only, many channels (a long reduction), groups, two images */
static const conv_edge c4_edges[] = {
    /* N  C   H   W    M   KH KW sh sw pt pl pb pr dh dw g */
    {1, 64, 56, 56, 64, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1},  {1, 128, 28, 28, 128, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1},
    {1, 512, 7, 7, 13, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1},   {1, 8, 3, 130, 13, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1},
    {1, 4, 1, 1, 5, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1},      {1, 4, 1, 70, 7, 1, 3, 1, 1, 0, 1, 0, 1, 1, 1, 1},
    {1, 8, 6, 6, 8, 3, 3, 1, 1, 2, 0, 0, 2, 1, 1, 1},      {2, 16, 9, 9, 19, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1},
    {1, 24, 7, 7, 18, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 3},    {1, 12, 13, 14, 6, 3, 3, 1, 1, 2, 2, 2, 2, 2, 2, 1},
    {1, 4, 5, 200, 4, 2, 2, 1, 1, 0, 0, 0, 0, 1, 1, 1},    {1, 1000, 3, 3, 5, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1},
};
/* The tile epilogue's stores: a run of 64 virtual pixels over 1 .. 3 output rows goes out packed, one
   masked store per row (the clamp left to the saturating packs when [act_lo, act_hi] is all of
   [-128, 127] or [0, 255]); other runs and the last one, vector by vector. Every output variant (whole
   range, relu, a sub-range, z_y at either end, a clamp from above alone) of every type combination, on
   rows of 56 columns (one virtual pixel a row: most runs over 2 rows, some over 3), 199 (runs inside
   one row, or over 2), 28 (3 or 4 rows a run), 40 dilated by 2 (two virtual pixels a row) and 5 (many
   rows: by vector). */
static const conv_edge c4_rows[] = {
    /* N  C  H   W   M  KH KW sh sw pt pl pb pr dh dw g */
    {1, 4, 6, 56, 7, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1},   {1, 4, 2, 200, 5, 2, 2, 1, 1, 0, 0, 0, 0, 1, 1, 1},
    {1, 8, 9, 28, 13, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1},  {1, 4, 5, 40, 6, 3, 3, 1, 1, 2, 2, 2, 2, 2, 2, 1},
    {1, 4, 7, 5, 7, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1},
};
static void conv_suite_c4(void) {
  conv_suite_of(conv_random_c4, c4_edges, sizeof c4_edges / sizeof c4_edges[0], 0);
  for (size_t i = 0; i < sizeof c4_rows / sizeof c4_rows[0]; i++)
    for (int combo = 0; combo < 4; combo++)
      for (int outvar = 0; outvar <= 5; outvar++) {
        conv_case t;
        edge_shape(&t, &c4_rows[i]);
        t.z_x = pick_zx(cin(combo)), t.xpat = t.wpat = 0, t.outvar = outvar, t.bmode = 0, t.mnmode = 0;
        run_conv(combo, &t);
      }
}

/* A random shape the channel-lane variant takes: group 1, C a multiple of 4; any stride, dilation and
   kernel, output channel counts on both sides of the 16- and 64-channel blocks. */
static void conv_random_cl(conv_case *t, int combo) {
  for (;;) {
    const int64_t C = 4 * irand(1, 12), M = irand(0, 2) ? irand(1, 20) : irand(40, 140);
    static const int64_t ks[] = {1, 1, 2, 3, 3, 3, 5, 7};
    const int64_t KH = ks[irand(0, 7)], KW = irand(0, 3) ? KH : ks[irand(0, 7)];
    const int64_t sh = irand(1, 3), sw = irand(0, 2) ? sh : irand(1, 3);
    const int64_t dh = irand(0, 3) ? 1 : 2, dw = irand(0, 3) ? dh : irand(1, 2);
    const int64_t H = irand(1, 24), W = irand(0, 5) ? irand(1, 24) : irand(60, 140);
    const int64_t pt = irand(0, (KH - 1) * dh), pb = irand(0, (KH - 1) * dh);
    const int64_t pl = irand(0, (KW - 1) * dw), pr = irand(0, (KW - 1) * dw);
    if (conv_shape(t, irand(1, 2), C, H, W, M, KH, KW, sh, sw, pt, pl, pb, pr, dh, dw, 1)) break;
  }
  t->z_x = pick_zx(cin(combo));
  t->xpat = t->wpat = 0;
  t->outvar = (int)irand(0, 4);
  t->bmode = irand(0, 12) == 0 ? (int)irand(1, 2) : 0;
  t->mnmode = irand(0, 3) == 0;
}

/* ResNet's layers (3x3 at 56..7, 3x3 and 1x1 stride 2), one pixel, a 1-row image, one-sided pads, a long
   reduction, 16 / 17 / 64 / 65 output channels, pixel counts around the 48-pixel chunk and the 16-pixel
   transpose, two images */
static const conv_edge cl_edges[] = {
    /* N  C    H   W    M   KH KW sh sw pt pl pb pr dh dw g */
    {1, 64, 56, 56, 64, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1},   {1, 256, 14, 14, 256, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1},
    {1, 512, 7, 7, 512, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1},   {1, 64, 56, 56, 128, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 1},
    {1, 128, 28, 28, 256, 1, 1, 2, 2, 0, 0, 0, 0, 1, 1, 1}, {1, 4, 1, 1, 5, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1},
    {1, 4, 1, 70, 7, 1, 3, 1, 1, 0, 1, 0, 1, 1, 1, 1},      {1, 8, 6, 6, 16, 3, 3, 1, 1, 2, 0, 0, 2, 1, 1, 1},
    {2, 16, 9, 9, 17, 3, 3, 2, 1, 1, 1, 1, 1, 1, 1, 1},     {1, 12, 13, 14, 64, 3, 3, 1, 1, 2, 2, 2, 2, 2, 2, 1},
    {1, 4, 5, 200, 65, 2, 2, 1, 1, 0, 0, 0, 0, 1, 1, 1},    {1, 1000, 3, 3, 5, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1},
    {1, 8, 7, 7, 33, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1, 1},      {1, 8, 4, 12, 20, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1},
    {1, 8, 7, 7, 70, 7, 7, 2, 2, 3, 3, 3, 3, 1, 1, 1},      {1, 4, 9, 9, 3, 3, 3, 3, 3, 0, 0, 0, 0, 1, 1, 1},
    /* unpadded, every window inside: an NHWC u8 input read in place (ResNet's 1x1/2; rows and columns
       left over at the bottom and right; a 3x3 and a 2x2 dilated) */
    {1, 64, 56, 56, 128, 1, 1, 2, 2, 0, 0, 0, 0, 1, 1, 1},  {1, 256, 14, 14, 512, 1, 1, 2, 2, 0, 0, 0, 0, 1, 1, 1},
    {2, 16, 8, 9, 20, 1, 1, 2, 2, 0, 0, 0, 0, 1, 1, 1},     {1, 8, 6, 7, 20, 3, 3, 1, 1, 0, 0, 0, 0, 1, 1, 1},
    {1, 12, 9, 10, 17, 2, 2, 2, 3, 0, 0, 0, 0, 2, 2, 1},
};
static void conv_suite_cl(void) { conv_suite_of(conv_random_cl, cl_edges, sizeof cl_edges / sizeof cl_edges[0], 1); }

/* fixed edge shapes: pointwise over more than one panel, the 7x7 stride-2 stem, K = 1 .. 3, K > 2000,
   rows wider than a panel, single pixels, padding on every side, depthwise, dilations, tall and narrow */
static const conv_edge panel_edges[] = {
    {1, 16, 9, 9, 24, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1, 1},      {2, 5, 17, 13, 7, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1, 1},
    {1, 3, 30, 30, 16, 7, 7, 2, 2, 3, 3, 3, 3, 1, 1, 1},     {1, 1, 5, 6, 3, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1, 1},
    {1, 2, 5, 6, 3, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1, 1},        {1, 1, 4, 9, 5, 1, 3, 1, 1, 0, 1, 0, 1, 1, 1, 1},
    {1, 250, 4, 5, 9, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1},      {1, 8, 3, 130, 13, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1},
    {1, 4, 2, 200, 6, 1, 5, 1, 3, 0, 2, 0, 2, 1, 1, 1},      {1, 6, 1, 1, 5, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1, 1},
    {1, 6, 1, 1, 5, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1},        {1, 4, 6, 6, 8, 3, 3, 1, 1, 2, 0, 0, 2, 1, 1, 1},
    {1, 12, 11, 11, 12, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 12},   {1, 12, 11, 11, 24, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 12},
    {1, 4, 13, 14, 6, 3, 3, 1, 1, 2, 2, 2, 2, 2, 2, 2},      {1, 7, 64, 1, 9, 3, 1, 1, 1, 1, 0, 1, 0, 1, 1, 1},
    {1, 3, 8, 64, 7, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1},       {1, 3, 8, 65, 7, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1},
    {1, 2, 3, 40, 3, 1, 40, 1, 1, 0, 0, 0, 0, 1, 1, 1},      {1, 16, 14, 14, 64, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1},
    {1, 1, 9, 9, 3, 2, 2, 1, 1, 1, 1, 1, 1, 1, 1, 1},        {1, 3, 6, 70, 4, 1, 35, 1, 1, 0, 0, 0, 0, 1, 1, 1},
    /* tall and narrow: up to 64 row segments per panel times a wide kernel (the untabulated masks) */
    {1, 3, 70, 1, 5, 3, 5, 1, 1, 1, 2, 1, 2, 1, 1, 1},     {1, 2, 66, 2, 4, 3, 7, 1, 1, 1, 3, 1, 3, 1, 1, 1},
    {1, 2, 90, 3, 4, 3, 9, 2, 2, 1, 4, 1, 4, 1, 1, 1},
    /* panels ending 1 .. 4 pixels past a whole vector (avx512vnni: those pixels as dot products along
       K): 3, 19, 49, 82 = 64 + 18, 196 = 3 x 64 + 4 pixels; K below, at and past 64, a partial last
       chunk of 16 k4 groups; channels not a multiple of 4; groups; two images */
    {1, 7, 1, 19, 9, 1, 3, 1, 1, 0, 1, 0, 1, 1, 1, 1},     {1, 40, 3, 1, 13, 3, 1, 1, 1, 1, 0, 1, 0, 1, 1, 1},
    {1, 130, 7, 7, 21, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1},   {2, 16, 14, 14, 19, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1},
    {1, 6, 41, 2, 5, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1},     {1, 24, 7, 7, 18, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 3},
    {1, 64, 14, 14, 7, 1, 1, 2, 2, 0, 0, 0, 0, 1, 1, 1},   {1, 9, 9, 9, 10, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1, 1},
};

static void conv_suite(void) {
  conv_suite_of(conv_random, panel_edges, sizeof panel_edges / sizeof panel_edges[0], 0);
}

/* A random stride-2 shape of the panel variant's window packer (x86_q8_panel.h, z_pack_s2w: KW >= 3,
   6 + (KW - 1) dw <= 15, KH <= 16, OW >= 16) or just outside it (OW 12 .. 15, KW 11, dw one too
   large): odd and even W and OW, left / right padding 0 .. 3, row strides 1 .. 3, groups, channels per
   group not a multiple of 4 (K % 4 = 0 .. 3). */
static void conv_random_s2w(conv_case *t, int combo) {
  for (;;) {
    const int64_t group = irand(0, 4) ? 1 : irand(2, 3), cg = irand(1, 7), mg = irand(1, 20);
    const int64_t dw = irand(0, 3) ? 1 : irand(2, 4), KW = irand(0, 9) ? irand(3, 9 / dw + 2) : irand(1, 2);
    const int64_t KH = irand(0, 9) ? irand(1, 7) : irand(14, 17), dh = irand(0, 3) ? 1 : 2, sh = irand(1, 3);
    const int64_t pl = irand(0, 3), pr = irand(0, 3), pt = irand(0, (KH - 1) * dh), pb = irand(0, (KH - 1) * dh);
    const int64_t H = irand(1, 10), W = irand(0, 3) ? irand(30, 140) : irand(20, 40);
    if (pl <= (KW - 1) * dw && pr <= (KW - 1) * dw &&
        conv_shape(t, irand(1, 2), cg * group, H, W, mg * group, KH, KW, sh, 2, pt, pl, pb, pr, dh, dw, group))
      break;
  }
  random_case_params(t, combo);
}
/* the stem's rows (112 outputs: vectors never split, a panel across two rows), OW = 15 / 16 / 17 / 33
   (vectors split at every lane count), the widest kernel (KW 10; 11 and dw 2 x KW 6 fall back),
   K % 4 = 1, 2, 3, 0 (1 .. 4 channels of 7x7), padding 0 .. 3 on either side, a 16-row kernel, groups,
   two images */
static const conv_edge s2w_edges[] = {
    /* N  C   H   W    M   KH KW sh sw pt pl pb pr dh dw g */
    {1, 3, 9, 224, 64, 7, 7, 2, 2, 3, 3, 3, 3, 1, 1, 1},   {1, 1, 7, 29, 5, 7, 7, 2, 2, 3, 3, 3, 3, 1, 1, 1},
    {1, 2, 7, 31, 5, 7, 7, 2, 2, 3, 3, 3, 3, 1, 1, 1},     {1, 3, 7, 33, 6, 7, 7, 2, 2, 3, 3, 3, 3, 1, 1, 1},
    {1, 4, 5, 65, 9, 7, 7, 2, 2, 3, 0, 3, 2, 1, 1, 1},     {1, 3, 6, 40, 7, 3, 10, 1, 2, 1, 3, 1, 0, 1, 1, 1},
    {1, 3, 6, 40, 7, 3, 11, 1, 2, 1, 3, 1, 0, 1, 1, 1},    {1, 2, 5, 50, 7, 3, 5, 2, 2, 1, 2, 1, 1, 2, 2, 1},
    {1, 2, 5, 50, 7, 3, 6, 2, 2, 1, 2, 1, 1, 2, 2, 1},     {1, 5, 20, 37, 4, 16, 3, 1, 2, 3, 1, 0, 0, 1, 1, 1},
    {2, 6, 8, 46, 9, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 3},     {1, 7, 4, 48, 13, 1, 4, 1, 2, 0, 0, 0, 3, 1, 1, 1},
    {1, 3, 3, 67, 8, 3, 8, 3, 2, 2, 1, 2, 2, 1, 1, 1},     {1, 2, 4, 44, 5, 5, 3, 1, 2, 2, 3, 2, 3, 1, 4, 1},
};
static void conv_suite_s2w(void) {
  conv_suite_of(conv_random_s2w, s2w_edges, sizeof s2w_edges / sizeof s2w_edges[0], 0);
}

/* The suites, by the rows' shape predicate: a panel variant also takes the stride-2 windows. */
static void test_fc(void **s) { begin_group(s), fc_suite(); }
static void test_conv(void **s) { begin_group(s), conv_suite(); }
static void test_conv_s2w(void **s) { begin_group(s), conv_suite_s2w(); }
static void test_conv_c4(void **s) { begin_group(s), conv_suite_c4(); }
static void test_conv_cl(void **s) { begin_group(s), conv_suite_cl(); }

/* Every row of the catalogue for x86_64 is run by one of the kernel tests. */
static void test_rows_claimed(void **state) {
  (void)state;
  assert_true(Q_NROWS > 0);
  for (int i = 0; i < Q_NROWS; i++)
    if (q_row_suite(&q_rows[i]) == Q_SUITE_NONE) fail_msg("%s: no kernel test runs this row", q_rows[i].name);
}

/* ---- the packers ---------------------------------------------------------------------------------- */
static void test_pack_size(void **state) {
  (void)state;
  static const int64_t chs[] = {1, 15, 16, 17, 64, 100}, Ks[] = {1, 2, 3, 4, 5, 9, 1000};
  for (int a = 0; a < 6; a++)
    for (int b = 0; b < 7; b++) {
      const int64_t ch = chs[a], K = Ks[b], k4 = (K + 3) / 4 * 4, k2 = (K + 1) / 2 * 2, np = (ch + 15) / 16 * 16;
      assert_int_equal(qllc_pack_size(QLLC_LAYOUT_ROWS_K4, ch, K), ch * k4);
      assert_int_equal(qllc_pack_size(QLLC_LAYOUT_K4N16, ch, K), np * k4);
      assert_int_equal(qllc_pack_size(QLLC_LAYOUT_ROWS_K2, ch, K), ch * k2 * 2);
      assert_int_equal(qllc_pack_size(QLLC_LAYOUT_ROWS_K2_SPLIT, ch, K), 2 * ch * k2 * 2);
      assert_int_equal(qllc_pack_size(QLLC_LAYOUT_K2N16, ch, K), np * k2 * 2);
      assert_int_equal(qllc_pack_size(QLLC_LAYOUT_K2N16_SPLIT, ch, K), 2 * np * k2 * 2);
    }
}

static void test_pack_w8(void **state) {
  (void)state;
  static const int64_t chs[] = {1, 3, 16, 17, 40}, Ks[] = {1, 2, 3, 4, 5, 7, 8, 13};
  for (int a = 0; a < 5; a++)
    for (int b = 0; b < 8; b++) {
      const int64_t ch = chs[a], K = Ks[b];
      int8_t *w = malloc((size_t)(ch * K));
      for (int64_t i = 0; i < ch * K; i++) w[i] = (int8_t)irand(-128, 127);
      /* ROWS_K4: row c, then its K weights, then zeros to a multiple of 4, in storage order */
      size_t sz = qllc_pack_size(QLLC_LAYOUT_ROWS_K4, ch, K);
      int8_t *p = malloc(sz);
      memset(p, 0x5a, sz);
      qllc_pack_w8(QLLC_LAYOUT_ROWS_K4, p, w, ch, K);
      size_t at = 0;
      for (int64_t c = 0; c < ch; c++)
        for (int64_t k = 0; k < (K + 3) / 4 * 4; k++, at++) assert_int_equal(p[at], k < K ? w[c * K + k] : 0);
      assert_int_equal(at, sz);
      free(p);
      /* K4N16: block of 16 channels, group of 4 k, channel in the block, k in the group */
      sz = qllc_pack_size(QLLC_LAYOUT_K4N16, ch, K);
      p = malloc(sz);
      memset(p, 0x5a, sz);
      qllc_pack_w8(QLLC_LAYOUT_K4N16, p, w, ch, K);
      at = 0;
      for (int64_t nb = 0; nb < (ch + 15) / 16; nb++)
        for (int64_t g = 0; g < (K + 3) / 4; g++)
          for (int64_t j = 0; j < 16; j++)
            for (int64_t t = 0; t < 4; t++, at++) {
              const int64_t c = nb * 16 + j, k = g * 4 + t;
              assert_int_equal(p[at], c < ch && k < K ? w[c * K + k] : 0);
            }
      assert_int_equal(at, sz);
      free(p), free(w);
    }
}

static void test_pack_bias8(void **state) {
  (void)state;
  for (int i = 0; i < 200; i++) {
    const int64_t ch = irand(1, 9), K = i < 20 ? irand(60000, 70000) : irand(1, 300);
    int8_t *w = malloc((size_t)(ch * K));
    int32_t *b = ivec(ch), *bc = ivec(ch), *bu = ivec(ch);
    const int wp = i % 4;
    for (int64_t j = 0; j < ch * K; j++) w[j] = (int8_t)(wp == 0 ? irand(-128, 127) : wp == 1 ? 127 : wp == 2 ? -128 : (j & 1) ? 127 : -128);
    for (int64_t c = 0; c < ch; c++) b[c] = (int32_t)(i % 3 == 0 ? (irand(0, 1) ? INT32_MAX : INT32_MIN) : irand(INT32_MIN, INT32_MAX));
    qllc_pack_bias8(bc, b, w, ch, K, 1);
    qllc_pack_bias8(bu, b, w, ch, K, 0);
    for (int64_t c = 0; c < ch; c++) {
      int64_t s = 0;
      for (int64_t k = 0; k < K; k++) s += w[c * K + k];
      const int64_t e = (int64_t)b[c] - 128 * s; /* exact, then reduced modulo 2^32 */
      int64_t r = e % 4294967296LL;
      if (r < 0) r += 4294967296LL;
      if (r >= 2147483648LL) r -= 4294967296LL;
      assert_int_equal(bc[c], (int32_t)r);
      assert_int_equal(bu[c], b[c]);
    }
    free(w), free(b), free(bc), free(bu);
  }
}

int main(void) {
  static const struct CMUnitTest fixed[] = {
      cmocka_unit_test(test_pack_size), cmocka_unit_test(test_pack_w8), cmocka_unit_test(test_pack_bias8),
      cmocka_unit_test(test_rows_claimed),
  };
  /* one test per suite of each variant's predicate */
  static q_group groups[Q_NROWS];
  static struct CMUnitTest tests[sizeof fixed / sizeof fixed[0] + 2 * Q_NROWS];
  static char s2w[Q_NROWS][128];
  int nt = 0;
  for (size_t i = 0; i < sizeof fixed / sizeof fixed[0]; i++) tests[nt++] = fixed[i];
  const int ng = q_groups(Q_SUITE_Q8, groups);
  for (int k = 0; k < ng; k++) {
    const char *fits = groups[k].first->fits_id;
    snprintf(s2w[k], sizeof s2w[k], "%s (stride-2 windows)", groups[k].label);
    const struct CMUnitTest t = {groups[k].label,
                                 !strcmp(fits, "fc")      ? test_fc
                                 : !strcmp(fits, "c4")    ? test_conv_c4
                                 : !strcmp(fits, "cl")    ? test_conv_cl
                                                          : test_conv,
                                 NULL, NULL, &groups[k]};
    tests[nt++] = t;
    if (!strcmp(fits, "panel")) {
      const struct CMUnitTest t2 = {s2w[k], test_conv_s2w, NULL, NULL, &groups[k]};
      tests[nt++] = t2;
    }
  }
  return _cmocka_run_group_tests("q_x86_q8_test", tests, (size_t)nt, NULL, NULL);
}
