/* tests/fuzz/fuzz_kernels.c: the --kernels file reader (qllc_user_kernels_load: the bounded read, the
 * LLVM version check's own bitstream reader, the full parse and verification in a child process, then
 * the lazy read of the functions defined) on arbitrary bytes. Whatever LLVM does with a corrupt file
 * happens in the child: this process must get a status, never a crash. A file that is accepted must
 * define what the lookup finds. */
#include <stdlib.h>

#include "fuzz_util.h"
#include "llvmgen/llvmgen.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  const char *path = fuzz_write_file(data, size, ".bc");
  if (!path) return 0;
  qllc_user_kernels *uk = NULL;
  qllc_diag d = {0};
  const char *files[] = {path};
  if (qllc_user_kernels_load(files, 1, &uk, &d) != QLLC_OK) {
    if (uk || !d.message[0]) abort();
    return 0;
  }
  char buf[600];
  if (!qllc_user_kernels_files(uk, buf, sizeof buf)[0]) abort();
  qllc_user_kernels_free(uk);
  return 0;
}
