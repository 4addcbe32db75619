/* tools/qllc/args.c: option tables, parsing, help text and error printing.
 *
 * One table row per option: its spelling, its value's form, one line of help and the function that
 * stores it. Commands list the groups of rows they accept; parsing and --help both read those lists.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"

/* ---- errors ----------------------------------------------------------------------------------- */

int cli_usage_error(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fputs("qllc: error: ", stderr);
  vfprintf(stderr, fmt, ap);
  fputc('\n', stderr);
  va_end(ap);
  return EXIT_USAGE;
}

int cli_error(const char *file, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fputs("qllc: error: ", stderr);
  if (file && *file) fprintf(stderr, "%s: ", file);
  vfprintf(stderr, fmt, ap);
  fputc('\n', stderr);
  va_end(ap);
  return EXIT_ERROR;
}

int cli_diag_error(const qllc_diag *d, const char *file) {
  const char *f = d->file[0] ? d->file : file;
  size_t flen = f ? strlen(f) : 0;
  /* Some messages already start with the file or the node; do not say them twice. */
  const char *msg = d->message;
  char node_prefix[300], node_paren[300];
  snprintf(node_prefix, sizeof node_prefix, "node '%s': ", d->node);
  snprintf(node_paren, sizeof node_paren, "node '%s' (", d->node); /* "node 'X' (Conv): ..." */
  for (int again = 1; again;) {
    again = 0;
    if (flen && strncmp(msg, f, flen) == 0 && strncmp(msg + flen, ": ", 2) == 0) msg += flen + 2, again = 1;
    size_t n = strlen(node_prefix);
    if (d->node[0] && strncmp(msg, node_prefix, n) == 0) msg += n, again = 1;
  }
  int own_place = flen && strncmp(msg, f, flen) == 0 && msg[flen] == ':'; /* "FILE:LINE:COL: ..." */
  int own_node = d->node[0] && strncmp(msg, node_paren, strlen(node_paren)) == 0;
  fputs("qllc: error: ", stderr);
  if (f && *f && !own_place) fprintf(stderr, "%s: ", f);
  if (d->node[0] && !own_node) fprintf(stderr, "node '%s': ", d->node);
  const char *rest = msg;
  if (own_node) { /* print "node 'X' (Op): " and drop a repeated "FILE: " after it */
    const char *close = strstr(msg, "): ");
    if (close) {
      fwrite(msg, 1, (size_t)(close + 3 - msg), stderr);
      rest = close + 3;
      if (flen && strncmp(rest, f, flen) == 0 && strncmp(rest + flen, ": ", 2) == 0) rest += flen + 2;
    }
  }
  /* the message is meant to be one line; make sure of it */
  for (const char *c = rest; *c; c++) fputc(*c == '\n' ? ' ' : *c, stderr);
  if (!d->message[0]) fputs(qllc_status_name(d->status), stderr);
  fputc('\n', stderr);
  return EXIT_ERROR;
}

/* ---- loading the model ------------------------------------------------------------------------ */

int cli_read_tensor(const char *file, const char *name, qllc_tensor *t) {
  qllc_diag d;
  if (qllc_tensor_read_named(file, name, t, &d) != QLLC_OK) return cli_diag_error(&d, file);
  return 0;
}

/* --input-shape NAME=1x3x224x224 (checked by set_input_shape) into t (name borrowed from buf). */
static int parse_shape(const char *spec, char *buf, size_t size, qllc_tensor *t) {
  const char *eq = strrchr(spec, '=');
  size_t len = (size_t)(eq - spec);
  if (len >= size) return cli_usage_error("--input-shape: input name too long in '%s'", spec);
  memcpy(buf, spec, len);
  buf[len] = 0;
  memset(t, 0, sizeof *t);
  t->name = buf;
  for (const char *p = eq + 1;;) {
    char *end = NULL;
    long long v = strtoll(p, &end, 10);
    if (end == p || v < 1 || v > (1ll << 40) || t->rank >= QLLC_MAX_RANK || (*end && *end != 'x' && *end != ','))
      return cli_usage_error("--input-shape: invalid value '%s' (NAME=DxDx... with 1 to %d sizes >= 1, e.g. "
                             "input=1x3x224x224)", spec, QLLC_MAX_RANK);
    t->dims[t->rank++] = v;
    if (!*end) break;
    p = end + 1;
  }
  return 0;
}

static void print_load_note(void *ctx, const char *text) { fprintf(stderr, "qllc: note: %s\n", text); }

int cli_load_model(const cli_args *a, qllc_model **m) {
  qllc_diag d;
  qllc_tensor bound[CLI_MAX_LIST] = {0};
  char names[CLI_MAX_LIST][256];
  qllc_tensor shapes[CLI_MAX_LIST];
  char shape_names[CLI_MAX_LIST][256];
  int n = 0, rc = 0;
  *m = NULL;
  for (int i = 0; i < a->n_shapes && !rc; i++) rc = parse_shape(a->shapes[i], shape_names[i], sizeof shape_names[i], &shapes[i]);
  for (int i = 0; i < a->n_consts && !rc; i++) {
    const char *eq = strchr(a->consts[i], '='); /* checked by set_const */
    size_t len = (size_t)(eq - a->consts[i]);
    if (len >= sizeof names[i]) {
      rc = cli_usage_error("--const: input name too long in '%s'", a->consts[i]);
      break;
    }
    memcpy(names[i], a->consts[i], len);
    names[i][len] = 0;
    if ((rc = cli_read_tensor(eq + 1, names[i], &bound[n]))) break;
    free(bound[n].name); /* the file's own tensor name; the binding is by NAME */
    bound[n].name = names[i];
    n++;
  }
  qllc_load_options lo;
  memset(&lo, 0, sizeof lo);
  lo.bound = bound, lo.n_bound = n;
  lo.shapes = shapes, lo.n_shapes = a->n_shapes;
  lo.note = print_load_note;
  if (!rc && qllc_model_load_opts(a->model, &lo, m, &d) != QLLC_OK) rc = cli_diag_error(&d, a->model);
  for (int i = 0; i < n; i++) {
    bound[i].name = NULL;
    qllc_tensor_free(&bound[i]);
  }
  return rc;
}

/* ---- value parsers ---------------------------------------------------------------------------- */

/* Looks `value` up in a NULL-terminated list of names; prints a usage error listing them if absent. */
static int pick(const char *flag, const char *value, const char *const *names, int *out) {
  for (int i = 0; names[i]; i++)
    if (strcmp(value, names[i]) == 0) {
      *out = i;
      return 0;
    }
  char valid[256] = "";
  for (int i = 0; names[i]; i++) {
    if (i) strcat(valid, ", ");
    strcat(valid, names[i]);
  }
  return cli_usage_error("%s: invalid value '%s' (valid: %s)", flag, value, valid);
}

static const char *const precision_names[] = {"float", "int8", "int16", NULL};
static const char *const weight_precision_names[] = {"int8", "int16", NULL};
static const char *const schema_names[] = {"asymmetric", "symmetric", "symmetric_uint8", "power2", NULL};
static const char *const calibration_names[] = {"minmax", "percentile", "kl", "mse", NULL};
static const char *const target_names[] = {"x86_64", "aarch64", NULL};
static const char *const reloc_names[] = {"pic", "static", NULL};
static const char *const weights_names[] = {"object", "file", NULL};

static int push(const char *flag, const char **list, int *n, const char *v) {
  if (*n >= CLI_MAX_LIST) return cli_usage_error("%s: given more than %d times", flag, CLI_MAX_LIST);
  list[(*n)++] = v;
  return 0;
}

typedef int (*set_fn)(cli_args *a, const char *flag, const char *v);

static int set_profile(cli_args *a, const char *f, const char *v) { a->opts.profile_path = v; return 0; }
static int set_precision(cli_args *a, const char *f, const char *v) {
  int i;
  if (pick(f, v, precision_names, &i)) return EXIT_USAGE;
  a->opts.precision = (qllc_precision)i;
  return 0;
}
static int set_weight_precision(cli_args *a, const char *f, const char *v) {
  int i;
  if (pick(f, v, weight_precision_names, &i)) return EXIT_USAGE;
  a->opts.weight_precision = i == 0 ? QLLC_PREC_INT8 : QLLC_PREC_INT16;
  return 0;
}
static int set_schema(cli_args *a, const char *f, const char *v) {
  int i;
  if (pick(f, v, schema_names, &i)) return EXIT_USAGE;
  a->opts.schema = (qllc_schema)i;
  return 0;
}
static int set_calibration(cli_args *a, const char *f, const char *v) {
  int i;
  if (pick(f, v, calibration_names, &i)) return EXIT_USAGE;
  a->opts.calibration = (qllc_calibration)i;
  return 0;
}
static int set_per_tensor(cli_args *a, const char *f, const char *v) { a->opts.per_tensor = 1; return 0; }
static int set_keep_float(cli_args *a, const char *f, const char *v) {
  return push(f, a->keep_float, &a->opts.n_keep_float, v);
}
static int set_strict(cli_args *a, const char *f, const char *v) { a->opts.strict = 1; return 0; }
static int set_quantized_io(cli_args *a, const char *f, const char *v) { a->opts.quantized_io = 1; return 0; }
static int set_target(cli_args *a, const char *f, const char *v) {
  int i;
  if (pick(f, v, target_names, &i)) return EXIT_USAGE;
  a->opts.target = target_names[i];
  return 0;
}
static int set_cpu(cli_args *a, const char *f, const char *v) { a->opts.cpu = v; return 0; }
static int set_features(cli_args *a, const char *f, const char *v) { a->opts.features = v; return 0; }
static int set_no_tune(cli_args *a, const char *f, const char *v) { a->opts.no_tune = 1; return 0; }
static int set_tune_cache(cli_args *a, const char *f, const char *v) { a->opts.tune_cache = v; return 0; }
static int set_kernels(cli_args *a, const char *f, const char *v) {
  return push(f, a->kernels, &a->opts.n_kernel_files, v);
}
static int set_dump_after(cli_args *a, const char *f, const char *v) { a->opts.dump_after = v; return 0; }
static int set_input(cli_args *a, const char *f, const char *v) { return push(f, a->inputs, &a->n_inputs, v); }
static int set_output_dir(cli_args *a, const char *f, const char *v) { a->output_dir = v; return 0; }
static int set_out(cli_args *a, const char *f, const char *v) { a->out = v; return 0; }
static int set_name(cli_args *a, const char *f, const char *v) { a->name = v; return 0; }
static int set_dot(cli_args *a, const char *f, const char *v) { a->dot = v; return 0; }
static int set_reloc(cli_args *a, const char *f, const char *v) {
  int i;
  if (pick(f, v, reloc_names, &i)) return EXIT_USAGE;
  a->opts.reloc_pic = i == 0;
  return 0;
}
static int set_weights(cli_args *a, const char *f, const char *v) {
  int i;
  if (pick(f, v, weights_names, &i)) return EXIT_USAGE;
  a->opts.weights_file = i == 1;
  return 0;
}
static int set_dataset(cli_args *a, const char *f, const char *v) { return push(f, a->datasets, &a->n_datasets, v); }
static int set_bins(cli_args *a, const char *f, const char *v) {
  char *end = NULL;
  long n = strtol(v, &end, 10);
  if (!end || *end || n < 16 || n > (1 << 24) || n % 2)
    return cli_usage_error("%s: invalid value '%s' (an even number of bins, 16 to %d)", f, v, 1 << 24);
  a->bins = (int)n;
  return 0;
}
static int set_const(cli_args *a, const char *f, const char *v) {
  const char *eq = strchr(v, '=');
  if (!eq || eq == v || !eq[1]) return cli_usage_error("%s: invalid value '%s' (NAME=FILE)", f, v);
  return push(f, a->consts, &a->n_consts, v);
}
static int set_csv(cli_args *a, const char *f, const char *v) { a->csv = v; return 0; }
static int set_csv_out(cli_args *a, const char *f, const char *v) { a->csv_out = 1; return 0; }
static int set_input_shape(cli_args *a, const char *f, const char *v) {
  const char *eq = strrchr(v, '=');
  if (!eq || eq == v || !eq[1]) return cli_usage_error("%s: invalid value '%s' (NAME=DxDx..., e.g. input=1x3x224x224)", f, v);
  return push(f, a->shapes, &a->n_shapes, v);
}
static int set_output(cli_args *a, const char *f, const char *v) {
  size_t n = strlen(v);
  if (n < 5 || strcmp(v + n - 4, ".npz")) return cli_usage_error("%s: invalid value '%s' (a FILE.npz)", f, v);
  a->output = v;
  return 0;
}
static int set_small_count(const char *f, const char *v, int min, int *out) {
  char *end = NULL;
  long n = strtol(v, &end, 10);
  if (!end || *end || n < min || n > 1000000) return cli_usage_error("%s: invalid value '%s' (%d to 1000000)", f, v, min);
  *out = (int)n;
  return 0;
}
static int set_runs(cli_args *a, const char *f, const char *v) { return set_small_count(f, v, 1, &a->runs); }
static int set_warmup(cli_args *a, const char *f, const char *v) {
  if (set_small_count(f, v, 0, &a->warmup)) return EXIT_USAGE;
  if (a->warmup == 0) a->warmup = -1; /* 0 given: none (0 means unset) */
  return 0;
}
static int set_count(const char *f, const char *v, long long *out) {
  char *end = NULL;
  long long n = strtoll(v, &end, 10);
  if (!end || *end || n < 0 || n > (1ll << 40)) return cli_usage_error("%s: invalid value '%s' (a count >= 0)", f, v);
  *out = n;
  return 0;
}
static int set_top(cli_args *a, const char *f, const char *v) {
  long long n = 0;
  if (set_count(f, v, &n)) return EXIT_USAGE;
  a->top = n == 0 ? -1 : n > 1000000 ? 1000000 : (int)n; /* -1: all */
  return 0;
}
static int set_samples(cli_args *a, const char *f, const char *v) { return set_count(f, v, &a->max_samples) ? EXIT_USAGE : 0; }
static int set_min_sqnr(cli_args *a, const char *f, const char *v) {
  char *end = NULL;
  double d = strtod(v, &end);
  if (!end || *end || !(d > 0 && d < 400)) return cli_usage_error("%s: invalid value '%s' (dB, e.g. 45)", f, v);
  a->opts.min_sqnr_db = d;
  return 0;
}
static int set_precision_map(cli_args *a, const char *f, const char *v) { a->opts.precision_map = v; return 0; }
static int set_precision_map_out(cli_args *a, const char *f, const char *v) { a->opts.precision_map_out = v; return 0; }
static int set_search_dataset(cli_args *a, const char *f, const char *v) {
  return push(f, a->search_datasets, &a->opts.n_search_dataset, v);
}
static int set_verbose(cli_args *a, const char *f, const char *v) { a->verbose = 1; return 0; }
static int set_quiet(cli_args *a, const char *f, const char *v) { a->quiet = 1; return 0; }
static int set_help(cli_args *a, const char *f, const char *v) { a->help = 1; return 0; }

/* --min-sqnr reports its choice: the precision map (whose comments say what was measured) is written to
 * --precision-map-out, or to a temporary file, and when the command ends successfully its comments (the
 * human summary) are printed on stderr; with --precision-map-out - the whole map, the machine-readable
 * file, goes to stdout instead. */
static char search_tmp[256];
static const char *search_file;
static int map_to_stdout;
static void print_search(void) {
  if (!search_file) return;
  FILE *f = fopen(search_file, "r");
  if (f) {
    char line[1024];
    for (int first = 1; fgets(line, sizeof line, f); first = 0) {
      if (map_to_stdout) fputs(line, stdout);
      else if (line[0] == '#' && !(first && strstr(line, "(replay: --precision-map FILE)")))
        fputs(line + (line[1] == ' ' ? 2 : 1), stderr);
    }
    fclose(f);
  }
  if (search_file == search_tmp) remove(search_tmp);
}
static void print_search_at_exit(cli_args *a) {
  if (a->opts.precision_map_out && !strcmp(a->opts.precision_map_out, "-")) {
    map_to_stdout = a->map_stdout = 1;
    a->opts.precision_map_out = NULL;
  }
  if (!a->opts.precision_map_out) { /* a new file of a name no one else can have chosen (mkstemp) */
    const char *dir = getenv("TMPDIR");
    snprintf(search_tmp, sizeof search_tmp, "%s/qllc-precision-map-XXXXXX", dir && *dir ? dir : "/tmp");
    int fd = mkstemp(search_tmp);
    if (fd < 0) {
      snprintf(search_tmp, sizeof search_tmp, "/tmp/qllc-precision-map-XXXXXX");
      fd = mkstemp(search_tmp);
    }
    if (fd < 0) return; /* no temporary file: the search runs, its map is not printed */
    close(fd);
    a->opts.precision_map_out = search_tmp;
  }
  search_file = a->opts.precision_map_out;
  atexit(print_search);
}

/* qllc_options.progress on a terminal: the line redrawn in place on stderr, cleared at the end. */
static void draw_progress(void *ctx, const char *text) {
  if (text) fprintf(stderr, "\r%.*s\033[K", 150, text);
  else fputs("\r\033[K", stderr);
  fflush(stderr);
}

/* ---- the tables ------------------------------------------------------------------------------- */

typedef struct cli_opt {
  const char *name;  /* "--precision" */
  const char *alias; /* "-o", or NULL */
  const char *meta;  /* the value's form, NULL for a flag */
  const char *help;
  set_fn set;
} cli_opt;

static const cli_opt quant_opts[] = {
    {"--profile", NULL, "FILE", "calibration profile (YAML from 'qllc profile'); needed for int8/int16", set_profile},
    {"--precision", NULL, "float|int8|int16", "activation precision (default float: no quantization)",
     set_precision},
    {"--weight-precision", NULL, "int8|int16", "weight precision (default: same as --precision)",
     set_weight_precision},
    {"--schema", NULL, "asymmetric|symmetric|symmetric_uint8|power2", "activation quantization schema "
     "(default asymmetric at int8, symmetric at int16)", set_schema},
    {"--calibration", NULL, "minmax|percentile|kl|mse", "how ranges are chosen from the profile (default minmax; 'mse': the range with the least expected squared error)",
     set_calibration},
    {"--per-tensor", NULL, NULL, "one weight scale per tensor instead of per output channel", set_per_tensor},
    {"--keep-float", NULL, "OPTYPE_OR_NODE", "keep these nodes in float (repeatable)", set_keep_float},
    {"--strict", NULL, NULL, "fail if any node stays in float, any bias is clipped, or a fused layer falls back to the portable kernel for a missing CPU feature", set_strict},
    {"--quantized-io", NULL, NULL, "model inputs and outputs stay integer", set_quantized_io},
    {"--min-sqnr", NULL, "DB", "choose int8, 16x8 or int16 per layer so that every output reaches DB dB SQNR "
     "against float, at the least cost the search finds: each layer's measured time where the target CPU is this "
     "machine (run, bench, a compile for CPU native), its wide MACs otherwise. A summary on stderr (the choice, the cost used, "
     "each wide layer's SQNR one level lower); progress on a terminal", set_min_sqnr},
    {"--search-dataset", NULL, "SPEC", "the samples --min-sqnr measures on (repeatable; forms as for 'qllc profile'; "
     "default: the first calibration samples, up to 32, kept in the profile)", set_search_dataset},
    {"--precision-map-out", NULL, "FILE", "write the precision chosen for each layer (replay it with --precision-map; "
     "'-' with --min-sqnr: the map on stdout)",
     set_precision_map_out},
    {"--precision-map", NULL, "FILE", "replay a precision map written by --precision-map-out (the same bundle)",
     set_precision_map},
    {NULL, NULL, NULL, NULL, NULL}};

static const cli_opt target_opts[] = {
    {"--target", NULL, "x86_64|aarch64", "target architecture (default x86_64)", set_target},
    {"--cpu", NULL, "CPU", "target CPU (default: the host CPU for run, a generic CPU for compile and info); it decides which kernel variant each fused layer runs", set_cpu},
    {"--features", NULL, "+f,-g", "enable (+) or disable (-) CPU features", set_features},
    {"--no-tune", NULL, NULL, "where the CPU is this machine (run, --cpu native), choose each quantized layer's "
     "kernel variant by the rule table instead of timing the candidates", set_no_tune},
    {"--tune-cache", NULL, "FILE", "variant timings to reuse and extend (created if missing): the same file gives "
     "the same choices, so a --cpu native bundle can be rebuilt byte for byte", set_tune_cache},
    {"--kernels", NULL, "FILE.bc", "add user kernels from an LLVM bitcode file (repeatable)", set_kernels},
    {NULL, NULL, NULL, NULL, NULL}};

/* profile has no target options (it runs the float model on this machine), but needs the user kernels */
static const cli_opt kernel_opts[] = {
    {"--kernels", NULL, "FILE.bc", "add user kernels from an LLVM bitcode file (repeatable)", set_kernels},
    {NULL, NULL, NULL, NULL, NULL}};

static const cli_opt run_opts[] = {
    {"--input", "-i", "NAME=FILE|FILE", "input tensor as .npy, .npz or ONNX TensorProto .pb; a bare FILE fills the "
     "next unnamed input in model order, a bare FILE.npz the inputs named by its arrays (repeatable)", set_input},
    {"--dataset", "-d", "SPEC", "run every sample of a data set through one compiled model instead of --input "
     "(repeatable; forms as for 'qllc profile', .npz too); each output is written stacked, [S, output dims...]",
     set_dataset},
    {"--output-dir", NULL, "DIR", "where each output is written as <output name>.npy (default .; created with its parents if missing)", set_output_dir},
    {"--output", "-o", "FILE.npz", "write every output into one .npz instead, each array named by its output",
     set_output},
    {NULL, NULL, NULL, NULL, NULL}};

static const cli_opt bench_opts[] = {
    {"--input", "-i", "NAME=FILE|FILE", "input tensor (forms as for 'qllc run'; default: fixed pseudo-random "
     "values in [0, 1))", set_input},
    {"--runs", NULL, "N", "timed runs (default 50)", set_runs},
    {"--warmup", NULL, "N", "untimed runs first (default 5)", set_warmup},
    {"--csv", NULL, NULL, "print the per-layer table as CSV on stdout (node,op,kernel,ns,share,gops)", set_csv_out},
    {NULL, NULL, NULL, NULL, NULL}};

static const cli_opt compile_opts[] = {
    {"--output", "-o", "DIR", "output directory for NAME.o and NAME.h (created if missing; required)", set_out},
    {"--name", NULL, "NAME", "bundle name and entry symbol (default: the model file name as a C identifier)",
     set_name},
    {"--reloc", NULL, "pic|static", "relocation model of the object (default pic)", set_reloc},
    {"--weights", NULL, "object|file", "weights inside the object (default) or in NAME.weights.bin", set_weights},
    {"--verbose", "-v", NULL, "print the graph, precision report and memory plan", set_verbose},
    {"--quiet", "-q", NULL, "no notes on stderr (e.g. the one for a bundle compiled for the default generic CPU "
     "on a machine that runs faster code)", set_quiet},
    {NULL, NULL, NULL, NULL, NULL}};

static const cli_opt profile_opts[] = {
    {"--dataset", "-d", "SPEC", "calibration data (repeatable): FILE.npy|FILE.pb with the samples along the "
     "leading axis ([S, ...] or [S, 1, ...] for an input [1, ...]), FILE.npz (each input its array by name), "
     "a DIR of per-sample .npy/.npz/.pb files, or NAME=FILE|DIR for the input NAME", set_dataset},
    {"--output", "-o", "FILE", "where to write the profile YAML (required)", set_out},
    {"--bins", NULL, "N", "histogram bins per value (even, >= 16; default 2048)", set_bins},
    {NULL, NULL, NULL, NULL, NULL}};

static const cli_opt compare_opts[] = {
    {"--dataset", "-d", "SPEC", "the samples both models run on (repeatable; forms as for 'qllc profile'); "
     "default: the first calibration samples (up to 32) kept in the profile", set_dataset},
    {"--samples", NULL, "N", "use at most N samples (default: all of them)", set_samples},
    {"--top", NULL, "N", "print the N worst values after the outputs (default 20; 0: all)", set_top},
    {"--csv", NULL, "FILE", "write the whole table (one row per value) as CSV", set_csv},
    {NULL, NULL, NULL, NULL, NULL}};

static const cli_opt info_opts[] = {
    {"--dot", NULL, "FILE", "also write the compiled graph as Graphviz to FILE ('-': stdout, instead of the "
     "description): nodes coloured by precision, edges with type and scale, fused layers grouped "
     "(render: dot -Tsvg FILE -o graph.svg)", set_dot},
    {NULL, NULL, NULL, NULL, NULL}};

/* every command that loads a model */
static const cli_opt model_opts[] = {
    {"--const", NULL, "NAME=FILE", "bind the graph input NAME to the tensor in FILE (.npy, .npz or .pb) as a compile-time "
     "constant: it is no longer an input; its type and shape must match the declaration (repeatable)", set_const},
    {"--input-shape", NULL, "NAME=DxDx...", "compile for this shape of the graph input NAME (e.g. input=4x3x224x224): "
     "its symbolic dims take these sizes, its fixed dims must be given as declared (repeatable; a symbolic "
     "batch dim not given is taken as 1, with a note)", set_input_shape},
    {NULL, NULL, NULL, NULL, NULL}};

static const cli_opt common_opts[] = {
    {"--dump-after", NULL, "PASS", "print the IR after PASS to stderr (import, spatial3d, fold_constants, transformer, fold_batchnorm, "
     "gemm_to_fc, fuse_activation, eliminate_identity, quantize, lower, memory_plan)", set_dump_after},
    {"--help", "-h", NULL, "show this help", set_help},
    {NULL, NULL, NULL, NULL, NULL}};

static const cli_opt help_opts[] = {
    {"--help", "-h", NULL, "show this help", set_help},
    {NULL, NULL, NULL, NULL, NULL}};

typedef struct cli_command {
  const char *name;
  const char *usage;
  const char *summary;
  const cli_opt *groups[6];
  const char *group_titles[6];
} cli_command;

static const cli_command commands[] = {
    {"run", "qllc run MODEL [--input NAME=FILE | --input FILE ... | --dataset SPEC ...] [--output-dir DIR | -o FILE.npz] [options]",
     "JIT-compile the model for this machine, run it once on the given inputs (or on every sample of a data "
     "set, the outputs stacked), write each output as .npy (or all in one .npz) and print a summary line per output",
     {run_opts, model_opts, quant_opts, target_opts, common_opts, NULL},
     {"run options", "model options", "quantization options", "target options", "other options", NULL}},
    {"compile", "qllc compile MODEL -o DIR [--name NAME] [options]",
     "compile the model ahead of time to a bundle: DIR/NAME.o and DIR/NAME.h (and DIR/NAME.weights.bin)",
     {compile_opts, model_opts, quant_opts, target_opts, common_opts, NULL},
     {"compile options", "model options", "quantization options", "target options", "other options", NULL}},
    {"profile", "qllc profile MODEL --dataset SPEC [--dataset SPEC ...] -o profile.yaml [--bins N]",
     "run the float model over a calibration data set and record min, max and a histogram of every value "
     "into a YAML profile (what compile, run and info read with their profile option)",
     {profile_opts, model_opts, kernel_opts, help_opts, NULL},
     {"profile options", "model options", "kernel options", "other options", NULL}},
    {"compare", "qllc compare MODEL --profile FILE --precision int8|int16 [--dataset SPEC] [--csv FILE]",
     "run the float and the quantized model on the same samples and show, per value, the SQNR against "
     "float, the largest error and the share of saturated elements, with the node that produced it and its "
     "types: the model outputs first, then the worst values",
     {compare_opts, model_opts, quant_opts, kernel_opts, help_opts, NULL},
     {"compare options", "model options", "quantization options", "kernel options", "other options", NULL}},
    {"bench", "qllc bench MODEL [--runs N] [--warmup N] [--csv] [--input NAME=FILE ...] [options]",
     "JIT-compile the model for this machine once, time it per inference (median, min, p90) and print the time "
     "of each kernel call (node, op, kernel variant, time, share, GOPS) from a build with a time stamp "
     "around each call",
     {bench_opts, model_opts, quant_opts, target_opts, common_opts, NULL},
     {"bench options", "model options", "quantization options", "target options", "other options", NULL}},
    {"info", "qllc info MODEL [options]",
     "describe the model as it would be compiled: the graph with every value's type, the precision "
     "report, the kernel variant each fused layer runs on the target CPU, the activations held channel-last "
     "(NHWC) and the layout conversions left, the memory plan and the kernel calls",
     {info_opts, model_opts, quant_opts, target_opts, common_opts, NULL},
     {"info options", "model options", "quantization options", "target options", "other options", NULL}},
};

#define N_COMMANDS ((int)(sizeof commands / sizeof commands[0]))

static const cli_command *find_command(const char *name) {
  for (int i = 0; name && i < N_COMMANDS; i++)
    if (strcmp(commands[i].name, name) == 0) return &commands[i];
  return NULL;
}

int cli_is_command(const char *command) { return find_command(command) != NULL; }

int cli_help(const char *command, FILE *f) {
  if (!command) {
    fprintf(f, "qllc %s: a compiler for quantized neural networks (ONNX in, native code out)\n\n", qllc_version());
    fprintf(f, "usage: qllc COMMAND MODEL [options]\n\ncommands:\n");
    for (int i = 0; i < N_COMMANDS; i++) fprintf(f, "  %-9s %s\n", commands[i].name, commands[i].summary);
    fprintf(f, "  %-9s %s\n", "help", "'qllc help COMMAND' shows the options of a command");
    fprintf(f, "\nglobal options:\n  --help, -h   show this help\n  --version    print the version\n");
    fprintf(f, "\nexit status: 0 success, 1 error (one line on stderr), 2 usage error\n");
    return 0;
  }
  const cli_command *c = find_command(command);
  if (!c) return cli_usage_error("unknown command '%s' (commands: run, compile, info, profile, compare, bench)", command);
  fprintf(f, "usage: %s\n\n%s.\n", c->usage, c->summary);
  for (int g = 0; c->groups[g]; g++) {
    fprintf(f, "\n%s:\n", c->group_titles[g]);
    for (const cli_opt *o = c->groups[g]; o->name; o++) {
      char spell[128];
      snprintf(spell, sizeof spell, "%s%s%s%s%s", o->alias ? o->alias : "", o->alias ? ", " : "", o->name,
               o->meta ? " " : "", o->meta ? o->meta : "");
      if (strlen(spell) <= 28)
        fprintf(f, "  %-28s %s\n", spell, o->help);
      else
        fprintf(f, "  %s\n  %-28s %s\n", spell, "", o->help);
    }
  }
  return 0;
}

static const cli_opt *find_opt(const cli_command *c, const char *spelled, size_t len) {
  for (int g = 0; c->groups[g]; g++)
    for (const cli_opt *o = c->groups[g]; o->name; o++)
      if ((strlen(o->name) == len && strncmp(o->name, spelled, len) == 0) ||
          (o->alias && strlen(o->alias) == len && strncmp(o->alias, spelled, len) == 0))
        return o;
  return NULL;
}

int cli_parse(const char *command, int argc, char **argv, int first, cli_args *a) {
  const cli_command *c = find_command(command);
  memset(a, 0, sizeof *a);
  qllc_options_init(&a->opts);
  a->command = command;
  a->opts.keep_float = a->keep_float;
  a->opts.kernel_files = a->kernels;
  a->opts.search_dataset = a->search_datasets;
  a->output_dir = ".";
  if (!c) return cli_usage_error("unknown command '%s' (commands: run, compile, info, profile, compare, bench)", command);

  int only_positional = 0;
  for (int i = first; i < argc; i++) {
    const char *arg = argv[i];
    if (only_positional || arg[0] != '-' || strcmp(arg, "-") == 0) {
      if (a->model)
        return cli_usage_error("%s: unexpected argument '%s' (one MODEL only; see 'qllc %s --help')", command, arg,
                               command);
      a->model = arg;
      continue;
    }
    if (strcmp(arg, "--") == 0) {
      only_positional = 1;
      continue;
    }
    const char *eq = strncmp(arg, "--", 2) == 0 ? strchr(arg, '=') : NULL;
    size_t len = eq ? (size_t)(eq - arg) : strlen(arg);
    const cli_opt *o = find_opt(c, arg, len);
    if (!o)
      return cli_usage_error("unknown option '%.*s' for 'qllc %s' (see 'qllc %s --help')", (int)len, arg, command,
                             command);
    const char *value = NULL;
    if (o->meta) {
      if (eq)
        value = eq + 1;
      else if (i + 1 < argc)
        value = argv[++i];
      else
        return cli_usage_error("%s: missing value (%s)", o->name, o->meta);
      if (!*value) return cli_usage_error("%s: empty value (%s)", o->name, o->meta);
    } else if (eq) {
      return cli_usage_error("%s takes no value", o->name);
    }
    int rc = o->set(a, o->name, value);
    if (rc) return rc;
  }
  if (a->help) return 0;
  if (!a->model) return cli_usage_error("%s: no MODEL given (usage: %s)", command, c->usage);
  if (a->opts.min_sqnr_db > 0 && a->opts.precision_map) return cli_usage_error("--min-sqnr and --precision-map: give one");
  if (a->opts.min_sqnr_db > 0 && strcmp(command, "compare") != 0) print_search_at_exit(a);
  else if (a->opts.precision_map_out && !strcmp(a->opts.precision_map_out, "-"))
    return cli_usage_error("--precision-map-out -: the map goes to stdout only after a --min-sqnr search of run, compile, info or bench (give a FILE)");
  if (isatty(fileno(stderr))) a->opts.progress = draw_progress;
  if (strcmp(command, "compile") == 0 && !a->out)
    return cli_usage_error("compile: no output directory given (-o DIR)");
  if (a->n_datasets && a->n_inputs && strcmp(command, "run") == 0)
    return cli_usage_error("run: --input and --dataset: give one");
  if (strcmp(command, "profile") == 0 && !a->out)
    return cli_usage_error("profile: no output file given (-o profile.yaml)");
  if (strcmp(command, "profile") == 0 && a->n_datasets == 0)
    return cli_usage_error("profile: no data set given (--dataset FILE.npy|DIR|NAME=...)");
  return 0;
}
