/* bench/onednn.c: the oneDNN side of bench/side_by_side.sh, and the machine's measured int8 peak.
 *
 *   onednn int8|f32 fc1|fc64|conv|conv28 [--ms RUN_MS] [--warmup-ms W] [--plain-io]
 *   onednn peak
 *   onednn version
 *
 * Shapes (as bench/sbs_models.py): fc1 = inner product 1x1024 -> 1024, fc64 = 64x1024 -> 1024,
 * conv = 3x3 pad 1 stride 1, 64 -> 64 channels at 56x56, conv28 = the same, 128 -> 128 at 28x28; N = 1;
 * all with bias.
 *
 * int8: u8 source, s8 weights, s32 bias, s8 destination, one output scale per output channel
 * (oneDNN 2.x: dnnl_primitive_attr_set_output_scales, mask 1 << 1, values fixed at creation). f32: all
 * float. Every memory is format_tag::any in the primitive descriptor: the source and the weights are
 * made in plain layout (nc / oi, nchw / oihw) and reordered into oneDNN's chosen layout once, outside
 * the timed loop (the weights are thus pre-packed); the primitive is created once. The result of the
 * first execution is reordered back and compared on 4096 sampled outputs with a scalar reference
 * (int8: at most 1 apart, from the rounding of the scaled value; f32: 1e-5 of the sum of the
 * terms' magnitudes).
 *
 * Timing: warm-up executions for W ms (default 50), then executions for about RUN_MS ms (default 200),
 * at least 20, each timed alone with CLOCK_MONOTONIC around dnnl_primitive_execute + dnnl_stream_wait.
 * With --plain-io the timed call also reorders the source from the plain layout into the primitive's
 * and the destination back (reorder primitives created once): the layer with its activations in the
 * plain layout a model's inputs and outputs have, as a qllc bundle of that one layer takes and gives
 * them. Prints one line:
 *   onednn shape=S prec=P isa=ISA impl=IMPL io=chosen|plain macs=M calls=N median_ns=... min_ns=... check=...
 * The ISA is dnnl_get_effective_cpu_isa() (ONEDNN_MAX_CPU_ISA caps it), IMPL the primitive's
 * implementation string (dnnl_query_impl_info_str). Threads: oneDNN here is the Debian build with
 * OpenMP; run with OMP_NUM_THREADS=1 (side_by_side.sh does, and pins the process to one core).
 *
 * peak: independent vpdpbusd zmm (u8 x s8, 64 multiply-adds each) on 24 accumulators, the same for
 * vpdpwssd zmm (s16 x s16, 32), and a chain of dependent integer adds (1 cycle each) for an estimate of
 * the clock; 20 ms each, in turns, 15 times, best of each. Prints
 *   peak vpdpbusd_gops=... vpdpbusd_per_ns=... vpdpwssd_gops=... vpdpwssd_per_ns=... add_chain_ghz=...
 * with 2 ops per multiply-add. Needs AVX512-VNNI (checked at run time; inline assembly, no -m flag).
 */
#define _POSIX_C_SOURCE 199309L
#include <oneapi/dnnl/dnnl.h>

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "timing.h"

#define CHECK(call)                                                                                  \
  do {                                                                                               \
    dnnl_status_t st_ = (call);                                                                      \
    if (st_ != dnnl_success) {                                                                       \
      fprintf(stderr, "onednn: %s failed: status %d (line %d)\n", #call, (int)st_, __LINE__);        \
      exit(1);                                                                                       \
    }                                                                                                \
  } while (0)

static uint32_t rng = 12345u;
static uint32_t next_u32(void) {
  rng = rng * 1664525u + 1013904223u;
  return rng >> 8; /* 24 bits */
}

static const char *isa_name(dnnl_cpu_isa_t isa) {
  switch (isa) {
  case dnnl_cpu_isa_all: return "all";
  case dnnl_cpu_isa_sse41: return "sse41";
  case dnnl_cpu_isa_avx: return "avx";
  case dnnl_cpu_isa_avx2: return "avx2";
  case dnnl_cpu_isa_avx512_mic: return "avx512_mic";
  case dnnl_cpu_isa_avx512_mic_4ops: return "avx512_mic_4ops";
  case dnnl_cpu_isa_avx512_core: return "avx512_core";
  case dnnl_cpu_isa_avx512_core_vnni: return "avx512_core_vnni";
  case dnnl_cpu_isa_avx512_core_bf16: return "avx512_core_bf16";
  case dnnl_cpu_isa_avx512_core_amx: return "avx512_core_amx";
  case dnnl_cpu_isa_avx2_vnni: return "avx2_vnni";
  default: return "other";
  }
}

/* ---- the int8 peak ----------------------------------------------------------------------------- */

/* 24 independent accumulators (zmm0-23; 16 fall a little short of the throughput on Zen 5), two
 * rounds of them per loop iteration: 48 instructions. */
#define V1(op, r) op " %%zmm30, %%zmm31, %%zmm" #r "\n\t"
#define VNNI24(op)                                                                                   \
  V1(op, 0) V1(op, 1) V1(op, 2) V1(op, 3) V1(op, 4) V1(op, 5) V1(op, 6) V1(op, 7) V1(op, 8) V1(op, 9)   \
  V1(op, 10) V1(op, 11) V1(op, 12) V1(op, 13) V1(op, 14) V1(op, 15) V1(op, 16) V1(op, 17) V1(op, 18)   \
  V1(op, 19) V1(op, 20) V1(op, 21) V1(op, 22) V1(op, 23)

#define CLOBBER24                                                                                    \
  "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7", "xmm8", "xmm9", "xmm10", "xmm11",  \
      "xmm12", "xmm13", "xmm14", "xmm15", "xmm16", "xmm17", "xmm18", "xmm19", "xmm20", "xmm21",       \
      "xmm22", "xmm23", "xmm30", "xmm31"
#define PER_ITER 48

/* target: lets the asm name zmm16-31 (run only after the run-time check in peak()) */
__attribute__((target("avx512f"))) static void loop_vpdpbusd(long iters) {
  __asm__ volatile("vpxord %%zmm30, %%zmm30, %%zmm30\n\tvpxord %%zmm31, %%zmm31, %%zmm31\n\t"
                   "1:\n\t" VNNI24("vpdpbusd") VNNI24("vpdpbusd") "dec %0\n\tjnz 1b\n\tvzeroupper"
                   : "+r"(iters)
                   :
                   : CLOBBER24, "cc");
}

__attribute__((target("avx512f"))) static void loop_vpdpwssd(long iters) {
  __asm__ volatile("vpxord %%zmm30, %%zmm30, %%zmm30\n\tvpxord %%zmm31, %%zmm31, %%zmm31\n\t"
                   "1:\n\t" VNNI24("vpdpwssd") VNNI24("vpdpwssd") "dec %0\n\tjnz 1b\n\tvzeroupper"
                   : "+r"(iters)
                   :
                   : CLOBBER24, "cc");
}

/* 64 dependent adds per iteration (1 cycle each on every recent x86 core): iterations * 64 / time
 * is the clock, to within the loop overhead, which runs in parallel. */
#define ADD8 "add %1, %0\n\tadd %1, %0\n\tadd %1, %0\n\tadd %1, %0\n\tadd %1, %0\n\tadd %1, %0\n\tadd %1, %0\n\tadd %1, %0\n\t"
static void loop_adds(long iters) {
  long acc = 0, one = 1;
  __asm__ volatile("1:\n\t" ADD8 ADD8 ADD8 ADD8 ADD8 ADD8 ADD8 ADD8 "dec %2\n\tjnz 1b"
                   : "+r"(acc), "+r"(one), "+r"(iters)
                   :
                   : "cc");
}

/* Iterations of f that take about 20 ms. */
static long calibrate(void (*f)(long)) {
  long it = 1000;
  for (;;) {
    double t = now_ns();
    f(it);
    t = now_ns() - t;
    if (t > 2e6 || it > (1L << 40)) return (long)((double)it * 20e6 / t) + 1;
    it *= 4;
  }
}

/* The clock moves (boost, the other core's load): the three loops are timed in turns, 15 times, and
 * each keeps its best. */
static int peak(void) {
  __builtin_cpu_init();
  if (!__builtin_cpu_supports("avx512vnni")) {
    printf("peak none (no AVX512-VNNI)\n");
    return 0;
  }
  long ia = calibrate(loop_adds), ib = calibrate(loop_vpdpbusd), iw = calibrate(loop_vpdpwssd);
  double ta = 1e300, tb = 1e300, tw = 1e300;
  for (int r = 0; r < 15; r++) {
    double t = now_ns();
    loop_adds(ia);
    if ((t = now_ns() - t) < ta) ta = t;
    t = now_ns();
    loop_vpdpbusd(ib);
    if ((t = now_ns() - t) < tb) tb = t;
    t = now_ns();
    loop_vpdpwssd(iw);
    if ((t = now_ns() - t) < tw) tw = t;
  }
  double ghz = (double)ia * 64 / ta;
  double nb = (double)ib * PER_ITER, nw = (double)iw * PER_ITER; /* instructions */
  printf("peak vpdpbusd_gops=%.1f vpdpbusd_per_ns=%.2f vpdpwssd_gops=%.1f vpdpwssd_per_ns=%.2f add_chain_ghz=%.2f\n",
         2 * 64 * nb / tb, nb / tb, 2 * 32 * nw / tw, nw / tw, ghz);
  return 0;
}

/* ---- the layers ---------------------------------------------------------------------------------- */

typedef struct shape {
  const char *name;
  int conv;
  dnnl_dim_t n, ic, oc, h, w, kh, kw; /* fc: h = w = kh = kw = 1 */
} shape;

static const shape shapes[] = {
    {"fc1", 0, 1, 1024, 1024, 1, 1, 1, 1},
    {"fc64", 0, 64, 1024, 1024, 1, 1, 1, 1},
    {"conv", 1, 1, 64, 64, 56, 56, 3, 3},
    {"conv28", 1, 1, 128, 128, 28, 28, 3, 3},
};

static dnnl_memory_t make_mem(const dnnl_memory_desc_t *md, dnnl_engine_t eng) {
  dnnl_memory_t m;
  CHECK(dnnl_memory_create(&m, md, eng, DNNL_MEMORY_ALLOCATE));
  return m;
}

static void *handle(dnnl_memory_t m) {
  void *p;
  CHECK(dnnl_memory_get_data_handle(m, &p));
  return p;
}

/* A reorder primitive from one memory's layout to another's (made once where --plain-io times it). */
static dnnl_primitive_t reorder_prim(dnnl_memory_t from, dnnl_memory_t to, dnnl_engine_t eng) {
  const dnnl_memory_desc_t *a, *b;
  CHECK(dnnl_memory_get_memory_desc(from, &a));
  CHECK(dnnl_memory_get_memory_desc(to, &b));
  dnnl_primitive_desc_t pd;
  dnnl_primitive_t p;
  CHECK(dnnl_reorder_primitive_desc_create(&pd, a, eng, b, eng, NULL));
  CHECK(dnnl_primitive_create(&p, pd));
  dnnl_primitive_desc_destroy(pd);
  return p;
}

static void reorder(dnnl_memory_t from, dnnl_memory_t to, dnnl_engine_t eng, dnnl_stream_t s) {
  dnnl_primitive_t p = reorder_prim(from, to, eng);
  dnnl_exec_arg_t args[2] = {{DNNL_ARG_FROM, from}, {DNNL_ARG_TO, to}};
  CHECK(dnnl_primitive_execute(p, s, 2, args));
  CHECK(dnnl_stream_wait(s));
  dnnl_primitive_destroy(p);
}

static float round_even(float x) { return nearbyintf(x); } /* default rounding mode: to nearest even */

static int layer(const shape *sh, int int8, double run_ms, double warm_ms, int plain_io) {
  dnnl_engine_t eng;
  dnnl_stream_t strm;
  CHECK(dnnl_engine_create(&eng, dnnl_cpu, 0));
  CHECK(dnnl_stream_create(&strm, eng, dnnl_stream_default_flags));

  const int nd = sh->conv ? 4 : 2;
  dnnl_dims_t sdims = {sh->n, sh->ic, sh->h, sh->w}, wdims = {sh->oc, sh->ic, sh->kh, sh->kw},
              bdims = {sh->oc}, ddims = {sh->n, sh->oc, sh->h, sh->w};
  dnnl_data_type_t st = int8 ? dnnl_u8 : dnnl_f32, wt = int8 ? dnnl_s8 : dnnl_f32,
                   bt = int8 ? dnnl_s32 : dnnl_f32, dt = int8 ? dnnl_s8 : dnnl_f32;
  dnnl_memory_desc_t s_any, w_any, b_md, d_any;
  CHECK(dnnl_memory_desc_init_by_tag(&s_any, nd, sdims, st, dnnl_format_tag_any));
  CHECK(dnnl_memory_desc_init_by_tag(&w_any, nd, wdims, wt, dnnl_format_tag_any));
  CHECK(dnnl_memory_desc_init_by_tag(&b_md, 1, bdims, bt, dnnl_a));
  CHECK(dnnl_memory_desc_init_by_tag(&d_any, nd, ddims, dt, dnnl_format_tag_any));

  /* the operation */
  union {
    dnnl_convolution_desc_t conv;
    dnnl_inner_product_desc_t ip;
  } od;
  if (sh->conv) {
    dnnl_dims_t strides = {1, 1}, pad = {1, 1};
    CHECK(dnnl_convolution_forward_desc_init(&od.conv, dnnl_forward_inference, dnnl_convolution_direct, &s_any,
                                             &w_any, &b_md, &d_any, strides, pad, pad));
  } else {
    CHECK(dnnl_inner_product_forward_desc_init(&od.ip, dnnl_forward_inference, &s_any, &w_any, &b_md, &d_any));
  }

  /* data: u8 source in [0, 255], s8 weights in [-127, 127], s32 bias; output scales that put the
   * results around +-40 (fp32: the same values, unscaled) */
  const int64_t K = sh->ic * sh->kh * sh->kw;
  float *scales = malloc(sizeof(float) * (size_t)sh->oc);
  for (int64_t c = 0; c < sh->oc; c++)
    scales[c] = (float)(40.0 / (sqrt((double)K) * 150.0 * 73.0) * (0.75 + 0.5 * (next_u32() & 255) / 255.0));
  dnnl_primitive_attr_t attr;
  CHECK(dnnl_primitive_attr_create(&attr));
  if (int8) CHECK(dnnl_primitive_attr_set_output_scales(attr, sh->oc, 1 << 1, scales));

  dnnl_primitive_desc_t pd;
  CHECK(dnnl_primitive_desc_create(&pd, &od, attr, eng, NULL));
  const char *impl = NULL;
  CHECK(dnnl_primitive_desc_query(pd, dnnl_query_impl_info_str, 0, &impl));
  dnnl_primitive_t prim;
  CHECK(dnnl_primitive_create(&prim, pd));

  /* user memories in plain layout, filled, then reordered into the primitive's layouts */
  dnnl_format_tag_t plain = sh->conv ? dnnl_nchw : dnnl_nc, wplain = sh->conv ? dnnl_oihw : dnnl_oi;
  dnnl_memory_desc_t s_user, w_user, d_user;
  CHECK(dnnl_memory_desc_init_by_tag(&s_user, nd, sdims, st, plain));
  CHECK(dnnl_memory_desc_init_by_tag(&w_user, nd, wdims, wt, wplain));
  CHECK(dnnl_memory_desc_init_by_tag(&d_user, nd, ddims, dt, plain));
  dnnl_memory_t su = make_mem(&s_user, eng), wu = make_mem(&w_user, eng), du = make_mem(&d_user, eng);
  dnnl_memory_t bm = make_mem(&b_md, eng);
  const int64_t ns = sh->n * sh->ic * sh->h * sh->w, nw = sh->oc * K, ndst = sh->n * sh->oc * sh->h * sh->w;
  if (int8) {
    uint8_t *s = handle(su);
    int8_t *w = handle(wu);
    int32_t *b = handle(bm);
    for (int64_t i = 0; i < ns; i++) s[i] = (uint8_t)(next_u32() & 255);
    for (int64_t i = 0; i < nw; i++) w[i] = (int8_t)((int)(next_u32() % 255) - 127);
    for (int64_t i = 0; i < sh->oc; i++) b[i] = (int32_t)(next_u32() % 20001) - 10000;
  } else {
    float *s = handle(su), *w = handle(wu), *b = handle(bm);
    for (int64_t i = 0; i < ns; i++) s[i] = (float)(next_u32() & 255) / 255.0f;
    for (int64_t i = 0; i < nw; i++) w[i] = ((float)(next_u32() % 255) - 127.0f) / 127.0f / (float)sqrt((double)K);
    for (int64_t i = 0; i < sh->oc; i++) b[i] = (float)((int)(next_u32() % 201) - 100) / 1000.0f;
  }
  dnnl_memory_t sm = make_mem(dnnl_primitive_desc_query_md(pd, dnnl_query_src_md, 0), eng);
  dnnl_memory_t wm = make_mem(dnnl_primitive_desc_query_md(pd, dnnl_query_weights_md, 0), eng);
  dnnl_memory_t dm = make_mem(dnnl_primitive_desc_query_md(pd, dnnl_query_dst_md, 0), eng);
  reorder(su, sm, eng, strm);
  reorder(wu, wm, eng, strm); /* the weights, packed once */

  dnnl_exec_arg_t args[4] = {{DNNL_ARG_SRC, sm}, {DNNL_ARG_WEIGHTS, wm}, {DNNL_ARG_BIAS, bm}, {DNNL_ARG_DST, dm}};
  CHECK(dnnl_primitive_execute(prim, strm, 4, args));
  CHECK(dnnl_stream_wait(strm));

  /* check sampled outputs against a scalar reference */
  reorder(dm, du, eng, strm);
  int bad = 0;
  double worst = 0;
  for (int t = 0; t < 4096; t++) {
    int64_t o = (int64_t)(((uint64_t)next_u32() << 24 | next_u32()) % (uint64_t)ndst);
    int64_t x = o % sh->w, y = o / sh->w % sh->h, c = o / (sh->w * sh->h) % sh->oc, n = o / (sh->w * sh->h * sh->oc);
    double acc = 0, mag = 0; /* mag: the sum of the terms' magnitudes (f32 tolerance) */
    for (int64_t i = 0; i < sh->ic; i++)
      for (int64_t ky = 0; ky < sh->kh; ky++)
        for (int64_t kx = 0; kx < sh->kw; kx++) {
          int64_t iy = y + ky - (sh->kh / 2), ix = x + kx - (sh->kw / 2);
          if (iy < 0 || iy >= sh->h || ix < 0 || ix >= sh->w) continue;
          int64_t si = ((n * sh->ic + i) * sh->h + iy) * sh->w + ix, wi = ((c * sh->ic + i) * sh->kh + ky) * sh->kw + kx;
          if (int8) acc += (double)((const uint8_t *)handle(su))[si] * ((const int8_t *)handle(wu))[wi];
          else {
            double p = (double)((const float *)handle(su))[si] * ((const float *)handle(wu))[wi];
            acc += p;
            mag += fabs(p);
          }
        }
    double want, got, diff;
    if (int8) {
      acc += ((const int32_t *)handle(bm))[c];
      float v = round_even((float)acc * scales[c]);
      want = v < -128 ? -128 : v > 127 ? 127 : v;
      got = ((const int8_t *)handle(du))[o];
      diff = fabs(got - want);
      if (diff > 1) bad++;
    } else {
      want = acc + ((const float *)handle(bm))[c];
      got = ((const float *)handle(du))[o];
      diff = fabs(got - want) / (mag + fabs(want) + 1e-6);
      if (diff > 1e-5) bad++;
    }
    if (diff > worst) worst = diff;
  }

  /* timing; --plain-io: the source reordered in and the destination out, in the timed call */
  dnnl_primitive_t rin = plain_io ? reorder_prim(su, sm, eng) : NULL, rout = plain_io ? reorder_prim(dm, du, eng) : NULL;
  dnnl_exec_arg_t ain[2] = {{DNNL_ARG_FROM, su}, {DNNL_ARG_TO, sm}}, aout[2] = {{DNNL_ARG_FROM, dm}, {DNNL_ARG_TO, du}};
#define CALL()                                                  \
  do {                                                          \
    if (rin) dnnl_primitive_execute(rin, strm, 2, ain);         \
    dnnl_primitive_execute(prim, strm, 4, args);                \
    if (rout) dnnl_primitive_execute(rout, strm, 2, aout);      \
    dnnl_stream_wait(strm);                                     \
  } while (0)
  double t0 = now_ns(), one = 0;
  int warm = 0;
  while (now_ns() - t0 < warm_ms * 1e6 || warm < 3) {
    double s = now_ns();
    CALL();
    one = now_ns() - s;
    warm++;
  }
  int calls = (int)(run_ms * 1e6 / (one > 1 ? one : 1));
  if (calls < 20) calls = 20;
  if (calls > 200000) calls = 200000;
  double *times = malloc(sizeof(double) * (size_t)calls);
  for (int r = 0; r < calls; r++) {
    double s = now_ns();
    CALL();
    times[r] = now_ns() - s;
  }
#undef CALL
  if (rin) dnnl_primitive_destroy(rin), dnnl_primitive_destroy(rout);
  qsort(times, (size_t)calls, sizeof(double), cmp_double);
  double med = calls % 2 ? times[calls / 2] : 0.5 * (times[calls / 2 - 1] + times[calls / 2]);
  long long macs = (long long)(sh->n * sh->oc * sh->h * sh->w * K);
  char check[64];
  if (bad) snprintf(check, sizeof check, "WRONG(%d/4096,worst=%g)", bad, worst);
  else snprintf(check, sizeof check, "ok");
  printf("onednn shape=%s prec=%s isa=%s impl=%s io=%s macs=%lld calls=%d median_ns=%.0f min_ns=%.0f check=%s\n",
         sh->name, int8 ? "int8" : "f32", isa_name(dnnl_get_effective_cpu_isa()), impl, plain_io ? "plain" : "chosen",
         macs, calls, med, times[0], check);

  free(times);
  free(scales);
  dnnl_memory_destroy(su);
  dnnl_memory_destroy(wu);
  dnnl_memory_destroy(du);
  dnnl_memory_destroy(bm);
  dnnl_memory_destroy(sm);
  dnnl_memory_destroy(wm);
  dnnl_memory_destroy(dm);
  dnnl_primitive_destroy(prim);
  dnnl_primitive_desc_destroy(pd);
  dnnl_primitive_attr_destroy(attr);
  dnnl_stream_destroy(strm);
  dnnl_engine_destroy(eng);
  return bad ? 1 : 0;
}

int main(int argc, char **argv) {
  double run_ms = 200, warm_ms = 50;
  const char *pos[2] = {NULL, NULL};
  int np = 0, plain_io = 0;
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--plain-io") == 0) plain_io = 1;
    else if (strcmp(argv[i], "--ms") == 0 && i + 1 < argc) run_ms = atof(argv[++i]);
    else if (strcmp(argv[i], "--warmup-ms") == 0 && i + 1 < argc) warm_ms = atof(argv[++i]);
    else if (argv[i][0] != '-' && np < 2) pos[np++] = argv[i];
    else { np = -1; break; }
  }
  if (np >= 1 && strcmp(pos[0], "version") == 0) {
    const dnnl_version_t *v = dnnl_version();
    printf("onednn version=%d.%d.%d hash=%s cpu_runtime=%s max_isa=%s\n", v->major, v->minor, v->patch, v->hash,
           v->cpu_runtime == DNNL_RUNTIME_OMP ? "omp" : "other", isa_name(dnnl_get_effective_cpu_isa()));
    return 0;
  }
  if (np >= 1 && strcmp(pos[0], "peak") == 0) return peak();
  if (np == 2 && (strcmp(pos[0], "int8") == 0 || strcmp(pos[0], "f32") == 0))
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++)
      if (strcmp(pos[1], shapes[i].name) == 0) return layer(&shapes[i], pos[0][0] == 'i', run_ms, warm_ms, plain_io);
  fprintf(stderr, "usage: onednn int8|f32 fc1|fc64|conv|conv28 [--ms RUN_MS] [--warmup-ms W] [--plain-io]\n"
                  "       onednn peak\n       onednn version\n");
  return 2;
}
