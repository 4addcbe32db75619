/* libjit/bitcode/softmax.c: softmax along the middle axis of x[outer][axis_len][inner].
 *
 * y = exp(x - max) / sum(exp(x - max)), the max subtracted so exp never overflows. To keep the
 * innermost loops contiguous (over inner) the inner axis is processed in blocks of BLK columns, with
 * the running max and sum of each column in a small stack array (no allocation). The exps are stored
 * in y and then divided by the sum; the sum runs over the axis in ascending order (deterministic). */
#include "kernels_f32.h"
#include "qllc_math.h"

#define BLK 64

QLLC_KERNEL void qllc_k_softmax_f32_f32(float *QLLC_RESTRICT y, const float *QLLC_RESTRICT x, int64_t outer,
                                        int64_t axis_len, int64_t inner) {
  for (int64_t o = 0; o < outer; o++) {
    const float *xo = x + o * axis_len * inner;
    float *yo = y + o * axis_len * inner;
    for (int64_t i0 = 0; i0 < inner; i0 += BLK) {
      const int64_t nb = inner - i0 < BLK ? inner - i0 : BLK;
      float mx[BLK], sum[BLK];
      for (int64_t i = 0; i < nb; i++) {
        mx[i] = xo[i0 + i];
        sum[i] = 0.0f;
      }
      for (int64_t a = 1; a < axis_len; a++)
        for (int64_t i = 0; i < nb; i++) mx[i] = qm_max(xo[a * inner + i0 + i], mx[i]);
      /* exp and sum in separate passes: when inner == 1 the exp pass then vectorizes over the axis */
      for (int64_t a = 0; a < axis_len; a++)
        for (int64_t i = 0; i < nb; i++) yo[a * inner + i0 + i] = qm_exp(xo[a * inner + i0 + i] - mx[i]);
      for (int64_t a = 0; a < axis_len; a++)
        for (int64_t i = 0; i < nb; i++) sum[i] += yo[a * inner + i0 + i];
      for (int64_t a = 0; a < axis_len; a++)
        for (int64_t i = 0; i < nb; i++) yo[a * inner + i0 + i] /= sum[i];
    }
  }
}
