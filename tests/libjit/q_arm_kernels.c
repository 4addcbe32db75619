/* tests/libjit/q_arm_kernels.c: every aarch64 row of the kernel catalogue (targets/aarch64/kernels/
 * variants.def: arm_q8.c dotprod and i8mm, arm_q16.c neon 16x8 and int16 x int16, arm_f32.h neon float
 * FC and Conv) bit for bit against its reference (q_layers.c; the float rows: fc.c and conv.c on
 * f32_cases.h's table, shared with f32_x86_test.c), with weights and bias packed by the row's packer
 * (src/lower/pack.c / pack16.c) into a scratch of the row's size. Cross-compiled with aarch64-linux-gnu-gcc and run under
 * qemu-aarch64 -cpu max by q_arm_test.sh (no cmocka there: q_arm_shim/cmocka.h). Inputs, weights and
 * parameter arrays end at a PROT_NONE page (a read past them faults); outputs and scratch carry a guard
 * zone. A row whose features the CPU lacks (getauxval hwcaps) is reported SKIPPED, and the driver exits
 * 77 when every one was skipped. The 8-bit cases and their runs are q_x86_q8_test.c's (q_q8_cases.h).
 * Usage: q_arm_kernels [ISA]... (default: all; neon16 names the 16-bit neon rows, f32 the float rows). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>

#include "../../targets/aarch64/kernels/variants.h"
#include "kernels_f32.h"
#include "kernels_q.h"
#include "lower/pack.h"

#define Q_TEST_SEED 0x6a09e667f3bcc908ULL
#include "q_x86_test_util.h"
#define Q_CATALOG_DEF "../../targets/aarch64/kernels/variants.def"
#define Q_CATALOG_HOST_HAS
#include "q_q8_cases.h"
#include "f32_cases.h"

#ifndef HWCAP_ASIMDDP
#define HWCAP_ASIMDDP (1 << 20)
#endif
#ifndef HWCAP2_I8MM
#define HWCAP2_I8MM (1 << 13)
#endif

/* 1 when the CPU has every feature of the comma-separated list (LLVM's names), by its hwcaps. */
static int q_host_has(const char *features) {
  for (const char *p = features; *p;) {
    const size_t n = strcspn(p, ",");
    int ok = 0;
    if (n == 4 && !strncmp(p, "neon", 4)) ok = 1;
    else if (n == 7 && !strncmp(p, "dotprod", 7)) ok = (getauxval(AT_HWCAP) & HWCAP_ASIMDDP) != 0;
    else if (n == 4 && !strncmp(p, "i8mm", 4)) ok = (getauxval(AT_HWCAP2) & HWCAP2_I8MM) != 0;
    if (!ok) return 0;
    p += n + (p[n] == ',');
  }
  return 1;
}

static const q_group *G; /* the variant under test */
static const char *gname;

/* ---- 8-bit FC --------------------------------------------------------------------------------------- */
static void run_fc(int combo, const fc_case *t) {
  if (G->row[combo]) q8_run_fc(G->row[combo], t);
}

static void fc_suite(void) {
  n_out = n_inside = 0;
  static const int64_t Ms[] = {1, 2, 3, 4, 5, 6, 7, 11, 13, 63, 64, 65, 130};
  static const int64_t Ns[] = {1, 2, 3, 8, 15, 16, 17, 24, 31, 33, 63, 64, 65, 100, 129};
  static const int64_t Ks[] = {1, 2, 3, 4, 5, 7, 8, 9, 12, 15, 16, 17, 20, 31, 64, 100, 255, 1023};
  int cases = 0;
  for (int i = 0; i < 120; i++) {
    const int combo = i % 4;
    fc_case t = {Ms[irand(0, 12)], Ns[irand(0, 14)], Ks[irand(0, 17)], pick_zx(cin(combo)), 0, 0,
                 (int)irand(0, 4), i % 13 == 0 ? 1 + (int)irand(0, 1) : 0, 0};
    if (t.M * t.N * t.K > 1000000) t.M = 3;
    run_fc(combo, &t), cases++;
  }
  for (int combo = 0; combo < 4; combo++) {
    fc_case a = {3, 37, 2050, pick_zx(cin(combo)), 0, 0, 0, 0, 0}, b = {1, 70, 4099, pick_zx(cin(combo)), 0, 0, 2, 0, 0};
    run_fc(combo, &a), run_fc(combo, &b), cases += 2;
  }
  cases += fc_extremes(run_fc);
  print_message("fc %s: %d cases, %lld outputs, %lld inside the clamp range\n", gname, cases,
                (long long)n_out, (long long)n_inside);
  if (n_inside * 4 < n_out) fail_msg("fc %s: too few outputs inside the clamp range", gname);
}

/* ---- 8-bit Conv ---------------------------------------------------------------------------------------- */
static void run_conv(int combo, const conv_case *t) {
  if (G->row[combo]) q8_run_conv(G->row[combo], t);
}

static void conv_suite(void) {
  n_out = n_inside = 0;
  int cases = 0;
  for (int i = 0; i < 100; i++) {
    conv_case t;
    conv_random_hw(&t, i % 4, 20);
    run_conv(i % 4, &t), cases++;
  }
  /* pointwise over more than one panel, the 7x7/2 stem, K = 1 .. 3 and K = 4 (mod 8) (the i8mm half
     step), K > 2000, rows wider than a panel, single pixels, padding on every side, depthwise, dilation */
  static const conv_edge e[] = {
      {1, 16, 9, 9, 24, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1, 1},    {2, 5, 17, 13, 7, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1, 1},
      {1, 3, 30, 30, 16, 7, 7, 2, 2, 3, 3, 3, 3, 1, 1, 1},   {1, 1, 5, 6, 3, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1, 1},
      {1, 2, 5, 6, 3, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1, 1},      {1, 4, 9, 9, 5, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1, 1},
      {1, 12, 9, 9, 6, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1, 1},     {1, 250, 4, 5, 9, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1},
      {1, 8, 3, 130, 13, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1},   {1, 6, 1, 1, 5, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1},
      {1, 4, 6, 6, 8, 3, 3, 1, 1, 2, 0, 0, 2, 1, 1, 1},      {1, 12, 11, 11, 12, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 12},
      {1, 4, 13, 14, 6, 3, 3, 1, 1, 2, 2, 2, 2, 2, 2, 2},    {1, 16, 14, 14, 64, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1},
      {1, 130, 7, 7, 21, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1},   {1, 24, 7, 7, 18, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 3},
      {1, 64, 14, 14, 7, 1, 1, 2, 2, 0, 0, 0, 0, 1, 1, 1},   {1, 20, 9, 9, 10, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1, 1},
  };
  for (size_t i = 0; i < sizeof e / sizeof e[0]; i++)
    for (int combo = 0; combo < 4; combo++) {
      conv_case t;
      edge_shape(&t, &e[i]);
      t.z_x = pick_zx(cin(combo));
      t.xpat = t.wpat = (int)irand(0, 4);
      t.outvar = (int)irand(0, 4), t.bmode = 0, t.mnmode = 0;
      run_conv(combo, &t), cases++;
    }
  print_message("conv %s: %d cases, %lld outputs, %lld inside the clamp range\n", gname, cases,
                (long long)n_out, (long long)n_inside);
  if (n_inside * 4 < n_out) fail_msg("conv %s: too few outputs inside the clamp range", gname);
}

/* ---- int16 inputs (neon16): 16x8 and int16 x int16 --------------------------------------------------- */
/* w16: int16 weights (else int8); xpat/wpat: fill patterns (1 all min, 2 all max: the largest products,
   for the exact int32 runs); d: conv shape (NULL: FC of M x N x K). */
static void run_q16(int w16, const int64_t *d, int64_t M, int64_t N, int64_t K, int xpat, int wpat) {
  const int conv = d != NULL;
  const q_vrow *r = G->row[w16];
  if (!r || r->conv != conv) return;
  const int64_t ch = conv ? d[4] : N, KK = conv ? d[1] / d[15] * d[7] * d[8] : K;
  const int64_t nx = conv ? d[0] * d[1] * d[2] * d[3] : M * KK, nw = ch * KK, ny = conv ? d[0] * d[4] * d[5] * d[6] : M * N;
  const int32_t wlo = w16 ? -32768 : -128, whi = w16 ? 32767 : 127;
  int32_t *xv = ivec(nx), *wv = ivec(nw);
  fill(xv, nx, -32768, 32767, xpat);
  fill(wv, nw, wlo, whi, wpat);
  gbuf gx, gw, gb, gm, gn, gwp;
  int16_t *x = galloc(&gx, (size_t)nx * 2);
  void *w = galloc(&gw, (size_t)nw * (w16 ? 2 : 1));
  int64_t *bias = galloc(&gb, (size_t)ch * 8);
  int32_t *m = galloc(&gm, (size_t)ch * 4), *n = galloc(&gn, (size_t)ch * 4);
  for (int64_t i = 0; i < nx; i++) x[i] = (int16_t)xv[i];
  for (int64_t i = 0; i < nw; i++)
    if (w16) ((int16_t *)w)[i] = (int16_t)wv[i];
    else ((int8_t *)w)[i] = (int8_t)wv[i];
  const int32_t z_x = (int32_t)irand(-32768, 32767);
  for (int64_t c = 0; c < ch; c++) {
    int64_t ws = 0;
    for (int64_t k = 0; k < KK; k++) ws += wv[c * KK + k];
    bias[c] = irand(-(1 << 30), 1 << 30) - (int64_t)z_x * ws;
  }
  pick_mn(m, n, ch, acc_scale(xv, nx, wv, nw, KK, z_x), 0);
  int32_t z_y, lo, hi;
  pick_out(K_I16, (int)irand(0, 4), &z_y, &lo, &hi);
  int16_t *wp = galloc(&gwp, qllc_pack_size(r->layout, ch, KK));
  int64_t *bias_c = malloc((size_t)ch * 8);
  const qllc_pack_src src = {w, !w16, 0, bias, n, z_y, ch, KK, conv ? d[7] * d[8] : 1};
  r->pack(&src, wp, bias_c);
  const qllc_layer_geom lg = conv ? q_conv_geom(d) : q_fc_geom(M, N, KK);
  const size_t ssz = (size_t)r->scratch(&lg);
  uint8_t *scratch = gzone(ssz), *gotb = gzone((size_t)ny * 2);
  int16_t *want = calloc((size_t)ny, 2), *got = (int16_t *)gotb;
  if (conv) {
    r->conv_ref(want, x, w, bias, m, n, d, z_x, z_y, lo, hi, NULL);
    r->conv_fn(got, x, wp, bias_c, m, n, d, z_x, z_y, lo, hi, scratch);
  } else {
    r->fc_ref(want, x, w, bias, m, n, M, N, K, z_x, z_y, lo, hi, NULL);
    r->fc_fn(got, x, wp, bias_c, m, n, M, N, K, z_x, z_y, lo, hi, scratch);
  }
  for (int64_t i = 0; i < ny; i++) {
    n_out++;
    n_inside += want[i] > lo && want[i] < hi;
    if (got[i] != want[i]) {
      fail_msg("%s: M=%lld N=%lld K=%lld pat %d/%d: [%lld] got %d want %d", r->name, (long long)M, (long long)ch, (long long)KK, xpat, wpat, (long long)i,
               got[i], want[i]);
      break;
    }
  }
  if (!guard_ok(gotb, (size_t)ny * 2)) fail_msg("q16: wrote past y");
  if (!guard_ok(scratch, ssz)) fail_msg("q16: wrote past the scratch");
  free(xv), free(wv), free(scratch), free(want), free(gotb), free(bias_c);
  gfree(&gx), gfree(&gw), gfree(&gb), gfree(&gm), gfree(&gn), gfree(&gwp);
}

static void q16_suites(void) {
  n_out = n_inside = 0;
  int cases = 0;
  static const int64_t Ms[] = {1, 2, 3, 5, 64, 65};
  static const int64_t Ns[] = {1, 3, 15, 16, 17, 33, 64};
  static const int64_t Ks[] = {1, 2, 3, 7, 8, 9, 16, 17, 100, 513, 1025};
  for (int i = 0; i < 60; i++) {
    int64_t M = Ms[irand(0, 5)], N = Ns[irand(0, 6)], K = Ks[irand(0, 10)];
    if (M * N * K > 400000) M = 2;
    run_q16(i & 1, NULL, M, N, K, (int)irand(0, 4), (int)irand(0, 4)), cases++;
  }
  /* the largest products over long reductions: every exact int32 run full, both signs */
  for (int w16 = 0; w16 < 2; w16++)
    for (int pat = 1; pat <= 3; pat++) {
      run_q16(w16, NULL, 3, 17, 4099, pat, pat == 3 ? 3 : 1), cases++;
      const int64_t d[16] = {1, 600, 3, 3, 5, 3, 3, 3, 3, 1, 1, 1, 1, 1, 1, 1}; /* K = 5400 */
      run_q16(w16, d, 0, 0, 0, pat, pat == 3 ? 3 : 1), cases++;
    }
  static const conv_edge e[] = {
      {1, 16, 9, 9, 24, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1, 1}, {2, 5, 17, 13, 7, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1},
      {1, 3, 30, 30, 16, 7, 7, 2, 2, 3, 3, 3, 3, 1, 1, 1}, {1, 1, 5, 6, 3, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1, 1},
      {1, 12, 11, 11, 12, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 12}, {1, 4, 13, 14, 6, 3, 3, 1, 1, 2, 2, 2, 2, 2, 2, 2},
      {1, 24, 7, 7, 18, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 3},  {1, 8, 3, 70, 9, 3, 3, 1, 2, 1, 1, 1, 1, 1, 1, 1},
  };
  for (size_t i = 0; i < sizeof e / sizeof e[0]; i++)
    for (int w16 = 0; w16 < 2; w16++) {
      conv_case t;
      edge_shape(&t, &e[i]);
      run_q16(w16, t.d, 0, 0, 0, (int)irand(0, 4), (int)irand(0, 4)), cases++;
    }
  print_message("%s: %d cases, %lld outputs, %lld inside the clamp range\n", gname, cases, (long long)n_out,
                (long long)n_inside);
  if (n_inside * 4 < n_out) fail_msg("%s: too few outputs inside the clamp range", gname);
}

static int wanted(int argc, char **argv, const char *name) {
  if (argc < 2) return 1;
  for (int i = 1; i < argc; i++)
    if (strcmp(argv[i], name) == 0) return 1;
  return 0;
}

int main(int argc, char **argv) {
  int ran = 0, skipped = 0;
  /* the 8-bit panel and FC rows, and the 16-bit ones (fc and conv2d together, by their ISA) */
  static q_group g8[Q_NROWS], g16[Q_NROWS];
  const int n8 = q_groups(Q_SUITE_Q8, g8), n16 = q_groups(Q_SUITE_Q16, g16);
  for (int i = 0; i < Q_NROWS; i++)
    if (q_row_suite(&q_rows[i]) != Q_SUITE_Q8 && q_row_suite(&q_rows[i]) != Q_SUITE_Q16 &&
        q_row_suite(&q_rows[i]) != Q_SUITE_F32) {
      printf("FAIL %s: no suite here runs this row\n", q_rows[i].name);
      return 1;
    }
  for (int k = 0; k < n8 + n16; k++) {
    G = k < n8 ? &g8[k] : &g16[k - n8];
    gname = G->label;
    const char *isa = G->first->isa;
    if (!wanted(argc, argv, isa) && !(k >= n8 && wanted(argc, argv, "neon16"))) continue;
    int runs = 1;
    for (int c = 0; c < 4; c++) runs &= !G->row[c] || q_row_runs(G->row[c]);
    if (!runs) {
      printf("SKIPPED %s: needs %s, which this CPU lacks (hwcaps)\n", gname, G->first->features);
      skipped++;
      continue;
    }
    if (k >= n8) q16_suites();
    else if (G->first->conv) conv_suite();
    else fc_suite();
    ran++;
  }
  /* the float rows, each on f32_cases.h's table */
  for (int i = 0; i < Q_NROWS; i++) {
    const q_vrow *r = &q_rows[i];
    if (q_row_suite(r) != Q_SUITE_F32 || !wanted(argc, argv, "f32")) continue;
    if (!q_row_runs(r)) {
      printf("SKIPPED %s: needs %s, which this CPU lacks (hwcaps)\n", r->name, r->features);
      skipped++;
      continue;
    }
    const int before = shim_failures, cases = f32_run_row(r);
    print_message("%s: %d cases, %d failures\n", r->name, cases, shim_failures - before);
    ran++;
  }
  printf("%d suites run, %d skipped, %d failures\n", ran, skipped, shim_failures);
  if (shim_failures) return 1;
  return ran ? 0 : 77;
}
