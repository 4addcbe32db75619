/* tests/fuzz/fuzz_profile.c: the calibration profile reader (qllc_profile_read: YAML through libyaml,
 * the depth/size/alias bounds, the structure checks, the counters limit) on arbitrary bytes. A profile
 * that is read must be consistent (every histogram's counts add up to its total, every name found by
 * lookup) and survive a write/read round trip; the calibration methods run on each histogram.
 * The reader is given a limit of 2^20 histogram counters (8 MiB) instead of 2^27 (1 GiB): with the
 * real one, a 200-byte input of 8 values of 2^24 bins allocated, scanned and freed 1 GiB, about 2 s
 * under ASan, and the fuzzer spent its time there (33 executions/s). The limit's check is the same
 * code, so it is still exercised. */
#include <stdlib.h>
#include <string.h>

#include "fuzz_util.h"
#include "quant/quant.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  const char *path = fuzz_write_file(data, size, ".yaml");
  if (!path) return 0;
  qllc_profile *p = NULL;
  qllc_diag d = {0};
  if (qllc_profile_read_limited(path, (uint64_t)1 << 20, &p, &d) != QLLC_OK) return 0;
  for (int i = 0; i < p->n; i++) {
    const qllc_hist *h = &p->entries[i].hist;
    uint64_t sum = 0;
    for (int b = 0; b < h->bins; b++) sum += h->counts[b];
    if (sum != h->total || qllc_profile_find(p, p->entries[i].name) != h) abort();
    static const qllc_calibration methods[] = {QLLC_CAL_MINMAX, QLLC_CAL_PERCENTILE, QLLC_CAL_KL};
    for (int m = 0; m < (h->bins <= 8192 ? 3 : 2); m++) { /* KL is O(bins^2 / levels): small ones only */
      qllc_calib_opts o = {.method = methods[m]};
      float lo, hi;
      (void)qllc_calibrate(h, &o, &lo, &hi, &d);
    }
  }
  static char out[600];
  snprintf(out, sizeof out, "%s.out.yaml", path);
  if (qllc_profile_write(p, out, &d) == QLLC_OK) {
    qllc_profile *q = NULL;
    if (qllc_profile_read_limited(out, (uint64_t)1 << 20, &q, &d) != QLLC_OK || q->n != p->n || q->graph_hash != p->graph_hash) abort();
    qllc_profile_free(q);
    remove(out);
  }
  qllc_profile_free(p);
  return 0;
}
