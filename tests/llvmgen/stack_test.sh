#!/bin/bash
# tests/llvmgen/stack_test.sh: the bundle header's NAME_STACK_SIZE covers the stack a call uses.
#
# For float, int8 and int16 bundles of a conv + FC model (x86_64 for the baseline CPU, for znver4 when this
# host runs AVX512-VNNI, and aarch64 under qemu when the cross tools exist), a driver calls the entry on a
# thread with a 4 MiB stack filled with a pattern, finds the deepest byte the call changed, subtracts what
# a thread that makes no call changes, and requires that depth to be at most NAME_STACK_SIZE (and more than
# 256 bytes, so the measurement is seen to work).
: "${QLLC:?}" "${QLLC_SOURCE_DIR:?}"
. "$QLLC_SOURCE_DIR/tests/lib.sh"
D=$QLLC_SOURCE_DIR/tests/models/data/cnn_bn_pool
flags=$(grep -m1 '^flags' /proc/cpuinfo)

cat >"$tmp/driver.c" <<'EOF'
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include "net.h"
#define SIZE (4u << 20)
static uint8_t *mut, *act;
static void *call(void *arg) { return (void *)(long)net(NULL, mut, act); }
static void *none(void *arg) { return NULL; }
/* bytes of a thread's stack that f changed, from the top down to the deepest change */
static long depth(void *(*f)(void *)) {
  uint8_t *base = mmap(NULL, SIZE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (base == MAP_FAILED) return -1;
  memset(base, 0xa5, SIZE);
  pthread_attr_t a;
  pthread_attr_init(&a);
  pthread_attr_setstack(&a, base, SIZE);
  pthread_t t;
  void *rc;
  if (pthread_create(&t, &a, f, NULL) != 0 || pthread_join(t, &rc) != 0 || rc) return -1;
  size_t i = 0;
  while (i < SIZE && base[i] == 0xa5) i++;
  munmap(base, SIZE);
  return (long)(SIZE - i);
}
int main(void) {
  mut = aligned_alloc(64, (net_MUTABLE_MEM_SIZE + 63) / 64 * 64 + 64);
  act = aligned_alloc(64, (net_ACTIVATIONS_MEM_SIZE + 63) / 64 * 64 + 64);
  memset(mut, 0, net_MUTABLE_MEM_SIZE);
  for (int i = 0; i < net_NUM_INPUTS; i++) /* float inputs: values in [0, 1) */
    if (net_inputs[i].elem_kind == 0)
      for (uint64_t k = 0; k < net_inputs[i].size / 4; k++)
        ((float *)(mut + net_inputs[i].offset))[k] = (float)((k * 37) % 101) / 101.0f;
  long used = depth(call), base = depth(none);
  if (used < 0 || base < 0) return 2;
  printf("%ld\n", used - base);
  return 0;
}
EOF

case_() { # TAG TARGET ARGS...
  local tag=$1 target=$2; shift 2
  local d=$tmp/$tag cc=gcc run=""
  if [ "$target" = aarch64 ]; then cc=aarch64-linux-gnu-gcc; run="qemu-aarch64 -L /usr/aarch64-linux-gnu"; fi
  "$QLLC" compile "$D/model.onnx" -o "$d" --name net --target "$target" "$@" >"$d.log" 2>&1 ||
    { fail "$tag: compile: $(tail -2 "$d.log")"; return; }
  local s; s=$(sed -n 's/^#define net_STACK_SIZE \([0-9]*\).*/\1/p' "$d/net.h")
  [ -n "$s" ] && [ "$s" -gt 0 ] || { fail "$tag: the header has no net_STACK_SIZE"; return; }
  $cc -std=c11 -O1 -I "$d" -o "$d/run" "$tmp/driver.c" "$d/net.o" -lpthread -Wl,-z,now >"$d.cc.log" 2>&1 ||
    { fail "$tag: link: $(tail -3 "$d.cc.log")"; return; }
  local used; used=$($run "$d/run" 2>"$d.run.log") || { fail "$tag: the driver failed: $(cat "$d.run.log")"; return; }
  if [ "$used" -gt 256 ] && [ "$used" -le "$s" ]; then ok "$tag: a call used $used bytes of stack, net_STACK_SIZE = $s"
  else fail "$tag: a call used $used bytes of stack, net_STACK_SIZE = $s"; fi
}

mkdir -p "$tmp/calib" && cp "$D/input_0.npy" "$tmp/calib/"
"$QLLC" profile "$D/model.onnx" --dataset "$tmp/calib" -o "$tmp/p.yaml" >/dev/null 2>&1 || fail "profile"
case_ f32-x86 x86_64
case_ i8-x86 x86_64 --profile "$tmp/p.yaml" --precision int8
case_ i16-x86 x86_64 --profile "$tmp/p.yaml" --precision int16
if [[ " $flags " == *" avx512_vnni "* ]]; then
  case_ i8-znver4 x86_64 --profile "$tmp/p.yaml" --precision int8 --cpu znver4
  case_ i16-znver4 x86_64 --profile "$tmp/p.yaml" --precision int16 --cpu znver4
else
  echo "SKIPPED: znver4 bundles: the host lacks AVX512-VNNI"; skips=$((skips + 1))
fi
if command -v aarch64-linux-gnu-gcc >/dev/null && command -v qemu-aarch64 >/dev/null; then
  case_ i8-a64 aarch64 --profile "$tmp/p.yaml" --precision int8
else
  echo "SKIPPED: aarch64: no cross compiler or qemu"; skips=$((skips + 1))
fi
finish stack_test
