#!/bin/bash
# tests/cli/bundle_test.sh: a bundle linked by gcc computes what the JIT computes and what numpy computed.
#
# small.onnx (Conv 3x3 pad 1 -> Relu -> Flatten -> Gemm, random weights, made by data/make_models.py) is
# compiled with `qllc compile`, linked with data/bundle_main.c (which uses only what NAME.h documents),
# run on data/small_x.npy, and its output compared
#   - with `qllc run` on the same input: bit-exact (atol 0). Both come from the same LLVM module built for
#     the same instructions; the JIT uses the host CPU and the bundle a generic x86-64 CPU, but kernels are
#     compiled with -ffp-contract=off so no FMA contraction changes the rounding. If this ever fails only
#     by a few ULP, a vectorizer reassociating a reduction is the suspect, not the bundle;
#   - with the numpy reference computed at generation time (float64 rounded to float32): atol 1e-4.
# Also: a .pb input, --weights file (weights read from NAME.weights.bin at run time), --reloc static, a two-input /
# two-output model, and two bundles linked into one program (no symbol clashes).
: "${QLLC:?}" "${QLLC_SOURCE_DIR:?}"
. "$QLLC_SOURCE_DIR/tests/lib.sh"
D=$QLLC_SOURCE_DIR/tests/cli/data
CC=${CC:-gcc}
command -v "$CC" >/dev/null || { echo "no C compiler; skipping"; exit 77; }

"$CC" -O2 -o "$tmp/npycmp" "$QLLC_SOURCE_DIR/tests/models/npycmp.c" -lm || { echo "cannot build npycmp"; exit 1; }
close() { # ACTUAL EXPECTED ATOL what
  "$tmp/npycmp" "$1" "$2" "$3" 0 >"$tmp/cmp" 2>&1 || fail "$4: $(cat "$tmp/cmp")"
  echo "$4: $(tail -1 "$tmp/cmp")"
}
driver() { # NAME BUNDLE_DIR EXE [extra objects/flags]
  local name=$1 dir=$2 exe=$3; shift 3
  "$CC" -std=c11 -O1 -Wall -Werror -I"$dir" -DBUNDLE="$name" -DBUNDLE_HEADER="\"$name.h\"" \
    "$D/bundle_main.c" "$dir/$name.o" "$@" -o "$exe"
}

# ---- 1. small.onnx, weights in the object ----
"$QLLC" compile "$D/small.onnx" -o "$tmp/b" || { fail "qllc compile small.onnx"; exit 1; }
[ -f "$tmp/b/small.o" ] && [ -f "$tmp/b/small.h" ] || fail "bundle files missing: $(ls -A "$tmp/b")"
[ -z "$(ls -A "$tmp/b" | grep -v '^small\.[oh]$')" ] || fail "stray files in the bundle dir: $(ls -A "$tmp/b")"
for m in small_MUTABLE_MEM_SIZE small_ACTIVATIONS_MEM_SIZE small_CONSTANT_MEM_SIZE small_MEM_ALIGN \
         small_NUM_INPUTS small_NUM_OUTPUTS small_x_OFFSET small_y_OFFSET; do
  grep -q "#define $m" "$tmp/b/small.h" || fail "small.h lacks $m"
done
grep -q 'f32<1 x 2 x 5 x 5>' "$tmp/b/small.h" || fail "small.h comment does not show x's type"
driver small "$tmp/b" "$tmp/drv" || fail "gcc could not link the bundle"
"$tmp/drv" - "$D/small_x.npy" "$tmp/y_bundle.npy" || fail "bundle driver failed"
"$QLLC" run "$D/small.onnx" --input "$D/small_x.npy" --output-dir "$tmp/jit" >"$tmp/run.out" || fail "qllc run"
close "$tmp/y_bundle.npy" "$tmp/jit/y.npy" 0 "bundle vs JIT (exact)"
close "$tmp/y_bundle.npy" "$D/small_y_ref.npy" 1e-4 "bundle vs numpy"
close "$tmp/jit/y.npy" "$D/small_y_ref.npy" 1e-4 "JIT vs numpy"
# the same input as an ONNX TensorProto .pb, named: the same bytes out
"$QLLC" run "$D/small.onnx" --input "x=$D/small_x.pb" --output-dir "$tmp/jitpb" >/dev/null || fail "qllc run with .pb"
close "$tmp/jitpb/y.npy" "$tmp/jit/y.npy" 0 "JIT with .pb input vs .npy input (exact)"

# the object must not need an allocator or libc beyond memcpy/memset
undef=$(nm -u "$tmp/b/small.o" | awk '{print $2}' | grep -vE '^(memcpy|memset|memmove)$' || true)
[ -z "$undef" ] || fail "small.o references: $undef"

# ---- 2. --weights file and --reloc static ----
"$QLLC" compile "$D/small.onnx" -o "$tmp/w" --name small --weights file --reloc static >/dev/null ||
  fail "compile --weights file"
[ -s "$tmp/w/small.weights.bin" ] || fail "no small.weights.bin"
grep -qE '#define small_CONSTANT_MEM_SIZE +\(?[1-9]' "$tmp/w/small.h" || fail "CONSTANT_MEM_SIZE is 0 with --weights file"
driver small "$tmp/w" "$tmp/drv_w" -no-pie || fail "gcc could not link the --weights file bundle"
"$tmp/drv_w" "$tmp/w/small.weights.bin" "$D/small_x.npy" "$tmp/y_w.npy" || fail "driver (weights file) failed"
close "$tmp/y_w.npy" "$D/small_y_ref.npy" 1e-4 "weights-file bundle vs numpy"
close "$tmp/y_w.npy" "$tmp/y_bundle.npy" 0 "weights-file bundle vs embedded bundle (exact)"

# ---- 3. two inputs, two outputs, names that need sanitising ----
"$QLLC" compile "$D/two_io.onnx" -o "$tmp/t" >/dev/null || fail "compile two_io.onnx"
driver two_io "$tmp/t" "$tmp/drv_t" || fail "gcc could not link two_io"
"$tmp/drv_t" - "$D/two_io_a.npy" "$D/two_io_b.npy" "$tmp/sum.npy" "$tmp/relu.npy" || fail "two_io driver failed"
close "$tmp/sum.npy" "$D/two_io_sum_ref.npy" 0 "two_io sum"
close "$tmp/relu.npy" "$D/two_io_relu_ref.npy" 0 "two_io relu"
"$QLLC" run "$D/two_io.onnx" --input "b=$D/two_io_b.npy" --input "a=$D/two_io_a.npy" --output-dir "$tmp/jt" \
  >"$tmp/run2.out" || fail "qllc run two_io"
close "$tmp/jt/sum_0.npy" "$D/two_io_sum_ref.npy" 0 "two_io JIT sum (file sum_0.npy)"
close "$tmp/jt/out_relu.npy" "$D/two_io_relu_ref.npy" 0 "two_io JIT relu (file out_relu.npy)"
[ "$(wc -l <"$tmp/run2.out")" -eq 2 ] || fail "qllc run should print one line per output: $(cat "$tmp/run2.out")"
grep -q '^sum:0 f32<2 x 3> \[1.5, -1.75, 2, -2, 2, 2\]' "$tmp/run2.out" || fail "run summary line: $(head -1 "$tmp/run2.out")"

# ---- 4. two bundles in one program: headers and symbols must not clash ----
cat >"$tmp/both.c" <<'C'
#include "small.h"
#include "two_io.h"
int main(void) { return small_NUM_INPUTS + two_io_NUM_INPUTS == 3 && small_inputs[0].rank == 4 ? 0 : 1; }
C
"$CC" -std=c11 -Wall -Werror -I"$tmp/b" -I"$tmp/t" "$tmp/both.c" "$tmp/b/small.o" "$tmp/t/two_io.o" -o "$tmp/both" &&
  "$tmp/both" || fail "two bundles in one program"

finish bundle_test
