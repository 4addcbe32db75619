/* src/quant/tables.c: lookup tables and multiplier arrays the kernels read as CONST buffers:
 * unary functions (Sigmoid, Tanh, LeakyRelu) at 8 and 16 bits, softmax's exp table and fixed output
 * parameters, and average pooling's per-count multipliers. Computed in double, rounded once (half to
 * even, as every tensor quantization), except the transcendental unary functions (erf, GELU in both
 * forms, sigmoid, tanh, exp): their tables take the float kernels' own approximations
 * (libjit/bitcode/qllc_math.h) at the float input, so a quantized node follows the float model it
 * approximates, and the table's bits do not depend on the host's libm. This file is compiled with
 * -ffp-contract=off (CMakeLists.txt) so that those functions give the same bits on every host. */
#include <math.h>

#include "../../libjit/bitcode/qllc_math.h"
#include "quant.h"

static double eval_beta = 0.5; /* HardSigmoid's beta for the table being built (single-threaded) */

static double eval(qllc_qfunc f, double alpha, double r) {
  switch (f) {
  case QLLC_QF_ERF: return qm_erf((float)r);
  case QLLC_QF_GELU: return qm_gelu((float)r);
  case QLLC_QF_SQRT: return sqrt(r);
  case QLLC_QF_NEG: return -r;
  case QLLC_QF_RECIPROCAL: return 1.0 / r;
  case QLLC_QF_POW: return pow(r, alpha);
  case QLLC_QF_HARD_SIGMOID: return fmax(0.0, fmin(1.0, alpha * r + eval_beta));
  case QLLC_QF_HARD_SWISH: return r * fmax(0.0, fmin(1.0, r / 6.0 + 0.5));
  case QLLC_QF_GELU_TANH: return qm_gelu_tanh((float)r);
  case QLLC_QF_SIGMOID: return qm_sigmoid((float)r);
  case QLLC_QF_TANH: return qm_tanh((float)r);
  case QLLC_QF_LEAKY_RELU: return r >= 0 ? r : alpha * r;
  case QLLC_QF_EXP: return qm_exp((float)r);
  }
  return 0;
}

static int32_t quant_d(double r, const qllc_qparams *p, int32_t qmin, int32_t qmax) {
  double q = qllc_round_half_even(r / (double)p->scale) + p->zero_point;
  if (!(q >= qmin)) return qmin; /* also NaN */
  if (q > qmax) return qmax;
  return (int32_t)q;
}

qllc_status qllc_quant_table(qllc_qfunc f, float alpha, const qllc_qparams *in, const qllc_qparams *out, void *table,
                             int32_t *len, qllc_diag *diag) {
  int32_t imin, imax, omin, omax;
  if (qllc_quant_range(in->elem, 0, &imin, &imax) || qllc_quant_range(out->elem, 0, &omin, &omax) ||
      in->elem != out->elem)
    return qllc_fail(diag, QLLC_ERR_INVALID, NULL, "a table maps i8, u8 or i16 to the same kind");
  if ((int)f < 0 || f > QLLC_QF_GELU_TANH) return qllc_fail(diag, QLLC_ERR_INVALID, NULL, "unknown table function %d", (int)f);
  if (in->elem != QLLC_ELEM_I16) {
    for (int32_t i = 0; i < 256; i++) {
      double r = (double)in->scale * (double)(imin + i - in->zero_point);
      int32_t q = quant_d(eval(f, alpha, r), out, omin, omax);
      if (in->elem == QLLC_ELEM_I8) ((int8_t *)table)[i] = (int8_t)q;
      else ((uint8_t *)table)[i] = (uint8_t)q;
    }
    *len = 256;
  } else {
    for (int32_t j = 0; j <= 512; j++) {
      double r = (double)in->scale * (double)(-32768 + 128 * j - in->zero_point);
      ((int16_t *)table)[j] = (int16_t)quant_d(eval(f, alpha, r), out, omin, omax);
    }
    *len = 513;
  }
  return QLLC_OK;
}

qllc_status qllc_quant_table2(qllc_qfunc f, float alpha, float beta, const qllc_qparams *in, const qllc_qparams *out,
                              void *table, int32_t *len, qllc_diag *diag) {
  eval_beta = beta;
  qllc_status st = qllc_quant_table(f, alpha, in, out, table, len, diag);
  eval_beta = 0.5;
  return st;
}

int32_t qllc_lut16_eval(const int16_t *t, int32_t x) {
  int32_t u = x + 32768, i = u >> 7, f = u & 127;
  return t[i] + (((t[i + 1] - t[i]) * f + 64) >> 7);
}

qllc_status qllc_quant_softmax(const qllc_qparams *in, qllc_qparams *out, int32_t *recip, int32_t *exp_table,
                               int32_t *len, qllc_diag *diag) {
  switch (in->elem) {
  case QLLC_ELEM_U8: out->scale = 1.0f / 256, out->zero_point = 0, *recip = 256; break;
  case QLLC_ELEM_I8: out->scale = 1.0f / 256, out->zero_point = -128, *recip = 256; break;
  case QLLC_ELEM_I16: out->scale = 1.0f / 32768, out->zero_point = 0, *recip = 32768; break;
  default: return qllc_fail(diag, QLLC_ERR_INVALID, NULL, "softmax input must be i8, u8 or i16");
  }
  out->elem = in->elem;
  int32_t count = in->elem == QLLC_ELEM_I16 ? 513 : 256, step = in->elem == QLLC_ELEM_I16 ? 128 : 1;
  for (int32_t d = 0; d < count; d++)
    exp_table[d] = (int32_t)qllc_round_half_even(ldexp(exp(-(double)in->scale * (double)d * step), 24));
  *len = count;
  return QLLC_OK;
}

qllc_status qllc_quant_pool_multipliers(float s_x, float s_y, int64_t max_count, int32_t *m, int32_t *n,
                                        qllc_diag *diag) {
  if (max_count < 1) return qllc_fail(diag, QLLC_ERR_INVALID, NULL, "pool window of %lld elements", (long long)max_count);
  m[0] = n[0] = 0;
  for (int64_t c = 1; c <= max_count; c++) {
    qllc_requant r;
    qllc_status st = qllc_requant_make((double)s_x / ((double)s_y * (double)c), &r, diag);
    if (st != QLLC_OK) return st;
    m[c] = r.m;
    n[c] = r.n;
  }
  return QLLC_OK;
}
