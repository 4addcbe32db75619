#!/bin/bash
# tests/cli/ops_doc_test.sh: docs/ops.md is what tools/opsdoc/ops_doc.c makes from the op table
# (src/ir/ops.def), the kernel registry (src/lower/kernels.def) and tools/opsdoc/ops_notes.def
# (issue 14, item 4). Fails when an op was added, a kernel row changed, or a note edited without
# regenerating the page, and when an op has no notes row.
set -u
: "${QLLC_SOURCE_DIR:?}" "${QLLC_BUILD_DIR:?}"
gen=$QLLC_BUILD_DIR/qllc_ops_doc
fix="run 'cmake --build $QLLC_BUILD_DIR --target update_ops_doc' to update docs/ops.md (and commit it)"
cmake --build "$QLLC_BUILD_DIR" --target qllc_ops_doc >/dev/null 2>&1 || { echo "FAIL: cannot build qllc_ops_doc"; exit 1; }
tmp=$(mktemp)
trap 'rm -f "$tmp"' EXIT
if ! "$gen" >"$tmp"; then
  echo "FAIL: an op of src/ir/ops.def has no row in tools/opsdoc/ops_notes.def: add one (float support and"
  echo "      limits), then $fix"
  grep -F '? (no row' "$tmp"
  exit 1
fi
if ! diff -u "$QLLC_SOURCE_DIR/docs/ops.md" "$tmp"; then
  echo "FAIL: docs/ops.md is not current: $fix"
  exit 1
fi
echo "ops_doc_test: OK ($(grep -c '^| `' "$tmp") ops)"
