/* targets/x86_64/kernels/x86_q8_isa.h: the three ISAs of the 8-bit FC and panel Conv variants as one
 * template, and their exported kernels. Included once by x86_q8.c; for each ISA it defines the vector
 * type, the primitives (x86_q8_vec.h, x86_q8_epilogue.h, x86_q8_pack.h, the packers of x86_q8_panel.h)
 * and the tile sizes as macros, includes the bodies (x86_q8_fc.h, x86_q8_panel.h) with QX_TEMPLATE
 * defined, defines the ISA's exported kernels, then undefines the macros (this header again, with
 * QX_ISA_UNDEF). The four element combinations of an ISA share one body per layer. */
#ifndef QX_ISA_UNDEF
#define QX_C2(a, b) a##__##b
#define QX_C(a, b) QX_C2(a, b)
#define QN(name) QX_C(name, ISA)
#define QT __attribute__((target(TGT)))
#define QI static inline __attribute__((always_inline)) QT
#define QS static QT /* the layer bodies: one per ISA, shared by the four element combinations */
#define QX_TEMPLATE 1

/* The exported kernels: every input / output combination, calling the one body of the ISA. The
   output type only names the bytes (act_lo / act_hi clamp to its range); the input type only decides
   the value xored into every input byte (0x80: i8 -> u8). */
#define QX_WRAP(TI, ti, TO, to, xi8)                                                                             \
  QLLC_KERNEL QT void QX_C(qllc_k_fc_##ti##_i8_##to, ISA)(TO *y, const TI *x, const int8_t *wp,                  \
                                                          const int32_t *bias_c, const int32_t *m,               \
                                                          const int32_t *n, int64_t M, int64_t N, int64_t K,     \
                                                          int32_t z_x, int32_t z_y, int32_t act_lo,              \
                                                          int32_t act_hi, uint8_t *scratch) {                    \
    (void)z_x; /* folded into bias_c */                                                                          \
    QN(qx_fc)((uint8_t *)y, (const uint8_t *)x, xi8, wp, bias_c, m, n, M, N, K, z_y, act_lo, act_hi, scratch);   \
  }                                                                                                              \
  QLLC_KERNEL QT void QX_C(qllc_k_conv2d_##ti##_i8_##to, ISA)(                                                   \
      TO *y, const TI *x, const int8_t *wp, const int32_t *bias_c, const int32_t *m, const int32_t *n,          \
      int64_t N, int64_t C, int64_t H, int64_t W, int64_t M, int64_t OH, int64_t OW, int64_t KH, int64_t KW,    \
      int64_t stride_h, int64_t stride_w, int64_t pad_top, int64_t pad_left, int64_t dil_h, int64_t dil_w,      \
      int64_t group, int32_t z_x, int32_t z_y, int32_t act_lo, int32_t act_hi, uint8_t *scratch) {              \
    QN(qx_conv)((uint8_t *)y, (const uint8_t *)x, xi8, wp, bias_c, m, n, N, C, H, W, M, OH, OW, KH, KW,          \
                stride_h, stride_w, pad_top, pad_left, dil_h, dil_w, group, z_x, z_y, act_lo, act_hi, scratch);  \
  }
#define QX_WRAPS                         \
  QX_WRAP(int8_t, i8, int8_t, i8, 1)     \
  QX_WRAP(int8_t, i8, uint8_t, u8, 1)    \
  QX_WRAP(uint8_t, u8, int8_t, i8, 0)    \
  QX_WRAP(uint8_t, u8, uint8_t, u8, 0)

#define ISA avx512vnni
#define TGT QX_TZ
#define V __m512i
#define VL 16
#define VQ qx_zq
#define VSET1 z_set1
#define VSET64 z_set64
#define VLOAD z_load
#define VBCAST z_bcast
#define VDP z_dp
#define VADD z_add
#define VQPREP z_qprep
#define VREQ z_req
#define VREQH z_reqh
#define VSTORE8 z_store8
#define VSTORE8X4 z_store8x4
#define VCOPYFLIP z_copyflip
#define VFILLS1 z_fill_s1
#define VTR4 z_tr4
#define VPACK_S1 z_pack_s1
#define VPACK_S2 z_pack_s2
#define VCV_TAIL z_tail_run
#define VTAIL_COMPACT z_tail_compact
#define FC_R 6  /* FC tile: 6 rows x 4 zmm (64 channels): 24 accumulators */
#define FC_NJ 4
#define CV_R 6  /* conv tile: 6 channels x 4 zmm (64 pixels) */
#define CV_NJ 4
#define CV_R3 8 /* narrow panels: 8 channels x 3 zmm, 12 x 2, 16 x 1 */
#define CV_R2 12
#define CV_R1 16
#define CV_RMAX 16
#include "x86_q8_fc.h"
#include "x86_q8_panel.h"
QX_WRAPS
#define QX_ISA_UNDEF
#include "x86_q8_isa.h"
#undef QX_ISA_UNDEF

#define ISA avxvnni
#define TGT "avx2,avxvnni"
#define V __m256i
#define VL 8
#define VQ qx_yq
#define VSET1 y_set1
#define VSET64 y_set64
#define VLOAD y_load
#define VBCAST y_bcast
#define VDP yv_dp
#define VADD y_add
#define VQPREP y_qprep
#define VREQ y_req
#define VSTORE8 y_store8
#define VCOPYFLIP y_copyflip
#define VFILLS1 y_fill_s1
#define VTR4 y_tr4
#define VPACK_S1 y_pack_s1
#define FC_R 6  /* 6 rows x 2 ymm (16 channels): 12 accumulators + 2 weights + 1 broadcast of 16 registers */
#define FC_NJ 2
#define CV_R 6  /* 6 channels x 2 ymm (16 pixels) */
#define CV_NJ 2
#define CV_R1 12 /* narrow panels: 12 channels x 1 ymm */
#define CV_RMAX 12
#include "x86_q8_fc.h"
#include "x86_q8_panel.h"
QX_WRAPS
#define QX_ISA_UNDEF
#include "x86_q8_isa.h"
#undef QX_ISA_UNDEF

#define ISA avx2
#define TGT "avx2"
#define V __m256i
#define VL 8
#define VQ qx_yq
#define VSET1 y_set1
#define VSET64 y_set64
#define VLOAD y_load
#define VBCAST y_bcast
#define VDP ye_dp
#define VADD y_add
#define VQPREP y_qprep
#define VREQ y_req
#define VSTORE8 y_store8
#define VCOPYFLIP y_copyflip
#define VFILLS1 y_fill_s1
#define VTR4 y_tr4
#define VPACK_S1 y_pack_s1
#define FC_R 3  /* the emulation needs the split halves of the operands in registers too */
#define FC_NJ 2
#define CV_R 3
#define CV_NJ 2
#define CV_R1 6
#define CV_RMAX 6
#include "x86_q8_fc.h"
#include "x86_q8_panel.h"
QX_WRAPS
#define QX_ISA_UNDEF
#include "x86_q8_isa.h"
#undef QX_ISA_UNDEF
#undef QX_WRAPS
#undef QX_WRAP
#undef QX_TEMPLATE

#else /* QX_ISA_UNDEF: after an ISA's kernels, its macros ------------------------------------------------ */
#undef ISA
#undef TGT
#undef V
#undef VL
#undef VQ
#undef VSET1
#undef VSET64
#undef VLOAD
#undef VBCAST
#undef VDP
#undef VADD
#undef VQPREP
#undef VREQ
#undef VREQH
#undef VSTORE8
#undef VSTORE8X4
#undef VCOPYFLIP
#undef VFILLS1
#undef VTR4
#undef VPACK_S1
#undef VPACK_S2
#undef VCV_TAIL
#undef VTAIL_COMPACT
#undef FC_R
#undef FC_NJ
#undef CV_R
#undef CV_NJ
#undef CV_R1
#undef CV_R2
#undef CV_R3
#undef CV_RMAX
#endif /* QX_ISA_UNDEF */
