"""The notebook helper web/public/attention_playground.py (standard library + NumPy).

    /usr/bin/python3 -m unittest discover -s tests/python -v

Covers: the array link encoding (float32 bits exact, both encodings, against the format written out
by hand with struct/base64/zlib), the link show() builds (keys, tokens percent-encoded as the page's
codec reads them, options), HTML escaping of the iframe and of the postMessage script, shape errors
naming the array and the dimension, the serve() server (index.html, .wasm as application/wasm), and
that the NumPy fixtures the TS tests read (tests/oracle/gen_array_prints.py) are current.
"""

import base64
import html.parser
import os
import shutil
import struct
import subprocess
import sys
import tempfile
import unittest
import urllib.parse
import urllib.request
import warnings
import zlib

import numpy as np

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "web", "public"))
import attention_playground as ap  # noqa: E402

URL = "http://example.test/play/"


def b64url(b):
    return base64.urlsafe_b64encode(b).rstrip(b"=").decode()


def fields(link):
    """The hash of a show() URL as a dict (values still percent-encoded)."""
    frag = urllib.parse.urlsplit(link).fragment
    return dict(p.split("=", 1) for p in frag.split("&"))


def query(link):
    return dict(urllib.parse.parse_qsl(urllib.parse.urlsplit(link).query))


class Frames(html.parser.HTMLParser):
    """Collects iframe attributes and script text, as a browser's parser would see them."""

    def __init__(self):
        super().__init__()
        self.iframes, self.scripts, self._in_script = [], [], False

    def handle_starttag(self, tag, attrs):
        if tag == "iframe":
            self.iframes.append(dict(attrs))
        self._in_script = tag == "script"
        if self._in_script:
            self.scripts.append("")

    def handle_endtag(self, tag):
        if tag == "script":
            self._in_script = False

    def handle_data(self, data):
        if self._in_script:
            self.scripts[-1] += data


def parse_html(s):
    p = Frames()
    p.feed(s)
    p.close()
    return p


def lesson2_w():
    rng = np.random.default_rng(0)
    x = rng.normal(size=(6, 8))
    wq, wk = rng.normal(size=(8, 4)), rng.normal(size=(8, 4))
    s = (x @ wq) @ (x @ wk).T / 2.0
    s = np.where(np.tri(6, dtype=bool), s, -np.inf)
    e = np.exp(s - s.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


class Encoding(unittest.TestCase):
    def test_format_written_out_by_hand(self):
        w = np.array([[1.0, 0.0], [0.5, 0.5]], dtype=np.float32)
        want = "1.f4.2x2.b." + b64url(struct.pack("<4f", 1.0, 0.0, 0.5, 0.5))
        self.assertEqual(ap.encode_array(w), want)
        self.assertEqual(ap.encode_array(w.astype(np.float64), dtype="f8"),
                         "1.f8.2x2.b." + b64url(struct.pack("<4d", 1.0, 0.0, 0.5, 0.5)))

    def test_float32_bits_exact_both_encodings(self):
        rng = np.random.default_rng(7)
        a = rng.normal(size=(3, 5, 7)).astype(np.float32)
        a.flat[:6] = [np.nan, np.inf, -np.inf, -0.0, 1e-45, 3.4028235e38]
        for compress in (True, False):
            s = ap.encode_array(a, compress=compress)
            back = ap.decode_array(s)
            self.assertEqual(back.dtype, np.float32)
            self.assertEqual(back.shape, a.shape)
            self.assertEqual(back.tobytes(), a.astype("<f4").tobytes())

    def test_deflate_is_raw_rfc1951(self):
        z = np.zeros((32, 32), np.float32)
        s = ap.encode_array(z)
        ver, dtype, shape, enc, payload = s.split(".")
        self.assertEqual((ver, dtype, shape, enc), ("1", "f4", "32x32", "z"))
        raw = base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4))
        self.assertEqual(zlib.decompress(raw, -15), bytes(4096))
        self.assertLess(len(s), 100)

    def test_float64_rounds_to_float32(self):
        w = lesson2_w()
        self.assertEqual(ap.decode_array(ap.encode_array(w)).tobytes(), w.astype("<f4").tobytes())

    def test_refusals(self):
        for bad, msg in ((np.zeros((0, 3)), "empty"), (np.zeros((1, 1, 1, 1, 1)), "1 to 4"),
                         (np.array(["a"]), "numeric"), (np.zeros(1 << 21, np.float32), "at most")):
            with self.assertRaises((ValueError, TypeError)) as cm:
                ap.encode_array(bad)
            self.assertIn(msg, str(cm.exception))
        for s, msg in (("2.f4.1.b.AAAAAA", "version"), ("1.i4.1.b.AAAAAA", "dtype"), ("1.f4.0.b.", "shape"),
                       ("1.f4.2.b.AAAAAA", "needs 8"), ("1.f4.1.b.AA+A", "base64url"),
                       ("1.f4.9999999x9999999.b.", "limit")):
            with self.assertRaises(ValueError) as cm:
                ap.decode_array(s)
            self.assertIn(msg, str(cm.exception))


class Show(unittest.TestCase):
    def test_weights_travel_in_the_link(self):
        w = lesson2_w()
        p = ap.show(w, tokens="the cat sat on the mat".split(), url=URL)
        self.assertTrue(p.in_link)
        self.assertTrue(p.url.startswith(URL + "?"))
        q = query(p.url)
        self.assertEqual(q["embed"], "1")
        self.assertRegex(q["id"], r"^ap-\d+-[0-9a-f]{8}$")
        f = fields(p.url)
        self.assertEqual(f["v"], "1")
        self.assertEqual(f["tokens"], "the+cat+sat+on+the+mat")
        self.assertEqual(ap.decode_array(f["uw"]).tobytes(), w.astype("<f4").tobytes())
        frame = parse_html(p._repr_html_())
        self.assertEqual(len(frame.iframes), 1)
        self.assertEqual(frame.scripts, [])
        self.assertEqual(frame.iframes[0]["src"], p.url)
        self.assertEqual(frame.iframes[0]["height"], str(ap.DEFAULT_HEIGHT))

    def test_heads_nan_and_height(self):
        w = np.stack([lesson2_w(), lesson2_w()])
        w[1, 0, :] = np.nan  # a NaN row is allowed: the page shows NaN cells
        with self.assertWarns(UserWarning):
            p = ap.show(w, url=URL, height=420)
        self.assertEqual(ap.decode_array(fields(p.url)["uw"]).shape, (2, 6, 6))
        self.assertIn('height="420"', p._repr_html_())

    def test_tokens_are_escaped(self):
        toks = ['<script>alert(1)</script>', 'a"b', "c'd", "x&y=z#w", "50%", "a+b", "名前", "é"]
        p = ap.show(np.full((8, 8), 1 / 8), tokens=toks, url=URL)
        f = fields(p.url)
        # The page reads tokens as its codec writes them: each percent-encoded, joined by '+'.
        self.assertEqual([urllib.parse.unquote(t) for t in f["tokens"].split("+")], toks)
        self.assertNotIn("<", p.url)
        self.assertNotIn('"', p.url)
        markup = p._repr_html_()
        self.assertNotIn("<script", markup)
        parsed = parse_html(markup)
        self.assertEqual(parsed.iframes[0]["src"], p.url)

    def test_token_errors(self):
        with self.assertRaises(ValueError) as cm:
            ap.show(np.eye(2), tokens=["a b", "c"], url=URL)
        self.assertIn("space", str(cm.exception))
        with self.assertRaises(ValueError) as cm:
            ap.show(np.eye(3), tokens=["a", "b"], url=URL)
        self.assertIn("2 tokens for 3 keys", str(cm.exception))

    def test_options_become_link_keys(self):
        q = np.ones((4, 2))
        p = ap.show(Q=q, K=q, V=q, causal=False, window=2, padding=[0, 3], fill="finite", scale=0.5, view="mask",
                    url=URL)
        f = fields(p.url)
        self.assertEqual((f["causal"], f["win"], f["pad"], f["fill"], f["scale"], f["view"]),
                         ("0", "2", "0,3", "finite", "0.5", "mask"))
        self.assertEqual(sorted(k for k in f if k.startswith("u")), ["uk", "uq", "uv"])
        with self.assertRaises(TypeError) as cm:
            ap.show(Q=q, K=q, V=q, colour="red", url=URL)
        self.assertIn("unknown option colour", str(cm.exception))
        with self.assertRaises(ValueError):
            ap.show(Q=q, K=q, V=q, fill="nan", url=URL)

    def test_shape_errors_name_the_array_and_dimension(self):
        q, k5 = np.ones((6, 4)), np.ones((6, 5))
        cases = [
            (dict(Q=q, K=k5, V=q), "K has 5 columns but Q has 4 (d_k must match"),
            (dict(Q=q, K=q, V=np.ones((5, 4))), "V has 5 rows but K has 6 (T_k must match"),
            (dict(Q=q, K=q, V=q, mask=np.ones((5, 6), bool)), "mask has 5 rows but Q has 6"),
            (dict(Q=q, K=q, V=q, mask=np.full((6, 6), 2)), "True/False or 0/1"),
            (dict(X=np.ones((6, 8)), W_q=np.ones((7, 4)), W_k=np.ones((8, 4)), W_v=np.ones((8, 4))),
             "W_q has 7 rows but X has 8 columns (d_model must match)"),
            (dict(X=np.ones((6, 8)), W_q=np.ones((8, 4)), W_k=np.ones((8, 3)), W_v=np.ones((8, 4))),
             "W_k has 3 columns but W_q has 4 (d_k must match)"),
            (dict(W=np.ones(6)), "W has shape (6,)"),
            (dict(W=np.array([[1.0, np.inf]])), "W[0, 1] is inf"),
        ]
        for kwargs, msg in cases:
            with self.subTest(msg=msg), self.assertRaises(ValueError) as cm:
                ap.show(url=URL, **kwargs)
            self.assertIn(msg, str(cm.exception))
        with self.assertRaises(TypeError):
            ap.show(W=np.eye(2), Q=q, K=q, V=q, url=URL)
        with self.assertRaises(TypeError):
            ap.show(Q=q, K=q, url=URL)

    def test_nan_in_q_warns(self):
        q = np.ones((3, 2))
        qn = q.copy()
        qn[1, 0] = np.nan
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            ap.show(Q=qn, K=q, V=q, url=URL)
        self.assertTrue(any("Q holds 1 NaN" in str(w.message) for w in caught))

    def test_lesson2_inputs_and_mask(self):
        rng = np.random.default_rng(0)
        x = rng.normal(size=(6, 8))
        ws = [rng.normal(size=(8, 4)) for _ in range(3)]
        f = fields(ap.show(X=x, W_q=ws[0], W_k=ws[1], W_v=ws[2], url=URL).url)
        self.assertEqual(sorted(k for k in f if k.startswith("u")), ["uwk", "uwq", "uwv", "ux"])
        q = np.ones((6, 4))
        f = fields(ap.show(Q=q, K=q, V=q, mask=np.tril(np.ones((6, 6), bool)), url=URL).url)
        np.testing.assert_array_equal(ap.decode_array(f["um"]), np.tril(np.ones((6, 6))))

    def test_lesson2_inputs_are_one_head_unless_heads_is_given(self):
        # The docstring's call on lesson 2's arrays (d_k = 4): one head of 4, as the lesson
        # computes it, not the page's default example's 2 heads of 2.
        rng = np.random.default_rng(0)
        x = rng.normal(size=(6, 8))
        ws = [rng.normal(size=(8, 4)) for _ in range(3)]
        self.assertEqual(fields(ap.show(X=x, W_q=ws[0], W_k=ws[1], W_v=ws[2], url=URL).url)["heads"], "1")
        self.assertEqual(fields(ap.show(X=x, W_q=ws[0], W_k=ws[1], W_v=ws[2], heads=2, url=URL).url)["heads"], "2")

    def test_non_square_weights_are_refused_with_the_pages_reason(self):
        with self.assertRaises(ValueError) as cm:
            ap.show(np.full((4, 6), 1 / 6), url=URL)
        self.assertIn("W is 4 x 6: the page draws a W you give as square weights (one query per key); "
                      "give Q, K, V for cross-attention", str(cm.exception))

    def test_q_and_k_of_different_lengths_are_linked_as_cross_attention(self):
        q, k, v = np.ones((4, 2)), np.ones((6, 2)), np.ones((6, 3))
        f = fields(ap.show(Q=q, K=k, V=v, url=URL).url)
        self.assertEqual(ap.decode_array(f["uq"]).shape, (4, 2))
        self.assertEqual(ap.decode_array(f["uk"]).shape, (6, 2))
        self.assertEqual(ap.decode_array(f["uv"]).shape, (6, 3))

    def caught(self, **kwargs):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            ap.show(url=URL, **kwargs)
        return [str(w.message) for w in caught]

    def test_inverted_mask_warns_with_the_fix(self):
        # Lesson 2's mask marks the *forbidden* keys; the helper takes the allowed ones.
        q = np.random.default_rng(3).normal(size=(6, 4))
        forbidden = np.triu(np.ones((6, 6)), k=1).astype(bool)
        msgs = self.caught(Q=q, K=q, V=q, mask=forbidden)
        self.assertTrue(any("looks inverted" in m and "pass ~mask" in m for m in msgs), msgs)
        # With the page's default causal=True nothing is left in any row.
        self.assertTrue(any(m.startswith("6 of 6 rows (rows 0, 1, 2, 3, 4, 5, counting from 0) may attend to no key")
                            and "causal=True" in m and "NaN" in m for m in msgs), msgs)
        msgs = self.caught(Q=q, K=q, V=q, mask=forbidden, causal=False)
        self.assertTrue(any(m.startswith("1 of 6 rows (row 5, counting from 0)") for m in msgs), msgs)
        # Only the diagonal forbidden (~np.eye) also reads as inverted.
        self.assertTrue(any("diagonal" in m for m in self.caught(Q=q, K=q, V=q, mask=~np.eye(6, dtype=bool))))
        # The right mask, and ~mask, warn about nothing.
        self.assertEqual(self.caught(Q=q, K=q, V=q, mask=np.tril(np.ones((6, 6), bool))), [])
        self.assertEqual(self.caught(Q=q, K=q, V=q, mask=~forbidden), [])

    def test_a_row_left_without_keys_warns(self):
        q = np.ones((4, 2))
        msgs = self.caught(Q=q, K=q, V=q, padding=[0])  # causal: query 0 may only see key 0
        self.assertTrue(any(m.startswith("1 of 4 rows (row 0, counting from 0)") and "padding=[0]" in m for m in msgs),
                        msgs)
        msgs = self.caught(Q=q, K=q, V=q, mask=np.array([0, 0, 0, 0]), causal=False, fill="zero")
        self.assertTrue(any("4 of 4 rows" in m and "all zeros" in m for m in msgs), msgs)

    def test_nan_warnings_name_the_cell(self):
        w = np.full((6, 6), 1 / 6)
        w[3, 2] = np.nan
        msgs = self.caught(W=w)
        self.assertTrue(any("W[3, 2]" in m and "nothing is masked or filled" in m for m in msgs), msgs)
        q = np.ones((3, 2))
        k = q.copy()
        k[2, 1] = np.nan
        msgs = self.caught(Q=q, K=k, V=q)
        self.assertTrue(any(m.startswith("K holds 1 NaN") and "K[2, 1]" in m for m in msgs), msgs)

    def test_large_arrays_go_by_postmessage(self):
        rng = np.random.default_rng(1)
        w = rng.random((200, 200))
        w /= w.sum(axis=1, keepdims=True)
        p = ap.show(w, url=URL + "?foo=1")
        self.assertFalse(p.in_link)
        q = query(p.url)
        self.assertEqual((q["arrays"], q["embed"], q["foo"]), ("post", "1", "1"))
        self.assertNotIn("uw=", p.url)
        parsed = parse_html(p._repr_html_())
        self.assertEqual(len(parsed.scripts), 1)
        script = parsed.scripts[0]
        self.assertNotIn("</", script)  # nothing in the data can close the script early
        self.assertIn('"attention-playground:arrays-ready"', script)
        self.assertIn('"http://example.test"', script)  # posted to the page's origin only
        self.assertIn("e.source!==f.contentWindow", script)
        start = script.index('"uw":"') + 6
        value = script[start:script.index('"', start)]
        self.assertEqual(ap.decode_array(value).tobytes(), w.astype("<f4").tobytes())

    def test_hostile_frame_id_and_url_are_escaped(self):
        p = ap.show(np.eye(2), url='http://example.test/a"b<c>/')
        markup = p._repr_html_()
        self.assertNotIn('a"b', markup)
        self.assertEqual(parse_html(markup).iframes[0]["src"], p.url)


class Serve(unittest.TestCase):
    def test_serves_the_folder_with_wasm_type(self):
        d = tempfile.mkdtemp()
        try:
            with open(os.path.join(d, "index.html"), "w") as f:
                f.write("<!doctype html><title>ok</title>")
            os.mkdir(os.path.join(d, "assets"))
            with open(os.path.join(d, "assets", "core.wasm"), "wb") as f:
                f.write(b"\0asm\1\0\0\0")
            with open(os.path.join(d, "assets", "main.js"), "w") as f:
                f.write("export {};")
            server = ap.serve(d)
            try:
                self.assertRegex(server.url, r"^http://127\.0\.0\.1:\d+/$")
                with urllib.request.urlopen(server.url) as r:
                    self.assertEqual(r.status, 200)
                    self.assertIn(b"<title>ok</title>", r.read())
                with urllib.request.urlopen(server.url + "assets/core.wasm") as r:
                    self.assertEqual(r.headers["Content-Type"], "application/wasm")
                    self.assertEqual(r.read(), b"\0asm\1\0\0\0")
                with urllib.request.urlopen(server.url + "assets/main.js") as r:
                    self.assertEqual(r.headers["Content-Type"], "text/javascript")
                # show() without url= uses the server just started.
                self.assertTrue(ap.show(np.eye(2)).url.startswith(server.url + "?embed=1"))
            finally:
                server.stop()
            with self.assertRaises(OSError):
                urllib.request.urlopen(server.url, timeout=2)
        finally:
            shutil.rmtree(d)

    def test_refuses_a_folder_without_index(self):
        d = tempfile.mkdtemp()
        try:
            with self.assertRaises(FileNotFoundError):
                ap.serve(d)
        finally:
            shutil.rmtree(d)


class Fixtures(unittest.TestCase):
    def test_numpy_fixtures_for_the_ts_tests_are_current(self):
        # tests/web/arrays-*.test.ts read them; links.json holds this helper's encodings.
        r = subprocess.run([sys.executable, os.path.join(ROOT, "tests", "oracle", "gen_array_prints.py"), "--check"],
                           capture_output=True, text=True)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)


if __name__ == "__main__":
    unittest.main()
