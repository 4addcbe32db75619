/* targets/aarch64/kernels/arm_f32.h: the aarch64 NEON variants of the float FC and Conv layers (rows in
 * variants.def), bit-identical to the scalar qllc_k_fc_f32_f32_f32 (libjit/bitcode/fc.c) and
 * qllc_k_conv2d_f32_f32_f32 (conv.c).
 *
 * The x86_64 variants' structure and operands (targets/x86_64/kernels/x86_f32.h): weights packed at
 * compile time in QLLC_LAYOUT_F32_N32 (FC) and F32_M24 (Conv, group 1), the same scratch, and the same
 * loops around the register tile (libjit/bitcode/f32_blocked.h: k chunks, blocks of rows, strips of 16
 * columns or pixels, tails). Only the tile is NEON's: NF_MR = 4 rows x one strip of 16 floats (four
 * 4-lane q registers) = 16 accumulators. Per k: the 4 scalars of a as one q load (packed next to each
 * other: x's rows [k][4] in the scratch, the conv's weights [k][24]), the strip of b as two ldp, and per
 * row and q one multiply by a lane (fmul v.4s, v.4s, v.s[lane]) then one add (fadd): 32 arithmetic
 * instructions and 3 loads per 64 multiply-adds (docs/kernels.md has the inner loops' counts). Why 4
 * rows and not 6 (24 accumulators, 48 + 4 per 96): with LLVM's generic aarch64 scheduling (the default
 * --cpu) the 6-row loop spilled (4 stores, 5 reloads and 8 moves per k); the 4-row loop has no spill for
 * any CPU, and both do 0.5 arithmetic instructions per multiply-add, the bound of the FP pipes. Never
 * fmla: the fused multiply-add rounds once, the reference twice, so the separate fmul and fadd give the
 * reference's bits (the kernels are built with -ffp-contract=off, which also keeps LLVM from fusing
 * them). One row (a GEMV) runs 4 strips side by side (FC_GV): 16 independent add chains of one scalar of x.
 *
 * Order of every sum: bias (0 without one), then k ascending, one multiply and one add per term, the
 * lanes holding different outputs: the reference's order, so the same bits on every target (tests/cross).
 * The clamp is the reference's qm_min(qm_max(v, lo), hi), lane by lane (a NaN stays NaN).
 *
 * Compiled as the end of arm_q8.c's translation unit, not as a .c file of its own, for the reason
 * x86_f32.h gives: every linked file adds its llvm.ident to the kernel library, which every bundle's
 * object carries in .comment, so a new file would change the bytes of every aarch64 bundle. Speed on
 * Arm hardware: not measured (docs/benchmarks.md; only qemu here). */
#ifndef QLLC_ARM_F32_H
#define QLLC_ARM_F32_H
#include <arm_neon.h>

#include "variants.h"

#define FC_GV 4 /* strips of 16 columns side by side for one row */
#include "f32_blocked.h"
#include "f32_dw.h"

#define NF_MR 4 /* the tile's rows (divides F_MR, the F32_M24 block) */
#define NF_UNROLL _Pragma("GCC unroll 24")

/* qm_min(qm_max(v, lo), hi) lane by lane: v < lo gives lo, then > hi gives hi; NaN stays. */
QLLC_INLINE float32x4_t nf_clamp(float32x4_t v, float32x4_t lo, float32x4_t hi) {
  v = vbslq_f32(vcltq_f32(v, lo), lo, v);
  return vbslq_f32(vcgtq_f32(v, hi), hi, v);
}

/* The tile f32_blocked.h declares: strip v of 16 floats as the q registers 4 v .. 4 v + 3 of a row. The
   scalars of a are read exactly (mr / 4 q loads, then a d and/or an s: the tails of f32_rows), never past
   a[k * a_sk + mr - 1]: the last rows of the conv's weights and the row of x of a GEMV end there. */
QLLC_INLINE void f32_tile(const int mr, const int nv, float *QLLC_RESTRICT c, int64_t ldc,
                          const float *QLLC_RESTRICT a, int64_t a_sk, const float *QLLC_RESTRICT b, int64_t bstride,
                          int64_t ldb, const int64_t *QLLC_RESTRICT boff, int64_t kc, const float *QLLC_RESTRICT init,
                          const int row_init, int first, int last, float lo, float hi) {
  float32x4_t acc[F_MR][4 * FC_GV];
  const int nq = 4 * nv, n4 = mr / 4 * 4, rem = mr % 4;
  NF_UNROLL for (int i = 0; i < mr; i++) NF_UNROLL for (int j = 0; j < nq; j++) {
    if (first) acc[i][j] = !init ? vdupq_n_f32(0.0f) : row_init ? vdupq_n_f32(init[i]) : vld1q_f32(init + 4 * j);
    else acc[i][j] = vld1q_f32(c + i * ldc + 4 * j);
  }
  for (int64_t k = 0; k < kc; k++) {
    const float *QLLC_RESTRICT ak = a + k * a_sk;
    float32x4_t aq[F_MR / 4];
    float32x2_t ad = vdup_n_f32(0.0f);
    float as = 0.0f;
    NF_UNROLL for (int q = 0; q < n4 / 4; q++) aq[q] = vld1q_f32(ak + 4 * q);
    if (rem >= 2) ad = vld1_f32(ak + n4);
    if (rem & 1) as = ak[mr - 1];
    NF_UNROLL for (int j = 0; j < nq; j++) {
      /* q j % 4 of strip j / 4: block (j / 8) of two strips, strip (j / 4) % 2 of it */
      const float32x4_t bq = vld1q_f32(b + (j / 8) * bstride + (j % 8) * 4 + (boff ? boff[k] : k * ldb));
      NF_UNROLL for (int i = 0; i < mr; i++) {
        const float s = i < n4 ? aq[i / 4][i % 4] : i - n4 < (rem & 2) ? ad[i - n4] : as;
        acc[i][j] = vaddq_f32(acc[i][j], vmulq_n_f32(bq, s));
      }
    }
  }
  if (last) {
    const float32x4_t l = vdupq_n_f32(lo), h = vdupq_n_f32(hi);
    NF_UNROLL for (int i = 0; i < mr; i++) NF_UNROLL for (int j = 0; j < nq; j++) acc[i][j] = nf_clamp(acc[i][j], l, h);
  }
  NF_UNROLL for (int i = 0; i < mr; i++) NF_UNROLL for (int j = 0; j < nq; j++) vst1q_f32(c + i * ldc + 4 * j, acc[i][j]);
}

/* ---- the registry's entry points ------------------------------------------------------------------ */
QLLC_KERNEL void qllc_k_fc_f32_f32_f32__neon(float *y, const float *x, const float *wp, const float *bias, int64_t M,
                                             int64_t N, int64_t K, float act_lo, float act_hi, uint8_t *scratch) {
  fc_f32_body(NF_MR, y, x, wp, bias, M, N, K, act_lo, act_hi, (float *)scratch);
}
QLLC_KERNEL void qllc_k_conv2d_f32_f32_f32__neon(F32_CONV_PARAMS) {
  (void)group;
  conv_f32_body(NF_MR, y, x, wp, bias, N, C, H, W, M, OH, OW, KH, KW, stride_h, stride_w, pad_top, pad_left, dil_h,
                dil_w, act_lo, act_hi, (float *)scratch);
}
/* The float depthwise conv: f32_dw.h's body, 4 vectors of 16 output pixels at once (16 q accumulators, as
   the tile above). Per tap, in the generic-CPU bundle: 50 instructions for 64 multiply-adds (16 fmul by
   lane, 16 fadd, 8 ldp q, the weight's ldr s, address and loop), no spill; 6 vectors took 80 for 96 with 3
   spill stores. */
QLLC_KERNEL void qllc_k_dwconv2d_f32_f32_f32__neon(F32_CONV_PARAMS) {
  (void)M, (void)group; /* group == C == M: the row's predicate */
  dwconv_f32_body(4, y, x, wp, bias, N, C, H, W, OH, OW, KH, KW, stride_h, stride_w, pad_top, pad_left, dil_h, dil_w,
                  act_lo, act_hi, (float *)scratch);
}

#endif
