"""The text model's SentencePiece tokenizer, from python3-sentencepiece (never the page's code):

  tests/fixtures/bpe-tokenizer.json
    model:   the shipped tokenizer.model read by SentencePiece: its pieces, scores and types (the
             proto's Type: 1 normal, 2 unknown, 3 control, 4 user-defined, 5 unused, 6 byte) and
             the unknown id, and the SHA-256 of the file;
    heldOut: the held-out split (as docs/text-model.md "Corpus and tokens" states it) encoded by
             SentencePiece as one string: the ids' count, SHA-256 (as little-endian uint32), the
             unknown count, the first and last 64;
    cases:   short texts with their ids (spaces, paragraph breaks, unknown characters, runs of
             them, emoji, words SentencePiece splits).

Run with /usr/bin/python3 [MODEL_DIR] (default web/public/models/sotu-bpe); --check exits 1 when
the committed file differs from what this makes."""

import hashlib
import json
import os
import sys

import numpy as np
import sentencepiece as spm

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gen_text_view_fixtures import split  # noqa: E402  (the corpus split, as docs/text-model.md states it)

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
OUT = os.path.join(ROOT, "tests", "fixtures", "bpe-tokenizer.json")
DEFAULT_MODEL = os.path.join(ROOT, "web", "public", "models", "sotu-bpe")

CASES = [
    "",
    "The nation",
    "Mr. Speaker, Mr. Vice President, Members of Congress:",
    "a  b   c",
    " leading space",
    "trailing space ",
    "\n\nThe Congress\nshall",
    "tab\there",
    "naïve café — “quoted”",
    "ĀĀ a ĀxĀ",
    "😀😀 emoji 👍",
    "internationalization counterrevolutionary",
    "1,234,567 dollars in 1999 and 2023",
    "THE UNITED STATES",
    "▁ a literal ▁ sign",
    "the the the the the the",
    "00000 0000000 llll ffff",
    # Last: the browser test's sentence typed twice (the shipped model's induction head).
    "The Congress shall have power to lay and collect taxes, duties, imposts and excises. "
    "The Congress shall have power to lay and collect taxes, duties, imposts and excises.",
]


def proto_types(raw):
    """The pieces' Type from the .model's bytes (ModelProto field 1, SentencePiece field 3; absent
    = 1, NORMAL): python3-sentencepiece has no call for a user-defined piece, and Debian's package
    comes without protobuf, so the few wire-format rules needed are read here."""

    def varint(b, i):
        v = s = 0
        while True:
            c = b[i]
            i += 1
            v |= (c & 0x7F) << s
            s += 7
            if c < 0x80:
                return v, i

    def fields(b):
        i = 0
        while i < len(b):
            key, i = varint(b, i)
            f, wt = key >> 3, key & 7
            if wt == 0:
                v, i = varint(b, i)
            elif wt == 1:
                v, i = b[i:i + 8], i + 8
            elif wt == 2:
                n, i = varint(b, i)
                v, i = b[i:i + n], i + n
            elif wt == 5:
                v, i = b[i:i + 4], i + 4
            else:
                raise ValueError("wire type %d" % wt)
            yield f, v

    types = []
    for f, v in fields(raw):
        if f == 1:
            t = 1
            for g, w in fields(v):
                if g == 3:
                    t = w
            types.append(t)
    return types


def build(model_dir):
    path = os.path.join(model_dir, "tokenizer.model")
    with open(path, "rb") as f:
        raw = f.read()
    sp = spm.SentencePieceProcessor(model_file=path)
    V = sp.get_piece_size()
    types = proto_types(raw)
    assert len(types) == V
    # SentencePiece's own view agrees where it has one.
    for i in range(V):
        assert sp.is_unknown(i) == (types[i] == 2) and sp.is_control(i) == (types[i] == 3)
        assert sp.is_unused(i) == (types[i] == 5) and sp.is_byte(i) == (types[i] == 6)
    held = split()[1]
    ids = np.array(sp.encode(held), dtype="<u4")
    unk = sp.unk_id()
    return {
        "model": {
            "sha256": hashlib.sha256(raw).hexdigest(),
            "pieces": [sp.id_to_piece(i) for i in range(V)],
            "scores": [float(sp.get_score(i)) for i in range(V)],
            "types": types,
            "unknownId": unk,
        },
        "heldOut": {
            "textSha256": hashlib.sha256(held.encode("utf-8")).hexdigest(),
            "count": int(ids.size),
            "idsSha256": hashlib.sha256(ids.tobytes()).hexdigest(),
            "unknown": int((ids == unk).sum()),
            "first": ids[:64].tolist(),
            "last": ids[-64:].tolist(),
        },
        "cases": [{"text": t, "ids": sp.encode(t)} for t in CASES],
    }


def main():
    args = [a for a in sys.argv[1:] if a != "--check"]
    data = build(args[0] if args else DEFAULT_MODEL)
    text = json.dumps(data, ensure_ascii=False, indent=1) + "\n"
    if "--check" in sys.argv:
        with open(OUT, encoding="utf-8") as f:
            if f.read() != text:
                print("tests/fixtures/bpe-tokenizer.json is stale: run /usr/bin/python3 "
                      "tests/oracle/gen_bpe_fixtures.py", file=sys.stderr)
                sys.exit(1)
        print("bpe-tokenizer.json is current")
        return
    with open(OUT, "w", encoding="utf-8") as f:
        f.write(text)
    print("wrote", os.path.relpath(OUT, ROOT))


if __name__ == "__main__":
    main()
