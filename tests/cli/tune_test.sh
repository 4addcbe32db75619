#!/bin/bash
# tests/cli/tune_test.sh: kernel variants chosen by measurement where the CPU is this machine (issue 23;
# src/driver/tune.c), and what the tool says about the CPU it compiles for.
#
#   1. `info --cpu native` on a model whose convs several variants could run here reports each such
#      layer's candidates with their measured times; --no-tune reports none.
#   2. A planted slow candidate (the test hook QLLC_TUNE_SLOW) moves the choice to another variant, and
#      every choice gives the same output bytes (`qllc run`, also against --no-tune and the reference).
#   3. --tune-cache FILE: written with the timings; two --cpu native bundles from the same file are the
#      same bytes; a file whose timings favour another candidate moves the choice there.
#   4. `compile` without --cpu notes on stderr what this machine would run (not with --quiet, not with
#      --cpu); `info` names its CPU first.
#   5. A --weights file bundle called with NULL constant weights returns 1 instead of faulting.
#   Also (3b) a float model: its stride-1 conv's two float rows (direct conv2ds1, panel conv2d) measured
#   against each other, either chosen by a planted slow candidate, the same bytes from both.
# Steps 1-3 are SKIPPED on a CPU where no layer has two candidates (no AVX-512 VNNI).
: "${QLLC:?}" "${QLLC_SOURCE_DIR:?}"
. "$QLLC_SOURCE_DIR/tests/lib.sh"
M=$QLLC_SOURCE_DIR/tests/cli/data/direct_convs/model.onnx
X=$QLLC_SOURCE_DIR/tests/cli/data/direct_convs/input_0.npy
"$QLLC" profile "$M" --dataset "$X" -o "$tmp/p.yaml" >/dev/null 2>"$tmp/err" || fail "profile: $(cat "$tmp/err")"
Q=(--profile "$tmp/p.yaml" --precision int8)
kernels() { "$QLLC" info "$M" "${Q[@]}" "$@" 2>&1 | sed -n '/^== kernels/,/^== memory/p'; }
out_of() { ls "$1"/*.npy | head -n 1; }

# ---- 1. measured ----
kernels --cpu native >"$tmp/k"
if ! grep -q 'measured on this CPU: ' "$tmp/k"; then
  skip "measurement: no layer of the model has two variants on this CPU"
else
  line=$(grep -m1 'measured on this CPU: ' "$tmp/k")
  node=$(sed 's/^node \([^ ]*\) .*/\1/' <<<"$line")
  chosen=$(sed 's/^node [^:]*: qllc_k_\([a-z0-9]*\)_[a-z0-9]*_[a-z0-9]*_[a-z0-9]*__\([a-z0-9]*\) .*/\1__\2/' <<<"$line")
  n=$(grep -o ' us' <<<"$line" | wc -l)
  [ "$n" -ge 2 ] && ok "$node: $n candidates measured, $chosen runs" || fail "$node: $n timings in: $line"
  kernels --cpu native --no-tune | grep -q 'measured' && fail "--no-tune still measured" || ok "--no-tune: the rule table"

  # ---- 2. a planted slow candidate, the same bytes ----
  QLLC_TUNE_SLOW=${chosen%%__*} kernels --cpu native >"$tmp/k2"
  got=$(grep "^node $node " "$tmp/k2")
  if grep -q "qllc_k_${chosen%%__*}_" <<<"$got"; then
    fail "QLLC_TUNE_SLOW=${chosen%%__*}: $node still runs it: $got"
  elif grep -q 'measured on this CPU: ' <<<"$got"; then
    ok "QLLC_TUNE_SLOW=${chosen%%__*}: $node moves to $(sed 's/^node [^:]*: \([^ ]*\) .*/\1/' <<<"$got")"
  else
    fail "QLLC_TUNE_SLOW: $node not measured: $got"
  fi
  for v in fast slow notune ref; do
    args=(--cpu native)
    [ $v = notune ] && args+=(--no-tune)
    [ $v = ref ] && args=(--cpu x86-64)
    if [ $v = slow ]; then export QLLC_TUNE_SLOW=${chosen%%__*}; else unset QLLC_TUNE_SLOW; fi
    "$QLLC" run "$M" "${Q[@]}" "${args[@]}" --input "$X" --output-dir "$tmp/out-$v" >"$tmp/run.log" 2>&1 ||
      fail "run $v: $(cat "$tmp/run.log")"
  done
  unset QLLC_TUNE_SLOW
  same=1
  for v in slow notune ref; do cmp -s "$(out_of "$tmp/out-fast")" "$(out_of "$tmp/out-$v")" || same=0; done
  [ $same = 1 ] && ok "every choice (measured, planted slow, rule table, reference) gives the same bytes" ||
    fail "the outputs differ between choices"

  # ---- 3. the cache file ----
  for k in 1 2; do
    "$QLLC" compile "$M" "${Q[@]}" --cpu native --tune-cache "$tmp/t.tc" -o "$tmp/b$k" --name net >/dev/null 2>"$tmp/err" ||
      fail "compile with --tune-cache: $(cat "$tmp/err")"
  done
  grep -q '^qllc-tune 1$' "$tmp/t.tc" && [ "$(grep -c "qllc_k_" "$tmp/t.tc")" -ge 2 ] &&
    ok "--tune-cache: $(grep -c qllc_k_ "$tmp/t.tc") timings written" || fail "--tune-cache: $(cat "$tmp/t.tc")"
  cmp -s "$tmp/b1/net.o" "$tmp/b2/net.o" && cmp -s "$tmp/b1/net.h" "$tmp/b2/net.h" &&
    ok "two --cpu native bundles from one tune cache: the same bytes" || fail "bundles from one tune cache differ"
  # the file's timings decide: make the chosen kernel of $node the slowest by far
  awk -F'\t' -v OFS='\t' -v k="qllc_k_${chosen%%__*}_" 'index($2, k) == 1 { $4 = "1000000" } { print }' "$tmp/t.tc" >"$tmp/t2.tc"
  kernels --cpu native --tune-cache "$tmp/t2.tc" | grep "^node $node " | grep -q "qllc_k_${chosen%%__*}_" &&
    fail "the cache's timings did not move $node" || ok "the cache's timings move $node off ${chosen%%__*}"
  printf 'qllc-tune 1\nznver4\tonly three columns\n' >"$tmp/bad.tc"
  "$QLLC" info "$M" "${Q[@]}" --cpu native --tune-cache "$tmp/bad.tc" >/dev/null 2>"$tmp/err" &&
    fail "a malformed tune cache was accepted" ||
    { grep -q "bad.tc.*line 2" "$tmp/err" && ok "a malformed tune cache: $(cat "$tmp/err")" || fail "bad cache message: $(cat "$tmp/err")"; }
fi

# ---- 3b. float: the direct and the panel float conv measured against each other (issue 26) ----
# cnn6 in float: /convs.0/Conv is a 3x3 stride-1 conv at 32x32 (conv2ds1 and conv2d rows)
FM=$QLLC_SOURCE_DIR/tests/cli/data/shapes/cnn6.onnx
FX=$tmp/cnn6_x.npy
npy_f32 "$FX" 1 3 32 32
fnode() { "$QLLC" info "$FM" --cpu native "$@" 2>&1 | grep '^node /convs.0/Conv '; }
line=$(fnode)
if ! grep -q 'measured on this CPU: conv2ds1__' <<<"$line"; then
  skip "float measurement: no float conv rows on this CPU ($line)"
else
  ok "float conv measured: $line"
  # a planted slow direct conv moves it to the panel conv, a planted slow panel conv to the direct one
  l1=$(QLLC_TUNE_SLOW=conv2ds1 fnode)
  grep -q ': qllc_k_conv2d_f32_f32_f32__[a-z0-9]*  \[measured on this CPU' <<<"$l1" &&
    ok "QLLC_TUNE_SLOW=conv2ds1: the panel conv runs" || fail "QLLC_TUNE_SLOW=conv2ds1: $l1"
  l2=$(QLLC_TUNE_SLOW=conv2d_f32 fnode)
  grep -q ': qllc_k_conv2ds1_f32_f32_f32__[a-z0-9]*  \[measured on this CPU' <<<"$l2" &&
    ok "QLLC_TUNE_SLOW=conv2d_f32: the direct conv runs" || fail "QLLC_TUNE_SLOW=conv2d_f32: $l2"
  for v in ds1 panel; do
    if [ $v = ds1 ]; then export QLLC_TUNE_SLOW=conv2d_f32; else export QLLC_TUNE_SLOW=conv2ds1; fi
    "$QLLC" run "$FM" --cpu native --input "$FX" --output-dir "$tmp/fout-$v" >"$tmp/run.log" 2>&1 ||
      fail "float run $v: $(cat "$tmp/run.log")"
  done
  export QLLC_TUNE_SLOW=conv2d_f32,conv2ds1 # every stride-1 conv of 16 channels and more on the transposed row
  "$QLLC" run "$FM" --cpu native --input "$FX" --output-dir "$tmp/fout-t1" >"$tmp/run.log" 2>&1 ||
    fail "float run t1: $(cat "$tmp/run.log")"
  unset QLLC_TUNE_SLOW
  cmp -s "$(out_of "$tmp/fout-t1")" "$(out_of "$tmp/fout-panel")" &&
    ok "float: the transposed conv gives the panel conv's bytes" || fail "float: the transposed conv's output differs"
  # /convs.2/Conv (16 channels at 16x16): the transposed row measured against the panel row
  l3=$(QLLC_TUNE_SLOW=conv2dt1 "$QLLC" info "$FM" --cpu native 2>&1 | grep '^node /convs.2/Conv ')
  grep -q ': qllc_k_conv2d_f32_f32_f32__[a-z0-9]*  \[measured on this CPU: conv2dt1__' <<<"$l3" &&
    ok "QLLC_TUNE_SLOW=conv2dt1: the panel conv runs /convs.2" || fail "QLLC_TUNE_SLOW=conv2dt1: $l3"
  cmp -s "$(out_of "$tmp/fout-ds1")" "$(out_of "$tmp/fout-panel")" &&
    ok "float: both measured choices give the same bytes" || fail "float: the outputs differ between choices"
fi

# ---- 4. the CPU compile and info assume ----
"$QLLC" compile "$M" "${Q[@]}" -o "$tmp/g" --name net >/dev/null 2>"$tmp/err" || fail "compile: $(cat "$tmp/err")"
if grep -q 'qllc: note: no --cpu: compiled for the generic x86-64 CPU' "$tmp/err"; then
  ok "default compile notes: $(head -c 160 "$tmp/err")..."
else
  fail "no note for the default CPU: $(cat "$tmp/err")"
fi
"$QLLC" compile "$M" "${Q[@]}" -o "$tmp/g" --name net --quiet >/dev/null 2>"$tmp/err"
[ -s "$tmp/err" ] && fail "--quiet still printed: $(cat "$tmp/err")" || ok "--quiet: no note"
"$QLLC" compile "$M" "${Q[@]}" -o "$tmp/g" --name net --cpu x86-64 >/dev/null 2>"$tmp/err"
[ -s "$tmp/err" ] && fail "--cpu x86-64 still noted: $(cat "$tmp/err")" || ok "an explicit --cpu: no note"
"$QLLC" info "$M" "${Q[@]}" | sed -n 2p | grep -q '^cpu: x86-64 (target x86_64; no --cpu: the generic CPU' &&
  ok "info names its CPU on its second line" || fail "info's CPU line: $("$QLLC" info "$M" "${Q[@]}" | sed -n 2p)"
"$QLLC" info "$M" "${Q[@]}" --cpu znver4 | sed -n 2p | grep -qx 'cpu: znver4 (target x86_64)' &&
  ok "info --cpu znver4 names it" || fail "info --cpu znver4: $("$QLLC" info "$M" "${Q[@]}" --cpu znver4 | sed -n 2p)"

# ---- 5. NULL constant weights ----
"$QLLC" compile "$M" "${Q[@]}" --cpu x86-64 --weights file -o "$tmp/w" --name net >/dev/null 2>"$tmp/err" ||
  fail "compile --weights file: $(cat "$tmp/err")"
cat >"$tmp/w/nul.c" <<'EOF'
#include <stdlib.h>
#include "net.h"
int main(void) {
  uint8_t *mut = aligned_alloc(net_MEM_ALIGN, (net_MUTABLE_MEM_SIZE + 63) / 64 * 64);
  uint8_t *act = aligned_alloc(net_MEM_ALIGN, (net_ACTIVATIONS_MEM_SIZE + 64) / 64 * 64);
  return net(NULL, mut, act); /* the weights were not given */
}
EOF
if cc -O2 -I "$tmp/w" "$tmp/w/nul.c" "$tmp/w/net.o" -o "$tmp/w/nul" 2>"$tmp/err"; then
  "$tmp/w/nul"; rc=$?
  [ $rc -eq 1 ] && ok "--weights file bundle with NULL weights returns 1" || fail "NULL weights: exit $rc"
else
  fail "cannot build the NULL-weights caller: $(cat "$tmp/err")"
fi

finish tune_test
