#!/bin/bash
# tests/cli/jit_test.sh: the public-API example (examples/run_model.c) loads, JIT-compiles and runs small
# models; its printed outputs must match the numpy references of tests/cli/data (atol 1e-4), both with
# an input file and with the zeros it makes itself. References are read from the .npy payload with od.
: "${QLLC_SOURCE_DIR:?}" "${QLLC_BUILD_DIR:?}"
. "$QLLC_SOURCE_DIR/tests/lib.sh"
D=$QLLC_SOURCE_DIR/tests/cli/data
RUN=$QLLC_BUILD_DIR/examples/run_model
[ -x "$RUN" ] || { echo "no $RUN (examples not built)"; exit 1; }

# the float32 payload of a small .npy (NBYTES at the end of the file) as text
npy_values() { tail -c "$2" "$1" | od -An -v -f | tr -s ' \n' '  '; }

# check_line OUTPUT_LINE_PREFIX REF.npy NBYTES: the example's line "NAME: TYPE v0 v1 ..." vs the reference
check() {
  local out=$1 prefix=$2 ref=$3 nbytes=$4
  local line; line=$(grep -F -- "$prefix" <<<"$out" | head -1)
  [ -n "$line" ] || { fail "no output line '$prefix' in: $out"; return; }
  local got=${line#"$prefix"}
  awk -v got="$got" -v want="$(npy_values "$ref" "$nbytes")" -v what="$prefix" 'BEGIN {
      ng = split(got, g, " "); nw = split(want, w, " "); worst = 0
      if (ng != nw) { printf "FAIL: %s: %d values, want %d\n", what, ng, nw; exit 1 }
      for (i = 1; i <= ng; i++) { d = g[i] - w[i]; if (d < 0) d = -d; if (d > worst) worst = d }
      printf "%s %d values, max abs diff %g\n", what, ng, worst
      exit worst <= 1e-4 ? 0 : 1 }' || fail "$prefix differs from $ref (got $got)"
}

out=$("$RUN" "$D/small.onnx" "$D/small_x.npy") || fail "run_model small.onnx small_x.npy: exit $?"
check "$out" "y: f32<1 x 4>" "$D/small_y_ref.npy" 16

out=$("$RUN" "$D/small.onnx") || fail "run_model small.onnx (zeros): exit $?"
check "$out" "y: f32<1 x 4>" "$D/small_x_zeros_y_ref.npy" 16

out=$("$RUN" "$D/two_io.onnx" "$D/two_io_a.npy" "$D/two_io_b.npy") || fail "run_model two_io.onnx: exit $?"
check "$out" "sum:0: f32<2 x 3>" "$D/two_io_sum_ref.npy" 24
check "$out" "out/relu: f32<2 x 3>" "$D/two_io_relu_ref.npy" 24

# an error is reported (one line, non-zero exit), not a crash
err=$("$RUN" "$D/unsupported.onnx" 2>&1 >/dev/null) && fail "run_model on an unsupported op exited 0"
[ "$(wc -l <<<"$err")" -eq 1 ] || fail "run_model error is not one line: $err"
grep -q logsoftmax_node <<<"$err" || fail "run_model error lacks the node: $err"

finish jit_test
