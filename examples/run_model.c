/* run_model: the smallest complete use of the qllc library.
 *
 *   run_model MODEL.onnx [INPUT.npy ...]
 *
 * Loads an ONNX model, JIT-compiles it for this machine, feeds it the given .npy/.pb tensors (in the
 * model's input order) or zeros of the right shape, runs it once and prints every output.
 * Only include/qllc.h is used: this is what a program embedding qllc looks like.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "qllc.h"

/* Prints the library's diagnostic as one line: "run_model: STEP: FILE: node 'N': MESSAGE". */
static int fail(const char *step, const qllc_diag *d) {
  fprintf(stderr, "run_model: %s: ", step);
  if (d->file[0]) fprintf(stderr, "%s: ", d->file);
  if (d->node[0]) fprintf(stderr, "node '%s': ", d->node);
  fprintf(stderr, "%s\n", d->message);
  return 1;
}

static size_t numel(const qllc_tensor *t) {
  size_t n = 1;
  for (uint32_t d = 0; d < t->rank; d++) n *= (size_t)t->dims[d];
  return n;
}

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: run_model MODEL.onnx [INPUT.npy ...]\n");
    return 2;
  }
  qllc_diag diag;
  memset(&diag, 0, sizeof diag);

  /* 1. Load the model (parsed, checked and optimized once; reusable for many compiles). */
  qllc_model *model = NULL;
  if (qllc_model_load(argv[1], &model, &diag) != QLLC_OK) return fail("load", &diag);

  /* 2. JIT-compile it with the default options: float, for the host CPU. */
  qllc_options opts;
  qllc_options_init(&opts);
  qllc_jit *jit = NULL;
  if (qllc_jit_compile(model, &opts, &jit, &diag) != QLLC_OK) {
    qllc_model_free(model);
    return fail("compile", &diag);
  }

  /* 3. Inputs: read from files when given, else zeros shaped like the model's inputs. */
  int n_in = qllc_jit_num_inputs(jit), n_out = qllc_jit_num_outputs(jit);
  qllc_tensor *in = calloc((size_t)n_in + 1, sizeof *in);
  qllc_tensor *out = calloc((size_t)n_out + 1, sizeof *out);
  int rc = 0;
  for (int i = 0; i < n_in && rc == 0; i++) {
    const qllc_tensor *want = qllc_jit_input(jit, i);
    if (i + 2 < argc) {
      if (qllc_tensor_read(argv[i + 2], &in[i], &diag) != QLLC_OK) rc = fail("input", &diag);
      free(in[i].name); /* matched by position, not by the name stored in the file */
      in[i].name = NULL;
    } else {
      in[i] = *want; /* same name, kind and shape; the library copies nothing from us but data */
      in[i].name = strdup(want->name);
      in[i].data = calloc(numel(want) ? numel(want) : 1, qllc_elem_size(want->elem));
    }
  }

  /* 4. Run once; each output is a fresh tensor we own. */
  if (rc == 0 && qllc_jit_run(jit, in, n_in, out, &diag) != QLLC_OK) rc = fail("run", &diag);

  /* 5. Print the outputs (float outputs as numbers; others as their kind and shape only). */
  for (int i = 0; i < n_out && rc == 0; i++) {
    printf("%s: %s<", out[i].name, qllc_elem_name(out[i].elem));
    for (uint32_t d = 0; d < out[i].rank; d++) printf(d ? " x %lld" : "%lld", (long long)out[i].dims[d]);
    printf(">");
    if (out[i].elem == QLLC_F32)
      for (size_t k = 0; k < numel(&out[i]); k++) printf(" %.6g", ((const float *)out[i].data)[k]);
    printf("\n");
    qllc_tensor_free(&out[i]);
  }

  for (int i = 0; i < n_in; i++) qllc_tensor_free(&in[i]);
  free(in);
  free(out);
  qllc_jit_free(jit);
  qllc_model_free(model);
  return rc;
}
