#!/usr/bin/python3
"""Makes the committed data of `qllc compare`'s tests (issue 13): tests/quant_e2e/data/outlier/ and softmax12/.

Run from the repository root:  /usr/bin/python3 tests/quant_e2e/make_compare_data.py
Only needed to regenerate the data; the tests (tests/quant_e2e/compare_test.c, tests/cli/compare_test.sh)
need no python. Deterministic (fixed seeds). Writes
  model.onnx     x[1, 16] -> FC 16->32 + Relu -> FC 32->32 + Relu -> FC 32->8 -> output (torch.onnx.export);
                 fc2's output channel 5 is an outlier made on purpose: its weights are 40x the others and
                 negative (its output is always cut by the Relu), so one weight scale for the whole tensor
                 (--per-tensor) leaves fc2's other channels a few levels
  calib.npy      f32 [128, 1, 16] calibration samples (the eval samples are the first 32)
  eval_x.npy     f32 [32, 1, 16]
  expected.txt   "MODE VALUE SQNR_DB" per value and mode (per_channel, per_tensor): the SQNR of the value
                 at int8 (asymmetric activations, minmax ranges over calib.npy, symmetric weights), computed
                 here with numpy by simulating the integer arithmetic of docs/quantization.md ("The
                 arithmetic") from the float model's weights, against numpy's float computation, over the
                 32 eval samples
softmax12/ (issue 13's bounded-op case): x[1, 16] -> FC 16->12 with small weights -> Softmax, so the 12
probabilities stay within about 0.04-0.13:
  model.onnx, calib.npy [128, 1, 16], eval_x.npy [32, 1, 16] (the first 32 calibration samples)
  expected.txt   "fixed_grid DB": the SQNR of the float probabilities rounded to the old fixed int8 softmax
                 grid (s = 1/256, z = -128); "calibrated_grid DB": rounded to the grid qllc now chooses from
                 the calibrated range [0, max] (s = 1 / floor(255 / max), z = -128); over the 32 eval samples
"""
import os

import numpy as np
import onnx
import torch
import torch.nn as nn
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "data", "outlier")


class Outlier(nn.Module):
    def __init__(self, gen):
        super().__init__()
        self.fc1 = nn.Linear(16, 32)
        self.fc2 = nn.Linear(32, 32)
        self.fc3 = nn.Linear(32, 8)
        with torch.no_grad():
            for fc in (self.fc1, self.fc2, self.fc3):
                fc.weight.copy_(torch.randn(fc.weight.shape, generator=gen) / np.sqrt(fc.weight.shape[1]))
                fc.bias.copy_(torch.randn(fc.bias.shape, generator=gen) * 0.1)
            self.fc2.weight[5] = -40.0 * self.fc2.weight[5].abs()
            self.fc2.bias[5] = -1.0

    def forward(self, x):
        x = F.relu(self.fc1(x))
        x = F.relu(self.fc2(x))
        return self.fc3(x)


def rhe(x):
    return np.round(x)  # numpy rounds half to even


def act_params(lo, hi):
    """asymmetric int8 for [lo, hi] as qllc_quant_choose: float scale, zero point from it."""
    lo, hi = min(float(lo), 0.0), max(float(hi), 0.0)
    s = np.float32((hi - lo) / 255.0)
    z = int(np.clip(rhe(-128.0 - lo / float(s)), -128, 127))
    return s, z


def quantize(x, s, z):
    return np.clip(rhe((x.astype(np.float32) / s).astype(np.float64)) + z, -128, 127)


def weights(w, per_tensor):
    amax = np.abs(w).max() if per_tensor else np.abs(w).max(axis=1)
    s = (amax / 127.0).astype(np.float32) * np.ones(w.shape[0], np.float32)
    q = np.clip(rhe((w / s[:, None]).astype(np.float64)), -127, 127)
    return q, s.astype(np.float64)


def fc_int(qx, sx, zx, w, b, sy, zy, relu, per_tensor):
    qw, sw = weights(w, per_tensor)
    qb = rhe(b / (sx * sw))
    acc = (qx - zx) @ qw.T + qb
    y = rhe(acc * (sx * sw / sy)) + zy
    lo = zy if relu else -128
    return np.clip(y, lo, 127)


def sqnr(ref, q):
    return 10 * np.log10(np.sum(ref.astype(np.float64) ** 2) / np.sum((q - ref.astype(np.float64)) ** 2))


def main():
    torch.manual_seed(0)
    gen = torch.Generator().manual_seed(13)
    m = Outlier(gen).eval()
    calib = (torch.randn(128, 1, 16, generator=gen) * 1.5).numpy().astype(np.float32)
    ev = calib[:32]
    os.makedirs(OUT, exist_ok=True)
    np.save(os.path.join(OUT, "calib.npy"), calib)
    np.save(os.path.join(OUT, "eval_x.npy"), ev)
    path = os.path.join(OUT, "model.onnx")
    torch.onnx.export(m, torch.zeros(1, 16), path, input_names=["x"], output_names=["output"], opset_version=13)
    # the value names the export gave (the Relu outputs fused into fc1 and fc2)
    g = onnx.load(path).graph
    relus = [n.output[0] for n in g.node if n.op_type == "Relu"]
    names = [relus[0], relus[1], "output"]

    W = [fc.weight.detach().numpy().astype(np.float64) for fc in (m.fc1, m.fc2, m.fc3)]
    B = [fc.bias.detach().numpy().astype(np.float64) for fc in (m.fc1, m.fc2, m.fc3)]

    def float_run(x):  # float32, as the model computes
        x = x.reshape(len(x), 16).astype(np.float32)
        h1 = np.maximum(x @ W[0].T.astype(np.float32) + B[0].astype(np.float32), 0)
        h2 = np.maximum(h1 @ W[1].T.astype(np.float32) + B[1].astype(np.float32), 0)
        y = h2 @ W[2].T.astype(np.float32) + B[2].astype(np.float32)
        return [x, h1, h2, y]

    cal = float_run(calib)
    ref = float_run(ev)
    params = [act_params(v.min(), v.max()) for v in cal]
    lines = []
    for mode, per_tensor in (("per_channel", False), ("per_tensor", True)):
        sx, zx = params[0]
        q = quantize(ref[0], sx, zx)
        for k in range(3):
            sy, zy = params[k + 1]
            q = fc_int(q, float(sx), zx, W[k], B[k], float(sy), zy, k < 2, per_tensor)
            deq = float(sy) * (q - zy)
            lines.append("%s %s %.3f" % (mode, names[k], sqnr(ref[k + 1], deq)))
            sx, zx = sy, zy
    with open(os.path.join(OUT, "expected.txt"), "w") as f:
        f.write("# made by tests/quant_e2e/make_compare_data.py: MODE VALUE SQNR_DB (int8, minmax, numpy)\n")
        f.write("\n".join(lines) + "\n")
    print("\n".join(lines))


def softmax12():
    gen = torch.Generator().manual_seed(12)
    fc = nn.Linear(16, 12)
    with torch.no_grad():
        fc.weight.copy_(torch.randn(12, 16, generator=gen) * 0.05)
        fc.bias.copy_(torch.randn(12, generator=gen) * 0.2)
    m = nn.Sequential(fc, nn.Softmax(dim=1)).eval()
    calib = (torch.randn(128, 1, 16, generator=gen)).numpy().astype(np.float32)
    ev = calib[:32]
    out = os.path.join(HERE, "data", "softmax12")
    os.makedirs(out, exist_ok=True)
    np.save(os.path.join(out, "calib.npy"), calib)
    np.save(os.path.join(out, "eval_x.npy"), ev)
    torch.onnx.export(m, torch.zeros(1, 16), os.path.join(out, "model.onnx"), input_names=["x"],
                      output_names=["output"], opset_version=13)
    with torch.no_grad():
        pc = m(torch.from_numpy(calib.reshape(128, 16))).numpy().astype(np.float64)
        pe = m(torch.from_numpy(ev.reshape(32, 16))).numpy().astype(np.float64)
    fixed = (np.clip(np.round(pe * 256) - 128, -128, 127) + 128) / 256
    s = np.float32(pc.max() / 255.0)          # asymmetric int8 on [0, max]: s = max / 255, z = -128
    R = np.floor(1.0 / np.float64(s) * (1 + 1e-6))
    cal = (np.clip(np.round(pe * R) - 128, -128, 127) + 128) / R
    lines = ["fixed_grid %.3f" % sqnr(pe, fixed), "calibrated_grid %.3f" % sqnr(pe, cal)]
    with open(os.path.join(out, "expected.txt"), "w") as f:
        f.write("# made by tests/quant_e2e/make_compare_data.py (numpy); probabilities in [%.4f, %.4f], R = %d\n"
                % (pc.min(), pc.max(), R))
        f.write("\n".join(lines) + "\n")
    print("softmax12", pc.min(), pc.max(), R, lines)


if __name__ == "__main__":
    softmax12()
    main()
