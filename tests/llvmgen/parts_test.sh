#!/bin/bash
# tests/llvmgen/parts_test.sh: a long program is compiled in parts (src/llvmgen/codegen.c, build_entry:
# NAME.partK functions of at most 128 kernel calls, called in order by the entry), and computes what one
# function would. tests/llvmgen/data/long_chain.onnx: 150 x (Add 1, Relu) on [1, 16] (300 calls); its
# expected output was computed by numpy when the data was made (exact in float: small integers).
#   - `qllc run` (the JIT) gives numpy's values bit for bit;
#   - the x86_64 bundle's object has the parts NAME.part0 .. NAME.part2 as local functions, the entry
#     global, and a driver linked with it gives the same bytes;
#   - an aarch64 bundle under qemu too (when the cross tools exist).
: "${QLLC:?}" "${QLLC_SOURCE_DIR:?}"
. "$QLLC_SOURCE_DIR/tests/lib.sh"
D=$QLLC_SOURCE_DIR/tests/llvmgen/data
want=$(tail -c 64 "$D/long_chain_y.npy" | od -An -tx1 | tr -d ' \n')

"$QLLC" run "$D/long_chain.onnx" -i "$D/long_chain_x.npy" --output-dir "$tmp/jit" >"$tmp/run.log" 2>&1 ||
  fail "run: $(cat "$tmp/run.log")"
got=$(tail -c 64 "$tmp/jit/r149.npy" 2>/dev/null | od -An -tx1 | tr -d ' \n')
[ -n "$got" ] && [ "$got" = "$want" ] && ok "JIT: numpy's output" || fail "JIT output differs from numpy's"

cat >"$tmp/drv.c" <<'EOC'
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "net.h"
int main(void) {
  static uint8_t mut[net_MUTABLE_MEM_SIZE + 64] __attribute__((aligned(64)));
  static uint8_t act[net_ACTIVATIONS_MEM_SIZE + 64] __attribute__((aligned(64)));
  float *x = (float *)(mut + net_inputs[0].offset);
  for (int i = 0; i < 16; i++) x[i] = (float)(i - 6);
  if (net(NULL, mut, act) != 0) return 1;
  fwrite(mut + net_outputs[0].offset, 1, 64, stdout);
  return 0;
}
EOC
bundle() { # TAG TARGET CC RUN
  local d=$tmp/$1
  "$QLLC" compile "$D/long_chain.onnx" -o "$d" --name net --target "$2" >"$d.log" 2>&1 || { fail "$1: compile: $(cat "$d.log")"; return; }
  local syms; syms=$(nm "$d/net.o" 2>/dev/null || /usr/lib/llvm-19/bin/llvm-nm "$d/net.o")
  echo "$syms" | grep -qE ' [tT] net\.part2$' && echo "$syms" | grep -qE ' T net$' && ok "$1: the object has net and net.part0..2" ||
    fail "$1: no parts in the object: $(echo "$syms" | grep net | tr '\n' ' ')"
  $3 -std=c11 -O1 -I "$d" "$tmp/drv.c" "$d/net.o" -o "$d/run" >"$d.cc.log" 2>&1 || { fail "$1: link: $(cat "$d.cc.log")"; return; }
  local out; out=$($4 "$d/run" | od -An -tx1 | tr -d ' \n')
  [ "$out" = "$want" ] && ok "$1 bundle: numpy's output" || fail "$1 bundle: output differs from numpy's"
}
bundle x86 x86_64 gcc ""
if command -v aarch64-linux-gnu-gcc >/dev/null && command -v qemu-aarch64 >/dev/null; then
  bundle a64 aarch64 aarch64-linux-gnu-gcc "qemu-aarch64 -L /usr/aarch64-linux-gnu"
else
  echo "SKIPPED: aarch64: no cross compiler or qemu"; skips=$((skips + 1))
fi
finish parts_test
