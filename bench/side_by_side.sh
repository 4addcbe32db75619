#!/usr/bin/env bash
# bench/side_by_side.sh: qllc next to oneDNN (single layers) and onnxruntime (a QDQ CNN), one thread,
# pinned to one core. Issue 10. Not a test: the figures depend on the machine and its load (printed).
#
#   bench/side_by_side.sh                     # build dir: $QLLC_BUILD_DIR or ./build
#   TURNS=7 RUN_MS=300 bench/side_by_side.sh  # more and longer turns
#   ORT=0 bench/side_by_side.sh               # the layers only (no onnxruntime part)
#
# Environment: TURNS (5) alternating turns per layer; RUN_MS (200) timed calls per turn, about this many
# milliseconds of them (at least 20 calls), each call timed alone, after WARMUP_MS (50) of warm-up calls;
# CORE (0) the core everything runs on; SHAPES ("fc1 fc64 conv conv28"); ORT (1) run bench/ort/run.sh
# too, with ORT_RUNS (30) runs and ORT_REPEAT (2) alternations.
#
# 1. Installs what is missing: libdnnl-dev (oneDNN's C API, Debian's 2.x build with OpenMP), numpy and
#    onnx for the model script, torch for bench/ort's ResNet-18 (all Debian packages); bench/ort/run.sh
#    installs the onnxruntime npm package itself. Builds qllc (make qllc_core qllc).
# 2. Single layers, the same four shapes for every contender: fc1 = FC 1x1024 -> 1024, fc64 = FC
#    64x1024 -> 1024, conv = Conv 3x3 pad 1 stride 1, 64 -> 64 channels at 56x56, conv28 = the same, 128 -> 128
#    at 28x28; N = 1, with bias.
#    - oneDNN (bench/onednn.c): int8 u8 x s8 -> s8, s32 bias, per-output-channel output scales, weights
#      reordered to oneDNN's layout once (format any), primitive created once; run with
#      ONEDNN_MAX_CPU_ISA=AVX512_CORE_VNNI and with the default ISA; and f32. Its activations are in the
#      layouts it chose, reordered outside the timed call; one more contender (VNNI, --plain-io) also
#      times the reorders from and to the plain layout (NCHW / NC) the qllc bundles take and give.
#    - qllc: bench/sbs_models.py's ONNX model of each shape, profiled on its random calibration inputs,
#      compiled by `qllc compile --cpu native` at int8 (--quantized-io), int16 (--quantized-io),
#      16x8 (--precision int16 --weight-precision int8 --quantized-io) and float, and timed through the
#      bundle's entry function alone (bench/bundle_bench.c).
#    Every contender runs as its own process, in turns (A B C ... A B C ...), each turn giving the median
#    of its calls; the figure is the best of the TURNS medians.
#    On a CPU with AMX-INT8 (issue 12), oneDNN's default ISA is its AMX path and qllc's int8 bundle runs
#    the __amx kernels; one more contender, qllc int8 compiled with --features -amx-tile,-amx-int8
#    (its AVX512-VNNI variants), and the ratio table's AMX rows show both against oneDNN's AMX path.
#    bench/bundle_bench.c asks Linux for the tile data (arch_prctl) as a bundle's host must.
# 3. bench/ort/run.sh under the same pinning: qllc JIT and onnxruntime on the QDQ ResNet-18.
set -euo pipefail
SRC=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${QLLC_BUILD_DIR:-$SRC/build}
OUT=$BUILD/bench/sbs
TURNS=${TURNS:-5}
RUN_MS=${RUN_MS:-200}
WARMUP_MS=${WARMUP_MS:-50}
CORE=${CORE:-0}
SHAPES=${SHAPES:-fc1 fc64 conv conv28}
ORT=${ORT:-1}
ORT_RUNS=${ORT_RUNS:-30}
ORT_REPEAT=${ORT_REPEAT:-2}
PY=${PYTHON:-/usr/bin/python3}
mkdir -p "$OUT"
log() { echo "[sbs] $*" >&2; }
PIN=(taskset -c "$CORE")
export OMP_NUM_THREADS=1 # oneDNN's threads (the Debian build uses OpenMP)
unset ONEDNN_MAX_CPU_ISA DNNL_MAX_CPU_ISA

# ---- what is missing --------------------------------------------------------------------------------
apt_install() { # Debian packages, with one `apt-get update` first if the plain install fails
  log "installing $*"
  DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "$@" >"$OUT/apt.log" 2>&1 ||
    { apt-get update >>"$OUT/apt.log" 2>&1 &&
      DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "$@" >>"$OUT/apt.log" 2>&1; } ||
    { tail -5 "$OUT/apt.log" >&2; exit 1; }
}
[ -f /usr/include/oneapi/dnnl/dnnl.h ] || [ -f /usr/include/dnnl.h ] || apt_install libdnnl-dev
"$PY" -c 'import numpy, onnx' 2>/dev/null || apt_install python3-numpy python3-onnx
if [ "$ORT" = 1 ]; then "$PY" -c 'import torch' 2>/dev/null || apt_install python3-torch; fi

if [ ! -f "$BUILD/CMakeCache.txt" ]; then cmake -S "$SRC" -B "$BUILD" >"$OUT/cmake.log"; fi
log "building qllc in $BUILD"
make -C "$BUILD" -j2 qllc_core qllc >"$OUT/make.log" 2>&1 || { tail -30 "$OUT/make.log"; exit 1; }
QLLC=$BUILD/qllc
cc -O2 -std=c11 -Wall "$SRC/bench/onednn.c" -ldnnl -lm -o "$OUT/onednn"

# ---- models, profiles, bundles --------------------------------------------------------------------
if [ ! -f "$OUT/conv.onnx" ] || [ "$SRC/bench/sbs_models.py" -nt "$OUT/conv.onnx" ]; then
  "$PY" "$SRC/bench/sbs_models.py" "$OUT" >&2
fi
PRECS="int8 int16 16x8 float"
AMX=0
grep -qw amx_int8 /proc/cpuinfo && grep -qw amx_tile /proc/cpuinfo && AMX=1 && PRECS="$PRECS int8noamx"
for s in $SHAPES; do
  "$QLLC" profile "$OUT/$s.onnx" --dataset "$OUT/${s}_calib.npy" -o "$OUT/$s.prof.yaml" >"$OUT/$s.profile.log" 2>&1 \
    </dev/null || { cat "$OUT/$s.profile.log" >&2; exit 1; }
  for p in $PRECS; do
    n=${s}_$p
    case $p in
      float) opts=() ;;
      16x8) opts=(--profile "$OUT/$s.prof.yaml" --precision int16 --weight-precision int8 --quantized-io) ;;
      int8noamx) opts=(--profile "$OUT/$s.prof.yaml" --precision int8 --quantized-io --features=-amx-tile,-amx-int8) ;;
      *) opts=(--profile "$OUT/$s.prof.yaml" --precision "$p" --quantized-io) ;;
    esac
    rm -rf "${OUT:?}/$n"
    "$QLLC" compile "$OUT/$s.onnx" "${opts[@]}" --cpu native -o "$OUT/$n" --name "$n" >"$OUT/$n.compile.log" 2>&1 ||
      { cat "$OUT/$n.compile.log" >&2; exit 1; }
    cc -O2 -std=c11 -Wall -DBUNDLE="$n" -I "$OUT/$n" "$SRC/bench/bundle_bench.c" "$OUT/$n/$n.o" -lm -o "$OUT/$n/bench"
  done
done

# ---- header ---------------------------------------------------------------------------------------
flags=$(grep -m1 '^flags' /proc/cpuinfo)
has() { grep -qw "$1" <<<"$flags" && echo yes || echo no; }
echo "cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), family $(grep -m1 'cpu family' /proc/cpuinfo | cut -d: -f2 | tr -d ' '), $(grep -c '^processor' /proc/cpuinfo) cores"
echo "isa: avx512f $(has avx512f), avx512_vnni $(has avx512_vnni), avx_vnni $(has avx_vnni), avx512_bf16 $(has avx512_bf16), amx_int8 $(has amx_int8), amx_tile $(has amx_tile)"
echo "qllc: $(git -C "$SRC" log -1 --format=%h)$(git -C "$SRC" diff --quiet HEAD 2>/dev/null || echo ' + uncommitted changes'); $("$OUT/onednn" version)"
echo "single thread (OMP_NUM_THREADS=1), pinned to core $CORE; TURNS=$TURNS RUN_MS=$RUN_MS WARMUP_MS=$WARMUP_MS"
echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)"
"${PIN[@]}" "$OUT/onednn" peak | tee "$OUT/peak.txt" # again after the layers: the clock moves

# ---- the layers, in turns -------------------------------------------------------------------------
RES=$OUT/results.txt
: >"$RES"
CONTENDERS="onednn_vnni onednn_vnni_plain onednn_default onednn_f32 qllc_int8 qllc_int16 qllc_16x8 qllc_float"
[ "$AMX" = 1 ] && CONTENDERS="$CONTENDERS qllc_int8noamx"
macs_of() { case $1 in fc1) echo 1048576 ;; fc64) echo 67108864 ;; conv|conv28) echo 115605504 ;; esac; }
T=(--ms "$RUN_MS" --warmup-ms "$WARMUP_MS")
for s in $SHAPES; do
  log "timing $s: $TURNS turns of $CONTENDERS"
  for t in $(seq "$TURNS"); do
    for c in $CONTENDERS; do
      case $c in
        onednn_vnni) line=$(ONEDNN_MAX_CPU_ISA=AVX512_CORE_VNNI "${PIN[@]}" "$OUT/onednn" int8 "$s" "${T[@]}") ;;
        onednn_vnni_plain)
          line=$(ONEDNN_MAX_CPU_ISA=AVX512_CORE_VNNI "${PIN[@]}" "$OUT/onednn" int8 "$s" "${T[@]}" --plain-io) ;;
        onednn_default) line=$("${PIN[@]}" "$OUT/onednn" int8 "$s" "${T[@]}") ;;
        onednn_f32) line=$("${PIN[@]}" "$OUT/onednn" f32 "$s" "${T[@]}") ;;
        qllc_*) n=${s}_${c#qllc_}
          line=$("${PIN[@]}" "$OUT/$n/bench" "${T[@]}" --macs "$(macs_of "$s")" --save "$OUT/$n/out.f32") ;;
      esac
      echo "turn=$t shape=$s who=$c $line" >>"$RES"
    done
  done
done
echo "load after the layers: $(cut -d' ' -f1-3 /proc/loadavg)"
"${PIN[@]}" "$OUT/onednn" peak | tee -a "$OUT/peak.txt"

# ---- the table ------------------------------------------------------------------------------------
"$PY" - "$RES" "$OUT" "$OUT/peak.txt" "$SHAPES" <<'EOF'
import re, sys, os
import numpy as np
res, out, peakf, shapes = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4].split()
kv = lambda line: dict(re.findall(r'(\w+)=(\S+)', line))
peaks = [float(kv(l)['vpdpbusd_gops']) for l in open(peakf) if 'vpdpbusd_gops=' in l]
peak = max(peaks) if peaks else None  # the higher of the two measurements
runs = {}
for line in open(res):
    d = kv(line)
    runs.setdefault((d['shape'], d['who']), []).append(d)
macs = {'fc1': 1048576, 'fc64': 67108864, 'conv': 115605504, 'conv28': 115605504}
label = {'onednn_vnni': 'oneDNN int8, max ISA avx512_core_vnni',
         'onednn_vnni_plain': 'oneDNN int8, avx512_core_vnni, activation reorders from/to plain layout timed',
         'onednn_default': 'oneDNN int8, default ISA',
         'onednn_f32': 'oneDNN f32', 'qllc_int8': 'qllc int8', 'qllc_int16': 'qllc int16',
         'qllc_16x8': 'qllc 16x8', 'qllc_float': 'qllc float',
         'qllc_int8noamx': 'qllc int8, --features -amx-tile,-amx-int8'}
desc = {'fc1': 'FC 1x1024 -> 1024', 'fc64': 'FC 64x1024 -> 1024', 'conv': 'Conv 3x3 64->64 56x56', 'conv28': 'Conv 3x3 128->128 28x28'}

def sqnr(shape, p):
    try:
        ref = np.fromfile(os.path.join(out, f'{shape}_float', 'out.f32'), np.float32).astype(np.float64)
        got = np.fromfile(os.path.join(out, f'{shape}_{p}', 'out.f32'), np.float32).astype(np.float64)
        return '%.1f dB' % (10 * np.log10(np.sum(ref ** 2) / max(np.sum((got - ref) ** 2), 1e-30)))
    except (OSError, ValueError):
        return '-'

print()
print('| layer | contender | best median (us) | medians (us) | GOPS | % of int8 peak | implementation / check |')
print('|---|---|---:|---|---:|---:|---|')
best = {}
for s in shapes:
    for who in label:
        rs = runs.get((s, who))
        if not rs:
            continue
        meds = [float(r['median_ns']) / 1e3 for r in rs]
        b = min(meds)
        best[(s, who)] = b
        gops = 2 * macs[s] / (b * 1e3)
        if who.startswith('onednn'):
            note = f"{rs[0]['impl']} (isa {rs[0]['isa']}), check {rs[0]['check']}"
        else:
            p = who[5:]
            note = f"{rs[0]['in']} -> {rs[0]['out']}" + ('' if p == 'float' else f", SQNR vs qllc float {sqnr(s, p)}")
        pk = '%.0f %%' % (100 * gops / peak) if peak else '-'
        print(f"| {desc[s]} | {label[who]} | {b:.1f} | {', '.join('%.1f' % m for m in meds)} | {gops:.1f} | {pk} | {note} |")
print()
print('time ratios (best medians; > 1: the first is slower)')
print('| layer | qllc int8 / oneDNN VNNI | qllc int8 / oneDNN VNNI with plain-layout reorders | qllc int8 / oneDNN default | qllc int8 / qllc float | qllc int16 / int8 | qllc 16x8 / int8 | oneDNN int8 / oneDNN f32 |')
print('|---|---:|---:|---:|---:|---:|---:|---:|')
def r(s, a, b):
    return '%.2f' % (best[(s, a)] / best[(s, b)]) if (s, a) in best and (s, b) in best else '-'
for s in shapes:
    print(f"| {desc[s]} | {r(s, 'qllc_int8', 'onednn_vnni')} | {r(s, 'qllc_int8', 'onednn_vnni_plain')} | {r(s, 'qllc_int8', 'onednn_default')} | "
          f"{r(s, 'qllc_int8', 'qllc_float')} | {r(s, 'qllc_int16', 'qllc_int8')} | {r(s, 'qllc_16x8', 'qllc_int8')} | "
          f"{r(s, 'onednn_default', 'onednn_f32')} |")
if any(w == 'qllc_int8noamx' for (_, w) in runs):  # an AMX host: oneDNN's default ISA is its AMX path
    print()
    print('AMX (issue 12): qllc int8 runs __amx; oneDNN default = its AMX path (time ratios, > 1: qllc slower)')
    print('| layer | qllc int8 (amx) / oneDNN default (amx) | qllc int8 without AMX / oneDNN default | qllc int8 without AMX / with |')
    print('|---|---:|---:|---:|')
    for s in shapes:
        print(f"| {desc[s]} | {r(s, 'qllc_int8', 'onednn_default')} | {r(s, 'qllc_int8noamx', 'onednn_default')} | "
              f"{r(s, 'qllc_int8noamx', 'qllc_int8')} |")
if peak:
    print(f'\nint8 peak: {peak:.1f} GOPS, the higher of the two measurements above (independent vpdpbusd zmm, '
          '64 multiply-adds = 128 ops each)')
EOF

# ---- the QDQ CNN against onnxruntime --------------------------------------------------------------
if [ "$ORT" = 1 ]; then
  echo
  log "bench/ort/run.sh (RUNS=$ORT_RUNS REPEAT=$ORT_REPEAT), pinned to core $CORE"
  if RUNS=$ORT_RUNS REPEAT=$ORT_REPEAT QLLC_BUILD_DIR=$BUILD "${PIN[@]}" "$SRC/bench/ort/run.sh" >"$OUT/ort.txt" \
       2>"$OUT/ort.log"; then
    "$PY" - "$OUT/ort.txt" "$OUT/peak.txt" <<'EOF'
import re, sys
kv = lambda line: dict(re.findall(r'(\w+)=(\S+)', line))
peaks = [float(kv(l)['vpdpbusd_gops']) for l in open(sys.argv[2]) if 'vpdpbusd_gops=' in l]
peak = max(peaks) if peaks else None
rows = {}
for line in open(sys.argv[1]):
    d = kv(line)
    if line.startswith('onnxruntime '):
        key = ('onnxruntime ' + line.split()[1], d['model'].replace('.onnx', ''))
    elif line.startswith('qllc model='):
        key = ('qllc JIT', d['model'])
    else:
        continue
    rows.setdefault(key, []).append(d)
MACS = 1.814e9  # ResNet-18, 1x3x224x224
print('| model | runtime | best median wall (ms) | medians wall (ms) | medians CPU (ms) | GOPS | % of int8 peak |')
print('|---|---|---:|---|---|---:|---:|')
best = {}
for (who, model), ds in sorted(rows.items(), key=lambda kv: (kv[0][1], kv[0][0])):
    w = [float(d['median_ms']) for d in ds]
    c = [float(d['cpu_median_ms']) for d in ds]
    best[(who.split()[0], model)] = min(w)
    g = 2 * MACS / (min(w) * 1e6)
    pk = '%.0f %%' % (100 * g / peak) if peak and 'qdq' in model else '-'
    name = {'resnet18_qdq': 'ResNet-18 QDQ (u8/s8)', 'resnet18': 'ResNet-18 float', 'resnet18_float': 'ResNet-18 float'}.get(model, model)
    print(f"| {name} | {who} | {min(w):.2f} | {', '.join('%.2f' % x for x in w)} | {', '.join('%.2f' % x for x in c)} | {g:.1f} | {pk} |")
q, o = best.get(('qllc', 'resnet18_qdq')), best.get(('onnxruntime', 'resnet18_qdq'))
if q and o:
    print(f'\nResNet-18 QDQ: qllc / onnxruntime time ratio {q / o:.2f}')
for line in open(sys.argv[1]):
    if line.startswith(('compare:', 'qllc precision report', 'load ')):
        print(line.rstrip())
EOF
  else
    log "bench/ort/run.sh failed: $(tail -5 "$OUT/ort.log")"
  fi
fi
echo "load at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
