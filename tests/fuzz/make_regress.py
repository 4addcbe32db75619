#!/usr/bin/env python3
"""Writes the hand-made regression inputs of tests/fuzz/regress/ (the fuzzers' own findings are the
files libFuzzer wrote, renamed; see docs/testing.md, "Fuzzing"). No dependencies: the ONNX protobuf
bytes are written by hand, as tests/ir/data/make_chain.py does.

    python3 tests/fuzz/make_regress.py      # from the repository's top directory
"""
import os
import struct


def varint(n):
    n &= (1 << 64) - 1
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def field(num, payload):
    return varint(num << 3 | 2) + varint(len(payload)) + payload


def vint(num, n):
    return varint(num << 3) + varint(n)


def tensor(name, data_type, dims, raw):
    return b"".join(vint(1, d) for d in dims) + vint(2, data_type) + field(8, name.encode()) + field(9, raw)


def value_info(name, elem, dims):
    shape = b"".join(field(1, vint(1, d)) for d in dims)
    return field(1, name.encode()) + field(2, field(1, vint(1, elem) + field(2, shape)))


def node(ins, outs, name, op, attrs=b""):
    return (b"".join(field(1, i.encode()) for i in ins) + b"".join(field(2, o.encode()) for o in outs) +
            field(3, name.encode()) + field(4, op.encode()) + attrs)


def model(nodes, inits, inputs, outputs, opset=13):
    g = (b"".join(field(1, n) for n in nodes) + field(2, b"g") + b"".join(field(5, t) for t in inits) +
         b"".join(field(11, v) for v in inputs) + b"".join(field(12, v) for v in outputs))
    return vint(1, 7) + field(7, g) + field(8, field(1, b"") + vint(2, opset))


INT64, FLOAT = 7, 1
here = os.path.join(os.path.dirname(os.path.abspath(__file__)), "regress")


def write(target, name, data):
    os.makedirs(os.path.join(here, target), exist_ok=True)
    with open(os.path.join(here, target, name), "wb") as f:
        f.write(data)


# ConstantOfShape of [2^40] floats: folding it allocated 4 TiB (now refused naming the node)
m = model([node(["shape"], ["big"], "cos", "ConstantOfShape"), node(["big"], ["y"], "relu", "Relu")],
          [tensor("shape", INT64, [1], struct.pack("<q", 1 << 40))], [], [value_info("y", FLOAT, [1 << 40])])
write("fuzz_onnx", "constant_of_shape_2p40.onnx", m)
write("fuzz_compile", "constant_of_shape_2p40.onnx", m)

# int64 constants folded by Add/Mul/Div past INT64_MAX (signed overflow, undefined behaviour before)
m = model([node(["a", "b"], ["s"], "add", "Add"), node(["a", "b"], ["p"], "mul", "Mul"),
           node(["m", "n"], ["q"], "div", "Div"), node(["s", "p"], ["t"], "sub", "Sub"),
           node(["t", "q"], ["shape"], "add2", "Add"), node(["x", "shape"], ["y"], "reshape", "Reshape")],
          [tensor("a", INT64, [1], struct.pack("<q", (1 << 63) - 1)), tensor("b", INT64, [1], struct.pack("<q", 2)),
           tensor("m", INT64, [1], struct.pack("<q", -(1 << 63))), tensor("n", INT64, [1], struct.pack("<q", -1))],
          [value_info("x", FLOAT, [4])], [value_info("y", FLOAT, [4])])
write("fuzz_onnx", "int64_fold_overflow.onnx", m)

# a Cast of float constants far outside int64 (1e30, NaN): a plain (int64_t) cast is undefined
m = model([node(["f"], ["i"], "cast", "Cast", field(5, field(1, b"to") + vint(3, INT64) + vint(20, 2))),
           node(["x", "i"], ["y"], "reshape", "Reshape")],
          [tensor("f", FLOAT, [1], struct.pack("<f", 1e30))], [value_info("x", FLOAT, [4])],
          [value_info("y", FLOAT, [4])])
write("fuzz_onnx", "cast_float_out_of_range.onnx", m)

# constant folding past the folding budget: a ConstantOfShape of just under 1 GiB of floats and four
# elementwise ops on it each folded another one (5 GiB and seconds; fuzz_onnx and fuzz_compile timed out
# on such inputs); now the first fold over the budget (64 MiB + 4 x the model's constants) is an error
n = (1 << 28) - 4
m = model([node(["shape"], ["c0"], "cos", "ConstantOfShape"), node(["c0", "c0"], ["c1"], "add", "Add"),
           node(["c1", "c0"], ["c2"], "mul", "Mul"), node(["c2", "c1"], ["c3"], "sub", "Sub"),
           node(["c3", "c2"], ["c4"], "div", "Div"), node(["x", "c4"], ["y"], "add_x", "Add")],
          [tensor("shape", INT64, [1], struct.pack("<q", n))], [value_info("x", FLOAT, [1])],
          [value_info("y", FLOAT, [n])])
write("fuzz_onnx", "fold_budget_5x1gib.onnx", m)
write("fuzz_compile", "fold_budget_5x1gib.onnx", m)

# a TensorProto claiming 2^31 floats that carries 64 bytes (was: 8 GiB allocated and zeroed first)
write("fuzz_tensor", "short_raw_data.pb", tensor("W", FLOAT, [1 << 31], bytes(64)))
# an INT8 TensorProto of 1.58e12 elements with no data (test_identity_opt's optional read as a tensor)
write("fuzz_tensor", "no_data_1p58e12.pb", tensor("opt_in", 3, [111, 112, 116, 95, 105, 110], b"")[:-2])

# 9 values of 2^24 bins: 1.2 GiB of histogram counters were allocated before the limit (2^27 counters)
write("fuzz_profile", "counters_over_limit.yaml",
      b"format: qllc-profile-1\ngraph_hash: \"0123456789abcdef\"\nbins: 16777216\nvalues:\n" +
      b"".join(b"  - {name: v%d, min: 0, max: 1, count: 0, range: 1, counts: {}}\n" % i for i in range(9)))

# a Constant whose value is an empty float tensor with no data field: memcpy from NULL (UBSan, found by
# the conformance suite under UBSan on test_resize_downsample_sizes_nearest_tf_half_pixel_for_nn)
empty = vint(1, 0) + vint(2, FLOAT) + field(8, b"e")
attr = field(1, b"value") + field(5, empty) + vint(20, 4)
m = model([node([], ["e"], "const", "Constant", field(5, attr)), node(["x"], ["y"], "relu", "Relu")],
          [], [value_info("x", FLOAT, [2])], [value_info("y", FLOAT, [2]), value_info("e", FLOAT, [0])])
write("fuzz_onnx", "empty_constant_tensor.onnx", m)
