/* src/driver/probe.c: data sets, instrumented programs and the profiling loop (driver_internal.h).
 *
 * `qllc profile`, `qllc compare` and the precision search run this same code: the data set is read the
 * same way, every value is exposed the same way, and the program is JIT-compiled for the host with the
 * driver's lowering (hooks).
 */
#define _POSIX_C_SOURCE 200809L
#include "driver/driver_internal.h"

#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---- data sets -------------------------------------------------------------------------------- */

/* One model input's samples: either one tensor holding all of them along its leading axis, or a list
 * of per-sample files read one at a time. */
typedef struct ds_input {
  const qllc_value *value;   /* the graph input */
  const char *spec;          /* the spec as given (for errors) */
  const char *path;          /* the file or directory part */
  qllc_tensor all;           /* file mode: every sample */
  char **files;              /* directory mode: sorted paths */
  int n_files;
  int64_t n_samples;
  uint64_t sample_bytes;
  /* drawn from a profile (qllc_dataset_from_profile): the histogram's cumulative counts */
  double *cdf;               /* [bins], NULL for a file or directory */
  int32_t bins;
  double range, vmin, vmax;
  uint64_t seed;
} ds_input;

static void ds_free(ds_input *d) {
  free(d->cdf);
  qllc_tensor_free(&d->all);
  for (int i = 0; i < d->n_files; i++) free(d->files[i]);
  free(d->files);
}

static int cmp_path(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

static int has_suffix(const char *s, const char *suf) {
  size_t n = strlen(s), k = strlen(suf);
  return n > k && strcmp(s + n - k, suf) == 0;
}

static void shape_str(uint32_t rank, const int64_t *dims, char *buf, size_t size) {
  size_t n = (size_t)snprintf(buf, size, "<");
  for (uint32_t d = 0; d < rank && n < size; d++)
    n += (size_t)snprintf(buf + n, size - n, d ? " x %lld" : "%lld", (long long)dims[d]);
  if (n < size) snprintf(buf + n, size - n, ">");
}

/* Does a tensor of shape (rank, dims) hold exactly one sample of value v? ([1, D...] may drop the 1.) */
static int one_sample_shape(const qllc_value *v, uint32_t rank, const int64_t *dims) {
  if ((int)rank == v->rank) {
    for (int d = 0; d < v->rank; d++)
      if (dims[d] != v->dims[d]) return 0;
    return 1;
  }
  if ((int)rank + 1 == v->rank && v->dims[0] == 1) {
    for (uint32_t d = 0; d < rank; d++)
      if (dims[d] != v->dims[d + 1]) return 0;
    return 1;
  }
  return 0;
}

/* 1 when the spec names an .npz file or a directory holding one: it gives every input its own array. */
static int npz_spec(const char *path) {
  struct stat sb;
  if (has_suffix(path, ".npz")) return 1;
  if (stat(path, &sb) != 0 || !S_ISDIR(sb.st_mode)) return 0;
  DIR *dir = opendir(path);
  int found = 0;
  for (struct dirent *e; dir && !found && (e = readdir(dir));) found = e->d_name[0] != '.' && has_suffix(e->d_name, ".npz");
  if (dir) closedir(dir);
  return found;
}

/* Opens one input's spec (a file of samples or a directory of per-sample files). */
static qllc_status ds_open(ds_input *d, qllc_diag *diag) {
  const qllc_value *v = d->value;
  char want[200], got[200];
  shape_str((uint32_t)v->rank, v->dims, want, sizeof want);
  d->sample_bytes = (uint64_t)qllc_value_numel(v) * sizeof(float);
  if (v->elem != QLLC_ELEM_F32)
    return qllc_fail(diag, QLLC_ERR_UNSUPPORTED, NULL, "input '%s' is %s: profiling needs float inputs", v->name,
                     qllc_elem_name((qllc_elem_kind)v->elem));
  struct stat sb;
  if (stat(d->path, &sb) != 0) {
    qllc_fail(diag, QLLC_ERR_IO, NULL, "cannot open data set '%s': %s", d->path, strerror(errno));
    qllc_diag_set_file(diag, d->path);
    return QLLC_ERR_IO;
  }
  if (S_ISDIR(sb.st_mode)) {
    DIR *dir = opendir(d->path);
    if (!dir) {
      qllc_fail(diag, QLLC_ERR_IO, NULL, "cannot read directory '%s': %s", d->path, strerror(errno));
      qllc_diag_set_file(diag, d->path);
      return QLLC_ERR_IO;
    }
    int cap = 0;
    struct dirent *e;
    while ((e = readdir(dir))) {
      if (e->d_name[0] == '.' || !(has_suffix(e->d_name, ".npy") || has_suffix(e->d_name, ".pb") ||
                                   has_suffix(e->d_name, ".npz")))
        continue;
      if (d->n_files == cap) {
        cap = cap ? 2 * cap : 64;
        char **nf = realloc(d->files, (size_t)cap * sizeof *nf);
        if (!nf) break;
        d->files = nf;
      }
      size_t len = strlen(d->path) + strlen(e->d_name) + 2;
      char *fp = malloc(len);
      if (!fp) break;
      snprintf(fp, len, "%s/%s", d->path, e->d_name);
      d->files[d->n_files++] = fp;
    }
    closedir(dir);
    if (d->n_files == 0) {
      qllc_fail(diag, QLLC_ERR_INVALID, NULL, "data set directory '%s' has no .npy, .npz or .pb files", d->path);
      qllc_diag_set_file(diag, d->path);
      return QLLC_ERR_INVALID;
    }
    qsort(d->files, (size_t)d->n_files, sizeof *d->files, cmp_path);
    d->n_samples = d->n_files;
    return QLLC_OK;
  }
  qllc_status st = qllc_tensor_read_named(d->path, v->name, &d->all, diag);
  if (st != QLLC_OK) {
    qllc_diag_set_file(diag, d->path);
    return st;
  }
  const qllc_tensor *t = &d->all;
  shape_str(t->rank, t->dims, got, sizeof got);
  if (t->elem != QLLC_F32) {
    qllc_fail(diag, QLLC_ERR_INVALID, NULL, "input '%s': data set is %s, the model wants f32", v->name,
              qllc_elem_name(t->elem));
    qllc_diag_set_file(diag, d->path);
    return QLLC_ERR_INVALID;
  }
  if (t->rank == (uint32_t)v->rank && one_sample_shape(v, t->rank, t->dims) && v->dims[0] != 1) {
    d->n_samples = 1; /* exactly one sample of a batched input */
    return QLLC_OK;
  }
  /* samples along the leading axis: [S, rest] where rest is one sample */
  if (t->rank >= 1 && one_sample_shape(v, t->rank - 1, t->dims + 1)) {
    d->n_samples = t->dims[0];
    if (d->n_samples > 0) return QLLC_OK;
  }
  qllc_fail(diag, QLLC_ERR_INVALID, NULL,
            "input '%s' is f32%s: a data set must be [S, ...] with one sample per leading index, got %s", v->name,
            want, got);
  qllc_diag_set_file(diag, d->path);
  return QLLC_ERR_INVALID;
}

/* Copies sample i of d to dst (sample_bytes). */
/* splitmix64: a small, well-mixed generator (the samples must be the same on every run and machine). */
static uint64_t mix64(uint64_t *x) {
  uint64_t z = (*x += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

static double unit(uint64_t *x) { return (double)(mix64(x) >> 11) * 0x1p-53; }

/* Sample i of an input drawn from its profile: every element independently from the histogram (a bin
 * by its count, then uniformly within the bin, clamped to the exact [min, max] seen). */
static void ds_draw(ds_input *d, int64_t i, float *dst) {
  uint64_t st = d->seed ^ ((uint64_t)i * 0xd1342543de82ef95ull);
  int64_t n = (int64_t)(d->sample_bytes / sizeof(float));
  double total = d->cdf[d->bins - 1], width = 2.0 * d->range / d->bins;
  for (int64_t k = 0; k < n; k++) {
    double v = 0;
    if (total > 0) {
      double u = unit(&st) * total;
      int32_t lo = 0, hi = d->bins - 1;
      while (lo < hi) { /* the first bin whose cumulative count exceeds u */
        int32_t mid = (lo + hi) / 2;
        if (d->cdf[mid] > u) hi = mid;
        else lo = mid + 1;
      }
      v = ((double)lo - d->bins / 2 + unit(&st)) * width;
      if (v < d->vmin) v = d->vmin;
      if (v > d->vmax) v = d->vmax;
    }
    dst[k] = (float)v;
  }
}

static qllc_status ds_sample(ds_input *d, int64_t i, uint8_t *dst, qllc_diag *diag) {
  if (d->cdf) {
    ds_draw(d, i, (float *)dst);
    return QLLC_OK;
  }
  if (!d->files) {
    memcpy(dst, (const uint8_t *)d->all.data + (uint64_t)i * d->sample_bytes, d->sample_bytes);
    return QLLC_OK;
  }
  qllc_tensor t;
  memset(&t, 0, sizeof t);
  const char *fp = d->files[i];
  qllc_status st = qllc_tensor_read_named(fp, d->value->name, &t, diag);
  if (st == QLLC_OK && (t.elem != QLLC_F32 || !one_sample_shape(d->value, t.rank, t.dims))) {
    char want[200], got[200];
    shape_str((uint32_t)d->value->rank, d->value->dims, want, sizeof want);
    shape_str(t.rank, t.dims, got, sizeof got);
    st = qllc_fail(diag, QLLC_ERR_INVALID, NULL, "input '%s' is f32%s, the file is %s%s", d->value->name, want,
                   qllc_elem_name(t.elem), got);
  }
  if (st == QLLC_OK) memcpy(dst, t.data, d->sample_bytes);
  qllc_tensor_free(&t);
  if (st != QLLC_OK) qllc_diag_set_file(diag, fp);
  return st;
}

/* Assigns specs to the graph's inputs: NAME=SPEC by name, the others in model order. */
static qllc_status ds_assign(const qllc_graph *g, const char *const *specs, int n_specs, ds_input *ds,
                             qllc_diag *diag) {
  int *given = calloc((size_t)n_specs + 1, sizeof *given); /* spec k went to input given[k] - 1 */
  if (!given) return qllc_fail(diag, QLLC_ERR_NOMEM, NULL, "out of memory");
  qllc_status st = QLLC_OK;
  for (int k = 0; k < n_specs && st == QLLC_OK; k++) {
    const char *eq = strchr(specs[k], '=');
    if (!eq) continue;
    size_t len = (size_t)(eq - specs[k]);
    struct stat sb;
    int at = -1;
    for (int i = 0; i < g->n_inputs; i++)
      if (strlen(g->inputs[i]->name) == len && strncmp(g->inputs[i]->name, specs[k], len) == 0) at = i;
    if (at < 0 && stat(specs[k], &sb) == 0) continue; /* a path with '=' in it */
    if (at < 0)
      st = qllc_fail(diag, QLLC_ERR_INVALID, NULL, "--dataset %s: the model has no input named '%.*s'", specs[k],
                     (int)len, specs[k]);
    else if (ds[at].spec)
      st = qllc_fail(diag, QLLC_ERR_INVALID, NULL, "input '%s' given two data sets", g->inputs[at]->name);
    else {
      ds[at].spec = specs[k];
      ds[at].path = eq + 1;
      given[k] = at + 1;
    }
  }
  for (int k = 0, next = 0; k < n_specs && st == QLLC_OK; k++) {
    if (given[k]) continue;
    while (next < g->n_inputs && ds[next].spec) next++;
    if (next < g->n_inputs && npz_spec(specs[k])) { /* every input left takes its array from it */
      for (int i = next; i < g->n_inputs; i++)
        if (!ds[i].spec) ds[i].spec = ds[i].path = specs[k];
      continue;
    }
    if (next >= g->n_inputs) {
      st = qllc_fail(diag, QLLC_ERR_INVALID, NULL, "%d data sets given, the model has %d input%s", n_specs,
                     g->n_inputs, g->n_inputs == 1 ? "" : "s");
      break;
    }
    ds[next].spec = ds[next].path = specs[k];
  }
  for (int i = 0; i < g->n_inputs && st == QLLC_OK; i++)
    if (!ds[i].spec)
      st = qllc_fail(diag, QLLC_ERR_INVALID, NULL, "no data set for input '%s' (give --dataset %s=FILE)",
                     g->inputs[i]->name, g->inputs[i]->name);
  free(given);
  return st;
}

struct qllc_dataset {
  int n;
  ds_input *in;
  int64_t samples;
};

void qllc_dataset_free(qllc_dataset *d) {
  if (!d) return;
  for (int i = 0; i < d->n; i++) ds_free(&d->in[i]);
  free(d->in);
  free(d);
}

int64_t qllc_dataset_samples(const qllc_dataset *d) { return d ? d->samples : 0; }

void qllc_dataset_limit(qllc_dataset *d, int64_t max) {
  if (d && max > 0 && d->samples > max) d->samples = max;
}

static qllc_dataset *dataset_new(const qllc_graph *g) {
  qllc_dataset *d = calloc(1, sizeof *d);
  if (!d) return NULL;
  d->n = g->n_inputs;
  d->in = calloc((size_t)d->n + 1, sizeof *d->in);
  if (!d->in) {
    free(d);
    return NULL;
  }
  for (int i = 0; i < d->n; i++) d->in[i].value = g->inputs[i];
  return d;
}

qllc_status qllc_dataset_open(const qllc_graph *g, const char *const *specs, int n_specs, qllc_dataset **out,
                              qllc_diag *diag) {
  *out = NULL;
  if (n_specs <= 0 || !specs) return qllc_fail(diag, QLLC_ERR_INVALID, NULL, "no data set given");
  qllc_dataset *d = dataset_new(g);
  if (!d) return qllc_fail(diag, QLLC_ERR_NOMEM, NULL, "out of memory");
  int n_in = d->n;
  ds_input *ds = d->in;
  qllc_status st = ds_assign(g, specs, n_specs, ds, diag);
  for (int i = 0; i < n_in && st == QLLC_OK; i++) st = ds_open(&ds[i], diag);
  int64_t n_samples = n_in ? ds[0].n_samples : 0;
  for (int i = 1; i < n_in && st == QLLC_OK; i++)
    if (ds[i].n_samples != n_samples)
      st = qllc_fail(diag, QLLC_ERR_INVALID, NULL, "input '%s' has %lld samples, input '%s' has %lld",
                     ds[0].value->name, (long long)n_samples, ds[i].value->name, (long long)ds[i].n_samples);
  if (st != QLLC_OK) {
    qllc_dataset_free(d);
    return st;
  }
  d->samples = n_samples;
  *out = d;
  return QLLC_OK;
}

qllc_status qllc_dataset_from_profile(const qllc_graph *g, const qllc_profile *prof, int64_t samples,
                                      uint64_t seed, qllc_dataset **out, qllc_diag *diag) {
  *out = NULL;
  qllc_dataset *d = dataset_new(g);
  if (!d) return qllc_fail(diag, QLLC_ERR_NOMEM, NULL, "out of memory");
  qllc_status st = QLLC_OK;
  for (int i = 0; i < d->n && st == QLLC_OK; i++) {
    ds_input *x = &d->in[i];
    const qllc_hist *h;
    if (x->value->elem != QLLC_ELEM_F32) {
      st = qllc_fail(diag, QLLC_ERR_UNSUPPORTED, NULL, "input '%s' is %s: samples are drawn for float inputs only",
                     x->value->name, qllc_elem_name((qllc_elem_kind)x->value->elem));
      break;
    }
    if ((st = qllc_profile_get(prof, x->value->name, &h, diag)) != QLLC_OK) break;
    x->spec = x->path = "(drawn from the profile)";
    x->sample_bytes = (uint64_t)qllc_value_numel(x->value) * sizeof(float);
    x->n_samples = samples;
    x->bins = h->bins;
    x->range = h->range;
    x->vmin = h->total ? h->min : 0;
    x->vmax = h->total ? h->max : 0;
    x->seed = seed + 0x632be59bd9b4e019ull * (uint64_t)(i + 1);
    if (!(x->cdf = malloc(sizeof *x->cdf * (size_t)h->bins))) {
      st = qllc_fail(diag, QLLC_ERR_NOMEM, NULL, "out of memory");
      break;
    }
    double c = 0;
    for (int32_t k = 0; k < h->bins; k++) x->cdf[k] = c += (double)h->counts[k];
  }
  if (st != QLLC_OK) {
    qllc_dataset_free(d);
    return st;
  }
  d->samples = samples;
  *out = d;
  return QLLC_OK;
}

qllc_status qllc_dataset_from_kept(const qllc_graph *g, const qllc_profile *prof, int64_t max, qllc_dataset **out,
                                   qllc_diag *diag) {
  *out = NULL;
  qllc_dataset *d = dataset_new(g);
  if (!d) return qllc_fail(diag, QLLC_ERR_NOMEM, NULL, "out of memory");
  int64_t n = prof->n_samples;
  if (max > 0 && n > max) n = max;
  qllc_status st = QLLC_OK;
  for (int i = 0; i < d->n && st == QLLC_OK; i++) {
    ds_input *x = &d->in[i];
    const qllc_profile_input *k = NULL;
    for (int j = 0; j < prof->n_inputs && !k; j++)
      if (!strcmp(prof->inputs[j].name, x->value->name)) k = &prof->inputs[j];
    uint64_t numel = (uint64_t)qllc_value_numel(x->value);
    if (x->value->elem != QLLC_ELEM_F32 || !k || k->numel != numel) {
      st = qllc_fail(diag, QLLC_ERR_INVALID, NULL,
                     "%s: the calibration samples kept in the profile do not fit input '%s' (%s)",
                     prof->path ? prof->path : "<profile>", x->value->name,
                     !k ? "not sampled" : x->value->elem != QLLC_ELEM_F32 ? "not float" : "another element count");
      break;
    }
    x->spec = x->path = "(the profile's calibration samples)";
    x->sample_bytes = numel * sizeof(float);
    x->n_samples = n;
    x->all.data = malloc((size_t)(x->sample_bytes * (uint64_t)n) + 1);
    if (!x->all.data) st = qllc_fail(diag, QLLC_ERR_NOMEM, NULL, "out of memory");
    else memcpy(x->all.data, k->data, (size_t)(x->sample_bytes * (uint64_t)n));
  }
  if (st != QLLC_OK) {
    qllc_dataset_free(d);
    return st;
  }
  d->samples = n;
  *out = d;
  return QLLC_OK;
}

qllc_status qllc_dataset_sample(qllc_dataset *d, const char *name, int64_t s, float *dst, qllc_diag *diag) {
  for (int k = 0; k < d->n; k++)
    if (d->in[k].value && strcmp(d->in[k].value->name, name) == 0) return ds_sample(&d->in[k], s, (uint8_t *)dst, diag);
  return qllc_fail(diag, QLLC_ERR_INVALID, NULL, "no data for input '%s'", name);
}

/* ---- instrumented programs -------------------------------------------------------------------- */

struct qllc_probe {
  qllc_program *p;
  qllc_jit_code *code;
  qllc_entry_fn entry;
  uint8_t *mut, *act;
};


void qllc_probe_free(qllc_probe *in) {
  if (!in) return;
  if (in->code) qllc_jit_code_free(in->code);
  if (in->p) qllc_program_free(in->p);
  free(in->mut);
  free(in->act);
  free(in);
}

static int exposed(const qllc_value *v, int which) {
  if (v->data || v->is_input || v->is_output || !v->producer) return 0;
  if (v->elem == QLLC_ELEM_F32) return (which & QLLC_PROBE_FLOAT) != 0;
  if (v->elem == QLLC_ELEM_I8 || v->elem == QLLC_ELEM_U8 || v->elem == QLLC_ELEM_I16)
    return (which & QLLC_PROBE_INTEGER) != 0 && v->scale > 0 && v->q_axis < 0;
  return 0;
}

qllc_status qllc_probe_build(qllc_graph *g, int which, const qllc_probe_hooks *h, qllc_probe **out, qllc_diag *diag) {
  *out = NULL;
  qllc_probe *in = calloc(1, sizeof *in);
  if (!in) return qllc_fail(diag, QLLC_ERR_NOMEM, NULL, "out of memory");
  qllc_status st = QLLC_OK;
  int n_vals = g->n_values;
  for (int i = 0; i < n_vals && st == QLLC_OK; i++) {
    qllc_value *v = g->values[i];
    if (!exposed(v, which)) continue;
    if (qllc_graph_add_output(g, v) != 0) st = qllc_fail(diag, QLLC_ERR_NOMEM, NULL, "out of memory");
  }
  if (st == QLLC_OK) st = h && h->lower ? h->lower(h->ctx, g, &in->p, diag) : qllc_lower(g, &in->p, diag);
  qllc_options dflt;
  qllc_options_init(&dflt);
  qllc_codegen_opts cg;
  memset(&cg, 0, sizeof cg);
  if (st == QLLC_OK) {
    st = qllc_drv_codegen_opts(h && h->opts ? h->opts : &dflt, 1, &cg, diag);
    cg.weights_in_object = 1;
    cg.entry_name = "qllc_instrumented_entry";
    cg.quick = (which & QLLC_PROBE_QUICK) != 0;
  }
  if (st == QLLC_OK) st = qllc_codegen_jit(in->p, &cg, &in->code, &in->entry, diag);
  if (st == QLLC_OK) {
    in->mut = qllc_drv_aligned_buffer(in->p->mutable_size);
    in->act = qllc_drv_aligned_buffer(in->p->act_size);
    if (!in->mut || !in->act) st = qllc_fail(diag, QLLC_ERR_NOMEM, NULL, "out of memory");
  }
  if (st != QLLC_OK) {
    qllc_probe_free(in);
    return st;
  }
  *out = in;
  return QLLC_OK;
}

qllc_status qllc_probe_run(qllc_probe *in, qllc_dataset *d, int64_t s, qllc_diag *diag) {
  const qllc_program *p = in->p;
  for (int i = 0; i < p->n_inputs; i++) {
    const qllc_value *v = p->inputs[i].value;
    if (v->elem != QLLC_ELEM_F32)
      return qllc_fail(diag, QLLC_ERR_UNSUPPORTED, NULL, "input '%s' is %s: instrumented runs need float inputs",
                       v->name, qllc_elem_name((qllc_elem_kind)v->elem));
    qllc_status st = qllc_dataset_sample(d, v->name, s, (float *)(in->mut + p->inputs[i].buf->offset), diag);
    if (st != QLLC_OK) return st;
  }
  int rc = in->entry(NULL, in->mut, in->act);
  if (rc != 0)
    return qllc_fail(diag, QLLC_ERR_RUNTIME, NULL, "the instrumented model returned error %d on sample %lld", rc,
                     (long long)s);
  return QLLC_OK;
}

int qllc_probe_num_values(const qllc_probe *in) { return in->p->n_outputs; }
const qllc_value *qllc_probe_value(const qllc_probe *in, int i) { return in->p->outputs[i].value; }
const void *qllc_probe_value_data(const qllc_probe *in, int i) { return in->mut + in->p->outputs[i].buf->offset; }
int qllc_probe_num_inputs(const qllc_probe *in) { return in->p->n_inputs; }
const qllc_value *qllc_probe_input(const qllc_probe *in, int i) { return in->p->inputs[i].value; }
const void *qllc_probe_input_data(const qllc_probe *in, int i) { return in->mut + in->p->inputs[i].buf->offset; }

/* ---- profiling -------------------------------------------------------------------------------- */

qllc_status qllc_probe_profile(qllc_graph *g, qllc_dataset *d, int32_t bins, const qllc_probe_hooks *h,
                               void (*progress)(void *ctx, int64_t done, int64_t total), void *progress_ctx,
                               qllc_profile **out, qllc_diag *diag) {
  *out = NULL;
  qllc_profile *prof = qllc_profile_new(qllc_graph_hash(g), bins); /* hashed clean, before outputs are added */
  if (!prof) return qllc_fail(diag, QLLC_ERR_NOMEM, NULL, "out of memory");
  qllc_probe *in = NULL;
  qllc_hist **in_h = NULL, **out_h = NULL;
  qllc_status st = qllc_probe_build(g, QLLC_PROBE_FLOAT, h, &in, diag);
  if (st != QLLC_OK) goto done;
  int n_in = qllc_probe_num_inputs(in), n_out = qllc_probe_num_values(in);
  in_h = calloc((size_t)n_in + 1, sizeof *in_h);
  out_h = calloc((size_t)n_out + 1, sizeof *out_h);
  if (!in_h || !out_h) {
    st = qllc_fail(diag, QLLC_ERR_NOMEM, NULL, "out of memory");
    goto done;
  }
  /* one histogram per float value: inputs recorded from the data, the rest from the outputs */
  for (int pass = 0; pass < 2 && st == QLLC_OK; pass++) { /* pointers are taken once every entry exists */
    for (int i = 0; i < n_in && st == QLLC_OK; i++)
      if (!(in_h[i] = qllc_profile_add(prof, qllc_probe_input(in, i)->name)))
        st = qllc_fail(diag, QLLC_ERR_NOMEM, NULL, "out of memory");
    for (int i = 0; i < n_out && st == QLLC_OK; i++) {
      if (qllc_probe_value(in, i)->elem != QLLC_ELEM_F32) continue;
      if (!(out_h[i] = qllc_profile_add(prof, qllc_probe_value(in, i)->name)))
        st = qllc_fail(diag, QLLC_ERR_NOMEM, NULL, "out of memory");
    }
  }
  int64_t n_samples = qllc_dataset_samples(d);
  const char **names = calloc((size_t)n_in + 1, sizeof *names);
  const float **data = calloc((size_t)n_in + 1, sizeof *data);
  uint64_t *numel = calloc((size_t)n_in + 1, sizeof *numel);
  if (!names || !data || !numel) st = qllc_fail(diag, QLLC_ERR_NOMEM, NULL, "out of memory");
  for (int64_t s = 0; s < n_samples && st == QLLC_OK; s++) {
    if ((st = qllc_probe_run(in, d, s, diag)) != QLLC_OK) break;
    /* the first samples, kept in the profile (bounded): compare and the search measure on them */
    for (int i = 0; i < n_in; i++) {
      names[i] = qllc_probe_input(in, i)->name;
      data[i] = qllc_probe_input_data(in, i);
      numel[i] = (uint64_t)qllc_value_numel(qllc_probe_input(in, i));
    }
    if (qllc_profile_keep_sample(prof, n_in, names, data, numel) < 0) {
      st = qllc_fail(diag, QLLC_ERR_NOMEM, NULL, "out of memory");
      break;
    }
    for (int i = 0; i < n_in; i++)
      qllc_hist_record(in_h[i], qllc_probe_input_data(in, i), qllc_value_numel(qllc_probe_input(in, i)));
    for (int i = 0; i < n_out; i++)
      if (out_h[i]) qllc_hist_record(out_h[i], qllc_probe_value_data(in, i), qllc_value_numel(qllc_probe_value(in, i)));
    if (progress) progress(progress_ctx, s + 1, n_samples);
  }
  free(names);
  free(data);
  free(numel);
done:
  free(in_h);
  free(out_h);
  qllc_probe_free(in);
  if (st != QLLC_OK) {
    qllc_profile_free(prof);
    return st;
  }
  *out = prof;
  return QLLC_OK;
}

/* ---- the command ----------------------------------------------------------------------------------- */

qllc_status qllc_drv_profile(qllc_drv_model *m, const qllc_options *opts, const char *const *dataset_specs,
                             int n_specs, int bins, const char *out_yaml, qllc_progress_fn progress,
                             void *progress_ctx, qllc_profile_summary *summary, qllc_diag *diag) {
  qllc_options dflt;
  qllc_options_init(&dflt);
  /* only the user kernels matter to the float run (issue 7) */
  dflt.kernel_files = opts->kernel_files;
  dflt.n_kernel_files = opts->n_kernel_files;
  if (bins == 0) bins = QLLC_HIST_DEFAULT_BINS;

  qllc_graph *g = NULL;
  qllc_profile *prof = NULL;
  qllc_dataset *ds = NULL;
  /* the data set, checked before anything is compiled */
  qllc_status st = qllc_dataset_open(m->graph, dataset_specs, n_specs, &ds, diag);
  if (st == QLLC_OK) st = qllc_drv_model_graph(m, &g, diag);
  if (st == QLLC_OK) {
    qllc_probe_hooks h = {qllc_drv_instr_lower, &dflt, &dflt};
    st = qllc_probe_profile(g, ds, bins, &h, progress, progress_ctx, &prof, diag);
    if (st != QLLC_OK && diag && !diag->file[0]) qllc_diag_set_file(diag, m->path);
  }
  if (st != QLLC_OK) goto done;

  /* all or nothing, through qllc_outfile (a temporary renamed over a regular file; a device in place) */
  st = qllc_profile_write(prof, out_yaml, diag);
  if (st != QLLC_OK) {
    if (diag) {
      diag->file[0] = '\0';
      qllc_diag_set_file(diag, out_yaml);
    }
    goto done;
  }
  if (summary) {
    summary->samples = qllc_dataset_samples(ds);
    summary->values = prof->n;
  }

done:
  if (g) qllc_graph_free(g);
  if (prof) qllc_profile_free(prof);
  qllc_dataset_free(ds);
  return st;
}
