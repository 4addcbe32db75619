/* tests/fuzz/fuzz_kernels.c: the --kernels file reader on arbitrary bytes.
 * Every input goes through the LLVM version check's own bitstream reader (qllc_bitcode_check_version:
 * the code of ours that reads the untrusted bytes in this process). One input in 64 (chosen by a hash of
 * its bytes, so a run is reproducible) also goes through the whole qllc_user_kernels_load: the bounded
 * read, the full parse and verification in a child process, then the lazy read of the functions
 * defined. Whatever LLVM does with a corrupt file happens in the child, so this process must get a
 * status, never a crash; but a fork and a parse cost about 30 ms under ASan, so the load on every input
 * would reach 1 M executions in 9 hours. QLLC_FUZZ_KERNELS_ALL=1 (set by the regression test
 * fuzz/regress_kernels) loads every input. A file that is accepted must be listed by the lookup. */
#include <stdlib.h>

#include "fuzz_util.h"
#include "llvmgen/llvmgen.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  qllc_diag d = {0};
  if (qllc_bitcode_check_version(data, size, "input", &d) != QLLC_OK && !d.message[0]) abort();
  uint32_t h = 2166136261u;
  for (size_t i = 0; i < size; i++) h = (h ^ data[i]) * 16777619u;
  static int all = -1;
  if (all < 0) all = getenv("QLLC_FUZZ_KERNELS_ALL") != NULL;
  if (!all && h % 64 != 0) return 0;
  const char *path = fuzz_write_file(data, size, ".bc");
  if (!path) return 0;
  qllc_user_kernels *uk = NULL;
  const char *files[] = {path};
  d = (qllc_diag){0};
  if (qllc_user_kernels_load(files, 1, &uk, &d) != QLLC_OK) {
    if (uk || !d.message[0]) abort();
    return 0;
  }
  char buf[600];
  if (!qllc_user_kernels_files(uk, buf, sizeof buf)[0]) abort();
  qllc_user_kernels_free(uk);
  return 0;
}
