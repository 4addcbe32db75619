#!/usr/bin/env python3
"""bench/resnet_blocks.py: cuts bench/ort's QDQ ResNet-18 into the pieces bench/resnet_blocks.sh times.

    resnet_blocks.py QDQ.onnx OUTDIR

Writes, with onnx.utils.Extractor (the nodes and initializers between the given values, unchanged):
  - pK.onnx (K = 0..8): the network from its input up to the end of residual block K-1 (p0: up to the
    max pool), the last value dequantized to float;
  - bK.onnx (K = 0..7): residual block K alone, from the float value its input quantizer reads to its
    dequantized output (so it runs its own input QuantizeLinear and output DequantizeLinear);
  - qK.onnx (K = 0..8): that quantize/dequantize pair alone on block K's input (q8: on the last
    block's output), to subtract from bK.
A block's time inside the network is taken as p(K+1) - pK, alone as bK - (qK + q(K+1)) / 2 (its own
quantize of the input and dequantize of the output, at about the pair's cost per element).
"""
import sys

import onnx
from onnx.utils import Extractor


def main():
    src, out = sys.argv[1], sys.argv[2]
    ex = Extractor(onnx.load(src))
    ins = ['/stem/stem.3/MaxPool_output_0'] + [f'/layers/layers.{k}/Relu_1_output_0' for k in range(8)]
    for k in range(9):  # prefixes
        onnx.save(ex.extract_model(['input'], [ins[k] + '_dq0']), f'{out}/p{k}.onnx')
    for k in range(8):  # blocks
        onnx.save(ex.extract_model([ins[k]], [ins[k + 1] + '_dq0']), f'{out}/b{k}.onnx')
    for k in range(9):  # quantize + dequantize alone
        onnx.save(ex.extract_model([ins[k]], [ins[k] + '_dq0']), f'{out}/q{k}.onnx')


if __name__ == '__main__':
    main()
