/* tests/fuzz/fuzz_tensor.c: the tensor reader (qllc_tensor_read: .npy v1/v2/v3 and ONNX TensorProto
 * .pb, chosen by content) on arbitrary bytes. A tensor that is read must be consistent: its byte size
 * within QLLC_MAX_TENSOR_BYTES and every byte of its data readable (touched here, so ASan sees a short
 * buffer); writing it back as .npy and reading that must give the same dims and bytes. */
#include <stdlib.h>
#include <string.h>

#include "fuzz_util.h"
#include "ir/ir.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  const char *path = fuzz_write_file(data, size, ".in");
  if (!path) return 0;
  qllc_tensor t;
  qllc_diag d = {0};
  if (qllc_tensor_read(path, &t, &d) != QLLC_OK) return 0;
  int64_t bytes;
  if (qllc_shape_bytes((qllc_elem)t.elem, (int)t.rank, t.dims, &bytes)) abort();
  volatile unsigned sum = 0;
  for (int64_t i = 0; i < bytes; i++) sum += ((const unsigned char *)t.data)[i];
  /* round trip through .npy */
  static char out[600];
  snprintf(out, sizeof out, "%s.npy", path);
  if (qllc_tensor_write_npy(out, &t, &d) == QLLC_OK) {
    qllc_tensor u;
    if (qllc_tensor_read(out, &u, &d) != QLLC_OK) abort();
    if (u.elem != t.elem || u.rank != t.rank || memcmp(u.dims, t.dims, sizeof t.dims[0] * t.rank) ||
        (bytes && memcmp(u.data, t.data, (size_t)bytes)))
      abort();
    qllc_tensor_free(&u);
    remove(out);
  }
  qllc_tensor_free(&t);
  return 0;
}
