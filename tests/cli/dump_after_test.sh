#!/bin/bash
# tests/cli/dump_after_test.sh: every pass name that --dump-after lists (in its error for an unknown
# name) is accepted and prints the IR after that pass ("# after NAME"; "import" prints the graph as
# loaded). The list comes from the pipeline itself, so a pass added or renamed there is tested here.
: "${QLLC:?}" "${QLLC_SOURCE_DIR:?}"
. "$QLLC_SOURCE_DIR/tests/lib.sh"
D=$QLLC_SOURCE_DIR/tests/cli/data

"$QLLC" info "$D/small.onnx" --dump-after no_such_pass >/dev/null 2>"$tmp/err" && fail "an unknown pass was accepted"
list=$(sed -n 's/.*(passes: \(.*\))$/\1/p' "$tmp/err" | tr -d ',')
[ -n "$list" ] || fail "no pass list in: $(cat "$tmp/err")"
for want in import fold_constants gemm_to_fc quantize lower memory_plan; do
  case " $list " in *" $want "*) ;; *) fail "'$want' missing from the list: $list" ;; esac
done
"$QLLC" profile "$D/small.onnx" --dataset "x=$D/small_x.npy" -o "$tmp/p.yaml" >/dev/null 2>&1 || fail "profile"
for pass in $list; do
  extra=()
  [ "$pass" = quantize ] && extra=(--precision int8 --profile "$tmp/p.yaml")
  "$QLLC" info "$D/small.onnx" --dump-after "$pass" "${extra[@]}" >"$tmp/out" 2>&1 || { fail "$pass: $(tail -1 "$tmp/out")"; continue; }
  if [ "$pass" = import ]; then
    grep -q "^graph " "$tmp/out" || fail "import: no graph printed"
  else
    grep -q "^# after $pass" "$tmp/out" || fail "$pass: no '# after $pass' line"
  fi
done
"$QLLC" info "$D/small.onnx" --dump-after quantize >/dev/null 2>"$tmp/err" && fail "quantize without --precision accepted"
finish dump_after_test
