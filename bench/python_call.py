"""bench/python_call.py: the time of one Jit call from Python (the qllc package, docs/python.md) on the
sample model, float and int8, median over the 360 test images; compare with the C API's time for the same
runs (examples/digits_demo). Not a test: it prints.

    cmake --build build && PYTHONPATH=build/python /usr/bin/python3 bench/python_call.py
    build/examples/digits_demo models/digits/digits.onnx models/digits/test_x.npy models/digits/test_y.npy --quiet
"""
import os
import time

import numpy as np

import qllc

here = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "models", "digits")
m = qllc.load(os.path.join(here, "digits.onnx"))
prof = m.profile(np.load(os.path.join(here, "calib_x.npy")))
xs = np.load(os.path.join(here, "test_x.npy"))
for prec in ("float", "int8"):
    jit = m.jit() if prec == "float" else m.jit(precision=prec, profile=prof)
    times = []
    for x in xs:
        x = x[None]
        t0 = time.perf_counter()
        jit(x)
        times.append(time.perf_counter() - t0)
    print(f"{prec:5}  jit(x) from Python: {np.median(times) * 1e6:.1f} us (median of {len(times)})")
