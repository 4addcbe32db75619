#!/bin/bash
# bench/dw_pool.sh: the float depthwise conv and pooling layers of bench/dw_pool.py, in turns: qllc built
# from two trees (A: e.g. main, B: this branch; `qllc bench`, the median and minimum per inference of the
# one-layer model) and torch eager (one thread; its Conv is oneDNN's, aten::mkldnn_convolution), pinned to
# one core. docs/benchmarks.md, "Float depthwise conv and pooling".
#
#   bench/dw_pool.sh QLLC_A QLLC_B [TURNS] [LAYER ...]      (default 3 turns, every layer)
#
# Prints one line per layer and turn: turn T LAYER A: median min  B: median min  torch: median min (us)
set -eu
A=$1 B=$2
TURNS=${3:-3}
shift $(($# < 3 ? $# : 3))
HERE=$(cd "$(dirname "$0")" && pwd)
OUT=${OUT:-/tmp/qllc_dw_pool}
CORE=${CORE:-1}
/usr/bin/python3 "$HERE/dw_pool.py" "$OUT"
LAYERS=${*:-dw112 dw112s2 dw14 dw14s2 dw5 maxpool relu112 gap relu7 gap56 relu56}
us() { # qllc bench's first line -> "median min" in us
  sed -n 1p | sed -E 's/.*median ([0-9.]+) (m?s|us), min ([0-9.]+) (m?s|us).*/\1 \2 \3 \4/' |
    awk '{m = $1 * ($2 == "ms" ? 1000 : 1); n = $3 * ($4 == "ms" ? 1000 : 1); printf "%.1f %.1f", m, n}'
}
export OMP_NUM_THREADS=1
for t in $(seq "$TURNS"); do
  for s in $LAYERS; do
    a=$(taskset -c "$CORE" "$A" bench "$OUT/$s.onnx" --runs 200 2>&1 | us)
    b=$(taskset -c "$CORE" "$B" bench "$OUT/$s.onnx" --runs 200 2>&1 | us)
    c=$(taskset -c "$CORE" /usr/bin/python3 "$HERE/dw_pool.py" --torch "$s" --runs 200 |
      sed -E 's/.*median_us=([0-9.]+) min_us=([0-9.]+).*/\1 \2/')
    echo "turn $t $s A: $a  B: $b  torch: $c"
  done
done
