#!/bin/bash
# tests/cli/tutorial_test.sh: every ```sh block of docs/tutorial.md runs, in order, in one shell with
# `set -e`, from a scratch copy of the repository's root (models/ and examples/ linked in), with the qllc
# under test first on the PATH (issue 14, item 3). The ```python blocks need PyTorch and are not run
# (the files they make are committed under models/digits). Then the answer is checked: the aarch64
# bundle, run under qemu, says "digit: 8" for examples/tutorial/eight.pgm, and its scores are the int8
# JIT's (qllc run in the tutorial's last step) to the printed 3 decimals.
: "${QLLC:?}" "${QLLC_SOURCE_DIR:?}"
. "$QLLC_SOURCE_DIR/tests/lib.sh"
S=$QLLC_SOURCE_DIR
for t in aarch64-linux-gnu-gcc qemu-aarch64; do
  command -v $t >/dev/null || { echo "no $t (scripts/bootstrap installs it); skipping"; exit 77; }
done
[ -d /usr/aarch64-linux-gnu ] || { echo "no aarch64 C library in /usr/aarch64-linux-gnu; skipping"; exit 77; }
mkdir -p "$tmp/bin" "$tmp/root"
ln -s "$QLLC" "$tmp/bin/qllc"
ln -s "$S/models" "$tmp/root/models"
ln -s "$S/examples" "$tmp/root/examples"

# the sh blocks, in order
awk '/^```sh[[:space:]]*$/ {on = 1; print "# ---- block " ++n; next} /^```/ {on = 0; next} on {print}' \
  "$S/docs/tutorial.md" >"$tmp/tutorial.sh"
n=$(grep -c '^# ---- block' "$tmp/tutorial.sh")
[ "$n" -ge 8 ] || { echo "FAIL: only $n sh blocks found in docs/tutorial.md"; exit 1; }
if ! (cd "$tmp/root" && PATH="$tmp/bin:$PATH" bash -e -x "$tmp/tutorial.sh") >"$tmp/out.log" 2>&1; then
  tail -30 "$tmp/out.log"
  echo "FAIL: a command of docs/tutorial.md failed (log above)"
  exit 1
fi
ans=$tmp/root/tutorial/answer.txt
grep -qx 'digit: 8' "$ans" || fail "the aarch64 bundle's answer: $(cat "$ans")"
# the doc shows the answer the test got
doc_scores=$(grep -m1 '^scores:' "$S/docs/tutorial.md")
got_scores=$(grep -m1 '^scores:' "$ans")
[ "$doc_scores" = "$got_scores" ] || fail "docs/tutorial.md shows '$doc_scores', the bundle printed '$got_scores'"
# the int8 JIT on this machine gives the same scores (same integer kernels on every target)
jit=$(od -A n -t f4 -j 128 -v "$tmp/root/tutorial/int8/logits.npy" 2>/dev/null | tr -s ' \n' ' ' |
      awk '{for (i = 1; i <= NF; i++) printf " %.3f", $i}')
[ "scores:$jit" = "$got_scores" ] || fail "int8 JIT scores '$jit' differ from the aarch64 bundle's '$got_scores'"
[ $fails -eq 0 ] && echo "tutorial_test: OK ($n sh blocks; $got_scores)"
exit $((fails > 0))
