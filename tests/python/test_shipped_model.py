"""The text model the page ships (web/public/models/sotu-bpe/), checked as a student would load it.

    /usr/bin/python3 -m unittest tests/python/test_shipped_model.py -v

- its files: 16-24 checkpoints from step 0 to the last, log-spaced, every array float16 with the
  config's shapes, all of one model <= 4 MB gzipped; model.json names the command that rebuilds it;
- its tokenizer: tokenizer.model beside it, read by python3-sentencepiece, gives model.json's pieces
  and the ids of the trainer's held-out windows; the notebook helper's own encoder gives the same;
- the trainer's figures: the notebook helper's NumPy float64 forward (independent of the C++ core)
  gives the last checkpoint's held-out loss on the trainer's windows, and the bigram baseline;
- the targets model.json reports agree with its checkpoints (the page shows the missed ones).
"""

import gzip
import json
import math
import os
import sys
import unittest

import numpy as np

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "web", "public"))
sys.path.insert(0, os.path.join(ROOT, "tests", "text"))
import attention_playground as ap  # noqa: E402

MODEL = os.path.join(ROOT, "web", "public", "models", "sotu-bpe")
SOTU = os.path.join(ROOT, "node_modules", "@stdlib", "datasets-sotu")


class ShippedModel(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        with open(os.path.join(MODEL, "model.json"), encoding="utf-8") as f:
            cls.meta = json.load(f)

    def test_files(self):
        m, cks = self.meta, self.meta["checkpoints"]
        self.assertTrue(16 <= len(cks) <= 24, len(cks))
        self.assertEqual(cks[0]["step"], 0)
        self.assertEqual(cks[-1]["step"], m["training"]["steps"])
        self.assertEqual(m["training"]["command"], "npm run text-model")
        self.assertEqual(m["training"]["dtype"], "float16")
        # log-spaced: each step at most ~2x the previous one's + 1 beyond the first few
        for a, b in zip(cks[5:], cks[6:]):
            self.assertLess(b["step"], 2.2 * a["step"] + 2, (a["step"], b["step"]))
        gz = 0
        shapes = ap._text_model_shapes(m["config"])
        for ck in cks:
            path = os.path.join(MODEL, ck["file"])
            with open(path, "rb") as f:
                gz += len(gzip.compress(f.read(), 6))
            with np.load(path) as z:
                self.assertEqual(sorted(z.files), sorted(shapes))
                for k in z.files:
                    self.assertEqual((z[k].dtype, z[k].shape), (np.dtype(np.float16), shapes[k]), k)
        with open(os.path.join(MODEL, "model.json"), "rb") as f:
            gz += len(gzip.compress(f.read(), 6))
        self.assertLessEqual(gz, 4 * 1024 * 1024, "%d bytes gzipped" % gz)
        with open(os.path.join(MODEL, "tokenizer.model"), "rb") as f:
            gz += len(gzip.compress(f.read(), 6))
        extra = set(os.listdir(MODEL)) - {c["file"] for c in cks} - {"model.json", "tokenizer.model"}
        self.assertEqual(extra, set(), "files the model does not list")

    def test_held_out_loss_and_bigram(self):
        if not os.path.isdir(os.path.join(SOTU, "data")):
            raise AssertionError("no corpus at %s: run npm ci" % SOTU)
        import test_train_text as ttt
        train, held = ttt.python_splits(SOTU)
        import sentencepiece
        m = ap.load_text_model(MODEL)
        sp = sentencepiece.SentencePieceProcessor(model_file=os.path.join(MODEL, "tokenizer.model"))
        self.assertEqual([sp.id_to_piece(i) for i in range(sp.get_piece_size())], self.meta["tokenizer"]["pieces"])
        ids = np.array(sp.encode(held), dtype=np.int64)
        # The helper's own encoder (what a student without SentencePiece runs) agrees.
        np.testing.assert_array_equal(m.encode(held), ids)
        T, n = m.config["seqLen"], self.meta["evaluation"]["windows"]
        offs = [i * (len(ids) - T) // (n - 1) for i in range(n)]
        # model.json's windowIds (what the page measures a knock-out on) are these windows.
        wids = self.meta["evaluation"]["windowIds"]
        self.assertEqual(len(wids), n)
        ces = []
        for k, o in enumerate(offs):
            w = ids[o:o + T]
            np.testing.assert_array_equal(wids[k], w, "windowIds[%d]" % k)
            logits, _ = m.forward(w)
            mx = logits.max(-1, keepdims=True)
            lse = (mx + np.log(np.exp(logits - mx).sum(-1, keepdims=True)))[:, 0]
            ces.append(lse[:-1] - logits[np.arange(T - 1), w[1:]])
        loss = float(np.mean(ces))
        self.assertAlmostEqual(loss, m.checkpoint["heldOutLoss"], delta=2e-6 * loss)
        bigram = self.meta["evaluation"]["bigramLoss"]
        self.assertLess(loss, 0.9 * bigram, "the 10 %% target (%.3f against %.3f)" % (loss, bigram))

    def test_the_docs_numpy_snippet_runs(self):
        """docs/text-model.md's NumPy block, run from the repository's root: lesson 2's head on the
        shipped checkpoint, and its printed previous-token weight equals the helper's forward."""
        import contextlib
        import io
        import re
        with open(os.path.join(ROOT, "docs", "text-model.md"), encoding="utf-8") as f:
            doc = f.read()
        code = re.search(r"<!-- numpy-snippet -->\n```python\n(.*?)```", doc, re.S).group(1)
        buf, cwd = io.StringIO(), os.getcwd()
        try:
            os.chdir(ROOT)
            with contextlib.redirect_stdout(buf):
                exec(compile(code, "docs/text-model.md", "exec"), {})
        finally:
            os.chdir(cwd)
        got = float(re.search(r"previous token (\d\.\d\d)", buf.getvalue()).group(1))
        m = ap.load_text_model(MODEL)
        _, maps = m.forward(m.encode("the state of the union"))
        a = maps[0][1]
        self.assertAlmostEqual(got, np.mean([a[i, i - 1] for i in range(1, a.shape[0])]), delta=0.006)

    def test_targets_agree_with_the_checkpoints(self):
        t = {x["name"]: x for x in self.meta["targets"]}
        last = self.meta["checkpoints"][-1]
        self.assertEqual(t["induction"]["met"], last["induction"] >= 0.4)
        self.assertEqual(t["previous"]["met"], last["previous"] >= 0.4)
        self.assertEqual(t["inContext"]["met"], last["inContext"] <= -1.0)
        self.assertAlmostEqual(t["heldOut"]["got"], last["heldOutLoss"] / self.meta["evaluation"]["bigramLoss"],
                               delta=1e-12)


if __name__ == "__main__":
    unittest.main()
