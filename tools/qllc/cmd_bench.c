/* tools/qllc/cmd_bench.c: `qllc bench`: time per inference of the JIT-compiled model and a per-layer table
 * (qllc_bench in include/qllc.h does the work; docs/benchmarks.md, "qllc bench").
 *
 * stdout: a header line with the CPU and the times, the table (one row per kernel call, in program order),
 * and a last line with the layers' sum against the whole. --csv prints the table alone as CSV.
 */
#include <stdlib.h>
#include <string.h>

#include "cli.h"

/* "1.234 ms" / "56.7 us" / "890 ns" */
static const char *human(double ns, char *buf, size_t size) {
  if (ns >= 1e6) snprintf(buf, size, "%.3f ms", ns / 1e6);
  else if (ns >= 1e3) snprintf(buf, size, "%.1f us", ns / 1e3);
  else snprintf(buf, size, "%.0f ns", ns);
  return buf;
}

int cmd_bench(cli_args *a) {
  qllc_diag d;
  memset(&d, 0, sizeof d);
  qllc_model *m = NULL;
  qllc_tensor in[CLI_MAX_LIST];
  int n_in = 0, rc = cli_load_model(a, &m);
  if (rc) return rc;
  memset(in, 0, sizeof in);
  /* NAME=FILE: the tensor (or the .npz array) for NAME; a bare FILE the next input by position, a bare
     FILE.npz with several arrays one tensor per array, named */
  for (int k = 0; k < a->n_inputs && !rc; k++) {
    const char *spec = a->inputs[k], *eq = strchr(spec, '=');
    char name[256] = "";
    if (eq && (size_t)(eq - spec) < sizeof name) {
      memcpy(name, spec, (size_t)(eq - spec));
      name[eq - spec] = 0;
    }
    if (eq && name[0]) {
      if (n_in >= CLI_MAX_LIST) rc = cli_usage_error("--input: given more than %d tensors", CLI_MAX_LIST);
      else if (!(rc = cli_read_tensor(eq + 1, name, &in[n_in]))) {
        free(in[n_in].name);
        in[n_in++].name = strdup(name);
      }
      continue;
    }
    qllc_tensor *all = NULL;
    int n = 0;
    if (qllc_tensor_read_all(spec, &all, &n, &d) != QLLC_OK) {
      rc = cli_diag_error(&d, spec);
      break;
    }
    for (int i = 0; i < n; i++) {
      if (n_in >= CLI_MAX_LIST) {
        qllc_tensor_free(&all[i]);
        continue;
      }
      in[n_in] = all[i];
      if (n == 1) { /* by position */
        free(in[n_in].name);
        in[n_in].name = NULL;
      }
      n_in++;
    }
    free(all);
  }
  qllc_bench_result *r = NULL;
  if (!rc && qllc_bench(m, &a->opts, in, n_in, a->runs ? a->runs : 50, a->warmup < 0 ? 0 : a->warmup ? a->warmup : 5, &r,
                        &d) != QLLC_OK)
    rc = cli_diag_error(&d, a->model);
  if (!rc && a->csv_out) {
    printf("node,op,kernel,ns,share,gops\n");
    for (int i = 0; i < r->n_layers; i++) {
      const qllc_bench_layer *l = &r->layers[i];
      printf("%s,%s,%s,%.0f,%.4f,", l->node, l->op, l->kernel, l->ns, r->layers_ns > 0 ? l->ns / r->layers_ns : 0);
      if (l->ops > 0 && l->ns > 0) printf("%.3f", l->ops / l->ns);
      printf("\n");
    }
  } else if (!rc) {
    char b1[32], b2[32], b3[32], b4[32];
    printf("%s on %s, %d runs: median %s, min %s, p90 %s per inference\n", a->model, r->cpu, r->runs,
           human(r->median_ns, b1, sizeof b1), human(r->min_ns, b2, sizeof b2), human(r->p90_ns, b3, sizeof b3));
    size_t wn = 4, wo = 2, wk = 6;
    for (int i = 0; i < r->n_layers; i++) {
      if (strlen(r->layers[i].node) > wn) wn = strlen(r->layers[i].node);
      if (strlen(r->layers[i].op) > wo) wo = strlen(r->layers[i].op);
      if (strlen(r->layers[i].kernel) > wk) wk = strlen(r->layers[i].kernel);
    }
    if (wn > 40) wn = 40;
    printf("%-*s  %-*s  %-*s  %10s  %6s  %7s\n", (int)wn, "node", (int)wo, "op", (int)wk, "kernel", "time", "share",
           "GOPS");
    for (int i = 0; i < r->n_layers; i++) {
      const qllc_bench_layer *l = &r->layers[i];
      printf("%-*.*s  %-*s  %-*s  %10s  %5.1f%%  ", (int)wn, (int)wn, l->node, (int)wo, l->op, (int)wk, l->kernel,
             human(l->ns, b1, sizeof b1), r->layers_ns > 0 ? 100.0 * l->ns / r->layers_ns : 0.0);
      if (l->ops > 0 && l->ns > 0) printf("%7.2f\n", l->ops / l->ns);
      else printf("%7s\n", "-");
    }
    double sum = 0;
    for (int i = 0; i < r->n_layers; i++) sum += r->layers[i].ns;
    printf("layers: %d kernel calls, sum %s, instrumented run %s, %.1f%% of the median per inference\n",
           r->n_layers, human(sum, b1, sizeof b1), human(r->layers_ns, b4, sizeof b4),
           r->median_ns > 0 ? 100.0 * sum / r->median_ns : 0.0);
  }
  qllc_bench_result_free(r);
  for (int i = 0; i < n_in; i++) qllc_tensor_free(&in[i]);
  qllc_model_free(m);
  return rc;
}
