/* libjit/bitcode/q_ops.c: scalar reference kernels of the quantized non-layer ops: elementwise with
 * rescale, requantize (concat), clamp, pools, lookup tables, softmax, and quantize/dequantize at the
 * model's boundary. Numerics as written in kernels_q.h. */
#include "q_common.h"

/* Elementwise walk, as the float elementwise.c: adjacent dimensions that both operands step through
   contiguously are merged (size-1 dimensions dropped), the outer dimensions are walked with an index
   counter, and the innermost one runs as one loop with a fast form for the common stride patterns
   (both contiguous, a or b a broadcast scalar) which, after specialisation on constant strides, is
   the only one left and vectorizes. Returns the merged rank (0: a single element). */
QLLC_INLINE int64_t qk_merge(int64_t rank, const int64_t *dims, const int64_t *as, const int64_t *bs, int64_t *d,
                             int64_t *sa, int64_t *sb) {
  int64_t r = 0;
  for (int64_t i = 0; i < rank; i++) {
    if (dims[i] == 1) continue;
    if (r > 0 && sa[r - 1] == as[i] * dims[i] && sb[r - 1] == bs[i] * dims[i]) {
      d[r - 1] *= dims[i], sa[r - 1] = as[i], sb[r - 1] = bs[i];
      continue;
    }
    d[r] = dims[i], sa[r] = as[i], sb[r] = bs[i];
    r++;
  }
  return r;
}

/* EL(u, v) computes y from the int32 values u = a[..], v = b[..]. */
#define BINARY_WALK(T, EL)                                                                                       \
  int64_t d[8], sa[8], sb[8];                                                                                    \
  int64_t r = qk_merge(rank, dims, a_strides, b_strides, d, sa, sb);                                             \
  if (r == 0) d[0] = 1, sa[0] = sb[0] = 0, r = 1;                                                                \
  const int64_t len = d[r - 1], ia = sa[r - 1], ib = sb[r - 1];                                                  \
  int64_t outer = 1, idx[8] = {0, 0, 0, 0, 0, 0, 0, 0}, ao = 0, bo = 0;                                          \
  for (int64_t k = 0; k < r - 1; k++) outer *= d[k];                                                             \
  for (int64_t o = 0; o < outer; o++) {                                                                          \
    T *yr = y + o * len;                                                                                         \
    const T *ar = a + ao, *br = b + bo;                                                                          \
    if (ia == 1 && ib == 1) {                                                                                    \
      for (int64_t i = 0; i < len; i++) yr[i] = (T)EL((int32_t)ar[i], (int32_t)br[i]);                           \
    } else if (ia == 1 && ib == 0) {                                                                             \
      const int32_t v = br[0];                                                                                   \
      for (int64_t i = 0; i < len; i++) yr[i] = (T)EL((int32_t)ar[i], v);                                        \
    } else if (ia == 0 && ib == 1) {                                                                             \
      const int32_t u = ar[0];                                                                                   \
      for (int64_t i = 0; i < len; i++) yr[i] = (T)EL(u, (int32_t)br[i]);                                        \
    } else {                                                                                                     \
      for (int64_t i = 0; i < len; i++) yr[i] = (T)EL((int32_t)ar[i * ia], (int32_t)br[i * ib]);                 \
    }                                                                                                            \
    for (int64_t k = r - 2; k >= 0; k--) {                                                                       \
      idx[k]++, ao += sa[k], bo += sb[k];                                                                        \
      if (idx[k] < d[k]) break;                                                                                  \
      ao -= sa[k] * d[k], bo -= sb[k] * d[k], idx[k] = 0;                                                        \
    }                                                                                                            \
  }

/* add/sub: one rounding of the two-term sum with the shared shift n (terms < 2^47: int64 exact); sub is
   add with sign -1 (the product of b negated). */
#define ADDSUB_EL(u, v)                                                                                          \
  qk_out(((int64_t)((u) - z_a) * m_a + sign * ((int64_t)((v) - z_b) * m_b) + half) >> n, z_y, act_lo, act_hi)
/* mul: the product needs 32 bits for int16, so its REQUANT needs the 128-bit form. */
#define MUL_EL(u, v) qk_out(qk_req64((int64_t)((u) - z_a) * (int64_t)((v) - z_b), m, n), z_y, act_lo, act_hi)

/* The same add/sub in int32 for 8-bit operands: twice the lanes of the int64 form per vector register,
   the same bits. Let mb = sign * m_b, so that S = (u - z_a) m_a + (v - z_b) mb, and split each multiplier
   m = 2^16 mh + ml with ml in [-2^15, 2^15) (its low 16 bits, signed) and mh = (m - ml) / 2^16 in
   [-2^15, 2^15] (mb's halves are m_b's negated: m_b = -2^31 needs no int32 -m_b). Then S = 2^16 A0 + B0,
     A0 = (u - z_a) mh_a + (v - z_b) mh_b = u mh_a + v mh_b - (z_a mh_a + z_b mh_b),
     B0 = (u - z_a) ml_a + (v - z_b) ml_b = u ml_a + v ml_b - (z_a ml_a + z_b ml_b),
   and with u, v and the zero points in the type's range (|u - z_a|, |v - z_b| <= 255, every product below
   2^23), |A0|, |B0| <= 2 * 255 * 2^15 < 2^24. The reference is floor((S + 2^(n-1)) / 2^n). For n >= 16
   let s = n - 16; as floor(floor(x / p) / q) = floor(x / (p q)) for positive integers p, q, dividing by
   2^16 first gives floor((A0 + 2^(s-1) + floor(B0 / 2^16)) / 2^s) for s >= 1 (2^(n-1) = 2^16 2^(s-1)),
   and A0 + floor((B0 + 2^15) / 2^16) for s = 0 (2^(n-1) = 2^15). Both are
     (A + (B >> 16)) >> s,  A = A0 + hh,  B = B0 + hl,  hh = 2^(s-1), hl = 0 (s >= 1); hh = 0, hl = 2^15 (s = 0)
   with the constant parts of A and B folded into ka and kb. In int32: |B| < 2^24 + 2^15, so
   |B >> 16| <= 2^8; with hh <= 2^30 (s <= 31), X = A + (B >> 16) is inside (-2^25, 2^30 + 2^25). The
   output adds z_y: inside the shift as z_y 2^s when |z_y| 2^s <= 2^29 ((X + z_y 2^s) >> s = (X >> s) + z_y,
   and X + z_y 2^s stays inside int32), else after it (|X >> s| < 2^30, |z_y| < 2^30). n > 47 runs with
   s = 31: then |S| <= 2 * 255 * 2^31 < 2^40 puts S + 2^(n-1) inside (0, 2^n), so the reference is 0, and
   X inside (2^30 - 2^25, 2^30 + 2^25) gives 0 too (z_y is then added after the shift). qk_sum32_make says
   whether the conditions hold (else the int64 form runs). The signed low half keeps the factors inside
   int16 (but mh = 2^15 when m >= 2^31 - 2^15, and a sub's -ml = 2^15), so that x86_64 codegen multiplies
   with vpmaddwd (and adds with vpdpwssd where VNNI is there). */
typedef struct {
  int32_t mh_a, ml_a, mh_b, ml_b, ka, kb, s, zy;
} qk_sum32p;
QLLC_INLINE void qk_split16(int32_t m, int32_t *mh, int32_t *ml) {
  const int32_t lo = m & 0xffff;
  *ml = lo >= 0x8000 ? lo - 0x10000 : lo;
  *mh = (int32_t)(((int64_t)m - *ml) >> 16);
}
QLLC_INLINE int qk_sum32_make(qk_sum32p *p, int32_t m_a, int32_t m_b, int32_t sign, int32_t n, int32_t z_a,
                              int32_t z_b, int32_t z_y, int32_t qmin, int32_t qmax) {
  if (n < 16 || z_a < qmin || z_a > qmax || z_b < qmin || z_b > qmax || z_y <= -(1 << 30) || z_y >= (1 << 30))
    return 0;
  qk_split16(m_a, &p->mh_a, &p->ml_a);
  qk_split16(m_b, &p->mh_b, &p->ml_b);
  p->mh_b *= sign, p->ml_b *= sign;
  p->s = n - 16 > 31 ? 31 : n - 16;
  const int fold = (int64_t)(z_y < 0 ? -z_y : z_y) << p->s <= (int64_t)1 << 29;
  const int32_t zy_in = fold ? (int32_t)((int64_t)z_y * ((int64_t)1 << p->s)) : 0;
  p->ka = (p->s ? 1 << (p->s - 1) : 0) - (z_a * p->mh_a + z_b * p->mh_b) + zy_in;
  p->kb = (p->s ? 0 : 1 << 15) - (z_a * p->ml_a + z_b * p->ml_b);
  p->zy = fold ? 0 : z_y;
  return 1;
}
/* clamp(z_y + the reference's rounded sum, lo, hi) for the operands u, v. The clamp is written out in
   int32 rather than by qk_out, whose int64 argument widens the vectorized lanes (clang -O3 for znver5:
   about 60 % more 64-bit sign extensions in qllc_k_add_u8_u8_u8). */
QLLC_INLINE int32_t qk_sum32(const qk_sum32p *p, int32_t u, int32_t v, int32_t lo, int32_t hi) {
  const int32_t A = u * p->mh_a + v * p->mh_b + p->ka, B = u * p->ml_a + v * p->ml_b + p->kb;
  const int32_t r = ((A + (B >> 16)) >> p->s) + p->zy;
  return r < lo ? lo : r > hi ? hi : r;
}
#define ADDSUB32_EL(u, v) qk_sum32(&p32, u, v, act_lo, act_hi)

/* NARROW: 8-bit T, whose add/sub may run in int32 (qk_sum32) */
#define ELTWISE(T, t, QMIN, QMAX, NARROW)                                                                        \
  QLLC_INLINE void qk_addsub_##t(T *QLLC_RESTRICT y, const T *a, const T *b, int64_t rank, const int64_t *dims,  \
                                 const int64_t *a_strides, const int64_t *b_strides, int32_t z_a, int32_t m_a,   \
                                 int32_t z_b, int32_t m_b, int32_t n, int32_t z_y, int32_t act_lo,               \
                                 int32_t act_hi, int32_t sign) {                                                 \
    qk_sum32p p32;                                                                                               \
    if (NARROW && qk_sum32_make(&p32, m_a, m_b, sign, n, z_a, z_b, z_y, QMIN, QMAX)) {                           \
      BINARY_WALK(T, ADDSUB32_EL)                                                                                \
      return;                                                                                                    \
    }                                                                                                            \
    const int64_t half = n > 0 ? (int64_t)1 << (n - 1) : 0;                                                      \
    BINARY_WALK(T, ADDSUB_EL)                                                                                    \
  }                                                                                                              \
  QLLC_KERNEL void qllc_k_add_##t##_##t##_##t(T *QLLC_RESTRICT y, const T *a, const T *b, int64_t rank,           \
                                              const int64_t *dims, const int64_t *a_strides,                     \
                                              const int64_t *b_strides, int32_t z_a, int32_t m_a, int32_t z_b,   \
                                              int32_t m_b, int32_t n, int32_t z_y, int32_t act_lo,               \
                                              int32_t act_hi) {                                                  \
    qk_addsub_##t(y, a, b, rank, dims, a_strides, b_strides, z_a, m_a, z_b, m_b, n, z_y, act_lo, act_hi, 1);     \
  }                                                                                                              \
  QLLC_KERNEL void qllc_k_sub_##t##_##t##_##t(T *QLLC_RESTRICT y, const T *a, const T *b, int64_t rank,           \
                                              const int64_t *dims, const int64_t *a_strides,                     \
                                              const int64_t *b_strides, int32_t z_a, int32_t m_a, int32_t z_b,   \
                                              int32_t m_b, int32_t n, int32_t z_y, int32_t act_lo,               \
                                              int32_t act_hi) {                                                  \
    qk_addsub_##t(y, a, b, rank, dims, a_strides, b_strides, z_a, m_a, z_b, m_b, n, z_y, act_lo, act_hi, -1);    \
  }                                                                                                              \
  QLLC_KERNEL void qllc_k_mul_##t##_##t##_##t(T *QLLC_RESTRICT y, const T *a, const T *b, int64_t rank,           \
                                              const int64_t *dims, const int64_t *a_strides,                     \
                                              const int64_t *b_strides, int32_t z_a, int32_t z_b, int32_t m,     \
                                              int32_t n, int32_t z_y, int32_t act_lo, int32_t act_hi) {          \
    BINARY_WALK(T, MUL_EL)                                                                                       \
  }

/* the row buffers of maxpool, on the stack: 2 x this many elements */
enum { QK_MP_SPAN = 512 };

/* The max pool of ResNet-style stems, 3 columns at stride 2 with one column of left padding, over
   vectors of 32 outputs (portable vector types: one or two registers on x86_64 and aarch64): output o
   of a row is the max of columns 2o - 1, 2o, 2o + 1, that is of the even lanes, the odd lanes and the
   odd lanes one output earlier of the 64 columns from 2 o0. A row's last vector ends at its last output
   (overlapping the one before: recomputed outputs are the same), so every load stays inside the input
   row; the caller checks the row has 32 outputs or more and no window reaches past its right end. */
#define QK_MP_S2K3(T, t, QMIN)                                                                                   \
  typedef T qk_v32##t __attribute__((vector_size(32 * sizeof(T)), aligned(sizeof(T))));                        \
  typedef QK_MASK_##t qk_m32##t __attribute__((vector_size(32 * sizeof(T))));                                  \
  QLLC_INLINE void qk_maxpool_s2k3_##t(T *QLLC_RESTRICT yr, const T *QLLC_RESTRICT x, const int64_t *rows,       \
                                        int64_t nrows, int64_t OW) {                                            \
    for (int64_t o0 = 0;; o0 += 32) {                                                                            \
      if (o0 > OW - 32) o0 = OW - 32;                                                                            \
      const qk_v32##t zero = {0};                                                                                \
      qk_v32##t acc = zero + (T)QMIN; /* a scalar operand is splatted */                                         \
      for (int64_t r = 0; r < nrows; r++) {                                                                      \
        const T *xr = x + rows[r] + 2 * o0;                                                                      \
        qk_v32##t lo, hi;                                                                                        \
        __builtin_memcpy(&lo, xr, sizeof lo);                                                                    \
        __builtin_memcpy(&hi, xr + 32, sizeof hi);                                                               \
        const T before = o0 ? xr[-1] : (T)QMIN; /* column 2 o0 - 1, or the padding */                           \
        const qk_v32##t pv = zero + before;                                                                      \
        const qk_v32##t ev = __builtin_shufflevector(lo, hi, QK_EVEN32);                                         \
        const qk_v32##t od = __builtin_shufflevector(lo, hi, QK_ODD32);                                          \
        const qk_v32##t od1 = __builtin_shufflevector(od, pv, QK_PREV32);                                        \
        const qk_v32##t m1 = QK_VMAX(qk_v32##t, qk_m32##t, od, od1), m2 = QK_VMAX(qk_v32##t, qk_m32##t, ev, m1);   \
        acc = QK_VMAX(qk_v32##t, qk_m32##t, acc, m2);                                                            \
      }                                                                                                          \
      __builtin_memcpy(yr + o0, &acc, sizeof acc);                                                               \
      if (o0 == OW - 32) break;                                                                                  \
    }                                                                                                            \
  }
/* the lanes of a or b, whichever is larger (a, b: plain variables; MT: the comparison's mask type) */
#define QK_VMAX(VT, MT, a, b) ((VT)(((MT)(a) & ((a) > (b))) | ((MT)(b) & ~((a) > (b)))))
#define QK_EVEN32 0,2,4,6,8,10,12,14,16,18,20,22,24,26,28,30,32,34,36,38,40,42,44,46,48,50,52,54,56,58,60,62
#define QK_ODD32 1,3,5,7,9,11,13,15,17,19,21,23,25,27,29,31,33,35,37,39,41,43,45,47,49,51,53,55,57,59,61,63
#define QK_PREV32 32,0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,23,24,25,26,27,28,29,30
#define QK_MASK_i8 int8_t
#define QK_MASK_u8 int8_t
#define QK_MASK_i16 int16_t
QK_MP_S2K3(int8_t, i8, -128)
QK_MP_S2K3(uint8_t, u8, 0)
QK_MP_S2K3(int16_t, i16, -32768)

#define UNARY(T, t, QMIN)                                                                                        \
  QLLC_KERNEL void qllc_k_requantize_##t##_##t(T *y, const T *x, int64_t rows, int64_t cols, int64_t y_stride,    \
                                               int64_t x_stride, int32_t z_x, int32_t m, int32_t n, int32_t z_y, \
                                               int32_t act_lo, int32_t act_hi) {                                 \
    for (int64_t r = 0; r < rows; r++)                                                                           \
      for (int64_t c = 0; c < cols; c++)                                                                         \
        y[r * y_stride + c] =                                                                                    \
            (T)qk_out(qk_req32((int32_t)x[r * x_stride + c] - z_x, m, n), z_y, act_lo, act_hi);                  \
  }                                                                                                              \
  QLLC_KERNEL void qllc_k_clamp_##t##_##t(T *y, const T *x, int64_t count, int32_t lo, int32_t hi) {               \
    for (int64_t i = 0; i < count; i++) y[i] = (T)qk_out(x[i], 0, lo, hi);                                        \
  }                                                                                                              \
  /* maxpool, by output row and runs of up to QK_MP_SPAN input columns: v = the max over the window's  \
     rows inside the image (the type's minimum outside it: padding never wins, a window entirely in    \
     the padding gives the minimum), then hm[j] = the max of v over the window's columns from j, then  \
     every stride-th hm is an output. All but the last step are contiguous loops, which vectorize       \
     whatever the stride; a window wider than the buffers runs the per-tap loop instead. */             \
  QLLC_KERNEL void qllc_k_maxpool2d_##t##_##t(T *QLLC_RESTRICT y, const T *QLLC_RESTRICT x, int64_t NC, int64_t H, \
                                              int64_t W, int64_t OH, int64_t OW, int64_t KH, int64_t KW,          \
                                              int64_t stride_h, int64_t stride_w, int64_t pad_top,               \
                                              int64_t pad_left, int64_t pad_bottom, int64_t pad_right,           \
                                              int64_t dil_h, int64_t dil_w) {                                    \
    (void)pad_bottom, (void)pad_right;                                                                           \
    T v[QK_MP_SPAN], hm[QK_MP_SPAN];                                                                             \
    const int64_t reach = (KW - 1) * dil_w, run = (QK_MP_SPAN - 1 - reach) / stride_w + 1; /* outputs a run */   \
    for (int64_t p = 0; p < NC; p++)                                                                             \
      for (int64_t oh = 0; oh < OH; oh++) {                                                                      \
        T *yr = y + (p * OH + oh) * OW;                                                                          \
        if (KH <= 3 && KW == 3 && stride_w == 2 && dil_w == 1 && pad_left == 1 && OW >= 32 && 2 * OW <= W) { \
          int64_t rows[3], nr = 0; /* the window's rows inside the image (KH <= 3 here) */                    \
          for (int64_t kh = 0; kh < KH; kh++) {                                                                  \
            const int64_t ih = oh * stride_h - pad_top + kh * dil_h;                                             \
            if (ih >= 0 && ih < H) rows[nr++] = (p * H + ih) * W;                                                \
          }                                                                                                      \
          qk_maxpool_s2k3_##t(yr, x, rows, nr, OW);                                                              \
          continue;                                                                                              \
        }                                                                                                        \
        if (reach >= QK_MP_SPAN / 2) { /* the per-tap loop */                                                    \
          for (int64_t ow = 0; ow < OW; ow++) yr[ow] = (T)QMIN;                                                  \
          for (int64_t kh = 0; kh < KH; kh++) {                                                                  \
            const int64_t ih = oh * stride_h - pad_top + kh * dil_h;                                             \
            if (ih < 0 || ih >= H) continue;                                                                     \
            const T *xr = x + (p * H + ih) * W;                                                                  \
            for (int64_t kw = 0; kw < KW; kw++) {                                                                \
              const int64_t off = kw * dil_w - pad_left;                                                         \
              const int64_t lo = qk_first_inside(off, stride_w), hi = qk_end_inside(off, stride_w, W, OW);       \
              for (int64_t ow = lo; ow < hi; ow++) {                                                             \
                const T e = xr[ow * stride_w + off];                                                             \
                yr[ow] = e > yr[ow] ? e : yr[ow];                                                                \
              }                                                                                                  \
            }                                                                                                    \
          }                                                                                                      \
          continue;                                                                                              \
        }                                                                                                        \
        for (int64_t o0 = 0; o0 < OW; o0 += run) {                                                               \
          const int64_t n = OW - o0 < run ? OW - o0 : run, c0 = o0 * stride_w - pad_left;                        \
          const int64_t J = (n - 1) * stride_w + 1, L = J + reach; /* hm and v lengths */                        \
          const int64_t ilo = c0 < 0 ? -c0 : 0, ihi = W - c0 < L ? W - c0 : L; /* v's columns inside */        \
          for (int64_t i = 0; i < L; i++) v[i] = (T)QMIN;                                                        \
          for (int64_t kh = 0; kh < KH; kh++) {                                                                  \
            const int64_t ih = oh * stride_h - pad_top + kh * dil_h;                                             \
            if (ih < 0 || ih >= H) continue;                                                                     \
            const T *xr = x + (p * H + ih) * W;                                                                  \
            for (int64_t i = ilo; i < ihi; i++) v[i] = xr[c0 + i] > v[i] ? xr[c0 + i] : v[i];                      \
          }                                                                                                      \
          T *h = stride_w == 1 ? yr + o0 : hm; /* stride 1: hm is the output */                                  \
          for (int64_t j = 0; j < J; j++) h[j] = v[j];                                                           \
          for (int64_t kw = 1; kw < KW; kw++)                                                                    \
            for (int64_t j = 0; j < J; j++) h[j] = v[j + kw * dil_w] > h[j] ? v[j + kw * dil_w] : h[j];          \
          if (stride_w != 1)                                                                                     \
            for (int64_t k = 0; k < n; k++) yr[o0 + k] = hm[k * stride_w];                                       \
        }                                                                                                        \
      }                                                                                                          \
  }                                                                                                              \
  /* avgpool: ow in chunks of int64 sums of (x - z_x), row updates per tap as maxpool; the count of a        \
     window is (rows inside) * (columns inside) of the image, or with count_include_pad of the padded     \
     extent [-pad_top, H + pad_bottom) x [-pad_left, W + pad_right) (a ceil-mode window may reach past it). */ \
  QLLC_KERNEL void qllc_k_avgpool2d_##t##_##t(                                                                    \
      T *QLLC_RESTRICT y, const T *QLLC_RESTRICT x, const int32_t *m, const int32_t *n, int64_t NC, int64_t H,     \
      int64_t W, int64_t OH, int64_t OW, int64_t KH, int64_t KW, int64_t stride_h, int64_t stride_w,             \
      int64_t pad_top, int64_t pad_left, int64_t pad_bottom, int64_t pad_right, int64_t count_include_pad,        \
      int32_t z_x, int32_t z_y, int32_t act_lo, int32_t act_hi) {                                                \
    const int64_t h0 = count_include_pad ? -pad_top : 0, h1 = count_include_pad ? H + pad_bottom : H;            \
    const int64_t w0 = count_include_pad ? -pad_left : 0, w1 = count_include_pad ? W + pad_right : W;           \
    int64_t acc[QK_CHUNK];                                                                                       \
    for (int64_t p = 0; p < NC; p++)                                                                             \
      for (int64_t oh = 0; oh < OH; oh++) {                                                                      \
        const int64_t ih0 = oh * stride_h - pad_top, hcount = qk_overlap(ih0, ih0 + KH, h0, h1);                 \
        for (int64_t ow0 = 0; ow0 < OW; ow0 += QK_CHUNK) {                                                       \
          const int64_t cnt = OW - ow0 < QK_CHUNK ? OW - ow0 : QK_CHUNK;                                         \
          for (int64_t j = 0; j < cnt; j++) acc[j] = 0;                                                          \
          for (int64_t kh = 0; kh < KH; kh++) {                                                                  \
            const int64_t ih = ih0 + kh;                                                                         \
            if (ih < 0 || ih >= H) continue;                                                                     \
            const T *xr = x + (p * H + ih) * W;                                                                  \
            for (int64_t kw = 0; kw < KW; kw++) {                                                                \
              const int64_t off = kw - pad_left;                                                                 \
              int64_t lo = qk_first_inside(off, stride_w) - ow0, hi = qk_end_inside(off, stride_w, W, OW) - ow0; \
              lo = lo < 0 ? 0 : lo > cnt ? cnt : lo;                                                             \
              hi = hi < lo ? lo : hi > cnt ? cnt : hi;                                                           \
              const T *xs = xr + ow0 * stride_w + off;                                                           \
              for (int64_t j = lo; j < hi; j++) acc[j] += (int32_t)xs[j * stride_w] - z_x;                       \
            }                                                                                                    \
          }                                                                                                      \
          T *yr = y + (p * OH + oh) * OW + ow0;                                                                  \
          for (int64_t j = 0; j < cnt; j++) {                                                                    \
            const int64_t iw0 = (ow0 + j) * stride_w - pad_left;                                                 \
            const int64_t c = hcount * qk_overlap(iw0, iw0 + KW, w0, w1);                                        \
            yr[j] = (T)qk_out(c ? qk_req64(acc[j], m[c], n[c]) : 0, z_y, act_lo, act_hi);                        \
          }                                                                                                      \
        }                                                                                                        \
      }                                                                                                          \
  }                                                                                                              \
  QLLC_KERNEL void qllc_k_global_avgpool_##t##_##t(T *QLLC_RESTRICT y, const T *QLLC_RESTRICT x, int64_t NC,       \
                                                   int64_t HW, int32_t z_x, int32_t m, int32_t n, int32_t z_y,   \
                                                   int32_t act_lo, int32_t act_hi) {                             \
    for (int64_t p = 0; p < NC; p++) {                                                                           \
      int64_t sum = 0;                                                                                           \
      for (int64_t i = 0; i < HW; i++) sum += (int32_t)x[p * HW + i] - z_x;                                      \
      y[p] = (T)qk_out(qk_req64(sum, m, n), z_y, act_lo, act_hi);                                                \
    }                                                                                                            \
  }

ELTWISE(int8_t, i8, -128, 127, 1)
ELTWISE(uint8_t, u8, 0, 255, 1)
ELTWISE(int16_t, i16, -32768, 32767, 0)
UNARY(int8_t, i8, -128)
UNARY(uint8_t, u8, 0)
UNARY(int16_t, i16, -32768)

/* The channel-last twins of maxpool2d and global_avgpool (8-bit): the reference's arguments, then C (NC
   = N * C) and the layouts of x and y (0 NCHW, 1 NHWC). The layout pass (src/lower/layout.c) calls a
   twin instead of its reference where the pool's input or output is NHWC; the bytes are the reference's
   in every layout (a max, and an exact integer sum, do not depend on the order).
   maxpool2dcl: NHWC input: each output pixel is the max over its window's pixels of runs of channels
   (contiguous, vectorized over channels), stored as a run (NHWC output) or one byte per channel plane.
   NCHW input, NHWC output: each output row of a block of channels is the reference's (called on one
   output row, pad_top shifted), staged in a stack buffer and stored across the channels. */
enum { QK_CL_RUN = 256, QK_CL_TMP = 4096 }; /* channels a pixel run; bytes of the staged rows */
/* 16 rows of 16 bytes (s, ss apart) transposed into 16 rows of 16 bytes (d, ds apart): four rounds of
   interleaving vector i with vector i + 8, each of which rotates the 8 bits (vector, lane) of an element's
   place by one, so that after four the row and column bits have swapped. */
typedef uint8_t qk_b16 __attribute__((vector_size(16), aligned(1)));
QLLC_INLINE void qk_tr16x16(uint8_t *QLLC_RESTRICT d, int64_t ds, const uint8_t *QLLC_RESTRICT s, int64_t ss) {
  qk_b16 a[16], b[16];
  for (int i = 0; i < 16; i++) __builtin_memcpy(&a[i], s + i * ss, 16);
  for (int r = 0; r < 4; r++) {
    for (int i = 0; i < 8; i++) {
      b[2 * i] = __builtin_shufflevector(a[i], a[i + 8], 0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23);
      b[2 * i + 1] = __builtin_shufflevector(a[i], a[i + 8], 8, 24, 9, 25, 10, 26, 11, 27, 12, 28, 13, 29, 14, 30, 15, 31);
    }
    for (int i = 0; i < 16; i++) a[i] = b[i];
  }
  for (int i = 0; i < 16; i++) __builtin_memcpy(d + i * ds, &a[i], 16);
}
#define POOL_CL(T, t, QMIN)                                                                                      \
  QLLC_KERNEL void qllc_k_maxpool2dcl_##t##_##t(T *QLLC_RESTRICT y, const T *QLLC_RESTRICT x, int64_t NC,         \
                                                int64_t H, int64_t W, int64_t OH, int64_t OW, int64_t KH,         \
                                                int64_t KW, int64_t stride_h, int64_t stride_w, int64_t pad_top,  \
                                                int64_t pad_left, int64_t pad_bottom, int64_t pad_right,          \
                                                int64_t dil_h, int64_t dil_w, int64_t C, int64_t x_nhwc,          \
                                                int64_t y_nhwc) {                                                 \
    const int64_t N = NC / C;                                                                                    \
    if (!x_nhwc && !y_nhwc) {                                                                                    \
      qllc_k_maxpool2d_##t##_##t(y, x, NC, H, W, OH, OW, KH, KW, stride_h, stride_w, pad_top, pad_left,          \
                                 pad_bottom, pad_right, dil_h, dil_w);                                           \
      return;                                                                                                    \
    }                                                                                                            \
    if (x_nhwc) {                                                                                                \
      T acc[QK_CL_RUN];                                                                                          \
      for (int64_t b = 0; b < N; b++)                                                                            \
        for (int64_t oh = 0; oh < OH; oh++)                                                                      \
          for (int64_t ow = 0; ow < OW; ow++)                                                                    \
            for (int64_t c0 = 0; c0 < C; c0 += QK_CL_RUN) {                                                      \
              const int64_t cn = C - c0 < QK_CL_RUN ? C - c0 : QK_CL_RUN;                                        \
              for (int64_t c = 0; c < cn; c++) acc[c] = (T)QMIN;                                                 \
              for (int64_t kh = 0; kh < KH; kh++) {                                                              \
                const int64_t ih = oh * stride_h - pad_top + kh * dil_h;                                         \
                if (ih < 0 || ih >= H) continue;                                                                 \
                for (int64_t kw = 0; kw < KW; kw++) {                                                            \
                  const int64_t iw = ow * stride_w - pad_left + kw * dil_w;                                      \
                  if (iw < 0 || iw >= W) continue;                                                               \
                  const T *xp = x + ((b * H + ih) * W + iw) * C + c0;                                            \
                  for (int64_t c = 0; c < cn; c++) acc[c] = xp[c] > acc[c] ? xp[c] : acc[c];                     \
                }                                                                                                \
              }                                                                                                  \
              if (y_nhwc) {                                                                                      \
                T *yp = y + ((b * OH + oh) * OW + ow) * C + c0;                                                  \
                for (int64_t c = 0; c < cn; c++) yp[c] = acc[c];                                                 \
              } else                                                                                             \
                for (int64_t c = 0; c < cn; c++) y[((b * C + c0 + c) * OH + oh) * OW + ow] = acc[c];             \
            }                                                                                                    \
      return;                                                                                                    \
    }                                                                                                            \
    /* NCHW in, NHWC out: rows of up to cb channels staged (at least one row fits: OW <= QK_CL_TMP here) */    \
    T tmp[QK_CL_TMP / sizeof(T)];                                                                                \
    const int64_t cap = (int64_t)(QK_CL_TMP / sizeof(T)), cr = OW <= cap ? cap / OW : 0;                         \
    const int64_t cb = cr >= 16 ? cr / 16 * 16 : cr; /* whole blocks of 16 channels when they fit */           \
    for (int64_t b = 0; b < N; b++)                                                                              \
      for (int64_t oh = 0; oh < OH; oh++)                                                                        \
        for (int64_t c0 = 0; c0 < C; c0 += cb ? cb : C) {                                                        \
          if (!cb) { /* a row wider than the buffer: one output at a time */                                     \
            for (int64_t c = 0; c < C; c++)                                                                      \
              for (int64_t ow = 0; ow < OW; ow++) {                                                              \
                T v = (T)QMIN;                                                                                   \
                for (int64_t kh = 0; kh < KH; kh++)                                                              \
                  for (int64_t kw = 0; kw < KW; kw++) {                                                          \
                    const int64_t ih = oh * stride_h - pad_top + kh * dil_h;                                     \
                    const int64_t iw = ow * stride_w - pad_left + kw * dil_w;                                    \
                    if (ih < 0 || ih >= H || iw < 0 || iw >= W) continue;                                        \
                    const T e = x[((b * C + c) * H + ih) * W + iw];                                              \
                    v = e > v ? e : v;                                                                           \
                  }                                                                                              \
                y[((b * OH + oh) * OW + ow) * C + c] = v;                                                        \
              }                                                                                                  \
            continue;                                                                                            \
          }                                                                                                      \
          const int64_t cn = C - c0 < cb ? C - c0 : cb;                                                          \
          qllc_k_maxpool2d_##t##_##t(tmp, x + (b * C + c0) * H * W, cn, H, W, 1, OW, KH, KW, stride_h, stride_w, \
                                     pad_top - oh * stride_h, pad_left, pad_bottom, pad_right, dil_h, dil_w);    \
          T *yr = y + (b * OH + oh) * OW * C + c0;                                                               \
          const int64_t c16 = cn / 16 * 16, o16 = OW / 16 * 16; /* 16 x 16 blocks, then the edges */            \
          for (int64_t c = 0; c < c16; c += 16)                                                                  \
            for (int64_t ow = 0; ow < o16; ow += 16)                                                             \
              qk_tr16x16((uint8_t *)(yr + ow * C + c), C, (const uint8_t *)(tmp + c * OW + ow), OW);             \
          for (int64_t ow = 0; ow < OW; ow++)                                                                    \
            for (int64_t c = ow < o16 ? c16 : 0; c < cn; c++) yr[ow * C + c] = tmp[c * OW + ow];                 \
        }                                                                                                        \
  }                                                                                                              \
  /* global_avgpoolcl: an NHWC input summed over the pixels a run of channels at a time; the output (N x C x   \
     1 x 1) is the same bytes in both layouts, so y_nhwc changes nothing. */                                     \
  QLLC_KERNEL void qllc_k_global_avgpoolcl_##t##_##t(T *QLLC_RESTRICT y, const T *QLLC_RESTRICT x, int64_t NC,     \
                                                     int64_t HW, int32_t z_x, int32_t m, int32_t n, int32_t z_y, \
                                                     int32_t act_lo, int32_t act_hi, int64_t C, int64_t x_nhwc,  \
                                                     int64_t y_nhwc) {                                           \
    (void)y_nhwc;                                                                                                \
    if (!x_nhwc) {                                                                                               \
      qllc_k_global_avgpool_##t##_##t(y, x, NC, HW, z_x, m, n, z_y, act_lo, act_hi);                             \
      return;                                                                                                    \
    }                                                                                                            \
    int64_t acc[QK_CL_RUN / 2];                                                                                  \
    const int64_t N = NC / C;                                                                                    \
    for (int64_t b = 0; b < N; b++)                                                                              \
      for (int64_t c0 = 0; c0 < C; c0 += QK_CL_RUN / 2) {                                                        \
        const int64_t cn = C - c0 < QK_CL_RUN / 2 ? C - c0 : QK_CL_RUN / 2;                                      \
        for (int64_t c = 0; c < cn; c++) acc[c] = 0;                                                             \
        for (int64_t i = 0; i < HW; i++) {                                                                       \
          const T *xp = x + (b * HW + i) * C + c0;                                                               \
          for (int64_t c = 0; c < cn; c++) acc[c] += (int32_t)xp[c] - z_x;                                       \
        }                                                                                                        \
        for (int64_t c = 0; c < cn; c++) y[b * C + c0 + c] = (T)qk_out(qk_req64(acc[c], m, n), z_y, act_lo, act_hi); \
      }                                                                                                          \
  }
POOL_CL(int8_t, i8, -128)
POOL_CL(uint8_t, u8, 0)

/* requantize between 8 and 16 bits (mixed precision): the same arithmetic, the input and output types differ */
#define REQUANT_X(TI, ti, TO, to)                                                                                \
  QLLC_KERNEL void qllc_k_requantize_##ti##_##to(TO *y, const TI *x, int64_t rows, int64_t cols, int64_t y_stride, \
                                                 int64_t x_stride, int32_t z_x, int32_t m, int32_t n, int32_t z_y, \
                                                 int32_t act_lo, int32_t act_hi) {                               \
    for (int64_t r = 0; r < rows; r++)                                                                           \
      for (int64_t c = 0; c < cols; c++)                                                                         \
        y[r * y_stride + c] =                                                                                    \
            (TO)qk_out(qk_req32((int32_t)x[r * x_stride + c] - z_x, m, n), z_y, act_lo, act_hi);                 \
  }
REQUANT_X(int8_t, i8, int16_t, i16)
REQUANT_X(uint8_t, u8, int16_t, i16)
REQUANT_X(int16_t, i16, int8_t, i8)
REQUANT_X(int16_t, i16, uint8_t, u8)
#undef REQUANT_X

/* ---- tables ---- */
QLLC_KERNEL void qllc_k_lut_i8_i8(int8_t *y, const int8_t *x, const int8_t *table, int64_t count) {
  for (int64_t i = 0; i < count; i++) y[i] = table[(int32_t)x[i] + 128];
}
QLLC_KERNEL void qllc_k_lut_u8_u8(uint8_t *y, const uint8_t *x, const uint8_t *table, int64_t count) {
  for (int64_t i = 0; i < count; i++) y[i] = table[x[i]];
}
QLLC_INLINE int32_t interp513(const int32_t lo, const int32_t hi, int32_t f) { return lo + (((hi - lo) * f + 64) >> 7); }
QLLC_KERNEL void qllc_k_lut_i16_i16(int16_t *y, const int16_t *x, const int16_t *table, int64_t count) {
  for (int64_t i = 0; i < count; i++) {
    int32_t u = (int32_t)x[i] + 32768, j = u >> 7;
    y[i] = (int16_t)interp513(table[j], table[j + 1], u & 127);
  }
}

/* ---- softmax ---- */
#define SOFTMAX(T, t, WIDE)                                                                                      \
  QLLC_KERNEL void qllc_k_softmax_##t##_##t(T *QLLC_RESTRICT y, const T *QLLC_RESTRICT x, const int32_t *exp_table, \
                                            int64_t outer, int64_t axis_len, int64_t inner, int32_t recip,       \
                                            int32_t z_y, int32_t act_lo, int32_t act_hi) {                       \
    for (int64_t o = 0; o < outer; o++)                                                                          \
      for (int64_t i = 0; i < inner; i++) {                                                                      \
        const T *X = x + o * axis_len * inner + i;                                                               \
        T *Y = y + o * axis_len * inner + i;                                                                     \
        int32_t mx = X[0];                                                                                       \
        for (int64_t a = 1; a < axis_len; a++)                                                                   \
          if (X[a * inner] > mx) mx = X[a * inner];                                                              \
        int64_t S = 0;                                                                                           \
        for (int64_t a = 0; a < axis_len; a++) {                                                                 \
          int32_t d = mx - (int32_t)X[a * inner];                                                                \
          S += WIDE ? interp513(exp_table[d >> 7], exp_table[(d >> 7) + 1], d & 127) : exp_table[d];             \
        }                                                                                                        \
        for (int64_t a = 0; a < axis_len; a++) {                                                                 \
          int32_t d = mx - (int32_t)X[a * inner];                                                                \
          int64_t e = WIDE ? interp513(exp_table[d >> 7], exp_table[(d >> 7) + 1], d & 127) : exp_table[d];     \
          Y[a * inner] = (T)qk_out((e * recip + S / 2) / S, z_y, act_lo, act_hi);                                \
        }                                                                                                        \
      }                                                                                                          \
  }
SOFTMAX(int8_t, i8, 0)
SOFTMAX(uint8_t, u8, 0)
SOFTMAX(int16_t, i16, 1)

/* ---- the boundary ---- */
/* round half to even without libm: for |v| < 2^22, (v + 1.5 * 2^23) - 1.5 * 2^23 rounds to an integer
   in the default rounding mode (kernels are built with -ffp-contract=off, no fast-math). v is clamped
   to the type's range first, which is equivalent to rounding then saturating (the bounds are integers). */
#define QDQ(T, t, QMIN, QMAX)                                                                                    \
  QLLC_KERNEL void qllc_k_quantize_f32_##t(T *y, const float *x, int64_t count, float scale, int32_t z) {         \
    float lo = (float)(QMIN - z), hi = (float)(QMAX - z);                                                        \
    for (int64_t i = 0; i < count; i++) {                                                                        \
      float v = x[i] / scale;                                                                                    \
      if (v != v) v = 0;                                                                                         \
      if (v < lo) v = lo;                                                                                        \
      if (v > hi) v = hi;                                                                                        \
      float r = (v + 12582912.0f) - 12582912.0f; /* not folded: no fast-math */                                  \
      y[i] = (T)((int32_t)r + z);                                                                                \
    }                                                                                                            \
  }                                                                                                              \
  QLLC_KERNEL void qllc_k_dequantize_##t##_f32(float *y, const T *x, int64_t count, float scale, int32_t z) {     \
    for (int64_t i = 0; i < count; i++) y[i] = (float)((int32_t)x[i] - z) * scale;                               \
  }
QDQ(int8_t, i8, -128, 127)
QDQ(uint8_t, u8, 0, 255)
QDQ(int16_t, i16, -32768, 32767)
