#!/usr/bin/python3
"""What NumPy's print() writes for the arrays the Lesson view prints under its lines.

    /usr/bin/python3 tests/oracle/gen_numpy_print.py           # rewrite tests/fixtures/numpy_print.json
    /usr/bin/python3 tests/oracle/gen_numpy_print.py --check   # exit 1 if the committed file differs

Feeds tests/web/numpy-print.test.ts (web/src/shared/numpy-print.ts must write the same text).
Default print options throughout. Format: { numpy: version, cases: [ { name, dtype: "float32" |
"float64", shape: [rows, cols] | [n], values: [...] (row-major; exact float64 reprs, non-finite
numbers as "NaN", "Infinity", "-Infinity"), text: str(a) } ], lesson2: [ { line, expr, text } ] }.

`lesson2` is what the Lesson view must print under its lines for lesson 2's X, W_q, W_k, W_v
(student_arrays.lesson2(), the .npz the browser test loads, float64) with line 1 at float64 and a
causal mask: lesson 1's lines in NumPy, one print per step (tests/browser/lesson.test.mjs).
"""

import json
import math
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.normpath(os.path.join(HERE, "..", "fixtures", "numpy_print.json"))


def encode(x):
    x = float(x)
    if math.isnan(x):
        return "NaN"
    if math.isinf(x):
        return "Infinity" if x > 0 else "-Infinity"
    return repr(x)


def softmax(s):
    s = s - s.max(-1, keepdims=True)
    e = np.exp(s)
    return e / e.sum(-1, keepdims=True)


def cases():
    out = []

    def add(name, a):
        a = np.asarray(a)
        out.append({"name": name, "dtype": str(a.dtype), "shape": list(a.shape),
                    "values": [encode(x) for x in a.ravel()], "text": str(a)})

    rng = np.random.default_rng(20261204)
    for dtype in (np.float32, np.float64):
        d = np.dtype(dtype).name
        x = rng.standard_normal((6, 8)).astype(dtype)
        wq = rng.standard_normal((8, 4)).astype(dtype)
        wk = rng.standard_normal((8, 4)).astype(dtype)
        q, k = x @ wq, x @ wk
        s = (q @ k.T / np.sqrt(4)).astype(dtype)
        add(f"{d} scores S (6, 6)", s)
        causal = np.tril(np.ones((6, 6), dtype=bool))
        sm = np.where(causal, s, -np.inf).astype(dtype)
        add(f"{d} masked scores with -inf", sm)
        shifted = (sm - sm.max(-1, keepdims=True)).astype(dtype)
        add(f"{d} S - max", shifted)
        e = np.exp(shifted).astype(dtype)
        add(f"{d} exp(S - max) (zeros and tiny values: scientific)", e)
        w = softmax(sm).astype(dtype)
        add(f"{d} causal weights W", w)
        add(f"{d} row sums as a vector", w.sum(-1))
        add(f"{d} row sums keepdims (6, 1)", w.sum(-1, keepdims=True))
        add(f"{d} output W @ V (6, 4)", (w @ rng.standard_normal((6, 4)).astype(dtype)).astype(dtype))
        add(f"{d} uniform weights", np.full((4, 4), 0.25, dtype=dtype))
        add(f"{d} identity", np.eye(3, dtype=dtype))
        add(f"{d} thirds", np.full((3, 3), 1 / 3, dtype=dtype))
        add(f"{d} a row of NaN", np.array([[0.5, 0.5], [np.nan, np.nan]], dtype=dtype))
        add(f"{d} all NaN", np.full((2, 2), np.nan, dtype=dtype))
        add(f"{d} inf and -inf", np.array([[1.5, np.inf], [-np.inf, -2.25]], dtype=dtype))
        add(f"{d} negative zero", np.array([[-0.0, 1.0], [0.0, -1.0]], dtype=dtype))
        add(f"{d} large (>= 1e8: scientific)", np.array([[1e8, 2.5], [-3.0, 4e9]], dtype=dtype))
        add(f"{d} spread > 1000 (scientific)", np.array([[1e-3, 2.0], [3.0, 4.0]], dtype=dtype))
        add(f"{d} spread < 1000 (positional)", np.array([[1e-3, 0.5], [0.25, 0.9]], dtype=dtype))
        add(f"{d} huge logits", np.array([[1000.0, -1000.0, 0.0]], dtype=dtype))
        add(f"{d} exact tie at the 8th digit (2**-9)", np.array([[2.0 ** -9, 0.5]], dtype=dtype))
        add(f"{d} wide rows wrap at 75 (6, 12)", rng.standard_normal((6, 12)).astype(dtype))
        add(f"{d} wide vector wraps", rng.standard_normal(20).astype(dtype))
        add(f"{d} T = 40 is summarized (> 1000 values)", softmax(rng.standard_normal((40, 40))).astype(dtype))
        add(f"{d} (33, 31) summarized", rng.standard_normal((33, 31)).astype(dtype) * 100)
        add(f"{d} (2, 600) summarized columns only", rng.standard_normal((2, 600)).astype(dtype))
        add(f"{d} (600, 2) summarized rows only", rng.standard_normal((600, 2)).astype(dtype))
        for i in range(12):
            scale = 10.0 ** rng.integers(-6, 9)
            a = (rng.standard_normal((rng.integers(1, 9), rng.integers(1, 9))) * scale).astype(dtype)
            add(f"{d} random {i} (scale {scale:g})", a)
        add(f"{d} integers", np.array([[1, 20, 300], [4000, 5, 6]], dtype=dtype))
    return out


def lesson2_prints():
    sys.path.insert(0, HERE)
    from student_arrays import lesson2  # noqa: E402

    a = lesson2()
    Q, K, V = a["X"] @ a["W_q"], a["X"] @ a["W_k"], a["X"] @ a["W_v"]
    S = (Q @ K.T) / np.sqrt(Q.shape[1])
    out = [{"line": "scores", "expr": "S", "text": str(S)}]
    allowed = np.tril(np.ones(S.shape, dtype=bool))
    S = np.where(allowed, S, -np.inf)
    out.append({"line": "mask", "expr": "S", "text": str(S)})
    S = S - S.max(-1, keepdims=True)
    out.append({"line": "shift", "expr": "S", "text": str(S)})
    E = np.exp(S)
    out.append({"line": "norm", "expr": "exp(S)", "text": str(E)})
    sums = E.sum(-1, keepdims=True)
    out.append({"line": "norm", "expr": "exp(S).sum(-1, keepdims=True)", "text": str(sums)})
    W = E / sums
    out.append({"line": "norm", "expr": "W", "text": str(W)})
    out.append({"line": "norm", "expr": "W.sum(-1)", "text": str(W.sum(-1))})
    out.append({"line": "out", "expr": "O", "text": str(W @ V)})
    return out


def build():
    return {"numpy": np.__version__, "cases": cases(), "lesson2": lesson2_prints()}


if __name__ == "__main__":
    sys.path.insert(0, HERE)
    from fixture_file import main  # noqa: E402

    sys.exit(main(OUT, lambda: json.dumps(build(), indent=1, ensure_ascii=False) + "\n", __file__))
