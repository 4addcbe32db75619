#!/bin/bash
# tests/python/python_test.sh: the qllc Python package (python/qllc, docs/python.md).
#   1. `cmake --install` into a temporary prefix; the package found there under the site directory;
#   2. the ctypes structs against the C header's layout (layout.c compiled by gcc, layout.py);
#   3. qllc_test.py (unittest) with that site directory on PYTHONPATH and nothing else;
#   4. the package in the build tree (PYTHONPATH=BUILD/python) loads the build's library.
# Needs python3 with numpy (Debian's python3-numpy, which scripts/bootstrap installs); skipped without.
: "${QLLC:?}" "${QLLC_SOURCE_DIR:?}" "${QLLC_BUILD_DIR:?}"
. "$QLLC_SOURCE_DIR/tests/lib.sh"
S=$QLLC_SOURCE_DIR B=$QLLC_BUILD_DIR
py=/usr/bin/python3
[ -x $py ] || py=$(command -v python3) || { echo "no python3; skipping"; exit 77; }
# a sanitizer build's library needs its runtimes loaded first, which python3 does not do
[ "${QLLC_SANITIZED:-0}" = 1 ] && { echo "the library is built with sanitizers (scripts/test --sanitize): python3 cannot load it; skipping"; exit 77; }
$py -c 'import numpy' 2>/dev/null || { echo "$py has no numpy (Debian: python3-numpy; scripts/bootstrap installs it); skipping"; exit 77; }

cmake --install "$B" --prefix "$tmp/p" >"$tmp/install.log" 2>&1 || { cat "$tmp/install.log"; echo "FAIL: cmake --install"; exit 1; }
init=$(find "$tmp/p" -path '*/qllc/__init__.py' | head -1)
[ -n "$init" ] || { echo "FAIL: no qllc/__init__.py under the prefix"; exit 1; }
site=$(dirname "$(dirname "$init")")
echo "package installed in ${site#$tmp/p/}"

gcc -I "$S/include" -I "$B/include" "$S/tests/python/layout.c" -o "$tmp/layout" && "$tmp/layout" >"$tmp/layout_c.txt" ||
  fail "layout.c"
env -u QLLC_LIBRARY PYTHONPATH="$site" $py "$S/tests/python/layout.py" >"$tmp/layout_py.txt" || fail "layout.py"
diff "$tmp/layout_c.txt" "$tmp/layout_py.txt" || fail "python/qllc/_capi.py's structs differ from include/qllc.h (diff above: C < > ctypes)"

(cd "$tmp" && env -u QLLC_LIBRARY PYTHONPATH="$site" QLLC_PREFIX="$tmp/p" timeout 900 $py "$S/tests/python/qllc_test.py") 2>&1 ||
  fail "qllc_test.py"

lib=$(cd "$tmp" && env -u QLLC_LIBRARY PYTHONPATH="$B/python" $py -c 'import qllc; print(qllc._capi.lib._name)') || fail "import from the build tree"
case $lib in "$B"/*) ;; *) fail "the build tree's package loads '$lib', not the build's library" ;; esac

[ $fails -eq 0 ] && echo "python_test: OK"
exit $((fails > 0))
