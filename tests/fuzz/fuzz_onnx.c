/* tests/fuzz/fuzz_onnx.c: the ONNX importer on arbitrary bytes: protobuf-c decode, initializers and
 * Constant nodes, attribute normalisation and shape inference for every node, constant folding of shape
 * subgraphs (qllc_onnx_load), then the verifier, the float pass pipeline (qllc_graph_optimize, which
 * verifies again), the QDQ pass of pre-quantized models and the printer, as `qllc compile` runs them.
 * A graph that loads must verify, and every value's shape must pass qllc_shape_bytes. */
#include <stdlib.h>

#include "fuzz_util.h"
#include "ir/ir.h"
#include "quant/quant.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  const char *path = fuzz_write_file(data, size, ".onnx");
  if (!path) return 0;
  static FILE *null;
  if (!null && !(null = fopen("/dev/null", "w"))) return 0;
  qllc_graph *g = NULL;
  qllc_diag d = {0};
  if (qllc_onnx_load(path, &g, &d) != QLLC_OK) return 0;
  if (qllc_graph_verify(g, &d) != QLLC_OK) abort(); /* the importer's output is always well formed */
  for (int i = 0; i < g->n_values; i++) {
    int64_t bytes;
    const qllc_value *v = g->values[i];
    if (qllc_shape_bytes(v->elem, v->rank, v->dims, &bytes)) abort();
  }
  qllc_graph_print(g, null);
  qllc_status st = qllc_graph_optimize(g, NULL, NULL, &d);
  if (st == QLLC_OK && qllc_graph_has_qdq(g)) st = qllc_pass_qdq(g, &d);
  if (st == QLLC_OK) qllc_graph_print(g, null);
  qllc_graph_free(g);
  return 0;
}
