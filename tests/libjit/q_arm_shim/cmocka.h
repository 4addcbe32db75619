/* tests/libjit/q_arm_shim/cmocka.h: the few cmocka calls the shared kernel-test helpers use
 * (q_x86_test_util.h), for test drivers cross-compiled for aarch64 and run under qemu-aarch64, where
 * no cmocka library is installed. A failed check prints its message and counts it; the driver's
 * main returns 1 when any failed (q_arm_test.sh). Not a replacement for cmocka anywhere else. */
#ifndef QLLC_Q_ARM_SHIM_CMOCKA_H
#define QLLC_Q_ARM_SHIM_CMOCKA_H
#include <stdio.h>
#include <stdlib.h>

static int shim_failures;
#define print_message(...) printf(__VA_ARGS__)
#define fail_msg(...)                                                                          \
  do {                                                                                         \
    if (shim_failures++ < 20) {                                                                \
      printf("FAIL %s:%d: ", __FILE__, __LINE__);                                              \
      printf(__VA_ARGS__);                                                                     \
      printf("\n");                                                                            \
    }                                                                                          \
  } while (0)
#define assert_true(c)                                                                         \
  do {                                                                                         \
    if (!(c)) {                                                                                \
      printf("FAIL %s:%d: %s\n", __FILE__, __LINE__, #c);                                      \
      exit(1);                                                                                 \
    }                                                                                          \
  } while (0)
#define assert_int_equal(a, b) assert_true((a) == (b))

#endif
