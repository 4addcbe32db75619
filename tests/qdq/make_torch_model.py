#!/usr/bin/env python3
"""Generates tests/qdq/data/torch_qnnpack.onnx: a CNN quantized in eager mode by Debian's torch 1.13
(engine qnnpack: fuse, prepare, calibrate, convert) and exported to ONNX (QDQ), with 40 inputs and
torch's own quantized outputs (torch_in.bin / torch_out.bin, raw float32) for qdq_model_test.c."""
import os
import torch, torch.nn as nn, numpy as np
D = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data")
torch.manual_seed(0)
torch.backends.quantized.engine = 'qnnpack'
class M(nn.Module):
    def __init__(s):
        super().__init__()
        s.q = torch.quantization.QuantStub(); s.dq = torch.quantization.DeQuantStub()
        s.conv = nn.Conv2d(3, 8, 3, padding=1); s.relu = nn.ReLU()
        s.conv2 = nn.Conv2d(8, 8, 3, padding=1)
        s.pool = nn.AdaptiveAvgPool2d(1); s.fc = nn.Linear(8, 5)
    def forward(s, x):
        x = s.q(x); x = s.relu(s.conv(x)); x = s.conv2(x); x = s.pool(x); x = torch.flatten(x, 1); x = s.fc(x); return s.dq(x)
m = M().eval()
m.qconfig = torch.quantization.get_default_qconfig('qnnpack')
torch.quantization.fuse_modules(m, [['conv', 'relu']], inplace=True)
torch.quantization.prepare(m, inplace=True)
for _ in range(16): m(torch.randn(4, 3, 8, 8))
torch.quantization.convert(m, inplace=True)
x = torch.randn(1, 3, 8, 8)
y = m(x)
torch.onnx.export(m, x, os.path.join(D, 'torch_qnnpack.onnx'), opset_version=13)
xs = torch.randn(40, 1, 3, 8, 8)
ys = torch.stack([m(v) for v in xs])
xs.numpy().astype(np.float32).tofile(os.path.join(D, "torch_in.bin"))
ys.numpy().astype(np.float32).tofile(os.path.join(D, "torch_out.bin"))
print("output scale", m.fc.scale, "zero point", m.fc.zero_point)
