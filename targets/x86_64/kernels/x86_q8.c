/* targets/x86_64/kernels/x86_q8.c: the x86_64 variants of the fused 8-bit Conv and FC layers
 * (rows in variants.def), bit-identical to the scalar qllc_k_conv2d_* / qllc_k_fc_* of q_layers.c: one
 * translation unit made of these parts, each with one job:
 *   x86_q8_vec.h       the types, constants and vector primitives (loads, broadcasts, dot products)
 *   x86_q8_epilogue.h  the requantization of the accumulators and the stores of the output bytes
 *   x86_q8_pack.h      the packing of the activations: FC rows, the pieces of the panel packers
 *   x86_q8_isa.h       the three ISAs (avx512vnni, avxvnni, avx2) as one template over the FC and
 *                      panel Conv bodies, and their exported kernels
 *   x86_q8_fc.h        FC (weights QLLC_LAYOUT_K4N16), every ISA
 *   x86_q8_panel.h     Conv as an implicit GEMM over im2col panels (QLLC_LAYOUT_ROWS_K4): the panel
 *                      packers and the tiles, every ISA
 *   x86_q8_direct.h    the direct convs over planes of 4 channels, avx512vnni only: conv2dc4
 *                      (QLLC_LAYOUT_ROWS_C4) and conv2dcl (output channels in the lanes, QLLC_LAYOUT_C4N16)
 *
 * All three ISAs compute u8 x s8 dot products of 4 bytes per 32-bit lane, added to the int32
 * accumulator modulo 2^32 (vpdpbusd is not saturating; the avx2 variant emulates it exactly with two
 * vpmaddwd of zero-/sign-extended 16-bit halves, never vpmaddubsw, which saturates). An int8 input is
 * shifted to u8 (x ^ 0x80) when it is packed into the scratch buffer; the bias the compiler packed
 * (qllc_pack_bias8) already holds the -128 * sum_k w correction. The sums wrap identically in any
 * order, so every variant gives the scalar kernel's accumulator exactly.
 *
 * Why one translation unit and not a .c file per part: the kernel library is every file's bitcode
 * linked (libjit/bitcode/bitcode.cmake), and what a bundle's object code is made of depends on more
 * than the functions' source. Each linked file adds its llvm.ident, which the object file carries in
 * .comment; the order of the out-of-line functions in the library (the order in a bundle's .text)
 * comes from how llvm-link walks each file; and clang's optimisations leave the use lists of a
 * function's values (the order of a block's predecessors, which later passes follow) in an order
 * that depends on the whole translation unit. Split into several .c files, these parts changed the
 * bytes of every x86_64 bundle; included here in this order, they give the bitcode the single file
 * gave. The parts are .h files so that the kernel build depends on them (bitcode.cmake). */
#include "x86_q8_vec.h"
#include "x86_q8_epilogue.h"
#include "x86_q8_pack.h"

#include "x86_q8_panel.h" /* the panel packers */
#include "x86_q8_isa.h"   /* each ISA: x86_q8_fc.h, x86_q8_panel.h's tiles, the exported FC and Conv kernels */
#include "x86_q8_direct.h"
