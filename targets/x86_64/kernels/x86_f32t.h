/* targets/x86_64/kernels/x86_f32t.h: the stride-1 float conv with the tile transposed (issue 26),
 * qllc_k_conv2dt1_f32_f32_f32__avx512, bit-identical to qllc_k_conv2d_f32_f32_f32 (conv.c). Included by
 * x86_f32.h (the same translation unit: x86_f32.h says why), after its direct conv.
 *
 * The direct conv (conv_f32d_body) puts 16 output pixels in a vector's lanes, in the padded row pitch:
 * the lanes on pad columns are computed and dropped (at 28x28 2 of every 30), and a strip that crosses
 * an output row goes through a copy. Here the lanes hold 16 output channels and the tile's rows hold
 * pixels: up to 14 consecutive pixels of one output row x 2 vectors (32 output channels, one F32_N32
 * block of weights), or for runs of 7 pixels or fewer (7x7 layers) x 4 vectors: 28 accumulators of the
 * 32 zmm registers. Per k = (c, kh, kw): one vector load of weights per vector and, per pixel and
 * vector, one multiply by the pixel's input value (an embedded broadcast) and one add. An output row of
 * OW pixels is cut into ceil(OW / 14) runs of nearly equal length, so no lane and no pixel is computed
 * and dropped (at M a multiple of 16), whatever OW is; the input is the same padded image as the direct
 * conv's (qllc_scratch_conv_f32d; a 1x1 conv without padding reads it in place), a run's tap k at
 * xp + off[k] + its first pixel. The tile is transposed in registers and each channel's run stored as 16
 * floats to the NCHW output (the copy it replaced, one float at a time, had become gathers: 10 % of a
 * 56x56 conv); an image's last pixels go through a copy.
 *
 * Order of every sum: bias (0 without one), then k ascending, one multiply and one add per term (no FMA),
 * as the reference; the clamp is qv_clamp. */
#ifndef QLLC_X86_F32T_H
#define QLLC_X86_F32T_H

#define T_ACC 28 /* accumulators: pixels x vectors of 16 channels */
#define T_NP 14  /* pixels per tile, at most (with 2 vectors; 7 with 4) */
#define T_NB 32  /* output channels per F32_N32 block */
#define T_TP 64  /* floats per pixel in the tile's copy: 4 vectors */

/* A 16 x 16 block transposed in registers: r[i][j] <- r[j][i] (the off-diagonal halves, then quarters, ...
   swapped: 64 two-vector shuffles) */
QLLC_INLINE void f32t_transpose(qllc_v16f r[F_V]) {
#define T_STEP(s, ...)                                                                                       \
  UNROLL for (int i = 0; i < F_V; i++) if (!(i & s)) {                                                       \
    const qllc_v16f a = r[i], b = r[i + s];                                                                  \
    r[i] = __builtin_shufflevector(a, b, __VA_ARGS__);                                                       \
    r[i + s] = __builtin_shufflevector(a, b, T_HI_##s);                                                      \
  }
#define T_HI_8 8, 9, 10, 11, 12, 13, 14, 15, 24, 25, 26, 27, 28, 29, 30, 31
#define T_HI_4 4, 5, 6, 7, 20, 21, 22, 23, 12, 13, 14, 15, 28, 29, 30, 31
#define T_HI_2 2, 3, 18, 19, 6, 7, 22, 23, 10, 11, 26, 27, 14, 15, 30, 31
#define T_HI_1 1, 17, 3, 19, 5, 21, 7, 23, 9, 25, 11, 27, 13, 29, 15, 31
  T_STEP(8, 0, 1, 2, 3, 4, 5, 6, 7, 16, 17, 18, 19, 20, 21, 22, 23)
  T_STEP(4, 0, 1, 2, 3, 16, 17, 18, 19, 8, 9, 10, 11, 24, 25, 26, 27)
  T_STEP(2, 0, 1, 16, 17, 4, 5, 20, 21, 8, 9, 24, 25, 12, 13, 28, 29)
  T_STEP(1, 0, 16, 2, 18, 4, 20, 6, 22, 8, 24, 10, 26, 12, 28, 14, 30)
#undef T_STEP
#undef T_HI_8
#undef T_HI_4
#undef T_HI_2
#undef T_HI_1
}

/* np pixels x nv vectors of 16 channels (channels m0 + 16 v + j of block m0 / 32 + v / 2), from init (16 nv
   floats) plus the sum over k < K of w[...][k] * xq[off[k] + p], then clamped; stored to y (channel c's np
   pixels at y + c ldy, c < mc, as 16 floats: the lanes past np land on later pixels, which a later tile
   writes again) or, y NULL, to t[p * 64 + 16 v + j]. Each input
   value is read once per vector, each read its own embedded broadcast in a multiply (vmulps zmm, zmm,
   m32{1to16}): the broadcasts into a register that LLVM makes of one shared read held the tile at 0.85x
   of this on Zen 4 (as x86_f32.h says of its own tile); an empty asm makes the reads distinct values. */
QLLC_INLINE void f32t_tile(const int np, const int nv, float *QLLC_RESTRICT t, float *y, int64_t ldy, int64_t mc,
                           const float *QLLC_RESTRICT xq, const int64_t *QLLC_RESTRICT off,
                           const float *QLLC_RESTRICT w, int64_t K, const float *QLLC_RESTRICT init, float lo,
                           float hi) {
  qllc_v16f acc[T_NP][4];
  UNROLL for (int p = 0; p < np; p++) UNROLL for (int v = 0; v < nv; v++) acc[p][v] = qv_load(init + F_V * v);
  for (int64_t k = 0; k < K; k++) {
    const float *xk[4];
    qllc_v16f wv[4];
    UNROLL for (int v = 0; v < nv; v++) {
      xk[v] = xq + off[k];
      if (v) __asm__("" : "+r"(xk[v]));
      wv[v] = qv_load(w + (v / 2) * T_NB * K + k * T_NB + (v % 2) * F_V);
    }
    UNROLL for (int p = 0; p < np; p++) UNROLL for (int v = 0; v < nv; v++) acc[p][v] += xk[v][p] * wv[v];
  }
  const qllc_v16f l = qv_splat(lo), h = qv_splat(hi);
  UNROLL for (int p = 0; p < np; p++) UNROLL for (int v = 0; v < nv; v++) acc[p][v] = qv_clamp(acc[p][v], l, h);
  if (!y) {
    UNROLL for (int p = 0; p < np; p++) UNROLL for (int v = 0; v < nv; v++) qv_store(t + p * T_TP + F_V * v, acc[p][v]);
    return;
  }
  UNROLL for (int v = 0; v < nv; v++) { /* rows p of 16 channels -> rows of 16 pixels, stored whole */
    qllc_v16f r[F_V];
    UNROLL for (int p = 0; p < F_V; p++) r[p] = p < np ? acc[p][v] : qv_splat(0.0f);
    f32t_transpose(r);
    UNROLL for (int j = 0; j < F_V; j++)
      if (F_V * v + j < mc) qv_store(y + (F_V * v + j) * ldy, r[j]);
  }
}

/* the tile of np pixels (each np its own unrolled code): 1 .. 14 with 1 or 2 vectors, 1 .. 7 with 4 */
QLLC_INLINE void f32t_tiles(int64_t np, const int nv, float *QLLC_RESTRICT t, float *y, int64_t ldy, int64_t mc,
                            const float *QLLC_RESTRICT xq, const int64_t *QLLC_RESTRICT off,
                            const float *QLLC_RESTRICT w, int64_t K, const float *QLLC_RESTRICT init, float lo,
                            float hi) {
#define T_CASE(n) \
  case n: f32t_tile(n, nv, t, y, ldy, mc, xq, off, w, K, init, lo, hi); break;
  if (nv == 4) switch (np) {
      T_CASE(1) T_CASE(2) T_CASE(3) T_CASE(4) T_CASE(5) T_CASE(6) T_CASE(7)
    default: break;
    }
  else switch (np) {
      T_CASE(1) T_CASE(2) T_CASE(3) T_CASE(4) T_CASE(5) T_CASE(6) T_CASE(7)
      T_CASE(8) T_CASE(9) T_CASE(10) T_CASE(11) T_CASE(12) T_CASE(13) T_CASE(14)
    default: break;
    }
#undef T_CASE
}

QLLC_INLINE void conv_f32t_body(float *QLLC_RESTRICT y, const float *QLLC_RESTRICT x, const float *QLLC_RESTRICT wp,
                                const float *QLLC_RESTRICT b, int64_t N, int64_t C, int64_t H, int64_t W, int64_t M,
                                int64_t OH, int64_t OW, int64_t KH, int64_t KW, int64_t pt, int64_t pl, int64_t dh,
                                int64_t dw, float lo, float hi, float *QLLC_RESTRICT scratch) {
  const int64_t K = C * KH * KW, NP = OH * OW;
  if (NP <= 0 || M <= 0) return;
  if (K == 0) { /* no input channels: bias only */
    for (int64_t i = 0; i < N * M * NP; i++) y[i] = qm_min(qm_max(b ? b[i / NP % M] : 0.0f, lo), hi);
    return;
  }
  /* the direct conv's scratch (qllc_scratch_conv_f32d), laid out as it lays it out (its tile's copy
     unused: this tile's is on the stack), its offset table, its padded planes */
  const int in_place = qllc_f32d_in_place(H, W, OH, OW, KH, KW, pt, pl);
  const int64_t Hp = OH + (KH - 1) * dh, Wp = OW + (KW - 1) * dw, plane = in_place ? H * W : Hp * Wp;
  int64_t *QLLC_RESTRICT off = (int64_t *)(scratch + F_MR * F_V);
  float *QLLC_RESTRICT xp = (float *)(off + 2 * ((K + 7) / 8 * 8));
  float t[T_NP * T_TP] __attribute__((aligned(64)));
  for (int64_t k = 0; k < K; k++) {
    const int64_t c = k / (KH * KW), kh = k / KW % KH, kw = k % KW;
    off[k] = c * plane + kh * dh * Wp + kw * dw;
  }
  const int64_t nrun = (OW + T_NP - 1) / T_NP; /* runs per output row: OW / nrun pixels, the first OW % nrun
                                                  of them one more */
  const int64_t Mb = (M + T_NB - 1) / T_NB * T_NB; /* the packed channels */
  for (int64_t n = 0; n < N; n++) {
    const float *xn = x + n * C * H * W;
    float *yn = y + n * M * NP;
    if (!in_place) f32d_pad(xp, xn, C, H, W, Hp, Wp, pt, pl);
    const float *xi = in_place ? xn : xp;
    for (int64_t oh = 0; oh < OH; oh++)
      for (int64_t r = 0, ow = 0; r < nrun; r++) {
        const int64_t np = OW / nrun + (r < OW % nrun);
        const float *xq = xi + oh * Wp + ow;
        float *yq = yn + oh * OW + ow;
        for (int64_t m0 = 0; m0 < M;) {
          /* 4 vectors (two blocks) where the run has at most 7 pixels and two blocks are left, else 2 or 1 */
          const int nv = np <= T_ACC / 4 && m0 + 2 * T_NB <= Mb ? 4 : M - m0 > F_V ? 2 : 1;
          const int64_t mc = imin(nv * F_V, M - m0);
          float init[4 * F_V] __attribute__((aligned(64)));
          for (int64_t j = 0; j < nv * F_V; j++) init[j] = b && j < mc ? b[m0 + j] : 0.0f;
          const float *w = wp + m0 * K; /* block m0 / 32 */
          /* stored whole where the 16 floats from the run's first pixel stay inside the channel's plane, else
             through the copy (an image's last pixels) */
          float *yd = oh * OW + ow + F_V <= NP ? yq + m0 * NP : NULL;
          if (nv == 4) f32t_tiles(np, 4, t, yd, NP, mc, xq, off, w, K, init, lo, hi);
          else if (nv == 2) f32t_tiles(np, 2, t, yd, NP, mc, xq, off, w, K, init, lo, hi);
          else f32t_tiles(np, 1, t, yd, NP, mc, xq, off, w, K, init, lo, hi);
          if (!yd)
            for (int64_t j = 0; j < mc; j++)
              for (int64_t p = 0; p < np; p++) yq[(m0 + j) * NP + p] = t[p * T_TP + j];
          m0 += mc;
        }
        ow += np;
      }
  }
}

__attribute__((target("avx512f"))) void qllc_k_conv2dt1_f32_f32_f32__avx512(F32_CONV_PARAMS) {
  (void)stride_h, (void)stride_w, (void)group; /* 1, 1, 1: the row's predicate */
  conv_f32t_body(y, x, wp, bias, N, C, H, W, M, OH, OW, KH, KW, pad_top, pad_left, dil_h, dil_w, act_lo, act_hi,
                 (float *)scratch);
}

#undef T_ACC
#undef T_NP
#undef T_NB
#undef T_TP
#endif
