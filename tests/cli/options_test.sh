#!/bin/bash
# tests/cli/options_test.sh: options that would have no effect, and bundle names whose header would not
# compile, are errors (one line naming the option or the name), never a silently different result:
#   --min-sqnr, --precision-map, --precision-map-out without --precision int8/int16 (the model would stay
#   float); --search-dataset without --min-sqnr; --name a C or C++ keyword, a C library name, a reserved
#   identifier. A good name still compiles, and its header compiles as C and C++.
: "${QLLC:?}" "${QLLC_SOURCE_DIR:?}"
. "$QLLC_SOURCE_DIR/tests/lib.sh"
D=$QLLC_SOURCE_DIR/tests/cli/data
M=$D/small.onnx
"$QLLC" profile "$M" --dataset "$D/small_x.npy" -o "$tmp/p.yaml" >/dev/null 2>&1 || fail "profile"

# expect_error NEEDLE -- ARGS...: exit 1, one line, naming NEEDLE, and no bundle directory left
expect_error() {
  local needle=$1; shift 2
  "$QLLC" "$@" >"$tmp/out" 2>"$tmp/err"; local rc=$?
  if [ $rc -eq 1 ] && [ "$(wc -l <"$tmp/err")" -eq 1 ] && grep -qF -- "$needle" "$tmp/err"; then
    ok "$(cat "$tmp/err")"
  else
    fail "qllc $*: exit $rc, stderr: $(cat "$tmp/err")"
  fi
}
expect_error "--min-sqnr raises layers from int8" -- compile "$M" --min-sqnr 30 -o "$tmp/b1"
expect_error "--precision-map chooses" -- compile "$M" --precision-map "$tmp/none.map" -o "$tmp/b2"
expect_error "--precision-map-out chooses" -- run "$M" --precision-map-out "$tmp/x.map" --input "$D/small_x.npy" --output-dir "$tmp/o"
expect_error "--search-dataset gives --min-sqnr's samples" -- compile "$M" --profile "$tmp/p.yaml" --precision int8 --search-dataset "$D/small_x.npy" -o "$tmp/b3"
[ ! -e "$tmp/x.map" ] && ok "no map file written" || fail "a map file was written"
for n in int while _Bool memcpy main class qllc_io _Foo a__b; do
  expect_error "bundle name '$n' is" -- compile "$M" -o "$tmp/n_$n" --name "$n"
  [ ! -e "$tmp/n_$n" ] || fail "--name $n: a bundle directory was left"
done
# a good name still compiles, and its header is C and C++
"$QLLC" compile "$M" -o "$tmp/good" --name int_model --quiet >/dev/null 2>"$tmp/err" || fail "--name int_model: $(cat "$tmp/err")"
printf '#include "int_model.h"\nint main(void) { return int_model_NUM_INPUTS == 1 ? 0 : 1; }\n' >"$tmp/good/m.c"
cp "$tmp/good/m.c" "$tmp/good/m.cc"
cc -std=c11 -Wall -Werror -I "$tmp/good" -c "$tmp/good/m.c" -o "$tmp/good/m.o" 2>"$tmp/err" &&
  c++ -Wall -Werror -I "$tmp/good" -c "$tmp/good/m.cc" -o "$tmp/good/mm.o" 2>>"$tmp/err" &&
  ok "--name int_model: its header compiles as C and C++" || fail "the header does not compile: $(cat "$tmp/err")"
finish options_test
