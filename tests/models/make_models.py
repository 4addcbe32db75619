#!/usr/bin/python3
"""Exports the small float test models of tests/models/data with torch, with torch's outputs as the
independent reference.

Run from the repository root:  /usr/bin/python3 tests/models/make_models.py
For each model writes tests/models/data/<name>/{model.onnx, input_0.npy, output_0.npy}.
Only needed to regenerate the committed data; the tests themselves (e2e_test.sh) need no python.
Deterministic: fixed seed per model, one thread.
"""
import os
import sys

import numpy as np
import onnx
import torch
import torch.nn as nn
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = os.path.join(HERE, "data")


def randomize_bn(bn, gen):
    """Non-trivial running statistics and affine parameters so that BatchNormalization really computes."""
    c = bn.num_features
    with torch.no_grad():
        bn.running_mean.copy_(torch.randn(c, generator=gen) * 0.5)
        bn.running_var.copy_(torch.rand(c, generator=gen) * 1.5 + 0.25)
        bn.weight.copy_(torch.rand(c, generator=gen) + 0.5)
        bn.bias.copy_(torch.randn(c, generator=gen) * 0.2)


class Mlp(nn.Module):
    """Gemm + Relu three times (the last Gemm without Relu)."""

    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(32, 64)
        self.fc2 = nn.Linear(64, 48)
        self.fc3 = nn.Linear(48, 10)

    def forward(self, x):
        x = torch.relu(self.fc1(x))
        x = torch.relu(self.fc2(x))
        return torch.relu(self.fc3(x))


class CnnBnPool(nn.Module):
    """Conv + BatchNorm + Relu + MaxPool + Conv (stride 2) + AvgPool + Flatten + Gemm."""

    def __init__(self, gen):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 8, 3, padding=1)
        self.bn1 = nn.BatchNorm2d(8)
        self.conv2 = nn.Conv2d(8, 12, 3, stride=2, padding=1)
        self.fc = nn.Linear(12 * 2 * 2, 7)
        randomize_bn(self.bn1, gen)

    def forward(self, x):
        x = F.max_pool2d(torch.relu(self.bn1(self.conv1(x))), 2)
        x = F.avg_pool2d(self.conv2(x), 2)
        return self.fc(torch.flatten(x, 1))


class Residual(nn.Module):
    """y = relu(x + conv2(relu(conv1(x)))) with 5x5 and 3x3 kernels, then a BatchNorm-free 1x1 head."""

    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(6, 6, 5, padding=2)
        self.conv2 = nn.Conv2d(6, 6, 3, padding=1, bias=False)
        self.head = nn.Conv2d(6, 4, 1)

    def forward(self, x):
        y = self.conv2(torch.relu(self.conv1(x)))
        return self.head(torch.relu(x + y))


class DepthwiseSeparable(nn.Module):
    """Depthwise conv (groups = C, stride 2) + pointwise conv + ReLU6 (exported as Clip)."""

    def __init__(self):
        super().__init__()
        self.dw = nn.Conv2d(8, 8, 3, stride=2, padding=1, groups=8)
        self.pw = nn.Conv2d(8, 16, 1)
        self.dw2 = nn.Conv2d(16, 16, 3, padding=1, dilation=1, groups=16, bias=False)

    def forward(self, x):
        x = F.relu6(self.pw(F.relu6(self.dw(x))))
        return F.relu6(self.dw2(x) * 12.0)


class BatchedMatmul(nn.Module):
    """MatMul [2,3,4,5] x [5,6] + Add, Softmax, Transpose, Concat."""

    def __init__(self, gen):
        super().__init__()
        self.w = nn.Parameter(torch.randn(5, 6, generator=gen))
        self.b = nn.Parameter(torch.randn(6, generator=gen))

    def forward(self, x):
        y = torch.matmul(x, self.w) + self.b          # [2,3,4,6]
        s = torch.softmax(y, dim=-1)                  # [2,3,4,6]
        t = s.permute(0, 2, 1, 3)                     # [2,4,3,6]
        u = y.transpose(1, 2)                         # [2,4,3,6]
        return torch.cat([t, u], dim=3)               # [2,4,3,12]


class SigmoidTanhLeaky(nn.Module):
    """Elementwise zoo: Sigmoid, Tanh, LeakyRelu, broadcasting Mul/Div/Sub/Add, constant Pad."""

    def __init__(self, gen):
        super().__init__()
        self.register_buffer("per_channel", torch.rand(1, 4, 1, 1, generator=gen) + 0.5)
        self.register_buffer("per_col", torch.randn(1, 1, 1, 6, generator=gen))
        self.register_buffer("divisor", torch.rand(5, 1, generator=gen) + 1.0)

    def forward(self, x):                             # [1,4,5,6]
        a = torch.sigmoid(x) * self.per_channel       # broadcast over C
        b = torch.tanh(x) - self.per_col              # broadcast over W
        c = F.leaky_relu(x, 0.1) / self.divisor       # broadcast [5,1] against [1,4,5,6]
        d = a + b * c - 0.25
        return F.pad(d, (1, 2, 0, 1), mode="constant", value=0.5)


def export(name, model, x, opset, **kw):
    out_dir = os.path.join(DATA, name)
    os.makedirs(out_dir, exist_ok=True)
    model.eval()
    with torch.no_grad():
        y = model(x)
    path = os.path.join(out_dir, "model.onnx")
    torch.onnx.export(model, x, path, opset_version=opset, input_names=["input"], output_names=["output"],
                      do_constant_folding=True, **kw)
    m = onnx.load(path)
    onnx.checker.check_model(m)
    np.save(os.path.join(out_dir, "input_0.npy"), np.ascontiguousarray(x.numpy(), dtype=np.float32))
    np.save(os.path.join(out_dir, "output_0.npy"), np.ascontiguousarray(y.numpy(), dtype=np.float32))
    ops = sorted({n.op_type for n in m.graph.node})
    print(f"{name:22s} opset {opset}  in {list(x.shape)} out {list(y.shape)}  ops {' '.join(ops)}")


def main():
    torch.set_num_threads(1)
    gens = {}

    def seeded(seed):
        torch.manual_seed(seed)
        gens[seed] = torch.Generator().manual_seed(seed)
        return gens[seed]

    g = seeded(101)
    # Old-exporter style: the initializers are also listed as graph inputs.
    export("mlp", Mlp(), torch.randn(1, 32, generator=g), 11, keep_initializers_as_inputs=True)

    g = seeded(202)
    # PRESERVE keeps the BatchNormalization node (EVAL mode would fold it into the Conv in torch).
    export("cnn_bn_pool", CnnBnPool(g), torch.randn(1, 3, 16, 16, generator=g), 13,
           training=torch.onnx.TrainingMode.PRESERVE)

    g = seeded(303)
    export("residual", Residual(), torch.randn(1, 6, 9, 7, generator=g), 17)

    g = seeded(404)
    export("depthwise_separable", DepthwiseSeparable(), torch.randn(1, 8, 12, 12, generator=g) * 4, 11)

    g = seeded(505)
    export("batched_matmul", BatchedMatmul(g), torch.randn(2, 3, 4, 5, generator=g), 13)

    g = seeded(606)
    export("sigmoid_tanh_leaky", SigmoidTanhLeaky(g), torch.randn(1, 4, 5, 6, generator=g) * 2, 17)
    return 0


if __name__ == "__main__":
    sys.exit(main())
