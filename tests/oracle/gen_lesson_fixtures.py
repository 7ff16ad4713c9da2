#!/usr/bin/python3
"""The Lesson view's page-level figures: tests/fixtures/lesson.json from NumPy.

    /usr/bin/python3 tests/oracle/gen_lesson_fixtures.py           # rewrite the fixture
    /usr/bin/python3 tests/oracle/gen_lesson_fixtures.py --check   # exit 1 if the file differs

Each experiment card on the page states numbers its run measured on the core; the browser test
(tests/browser/lesson.test.mjs) reads them from the page and compares them with these, computed
in float64 from the definitions (the variants' reference in gen_variant_fixtures.py, lesson 1's
hand-built model in attn_ref.py), never from the page's code:

  thresholds  the smallest largest-logit at which a softmax row with the max shift off turns NaN:
              ln of the largest finite float32 / float64; for float16 found by bisection on the
              binary16 path (h(s), exp in float32, h(e): overflow once h(e) rounds to inf)
  after       lesson 1's model, causal, -inf fill: smallest row sum with the mask applied after
              the softmax, mean norm of the per-head output rows before and after
  shuffle     keys and values permuted together by the page's seeded permutation (a 32-bit LCG,
              restated below as test input), no mask: max |delta output| with RoPE, ALiBi, and a
              causal mask that is not permuted
  heads       lesson 1's model, causal, per head (the Lesson view draws one head: its cards
              measure that head), with the standard scale 1/sqrt(d_k) and -inf fill:
              after     smallest row sum with the mask applied after the softmax, mean norm of
                        the output rows before and after, sigmoid before vs after
              amplify   largest row sum of sigmoid and relu, smallest of softmax1, and how far
                        each output leaves the range of the values its row may attend to
              variants  each variant card's variant against the standard computation: max
                        |delta w|, max |row sum - 1|, smallest and largest row sum, mean row
                        entropy of both (meaningful where the rows are distributions)
  lesson2     lesson 2's own example (its code, default_rng(0), T = 6, d = 8, d_k = 4, causal):
              each row's largest weight with the division by sqrt(d_k) and without it, and
              the standard deviation of its scores (divided) over the cells the mask allows
  cost        lesson 2's timing loop (X of width 512, d_k = 64, T = 256 ... 2048 and beyond):
              the multiply-adds of its matrix products, counted from their shapes, and the
              growth per doubling
  flash       bytes moved by the standard and both tiled loop orders, counted by walking the
              loops (flash_io.py): the FlashAttention card's table and small masked shapes
Tolerances (in the browser test): 1e-3 on the float32/float64 thresholds, 0.01 on float16's,
1e-4 to 1e-5 on the rest (the page computes in float32).
"""
import argparse
import json
import math
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from attn_ref import induction_model  # noqa: E402
from gen_variant_fixtures import options, reference, reference_f16  # noqa: E402
from gen_fixtures import _same  # noqa: E402
import flash_io  # noqa: E402

OUT = os.path.normpath(os.path.join(HERE, "..", "fixtures", "lesson.json"))


def lcg_permutation(n, seed):
    """Fisher-Yates driven by s <- 1664525 s + 1013904223 (mod 2^32): the page's input shuffle."""
    p = list(range(n))
    s = (seed & 0xFFFFFFFF) or 1
    for i in range(n - 1, 0, -1):
        s = (1664525 * s + 1013904223) & 0xFFFFFFFF
        j = s % (i + 1)
        p[i], p[j] = p[j], p[i]
    return p


def heads_qkv():
    x, wq, wk, wv, _, meta = induction_model()
    t, h, dk = meta["t"], meta["heads"], meta["dk"]
    split = lambda a: a.reshape(t, h, dk).transpose(1, 0, 2)  # (H, T, dk)
    return split(x @ wq), split(x @ wk), split(x @ wv), t


def row_nan(logit, precision):
    q = np.array([[[logit]]])
    k = np.array([[[1.0], [0.5], [0.25], [0.0]]])
    v = np.array([[[1.0], [2.0], [3.0], [4.0]]])
    o = options(scale=1.0, maxShift=False)
    if precision == "float16":
        r = reference_f16(q.astype(np.float32), k.astype(np.float32), v.astype(np.float32), o)
    else:
        r = reference(q, k, v, o, np.float32 if precision == "float32" else np.float64)
    return bool(np.isnan(r["rowSums"][0, 0]))


def bisect(precision):
    lo, hi = 1.0, 2048.0
    for _ in range(60):
        mid = (lo + hi) / 2
        if row_nan(mid, precision):
            hi = mid
        else:
            lo = mid
    return (lo + hi) / 2


def build():
    q, k, v, t = heads_qkv()
    out = {"thresholds": {
        "float32": math.log(float(np.finfo(np.float32).max)),
        "float64": math.log(float(np.finfo(np.float64).max)),
        "float16": bisect("float16"),
        "float32_bisected": bisect("float32"),
    }}
    causal = dict(causal=True)
    before = reference(q, k, v, options(**causal))
    after = reference(q, k, v, options(maskMode="after", **causal))
    norms = lambda o: float(np.sqrt((o ** 2).sum(-1)).mean())
    out["after"] = {"minRowSumAfter": float(after["rowSums"].min()),
                    "meanNormBefore": norms(before["output"]), "meanNormAfter": norms(after["output"])}
    perm = lcg_permutation(t, 7)
    pk, pv = k[:, perm, :], v[:, perm, :]
    delta = lambda **kw: float(np.abs(reference(q, k, v, options(**kw))["output"] - reference(q, pk, pv, options(**kw))["output"]).max())
    out["shuffle"] = {"maxDeltaNone": delta(), "maxDeltaRope": delta(position="rope"),
                      "maxDeltaAlibi": delta(position="alibi"), "maxDeltaCausal": delta(causal=True)}
    amp = lambda n: reference(q, k, v, options(normalizer=n, scale=1.0, **causal))["rowSums"]
    out["amplify"] = {"sigmoidMaxRowSum": float(amp("sigmoid").max()), "reluMaxRowSum": float(amp("relu").max()),
                      "softmax1MinRowSum": float(amp("softmax1").min())}
    out["heads"] = per_head(q, k, v, t)
    out["lesson2"] = lesson2()
    out["cost"] = cost()
    out["flash"] = flash()
    return out


VARIANT_CARDS = {"softmax1": dict(normalizer="softmax1"), "sigmoid": dict(normalizer="sigmoid"),
                 "relu": dict(normalizer="relu"), "linear": dict(normalizer="linear"),
                 "rope": dict(position="rope"), "alibi": dict(position="alibi"), "qknorm": dict(qkNorm=True)}


def range_violation(w_out, vh, ok):
    """Largest step of an output outside [min, max] of the values its row may attend to."""
    worst = 0.0
    for i in range(ok.shape[0]):
        if not ok[i].any() or np.isnan(w_out[i]).any():
            continue
        lo, hi = vh[ok[i]].min(0), vh[ok[i]].max(0)
        worst = max(worst, float(np.max(np.maximum(w_out[i] - hi, lo - w_out[i]))))
    return worst


def per_head(q, k, v, t):
    """Lesson 1's model, causal: each card's figures for one head (the head the view draws)."""
    ok = np.tril(np.ones((t, t), bool))
    std = reference(q, k, v, options(causal=True))
    after = reference(q, k, v, options(causal=True, maskMode="after"))
    sig_b = reference(q, k, v, options(causal=True, normalizer="sigmoid"))
    sig_a = reference(q, k, v, options(causal=True, normalizer="sigmoid", maskMode="after"))
    runs = {n: reference(q, k, v, options(causal=True, normalizer=n)) for n in ("sigmoid", "relu", "softmax1")}
    variants = {vid: reference(q, k, v, options(causal=True, **o)) for vid, o in VARIANT_CARDS.items()}
    ten = reference(q, k, v, options(causal=True, qkNorm=True, scale=10.0))
    heads = []
    for h in range(q.shape[0]):
        norms = lambda o: float(np.sqrt((o[h] ** 2).sum(-1)).mean())
        e = {"after": {"minRowSumAfter": float(after["rowSums"][h].min()), "meanNormBefore": norms(std["output"]),
                       "meanNormAfter": norms(after["output"]),
                       "sigmoidMaxDelta": float(np.abs(sig_b["weights"][h] - sig_a["weights"][h]).max())},
             "amplify": {"softmaxViolation": range_violation(std["output"][h], v[h], ok),
                         "sigmoidMaxRowSum": float(runs["sigmoid"]["rowSums"][h].max()),
                         "reluMaxRowSum": float(runs["relu"]["rowSums"][h].max()),
                         "softmax1MinRowSum": float(runs["softmax1"]["rowSums"][h].min()),
                         "sigmoidViolation": range_violation(runs["sigmoid"]["output"][h], v[h], ok),
                         "reluViolation": range_violation(runs["relu"]["output"][h], v[h], ok)},
             "variants": {}}
        for vid, r in variants.items():
            sums = r["rowSums"][h]
            e["variants"][vid] = {"maxDeltaWeights": float(np.abs(r["weights"][h] - std["weights"][h]).max()),
                                  "maxRowSumError": float(np.abs(sums - 1).max()),
                                  "rowSumMin": float(sums.min()), "rowSumMax": float(sums.max()),
                                  "entropyStandard": float(std["entropy"][h].mean()),
                                  "entropyChanged": float(r["entropy"][h].mean())}
        e["variants"]["qknorm"]["entropyScale10"] = float(ten["entropy"][h].mean())
        heads.append(e)
    return heads


def lesson2():
    """Lesson 2's code as printed, with and without the division by sqrt(d_k)."""
    def softmax(x, axis=-1):
        x = x - x.max(axis=axis, keepdims=True)
        e = np.exp(x)
        return e / e.sum(axis=axis, keepdims=True)

    def attention(X, Wq, Wk, Wv, divide):
        Q, K = X @ Wq, X @ Wk
        scores = Q @ K.T / (np.sqrt(Q.shape[-1]) if divide else 1.0)
        mask = np.triu(np.ones_like(scores), k=1).astype(bool)
        if divide:
            res["scoreStd"] = float(scores[~mask].std())  # the cells the mask allows
        return softmax(np.where(mask, -np.inf, scores))

    res = {}
    for name, divide in (("with", True), ("without", False)):
        T, d, dk = 6, 8, 4
        rng = np.random.default_rng(0)
        X = rng.normal(size=(T, d))
        W = attention(X, rng.normal(size=(d, dk)), rng.normal(size=(d, dk)), rng.normal(size=(d, dk)), divide)
        res[name] = [float(x) for x in W.max(-1)]
        res[name + "Above09"] = int((W.max(-1) > 0.9).sum())
    return res


def cost():
    """Multiply-adds of lesson 2's timing loop, from the shapes of its matrix products:
    X (T, 512) @ W (512, 64) three times, Q @ K.T (T, 64)(64, T), W @ V (T, T)(T, 64);
    2 flops per multiply-add. The element-wise steps (scale, mask, softmax) are left out."""
    def matmul(a, b, c):
        return 2 * a * b * c
    d, dk = 512, 64
    ts = [256, 512, 1024, 2048, 4096, 8192, 16384]
    proj = [3 * matmul(t, d, dk) for t in ts]
    quad = [matmul(t, dk, t) + matmul(t, t, dk) for t in ts]
    total = [p + q for p, q in zip(proj, quad)]
    cross = next(t for t in range(1, 10 ** 6) if matmul(t, dk, t) + matmul(t, t, dk) >= 3 * matmul(t, d, dk))
    return {"ts": ts, "projections": proj, "quadratic": quad, "total": total,
            "ratios": [total[i + 1] / total[i] for i in range(len(ts) - 1)], "crossover": cross}


FLASH_TS = [512, 1024, 2048, 4096, 8192]
SRAM_KIB = [16, 32, 48, 64, 96, 128, 164, 192, 228]


def flash():
    """The FlashAttention card's bytes (d = 64, one head, no mask, float32) for every on-chip size
    it offers, and small shapes with masks, GQA and d_k != d_v for the C++ test."""
    cases = []

    def add(kernel, tq, tk, dk, dv, sram, heads=1, kv=1, causal=False):
        if kernel == "naive":
            r = flash_io.standard(tq, tk, dk, dv, heads, kv, causal)
        else:
            r = flash_io.tiled(tq, tk, dk, dv, sram, kernel, heads, kv, causal)
        cases.append({"kernel": kernel, "tq": tq, "tk": tk, "dk": dk, "dv": dv, "heads": heads, "kvHeads": kv,
                      "causal": causal, "sramBytes": sram, **r})

    for t in FLASH_TS:
        add("naive", t, t, 64, 64, 0)
        for kib in SRAM_KIB:
            for kernel in ("q-outer", "kv-outer"):
                add(kernel, t, t, 64, 64, kib * 1024)
    for tq in (1, 5, 13, 40):
        for tk in (1, 7, 37):
            for dk, dv in ((4, 4), (3, 5)):
                for heads, kv in ((1, 1), (4, 2)):
                    d = max(dk, dv)
                    for sram in (16 * d, 40 * d + 4, 400 * d):
                        for kernel in ("q-outer", "kv-outer"):
                            add(kernel, tq, tk, dk, dv, sram, heads, kv, causal=True)
                    add("kv-outer", tq, tk, dk, dv, 40 * d + 4, heads, kv, causal=False)
    return {"cases": cases}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--check", action="store_true")
    a = ap.parse_args()
    text = json.dumps(build(), indent=1, sort_keys=True) + "\n"
    if a.check:
        if not os.path.exists(OUT):
            print("lesson.json is missing: generate it")
            sys.exit(1)
        old = open(OUT).read()
        if old == text:
            print("lesson.json is current")
            sys.exit(0)
        # NumPy picks its float64 sin, cos and exp by the CPU's vector units (AVX-512 or AVX2),
        # which differ in the last bit: a numerical check, as the other fixtures have.
        diffs = []
        _same(json.loads(old), json.loads(text), "lesson.json", diffs)
        if diffs:
            print("lesson.json differs: regenerate it\n  " + "\n  ".join(diffs[:20]))
            sys.exit(1)
        print("lesson.json is current (numerically, within 1e-9 relative)")
        sys.exit(0)
    with open(OUT, "w") as f:
        f.write(text)
    print("wrote", OUT)


if __name__ == "__main__":
    main()
