#!/bin/bash
# tests/qdq/report_test.sh: the precision report of a pre-quantized (QDQ) model is printed without
# --precision, by `qllc info`, `qllc compile --verbose` and in the bundle header, and it tells the truth:
#  - qdq_cnn.onnx (every unit recognised): each fused Conv/Gemm with its integer kinds and the MODEL's
#    scales and zero points (read from the model by hand below), the boundary Q/DQ, nothing in float;
#  - qdq_partial.onnx (tests/qdq/make_partial_model.py): the Conv that fuses, the Sigmoid and the Conv
#    with float weights kept in float each with the reason, the Q/DQ left explicit, the summary counts;
#  - a float model still says "all nodes float".
: "${QLLC:?}" "${QLLC_SOURCE_DIR:?}"
. "$QLLC_SOURCE_DIR/tests/lib.sh"
D=$QLLC_SOURCE_DIR/tests/qdq/data
has() { grep -Eq -- "$2" "$1" || fail "$1 lacks /$2/"; }
hasnt() { ! grep -Eq -- "$2" "$1" || fail "$1 has /$2/"; }

# ---- every unit fused ----
"$QLLC" info "$D/qdq_cnn.onnx" >"$tmp/cnn" 2>&1 || fail "info qdq_cnn exit $?"
sed -n '/^== precision ==/,/^== memory ==/p' "$tmp/cnn" >"$tmp/cnn.rep"
hasnt "$tmp/cnn.rep" 'all nodes float'
has "$tmp/cnn.rep" '^precision report:'
# the first Conv: u8 input (x_q: s=0.02 z=128), int8 per-channel weights, Relu into the clamp's floor z=0
has "$tmp/cnn.rep" 'Conv +u8 x i8 -> u8  acc i32  bias i32  fused  x s=0.02 z=128  y s=0.029999999 z=0  w per-channel\(8\)'
has "$tmp/cnn.rep" 'Conv +u8 x i8 -> u8  acc i32  bias i32  fused  x s=0.029999999 z=0  y s=0.050000001 z=120  w per-channel\(8\)'
has "$tmp/cnn.rep" 'Gemm +u8 x i8 -> u8  acc i32  bias i32  fused  x s=0.029999999 z=110  y s=0.039999999 z=128  w per-channel\(5\)'
has "$tmp/cnn.rep" 'Add +u8 -> u8  rescale  a s=0.050000001 z=120  b s=0.029999999 z=0  y s=0.059999999 z=100'
has "$tmp/cnn.rep" 'QuantizeLinear +f32 -> u8  y s=0.02 z=128'
has "$tmp/cnn.rep" 'DequantizeLinear +u8 -> f32  x s=0.039999999 z=128'
has "$tmp/cnn.rep" '^summary: 7 nodes quantized \(int8\), 0 in float, 3 quantize/dequantize, 0 clipped biases$'

# ---- partly fused: reasons ----
"$QLLC" info "$D/qdq_partial.onnx" >"$tmp/part" 2>&1 || fail "info qdq_partial exit $?"
sed -n '/^== precision ==/,/^== memory ==/p' "$tmp/part" >"$tmp/part.rep"
has "$tmp/part.rep" '^  conv1 +Conv +u8 x i8 -> u8  acc i32  bias i32  fused  x s=0.02 z=128  y s=0.050000001 z=128'
has "$tmp/part.rep" '^  sigmoid +Sigmoid +float  \(pre-quantized model: not fused, Sigmoid has no integer form'
has "$tmp/part.rep" '^  conv_float_w +Conv +float  \(pre-quantized model: not fused, its weights are not an integer constant behind a DequantizeLinear\)'
has "$tmp/part.rep" '^  relu_out +Relu +float  \(pre-quantized model: not fused, its output is not quantized'
has "$tmp/part.rep" '^  c1dq_dequant +DequantizeLinear +u8 -> f32  x s=0.050000001 z=128'
has "$tmp/part.rep" '^  sgdq_quant +QuantizeLinear +f32 -> u8  y s=0.003921568'
has "$tmp/part.rep" '^summary: 1 node quantized \(int8\), 3 in float, 6 quantize/dequantize, 0 clipped biases$'

# ---- the same report in compile --verbose and the bundle header ----
"$QLLC" compile "$D/qdq_partial.onnx" -o "$tmp/b" --name part --verbose >"$tmp/verbose" 2>&1 || fail "compile exit $?"
has "$tmp/verbose" '^  sigmoid +Sigmoid +float  \(pre-quantized model'
has "$tmp/verbose" '^summary: 1 node quantized'
has "$tmp/b/part.h" 'conv1 +Conv +u8 x i8 -> u8  acc i32  bias i32  fused'
has "$tmp/b/part.h" 'sigmoid +Sigmoid +float  \(pre-quantized model: not fused'
has "$tmp/b/part.h" 'summary: 1 node quantized \(int8\), 3 in float, 6 quantize/dequantize'

# ---- a float model is still reported as float ----
"$QLLC" info "$QLLC_SOURCE_DIR/models/digits/digits.onnx" >"$tmp/float" 2>&1 || fail "info digits exit $?"
has "$tmp/float" '^all nodes float'

[ $fails = 0 ] && echo "report_test: ok" || { echo "report_test: $fails failures"; exit 1; }
