#!/bin/bash
# tests/cli/bench_test.sh: `qllc bench` prints one row per kernel call of the program `qllc info` shows for
# the same options (node and kernel variant, in program order), every time positive on the six-conv CNN,
# and the layers' times adding up to the whole per-inference time within 10 % (the one timing condition:
# a consistency check between the plain and the instrumented build, not a speed threshold). Also --csv's
# header, GOPS on the MAC layers only, and usage errors.
: "${QLLC:?}" "${QLLC_SOURCE_DIR:?}"
. "$QLLC_SOURCE_DIR/tests/lib.sh"
S=$QLLC_SOURCE_DIR/tests/cli/data/shapes
DIG=$QLLC_SOURCE_DIR/models/digits

# the program's kernel calls as "node,kernel" lines, from `qllc info` for this machine's CPU, with the
# variant timings bench measured (--tune-cache), so both choose the same variants
program() { "$QLLC" info --cpu native --tune-cache "$tmp/tune" "$@" | sed -n 's/^ *[0-9][0-9]*: \([A-Za-z0-9_]*\)(.*; \(.*\)$/\2,\1/p'; }

# check_rows WHAT CSV INFO_ARGS...: the CSV's rows are the program's calls; prints the CSV's times
check_rows() {
  local what=$1 csv=$2; shift 2
  program "$@" >"$tmp/want" || fail "$what: qllc info failed"
  [ -s "$tmp/want" ] || fail "$what: no kernel calls in qllc info"
  head -1 "$csv" | grep -qx 'node,op,kernel,ns,share,gops' || fail "$what: CSV header is $(head -1 "$csv")"
  tail -n +2 "$csv" | cut -d, -f1,3 >"$tmp/got"
  cmp -s "$tmp/want" "$tmp/got" || { fail "$what: rows differ from the program's calls"; diff "$tmp/want" "$tmp/got"; }
}

"$QLLC" profile "$DIG/digits.onnx" -d "$DIG/calib_x.npy" -o "$tmp/digits.yaml" >/dev/null || fail "profile digits"

# 1. the six-conv CNN in float: rows, positive times, GOPS exactly on the Conv and Gemm rows
"$QLLC" bench "$S/cnn6.onnx" --tune-cache "$tmp/tune" --runs 20 --csv >"$tmp/cnn6.csv" || fail "bench cnn6 --csv exit $?"
check_rows cnn6 "$tmp/cnn6.csv" "$S/cnn6.onnx"
[ "$(tail -n +2 "$tmp/cnn6.csv" | wc -l)" -ge 9 ] || fail "cnn6: fewer than 9 rows: $(cat "$tmp/cnn6.csv")"
awk -F, 'NR > 1 && !($4 > 0) { print "FAIL: cnn6: time not positive: " $0; bad = 1 }
         NR > 1 && ($2 == "Conv" || $2 == "qllc.FullyConnected") != ($6 != "") { print "FAIL: cnn6: GOPS column: " $0; bad = 1 }
         END { exit bad }' "$tmp/cnn6.csv" || fails=$((fails + 1))
[ "$(awk -F, 'NR > 1 && $2 == "Conv"' "$tmp/cnn6.csv" | wc -l)" -eq 6 ] || fail "cnn6: not six Conv rows"

# 2. the sum of the layers against the whole, within 10 % (once more with more runs if a busy machine
#    disturbed the first measurement)
sum_ok() {
  "$QLLC" bench "$S/cnn6.onnx" --runs "$1" >"$tmp/cnn6.txt" || { fail "bench cnn6 exit $?"; return 0; }
  local pct; pct=$(sed -n 's/.*, \([0-9.]*\)% of the median per inference$/\1/p' "$tmp/cnn6.txt")
  [ -n "$pct" ] || { fail "bench cnn6: no sum line: $(cat "$tmp/cnn6.txt")"; return 0; }
  echo "cnn6: layers sum to $pct % of the median"
  awk -v p="$pct" 'BEGIN { exit !(p >= 90 && p <= 110) }'
}
sum_ok 50 || sum_ok 200 || fail "cnn6: layers do not add up to the whole within 10 %: $(tail -1 "$tmp/cnn6.txt")"
grep -qE '^.*cnn6.onnx on [a-z0-9-]+, [0-9]+ runs: median [0-9.]+ [mun]?s, min .* p90 .* per inference$' "$tmp/cnn6.txt" ||
  fail "bench cnn6: header line: $(head -1 "$tmp/cnn6.txt")"

# 3. quantized (int8 and int16, with their quantize/dequantize and variant kernels): rows and the MAC layers' times
for p in int8 int16; do
  q=(--profile "$tmp/digits.yaml" --precision $p)
  "$QLLC" bench "$DIG/digits.onnx" "${q[@]}" --tune-cache "$tmp/tune" --runs 20 --csv >"$tmp/d$p.csv" || fail "bench digits $p exit $?"
  check_rows "digits $p" "$tmp/d$p.csv" "$DIG/digits.onnx" "${q[@]}"
  grep -q "_${p#int}_\|i${p#int}" "$tmp/d$p.csv" || fail "digits $p: no $p kernel in $(cat "$tmp/d$p.csv")"
  awk -F, 'NR > 1 && $6 != "" && !($4 > 0) { print "FAIL: MAC layer time not positive: " $0; bad = 1 } END { exit bad }' \
    "$tmp/d$p.csv" || fails=$((fails + 1))
done

# 4. inputs from a file give the same rows; bad input is an error naming the file
"$QLLC" bench "$DIG/digits.onnx" --tune-cache "$tmp/tune" --runs 3 --input "$DIG/sample_0.npy" --csv >"$tmp/in.csv" || fail "bench --input exit $?"
check_rows "digits --input" "$tmp/in.csv" "$DIG/digits.onnx"
"$QLLC" bench "$DIG/digits.onnx" --input "$QLLC_SOURCE_DIR/tests/cli/data/small_x.npy" >/dev/null 2>"$tmp/err"
[ $? -eq 1 ] && grep -q "input 'input'" "$tmp/err" || fail "bench with a wrong input: $(cat "$tmp/err")"
"$QLLC" bench "$DIG/digits.onnx" --runs 0 >/dev/null 2>"$tmp/err"
[ $? -eq 2 ] && grep -q -- "--runs" "$tmp/err" || fail "bench --runs 0: $(cat "$tmp/err")"
"$QLLC" bench "$DIG/digits.onnx" --target aarch64 >/dev/null 2>"$tmp/err"
[ $? -eq 1 ] && grep -q "aarch64" "$tmp/err" || fail "bench --target aarch64 on this host: $(cat "$tmp/err")"

finish bench_test
