"""Show your own attention arrays in the Attention Playground, from a notebook.

    import numpy as np
    import attention_playground as ap

    ap.serve("path/to/dist")          # once: the playground's files, on 127.0.0.1 (offline is fine)
    ap.show(W, tokens="the cat sat on the mat .".split())     # your weights, 2-D or 3-D (heads)
    ap.show(Q=Q, K=K, V=V, mask=None, causal=True)            # the page's core computes attention
    ap.show(X=X, W_q=Wq, W_k=Wk, W_v=Wv)                      # lesson 2's inputs (one head; heads=2 splits)
    m = ap.load_text_model("dist/models/sotu-bpe")          # the page's text model, as NumPy arrays
    ids = m.encode("the state of the union"); logits, maps = m.forward(ids)

`show` returns an object that Jupyter draws as an <iframe> of the playground (its `url` attribute is
the link). Small arrays travel in the link itself (no script needed, works in any notebook and in
exported HTML); larger ones are handed to the page by postMessage from a small script next to the
frame, which runs only in a trusted notebook. Any hosted copy of the playground works too:
`ap.show(W, url="https://…/")`; Colab, VS Code and any remote kernel (JupyterHub) need such an
https copy, since serve() listens on the kernel's machine, not the browser's.

Single file, standard library + NumPy. The link format, keys and message protocol are described in
the playground's docs/arrays.md.
"""

import base64
import functools
import html
import http.server
import itertools
import json
import math
import os
import secrets
import threading
import urllib.parse
import warnings
import zlib

import numpy as np

__all__ = ["show", "serve", "encode_array", "decode_array", "Playground", "Server", "load_text_model", "TextModel"]
__version__ = "1.0"

#: Version of the array link strings ("1.f4.6x6.b.<base64url>").
LINK_VERSION = 1
#: All arrays of one link together stay under this many characters; beyond it they go by postMessage.
ARRAY_LINK_MAX_CHARS = 96 * 1024
#: The limit for one value (and all values together) sent by postMessage instead of the link.
ARRAY_MESSAGE_MAX_CHARS = -(-(1 << 20) * 8 * 4 // 3) + 64
#: Elements in one array (the page's limit).
MAX_ELEMENTS = 1 << 20
#: Dimensions of one array.
MAX_NDIM = 4
#: The page's limits for tokens.
MAX_TOKENS = 256
MAX_TOKEN_LENGTH = 32
#: Link keys of the arrays.
KEYS = {"W": "uw", "Q": "uq", "K": "uk", "V": "uv", "mask": "um",
        "X": "ux", "W_q": "uwq", "W_k": "uwk", "W_v": "uwv"}
#: postMessage types (see docs/arrays.md).
READY_MESSAGE = "attention-playground:arrays-ready"
ARRAYS_MESSAGE = "attention-playground:arrays"
MESSAGE_VERSION = 1
DEFAULT_HEIGHT = 640
_COMPRESS_FROM = 96

# show(**options): name -> (link key, how the value is written)
_FILLS = ("neg_inf", "finite", "zero")
_VIEWS = ("heads", "mask", "scale", "output")


def _yes_no(name, v):
    if not isinstance(v, (bool, np.bool_)):
        raise TypeError("%s must be True or False, not %r" % (name, v))
    return "1" if v else "0"


def _nonneg_int(name, v):
    if isinstance(v, (bool, np.bool_)) or not isinstance(v, (int, np.integer)) or v < 0:
        raise TypeError("%s must be a whole number >= 0, not %r" % (name, v))
    return str(int(v))


def _positive_int(name, v):
    if isinstance(v, (bool, np.bool_)) or not isinstance(v, (int, np.integer)) or v < 1:
        raise TypeError("%s must be a whole number >= 1, not %r" % (name, v))
    return str(int(v))


def _positions(name, v):
    try:
        items = [int(p) for p in v]
    except (TypeError, ValueError):
        raise TypeError("%s must be a list of positions (whole numbers), not %r" % (name, v)) from None
    if any(p < 0 for p in items) or any(int(p) != p for p in v):
        raise TypeError("%s must be a list of positions >= 0, not %r" % (name, v))
    return ",".join(str(p) for p in items)


def _one_of(choices):
    def write(name, v):
        if v not in choices:
            raise ValueError("%s must be one of %s, not %r" % (name, ", ".join(choices), v))
        return v
    return write


def _scale(name, v):
    if v in ("sqrt", "none"):
        return v
    if isinstance(v, (bool, np.bool_)) or not isinstance(v, (int, float, np.integer, np.floating)) \
            or not math.isfinite(float(v)) or float(v) <= 0:
        raise ValueError("%s must be 'sqrt', 'none' or a positive number, not %r" % (name, v))
    return repr(float(v))


_OPTIONS = {
    "causal": ("causal", _yes_no),
    "window": ("win", _nonneg_int),
    "padding": ("pad", _positions),
    "fill": ("fill", _one_of(_FILLS)),
    "scale": ("scale", _scale),
    "heads": ("heads", _positive_int),
    "view": ("view", _one_of(_VIEWS)),
    "head": ("head", _nonneg_int),
}


# --------------------------------------------------------------------------
# the array link encoding
# --------------------------------------------------------------------------

def _as_numeric(a, name):
    arr = np.asarray(a)
    if arr.dtype == np.bool_:
        arr = arr.astype(np.float32)
    if arr.dtype.kind not in "iuf":
        raise TypeError("%s has dtype %s; a numeric array is needed (float, int or bool)" % (name, arr.dtype))
    if not 1 <= arr.ndim <= MAX_NDIM:
        raise ValueError("%s has shape %s; an array of 1 to %d dimensions is needed" % (name, arr.shape, MAX_NDIM))
    if 0 in arr.shape:
        raise ValueError("%s is empty (shape %s)" % (name, arr.shape))
    if arr.size > MAX_ELEMENTS:
        raise ValueError("%s has %d elements; the playground takes at most %d" % (name, arr.size, MAX_ELEMENTS))
    return arr


def encode_array(a, *, dtype="f4", compress=True, name="the array"):
    """An array as a link value: "1.<f4|f8>.<shape joined by x>.<b|z>.<base64url, no padding>".

    f4 is exact for float32 arrays (float64 values are rounded to float32, as the page's core
    computes in float32). z = raw DEFLATE (zlib wbits=-15), used when it is shorter.
    """
    if dtype not in ("f4", "f8"):
        raise ValueError("dtype must be 'f4' or 'f8', not %r" % (dtype,))
    arr = _as_numeric(a, name)
    with np.errstate(over="ignore"):
        raw = np.ascontiguousarray(arr, dtype="<" + dtype).tobytes()
    enc, payload = "b", raw
    if compress and len(raw) >= _COMPRESS_FROM:
        c = zlib.compressobj(9, zlib.DEFLATED, -15)
        z = c.compress(raw) + c.flush()
        if len(z) < len(raw):
            enc, payload = "z", z
    b64 = base64.urlsafe_b64encode(payload).rstrip(b"=").decode("ascii")
    return "%d.%s.%s.%s.%s" % (LINK_VERSION, dtype, "x".join(str(d) for d in arr.shape), enc, b64)


def decode_array(s):
    """A link value back to a NumPy array (float32 or float64). Raises ValueError."""
    parts = s.split(".")
    if len(parts) != 5:
        raise ValueError("expected 5 parts version.dtype.shape.encoding.payload")
    ver, dtype, shape_s, enc, payload = parts
    if ver != str(LINK_VERSION):
        raise ValueError("unknown version %r" % ver)
    if dtype not in ("f4", "f8"):
        raise ValueError("unknown dtype %r" % dtype)
    dims = shape_s.split("x")
    if not 1 <= len(dims) <= MAX_NDIM or not all(d.isdigit() and d[0] != "0" and len(d) <= 7 for d in dims):
        raise ValueError("bad shape %r" % shape_s)
    shape = tuple(int(d) for d in dims)
    n = int(np.prod(shape, dtype=np.int64))
    if n > MAX_ELEMENTS:
        raise ValueError("shape %s is over the limit of %d elements" % (shape, MAX_ELEMENTS))
    if not all(c.isalnum() and c.isascii() or c in "-_" for c in payload) or len(payload) % 4 == 1:
        raise ValueError("the payload is not base64url")
    data = base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4))
    need = n * (4 if dtype == "f4" else 8)
    if enc == "z":
        d = zlib.decompressobj(-15)
        data = d.decompress(data, need + 1)
    elif enc != "b":
        raise ValueError("unknown encoding %r" % enc)
    if len(data) != need:
        raise ValueError("the payload holds %d bytes; shape %s needs %d" % (len(data), shape, need))
    return np.frombuffer(data, dtype="<" + dtype).reshape(shape).copy()


# --------------------------------------------------------------------------
# checking what the student passes
# --------------------------------------------------------------------------

def _dims3(arr, name, what):
    if arr.ndim == 2:
        return (1,) + arr.shape
    if arr.ndim == 3:
        return arr.shape
    raise ValueError("%s has shape %s; it must be 2-D %s or 3-D (heads, %s" % (name, arr.shape, what, what[1:]))


def _check_weights(W):
    W = _as_numeric(W, "W")
    if W.ndim not in (2, 3):
        raise ValueError("W has shape %s; weights are 2-D (T_q, T_k) or 3-D (heads, T_q, T_k)" % (W.shape,))
    if np.isinf(W).any():
        at = tuple(int(i) for i in np.argwhere(np.isinf(W))[0])
        raise ValueError("W%s is %s; weights are finite (NaN is allowed: the page shows NaN cells)"
                         % (list(at), W[at]))
    if W.shape[-2] != W.shape[-1]:
        # The page's reason, word for word: it draws one query row per key.
        raise ValueError("W is %d x %d: the page draws a W you give as square weights (one query per key); "
                         "give Q, K, V for cross-attention" % W.shape[-2:])
    nan = np.isnan(W)
    if nan.any():
        at = tuple(int(i) for i in np.argwhere(nan)[0])
        rows = int(nan.any(axis=-1).sum())
        warnings.warn("W holds NaN in %d row%s, first at W%s (rows and positions count from 0): the page draws "
                      "those cells crossed, as given; nothing is masked or filled for a W you pass, so the NaN "
                      "came from the code that computed W" % (rows, "" if rows == 1 else "s", list(at)),
                      stacklevel=3)
    return W


# What a NaN in each input reaches (the core confines it to these rows; see docs/numerics.md).
_REACHES = {"Q": "that query's row of weights", "K": "every row that may attend to that key",
            "V": "the output rows that attend to that value (the weights stay finite)",
            "X": "every row of weights (through K)", "W_q": "every row of weights",
            "W_k": "every row of weights", "W_v": "the output rows (the weights stay finite)"}


def _warn_non_finite(name, a):
    bad = ~np.isfinite(a)
    n = int(bad.sum())
    if n:
        at = [int(i) for i in np.argwhere(bad)[0]]
        warnings.warn("%s holds %d NaN or infinite value%s, first at %s%s (counting from 0): it makes %s NaN"
                      % (name, n, "" if n == 1 else "s", name, at, _REACHES[name]), stacklevel=4)


def _allowed(t, mask, options, tq=None):
    """(T_q, T_k) bool, T_k = t (T_q = tq, default t): what the page lets each query attend to: the
    student's mask ANDed with the page's causal (on unless causal=False), window and padding options
    (docs/js-api.md). With T_q != T_k (cross-attention) the page applies no causal mask or window."""
    tq = t if tq is None else tq
    i, j = np.indices((tq, t))
    ok = np.ones((tq, t), bool)
    if tq == t and options.get("causal", True) is not False:
        ok &= j <= i
    w = options.get("window") or 0
    if tq == t and 0 < w < t:
        ok &= j > i - w
    for p in options.get("padding") or ():
        if 0 <= int(p) < t:
            ok[:, int(p)] = False
    if mask is not None:
        m = mask.astype(bool)
        ok &= m[None, :] if m.ndim == 1 else m
    return ok


def _rows_text(rows):
    rows = [int(r) for r in rows]
    return ", ".join(str(r) for r in rows[:8]) + (", …" if len(rows) > 8 else "")


def _warn_masking(mask, t, options, tq=None):
    """Warn, with the fix, when the mask looks inverted or leaves a row nothing to attend to. t = T_k;
    tq = T_q (default t; with T_q != T_k the page draws cross-attention: no causal mask or window)."""
    tq = t if tq is None else tq
    cross = tq != t
    if mask is not None and mask.ndim == 2 and t > 1 and not cross:
        m = mask.astype(bool)
        i, j = np.indices(m.shape)
        only_future = m.any() and not (m & (j <= i)).any()
        if only_future or not np.diagonal(m).any():
            what = ("allows only later keys (True only where j > i)" if only_future
                    else "forbids every query's own position (the diagonal is all False)")
            warnings.warn("the mask looks inverted: it %s, like lesson 2's np.triu(np.ones((T, T)), k=1), where "
                          "True = forbidden. Here True = may attend (lesson 1's convention): pass ~mask, or "
                          "np.tril(np.ones((T, T), bool)) for a causal mask" % what, stacklevel=3)
    if mask is None and not options.get("padding"):
        return  # causal and window alone always leave each query its own position
    ok = _allowed(t, mask, options, tq)
    empty = np.flatnonzero(~ok.any(axis=1))
    if empty.size:
        fill = options.get("fill") or "neg_inf"
        one = empty.size == 1
        its, is_ = ("its", "is") if one else ("their", "are")
        effect = {"neg_inf": "with fill='neg_inf' (the default) %s weights %s NaN, exp(-inf - (-inf))" % (its, is_),
                  "finite": "with fill='finite' %s weights spread evenly over every key, forbidden ones included" % its,
                  "zero": "with fill='zero' %s weights %s all zeros" % (its, is_)}[fill]
        parts = ["your mask"] if mask is not None else []
        if not cross and options.get("causal", True) is not False:
            parts.append("causal=True (the page's default; causal=False turns it off)")
        if not cross and 0 < (options.get("window") or 0) < t:
            parts.append("window=%d" % options["window"])
        if options.get("padding"):
            parts.append("padding=%s" % (list(options["padding"]),))
        warnings.warn("%d of %d rows (row%s %s, counting from 0) may attend to no key under %s: %s. "
                      "Allow at least one key in each row%s"
                      % (empty.size, tq, "" if one else "s", _rows_text(empty), " AND ".join(parts), effect,
                         ", or pass fill='finite' or fill='zero'" if fill == "neg_inf" else ""), stacklevel=3)


def _check_qkv(Q, K, V, mask):
    Q, K, V = _as_numeric(Q, "Q"), _as_numeric(K, "K"), _as_numeric(V, "V")
    hq, tq, dk = _dims3(Q, "Q", "(T_q, d_k)")
    hk, tk, dkk = _dims3(K, "K", "(T_k, d_k)")
    hv, tv, dv = _dims3(V, "V", "(T_k, d_v)")
    if K.ndim != Q.ndim:
        raise ValueError("K is %d-D but Q is %d-D (both 2-D, or both 3-D with heads first)" % (K.ndim, Q.ndim))
    if V.ndim != Q.ndim:
        raise ValueError("V is %d-D but Q is %d-D (both 2-D, or both 3-D with heads first)" % (V.ndim, Q.ndim))
    if dkk != dk:
        raise ValueError("K has %d columns but Q has %d (d_k must match: scores are Q K^T)" % (dkk, dk))
    if tv != tk:
        raise ValueError("V has %d rows but K has %d (T_k must match: one value per key)" % (tv, tk))
    if hv != hk:
        raise ValueError("V has %d heads but K has %d (K and V come in pairs)" % (hv, hk))
    if hq % hk:
        raise ValueError("Q has %d heads, which %d K/V heads do not divide" % (hq, hk))
    for n, a in (("Q", Q), ("K", K), ("V", V)):
        _warn_non_finite(n, a)
    if mask is not None:
        m = np.asarray(mask)
        if m.ndim == 1:
            if m.shape[0] != tk:
                raise ValueError("mask has %d entries but K has %d rows (a 1-D mask marks the keys)" % (m.shape[0], tk))
        elif m.ndim == 2:
            if m.shape[0] != tq:
                raise ValueError("mask has %d rows but Q has %d (T_q must match)" % (m.shape[0], tq))
            if m.shape[1] != tk:
                raise ValueError("mask has %d columns but K has %d rows (T_k must match)" % (m.shape[1], tk))
        else:
            raise ValueError("mask has shape %s; it must be (T_q, T_k) or (T_k,)" % (m.shape,))
        if m.dtype != np.bool_ and not np.isin(m, (0, 1)).all():
            raise ValueError("mask must hold True/False or 0/1 (True = may attend)")
        mask = m.astype(np.float32)
    return Q, K, V, mask, tk


def _check_projections(X, W_q, W_k, W_v, heads):
    X, W_q, W_k, W_v = (_as_numeric(a, n) for a, n in ((X, "X"), (W_q, "W_q"), (W_k, "W_k"), (W_v, "W_v")))
    for n, a, what in (("X", X, "(T, d_model)"), ("W_q", W_q, "(d_model, d_k)"), ("W_k", W_k, "(d_model, d_k)"),
                       ("W_v", W_v, "(d_model, d_v)")):
        if a.ndim != 2:
            raise ValueError("%s has shape %s; it must be 2-D %s" % (n, a.shape, what))
    d_model = X.shape[1]
    for n, a in (("W_q", W_q), ("W_k", W_k), ("W_v", W_v)):
        if a.shape[0] != d_model:
            raise ValueError("%s has %d rows but X has %d columns (d_model must match)" % (n, a.shape[0], d_model))
    if W_k.shape[1] != W_q.shape[1]:
        raise ValueError("W_k has %d columns but W_q has %d (d_k must match)" % (W_k.shape[1], W_q.shape[1]))
    h = heads or 1
    if W_q.shape[1] % h or W_v.shape[1] % h:
        raise ValueError("W_q's %d and W_v's %d columns must split evenly into %d heads" % (W_q.shape[1], W_v.shape[1], h))
    for n, a in (("X", X), ("W_q", W_q), ("W_k", W_k), ("W_v", W_v)):
        _warn_non_finite(n, a)
    return X, W_q, W_k, W_v, X.shape[0]


def _check_tokens(tokens, t):
    if tokens is None:
        return None
    if isinstance(tokens, str):
        tokens = tokens.split()
    out = []
    for i, tok in enumerate(tokens):
        tok = str(tok)
        if tok == "" or any(c.isspace() for c in tok):
            raise ValueError("token %d (%r) is empty or holds a space; the page splits tokens on spaces" % (i, tok))
        if len(tok) > MAX_TOKEN_LENGTH:
            raise ValueError("token %d (%r) is longer than %d characters" % (i, tok, MAX_TOKEN_LENGTH))
        out.append(tok)
    if len(out) > MAX_TOKENS:
        raise ValueError("%d tokens is more than the page's limit of %d" % (len(out), MAX_TOKENS))
    if len(out) != t:
        raise ValueError("%d tokens for %d keys: give one token per key (position)" % (len(out), t))
    return out


def _encode_component(s):
    # JavaScript's encodeURIComponent: what the page's codec reads back.
    return urllib.parse.quote(s, safe="-_.!~*'()")


# --------------------------------------------------------------------------
# the local server
# --------------------------------------------------------------------------

class Server:
    """A playground served from a folder on 127.0.0.1 in a background thread (see serve())."""

    def __init__(self, httpd, thread, path):
        self._httpd = httpd
        self._thread = thread
        self.path = path
        host, port = httpd.server_address[:2]
        self.port = port
        self.url = "http://%s:%d/" % (host, port)

    def stop(self):
        global _default_url
        self._httpd.shutdown()
        self._httpd.server_close()
        if _default_url == self.url:
            _default_url = None

    def __repr__(self):
        return "<attention_playground.Server %s serving %s>" % (self.url, self.path)


class _Handler(http.server.SimpleHTTPRequestHandler):
    extensions_map = dict(http.server.SimpleHTTPRequestHandler.extensions_map)
    extensions_map.update({".wasm": "application/wasm", ".js": "text/javascript", ".mjs": "text/javascript",
                           ".css": "text/css", ".json": "application/json", ".py": "text/x-python",
                           ".svg": "image/svg+xml"})

    def end_headers(self):
        self.send_header("Cache-Control", "no-cache")
        super().end_headers()

    def log_message(self, format, *args):  # noqa: A002 - the base class's name
        pass


_default_url = None


def serve(path=None, port=0, host="127.0.0.1"):
    """Serve the playground's built files (the folder holding index.html, e.g. dist/) on
    http://127.0.0.1:<port>/ in a background thread (port 0: any free port). Later show() calls
    without url= use it. Returns a Server (its .url, .stop())."""
    global _default_url
    if path is None:
        path = os.path.dirname(os.path.abspath(__file__))
    path = os.path.abspath(os.fspath(path))
    if not os.path.isfile(os.path.join(path, "index.html")):
        raise FileNotFoundError("%s has no index.html: pass the folder of the built playground (dist/)" % path)
    handler = functools.partial(_Handler, directory=path)
    httpd = http.server.ThreadingHTTPServer((host, port), handler)
    httpd.daemon_threads = True
    thread = threading.Thread(target=httpd.serve_forever, name="attention-playground", daemon=True)
    thread.start()
    server = Server(httpd, thread, path)
    _default_url = server.url
    return server


def _page_url(url):
    if url is not None:
        return url
    if _default_url is not None:
        return _default_url
    env = os.environ.get("ATTENTION_PLAYGROUND_URL")
    if env:
        return env
    here = os.path.dirname(os.path.abspath(__file__))
    if os.path.isfile(os.path.join(here, "index.html")):
        return serve(here).url
    raise RuntimeError("no playground to show: call ap.serve('path/to/dist') first, pass url='https://…/', "
                       "or set ATTENTION_PLAYGROUND_URL")


# --------------------------------------------------------------------------
# show
# --------------------------------------------------------------------------

_ids = itertools.count(1)


class Playground:
    """What show() returns: Jupyter draws it as an iframe (_repr_html_); `url` is the page's link
    (with the arrays in it when `in_link` is True, else they are sent by postMessage)."""

    def __init__(self, url, frame_id, height, message):
        self.url = url
        self.frame_id = frame_id
        self.height = height
        self.in_link = message is None
        self._message = message

    def _repr_html_(self):
        src = html.escape(self.url, quote=True)
        fid = html.escape(self.frame_id, quote=True)
        frame = ('<iframe id="%s" src="%s" title="Attention Playground" width="100%%" height="%d" '
                 'style="border:0;max-width:100%%" loading="eager"></iframe>' % (fid, src, self.height))
        if self._message is None:
            return frame
        # Too large for the link: a script answers the page's ready message with the arrays.
        origin = urllib.parse.urlsplit(self.url)
        target = "%s://%s" % (origin.scheme, origin.netloc) if origin.scheme in ("http", "https") else "*"
        payload = _script_json(self._message)
        script = (
            "<script>(function(){var f=document.getElementById(%s);var m=%s;"
            "window.addEventListener('message',function(e){"
            "if(!f||e.source!==f.contentWindow)return;var d=e.data;"
            "if(d&&d.type===%s&&d.version===%d&&d.id===m.id){f.contentWindow.postMessage(m,%s);}"
            "});})();</script>"
            % (_script_json(self.frame_id), payload, _script_json(READY_MESSAGE), MESSAGE_VERSION, _script_json(target)))
        return frame + script

    def __repr__(self):
        return "<attention_playground.Playground %s>" % (self.url if self.in_link else self.url + " (arrays by postMessage)")


def _script_json(v):
    s = json.dumps(v, separators=(",", ":"), allow_nan=False)
    return (s.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
            .replace("\u2028", "\\u2028").replace("\u2029", "\\u2029"))


def show(W=None, tokens=None, *, Q=None, K=None, V=None, mask=None, X=None, W_q=None, W_k=None, W_v=None,
         url=None, height=None, **options):
    """Show weights W (2-D, or 3-D for heads), or have the page's core compute attention from
    Q, K, V (+ mask, 1/True = may attend), or from lesson 2's X, W_q, W_k, W_v.

    tokens: one label per key (a list, or a string split on spaces). options: causal (bool),
    window (int), padding (list of positions), fill ('neg_inf' | 'finite' | 'zero'),
    scale ('sqrt' | 'none' | number), heads (X/W_q…'s columns split into that many heads; one head
    when not given), view, head (0-based). Rows, positions and array indices count from 0.

    Warns (UserWarning, with the fix) when a mask looks inverted (True = forbidden, as lesson 2's
    np.triu(…, k=1)) or leaves a row nothing to attend to, and where NaN is in the inputs.
    """
    unknown = sorted(set(options) - set(_OPTIONS))
    if unknown:
        raise TypeError("unknown option%s %s (known: %s)" % ("s" if len(unknown) > 1 else "", ", ".join(unknown),
                                                             ", ".join(sorted(_OPTIONS))))
    groups = [W is not None, any(a is not None for a in (Q, K, V)), any(a is not None for a in (X, W_q, W_k, W_v))]
    if sum(groups) != 1:
        raise TypeError("give W, or Q, K and V, or X, W_q, W_k and W_v (exactly one of the three)")
    arrays = {}
    if W is not None:
        W = _check_weights(W)
        arrays["W"] = W
        t_keys = W.shape[-1]
    elif groups[1]:
        if Q is None or K is None or V is None:
            raise TypeError("Q, K and V go together: give all three")
        Q, K, V, m, t_keys = _check_qkv(Q, K, V, mask)
        arrays.update(Q=Q, K=K, V=V)
        if m is not None:
            arrays["mask"] = m
    else:
        if any(a is None for a in (X, W_q, W_k, W_v)):
            raise TypeError("X, W_q, W_k and W_v go together: give all four")
        X, W_q, W_k, W_v, t_keys = _check_projections(X, W_q, W_k, W_v, options.get("heads"))
        arrays.update(X=X, W_q=W_q, W_k=W_k, W_v=W_v)
    if mask is not None and not groups[1]:
        raise TypeError("mask goes with Q, K and V")
    toks = _check_tokens(tokens, t_keys)

    parts = ["v=1"]
    if toks is not None:
        parts.append("tokens=" + "+".join(_encode_component(t) for t in toks))
    if groups[2] and options.get("heads") is None:
        options["heads"] = 1  # lesson 2's X, W_q… are one head unless heads= says otherwise
    for name in _OPTIONS:
        if name in options and options[name] is not None:
            key, write = _OPTIONS[name]
            parts.append("%s=%s" % (key, write(name, options[name])))
    if not groups[0]:
        q = arrays.get("Q")
        _warn_masking(arrays.get("mask"), t_keys, options, None if q is None else q.shape[-2])
    encoded = {KEYS[n]: encode_array(a, name=n) for n, a in arrays.items()}
    size = sum(len(v) + len(k) + 2 for k, v in encoded.items())

    frame_id = "ap-%d-%s" % (next(_ids), secrets.token_hex(4))
    base = _page_url(url)
    split = urllib.parse.urlsplit(base)
    query = urllib.parse.parse_qsl(split.query, keep_blank_values=True)
    query = [(k, v) for k, v in query if k not in ("embed", "id", "arrays")]
    query += [("embed", "1"), ("id", frame_id)]
    message = None
    if size <= ARRAY_LINK_MAX_CHARS:
        parts += ["%s=%s" % (k, v) for k, v in encoded.items()]
    else:
        if size > ARRAY_MESSAGE_MAX_CHARS:
            raise ValueError("the arrays take %d characters encoded; the page reads at most %d at once"
                             % (size, ARRAY_MESSAGE_MAX_CHARS))
        query.append(("arrays", "post"))
        message = {"type": ARRAYS_MESSAGE, "version": MESSAGE_VERSION, "id": frame_id, "arrays": encoded}
    page = urllib.parse.urlunsplit((split.scheme, split.netloc, split.path or "/", urllib.parse.urlencode(query),
                                    "&".join(parts)))
    return Playground(page, frame_id, int(height) if height is not None else DEFAULT_HEIGHT, message)


# ---- the text model (web/public/models/<name>/: model.json and .npz checkpoints; docs/text-model.md)

#: Where the playground ships its text model, relative to the page.
TEXT_MODEL_PATH = "models/sotu-bpe"
#: Refuse an array that declares more elements than this (a hostile or corrupt file).
TEXT_MODEL_MAX_ELEMENTS = 1 << 24


class TextModel:
    """One checkpoint of the playground's text model, as NumPy arrays (see load_text_model).

    Attributes: ``config`` (model.json's config: vocab, seqLen, layers, heads, kvHeads, dModel,
    positional, layerNorm, ...), ``symbols`` (id -> the token's text: a character, or a
    SentencePiece piece with its ▁ as a space), ``checkpoint`` (model.json's entry of this step: step, tokens, heldOutLoss,
    inContext, induction, previous, ...), ``checkpoints`` (all entries), ``weights`` (name ->
    float32 array, shaped as in the .npz: embed (V, D), pos (T, D), layers.{l}.wq (D, H·d_h), ...).
    """

    def __init__(self, meta, checkpoint, weights, source):
        self.meta = meta
        self.config = meta["config"]
        tok = meta["tokenizer"]
        self.tokenizer = tok["kind"]
        if tok["kind"] == "char":
            self.symbols = list(tok["symbols"])
            self._ids = {s: i for i, s in enumerate(self.symbols)}
            self._unknown_id = self._ids[tok["unknown"]]
        else:
            self.symbols = [p.replace("\u2581", " ") for p in tok["pieces"]]
            self._pieces = {p: i for i, p in enumerate(tok["pieces"]) if tok["types"][i] in (1, 4)}
            self._scores = tok["scores"]
            self._user = sorted((p for i, p in enumerate(tok["pieces"]) if tok["types"][i] == 4), key=len, reverse=True)
            self._unknown_id = tok["unknownId"]
        self.checkpoints = meta["checkpoints"]
        self.checkpoint = checkpoint
        self.step = checkpoint["step"]
        self.weights = weights
        self.source = source

    def encode(self, text):
        """Token ids of ``text``, as the page and the trainer make them. A char model: one per
        character (code point), the unknown id for a character outside the table. A SentencePiece
        BPE model: SentencePiece's encoding for its identity normalization (spaces as ▁, a
        user-defined piece whole, then the best-scoring adjacent pair merged until none is a piece;
        a run of unknown characters is one unknown id), equal to python3-sentencepiece's."""
        if self.tokenizer == "char":
            return np.array([self._ids.get(c, self._unknown_id) for c in text], dtype=np.int64)
        import heapq
        norm = text.replace(" ", "\u2581")
        sym, frozen, i = [], [], 0
        while i < len(norm):
            u = next((p for p in self._user if norm.startswith(p, i)), None)
            sym.append(u or norm[i])
            frozen.append(u is not None)
            i += len(sym[-1])
        n = len(sym)
        prev, nxt = list(range(-1, n - 1)), [j + 1 if j + 1 < n else -1 for j in range(n)]
        heap = []

        def consider(a, b):
            if a >= 0 and b >= 0 and not frozen[a] and not frozen[b]:
                pid = self._pieces.get(sym[a] + sym[b])
                if pid is not None:  # highest score first, then the leftmost pair
                    heapq.heappush(heap, (-self._scores[pid], a, b, len(sym[a]) + len(sym[b])))
        for j in range(1, n):
            consider(j - 1, j)
        while heap:
            _, a, b, size = heapq.heappop(heap)
            if not sym[a] or not sym[b] or len(sym[a]) + len(sym[b]) != size:
                continue  # stale: a side merged away or grew
            sym[a], sym[b] = sym[a] + sym[b], ""
            nxt[a] = nxt[b]
            if nxt[b] >= 0:
                prev[nxt[b]] = a
            consider(prev[a], a)
            consider(a, nxt[a])
        ids, j = [], 0 if n else -1
        while j >= 0:
            pid = self._pieces.get(sym[j])
            if pid is None and ids and ids[-1] == -1:
                pass  # a run of unknown symbols is one token
            else:
                ids.append(-1 if pid is None else pid)
            j = nxt[j]
        return np.array([self._unknown_id if k == -1 else k for k in ids], dtype=np.int64)

    def decode(self, ids):
        """The text of token ids (an unknown id as its symbol)."""
        return "".join(self.symbols[int(i)] for i in ids)

    def forward(self, ids):
        """(logits (t, V), [attention weights (H, t, t) per layer]) of one sequence of ids, float64,
        from docs/train-api.md's formulas: x = E[ids] (+ P), per layer x += concat_h softmax(q kᵀ/√d_h,
        causal) v · W_O, with q, k read from x + P for 'shortformer'; optional LayerNorm; logits = x U."""
        c, w = self.config, {k: v.astype(np.float64) for k, v in self.weights.items()}
        ids = np.asarray(ids, dtype=np.int64)
        t = len(ids)
        if not 1 <= t <= c["seqLen"]:
            raise ValueError("ids: %d tokens; this model reads 1 to %d" % (t, c["seqLen"]))
        if ids.min() < 0 or ids.max() >= c["vocab"]:
            raise ValueError("ids: every id must be in [0, %d)" % c["vocab"])
        H, D = c["heads"], c["dModel"]
        Hkv, dh = c.get("kvHeads") or H, D // H
        x = w["embed"][ids]
        if c["positional"] == "learned":
            x = x + w["pos"][:t]
        causal = np.tril(np.ones((t, t), dtype=bool))
        maps = []
        for l in range(c["layers"]):
            qk = x + w["pos"][:t] if c["positional"] == "shortformer" else x
            q = (qk @ w["layers.%d.wq" % l]).reshape(t, H, dh).transpose(1, 0, 2)
            k = (qk @ w["layers.%d.wk" % l]).reshape(t, Hkv, dh).transpose(1, 0, 2)
            v = (x @ w["layers.%d.wv" % l]).reshape(t, Hkv, dh).transpose(1, 0, 2)
            g = np.arange(H) // (H // Hkv)
            s = np.where(causal, q @ k[g].transpose(0, 2, 1) / math.sqrt(dh), -np.inf)
            a = np.exp(s - s.max(-1, keepdims=True))
            a /= a.sum(-1, keepdims=True)
            maps.append(a)
            x = x + (a @ v[g]).transpose(1, 0, 2).reshape(t, H * dh) @ w["layers.%d.wo" % l]
        if c.get("layerNorm"):
            mu = x.mean(-1, keepdims=True)
            x = (x - mu) / np.sqrt(((x - mu) ** 2).mean(-1, keepdims=True) + 1e-5) * w["ln_gain"] + w["ln_bias"]
        return x @ w["unembed"], maps

    def __repr__(self):
        c = self.config
        return "<attention_playground.TextModel step %d of %s: %d layers x %d heads, d_model %d, T %d, V %d>" % (
            self.step, self.source, c["layers"], c["heads"], c["dModel"], c["seqLen"], c["vocab"])


def _read_source(base, name):
    """Bytes of ``name`` under a folder or an http(s) URL."""
    if base.startswith(("http://", "https://")):
        import urllib.request
        with urllib.request.urlopen(urllib.parse.urljoin(base.rstrip("/") + "/", name)) as r:
            return r.read()
    with open(os.path.join(base, name), "rb") as f:
        return f.read()


def _text_model_shapes(c):
    """name -> shape of every array a checkpoint of config ``c`` holds."""
    V, T, D, H = c["vocab"], c["seqLen"], c["dModel"], c["heads"]
    Hkv = c.get("kvHeads") or H
    dh = D // H
    s = {"embed": (V, D), "unembed": (D, V)}
    if c["positional"] in ("learned", "shortformer"):
        s["pos"] = (T, D)
    for l in range(c["layers"]):
        s.update({"layers.%d.wq" % l: (D, H * dh), "layers.%d.wk" % l: (D, Hkv * dh),
                  "layers.%d.wv" % l: (D, Hkv * dh), "layers.%d.wo" % l: (H * dh, D)})
    if c.get("layerNorm"):
        s.update({"ln_gain": (D,), "ln_bias": (D,)})
    return s


def _check_tokenizer(tok, vocab):
    """model.json's tokenizer: {kind: 'char', symbols, unknown} or SentencePiece BPE with identity
    normalization and no dummy prefix ({kind: 'sentencepiece', pieces, scores, types, unknownId})."""
    if isinstance(tok, dict) and tok.get("kind") == "sentencepiece":
        lists = [tok.get(k) for k in ("pieces", "scores", "types")]
        if tok.get("model") != "bpe" or tok.get("normalization") != "identity" or tok.get("addDummyPrefix") is not False:
            raise ValueError("model.json: tokenizer: this helper reads SentencePiece BPE with identity normalization "
                             "and no dummy prefix")
        if not all(isinstance(v, list) and len(v) == vocab for v in lists):
            raise ValueError("model.json: tokenizer.pieces, scores and types must be lists of %d entries" % vocab)
        pieces, scores, types = lists
        if not all(isinstance(p, str) and p for p in pieces) or len(set(pieces)) != vocab:
            raise ValueError("model.json: tokenizer.pieces must be %d different non-empty texts" % vocab)
        if not all(isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x) for x in scores):
            raise ValueError("model.json: tokenizer.scores must be finite numbers")
        if not all(t in (1, 2, 4) for t in types) or types.count(2) != 1 \
                or not isinstance(tok.get("unknownId"), int) or not 0 <= tok["unknownId"] < vocab \
                or types[tok["unknownId"]] != 2:
            raise ValueError("model.json: tokenizer.types must be 1, 2 or 4 with one unknown piece at unknownId")
        return
    if not isinstance(tok, dict) or tok.get("kind") != "char" or not isinstance(tok.get("symbols"), list) \
            or len(tok["symbols"]) != vocab or tok.get("unknown") not in tok["symbols"]:
        raise ValueError("model.json: tokenizer must be {kind: 'char', symbols: [%d characters], unknown} or "
                         "{kind: 'sentencepiece', ...}" % vocab)


def load_text_model(path=None, step=None):
    """The playground's text model at one checkpoint, NumPy only (no page needed).

    path: the folder (or http(s) URL) holding model.json and the .npz files: by default the
    ``models/sotu-bpe`` folder of the playground serve() serves, else of the page's url.
    step: a checkpoint's step (model.json lists them); None = the last (the shipped model).
    Raises ValueError naming the file and the field for a file that is not a model of this kind
    (the arrays are read with allow_pickle=False: a hostile file cannot run code).

        m = ap.load_text_model("dist/models/sotu-bpe")
        ids = m.encode("the United States of America")
        W_q = m.weights["layers.0.wq"]           # (D, H·d_h): lesson 2's W_q for every head
        logits, maps = m.forward(ids)            # maps[l]: (H, t, t) attention weights
    """
    import io
    if path is None:
        if _default_url is None:
            raise ValueError("path: give the folder holding model.json (or call serve() first)")
        path = urllib.parse.urljoin(_default_url, TEXT_MODEL_PATH)
    path = os.fspath(path)
    try:
        meta = json.loads(_read_source(path, "model.json").decode("utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as e:
        raise ValueError("model.json: cannot be read as JSON (%s)" % e) from None
    for field in ("config", "tokenizer", "checkpoints"):
        if not isinstance(meta, dict) or field not in meta:
            raise ValueError("model.json: no '%s'" % field)
    c = meta["config"]
    for field in ("vocab", "seqLen", "layers", "heads", "dModel"):
        v = c.get(field) if isinstance(c, dict) else None
        if not isinstance(v, int) or isinstance(v, bool) or not 1 <= v <= 1 << 16:
            raise ValueError("model.json: config.%s must be a whole number in [1, 65536] (got %r)" % (field, v))
    if c.get("positional") not in ("learned", "shortformer", "none"):
        raise ValueError("model.json: config.positional %r: this helper reads 'learned', 'shortformer' and 'none'"
                         % (c.get("positional"),))
    if c["dModel"] % c["heads"]:
        raise ValueError("model.json: config.dModel %d is not a multiple of config.heads %d" % (c["dModel"], c["heads"]))
    shapes = _text_model_shapes(c)
    if sum(math.prod(s) for s in shapes.values()) > TEXT_MODEL_MAX_ELEMENTS:
        raise ValueError("model.json: config declares more than %d weights" % TEXT_MODEL_MAX_ELEMENTS)
    _check_tokenizer(meta["tokenizer"], c["vocab"])
    cks = meta["checkpoints"]
    if not isinstance(cks, list) or not cks or not all(isinstance(k, dict) and "step" in k and "file" in k for k in cks):
        raise ValueError("model.json: checkpoints must be a non-empty list of {step, file, ...}")
    if step is None:
        ck = cks[-1]
    else:
        ck = next((k for k in cks if k["step"] == step), None)
        if ck is None:
            raise ValueError("step: no checkpoint at step %r (steps: %s)" % (step, ", ".join(str(k["step"]) for k in cks)))
    name = ck["file"]
    if not isinstance(name, str) or "/" in name or "\\" in name or not name.endswith(".npz"):
        raise ValueError("model.json: checkpoint file %r is not a .npz name in the model's folder" % (name,))
    try:
        with np.load(io.BytesIO(_read_source(path, name)), allow_pickle=False) as z:
            got = {k: z[k] for k in z.files}
    except OSError as e:
        raise ValueError("%s: cannot be read (%s)" % (name, e)) from None
    except Exception as e:  # zipfile.BadZipFile, ValueError of a bad .npy header, ...
        raise ValueError("%s: not a readable .npz (%s)" % (name, e)) from None
    weights = {}
    for k, shape in shapes.items():
        if k not in got:
            raise ValueError("%s: no array '%s'" % (name, k))
        a = got[k]
        if a.dtype not in (np.float16, np.float32) or a.shape != shape:
            raise ValueError("%s: '%s' is %s %s; config needs float16 or float32 %s" % (name, k, a.dtype, a.shape, shape))
        a = a.astype(np.float32)
        if not np.isfinite(a).all():
            raise ValueError("%s: '%s' holds NaN or Inf" % (name, k))
        weights[k] = a
    extra = sorted(set(got) - set(shapes))
    if extra:
        raise ValueError("%s: arrays this config does not have: %s" % (name, ", ".join(extra)))
    return TextModel(meta, ck, weights, path)
