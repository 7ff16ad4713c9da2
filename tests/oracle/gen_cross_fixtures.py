"""NumPy oracle for the core's cross multi-head attention (attn::multi_head_attention with x_kv,
core.multiHeadAttention with opts.xKv): queries from x (T_q rows), keys and values from x_kv
(T_k rows), written here from the formulas, in float64, independent of the C++:

    Q = x W_Q (T_q, H d_k)      K = x_kv W_K (T_k, H_kv d_k)      V = x_kv W_V (T_k, H_kv d_v)
    head h (kv head g = h // (H / H_kv)):  S = Q_h K_g^T * scale (T_q, T_k),  scale = 1/sqrt(d_k)
    masks: causal allows key j for query i iff j <= i + (T_k - T_q); keyPadding (T_k,) 0 = padding
    A = softmax(S) over the allowed keys,  Y_h = A V_g (T_q, d_v)
    merged = [Y_0 | Y_1 | ...] (T_q, H d_v),  output = merged W_o (T_q, d_model)

Inputs are float32 (stored in their shortest float32 form), the expectations float64 at full
precision. Writes tests/fixtures/cross_mha.json (--check: exit 1 if it is stale)."""

import json
import os
import sys
import zlib

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.normpath(os.path.join(HERE, "..", "fixtures", "cross_mha.json"))


def f32_text(a):
    """Float32 values as the shortest decimal that parses back to the same float32."""
    out = []
    for x in np.asarray(a, dtype=np.float32).ravel():
        text = str(x)
        assert np.float32(float(text)) == x, (text, x)
        out.append(float(text))
    return out


def f64_text(a):
    """Float64 values at full precision (repr), so a float64 run can be held to 1e-12."""
    return [float(x) for x in np.asarray(a, dtype=np.float64).ravel()]


def cross_mha(x, x_kv, wq, wk, wv, wo, heads, kv_heads, dk, dv, causal=False, key_padding=None):
    x, x_kv, wq, wk, wv, wo = (np.asarray(a, np.float64) for a in (x, x_kv, wq, wk, wv, wo))
    tq, tk = x.shape[0], x_kv.shape[0]
    mm = lambda a, b: np.einsum("ij,jk->ik", a, b)  # noqa: E731 (no BLAS: the same sums anywhere)
    q = mm(x, wq).reshape(tq, heads, dk).transpose(1, 0, 2)  # (H, T_q, d_k)
    k = mm(x_kv, wk).reshape(tk, kv_heads, dk).transpose(1, 0, 2)  # (H_kv, T_k, d_k)
    v = mm(x_kv, wv).reshape(tk, kv_heads, dv).transpose(1, 0, 2)  # (H_kv, T_k, d_v)
    allowed = np.ones((tq, tk), dtype=bool)
    if causal:
        i = np.arange(tq)[:, None]
        j = np.arange(tk)[None, :]
        allowed &= j <= i + (tk - tq)
    if key_padding is not None:
        allowed &= np.asarray(key_padding, dtype=bool)[None, :]
    assert allowed.any(1).all(), "every query keeps at least one key"
    group = heads // kv_heads
    weights = np.zeros((heads, tq, tk))
    y = np.zeros((heads, tq, dv))
    for h in range(heads):
        g = h // group
        s = mm(q[h], k[g].T) / np.sqrt(dk)
        s = np.where(allowed, s, -np.inf)
        e = np.exp(s - s.max(1, keepdims=True))
        weights[h] = e / e.sum(1, keepdims=True)
        y[h] = mm(weights[h], v[g])
    merged = y.transpose(1, 0, 2).reshape(tq, heads * dv)
    return {"q": q, "k": k, "v": v, "weights": weights, "headOutputs": y, "merged": merged,
            "output": mm(merged, wo)}


def case(name, tq, tk, d_model, heads, kv_heads=None, causal=False, key_padding=None):
    kv_heads = heads if kv_heads is None else kv_heads
    dk = dv = d_model // heads
    rng = np.random.default_rng(zlib.crc32(name.encode()))
    g = lambda *shape, amp=1.0: (rng.normal(size=shape) * amp).astype(np.float32)  # noqa: E731
    x, x_kv = g(tq, d_model), g(tk, d_model)
    w = 1 / np.sqrt(d_model)
    wq, wk = g(d_model, heads * dk, amp=w), g(d_model, kv_heads * dk, amp=w)
    wv, wo = g(d_model, kv_heads * dv, amp=w), g(heads * dv, d_model, amp=w)
    r = cross_mha(x, x_kv, wq, wk, wv, wo, heads, kv_heads, dk, dv, causal, key_padding)
    return {
        "name": name,
        "opts": {"t": tq, "tk": tk, "dModel": d_model, "heads": heads, "kvHeads": kv_heads,
                 "dk": dk, "dv": dv, "causal": causal, "keyPadding": key_padding},
        "x": f32_text(x), "xKv": f32_text(x_kv),
        "wq": f32_text(wq), "wk": f32_text(wk), "wv": f32_text(wv), "wo": f32_text(wo),
        "expect": {key: f64_text(val) for key, val in r.items()},
    }


def cases():
    return [
        case("T_q 3, T_k 5", 3, 5, 8, 2),
        case("T_q 5, T_k 3, grouped-query (heads 4, kvHeads 2)", 5, 3, 8, 4, kv_heads=2),
        case("key padding on the key/value sequence (T_q 4, T_k 6)", 4, 6, 6, 2,
             key_padding=[1, 1, 1, 0, 1, 0]),
        case("causal with T_q 3 < T_k 6: query i sees keys j <= i + 3", 3, 6, 8, 2, causal=True),
    ]


if __name__ == "__main__":
    sys.path.insert(0, HERE)
    from fixture_file import main  # noqa: E402

    sys.exit(main(OUT, lambda: json.dumps({"cases": cases()}, indent=1) + "\n", __file__))
