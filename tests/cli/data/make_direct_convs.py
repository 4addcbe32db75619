#!/usr/bin/env python3
"""tests/cli/data/make_direct_convs.py: the model tests/cli/variants_test.sh uses to check which direct
conv variant the lowering picks and that each gives the reference's bytes (run with /usr/bin/python3;
rerunning it gives the same files). Three 3x3 convs on 8/16 channels:
  c1: 8 -> 8 at 40x40, stride 1 (conv2dc4 at int8: 97 % of its lanes are output pixels; conv2dc2 at 16 bits)
  c2: 8 -> 16, stride 2 (conv2dcl at int8; the panel variant at 16 bits)
  c3: 16 -> 16 at 20x20, stride 1 (conv2dcl at int8: c4 would use 93 % of its lanes; conv2dc2 at 16 bits)
Writes direct_convs/model.onnx and direct_convs/input_0.npy (1x8x40x40 float32 in [0, 1))."""
import os
import numpy as np
import torch

torch.manual_seed(7)
here = os.path.join(os.path.dirname(os.path.abspath(__file__)), "direct_convs")
os.makedirs(here, exist_ok=True)


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.c1 = torch.nn.Conv2d(8, 8, 3, padding=1)
        self.c2 = torch.nn.Conv2d(8, 16, 3, stride=2, padding=1)
        self.c3 = torch.nn.Conv2d(16, 16, 3, padding=1)

    def forward(self, x):
        return self.c3(torch.relu(self.c2(torch.relu(self.c1(x)))))


x = np.random.default_rng(7).random((1, 8, 40, 40), dtype=np.float32)
torch.onnx.export(Net().eval(), torch.from_numpy(x), os.path.join(here, "model.onnx"), opset_version=13,
                  input_names=["x"], output_names=["y"])
np.save(os.path.join(here, "input_0.npy"), x)
