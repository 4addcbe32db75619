/* tests/libjit/q_eltwise_test.c: quantized add/sub/mul with rescale and numpy broadcasting, requantize
 * (strided rows, as Concat uses it) and clamp, for i8, u8 and i16, bit for bit against references
 * written here. Add/Sub: the contract's single rounding of a two-term sum with a shared shift,
 * computed in __int128 with an explicit floor division (not a shift); Mul and requantize: src/quant's
 * qllc_requant_apply. Broadcast patterns: every subset of dimensions broadcast in a and/or b, ranks 1
 * to 4, odd sizes; extremes: all min/max inputs with zero points at both ends, the i16 product
 * 65535 * 65535 times m = 2^31 - 1 (its rounding needs more than 64 bits); the edges of the 8-bit add/sub's
 * int32 form (multipliers around its 16-bit split, n around 16 and 47, z_y inside the shift or after it). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "kernels_q.h"
#include "quant/quant.h"

#define Q_TEST_SEED 0x2545f4914f6cdd1dULL
#include "q_test_util.h"


/* floor(v / 2^n) by division, independent of the kernels' arithmetic shifts. */
static __int128 floor_div_pow2(__int128 v, int32_t n) {
  __int128 d = (__int128)1 << n, q = v / d;
  if (v % d != 0 && v < 0) q -= 1;
  return q;
}

static int64_t n_total, n_inside;

typedef enum { OP_ADD, OP_SUB, OP_MUL } binop;
static const char *opname[] = {"add", "sub", "mul"};

static void call_bin(binop op, kind k, void *y, const void *a, const void *b, int64_t rank, const int64_t *dims,
                     const int64_t *as, const int64_t *bs, int32_t za, int32_t ma, int32_t zb, int32_t mb, int32_t n,
                     int32_t zy, int32_t lo, int32_t hi) {
  /* mul: ma is m, mb unused */
  switch (op) {
  case OP_ADD:
    if (k == K_I8) qllc_k_add_i8_i8_i8(y, a, b, rank, dims, as, bs, za, ma, zb, mb, n, zy, lo, hi);
    if (k == K_U8) qllc_k_add_u8_u8_u8(y, a, b, rank, dims, as, bs, za, ma, zb, mb, n, zy, lo, hi);
    if (k == K_I16) qllc_k_add_i16_i16_i16(y, a, b, rank, dims, as, bs, za, ma, zb, mb, n, zy, lo, hi);
    break;
  case OP_SUB:
    if (k == K_I8) qllc_k_sub_i8_i8_i8(y, a, b, rank, dims, as, bs, za, ma, zb, mb, n, zy, lo, hi);
    if (k == K_U8) qllc_k_sub_u8_u8_u8(y, a, b, rank, dims, as, bs, za, ma, zb, mb, n, zy, lo, hi);
    if (k == K_I16) qllc_k_sub_i16_i16_i16(y, a, b, rank, dims, as, bs, za, ma, zb, mb, n, zy, lo, hi);
    break;
  case OP_MUL:
    if (k == K_I8) qllc_k_mul_i8_i8_i8(y, a, b, rank, dims, as, bs, za, zb, ma, n, zy, lo, hi);
    if (k == K_U8) qllc_k_mul_u8_u8_u8(y, a, b, rank, dims, as, bs, za, zb, ma, n, zy, lo, hi);
    if (k == K_I16) qllc_k_mul_i16_i16_i16(y, a, b, rank, dims, as, bs, za, zb, ma, n, zy, lo, hi);
    break;
  }
}

/* The reference of one element. */
static int32_t ref_bin(binop op, int32_t a, int32_t b, int32_t za, int32_t ma, int32_t zb, int32_t mb, int32_t n,
                       int32_t zy, int32_t lo, int32_t hi) {
  __int128 v;
  if (op == OP_MUL) {
    v = (__int128)qllc_requant_apply((int64_t)(a - za) * (b - zb), ma, n);
  } else {
    __int128 t = (__int128)(a - za) * ma + (op == OP_ADD ? 1 : -1) * (__int128)(b - zb) * mb;
    v = floor_div_pow2(t + (n > 0 ? (__int128)1 << (n - 1) : 0), n);
  }
  v += zy;
  n_total++;
  if (v > lo && v < hi) n_inside++;
  return clampi(v, lo, hi);
}

/* One broadcast case: y has dims[rank]; a (b) has dimension d of size 1 when bit d of amask (bmask)
   is set, and is read with stride 0 there. pattern: 0 random, 1 all min, 2 all max. */
static void run_bin(binop op, kind k, int64_t rank, const int64_t *dims, unsigned amask, unsigned bmask, int pa,
                    int pb, int32_t za, int32_t zb, int32_t ma, int32_t mb, int32_t n, int32_t zy, int32_t lo,
                    int32_t hi) {
  int64_t ad[4], bd[4], as[4], bs[4], na = 1, nb = 1, ny = 1;
  for (int64_t d = 0; d < rank; d++) {
    ad[d] = (amask >> d) & 1 ? 1 : dims[d], bd[d] = (bmask >> d) & 1 ? 1 : dims[d];
    na *= ad[d], nb *= bd[d], ny *= dims[d];
  }
  for (int64_t d = rank - 1, sa = 1, sb = 1; d >= 0; d--) {
    as[d] = ad[d] == 1 ? 0 : sa, bs[d] = bd[d] == 1 ? 0 : sb;
    sa *= ad[d], sb *= bd[d];
  }
  int32_t *av = ivec(na), *bv = ivec(nb);
  for (int64_t i = 0; i < na; i++) av[i] = pa == 0 ? (int32_t)irand(kmin(k), kmax(k)) : pa == 1 ? kmin(k) : kmax(k);
  for (int64_t i = 0; i < nb; i++) bv[i] = pb == 0 ? (int32_t)irand(kmin(k), kmax(k)) : pb == 1 ? kmin(k) : kmax(k);
  void *a = tbuf(k, av, na), *b = tbuf(k, bv, nb), *y = calloc((size_t)ny, 2);
  call_bin(op, k, y, a, b, rank, dims, as, bs, za, ma, zb, mb, n, zy, lo, hi);
  int64_t idx[4] = {0, 0, 0, 0};
  for (int64_t pos = 0; pos < ny; pos++) {
    int64_t ia = 0, ib = 0;
    for (int64_t d = 0; d < rank; d++) {
      ia = ia * ad[d] + (ad[d] == 1 ? 0 : idx[d]);
      ib = ib * bd[d] + (bd[d] == 1 ? 0 : idx[d]);
    }
    int32_t want = ref_bin(op, av[ia], bv[ib], za, ma, zb, mb, n, zy, lo, hi), got = tget(k, y, pos);
    if (got != want)
      fail_msg("%s_%s rank %lld masks %u/%u at %lld: a=%d b=%d za=%d ma=%d zb=%d mb=%d n=%d zy=%d [%d,%d]: got %d "
               "want %d",
               opname[op], kname[k], (long long)rank, amask, bmask, (long long)pos, av[ia], bv[ib], za, ma, zb, mb, n,
               zy, lo, hi, got, want);
    for (int64_t d = rank - 1; d >= 0; d--) {
      if (++idx[d] < dims[d]) break;
      idx[d] = 0;
    }
  }
  free(av), free(bv), free(a), free(b), free(y);
}

static const int64_t sizes[] = {1, 3, 7, 17, 2, 5};

/* Random scales turned into multipliers the way the quantizer does (qllc_requant_make_shared for
   add/sub, qllc_requant_make for mul). */
static void pick_params(binop op, kind k, int32_t *ma, int32_t *mb, int32_t *n) {
  double sa = 0.001 + (double)irand(0, 1000) / 1000.0, sb = 0.001 + (double)irand(0, 1000) / 1000.0;
  double sy = 0.01 + (double)irand(0, 1000) / 500.0;
  if (op == OP_MUL) {
    qllc_requant r;
    double range = (double)(kmax(k) - kmin(k));
    assert_int_equal(qllc_requant_make(sa * sb / (sy * range / 8), &r, NULL), QLLC_OK);
    *ma = r.m, *mb = 0, *n = r.n;
  } else {
    double M[2] = {sa / sy, sb / sy};
    int32_t ms[2];
    assert_int_equal(qllc_requant_make_shared(M, 2, ms, n, NULL), QLLC_OK);
    *ma = ms[0], *mb = ms[1];
  }
}

static void test_binary_broadcast(void **state) {
  (void)state;
  for (int op = 0; op < 3; op++)
    for (int k = 0; k < 3; k++) {
      n_total = n_inside = 0;
      for (int t = 0; t < 120; t++) {
        int64_t rank = 1 + t % 4, dims[4];
        for (int64_t d = 0; d < rank; d++) dims[d] = sizes[irand(0, 5)];
        unsigned amask = (unsigned)irand(0, (1 << rank) - 1), bmask = (unsigned)irand(0, (1 << rank) - 1);
        if (t % 5 == 0) amask = 0;
        if (t % 7 == 0) bmask = (1u << rank) - 1; /* b is a scalar */
        int32_t ma, mb, n;
        pick_params((binop)op, (kind)k, &ma, &mb, &n);
        int32_t za = (int32_t)irand(kmin(k), kmax(k)), zb = (int32_t)irand(kmin(k), kmax(k));
        int32_t zy = (int32_t)irand(kmin(k), kmax(k)), lo = kmin(k), hi = kmax(k);
        if (t % 3 == 1) lo = zy; /* fused relu */
        run_bin((binop)op, (kind)k, rank, dims, amask, bmask, 0, 0, za, zb, ma, mb, n, zy, lo, hi);
      }
      /* directed: [N][C][H][W] with a per-channel b [1][C][1][1], a scalar a, all-ones dims, rank 0 */
      int64_t d4[4] = {2, 3, 5, 7}, d1[4] = {1, 1, 1, 1};
      int32_t ma, mb, n;
      pick_params((binop)op, (kind)k, &ma, &mb, &n);
      run_bin((binop)op, (kind)k, 4, d4, 0, 13, 0, 0, 3, -2, ma, mb, n, 1, kmin(k), kmax(k));
      run_bin((binop)op, (kind)k, 4, d4, 15, 0, 0, 0, 3, -2, ma, mb, n, 1, kmin(k), kmax(k));
      run_bin((binop)op, (kind)k, 4, d4, 6, 9, 0, 0, 3, -2, ma, mb, n, 1, kmin(k), kmax(k));
      run_bin((binop)op, (kind)k, 4, d1, 0, 0, 0, 0, 3, -2, ma, mb, n, 1, kmin(k), kmax(k));
      run_bin((binop)op, (kind)k, 0, d1, 0, 0, 0, 0, 3, -2, ma, mb, n, 1, kmin(k), kmax(k));
      if (n_inside * 4 < n_total)
        fail_msg("%s_%s: only %lld of %lld outputs inside the clamp", opname[op], kname[k], (long long)n_inside,
                 (long long)n_total);
    }
}

static void test_binary_extremes(void **state) {
  (void)state;
  int64_t dims[2] = {3, 7};
  for (int op = 0; op < 3; op++)
    for (int k = 0; k < 3; k++)
      for (int pa = 1; pa <= 2; pa++)
        for (int pb = 1; pb <= 2; pb++)
          for (int zi = 0; zi < 4; zi++) {
            int32_t za = (zi & 1) ? kmax(k) : kmin(k), zb = (zi & 2) ? kmax(k) : kmin(k);
            static const int32_t ns[] = {0, 1, 16, 31, 47, 62};
            for (int ni = 0; ni < 6; ni++)
              for (int mi = 0; mi < 3; mi++) {
                int32_t m = mi == 0 ? INT32_MAX : mi == 1 ? (1 << 30) : 1;
                run_bin((binop)op, (kind)k, 2, dims, 0, 2, pa, pb, za, zb, m, INT32_MAX - mi, ns[ni], zi * 5 - 7,
                        kmin(k), kmax(k));
              }
          }
  /* the i16 product at its largest, (-32768 - 32767)^2 = 65535^2, with m = 2^31 - 1 and n = 62: the
     rounding constant pushes acc * m + 2^61 past 2^63 */
  int16_t a[1] = {-32768}, b[1] = {-32768}, y[1];
  int64_t d1[1] = {1}, s1[1] = {1};
  for (int32_t n = 40; n <= 62; n++) {
    qllc_k_mul_i16_i16_i16(y, a, b, 1, d1, s1, s1, 32767, 32767, INT32_MAX, n, -100, -32768, 32767);
    assert_int_equal(y[0], clampi((__int128)qllc_requant_apply(4294836225LL, INT32_MAX, n) - 100, -32768, 32767));
  }
}

/* Ties of add: (a - z_a) * 2^30 + (b - z_b) * 2^30 with n = 31 is a half when the sum is odd: rounds up. */
static void test_add_ties(void **state) {
  (void)state;
  int8_t a[4] = {1, -1, -3, 2}, b[4] = {0, 0, 0, 1}, y[4];
  int64_t d1[1] = {4}, s1[1] = {1};
  qllc_k_add_i8_i8_i8(y, a, b, 1, d1, s1, s1, 0, 1 << 30, 0, 1 << 30, 31, 0, -128, 127);
  assert_int_equal(y[0], 1);  /* 0.5 -> 1 */
  assert_int_equal(y[1], 0);  /* -0.5 -> 0 */
  assert_int_equal(y[2], -1); /* -1.5 -> -1 */
  assert_int_equal(y[3], 2);  /* 1.5 -> 2 */
  qllc_k_sub_i8_i8_i8(y, a, b, 1, d1, s1, s1, 0, 1 << 30, 0, 1 << 30, 31, 0, -128, 127);
  assert_int_equal(y[3], 1); /* (2 - 1) / 2 = 0.5 -> 1 */
}

/* Add/sub at the edges of the 8-bit kernels' int32 form (q_ops.c, qk_sum32: n >= 16, zero points in the
   type's range, |z_y| < 2^30, z_y inside or after the shift) and of its int64 fallback: multipliers
   around the 16-bit split (0, 1, 2^15, 2^16 - 1, 2^16, 2^31 - 2^15, 2^31 - 1, negative), n on both sides
   of 16 and of 47 (where the shift stops at 31), zero points at the type's ends and outside it, z_y
   beyond 2^30, narrow clamps; rows shorter and longer than a vector register, same shape and broadcast
   (a scalar, b scalar, b per row, b repeated rows). The reference is ref_bin's __int128 sum. */
static void test_addsub_int32_edges(void **state) {
  (void)state;
  static const int32_t ms[] = {0,          1,          2,          0x7fff,     0x8000,      0xffff,
                               0x10000,    0x10001,    0x18000,    0x7fff8000, 0x7fff7fff,  INT32_MAX,
                               1 << 30,    1288490171, 2030770137, -1,         INT32_MIN,   -0x18000};
  static const int32_t ns[] = {0, 1, 14, 15, 16, 17, 18, 30, 31, 32, 45, 46, 47, 48, 62};
  static const int64_t lens[] = {1, 15, 16, 17, 63, 64, 65, 200, 1000};
  const int nm = (int)(sizeof ms / sizeof ms[0]), nn = (int)(sizeof ns / sizeof ns[0]);
  n_total = n_inside = 0;
  int c = 0;
  for (int op = 0; op < 2; op++)
    for (int k = 0; k < 3; k++)
      for (int ni = 0; ni < nn; ni++)
        for (int mi = 0; mi < nm; mi++, c++) {
          int32_t n = ns[ni], ma = ms[mi], mb = ms[(mi * 7 + ni) % nm];
          if (c % 3 == 0) mb = ma; /* both the same (ties of sums) */
          /* small multipliers scaled to the shift, so that outputs land inside the clamp */
          if (c % 4 == 1 && n >= 1 && n <= 31) ma = (int32_t)(((1u << (n - 1)) + (uint32_t)irand(0, 1 << (n - 1))) / 3);
          int32_t lo = kmin((kind)k), hi = kmax((kind)k);
          int32_t za = c % 5 == 0 ? lo : c % 5 == 1 ? hi : (int32_t)irand(lo, hi);
          int32_t zb = c % 7 == 0 ? hi : c % 7 == 1 ? lo : (int32_t)irand(lo, hi);
          if (c % 23 == 0) za = hi + 1; /* outside the type: the int64 form */
          if (c % 29 == 0) zb = lo - 1;
          int32_t zy = c % 6 == 0 ? lo : c % 6 == 1 ? hi : (int32_t)irand(lo, hi);
          if (c % 11 == 0) zy = (1 << 30) - 1 - (int32_t)irand(0, 1) * 2; /* the largest z_y of the int32 form */
          if (c % 13 == 0) zy = -(1 << 30);                               /* the int64 form */
          if (c % 17 == 0) zy = (int32_t)irand(-(1 << 14), 1 << 14);       /* z_y inside the shift or not */
          int32_t alo = lo, ahi = hi;
          if (c % 5 == 2) alo = zy < lo ? lo : zy > hi ? hi : zy; /* fused relu */
          if (c % 9 == 4) alo = lo + 3, ahi = lo + 3;
          if (c % 9 == 5) alo = hi - 1;
          /* shapes: [len] same shape, b scalar, a scalar; [3][len] with b [3][1] or [1][len] */
          int64_t len = lens[c % 9], d2[2] = {3, len};
          int shape = (c / 9) % 5, pa = c % 31 == 0 ? 1 : c % 37 == 0 ? 2 : 0, pb = c % 41 == 0 ? 2 : 0;
          if (shape < 3)
            run_bin((binop)op, (kind)k, 1, &len, shape == 2 ? 1 : 0, shape == 1 ? 1 : 0, pa, pb, za, zb, ma, mb, n,
                    zy, alo, ahi);
          else
            run_bin((binop)op, (kind)k, 2, d2, 0, shape == 3 ? 2 : 1, pa, pb, za, zb, ma, mb, n, zy, alo, ahi);
        }
  if (n_inside * 5 < n_total)
    fail_msg("only %lld of %lld outputs inside the clamp", (long long)n_inside, (long long)n_total);
}

/* requantize over rows x cols with row strides; elements between rows are left alone. */
static void test_requantize(void **state) {
  (void)state;
  for (int k = 0; k < 3; k++) {
    n_total = n_inside = 0;
    for (int t = 0; t < 60; t++) {
      int64_t rows = sizes[t % 4], cols = sizes[(t / 4) % 4], xs = cols + t % 3, ys = cols + (t / 3) % 3;
      int32_t *xv = ivec(rows * xs);
      for (int64_t i = 0; i < rows * xs; i++)
        xv[i] = t >= 48 ? (t & 1 ? kmin((kind)k) : kmax((kind)k)) : (int32_t)irand(kmin((kind)k), kmax((kind)k));
      int32_t z_x = t % 4 == 0 ? kmin((kind)k) : t % 4 == 1 ? kmax((kind)k) : (int32_t)irand(kmin((kind)k), kmax((kind)k));
      int32_t z_y = (int32_t)irand(kmin((kind)k), kmax((kind)k)), lo = kmin((kind)k), hi = kmax((kind)k);
      if (t % 5 == 2) lo = z_y;
      qllc_requant r;
      assert_int_equal(qllc_requant_make(0.05 + (double)irand(0, 1000) / 400.0, &r, NULL), QLLC_OK);
      void *x = tbuf((kind)k, xv, rows * xs), *y = malloc((size_t)(rows * ys) * ksize((kind)k));
      memset(y, 0x5a, (size_t)(rows * ys) * ksize((kind)k));
      void *sentinel = malloc((size_t)(rows * ys) * ksize((kind)k));
      memcpy(sentinel, y, (size_t)(rows * ys) * ksize((kind)k));
      if (k == K_I8) qllc_k_requantize_i8_i8(y, x, rows, cols, ys, xs, z_x, r.m, r.n, z_y, lo, hi);
      if (k == K_U8) qllc_k_requantize_u8_u8(y, x, rows, cols, ys, xs, z_x, r.m, r.n, z_y, lo, hi);
      if (k == K_I16) qllc_k_requantize_i16_i16(y, x, rows, cols, ys, xs, z_x, r.m, r.n, z_y, lo, hi);
      for (int64_t i = 0; i < rows; i++)
        for (int64_t j = 0; j < ys; j++) {
          int32_t got = tget((kind)k, y, i * ys + j);
          if (j >= cols) {
            assert_int_equal(got, tget((kind)k, sentinel, i * ys + j));
            continue;
          }
          __int128 v = (__int128)qllc_requant_apply(xv[i * xs + j] - z_x, r.m, r.n) + z_y;
          n_total++;
          if (v > lo && v < hi) n_inside++;
          if (got != clampi(v, lo, hi))
            fail_msg("requantize_%s case %d [%lld][%lld] x=%d z_x=%d m=%d n=%d z_y=%d [%d,%d]: got %d want %d",
                     kname[k], t, (long long)i, (long long)j, xv[i * xs + j], z_x, r.m, r.n, z_y, lo, hi, got,
                     clampi(v, lo, hi));
        }
      free(xv), free(x), free(y), free(sentinel);
    }
    assert_true(n_inside * 3 > n_total);
  }
}

static void test_clamp(void **state) {
  (void)state;
  for (int k = 0; k < 3; k++) {
    int64_t count = kmax((kind)k) - kmin((kind)k) + 1;
    int32_t *xv = ivec(count);
    for (int64_t i = 0; i < count; i++) xv[i] = kmin((kind)k) + (int32_t)i;
    void *x = tbuf((kind)k, xv, count), *y = malloc((size_t)count * ksize((kind)k));
    int32_t bounds[3][2] = {{kmin((kind)k), kmax((kind)k)}, {0, kmax((kind)k)}, {kmin((kind)k) + 3, kmin((kind)k) + 3}};
    for (int b = 0; b < 3; b++) {
      int32_t lo = bounds[b][0], hi = bounds[b][1];
      if (k == K_I8) qllc_k_clamp_i8_i8(y, x, count, lo, hi);
      if (k == K_U8) qllc_k_clamp_u8_u8(y, x, count, lo, hi);
      if (k == K_I16) qllc_k_clamp_i16_i16(y, x, count, lo, hi);
      for (int64_t i = 0; i < count; i++) assert_int_equal(tget((kind)k, y, i), clampi(xv[i], lo, hi));
    }
    free(xv), free(x), free(y);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_binary_broadcast), cmocka_unit_test(test_binary_extremes),
      cmocka_unit_test(test_add_ties),         cmocka_unit_test(test_addsub_int32_edges),
      cmocka_unit_test(test_requantize),
      cmocka_unit_test(test_clamp),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
