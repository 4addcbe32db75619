#!/usr/bin/python3
"""Generates fc64.onnx (a Gemm of 64 rows: 64x32 @ 32x16 + bias, then Relu) and fc64_x.npy, the model
tests/cli/amx_variants_test.sh compiles for an AMX CPU, whose rule table runs FCs of 64 rows or more on
the AMX tile kernel (run once; outputs are committed).

    /usr/bin/python3 tests/cli/data/make_fc64.py
"""
import os

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
rng = np.random.default_rng(20261203)
w = rng.standard_normal((32, 16)).astype(np.float32) * 0.2
b = rng.standard_normal(16).astype(np.float32) * 0.1
x = rng.standard_normal((64, 32)).astype(np.float32)
graph = helper.make_graph(
    [helper.make_node("Gemm", ["x", "w", "b"], ["h"], name="fc"), helper.make_node("Relu", ["h"], ["y"], name="relu")],
    "fc64", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [64, 32])],
    [helper.make_tensor_value_info("y", TensorProto.FLOAT, [64, 16])],
    [numpy_helper.from_array(w, "w"), numpy_helper.from_array(b, "b")])
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)], producer_name="make_fc64.py")
onnx.checker.check_model(model)
onnx.save(model, os.path.join(HERE, "fc64.onnx"))
np.save(os.path.join(HERE, "fc64_x.npy"), x)
