"""The student's side of the "Your arrays" browser tests: lesson 2's example computed with NumPy
from the definition of scaled dot-product attention (not from the page's code), and the ways a
student hands it over: what print() shows, .npy / .npz files, and the notebook helper's output.

    /usr/bin/python3 tests/oracle/student_arrays.py OUT_DIR [PAGE_URL]

writes OUT_DIR/lesson2.json (arrays as float64 lists, and the printed texts), OUT_DIR/*.npy|npz,
and, with PAGE_URL, OUT_DIR/helper_*.html (ap.show()'s HTML: W, a large W, lesson 2's X, W_q…
called as the helper's docstring shows, and Q, K, V with lesson 2's mask of *forbidden* keys).
"""
import json
import os
import sys
import warnings

import numpy as np


def causal_attention(X, Wq, Wk, Wv):
    Q, K, V = X @ Wq, X @ Wk, X @ Wv
    s = Q @ K.T / np.sqrt(Q.shape[1])
    T = s.shape[0]
    allowed = np.arange(T)[None, :] <= np.arange(T)[:, None]  # key j <= query i
    s = np.where(allowed, s, -np.inf)
    e = np.exp(s - s.max(axis=1, keepdims=True))
    return Q, K, V, e / e.sum(axis=1, keepdims=True)


def lesson2():
    T, d, dk = 6, 8, 4
    rng = np.random.default_rng(0)
    X = rng.normal(size=(T, d))
    Wq, Wk, Wv = (rng.normal(size=(d, dk)) for _ in range(3))
    Q, K, V, W = causal_attention(X, Wq, Wk, Wv)
    return dict(X=X, W_q=Wq, W_k=Wk, W_v=Wv, Q=Q, K=K, V=V, W=W)


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    a = lesson2()
    W = a["W"]
    texts = {"round2": str(np.round(W, 2)), "plain": str(W), "repr": repr(W)}
    with np.printoptions(precision=17, floatmode="unique"):
        texts["qkv"] = "\n".join("%s = %s" % (n, repr(a[n])) for n in ("Q", "K", "V"))
    wrong = W.copy()
    wrong[3, 1] += 0.2
    texts["wrong"] = str(np.round(wrong, 2))
    nan = W.copy()
    nan[3, 2] = np.nan  # one NaN cell in an allowed place: nothing is masked there
    texts["nan"] = str(np.round(nan, 2))
    for n in ("Q", "K", "V"):  # dropped as three files
        np.save(os.path.join(out, n + ".npy"), a[n])
    np.savez(os.path.join(out, "lesson2_inputs.npz"), X=a["X"], W_q=a["W_q"], W_k=a["W_k"], W_v=a["W_v"])
    rng = np.random.default_rng(1)
    big = rng.random((160, 160))
    big /= big.sum(axis=1, keepdims=True)
    np.save(os.path.join(out, "big_w.npy"), big.astype(np.float32))
    with open(os.path.join(out, "lesson2.json"), "w") as f:
        json.dump({"arrays": {k: v.tolist() for k, v in a.items()}, "texts": texts,
                   "big": big.astype(np.float32).astype(np.float64).ravel().tolist()}, f)
    sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "web", "public"))
    import attention_playground as ap
    with open(os.path.join(out, "links.json"), "w") as f:
        json.dump({"W": ap.encode_array(W), "big": ap.encode_array(big.astype(np.float32)),
                   **{ap.KEYS[n]: ap.encode_array(a[n]) for n in ("X", "W_q", "W_k", "W_v")}}, f)
    if len(sys.argv) > 2:
        small = ap.show(W, url=sys.argv[2], tokens=["t%d" % i for i in range(6)])
        large = ap.show(big.astype(np.float32), url=sys.argv[2])
        assert small.in_link and not large.in_link
        # As the helper's docstring shows it: no heads= (lesson 2's one head).
        proj = ap.show(X=a["X"], W_q=a["W_q"], W_k=a["W_k"], W_v=a["W_v"], url=sys.argv[2],
                       tokens=["t%d" % i for i in range(6)])
        # Lesson 2's mask marks the forbidden keys; the helper warns, the page says why rows are NaN.
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            inverted = ap.show(Q=a["Q"], K=a["K"], V=a["V"], mask=np.triu(np.ones((6, 6)), k=1).astype(bool),
                               url=sys.argv[2])
        assert any("~mask" in str(w.message) for w in caught), [str(w.message) for w in caught]
        for name, p in (("helper_small.html", small), ("helper_large.html", large), ("helper_proj.html", proj),
                        ("helper_inverted.html", inverted)):
            with open(os.path.join(out, name), "w") as f:
                f.write("<!doctype html><meta charset=utf-8><link rel=icon href='data:,'><title>notebook output</title><body style='margin:0'>"
                        + p._repr_html_() + "</body>")


if __name__ == "__main__":
    main()
