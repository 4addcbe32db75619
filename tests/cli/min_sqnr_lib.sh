# tests/cli/min_sqnr_lib.sh: sourced by min_sqnr_test.sh, min_sqnr_cnn_test.sh, min_sqnr_digits_test.sh (issue 13),
# and for fail, $tmp and finish by min_sqnr_int16_test.sh and min_sqnr_time_test.sh (issue 27).
# check_targets NAME MODEL CALIB EVAL "PLUSES": profiles MODEL on CALIB, measures its int8 SQNR on EVAL
# with `qllc compare`, then for each target int8 + PLUS dB runs `qllc compile --min-sqnr` (searching on
# EVAL) and checks one of:
#  - reached: the search reports outputs at or above the target, `qllc compare` with the written map
#    measures the same figure (within 0.05 dB: the search's quick JIT gives the same results), and the
#    choice is cheaper than every layer at int16 (a layer left at int8 or at 16x8), or the summary
#    says only every layer at int16 reaches it (and the map is all int16);
#  - either way, each layer left wider than int8 is named with its SQNR one level lower (the others as
#    chosen), each below the target, and compare with that map confirms the first one (one compare a
#    target keeps the test short); a layer reported lowered by a later pass is at that precision in
#    the map;
#  - unreachable: the error names the layers and compare with every layer at int16 measures below
#    the target;
# and, when a map was written, that replaying it gives the same bundle bytes (.o and .h).
# Keeps each target's output, header and map as $tmp/{out,net,map}.NAME.PLUS[.h].
# Sourcing it sources tests/lib.sh (fail, ok, skip, $tmp, finish).
: "${QLLC:?}" "${QLLC_SOURCE_DIR:?}"
. "$QLLC_SOURCE_DIR/tests/lib.sh"

check_targets() {
  local m=$1 M=$2 C=$3 E=$4 pluses=$5
  "$QLLC" profile "$M" --dataset "$C" -o "$tmp/$m.yaml" >/dev/null 2>&1 || { fail "profile $m"; return; }
  local base
  base=$("$QLLC" compare "$M" --profile "$tmp/$m.yaml" --precision int8 -d "$E" | sed -n 3p | awk '{print $1}')
  for plus in $pluses; do
    local t line got measured
    t=$(awk -v b="$base" -v p="$plus" 'BEGIN { printf "%.1f", b + p }')
    rm -f "$tmp/map"
    if ! "$QLLC" compile "$M" --profile "$tmp/$m.yaml" --precision int8 --min-sqnr "$t" --search-dataset "$E" \
      --precision-map-out "$tmp/map" -o "$tmp/b1" --name net >"$tmp/out" 2>&1; then
      echo "$m int8 $base dB, target $t: $(cat "$tmp/out")"
      grep -q "^qllc: error: .*--min-sqnr $t dB cannot be reached: .*every layer at int16 .*the layers limiting it are '/" "$tmp/out" \
        || { fail "$m +$plus: $(cat "$tmp/out")"; continue; }
      [ -e "$tmp/map" ] && fail "$m +$plus: a map was written for an unreachable target"
      measured=$("$QLLC" compare "$M" --profile "$tmp/$m.yaml" --precision int16 -d "$E" | sed -n 3p | awk '{print $1}')
      awk -v g="$measured" -v t="$t" 'BEGIN { exit !(g < t) }' || fail "$m +$plus: int16 measures $measured >= $t, yet 'cannot'"
      continue
    fi
    line=$(grep '^outputs: ' "$tmp/out")
    got=$(echo "$line" | sed 's/^outputs: \([0-9.]*\) dB.*/\1/')
    echo "$m int8 $base dB, target $t: $line"
    awk -v g="$got" -v t="$t" 'BEGIN { exit !(g >= t) }' || fail "$m +$plus: search reports $got < $t"
    measured=$("$QLLC" compare "$M" --profile "$tmp/$m.yaml" --precision int8 --precision-map "$tmp/map" -d "$E" | sed -n 3p | awk '{print $1}')
    awk -v g="$measured" -v s="$got" 'BEGIN { d = g - s; exit !(d < 0.05 && d > -0.05) }' \
      || fail "$m +$plus: compare measures $measured, the search $got"
    local n_wide n_layers
    n_wide=$(echo "$line" | sed 's/.*; \([0-9]*\) of \([0-9]*\) layers wider.*/\1/')
    n_layers=$(echo "$line" | sed 's/.*; \([0-9]*\) of \([0-9]*\) layers wider.*/\2/')
    if grep -q '^only every layer at int16 reaches' "$tmp/out"; then
      [ "$n_wide" = "$n_layers" ] && [ "$(grep -c '^node .* int16$' "$tmp/map")" = "$n_layers" ] || fail "$m +$plus: 'only int16' but the map differs"
    else
      # cheaper than every layer at int16: a layer left at int8, or one at 16x8
      [ "$n_wide" -lt "$n_layers" ] || grep -q '^node .* 16x8$' "$tmp/map" || fail "$m +$plus: every layer at int16, unexplained: $line"
    fi
    # layers a later pass lowered: at that precision in the map (int8: not listed)
    local low name to
    low=$(grep '^lowered when measured again' "$tmp/out" | sed 's/^[^:]*://')
    [ -n "$low" ] && echo "  lowered again:$low"
    echo "$low" | tr ',' '\n' | while read -r name _ _ _ to; do
      [ -n "$name" ] || continue
      if [ "$to" = int8 ]; then ! grep -q "^node $name " "$tmp/map"; else grep -qx "node $name $to" "$tmp/map"; fi \
        || echo "FAIL: $m +$plus: $name reported lowered to $to, the map differs"
    done | tee "$tmp/low.fail"
    [ -s "$tmp/low.fail" ] && fails=$((fails + 1))
    # each layer left wide is named with its SQNR a level lower (the others as chosen), below the target
    if [ "$n_wide" -gt 0 ]; then
      local why lower
      why=$(grep '^only every layer at int16 reaches\|^no layer wider than int8 can be narrower' "$tmp/out")
      echo "  $why"
      [ "$(echo "$why" | grep -o ' at \(16x8\|int8\) [0-9.-]* dB' | wc -l)" = "$n_wide" ] || fail "$m +$plus: not every wide layer named: $why"
      echo "$why" | grep -o ' at \(16x8\|int8\) [0-9.-]* dB' | awk -v t="$t" '$3 >= t { bad = 1 } END { exit bad }' \
        || fail "$m +$plus: a layer one level lower reaches the target: $why"
      # one of them (the first), measured by compare: that layer one level lower, the others as in the map
      set -- $(echo "$why" | sed 's/^.* misses [^:]*: \([^ ]*\) at \([^ ]*\) \([0-9.-]*\) dB.*/\1 \2 \3/')
      grep -q "^node $1 " "$tmp/map" || fail "$m +$plus: $1 named wide, not in the map"
      sed "s|^node $1 [0-9a-z]*\$|node $1 $2|" "$tmp/map" >"$tmp/lower.map"
      lower=$("$QLLC" compare "$M" --profile "$tmp/$m.yaml" --precision int8 --precision-map "$tmp/lower.map" -d "$E" | sed -n 3p | awk '{print $1}')
      awk -v g="$lower" -v s="$3" 'BEGIN { d = g - s; exit !(d < 0.05 && d > -0.05) }' \
        || fail "$m +$plus: $1 at $2: compare measures $lower, the search $3"
    fi
    "$QLLC" compile "$M" --profile "$tmp/$m.yaml" --precision int8 --precision-map "$tmp/map" -o "$tmp/b2" --name net \
      >"$tmp/out2" 2>&1 || fail "$m +$plus replay: $(cat "$tmp/out2")"
    cmp -s "$tmp/b1/net.o" "$tmp/b2/net.o" && cmp -s "$tmp/b1/net.h" "$tmp/b2/net.h" || fail "$m +$plus: replay gives other bytes"
    cp "$tmp/out" "$tmp/out.$m.$plus"; cp "$tmp/b1/net.h" "$tmp/net.$m.$plus.h"; cp "$tmp/map" "$tmp/map.$m.$plus"
  done
}
