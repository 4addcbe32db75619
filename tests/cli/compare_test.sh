#!/bin/bash
# tests/cli/compare_test.sh: `qllc compare` on the command line (issue 13).
#  - the table: the model output first with its SQNR, then the values worst first with node, op and types;
#    with --per-tensor the outlier layer (fc2 of tests/quant_e2e/data/outlier) is the first value row;
#  - --csv writes one row per value with every column; --top limits the printed rows;
#  - without --dataset the samples are the calibration samples kept in the profile (its first ones: the
#    same table as --dataset calib.npy), or, for a profile without them, drawn from its histograms (the
#    first line says which);
#  - progress lines on stderr only when it is a terminal;
#  - errors: no precision (usage, exit 2), a missing data set (exit 1, one line).
: "${QLLC:?}" "${QLLC_SOURCE_DIR:?}"
. "$QLLC_SOURCE_DIR/tests/lib.sh"
D=$QLLC_SOURCE_DIR/tests/quant_e2e/data/outlier
M=$D/model.onnx

"$QLLC" profile "$M" --dataset "$D/calib.npy" -o "$tmp/p.yaml" >/dev/null 2>"$tmp/err" || fail "profile: $(cat "$tmp/err")"

"$QLLC" compare "$M" --profile "$tmp/p.yaml" --precision int8 --per-tensor --dataset "$D/eval_x.npy" \
  --csv "$tmp/t.csv" >"$tmp/out" 2>"$tmp/err" || fail "compare: $(cat "$tmp/err")"
cat "$tmp/out"
sed -n 1p "$tmp/out" | grep -q "at int8 against float, 32 samples (the data set)" || fail "first line: $(sed -n 1p "$tmp/out")"
sed -n 3p "$tmp/out" | grep -Eq '^15\.[0-9] +[0-9.e-]+ +0\.000 +output +/fc3/Gemm +FullyConnected +i8 x i8 -> i8  \(output\)$' \
  || fail "output row: $(sed -n 3p "$tmp/out")"
sed -n 5p "$tmp/out" | grep -Eq '^15\.[0-9] .* /Relu_1_output_0 +/fc2/Gemm ' || fail "worst value row: $(sed -n 5p "$tmp/out")"
[ "$(wc -l <"$tmp/t.csv")" = 4 ] || fail "csv rows: $(cat "$tmp/t.csv")"
head -1 "$tmp/t.csv" | grep -q '^value,node,op,types,elem,scale,zero_point,is_output,sqnr_db,max_abs_err,saturated,signal_rms,count,grid_sqnr_db$' \
  || fail "csv header: $(head -1 "$tmp/t.csv")"
grep -q '^"output","/fc3/Gemm",FullyConnected,i8 x i8 -> i8,i8,[0-9.e-]*,-\?[0-9]*,1,15\.[0-9]*,' "$tmp/t.csv" || fail "csv output row: $(cat "$tmp/t.csv")"
grep -q "^wrote $tmp/t.csv (3 rows)\$" "$tmp/out" || fail "csv line"

"$QLLC" compare "$M" --profile "$tmp/p.yaml" --precision int8 --per-tensor --dataset "$D/eval_x.npy" --top 1 >"$tmp/out" 2>&1 \
  || fail "compare --top: $(cat "$tmp/out")"
grep -q "/Relu_output_0" "$tmp/out" && fail "--top 1 printed the second value"
grep -q '^  \.\.\. 1 more (--top 0 shows all, --csv FILE writes all)$' "$tmp/out" || fail "--top 1: $(cat "$tmp/out")"

# no data set: the calibration samples the profile keeps (its first ones), as --dataset calib.npy --samples 4
"$QLLC" compare "$M" --profile "$tmp/p.yaml" --precision int16 --samples 4 >"$tmp/out" 2>&1 || fail "compare kept: $(cat "$tmp/out")"
sed -n 1p "$tmp/out" | grep -q "at int16 against float, 4 samples (the first calibration samples, kept in the profile)" \
  || fail "kept: $(cat "$tmp/out")"
sed -n 3p "$tmp/out" | grep -Eq '^(8|9|10)[0-9]\.[0-9] ' || fail "int16 output SQNR: $(sed -n 3p "$tmp/out")"
"$QLLC" compare "$M" --profile "$tmp/p.yaml" --precision int16 --samples 4 -d "$D/calib.npy" >"$tmp/out.d" 2>&1 || fail "compare calib: $(cat "$tmp/out.d")"
[ "$(sed 1d "$tmp/out")" = "$(sed 1d "$tmp/out.d")" ] || fail "kept samples differ from calib.npy's first 4: $(cat "$tmp/out" "$tmp/out.d")"
# progress: on a terminal only (stderr redirected to a file above: no '\r')
grep -q $'\r' "$tmp/out" && fail "progress drawn on a file"
on_terminal $'\rcompare: sample 4/4' compare "$M" --profile "$tmp/p.yaml" --precision int16 --samples 4
# a profile without them (an older qllc's): samples drawn from its input histograms, and the first line says so
sed '/^samples:/,$d' "$tmp/p.yaml" >"$tmp/p_old.yaml"
grep -q '^samples:' "$tmp/p.yaml" && ! grep -q '^samples:' "$tmp/p_old.yaml" || fail "no samples section to strip"
"$QLLC" compare "$M" --profile "$tmp/p_old.yaml" --precision int16 --samples 4 >"$tmp/out" 2>&1 || fail "compare drawn: $(cat "$tmp/out")"
sed -n 1p "$tmp/out" | grep -q "at int16 against float, 4 samples (drawn from the profile's input histograms" \
  || fail "drawn: $(cat "$tmp/out")"

"$QLLC" compare "$M" --profile "$tmp/p.yaml" >"$tmp/out" 2>&1; rc=$?
[ $rc = 2 ] || fail "no precision: exit $rc"
grep -q "^qllc: error: compare: give --precision int8|int16 and --profile FILE$" "$tmp/out" || fail "no precision: $(cat "$tmp/out")"
"$QLLC" compare "$M" --profile "$tmp/p.yaml" --precision int8 --dataset "$tmp/none.npy" >"$tmp/out" 2>&1; rc=$?
[ $rc = 1 ] || fail "missing data set: exit $rc"
[ "$(wc -l <"$tmp/out")" = 1 ] && grep -q "none.npy" "$tmp/out" || fail "missing data set: $(cat "$tmp/out")"

finish compare_test
