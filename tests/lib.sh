# tests/lib.sh: what the shell tests share. A test checks its variables, then sources this:
#   : "${QLLC:?}" "${QLLC_SOURCE_DIR:?}"
#   . "$QLLC_SOURCE_DIR/tests/lib.sh"
# and ends with `finish NAME`. It gives:
#   fail MESSAGE, ok MESSAGE, skip MESSAGE   a line each ("FAIL: ", "ok: ", "SKIPPED: "), counted
#   $tmp                                     a directory of its own, removed on exit
#   $OBJDUMP, $NM                            LLVM 19's llvm-objdump and llvm-nm
#   on_terminal PATTERN ARGS...              runs "$QLLC" ARGS on a terminal (script(1)) and checks that
#                                            what it drew there matches the grep pattern PATTERN
#                                            (progress is drawn on terminals only); SKIPPED without script(1)
#   finish NAME                              the counts, and exit status 1 if anything failed
# tests/tests.cmake runs every tests/<module>/<name>_test.sh with QLLC, QLLC_SOURCE_DIR and QLLC_BUILD_DIR
# set; exit status 77 means skipped.
set -u
fails=0 oks=0 skips=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
ok() { echo "ok: $*"; oks=$((oks + 1)); }
skip() { echo "SKIPPED: $*"; skips=$((skips + 1)); }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
OBJDUMP=$(command -v llvm-objdump-19 || echo /usr/lib/llvm-19/bin/llvm-objdump)
NM=$(command -v llvm-nm-19 || echo /usr/lib/llvm-19/bin/llvm-nm)

on_terminal() {
  local pat=$1 cmd="'$QLLC'" a
  shift
  if ! command -v script >/dev/null; then
    skip "progress on a terminal (no 'script' command)"
    return
  fi
  for a; do cmd+=" '$a'"; done
  script -qec "$cmd" /dev/null >"$tmp/tty" 2>&1
  if grep -q "$pat" "$tmp/tty"; then ok "progress on a terminal"; else
    fail "no progress on a terminal: $(cat -v "$tmp/tty" | head -5)"
  fi
}

finish() {
  local r="$1: ok"
  [ $((oks + fails + skips)) -gt 0 ] && r="$1: $oks passed, $fails failed, $skips skipped"
  echo "$r"
  [ $fails -eq 0 ] || exit 1
}
