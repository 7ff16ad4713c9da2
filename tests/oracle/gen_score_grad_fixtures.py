#!/usr/bin/env python3
"""PyTorch autograd oracle for the score-gradient diagnostic: writes tests/fixtures/score_grad.json.

For each case: the mean |dL/dS| per layer x head over the causal cells, S the softmax input
(scaled, masked scores), L the masked mean cross-entropy of gen_model_fixtures.loss_fn. The
scores are captured by wrapping torch.softmax during one forward pass and retaining their grad.

  /usr/bin/python3 tests/oracle/gen_score_grad_fixtures.py           # write
  /usr/bin/python3 tests/oracle/gen_score_grad_fixtures.py --check   # compare, exit 1 if stale
"""
import json
import os
import sys

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gen_fixtures import FIXTURES, case_rng, f32_list, f64_list, to_json  # noqa: E402
from gen_model_fixtures import config, loss_fn, make_params, params_json, random_batch, to_torch  # noqa: E402


def score_grad_case(name, cfg, batch=3, std=0.5):
    rng = case_rng(name)
    p = make_params(rng, cfg, std)
    tokens, mask = random_batch(rng, cfg, batch)
    tp = to_torch(p)
    captured = []
    orig = torch.softmax

    def spy(s, dim):
        s.retain_grad()
        captured.append(s)
        return orig(s, dim=dim)

    torch.softmax = spy
    try:
        loss = loss_fn(cfg, tp, tokens, mask)
    finally:
        torch.softmax = orig
    loss.backward()
    T = cfg["seqLen"]
    cells = batch * T * (T + 1) / 2
    allowed = torch.tril(torch.ones(T, T, dtype=torch.bool))
    means = []
    for s in captured:  # (B, H, T, T) per layer
        g = torch.where(allowed, s.grad, torch.zeros_like(s.grad)).abs()
        means += [float(g[:, h].sum()) / cells for h in range(cfg["heads"])]
    wq = [float(L["wq"].grad.norm()) for L in tp["layers"]]
    return {"name": name, "config": cfg, "batch": batch, "tokens": tokens.ravel().tolist(),
            "lossMask": mask.ravel().tolist(), "params": params_json(p, f32_list),
            "loss": float(loss), "scoreGrad": f64_list(means), "wqGradNorm": f64_list(wq)}


def build_all():
    return {"description": "PyTorch autograd oracle (tests/oracle/gen_score_grad_fixtures.py)",
            "cases": [score_grad_case("sg-base", config()),
                      score_grad_case("sg-gqa", config(heads=4, kvHeads=2, dModel=16)),
                      score_grad_case("sg-saturated", config(scale=1.0, dModel=16), std=2.0)]}


def main():
    text = to_json(build_all()) + "\n"
    path = os.path.join(FIXTURES, "score_grad.json")
    if "--check" in sys.argv:
        same = os.path.exists(path) and open(path).read() == text
        print(("same     " if same else "DIFFERS  ") + path)
        return 0 if same else 1
    with open(path, "w") as f:
        f.write(text)
    print("wrote    %s (%d bytes)" % (path, len(text)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
