/* tools/qllc/cli.h: shared pieces of the qllc command-line tool.
 *
 * The tool only parses flags, prints and picks exit codes; everything else is the public API.
 * Exit codes: 0 success, 1 an error reported by the library or a file, 2 a usage error.
 * Every error is ONE line on stderr: `qllc: error: <file>: node '<node>': <message>` (empty parts
 * omitted).
 *
 * Options are declared once per command in a table (args.c) that drives both parsing and --help, so
 * the help text cannot drift from what is parsed.
 */
#ifndef QLLC_CLI_H
#define QLLC_CLI_H

#include <stdio.h>

#include "qllc.h"

#define CLI_MAX_LIST 64

enum { EXIT_ERROR = 1, EXIT_USAGE = 2 };

/* Everything a command line can set. */
typedef struct cli_args {
  const char *command;
  const char *model;                        /* the one positional argument */
  qllc_options opts;
  const char *keep_float[CLI_MAX_LIST];
  const char *kernels[CLI_MAX_LIST];
  const char *inputs[CLI_MAX_LIST];         /* run: "NAME=FILE" or "FILE" */
  int n_inputs;
  const char *output_dir;                   /* run: --output-dir (default ".") */
  const char *out;                          /* compile: -o DIR; profile: -o FILE */
  const char *datasets[CLI_MAX_LIST];       /* profile: --dataset SPEC */
  int n_datasets;
  int bins;                                 /* profile: --bins (0: default) */
  const char *consts[CLI_MAX_LIST];         /* --const NAME=FILE: graph inputs bound to constants */
  int n_consts;
  const char *shapes[CLI_MAX_LIST];         /* --input-shape NAME=DxDx...: symbolic input dims pinned */
  int n_shapes;
  const char *output;                       /* run: --output FILE.npz (every output in one file) */
  int runs, warmup;                         /* bench: --runs, --warmup (0: unset) */
  int csv_out;                              /* bench: --csv (the table as CSV on stdout) */
  const char *name;                         /* compile: --name */
  const char *dot;                          /* info: --dot FILE (Graphviz) */
  const char *csv;                          /* compare: --csv FILE */
  int top;                                  /* compare: --top N rows (0: unset, 20; -1: all) */
  long long max_samples;                    /* compare: --samples N (0: every sample, or 32 drawn) */
  const char *search_datasets[CLI_MAX_LIST]; /* --search-dataset SPEC (--min-sqnr's samples) */
  int verbose;
  int quiet;                                /* compile: no notes (qllc_options.note) */
  int map_stdout;                           /* --precision-map-out -: the map is stdout's (compile's
                                               "wrote" line goes to stderr) */
  int help;
} cli_args;

/* Parses argv[first..argc) for `command`. Returns 0, or EXIT_USAGE after printing the error. */
int cli_parse(const char *command, int argc, char **argv, int first, cli_args *a);
/* Prints the help of a command (or of the tool when command is NULL). Returns 0, or EXIT_USAGE for an
 * unknown command. */
int cli_help(const char *command, FILE *f);
int cli_is_command(const char *command);

/* One-line errors. */
int cli_usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Prints a library diagnostic; `file` is used when the diagnostic names none. Returns EXIT_ERROR. */
int cli_diag_error(const qllc_diag *d, const char *file);
int cli_error(const char *file, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Loads a->model with the --const bindings (files read here) and the --input-shape shapes; a symbolic
 * dim taken as 1 is one note on stderr. Returns 0, or the exit code after printing the error. */
int cli_load_model(const cli_args *a, qllc_model **m);
/* Reads the tensor for the input `name` from file: a .npy or .pb, or from a .npz the array called
 * `name` (or its only array). Returns 0, or the exit code after printing the error. */
int cli_read_tensor(const char *file, const char *name, qllc_tensor *t);

int cmd_run(cli_args *a);
int cmd_compile(cli_args *a);
int cmd_info(cli_args *a);
int cmd_profile(cli_args *a);
int cmd_compare(cli_args *a);
int cmd_bench(cli_args *a);

#endif
