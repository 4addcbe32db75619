/* src/lower/lower_custom.c: custom ONNX ops (issue 7) -> one call to a user kernel.
 *
 * A node of domain D and op type T (QLLC_OP_CUSTOM) calls
 *     qllc_k_custom_<D'>_<T'>_<in_0>_..._<in_{k-1}>_<out_0>_..._<out_{m-1}>
 * where D' and T' are D and T with every character outside [A-Za-z0-9] replaced by '_' (case kept),
 * and <in_i>/<out_j> are the element names (f32 i8 u8 i16 i32) of its inputs and outputs in node order
 * (an absent optional input is skipped). Arguments (docs/kernels.md, "Custom ops"), all fixed by the
 * model, so every one but the pointers is a compile-time constant:
 *   1. one pointer per output, then one per present input (inputs const);
 *   2. int64_t dims: every output's dims, then every present input's dims (rank many each, in order);
 *   3. node attributes of kind INT (int64_t) and FLOAT (float), sorted by attribute name (strcmp); any
 *      other attribute kind is an error naming the node and the attribute;
 *   4. only when a value is quantized (i8/u8/i16): per output, then per input, `float scale,
 *      int32_t zero_point`.
 * The name is made by qllc_custom_kernel_name (src/ir/custom_kernel_name.c: the quantizer names it
 * too). It is not checked against libjit here: the facade checks it against the user's bitcode
 * (naming node, function and files) before code generation.
 */
#include <stdlib.h>
#include <string.h>

#include "lower/lower.h"
#include "lower/lower_internal.h"

static int is_quantized(const qllc_value *v) {
  return v->elem == QLLC_ELEM_I8 || v->elem == QLLC_ELEM_U8 || v->elem == QLLC_ELEM_I16;
}

static int cmp_attr(const void *a, const void *b) {
  return strcmp((*(const qllc_attr *const *)a)->name, (*(const qllc_attr *const *)b)->name);
}

qllc_status qllc_lower_custom(qllc_lower_ctx *c, const qllc_node *n) {
  qllc_lower_args av = {.n = 0};
  char msg[512];
  int need = 0, quant = 0;
  for (int pass = 0; pass < 2; pass++) {
    int cnt = pass ? n->n_in : n->n_out;
    qllc_value *const *vs = pass ? n->in : n->out;
    for (int i = 0; i < cnt; i++) {
      if (!vs[i]) continue;
      need += 1 + vs[i]->rank;
      if (is_quantized(vs[i])) quant = 1;
      if (is_quantized(vs[i]) && vs[i]->q_axis >= 0) {
        snprintf(msg, sizeof msg, "value '%s' is quantized per channel; custom kernels take one scale per tensor",
                 vs[i]->name);
        return qllc_lower_unsupported(c, n, msg);
      }
    }
  }
  if (quant) need += 2 * (n->n_in + n->n_out);
  const qllc_attr **attrs = calloc((size_t)n->n_attr + 1, sizeof *attrs);
  if (!attrs) return qllc_lower_oom(c);
  for (int i = 0; i < n->n_attr; i++) {
    attrs[i] = &n->attrs[i];
    if (attrs[i]->kind != QLLC_ATTR_INT && attrs[i]->kind != QLLC_ATTR_FLOAT) {
      free(attrs);
      snprintf(msg, sizeof msg,
               "attribute '%s' is not a single int or float; custom kernels receive only those (docs/kernels.md)",
               n->attrs[i].name);
      return qllc_lower_unsupported(c, n, msg);
    }
  }
  need += n->n_attr;
  if (need > QLLC_LOWER_MAX_ARGS) {
    free(attrs);
    snprintf(msg, sizeof msg, "the kernel would take %d arguments (at most %d)", need, QLLC_LOWER_MAX_ARGS);
    return qllc_lower_unsupported(c, n, msg);
  }
  qsort(attrs, (size_t)n->n_attr, sizeof *attrs, cmp_attr);
  for (int pass = 0; pass < 2; pass++) { /* 1. pointers: outputs, then inputs */
    int cnt = pass ? n->n_in : n->n_out;
    qllc_value *const *vs = pass ? n->in : n->out;
    for (int i = 0; i < cnt; i++)
      if (vs[i]) qllc_lower_arg_buf(&av, qllc_lower_buf_of(c, vs[i]), 0);
  }
  for (int pass = 0; pass < 2; pass++) { /* 2. dims: outputs, then inputs */
    int cnt = pass ? n->n_in : n->n_out;
    qllc_value *const *vs = pass ? n->in : n->out;
    for (int i = 0; i < cnt; i++)
      for (int d = 0; vs[i] && d < vs[i]->rank; d++) qllc_lower_arg_int(&av, vs[i]->dims[d]);
  }
  for (int i = 0; i < n->n_attr; i++) { /* 3. scalar attributes by name */
    if (attrs[i]->kind == QLLC_ATTR_INT) qllc_lower_arg_int(&av, attrs[i]->i);
    else qllc_lower_arg_float(&av, attrs[i]->f);
  }
  free(attrs);
  if (quant) { /* 4. scale and zero point of each value (1 and 0 for a float one) */
    for (int pass = 0; pass < 2; pass++) {
      int cnt = pass ? n->n_in : n->n_out;
      qllc_value *const *vs = pass ? n->in : n->out;
      for (int i = 0; i < cnt; i++) {
        if (!vs[i]) continue;
        qllc_lower_arg_float(&av, is_quantized(vs[i]) ? vs[i]->scale : 1.0);
        qllc_lower_arg_int(&av, is_quantized(vs[i]) ? vs[i]->zero_point : 0);
      }
    }
  }
  char name[512];
  if (qllc_custom_kernel_name(n, QLLC_ELEM_COUNT, name, sizeof name))
    return qllc_lower_unsupported(c, n, "the custom kernel's name is too long");
  const char *k = qllc_arena_strdup(c->p->arena, name);
  return qllc_lower_emit(c, n, k, &av);
}
