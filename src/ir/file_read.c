/* src/ir/file_read.c: the one bounded reader of every file qllc takes as input (docs/limits.md).
 *
 * A model, a kernel file, a precision map, a profile, a tensor or a tuning cache is read whole into
 * memory, but never more than a limit per kind of file: the reader reads at most limit + 1 bytes, and
 * one byte over the limit is an error naming the file and the limit. A regular file larger than the
 * limit is refused from its size before anything is read; a character device or a FIFO (/dev/zero, a
 * pipe) is read with the same bound, so it ends with the error instead of filling memory.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "ir/ir.h"

static void human(uint64_t n, char *buf, size_t cap) {
  if (n >= ((uint64_t)1 << 30) && n % ((uint64_t)1 << 30) == 0)
    snprintf(buf, cap, " (%llu GiB)", (unsigned long long)(n >> 30));
  else if (n >= ((uint64_t)1 << 20) && n % ((uint64_t)1 << 20) == 0)
    snprintf(buf, cap, " (%llu MiB)", (unsigned long long)(n >> 20));
  else
    buf[0] = 0;
}

/* size: the file's size when known (a regular file), else -1 */
static qllc_status too_large(const char *path, const char *what, long long size, uint64_t limit, qllc_diag *diag) {
  char h[32];
  human(limit, h, sizeof h);
  qllc_status st =
      size >= 0 ? qllc_fail(diag, QLLC_ERR_PARSE, NULL, "%s: the %s is %lld bytes, over the limit of %llu bytes%s", path,
                            what, size, (unsigned long long)limit, h)
                : qllc_fail(diag, QLLC_ERR_PARSE, NULL, "%s: the %s is larger than the limit of %llu bytes%s", path,
                            what, (unsigned long long)limit, h);
  qllc_diag_set_file(diag, path);
  return st;
}

qllc_status qllc_read_file_ex(const char *path, const char *what, uint64_t limit, qllc_read_limit_fn refine,
                              void *ctx, uint8_t **out, size_t *len, qllc_diag *diag) {
  *out = NULL;
  *len = 0;
  if (limit > (uint64_t)SIZE_MAX / 2) limit = (uint64_t)SIZE_MAX / 2;
  FILE *f = fopen(path, "rb");
  if (!f) {
    qllc_status st = qllc_fail(diag, QLLC_ERR_IO, NULL, "%s: cannot open the %s: %s", path, what, strerror(errno));
    qllc_diag_set_file(diag, path);
    return st;
  }
  struct stat sb; /* a regular file over the limit is refused without reading it (refine only lowers it) */
  if (fstat(fileno(f), &sb) == 0 && S_ISREG(sb.st_mode) && (uint64_t)sb.st_size > limit) {
    fclose(f);
    return too_large(path, what, (long long)sb.st_size, limit, diag);
  }
  size_t cap = 1 << 16, n = 0;
  int refined = !refine;
  uint8_t *b = malloc(cap + 1);
  qllc_status st = QLLC_OK;
  if (!b) st = qllc_fail(diag, QLLC_ERR_NOMEM, NULL, "%s: out of memory reading the %s", path, what);
  while (st == QLLC_OK) {
    if (n == cap) {
      if (!refined) { /* the first 64 KiB tell the limit of this file (a tensor's header) */
        uint64_t l = refine(b, n, ctx, limit);
        refined = 1;
        if (l == QLLC_READ_STOP) break; /* the caller reports what is wrong with these bytes */
        limit = l < limit ? l : limit;
      }
      if (cap > limit) break; /* one byte over the limit has been read */
      size_t ncap = 2 * cap > limit ? (size_t)limit + 1 : 2 * cap;
      uint8_t *nb = realloc(b, ncap + 1);
      if (!nb) {
        st = qllc_fail(diag, QLLC_ERR_NOMEM, NULL, "%s: out of memory reading the %s", path, what);
        break;
      }
      b = nb, cap = ncap;
    }
    size_t k = fread(b + n, 1, cap - n, f);
    n += k;
    if (k == 0) {
      if (ferror(f))
        st = qllc_fail(diag, QLLC_ERR_IO, NULL, "%s: cannot read the %s: %s", path, what,
                       strerror(errno ? errno : EIO));
      break;
    }
  }
  fclose(f);
  if (st == QLLC_OK && !refined) refine(b, n, ctx, limit); /* the whole file is read: it only looks */
  if (st == QLLC_OK && n > limit) {
    free(b);
    return too_large(path, what, -1, limit, diag);
  }
  if (st != QLLC_OK) {
    qllc_diag_set_file(diag, path);
    free(b);
    return st;
  }
  b[n] = 0; /* text formats may be read as a string */
  *out = b, *len = n;
  return QLLC_OK;
}

qllc_status qllc_read_file(const char *path, const char *what, uint64_t limit, uint8_t **out, size_t *len,
                           qllc_diag *diag) {
  return qllc_read_file_ex(path, what, limit, NULL, NULL, out, len, diag);
}

/* 0 when the bytes head[0..n) start as protobuf fields would, -1 at the first field that no protobuf
 * message has: field number 0 or wire type 3, 4, 6 or 7 (groups, which ONNX does not use). A field that
 * runs past the end of the head ends the look. */
int qllc_proto_head_check(const uint8_t *head, size_t n) {
  size_t i = 0;
  while (i < n) {
    uint64_t tag = 0, v = 0;
    int shift = 0, more = 1;
    while (more && i < n && shift < 64) more = head[i] & 0x80, tag |= (uint64_t)(head[i++] & 0x7f) << shift, shift += 7;
    if (more) break;
    unsigned wt = (unsigned)(tag & 7);
    if ((tag >> 3) == 0 || (wt != 0 && wt != 1 && wt != 2 && wt != 5)) return -1;
    if (wt == 0 || wt == 2) {
      shift = 0, more = 1;
      while (more && i < n && shift < 64) more = head[i] & 0x80, v |= (uint64_t)(head[i++] & 0x7f) << shift, shift += 7;
      if (more) break;
      if (wt == 2) {
        if (v >= n - i) break;
        i += (size_t)v;
      }
    } else {
      i += wt == 1 ? 8 : 4;
    }
  }
  return 0;
}
