"""The Text model view's references, from Python and NumPy (never the page's code):

  tests/fixtures/text-view.json
    tokens:  the corpus split as docs/text-model.md "Corpus and tokens" states it (data/*.json by
             name, stably sorted by year; held-out = year >= 2000; texts str.strip()ped and joined
             by "\\n\\n"), the symbol table (the training split's code points in order, then U+2047),
             and the held-out split's ids (a code point outside the table -> the unknown id): their
             SHA-256 as little-endian uint32, count, unknown count, first and last 64;
    softmax: log-softmax (float64) and the top 5 (ties: smaller id) of float32 logit rows;
    f16:     float16 statistics of tests/fixtures/text-model/step-00000024.f16.npz (below);
    f32:     the same statistics of the float32 checkpoint it was cast from;
    knockout: the fixture model's last checkpoint, intact and with L1 H2 knocked out: held-out
             loss on model.json's windowText, in-context score on its probe (NumPy float64).
  tests/fixtures/text-model/step-00000024.f16.npz
    the tiny fixture model's last checkpoint (attn_train_text --quick, float32) cast to float16,
    written as numpy.savez does (stored .npy entries) with a fixed timestamp.

The tiny model in tests/fixtures/text-model/ is the trainer's own output:
    build/native/attn_train_text --quick --checkpoints 3 --out tests/fixtures/text-model
Run with /usr/bin/python3; --check exits 1 when a committed file differs from what this makes
(the JSON's floats compared within 1e-9 relative, the .npz byte for byte)."""

import hashlib
import io
import json
import os
import sys
import zipfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
CORPUS = os.path.join(ROOT, "node_modules", "@stdlib", "datasets-sotu", "data")
MODEL = os.path.join(ROOT, "tests", "fixtures", "text-model")
OUT = os.path.join(ROOT, "tests", "fixtures", "text-view.json")
F16 = os.path.join(MODEL, "step-00000024.f16.npz")
UNKNOWN = "\u2047"


def split():
    docs = []
    for name in sorted(os.listdir(CORPUS)):
        if name.endswith(".json"):
            with open(os.path.join(CORPUS, name), encoding="utf-8") as f:
                docs.append(json.load(f))
    docs.sort(key=lambda d: d["year"])  # stable: ties keep the name order
    train = "\n\n".join(d["text"].strip() for d in docs if d["year"] < 2000)
    held = "\n\n".join(d["text"].strip() for d in docs if d["year"] >= 2000)
    return train, held


def tokens():
    train, held = split()
    symbols = sorted(set(train)) + [UNKNOWN]
    index = {c: i for i, c in enumerate(symbols)}
    unk = len(symbols) - 1
    ids = np.array([index.get(c, unk) for c in held], dtype="<u4")
    return {
        "symbols": symbols,
        "heldOut": {
            "textSha256": hashlib.sha256(held.encode("utf-8")).hexdigest(),
            "chars": len(held),
            "idsSha256": hashlib.sha256(ids.tobytes()).hexdigest(),
            "unknown": int((ids == unk).sum()),
            "first": ids[:64].tolist(),
            "last": ids[-64:].tolist(),
        },
    }


def softmax_cases():
    rng = np.random.default_rng(20261205)
    rows = [
        rng.normal(0, 3, 91).astype(np.float32),  # a char model's row
        np.array([2.0, 2.0, 1.0, 2.0, -1.0, 0.5, 2.0], dtype=np.float32),  # ties at the top
        np.array([80.0, -80.0, 79.5, 0.0, 60.0, 81.0], dtype=np.float32),  # large logits: shift first
        np.array([0.0, 0.0, 0.0], dtype=np.float32),  # uniform, V < 5
    ]
    out = []
    for x in rows:
        x64 = x.astype(np.float64)
        m = x64.max()
        lp = x64 - m - np.log(np.exp(x64 - m).sum())
        order = sorted(range(len(x)), key=lambda i: (-lp[i], i))[:5]
        out.append({"logits": [float(v) for v in x], "logSoftmax": lp.tolist(),
                    "top": [{"id": i, "p": float(np.exp(lp[i]))} for i in order]})
    return out


def f16_bytes():
    """The last checkpoint as float16, in numpy.savez's layout (stored entries) at a fixed time."""
    src = np.load(os.path.join(MODEL, "step-00000024.npz"))
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_STORED) as z:
        for name in src.files:
            b = io.BytesIO()
            np.lib.format.write_array(b, src[name].astype("<f2"), allow_pickle=False)
            z.writestr(zipfile.ZipInfo(name + ".npy", date_time=(1980, 1, 1, 0, 0, 0)), b.getvalue())
    return buf.getvalue()


def stats(data, dtype):
    z = np.load(io.BytesIO(data))
    out = {}
    for name in z.files:
        a = z[name]
        assert a.dtype == dtype
        x = a.astype(np.float64).ravel()
        out[name] = {"shape": list(a.shape), "sum": float(x.sum()), "sumSq": float((x * x).sum()),
                     "first": x[:8].tolist()}
    return out


def same(a, b, where="$"):
    """None when b equals a, floats within 1e-9 relative (NumPy's float64 exp and log take another
    path on AVX-512 CPUs than on AVX2 ones, and the two differ in the last bit); else where."""
    if isinstance(a, dict) and isinstance(b, dict):
        if a.keys() != b.keys():
            return where + ": keys"
        return next((d for k in a if (d := same(a[k], b[k], where + "." + k))), None)
    if isinstance(a, list) and isinstance(b, list):
        if len(a) != len(b):
            return where + ": length"
        return next((d for i, (x, y) in enumerate(zip(a, b)) if (d := same(x, y, f"{where}[{i}]"))), None)
    if isinstance(a, float) and isinstance(b, (int, float)) and not isinstance(b, bool):
        return None if abs(a - b) <= 1e-9 * max(abs(a), abs(b)) + 1e-15 else where
    return None if a == b and type(a) is type(b) else where


def knockout():
    """The fixture model's last checkpoint with head (layer 0, head 1) knocked out (its output
    zeroed): the held-out loss on model.json's windowText and the in-context score on the probe
    model.json describes (SplitMix64 draws from candidateIds), intact and knocked out, float64."""
    sys.path.insert(0, HERE)
    import gen_probe_fixtures as gp
    with open(os.path.join(MODEL, "model.json"), encoding="utf-8") as f:
        meta = json.load(f)
    c, ck, pr = meta["config"], meta["checkpoints"][-1], meta["probe"]
    syms = meta["tokenizer"]["symbols"]
    ids = {s: i for i, s in enumerate(syms)}
    unk = ids[meta["tokenizer"]["unknown"]]
    windows = np.array([[ids.get(ch, unk) for ch in w] for w in meta["evaluation"]["windowText"]])
    with np.load(os.path.join(MODEL, ck["file"])) as z:
        w = {k: z[k] for k in z.files}
    cfg = {"dModel": c["dModel"], "heads": c["heads"], "kvHeads": c.get("kvHeads") or c["heads"],
           "positional": c["positional"]}
    p = {"embed": w["embed"], "pos": w.get("pos"), "unembed": w["unembed"],
         "lnGain": w.get("ln_gain"), "lnBias": w.get("ln_bias"),
         "layers": [{k: w["layers.%d.%s" % (l, k)] for k in ("wq", "wk", "wv", "wo")} for l in range(c["layers"])]}
    probe = gp.make_probe(pr["candidateIds"], c["seqLen"], pr["rows"], pr["seed"])
    out = {"checkpoint": ck["step"], "heads": [[0, 1]], "windows": len(windows), "probeRows": pr["rows"]}
    for name, ab in (("intact", ()), ("knockedOut", ((0, 1),))):
        first, second, _, _ = gp.probe_scores(cfg, p, probe, ab)
        out[name] = {"heldOutLoss": gp.window_loss(cfg, p, windows, ab), "inContext": float(second - first)}
    return out


def main():
    check = "--check" in sys.argv[1:]
    data = f16_bytes()
    f32 = os.path.join(MODEL, "step-00000024.npz")
    with open(f32, "rb") as f:
        f32_data = f.read()
    text = json.dumps({"tokens": tokens(), "softmax": softmax_cases(), "knockout": knockout(),
                       "f16": {"file": os.path.basename(F16), "arrays": stats(data, np.float16)},
                       "f32": {"file": os.path.basename(f32), "arrays": stats(f32_data, np.float32)}},
                      indent=1) + "\n"
    if check:
        stale = []
        with open(OUT, encoding="utf-8") as f:
            diff = same(json.loads(text), json.load(f))
        if diff:
            stale.append(f"{OUT} (at {diff})")
        with open(F16, "rb") as f:
            if f.read() != data:
                stale.append(F16)
        for p in stale:
            print(f"{os.path.relpath(p, ROOT)} is stale: run /usr/bin/python3 {os.path.relpath(__file__, ROOT)}",
                  file=sys.stderr)
        return 1 if stale else 0
    with open(OUT, "w", encoding="utf-8") as f:
        f.write(text)
    with open(F16, "wb") as f:
        f.write(data)
    print(f"wrote {os.path.relpath(OUT, ROOT)} and {os.path.relpath(F16, ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
