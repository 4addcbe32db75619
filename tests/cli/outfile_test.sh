#!/bin/bash
# tests/cli/outfile_test.sh: files the user names (docs/limits.md, "Files qllc writes"; src/ir/outfile.c).
#
#   1. `profile -o LINK` writes the link's target and the link stays a link; `-o FIFO` writes into the
#      FIFO; `-o` a character device (as root: one made with mknod) leaves it a character device.
#   2. A profile that fails keeps the file it would have replaced, and leaves no temporary.
#   3. --precision-map-out is written when the compile succeeds and not at all when it fails.
#   4. `run` removes the outputs it wrote when a later output cannot be written; errors exit below 128.
: "${QLLC:?}" "${QLLC_SOURCE_DIR:?}"
. "$QLLC_SOURCE_DIR/tests/lib.sh"
D=$QLLC_SOURCE_DIR/tests/cli/data
P=("$D/small.onnx" --dataset "x=$D/small_x.npy")
no_tmp() { # no temporary left in directory $1
  local left; left=$(ls -A "$1" | grep '\.tmp' || true)
  [ -z "$left" ] && ok "$2: no temporary left" || fail "$2: temporaries left: $left"
}

# ---- 1. a symlink, a FIFO, a device ----
echo old >"$tmp/target.yaml"
ln -s target.yaml "$tmp/link.yaml"
"$QLLC" profile "${P[@]}" -o "$tmp/link.yaml" >/dev/null 2>"$tmp/err" || fail "profile -o LINK: $(cat "$tmp/err")"
[ -L "$tmp/link.yaml" ] && ok "profile -o LINK: the link stays a link" || fail "profile -o LINK: the link was replaced"
grep -q graph_hash "$tmp/target.yaml" && ok "profile -o LINK: the target has the profile" ||
  fail "profile -o LINK: target: $(head -c 200 "$tmp/target.yaml")"
no_tmp "$tmp" "profile -o LINK"

mkfifo "$tmp/fifo"
cat "$tmp/fifo" >"$tmp/from_fifo" &
reader=$!
"$QLLC" profile "${P[@]}" -o "$tmp/fifo" >/dev/null 2>"$tmp/err" || fail "profile -o FIFO: $(cat "$tmp/err")"
wait $reader
[ -p "$tmp/fifo" ] && ok "profile -o FIFO: still a FIFO" || fail "profile -o FIFO: the FIFO was replaced"
grep -q graph_hash "$tmp/from_fifo" && ok "profile -o FIFO: the profile came through it" || fail "profile -o FIFO: nothing read"
no_tmp "$tmp" "profile -o FIFO"

if [ "$(id -u)" = 0 ] && mknod "$tmp/null" c 1 3 2>/dev/null; then
  "$QLLC" profile "${P[@]}" -o "$tmp/null" >/dev/null 2>"$tmp/err" || fail "profile -o DEVICE: $(cat "$tmp/err")"
  [ -c "$tmp/null" ] && ok "profile -o DEVICE: still a character device" || fail "profile -o DEVICE: the device was replaced"
  no_tmp "$tmp" "profile -o DEVICE"
else
  skip "profile -o DEVICE (needs root for mknod)"
fi
"$QLLC" profile "${P[@]}" -o /dev/null >/dev/null 2>"$tmp/err" || fail "profile -o /dev/null: $(cat "$tmp/err")"
[ -c /dev/null ] && ok "profile -o /dev/null: still a character device" || fail "/dev/null is gone"

# ---- 2. a failed profile keeps the old file ----
mkdir "$tmp/p2"
echo keep >"$tmp/p2/p.yaml"
"$QLLC" profile "$D/small.onnx" --dataset "x=$D/small_x_bad_shape.npy" -o "$tmp/p2/p.yaml" >/dev/null 2>"$tmp/err"; rc=$?
[ $rc -ge 1 ] && [ $rc -lt 128 ] && ok "failed profile: exit $rc" || fail "failed profile: exit $rc"
[ "$(cat "$tmp/p2/p.yaml")" = keep ] && ok "failed profile: the old file kept" || fail "failed profile: old file changed"
no_tmp "$tmp/p2" "failed profile"
"$QLLC" profile "${P[@]}" -o "$tmp/nodir/p.yaml" >/dev/null 2>"$tmp/err"; rc=$?
[ $rc -ge 1 ] && [ $rc -lt 128 ] && grep -q "nodir/p.yaml" "$tmp/err" && ok "profile -o in a missing directory: exit $rc, names the file" ||
  fail "profile -o in a missing directory: exit $rc: $(cat "$tmp/err")"

# ---- 3. --precision-map-out only after a successful compile ----
"$QLLC" profile "${P[@]}" -o "$tmp/p.yaml" >/dev/null 2>&1 || fail "profile"
Q=(--profile "$tmp/p.yaml" --precision int8)
"$QLLC" compile "$D/small.onnx" "${Q[@]}" --precision-map-out "$tmp/map.txt" -o "$tmp/b1" >/dev/null 2>"$tmp/err" ||
  fail "compile --precision-map-out: $(cat "$tmp/err")"
grep -q '^qllc-precision-map 1' "$tmp/map.txt" 2>/dev/null && ok "compile writes --precision-map-out" || fail "no precision map written"
echo file >"$tmp/notadir"
"$QLLC" compile "$D/small.onnx" "${Q[@]}" --precision-map-out "$tmp/map2.txt" -o "$tmp/notadir" >/dev/null 2>"$tmp/err"; rc=$?
[ $rc -ge 1 ] && [ $rc -lt 128 ] && ok "compile to a regular file as directory: exit $rc" || fail "compile -o FILE: exit $rc"
[ -e "$tmp/map2.txt" ] && fail "a failed compile left --precision-map-out" || ok "a failed compile writes no precision map"
"$QLLC" compile "$D/small.onnx" "${Q[@]}" --precision-map "$tmp/map.txt" --precision-map-out "$tmp/map3.txt" \
  -o "$tmp/notadir" >/dev/null 2>&1
[ -e "$tmp/map3.txt" ] && fail "a failed replayed compile left --precision-map-out" || ok "a failed replayed compile writes no map"
no_tmp "$tmp" "precision maps"

# ---- 4. run: all outputs or none ----
"$QLLC" run "$D/two_io.onnx" --input "a=$D/two_io_a.npy" --input "b=$D/two_io_b.npy" --output-dir "$tmp/r1" \
  >"$tmp/run.out" 2>"$tmp/err" || fail "run two_io: $(cat "$tmp/err")"
last=$(sed -n 's/.* -> //p' "$tmp/run.out" | tail -n 1)
first=$(sed -n 's/.* -> //p' "$tmp/run.out" | head -n 1)
if [ -n "$last" ] && [ "$last" != "$first" ]; then
  mkdir -p "$tmp/r2/$(basename "$last")"
  "$QLLC" run "$D/two_io.onnx" --input "a=$D/two_io_a.npy" --input "b=$D/two_io_b.npy" --output-dir "$tmp/r2" \
    >"$tmp/run2.out" 2>"$tmp/err"; rc=$?
  [ $rc -ge 1 ] && [ $rc -lt 128 ] && grep -q "$(basename "$last")" "$tmp/err" &&
    ok "run with an unwritable second output: exit $rc, names it" || fail "run: exit $rc: $(cat "$tmp/err")"
  [ -e "$tmp/r2/$(basename "$first")" ] && fail "run left the first output behind" || ok "run removed the output it wrote first"
  no_tmp "$tmp/r2" "run"
  # an output that is a symlink to a device is written in place and never removed
  mkdir "$tmp/r3"; ln -s /dev/null "$tmp/r3/$(basename "$first")"; mkdir "$tmp/r3/$(basename "$last")"
  "$QLLC" run "$D/two_io.onnx" --input "a=$D/two_io_a.npy" --input "b=$D/two_io_b.npy" --output-dir "$tmp/r3" >/dev/null 2>&1
  [ -L "$tmp/r3/$(basename "$first")" ] && [ -c /dev/null ] && ok "run: a symlink to /dev/null given is left alone" ||
    fail "run: the symlink to /dev/null was removed or replaced"
else
  fail "run two_io: cannot tell its outputs: $(cat "$tmp/run.out")"
fi

finish outfile_test
