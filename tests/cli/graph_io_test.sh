#!/bin/bash
# tests/cli/graph_io_test.sh: a model whose graph inputs or outputs are declared wrongly is refused with
# one error line naming the file (and the node), as onnxruntime refuses it, instead of being merged or
# converted silently: a graph input declared twice (tests/cli/data/dup_input.onnx), a float output
# declared INT32 (int32_output.onnx). A correct model still loads.
: "${QLLC:?}" "${QLLC_SOURCE_DIR:?}"
. "$QLLC_SOURCE_DIR/tests/lib.sh"
D=$QLLC_SOURCE_DIR/tests/cli/data
check() { # MODEL NEEDLE...
  local m=$1; shift
  "$QLLC" info "$D/$m" >/dev/null 2>"$TMPDIR_/err"; local rc=$?
  [ $rc -eq 1 ] && [ "$(wc -l <"$TMPDIR_/err")" -eq 1 ] || { fail "$m: exit $rc: $(cat "$TMPDIR_/err")"; return; }
  for n in "$@"; do grep -qF -- "$n" "$TMPDIR_/err" || { fail "$m: no '$n' in: $(cat "$TMPDIR_/err")"; return; }; done
  ok "$(cat "$TMPDIR_/err")"
}
TMPDIR_=$(mktemp -d); trap 'rm -rf "$TMPDIR_"' EXIT
check dup_input.onnx dup_input.onnx "graph input 'x' is declared twice"
check int32_output.onnx int32_output.onnx "node 'relu'" "graph output 'y' is declared INT32 but its producer computes f32"
"$QLLC" info "$D/small.onnx" >/dev/null 2>&1 && ok "small.onnx still loads" || fail "small.onnx does not load"
finish graph_io_test
