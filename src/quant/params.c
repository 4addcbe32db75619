/* src/quant/params.c: choosing scale and zero point (docs/numerics.md), and quantizing tensors.
 *
 * One code path for int8, uint8 and int16: the element kind only selects [qmin, qmax]. Scales are
 * computed in double, stored as float, and the zero point is derived from the float scale that is
 * actually stored, so that r = 0 is exactly representable (padding, Relu, zero bias rely on it).
 * Tensor rounding is half to even (ONNX QuantizeLinear).
 */
#include <float.h>
#include <math.h>
#include <string.h>

#include "quant.h"

int qllc_quant_range(qllc_elem e, int narrow, int32_t *qmin, int32_t *qmax) {
  switch (e) {
  case QLLC_ELEM_I8: *qmin = narrow ? -127 : -128; *qmax = 127; return 0;
  case QLLC_ELEM_U8: *qmin = 0; *qmax = 255; return 0;
  case QLLC_ELEM_I16: *qmin = narrow ? -32767 : -32768; *qmax = 32767; return 0;
  default: return -1;
  }
}

static const char *const schema_names[] = {"asymmetric", "symmetric", "symmetric_uint8", "power2"};
static const char *const calib_names[] = {"minmax", "percentile", "kl", "mse"};

const char *qllc_schema_name(qllc_schema s) {
  return (unsigned)s < sizeof schema_names / sizeof *schema_names ? schema_names[s] : "?";
}
int qllc_schema_parse(const char *name, qllc_schema *out) {
  for (unsigned i = 0; name && i < sizeof schema_names / sizeof *schema_names; i++)
    if (!strcmp(name, schema_names[i])) return *out = (qllc_schema)i, 0;
  return -1;
}
const char *qllc_calibration_name(qllc_calibration c) {
  return (unsigned)c < sizeof calib_names / sizeof *calib_names ? calib_names[c] : "?";
}
int qllc_calibration_parse(const char *name, qllc_calibration *out) {
  for (unsigned i = 0; name && i < sizeof calib_names / sizeof *calib_names; i++)
    if (!strcmp(name, calib_names[i])) return *out = (qllc_calibration)i, 0;
  return -1;
}

double qllc_round_half_even(double x) {
  /* Independent of fegetround(): floor, then look at the remainder. */
  if (!isfinite(x)) return x;
  double f = floor(x);
  double d = x - f; /* exact for |x| < 2^52; beyond that x is already an integer and d == 0 */
  if (d > 0.5) return f + 1.0;
  if (d < 0.5) return f;
  return fmod(f, 2.0) == 0.0 ? f : f + 1.0;
}

/* Rounds a positive float scale up to a power of two. */
static float pow2_up(double s) {
  int e;
  double f = frexp(s, &e); /* s = f * 2^e, f in [0.5, 1) */
  return (float)(f == 0.5 ? s : ldexp(1.0, e));
}

static int32_t clamp32(double v, int32_t lo, int32_t hi) {
  if (v < lo) return lo;
  if (v > hi) return hi;
  return (int32_t)v;
}

qllc_status qllc_quant_choose(float lo, float hi, qllc_schema schema, qllc_elem prec, qllc_qrole role,
                              qllc_qparams *out, qllc_diag *diag) {
  if (!isfinite(lo) || !isfinite(hi) || lo > hi)
    return qllc_fail(diag, QLLC_ERR_INVALID, NULL, "invalid calibrated range [%g, %g]", lo, hi);
  if (prec != QLLC_ELEM_I8 && prec != QLLC_ELEM_U8 && prec != QLLC_ELEM_I16)
    return qllc_fail(diag, QLLC_ERR_INVALID, NULL, "cannot quantize to element kind %d", (int)prec);
  if (lo > 0) lo = 0;
  if (hi < 0) hi = 0;
  double amax = fmax(-(double)lo, (double)hi);

  int symmetric = 1, narrow = 0, power2 = 0;
  qllc_elem elem = prec;
  if (role == QLLC_QROLE_WEIGHT) {
    if (prec == QLLC_ELEM_U8)
      return qllc_fail(diag, QLLC_ERR_INVALID, NULL, "weights cannot be uint8 (they are symmetric)");
    narrow = 1;
    power2 = schema == QLLC_SCHEMA_POWER2;
  } else {
    switch (schema) {
    case QLLC_SCHEMA_ASYMMETRIC: symmetric = 0; break;
    case QLLC_SCHEMA_SYMMETRIC:
      if (prec == QLLC_ELEM_U8 && lo < 0)
        return qllc_fail(diag, QLLC_ERR_INVALID, NULL,
                         "symmetric uint8 needs a non-negative range, got [%g, %g]", lo, hi);
      break;
    case QLLC_SCHEMA_SYMMETRIC_UINT8:
      if (prec != QLLC_ELEM_I16) elem = lo >= 0 ? QLLC_ELEM_U8 : QLLC_ELEM_I8;
      break;
    case QLLC_SCHEMA_POWER2:
      if (prec == QLLC_ELEM_U8 && lo < 0)
        return qllc_fail(diag, QLLC_ERR_INVALID, NULL,
                         "power2 uint8 needs a non-negative range, got [%g, %g]", lo, hi);
      power2 = 1;
      break;
    default: return qllc_fail(diag, QLLC_ERR_INVALID, NULL, "unknown quantization schema %d", (int)schema);
    }
  }
  int32_t qmin, qmax;
  qllc_quant_range(elem, narrow, &qmin, &qmax);

  double s = symmetric ? amax / qmax : ((double)hi - (double)lo) / ((double)qmax - (double)qmin);
  float sf = (float)s;
  if (!(sf >= FLT_MIN)) sf = 1.0f; /* degenerate: [0, 0] or a range too small for a normal scale */
  if (power2) sf = pow2_up(sf);
  int32_t z = 0;
  if (!symmetric) z = clamp32(qllc_round_half_even((double)qmin - (double)lo / (double)sf), qmin, qmax);
  out->scale = sf;
  out->zero_point = z;
  out->elem = elem;
  return QLLC_OK;
}

int32_t qllc_quantize_one(float r, float scale, int32_t zero_point, int32_t qmin, int32_t qmax) {
  float d = r / scale;
  if (d != d) return clamp32(zero_point, qmin, qmax); /* NaN: as 0 */
  double q = qllc_round_half_even((double)d) + (double)zero_point;
  return clamp32(q, qmin, qmax);
}

qllc_status qllc_quantize_tensor(const float *x, int64_t n, float scale, int32_t zero_point, qllc_elem elem,
                                 void *out, qllc_diag *diag) {
  int32_t qmin, qmax;
  if (qllc_quant_range(elem, 0, &qmin, &qmax) != 0)
    return qllc_fail(diag, QLLC_ERR_INVALID, NULL, "cannot quantize to element kind %d", (int)elem);
  for (int64_t i = 0; i < n; i++) {
    int32_t q = qllc_quantize_one(x[i], scale, zero_point, qmin, qmax);
    switch (elem) {
    case QLLC_ELEM_I8: ((int8_t *)out)[i] = (int8_t)q; break;
    case QLLC_ELEM_U8: ((uint8_t *)out)[i] = (uint8_t)q; break;
    default: ((int16_t *)out)[i] = (int16_t)q; break;
    }
  }
  return QLLC_OK;
}

qllc_status qllc_dequantize_tensor(const void *q, int64_t n, float scale, int32_t zero_point, qllc_elem elem,
                                   float *out, qllc_diag *diag) {
  for (int64_t i = 0; i < n; i++) {
    int32_t v;
    switch (elem) {
    case QLLC_ELEM_I8: v = ((const int8_t *)q)[i]; break;
    case QLLC_ELEM_U8: v = ((const uint8_t *)q)[i]; break;
    case QLLC_ELEM_I16: v = ((const int16_t *)q)[i]; break;
    case QLLC_ELEM_I32: v = ((const int32_t *)q)[i]; break;
    default: return qllc_fail(diag, QLLC_ERR_INVALID, NULL, "cannot dequantize element kind %d", (int)elem);
    }
    /* (q - z) in int64 (an int32 minus a zero point can overflow int32), then one float multiply,
       as DequantizeLinear. */
    out[i] = (float)((int64_t)v - zero_point) * scale;
  }
  return QLLC_OK;
}

qllc_status qllc_quantize_weights(const float *w, int64_t channels, int64_t inner, qllc_elem elem, int per_tensor,
                                  int power2, const float *min_scale, float *scales, void *q, qllc_diag *diag) {
  int32_t qmin, qmax;
  if ((elem != QLLC_ELEM_I8 && elem != QLLC_ELEM_I16) || qllc_quant_range(elem, 1, &qmin, &qmax) != 0)
    return qllc_fail(diag, QLLC_ERR_INVALID, NULL, "weights must be i8 or i16, not kind %d", (int)elem);
  if (channels <= 0 || inner < 0)
    return qllc_fail(diag, QLLC_ERR_INVALID, NULL, "bad weight shape [%lld][%lld]", (long long)channels,
                     (long long)inner);
  for (int64_t i = 0; i < channels * inner; i++)
    if (!isfinite(w[i]))
      return qllc_fail(diag, QLLC_ERR_INVALID, NULL, "non-finite weight at index %lld", (long long)i);
  int64_t groups = per_tensor ? 1 : channels;
  int64_t span = per_tensor ? channels * inner : inner;
  for (int64_t g = 0; g < groups; g++) {
    double amax = 0;
    for (int64_t i = 0; i < span; i++) amax = fmax(amax, fabs((double)w[g * span + i]));
    float s = (float)(amax / qmax);
    if (!(s >= FLT_MIN)) s = 1.0f; /* a channel of zeros (or denormals): quantizes to 0 */
    if (min_scale) {
      if (per_tensor) {
        for (int64_t c = 0; c < channels; c++) s = fmaxf(s, min_scale[c]);
      } else {
        s = fmaxf(s, min_scale[g]);
      }
    }
    if (power2) s = pow2_up(s);
    scales[g] = s;
    for (int64_t i = 0; i < span; i++) {
      int32_t v = qllc_quantize_one(w[g * span + i], s, 0, qmin, qmax);
      if (elem == QLLC_ELEM_I8) ((int8_t *)q)[g * span + i] = (int8_t)v;
      else ((int16_t *)q)[g * span + i] = (int16_t)v;
    }
  }
  return QLLC_OK;
}
