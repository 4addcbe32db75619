#!/bin/bash
# tests/cli/const_bind_test.sh: --const NAME=FILE binds a graph input to a compile-time constant.
# reshape_bind.onnx computes y = Relu(Reshape(x, shape)) with `shape` an int64 GRAPH INPUT; unbound it is
# rejected; bound (.npy or .pb) the model runs and y has the bound shape and numpy's values (Relu of a
# reshape is exact, so the payloads must be identical). Errors: a name that is not an input, a wrong
# shape, a wrong element kind, a malformed value, a missing file: exit status and one-line message.
: "${QLLC:?}" "${QLLC_SOURCE_DIR:?}"
. "$QLLC_SOURCE_DIR/tests/lib.sh"
D=$QLLC_SOURCE_DIR/tests/cli/data
M=$D/reshape_bind.onnx

# same_npy GOT REF: the same shape in the header and the same 96-byte payload (24 float32)
same_npy() {
  [ -f "$1" ] || { fail "no output $1"; return; }
  local want_shape; want_shape=$(head -c 128 "$2" | grep -ao "'shape': ([0-9, ]*)")
  head -c 128 "$1" | grep -aqF "$want_shape" || fail "$1: header lacks $want_shape: $(head -c 100 "$1" | tr -d '\0')"
  cmp -s <(tail -c 96 "$1") <(tail -c 96 "$2") || fail "$1: values differ from $2"
  echo "ok: $1 has $want_shape and the reference values"
}

# expect_error WANT_RC NEEDLE... -- args: exit status, one line on stderr, containing every needle
expect_error() {
  local want_rc=$1; shift
  local needles=()
  while [ "$1" != "--" ]; do needles+=("$1"); shift; done
  shift
  "$QLLC" "$@" >"$tmp/out" 2>"$tmp/err"; local rc=$?
  [ $rc -eq "$want_rc" ] || fail "qllc $*: exit $rc, want $want_rc"
  [ "$(wc -l <"$tmp/err")" -eq 1 ] || fail "qllc $*: stderr is not one line: [$(cat "$tmp/err")]"
  for n in "${needles[@]}"; do grep -qF -- "$n" "$tmp/err" || fail "qllc $*: stderr lacks '$n': $(cat "$tmp/err")"; done
  echo "ok: $(cat "$tmp/err")"
}

# unbound: the int64 input is rejected, and the message says how to bind it
expect_error 1 "graph input 'shape'" "--const shape=FILE" -- run "$M" -i "$D/reshape_bind_x.npy" --output-dir "$tmp/o0"

# bound from .npy: [4, -1, 2]
"$QLLC" run "$M" --const shape="$D/reshape_bind_shape.npy" -i "$D/reshape_bind_x.npy" --output-dir "$tmp/o1" \
  >"$tmp/out" 2>"$tmp/err" || fail "run --const .npy: exit $?: $(cat "$tmp/err")"
grep -qF "y f32<4 x 3 x 2>" "$tmp/out" || fail "run --const .npy: summary: $(cat "$tmp/out")"
same_npy "$tmp/o1/y.npy" "$D/reshape_bind_y_ref.npy"

# bound from .pb, with the value after a separate argument: [0, 4, -1] -> (2, 4, 3)
"$QLLC" run "$M" --const "shape=$D/reshape_bind_shape.pb" --input "x=$D/reshape_bind_x.npy" --output-dir "$tmp/o2" \
  >"$tmp/out" 2>"$tmp/err" || fail "run --const .pb: exit $?: $(cat "$tmp/err")"
same_npy "$tmp/o2/y.npy" "$D/reshape_bind_y_pb_ref.npy"

# the bound input is no longer an input: info shows the folded shape and one input
"$QLLC" info "$M" --const=shape="$D/reshape_bind_shape.npy" >"$tmp/info" 2>"$tmp/err" || fail "info --const: exit $?"
grep -q "input %x" "$tmp/info" || fail "info: no input x: $(head -8 "$tmp/info")"
! grep -q "input %shape" "$tmp/info" || fail "info: shape is still an input"
grep -qF "shape=[4, 3, 2]" "$tmp/info" || fail "info: Reshape not folded to [4, 3, 2]: $(head -8 "$tmp/info")"

# compile (and profile, through the same loader) take it too
"$QLLC" compile "$M" --const shape="$D/reshape_bind_shape.npy" -o "$tmp/b" --name rb >/dev/null 2>"$tmp/err" ||
  fail "compile --const: $(cat "$tmp/err")"
[ -s "$tmp/b/rb.o" ] && [ -s "$tmp/b/rb.h" ] || fail "compile --const: no bundle"
grep -q '"shape"' "$tmp/b/rb.h" && fail "compile --const: the header still lists input 'shape'"
"$QLLC" profile "$M" --const shape="$D/reshape_bind_shape.npy" -d "$D/reshape_bind_x.npy" -o "$tmp/p.yaml" \
  >/dev/null 2>"$tmp/err" || fail "profile --const: $(cat "$tmp/err")"
[ -s "$tmp/p.yaml" ] || fail "profile --const: no profile"

# errors
expect_error 1 "cannot bind 'shap'" "no graph input of that name" "'x', 'shape'" -- \
  info "$M" --const shap="$D/reshape_bind_shape.npy"
expect_error 1 "graph input 'shape'" "shape [3]" "shape [2]" -- info "$M" --const shape="$D/reshape_bind_shape_len2.npy"
expect_error 1 "graph input 'shape'" "INT64" "i32" -- run "$M" --const shape="$D/reshape_bind_shape_i32.npy" \
  -i "$D/reshape_bind_x.npy" --output-dir "$tmp/o3"
expect_error 1 "graph input 'shape' is bound twice" -- \
  info "$M" --const shape="$D/reshape_bind_shape.npy" --const shape="$D/reshape_bind_shape.pb"
expect_error 2 "--const" "NAME=FILE" -- info "$M" --const shape
expect_error 2 "--const" "NAME=FILE" -- info "$M" --const =x.npy
expect_error 1 "missing.npy" -- info "$M" --const shape="$tmp/missing.npy"
# a float input may be bound too (then nothing is left to feed)
"$QLLC" run "$M" --const shape="$D/reshape_bind_shape.npy" --const x="$D/reshape_bind_x.npy" --output-dir "$tmp/o4" \
  >/dev/null 2>"$tmp/err" || fail "run with both bound: $(cat "$tmp/err")"
same_npy "$tmp/o4/y.npy" "$D/reshape_bind_y_ref.npy"
# --help lists it for every command that loads a model
for c in run compile info profile; do
  "$QLLC" help $c | grep -q -- "--const NAME=FILE" || fail "qllc help $c does not list --const"
done

[ $fails -eq 0 ] || { echo "$fails failure(s)"; exit 1; }
echo "all ok"
