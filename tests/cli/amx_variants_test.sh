#!/bin/bash
# tests/cli/amx_variants_test.sh: the AMX-INT8 variants (targets/x86_64/kernels/x86_amx.c, __amx rows of
# src/lower/kernels.def) through the tool.
#
#   1. Selection and report (`qllc info`, any host), the rule table: sapphirerapids and graniterapids run
#      __avx512vnni convs (the AMX conv only where measured faster) and __amx for an FC of 64 rows
#      (fc64.onnx), not for a GEMV; znver5 / icelake-server run __avx512vnni saying __amx needs amx-tile,
#      amx-int8; sapphirerapids --features -amx-int8 falls back to __avx512vnni; a --tune-cache file with
#      AMX timings for a sapphirerapids moves its conv to __amx, or to conv2dcl__amx (the implicit-im2col
#      conv, MEASURED, its NCHW ends converted inside: the layouts report) where that one times fastest.
#   2. Objects (any host: compiled and inspected, not run): bundles with AMX kernels hold tdpbusd (FC: u8
#      activations x s8 weights) or tdpbsud (conv: s8 weight rows x u8 panel), ldtilecfg and tilerelease,
#      need no symbol beyond memcpy/memset, and their header says what the host must do first
#      (net_NEEDS_AMX 1, net_prepare()); conv2dcl__amx holds tdpbssd (i8 activations, read where they lie)
#      or tdpbusd (u8); bundles without have no tile instruction and net_NEEDS_AMX 0;
#      net_prepare() is compiled and called (0 without AMX kernels, an error on a CPU without AMX).
#   3. Bits: on an AMX host, --cpu native times __amx, and the JIT's bytes equal the reference's
#      (--cpu x86-64); without AMX, the JIT told --cpu sapphirerapids falls back (Linux refuses the tile
#      data) and writes the reference's bytes instead of faulting;
#      elsewhere SKIPPED (this needs AMX hardware: qemu does not emulate it; Intel SDE would).
#      tests/libjit/q_amx_emu_test.c runs the kernels' tiling on any AVX-512 host with the tile
#      instructions emulated in C; tests/libjit/q_amx_test.c runs them on AMX hardware.
: "${QLLC:?}" "${QLLC_SOURCE_DIR:?}"
. "$QLLC_SOURCE_DIR/tests/lib.sh"
D=$QLLC_SOURCE_DIR/tests/models/data

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
# The rule table (a named CPU): the AMX conv was measured slower than the AVX-512 VNNI convs, so it runs
# only where a measurement prefers it; the AMX FC runs FCs of 64 rows or more (fc64.onnx), not a GEMV.
F=$QLLC_SOURCE_DIR/tests/cli/data/fc64.onnx
"$QLLC" profile "$F" --dataset "$QLLC_SOURCE_DIR/tests/cli/data/fc64_x.npy" -o "$tmp/fc64.yaml" >/dev/null 2>"$tmp/err" ||
  fail "profile fc64: $(cat "$tmp/err")"
for c in sapphirerapids graniterapids; do
  expect_kernels "$c: avx512vnni convs, __amx only where measured" "__avx512vnni  \[cpu $c: __amx only where measured faster" 2 "$M" "${Q[@]}" --cpu $c
  expect_kernels "$c: a GEMV on avx512vnni" '^node .*: qllc_k_fc_i8_i8_[iu]8__avx512vnni$' 1 "$M" "${Q[@]}" --cpu $c
  expect_kernels "$c: an FC of 64 rows on amx" '^node fc .*: qllc_k_fc_i8_i8_[iu]8__amx$' 1 "$F" --profile "$tmp/fc64.yaml" --precision int8 --cpu $c
done
for c in znver5 icelake-server; do
  expect_kernels "$c: avx512vnni, saying why not amx" "__avx512vnni  \[cpu $c: __amx needs amx-tile, amx-int8\]\$" 2 "$M" "${Q[@]}" --cpu $c
  expect_kernels "$c: an FC of 64 rows on avx512vnni" '^node fc .*__avx512vnni  \[cpu .*: __amx needs amx-tile, amx-int8\]$' 1 "$F" --profile "$tmp/fc64.yaml" --precision int8 --cpu $c
done
expect_kernels "sapphirerapids -amx-int8: avx512vnni" '__avx512vnni  \[cpu sapphirerapids: __amx needs amx-int8\]$' 2 "$M" "${Q[@]}" --cpu sapphirerapids --features=-amx-int8
expect_kernels "int16 on sapphirerapids: no amx variant (int8 only)" 'qllc_k_(conv2d|fc)_i16_i16_i16__avx512vnni$' 3 "$M" --profile "$tmp/cnn_bn_pool.yaml" --precision int16 --cpu sapphirerapids
# Timings measured on an AMX CPU (--tune-cache) decide for that CPU where they time every candidate: the
# host's timings of the second conv (--cpu native), given to a sapphirerapids with __amx the fastest
"$QLLC" info "$M" "${Q[@]}" --cpu native --tune-cache "$tmp/host.tc" >/dev/null 2>"$tmp/err" || fail "tune: $(cat "$tmp/err")"
if grep -q 'conv2d_i8_i8_[iu]8__avx512vnni' "$tmp/host.tc" 2>/dev/null; then
  { head -n 3 "$tmp/host.tc"
    tail -n +4 "$tmp/host.tc" | awk -F'\t' -v OFS='\t' '{ $1 = "sapphirerapids"; print;
      if ($2 ~ /^qllc_k_conv2d_.*__avx512vnni$/) { sub(/__avx512vnni$/, "__amx", $2); $4 = "0.001"; print;
        sub(/^qllc_k_conv2d_/, "qllc_k_conv2dcl_", $2); $4 = "1000"; print } }'
  } >"$tmp/spr.tc"
  expect_kernels "sapphirerapids, timings from an AMX CPU: amx for the conv they time" \
    '^node /conv2/Conv .*: qllc_k_conv2d_i8_i8_[iu]8__amx  \[timed on sapphirerapids \(--tune-cache\):' 1 "$M" "${Q[@]}" --cpu sapphirerapids --tune-cache "$tmp/spr.tc"
  # the same with the implicit-im2col conv (conv2dcl__amx, a MEASURED row with NHWC ends) timed fastest
  awk -F'\t' -v OFS='\t' 'NR > 3 && $2 ~ /^qllc_k_conv2dcl_.*__amx$/ { $4 = "0.0001" } { print }' "$tmp/spr.tc" >"$tmp/spr2.tc"
  expect_kernels "sapphirerapids, timings from an AMX CPU: conv2dcl__amx where it times fastest" \
    '^node /conv2/Conv .*: qllc_k_conv2dcl_i8_i8_[iu]8__amx  \[timed on sapphirerapids \(--tune-cache\):' 1 "$M" "${Q[@]}" --cpu sapphirerapids --tune-cache "$tmp/spr2.tc"
  # its input comes channel-last from the max pool's twin (which converts its own NCHW input); its output,
  # read by the Pad and average pool (no channel-last forms), is converted inside
  expect_kernels "conv2dcl__amx: an NHWC input from the pool's twin, its NCHW output converted inside" \
    '^  node /conv2/Conv \(Conv\): qllc_k_conv2dcl_i8_i8_[iu]8__amx: output -> NCHW$' 1 "$M" "${Q[@]}" --cpu sapphirerapids --tune-cache "$tmp/spr2.tc"
  expect_kernels "conv2dcl__amx: the pool before it writes NHWC" \
    '^  node /MaxPool \(MaxPool\): qllc_k_maxpool2dcl_i8_i8: input NCHW -> channel groups$' 1 "$M" "${Q[@]}" --cpu sapphirerapids --tune-cache "$tmp/spr2.tc"
else
  skip "timings: this CPU has no AVX-512 VNNI panel conv to time"
fi

# ---- 2. objects ----
# with AMX kernels: fc64 for sapphirerapids (tdpbusd) and cnn_bn_pool with the AMX timings (tdpbsud); without:
# the rule table's sapphirerapids and a znver5 bundle
objects() { # NAME MODEL PROFILE WANT(amx|none) COMPILE_ARGS...
  local n=$1 model=$2 prof=$3 want=$4; shift 4
  local d=$tmp/obj-$n
  "$QLLC" compile "$model" --profile "$prof" --precision int8 -o "$d" --name net "$@" >"$d.log" 2>&1 ||
    { fail "compile $n: $(cat "$d.log")"; return; }
  local dis; dis=$("$OBJDUMP" -d "$d/net.o")
  local dp ds cfg rel
  dp=$(grep -cw tdpbusd <<<"$dis"); ds=$(grep -cw tdpbsud <<<"$dis") # FC: u8 x s8; conv: s8 weights x u8
  cfg=$(grep -cw ldtilecfg <<<"$dis"); rel=$(grep -cw tilerelease <<<"$dis")
  local und; und=$("$NM" "$d/net.o" | awk '$1 == "U" {print $2}' | grep -vxE 'memcpy|memset' | tr '\n' ' ')
  [ -z "$und" ] && ok "$n: no symbol beyond memcpy/memset" || fail "$n: undefined symbols: $und"
  case $want in
    fc) [ "$dp" -gt 0 ] && [ "$cfg" -gt 0 ] && [ "$rel" -gt 0 ] && ok "$n: tdpbusd ($dp), ldtilecfg, tilerelease" ||
          fail "$n: tdpbusd $dp, ldtilecfg $cfg, tilerelease $rel" ;;
    conv) [ "$ds" -gt 0 ] && [ "$cfg" -gt 0 ] && [ "$rel" -gt 0 ] && ok "$n: tdpbsud ($ds), ldtilecfg, tilerelease" ||
          fail "$n: tdpbsud $ds, ldtilecfg $cfg, tilerelease $rel" ;;
    amxcl) local dss; dss=$(grep -cw tdpbssd <<<"$dis") # i8 activations x s8 weights (u8: tdpbusd)
          [ $((dss + dp)) -gt 0 ] && [ "$cfg" -gt 0 ] && [ "$rel" -gt 0 ] && ok "$n: tdpbssd ($dss) / tdpbusd ($dp), ldtilecfg, tilerelease" ||
          fail "$n: tdpbssd $dss, tdpbusd $dp, ldtilecfg $cfg, tilerelease $rel" ;;
    none) [ "$dp" -eq 0 ] && [ "$ds" -eq 0 ] && [ "$cfg" -eq 0 ] && ok "$n: no tile instruction" ||
          fail "$n: tdpbusd $dp, tdpbsud $ds, ldtilecfg $cfg" ;;
  esac
  if [ $want = none ]; then
    grep -q '^#define net_NEEDS_AMX 0$' "$d/net.h" && ! grep -q '^ \* AMX: this bundle' "$d/net.h" &&
      ok "$n: no AMX note, net_NEEDS_AMX 0" || fail "$n: AMX note or net_NEEDS_AMX 1 without AMX kernels"
  else
    grep -q 'ARCH_REQ_XCOMP_PERM' "$d/net.h" && grep -q '^#define net_NEEDS_AMX 1$' "$d/net.h" &&
      ok "$n: the header says to ask for the tile data first (net_NEEDS_AMX 1)" ||
      fail "$n: no AMX note or net_NEEDS_AMX 1 in the header"
  fi
  # net_prepare(): 0 at once without AMX kernels; with them, 0 exactly when Linux grants the tile data
  # (an AMX host); the header compiles as C and its inline system call runs here
  printf '#include "net.h"\nint main(void) { return net_prepare() == 0 ? 0 : 3; }\n' >"$d/prep.c"
  if cc -O2 -I "$d" "$d/prep.c" -o "$d/prep" 2>"$d/cc.log"; then
    "$d/prep"; local rc=$? w=0
    [ $want != none ] && ! grep -qw amx_tile /proc/cpuinfo && w=3
    [ $rc -eq $w ] && ok "$n: net_prepare() returns $([ $w = 0 ] && echo 0 || echo 'an error') here" ||
      fail "$n: net_prepare() exit $rc, want $w"
  else
    fail "$n: the header with net_prepare() does not compile: $(cat "$d/cc.log")"
  fi
}
objects fc64-spr "$F" "$tmp/fc64.yaml" fc --cpu sapphirerapids
[ -f "$tmp/spr.tc" ] && objects cnn-spr-timed "$M" "$tmp/cnn_bn_pool.yaml" conv --cpu sapphirerapids --tune-cache "$tmp/spr.tc"
[ -f "$tmp/spr2.tc" ] && objects cnn-spr-timed-cl "$M" "$tmp/cnn_bn_pool.yaml" amxcl --cpu sapphirerapids --tune-cache "$tmp/spr2.tc"
for n in cnn_bn_pool residual; do
  objects "$n-spr" "$D/$n/model.onnx" "$tmp/$n.yaml" none --cpu sapphirerapids
  objects "$n-znver5" "$D/$n/model.onnx" "$tmp/$n.yaml" none --cpu znver5
done

# ---- 3. bits (AMX hosts only) ----
if grep -qw amx_int8 /proc/cpuinfo && grep -qw amx_tile /proc/cpuinfo; then
  for n in cnn_bn_pool residual; do
    kernels "$D/$n/model.onnx" --profile "$tmp/$n.yaml" --precision int8 --cpu native | grep -q 'measured on this CPU: .*__amx' ||
      { fail "$n: this AMX host's choice does not time __amx:"; kernels "$D/$n/model.onnx" --profile "$tmp/$n.yaml" --precision int8 --cpu native; }
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
finish amx_variants_test
