/* tests/quant/profile_index_test.c: the profile's name index and the reader's counter limit (issue 11,
 * item 4; docs/limits.md).
 *   - 20,000 values added, written and read back: every name is found (and names that are not there
 *     are not), duplicates are refused with file:line, across the index's rebuilds;
 *   - values x bins over 2^27 histogram counters (1 GiB) is refused with file:line naming the counts,
 *     before any histogram is allocated (9 values of 2^24 bins: 1.2 GiB was allocated before).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "quant/quant.h"

static char tmpdir[256];

static int setup(void **state) {
  (void)state;
  snprintf(tmpdir, sizeof tmpdir, "%s/quant_profile_index_test.XXXXXX", QLLC_BUILD_DIR);
  return mkdtemp(tmpdir) ? 0 : -1;
}

static int teardown(void **state) {
  (void)state;
  char cmd[400];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
  return system(cmd) == 0 ? 0 : -1;
}

#define N_VALUES 20000

static void test_many_values(void **state) {
  (void)state;
  qllc_profile *p = qllc_profile_new(0x1234, 16);
  assert_non_null(p);
  char name[64];
  for (int i = 0; i < N_VALUES; i++) {
    snprintf(name, sizeof name, "layer%d/out", i);
    qllc_hist *h = qllc_profile_add(p, name);
    assert_non_null(h);
    float x[2] = {(float)i, -(float)i};
    qllc_hist_record(h, x, 2);
    assert_ptr_equal(qllc_profile_add(p, name), h); /* found, not added twice */
  }
  assert_int_equal(p->n, N_VALUES);
  char path[400];
  snprintf(path, sizeof path, "%s/many.yaml", tmpdir);
  qllc_diag d = {0};
  assert_int_equal(qllc_profile_write(p, path, &d), QLLC_OK);
  qllc_profile_free(p);

  qllc_profile *q = NULL;
  assert_int_equal(qllc_profile_read(path, &q, &d), QLLC_OK);
  assert_int_equal(q->n, N_VALUES);
  for (int i = N_VALUES - 1; i >= 0; i--) {
    snprintf(name, sizeof name, "layer%d/out", i);
    const qllc_hist *h = qllc_profile_find(q, name);
    assert_non_null(h);
    assert_int_equal(h->total, 2);
    assert_true(h->max == (float)i);
  }
  assert_null(qllc_profile_find(q, "layer20000/out"));
  assert_null(qllc_profile_find(q, ""));
  const qllc_hist *h;
  assert_int_equal(qllc_profile_get(q, "nope", &h, &d), QLLC_ERR_INVALID);
  assert_non_null(strstr(d.message, "'nope' is missing"));
  qllc_profile_free(q);
}

static void write_text(const char *path, const char *text) {
  FILE *f = fopen(path, "w");
  assert_non_null(f);
  fputs(text, f);
  assert_int_equal(fclose(f), 0);
}

static void test_duplicate(void **state) {
  (void)state;
  char path[400];
  snprintf(path, sizeof path, "%s/dup.yaml", tmpdir);
  write_text(path, "format: qllc-profile-1\ngraph_hash: \"0123456789abcdef\"\nbins: 16\nvalues:\n"
                   "  - {name: a, min: 0, max: 1, count: 0, range: 1, counts: {}}\n"
                   "  - {name: b, min: 0, max: 1, count: 0, range: 1, counts: {}}\n"
                   "  - {name: a, min: 0, max: 1, count: 0, range: 1, counts: {}}\n");
  qllc_profile *p = NULL;
  qllc_diag d = {0};
  assert_int_equal(qllc_profile_read(path, &p, &d), QLLC_ERR_PARSE);
  assert_null(p);
  assert_non_null(strstr(d.message, ":7: value 'a' appears twice"));
}

static void test_counter_limit(void **state) {
  (void)state;
  char path[400];
  snprintf(path, sizeof path, "%s/big.yaml", tmpdir);
  char text[4096];
  int n = snprintf(text, sizeof text, "format: qllc-profile-1\ngraph_hash: \"0123456789abcdef\"\nbins: 16777216\nvalues:\n");
  for (int i = 0; i < 9; i++)
    n += snprintf(text + n, sizeof text - (size_t)n, "  - {name: v%d, min: 0, max: 1, count: 0, range: 1, counts: {}}\n", i);
  write_text(path, text);
  qllc_profile *p = NULL;
  qllc_diag d = {0};
  assert_int_equal(qllc_profile_read(path, &p, &d), QLLC_ERR_PARSE);
  assert_null(p);
  if (!strstr(d.message, "9 values of 16777216 bins")) fprintf(stderr, "%s\n", d.message);
  assert_non_null(strstr(d.message, "big.yaml:5: 9 values of 16777216 bins need 150994944 histogram counters"));
  assert_non_null(strstr(d.message, "limit of 134217728"));
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_many_values),
      cmocka_unit_test(test_duplicate),
      cmocka_unit_test(test_counter_limit),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
