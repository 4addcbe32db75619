#!/bin/bash
# tests/cli/min_sqnr_time_test.sh: the precision search's cost where the target CPU is this machine
# (issue 27), on tests/cli/data/matmul_add.onnx (one layer: int8, 16x8 or int16):
#  - `qllc bench --min-sqnr` (the JIT) and `qllc compile --cpu native` say the cost is measured time and
#    give the layer's time at each level (from qllc bench's per-layer timing) and the chosen mix's time;
#    `qllc compile` for the generic CPU says the cost is wide MACs and gives no times;
#  - for a target between int8 and 16x8, the chosen level is, of the levels `qllc compare` measures at or
#    above the target, the one with the smallest reported time, unless the summary says that mix measured
#    slower whole than every layer at int16, which is then chosen (and the written map holds it);
#  - the summary is on stderr, nothing on stdout unless --precision-map-out - asks for the map, which
#    is then exactly the file --precision-map-out FILE writes; progress lines only on a terminal.
# No speed is asserted: only that the choice follows the reported measurements.
. "$QLLC_SOURCE_DIR/tests/cli/min_sqnr_lib.sh" # fail, $tmp, finish
D=$QLLC_SOURCE_DIR/tests/cli/data
M=$D/matmul_add.onnx

"$QLLC" profile "$M" --dataset "$D/matmul_add_calib.npy" -o "$tmp/p.yaml" >/dev/null 2>&1 || fail "profile"
hash=$("$QLLC" compile "$M" --profile "$tmp/p.yaml" --precision int8 --precision-map-out "$tmp/m8" -o "$tmp/b0" >/dev/null 2>&1; grep '^graph_hash' "$tmp/m8")
declare -A db
for lv in int8 16x8 int16; do
  { echo "qllc-precision-map 1"; echo "$hash"; [ $lv = int8 ] || echo "node matmul $lv"; } >"$tmp/map.$lv"
  db[$lv]=$("$QLLC" compare "$M" --profile "$tmp/p.yaml" --precision int8 --precision-map "$tmp/map.$lv" | sed -n 3p | awk '{print $1}')
done
t=$(awk -v a="${db[int8]}" -v b="${db[16x8]}" 'BEGIN { printf "%.1f", (a + b) / 2 }')
echo "int8 ${db[int8]} dB, 16x8 ${db[16x8]} dB, int16 ${db[int16]} dB; target $t dB"

# the JIT: measured time
"$QLLC" bench "$M" --profile "$tmp/p.yaml" --precision int8 --min-sqnr "$t" --runs 5 --precision-map-out "$tmp/map" \
  >"$tmp/out" 2>"$tmp/err" || fail "bench: $(cat "$tmp/err")"
grep -q '^cost: measured time (the target CPU is this machine, ' "$tmp/err" || fail "bench: no measured cost: $(cat "$tmp/err")"
grep -q '^time: the chosen mix [0-9.]* [num]*s per inference (measured' "$tmp/err" || fail "bench: no time of the mix: $(cat "$tmp/err")"
line=$(grep '^  time matmul: ' "$tmp/err")
echo "$line"
[ -n "$line" ] || fail "no time line for the layer: $(cat "$tmp/err")"
# "  time matmul: int8 12.3 ns, 16x8 4.56 us, int16 7.89 us; chosen int16" -> level ns pairs
echo "$line" | sed 's/^  time matmul: //; s/; chosen.*//' | tr ',' '\n' | awk '
  { v = $2; if ($3 == "us") v *= 1e3; else if ($3 == "ms") v *= 1e6; print $1, v }' >"$tmp/times"
[ "$(wc -l <"$tmp/times")" = 3 ] || fail "three levels timed: $line"
chosen=$(echo "$line" | sed 's/.*; chosen //')
best=$(while read -r lv ns; do
  awk -v g="${db[$lv]}" -v t="$t" 'BEGIN { exit !(g >= t) }' && echo "$lv $ns"
done <"$tmp/times" | sort -k2,2g | head -1 | awk '{print $2}')
mine=$(awk -v c="$chosen" '$1 == c { print $2 }' "$tmp/times")
awk -v g="${db[$chosen]}" -v t="$t" 'BEGIN { exit !(g >= t) }' || fail "chose $chosen, below $t dB"
# the layer's fastest level reaching the target; or every layer at int16, when the summary says the
# mix the layers' times chose measured slower whole than every layer at int16
if grep -q '^the mix the layers. times chose measured .* slower than every layer at int16' "$tmp/err"; then
  [ "$chosen" = int16 ] || fail "gave way to int16, yet chose $chosen"
else
  [ "$mine" = "$best" ] || fail "chose $chosen ($mine ns); a level reaching $t dB takes $best ns by the reported times: $line"
fi
if [ "$chosen" = int8 ]; then ! grep -q '^node ' "$tmp/map"; else grep -qx "node matmul $chosen" "$tmp/map"; fi \
  || fail "the map does not hold $chosen: $(cat "$tmp/map")"
grep -q '^precision search\|^cost:' "$tmp/out" && fail "the summary went to stdout"

# compile for this machine: measured; for the generic CPU: MACs, no times
"$QLLC" compile "$M" --profile "$tmp/p.yaml" --precision int8 --min-sqnr "$t" --cpu native -o "$tmp/b1" >"$tmp/out" 2>"$tmp/err" \
  || fail "compile --cpu native: $(cat "$tmp/err")"
grep -q '^cost: measured time' "$tmp/err" || fail "--cpu native: not measured: $(cat "$tmp/err")"
[ "$(grep -vc '^wrote ' "$tmp/out")" = 0 ] || fail "compile printed more than its 'wrote' line on stdout: $(cat "$tmp/out")"
"$QLLC" compile "$M" --profile "$tmp/p.yaml" --precision int8 --min-sqnr "$t" -o "$tmp/b2" --precision-map-out "$tmp/mapg" \
  >"$tmp/out" 2>"$tmp/err" || fail "compile: $(cat "$tmp/err")"
grep -q '^cost: wide MACs (the target CPU is not this machine' "$tmp/err" || fail "generic CPU: not MACs: $(cat "$tmp/err")"
grep -q '^  time \|^time: ' "$tmp/err" && fail "generic CPU: times reported: $(cat "$tmp/err")"
grep -q 'qllc-precision-map\|^node ' "$tmp/err" "$tmp/out" && fail "the machine-readable map printed unasked"
# the map on stdout when asked: the same file
"$QLLC" compile "$M" --profile "$tmp/p.yaml" --precision int8 --min-sqnr "$t" -o "$tmp/b3" --precision-map-out - \
  >"$tmp/map.stdout" 2>"$tmp/err" || fail "compile --precision-map-out -: $(cat "$tmp/err")"
cmp -s "$tmp/map.stdout" "$tmp/mapg" || fail "--precision-map-out - differs from the file: $(diff "$tmp/map.stdout" "$tmp/mapg")"
"$QLLC" compile "$M" --profile "$tmp/p.yaml" --precision int8 --precision-map-out - -o "$tmp/b4" >"$tmp/out" 2>&1; rc=$?
[ $rc = 2 ] || fail "--precision-map-out - without --min-sqnr: exit $rc"
# progress: none here (stderr is a file), lines on a terminal
grep -q $'\r' "$tmp/err" && fail "progress drawn on a file"
on_terminal $'\rprecision search: every layer at int8' compile "$M" --profile "$tmp/p.yaml" --precision int8 \
  --min-sqnr "$t" -o "$tmp/b5"
finish min_sqnr_time_test
