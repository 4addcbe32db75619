/* targets/aarch64/kernels/arm_q8_conv.h: the conv driver of arm_q8.c (included once per ISA with
 * QA_CONV_NAME, QA_CONV_ATTR and QA_CONV_MM defined: 1 for i8mm, 0 for dotprod). Per image and group,
 * panels of output pixels packed into the scratch buffer, then the channel tiles of the ISA over it. */
QA_CONV_ATTR void QA_CONV_NAME(uint8_t *y, const uint8_t *x, const int8_t *wp, const int32_t *bias,
                        const int32_t *m, const int32_t *n, const qa_conv *s, uint8_t flip, uint8_t *scratch) {
  const int mm = QA_CONV_MM;
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
