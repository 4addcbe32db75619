#!/bin/bash
# tests/llvmgen/objects_test.sh: bundles made by the qllc tool for both targets are self-contained.
# For the sample model, `qllc compile` for x86_64 and aarch64 (PIC and static) must give objects whose
# only undefined symbols are memcpy/memset, which define the entry and the qllc_io tables, and whose
# header compiles with gcc and g++.
set -u
model="$QLLC_SOURCE_DIR/models/digits/digits.onnx"
[ -f "$model" ] || { echo "no sample model at $model"; exit 77; }
NM=/usr/lib/llvm-19/bin/llvm-nm
[ -x "$NM" ] || NM=nm
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
for target in x86_64 aarch64; do
  for reloc in pic static; do
    out="$tmp/$target-$reloc"
    mkdir -p "$out"
    if ! "$QLLC" compile "$model" -o "$out" --name digits --target "$target" --reloc "$reloc" > "$out/log" 2>&1; then
      echo "FAIL $target/$reloc: qllc compile failed:"; cat "$out/log"; fail=1; continue
    fi
    undef=$("$NM" -u "$out/digits.o" | awk '{print $NF}' | grep -vxE 'memcpy|memset')
    if [ -n "$undef" ]; then echo "FAIL $target/$reloc: undefined symbols: $undef"; fail=1; fi
    for sym in digits digits_inputs digits_outputs; do
      "$NM" --defined-only "$out/digits.o" | awk '{print $NF}' | grep -qx "$sym" ||
        { echo "FAIL $target/$reloc: $sym not defined"; fail=1; }
    done
    printf '#include "digits.h"\nint n(void) { return digits_NUM_INPUTS + (int)digits_inputs[0].rank; }\n' > "$out/use.c"
    gcc -std=c99 -Wall -Werror -pedantic -c "$out/use.c" -o "$out/use.o" || { echo "FAIL $target/$reloc: gcc"; fail=1; }
    g++ -Wall -Werror -x c++ -c "$out/use.c" -o "$out/usepp.o" || { echo "FAIL $target/$reloc: g++"; fail=1; }
    [ $fail = 0 ] && echo "ok $target/$reloc"
  done
done
# the aarch64 object really is for aarch64, the x86_64 one for x86_64
/usr/lib/llvm-19/bin/llvm-readelf -h "$tmp/aarch64-pic/digits.o" | grep -q AArch64 || { echo "FAIL: not AArch64"; fail=1; }
/usr/lib/llvm-19/bin/llvm-readelf -h "$tmp/x86_64-pic/digits.o" | grep -q 'X86-64' || { echo "FAIL: not x86-64"; fail=1; }
exit $fail
