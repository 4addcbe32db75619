/* src/ir/diag.c: filling the caller's qllc_diag, and status names. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "ir/ir.h"

static void copy(char *dst, size_t size, const char *src) {
  if (!src) src = "";
  size_t n = strlen(src);
  if (n >= size) n = size - 1;
  memcpy(dst, src, n);
  dst[n] = 0;
}

qllc_status qllc_fail(qllc_diag *diag, qllc_status status, const char *node, const char *fmt, ...) {
  if (!diag) return status;
  diag->status = status;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(diag->message, sizeof diag->message, fmt, ap);
  va_end(ap);
  copy(diag->node, sizeof diag->node, node);
  return status;
}

void qllc_diag_set_file(qllc_diag *diag, const char *file) {
  if (!diag || !file || diag->file[0]) return;
  copy(diag->file, sizeof diag->file, file);
}

const char *qllc_status_name(qllc_status s) {
  switch (s) {
  case QLLC_OK: return "ok";
  case QLLC_ERR_IO: return "i/o error";
  case QLLC_ERR_PARSE: return "parse error";
  case QLLC_ERR_UNSUPPORTED: return "unsupported";
  case QLLC_ERR_INVALID: return "invalid";
  case QLLC_ERR_MISMATCH: return "mismatch";
  case QLLC_ERR_LLVM: return "LLVM error";
  case QLLC_ERR_NOMEM: return "out of memory";
  case QLLC_ERR_STRICT: return "strict";
  case QLLC_ERR_RUNTIME: return "runtime error";
  }
  return "unknown status";
}
