#!/usr/bin/python3
"""Attention-gradient fixtures (tests/fixtures/backward.json) from PyTorch autograd.

    /usr/bin/python3 tests/oracle/gen_backward_fixtures.py           # rewrite the fixture
    /usr/bin/python3 tests/oracle/gen_backward_fixtures.py --check   # regenerate in memory,
                                                                     # exit 1 if it differs

An oracle independent of the C++ code: the lesson's formulation written out in torch
(float64), differentiated by autograd,

    scores  = (Q @ K^T) * scale                       K, V repeated over the query heads (GQA)
    scores  = scores.masked_fill(~allowed, fill)      fill: -inf ('neg_inf', 'zero') or -1e9
    weights = softmax(scores, -1)
    output  = weights @ V,          L = sum(output * dO),    dQ, dK, dV = autograd of L

'zero' policy: a fully masked row's scores are replaced by 0 BEFORE the softmax and its
weights then set to 0 (replacing NaN weights after the softmax would still poison the
gradient through torch.where's unused branch). Under 'neg_inf' a fully masked row has NaN
weights: PyTorch then gives NaN dV for every key of the K/V head and, through masked_fill's
backward, zero dQ for that row; the fixtures record exactly that.

torch 1.13 (Debian python3-torch) has no F.scaled_dot_product_attention; none is needed.
Inputs: numpy.random.default_rng(crc32(case name)), rounded to float32 and stored as float32
(as gen_fixtures.py does), so float32 and float64 C++ runs see the very same numbers.
Dropout is not in these fixtures: it is checked by finite differences with the mask fixed
(tests/cpp/test_backward.cpp), because the keep mask is this project's own hash.
"""

import argparse
import json
import os
import sys

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gen_fixtures as gf  # noqa: E402  (JSON writer and input conventions only)

HERE = os.path.dirname(os.path.abspath(__file__))
FIXTURES = os.path.normpath(os.path.join(HERE, "..", "fixtures"))
FNAME = "backward.json"
FINITE_FILL = -1e9

torch.set_default_dtype(torch.float64)


def allowed(tq, tk, causal, window, key_padding, mask):
    """(T_q, T_k) bool: causal bottom-right aligned, window, key padding, custom, ANDed."""
    i = torch.arange(tq)[:, None]
    j = torch.arange(tk)[None, :]
    diag = i + (tk - tq)
    ok = torch.ones(tq, tk, dtype=torch.bool)
    if causal:
        ok &= j <= diag
    if window:
        ok &= j > diag - window
    if key_padding is not None:
        ok &= torch.tensor(np.asarray(key_padding) != 0)[None, :]
    if mask is not None:
        ok &= torch.tensor(np.asarray(mask).reshape(tq, tk) != 0)
    return ok


def torch_attention_grads(q, k, v, dout, heads, kv_heads, causal, window, key_padding, mask,
                          scale, fill):
    q = torch.tensor(q, dtype=torch.float64, requires_grad=True)
    k = torch.tensor(k, dtype=torch.float64, requires_grad=True)
    v = torch.tensor(v, dtype=torch.float64, requires_grad=True)
    dout = torch.tensor(dout, dtype=torch.float64)
    tq, dk = q.shape[1], q.shape[2]
    tk = k.shape[1]
    group = heads // kv_heads
    kr = k.repeat_interleave(group, dim=0)  # (H, T_k, d_k): autograd sums the shared heads
    vr = v.repeat_interleave(group, dim=0)
    sc = 1.0 / np.sqrt(dk) if scale is None else scale
    scores = (q @ kr.transpose(-1, -2)) * sc
    ok = allowed(tq, tk, causal, window, key_padding, mask)
    dead = ~ok.any(dim=-1)  # (T_q,) fully masked rows
    if fill == "finite":
        scores = scores.masked_fill(~ok, FINITE_FILL)
    else:
        scores = scores.masked_fill(~ok, float("-inf"))
    if fill == "zero":
        scores = torch.where(dead[None, :, None], torch.zeros_like(scores), scores)
    weights = torch.softmax(scores, dim=-1)
    if fill == "zero":
        weights = torch.where(dead[None, :, None], torch.zeros_like(weights), weights)
    out = weights @ vr
    (out * dout).sum().backward()
    return out.detach().numpy(), q.grad.numpy(), k.grad.numpy(), v.grad.numpy(), int(
        dead.sum()) * heads


def backward_case(name, family, heads=1, kv_heads=None, tq=4, tk=None, dk=4, dv=None,
                  causal=False, window=0, key_padding=None, mask=None, scale=None,
                  mask_fill="neg_inf", amp=1.0, q=None, k=None):
    kv_heads = heads if kv_heads is None else kv_heads
    tk = tq if tk is None else tk
    dv = dk if dv is None else dv
    rng = gf.case_rng(name)
    q = gf.gaussian32(rng, (heads, tq, dk), amp) if q is None else np.asarray(q, np.float32)
    k = gf.gaussian32(rng, (kv_heads, tk, dk), amp) if k is None else np.asarray(k, np.float32)
    v = gf.gaussian32(rng, (kv_heads, tk, dv))
    dout = gf.gaussian32(rng, (heads, tq, dv))
    out, dq, dk_, dv_, dead = torch_attention_grads(
        q.astype(np.float64), k.astype(np.float64), v.astype(np.float64),
        dout.astype(np.float64), heads, kv_heads, causal, window, key_padding, mask, scale,
        mask_fill)
    if family == "large_logits":
        s = np.einsum("hid,hjd->hij", q.astype(np.float64),
                      np.repeat(k.astype(np.float64), heads // kv_heads, axis=0))
        s *= (1.0 / np.sqrt(dk)) if scale is None else scale
        assert np.abs(s).max() >= 300, (name, np.abs(s).max())
    return {
        "name": name,
        "family": family,
        "opts": {
            "heads": heads, "kvHeads": kv_heads, "tq": tq, "tk": tk, "dk": dk, "dv": dv,
            "causal": causal, "window": window,
            "keyPadding": None if key_padding is None else [int(b) for b in key_padding],
            "mask": None if mask is None else [int(b) for b in np.asarray(mask).ravel()],
            "scale": None if scale is None else gf.f64(scale),
            "maskFill": mask_fill,
        },
        "q": gf.f32_list(q), "k": gf.f32_list(k), "v": gf.f32_list(v),
        "dOut": gf.f32_list(dout),
        "expect": {
            "output": gf.f64_list(out), "dq": gf.f64_list(dq), "dk": gf.f64_list(dk_),
            "dv": gf.f64_list(dv_), "fullyMaskedRows": dead,
        },
    }


def padding(tk, zeros):
    p = np.ones(tk, dtype=np.uint8)
    p[list(zeros)] = 0
    return p


def cases():
    out = []
    add = lambda *a, **kw: out.append(backward_case(*a, **kw))

    add("basic_h1_t4", "basic", heads=1, tq=4, dk=4)
    add("basic_h2_t8_dk16_dv8_causal", "basic", heads=2, tq=8, dk=16, dv=8, causal=True)

    # ---- masks: every non-empty combination of causal, window, padding, custom (H=2, T=6)
    T = 6
    kinds = ["causal", "window", "padding", "custom"]
    mrng = np.random.default_rng(777)
    pad = padding(T, [4, 5])
    custom = None
    while custom is None:  # a custom mask that leaves every row a key under all kinds
        cand = (mrng.random((T, T)) < 0.75).astype(np.uint8)
        cand[np.arange(T), np.minimum(np.arange(T), 3)] = 1
        if allowed(T, T, True, 3, pad, cand).any(dim=1).all():
            custom = cand
    for bits in range(1, 16):
        on = [kinds[b] for b in range(4) if bits >> b & 1]
        add("masks_" + "_".join(on), "masks", heads=2, tq=T, dk=4, dv=3,
            causal="causal" in on, window=3 if "window" in on else 0,
            key_padding=pad if "padding" in on else None, mask=custom if "custom" in on else None)
    add("masks_window1_causal", "masks", heads=1, tq=5, dk=3, causal=True, window=1)
    add("masks_window_tq3_tk8", "masks", heads=1, tq=3, tk=8, dk=3, window=2)
    add("masks_padding_middle", "masks", heads=2, tq=5, dk=4, key_padding=padding(5, [1, 3]))

    # ---- policy: each fill with fully masked rows and on ordinary rows
    dead_row = np.ones((5, 5), np.uint8)
    dead_row[2, :] = 0
    for fill in ("neg_inf", "finite", "zero"):
        add(f"policy_{fill}_fully_masked_row", "policy", heads=2, tq=5, dk=4, mask=dead_row,
            causal=True, mask_fill=fill)
        add(f"policy_{fill}_all_padding", "policy", heads=2, tq=4, tk=5, dk=4,
            key_padding=np.zeros(5, np.uint8), mask_fill=fill)
        add(f"policy_{fill}_causal_tq_gt_tk", "policy", heads=1, tq=6, tk=3, dk=4, causal=True,
            mask_fill=fill)
        add(f"policy_{fill}_gqa_dead_row", "policy", heads=4, kv_heads=2, tq=5, dk=3, dv=2,
            mask=dead_row, mask_fill=fill)
        add(f"policy_{fill}_ordinary", "policy", heads=2, tq=5, dk=4, causal=True,
            key_padding=padding(5, [4]), mask_fill=fill)

    # ---- scale
    for label, s in (("default", None), ("1", 1.0), ("0.05", 0.05), ("3.7", 3.7)):
        add(f"scale_{label}", "scale", heads=2, tq=5, dk=8, causal=True, scale=s)

    # ---- GQA / MQA: dK, dV summed over the query heads sharing a K/V head
    add("gqa_h4_kv2", "gqa", heads=4, kv_heads=2, tq=5, dk=4)
    add("gqa_h4_kv2_causal_dv5", "gqa", heads=4, kv_heads=2, tq=6, dk=4, dv=5, causal=True)
    add("mqa_h4_kv1", "gqa", heads=4, kv_heads=1, tq=5, dk=4)
    add("mqa_h4_kv1_causal_padding", "gqa", heads=4, kv_heads=1, tq=5, dk=4, causal=True,
        key_padding=padding(5, [3]))
    add("gqa_h6_kv3_tq4_tk7", "gqa", heads=6, kv_heads=3, tq=4, tk=7, dk=3, dv=2, causal=True)

    # ---- shapes: T_q != T_k, T = 1, d_k = 1
    add("shapes_tq3_tk7_causal", "shapes", heads=2, tq=3, tk=7, dk=4, causal=True)
    add("shapes_tq7_tk3_causal_finite", "shapes", heads=2, tq=7, tk=3, dk=4, causal=True,
        mask_fill="finite")
    add("shapes_tq4_tk9_causal_window", "shapes", heads=1, tq=4, tk=9, dk=4, causal=True,
        window=3)
    add("shapes_t1", "shapes", heads=1, tq=1, dk=4)
    add("shapes_t1_h3_causal", "shapes", heads=3, tq=1, dk=2, causal=True)
    add("shapes_tq1_tk6_causal", "shapes", heads=2, tq=1, tk=6, dk=4, causal=True)
    add("shapes_tq6_tk1", "shapes", heads=1, tq=6, tk=1, dk=3)
    add("shapes_dk1", "shapes", heads=2, tq=5, dk=1, dv=3, causal=True)
    add("shapes_dk1_dv1", "shapes", heads=1, tq=4, dk=1, dv=1)
    add("shapes_dv_gt_dk", "shapes", heads=2, tq=5, dk=3, dv=7)

    # ---- large logits: |scores| in the hundreds (near one-hot rows; max subtraction)
    add("large_logits_causal", "large_logits", heads=2, tq=6, dk=8, causal=True, amp=18.0)
    add("large_logits_scale1", "large_logits", heads=1, tq=6, dk=16, scale=1.0, amp=8.0)
    add("large_logits_padding", "large_logits", heads=1, tq=5, dk=4, amp=25.0,
        key_padding=padding(5, [0]))

    # ---- tile: cross the 64 x 64 tiles of the tiled kernels
    add("tile_t65_causal", "tile", heads=1, tq=65, dk=8, dv=4, causal=True)
    add("tile_t100_causal_window_padding_mqa", "tile", heads=2, kv_heads=1, tq=100, dk=4, dv=3,
        causal=True, window=30, key_padding=padding(100, range(93, 100)))
    add("tile_tq70_tk130_causal_padding", "tile", heads=1, tq=70, tk=130, dk=4, causal=True,
        key_padding=padding(130, [0, 1, 64, 65, 127]))
    dead = np.ones((80, 80), np.uint8)
    dead[[0, 63, 64, 79], :] = 0
    dead[10, 70:] = 0
    add("tile_t80_dead_rows_zero", "tile", heads=1, tq=80, dk=4, dv=2, mask_fill="zero",
        mask=dead)
    add("tile_t80_dead_rows_finite", "tile", heads=1, tq=80, dk=4, dv=2, mask_fill="finite",
        mask=dead)
    return out


def build():
    return {
        "oracle": "PyTorch %s autograd, float64: masked_fill + softmax + matmul "
                  "(tests/oracle/gen_backward_fixtures.py)" % torch.__version__.split("+")[0],
        "cases": cases(),
    }


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--check", action="store_true",
                    help="regenerate in memory and exit 1 if the committed fixture differs")
    ap.add_argument("--out", default=FIXTURES, help="fixture directory (default tests/fixtures)")
    args = ap.parse_args()
    text = gf.to_json(build()) + "\n"
    json.loads(text)
    path = os.path.join(args.out, FNAME)
    if not args.check:
        os.makedirs(args.out, exist_ok=True)
        with open(path, "w") as f:
            f.write(text)
        print("wrote    %s (%d bytes)" % (path, len(text)))
        return 0
    if not os.path.exists(path):
        print("MISSING  " + path)
        return 1
    with open(path) as f:
        old = f.read()
    if old == text:
        print("same     %s (%d bytes)" % (FNAME, len(text)))
        return 0
    diffs = []
    gf._same(json.loads(old), json.loads(text), FNAME, diffs)
    if diffs:
        print("DIFFERS  %s:\n  %s" % (FNAME, "\n  ".join(diffs[:20])))
        print("fixture is stale: run /usr/bin/python3 tests/oracle/gen_backward_fixtures.py")
        return 1
    print("same     %s (numerically, within 1e-9 relative)" % FNAME)
    return 0


if __name__ == "__main__":
    sys.exit(main())
