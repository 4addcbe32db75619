#!/bin/bash
# tests/cli/help_test.sh: every command's help exits 0 and tells the truth.
#  - `qllc CMD --help`, `qllc CMD -h` and `qllc help CMD` exit 0 and print the same text;
#  - each command's help mentions every option the docs promise for it;
#  - every "--option" string in the tool's sources appears in some command's help (nothing parsed
#    silently), and every option a help lists is accepted by that command's parser;
#  - bad flag values and unknown options are usage errors (exit 2) with one line naming the flag.
: "${QLLC:?}" "${QLLC_SOURCE_DIR:?}"
. "$QLLC_SOURCE_DIR/tests/lib.sh"

"$QLLC" --help >"$tmp/top" 2>&1 || fail "qllc --help exit $?"
for c in run compile info profile compare bench; do grep -q "$c" "$tmp/top" || fail "qllc --help does not list '$c'"; done
"$QLLC" --version >"$tmp/ver" 2>&1 || fail "qllc --version exit $?"
grep -q '^qllc [0-9]' "$tmp/ver" || fail "qllc --version prints: $(cat "$tmp/ver")"

quant="--profile --precision --weight-precision --schema --calibration --per-tensor --keep-float --strict --quantized-io"
target="--target --cpu --features --kernels"
declare -A want=(
  [run]="--input --dataset --output --output-dir --input-shape --const --dump-after --help $quant $target"
  [bench]="--input --runs --warmup --csv --input-shape --const --help $quant $target"
  [compile]="--output -o --name --reloc --weights --verbose --dump-after --help $quant $target"
  [info]="--dump-after --help $quant"
  [profile]="--dataset -d --output -o --bins --help"
  [compare]="--dataset -d --samples --top --csv --help $quant"
)
for c in run compile info profile compare bench; do
  "$QLLC" "$c" --help >"$tmp/$c" 2>&1 || fail "qllc $c --help exit $?"
  "$QLLC" "$c" -h >"$tmp/$c.h" 2>&1 || fail "qllc $c -h exit $?"
  "$QLLC" help "$c" >"$tmp/$c.help" 2>&1 || fail "qllc help $c exit $?"
  cmp -s "$tmp/$c" "$tmp/$c.h" || fail "qllc $c -h differs from --help"
  cmp -s "$tmp/$c" "$tmp/$c.help" || fail "qllc help $c differs from qllc $c --help"
  for o in ${want[$c]}; do
    grep -qE -- "(^|[ ,])$o([ ,=]|$)" "$tmp/$c" || fail "qllc $c --help does not mention $o"
  done
  # every option the help lists is accepted by the parser (a usage error would exit 2 naming it)
  for o in $(grep -oE -- '(^|[ ,])--[a-z][a-z0-9-]*' "$tmp/$c" | tr -d ' ,' | sort -u); do
    out=$("$QLLC" "$c" "$o" x 2>&1 </dev/null)
    if echo "$out" | grep -q "unknown option"; then fail "qllc $c lists $o but rejects it: $out"; fi
  done
done
cat "$tmp/run" "$tmp/compile" "$tmp/info" "$tmp/profile" "$tmp/compare" "$tmp/bench" "$tmp/top" >"$tmp/all"

# every option string in the tool's sources is documented somewhere
for o in $(grep -ohE '"--[a-z][a-z0-9-]*' "$QLLC_SOURCE_DIR"/tools/qllc/*.c | tr -d '"' | sort -u); do
  grep -qE -- "(^|[ ,])$o([ ,=]|$)" "$tmp/all" || fail "option $o is parsed but no help mentions it"
done

# usage errors: exit 2, one line, naming the flag (and the valid values for enumerations)
check_usage() { # expected-substring args...
  local want=$1; shift
  "$QLLC" "$@" >"$tmp/out" 2>"$tmp/err"; local rc=$?
  [ $rc -eq 2 ] || fail "qllc $* exit $rc, want 2"
  [ "$(wc -l <"$tmp/err")" -eq 1 ] || fail "qllc $*: stderr is not one line: $(cat "$tmp/err")"
  grep -qF -- "$want" "$tmp/err" || fail "qllc $*: stderr lacks '$want': $(cat "$tmp/err")"
}
m=$QLLC_SOURCE_DIR/tests/cli/data/small.onnx
check_usage "--precision" compile "$m" -o "$tmp/b" --precision int4
check_usage "float, int8, int16" compile "$m" -o "$tmp/b" --precision int4
check_usage "--schema" info "$m" --schema weird
check_usage "asymmetric, symmetric, symmetric_uint8, power2" info "$m" --schema weird
check_usage "--calibration" run "$m" --calibration avg
check_usage "--weight-precision" run "$m" --weight-precision float
check_usage "--target" compile "$m" -o "$tmp/b" --target riscv
check_usage "x86_64, aarch64" compile "$m" -o "$tmp/b" --target=riscv
check_usage "--reloc" compile "$m" -o "$tmp/b" --reloc dynamic
check_usage "--weights" compile "$m" -o "$tmp/b" --weights cloud
check_usage "--bogus" run "$m" --bogus
check_usage "--output" info "$m" --output x      # compile-only option
check_usage "-o DIR" compile "$m"                # missing -o
check_usage "MODEL" run
check_usage "--input" run "$m" --input
check_usage "frobnicate" frobnicate
check_usage "-o profile.yaml" profile "$m" --dataset x.npy           # missing -o
check_usage "--dataset" profile "$m" -o "$tmp/p.yaml"                # missing --dataset
check_usage "--bins" profile "$m" --dataset x.npy -o "$tmp/p.yaml" --bins 7
check_usage "--precision" profile "$m" --dataset x.npy -o "$tmp/p.yaml" --precision int8
[ -e "$tmp/b" ] && fail "a usage error created the output directory"

finish help_test
