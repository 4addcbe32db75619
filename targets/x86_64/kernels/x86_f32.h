/* targets/x86_64/kernels/x86_f32.h: the x86_64 variants of the float FC and Conv layers (rows in
 * variants.def), bit-identical to the scalar qllc_k_fc_f32_f32_f32 (libjit/bitcode/fc.c) and
 * qllc_k_conv2d_f32_f32_f32 (conv.c).
 *
 * One register tile does the work: MR rows x 16 columns (one 16-float vector per row) of accumulators
 * over a run of k; per k, one vector load of b, and per row one multiply of a scalar of a by it and one
 * add. The MR scalars of a given k are packed next to each other, so that each multiply takes its scalar
 * as an embedded broadcast from memory (vmulps zmm, zmm, m32{1to16}). Why: on AMD Zen 4 the tile of 6
 * rows x 64 columns with its scalars broadcast into registers ran at 75-90 GFLOPS, held back by the
 * broadcasts, while 24 rows x 16 columns with the broadcasts in the multiplies ran at 115 GFLOPS, the
 * rate of the same tile with FMA (the multiply-add we may not use: see below). MR is 24 with AVX-512 (24
 * zmm accumulators) and 8 with AVX2 (8 rows x two ymm halves).
 *
 * The loops around the tile (k chunks, blocks of rows, strips, tails, the FC's copy of x and the conv's
 * panels) are libjit/bitcode/f32_blocked.h's, shared with the aarch64 NEON variants; this file holds the
 * tile, f32_tile, and the exported variants. FC_GV: 8 strips of 16 columns side by side for one row (a
 * GEMV), so that 8 independent add chains hide the add's latency (memory-bound anyway).
 *
 * Order of every sum: bias (0 without one), then k ascending, one multiply and one add per term (no FMA:
 * the kernels are built with -ffp-contract=off), the lanes holding different outputs. That is the
 * references' order, so the result is the same bits on every target (tests/cross); the clamp is qv_clamp,
 * the reference's qm_min(qm_max()) rule.
 *
 * Compiled as the end of x86_dw8.c's translation unit, not as a .c file of its own: every linked file adds
 * its llvm.ident to the kernel library, which every bundle's object carries in .comment, so a new file
 * would change the bytes of every x86_64 bundle, float or not (x86_q8.c says more). */
#ifndef QLLC_X86_F32_H
#define QLLC_X86_F32_H
#include "conv_panel_f32.h"
#include "gemm_tile_f32.h"
#include "qllc_math.h"
#include "variants.h"

#define FC_GV 8 /* column vectors side by side for one row */
#include "f32_blocked.h"

#define UNROLL _Pragma("GCC unroll 24")

/* The tile f32_blocked.h declares (its arguments are described there): strip v of 16 floats as one
   16-float vector, the scalar of a broadcast in the multiply. */
QLLC_INLINE void f32_tile(const int mr, const int nv, float *QLLC_RESTRICT c, int64_t ldc,
                          const float *QLLC_RESTRICT a, int64_t a_sk, const float *QLLC_RESTRICT b, int64_t bstride,
                          int64_t ldb, int64_t kc, const float *QLLC_RESTRICT init, const int row_init, int first,
                          int last, float lo, float hi) {
  qllc_v16f acc[F_MR][FC_GV];
  UNROLL for (int i = 0; i < mr; i++) UNROLL for (int v = 0; v < nv; v++) {
    if (first) acc[i][v] = !init ? qv_splat(0.0f) : row_init ? qv_splat(init[i]) : qv_load(init + F_V * v);
    else acc[i][v] = qv_load(c + i * ldc + F_V * v);
  }
  for (int64_t k = 0; k < kc; k++) {
    qllc_v16f bv[FC_GV];
    UNROLL for (int v = 0; v < nv; v++) bv[v] = qv_load(b + (v / 2) * bstride + (v % 2) * F_V + k * ldb);
    UNROLL for (int i = 0; i < mr; i++) {
      const float s = a[k * a_sk + i];
      UNROLL for (int v = 0; v < nv; v++) acc[i][v] += s * bv[v];
    }
  }
  if (last) {
    const qllc_v16f l = qv_splat(lo), h = qv_splat(hi);
    UNROLL for (int i = 0; i < mr; i++) UNROLL for (int v = 0; v < nv; v++) acc[i][v] = qv_clamp(acc[i][v], l, h);
  }
  UNROLL for (int i = 0; i < mr; i++) UNROLL for (int v = 0; v < nv; v++) qv_store(c + i * ldc + F_V * v, acc[i][v]);
}

/* ---- the exported variants ------------------------------------------------------------------------------ */
#define F32_VARIANTS(isa, target_features, mr)                                                                    \
  __attribute__((target(target_features))) void qllc_k_fc_f32_f32_f32__##isa(                                     \
      float *y, const float *x, const float *wp, const float *bias, int64_t M, int64_t N, int64_t K,               \
      float act_lo, float act_hi, uint8_t *scratch) {                                                              \
    fc_f32_body(mr, y, x, wp, bias, M, N, K, act_lo, act_hi, (float *)scratch);                                    \
  }                                                                                                                \
  __attribute__((target(target_features))) void qllc_k_conv2d_f32_f32_f32__##isa(                                 \
      float *y, const float *x, const float *wp, const float *bias, int64_t N, int64_t C, int64_t H, int64_t W,    \
      int64_t M, int64_t OH, int64_t OW, int64_t KH, int64_t KW, int64_t stride_h, int64_t stride_w,              \
      int64_t pad_top, int64_t pad_left, int64_t dil_h, int64_t dil_w, int64_t group, float act_lo, float act_hi, \
      uint8_t *scratch) {                                                                                          \
    (void)group;                                                                                                   \
    conv_f32_body(mr, y, x, wp, bias, N, C, H, W, M, OH, OW, KH, KW, stride_h, stride_w, pad_top, pad_left, dil_h, \
                  dil_w, act_lo, act_hi, (float *)scratch);                                                        \
  }
F32_VARIANTS(avx512, "avx512f", 24)
F32_VARIANTS(avx2, "avx2", 8)

#endif
