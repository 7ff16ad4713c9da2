#!/usr/bin/python3
"""Gradients of the attention variants (tests/fixtures/variant_grads.json) from PyTorch autograd.

    /usr/bin/python3 tests/oracle/gen_variant_grad_fixtures.py           # rewrite the fixture
    /usr/bin/python3 tests/oracle/gen_variant_grad_fixtures.py --check   # regenerate in memory,
                                                                         # exit 1 if it differs

An oracle independent of the C++ code: the variants' definitions (docs/js-api.md, "Attention
variants") written out in torch, float64, and differentiated by autograd. Per head h, query i,
key j, i' = i + (T_k - T_q), allowed(i, j) the combined mask:

    qkNorm      q <- q / clamp_min(|q|_2, 1e-12), k likewise            (first)
    position    rope: pair (2p, 2p+1) of q (position i') and k (position j) rotated by
                pos * ropeBase^(-2p/d_k)                                 (second)
                alibi: s_ij += -m_h |i' - j|, Press et al.'s slopes
    normalizer  softmax:  masked_fill(~allowed, fill) then softmax (fill -inf, or -1e9 under
                          'finite'; the 'zero' policy's fully masked rows are zero rows)
                softmax1: softmax over the row's scores and one extra score 0 (a virtual key
                          whose value is 0), that extra weight dropped
                sigmoid:  sigmoid(s + b), b = sigmoidBias or -ln T_k; 0 where forbidden
                relu:     relu(s) / T_k; 0 where forbidden (torch.relu: gradient 0 at s = 0)
                linear:   a = phi(q).phi(k), phi = elu + 1, scale not applied (third);
                          w = a / (sum_allowed a + 1e-6); 0 where forbidden
    output = w @ V,   L = sum(output * dO),   dQ, dK, dV = autograd of L

K and V are repeated over the query heads sharing them (GQA/MQA), so autograd sums dK, dV
over those heads. A fully masked row: softmax keeps its fill policy (finite: uniform weights,
gradient to V only; zero: nothing; neg_inf: NaN weights, so PyTorch's dV is NaN for every key
of that K/V head); every other normalizer's row is zero and passes no gradient.

Inputs: numpy.random.default_rng(crc32(case name)), rounded to float32 and stored as float32,
so float32 and float64 C++ runs see the very same numbers. "kernels" lists the kernels the
forward supports for the case (the tiled linear form takes a causal mask or none). Dropout is
not in these fixtures (the keep mask is this project's own hash): the C++ tests check it by
finite differences with the mask fixed.
"""

import argparse
import json
import math
import os
import sys

import numpy as np
import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gen_fixtures as gf  # noqa: E402  (JSON writer and input conventions only)

HERE = os.path.dirname(os.path.abspath(__file__))
FIXTURES = os.path.normpath(os.path.join(HERE, "..", "fixtures"))
FNAME = "variant_grads.json"
FINITE_FILL = -1e9
QK_NORM_EPS = 1e-12
LINEAR_EPS = 1e-6

torch.set_default_dtype(torch.float64)

NORMALIZERS = ["softmax", "softmax1", "sigmoid", "relu", "linear"]
POSITIONS = ["none", "rope", "alibi"]
MASK_KINDS = ["none", "causal", "padding", "window", "custom"]
# (heads, kvHeads, tq, tk): MHA, GQA and MQA with T_q = T_k, T_q < T_k and T_q > T_k.
CONFIGS = [(2, 2, 4, 4), (4, 2, 3, 5), (2, 1, 4, 4), (2, 2, 3, 5), (4, 2, 4, 4), (2, 1, 3, 5),
           (4, 1, 5, 3), (2, 2, 5, 3)]


# ---------------------------------------------------------------- definitions

def allowed(tq, tk, causal, window, key_padding, mask):
    """(T_q, T_k) bool: causal j <= i', window j > i' - w, padding, custom; ANDed."""
    i = torch.arange(tq)[:, None]
    j = torch.arange(tk)[None, :]
    ip = i + (tk - tq)
    ok = torch.ones(tq, tk, dtype=torch.bool)
    if causal:
        ok &= j <= ip
    if window:
        ok &= j > ip - window
    if key_padding is not None:
        ok &= torch.tensor(np.asarray(key_padding) != 0)[None, :]
    if mask is not None:
        ok &= torch.tensor(np.asarray(mask).reshape(tq, tk) != 0)
    return ok


def alibi_slopes(n):
    """Press et al.'s get_slopes: 2^(-8(h+1)/n) for a power of two n; otherwise those of the
    closest lower power of two p, then every other slope of 2p."""
    def pow2(m):
        return [2.0 ** (-8.0 * (h + 1) / m) for h in range(m)]
    p = 2 ** int(math.floor(math.log2(n)))
    if p == n:
        return pow2(n)
    return pow2(p) + pow2(2 * p)[0::2][: n - p]


def rope(x, pos, base):
    """x: (..., T, d); pos: (T,) positions. Rotate each pair (2p, 2p+1) by pos * base^(-2p/d)."""
    d = x.shape[-1]
    theta = base ** (-2.0 * torch.arange(d // 2, dtype=torch.float64) / d)
    ang = pos[:, None].to(torch.float64) * theta[None, :]
    c, s = torch.cos(ang), torch.sin(ang)
    x0, x1 = x[..., 0::2], x[..., 1::2]
    y0 = x0 * c - x1 * s
    y1 = x0 * s + x1 * c
    return torch.stack([y0, y1], dim=-1).reshape(x.shape)


def forward(q, k, v, o):
    """The variant forward in torch (autograd-able); returns (output, fully masked rows)."""
    H, tq, dk = q.shape
    hkv, tk, _ = k.shape
    group = H // hkv
    norm = o["normalizer"]
    if o["qkNorm"]:
        q = q / torch.clamp(q.norm(dim=-1, keepdim=True), min=QK_NORM_EPS)
        k = k / torch.clamp(k.norm(dim=-1, keepdim=True), min=QK_NORM_EPS)
    if o["position"] == "rope":
        q = rope(q, torch.arange(tq) + (tk - tq), o["ropeBase"])
        k = rope(k, torch.arange(tk), o["ropeBase"])
    if norm == "linear":
        q, k = F.elu(q) + 1, F.elu(k) + 1
    kr = k.repeat_interleave(group, dim=0)
    vr = v.repeat_interleave(group, dim=0)
    ok = allowed(tq, tk, o["causal"], o["window"], o["keyPadding"], o["mask"])
    dead = ~ok.any(dim=-1)
    okb = ok[None].expand(H, tq, tk)
    zeros = torch.zeros(H, tq, tk)
    if norm == "linear":
        s = q @ kr.transpose(-1, -2)
    else:
        scale = 1.0 / math.sqrt(dk) if o["scale"] is None else o["scale"]
        s = (q @ kr.transpose(-1, -2)) * scale
        if o["position"] == "alibi":
            ip = torch.arange(tq)[:, None] + (tk - tq)
            dist = (ip - torch.arange(tk)[None, :]).abs().to(torch.float64)
            m = torch.tensor(alibi_slopes(H))
            s = s - m[:, None, None] * dist[None]
    if norm == "softmax":
        fill = o["maskFill"]
        s = s.masked_fill(~okb, FINITE_FILL if fill == "finite" else float("-inf"))
        if fill == "zero":  # replace the scores before the softmax, not the NaN weights after
            s = torch.where(dead[None, :, None], zeros, s)
        w = torch.softmax(s, dim=-1)
        if fill == "zero":
            w = torch.where(dead[None, :, None], zeros, w)
    elif norm == "softmax1":
        s = s.masked_fill(~okb, float("-inf"))
        logits = torch.cat([s, torch.zeros(H, tq, 1)], dim=-1)  # the virtual key's score 0
        w = torch.softmax(logits, dim=-1)[..., :tk]
    elif norm == "sigmoid":
        b = -math.log(tk) if o["sigmoidBias"] is None else o["sigmoidBias"]
        w = torch.where(okb, torch.sigmoid(s + b), zeros)
    elif norm == "relu":
        w = torch.where(okb, torch.relu(s) / tk, zeros)
    else:
        a = torch.where(okb, s, zeros)
        w = a / (a.sum(dim=-1, keepdim=True) + LINEAR_EPS)
    return w @ vr, int(dead.sum()) * H, s


def grads(q, k, v, dout, o):
    q = torch.tensor(q, dtype=torch.float64, requires_grad=True)
    k = torch.tensor(k, dtype=torch.float64, requires_grad=True)
    v = torch.tensor(v, dtype=torch.float64, requires_grad=True)
    out, dead, s = forward(q, k, v, o)
    (out * torch.tensor(dout, dtype=torch.float64)).sum().backward()
    return out.detach().numpy(), q.grad.numpy(), k.grad.numpy(), v.grad.numpy(), dead, s.detach()


# ---------------------------------------------------------------- cases

def options(**kw):
    o = {"causal": False, "window": 0, "keyPadding": None, "mask": None, "scale": None,
         "maskFill": "neg_inf", "qkNorm": False, "position": "none", "ropeBase": 10000.0,
         "normalizer": "softmax", "sigmoidBias": None}
    o.update(kw)
    return o


def mask_opts(kind, tq, tk, name):
    """The mask kinds; every row keeps at least one key except where T_q > T_k under causal."""
    if kind == "causal":
        return {"causal": True}
    if kind == "padding":
        pad = [1] * tk
        pad[1] = 0
        return {"keyPadding": pad}
    if kind == "window":
        return {"window": 2}
    if kind == "custom":
        r = gf.case_rng("mask " + name)
        m = (r.random((tq, tk)) < 0.6).astype(int)
        for i in range(tq):
            if not m[i].any():
                m[i, r.integers(tk)] = 1
        return {"mask": m.ravel().tolist()}
    return {}


def tiled_ok(o):
    """The tiled forward's support (the spec): linear only as the causal prefix-sum form."""
    if o["normalizer"] == "linear":
        return o["keyPadding"] is None and o["mask"] is None and not o["window"]
    return True


def case(name, family, o, heads, kv_heads, tq, tk, dk=4, dv=3, q=None, k=None, amp=1.0,
         expect_zero_scores=False):
    rng = gf.case_rng(name)
    q = gf.gaussian32(rng, (heads, tq, dk), amp) if q is None else np.asarray(q, np.float32)
    k = gf.gaussian32(rng, (kv_heads, tk, dk), amp) if k is None else np.asarray(k, np.float32)
    v = gf.gaussian32(rng, (kv_heads, tk, dv))
    dout = gf.gaussian32(rng, (heads, tq, dv))
    out, dq, dk_, dv_, dead, s = grads(q.astype(np.float64), k.astype(np.float64),
                                       v.astype(np.float64), dout.astype(np.float64), o)
    if expect_zero_scores:  # relu's kink: some allowed scores are exactly 0
        assert (s == 0).any(), name
    opts = {"heads": heads, "kvHeads": kv_heads, "tq": tq, "tk": tk, "dk": dk, "dv": dv}
    for key, val in o.items():
        opts[key] = gf.f64(val) if isinstance(val, float) else val
    return {
        "name": name,
        "family": family,
        "kernels": ["naive", "tiled"] if tiled_ok(o) else ["naive"],
        "opts": opts,
        "q": gf.f32_list(q), "k": gf.f32_list(k), "v": gf.f32_list(v), "dOut": gf.f32_list(dout),
        "expect": {
            "output": gf.f64_list(out), "dq": gf.f64_list(dq), "dk": gf.f64_list(dk_),
            "dv": gf.f64_list(dv_), "fullyMaskedRows": dead,
        },
    }


def cases():
    out = []
    add = lambda *a, **kw: out.append(case(*a, **kw))

    # 1. The cross product normalizer x position x qkNorm x mask kind (linear has no ALiBi);
    #    the eight head/length configurations taken in turn, so each normalizer x mask kind
    #    pair meets MHA, GQA, MQA and T_q <, =, > T_k. 'finite' fill: a causal row with i' < 0
    #    (T_q > T_k) is fully masked, which softmax turns into uniform weights.
    idx = 0
    for norm in NORMALIZERS:
        for pos in POSITIONS:
            if norm == "linear" and pos == "alibi":
                continue
            for qkn in (False, True):
                for kind in MASK_KINDS:
                    hq, hk, tq, tk = CONFIGS[idx % len(CONFIGS)]
                    idx += 1
                    name = "%s %s qkNorm=%s %s h%d/%d tq%d tk%d" % (norm, pos, qkn, kind, hq, hk,
                                                                   tq, tk)
                    add(name, "cross", options(normalizer=norm, position=pos, qkNorm=qkn,
                                               maskFill="finite", **mask_opts(kind, tq, tk, name)),
                        hq, hk, tq, tk)

    # 2. Fully masked rows (row 1 of a custom mask) under each fill, each normalizer, with and
    #    without RoPE + qkNorm; and causal with T_q > T_k (rows with i' < 0 see no key).
    dead_mask = np.ones((3, 4), np.uint8)
    dead_mask[1, :] = 0
    dead_mask[0, 1] = dead_mask[2, 3] = 0
    for norm in NORMALIZERS:
        for fill in ("neg_inf", "finite", "zero"):
            for extra in ({}, {"position": "rope", "qkNorm": True}):
                name = "fully masked %s %s%s" % (norm, fill, " rope qkNorm" if extra else "")
                add(name, "fully_masked", options(normalizer=norm, maskFill=fill,
                                                  mask=dead_mask.ravel().tolist(), **extra),
                    2, 1, 3, 4)
        add("causal tq>tk %s" % norm, "fully_masked",
            options(normalizer=norm, causal=True, maskFill="zero"), 2, 2, 6, 3)

    # 3. Parameters: sigmoidBias, ALiBi for head counts that are not powers of two, ropeBase,
    #    an explicit scale (linear ignores it), qkNorm with the scale it needs.
    for b in (0.5, -3.0, 2.0):
        add("sigmoid sigmoidBias=%g causal" % b, "params",
            options(normalizer="sigmoid", sigmoidBias=b, causal=True), 4, 2, 4, 6)
    add("sigmoid saturated scale=8", "params", options(normalizer="sigmoid", scale=8.0),
        2, 2, 4, 4, amp=2.0)
    for hq, hk in ((3, 1), (6, 3)):
        for norm in ("softmax", "softmax1", "sigmoid", "relu"):
            add("alibi heads=%d %s causal" % (hq, norm), "params",
                options(normalizer=norm, position="alibi", causal=True), hq, hk, 3, 5)
    for norm in NORMALIZERS:
        add("rope ropeBase=100 %s" % norm, "params",
            options(normalizer=norm, position="rope", ropeBase=100.0, causal=True), 2, 1, 4, 6,
            dk=6)
        add("scale=2.5 %s" % norm, "params", options(normalizer=norm, scale=2.5), 2, 1, 3, 5)
        add("qkNorm scale=10 %s" % norm, "params",
            options(normalizer=norm, qkNorm=True, scale=10.0, causal=True), 2, 2, 5, 5)

    # 4. relu's kink: q rows in the first two coordinates, half the keys in the last two, so
    #    those scores are exactly 0 (in float32 as in float64) and take no gradient.
    r = gf.case_rng("relu kink inputs")
    kq = gf.gaussian32(r, (2, 4, 4))
    kq[..., 2:] = 0
    kk = gf.gaussian32(r, (1, 6, 4))
    kk[0, 0::2, :2] = 0
    for kind in ("none", "causal"):
        add("relu kink %s" % kind, "relu_kink",
            options(normalizer="relu", **mask_opts(kind, 4, 6, "")), 2, 1, 4, 6, q=kq, k=kk,
            expect_zero_scores=True)

    # 5. Across the 64-key tiles of the tiled kernels: T_q != T_k both ways, causal, and once
    #    with GQA.
    for norm in NORMALIZERS:
        for pos in ("none", "rope", "alibi"):
            if norm == "linear" and pos == "alibi":
                continue
            if pos != "none" and norm not in ("softmax", "linear"):
                continue
            add("tile %s %s qkNorm=%s tq66 tk80 causal" % (norm, pos, pos == "rope"), "tile",
                options(normalizer=norm, position=pos, qkNorm=pos == "rope", causal=True),
                1, 1, 66, 80, dv=2)
    add("tile linear none tq80 tk66 causal", "tile",
        options(normalizer="linear", causal=True, maskFill="zero"), 1, 1, 80, 66, dv=2)
    add("tile softmax1 rope h2/1 tq70 tk70 causal", "tile",
        options(normalizer="softmax1", position="rope", causal=True), 2, 1, 70, 70, dv=2)
    return out


def build():
    return {
        "oracle": "PyTorch %s autograd, float64: the variants' definitions "
                  "(tests/oracle/gen_variant_grad_fixtures.py)" % torch.__version__.split("+")[0],
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
        print("fixture is stale: run /usr/bin/python3 tests/oracle/gen_variant_grad_fixtures.py")
        return 1
    print("same     %s (numerically, within 1e-9 relative)" % FNAME)
    return 0


if __name__ == "__main__":
    sys.exit(main())
