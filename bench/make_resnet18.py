#!/usr/bin/python3
"""Exports the ResNet-18-shaped benchmark model (random weights, 1x3x224x224, opset 13) to ONNX.

  /usr/bin/python3 bench/make_resnet18.py OUT.onnx [INPUT.npy [OUTPUT.npy [CALIB.npy]]]

Not committed (~45 MB); bench/run.sh makes it under build/bench/ when missing. With INPUT.npy also
writes the fixed benchmark input (float32 [1,3,224,224]), and with OUTPUT.npy torch's output for it
(float32 [1,1000]), so the benchmark can check that what it times is also right; with CALIB.npy, 8
more inputs from the same distribution (float32 [8,3,224,224]) to calibrate int8/int16 quantization.
"""
import os
import sys

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import resnet18  # noqa: E402


def main(argv):
    if len(argv) not in (2, 3, 4, 5):
        print(__doc__.strip(), file=sys.stderr)
        return 2
    torch.set_num_threads(1)
    model, x = resnet18.build(), resnet18.example_input()
    os.makedirs(os.path.dirname(os.path.abspath(argv[1])), exist_ok=True)
    torch.onnx.export(model, x, argv[1], opset_version=13, input_names=["input"], output_names=["logits"],
                      do_constant_folding=True)
    if len(argv) >= 3:
        np.save(argv[2], x.numpy().astype(np.float32))
    if len(argv) == 5:
        calib = torch.randn(8, 3, 224, 224, generator=torch.Generator().manual_seed(resnet18.SEED + 2))
        np.save(argv[4], calib.numpy().astype(np.float32))
    if len(argv) >= 4:
        with torch.no_grad():
            np.save(argv[3], model(x).numpy().astype(np.float32))
    print(f"wrote {argv[1]} ({os.path.getsize(argv[1]) / 1e6:.1f} MB)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
