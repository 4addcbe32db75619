/* src/quant/calib.c: the calibration histogram and the four calibration methods.
 *
 * The histogram is recorded in ONE pass over the data set (profiling runs the float code once):
 * it is symmetric around 0, [-R, R) in `bins` equal bins, bin bins/2 starting at 0. R is set by the
 * first non-zero batch to just above its max |x| (the next float); when a later batch exceeds R, R doubles (as often as needed)
 * and pairs of bins merge: old bin i goes to (i + bins/2) / 2. Merging is exact, so the counts are
 * those one would get by binning everything with the final R, except that the first batches were
 * binned at a finer width and lost nothing. The price of symmetry is that a non-negative value (after
 * a Relu) uses only half the bins; min and max are kept exactly beside the histogram.
 *
 * KL follows TensorRT's entropy calibration: on the histogram of |x|, for each candidate threshold
 * of i bins (i from `levels` to bins/2), P is the first i bins with everything beyond folded into the
 * last one, Q is those i bins quantized to `levels` levels (each level's mass spread over its
 * non-empty bins), and the threshold minimising KL(P || Q) wins.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "quant.h"

qllc_status qllc_hist_init(qllc_hist *h, int32_t bins, qllc_diag *diag) {
  memset(h, 0, sizeof *h);
  if (bins <= 0) bins = QLLC_HIST_DEFAULT_BINS;
  if (bins % 2 != 0 || bins < 16 || bins > (1 << 24))
    return qllc_fail(diag, QLLC_ERR_INVALID, NULL, "histogram bin count %d must be even and in [16, 2^24]",
                     (int)bins);
  h->counts = calloc((size_t)bins, sizeof *h->counts);
  if (!h->counts) return qllc_fail(diag, QLLC_ERR_NOMEM, NULL, "out of memory for a histogram");
  h->bins = bins;
  h->min = INFINITY;
  h->max = -INFINITY;
  return QLLC_OK;
}

void qllc_hist_free(qllc_hist *h) {
  free(h->counts);
  h->counts = NULL;
}

static void grow(qllc_hist *h) {
  int32_t B = h->bins;
  uint64_t *c = h->counts;
  /* new index (i + B/2) / 2 <= i for i >= B/2 and >= i for i < B/2: merge from the middle outwards
     so no count is overwritten before it is moved */
  uint64_t *tmp = c; /* in place: walk upwards for the upper half, downwards for the lower half */
  for (int32_t i = B / 2; i < B; i++) {
    int32_t j = (i + B / 2) / 2;
    if (j != i) {
      tmp[j] += tmp[i];
      tmp[i] = 0;
    }
  }
  for (int32_t i = B / 2 - 1; i >= 0; i--) {
    int32_t j = (i + B / 2) / 2;
    if (j != i) {
      tmp[j] += tmp[i];
      tmp[i] = 0;
    }
  }
  h->range *= 2.0f;
}

void qllc_hist_record(qllc_hist *h, const float *x, int64_t n) {
  float amax = 0;
  for (int64_t i = 0; i < n; i++) {
    float v = x[i];
    if (!isfinite(v)) continue;
    if (v < h->min) h->min = v;
    if (v > h->max) h->max = v;
    float a = fabsf(v);
    if (a > amax) amax = a;
  }
  if (amax > 0) {
    if (h->range == 0) h->range = nextafterf(amax, INFINITY); /* so amax itself falls inside [-R, R) */
    while (amax > h->range) grow(h);
  }
  int32_t B = h->bins;
  double per = h->range > 0 ? (double)B / (2.0 * h->range) : 0;
  for (int64_t i = 0; i < n; i++) {
    float v = x[i];
    if (!isfinite(v)) {
      h->nonfinite++;
      continue;
    }
    int64_t k = (int64_t)floor((double)v * per) + B / 2;
    if (k < 0) k = 0;
    if (k >= B) k = B - 1; /* v == R */
    h->counts[k]++;
    h->total++;
  }
}

/* Left edge of bin k. */
static double edge(const qllc_hist *h, int64_t k) { return ((double)k - h->bins / 2) * (2.0 * h->range / h->bins); }

static qllc_status percentile(const qllc_hist *h, double p, float *lo, float *hi, qllc_diag *diag) {
  if (!(p > 50 && p <= 100)) return qllc_fail(diag, QLLC_ERR_INVALID, NULL, "percentile %g not in (50, 100]", p);
  double t_hi = p / 100.0 * (double)h->total;
  double t_lo = (1.0 - p / 100.0) * (double)h->total;
  uint64_t cum = 0;
  int64_t klo = -1, khi = -1;
  for (int64_t k = 0; k < h->bins; k++) {
    cum += h->counts[k];
    if (klo < 0 && (double)cum > t_lo) klo = k;
    if (khi < 0 && cum > 0 && (double)cum >= t_hi) khi = k;
  }
  if (klo < 0) klo = 0;
  if (khi < 0) khi = h->bins - 1;
  double l = edge(h, klo), u = edge(h, khi + 1);
  *lo = (float)fmax(l, (double)h->min);
  *hi = (float)fmin(u, (double)h->max);
  return QLLC_OK;
}

static qllc_status kl(const qllc_hist *h, int levels, float *lo, float *hi, qllc_diag *diag) {
  int32_t nb = h->bins / 2;
  if (levels <= 0) levels = 128;
  if (levels > nb) levels = nb;
  double *a = calloc((size_t)nb, sizeof *a), *P = calloc((size_t)nb, sizeof *P), *Q = calloc((size_t)nb, sizeof *Q);
  if (!a || !P || !Q) {
    free(a), free(P), free(Q);
    return qllc_fail(diag, QLLC_ERR_NOMEM, NULL, "out of memory in KL calibration");
  }
  for (int32_t k = 0; k < nb; k++) a[k] = (double)h->counts[nb + k] + (double)h->counts[nb - 1 - k];
  double best = INFINITY;
  int32_t best_i = nb;
  double tail = 0;
  for (int32_t k = levels; k < nb; k++) tail += a[k];
  for (int32_t i = levels; i <= nb; i++) {
    if (i > levels) tail -= a[i - 1];
    /* P: the first i bins, the outliers folded into the last */
    double psum = 0;
    for (int32_t k = 0; k < i; k++) P[k] = a[k];
    P[i - 1] += tail;
    for (int32_t k = 0; k < i; k++) psum += P[k];
    if (psum <= 0) continue;
    /* Q: a[0:i] merged into `levels` levels, each spread over its non-empty bins */
    double qsum = 0;
    for (int32_t j = 0; j < levels; j++) {
      int32_t start = (int32_t)((int64_t)j * i / levels), stop = (int32_t)((int64_t)(j + 1) * i / levels);
      double tot = 0;
      int nz = 0;
      for (int32_t k = start; k < stop; k++) {
        tot += a[k];
        nz += a[k] != 0;
      }
      for (int32_t k = start; k < stop; k++) Q[k] = (nz && a[k] != 0) ? tot / nz : 0;
      qsum += tot;
    }
    double d = 0;
    for (int32_t k = 0; k < i; k++) {
      if (P[k] == 0) continue;
      double pp = P[k] / psum;
      double qq = qsum > 0 ? Q[k] / qsum : 0;
      if (qq <= 0) qq = 1e-12; /* P has mass where Q has none (the folded outliers): heavy penalty */
      d += pp * log(pp / qq);
    }
    if (d < best) {
      best = d;
      best_i = i;
    }
  }
  free(a), free(P), free(Q);
  double T = (double)best_i * (2.0 * h->range / h->bins);
  *lo = (float)fmax(-T, (double)h->min);
  *hi = (float)fmin(T, (double)h->max);
  return QLLC_OK;
}

/* MSE (issue 13; PyTorch's HistogramObserver minimises the same quantity by a greedy search): the
 * range [a, b] whose expected squared quantization error over the histogram is smallest. a and b are
 * bin edges with a <= 0 <= b (a quantized range always holds 0) inside the bins that hold data. The
 * error of a candidate, for the grid of `levels` steps of width D = (b - a) / levels (symmetric:
 * [-T, T], D = 2T / levels):
 *   bins inside [a, b]:  count * D^2 / 12                       (rounding, uniform within a step)
 *   bins outside:        count * ((c - e)^2 + w^2 / 12)           (clipping to the nearer end e; c the
 *                                                                  bin's centre, w its width)
 * With prefix sums of count, count*c and count*c^2 the clipping error of any end is O(1), so every
 * pair of ends is tried (O(bins^2 / 4) at most; O(bins) for one-sided data). Ties keep the wider range. */
static void mse(const qllc_hist *h, int levels, int symmetric, float *lo, float *hi) {
  int32_t B = h->bins, H = B / 2;
  double w = 2.0 * h->range / B;
  double *n = calloc((size_t)B + 1, sizeof *n), *nc = calloc((size_t)B + 1, sizeof *nc),
         *ncc = calloc((size_t)B + 1, sizeof *ncc);
  if (!n || !nc || !ncc) { /* no memory for the search: the full range */
    free(n), free(nc), free(ncc);
    *lo = h->min, *hi = h->max;
    return;
  }
  /* prefix sums over bins [0, k) */
  for (int32_t k = 0; k < B; k++) {
    double c = edge(h, k) + w / 2, cnt = (double)h->counts[k];
    n[k + 1] = n[k] + cnt, nc[k + 1] = nc[k] + cnt * c, ncc[k + 1] = ncc[k] + cnt * c * c;
  }
  int32_t kmin = 0, kmax = B - 1; /* the first and last bins holding data */
  while (kmin < B - 1 && h->counts[kmin] == 0) kmin++;
  while (kmax > 0 && h->counts[kmax] == 0) kmax--;
  if (kmin > H) kmin = H; /* the range holds 0: a = 0 at most, b = 0 at least */
  if (kmax < H - 1) kmax = H - 1;
  double total = n[B], wq = w * w / 12.0;
  /* clipping error of the bins [0, i) to the left end a = edge(i), and of [j, B) to the right end b = edge(j) */
#define LEFT(i, a) (ncc[i] - 2.0 * (a) * nc[i] + (a) * (a) * n[i] + n[i] * wq)
#define RIGHT(j, b) ((ncc[B] - ncc[j]) - 2.0 * (b) * (nc[B] - nc[j]) + (b) * (b) * (n[B] - n[j]) + (n[B] - n[j]) * wq)
  double best = INFINITY, ba = edge(h, kmin), bb = edge(h, kmax + 1);
  if (symmetric) {
    int32_t kfar = kmax + 1 - H > H - kmin ? kmax + 1 - H : H - kmin; /* bins from 0 to the farther end */
    for (int32_t t = kfar; t >= 1; t--) {
      double T = t * w, D = 2.0 * T / levels;
      int32_t i = H - t, j = H + t;
      double e = (i > 0 ? LEFT(i, -T) : 0) + (j < B ? RIGHT(j, T) : 0) + (n[j < B ? j : B] - n[i > 0 ? i : 0]) * D * D / 12.0;
      if (e < best) best = e, ba = -T, bb = T;
    }
  } else {
    for (int32_t i = kmin; i <= H; i++) {
      double a = edge(h, i), el = LEFT(i, a);
      for (int32_t j = kmax + 1; j >= H; j--) {
        double b = edge(h, j);
        if (b - a <= 0) continue;
        double D = (b - a) / levels, e = el + RIGHT(j, b) + (n[j] - n[i]) * D * D / 12.0;
        if (e < best) best = e, ba = a, bb = b;
      }
    }
  }
#undef LEFT
#undef RIGHT
  (void)total;
  free(n), free(nc), free(ncc);
  *lo = (float)fmax(ba, (double)h->min);
  *hi = (float)fmin(bb, (double)h->max);
}

qllc_status qllc_calibrate(const qllc_hist *h, const qllc_calib_opts *o, float *lo, float *hi, qllc_diag *diag) {
  if (h->total == 0) {
    *lo = *hi = 0;
    return QLLC_OK;
  }
  if (h->range == 0 || o->method == QLLC_CAL_MINMAX) { /* all zeros, or asked */
    *lo = h->min;
    *hi = h->max;
    return QLLC_OK;
  }
  switch (o->method) {
  case QLLC_CAL_PERCENTILE: return percentile(h, o->percentile > 0 ? o->percentile : 99.99, lo, hi, diag);
  case QLLC_CAL_KL: return kl(h, o->kl_levels, lo, hi, diag);
  case QLLC_CAL_MSE: mse(h, o->levels > 0 ? o->levels : 255, o->symmetric, lo, hi); return QLLC_OK;
  default: return qllc_fail(diag, QLLC_ERR_INVALID, NULL, "unknown calibration method %d", (int)o->method);
  }
}
