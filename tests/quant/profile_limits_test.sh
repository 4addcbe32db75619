# tests/quant/profile_limits_test.sh: the CLI refuses an unboundedly nested profile quickly, naming the
# file, the line and the limit (issue 11: 200 KB of '[' took 87 s in libyaml's document loader).
set -u
model="$QLLC_SOURCE_DIR/models/digits/digits.onnx"
[ -f "$model" ] || { echo "skip: no $model"; exit 77; }
dir=$(mktemp -d "$QLLC_BUILD_DIR/profile_limits_test.XXXXXX")
trap 'rm -rf "$dir"' EXIT
printf '%*s' 200000 '' | tr ' ' '[' > "$dir/nest.yaml"
start=$(date +%s)
timeout 20 "$QLLC" info "$model" --profile "$dir/nest.yaml" --precision int8 > "$dir/out" 2> "$dir/err"
rc=$?
end=$(date +%s)
[ "$rc" = 124 ] && { echo "FAIL: still running after 20 s"; exit 1; }
[ "$rc" != 0 ] || { echo "FAIL: the nested profile was accepted"; exit 1; }
grep -q "$dir/nest.yaml:1: nested more than 16 levels" "$dir/err" || { echo "FAIL: message:"; cat "$dir/err"; exit 1; }
echo "refused in $((end - start)) s: $(cat "$dir/err")"
