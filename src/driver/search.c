/* src/driver/search.c: automatic mixed precision (--min-sqnr; issue 13). The map it returns is written and
 * read by src/quant/precmap.c.
 *
 * The search (qllc_precision_search) looks for the cheapest per-layer choice of int8, 16x8 (int16
 * activations, int8 weights) and int16 with which every model output reaches the target SQNR against
 * float on the search samples. The cost of a choice: where the target CPU is this machine (the JIT,
 * --cpu native; issue 27), the layers' measured times: the program with every layer at int8, at 16x8
 * and at int16 is timed by qllc_drv_bench (time_levels: each layer's kernel calls and those of the
 * views, pools and pads that follow its precision), and the chosen mix is timed whole (and against
 * every layer at int16, which it must beat). Otherwise its wide MACs: a layer's MACs once at 16x8 (or
 * at int16 without weights), twice at int16 with int16 weights, nothing at int8.
 *  1. the candidates are the nodes that compute (fused layers, matmuls, rescales, tables, softmax; not
 *     the views and clamps, which follow their input); each one's MACs (a fused layer: output elements
 *     x K; others: output elements). Every layer at int8 is measured first: if it reaches the target,
 *     that is the answer;
 *  2. every layer at int16 is the most the search can reach: if it misses the target, the search fails
 *     naming what limits it there (measured as `qllc compare` does: the outputs and the worst other
 *     values, the nodes computing them and their share clipped at the calibrated range);
 *  3. top-down sensitivities: each layer alone a level lower (16x8, int8), the others at int16, and
 *     the noise that adds at each output (a sum of squared errors: noise powers add, dB do not). Raising
 *     one layer from int8 alone says little, since its int16 output is requantized to int8 by the
 *     next layer; lowering one from int16 measures exactly what that layer's grids cost;
 *  4. an additive model of those extras chooses: from every layer at int16, the step that saves the
 *     most cost per share of the noise allowance (target noise minus all-int16 noise) it uses, while
 *     the allowance holds. The choice is measured; when it misses, the allowance is halved (at most
 *     three times, then every layer at int16);
 *  5. measured refinement: each layer still raised, costliest first, is lowered a level at a time
 *     while the target holds, pass after pass until a pass lowers nothing (with measured times: every
 *     level that costs less, the cheapest first). The last pass measured each
 *     layer still raised a level lower, alone, in the final configuration: the result is a local
 *     minimum, and the summary names each wide layer with that SQNR, below the target (when every
 *     layer stays at int16 it says so), and any layer a later pass lowered.
 * Each measurement quantizes a copy of the float graph with the map, JIT-compiles it (quickly:
 * QLLC_PROBE_QUICK, the kernels called rather than inlined, LLVM O1; the same results) and runs the
 * samples; the float outputs are computed once, and no configuration is measured twice.
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <unistd.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "driver/driver_internal.h"

/* ---- the map a compile uses ----------------------------------------------------------------------- */

static qllc_status quantize_cb(void *ctx, qllc_graph *g, const qllc_prec_map *map, qllc_diag *diag) {
  return qllc_drv_quantize_map(g, ctx, map, diag);
}

/* What a precision search depends on, as one string (NULL on OOM): two calls with the same key get the
 * same map. */
static char *search_key(const qllc_options *o, int timed) {
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);
  if (!f) return NULL;
  fprintf(f, "%.17g|%d|%d|%d|%d|%d|%s|%d", o->min_sqnr_db, (int)o->precision, (int)o->weight_precision, (int)o->schema,
          (int)o->calibration, o->per_tensor, o->profile_path ? o->profile_path : "", timed);
  if (timed) fprintf(f, "|c:%s|f:%s|q:%d", o->cpu ? o->cpu : "", o->features ? o->features : "", o->quantized_io);
  for (int i = 0; i < o->n_keep_float; i++) fprintf(f, "|k:%s", o->keep_float[i]);
  for (int i = 0; i < o->n_kernel_files; i++) fprintf(f, "|u:%s", o->kernel_files[i]);
  for (int i = 0; i < o->n_search_dataset; i++) fprintf(f, "|d:%s", o->search_dataset[i]);
  fclose(f);
  return buf;
}

/* --precision-map-out is written only once the compile it belongs to has succeeded: quantize leaves it
 * here (per thread: a compile runs on one thread) and qllc_drv_precision_map_finish writes or drops it. */
static __thread struct {
  char *path, *comment;
  qllc_prec_map *map;
  uint64_t hash;
} pending;

static void pending_clear(void) {
  free(pending.path);
  free(pending.comment);
  qllc_prec_map_free(pending.map);
  memset(&pending, 0, sizeof pending);
}

qllc_status qllc_drv_precision_map_later(const qllc_options *o, const qllc_prec_map *map, uint64_t hash,
                                         const char *comment, qllc_diag *diag) {
  pending_clear();
  if (!o->precision_map_out || !*o->precision_map_out) return QLLC_OK;
  qllc_prec_map empty = {0, NULL, NULL};
  pending.path = strdup(o->precision_map_out);
  pending.comment = comment ? strdup(comment) : NULL;
  pending.map = qllc_prec_map_copy(map ? map : &empty);
  pending.hash = hash;
  if (!pending.path || !pending.map || (comment && !pending.comment)) {
    pending_clear();
    return qllc_fail(diag, QLLC_ERR_NOMEM, NULL, "out of memory");
  }
  return QLLC_OK;
}

qllc_status qllc_drv_precision_map_finish(qllc_status st, qllc_diag *diag) {
  if (st == QLLC_OK && pending.path)
    st = qllc_prec_map_write(pending.path, pending.map, pending.hash, pending.comment, diag);
  pending_clear();
  return st;
}

/* The search's timer (qllc_search_timer) where the target CPU is this machine: the model compiled as
 * the user asked, with the map in a temporary file given as --precision-map, timed by qllc_drv_bench
 * (its per-layer times from the instrumented build). */
typedef struct timer_ctx {
  qllc_drv_model *m;
  const qllc_options *o; /* the user's */
  uint64_t hash;         /* the clean graph's, for the map file */
} timer_ctx;

#define TIME_RUNS 200  /* per measured configuration (and 4 warm-up runs): a loaded machine's noise needs many */

static qllc_status time_map(void *ctx, const qllc_prec_map *map, qllc_bench_result **out, qllc_diag *diag) {
  timer_ctx *t = ctx;
  char path[512];
  const char *dir = getenv("TMPDIR");
  snprintf(path, sizeof path, "%s/qllc-search-map-XXXXXX", dir && *dir ? dir : "/tmp");
  int fd = mkstemp(path);
  if (fd < 0) return qllc_fail(diag, QLLC_ERR_IO, NULL, "cannot create a temporary file in %s: %s", dir && *dir ? dir : "/tmp",
                               strerror(errno));
  close(fd);
  qllc_status st = qllc_prec_map_write(path, map, t->hash, NULL, diag);
  qllc_options so = *t->o;
  so.min_sqnr_db = 0;
  so.precision_map = path;
  so.precision_map_out = NULL;
  so.search_dataset = NULL, so.n_search_dataset = 0;
  so.dump_after = NULL;
  so.progress = NULL, so.note = NULL;
  if (st == QLLC_OK) st = qllc_drv_bench(t->m, &so, NULL, 0, TIME_RUNS, 4, out, diag);
  remove(path);
  return st;
}

/* The precision map a quantized compile uses: replayed from opts->precision_map, or searched for
 * opts->min_sqnr_db (then left for opts->precision_map_out with the search's summary as comments);
 * NULL when neither is asked. g: the clean graph (hashed). */
qllc_status qllc_drv_precision_map(qllc_drv_model *m, const qllc_graph *g, const qllc_options *o, int host,
                                   qllc_prec_map **map, qllc_diag *diag) {
  *map = NULL;
  if (o->precision_map && *o->precision_map) {
    if (o->min_sqnr_db > 0)
      return qllc_fail(diag, QLLC_ERR_INVALID, NULL, "--min-sqnr and --precision-map: give one (the map replays a search)");
    return qllc_prec_map_read(o->precision_map, qllc_graph_hash(g), map, diag);
  }
  if (!(o->min_sqnr_db > 0)) return QLLC_OK;
  if (o->precision != QLLC_PREC_INT8 || (o->weight_precision != QLLC_PREC_FLOAT && o->weight_precision != QLLC_PREC_INT8))
    return qllc_fail(diag, QLLC_ERR_INVALID, NULL, "--min-sqnr starts from --precision int8 and raises layers from there");
  qllc_options so = *o;
  so.quantized_io = 0; /* measured on float inputs and outputs */
  so.target = NULL;
  so.dump_after = NULL;
  qllc_graph *fg = NULL, *base = NULL;
  qllc_dataset *ds = NULL;
  int timed = host || (o->cpu && !strcmp(o->cpu, "native")); /* the target CPU is this machine */
  char *summary = NULL, *key = search_key(o, timed), *comment = NULL;
  int drawn = 0;
  qllc_status st = QLLC_OK;
  pthread_mutex_lock(&m->lock); /* the same search as the last one: its answer */
  if (key && m->search_key && !strcmp(key, m->search_key) && m->search_map) {
    *map = qllc_prec_map_copy(m->search_map);
    comment = m->search_comment ? strdup(m->search_comment) : NULL;
    if (!*map) st = qllc_fail(diag, QLLC_ERR_NOMEM, NULL, "out of memory");
  }
  pthread_mutex_unlock(&m->lock);
  if (*map || st != QLLC_OK) {
    if (st == QLLC_OK && o->precision_map_out && *o->precision_map_out)
      st = qllc_drv_precision_map_later(o, *map, qllc_graph_hash(g), comment, diag);
    free(comment);
    free(key);
    if (st != QLLC_OK) {
      qllc_prec_map_free(*map);
      *map = NULL;
    }
    return st;
  }
  st = qllc_drv_model_graph(m, &fg, diag);
  if (st == QLLC_OK) st = qllc_graph_copy(fg, &base, diag);
  if (st == QLLC_OK) st = qllc_drv_quantize_map(base, &so, NULL, diag);
  if (st == QLLC_OK) st = qllc_drv_samples(m, &so, o->search_dataset, o->n_search_dataset, 0, &ds, &drawn, diag);
  if (st == QLLC_OK) {
    qllc_probe_hooks h = {qllc_drv_instr_lower, &so, &so};
    timer_ctx tc = {m, o, qllc_graph_hash(g)};
    qllc_search_timer timer = {time_map, &tc};
    st = qllc_precision_search(fg, base, ds, o->min_sqnr_db, quantize_cb, &so, &h, timed ? &timer : NULL, map, &summary,
                               diag);
  }
  if (st == QLLC_OK) {
    size_t n = (summary ? strlen(summary) : 0) + strlen(m->path) + 256;
    comment = malloc(n);
    if (!comment) st = qllc_fail(diag, QLLC_ERR_NOMEM, NULL, "out of memory");
    else
      snprintf(comment, n, "qllc precision map for %s (replay: --precision-map FILE)\n%s%s", m->path,
               summary ? summary : "",
               drawn == 2 ? "(measured on the calibration samples kept in the profile)\n"
               : drawn    ? "(samples drawn from the profile's input histograms: a profile without kept samples)\n"
                          : "");
  }
  if (st == QLLC_OK && o->precision_map_out && *o->precision_map_out)
    st = qllc_drv_precision_map_later(o, *map, qllc_graph_hash(g), comment, diag);
  if (st == QLLC_OK && key) { /* remember it */
    qllc_prec_map *copy = qllc_prec_map_copy(*map);
    if (copy) {
      pthread_mutex_lock(&m->lock);
      free(m->search_key);
      free(m->search_comment);
      qllc_prec_map_free(m->search_map);
      m->search_key = key, m->search_map = copy, m->search_comment = comment;
      key = comment = NULL;
      pthread_mutex_unlock(&m->lock);
    }
  }
  free(key);
  free(comment);
  free(summary);
  qllc_dataset_free(ds);
  if (base) qllc_graph_free(base);
  if (fg) qllc_graph_free(fg);
  if (st != QLLC_OK) {
    qllc_prec_map_free(*map);
    *map = NULL;
  }
  return st;
}

/* ---- the search ---------------------------------------------------------------------------------- */

/* A layer's level: int8, 16x8 (int16 activations, int8 weights: fused layers only) or int16. */
enum { LV_INT8, LV_16X8, LV_INT16, N_LV };
static const qllc_nprec lv_prec[N_LV] = {QLLC_NP_INT8, QLLC_NP_16X8, QLLC_NP_INT16};

typedef struct cand {
  const char *node;   /* in the float graph */
  int fused;          /* has a 16x8 kernel (conv, FC, channel affine) */
  double macs;
  int timed;          /* the cost is ns[] (the target CPU is this machine), else the MACs */
  double ns[N_LV];    /* its kernel calls' time in the program with every layer at that level */
} cand;

/* What a layer costs at level l, above its cost at int8. Measured (timed): its time at l less its time
 * at int8 (may be < 0: a kernel faster at int16). Otherwise its wide MACs: none at int8; its MACs once
 * at 16x8 (or at int16 without weights), twice at int16 with int16 weights (the int16 x int16 kernels
 * do half the work per cycle). */
static double lv_cost(const cand *x, int l) {
  if (x->timed) return x->ns[l] - x->ns[LV_INT8];
  if (l == LV_INT8) return 0;
  return x->macs * (x->fused && l == LV_INT16 ? 2.0 : 1.0);
}

/* The next cheaper level, or -1 when none: of the levels narrower than l that cost less, the dearest
 * (by MACs: a fused layer steps int16 -> 16x8 -> int8, the others int16 -> int8). */
static int lv_down(const cand *x, int l) {
  int best = -1;
  for (int k = LV_INT8; k < l; k++) {
    if (k == LV_16X8 && !x->fused) continue;
    if (lv_cost(x, k) < lv_cost(x, l) && (best < 0 || lv_cost(x, k) >= lv_cost(x, best))) best = k;
  }
  return best;
}

typedef struct memo {
  struct memo *next;
  double *noise;      /* [n_out] */
  int lev[];          /* [nc] */
} memo;

typedef struct search {
  const qllc_graph *fg;
  qllc_dataset *ds;
  const qllc_probe_hooks *h;
  qllc_quantize_fn quantize;
  void *qctx;
  const cand *c;
  int nc;
  int n_out;
  int64_t samples;
  float **ref;        /* [samples * n_out] float outputs */
  int64_t *numel;     /* [n_out] */
  double *sig;        /* [n_out]: sum of the float outputs' squares */
  memo *seen;         /* every configuration measured, so none is compiled twice */
  int evals;
  const qllc_options *o; /* o->progress: one line per measurement (may be NULL) */
  const char *phase;  /* what the measurements now are for, for the progress line */
} search;

/* The progress line (qllc_options.progress): the step and the measurements so far. */
static void progress(const search *s, const char *what) {
  if (!s->o || !s->o->progress) return;
  char line[160];
  snprintf(line, sizeof line, "precision search: %s%s%s (%d measurement%s so far)", s->phase, what ? ": " : "",
           what ? what : "", s->evals, s->evals == 1 ? "" : "s");
  s->o->progress(s->o->progress_ctx, line);
}

static qllc_prec_map *lev_map(const search *s, const int *lev) {
  qllc_prec_map *m = qllc_prec_map_new(s->nc);
  for (int i = 0; m && i < s->nc; i++)
    if (lev[i] != LV_INT8 && qllc_prec_map_add(m, s->c[i].node, lv_prec[lev[i]]) != 0) {
      qllc_prec_map_free(m);
      m = NULL;
    }
  return m;
}

/* The outputs' noise (sum of squared errors against float, one per output) with the layers at `lev`:
 * quantizes a copy of the float graph with that map, JIT-compiles it and runs the samples; a
 * configuration measured before is not compiled again. */
static qllc_status measure(search *s, const int *lev, const double **noise_out, qllc_diag *diag) {
  for (memo *e = s->seen; e; e = e->next)
    if (!memcmp(e->lev, lev, sizeof *lev * (size_t)s->nc)) {
      *noise_out = e->noise;
      return QLLC_OK;
    }
  memo *e = calloc(1, sizeof *e + sizeof *lev * (size_t)s->nc);
  double *noise = calloc((size_t)s->n_out + 1, sizeof *noise);
  qllc_prec_map *map = lev_map(s, lev);
  if (!e || !noise || !map) {
    free(e), free(noise), qllc_prec_map_free(map);
    return qllc_fail(diag, QLLC_ERR_NOMEM, NULL, "out of memory");
  }
  qllc_graph *g = NULL;
  qllc_probe *p = NULL;
  progress(s, NULL);
  qllc_status st = qllc_graph_copy(s->fg, &g, diag);
  if (st == QLLC_OK) st = s->quantize(s->qctx, g, map, diag);
  if (st == QLLC_OK) st = qllc_probe_build(g, QLLC_PROBE_QUICK, s->h, &p, diag);
  for (int64_t k = 0; k < s->samples && st == QLLC_OK; k++) {
    if ((st = qllc_probe_run(p, s->ds, k, diag)) != QLLC_OK) break;
    for (int o = 0; o < s->n_out; o++) {
      const float *q = qllc_probe_value_data(p, o), *r = s->ref[k * s->n_out + o];
      for (int64_t i = 0; i < s->numel[o]; i++) {
        double d = (double)q[i] - r[i];
        noise[o] += d * d;
      }
    }
  }
  qllc_probe_free(p);
  if (g) qllc_graph_free(g);
  qllc_prec_map_free(map);
  s->evals++;
  if (st != QLLC_OK) {
    free(e), free(noise);
    return st;
  }
  memcpy(e->lev, lev, sizeof *lev * (size_t)s->nc);
  e->noise = noise;
  e->next = s->seen;
  s->seen = e;
  *noise_out = noise;
  return QLLC_OK;
}

/* The smallest output SQNR for these noises. */
static double min_db(const search *s, const double *noise) {
  double db = INFINITY;
  for (int o = 0; o < s->n_out; o++) db = fmin(db, qllc_sqnr_db(s->sig[o], noise[o]));
  return db;
}

/* Measures the configuration and says whether it reaches the target (*db: its SQNR). */
static qllc_status reaches(search *s, const int *lev, double target_db, int *ok, double *db, qllc_diag *diag) {
  const double *noise;
  qllc_status st = measure(s, lev, &noise, diag);
  if (st != QLLC_OK) return st;
  *db = min_db(s, noise);
  *ok = *db >= target_db;
  return QLLC_OK;
}

/* The additive noise model's choice. Starting from every layer at the top (int16), lowers one layer a
 * level at a time, always the step that saves the most cost per share of the noise allowance it uses,
 * as long as the predicted noise of every output stays within allow[o] above the all-int16 noise. d[(i
 * * N_LV + l) * n_out + o]: output o's extra noise measured with layer i alone at level l (the others at
 * int16); the extras of several lowered layers are assumed to add up. */
static void choose(const search *s, const double *d, const double *allow, int *lev, double *used) {
  int nc = s->nc, n_out = s->n_out;
  for (int i = 0; i < nc; i++) lev[i] = LV_INT16;
  for (int o = 0; o < n_out; o++) used[o] = 0;
  for (;;) {
    int bi = -1, bl = 0;
    double beff = -1, bsave = 0;
    for (int i = 0; i < nc; i++) {
      const cand *x = &s->c[i];
      for (int l = LV_INT8; l < lev[i]; l++) {
        if (l == LV_16X8 && !x->fused) continue;
        double share = 0;
        int fits = 1;
        for (int o = 0; o < n_out; o++) {
          double add = d[((size_t)i * N_LV + (size_t)l) * (size_t)n_out + (size_t)o] -
                       d[((size_t)i * N_LV + (size_t)lev[i]) * (size_t)n_out + (size_t)o];
          if (add < 0) add = 0;
          if (used[o] + add > allow[o]) fits = 0;
          share = fmax(share, allow[o] > 0 ? add / allow[o] : add > 0 ? INFINITY : 0);
        }
        double save = lv_cost(x, lev[i]) - lv_cost(x, l);
        if (!fits || save <= 0) continue;
        double eff = save / (share + 1e-9);
        if (eff > beff || (eff == beff && save > bsave)) beff = eff, bsave = save, bi = i, bl = l;
      }
    }
    if (bi < 0) return;
    for (int o = 0; o < n_out; o++) {
      double add = d[((size_t)bi * N_LV + (size_t)bl) * (size_t)n_out + (size_t)o] -
                   d[((size_t)bi * N_LV + (size_t)lev[bi]) * (size_t)n_out + (size_t)o];
      used[o] += add > 0 ? add : 0;
    }
    lev[bi] = bl;
  }
}

/* A time in ns as "12.3 ns", "4.56 us" or "7.89 ms". */
static const char *time_str(double ns, char *buf, size_t size) {
  if (fabs(ns) < 1e3) snprintf(buf, size, "%.1f ns", ns);
  else if (fabs(ns) < 1e6) snprintf(buf, size, "%.2f us", ns / 1e3);
  else snprintf(buf, size, "%.2f ms", ns / 1e6);
  return buf;
}

static void macs_str(double v, char *buf, size_t size) {
  if (v >= 1e9) snprintf(buf, size, "%.2f G", v / 1e9);
  else if (v >= 1e6) snprintf(buf, size, "%.2f M", v / 1e6);
  else if (v >= 1e3) snprintf(buf, size, "%.1f k", v / 1e3);
  else snprintf(buf, size, "%.0f", v);
}

/* Candidate indices by a[i], largest first (ties by name: the same order every run). Insertion sort:
 * no global state, searches may run in several threads. */
static void order_by(const cand *c, const double *a, int *order, int n) {
  for (int i = 0; i < n; i++) order[i] = i;
  for (int i = 1; i < n; i++) {
    int v = order[i], j = i;
    while (j > 0 && (a[v] > a[order[j - 1]] || (a[v] == a[order[j - 1]] && strcmp(c[v].node, c[order[j - 1]].node) < 0)))
      order[j] = order[j - 1], j--;
    order[j] = v;
  }
}

/* The error for a target that every layer at int16 (lev) misses: what limits that configuration,
 * from `qllc compare`'s measurement of it (each value against float on the same samples): the model
 * outputs and the three worst other values, each with the node that computes it and the share of its
 * elements clipped at its calibrated range. */
static qllc_status unreachable(search *s, const int *lev, double target_db, double base_db, double top_db,
                               qllc_diag *diag) {
  qllc_graph *fg = NULL, *qg = NULL;
  qllc_compare_result *r = NULL;
  qllc_prec_map *map = lev_map(s, lev);
  qllc_status st = map ? QLLC_OK : qllc_fail(diag, QLLC_ERR_NOMEM, NULL, "out of memory");
  if (st == QLLC_OK) st = qllc_graph_copy(s->fg, &fg, diag);
  if (st == QLLC_OK) st = qllc_graph_copy(s->fg, &qg, diag);
  if (st == QLLC_OK) st = s->quantize(s->qctx, qg, map, diag);
  if (st == QLLC_OK) st = qllc_quant_compare(fg, qg, s->ds, s->h, &r, diag);
  char names[1024] = "";
  for (int pass = 0, named = 0; st == QLLC_OK && pass < 2; pass++)
    for (int i = 0; i < r->n_rows && (pass == 0 || named < 3); i++) {
      const qllc_compare_row *w = &r->rows[i];
      if (w->is_output != (pass == 0) || !w->node) continue;
      size_t l = strlen(names);
      snprintf(names + l, sizeof names - l, "%s'%s' (%s %s) %.1f dB, %.3f%% clipped", l ? ", " : "", w->node, w->op,
               pass == 0 ? "output" : "computes", w->sqnr_db, 100.0 * w->saturated);
      if (pass) named++;
    }
  if (st == QLLC_OK)
    st = qllc_fail(diag, QLLC_ERR_INVALID, NULL,
                   "--min-sqnr %.1f dB cannot be reached: int8 gives %.1f dB, every layer at int16 %.1f dB; "
                   "there the layers limiting it are %s (a clipped share: values beyond the calibrated range; "
                   "nodes kept in float and the calibration ranges limit the rest)",
                   target_db, base_db, top_db, names[0] ? names : "none");
  qllc_compare_result_free(r);
  if (fg) qllc_graph_free(fg);
  if (qg) qllc_graph_free(qg);
  qllc_prec_map_free(map);
  return st;
}

/* The candidate whose precision node `name` of the int8 graph base follows: itself, or for a node that
 * only passes its input on (views, max pool, Pad, clamps: QLLC_QK_SAME), the candidate computing that
 * input, through such nodes; -1 when none (the graph input's quantize, the outputs' dequantize). */
static int owner(const qllc_graph *base, const cand *c, int nc, const char *name) {
  const qllc_node *n = NULL;
  for (int k = 0; k < base->n_nodes && !n; k++)
    if (base->nodes[k]->name && !strcmp(base->nodes[k]->name, name)) n = base->nodes[k];
  for (int depth = 0; n && depth < 64; depth++) {
    for (int i = 0; i < nc; i++)
      if (!strcmp(c[i].node, n->name)) return i;
    const qllc_qnode *q = n->quant;
    if (!q || q->kind != QLLC_QK_SAME || n->n_in < 1 || !n->in[0]) return -1;
    n = n->in[0]->producer;
  }
  return -1;
}

/* Each layer's time at each level (c[i].ns, c[i].timed): the program with every layer at int8, at 16x8
 * (int16 where a layer has no 16x8) and at int16, each timed by the timer (qllc bench's per-layer times:
 * the kernel calls of a layer's node, and of the nodes that follow its precision, by node name);
 * whole[l]: each program's median time. */
static qllc_status time_levels(search *s, const qllc_graph *base, cand *c, int nc, const qllc_search_timer *timer,
                               double *whole, char *cpu, size_t cpu_size, qllc_diag *diag) {
  int *lev = calloc((size_t)nc + 1, sizeof *lev);
  if (!lev) return qllc_fail(diag, QLLC_ERR_NOMEM, NULL, "out of memory");
  qllc_status st = QLLC_OK;
  static const char *const what[N_LV] = {"timing every layer at int8", "timing every layer at 16x8",
                                         "timing every layer at int16"};
  for (int l = 0; l < N_LV && st == QLLC_OK; l++) {
    for (int i = 0; i < nc; i++) lev[i] = l == LV_16X8 && !c[i].fused ? LV_INT16 : l;
    qllc_prec_map *map = lev_map(s, lev);
    qllc_bench_result *r = NULL;
    s->phase = what[l];
    progress(s, NULL);
    st = map ? timer->time(timer->ctx, map, &r, diag) : qllc_fail(diag, QLLC_ERR_NOMEM, NULL, "out of memory");
    for (int i = 0; st == QLLC_OK && i < nc; i++) c[i].ns[l] = 0;
    for (int k = 0; st == QLLC_OK && k < r->n_layers; k++) {
      int i = owner(base, c, nc, r->layers[k].node);
      if (i >= 0) c[i].ns[l] += r->layers[k].ns;
    }
    if (st == QLLC_OK) {
      whole[l] = r->median_ns;
      snprintf(cpu, cpu_size, "%s", r->cpu);
    }
    qllc_bench_result_free(r);
    qllc_prec_map_free(map);
  }
  for (int i = 0; st == QLLC_OK && i < nc; i++) c[i].timed = 1;
  free(lev);
  return st;
}

qllc_status qllc_precision_search(const qllc_graph *fg, const qllc_graph *base, qllc_dataset *ds, double target_db,
                                  qllc_quantize_fn quantize, void *qctx, const qllc_probe_hooks *h,
                                  const qllc_search_timer *timer, qllc_prec_map **out, char **summary,
                                  qllc_diag *diag) {
  double whole[N_LV] = {0, 0, 0}, chosen_ns = 0, slower_ns = 0;
  char cpu[64] = "";
  *out = NULL;
  *summary = NULL;
  search s = {.fg = fg, .ds = ds, .h = h, .quantize = quantize, .qctx = qctx, .samples = qllc_dataset_samples(ds),
              .o = h ? h->opts : NULL, .phase = "the float outputs"};
  qllc_graph *g = NULL;
  qllc_probe *fp = NULL;
  cand *c = NULL;
  int *lev = NULL, *lev16 = NULL, *order = NULL, *first = NULL, nc = 0, searched = 0;
  double *d = NULL, *allow = NULL, *used = NULL, *key = NULL, *below = NULL, *tried = NULL;
  qllc_prec_map *best = NULL;
  char *text = NULL;
  size_t text_len = 0;
  FILE *t = NULL;
  /* the float outputs, once */
  qllc_status st = qllc_graph_copy(fg, &g, diag);
  if (st == QLLC_OK) st = qllc_probe_build(g, 0, h, &fp, diag);
  if (st != QLLC_OK) goto done;
  s.n_out = fg->n_outputs;
  s.ref = calloc((size_t)(s.samples * s.n_out) + 1, sizeof *s.ref);
  s.numel = calloc((size_t)s.n_out + 1, sizeof *s.numel);
  s.sig = calloc((size_t)s.n_out + 1, sizeof *s.sig);
  if (!s.ref || !s.numel || !s.sig) {
    st = qllc_fail(diag, QLLC_ERR_NOMEM, NULL, "out of memory");
    goto done;
  }
  for (int o = 0; o < s.n_out; o++) {
    s.numel[o] = qllc_value_numel(qllc_probe_value(fp, o));
    if (qllc_probe_value(fp, o)->elem != QLLC_ELEM_F32) {
      st = qllc_fail(diag, QLLC_ERR_UNSUPPORTED, NULL, "--min-sqnr: output '%s' is not float", qllc_probe_value(fp, o)->name);
      goto done;
    }
  }
  for (int64_t k = 0; k < s.samples && st == QLLC_OK; k++) {
    if ((st = qllc_probe_run(fp, ds, k, diag)) != QLLC_OK) break;
    for (int o = 0; o < s.n_out && st == QLLC_OK; o++) {
      float *r = malloc(sizeof *r * (size_t)(s.numel[o] ? s.numel[o] : 1));
      if (!r) st = qllc_fail(diag, QLLC_ERR_NOMEM, NULL, "out of memory");
      else memcpy(r, qllc_probe_value_data(fp, o), sizeof *r * (size_t)s.numel[o]);
      s.ref[k * s.n_out + o] = r;
      for (int64_t i = 0; r && i < s.numel[o]; i++) s.sig[o] += (double)r[i] * r[i];
    }
  }
  if (st != QLLC_OK) goto done;

  /* the candidates: nodes of the quantized base graph that compute */
  c = calloc((size_t)base->n_nodes + 1, sizeof *c);
  if (!c) {
    st = qllc_fail(diag, QLLC_ERR_NOMEM, NULL, "out of memory");
    goto done;
  }
  double total_macs = 0;
  for (int i = 0; i < base->n_nodes; i++) {
    const qllc_node *n = base->nodes[i];
    const qllc_qnode *q = n->quant;
    if (!q || q->kind == QLLC_QK_SAME || q->kind == QLLC_QK_CUSTOM) continue;
    int found = 0; /* the node must be one of the float graph's (not one the quantizer made) */
    for (int k = 0; k < fg->n_nodes && !found; k++) found = !strcmp(fg->nodes[k]->name, n->name);
    if (!found) continue;
    cand *x = &c[nc++];
    x->node = n->name;
    x->fused = q->kind == QLLC_QK_FUSED;
    double outs = (double)qllc_value_numel(n->out[0]);
    if (q->kind == QLLC_QK_FUSED) {
      int64_t ch = q->channels > 0 ? q->channels : 1;
      x->macs = outs * (n->op == QLLC_OP_CHANNEL_AFFINE ? 1.0 : (double)qllc_value_numel(n->in[1]) / (double)ch);
    } else if (q->kind == QLLC_QK_MATMUL) {
      x->macs = outs * (double)n->in[0]->dims[n->in[0]->rank - 1];
    } else {
      x->macs = outs;
    }
    total_macs += x->macs;
  }
  s.c = c, s.nc = nc;
  size_t nd = (size_t)nc * N_LV * (size_t)s.n_out + 1;
  lev = calloc((size_t)nc + 1, sizeof *lev);
  lev16 = calloc((size_t)nc + 1, sizeof *lev16);
  order = calloc((size_t)nc + 1, sizeof *order);
  d = calloc(nd, sizeof *d);
  allow = calloc((size_t)s.n_out + 1, sizeof *allow);
  used = calloc((size_t)s.n_out + 1, sizeof *used);
  key = calloc((size_t)nc + 1, sizeof *key);
  first = calloc((size_t)nc + 1, sizeof *first);
  below = calloc((size_t)nc + 1, sizeof *below);
  tried = calloc((size_t)nc * N_LV + 1, sizeof *tried); /* timed: the SQNR measured at each cheaper level */
  t = open_memstream(&text, &text_len);
  if (!lev || !lev16 || !order || !d || !allow || !used || !key || !first || !below || !tried || !t) {
    st = qllc_fail(diag, QLLC_ERR_NOMEM, NULL, "out of memory");
    goto done;
  }
  /* 1. every layer at int8 */
  s.phase = "every layer at int8";
  double base_db, top_db = -INFINITY, got;
  int ok;
  for (int i = 0; i < nc; i++) lev[i] = LV_INT8;
  if ((st = reaches(&s, lev, target_db, &ok, &base_db, diag)) != QLLC_OK) goto done;
  fprintf(t, "precision search for --min-sqnr %.1f dB on %lld sample%s: int8 everywhere gives %.1f dB\n", target_db,
          (long long)s.samples, s.samples == 1 ? "" : "s", base_db);
  got = base_db;
  int all_top_needed = 0;
  if (!ok) {
    /* 2. every layer at int16: the most this search can reach */
    const double *n16;
    s.phase = "every layer at int16";
    for (int i = 0; i < nc; i++) lev[i] = LV_INT16;
    if ((st = measure(&s, lev, &n16, diag)) != QLLC_OK) goto done;
    top_db = min_db(&s, n16);
    if (top_db < target_db) {
      st = unreachable(&s, lev, target_db, base_db, top_db, diag);
      goto done;
    }
    /* the cost: each layer's time at each level where the target CPU is this machine */
    if (timer && (st = time_levels(&s, base, c, nc, timer, whole, cpu, sizeof cpu, diag)) != QLLC_OK) goto done;
    /* 3. each layer alone lowered (to 16x8, to int8), the others at int16: what it adds to the noise */
    s.phase = "each layer alone a level lower";
    for (int i = 0; i < nc && st == QLLC_OK; i++) {
      for (int l = LV_INT8; l < LV_INT16 && st == QLLC_OK; l++) {
        if (l == LV_16X8 && !c[i].fused) continue;
        const double *ni;
        lev[i] = l;
        st = measure(&s, lev, &ni, diag);
        lev[i] = LV_INT16;
        for (int o = 0; st == QLLC_OK && o < s.n_out; o++)
          d[((size_t)i * N_LV + (size_t)l) * (size_t)s.n_out + (size_t)o] = fmax(ni[o] - n16[o], 0);
      }
    }
    if (st != QLLC_OK) goto done;
    /* 4. the model's choice, measured; when it falls short, again with a smaller allowance */
    for (int o = 0; o < s.n_out; o++) allow[o] = fmax(s.sig[o] / pow(10.0, target_db / 10.0) - n16[o], 0);
    s.phase = "the noise model's choice";
    for (int round = 0;; round++) {
      choose(&s, d, allow, lev, used);
      if ((st = reaches(&s, lev, target_db, &ok, &got, diag)) != QLLC_OK) goto done;
      if (ok) break;
      int top = 1;
      for (int i = 0; i < nc; i++) top &= lev[i] == LV_INT16;
      if (top || round == 3) { /* all int16 reaches the target */
        for (int i = 0; i < nc; i++) lev[i] = LV_INT16;
        got = top_db;
        break;
      }
      for (int o = 0; o < s.n_out; o++) allow[o] *= 0.5;
    }
    /* 5. measured: each raised layer, costliest first, lowered a level at a time while the target holds;
     *    pass after pass until one lowers nothing. That last pass measured each layer still raised a level
     *    lower, alone, in the final configuration (below[i]), and each missed: a local minimum. A layer a
     *    later pass lowers (the first pass tried it before others were lowered) is reported. */
    s.phase = "lowering the layers still raised";
    for (int pass = 0, changed = 1; changed; pass++) {
      changed = 0;
      for (int i = 0; i < nc; i++) key[i] = lv_cost(&c[i], lev[i]);
      order_by(c, key, order, nc);
      for (int k = 0; k < nc; k++) {
        int i = order[k];
        if (c[i].timed) { /* measured: every cheaper level (wider ones too), the cheapest first, until one holds */
          for (int moved = 1; moved;) {
            moved = 0;
            int cl[N_LV], n = 0;
            for (int l = LV_INT8; l < N_LV; l++)
              if (l != lev[i] && !(l == LV_16X8 && !c[i].fused) && lv_cost(&c[i], l) < lv_cost(&c[i], lev[i])) cl[n++] = l;
            if (n == 2 && lv_cost(&c[i], cl[1]) < lv_cost(&c[i], cl[0])) cl[0] ^= cl[1], cl[1] ^= cl[0], cl[0] ^= cl[1];
            for (int q = 0; q < n && !moved; q++) {
              int was = lev[i];
              double db;
              lev[i] = cl[q];
              if ((st = reaches(&s, lev, target_db, &ok, &db, diag)) != QLLC_OK) goto done;
              if (ok) got = db, changed = moved = 1;
              else lev[i] = was, tried[(size_t)i * N_LV + (size_t)cl[q]] = db;
            }
          }
          continue;
        }
        while (lv_down(&c[i], lev[i]) >= 0) {
          int was = lev[i];
          lev[i] = lv_down(&c[i], was);
          if ((st = reaches(&s, lev, target_db, &ok, &below[i], diag)) != QLLC_OK) goto done;
          if (!ok) {
            lev[i] = was;
            break;
          }
          got = below[i];
          changed = 1;
        }
      }
      if (pass == 0)
        for (int i = 0; i < nc; i++) first[i] = lev[i];
    }
    searched = 1;
    all_top_needed = 1;
    for (int i = 0; i < nc; i++) all_top_needed &= lev[i] == LV_INT16;
  }
  best = lev_map(&s, lev);
  if (!best) {
    st = qllc_fail(diag, QLLC_ERR_NOMEM, NULL, "out of memory");
    goto done;
  }
  if (timer) { /* the chosen mix, timed whole */
    qllc_bench_result *r = NULL;
    s.phase = "timing the chosen mix";
    progress(&s, NULL);
    if ((st = timer->time(timer->ctx, best, &r, diag)) != QLLC_OK) goto done;
    chosen_ns = r->median_ns;
    if (!cpu[0]) snprintf(cpu, sizeof cpu, "%s", r->cpu);
    qllc_bench_result_free(r);
    /* the per-layer model leaves out the requantize nodes between levels: a mix measured slower than
       every layer at int16 (which reaches the target too) is timed again against it, in turns (int16,
       mix, int16, mix: the best of each, so a burst of load on the machine does not decide), and gives
       way when it stays slower */
    if (searched && !all_top_needed && whole[LV_INT16] > 0 && chosen_ns > whole[LV_INT16]) {
      for (int i = 0; i < nc; i++) lev16[i] = LV_INT16;
      qllc_prec_map *m16 = lev_map(&s, lev16);
      st = m16 ? QLLC_OK : qllc_fail(diag, QLLC_ERR_NOMEM, NULL, "out of memory");
      s.phase = "timing the chosen mix against every layer at int16";
      progress(&s, NULL);
      for (int turn = 0; turn < 4 && st == QLLC_OK; turn++) {
        if ((st = timer->time(timer->ctx, turn % 2 ? best : m16, &r, diag)) != QLLC_OK) break;
        double *v = turn % 2 ? &chosen_ns : &whole[LV_INT16];
        if (r->median_ns < *v) *v = r->median_ns;
        qllc_bench_result_free(r);
      }
      qllc_prec_map_free(m16);
      if (st != QLLC_OK) goto done;
    }
    if (searched && !all_top_needed && whole[LV_INT16] > 0 && chosen_ns > whole[LV_INT16]) {
      slower_ns = chosen_ns;
      for (int i = 0; i < nc; i++) lev[i] = LV_INT16;
      all_top_needed = 1;
      got = top_db;
      chosen_ns = whole[LV_INT16];
      qllc_prec_map_free(best);
      if (!(best = lev_map(&s, lev))) {
        st = qllc_fail(diag, QLLC_ERR_NOMEM, NULL, "out of memory");
        goto done;
      }
    }
  }
  double wide = 0, w16 = 0;
  for (int i = 0; i < nc; i++) {
    if (lev[i] != LV_INT8) wide += c[i].macs;
    if (lev[i] == LV_INT16 && c[i].fused) w16 += c[i].macs;
  }
  char w1[32], w2[32], w3[32], w4[32];
  macs_str(wide, w1, sizeof w1);
  macs_str(total_macs, w2, sizeof w2);
  macs_str(w16, w3, sizeof w3);
  macs_str(wide - w16, w4, sizeof w4);
  if (best->n == 0) fprintf(t, "every layer stays int8\n");
  for (int i = 0; i < best->n; i++) fprintf(t, "  %-40s %s\n", best->nodes[i], qllc_nprec_name(best->prec[i]));
  fprintf(t, "outputs: %.1f dB (target %.1f); %d of %d layers wider than int8; %s of %s MACs wide (%.1f%%): %s with int16 "
          "weights (%.1f%%), %s with int8 weights or in rescales",
          got, target_db, best->n, nc, w1, w2, total_macs > 0 ? 100.0 * wide / total_macs : 0.0, w3,
          total_macs > 0 ? 100.0 * w16 / total_macs : 0.0, w4);
  if (top_db > -INFINITY) fprintf(t, "; every layer at int16: %.1f dB", top_db);
  fprintf(t, "; %d measurements\n", s.evals);
  if (!timer) {
    fprintf(t, "cost: wide MACs (the target CPU is not this machine: the JIT, `qllc run` or `qllc bench`, or --cpu native, "
            "would cost each layer by its measured time)\n");
  } else if (!searched) {
    char a[32];
    fprintf(t, "cost: measured time (the target CPU is this machine, %s); int8 reaches the target: %s per inference\n",
            cpu, time_str(chosen_ns, a, sizeof a));
  } else {
    double model = 0;
    for (int i = 0; i < nc; i++) model += c[i].ns[lev[i]];
    fprintf(t, "cost: measured time (the target CPU is this machine, %s): each layer timed at int8, 16x8 and int16 "
            "by qllc bench's per-layer timing (%d runs of each program)\n", cpu, TIME_RUNS);
    char a[32], b[32], e[32], f[32];
    for (int i = 0; i < nc; i++) {
      fprintf(t, "  time %s: int8 %s", c[i].node, time_str(c[i].ns[LV_INT8], a, sizeof a));
      if (c[i].fused) fprintf(t, ", 16x8 %s", time_str(c[i].ns[LV_16X8], a, sizeof a));
      fprintf(t, ", int16 %s; chosen %s\n", time_str(c[i].ns[LV_INT16], a, sizeof a), qllc_nprec_name(lv_prec[lev[i]]));
    }
    fprintf(t, "time: the chosen mix %s per inference (measured; its layers' times add up to %s); every layer at int16 "
            "%s, at int8 %s\n", time_str(chosen_ns, a, sizeof a), time_str(model, b, sizeof b),
            time_str(whole[LV_INT16], e, sizeof e), time_str(whole[LV_INT8], f, sizeof f));
    if (slower_ns > 0)
      fprintf(t, "the mix the layers' times chose measured %s, slower than every layer at int16: every layer at int16 "
              "it is\n", time_str(slower_ns, a, sizeof a));
  }
  int n_later = 0;
  for (int i = 0; searched && !slower_ns && i < nc; i++) n_later += lev[i] != first[i];
  if (n_later) {
    fprintf(t, "lowered when measured again in the final configuration (the first pass tried them before others were lowered):");
    for (int i = 0, k = 0; i < nc; i++)
      if (lev[i] != first[i])
        fprintf(t, "%s %s from %s to %s", k++ ? "," : "", c[i].node, qllc_nprec_name(lv_prec[first[i]]),
                qllc_nprec_name(lv_prec[lev[i]]));
    fprintf(t, "\n");
  }
  if (searched && timer && !slower_ns) { /* measured cost: why no layer can be cheaper */
    fprintf(t, "no layer can be cheaper: each one at each level that costs less (the others as chosen) misses %.1f dB:",
            target_db);
    for (int i = 0, k = 0; i < nc; i++) {
      int any = 0;
      for (int l = LV_INT8; l < N_LV; l++)
        if (l != lev[i] && !(l == LV_16X8 && !c[i].fused) && lv_cost(&c[i], l) < lv_cost(&c[i], lev[i])) {
          double db = tried[(size_t)i * N_LV + (size_t)l];
          if (any) fprintf(t, " and at %s %.1f dB", qllc_nprec_name(lv_prec[l]), db);
          else fprintf(t, "%s %s at %s %.1f dB", k++ ? "," : "", c[i].node, qllc_nprec_name(lv_prec[l]), db);
          any = 1;
        }
    }
    fprintf(t, "\n");
  } else if (searched && best->n && !slower_ns) { /* say why each wide layer stays wide: a level lower, alone, measured to miss the target */
    if (all_top_needed)
      fprintf(t, "only every layer at int16 reaches %.1f dB: any one of them a level lower (the others int16) misses it:", target_db);
    else
      fprintf(t, "no layer wider than int8 can be narrower: each one a level lower (the others as chosen) misses %.1f dB:",
              target_db);
    for (int i = 0, k = 0; i < nc; i++)
      if (lev[i] != LV_INT8 && lv_down(&c[i], lev[i]) >= 0)
        fprintf(t, "%s %s at %s %.1f dB", k++ ? "," : "", c[i].node, qllc_nprec_name(lv_prec[lv_down(&c[i], lev[i])]),
                below[i]);
    for (int i = 0, k = 0; i < nc; i++)
      if (lev[i] != LV_INT8 && lv_down(&c[i], lev[i]) < 0)
        fprintf(t, "%s %s at %s: no narrower level is faster", k++ ? ";" : ";", c[i].node, qllc_nprec_name(lv_prec[lev[i]]));
    fprintf(t, "\n");
  }

done:
  if (s.o && s.o->progress) s.o->progress(s.o->progress_ctx, NULL);
  if (t) fclose(t);
  for (int64_t i = 0; s.ref && i < s.samples * s.n_out; i++) free(s.ref[i]);
  free(s.ref);
  free(s.numel);
  free(s.sig);
  while (s.seen) {
    memo *e = s.seen;
    s.seen = e->next;
    free(e->noise);
    free(e);
  }
  free(c), free(lev), free(lev16), free(order), free(d), free(allow), free(used), free(key), free(first), free(below), free(tried);
  qllc_probe_free(fp);
  if (g) qllc_graph_free(g);
  if (st != QLLC_OK) {
    qllc_prec_map_free(best);
    free(text);
    return st;
  }
  *out = best;
  *summary = text;
  return QLLC_OK;
}
