#!/usr/bin/python3
"""The attention variants' oracle: tests/fixtures/variants.json from NumPy.

    /usr/bin/python3 tests/oracle/gen_variant_fixtures.py           # rewrite the fixture
    /usr/bin/python3 tests/oracle/gen_variant_fixtures.py --check   # regenerate in memory,
                                                                    # exit 1 if the file differs

Written from the variants' definitions (docs/js-api.md, "Attention variants"), not from the C++:
per head h, query i, key j, i' = i + (T_k - T_q),

  qkNorm     q <- q / max(|q|, 1e-12), k likewise (first)
  position   rope: pair (2p, 2p+1) at position pos rotated by pos * base^(-2p/d_k) (second);
             alibi: s_ij += -m_h |i' - j| with Press et al.'s slopes
  normalizer softmax / softmax1 (sink e^0) / sigmoid(s + b) / relu(s)/T_k /
             linear phi(q).phi(k) / (sum + 1e-6), phi = elu + 1 (third; scale not applied)
  maxShift   false: no max subtracted
  maskMode   before: forbidden scores take the fill (-inf; -1e9 under 'finite') for softmax, and
             weight 0 for the others; after: normalise over all keys, then zero forbidden weights
  precision  float16: its own path below, every step rounded with numpy.float16 casts

Every case stores its options under the JS API's names, the inputs (float32, shared by name)
and the expected output, weights, rowSums, entropy and lse. "precision" says which arithmetic
the expectation is: float64 (the reference for both the float32 and the float64 kernels, with
the tolerances in tests/oracle/README.md), float32 (computed in float32 by NumPy: the overflow
thresholds) or float16 (the emulated binary16 path).
"""

import argparse
import json
import math
import os
import sys
import zlib

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.normpath(os.path.join(HERE, "..", "fixtures", "variants.json"))
DIGITS = 10  # significant digits of the expected values

NORMALIZERS = ["softmax", "softmax1", "sigmoid", "relu", "linear"]
POSITIONS = ["none", "rope", "alibi"]
MASK_KINDS = ["none", "causal", "padding", "window", "custom"]
# (heads, kvHeads, tq, tk): MHA, GQA and MQA, each square and with T_q < T_k.
CONFIGS = [(2, 2, 4, 4), (4, 2, 3, 5), (2, 1, 4, 4), (2, 2, 3, 5), (4, 2, 4, 4), (2, 1, 3, 5)]
DK, DV = 4, 3


# ---------------------------------------------------------------- definitions

def allowed_matrix(tq, tk, causal=False, window=0, pad=None, custom=None):
    """allowed[i, j]: causal j <= i', window j > i' - w, padding pad[j], custom mask[i, j]."""
    ip = np.arange(tq)[:, None] + (tk - tq)
    j = np.arange(tk)[None, :]
    ok = np.ones((tq, tk), dtype=bool)
    if causal:
        ok &= j <= ip
    if window:
        ok &= j > ip - window
    if pad is not None:
        ok &= np.asarray(pad, dtype=bool)[None, :]
    if custom is not None:
        ok &= np.asarray(custom, dtype=bool).reshape(tq, tk)
    return ok


def alibi_slopes(n):
    """Press et al.'s get_slopes, restated: 2^(-8(h+1)/n) for a power of two n; otherwise the
    closest lower power of two p, then every other slope of 2p."""
    def pow2(n):
        return [2.0 ** (-8.0 * (h + 1) / n) for h in range(n)]
    p = 2 ** int(math.floor(math.log2(n)))
    if p == n:
        return pow2(n)
    return pow2(p) + pow2(2 * p)[0::2][: n - p]


def rope(x, pos, base, dt):
    """x: (..., T, d); pos: (T,). Rotate each pair (2p, 2p+1) by pos * base^(-2p/d)."""
    d = x.shape[-1]
    theta = base ** (-2.0 * np.arange(d // 2) / d)
    ang = pos[:, None].astype(np.float64) * theta[None, :]
    c, s = np.cos(ang).astype(dt), np.sin(ang).astype(dt)
    x0, x1 = x[..., 0::2], x[..., 1::2]
    y = np.empty_like(x)
    y[..., 0::2] = x0 * c - x1 * s
    y[..., 1::2] = x0 * s + x1 * c
    return y


def phi(x):
    return np.where(x > 0, x + 1, np.exp(np.minimum(x, 0)))


def entropy_of(w):
    with np.errstate(all="ignore"):
        t = np.where(w > 0, w * np.log(np.where(w > 0, w, 1)), 0)
    e = -t.sum(-1)
    return np.where(np.isnan(w).any(-1), np.nan, e)


def reference(q, k, v, o, dt=np.float64):
    """Every step in dtype dt (float64: the reference; float32: the overflow thresholds)."""
    q, k, v = q.astype(dt), k.astype(dt), v.astype(dt)
    H, tq, dk = q.shape
    hkv, tk, _ = k.shape
    ok = allowed_matrix(tq, tk, o["causal"], o["window"], o["keyPadding"], o["mask"])
    norm = o["normalizer"]
    if o["qkNorm"]:
        q = q / np.maximum(np.sqrt((q * q).sum(-1, keepdims=True)), dt(1e-12))
        k = k / np.maximum(np.sqrt((k * k).sum(-1, keepdims=True)), dt(1e-12))
    if o["position"] == "rope":
        q = rope(q, np.arange(tq) + (tk - tq), o["ropeBase"], dt)
        k = rope(k, np.arange(tk), o["ropeBase"], dt)
    if norm == "linear":
        q, k = phi(q), phi(k)
    scale = dt(o["scale"] if o["scale"] is not None else 1.0 / math.sqrt(dk))
    bias = dt(o["sigmoidBias"] if o["sigmoidBias"] is not None else -math.log(tk))
    slopes = alibi_slopes(H) if o["position"] == "alibi" else None
    fill = dt(-1e9) if o["maskFill"] == "finite" else dt(-np.inf)
    before = o["maskMode"] == "before"
    res = {x: [] for x in ("output", "weights", "rowSums", "entropy", "lse")}
    for h in range(H):
        g = h // (H // hkv)
        kh, vh = k[g], v[g]
        with np.errstate(all="ignore"):
            if norm == "linear":
                s = q[h] @ kh.T
            else:
                s = scale * (q[h] @ kh.T)
                if slopes is not None:
                    dist = np.abs(np.arange(tq)[:, None] + (tk - tq) - np.arange(tk)[None, :])
                    s = s + (-slopes[h] * dist).astype(dt)
            dom = ok if before else np.ones_like(ok)
            lse = np.full(tq, np.nan, dtype=dt)
            if norm == "softmax":
                ms = np.where(dom, s, fill)  # the fill policy only exists here
                m = ms.max(-1, keepdims=True) if o["maxShift"] else dt(0)
                e = np.exp(ms - m)
                l = e.sum(-1, keepdims=True)
                w = e / l
                lse = (m + np.log(l))[:, 0]
                if before and o["maskFill"] == "zero":
                    dead = ~ok.any(-1)
                    w[dead] = 0
                    lse[dead] = -np.inf
            elif norm == "softmax1":
                ms = np.where(dom, s, dt(-np.inf))
                m = np.maximum(ms.max(-1, keepdims=True), 0) if o["maxShift"] else dt(0)
                e = np.exp(ms - m)
                l = np.exp(-m) + e.sum(-1, keepdims=True)
                w = e / l
                lse = (m + np.log(l))[:, 0]
            elif norm == "sigmoid":
                w = np.where(dom, 1 / (1 + np.exp(-(s + bias))), 0).astype(dt)
            elif norm == "relu":
                w = np.where(dom, np.maximum(s, 0) / dt(tk), 0).astype(dt)
            else:  # linear
                a = np.where(dom, s, 0).astype(dt)
                w = a / (a.sum(-1, keepdims=True) + dt(1e-6))
            if not before:
                w = np.where(ok, w, 0).astype(dt)
            out = w @ vh
        res["output"].append(out)
        res["weights"].append(w)
        res["rowSums"].append(w.sum(-1))
        res["entropy"].append(entropy_of(w))
        res["lse"].append(lse)
    return {key: np.stack(val) for key, val in res.items()}


def h16(x):
    """Round to the nearest binary16 (ties to even), back as float32."""
    with np.errstate(over="ignore"):
        return np.asarray(x, dtype=np.float32).astype(np.float16).astype(np.float32)


def reference_f16(q, k, v, o):
    """The emulated binary16 recipe: inputs, scores, exponentials, their sum, the weights and
    the output each rounded to binary16; dot products, sums, exp, the subtraction and the
    division in float32, every sum in order j = 0, 1, ..."""
    f32 = np.float32
    q, k, v = h16(q), h16(k), h16(v)
    H, tq, dk = q.shape
    hkv, tk, dv = v.shape
    ok = allowed_matrix(tq, tk, o["causal"], o["window"], o["keyPadding"], o["mask"])
    scale = f32(o["scale"] if o["scale"] is not None else 1.0 / math.sqrt(dk))
    fill = h16(f32(-1e9) if o["maskFill"] == "finite" else f32(-np.inf))[()]
    before = o["maskMode"] == "before"
    res = {x: np.zeros((H, tq) + sh, np.float64)
           for x, sh in (("output", (dv,)), ("weights", (tk,)), ("rowSums", ()), ("entropy", ()),
                         ("lse", ()))}
    with np.errstate(all="ignore"):
        for h in range(H):
            g = h // (H // hkv)
            for i in range(tq):
                s = np.zeros(tk, f32)
                for j in range(tk):
                    d = f32(0)
                    for c in range(dk):
                        d = f32(d + f32(q[h, i, c] * k[g, j, c]))
                    s[j] = h16(f32(scale * d))
                    if before and not ok[i, j]:
                        s[j] = fill
                dead = not ok[i].any()
                if before and dead and o["maskFill"] == "zero":
                    res["lse"][h, i] = -np.inf
                    continue  # the zero policy's zero row
                m = f32(s.max()) if o["maxShift"] else f32(0)
                e = h16(np.exp(f32(s - m)))
                acc = f32(0)
                for j in range(tk):
                    acc = f32(acc + e[j])
                l = h16(acc)[()]
                w = h16(f32(e / l))
                if not before:
                    w = np.where(ok[i], w, f32(0)).astype(f32)
                keys = [j for j in range(tk) if ok[i, j] or (before and dead)]
                out = np.zeros(dv, f32)
                for j in keys:
                    out = (out + f32(w[j]) * v[g, j]).astype(f32)
                rs = f32(0)
                for j in range(tk):
                    rs = f32(rs + w[j])
                res["output"][h, i] = h16(out)
                res["weights"][h, i] = w
                res["rowSums"][h, i] = rs
                res["entropy"][h, i] = entropy_of(w.astype(np.float64)[None])[0]
                res["lse"][h, i] = h16(f32(m + np.log(l)))
    return res


# ---------------------------------------------------------------- cases

def rng_for(name):
    return np.random.default_rng(zlib.crc32(name.encode()))


def make_inputs(name, heads, kv, tq, tk, dk=DK, dv=DV):
    r = rng_for(name)
    return {"heads": heads, "kvHeads": kv, "tq": tq, "tk": tk, "dk": dk, "dv": dv,
            "q": r.normal(size=(heads, tq, dk)).astype(np.float32),
            "k": r.normal(size=(kv, tk, dk)).astype(np.float32),
            "v": r.normal(size=(kv, tk, dv)).astype(np.float32)}


def mask_opts(kind, tq, tk, name):
    o = {"causal": False, "window": 0, "keyPadding": None, "mask": None}
    if kind == "causal":
        o["causal"] = True
    elif kind == "padding":
        pad = [1] * tk
        pad[1] = 0
        o["keyPadding"] = pad
    elif kind == "window":
        o["window"] = 2
    elif kind == "custom":
        r = rng_for("mask " + name)
        m = (r.random((tq, tk)) < 0.6).astype(int)
        for i in range(tq):  # at least one key per row (fully masked rows have their own cases)
            if not m[i].any():
                m[i, r.integers(tk)] = 1
        o["mask"] = m.ravel().tolist()
    return o


def options(**kw):
    o = {"causal": False, "window": 0, "keyPadding": None, "mask": None, "scale": None,
         "maskFill": "neg_inf", "qkNorm": False, "position": "none", "ropeBase": 10000.0,
         "normalizer": "softmax", "sigmoidBias": None, "maxShift": True, "maskMode": "before",
         "precision": "float64"}
    o.update(kw)
    return o


def build():
    inputs, cases = {}, []

    def inp(name, *shape, **arrays):
        if name not in inputs:
            inputs[name] = make_inputs(name, *shape)
            for key, val in arrays.items():
                inputs[name][key] = np.asarray(val, np.float32).reshape(inputs[name][key].shape)
        return inputs[name]

    def add(name, iname, o):
        x = inputs[iname]
        if o["precision"] == "float16":
            e = reference_f16(x["q"], x["k"], x["v"], o)
        else:
            dt = np.float32 if o["precision"] == "float32" else np.float64
            e = reference(x["q"], x["k"], x["v"], o, dt)
        cases.append({"name": name, "inputs": iname, "opts": o, "expect": e})

    # 1. The cross product normalizer x position x qkNorm x maskMode x mask kind; the six
    #    head/length configurations (MHA, GQA, MQA; T_q = T_k and T_q < T_k) taken in turn, so
    #    that every normalizer x mask kind pair meets all six.
    idx = 0
    for norm in NORMALIZERS:
        for pos in POSITIONS:
            for qkn in (False, True):
                for mode in ("before", "after"):
                    for kind in MASK_KINDS:
                        if not (norm == "linear" and pos == "alibi"):
                            hq, hk, tq, tk = CONFIGS[idx % len(CONFIGS)]
                            iname = "x%d_%d_%d_%d" % (hq, hk, tq, tk)
                            inp(iname, hq, hk, tq, tk)
                            name = "%s %s qkNorm=%s %s %s" % (norm, pos, qkn, mode, kind)
                            add(name, iname, options(normalizer=norm, position=pos, qkNorm=qkn,
                                                     maskMode=mode,
                                                     **mask_opts(kind, tq, tk, name)))
                        idx += 1

    # 2. Fully masked rows (row 1 of a custom mask) under each fill, each normalizer, both
    #    mask modes, and maxShift false for softmax and softmax1; and causal with T_q > T_k
    #    (rows whose i' < 0 see no key).
    inp("dead", 2, 1, 3, 4)
    dead_mask = [1, 0, 1, 1, 0, 0, 0, 0, 1, 1, 0, 1]
    for norm in NORMALIZERS:
        for fill in ("neg_inf", "finite", "zero"):
            for mode in ("before", "after"):
                shifts = (True, False) if norm in ("softmax", "softmax1") else (True,)
                for shift in shifts:
                    add("fully masked %s %s %s maxShift=%s" % (norm, fill, mode, shift), "dead",
                        options(normalizer=norm, maskFill=fill, maskMode=mode, maxShift=shift,
                                mask=dead_mask))
    inp("tall", 2, 2, 5, 3)
    for norm in NORMALIZERS:
        for pos in ("none", "rope"):
            add("causal tq>tk %s %s" % (norm, pos), "tall",
                options(normalizer=norm, position=pos, causal=True))

    # 3. Parameters: ALiBi for head counts that are not powers of two, ropeBase, sigmoidBias,
    #    an explicit scale (linear ignores it).
    for hq, hk in ((3, 1), (6, 3)):
        iname = "alibi%d" % hq
        inp(iname, hq, hk, 3, 5)
        for norm in ("softmax", "relu"):
            add("alibi heads=%d %s" % (hq, norm), iname,
                options(normalizer=norm, position="alibi", causal=True))
    add("rope ropeBase=100", "x2_2_4_4", options(position="rope", ropeBase=100.0))
    add("sigmoid sigmoidBias=0.5", "x2_2_4_4", options(normalizer="sigmoid", sigmoidBias=0.5))
    add("sigmoid sigmoidBias=-3 causal", "x4_2_3_5",
        options(normalizer="sigmoid", sigmoidBias=-3.0, causal=True))
    for norm in NORMALIZERS:
        add("scale=2.5 %s" % norm, "x2_1_3_5", options(normalizer=norm, scale=2.5))

    # 4. maxShift false on ordinary inputs (no overflow: the same weights as the shift).
    for norm in ("softmax", "softmax1"):
        add("maxShift=false %s" % norm, "x2_2_3_5",
            options(normalizer=norm, maxShift=False, causal=True))

    # 5. The exp overflow thresholds without the max shift, on both sides of each: one logit L
    #    (q = (1, 0), k_0 = (L, 0), scale 1), in the precision named. The same inputs with the
    #    shift on stay finite.
    for prec, below, above in (("float16", 11.0, 11.2), ("float32", 88.7, 88.75),
                               ("float64", 709.7, 709.9)):
        for side, big in (("below", below), ("above", above)):
            iname = "logit %s" % big
            inp(iname, 1, 1, 1, 3, 2, 2, q=[1, 0], k=[big, 0, 0, 0, 1, 0])
            for shift in (False, True):
                add("threshold %s %s L=%s maxShift=%s" % (prec, side, big, shift), iname,
                    options(precision=prec, maxShift=shift, scale=1.0))

    # 6. float16 on its own path: softmax with every mask kind and both modes, each fill on a
    #    fully masked row (-1e9 is -inf in binary16: 'finite' gives NaN too), no shift.
    for kind in MASK_KINDS:
        for mode in ("before", "after"):
            name = "float16 %s %s" % (kind, mode)
            add(name, "x2_2_3_5", options(precision="float16", maskMode=mode,
                                          **mask_opts(kind, 3, 5, name)))
    for fill in ("neg_inf", "finite", "zero"):
        for mode in ("before", "after"):
            add("float16 fully masked %s %s" % (fill, mode), "dead",
                options(precision="float16", maskFill=fill, maskMode=mode, mask=dead_mask))
    add("float16 gqa causal maxShift=false", "x4_2_3_5",
        options(precision="float16", causal=True, maxShift=False))
    return inputs, cases


# ---------------------------------------------------------------- JSON

def num(x, digits=DIGITS):
    x = float(x)
    if math.isnan(x):
        return '"nan"'
    if math.isinf(x):
        return '"inf"' if x > 0 else '"-inf"'
    if x == 0:
        return "0"
    return "%.*g" % (digits, x)


def f32_text(x):
    t = repr(float(np.float32(x)))
    # shortest float32 text: numpy's str of a float32
    t = str(np.float32(x))
    if t.endswith(".0"):
        t = t[:-2]
    assert np.float32(float(t)) == np.float32(x)
    return t


def arr(a, f):
    return "[" + ",".join(f(x) for x in np.asarray(a).ravel()) + "]"


def render(inputs, cases):
    lines = ['{', '  "inputs": {']
    items = []
    for name in sorted(inputs):
        x = inputs[name]
        shape = ", ".join('"%s": %d' % (k, x[k]) for k in ("heads", "kvHeads", "tq", "tk", "dk", "dv"))
        items.append('    %s: {%s, "q": %s, "k": %s, "v": %s}' % (
            json.dumps(name), shape, arr(x["q"], f32_text), arr(x["k"], f32_text),
            arr(x["v"], f32_text)))
    lines.append(",\n".join(items))
    lines.append('  },')
    lines.append('  "cases": [')
    items = []
    for c in cases:
        e = c["expect"]
        exp = ", ".join('"%s": %s' % (k, arr(e[k], num))
                        for k in ("output", "weights", "rowSums", "entropy", "lse"))
        items.append('    {"name": %s, "inputs": %s, "opts": %s,\n     "expect": {%s}}' % (
            json.dumps(c["name"]), json.dumps(c["inputs"]), json.dumps(c["opts"]), exp))
    lines.append(",\n".join(items))
    lines.append('  ]')
    lines.append('}')
    return "\n".join(lines) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--check", action="store_true")
    args = ap.parse_args()
    text = render(*build())
    if args.check:
        old = open(OUT).read() if os.path.exists(OUT) else None
        if old != text:
            print("DIFFERS  tests/fixtures/variants.json: run "
                  "/usr/bin/python3 tests/oracle/gen_variant_fixtures.py")
            return 1
        print("ok       tests/fixtures/variants.json")
        return 0
    with open(OUT, "w") as f:
        f.write(text)
    print("wrote %s (%d bytes)" % (OUT, len(text)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
