/* libjit/bitcode/ops_rt.c: kernels for operands known only at run time and for index-map padding
 * (issue 15): Clip with bounds given as graph inputs, constant Pad with its value given as a graph input,
 * and Pad modes reflect and edge (pad_map, every element kind). */
#include "kernels_f32.h"
#include "qllc_math.h"

QLLC_KERNEL void qllc_k_clip_rt_f32_f32(float *QLLC_RESTRICT y, const float *QLLC_RESTRICT x, int64_t n,
                                        const float *lo_p, const float *hi_p, float lo, float hi) {
  if (lo_p) lo = *lo_p;
  if (hi_p) hi = *hi_p;
  for (int64_t i = 0; i < n; i++) y[i] = qm_min(qm_max(x[i], lo), hi);
}

QLLC_KERNEL void qllc_k_pad_rt_f32_f32(float *QLLC_RESTRICT y, const float *QLLC_RESTRICT x, int64_t rank,
                                       const int64_t *out_dims, const int64_t *in_dims, const int64_t *pads_begin,
                                       const float *value_p) {
  qllc_k_pad_f32_f32(y, x, rank, out_dims, in_dims, pads_begin, *value_p);
}

/* Walks all but the last axis with an index counter (rank <= 8); the last axis is one loop. */
#define PAD_MAP(T, t)                                                                                   \
  QLLC_KERNEL void qllc_k_pad_map_##t##_##t(T *QLLC_RESTRICT y, const T *QLLC_RESTRICT x, int64_t rank,    \
                                            const int64_t *out_dims, const int64_t *map) {              \
    const int64_t *m[8];                                                                                \
    int64_t idx[8] = {0}, outer = 1;                                                                    \
    for (int64_t d = 0, at = 0; d < rank; at += out_dims[d], d++) m[d] = map + at;                      \
    for (int64_t d = 0; d < rank - 1; d++) outer *= out_dims[d];                                        \
    const int64_t inner = out_dims[rank - 1], *ml = m[rank - 1];                                        \
    for (int64_t o = 0; o < outer; o++) {                                                               \
      int64_t base = 0;                                                                                 \
      for (int64_t d = 0; d < rank - 1; d++) base += m[d][idx[d]];                                      \
      T *yr = y + o * inner;                                                                            \
      for (int64_t i = 0; i < inner; i++) yr[i] = x[base + ml[i]];                                      \
      for (int64_t d = rank - 2; d >= 0; d--) {                                                         \
        if (++idx[d] < out_dims[d]) break;                                                              \
        idx[d] = 0;                                                                                     \
      }                                                                                                 \
    }                                                                                                   \
  }
PAD_MAP(float, f32)
PAD_MAP(int8_t, i8)
PAD_MAP(uint8_t, u8)
PAD_MAP(int16_t, i16)
PAD_MAP(int32_t, i32)
