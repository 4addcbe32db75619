#!/usr/bin/env python3
"""bench/sbs_models.py: the single-layer ONNX models of bench/side_by_side.sh and their calibration data.

    sbs_models.py OUTDIR [--samples S]

Writes, for each shape, OUTDIR/NAME.onnx (float, opset 13, seeded random weights) and OUTDIR/NAME_calib.npy
(float32 [S, *input shape]: S samples along the leading axis, the form `qllc profile --dataset` reads):

    fc1     Gemm  x[1,1024]  * W[1024,1024]^T + b[1024]      (transB=1)
    fc64    Gemm  x[64,1024] * W[1024,1024]^T + b[1024]
    conv    Conv  x[1,64,56,56], W[64,64,3,3], b[64], pads 1, strides 1
    conv28  Conv  x[1,128,28,28], W[128,128,3,3], b[128], pads 1, strides 1

Inputs are uniform in [0, 1), as after a ReLU: the int8 input's range then starts at 0, so its zero point
is 0 and the int8 layer sees what oneDNN's u8 source does (no input zero point). Weights are normal with
standard deviation 1/sqrt(fan_in), the bias normal with standard deviation 0.1.
"""
import argparse
import os

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

SHAPES = {
    # name: (op, input shape, weight shape)
    "fc1": ("Gemm", [1, 1024], [1024, 1024]),
    "fc64": ("Gemm", [64, 1024], [1024, 1024]),
    "conv": ("Conv", [1, 64, 56, 56], [64, 64, 3, 3]),
    "conv28": ("Conv", [1, 128, 28, 28], [128, 128, 3, 3]),
}


def make(name, op, xshape, wshape, rng):
    fan_in = int(np.prod(wshape[1:]))
    w = (rng.standard_normal(wshape) / np.sqrt(fan_in)).astype(np.float32)
    b = (0.1 * rng.standard_normal([wshape[0]])).astype(np.float32)
    inits = [numpy_helper.from_array(w, "W"), numpy_helper.from_array(b, "B")]
    if op == "Gemm":
        node = helper.make_node("Gemm", ["x", "W", "B"], ["y"], name=name, transB=1)
        yshape = [xshape[0], wshape[0]]
    else:
        node = helper.make_node("Conv", ["x", "W", "B"], ["y"], name=name, kernel_shape=[3, 3],
                                pads=[1, 1, 1, 1], strides=[1, 1])
        yshape = [xshape[0], wshape[0], xshape[2], xshape[3]]
    graph = helper.make_graph([node], name, [helper.make_tensor_value_info("x", TensorProto.FLOAT, xshape)],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, yshape)], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)], producer_name="sbs_models.py")
    onnx.checker.check_model(model)
    return model


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("outdir")
    ap.add_argument("--samples", type=int, default=8)
    a = ap.parse_args()
    os.makedirs(a.outdir, exist_ok=True)
    rng = np.random.default_rng(10)
    for name, (op, xshape, wshape) in SHAPES.items():
        onnx.save(make(name, op, xshape, wshape, rng), os.path.join(a.outdir, name + ".onnx"))
        calib = rng.random([a.samples] + xshape, dtype=np.float32)
        np.save(os.path.join(a.outdir, name + "_calib.npy"), calib)
        print(f"{name}: {op} x{xshape} W{wshape} -> {a.outdir}/{name}.onnx, calibration {list(calib.shape)}")


if __name__ == "__main__":
    main()
