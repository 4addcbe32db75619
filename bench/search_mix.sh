#!/usr/bin/env bash
# bench/search_mix.sh: the precision search's choice by measured time against every layer at int16 and
# against its choice by wide MACs (issue 27), on the test models, at int8 + PLUS dB (default 10).
# Not a test: the times depend on the machine and its load (printed).
#
#   bench/search_mix.sh                   # build dir: $QLLC_BUILD_DIR or ./build
#   PLUS=20 TURNS=5 RUNS=3000 CORE=1 bench/search_mix.sh
#
# Per model: `qllc profile` on its calibration set (the profile keeps the first 32 samples, which
# compare and the search then measure on: no --search-dataset); int8 and int16 SQNR by `qllc compare`;
# target = int8 + PLUS. The MAC choice: `qllc compile --min-sqnr T` (the generic CPU: MAC cost). The time
# choice: `qllc bench --min-sqnr T` (the JIT: measured cost). Then the three programs (time choice, MAC
# choice, --precision int16) and int8 are timed by `qllc bench --runs RUNS`, in turns (TURNS rounds,
# A B C D A B C D ...), pinned with taskset to CORE; each figure is the median of the turns' medians.
# "same": the two choices are the same map.
set -eu
B=${QLLC_BUILD_DIR:-build}
Q=$B/qllc
S=$(cd "$(dirname "$0")/.." && pwd)
PLUS=${PLUS:-10} TURNS=${TURNS:-5} RUNS=${RUNS:-2000} CORE=${CORE:-1}
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
E=$S/tests/quant_e2e/data
MODELS=${MODELS:-"mlp outlier cnn_bn_pool residual depthwise_separable test_cnn mobilenetv3_block digits matmul_add"}
echo "# $(grep -m1 'model name' /proc/cpuinfo | sed 's/.*: //'), $(nproc) cores; uptime: $(uptime | sed 's/.*load/load/')"
echo "# PLUS=$PLUS TURNS=$TURNS RUNS=$RUNS CORE=$CORE"
printf '%-20s %6s %6s %6s %8s %8s | %-20s %-20s %-4s | %9s %9s %9s %9s\n' model int8 int16 target time_db mac_db \
  "time choice" "MAC choice" same "t(time)" "t(MAC)" "t(int16)" "t(int8)"
med() { sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
for name in $MODELS; do
  case $name in
    digits) M=$S/models/digits/digits.onnx C=$S/models/digits/calib_x.npy ;;
    matmul_add) M=$S/tests/cli/data/matmul_add.onnx C=$S/tests/cli/data/matmul_add_calib.npy ;;
    *) M=$E/$name/model.onnx C=$E/$name/calib.npy ;;
  esac
  P=$tmp/$name.yaml
  "$Q" profile "$M" --dataset "$C" -o "$P" >/dev/null 2>&1
  s8=$("$Q" compare "$M" --profile "$P" --precision int8 | sed -n 3p | awk '{print $1}')
  s16=$("$Q" compare "$M" --profile "$P" --precision int16 | sed -n 3p | awk '{print $1}')
  t=$(awk -v b="$s8" -v p="$PLUS" 'BEGIN { printf "%.1f", b + p }')
  "$Q" compile "$M" --profile "$P" --precision int8 --min-sqnr "$t" --precision-map-out "$tmp/mac.map" -o "$tmp/o" \
    >/dev/null 2>"$tmp/mac.err" || { echo "$name: MAC search failed: $(cat "$tmp/mac.err")"; continue; }
  taskset -c "$CORE" "$Q" bench "$M" --profile "$P" --precision int8 --min-sqnr "$t" --precision-map-out "$tmp/time.map" \
    --runs 10 >/dev/null 2>"$tmp/time.err" || { echo "$name: time search failed: $(cat "$tmp/time.err")"; continue; }
  mdb=$(sed -n 's/^outputs: \([0-9.]*\) dB.*/\1/p' "$tmp/mac.err")
  tdb=$(sed -n 's/^outputs: \([0-9.]*\) dB.*/\1/p' "$tmp/time.err")
  desc() { printf '16x8 %d, int16 %d' "$(grep -c '^node .* 16x8$' "$1" || true)" "$(grep -c '^node .* int16$' "$1" || true)"; }
  : >"$tmp/t.time"; : >"$tmp/t.mac"; : >"$tmp/t.16"; : >"$tmp/t.8"
  for turn in $(seq "$TURNS"); do
    for k in time mac 16 8; do
      case $k in
        time) a=(--precision int8 --precision-map "$tmp/time.map") ;;
        mac) a=(--precision int8 --precision-map "$tmp/mac.map") ;;
        16) a=(--precision int16) ;;
        8) a=(--precision int8) ;;
      esac
      taskset -c "$CORE" "$Q" bench "$M" --profile "$P" "${a[@]}" --runs "$RUNS" 2>/dev/null \
        | sed -n 's/.*median \([0-9.]*\) \([num]*s\).*/\1 \2/p' \
        | awk '{ v = $1; if ($2 == "us") v *= 1e3; else if ($2 == "ms") v *= 1e6; print v }' >>"$tmp/t.$k"
    done
  done
  same=no; cmp -s <(grep '^node ' "$tmp/time.map") <(grep '^node ' "$tmp/mac.map") && same=yes
  printf '%-20s %6s %6s %6s %8s %8s | %-20s %-20s %-4s | %9.0f %9.0f %9.0f %9.0f\n' "$name" "$s8" "$s16" "$t" "$tdb" "$mdb" \
    "$(desc "$tmp/time.map")" "$(desc "$tmp/mac.map")" "$same" "$(med <"$tmp/t.time")" "$(med <"$tmp/t.mac")" \
    "$(med <"$tmp/t.16")" "$(med <"$tmp/t.8")"
done
echo "# times: ns per inference, qllc bench's median (JIT, not instrumented), median of $TURNS turns"
