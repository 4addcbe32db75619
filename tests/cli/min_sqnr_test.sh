#!/bin/bash
# tests/cli/min_sqnr_test.sh: automatic mixed precision (--min-sqnr, --precision-map-out, --precision-map;
# issue 13) on tests/quant_e2e/data/outlier:
#  - targets int8 + 3, 10, 20 and 30 dB, each checked by check_targets (min_sqnr_lib.sh): reached with a
#    choice cheaper than every layer at int16 (or only by every layer at int16) and confirmed by `qllc
#    compare`, each layer left wide named with its SQNR one level lower, measured below the target; or
#    refused naming layers; the replayed map gives the same bundle bytes;
#  - at int8 + 3 dB the bundle's precision report shows both kinds with requantize nodes between them
#    (i8 -> i16 / i16 -> i8, never a float round trip);
#  - an unreachable target fails in one line naming what limits it; a map of another model is refused;
#    --min-sqnr needs --precision int8.
# min_sqnr_cnn_test.sh and min_sqnr_digits_test.sh do the same targets on cnn_bn_pool and the sample model.
. "$QLLC_SOURCE_DIR/tests/cli/min_sqnr_lib.sh"
D=$QLLC_SOURCE_DIR/tests/quant_e2e/data

check_targets outlier "$D/outlier/model.onnx" "$D/outlier/calib.npy" "$D/outlier/eval_x.npy" "3 10 20 30"
# the +3 bundle: mixed kinds, joined by requantize nodes
h3=$tmp/net.outlier.3.h
grep -q 'MACs wide (100.0%)' "$tmp/out.outlier.3" && fail "+3: every MAC wide"
grep -q 'Requantize  *i8 -> i16\|Requantize  *i16 -> i8' "$h3" || fail "+3: no requantize node in the report"
grep -q 'i16 x i8 -> i16' "$h3" || fail "+3: no 16x8 layer in the report"
grep -q 'DequantizeLinear  *i[0-9]* -> f32' "$h3" || fail "+3: no output dequantize"
[ "$(grep -c 'DequantizeLinear\|QuantizeLinear' "$h3")" = 2 ] || fail "+3: a float round trip inside the graph"

M=$D/outlier/model.onnx
"$QLLC" info "$M" --profile "$tmp/outlier.yaml" --precision int8 --min-sqnr 200 >"$tmp/out" 2>&1; rc=$?
[ $rc = 1 ] || fail "unreachable: exit $rc"
grep -q "^qllc: error: .*--min-sqnr 200.0 dB cannot be reached: int8 gives .* every layer at int16 .*the layers limiting it are '/fc3/Gemm' (FullyConnected output)" "$tmp/out" \
  || fail "unreachable: $(cat "$tmp/out")"
[ "$(wc -l <"$tmp/out")" = 1 ] || fail "unreachable: not one line: $(cat "$tmp/out")"
"$QLLC" profile "$D/mlp/model.onnx" --dataset "$D/mlp/calib.npy" -o "$tmp/mlp.yaml" >/dev/null 2>&1
"$QLLC" info "$D/mlp/model.onnx" --profile "$tmp/mlp.yaml" --precision int8 --precision-map "$tmp/map.outlier.3" >"$tmp/out" 2>&1; rc=$?
[ $rc = 1 ] && grep -q "precision map was made for another model" "$tmp/out" || fail "foreign map: $(cat "$tmp/out")"
"$QLLC" info "$M" --profile "$tmp/outlier.yaml" --precision int16 --min-sqnr 50 >"$tmp/out" 2>&1; rc=$?
[ $rc = 1 ] && grep -q "starts from --precision int8" "$tmp/out" || fail "int16 start: $(cat "$tmp/out")"

finish min_sqnr_test
