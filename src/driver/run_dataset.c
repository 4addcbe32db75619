/* src/driver/run_dataset.c: `qllc run --dataset` (qllc_jit_run_dataset): every sample of a data set through
 * one JIT, the outputs stacked.
 *
 * The data set is opened against the program's graph (the same forms and checks as profiling, probe.c);
 * each sample goes through qllc_drv_jit_run exactly as a single run would, so sample s of the stacked
 * outputs has the same bytes as a run on that sample alone.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdlib.h>
#include <string.h>

#include "driver/driver_internal.h"

qllc_status qllc_drv_jit_run_dataset(qllc_drv_jit *j, const char *const *specs, int n_specs, qllc_progress_fn progress,
                                     void *progress_ctx, qllc_tensor *outputs, int64_t *samples, qllc_diag *diag) {
  for (int i = 0; i < j->n_out; i++) memset(&outputs[i], 0, sizeof outputs[i]);
  for (int i = 0; i < j->n_in; i++)
    if (j->in[i].elem != QLLC_F32)
      return qllc_fail(diag, QLLC_ERR_UNSUPPORTED, NULL,
                       "--dataset: input '%s' is %s (a data set gives float inputs); run it with --input", j->in[i].name,
                       qllc_elem_name(j->in[i].elem));
  for (int i = 0; i < j->n_out; i++)
    if (j->out[i].rank >= QLLC_MAX_RANK)
      return qllc_fail(diag, QLLC_ERR_UNSUPPORTED, NULL, "--dataset: output '%s' has rank %u: stacked it would exceed %d",
                       j->out[i].name, j->out[i].rank, QLLC_MAX_RANK);
  qllc_dataset *ds = NULL;
  qllc_status st = qllc_dataset_open(j->prog->graph, specs, n_specs, &ds, diag);
  if (st != QLLC_OK) return st;
  int64_t S = qllc_dataset_samples(ds);
  qllc_tensor *in = calloc((size_t)j->n_in + 1, sizeof *in);
  qllc_tensor *one = calloc((size_t)j->n_out + 1, sizeof *one);
  uint64_t *bytes = calloc((size_t)j->n_out + 1, sizeof *bytes);
  if (!in || !one || !bytes) st = qllc_fail(diag, QLLC_ERR_NOMEM, NULL, "out of memory");
  for (int i = 0; st == QLLC_OK && i < j->n_in; i++) {
    in[i] = j->in[i]; /* name borrowed */
    int64_t n = 1;
    for (uint32_t d = 0; d < in[i].rank; d++) n *= in[i].dims[d];
    if (!(in[i].data = malloc((size_t)n * sizeof(float) + 1))) st = qllc_fail(diag, QLLC_ERR_NOMEM, NULL, "out of memory");
  }
  for (int i = 0; st == QLLC_OK && i < j->n_out; i++) {
    qllc_tensor *o = &outputs[i];
    *o = j->out[i];
    o->name = NULL, o->data = NULL;
    o->rank = j->out[i].rank + 1;
    o->dims[0] = S;
    memcpy(o->dims + 1, j->out[i].dims, sizeof(int64_t) * j->out[i].rank);
    int64_t per = (int64_t)qllc_elem_size(o->elem), total;
    for (uint32_t d = 0; d < j->out[i].rank; d++) per *= j->out[i].dims[d];
    bytes[i] = (uint64_t)per;
    if (qllc_mul_size(per, S, &total) || total > QLLC_MAX_TENSOR_BYTES)
      st = qllc_fail(diag, QLLC_ERR_UNSUPPORTED, NULL, "--dataset: output '%s' of %lld samples is larger than %lld bytes",
                     j->out[i].name, (long long)S, (long long)QLLC_MAX_TENSOR_BYTES);
    else if (!(o->name = strdup(j->out[i].name)) || !(o->data = malloc(total ? (size_t)total : 1)))
      st = qllc_fail(diag, QLLC_ERR_NOMEM, NULL, "out of memory");
  }
  for (int64_t s = 0; st == QLLC_OK && s < S; s++) {
    for (int i = 0; st == QLLC_OK && i < j->n_in; i++) st = qllc_dataset_sample(ds, in[i].name, s, in[i].data, diag);
    if (st == QLLC_OK) st = qllc_drv_jit_run(j, in, j->n_in, one, diag);
    if (st != QLLC_OK) {
      size_t len = diag ? strlen(diag->message) : 0;
      if (diag && len + 40 < sizeof diag->message)
        snprintf(diag->message + len, sizeof diag->message - len, " (sample %lld)", (long long)s);
      break;
    }
    for (int i = 0; i < j->n_out; i++) {
      memcpy((uint8_t *)outputs[i].data + (uint64_t)s * bytes[i], one[i].data, bytes[i]);
      qllc_tensor_free(&one[i]);
    }
    if (progress) progress(progress_ctx, s + 1, S);
  }
  for (int i = 0; in && i < j->n_in; i++) free(in[i].data);
  free(in);
  free(one);
  free(bytes);
  qllc_dataset_free(ds);
  if (st != QLLC_OK) {
    for (int i = 0; i < j->n_out; i++) qllc_tensor_free(&outputs[i]);
    return st;
  }
  if (samples) *samples = S;
  return QLLC_OK;
}
