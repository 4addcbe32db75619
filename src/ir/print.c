/* src/ir/print.c: the text form of types and graphs.
 *
 * Types:  f32<1 x 3 x 8 x 8>, f32<> (scalar), i8[s=0.0039216 z=-128]<1 x 8 x 8 x 16> (per tensor),
 *         i8[s=per-channel(16) axis=0 z=0]<16 x 3 x 3 x 3> (per channel; z=per-channel when the zero
 *         points differ from 0). Scales are printed with 5 significant digits, as in the bundle header.
 * Graph:  one line per input, constant, node and output:
 *           input %x : f32<1 x 3 x 8 x 8>
 *           const %W : f32<8 x 3 x 3 x 3>
 *           %y = Conv(%x, %W, %b) {kernel_shape=[3, 3], pads=[1, 1, 1, 1]} act=relu : f32<...>  # conv1
 *           output %y
 */
#include <math.h>
#include <stdarg.h>
#include <string.h>

#include "ir/ir.h"

typedef struct sbuf {
  char *p;
  size_t size, len;
} sbuf;

static void put(sbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void put(sbuf *b, const char *fmt, ...) {
  if (b->len >= b->size) return;
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(b->p + b->len, b->size - b->len, fmt, ap);
  va_end(ap);
  if (n > 0) b->len += (size_t)n;
  if (b->len >= b->size) b->len = b->size; /* truncated: later puts stop */
}

char *qllc_type_str(const qllc_value *v, char *buf, size_t size) {
  if (!buf || size == 0) return buf;
  buf[0] = 0;
  sbuf b = {buf, size, 0};
  put(&b, "%s", qllc_elem_name((qllc_elem_kind)v->elem));
  int quantized = v->elem == QLLC_ELEM_I8 || v->elem == QLLC_ELEM_U8 || v->elem == QLLC_ELEM_I16 ||
                  (v->elem == QLLC_ELEM_I32 && (v->q_axis >= 0 || v->scale != 1.0f || v->zero_point));
  if (quantized && v->q_axis >= 0) {
    int all_zero = 1;
    for (int64_t i = 0; v->q_zero_points && i < v->q_count; i++)
      if (v->q_zero_points[i]) all_zero = 0;
    put(&b, "[s=per-channel(%lld) axis=%d z=%s]", (long long)v->q_count, v->q_axis,
        all_zero ? "0" : "per-channel");
  } else if (quantized && v->scale != 0.0f) {
    put(&b, "[s=%.5g z=%d]", (double)v->scale, (int)v->zero_point);
  }
  put(&b, "<");
  for (int i = 0; i < v->rank; i++) put(&b, i ? " x %lld" : "%lld", (long long)v->dims[i]);
  put(&b, ">");
  return buf;
}

static void print_attr(FILE *f, const qllc_attr *a) {
  fprintf(f, "%s=", a->name);
  switch (a->kind) {
  case QLLC_ATTR_INT: fprintf(f, "%lld", (long long)a->i); break;
  case QLLC_ATTR_FLOAT: fprintf(f, "%g", (double)a->f); break;
  case QLLC_ATTR_STRING: fprintf(f, "\"%s\"", a->s ? a->s : ""); break;
  case QLLC_ATTR_INTS:
    fputc('[', f);
    for (int i = 0; i < a->n; i++) fprintf(f, i ? ", %lld" : "%lld", (long long)a->ints[i]);
    fputc(']', f);
    break;
  case QLLC_ATTR_FLOATS:
    fputc('[', f);
    for (int i = 0; i < a->n; i++) fprintf(f, i ? ", %g" : "%g", (double)a->floats[i]);
    fputc(']', f);
    break;
  case QLLC_ATTR_TENSOR: {
    char t[256];
    fprintf(f, "tensor %s", a->t ? qllc_type_str(a->t, t, sizeof t) : "?");
    break;
  }
  }
}

void qllc_graph_print(const qllc_graph *g, FILE *f) {
  char t[256];
  fprintf(f, "graph %s (opset %lld)\n", g->graph_name && g->graph_name[0] ? g->graph_name : "\"\"",
          (long long)g->opset);
  for (int i = 0; i < g->n_inputs; i++)
    fprintf(f, "  input %%%s : %s\n", g->inputs[i]->name, qllc_type_str(g->inputs[i], t, sizeof t));
  for (int i = 0; i < g->n_values; i++)
    if (g->values[i]->data)
      fprintf(f, "  const %%%s : %s\n", g->values[i]->name, qllc_type_str(g->values[i], t, sizeof t));
  for (int i = 0; i < g->n_nodes; i++) {
    const qllc_node *n = g->nodes[i];
    if (n->dead) continue;
    fputs("  ", f);
    for (int k = 0; k < n->n_out; k++) fprintf(f, "%s%%%s", k ? ", " : "", n->out[k] ? n->out[k]->name : "_");
    fprintf(f, " = %s%s%s(", n->domain && n->domain[0] ? n->domain : "", n->domain && n->domain[0] ? "." : "",
            n->op_type ? n->op_type : qllc_op_name(n->op));
    for (int k = 0; k < n->n_in; k++) fprintf(f, "%s%%%s", k ? ", " : "", n->in[k] ? n->in[k]->name : "_");
    fputc(')', f);
    if (n->n_attr) {
      fputs(" {", f);
      for (int k = 0; k < n->n_attr; k++) {
        if (k) fputs(", ", f);
        print_attr(f, &n->attrs[k]);
      }
      fputc('}', f);
    }
    if (n->act == QLLC_ACT_RELU) fputs(" act=relu", f);
    else if (n->act == QLLC_ACT_CLIP) fprintf(f, " act=clip(%g, %g)", (double)n->act_lo, (double)n->act_hi);
    if (n->keep_float) fputs(" float", f);
    fputs(" :", f);
    for (int k = 0; k < n->n_out; k++)
      fprintf(f, "%s %s", k ? "," : "", n->out[k] ? qllc_type_str(n->out[k], t, sizeof t) : "_");
    fprintf(f, "  # %s\n", n->name);
  }
  for (int i = 0; i < g->n_outputs; i++) fprintf(f, "  output %%%s\n", g->outputs[i]->name);
}
