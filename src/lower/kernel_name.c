/* src/lower/kernel_name.c: the kernel a quantized node will call, named before lowering.
 *
 * The quantizer asks the target, node by node, whether a kernel exists for the element kinds it is
 * about to choose (qllc_quant_opts.supports). That question needs the name lowering will emit, so the
 * answer lives here, in the module that names kernels, and not in the facade. The stem and arity come
 * from the registry (kernels.def: the QOP row of the node's op and the QKERNEL rows of that stem); a
 * test lowers a quantized graph of every op family and checks each node's instructions against this
 * function, so the registry and the lowering cannot drift apart unnoticed.
 */
#include <stdio.h>

#include "lower/lower_internal.h"

void qllc_lower_op_stem(qllc_op op, char *buf, size_t size) {
  const char *on = op >= 0 && op < QLLC_OP_COUNT ? qllc_op_name(op) : "unknown";
  size_t k = 0;
  for (const char *c = on; *c && k + 2 < size; c++) {
    if (*c == '.') {
      k = 0;
      continue;
    }
    if (*c >= 'A' && *c <= 'Z' && k > 0 && c[-1] >= 'a' && c[-1] <= 'z') buf[k++] = '_';
    buf[k++] = (char)(*c >= 'A' && *c <= 'Z' ? *c - 'A' + 'a' : *c);
  }
  if (size) buf[k] = '\0';
}

int qllc_lower_quant_kernel_name(const qllc_node *n, qllc_elem in, qllc_elem w, qllc_elem out, char *buf,
                                 size_t size) {
  int arity = 2;
  const char *stem = qllc_lower_q_stem(n, &arity);
  char fallback[64];
  if (!stem) {
    qllc_lower_op_stem(n->op, fallback, sizeof fallback);
    stem = fallback;
  }
  const char *ei = qllc_elem_name((qllc_elem_kind)in), *eo = qllc_elem_name((qllc_elem_kind)out);
  int len;
  if (arity == 3) {
    /* fused layers: the weight kind; two-input ops: the second input's kind (the same as the first for
       every integer kernel libjit has) */
    qllc_elem we = w == QLLC_ELEM_COUNT ? in : w;
    len = snprintf(buf, size, "qllc_k_%s_%s_%s_%s", stem, ei, qllc_elem_name((qllc_elem_kind)we), eo);
  } else {
    len = snprintf(buf, size, "qllc_k_%s_%s_%s", stem, ei, eo);
  }
  return len > 0 && (size_t)len < size ? 0 : -1;
}

int qllc_lower_has_quant_kernel(const qllc_node *n, qllc_elem in, qllc_elem w, qllc_elem out) {
  char name[128];
  return qllc_lower_quant_kernel_name(n, in, w, out, name, sizeof name) == 0 && qllc_lower_row(name) != NULL;
}
