#!/usr/bin/python3
"""PyTorch's own int8 on the end-to-end test models, for docs/quantization.md (issue 13).

Run from the repository root:  /usr/bin/python3 tests/quant_e2e/torch_fx_int8.py
Not a test (no threshold): prints, per model of tests/quant_e2e/data, the SQNR against torch's float
output (eval_y.npy) of PyTorch 1.13's post-training static quantization in FX mode, per-channel int8
weights, calibrated on calib.npy and evaluated on eval_x.npy (what qllc's tests measure):
  onednn     get_default_qconfig_mapping("onednn") on the onednn engine (Debian's torch has no fbgemm):
             HistogramObserver activations (full 8 bits), per-channel symmetric int8 weights
  minmax     MinMaxObserver activations, the same per-channel weights (qllc's default calibration)
The models are rebuilt exactly as make_data.py builds them (same classes, same seeds) and checked
against eval_y.npy first.
"""
import copy
import os
import sys

import numpy as np
import torch
from torch.ao.quantization import QConfig, QConfigMapping, get_default_qconfig_mapping
from torch.ao.quantization.observer import MinMaxObserver, default_per_channel_weight_observer
from torch.ao.quantization.quantize_fx import convert_fx, prepare_fx

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "models"))
import make_data as md  # noqa: E402
import make_models as mm  # noqa: E402


def models():
    torch.manual_seed(101)
    yield "mlp", mm.Mlp()
    torch.manual_seed(202)
    g = torch.Generator().manual_seed(202)
    yield "cnn_bn_pool", mm.CnnBnPool(g)
    torch.manual_seed(303)
    yield "residual", mm.Residual()
    torch.manual_seed(404)
    yield "depthwise_separable", mm.DepthwiseSeparable()
    torch.manual_seed(505)
    g = torch.Generator().manual_seed(505)
    m = md.test_CNN()
    mm.randomize_bn(m.bn1, g)
    yield "test_cnn", m


def sqnr(ref, q):
    ref = ref.astype(np.float64)
    return 10 * np.log10(np.sum(ref ** 2) / np.sum((q.astype(np.float64) - ref) ** 2))


def main():
    torch.set_num_threads(1)
    torch.backends.quantized.engine = "onednn"
    minmax = QConfig(activation=MinMaxObserver.with_args(reduce_range=False), weight=default_per_channel_weight_observer)
    print("%-20s %10s %10s" % ("model", "onednn", "minmax"))
    for name, m in models():
        d = os.path.join(HERE, "data", name)
        calib = torch.from_numpy(np.load(os.path.join(d, "calib.npy")))
        evx = torch.from_numpy(np.load(os.path.join(d, "eval_x.npy")))
        evy = np.load(os.path.join(d, "eval_y.npy"))
        m.eval()
        with torch.no_grad():
            f = np.stack([m(x).numpy() for x in evx])
        assert np.allclose(f, evy, atol=1e-5), name + ": the rebuilt model differs from eval_y.npy"
        row = []
        for mapping in (get_default_qconfig_mapping("onednn"), QConfigMapping().set_global(minmax)):
            p = prepare_fx(copy.deepcopy(m), mapping, (evx[0],))
            with torch.no_grad():
                for x in calib:
                    p(x)
            q = convert_fx(p)
            with torch.no_grad():
                y = np.stack([q(x).numpy() for x in evx])
            row.append(sqnr(evy, y))
        print("%-20s %7.1f dB %7.1f dB" % (name, row[0], row[1]))


if __name__ == "__main__":
    main()
