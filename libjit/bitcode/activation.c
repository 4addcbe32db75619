/* libjit/bitcode/activation.c: unary float activations. Each is one contiguous loop over n
 * elements, so the vectorizer sees it after specialisation; the transcendental ones use the
 * branch-free helpers in qllc_math.h (no libm). */
#include "kernels_f32.h"
#include "qllc_math.h"

QLLC_KERNEL void qllc_k_relu_f32_f32(float *QLLC_RESTRICT y, const float *QLLC_RESTRICT x, int64_t n) {
  for (int64_t i = 0; i < n; i++) y[i] = x[i] < 0.0f ? 0.0f : x[i]; /* NaN passes through */
}

QLLC_KERNEL void qllc_k_leakyrelu_f32_f32(float *QLLC_RESTRICT y, const float *QLLC_RESTRICT x, int64_t n,
                                          float alpha) {
  for (int64_t i = 0; i < n; i++) y[i] = x[i] < 0.0f ? x[i] * alpha : x[i];
}

/* ONNX Clip: min(max(x, lo), hi); lo/hi are -inf/+inf when absent. */
QLLC_KERNEL void qllc_k_clip_f32_f32(float *QLLC_RESTRICT y, const float *QLLC_RESTRICT x, int64_t n, float lo,
                                     float hi) {
  for (int64_t i = 0; i < n; i++) y[i] = qm_min(qm_max(x[i], lo), hi);
}

QLLC_KERNEL void qllc_k_sigmoid_f32_f32(float *QLLC_RESTRICT y, const float *QLLC_RESTRICT x, int64_t n) {
  for (int64_t i = 0; i < n; i++) y[i] = qm_sigmoid(x[i]);
}

QLLC_KERNEL void qllc_k_tanh_f32_f32(float *QLLC_RESTRICT y, const float *QLLC_RESTRICT x, int64_t n) {
  for (int64_t i = 0; i < n; i++) y[i] = qm_tanh(x[i]);
}
