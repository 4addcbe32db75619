#!/bin/bash
# tests/cli/amx_variants_test.sh: the AMX-INT8 variants (targets/x86_64/kernels/x86_amx.c, __amx rows of
# src/lower/kernels.def) through the tool.
#
#   1. Selection and report (`qllc info`, any host): sapphirerapids and graniterapids run __amx for int8
#      conv and FC; znver5 / icelake-server run __avx512vnni saying __amx needs amx-tile, amx-int8;
#      sapphirerapids --features -amx-int8 falls back to __avx512vnni.
#   2. Objects (any host: compiled and inspected, not run): the sapphirerapids bundle holds tdpbusd (FC:
#      u8 activations x s8 weights), tdpbsud (conv: s8 weight rows x u8 panel), ldtilecfg and tilerelease, needs no symbol beyond memcpy/memset, and its header says what the host
#      must do first (arch_prctl); a znver5 bundle has no tile instruction and no such note.
#   3. Bits: on an AMX host, the JIT (native: __amx) writes the bytes of the reference (--cpu x86-64);
#      without AMX, the JIT told --cpu sapphirerapids falls back (Linux refuses the tile data) and writes
#      the reference's bytes instead of faulting;
#      elsewhere SKIPPED (this needs AMX hardware: qemu does not emulate it; Intel SDE would).
#      tests/libjit/q_amx_emu_test.c runs the kernels' tiling on any AVX-512 host with the tile
#      instructions emulated in C; tests/libjit/q_amx_test.c runs them on AMX hardware.
set -u
: "${QLLC:?}" "${QLLC_SOURCE_DIR:?}"
D=$QLLC_SOURCE_DIR/tests/models/data
fails=0 skips=0 oks=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
ok() { echo "ok: $*"; oks=$((oks + 1)); }
skip() { echo "SKIPPED: $*"; skips=$((skips + 1)); }
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
OBJDUMP=$(command -v llvm-objdump-19 || echo /usr/lib/llvm-19/bin/llvm-objdump)
NM=$(command -v llvm-nm-19 || echo /usr/lib/llvm-19/bin/llvm-nm)

for n in cnn_bn_pool residual; do
  mkdir -p "$tmp/calib-$n" && cp "$D/$n/input_0.npy" "$tmp/calib-$n/"
  "$QLLC" profile "$D/$n/model.onnx" --dataset "$tmp/calib-$n" -o "$tmp/$n.yaml" >/dev/null 2>"$tmp/err" ||
    fail "profile $n: $(cat "$tmp/err")"
done
M=$D/cnn_bn_pool/model.onnx
Q=(--profile "$tmp/cnn_bn_pool.yaml" --precision int8)

kernels() { "$QLLC" info "$@" 2>&1 | sed -n '/^== kernels/,/^== memory/p'; }
expect_kernels() { # WHAT PATTERN COUNT INFO_ARGS...
  local what=$1 pat=$2 want=$3; shift 3
  local got; got=$(kernels "$@" | grep -cE -- "$pat")
  [ "$got" -eq "$want" ] || { fail "$what: $got lines match '$pat', want $want:"; kernels "$@"; return; }
  ok "$what"
}

# ---- 1. selection and report ----
for c in sapphirerapids graniterapids; do
  expect_kernels "$c: amx conv and fc" '^node .*: qllc_k_(conv2d|fc)_i8_i8_[iu]8__amx$' 3 "$M" "${Q[@]}" --cpu $c
done
for c in znver5 icelake-server; do
  expect_kernels "$c: avx512vnni, saying why not amx" "__avx512vnni  \[cpu $c: __amx needs amx-tile, amx-int8\]\$" 3 "$M" "${Q[@]}" --cpu $c
done
expect_kernels "sapphirerapids -amx-int8: avx512vnni" '__avx512vnni  \[cpu sapphirerapids: __amx needs amx-int8\]$' 3 "$M" "${Q[@]}" --cpu sapphirerapids --features=-amx-int8
expect_kernels "int16 on sapphirerapids: no amx variant (int8 only)" 'qllc_k_(conv2d|fc)_i16_i16_i16__avx512vnni$' 3 "$M" --profile "$tmp/cnn_bn_pool.yaml" --precision int16 --cpu sapphirerapids

# ---- 2. objects ----
for n in cnn_bn_pool residual; do
  for c in sapphirerapids znver5; do
    d=$tmp/$n-$c
    "$QLLC" compile "$D/$n/model.onnx" --profile "$tmp/$n.yaml" --precision int8 --cpu $c -o "$d" --name net \
      >"$d.log" 2>&1 || { fail "compile $n $c: $(cat "$d.log")"; continue; }
    dis=$("$OBJDUMP" -d "$d/net.o")
    dp=$(grep -cw tdpbusd <<<"$dis"); ds=$(grep -cw tdpbsud <<<"$dis") # FC: u8 x s8; conv: s8 weights x u8
    cfg=$(grep -cw ldtilecfg <<<"$dis"); rel=$(grep -cw tilerelease <<<"$dis")
    und=$("$NM" "$d/net.o" | awk '$1 == "U" {print $2}' | grep -vxE 'memcpy|memset' | tr '\n' ' ')
    [ -z "$und" ] && ok "$n $c: no symbol beyond memcpy/memset" || fail "$n $c: undefined symbols: $und"
    if [ $c = sapphirerapids ]; then
      want_fc=0; [ $n = cnn_bn_pool ] && want_fc=1 # its Gemm runs the FC variant (tdpbusd)
      [ "$ds" -gt 0 ] && { [ $want_fc = 0 ] || [ "$dp" -gt 0 ]; } && [ "$cfg" -gt 0 ] && [ "$rel" -gt 0 ] &&
        ok "$n $c: tdpbusd ($dp, FC), tdpbsud ($ds, conv), ldtilecfg, tilerelease" ||
        fail "$n $c: tdpbusd $dp, tdpbsud $ds, ldtilecfg $cfg, tilerelease $rel"
      grep -q 'ARCH_REQ_XCOMP_PERM' "$d/net.h" && ok "$n $c: the header says to ask for the tile data first" ||
        fail "$n $c: no AMX note in the header"
    else
      [ "$dp" -eq 0 ] && [ "$ds" -eq 0 ] && [ "$cfg" -eq 0 ] && ok "$n $c: no tile instruction" ||
        fail "$n $c: tdpbusd $dp, tdpbsud $ds, ldtilecfg $cfg"
      grep -q 'ARCH_REQ_XCOMP_PERM' "$d/net.h" && fail "$n $c: AMX note without AMX kernels" || ok "$n $c: no AMX note"
    fi
  done
done

# ---- 3. bits (AMX hosts only) ----
if grep -qw amx_int8 /proc/cpuinfo && grep -qw amx_tile /proc/cpuinfo; then
  for n in cnn_bn_pool residual; do
    kernels "$D/$n/model.onnx" --profile "$tmp/$n.yaml" --precision int8 | grep -q '__amx$' ||
      { fail "$n: the JIT on this AMX host does not pick __amx:"; kernels "$D/$n/model.onnx" --profile "$tmp/$n.yaml" --precision int8; }
    for c in native x86-64; do
      "$QLLC" run "$D/$n/model.onnx" --profile "$tmp/$n.yaml" --precision int8 --cpu $c -i "$D/$n/input_0.npy" \
        --output-dir "$tmp/out-$n-$c" >"$tmp/run.log" 2>&1 || fail "$n $c: run: $(cat "$tmp/run.log")"
    done
    cmp -s "$(ls "$tmp/out-$n-native"/*.npy | head -1)" "$(ls "$tmp/out-$n-x86-64"/*.npy | head -1)" &&
      ok "$n: the JIT's __amx bytes = the reference's" || fail "$n: __amx output differs from the reference"
  done
else
  skip "bits: this CPU has no AMX-INT8 (the kernels cannot run here; no emulator in this setup)"
  # the JIT told it runs on a sapphirerapids: Linux refuses the tile data here, so the JIT must fall back
  # (report: "Linux refused the AMX tile data") rather than run a tile instruction (SIGILL)
  n=cnn_bn_pool
  for c in sapphirerapids x86-64; do
    "$QLLC" run "$D/$n/model.onnx" --profile "$tmp/$n.yaml" --precision int8 --cpu $c -i "$D/$n/input_0.npy" \
      --output-dir "$tmp/out-$c" >"$tmp/run.log" 2>&1 || fail "JIT --cpu $c: $(tail -3 "$tmp/run.log")"
  done
  cmp -s "$tmp/out-sapphirerapids/output.npy" "$tmp/out-x86-64/output.npy" &&
    ok "JIT --cpu sapphirerapids without AMX: falls back, the reference's bytes" ||
    fail "JIT --cpu sapphirerapids without AMX: no fallback or other bytes"
fi
echo "amx_variants_test: $oks passed, $fails failed, $skips skipped"
[ $fails -eq 0 ]
