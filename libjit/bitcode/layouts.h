/* libjit/bitcode/layouts.h: the packed weight layouts and scratch sizes shared by the ISA kernel
 * variants (targets/<arch>/kernels/) and the compiler's pack functions (src/lower/pack.c).
 *
 * A variant of a fused layer (Conv, FC) does not read the scalar kernel's w[channels][K]: the lowering
 * packs the constant weights at compile time into the layout its registry row names, and gives the
 * kernel a bias with every constant correction already folded in. Activations are packed at run time
 * into a scratch buffer that the lowering allocates in the activation region (never the stack); its
 * size is the function below for the layout, so the compiler and the kernel agree on it.
 *
 * Layouts (K = the reduction length: C/group*KH*KW for conv, K for FC; Kp = K rounded up):
 *
 *  QLLC_LAYOUT_ROWS_K4 (conv, 8-bit weights): w[M][Kp4] int8, Kp4 = K rounded up to a multiple of 4,
 *      zeros past K. Each output channel's weights stay a contiguous row (ONNX order c, kh, kw), so a
 *      kernel broadcasts 4 consecutive weights as one 32-bit lane (vpdpbusd / sdot operand).
 *  QLLC_LAYOUT_K4N16 (FC, 8-bit weights): for each block of 16 output channels nb (N rounded up to 16,
 *      zero channels past N), for each group of 4 reductions k4 (K rounded up to 4, zeros past K):
 *      16 x 4 bytes w[nb*16 + j][k4*4 + t] at ((nb * Kp4/4 + k4) * 16 + j) * 4 + t. One 64-byte line
 *      per (nb, k4) is one zmm operand of vpdpbusd (two ymm halves for 256-bit variants).
 *  QLLC_LAYOUT_ROWS_K2 (conv, 16-bit in): w[M][Kp2] int16 (16x8 weights widened), Kp2 = K rounded up
 *      to a multiple of 2, zeros past K.
 *  QLLC_LAYOUT_ROWS_K2_SPLIT (conv, int16 x int16): two planes of ROWS_K2, lo then hi, each w[M][Kp2]
 *      int16: lo = w & 0xff (0 .. 255), hi = (w - lo) >> 8 (-128 .. 127), so w = hi * 256 + lo and
 *      every vpdpwssd product stays below 2^23 (runs of QLLC_RUN_SPLIT pairs are exact in int32).
 *  QLLC_LAYOUT_K2N16 (FC, 16-bit in): per block nb of 16 channels, per pair k2: 16 x 2 int16
 *      w[nb*16 + j][k2*2 + t] at ((nb * Kp2/2 + k2) * 16 + j) * 2 + t.
 *  QLLC_LAYOUT_K2N16_SPLIT (FC, int16 x int16): as K2N16 but each (nb, k2) step holds the 16 x 2 lo
 *      values, then the 16 x 2 hi values (64 int16 per step).
 *  QLLC_LAYOUT_DW_Q4 (depthwise conv, 8-bit weights, group == C == M, K = KH*KW): per channel c a row
 *      of qllc_dw_row(K) = round_up(K + 3, 4) bytes, w[c][k] at c * qllc_dw_row(K) + k (ONNX order kh,
 *      kw), zeros past K. The packer only knows K (not KW), so the rows are not split per kernel row:
 *      the kernel reads the 4 taps w[c][kh][4q .. 4q+3] of quad q as one unaligned 32-bit load at
 *      kh*KW + 4q (the 3 bytes of slack keep the last quad inside the row) and clears the bytes past
 *      KW, once per channel. Scratch: qllc_scratch_dw(); shapes the variant takes: qllc_dw_fits().
 *  QLLC_LAYOUT_ROWS_C4 (conv, 8-bit weights, C/group a multiple of 4, T = KH*KW taps): w[M][K], each
 *      output channel's row in the reduction order (q, kh, kw, i) of channel c = 4q + i: ONNX's
 *      w[o][c][kh][kw] at o * K + (q * T + kh * KW + kw) * 4 + i. No padding (K = 4 * (C/group/4) * T).
 *      The direct conv variant (qllc_c4_fits) broadcasts the 4 bytes of channels 4q .. 4q+3 of one tap.
 *      Scratch: qllc_scratch_c4().
 *  QLLC_LAYOUT_C4N16 (conv, 8-bit weights, group 1, C a multiple of 4, T = KH*KW taps): K4N16 over the
 *      rows of ROWS_C4: for each block nb of 16 output channels (M rounded up to 16, zero channels past
 *      M), for each k4 = q * T + kh * KW + kw: the 16 x 4 bytes of channels 4q .. 4q+3 at that tap,
 *      w[nb*16 + j][c = 4q + i][kh][kw] at ((nb * K/4 + k4) * 16 + j) * 4 + i. The direct conv with
 *      output channels in the lanes (qllc_cl_fits) multiplies one 64-byte line by the 4 input bytes of
 *      one pixel. Scratch: qllc_scratch_cl().
 *  QLLC_LAYOUT_ROWS_C2 / QLLC_LAYOUT_ROWS_C2_SPLIT (conv, 16-bit in, C/group even, T = KH*KW taps):
 *      ROWS_K2 / ROWS_K2_SPLIT over rows in the reduction order (q, kh, kw, i) of channel c = 2q + i:
 *      ONNX's w[o][c][kh][kw] at o * K + (q * T + kh * KW + kw) * 2 + i (K is even: no padding). The
 *      direct 16-bit conv broadcasts the pair of channels 2q, 2q+1 of one tap. Scratch: qllc_scratch_c2().
 *      ROWS_C2 (16x8) ends with a trailer of one byte per output channel (qllc_pack_size counts it,
 *      qllc_pack_w16_c2 writes 0): 1 where the channel's constants bound every sum inside int32,
 *      qllc_c2_int32(), and its shift n and the output zero point pass qllc_req32_fits(), which
 *      qllc_pack_c2_int32() tests exactly at compile time; such a channel accumulates in one int32 run
 *      from its bias, with no widening to int64, and requantizes in 32-bit lanes (the kernel checks
 *      qllc_req32_fits again: a set byte with another n runs widened). 0: runs widened to int64 and the int64 requantization.
 *  QLLC_LAYOUT_T64N16 (conv on AMX with implicit im2col, 8-bit weights, group 1, C a multiple of 4, T =
 *      KH*KW taps): B tiles. Per block nb of 16 output channels (M rounded up to 16, zero channels past
 *      M), per tap t = kh * KW + kw, per channel block cb of kc = qllc_t64_kc(C) channels (64; C when C <
 *      64), ncb = qllc_t64_ncb(C) blocks starting at qllc_t64_c0(C, cb) (64 cb; the last one at C - 64, so
 *      an A tile never reads past a pixel's C bytes, with zero weights for the channels the block before
 *      it already holds): kc / 4 lines of 16 channels x 4 bytes, w[nb*16 + j][c0 + 4 q + i][t] at
 *      (((nb * T + t) * ncb + cb) * (kc / 4) + q) * 64 + j * 4 + i. One block is one B tile (kc / 4 rows
 *      of 64 bytes) and each of its lines a K4N16 line. Size: qllc_t64n16_size(); scratch:
 *      qllc_scratch_amxcl().
 *  QLLC_LAYOUT_K64N16 (FC on AMX): K4N16 with K rounded up to 64 (zeros past K), so that every B tile
 *      of a block of 16 channels has 16 rows. Scratch: qllc_scratch_amxfc().
 *
 *  QLLC_LAYOUT_F32_N32 (float FC, issue 26; and the transposed stride-1 float conv, x86_f32t.h, its M
 *      output channels as the columns and K = C*KH*KW): for each block nb of 32 output columns (N rounded up to
 *      32, zero columns past N), the 32 weights of each reduction k one after another: w[nb*32 + j][k]
 *      at (nb * K + k) * 32 + j, float. A float FC tile reads one 16-float vector of a line per k
 *      (targets/x86_64/kernels/x86_f32.c). The float variants take the node's bias as it is.
 *  QLLC_LAYOUT_F32_M24 (float conv, group 1, K = C*KH*KW): for each block mb of 24 output channels (M
 *      rounded up to 24, zero channels past M), the 24 weights of each reduction k one after another:
 *      w[mb*24 + i][k] at (mb * K + k) * 24 + i, float. The tile's multiplies take them as embedded
 *      broadcasts, against input panels packed at run time (libjit/bitcode/conv_panel_f32.h).
 *
 * Bias passed to a variant ("bias_c", per output channel, N entries, not padded):
 *   8-bit variants computing u8 x s8 (vpdpbusd): an i8 input is shifted to u8 (x + 128) when packed,
 *   so bias_c[c] = bias[c] - 128 * sum_k w[c][k] for i8 inputs (bias[c] as the scalar kernel gets it,
 *   the -z_x * sum w term already in), computed modulo 2^32 like the int32 accumulator; u8 inputs:
 *   bias_c = bias. Padded taps read the input zero point (z_x, shifted like every other input value).
 *   T64N16 and K64N16 (the AMX kernels that read the activations where they lie): bias_c = bias for
 *   both input kinds, since an i8 input is multiplied as signed (TDPBSSD), a u8 one as unsigned (TDPBUSD).
 *   16-bit variants: bias_c = bias (int64, no shift: vpdpwssd is signed x signed).
 *
 * Who reads which (the registry rows, src/lower/kernels.def): ROWS_K4 / K4N16 with the u8 x s8 bias are
 * the 8-bit operands of every architecture: x86_64 avx512vnni, avxvnni, avx2 and amx (AMX-INT8 takes 16
 * K4N16 lines of one channel block as a B tile, 16 ROWS_K4 rows as an A tile), aarch64 i8mm (USMMLA;
 * the K4N16 lines k4, k4+1 zipped into channel pairs of 8 reductions) and dotprod (UDOT on the weights
 * shifted to u8 in the register, the 128 * sum of the activations subtracted). ROWS_K2 / K2N16 hold
 * plain int16 weights for the x86_64 16x8 variants and both aarch64 neon variants (16x8 and int16 x
 * int16: SMULL is exact for any pair), the _SPLIT forms are x86_64's int16 x int16 (vpdpwssd).
 */
#ifndef QLLC_LAYOUTS_H
#define QLLC_LAYOUTS_H
#include <stdint.h>

typedef enum qllc_layout {
  QLLC_LAYOUT_PLAIN = 0,      /* the scalar kernel's own: conv w[M][C/g][KH][KW], fc w[N][K] */
  QLLC_LAYOUT_ROWS_K4,
  QLLC_LAYOUT_K4N16,
  QLLC_LAYOUT_ROWS_K2,
  QLLC_LAYOUT_ROWS_K2_SPLIT,
  QLLC_LAYOUT_K2N16,
  QLLC_LAYOUT_K2N16_SPLIT,
  QLLC_LAYOUT_DW_Q4,
  QLLC_LAYOUT_ROWS_C4,
  QLLC_LAYOUT_C4N16,
  QLLC_LAYOUT_ROWS_C2,
  QLLC_LAYOUT_ROWS_C2_SPLIT,
  QLLC_LAYOUT_T64N16,
  QLLC_LAYOUT_K64N16,
  QLLC_LAYOUT_F32_N32,
  QLLC_LAYOUT_F32_M24,
} qllc_layout;

#define QLLC_NB 16          /* output channels per FC weight block */
#define QLLC_CONV_PB 64     /* output pixels per packed conv activation panel (at most) */
#define QLLC_FC_MB 64       /* input rows per packed FC activation panel (at most) */
#define QLLC_RUN_16X8 128   /* vpdpwssd pairs per exact int32 run, 16x8: 128 * 2 * 2^15 * 2^7 = 2^30 */
#define QLLC_RUN_SPLIT 128  /* the same for the split int16 x int16 planes: 128 * 2 * 2^15 * 255 < 2^31 */

/* 1 when one int32 run from the bias holds every partial sum of a 16x8 output channel exactly: its
 * int8 weights' sum_k |w[k]| = wabs and its bias b (-z_x * sum w folded in) give
 * 2^15 * wabs + |b| < 2^31, so |b + sum_k x[k] * w[k]| < 2^31 for any int16 x (|x| <= 2^15, padded
 * taps read z_x, an int16 too). The ROWS_C2 trailer holds it (and 33 <= n <= 62) per output channel. */
/* 1 when the x86_64 kernels' 32-bit requantization (targets/x86_64/kernels/x86_reqh.h) gives the exact
   result for shift n and output zero point z_y: 33 <= n <= 62 and |z_y| 2^(n-32) < 2^29. */
static inline int qllc_req32_fits(int32_t n, int32_t z_y) {
  const int64_t za = z_y < 0 ? -(int64_t)z_y : z_y;
  return n >= 33 && n <= 62 && (za << (n - 32)) < ((int64_t)1 << 29);
}

static inline int qllc_c2_int32(int64_t wabs, int64_t b) {
  const int64_t lim = (int64_t)1 << 31;
  if (wabs < 0 || wabs >= ((int64_t)1 << 16) || b <= -lim || b >= lim) return 0;
  return wabs * 32768 + (b < 0 ? -b : b) < lim;
}

static inline int64_t qllc_round_up(int64_t v, int64_t m) { return (v + m - 1) / m * m; }

/* Scratch bytes a conv variant needs: one activation panel of Kp x QLLC_CONV_PB elements of esize
 * bytes (1 for 8-bit inputs, 2 for int16), Kp = K rounded up to 4 (8-bit) or 2 (16-bit). */
static inline int64_t qllc_scratch_conv(int64_t K, int64_t esize) {
  return qllc_round_up(K, esize == 1 ? 4 : 2) * QLLC_CONV_PB * esize;
}
/* Scratch bytes an FC variant needs: min(M, QLLC_FC_MB) packed input rows of Kp elements. */
static inline int64_t qllc_scratch_fc(int64_t M, int64_t K, int64_t esize) {
  return (M < QLLC_FC_MB ? M : QLLC_FC_MB) * qllc_round_up(K, esize == 1 ? 4 : 2) * esize;
}

/* Columns per block of QLLC_LAYOUT_F32_N32, output channels per block of QLLC_LAYOUT_F32_M24. */
#define QLLC_F32_NB 32
#define QLLC_F32_MB 24
/* The float FC variants' k chunk and rows per group (f32_blocked.h): each chunk of QLLC_F32_FC_KC k of x is
   copied for up to QLLC_F32_FC_ROWS rows at once (a multiple of QLLC_F32_MB), whose tiles then take each
   strip of the weights in turn. Their scratch: a tile of 24 x 16 floats (the last columns on a copy),
   then those rows of x (M rounded up to 24, at most QLLC_F32_FC_ROWS) for a chunk. The float conv
   variants': one input panel of 64 KiB, then that tile. */
#define QLLC_F32_FC_KC 512
#define QLLC_F32_FC_ROWS 72
static inline int64_t qllc_scratch_fc_f32(int64_t M) {
  const int64_t rows = qllc_round_up(M, QLLC_F32_MB);
  return (QLLC_F32_MB * 16 + QLLC_F32_FC_KC * (rows < QLLC_F32_FC_ROWS ? rows : QLLC_F32_FC_ROWS)) * 4;
}
static inline int64_t qllc_scratch_conv_f32(void) { return (16384 + QLLC_F32_MB * 16) * 4; }
/* The direct float conv (stride 1, group 1; targets/x86_64/kernels/x86_f32.h; the transposed one,
   x86_f32t.h, uses the same scratch, not its tile): a 1x1 conv without
   padding reads its input in place (qllc_f32d_in_place), any other is padded once per image into the
   scratch as C planes of Hp = OH + (KH-1)*dh rows of Wp = OW + (KW-1)*dw columns. Its scratch: a tile of
   24 x 16 floats, two tables of K = C*KH*KW int64 tap offsets, then the padded planes and 16 floats of
   slack (in place: C x 16 floats, the last strip of pixels copied). */
static inline int qllc_f32d_in_place(int64_t H, int64_t W, int64_t OH, int64_t OW, int64_t KH, int64_t KW,
                                     int64_t pt, int64_t pl) {
  return KH == 1 && KW == 1 && pt == 0 && pl == 0 && OH == H && OW == W;
}
static inline int64_t qllc_scratch_conv_f32d(int64_t C, int64_t H, int64_t W, int64_t OH, int64_t OW, int64_t KH,
                                             int64_t KW, int64_t pt, int64_t pl, int64_t dh, int64_t dw) {
  const int64_t Hp = OH + (KH - 1) * dh, Wp = OW + (KW - 1) * dw;
  const int64_t planes = qllc_f32d_in_place(H, W, OH, OW, KH, KW, pt, pl) ? C * 16 : C * Hp * Wp + 16;
  return (QLLC_F32_MB * 16 + 2 * 2 * qllc_round_up(C * KH * KW, 8) + planes) * 4;
}

/* Depthwise (QLLC_LAYOUT_DW_Q4). Bytes of one channel's packed weight row (K = KH*KW taps). */
static inline int64_t qllc_dw_row(int64_t K) { return qllc_round_up(K + 3, 4); }
/* Row pitch of the depthwise kernel's padded input plane: pad_left columns of z_x, the W input
 * columns, then at least 64 columns of z_x (a 64-byte window load starting at any output column whose
 * taps are not all in the right padding stays inside the row). */
static inline int64_t qllc_dw_pitch(int64_t W, int64_t pad_left) { return qllc_round_up(pad_left + W, 64) + 64; }
/* Scratch bytes the depthwise variant needs: the padded input plane of one channel, H rows plus one
 * row of z_x that stands for every padded row (any pad_top / pad_bottom), each qllc_dw_pitch() bytes.
 * KH, KW and the dilations do not change it (kept in the signature so the contract may grow). */
static inline int64_t qllc_scratch_dw(int64_t H, int64_t W, int64_t KH, int64_t KW, int64_t pad_top,
                                      int64_t pad_left, int64_t dil_h, int64_t dil_w) {
  (void)KH, (void)KW, (void)pad_top, (void)dil_h, (void)dil_w;
  return (H + 1) * qllc_dw_pitch(W, pad_left);
}
/* 1 when the depthwise variant takes the shape: a block of 16 output pixels and one quad of 4 taps
 * along kw must lie in one 64-byte window (15 * stride_w + (KW - 1) * dil_w <= 63), KW <= 16 (at most
 * 4 quads per kernel row) and KH * ceil(KW / 4) <= 64 (the per-channel weight table). */
static inline int qllc_dw_fits(int64_t KH, int64_t KW, int64_t stride_w, int64_t dil_w) {
  if (KH < 1 || KW < 1 || stride_w < 1 || dil_w < 1 || KW > 16) return 0;
  if (KH * ((KW + 3) / 4) > 64) return 0;
  return 15 * stride_w + (KW - 1) * dil_w <= 63;
}

/* The float depthwise variants (libjit/bitcode/f32_dw.h): one channel's input zero-padded and
 * split by stride phase into stride_h x stride_w planes of qllc_dwf32_rows() rows of qllc_dwf32_cols()
 * floats, each plane qllc_dwf32_plane() floats (one more row and 16 floats of zeros for the lanes past a
 * row's last pixel), then the KH * KW taps' offsets in them (int64). Strides up to QLLC_DWF32_MAX_STRIDE
 * (the predicate's bound). */
#define QLLC_DWF32_MAX_STRIDE 4
static inline int64_t qllc_dwf32_rows(int64_t OH, int64_t KH, int64_t stride_h, int64_t dil_h) {
  return OH + (KH - 1) * dil_h / stride_h;
}
static inline int64_t qllc_dwf32_cols(int64_t OW, int64_t KW, int64_t stride_w, int64_t dil_w) {
  return OW + (KW - 1) * dil_w / stride_w;
}
static inline int64_t qllc_dwf32_plane(int64_t OH, int64_t OW, int64_t KH, int64_t KW, int64_t stride_h,
                                       int64_t stride_w, int64_t dil_h, int64_t dil_w) {
  const int64_t cols = qllc_dwf32_cols(OW, KW, stride_w, dil_w);
  return qllc_round_up((qllc_dwf32_rows(OH, KH, stride_h, dil_h) + 1) * cols + 16, 16);
}
static inline int64_t qllc_scratch_dw_f32(int64_t OH, int64_t OW, int64_t KH, int64_t KW, int64_t stride_h,
                                          int64_t stride_w, int64_t dil_h, int64_t dil_w) {
  return stride_h * stride_w * qllc_dwf32_plane(OH, OW, KH, KW, stride_h, stride_w, dil_h, dil_w) * 4 + KH * KW * 8;
}

/* Direct conv over channels by 4 (QLLC_LAYOUT_ROWS_C4). 1 when the variant takes the shape: stride 1,
 * C/group a multiple of 4, a kernel of more than one tap (a 1x1 conv gains nothing from it). */
static inline int qllc_c4_fits(int64_t C, int64_t group, int64_t KH, int64_t KW, int64_t stride_h,
                               int64_t stride_w) {
  if (group < 1 || C % group || KH < 1 || KW < 1) return 0;
  const int64_t cg = C / group;
  return cg >= 4 && cg % 4 == 0 && stride_h == 1 && stride_w == 1 && KH * KW > 1;
}
/* Its scratch: the input of one image and group as C/group/4 planes of 4 channels x (Hp + 1) rows x Wp
 * columns, padded (Hp = OH + (KH-1) dil_h; Wp = W + max(pad_left, pad_right), the right padding of
 * one row being the left padding of the next), and 256 bytes that the last pixels read. */
static inline int64_t qllc_scratch_c4(int64_t C, int64_t group, int64_t W, int64_t OH, int64_t OW, int64_t KH,
                                      int64_t KW, int64_t pad_left, int64_t dil_h, int64_t dil_w) {
  const int64_t pr = OW + (KW - 1) * dil_w - W - pad_left;
  return C / group * (OH + (KH - 1) * dil_h + 1) * (W + (pad_left > pr ? pad_left : pr)) + 256;
}
/* The share (in 1/1000) of the pixel lanes the C4 variant computes that are output pixels: OH rows of
 * Wp virtual pixels less the last row's padding, in vectors of 16. */
static inline int64_t qllc_c4_lanes_used(int64_t W, int64_t OH, int64_t OW, int64_t KW, int64_t pad_left,
                                         int64_t dil_w) {
  const int64_t pr = OW + (KW - 1) * dil_w - W - pad_left, Wp = W + (pad_left > pr ? pad_left : pr);
  const int64_t nv = (OH - 1) * Wp + OW;
  return OH * OW * 1000 / qllc_round_up(nv, 16);
}
#define QLLC_C4_MIN_LANES 970 /* below it (28x28 3x3: 960), a conv the CL variant takes runs there */

/* The direct 16-bit conv over channel pairs (ROWS_C2, shapes qllc_c4_fits): planes of 2 int16 channels
 * x (Hp + 1) rows x Wp columns as for qllc_scratch_c4, 256 bytes of slack, rounded up to 64 bytes, then
 * one 32-bit offset per pair of the reduction. */
static inline int64_t qllc_scratch_c2(int64_t C, int64_t group, int64_t W, int64_t OH, int64_t OW, int64_t KH,
                                      int64_t KW, int64_t pad_left, int64_t dil_h, int64_t dil_w) {
  const int64_t cg = C / group;
  return qllc_round_up(2 * qllc_scratch_c4(C, group, W, OH, OW, KH, KW, pad_left, dil_h, dil_w), 64) +
         cg * KH * KW / 2 * 4;
}

/* Direct conv with output channels in the lanes (QLLC_LAYOUT_C4N16). 1 when the variant takes the
 * shape: group 1, C a multiple of 4; any stride, dilation and kernel size. */
static inline int qllc_cl_fits(int64_t C, int64_t group, int64_t KH, int64_t KW) {
  return group == 1 && C >= 4 && C % 4 == 0 && KH >= 1 && KW >= 1;
}
/* Its scratch: the planes of qllc_scratch_c4 for the rows and columns a strided conv reads (Hp =
 * (OH-1) stride_h + (KH-1) dil_h + 1 rows and one more, Wp = W + max(pad_left, pad_right) columns),
 * 256 bytes of slack, rounded up to 64 bytes, then the staging of 48 pixels x 64 output channels. */
static inline int64_t qllc_scratch_cl(int64_t C, int64_t W, int64_t OH, int64_t OW, int64_t KH, int64_t KW,
                                      int64_t stride_h, int64_t stride_w, int64_t pad_left, int64_t dil_h,
                                      int64_t dil_w) {
  const int64_t pr = (OW - 1) * stride_w + (KW - 1) * dil_w + 1 - W - pad_left;
  const int64_t Hp = (OH - 1) * stride_h + (KH - 1) * dil_h + 1;
  return qllc_round_up(C * (Hp + 1) * (W + (pad_left > pr ? pad_left : pr)) + 256, 64) + 48 * 64;
}

/* The AMX conv with implicit im2col (QLLC_LAYOUT_T64N16): channels per block, blocks, and the first
   channel of block cb. */
static inline int64_t qllc_t64_kc(int64_t C) { return C < 64 ? C : 64; }
static inline int64_t qllc_t64_ncb(int64_t C) { return C < 64 ? 1 : (C + 63) / 64; }
static inline int64_t qllc_t64_c0(int64_t C, int64_t cb) { return cb + 1 < qllc_t64_ncb(C) ? 64 * cb : C - qllc_t64_kc(C); }
/* Bytes of its packed weights: M output channels, C input channels, T taps. */
static inline int64_t qllc_t64n16_size(int64_t M, int64_t C, int64_t T) {
  return qllc_round_up(M, 16) * T * qllc_t64_ncb(C) * qllc_t64_kc(C);
}
/* Its scratch: one input image channel-last, padded with z_x: Hp = (OH-1) sh + (KH-1) dh + 1 rows of
   Wp = W + pad_left + max(pad_right, 0) pixels (the kernel's "virtual pixel" form), or unpadded when
   that is larger (H W C bytes: an NCHW image converted for the row strips). */
static inline int64_t qllc_amxcl_wp(int64_t W, int64_t OW, int64_t KW, int64_t sw, int64_t pl) {
  const int64_t pr = (OW - 1) * sw + KW - W - pl;
  return W + pl + (pr > 0 ? pr : 0);
}
static inline int64_t qllc_scratch_amxcl(int64_t C, int64_t H, int64_t W, int64_t OH, int64_t OW, int64_t KH,
                                         int64_t KW, int64_t sh, int64_t sw, int64_t pl, int64_t dh) {
  const int64_t hp = (OH - 1) * sh + (KH - 1) * dh + 1, pad = hp * qllc_amxcl_wp(W, OW, KW, sw, pl) * C;
  return qllc_round_up(pad > H * W * C ? pad : H * W * C, 64);
}
/* The AMX FC's (K64N16): up to QLLC_FC_MB input rows padded with zeros to K rounded up to 64, when K is
   not a multiple of 64 (else the rows are read where they lie, and 64 bytes stand unused). */
static inline int64_t qllc_scratch_amxfc(int64_t M, int64_t K) {
  return K % 64 ? (M < QLLC_FC_MB ? M : QLLC_FC_MB) * qllc_round_up(K, 64) : 64;
}

#endif
