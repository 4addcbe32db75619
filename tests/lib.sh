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
#   npy_f32 FILE D0 D1 ...                   writes a float32 .npy of that shape, filled with pseudo-random
#                                            values of +-[1/16, 1/2) (the same every time; no Python needed)
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

npy_f32() {
  local f=$1 n=1 d shape="" i s=12345 bits hdr len esc=""
  shift
  for d; do n=$((n * d)) shape+="$d, "; done
  shape=${shape%, }
  [ $# = 1 ] && shape+=","
  hdr="{'descr': '<f4', 'fortran_order': False, 'shape': ($shape), }"
  len=$(((10 + ${#hdr} + 1 + 63) / 64 * 64 - 10)) # the header and its padding up to 64-byte alignment
  for ((i = 0; i < n; i++)); do
    s=$(((s * 1103515245 + 12345) % 2147483648))
    bits=$((((s >> 30) & 1) << 31 | (123 + (s >> 27) % 3) << 23 | (s & 0x7fffff))) # +-[0.0625, 0.5)
    printf -v d '\\x%02x\\x%02x\\x%02x\\x%02x' $((bits & 255)) $((bits >> 8 & 255)) $((bits >> 16 & 255)) \
      $((bits >> 24 & 255))
    esc+=$d
  done
  { printf '\x93NUMPY\x01\x00'
    printf "$(printf '\\x%02x\\x%02x' $((len % 256)) $((len / 256)))"
    printf '%s%*s\n' "$hdr" $((len - ${#hdr} - 1)) ''
    printf '%b' "$esc"; } >"$f"
}

finish() {
  local r="$1: ok"
  [ $((oks + fails + skips)) -gt 0 ] && r="$1: $oks passed, $fails failed, $skips skipped"
  echo "$r"
  [ $fails -eq 0 ] || exit 1
}
