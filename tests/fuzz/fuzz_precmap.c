#define _GNU_SOURCE /* memmem */
/* tests/fuzz/fuzz_precmap.c: the precision map reader (qllc_prec_map_read: the bounded read, the magic
 * and graph_hash lines, node lines, the strictness of issue 25) on arbitrary bytes. The expected graph
 * hash is 0123456789abcdef (the seeds carry it). A map that is read must have a graph_hash line (else it
 * was accepted for any model), no node twice, only known precisions, and survive a write/read round
 * trip unchanged. */
#include <stdlib.h>
#include <string.h>

#include "fuzz_util.h"
#include "quant/quant.h"

#define FUZZ_HASH 0x0123456789abcdefull

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  const char *path = fuzz_write_file(data, size, ".map");
  if (!path) return 0;
  qllc_prec_map *m = NULL;
  qllc_diag d = {0};
  if (qllc_prec_map_read(path, FUZZ_HASH, &m, &d) != QLLC_OK) {
    if (m || !d.message[0]) abort(); /* an error leaves nothing and says why */
    return 0;
  }
  if (!memmem(data, size, "graph_hash", 10)) abort();
  for (int i = 0; i < m->n; i++) {
    if (m->prec[i] != QLLC_NP_INT8 && m->prec[i] != QLLC_NP_16X8 && m->prec[i] != QLLC_NP_INT16) abort();
    for (int k = 0; k < i; k++)
      if (!strcmp(m->nodes[i], m->nodes[k])) abort();
  }
  static char out[600];
  snprintf(out, sizeof out, "%s.out.map", path);
  if (qllc_prec_map_write(out, m, FUZZ_HASH, "round trip", &d) == QLLC_OK) {
    qllc_prec_map *q = NULL;
    if (qllc_prec_map_read(out, FUZZ_HASH, &q, &d) != QLLC_OK || q->n != m->n) abort();
    for (int i = 0; i < m->n; i++)
      if (strcmp(q->nodes[i], m->nodes[i]) || q->prec[i] != m->prec[i]) abort();
    qllc_prec_map_free(q);
    remove(out);
  }
  qllc_prec_map_free(m);
  return 0;
}
