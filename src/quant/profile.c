/* src/quant/profile.c: the calibration profile (format: docs/quantization.md) and the graph hash.
 *
 * File format (YAML 1.1, written and read with libyaml):
 *
 *   format: qllc-profile-1
 *   graph_hash: "0123456789abcdef"    # FNV-1a 64 of the graph (qllc_graph_hash), 16 hex digits
 *   bins: 2048
 *   values:
 *     - name: "conv1_out"             # ONNX value name
 *       min: -1.25                    # exact extremes ("%.9g": reads back bit-exactly with strtof)
 *       max: 3.5
 *       count: 131072                 # finite values recorded
 *       nonfinite: 0
 *       range: 3.5                    # the histogram covers [-range, range)
 *       counts: {1024: 17, 1025: 3}   # non-empty bins only: index -> count
 *   samples:                          # optional: the first calibration samples (qllc_profile_keep_sample)
 *     count: 32                       # 1 to QLLC_PROFILE_MAX_SAMPLES
 *     inputs:
 *       - name: "input"               # a graph input, each at most once
 *         elements: 64                # per sample
 *         data: AACAPwAAAEA...        # base64 of count x elements float32, little-endian
 *
 * Reading first bounds the input: at most 256 MiB and 16 levels of nesting (the format uses 4), no
 * aliases; an event-level pre-pass checks this before libyaml's document tree is built, since its
 * loader is quadratic in depth. Then it checks the structure and reports the first problem with the
 * file and line; values x bins (the histogram counters) is at most 2^27 (1 GiB), checked before any
 * histogram is allocated. Names are found through a hash index, not a scan. The hash is
 * compared separately (qllc_profile_check) so a tool can show both the file and the model.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <yaml.h>

#include "quant.h"

#define FORMAT_TAG "qllc-profile-1"

/* ---- graph hash ------------------------------------------------------------------------------ */

static void fnv(uint64_t *h, const void *p, size_t n) {
  const unsigned char *b = p;
  for (size_t i = 0; i < n; i++) {
    *h ^= b[i];
    *h *= 0x100000001b3ULL;
  }
}
static void fnv_str(uint64_t *h, const char *s) { fnv(h, s ? s : "", strlen(s ? s : "") + 1); }
static void fnv_i64(uint64_t *h, int64_t v) {
  unsigned char b[8];
  for (int i = 0; i < 8; i++) b[i] = (unsigned char)((uint64_t)v >> (8 * i)); /* little-endian, any host */
  fnv(h, b, 8);
}
static void fnv_value(uint64_t *h, const qllc_value *v) {
  if (!v) {
    fnv_str(h, "");
    fnv_i64(h, -1);
    return;
  }
  fnv_str(h, v->name);
  fnv_i64(h, v->rank);
  for (int d = 0; d < v->rank && d < QLLC_MAX_RANK; d++) fnv_i64(h, v->dims[d]);
}

uint64_t qllc_graph_hash(const qllc_graph *g) {
  uint64_t h = 0xcbf29ce484222325ULL;
  for (int i = 0; i < g->n_nodes; i++) {
    const qllc_node *n = g->nodes[i];
    if (!n || n->dead) continue;
    fnv_str(&h, n->op_type ? n->op_type : qllc_op_name(n->op));
    fnv_str(&h, n->name);
    fnv_i64(&h, n->n_in);
    for (int k = 0; k < n->n_in; k++) fnv_value(&h, n->in[k]);
    fnv_i64(&h, n->n_out);
    for (int k = 0; k < n->n_out; k++) fnv_value(&h, n->out[k]);
  }
  return h;
}

/* ---- in-memory profile ----------------------------------------------------------------------- */

qllc_profile *qllc_profile_new(uint64_t graph_hash, int32_t bins) {
  qllc_profile *p = calloc(1, sizeof *p);
  if (!p) return NULL;
  p->graph_hash = graph_hash;
  p->bins = bins > 0 ? bins : QLLC_HIST_DEFAULT_BINS;
  return p;
}

static void free_inputs(qllc_profile *p) {
  for (int i = 0; i < p->n_inputs; i++) {
    free(p->inputs[i].name);
    free(p->inputs[i].data);
  }
  free(p->inputs);
  p->inputs = NULL;
  p->n_inputs = 0;
  p->n_samples = p->cap_samples = 0;
}

void qllc_profile_free(qllc_profile *p) {
  if (!p) return;
  free_inputs(p);
  for (int i = 0; i < p->n; i++) {
    free(p->entries[i].name);
    qllc_hist_free(&p->entries[i].hist);
  }
  free(p->entries);
  free(p->index);
  free(p->path);
  free(p);
}

/* The name index: open addressing with linear probing over p->index (slots hold entry indices, -1 when
 * empty), kept at most half full, so a lookup is O(1) on average instead of a scan of every entry (a
 * 10,000-value profile made reading and quantizing quadratic). */
static uint64_t name_hash(const char *s) {
  uint64_t h = 0xcbf29ce484222325ULL;
  for (; *s; s++) h = (h ^ (unsigned char)*s) * 0x100000001b3ULL;
  return h;
}

/* The slot holding `name`, or the empty slot where it would go. p->index_cap > 0. */
static int index_slot(const qllc_profile *p, const char *name) {
  unsigned mask = (unsigned)p->index_cap - 1, i = (unsigned)name_hash(name) & mask;
  while (p->index[i] >= 0 && strcmp(p->entries[p->index[i]].name, name) != 0) i = (i + 1) & mask;
  return (int)i;
}

/* Makes room for one more entry in the index (rebuilt at twice the size when half full). 0, or -1 on OOM. */
static int index_reserve(qllc_profile *p) {
  if (p->index_cap && 2 * (p->n + 1) <= p->index_cap) return 0;
  if (p->index_cap > (1 << 29)) return -1;
  int cap = p->index_cap ? 2 * p->index_cap : 64;
  int *idx = malloc((size_t)cap * sizeof *idx);
  if (!idx) return -1;
  for (int i = 0; i < cap; i++) idx[i] = -1;
  free(p->index);
  p->index = idx, p->index_cap = cap;
  for (int k = 0; k < p->n; k++) p->index[index_slot(p, p->entries[k].name)] = k;
  return 0;
}

const qllc_hist *qllc_profile_find(const qllc_profile *p, const char *name) {
  if (!p->index_cap) return NULL; /* no entry yet */
  int k = p->index[index_slot(p, name)];
  return k >= 0 ? &p->entries[k].hist : NULL;
}

qllc_hist *qllc_profile_add(qllc_profile *p, const char *name) {
  qllc_hist *h = (qllc_hist *)qllc_profile_find(p, name);
  if (h) return h;
  if (index_reserve(p)) return NULL;
  if (p->n == p->cap) {
    int cap = p->cap ? 2 * p->cap : 16;
    qllc_profile_entry *e = realloc(p->entries, (size_t)cap * sizeof *e);
    if (!e) return NULL;
    p->entries = e;
    p->cap = cap;
  }
  qllc_profile_entry *e = &p->entries[p->n];
  e->name = strdup(name);
  if (!e->name || qllc_hist_init(&e->hist, p->bins, NULL) != QLLC_OK) {
    free(e->name);
    return NULL;
  }
  p->index[index_slot(p, name)] = p->n;
  p->n++;
  return &e->hist;
}

int qllc_profile_keep_sample(qllc_profile *p, int n, const char *const *names, const float *const *data,
                             const uint64_t *numel) {
  if (!p->inputs) { /* the first sample: room for as many as the bounds allow */
    uint64_t bytes = 0;
    for (int i = 0; i < n; i++) {
      if (numel[i] > QLLC_PROFILE_SAMPLE_BYTES / sizeof(float)) return 0;
      bytes += numel[i] * sizeof(float);
    }
    uint64_t cap = bytes ? QLLC_PROFILE_SAMPLE_BYTES / bytes : 0;
    if (cap > QLLC_PROFILE_MAX_SAMPLES) cap = QLLC_PROFILE_MAX_SAMPLES;
    if (cap == 0 || n <= 0) return 0;
    if (!(p->inputs = calloc((size_t)n, sizeof *p->inputs))) return -1;
    p->n_inputs = n;
    p->cap_samples = (int64_t)cap;
    for (int i = 0; i < n; i++) {
      p->inputs[i].numel = numel[i];
      p->inputs[i].name = strdup(names[i]);
      p->inputs[i].data = malloc((size_t)(cap * numel[i] * sizeof(float)) + 1);
      if (!p->inputs[i].name || !p->inputs[i].data) {
        free_inputs(p);
        return -1;
      }
    }
  }
  if (n != p->n_inputs) return -1;
  for (int i = 0; i < n; i++)
    if (numel[i] != p->inputs[i].numel || strcmp(names[i], p->inputs[i].name) != 0) return -1;
  if (p->n_samples >= p->cap_samples) return 0;
  for (int i = 0; i < n; i++)
    memcpy(p->inputs[i].data + (uint64_t)p->n_samples * numel[i], data[i], numel[i] * sizeof(float));
  p->n_samples++;
  return 1;
}

qllc_status qllc_profile_get(const qllc_profile *p, const char *name, const qllc_hist **out, qllc_diag *diag) {
  *out = qllc_profile_find(p, name);
  if (*out) return QLLC_OK;
  qllc_status st = qllc_fail(diag, QLLC_ERR_INVALID, NULL, "%s: value '%s' is missing from the profile",
                             p->path ? p->path : "<profile>", name);
  if (p->path) qllc_diag_set_file(diag, p->path);
  return st;
}

qllc_status qllc_profile_check(const qllc_profile *p, const qllc_graph *g, qllc_diag *diag) {
  uint64_t h = qllc_graph_hash(g);
  if (h == p->graph_hash) return QLLC_OK;
  qllc_status st = qllc_fail(diag, QLLC_ERR_MISMATCH, NULL,
                             "%s: profile was made for another model (graph hash %016" PRIx64
                             " in the profile, %016" PRIx64 " for %s)",
                             p->path ? p->path : "<profile>", p->graph_hash, h, g->path ? g->path : "the model");
  if (p->path) qllc_diag_set_file(diag, p->path);
  return st;
}

/* ---- writing --------------------------------------------------------------------------------- */

typedef struct emit {
  yaml_emitter_t e;
  yaml_event_t ev;
  int ok;
} emit;

static void ev(emit *w) {
  if (w->ok && !yaml_emitter_emit(&w->e, &w->ev)) w->ok = 0;
}
static void scalar(emit *w, const char *s, int quoted) {
  if (!w->ok) return;
  if (!yaml_scalar_event_initialize(&w->ev, NULL, NULL, (yaml_char_t *)s, (int)strlen(s), !quoted, quoted,
                                    quoted ? YAML_DOUBLE_QUOTED_SCALAR_STYLE : YAML_PLAIN_SCALAR_STYLE)) {
    w->ok = 0;
    return;
  }
  ev(w);
}
static void key_str(emit *w, const char *k, const char *v, int quoted) {
  scalar(w, k, 0);
  scalar(w, v, quoted);
}
static void key_u64(emit *w, const char *k, uint64_t v) {
  char b[32];
  snprintf(b, sizeof b, "%" PRIu64, v);
  key_str(w, k, b, 0);
}
static void fmt_float(char *b, size_t n, float f) {
  if (isnan(f)) snprintf(b, n, ".nan"); /* YAML's spellings */
  else if (isinf(f)) snprintf(b, n, f > 0 ? ".inf" : "-.inf");
  else snprintf(b, n, "%.9g", (double)f);
}
static void key_float(emit *w, const char *k, float v) {
  char b[48];
  fmt_float(b, sizeof b, v);
  key_str(w, k, b, 0);
}
static void map_start(emit *w, int flow) {
  if (w->ok && !yaml_mapping_start_event_initialize(&w->ev, NULL, NULL, 1,
                                                    flow ? YAML_FLOW_MAPPING_STYLE : YAML_BLOCK_MAPPING_STYLE))
    w->ok = 0;
  ev(w);
}
static void map_end(emit *w) {
  if (w->ok && !yaml_mapping_end_event_initialize(&w->ev)) w->ok = 0;
  ev(w);
}

/* Base64 (RFC 4648, with padding, no line breaks) of the kept samples' bytes. */
static const char b64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/* The bytes of n floats, little-endian on any host. */
static void float_bytes(const float *f, uint64_t n, unsigned char *out) {
  for (uint64_t i = 0; i < n; i++) {
    uint32_t u;
    memcpy(&u, &f[i], 4);
    for (int k = 0; k < 4; k++) out[4 * i + (uint64_t)k] = (unsigned char)(u >> (8 * k));
  }
}

/* malloc'ed NUL-terminated base64 of b[0..n); NULL on OOM. */
static char *b64_encode(const unsigned char *b, size_t n) {
  char *s = malloc((n + 2) / 3 * 4 + 1), *o = s;
  if (!s) return NULL;
  for (size_t i = 0; i < n; i += 3) {
    uint32_t v = (uint32_t)b[i] << 16 | (i + 1 < n ? (uint32_t)b[i + 1] << 8 : 0) | (i + 2 < n ? b[i + 2] : 0);
    *o++ = b64[v >> 18 & 63];
    *o++ = b64[v >> 12 & 63];
    *o++ = i + 1 < n ? b64[v >> 6 & 63] : '=';
    *o++ = i + 2 < n ? b64[v & 63] : '=';
  }
  *o = 0;
  return s;
}

/* Decodes exactly n bytes from s (its length must be that of n bytes' encoding, every character valid,
 * the padding where it belongs and its unused bits 0: one text for one content). 0, or -1. */
static int b64_decode(const char *s, size_t len, unsigned char *out, size_t n) {
  if (len != (n + 2) / 3 * 4) return -1;
  for (size_t i = 0, o = 0; i < len; i += 4) {
    uint32_t v = 0;
    int pad = 0;
    for (int k = 0; k < 4; k++) {
      char c = s[i + (size_t)k];
      const char *at = c ? strchr(b64, c) : NULL;
      if (c == '=' && i + 4 == len && k >= 2 && (k == 3 || s[i + 3] == '=')) pad++, at = b64;
      else if (!at || pad) return -1;
      v = v << 6 | (uint32_t)(at - b64);
    }
    if (pad != (int)(i + 4 == len ? (3 - n % 3) % 3 : 0)) return -1;
    if ((pad == 1 && (v & 0xff)) || (pad == 2 && (v & 0xffff))) return -1; /* bits past the data: not 0 */
    for (int k = 0; k < 3 - pad; k++) out[o++] = (unsigned char)(v >> (16 - 8 * k));
  }
  return 0;
}

qllc_status qllc_profile_write(const qllc_profile *p, const char *path, qllc_diag *diag) {
  qllc_outfile of;
  qllc_status ost = qllc_outfile_open(&of, path, diag);
  if (ost != QLLC_OK) return ost;
  FILE *f = of.f;
  emit w = {.ok = 1};
  if (!yaml_emitter_initialize(&w.e)) {
    qllc_outfile_abort(&of);
    return qllc_fail(diag, QLLC_ERR_NOMEM, NULL, "out of memory (yaml emitter)");
  }
  yaml_emitter_set_output_file(&w.e, f);
  yaml_emitter_set_width(&w.e, 120);
  yaml_emitter_set_unicode(&w.e, 1);
  if (yaml_stream_start_event_initialize(&w.ev, YAML_UTF8_ENCODING)) ev(&w);
  else w.ok = 0;
  if (w.ok && yaml_document_start_event_initialize(&w.ev, NULL, NULL, NULL, 1)) ev(&w);
  else w.ok = 0;
  map_start(&w, 0);
  key_str(&w, "format", FORMAT_TAG, 0);
  char hex[17];
  snprintf(hex, sizeof hex, "%016" PRIx64, p->graph_hash);
  key_str(&w, "graph_hash", hex, 1);
  key_u64(&w, "bins", (uint64_t)p->bins);
  scalar(&w, "values", 0);
  if (w.ok && yaml_sequence_start_event_initialize(&w.ev, NULL, NULL, 1, YAML_BLOCK_SEQUENCE_STYLE)) ev(&w);
  else w.ok = 0;
  for (int i = 0; i < p->n && w.ok; i++) {
    const qllc_hist *h = &p->entries[i].hist;
    map_start(&w, 0);
    key_str(&w, "name", p->entries[i].name, 1);
    key_float(&w, "min", h->min);
    key_float(&w, "max", h->max);
    key_u64(&w, "count", h->total);
    key_u64(&w, "nonfinite", h->nonfinite);
    key_float(&w, "range", h->range);
    scalar(&w, "counts", 0);
    map_start(&w, 1);
    for (int32_t k = 0; k < h->bins; k++)
      if (h->counts[k]) {
        char b[32];
        snprintf(b, sizeof b, "%d", (int)k);
        scalar(&w, b, 0);
        snprintf(b, sizeof b, "%" PRIu64, h->counts[k]);
        scalar(&w, b, 0);
      }
    map_end(&w);
    map_end(&w);
  }
  if (w.ok && yaml_sequence_end_event_initialize(&w.ev)) ev(&w);
  else w.ok = 0;
  int nomem = 0;
  if (p->n_samples > 0 && p->n_inputs > 0) {
    scalar(&w, "samples", 0);
    map_start(&w, 0);
    key_u64(&w, "count", (uint64_t)p->n_samples);
    scalar(&w, "inputs", 0);
    if (w.ok && yaml_sequence_start_event_initialize(&w.ev, NULL, NULL, 1, YAML_BLOCK_SEQUENCE_STYLE)) ev(&w);
    else w.ok = 0;
    for (int i = 0; i < p->n_inputs && w.ok; i++) {
      const qllc_profile_input *x = &p->inputs[i];
      uint64_t nf = (uint64_t)p->n_samples * x->numel;
      unsigned char *bytes = malloc((size_t)(nf * 4) + 1);
      char *text = bytes ? (float_bytes(x->data, nf, bytes), b64_encode(bytes, (size_t)(nf * 4))) : NULL;
      free(bytes);
      if (!text) {
        nomem = 1, w.ok = 0;
        break;
      }
      map_start(&w, 0);
      key_str(&w, "name", x->name, 1);
      key_u64(&w, "elements", x->numel);
      key_str(&w, "data", text, 0);
      map_end(&w);
      free(text);
    }
    if (w.ok && yaml_sequence_end_event_initialize(&w.ev)) ev(&w);
    else w.ok = 0;
    map_end(&w);
  }
  map_end(&w);
  if (w.ok && yaml_document_end_event_initialize(&w.ev, 1)) ev(&w);
  else w.ok = 0;
  if (w.ok && yaml_stream_end_event_initialize(&w.ev)) ev(&w);
  else w.ok = 0;
  if (w.ok && !yaml_emitter_flush(&w.e)) w.ok = 0;
  const char *problem = w.e.problem;
  yaml_emitter_delete(&w.e);
  if (!w.ok && nomem) {
    qllc_outfile_abort(&of);
    return qllc_fail(diag, QLLC_ERR_NOMEM, NULL, "out of memory writing the profile");
  }
  if (!w.ok) {
    qllc_outfile_abort(&of);
    qllc_status st = qllc_fail(diag, QLLC_ERR_IO, NULL, "%s: cannot write the profile%s%s", path,
                               problem ? ": " : "", problem ? problem : "");
    qllc_diag_set_file(diag, path);
    return st;
  }
  return qllc_outfile_commit(&of, diag);
}

/* ---- reading --------------------------------------------------------------------------------- */

typedef struct rd {
  yaml_document_t doc;
  const char *path;
  qllc_diag *diag;
} rd;

static qllc_status bad(rd *r, const yaml_node_t *n, const char *fmt, const char *what) {
  char msg[512];
  snprintf(msg, sizeof msg, fmt, what);
  qllc_status st = qllc_fail(r->diag, QLLC_ERR_PARSE, NULL, "%s:%lu: %s", r->path,
                             n ? (unsigned long)n->start_mark.line + 1 : 0UL, msg);
  qllc_diag_set_file(r->diag, r->path);
  return st;
}

static const char *str_of(const yaml_node_t *n) {
  return n && n->type == YAML_SCALAR_NODE ? (const char *)n->data.scalar.value : NULL;
}

static qllc_status get_u64(rd *r, const yaml_node_t *n, const char *what, uint64_t *out) {
  const char *s = str_of(n);
  char *end;
  errno = 0;
  if (!s || !*s || *s == '-') return bad(r, n, "'%s' must be a non-negative integer", what);
  unsigned long long v = strtoull(s, &end, 10);
  if (*end || errno) return bad(r, n, "'%s' must be a non-negative integer", what);
  *out = v;
  return QLLC_OK;
}

static qllc_status get_float(rd *r, const yaml_node_t *n, const char *what, float *out) {
  const char *s = str_of(n);
  char *end;
  if (!s || !*s) return bad(r, n, "'%s' must be a number", what);
  if (!strcmp(s, ".inf") || !strcmp(s, ".Inf") || !strcmp(s, ".INF") || !strcmp(s, "+.inf")) s = "inf";
  else if (!strcmp(s, "-.inf") || !strcmp(s, "-.Inf") || !strcmp(s, "-.INF")) s = "-inf";
  else if (!strcmp(s, ".nan") || !strcmp(s, ".NaN") || !strcmp(s, ".NAN")) s = "nan";
  errno = 0;
  float v = strtof(s, &end);
  if (*end) return bad(r, n, "'%s' must be a number", what);
  *out = v; /* ERANGE on denormals is fine: strtof still returns the correctly rounded value */
  return QLLC_OK;
}

/* The value of mapping m's key named keys[i] into out[i] (NULL where absent). A key not in keys, a
 * key given twice (YAML would have the last win, silently) or a non-scalar key is an error. */
static qllc_status take_keys(rd *r, const yaml_node_t *m, const char *const *keys, yaml_node_t **out, int n) {
  for (int i = 0; i < n; i++) out[i] = NULL;
  for (yaml_node_pair_t *pr = m->data.mapping.pairs.start; pr < m->data.mapping.pairs.top; pr++) {
    yaml_node_t *k = yaml_document_get_node(&r->doc, pr->key), *v = yaml_document_get_node(&r->doc, pr->value);
    const char *ks = str_of(k);
    if (!ks) return bad(r, k, "%s", "keys must be scalars");
    int i = 0;
    while (i < n && strcmp(ks, keys[i]) != 0) i++;
    if (i == n) return bad(r, k, "unknown key '%s'", ks);
    if (out[i]) return bad(r, k, "key '%s' is given twice", ks);
    out[i] = v;
  }
  return QLLC_OK;
}

static qllc_status read_value(rd *r, qllc_profile *p, yaml_node_t *m) {
  if (m->type != YAML_MAPPING_NODE) return bad(r, m, "%s", "each entry of 'values' must be a mapping");
  static const char *const keys[] = {"name", "min", "max", "count", "nonfinite", "range", "counts"};
  yaml_node_t *kv[7];
  qllc_status st = take_keys(r, m, keys, kv, 7);
  if (st != QLLC_OK) return st;
  yaml_node_t *nmin = kv[1], *nmax = kv[2], *ncount = kv[3], *nnonf = kv[4], *nrange = kv[5], *ncounts = kv[6];
  if (!kv[0]) return bad(r, m, "%s", "an entry has no 'name'");
  const char *name = str_of(kv[0]);
  if (!name) return bad(r, kv[0], "%s", "'name' must be a string");
  const char *need[] = {"min", "max", "count", "range", "counts"};
  yaml_node_t *have[] = {nmin, nmax, ncount, nrange, ncounts};
  for (int i = 0; i < 5; i++)
    if (!have[i]) {
      char what[600];
      snprintf(what, sizeof what, "value '%s' has no '%s'", name, need[i]);
      return bad(r, m, "%s", what);
    }
  if (qllc_profile_find(p, name)) return bad(r, m, "value '%s' appears twice", name);
  qllc_hist *h = qllc_profile_add(p, name);
  if (!h) return qllc_fail(r->diag, QLLC_ERR_NOMEM, NULL, "out of memory reading %s", r->path);
  uint64_t nonf = 0;
  if ((st = get_float(r, nmin, "min", &h->min)) || (st = get_float(r, nmax, "max", &h->max)) ||
      (st = get_u64(r, ncount, "count", &h->total)) || (nnonf && (st = get_u64(r, nnonf, "nonfinite", &nonf))) ||
      (st = get_float(r, nrange, "range", &h->range)))
    return st;
  h->nonfinite = nonf;
  if (!(h->range >= 0) || isinf(h->range)) return bad(r, nrange, "value '%s': 'range' must be finite and >= 0", name);
  if (ncounts->type != YAML_MAPPING_NODE) return bad(r, ncounts, "value '%s': 'counts' must be a mapping", name);
  uint64_t sum = 0;
  unsigned char *seen = calloc((size_t)h->bins / 8 + 1, 1); /* a bin given twice is a duplicate key */
  if (!seen) return qllc_fail(r->diag, QLLC_ERR_NOMEM, NULL, "out of memory reading %s", r->path);
  for (yaml_node_pair_t *pr = ncounts->data.mapping.pairs.start; pr < ncounts->data.mapping.pairs.top; pr++) {
    yaml_node_t *k = yaml_document_get_node(&r->doc, pr->key), *v = yaml_document_get_node(&r->doc, pr->value);
    uint64_t bin, c;
    if ((st = get_u64(r, k, "counts' bin", &bin)) || (st = get_u64(r, v, "counts' count", &c))) break;
    if (bin >= (uint64_t)h->bins) st = bad(r, k, "value '%s': bin index beyond 'bins'", name);
    else if (seen[bin / 8] >> (bin % 8) & 1) st = bad(r, k, "value '%s': a bin is given twice", name);
    else if (c > UINT64_MAX - sum) st = bad(r, v, "value '%s': the counts overflow 2^64", name);
    if (st != QLLC_OK) break;
    seen[bin / 8] |= (unsigned char)(1u << (bin % 8));
    h->counts[bin] = c;
    sum += c;
  }
  free(seen);
  if (st != QLLC_OK) return st;
  if (sum != h->total) return bad(r, ncounts, "value '%s': the counts do not add up to 'count'", name);
  return QLLC_OK;
}

/* The optional `samples` mapping: count, and per input its name, elements and base64 data, bounded as
 * qllc_profile_keep_sample bounds them (QLLC_PROFILE_MAX_SAMPLES, QLLC_PROFILE_SAMPLE_BYTES). */
static qllc_status read_samples(rd *r, qllc_profile *p, yaml_node_t *m) {
  if (m->type != YAML_MAPPING_NODE) return bad(r, m, "%s", "'samples' must be a mapping");
  static const char *const keys[] = {"count", "inputs"};
  yaml_node_t *kv[2];
  qllc_status st = take_keys(r, m, keys, kv, 2);
  if (st != QLLC_OK) return st;
  if (!kv[0] || !kv[1]) return bad(r, m, "'samples' needs '%s'", kv[0] ? "inputs" : "count");
  uint64_t count;
  if ((st = get_u64(r, kv[0], "count", &count))) return st;
  if (count < 1 || count > QLLC_PROFILE_MAX_SAMPLES) return bad(r, kv[0], "%s", "'samples' 'count' must be 1 to 32");
  yaml_node_t *seq = kv[1];
  if (seq->type != YAML_SEQUENCE_NODE) return bad(r, seq, "%s", "'samples' 'inputs' must be a sequence");
  int n = (int)(seq->data.sequence.items.top - seq->data.sequence.items.start);
  if (n < 1) return bad(r, seq, "%s", "'samples' 'inputs' must not be empty");
  if (!(p->inputs = calloc((size_t)n, sizeof *p->inputs)))
    return qllc_fail(r->diag, QLLC_ERR_NOMEM, NULL, "out of memory reading %s", r->path);
  p->n_inputs = n;
  uint64_t bytes = 0;
  for (int i = 0; i < n && st == QLLC_OK; i++) {
    yaml_node_t *e = yaml_document_get_node(&r->doc, seq->data.sequence.items.start[i]);
    static const char *const ikeys[] = {"name", "elements", "data"};
    yaml_node_t *iv[3];
    if (e->type != YAML_MAPPING_NODE) return bad(r, e, "%s", "each entry of 'samples' 'inputs' must be a mapping");
    if ((st = take_keys(r, e, ikeys, iv, 3))) return st;
    const char *name = str_of(iv[0]), *data = str_of(iv[2]);
    if (!name || !iv[1] || !data) return bad(r, e, "%s", "each sampled input needs 'name', 'elements' and 'data'");
    for (int k = 0; k < i; k++)
      if (!strcmp(p->inputs[k].name, name)) return bad(r, e, "input '%s' is sampled twice", name);
    qllc_profile_input *x = &p->inputs[i];
    if (!(x->name = strdup(name))) return qllc_fail(r->diag, QLLC_ERR_NOMEM, NULL, "out of memory reading %s", r->path);
    if ((st = get_u64(r, iv[1], "elements", &x->numel))) return st;
    /* each term is at most 2^20 / 4 x 32 x 4 before the sum is compared: no overflow */
    if (x->numel < 1 || x->numel > QLLC_PROFILE_SAMPLE_BYTES / 4 ||
        (bytes += count * x->numel * 4) > QLLC_PROFILE_SAMPLE_BYTES)
      return bad(r, iv[1], "input '%s': the samples are over 1 MiB (the bound of a profile's samples) or empty", name);
    size_t nb = (size_t)(count * x->numel * 4);
    unsigned char *raw = malloc(nb);
    x->data = malloc(nb);
    if (!raw || !x->data) {
      free(raw);
      return qllc_fail(r->diag, QLLC_ERR_NOMEM, NULL, "out of memory reading %s", r->path);
    }
    if (b64_decode(data, iv[2]->data.scalar.length, raw, nb) != 0) {
      free(raw);
      return bad(r, iv[2], "input '%s': 'data' is not the base64 of count x elements floats", name);
    }
    for (uint64_t k = 0; k < count * x->numel; k++) {
      uint32_t u = (uint32_t)raw[4 * k] | (uint32_t)raw[4 * k + 1] << 8 | (uint32_t)raw[4 * k + 2] << 16 |
                   (uint32_t)raw[4 * k + 3] << 24;
      memcpy(&x->data[k], &u, 4);
    }
    free(raw);
  }
  p->n_samples = p->cap_samples = (int64_t)count;
  return QLLC_OK;
}

/* Limits on what the reader accepts, checked before libyaml builds its document tree (whose loader is
 * quadratic in nesting depth: a 200 KB file of '[' took 87 s). The format itself nests 4 deep (top
 * mapping, 'values', an entry, its 'counts') and uses no anchors or aliases. */
#define PROFILE_MAX_DEPTH 16
#define PROFILE_MAX_BYTES QLLC_MAX_TEXT_FILE_BYTES /* 256 MiB, read by qllc_read_file */
/* values x bins, the histogram counters (8 bytes each) a profile may make: 2^27 = 1 GiB, e.g. 65536
 * values of the default 2048 bins. n_values <= 2^28 (each takes bytes in a 256 MiB file) and bins <=
 * 2^24, so the product cannot overflow. */
#define PROFILE_MAX_COUNTERS ((uint64_t)1 << 27)

static qllc_status yaml_error(const char *path, const yaml_parser_t *parser, qllc_diag *diag) {
  qllc_status st = qllc_fail(diag, QLLC_ERR_PARSE, NULL, "%s:%lu:%lu: malformed YAML: %s%s%s", path,
                             (unsigned long)parser->problem_mark.line + 1,
                             (unsigned long)parser->problem_mark.column + 1,
                             parser->problem ? parser->problem : "error", parser->context ? " " : "",
                             parser->context ? parser->context : "");
  qllc_diag_set_file(diag, path);
  return st;
}

/* The pre-pass over libyaml's events, stopping at the first one over a limit, so the document tree is
 * only built for an input of bounded depth and without aliases. */
static qllc_status check_limits(const unsigned char *buf, size_t len, const char *path, qllc_diag *diag) {
  yaml_parser_t parser;
  if (!yaml_parser_initialize(&parser)) return qllc_fail(diag, QLLC_ERR_NOMEM, NULL, "out of memory (yaml parser)");
  yaml_parser_set_input_string(&parser, buf, len);
  qllc_status st = QLLC_OK;
  int depth = 0, done = 0;
  while (!done && st == QLLC_OK) {
    yaml_event_t e;
    if (!yaml_parser_parse(&parser, &e)) {
      st = yaml_error(path, &parser, diag);
      break;
    }
    unsigned long line = (unsigned long)e.start_mark.line + 1;
    switch (e.type) {
    case YAML_MAPPING_START_EVENT:
    case YAML_SEQUENCE_START_EVENT:
      if (++depth > PROFILE_MAX_DEPTH) {
        st = qllc_fail(diag, QLLC_ERR_PARSE, NULL,
                       "%s:%lu: nested more than %d levels deep (the limit for a profile)", path, line,
                       PROFILE_MAX_DEPTH);
        qllc_diag_set_file(diag, path);
      }
      break;
    case YAML_MAPPING_END_EVENT:
    case YAML_SEQUENCE_END_EVENT: depth--; break;
    case YAML_ALIAS_EVENT:
      st = qllc_fail(diag, QLLC_ERR_PARSE, NULL, "%s:%lu: aliases ('*') are not allowed in a profile", path, line);
      qllc_diag_set_file(diag, path);
      break;
    case YAML_STREAM_END_EVENT: done = 1; break;
    default: break;
    }
    yaml_event_delete(&e);
  }
  yaml_parser_delete(&parser);
  return st;
}

qllc_status qllc_profile_read(const char *path, qllc_profile **out, qllc_diag *diag) {
  return qllc_profile_read_limited(path, PROFILE_MAX_COUNTERS, out, diag);
}

qllc_status qllc_profile_read_limited(const char *path, uint64_t max_counters, qllc_profile **out, qllc_diag *diag) {
  *out = NULL;
  unsigned char *buf = NULL;
  size_t len = 0;
  qllc_status st = qllc_read_file(path, "profile", PROFILE_MAX_BYTES, &buf, &len, diag);
  if (st != QLLC_OK) return st;
  if ((st = check_limits(buf, len, path, diag)) != QLLC_OK) {
    free(buf);
    return st;
  }
  yaml_parser_t parser;
  if (!yaml_parser_initialize(&parser)) {
    free(buf);
    return qllc_fail(diag, QLLC_ERR_NOMEM, NULL, "out of memory (yaml parser)");
  }
  yaml_parser_set_input_string(&parser, buf, len);
  rd r = {.path = path, .diag = diag};
  int loaded = yaml_parser_load(&parser, &r.doc);
  if (!loaded) st = yaml_error(path, &parser, diag);
  yaml_parser_delete(&parser);
  free(buf);
  if (!loaded) return st;

  qllc_profile *p = NULL;
  yaml_node_t *root = yaml_document_get_root_node(&r.doc);
  if (!root || root->type != YAML_MAPPING_NODE) {
    st = bad(&r, root, "%s", "not a qllc profile (expected a mapping at the top)");
    goto done;
  }
  static const char *const keys[] = {"format", "graph_hash", "bins", "values", "samples"};
  yaml_node_t *kv[5];
  if ((st = take_keys(&r, root, keys, kv, 5)) != QLLC_OK) goto done;
  yaml_node_t *nhash = kv[1], *nbins = kv[2], *nvalues = kv[3];
  const char *fmt = str_of(kv[0]), *hash = str_of(nhash);
  if (!fmt || strcmp(fmt, FORMAT_TAG) != 0) {
    st = bad(&r, root, "%s", "not a qllc profile (missing 'format: " FORMAT_TAG "')");
    goto done;
  }
  if (!hash || strlen(hash) != 16 || strspn(hash, "0123456789abcdefABCDEF") != 16) {
    st = bad(&r, nhash ? nhash : root, "%s", "'graph_hash' must be 16 hex digits");
    goto done;
  }
  uint64_t bins = QLLC_HIST_DEFAULT_BINS;
  if (nbins && (st = get_u64(&r, nbins, "bins", &bins))) goto done;
  if (bins < 16 || bins > (1 << 24) || bins % 2) {
    st = bad(&r, nbins, "%s", "'bins' must be even and in [16, 2^24]");
    goto done;
  }
  if (!nvalues || nvalues->type != YAML_SEQUENCE_NODE) {
    st = bad(&r, nvalues ? nvalues : root, "%s", "'values' must be a sequence");
    goto done;
  }
  /* Every value gets bins counters of 8 bytes: the total is bounded before any is allocated. */
  uint64_t n_values = (uint64_t)(nvalues->data.sequence.items.top - nvalues->data.sequence.items.start);
  if (n_values * bins > max_counters) {
    char what[200];
    snprintf(what, sizeof what, "%llu values of %llu bins need %llu histogram counters, over the limit of %llu (%llu MiB)",
             (unsigned long long)n_values, (unsigned long long)bins, (unsigned long long)(n_values * bins),
             (unsigned long long)max_counters, (unsigned long long)(max_counters >> 17));
    st = bad(&r, nvalues, "%s", what);
    goto done;
  }
  p = qllc_profile_new(strtoull(hash, NULL, 16), (int32_t)bins);
  if (!p || !(p->path = strdup(path))) {
    st = qllc_fail(diag, QLLC_ERR_NOMEM, NULL, "out of memory reading %s", path);
    goto done;
  }
  for (yaml_node_item_t *it = nvalues->data.sequence.items.start; it < nvalues->data.sequence.items.top; it++)
    if ((st = read_value(&r, p, yaml_document_get_node(&r.doc, *it))) != QLLC_OK) goto done;
  if (kv[4]) st = read_samples(&r, p, kv[4]);
done:
  yaml_document_delete(&r.doc);
  if (st != QLLC_OK) {
    qllc_profile_free(p);
    return st;
  }
  *out = p;
  return QLLC_OK;
}
