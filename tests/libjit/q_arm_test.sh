#!/bin/bash
# tests/libjit/q_arm_test.sh: the aarch64 kernel variants (targets/aarch64/kernels/) bit for bit against
# the scalar kernels, on an emulated Arm CPU. q_arm_kernels.c, the scalar kernels (libjit/bitcode/*.c),
# the variants and the packers (src/lower/pack.c, pack16.c) are cross-compiled by aarch64-linux-gnu-gcc
# and run under `qemu-aarch64 -cpu max` (which implements dotprod and i8mm); the float rows against fc.c and
# conv.c, all built with -ffp-contract=off as the kernel library is (gcc's default would fuse a multiply
# and an add into fmla, which rounds once: not the reference's bits). Skips (77) when the cross
# compiler or qemu is missing, or when the emulated CPU lacks every ISA (the driver says which).
set -u
: "${QLLC_SOURCE_DIR:?}"
CC=${QLLC_AARCH64_CC:-aarch64-linux-gnu-gcc}
QEMU=${QLLC_QEMU_AARCH64:-qemu-aarch64}
SYSROOT=${QLLC_AARCH64_SYSROOT:-/usr/aarch64-linux-gnu}
for t in "$CC" "$QEMU"; do
  command -v "$t" >/dev/null || { echo "SKIPPED: $t missing (scripts/bootstrap installs gcc-aarch64-linux-gnu, qemu-user)"; exit 77; }
done
S=$QLLC_SOURCE_DIR
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$CC" -O2 -std=gnu11 -Wall -Werror=implicit-function-declaration -fno-strict-aliasing -ffp-contract=off \
  -I"$S/tests/libjit/q_arm_shim" -I"$S/tests/libjit" -I"$S/include" -I"$S/libjit/bitcode" -I"$S/src" \
  "$S/tests/libjit/q_arm_kernels.c" "$S/libjit/bitcode/q_layers.c" "$S/libjit/bitcode/fc.c" \
  "$S/libjit/bitcode/conv.c" "$S"/targets/aarch64/kernels/*.c \
  "$S/src/lower/pack.c" "$S/src/lower/pack16.c" -o "$tmp/q_arm_kernels" -lm || { echo "FAIL: cross build"; exit 1; }
"$QEMU" -cpu max -L "$SYSROOT" "$tmp/q_arm_kernels" "$@"
