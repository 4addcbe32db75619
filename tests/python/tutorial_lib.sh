# tests/python/tutorial_lib.sh: sourced by tutorial_test.sh and tutorial_torch_test.sh. Runs the python
# blocks of docs/tutorial.md's step 10 ("## 10. ..." up to the next "## ") in one interpreter, from a
# scratch copy of the repository's root (models/ linked, tutorial/ made as step 0 does), with the build
# tree's package (BUILD/python) on PYTHONPATH; then every line of the section's ```text blocks must be a
# line the script printed. $1: "plain" (the blocks without torch) or "torch" (all, torch's last).
run_tutorial_python() {
  local mode=$1
  : "${QLLC_SOURCE_DIR:?}" "${QLLC_BUILD_DIR:?}"
  local S=$QLLC_SOURCE_DIR B=$QLLC_BUILD_DIR py=/usr/bin/python3
  [ -x $py ] || py=$(command -v python3) || { echo "no python3; skipping"; return 77; }
  # a sanitizer build's library needs its runtimes loaded first, which python3 does not do
  [ "${QLLC_SANITIZED:-0}" = 1 ] && { echo "the library is built with sanitizers (scripts/test --sanitize): python3 cannot load it; skipping"; return 77; }
  $py -c 'import numpy' 2>/dev/null || { echo "$py has no numpy (Debian: python3-numpy; scripts/bootstrap installs it); skipping"; return 77; }
  if [ "$mode" = torch ]; then
    $py -c 'import torch, onnx' 2>/dev/null ||
      { echo "$py has no torch or onnx (Debian: python3-torch python3-onnx; scripts/bootstrap --dev); skipping the PyTorch block"; return 77; }
  fi
  local tmp
  tmp=$(mktemp -d)
  mkdir -p "$tmp/root/tutorial"
  ln -s "$S/models" "$tmp/root/models"
  # the section's python blocks, one file each; which need torch
  awk -v dir="$tmp" '/^## / {sec = /^## 10\./} sec && /^```python[[:space:]]*$/ {on = 1; f = sprintf("%s/block%02d.py", dir, ++n); next}
       sec && on && /^```/ {on = 0; next} on {print > f}' "$S/docs/tutorial.md"
  awk '/^## / {sec = /^## 10\./} sec && /^```text[[:space:]]*$/ {on = 1; next} sec && on && /^```/ {on = 0; next} on {print}' \
    "$S/docs/tutorial.md" >"$tmp/want.txt"
  local blocks=() torch=0 b
  for b in "$tmp"/block*.py; do
    if grep -q '^import torch' "$b"; then
      torch=$((torch + 1))
      [ "$mode" = torch ] && blocks+=("$b")
    else
      blocks+=("$b")
    fi
  done
  local rc=0
  if [ ${#blocks[@]} -lt 3 ] || [ $torch -lt 1 ]; then
    echo "FAIL: step 10 of docs/tutorial.md has ${#blocks[@]} python blocks to run, $torch with torch"
    rc=1
  else
    cat "${blocks[@]}" >"$tmp/tutorial.py"
    if ! (cd "$tmp/root" && env -u QLLC_LIBRARY PYTHONPATH="$B/python" timeout 600 $py "$tmp/tutorial.py") >"$tmp/out.txt" 2>"$tmp/err.txt"; then
      cat "$tmp/out.txt"; tail -30 "$tmp/err.txt"
      echo "FAIL: the python blocks of docs/tutorial.md step 10 ($mode) failed"
      rc=1
    fi
    local line
    while IFS= read -r line; do
      [ -z "$line" ] && continue
      grep -qxF -- "$line" "$tmp/out.txt" || { echo "FAIL: docs/tutorial.md shows '$line'; the script printed:"; cat "$tmp/out.txt"; rc=1; }
    done <"$tmp/want.txt"
    [ $rc = 0 ] && { cat "$tmp/out.txt"; echo "tutorial step 10 ($mode): OK (${#blocks[@]} python blocks)"; }
  fi
  rm -rf "$tmp"
  return $rc
}
