#!/bin/bash
# tests/libjit/q_cross_test.sh: the quantized kernels give the same bits on every target and at every
# optimisation level (docs/numerics.md: every kernel variant and every target gives the same
# bits). A freestanding driver (written below) calls every kernel family with constant shapes on
# pseudo-random and extreme inputs and hashes the outputs. It is built four ways:
#   native:   the kernels' C compiled by gcc (libqllc_libjit_native.a, what tests/libjit/q_*_test.c check);
#   x86_64:   the driver's bitcode linked with build/bitcode/libjit_x86_64.bc, opt -O3 (inlined,
#             specialised on the constant shapes, vectorized), llc;
#   x86_64 with -mcpu=x86-64-v3 (AVX2) and with the host's CPU (AVX-512) when the host has them;
#   aarch64:  the same with libjit_aarch64.bc (NEON), linked static and run under qemu-aarch64.
# Every line of output (kernel, hash) must be identical.
# Needs the bitcode built (make qllc_bitcode); skips (77) when tools are missing.
set -u
: "${QLLC_BUILD_DIR:?}" "${QLLC_SOURCE_DIR:?}"
for t in clang-19 opt-19 llc-19 llvm-link-19 llvm-extract-19 llvm-dis-19 llvm-as-19 gcc; do
  command -v $t >/dev/null || { echo "skip: $t missing"; exit 77; }
done
S=$QLLC_SOURCE_DIR
for arch in x86_64 aarch64; do
  [ -f "$QLLC_BUILD_DIR/bitcode/libjit_$arch.bc" ] || { echo "skip: libjit_$arch.bc not built"; exit 77; }
done
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

cat > "$tmp/drv.c" <<'EOF'
/* Freestanding: no libc. run_all fills hashes[] (one per kernel call) and returns how many. */
#include "kernels_q.h"

static uint64_t rs = 0x243f6a8885a308d3ULL;
static uint64_t rnd(void) {
  rs ^= rs << 13, rs ^= rs >> 7, rs ^= rs << 17;
  return rs;
}
static int32_t ir(int32_t lo, int32_t hi) { return lo + (int32_t)(rnd() % (uint64_t)(hi - lo + 1)); }
static uint64_t fnv(const void *p, int64_t n) {
  const uint8_t *b = p;
  uint64_t h = 0xcbf29ce484222325ULL;
  for (int64_t i = 0; i < n; i++) h = (h ^ b[i]) * 0x100000001b3ULL;
  return h;
}
/* 1/4 of the elements at the extremes, the rest random */
#define FILL(T, buf, cnt, lo, hi)                                                                  \
  for (int64_t i_ = 0; i_ < (cnt); i_++) {                                                         \
    int32_t r_ = ir(0, 7);                                                                         \
    (buf)[i_] = (T)(r_ == 0 ? (lo) : r_ == 1 ? (hi) : ir((lo), (hi)));                             \
  }

static int8_t xi8[65536], wi8[65536], yi8[65536];
static uint8_t xu8[65536], yu8[65536];
static int16_t xi16[65536], wi16[65536], yi16[65536];
static int32_t b32[1024], mv[1024], nv[1024], tab32[513];
static int64_t b64[1024];
static float fx[4096], fy[4096];

static void params(int64_t c, int32_t nlo, int32_t nhi, int wide) {
  for (int64_t i = 0; i < c; i++) {
    mv[i] = ir(1 << 30, 2147483647), nv[i] = ir(nlo, nhi);
    b32[i] = ir(-100000, 100000);
    b64[i] = wide ? (int64_t)b32[i] * 1024 : b32[i];
  }
}

int run_all(uint64_t *h) {
  int k = 0;
  static const int64_t aoff[3] = {0, 0, 0}, boff[3] = {0, 640, 1280};
  /* conv: 3x3 pad 1; depthwise stride 2; 1x1; int16 long reduction */
  FILL(int8_t, xi8, 16 * 20 * 20, -128, 127) FILL(int8_t, wi8, 24 * 16 * 9, -127, 127) params(24, 14, 20, 0);
  qllc_k_conv2d_i8_i8_i8(yi8, xi8, wi8, b32, mv, nv, 1, 16, 20, 20, 24, 20, 20, 3, 3, 1, 1, 1, 1, 1, 1, 1, -3, 5, -128, 127);
  h[k++] = fnv(yi8, 24 * 400);
  qllc_k_conv2d_i8_i8_u8(yu8, xi8, wi8, b32, mv, nv, 1, 16, 20, 20, 16, 10, 10, 3, 3, 2, 2, 1, 1, 1, 1, 16, 127, 0, 0, 255);
  h[k++] = fnv(yu8, 16 * 100);
  FILL(uint8_t, xu8, 2 * 8 * 9 * 70, 0, 255)
  qllc_k_conv2d_u8_i8_i8(yi8, xu8, wi8, b32, mv, nv, 2, 8, 9, 70, 6, 9, 70, 1, 1, 1, 1, 0, 0, 1, 1, 2, 255, -128, -100, 100);
  h[k++] = fnv(yi8, 2 * 6 * 9 * 70);
  qllc_k_conv2d_u8_i8_u8(yu8, xu8, wi8, b32, mv, nv, 1, 8, 9, 70, 4, 5, 68, 3, 3, 2, 1, 2, 2, 2, 3, 1, 0, 7, 7, 255);
  h[k++] = fnv(yu8, 4 * 5 * 68);
  FILL(int16_t, xi16, 64 * 5 * 5, -32768, 32767) FILL(int16_t, wi16, 4 * 64 * 9, -32768, 32767) params(4, 50, 54, 1);
  qllc_k_conv2d_i16_i16_i16(yi16, xi16, wi16, b64, mv, nv, 1, 64, 5, 5, 4, 5, 5, 3, 3, 1, 1, 1, 1, 1, 1, 1, -32768, 3, -32768, 32767);
  h[k++] = fnv(yi16, 4 * 25 * 2);
  qllc_k_conv2d_i16_i8_i16(yi16, xi16, wi8, b64, mv, nv, 1, 64, 5, 5, 4, 3, 3, 3, 3, 2, 2, 1, 1, 1, 1, 1, 0, 0, -32768, 32767);
  h[k++] = fnv(yi16, 4 * 9 * 2);
  /* fc */
  FILL(int8_t, xi8, 3 * 300, -128, 127) FILL(uint8_t, xu8, 3 * 300, 0, 255) FILL(int8_t, wi8, 37 * 300, -127, 127)
  params(37, 18, 24, 0);
  qllc_k_fc_i8_i8_i8(yi8, xi8, wi8, b32, mv, nv, 3, 37, 300, 0, 1, -128, 127), h[k++] = fnv(yi8, 111);
  qllc_k_fc_i8_i8_u8(yu8, xi8, wi8, b32, mv, nv, 3, 37, 300, 0, 100, 100, 255), h[k++] = fnv(yu8, 111);
  qllc_k_fc_u8_i8_i8(yi8, xu8, wi8, b32, mv, nv, 3, 37, 300, 0, -128, -128, 127), h[k++] = fnv(yi8, 111);
  qllc_k_fc_u8_i8_u8(yu8, xu8, wi8, b32, mv, nv, 3, 37, 300, 0, 255, 0, 255), h[k++] = fnv(yu8, 111);
  FILL(int16_t, xi16, 3 * 4096, -32768, 32767) FILL(int16_t, wi16, 5 * 4096, -32768, 32767) params(5, 52, 56, 1);
  qllc_k_fc_i16_i16_i16(yi16, xi16, wi16, b64, mv, nv, 3, 5, 4096, 0, 0, -32768, 32767), h[k++] = fnv(yi16, 30);
  FILL(int8_t, wi8, 5 * 4096, -128, 127) params(5, 44, 48, 1);
  qllc_k_fc_i16_i8_i16(yi16, xi16, wi8, b64, mv, nv, 3, 5, 4096, 0, -7, -32768, 32767), h[k++] = fnv(yi16, 30);
  /* channel affine */
  params(7, 8, 14, 0);
  qllc_k_channel_affine_i8_i8_i8(yi8, xi8, wi8, b32, mv, nv, 2, 7, 33, 3, -128, 127), h[k++] = fnv(yi8, 462);
  qllc_k_channel_affine_u8_i8_u8(yu8, xu8, wi8, b32, mv, nv, 2, 7, 33, 3, 0, 255), h[k++] = fnv(yu8, 462);
  params(7, 44, 48, 1);
  qllc_k_channel_affine_i16_i16_i16(yi16, xi16, wi16, b64, mv, nv, 2, 7, 33, 3, -32768, 32767), h[k++] = fnv(yi16, 924);
  /* matmul: b batched, a shared */
  FILL(int8_t, xi8, 10 * 64, -128, 127) FILL(int8_t, wi8, 3 * 640, -128, 127)
  qllc_k_matmul_i8_i8_i8(yi8, xi8, wi8, 3, 10, 10, 64, aoff, boff, 127, -128, 1234567890, 38, 2, -128, 127);
  h[k++] = fnv(yi8, 300);
  FILL(uint8_t, xu8, 3 * 640, 0, 255)
  qllc_k_matmul_u8_u8_u8(yu8, xu8, xu8, 3, 10, 10, 64, aoff, boff, 255, 0, 2000000000, 40, 9, 0, 255);
  h[k++] = fnv(yu8, 300);
  FILL(int16_t, xi16, 3 * 640, -32768, 32767)
  qllc_k_matmul_i16_i16_i16(yi16, xi16, xi16, 3, 10, 10, 64, aoff, boff, 32767, -32768, 2147483647, 57, 0, -32768, 32767);
  h[k++] = fnv(yi16, 600);
  /* elementwise, b broadcast along the last dim */
  static const int64_t dims[3] = {3, 5, 17}, as[3] = {85, 17, 1}, bs[3] = {5, 1, 0};
  qllc_k_add_i8_i8_i8(yi8, xi8, wi8, 3, dims, as, bs, -128, 1500000000, 127, 1100000000, 31, 3, -128, 127), h[k++] = fnv(yi8, 255);
  qllc_k_sub_u8_u8_u8(yu8, xu8, xu8 + 300, 3, dims, as, bs, 0, 1500000000, 255, 2147483647, 31, 9, 0, 255), h[k++] = fnv(yu8, 255);
  qllc_k_add_i16_i16_i16(yi16, xi16, xi16 + 300, 3, dims, as, bs, 32767, 2147483647, -32768, 3, 31, 0, -32768, 32767), h[k++] = fnv(yi16, 510);
  qllc_k_mul_i8_i8_i8(yi8, xi8, wi8, 3, dims, as, bs, 127, -128, 1500000000, 38, 0, -128, 127), h[k++] = fnv(yi8, 255);
  qllc_k_mul_i16_i16_i16(yi16, xi16, xi16 + 7, 3, dims, as, bs, 32767, 32767, 2147483647, 62, -5, -32768, 32767), h[k++] = fnv(yi16, 510);
  /* 8-bit add/sub in int32 (q_ops.c qk_sum32): rows longer than the vectors with a tail, b or a a scalar,
     b repeated over rows; n at 15 (the int64 form), 16, 17, 31, 40, 47 and 48 (the shift stops at 31);
     z_y inside the shift and after it; ResNet-18's residual add (the first line) */
  static const int64_t dl[1] = {1000}, dr[2] = {3, 999}, s1[1] = {1}, s0[1] = {0}, sr[2] = {999, 1}, sr0[2] = {0, 1};
  FILL(uint8_t, xu8, 3000, 0, 255) FILL(int8_t, xi8, 3000, -128, 127)
  qllc_k_add_u8_u8_u8(yu8, xu8, xu8 + 1000, 1, dl, s1, s1, 120, 753633948, 0, 2030770137, 31, 0, 0, 255), h[k++] = fnv(yu8, 1000);
  qllc_k_sub_i8_i8_i8(yi8, xi8, xi8 + 1000, 1, dl, s1, s1, -128, 65535, 127, 65536, 16, -128, -128, 127), h[k++] = fnv(yi8, 1000);
  qllc_k_add_u8_u8_u8(yu8, xu8, xu8 + 7, 1, dl, s1, s0, 255, 2147483647, 0, 32768, 17, 255, 0, 255), h[k++] = fnv(yu8, 1000);
  qllc_k_add_i8_i8_i8(yi8, xi8 + 5, xi8, 1, dl, s0, s1, 127, 2147483647, -128, 2147483647, 47, 127, -128, 127), h[k++] = fnv(yi8, 1000);
  qllc_k_sub_u8_u8_u8(yu8, xu8, xu8 + 1000, 1, dl, s1, s1, 0, 2147483647, 255, 2147483647, 48, 3, 0, 255), h[k++] = fnv(yu8, 1000);
  qllc_k_add_i8_i8_i8(yi8, xi8, xi8 + 1000, 1, dl, s1, s1, 3, 40000, -7, 50000, 15, 0, -128, 127), h[k++] = fnv(yi8, 1000);
  qllc_k_add_u8_u8_u8(yu8, xu8, xu8 + 1000, 1, dl, s1, s1, 128, 1500000000, 131, 1900000000, 40, 100, 100, 255), h[k++] = fnv(yu8, 1000);
  qllc_k_sub_i8_i8_i8(yi8, xi8, xi8 + 1500, 2, dr, sr, sr0, 0, 1288490171, 5, 1479377541, 31, -3, -128, 127), h[k++] = fnv(yi8, 2997);
  /* requantize, clamp */
  qllc_k_requantize_i8_i8(yi8, xi8, 7, 33, 40, 35, -128, 1700000000, 31, 127, -128, 127), h[k++] = fnv(yi8, 280);
  qllc_k_requantize_u8_u8(yu8, xu8, 7, 33, 40, 35, 255, 1100000000, 29, 0, 0, 255), h[k++] = fnv(yu8, 280);
  qllc_k_requantize_i16_i16(yi16, xi16, 7, 33, 40, 35, 32767, 2147483647, 30, 0, -32768, 32767), h[k++] = fnv(yi16, 560);
  qllc_k_clamp_i16_i16(yi16, xi16, 999, -5, 1234), h[k++] = fnv(yi16, 1998);
  /* pools */
  FILL(int8_t, xi8, 6 * 17 * 17, -128, 127) FILL(int16_t, xi16, 6 * 17 * 17, -32768, 32767)
  for (int c = 0; c <= 9; c++) mv[c] = ir(1 << 30, 2147483647), nv[c] = 31 + (c > 4) + (c > 8);
  qllc_k_maxpool2d_i8_i8(yi8, xi8, 6, 17, 17, 9, 9, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1), h[k++] = fnv(yi8, 6 * 81);
  qllc_k_maxpool2d_i16_i16(yi16, xi16, 6, 17, 17, 8, 8, 2, 3, 2, 2, 0, 1, 0, 1, 2, 1), h[k++] = fnv(yi16, 6 * 64 * 2);
  qllc_k_avgpool2d_i8_i8(yi8, xi8, mv, nv, 6, 17, 17, 9, 9, 3, 3, 2, 2, 1, 1, 1, 1, 0, -128, 3, -128, 127), h[k++] = fnv(yi8, 6 * 81);
  qllc_k_avgpool2d_i16_i16(yi16, xi16, mv, nv, 6, 17, 17, 9, 9, 3, 3, 2, 2, 1, 1, 1, 1, 1, 32767, 0, -32768, 32767), h[k++] = fnv(yi16, 6 * 162);
  /* max pool 3x3/2 pad 1 on rows of 70: 35 outputs, the 32-output vector path */
  FILL(uint8_t, xu8, 4 * 9 * 70, 0, 255) FILL(int8_t, wi8, 4 * 9 * 70, -128, 127)
  qllc_k_maxpool2d_u8_u8(yu8, xu8, 4, 9, 70, 5, 35, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1), h[k++] = fnv(yu8, 4 * 5 * 35);
  qllc_k_maxpool2d_i8_i8(yi8, wi8, 4, 9, 70, 5, 35, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1), h[k++] = fnv(yi8, 4 * 5 * 35);
  qllc_k_maxpool2d_i16_i16(yi16, xi16, 4, 9, 70, 5, 35, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1), h[k++] = fnv(yi16, 4 * 5 * 70);
  qllc_k_global_avgpool_u8_u8(yu8, xu8, 6, 289, 255, 1900000000, 39, 0, 0, 255), h[k++] = fnv(yu8, 6);
  qllc_k_global_avgpool_i16_i16(yi16, xi16, 6, 289, -32768, 1900000000, 39, 0, -32768, 32767), h[k++] = fnv(yi16, 12);
  /* the channel-last twins: NHWC in and out, NHWC in / NCHW out, the staged NCHW in / NHWC out; NHWC sums */
  qllc_k_maxpool2dcl_u8_u8(yu8, xu8, 4, 9, 70, 5, 35, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 4, 1, 1), h[k++] = fnv(yu8, 4 * 5 * 35);
  qllc_k_maxpool2dcl_i8_i8(yi8, wi8, 4, 9, 70, 5, 35, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 2, 1, 0), h[k++] = fnv(yi8, 4 * 5 * 35);
  qllc_k_maxpool2dcl_u8_u8(yu8, xu8, 4, 9, 70, 5, 35, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 4, 0, 1), h[k++] = fnv(yu8, 4 * 5 * 35);
  qllc_k_global_avgpoolcl_u8_u8(yu8, xu8, 6, 289, 255, 1900000000, 39, 0, 0, 255, 3, 1, 1), h[k++] = fnv(yu8, 6);
  /* tables */
  FILL(int8_t, wi8, 256, -128, 127) FILL(int16_t, wi16, 513, -32768, 32767)
  qllc_k_lut_i8_i8(yi8, xi8, wi8, 1734), h[k++] = fnv(yi8, 1734);
  qllc_k_lut_i16_i16(yi16, xi16, wi16, 1734), h[k++] = fnv(yi16, 3468);
  for (int d = 0; d < 513; d++) tab32[d] = d == 0 ? 16777216 : tab32[d - 1] - tab32[d - 1] / 40;
  qllc_k_softmax_i8_i8(yi8, xi8, tab32, 6, 17, 17, 256, -128, -128, 127), h[k++] = fnv(yi8, 1734);
  qllc_k_softmax_u8_u8(yu8, xu8, tab32, 3, 100, 2, 256, 0, 0, 255), h[k++] = fnv(yu8, 600);
  qllc_k_softmax_i16_i16(yi16, xi16, tab32, 6, 17, 17, 32768, 0, -32768, 32767), h[k++] = fnv(yi16, 3468);
  /* boundary */
  for (int i = 0; i < 4096; i++) {
    union { uint32_t u; float f; } v;
    v.u = (uint32_t)rnd() & 0x437fffffu; /* finite, |x| < 256 */
    fx[i] = (i % 5 == 0) ? (float)(ir(-400, 400)) * 0.5f : v.f;
  }
  qllc_k_quantize_f32_i8(yi8, fx, 4096, 0.5f, -3), h[k++] = fnv(yi8, 4096);
  qllc_k_quantize_f32_u8(yu8, fx, 4096, 0.1f, 128), h[k++] = fnv(yu8, 4096);
  qllc_k_quantize_f32_i16(yi16, fx, 4096, 0.0078125f, 0), h[k++] = fnv(yi16, 8192);
  qllc_k_dequantize_i16_f32(fy, yi16, 4096, 0.3f, 5), h[k++] = fnv(fy, 16384);
  qllc_k_dequantize_u8_f32(fy, yu8, 4096, 0.7f, 128), h[k++] = fnv(fy, 16384);
  return k;
}
EOF
cat > "$tmp/main.c" <<'EOF'
#include <stdint.h>
#include <stdio.h>
int run_all(uint64_t *h);
int main(void) {
  uint64_t h[128];
  int n = run_all(h);
  for (int i = 0; i < n; i++) printf("%d %016llx\n", i, (unsigned long long)h[i]);
  return 0;
}
EOF
INC="-I$S/include -I$S/libjit/bitcode"
fail() { echo "FAIL: $*"; exit 1; }

# native: gcc, the kernels as the cmocka tests link them
native_lib="$QLLC_BUILD_DIR/libqllc_libjit_native.a"
[ -f "$native_lib" ] || { echo "skip: $native_lib not built"; exit 77; }
# a build made by `scripts/test --sanitize` has the library instrumented: link the driver the same way
san=""
if nm "$native_lib" 2>/dev/null | grep -qE ' U __(asan|ubsan)_'; then
  san="-fsanitize=address,undefined"
  echo "native: $native_lib is built with sanitizers; the driver is linked with $san"
fi
gcc -O2 -fno-math-errno -ffp-contract=off $san $INC "$tmp/drv.c" "$tmp/main.c" "$native_lib" -o "$tmp/native" ||
  fail "native build"
"$tmp/native" > "$tmp/native.out" || fail "native run"
[ "$(wc -l < "$tmp/native.out")" -ge 40 ] || fail "driver ran only $(wc -l < "$tmp/native.out") kernels"

# bitcode: driver + libjit, O3 (inlining, specialisation, vectorization), one object per target/CPU. Only
# run_all, what it calls and the data it reads are kept (llvm-extract: the library's other kernels and its ISA
# variants would take most of the time). With a CPU named, every function is given that CPU and no feature
# list of its own, as qllc's codegen does (src/llvmgen/codegen.c, specialise): opt's and llc's -mcpu alone
# leave the kernels' own "x86-64" attributes, that is SSE2 code.
bc_build() { # arch triple cpu out
  local arch=$1 triple=$2 cpu=$3 out=$4
  clang-19 --target=$triple -O2 -ffreestanding -fno-builtin -ffp-contract=off -std=c11 $INC -emit-llvm -c \
    "$tmp/drv.c" -o "$tmp/drv_$out.bc" || return 1
  llvm-link-19 "$tmp/drv_$out.bc" "$QLLC_BUILD_DIR/bitcode/libjit_$arch.bc" -o "$tmp/all_$out.bc" || return 1
  llvm-extract-19 --func=run_all --recursive --rglob='.*' "$tmp/all_$out.bc" -o "$tmp/ext_$out.bc" || return 1
  if [ -n "$cpu" ]; then
    llvm-dis-19 "$tmp/ext_$out.bc" -o - |
      sed -e "s/\"target-cpu\"=\"[^\"]*\"/\"target-cpu\"=\"$cpu\"/g" -e 's/"target-features"="[^"]*"//g' \
        -e 's/"tune-cpu"="[^"]*"//g' | llvm-as-19 -o "$tmp/ext_$out.bc" || return 1
  fi
  opt-19 -O3 ${cpu:+-mcpu=$cpu} "$tmp/ext_$out.bc" -o "$tmp/opt_$out.bc" || return 1
  llc-19 -O3 ${cpu:+-mcpu=$cpu} -filetype=obj -relocation-model=pic "$tmp/opt_$out.bc" -o "$tmp/$out.o"
}
bc_build x86_64 x86_64-unknown-linux-gnu "" x86 || fail "x86_64 bitcode build"
gcc "$tmp/main.c" "$tmp/x86.o" -o "$tmp/x86" || fail "x86_64 link"
"$tmp/x86" > "$tmp/x86.out" || fail "x86_64 run"
diff "$tmp/native.out" "$tmp/x86.out" > /dev/null || { diff "$tmp/native.out" "$tmp/x86.out"; fail "x86_64 -O3 bitcode differs from native"; }
echo "x86_64 -O3: same bits as native ($(wc -l < "$tmp/native.out") kernel calls)"

if grep -qw avx2 /proc/cpuinfo; then
  bc_build x86_64 x86_64-unknown-linux-gnu x86-64-v3 avx2 || fail "x86_64 avx2 build"
  gcc "$tmp/main.c" "$tmp/avx2.o" -o "$tmp/avx2" || fail "avx2 link"
  "$tmp/avx2" > "$tmp/avx2.out" || fail "avx2 run"
  diff "$tmp/native.out" "$tmp/avx2.out" > /dev/null || { diff "$tmp/native.out" "$tmp/avx2.out"; fail "x86-64-v3 differs"; }
  echo "x86-64-v3 (AVX2) -O3: same bits"
fi

# AVX-512 on the host's CPU (what `qllc compile --cpu native` gives on it; the 8-bit add's vpmaddwd/vpdpwssd)
host_cpu=$(llc-19 --version | awk '/Host CPU:/ {print $3}')
if grep -qw avx512bw /proc/cpuinfo && [ -n "$host_cpu" ]; then
  bc_build x86_64 x86_64-unknown-linux-gnu "$host_cpu" avx512 || fail "x86_64 $host_cpu build"
  gcc "$tmp/main.c" "$tmp/avx512.o" -o "$tmp/avx512" || fail "$host_cpu link"
  "$tmp/avx512" > "$tmp/avx512.out" || fail "$host_cpu run"
  diff "$tmp/native.out" "$tmp/avx512.out" > /dev/null || { diff "$tmp/native.out" "$tmp/avx512.out"; fail "$host_cpu (AVX-512) differs"; }
  echo "$host_cpu (AVX-512) -O3: same bits"
fi

if command -v aarch64-linux-gnu-gcc >/dev/null && command -v qemu-aarch64 >/dev/null; then
  bc_build aarch64 aarch64-unknown-linux-gnu "" a64 || fail "aarch64 bitcode build"
  aarch64-linux-gnu-gcc -static "$tmp/main.c" "$tmp/a64.o" -o "$tmp/a64" || fail "aarch64 link"
  qemu-aarch64 "$tmp/a64" > "$tmp/a64.out" || fail "aarch64 run"
  diff "$tmp/native.out" "$tmp/a64.out" > /dev/null || { diff "$tmp/native.out" "$tmp/a64.out"; fail "aarch64 differs"; }
  echo "aarch64 -O3 (qemu): same bits"
else
  echo "aarch64: no cross gcc or qemu-aarch64, not run"
fi
echo PASS
