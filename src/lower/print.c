/* src/lower/print.c: text form of the instruction IR (for --dump-after=lower and qllc info), the per-node kernel
 * report, and --strict's check of the kernel choice (qllc_program_check_portable).
 *
 *   program: 3 inputs, 1 outputs; mutable 4096 B, const 1024 B, activations 2048 B peak (4096 B summed)
 *   buffers:
 *     %0  mutable  off 0      size 3072  f32  x
 *     %4  act      off 0      size 1024  f32  conv1   live [0, 2]
 *     %5  act      off 1024   size 256   i8   h  i8[s=0.0039216 z=-128]<1 x 256>  live [1, 2]
 *   instrs:
 *     0: qllc_k_conv2d_f32_f32_f32(%4, %0, %1, null, 1, 3, ...)   ; conv1
 * A buffer argument with a byte offset prints as %4+256.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "lower/lower.h"

static const char *region_name(qllc_region r) {
  switch (r) {
  case QLLC_REGION_CONST: return "const";
  case QLLC_REGION_MUTABLE: return "mutable";
  case QLLC_REGION_ACT: return "act";
  }
  return "?";
}

void qllc_program_print(const qllc_program *p, FILE *f) {
  fprintf(f,
          "program: %d inputs, %d outputs; mutable %" PRIu64 " B, const %" PRIu64 " B, activations %" PRIu64
          " B peak (%" PRIu64 " B summed)\n",
          p->n_inputs, p->n_outputs, p->mutable_size, p->const_size, p->act_size, p->act_sum);
  fprintf(f, "buffers:\n");
  for (int i = 0; i < p->n_buffers; i++) {
    const qllc_buffer *b = p->buffers[i];
    fprintf(f, "  %%%-4d %-7s off %-9" PRIu64 " size %-9" PRIu64 " %-3s  %s", b->id, region_name(b->region),
            b->offset, b->size, qllc_elem_name((qllc_elem_kind)b->elem), b->name ? b->name : "");
    /* A quantized value's scale and zero point, as the graph printer and the bundle header show them. */
    if (b->value && b->value->elem == b->elem && b->elem != QLLC_ELEM_F32) {
      char t[256];
      fprintf(f, "  %s", qllc_type_str(b->value, t, sizeof t));
    }
    if (b->region == QLLC_REGION_ACT) fprintf(f, "  live [%d, %d]", b->first_use, b->last_use);
    if (b->nhwc) fputs("  nhwc", f);
    fputc('\n', f);
  }
  fprintf(f, "instrs:\n");
  for (int i = 0; i < p->n_instrs; i++) {
    const qllc_instr *in = &p->instrs[i];
    fprintf(f, "  %d: %s(", i, in->kernel);
    for (int k = 0; k < in->n_args; k++) {
      const qllc_arg *a = &in->args[k];
      if (k) fputs(", ", f);
      switch (a->kind) {
      case QLLC_ARG_BUF:
        fprintf(f, "%%%d", a->buf ? a->buf->id : -1);
        if (a->byte_offset) fprintf(f, "+%" PRIu64, a->byte_offset);
        break;
      case QLLC_ARG_NULL: fputs("null", f); break;
      case QLLC_ARG_INT: fprintf(f, "%" PRId64, a->i); break;
      case QLLC_ARG_FLOAT: fprintf(f, "%g", a->f); break;
      }
    }
    fputc(')', f);
    if (in->node) fprintf(f, "   ; %s", in->node->name);
    fputc('\n', f);
  }
}

/* The per-node kernel report: one line per fused layer, the kernel that runs it, the mode its packed
 * constants select when there is one (in parentheses) and, when it is not the fastest variant the
 * registry has, why:
 *   node conv1 (Conv): qllc_k_conv2d_i8_i8_i8__avx512vnni
 *   node c3 (Conv): qllc_k_conv2dc2_i16_i8_i16__avx512vnni  (int32 sums: 64 of 64 output channels)
 *   node dw (Conv): qllc_k_conv2d_i8_i8_i8  [1 output channel per group (depthwise): ...]
 *   node fc (Gemm): qllc_k_fc_i8_i8_i8__avxvnni  [cpu alderlake: __avx512vnni needs avx512f, ...] */
char *qllc_program_kernel_report(const qllc_program *p) {
  char *buf = NULL;
  size_t size = 0;
  FILE *f = open_memstream(&buf, &size);
  if (!f) return NULL;
  for (int i = 0; i < p->n_instrs; i++) {
    const qllc_instr *in = &p->instrs[i];
    if (!in->why && !strstr(in->kernel, "__")) continue;
    const qllc_node *n = in->node;
    fprintf(f, "node %s (%s): %s", n && n->name ? n->name : "?",
            n ? (n->op_type ? n->op_type : qllc_op_name(n->op)) : "?", in->kernel);
    if (in->mode) fprintf(f, "  (%s)", in->mode);
    if (in->why) fprintf(f, "  [%s]", in->why);
    fputc('\n', f);
  }
  if (fclose(f) != 0) {
    free(buf);
    return NULL;
  }
  return buf;
}

/* The layout report (layout.c):
 *   NHWC (channel-last) between kernels: 2 activations
 *     b1 (%12, 200704 B)
 *   conversions left inside kernels: 3
 *     node c0 (Conv): qllc_k_conv2dcl_u8_i8_u8__avx512vnni: input NCHW -> channel groups
 *     node c1 (Conv): qllc_k_conv2dcl_u8_i8_u8__avx512vnni: output -> NCHW
 * Every other activation, and every input and output of the bundle, is NCHW (the model's layout). */
char *qllc_program_layout_report(const qllc_program *p) {
  char *buf = NULL;
  size_t size = 0;
  FILE *f = open_memstream(&buf, &size);
  if (!f) return NULL;
  int nv = 0, nc = 0;
  for (int i = 0; i < p->n_buffers; i++) nv += p->buffers[i]->nhwc != 0;
  for (int i = 0; i < p->n_instrs; i++)
    nc += ((p->instrs[i].converts & QLLC_CONV_IN) != 0) + ((p->instrs[i].converts & QLLC_CONV_OUT) != 0);
  fprintf(f, "NHWC (channel-last) between kernels: %d activation%s\n", nv, nv == 1 ? "" : "s");
  for (int i = 0; i < p->n_buffers; i++)
    if (p->buffers[i]->nhwc)
      fprintf(f, "  %s (%%%d, %" PRIu64 " B)\n", p->buffers[i]->name ? p->buffers[i]->name : "?", p->buffers[i]->id,
              p->buffers[i]->size);
  fprintf(f, "conversions left inside kernels: %d\n", nc);
  for (int i = 0; i < p->n_instrs; i++) {
    const qllc_instr *in = &p->instrs[i];
    if (!in->converts) continue;
    const qllc_node *n = in->node;
    fprintf(f, "  node %s (%s): %s:", n && n->name ? n->name : "?",
            n ? (n->op_type ? n->op_type : qllc_op_name(n->op)) : "?", in->kernel);
    if (in->converts & QLLC_CONV_IN) fputs(" input NCHW -> channel groups", f);
    if (in->converts == (QLLC_CONV_IN | QLLC_CONV_OUT)) fputc(',', f);
    if (in->converts & QLLC_CONV_OUT) fputs(" output -> NCHW", f);
    fputc('\n', f);
  }
  fprintf(f, "every other activation, and every input and output, is NCHW (the model's layout)\n");
  if (fclose(f) != 0) {
    free(buf);
    return NULL;
  }
  return buf;
}

qllc_status qllc_program_check_portable(const qllc_program *p, qllc_diag *diag) {
  for (int i = 0; i < p->n_instrs; i++) {
    const qllc_instr *in = &p->instrs[i];
    if (!in->reference_for_cpu) continue;
    const char *nn = in->node ? in->node->name : "?";
    return qllc_fail(diag, QLLC_ERR_STRICT, nn, "node '%s' (%s) would run the portable kernel %s: %s (--strict)", nn,
                     in->node ? qllc_op_name(in->node->op) : "?", in->kernel, in->why ? in->why : "");
  }
  return QLLC_OK;
}
