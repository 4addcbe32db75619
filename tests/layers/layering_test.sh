#!/usr/bin/env bash
# The layers of the library run one way (docs/architecture.md):
#
#   public headers (include/)  <  kernel ABI (libjit/bitcode headers)  <  ir  <  quant  <  lower
#     <  llvmgen (with the target descriptions, targets/*/target.c)  <  driver  <  facade (src/qllc.c)
#     <  the tool (tools/qllc: the public API only)
#
# This reads every `#include "..."` of src/, targets/*/target.c and tools/qllc, resolves it as the
# compiler does (the including file's folder, then src/, include/, libjit/bitcode), and fails on any
# include of a higher layer from a lower one, naming the file, the line and both layers. A module may
# include itself. Kernel sources (libjit/bitcode, targets/*/kernels) must include nothing from src/.
#
# It then checks itself: the same scan over a copy of the tree with an upward include planted
# (src/ir/graph.c including driver/driver.h) must fail, so the check cannot pass by seeing nothing.
set -u
SRC=${QLLC_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}

rank_of() { # path relative to the repository -> "rank layer"
  case $1 in
    include/*) echo "0 public" ;;
    libjit/bitcode/*) echo "1 kernel-abi" ;;
    src/ir/*) echo "2 ir" ;;
    src/quant/*) echo "3 quant" ;;
    src/lower/*) echo "4 lower" ;;
    src/llvmgen/* | targets/*/target.c) echo "5 llvmgen" ;;
    src/driver/*) echo "6 driver" ;;
    src/qllc.c) echo "7 facade" ;;
    tools/qllc/*) echo "8 tool" ;;
    targets/*/kernels/*) echo "1 kernel-abi" ;;
    build/* | */gen/*) echo "0 generated" ;;
    *) echo "? unknown" ;;
  esac
}

# scan ROOT: prints one line per violation; exit status 1 when there is any
scan() {
  local root=$1 bad=0 f rel dir line inc target cand rs ls rt lt
  while IFS= read -r f; do
    rel=${f#"$root"/}
    dir=$(dirname "$rel")
    read -r rs ls < <(rank_of "$rel")
    while IFS=: read -r line inc; do
      inc=${inc#*\"}
      inc=${inc%%\"*}
      target=""
      for cand in "$dir/$inc" "src/$inc" "include/$inc" "libjit/bitcode/$inc"; do
        if [ -f "$root/$cand" ]; then target=$(realpath -m --relative-to="$root" "$root/$cand"); break; fi
      done
      if [ -z "$target" ]; then
        case $inc in onnx/*) continue ;; esac          # generated at build time (protobuf-c)
        case $inc in qllc_version.h) continue ;; esac  # generated at build time (the version)
        echo "$rel:$line: #include \"$inc\": no such file in the tree"
        bad=1; continue
      fi
      read -r rt lt < <(rank_of "$target")
      if [ "$ls" = kernel-abi ] && [[ $target == src/* ]]; then
        echo "$rel:$line: kernel source includes $target: kernels include nothing from src/"
        bad=1
      elif [ "$rt" = "?" ] || [ "$rs" = "?" ]; then
        echo "$rel:$line: #include \"$inc\" ($target): a file outside the known layers"
        bad=1
      elif [ "$rt" -gt "$rs" ] || { [ "$rt" -eq "$rs" ] && [ "$lt" != "$ls" ]; }; then
        echo "$rel:$line: $ls includes $lt ($target): upward, against ir < quant < lower < llvmgen < driver < facade"
        bad=1
      fi
    done < <(grep -n '^[[:space:]]*#[[:space:]]*include[[:space:]]*"' "$f")
  done < <(find "$root/src" "$root/tools/qllc" "$root/libjit/bitcode" "$root/targets" \
                \( -name '*.c' -o -name '*.h' -o -name '*.def' \) | sort)
  return $bad
}

pass=0 fail=0
if out=$(scan "$SRC"); then
  echo "ok   the tree's includes run one way"
  pass=$((pass + 1))
else
  echo "FAIL upward or unknown includes:"
  echo "$out"
  fail=$((fail + 1))
fi

# the check must be able to fail: plant an upward include in a copy of the tree
work=$(mktemp -d "${TMPDIR:-/tmp}/qllc_layers.XXXXXX")
trap 'rm -rf "$work"' EXIT
for d in src include libjit/bitcode targets tools/qllc; do
  mkdir -p "$work/$(dirname "$d")"
  cp -r "$SRC/$d" "$work/$d"
done
printf '#include "driver/driver.h"\n' >>"$work/src/ir/graph.c"
if out=$(scan "$work"); then
  echo "FAIL a planted upward include (src/ir/graph.c -> driver/driver.h) was not found"
  fail=$((fail + 1))
elif grep -q 'src/ir/graph.c:.*ir includes driver' <<<"$out"; then
  echo "ok   a planted upward include is found: $(grep 'src/ir/graph.c' <<<"$out" | head -n 1)"
  pass=$((pass + 1))
else
  echo "FAIL the planted include gave another report: $out"
  fail=$((fail + 1))
fi

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
