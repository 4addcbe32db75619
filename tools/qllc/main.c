/* tools/qllc/main.c: `qllc COMMAND ...` dispatch. See cli.h for conventions (exit codes, error lines). */
#include <string.h>

#include "cli.h"

int main(int argc, char **argv) {
  if (argc < 2) {
    cli_help(NULL, stderr);
    return EXIT_USAGE;
  }
  const char *cmd = argv[1];
  if (strcmp(cmd, "--help") == 0 || strcmp(cmd, "-h") == 0) return cli_help(NULL, stdout);
  if (strcmp(cmd, "--version") == 0) {
    printf("qllc %s\n", qllc_version());
    return 0;
  }
  if (strcmp(cmd, "help") == 0) {
    if (argc > 3) return cli_usage_error("help: one COMMAND at most");
    return cli_help(argc == 3 ? argv[2] : NULL, stdout);
  }
  if (!cli_is_command(cmd)) {
    if (cmd[0] == '-') return cli_usage_error("unknown option '%s' (see 'qllc --help')", cmd);
    return cli_usage_error("unknown command '%s' (commands: run, compile, info, profile, compare, bench; see 'qllc --help')", cmd);
  }

  cli_args a;
  int rc = cli_parse(cmd, argc, argv, 2, &a);
  if (rc) return rc;
  if (a.help) return cli_help(cmd, stdout);
  if (strcmp(cmd, "run") == 0) return cmd_run(&a);
  if (strcmp(cmd, "compile") == 0) return cmd_compile(&a);
  if (strcmp(cmd, "profile") == 0) return cmd_profile(&a);
  if (strcmp(cmd, "compare") == 0) return cmd_compare(&a);
  if (strcmp(cmd, "bench") == 0) return cmd_bench(&a);
  return cmd_info(&a);
}
