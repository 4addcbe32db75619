#!/bin/bash
# tests/cli/min_sqnr_int16_test.sh: the precision search's "every layer at int16" is what --precision int16
# computes (issue 27), on tests/cli/data/matmul_add.onnx (x -> Reshape -> MatMul + Add: the graph input's
# quantize and the Reshape raised with the layer):
#  - the search's all-int16 figure is `qllc compare --precision int16`'s (within 0.05 dB);
#  - a target 5 dB under it is reached, and compare with the written map confirms the figure;
#  - with every layer at int16 in the map, the bundle's report has no int8 value left (the input's
#    quantize and the Reshape are i16).
. "$QLLC_SOURCE_DIR/tests/cli/min_sqnr_lib.sh" # fail, $tmp, finish
D=$QLLC_SOURCE_DIR/tests/cli/data
M=$D/matmul_add.onnx E=$D/matmul_add_eval.npy

"$QLLC" profile "$M" --dataset "$D/matmul_add_calib.npy" -o "$tmp/p.yaml" >/dev/null 2>&1 || fail "profile"
s16=$("$QLLC" compare "$M" --profile "$tmp/p.yaml" --precision int16 -d "$E" | sed -n 3p | awk '{print $1}')
s8=$("$QLLC" compare "$M" --profile "$tmp/p.yaml" --precision int8 -d "$E" | sed -n 3p | awk '{print $1}')
t=$(awk -v s="$s16" 'BEGIN { printf "%.1f", s - 5 }')
echo "int8 $s8 dB, --precision int16 $s16 dB, target $t dB"
if "$QLLC" compile "$M" --profile "$tmp/p.yaml" --precision int8 --min-sqnr "$t" --search-dataset "$E" \
  --precision-map-out "$tmp/map" -o "$tmp/b" --name net >"$tmp/out" 2>&1; then
  line=$(grep '^outputs: ' "$tmp/out")
  echo "$line"
  got=$(echo "$line" | sed 's/^outputs: \([0-9.]*\) dB.*/\1/')
  top=$(echo "$line" | sed 's/.*every layer at int16: \([0-9.]*\) dB.*/\1/')
  awk -v g="$got" -v t="$t" 'BEGIN { exit !(g >= t) }' || fail "search reports $got < $t"
  awk -v a="$top" -v b="$s16" 'BEGIN { d = a - b; exit !(d < 0.05 && d > -0.05) }' \
    || fail "every layer at int16 $top dB in the search, --precision int16 $s16 dB"
  measured=$("$QLLC" compare "$M" --profile "$tmp/p.yaml" --precision int8 --precision-map "$tmp/map" -d "$E" | sed -n 3p | awk '{print $1}')
  awk -v g="$measured" -v s="$got" 'BEGIN { d = g - s; exit !(d < 0.05 && d > -0.05) }' \
    || fail "compare measures $measured, the search $got"
  if grep -q '^node matmul int16$' "$tmp/map"; then
    grep -q 'QuantizeLinear  *f32 -> i16' "$tmp/b/net.h" || fail "all int16: the input's quantize is not i16: $(grep QuantizeLinear "$tmp/b/net.h")"
    grep -q 'Reshape  *i16 -> i16' "$tmp/b/net.h" || fail "all int16: the Reshape is not i16: $(grep Reshape "$tmp/b/net.h")"
  fi
else
  fail "target $t refused: $(cat "$tmp/out")"
fi
finish min_sqnr_int16_test
