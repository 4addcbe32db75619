#!/bin/bash
# bench/unary_bench.sh: float ns per element of the transcendental unary ops (GELU in both forms, Erf,
# Sigmoid, Tanh, Exp, Softmax), each a one-node model over N floats (bench/unary_models.py), compiled
# by `qllc compile --cpu native` and timed by bench/bundle_bench.c (median of one call, one thread).
#
#   bench/unary_bench.sh [QLLC ...]     # default: $QLLC_BUILD_DIR/qllc or ./build/qllc
#   N=65536 RUN_MS=300 OPS="gelu erf" bench/unary_bench.sh build/qllc /other/build/qllc
#
# Prints one line per qllc binary and op: qllc=PATH op=OP n=N median_ns=.. ns_per_elem=..
set -euo pipefail
SRC=$(cd "$(dirname "$0")/.." && pwd)
N=${N:-65536}
RUN_MS=${RUN_MS:-300}
OPS=${OPS:-gelu gelu_tanh erf sigmoid tanh exp softmax}
OUT=${OUT:-${QLLC_BUILD_DIR:-$SRC/build}/bench/unary}
[ $# -gt 0 ] || set -- "${QLLC_BUILD_DIR:-$SRC/build}/qllc"
mkdir -p "$OUT"
/usr/bin/python3 "$SRC/bench/unary_models.py" "$OUT" "$N"
echo "cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(grep -c '^processor' /proc/cpuinfo) cores; n=$N"
k=0
for q in "$@"; do
  k=$((k + 1))
  for op in $OPS; do
    d="$OUT/q$k/$op"
    rm -rf "$d" && mkdir -p "$OUT/q$k"
    "$q" compile "$OUT/$op.onnx" --cpu native -o "$d" --name "u_$op" >"$OUT/q$k.$op.log" 2>&1 ||
      { cat "$OUT/q$k.$op.log" >&2; exit 1; }
    cc -O2 -std=c11 -DBUNDLE="u_$op" -I "$d" "$SRC/bench/bundle_bench.c" "$d/u_$op.o" -lm -o "$d/bench"
    line=$("$d/bench" --ms "$RUN_MS")
    med=$(sed -n 's/.*median_ns=\([0-9.]*\).*/\1/p' <<<"$line")
    echo "qllc=$q op=$op n=$N median_ns=$med ns_per_elem=$(awk -v m="$med" -v n="$N" 'BEGIN{printf "%.3f", m / n}')"
  done
done
