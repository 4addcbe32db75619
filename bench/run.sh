#!/usr/bin/env bash
# bench/run.sh: builds what the benchmark needs, makes the ResNet-18-shaped model when missing, and
# prints compile time and time per inference (single-threaded, batch 1) for the sample digits model and
# ResNet-18, next to torch float on the same models and weights.
#
#   bench/run.sh                      # build dir: $QLLC_BUILD_DIR or ./build
#   RUNS=50 DIGITS_RUNS=2000 bench/run.sh
#   PRECISIONS="float int8 int16 16x8" bench/run.sh  # quantized rows (16x8: int16 activations, int8 weights):
#                                                # profiles each model with `qllc profile`
#                                                # on its calibration set first (skipped if that fails)
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
PRECISIONS=${PRECISIONS:-float int8}
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
  cc -O2 -std=c11 -I "$SRC/include" -I "$BUILD/include" "$SRC/bench/bench.c" "$BUILD/libqllc_core.a" -L"$LLVM_LIB" \
     -Wl,-rpath,"$LLVM_LIB" -lLLVM -lprotobuf-c -lyaml -lz -lm -o "$BENCH"
fi
cc -O2 -std=c11 -o "$OUT/npycmp" "$SRC/tests/models/npycmp.c" -lm

# ---- models ---------------------------------------------------------------------------------------
DIGITS=$SRC/models/digits/digits.onnx
R18=$OUT/resnet18.onnx
HAVE_TORCH=1
"$PY" -c 'import torch, onnx' 2>/dev/null || HAVE_TORCH=0
if [ ! -f "$R18" ] || [ ! -f "$OUT/resnet18_out.npy" ] || [ ! -f "$OUT/resnet18_calib.npy" ]; then
  if [ $HAVE_TORCH = 1 ]; then
    log "exporting ResNet-18 to $R18"
    "$PY" "$SRC/bench/make_resnet18.py" "$R18" "$OUT/resnet18_in.npy" "$OUT/resnet18_out.npy" "$OUT/resnet18_calib.npy" \
      2>"$OUT/export.log" >&2
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

# Quantized runs need a profile: `qllc profile MODEL --dataset CALIB.npy -o PROFILE` (issue 3).
# Prints the profile's path, or nothing when profiling is not available or fails.
profile_for() {
  local name=$1 model=$2 calib=$3 prof=$OUT/$1.profile.yaml
  if [ ! -f "$prof" ] || [ "$model" -nt "$prof" ]; then
    "$BUILD/qllc" profile "$model" --dataset "$calib" -o "$prof" >"$OUT/$name.profile.log" 2>&1 </dev/null ||
      { rm -f "$prof"; log "$name: no profile ($(head -c 300 "$OUT/$name.profile.log" | tr '\n' ' '))"; return 0; }
  fi
  echo "$prof"
}

ACC=$OUT/accuracy.txt
: >"$ACC"
for prec in $PRECISIONS; do
  popts=()
  if [ "$prec" != float ]; then
    prof=$(profile_for digits "$DIGITS" "$SRC/models/digits/calib_x.npy")
    [ -z "$prof" ] && { log "skipping $prec"; continue; }
    popts=(--precision "$prec" --profile "$prof")
  fi
  if [ "$prec" = 16x8 ]; then
    log "digits_demo has no --weight-precision: no 16x8 accuracy line"
  elif [ -x "$BUILD/examples/digits_demo" ]; then
    acc=$("$BUILD/examples/digits_demo" --quiet "${popts[@]}" 2>&1 | tail -1) || true
    echo "$prec: $acc" >>"$ACC"
    log "digits_demo $prec: $acc"
  fi
  log "timing qllc $prec"
  "$BENCH" "$DIGITS" --name digits --runs "$DIGITS_RUNS" --warmup 50 "${popts[@]}" >>"$RESULTS" ||
    log "digits $prec failed"
  if [ -f "$R18" ]; then
    ropts=()
    if [ "$prec" != float ]; then
      prof=$(profile_for resnet18 "$R18" "$OUT/resnet18_calib.npy")
      [ -z "$prof" ] && continue
      ropts=(--precision "$prec" --profile "$prof")
    fi
    rqopts=("${ropts[@]}")
    [ "$prec" = 16x8 ] && rqopts=(--precision int16 --weight-precision int8 --profile "$prof")
    if [ "$prec" != float ]; then # how far the quantized output is from torch's float output
      if "$BUILD/qllc" run "$R18" --input "$OUT/resnet18_in.npy" --output-dir "$OUT/r18_$prec" "${rqopts[@]}" \
         >"$OUT/r18_$prec.log" 2>&1; then
        got=$(ls "$OUT/r18_$prec"/*.npy 2>/dev/null | head -1)
        [ -n "$got" ] && echo "resnet18 $prec vs torch float: $("$OUT/npycmp" "$got" "$OUT/resnet18_out.npy" 1e9 0)" >>"$ACC"
      fi
    fi
    "$BENCH" "$R18" --name resnet18 --runs "$RUNS" --warmup 3 "${ropts[@]}" >>"$RESULTS" || log "resnet18 $prec failed"
  fi
done
if [ $HAVE_TORCH = 1 ]; then
  log "timing torch (float, 1 thread)"
  "$PY" "$SRC/bench/torch_time.py" --runs "$DIGITS_RUNS" --warmup 50 digits >>"$RESULTS" 2>"$OUT/torch.log" ||
    log "torch failed"
  if [ -f "$R18" ]; then
    "$PY" "$SRC/bench/torch_time.py" --runs "$RUNS" --warmup 3 resnet18 >>"$RESULTS" 2>>"$OUT/torch.log" ||
      log "torch failed"
  fi
fi

# ---- table ----------------------------------------------------------------------------------------
field() { sed -n "s/.*[ ]$1=\([^ ]*\).*/\1/p" <<<"$2"; }
echo
echo "source: $(git -C "$SRC" rev-parse --short HEAD 2>/dev/null || echo unknown)$(git -C "$SRC" diff --quiet HEAD 2>/dev/null || echo ' + uncommitted changes') at build time"
echo "CPU: $(lscpu 2>/dev/null | sed -n 's/^Model name: *//p' | head -1), $(nproc) cores; single-threaded, batch 1"
echo "digits accuracy (qllc JIT, 360 test images), quantized ResNet-18 output against torch float:"
sed 's/^/  /' "$ACC"
echo "ResNet-18 output vs torch (1e-3 abs + 1e-3 rel): $check_r18"
echo
printf '| %-9s | %-11s | %12s | %16s | %12s | %12s | %15s | %5s |\n' model engine "compile (ms)" \
  "compile cpu (ms)" "median (ms)" "min (ms)" "cpu median (ms)" runs
printf '|%s|%s|%s|%s|%s|%s|%s|%s|\n' ----------- ------------- -------------- ------------------ -------------- \
  -------------- ----------------- -------
for m in digits resnet18; do
  grep -E "^(qllc|torch) model=$m " "$RESULTS" | while read -r line; do
    engine=${line%% *}
    prec=$(field precision "$line"); [ -z "$prec" ] && prec=float
    compile=$(field compile_ms "$line"); [ -z "$compile" ] && compile="-"
    ccpu=$(field compile_cpu_ms "$line"); [ -z "$ccpu" ] && ccpu="-"
    printf '| %-9s | %-11s | %12s | %16s | %12s | %12s | %15s | %5s |\n' "$m" "$engine $prec" "$compile" "$ccpu" \
      "$(field median_ms "$line")" "$(field min_ms "$line")" "$(field cpu_median_ms "$line")" "$(field runs "$line")"
  done
done
echo
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg) (wall times are only meaningful on an idle machine;"
echo "cpu median is the process CPU time, much less disturbed by other load)"
