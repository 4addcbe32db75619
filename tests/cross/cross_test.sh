#!/bin/bash
# tests/cross/cross_test.sh: aarch64 bundles compute what x86_64 bundles and the JIT compute (issue 5).
#
# For the sample model (models/digits, the first 3 test images in one run) and every float test model in
# tests/models/data/*/ (model.onnx + input_0.npy), `qllc compile` makes bundles for
#   x86_64 (default cpu x86-64), x86_64 --cpu x86-64-v2, aarch64 (default cpu generic),
#   aarch64 --cpu cortex-a76,
# each linked with tests/cross/driver.c (raw bytes in and out; aarch64 with aarch64-linux-gnu-gcc, run
# under `qemu-aarch64 -L /usr/aarch64-linux-gnu`), and compares the outputs:
#   - float: BIT-IDENTICAL across all bundles and with `qllc run` (the JIT, host CPU, AVX-512 here).
#     Measured: max |difference| 0 on every model and target. Why it holds: the kernels are compiled with
#     -ffp-contract=off and the generated code carries no fast-math flags, so LLVM may neither fuse a*b+c
#     into an FMA nor reassociate a float reduction; vectorization (NEON, SSE, AVX-512) only runs
#     independent lanes side by side, each doing the same IEEE operations in the same order; exp/tanh are
#     the library's own C code (no libm whose last bit differs between glibcs). CROSS_FLOAT_TOL (default 0,
#     relative to max(1,|expected|)) exists to loosen this deliberately if that design ever changes.
#   - int8 and int16 (when `qllc profile` exists; a profile per model from its calibration data):
#     bytes EQUAL across x86_64 (x86-64, x86-64-v4), aarch64 (generic, cortex-a76) and the JIT; and for
#     digits with --quantized-io (int8 bytes in and out) across the three bundles.
# Also, on both targets (what tests/llvmgen/objects_test.sh and tests/cli/bundle_test.sh already do is not
# repeated: they check the digits objects' symbols and compile its header with the host gcc/g++; here):
#   - every object built here has no undefined symbol but memcpy/memset (float and quantized, all CPUs);
#   - the driver built as C++ (g++ / aarch64-linux-gnu-g++) gives the same bytes as the C one;
#   - two bundles (digits and mlp) linked into one program and both run give the same bytes as alone;
#   - x86-64-v2 objects contain no AVX instruction (no ymm/zmm, no VEX/EVEX 'v' mnemonic); an
#     x86-64-v4 object does (so that check can fail);
#   - unknown --cpu / --features are errors listing the valid values, for both targets, and every listed
#     CPU and feature is one LLVM 19 recognises (it would only warn and ignore it);
#   - aarch64 --reloc static and pic, and --weights file, link and run under qemu with the same bytes;
#     a --reloc pic object links into a shared library that a program uses (both targets).
# Exit 77 only when aarch64-linux-gnu-gcc or qemu-aarch64 is missing.
: "${QLLC:?}" "${QLLC_SOURCE_DIR:?}"
. "$QLLC_SOURCE_DIR/tests/lib.sh"
S=$QLLC_SOURCE_DIR
ACC=${AARCH64_CC:-aarch64-linux-gnu-gcc}      # overridable, e.g. for another toolchain prefix
ACXX=${AARCH64_CXX:-aarch64-linux-gnu-g++}
QEMU="qemu-aarch64 -L /usr/aarch64-linux-gnu"
command -v "$ACC" >/dev/null || { echo "skip: $ACC not found (scripts/bootstrap installs gcc-aarch64-linux-gnu)"; exit 77; }
command -v qemu-aarch64 >/dev/null || { echo "skip: qemu-aarch64 not found (scripts/bootstrap installs qemu-user)"; exit 77; }
[ -d /usr/aarch64-linux-gnu/lib ] || { echo "skip: no aarch64 libc in /usr/aarch64-linux-gnu (libc6-dev-arm64-cross)"; exit 77; }
FLOAT_TOL=${CROSS_FLOAT_TOL:-0}
NM=/usr/lib/llvm-19/bin/llvm-nm
[ -x "$NM" ] || NM=nm
OBJDUMP=objdump
gcc -std=c11 -O2 -Wall -Werror -o "$tmp/rawtool" "$S/tests/cross/rawtool.c" -lm || { echo "cannot build rawtool"; exit 1; }
R=$tmp/rawtool

# ---- helpers ----
# cc_for TARGET LANG -> the compiler command
cc_for() {
  case "$1:$2" in
    x86_64:c) echo "gcc -std=c11" ;; x86_64:c++) echo "g++ -std=c++17" ;;
    aarch64:c) echo "$ACC -std=c11" ;; aarch64:c++) echo "$ACXX -std=c++17" ;;
  esac
}
run_for() { [ "$1" = aarch64 ] && echo "$QEMU" || echo ""; }

# checks the object's undefined symbols: at most memcpy/memset
check_undef() { # OBJ WHAT
  local u
  u=$("$NM" -u "$1" | awk '{print $NF}' | grep -vxE 'memcpy|memset' | tr '\n' ' ')
  [ -z "$u" ] || fail "$2: undefined symbols besides memcpy/memset: $u"
}

# build DIR TARGET MODEL [compile flags...]: compile a bundle named net into DIR, check it, link DIR/drv
build() {
  local dir=$1 target=$2 model=$3; shift 3
  mkdir -p "$dir"
  if ! "$QLLC" compile "$model" -o "$dir" --name net --target "$target" "$@" >"$dir/log" 2>&1; then
    fail "qllc compile $model --target $target $*: $(cat "$dir/log")"; return 1
  fi
  check_undef "$dir/net.o" "$dir"
  local extra=""
  # --reloc static objects are not position-independent: link a non-PIE program
  case " $* " in *" static "*) extra=-no-pie ;; esac
  if ! $(cc_for "$target" c) -O1 -Wall -Werror -I"$dir" -DBUNDLE_NAME=net -DBUNDLE_HEADER='"net.h"' \
       "$S/tests/cross/driver.c" "$dir/net.o" $extra -o "$dir/drv" 2>"$dir/cc.log"; then
    fail "link $dir ($target): $(cat "$dir/cc.log")"; return 1
  fi
}

# runbundle DIR TARGET WEIGHTS OUT IN...: runs DIR/drv (under qemu for aarch64)
runbundle() {
  local dir=$1 target=$2 w=$3 out=$4; shift 4
  $(run_for "$target") "$dir/drv" "$w" "$@" "$out" 2>"$dir/run.log" || { fail "run $dir: $(cat "$dir/run.log")"; return 1; }
}

# same_float ACTUAL EXPECTED WHAT: bit-identical unless CROSS_FLOAT_TOL > 0
same_float() {
  local msg
  msg=$("$R" fcmp "$1" "$2" "$FLOAT_TOL" 2>&1) || { fail "$3: $msg"; return; }
  if [ "$FLOAT_TOL" = 0 ] && ! cmp -s "$1" "$2"; then fail "$3: $msg"; return; fi
  echo "  $3: $msg"
}
same_bytes() { # ACTUAL EXPECTED WHAT
  if [ ! -s "$1" ] || [ ! -s "$2" ]; then fail "$3: missing output"; return; fi
  if cmp -s "$1" "$2"; then echo "  $3: $(wc -c <"$1") bytes equal"; else fail "$3: bytes differ ($(cmp "$1" "$2" | head -1))"; fi
}

# The test cases: NAME MODEL INPUT.raw (several samples for digits) and JIT-INPUT.npy (one sample).
cases=()
mkdir -p "$tmp/in"
"$R" npy2raw "$S/models/digits/test_x.npy" "$tmp/in/digits.raw" 0 3 || fail "npy2raw digits"
cases+=("digits|$S/models/digits/digits.onnx|$S/models/digits/sample_0.npy")
for d in "$S"/tests/models/data/*/; do
  n=$(basename "$d")
  [ -f "$d/model.onnx" ] && [ -f "$d/input_0.npy" ] || continue
  "$R" npy2raw "$d/input_0.npy" "$tmp/in/$n.raw" || fail "npy2raw $n"
  cases+=("$n|$d/model.onnx|$d/input_0.npy")
done
[ ${#cases[@]} -ge 5 ] || fail "expected the sample model and at least 4 test models, found ${#cases[@]} cases"

# the JIT's output(s) as one raw file per output, in the header's order (first sample only)
jit_raw() { # MODEL INPUT.npy HEADER OUTDIR [quantization flags] -> OUTDIR/out_<i>.raw
  local model=$1 input=$2 header=$3 out=$4; shift 4
  "$QLLC" run "$model" --input "$input" --output-dir "$out" "$@" >"$out.log" 2>&1 ||
    { fail "qllc run $model $*: $(cat "$out.log")"; return 1; }
  local i=0 name
  for name in $(sed -n '/^ \* Outputs (/,/^ \* Constants\|^ \*$/p' "$header" | sed -n 's/^ \*   \([^ ]*\) .*/\1/p'); do
    local f="$out/$(printf '%s' "$name" | sed 's/[^A-Za-z0-9_.-]/_/g').npy"
    "$R" npy2raw "$f" "$out/out_$i.raw" || { fail "JIT output $f for '$name' missing"; return 1; }
    i=$((i + 1))
  done
}

# first sample of a batched raw output file (size of output 0 from the x86 bundle's single-sample run)
first_sample() { head -c "$2" "$1"; }

# ---- 1. float: x86_64, x86-64-v2, aarch64 generic, aarch64 cortex-a76; JIT ----
echo "== float (tolerance: ${FLOAT_TOL} i.e. bit-identical unless CROSS_FLOAT_TOL is set) (at ${SECONDS}s)"
for c in "${cases[@]}"; do
  IFS='|' read -r n model jin <<<"$c"
  b=$tmp/f/$n
  in=$tmp/in/$n.raw
  build "$b/x86" x86_64 "$model" && runbundle "$b/x86" x86_64 - "$b/x86.out" "$in" || continue
  for cfg in "v2 x86_64 --cpu x86-64-v2" "a64 aarch64" "a76 aarch64 --cpu cortex-a76"; do
    set -- $cfg
    tag=$1 target=$2; shift 2
    build "$b/$tag" "$target" "$model" "$@" && runbundle "$b/$tag" "$target" - "$b/$tag.out" "$in" &&
      same_float "$b/$tag.out" "$b/x86.out" "$n float: $target ${*:-default cpu} vs x86_64"
  done
  # x86-64-v2: no AVX of any width in the object
  avx=$("$OBJDUMP" -d --no-show-raw-insn "$b/v2/net.o" 2>/dev/null |
        awk -F'\t' 'NF >= 2 { split($2, a, " "); if (a[1] ~ /^v/ || $2 ~ /%[yz]mm/) print a[1] }' | sort -u | tr '\n' ' ')
  [ -z "$avx" ] || fail "$n: x86-64-v2 object uses AVX instructions: $avx"
  # the JIT on the first sample (digits: sample_0.npy is test_x[0])
  if jit_raw "$model" "$jin" "$b/x86/net.h" "$b/jit"; then
    size=$(stat -c %s "$b/jit/out_0.raw")
    first_sample "$b/x86.out" "$size" >"$b/x86.first"
    first_sample "$b/a76.out" "$size" >"$b/a76.first"
    same_float "$b/x86.first" "$b/jit/out_0.raw" "$n float: x86_64 bundle vs JIT"
    same_float "$b/a76.first" "$b/jit/out_0.raw" "$n float: aarch64 cortex-a76 bundle vs JIT"
  fi
done
# an x86-64-v4 object does use ymm/zmm registers, so the check above is able to fail
build "$tmp/f/v4" x86_64 "$S/tests/models/data/residual/model.onnx" --cpu x86-64-v4 &&
  runbundle "$tmp/f/v4" x86_64 - "$tmp/f/v4.out" "$tmp/in/residual.raw" &&
  same_float "$tmp/f/v4.out" "$tmp/f/residual/x86.out" "residual float: x86_64 x86-64-v4 vs x86-64"
"$OBJDUMP" -d --no-show-raw-insn "$tmp/f/v4/net.o" | grep -qE '%[yz]mm' ||
  fail "the x86-64-v4 object has no ymm/zmm register: the no-AVX check cannot tell v2 from v4"

# ---- 2. C++ header and two bundles in one program, both targets ----
echo "== C++ driver and two bundles in one program (at ${SECONDS}s)"
cat >"$tmp/two.c" <<'C'
/* two bundles (both named in their own header) in one program; each writes its raw outputs */
#include <stdio.h>
#include <stdlib.h>
#include "d/d.h"
#include "m/m.h"
static int run(int (*fn)(const uint8_t *, uint8_t *, uint8_t *), const qllc_io *in, const qllc_io *out,
               size_t mut, size_t act, const char *inpath, const char *outpath) {
  uint8_t *m = (uint8_t *)aligned_alloc(64, (mut + 63) / 64 * 64), *a = (uint8_t *)aligned_alloc(64, (act + 63) / 64 * 64 + 64);
  FILE *f = fopen(inpath, "rb");
  if (!m || !a || !f || fread(m + in[0].offset, 1, in[0].size, f) != in[0].size) return 1;
  fclose(f);
  if (fn(NULL, m, a) != 0) return 2;
  f = fopen(outpath, "wb");
  if (!f || fwrite(m + out[0].offset, 1, out[0].size, f) != out[0].size) return 3;
  return fclose(f);
}
int main(int argc, char **argv) {
  if (argc != 5) return 9;
  return run(d, d_inputs, d_outputs, d_MUTABLE_MEM_SIZE, d_ACTIVATIONS_MEM_SIZE, argv[1], argv[2]) * 10 +
         run(m, m_inputs, m_outputs, m_MUTABLE_MEM_SIZE, m_ACTIVATIONS_MEM_SIZE, argv[3], argv[4]);
}
C
head -c 256 "$tmp/in/digits.raw" >"$tmp/in/digits1.raw"
for cfg in "x86 x86_64" "a76 aarch64 --cpu cortex-a76"; do
  set -- $cfg
  tag=$1 target=$2; shift 2
  fb=$tmp/f/digits/$tag
  # C++: the header and the whole driver through g++ / aarch64-linux-gnu-g++, same bytes as the C driver
  if [ "$target" = aarch64 ] && ! command -v "$ACXX" >/dev/null; then
    # without the cross g++ (package g++-aarch64-linux-gnu), at least the header must parse as aarch64 C++
    echo "  NOTE: $ACXX not found (install g++-aarch64-linux-gnu): only a clang++-19 syntax check of the C++ driver"
    clang++-19 --target=aarch64-linux-gnu --sysroot=/usr/aarch64-linux-gnu -std=c++17 -Wall -Werror -fsyntax-only \
      -I"$fb" -DBUNDLE_NAME=net -DBUNDLE_HEADER='"net.h"' -x c++ "$S/tests/cross/driver.c" 2>"$fb/cxx.log" ||
      fail "aarch64: the bundle header/driver does not parse as C++: $(cat "$fb/cxx.log")"
  elif $(cc_for "$target" c++) -O1 -Wall -Werror -I"$fb" -DBUNDLE_NAME=net -DBUNDLE_HEADER='"net.h"' \
         -x c++ "$S/tests/cross/driver.c" -x none "$fb/net.o" -o "$fb/drvpp" 2>"$fb/cxx.log"; then
    $(run_for "$target") "$fb/drvpp" - "$tmp/in/digits.raw" "$fb/pp.out" 2>"$fb/pp.log" || fail "C++ driver $tag: $(cat "$fb/pp.log")"
    same_bytes "$fb/pp.out" "$tmp/f/digits/$tag.out" "digits $target: C++ driver vs C driver"
  else
    fail "$target: the bundle header/driver does not build as C++: $(cat "$fb/cxx.log")"
  fi
  # two bundles: digits as d, mlp as m
  t=$tmp/two/$tag
  mkdir -p "$t"
  "$QLLC" compile "$S/models/digits/digits.onnx" -o "$t/d" --name d --target "$target" "$@" >/dev/null 2>&1 &&
    "$QLLC" compile "$S/tests/models/data/mlp/model.onnx" -o "$t/m" --name m --target "$target" "$@" >/dev/null 2>&1 ||
    { fail "two bundles ($target): compile"; continue; }
  if $(cc_for "$target" c) -Wall -Werror -I"$t" "$tmp/two.c" "$t/d/d.o" "$t/m/m.o" -o "$t/two" 2>"$t/cc.log"; then
    $(run_for "$target") "$t/two" "$tmp/in/digits1.raw" "$t/d.out" "$tmp/in/mlp.raw" "$t/m.out" || fail "two bundles ($target): run"
    head -c 40 "$tmp/f/digits/$tag.out" >"$t/d.ref"
    same_bytes "$t/d.out" "$t/d.ref" "two bundles in one $target program: digits"
    same_bytes "$t/m.out" "$tmp/f/mlp/$tag.out" "two bundles in one $target program: mlp"
  else
    fail "two bundles ($target): link: $(cat "$t/cc.log")"
  fi
done

# ---- 3. aarch64 --reloc static|pic, --weights file ----
echo "== aarch64 relocation models and weights file (at ${SECONDS}s)"
digits=$S/models/digits/digits.onnx
ref=$tmp/f/digits/a64.out
for cfg in "rs --reloc static" "rp --reloc pic" "ws --reloc static --weights file" "wp --weights file"; do
  set -- $cfg
  tag=$1; shift
  d=$tmp/r/$tag
  build "$d" aarch64 "$digits" "$@" || continue
  w=-
  case "$*" in *file*)
    w=$d/net.weights.bin
    [ -s "$w" ] || { fail "aarch64 $*: no net.weights.bin"; continue; }
    grep -qE '#define net_CONSTANT_MEM_SIZE +\(?[1-9]' "$d/net.h" || fail "aarch64 $*: CONSTANT_MEM_SIZE is 0" ;;
  esac
  runbundle "$d" aarch64 "$w" "$d.out" "$tmp/in/digits.raw" && same_bytes "$d.out" "$ref" "digits aarch64 $* vs default"
done
# --reloc pic is what a shared library needs: the PIC object linked into libnet.so, a program using it
# (both targets; on aarch64 the small code model makes static and PIC objects alike for this model, so
# the shared library, not the relocation list, is the check)
for cfg in "x86_64 $tmp/f/digits/x86.out" "aarch64 $ref"; do
  set -- $cfg
  target=$1 expect=$2
  d=$tmp/so/$target
  mkdir -p "$d"
  "$QLLC" compile "$digits" -o "$d" --name net --target "$target" --reloc pic >/dev/null 2>&1 || { fail "$target pic: compile"; continue; }
  cc=$(cc_for "$target" c)
  if $cc -shared -o "$d/libnet.so" "$d/net.o" 2>"$d/so.log" &&
     $cc -O1 -I"$d" -DBUNDLE_NAME=net -DBUNDLE_HEADER='"net.h"' "$S/tests/cross/driver.c" -L"$d" -lnet \
       -Wl,-rpath,"$d" -o "$d/drv" 2>>"$d/so.log"; then
    runbundle "$d" "$target" - "$d/so.out" "$tmp/in/digits.raw" && same_bytes "$d/so.out" "$expect" "digits $target --reloc pic in a shared library"
  else
    fail "$target: a --reloc pic object does not link into a shared library: $(cat "$d/so.log")"
  fi
done

# ---- 4. errors: unknown --cpu / --features list the valid ones ----
echo "== errors (at ${SECONDS}s)"
err_lists() { # WHAT EXPECTED-WORDS... -- qllc args
  local what=$1 words=() w; shift
  while [ "$1" != -- ]; do words+=("$1"); shift; done; shift
  if "$QLLC" compile "$digits" -o "$tmp/err" "$@" >"$tmp/err.log" 2>&1; then fail "$what: accepted"; return; fi
  for w in "${words[@]}"; do grep -qF -- "$w" "$tmp/err.log" || fail "$what: message lacks '$w': $(cat "$tmp/err.log")"; done
  echo "  $what: $(head -1 "$tmp/err.log" | cut -c1-150)"
}
err_lists "x86_64 unknown cpu" "unknown CPU 'cortex-a76'" x86-64-v2 x86-64-v4 sapphirerapids -- --cpu cortex-a76
err_lists "aarch64 unknown cpu" "unknown CPU 'skylake'" generic cortex-a53 cortex-a76 neoverse-n1 -- --target aarch64 --cpu skylake
err_lists "x86_64 unknown feature" "unknown feature 'dotprod'" avx2 avx512vnni amx-int8 -- --features +avx2,+dotprod
err_lists "aarch64 unknown feature" "unknown feature 'avx2'" neon dotprod i8mm sve -- --target aarch64 --features -avx2
err_lists "aarch64 feature without sign" "must start with '+' or '-'" dotprod -- --target aarch64 --features dotprod
err_lists "aarch64 --cpu native on x86" "native" -- --target aarch64 --cpu native
err_lists "unknown target" "riscv64" x86_64 aarch64 -- --target riscv64
# every CPU and feature name the target descriptions accept is one LLVM 19 knows (LLVM would only warn,
# "'x' is not a recognized processor/feature for this target (ignoring ...)", and build for a generic CPU)
mlp=$S/tests/models/data/mlp/model.onnx
for target in x86_64 aarch64; do
  cpus=$("$QLLC" compile "$mlp" -o "$tmp/err" --target "$target" --cpu no-such-cpu 2>&1 | sed -n 's/.*valid CPUs: //p' | tr -d ',')
  feats=$("$QLLC" compile "$mlp" -o "$tmp/err" --target "$target" --features +no-such 2>&1 | sed -n 's/.*valid features: //p' | tr -d ',')
  [ -n "$cpus" ] && [ -n "$feats" ] || { fail "$target: no list of valid CPUs/features in the errors"; continue; }
  all=""
  for f in $feats; do all="$all${all:+,}+$f"; done
  for cpu in $cpus "${cpus%% *} $all"; do
    [ "$cpu" = native ] && [ "$target" != x86_64 ] && continue
    set -- $cpu
    args=(--cpu "$1"); [ $# -gt 1 ] && args+=(--features "$2")
    "$QLLC" compile "$mlp" -o "$tmp/names" --target "$target" "${args[@]}" >"$tmp/names.log" 2>&1 ||
      { fail "$target ${args[*]}: $(head -3 "$tmp/names.log")"; continue; }
    ! grep -qi "not a recognized" "$tmp/names.log" || fail "$target ${args[*]}: LLVM: $(grep -i 'not a recognized' "$tmp/names.log" | sort -u | head -3)"
  done
  echo "  $target: LLVM knows all $(echo $cpus | wc -w) CPUs and $(echo $feats | wc -w) features"
done
# a valid feature list is accepted and runs
build "$tmp/r/feat" aarch64 "$digits" --cpu cortex-a55 --features +dotprod,-sve &&
  runbundle "$tmp/r/feat" aarch64 - "$tmp/r/feat.out" "$tmp/in/digits.raw" &&
  same_bytes "$tmp/r/feat.out" "$ref" "digits aarch64 cortex-a55 +dotprod,-sve vs default"

# ---- 5. int8 / int16: bytes equal across targets, CPUs and the JIT ----
if "$QLLC" profile --help >/dev/null 2>&1; then
  echo "== quantized (at ${SECONDS}s)"
  for c in "${cases[@]}"; do
    IFS='|' read -r n model jin <<<"$c"
    q=$tmp/q/$n
    mkdir -p "$q/calib"
    if [ "$n" = digits ]; then ds=$S/models/digits/calib_x.npy; else cp "$jin" "$q/calib/input_0.npy"; ds=$q/calib; fi
    "$QLLC" profile "$model" --dataset "$ds" -o "$q/p.yaml" >"$q/profile.log" 2>&1 </dev/null ||
      { fail "$n: qllc profile: $(tail -3 "$q/profile.log")"; continue; }
    for prec in int8 int16; do
      qf=(--profile "$q/p.yaml" --precision "$prec")
      build "$q/$prec-x86" x86_64 "$model" "${qf[@]}" &&
        runbundle "$q/$prec-x86" x86_64 - "$q/$prec-x86.out" "$tmp/in/$n.raw" || continue
      grep -qE "summary: [1-9][0-9]* nodes quantized \($prec\)" "$q/$prec-x86/net.h" ||
        fail "$n $prec: the header's precision report shows no $prec node: $(grep 'summary:' "$q/$prec-x86/net.h")"
      for cfg in "v4 x86_64 --cpu x86-64-v4" "a64 aarch64" "a76 aarch64 --cpu cortex-a76"; do
        set -- $cfg
        tag=$1 target=$2; shift 2
        build "$q/$prec-$tag" "$target" "$model" "${qf[@]}" "$@" &&
          runbundle "$q/$prec-$tag" "$target" - "$q/$prec-$tag.out" "$tmp/in/$n.raw" &&
          same_bytes "$q/$prec-$tag.out" "$q/$prec-x86.out" "$n $prec: $target ${*:-default cpu} vs x86_64"
      done
      if jit_raw "$model" "$jin" "$q/$prec-x86/net.h" "$q/$prec-jit" "${qf[@]}"; then
        size=$(stat -c %s "$q/$prec-jit/out_0.raw")
        first_sample "$q/$prec-a76.out" "$size" >"$q/$prec-a76.first"
        first_sample "$q/$prec-x86.out" "$size" >"$q/$prec-x86.first"
        same_bytes "$q/$prec-a76.first" "$q/$prec-jit/out_0.raw" "$n $prec: aarch64 cortex-a76 vs JIT"
        same_bytes "$q/$prec-x86.first" "$q/$prec-jit/out_0.raw" "$n $prec: x86_64 vs JIT"
      fi
    done
  done
  # --quantized-io: int8 in, int8 out, no float at the boundary (any int8 bytes are a valid input; these
  # are 3 images' worth taken from the float test images' bytes)
  qp=$tmp/q/digits/p.yaml
  if [ -s "$qp" ]; then
    head -c 192 "$tmp/in/digits.raw" >"$tmp/in/digits_i8.raw"
    for cfg in "x86 x86_64" "a64 aarch64" "a76 aarch64 --cpu cortex-a76"; do
      set -- $cfg
      tag=$1 target=$2; shift 2
      d=$tmp/q/qio-$tag
      build "$d" "$target" "$digits" --profile "$qp" --precision int8 --quantized-io "$@" || continue
      grep -qE '^ \*   input  i8\[' "$d/net.h" || fail "--quantized-io: the input is not int8 in the header"
      runbundle "$d" "$target" - "$d.out" "$tmp/in/digits_i8.raw" || continue
      [ "$(stat -c %s "$d.out")" = 30 ] || fail "--quantized-io $target: expected 3 x 10 int8 outputs, got $(stat -c %s "$d.out") bytes"
      [ "$tag" = x86 ] || same_bytes "$d.out" "$tmp/q/qio-x86.out" "digits int8 --quantized-io: $target ${*:-default cpu} vs x86_64"
    done
  fi
else
  echo "== quantized: NOT RUN: this qllc has no 'profile' command yet"
fi

[ $fails -eq 0 ] && echo "cross_test: all passed (${SECONDS}s)" || echo "cross_test: $fails failed"
[ $fails -eq 0 ]
