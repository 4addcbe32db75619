#!/usr/bin/env python3
"""Generates tests/qdq/data/ort_res.onnx: a tiny residual block in the QDQ format onnxruntime's
quantizer writes (quantize_static, QDQ, per_channel=True), for tests/qdq/ort_format_test.c:
  - uint8 activations (asymmetric), int8 per-channel weights behind DequantizeLinear axis=0;
  - int32 biases behind a DequantizeLinear with PER-CHANNEL scales s_x * s_w[c] (float32 products,
    as onnxruntime computes them), int32 zero points 0, axis=0;
  - the residual Add followed by a Relu and only then the QuantizeLinear (Add -> Relu -> Q).
Graph: input -Q/DQ-> Conv1(3->8, 3x3, pad 1) -> Relu -> Q/DQ -> Conv2(8->8) -> Q/DQ
       -> Add(conv2, relu1) -> Relu -> Q -> DQ -> output.
Writes NSAMPLES inputs and the reference outputs (ONNX TensorProto .pb, what qllc_tensor_read reads).
The reference executes the QDQ definition in numpy: dequantize, float op (float64 accumulation), then
QuantizeLinear (x / s rounded half to even, + z, saturate to uint8). Checked once by hand against
onnxruntime 1.30 (bench/ort/ort.js, graph optimizations on): identical on all 4 x 512 output elements.
Run: /usr/bin/python3 tests/qdq/make_ort_format.py (needs python3-onnx and numpy; not needed by the test)."""
import os
import numpy as np
import onnx
from onnx import helper, numpy_helper, TensorProto

rng = np.random.default_rng(18)
out_dir = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data")
os.makedirs(out_dir, exist_ok=True)
inits, nodes = [], []
NSAMPLES = 4
SHAPE = (1, 3, 8, 8)


def const(name, arr):
    inits.append(numpy_helper.from_array(arr, name))
    return name


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
    return (y + b.astype(np.float64).reshape(1, -1, 1, 1)).astype(np.float32)


def params(lo, hi):
    """onnxruntime's MinMax calibration for uint8: the range widened to include 0, z = round(-lo / s)."""
    lo, hi = min(float(lo), 0.0), max(float(hi), 0.0)
    s = np.float32((hi - lo) / 255.0)
    return s, int(np.clip(np.round(-lo / s), 0, 255))


def weights(shape, gain):
    w = gain * rng.normal(0, 1, shape).astype(np.float32) * rng.uniform(0.05, 1.0, (shape[0], 1, 1, 1)).astype(np.float32)
    s = (np.abs(w).reshape(shape[0], -1).max(1) / 127).astype(np.float32)
    wq = np.clip(np.round(w / s.reshape(-1, 1, 1, 1)), -127, 127).astype(np.int8)
    return wq, s


def bias(b, s_x, s_w):
    """int32 bias at the per-channel scale s_x * s_w[c] (computed in float32, like onnxruntime)."""
    sb = (np.float32(s_x) * s_w).astype(np.float32)
    return np.round(b / sb).astype(np.int32), sb


# ---- float parameters, then calibration of the activation ranges on the samples (float model) ----
inputs = [rng.uniform(-2.0, 2.0, SHAPE).astype(np.float32) for _ in range(NSAMPLES)]
w1, s1 = weights((8, 3, 3, 3), 1.0); b1f = rng.normal(0, 0.3, 8).astype(np.float32)
w2, s2 = weights((8, 8, 3, 3), 0.25); b2f = rng.normal(0, 0.3, 8).astype(np.float32)
W1 = w1.astype(np.float32) * s1.reshape(-1, 1, 1, 1)
W2 = w2.astype(np.float32) * s2.reshape(-1, 1, 1, 1)
allx = np.stack(inputs)
r1f = [np.maximum(conv(x, W1, b1f, 1), 0) for x in inputs]
c2f = [conv(r, W2, b2f, 1) for r in r1f]
adf = [c + r for c, r in zip(c2f, r1f)]
P = {"x": params(allx.min(), allx.max()), "r1": params(0, max(r.max() for r in r1f)),
     "c2": params(min(c.min() for c in c2f), max(c.max() for c in c2f)), "add": params(min(a.min() for a in adf), max(a.max() for a in adf))}
# The Add's output range is calibrated BEFORE its Relu (z > 0), so the Relu is a real clamp at z, not
# just uint8 saturation: a fused Add that dropped the Relu would be caught by the outputs too.
q1, sb1 = bias(b1f, P["x"][0], s1)
q2, sb2 = bias(b2f, P["r1"][0], s2)


# ---- the model ----
def q(x, y, p):
    nodes.append(helper.make_node("QuantizeLinear", [x, const(y + "_s", np.float32(p[0])), const(y + "_z", np.uint8(p[1]))], [y]))
    return y


def dq(x, y, p):
    nodes.append(helper.make_node("DequantizeLinear", [x, const(y + "_s", np.float32(p[0])), const(y + "_z", np.uint8(p[1]))], [y]))
    return y


def dq_const(name, arr, s, zero):
    const(name + "_quantized", arr)
    nodes.append(helper.make_node("DequantizeLinear", [name + "_quantized", const(name + "_scale", s), const(name + "_zero_point", zero)],
                                  [name], axis=0))
    return name


q("input", "input_q", P["x"]); dq("input_q", "input_dq", P["x"])
dq_const("w1", w1, s1, np.zeros(8, np.int8)); dq_const("b1", q1, sb1, np.zeros(8, np.int32))
nodes.append(helper.make_node("Conv", ["input_dq", "w1", "b1"], ["c1"], pads=[1, 1, 1, 1], name="conv1"))
nodes.append(helper.make_node("Relu", ["c1"], ["r1"], name="relu1"))
q("r1", "r1_q", P["r1"]); dq("r1_q", "r1_dq", P["r1"]); dq("r1_q", "r1_dq2", P["r1"])
dq_const("w2", w2, s2, np.zeros(8, np.int8)); dq_const("b2", q2, sb2, np.zeros(8, np.int32))
nodes.append(helper.make_node("Conv", ["r1_dq", "w2", "b2"], ["c2"], pads=[1, 1, 1, 1], name="conv2"))
q("c2", "c2_q", P["c2"]); dq("c2_q", "c2_dq", P["c2"])
nodes.append(helper.make_node("Add", ["c2_dq", "r1_dq2"], ["add"], name="add"))
nodes.append(helper.make_node("Relu", ["add"], ["add_relu"], name="add_relu"))
q("add_relu", "add_q", P["add"]); dq("add_q", "output", P["add"])

graph = helper.make_graph(nodes, "ort_res", [helper.make_tensor_value_info("input", TensorProto.FLOAT, list(SHAPE))],
                          [helper.make_tensor_value_info("output", TensorProto.FLOAT, list(SHAPE[:1]) + [8] + list(SHAPE[2:]))], inits)
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)], producer_name="tests/qdq/make_ort_format.py")
model.ir_version = 7
onnx.checker.check_model(model)
onnx.save(model, os.path.join(out_dir, "ort_res.onnx"))

# ---- the reference: the QDQ definition in numpy ----
B1 = deq(q1, sb1, 0)  # the int32 biases dequantized per channel
B2 = deq(q2, sb2, 0)
for k, inp in enumerate(inputs):
    xq = quant(inp, *P["x"])
    r1 = quant(np.maximum(conv(deq(xq, *P["x"]), W1, B1, 1), 0), *P["r1"])
    c2 = quant(conv(deq(r1, *P["r1"]), W2, B2, 1), *P["c2"])
    ad = quant(np.maximum(deq(c2, *P["c2"]) + deq(r1, *P["r1"]), 0), *P["add"])
    onnx.save_tensor(numpy_helper.from_array(inp, "input"), os.path.join(out_dir, "ort_res_input_%d.pb" % k))
    onnx.save_tensor(numpy_helper.from_array(deq(ad, *P["add"]), "output"), os.path.join(out_dir, "ort_res_output_%d.pb" % k))
    print("sample", k, "r1", r1.min(), r1.max(), "c2", c2.min(), c2.max(), "add", ad.min(), ad.max(),
          "zeros after the Relu %.0f%%" % (100.0 * (ad == P["add"][1]).mean()))
print("params", P)
