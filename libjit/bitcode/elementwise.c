/* libjit/bitcode/elementwise.c: Add, Sub, Mul, Div with numpy broadcasting, float.
 *
 * y is contiguous with shape dims[rank]; a and b are read with per-dimension element strides (0 on a
 * broadcast dimension). Algorithm: first merge adjacent dimensions that are contiguous for both
 * operands (so a plain same-shape op becomes one flat loop, and [N][C][H][W] + [1][C][1][1] becomes
 * [N*C][H*W] with strides {1, 0}), then walk the outer dimensions with an index counter and run the
 * innermost dimension as one loop. That loop has a fast form for each common stride pattern (both
 * contiguous, one a broadcast scalar), which after specialisation on constant strides is the only
 * one left, and a general strided form. */
#include "kernels_f32.h"

enum { OP_ADD, OP_SUB, OP_MUL, OP_DIV };

QLLC_INLINE float apply(int op, float u, float v) {
  switch (op) {
  case OP_ADD: return u + v;
  case OP_SUB: return u - v;
  case OP_MUL: return u * v;
  default: return u / v;
  }
}

QLLC_INLINE void row(int op, float *QLLC_RESTRICT y, const float *QLLC_RESTRICT a, const float *QLLC_RESTRICT b,
                     int64_t n, int64_t sa, int64_t sb) {
  if (sa == 1 && sb == 1) {
    for (int64_t i = 0; i < n; i++) y[i] = apply(op, a[i], b[i]);
  } else if (sa == 1 && sb == 0) {
    const float v = b[0];
    for (int64_t i = 0; i < n; i++) y[i] = apply(op, a[i], v);
  } else if (sa == 0 && sb == 1) {
    const float u = a[0];
    for (int64_t i = 0; i < n; i++) y[i] = apply(op, u, b[i]);
  } else {
    for (int64_t i = 0; i < n; i++) y[i] = apply(op, a[i * sa], b[i * sb]);
  }
}

QLLC_INLINE void binary(int op, float *QLLC_RESTRICT y, const float *QLLC_RESTRICT a,
                        const float *QLLC_RESTRICT b, int64_t rank, const int64_t *dims, const int64_t *a_strides,
                        const int64_t *b_strides) {
  int64_t d[8], sa[8], sb[8];
  int64_t r = 0;
  /* Merge dimension i into the previous one when both operands step through it contiguously
   * relative to it (stride[prev] == stride[i] * dims[i]); size-1 dimensions are dropped. */
  for (int64_t i = 0; i < rank; i++) {
    if (dims[i] == 1) continue;
    if (r > 0 && sa[r - 1] == a_strides[i] * dims[i] && sb[r - 1] == b_strides[i] * dims[i]) {
      d[r - 1] *= dims[i];
      sa[r - 1] = a_strides[i];
      sb[r - 1] = b_strides[i];
      continue;
    }
    d[r] = dims[i];
    sa[r] = a_strides[i];
    sb[r] = b_strides[i];
    r++;
  }
  if (r == 0) { /* every dimension is 1: a single element */
    y[0] = apply(op, a[0], b[0]);
    return;
  }
  const int64_t inner = d[r - 1];
  int64_t outer = 1;
  for (int64_t i = 0; i < r - 1; i++) outer *= d[i];
  int64_t idx[8] = {0};
  int64_t oa = 0, ob = 0;
  for (int64_t o = 0; o < outer; o++) {
    row(op, y + o * inner, a + oa, b + ob, inner, sa[r - 1], sb[r - 1]);
    /* advance the counter over the outer dimensions r-2 .. 0 */
    for (int64_t i = r - 2; i >= 0; i--) {
      oa += sa[i];
      ob += sb[i];
      if (++idx[i] < d[i]) break;
      oa -= sa[i] * d[i];
      ob -= sb[i] * d[i];
      idx[i] = 0;
    }
  }
}

#define BINARY_KERNEL(name, op)                                                                          \
  QLLC_KERNEL void qllc_k_##name##_f32_f32_f32(float *QLLC_RESTRICT y, const float *QLLC_RESTRICT a,       \
                                               const float *QLLC_RESTRICT b, int64_t rank,               \
                                               const int64_t *dims, const int64_t *a_strides,           \
                                               const int64_t *b_strides) {                              \
    binary(op, y, a, b, rank, dims, a_strides, b_strides);                                               \
  }
BINARY_KERNEL(add, OP_ADD)
BINARY_KERNEL(sub, OP_SUB)
BINARY_KERNEL(mul, OP_MUL)
BINARY_KERNEL(div, OP_DIV)
