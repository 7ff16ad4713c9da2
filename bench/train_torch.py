#!/usr/bin/python3
"""PyTorch eager reference for the training-step benchmark (bench/run.mjs --train).

One thread (torch.set_num_threads(1)); run with OPENBLAS_CORETYPE and OPENBLAS_L2_SIZE unset.
The model is the attention-only transformer the Train tab trains (tests/oracle/gen_model_fixtures.py
checks the same maths), float32, written the lesson's way (matmul, scale, masked_fill,
softmax, matmul). Per step, on one fixed batch: forward (loss), backward, AdamW; medians of
each phase after warm-up, printed as one JSON line per config.

    /usr/bin/python3 bench/train_torch.py --dmodel 64,32 --reps 50
"""

import argparse
import json
import time

import numpy as np
import torch


def make(V, T, L, H, D, seed):
    g = torch.Generator().manual_seed(seed)
    std = 1.0 / np.sqrt(D)
    p = {"embed": torch.randn(V, D, generator=g) * std, "pos": torch.randn(T, D, generator=g) * std,
         "unembed": torch.randn(D, V, generator=g) * std}
    for l in range(L):
        for k in ("wq", "wk", "wv", "wo"):
            p["%s%d" % (k, l)] = torch.randn(D, D, generator=g) * std
    for t in p.values():
        t.requires_grad_(True)
    return p


def loss_fn(p, tokens, mask, L, H, D):
    B, T = tokens.shape
    dh = D // H
    x = p["embed"][tokens] + p["pos"][:T]
    causal = torch.ones(T, T, dtype=torch.bool).tril()
    for l in range(L):
        q = (x @ p["wq%d" % l]).view(B, T, H, dh).transpose(1, 2)
        k = (x @ p["wk%d" % l]).view(B, T, H, dh).transpose(1, 2)
        v = (x @ p["wv%d" % l]).view(B, T, H, dh).transpose(1, 2)
        s = (q @ k.transpose(-1, -2)) / np.sqrt(dh)
        a = torch.softmax(s.masked_fill(~causal, float("-inf")), dim=-1)
        x = x + (a @ v).transpose(1, 2).reshape(B, T, D) @ p["wo%d" % l]
    logits = x @ p["unembed"]
    nll = torch.nn.functional.cross_entropy(logits[:, :-1].reshape(-1, logits.shape[-1]),
                                            tokens[:, 1:].reshape(-1), reduction="none")
    m = mask[:, 1:].reshape(-1)
    return (nll * m).sum() / m.sum()


def induction_batch(rng, B, T, V):
    n = T // 2
    tokens = np.zeros((B, T), dtype=np.int64)
    mask = np.zeros((B, T), dtype=np.float32)
    for b in range(B):
        L = int(rng.integers((n + 1) // 2, n + 1))
        d = rng.permutation(V)[:T - L]
        tokens[b] = np.concatenate([d, d[T - 2 * L:]])
        mask[b, T - L + 1:] = 1
    return torch.tensor(tokens), torch.tensor(mask)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--dmodel", default="64,32")
    ap.add_argument("--reps", type=int, default=50)
    ap.add_argument("--warmup", type=int, default=10)
    ap.add_argument("--batch", type=int, default=32)
    args = ap.parse_args()
    torch.set_num_threads(1)
    torch.set_default_dtype(torch.float32)
    V, T, L, H, B = 32, 32, 2, 2, args.batch
    for D in [int(x) for x in args.dmodel.split(",")]:
        p = make(V, T, L, H, D, 0)
        opt = torch.optim.AdamW(list(p.values()), lr=1e-2, betas=(0.9, 0.99), weight_decay=0.01)
        tokens, mask = induction_batch(np.random.default_rng(0), B, T, V)
        f, b, o = [], [], []
        for i in range(args.warmup + args.reps):
            t0 = time.perf_counter()
            loss = loss_fn(p, tokens, mask, L, H, D)
            t1 = time.perf_counter()
            opt.zero_grad(set_to_none=True)
            loss.backward()
            t2 = time.perf_counter()
            opt.step()
            t3 = time.perf_counter()
            if i >= args.warmup:
                f.append((t1 - t0) * 1e3)
                b.append((t2 - t1) * 1e3)
                o.append((t3 - t2) * 1e3)
        total = [x + y + z for x, y, z in zip(f, b, o)]
        print(json.dumps({"impl": "pytorch", "dModel": D, "batch": B, "forward": float(np.median(f)),
                          "backward": float(np.median(b)), "optimizer": float(np.median(o)),
                          "step": float(np.median(total)), "torch": torch.__version__,
                          "threads": torch.get_num_threads()}))


if __name__ == "__main__":
    main()
