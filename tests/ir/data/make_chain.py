#!/usr/bin/env python3
"""Writes a chain of N float nodes (alternating Relu and Sigmoid on [1, 64]) as an ONNX model, for
measuring compile time and memory against graph size (docs/limits.md):

    python3 tests/ir/data/make_chain.py N out.onnx

No dependencies: the protobuf bytes are written by hand (ModelProto with opset 13, one graph input
'x' and one output)."""
import struct
import sys


def varint(n):
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def field(num, payload):  # length-delimited field
    return varint(num << 3 | 2) + varint(len(payload)) + payload


def vint(num, n):  # varint field
    return varint(num << 3) + varint(n)


def s(x):
    return x.encode()


def value_info(name, dims):
    shape = b"".join(field(1, vint(1, d)) for d in dims)  # TensorShapeProto.dim { dim_value }
    tensor = vint(1, 1) + field(2, shape)  # elem_type FLOAT, shape
    return field(1, s(name)) + field(2, field(1, tensor))  # name, type { tensor_type }


def main():
    n, out = int(sys.argv[1]), sys.argv[2]
    nodes = []
    prev = "x"
    for i in range(n):
        op = "Relu" if i % 2 == 0 else "Sigmoid"
        cur = "y" if i == n - 1 else "v%d" % i
        nodes.append(field(1, field(1, s(prev)) + field(2, s(cur)) + field(3, s("n%d" % i)) + field(4, s(op))))
        prev = cur
    graph = b"".join(nodes) + field(2, s("chain")) + field(11, value_info("x", [1, 64])) + field(12, value_info("y", [1, 64]))
    model = vint(1, 7) + field(2, s("make_chain.py")) + field(7, graph) + field(8, field(1, b"") + vint(2, 13))
    with open(out, "wb") as f:
        f.write(model)


if __name__ == "__main__":
    main()
