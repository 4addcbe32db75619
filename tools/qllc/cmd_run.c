/* tools/qllc/cmd_run.c: `qllc run`: read the inputs and check their shapes against the model,
 * JIT-compile, run once (or over a data set), write and summarise the outputs.
 *
 * Input files are assigned to model inputs here (NAME=FILE by name, bare FILEs to the remaining inputs
 * in model order) so that a file whose shape or type does not fit is reported with ITS name; the
 * library checks the same things again in qllc_jit_run.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"

typedef struct run_input {
  const char *file;
  int model_index; /* -1 until assigned */
  qllc_tensor t;   /* read in step 2, or already from a bare FILE.npz (one entry per array) */
  char array[256]; /* NAME=FILE: the .npz array to take ("" for a bare FILE) */
} run_input;

static int is_npz(const char *path) {
  size_t n = strlen(path);
  return n > 4 && strcmp(path + n - 4, ".npz") == 0;
}

/* Progress of --dataset on a terminal: "sample 12/20", redrawn in place. */
static void progress(void *ctx, int64_t done, int64_t total) {
  if (!*(int *)ctx) return;
  fprintf(stderr, "\rsample %lld/%lld", (long long)done, (long long)total);
  if (done == total) fputc('\n', stderr);
  fflush(stderr);
}

static void type_str(const qllc_tensor *t, char *buf, size_t size) {
  size_t n = (size_t)snprintf(buf, size, "%s<", qllc_elem_name(t->elem));
  for (uint32_t d = 0; d < t->rank && n < size; d++)
    n += (size_t)snprintf(buf + n, size - n, d ? " x %lld" : "%lld", (long long)t->dims[d]);
  if (n < size) snprintf(buf + n, size - n, ">");
}

static int same_type(const qllc_tensor *a, const qllc_tensor *b) {
  if (a->elem != b->elem || a->rank != b->rank) return 0;
  for (uint32_t d = 0; d < a->rank; d++)
    if (a->dims[d] != b->dims[d]) return 0;
  return 1;
}

/* A file name from a value name: keeps [A-Za-z0-9_.-], never starts with '.'. */
/* mkdir -p: creates DIR and any missing parents (the outputs are the only thing `run` writes, so a
 * fresh nested folder is what a user expects to work). 0, or -1 with errno set. */
static int mkdir_p(const char *dir) {
  char buf[4096];
  struct stat sb;
  if (snprintf(buf, sizeof buf, "%s", dir) >= (int)sizeof buf) return errno = ENAMETOOLONG, -1;
  for (char *p = buf + 1; *p; p++) {
    if (*p != '/') continue;
    *p = 0;
    if (stat(buf, &sb) != 0 && mkdir(buf, 0777) != 0 && errno != EEXIST) return -1;
    *p = '/';
  }
  if (stat(buf, &sb) == 0) return S_ISDIR(sb.st_mode) ? 0 : (errno = ENOTDIR, -1);
  return mkdir(buf, 0777) == 0 || errno == EEXIST ? 0 : -1;
}

static void sanitise(const char *name, char *out, size_t size) {
  size_t n = 0;
  if (!*name || name[0] == '.') out[n++] = '_';
  for (const char *c = name; *c && n + 1 < size; c++) {
    int ok = (*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') || *c == '_' ||
             *c == '.' || *c == '-';
    out[n++] = ok ? *c : '_';
  }
  out[n] = '\0';
}

static void print_values(const qllc_tensor *t) {
  int64_t n = 1;
  for (uint32_t d = 0; d < t->rank; d++) n *= t->dims[d];
  const int shown = 6;
  printf(" [");
  for (int64_t i = 0; i < n && i < shown; i++) {
    if (i) printf(", ");
    switch (t->elem) {
    case QLLC_F32: printf("%.6g", ((const float *)t->data)[i]); break;
    case QLLC_I8: printf("%d", ((const int8_t *)t->data)[i]); break;
    case QLLC_U8: printf("%u", ((const uint8_t *)t->data)[i]); break;
    case QLLC_I16: printf("%d", ((const int16_t *)t->data)[i]); break;
    case QLLC_I32: printf("%d", ((const int32_t *)t->data)[i]); break;
    case QLLC_I64: printf("%lld", (long long)((const int64_t *)t->data)[i]); break;
    }
  }
  printf("%s]", n > shown ? ", ..." : "");
}

int cmd_run(cli_args *a) {
  qllc_diag d;
  memset(&d, 0, sizeof d);
  qllc_model *m = NULL;
  qllc_jit *j = NULL;
  run_input in[CLI_MAX_LIST];
  memset(in, 0, sizeof in);
  qllc_tensor *outs = NULL;
  char **shown = NULL; /* per output: its path, after '+' (written by us: removed if a later one fails) or '-' */
  int n_out = 0, rc = 0;

  {
    int lrc = cli_load_model(a, &m);
    if (lrc) return lrc;
  }
  /* The inputs are assigned, read and their shapes checked against the model before it is compiled: a
   * wrong input is reported at once, not after a compile sized for the model's shapes (seconds and
   * gigabytes for a batch of 1048576). Their element types are checked against the JIT's (which differ
   * from the model's with --quantized-io). */
  int n_model = qllc_model_num_inputs(m);
  const qllc_tensor *want_in[CLI_MAX_LIST];
  if (n_model > CLI_MAX_LIST) {
    rc = cli_error(a->model, "more than %d model inputs", CLI_MAX_LIST);
    goto out;
  }
  for (int i = 0; i < n_model; i++) want_in[i] = qllc_model_input(m, i);

  if (a->n_datasets) {
    if (qllc_jit_compile(m, &a->opts, &j, &d) != QLLC_OK) {
      rc = cli_diag_error(&d, a->model);
      goto out;
    }
    n_out = qllc_jit_num_outputs(j);
    outs = calloc((size_t)n_out + 1, sizeof *outs);
    int64_t samples = 0;
    int tty = isatty(fileno(stderr));
    if (!outs) {
      rc = cli_error(NULL, "out of memory");
      goto out;
    }
    if (qllc_jit_run_dataset(j, a->datasets, a->n_datasets, progress, &tty, outs, &samples, &d) != QLLC_OK) {
      rc = cli_diag_error(&d, a->model);
      goto out;
    }
    goto write;
  }

  /* 1. Assign files to inputs: NAME=FILE when NAME is an input of the model, bare files in order; a bare
     FILE.npz gives one named input per array. */
  int taken[CLI_MAX_LIST] = {0};
  int n_given = 0;
  for (int k = 0; k < a->n_inputs; k++) {
    const char *spec = a->inputs[k];
    if (strchr(spec, '=') || !is_npz(spec)) {
      if (n_given >= CLI_MAX_LIST) {
        rc = cli_usage_error("--input: more than %d tensors", CLI_MAX_LIST);
        goto out;
      }
      in[n_given++].file = spec;
      continue;
    }
    qllc_tensor *all = NULL;
    int n = 0;
    if (qllc_tensor_read_all(spec, &all, &n, &d) != QLLC_OK) {
      rc = cli_diag_error(&d, spec);
      goto out;
    }
    for (int i = 0; i < n; i++) {
      if (n_given >= CLI_MAX_LIST) {
        qllc_tensor_free(&all[i]);
        continue;
      }
      run_input *r = &in[n_given++];
      r->file = spec;
      r->t = all[i];
      r->model_index = -1;
      for (int m_i = 0; m_i < n_model; m_i++)
        if (!strcmp(want_in[m_i]->name, all[i].name)) r->model_index = m_i;
      if (r->model_index < 0) {
        rc = cli_error(spec, "array '%s': the model has no input of that name", all[i].name);
        for (int q = i + 1; q < n; q++) qllc_tensor_free(&all[q]);
        free(all);
        goto out;
      }
      if (taken[r->model_index]) {
        rc = cli_error(spec, "input '%s' given twice", all[i].name);
        for (int q = i + 1; q < n; q++) qllc_tensor_free(&all[q]);
        free(all);
        goto out;
      }
      taken[r->model_index] = 1;
    }
    free(all);
  }
  for (int k = 0; k < n_given; k++) {
    const char *spec = in[k].file;
    const char *eq = strchr(spec, '=');
    if (in[k].t.data) continue; /* an array of a bare FILE.npz, assigned above */
    in[k].model_index = -1;
    if (!eq) continue;
    size_t len = (size_t)(eq - spec);
    for (int i = 0; i < n_model; i++) {
      const char *name = want_in[i]->name;
      if (strlen(name) == len && strncmp(name, spec, len) == 0) in[k].model_index = i;
    }
    struct stat sb;
    if (in[k].model_index < 0 && stat(spec, &sb) == 0) continue; /* a file whose name has '=' */
    if (in[k].model_index < 0) {
      rc = cli_error(a->model, "--input %s: the model has no input named '%.*s'", spec, (int)len, spec);
      goto out;
    }
    if (taken[in[k].model_index]) {
      rc = cli_error(a->model, "input '%.*s' given twice", (int)len, spec);
      goto out;
    }
    taken[in[k].model_index] = 1;
    in[k].file = eq + 1;
    snprintf(in[k].array, sizeof in[k].array, "%.*s", (int)len, spec);
  }
  for (int k = 0, next = 0; k < n_given; k++) {
    if (in[k].model_index >= 0) continue;
    while (next < n_model && taken[next]) next++;
    if (next >= n_model) {
      rc = cli_error(a->model, "%d input files given, the model has %d input%s", n_given, n_model,
                     n_model == 1 ? "" : "s");
      goto out;
    }
    in[k].model_index = next;
    taken[next] = 1;
  }
  for (int i = 0; i < n_model; i++)
    if (!taken[i]) {
      rc = cli_error(a->model, "missing input '%s' (give --input %s=FILE)", want_in[i]->name, want_in[i]->name);
      goto out;
    }

  /* 2. Read them and check each one's shape against the model; compile; check each against the JIT. */
  for (int k = 0; k < n_given; k++) {
    const qllc_tensor *want = want_in[in[k].model_index];
    if (!in[k].t.data && (rc = cli_read_tensor(in[k].file, in[k].array[0] ? in[k].array : want->name, &in[k].t)))
      goto out;
    qllc_tensor shape = *want;
    shape.elem = in[k].t.elem; /* the shape alone */
    if (!same_type(&shape, &in[k].t)) {
      char w[160], g[160];
      type_str(want, w, sizeof w);
      type_str(&in[k].t, g, sizeof g);
      rc = cli_error(in[k].file, "input '%s': expected %s, got %s", want->name, w, g);
      goto out;
    }
  }
  if (qllc_jit_compile(m, &a->opts, &j, &d) != QLLC_OK) {
    rc = cli_diag_error(&d, a->model);
    goto out;
  }
  n_out = qllc_jit_num_outputs(j);
  if (qllc_jit_num_inputs(j) != n_model) {
    rc = cli_error(a->model, "internal error: the JIT has %d inputs, the model %d", qllc_jit_num_inputs(j), n_model);
    goto out;
  }
  qllc_tensor args[CLI_MAX_LIST];
  for (int k = 0; k < n_given; k++) {
    const qllc_tensor *want = qllc_jit_input(j, in[k].model_index);
    if (strcmp(want->name, want_in[in[k].model_index]->name) != 0) {
      rc = cli_error(a->model, "internal error: JIT input %d is '%s', the model's '%s'", in[k].model_index,
                     want->name, want_in[in[k].model_index]->name);
      goto out;
    }
    if (!same_type(want, &in[k].t)) {
      char w[160], g[160];
      type_str(want, w, sizeof w);
      type_str(&in[k].t, g, sizeof g);
      rc = cli_error(in[k].file, "input '%s': expected %s, got %s", want->name, w, g);
      goto out;
    }
    args[k] = in[k].t;
    args[k].name = want->name; /* borrowed: matched by name in the library */
  }

  /* 3. Run. */
  outs = calloc((size_t)n_out + 1, sizeof *outs);
  if (!outs) {
    rc = cli_error(NULL, "out of memory");
    goto out;
  }
  if (qllc_jit_run(j, args, n_given, outs, &d) != QLLC_OK) {
    rc = cli_diag_error(&d, a->model);
    goto out;
  }

  /* 4. Write and summarise the outputs: every one into --output FILE.npz, or each as DIR/<name>.npy. */
write:
  if (a->output) {
    if (qllc_tensor_write_npz(a->output, outs, n_out, &d) != QLLC_OK) {
      rc = cli_diag_error(&d, a->output);
      goto out;
    }
    for (int i = 0; i < n_out; i++) {
      char t[160];
      type_str(&outs[i], t, sizeof t);
      printf("%s %s", outs[i].name, t);
      print_values(&outs[i]);
      printf(" -> %s\n", a->output);
    }
    goto out;
  }
  if (mkdir_p(a->output_dir) != 0) {
    rc = cli_error(a->output_dir, "cannot create output directory: %s", strerror(errno));
    goto out;
  }
  /* every output is written before any is reported; when one fails, those written before it are removed
   * (the regular files: a device or a symlink the user gave is left alone), so a failed run leaves no
   * outputs half-written */
  shown = calloc((size_t)n_out + 1, sizeof *shown);
  if (!shown) {
    rc = cli_error(NULL, "out of memory");
    goto out;
  }
  for (int i = 0; i < n_out; i++) {
    char fname[512], path[4096];
    sanitise(outs[i].name, fname, sizeof fname);
    /* two outputs whose names sanitise alike get the output index appended */
    for (int k = 0; k < i; k++) {
      char other[512];
      sanitise(outs[k].name, other, sizeof other);
      if (strcmp(other, fname) == 0) {
        size_t n = strlen(fname);
        snprintf(fname + n, sizeof fname - n, "_%d", i);
        break;
      }
    }
    snprintf(path, sizeof path, "%s/%s.npy", a->output_dir, fname);
    struct stat sb;
    int ours = lstat(path, &sb) != 0 || S_ISREG(sb.st_mode); /* a device or a symlink given is never removed */
    if (qllc_tensor_write_npy(path, &outs[i], &d) != QLLC_OK) {
      rc = cli_diag_error(&d, path);
      for (int k = 0; k < i; k++)
        if (shown[k] && shown[k][0] == '+') unlink(shown[k] + 1);
      goto out;
    }
    size_t n = strlen(path) + 2;
    shown[i] = malloc(n);
    if (!shown[i]) {
      rc = cli_error(NULL, "out of memory");
      for (int k = 0; k <= i; k++)
        if (shown[k] && shown[k][0] == '+') unlink(shown[k] + 1);
      if (ours) unlink(path);
      goto out;
    }
    snprintf(shown[i], n, "%c%s", ours ? '+' : '-', path); /* '+': removed if a later output fails */
  }
  for (int i = 0; i < n_out; i++) {
    char t[160];
    type_str(&outs[i], t, sizeof t);
    printf("%s %s", outs[i].name, t);
    print_values(&outs[i]);
    printf(" -> %s\n", shown[i] + 1);
  }

out:
  for (int i = 0; shown && i < n_out; i++) free(shown[i]);
  free(shown);
  for (int i = 0; outs && i < n_out; i++) qllc_tensor_free(&outs[i]);
  free(outs);
  for (int k = 0; k < CLI_MAX_LIST; k++) qllc_tensor_free(&in[k].t);
  qllc_jit_free(j);
  qllc_model_free(m);
  return rc;
}
