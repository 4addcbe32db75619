#!/usr/bin/python3
"""Generates two models whose graph inputs or outputs are declared wrongly, for tests/cli/graph_io_test.sh
(run once; outputs are committed):
  dup_input.onnx      the graph input 'x' declared twice (an Add of x and x)
  int32_output.onnx   the output of a float Relu declared INT32

    /usr/bin/python3 tests/cli/data/make_bad_io.py
"""
import os

import onnx
from onnx import TensorProto, helper

HERE = os.path.dirname(os.path.abspath(__file__))


def save(graph, name):
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)], producer_name="make_bad_io.py")
    onnx.save(model, os.path.join(HERE, name))  # not checked: the checker refuses what these test


x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4])
save(helper.make_graph([helper.make_node("Add", ["x", "x"], ["y"], name="add")], "dup_input", [x, x],
                       [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4])]), "dup_input.onnx")
save(helper.make_graph([helper.make_node("Relu", ["x"], ["y"], name="relu")], "int32_output", [x],
                       [helper.make_tensor_value_info("y", TensorProto.INT32, [1, 4])]), "int32_output.onnx")
