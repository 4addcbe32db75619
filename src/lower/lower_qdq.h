/* src/lower/lower_qdq.h: lowering of the ops of pre-quantized ONNX models (issue 6), lower_qdq.c.
 * Private to src/lower; lower.c asks these two before its own dispatch. */
#ifndef QLLC_LOWER_QDQ_H
#define QLLC_LOWER_QDQ_H

#include "lower/lower_internal.h"

/* 1 when lower_qdq.c lowers n: QuantizeLinear/DequantizeLinear as read from the model (with their
 * scale input), QLinearConv/QLinearMatMul left unfused, MatMulInteger, ConvInteger,
 * DynamicQuantizeLinear. */
int qllc_lower_qdq_owns(const qllc_node *n);
qllc_status qllc_lower_qdq(qllc_lower_ctx *c, const qllc_node *n);

#endif
