#!/usr/bin/python3
"""A score taken apart in NumPy, for the core's attn::score_breakdown / core.scoreBreakdown.

    /usr/bin/python3 tests/oracle/gen_breakdown_fixtures.py           # rewrite tests/fixtures/breakdown.json
    /usr/bin/python3 tests/oracle/gen_breakdown_fixtures.py --check   # exit 1 if the committed file differs

Format: { cases: [ { name, heads, kvHeads, tq, tk, dk, causal, window, keyPadding | null, scale |
null, variant: { qkNorm, position, normalizer }, q, k (float32 values, row-major), cells: [ { head,
query, key, q, k, products, dot, scale, bias, score, allowed, rowScores, nextBest } ] } ] }, all in
float64 from the float32 inputs; nextBest null when no other key is allowed.
"""

import json
import math
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.normpath(os.path.join(HERE, "..", "fixtures", "breakdown.json"))


def alibi_slopes(heads):
    n = 2 ** int(math.floor(math.log2(heads)))
    s = [2 ** (-8 * (i + 1) / n) for i in range(n)]
    return s + [2 ** (-8 * (i + 1) / (2 * n)) for i in range(0, 2 * (heads - n), 2)]


def transform(x, pos, v):
    x = x.astype(np.float64).copy()
    if v["qkNorm"]:
        x = x / max(np.linalg.norm(x), 1e-12)
    if v["position"] == "rope":
        d = x.shape[0]
        ang = pos * 10000.0 ** (-np.arange(0, d, 2) / d)
        c, s = np.cos(ang), np.sin(ang)
        a, b = x[0::2].copy(), x[1::2].copy()
        x[0::2], x[1::2] = a * c - b * s, a * s + b * c
    if v["normalizer"] == "linear":
        x = np.where(x > 0, x + 1, np.exp(np.minimum(x, 0)))
    return x


def allowed(i, j, c):
    diag = i + c["tk"] - c["tq"]
    if c["causal"] and j > diag:
        return False
    if c["window"] and j <= diag - c["window"]:
        return False
    if c["keyPadding"] is not None and not c["keyPadding"][j]:
        return False
    return True


def breakdown(c, q, k, h, i, j):
    v = c["variant"]
    kvh = h // (c["heads"] // c["kvHeads"])
    qpos = i + c["tk"] - c["tq"]
    linear = v["normalizer"] == "linear"
    scale = 1.0 if linear else (c["scale"] if c["scale"] is not None else 1 / math.sqrt(c["dk"]))
    slope = alibi_slopes(c["heads"])[h] if v["position"] == "alibi" else 0.0
    qt = transform(q[h, i], qpos, v)
    row, ok = [], []
    for jj in range(c["tk"]):
        kt = transform(k[kvh, jj], jj, v)
        row.append(float(scale * (qt @ kt) - slope * abs(qpos - jj)))
        ok.append(allowed(i, jj, c))
    kt = transform(k[kvh, j], j, v)
    others = [row[jj] for jj in range(c["tk"]) if ok[jj] and jj != j]
    return {"head": h, "query": i, "key": j, "q": qt.tolist(), "k": kt.tolist(),
            "products": (qt * kt).tolist(), "dot": float(qt @ kt), "scale": scale,
            "bias": -slope * abs(qpos - j), "score": row[j], "allowed": ok[j], "rowScores": row,
            "nextBest": max(others) if others else None}


def cases():
    rng = np.random.default_rng(38)
    out = []

    def add(name, heads=2, kv=2, tq=5, tk=5, dk=4, causal=False, window=0, pad=None, scale=None,
            qk=False, pos="none", norm="softmax"):
        q = rng.standard_normal((heads, tq, dk)).astype(np.float32)
        k = rng.standard_normal((kv, tk, dk)).astype(np.float32)
        c = {"name": name, "heads": heads, "kvHeads": kv, "tq": tq, "tk": tk, "dk": dk, "causal": causal,
             "window": window, "keyPadding": pad, "scale": scale,
             "variant": {"qkNorm": qk, "position": pos, "normalizer": norm},
             "q": [float(x) for x in q.ravel()], "k": [float(x) for x in k.ravel()]}
        cells = [(0, 0, 0), (heads - 1, tq - 1, tk - 1), (heads - 1, tq - 1, 0), (0, tq // 2, tk // 2)]
        c["cells"] = [breakdown(c, q, k, h, i, j) for h, i, j in cells]
        out.append(c)

    add("softmax, no mask")
    add("causal, scale 1", causal=True, scale=1.0)
    add("window 2 and a padded key", window=2, pad=[1, 0, 1, 1, 1])
    add("GQA 4 query heads over 2", heads=4, kv=2)
    add("T_q 3 < T_k 5, causal (bottom-right)", tq=3, tk=5, causal=True)
    add("qk-norm", qk=True, scale=10.0)
    add("RoPE", pos="rope", dk=6)
    add("RoPE + qk-norm, causal", pos="rope", qk=True, causal=True)
    add("ALiBi, 3 heads", heads=3, kv=1, pos="alibi", causal=True)
    add("linear (phi = elu + 1, no scale)", norm="linear")
    add("sigmoid (the score is the same)", norm="sigmoid")
    return out


if __name__ == "__main__":
    sys.path.insert(0, HERE)
    from fixture_file import main  # noqa: E402

    sys.exit(main(OUT, lambda: json.dumps({"cases": cases()}, indent=1) + "\n", __file__))
