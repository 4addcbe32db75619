/* tests/libjit/q_x86_test_util.h: helpers shared by the kernel-variant tests (q_x86_q8_test.c,
 * q_x86_dw_test.c, q_x86_q16_test.c, q_amx_test.c, and q_arm_kernels.c through the cmocka shim): buffers
 * against an inaccessible page, output / scratch guard zones, the input / weight fill patterns, and the
 * 8-bit tests' type combinations, requantization parameters, operands and comparison. Includes
 * q_test_util.h: define Q_TEST_SEED before including. */
#ifndef QLLC_Q_X86_TEST_UTIL_H
#define QLLC_Q_X86_TEST_UTIL_H
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cmocka.h>

#include "q_test_util.h"

/* ---- buffers against an inaccessible page ----------------------------------------------------------- */
typedef struct gbuf {
  void *base;
  size_t len;
} gbuf;
/* n bytes ending at a PROT_NONE page (at_start: starting right after one); there is one on each side. */
static Q_UNUSED void *galloc_at(gbuf *g, size_t n, int at_start) {
  const size_t pg = (size_t)sysconf(_SC_PAGESIZE), body = (n + pg - 1) / pg * pg;
  g->len = body + 2 * pg;
  g->base = mmap(NULL, g->len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  assert_true(g->base != MAP_FAILED);
  assert_int_equal(mprotect(g->base, pg, PROT_NONE), 0);
  assert_int_equal(mprotect((char *)g->base + pg + body, pg, PROT_NONE), 0);
  return at_start ? (char *)g->base + pg : (char *)g->base + pg + body - n;
}
static Q_UNUSED void *galloc(gbuf *g, size_t n) { return galloc_at(g, n, 0); }
static Q_UNUSED void gfree(gbuf *g) { munmap(g->base, g->len); }

/* ---- guard zones -------------------------------------------------------------------------------------- */
#define GUARD 256
/* Output / scratch buffers: n bytes then a GUARD zone of 0xA5 (checked by guard_ok). 64-byte aligned. */
static Q_UNUSED uint8_t *gzone(size_t n) {
  uint8_t *p = aligned_alloc(64, (n + GUARD + 63) / 64 * 64);
  memset(p, 0xA5, n + GUARD);
  return p;
}
static Q_UNUSED int guard_ok(const uint8_t *p, size_t n) {
  for (size_t i = n; i < n + GUARD; i++)
    if (p[i] != 0xA5) return 0;
  return 1;
}

/* ---- values ------------------------------------------------------------------------------------------- */
static Q_UNUSED int64_t ilog2(uint64_t v) {
  int64_t l = 0;
  while (v >>= 1) l++;
  return l;
}
/* Fills v with a pattern: 0 random, 1 all min, 2 all max, 3 alternating min/max, 4 random with many
   extremes (draws from the generator only for patterns 0 and 4). */
static Q_UNUSED void fill(int32_t *v, int64_t n, int32_t lo, int32_t hi, int pat) {
  for (int64_t i = 0; i < n; i++) {
    int64_t r = pat == 4 ? irand(0, 3) : 3;
    v[i] = pat == 0 ? (int32_t)irand(lo, hi) : pat == 1 ? lo : pat == 2 ? hi : pat == 3 ? ((i & 1) ? hi : lo)
         : r == 0 ? lo : r == 1 ? hi : (int32_t)irand(lo, hi);
  }
}

/* ---- the 8-bit Conv / FC tests (q_x86_q8_test.c, q_x86_dw_test.c) -------------------------------------- */
/* combos: 0 i8->i8, 1 i8->u8, 2 u8->i8, 3 u8->u8 */
static Q_UNUSED kind cin(int combo) { return combo < 2 ? K_I8 : K_U8; }
static Q_UNUSED kind cout_(int combo) { return combo & 1 ? K_U8 : K_I8; }


/* Multipliers. mode 0: most channels put the typical accumulator (scale est) around 2^6 output units;
   some have n = 0, n = 62, m = 0, m = 2^31 - 1 or a random n, which mostly clamp or round tiny values.
   1: all typical; 2: all n = 0 (m = 0 .. 3); 3: all n = 62, m = 2^31 - 1. */
static Q_UNUSED void pick_mn(int32_t *m, int32_t *n, int64_t ch, double est, int mode) {
  for (int64_t c = 0; c < ch; c++) {
    int sel = mode == 1 ? 0 : mode == 2 ? 1 : mode == 3 ? 2 : (int)irand(0, 9);
    m[c] = (int32_t)irand(1 << 30, INT32_MAX);
    int64_t nn = 31 + ilog2((uint64_t)(est < 1 ? 1 : est)) - 6 + irand(-1, 2);
    if (sel == 1) nn = 0, m[c] = (int32_t)irand(0, 3);
    if (sel == 2) nn = 62, m[c] = INT32_MAX;
    if (sel == 3) nn = irand(0, 62), m[c] = (int32_t)irand(0, INT32_MAX);
    if (sel == 4 && mode == 0) m[c] = 0;
    n[c] = (int32_t)(nn < 0 ? 0 : nn > 62 ? 62 : nn);
  }
}

/* Output zero point and clamp: 0 full range, 1 relu [z_y, max], 2 random sub-range, 3/4 z_y at an end,
   5 [min, z_y] (a clamp from above alone). */
static Q_UNUSED void pick_out(kind ko, int variant, int32_t *z_y, int32_t *lo, int32_t *hi) {
  *z_y = (int32_t)(variant == 3 ? kmin(ko) : variant == 4 ? kmax(ko) : irand(kmin(ko), kmax(ko)));
  *lo = kmin(ko), *hi = kmax(ko);
  if (variant == 1) *lo = *z_y;
  if (variant == 5) *hi = *z_y;
  if (variant == 2) {
    int32_t a = (int32_t)irand(kmin(ko), kmax(ko)), b = (int32_t)irand(kmin(ko), kmax(ko));
    *lo = a < b ? a : b, *hi = a < b ? b : a;
  }
}

/* The folded bias the quantizer would give: q_b - z_x * sum_k w (bmode 0), or the largest / smallest
   bias that keeps every partial sum of the scalar int32 accumulator in range (bmode 1 / 2). */
static Q_UNUSED void make_bias(int32_t *bias, const int32_t *wv, int64_t ch, int64_t K, int32_t z_x, int bmode) {
  const int64_t room = INT32_MAX - K * 255 * 128;
  for (int64_t c = 0; c < ch; c++) {
    int64_t ws = 0;
    for (int64_t k = 0; k < K; k++) ws += wv[c * K + k];
    int64_t b = irand(-(1 << 20), 1 << 20) - (int64_t)z_x * ws;
    if (bmode == 1) b = room - irand(0, 3);
    if (bmode == 2) b = -room + irand(0, 3);
    if (b > room) b = room;
    if (b < -room) b = -room;
    bias[c] = (int32_t)b;
  }
}

/* Rough scale of an accumulator: sqrt(K) * rms(x - z_x) * rms(w) + |bias-free part|. */
static Q_UNUSED double acc_scale(const int32_t *xv, int64_t nx, const int32_t *wv, int64_t nw, int64_t K,
                                 int32_t z_x) {
  double sx = 0, sw = 0;
  for (int64_t i = 0; i < nx; i++) sx += (double)(xv[i] - z_x) * (xv[i] - z_x);
  for (int64_t i = 0; i < nw; i++) sw += (double)wv[i] * wv[i];
  sx = nx ? sx / nx : 0, sw = nw ? sw / nw : 0;
  double e = 1;
  for (double v = sx * sw * (double)K; e * e < v;) e *= 1.41421356;
  return e + (1 << 19);
}

/* The operands of one 8-bit FC / Conv case, made from the generator in one order (the tests' cases
   depend on it): x, nx values of kind ki with fill pattern xpat (x_at_start: right after an inaccessible
   page, else ending at one), w, ch x K int8 weights with pattern wpat, both also as int32 (xv, wv); per
   channel the folded bias (make_bias mode bmode), m and n (pick_mn mode mnmode); z_y, lo and hi of kind
   ko (pick_out variant outvar). q8_operands_free releases them. */
typedef struct q8_operands {
  int32_t *xv, *wv;
  void *x;
  int8_t *w;
  int32_t *bias, *m, *n;
  int32_t z_y, lo, hi;
  gbuf gx, gw, gb, gm, gn;
} q8_operands;
static Q_UNUSED void q8_operands_make(q8_operands *o, kind ki, kind ko, int64_t nx, int64_t ch, int64_t K,
                                      int32_t z_x, int xpat, int wpat, int bmode, int mnmode, int outvar,
                                      int x_at_start) {
  const int64_t nw = ch * K;
  o->xv = ivec(nx), o->wv = ivec(nw);
  fill(o->xv, nx, kmin(ki), kmax(ki), xpat);
  fill(o->wv, nw, -128, 127, wpat);
  o->x = galloc_at(&o->gx, (size_t)nx, x_at_start);
  o->w = galloc(&o->gw, (size_t)nw);
  o->bias = galloc(&o->gb, (size_t)ch * 4);
  o->m = galloc(&o->gm, (size_t)ch * 4), o->n = galloc(&o->gn, (size_t)ch * 4);
  for (int64_t i = 0; i < nx; i++) ((uint8_t *)o->x)[i] = (uint8_t)o->xv[i];
  for (int64_t i = 0; i < nw; i++) o->w[i] = (int8_t)o->wv[i];
  make_bias(o->bias, o->wv, ch, K, z_x, bmode);
  pick_mn(o->m, o->n, ch, acc_scale(o->xv, nx, o->wv, nw, K, z_x), mnmode);
  pick_out(ko, outvar, &o->z_y, &o->lo, &o->hi);
}
static Q_UNUSED void q8_operands_free(q8_operands *o) {
  free(o->xv), free(o->wv);
  gfree(&o->gx), gfree(&o->gw), gfree(&o->gb), gfree(&o->gm), gfree(&o->gn);
}

/* Compares n outputs of kind ko with the reference's; adds them to *n_out and those strictly inside
   (lo, hi) to *n_inside (the clamp did not decide them). Returns the first index that differs, or -1. */
static Q_UNUSED int64_t q8_compare(kind ko, const void *got, const void *want, int64_t n, int32_t lo,
                                   int32_t hi, int64_t *n_out, int64_t *n_inside) {
  for (int64_t i = 0; i < n; i++) {
    const int32_t e = tget(ko, want, i);
    ++*n_out;
    *n_inside += e > lo && e < hi;
    if (tget(ko, got, i) != e) return i;
  }
  return -1;
}

/* An input zero point: either end of the type, or random. */
static Q_UNUSED int32_t pick_zx(kind ki) {
  const int v = (int)irand(0, 3);
  return v == 0 ? kmin(ki) : v == 1 ? kmax(ki) : (int32_t)irand(kmin(ki), kmax(ki));
}

#endif
