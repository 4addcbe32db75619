#!/bin/bash
# tests/quant_e2e/cli_test.sh: the user's story on the command line (issues 3 and 4).
#  - `qllc profile` on a .npy of samples and on a directory of per-sample .npy/.pb files;
#  - issue 4's test_CNN compiled with --precision int16 for each schema: the header's precision report
#    shows int16 on every node and weight, int32 bias, float only at the boundary (Quantize/Dequantize),
#    none with --quantized-io (whose inputs/outputs are then i16 with scale and zero point);
#    16x8 shows i16 x i8; int8 shows i8 everywhere; `qllc info` and `compile --verbose` print the report;
#  - `qllc run` with the same options gives float output close to float;
#  - bad input: a profile of another model (hash mismatch), a profile missing a value, malformed YAML
#    (file:line), an unknown schema (usage error), no --profile: one line each, exit 1 (2 for usage).
: "${QLLC:?}" "${QLLC_SOURCE_DIR:?}"
. "$QLLC_SOURCE_DIR/tests/lib.sh"
D=$QLLC_SOURCE_DIR/tests/quant_e2e/data
M=$D/test_cnn/model.onnx

# ---- profile ----
"$QLLC" profile "$M" --dataset "$D/test_cnn/calib.npy" -o "$tmp/p.yaml" >"$tmp/out" 2>"$tmp/err" || fail "profile: $(cat "$tmp/err")"
grep -q "^profiled 128 samples, 4 values -> $tmp/p.yaml\$" "$tmp/out" || fail "profile summary: $(cat "$tmp/out")"
[ -s "$tmp/err" ] && fail "profile wrote to stderr without a terminal: $(cat "$tmp/err")"
grep -q '^graph_hash: ' "$tmp/p.yaml" || fail "profile has no graph_hash"
ls "$tmp" | grep -q 'tmp-' && fail "profile left a temporary file"
# named input, and a directory of per-sample files (.npy and .pb of the same sample)
mkdir "$tmp/dir"
cp "$QLLC_SOURCE_DIR/tests/cli/data/small_x.npy" "$tmp/dir/a.npy"
cp "$QLLC_SOURCE_DIR/tests/cli/data/small_x.pb" "$tmp/dir/b.pb"
in=$("$QLLC" info "$QLLC_SOURCE_DIR/tests/cli/data/small.onnx" | sed -n 's/^ *input \([^ ]*\) .*/\1/p' | head -1)
"$QLLC" profile "$QLLC_SOURCE_DIR/tests/cli/data/small.onnx" --dataset "$tmp/dir" -o "$tmp/s.yaml" >"$tmp/out" 2>&1 \
  || fail "profile DIR: $(cat "$tmp/out")"
grep -q "^profiled 2 samples" "$tmp/out" || fail "profile DIR summary: $(cat "$tmp/out")"

# ---- issue 4: int16 in every schema ----
for schema in asymmetric symmetric symmetric_uint8 power2; do
  for qio in "" --quantized-io; do
    out=$tmp/b_$schema$qio
    "$QLLC" compile "$M" --profile "$tmp/p.yaml" --precision int16 --schema $schema $qio -o "$out" --name cnn \
      >"$tmp/out" 2>&1 || { fail "compile int16 $schema $qio: $(cat "$tmp/out")"; continue; }
    h=$out/cnn.h
    rep=$(sed -n '/precision report:/,/summary:/p' "$h")
    [ -n "$rep" ] || { fail "$schema$qio: no precision report in the header"; continue; }
    for op in Conv ChannelAffine Reshape; do
      echo "$rep" | grep -E "^ \*  +[^ ]+ +$op " | grep -q "i16" || fail "$schema$qio: $op not int16: $rep"
    done
    echo "$rep" | grep -E " Conv | ChannelAffine " | grep -v "i16 x i16 -> i16" && fail "$schema$qio: a layer is not i16 x i16 -> i16"
    [ "$(echo "$rep" | grep -cE '(Conv|ChannelAffine) .*bias i32')" -eq 2 ] || fail "$schema$qio: bias is not i32 on both layers"
    echo "$rep" | grep -q "summary: 3 nodes quantized (int16), 0 in float" || fail "$schema$qio: summary: $(echo "$rep" | tail -1)"
    # float only on boundary lines; none at all with --quantized-io
    echo "$rep" | grep "f32" | grep -vE "QuantizeLinear|DequantizeLinear" && fail "$schema$qio: f32 inside the model"
    if [ -n "$qio" ]; then
      echo "$rep" | grep -q "f32" && fail "$schema --quantized-io: f32 in the report"
      sed -n '/Inputs (1)/,/Constants/p' "$h" | grep -q "f32" && fail "$schema --quantized-io: f32 input/output"
      grep -qE '^ \*   input  i16\[s=' "$h" || fail "$schema --quantized-io: input is not i16 with a scale"
    else
      echo "$rep" | grep -q "QuantizeLinear.*f32 -> i16" || fail "$schema: no boundary quantize"
    fi
  done
done
# default schema (docs/numerics.md): symmetric, z = 0, at int16; asymmetric at int8
"$QLLC" info "$M" --profile "$tmp/p.yaml" --precision int16 >"$tmp/i16" 2>&1 || fail "info int16: $(cat "$tmp/i16")"
grep -qE ' z=-?[0-9]+' "$tmp/i16" || fail "int16 default: no zero points in the report"
grep -E ' (x|y) s=[^ ]+ z=-?[1-9]' "$tmp/i16" && fail "int16 default schema is not symmetric (a non-zero zero point)"
"$QLLC" info "$M" --profile "$tmp/p.yaml" --precision int8 >"$tmp/i8" 2>&1 || fail "info int8: $(cat "$tmp/i8")"
grep -qE ' (x|y) s=[^ ]+ z=-?[1-9]' "$tmp/i8" || fail "int8 default schema is not asymmetric (all zero points 0)"
# 16x8 and int8
"$QLLC" compile "$M" --profile "$tmp/p.yaml" --precision int16 --weight-precision int8 -o "$tmp/b168" --name cnn >/dev/null 2>&1 \
  || fail "compile 16x8"
grep -E ' Conv ' "$tmp/b168/cnn.h" | grep -q "i16 x i8 -> i16" || fail "16x8: Conv is not i16 x i8"
"$QLLC" compile "$M" --profile "$tmp/p.yaml" --precision int8 -o "$tmp/b8" --name cnn >/dev/null 2>&1 || fail "compile int8"
grep -E ' Conv ' "$tmp/b8/cnn.h" | grep -q "i8 x i8 -> i8 .*bias i32" || fail "int8: Conv is not i8 x i8, bias i32"
# the report on info and compile --verbose
"$QLLC" info "$M" --profile "$tmp/p.yaml" --precision int8 | grep -q "summary: 3 nodes quantized (int8)" || fail "info has no report"
"$QLLC" compile "$M" --profile "$tmp/p.yaml" --precision int8 -o "$tmp/bv" --verbose | grep -q "summary: 3 nodes quantized" \
  || fail "compile --verbose has no report"
# run
"$QLLC" run "$M" --input "$D/test_cnn/eval_x.npy" >/dev/null 2>&1 && fail "run took a [32,...] file as one input"
"$QLLC" run "$M" --precision int16 --profile "$tmp/p.yaml" --quantized-io --input "$QLLC_SOURCE_DIR/tests/cli/data/small_x.npy" \
  >"$tmp/out" 2>&1 && fail "run --quantized-io took a float input"

# ---- bad input ----
check_err() { # expected-substring rc args...
  local want=$1 wrc=$2; shift 2
  "$QLLC" "$@" >"$tmp/out" 2>"$tmp/err"; local rc=$?
  [ $rc -eq "$wrc" ] || fail "qllc $*: exit $rc, want $wrc ($(cat "$tmp/err"))"
  [ "$(wc -l <"$tmp/err")" -eq 1 ] || fail "qllc $*: stderr is not one line: $(cat "$tmp/err")"
  grep -qF -- "$want" "$tmp/err" || fail "qllc $*: stderr lacks '$want': $(cat "$tmp/err")"
  echo "ok: $(cat "$tmp/err")"
}
"$QLLC" profile "$D/mlp/model.onnx" --dataset "$D/mlp/calib.npy" -o "$tmp/mlp.yaml" >/dev/null 2>&1 || fail "profile mlp"
check_err "profile was made for another model" 1 compile "$M" --precision int8 --profile "$tmp/mlp.yaml" -o "$tmp/x"
awk '/^- name: "\/relu1\/Relu_output_0"/{skip=1; next} /^- name:/{skip=0} !skip' "$tmp/p.yaml" >"$tmp/missing.yaml"
check_err "'/relu1/Relu_output_0' is missing from the profile" 1 compile "$M" --precision int8 --profile "$tmp/missing.yaml" -o "$tmp/x"
sed '7s/.*/  max: [oops/' "$tmp/p.yaml" >"$tmp/bad.yaml"
check_err "$tmp/bad.yaml:8:" 1 compile "$M" --precision int8 --profile "$tmp/bad.yaml" -o "$tmp/x"
check_err "invalid value 'fancy' (valid: asymmetric, symmetric, symmetric_uint8, power2)" 2 \
  compile "$M" --precision int8 --profile "$tmp/p.yaml" --schema fancy -o "$tmp/x"
check_err "needs a profile" 1 compile "$M" --precision int8 -o "$tmp/x"
check_err "cannot open the profile" 1 compile "$M" --precision int8 --profile "$tmp/nope.yaml" -o "$tmp/x"
check_err "a data set must be [S, ...]" 1 profile "$M" --dataset "$D/mlp/calib.npy" -o "$tmp/x.yaml"
check_err "no input named 'nope'" 1 profile "$M" --dataset "nope=$D/test_cnn/calib.npy" -o "$tmp/x.yaml"
[ -e "$tmp/x" ] && fail "a failed compile created its output directory"
[ -e "$tmp/x.yaml" ] && fail "a failed profile left a file"

finish cli_test
