"""Exports the ONNX graph onnxruntime-web runs in `npm run bench -- --peers`.

    make_onnx.py OUT.onnx [--dk 64]

Inputs q, k, v (T, d_k) float32 and an additive mask (T, T) (0 or -inf), T dynamic; output
out (T, d_k) = softmax(q k^T / sqrt(d_k) + mask) v: the lessons' formulation, exported by
torch.onnx (Debian's python3-torch; the onnx Python package is not needed).
"""

import argparse
import math

import torch


class Attention(torch.nn.Module):
    def __init__(self, dk):
        super().__init__()
        self.scale = 1.0 / math.sqrt(dk)

    def forward(self, q, k, v, mask):
        s = torch.matmul(q, k.transpose(0, 1)) * self.scale + mask
        return torch.matmul(torch.softmax(s, dim=-1), v)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--dk", type=int, default=64)
    a = ap.parse_args()
    t = 8
    x = torch.zeros(t, a.dk)
    mask = torch.zeros(t, t)
    dyn = {"q": {0: "T"}, "k": {0: "T"}, "v": {0: "T"}, "mask": {0: "T", 1: "T2"}, "out": {0: "T"}}
    torch.onnx.export(Attention(a.dk), (x, x, x, mask), a.out, input_names=["q", "k", "v", "mask"],
                      output_names=["out"], dynamic_axes=dyn, opset_version=17)


if __name__ == "__main__":
    main()
