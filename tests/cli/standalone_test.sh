#!/bin/bash
# tests/cli/standalone_test.sh: the repository stands alone (issue 14, item 2).
#
#  1. No file of the source tree refers to the design notes that lived outside the repository (by
#     file name, by "<notes> section N", or by their sibling directory): what they said is in docs/
#     (docs/bundle.md, docs/numerics.md, docs/quantization.md ...). The patterns are assembled from
#     pieces so that this file does not match them itself; build directories and .git are skipped.
#  2. Every docs/NAME.md that a file names exists, so a pointer cannot dangle either.
set -u
: "${QLLC_SOURCE_DIR:?}"
cd "$QLLC_SOURCE_DIR" || exit 1
fails=0
dirs=()
for d in README.md CMakeLists.txt cmake docs include src tests examples tools libjit targets scripts bench models; do
  [ -e "$d" ] && dirs+=("$d")
done
d=DESI s=STY
pat="\\b${d}GN\\b|\\b${s}LE\\.md|\\.\\./sha""red"
hits=$(grep -rnE "$pat" "${dirs[@]}" --exclude-dir='build*' 2>/dev/null)
if [ -n "$hits" ]; then
  echo "FAIL: references to files outside the repository (point to docs/ instead, or say what is meant):"
  echo "$hits"
  fails=$((fails + 1))
fi

missing=$(grep -rhoE 'docs/[A-Za-z0-9_]+\.(md|svg)' "${dirs[@]}" --exclude-dir='build*' --exclude=standalone_test.sh 2>/dev/null | sort -u |
  while read -r f; do [ -e "$f" ] || echo "$f"; done)
if [ -n "$missing" ]; then
  echo "FAIL: named but missing:"
  for f in $missing; do echo "  $f: $(grep -rlE "$f" "${dirs[@]}" --exclude-dir='build*' | head -3 | tr '\n' ' ')"; done
  fails=$((fails + 1))
fi
[ $fails -eq 0 ] && echo "standalone_test: OK (no reference outside the repository; every docs/*.md named exists)"
exit $((fails > 0))
