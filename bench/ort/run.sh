#!/usr/bin/env bash
# bench/ort/run.sh: qllc next to onnxruntime on the same pre-quantized (QDQ) model, one thread each.
#
#   bench/ort/run.sh                 # build dir: $QLLC_BUILD_DIR or ./build; RUNS (default 50) timed runs
#   RUNS=100 REPEAT=3 bench/ort/run.sh
#
# 1. makes the ResNet-18-shaped float model (bench/make_resnet18.py, random weights, 1x3x224x224) when
#    missing, calibrates it with onnxruntime on its 8 calibration inputs (ort.js calib) and writes the QDQ
#    model in onnxruntime's format (make_qdq.py: uint8 activations, int8 per-channel weights, int32 bias);
# 2. times, back to back and REPEAT times alternately, onnxruntime (ort.js bench: intraOpNumThreads 1,
#    interOpNumThreads 1, graphOptimizationLevel 'all') and qllc's JIT through the public API
#    (bench/bench.c, no quantization options: the model's own parameters); both print median wall and
#    median process-CPU time per inference over RUNS runs after warm-up; then both on the float model;
# 3. checks that the two outputs agree (float logits dequantized from uint8: differences in output LSB).
# Needs node (v18+) and `npm install` in bench/ort (ONNXRUNTIME_NODE_INSTALL=skip: the CPU library is in
# the npm package). Not a test: figures depend on the machine and its load (printed).
set -euo pipefail
SRC=$(cd "$(dirname "$0")/../.." && pwd)
HERE=$SRC/bench/ort
BUILD=${QLLC_BUILD_DIR:-$SRC/build}
OUT=$BUILD/bench
RUNS=${RUNS:-50}
REPEAT=${REPEAT:-2}
PY=${PYTHON:-/usr/bin/python3}
mkdir -p "$OUT"
log() { echo "[bench/ort] $*" >&2; }

if [ ! -d "$HERE/node_modules/onnxruntime-node" ]; then
  log "installing onnxruntime-node"
  (cd "$HERE" && ONNXRUNTIME_NODE_INSTALL=skip npm install --no-audit --no-fund >"$OUT/npm.log" 2>&1)
fi
if [ ! -f "$BUILD/CMakeCache.txt" ]; then cmake -S "$SRC" -B "$BUILD" >"$OUT/cmake.log"; fi
log "building qllc in $BUILD"
make -C "$BUILD" -j2 qllc_core qllc >"$OUT/make.log" 2>&1 || { tail -30 "$OUT/make.log"; exit 1; }
if make -C "$BUILD" -j2 qllc_bench >>"$OUT/make.log" 2>&1 && [ -x "$BUILD/qllc_bench" ]; then
  BENCH=$BUILD/qllc_bench
else # bench/bench.cmake is optional: build bench.c by hand, as bench/run.sh does
  BENCH=$OUT/qllc_bench
  LLVM_LIB=$(llvm-config-19 --libdir 2>/dev/null || echo /usr/lib/llvm-19/lib)
  cc -O2 -std=c11 -I "$SRC/include" -I "$BUILD/include" "$SRC/bench/bench.c" "$BUILD/libqllc_core.a" -L"$LLVM_LIB" \
     -Wl,-rpath,"$LLVM_LIB" -lLLVM -lprotobuf-c -lyaml -lz -lm -o "$BENCH"
fi

R18=$OUT/resnet18.onnx
if [ ! -f "$R18" ] || [ ! -f "$OUT/resnet18_calib.npy" ]; then
  log "exporting ResNet-18 to $R18"
  "$PY" "$SRC/bench/make_resnet18.py" "$R18" "$OUT/resnet18_in.npy" "$OUT/resnet18_out.npy" "$OUT/resnet18_calib.npy" >&2
fi
QDQ=$OUT/resnet18_qdq.onnx
if [ ! -f "$QDQ" ] || [ "$HERE/make_qdq.py" -nt "$QDQ" ]; then
  log "calibrating with onnxruntime and writing $QDQ"
  "$PY" "$HERE/make_qdq.py" instrument "$R18" "$OUT/resnet18_instr.onnx"
  node "$HERE/ort.js" calib "$OUT/resnet18_instr.onnx" "$OUT/resnet18_calib.npy" "$OUT/resnet18_ranges.json" >&2
  "$PY" "$HERE/make_qdq.py" qdq "$R18" "$OUT/resnet18_ranges.json" "$QDQ" >&2
fi

echo "cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(nproc) cores; qllc $(git -C "$SRC" rev-parse --short HEAD)"
echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)"
"$BUILD/qllc" info "$QDQ" | grep '^summary:' | sed 's/^/qllc precision report: /'
for r in $(seq "$REPEAT"); do
  node "$HERE/ort.js" bench "$QDQ" "$OUT/resnet18_in.npy" "$RUNS" "$OUT/ort_logits.npy"
  "$BENCH" "$QDQ" --name resnet18_qdq --runs "$RUNS" --warmup 3 --input "$OUT/resnet18_in.npy"
done
# for scale: both runtimes on the float model the QDQ one was made from
node "$HERE/ort.js" bench "$R18" "$OUT/resnet18_in.npy" "$RUNS" "$OUT/ort_float_logits.npy"
"$BENCH" "$R18" --name resnet18_float --runs "$RUNS" --warmup 3 --input "$OUT/resnet18_in.npy"
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"

# the two outputs: qllc's logits against onnxruntime's, in units of the output's scale
rm -rf "$OUT/qllc_qdq_out"
"$BUILD/qllc" run "$QDQ" --input input="$OUT/resnet18_in.npy" --output-dir "$OUT/qllc_qdq_out" >/dev/null
LSB=$("$BUILD/qllc" info "$QDQ" | sed -n 's/.*DequantizeLinear .*u8 -> f32  x s=\([0-9.e-]*\) z=.*/\1/p' | tail -1)
node "$HERE/ort.js" compare "$OUT/qllc_qdq_out/logits.npy" "$OUT/ort_logits.npy" "$LSB"
