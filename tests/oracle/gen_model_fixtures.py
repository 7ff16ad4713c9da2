#!/usr/bin/python3
"""PyTorch autograd oracle for the training core: writes tests/fixtures/model.json.

    /usr/bin/python3 tests/oracle/gen_model_fixtures.py           # rewrite the fixture
    /usr/bin/python3 tests/oracle/gen_model_fixtures.py --check   # regenerate in memory, compare,
                                                                  # exit 1 if the file differs

An independent implementation of the model specified in docs/train-api.md, written from that text (not from the
C++): token embedding, optional learned positional embedding, attention-only layers with
causal multi-head attention (GQA: query head h reads K/V head h // (H / H_kv)), residual
stream, optional final LayerNorm (eps 1e-5), untied unembedding, next-token cross-entropy
averaged over the (b, t >= 1) with lossMask[b, t] = 1. float64 throughout; torch.autograd
gives every parameter gradient; torch.optim.AdamW and torch.nn.utils.clip_grad_norm_ give
the optimiser steps. Inputs are float32 values (stored exactly) drawn with
numpy.random.default_rng(crc32(case name)).

Families:
  grad    loss and every parameter gradient (random weights, tokens, loss mask)
  adamw   two AdamW steps on one batch (loss, grad norm, parameters after each step)
  interp  pattern scores, K-composition, ablation losses, loss and accuracy
  variants  as grad, for the attention variants: normalizer softmax1 / sigmoid (+ sigmoidBias) /
          relu / linear, positional rope / alibi, qkNorm (their definitions: docs/train-api.md)
  shortformer  as grad (and the first sequence's weights), positional 'shortformer': the table P
          is added to the input of W_Q and W_K in every layer, never to x_0 nor to W_V's input
"""

import argparse
import json
import os
import sys

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gen_fixtures import FIXTURES, _same, case_rng, f32_list, f64_list, to_json  # noqa: E402

torch.set_default_dtype(torch.float64)


def f32(rng, shape, std):
    return (rng.normal(size=shape) * std).astype(np.float32)


def make_params(rng, cfg, std):
    V, T, D, H, Hkv = cfg["vocab"], cfg["seqLen"], cfg["dModel"], cfg["heads"], cfg["kvHeads"]
    dh = D // H
    p = {"embed": f32(rng, (V, D), std),
         "pos": f32(rng, (T, D), std) if cfg["positional"] in ("learned", "shortformer") else None,
         "layers": []}
    for _ in range(cfg["layers"]):
        p["layers"].append({"wq": f32(rng, (D, H * dh), std), "wk": f32(rng, (D, Hkv * dh), std),
                            "wv": f32(rng, (D, Hkv * dh), std), "wo": f32(rng, (H * dh, D), std)})
    if cfg["layerNorm"]:
        p["lnGain"] = (1 + 0.2 * rng.normal(size=D)).astype(np.float32)
        p["lnBias"] = (0.2 * rng.normal(size=D)).astype(np.float32)
    else:
        p["lnGain"] = p["lnBias"] = None
    p["unembed"] = f32(rng, (D, V), std)
    return p


def to_torch(p):
    t = lambda a: None if a is None else torch.tensor(a.astype(np.float64), requires_grad=True)  # noqa: E731
    return {"embed": t(p["embed"]), "pos": t(p["pos"]),
            "layers": [{k: t(v) for k, v in L.items()} for L in p["layers"]],
            "lnGain": t(p["lnGain"]), "lnBias": t(p["lnBias"]), "unembed": t(p["unembed"])}


def flat_tensors(tp):
    """Parameters in the documented order: embed, pos, per layer wq wk wv wo, lnGain, lnBias, unembed."""
    out = [tp["embed"]]
    if tp["pos"] is not None:
        out.append(tp["pos"])
    for L in tp["layers"]:
        out += [L["wq"], L["wk"], L["wv"], L["wo"]]
    if tp["lnGain"] is not None:
        out += [tp["lnGain"], tp["lnBias"]]
    out.append(tp["unembed"])
    return out


def alibi_slopes(n_heads):
    """Press et al.'s slopes: for a power of two n, 2^(-8/n), 2^(-16/n), ..., 2^(-8); otherwise
    those of the closest lower power of two, then every other slope of twice that power."""
    def pow2(n):
        return [2.0 ** (-8.0 * (h + 1) / n) for h in range(n)]
    n = 2 ** int(np.floor(np.log2(n_heads)))
    if n == n_heads:
        return pow2(n)
    return pow2(n) + pow2(2 * n)[0::2][:n_heads - n]


def rope(x):
    """Rotate each interleaved pair (2p, 2p+1) of x (..., T, d) at position i (its row) by
    i * 10000^(-2p/d): (x0, x1) -> (x0 cos - x1 sin, x0 sin + x1 cos)."""
    T, d = x.shape[-2], x.shape[-1]
    pos = torch.arange(T, dtype=torch.float64)[:, None]
    theta = 10000.0 ** (-2.0 * torch.arange(d // 2, dtype=torch.float64) / d)
    ang = pos * theta[None, :]
    c, s = torch.cos(ang), torch.sin(ang)
    x0, x1 = x[..., 0::2], x[..., 1::2]
    out = torch.stack([x0 * c - x1 * s, x0 * s + x1 * c], dim=-1)
    return out.reshape(x.shape)


def attend(cfg, q, k, allowed, scale):
    """Attention weights (B, H, T, T) of one layer for the config's variant, written from the
    definitions (the variants' table): qkNorm, then RoPE, then the scores (ALiBi added), then the
    normalizer over the causal keys; forbidden cells are exactly 0."""
    norm = cfg.get("normalizer", "softmax")
    pos = cfg["positional"]
    T = q.shape[-2]
    if cfg.get("qkNorm", False):
        q = q / torch.clamp(torch.linalg.vector_norm(q, dim=-1, keepdim=True), min=1e-12)
        k = k / torch.clamp(torch.linalg.vector_norm(k, dim=-1, keepdim=True), min=1e-12)
    if pos == "rope":
        q, k = rope(q), rope(k)
    keep = allowed.to(torch.float64)
    if norm == "linear":
        fq = torch.nn.functional.elu(q) + 1
        fk = torch.nn.functional.elu(k) + 1
        a = (fq @ fk.transpose(-1, -2)) * keep
        return a / (a.sum(-1, keepdim=True) + 1e-6)
    s = (q @ k.transpose(-1, -2)) * scale
    if pos == "alibi":
        H = q.shape[1]
        m = torch.tensor(alibi_slopes(H))[None, :, None, None]
        i = torch.arange(T)[:, None]
        j = torch.arange(T)[None, :]
        s = s - m * (i - j).abs().to(torch.float64)
    if norm == "softmax":
        return torch.softmax(s.masked_fill(~allowed, float("-inf")), dim=-1)
    if norm == "softmax1":
        s = s.masked_fill(~allowed, float("-inf"))
        m = torch.clamp(s.max(-1, keepdim=True).values, min=0.0).detach()
        e = torch.exp(s - m)
        return e / (torch.exp(-m) + e.sum(-1, keepdim=True))
    # sigmoid's default bias and relu's divisor: the model's context length seqLen (not the
    # call's T), so a position's output does not depend on how many tokens follow it.
    context = cfg["seqLen"]
    if norm == "sigmoid":
        b = cfg.get("sigmoidBias")
        b = -np.log(context) if b is None else b
        return torch.sigmoid(s + b) * keep
    if norm == "relu":
        return torch.relu(s) / context * keep
    raise ValueError(norm)


def forward(cfg, tp, tokens, ablate=None, want_weights=False):
    """logits (B, T, V) and the per-layer attention weights (B, H, T, T)."""
    B, T = tokens.shape
    D, H, Hkv = cfg["dModel"], cfg["heads"], cfg["kvHeads"]
    dh = D // H
    scale = cfg["scale"] if cfg["scale"] is not None else 1.0 / np.sqrt(dh)
    tok = torch.tensor(tokens, dtype=torch.long)
    shortformer = cfg["positional"] == "shortformer"
    x = tp["embed"][tok]
    if tp["pos"] is not None and not shortformer:
        x = x + tp["pos"][:T]
    allowed = torch.tril(torch.ones(T, T, dtype=torch.bool))
    weights = []
    for l, L in enumerate(tp["layers"]):
        # Shortformer (Press et al. 2021): queries and keys read x + P, values read x.
        xqk = x + tp["pos"][:T] if shortformer else x
        q = (xqk @ L["wq"]).reshape(B, T, H, dh).transpose(1, 2)
        k = (xqk @ L["wk"]).reshape(B, T, Hkv, dh).transpose(1, 2).repeat_interleave(H // Hkv, dim=1)
        v = (x @ L["wv"]).reshape(B, T, Hkv, dh).transpose(1, 2).repeat_interleave(H // Hkv, dim=1)
        a = attend(cfg, q, k, allowed, scale)
        weights.append(a)
        o = a @ v  # (B, H, T, dh)
        if ablate is not None:
            keep = torch.tensor([0.0 if ablate[l * H + h] else 1.0 for h in range(H)])
            o = o * keep[None, :, None, None]
        z = o.transpose(1, 2).reshape(B, T, H * dh)
        x = x + z @ L["wo"]
    if tp["lnGain"] is not None:
        x = torch.nn.functional.layer_norm(x, (D,), tp["lnGain"], tp["lnBias"], eps=1e-5)
    return x @ tp["unembed"], weights


def loss_fn(cfg, tp, tokens, mask, ablate=None):
    logits, _ = forward(cfg, tp, tokens, ablate)
    logp = torch.log_softmax(logits[:, :-1], dim=-1)
    tgt = torch.tensor(tokens[:, 1:], dtype=torch.long)
    nll = -logp.gather(-1, tgt[..., None])[..., 0]
    m = torch.tensor(mask[:, 1:].astype(np.float64))
    return (nll * m).sum() / m.sum()


def params_json(p, lst):
    def one(a):
        return None if a is None else lst(a)
    return {"embed": one(p["embed"]), "pos": one(p["pos"]),
            "layers": [{k: lst(L[k]) for k in ("wq", "wk", "wv", "wo")} for L in p["layers"]],
            "lnGain": one(p["lnGain"]), "lnBias": one(p["lnBias"]), "unembed": one(p["unembed"])}


def grads_of(tp):
    g = lambda t: None if t is None else t.grad.detach().numpy()  # noqa: E731
    return {"embed": g(tp["embed"]), "pos": g(tp["pos"]),
            "layers": [{k: g(L[k]) for k in ("wq", "wk", "wv", "wo")} for L in tp["layers"]],
            "lnGain": g(tp["lnGain"]), "lnBias": g(tp["lnBias"]), "unembed": g(tp["unembed"])}


def values_of(tp):
    v = lambda t: None if t is None else t.detach().numpy()  # noqa: E731
    return {"embed": v(tp["embed"]), "pos": v(tp["pos"]),
            "layers": [{k: v(L[k]) for k in ("wq", "wk", "wv", "wo")} for L in tp["layers"]],
            "lnGain": v(tp["lnGain"]), "lnBias": v(tp["lnBias"]), "unembed": v(tp["unembed"])}


def config(vocab=11, seqLen=8, layers=2, heads=2, kvHeads=None, dModel=8, positional="learned",
           layerNorm=False, scale=None, **variant):
    """variant: normalizer, qkNorm, sigmoidBias (keys written only when given, so the cases
    made before the variants keep their bytes)."""
    c = {"vocab": vocab, "seqLen": seqLen, "layers": layers, "heads": heads,
         "kvHeads": heads if kvHeads is None else kvHeads, "dModel": dModel,
         "positional": positional, "layerNorm": layerNorm, "scale": scale}
    for key in variant:
        assert key in ("normalizer", "qkNorm", "sigmoidBias"), key
    c.update(variant)
    return c


def random_batch(rng, cfg, batch):
    tokens = rng.integers(0, cfg["vocab"], size=(batch, cfg["seqLen"])).astype(np.int32)
    mask = (rng.random(size=(batch, cfg["seqLen"])) < 0.7).astype(np.uint8)
    mask[0, 1] = 1  # at least one target
    return tokens, mask


def grad_case(name, cfg, batch=3, std=0.5, with_weights=False):
    rng = case_rng(name)
    p = make_params(rng, cfg, std)
    tokens, mask = random_batch(rng, cfg, batch)
    tp = to_torch(p)
    loss = loss_fn(cfg, tp, tokens, mask)
    loss.backward()
    out = {"name": name, "family": "grad", "config": cfg, "batch": batch,
           "tokens": tokens.ravel().tolist(), "lossMask": mask.ravel().tolist(),
           "params": params_json(p, f32_list), "loss": float(loss),
           "grads": params_json(grads_of(tp), f64_list)}
    if with_weights:
        # The attention weights of the first sequence, (L, H, T, T) flattened: what the Heads
        # view shows for it.
        with torch.no_grad():
            _, weights = forward(cfg, tp, tokens[:1])
        out["weights0"] = f64_list(np.concatenate([w[0].numpy().ravel() for w in weights]))
    return out


def relu_kink_case(name):
    """relu with scores exactly 0 in some cells: one layer, W_K = 0 in the first head's columns
    makes its every score 0 (relu's kink), where autograd's derivative is 0."""
    cfg = config(layers=1, normalizer="relu", scale=1.0)
    rng = case_rng(name)
    p = make_params(rng, cfg, 0.5)
    dh = cfg["dModel"] // cfg["heads"]
    p["layers"][0]["wk"][:, :dh] = 0
    tokens, mask = random_batch(rng, cfg, 3)
    tp = to_torch(p)
    loss = loss_fn(cfg, tp, tokens, mask)
    loss.backward()
    return {"name": name, "family": "grad", "config": cfg, "batch": 3,
            "tokens": tokens.ravel().tolist(), "lossMask": mask.ravel().tolist(),
            "params": params_json(p, f32_list), "loss": float(loss),
            "grads": params_json(grads_of(tp), f64_list)}


def adamw_case(name, cfg, lr, wd, clip, batch=3, std=0.5, betas=(0.9, 0.99), eps=1e-8):
    rng = case_rng(name)
    p = make_params(rng, cfg, std)
    tokens, mask = random_batch(rng, cfg, batch)
    tp = to_torch(p)
    params = flat_tensors(tp)
    opt = torch.optim.AdamW(params, lr=lr, betas=betas, eps=eps, weight_decay=wd)
    steps = []
    for _ in range(2):
        opt.zero_grad()
        loss = loss_fn(cfg, tp, tokens, mask)
        loss.backward()
        if clip > 0:
            norm = torch.nn.utils.clip_grad_norm_(params, clip)
        else:
            norm = torch.norm(torch.stack([torch.norm(q.grad, 2) for q in params]), 2)
        opt.step()
        steps.append({"loss": float(loss), "gradNorm": float(norm),
                      "params": params_json(values_of(tp), f64_list)})
    return {"name": name, "family": "adamw", "config": cfg, "batch": batch,
            "tokens": tokens.ravel().tolist(), "lossMask": mask.ravel().tolist(),
            "params": params_json(p, f32_list),
            "opt": {"lr": lr, "beta1": betas[0], "beta2": betas[1], "eps": eps,
                    "weightDecay": wd, "clip": clip},
            "steps": steps}


def pattern_scores(tokens, weights, H):
    """Per head (previous, induction, duplicate) as defined in docs/train-api.md (head scores)."""
    B, T = tokens.shape
    out = np.zeros((3, H))
    for h in range(H):
        per = [[], [], []]
        for b in range(B):
            a = weights[b, h]
            tok = tokens[b]
            num = [0.0, 0.0, 0.0]
            den = [0.0, 0.0, 0.0]
            for i in range(T):
                pats = [np.zeros(T), np.zeros(T), np.zeros(T)]
                if i >= 1:
                    pats[0][i - 1] = 1
                for j in range(i):
                    if tok[j] == tok[i]:
                        pats[2][j] = 1
                        pats[1][j + 1] = 1
                for k in range(3):
                    if pats[k].any():
                        num[k] += float((a[i] * pats[k]).sum())
                        den[k] += float(a[i].sum())
            for k in range(3):
                if den[k] > 0:
                    per[k].append(num[k] / den[k])
        for k in range(3):
            out[k, h] = np.mean(per[k]) if per[k] else 0.0
    return out


def k_composition(cfg, p):
    D, H, Hkv = cfg["dModel"], cfg["heads"], cfg["kvHeads"]
    dh, grp = D // H, H // Hkv
    out = []
    for l in range(cfg["layers"] - 1):
        A, Bl = p["layers"][l], p["layers"][l + 1]
        for h1 in range(H):
            g1 = h1 // grp
            ov = A["wv"][:, g1 * dh:(g1 + 1) * dh].astype(np.float64) @ \
                A["wo"][h1 * dh:(h1 + 1) * dh, :].astype(np.float64)
            for h2 in range(H):
                g2 = h2 // grp
                qk = Bl["wq"][:, h2 * dh:(h2 + 1) * dh].astype(np.float64) @ \
                    Bl["wk"][:, g2 * dh:(g2 + 1) * dh].astype(np.float64).T
                out.append(np.linalg.norm(qk @ ov.T) / (np.linalg.norm(qk) * np.linalg.norm(ov)))
    return out


def induction_batch(rng, vocab, T, batch):
    """[noise, s, s] sequences (as the 'induction' task describes), targets in the second copy."""
    n = T // 2
    tokens = np.zeros((batch, T), dtype=np.int32)
    mask = np.zeros((batch, T), dtype=np.uint8)
    for b in range(batch):
        L = int(rng.integers((n + 1) // 2, n + 1))
        d = rng.permutation(vocab)[:T - L]
        seq = np.concatenate([d, d[T - 2 * L:]])
        tokens[b] = seq
        mask[b, T - L + 1:] = 1
    return tokens, mask


def interp_case(name, cfg, batch=3, std=0.7):
    rng = case_rng(name)
    p = make_params(rng, cfg, std)
    tokens, mask = induction_batch(rng, cfg["vocab"], cfg["seqLen"], batch)
    tp = to_torch(p)
    H, L = cfg["heads"], cfg["layers"]
    with torch.no_grad():
        logits, weights = forward(cfg, tp, tokens)
        scores = [pattern_scores(tokens, w.numpy(), H) for w in weights]
        loss = float(loss_fn(cfg, tp, tokens, mask))
        pred = logits[:, :-1].argmax(-1).numpy()
        m = mask[:, 1:].astype(bool)
        acc = float((pred == tokens[:, 1:])[m].mean())
        ablation = []
        for i in range(L * H):
            ab = [0] * (L * H)
            ab[i] = 1
            ablation.append(float(loss_fn(cfg, tp, tokens, mask, ablate=ab)))
    return {"name": name, "family": "interp", "config": cfg, "batch": batch,
            "tokens": tokens.ravel().tolist(), "lossMask": mask.ravel().tolist(),
            "params": params_json(p, f32_list),
            "previousToken": f64_list([s[0, h] for s in scores for h in range(H)]),
            "induction": f64_list([s[1, h] for s in scores for h in range(H)]),
            "duplicateToken": f64_list([s[2, h] for s in scores for h in range(H)]),
            "kComposition": f64_list(k_composition(cfg, p)),
            "ablationLoss": f64_list(ablation), "loss": loss, "accuracy": acc}


def build_all():
    cases = [
        grad_case("base", config()),
        grad_case("gqa", config(heads=4, kvHeads=2, dModel=16)),
        grad_case("mqa", config(heads=4, kvHeads=1, dModel=8)),
        grad_case("layernorm", config(layerNorm=True)),
        grad_case("layernorm-gqa", config(heads=4, kvHeads=2, dModel=16, layerNorm=True)),
        grad_case("no-positional", config(positional="none")),
        grad_case("scale-none", config(scale=1.0)),
        grad_case("scale-number", config(scale=0.7)),
        grad_case("one-layer", config(layers=1)),
        grad_case("three-layers", config(layers=3, heads=2, dModel=8, vocab=7, seqLen=6)),
        grad_case("single-head-t2", config(heads=1, dModel=4, seqLen=2, vocab=5), batch=2),
    ]
    adamw = [
        adamw_case("adamw-decay", config(), lr=0.01, wd=0.1, clip=0.0),
        adamw_case("adamw-clip", config(layerNorm=True, heads=4, kvHeads=2, dModel=16), lr=0.03,
                   wd=0.01, clip=0.05),
    ]
    interp = [
        interp_case("interp-mha", config(vocab=16, seqLen=12, layers=2, heads=2, dModel=8)),
        interp_case("interp-gqa", config(vocab=16, seqLen=12, layers=3, heads=4, kvHeads=2,
                                         dModel=16, layerNorm=True)),
    ]
    # The attention variants (normalizer, positional rope / alibi, qkNorm, sigmoidBias), each
    # with GQA / MQA, layer norm, an ALiBi head count that is not a power of two, and relu's kink
    # (integer-valued inputs put scores at exactly 0).
    variants = [
        grad_case("v-softmax1", config(normalizer="softmax1"), with_weights=True),
        grad_case("v-softmax1-gqa-alibi", config(heads=4, kvHeads=2, dModel=16,
                                                 positional="alibi", normalizer="softmax1"), with_weights=True),
        grad_case("v-sigmoid", config(normalizer="sigmoid"), with_weights=True),
        grad_case("v-sigmoid-bias", config(normalizer="sigmoid", sigmoidBias=0.5,
                                           positional="none", layerNorm=True), with_weights=True),
        grad_case("v-relu", config(normalizer="relu", scale=1.0), with_weights=True),
        grad_case("v-relu-mqa-rope", config(heads=4, kvHeads=1, dModel=16, normalizer="relu",
                                            positional="rope"), with_weights=True),
        grad_case("v-linear", config(normalizer="linear"), with_weights=True),
        grad_case("v-linear-rope-ln", config(normalizer="linear", positional="rope",
                                             layerNorm=True), with_weights=True),
        grad_case("v-rope", config(positional="rope"), with_weights=True),
        grad_case("v-alibi", config(positional="alibi"), with_weights=True),
        grad_case("v-alibi-3heads", config(heads=3, dModel=6, positional="alibi"), with_weights=True),
        grad_case("v-qknorm", config(qkNorm=True, scale=4.0), with_weights=True),
        grad_case("v-qknorm-rope-sigmoid-gqa", config(heads=4, kvHeads=2, dModel=16, qkNorm=True,
                                                      positional="rope", normalizer="sigmoid",
                                                      scale=3.0), with_weights=True),
        grad_case("v-qknorm-linear-mqa", config(heads=2, kvHeads=1, qkNorm=True,
                                                normalizer="linear", positional="none"), with_weights=True),
        relu_kink_case("v-relu-kink"),
    ]
    # Shortformer positions: plain and with LayerNorm, GQA / MQA, one and three layers, a
    # two-token context, and with a variant normalizer / qkNorm (the trainer's variant kernels).
    sf = "shortformer"
    shortformer = [
        grad_case("sf-base", config(positional=sf), with_weights=True),
        grad_case("sf-layernorm", config(positional=sf, layerNorm=True), with_weights=True),
        grad_case("sf-gqa", config(heads=4, kvHeads=2, dModel=16, positional=sf), with_weights=True),
        grad_case("sf-gqa-layernorm", config(heads=4, kvHeads=2, dModel=16, positional=sf,
                                             layerNorm=True), with_weights=True),
        grad_case("sf-mqa-three-layers", config(layers=3, heads=4, kvHeads=1, dModel=8, vocab=7,
                                                seqLen=6, positional=sf), with_weights=True),
        grad_case("sf-one-layer", config(layers=1, positional=sf), with_weights=True),
        grad_case("sf-single-head-t2", config(heads=1, dModel=4, seqLen=2, vocab=5, positional=sf),
                  batch=2, with_weights=True),
        grad_case("sf-long", config(vocab=13, seqLen=16, heads=2, dModel=12, positional=sf,
                                    layerNorm=True), batch=4, with_weights=True),
        grad_case("sf-sigmoid-qknorm", config(positional=sf, normalizer="sigmoid", qkNorm=True,
                                              scale=3.0), with_weights=True),
        grad_case("sf-linear-gqa", config(heads=4, kvHeads=2, dModel=16, positional=sf,
                                          normalizer="linear"), with_weights=True),
    ]
    return {"model.json": {"description": "PyTorch autograd oracle (tests/oracle/gen_model_fixtures.py)",
                           "grad": cases, "adamw": adamw, "interp": interp,
                           "variants": variants, "shortformer": shortformer}}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--check", action="store_true",
                    help="regenerate in memory and exit 1 if the committed fixture differs")
    ap.add_argument("--out", default=FIXTURES, help="fixture directory (default tests/fixtures)")
    args = ap.parse_args()
    failed = False
    for fname, obj in build_all().items():
        text = to_json(obj) + "\n"
        json.loads(text)
        path = os.path.join(args.out, fname)
        if args.check:
            if not os.path.exists(path):
                print("MISSING  " + path)
                failed = True
                continue
            with open(path) as f:
                old = f.read()
            if old == text:
                print("same     %s (%d bytes)" % (fname, len(text)))
                continue
            diffs = []
            _same(json.loads(old), json.loads(text), fname, diffs)
            if diffs:
                failed = True
                print("DIFFERS  %s:\n  %s" % (fname, "\n  ".join(diffs[:20])))
            else:
                print("same     %s (numerically, within 1e-9 relative)" % fname)
        else:
            with open(path, "w") as f:
                f.write(text)
            print("wrote    %s (%d bytes)" % (path, len(text)))
    if failed:
        print("fixtures are stale: run /usr/bin/python3 tests/oracle/gen_model_fixtures.py")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
