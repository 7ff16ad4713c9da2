#!/usr/bin/python3
"""Generate the committed JSON fixtures in tests/fixtures/ from the NumPy oracle.

    /usr/bin/python3 tests/oracle/gen_fixtures.py           # rewrite every fixture
    /usr/bin/python3 tests/oracle/gen_fixtures.py --check   # regenerate in memory, compare,
                                                            # exit 1 if a committed file differs

Deterministic: every random input comes from numpy.random.default_rng seeded by
the case name. The format is described in tests/oracle/README.md.
"""

import argparse
import json
import math
import os
import sys
import zlib

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import attn_ref as ref  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
FIXTURES = os.path.normpath(os.path.join(HERE, "..", "fixtures"))

# --------------------------------------------------------------------------
# JSON writing: non-finite numbers as strings, float32 inputs in their shortest
# float32 form, float64 results with 12 significant digits, arrays flat on one line.
# --------------------------------------------------------------------------

EXPECT_DIGITS = 12
WEIGHTS_LIMIT = 3000  # attention cases with H*T_q*T_k above this store "weights": null
SCORES_LIMIT = 1024   # ... and "scores": null above this


class Num:
    """A pre-formatted JSON token."""

    def __init__(self, text):
        self.text = text


def _nonfinite(x):
    if math.isnan(x):
        return '"nan"'
    return '"inf"' if x > 0 else '"-inf"'


def f32_list(a):
    """Float32 values (inputs): shortest text that parses back to the same float32."""
    out = []
    for x in np.asarray(a, dtype=np.float32).ravel():
        if not np.isfinite(x):
            out.append(Num(_nonfinite(float(x))))
            continue
        text = str(x)
        if text.endswith(".0"):
            text = text[:-2]
        assert np.float32(float(text)) == x, (text, x)
        out.append(Num(text))
    return out


def f64_list(a, digits=EXPECT_DIGITS):
    out = []
    for x in np.asarray(a, dtype=np.float64).ravel():
        x = float(x)
        if not math.isfinite(x):
            out.append(Num(_nonfinite(x)))
        elif x == 0.0:
            out.append(Num("0"))
        else:
            out.append(Num("%.*g" % (digits, x)))
    return out


def f64_exact_list(a):
    """Full-precision doubles (repr), for the RNG stream."""
    return [Num(repr(float(x))) for x in np.asarray(a, dtype=np.float64).ravel()]


def f64(x):
    return f64_list([x])[0]


def to_json(obj, indent=0):
    pad = "  " * indent
    if isinstance(obj, Num):
        return obj.text
    if isinstance(obj, dict):
        if not obj:
            return "{}"
        items = [pad + "  " + json.dumps(k) + ": " + to_json(v, indent + 1) for k, v in obj.items()]
        return "{\n" + ",\n".join(items) + "\n" + pad + "}"
    if isinstance(obj, (list, tuple)):
        if all(not isinstance(v, (dict, list, tuple)) for v in obj):
            return "[" + ",".join(to_json(v, indent) for v in obj) + "]"
        items = [pad + "  " + to_json(v, indent + 1) for v in obj]
        return "[\n" + ",\n".join(items) + "\n" + pad + "]"
    if obj is None or isinstance(obj, (bool, str, int)):
        return json.dumps(obj)
    if isinstance(obj, float):
        return f64(obj).text
    raise TypeError(type(obj))


# --------------------------------------------------------------------------
# inputs
# --------------------------------------------------------------------------

def case_rng(name):
    return np.random.default_rng(zlib.crc32(name.encode()))


def gaussian32(rng, shape, amp=1.0):
    return (rng.normal(size=shape) * amp).astype(np.float32)


# --------------------------------------------------------------------------
# attention.json
# --------------------------------------------------------------------------

def attention_case(name, family, heads=1, kv_heads=None, tq=4, tk=None, dk=4, dv=None,
                   causal=False, window=0, key_padding=None, mask=None, scale=None,
                   mask_fill="neg_inf", amp=1.0, q=None, k=None, v=None, no_dead_rows=False,
                   overflow=False):
    kv_heads = heads if kv_heads is None else kv_heads
    tk = tq if tk is None else tk
    dv = dk if dv is None else dv
    rng = case_rng(name)
    q = gaussian32(rng, (heads, tq, dk), amp) if q is None else np.asarray(q, np.float32)
    k = gaussian32(rng, (kv_heads, tk, dk), amp) if k is None else np.asarray(k, np.float32)
    v = gaussian32(rng, (kv_heads, tk, dv)) if v is None else np.asarray(v, np.float32)
    assert q.size == heads * tq * dk and k.size == kv_heads * tk * dk and v.size == kv_heads * tk * dv
    if scale is not None:
        assert np.float32(scale) == scale or True
    if no_dead_rows:
        ok = ref.allowed_matrix(tq, tk, causal, window, key_padding, mask)
        assert ok.any(axis=1).all(), name + " has a fully masked row"
    r = ref.attention(q, k, v, heads, kv_heads, tq, tk, dk, dv, causal, window, key_padding,
                      mask, scale, mask_fill, float32_score_overflow=overflow)
    if family == "large_logits":
        top = np.max(np.abs(r["scores"]))
        assert 300 <= top <= 1e4, (name, top)
        assert np.isfinite(r["output"]).all() and np.isfinite(r["weights"]).all(), name
    if family == "overflow":
        assert r["infScoreRows"] > 0
    case = {
        "name": name,
        "family": family,
        "opts": {
            "heads": heads, "kvHeads": kv_heads, "tq": tq, "tk": tk, "dk": dk, "dv": dv,
            "causal": causal, "window": window,
            "keyPadding": None if key_padding is None else [int(b) for b in key_padding],
            "mask": None if mask is None else [int(b) for b in np.asarray(mask).ravel()],
            "scale": None if scale is None else f64(scale),
            "maskFill": mask_fill,
        },
        "q": f32_list(q), "k": f32_list(k), "v": f32_list(v),
        "expect": {
            "output": f64_list(r["output"]),
            # big cases keep output/lse/entropy only, to keep the fixtures small
            "weights": f64_list(r["weights"]) if heads * tq * tk <= WEIGHTS_LIMIT else None,
            "scores": f64_list(r["scores"]) if heads * tq * tk <= SCORES_LIMIT else None,
            "entropy": f64_list(r["entropy"]),
            "lse": f64_list(r["lse"]),
            "scale": f64(r["scale"]),
            "fullyMaskedRows": r["fullyMaskedRows"],
            "nanRows": r["nanRows"],
            "infScoreRows": r["infScoreRows"],
        },
    }
    return case


def random_mask(rng, tq, tk, p=0.7):
    m = (rng.random((tq, tk)) < p).astype(np.uint8)
    return m


def padding(tk, zeros):
    p = np.ones(tk, dtype=np.uint8)
    p[list(zeros)] = 0
    return p


def attention_cases():
    cases = []
    add = lambda *a, **kw: cases.append(attention_case(*a, **kw))

    # ---- basic
    add("basic_h1_t4", "basic", heads=1, tq=4, dk=4)
    add("basic_h3_t5_dk4_dv4", "basic", heads=3, tq=5, dk=4)
    add("basic_lesson2_t6_dk4_causal", "basic", heads=1, tq=6, dk=4, causal=True)
    add("basic_h2_t8_dk16", "basic", heads=2, tq=8, dk=16, dv=8)

    # ---- masks: every non-empty combination of the four kinds on H=2, T=6
    T = 6
    kinds = ["causal", "window", "padding", "custom"]
    mrng = np.random.default_rng(20240601)
    pad = padding(T, [4, 5])  # trailing padding, as real batches have it
    custom = None
    while custom is None:  # a custom mask that, with every other kind, leaves each row a key
        cand = random_mask(mrng, T, T, 0.75)
        cand[np.arange(T), np.minimum(np.arange(T), 3)] = 1
        full = ref.allowed_matrix(T, T, True, 3, pad, cand)
        if full.any(axis=1).all():
            custom = cand
    for bits in range(1, 16):
        on = [kinds[b] for b in range(4) if bits >> b & 1]
        add("masks_" + "_".join(on), "masks", heads=2, tq=T, dk=4, dv=3,
            causal="causal" in on, window=3 if "window" in on else 0,
            key_padding=pad if "padding" in on else None,
            mask=custom if "custom" in on else None, no_dead_rows=True)
    add("masks_window1_causal", "masks", heads=1, tq=5, dk=3, causal=True, window=1)
    add("masks_window_wider_than_t", "masks", heads=1, tq=5, dk=3, causal=True, window=50)
    add("masks_window_tq3_tk8", "masks", heads=1, tq=3, tk=8, dk=3, window=2)
    add("masks_padding_middle", "masks", heads=2, tq=5, dk=4, key_padding=padding(5, [1, 3]))

    # ---- policy: the three fills on degenerate and ordinary rows
    dead_row = np.ones((5, 5), np.uint8)
    dead_row[2, :] = 0
    for fill in ("neg_inf", "finite", "zero"):
        add(f"policy_{fill}_fully_masked_row", "policy", heads=2, tq=5, dk=4, mask=dead_row,
            causal=True, mask_fill=fill)
        add(f"policy_{fill}_all_padding", "policy", heads=2, tq=4, tk=5, dk=4,
            key_padding=np.zeros(5, np.uint8), mask_fill=fill)
        add(f"policy_{fill}_causal_tq_gt_tk", "policy", heads=1, tq=6, tk=3, dk=4,
            causal=True, mask_fill=fill)
        add(f"policy_{fill}_ordinary", "policy", heads=2, tq=5, dk=4, causal=True,
            key_padding=padding(5, [4]), mask_fill=fill, no_dead_rows=True)
    add("policy_empty_padding_all_ones", "policy", heads=2, tq=5, dk=4,
        key_padding=np.ones(5, np.uint8))

    # ---- scale
    for label, s in (("default", None), ("1", 1.0), ("0.05", 0.05), ("3.7", 3.7),
                     ("0.001", 0.001)):
        add(f"scale_{label}", "scale", heads=2, tq=5, dk=8, causal=True, scale=s)

    # ---- gqa / mqa
    add("gqa_h4_kv2", "gqa", heads=4, kv_heads=2, tq=5, dk=4)
    add("gqa_h4_kv2_causal", "gqa", heads=4, kv_heads=2, tq=6, dk=4, dv=5, causal=True)
    add("mqa_h4_kv1", "gqa", heads=4, kv_heads=1, tq=5, dk=4)
    add("mqa_h4_kv1_causal_padding", "gqa", heads=4, kv_heads=1, tq=5, dk=4, causal=True,
        key_padding=padding(5, [3]))
    add("gqa_h6_kv3_tq4_tk7", "gqa", heads=6, kv_heads=3, tq=4, tk=7, dk=3, dv=2, causal=True)
    add("mha_h4_kv4", "gqa", heads=4, kv_heads=4, tq=4, dk=4)

    # ---- shapes
    add("shapes_tq3_tk7_causal", "shapes", heads=2, tq=3, tk=7, dk=4, causal=True)
    add("shapes_tq7_tk3_causal", "shapes", heads=2, tq=7, tk=3, dk=4, causal=True)
    add("shapes_tq7_tk3_causal_zero", "shapes", heads=1, tq=7, tk=3, dk=4, causal=True,
        mask_fill="zero")
    add("shapes_tq4_tk9_causal_window", "shapes", heads=1, tq=4, tk=9, dk=4, causal=True,
        window=3)
    add("shapes_t1", "shapes", heads=1, tq=1, dk=4)
    add("shapes_t1_h3_causal", "shapes", heads=3, tq=1, dk=2, causal=True)
    add("shapes_tq1_tk6_causal", "shapes", heads=2, tq=1, tk=6, dk=4, causal=True)
    add("shapes_tq6_tk1", "shapes", heads=1, tq=6, tk=1, dk=3)
    add("shapes_dk1", "shapes", heads=2, tq=5, dk=1, dv=3, causal=True)
    add("shapes_dv_gt_dk", "shapes", heads=2, tq=5, dk=3, dv=7)
    add("shapes_dv_lt_dk", "shapes", heads=1, tq=5, dk=9, dv=2, causal=True)
    add("shapes_dv1", "shapes", heads=1, tq=4, dk=4, dv=1)
    add("shapes_odd_t37_dk5", "shapes", heads=1, tq=37, dk=5, dv=3, causal=True)
    add("shapes_odd_t37_dk5_nocausal_h3", "shapes", heads=3, kv_heads=1, tq=37, dk=5, dv=4)

    # ---- large logits: |scores| ~ 1e3, finite thanks to max subtraction
    add("large_logits_causal", "large_logits", heads=2, tq=6, dk=8, causal=True, amp=18.0)
    add("large_logits_scale1", "large_logits", heads=1, tq=6, dk=16, scale=1.0, amp=8.0)
    add("large_logits_padding", "large_logits", heads=1, tq=5, dk=4, amp=25.0,
        key_padding=padding(5, [0]))
    add("large_logits_exact_1000_1001", "large_logits", heads=1, tq=2, tk=4, dk=1, dv=2,
        scale=1.0, q=[[[1.0], [-1.0]]], k=[[[1000.0], [1001.0], [999.0], [-1000.0]]])
    add("large_logits_tiled_range", "large_logits", heads=1, tq=70, tk=70, dk=4, amp=20.0,
        causal=True)

    # ---- tile: cross the 64-wide tiles of the tiled kernel
    add("tile_t65_causal", "tile", heads=1, tq=65, dk=8, dv=4, causal=True)
    add("tile_t100_causal_window_padding_mqa", "tile", heads=2, kv_heads=1, tq=100, dk=4,
        dv=3, causal=True, window=30, key_padding=padding(100, range(93, 100)))
    add("tile_tq70_tk130_causal_padding", "tile", heads=1, tq=70, tk=130, dk=4, causal=True,
        key_padding=padding(130, [0, 1, 64, 65, 127]))
    add("tile_t129_padding_tile_edge", "tile", heads=1, tq=129, dk=4, dv=2,
        key_padding=padding(129, range(60, 70)))
    add("tile_t128_window64_causal", "tile", heads=1, tq=128, dk=4, dv=2, causal=True,
        window=64)
    add("tile_t80_dead_rows_zero", "tile", heads=1, tq=80, dk=4, dv=2, mask_fill="zero",
        mask=tile_dead_mask(80))

    # ---- overflow: float32 Q K^T overflows to +-inf (float64 would not; see README)
    add("overflow_float32_scores", "overflow", heads=1, tq=4, tk=3, dk=1, dv=2, scale=1.0,
        q=[[[1e25], [0.5], [-1e25], [0.25]]], k=[[[1e25], [1.0], [2.0]]], overflow=True)
    return cases


def tile_dead_mask(t):
    m = np.ones((t, t), np.uint8)
    m[[0, 63, 64, 79], :] = 0
    m[10, 70:] = 0
    return m


# --------------------------------------------------------------------------
# softmax.json
# --------------------------------------------------------------------------

def softmax_cases():
    inf = np.inf
    rows = [
        ("simple", [[1.0, 2.0, 3.0], [0.0, 0.0, 0.0]]),
        ("large_1000_1001", [[1000.0, 1001.0], [1000.0, 1000.0]]),
        ("large_mixed", [[1000.0, 1001.0, 1002.0, -1000.0], [-1000.0, -1001.0, -1002.0, -999.0]]),
        ("huge_1e30", [[1e30, 0.0, -1e30], [3e38, 3e38, 1.0]]),
        ("neg_inf_entries", [[-inf, 0.0, 1.0, -inf], [2.0, -inf, -inf, -inf]]),
        ("all_neg_inf_row", [[-inf, -inf, -inf], [0.5, -inf, 0.25]]),
        ("pos_inf_entry", [[inf, 0.0, 1.0]]),
        ("nan_entry", [[np.nan, 0.0, 1.0]]),
        ("single_column", [[5.0], [-inf], [-3.5]]),
        ("tiny_spread", [[1e-12, 2e-12, 0.0, -1e-12]]),
        ("random_8x9", (np.random.default_rng(7).normal(size=(8, 9)) * 3).tolist()),
    ]
    out = []
    for name, x in rows:
        x = np.array(x, dtype=np.float64)
        a = ref.softmax_rows(x)
        out.append({"name": name, "rows": x.shape[0], "cols": x.shape[1],
                    "x": f64_exact_list_nonfinite(x),
                    "expect": f64_list(a, 17), "entropy": f64_list(ref.entropy_rows(a), 17),
                    "lse": f64_list(ref.logsumexp_rows(x), 17)})
    return {"cases": out}


def f64_exact_list_nonfinite(a):
    return [Num(repr(float(x))) if math.isfinite(x) else Num(_nonfinite(float(x)))
            for x in np.asarray(a, dtype=np.float64).ravel()]


# --------------------------------------------------------------------------
# multihead.json
# --------------------------------------------------------------------------

def multihead_case(name, t, d_model, heads, kv_heads=None, dk=None, dv=None, causal=False,
                   window=0, key_padding=None, mask=None, scale=None, mask_fill="neg_inf"):
    kv = heads if kv_heads is None else kv_heads
    rdk = d_model // heads if dk is None else dk
    rdv = rdk if dv is None else dv
    rng = case_rng(name)
    w_amp = 1.0 / math.sqrt(d_model)
    x = gaussian32(rng, (t, d_model))
    wq = gaussian32(rng, (d_model, heads * rdk), w_amp)
    wk = gaussian32(rng, (d_model, kv * rdk), w_amp)
    wv = gaussian32(rng, (d_model, kv * rdv), w_amp)
    wo = gaussian32(rng, (heads * rdv, d_model), 1.0 / math.sqrt(heads * rdv))
    r = ref.multi_head(x, wq, wk, wv, wo, t, d_model, heads, kv, rdk, rdv, causal=causal,
                       window=window, key_padding=key_padding, mask=mask, scale=scale,
                       mask_fill=mask_fill)
    return {
        "name": name,
        "opts": {"t": t, "dModel": d_model, "heads": heads, "kvHeads": kv, "dk": rdk, "dv": rdv,
                 "causal": causal, "window": window,
                 "keyPadding": None if key_padding is None else [int(b) for b in key_padding],
                 "mask": None if mask is None else [int(b) for b in np.asarray(mask).ravel()],
                 "scale": None if scale is None else f64(scale), "maskFill": mask_fill},
        # which of kvHeads/dk/dv equal their documented defaults (so a test may omit them)
        "defaults": {"kvHeads": kv_heads is None, "dk": dk is None, "dv": dv is None},
        "x": f32_list(x), "wq": f32_list(wq), "wk": f32_list(wk), "wv": f32_list(wv),
        "wo": f32_list(wo),
        "expect": {
            "output": f64_list(r["output"]), "merged": f64_list(r["merged"]),
            "headOutputs": f64_list(r["headOutputs"]), "weights": f64_list(r["weights"]),
            "q": f64_list(r["q"]), "k": f64_list(r["k"]), "v": f64_list(r["v"]),
            "entropy": f64_list(r["entropy"]), "lse": f64_list(r["lse"]),
            "scale": f64(r["scale"]), "fullyMaskedRows": r["fullyMaskedRows"],
            "nanRows": r["nanRows"], "infScoreRows": r["infScoreRows"],
        },
    }


def multihead_fixture():
    cases = [
        multihead_case("mha_h2_dmodel8", 5, 8, 2),
        multihead_case("mha_h2_dmodel8_causal", 5, 8, 2, causal=True),
        multihead_case("mha_h1_lesson2_shape_causal", 6, 8, 1, dk=4, causal=True),
        multihead_case("mha_gqa_h4_kv2_causal", 6, 16, 4, kv_heads=2, causal=True),
        multihead_case("mha_mqa_h4_kv1", 5, 8, 4, kv_heads=1),
        multihead_case("mha_dk_not_dmodel_over_h", 5, 10, 3, dk=4, dv=5, causal=True),
        multihead_case("mha_dk_dv_differ_gqa", 7, 12, 4, kv_heads=2, dk=2, dv=3),
        multihead_case("mha_window_padding_scale", 6, 8, 2, causal=True, window=2,
                       key_padding=padding(6, [5]), scale=0.8),
        multihead_case("mha_custom_mask_zero_fill", 4, 6, 2,
                       mask=np.array([[1, 0, 0, 1], [0, 0, 0, 0], [1, 1, 0, 0], [0, 1, 1, 1]]),
                       mask_fill="zero"),
    ]
    split = []
    for name, t, heads, d in (("split_t3_h2_d2", 3, 2, 2), ("split_t4_h3_d1", 4, 3, 1),
                              ("split_t2_h1_d5", 2, 1, 5)):
        x = np.arange(t * heads * d, dtype=np.float64).reshape(t, heads * d)
        s = ref.split_heads(x, heads)
        assert np.array_equal(ref.merge_heads(s), x)
        # head h, row i, column c comes from x[i, h*d + c]
        for h in range(heads):
            assert np.array_equal(s[h], x[:, h * d:(h + 1) * d])
        split.append({"name": name, "t": t, "heads": heads, "d": d, "x": f64_list(x),
                      "split": f64_list(s), "merged": f64_list(ref.merge_heads(s))})
    return {"cases": cases, "splitMerge": split}


# --------------------------------------------------------------------------
# examples.json
# --------------------------------------------------------------------------

ENTROPY_DKS = [16, 64, 256, 1024]
ENTROPY_KEYS = 16
ENTROPY_QUERIES = 2000
ENTROPY_SEED = 0
ENTROPY_SPREAD_SEEDS = 32


def induction_fixture(notes):
    x, wq, wk, wv, wo, meta = ref.induction_model()
    r = ref.multi_head(x, wq, wk, wv, wo, meta["t"], meta["dModel"], 2, 2, 12, 12, causal=True)
    a = r["weights"]
    assert a.shape == (2, 11, 11)
    assert round(a[0, 8, 1], 3) == 0.471 and round(a[0, 8, 8], 3) == 0.471, a[0, 8]
    assert round(a[1, 8, 7], 3) == 0.877, a[1, 8]
    notes.append("induction row 8: head 1 keys 1,8 = %.6f, %.6f; head 2 key 7 = %.6f"
                 % (a[0, 8, 1], a[0, 8, 8], a[1, 8, 7]))
    return {
        "tokens": list(ref.LESSON_SENTENCE), "vocab": meta["vocab"], "sharpness": 14,
        "t": meta["t"], "dModel": meta["dModel"], "heads": 2, "kvHeads": 2, "dk": 12, "dv": 12,
        "causal": True, "scale": f64(r["scale"]),
        "x": f32_list(x), "wq": f32_list(wq), "wk": f32_list(wk), "wv": f32_list(wv),
        "wo": f32_list(wo),
        "figures": {"row": 8, "head1": {"keys": [1, 8], "weight": 0.471},
                    "head2": {"key": 7, "weight": 0.877}},
        "expect": {"weights": f64_list(a), "headOutputs": f64_list(r["headOutputs"]),
                   "merged": f64_list(r["merged"]), "output": f64_list(r["output"]),
                   "entropy": f64_list(r["entropy"]), "lse": f64_list(r["lse"])},
    }


def rng_fixture():
    seeds = []
    for seed in (0, 42):
        g = ref.SplitMix64(seed)
        u64 = [str(g.next_u64()) for _ in range(64)]
        g = ref.SplitMix64(seed)
        uni = [g.uniform() for _ in range(64)]
        g = ref.SplitMix64(seed)
        nor = [g.normal() for _ in range(64)]
        assert all(0.0 <= u < 1.0 for u in uni)
        seeds.append({"seed": seed, "u64": u64, "uniform": f64_exact_list(uni),
                      "normal": f64_exact_list(nor)})
    return {"note": "each list starts from a fresh Rng(seed); normal() uses two uniforms "
                    "per pair, cos value first, sin value (the spare) second",
            "seeds": seeds}


def random_fixture():
    out = []
    # (seed, T, d_model, H, H_kv, d_k, d_v, causal); None = the documented default
    for seed, t, d_model, heads, kv, dk, dv, causal in (
            (0, 6, 8, 1, None, None, None, True),      # lesson 2's shapes
            (7, 8, 16, 4, 2, None, None, True),        # GQA
            (11, 5, 6, 2, 1, 4, 2, False)):            # MQA, d_k != d_model / H, not causal
        (x, wq, wk, wv, wo), meta = ref.random_example(seed, t, d_model, heads, kv, dk, dv)
        r = ref.multi_head(x, wq, wk, wv, wo, t, d_model, heads, meta["kvHeads"], meta["dk"],
                           meta["dv"], causal=causal)
        out.append({"seed": seed, **meta, "causal": causal,
                    "tokens": ["t%d" % i for i in range(t)],
                    "x": f32_list(x), "wq": f32_list(wq), "wk": f32_list(wk),
                    "wv": f32_list(wv), "wo": f32_list(wo),
                    "expect": {"output": f64_list(r["output"]), "weights": f64_list(r["weights"]),
                               "merged": f64_list(r["merged"]),
                               "headOutputs": f64_list(r["headOutputs"]),
                               "entropy": f64_list(r["entropy"])}})
    return out


def entropy_fixture(notes):
    scaled, unscaled = ref.entropy_study(ENTROPY_DKS, ENTROPY_KEYS, ENTROPY_QUERIES,
                                         ENTROPY_SEED)
    runs = [ref.entropy_study(ENTROPY_DKS, ENTROPY_KEYS, ENTROPY_QUERIES, s)
            for s in range(1, ENTROPY_SPREAD_SEEDS + 1)]
    s_runs = np.array([r[0] for r in runs])
    u_runs = np.array([r[1] for r in runs])
    s_mean, s_std = s_runs.mean(axis=0), s_runs.std(axis=0, ddof=1)
    u_mean, u_std = u_runs.mean(axis=0), u_runs.std(axis=0, ddof=1)
    ceiling = math.log(ENTROPY_KEYS)
    # The lesson's figures, checked with the statistical slack of one 16-key draw:
    # scaled in ~2.36-2.43 at every d_k, unscaled ~0.10 at d_k = 1024.
    for i, dk in enumerate(ENTROPY_DKS):
        slack = 4 * s_std[i]
        assert 2.36 - slack <= scaled[i] <= 2.43 + slack, (dk, scaled[i], slack)
        assert 2.36 - slack <= s_mean[i] <= 2.43 + slack, (dk, s_mean[i])
        assert scaled[i] < ceiling
    assert abs(unscaled[-1] - 0.10) <= 4 * u_std[-1] + 0.01, (unscaled[-1], u_std[-1])
    assert abs(u_mean[-1] - 0.10) <= 0.02, u_mean[-1]
    assert all(a > b for a, b in zip(unscaled, unscaled[1:])), unscaled
    notes.append("entropy study seed %d: scaled %s, unscaled %s" % (
        ENTROPY_SEED, ", ".join("%.3f" % s for s in scaled),
        ", ".join("%.3f" % u for u in unscaled)))
    notes.append("entropy study over seeds 1..%d: scaled mean %s (sd %s), unscaled mean %s (sd %s)"
                 % (ENTROPY_SPREAD_SEEDS, ", ".join("%.3f" % s for s in s_mean),
                    ", ".join("%.3f" % s for s in s_std), ", ".join("%.3f" % s for s in u_mean),
                    ", ".join("%.3f" % s for s in u_std)))
    return {
        "generator": "numpy.random.default_rng(seed); per d_k: keys (16, d_k) then queries "
                     "(queries, d_k), entries N(0,1)",
        "dks": ENTROPY_DKS, "keys": ENTROPY_KEYS, "queries": ENTROPY_QUERIES,
        "seed": ENTROPY_SEED, "ceiling": f64(ceiling),
        "scaled": f64_list(scaled), "unscaled": f64_list(unscaled),
        "spread": {"seeds": ENTROPY_SPREAD_SEEDS,
                   "scaledMean": f64_list(s_mean), "scaledStd": f64_list(s_std),
                   "unscaledMean": f64_list(u_mean), "unscaledStd": f64_list(u_std)},
        "lesson": {"scaledRange": [2.36, 2.43], "unscaledAt1024": 0.10},
    }


def examples_fixture(notes):
    return {
        "induction": induction_fixture(notes),
        "rng": rng_fixture(),
        "random": random_fixture(),
        "entropy_study": entropy_fixture(notes),
    }


# --------------------------------------------------------------------------
# driver
# --------------------------------------------------------------------------

def build_all(notes):
    return {
        "attention.json": {"cases": attention_cases()},
        "softmax.json": softmax_cases(),
        "multihead.json": multihead_fixture(),
        "examples.json": examples_fixture(notes),
    }


def _same(a, b, path, diffs, text=None):
    """Appends to diffs where b differs from a: floats beyond 1e-9 relative, anything else unequal
    (strings too, unless `text(a, b)` is given and accepts them)."""
    if len(diffs) > 20:
        return
    if isinstance(a, dict) and isinstance(b, dict):
        if a.keys() != b.keys():
            diffs.append("%s: keys %s != %s" % (path, sorted(a), sorted(b)))
            return
        for key in a:
            _same(a[key], b[key], path + "." + key, diffs, text)
    elif isinstance(a, list) and isinstance(b, list):
        if len(a) != len(b):
            diffs.append("%s: length %d != %d" % (path, len(a), len(b)))
            return
        for i, (x, y) in enumerate(zip(a, b)):
            _same(x, y, "%s[%d]" % (path, i), diffs, text)
    elif (isinstance(a, float) or isinstance(b, float)) and not isinstance(a, (bool, str)) \
            and not isinstance(b, (bool, str)) and a is not None and b is not None:
        # tolerate last-digit differences of libm/BLAS builds, nothing more
        if abs(a - b) > 1e-9 * max(abs(a), abs(b)) + 1e-12:
            diffs.append("%s: %r != %r" % (path, a, b))
    elif text and isinstance(a, str) and isinstance(b, str):
        if not text(a, b):
            diffs.append("%s: %r != %r" % (path, a, b))
    elif a != b or type(a) != type(b):
        diffs.append("%s: %r != %r" % (path, a, b))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--check", action="store_true",
                    help="regenerate in memory and exit 1 if committed fixtures differ")
    ap.add_argument("--out", default=FIXTURES, help="fixture directory (default tests/fixtures)")
    args = ap.parse_args()
    notes = []
    fixtures = build_all(notes)
    failed = False
    total = 0
    for fname, obj in fixtures.items():
        text = to_json(obj) + "\n"
        json.loads(text)  # must be valid JSON
        path = os.path.join(args.out, fname)
        total += len(text)
        if args.check:
            if not os.path.exists(path):
                print("MISSING  " + path)
                failed = True
                continue
            with open(path) as f:
                old = f.read()
            if old == text:
                print("same     %s (%d bytes)" % (fname, len(text)))
                continue
            diffs = []
            _same(json.loads(old), json.loads(text), fname, diffs)
            if diffs:
                failed = True
                print("DIFFERS  %s:\n  %s" % (fname, "\n  ".join(diffs[:20])))
            else:
                print("same     %s (numerically, within 1e-9 relative)" % fname)
        else:
            os.makedirs(args.out, exist_ok=True)
            with open(path, "w") as f:
                f.write(text)
            print("wrote    %s (%d bytes)" % (path, len(text)))
    print("total %d bytes" % total)
    for n in notes:
        print(n)
    if failed:
        print("fixtures are stale: run /usr/bin/python3 tests/oracle/gen_fixtures.py")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
