/* src/ir/custom_kernel_name.c: the name of the user kernel a custom node calls (docs/kernels.md,
 * "Custom ops"), qllc_k_custom_<D'>_<T'>_<in..>_<out..>. It lives with the IR, not in src/lower, because
 * two modules ask it: the lowering emits the call (src/lower/lower_custom.c) and the quantizer names the
 * quantized variant it looked for in its reasons (src/quant/quantize.c), and quant must not depend on
 * lower. */
#include "ir/ir.h"

static size_t put_sanitised(char *buf, size_t size, size_t len, const char *s) {
  for (; s && *s; s++) {
    char ch = *s;
    int ok = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9');
    if (len + 1 < size) buf[len] = ok ? ch : '_';
    len++;
  }
  if (size) buf[len < size ? len : size - 1] = '\0';
  return len;
}

static size_t put_str(char *buf, size_t size, size_t len, const char *s) {
  for (; *s; s++) {
    if (len + 1 < size) buf[len] = *s;
    len++;
  }
  if (size) buf[len < size ? len : size - 1] = '\0';
  return len;
}

int qllc_custom_kernel_name(const qllc_node *n, qllc_elem force, char *buf, size_t size) {
  size_t len = put_str(buf, size, 0, "qllc_k_custom_");
  len = put_sanitised(buf, size, len, n->domain ? n->domain : "");
  len = put_str(buf, size, len, "_");
  len = put_sanitised(buf, size, len, n->op_type ? n->op_type : "");
  for (int pass = 0; pass < 2; pass++) {
    int cnt = pass ? n->n_out : n->n_in;
    qllc_value *const *vs = pass ? n->out : n->in;
    for (int i = 0; i < cnt; i++) {
      if (!vs[i]) continue;
      qllc_elem e = force != QLLC_ELEM_COUNT && vs[i]->elem == QLLC_ELEM_F32 && !vs[i]->data ? force : vs[i]->elem;
      len = put_str(buf, size, len, "_");
      len = put_str(buf, size, len, qllc_elem_name((qllc_elem_kind)e));
    }
  }
  return len < size ? 0 : -1;
}
