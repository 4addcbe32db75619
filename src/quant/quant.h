/* src/quant/quant.h: quantization arithmetic, calibration, the profile file, and the per-node
 * quantization record the quantizer hangs on qllc_node.quant. The numerics contract is docs/numerics.md;
 * this header is its executable form. Everything here is precision-agnostic: int8, uint8
 * and int16 go through the same functions, selected by a qllc_elem.
 *
 * Conventions (ONNX): r = s * (q - z). Scales are float (they end up in value->scale and bundle
 * headers); every intermediate is computed in double and rounded once.
 *
 * Rounding, written down once:
 *  - float -> integer of a TENSOR (weights, bias, QuantizeLinear, zero points): round half to even,
 *    as ONNX QuantizeLinear (qllc_round_half_even), then saturate to the type.
 *  - integer requantization in kernels: (acc * m + 2^(n-1)) >> n, i.e. round half UP (towards +inf)
 *    (qllc_requant_apply). The scalar kernels mirror it bit for bit.
 */
#ifndef QLLC_QUANT_H
#define QLLC_QUANT_H

#include <stdint.h>

#include "../ir/ir.h"

/* ==== 1. parameters (params.c) ================================================================== */

/* Integer range of an element kind. `narrow` selects the symmetric weight range [-qmax, qmax]
 * (int8 [-127, 127], int16 [-32767, 32767]); uint8 has no narrow form. Returns 0, or -1 when `e` is
 * not I8, U8 or I16. */
int qllc_quant_range(qllc_elem e, int narrow, int32_t *qmin, int32_t *qmax);

/* Names as on the command line: "asymmetric", "symmetric", "symmetric_uint8", "power2"; "minmax",
 * "percentile", "kl". parse returns 0 on success, -1 for an unknown name. */
const char *qllc_schema_name(qllc_schema s);
int qllc_schema_parse(const char *name, qllc_schema *out);
const char *qllc_calibration_name(qllc_calibration c);
int qllc_calibration_parse(const char *name, qllc_calibration *out);

/* Rounds half to even (ONNX QuantizeLinear), independent of the FPU rounding mode. */
double qllc_round_half_even(double x);

typedef struct qllc_qparams {
  float scale;                /* > 0, finite, a normal float */
  int32_t zero_point;         /* within [qmin, qmax] of elem */
  qllc_elem elem;             /* the kind chosen (symmetric_uint8 may turn I8 into U8) */
} qllc_qparams;

typedef enum qllc_qrole {
  QLLC_QROLE_ACT = 0,         /* activations: the schema decides */
  QLLC_QROLE_WEIGHT           /* weights: always symmetric, narrow range, z = 0 (power2 when the
                                 schema is power2), so kernels never see a weight zero point */
} qllc_qrole;

/* Chooses scale and zero point for a calibrated range [lo, hi] (widened to contain 0 first).
 * `prec` is the requested precision: I8, U8 or I16.
 *   asymmetric:      s = (hi - lo) / (qmax - qmin), z = round(qmin - lo / s) clamped to [qmin, qmax]
 *   symmetric:       s = max(|lo|, |hi|) / qmax, z = 0 (U8: only for lo >= 0, else INVALID)
 *   symmetric_uint8: U8 with z = 0 when lo >= 0, else symmetric I8 (at I16: plain symmetric I16,
 *                    there is no uint16)
 *   power2:          symmetric with s rounded UP to a power of two
 * z is computed from the float scale actually returned, so r = 0 maps exactly to z.
 * Degenerate ranges: when the range is [0, 0], or so small that s would not be a normal float
 * (< FLT_MIN), the scale is 1.0 (every value seen is 0, and 0 is exact) and z follows the formula.
 * Errors: INVALID for non-finite or inverted (lo > hi) ranges, an unknown schema or kind. */
qllc_status qllc_quant_choose(float lo, float hi, qllc_schema schema, qllc_elem prec, qllc_qrole role,
                              qllc_qparams *out, qllc_diag *diag);

/* q = saturate(round_half_even(r / s) + z): r / s divided in float, as ONNX QuantizeLinear does. */
int32_t qllc_quantize_one(float r, float scale, int32_t zero_point, int32_t qmin, int32_t qmax);
/* Quantizes n floats into `out` (int8_t / uint8_t / int16_t by elem). INVALID for other kinds. */
qllc_status qllc_quantize_tensor(const float *x, int64_t n, float scale, int32_t zero_point, qllc_elem elem,
                                 void *out, qllc_diag *diag);
/* r = s * (q - z) for n elements of elem (I8, U8, I16, I32). */
qllc_status qllc_dequantize_tensor(const void *q, int64_t n, float scale, int32_t zero_point, qllc_elem elem,
                                   float *out, qllc_diag *diag);

/* Symmetric weight quantization of a constant float tensor w[channels][inner] (axis 0 is the output
 * channel: Conv's M, FC's N). elem: I8 ([-127, 127]) or I16 ([-32767, 32767]); z = 0 always.
 *   per_tensor: one scale (scales[0]) from max |w| over the whole tensor; else one per channel.
 *   power2:     scales rounded up to powers of two.
 *   min_scale:  may be NULL; else a per-channel floor for the scale (scales[c] >= min_scale[c], or
 *               the per-tensor scale >= max of them). This is the way out of bias saturation: a
 *               wider weight scale widens the bias scale s_x * s_w[c] (see qllc_bias_min_weight_scale).
 * A channel of zeros gets scale 1.0 (all its weights quantize to 0 exactly).
 * Outputs: scales[channels] (or [1] when per_tensor), q[channels * inner] of elem's C type. */
qllc_status qllc_quantize_weights(const float *w, int64_t channels, int64_t inner, qllc_elem elem, int per_tensor,
                                  int power2, const float *min_scale, float *scales, void *q, qllc_diag *diag);

/* ==== 2. requantization (requant.c) ============================================================== */

/* M = m * 2^-n, m an int32 in [2^30, 2^31), 0 <= n <= 62. */
typedef struct qllc_requant {
  int32_t m;
  int32_t n;
  int denormal;               /* 1 when M < 2^-32: n was clamped to 62 and m shifted right (m < 2^30,
                                 possibly 0: then M is effectively 0 and every output is z_y) */
} qllc_requant;

#define QLLC_REQUANT_MAX_SHIFT 62

/* Decomposes a real multiplier M (computed in double, e.g. s_x * s_w[c] / s_y) with frexp, rounding
 * m half to even (m == 2^31 after rounding becomes 2^30 with n - 1).
 * Errors (INVALID): M <= 0, NaN or infinite, or M >= 2^31 (n would be negative: the output scale is
 * absurdly small next to the accumulator's). Very small M: see `denormal`. */
qllc_status qllc_requant_make(double M, qllc_requant *out, qllc_diag *diag);

/* Several multipliers sharing one shift (elementwise Add/Sub: one rounding of a sum of terms):
 * n comes from the largest M; the others get m in [0, 2^31). ms[count], returns the common n. */
qllc_status qllc_requant_make_shared(const double *M, int count, int32_t *ms, int32_t *n, qllc_diag *diag);

/* The reference: round(acc * m * 2^-n) = (acc * m + 2^(n-1)) >> n (arithmetic shift; n == 0: acc * m),
 * rounding half up, saturated to int32. Computed in __int128, so it is exact for EVERY int64 acc:
 * |acc * m| < 2^63 * 2^31 = 2^94, plus 2^61, is far below 2^127.
 * Kernels with int32 accumulators (int8) may compute it in int64: |acc * m| < 2^31 * 2^31 = 2^62 and
 * 2^62 + 2^61 < 2^63, exact. Kernels with int64 accumulators (int16, 16x8) need the 128-bit product
 * (multiplication and shifts only; never a 128-bit division, which would call a libgcc helper). */
int32_t qllc_requant_apply(int64_t acc, int32_t m, int32_t n);

/* Bias for a fused layer: q_b[c] = round_half_even(b[c] / (s_x * s_w[c])) (s_b in double, z_b = 0),
 * then the input zero point folded in: bias[c] = q_b[c] - z_x * sum_k q_w[c][k].
 * Two saturation points, both clamped to int32 and counted in the report:
 *   - q_b itself (the int32 bias the bundle shows), every precision;
 *   - the folded value, for 32-bit accumulators (acc_elem == I32, int8 layers).
 * For acc_elem == I64 (int16 and 16x8 layers) the folded value is exact in int64 (|z_x| <= 2^15 and
 * |sum q_w| <= K * 2^15) and is written as int64_t.
 * b may be NULL (no bias). s_w has `n_sw` entries: 1 (per tensor) or `channels`. q_w is w_elem
 * (I8 or I16) [channels][K]. bias_out is int32_t[channels] (I32) or int64_t[channels] (I64);
 * qb_out (may be NULL) receives the plain int32 q_b[c] before folding. */
typedef struct qllc_bias_report {
  int64_t n_clipped;          /* channels whose bias was clamped to int32 */
  int64_t worst_channel;      /* channel of the worst (largest magnitude) clipped value; -1: none */
  double worst_value;         /* that value before clamping, in bias integer units */
  float worst_real;           /* the float bias of that channel */
} qllc_bias_report;

qllc_status qllc_quantize_bias(const float *b, int64_t channels, int64_t K, float s_x, const float *s_w,
                               int64_t n_sw, int32_t z_x, const void *q_w, qllc_elem w_elem, qllc_elem acc_elem,
                               void *bias_out, int32_t *qb_out, qllc_bias_report *rep, qllc_diag *diag);

/* The smallest weight scale for which b / (s_x * s_w) fits int32 (with a little headroom): feed it
 * to qllc_quantize_weights' min_scale to avoid clipping a large bias at int16. */
float qllc_bias_min_weight_scale(float b, float s_x);

/* ==== 3. calibration (calib.c) =================================================================== */

#define QLLC_HIST_DEFAULT_BINS 2048

/* A histogram over [-range, range), symmetric around 0, `bins` bins (even, >= 16), recorded in one
 * pass with range growth: the first non-zero values set range just above max |x|; a later value beyond
 * it doubles the range (repeatedly) and merges bin pairs, which is exact (no interpolation). The bin
 * holding 0 is bins / 2 whatever the range, so zeros recorded before any non-zero value are kept.
 * Non-finite values are not binned, only counted. min and max are exact. Memory: counts is malloc'd,
 * freed by qllc_hist_free. */
typedef struct qllc_hist {
  int32_t bins;
  float range;                /* 0 until the first non-zero value */
  float min, max;             /* +inf / -inf before any finite value */
  uint64_t total;             /* finite values recorded */
  uint64_t nonfinite;         /* NaN / inf values seen (not binned) */
  uint64_t *counts;           /* [bins] */
} qllc_hist;

qllc_status qllc_hist_init(qllc_hist *h, int32_t bins, qllc_diag *diag); /* bins <= 0: default */
void qllc_hist_free(qllc_hist *h);
void qllc_hist_record(qllc_hist *h, const float *x, int64_t n);

typedef struct qllc_calib_opts {
  qllc_calibration method;
  double percentile;          /* percentile method: e.g. 99.99 (default when 0) */
  int kl_levels;              /* kl method: quantized levels on one side, e.g. 128 for int8 (default
                                 when 0); capped at bins / 2 (so int16 KL degenerates to max |x|) */
  int levels;                 /* mse method: steps of the grid (qmax - qmin: 255 for int8, 65535 for
                                 int16; default 255 when 0) */
  int symmetric;              /* mse method: the range is [-T, T] (symmetric schemas) */
} qllc_calib_opts;

/* The calibrated range [lo, hi] of a histogram (not yet widened to contain 0):
 *   minmax:     [min, max]
 *   percentile: lo = the (100 - p)% quantile, hi = the p% quantile (bin edges, outward), within [min, max]
 *   kl:         TensorRT entropy calibration on the |x| histogram: the threshold T minimising
 *               KL(P || Q) over thresholds from kl_levels bins to bins / 2; returns [max(min, -T), min(max, T)]
 *   mse:        the range (bin edges, holding 0) minimising the expected squared error of quantizing the
 *               histogram on a grid of `levels` steps: rounding inside, clipping outside (calib.c)
 * An empty histogram gives [0, 0]. */
qllc_status qllc_calibrate(const qllc_hist *h, const qllc_calib_opts *o, float *lo, float *hi, qllc_diag *diag);

/* ==== 4. the profile file (profile.c) ============================================================ */

/* FNV-1a 64 over every live node's op type, name, and its input and output value names, ranks and
 * dimensions, in node order. Written to the profile as 16 hex digits. Profiling and compiling must
 * hash the graph at the same stage: after qllc_graph_optimize (the graph that is instrumented), so
 * the same model with the same qllc gives the same hash. */
uint64_t qllc_graph_hash(const qllc_graph *g);

typedef struct qllc_profile_entry {
  char *name;                 /* ONNX value name, malloc'd */
  qllc_hist hist;
} qllc_profile_entry;

/* The first calibration samples of one graph input, kept in the profile (issue 27). */
typedef struct qllc_profile_input {
  char *name;                 /* the graph input, malloc'd */
  uint64_t numel;             /* elements per sample */
  float *data;                /* [n_samples * numel] */
} qllc_profile_input;

/* What a profile keeps of its calibration data: at most this many samples, and at most this many bytes
 * of float data over all inputs (none when one sample is larger): what `qllc compare` and the precision
 * search measure on when no data set is given. */
#define QLLC_PROFILE_MAX_SAMPLES 32
#define QLLC_PROFILE_SAMPLE_BYTES ((uint64_t)1 << 20)

typedef struct qllc_profile {
  char *path;                 /* the file it was read from (NULL when made in memory) */
  uint64_t graph_hash;
  int32_t bins;
  int n, cap;
  qllc_profile_entry *entries;
  int *index;                 /* open-addressing hash of entry indices by name (-1: empty slot), */
  int index_cap;              /* index_cap slots, a power of 2 (profile.c); NULL/0 until the first add */
  int64_t n_samples;          /* calibration samples kept (0: none, e.g. a profile of an older qllc) */
  int64_t cap_samples;        /* room for this many (qllc_profile_keep_sample) */
  int n_inputs;
  qllc_profile_input *inputs; /* [n_inputs], each with n_samples samples */
} qllc_profile;

/* Creates an empty profile. Dispose with qllc_profile_free. NULL on OOM. */
qllc_profile *qllc_profile_new(uint64_t graph_hash, int32_t bins);
void qllc_profile_free(qllc_profile *p);
/* Finds or creates the histogram of `name`. NULL on OOM. */
qllc_hist *qllc_profile_add(qllc_profile *p, const char *name);
const qllc_hist *qllc_profile_find(const qllc_profile *p, const char *name);
/* Keeps one more calibration sample: data[i] holds numel[i] floats of the input names[i] (the same
 * inputs in every call). 1: kept; 0: not (QLLC_PROFILE_MAX_SAMPLES kept already, or the bytes would pass
 * QLLC_PROFILE_SAMPLE_BYTES); -1: out of memory or inputs unlike the first call's. */
int qllc_profile_keep_sample(qllc_profile *p, int n, const char *const *names, const float *const *data,
                             const uint64_t *numel);
/* Like find, but a missing value is QLLC_ERR_INVALID naming the value and the profile file. */
qllc_status qllc_profile_get(const qllc_profile *p, const char *name, const qllc_hist **out, qllc_diag *diag);
/* MISMATCH ("profile was made for another model") when the hash differs from qllc_graph_hash(g). */
qllc_status qllc_profile_check(const qllc_profile *p, const qllc_graph *g, qllc_diag *diag);

/* YAML (libyaml). Floats are written with "%.9g", which strtof reads back bit-exactly (9 significant
 * digits identify every float32; infinities and NaN as YAML's .inf, -.inf, .nan).
 * Errors: IO (cannot open/write), PARSE (malformed YAML or wrong structure; message has file:line
 * from libyaml's problem_mark, diag->file the file). */
qllc_status qllc_profile_write(const qllc_profile *p, const char *path, qllc_diag *diag);
qllc_status qllc_profile_read(const char *path, qllc_profile **out, qllc_diag *diag);
/* The same with another bound on values x bins (qllc_profile_read's is 2^27 counters, 1 GiB): the
 * fuzz harness uses a small one, so each input is read in milliseconds instead of allocating 1 GiB. */
qllc_status qllc_profile_read_limited(const char *path, uint64_t max_counters, qllc_profile **out, qllc_diag *diag);

/* ==== 5. the per-node quantization record (qllc_node.quant) ===================================== */

/* What the quantizer decided for one node; the lowering turns the arrays into CONST buffers and the
 * scalars into immediates, in the order of libjit/bitcode/kernels_q.h. All arrays live in the graph's
 * arena. Integer activation clamps are in the OUTPUT integer domain (fused Relu/Clip folded in, and
 * always within the type's range). */
typedef enum qllc_qkind {
  QLLC_QK_NONE = 0,
  QLLC_QK_FUSED,              /* Conv, FC (Gemm), MatMul+Add with constant weights: one kernel */
  QLLC_QK_MATMUL,             /* MatMul of two activations: per-tensor m/n, both zero points */
  QLLC_QK_RESCALE,            /* Add/Sub/Mul/Concat/avg pools/requantize: per-input m/n/z */
  QLLC_QK_TABLE,              /* Sigmoid/Tanh/LeakyRelu (8-bit: 256 entries; 16-bit: 513, interpolated) */
  QLLC_QK_SOFTMAX,            /* exp table + output reciprocal */
  QLLC_QK_SAME,               /* no arithmetic (max pool, views, Relu as clamp): output params = input's */
  QLLC_QK_CUSTOM              /* a custom op (issue 7): the user kernel gets each value's scale and zero
                                 point (lowering reads them from the values); in/out elem, z_x, z_y and
                                 inputs[i].zero_point are filled for the report */,
  QLLC_QK_LAYERNORM           /* issue 15: ln_g, ln_b, ln_eps_q (the kernel normalises exact int64 sums) */
} qllc_qkind;

typedef struct qllc_qinput {
  int32_t m, n;               /* this input's multiplier s_in / s_y (or as documented per kernel) */
  int32_t zero_point;         /* this input's zero point */
} qllc_qinput;

typedef struct qllc_qnode {
  qllc_qkind kind;
  qllc_elem in_elem;          /* I8, U8 or I16 */
  qllc_elem w_elem;           /* weight kind: I8 or I16 (FUSED only; 16x8 is I16 in, I8 weights) */
  qllc_elem out_elem;
  qllc_elem acc_elem;         /* I32 for 8-bit inputs, I64 for int16 inputs */
  int32_t z_x;                /* input zero point: padded positions read it (real 0) */
  int32_t z_y;                /* output zero point */
  int32_t act_lo, act_hi;     /* output clamp, integer domain */
  /* FUSED: per output channel (channels == 1 for per-tensor weights is expanded to `channels`
     entries anyway, so kernels always index [c]) */
  int64_t channels;
  void *bias;                 /* int32_t[channels] (acc I32) or int64_t[channels] (acc I64), folded
                                 with -z_x * sum_k q_w[c][k]; never NULL (zeros when no bias) */
  int32_t *qbias;             /* [channels] the plain int32 quantized bias (the report shows it) */
  int32_t *m, *n;             /* [channels]; QK_MATMUL: [1] */
  float *w_scales;            /* [channels] the weight scales */
  void *w_packed;             /* weights in the kernel's layout (see kernels_q.h) */
  qllc_bias_report bias_report;
  int32_t z_w;                /* QK_MATMUL: the second operand's zero point; 0 for constant weights */
  /* RESCALE */
  int n_inputs;
  qllc_qinput *inputs;        /* [n_inputs] */
  int32_t shared_n;           /* Add/Sub: the common shift of inputs[i].m */
  int32_t *pool_m, *pool_n;   /* avg pool with a varying count: [KH*KW + 1], indexed by the count */
  /* TABLE / SOFTMAX */
  int32_t table_len;          /* 256 or 513 (TABLE); 256 or 513 (SOFTMAX exp table) */
  void *table;                /* TABLE: int8_t/uint8_t/int16_t[table_len]; SOFTMAX: int32_t[table_len] */
  int32_t softmax_recip;      /* SOFTMAX: R = 1 / s_y (the quantizer picks s_y = 1 / R) */
  /* LAYERNORM (issue 15): g = gamma / s_y, b = beta / s_y + z_y over the normalised length, and
     eps_q = epsilon / s_x^2; PRelu (TABLE) uses channels for its per-channel tables */
  int64_t ln_len;
  float *ln_g, *ln_b;
  float ln_eps_q;
} qllc_qnode;

/* ==== 6. building records (qnode.c, tables.c) =================================================== */

/* The output clamp [act_lo, act_hi] (float, +-INFINITY when none: a fused Relu is [0, +inf), a Clip
 * its bounds) in the output's integer domain: quantized with `out`'s parameters, then intersected with
 * the type's range. Relu gives exactly z_y as the lower bound. */
void qllc_quant_act_clamp(float act_lo, float act_hi, const qllc_qparams *out, int32_t *qlo, int32_t *qhi);

/* Fills a QLLC_QK_FUSED record for a Conv / FC / MatMul+Add with CONSTANT float weights w[channels][K]
 * (K = C/group * KH * KW for Conv; an FC's W[N][K]; a MatMul's constant B[K][N] must be transposed to
 * [N][K] by the caller; a ChannelAffine is the case K = 1 with w = a[C], b = its offset) and float bias b[channels] (may be NULL). x and y are the input and output
 * parameters, w_elem I8 or I16. widen_for_bias: raise a channel's weight scale when its bias would
 * otherwise saturate int32 (issue 4's way out; costs weight resolution on that channel only).
 * Every array (bias, qbias, m, n, w_scales, w_packed: weights quantized, [channels][K]) is allocated in
 * `arena`; *out too. Errors name `node`. A clipped bias is not an error: it is in (*out)->bias_report
 * for the precision report (and --strict). */
qllc_status qllc_qnode_fused(qllc_arena *arena, const char *node, const qllc_qparams *x, const qllc_qparams *y,
                             const float *w, int64_t channels, int64_t K, const float *b, qllc_elem w_elem,
                             int per_tensor, int power2, int widen_for_bias, float act_lo, float act_hi,
                             qllc_qnode **out, qllc_diag *diag);

/* Functions evaluated through tables. */
typedef enum qllc_qfunc {
  QLLC_QF_SIGMOID = 0, QLLC_QF_TANH, QLLC_QF_LEAKY_RELU, QLLC_QF_EXP,
  /* issue 15 (alpha: Pow's exponent, HardSigmoid's alpha; beta: HardSigmoid's beta) */
  QLLC_QF_ERF, QLLC_QF_GELU, QLLC_QF_SQRT, QLLC_QF_NEG, QLLC_QF_RECIPROCAL, QLLC_QF_POW, QLLC_QF_HARD_SIGMOID,
  QLLC_QF_HARD_SWISH, QLLC_QF_GELU_TANH
} qllc_qfunc;

/* The lut table of a unary op (in and out are the same kind, see kernels_q.h):
 *   8-bit: 256 entries of the output type, entry i for input q = qmin + i:
 *          quantize_out(f(s_in * (q - z_in))), rounding half to even.
 *   int16: 513 int16 entries, entry j = quantize_out(f(s_in * (-32768 + 128 j - z_in))), read with
 *          linear interpolation (qllc_lut16_eval).
 * `table` must have room for 513 int16 (the larger case); *len receives 256 or 513. alpha: LeakyRelu. */
qllc_status qllc_quant_table(qllc_qfunc f, float alpha, const qllc_qparams *in, const qllc_qparams *out, void *table,
                             int32_t *len, qllc_diag *diag);
/* The same with a second parameter (HardSigmoid's beta); qllc_quant_table is this with beta 0.5. */
qllc_status qllc_quant_table2(qllc_qfunc f, float alpha, float beta, const qllc_qparams *in, const qllc_qparams *out,
                              void *table, int32_t *len, qllc_diag *diag);
/* The int16 interpolation the lut_i16 kernel performs (the reference for its tests). */
int32_t qllc_lut16_eval(const int16_t *table, int32_t x);

/* Softmax: the output parameters are fixed (u8: s = 1/256, z = 0; i8: s = 1/256, z = -128;
 * i16: s = 1/32768, z = 0) and *recip = 1/s. The exp table: 8-bit 256 int32 entries
 * round(2^24 * exp(-s_x * d)), d = 0..255; int16 513 entries for d = 128 j (interpolated).
 * `exp_table` must have room for 513 int32. */
qllc_status qllc_quant_softmax(const qllc_qparams *in, qllc_qparams *out, int32_t *recip, int32_t *exp_table,
                               int32_t *len, qllc_diag *diag);

/* Softmax on a calibrated output grid (issue 13): `out` holds the parameters chosen from the observed
 * range (within [0, 1]); its scale becomes 1 / R with R = floor(1 / scale) (at least 1, at most 2^30, so
 * the grid still covers the range), its zero point and kind are kept, *recip = R. The exp table as
 * qllc_quant_softmax. The kernel computes round(e * R / S) + z_y, so any R and z_y are exact. */
qllc_status qllc_quant_softmax_range(const qllc_qparams *in, qllc_qparams *out, int32_t *recip, int32_t *exp_table,
                                     int32_t *len, qllc_diag *diag);

/* Average pool multipliers: entry c (1 <= c <= max_count) is M = s_x / (s_y * c); entry 0 is unused
 * (m = 0, n = 0). m and n have max_count + 1 entries. */
qllc_status qllc_quant_pool_multipliers(float s_x, float s_y, int64_t max_count, int32_t *m, int32_t *n,
                                        qllc_diag *diag);

/* ==== 7. the graph quantizer (quantize.c) and the precision report (report.c) ==================== */

/* Asked by the quantizer before it gives a node a precision: does the target have a kernel for this
 * node with these element kinds (w: the weight kind for fused layers, else the second input's kind or
 * QLLC_ELEM_COUNT when there is none)? The facade answers from the target's kernel library; for a
 * custom op (QLLC_OP_CUSTOM: every input and the output of kind `in`/`out`) from the user's --kernels
 * files, which must define the function qllc_custom_kernel_name(n, in) names (src/lower/lower.h). */
typedef int (*qllc_kernel_query)(void *ctx, const qllc_node *n, qllc_elem in, qllc_elem w, qllc_elem out);

/* Mixed precision (issue 13): the precision of one node. BASE: the options' act_elem / w_elem. */
typedef enum qllc_nprec { QLLC_NP_BASE = 0, QLLC_NP_INT8, QLLC_NP_16X8, QLLC_NP_INT16 } qllc_nprec;

typedef struct qllc_prec_map {
  int n;
  const char *const *nodes;   /* node names */
  const qllc_nprec *prec;     /* their precisions */
} qllc_prec_map;
/* precmap.c: a map with room for cap nodes (dispose with qllc_prec_map_free; NULL on OOM); add one
 * node (its name copied; -1 on OOM); copy (NULL on OOM). */
qllc_prec_map *qllc_prec_map_new(int cap);
int qllc_prec_map_add(qllc_prec_map *m, const char *node, qllc_nprec p);
void qllc_prec_map_free(qllc_prec_map *m);
qllc_prec_map *qllc_prec_map_copy(const qllc_prec_map *m);
const char *qllc_nprec_name(qllc_nprec p); /* "int8", "16x8", "int16" */
/* The map file (format at the top of precmap.c). read: MISMATCH when made for a graph of another hash. */
qllc_status qllc_prec_map_write(const char *path, const qllc_prec_map *m, uint64_t graph_hash, const char *comment,
                                qllc_diag *diag);
qllc_status qllc_prec_map_read(const char *path, uint64_t graph_hash, qllc_prec_map **out, qllc_diag *diag);

typedef struct qllc_quant_opts {
  qllc_elem act_elem;         /* I8 or I16 (I8 may become U8 per value under symmetric_uint8) */
  qllc_elem w_elem;           /* I8 or I16; I16 activations with I8 weights is the 16x8 mode */
  qllc_schema schema;
  qllc_calib_opts calib;
  int per_tensor;             /* weights per tensor */
  const char *const *keep_float; /* op types (ONNX spelling, e.g. "Softmax") or node names */
  int n_keep_float;
  int quantized_io;           /* graph inputs/outputs become integer (no boundary Quantize/Dequantize) */
  int strict;                 /* any node left in float, or a clipped bias: QLLC_ERR_STRICT naming it */
  int widen_for_bias;         /* raise a channel's weight scale rather than clip its bias (default 1) */
  qllc_kernel_query supports; /* may be NULL: everything the scalar library has is assumed */
  void *supports_ctx;
  /* mixed precision (issue 13): nodes the map names compute at their precision (16x8: int16 activations
     and int8 weights; int16: both int16); the others at act_elem / w_elem. A SAME node (views, max pool,
     Relu as a clamp) follows its input. Where a value of one kind feeds a node of the other, one
     requantize node (a fused integer rescale, qllc_k_requantize_<in>_<out>) converts it. act_elem must
     be I8 (not under symmetric_uint8). schema16: the schema of the int16 values. */
  const qllc_prec_map *map;
  qllc_schema schema16;
} qllc_quant_opts;

/* Quantizes an optimized float graph in place, using the profile's ranges (checked against the graph
 * hash first). Every value computed by a quantized node gets elem/scale/zero point; fused layers get a
 * qllc_qnode (node->quant); QUANTIZE/DEQUANTIZE nodes are inserted at the model's boundary (unless
 * quantized_io) and around nodes kept in float. A node is kept in float only when the user asked
 * (keep_float, node->float_reason says so) or it cannot be quantized (reason says why); with strict,
 * either is QLLC_ERR_STRICT naming the node, and so is a clipped bias. A precision the target cannot
 * do (supports() says no) for a node the user did not keep in float is QLLC_ERR_UNSUPPORTED naming the
 * node and op. */
qllc_status qllc_quantize_graph(qllc_graph *g, const qllc_profile *prof, const qllc_quant_opts *o, qllc_diag *diag);

/* The precision report, derived from the quantized graph: one line per node with its op, precision
 * (e.g. "i8 x i8 -> i8, acc i32, bias i32"), input/output scales and zero points; each node kept in
 * float with its reason; each clipped bias with node, count, worst value. Every line starts with
 * `prefix` (e.g. " * " inside a C comment). Returns the number of nodes left in float. */
int qllc_quant_report_print(const qllc_graph *g, FILE *f, const char *prefix);
/* 1 when the graph has anything the precision report speaks about: a node with a quantization record
 * (the quantizer's or the QDQ pass's), a QuantizeLinear/DequantizeLinear, or a node kept in float with
 * a reason. The report is then worth printing even without --precision (a pre-quantized model). */
int qllc_graph_is_quantized(const qllc_graph *g);

/* ==== 8. pre-quantized models (qdq.c, issue 6) ==================================================== */

/* 1 when the graph has QuantizeLinear/DequantizeLinear nodes read from the model (not the quantizer's),
 * or QLinearConv/QLinearMatMul nodes (whose constant parameters the pass turns into fused records). */
int qllc_graph_has_qdq(const qllc_graph *g);
/* Turns DequantizeLinear -> op -> QuantizeLinear units into the quantizer's quantized nodes with the
 * model's own parameters (see the comment at the top of qdq.c); what cannot be fused stays explicit and
 * is marked keep_float with its reason. Run after qllc_graph_optimize. */
qllc_status qllc_pass_qdq(qllc_graph *g, qllc_diag *diag);

#endif
