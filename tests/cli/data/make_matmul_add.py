#!/usr/bin/python3
"""Generates matmul_add.onnx (x [1, 4, 8] -> Reshape [1, 32] -> MatMul [32, 16] -> Add bias: one layer
whose input passes through a view) with matmul_add_calib.npy (64 samples) and matmul_add_eval.npy (16):
the model of issue 27 on which the precision search's "every layer at int16" left the graph input's
quantize and the Reshape at int8 (tests/cli/min_sqnr_int16_test.sh; run once, outputs are committed).

    /usr/bin/python3 tests/cli/data/make_matmul_add.py
"""
import os

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
rng = np.random.default_rng(20261227)
w = rng.standard_normal((32, 16)).astype(np.float32) * 0.2
b = rng.standard_normal(16).astype(np.float32) * 0.1
shape = np.array([1, 32], dtype=np.int64)
graph = helper.make_graph(
    [helper.make_node("Reshape", ["x", "shape"], ["xr"], name="reshape"),
     helper.make_node("MatMul", ["xr", "w"], ["h"], name="matmul"),
     helper.make_node("Add", ["h", "b"], ["y"], name="add")],
    "matmul_add", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4, 8])],
    [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 16])],
    [numpy_helper.from_array(w, "w"), numpy_helper.from_array(b, "b"), numpy_helper.from_array(shape, "shape")])
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)], producer_name="make_matmul_add.py")
onnx.checker.check_model(model)
onnx.save(model, os.path.join(HERE, "matmul_add.onnx"))
np.save(os.path.join(HERE, "matmul_add_calib.npy"), rng.standard_normal((64, 1, 4, 8)).astype(np.float32))
np.save(os.path.join(HERE, "matmul_add_eval.npy"), rng.standard_normal((16, 1, 4, 8)).astype(np.float32))
