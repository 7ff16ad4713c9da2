#!/usr/bin/python3
"""Lesson 1's softmax step by step in NumPy, for the core's attn::softmax_steps / core.softmaxSteps.

    /usr/bin/python3 tests/oracle/gen_softmax_steps.py           # rewrite tests/fixtures/softmax_steps.json
    /usr/bin/python3 tests/oracle/gen_softmax_steps.py --check   # exit 1 if the committed file differs

Feeds tests/cpp/test_softmax_steps.cpp and tests/js/softmax-steps.test.mjs. Format: { cases: [
{ name, dtype, rows, cols, fill: "neg_inf" | "finite" | "zero", maxShift, normalizer: "softmax" |
"softmax1", scores, allowed: [0/1], masked, shifted, exps, sums, weights } ] }; arrays row-major,
numbers as exact float64 reprs, non-finite ones as "nan", "inf", "-inf". Each step is
computed in the case's dtype, one NumPy line per step.
"""

import json
import math
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.normpath(os.path.join(HERE, "..", "fixtures", "softmax_steps.json"))


def enc(a):
    out = []
    for x in np.asarray(a, dtype=np.float64).ravel():
        x = float(x)
        out.append("nan" if math.isnan(x) else ("inf" if x == math.inf else ("-inf" if x == -math.inf else x)))
    return out


def steps(s, allowed, fill, max_shift, softmax1):
    dt = s.dtype.type
    masked = np.where(allowed, s, dt(-1e9) if fill == "finite" else dt(-np.inf)).astype(s.dtype)
    if max_shift:
        with np.errstate(invalid="ignore"):
            m = masked.max(-1, keepdims=True)
        if softmax1:
            m = np.where(m < 0, dt(0), m).astype(s.dtype)  # max(m, 0); NaN stays
    else:
        m = np.zeros((s.shape[0], 1), dtype=s.dtype)
    with np.errstate(invalid="ignore", over="ignore"):
        shifted = (masked - m).astype(s.dtype)
        e = np.exp(shifted)
    # Left to right, as the core sums (NumPy's own sum is pairwise beyond 8 columns).
    sums = np.exp(-m[:, 0]) if softmax1 else np.zeros(s.shape[0], dtype=s.dtype)
    sums = sums.astype(s.dtype)
    for j in range(s.shape[1]):
        with np.errstate(invalid="ignore", over="ignore"):
            sums = (sums + e[:, j]).astype(s.dtype)
    with np.errstate(invalid="ignore", divide="ignore"):
        w = (e / sums[:, None]).astype(s.dtype)
    if fill == "zero":
        dead = ~allowed.any(-1)
        w[dead] = 0
        sums[dead] = 0
    return masked, shifted, e, sums, w


def cases():
    rng = np.random.default_rng(7)
    out = []

    def add(name, s, allowed, fill="neg_inf", max_shift=True, softmax1=False):
        masked, shifted, e, sums, w = steps(s, allowed, fill, max_shift, softmax1)
        out.append({"name": name, "dtype": str(s.dtype), "rows": s.shape[0], "cols": s.shape[1],
                    "fill": fill, "maxShift": max_shift, "normalizer": "softmax1" if softmax1 else "softmax",
                    "scores": enc(s), "allowed": [int(x) for x in allowed.ravel()],
                    "masked": enc(masked), "shifted": enc(shifted), "exps": enc(e),
                    "sums": enc(sums), "weights": enc(w)})

    for dtype in (np.float32, np.float64):
        d = np.dtype(dtype).name
        s = (rng.standard_normal((6, 6)) * 2).astype(dtype)
        every = np.ones((6, 6), dtype=bool)
        causal = np.tril(every)
        add(f"{d} no mask", s, every)
        add(f"{d} causal", s, causal)
        pad = causal.copy()
        pad[:, 0] = False  # the first key is padding: row 0 has no allowed key
        for fill in ("neg_inf", "finite", "zero"):
            add(f"{d} causal + padding, fill {fill}", s, pad, fill)
        big = (s * 400).astype(dtype)
        add(f"{d} huge logits without the max shift (overflow)", big, causal, max_shift=False)
        add(f"{d} huge logits with the max shift", big, causal)
        add(f"{d} softmax1, causal", s, causal, softmax1=True)
        add(f"{d} softmax1, negative scores", (s - 10).astype(dtype), causal, softmax1=True)
        nan = s.copy()
        nan[2, 1] = np.nan
        add(f"{d} a NaN score", nan, causal)
        wide = rng.standard_normal((3, 11)).astype(dtype)
        add(f"{d} 3 x 11 (not square)", wide, np.ones((3, 11), dtype=bool))
    return out


if __name__ == "__main__":
    sys.path.insert(0, HERE)
    from fixture_file import main  # noqa: E402

    sys.exit(main(OUT, lambda: json.dumps({"cases": cases()}, indent=1) + "\n", __file__))
