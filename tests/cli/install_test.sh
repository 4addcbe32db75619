#!/bin/bash
# tests/cli/install_test.sh: qllc installs like a library (issue 14, item 1; docs/install.md).
#
# `cmake --install` into a temporary prefix, then, using only that prefix:
#   - the layout: bin/qllc, lib/libqllc.so.MAJOR (the SONAME) and libqllc.a, include/ with the public
#     headers only (qllc.h, qllc_version.h, qllc_kernel.h: no internal header), lib/pkgconfig/qllc.pc,
#     lib/cmake/qllc/qllcConfig.cmake + qllcConfigVersion.cmake, share/doc/qllc;
#   - one version: `qllc --version`, qllc_version(), QLLC_VERSION and the bundle header's line all say
#     the version in project() of CMakeLists.txt;
#   - examples/run_model.c built three times, with `pkg-config --cflags --libs qllc` (shared),
#     `pkg-config --static` (libqllc.a and its private libraries), and a CMake project using
#     find_package(qllc 0.3) + qllc::qllc; each runs the sample model on models/digits/sample_0.npy and
#     prints the same logits;
#   - find_package(qllc 9.0) fails (the version file is honoured);
#   - the shared library exports the API of qllc.h and nothing else.
: "${QLLC:?}" "${QLLC_SOURCE_DIR:?}" "${QLLC_BUILD_DIR:?}"
. "$QLLC_SOURCE_DIR/tests/lib.sh"
S=$QLLC_SOURCE_DIR
for t in cc cmake pkg-config nm readelf; do
  command -v $t >/dev/null || { echo "no $t; skipping"; exit 77; }
done
P=$tmp/prefix
# under scripts/test --sanitize the installed libraries are instrumented: link the programs the same way
SAN=()
[ "${QLLC_SANITIZED:-0}" = 1 ] && SAN=(-fsanitize=address,undefined)

want=$(sed -n 's/^project(qllc VERSION \([0-9.]*\).*/\1/p' "$S/CMakeLists.txt")
[ -n "$want" ] || { echo "FAIL: no VERSION in project() of CMakeLists.txt"; exit 1; }
major=${want%%.*}

# the install (qllc and libqllc.so are built by default; build them in case only some targets were)
cmake --build "$QLLC_BUILD_DIR" --target qllc qllc_shared >"$tmp/build.log" 2>&1 ||
  { cat "$tmp/build.log"; echo "FAIL: building qllc qllc_shared"; exit 1; }
cmake --install "$QLLC_BUILD_DIR" --prefix "$P" >"$tmp/install.log" 2>&1 ||
  { cat "$tmp/install.log"; echo "FAIL: cmake --install"; exit 1; }

# ---- the layout ----
for f in bin/qllc lib/libqllc.so.$major lib/libqllc.so lib/libqllc.a include/qllc.h include/qllc_version.h \
         include/qllc_kernel.h lib/pkgconfig/qllc.pc lib/cmake/qllc/qllcConfig.cmake \
         lib/cmake/qllc/qllcConfigVersion.cmake share/doc/qllc/README.md share/doc/qllc/install.md; do
  [ -e "$P/$f" ] || fail "not installed: $f"
done
extra=$(cd "$P/include" && ls | grep -v -x -e qllc.h -e qllc_version.h -e qllc_kernel.h)
[ -z "$extra" ] || fail "internal headers installed: $extra"
soname=$(readelf -d "$P/lib/libqllc.so" | sed -n 's/.*SONAME.*\[\(.*\)\]/\1/p')
[ "$soname" = "libqllc.so.$major" ] || fail "SONAME is '$soname', want libqllc.so.$major"
# exported: exactly the functions qllc.h declares
grep -o '\bqllc_[a-z0-9_]*(' "$P/include/qllc.h" | tr -d '(' | sort -u >"$tmp/api"
nm -D --defined-only "$P/lib/libqllc.so" | awk '$2 == "T" {print $3}' | sed 's/@.*//' | sort -u >"$tmp/exported"
grep -v -x -f "$tmp/exported" "$tmp/api" | grep -v '_fn$' >"$tmp/missing"
[ -s "$tmp/missing" ] && fail "declared in qllc.h but not exported: $(tr '\n' ' ' <"$tmp/missing")"
grep -v -x -f "$tmp/api" "$tmp/exported" >"$tmp/leaked"
[ -s "$tmp/leaked" ] && fail "exported but not in qllc.h: $(head -5 "$tmp/leaked" | tr '\n' ' ')"

# ---- one version ----
got=$("$P/bin/qllc" --version) || fail "installed qllc --version failed"
[ "$got" = "qllc $want" ] || fail "qllc --version says '$got', want 'qllc $want'"
cat >"$tmp/ver.c" <<'C'
#include <qllc.h>
#include <stdio.h>
#include <string.h>
int main(void) {
  printf("%s %s %d\n", QLLC_VERSION, qllc_version(), QLLC_VERSION_MAJOR);
  return strcmp(QLLC_VERSION, qllc_version()) != 0;
}
C
export PKG_CONFIG_PATH=$P/lib/pkgconfig
[ "$(pkg-config --modversion qllc)" = "$want" ] || fail "pkg-config --modversion: $(pkg-config --modversion qllc)"
# shellcheck disable=SC2046
cc "${SAN[@]}" -o "$tmp/ver" "$tmp/ver.c" $(pkg-config --cflags --libs qllc) -Wl,-rpath,"$P/lib" 2>"$tmp/cc.log" ||
  { cat "$tmp/cc.log"; fail "cc ver.c with pkg-config"; }
[ "$("$tmp/ver" 2>&1)" = "$want $want $major" ] || fail "QLLC_VERSION / qllc_version(): $("$tmp/ver" 2>&1)"
"$P/bin/qllc" compile "$S/models/digits/digits.onnx" -o "$tmp/bundle" --name digits >/dev/null ||
  fail "installed qllc compile"
grep -q "^ \* qllc version: $want " "$tmp/bundle/digits.h" || fail "bundle header has no 'qllc version: $want' line"

# ---- examples/run_model.c against the prefix ----
model=$S/models/digits/digits.onnx
x=$S/models/digits/sample_0.npy
run_check() { # NAME EXE
  "$2" "$model" "$x" >"$tmp/$1.out" 2>&1 || { cat "$tmp/$1.out"; fail "$1: run_model exit $?"; return; }
  grep -q '^logits: f32<1 x 10>' "$tmp/$1.out" || { cat "$tmp/$1.out"; fail "$1: no logits line"; return; }
  echo "$1: $(cat "$tmp/$1.out")"
}
# shellcheck disable=SC2046
cc "${SAN[@]}" -O1 -o "$tmp/run_shared" "$S/examples/run_model.c" $(pkg-config --cflags --libs qllc) -Wl,-rpath,"$P/lib" \
  2>"$tmp/cc.log" || { cat "$tmp/cc.log"; fail "cc run_model.c \$(pkg-config --cflags --libs qllc)"; }
readelf -d "$tmp/run_shared" 2>/dev/null | grep -q "NEEDED.*\[libqllc.so.$major\]" ||
  fail "run_shared does not need libqllc.so.$major"
run_check pkgconfig "$tmp/run_shared"
# shellcheck disable=SC2046
cc "${SAN[@]}" -O1 -o "$tmp/run_static" "$S/examples/run_model.c" $(pkg-config --static --cflags qllc) \
  "$P/lib/libqllc.a" $(pkg-config --static --libs-only-other --libs-only-L qllc) \
  $(pkg-config --static --libs-only-l qllc | sed 's/-lqllc\b//') 2>"$tmp/cc.log" ||
  { cat "$tmp/cc.log"; fail "cc run_model.c libqllc.a \$(pkg-config --static --libs qllc)"; }
if readelf -d "$tmp/run_static" 2>/dev/null | grep -q 'libqllc'; then fail "run_static links libqllc dynamically"; fi
run_check pkgconfig_static "$tmp/run_static"

mkdir -p "$tmp/proj"
cat >"$tmp/proj/CMakeLists.txt" <<CM
cmake_minimum_required(VERSION 3.20)
project(uses_qllc C)
find_package(qllc 0.3 REQUIRED)
add_executable(run_model $S/examples/run_model.c)
target_link_libraries(run_model PRIVATE qllc::qllc)
CM
if cmake -S "$tmp/proj" -B "$tmp/proj/build" -DCMAKE_PREFIX_PATH="$P" -DCMAKE_C_FLAGS="${SAN[*]}" >"$tmp/proj.log" 2>&1 &&
   cmake --build "$tmp/proj/build" >>"$tmp/proj.log" 2>&1; then
  run_check cmake "$tmp/proj/build/run_model"
else
  cat "$tmp/proj.log"; fail "the find_package(qllc 0.3) project does not build"
fi
sed -i 's/find_package(qllc 0.3 REQUIRED)/find_package(qllc 9.0 REQUIRED)/' "$tmp/proj/CMakeLists.txt"
if cmake -S "$tmp/proj" -B "$tmp/proj/build9" -DCMAKE_PREFIX_PATH="$P" >"$tmp/proj9.log" 2>&1; then
  fail "find_package(qllc 9.0) succeeded against $want"
fi

# the three programs print the same numbers, and qllc run's output has the same values
for v in pkgconfig_static cmake; do
  [ -f "$tmp/$v.out" ] && ! cmp -s "$tmp/pkgconfig.out" "$tmp/$v.out" && fail "$v prints other logits than pkgconfig"
done
[ $fails -eq 0 ] && echo "install_test: OK (version $want, prefix layout, pkg-config shared/static, find_package)"
exit $((fails > 0))
