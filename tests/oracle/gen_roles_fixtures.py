"""NumPy oracle for the core's pattern scores (attn/roles.hpp, core.patternScores): random causal
weight rows over token sequences with repeats, and lesson 1's two hand-built heads, with each
head's previous-token, induction and duplicate-token score computed here from the definition:
per sequence, the share of the weight of the rows that hold a pattern cell that falls on those
cells. Writes tests/fixtures/roles.json (--check: exit 1 if it is stale)."""

import json
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.normpath(os.path.join(HERE, "..", "fixtures", "roles.json"))


def patterns(tok):
    """(3, T, T) 0/1 cells: previous-token, induction, duplicate-token."""
    T = len(tok)
    tok = np.asarray(tok)
    i = np.arange(T)[:, None]
    j = np.arange(T)[None, :]
    prev = (j == i - 1)
    same_before = (tok[None, :] == tok[:, None]) & (j < i)  # (i, j): j < i, same token
    dup = same_before
    ind = np.zeros((T, T), dtype=bool)
    ind[:, 1:] = same_before[:, :-1]  # the key after an earlier occurrence
    return np.stack([prev, ind, dup]).astype(np.float64)


def scores(tok, w):
    """w (H, T, T) → (3, H): one sequence, so the mean over sequences is this sequence's ratio."""
    pats = patterns(tok)
    T = len(tok)
    causal = np.tril(np.ones((T, T)))
    out = np.zeros((3, w.shape[0]))
    for h in range(w.shape[0]):
        a = w[h].astype(np.float64)
        rowsum = (a * causal).sum(1)
        for k in range(3):
            rows = pats[k].any(1)
            den = rowsum[rows].sum()
            out[k, h] = (a * pats[k])[rows].sum() / den if rows.any() and den > 0 else 0.0
    return out


def causal_softmax(rng, H, T, sharp):
    s = rng.normal(size=(H, T, T)) * sharp
    s = np.where(np.tril(np.ones((T, T))) > 0, s, -np.inf)
    e = np.exp(s - s.max(-1, keepdims=True))
    return (e / e.sum(-1, keepdims=True)).astype(np.float32)


def lesson1():
    """Lesson 1's heads on its sentence: head 1 matches the same word, head 2 the previous position
    (sharpness 14, scale 1/sqrt(d_k) with d_k = 12), softmax over the causal keys."""
    words = "the cat sat on the mat because the cat was tired".split()
    vocab = sorted(set(words))
    T = len(words)
    ids = np.array([vocab.index(x) for x in words])
    s1 = 14.0 * (ids[:, None] == ids[None, :])
    s2 = 14.0 * (np.arange(T)[None, :] == np.arange(T)[:, None] - 1)
    s = np.stack([s1, s2]) / np.sqrt(12.0)
    s = np.where(np.tril(np.ones((T, T))) > 0, s, -np.inf)
    e = np.exp(s - s.max(-1, keepdims=True))
    return ids, (e / e.sum(-1, keepdims=True)).astype(np.float32)


def cases():
    rng = np.random.default_rng(20261205)
    out = []

    def add(name, tok, w):
        sc = scores(tok, w)
        out.append({"name": name, "tokens": [int(x) for x in tok], "heads": int(w.shape[0]),
                    "weights": [float(x) for x in w.ravel()],
                    "previousToken": sc[0].tolist(), "induction": sc[1].tolist(), "duplicateToken": sc[2].tolist()})

    ids, w = lesson1()
    add("lesson 1's hand-built heads", ids, w)
    add("a repeated sequence, soft rows", np.array([3, 1, 4, 1, 5, 3, 1, 4, 1, 5]), causal_softmax(rng, 3, 10, 1.0))
    add("no repeated token (induction and duplicate 0)", np.arange(7), causal_softmax(rng, 2, 7, 2.0))
    add("sharp rows", rng.integers(0, 4, 12), causal_softmax(rng, 4, 12, 6.0))
    add("one token", np.array([0]), np.ones((1, 1, 1), dtype=np.float32))
    return out


if __name__ == "__main__":
    sys.path.insert(0, HERE)
    from fixture_file import main  # noqa: E402

    sys.exit(main(OUT, lambda: json.dumps({"cases": cases()}, indent=1) + "\n", __file__))
