#!/usr/bin/env python3
"""Generates the QLinearConv / QLinearMatMul models with CONSTANT parameters for qlinear_const_test.c
(tests/qdq/data/qlc_*.onnx and their .pb inputs/outputs). qllc compiles these to the quantizer's fused
kernels (requantization by an integer multiplier made at compile time) instead of the run-time float
path, so the references here follow the ONNX/onnxruntime definition and the test reports how many
outputs differ (a half-way case may round the other way):

  qlc_conv:     x u8 [1,4,7,7] (graph input), w int8 [6,4,3,3] per-channel scales, B int32, pads 1,
                strides 2, y u8. Reference: acc in int32, y = sat(rne(float32(acc) * M[c]) + y_z) with
                M[c] = float32(x_s * w_s[c] / y_s) (onnxruntime's MlasRequantizeOutput).
  qlc_mm:       a u8 [3,2,16] (graph input) x b int8 [16,8] constant, per-column b scales, y u8.
  qlc_mm2d_act, qlc_mm3d_act: the ONNX backend tests test_qlinearmatmul_2D/3D with their scales and zero
                points made initializers (a and b stay graph inputs): outputs are the test's own.
Run: /usr/bin/python3 tests/qdq/make_qlinear_const.py (needs python3-onnx, numpy and the onnx test data;
not needed by the test)."""
import os
import numpy as np
import onnx
from onnx import helper, numpy_helper as nh, TensorProto

rng = np.random.default_rng(66)
out = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data")
NODE = "/usr/share/libonnx-testdata/data/node"


def save(model, name, ins, outs):
    onnx.checker.check_model(model)
    onnx.save(model, os.path.join(out, name + ".onnx"))
    for k, a in enumerate(ins):
        onnx.save_tensor(nh.from_array(a), os.path.join(out, "%s_input_%d.pb" % (name, k)))
    for k, a in enumerate(outs):
        onnx.save_tensor(nh.from_array(a), os.path.join(out, "%s_output_%d.pb" % (name, k)))


def requant(acc, M, zy):
    """onnxruntime: float32 product, round half to even, add the zero point, saturate to uint8."""
    v = np.rint(acc.astype(np.float32) * M.astype(np.float32)) + zy
    return np.clip(v, 0, 255).astype(np.uint8)


# ---- QLinearConv ----
xs, xz, ys, yz = np.float32(0.021), np.uint8(131), np.float32(0.047), np.uint8(120)
w = rng.integers(-127, 128, (6, 4, 3, 3)).astype(np.int8)
ws = rng.uniform(0.002, 0.01, 6).astype(np.float32)
B = rng.integers(-3000, 3000, 6).astype(np.int32)
inits = [nh.from_array(np.array(xs), "x_s"), nh.from_array(np.array(xz), "x_z"), nh.from_array(w, "w"),
         nh.from_array(ws, "w_s"), nh.from_array(np.zeros(6, np.int8), "w_z"), nh.from_array(np.array(ys), "y_s"),
         nh.from_array(np.array(yz), "y_z"), nh.from_array(B, "B")]
node = helper.make_node("QLinearConv", ["x", "x_s", "x_z", "w", "w_s", "w_z", "y_s", "y_z", "B"], ["y"], name="qconv",
                        pads=[1, 1, 1, 1], strides=[2, 2], kernel_shape=[3, 3])
g = helper.make_graph([node], "qlc_conv", [helper.make_tensor_value_info("x", TensorProto.UINT8, [1, 4, 7, 7])],
                      [helper.make_tensor_value_info("y", TensorProto.UINT8, [1, 6, 4, 4])], inits)
m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)], producer_name="tests/qdq/make_qlinear_const.py")
ins, outs = [], []
M = (np.float32(xs) * ws / np.float32(ys)).astype(np.float32)
for k in range(4):
    x = rng.integers(0, 256, (1, 4, 7, 7)).astype(np.uint8)
    xp = np.pad(x.astype(np.int32) - int(xz), ((0, 0), (0, 0), (1, 1), (1, 1)))
    acc = np.zeros((6, 4, 4), np.int32)
    for i in range(4):
        for j in range(4):
            acc[:, i, j] = np.tensordot(w.astype(np.int32), xp[0, :, 2 * i:2 * i + 3, 2 * j:2 * j + 3], axes=([1, 2, 3], [0, 1, 2]))
    acc += B.reshape(6, 1, 1)
    ins.append(x), outs.append(requant(acc, M.reshape(6, 1, 1), int(yz)).reshape(1, 6, 4, 4))
# several inputs along the leading axis would change the model's shape: one file per sample
for k in range(4):
    save(m, "qlc_conv", [ins[k]], [outs[k]]) if k == 0 else None
    onnx.save_tensor(nh.from_array(ins[k]), os.path.join(out, "qlc_conv_input_%d.pb" % k))
    onnx.save_tensor(nh.from_array(outs[k]), os.path.join(out, "qlc_conv_output_%d.pb" % k))

# ---- QLinearMatMul with a constant B ----
as_, az = np.float32(0.013), np.uint8(100)
b = rng.integers(-127, 128, (16, 8)).astype(np.int8)
bs = rng.uniform(0.004, 0.012, 8).astype(np.float32)
inits = [nh.from_array(np.array(as_), "a_s"), nh.from_array(np.array(az), "a_z"), nh.from_array(b, "b"),
         nh.from_array(bs, "b_s"), nh.from_array(np.zeros(8, np.int8), "b_z"), nh.from_array(np.array(ys), "y_s"),
         nh.from_array(np.array(yz), "y_z")]
node = helper.make_node("QLinearMatMul", ["a", "a_s", "a_z", "b", "b_s", "b_z", "y_s", "y_z"], ["y"], name="qmm")
g = helper.make_graph([node], "qlc_mm", [helper.make_tensor_value_info("a", TensorProto.UINT8, [3, 2, 16])],
                      [helper.make_tensor_value_info("y", TensorProto.UINT8, [3, 2, 8])], inits)
m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)], producer_name="tests/qdq/make_qlinear_const.py")
M = (np.float32(as_) * bs / np.float32(ys)).astype(np.float32)
for k in range(4):
    a = rng.integers(0, 256, (3, 2, 16)).astype(np.uint8)
    acc = (a.astype(np.int32) - int(az)) @ b.astype(np.int32)
    y = requant(acc, M, int(yz))
    if k == 0:
        save(m, "qlc_mm", [a], [y])
    onnx.save_tensor(nh.from_array(a), os.path.join(out, "qlc_mm_input_%d.pb" % k))
    onnx.save_tensor(nh.from_array(y), os.path.join(out, "qlc_mm_output_%d.pb" % k))

# ---- the backend tests with constant parameters ----
for t, name in (("test_qlinearmatmul_2D", "qlc_mm2d_act"), ("test_qlinearmatmul_3D", "qlc_mm3d_act")):
    src = onnx.load(os.path.join(NODE, t, "model.onnx"))
    data = []
    for k in range(8):
        tp = onnx.TensorProto()
        tp.ParseFromString(open(os.path.join(NODE, t, "test_data_set_0", "input_%d.pb" % k), "rb").read())
        data.append(nh.to_array(tp))
    tp = onnx.TensorProto()
    tp.ParseFromString(open(os.path.join(NODE, t, "test_data_set_0", "output_0.pb"), "rb").read())
    want = nh.to_array(tp)
    keep = {0, 3}
    inputs = [i for k, i in enumerate(src.graph.input) if k in keep]
    inits = [nh.from_array(data[k], src.graph.input[k].name) for k in range(8) if k not in keep]
    g = helper.make_graph(list(src.graph.node), name, inputs, list(src.graph.output), inits)
    m = helper.make_model(g, opset_imports=list(src.opset_import), producer_name="tests/qdq/make_qlinear_const.py")
    save(m, name, [data[0], data[3]], [want])
print("ok")
