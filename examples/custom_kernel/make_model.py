#!/usr/bin/python3
"""Generates examples/custom_kernel/model.onnx and its test tensors (run once; outputs are committed).

    /usr/bin/python3 examples/custom_kernel/make_model.py

The model: x[2,16] -> Add(b) -> Relu -> com.acme:HardSwish(beta=1/6, offset=3) -> MatMul(W[16,4]) -> y[2,4].
com.acme:HardSwish is not an ONNX op: kernels.c implements it. kernels.c also overrides qllc's built-in
Relu kernel (qllc_k_relu_f32_f32) with a leaky one (slope 1/8), so the model's Relu node computes
where(t > 0, t, t / 8) when the kernels are given. References are computed here with numpy, in float32
in the same operation order as the kernels (so they agree to a few ulp), independently of qllc:
  y_ref.npy          with kernels.c (leaky "Relu")
  y_builtin_ref.npy  what the built-in Relu would give (used to show the override took effect)
Fixed seed: running it again gives the same files.
"""
import os

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
rng = np.random.default_rng(7)

x = rng.uniform(-5, 5, size=(2, 16)).astype(np.float32)
b = rng.uniform(-1, 1, size=(16,)).astype(np.float32)
W = rng.uniform(-1, 1, size=(16, 4)).astype(np.float32)
beta = np.float32(1.0 / 6.0)
offset = 3

nodes = [
    helper.make_node("Add", ["x", "b"], ["t"], name="add"),
    helper.make_node("Relu", ["t"], ["r"], name="relu"),
    helper.make_node("HardSwish", ["r"], ["h"], name="hswish", domain="com.acme", beta=float(beta), offset=offset),
    helper.make_node("MatMul", ["h", "W"], ["y"], name="proj"),
]
graph = helper.make_graph(
    nodes, "custom_kernel",
    [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 16])],
    [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 4])],
    initializer=[numpy_helper.from_array(b, "b"), numpy_helper.from_array(W, "W")],
    # qllc takes a custom op's output type and shape from value_info (docs/kernels.md)
    value_info=[helper.make_tensor_value_info("h", TensorProto.FLOAT, [2, 16])],
)
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13), helper.make_opsetid("com.acme", 1)])
model.ir_version = 8
onnx.save(model, os.path.join(HERE, "model.onnx"))


# Two broken variants for tests/ext/kernel_errors_test.sh: the custom node's output without value_info
# (qllc cannot know its shape), and a custom node with a string attribute (not passed to kernels).
g2 = helper.make_graph(nodes, "no_value_info", graph.input, graph.output, initializer=graph.initializer)
m2 = helper.make_model(g2, opset_imports=model.opset_import)
m2.ir_version = 8
onnx.save(m2, os.path.join(HERE, "model_no_value_info.onnx"))
nodes3 = list(nodes)
nodes3[2] = helper.make_node("HardSwish", ["r"], ["h"], name="hswish", domain="com.acme", beta=float(beta),
                             offset=offset, mode="fast")
g3 = helper.make_graph(nodes3, "string_attr", graph.input, graph.output, initializer=graph.initializer,
                       value_info=graph.value_info)
m3 = helper.make_model(g3, opset_imports=model.opset_import)
m3.ir_version = 8
onnx.save(m3, os.path.join(HERE, "model_string_attr.onnx"))


def hardswish(r):
    # the kernel's order: x * clamp(x + offset, 0, 6) * beta, in float32
    c = np.clip(r + np.float32(offset), np.float32(0), np.float32(6)).astype(np.float32)
    return ((r * c).astype(np.float32) * beta).astype(np.float32)


def forward(relu):
    t = (x + b).astype(np.float32)
    h = hardswish(relu(t))
    return (h.astype(np.float64) @ W.astype(np.float64)).astype(np.float32)


leaky = lambda t: np.where(t > 0, t, t * np.float32(0.125)).astype(np.float32)
plain = lambda t: np.maximum(t, np.float32(0)).astype(np.float32)
np.save(os.path.join(HERE, "x.npy"), x)
np.save(os.path.join(HERE, "y_ref.npy"), forward(leaky))
np.save(os.path.join(HERE, "y_builtin_ref.npy"), forward(plain))
print("max |y_ref - y_builtin_ref| =", float(np.max(np.abs(forward(leaky) - forward(plain)))))
