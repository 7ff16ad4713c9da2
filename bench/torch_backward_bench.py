#!/usr/bin/python3
"""PyTorch autograd timing of the attention backward pass (bench/run.mjs drives it).

    env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE /usr/bin/python3 bench/torch_backward_bench.py \\
        --T 2048 --dk 64 --causal 1 --reps 5

The lesson's formulation in float32 on one thread (torch.set_num_threads(1)): scores =
Q K^T * scale, masked_fill(-inf) above the causal diagonal, softmax, @ V. The forward runs
outside the clock; "ms" is output.backward(dO) alone (dQ, dK, dV), after one warm-up.
Prints one JSON line per T: {"impl":"torch-bwd","T","dk","causal","ms":[...],"torch"}.
"""
import argparse
import json
import time

import torch


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--T", default="2048")
    ap.add_argument("--dk", type=int, default=64)
    ap.add_argument("--causal", type=int, default=1)
    ap.add_argument("--reps", type=int, default=3)
    a = ap.parse_args()
    torch.set_num_threads(1)
    g = torch.Generator().manual_seed(0)
    for t in [int(x) for x in a.T.split(",") if x]:
        q, k, v = (torch.randn(1, t, a.dk, generator=g).requires_grad_() for _ in range(3))
        dout = torch.randn(1, t, a.dk, generator=g)
        allowed = torch.ones(t, t, dtype=torch.bool)
        if a.causal:
            allowed = allowed.tril()

        def forward():
            s = (q @ k.transpose(-1, -2)) * (1.0 / a.dk ** 0.5)
            s = s.masked_fill(~allowed, float("-inf"))
            return torch.softmax(s, dim=-1) @ v

        ms = []
        for rep in range(a.reps + 1):  # the first is a warm-up
            out = forward()
            t0 = time.perf_counter()
            out.backward(dout)
            dt = (time.perf_counter() - t0) * 1e3
            q.grad = k.grad = v.grad = None
            if rep:
                ms.append(round(dt, 4))
        print(json.dumps({"impl": "torch-bwd", "T": t, "dk": a.dk, "causal": bool(a.causal),
                          "ms": ms, "torch": torch.__version__}), flush=True)


if __name__ == "__main__":
    main()
