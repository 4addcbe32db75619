#!/usr/bin/env bash
# bench/run.sh: builds what the benchmark needs, makes the ResNet-18-shaped model when missing, and
# prints compile time and time per inference (single-threaded, batch 1) for the sample digits model and
# ResNet-18, next to torch float on the same models and weights.
#
#   bench/run.sh                      # build dir: $QLLC_BUILD_DIR or ./build
#   RUNS=50 DIGITS_RUNS=2000 bench/run.sh
#
# Not a test: numbers depend on the machine and on what else runs on it. Record them in
# docs/benchmarks.md together with the CPU line this prints.
set -euo pipefail
SRC=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${QLLC_BUILD_DIR:-$SRC/build}
OUT=$BUILD/bench
RUNS=${RUNS:-20}                 # timed ResNet-18 runs (after 3 warm-up runs)
DIGITS_RUNS=${DIGITS_RUNS:-1000} # timed digits runs (after 50 warm-up runs)
PY=${PYTHON:-/usr/bin/python3}
mkdir -p "$OUT"

log() { echo "[bench] $*" >&2; }

# ---- build ----------------------------------------------------------------------------------------
if [ ! -f "$BUILD/CMakeCache.txt" ]; then cmake -S "$SRC" -B "$BUILD" >"$OUT/cmake.log"; fi
log "building qllc in $BUILD"
make -C "$BUILD" -j2 qllc_core qllc >"$OUT/make.log" 2>&1 || { tail -30 "$OUT/make.log"; exit 1; }
make -C "$BUILD" -j2 digits_demo >>"$OUT/make.log" 2>&1 || log "digits_demo target not available"
if make -C "$BUILD" -j2 qllc_bench >>"$OUT/make.log" 2>&1 && [ -x "$BUILD/qllc_bench" ]; then
  BENCH=$BUILD/qllc_bench
else
  BENCH=$OUT/qllc_bench
  LLVM_LIB=$(llvm-config-19 --libdir 2>/dev/null || echo /usr/lib/llvm-19/lib)
  cc -O2 -std=c11 -I "$SRC/include" "$SRC/bench/bench.c" "$BUILD/libqllc_core.a" -L"$LLVM_LIB" \
     -Wl,-rpath,"$LLVM_LIB" -lLLVM -lprotobuf-c -lyaml -lm -o "$BENCH"
fi
cc -O2 -std=c11 -o "$OUT/npycmp" "$SRC/tests/models/npycmp.c" -lm

# ---- models ---------------------------------------------------------------------------------------
DIGITS=$SRC/models/digits/digits.onnx
R18=$OUT/resnet18.onnx
HAVE_TORCH=1
"$PY" -c 'import torch, onnx' 2>/dev/null || HAVE_TORCH=0
if [ ! -f "$R18" ] || [ ! -f "$OUT/resnet18_out.npy" ]; then
  if [ $HAVE_TORCH = 1 ]; then
    log "exporting ResNet-18 to $R18"
    "$PY" "$SRC/bench/make_resnet18.py" "$R18" "$OUT/resnet18_in.npy" "$OUT/resnet18_out.npy" 2>"$OUT/export.log" >&2
  else
    log "no torch: ResNet-18 skipped"
  fi
fi

# ---- runs -----------------------------------------------------------------------------------------
RESULTS=$OUT/results.txt
: >"$RESULTS"
check_r18="-"
if [ -f "$R18" ]; then
  # Correctness of what is timed: the JIT's output against torch's on the fixed input. 1e-3 rather
  # than the 1e-4 of tests/models: 20 convolutions with up to 4608-term sums accumulate more float
  # reordering error than the small test models.
  if "$BUILD/qllc" run "$R18" --input "$OUT/resnet18_in.npy" --output-dir "$OUT/r18_run" >"$OUT/r18_run.log" 2>&1; then
    got=$(ls "$OUT"/r18_run/*.npy 2>/dev/null | head -1)
    if [ -n "$got" ] && "$OUT/npycmp" "$got" "$OUT/resnet18_out.npy" 1e-3 1e-3 >"$OUT/r18_cmp.txt"; then
      check_r18="ok"
    else
      check_r18="WRONG"
    fi
    log "ResNet-18 vs torch: $(cat "$OUT/r18_cmp.txt" 2>/dev/null || echo no output)"
  else
    check_r18="run failed"
    log "qllc run ResNet-18 failed: $(head -c 400 "$OUT/r18_run.log")"
  fi
fi

acc_line="-"
if [ -x "$BUILD/examples/digits_demo" ]; then
  acc_line=$("$BUILD/examples/digits_demo" --quiet 2>&1 | tail -1) || true
  log "digits_demo: $acc_line"
fi

log "timing qllc (JIT, float)"
"$BENCH" "$DIGITS" --name digits --runs "$DIGITS_RUNS" --warmup 50 >>"$RESULTS" || log "digits failed"
[ -f "$R18" ] && { "$BENCH" "$R18" --name resnet18 --runs "$RUNS" --warmup 3 >>"$RESULTS" || log "resnet18 failed"; }
if [ $HAVE_TORCH = 1 ]; then
  log "timing torch (float, 1 thread)"
  models="digits"; [ -f "$R18" ] && models="digits resnet18"
  "$PY" "$SRC/bench/torch_time.py" --runs "$RUNS" --warmup 3 $models >>"$RESULTS" 2>"$OUT/torch.log" || log "torch failed"
  # more runs for the tiny model, as for qllc
  "$PY" "$SRC/bench/torch_time.py" --runs "$DIGITS_RUNS" --warmup 50 digits \
    2>>"$OUT/torch.log" >"$OUT/torch_digits.txt" || true
  if [ -s "$OUT/torch_digits.txt" ]; then
    grep -v '^torch model=digits ' "$RESULTS" >"$RESULTS.tmp" || true
    cat "$OUT/torch_digits.txt" >>"$RESULTS.tmp"
    mv "$RESULTS.tmp" "$RESULTS"
  fi
fi

# ---- table ----------------------------------------------------------------------------------------
field() { sed -n "s/.*[ ]$1=\([^ ]*\).*/\1/p" <<<"$2"; }
echo
echo "CPU: $(lscpu 2>/dev/null | sed -n 's/^Model name: *//p' | head -1), $(nproc) cores; single-threaded, batch 1"
echo "digits accuracy (qllc JIT, 360 test images): $acc_line"
echo "ResNet-18 output vs torch (1e-3 abs + 1e-3 rel): $check_r18"
echo
printf '| %-9s | %-11s | %12s | %16s | %12s | %12s | %15s | %5s |\n' model engine "compile (ms)" \
  "compile cpu (ms)" "median (ms)" "min (ms)" "cpu median (ms)" runs
printf '|%s|%s|%s|%s|%s|%s|%s|%s|\n' ----------- ------------- -------------- ------------------ -------------- \
  -------------- ----------------- -------
for m in digits resnet18; do
  for engine in qllc torch; do
    line=$(grep "^$engine model=$m " "$RESULTS" || true)
    [ -z "$line" ] && continue
    compile=$(field compile_ms "$line"); [ -z "$compile" ] && compile="-"
    ccpu=$(field compile_cpu_ms "$line"); [ -z "$ccpu" ] && ccpu="-"
    printf '| %-9s | %-11s | %12s | %16s | %12s | %12s | %15s | %5s |\n' "$m" "$engine float" "$compile" "$ccpu" \
      "$(field median_ms "$line")" "$(field min_ms "$line")" "$(field cpu_median_ms "$line")" "$(field runs "$line")"
  done
done
echo
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg) (wall times are only meaningful on an idle machine;"
echo "cpu median is the process CPU time, much less disturbed by other load)"
