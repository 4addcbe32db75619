#!/bin/bash
# tests/ext/custom_kernel_test.sh: issue 7's example, examples/custom_kernel, end to end.
#
# The model (examples/custom_kernel/model.onnx, made by make_model.py) has a custom op com.acme:HardSwish
# and a Relu; examples/custom_kernel/kernels.c implements the custom op and overrides the built-in Relu
# kernel with a leaky one. CMake builds kernels.c to bitcode for x86_64 and aarch64 (custom_kernel.cmake).
# Checked, each against the numpy reference y_ref.npy (computed at generation time, float32 in the
# kernels' operation order; atol 1e-5):
#   1. `qllc run --kernels` (the JIT on this machine);
#   2. an x86_64 bundle (`qllc compile --kernels`) linked by gcc with tests/cli/data/bundle_main.c;
#   3. an aarch64 bundle linked by aarch64-linux-gnu-gcc and run under qemu-aarch64 (skipped, not failed,
#      when the cross tools are missing; the rest still runs);
#   4. the override really ran: every output differs from y_builtin_ref.npy (what the built-in Relu
#      gives), and `qllc info --kernels` and the bundle header say which nodes run user kernels;
#   5. without --kernels the custom node is an error naming the node and the function it needs;
#   6. int8: `qllc profile --kernels` runs the float model with the user kernels; the quantized bundle's
#      header says why the custom op stays float and that it runs a user kernel; --strict refuses it.
: "${QLLC:?}" "${QLLC_SOURCE_DIR:?}" "${QLLC_BUILD_DIR:?}"
. "$QLLC_SOURCE_DIR/tests/lib.sh"
E=$QLLC_SOURCE_DIR/examples/custom_kernel
BC=$QLLC_BUILD_DIR/examples/custom_kernel
CC=${CC:-gcc}
ACC=${AARCH64_CC:-aarch64-linux-gnu-gcc}
QEMU="qemu-aarch64 -L /usr/aarch64-linux-gnu"
[ -f "$BC/kernels_x86_64.bc" ] && [ -f "$BC/kernels_aarch64.bc" ] || {
  echo "FAIL: $BC/kernels_<arch>.bc not built (target custom_kernel_bitcode)"; exit 1; }
"$CC" -O2 -o "$tmp/npycmp" "$QLLC_SOURCE_DIR/tests/models/npycmp.c" -lm || { echo "cannot build npycmp"; exit 1; }
close() { # ACTUAL EXPECTED ATOL what
  "$tmp/npycmp" "$1" "$2" "$3" 0 >"$tmp/cmp" 2>&1 || fail "$4: $(cat "$tmp/cmp")"
  echo "$4: $(tail -1 "$tmp/cmp")"
}
differs() { # ACTUAL OTHER what: every element must differ by more than 1e-3
  "$tmp/npycmp" "$1" "$2" 1e-3 0 >"$tmp/cmp" 2>&1 && fail "$3: output equals the built-in Relu's result"
  grep -q 'out_of_tol 8/8' "$tmp/cmp" || fail "$3: expected all 8 outputs to differ: $(cat "$tmp/cmp")"
}
driver_src=$QLLC_SOURCE_DIR/tests/cli/data/bundle_main.c

# ---- 1. JIT ----
"$QLLC" run "$E/model.onnx" --kernels "$BC/kernels_x86_64.bc" --input "$E/x.npy" --output-dir "$tmp/jit" \
  >"$tmp/run.out" 2>&1 || fail "qllc run --kernels: $(cat "$tmp/run.out")"
close "$tmp/jit/y.npy" "$E/y_ref.npy" 1e-5 "JIT vs numpy"
differs "$tmp/jit/y.npy" "$E/y_builtin_ref.npy" "JIT"

# ---- 2. x86_64 bundle ----
"$QLLC" compile "$E/model.onnx" --kernels "$BC/kernels_x86_64.bc" -o "$tmp/bx" --name ck >"$tmp/c.out" 2>&1 ||
  fail "qllc compile --kernels (x86_64): $(cat "$tmp/c.out")"
"$CC" -std=c11 -O1 -I"$tmp/bx" -DBUNDLE=ck -DBUNDLE_HEADER='"ck.h"' "$driver_src" "$tmp/bx/ck.o" -o "$tmp/drv" ||
  fail "gcc could not link the x86_64 bundle"
"$tmp/drv" - "$E/x.npy" "$tmp/y_x86.npy" || fail "x86_64 bundle driver failed"
close "$tmp/y_x86.npy" "$E/y_ref.npy" 1e-5 "x86_64 bundle vs numpy"
differs "$tmp/y_x86.npy" "$E/y_builtin_ref.npy" "x86_64 bundle"
undef=$(nm -u "$tmp/bx/ck.o" | awk '{print $2}' | grep -vE '^(memcpy|memset|memmove)$' || true)
[ -z "$undef" ] || fail "ck.o references: $undef"
grep -q 'node hswish (HardSwish): qllc_k_custom_com_acme_HardSwish_f32_f32: user kernel (.*kernels_x86_64.bc)' \
  "$tmp/bx/ck.h" || fail "ck.h does not say that hswish runs a user kernel"
grep -q 'node relu (Relu): qllc_k_relu_f32_f32: user kernel' "$tmp/bx/ck.h" ||
  fail "ck.h does not say that relu runs a user kernel"

# ---- 3. aarch64 bundle under qemu ----
if command -v "$ACC" >/dev/null && command -v qemu-aarch64 >/dev/null; then
  "$QLLC" compile "$E/model.onnx" --target aarch64 --kernels "$BC/kernels_aarch64.bc" -o "$tmp/ba" --name ck \
    >"$tmp/ca.out" 2>&1 || fail "qllc compile --target aarch64 --kernels: $(cat "$tmp/ca.out")"
  "$ACC" -std=c11 -O1 -I"$tmp/ba" -DBUNDLE=ck -DBUNDLE_HEADER='"ck.h"' "$driver_src" "$tmp/ba/ck.o" \
    -o "$tmp/drv_a" || fail "$ACC could not link the aarch64 bundle"
  $QEMU "$tmp/drv_a" - "$E/x.npy" "$tmp/y_a64.npy" || fail "aarch64 bundle driver failed under qemu"
  close "$tmp/y_a64.npy" "$E/y_ref.npy" 1e-5 "aarch64 bundle (qemu) vs numpy"
  close "$tmp/y_a64.npy" "$tmp/y_x86.npy" 0 "aarch64 bundle vs x86_64 bundle (exact)"
else
  echo "note: $ACC or qemu-aarch64 missing: the aarch64 bundle is not run"
fi

# ---- 4. the report of `qllc info` ----
"$QLLC" info "$E/model.onnx" --kernels "$BC/kernels_x86_64.bc" >"$tmp/info" 2>&1 || fail "qllc info --kernels"
grep -q '^== user kernels ==' "$tmp/info" || fail "info has no user kernels section"
grep -q 'node relu (Relu): qllc_k_relu_f32_f32: user kernel (.*kernels_x86_64.bc)' "$tmp/info" ||
  fail "info does not mark relu as a user kernel"
grep -q 'node hswish (HardSwish): qllc_k_custom_com_acme_HardSwish_f32_f32: user kernel' "$tmp/info" ||
  fail "info does not mark hswish as a user kernel"
grep -q 'node add (Add).*user kernel' "$tmp/info" && fail "info marks a built-in kernel as a user kernel"

# ---- 5. no --kernels: a clear error, not a crash ----
"$QLLC" run "$E/model.onnx" --input "$E/x.npy" --output-dir "$tmp/nok" >"$tmp/nok.out" 2>&1
rc=$?
[ $rc -eq 1 ] || fail "run without --kernels: exit $rc, expected 1: $(cat "$tmp/nok.out")"
grep -q "hswish.*no function qllc_k_custom_com_acme_HardSwish_f32_f32.*no --kernels files given" "$tmp/nok.out" ||
  fail "run without --kernels: message does not name the node and function: $(cat "$tmp/nok.out")"

# ---- 6. int8: profile with --kernels, then the quantizer keeps the custom op float and says why ----
"$QLLC" profile "$E/model.onnx" --kernels "$BC/kernels_x86_64.bc" --dataset "$E/x.npy" -o "$tmp/p.yaml" \
  >"$tmp/p.out" 2>&1 || fail "qllc profile --kernels: $(cat "$tmp/p.out")"
"$QLLC" profile "$E/model.onnx" --dataset "$E/x.npy" -o "$tmp/p2.yaml" >"$tmp/p2.out" 2>&1 &&
  fail "qllc profile without --kernels succeeded on a model with a custom op"
grep -q "no function qllc_k_custom_com_acme_HardSwish_f32_f32" "$tmp/p2.out" || fail "profile without --kernels: unclear message: $(cat "$tmp/p2.out")"
"$QLLC" compile "$E/model.onnx" --precision int8 --profile "$tmp/p.yaml" --kernels "$BC/kernels_x86_64.bc" \
  -o "$tmp/bq" --name ckq >"$tmp/cq.out" 2>&1 || fail "compile int8 --kernels: $(cat "$tmp/cq.out")"
grep -q 'hswish.*float.*custom op com.acme:HardSwish runs its user kernel in float' "$tmp/bq/ckq.h" ||
  fail "int8 header does not say why hswish stays float"
grep -q 'node hswish (HardSwish): qllc_k_custom_com_acme_HardSwish_f32_f32: user kernel' "$tmp/bq/ckq.h" ||
  fail "int8 header does not list hswish's user kernel"
"$QLLC" compile "$E/model.onnx" --precision int8 --profile "$tmp/p.yaml" --kernels "$BC/kernels_x86_64.bc" \
  --strict -o "$tmp/bqs" >"$tmp/cqs.out" 2>&1 && fail "--strict accepted a custom op left in float"
grep -q hswish "$tmp/cqs.out" || fail "--strict error does not name hswish: $(cat "$tmp/cqs.out")"

[ $fails -eq 0 ] && echo "custom_kernel: all checks passed"
exit $((fails > 0))
