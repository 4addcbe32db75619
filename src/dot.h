/* src/dot.h: the compiled graph as Graphviz (qllc info --dot; docs/graph.md). */
#ifndef QLLC_DOT_H
#define QLLC_DOT_H

#include <stdio.h>

#include "ir/ir.h"
#include "lower/lower.h"

/* Writes g (after the graph passes and quantization) as a Graphviz digraph. p, when not NULL, is g
 * lowered: each node's label then names the kernel it calls. Returns 0, or -1 on a write error. */
int qllc_graph_write_dot(const qllc_graph *g, const qllc_program *p, FILE *f);

#endif
