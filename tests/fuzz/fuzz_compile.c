/* tests/fuzz/fuzz_compile.c: load -> quantize -> lower of a (small) ONNX model on arbitrary bytes.
 *
 * The model is loaded and optimized as `qllc compile` does (qllc_onnx_load, qllc_graph_optimize, the
 * QDQ pass for pre-quantized models), lowered in float to the reference kernels (with the memory plan),
 * then quantized with a profile made up here (every value gets a histogram over a range derived from the
 * input's hash, so no calibration run is needed) and lowered again for x86_64 with the AVX-512 VNNI
 * variants, so the weight packers run too. The precision, schema and per-tensor choice also come from
 * the input's hash, so mutations reach every mode. LLVM code generation is not run (too slow to fuzz;
 * the bundles and JIT are covered by the test suite). */
#include <stdlib.h>

#include "fuzz_util.h"
#include "ir/ir.h"
#include "lower/lower.h"
#include "quant/quant.h"

static uint64_t hash(const uint8_t *p, size_t n) {
  uint64_t h = 0xcbf29ce484222325ULL;
  for (size_t i = 0; i < n; i++) h = (h ^ p[i]) * 0x100000001b3ULL;
  return h;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size > (1 << 20)) return 0; /* small graphs: the loader harness takes big inputs */
  const char *path = fuzz_write_file(data, size, ".onnx");
  if (!path) return 0;
  uint64_t h = hash(data, size);
  qllc_graph *g = NULL;
  qllc_diag d = {0};
  if (qllc_onnx_load(path, &g, &d) != QLLC_OK) return 0;
  qllc_status st = qllc_graph_optimize(g, NULL, NULL, &d);
  int qdq = st == QLLC_OK && qllc_graph_has_qdq(g);
  if (qdq) st = qllc_pass_qdq(g, &d);
  qllc_program *p = NULL;
  if (st == QLLC_OK && qllc_lower(g, &p, &d) == QLLC_OK) qllc_program_free(p);
  p = NULL;
  if (st == QLLC_OK && !qdq) {
    qllc_profile *prof = qllc_profile_new(qllc_graph_hash(g), 0);
    float range = (float)(1 + (h & 15)) / 4.0f;
    float sample[4] = {-range, range * 0.5f, range, (h >> 4) & 1 ? 0.0f : -range / 3};
    for (int i = 0; prof && i < g->n_values; i++) {
      qllc_hist *hist = g->values[i]->name ? qllc_profile_add(prof, g->values[i]->name) : NULL;
      if (hist) qllc_hist_record(hist, sample, 4);
    }
    if (prof) {
      static const qllc_elem act[] = {QLLC_ELEM_I8, QLLC_ELEM_I16, QLLC_ELEM_I16};
      static const qllc_elem w[] = {QLLC_ELEM_I8, QLLC_ELEM_I16, QLLC_ELEM_I8};
      int mode = (int)((h >> 8) % 3);
      qllc_quant_opts o = {.act_elem = act[mode], .w_elem = w[mode], .widen_for_bias = 1};
      o.schema = (qllc_schema)((h >> 12) % 4); /* asymmetric, symmetric, symmetric_uint8, power2 */
      if (o.act_elem == QLLC_ELEM_I16 && o.schema != QLLC_SCHEMA_POWER2) o.schema = QLLC_SCHEMA_SYMMETRIC;
      o.per_tensor = (int)((h >> 16) & 1);
      o.quantized_io = (int)((h >> 17) & 1);
      o.calib.method = (qllc_calibration)((h >> 18) % 2); /* minmax, percentile: KL on every value of a
                                                             big graph is slow by design (fuzz_profile runs it) */
      if (qllc_quantize_graph(g, prof, &o, &d) == QLLC_OK) {
        qllc_lower_target t = {.arch = "x86_64", .cpu = "x86-64-v4", .features = "+avx512vnni,+avx512vbmi,+avxvnni,+avx2"};
        if (qllc_lower_for(g, (h >> 20) & 1 ? &t : NULL, &p, &d) == QLLC_OK) qllc_program_free(p);
      }
      qllc_profile_free(prof);
    }
  }
  qllc_graph_free(g);
  return 0;
}
