/* src/lower/memory_plan.c: liveness-based placement of activation buffers.
 *
 * Each ACT buffer lives over the closed interval [first_use, last_use] of instruction indices (set by
 * lowering from every instruction that references it through any alias). Two buffers may share bytes
 * only when their intervals are disjoint; intervals are inclusive, so a kernel's output (first_use = i)
 * never shares bytes with an input whose last use is the same instruction i.
 *
 * Placement is greedy: buffers by decreasing aligned size (ties: earlier first_use, then id, so the
 * plan is deterministic), each at the lowest QLLC_MEM_ALIGN-aligned offset where it overlaps no
 * already-placed buffer whose interval intersects its own. Largest-first keeps big tensors at low
 * offsets and lets small ones fill the gaps. O(n^2 log n), fine for the few thousand buffers of a
 * real model. act_size is the peak (highest end), act_sum the cost without reuse.
 *
 * The pass also lays out the CONST region (in buffer order, aligned) for the --weights file layout.
 * Buffers never referenced by an instruction (first_use < 0) get offset 0 and no space.
 *
 * Every size and offset is checked (qllc_add_size on int64): a buffer whose aligned size, or a region
 * (CONST, ACT, and the MUTABLE layout lowering made) whose end, would pass INT64_MAX is an error naming
 * the buffer, never a wrapped offset. With each tensor at most QLLC_MAX_TENSOR_BYTES this takes tens of
 * thousands of huge values live at once, but a hostile model can have them.
 */
#include "lower/lower.h"

#include <stdlib.h>

static uint64_t align_up(uint64_t x) { return (x + QLLC_MEM_ALIGN - 1) / QLLC_MEM_ALIGN * QLLC_MEM_ALIGN; }

/* *out = align_up(size); -1 when that passes INT64_MAX. */
static int aligned_size(uint64_t size, uint64_t *out) {
  int64_t s;
  if (size > (uint64_t)INT64_MAX || qllc_add_size((int64_t)size, QLLC_MEM_ALIGN - 1, &s)) return -1;
  *out = align_up(size);
  return 0;
}

/* *end = off + align_up(size), checked. */
static int end_of(uint64_t off, uint64_t size, uint64_t *end) {
  uint64_t a;
  int64_t e;
  if (off > (uint64_t)INT64_MAX || aligned_size(size, &a) || qllc_add_size((int64_t)off, (int64_t)a, &e)) return -1;
  *end = (uint64_t)e;
  return 0;
}

static const char *region_name(qllc_region r) {
  return r == QLLC_REGION_CONST ? "constant" : r == QLLC_REGION_MUTABLE ? "input/output" : "activation";
}

static qllc_status too_large(qllc_diag *diag, const qllc_buffer *b, uint64_t off) {
  const char *name = b->name && b->name[0] ? b->name : "(unnamed)";
  return qllc_fail(diag, QLLC_ERR_INVALID, NULL,
                   "value '%s': its %s buffer of %llu bytes at offset %llu makes the %s memory larger than 2^63 bytes",
                   name, region_name(b->region), (unsigned long long)b->size, (unsigned long long)off,
                   region_name(b->region));
}

static int by_size_desc(const void *pa, const void *pb) {
  const qllc_buffer *a = *(qllc_buffer *const *)pa, *b = *(qllc_buffer *const *)pb;
  uint64_t sa = align_up(a->size), sb = align_up(b->size);
  if (sa != sb) return sa > sb ? -1 : 1;
  if (a->first_use != b->first_use) return a->first_use < b->first_use ? -1 : 1;
  return a->id < b->id ? -1 : a->id > b->id;
}

static int by_offset(const void *pa, const void *pb) {
  const qllc_buffer *a = *(qllc_buffer *const *)pa, *b = *(qllc_buffer *const *)pb;
  if (a->offset != b->offset) return a->offset < b->offset ? -1 : 1;
  return 0;
}

static int live_overlap(const qllc_buffer *a, const qllc_buffer *b) {
  return a->first_use <= b->last_use && b->first_use <= a->last_use;
}

qllc_status qllc_pass_memory_plan(qllc_program *p, qllc_diag *diag) {
  uint64_t coff = 0, mend = 0;
  int n_act = 0;
  for (int i = 0; i < p->n_buffers; i++) {
    qllc_buffer *b = p->buffers[i];
    uint64_t end;
    if (b->region == QLLC_REGION_CONST) {
      b->offset = coff;
      if (end_of(coff, b->size, &end)) return too_large(diag, b, coff);
      coff = end;
    } else if (b->region == QLLC_REGION_ACT) {
      if (aligned_size(b->size, &end)) return too_large(diag, b, 0);
      n_act++;
    } else { /* MUTABLE: laid out by lowering; checked here (its running offset must not have wrapped) */
      if (b->offset < mend || end_of(b->offset, b->size, &end)) return too_large(diag, b, b->offset);
      mend = end;
    }
  }
  if (mend > p->mutable_size)
    return qllc_fail(diag, QLLC_ERR_INVALID, NULL, "the input/output memory (%llu bytes) is smaller than its buffers (%llu)",
                     (unsigned long long)p->mutable_size, (unsigned long long)mend);
  p->const_size = coff;

  qllc_buffer **act = malloc((size_t)(n_act + 1) * sizeof *act);
  qllc_buffer **placed = malloc((size_t)(n_act + 1) * sizeof *placed);
  qllc_buffer **live = malloc((size_t)(n_act + 1) * sizeof *live);
  if (!act || !placed || !live) {
    free(act), free(placed), free(live);
    return qllc_fail(diag, QLLC_ERR_NOMEM, NULL, "out of memory in the memory plan");
  }
  int k = 0;
  for (int i = 0; i < p->n_buffers; i++)
    if (p->buffers[i]->region == QLLC_REGION_ACT) act[k++] = p->buffers[i];
  qsort(act, (size_t)n_act, sizeof *act, by_size_desc);

  uint64_t peak = 0, sum = 0;
  int n_placed = 0;
  qllc_status st = QLLC_OK;
  for (int i = 0; i < n_act; i++) {
    qllc_buffer *b = act[i];
    uint64_t size = align_up(b->size); /* checked above */
    b->offset = 0;
    if (b->first_use < 0 || size == 0) continue;
    if (end_of(sum, size, &sum)) {
      sum = UINT64_MAX; /* only reported (what no reuse would cost); the peak below is what counts */
    }
    int n_live = 0;
    for (int j = 0; j < n_placed; j++)
      if (live_overlap(b, placed[j])) live[n_live++] = placed[j];
    qsort(live, (size_t)n_live, sizeof *live, by_offset);
    /* Lowest gap between live buffers (sorted by offset) that holds `size` bytes. */
    uint64_t off = 0, end = 0;
    for (int j = 0; j < n_live; j++) { /* placed buffers' ends were checked when they were placed */
      if (live[j]->offset >= off && live[j]->offset - off >= size) break;
      end = live[j]->offset + align_up(live[j]->size);
      if (end > off) off = end;
    }
    b->offset = off;
    if (end_of(off, size, &end)) {
      st = too_large(diag, b, off);
      break;
    }
    if (end > peak) peak = end;
    placed[n_placed++] = b;
  }
  p->act_size = peak;
  p->act_sum = sum;
  free(act), free(placed), free(live);
  return st;
}
