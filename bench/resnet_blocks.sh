#!/usr/bin/env bash
# bench/resnet_blocks.sh: each residual block of bench/ort's QDQ ResNet-18 timed inside the network and
# alone, to see what running in sequence costs (caches, weights streamed from further away). Issue 10.
# Not a test: the figures depend on the machine and its load.
#
#   bench/resnet_blocks.sh            # build dir: $QLLC_BUILD_DIR or ./build; the model from bench/ort/run.sh
#   TURNS=7 RUN_MS=300 CORE=0 bench/resnet_blocks.sh
#
# bench/resnet_blocks.py cuts the model into prefixes (input .. end of block K), blocks alone and the
# quantize/dequantize pairs at their boundaries; each piece is compiled with `qllc compile --cpu native`
# and timed through its entry function (bench/bundle_bench.c), all pieces in turns (TURNS, default 5,
# each the median of about RUN_MS ms of calls), each figure the best of its turns. Prints per block the
# time inside the network (prefix K+1 minus prefix K), alone (minus its boundary quantize/dequantize)
# and the difference.
set -euo pipefail
SRC=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${QLLC_BUILD_DIR:-$SRC/build}
OUT=$BUILD/bench/blocks
TURNS=${TURNS:-5}
RUN_MS=${RUN_MS:-200}
CORE=${CORE:-0}
PY=${PYTHON:-/usr/bin/python3}
QDQ=$BUILD/bench/resnet18_qdq.onnx
[ -f "$QDQ" ] || { echo "no $QDQ: run bench/ort/run.sh first (it makes the model)" >&2; exit 1; }
[ -x "$BUILD/qllc" ] || { echo "no $BUILD/qllc: build qllc first" >&2; exit 1; }
mkdir -p "$OUT"
"$PY" "$SRC/bench/resnet_blocks.py" "$QDQ" "$OUT"
PIECES="$(for k in 0 1 2 3 4 5 6 7 8; do echo p$k; done) $(for k in 0 1 2 3 4 5 6 7; do echo b$k; done) $(for k in 0 1 2 3 4 5 6 7 8; do echo q$k; done)"
for n in $PIECES; do
  "$BUILD/qllc" compile "$OUT/$n.onnx" --cpu native -o "$OUT/$n" --name "$n" >"$OUT/$n.log" 2>&1 || { cat "$OUT/$n.log"; exit 1; }
  cc -O2 -std=c11 -DBUNDLE="$n" -I "$OUT/$n" "$SRC/bench/bundle_bench.c" "$OUT/$n/$n.o" -lm -o "$OUT/$n/bench"
done
echo "cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(nproc) cores; qllc $(git -C "$SRC" rev-parse --short HEAD); core $CORE"
echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)"
: >"$OUT/times.txt"
for t in $(seq "$TURNS"); do
  for n in $PIECES; do
    echo "$n $(taskset -c "$CORE" "$OUT/$n/bench" --ms "$RUN_MS" | sed -n 's/.*median_ns=\([0-9]*\).*/\1/p')" >>"$OUT/times.txt"
  done
done
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
"$PY" - "$OUT/times.txt" <<'PY'
import collections, sys
runs = collections.defaultdict(list)
for line in open(sys.argv[1]):
    k, v = line.split()
    runs[k].append(int(v) / 1e3)
m = {k: min(v) for k, v in runs.items()}
print(f"{'block':>5} {'in network':>11} {'alone':>9} {'difference':>16}   (us, best of {len(runs['p0'])} medians)")
tn = ta = 0
for k in range(8):
    net = m[f'p{k + 1}'] - m[f'p{k}']
    alone = m[f'b{k}'] - (m[f'q{k}'] + m[f'q{k + 1}']) / 2
    tn, ta = tn + net, ta + alone
    print(f"{k:>5} {net:11.1f} {alone:9.1f} {net - alone:+9.1f} ({100 * (net - alone) / alone:+3.0f} %)")
print(f"{'all':>5} {tn:11.1f} {ta:9.1f} {tn - ta:+9.1f} ({100 * (tn - ta) / ta:+3.0f} %)")
print(f"before the blocks (input quantize, stem, max pool): {m['p0']:.1f} us; the network up to the end of block 7: {m['p8']:.1f} us")
PY
