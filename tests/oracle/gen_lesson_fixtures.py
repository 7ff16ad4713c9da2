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
  amplify     lesson 1's model, causal, scale 1: largest row sum of sigmoid and relu, smallest of
              softmax1
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
    return out


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
