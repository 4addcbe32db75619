#!/usr/bin/python3
"""Makes the committed data of the quantization end-to-end tests (tests/quant_e2e/data/<name>/).

Run from the repository root:  /usr/bin/python3 tests/quant_e2e/make_data.py
Only needed to regenerate the data; the tests (C and shell, run by ctest) need no python.
Deterministic: fixed seeds, one thread. For each model writes
  model.onnx   exported by torch.onnx.export
  calib.npy    f32 [S, ...]: calibration samples for `qllc profile` (leading axis = sample): fresh
               samples followed by the eval inputs (see write())
  eval_x.npy   f32 [E, ...]: inputs from the same distribution
  eval_y.npy   f32 [E, ...]: torch's float outputs for eval_x (the independent reference)
Models: the float test models of tests/models (mlp, cnn_bn_pool, residual, depthwise_separable, the
same classes, re-seeded), issue 4's test_CNN exactly as the issue writes it, and fused_bias: one FC
whose bias is large next to W x (issue 3's fused-bias claim), with its W and b as fused_w.npy/fused_b.npy.
"""
import os
import sys

import numpy as np
import onnx
import torch
import torch.nn as nn

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "models"))
import make_models as mm  # noqa: E402  (the float test models' classes)

DATA = os.path.join(HERE, "data")


class test_CNN(nn.Module):
    """Issue 4's model, verbatim."""

    def __init__(self, drop=0.25):
        super().__init__()
        self.conv1 = nn.Conv2d(2, 16, (3, 3), padding=1)
        self.bn1 = nn.BatchNorm2d(16)
        self.relu1 = torch.nn.ReLU()
        self.dropout = nn.Dropout(drop)

    def forward(self, x):
        x = self.conv1(x); x = self.relu1(x); x = self.bn1(x); x = self.dropout(x)
        return x.reshape([-1, 1024])


class FusedBias(nn.Module):
    """y = W x + b, W [4, 16] small (|W x| is a few output steps), b large (it sets the output range)."""

    def __init__(self, gen):
        super().__init__()
        self.fc = nn.Linear(16, 4)
        with torch.no_grad():
            self.fc.weight.copy_(torch.randn(4, 16, generator=gen) * 0.02)
            self.fc.bias.copy_(torch.tensor([3.0, -2.5, 4.0, -3.5]))

    def forward(self, x):
        return self.fc(x)


def save(path, a):
    np.save(path, np.ascontiguousarray(a, dtype=np.float32))


def write(name, model, make_input, n_calib, n_eval, opset, export_kw=None, batch_shape=None):
    out = os.path.join(DATA, name)
    os.makedirs(out, exist_ok=True)
    model.eval()
    fresh = torch.stack([make_input() for _ in range(n_calib)])   # [S, 1, ...]
    evx = torch.stack([make_input() for _ in range(n_eval)])
    # The calibration set holds the evaluation inputs too: the SQNR tests measure the error of
    # quantization itself, not how well a few dozen samples cover the tails of every intermediate value
    # (with held-out data, values beyond the calibrated range saturate, and that error is the same at
    # int8 and int16, hiding int16's gain; docs/quantization.md shows both).
    calib = torch.cat([fresh, evx]) if n_eval <= 64 else fresh
    with torch.no_grad():
        evy = torch.stack([model(x) for x in evx])
    path = os.path.join(out, "model.onnx")
    kw = dict(opset_version=opset, do_constant_folding=True, input_names=["input"], output_names=["output"])
    kw.update(export_kw or {})
    torch.onnx.export(model, evx[0], path, **kw)
    onnx.checker.check_model(onnx.load(path))
    save(os.path.join(out, "calib.npy"), calib.numpy())
    save(os.path.join(out, "eval_x.npy"), evx.numpy())
    save(os.path.join(out, "eval_y.npy"), evy.numpy())
    ops = sorted({n.op_type for n in onnx.load(path).graph.node})
    print(f"{name:20s} calib {list(calib.shape)} eval {list(evx.shape)} -> {list(evy.shape)}  ops {' '.join(ops)}")
    return out


def main():
    torch.set_num_threads(1)

    torch.manual_seed(101)
    g = torch.Generator().manual_seed(101)
    write("mlp", mm.Mlp(), lambda: torch.randn(1, 32, generator=g), 64, 32, 11)

    torch.manual_seed(202)
    g = torch.Generator().manual_seed(202)
    write("cnn_bn_pool", mm.CnnBnPool(g), lambda: torch.randn(1, 3, 16, 16, generator=g), 64, 32, 13,
          dict(training=torch.onnx.TrainingMode.PRESERVE))

    torch.manual_seed(303)
    g = torch.Generator().manual_seed(303)
    write("residual", mm.Residual(), lambda: torch.randn(1, 6, 9, 7, generator=g), 64, 32, 17)

    torch.manual_seed(404)
    g = torch.Generator().manual_seed(404)
    write("depthwise_separable", mm.DepthwiseSeparable(), lambda: torch.randn(1, 8, 12, 12, generator=g) * 4,
          64, 32, 11)

    # Issue 4: torch.rand inputs (as the export), 128 calibration samples (96 + the 32 eval), the
    # issue's export call.
    torch.manual_seed(505)
    g = torch.Generator().manual_seed(505)
    m = test_CNN()
    mm.randomize_bn(m.bn1, g)
    out = write("test_cnn", m, lambda: torch.rand(1, 2, 8, 8, generator=g), 96, 32, 10)  # 96 + 32 = 128
    # the exact export call (the same graph; kept as the file the user would have)
    torch.onnx.export(m, torch.rand(1, 2, 8, 8), os.path.join(out, "model.onnx"), opset_version=10,
                      do_constant_folding=True, input_names=['input'], output_names=['output'])

    torch.manual_seed(606)
    g = torch.Generator().manual_seed(606)
    m = FusedBias(g)
    out = write("fused_bias", m, lambda: torch.rand(1, 16, generator=g) * 2 - 1, 64, 256, 13)
    save(os.path.join(out, "fused_w.npy"), m.fc.weight.detach().numpy())
    save(os.path.join(out, "fused_b.npy"), m.fc.bias.detach().numpy())
    return 0


if __name__ == "__main__":
    sys.exit(main())
