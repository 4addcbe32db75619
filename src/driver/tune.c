/* src/driver/tune.c: a fused layer's kernel variant chosen by measurement where the target CPU is this
 * machine (the JIT, `--cpu native`), unless --no-tune.
 *
 * The lowering asks (qllc_lower_target.choose) for every fused layer that more than one catalogue row
 * could run on this CPU. The answer comes from timings keyed by (CPU, feature string, kernel, layer
 * shape): from the --tune-cache file, then from this process's cache. For another CPU than this
 * machine's, a --tune-cache file (measured on such a CPU) is the only source: a layer whose candidates
 * it does not all time keeps the rule table's choice. A layer whose candidates are not
 * all timed gets the rule table's choice and is remembered; after the lowering, every such layer is
 * timed at once and the graph is lowered again, now from timings (and again while a lowering sends a layer
 * to rows not yet timed: a conv refused its channel-last-only row, src/lower/lower.c):
 *   1. one extract graph (qllc_graph_extract) holds, for each layer shape to time, one copy of the layer
 *      per candidate, each copy forced to its candidate (force_choose), and is lowered as any graph: the
 *      weights packed in each candidate's layout, its scratch planned;
 *   2. each candidate's call runs natively (native.c: the variants compiled into the library by clang-19
 *      at -O3, no code generation) on fixed pseudo-random inputs, in turns with the other candidates (each
 *      call of the extract graph once per turn), one turn to warm up and then TUNE_RUNS, each call timed
 *      alone; its time is its fastest call.
 *      An ALT_NHWC row (conv2dcl) is timed with both ends channel-last, as it runs between two such layers
 *      (the case the rule table takes it for): timed with NCHW ends, its conversions made a layer that the
 *      layout pass would keep inside an NHWC chain leave it, which broke the chain for its neighbours;
 *   3. the fastest candidate runs, but the rule table's choice (candidate 0) stays unless another is at
 *      least TUNE_MARGIN faster: the native copies are not specialised on the layer's constants as the
 *      generated code is, so close timings do not order the generated code (on AMD Zen 5 the direct
 *      convs were 4-10 % apart natively; AMX against AVX-512 VNNI differ by 2x and more).
 * Variants give the same bits (the scalar kernel defines them), so a choice never changes an output,
 * only time. A bundle stays reproducible: with the same --tune-cache file the same choices are made, and
 * the file gets every new measurement.
 *
 * For tests only: QLLC_TUNE_SLOW=SUBSTRING[,SUBSTRING...] multiplies the measured time of every
 * candidate whose kernel name contains one of them by 1000 (a planted slow candidate).
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "driver/driver_internal.h"

#define TUNE_RUNS 5    /* timed turns of every candidate, after one to warm up */
#define TUNE_MAX_CANDS 16
#define TUNE_REFUSED 1e30 /* an AMX candidate where Linux refused the tile data: never chosen, not kept */
#define TUNE_ROUNDS 4     /* measure-and-lower rounds at most (qllc_drv_lower_tuned) */
#define TUNE_MARGIN 0.10 /* another row replaces the rule's choice when measured this much faster */

/* ---- the timings ----------------------------------------------------------------------------------- */

typedef struct timing {
  char *key; /* "cpu\tkernel\tshape" */
  double us;  /* microseconds of the fastest call */
} timing;

typedef struct timings {
  timing *t;
  int n, cap;
} timings;

static pthread_mutex_t proc_lock = PTHREAD_MUTEX_INITIALIZER;
static timings proc; /* this process's measurements, kept for its life */

static const timing *find(const timings *ts, const char *key) {
  for (int i = 0; i < ts->n; i++)
    if (!strcmp(ts->t[i].key, key)) return &ts->t[i];
  return NULL;
}

/* Adds or replaces; -1 on OOM. */
static int put(timings *ts, const char *key, double us) {
  for (int i = 0; i < ts->n; i++)
    if (!strcmp(ts->t[i].key, key)) {
      ts->t[i].us = us;
      return 0;
    }
  if (ts->n == ts->cap) {
    int cap = ts->cap ? 2 * ts->cap : 64;
    timing *t = realloc(ts->t, sizeof *t * (size_t)cap);
    if (!t) return -1;
    ts->t = t, ts->cap = cap;
  }
  if (!(ts->t[ts->n].key = strdup(key))) return -1;
  ts->t[ts->n++].us = us;
  return 0;
}

static void timings_free(timings *ts) {
  for (int i = 0; i < ts->n; i++) free(ts->t[i].key);
  free(ts->t);
  memset(ts, 0, sizeof *ts);
}

/* ---- the cache file -------------------------------------------------------------------------------- */

/* Reads path into ts: a missing file is an empty cache; a malformed line is an error naming it. */
static qllc_status file_read(const char *path, timings *ts, qllc_diag *diag) {
  struct stat sb;
  if (stat(path, &sb) != 0 && errno == ENOENT) return QLLC_OK;
  uint8_t *text = NULL; /* read whole with the size bound, then by lines */
  size_t text_len = 0;
  qllc_status rst = qllc_read_file(path, "tuning cache", QLLC_MAX_TEXT_FILE_BYTES, &text, &text_len, diag);
  if (rst != QLLC_OK) return rst;
  FILE *f = fmemopen(text, text_len ? text_len : 1, "r"); /* an empty file reads as its terminating NUL */
  if (!f) {
    free(text);
    qllc_fail(diag, QLLC_ERR_NOMEM, NULL, "cannot read the tuning cache: %s", strerror(errno));
    qllc_diag_set_file(diag, path);
    return QLLC_ERR_NOMEM;
  }
  char line[2048];
  int ln = 0, header = 0;
  qllc_status st = QLLC_OK;
  while (st == QLLC_OK && fgets(line, sizeof line, f)) {
    ln++;
    size_t len = strlen(line);
    if (len && line[len - 1] == '\n') line[--len] = 0;
    if (!len || line[0] == '#') continue;
    if (!header) {
      if (strcmp(line, "qllc-tune 1") != 0)
        st = qllc_fail(diag, QLLC_ERR_PARSE, NULL, "line %d: not a qllc tuning cache (want 'qllc-tune 1')", ln);
      header = 1;
      continue;
    }
    char *tab = strrchr(line, '\t'), *end = NULL;
    double v = tab ? strtod(tab + 1, &end) : 0;
    if (!tab || end == tab + 1 || *end || !(v > 0)) {
      st = qllc_fail(diag, QLLC_ERR_PARSE, NULL, "line %d: want CPU, kernel, shape and microseconds, tab-separated",
                     ln);
      break;
    }
    *tab = 0;
    if (put(ts, line, v) != 0) st = qllc_fail(diag, QLLC_ERR_NOMEM, NULL, "out of memory");
  }
  if (st == QLLC_OK && ferror(f)) st = qllc_fail(diag, QLLC_ERR_IO, NULL, "cannot read the tuning cache");
  fclose(f);
  free(text);
  if (st != QLLC_OK) qllc_diag_set_file(diag, path);
  return st;
}

/* Writes ts to path (qllc_outfile: a temporary renamed over it, or a device written in place). */
static qllc_status file_write(const char *path, const timings *ts, qllc_diag *diag) {
  qllc_outfile of;
  qllc_status st = qllc_outfile_open(&of, path, diag);
  if (st != QLLC_OK) return st;
  FILE *f = of.f;
  {
    fprintf(f, "# qllc kernel variant timings: CPU, kernel, layer shape, microseconds per call (the fastest of 5);\n"
               "# `--tune-cache FILE` reads and extends it (docs/targets.md, \"Kernel variants\")\nqllc-tune 1\n");
    for (int i = 0; i < ts->n; i++) fprintf(f, "%s\t%.3f\n", ts->t[i].key, ts->t[i].us);
  }
  return qllc_outfile_commit(&of, diag);
}

/* ---- the tuner ------------------------------------------------------------------------------------- */

typedef struct pending {
  const qllc_node *node;
  char *shape;
  int n;
  char *cands[TUNE_MAX_CANDS];
} pending;

typedef struct tuner {
  const char *cpu;
  int measure;     /* 1: this machine's CPU, untimed candidates are measured; 0: timings from the file only */
  timings file;    /* the --tune-cache file's entries (and what this compile adds) */
  int file_dirty;
  pending *pend;   /* layers whose candidates are not all timed */
  int n_pend, cap_pend;
  qllc_status err; /* an error inside a callback */
  qllc_diag *diag;
} tuner;

static void key_of(const tuner *t, const char *kernel, const char *shape, char *buf, size_t size) {
  snprintf(buf, size, "%s\t%s\t%s", t->cpu, kernel, shape);
}

/* The time of one candidate (file first, then this process); < 0 when not timed yet. */
static double lookup(tuner *t, const char *key) {
  const timing *e = find(&t->file, key);
  if (e) return e->us;
  pthread_mutex_lock(&proc_lock);
  e = find(&proc, key);
  double v = e ? e->us : -1;
  pthread_mutex_unlock(&proc_lock);
  return v;
}

/* "conv2dc4__avx512vnni" for qllc_k_conv2dc4_u8_i8_u8__avx512vnni: the report's short name. */
static void short_name(const char *k, char *buf, size_t size) {
  const char *isa = strstr(k, "__");
  const char *s = strncmp(k, "qllc_k_", 7) == 0 ? k + 7 : k;
  const char *e = isa ? isa : k + strlen(k);
  for (int u = 0; u < 3 && e > s; u++) { /* drop _<in>_<w>_<out> */
    const char *p = e - 1;
    while (p > s && *p != '_') p--;
    e = p;
  }
  snprintf(buf, size, "%.*s%s", (int)(e - s), s, isa ? isa : "");
}

/* qllc_lower_target.choose: the fastest timed candidate, or the rule's choice while some are untimed. */
static int tune_choose(void *ctx, const qllc_node *n, const char *shape, const char *const *cands, int nc, char *why,
                       size_t why_size) {
  tuner *t = ctx;
  double us[TUNE_MAX_CANDS];
  int missing = 0, best = -1;
  for (int i = 0; i < nc; i++)
    if (!qllc_drv_native_has(cands[i])) { /* not in this build: the rule table's choice */
      snprintf(why, why_size, "not measured: this build has no native %s (QLLC_NATIVE_ISA_KERNELS)", cands[i]);
      return -1;
    }
  for (int i = 0; i < nc && i < TUNE_MAX_CANDS; i++) {
    char key[1024];
    key_of(t, cands[i], shape, key, sizeof key);
    us[i] = lookup(t, key);
    missing |= us[i] < 0;
    if (us[i] >= 0 && (best < 0 || us[i] < us[best])) best = i;
  }
  if (missing && !t->measure) return -1; /* another CPU than this machine's: the rule table */
  if (missing) { /* timed after this lowering, which then runs again */
    if (t->n_pend == t->cap_pend) {
      int cap = t->cap_pend ? 2 * t->cap_pend : 16;
      pending *p = realloc(t->pend, sizeof *p * (size_t)cap);
      if (!p) {
        t->err = QLLC_ERR_NOMEM;
        return -1;
      }
      t->pend = p, t->cap_pend = cap;
    }
    pending *p = &t->pend[t->n_pend];
    memset(p, 0, sizeof *p);
    p->node = n;
    p->shape = strdup(shape);
    int ok = p->shape != NULL;
    for (int i = 0; ok && i < nc && i < TUNE_MAX_CANDS; i++) ok = (p->cands[p->n++] = strdup(cands[i])) != NULL;
    t->n_pend++;
    if (!ok) t->err = QLLC_ERR_NOMEM;
    return -1;
  }
  /* the candidates ran as the library's native copies, not specialised on the layer's constants as the
     generated code is: close timings do not say which generated code is faster, so the rule table's
     choice stays unless another is clearly faster */
  if (best > 0 && us[best] > (1.0 - TUNE_MARGIN) * us[0]) best = 0;
  size_t len = t->measure ? (size_t)snprintf(why, why_size, "measured on this CPU:")
                          : (size_t)snprintf(why, why_size, "timed on %s (--tune-cache):", t->cpu);
  for (int i = 0; i < nc && len < why_size; i++) {
    char sn[128];
    short_name(cands[i], sn, sizeof sn);
    if (us[i] >= TUNE_REFUSED)
      len += (size_t)snprintf(why + len, why_size - len, "%s %s not run (Linux refused the AMX tile data)", i ? "," : "",
                              sn);
    else
      len += (size_t)snprintf(why + len, why_size - len, "%s %s %.1f us", i ? "," : "", sn, us[i]);
  }
  return best;
}

/* The extract's lowering: copy j of layer i runs candidate j (made: the copies, row by row). */
typedef struct forcing {
  const pending *pend;
  int n_pend, copies;
  qllc_node **made;
} forcing;

static int force_choose(void *ctx, const qllc_node *n, const char *shape, const char *const *cands, int nc, char *why,
                        size_t why_size) {
  const forcing *f = ctx;
  for (int i = 0; i < f->n_pend; i++)
    for (int j = 0; j < f->copies; j++)
      if (f->made[i * f->copies + j] == n) {
        if (j >= f->pend[i].n) return -1;
        for (int k = 0; k < nc; k++)
          if (!strcmp(cands[k], f->pend[i].cands[j])) return k;
        return -1;
      }
  return -1;
}

/* 1 when the test hook QLLC_TUNE_SLOW names part of kernel. */
static int planted_slow(const char *kernel) {
  const char *env = getenv("QLLC_TUNE_SLOW");
  for (const char *p = env; p && *p;) {
    size_t n = strcspn(p, ",");
    char part[256];
    snprintf(part, sizeof part, "%.*s", (int)(n < sizeof part ? n : sizeof part - 1), p);
    if (n && strstr(kernel, part)) return 1;
    p += n + (p[n] == ',');
  }
  return 0;
}

/* Times every pending layer's candidates (steps 1-3 at the top) into this process's cache and the file. */
static qllc_status measure(tuner *t, const qllc_graph *g, const qllc_lower_target *lt, qllc_diag *diag) {
  /* one entry per distinct (shape, candidates): repeated layers are timed once */
  const qllc_node **nodes = calloc((size_t)t->n_pend, sizeof *nodes);
  pending *uniq = calloc((size_t)t->n_pend, sizeof *uniq);
  int nu = 0, copies = 0;
  if (!nodes || !uniq) {
    free(nodes), free(uniq);
    return qllc_fail(diag, QLLC_ERR_NOMEM, NULL, "out of memory");
  }
  for (int i = 0; i < t->n_pend; i++) {
    int dup = 0;
    for (int k = 0; k < nu && !dup; k++) {
      dup = !strcmp(uniq[k].shape, t->pend[i].shape) && uniq[k].n == t->pend[i].n;
      for (int c = 0; dup && c < uniq[k].n; c++) dup = !strcmp(uniq[k].cands[c], t->pend[i].cands[c]);
    }
    if (dup) continue;
    uniq[nu] = t->pend[i];
    nodes[nu++] = t->pend[i].node;
    if (t->pend[i].n > copies) copies = t->pend[i].n;
  }
  qllc_graph *xg = NULL;
  qllc_node **made = calloc((size_t)(nu * copies) + 1, sizeof *made);
  qllc_program *p = NULL;
  qllc_status st = made ? qllc_graph_extract(g, nodes, nu, copies, &xg, made, diag)
                        : qllc_fail(diag, QLLC_ERR_NOMEM, NULL, "out of memory");
  forcing f = {uniq, nu, copies, made};
  qllc_lower_target ft = *lt;
  ft.choose = force_choose;
  ft.choose_ctx = &f;
  if (st == QLLC_OK) st = qllc_lower_for(xg, &ft, &p, diag);
  uint8_t *mut = NULL, *act = NULL;
  if (st == QLLC_OK) {
    mut = qllc_drv_aligned_buffer(p->mutable_size);
    act = qllc_drv_aligned_buffer(p->act_size);
    if (!mut || !act) st = qllc_fail(diag, QLLC_ERR_NOMEM, NULL, "out of memory");
  }
  if (st == QLLC_OK) { /* fixed pseudo-random inputs and activations: every call sees the same data */
    /* a float graph's as floats in [-1, 1): random bytes read as floats are denormals, infinities and
       NaNs often enough that their slow paths, not the kernels, would be timed */
    const int flt = !qllc_graph_is_quantized(g);
    uint64_t r = 0x9e3779b97f4a7c15ULL;
    for (uint64_t i = 0; i < p->mutable_size; i++) {
      r = r * 6364136223846793005ULL + 1442695040888963407ULL;
      mut[i] = (uint8_t)(r >> 56);
      if (flt && i % 4 == 3) {
        const float f = (float)(int32_t)(uint32_t)(r >> 32) * 0x1p-31f;
        memcpy(mut + i - 3, &f, sizeof f);
      }
    }
  }
  /* the calls to time: (instruction, layer i, candidate j), in program order, so a layer's candidates are
     neighbours */
  typedef struct timed {
    const qllc_instr *in;
    int i, j;
    double best;
  } timed;
  timed *tl = st == QLLC_OK ? calloc((size_t)p->n_instrs + 1, sizeof *tl) : NULL;
  int nt = 0;
  if (st == QLLC_OK && !tl) st = qllc_fail(diag, QLLC_ERR_NOMEM, NULL, "out of memory");
  for (int k = 0; st == QLLC_OK && k < p->n_instrs; k++) {
    const qllc_instr *in = &p->instrs[k];
    for (int i = 0; in->node && i < nu; i++)
      for (int j = 0; j < uniq[i].n; j++) {
        if (made[i * copies + j] != in->node || strcmp(in->kernel, uniq[i].cands[j]) != 0) continue;
        if (strstr(in->kernel, "__amx") && qllc_jit_amx_permission() != 1) { /* a tile instruction would fault */
          char key[1024];
          key_of(t, uniq[i].cands[j], uniq[i].shape, key, sizeof key);
          pthread_mutex_lock(&proc_lock);
          int bad = put(&proc, key, TUNE_REFUSED);
          pthread_mutex_unlock(&proc_lock);
          if (bad) st = qllc_fail(diag, QLLC_ERR_NOMEM, NULL, "out of memory");
          continue;
        }
        tl[nt++] = (timed){in, i, j, 1e300};
      }
  }
  /* in turns: every call once, then every call again, TUNE_RUNS times after one round to warm up, each
     candidate's time its fastest call. A burst of other work on the core then slows one turn of every
     candidate rather than all the calls of one (back to back, the median of one candidate's calls had
     come out 2-3x its quiet time under load, and a slower row was chosen) */
  for (int run = -1; st == QLLC_OK && run < TUNE_RUNS; run++)
    for (int e = 0; st == QLLC_OK && e < nt; e++) {
      const double t0 = qllc_drv_now_ns();
      if (qllc_drv_native_call(tl[e].in, mut, act) != 0)
        st = qllc_fail(diag, QLLC_ERR_INVALID, tl[e].in->node->name, "internal error: cannot call %s natively",
                       tl[e].in->kernel);
      const double us = (qllc_drv_now_ns() - t0) * 1e-3;
      if (run >= 0 && us < tl[e].best) tl[e].best = us;
    }
  for (int e = 0; st == QLLC_OK && e < nt; e++) {
    const int i = tl[e].i, j = tl[e].j;
    double v = tl[e].best;
    if (planted_slow(uniq[i].cands[j])) v *= 1000;
    /* kept as the cache file writes it (%.3f), so that a compile which measures and one which reads
       the file choose and report alike (the report's %.1f of 12.2504 and of 12.250 differ) */
    char held[64];
    snprintf(held, sizeof held, "%.3f", v);
    v = strtod(held, NULL);
    if (!(v > 0)) v = 0.001;
    char key[1024];
    key_of(t, uniq[i].cands[j], uniq[i].shape, key, sizeof key);
    pthread_mutex_lock(&proc_lock);
    int bad = put(&proc, key, v);
    pthread_mutex_unlock(&proc_lock);
    if (bad || put(&t->file, key, v)) st = qllc_fail(diag, QLLC_ERR_NOMEM, NULL, "out of memory");
    t->file_dirty = 1;
  }
  free(tl);
  free(mut);
  free(act);
  if (p) qllc_program_free(p);
  if (xg) qllc_graph_free(xg);
  free(made);
  free(nodes);
  free(uniq);
  return st;
}

static void pend_clear(tuner *t) {
  for (int i = 0; i < t->n_pend; i++) {
    free(t->pend[i].shape);
    for (int j = 0; j < t->pend[i].n; j++) free(t->pend[i].cands[j]);
  }
  t->n_pend = 0;
}

int qllc_drv_tunes(const qllc_options *o, int host) {
  if (o->no_tune) return 0;
  if (host || (o->cpu && !strcmp(o->cpu, "native"))) return 2;
  return o->tune_cache && *o->tune_cache ? 1 : 0;
}

qllc_status qllc_drv_lower_tuned(qllc_drv_model *m, qllc_graph *g, const qllc_options *o, int host,
                                 qllc_lower_target *lt, qllc_program **p, qllc_diag *diag) {
  tuner t;
  memset(&t, 0, sizeof t);
  t.cpu = lt->cpu ? lt->cpu : "?";
  t.measure = qllc_drv_tunes(o, host) == 2;
  t.diag = diag;
  qllc_status st = o->tune_cache && *o->tune_cache ? file_read(o->tune_cache, &t.file, diag) : QLLC_OK;
  lt->choose = tune_choose;
  lt->choose_ctx = &t;
  /* the model's own graph (a pre-quantized model): other threads may be lowering it too, which recounts
     its uses; the extract reads it as well, so the whole sequence holds the lock */
  const int shared = g == m->graph;
  if (shared) pthread_mutex_lock(&m->lock);
  if (st == QLLC_OK) st = qllc_lower_for(g, lt, p, diag);
  if (st == QLLC_OK && t.err) st = qllc_fail(diag, t.err, NULL, "out of memory");
  /* time what was missing, then lower again from timings. A measured choice can leave a conv on a row
     taken only for channel-last ends with an NCHW end, which sends that conv to its next rows (src/lower,
     qllc_lower_for), untimed so far: so again, until nothing is missing (each round times more rows) */
  for (int round = 0; st == QLLC_OK && t.n_pend > 0; round++) {
    qllc_program_free(*p);
    *p = NULL;
    if (round == TUNE_ROUNDS) {
      st = qllc_fail(diag, QLLC_ERR_INVALID, NULL, "internal error: kernel variants left untimed after tuning");
      break;
    }
    st = measure(&t, g, lt, diag);
    pend_clear(&t);
    if (st == QLLC_OK) st = qllc_lower_for(g, lt, p, diag);
  }
  if (shared) pthread_mutex_unlock(&m->lock);
  if (st == QLLC_OK && t.file_dirty && o->tune_cache && *o->tune_cache)
    st = file_write(o->tune_cache, &t.file, diag);
  if (st != QLLC_OK && *p) {
    qllc_program_free(*p);
    *p = NULL;
  }
  pend_clear(&t);
  free(t.pend);
  timings_free(&t.file);
  lt->choose = NULL;
  lt->choose_ctx = NULL;
  return st;
}
