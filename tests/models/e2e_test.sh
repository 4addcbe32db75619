#!/usr/bin/env bash
# End to end on float models exported by torch (tests/models/data/<name>/, made by make_models.py):
# for each model, `qllc run model.onnx --input input_0.npy --output-dir TMP`, then compare the output
# with torch's own output (output_0.npy) using npycmp, a small C program built here with cc (no python
# at test time).
#
# Tolerance: |qllc - torch| <= 1e-4 + 1e-4 * |torch| per element. Both sides compute in float32 but in
# different orders (torch's oneDNN/MKL blocked and vectorised sums vs qllc's kernels, with or without
# FMA), and sigmoid/tanh/exp come from different libm-style approximations. The longest reduction
# here has 150 terms of magnitude ~1 (a 6x5x5 convolution), whose reordering error is ~sqrt(150) *
# 2^-24 * sum|terms| ~ 1e-5 at worst; transcendental functions differ by a few ulp (~1e-7 relative).
# 1e-4 leaves about 10x headroom over that, while a real bug (wrong padding, a missing bias, a transposed
# weight, broadcasting along the wrong axis) moves outputs by 1e-2 or more.
#
# Env: QLLC (the tool), QLLC_SOURCE_DIR, QLLC_BUILD_DIR (ctest sets them). Exit 77 (skip) when the tool
# or a C compiler is missing. Prints one line per model and a final "N passed, N failed" line.
set -u
SRC=${QLLC_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
BUILD=${QLLC_BUILD_DIR:-$SRC/build}
QLLC=${QLLC:-$BUILD/qllc}
ATOL=1e-4
RTOL=1e-4

if [ ! -x "$QLLC" ]; then echo "skip: qllc tool not found at $QLLC"; exit 77; fi
CC=${CC:-cc}
if ! command -v "$CC" >/dev/null 2>&1; then echo "skip: no C compiler ($CC)"; exit 77; fi

WORK=$(mktemp -d "${TMPDIR:-/tmp}/qllc_e2e.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
if ! "$CC" -O2 -std=c11 -o "$WORK/npycmp" "$SRC/tests/models/npycmp.c" -lm; then
  echo "FAIL: cannot build npycmp"; exit 1
fi

# Finds the file qllc wrote for the model's single output: named after the ONNX output value
# ("output.npy"), else output_0.npy, else the only .npy in the folder.
find_output() {
  local dir=$1
  for f in "$dir/output.npy" "$dir/output_0.npy"; do [ -f "$f" ] && { echo "$f"; return; }; done
  local all=("$dir"/*.npy)
  if [ ${#all[@]} -eq 1 ] && [ -f "${all[0]}" ]; then echo "${all[0]}"; fi
}

pass=0 fail=0
for dir in "$SRC"/tests/models/data/*/; do
  name=$(basename "$dir")
  out="$WORK/$name"
  mkdir -p "$out"
  if ! "$QLLC" run "$dir/model.onnx" --input "$dir/input_0.npy" --output-dir "$out" >"$out.log" 2>&1; then
    echo "FAIL $name: qllc run failed: $(head -c 600 "$out.log" | tr '\n' ' ')"
    fail=$((fail + 1)); continue
  fi
  got=$(find_output "$out")
  if [ -z "$got" ]; then
    echo "FAIL $name: no output .npy written in $out ($(ls "$out" | tr '\n' ' '))"
    fail=$((fail + 1)); continue
  fi
  if res=$("$WORK/npycmp" "$got" "$dir/output_0.npy" "$ATOL" "$RTOL" 2>&1); then
    echo "ok   $name: $res"; pass=$((pass + 1))
  else
    echo "FAIL $name: $res"; fail=$((fail + 1))
  fi
done
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
