"""The shipped text model on fixed sentences, from python3-sentencepiece and NumPy (never the page's
code):

  tests/fixtures/text-shipped.json
    per sentence: the ids SentencePiece gives with the shipped tokenizer.model; from a float64
    NumPy forward of the shipped last checkpoint (docs/train-api.md's formulas, the forward of
    gen_probe_fixtures.py): log p of each next token, each position's top 5 (id, p; ties: the
    smaller id), and every head's previous, induction, duplicate and first scores on the sentence
    with its role (docs/train-api.md, "The text model's probe").

Run with /usr/bin/python3; --check exits 1 when the committed file differs from what this makes
(floats compared within 1e-9 relative)."""

import json
import os
import sys

import numpy as np
import sentencepiece as spm

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
import gen_probe_fixtures as g  # noqa: E402

MODEL = os.path.join(ROOT, "web", "public", "models", "sotu-bpe")
OUT = os.path.join(ROOT, "tests", "fixtures", "text-shipped.json")
SENTENCES = [
    "The Congress shall have power to lay and collect taxes. The Congress shall have power to lay and collect taxes.",
    "We the people of the United States, in order to form a more perfect union,\n\nestablish justice",
    "naïve café — ⁂ and 😀",
]


def params(meta):
    cfg = meta["config"]
    with np.load(os.path.join(MODEL, meta["checkpoints"][-1]["file"])) as z:
        w = {k: z[k].astype(np.float32) for k in z.files}
    p = {"embed": w["embed"], "pos": w.get("pos"), "unembed": w["unembed"],
         "lnGain": w.get("ln_gain"), "lnBias": w.get("ln_bias"), "layers": []}
    for l in range(cfg["layers"]):
        p["layers"].append({k: w["layers.%d.%s" % (l, k)] for k in ("wq", "wk", "wv", "wo")})
    return p


def build():
    with open(os.path.join(MODEL, "model.json"), encoding="utf-8") as f:
        meta = json.load(f)
    cfg = dict(meta["config"])
    cfg["kvHeads"] = cfg.get("kvHeads") or cfg["heads"]
    p = params(meta)
    sp = spm.SentencePieceProcessor(model_file=os.path.join(MODEL, "tokenizer.model"))
    out = []
    for text in SENTENCES:
        ids = sp.encode(text)
        logits, _ = g.forward(cfg, p, np.array([ids], dtype=np.int64))
        z = logits[0]
        lse = z.max(-1) + np.log(np.exp(z - z.max(-1, keepdims=True)).sum(-1))
        logp = z - lse[:, None]
        top = []
        for row in logp:
            order = sorted(range(len(row)), key=lambda v: (-row[v], v))[:5]
            top.append([{"id": v, "p": float(np.exp(row[v]))} for v in order])
        prev, dup, first, ind = g.text_scores(cfg, p, ids)
        out.append({
            "text": text,
            "ids": ids,
            "logprobs": [float(logp[i, ids[i + 1]]) for i in range(len(ids) - 1)],
            "top": top,
            "scores": {"previous": [float(x) for x in prev], "induction": [float(x) for x in ind],
                       "duplicate": [float(x) for x in dup], "first": [float(x) for x in first]},
            "roles": [g.role(a, b, c, d) for a, b, c, d in zip(prev, ind, dup, first)],
        })
    return {"checkpoint": meta["checkpoints"][-1]["step"], "sentences": out}


def close(a, b):
    if isinstance(a, float) or isinstance(b, float):
        return abs(a - b) <= 1e-9 * max(1.0, abs(a), abs(b))
    if isinstance(a, list):
        return isinstance(b, list) and len(a) == len(b) and all(close(x, y) for x, y in zip(a, b))
    if isinstance(a, dict):
        return isinstance(b, dict) and a.keys() == b.keys() and all(close(a[k], b[k]) for k in a)
    return a == b


def main():
    data = build()
    if "--check" in sys.argv:
        with open(OUT, encoding="utf-8") as f:
            if not close(json.load(f), data):
                print("tests/fixtures/text-shipped.json is stale: run /usr/bin/python3 "
                      "tests/oracle/gen_shipped_fixtures.py", file=sys.stderr)
                sys.exit(1)
        print("text-shipped.json is current")
        return
    with open(OUT, "w", encoding="utf-8") as f:
        json.dump(data, f, ensure_ascii=False, indent=None)
        f.write("\n")
    print("wrote", os.path.relpath(OUT, ROOT))


if __name__ == "__main__":
    main()
