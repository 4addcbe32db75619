/* src/ir/arena.c: a bump allocator for IR.
 *
 * Memory comes in chunks (at least 64 KiB, larger for big requests) chained in a list; everything is
 * freed at once by qllc_arena_free. Allocations are zeroed and 16-byte aligned, so constant payloads
 * can be read as any element kind.
 */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "ir/ir.h"

typedef struct chunk {
  struct chunk *next;
  size_t size; /* bytes usable after the header */
  size_t used;
  _Alignas(16) unsigned char mem[];
} chunk;

struct qllc_arena {
  chunk *head;
};

enum { CHUNK_MIN = 64 * 1024 };

qllc_arena *qllc_arena_new(void) { return calloc(1, sizeof(qllc_arena)); }

void qllc_arena_free(qllc_arena *a) {
  if (!a) return;
  chunk *c = a->head;
  while (c) {
    chunk *next = c->next;
    free(c);
    c = next;
  }
  free(a);
}

void *qllc_arena_alloc(qllc_arena *a, size_t size) {
  size = (size + 15) & ~(size_t)15;
  if (size == 0) size = 16;
  chunk *c = a->head;
  if (!c || c->size - c->used < size) {
    size_t want = size > CHUNK_MIN ? size : CHUNK_MIN;
    chunk *n = malloc(sizeof(chunk) + want);
    if (!n) return NULL;
    n->size = want;
    n->used = 0;
    if (c && size > CHUNK_MIN / 4) {
      /* a big block: chain it behind the current chunk so the current one keeps being filled */
      n->next = c->next;
      c->next = n;
    } else {
      n->next = c;
      a->head = n;
    }
    c = n;
  }
  void *p = c->mem + c->used;
  c->used += size;
  memset(p, 0, size);
  return p;
}

void *qllc_arena_memdup(qllc_arena *a, const void *p, size_t size) {
  void *q = qllc_arena_alloc(a, size);
  if (q && size) memcpy(q, p, size);
  return q;
}

char *qllc_arena_strdup(qllc_arena *a, const char *s) {
  if (!s) return NULL;
  return qllc_arena_memdup(a, s, strlen(s) + 1);
}

char *qllc_arena_printf(qllc_arena *a, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(NULL, 0, fmt, ap);
  va_end(ap);
  if (n < 0) return NULL;
  char *s = qllc_arena_alloc(a, (size_t)n + 1);
  if (!s) return NULL;
  va_start(ap, fmt);
  vsnprintf(s, (size_t)n + 1, fmt, ap);
  va_end(ap);
  return s;
}
