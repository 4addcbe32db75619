/* src/quant/bounded.c: the output grid of Softmax chosen from the calibrated range (issue 13).
 *
 * The softmax kernels (libjit/bitcode/q_ops.c) compute y = round(e * R / S) + z_y from the exp table's
 * entries e (S their sum): any integer R and any zero point work, so the output scale can be 1 / R for
 * the range actually observed (a 12-class softmax whose probabilities stay below 0.12 gets R = 2090 at
 * int8 instead of 256: eight times finer steps).
 */
#include <math.h>

#include "quant.h"

qllc_status qllc_quant_softmax_range(const qllc_qparams *in, qllc_qparams *out, int32_t *recip, int32_t *exp_table,
                                     int32_t *len, qllc_diag *diag) {
  qllc_qparams fixed;
  qllc_status st = qllc_quant_softmax(in, &fixed, recip, exp_table, len, diag); /* the exp table */
  if (st != QLLC_OK) return st;
  if (!(out->scale > 0) || out->elem != in->elem) { /* nothing calibrated: the fixed grid */
    *out = fixed;
    return QLLC_OK;
  }
  double R = floor(1.0 / (double)out->scale * (1.0 + 1e-6)); /* 1 / (float)(1/255) is 254.99999 */
  if (R < 1) R = 1;
  if (R > 1073741824.0) R = 1073741824.0;
  *recip = (int32_t)R;
  out->scale = (float)(1.0 / R);
  return QLLC_OK;
}
