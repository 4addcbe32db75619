/* src/quant/mixed.c: automatic mixed precision (--min-sqnr) and the precision map file (issue 13).
 *
 * The search (qllc_precision_search) starts from every layer at int8 and raises layers until every
 * model output reaches the target SQNR against float on the search samples:
 *  1. the candidates are the nodes that compute (fused layers, matmuls, rescales, tables, softmax; not
 *     the views and clamps, which follow their input); each one's cost is its multiply-accumulates (a
 *     fused layer: output elements x K; others: output elements);
 *  2. each candidate alone is raised (16x8 for a fused layer, whose int16-activation int8-weight kernel
 *     exists; int16 for the others) and the outputs' SQNR measured: its gain;
 *  3. candidates are ordered by gain per cost, and the shortest prefix that reaches the target is found
 *     by bisection (a measurement each step); if raising every candidate to 16x8 is not enough, the
 *     fused layers of that order are raised further to int16, again the shortest prefix;
 *  4. if even every layer at int16 misses the target, the search fails naming the layers that cost most;
 *  5. the prefix raises whole layers and may overshoot: each raised layer, costliest first, is lowered a
 *     step (int16 -> 16x8 -> int8) while the target still holds (two passes, a measurement each).
 * Each measurement quantizes a copy of the float graph with the map, JIT-compiles it and runs the
 * samples; the float outputs are computed once.
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

typedef struct cand {
  const char *node;   /* in the float graph */
  int fused;          /* has a 16x8 kernel (conv, FC, channel affine) */
  double macs;
  double gain;        /* SQNR with it alone raised, minus the int8 SQNR */
} cand;

typedef struct search {
  const qllc_graph *fg;
  qllc_dataset *ds;
  const qllc_probe_hooks *h;
  qllc_quantize_fn quantize;
  void *qctx;
  int n_out;
  int64_t samples;
  float **ref;        /* [samples * n_out] float outputs */
  int64_t *numel;     /* [n_out] */
  int evals;
} search;

/* The smallest output SQNR with the graph quantized by map. */
static qllc_status measure(search *s, const qllc_prec_map *map, double *db, qllc_diag *diag) {
  qllc_graph *g = NULL;
  qllc_probe *p = NULL;
  qllc_status st = qllc_quant_graph_copy(s->fg, &g, diag);
  if (st == QLLC_OK) st = s->quantize(s->qctx, g, map, diag);
  if (st == QLLC_OK) st = qllc_probe_build(g, 0, s->h, &p, diag);
  double *sig = calloc((size_t)s->n_out + 1, sizeof *sig), *noise = calloc((size_t)s->n_out + 1, sizeof *noise);
  if (st == QLLC_OK && (!sig || !noise)) st = qllc_fail(diag, QLLC_ERR_NOMEM, NULL, "out of memory");
  for (int64_t k = 0; k < s->samples && st == QLLC_OK; k++) {
    if ((st = qllc_probe_run(p, s->ds, k, diag)) != QLLC_OK) break;
    for (int o = 0; o < s->n_out; o++) {
      const float *q = qllc_probe_value_data(p, o), *r = s->ref[k * s->n_out + o];
      for (int64_t i = 0; i < s->numel[o]; i++) {
        double e = (double)q[i] - r[i];
        sig[o] += (double)r[i] * r[i];
        noise[o] += e * e;
      }
    }
  }
  *db = INFINITY;
  for (int o = 0; st == QLLC_OK && o < s->n_out; o++) *db = fmin(*db, qllc_sqnr_db(sig[o], noise[o]));
  free(sig);
  free(noise);
  qllc_probe_free(p);
  if (g) qllc_graph_free(g);
  s->evals++;
  return st;
}

/* A map raising the first k16x8 candidates of `order` to 16x8 (int16 where there is no 16x8) and the
 * first k16 fused ones of them further to int16. */
static qllc_prec_map *make_map(const cand *c, const int *order, int n, int k168, int k16) {
  qllc_prec_map *m = map_new(n);
  if (!m) return NULL;
  int fused_seen = 0;
  for (int i = 0; i < n && i < k168; i++) {
    const cand *x = &c[order[i]];
    qllc_nprec p = x->fused ? QLLC_NP_16X8 : QLLC_NP_INT16;
    if (x->fused && fused_seen++ < k16) p = QLLC_NP_INT16;
    if (map_add(m, x->node, p) != 0) {
      qllc_prec_map_free(m);
      return NULL;
    }
  }
  return m;
}

static int c_fused(const cand *c, int nc, const char *node) {
  for (int k = 0; k < nc; k++)
    if (!strcmp(c[k].node, node)) return c[k].fused;
  return 0;
}

/* Is candidate a before b: more gain per MAC, then by name (a total order: the same map every run). */
static int before(const cand *a, const cand *b) {
  double va = a->gain / fmax(a->macs, 1), vb = b->gain / fmax(b->macs, 1);
  if (va != vb) return va > vb;
  return strcmp(a->node, b->node) < 0;
}

/* Insertion sort of the candidate indices (no global state: searches may run in several threads). */
static void sort_order(const cand *c, int *order, int n) {
  for (int i = 1; i < n; i++) {
    int v = order[i], j = i;
    while (j > 0 && before(&c[v], &c[order[j - 1]])) order[j] = order[j - 1], j--;
    order[j] = v;
  }
}

static void macs_str(double v, char *buf, size_t size) {
  if (v >= 1e9) snprintf(buf, size, "%.2f G", v / 1e9);
  else if (v >= 1e6) snprintf(buf, size, "%.2f M", v / 1e6);
  else if (v >= 1e3) snprintf(buf, size, "%.1f k", v / 1e3);
  else snprintf(buf, size, "%.0f", v);
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
  int *order = NULL, nc = 0;
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
  if (!s.ref || !s.numel) {
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
    }
  }
  if (st != QLLC_OK) goto done;

  /* the candidates: nodes of the quantized base graph that compute */
  c = calloc((size_t)base->n_nodes + 1, sizeof *c);
  order = calloc((size_t)base->n_nodes + 1, sizeof *order);
  if (!c || !order) {
    st = qllc_fail(diag, QLLC_ERR_NOMEM, NULL, "out of memory");
    goto done;
  }
  double total_macs = 0, fused_macs = 0;
  for (int i = 0; i < base->n_nodes; i++) {
    const qllc_node *n = base->nodes[i];
    const qllc_qnode *q = n->quant;
    if (!q || q->kind == QLLC_QK_SAME || q->kind == QLLC_QK_CUSTOM) continue;
    int found = 0; /* the node must be one of the float graph's (not one the quantizer made) */
    for (int k = 0; k < fg->n_nodes && !found; k++) found = !strcmp(fg->nodes[k]->name, n->name);
    if (!found) continue;
    cand *x = &c[nc];
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
    if (x->fused) fused_macs += x->macs;
    order[nc] = nc;
    nc++;
  }
  double base_db, all168_db = -INFINITY, all16_db = -INFINITY;
  qllc_prec_map *empty = map_new(0);
  if (!empty) {
    st = qllc_fail(diag, QLLC_ERR_NOMEM, NULL, "out of memory");
    goto done;
  }
  st = measure(&s, empty, &base_db, diag);
  qllc_prec_map_free(empty);
  if (st != QLLC_OK) goto done;
  t = open_memstream(&text, &text_len);
  if (!t) {
    st = qllc_fail(diag, QLLC_ERR_NOMEM, NULL, "out of memory");
    goto done;
  }
  fprintf(t, "precision search for --min-sqnr %.1f dB on %lld sample%s: int8 everywhere gives %.1f dB\n", target_db,
          (long long)s.samples, s.samples == 1 ? "" : "s", base_db);
  int k168 = 0, k16 = 0;
  double got = base_db;
  if (base_db < target_db) {
    for (int i = 0; i < nc && st == QLLC_OK; i++) { /* each candidate alone */
      qllc_prec_map *m = make_map(c, &i, 1, 1, 0);
      double db;
      if (!m) st = qllc_fail(diag, QLLC_ERR_NOMEM, NULL, "out of memory");
      else st = measure(&s, m, &db, diag);
      qllc_prec_map_free(m);
      c[i].gain = st == QLLC_OK ? fmax(db - base_db, 0) + 1e-6 : 0;
    }
    if (st != QLLC_OK) goto done;
    sort_order(c, order, nc);
    /* every candidate at 16x8, then at int16 */
    qllc_prec_map *m = make_map(c, order, nc, nc, 0);
    if (!m || (st = measure(&s, m, &all168_db, diag)) != QLLC_OK) {
      qllc_prec_map_free(m);
      if (st == QLLC_OK) st = qllc_fail(diag, QLLC_ERR_NOMEM, NULL, "out of memory");
      goto done;
    }
    qllc_prec_map_free(m);
    int level = all168_db >= target_db ? 0 : 1;
    if (level == 1) {
      m = make_map(c, order, nc, nc, nc);
      if (!m || (st = measure(&s, m, &all16_db, diag)) != QLLC_OK) {
        qllc_prec_map_free(m);
        if (st == QLLC_OK) st = qllc_fail(diag, QLLC_ERR_NOMEM, NULL, "out of memory");
        goto done;
      }
      qllc_prec_map_free(m);
      if (all16_db < target_db) {
        char names[768] = "";
        for (int i = 0; i < nc && i < 4; i++) {
          size_t l = strlen(names);
          snprintf(names + l, sizeof names - l, "%s'%s' (+%.1f dB alone)", i ? ", " : "", c[order[i]].node,
                   c[order[i]].gain);
        }
        st = qllc_fail(diag, QLLC_ERR_INVALID, NULL,
                       "--min-sqnr %.1f dB cannot be reached: int8 gives %.1f dB, every layer at int16 %.1f dB "
                       "(the layers costing most: %s; nodes kept in float and the calibration ranges limit the rest)",
                       target_db, base_db, all16_db, nc ? names : "none");
        goto done;
      }
    }
    /* the shortest prefix reaching the target (bisection; the full prefix reaches it) */
    int lo = 0, hi = nc; /* level 0: k168 in (lo, hi]; level 1: k16 over the fused ones, all at 16x8 */
    int nf = 0;
    for (int i = 0; i < nc; i++) nf += c[i].fused;
    if (level == 1) hi = nf;
    double hi_db = level ? all16_db : all168_db;
    while (lo < hi && st == QLLC_OK) {
      int mid = (lo + hi) / 2;
      m = level ? make_map(c, order, nc, nc, mid) : make_map(c, order, nc, mid, 0);
      double db;
      if (!m) st = qllc_fail(diag, QLLC_ERR_NOMEM, NULL, "out of memory");
      else st = measure(&s, m, &db, diag);
      qllc_prec_map_free(m);
      if (st != QLLC_OK) break;
      if (db >= target_db) hi = mid, hi_db = db;
      else lo = mid + 1;
    }
    if (st != QLLC_OK) goto done;
    k168 = level ? nc : hi;
    k16 = level ? hi : 0;
    got = hi_db;
  }
  best = make_map(c, order, nc, k168, k16);
  if (!best) {
    st = qllc_fail(diag, QLLC_ERR_NOMEM, NULL, "out of memory");
    goto done;
  }
  /* 5. pruning: the prefix raises whole layers and may overshoot; each raised layer, costliest first,
     is lowered one step (int16 -> 16x8 -> int8) as long as the target still holds (two passes) */
  {
    char *tried = calloc((size_t)best->n + 1, 1);
    if (!tried) {
      st = qllc_fail(diag, QLLC_ERR_NOMEM, NULL, "out of memory");
      goto done;
    }
    qllc_nprec *pr = (qllc_nprec *)best->prec;
    for (int pass = 0; pass < 2 && st == QLLC_OK; pass++) {
      memset(tried, 0, (size_t)best->n);
      for (;;) {
        int at = -1; /* the costliest raised layer not tried in this pass */
        double most = -1;
        for (int i = 0; i < best->n; i++) {
          double macs = 0;
          for (int k = 0; k < nc; k++)
            if (!strcmp(c[k].node, best->nodes[i])) macs = c[k].macs;
          if (tried[i] || pr[i] == QLLC_NP_INT8 || macs <= most) continue;
          most = macs, at = i;
        }
        if (at < 0) break;
        tried[at] = 1;
        qllc_nprec was = pr[at];
        pr[at] = was == QLLC_NP_INT16 && c_fused(c, nc, best->nodes[at]) ? QLLC_NP_16X8 : QLLC_NP_INT8;
        double db;
        if ((st = measure(&s, best, &db, diag)) != QLLC_OK) break;
        if (db >= target_db) got = db; /* keep it lower */
        else pr[at] = was;
      }
    }
    free(tried);
    if (st != QLLC_OK) goto done;
    int w = 0; /* drop the layers lowered back to int8 */
    for (int i = 0; i < best->n; i++) {
      if (pr[i] == QLLC_NP_INT8) {
        free((char *)best->nodes[i]);
        continue;
      }
      ((const char **)best->nodes)[w] = best->nodes[i];
      pr[w++] = pr[i];
    }
    best->n = w;
  }
  double wide = 0, w16 = 0;
  for (int i = 0; i < best->n; i++)
    for (int k = 0; k < nc; k++)
      if (!strcmp(c[k].node, best->nodes[i])) {
        wide += c[k].macs;
        if (best->prec[i] == QLLC_NP_INT16 && c[k].fused) w16 += c[k].macs;
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
  if (all16_db > -INFINITY) fprintf(t, "; every layer at int16: %.1f dB", all16_db);
  fprintf(t, "; %d measurements\n", s.evals);
  (void)fused_macs;

done:
  if (t) fclose(t);
  for (int64_t i = 0; s.ref && i < s.samples * s.n_out; i++) free(s.ref[i]);
  free(s.ref);
  free(s.numel);
  free(c);
  free(order);
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
