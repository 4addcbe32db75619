/* tests/qdq/qdq_test_util.h: what the qdq tests share. Include after <cmocka.h>. */
#ifndef QLLC_QDQ_TEST_UTIL_H
#define QLLC_QDQ_TEST_UTIL_H
#include <stdio.h>
#include <string.h>

#include "ir/ir.h"
#include "quant/quant.h"

/* A model loaded as the driver loads it (src/driver/model.c, qllc_drv_reload): import, the float pipeline, then the QDQ
 * recognition pass when the graph has Q/DQ nodes. Fails the test on any error. */
static __attribute__((unused)) qllc_graph *load_recognised(const char *path) {
  qllc_graph *g = NULL;
  qllc_diag d;
  memset(&d, 0, sizeof d);
  qllc_status st = qllc_onnx_load(path, &g, &d);
  if (st == QLLC_OK) st = qllc_graph_optimize(g, NULL, NULL, &d);
  if (st == QLLC_OK && qllc_graph_has_qdq(g)) st = qllc_pass_qdq(g, &d);
  if (st != QLLC_OK) fprintf(stderr, "%s: %s\n", path, d.message);
  assert_int_equal(st, QLLC_OK);
  return g;
}
#endif
