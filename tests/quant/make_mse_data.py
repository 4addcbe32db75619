#!/usr/bin/python3
"""Makes tests/quant/data/mse_expected.txt for calib_test.c's MSE calibration test (issue 13).

Run from the repository root:  /usr/bin/python3 tests/quant/make_mse_data.py   (numpy only; not needed to
run the tests). The samples are not stored: both sides generate them with the same generator (splitmix64,
seed 13, u = (r >> 11 + 0.5) 2^-53) and transform: 200000 Laplace(0, 1) values x = log(2u) for u < 1/2,
-log(2 (1 - u)) otherwise ("laplace"), and max(0, x) of the same ("relu"). Laplace tails are long: the
min/max range spends the grid on a few rare values, and the error-minimising range clips them.
numpy quantizes all the samples for each range of a search grid (asymmetric int8: 255 steps, zero point
rounded, values clamped; symmetric: [-T, T], 254 steps) and writes per set and grid the smallest mean
squared error found, the range that gave it, and the error of the min/max range. The test computes the
error of qllc's choice (made from the 2048-bin histogram) on the same samples and checks it is within 3%
of numpy's best and well below min/max.
"""
import os

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "data")
N = 200000


def samples():
    i = np.arange(1, N + 1, dtype=np.uint64)
    with np.errstate(over="ignore"):
        z = np.uint64(13) + i * np.uint64(0x9E3779B97F4A7C15)
        z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        z = z ^ (z >> np.uint64(31))
    u = ((z >> np.uint64(11)).astype(np.float64) + 0.5) * 2.0 ** -53
    x = np.where(u < 0.5, np.log(2 * u), -np.log(2 * (1 - u)))
    return x.astype(np.float32).astype(np.float64)


def qerr(x, a, b, symmetric):
    a, b = min(a, 0.0), max(b, 0.0)
    if symmetric:
        s = np.float64(np.float32(max(-a, b) / 127.0))
        q = np.clip(np.round(x / s), -128, 127)
        return np.mean((q * s - x) ** 2)
    s = np.float64(np.float32((b - a) / 255.0))
    z = np.clip(np.round(-128 - a / s), -128, 127)
    q = np.clip(np.round(x / s) + z, -128, 127)
    return np.mean(((q - z) * s - x) ** 2)


def search(x, symmetric):
    lo, hi = float(x.min()), float(x.max())
    best = (np.inf, 0, 0)
    if symmetric:
        for t in np.linspace(0, max(-lo, hi), 601)[1:]:
            best = min(best, (qerr(x, -t, t, True), -t, t))
    else:
        A = np.linspace(lo, 0.0, 60) if lo < 0 else np.array([0.0])
        for a in A:
            for b in np.linspace(0.0, hi, 121)[1:]:
                best = min(best, (qerr(x, a, b, False), a, b))
    return best, qerr(x, lo, hi, symmetric)


def main():
    x = samples()
    lines = ["# made by tests/quant/make_mse_data.py: SET GRID BEST_MSE BEST_LO BEST_HI MINMAX_MSE (numpy search)"]
    for name, v, grids in (("laplace", x, (("asymmetric", False), ("symmetric", True))),
                           ("relu", np.maximum(x, 0), (("asymmetric", False),))):
        for grid, sym in grids:
            (b, lo, hi), m = search(v, sym)
            lines.append("%s %s %.9g %.6g %.6g %.9g" % (name, grid, b, lo, hi, m))
            print(lines[-1])
    os.makedirs(OUT, exist_ok=True)
    with open(os.path.join(OUT, "mse_expected.txt"), "w") as f:
        f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
