#!/usr/bin/env python3
"""PyTorch oracle for the learning-rate schedule (attn/tr/schedule.hpp): writes
tests/fixtures/schedule.json.

For each case, a real torch.optim.AdamW (lr = peak) driven by
  SequentialLR(opt, [LinearLR(opt, start_factor=s0, end_factor=1, total_iters=W),
                     CosineAnnealingLR(opt, T_max=N-W, eta_min=final_lr_frac*peak)], milestones=[W])
as a user would build it; the lr each opt.step() runs with is recorded for N + 5 steps
(scheduler.step() after every opt.step()), exact doubles (repr). Recorded with Debian's
torch 1.13 (python3-torch).

  /usr/bin/python3 tests/oracle/gen_schedule_fixtures.py           # write
  /usr/bin/python3 tests/oracle/gen_schedule_fixtures.py --check   # compare, exit 1 if stale
"""
import json
import os
import sys
import warnings

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from fixture_file import main as fixture_main  # noqa: E402
from gen_fixtures import FIXTURES  # noqa: E402

EXTRA = 5  # steps recorded past N: torch's cosine rises again there

# (name, W, N, s0, final_lr_frac, peak)
CASES = [
    ("warmup-10-of-100", 10, 100, 0.01, 0.1, 1e-2),
    ("no-warmup-default-start", 0, 50, 1.0 / 3.0, 0.1, 3e-3),
    ("no-warmup-start-1", 0, 40, 1.0, 0.0, 1e-2),
    ("warmup-1", 1, 20, 0.5, 0.0, 1.0),
    ("cosine-of-one-step", 5, 6, 0.25, 0.1, 0.5),
    ("no-warmup-one-step", 0, 1, 0.2, 0.5, 0.1),
    ("long", 60, 3000, 0.01, 0.1, 1e-2),
]


def record(W, N, s0, frac, peak):
    p = torch.nn.Parameter(torch.zeros(1, dtype=torch.float64))
    opt = torch.optim.AdamW([p], lr=peak)
    warm = torch.optim.lr_scheduler.LinearLR(opt, start_factor=s0, end_factor=1.0, total_iters=W)
    cos = torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=N - W, eta_min=frac * peak)
    sched = torch.optim.lr_scheduler.SequentialLR(opt, [warm, cos], milestones=[W])
    lrs = []
    for _ in range(N + EXTRA):
        lrs.append(opt.param_groups[0]["lr"])
        p.grad = torch.ones_like(p)
        opt.step()
        sched.step()
    return lrs


def make_text():
    cases = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # SequentialLR's step(0) at the milestone warns (epoch arg)
        for name, W, N, s0, frac, peak in CASES:
            cases.append({"name": name, "lr": peak, "warmup": W, "steps": N, "warmupStart": s0,
                          "finalLrFrac": frac, "lrs": record(W, N, s0, frac, peak)})
    doc = {"description": "torch.optim.lr_scheduler SequentialLR(LinearLR, CosineAnnealingLR) "
                          "lrs per optimiser step (tests/oracle/gen_schedule_fixtures.py)",
           "cases": cases}
    return json.dumps(doc, indent=1) + "\n"


if __name__ == "__main__":
    sys.exit(fixture_main(os.path.join(FIXTURES, "schedule.json"), make_text, __file__))
