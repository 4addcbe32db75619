#!/usr/bin/python3
"""Generates the tiny ONNX models and tensors used by tests/cli/*.sh (run once; outputs are committed).

    /usr/bin/python3 tests/cli/data/make_models.py

References are computed here with plain numpy (float64, then rounded to float32), independently of qllc.
Fixed seed: running it again gives the same files.
"""
import os

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
rng = np.random.default_rng(20261129)


def save(model, name):
    onnx.checker.check_model(model)
    onnx.save(model, os.path.join(HERE, name))


def npy(name, a):
    np.save(os.path.join(HERE, name), a)


def conv2d(x, w, b, pad):
    """Direct NCHW convolution, stride 1, in float64."""
    n, c, h, wd = x.shape
    m, _, kh, kw = w.shape
    xp = np.pad(x, ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    oh, ow = h + 2 * pad - kh + 1, wd + 2 * pad - kw + 1
    y = np.zeros((n, m, oh, ow))
    for i in range(oh):
        for j in range(ow):
            patch = xp[:, :, i:i + kh, j:j + kw]  # n c kh kw
            y[:, :, i, j] = np.tensordot(patch, w, axes=([1, 2, 3], [1, 2, 3]))
    return y + b.reshape(1, m, 1, 1)


# ---- small.onnx: Conv(3x3, pad 1) -> Relu -> Flatten -> Gemm(transB) -------------------------------
x = rng.standard_normal((1, 2, 5, 5)).astype(np.float32)
cw = (rng.standard_normal((3, 2, 3, 3)) * 0.4).astype(np.float32)
cb = (rng.standard_normal(3) * 0.1).astype(np.float32)
fw = (rng.standard_normal((4, 75)) * 0.2).astype(np.float32)
fb = (rng.standard_normal(4) * 0.1).astype(np.float32)

graph = helper.make_graph(
    [
        helper.make_node("Conv", ["x", "conv_w", "conv_b"], ["c1"], name="conv1", kernel_shape=[3, 3],
                         pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c1"], ["r1"], name="relu1"),
        helper.make_node("Flatten", ["r1"], ["f1"], name="flatten1", axis=1),
        helper.make_node("Gemm", ["f1", "fc_w", "fc_b"], ["y"], name="fc1", transB=1),
    ],
    "small",
    [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 2, 5, 5])],
    [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4])],
    [numpy_helper.from_array(cw, "conv_w"), numpy_helper.from_array(cb, "conv_b"),
     numpy_helper.from_array(fw, "fc_w"), numpy_helper.from_array(fb, "fc_b")],
)
save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)], producer_name="make_models.py"),
     "small.onnx")
h = np.maximum(conv2d(x.astype(np.float64), cw.astype(np.float64), cb.astype(np.float64), 1), 0)
y = h.reshape(1, -1) @ fw.astype(np.float64).T + fb
npy("small_x.npy", x)
with open(os.path.join(HERE, "small_x.pb"), "wb") as f:  # the same input as an ONNX TensorProto
    f.write(numpy_helper.from_array(x, "x").SerializeToString())
npy("small_y_ref.npy", y.astype(np.float32))
npy("small_x_zeros_y_ref.npy",
    (np.maximum(cb.astype(np.float64), 0).repeat(25).reshape(1, -1) @ fw.astype(np.float64).T + fb)
    .astype(np.float32))
# bad inputs for the same model
npy("small_x_bad_shape.npy", rng.standard_normal((1, 2, 5, 4)).astype(np.float32))
npy("small_x_int32.npy", np.zeros((1, 2, 5, 5), dtype=np.int32))

# ---- two_io.onnx: two inputs, two outputs with names that need sanitising ------------------------------
graph = helper.make_graph(
    [
        helper.make_node("Add", ["a", "b"], ["sum:0"], name="add1"),
        helper.make_node("Relu", ["a"], ["out/relu"], name="relu1"),
    ],
    "two_io",
    [helper.make_tensor_value_info("a", TensorProto.FLOAT, [2, 3]),
     helper.make_tensor_value_info("b", TensorProto.FLOAT, [2, 3])],
    [helper.make_tensor_value_info("sum:0", TensorProto.FLOAT, [2, 3]),
     helper.make_tensor_value_info("out/relu", TensorProto.FLOAT, [2, 3])],
)
save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)], producer_name="make_models.py"),
     "two_io.onnx")
a = np.array([[1, -2, 3], [-4, 5, -6]], dtype=np.float32)
b = np.array([[0.5, 0.25, -1], [2, -3, 8]], dtype=np.float32)
npy("two_io_a.npy", a)
npy("two_io_b.npy", b)
npy("two_io_sum_ref.npy", a + b)
npy("two_io_relu_ref.npy", np.maximum(a, 0))

# ---- unsupported.onnx: a valid model with an op qllc does not implement (LogSoftmax; it was Erf until
# issue 15 added Erf) ------------------------------------------------------------------------------------
graph = helper.make_graph(
    [
        helper.make_node("Relu", ["x"], ["r"], name="relu_ok"),
        helper.make_node("LogSoftmax", ["r"], ["y"], name="logsoftmax_node"),
    ],
    "unsupported",
    [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4])],
    [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4])],
)
save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)], producer_name="make_models.py"),
     "unsupported.onnx")
print("wrote models and tensors to", HERE)
