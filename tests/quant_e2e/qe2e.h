/* tests/quant_e2e/qe2e.h: helpers shared by the quantization end-to-end tests (header-only).
 *
 * Each test profiles a committed model on its committed calibration set through the public API
 * (qllc_profile_dataset), JIT-compiles it at a precision and runs it on the committed evaluation inputs,
 * comparing with torch's float outputs (tests/quant_e2e/make_data.py made all of them).
 */
#ifndef QE2E_H
#define QE2E_H

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "qllc.h"

#define QE2E_DATA QLLC_SOURCE_DIR "/tests/quant_e2e/data"

static inline void qe2e_path(char *buf, size_t size, const char *model, const char *file) {
  snprintf(buf, size, "%s/%s/%s", QE2E_DATA, model, file);
}

static inline int64_t qe2e_numel(const qllc_tensor *t) {
  int64_t n = 1;
  for (uint32_t d = 0; d < t->rank; d++) n *= t->dims[d];
  return n;
}

/* Profiles data/<model>/calib.npy into a temporary file named in `out` (size >= 256). */
static inline qllc_status qe2e_profile(qllc_model *m, const char *model, char *out, qllc_diag *d) {
  char calib[512];
  qe2e_path(calib, sizeof calib, model, "calib.npy");
  snprintf(out, 256, "%s/qe2e_%s_%ld.yaml", QLLC_BUILD_DIR, model, (long)getpid());
  const char *specs[1] = {calib};
  return qllc_profile_dataset(m, specs, 1, 0, out, NULL, NULL, NULL, d);
}

/* Loads data/<model>/model.onnx and profiles it (qe2e_profile, the profile's path in `prof`, size >=
 * 256); NULL, with the error printed, when either fails. */
static inline qllc_model *qe2e_load_profiled(const char *model, char *prof) {
  char path[512];
  qe2e_path(path, sizeof path, model, "model.onnx");
  qllc_diag d;
  memset(&d, 0, sizeof d);
  qllc_model *m = NULL;
  if (qllc_model_load(path, &m, &d) != QLLC_OK) {
    printf("load %s: %s\n", path, d.message);
    return NULL;
  }
  if (qe2e_profile(m, model, prof, &d) != QLLC_OK) {
    printf("profile %s: %s\n", model, d.message);
    qllc_model_free(m);
    return NULL;
  }
  return m;
}

/* Runs every sample of eval_x through j (float in, float out) and returns the output's SQNR in dB
 * against eval_y: 10 log10(sum y^2 / sum (q - y)^2). NAN on error (printed). */
static inline double qe2e_sqnr(qllc_jit *j, const char *model) {
  char px[512], py[512];
  qe2e_path(px, sizeof px, model, "eval_x.npy");
  qe2e_path(py, sizeof py, model, "eval_y.npy");
  qllc_tensor x, y;
  qllc_diag d;
  memset(&d, 0, sizeof d);
  if (qllc_tensor_read(px, &x, &d) != QLLC_OK || qllc_tensor_read(py, &y, &d) != QLLC_OK) {
    printf("read: %s\n", d.message);
    return NAN;
  }
  const qllc_tensor *in = qllc_jit_input(j, 0), *out = qllc_jit_output(j, 0);
  int64_t nx = 1, ny = 1;
  for (uint32_t k = 0; k < in->rank; k++) nx *= in->dims[k];
  for (uint32_t k = 0; k < out->rank; k++) ny *= out->dims[k];
  int64_t samples = x.dims[0];
  double sig = 0, noise = 0;
  for (int64_t s = 0; s < samples; s++) {
    qllc_tensor arg = *in;
    arg.name = NULL;
    arg.data = (float *)x.data + s * nx;
    qllc_tensor o;
    if (qllc_jit_run(j, &arg, 1, &o, &d) != QLLC_OK || o.elem != QLLC_F32) {
      printf("run: %s\n", d.message);
      qllc_tensor_free(&x);
      qllc_tensor_free(&y);
      return NAN;
    }
    const float *ref = (const float *)y.data + s * ny, *got = o.data;
    for (int64_t i = 0; i < ny; i++) {
      sig += (double)ref[i] * ref[i];
      noise += ((double)got[i] - ref[i]) * ((double)got[i] - ref[i]);
    }
    qllc_tensor_free(&o);
  }
  qllc_tensor_free(&x);
  qllc_tensor_free(&y);
  return noise == 0 ? INFINITY : 10.0 * log10(sig / noise);
}

/* Compiles `model` with opts (NULL: float) and returns its SQNR against torch; NAN on error. */
static inline double qe2e_model_sqnr(qllc_model *m, const char *model, const qllc_options *opts) {
  qllc_diag d;
  memset(&d, 0, sizeof d);
  qllc_jit *j = NULL;
  if (qllc_jit_compile(m, opts, &j, &d) != QLLC_OK) {
    printf("compile %s: %s: %s\n", model, qllc_status_name(d.status), d.message);
    return NAN;
  }
  double r = qe2e_sqnr(j, model);
  qllc_jit_free(j);
  return r;
}

#endif
