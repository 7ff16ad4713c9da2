"""The notebook helper's text-model loader (attention_playground.load_text_model), NumPy only.

    /usr/bin/python3 -m unittest tests/python/test_text_model_helper.py -v

Against the small committed model written by the C++ trainer that the page's tests also read
(tests/fixtures/text-model: attn_train_text --quick --checkpoints 3, float32, and a float16 copy
of its last checkpoint): the arrays as np.load reads them, the
char table, the helper's forward against the trainer's own held-out loss in model.json (two
independent implementations of docs/train-api.md), and hostile files -> ValueError naming the
file and the field.
"""

import io
import json
import os
import shutil
import sys
import tempfile
import unittest
import zipfile

import numpy as np

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "web", "public"))
sys.path.insert(0, os.path.join(ROOT, "tests", "text"))
import attention_playground as ap  # noqa: E402

MODEL = os.path.join(ROOT, "tests", "fixtures", "text-model")
SOTU = os.path.join(ROOT, "node_modules", "@stdlib", "datasets-sotu")


class TextModelHelper(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="tm_")
        self.copy = os.path.join(self.tmp, "m")
        shutil.copytree(MODEL, self.copy)
        with open(os.path.join(MODEL, "model.json"), encoding="utf-8") as f:
            self.meta = json.load(f)

    def tearDown(self):
        shutil.rmtree(self.tmp, ignore_errors=True)

    def write_meta(self, meta):
        with open(os.path.join(self.copy, "model.json"), "w", encoding="utf-8") as f:
            json.dump(meta, f)

    def test_loads_the_last_checkpoint_and_any_step(self):
        m = ap.load_text_model(MODEL)
        self.assertEqual(m.step, self.meta["checkpoints"][-1]["step"])
        with np.load(os.path.join(MODEL, m.checkpoint["file"])) as z:
            self.assertEqual(sorted(z.files), sorted(m.weights))
            for k in z.files:
                self.assertEqual(m.weights[k].dtype, np.float32)
                np.testing.assert_array_equal(m.weights[k], z[k])
        first = ap.load_text_model(MODEL, step=0)
        self.assertEqual(first.step, 0)
        self.assertFalse(np.array_equal(first.weights["embed"], m.weights["embed"]))
        self.assertIn("step %d" % m.step, repr(m))
        # float16 arrays (what the shipped model holds) are widened exactly
        meta = dict(self.meta, checkpoints=[dict(self.meta["checkpoints"][-1], file="step-00000024.f16.npz")])
        self.write_meta(meta)
        h = ap.load_text_model(self.copy)
        with np.load(os.path.join(MODEL, "step-00000024.f16.npz")) as z:
            for k in z.files:
                self.assertEqual(z[k].dtype, np.float16)
                np.testing.assert_array_equal(h.weights[k], z[k].astype(np.float32))

    def test_char_table(self):
        m = ap.load_text_model(MODEL)
        syms, unk = self.meta["tokenizer"]["symbols"], self.meta["tokenizer"]["unknown"]
        text = "The Union, 1999 — é"
        want = [syms.index(c) if c in syms else syms.index(unk) for c in text]
        self.assertEqual(m.encode(text).tolist(), want)
        self.assertIn(syms.index(unk), want, "— and é are outside the table")
        self.assertEqual(m.decode(m.encode("the state of the union")), "the state of the union")

    def test_forward_gives_the_trainers_held_out_loss(self):
        """The helper's float64 forward over the trainer's evaluation windows gives each
        checkpoint's heldOutLoss (computed by the C++ trainer in float32)."""
        if not os.path.isdir(os.path.join(SOTU, "data")):
            raise AssertionError("no corpus at %s: run npm ci" % SOTU)
        import test_train_text as ttt  # the held-out split as Python's str does it
        _, held = ttt.python_splits(SOTU)
        ids = ap.load_text_model(MODEL).encode(held)
        for ck in self.meta["checkpoints"]:
            m = ap.load_text_model(MODEL, step=ck["step"])
            T, n = m.config["seqLen"], self.meta["evaluation"]["windows"]
            ces = []
            for i in range(n):
                o = i * (len(ids) - T) // (n - 1)
                w = ids[o:o + T]
                logits, maps = m.forward(w)
                lse = np.log(np.exp(logits - logits.max(-1, keepdims=True)).sum(-1)) + logits.max(-1)
                ces.extend((lse[:-1] - logits[np.arange(T - 1), w[1:]]).tolist())
                self.assertEqual(len(maps), m.config["layers"])
                self.assertEqual(maps[0].shape, (m.config["heads"], T, T))
            self.assertAlmostEqual(float(np.mean(ces)), ck["heldOutLoss"], delta=2e-6 * ck["heldOutLoss"])

    def test_forward_refuses_bad_ids(self):
        m = ap.load_text_model(MODEL)
        with self.assertRaisesRegex(ValueError, "ids: .*tokens"):
            m.forward(np.zeros(m.config["seqLen"] + 1, dtype=np.int64))
        with self.assertRaisesRegex(ValueError, "ids: every id"):
            m.forward([0, m.config["vocab"]])

    def test_hostile_model_json(self):
        cases = [
            ("not json{", "model.json: cannot be read as JSON"),
            (json.dumps([1, 2]), "model.json: no 'config'"),
            (json.dumps({**self.meta, "config": {**self.meta["config"], "vocab": 10 ** 9}}), "config.vocab"),
            (json.dumps({**self.meta, "config": {**self.meta["config"], "dModel": 65536, "vocab": 65536}}),
             "more than"),
            (json.dumps({**self.meta, "config": {**self.meta["config"], "heads": 3}}), "not a multiple"),
            (json.dumps({**self.meta, "config": {**self.meta["config"], "vocab": 90}}), "tokenizer"),
            (json.dumps({**self.meta, "checkpoints": []}), "checkpoints must be"),
            (json.dumps({**self.meta, "checkpoints": [{"step": 0, "file": "../../etc/passwd"}]}), "not a .npz name"),
        ]
        for text, msg in cases:
            with open(os.path.join(self.copy, "model.json"), "w", encoding="utf-8") as f:
                f.write(text)
            with self.assertRaisesRegex(ValueError, msg, msg=text[:60]):
                ap.load_text_model(self.copy)
        self.write_meta(self.meta)
        with self.assertRaisesRegex(ValueError, r"step: no checkpoint at step 5 \(steps: 0, 4, 24\)"):
            ap.load_text_model(self.copy, step=5)

    def sp_meta(self, **edit):
        """The fixture model's meta with SentencePiece's reading of the shipped tokenizer.model
        (tests/fixtures/bpe-tokenizer.json, from python3-sentencepiece) as its tokenizer."""
        with open(os.path.join(ROOT, "tests", "fixtures", "bpe-tokenizer.json"), encoding="utf-8") as f:
            ref = json.load(f)
        r = ref["model"]
        tok = {"kind": "sentencepiece", "model": "bpe", "normalization": "identity", "addDummyPrefix": False,
               "pieces": r["pieces"], "scores": r["scores"], "types": r["types"], "unknownId": r["unknownId"]}
        tok.update(edit)
        return {**self.meta, "config": {**self.meta["config"], "vocab": len(r["pieces"])}, "tokenizer": tok}, ref

    def test_sentencepiece_encoder(self):
        """The helper's BPE encoder gives SentencePiece's ids for the fixture's texts (the shipped
        model's test compares the whole held-out split)."""
        meta, ref = self.sp_meta()
        m = ap.TextModel(meta, meta["checkpoints"][-1], {}, "test")
        for case in ref["cases"]:
            self.assertEqual(m.encode(case["text"]).tolist(), case["ids"], case["text"])
        self.assertEqual(m.decode(m.encode("the nation")), "the nation")

    def test_hostile_sentencepiece_tokenizer(self):
        V = len(self.sp_meta()[1]["model"]["pieces"])
        cases = [({"model": "unigram"}, "SentencePiece BPE with identity"),
                 ({"addDummyPrefix": True}, "no dummy prefix"),
                 ({"pieces": ["a"] * 3}, "lists of"),
                 ({"types": [6] * V}, "types must be"),
                 ({"unknownId": 5}, "types must be")]
        for edit, msg in cases:
            meta, _ = self.sp_meta(**edit)
            self.write_meta(meta)
            with self.assertRaisesRegex(ValueError, msg, msg=str(edit)):
                ap.load_text_model(self.copy)

    def test_hostile_npz(self):
        last = os.path.join(self.copy, self.meta["checkpoints"][-1]["file"])
        good = open(last, "rb").read()
        name = os.path.basename(last)

        def rewrite(arrays):
            buf = io.BytesIO()
            np.savez(buf, **arrays)
            open(last, "wb").write(buf.getvalue())

        with np.load(io.BytesIO(good)) as z:
            arrays = {k: z[k] for k in z.files}
        for data, msg in [(good[: len(good) // 2], name + ": not a readable .npz"),
                          (b"PK\x03\x04" + b"\x00" * 40, name + ": not a readable .npz")]:
            open(last, "wb").write(data)
            with self.assertRaisesRegex(ValueError, msg):
                ap.load_text_model(self.copy)
        bad = dict(arrays)
        bad["embed"] = bad["embed"].copy()
        bad["embed"][3, 1] = np.nan
        rewrite(bad)
        with self.assertRaisesRegex(ValueError, name + ": 'embed' holds NaN or Inf"):
            ap.load_text_model(self.copy)
        rewrite({**arrays, "unembed": arrays["unembed"].T})
        with self.assertRaisesRegex(ValueError, name + r": 'unembed' is float32 \(91, 16\)"):
            ap.load_text_model(self.copy)
        rewrite({k: v for k, v in arrays.items() if k != "layers.1.wo"})
        with self.assertRaisesRegex(ValueError, name + ": no array 'layers.1.wo'"):
            ap.load_text_model(self.copy)
        rewrite({**arrays, "extra": np.zeros(2, np.float32)})
        with self.assertRaisesRegex(ValueError, "arrays this config does not have: extra"):
            ap.load_text_model(self.copy)
        rewrite({**arrays, "embed": arrays["embed"].astype(np.int32)})
        with self.assertRaisesRegex(ValueError, "'embed' is int32"):
            ap.load_text_model(self.copy)
        buf = io.BytesIO()  # a pickled object array: refused, never unpickled
        np.save(buf, np.array([{"a": 1}], dtype=object), allow_pickle=True)
        with zipfile.ZipFile(last, "w") as z:
            z.writestr("embed.npy", buf.getvalue())
        with self.assertRaisesRegex(ValueError, name + ": not a readable .npz"):
            ap.load_text_model(self.copy)

    def test_no_path_without_serve(self):
        with self.assertRaisesRegex(ValueError, "path: give the folder"):
            ap.load_text_model()


if __name__ == "__main__":
    unittest.main()
