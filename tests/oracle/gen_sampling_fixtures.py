#!/usr/bin/python3
"""Next-token sampling with temperature, top-k and top-p, written from the formulas
(docs/train-api.md, tr.generate) with the documented SplitMix64 (attn_ref.SplitMix64).

    /usr/bin/python3 tests/oracle/gen_sampling_fixtures.py           # rewrite tests/fixtures/sampling.json
    /usr/bin/python3 tests/oracle/gen_sampling_fixtures.py --check   # exit 1 if the committed file differs

Feeds tests/cpp/test_decode.cpp (attn::tr::sample_token) and tests/js/sampling.test.mjs
(lib.sampleToken through wasm). Format: { cases: [ { name, logits: [V float32 values], temperature,
topK, topP, u, token, topIds: [min(5, V)], topProbs: [min(5, V)] } ] }.
"""

import json
import math
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import attn_ref as ref  # noqa: E402
from fixture_file import main  # noqa: E402

OUT = os.path.normpath(os.path.join(HERE, "..", "fixtures", "sampling.json"))


def sample(logits, temperature, top_k, top_p, u):
    """(token, top ids, top probabilities). logits: float32 (V,). All arithmetic in doubles."""
    v = len(logits)
    lg = [float(x) for x in logits]
    mx = max(lg)
    arg = lg.index(mx)  # first maximum
    greedy = not temperature > 0
    t = 1.0 if greedy else temperature
    w = [math.exp((x - mx) / t) for x in lg]
    order = sorted(range(v), key=lambda j: (-w[j], j))  # most probable first, ties: smaller id
    keep = set(range(v))
    if not greedy:
        k = top_k if 0 < top_k < v else v
        cand = order[:k]
        if top_p < 1:
            in_k = set(cand)
            sum_k = 0.0
            for j in range(v):  # id order
                if j in in_k:
                    sum_k += w[j]
            run, m = 0.0, k
            for r in range(k):
                run += w[cand[r]] / sum_k
                if run >= top_p:
                    m = r + 1
                    break
            cand = cand[:m]
        keep = set(cand)
    total = 0.0
    for j in range(v):
        if j in keep:
            total += w[j]
    n_top = min(5, v)
    ids = order[:n_top]
    probs = [w[j] / total if j in keep else 0.0 for j in ids]
    if greedy:
        return arg, ids, probs
    target, acc, last = u * total, 0.0, arg
    for j in range(v):
        if j not in keep:
            continue
        acc += w[j]
        last = j
        if target < acc:
            return j, ids, probs
    return last, ids, probs


def make_cases():
    rng = np.random.default_rng(20261205)
    draws = ref.SplitMix64(77)
    cases = []
    vs = [1, 2, 3, 5, 8, 17, 40, 96]
    temps = [0.0, 1e-4, 0.05, 0.5, 0.8, 1.0, 2.5]
    tops_p = [1.0, 0.95, 0.9, 0.5, 0.2, 1e-9]
    for i in range(240):
        v = vs[i % len(vs)]
        scale = [0.5, 2.0, 6.0][i % 3]
        x = rng.standard_normal(v) * scale
        if i % 4 == 1:
            x = np.round(x)  # ties among the logits
        if i % 16 == 5:
            x = np.zeros(v)  # all equal
        logits = x.astype(np.float32)
        temperature = temps[(i // 3) % len(temps)]
        kk = [0, 1, 2, 3, 5, v, v + 3][(i // 2) % 7]
        top_p = tops_p[(i // 5) % len(tops_p)]
        u = draws.uniform()
        tok, ids, probs = sample(logits, temperature, kk, top_p, u)
        cases.append({
            "name": f"case{i} V={v} T={temperature} k={kk} p={top_p}",
            "logits": [float(a) for a in logits],
            "temperature": temperature, "topK": kk, "topP": top_p, "u": u,
            "token": tok, "topIds": ids, "topProbs": probs,
        })
    return cases


def make_text():
    return json.dumps({"cases": make_cases()}, separators=(",", ":")) + "\n"


if __name__ == "__main__":
    sys.exit(main(OUT, make_text, __file__))
