#!/usr/bin/python3
"""Generates the models and tensors of tests/cli/input_shape_test.sh, bench_test.sh and run_dataset_test.sh
(run once; outputs are committed, in tests/cli/data/shapes/).

    /usr/bin/python3 tests/cli/data/make_shape_models.py

  cnn6.onnx          six 3x3 convolutions (3->8->8->16->16->16->16, ReLU, two 2x2 max pools) and a
                     linear layer, input x f32[1,3,32,32]: the per-layer table of bench_test.sh
  dynbatch.onnx      conv + ReLU + global pool + linear, input x f32[batch,3,8,8] with a symbolic batch
  dynbatch_x4.npy    a batch of 4 inputs, dynbatch_y4_ref.npy torch's output for it [4,5]
  dynseq.onnx        per-token MLP with LayerNorm, input x f32[1,seq,16] with a symbolic sequence length
  dynseq_x7.npy      a sequence of 7, dynseq_y7_ref.npy torch's output [1,7,8]
  digits20/          the first 20 test images of models/digits, one .npy file each ([1,1,8,8])
  digits20.npz       the same 20 as one array 'input' [20,1,8,8] (np.savez_compressed: deflated)
  digits20_stored.npz  the same, np.savez (stored)

References come from torch (float32), independently of qllc. Fixed seeds: running it again gives the
same models and tensors (torch 1.13, onnx, numpy from Debian).
"""
import os

import numpy as np
import torch

HERE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "shapes")
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
os.makedirs(HERE, exist_ok=True)
torch.manual_seed(27)
rng = np.random.default_rng(27)


def export(model, x, name, dynamic_axes=None):
    model.eval()
    torch.onnx.export(model, x, os.path.join(HERE, name), input_names=["x"], output_names=["y"], opset_version=13,
                      dynamic_axes=dynamic_axes, do_constant_folding=True)


class CNN6(torch.nn.Module):
    def __init__(self):
        super().__init__()
        ch = [3, 8, 8, 16, 16, 16, 16]
        self.convs = torch.nn.ModuleList(torch.nn.Conv2d(ch[i], ch[i + 1], 3, padding=1) for i in range(6))
        self.fc = torch.nn.Linear(16 * 8 * 8, 10)

    def forward(self, x):
        for i, c in enumerate(self.convs):
            x = torch.relu(c(x))
            if i in (1, 3):
                x = torch.nn.functional.max_pool2d(x, 2)
        return self.fc(torch.flatten(x, 1))


class DynBatch(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv2d(3, 8, 3, padding=1)
        self.fc = torch.nn.Linear(8, 5)

    def forward(self, x):
        x = torch.relu(self.conv(x))
        return self.fc(torch.flatten(torch.nn.functional.adaptive_avg_pool2d(x, 1), 1))


class DynSeq(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = torch.nn.Linear(16, 32)
        self.norm = torch.nn.LayerNorm(32)
        self.fc2 = torch.nn.Linear(32, 8)

    def forward(self, x):
        return self.fc2(torch.relu(self.norm(self.fc1(x))))


with torch.no_grad():
    export(CNN6(), torch.rand(1, 3, 32, 32), "cnn6.onnx")

    m = DynBatch().eval()
    export(m, torch.rand(1, 3, 8, 8), "dynbatch.onnx", {"x": {0: "batch"}, "y": {0: "batch"}})
    x4 = rng.random((4, 3, 8, 8), dtype=np.float32)
    np.save(os.path.join(HERE, "dynbatch_x4.npy"), x4)
    np.save(os.path.join(HERE, "dynbatch_y4_ref.npy"), m(torch.from_numpy(x4)).numpy())

    m = DynSeq().eval()
    export(m, torch.rand(1, 5, 16), "dynseq.onnx", {"x": {1: "seq"}, "y": {1: "seq"}})
    x7 = rng.standard_normal((1, 7, 16), dtype=np.float32)
    np.save(os.path.join(HERE, "dynseq_x7.npy"), x7)
    np.save(os.path.join(HERE, "dynseq_y7_ref.npy"), m(torch.from_numpy(x7)).numpy())

test_x = np.load(os.path.join(ROOT, "models", "digits", "test_x.npy"))[:20]
os.makedirs(os.path.join(HERE, "digits20"), exist_ok=True)
for i in range(20):
    np.save(os.path.join(HERE, "digits20", "s%02d.npy" % i), test_x[i:i + 1])
np.savez_compressed(os.path.join(HERE, "digits20.npz"), input=test_x)
np.savez(os.path.join(HERE, "digits20_stored.npz"), input=test_x)
