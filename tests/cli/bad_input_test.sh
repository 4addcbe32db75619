#!/bin/bash
# tests/cli/bad_input_test.sh: bad input gives a non-zero exit, exactly ONE line on stderr of the form
# `qllc: error: <file>: [node '<node>': ]<message>` naming the right file (and node where there is one),
# and no partial bundle: every failing compile targets a fresh directory that must not exist afterwards.
: "${QLLC:?}" "${QLLC_SOURCE_DIR:?}"
. "$QLLC_SOURCE_DIR/tests/lib.sh"
D=$QLLC_SOURCE_DIR/tests/cli/data

# expect_error WANT_RC NEEDLE1 [NEEDLE2 ...] -- qllc-args...  (WANT_RC "nz": any non-zero)
expect_error() {
  local want_rc=$1; shift
  local needles=()
  while [ "$1" != "--" ]; do needles+=("$1"); shift; done
  shift
  timeout 20 "$QLLC" "$@" >"$tmp/out" 2>"$tmp/err"; local rc=$?  # 124 (timed out) or >= 128 (a signal) fail
  local what="qllc $*"
  if [ "$want_rc" = nz ]; then [ $rc -ne 0 ] || fail "$what: exit 0"; else [ $rc -eq "$want_rc" ] || fail "$what: exit $rc, want $want_rc"; fi
  [ "$(wc -l <"$tmp/err")" -eq 1 ] || fail "$what: stderr is not one line: [$(cat "$tmp/err")]"
  grep -q '^qllc: error: ' "$tmp/err" || fail "$what: stderr does not start with 'qllc: error: ': $(cat "$tmp/err")"
  for n in "${needles[@]}"; do grep -qF -- "$n" "$tmp/err" || fail "$what: stderr lacks '$n': $(cat "$tmp/err")"; done
  echo "ok: $(cat "$tmp/err")"
}
# the directory a failed compile was pointed at must not exist (it was fresh before)
no_bundle() { [ ! -e "$1" ] || fail "partial bundle left in $1: $(ls -A "$1" | tr '\n' ' ')"; }

# ---- model files ----
head -c 700 "$D/small.onnx" >"$tmp/truncated.onnx"
expect_error 1 truncated.onnx -- run "$tmp/truncated.onnx" --input "$D/small_x.npy" --output-dir "$tmp/o1"
expect_error 1 truncated.onnx -- compile "$tmp/truncated.onnx" -o "$tmp/b_trunc"
no_bundle "$tmp/b_trunc"

cp "$D/small.onnx" "$tmp/corrupt.onnx"   # overwrite the start (model header and graph tag) with 0xff
printf '\xff%.0s' $(seq 1 48) | dd of="$tmp/corrupt.onnx" bs=1 seek=0 conv=notrunc status=none
expect_error 1 corrupt.onnx -- compile "$tmp/corrupt.onnx" -o "$tmp/b_corrupt"
no_bundle "$tmp/b_corrupt"
echo "this is not an ONNX model" >"$tmp/text.onnx"
expect_error 1 text.onnx -- info "$tmp/text.onnx"
: >"$tmp/empty.onnx"
expect_error 1 empty.onnx -- info "$tmp/empty.onnx"

# a Pad (mode edge) whose per-axis index map would pass the 1 GiB constant limit (fuzz_compile's input):
# an error naming the node, before the 34 GB allocation, and no bundle
R=$QLLC_SOURCE_DIR/tests/fuzz/regress/fuzz_compile/pad_edge_index_map_4g_positions.onnx
expect_error 1 pad_edge_index_map_4g_positions.onnx "node '/edge/Pad'" "needs an index map of" "1073741824 bytes a constant may have" \
  -- compile "$R" -o "$tmp/b_padmap"
no_bundle "$tmp/b_padmap"

expect_error 1 nonexistent.onnx -- run "$tmp/nonexistent.onnx"
expect_error 1 nonexistent.onnx -- compile "$tmp/nonexistent.onnx" -o "$tmp/b_nonexistent"
no_bundle "$tmp/b_nonexistent"

expect_error 1 unsupported.onnx "logsoftmax_node" "LogSoftmax" -- compile "$D/unsupported.onnx" -o "$tmp/b_unsupported"
no_bundle "$tmp/b_unsupported"
expect_error 1 unsupported.onnx "logsoftmax_node" -- run "$D/unsupported.onnx"

# ---- input files ----
expect_error 1 small_x_bad_shape.npy "'x'" "1 x 2 x 5 x 5" "1 x 2 x 5 x 4" -- \
  run "$D/small.onnx" --input "$D/small_x_bad_shape.npy" --output-dir "$tmp/o2"
# the inputs are checked before the model is compiled (a batch of 1048576 once cost a 50 s compile
# first): with an option the compile would refuse, the input's error is the one reported
expect_error 1 small_x_bad_shape.npy "1 x 2 x 5 x 4" -- \
  run "$D/small.onnx" --precision int8 --input "$D/small_x_bad_shape.npy" --output-dir "$tmp/o2"
expect_error 1 small_x_int32.npy "'x'" "f32" "i32" -- run "$D/small.onnx" --input "x=$D/small_x_int32.npy" --output-dir "$tmp/o3"
expect_error 1 two_io.onnx "missing input 'b'" -- run "$D/two_io.onnx" --input "a=$D/two_io_a.npy" --output-dir "$tmp/o4"
expect_error 1 small.onnx "missing input 'x'" -- run "$D/small.onnx" --output-dir "$tmp/o5"
expect_error 1 small.onnx "'nosuch'" -- run "$D/small.onnx" --input "nosuch=$D/small_x.npy" --output-dir "$tmp/o6"
expect_error 1 small.onnx "2 input files" -- run "$D/small.onnx" --input "$D/small_x.npy" --input "$D/small_x.npy"
expect_error 1 missing.npy -- run "$D/small.onnx" --input "$tmp/missing.npy" --output-dir "$tmp/o7"
head -c 20 "$D/small_x.npy" >"$tmp/cut.npy"
expect_error 1 cut.npy -- run "$D/small.onnx" --input "$tmp/cut.npy" --output-dir "$tmp/o8"
for o in o1 o2 o3 o4 o5 o6 o7 o8; do no_bundle "$tmp/$o"; done

# ---- output folder ----
: >"$tmp/regular_file"
expect_error 1 "$tmp/regular_file/out" -- compile "$D/small.onnx" -o "$tmp/regular_file/out"
expect_error 1 "$tmp/a/b/c" -- compile "$D/small.onnx" -o "$tmp/a/b/c"     # only one level is created
no_bundle "$tmp/a"
expect_error 1 "$tmp/regular_file" -- compile "$D/small.onnx" -o "$tmp/regular_file"
[ -s "$tmp/regular_file" ] && fail "compile wrote into a regular file"
expect_error 1 "regular_file" -- run "$D/small.onnx" --input "$D/small_x.npy" --output-dir "$tmp/regular_file/sub"
# run creates a nested output folder (mkdir -p): it only ever writes the outputs there
"$QLLC" run "$D/small.onnx" --input "$D/small_x.npy" --output-dir "$tmp/n1/n2/n3" >/dev/null 2>&1 &&
  [ -n "$(ls "$tmp/n1/n2/n3"/*.npy 2>/dev/null)" ] || fail "run --output-dir did not create nested folders"

# ---- target options ----
expect_error 2 "--target" "x86_64, aarch64" -- compile "$D/small.onnx" -o "$tmp/b_target" --target sparc
no_bundle "$tmp/b_target"
expect_error 1 small.onnx "no-such-cpu" -- compile "$D/small.onnx" -o "$tmp/b_cpu" --cpu no-such-cpu
no_bundle "$tmp/b_cpu"
expect_error 1 small.onnx "nosuchfeature" -- compile "$D/small.onnx" -o "$tmp/b_feat" --features +nosuchfeature
no_bundle "$tmp/b_feat"
expect_error 1 small.onnx "aarch64" -- run "$D/small.onnx" --input "$D/small_x.npy" --target aarch64 --output-dir "$tmp/o9"
expect_error 1 small.onnx "bogus_pass" -- info "$D/small.onnx" --dump-after bogus_pass
expect_error 1 "Bad-Name" -- compile "$D/small.onnx" -o "$tmp/b_name" --name Bad-Name
no_bundle "$tmp/b_name"
expect_error 1 small.onnx -- compile "$D/small.onnx" -o "$tmp/b_q" --precision int8
no_bundle "$tmp/b_q"

# user kernel files: these fail late (in code generation, after the directory exists)
echo "not bitcode" >"$tmp/bad.bc"
expect_error 1 bad.bc -- compile "$D/small.onnx" -o "$tmp/b_kbad" --kernels "$tmp/bad.bc"
no_bundle "$tmp/b_kbad"
expect_error 1 nonexistent.bc -- compile "$D/small.onnx" -o "$tmp/b_knone" --kernels "$tmp/nonexistent.bc"
no_bundle "$tmp/b_knone"

# the bundle contract on user kernels (docs/kernels.md): nothing from the host but memcpy/memset, no
# state, no constructors; each refused with the file and the symbol named, nothing written
kc() { # NAME C-SOURCE: NAME.bc, made the way docs/kernels.md says
  printf '%s\n' "$2" >"$tmp/$1.c" && clang-19 -O2 -ffp-contract=off -emit-llvm -c "$tmp/$1.c" -o "$tmp/$1.bc" ||
    fail "clang-19 could not build $1.c"
}
kc k_puts '#include <stdio.h>
void helper(void) { puts("hi"); }'
kc k_expf 'float helper(float x) { return __builtin_expf(x); }'
kc k_global 'int calls; void helper(void) { calls++; }'
kc k_static 'int helper(void) { static int n; return ++n; }'
kc k_extern 'extern int table[4]; int helper(int i) { return table[i & 3]; }'
kc k_tls '_Thread_local const int t = 3; int helper(void) { return t; }'
kc k_ctor '__attribute__((constructor)) static void init(void) {} void helper(void) {}'
kc k_ok 'void helper(int *x) { static const int t[4] = {1, 2, 3, 4}; for (int i = 0; i < 4; i++) x[i] = t[i];
__builtin_memset(x + 4, 0, 64); }'
for k in "k_puts:calls puts" "k_expf:calls expf" "k_global:writable global 'calls'" "k_static:writable global" \
  "k_extern:global 'table' defined elsewhere" "k_tls:thread-local" "k_ctor:constructors"; do
  expect_error 1 "${k%%:*}.bc" "${k#*:}" -- compile "$D/small.onnx" --kernels "$tmp/${k%%:*}.bc" -o "$tmp/b_${k%%:*}"
  no_bundle "$tmp/b_${k%%:*}"
done
"$QLLC" compile "$D/small.onnx" --kernels "$tmp/k_ok.bc" -o "$tmp/b_k_ok" --quiet >/dev/null ||
  fail "a kernel file keeping to the contract (constant table, memset) was refused"

# a kernel file LLVM's reader crashed on (one byte changed; tests/fuzz/regress/fuzz_kernels): read in a
# child process, it is an error naming the file, not a crash of qllc
expect_error 1 lazy_reader_segv.bin "corrupt kernel file" -- compile "$D/small.onnx" -o "$tmp/b_kcrash" \
  --kernels "$QLLC_SOURCE_DIR/tests/fuzz/regress/fuzz_kernels/lazy_reader_segv.bin"
no_bundle "$tmp/b_kcrash"

# a failing compile into an existing directory leaves its contents alone and adds nothing
mkdir "$tmp/keep" && echo old >"$tmp/keep/unsupported.h" && echo old >"$tmp/keep/small.h"
expect_error 1 logsoftmax_node -- compile "$D/unsupported.onnx" -o "$tmp/keep"
expect_error 1 bad.bc -- compile "$D/small.onnx" -o "$tmp/keep" --kernels "$tmp/bad.bc"
[ "$(ls -A "$tmp/keep" | tr '\n' ' ')" = "small.h unsupported.h " ] && [ "$(cat "$tmp/keep/small.h")" = old ] ||
  fail "failed compile changed an existing directory: $(ls -A "$tmp/keep" | tr '\n' ' ')"

# ---- inputs that never end or are too large: a bounded read and one error line (docs/limits.md) ----
"$QLLC" profile "$D/small.onnx" --dataset "$D/small_x.npy" -o "$tmp/small.yaml" >/dev/null 2>&1 || fail "qllc profile small.onnx"
expect_error 1 /dev/zero "not a valid ONNX model" -- info /dev/zero
expect_error 1 /dev/zero "kernel file is larger than the limit of 268435456 bytes" -- \
  compile "$D/small.onnx" --kernels /dev/zero -o "$tmp/b_kzero"
no_bundle "$tmp/b_kzero"
expect_error 1 /dev/zero "precision map is larger than the limit of 268435456 bytes" -- \
  compile "$D/small.onnx" --precision int8 --profile "$tmp/small.yaml" --precision-map /dev/zero -o "$tmp/b_mzero"
no_bundle "$tmp/b_mzero"
# corrupt precision maps are refused, not half-used: no graph_hash (it would fit any model), a node or
# the hash given twice (the last would win), a malformed hash
hash=$(sed -n 's/^graph_hash: "\(.*\)"$/\1/p' "$tmp/small.yaml")
[ ${#hash} = 16 ] || fail "no graph_hash in the profile"
printf 'qllc-precision-map 1\nnode conv1 int16\n' >"$tmp/m_nohash.txt"
printf 'qllc-precision-map 1\ngraph_hash %s\nnode conv1 int16\nnode conv1 int8\n' "$hash" >"$tmp/m_twice.txt"
printf 'qllc-precision-map 1\ngraph_hash %s\ngraph_hash %s\n' "$hash" "$hash" >"$tmp/m_hash2.txt"
printf 'qllc-precision-map 1\ngraph_hash %szz\n' "$hash" >"$tmp/m_badhash.txt"
for m in "m_nohash.txt:no 'graph_hash' line" "m_twice.txt:4: node 'conv1' is given twice" \
  "m_hash2.txt:3: a second 'graph_hash' line" "m_badhash.txt:2: expected 'graph_hash' and 16 hex digits"; do
  expect_error 1 "${m#*:}" -- compile "$D/small.onnx" --precision int8 --profile "$tmp/small.yaml" \
    --precision-map "$tmp/${m%%:*}" -o "$tmp/b_map"
  no_bundle "$tmp/b_map"
done
printf 'qllc-precision-map 1\ngraph_hash %s\nnode conv1 int16\n' "$hash" >"$tmp/m_good.txt"
"$QLLC" compile "$D/small.onnx" --precision int8 --profile "$tmp/small.yaml" --precision-map "$tmp/m_good.txt" \
  -o "$tmp/b_map" --quiet >/dev/null || fail "a well-formed precision map was refused"
expect_error 1 /dev/zero "profile is larger than the limit of 268435456 bytes" -- \
  compile "$D/small.onnx" --precision int8 --profile /dev/zero -o "$tmp/b_pzero"
no_bundle "$tmp/b_pzero"
expect_error 1 /dev/zero "neither a .npy file nor an ONNX TensorProto" -- run "$D/small.onnx" --input /dev/zero
expect_error 1 /dev/zero "tuning cache is larger than the limit of 268435456 bytes" -- \
  run "$D/small.onnx" --input "$D/small_x.npy" --precision int8 --profile "$tmp/small.yaml" --cpu native \
  --tune-cache /dev/zero --output-dir "$tmp/o_tzero"
# a .npy header that promises 16 bytes, then a stream of them: read up to its size plus 64 KiB
printf '\x93NUMPY\x01\x00\x76\x00' >"$tmp/head.npy"
printf "{'descr': '<f4', 'fortran_order': False, 'shape': (1, 4), }%*s\n" 58 '' >>"$tmp/head.npy"
mkfifo "$tmp/fifo.npy"
(cat "$tmp/head.npy"; cat /dev/zero) >"$tmp/fifo.npy" 2>/dev/null &
feeder=$!
expect_error 1 fifo.npy "tensor file is larger than the limit of 65680 bytes" -- run "$D/small.onnx" --input "$tmp/fifo.npy"
kill $feeder 2>/dev/null; wait $feeder 2>/dev/null
# a regular .npy with more than 64 KiB after its data is refused by size; one with a few bytes more loads
head -c 70000 /dev/zero | cat "$tmp/head.npy" - >"$tmp/long.npy"
expect_error 1 long.npy "tensor file is larger than the limit of 65680 bytes" -- run "$D/small.onnx" --input "$tmp/long.npy"

finish bad_input_test
