#!/usr/bin/python3
"""Queries and keys as points, and weight selections, in NumPy, for the core's attn::qk_map /
core.qkMap (attn/geometry.hpp) and attn::weight_selection / core.weightSelection
(attn/selection.hpp).

    /usr/bin/python3 tests/oracle/gen_geometry_fixtures.py           # rewrite tests/fixtures/geometry.json
    /usr/bin/python3 tests/oracle/gen_geometry_fixtures.py --check   # exit 1 if the committed file differs

The map: the head's query rows and its K/V head's key rows as the score uses them (qkNorm, RoPE
at i' = i + (T_k - T_q) and j, phi = elu + 1 under linear: gen_breakdown_fixtures.transform),
stacked (T_q + T_k, d_k), projected on the top two right singular vectors of np.linalg.svd (an
uncentred PCA; independent of the core's Jacobi solver). The rules the core documents, applied
here too so the tests compare directly: d_k = 1 -> axes e0 and 0; d_k = 2 -> the identity; every
axis's largest-|component| entry positive; rank <= 1 (s_2^2 <= 1e-12 s_1^2) -> the second axis
along e_m - (a_1 . e_m) a_1, m = argmin |a_1| (lowest index); all rows zero -> e0, e1. Cases whose
axes would be ill-defined (s_1, s_2, s_3 within 5 % of each other, or a sign decided by a near
tie) are refused here, so the fixtures hold none.

Format: { cases: [ { name, heads, kvHeads, tq, tk, dk, causal, window, keyPadding, scale,
variant: { qkNorm, position, normalizer }, q, k (float32 values, row-major), maps: [ { head,
queries (T_q*2), keys (T_k*2), axes (2*d_k), explained [2], dotMean, dotStd, prodStd (the std of
every single product q_c k_c), scale } ] } ],
selections: [ { name, heads, tq, tk, weights (float32 values), picks: [ { head, queries, keys,
mean, sum, column } ] } ] }, every result in float64 from the float32 inputs; mean and sum [] when
no queries are picked, column [] when no keys are.
"""

import json
import math
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.normpath(os.path.join(HERE, "..", "fixtures", "geometry.json"))
sys.path.insert(0, HERE)
from gen_breakdown_fixtures import transform  # noqa: E402  (the rows as the score uses them)

RANK_ONE = 1e-12


def fix_sign(a):
    m = int(np.argmax(np.abs(a)))  # the first of equal maxima
    top = np.sort(np.abs(a))[::-1]
    assert len(a) < 2 or top[0] - top[1] > 1e-3 * top[0] or top[0] == 0, "sign decided by a near tie"
    return -a if a[m] < 0 else a


def qk_map(c, q, k, h):
    v = c["variant"]
    d, tq, tk = c["dk"], c["tq"], c["tk"]
    kvh = h // (c["heads"] // c["kvHeads"])
    qt = np.array([transform(q[h, i], i + tk - tq, v) for i in range(tq)]).reshape(tq, d)
    kt = np.array([transform(k[kvh, j], j, v) for j in range(tk)]).reshape(tk, d)
    x = np.vstack([qt, kt])
    dots = qt @ kt.T
    total = float(np.sum(x * x))
    if d == 1:
        axes = np.array([[1.0], [0.0]])
    elif d == 2:
        axes = np.eye(2)
    else:
        _, s, vt = np.linalg.svd(x, full_matrices=False)
        if total == 0:
            axes = np.eye(d)[:2]
        elif s[1] ** 2 <= RANK_ONE * s[0] ** 2:
            a1 = fix_sign(vt[0])
            m = int(np.argmin(np.abs(a1)))
            a2 = np.eye(d)[m] - a1[m] * a1
            axes = np.array([a1, fix_sign(a2 / np.linalg.norm(a2))])
        else:
            gaps = [s[0] / s[1]] + ([s[1] / s[2]] if len(s) > 2 else [])
            assert min(gaps) > 1.05, f"{c['name']} head {h}: singular values too close {s[:3]}"
            axes = np.array([fix_sign(vt[0]), fix_sign(vt[1])])
    p = x @ axes.T
    if d >= 3 and total > 0:  # sigma_a^2 / sum sigma^2, straight from the SVD
        explained = [float(s[0] ** 2 / np.sum(s ** 2)), float(s[1] ** 2 / np.sum(s ** 2))]
    else:
        explained = [float(np.sum(p[:, a] ** 2) / total) if total > 0 else 0.0 for a in range(2)]
    linear = v["normalizer"] == "linear"
    scale = 1.0 if linear else (c["scale"] if c["scale"] is not None else 1 / math.sqrt(d))
    return {"head": h, "queries": p[:tq].ravel().tolist(), "keys": p[tq:].ravel().tolist(),
            "axes": axes.ravel().tolist(), "explained": explained, "dotMean": float(dots.mean()),
            "dotStd": float(dots.std()), "prodStd": float((qt[:, None, :] * kt[None, :, :]).std()), "scale": scale}


def cases():
    rng = np.random.default_rng(61)
    out = []

    def add(name, heads=2, kv=2, tq=5, tk=5, dk=4, causal=False, scale=None, qk=False, pos="none",
            norm="softmax", q=None, k=None):
        c = {"name": name, "heads": heads, "kvHeads": kv, "tq": tq, "tk": tk, "dk": dk, "causal": causal,
             "window": 0, "keyPadding": None, "scale": scale,
             "variant": {"qkNorm": qk, "position": pos, "normalizer": norm}}
        drawn = q is None
        for _ in range(50):  # random rows: drawn again until every head's axes are well defined
            if drawn:
                # Anisotropic, as trained heads are: N(0, 1) rows stretched along a random basis.
                basis = np.linalg.qr(rng.standard_normal((dk, dk)))[0]
                stretch = np.diag(2.5 * 2.0 ** (-np.arange(dk) * min(1.0, 8.0 / dk))) @ basis
                q = (rng.standard_normal((heads, tq, dk)) @ stretch).astype(np.float32)
                k = (rng.standard_normal((kv, tk, dk)) @ stretch).astype(np.float32)
            try:
                c["maps"] = [qk_map(c, q, k, h) for h in range(heads)]
                break
            except AssertionError:
                if not drawn:
                    raise
        else:
            raise AssertionError(f"{name}: no well-defined draw")
        c["q"], c["k"] = [float(x) for x in q.ravel()], [float(x) for x in k.ravel()]
        out.append(c)

    add("softmax, no mask (X^T X path)")
    add("causal, GQA 4 query heads over 2, T_q 4 < T_k 6", heads=4, kv=2, tq=4, tk=6, causal=True)
    add("RoPE, T_q 3 < T_k 5 (positions i' = i + 2)", tq=3, tk=5, dk=6, pos="rope", causal=True)
    add("qk-norm, scale 10", qk=True, scale=10.0)
    add("linear (phi = elu + 1, scale 1)", norm="linear")
    add("d_k = 1 (axes e0 and 0)", dk=1)
    add("d_k = 2 (identity axes: the rows themselves)", dk=2)
    add("d_k 12 > T_q + T_k = 7 (X X^T path)", tq=3, tk=4, dk=12)
    # Rank 1: every row a power-of-two multiple of one float32 vector (exact in float32).
    base = rng.standard_normal(4).astype(np.float32)
    coef = np.array([1, -2, 0.5, 4, -0.25, 2, -1, 0.125], dtype=np.float32)
    add("rank 1 (second axis orthogonal by construction)", heads=1, kv=1, tq=4, tk=4,
        q=(coef[:4, None] * base[None, :]).reshape(1, 4, 4), k=(coef[4:, None] * base[None, :]).reshape(1, 4, 4))
    base8 = rng.standard_normal(8).astype(np.float32)
    add("rank 1, d_k 8 > T_q + T_k = 5 (X X^T path)", heads=1, kv=1, tq=2, tk=3, dk=8,
        q=(coef[:2, None] * base8[None, :]).reshape(1, 2, 8), k=(coef[2:5, None] * base8[None, :]).reshape(1, 3, 8))
    add("all rows zero (axes e0, e1; nothing explained)", heads=1, kv=1, tq=2, tk=3, dk=3,
        q=np.zeros((1, 2, 3), np.float32), k=np.zeros((1, 3, 3), np.float32))
    add("d_k 40, T 24 (a larger X^T X: 38 reflections)", heads=1, kv=1, tq=24, tk=24, dk=40, causal=True)
    add("d_k 64 > T_q + T_k = 20 (a larger X X^T)", heads=1, kv=1, tq=8, tk=12, dk=64, pos="rope")
    return out


def selections():
    rng = np.random.default_rng(62)
    out = []

    def add(name, heads, tq, tk, picks):
        s = rng.standard_normal((heads, tq, tk))
        w = (np.exp(s) / np.exp(s).sum(-1, keepdims=True)).astype(np.float32)
        c = {"name": name, "heads": heads, "tq": tq, "tk": tk, "weights": [float(x) for x in w.ravel()],
             "picks": []}
        wd = w.astype(np.float64)
        for h, qs, ks in picks:
            a = wd[h]
            c["picks"].append({
                "head": h, "queries": qs, "keys": ks,
                "mean": a[qs].mean(0).tolist() if qs else [], "sum": a[qs].sum(0).tolist() if qs else [],
                "column": a[:, ks].sum(1).tolist() if ks else []})
        out.append(c)

    add("one head, square", 1, 5, 5, [(0, [2], [3]), (0, [0, 4, 1], [0, 2]), (0, [], [1]), (0, [3], []),
                                      (0, [], []), (0, list(range(5)), list(range(5)))])
    add("three heads, T_q 4 < T_k 7", 3, 4, 7, [(2, [3, 0], [6, 1, 2]), (1, [1], [4]), (0, [0, 1, 2, 3], [])])
    return out


if __name__ == "__main__":
    from fixture_file import main  # noqa: E402

    sys.exit(main(OUT, lambda: json.dumps({"cases": cases(), "selections": selections()}, indent=1) + "\n",
                  __file__))
