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
 */
#include "lower/lower.h"

#include <stdlib.h>

static uint64_t align_up(uint64_t x) { return (x + QLLC_MEM_ALIGN - 1) / QLLC_MEM_ALIGN * QLLC_MEM_ALIGN; }

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
  uint64_t coff = 0;
  int n_act = 0;
  for (int i = 0; i < p->n_buffers; i++) {
    qllc_buffer *b = p->buffers[i];
    if (b->region == QLLC_REGION_CONST) {
      b->offset = coff;
      coff += align_up(b->size);
    } else if (b->region == QLLC_REGION_ACT) {
      n_act++;
    }
  }
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
  for (int i = 0; i < n_act; i++) {
    qllc_buffer *b = act[i];
    uint64_t size = align_up(b->size);
    b->offset = 0;
    if (b->first_use < 0 || size == 0) continue;
    sum += size;
    int n_live = 0;
    for (int j = 0; j < n_placed; j++)
      if (live_overlap(b, placed[j])) live[n_live++] = placed[j];
    qsort(live, (size_t)n_live, sizeof *live, by_offset);
    /* Lowest gap between live buffers (sorted by offset) that holds `size` bytes. */
    uint64_t off = 0;
    for (int j = 0; j < n_live; j++) {
      if (live[j]->offset >= off + size) break;
      uint64_t end = live[j]->offset + align_up(live[j]->size);
      if (end > off) off = end;
    }
    b->offset = off;
    if (off + size > peak) peak = off + size;
    placed[n_placed++] = b;
  }
  p->act_size = peak;
  p->act_sum = sum;
  free(act), free(placed), free(live);
  return QLLC_OK;
}
