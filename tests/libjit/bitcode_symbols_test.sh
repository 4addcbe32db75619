#!/bin/bash
# tests/libjit/bitcode_symbols_test.sh: the embedded kernel bitcode, per target, is what the target
# descriptions claim and what a bundle may link:
#  - no undefined symbol other than memcpy/memset (a bundle links into bare-metal firmware);
#  - every kernel declared in libjit/bitcode/kernels_f32.h is defined;
#  - its triple and data layout equal targets/<arch>/target.c's strings.
# Needs the bitcode built (make qllc_bitcode); skips (77) when it or the LLVM 19 tools are missing.
set -u
: "${QLLC_BUILD_DIR:?}" "${QLLC_SOURCE_DIR:?}"
NM=$(command -v llvm-nm-19 || true)
DIS=$(command -v llvm-dis-19 || true)
CLANG=$(command -v clang-19 || true)
if [ -z "$NM" ] || [ -z "$DIS" ] || [ -z "$CLANG" ]; then echo "skip: llvm-nm-19/llvm-dis-19/clang-19 missing"; exit 77; fi

# The kernel names, from the contract header after macro expansion.
names=$("$CLANG" -E -P -I"$QLLC_SOURCE_DIR/include" "$QLLC_SOURCE_DIR/libjit/bitcode/kernels_f32.h" |
        grep -o 'qllc_k_[A-Za-z0-9_]*' | sort -u)
[ "$(echo "$names" | wc -l)" -ge 30 ] || { echo "FAIL: found only $(echo "$names" | wc -l) kernel names"; exit 1; }

status=0
for arch in x86_64 aarch64; do
  bc="$QLLC_BUILD_DIR/bitcode/libjit_$arch.bc"
  if [ ! -f "$bc" ]; then echo "skip: $bc not built"; exit 77; fi
  undef=$("$NM" --undefined-only "$bc" | awk '{print $NF}' | grep -vx -e memcpy -e memset)
  if [ -n "$undef" ]; then echo "FAIL $arch: undefined symbols: $undef"; status=1; fi
  defined=$("$NM" --defined-only "$bc" | awk '$2 == "T" {print $3}')
  missing=$(comm -23 <(echo "$names") <(echo "$defined" | sort -u))
  if [ -n "$missing" ]; then echo "FAIL $arch: kernels not defined: $missing"; status=1; fi
  ll=$("$DIS" "$bc" -o -)
  want_dl=$(grep -o '\.data_layout = "[^"]*"' "$QLLC_SOURCE_DIR/targets/$arch/target.c" | cut -d'"' -f2)
  want_tt=$(grep -o '\.triple = "[^"]*"' "$QLLC_SOURCE_DIR/targets/$arch/target.c" | cut -d'"' -f2)
  got_dl=$(echo "$ll" | sed -n 's/^target datalayout = "\(.*\)"$/\1/p')
  got_tt=$(echo "$ll" | sed -n 's/^target triple = "\(.*\)"$/\1/p')
  [ -n "$want_dl" ] && [ "$got_dl" = "$want_dl" ] || { echo "FAIL $arch: data layout '$got_dl' != target.c '$want_dl'"; status=1; }
  [ -n "$want_tt" ] && [ "$got_tt" = "$want_tt" ] || { echo "FAIL $arch: triple '$got_tt' != target.c '$want_tt'"; status=1; }
  echo "$arch: $(echo "$defined" | grep -c '^qllc_k_') kernels, undefined: $("$NM" --undefined-only "$bc" | awk '{print $NF}' | tr '\n' ' ')"
done
[ $status -eq 0 ] && echo "PASS"
exit $status
