/* src/lower/kernel_name.c: the kernel a quantized node will call, named before lowering.
 *
 * The quantizer asks the target, node by node, whether a kernel exists for the element kinds it is
 * about to choose (qllc_quant_opts.supports). That question needs the name lowering will emit, so the
 * answer lives here, in the module that names kernels, and not in the facade. The stems are the ones
 * lower_q.c emits; a test lowers a quantized graph of every op family and checks each node's
 * instructions against this function, so the two cannot drift apart unnoticed.
 */
#include <stdio.h>

#include "lower/lower.h"

/* The stem lower_q.c uses for a quantized node of this op (its emitting functions spell the same
 * names: tests/lower/lower_q_test.c checks every quantized node of a lowered graph against this). */
static const char *kernel_stem(const qllc_node *n, int *arity) {
  *arity = 2; /* <stem>_<in>_<out> */
  switch (n->op) {
  case QLLC_OP_CONV: *arity = 3; return "conv2d";
  case QLLC_OP_GEMM:
  case QLLC_OP_FC: *arity = 3; return "fc";
  case QLLC_OP_MATMUL:
    *arity = 3;
    return n->n_in > 1 && n->in[1] && qllc_value_is_const(n->in[1]) ? "fc" : "matmul";
  case QLLC_OP_CHANNEL_AFFINE: *arity = 3; return "channel_affine";
  case QLLC_OP_ADD: *arity = 3; return "add";
  case QLLC_OP_SUB: *arity = 3; return "sub";
  case QLLC_OP_MUL: *arity = 3; return "mul";
  case QLLC_OP_DIV: *arity = 3; return "div";
  case QLLC_OP_RELU:
  case QLLC_OP_CLIP: return "clamp";
  case QLLC_OP_SIGMOID:
  case QLLC_OP_TANH:
  case QLLC_OP_LEAKY_RELU: return "lut";
  case QLLC_OP_MAXPOOL: return "maxpool2d";
  case QLLC_OP_AVGPOOL: return "avgpool2d";
  case QLLC_OP_GLOBAL_AVGPOOL: return "global_avgpool";
  case QLLC_OP_SOFTMAX: return "softmax";
  case QLLC_OP_CONCAT: return "requantize";
  case QLLC_OP_TRANSPOSE: return "transpose";
  case QLLC_OP_PAD: return "pad";
  case QLLC_OP_RESHAPE:
  case QLLC_OP_FLATTEN:
  case QLLC_OP_SQUEEZE:
  case QLLC_OP_UNSQUEEZE:
  case QLLC_OP_IDENTITY:
  case QLLC_OP_DROPOUT: return "copy";
  case QLLC_OP_QUANTIZE: return "quantize";
  case QLLC_OP_DEQUANTIZE: return "dequantize";
  default: return NULL;
  }
}

int qllc_lower_quant_kernel_name(const qllc_node *n, qllc_elem in, qllc_elem w, qllc_elem out, char *buf,
                                 size_t size) {
  int arity = 2;
  const char *stem = kernel_stem(n, &arity);
  char fallback[64];
  if (!stem) {
    /* the lowering's grammar: "LeakyRelu" -> "leaky_relu", "qllc.Foo" -> "foo" */
    const char *on = qllc_op_name(n->op);
    size_t k = 0;
    for (const char *c = on; *c && k + 2 < sizeof fallback; c++) {
      if (*c == '.') {
        k = 0;
        continue;
      }
      if (*c >= 'A' && *c <= 'Z' && k > 0 && c[-1] >= 'a' && c[-1] <= 'z') fallback[k++] = '_';
      fallback[k++] = (char)(*c >= 'A' && *c <= 'Z' ? *c - 'A' + 'a' : *c);
    }
    fallback[k] = '\0';
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
