#!/bin/bash
# tests/cli/input_shape_test.sh: `--input-shape NAME=DxDx...` pins symbolic input dims in every command.
#  - a dynamic-batch export compiled at batch 4 matches torch's output for those 4 inputs; a dynamic
#    sequence length (axis 1) compiled at 7 matches torch (tests/cli/data/make_shape_models.py; npycmp,
#    built here, compares without python);
#  - without it, the symbolic batch is taken as 1 with exactly one note on stderr naming the input, the
#    axis and the dim's name; the symbolic sequence length is an error asking for --input-shape;
#  - compile, info, profile and bench take it too (the bundle header shows the pinned shape);
#  - bad values are errors naming the option and the input: unknown name, rank, a fixed dim changed,
#    a size of 0, a name given twice, an input bound with --const.
: "${QLLC:?}" "${QLLC_SOURCE_DIR:?}"
. "$QLLC_SOURCE_DIR/tests/lib.sh"
S=$QLLC_SOURCE_DIR/tests/cli/data/shapes
CC=${CC:-cc}
"$CC" -O2 -std=c11 -o "$tmp/npycmp" "$QLLC_SOURCE_DIR/tests/models/npycmp.c" -lm || { echo "FAIL: cannot build npycmp"; exit 1; }

# 1. batch 4 and sequence 7 against torch
"$QLLC" run "$S/dynbatch.onnx" --input-shape x=4x3x8x8 -i "$S/dynbatch_x4.npy" --output-dir "$tmp/b4" 2>"$tmp/err" >/dev/null ||
  fail "dynbatch at batch 4: $(cat "$tmp/err")"
[ -s "$tmp/err" ] && fail "dynbatch with its shape given printed: $(cat "$tmp/err")"
"$tmp/npycmp" "$tmp/b4/y.npy" "$S/dynbatch_y4_ref.npy" 1e-5 1e-4 || fail "dynbatch at batch 4 differs from torch"
"$QLLC" run "$S/dynseq.onnx" --input-shape x=1x7x16 -i "$S/dynseq_x7.npy" --output-dir "$tmp/s7" >/dev/null ||
  fail "dynseq at 7"
"$tmp/npycmp" "$tmp/s7/y.npy" "$S/dynseq_y7_ref.npy" 1e-5 1e-4 || fail "dynseq at 7 differs from torch"
# the x separator may also be a comma
"$QLLC" info "$S/dynseq.onnx" --input-shape x=1,7,16 | grep -q "f32<1 x 7 x 16>" || fail "info with 1,7,16"

# 2. defaults: one note for the batch; an error for the sequence
"$QLLC" info "$S/dynbatch.onnx" >/dev/null 2>"$tmp/err" || fail "info dynbatch without a shape"
[ "$(wc -l <"$tmp/err")" -eq 1 ] && grep -q "^qllc: note: .*dynbatch.onnx: symbolic input dimension taken as 1: 'x' axis 0 ('batch') (set with --input-shape" "$tmp/err" ||
  fail "dynbatch default note: $(cat "$tmp/err")"
"$QLLC" info "$S/dynseq.onnx" >/dev/null 2>"$tmp/err"; rc=$?
[ $rc -eq 1 ] && grep -q "dynamic dimension 'seq' at axis 1.*--input-shape x=" "$tmp/err" || fail "dynseq without a shape: exit $rc: $(cat "$tmp/err")"

# 3. other commands
"$QLLC" compile "$S/dynbatch.onnx" --input-shape x=4x3x8x8 -o "$tmp/bundle" --name dyn 2>"$tmp/err" || fail "compile: $(cat "$tmp/err")"
grep -q "dims.*4, 3, 8, 8\|<4 x 3 x 8 x 8>" "$tmp/bundle/dyn.h" || fail "bundle header lacks the pinned shape"
"$QLLC" profile "$S/dynbatch.onnx" --input-shape x=4x3x8x8 -d "$S/dynbatch_x4.npy" -o "$tmp/p.yaml" >/dev/null ||
  fail "profile at batch 4"
"$QLLC" run "$S/dynbatch.onnx" --input-shape x=4x3x8x8 --profile "$tmp/p.yaml" --precision int8 -i "$S/dynbatch_x4.npy" \
  --output-dir "$tmp/q4" >/dev/null || fail "int8 at batch 4"
"$tmp/npycmp" "$tmp/q4/y.npy" "$S/dynbatch_y4_ref.npy" 0.1 0.1 >/dev/null || fail "int8 at batch 4 is far from torch"
"$QLLC" bench "$S/dynseq.onnx" --input-shape x=1x7x16 --runs 2 --csv >/dev/null || fail "bench with --input-shape"

# 4. errors
bad() { # expected-exit expected-substring shape-args...
  local want_rc=$1 want=$2; shift 2
  "$QLLC" info "$S/dynseq.onnx" "$@" >/dev/null 2>"$tmp/err"; local rc=$?
  [ $rc -eq "$want_rc" ] || fail "info $*: exit $rc, want $want_rc ($(cat "$tmp/err"))"
  [ "$(wc -l <"$tmp/err")" -eq 1 ] && grep -qF -- "$want" "$tmp/err" || fail "info $*: $(cat "$tmp/err"), want '$want'"
}
bad 1 "--input-shape y: the model has no graph input of that name (inputs: 'x')" --input-shape y=1x7x16
bad 1 "--input-shape x: 2 dims given, the input has 3" --input-shape x=1x7
bad 1 "--input-shape x: axis 2 is 16 in the model, 8 given" --input-shape x=1x7x8
bad 1 "--input-shape x: given twice" --input-shape x=1x7x16 --input-shape x=1x8x16
bad 2 "--input-shape: invalid value 'x=1x0x16'" --input-shape x=1x0x16
bad 2 "--input-shape: invalid value 'x=1x7x'" --input-shape x=1x7x
bad 2 "--input-shape: invalid value 'x1x7x16'" --input-shape x1x7x16

D=$QLLC_SOURCE_DIR/tests/cli/data
"$QLLC" info "$D/reshape_bind.onnx" --const shape="$D/reshape_bind_shape.npy" --input-shape shape=2 >/dev/null 2>"$tmp/err"
[ $? -eq 1 ] && grep -q -- "--input-shape shape: that input is bound to a constant (--const)" "$tmp/err" ||
  fail "--input-shape of a bound input: $(cat "$tmp/err")"

finish input_shape_test
