#!/usr/bin/python3
"""bench/dw_pool.py: the float depthwise conv and pooling layers of docs/benchmarks.md ("Float depthwise
conv and pooling"), as single-layer ONNX models, and torch's time for the same layers.

    /usr/bin/python3 bench/dw_pool.py OUTDIR            writes OUTDIR/NAME.onnx for every layer below
    /usr/bin/python3 bench/dw_pool.py --torch [--runs N] [NAME ...]
                                                        torch eager, one thread: one line per layer
                                                        torch layer=NAME median_us=... min_us=...

    dw112    Conv depthwise 3x3 pad 1 stride 1, x[1,32,112,112]   (MobileNet v1's first depthwise)
    dw112s2  Conv depthwise 3x3 pad 1 stride 2, x[1,64,112,112]   (its first strided one)
    dw14     Conv depthwise 3x3 pad 1 stride 1, x[1,256,14,14]
    dw14s2   Conv depthwise 3x3 pad 1 stride 2, x[1,256,14,14]
    dw5      Conv depthwise 5x5 pad 2 stride 1, x[1,96,28,28]
    maxpool  MaxPool 3x3 pad 1 stride 2, x[1,64,112,112]          (ResNet-18's)
    gap      GlobalAveragePool, x[1,512,7,7]                       (ResNet-18's)
    gap56    GlobalAveragePool, x[1,256,56,56]
    relu112, relu56, relu7   Relu of maxpool's, gap56's and gap's input: a yardstick of memory speed (one
             vector read and one write per 16 floats, no arithmetic to speak of)

Depthwise weights normal with standard deviation 1/3, bias normal 0.1, seeded; opset 13.
"""
import argparse
import os
import statistics
import time

import numpy as np

LAYERS = {
    # name: (op, input shape, kernel, stride, pad)
    "dw112": ("dw", [1, 32, 112, 112], 3, 1, 1),
    "dw112s2": ("dw", [1, 64, 112, 112], 3, 2, 1),
    "dw14": ("dw", [1, 256, 14, 14], 3, 1, 1),
    "dw14s2": ("dw", [1, 256, 14, 14], 3, 2, 1),
    "dw5": ("dw", [1, 96, 28, 28], 5, 1, 2),
    "maxpool": ("maxpool", [1, 64, 112, 112], 3, 2, 1),
    "gap": ("gap", [1, 512, 7, 7], 0, 1, 0),
    "gap56": ("gap", [1, 256, 56, 56], 0, 1, 0),
    "relu112": ("relu", [1, 64, 112, 112], 0, 1, 0),
    "relu56": ("relu", [1, 256, 56, 56], 0, 1, 0),
    "relu7": ("relu", [1, 512, 7, 7], 0, 1, 0),
}


def out_hw(n, k, s, p):
    return (n + 2 * p - k) // s + 1


def weights(name, x, k):
    rng = np.random.default_rng(sum(map(ord, name)))  # seeded by the name
    c = x[1]
    w = (rng.standard_normal([c, 1, k, k]) / 3).astype(np.float32)
    b = (0.1 * rng.standard_normal([c])).astype(np.float32)
    return w, b


def make(name):
    import onnx
    from onnx import TensorProto, helper, numpy_helper
    op, x, k, s, p = LAYERS[name]
    inits = []
    if op == "dw":
        w, b = weights(name, x, k)
        inits = [numpy_helper.from_array(w, "W"), numpy_helper.from_array(b, "B")]
        node = helper.make_node("Conv", ["x", "W", "B"], ["y"], name=name, kernel_shape=[k, k], group=x[1],
                                pads=[p] * 4, strides=[s, s])
        y = [1, x[1], out_hw(x[2], k, s, p), out_hw(x[3], k, s, p)]
    elif op == "maxpool":
        node = helper.make_node("MaxPool", ["x"], ["y"], name=name, kernel_shape=[k, k], pads=[p] * 4,
                                strides=[s, s])
        y = [1, x[1], out_hw(x[2], k, s, p), out_hw(x[3], k, s, p)]
    elif op == "relu":
        node = helper.make_node("Relu", ["x"], ["y"], name=name)
        y = x
    else:
        node = helper.make_node("GlobalAveragePool", ["x"], ["y"], name=name)
        y = [1, x[1], 1, 1]
    graph = helper.make_graph([node], name, [helper.make_tensor_value_info("x", TensorProto.FLOAT, x)],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, y)], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)], producer_name="dw_pool.py")
    onnx.checker.check_model(model)
    return model


def torch_time(name, runs):
    import torch
    import torch.nn.functional as F
    op, x, k, s, p = LAYERS[name]
    xt = torch.rand(x)
    if op == "dw":
        w, b = (torch.from_numpy(a) for a in weights(name, x, k))
        f = lambda: F.conv2d(xt, w, b, stride=s, padding=p, groups=x[1])
    elif op == "maxpool":
        f = lambda: F.max_pool2d(xt, k, s, p)
    elif op == "relu":
        f = lambda: F.relu(xt)
    else:
        f = lambda: F.adaptive_avg_pool2d(xt, 1)
    t = []
    with torch.inference_mode():
        for _ in range(max(runs // 10, 5)):
            f()
        for _ in range(runs):
            t0 = time.perf_counter_ns()
            f()
            t.append(time.perf_counter_ns() - t0)
    print(f"torch layer={name} median_us={statistics.median(t) / 1e3:.1f} min_us={min(t) / 1e3:.1f} "
          f"runs={runs} threads={torch.get_num_threads()}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("outdir", nargs="?")
    ap.add_argument("--torch", nargs="*", metavar="NAME")
    ap.add_argument("--runs", type=int, default=200)
    a = ap.parse_args()
    if a.torch is not None:
        import torch
        torch.set_num_threads(1)
        for name in a.torch or LAYERS:
            torch_time(name, a.runs)
        return
    if not a.outdir:
        ap.error("OUTDIR or --torch")
    import onnx
    os.makedirs(a.outdir, exist_ok=True)
    for name in LAYERS:
        onnx.save(make(name), os.path.join(a.outdir, name + ".onnx"))


if __name__ == "__main__":
    main()
