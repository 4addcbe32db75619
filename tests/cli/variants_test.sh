#!/bin/bash
# tests/cli/variants_test.sh: the kernel registry's ISA variants (src/lower/kernels.def) are chosen by
# the target CPU, reported per node, compiled with their own instructions, and give the reference's bytes.
#
#   1. Selection and report (`qllc info`, any host): each fused layer names the variant the --cpu implies
#      (znver4: __avx512vnni, alderlake: __avxvnni, haswell: __avx2, x86-64-v2: the reference, with the
#      features it lacks), --features -X moves to the next variant, a depthwise conv stays on the
#      reference with its reason, int16 and 16x8 layers get their own variants, aarch64's generic CPU
#      the reference (tests/cli/arm_variants_test.sh tests the Arm variants); float: the FC and conv
#      rows (stride 1: the transposed conv2dt1 from 16 output channels, else the direct conv2ds1 for rows
#      of 32 pixels and more, the panel conv below), the depthwise
#      rows, the MaxPool's ISA copies (avx512, avx2, none on x86-64, aarch64 or under a user's
#      --kernels definition of the pool).
#   2. Objects (any host: compiled and inspected, not run): znver4 has vpdpbusd on zmm, alderlake the
#      VEX {vex} vpdpbusd, haswell vpmaddwd but no vpdpbusd, x86-64-v2 no AVX at all; the header's
#      report lists the kernels.
#   3. Bits (where the host runs them; otherwise reported SKIPPED): `qllc run` (the JIT) with each
#      variant forced through --cpu / --features writes the same bytes as the reference (--cpu x86-64),
#      int8 and int16 and 16x8, on a conv + FC model and a residual conv model.
#   Also direct_convs (tests/cli/data): conv2dc4, conv2dcl and conv2dc2 picked where the lowering's rule
#   says (16x8 conv2dc2 reporting its channels in one int32 run: all of them, the weights are small), and
#   in part 3 their bytes equal the reference's.
#   4. --strict refuses a layer that would run the portable kernel because the CPU lacks every variant's
#      features (x86-64-v2), and accepts the same model for znver4.
: "${QLLC:?}" "${QLLC_SOURCE_DIR:?}"
. "$QLLC_SOURCE_DIR/tests/lib.sh"
D=$QLLC_SOURCE_DIR/tests/models/data
flags=$(grep -m1 '^flags' /proc/cpuinfo)
has() { for f in "$@"; do [[ " $flags " == *" $f "* ]] || return 1; done; }

# direct_convs (tests/cli/data/make_direct_convs.py): a conv for each direct variant
mdir() { if [ "$1" = direct_convs ]; then echo "$QLLC_SOURCE_DIR/tests/cli/data/$1"; else echo "$D/$1"; fi; }
for n in cnn_bn_pool residual depthwise_separable direct_convs; do # calibrated on their one test input
  mkdir -p "$tmp/calib-$n" && cp "$(mdir $n)/input_0.npy" "$tmp/calib-$n/"
  "$QLLC" profile "$(mdir $n)/model.onnx" --dataset "$tmp/calib-$n" -o "$tmp/$n.yaml" >/dev/null 2>"$tmp/err" ||
    fail "profile $n: $(cat "$tmp/err")"
done
M=$D/cnn_bn_pool/model.onnx
Q=(--profile "$tmp/cnn_bn_pool.yaml" --precision int8)

# kernels INFO_ARGS... -> the "== kernels" section of qllc info
kernels() { "$QLLC" info "$@" 2>&1 | sed -n '/^== kernels/,/^== memory/p'; }
# expect_kernels WHAT PATTERN COUNT INFO_ARGS...: COUNT report lines match PATTERN
expect_kernels() {
  local what=$1 pat=$2 want=$3; shift 3
  local got; got=$(kernels "$@" | grep -cE -- "$pat")
  [ "$got" -eq "$want" ] || { fail "$what: $got lines match '$pat', want $want:"; kernels "$@"; return; }
  ok "$what"
}

# ---- 1. selection and report ----
expect_kernels "znver4: avx512vnni convs, saying why not amx" '^node .*: qllc_k_(conv2d|conv2dcl)_i8_i8_[iu]8__avx512vnni  \[cpu znver4: __amx needs amx-tile, amx-int8\]$' 2 "$M" "${Q[@]}" --cpu znver4
# the AMX FC takes FCs of 64 rows or more: a GEMV's report does not mention it
expect_kernels "znver4: avx512vnni fc" '^node .*: qllc_k_fc_i8_i8_[iu]8__avx512vnni$' 1 "$M" "${Q[@]}" --cpu znver4
expect_kernels "alderlake: avxvnni, saying why not avx512vnni" '__avxvnni  \[cpu alderlake: (__amx needs [^;]*; )?__avx512vnni needs avx512f, avx512bw, avx512vl, avx512dq, avx512vnni\]' 3 "$M" "${Q[@]}" --cpu alderlake
expect_kernels "haswell: avx2" '__avx2  \[cpu haswell: (__amx needs [^;]*; )?__avx512vnni needs .*; __avxvnni needs avxvnni\]' 3 "$M" "${Q[@]}" --cpu haswell
expect_kernels "x86-64-v2: the reference, naming what it lacks" ': qllc_k_(conv2d|fc)_i8_i8_[iu]8  \[cpu x86-64-v2: .*__avx2 needs avx2\]' 3 "$M" "${Q[@]}" --cpu x86-64-v2
expect_kernels "znver4 -avx512vnni: avx2 (znver4 has no avx-vnni)" '__avx2  \[' 3 "$M" "${Q[@]}" --cpu znver4 --features -avx512vnni
expect_kernels "x86-64 +avx2,+avxvnni: avxvnni" '__avxvnni  \[' 3 "$M" "${Q[@]}" --cpu x86-64 --features +avx2,+avxvnni
expect_kernels "aarch64 (generic): the reference, naming what it lacks" 'qllc_k_(conv2d|fc)_i8_i8_[iu]8  \[cpu generic: __i8mm needs dotprod, i8mm; __dotprod needs dotprod\]' 3 "$M" "${Q[@]}" --target aarch64
expect_kernels "int16: avx512vnni" 'qllc_k_(conv2d|fc)_i16_i16_i16__avx512vnni$' 3 "$M" --profile "$tmp/cnn_bn_pool.yaml" --precision int16 --cpu znver4
expect_kernels "16x8: avx512vnni" 'qllc_k_(conv2d|fc)_i16_i8_i16__avx512vnni$' 3 "$M" --profile "$tmp/cnn_bn_pool.yaml" --precision int16 --weight-precision int8 --cpu znver4
DW=("$D/depthwise_separable/model.onnx" --profile "$tmp/depthwise_separable.yaml" --precision int8 --cpu znver4)
DC=("$(mdir direct_convs)/model.onnx" --profile "$tmp/direct_convs.yaml" --cpu znver4)
expect_kernels "direct convs int8: conv2dc4 for the 40x40 stride-1 conv" '^node /c1/Conv .*: qllc_k_conv2dc4_i8_i8_i8__avx512vnni  \[cpu znver4: __amx needs' 1 "${DC[@]}" --precision int8
expect_kernels "direct convs int8: conv2dcl for stride 2 and 20x20" '^node /c[23]/Conv .*: qllc_k_conv2dcl_i8_i8_i8__avx512vnni  \[' 2 "${DC[@]}" --precision int8
expect_kernels "direct convs 16x8: conv2dc2 for the stride-1 convs, every channel in one int32 run" '^node /c([13])/Conv .*: qllc_k_conv2dc2_i16_i8_i16__avx512vnni  \(int32 sums: (8 of 8|16 of 16) output channels\)$' 2 "${DC[@]}" --precision int16 --weight-precision int8
expect_kernels "direct convs int16: conv2dc2 for the stride-1 convs" '^node /c[13]/Conv .*: qllc_k_conv2dc2_i16_i16_i16__avx512vnni$' 2 "${DC[@]}" --precision int16
expect_kernels "depthwise: the depthwise variant" 'qllc_k_dwconv2d_i8_i8_i8__avx512vnni$' 2 "${DW[@]}"
expect_kernels "depthwise model: the pointwise conv runs avx512vnni" 'qllc_k_conv2d_i8_i8_i8__avx512vnni  \[cpu znver4: __amx needs amx-tile, amx-int8\]$' 1 "${DW[@]}"
DWC=("$D/depthwise_separable/model.onnx" --profile "$tmp/depthwise_separable.yaml" --precision int8 --cpu cascadelake)
expect_kernels "depthwise on cascadelake (no VBMI): the reference, saying why" 'qllc_k_conv2d_i8_i8_i8  \[cpu cascadelake: __avx512vnni needs avx512vbmi\]' 2 "${DWC[@]}"
expect_kernels "depthwise int16: no variant, said" 'qllc_k_conv2d_i16_i16_i16  \[no depthwise ISA variant for x86_64\]' 2 "$D/depthwise_separable/model.onnx" --profile "$tmp/depthwise_separable.yaml" --precision int16 --cpu znver4
# float (issue 26): the Conv and FC layers run the float rows, and say so
expect_kernels "float model: the avx512 float rows" '^node .*: qllc_k_(conv2d|conv2ds1|conv2dt1|fc)_f32_f32_f32__avx512$' 3 "$M" --cpu znver4
C6=$QLLC_SOURCE_DIR/tests/cli/data/shapes/cnn6.onnx # 3x3 stride-1 convs at 32x32 (two), 16x16 and 8x8 (two each)
expect_kernels "float model: the direct conv for the 32-wide stride-1 convs of 8 channels, the transposed conv for those of 16" '^node /convs\.[01]/Conv .*: qllc_k_conv2ds1_f32_f32_f32__avx512$|^node /convs\.[2-5]/Conv .*: qllc_k_conv2dt1_f32_f32_f32__avx512$' 6 "$C6" --cpu znver4
expect_kernels "float model on x86-64-v3: the avx2 float rows, saying why" '^node .*: qllc_k_(conv2d|conv2ds1|fc)_f32_f32_f32__avx2  \[cpu x86-64-v3: __avx512 needs avx512f\]$' 3 "$M" --cpu x86-64-v3
expect_kernels "float model on x86-64-v3: the avx2 direct conv for the 32-wide stride-1 convs" '^node /convs\.[01]/Conv .*: qllc_k_conv2ds1_f32_f32_f32__avx2  \[' 2 "$C6" --cpu x86-64-v3
expect_kernels "float depthwise: the avx512 depthwise rows" '^node .*: qllc_k_dwconv2d_f32_f32_f32__avx512$' 2 "$D/depthwise_separable/model.onnx" --cpu znver4
expect_kernels "float depthwise on x86-64-v3: avx2, saying why" '^node .*: qllc_k_dwconv2d_f32_f32_f32__avx2  \[cpu x86-64-v3: __avx512 needs avx512f\]$' 2 "$D/depthwise_separable/model.onnx" --cpu x86-64-v3
expect_kernels "float depthwise on x86-64: the reference, naming what it lacks" '^node /dw2?/Conv .*: qllc_k_conv2d_f32_f32_f32  \[cpu x86-64: __avx512 needs avx512f; __avx2 needs avx2\]$' 2 "$D/depthwise_separable/model.onnx" --cpu x86-64

# the float MaxPool's ISA copies (QISA rows of src/lower/kernels.def): the widest the CPU has, else the reference
expect_kernels "float MaxPool on znver4: the avx512 copy" '^node /MaxPool(_1)? .*: qllc_k_maxpool2d_f32_f32__avx512$' 2 "$C6" --cpu znver4
expect_kernels "float MaxPool on x86-64-v3: the avx2 copy" '^node /MaxPool(_1)? .*: qllc_k_maxpool2d_f32_f32__avx2$' 2 "$C6" --cpu x86-64-v3
# where the reference runs, the pools are not fused layers and have no line; the convs' lines show the report is there
expect_kernels "float MaxPool on x86-64: the reference (no copy; the convs listed)" 'maxpool2d_f32_f32__|^node /convs\.[0-5]/Conv .*: qllc_k_conv2d_f32_f32_f32  \[cpu x86-64' 6 "$C6" --cpu x86-64
expect_kernels "float MaxPool for aarch64: the reference (no copy; the convs listed)" 'maxpool2d_f32_f32__|^node /convs\.[0-5]/Conv .*: qllc_k_conv2d_f32_f32_f32__neon$' 6 "$C6" --target aarch64 --cpu neoverse-v2

# a user's override of a reference kernel (--kernels) is what its layers call: no variant bypasses it
cat >"$tmp/over.c" <<'EOF'
#include "qllc_kernel.h"
#define OVER(TI, ti, TO, to)                                                                                      \
  void qllc_k_conv2d_##ti##_i8_##to(TO *y, const TI *x, const int8_t *w, const int32_t *bias, const int32_t *m,  \
                                    const int32_t *n, int64_t N, int64_t C, int64_t H, int64_t W, int64_t M,     \
                                    int64_t OH, int64_t OW, int64_t KH, int64_t KW, int64_t sh, int64_t sw,      \
                                    int64_t pt, int64_t pl, int64_t dh, int64_t dw, int64_t group, int32_t z_x,  \
                                    int32_t z_y, int32_t lo, int32_t hi) {                                       \
    for (int64_t i = 0; i < N * M * OH * OW; i++) y[i] = (TO)lo;                                                 \
  }
OVER(int8_t, i8, int8_t, i8)
OVER(int8_t, i8, uint8_t, u8)
OVER(uint8_t, u8, int8_t, i8)
OVER(uint8_t, u8, uint8_t, u8)
void qllc_k_maxpool2d_f32_f32(float *y, const float *x, int64_t NC, int64_t H, int64_t W, int64_t OH, int64_t OW,
                              int64_t KH, int64_t KW, int64_t sh, int64_t sw, int64_t pt, int64_t pl, int64_t pb,
                              int64_t pr, int64_t dh, int64_t dw) {
  for (int64_t i = 0; i < NC * OH * OW; i++) y[i] = 0.0f;
}
EOF
if /usr/lib/llvm-19/bin/clang --target=x86_64-unknown-linux-gnu -O2 -emit-llvm -c -I "$QLLC_SOURCE_DIR/include" \
     "$tmp/over.c" -o "$tmp/over.bc" 2>"$tmp/err"; then
  expect_kernels "a user's conv override: no variant, said" 'qllc_k_conv2d_i8_i8_[iu]8  \[qllc_k_conv2d_i8_i8_[iu]8 is the user.s kernel \(--kernels\): no variant replaces it\]' 2 "$M" "${Q[@]}" --cpu znver4 --kernels "$tmp/over.bc"
  expect_kernels "a user's conv override: the FC still runs its variant" 'qllc_k_fc_i8_i8_[iu]8__avx512vnni$' 1 "$M" "${Q[@]}" --cpu znver4 --kernels "$tmp/over.bc"
  expect_kernels "a user's float MaxPool: no ISA copy replaces it (the convs listed)" 'maxpool2d_f32_f32__|^node /convs\.[0-5]/Conv .*: qllc_k_conv2d(s1|t1)?_f32_f32_f32__avx512$' 6 "$C6" --cpu znver4 --kernels "$tmp/over.bc"
else fail "cannot compile the override: $(cat "$tmp/err")"; fi

# ---- 2. objects ----
OBJDUMP=objdump
compile() { "$QLLC" compile "$M" "${Q[@]}" -o "$tmp/$1" --name net "${@:2}" >"$tmp/$1.log" 2>&1 || fail "compile $*: $(cat "$tmp/$1.log")"; }
compile zn4 --cpu znver4
compile adl --cpu alderlake
compile hsw --cpu haswell
compile v2 --cpu x86-64-v2
dis() { $OBJDUMP -d --no-show-raw-insn "$tmp/$1/net.o"; }
dis zn4 | grep -qE 'vpdpbusd.*%zmm' && ok "znver4 object has vpdpbusd zmm" || fail "znver4 object has no vpdpbusd on zmm"
dis adl | grep -qE '\{vex\} *vpdpbusd|vpdpbusd.*%ymm' && ok "alderlake object has VEX vpdpbusd" || fail "alderlake object has no VEX vpdpbusd"
dis adl | grep -qE '%zmm' && fail "alderlake object uses zmm registers (no AVX-512 there)"
dis hsw | grep -q 'vpmaddwd' && ok "haswell object has vpmaddwd" || fail "haswell object has no vpmaddwd"
dis hsw | grep -q 'vpdpbusd' && fail "haswell object has vpdpbusd (no VNNI there)"
dis v2 | grep -qE '%[yz]mm|\bv[a-z0-9]+ ' && fail "x86-64-v2 object has AVX instructions"
grep -q '__avx512vnni' "$tmp/zn4/net.h" && grep -q 'kernels:' "$tmp/zn4/net.h" &&
  ok "the header's report lists the kernels" || fail "the znver4 header does not list the variant kernels"

# ---- 3. bits: each variant in the JIT vs the reference ----
run_jit() { # DIR ARGS...: qllc run on the model's test input
  local d=$1; shift
  "$QLLC" run "$MODEL" -i "$IN" --output-dir "$tmp/$d" "$@" >"$tmp/$d.log" 2>&1 || { fail "run $d: $(cat "$tmp/$d.log")"; return 1; }
}
same_dir() { # A B WHAT
  local a b ok=1
  for a in "$tmp/$1"/*.npy; do b=$tmp/$2/$(basename "$a"); cmp -s "$a" "$b" || ok=0; done
  [ $ok = 1 ] && ok "$3" || fail "$3: outputs differ"
}
for n in cnn_bn_pool residual depthwise_separable direct_convs; do
  MODEL=$(mdir $n)/model.onnx
  IN=$(mdir $n)/input_0.npy
  for prec in "int8" "int16" "int16 --weight-precision int8"; do
    tag=$n-${prec// /_}
    P=(--profile "$tmp/$n.yaml" --precision $prec)
    run_jit "$tag-ref" "${P[@]}" --cpu x86-64 || continue
    if has avx512f avx512bw avx512vl avx512dq avx512_vnni avx512vbmi; then
      run_jit "$tag-512" "${P[@]}" && same_dir "$tag-512" "$tag-ref" "$n $prec: avx512vnni (JIT, host) = reference"
    else skip "$n $prec avx512vnni: the host lacks AVX512-VNNI"; fi
    [ "${prec%% *}" = int16 ] && continue # no 256-bit int16 variants
    if has avx2 avx_vnni; then
      run_jit "$tag-avxvnni" "${P[@]}" --cpu x86-64 --features +avx,+avx2,+avxvnni &&
        same_dir "$tag-avxvnni" "$tag-ref" "$n $prec: avxvnni = reference"
    else skip "$n $prec avxvnni: the host lacks AVX-VNNI"; fi
    if has avx2; then
      run_jit "$tag-avx2" "${P[@]}" --cpu x86-64 --features +avx,+avx2 && same_dir "$tag-avx2" "$tag-ref" "$n $prec: avx2 = reference"
    else skip "$n $prec avx2: the host lacks AVX2"; fi
  done
done

# ---- 4. --strict: a layer left on the portable kernel for a missing CPU feature is an error ----
if "$QLLC" compile "$M" "${Q[@]}" --cpu x86-64-v2 --strict -o "$tmp/strict-v2" >"$tmp/strict.out" 2>&1; then
  fail "--strict --cpu x86-64-v2 accepted a model whose layers run the portable kernel"
elif grep -qE "node '[^']+' \((Conv|qllc.FullyConnected)\) would run the portable kernel qllc_k_(conv2d|fc)_i8_i8_[iu]8: .*__avx2 needs avx2.*\(--strict\)" "$tmp/strict.out" &&
  [ ! -e "$tmp/strict-v2/net.o" ] && [ ! -e "$tmp/strict-v2/model.o" ]; then
  ok "--strict --cpu x86-64-v2: refused, naming the node, the kernel and the missing feature, nothing written"
else fail "--strict --cpu x86-64-v2: unexpected message: $(cat "$tmp/strict.out")"; fi
"$QLLC" compile "$M" "${Q[@]}" --cpu znver4 --strict -o "$tmp/strict-z4" >"$tmp/strict.out" 2>&1 &&
  ok "--strict --cpu znver4: accepted (no portable fallback; AMX is not one of znver4's features)" ||
  fail "--strict --cpu znver4 refused: $(cat "$tmp/strict.out")"

finish variants_test
