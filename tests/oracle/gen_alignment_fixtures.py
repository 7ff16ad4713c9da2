"""NumPy oracle for the core's hand-built cross-attention example (attn::alignment_example,
core.example('alignment')), written from its description, independent of the C++:

    queries: one sentence (English), keys/values: another (French); a bilingual lexicon maps
    words to concepts (case-insensitive, ASCII letters folded); a word not in it is its own
    concept. Concept ids 0..C-1 in order of first appearance, queries then keys.
    d_k = max(12, C, T_q, T_k), d_model = 2 d_k, two heads, W_v = W_o = I, not causal.
    token row: one-hot concept (dims 0..C-1) + one-hot position (dim d_k + position)
    head 1: W_q = sharpness I, W_k = I on the concept dims
    head 2: W_q[d_k + i, d_k + j(i)] = sharpness, j(i) = round(i (T_k-1)/(T_q-1)) with halves
            rounding up (0 when T_q = 1); W_k = I on the position dims d_k..d_k+T_k-1
    cross attention: Q = X W_q, K = X_kv W_k, V = X_kv W_v; per head softmax(Q K^T / sqrt(d_k)) V,
    merged, times W_o.

The lexicon below is the oracle's own statement of the expected concepts. Writes
tests/fixtures/alignment.json (--check: exit 1 if it is stale; floats compared within 1e-9
relative)."""

import json
import math
import os
import sys
from fractions import Fraction

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.normpath(os.path.join(HERE, "..", "fixtures", "alignment.json"))

LEXICON = {
    "DET": "the le la les l'",
    "A": "a an un une",
    "CAT": "cat chat",
    "DOG": "dog chien",
    "BIRD": "bird oiseau",
    "SIT": "sat sits assis assise",
    "BE": "was is were était est étaient",
    "SLEEP": "sleeps slept dort dormait",
    "SEE": "sees saw voit voyait",
    "ON": "on sur",
    "IN": "in dans",
    "UNDER": "under sous",
    "WITH": "with avec",
    "AND": "and et",
    "BECAUSE": "because parce",
    "MAT": "mat tapis",
    "HOUSE": "house maison",
    "GARDEN": "garden jardin",
    "BLACK": "black noir noire",
    "WHITE": "white blanc blanche",
    "SMALL": "small little petit petite",
    "BIG": "big grand grande",
    "TIRED": "tired fatigué fatiguée",
    "HE": "he il",
    "SHE": "she elle",
}
WORD_TO_CONCEPT = {w: c for c, words in LEXICON.items() for w in words.split()}


def fold(word):
    return "".join(chr(ord(ch) + 32) if "A" <= ch <= "Z" else ch for ch in word)


def concept(word):
    w = fold(word)
    return WORD_TO_CONCEPT.get(w, "word:" + w)


def round_half_up(x):
    return math.floor(x + Fraction(1, 2))


def alignment_model(queries, keys, sharpness):
    tq, tk = len(queries), len(keys)
    ids = {}
    for w in queries + keys:
        ids.setdefault(concept(w), len(ids))
    c = len(ids)
    dk = max(12, c, tq, tk)
    d = 2 * dk
    x, x_kv = np.zeros((tq, d)), np.zeros((tk, d))
    for i, w in enumerate(queries):
        x[i, ids[concept(w)]] = 1
        x[i, dk + i] = 1
    for j, w in enumerate(keys):
        x_kv[j, ids[concept(w)]] = 1
        x_kv[j, dk + j] = 1
    wq, wk = np.zeros((d, d)), np.zeros((d, d))
    for a in range(c):
        wq[a, a] = sharpness
        wk[a, a] = 1
    for i in range(tq):
        j = 0 if tq == 1 else round_half_up(Fraction(i * (tk - 1), tq - 1))
        wq[dk + i, dk + j] = sharpness
    for j in range(tk):
        wk[dk + j, dk + j] = 1
    return x, x_kv, wq, wk, np.eye(d), np.eye(d), dk


def cross_mha(x, x_kv, wq, wk, wv, wo, heads, dk):
    mm = lambda a, b: np.einsum("ij,jk->ik", a, b)  # noqa: E731
    tq, tk = x.shape[0], x_kv.shape[0]
    q = mm(x, wq).reshape(tq, heads, dk).transpose(1, 0, 2)
    k = mm(x_kv, wk).reshape(tk, heads, dk).transpose(1, 0, 2)
    v = mm(x_kv, wv).reshape(tk, heads, dk).transpose(1, 0, 2)
    weights = np.zeros((heads, tq, tk))
    y = np.zeros((heads, tq, dk))
    for h in range(heads):
        s = mm(q[h], k[h].T) / np.sqrt(dk)
        e = np.exp(s - s.max(1, keepdims=True))
        weights[h] = e / e.sum(1, keepdims=True)
        y[h] = mm(weights[h], v[h])
    merged = y.transpose(1, 0, 2).reshape(tq, heads * dk)
    return {"weights": weights, "headOutputs": y, "output": mm(merged, wo)}


def flat(a):
    return [float(v) for v in np.asarray(a, dtype=np.float64).ravel()]


def case(name, queries, keys, sharpness=14.0):
    x, x_kv, wq, wk, wv, wo, dk = alignment_model(queries.split(), keys.split(), sharpness)
    f32 = lambda a: np.asarray(a, np.float32).astype(np.float64)  # noqa: E731 (the core's inputs)
    r = cross_mha(f32(x), f32(x_kv), f32(wq), f32(wk), f32(wv), f32(wo), 2, dk)
    return {
        "name": name, "queries": queries.split(), "keys": keys.split(), "sharpness": sharpness,
        "t": x.shape[0], "tk": x_kv.shape[0], "dModel": 2 * dk, "heads": 2, "dk": dk, "dv": dk,
        "causal": False,
        "x": flat(x), "xKv": flat(x_kv), "wq": flat(wq), "wk": flat(wk), "wv": flat(wv), "wo": flat(wo),
        "expect": {key: flat(val) for key, val in r.items()},
    }


def cases():
    return [
        case("the cat sat on the mat / le chat était assis sur le tapis (T_q 6, T_k 7)",
             "the cat sat on the mat", "le chat était assis sur le tapis"),
        case("the black cat / le chat noir (adjective after the noun)", "the black cat", "le chat noir"),
        case("an unknown name matches itself, case-insensitively (T_q 4, T_k 3, sharpness 8)",
             "Alice saw the Dog", "alice voit chien", 8.0),
    ]


def same(a, b, where="$"):
    """None when b equals a, floats within 1e-9 relative (NumPy's float64 exp takes another path
    on AVX-512 CPUs than on AVX2 ones, and the two differ in the last bit); else where they differ."""
    if isinstance(a, dict) and isinstance(b, dict):
        if a.keys() != b.keys():
            return where + ": keys"
        return next((d for k in a if (d := same(a[k], b[k], where + "." + k))), None)
    if isinstance(a, list) and isinstance(b, list):
        if len(a) != len(b):
            return where + ": length"
        return next((d for i, (x, y) in enumerate(zip(a, b)) if (d := same(x, y, f"{where}[{i}]"))), None)
    if isinstance(a, float) and isinstance(b, (int, float)) and not isinstance(b, bool):
        return None if abs(a - b) <= 1e-9 * max(abs(a), abs(b)) + 1e-15 else where
    return None if a == b and type(a) is type(b) else where


def main():
    text = json.dumps({"cases": cases()}, indent=1, ensure_ascii=False) + "\n"
    if "--check" in sys.argv[1:]:
        with open(OUT, encoding="utf-8") as f:
            diff = same(json.loads(text), json.load(f))
        if diff:
            print(f"{OUT} is stale at {diff}: run /usr/bin/python3 {os.path.relpath(__file__)}", file=sys.stderr)
            return 1
        return 0
    with open(OUT, "w", encoding="utf-8") as f:
        f.write(text)
    print(f"wrote {OUT}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
