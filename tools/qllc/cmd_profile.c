/* tools/qllc/cmd_profile.c: `qllc profile`: calibrate a model on a data set and write the YAML profile.
 *
 * A progress bar is drawn on stderr only when stderr is a terminal (redrawn in place with '\r', at most
 * about 50 times); the last line on stdout says how many samples ran and how many values were recorded.
 */
#include <string.h>
#include <unistd.h>

#include "cli.h"

typedef struct bar {
  int tty;
  int last; /* the last width drawn, -1 before the first */
} bar;

static void draw(void *ctx, int64_t done, int64_t total) {
  bar *b = ctx;
  if (!b->tty || total <= 0) return;
  const int width = 40;
  int w = (int)(done * width / total);
  if (w == b->last && done != total) return;
  b->last = w;
  fprintf(stderr, "\rprofiling [");
  for (int i = 0; i < width; i++) fputc(i < w ? '#' : '.', stderr);
  fprintf(stderr, "] %lld/%lld", (long long)done, (long long)total);
  if (done == total) fputc('\n', stderr);
  fflush(stderr);
}

int cmd_profile(cli_args *a) {
  qllc_diag d;
  memset(&d, 0, sizeof d);
  qllc_model *m = NULL;
  {
    int lrc = cli_load_model(a, &m);
    if (lrc) return lrc;
  }
  bar b = {isatty(fileno(stderr)), -1};
  qllc_profile_summary sum;
  qllc_status st =
      qllc_profile_dataset_opts(m, &a->opts, a->datasets, a->n_datasets, a->bins, a->out, draw, &b, &sum, &d);
  qllc_model_free(m);
  if (st != QLLC_OK) {
    if (b.tty && b.last >= 0) fputc('\n', stderr);
    return cli_diag_error(&d, a->model);
  }
  printf("profiled %lld sample%s, %d values -> %s\n", (long long)sum.samples, sum.samples == 1 ? "" : "s",
         sum.values, a->out);
  return 0;
}
