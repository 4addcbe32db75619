#!/bin/bash
# tests/cli/run_dataset_test.sh: `qllc run --dataset` puts 20 samples through one JIT and writes each
# output stacked [20, ...]: sample k has the same bytes as a single `qllc run` on sample k (int8: all 20;
# float: the first 5); .npz data sets (np.savez_compressed: deflated, and np.savez: stored, by array name) give the same
# bytes as a directory of .npy files; `--output FILE.npz` writes the same bytes, and a bare `--input
# FILE.npz` feeds the inputs by array name. Bad data sets are errors naming the file.
: "${QLLC:?}" "${QLLC_SOURCE_DIR:?}"
. "$QLLC_SOURCE_DIR/tests/lib.sh"
S=$QLLC_SOURCE_DIR/tests/cli/data/shapes
DIG=$QLLC_SOURCE_DIR/models/digits
M=$DIG/digits.onnx
"$QLLC" profile "$M" -d "$DIG/calib_x.npy" -o "$tmp/p.yaml" >/dev/null || fail "profile"

# the data bytes of a .npy file (what follows its header: 10 bytes + the length in bytes 8-9)
npy_data() { local h; h=$(od -An -t u2 -j 8 -N 2 "$1" | tr -d ' '); tail -c +$((10 + h + 1)) "$1"; }

for prec in float int8; do
  q=(); [ $prec = int8 ] && q=(--profile "$tmp/p.yaml" --precision int8)
  "$QLLC" run "$M" "${q[@]}" --dataset "$S/digits20" --output-dir "$tmp/$prec" >"$tmp/out" ||
    fail "$prec: run --dataset exit $?"
  grep -q "logits f32<20 x 1 x 10>" "$tmp/out" || fail "$prec: stacked shape: $(cat "$tmp/out")"
  npy_data "$tmp/$prec/logits.npy" >"$tmp/stacked.bin"
  [ "$(wc -c <"$tmp/stacked.bin")" -eq 800 ] || fail "$prec: stacked data is not 20 x 40 bytes"
  last=19; [ $prec = float ] && last=4 # every sample at int8; the first 5 in float (each single run compiles)
  for k in $(seq 0 $last); do
    f=$(printf "%s/digits20/s%02d.npy" "$S" "$k")
    "$QLLC" run "$M" "${q[@]}" --input "$f" --output-dir "$tmp/one" >/dev/null || fail "$prec: single run $k"
    npy_data "$tmp/one/logits.npy" >"$tmp/one.bin"
    cmp -s "$tmp/one.bin" <(tail -c +$((k * 40 + 1)) "$tmp/stacked.bin" | head -c 40) ||
      fail "$prec: sample $k of --dataset differs from its single run"
  done
  for z in digits20.npz digits20_stored.npz; do
    "$QLLC" run "$M" "${q[@]}" --dataset "$S/$z" --output-dir "$tmp/$z" >/dev/null || fail "$prec: --dataset $z exit $?"
    cmp -s "$tmp/$prec/logits.npy" "$tmp/$z/logits.npy" || fail "$prec: --dataset $z differs from the directory"
  done
  "$QLLC" run "$M" "${q[@]}" --dataset input="$S/digits20.npz" -o "$tmp/$prec.npz" >/dev/null || fail "$prec: -o npz"
  if command -v unzip >/dev/null; then
    unzip -p "$tmp/$prec.npz" logits.npy >"$tmp/unz.npy" && cmp -s "$tmp/unz.npy" "$tmp/$prec/logits.npy" ||
      fail "$prec: unzip -p of --output's logits.npy differs from the .npy written with --output-dir"
  else
    echo "(unzip not installed: --output .npz checked by qllc's own reader only)"
  fi
  "$QLLC" run "$M" "${q[@]}" --dataset "$tmp/$prec.npz" --output-dir "$tmp/bad" >/dev/null 2>"$tmp/err"
  # its only array, 'logits', is taken for the input and does not fit
  grep -q "$prec.npz: input 'input' is f32<1 x 1 x 8 x 8>: .* got <20 x 1 x 10>" "$tmp/err" ||
    fail "$prec: an .npz of the wrong shape: $(cat "$tmp/err")"
done

# a bare --input FILE.npz: its arrays by name (the stored .npz of the data set's first sample is made by
# qllc itself from the data set, so this checks the reader on the writer's files too)
"$QLLC" run "$M" --dataset "$S/digits20/s00.npy" -o "$tmp/s00out.npz" >/dev/null || fail "run one-sample data set"
"$QLLC" run "$M" --input "$S/digits20/s00.npy" --output-dir "$tmp/s00" >/dev/null || fail "run s00"
"$QLLC" run "$M" --input "$tmp/s00out.npz" >/dev/null 2>"$tmp/err"
grep -q "array 'logits': the model has no input of that name" "$tmp/err" || fail "npz with a wrong array: $(cat "$tmp/err")"

# errors: samples that disagree in shape, an input and a data set at once, a deflated entry that is damaged
mkdir "$tmp/mixed"; cp "$S/digits20/s00.npy" "$S/digits20/s01.npy" "$tmp/mixed/"; cp "$S/dynbatch_x4.npy" "$tmp/mixed/s02.npy"
"$QLLC" run "$M" --dataset "$tmp/mixed" --output-dir "$tmp/mx" >/dev/null 2>"$tmp/err"; rc=$?
[ $rc -eq 1 ] && grep -q "mixed/s02.npy: .*input 'input' is f32<1 x 1 x 8 x 8>, the file is f32<4 x 3 x 8 x 8> (sample 2)" "$tmp/err" ||
  fail "mixed shapes: exit $rc: $(cat "$tmp/err")"
[ ! -e "$tmp/mx/logits.npy" ] || fail "mixed shapes: an output was written"
"$QLLC" run "$M" --dataset "$S/digits20" --input "$S/digits20/s00.npy" >/dev/null 2>"$tmp/err"
[ $? -eq 2 ] && grep -q -- "--input and --dataset" "$tmp/err" || fail "--input with --dataset: $(cat "$tmp/err")"
cp "$S/digits20.npz" "$tmp/damaged.npz"; printf '\x00\x00\x00\x00' | dd of="$tmp/damaged.npz" bs=1 seek=200 conv=notrunc 2>/dev/null
"$QLLC" run "$M" --dataset "$tmp/damaged.npz" >/dev/null 2>"$tmp/err"
[ $? -eq 1 ] && grep -q "damaged.npz: .*malformed .npz" "$tmp/err" || fail "damaged .npz: $(cat "$tmp/err")"

finish run_dataset_test
