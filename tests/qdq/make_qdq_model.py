#!/usr/bin/env python3
"""Generates tests/qdq/data/qdq_cnn.onnx (a QDQ model as onnxruntime writes them: uint8 activations,
int8 per-channel weights, float biases) plus one input and the reference output, for qdq_model_test.c.

The reference executes the QDQ graph's definition in numpy: every DequantizeLinear -> op ->
QuantizeLinear unit is the float op on the dequantized values, then QuantizeLinear (round half to
even, saturate). qllc computes the same units as fused integer kernels; the test allows 1 LSB.
Run: /usr/bin/python3 tests/qdq/make_qdq_model.py (needs python3-onnx and numpy; not needed by the test)."""
import os
import numpy as np
import onnx
from onnx import helper, numpy_helper, TensorProto

rng = np.random.default_rng(6)
out_dir = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data")
os.makedirs(out_dir, exist_ok=True)
inits, nodes = [], []


def const(name, arr):
    inits.append(numpy_helper.from_array(arr, name))
    return name


def q(x, y, s, z):
    nodes.append(helper.make_node("QuantizeLinear", [x, const(y + "_s", np.float32(s)), const(y + "_z", np.uint8(z))], [y]))
    return y


def dq(x, y, s, z):
    nodes.append(helper.make_node("DequantizeLinear", [x, const(y + "_s", np.float32(s)), const(y + "_z", np.uint8(z))], [y]))
    return y


def weights(name, shape, axis_len):
    w = rng.normal(0, 1, shape).astype(np.float32) * rng.uniform(0.05, 1.0, (axis_len,) + (1,) * (len(shape) - 1)).astype(np.float32)
    s = (np.abs(w).reshape(axis_len, -1).max(1) / 127).astype(np.float32)
    wq = np.clip(np.round(w / s.reshape((-1,) + (1,) * (len(shape) - 1))), -127, 127).astype(np.int8)
    const(name + "_q", wq)
    nodes.append(helper.make_node("DequantizeLinear", [name + "_q", const(name + "_s", s), const(name + "_z", np.zeros(axis_len, np.int8))],
                                  [name], axis=0))
    return wq, s


# activation parameters (uint8, asymmetric), chosen to cover the ranges the float values reach
P = {"x": (0.02, 128), "c1": (0.03, 0), "c2": (0.05, 120), "add": (0.06, 100), "gap": (0.03, 110), "fc": (0.04, 128)}

x = "input"
q(x, "x_q", *P["x"]); dq("x_q", "x_dq", *P["x"])
w1, s1 = weights("w1", (8, 3, 3, 3), 8); b1 = const("b1", rng.normal(0, 0.2, 8).astype(np.float32))
nodes.append(helper.make_node("Conv", ["x_dq", "w1", "b1"], ["c1"], pads=[1, 1, 1, 1]))
nodes.append(helper.make_node("Relu", ["c1"], ["r1"]))
q("r1", "r1_q", *P["c1"]); dq("r1_q", "r1_dq", *P["c1"]); dq("r1_q", "r1_dq2", *P["c1"])
w2, s2 = weights("w2", (8, 8, 3, 3), 8); b2 = const("b2", rng.normal(0, 0.2, 8).astype(np.float32))
nodes.append(helper.make_node("Conv", ["r1_dq", "w2", "b2"], ["c2"], pads=[1, 1, 1, 1]))
q("c2", "c2_q", *P["c2"]); dq("c2_q", "c2_dq", *P["c2"])
nodes.append(helper.make_node("Add", ["c2_dq", "r1_dq2"], ["add"]))
q("add", "add_q", *P["add"]); dq("add_q", "add_dq", *P["add"]); dq("add_q", "feat", *P["add"])
nodes.append(helper.make_node("MaxPool", ["add_dq"], ["mp"], kernel_shape=[2, 2], strides=[2, 2]))
q("mp", "mp_q", *P["add"]); dq("mp_q", "mp_dq", *P["add"])
nodes.append(helper.make_node("GlobalAveragePool", ["mp_dq"], ["gap"]))
q("gap", "gap_q", *P["gap"]); dq("gap_q", "gap_dq", *P["gap"])
nodes.append(helper.make_node("Flatten", ["gap_dq"], ["flat"]))
q("flat", "flat_q", *P["gap"]); dq("flat_q", "flat_dq", *P["gap"])
w3, s3 = weights("w3", (5, 8), 5); b3 = const("b3", rng.normal(0, 0.5, 5).astype(np.float32))
nodes.append(helper.make_node("Gemm", ["flat_dq", "w3", "b3"], ["fc"], transB=1))
q("fc", "fc_q", *P["fc"]); dq("fc_q", "output", *P["fc"])

graph = helper.make_graph(nodes, "qdq_cnn", [helper.make_tensor_value_info("input", TensorProto.FLOAT, [1, 3, 8, 8])],
                          [helper.make_tensor_value_info("output", TensorProto.FLOAT, [1, 5]),
                           helper.make_tensor_value_info("feat", TensorProto.FLOAT, [1, 8, 8, 8])], inits)
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)], producer_name="tests/qdq/make_qdq_model.py")
onnx.checker.check_model(model)
onnx.save(model, os.path.join(out_dir, "qdq_cnn.onnx"))


# ---- the reference: the QDQ definition in numpy ----
def quant(v, s, z):
    return np.clip(np.round(v.astype(np.float32) / np.float32(s)) + z, 0, 255).astype(np.uint8)


def deq(v, s, z):
    return ((v.astype(np.int32) - z).astype(np.float32) * np.float32(s)).astype(np.float32)


def conv(x, w, b, pad):
    n, c, h, wd = x.shape
    m, _, kh, kw = w.shape
    xp = np.pad(x, ((0, 0), (0, 0), (pad, pad), (pad, pad))).astype(np.float64)
    oh, ow = h + 2 * pad - kh + 1, wd + 2 * pad - kw + 1
    y = np.zeros((n, m, oh, ow))
    for i in range(oh):
        for j in range(ow):
            y[:, :, i, j] = np.tensordot(xp[:, :, i:i + kh, j:j + kw], w.astype(np.float64), axes=([1, 2, 3], [1, 2, 3]))
    return (y + b.reshape(1, -1, 1, 1)).astype(np.float32)


NSAMPLES = 8
for k in range(NSAMPLES):
    inp = rng.uniform(-2.4, 2.4, (1, 3, 8, 8)).astype(np.float32)
    xq = quant(inp, *P["x"])
    W1 = (w1.astype(np.float32) * s1.reshape(-1, 1, 1, 1)); W2 = (w2.astype(np.float32) * s2.reshape(-1, 1, 1, 1)); W3 = w3.astype(np.float32) * s3.reshape(-1, 1)
    B1 = numpy_helper.to_array(inits[[i.name for i in inits].index("b1")])
    B2 = numpy_helper.to_array(inits[[i.name for i in inits].index("b2")])
    B3 = numpy_helper.to_array(inits[[i.name for i in inits].index("b3")])
    r1 = quant(np.maximum(conv(deq(xq, *P["x"]), W1, B1, 1), 0), *P["c1"])
    c2 = quant(conv(deq(r1, *P["c1"]), W2, B2, 1), *P["c2"])
    ad = quant(deq(c2, *P["c2"]) + deq(r1, *P["c1"]), *P["add"])
    mp = ad.reshape(1, 8, 4, 2, 4, 2).max(axis=(3, 5))
    gap = quant(deq(mp, *P["add"]).mean(axis=(2, 3), keepdims=True), *P["gap"])
    fc = quant(deq(gap.reshape(1, 8), *P["gap"]) @ W3.T + B3, *P["fc"])
    out = deq(fc, *P["fc"])
    onnx.save_tensor(numpy_helper.from_array(inp, "input"), os.path.join(out_dir, "qdq_cnn_input_%d.pb" % k))
    onnx.save_tensor(numpy_helper.from_array(out, "output"), os.path.join(out_dir, "qdq_cnn_output_%d.pb" % k))
    onnx.save_tensor(numpy_helper.from_array(deq(ad, *P["add"]), "feat"), os.path.join(out_dir, "qdq_cnn_feat_%d.pb" % k))
    print("output q", fc.flatten(), "intermediate r1 range", r1.min(), r1.max(), "c2", c2.min(), c2.max(), "add", ad.min(), ad.max())
