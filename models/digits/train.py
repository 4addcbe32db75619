#!/usr/bin/python3
"""Trains the qllc sample model: a small CNN on scikit-learn's 8x8 digits.

Run from the repository root:  /usr/bin/python3 models/digits/train.py
Writes, next to this script:
  digits.onnx   opset 13, batch 1, input "input" [1,1,8,8] float (pixels / 16), output "logits" [1,10]
  test_x.npy    float32 [N,1,8,8]  held-out test split (20 %, stratified, fixed seed)
  test_y.npy    int64   [N]
  calib_x.npy   float32 [K,1,8,8]  training images for calibration (quantization, issue 3)
  sample_0.npy  float32 [1,1,8,8]  the first test image alone (an input for `qllc run`)
Deterministic: fixed seeds, one thread, minibatch order from a seeded generator.
"""
import os
import sys

import numpy as np
import torch
import torch.nn as nn
from sklearn.datasets import load_digits
from sklearn.model_selection import train_test_split

SEED = 20240601
HERE = os.path.dirname(os.path.abspath(__file__))
N_CALIB = 256
EPOCHS = 30


class DigitsNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 8, 3, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(8)
        self.conv2 = nn.Conv2d(8, 16, 3, padding=1)
        self.pool = nn.MaxPool2d(2)
        self.fc1 = nn.Linear(16 * 4 * 4, 32)
        self.fc2 = nn.Linear(32, 10)

    def forward(self, x):
        x = torch.relu(self.bn1(self.conv1(x)))
        x = torch.relu(self.conv2(x))
        x = self.pool(x)
        x = torch.flatten(x, 1)
        x = torch.relu(self.fc1(x))
        return self.fc2(x)


def main():
    torch.manual_seed(SEED)
    np.random.seed(SEED)
    torch.set_num_threads(1)
    torch.use_deterministic_algorithms(True)

    digits = load_digits()
    x = (digits.images.astype(np.float32) / 16.0)[:, None, :, :]
    y = digits.target.astype(np.int64)
    x_tr, x_te, y_tr, y_te = train_test_split(x, y, test_size=0.2, stratify=y, random_state=SEED % (2**31))

    model = DigitsNet()
    opt = torch.optim.Adam(model.parameters(), lr=3e-3)
    loss_fn = nn.CrossEntropyLoss()
    xt, yt = torch.from_numpy(x_tr), torch.from_numpy(y_tr)
    gen = torch.Generator().manual_seed(SEED)
    for epoch in range(EPOCHS):
        model.train()
        perm = torch.randperm(len(xt), generator=gen)
        total = 0.0
        for i in range(0, len(xt), 32):
            idx = perm[i:i + 32]
            opt.zero_grad()
            loss = loss_fn(model(xt[idx]), yt[idx])
            loss.backward()
            opt.step()
            total += loss.item() * len(idx)
        if epoch % 10 == 9:
            print(f"epoch {epoch + 1}: train loss {total / len(xt):.4f}")

    model.eval()
    with torch.no_grad():
        pred = model(torch.from_numpy(x_te)).argmax(1).numpy()
    acc = float((pred == y_te).mean())
    print(f"float test accuracy (torch): {acc * 100:.2f}% ({int((pred == y_te).sum())}/{len(y_te)})")

    dummy = torch.from_numpy(x_te[:1])
    torch.onnx.export(model, dummy, os.path.join(HERE, "digits.onnx"), opset_version=13,
                      input_names=["input"], output_names=["logits"], do_constant_folding=True)
    np.save(os.path.join(HERE, "test_x.npy"), np.ascontiguousarray(x_te, dtype=np.float32))
    np.save(os.path.join(HERE, "test_y.npy"), np.ascontiguousarray(y_te, dtype=np.int64))
    np.save(os.path.join(HERE, "sample_0.npy"), np.ascontiguousarray(x_te[:1], dtype=np.float32))
    calib = np.random.RandomState(SEED % (2**31)).choice(len(x_tr), N_CALIB, replace=False)
    np.save(os.path.join(HERE, "calib_x.npy"), np.ascontiguousarray(x_tr[np.sort(calib)], dtype=np.float32))
    return 0


if __name__ == "__main__":
    sys.exit(main())
