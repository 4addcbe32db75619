#!/bin/bash
# tests/cli/arm_variants_test.sh: the aarch64 kernel variants (targets/aarch64/kernels/arm_q8.c, registry
# rows in src/lower/kernels.def, CPU features in targets/aarch64/target.c) through the tool.
#
#   1. Selection and report (`qllc info --target aarch64`): neoverse-n2 / cortex-a710 / apple-m2 run
#      __i8mm, neoverse-n1 / cortex-a76 __dotprod (saying i8mm is missing), cortex-a53 the reference
#      (saying what it lacks), generic --features +dotprod picks __dotprod, --features -i8mm falls back;
#      int16 and 16x8 layers run __neon on every CPU; so do float convs and FCs (arm_f32.h), and float
#      depthwise convs their own __neon row (libjit/bitcode/f32_dw.h).
#   2. Objects (inspected, not run): neoverse-n2 holds usmmla, neoverse-n1 udot and no mmla, cortex-a53
#      neither; the objects need no symbol beyond memcpy/memset; the float objects multiply by a lane
#      (fmul v.4s, v.4s, v.s[i]) and never fuse (no fmla / fmadd: not the reference's bits).
#   3. Bits: the int8 bundles for cortex-a53 (reference), neoverse-n1 (dotprod) and neoverse-n2 (i8mm),
#      and the int16 and 16x8 bundles (__neon), and the float bundles (generic, cortex-a53: __neon), run
#      under `qemu-aarch64 -cpu max`, write the bytes the x86_64 JIT (`qllc run`, this host's variant)
#      writes, on a conv + FC model and a residual conv model, and in float on a depthwise-separable model
#      (SKIPPED without the cross tools).
: "${QLLC:?}" "${QLLC_SOURCE_DIR:?}"
. "$QLLC_SOURCE_DIR/tests/lib.sh"
D=$QLLC_SOURCE_DIR/tests/models/data

for n in cnn_bn_pool residual depthwise_separable; do # calibrated on their one test input
  mkdir -p "$tmp/calib-$n" && cp "$D/$n/input_0.npy" "$tmp/calib-$n/"
  "$QLLC" profile "$D/$n/model.onnx" --dataset "$tmp/calib-$n" -o "$tmp/$n.yaml" >/dev/null 2>"$tmp/err" ||
    fail "profile $n: $(cat "$tmp/err")"
done
M=$D/cnn_bn_pool/model.onnx
Q=(--profile "$tmp/cnn_bn_pool.yaml" --precision int8 --target aarch64)

kernels() { "$QLLC" info "$@" 2>&1 | sed -n '/^== kernels/,/^== memory/p'; }
expect_kernels() { # WHAT PATTERN COUNT INFO_ARGS...
  local what=$1 pat=$2 want=$3; shift 3
  local got; got=$(kernels "$@" | grep -cE -- "$pat")
  [ "$got" -eq "$want" ] || { fail "$what: $got lines match '$pat', want $want:"; kernels "$@"; return; }
  ok "$what"
}

# ---- 1. selection and report ----
for c in neoverse-n2 neoverse-v1 cortex-a710 apple-m2; do
  expect_kernels "$c: i8mm conv and fc" '^node .*: qllc_k_(conv2d|fc)_i8_i8_[iu]8__i8mm$' 3 "$M" "${Q[@]}" --cpu $c
done
for c in neoverse-n1 cortex-a76 apple-m1; do
  expect_kernels "$c: dotprod, saying why not i8mm" "__dotprod  \[cpu $c: __i8mm needs i8mm\]\$" 3 "$M" "${Q[@]}" --cpu $c
done
expect_kernels "cortex-a53: the reference, naming what it lacks" \
  ': qllc_k_(conv2d|fc)_i8_i8_[iu]8  \[cpu cortex-a53: __i8mm needs dotprod, i8mm; __dotprod needs dotprod\]$' 3 "$M" "${Q[@]}" --cpu cortex-a53
expect_kernels "default cpu (generic): the reference" ': qllc_k_(conv2d|fc)_i8_i8_[iu]8  \[cpu generic: ' 3 "$M" "${Q[@]}"
expect_kernels "generic +dotprod: dotprod" '__dotprod  \[cpu generic: __i8mm needs i8mm\]$' 3 "$M" "${Q[@]}" --cpu generic --features +dotprod
expect_kernels "generic +dotprod,+i8mm: i8mm" '__i8mm$' 3 "$M" "${Q[@]}" --cpu generic --features +dotprod,+i8mm
expect_kernels "int16 (generic): neon" '^node .*: qllc_k_(conv2d|fc)_i16_i16_i16__neon$' 3 "$M" --profile "$tmp/cnn_bn_pool.yaml" --precision int16 --target aarch64
expect_kernels "16x8 (generic): neon" '^node .*: qllc_k_(conv2d|fc)_i16_i8_i16__neon$' 3 "$M" --profile "$tmp/cnn_bn_pool.yaml" --precision int16 --weight-precision int8 --target aarch64
for c in generic cortex-a53 neoverse-v2; do
  expect_kernels "float $c: neon" '^node .*: qllc_k_(conv2d|fc)_f32_f32_f32__neon$' 3 "$M" --target aarch64 --cpu $c
done
for c in generic cortex-a53; do
  expect_kernels "float depthwise $c: neon" '^node .*: qllc_k_dwconv2d_f32_f32_f32__neon$' 2 \
    "$D/depthwise_separable/model.onnx" --target aarch64 --cpu $c
done
expect_kernels "neoverse-n2 -i8mm: dotprod" '__dotprod  \[cpu neoverse-n2: __i8mm needs i8mm\]$' 3 "$M" "${Q[@]}" --cpu neoverse-n2 --features=-i8mm

# ---- 2. objects ----
compile() { # DIR MODEL PROFILE CPU [PRECISION FLAGS...]
  local d=$1 m=$2 p=$3 c=$4; shift 4
  [ $# -gt 0 ] || set -- --precision int8
  "$QLLC" compile "$m" --profile "$p" "$@" --target aarch64 --cpu "$c" -o "$d" --name net \
    >"$d.log" 2>&1 || { fail "compile $d ($c): $(cat "$d.log")"; return 1; }
}
for n in cnn_bn_pool residual; do
  for c in cortex-a53 neoverse-n1 neoverse-n2; do
    compile "$tmp/$n-$c" "$D/$n/model.onnx" "$tmp/$n.yaml" $c || continue
    dis=$("$OBJDUMP" -d "$tmp/$n-$c/net.o")
    mm=$(grep -cE '\b(us|s)mmla\b' <<<"$dis"); dot=$(grep -cE '\b[su]dot\b' <<<"$dis")
    case $c in
    neoverse-n2) [ "$mm" -gt 0 ] && ok "$n $c: the object has usmmla ($mm)" || fail "$n $c: no smmla/usmmla" ;;
    neoverse-n1) [ "$dot" -gt 0 ] && [ "$mm" -eq 0 ] && ok "$n $c: udot ($dot), no mmla" || fail "$n $c: udot $dot, mmla $mm" ;;
    cortex-a53) [ "$dot" -eq 0 ] && [ "$mm" -eq 0 ] && ok "$n $c: no dot product instruction" || fail "$n $c: udot $dot, mmla $mm" ;;
    esac
    und=$("$NM" "$tmp/$n-$c/net.o" | awk '$1 == "U" {print $2}' | grep -vxE 'memcpy|memset' | tr '\n' ' ')
    [ -z "$und" ] && ok "$n $c: no symbol beyond memcpy/memset" || fail "$n $c: undefined symbols: $und"
  done
done

for n in cnn_bn_pool residual depthwise_separable; do
  for c in generic cortex-a53; do
    compile "$tmp/$n-f32-$c" "$D/$n/model.onnx" "$tmp/$n.yaml" $c --precision float || continue
    dis=$("$OBJDUMP" -d "$tmp/$n-f32-$c/net.o")
    lane=$(grep -cE '\bfmul\s+v[0-9]+\.4s, v[0-9]+\.4s, v[0-9]+\.s\[' <<<"$dis")
    fused=$(grep -cE '\b(fmla|fmls|fmadd|fmsub|fnmadd|fnmsub)\b' <<<"$dis")
    [ "$lane" -gt 0 ] && [ "$fused" -eq 0 ] && ok "$n float $c: fmul by lane ($lane), no fused multiply-add" ||
      fail "$n float $c: fmul by lane $lane, fused multiply-adds $fused"
  done
done

# ---- 3. bits: qemu vs the x86_64 JIT ----
if ! command -v aarch64-linux-gnu-gcc >/dev/null || ! command -v qemu-aarch64 >/dev/null; then
  skip "bits: no aarch64-linux-gnu-gcc or qemu-aarch64"
else
  cat >"$tmp/drv.c" <<'EOC'
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "net.h"
/* argv[1]: raw input bytes; writes the raw output bytes to stdout */
int main(int argc, char **argv) {
  static uint8_t mut[net_MUTABLE_MEM_SIZE + 64] __attribute__((aligned(64)));
  static uint8_t act[net_ACTIVATIONS_MEM_SIZE + 64] __attribute__((aligned(64)));
  FILE *f = argc > 1 ? fopen(argv[1], "rb") : NULL;
  if (!f || fread(mut + net_inputs[0].offset, 1, net_inputs[0].size, f) != net_inputs[0].size) return 2;
  fclose(f);
  if (net(NULL, mut, act) != 0) return 1;
  fwrite(mut + net_outputs[0].offset, 1, net_outputs[0].size, stdout);
  return 0;
}
EOC
  # int16 and 16x8 bundles (the __neon variants; cortex-a53's too) next to the int8 ones
  for n in cnn_bn_pool residual; do
    compile "$tmp/$n-i16-cortex-a53" "$D/$n/model.onnx" "$tmp/$n.yaml" cortex-a53 --precision int16
    compile "$tmp/$n-16x8-cortex-a53" "$D/$n/model.onnx" "$tmp/$n.yaml" cortex-a53 --precision int16 --weight-precision int8
  done
  for n in cnn_bn_pool residual depthwise_separable; do
   precs="int8 i16 16x8 f32"
   [ $n = depthwise_separable ] && precs=f32
   for prec in $precs; do
    case $prec in
    f32) P=(--precision float); cpus="generic cortex-a53"; pre="f32-" ;;
    int8) P=(--precision int8); cpus="cortex-a53 neoverse-n1 neoverse-n2"; pre="" ;;
    i16) P=(--precision int16); cpus="cortex-a53"; pre="i16-" ;;
    16x8) P=(--precision int16 --weight-precision int8); cpus="cortex-a53"; pre="16x8-" ;;
    esac
    "$QLLC" run "$D/$n/model.onnx" --profile "$tmp/$n.yaml" "${P[@]}" -i "$D/$n/input_0.npy" \
      --output-dir "$tmp/jit-$n-$prec" >"$tmp/run.log" 2>&1 || { fail "$n $prec: run: $(cat "$tmp/run.log")"; continue; }
    out=$(ls "$tmp/jit-$n-$prec"/*.npy | head -1)
    for c in $cpus; do
      d=$tmp/$n-$pre$c
      [ -f "$d/net.o" ] || continue
      [ "$prec" = int8 ] || grep -q '__neon' "$d/net.h" || fail "$n $prec $c: the header does not name the __neon kernels"
      size=$(sed -n 's/.*output .* offset [0-9]*, \([0-9]*\) bytes.*/\1/p' "$d/net.h" | head -1)
      isize=$(sed -n 's/.*input .* offset [0-9]*, \([0-9]*\) bytes.*/\1/p' "$d/net.h" | head -1)
      tail -c "$isize" "$D/$n/input_0.npy" >"$tmp/in.raw"
      aarch64-linux-gnu-gcc -std=c11 -O1 -I "$d" "$tmp/drv.c" "$d/net.o" -o "$d/run" >"$d.cc.log" 2>&1 ||
        { fail "$n $c: link: $(cat "$d.cc.log")"; continue; }
      got=$(qemu-aarch64 -cpu max -L /usr/aarch64-linux-gnu "$d/run" "$tmp/in.raw" | od -An -tx1 | tr -d ' \n')
      want=$(tail -c "$size" "$out" | od -An -tx1 | tr -d ' \n')
      [ -n "$got" ] && [ "$got" = "$want" ] && ok "$n $prec $c bundle under qemu: the x86_64 JIT's bytes" ||
        fail "$n $prec $c bundle under qemu: $got, JIT $want"
    done
   done
  done
fi
finish arm_variants_test
