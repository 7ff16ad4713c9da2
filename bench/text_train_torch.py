#!/usr/bin/python3
"""PyTorch eager peer of the text model's trainer (bench/text_train.mjs drives it).

The shipped text model (scripts/text-model/ship.sh; the model of docs/train-api.md), its sizes
given as flags by bench/text_train.mjs (V, d_model, heads, layers, T, batch, peak lr: today 256
SentencePiece pieces, 96, 2, 2, 128, 16, 5e-3), 'shortformer' positions (P added only to the input
of W_Q and W_K; the residual stream starts from the token embedding alone), final LayerNorm
(eps 1e-5), softmax attention scaled 1/sqrt(d_h), untied unembedding, no biases or MLP. One step =
forward, mean cross-entropy over every target t >= 1, backward, global-norm clipping to 1.0,
torch.optim.AdamW (lr --lr, betas (0.9, 0.99), eps 1e-8, weight decay 0.01), float32, written the
plain way (matmul, scale, masked_fill, softmax, matmul). The lr stays at its peak: attn_train_text's
schedule changes a number, not the work.

Batches: rows of real tokens (scripts/text-model/spm.py DIR writes DIR/train.u16) at random
offsets, drawn before the clock (the native runs' repeated passages change ids, not work). Warm-up steps, then `--steps` steps timed one by one
(time.perf_counter around zero_grad .. opt.step()). tokensPerSecond = steps * B * T / their summed
time, as attn_train_text's training.tokensPerSecond counts its steps.

Before timing, the step-0 loss is checked against a float64 NumPy forward of the same weights and
batch, written separately from the formulas (relative difference <= 1e-5), so both compute the
same model. Prints one JSON line:
{threads, steps, tokensPerSecond, stepMsMedian, ...}.

    /usr/bin/python3 bench/text_train_torch.py --tokens build/text-model/spm256/train.u16 --threads 1
"""
import argparse
import json
import time

import numpy as np
import torch

# The shipped config (scripts/text-model/ship.sh), set from the flags in main(): V the tokenizer's
# pieces, D d_model, H heads, L layers, T seq-len, B batch.
V, D, H, L, T, B = 256, 96, 2, 2, 128, 16
DH = D // H


def make_params(seed):
    """Every matrix ~ N(0, 1/D) (docs/train-api.md's initStd default), LayerNorm gain 1, bias 0."""
    g = torch.Generator().manual_seed(seed)
    std = 1.0 / np.sqrt(D)
    p = {"embed": torch.randn(V, D, generator=g) * std, "pos": torch.randn(T, D, generator=g) * std}
    for l in range(L):
        for k in ("wq", "wk", "wv", "wo"):
            p["%s%d" % (k, l)] = torch.randn(D, D, generator=g) * std
    p["ln_gain"] = torch.ones(D)
    p["ln_bias"] = torch.zeros(D)
    p["unembed"] = torch.randn(D, V, generator=g) * std
    for t in p.values():
        t.requires_grad_(True)
    return p


def loss_torch(p, tokens, causal):
    """tokens: (B, T) int64 -> mean cross-entropy of tokens[:, 1:] given the prefix."""
    b, t = tokens.shape
    x = p["embed"][tokens]  # (B, T, D): no positions in the residual stream
    for l in range(L):
        xp = x + p["pos"][:t]  # shortformer: P only on the way into W_Q and W_K
        q = (xp @ p["wq%d" % l]).view(b, t, H, DH).transpose(1, 2)  # (B, H, T, d_h)
        k = (xp @ p["wk%d" % l]).view(b, t, H, DH).transpose(1, 2)
        v = (x @ p["wv%d" % l]).view(b, t, H, DH).transpose(1, 2)
        s = (q @ k.transpose(-1, -2)) / np.sqrt(DH)  # (B, H, T, T)
        a = torch.softmax(s.masked_fill(~causal, float("-inf")), dim=-1)
        x = x + (a @ v).transpose(1, 2).reshape(b, t, D) @ p["wo%d" % l]
    y = torch.nn.functional.layer_norm(x, (D,), p["ln_gain"], p["ln_bias"], eps=1e-5)
    logits = y @ p["unembed"]  # (B, T, V)
    return torch.nn.functional.cross_entropy(logits[:, :-1].reshape(-1, V), tokens[:, 1:].reshape(-1))


def loss_numpy(w, tokens):
    """The same model in float64 NumPy, from the formulas (w: name -> float64 array)."""
    b, t = tokens.shape
    x = w["embed"][tokens]
    allowed = np.tril(np.ones((t, t), dtype=bool))
    for l in range(L):
        xp = x + w["pos"][:t]
        out = np.zeros_like(x)
        for h in range(H):
            c = slice(h * DH, (h + 1) * DH)
            q, k, v = xp @ w["wq%d" % l][:, c], xp @ w["wk%d" % l][:, c], x @ w["wv%d" % l][:, c]
            s = np.einsum("bid,bjd->bij", q, k) / np.sqrt(DH)
            s = np.where(allowed, s, -np.inf)
            e = np.exp(s - s.max(-1, keepdims=True))
            out += np.einsum("bij,bjd->bid", e / e.sum(-1, keepdims=True), v) @ w["wo%d" % l][c, :]
        x = x + out
    mu = x.mean(-1, keepdims=True)
    var = ((x - mu) ** 2).mean(-1, keepdims=True)
    logits = ((x - mu) / np.sqrt(var + 1e-5) * w["ln_gain"] + w["ln_bias"]) @ w["unembed"]
    z = logits[:, :-1]
    m = z.max(-1, keepdims=True)
    logp = z - m - np.log(np.exp(z - m).sum(-1, keepdims=True))
    tgt = tokens[:, 1:]
    return -np.take_along_axis(logp, tgt[..., None], -1).mean()


def blas_library():
    """The BLAS torch's process loaded (the reference BLAS and OpenBLAS differ several-fold)."""
    with open("/proc/self/maps") as f:
        libs = {line.split()[-1] for line in f if "blas" in line.split()[-1]}
    return sorted(libs)


def main():
    global V, D, H, L, T, B, DH
    ap = argparse.ArgumentParser()
    ap.add_argument("--tokens", required=True, help="train.u16 of spm.py (or attn_train_text --dump-tokens)")
    ap.add_argument("--vocab", type=int, default=V)
    ap.add_argument("--d-model", type=int, default=D)
    ap.add_argument("--heads", type=int, default=H)
    ap.add_argument("--layers", type=int, default=L)
    ap.add_argument("--seq-len", type=int, default=T)
    ap.add_argument("--batch", type=int, default=B)
    ap.add_argument("--lr", type=float, default=5e-3)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--steps", type=int, default=200, help="timed steps")
    ap.add_argument("--warmup", type=int, default=10)
    ap.add_argument("--seed", type=int, default=0)
    a = ap.parse_args()
    V, D, H, L, T, B = a.vocab, a.d_model, a.heads, a.layers, a.seq_len, a.batch
    DH = D // H
    torch.set_num_threads(a.threads)
    stream = np.fromfile(a.tokens, dtype="<u2").astype(np.int64)
    if stream.size < T or stream.max() >= V:
        raise SystemExit("%s: not a token stream of a %d-piece vocabulary" % (a.tokens, V))
    rng = np.random.default_rng(a.seed)
    n = a.warmup + a.steps
    starts = rng.integers(0, stream.size - T + 1, size=(n, B))
    batches = torch.from_numpy(stream[starts[..., None] + np.arange(T)])  # (n, B, T)

    p = make_params(a.seed)
    causal = torch.ones(T, T, dtype=torch.bool).tril()
    w64 = {k: v.detach().double().numpy() for k, v in p.items()}
    l0 = float(loss_torch(p, batches[0], causal))
    ref = float(loss_numpy(w64, batches[0].numpy()))
    assert abs(l0 - ref) <= 1e-5 * ref, "torch loss %.8f != NumPy float64 %.8f" % (l0, ref)

    params = list(p.values())
    opt = torch.optim.AdamW(params, lr=a.lr, betas=(0.9, 0.99), eps=1e-8, weight_decay=0.01)
    ms, losses = [], []
    for i in range(n):
        t0 = time.perf_counter()
        opt.zero_grad(set_to_none=True)
        loss = loss_torch(p, batches[i], causal)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(params, 1.0)
        opt.step()
        t1 = time.perf_counter()
        if i >= a.warmup:
            ms.append((t1 - t0) * 1e3)
        losses.append(float(loss))
    print(json.dumps({"impl": "text-torch", "threads": torch.get_num_threads(), "steps": a.steps,
                      "tokensPerSecond": a.steps * B * T / (sum(ms) / 1e3),
                      "stepMsMedian": float(np.median(ms)), "lossStep0": l0, "lossStep0NumPy": ref,
                      "lossLast": losses[-1], "torch": torch.__version__, "blas": blas_library()}))


if __name__ == "__main__":
    main()
