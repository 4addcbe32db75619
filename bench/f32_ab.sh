#!/usr/bin/env bash
# bench/f32_ab.sh TREE_A TREE_B OUT: builds bench/f32_ab.c (the in-process A/B of two builds of the x86_64
# float FC and panel-conv variants; its header says how to run it) against targets/x86_64/kernels/x86_dw8.c
# of two source trees (e.g. `git worktree add /tmp/main main` as A and this checkout as B), each compiled
# as the native tuning kernels are (clang-19 -O3) with its exported symbols renamed A_* and B_*. Extra
# compiler flags: $KFLAGS_A, $KFLAGS_B (e.g. -DSOMETHING an experiment tests for).
set -euo pipefail
[ $# -eq 3 ] || { echo "usage: bench/f32_ab.sh TREE_A TREE_B OUT" >&2; exit 2; }
SRC=$(cd "$(dirname "$0")/.." && pwd)
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
for v in A B; do
  tree=$1 flags=${KFLAGS_A:-}
  [ "$v" = B ] && tree=$2 flags=${KFLAGS_B:-}
  (cd "$tree" && clang-19 -O3 -fno-math-errno -ffp-contract=off $flags -Isrc -Ilibjit/bitcode -Iinclude \
    -c targets/x86_64/kernels/x86_dw8.c -o "$T/$v.o" 2>/dev/null)
  nm --defined-only -g "$T/$v.o" | awk -v p="$v" '{print $3, p "_" $3}' >"$T/$v.syms"
  objcopy --redefine-syms="$T/$v.syms" "$T/$v.o"
done
clang-19 -O2 -Wall -I"$SRC/bench" "$SRC/bench/f32_ab.c" "$T/A.o" "$T/B.o" -o "$3"
