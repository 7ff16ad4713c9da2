"""PyTorch one thread in `npm run bench -- --peers`: causal attention forward on the
shared inputs (bench/inputs.mjs writes bench/out/inputs-T*.bin), the lessons' formulation
(matmul, scale, masked_fill with a precomputed mask, softmax, matmul), float32, CPU.

    torch_bench.py --T 64,256 --reps 10 --mode b2b|interleaved [--dir bench/out] [--dk 64]

b2b: the same call repeated back to back (PyTorch's best case: caches warm, its allocator and
     glibc keep the freed blocks, no page faults).
interleaved: each timed call follows other work, as in an app: the calls cycle through every T
     and a 32 MiB buffer is written between two calls.
Prints one JSON line per T: {"impl","mode","T","ms":[...],"maxAbsError","torch","threads"}.
"""

import argparse
import json
import math
import os
import time

import numpy as np
import torch


def attention(q, k, v, mask, scale):
    s = torch.matmul(q, k.transpose(0, 1)) * scale
    s = s.masked_fill(mask, float("-inf"))
    return torch.matmul(torch.softmax(s, dim=-1), v)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--T", default="64,256")
    ap.add_argument("--reps", type=int, default=10)
    ap.add_argument("--mode", default="b2b")
    ap.add_argument("--dir", default=os.path.join(os.path.dirname(__file__), "out"))
    ap.add_argument("--dk", type=int, default=64)
    a = ap.parse_args()
    torch.set_num_threads(1)
    d = a.dk
    cases = []
    for t in [int(x) for x in a.T.split(",") if x]:
        raw = np.fromfile(os.path.join(a.dir, f"inputs-T{t}-d{d}.bin"), dtype="<f4")
        q, k, v = (torch.from_numpy(raw[i * t * d:(i + 1) * t * d].reshape(t, d).copy()) for i in range(3))
        with open(os.path.join(a.dir, f"ref-T{t}-d{d}.json")) as f:
            ref = json.load(f)
        mask = torch.triu(torch.ones(t, t, dtype=torch.bool), diagonal=1)
        cases.append({"T": t, "q": q, "k": k, "v": v, "mask": mask, "ref": ref, "ms": []})
    scale = 1.0 / math.sqrt(d)
    other = np.empty(32 << 18, dtype=np.float32)  # 32 MiB of "other work"
    with torch.no_grad():
        for _ in range(2):  # warm-up
            for c in cases:
                attention(c["q"], c["k"], c["v"], c["mask"], scale)
        if a.mode == "b2b":
            for c in cases:
                for _ in range(a.reps):
                    t0 = time.perf_counter()
                    y = attention(c["q"], c["k"], c["v"], c["mask"], scale)
                    c["ms"].append((time.perf_counter() - t0) * 1e3)
                c["y"] = y
        else:
            for r in range(a.reps):
                for c in cases:
                    other.fill(r)
                    t0 = time.perf_counter()
                    y = attention(c["q"], c["k"], c["v"], c["mask"], scale)
                    c["ms"].append((time.perf_counter() - t0) * 1e3)
                    c["y"] = y
    for c in cases:
        y = c["y"].numpy().astype(np.float64)
        rows, ref = c["ref"]["rows"], np.array(c["ref"]["ref"])
        err = float(np.max(np.abs(y[rows] - ref)))
        print(json.dumps({"impl": "torch", "mode": a.mode, "T": c["T"], "ms": c["ms"], "maxAbsError": err,
                          "torch": torch.__version__, "threads": torch.get_num_threads()}), flush=True)


if __name__ == "__main__":
    main()
