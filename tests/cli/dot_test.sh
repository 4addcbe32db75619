#!/bin/bash
# tests/cli/dot_test.sh: `qllc info --dot FILE` (issue 14, item 5; docs/graph.md).
#
# The sample model (Conv+Relu, Conv+Relu, MaxPool, Flatten, Gemm+Relu, Gemm) is profiled, then written
# as Graphviz in float, int8, int16 and 16x8 and rendered with Debian's graphviz (`dot -Tsvg`). The
# SVG must have: the expected number of nodes (6 layers + 3 fused activations + input + output + 5
# legend swatches, and 2 quantize/dequantize nodes when quantized), 3 "fused" clusters (+ the legend),
# every layer filled with its precision's colour (src/driver/dot.c PREC_COLOR), and edges labelled with the
# quantized type and scale. --dot - writes the graph to stdout alone; a bad path is a one-line error.
: "${QLLC:?}" "${QLLC_SOURCE_DIR:?}"
. "$QLLC_SOURCE_DIR/tests/lib.sh"
command -v dot >/dev/null || { echo "graphviz (dot) is not installed (scripts/bootstrap installs it); skipping"; exit 77; }
M=$QLLC_SOURCE_DIR/models/digits
"$QLLC" profile "$M/digits.onnx" --dataset "$M/calib_x.npy" -o "$tmp/p.yaml" >/dev/null 2>&1 || fail "qllc profile"

count() { grep -c "$1" "$2"; }
# precision  options  colour-of-the-layers  layers-of-that-colour  nodes
check() {
  local name=$1 opts=$2 colour=$3 want_fill=$4 want_nodes=$5
  # shellcheck disable=SC2086
  "$QLLC" info "$M/digits.onnx" $opts --dot "$tmp/$name.dot" >"$tmp/$name.info" 2>"$tmp/$name.err" ||
    { cat "$tmp/$name.err"; fail "$name: qllc info --dot exit $?"; return; }
  grep -q '^== precision ==' "$tmp/$name.info" || fail "$name: info's description missing with --dot FILE"
  dot -Tsvg "$tmp/$name.dot" -o "$tmp/$name.svg" 2>"$tmp/$name.doterr" ||
    { cat "$tmp/$name.doterr"; fail "$name: dot -Tsvg failed"; return; }
  local n c f
  n=$(count 'class="node"' "$tmp/$name.svg")
  c=$(count 'class="cluster"' "$tmp/$name.svg")
  f=$(count "fill=\"$colour\"" "$tmp/$name.svg")
  [ "$n" = "$want_nodes" ] || fail "$name: $n nodes in the svg, want $want_nodes"
  [ "$c" = 4 ] || fail "$name: $c clusters, want 4 (3 fused layers + the legend)"
  # the layers of this precision + the legend swatch
  [ "$f" = "$want_fill" ] || fail "$name: $f shapes filled $colour, want $want_fill"
  echo "$name: $n nodes, $c clusters, $f filled $colour"
}
check float "" '#9ecae1' 10 16
check int8 "--profile $tmp/p.yaml --precision int8" '#a1d99b' 10 18
check int16 "--profile $tmp/p.yaml --precision int16" '#fdae6b' 10 18
# 16x8: the 4 fused layers and their 3 activations are 16x8; MaxPool and Flatten are int16
check 16x8 "--profile $tmp/p.yaml --precision int16 --weight-precision int8" '#bcbddc' 8 18
grep -q 'fused: Conv + Relu' "$tmp/int8.svg" || fail "int8: no 'fused: Conv + Relu' cluster"
grep -q 'i8\[s=0\.[0-9]* z=\(&#45;\)\?[0-9]*\]&lt;1 x 8 x 8 x 8&gt;' "$tmp/int8.svg" || fail "int8: edge labels have no type and scale"
grep -q 'i16\[s=' "$tmp/int16.svg" || fail "int16: edge labels have no i16 type"
grep -q 'qllc_k_conv2d_i16_i8_i16' "$tmp/16x8.svg" || fail "16x8: the 16x8 conv kernel is not named"

# --dot - : the graph alone on stdout
"$QLLC" info "$M/digits.onnx" --dot - >"$tmp/stdout.dot" 2>/dev/null || fail "--dot - exit $?"
head -1 "$tmp/stdout.dot" | grep -q '^digraph qllc {' || fail "--dot - does not start with the digraph"
dot -Tsvg "$tmp/stdout.dot" -o /dev/null 2>/dev/null || fail "--dot - output does not render"
# a path that cannot be written
if "$QLLC" info "$M/digits.onnx" --dot "$tmp/no/such/dir/g.dot" >/dev/null 2>"$tmp/bad.err"; then
  fail "--dot into a missing directory succeeded"
fi
[ "$(wc -l <"$tmp/bad.err")" = 1 ] && grep -q '^qllc: error: ' "$tmp/bad.err" || fail "bad --dot path: $(cat "$tmp/bad.err")"
[ $fails -eq 0 ] && echo "dot_test: OK"
exit $((fails > 0))
