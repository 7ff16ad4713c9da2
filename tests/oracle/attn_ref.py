"""Reference maths for the attention core, in float64 NumPy.

Independent of the C++ code: written from the lessons in ../shared/seeds and the
semantics stated in docs/js-api.md. Inputs are float32 values (the
caller rounds them); every computation here is float64.

NumPy's own behaviour is the reference for the corner cases: a row whose
maximum is -inf becomes NaN through exp(-inf - (-inf)) = exp(nan), exactly as
the lesson's `softmax` does.
"""

import math

import numpy as np

FINITE_FILL = -1e9
FLT_MAX = float(np.finfo(np.float32).max)
MASK64 = (1 << 64) - 1


# --------------------------------------------------------------------------
# softmax and entropy
# --------------------------------------------------------------------------

def softmax_rows(s):
    """Softmax along the last axis with max subtraction, NumPy semantics.

    An all -inf row gives NaN (inf - inf), a row holding +inf gives NaN too.
    """
    s = np.asarray(s, dtype=np.float64)
    with np.errstate(invalid="ignore", over="ignore", divide="ignore"):
        top = np.max(s, axis=-1, keepdims=True)
        e = np.exp(s - top)
        return e / np.sum(e, axis=-1, keepdims=True)


def logsumexp_rows(s):
    """log sum exp along the last axis with max subtraction (NaN for all -inf rows)."""
    s = np.asarray(s, dtype=np.float64)
    with np.errstate(invalid="ignore", over="ignore", divide="ignore"):
        top = np.max(s, axis=-1, keepdims=True)
        total = np.sum(np.exp(s - top), axis=-1, keepdims=True)
        return (top + np.log(total))[..., 0]


def entropy_rows(a):
    """-sum a log a per row, with 0 log 0 = 0; a row holding NaN gives NaN."""
    a = np.asarray(a, dtype=np.float64)
    with np.errstate(invalid="ignore", divide="ignore"):
        terms = np.where(a > 0, a * np.log(np.where(a > 0, a, 1.0)), 0.0)
    h = -np.sum(terms, axis=-1)
    h = np.where(np.isnan(a).any(axis=-1), np.nan, h)
    return h + 0.0  # turn -0.0 into 0.0


# --------------------------------------------------------------------------
# masks
# --------------------------------------------------------------------------

def allowed_matrix(tq, tk, causal=False, window=0, key_padding=None, mask=None):
    """Boolean (T_q, T_k): True where query i may attend to key j (all kinds ANDed)."""
    i = np.arange(tq)[:, None]
    j = np.arange(tk)[None, :]
    diag = i + (tk - tq)  # bottom-right alignment
    ok = np.ones((tq, tk), dtype=bool)
    if causal:
        ok &= j <= diag
    if window:
        ok &= j > diag - window
    if key_padding is not None:
        ok &= np.asarray(key_padding, dtype=np.int64).reshape(1, tk) != 0
    if mask is not None:
        ok &= np.asarray(mask, dtype=np.int64).reshape(tq, tk) != 0
    return ok


# --------------------------------------------------------------------------
# scaled dot-product attention
# --------------------------------------------------------------------------

def attention(q, k, v, heads, kv_heads, tq, tk, dk, dv, causal=False, window=0,
              key_padding=None, mask=None, scale=None, mask_fill="neg_inf",
              float32_score_overflow=False):
    """Naive attention in float64. Returns a dict of float64 arrays and counts.

    float32_score_overflow: scores whose magnitude exceeds the float32 range become
    +-inf, as they do in the float32 kernel (only used by the "overflow" family).
    """
    if heads % kv_heads:
        raise ValueError("kv_heads must divide heads")
    q = np.asarray(q, dtype=np.float64).reshape(heads, tq, dk)
    k = np.asarray(k, dtype=np.float64).reshape(kv_heads, tk, dk)
    v = np.asarray(v, dtype=np.float64).reshape(kv_heads, tk, dv)
    sc = 1.0 / math.sqrt(dk) if scale is None else float(scale)
    group = heads // kv_heads
    ok = allowed_matrix(tq, tk, causal, window, key_padding, mask)
    dead = ~ok.any(axis=1)  # (T_q,) fully masked rows

    scores = np.empty((heads, tq, tk))
    weights = np.empty((heads, tq, tk))
    output = np.empty((heads, tq, dv))
    lse = np.empty((heads, tq))
    for h in range(heads):
        g = h // group
        # explicit dot products (einsum, no BLAS) so the result does not depend on the BLAS build
        s = np.einsum("id,jd->ij", q[h], k[g]) * sc
        if float32_score_overflow:
            s = np.where(np.abs(s) > FLT_MAX, np.sign(s) * np.inf, s)
        scores[h] = s
        fill = FINITE_FILL if mask_fill == "finite" else -np.inf
        sm = np.where(ok, s, fill)
        a = softmax_rows(sm)
        l = logsumexp_rows(sm)
        if mask_fill == "zero":
            a[dead, :] = 0.0
            l[dead] = -np.inf
        elif mask_fill not in ("neg_inf", "finite"):
            raise ValueError("unknown mask_fill " + mask_fill)
        weights[h] = a
        lse[h] = l
        with np.errstate(invalid="ignore"):
            output[h] = np.einsum("ij,jd->id", a, v[g])
    if mask_fill == "zero":
        output[:, dead, :] = 0.0
    entropy = entropy_rows(weights)
    nan_rows = int(np.sum(np.isnan(weights).any(axis=2) | np.isnan(output).any(axis=2)))
    inf_rows = int(np.sum(np.isinf(scores).any(axis=2)))
    return {
        "output": output,
        "weights": weights,
        "scores": scores,
        "entropy": entropy,
        "lse": lse,
        "fullyMaskedRows": int(dead.sum()) * heads,
        "nanRows": nan_rows,
        "infScoreRows": inf_rows,
        "scale": sc,
    }


# --------------------------------------------------------------------------
# multi-head attention
# --------------------------------------------------------------------------

def split_heads(x, heads):
    """(T, H*d) -> (H, T, d): column block h becomes head h."""
    t, width = x.shape
    if width % heads:
        raise ValueError("width not divisible by heads")
    return np.ascontiguousarray(x.reshape(t, heads, width // heads).transpose(1, 0, 2))


def merge_heads(y):
    """(H, T, d) -> (T, H*d), the inverse of split_heads."""
    h, t, d = y.shape
    return np.ascontiguousarray(y.transpose(1, 0, 2).reshape(t, h * d))


def multi_head(x, wq, wk, wv, wo, t, d_model, heads, kv_heads=None, dk=None, dv=None,
               **mask_opts):
    kv_heads = heads if kv_heads is None else kv_heads
    if dk is None:
        if d_model % heads:
            raise ValueError("d_model not divisible by heads")
        dk = d_model // heads
    dv = dk if dv is None else dv
    x = np.asarray(x, np.float64).reshape(t, d_model)
    wq = np.asarray(wq, np.float64).reshape(d_model, heads * dk)
    wk = np.asarray(wk, np.float64).reshape(d_model, kv_heads * dk)
    wv = np.asarray(wv, np.float64).reshape(d_model, kv_heads * dv)
    wo = np.asarray(wo, np.float64).reshape(heads * dv, d_model)
    mm = lambda a, b: np.einsum("ij,jk->ik", a, b)
    qh = split_heads(mm(x, wq), heads)
    kh = split_heads(mm(x, wk), kv_heads)
    vh = split_heads(mm(x, wv), kv_heads)
    r = attention(qh, kh, vh, heads, kv_heads, t, t, dk, dv, **mask_opts)
    merged = merge_heads(r["output"])
    with np.errstate(invalid="ignore"):
        out = mm(merged, wo)
    r.update({"q": qh, "k": kh, "v": vh, "headOutputs": r["output"], "merged": merged,
              "output": out, "dk": dk, "dv": dv, "kvHeads": kv_heads})
    return r


# --------------------------------------------------------------------------
# the documented SplitMix64 + Box-Muller generator (cpp/include/attn/rng.hpp)
# --------------------------------------------------------------------------

class SplitMix64:
    def __init__(self, seed):
        self.state = seed & MASK64
        self.spare = None

    def next_u64(self):
        self.state = (self.state + 0x9E3779B97F4A7C15) & MASK64
        z = self.state
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK64
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK64
        return z ^ (z >> 31)

    def uniform(self):
        return float(self.next_u64() >> 11) * 2.0 ** -53

    def normal(self):
        if self.spare is not None:
            out, self.spare = self.spare, None
            return out
        u1 = self.uniform()
        u2 = self.uniform()
        radius = math.sqrt(-2.0 * math.log(1.0 - u1))
        angle = 6.283185307179586 * u2
        self.spare = radius * math.sin(angle)
        return radius * math.cos(angle)


# --------------------------------------------------------------------------
# the lessons' examples
# --------------------------------------------------------------------------

LESSON_SENTENCE = "the cat sat on the mat because the cat was tired".split()


def induction_model(tokens=LESSON_SENTENCE, sharpness=14.0, dk=12):
    """Lesson 1's hand-built two-head model as (x, wq, wk, wv, wo, meta).

    Word one-hots use the lesson's vocabulary order, sorted(set(tokens)), in dims
    0..V-1; position one-hots sit in dims dk..dk+T-1. Head 1 (columns 0..dk-1)
    matches words, head 2 (columns dk..2dk-1) maps position i to i-1.
    """
    t = len(tokens)
    vocab = sorted(set(tokens))
    n_words = len(vocab)
    assert n_words <= dk and t <= dk
    d_model = 2 * dk
    x = np.zeros((t, d_model))
    wq = np.zeros((d_model, d_model))
    wk = np.zeros((d_model, d_model))
    for pos, word in enumerate(tokens):
        x[pos, vocab.index(word)] = 1.0
        x[pos, dk + pos] = 1.0
    for w in range(n_words):
        wq[w, w] = sharpness
        wk[w, w] = 1.0
    for pos in range(t):
        wk[dk + pos, dk + pos] = 1.0
        if pos >= 1:
            wq[dk + pos, dk + pos - 1] = sharpness
    eye = np.eye(d_model)
    return x, wq, wk, eye.copy(), eye.copy(), {"t": t, "dModel": d_model, "heads": 2,
                                                "kvHeads": 2, "dk": dk, "dv": dk,
                                                "vocab": vocab}


def random_example(seed, t, d_model, heads, kv_heads=None, dk=None, dv=None):
    """X, W_q, W_k, W_v, W_o drawn in that order, row-major, N(0,1), rounded to float32."""
    kv_heads = heads if kv_heads is None else kv_heads
    dk = d_model // heads if dk is None else dk
    dv = dk if dv is None else dv
    rng = SplitMix64(seed)
    shapes = [(t, d_model), (d_model, heads * dk), (d_model, kv_heads * dk),
              (d_model, kv_heads * dv), (heads * dv, d_model)]
    mats = []
    for rows, cols in shapes:
        vals = [rng.normal() for _ in range(rows * cols)]
        mats.append(np.array(vals, dtype=np.float64).astype(np.float32).reshape(rows, cols))
    return mats, {"t": t, "dModel": d_model, "heads": heads, "kvHeads": kv_heads,
                  "dk": dk, "dv": dv}


def entropy_study(dks, keys, queries, seed):
    """Mean row entropy (nats) of softmax(q K^T * s) with s = 1/sqrt(dk) and s = 1.

    NumPy's default_rng; for each dk a fresh key set (keys, dk) then queries (queries, dk).
    """
    rng = np.random.default_rng(seed)
    scaled, unscaled = [], []
    for dk in dks:
        kmat = rng.normal(size=(keys, dk))
        qmat = rng.normal(size=(queries, dk))
        s = np.einsum("id,jd->ij", qmat, kmat)
        scaled.append(float(np.mean(entropy_rows(softmax_rows(s / math.sqrt(dk))))))
        unscaled.append(float(np.mean(entropy_rows(softmax_rows(s)))))
    return scaled, unscaled
