#!/usr/bin/python3
"""Generates the small ONNX models used by tests/ir/import_test.c (run by hand; the outputs are committed).

    /usr/bin/python3 tests/ir/data/make_models.py

Each model exercises one importer feature; the expected results are written in import_test.c.
"""
import os

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))


def save(model, name):
    onnx.checker.check_model(model)
    onnx.save(model, os.path.join(HERE, name))


def opset(v):
    return [helper.make_opsetid("", v)]


# 1. Shape -> Gather -> Unsqueeze -> Concat -> Reshape, as torch exports x.view(x.size(0), -1), plus a
#    Constant node. Must fold at load time: Reshape gets a constant shape, output [2, 48].
def shape_chain():
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 3, 4, 4])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 48])
    nodes = [
        helper.make_node("Shape", ["x"], ["s"], name="shape"),
        helper.make_node("Constant", [], ["zero"], name="c0", value=helper.make_tensor("z", TensorProto.INT64, [], [0])),
        helper.make_node("Gather", ["s", "zero"], ["b"], name="gather", axis=0),
        helper.make_node("Constant", [], ["ax"], name="c_axes", value_ints=[0]),
        helper.make_node("Unsqueeze", ["b", "ax"], ["b1"], name="unsq"),
        helper.make_node("Constant", [], ["minus1"], name="c1", value_ints=[-1]),
        helper.make_node("Concat", ["b1", "minus1"], ["shape"], name="concat", axis=0),
        helper.make_node("Reshape", ["x", "shape"], ["y"], name="reshape"),
    ]
    g = helper.make_graph(nodes, "shape_chain", [x], [y])
    save(helper.make_model(g, opset_imports=opset(13)), "shape_chain.onnx")


# 2. An initializer also listed as a graph input (old exporters): W is a constant, only x is an input.
def init_as_input():
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])
    w_in = helper.make_tensor_value_info("W", TensorProto.FLOAT, [3, 4])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 4])
    w = numpy_helper.from_array(np.arange(12, dtype=np.float32).reshape(3, 4), "W")
    # the same weights as typed float_data, not raw_data
    w2 = helper.make_tensor("B", TensorProto.FLOAT, [4], [0.5, -1.0, 2.0, 3.25])
    nodes = [helper.make_node("MatMul", ["x", "W"], ["m"]), helper.make_node("Add", ["m", "B"], ["y"])]
    g = helper.make_graph(nodes, "init_as_input", [x, w_in], [y], initializer=[w, w2])
    save(helper.make_model(g, opset_imports=opset(9)), "init_as_input.onnx")


# 3. External data: W's bytes live in 'weights.bin' (not committed; qllc must refuse before reading).
def external_data():
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4])
    w = TensorProto()
    w.name, w.data_type = "W", TensorProto.FLOAT
    w.dims.extend([4, 4])
    w.data_location = TensorProto.EXTERNAL
    for k, v in (("location", "weights.bin"), ("offset", "0"), ("length", "64")):
        e = w.external_data.add()
        e.key, e.value = k, v
    g = helper.make_graph([helper.make_node("MatMul", ["x", "W"], ["y"])], "external", [x], [y], initializer=[w])
    m = helper.make_model(g, opset_imports=opset(13))
    onnx.save(m, os.path.join(HERE, "external_data.onnx"))  # the checker would look for the file


# 4. Truncated: the first half of shape_chain.onnx.
def truncated():
    data = open(os.path.join(HERE, "init_as_input.onnx"), "rb").read()
    open(os.path.join(HERE, "truncated.onnx"), "wb").write(data[: len(data) // 2])


# 5. An unknown op with a node name.
def unknown_op():
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4])
    nodes = [helper.make_node("Relu", ["x"], ["r"], name="relu1"), helper.make_node("Foo", ["r"], ["y"], name="mystery")]
    g = helper.make_graph(nodes, "unknown", [x], [y])
    onnx.save(helper.make_model(g, opset_imports=opset(13)), os.path.join(HERE, "unknown_op.onnx"))


# 6. Conv with auto_pad SAME_UPPER, stride 2, 2x2 kernel on 5x7: output 3x4, pads [0, 0, 1, 1].
def conv_same_upper():
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 2, 5, 7])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4, 3, 4])
    w = numpy_helper.from_array(np.ones((4, 2, 2, 2), dtype=np.float32), "W")
    b = numpy_helper.from_array(np.zeros(4, dtype=np.float32), "B")
    conv = helper.make_node("Conv", ["x", "W", "B"], ["y"], name="conv", auto_pad="SAME_UPPER", strides=[2, 2])
    g = helper.make_graph([conv], "conv_same_upper", [x], [y], initializer=[w, b])
    save(helper.make_model(g, opset_imports=opset(11)), "conv_same_upper.onnx")


# 7. Opset 13 Squeeze with its axes as a constant input (one negative): [1, 3, 1] -> [3].
def squeeze13():
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 1])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [3])
    axes = numpy_helper.from_array(np.array([-1, 0], dtype=np.int64), "axes")
    g = helper.make_graph([helper.make_node("Squeeze", ["x", "axes"], ["y"], name="sq")], "squeeze13", [x], [y],
                          initializer=[axes])
    save(helper.make_model(g, opset_imports=opset(13)), "squeeze13.onnx")


# 8. A symbolic non-leading input dim: unsupported.
def dynamic_dim():
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, "channels", 4])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, "channels", 4])
    g = helper.make_graph([helper.make_node("Relu", ["x"], ["y"])], "dynamic", [x], [y])
    save(helper.make_model(g, opset_imports=opset(13)), "dynamic_dim.onnx")


if __name__ == "__main__":
    shape_chain()
    init_as_input()
    external_data()
    truncated()
    unknown_op()
    conv_same_upper()
    squeeze13()
    dynamic_dim()
