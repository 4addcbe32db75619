/* src/quant/precmap.c: the precision map (a per-node choice of int8, 16x8 or int16: what --min-sqnr
 * finds and --precision-map replays; the search itself is src/driver/search.c).
 *
 * The map file (text, one line each):
 *   # comment
 *   qllc-precision-map 1
 *   graph_hash 0123456789abcdef
 *   node NAME int8|16x8|int16
 * The magic and graph_hash lines are required, each once; a node named twice, or not in the model, is an
 * error. Nodes not listed compute at the base precision (int8). Replaying the file quantizes exactly as the
 * search did, so the bundle's bytes are the same.
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <unistd.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "quant/quant.h"

void qllc_prec_map_free(qllc_prec_map *m) {
  if (!m) return;
  for (int i = 0; i < m->n; i++) free((char *)m->nodes[i]);
  free((void *)m->nodes);
  free((void *)m->prec);
  free(m);
}

qllc_prec_map *qllc_prec_map_new(int cap) {
  qllc_prec_map *m = calloc(1, sizeof *m);
  if (!m) return NULL;
  m->nodes = calloc((size_t)cap + 1, sizeof *m->nodes);
  m->prec = calloc((size_t)cap + 1, sizeof *m->prec);
  if (!m->nodes || !m->prec) {
    qllc_prec_map_free(m);
    return NULL;
  }
  return m;
}

int qllc_prec_map_add(qllc_prec_map *m, const char *node, qllc_nprec p) {
  size_t n = strlen(node) + 1;
  char *d = malloc(n);
  if (!d) return -1;
  memcpy(d, node, n);
  ((const char **)m->nodes)[m->n] = d;
  ((qllc_nprec *)m->prec)[m->n] = p;
  m->n++;
  return 0;
}

qllc_prec_map *qllc_prec_map_copy(const qllc_prec_map *src) {
  qllc_prec_map *m = qllc_prec_map_new(src->n);
  for (int i = 0; m && i < src->n; i++)
    if (qllc_prec_map_add(m, src->nodes[i], src->prec[i]) != 0) {
      qllc_prec_map_free(m);
      m = NULL;
    }
  return m;
}

const char *qllc_nprec_name(qllc_nprec p) {
  switch (p) {
  case QLLC_NP_INT8: return "int8";
  case QLLC_NP_16X8: return "16x8";
  case QLLC_NP_INT16: return "int16";
  default: return "base";
  }
}

qllc_status qllc_prec_map_write(const char *path, const qllc_prec_map *m, uint64_t graph_hash, const char *comment,
                                qllc_diag *diag) {
  qllc_outfile of;
  qllc_status st = qllc_outfile_open(&of, path, diag);
  if (st != QLLC_OK) return st;
  FILE *f = of.f;
  if (comment) {
    for (const char *c = comment; *c;) {
      const char *e = strchr(c, '\n');
      size_t len = e ? (size_t)(e - c) : strlen(c);
      fprintf(f, "# %.*s\n", (int)len, c);
      c += len + (e != NULL);
    }
  }
  fprintf(f, "qllc-precision-map 1\ngraph_hash %016llx\n", (unsigned long long)graph_hash);
  for (int i = 0; i < m->n; i++) fprintf(f, "node %s %s\n", m->nodes[i], qllc_nprec_name(m->prec[i]));
  return qllc_outfile_commit(&of, diag);
}

qllc_status qllc_prec_map_read(const char *path, uint64_t graph_hash, qllc_prec_map **out, qllc_diag *diag) {
  *out = NULL;
  uint8_t *text = NULL; /* read whole with the size bound, then by lines */
  size_t text_len = 0;
  qllc_status rst = qllc_read_file(path, "precision map", QLLC_MAX_TEXT_FILE_BYTES, &text, &text_len, diag);
  if (rst != QLLC_OK) return rst;
  FILE *f = fmemopen(text, text_len ? text_len : 1, "r"); /* an empty file reads as its terminating NUL */
  if (!f) {
    free(text);
    qllc_fail(diag, QLLC_ERR_NOMEM, NULL, "cannot read precision map '%s': %s", path, strerror(errno));
    qllc_diag_set_file(diag, path);
    return QLLC_ERR_NOMEM;
  }
  char line[4096];
  int lineno = 0, cap = 0, magic = 0, have_hash = 0;
  qllc_prec_map *m = qllc_prec_map_new(0);
  qllc_status st = m ? QLLC_OK : qllc_fail(diag, QLLC_ERR_NOMEM, NULL, "out of memory");
  while (st == QLLC_OK && fgets(line, sizeof line, f)) {
    lineno++;
    size_t len = strlen(line);
    if (len == sizeof line - 1 && line[len - 1] != '\n') {
      st = qllc_fail(diag, QLLC_ERR_PARSE, NULL, "%s:%d: line longer than %d bytes", path, lineno, (int)sizeof line - 2);
      break;
    }
    while (len && (line[len - 1] == '\n' || line[len - 1] == '\r')) line[--len] = 0;
    if (!len || line[0] == '#') continue;
    if (!magic) {
      if (strcmp(line, "qllc-precision-map 1") != 0)
        st = qllc_fail(diag, QLLC_ERR_PARSE, NULL, "%s:%d: not a precision map (expected 'qllc-precision-map 1')", path, lineno);
      magic = 1;
      continue;
    }
    if (!strncmp(line, "graph_hash", 10)) {
      const char *hex = line + 10;
      if (*hex++ != ' ' || strlen(hex) != 16 || strspn(hex, "0123456789abcdefABCDEF") != 16) {
        st = qllc_fail(diag, QLLC_ERR_PARSE, NULL, "%s:%d: expected 'graph_hash' and 16 hex digits", path, lineno);
        break;
      }
      if (have_hash++) {
        st = qllc_fail(diag, QLLC_ERR_PARSE, NULL, "%s:%d: a second 'graph_hash' line", path, lineno);
        break;
      }
      unsigned long long h = strtoull(hex, NULL, 16);
      if (h != graph_hash)
        st = qllc_fail(diag, QLLC_ERR_MISMATCH, NULL,
                       "%s: precision map was made for another model (graph hash %016llx in the map, %016llx for this model)",
                       path, h, (unsigned long long)graph_hash);
      continue;
    }
    char *sp = strrchr(line, ' ');
    if (strncmp(line, "node ", 5) != 0 || !sp || sp < line + 5) {
      st = qllc_fail(diag, QLLC_ERR_PARSE, NULL, "%s:%d: expected 'node NAME int8|16x8|int16'", path, lineno);
      break;
    }
    *sp = 0;
    qllc_nprec p = !strcmp(sp + 1, "int8") ? QLLC_NP_INT8 : !strcmp(sp + 1, "16x8") ? QLLC_NP_16X8
                   : !strcmp(sp + 1, "int16") ? QLLC_NP_INT16 : QLLC_NP_BASE;
    if (p == QLLC_NP_BASE) {
      st = qllc_fail(diag, QLLC_ERR_PARSE, NULL, "%s:%d: unknown precision '%s' (int8, 16x8, int16)", path, lineno, sp + 1);
      break;
    }
    for (int k = 0; k < m->n; k++)
      if (!strcmp(m->nodes[k], line + 5)) {
        st = qllc_fail(diag, QLLC_ERR_PARSE, NULL, "%s:%d: node '%s' is given twice", path, lineno, line + 5);
        break;
      }
    if (st != QLLC_OK) break;
    if (m->n == cap) {
      cap = cap ? 2 * cap : 16;
      const char **nn = realloc((void *)m->nodes, sizeof *nn * (size_t)cap);
      if (nn) m->nodes = nn;
      qllc_nprec *np = realloc((void *)m->prec, sizeof *np * (size_t)cap);
      if (np) m->prec = np;
      if (!nn || !np) st = qllc_fail(diag, QLLC_ERR_NOMEM, NULL, "out of memory");
    }
    if (st == QLLC_OK && qllc_prec_map_add(m, line + 5, p) != 0) st = qllc_fail(diag, QLLC_ERR_NOMEM, NULL, "out of memory");
  }
  fclose(f);
  free(text);
  if (st == QLLC_OK && !magic)
    st = qllc_fail(diag, QLLC_ERR_PARSE, NULL, "%s: empty precision map", path);
  else if (st == QLLC_OK && !have_hash) /* without it the map would be taken for any model */
    st = qllc_fail(diag, QLLC_ERR_PARSE, NULL, "%s: no 'graph_hash' line (the map names the model it was made for)", path);
  if (st != QLLC_OK) {
    qllc_diag_set_file(diag, path);
    qllc_prec_map_free(m);
    return st;
  }
  *out = m;
  return QLLC_OK;
}
