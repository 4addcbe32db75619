/* tools/qllc/cmd_compare.c: `qllc compare`: where quantization loses accuracy (qllc_compare).
 *
 * Prints the model outputs' SQNR against float, then every value worst first (at most --top rows; all
 * with --top 0), and with --csv FILE writes the whole table (one row per value, every column).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

static void db(char *buf, size_t size, double v) {
  if (isinf(v)) snprintf(buf, size, v > 0 ? "exact" : "-inf");
  else snprintf(buf, size, "%.1f", v);
}

static int write_csv(const char *path, const qllc_compare_result *r) {
  FILE *f = fopen(path, "w");
  if (!f) return cli_error(path, "cannot write the table");
  fprintf(f, "value,node,op,types,elem,scale,zero_point,is_output,sqnr_db,max_abs_err,saturated,signal_rms,count,"
             "grid_sqnr_db\n");
  for (int i = 0; i < r->n_rows; i++) {
    const qllc_compare_row *w = &r->rows[i];
    fprintf(f, "\"%s\",\"%s\",%s,%s,%s,%.9g,%d,%d,%.6f,%.9g,%.9g,%.9g,%lld,%.6f\n", w->value, w->node, w->op, w->types,
            qllc_elem_name(w->elem), (double)w->scale, (int)w->zero_point, w->is_output, w->sqnr_db, w->max_abs_err,
            w->saturated, w->signal_rms, (long long)w->count, w->grid_sqnr_db);
  }
  if (fclose(f) != 0) return cli_error(path, "cannot write the table");
  return 0;
}

int cmd_compare(cli_args *a) {
  qllc_diag d;
  memset(&d, 0, sizeof d);
  if (a->opts.precision == QLLC_PREC_FLOAT) return cli_usage_error("compare: give --precision int8|int16 and --profile FILE");
  qllc_model *m = NULL;
  int rc = cli_load_model(a, &m);
  if (rc) return rc;
  qllc_compare_result *r = NULL;
  qllc_status st = qllc_compare(m, &a->opts, a->datasets, a->n_datasets, a->max_samples, &r, &d);
  qllc_model_free(m);
  if (st != QLLC_OK) return cli_diag_error(&d, a->model);
  const char *prec = a->opts.precision == QLLC_PREC_INT8 ? "int8"
                     : a->opts.weight_precision == QLLC_PREC_INT8 ? "16x8" : "int16";
  printf("%s at %s against float, %lld sample%s (%s)\n", a->model, prec, (long long)r->samples,
         r->samples == 1 ? "" : "s", r->drawn == 2   ? "the first calibration samples, kept in the profile"
         : r->drawn       ? "drawn from the profile's input histograms (a profile without samples); --dataset for real ones"
                          : "the data set");
  printf("%-9s %-11s %-8s %-32s %-28s %-16s %s\n", "SQNR dB", "max |err|", "sat %", "value", "node", "op", "types");
  int shown = 0, top = a->top == 0 ? 20 : a->top < 0 ? r->n_rows : a->top;
  for (int i = 0; i < r->n_rows; i++) {
    const qllc_compare_row *w = &r->rows[i];
    if (i > 0 && r->rows[i - 1].is_output && !w->is_output) printf("  (other values, worst first)\n");
    if (!w->is_output && shown >= top) continue;
    if (!w->is_output) shown++;
    char s[32];
    db(s, sizeof s, w->sqnr_db);
    printf("%-9s %-11.4g %-8.3f %-32s %-28s %-16s %s%s\n", s, w->max_abs_err, 100.0 * w->saturated, w->value, w->node,
           w->op, w->types, w->is_output ? "  (output)" : "");
  }
  int hidden = 0;
  for (int i = 0; i < r->n_rows; i++) hidden += !r->rows[i].is_output;
  hidden -= shown;
  if (hidden > 0) printf("  ... %d more (--top 0 shows all, --csv FILE writes all)\n", hidden);
  for (int i = 0; i < r->n_rows; i++) { /* outputs that their own grid limits */
    const qllc_compare_row *w = &r->rows[i];
    if (!w->is_output || isinf(w->grid_sqnr_db) || w->sqnr_db < w->grid_sqnr_db - 1.0) continue;
    printf("note: output '%s' is limited by its own grid (%s, s=%.6g z=%d): rounding the float output to it alone "
           "gives %.1f dB; a wider type for it (--min-sqnr) or a narrower range helps, earlier layers do not\n",
           w->value, qllc_elem_name(w->elem), (double)w->scale, (int)w->zero_point, w->grid_sqnr_db);
  }
  if (a->csv) {
    rc = write_csv(a->csv, r);
    if (!rc) printf("wrote %s (%d rows)\n", a->csv, r->n_rows);
  }
  qllc_compare_result_free(r);
  return rc;
}
