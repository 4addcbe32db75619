#!/usr/bin/python3
"""Turns a float ONNX CNN (Conv, Relu, Add, MaxPool, GlobalAveragePool, Flatten, Gemm: the ResNet-18 of
bench/make_resnet18.py) into a QDQ model in onnxruntime's own format, for bench/ort/run.sh:

  make_qdq.py instrument FLOAT.onnx OUT.onnx          the float model with every node output a graph output
                                                      (ort.js calib runs it and writes the ranges)
  make_qdq.py qdq FLOAT.onnx RANGES.json OUT.onnx     the QDQ model

The QDQ model, as onnxruntime's quantizer writes it (QuantFormat.QDQ, activations QUInt8, weights QInt8,
per_channel=True): the input and every activation that is not read only by a Relu is followed by
QuantizeLinear (uint8, asymmetric from the calibrated [min, max] widened to contain 0) and one
DequantizeLinear per consumer; Conv/Gemm weights are int8, symmetric, one scale per output channel,
behind a DequantizeLinear (axis 0); biases are int32 at scale s_x * s_w[c] behind a DequantizeLinear;
MaxPool and Flatten keep their input's parameters. Relu stays between Conv/Add and the QuantizeLinear
(both runtimes fold it into the clamp).
"""
import json
import sys

import numpy as np
import onnx
from onnx import helper, numpy_helper as nh, TensorProto


def instrument(src, dst):
    m = onnx.load(src)
    have = {o.name for o in m.graph.output}
    for n in m.graph.node:
        for o in n.output:
            if o not in have:
                m.graph.output.append(helper.make_tensor_value_info(o, TensorProto.FLOAT, None))
    onnx.save(m, dst)


def uint8_params(lo, hi):
    lo, hi = min(lo, 0.0), max(hi, 0.0)
    s = np.float32((hi - lo) / 255.0) if hi > lo else np.float32(1.0)
    z = int(np.clip(np.round(-lo / s), 0, 255))
    return s, z


def qdq(src, ranges_path, dst):
    m = onnx.load(src)
    g = m.graph
    ranges = json.load(open(ranges_path))
    init = {i.name: nh.to_array(i) for i in g.initializer}
    consumers = {}
    for n in g.node:
        for i in n.input:
            consumers.setdefault(i, []).append(n)
    producer = {o: n for n in g.node for o in n.output}
    outputs = {o.name for o in g.output}
    params = {}
    # parameters per activation; MaxPool and Flatten inherit their input's
    for name in ["input"] + [o for n in g.node for o in n.output]:
        p = producer.get(name)
        if p is not None and p.op_type in ("MaxPool", "Flatten"):
            params[name] = params[p.input[0]]
        else:
            params[name] = uint8_params(*ranges[name])
    new_inits, nodes = [], []

    def const(name, arr):
        new_inits.append(nh.from_array(arr, name))
        return name

    quantized = set()
    for name in params:
        users = consumers.get(name, [])
        if users and all(u.op_type == "Relu" for u in users):
            continue  # the Relu's output is quantized instead
        quantized.add(name)
    rename = {}  # (consumer node id, input name) -> dq output
    qnodes = []
    for name in sorted(quantized):
        s, z = params[name]
        sn, zn = const(name + "_scale", np.array(s, np.float32)), const(name + "_zp", np.array(z, np.uint8))
        src_name = name + "_f" if name in outputs else name
        qnodes.append(helper.make_node("QuantizeLinear", [src_name, sn, zn], [name + "_q"], name=name + "_QuantizeLinear"))
        users = consumers.get(name, [])
        for k, u in enumerate(users):
            dqn = "%s_dq%d" % (name, k)
            qnodes.append(helper.make_node("DequantizeLinear", [name + "_q", sn, zn], [dqn], name=dqn + "_DequantizeLinear"))
            rename[(id(u), name)] = dqn
        if name in outputs:
            qnodes.append(helper.make_node("DequantizeLinear", [name + "_q", sn, zn], [name], name=name + "_out_DequantizeLinear"))
    for n in g.node:
        ins = [rename.get((id(n), i), i) for i in n.input]
        outs = [o + "_f" if o in outputs and o in quantized else o for o in n.output]
        if n.op_type in ("Conv", "Gemm"):
            w = init[n.input[1]].astype(np.float32)
            if n.op_type == "Gemm" and not any(a.name == "transB" and a.i for a in n.attribute):
                raise SystemExit("Gemm without transB is not handled")
            C = w.shape[0]
            sw = (np.abs(w.reshape(C, -1)).max(1) / 127.0).astype(np.float32)
            sw[sw == 0] = 1.0
            wq = np.clip(np.rint(w / sw.reshape((C,) + (1,) * (w.ndim - 1))), -127, 127).astype(np.int8)
            wn = n.input[1]
            const(wn + "_q", wq), const(wn + "_scale", sw), const(wn + "_zp", np.zeros(C, np.int8))
            nodes.append(helper.make_node("DequantizeLinear", [wn + "_q", wn + "_scale", wn + "_zp"], [wn + "_dq"], axis=0,
                                          name=wn + "_DequantizeLinear"))
            ins[1] = wn + "_dq"
            if len(n.input) > 2:
                b = init[n.input[2]].astype(np.float64)
                sb = (np.float64(params[n.input[0]][0]) * sw.astype(np.float64)).astype(np.float32)
                bq = np.clip(np.rint(b / sb), -2**31, 2**31 - 1).astype(np.int32)
                bn = n.input[2]
                const(bn + "_q", bq), const(bn + "_scale", sb), const(bn + "_zp", np.zeros(C, np.int32))
                nodes.append(helper.make_node("DequantizeLinear", [bn + "_q", bn + "_scale", bn + "_zp"], [bn + "_dq"], axis=0,
                                              name=bn + "_DequantizeLinear"))
                ins[2] = bn + "_dq"
        nodes.append(helper.make_node(n.op_type, ins, outs, name=n.name or None, domain=n.domain or None,
                                      **{a.name: helper.get_attribute_value(a) for a in n.attribute}))
    used = {i for n in nodes + qnodes for i in n.input}
    keep = [i for i in g.initializer if i.name in used and i.name not in {n.input[1] for n in g.node if n.op_type in ("Conv", "Gemm")}]
    graph = helper.make_graph(nodes + qnodes, g.name + "_qdq", list(g.input), list(g.output), keep + new_inits)
    # topological order: QuantizeLinear right after its producer
    out = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)], producer_name="bench/ort/make_qdq.py")
    order, done, pending = [], {i.name for i in graph.input} | {i.name for i in graph.initializer}, list(graph.node)
    while pending:
        rest = []
        for n in pending:
            if all(i in done or i == "" for i in n.input):
                order.append(n)
                done.update(n.output)
            else:
                rest.append(n)
        if len(rest) == len(pending):
            raise SystemExit("cycle or missing input in the QDQ graph")
        pending = rest
    del out.graph.node[:]
    out.graph.node.extend(order)
    onnx.checker.check_model(out)
    onnx.save(out, dst)
    print("wrote %s: %d nodes, %d quantized activations" % (dst, len(order), len(quantized)))


if __name__ == "__main__":
    if len(sys.argv) == 4 and sys.argv[1] == "instrument":
        instrument(sys.argv[2], sys.argv[3])
    elif len(sys.argv) == 5 and sys.argv[1] == "qdq":
        qdq(sys.argv[2], sys.argv[3], sys.argv[4])
    else:
        print(__doc__.strip(), file=sys.stderr)
        sys.exit(2)
