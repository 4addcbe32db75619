#!/usr/bin/python3
"""Makes the committed models and data of issue 15's third group (volumetric layers and Pad modes).

Run from the repository root:  /usr/bin/python3 tests/models/make_issue15_group3_models.py
Only needed to regenerate; the tests need no python. Deterministic (fixed seeds, one thread); it writes
the same files as make_issue15_models.py does for its models (write() there, which also gives the
BatchNorm layers non-trivial statistics):
  tests/models/data/NAME/{model.onnx, input_0.npy, output_0.npy}      (float, JIT and bundles)
  tests/quant_e2e/data/NAME/{model.onnx, calib.npy, eval_x.npy, eval_y.npy}  (int8 / int16 SQNR,
      tests/quant_e2e/issue15_sqnr_test.c, with --strict: every node gets an integer kernel)
Models:
  volumetric3d  Conv3d + BatchNorm3d (torch folds it into the conv) + ReLU, MaxPool3d, grouped Conv3d
                + ReLU, AvgPool3d with a depth pad (count_include_pad False), strided Conv3d with a dilated
                1x3x3 kernel: qllc rewrites the 3-D layers into 2-D ones (src/ir/pass_spatial3d.c)
  pad_modes     Conv2d, ReflectionPad2d (Pad mode reflect), Conv2d + ReLU, ReplicationPad2d with uneven
                pads (Pad mode edge), Conv2d
"""
import os
import sys

import torch
import torch.nn as nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import make_issue15_models as base  # noqa: E402  (write(): export, float data, calibration and eval sets)

torch.set_num_threads(1)


class Volumetric(nn.Module):
    def __init__(self):
        super().__init__()
        self.c1 = nn.Conv3d(2, 8, 3, padding=1)
        self.bn = nn.BatchNorm3d(8)
        self.pool = nn.MaxPool3d(2)
        self.c2 = nn.Conv3d(8, 8, 3, padding=1, groups=2)
        self.avg = nn.AvgPool3d((2, 2, 2), stride=1, padding=(1, 0, 0), count_include_pad=False)
        self.c3 = nn.Conv3d(8, 4, (1, 3, 3), stride=(1, 2, 1), dilation=(1, 1, 2))

    def forward(self, x):
        y = self.pool(torch.relu(self.bn(self.c1(x))))
        y = self.avg(torch.relu(self.c2(y)))
        return self.c3(y)


class PadModes(nn.Module):
    def __init__(self):
        super().__init__()
        self.c1 = nn.Conv2d(3, 8, 3)
        self.reflect = nn.ReflectionPad2d(2)
        self.c2 = nn.Conv2d(8, 8, 3)
        self.edge = nn.ReplicationPad2d((1, 2, 0, 1))
        self.c3 = nn.Conv2d(8, 4, 3)

    def forward(self, x):
        y = self.c2(self.reflect(self.c1(x)))
        return self.c3(self.edge(torch.relu(y)))


def main():
    torch.manual_seed(1531)
    base.write("volumetric3d", Volumetric(), (1, 2, 6, 16, 16), 13, 1533, n_eval=8)
    base.write("pad_modes", PadModes(), (1, 3, 10, 10), 13, 1534, n_eval=8)


if __name__ == "__main__":
    main()
