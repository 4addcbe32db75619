#!/bin/bash
# bench/transformer_bench.sh: the float transformer block of the new-op test models
# (tests/models/data/transformer_block17: nn.TransformerEncoderLayer, d_model 32, 4 heads, FFN 64,
# GELU, input 1x8x32) compiled by `qllc compile --cpu native` and timed by bench/bundle_bench.c, then
# the same layer in torch eager (bench/torch_time.py transformer17, one thread).
#
#   bench/transformer_bench.sh [QLLC ...]     # default: $QLLC_BUILD_DIR/qllc or ./build/qllc
#   RUN_MS=500 RUNS=500 bench/transformer_bench.sh build/qllc /other/build/qllc
set -euo pipefail
SRC=$(cd "$(dirname "$0")/.." && pwd)
RUN_MS=${RUN_MS:-500}
RUNS=${RUNS:-500}
OUT=${OUT:-${QLLC_BUILD_DIR:-$SRC/build}/bench/transformer}
[ $# -gt 0 ] || set -- "${QLLC_BUILD_DIR:-$SRC/build}/qllc"
mkdir -p "$OUT"
echo "cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(grep -c '^processor' /proc/cpuinfo) cores"
k=0
for q in "$@"; do
  k=$((k + 1))
  d="$OUT/q$k"
  rm -rf "$d"
  "$q" compile "$SRC/tests/models/data/transformer_block17/model.onnx" --cpu native -o "$d" --name tblock \
    >"$OUT/q$k.log" 2>&1 || { cat "$OUT/q$k.log" >&2; exit 1; }
  cc -O2 -std=c11 -DBUNDLE=tblock -I "$d" "$SRC/bench/bundle_bench.c" "$d/tblock.o" -lm -o "$d/bench"
  echo "qllc=$q $("$d/bench" --ms "$RUN_MS")"
done
/usr/bin/python3 "$SRC/bench/torch_time.py" --runs "$RUNS" transformer17
