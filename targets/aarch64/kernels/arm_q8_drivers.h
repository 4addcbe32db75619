/* targets/aarch64/kernels/arm_q8_drivers.h: the FC and conv drivers of arm_q8.c, included once per ISA
 * with QA_FC_NAME, QA_CONV_NAME, QA_DRV_ATTR (the ISA's target attribute) and QA_DRV_MM (1 for i8mm, 0
 * for dotprod) defined; undefines them at the end. A tile is always-inline with its ISA's target, so it
 * is called straight from a function of that target: hence a driver per ISA, from one text. */

/* FC: per block of 16 output channels (a K4N16 weight block), tiles of 4 input rows, then the rest. */
QA_DRV_ATTR void QA_FC_NAME(uint8_t *y, const uint8_t *x, const int8_t *wp, const int32_t *bias, const int32_t *m,
                            const int32_t *n, int64_t M, int64_t N, int64_t K, uint8_t flip, int32_t z_y, int32_t lo,
                            int32_t hi) {
  const int mm = QA_DRV_MM;
  const int64_t nk4 = qllc_round_up(K, 4) / 4;
  for (int64_t c0 = 0; c0 < N; c0 += 16) {
    const int64_t ch = N - c0 < 16 ? N - c0 : 16;
    const uint8_t *wb = (const uint8_t *)wp + (c0 / 16) * nk4 * 64;
    int32_t bb[16], mb[16], nbv[16];
    qa_block_params(bb, mb, nbv, bias, m, n, c0, ch);
    int64_t i0 = 0;
    if (mm) { /* 2 row pairs, then 1 or 2 pairs (an odd count repeats its last row) */
      for (; i0 + 4 <= M; i0 += 4)
        qa_fc_mm_tile(2, y + c0, x, wb, bb, mb, nbv, i0, 4, N, K, nk4, ch, flip, z_y, lo, hi);
      if (M - i0 > 2) qa_fc_mm_tile(2, y + c0, x, wb, bb, mb, nbv, i0, M - i0, N, K, nk4, ch, flip, z_y, lo, hi);
      else if (M > i0) qa_fc_mm_tile(1, y + c0, x, wb, bb, mb, nbv, i0, M - i0, N, K, nk4, ch, flip, z_y, lo, hi);
    } else { /* 4 rows, then 3, 2 or 1 */
      for (; i0 + 4 <= M; i0 += 4)
        qa_fc_dot_tile(4, y + c0, x, wb, bb, mb, nbv, i0, N, K, nk4, ch, flip, z_y, lo, hi);
      switch (M - i0) {
      case 3: qa_fc_dot_tile(3, y + c0, x, wb, bb, mb, nbv, i0, N, K, nk4, ch, flip, z_y, lo, hi); break;
      case 2: qa_fc_dot_tile(2, y + c0, x, wb, bb, mb, nbv, i0, N, K, nk4, ch, flip, z_y, lo, hi); break;
      case 1: qa_fc_dot_tile(1, y + c0, x, wb, bb, mb, nbv, i0, N, K, nk4, ch, flip, z_y, lo, hi); break;
      default: break;
      }
    }
  }
}

/* Conv: per image and group, panels of output pixels packed into the scratch buffer, then the channel
   tiles of the ISA over it. */
QA_DRV_ATTR void QA_CONV_NAME(uint8_t *y, const uint8_t *x, const int8_t *wp, const int32_t *bias,
                        const int32_t *m, const int32_t *n, const qllc_conv_shape *s, uint8_t flip, uint8_t *scratch) {
  const int mm = QA_DRV_MM;
  const int64_t Cg = s->C / s->group, Mg = s->M / s->group, K = Cg * s->KH * s->KW, NP = s->OH * s->OW;
  const int64_t Kp4 = qllc_round_up(K, 4), G = mm ? 8 : 4, Kp = qllc_round_up(K, G);
  const int64_t PP = mm ? qllc_arm_mm_panel(K) : QLLC_CONV_PB;
  const uint8_t zu = (uint8_t)((uint8_t)s->z_x ^ flip);
  uint32_t psum[QLLC_CONV_PB] __attribute__((aligned(16)));
  for (int64_t b = 0; b < s->N; b++)
    for (int64_t g = 0; g < s->group; g++) {
      const uint8_t *xg = x + (b * s->C + g * Cg) * s->H * s->W;
      for (int64_t p0 = 0; p0 < NP; p0 += PP) {
        const int64_t np = NP - p0 < PP ? NP - p0 : PP;
        qa_pack(scratch, xg, Cg, s->H, s->W, s->OW, s->KH, s->KW, s->sh, s->sw, s->pt, s->pl, s->dh, s->dw, p0, np,
                G, PP, Kp, zu, flip);
        if (!mm) { /* pixel sums of the panel (u8), for the dotprod correction */
          for (int64_t v = 0; v < PP; v += 4) {
            uint32x4_t sacc = vdupq_n_u32(0);
            for (int64_t k4 = 0; k4 < Kp4 / 4; k4++) {
              const uint8x16_t pv = vld1q_u8(scratch + (k4 * PP + v) * 4);
              /* plain NEON: widen-and-add the 4 bytes of each pixel (no dotprod needed here) */
              const uint16x8_t s16 = vpaddlq_u8(pv);
              sacc = vaddq_u32(sacc, vpaddlq_u16(s16));
            }
            vst1q_u32(psum + v, sacc);
          }
        }
        for (int64_t oc = 0; oc < Mg; oc += 4) {
          const int64_t o = g * Mg + oc, cr = Mg - oc < 4 ? Mg - oc : 4;
          uint8_t *yo = y + (b * s->M + o) * NP + p0;
          const uint8_t *wr = (const uint8_t *)wp + o * Kp4;
          for (int64_t pv = 0; pv < np; pv += 16) {
            const int64_t cnt = np - pv < 16 ? np - pv : 16;
            if (mm) {
              if (cr > 2)
                qa_cv_mm_tile(2, yo, NP, scratch, PP, wr, cr, K, Kp4, bias + o, m + o, n + o, pv, cnt, s->z_y, s->lo,
                              s->hi);
              else
                qa_cv_mm_tile(1, yo, NP, scratch, PP, wr, cr, K, Kp4, bias + o, m + o, n + o, pv, cnt, s->z_y, s->lo,
                              s->hi);
            } else {
              switch (cr) {
              case 4: qa_cv_dot_tile(4, yo, NP, scratch, psum, wr, Kp4, bias + o, m + o, n + o, pv, cnt, s->z_y, s->lo, s->hi); break;
              case 3: qa_cv_dot_tile(3, yo, NP, scratch, psum, wr, Kp4, bias + o, m + o, n + o, pv, cnt, s->z_y, s->lo, s->hi); break;
              case 2: qa_cv_dot_tile(2, yo, NP, scratch, psum, wr, Kp4, bias + o, m + o, n + o, pv, cnt, s->z_y, s->lo, s->hi); break;
              default: qa_cv_dot_tile(1, yo, NP, scratch, psum, wr, Kp4, bias + o, m + o, n + o, pv, cnt, s->z_y, s->lo, s->hi); break;
              }
            }
          }
        }
      }
    }
}
#undef QA_FC_NAME
#undef QA_CONV_NAME
#undef QA_DRV_ATTR
#undef QA_DRV_MM
