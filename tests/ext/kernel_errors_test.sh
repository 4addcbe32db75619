#!/bin/bash
# tests/ext/kernel_errors_test.sh: every way a user's --kernels file can be wrong is a clear error (exit 1,
# one message naming the file and/or function and node), never a crash or a silent miscompile (issue 7).
# Kernel files are written here from the documented ABI (docs/kernels.md) and compiled with clang-19:
#   missing symbol       a file without the custom op's function: names node, function, files searched
#   wrong signature      the custom function with too few arguments, or a float attribute declared as
#                        an integer; an override whose type differs from the built-in's
#   another LLVM version bitcode made by clang-14 (real foreign bitcode; skipped with a note when
#                        clang-14 is missing; tests/llvmgen/user_kernels_test.c covers faked producers)
#   duplicate            two files defining the same function
#   another triple       aarch64 bitcode for an x86_64 compile and the reverse
#   not bitcode          a C source given as --kernels
#   model errors         a custom node without value_info (at load), a string attribute (at lowering)
: "${QLLC:?}" "${QLLC_SOURCE_DIR:?}"
. "$QLLC_SOURCE_DIR/tests/lib.sh"
E=$QLLC_SOURCE_DIR/examples/custom_kernel
INC=$QLLC_SOURCE_DIR/include
CLANG=${CLANG19:-clang-19}
command -v "$CLANG" >/dev/null || { echo "skip: $CLANG not found"; exit 77; }

bc() { # NAME [clang flags]: compiles $tmp/NAME.c to $tmp/NAME.bc
  local n=$1; shift
  "$CLANG" -O2 -emit-llvm -c -I"$INC" "$@" "$tmp/$n.c" -o "$tmp/$n.bc" || fail "clang could not build $n.c"
}
# expect_error WHAT PATTERN... -- qllc ARGS: exit status 1, one "qllc: error:" line matching every PATTERN
expect_error() {
  local what=$1; shift
  local pats=()
  while [ "$1" != "--" ]; do pats+=("$1"); shift; done
  shift
  "$QLLC" "$@" >"$tmp/out" 2>&1
  local rc=$?
  if [ $rc -ne 1 ]; then fail "$what: exit status $rc (expected 1): $(head -3 "$tmp/out")"; return; fi
  for p in "${pats[@]}"; do
    grep -q -- "$p" "$tmp/out" || fail "$what: message lacks '$p': $(cat "$tmp/out")"
  done
  echo "$what: $(head -1 "$tmp/out")"
}

HS='qllc_k_custom_com_acme_HardSwish_f32_f32'
cat >"$tmp/override_only.c" <<'C'
#include "qllc_kernel.h"
QLLC_KERNEL void qllc_k_relu_f32_f32(float *y, const float *x, int64_t n) {
  for (int64_t i = 0; i < n; i++) y[i] = x[i] > 0 ? x[i] : 0.5f * x[i];
}
C
cat >"$tmp/other.c" <<'C'
#include "qllc_kernel.h"
QLLC_KERNEL void qllc_k_custom_com_acme_Other_f32_f32(float *y, const float *x, int64_t n, int64_t m) {
  for (int64_t i = 0; i < n; i++) y[i] = x[i];
}
C
cat >"$tmp/few_args.c" <<C
#include "qllc_kernel.h"
QLLC_KERNEL void $HS(float *y, const float *x, int64_t n) { for (int64_t i = 0; i < n; i++) y[i] = x[i]; }
C
cat >"$tmp/bad_type.c" <<C
#include "qllc_kernel.h"
QLLC_KERNEL void $HS(float *y, const float *x, int64_t y0, int64_t y1, int64_t x0, int64_t x1, int64_t beta,
                     int64_t offset) { for (int64_t i = 0; i < y0 * y1; i++) y[i] = x[i] * (float)(beta + offset); }
C
# the example's file with the Relu override's count made an int32_t (the built-in takes int64_t)
sed 's/qllc_k_relu_f32_f32(\(.*\)int64_t n)/qllc_k_relu_f32_f32(\1int32_t n)/' "$E/kernels.c" >"$tmp/bad_override.c"
grep -q 'int32_t n)' "$tmp/bad_override.c" || fail "sed did not change the override's signature"
cp "$E/kernels.c" "$tmp/good.c"
bc override_only; bc other; bc few_args; bc bad_type; bc bad_override
bc good --target=aarch64-unknown-linux-gnu; mv "$tmp/good.bc" "$tmp/good_aarch64.bc"
bc good --target=x86_64-unknown-linux-gnu; mv "$tmp/good.bc" "$tmp/good_x86_64.bc"

M=$E/model.onnx
expect_error "missing symbol" "node 'hswish'" "no function $HS" "searched: .*override_only.bc" -- \
  run "$M" --kernels "$tmp/override_only.bc" --input "$E/x.npy" --output-dir "$tmp/o"
expect_error "missing symbol (compile)" "hswish" "$HS" "override_only.bc" -- \
  compile "$M" --kernels "$tmp/override_only.bc" -o "$tmp/b1"
[ -e "$tmp/b1/model.o" ] && fail "a failed compile left model.o behind"
expect_error "missing symbol (info)" "hswish" "$HS" -- info "$M" --kernels "$tmp/override_only.bc"
expect_error "missing symbol, two files" "searched: .*override_only.bc, .*other.bc" -- \
  info "$M" --kernels "$tmp/override_only.bc" --kernels "$tmp/other.bc"
expect_error "too few arguments" "$HS takes 3 arguments, but the instruction passes 8" "hswish" "few_args.bc" -- \
  compile "$M" --kernels "$tmp/few_args.bc" -o "$tmp/b2"
expect_error "wrong argument type" "$HS" "argument 6" "float" "hswish" "bad_type.bc" -- \
  run "$M" --kernels "$tmp/bad_type.bc" --input "$E/x.npy" --output-dir "$tmp/o"
expect_error "override with another signature" "bad_override.bc" "qllc_k_relu_f32_f32" "built-in kernel" -- \
  run "$M" --kernels "$tmp/bad_override.bc" --input "$E/x.npy" --output-dir "$tmp/o"
expect_error "the same function in two files" "override_only.bc" "qllc_k_relu_f32_f32" "also defined" -- \
  run "$M" --kernels "$tmp/good_x86_64.bc" --kernels "$tmp/override_only.bc" --input "$E/x.npy" --output-dir "$tmp/o"
expect_error "aarch64 bitcode for x86_64" "good_aarch64.bc" "aarch64" "--target=x86_64" -- \
  compile "$M" --kernels "$tmp/good_aarch64.bc" -o "$tmp/b3"
expect_error "x86_64 bitcode for aarch64" "good_x86_64.bc" "x86_64" "--target=aarch64" -- \
  compile "$M" --target aarch64 --kernels "$tmp/good_x86_64.bc" -o "$tmp/b4"
expect_error "not bitcode" "good.c" "not LLVM bitcode" -- \
  run "$M" --kernels "$tmp/good.c" --input "$E/x.npy" --output-dir "$tmp/o"
expect_error "missing file" "nonexistent.bc" -- \
  run "$M" --kernels "$tmp/nonexistent.bc" --input "$E/x.npy" --output-dir "$tmp/o"
if command -v clang-14 >/dev/null; then
  clang-14 -O2 -emit-llvm -c -I"$INC" "$E/kernels.c" -o "$tmp/llvm14.bc" || fail "clang-14 failed"
  expect_error "LLVM 14 bitcode" "llvm14.bc" "LLVM14" "qllc uses LLVM 19" "clang-19" -- \
    run "$M" --kernels "$tmp/llvm14.bc" --input "$E/x.npy" --output-dir "$tmp/o"
  expect_error "LLVM 14 bitcode (compile)" "llvm14.bc" "LLVM14" -- compile "$M" --kernels "$tmp/llvm14.bc" -o "$tmp/b5"
else
  echo "note: clang-14 not found: no real foreign-version bitcode tested here"
fi
expect_error "custom op without value_info" "hswish" "'h' has no type and shape" "value_info" -- \
  info "$E/model_no_value_info.onnx" --kernels "$tmp/good_x86_64.bc"
expect_error "string attribute" "hswish" "attribute 'mode'" -- \
  info "$E/model_string_attr.onnx" --kernels "$tmp/good_x86_64.bc"
# and the good file works for both targets (the errors above are not the files' fault)
"$QLLC" compile "$M" --kernels "$tmp/good_x86_64.bc" -o "$tmp/ok" >/dev/null 2>&1 || fail "good x86_64 file rejected"
"$QLLC" compile "$M" --target aarch64 --kernels "$tmp/good_aarch64.bc" -o "$tmp/ok_a" >/dev/null 2>&1 ||
  fail "good aarch64 file rejected"

[ $fails -eq 0 ] && echo "kernel_errors: all checks passed"
exit $((fails > 0))
