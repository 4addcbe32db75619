/* tests/libjit/q_catalog.h: the kernel catalogue's rows of one architecture (targets/<arch>/kernels/
 * variants.def) for the kernel tests, which run every row they claim instead of a hand-written list:
 * each row's function and its reference through one signature per op (void pointers for the element
 * kinds), its shape predicate, its layout's packer and its scratch size (src/lower/pack.h, the functions
 * the lowering packs and sizes through). A row whose CPU features the host lacks is SKIPPED, never
 * passed. The host's features: the compiler's (--cpu native, qllc_lower_has_features), or, where the
 * test runs without LLVM (q_arm_kernels.c under qemu), the includer's q_host_has with
 * Q_CATALOG_HOST_HAS defined.
 *
 * Include after the architecture's variants.h, kernels_q.h and lower/pack.h, with Q_CATALOG_DEF the
 * path of the architecture's variants.def. Plain C (q_arm_kernels.c is cross-compiled). */
#ifndef QLLC_Q_CATALOG_H
#define QLLC_Q_CATALOG_H
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#ifndef Q_CATALOG_HOST_HAS
#include "llvmgen/llvmgen.h"
#include "lower/lower.h"
#endif

/* Conv: d = N C H W M OH OW KH KW sh sw pt pl dh dw group; FC: M N K. The reference ignores s. */
typedef void q_conv_gfn(void *y, const void *x, const void *w, const void *b, const int32_t *m, const int32_t *n,
                        const int64_t *d, int32_t z_x, int32_t z_y, int32_t lo, int32_t hi, uint8_t *s);
/* An ALT_NHWC conv row with its activation layouts (x_nhwc, y_nhwc: 0 NCHW, 1 NHWC). */
typedef void q_conv_lfn(void *y, const void *x, const void *w, const void *b, const int32_t *m, const int32_t *n,
                        const int64_t *d, int32_t z_x, int32_t z_y, int32_t lo, int32_t hi, uint8_t *s, int64_t xl,
                        int64_t yl);
typedef void q_fc_gfn(void *y, const void *x, const void *w, const void *b, const int32_t *m, const int32_t *n,
                      int64_t M, int64_t N, int64_t K, int32_t z_x, int32_t z_y, int32_t lo, int32_t hi, uint8_t *s);

/* A float FC row (kernels_variants.h, QLLC_VARIANT_FC_F32) and its reference, qllc_k_fc_f32_f32_f32 (whose
   weights are w[K][N], where the row's are packed by its packer). */
typedef void q_fcf_fn(float *y, const float *x, const float *w, const float *b, int64_t M, int64_t N, int64_t K,
                      float lo, float hi, uint8_t *s);
/* A float Conv row (QLLC_VARIANT_CONV_F32); its reference is qllc_k_conv2d_f32_f32_f32. */
typedef void q_convf_fn(float *y, const float *x, const float *w, const float *b, int64_t N, int64_t C, int64_t H,
                        int64_t W, int64_t M, int64_t OH, int64_t OW, int64_t KH, int64_t KW, int64_t sh, int64_t sw,
                        int64_t pt, int64_t pl, int64_t dh, int64_t dw, int64_t group, float lo, float hi,
                        uint8_t *s);

typedef struct q_vrow {
  const char *name, *ref_name, *kstem, *in, *w, *out, *isa, *features, *fits_id;
  int conv, esize, alt;
  qllc_layout layout;
  qllc_fits_fn *fits;
  qllc_packer_fn *pack;
  qllc_vscratch_fn *scratch;
  q_conv_gfn *conv_fn, *conv_ref; /* conv rows (conv_fn of an ALT_NHWC row: NCHW in and out) */
  q_fc_gfn *fc_fn, *fc_ref;       /* fc rows */
  q_conv_lfn *conv_lay;           /* an ALT_NHWC conv row with its layouts; NULL for other rows */
  q_fcf_fn *fcf_fn;               /* a float fc row (its reference: qllc_k_fc_f32_f32_f32) */
  q_convf_fn *convf_fn;           /* a float conv row (its reference: qllc_k_conv2d_f32_f32_f32) */
} q_vrow;

#define Q_CAT_STR_(x) #x
#define Q_CAT_STR(x) Q_CAT_STR_(x)
#define Q_CAT_D d[0], d[1], d[2], d[3], d[4], d[5], d[6], d[7], d[8], d[9], d[10], d[11], d[12], d[13], d[14], d[15]
/* one wrapper of the variant and one of its reference per row (an ALT_NHWC row: the variant with NCHW
   layouts, and q_catl_ with the layouts as arguments) */
#define Q_CAT_NCHW_NONE
#define Q_CAT_NCHW_ALT
#define Q_CAT_NCHW_NARROW
#define Q_CAT_NCHW_MEASURED
#define Q_CAT_NCHW_ALT_MEASURED
#define Q_CAT_NCHW_ALT_NARROW
#define Q_CAT_NCHW_ALT_NHWC , 0, 0
#define Q_CAT_NCHW_NHWC_MEASURED , 0, 0
#define Q_CAT_LAY_NONE(fn, TI, TW, TB, TO)
#define Q_CAT_LAY_ALT(fn, TI, TW, TB, TO)
#define Q_CAT_LAY_NARROW(fn, TI, TW, TB, TO)
#define Q_CAT_LAY_MEASURED(fn, TI, TW, TB, TO)
#define Q_CAT_LAY_ALT_MEASURED(fn, TI, TW, TB, TO)
#define Q_CAT_LAY_ALT_NARROW(fn, TI, TW, TB, TO)
#define Q_CAT_LAY_ALT_NHWC(fn, TI, TW, TB, TO)                                                                   \
  static void q_catl_##fn(void *y, const void *x, const void *w, const void *b, const int32_t *m,              \
                          const int32_t *n, const int64_t *d, int32_t z_x, int32_t z_y, int32_t lo, int32_t hi, \
                          uint8_t *s, int64_t xl, int64_t yl) {                                               \
    fn((TO *)y, (const TI *)x, (const TW *)w, (const TB *)b, m, n, Q_CAT_D, z_x, z_y, lo, hi, s, xl, yl);     \
  }
#define Q_CAT_LAYFN_NONE(fn) NULL
#define Q_CAT_LAYFN_ALT(fn) NULL
#define Q_CAT_LAYFN_NARROW(fn) NULL
#define Q_CAT_LAYFN_MEASURED(fn) NULL
#define Q_CAT_LAYFN_ALT_MEASURED(fn) NULL
#define Q_CAT_LAYFN_ALT_NARROW(fn) NULL
#define Q_CAT_LAYFN_ALT_NHWC(fn) (q_catl_##fn)
#define Q_CAT_LAYFN_NHWC_MEASURED(fn) (q_catl_##fn)
#define Q_CAT_LAY_NHWC_MEASURED Q_CAT_LAY_ALT_NHWC
#define Q_CAT_WRAP_conv2d(fn, ref, TI, TW, TB, TO, TR, flags)                                                   \
  Q_CAT_LAY_##flags(fn, TI, TW, TB, TO)                                                                        \
  static void q_catv_##fn(void *y, const void *x, const void *w, const void *b, const int32_t *m,              \
                          const int32_t *n, const int64_t *d, int32_t z_x, int32_t z_y, int32_t lo, int32_t hi, \
                          uint8_t *s) {                                                                       \
    fn((TO *)y, (const TI *)x, (const TW *)w, (const TB *)b, m, n, Q_CAT_D, z_x, z_y, lo, hi, s Q_CAT_NCHW_##flags); \
  }                                                                                                            \
  static void q_catr_##fn(void *y, const void *x, const void *w, const void *b, const int32_t *m,              \
                          const int32_t *n, const int64_t *d, int32_t z_x, int32_t z_y, int32_t lo, int32_t hi, \
                          uint8_t *s) {                                                                       \
    (void)s;                                                                                                   \
    ref((TO *)y, (const TI *)x, (const TR *)w, (const TB *)b, m, n, Q_CAT_D, z_x, z_y, lo, hi);               \
  }
#define Q_CAT_WRAP_fc(fn, ref, TI, TW, TB, TO, TR, flags)                                                             \
  static void q_catv_##fn(void *y, const void *x, const void *w, const void *b, const int32_t *m,              \
                          const int32_t *n, int64_t M, int64_t N, int64_t K, int32_t z_x, int32_t z_y,         \
                          int32_t lo, int32_t hi, uint8_t *s) {                                               \
    fn((TO *)y, (const TI *)x, (const TW *)w, (const TB *)b, m, n, M, N, K, z_x, z_y, lo, hi, s);             \
  }                                                                                                            \
  static void q_catr_##fn(void *y, const void *x, const void *w, const void *b, const int32_t *m,              \
                          const int32_t *n, int64_t M, int64_t N, int64_t K, int32_t z_x, int32_t z_y,         \
                          int32_t lo, int32_t hi, uint8_t *s) {                                               \
    (void)s;                                                                                                   \
    ref((TO *)y, (const TI *)x, (const TR *)w, (const TB *)b, m, n, M, N, K, z_x, z_y, lo, hi);               \
  }
/* The wrappers by op and input kind: the quantized rows' above; a float row is called directly */
#define Q_CAT_KIND_i8 q
#define Q_CAT_KIND_u8 q
#define Q_CAT_KIND_i16 q
#define Q_CAT_KIND_f32 f
#define Q_CAT_WRAP_fc_q Q_CAT_WRAP_fc
#define Q_CAT_WRAP_conv2d_q Q_CAT_WRAP_conv2d
#define Q_CAT_WRAP_fc_f(fn, ref, TI, TW, TB, TO, TR, flags)
#define Q_CAT_WRAP_conv2d_f(fn, ref, TI, TW, TB, TO, TR, flags)
#define Q_CAT_PASTE_(a, b, c) a##b##_##c
#define Q_CAT_PASTE(a, b, c) Q_CAT_PASTE_(a, b, c)
#define QVARIANT(kstem, op, in, w, out, isa, features, fits, layout, scratch, flags)                            \
  qllc_fits_fn qllc_fits_##fits;                                                                               \
  qllc_packer_fn qllc_packer_##layout;                                                                         \
  qllc_vscratch_fn qllc_vscratch_##scratch;                                                                    \
  Q_CAT_PASTE(Q_CAT_WRAP_, op, Q_CAT_KIND_##in)(qllc_k_##kstem##_##in##_##w##_##out##__##isa, qllc_k_##op##_##in##_##w##_##out, QLLC_VT_##in,   \
                  QLLC_VW_##in, QLLC_VB_##in, QLLC_VT_##out, QLLC_VT_##w, flags)
#include Q_CATALOG_DEF

#define Q_CAT_FNS_conv2d_q(fn, flags) (q_catv_##fn), (q_catr_##fn), NULL, NULL, Q_CAT_LAYFN_##flags(fn), NULL, NULL
#define Q_CAT_FNS_fc_q(fn, flags) NULL, NULL, (q_catv_##fn), (q_catr_##fn), NULL, NULL, NULL
#define Q_CAT_FNS_fc_f(fn, flags) NULL, NULL, NULL, NULL, NULL, (fn), NULL
#define Q_CAT_FNS_conv2d_f(fn, flags) NULL, NULL, NULL, NULL, NULL, NULL, (fn)
#define Q_CAT_ISCONV_conv2d 1
#define Q_CAT_ISCONV_fc 0
#define Q_CAT_ESIZE_i8 1
#define Q_CAT_ESIZE_u8 1
#define Q_CAT_ESIZE_i16 2
#define Q_CAT_ESIZE_f32 4
#define QVARIANT(kstem, op, in, w, out, isa, features, fits, layout, scratch, flags)                            \
  {Q_CAT_STR(qllc_k_##kstem##_##in##_##w##_##out##__##isa), Q_CAT_STR(qllc_k_##op##_##in##_##w##_##out), #kstem, \
   #in, #w, #out, #isa, features, #fits, Q_CAT_ISCONV_##op, Q_CAT_ESIZE_##in, QLLC_VF_##flags##_T,              \
   QLLC_LAYOUT_##layout, qllc_fits_##fits, qllc_packer_##layout, qllc_vscratch_##scratch,                    \
   Q_CAT_PASTE(Q_CAT_FNS_, op, Q_CAT_KIND_##in)(qllc_k_##kstem##_##in##_##w##_##out##__##isa, flags)},
#define QLLC_VF_NONE_T 0
#define QLLC_VF_ALT_T 1
#define QLLC_VF_NARROW_T 2
#define QLLC_VF_MEASURED_T 4
#define QLLC_VF_ALT_MEASURED_T 5
#define QLLC_VF_ALT_NARROW_T 3
#define QLLC_VF_ALT_NHWC_T 9
#define QLLC_VF_NHWC_MEASURED_T 13
static const q_vrow q_rows[] = {
#include Q_CATALOG_DEF
};
#define Q_NROWS ((int)(sizeof q_rows / sizeof q_rows[0]))

/* The row of function `name` (NULL: none). */
static Q_UNUSED const q_vrow *q_row_named(const char *name) {
  for (int i = 0; i < Q_NROWS; i++)
    if (strcmp(q_rows[i].name, name) == 0) return &q_rows[i];
  return NULL;
}
/* The row qllc_k_<kstem>_<in>_<w>_<out>__<isa> (NULL: none). */
static Q_UNUSED const q_vrow *q_row_of(const char *kstem, const char *in, const char *w, const char *out,
                                       const char *isa) {
  for (int i = 0; i < Q_NROWS; i++) {
    const q_vrow *r = &q_rows[i];
    if (!strcmp(r->kstem, kstem) && !strcmp(r->in, in) && !strcmp(r->w, w) && !strcmp(r->out, out) &&
        !strcmp(r->isa, isa))
      return r;
  }
  return NULL;
}
/* 1 when the host CPU has every feature the row needs. */
static int q_host_has(const char *features);
static Q_UNUSED int q_row_runs(const q_vrow *r) { return q_host_has(r->features); }

/* The combination index of the 8-bit tests (q_x86_test_util.h: 0 i8->i8, 1 i8->u8, 2 u8->i8, 3 u8->u8). */
static Q_UNUSED int q_row_combo(const q_vrow *r) { return (r->in[0] == 'u') * 2 + (r->out[0] == 'u'); }

/* Which kernel test runs a row: q_x86_q8_test.c / q_arm_kernels.c the 8-bit panel, FC and direct rows,
   q_x86_dw_test.c the depthwise ones, q_x86_q16_test.c / q_arm_kernels.c the 16-bit ones,
   q_amx_test.c the AMX ones (tile state and its emulator), f32_x86_test.c the float ones. */
enum { Q_SUITE_Q8, Q_SUITE_DW, Q_SUITE_Q16, Q_SUITE_AMX, Q_SUITE_F32, Q_SUITE_NONE };
static Q_UNUSED int q_row_suite(const q_vrow *r) {
  if (r->esize == 4) return r->fcf_fn || r->convf_fn ? Q_SUITE_F32 : Q_SUITE_NONE;
  if (strstr(r->features, "amx-")) return Q_SUITE_AMX;
  if (r->esize == 2) return !strcmp(r->fits_id, "c4") || !strcmp(r->fits_id, "panel") || !strcmp(r->fits_id, "fc")
                                ? Q_SUITE_Q16 : Q_SUITE_NONE;
  if (!strcmp(r->fits_id, "dw")) return Q_SUITE_DW;
  if (!strcmp(r->fits_id, "fc") || !strcmp(r->fits_id, "panel") || !strcmp(r->fits_id, "c4") ||
      !strcmp(r->fits_id, "cl"))
    return Q_SUITE_Q8;
  return Q_SUITE_NONE;
}

/* A conv case's geometry for the row's predicate and scratch size (d as above, pads bottom / right
   recomputed from the output size). */
static Q_UNUSED qllc_layer_geom q_conv_geom(const int64_t *d) {
  const int64_t C = d[1], H = d[2], W = d[3], OH = d[5], OW = d[6], KH = d[7], KW = d[8];
  qllc_layer_geom g = {.conv = 1, .N = d[0], .C = C, .H = H, .W = W, .M = d[4], .OH = OH, .OW = OW, .KH = KH, .KW = KW,
                       .sh = d[9], .sw = d[10], .pt = d[11], .pl = d[12], .dh = d[13], .dw = d[14], .group = d[15]};
  g.pb = (OH - 1) * g.sh + (KH - 1) * g.dh + 1 - H - g.pt;
  g.pr = (OW - 1) * g.sw + (KW - 1) * g.dw + 1 - W - g.pl;
  g.K = C / g.group * KH * KW;
  return g;
}
static Q_UNUSED qllc_layer_geom q_fc_geom(int64_t M, int64_t N, int64_t K) {
  qllc_layer_geom g = {.conv = 0, .fc_m = M, .fc_n = N, .K = K};
  return g;
}

/* One variant: its rows by type combination (q_row_combo; NULL where the catalogue has none). */
typedef struct q_group {
  const q_vrow *row[4], *first;
  const char *label; /* <kstem>__<isa> */
  char buf[96];
} q_group;
/* The variants whose rows the test `suite` runs, in the catalogue's order, into g (Q_NROWS entries);
   returns their number. */
static Q_UNUSED int q_groups(int suite, q_group *g) {
  int ng = 0;
  for (int i = 0; i < Q_NROWS; i++) {
    const q_vrow *r = &q_rows[i];
    if (q_row_suite(r) != suite) continue;
    int k = 0;
    while (k < ng && !(strcmp(g[k].first->kstem, r->kstem) == 0 && strcmp(g[k].first->isa, r->isa) == 0)) k++;
    if (k == ng) {
      memset(&g[ng], 0, sizeof g[ng]);
      g[ng].first = r;
      snprintf(g[ng].buf, sizeof g[ng].buf, "%s__%s", r->kstem, r->isa);
      g[ng].label = g[ng].buf;
      ng++;
    }
    g[k].row[r->esize == 2 ? (r->w[1] == '1') : q_row_combo(r)] = r; /* 16-bit: 0 16x8, 1 int16 x int16 */
  }
  return ng;
}

#ifndef Q_CATALOG_HOST_HAS
/* The host's features as the compiler sees them (--cpu native), through the compiler's test. */
static int q_host_has(const char *features) {
  static const char *host;
  if (!host) {
    qllc_codegen_opts cg;
    qllc_diag d = {0};
    if (qllc_codegen_resolve(NULL, "native", NULL, 0, &cg, &d) != QLLC_OK) return 0;
    host = cg.kernel_features;
  }
  return qllc_lower_has_features(host, features, NULL, 0);
}
#endif

#undef QVARIANT
#endif
