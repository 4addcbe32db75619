#!/usr/bin/env bash
# bench/kernel_ab.sh TREE_A TREE_B OUT: builds bench/kernel_ab.c (the A/B of two builds of the 8-bit direct
# convs in one process; its header says how to run it) against targets/x86_64/kernels/x86_q8.c of two
# source trees (e.g. `git worktree add /tmp/main main` as A and this checkout as B), each compiled as the
# kernel build compiles it (clang-19 -O2) with its exported symbols renamed A_* and B_*. Extra compiler
# flags for both trees' kernels: $KFLAGS (e.g. -DSOMETHING an experiment tests for).
set -euo pipefail
[ $# -eq 3 ] || { echo "usage: bench/kernel_ab.sh TREE_A TREE_B OUT" >&2; exit 2; }
SRC=$(cd "$(dirname "$0")/.." && pwd)
OUT=$3
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
for v in A B; do
  tree=$1
  [ "$v" = B ] && tree=$2
  (cd "$tree" && clang-19 -O2 -fno-math-errno -ffp-contract=off ${KFLAGS:-} -Isrc -Ilibjit/bitcode -Iinclude \
    -c targets/x86_64/kernels/x86_q8.c -o "$T/$v.o")
  nm --defined-only -g "$T/$v.o" | awk -v p="$v" '{print $3, p "_" $3}' >"$T/$v.syms"
  objcopy --redefine-syms="$T/$v.syms" "$T/$v.o"
done
cd "$SRC" && clang-19 -O2 -Wall -Isrc -Ilibjit/bitcode -Iinclude bench/kernel_ab.c "$T/A.o" "$T/B.o" src/lower/pack.c \
  src/lower/pack16.c -o "$OUT"
