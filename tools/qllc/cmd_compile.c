/* tools/qllc/cmd_compile.c: `qllc compile` (a bundle) and `qllc info` (the model's description). */
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

/* The default bundle name: the model file's stem as a C identifier ("my-net.v2.onnx" -> "my_net_v2"). */
static void default_name(const char *path, char *out, size_t size) {
  const char *base = strrchr(path, '/');
  base = base ? base + 1 : path;
  size_t len = strlen(base);
  const char *dot = strrchr(base, '.');
  if (dot && dot != base) len = (size_t)(dot - base);
  size_t n = 0;
  if (len == 0 || isdigit((unsigned char)base[0])) n = (size_t)snprintf(out, size, "model_");
  for (size_t i = 0; i < len && n + 1 < size; i++)
    out[n++] = isalnum((unsigned char)base[i]) ? base[i] : '_';
  out[n] = '\0';
}

/* qllc_options.note: one line on stderr. */
static void print_note(void *ctx, const char *text) { fprintf(stderr, "qllc: note: %s\n", text); }

int cmd_compile(cli_args *a) {
  char name[256];
  if (a->name)
    snprintf(name, sizeof name, "%s", a->name);
  else
    default_name(a->model, name, sizeof name);

  qllc_diag d;
  memset(&d, 0, sizeof d);
  qllc_model *m = NULL;
  {
    int lrc = cli_load_model(a, &m);
    if (lrc) return lrc;
  }
  if (a->verbose && qllc_model_describe(m, &a->opts, stdout, &d) != QLLC_OK) {
    qllc_model_free(m);
    return cli_diag_error(&d, a->model);
  }
  if (!a->quiet) a->opts.note = print_note;
  qllc_status st = qllc_compile_bundle(m, &a->opts, a->out, name, &d);
  qllc_model_free(m);
  if (st != QLLC_OK) return cli_diag_error(&d, a->model);
  FILE *w = a->map_stdout ? stderr : stdout; /* stdout holds the precision map alone */
  fprintf(w, "wrote %s/%s.o %s/%s.h", a->out, name, a->out, name);
  if (a->opts.weights_file) fprintf(w, " %s/%s.weights.bin", a->out, name);
  fprintf(w, "\n");
  return 0;
}

int cmd_info(cli_args *a) {
  qllc_diag d;
  memset(&d, 0, sizeof d);
  qllc_model *m = NULL;
  {
    int lrc = cli_load_model(a, &m);
    if (lrc) return lrc;
  }
  int to_stdout = a->dot && strcmp(a->dot, "-") == 0;
  qllc_status st = to_stdout ? QLLC_OK : qllc_model_describe(m, &a->opts, stdout, &d);
  if (st == QLLC_OK && a->dot) { /* --dot FILE: the compiled graph as Graphviz */
    FILE *f = to_stdout ? stdout : fopen(a->dot, "w");
    if (!f) {
      qllc_model_free(m);
      return cli_error(a->dot, "cannot write: %s", strerror(errno));
    }
    st = qllc_model_write_dot(m, &a->opts, f, &d);
    if (!to_stdout && fclose(f) != 0 && st == QLLC_OK) {
      qllc_model_free(m);
      return cli_error(a->dot, "cannot write: %s", strerror(errno));
    }
  }
  qllc_model_free(m);
  return st == QLLC_OK ? 0 : cli_diag_error(&d, a->model);
}
