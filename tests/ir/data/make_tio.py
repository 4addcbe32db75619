#!/usr/bin/python3
"""Writes the reference tensor files tio_*.npy / tio_*.pb read by tests/ir/tensor_io_test.c.

Run from anywhere with Debian's python3-numpy and python3-onnx: /usr/bin/python3 make_tio.py
The outputs are committed; the tests do not need Python. The C test hard-codes the same values, so a
change here must be mirrored there.
"""
import os

import numpy as np
import onnx
from onnx import TensorProto, helper

HERE = os.path.dirname(os.path.abspath(__file__))


def path(name):
    return os.path.join(HERE, name)


def save(name, arr, version=None):
    with open(path(name), "wb") as f:
        np.lib.format.write_array(f, arr, version=version, allow_pickle=False)


def save_pb(name, t):
    with open(path(name), "wb") as f:
        f.write(t.SerializeToString())


# --- .npy, every dtype that is read ---
save("tio_f32.npy", (np.arange(6, dtype=np.float32).reshape(2, 3) * 0.5 - 1.0))
save("tio_f64.npy", np.array([1.5, -2.25, 1e-3], dtype=np.float64))
save("tio_i8.npy", np.array([-128, -1, 0, 127], dtype=np.int8))
save("tio_u8.npy", np.array([0, 1, 200, 255], dtype=np.uint8))
save("tio_i16.npy", np.array([[-32768, -2], [3, 32767]], dtype=np.int16))
save("tio_i32.npy", np.array([-2147483648, 7, 2147483647], dtype=np.int32))
save("tio_i64.npy", np.array([-(1 << 40), 5, (1 << 62) + 3], dtype=np.int64))
save("tio_bool.npy", np.array([True, False, True], dtype=np.bool_))
save("tio_scalar.npy", np.array(3.25, dtype=np.float32))
save("tio_empty.npy", np.zeros((0, 3), dtype=np.float32))
save("tio_rank4.npy", np.arange(24, dtype=np.float32).reshape(1, 2, 3, 4))
# --- header versions 2.0 and 3.0 ---
save("tio_v2.npy", np.array([[1, 2], [3, 4]], dtype=np.int32), version=(2, 0))
save("tio_v3.npy", np.array([0.25, -0.5], dtype=np.float32), version=(3, 0))
# --- not supported ---
save("tio_fortran.npy", np.asfortranarray(np.arange(6, dtype=np.float32).reshape(2, 3)))
save("tio_bigendian.npy", np.array([1.0, 2.0], dtype=">f4"))
save("tio_f16.npy", np.array([1.0, 2.0], dtype=np.float16))
# --- malformed ---
save("tio_trunc.npy", np.arange(10, dtype=np.float32))
with open(path("tio_trunc.npy"), "r+b") as f:
    f.truncate(os.path.getsize(path("tio_trunc.npy")) - 6)  # 40 data bytes -> 34
with open(path("tio_badheader.npy"), "wb") as f:
    hdr = b"{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3 }"
    hdr += b" " * (64 - 10 - len(hdr) - 1) + b"\n"
    f.write(b"\x93NUMPY\x01\x00" + len(hdr).to_bytes(2, "little") + hdr + b"\0" * 24)
with open(path("tio_shorthead.npy"), "wb") as f:
    f.write(b"\x93NUMPY\x01\x00\x40\x00{'descr'")  # says 64 header bytes, has 8

# --- ONNX TensorProto: raw_data and the typed fields ---
save_pb("tio_f32_raw.pb", helper.make_tensor("x_raw", TensorProto.FLOAT, [2, 2],
                                             np.array([1.0, -2.0, 0.5, 8.0], np.float32).tobytes(), raw=True))
save_pb("tio_f32_typed.pb", helper.make_tensor("x_typed", TensorProto.FLOAT, [3], [0.125, -7.0, 100.0]))
save_pb("tio_f64_typed.pb", helper.make_tensor("d", TensorProto.DOUBLE, [2], [2.5, -0.75]))
save_pb("tio_i8_typed.pb", helper.make_tensor("q", TensorProto.INT8, [4], [-128, -5, 0, 127]))
save_pb("tio_u8_typed.pb", helper.make_tensor("u", TensorProto.UINT8, [2], [7, 255]))
save_pb("tio_i16_typed.pb", helper.make_tensor("s", TensorProto.INT16, [2], [-300, 32767]))
save_pb("tio_i32_typed.pb", helper.make_tensor("i", TensorProto.INT32, [1, 3], [-1, 0, 123456]))
save_pb("tio_i64_typed.pb", helper.make_tensor("l", TensorProto.INT64, [2], [-(1 << 40), 9]))
save_pb("tio_bool_typed.pb", helper.make_tensor("b", TensorProto.BOOL, [3], [True, False, True]))
save_pb("tio_i64_raw.pb", helper.make_tensor("lr", TensorProto.INT64, [2],
                                             np.array([3, -4], np.int64).tobytes(), raw=True))
t = helper.make_tensor("short", TensorProto.FLOAT, [2, 3], np.zeros(6, np.float32).tobytes(), raw=True)
t.raw_data = np.zeros(5, np.float32).tobytes()
save_pb("tio_pb_short.pb", t)  # 20 bytes of raw_data for 6 floats
save_pb("tio_pb_f16.pb", helper.make_tensor("h", TensorProto.FLOAT16, [1], [1.0]))
with open(path("tio_garbage.pb"), "wb") as f:
    f.write(b"\xff\xff\xff\xff this is not a protobuf")
