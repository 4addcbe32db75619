/* targets/x86_64/kernels/x86_q8_fc.h: the body of the x86_64 variants of the fused 8-bit FC layer
 * (variants.def: qllc_k_fc_*__avx512vnni, __avxvnni, __avx2), bit-identical to the scalar
 * qllc_k_fc_* of q_layers.c (a part of x86_q8.c, which describes the family). Included by x86_q8_isa.h
 * once per ISA, which also defines the exported kernels.
 *
 * FC (weights QLLC_LAYOUT_K4N16): up to QLLC_FC_MB input rows are copied to scratch (u8, K padded to a
 * multiple of 4 with zeros); a register tile of FC_R rows x FC_NJ vectors of VL output channels
 * broadcasts 4 input bytes of a row against the 64-byte weight line of 16 channels (ymm: one half).
 * One row (GEMV) keeps two accumulator sets, for even and odd k4, to hide the vpdpbusd latency; it is
 * bound by the weights' bandwidth. */

/* FC tile: R (<= FC_R) rows of the packed input (xs, ldx bytes apart) x FC_NJ vectors of VL channels
   (wc[j]: the channels' first 64-byte weight line; 64 bytes per k4). Accumulators start at the bias;
   the epilogue writes cnt[j] channels of each row. */
QI void QN(qx_fc_tile)(const int R, uint8_t *y, int64_t ldy, const uint8_t *xs, int64_t ldx,
                       const int8_t *const *wc, int64_t nk4, const V *bv, const VQ *q, int32_t z_y,
                       int32_t act_lo, int32_t act_hi, const int64_t *cnt) {
  V acc[FC_R][FC_NJ];
  QX_UNROLL for (int r = 0; r < R; r++) QX_UNROLL for (int j = 0; j < FC_NJ; j++) acc[r][j] = bv[j];
  int64_t k4 = 0;
  if (R == 1) { /* GEMV: two accumulator sets (even / odd k4) */
    V acc2[FC_NJ];
    QX_UNROLL for (int j = 0; j < FC_NJ; j++) acc2[j] = VSET1(0);
    for (; k4 + 2 <= nk4; k4 += 2) {
      const V b0 = VBCAST(xs + k4 * 4), b1 = VBCAST(xs + k4 * 4 + 4);
      QX_UNROLL for (int j = 0; j < FC_NJ; j++) {
        acc[0][j] = VDP(acc[0][j], b0, VLOAD(wc[j] + k4 * 64));
        acc2[j] = VDP(acc2[j], b1, VLOAD(wc[j] + k4 * 64 + 64));
      }
    }
    QX_UNROLL for (int j = 0; j < FC_NJ; j++) acc[0][j] = VADD(acc[0][j], acc2[j]);
  }
  for (; k4 < nk4; k4++) {
    V w[FC_NJ];
    QX_UNROLL for (int j = 0; j < FC_NJ; j++) w[j] = VLOAD(wc[j] + k4 * 64);
    QX_UNROLL for (int r = 0; r < R; r++) {
      const V b = VBCAST(xs + r * ldx + k4 * 4);
      QX_UNROLL for (int j = 0; j < FC_NJ; j++) acc[r][j] = VDP(acc[r][j], b, w[j]);
    }
  }
  /* the output constants are made here, not kept in registers across the loop */
  const V zy = VSET64(z_y), lo = VSET64(act_lo), hi = VSET64(act_hi);
  QX_UNROLL for (int j = 0; j < FC_NJ; j++) {
    if (cnt[j] <= 0) continue;
    QX_UNROLL for (int r = 0; r < R; r++) VSTORE8(y + r * ldy + j * VL, VREQ(acc[r][j], &q[j], zy, lo, hi), cnt[j]);
  }
}

QS void QN(qx_fc)(uint8_t *y, const uint8_t *x, const int xi8, const int8_t *wp, const int32_t *bias,
                  const int32_t *m, const int32_t *n, int64_t M, int64_t N, int64_t K, int32_t z_y, int32_t act_lo,
                  int32_t act_hi, uint8_t *scratch) {
  enum { CB = FC_NJ * VL };
  const int64_t Kp4 = (K + 3) & ~(int64_t)3, nk4 = Kp4 / 4, Np = (N + 15) & ~(int64_t)15;
  const uint8_t flip = xi8 ? 0x80 : 0;
  int32_t bl[CB] __attribute__((aligned(64))), ml[CB] __attribute__((aligned(64))), nl[CB] __attribute__((aligned(64)));
  for (int64_t i0 = 0; i0 < M; i0 += QLLC_FC_MB) {
    const int64_t mb = M - i0 < QLLC_FC_MB ? M - i0 : QLLC_FC_MB;
    for (int64_t r = 0; r < mb; r++) VCOPYFLIP(scratch + r * Kp4, x + (i0 + r) * K, K, Kp4, flip);
    for (int64_t c0 = 0; c0 < N; c0 += CB) {
      const int8_t *wc[FC_NJ];
      int64_t cnt[FC_NJ];
      V bv[FC_NJ];
      VQ q[FC_NJ];
      QX_UNROLL for (int j = 0; j < FC_NJ; j++) {
        const int64_t c = c0 + j * VL, left = N - c;
        /* a vector past the packed channels re-reads the first one; its results are not stored */
        const int64_t cc = c < Np ? c : c0;
        wc[j] = wp + ((cc / QLLC_NB) * nk4 * QLLC_NB + cc % QLLC_NB) * 4;
        cnt[j] = left < 0 ? 0 : left > VL ? VL : left;
      }
      for (int t = 0; t < CB; t++) {
        const int in = c0 + t < N;
        bl[t] = in ? bias[c0 + t] : 0, ml[t] = in ? m[c0 + t] : 0, nl[t] = in ? n[c0 + t] : 0;
      }
      QX_UNROLL for (int j = 0; j < FC_NJ; j++) {
        bv[j] = VLOAD(bl + j * VL);
        VQPREP(&q[j], VLOAD(ml + j * VL), VLOAD(nl + j * VL));
      }
      for (int64_t r0 = 0; r0 < mb; r0 += FC_R) {
        const int64_t rr = mb - r0 < FC_R ? mb - r0 : FC_R;
        uint8_t *yr = y + (i0 + r0) * N + c0;
        const uint8_t *xr = scratch + r0 * Kp4;
#define QX_FC_CASE(RR) \
  case RR: QN(qx_fc_tile)(RR, yr, N, xr, Kp4, wc, nk4, bv, q, z_y, act_lo, act_hi, cnt); break;
        switch (rr) {
#if FC_R >= 6
          QX_FC_CASE(6)
#endif
#if FC_R >= 5
          QX_FC_CASE(5)
#endif
#if FC_R >= 4
          QX_FC_CASE(4)
#endif
          QX_FC_CASE(3)
          QX_FC_CASE(2)
          default: QN(qx_fc_tile)(1, yr, N, xr, Kp4, wc, nk4, bv, q, z_y, act_lo, act_hi, cnt);
        }
#undef QX_FC_CASE
      }
    }
  }
}
