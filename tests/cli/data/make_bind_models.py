#!/usr/bin/python3
"""Generates the model and tensors of tests/cli/const_bind_test.sh and the binding cases of api_test.c
(run once; outputs are committed):

    /usr/bin/python3 tests/cli/data/make_bind_models.py

reshape_bind.onnx: y = Relu(Reshape(x, shape)), with `shape` a GRAPH INPUT (int64 [3]), so qllc can only
compile it with the shape bound to a constant (--const shape=FILE). The reference is plain numpy.
"""
import os

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
rng = np.random.default_rng(20261130)

graph = helper.make_graph(
    [
        helper.make_node("Reshape", ["x", "shape"], ["r"], name="reshape1"),
        helper.make_node("Relu", ["r"], ["y"], name="relu1"),
    ],
    "reshape_bind",
    [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3, 4]),
     helper.make_tensor_value_info("shape", TensorProto.INT64, [3])],
    [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["a", "b", "c"])],
)
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)], producer_name="make_bind_models.py")
onnx.checker.check_model(model)
onnx.save(model, os.path.join(HERE, "reshape_bind.onnx"))

x = rng.standard_normal((2, 3, 4)).astype(np.float32)
shape = np.array([4, -1, 2], dtype=np.int64)
np.save(os.path.join(HERE, "reshape_bind_x.npy"), x)
np.save(os.path.join(HERE, "reshape_bind_shape.npy"), shape)
with open(os.path.join(HERE, "reshape_bind_shape.pb"), "wb") as f:  # another shape, as a TensorProto
    f.write(numpy_helper.from_array(np.array([0, 4, -1], dtype=np.int64), "shape").SerializeToString())
np.save(os.path.join(HERE, "reshape_bind_shape_len2.npy"), np.array([4, 6], dtype=np.int64))  # wrong shape
np.save(os.path.join(HERE, "reshape_bind_shape_i32.npy"), shape.astype(np.int32))            # wrong kind
np.save(os.path.join(HERE, "reshape_bind_y_ref.npy"), np.maximum(x.reshape(4, 3, 2), 0).astype(np.float32))
# Reshape's 0 copies the input's dim 0: [0, 4, -1] -> (2, 4, 3)
np.save(os.path.join(HERE, "reshape_bind_y_pb_ref.npy"), np.maximum(x.reshape(2, 4, 3), 0).astype(np.float32))
