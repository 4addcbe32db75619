/* src/driver/dot.c: the compiled graph as Graphviz (`qllc info --dot FILE`, docs/graph.md).
 *
 * One box per node, filled by its precision (PREC_COLOR below: float, int8, int16, 16x8, and the
 * quantize/dequantize conversions at the float boundary); one edge per value from its producer (or
 * from a graph input) to each consumer, labelled with the value's type and, when quantized, its scale
 * and zero point. A node with a fused activation (Conv + Relu, ...) is drawn as a cluster holding the
 * layer and the activation it absorbed. Constants (weights, biases) are not drawn: the node's label
 * says how its weights are stored. Graph inputs and outputs are ellipses.
 */
#include <string.h>

#include "driver/driver_internal.h"

enum { PREC_FLOAT, PREC_INT8, PREC_INT16, PREC_16X8, PREC_CONVERT, PREC_COUNT };
static const char *const PREC_NAME[PREC_COUNT] = {"float", "int8", "int16", "16x8", "quantize/dequantize"};
static const char *const PREC_COLOR[PREC_COUNT] = {"#9ecae1", "#a1d99b", "#fdae6b", "#bcbddc", "#d9d9d9"};

static int node_prec(const qllc_node *n) {
  if (n->op == QLLC_OP_QUANTIZE || n->op == QLLC_OP_DEQUANTIZE) return PREC_CONVERT;
  const qllc_qnode *q = n->quant;
  qllc_elem in = QLLC_ELEM_F32, w = QLLC_ELEM_F32;
  if (q && !n->keep_float) {
    in = q->in_elem;
    w = q->w_elem;
  } else if (!n->keep_float) { /* integer without a record (views, pre-quantized models): the output's kind */
    for (int i = 0; i < n->n_out; i++)
      if (n->out[i] && n->out[i]->elem != QLLC_ELEM_F32) in = n->out[i]->elem;
  }
  if (in == QLLC_ELEM_I16) return w == QLLC_ELEM_I8 ? PREC_16X8 : PREC_INT16;
  if (in == QLLC_ELEM_I8 || in == QLLC_ELEM_U8) return PREC_INT8;
  return PREC_FLOAT;
}

/* Writes s as the inside of a double-quoted DOT string. */
static void esc(FILE *f, const char *s) {
  for (; s && *s; s++) {
    if (*s == '"' || *s == '\\') fputc('\\', f);
    if (*s == '\n') {
      fputs("\\n", f);
      continue;
    }
    fputc(*s, f);
  }
}

static void edge_label(FILE *f, const qllc_value *v) {
  char t[256];
  qllc_type_str(v, t, sizeof t);
  esc(f, t); /* the type carries the scale and zero point of a quantized value: "i8[s=0.0259 z=-128]<1 x 8>" */
}

static const char *kernel_of(const qllc_program *p, const qllc_node *n) {
  for (int i = 0; p && i < p->n_instrs; i++)
    if (p->instrs[i].node == n && p->instrs[i].kernel) return p->instrs[i].kernel;
  return NULL;
}

static int is_const(const qllc_value *v) { return v && v->data && !v->producer && !v->is_input; }

int qllc_graph_write_dot(const qllc_graph *g, const qllc_program *p, FILE *f) {
  fprintf(f, "digraph qllc {\n  rankdir=TB;\n  label=\"");
  const char *base = g->path ? strrchr(g->path, '/') : NULL;
  esc(f, base ? base + 1 : g->path ? g->path : "model");
  fprintf(f, "\";\n  labelloc=t;\n  node [fontname=\"Helvetica\", fontsize=10];\n"
             "  edge [fontname=\"Helvetica\", fontsize=8];\n");
  /* the legend: one swatch per precision */
  fprintf(f, "  subgraph cluster_legend {\n    label=\"precision\";\n    fontsize=10;\n");
  for (int k = 0; k < PREC_COUNT; k++)
    fprintf(f, "    legend_%d [shape=box, style=filled, fillcolor=\"%s\", label=\"%s\"];\n", k, PREC_COLOR[k],
            PREC_NAME[k]);
  for (int k = 0; k + 1 < PREC_COUNT; k++) fprintf(f, "    legend_%d -> legend_%d [style=invis];\n", k, k + 1);
  fprintf(f, "  }\n");

  for (int i = 0; i < g->n_inputs; i++) {
    fprintf(f, "  in_%d [shape=ellipse, label=\"input ", g->inputs[i]->id);
    esc(f, g->inputs[i]->name);
    fprintf(f, "\"];\n");
  }
  for (int i = 0; i < g->n_outputs; i++) {
    fprintf(f, "  out_%d [shape=ellipse, label=\"output ", g->outputs[i]->id);
    esc(f, g->outputs[i]->name);
    fprintf(f, "\"];\n");
  }
  for (int i = 0; i < g->n_nodes; i++) {
    const qllc_node *n = g->nodes[i];
    if (n->dead) continue;
    int prec = node_prec(n);
    const char *type = n->op_type && n->op != QLLC_OP_FC ? n->op_type : qllc_op_name(n->op);
    if (strncmp(type, "qllc.", 5) == 0) type += 5; /* internal ops: "FullyConnected" */
    int fused = n->act != QLLC_ACT_NONE;
    const char *pad = fused ? "    " : "  ";
    if (fused) {
      fprintf(f, "  subgraph cluster_fused_%d {\n    label=\"fused: %s + %s\";\n    style=dashed;\n", i, type,
              n->act == QLLC_ACT_RELU ? "Relu" : "Clip");
    }
    fprintf(f, "%sn%d [shape=box, style=filled, fillcolor=\"%s\", label=\"", pad, i, PREC_COLOR[prec]);
    esc(f, n->name);
    fputs("\\n", f);
    esc(f, type);
    fprintf(f, " (%s)", PREC_NAME[prec]);
    const qllc_qnode *q = n->quant;
    if (q && q->kind == QLLC_QK_FUSED && !n->keep_float)
      fprintf(f, "\\nw %s, acc %s", qllc_elem_name((qllc_elem_kind)q->w_elem), qllc_elem_name((qllc_elem_kind)q->acc_elem));
    if (n->keep_float && n->float_reason) {
      fputs("\\nfloat: ", f);
      esc(f, n->float_reason);
    }
    const char *k = kernel_of(p, n);
    if (k) {
      fputs("\\n", f);
      esc(f, k);
    }
    fprintf(f, "\"];\n");
    if (fused) {
      fprintf(f, "    n%d_act [shape=box, style=\"filled,rounded\", fillcolor=\"%s\", label=\"%s\"];\n", i,
              PREC_COLOR[prec], n->act == QLLC_ACT_RELU ? "Relu" : "Clip");
      fprintf(f, "    n%d -> n%d_act [style=dotted, arrowhead=none];\n    { rank=same; n%d; n%d_act; }\n  }\n", i, i,
              i, i);
    }
  }
  /* edges: producer (or graph input) -> consumer, and producer -> graph output */
  for (int i = 0; i < g->n_nodes; i++) {
    const qllc_node *n = g->nodes[i];
    if (n->dead) continue;
    for (int a = 0; a < n->n_in; a++) {
      const qllc_value *v = n->in[a];
      if (!v || is_const(v)) continue;
      if (v->producer) {
        int src = -1;
        for (int j = 0; j < g->n_nodes; j++)
          if (g->nodes[j] == v->producer) src = j;
        if (src < 0) continue;
        fprintf(f, "  n%d -> n%d [label=\"", src, i);
      } else if (v->is_input) {
        fprintf(f, "  in_%d -> n%d [label=\"", v->id, i);
      } else {
        continue;
      }
      edge_label(f, v);
      fprintf(f, "\"];\n");
    }
  }
  for (int i = 0; i < g->n_outputs; i++) {
    const qllc_value *v = g->outputs[i];
    int src = -1;
    for (int j = 0; v->producer && j < g->n_nodes; j++)
      if (g->nodes[j] == v->producer) src = j;
    if (src >= 0)
      fprintf(f, "  n%d -> out_%d [label=\"", src, v->id);
    else if (v->is_input)
      fprintf(f, "  in_%d -> out_%d [label=\"", v->id, v->id);
    else
      continue;
    edge_label(f, v);
    fprintf(f, "\"];\n");
  }
  fprintf(f, "}\n");
  return ferror(f) ? -1 : 0;
}
