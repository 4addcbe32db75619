#!/bin/bash
# tests/libjit/q_bitcode_test.sh: the quantized kernels in the embedded bitcode, per target:
#  - every kernel declared in libjit/bitcode/kernels_q.h is defined;
#  - optimised as a bundle is (opt-19 -O3: unrolling, vectorization) and compiled to an object (llc-19),
#    nothing is undefined but memcpy/memset: the 128-bit requantization of the int16 kernels must stay
#    multiplications and shifts (no __multi3, __divti3, __ashrti3 ... libgcc helpers) on both targets.
# Needs the bitcode built (make qllc_bitcode); skips (77) when it or the LLVM 19 tools are missing.
set -u
: "${QLLC_BUILD_DIR:?}" "${QLLC_SOURCE_DIR:?}"
NM=$(command -v llvm-nm-19 || true)
LLC=$(command -v llc-19 || true)
OPT=$(command -v opt-19 || true)
CLANG=$(command -v clang-19 || true)
if [ -z "$NM" ] || [ -z "$LLC" ] || [ -z "$OPT" ] || [ -z "$CLANG" ]; then echo "skip: LLVM 19 tools missing"; exit 77; fi

names=$("$CLANG" -E -P -I"$QLLC_SOURCE_DIR/include" "$QLLC_SOURCE_DIR/libjit/bitcode/kernels_q.h" |
        grep -o 'qllc_k_[A-Za-z0-9_]*' | sort -u)
count=$(echo "$names" | wc -l)
[ "$count" -ge 57 ] || { echo "FAIL: found only $count quantized kernel names"; exit 1; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
status=0
for arch in x86_64 aarch64; do
  bc="$QLLC_BUILD_DIR/bitcode/libjit_$arch.bc"
  if [ ! -f "$bc" ]; then echo "skip: $bc not built"; exit 77; fi
  defined=$("$NM" --defined-only "$bc" | awk '$2 == "T" {print $3}' | sort -u)
  missing=$(comm -23 <(echo "$names") <(echo "$defined"))
  if [ -n "$missing" ]; then echo "FAIL $arch: quantized kernels not defined: $missing"; status=1; fi
  obj="$tmp/$arch-O3.o"
  if "$OPT" -O3 "$bc" -o "$tmp/$arch-O3.bc" && "$LLC" -O2 -filetype=obj "$tmp/$arch-O3.bc" -o "$obj"; then
    undef=$("$NM" --undefined-only "$obj" | awk '{print $NF}' | grep -vx -e memcpy -e memset)
    if [ -n "$undef" ]; then echo "FAIL $arch: undefined symbols in the object: $undef"; status=1; fi
  else
    echo "FAIL $arch: opt -O3 / llc"; status=1
  fi
  echo "$arch: $count quantized kernels defined; objects undefined only: $("$NM" --undefined-only "$tmp/$arch-O3.o" 2>/dev/null | awk '{print $NF}' | tr '\n' ' ')"
done
[ $status -eq 0 ] && echo "PASS"
exit $status
