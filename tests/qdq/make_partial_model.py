#!/usr/bin/env python3
"""Generates tests/qdq/data/qdq_partial.onnx for report_test.sh: a QDQ model only part of which qllc
can fuse, so the precision report must name each fused node, each QuantizeLinear/DequantizeLinear left
explicit, and each float node with the reason it was not fused.

  input -> Q/DQ -> Conv (int8 per-channel weights, float bias) -> Q/DQ -> Sigmoid (no integer form in the
  QDQ pass) -> Q/DQ -> Conv with FLOAT weights (not behind a DequantizeLinear) -> Q/DQ -> Relu -> output
  (the last Relu reads a DequantizeLinear but its output is a model output, not quantized).
Run: /usr/bin/python3 tests/qdq/make_partial_model.py (needs python3-onnx and numpy; not needed by the test)."""
import os
import numpy as np
import onnx
from onnx import helper, numpy_helper, TensorProto

rng = np.random.default_rng(61)
out_dir = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data")
inits, nodes = [], []


def const(name, arr):
    inits.append(numpy_helper.from_array(arr, name))
    return name


def qdq(x, y, s, z):
    nodes.append(helper.make_node("QuantizeLinear", [x, const(y + "_s", np.float32(s)), const(y + "_z", np.uint8(z))], [y + "_q"], name=y + "_quant"))
    nodes.append(helper.make_node("DequantizeLinear", [y + "_q", y + "_s", y + "_z"], [y], name=y + "_dequant"))
    return y


w = rng.normal(0, 0.5, (4, 3, 3, 3)).astype(np.float32)
s = (np.abs(w).reshape(4, -1).max(1) / 127).astype(np.float32)
const("w1_q", np.clip(np.round(w / s.reshape(-1, 1, 1, 1)), -127, 127).astype(np.int8))
nodes.append(helper.make_node("DequantizeLinear", ["w1_q", const("w1_s", s), const("w1_z", np.zeros(4, np.int8))], ["w1"], axis=0, name="w1_dequant"))
const("b1", rng.normal(0, 0.2, 4).astype(np.float32))
const("w2", rng.normal(0, 0.3, (4, 4, 1, 1)).astype(np.float32))

qdq("input", "x", 0.02, 128)
nodes.append(helper.make_node("Conv", ["x", "w1", "b1"], ["c1"], pads=[1, 1, 1, 1], name="conv1"))
qdq("c1", "c1dq", 0.05, 128)
nodes.append(helper.make_node("Sigmoid", ["c1dq"], ["sg"], name="sigmoid"))
qdq("sg", "sgdq", 1 / 255, 0)
nodes.append(helper.make_node("Conv", ["sgdq", "w2"], ["c2"], name="conv_float_w"))
qdq("c2", "c2dq", 0.03, 128)
nodes.append(helper.make_node("Relu", ["c2dq"], ["output"], name="relu_out"))

graph = helper.make_graph(nodes, "qdq_partial", [helper.make_tensor_value_info("input", TensorProto.FLOAT, [1, 3, 6, 6])],
                          [helper.make_tensor_value_info("output", TensorProto.FLOAT, [1, 4, 6, 6])], inits)
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)], producer_name="tests/qdq/make_partial_model.py")
onnx.checker.check_model(model)
onnx.save(model, os.path.join(out_dir, "qdq_partial.onnx"))
