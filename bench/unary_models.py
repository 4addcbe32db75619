#!/usr/bin/python3
"""Single-op float models for bench/unary_bench.sh: y = f(x) over x[1][N], one ONNX node each.

  /usr/bin/python3 bench/unary_models.py OUT_DIR [N]

gelu: com.microsoft Gelu (x Phi(x)); gelu_tanh: com.microsoft FastGelu; erf, sigmoid, tanh, exp: the
ONNX ops; softmax: ONNX Softmax over the last axis of x[N/64][64] (attention-sized rows).
"""
import os
import sys

import onnx
from onnx import TensorProto, helper

out = sys.argv[1]
n = int(sys.argv[2]) if len(sys.argv) > 2 else 65536
os.makedirs(out, exist_ok=True)
ops = {"gelu": ("Gelu", "com.microsoft"), "gelu_tanh": ("FastGelu", "com.microsoft"), "erf": ("Erf", ""),
       "sigmoid": ("Sigmoid", ""), "tanh": ("Tanh", ""), "exp": ("Exp", ""), "softmax": ("Softmax", "")}
for name, (op, domain) in ops.items():
    shape = [n // 64, 64] if name == "softmax" else [1, n]
    node = helper.make_node(op, ["x"], ["y"], domain=domain, **({"axis": -1} if name == "softmax" else {}))
    g = helper.make_graph([node], name, [helper.make_tensor_value_info("x", TensorProto.FLOAT, shape)],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, shape)])
    opsets = [helper.make_opsetid("", 17)] + ([helper.make_opsetid("com.microsoft", 1)] if domain else [])
    onnx.save(helper.make_model(g, opset_imports=opsets), os.path.join(out, name + ".onnx"))
