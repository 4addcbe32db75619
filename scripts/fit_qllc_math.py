#!/usr/bin/python3
"""Fits the polynomial coefficients of libjit/bitcode/qllc_math.h's erf and GELU (prints them; the
header holds the results, this script is how they were made; needs numpy and scipy).

  /usr/bin/python3 scripts/fit_qllc_math.py

Each fit: weighted least squares on 4000 Chebyshev nodes, the weights iterated towards minimax
(Lawson), the error weighted as the function's use needs it; then the coefficients are rounded to
float one at a time, lowest degree first, and the others refitted to the rounded ones.
  H  erfcx(a) (1 + a / sqrt 2) as a degree-10 polynomial in t = 1 / (1 + a / sqrt 2), a in [0.46, 10.6]
  P  erf(a) / a - 1 as a degree-5 polynomial in s = a^2, a in [0, 0.5]
  Q  erf(x / sqrt 2) / x as a degree-6 polynomial in s = x^2, x^2 in [0, 0.44]
"""
import numpy as np
from scipy.special import erf, erfcx


def fit(f, lo, hi, deg, relw, iters=40, n=4000):
    k = np.arange(n)
    v = np.concatenate([(lo + hi) / 2 + (hi - lo) / 2 * np.cos(np.pi * (k + 0.5) / n), [lo, hi]])
    y, w0 = f(v), 1 / np.abs(relw(v))
    a = np.vander(v, deg + 1, increasing=True)
    fixed = []
    for j in range(deg + 1):
        yy = y - (a[:, :j] @ np.array(fixed) if j else 0)
        b, w = a[:, j:], np.ones_like(v) / len(v)
        for _ in range(iters):
            ww = np.sqrt(w) * w0
            c, *_ = np.linalg.lstsq(b * ww[:, None], yy * ww, rcond=None)
            e = np.abs(b @ c - yy) * w0
            w = w * e
            w /= w.sum()
        fixed.append(float(np.float32(c[0])))
    c = np.array(fixed)
    return c, np.max(np.abs(a @ c - y) * w0)


def show(name, c, err):
    print(f"{name} (weighted max error {err:.3g}), lowest degree first:")
    print("  " + ", ".join("%.9ef" % x for x in c))


p = np.sqrt(0.5)
H = lambda t: erfcx((1 / t - 1) / p) / t
show("H", *fit(H, 1 / (1 + p * 10.6), 1 / (1 + p * 0.46), 10, relw=H))
P = lambda s: np.where(s > 0, erf(np.sqrt(s)) / np.sqrt(np.maximum(s, 1e-300)) - 1, 2 / np.sqrt(np.pi) - 1)
show("P", *fit(P, 0, 0.25, 5, relw=lambda s: 1 + P(s)))
Q = lambda s: np.where(s > 0, erf(np.sqrt(s / 2)) / np.sqrt(np.maximum(s, 1e-300)), np.sqrt(2 / np.pi))
show("Q", *fit(Q, 0, 0.44, 6, relw=lambda s: (1 - np.sqrt(s) * Q(s)) / np.sqrt(s + 1e-30)))
