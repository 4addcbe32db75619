/* src/quant/mixed.c: automatic mixed precision (--min-sqnr) and the precision map file (issue 13).
 *
 * The search (qllc_precision_search) looks for the cheapest per-layer choice of int8, 16x8 (int16
 * activations, int8 weights) and int16 with which every model output reaches the target SQNR against
 * float on the search samples. The cost of a choice is its wide MACs: a layer's MACs once at 16x8 (or
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
 *     while the target holds, pass after pass until a pass lowers nothing. The last pass measured each
 *     layer still raised a level lower, alone, in the final configuration: the result is a local
 *     minimum, and the summary names each wide layer with that SQNR, below the target (when every
 *     layer stays at int16 it says so), and any layer a later pass lowered.
 * Each measurement quantizes a copy of the float graph with the map, JIT-compiles it (quickly:
 * QLLC_PROBE_QUICK, the kernels called rather than inlined, LLVM O1; the same results) and runs the
 * samples; the float outputs are computed once, and no configuration is measured twice.
 *
 * The map file (text, one line each):
 *   # comment
 *   qllc-precision-map 1
 *   graph_hash 0123456789abcdef
 *   node NAME int8|16x8|int16
 * Nodes not listed compute at the base precision (int8). Replaying the file quantizes exactly as the
 * search did, so the bundle's bytes are the same.
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <unistd.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "instrument.h"

void qllc_prec_map_free(qllc_prec_map *m) {
  if (!m) return;
  for (int i = 0; i < m->n; i++) free((char *)m->nodes[i]);
  free((void *)m->nodes);
  free((void *)m->prec);
  free(m);
}

static qllc_prec_map *map_new(int cap) {
  qllc_prec_map *m = calloc(1, sizeof *m);
  if (!m) return NULL;
  m->nodes = calloc((size_t)cap + 1, sizeof *m->nodes);
  m->prec = calloc((size_t)cap + 1, sizeof *m->prec);
  if (!m->nodes || !m->prec) {
    qllc_prec_map_free(m);
    return NULL;
  }
  return m;
}

static int map_add(qllc_prec_map *m, const char *node, qllc_nprec p) {
  size_t n = strlen(node) + 1;
  char *d = malloc(n);
  if (!d) return -1;
  memcpy(d, node, n);
  ((const char **)m->nodes)[m->n] = d;
  ((qllc_nprec *)m->prec)[m->n] = p;
  m->n++;
  return 0;
}

qllc_prec_map *qllc_prec_map_copy(const qllc_prec_map *src) {
  qllc_prec_map *m = map_new(src->n);
  for (int i = 0; m && i < src->n; i++)
    if (map_add(m, src->nodes[i], src->prec[i]) != 0) {
      qllc_prec_map_free(m);
      m = NULL;
    }
  return m;
}

const char *qllc_nprec_name(qllc_nprec p) {
  switch (p) {
  case QLLC_NP_INT8: return "int8";
  case QLLC_NP_16X8: return "16x8";
  case QLLC_NP_INT16: return "int16";
  default: return "base";
  }
}

qllc_status qllc_prec_map_write(const char *path, const qllc_prec_map *m, uint64_t graph_hash, const char *comment,
                                qllc_diag *diag) {
  char tmp[4096];
  snprintf(tmp, sizeof tmp, "%s.tmp", path);
  FILE *f = fopen(tmp, "w");
  if (!f) {
    qllc_fail(diag, QLLC_ERR_IO, NULL, "cannot write '%s': %s", path, strerror(errno));
    qllc_diag_set_file(diag, path);
    return QLLC_ERR_IO;
  }
  if (comment) {
    for (const char *c = comment; *c;) {
      const char *e = strchr(c, '\n');
      size_t len = e ? (size_t)(e - c) : strlen(c);
      fprintf(f, "# %.*s\n", (int)len, c);
      c += len + (e != NULL);
    }
  }
  fprintf(f, "qllc-precision-map 1\ngraph_hash %016llx\n", (unsigned long long)graph_hash);
  for (int i = 0; i < m->n; i++) fprintf(f, "node %s %s\n", m->nodes[i], qllc_nprec_name(m->prec[i]));
  if (fclose(f) != 0 || rename(tmp, path) != 0) {
    unlink(tmp);
    qllc_fail(diag, QLLC_ERR_IO, NULL, "cannot write '%s': %s", path, strerror(errno));
    qllc_diag_set_file(diag, path);
    return QLLC_ERR_IO;
  }
  return QLLC_OK;
}

qllc_status qllc_prec_map_read(const char *path, uint64_t graph_hash, qllc_prec_map **out, qllc_diag *diag) {
  *out = NULL;
  FILE *f = fopen(path, "r");
  if (!f) {
    qllc_fail(diag, QLLC_ERR_IO, NULL, "cannot read precision map '%s': %s", path, strerror(errno));
    qllc_diag_set_file(diag, path);
    return QLLC_ERR_IO;
  }
  char line[2048];
  int lineno = 0, cap = 0, magic = 0;
  qllc_prec_map *m = map_new(0);
  qllc_status st = m ? QLLC_OK : qllc_fail(diag, QLLC_ERR_NOMEM, NULL, "out of memory");
  while (st == QLLC_OK && fgets(line, sizeof line, f)) {
    lineno++;
    size_t len = strlen(line);
    while (len && (line[len - 1] == '\n' || line[len - 1] == '\r')) line[--len] = 0;
    if (!len || line[0] == '#') continue;
    if (!magic) {
      if (strcmp(line, "qllc-precision-map 1") != 0)
        st = qllc_fail(diag, QLLC_ERR_PARSE, NULL, "%s:%d: not a precision map (expected 'qllc-precision-map 1')", path, lineno);
      magic = 1;
      continue;
    }
    unsigned long long h;
    if (sscanf(line, "graph_hash %llx", &h) == 1) {
      if (h != graph_hash)
        st = qllc_fail(diag, QLLC_ERR_MISMATCH, NULL,
                       "%s: precision map was made for another model (graph hash %016llx in the map, %016llx for this model)",
                       path, h, (unsigned long long)graph_hash);
      continue;
    }
    char *sp = strrchr(line, ' ');
    if (strncmp(line, "node ", 5) != 0 || !sp || sp < line + 5) {
      st = qllc_fail(diag, QLLC_ERR_PARSE, NULL, "%s:%d: expected 'node NAME int8|16x8|int16'", path, lineno);
      break;
    }
    *sp = 0;
    qllc_nprec p = !strcmp(sp + 1, "int8") ? QLLC_NP_INT8 : !strcmp(sp + 1, "16x8") ? QLLC_NP_16X8
                   : !strcmp(sp + 1, "int16") ? QLLC_NP_INT16 : QLLC_NP_BASE;
    if (p == QLLC_NP_BASE) {
      st = qllc_fail(diag, QLLC_ERR_PARSE, NULL, "%s:%d: unknown precision '%s' (int8, 16x8, int16)", path, lineno, sp + 1);
      break;
    }
    if (m->n == cap) {
      cap = cap ? 2 * cap : 16;
      const char **nn = realloc((void *)m->nodes, sizeof *nn * (size_t)cap);
      if (nn) m->nodes = nn;
      qllc_nprec *np = realloc((void *)m->prec, sizeof *np * (size_t)cap);
      if (np) m->prec = np;
      if (!nn || !np) st = qllc_fail(diag, QLLC_ERR_NOMEM, NULL, "out of memory");
    }
    if (st == QLLC_OK && map_add(m, line + 5, p) != 0) st = qllc_fail(diag, QLLC_ERR_NOMEM, NULL, "out of memory");
  }
  fclose(f);
  if (st == QLLC_OK && !magic)
    st = qllc_fail(diag, QLLC_ERR_PARSE, NULL, "%s: empty precision map", path);
  if (st != QLLC_OK) {
    qllc_diag_set_file(diag, path);
    qllc_prec_map_free(m);
    return st;
  }
  *out = m;
  return QLLC_OK;
}

/* ---- the search ---------------------------------------------------------------------------------- */

/* A layer's level: int8, 16x8 (int16 activations, int8 weights: fused layers only) or int16. */
enum { LV_INT8, LV_16X8, LV_INT16, N_LV };
static const qllc_nprec lv_prec[N_LV] = {QLLC_NP_INT8, QLLC_NP_16X8, QLLC_NP_INT16};

typedef struct cand {
  const char *node;   /* in the float graph */
  int fused;          /* has a 16x8 kernel (conv, FC, channel affine) */
  double macs;
} cand;

/* What a layer costs at level l: no wide MACs at int8; its MACs once at 16x8 (or at int16 without
 * weights), twice at int16 with int16 weights (the int16 x int16 kernels do half the work per cycle). */
static double lv_cost(const cand *x, int l) {
  if (l == LV_INT8) return 0;
  return x->macs * (x->fused && l == LV_INT16 ? 2.0 : 1.0);
}

/* The next level down (LV_INT8 stays): a fused layer steps through 16x8, the others go to int8. */
static int lv_down(const cand *x, int l) { return l == LV_INT16 && x->fused ? LV_16X8 : LV_INT8; }

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
} search;

static qllc_prec_map *lev_map(const search *s, const int *lev) {
  qllc_prec_map *m = map_new(s->nc);
  for (int i = 0; m && i < s->nc; i++)
    if (lev[i] != LV_INT8 && map_add(m, s->c[i].node, lv_prec[lev[i]]) != 0) {
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
  qllc_status st = qllc_quant_graph_copy(s->fg, &g, diag);
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
  if (st == QLLC_OK) st = qllc_quant_graph_copy(s->fg, &fg, diag);
  if (st == QLLC_OK) st = qllc_quant_graph_copy(s->fg, &qg, diag);
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

qllc_status qllc_precision_search(const qllc_graph *fg, const qllc_graph *base, qllc_dataset *ds, double target_db,
                                  qllc_quantize_fn quantize, void *qctx, const qllc_probe_hooks *h,
                                  qllc_prec_map **out, char **summary, qllc_diag *diag) {
  *out = NULL;
  *summary = NULL;
  search s = {.fg = fg, .ds = ds, .h = h, .quantize = quantize, .qctx = qctx, .samples = qllc_dataset_samples(ds)};
  qllc_graph *g = NULL;
  qllc_probe *fp = NULL;
  cand *c = NULL;
  int *lev = NULL, *order = NULL, *first = NULL, nc = 0, searched = 0;
  double *d = NULL, *allow = NULL, *used = NULL, *key = NULL, *below = NULL;
  qllc_prec_map *best = NULL;
  char *text = NULL;
  size_t text_len = 0;
  FILE *t = NULL;
  /* the float outputs, once */
  qllc_status st = qllc_quant_graph_copy(fg, &g, diag);
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
  order = calloc((size_t)nc + 1, sizeof *order);
  d = calloc(nd, sizeof *d);
  allow = calloc((size_t)s.n_out + 1, sizeof *allow);
  used = calloc((size_t)s.n_out + 1, sizeof *used);
  key = calloc((size_t)nc + 1, sizeof *key);
  first = calloc((size_t)nc + 1, sizeof *first);
  below = calloc((size_t)nc + 1, sizeof *below);
  t = open_memstream(&text, &text_len);
  if (!lev || !order || !d || !allow || !used || !key || !first || !below || !t) {
    st = qllc_fail(diag, QLLC_ERR_NOMEM, NULL, "out of memory");
    goto done;
  }
  /* 1. every layer at int8 */
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
    for (int i = 0; i < nc; i++) lev[i] = LV_INT16;
    if ((st = measure(&s, lev, &n16, diag)) != QLLC_OK) goto done;
    top_db = min_db(&s, n16);
    if (top_db < target_db) {
      st = unreachable(&s, lev, target_db, base_db, top_db, diag);
      goto done;
    }
    /* 3. each layer alone lowered (to 16x8, to int8), the others at int16: what it adds to the noise */
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
    for (int pass = 0, changed = 1; changed; pass++) {
      changed = 0;
      for (int i = 0; i < nc; i++) key[i] = lv_cost(&c[i], lev[i]);
      order_by(c, key, order, nc);
      for (int k = 0; k < nc; k++) {
        int i = order[k];
        while (lev[i] != LV_INT8) {
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
  int n_later = 0;
  for (int i = 0; searched && i < nc; i++) n_later += lev[i] != first[i];
  if (n_later) {
    fprintf(t, "lowered when measured again in the final configuration (the first pass tried them before others were lowered):");
    for (int i = 0, k = 0; i < nc; i++)
      if (lev[i] != first[i])
        fprintf(t, "%s %s from %s to %s", k++ ? "," : "", c[i].node, qllc_nprec_name(lv_prec[first[i]]),
                qllc_nprec_name(lv_prec[lev[i]]));
    fprintf(t, "\n");
  }
  if (searched && best->n) { /* say why each wide layer stays wide: a level lower, alone, measured to miss the target */
    if (all_top_needed)
      fprintf(t, "only every layer at int16 reaches %.1f dB: any one of them a level lower (the others int16) misses it:", target_db);
    else
      fprintf(t, "no layer wider than int8 can be narrower: each one a level lower (the others as chosen) misses %.1f dB:",
              target_db);
    for (int i = 0, k = 0; i < nc; i++)
      if (lev[i] != LV_INT8)
        fprintf(t, "%s %s at %s %.1f dB", k++ ? "," : "", c[i].node, qllc_nprec_name(lv_prec[lv_down(&c[i], lev[i])]),
                below[i]);
    fprintf(t, "\n");
  }

done:
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
  free(c), free(lev), free(order), free(d), free(allow), free(used), free(key), free(first), free(below);
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
