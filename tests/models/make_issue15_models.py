#!/usr/bin/python3
"""Makes the committed models and data of issue 15 (transformer and mobile blocks exported by torch).

Run from the repository root:  /usr/bin/python3 tests/models/make_issue15_models.py
Only needed to regenerate; the tests (C and shell, run by ctest) need no python. Deterministic: fixed
seeds, one thread. Writes, for each model NAME:
  tests/models/data/NAME/{model.onnx, input_0.npy, output_0.npy}   (float: tests/models/e2e_test.sh and
      tests/cross/cross_test.sh run every model there: JIT within 1e-4 of torch, x86_64 and aarch64 bundles)
  tests/quant_e2e/data/NAME/{model.onnx, calib.npy, eval_x.npy, eval_y.npy}   (int8 / int16 SQNR against
      torch's float outputs: tests/quant_e2e/issue15_sqnr_test.c)
Models:
  transformer_block14  nn.TransformerEncoderLayer (d_model 32, 4 heads, FFN 64, GELU, batch_first),
                       exported at opset 14: LayerNorm decomposed (ReduceMean, Sub, Pow, Sqrt, Div, ...),
                       GELU as Div/Erf/Add/Mul, attention as batched MatMul of two activations + Softmax
  transformer_block17  the same layer (other seed) at opset 17: LayerNormalization
  mobilenetv3_block    inverted residual: 1x1 expand + BN + HardSwish, depthwise 3x3 + BN + HardSwish,
                       squeeze-excite (global average pool, 1x1, ReLU, 1x1, HardSigmoid, per-channel Mul),
                       1x1 project + BN, residual Add, PRelu per channel, nearest Upsample x2 and a
                       bilinear Upsample x2 (align_corners False)
  attention4d          self-attention on rank-4 [B, heads, S, d] tensors: batched MatMul of two activations,
                       Softmax on the last axis of a rank-4 tensor
  ms_gelu              onnxruntime's com.microsoft Gelu and FastGelu (float only, tests/models/data)
  convtranspose_where  Conv + Relu, ConvTranspose2d (stride 2, output_padding 1), Where with a constant
                       mask: the ops that stay float in integer mode (the precision report says why)
"""
import os

import numpy as np
import torch
import torch.nn as nn

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.join(HERE, "..", "..")
torch.set_num_threads(1)


class Encoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.layer = nn.TransformerEncoderLayer(d_model=32, nhead=4, dim_feedforward=64, dropout=0.0,
                                                activation="gelu", batch_first=True)

    def forward(self, x):
        return self.layer(x)


class SqueezeExcite(nn.Module):
    def __init__(self, c, r):
        super().__init__()
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.fc1 = nn.Conv2d(c, r, 1)
        self.relu = nn.ReLU()
        self.fc2 = nn.Conv2d(r, c, 1)
        self.gate = nn.Hardsigmoid()

    def forward(self, x):
        s = self.gate(self.fc2(self.relu(self.fc1(self.pool(x)))))
        return x * s


class MobileV3(nn.Module):
    def __init__(self, c=16, e=48):
        super().__init__()
        self.expand = nn.Sequential(nn.Conv2d(c, e, 1, bias=False), nn.BatchNorm2d(e), nn.Hardswish())
        self.dw = nn.Sequential(nn.Conv2d(e, e, 3, padding=1, groups=e, bias=False), nn.BatchNorm2d(e), nn.Hardswish())
        self.se = SqueezeExcite(e, 12)
        self.project = nn.Sequential(nn.Conv2d(e, c, 1, bias=False), nn.BatchNorm2d(c))
        self.prelu = nn.PReLU(c)
        self.up1 = nn.Upsample(scale_factor=2, mode="nearest")
        self.up2 = nn.Upsample(scale_factor=2, mode="bilinear", align_corners=False)

    def forward(self, x):
        y = self.project(self.se(self.dw(self.expand(x))))
        y = self.prelu(x + y)
        return self.up2(self.up1(y))


class Attention4d(nn.Module):
    """Multi-head self-attention written out on rank-4 tensors [B, heads, S, d]: batched MatMuls of two
    activations (Q K^T and P V) and Softmax on the last axis of a rank-4 tensor."""

    def __init__(self, dim=32, heads=4):
        super().__init__()
        self.h, self.d = heads, dim // heads
        self.qkv = nn.Linear(dim, 3 * dim)
        self.out = nn.Linear(dim, dim)

    def forward(self, x):
        b, s, _ = x.shape
        q, k, v = self.qkv(x).reshape(b, s, 3, self.h, self.d).permute(2, 0, 3, 1, 4)
        p = torch.softmax(q @ k.transpose(-2, -1) / self.d ** 0.5, dim=-1)
        return self.out((p @ v).transpose(1, 2).reshape(b, s, self.h * self.d))


class UpWhere(nn.Module):
    """The ops that stay float in integer mode: ConvTranspose2d (stride 2) and Where with a constant mask."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(4, 8, 3, padding=1)
        self.up = nn.ConvTranspose2d(8, 4, 3, stride=2, padding=1, output_padding=1)
        self.register_buffer("mask", torch.arange(64).reshape(1, 1, 8, 8) % 3 == 0)

    def forward(self, x):
        y = self.up(torch.relu(self.conv(x)))
        return torch.where(self.mask, y, -y)


def randomize(m, gen):
    """Non-trivial BatchNorm statistics and PRelu slopes (the defaults are identities)."""
    with torch.no_grad():
        for mod in m.modules():
            if isinstance(mod, (nn.BatchNorm2d, nn.BatchNorm3d)):
                mod.running_mean.copy_(torch.randn(mod.num_features, generator=gen) * 0.1)
                mod.running_var.copy_(torch.rand(mod.num_features, generator=gen) * 0.5 + 0.75)
                mod.weight.copy_(torch.rand(mod.num_features, generator=gen) * 0.5 + 0.75)
                mod.bias.copy_(torch.randn(mod.num_features, generator=gen) * 0.1)
            if isinstance(mod, nn.PReLU):
                mod.weight.copy_(torch.rand(mod.num_parameters, generator=gen) * 0.4)
            if isinstance(mod, nn.LayerNorm):
                mod.weight.copy_(1.0 + torch.randn(mod.normalized_shape, generator=gen) * 0.1)
                mod.bias.copy_(torch.randn(mod.normalized_shape, generator=gen) * 0.1)


def export(model, x, path, opset):
    torch.onnx.export(model, x, path, opset_version=opset, input_names=["input"], output_names=["output"],
                      do_constant_folding=True)


def write(name, model, shape, opset, seed, n_eval=16):
    gen = torch.Generator().manual_seed(seed)
    randomize(model, gen)
    model.eval()
    fdir = os.path.join(ROOT, "tests", "models", "data", name)
    qdir = os.path.join(ROOT, "tests", "quant_e2e", "data", name)
    os.makedirs(fdir, exist_ok=True)
    os.makedirs(qdir, exist_ok=True)
    x = torch.randn(*shape, generator=gen)
    # exported with autograd on: torch 1.13's fused inference path of TransformerEncoderLayer
    # (aten::_transformer_encoder_layer_fwd, no ONNX form) is only taken under no_grad
    export(model, x, os.path.join(fdir, "model.onnx"), opset)
    export(model, x, os.path.join(qdir, "model.onnx"), opset)
    with torch.no_grad():
        np.save(os.path.join(fdir, "input_0.npy"), x.numpy().astype(np.float32))
        np.save(os.path.join(fdir, "output_0.npy"), model(x).numpy().astype(np.float32))
        calib = torch.randn(32, *shape[1:], generator=gen)
        ev = torch.randn(n_eval, *shape[1:], generator=gen)
        ey = torch.cat([model(ev[i:i + 1]) for i in range(ev.shape[0])])
        np.save(os.path.join(qdir, "calib.npy"), torch.cat([calib, ev]).numpy().astype(np.float32))
        np.save(os.path.join(qdir, "eval_x.npy"), ev.numpy().astype(np.float32))
        np.save(os.path.join(qdir, "eval_y.npy"), ey.numpy().astype(np.float32))
    print(name, "written")


def write_ms_gelu():
    """onnxruntime's fused GELUs (com.microsoft Gelu, then FastGelu without bias), built with onnx.helper;
    the reference is computed in double with math.erf / math.tanh."""
    import math
    import onnx
    from onnx import TensorProto, helper
    nodes = [helper.make_node("Gelu", ["input"], ["g"], domain="com.microsoft"),
             helper.make_node("FastGelu", ["g"], ["output"], domain="com.microsoft")]
    graph = helper.make_graph(nodes, "ms_gelu", [helper.make_tensor_value_info("input", TensorProto.FLOAT, [1, 64])],
                              [helper.make_tensor_value_info("output", TensorProto.FLOAT, [1, 64])],
                              value_info=[helper.make_tensor_value_info("g", TensorProto.FLOAT, [1, 64])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13), helper.make_opsetid("com.microsoft", 1)])
    fdir = os.path.join(ROOT, "tests", "models", "data", "ms_gelu")
    os.makedirs(fdir, exist_ok=True)
    onnx.save(model, os.path.join(fdir, "model.onnx"))
    x = np.linspace(-6.0, 6.0, 64, dtype=np.float32).reshape(1, 64)
    g = [0.5 * v * (1.0 + math.erf(v / math.sqrt(2.0))) for v in x.astype(np.float64).ravel()]
    g = np.array(g, dtype=np.float32).astype(np.float64)
    y = [0.5 * v * (1.0 + math.tanh(math.sqrt(2.0 / math.pi) * (v + 0.044715 * v ** 3))) for v in g]
    np.save(os.path.join(fdir, "input_0.npy"), x)
    np.save(os.path.join(fdir, "output_0.npy"), np.array(y, dtype=np.float32).reshape(1, 64))
    print("ms_gelu written")


def main():
    torch.manual_seed(15)
    write("transformer_block14", Encoder(), (1, 8, 32), 14, 1501)
    write("transformer_block17", Encoder(), (1, 8, 32), 17, 1502)
    write("mobilenetv3_block", MobileV3(), (1, 16, 6, 6), 13, 1503, n_eval=8)
    write("convtranspose_where", UpWhere(), (1, 4, 4, 4), 13, 1504, n_eval=8)
    write("attention4d", Attention4d(), (1, 8, 32), 14, 1505)
    write_ms_gelu()


if __name__ == "__main__":
    main()
