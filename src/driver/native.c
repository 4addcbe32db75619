/* src/driver/native.c: the ISA variants of this machine's architecture compiled into the library
 * itself (CMakeLists.txt: the host architecture's kernel files, hidden), so that tune.c can time a layer's
 * candidates by calling them directly, with no code generation: a measurement costs the calls alone.
 *
 * They are the same C functions the kernel bitcode holds, compiled by the host compiler and not
 * specialised on a layer's constants as the generated code is; what tuning compares is the candidates
 * against each other on the layer's own shape. A build without them (QLLC_NATIVE_ISA_KERNELS=OFF, as the
 * sanitizer builds are) has an empty table: the rule table decides there, and the report says so.
 */
#include <string.h>

#include "driver/driver_internal.h"

#if defined(QLLC_NATIVE_KERNELS) && defined(__x86_64__)
#include "../../targets/x86_64/kernels/variants.h"
#define QLLC_NATIVE_DEF "../../targets/x86_64/kernels/variants.def"
#elif defined(QLLC_NATIVE_KERNELS) && defined(__aarch64__)
#include "../../targets/aarch64/kernels/variants.h"
#define QLLC_NATIVE_DEF "../../targets/aarch64/kernels/variants.def"
#endif

/* Every variant takes its reference's arguments then scratch: pointers (outputs, inputs, weights, bias,
   multipliers, shifts), int64 shapes, int32 zero points and clamp. The calls go through these two
   types, pointers as void * (passed as the declared pointer types are on x86_64 and aarch64). */
typedef void conv_fn(void *, const void *, const void *, const void *, const void *, const void *, int64_t, int64_t,
                     int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t,
                     int64_t, int64_t, int64_t, int32_t, int32_t, int32_t, int32_t, void *);
/* an ALT_NHWC row's: then the input and output layouts */
typedef void conv_lay_fn(void *, const void *, const void *, const void *, const void *, const void *, int64_t,
                         int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t,
                         int64_t, int64_t, int64_t, int64_t, int64_t, int32_t, int32_t, int32_t, int32_t, void *,
                         int64_t, int64_t);
typedef void fc_fn(void *, const void *, const void *, const void *, const void *, const void *, int64_t, int64_t,
                   int64_t, int32_t, int32_t, int32_t, int32_t, void *);
/* the float rows' (QLLC_VARIANT_CONV_F32, QLLC_VARIANT_FC_F32): no multipliers or zero points, a float clamp */
typedef void convf_fn(void *, const void *, const void *, const void *, int64_t, int64_t, int64_t, int64_t, int64_t,
                      int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t,
                      float, float, void *);
typedef void fcf_fn(void *, const void *, const void *, const void *, int64_t, int64_t, int64_t, float, float, void *);

typedef struct native_row {
  const char *name;
  void (*fn)(void);
  int conv; /* 1: conv_fn (conv_lay_fn when nhwc), 0: fc_fn */
  int nhwc; /* an ALT_NHWC row: two more arguments, the layouts */
  int f32;  /* a float row: convf_fn / fcf_fn */
} native_row;

#define QLLC_NATIVE_conv2d 1
#define QLLC_NATIVE_fc 0
#define QLLC_NATIVE_F_i8 0
#define QLLC_NATIVE_F_u8 0
#define QLLC_NATIVE_F_i16 0
#define QLLC_NATIVE_F_f32 1
#define QLLC_NATIVE_NHWC_NONE 0
#define QLLC_NATIVE_NHWC_ALT 0
#define QLLC_NATIVE_NHWC_NARROW 0
#define QLLC_NATIVE_NHWC_MEASURED 0
#define QLLC_NATIVE_NHWC_ALT_MEASURED 0
#define QLLC_NATIVE_NHWC_ALT_NARROW 0
#define QLLC_NATIVE_NHWC_ALT_NHWC 1
#define QLLC_NATIVE_NHWC_NHWC_MEASURED 1
#ifdef QLLC_NATIVE_DEF
#define QVARIANT(kstem, op, in, w, out, isa, features, fits, layout, scratch, flags)                            \
  {"qllc_k_" #kstem "_" #in "_" #w "_" #out "__" #isa, (void (*)(void))qllc_k_##kstem##_##in##_##w##_##out##__##isa, \
   QLLC_NATIVE_##op, QLLC_NATIVE_NHWC_##flags, QLLC_NATIVE_F_##in},
static const native_row rows[] = {
#include QLLC_NATIVE_DEF
    {NULL, NULL, 0, 0, 0}};
#else
static const native_row rows[] = {{NULL, NULL, 0, 0, 0}};
#endif

int qllc_drv_native_has(const char *kernel) {
  for (const native_row *r = rows; r->name; r++)
    if (!strcmp(r->name, kernel)) return 1;
  return 0;
}

/* Argument i of in as a pointer (a buffer: constant data, or its place in the mutable or activation
   region) or an integer. */
static void *ptr(const qllc_instr *in, int i, uint8_t *mut, uint8_t *act) {
  const qllc_arg *a = &in->args[i];
  if (a->kind != QLLC_ARG_BUF || !a->buf) return NULL;
  const qllc_buffer *b = a->buf;
  uint8_t *base = b->region == QLLC_REGION_CONST ? (uint8_t *)b->data : b->region == QLLC_REGION_MUTABLE ? mut + b->offset
                                                                                                       : act + b->offset;
  return base ? base + a->byte_offset : NULL;
}
static int64_t num(const qllc_instr *in, int i) { return in->args[i].kind == QLLC_ARG_INT ? in->args[i].i : 0; }
static float fnum(const qllc_instr *in, int i) { return in->args[i].kind == QLLC_ARG_FLOAT ? (float)in->args[i].f : 0.0f; }

int qllc_drv_native_call(const qllc_instr *in, uint8_t *mut, uint8_t *act) {
  for (const native_row *r = rows; r->name; r++) {
    if (strcmp(r->name, in->kernel) != 0) continue;
    if (r->f32 && r->conv && in->n_args == 23) {
      void *p[4];
      int64_t s[16];
      for (int i = 0; i < 4; i++) p[i] = ptr(in, i, mut, act);
      for (int i = 0; i < 16; i++) s[i] = num(in, 4 + i);
      ((convf_fn *)(void *)r->fn)(p[0], p[1], p[2], p[3], s[0], s[1], s[2], s[3], s[4], s[5], s[6], s[7], s[8], s[9],
                                  s[10], s[11], s[12], s[13], s[14], s[15], fnum(in, 20), fnum(in, 21),
                                  ptr(in, 22, mut, act));
      return 0;
    }
    if (r->f32 && !r->conv && in->n_args == 10) {
      ((fcf_fn *)(void *)r->fn)(ptr(in, 0, mut, act), ptr(in, 1, mut, act), ptr(in, 2, mut, act), ptr(in, 3, mut, act),
                                num(in, 4), num(in, 5), num(in, 6), fnum(in, 7), fnum(in, 8), ptr(in, 9, mut, act));
      return 0;
    }
    if (r->f32) return -1;
    if (r->conv && in->n_args == (r->nhwc ? 29 : 27)) {
      void *p[6];
      int64_t s[16];
      for (int i = 0; i < 6; i++) p[i] = ptr(in, i, mut, act);
      for (int i = 0; i < 16; i++) s[i] = num(in, 6 + i);
      if (r->nhwc)
        ((conv_lay_fn *)(void *)r->fn)(p[0], p[1], p[2], p[3], p[4], p[5], s[0], s[1], s[2], s[3], s[4], s[5], s[6],
                                       s[7], s[8], s[9], s[10], s[11], s[12], s[13], s[14], s[15], (int32_t)num(in, 22),
                                       (int32_t)num(in, 23), (int32_t)num(in, 24), (int32_t)num(in, 25),
                                       ptr(in, 26, mut, act), 1, 1); /* NHWC ends: as in a chain (tune.c) */
      else
        ((conv_fn *)(void *)r->fn)(p[0], p[1], p[2], p[3], p[4], p[5], s[0], s[1], s[2], s[3], s[4], s[5], s[6], s[7],
                                   s[8], s[9], s[10], s[11], s[12], s[13], s[14], s[15], (int32_t)num(in, 22),
                                   (int32_t)num(in, 23), (int32_t)num(in, 24), (int32_t)num(in, 25), ptr(in, 26, mut, act));
      return 0;
    }
    if (!r->conv && in->n_args == 14) {
      void *p[6];
      for (int i = 0; i < 6; i++) p[i] = ptr(in, i, mut, act);
      ((fc_fn *)(void *)r->fn)(p[0], p[1], p[2], p[3], p[4], p[5], num(in, 6), num(in, 7), num(in, 8),
                               (int32_t)num(in, 9), (int32_t)num(in, 10), (int32_t)num(in, 11), (int32_t)num(in, 12),
                               ptr(in, 13, mut, act));
      return 0;
    }
    return -1;
  }
  return -1;
}
