#!/usr/bin/python3
"""NumPy oracle for the text model's probe and head scores (attn/tr/probe.hpp): writes
tests/fixtures/probe.json.

    /usr/bin/python3 tests/oracle/gen_probe_fixtures.py           # rewrite the fixture
    /usr/bin/python3 tests/oracle/gen_probe_fixtures.py --check   # regenerate in memory, compare,
                                                                  # exit 1 if the file differs

Written from the definitions (not from the C++):
  n = min(floor(T/2), 50); the probe is `count` rows [r, r], r drawn with attn::Rng(seed)
  (SplitMix64, re-implemented in attn_ref.py from cpp/include/attn/rng.hpp): for each row, for
  each of its n positions, candidates[floor(uniform() * len(candidates))].
  in-context = mean CE over targets n+1 .. 2n-1 minus mean CE over targets 1 .. n-1 (nats; the
  target at j is predicted from the logits at j-1); induction(l, h) = mean over rows and
  i = n .. 2n-1 of A[i, i-n+1]; previous(l, h) = mean over rows and i = 1 .. 2n-1 of A[i, i-1].
  On one text: previous = mean_{i=1..t-1} A[i, i-1], first = mean_{i=1..t-1} A[i, 0], duplicate =
  mean over the i with an earlier j holding the same token of sum_j A[i, j] (0 if there is none),
  induction = mean over the i with a non-empty K_i = {j + 1 : j < i, tok[j] == tok[i],
  j + 1 <= i - 1} of sum_{k in K_i} A[i, k] (0 if there is none).
  Role: of (previous-token, induction, duplicate-token, first-token) the one with the largest score
  (the earlier on a tie) if that score >= 0.4, else mixed.
The model is the one of docs/train-api.md, forward only, in float64: x_0 = E[tok] (+ P for
'learned'); per layer x += concat_h softmax(scale q k^T, causal) v W_O with q = x' W_Q, k = x' W_K
(x' = x + P for 'shortformer', else x), v = x W_V, GQA head h reading K/V head h // (H / H_kv);
optional final LayerNorm (eps 1e-5); logits = y U. Parameters are float32 values drawn with
numpy.random.default_rng(crc32(case name)).
"""

import argparse
import json
import math
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from attn_ref import SplitMix64  # noqa: E402
from gen_fixtures import FIXTURES, _same, case_rng, f32_list, f64_list, to_json  # noqa: E402


def probe_length(T):
    return min(T // 2, 50)


def make_probe(candidates, T, count, seed):
    n = probe_length(T)
    rng = SplitMix64(seed)
    rows = []
    for _ in range(count):
        r = [candidates[int(math.floor(rng.uniform() * len(candidates)))] for _ in range(n)]
        rows.append(r + r)
    return np.array(rows, dtype=np.int64)


def make_params(rng, cfg, std):
    V, T, D, H, Hkv = cfg["vocab"], cfg["seqLen"], cfg["dModel"], cfg["heads"], cfg["kvHeads"]
    dh = D // H
    f = lambda shape: (rng.normal(size=shape) * std).astype(np.float32)  # noqa: E731
    p = {"embed": f((V, D)), "pos": f((T, D)) if cfg["positional"] != "none" else None, "layers": []}
    for _ in range(cfg["layers"]):
        p["layers"].append({"wq": f((D, H * dh)), "wk": f((D, Hkv * dh)), "wv": f((D, Hkv * dh)),
                            "wo": f((H * dh, D))})
    if cfg["layerNorm"]:
        p["lnGain"] = (1 + 0.2 * rng.normal(size=D)).astype(np.float32)
        p["lnBias"] = (0.2 * rng.normal(size=D)).astype(np.float32)
    else:
        p["lnGain"] = p["lnBias"] = None
    p["unembed"] = f((D, V))
    return p


def forward(cfg, p, tokens, ablate=()):
    """tokens (B, t) -> logits (B, t, V) and per layer the weights (B, H, t, t), float64.
    ablate: (layer, head) pairs whose output is zeroed (their weights are still formed)."""
    B, t = tokens.shape
    D, H, Hkv = cfg["dModel"], cfg["heads"], cfg["kvHeads"]
    dh, grp = D // H, H // Hkv
    d64 = lambda a: a.astype(np.float64)  # noqa: E731
    x = d64(p["embed"])[tokens]
    P = None if p["pos"] is None else d64(p["pos"])[:t]
    if cfg["positional"] == "learned":
        x = x + P
    causal = np.tril(np.ones((t, t), dtype=bool))
    weights = []
    for li, L in enumerate(p["layers"]):
        xqk = x + P if cfg["positional"] == "shortformer" else x
        q = (xqk @ d64(L["wq"])).reshape(B, t, H, dh).transpose(0, 2, 1, 3)
        k = (xqk @ d64(L["wk"])).reshape(B, t, Hkv, dh).transpose(0, 2, 1, 3)
        v = (x @ d64(L["wv"])).reshape(B, t, Hkv, dh).transpose(0, 2, 1, 3)
        k, v = np.repeat(k, grp, axis=1), np.repeat(v, grp, axis=1)
        s = (q @ k.transpose(0, 1, 3, 2)) / np.sqrt(dh)
        s = np.where(causal, s, -np.inf)
        e = np.exp(s - s.max(-1, keepdims=True))
        a = e / e.sum(-1, keepdims=True)
        weights.append(a)
        o = a @ v
        for (al, ah) in ablate:
            if al == li:
                o[:, ah] = 0.0
        z = o.transpose(0, 2, 1, 3).reshape(B, t, H * dh)
        x = x + z @ d64(L["wo"])
    if p["lnGain"] is not None:
        mu = x.mean(-1, keepdims=True)
        var = ((x - mu) ** 2).mean(-1, keepdims=True)
        x = (x - mu) / np.sqrt(var + 1e-5) * d64(p["lnGain"]) + d64(p["lnBias"])
    return x @ d64(p["unembed"]), weights


def cross_entropy(logits, target):
    m = logits.max()
    return m + np.log(np.exp(logits - m).sum()) - logits[target]


def probe_scores(cfg, p, probe, ablate=()):
    count, t = probe.shape
    n = t // 2
    logits, weights = forward(cfg, p, probe, ablate)
    ce = np.array([[cross_entropy(logits[b, j - 1], probe[b, j]) for j in range(1, t)]
                   for b in range(count)])  # ce[:, j-1]: target j
    first = ce[:, 0:n - 1].mean()          # targets 1 .. n-1
    second = ce[:, n:t - 1].mean()         # targets n+1 .. 2n-1
    induction, previous = [], []
    for a in weights:
        for h in range(cfg["heads"]):
            induction.append(np.mean([a[b, h, i, i - n + 1] for b in range(count) for i in range(n, t)]))
            previous.append(np.mean([a[b, h, i, i - 1] for b in range(count) for i in range(1, t)]))
    return first, second, induction, previous


def text_scores(cfg, p, tokens):
    t = len(tokens)
    _, weights = forward(cfg, p, np.array([tokens], dtype=np.int64))
    prev, dup, first, ind = [], [], [], []
    for a in weights:
        for h in range(cfg["heads"]):
            w = a[0, h]
            prev.append(np.mean([w[i, i - 1] for i in range(1, t)]))
            first.append(np.mean([w[i, 0] for i in range(1, t)]))
            rows = [sum(w[i, j] for j in range(i) if tokens[j] == tokens[i])
                    for i in range(t) if any(tokens[j] == tokens[i] for j in range(i))]
            dup.append(np.mean(rows) if rows else 0.0)
            keys = [{j + 1 for j in range(i) if tokens[j] == tokens[i] and j + 1 <= i - 1}
                    for i in range(t)]
            rows = [sum(w[i, k] for k in keys[i]) for i in range(1, t) if keys[i]]
            ind.append(np.mean(rows) if rows else 0.0)
    return prev, dup, first, ind


ROLE_NAMES = ["previous-token", "induction", "duplicate-token", "first-token", "mixed"]
ROLE_THRESHOLD = 0.4


def role(previous, induction, duplicate, first):
    scores = [previous, induction, duplicate, first]
    best = max(range(4), key=lambda k: (scores[k], -k))  # the earlier score on a tie
    return ROLE_NAMES[best] if scores[best] >= ROLE_THRESHOLD else ROLE_NAMES[4]


def role_close(prev, ind, dup, fst):
    """Per head: could a float32 forward (scores within ~2e-5) flip its role? True when the top
    score is within 1e-4 of the threshold or, at or above it, of the runner-up."""
    out = []
    for q in zip(prev, ind, dup, fst):
        top = sorted(q, reverse=True)
        out.append(bool(abs(top[0] - ROLE_THRESHOLD) < 1e-4 or
                        (top[0] >= ROLE_THRESHOLD and top[0] - top[1] < 1e-4)))
    return out


def config(vocab=20, seqLen=12, layers=2, heads=2, kvHeads=None, dModel=8, positional="learned",
           layerNorm=False):
    return {"vocab": vocab, "seqLen": seqLen, "layers": layers, "heads": heads,
            "kvHeads": heads if kvHeads is None else kvHeads, "dModel": dModel,
            "positional": positional, "layerNorm": layerNorm, "scale": None}


def params_json(p):
    one = lambda a: None if a is None else f32_list(a)  # noqa: E731
    return {"embed": one(p["embed"]), "pos": one(p["pos"]),
            "layers": [{k: f32_list(L[k]) for k in ("wq", "wk", "wv", "wo")} for L in p["layers"]],
            "lnGain": one(p["lnGain"]), "lnBias": one(p["lnBias"]), "unembed": one(p["unembed"])}


def window_loss(cfg, p, windows, ablate=()):
    """Mean cross-entropy of every next-token target of windows (W, seqLen) (Trainer::text_loss)."""
    logits, _ = forward(cfg, p, windows, ablate)
    W, t = windows.shape
    return float(np.mean([cross_entropy(logits[b, j - 1], windows[b, j]) for b in range(W) for j in range(1, t)]))


def case(name, cfg, candidates, count, seed, texts, std=0.6):
    rng = case_rng(name)
    p = make_params(rng, cfg, std)
    # 20 windows: more than the 16 Trainer::text_loss runs per forward. Drawn after the weights,
    # so the weights stay those of the cases before the windows were added.
    windows = rng.integers(0, cfg["vocab"], size=(20, cfg["seqLen"]))
    long_probe = make_probe(candidates, cfg["seqLen"], 37, seed)  # 37 rows: 3 forwards of 16
    probe = make_probe(candidates, cfg["seqLen"], count, seed)
    first, second, induction, previous = probe_scores(cfg, p, probe)
    out = {"name": name, "config": cfg, "params": params_json(p),
           "candidates": candidates, "count": count, "seed": seed,
           "probe": probe.ravel().tolist(),
           "ceFirst": float(first), "ceSecond": float(second), "inContext": float(second - first),
           "induction": f64_list(induction), "previous": f64_list(previous), "texts": []}
    # Head (0, 0) knocked out (its output zeroed): what the text tab's knock-out measures.
    ab = ((0, 0),)
    f37, s37, ind37, prev37 = probe_scores(cfg, p, long_probe, ab)
    out["ablated"] = {"heads": [[0, 0]], "windows": windows.ravel().tolist(),
                      "windowLoss": window_loss(cfg, p, windows),
                      "windowLossAblated": window_loss(cfg, p, windows, ab),
                      "probeRows": 37, "ceFirst": float(f37), "ceSecond": float(s37),
                      "inContext": float(s37 - f37), "induction": f64_list(ind37),
                      "previous": f64_list(prev37)}
    for tokens in texts:
        prev, dup, fst, ind = text_scores(cfg, p, tokens)
        out["texts"].append({"tokens": tokens, "previous": f64_list(prev),
                             "duplicate": f64_list(dup), "first": f64_list(fst),
                             "induction": f64_list(ind),
                             "roles": [role(*q) for q in zip(prev, ind, dup, fst)],
                             "roleClose": role_close(prev, ind, dup, fst)})
    return out


def build_all():
    rep = [3, 7, 3, 9, 7, 3, 11, 2, 7, 9, 3, 5]  # repeats at several distances
    cases = [
        case("learned-2l", config(), [4, 17, 2, 9, 11, 0, 13], 5, 1,
             [rep, [1, 2, 3, 4, 5, 6, 7], [5, 5, 5, 5]]),
        case("shortformer-2l", config(positional="shortformer"), [4, 17, 2, 9, 11, 0, 13], 5, 1,
             [rep, [0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1]]),
        case("shortformer-1l-gqa-ln", config(layers=1, heads=4, kvHeads=2, dModel=16,
                                             positional="shortformer", layerNorm=True, vocab=30,
                                             seqLen=9),
             list(range(30)), 4, 12345, [rep[:9], [8, 8, 1, 8]]),
        case("learned-1l-ln", config(layers=1, layerNorm=True, seqLen=10),
             [19, 18], 3, 2 ** 63 + 7, [rep[:10]]),
        # n capped at 50: seqLen 110 gives rows of 100 tokens.
        case("shortformer-2l-cap", config(vocab=40, seqLen=110, positional="shortformer",
                                          dModel=8, heads=2, kvHeads=1),
             list(range(5, 40, 2)), 3, 99, [[(i * 7) % 13 for i in range(110)]]),
    ]
    # The role rule on chosen scores (previous, induction, duplicate, first): ties, the
    # threshold itself, just below it.
    rule = [[0.5, 0.1, 0.2, 0.3], [0.1, 0.6, 0.59, 0.0], [0.4, 0.4, 0.1, 0.1],
            [0.39, 0.1, 0.2, 0.3], [0.0, 0.0, 0.0, 0.4], [0.2, 0.3, 0.45, 0.44],
            [0.1, 0.3999999, 0.2, 0.0], [0.0, 0.0, 0.0, 0.0], [0.3, 0.9, 0.9, 0.95],
            [1.2, 0.0, 0.0, 0.0], [0.0, 0.41, 0.0, 0.41]]
    roles = {"names": ROLE_NAMES, "threshold": ROLE_THRESHOLD,
             "cases": [{"scores": q, "role": role(*q)} for q in rule]}
    return {"probe.json": {"description": "NumPy oracle (tests/oracle/gen_probe_fixtures.py)",
                           "cases": cases, "roles": roles}}


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
        print("fixtures are stale: run /usr/bin/python3 tests/oracle/gen_probe_fixtures.py")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
