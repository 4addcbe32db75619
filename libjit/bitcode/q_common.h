/* libjit/bitcode/q_common.h: always-inline integer helpers shared by the quantized scalar kernels
 * (q_layers.c, q_ops.c) and the ISA variants under targets/. REQUANT is defined in kernels_q.h; these
 * are its two exact implementations and must give the bits of src/quant's qllc_requant_apply. */
#ifndef QLLC_Q_COMMON_H
#define QLLC_Q_COMMON_H
#include "kernels_q.h"

/* int32 accumulator (8-bit layers): |acc * m| < 2^62 and + 2^61 < 2^63, exact in int64. The shift of
   a negative value is arithmetic in clang and gcc (floor), so half rounds up. */
QLLC_INLINE int64_t qk_req32(int32_t acc, int32_t m, int32_t n) {
  int64_t p = (int64_t)acc * m;
  if (n > 0) p = (p + ((int64_t)1 << (n - 1))) >> n;
  return p; /* |p| <= 2^62: the caller clamps to the output range, which subsumes saturating to int32 */
}

/* int64 accumulator (int16 layers, products of two 16-bit values): 128-bit product, multiply and
   shift only (a 128-bit division would call a libgcc helper). */
QLLC_INLINE int64_t qk_req64(int64_t acc, int32_t m, int32_t n) {
  __int128 p = (__int128)acc * m;
  if (n > 0) p = (p + ((__int128)1 << (n - 1))) >> n;
  if (p > INT32_MAX) return INT32_MAX;
  if (p < INT32_MIN) return INT32_MIN;
  return (int64_t)p;
}

/* z_y + v clamped to [lo, hi] (lo and hi already inside the output type's range). */
QLLC_INLINE int32_t qk_out(int64_t v, int32_t z_y, int32_t lo, int32_t hi) {
  v += z_y;
  if (v < lo) v = lo;
  if (v > hi) v = hi;
  return (int32_t)v;
}

/* Row-update kernels (conv, matmul, pools) keep QK_CHUNK accumulators on the stack: a kernel may not
   allocate. For an output index o reading input o * s + off: the first o >= 0 inside the input, and
   one past the last o < limit with o * s + off < n (as the float conv.c / pool.c). */
#define QK_CHUNK 64
QLLC_INLINE int64_t qk_first_inside(int64_t off, int64_t s) { return off >= 0 ? 0 : (-off + s - 1) / s; }
QLLC_INLINE int64_t qk_end_inside(int64_t off, int64_t s, int64_t n, int64_t limit) {
  if (off >= n) return 0;
  int64_t e = (n - 1 - off) / s + 1;
  return e < limit ? e : limit;
}
/* One tap's row of a packed 8-bit conv activation panel (the ISA variants' implicit GEMM): d[j] for the
   output pixels p0 + j, j < np (flattened oh * OW + ow), is the tap's input byte xc[ih * W + ow * sw + off]
   ^ flip, with ih = oh * sh + ih0, or zu where that is outside the H x W plane xc (padding). The tap is
   (c, kh, kw): xc = the image group's channel c, ih0 = kh * dh - pad_top, off = kw * dw - pad_left. The
   pixels run through output rows in segments, so the stride-1 copy is a plain loop the compiler
   vectorizes. */
QLLC_INLINE void qk_tap_row_u8(uint8_t *d, const uint8_t *xc, int64_t H, int64_t W, int64_t OW, int64_t sh,
                               int64_t sw, int64_t ih0, int64_t off, int64_t p0, int64_t np, uint8_t zu,
                               uint8_t flip) {
  for (int64_t j = 0, p = p0; j < np;) {
    const int64_t oh = p / OW, ow = p % OW, seg = np - j < OW - ow ? np - j : OW - ow;
    const int64_t ih = oh * sh + ih0;
    uint8_t *dj = d + j;
    if (ih < 0 || ih >= H) {
      for (int64_t t = 0; t < seg; t++) dj[t] = zu;
    } else {
      const uint8_t *row = xc + ih * W + off;
      int64_t lo = qk_first_inside(off, sw) - ow, hi = qk_end_inside(off, sw, W, OW) - ow;
      lo = lo < 0 ? 0 : lo > seg ? seg : lo;
      hi = hi < lo ? lo : hi > seg ? seg : hi;
      int64_t t = 0;
      for (; t < lo; t++) dj[t] = zu;
      if (sw == 1)
        for (const uint8_t *src = row + ow; t < hi; t++) dj[t] = src[t] ^ flip;
      else
        for (; t < hi; t++) dj[t] = row[(ow + t) * sw] ^ flip;
      for (; t < seg; t++) dj[t] = zu;
    }
    j += seg, p += seg;
  }
}

/* Number of integers in [lo, hi) and [a, b) both. */
QLLC_INLINE int64_t qk_overlap(int64_t lo, int64_t hi, int64_t a, int64_t b) {
  int64_t l = lo > a ? lo : a, h = hi < b ? hi : b;
  return h > l ? h - l : 0;
}

#endif
