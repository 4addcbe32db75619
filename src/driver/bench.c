/* src/driver/bench.c: `qllc bench` (qllc_bench): the time of a JIT-compiled program per inference, and
 * of each of its kernel calls.
 *
 * The model is compiled once for this machine (qllc_drv_jit_build: the same graph, kernels and variants
 * as `qllc run`), then the same lowered program is code-generated a second time with a time stamp after
 * each kernel call (qllc_codegen_opts.layer_stamps). Both run on the same inputs, alternately (plain,
 * stamped, plain, ...), so that a change in the machine's load touches both alike; the whole time comes
 * from the plain build (median, min, p90 of the runs), the per-layer times from the stamped one (each
 * layer's mean over the middle half of the runs, ranked by their total). A stamp reads the CPU's time counter (rdtsc on x86_64: ~10 ns; cntvct_el0 on aarch64),
 * converted to ns by the counts per ns measured over the whole timing loop against CLOCK_MONOTONIC; the
 * cost of a read (two reads in a row, median) is taken off each layer; the stamps also keep the compiler from moving
 * memory accesses across layers, so the layers' sum is close to, not equal to, the whole;
 * `qllc bench` prints both, and tests/cli/bench_test.sh checks they agree within 10 %.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "driver/driver_internal.h"

double qllc_drv_now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

double qllc_drv_quantile(double *v, int n, double q) {
  qsort(v, (size_t)n, sizeof *v, cmp_double);
  int k = (int)(q * (n - 1) + 0.5);
  return v[k < 0 ? 0 : k >= n ? n - 1 : k];
}

/* The counter the instrumented build reads (qllc_codegen_opts.layer_stamps), read here the same way. */
static uint64_t ticks(void) {
#if defined(__x86_64__)
  return __builtin_ia32_rdtsc();
#elif defined(__aarch64__)
  uint64_t v;
  __asm__ volatile("mrs %0, cntvct_el0" : "=r"(v));
  return v;
#else
  return 0;
#endif
}

/* The instrumented runs a layer's time is averaged over: the middle half by their total time (sorted
 * indices of v[0..n) into idx; returns the count). A run an interrupt or another process slowed is left
 * out as the median would, and the layers of the runs kept add up to their totals exactly; the mean, not a
 * median, keeps what is finer than the counter's step (a virtual machine's time-stamp counter may advance
 * in steps of 10 ns). */
typedef struct ranked {
  double v;
  int i;
} ranked;
static int cmp_ranked(const void *a, const void *b) {
  const ranked *x = a, *y = b;
  return (x->v > y->v) - (x->v < y->v);
}
static int middle_runs(const double *v, int n, int *idx, ranked *tmp) {
  for (int i = 0; i < n; i++) tmp[i].v = v[i], tmp[i].i = i;
  qsort(tmp, (size_t)n, sizeof *tmp, cmp_ranked);
  int lo = n / 4, hi = n - n / 4;
  for (int k = lo; k < hi; k++) idx[k - lo] = tmp[k].i;
  return hi - lo;
}

static double stamp_at(const uint8_t *mut, uint64_t soff, int slot) {
  int64_t v;
  memcpy(&v, mut + soff + 8 * (uint64_t)slot, sizeof v);
  return (double)v;
}

/* Multiply-accumulates of one call of node n (Conv, Gemm, MatMul, FullyConnected), else 0. */
static double node_macs(const qllc_node *n) {
  if (!n || n->n_out < 1 || !n->out[0] || n->n_in < 2 || !n->in[0] || !n->in[1]) return 0;
  const qllc_value *y = n->out[0], *x = n->in[0], *w = n->in[1];
  double outs = (double)qllc_value_numel(y);
  switch (n->op) {
  case QLLC_OP_CONV: /* w [M, C/group, k...]: each output sums C/group * k... products */
    return w->rank >= 1 && w->dims[0] > 0 ? outs * (double)qllc_value_numel(w) / (double)w->dims[0] : 0;
  case QLLC_OP_FC:
  case QLLC_OP_GEMM: /* W [N, K] or [K, N]: K products per output */
    return y->rank >= 1 && y->dims[y->rank - 1] > 0 ? outs * (double)qllc_value_numel(w) / (double)y->dims[y->rank - 1]
                                                    : 0;
  case QLLC_OP_MATMUL: return x->rank >= 1 ? outs * (double)x->dims[x->rank - 1] : 0;
  default: return 0;
  }
}

void qllc_bench_result_free(qllc_bench_result *r) {
  if (!r) return;
  for (int i = 0; r->layers && i < r->n_layers; i++) {
    free((char *)r->layers[i].node);
    free((char *)r->layers[i].op);
    free((char *)r->layers[i].kernel);
  }
  free(r->layers);
  free(r);
}

/* Fixed pseudo-random floats in [0, 1) (zeros for integer inputs) for every input of j. */
static qllc_status default_inputs(const qllc_drv_jit *j, qllc_tensor *t, qllc_diag *diag) {
  uint32_t s = 12345u;
  for (int i = 0; i < j->n_in; i++) {
    t[i] = j->in[i];
    int64_t n = 1;
    for (uint32_t d = 0; d < t[i].rank; d++) n *= t[i].dims[d];
    size_t bytes = (size_t)n * qllc_elem_size(t[i].elem);
    t[i].data = calloc(bytes ? bytes : 1, 1);
    if (!t[i].data) return qllc_fail(diag, QLLC_ERR_NOMEM, NULL, "out of memory");
    if (t[i].elem != QLLC_F32) continue;
    float *f = t[i].data;
    for (int64_t k = 0; k < n; k++) {
      s = s * 1664525u + 1013904223u;
      f[k] = (float)(s >> 8) / 16777216.0f;
    }
  }
  return QLLC_OK;
}

qllc_status qllc_drv_bench(qllc_drv_model *m, const qllc_options *o, const qllc_tensor *inputs, int n_inputs, int runs,
                           int warmup, qllc_bench_result **out, qllc_diag *diag) {
  *out = NULL;
  qllc_drv_jit j;
  qllc_status st = qllc_drv_jit_build(m, o, &j, diag);
  if (st != QLLC_OK) return st;
  const qllc_program *p = j.prog;
  int n = p->n_instrs;
  qllc_tensor *made = NULL, *outs = NULL;
  qllc_jit_code *scode = NULL;
  qllc_entry_fn sentry = NULL;
  uint8_t *smut = NULL, *sact = NULL;
  double *whole = NULL, *stotal = NULL, *layer = NULL;
  int *keep = NULL;
  ranked *rank = NULL;
  qllc_bench_result *r = NULL;

  /* One checked run through the runner: it matches and copies the inputs into the pair of run buffers
     it then puts back on the free list, where the timed calls below find them. */
  if (n_inputs == 0 && j.n_in > 0) {
    made = calloc((size_t)j.n_in, sizeof *made);
    if (!made) st = qllc_fail(diag, QLLC_ERR_NOMEM, NULL, "out of memory");
    else st = default_inputs(&j, made, diag);
    inputs = made, n_inputs = j.n_in;
  }
  outs = calloc((size_t)j.n_out + 1, sizeof *outs);
  if (st == QLLC_OK && !outs) st = qllc_fail(diag, QLLC_ERR_NOMEM, NULL, "out of memory");
  if (st == QLLC_OK) st = qllc_drv_jit_run(&j, inputs, n_inputs, outs, diag);
  if (st == QLLC_OK)
    for (int i = 0; i < j.n_out; i++) qllc_tensor_free(&outs[i]);
  uint8_t *mut = NULL, *act = NULL;
  if (st == QLLC_OK) qllc_drv_jit_idle_bufs(&j, &mut, &act);

  /* the instrumented build of the same program, its stamps past the mutable region */
  uint64_t soff = (p->mutable_size + 63) / 64 * 64;
  if (st == QLLC_OK) st = qllc_drv_jit_codegen(p, o, soff, &scode, &sentry, diag);
  if (st == QLLC_OK) {
    smut = qllc_drv_aligned_buffer(soff + 8 * ((uint64_t)n + 1));
    sact = qllc_drv_aligned_buffer(p->act_size);
    whole = calloc((size_t)runs, sizeof *whole);
    stotal = calloc((size_t)runs, sizeof *stotal);
    keep = calloc((size_t)runs, sizeof *keep);
    rank = calloc((size_t)runs, sizeof *rank);
    layer = calloc((size_t)runs * (size_t)(n ? n : 1), sizeof *layer);
    r = calloc(1, sizeof *r);
    if (r) r->layers = calloc((size_t)(n ? n : 1), sizeof *r->layers);
    if (!smut || !sact || !whole || !stotal || !keep || !rank || !layer || !r || !r->layers || !mut || !act)
      st = qllc_fail(diag, QLLC_ERR_NOMEM, NULL, "out of memory");
    else
      memcpy(smut, mut, p->mutable_size); /* the same inputs */
  }
  /* What a stamp adds to the interval it closes: the counts between two reads in a row (median of many),
     taken off each layer, since each layer's interval holds one read besides its kernel. The counts per
     ns: over the whole loop below, against the monotonic clock. */
  double overhead = 0, c0 = 0, n0 = 0;
  if (st == QLLC_OK) {
    double pairs[501];
    for (int k = 0; k < 501; k++) {
      uint64_t a0 = ticks();
      pairs[k] = (double)(ticks() - a0);
    }
    overhead = qllc_drv_quantile(pairs, 501, 0.5);
    n0 = qllc_drv_now_ns(), c0 = (double)ticks();
  }
  for (int k = 0; st == QLLC_OK && k < warmup + runs; k++) {
    double t0 = qllc_drv_now_ns();
    int rc = j.entry(NULL, mut, act);
    double t1 = qllc_drv_now_ns();
    int rs = rc ? 0 : sentry(NULL, smut, sact);
    if (rc || rs) {
      st = qllc_fail(diag, QLLC_ERR_RUNTIME, NULL, "the compiled model returned error %d", rc ? rc : rs);
      break;
    }
    if (k < warmup) continue;
    int i = k - warmup;
    whole[i] = t1 - t0;
    stotal[i] = stamp_at(smut, soff, n) - stamp_at(smut, soff, 0) - n * overhead;
    for (int l = 0; l < n; l++)
      layer[(size_t)l * runs + i] = stamp_at(smut, soff, l + 1) - stamp_at(smut, soff, l) - overhead;
  }
  double per_ns = 0; /* counts per ns */
  if (st == QLLC_OK) {
    double c1 = (double)ticks(), n1 = qllc_drv_now_ns();
    per_ns = n1 > n0 && c1 > c0 ? (c1 - c0) / (n1 - n0) : 0;
    if (!(per_ns > 0)) st = qllc_fail(diag, QLLC_ERR_UNSUPPORTED, NULL, "qllc bench: this machine's time counter does not advance");
  }
  qllc_codegen_opts cg;
  memset(&cg, 0, sizeof cg);
  if (st == QLLC_OK) st = qllc_drv_codegen_opts(o, 1, &cg, diag);
  if (st == QLLC_OK) {
    snprintf(r->cpu, sizeof r->cpu, "%s", cg.cpu ? cg.cpu : "");
    r->runs = runs;
    r->stamp_ns = overhead / per_ns;
    r->n_layers = n;
    int kept = middle_runs(stotal, runs, keep, rank);
    double tot = 0;
    for (int k = 0; k < kept; k++) tot += stotal[keep[k]];
    r->layers_ns = tot / kept / per_ns;
    for (int l = 0; l < n && st == QLLC_OK; l++) {
      const qllc_instr *in = &p->instrs[l];
      qllc_bench_layer *b = &r->layers[l];
      double sum = 0;
      for (int k = 0; k < kept; k++) sum += layer[(size_t)l * runs + keep[k]];
      b->ns = sum / kept / per_ns;
      /* a node lowered to several calls: its multiply-accumulates go to the last of them */
      int last = l + 1 >= n || p->instrs[l + 1].node != in->node;
      b->ops = last ? 2.0 * node_macs(in->node) : 0;
      b->node = strdup(in->node && in->node->name ? in->node->name : "-");
      b->op = strdup(in->node ? qllc_op_name(in->node->op) : "-");
      b->kernel = strdup(in->kernel ? in->kernel : "-");
      if (!b->node || !b->op || !b->kernel) st = qllc_fail(diag, QLLC_ERR_NOMEM, NULL, "out of memory");
    }
    r->median_ns = qllc_drv_quantile(whole, runs, 0.5);
    r->min_ns = whole[0]; /* sorted by qllc_drv_quantile */
    r->p90_ns = qllc_drv_quantile(whole, runs, 0.9);
  }
  if (st == QLLC_OK) *out = r, r = NULL;
  qllc_bench_result_free(r);
  free(whole);
  free(stotal);
  free(keep);
  free(rank);
  free(layer);
  free(smut);
  free(sact);
  if (scode) qllc_jit_code_free(scode);
  for (int i = 0; made && i < j.n_in; i++) free(made[i].data); /* names borrowed from j */
  free(made);
  free(outs);
  qllc_drv_jit_release(&j);
  return st;
}
