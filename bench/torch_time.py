#!/usr/bin/python3
"""The torch peer of the benchmark: float inference time per call, single-threaded, same models.

  /usr/bin/python3 bench/torch_time.py [--runs N] [--warmup W] [--threads T] digits|resnet18|transformer17 ...

Prints one line per model:
  torch model=NAME median_ms=... min_ms=... cpu_median_ms=... runs=N threads=T
(median/min wall time; cpu_median_ms the process CPU time, steadier on a busy machine; with
one thread torch runs every op in the calling thread).
digits is rebuilt from the weights inside models/digits/digits.onnx (checked against the committed test
split); resnet18 from bench/resnet18.py with the same seed as the exported ONNX file; transformer17 is
nn.TransformerEncoderLayer (d_model 32, 4 heads, FFN 64, GELU, batch_first) with the weights of
tests/models/data/transformer_block17/model.onnx, checked against its output_0.npy. Eager mode under
torch.inference_mode(), batch 1, the same input every call.
"""
import argparse
import os
import statistics
import sys
import time

import numpy as np
import onnx
import onnx.numpy_helper
import torch
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)


def digits_model():
    m = onnx.load(os.path.join(ROOT, "models/digits/digits.onnx"))
    init = {t.name: torch.from_numpy(onnx.numpy_helper.to_array(t).copy()) for t in m.graph.initializer}
    ops = [n for n in m.graph.node]
    want = ["Conv", "Relu", "Conv", "Relu", "MaxPool", "Flatten", "Gemm", "Relu", "Gemm"]
    if [n.op_type for n in ops] != want:
        raise SystemExit("torch_time.py: digits.onnx does not have the expected graph; update digits_model()")
    conv = [[init[i] for i in n.input[1:]] for n in ops if n.op_type == "Conv"]
    gemm = [[init[i] for i in n.input[1:]] for n in ops if n.op_type == "Gemm"]

    def f(x):
        x = torch.relu(F.conv2d(x, *conv[0], padding=1))
        x = F.max_pool2d(torch.relu(F.conv2d(x, *conv[1], padding=1)), 2)
        x = torch.relu(F.linear(torch.flatten(x, 1), *gemm[0]))
        return F.linear(x, *gemm[1])

    xs = torch.from_numpy(np.load(os.path.join(ROOT, "models/digits/test_x.npy")))
    ys = np.load(os.path.join(ROOT, "models/digits/test_y.npy"))
    with torch.inference_mode():
        acc = float((f(xs).argmax(1).numpy() == ys).mean())
    return f, xs[:1].clone(), acc


def transformer17_model():
    d = os.path.join(ROOT, "tests/models/data/transformer_block17")
    m = onnx.load(os.path.join(d, "model.onnx"))
    init = {t.name: torch.from_numpy(onnx.numpy_helper.to_array(t).copy()) for t in m.graph.initializer}
    mm = [t for t in m.graph.initializer if t.name.startswith("onnx::MatMul")]  # in_proj, linear1, linear2
    if [list(t.dims) for t in mm] != [[32, 96], [32, 64], [64, 32]]:
        raise SystemExit("torch_time.py: transformer_block17's weights are not as expected; update transformer17_model()")
    layer = torch.nn.TransformerEncoderLayer(d_model=32, nhead=4, dim_feedforward=64, dropout=0.0, activation="gelu",
                                             batch_first=True)
    state = {k[len("layer."):]: v for k, v in init.items() if k.startswith("layer.")}
    state["self_attn.in_proj_weight"] = init[mm[0].name].t().contiguous()
    state["linear1.weight"] = init[mm[1].name].t().contiguous()
    state["linear2.weight"] = init[mm[2].name].t().contiguous()
    layer.load_state_dict(state)
    layer.eval()
    x = torch.from_numpy(np.load(os.path.join(d, "input_0.npy")))
    with torch.inference_mode():
        err = float((layer(x) - torch.from_numpy(np.load(os.path.join(d, "output_0.npy")))).abs().max())
    if err > 1e-4:
        raise SystemExit(f"torch_time.py: transformer17 differs from output_0.npy by {err}")
    return layer, x, err


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=50)
    ap.add_argument("--warmup", type=int, default=5)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("models", nargs="+", choices=["digits", "resnet18", "transformer17"])
    a = ap.parse_args()
    torch.set_num_threads(a.threads)
    for name in a.models:
        extra = ""
        if name == "digits":
            f, x, acc = digits_model()
            extra = f" accuracy={acc * 100:.2f}"
        elif name == "transformer17":
            f, x, err = transformer17_model()
            extra = f" max_abs_diff_vs_onnx_data={err:.2e}"
        else:
            import resnet18
            f, x = resnet18.build(), resnet18.example_input()
        times, cpu = [], []
        with torch.inference_mode():
            for i in range(a.warmup + a.runs):
                c, t = time.process_time_ns(), time.perf_counter_ns()
                f(x)
                t, c = time.perf_counter_ns() - t, time.process_time_ns() - c
                if i >= a.warmup:
                    times.append(t / 1e6)
                    cpu.append(c / 1e6)
        print(f"torch model={name} median_ms={statistics.median(times):.4f} min_ms={min(times):.4f} "
              f"cpu_median_ms={statistics.median(cpu):.4f} runs={a.runs} threads={a.threads}{extra}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
