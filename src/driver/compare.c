/* src/driver/compare.c: where quantization loses accuracy (`qllc compare`, qllc_compare; issue 13).
 *
 * The float graph and its quantized copy are both instrumented (probe.c: every computed value a
 * graph output) and run on the same samples. A value of the quantized graph is matched to the float
 * value of the same ONNX name: an integer value (dequantized here with its scale and zero point, in
 * double) by its name, or by the name without ".q" for the integer twin the quantizer writes for a
 * graph output; an f32 value (a node kept in float, a dequantized graph output) by its name. Per value,
 * over every element of every sample, with f the float value and q the quantized one:
 *   SQNR       10 log10(sum f^2 / sum (q - f)^2) dB (+inf when q == f everywhere)
 *   max error  max |q - f|
 *   grid SQNR  the SQNR of f rounded to the value's own grid (scale, zero point, type range): what no
 *              computation ending on that grid can beat
 *   saturated  the share of elements whose float value lies outside the integer grid's range
 *              [s (qmin - z), s (qmax - z)] by more than half a step (those the type clipped)
 * Rows: the model's outputs first, then every other value, each group worst (lowest SQNR) first.
 */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "driver/driver_internal.h"

typedef struct acc {
  double sig, noise, maxabs, grid;
  int64_t count, sat;
} acc;

static const char *ename(qllc_elem e) { return qllc_elem_name((qllc_elem_kind)e); }

/* What the producing node computes, as the precision report says it: "i8 x i8 -> i8" for fused layers
 * and matmuls, "i8 -> i8" for the others, "f32" for a node kept in float. */
void qllc_quant_node_types(const qllc_node *n, char *buf, size_t size) {
  const qllc_qnode *q = n ? n->quant : NULL;
  if (!q && n && (n->op == QLLC_OP_QUANTIZE || n->op == QLLC_OP_DEQUANTIZE)) {
    snprintf(buf, size, "%s -> %s", ename(n->in[0]->elem), ename(n->out[0]->elem));
    return;
  }
  if (!q) {
    snprintf(buf, size, "f32");
    return;
  }
  if (q->kind == QLLC_QK_FUSED || q->kind == QLLC_QK_MATMUL)
    snprintf(buf, size, "%s x %s -> %s", ename(q->in_elem), ename(q->w_elem), ename(q->out_elem));
  else
    snprintf(buf, size, "%s -> %s", ename(q->in_elem), ename(q->out_elem));
}

static double load(const void *p, qllc_elem e, int64_t i) {
  switch (e) {
  case QLLC_ELEM_I8: return ((const int8_t *)p)[i];
  case QLLC_ELEM_U8: return ((const uint8_t *)p)[i];
  case QLLC_ELEM_I16: return ((const int16_t *)p)[i];
  default: return ((const float *)p)[i];
  }
}

static int find_float(const qllc_probe *fp, const char *name) {
  for (int i = 0; i < qllc_probe_num_values(fp); i++)
    if (strcmp(qllc_probe_value(fp, i)->name, name) == 0) return i;
  return -1;
}

/* The quantizer fused the Relu that is v's only consumer into v's producer (an Add or Sub whose output
 * grid is the Relu's, quantize.c): v holds the Relu's values, so it is compared with the float value
 * clamped at 0. */
static int relu_fused(const qllc_graph *g, const qllc_value *v) {
  const qllc_node *p = v->producer, *user = NULL;
  if (!p || !p->quant || (p->op != QLLC_OP_ADD && p->op != QLLC_OP_SUB) || v->elem == QLLC_ELEM_F32) return 0;
  int users = 0;
  for (int i = 0; i < g->n_nodes; i++)
    for (int k = 0; k < g->nodes[i]->n_in; k++)
      if (g->nodes[i]->in[k] == v) users++, user = g->nodes[i];
  if (users != 1 || user->op != QLLC_OP_RELU || !user->quant) return 0;
  const qllc_value *y = user->out[0];
  return y->elem == v->elem && y->scale == v->scale && y->zero_point == v->zero_point &&
         ((const qllc_qnode *)p->quant)->act_lo == v->zero_point;
}

static int row_cmp(const void *a, const void *b) {
  const qllc_compare_row *x = a, *y = b;
  if (x->is_output != y->is_output) return y->is_output - x->is_output;
  if (x->sqnr_db < y->sqnr_db) return -1;
  if (x->sqnr_db > y->sqnr_db) return 1;
  return strcmp(x->value, y->value);
}

static char *sdup(const char *s) {
  size_t n = strlen(s ? s : "") + 1;
  char *d = malloc(n);
  if (d) memcpy(d, s ? s : "", n);
  return d;
}

void qllc_compare_result_free(qllc_compare_result *r) {
  if (!r) return;
  for (int i = 0; i < r->n_rows; i++) {
    free((char *)r->rows[i].value);
    free((char *)r->rows[i].node);
    free((char *)r->rows[i].op);
  }
  free(r->rows);
  free(r);
}

double qllc_sqnr_db(double signal, double noise) {
  if (noise == 0) return INFINITY;
  if (signal == 0) return -INFINITY;
  return 10.0 * log10(signal / noise);
}

/* qllc_options.progress of the hooks' options, when there is one: "compare: ..." (NULL: the end). */
static void say(const qllc_probe_hooks *h, const char *text) {
  if (h && h->opts && h->opts->progress) h->opts->progress(h->opts->progress_ctx, text);
}

qllc_status qllc_quant_compare(qllc_graph *fg, qllc_graph *qg, qllc_dataset *d, const qllc_probe_hooks *h,
                               qllc_compare_result **out, qllc_diag *diag) {
  *out = NULL;
  say(h, "compare: compiling the float and the quantized model");
  /* the quantized graph's graph outputs, before instrumenting adds more */
  const qllc_graph *qouts = qg;
  qllc_probe *fp = NULL, *qp = NULL;
  int *match = NULL, nq = 0;
  char *fused = NULL;
  acc *a = NULL;
  qllc_compare_result *r = NULL;
  int n_graph_outputs = qouts->n_outputs;
  char **out_names = calloc((size_t)n_graph_outputs + 1, sizeof *out_names);
  if (!out_names) return qllc_fail(diag, QLLC_ERR_NOMEM, NULL, "out of memory");
  qllc_status st = QLLC_OK;
  for (int i = 0; i < n_graph_outputs && st == QLLC_OK; i++)
    if (!(out_names[i] = sdup(qouts->outputs[i]->name))) st = qllc_fail(diag, QLLC_ERR_NOMEM, NULL, "out of memory");
  if (st == QLLC_OK) st = qllc_probe_build(fg, QLLC_PROBE_FLOAT, h, &fp, diag);
  if (st == QLLC_OK) st = qllc_probe_build(qg, QLLC_PROBE_FLOAT | QLLC_PROBE_INTEGER, h, &qp, diag);
  if (st != QLLC_OK) goto done;

  /* match every quantized value to a float one */
  nq = qllc_probe_num_values(qp);
  match = malloc(sizeof *match * (size_t)(nq + 1));
  a = calloc((size_t)nq + 1, sizeof *a);
  if (!match || !a) {
    st = qllc_fail(diag, QLLC_ERR_NOMEM, NULL, "out of memory");
    goto done;
  }
  for (int i = 0; i < nq; i++) {
    const qllc_value *v = qllc_probe_value(qp, i);
    match[i] = -1;
    int fi = find_float(fp, v->name);
    if (v->elem == QLLC_ELEM_F32) {
      /* an f32 value of the quantized graph: a node kept in float, or a dequantized graph output (whose
         integer twin has the row, unless the output was computed in float) */
      const qllc_node *p = v->producer;
      if (fi >= 0 && (!p || p->op != QLLC_OP_DEQUANTIZE)) match[i] = fi;
      continue;
    }
    if (fi < 0) { /* "<name>.q" */
      size_t len = strlen(v->name);
      if (len > 2 && strcmp(v->name + len - 2, ".q") == 0) {
        char *base = sdup(v->name);
        if (!base) {
          st = qllc_fail(diag, QLLC_ERR_NOMEM, NULL, "out of memory");
          goto done;
        }
        base[len - 2] = 0;
        fi = find_float(fp, base);
        free(base);
      }
    }
    match[i] = fi;
  }

  fused = calloc((size_t)nq + 1, 1);
  if (!fused) {
    st = qllc_fail(diag, QLLC_ERR_NOMEM, NULL, "out of memory");
    goto done;
  }
  for (int i = 0; i < nq; i++) fused[i] = (char)relu_fused(qg, qllc_probe_value(qp, i));
  int64_t samples = qllc_dataset_samples(d);
  for (int64_t s = 0; s < samples && st == QLLC_OK; s++) {
    if (h && h->opts && h->opts->progress) {
      char line[64];
      snprintf(line, sizeof line, "compare: sample %lld/%lld", (long long)s + 1, (long long)samples);
      say(h, line);
    }
    if ((st = qllc_probe_run(fp, d, s, diag)) != QLLC_OK) break;
    if ((st = qllc_probe_run(qp, d, s, diag)) != QLLC_OK) break;
    for (int i = 0; i < nq; i++) {
      if (match[i] < 0) continue;
      const qllc_value *v = qllc_probe_value(qp, i);
      const float *f = qllc_probe_value_data(fp, match[i]);
      const void *q = qllc_probe_value_data(qp, i);
      int64_t n = qllc_value_numel(v);
      if (n != qllc_value_numel(qllc_probe_value(fp, match[i]))) {
        match[i] = -1;
        continue;
      }
      double sc = v->elem == QLLC_ELEM_F32 ? 1.0 : (double)v->scale, z = v->elem == QLLC_ELEM_F32 ? 0 : v->zero_point;
      double lo = -INFINITY, hi = INFINITY, clo = -INFINITY, chi = INFINITY;
      if (v->elem != QLLC_ELEM_F32) {
        int32_t qmin, qmax;
        qllc_quant_range(v->elem, 0, &qmin, &qmax);
        lo = sc * (qmin - z) - 0.5 * sc;
        hi = sc * (qmax - z) + 0.5 * sc;
        /* a clamp the quantizer fused into the producer (a Relu after an Add): the float value is
           compared clamped the same way (the row's types say "+ clamp") */
        if (fused[i]) clo = 0;
      }
      acc *x = &a[i];
      for (int64_t k = 0; k < n; k++) {
        double fv = fmin(fmax((double)f[k], clo), chi), qv = v->elem == QLLC_ELEM_F32 ? load(q, v->elem, k) : sc * (load(q, v->elem, k) - z);
        double e = qv - fv;
        if (v->elem != QLLC_ELEM_F32) { /* the float value on this grid, as QuantizeLinear would put it */
          double r = fmin(fmax(nearbyint(fv / sc) + z, lo / sc + z + 0.5), hi / sc + z - 0.5);
          x->grid += (sc * (r - z) - fv) * (sc * (r - z) - fv);
        }
        x->sig += fv * fv;
        x->noise += e * e;
        if (fabs(e) > x->maxabs) x->maxabs = fabs(e);
        x->sat += fv < lo || fv > hi;
      }
      x->count += n;
    }
  }
  if (st != QLLC_OK) goto done;

  r = calloc(1, sizeof *r);
  if (!r || !(r->rows = calloc((size_t)nq + 1, sizeof *r->rows))) {
    st = qllc_fail(diag, QLLC_ERR_NOMEM, NULL, "out of memory");
    goto done;
  }
  r->samples = samples;
  for (int i = 0; i < nq; i++) {
    if (match[i] < 0) continue;
    const qllc_value *v = qllc_probe_value(qp, i);
    const qllc_value *fv = qllc_probe_value(fp, match[i]);
    qllc_compare_row *row = &r->rows[r->n_rows++];
    const qllc_node *p = v->producer;
    row->value = sdup(fv->name);
    row->node = sdup(p ? p->name : "(input)");
    row->op = sdup(p ? (p->op_type ? p->op_type : qllc_op_name(p->op)) : "");
    if (!row->value || !row->node || !row->op) {
      st = qllc_fail(diag, QLLC_ERR_NOMEM, NULL, "out of memory");
      goto done;
    }
    if (!strncmp(row->op, "qllc.", 5)) memmove((char *)row->op, row->op + 5, strlen(row->op + 5) + 1);
    qllc_quant_node_types(p, row->types, sizeof row->types);
    if (fused[i]) snprintf(row->types + strlen(row->types), sizeof row->types - strlen(row->types), " + Relu");
    row->elem = (qllc_elem_kind)v->elem;
    row->scale = v->elem == QLLC_ELEM_F32 ? 1.0f : v->scale;
    row->zero_point = v->elem == QLLC_ELEM_F32 ? 0 : v->zero_point;
    for (int k = 0; k < n_graph_outputs; k++) row->is_output |= strcmp(out_names[k], fv->name) == 0;
    row->count = a[i].count;
    row->sqnr_db = qllc_sqnr_db(a[i].sig, a[i].noise);
    row->max_abs_err = a[i].maxabs;
    row->saturated = a[i].count ? (double)a[i].sat / (double)a[i].count : 0;
    row->signal_rms = a[i].count ? sqrt(a[i].sig / (double)a[i].count) : 0;
    row->grid_sqnr_db = v->elem == QLLC_ELEM_F32 ? INFINITY : qllc_sqnr_db(a[i].sig, a[i].grid);
  }
  qsort(r->rows, (size_t)r->n_rows, sizeof *r->rows, row_cmp);

done:
  say(h, NULL);
  for (int i = 0; i < n_graph_outputs; i++) free(out_names[i]);
  free(out_names);
  free(match);
  free(fused);
  free(a);
  qllc_probe_free(fp);
  qllc_probe_free(qp);
  if (st != QLLC_OK) {
    qllc_compare_result_free(r);
    return st;
  }
  *out = r;
  return QLLC_OK;
}

/* ---- the command ----------------------------------------------------------------------------------- */

/* The data set an accuracy measurement runs on: the user's specs, the calibration samples kept in the
 * profile, or (a profile without them) samples drawn from its histograms. */
qllc_status qllc_drv_samples(qllc_drv_model *m, const qllc_options *o, const char *const *specs, int n_specs,
                                  int64_t max_samples, qllc_dataset **ds, int *drawn, qllc_diag *diag) {
  *ds = NULL;
  *drawn = n_specs <= 0;
  if (n_specs > 0) {
    qllc_status st = qllc_dataset_open(m->graph, specs, n_specs, ds, diag);
    if (st == QLLC_OK) qllc_dataset_limit(*ds, max_samples);
    return st;
  }
  qllc_profile *prof = NULL;
  qllc_status st = qllc_profile_read(o->profile_path, &prof, diag);
  if (st != QLLC_OK) {
    qllc_diag_set_file(diag, o->profile_path);
    return st;
  }
  if (prof->n_samples > 0) {
    *drawn = 2;
    st = qllc_dataset_from_kept(m->graph, prof, max_samples, ds, diag);
  } else {
    st = qllc_dataset_from_profile(m->graph, prof, max_samples > 0 ? max_samples : 32, 13, ds, diag);
  }
  if (st != QLLC_OK) qllc_diag_set_file(diag, o->profile_path);
  qllc_profile_free(prof);
  return st;
}

qllc_status qllc_drv_compare(qllc_drv_model *m, const qllc_options *opts, const char *const *dataset_specs,
                             int n_specs, int64_t max_samples, qllc_compare_result **out, qllc_diag *diag) {
  *out = NULL;
  if (opts->precision == QLLC_PREC_FLOAT)
    return qllc_fail(diag, QLLC_ERR_INVALID, NULL, "compare needs --precision int8 or int16 (and --profile)");
  qllc_options o = *opts;
  o.quantized_io = 0; /* both models take the same float samples */
  o.dump_after = NULL;
  o.target = NULL;    /* runs here */
  qllc_graph *fg = NULL, *qg = NULL;
  int owned = 0, drawn = 0;
  qllc_dataset *ds = NULL;
  qllc_status st = qllc_drv_graph_for(m, &o, 0, &qg, &owned, diag);
  if (st == QLLC_OK) st = qllc_drv_model_graph(m, &fg, diag);
  if (st == QLLC_OK) st = qllc_drv_samples(m, &o, dataset_specs, n_specs, max_samples, &ds, &drawn, diag);
  if (st == QLLC_OK) {
    qllc_probe_hooks h = {qllc_drv_instr_lower, &o, &o};
    st = qllc_quant_compare(fg, qg, ds, &h, out, diag);
    if (st == QLLC_OK) (*out)->drawn = drawn;
  }
  st = qllc_drv_precision_map_finish(st, diag); /* --precision-map-out, once the comparison ran */
  if (st != QLLC_OK && *out) {
    qllc_compare_result_free(*out);
    *out = NULL;
  }
  if (st != QLLC_OK && diag && !diag->file[0]) qllc_diag_set_file(diag, m->path);
  qllc_dataset_free(ds);
  if (fg) qllc_graph_free(fg);
  if (qg && owned) qllc_graph_free(qg);
  return st;
}
