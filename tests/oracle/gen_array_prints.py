#!/usr/bin/python3
"""What NumPy itself prints and saves, for the page's parser of the student's own arrays.

    /usr/bin/python3 tests/oracle/gen_array_prints.py           # rewrite tests/web/fixtures/arrays/
    /usr/bin/python3 tests/oracle/gen_array_prints.py --check   # exit 1 if a committed file differs

Writes, into tests/web/fixtures/arrays/:
- prints.json: { cases: [ { name, text, expect: "ok", shape, f32, values, atol, rtol } |
                          { name, text, expect: "error", includes } ] }
  `text` is exactly what print / repr / str / json.dumps wrote; `values` the array that was printed
  (flat, row-major; non-finite numbers as the strings "nan", "inf", "-inf"; other numbers are exact
  float64 reprs); a parsed value v must satisfy |v - value| <= atol + rtol * |value|, from the
  print options used (fixed notation with p decimals: atol = 0.5e-p; scientific: rtol = 0.5e-p).
- *.npy and *.npz written by np.save / np.lib.format.write_array / np.savez /
  np.savez_compressed, and *.csv by np.savetxt; files.json lists them with the exact values
  (float64 reprs) each must read as, or the error it must give.
- links.json: array link strings written by the notebook helper (web/public/attention_playground.py)
  next to the float32 bits NumPy holds (hex of arr.astype('<f4').tobytes()), for the TS decoder.

--check regenerates in memory and compares each file byte for byte, or else numerically: arrays
within 1e-9 relative, printed numbers within one unit of their last digit (NumPy's float64 exp
differs in the last bit between its AVX-512 and AVX2 paths); .npz files entry by entry (np.savez
stamps the zip with the current time); files NumPy cannot load (the hostile ones) byte for byte.
"""

import argparse
import io
import json
import os
import sys
import zipfile

import math
import re

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from gen_fixtures import _same  # noqa: E402  (the other fixtures' numerical comparison)

ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
OUT = os.path.join(ROOT, "tests", "web", "fixtures", "arrays")
REL = "tests/web/fixtures/arrays"


def num(x):
    x = float(x)
    if np.isnan(x):
        return "nan"
    if np.isinf(x):
        return "inf" if x > 0 else "-inf"
    return x


def flat(a):
    return [num(x) for x in np.asarray(a, dtype=np.float64).ravel()]


def capture(fn):
    buf = io.StringIO()
    old = sys.stdout
    sys.stdout = buf
    try:
        fn()
    finally:
        sys.stdout = old
    return buf.getvalue()


# --------------------------------------------------------------------------
# the arrays: lesson 2's weights, computed here from the definitions
# --------------------------------------------------------------------------

def mm(a, b):
    """a @ b without BLAS: every entry the correctly rounded sum of its products (math.fsum), so
    the fixtures do not depend on the BLAS NumPy is linked to (the reference BLAS and OpenBLAS
    give different last bits, and the bench installs OpenBLAS)."""
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    out = np.empty((a.shape[0], b.shape[1]))
    for i in range(a.shape[0]):
        for j in range(b.shape[1]):
            out[i, j] = math.fsum(a[i, :] * b[:, j])
    return out


def softmax_last(s):
    with np.errstate(invalid="ignore", over="ignore"):
        z = s - s.max(axis=-1, keepdims=True)
        e = np.exp(z)
        return e / e.sum(axis=-1, keepdims=True)


def lesson2_weights():
    """Lesson 2's T = 6 causal example: default_rng(0), X (6, 8), three (8, 4) projections."""
    rng = np.random.default_rng(0)
    x = rng.normal(size=(6, 8))
    wq, wk, wv = (rng.normal(size=(8, 4)) for _ in range(3))
    q, k = mm(x, wq), mm(x, wk)
    s = mm(q, k.T) / np.sqrt(4)
    s = np.where(np.tri(6, 6, 0, dtype=bool), s, -np.inf)
    return softmax_last(s), (x, wq, wk, wv)


def two_heads():
    rng = np.random.default_rng(1)
    s = rng.normal(size=(2, 6, 6)) * 2
    s = np.where(np.tri(6, 6, 0, dtype=bool), s, -np.inf)
    return softmax_last(s)


def print_cases():
    w, (x, wq, wk, wv) = lesson2_weights()
    heads = two_heads()
    rng = np.random.default_rng(2)
    wide = rng.random((3, 12))
    sci = np.array([[1.5e-7, 0.25, 3.0], [1234.5, -2.0e-5, 0.5]])
    special = np.array([[0.5, np.nan, 0.5], [np.inf, -np.inf, 0.0]])
    cases = []

    def ok(name, text, arr, p=None, sci_p=None, exact=False, f32=False):
        atol = 0.0 if exact or p is None else 0.5 * 10.0 ** -p * (1 + 1e-9)
        rtol = 0.0 if sci_p is None else 0.5 * 10.0 ** -sci_p * (1 + 1e-9)
        if f32:  # the parser stores float32: one more float32 rounding
            rtol += 2.0 ** -24
        arr = np.asarray(arr, dtype=np.float64)
        cases.append({"name": name, "text": text, "expect": "ok", "shape": list(arr.shape), "f32": f32,
                      "values": flat(arr), "atol": atol, "rtol": rtol})

    def bad(name, text, includes):
        cases.append({"name": name, "text": text, "expect": "error", "includes": includes})

    ok("lesson 2 W, print(W)", capture(lambda: print(w)), w, p=8)
    ok("lesson 2 W, print(np.round(W, 2))", capture(lambda: print(np.round(w, 2))), w, p=2)
    ok("lesson 2 W, repr(W)", repr(w), w, p=8)
    w32 = w.astype(np.float32)
    ok("lesson 2 W, repr(W.astype(float32))", repr(w32), w32, p=8, f32=True)
    ok("lesson 2 W, W.tolist() (exact reprs)", str(w.tolist()), w, exact=True)
    ok("lesson 2 W, json.dumps(W.tolist())", json.dumps(w.tolist()), w, exact=True)
    ok("named: print('W =', W)", "W = " + capture(lambda: print(w)), w, p=8)
    ok("two heads, print(np.round(W, 3)) (3-D, blank lines between blocks)", capture(lambda: print(np.round(heads, 3))), heads, p=3)
    ok("two heads, repr (3-D)", repr(heads), heads, p=8)
    ok("wide rows wrapped at 75 characters, print", capture(lambda: print(wide)), wide, p=8)
    ok("wide rows wrapped, repr float32", repr(wide.astype(np.float32)), wide.astype(np.float32), p=8, f32=True)
    ok("scientific notation, print", capture(lambda: print(sci)), sci, sci_p=8)
    ok("scientific notation, repr", repr(sci), sci, sci_p=8)
    ok("nan and inf, print", capture(lambda: print(special)), special, p=8)
    ok("nan and inf, repr", repr(special), special, p=8)
    ok("1-D, print", capture(lambda: print(w[5])), w[5], p=8)
    ok("causal mask, print(np.tril(np.ones((4, 4), bool)))", capture(lambda: print(np.tril(np.ones((4, 4), bool)))),
       np.tril(np.ones((4, 4))), exact=True)
    ok("integers, print", capture(lambda: print(np.arange(6).reshape(2, 3) - 2)), np.arange(6).reshape(2, 3) - 2, exact=True)

    def with_opts():
        with np.printoptions(precision=3, suppress=True):
            print(sci)
    ok("printoptions(precision=3, suppress=True)", capture(with_opts), sci, p=3)
    ok("lesson 2 X (6, 8), print", capture(lambda: print(x)), x, p=8)
    ok("lesson 2 W_q (8, 4), repr", repr(wq), wq, p=8)
    qkv = {"Q": mm(x, wq).tolist(), "K": mm(x, wk).tolist(), "V": mm(x, wv).tolist()}
    text = json.dumps(qkv)
    cases.append({"name": "JSON object of Q, K, V", "text": text, "expect": "ok-many",
                  "arrays": [{"name": n, "shape": list(np.shape(v)), "values": flat(v)} for n, v in qkv.items()]})
    text = json.dumps({"W": special.tolist()})  # Python writes NaN / Infinity bare
    cases.append({"name": "json.dumps with NaN / Infinity", "text": text, "expect": "ok-many",
                  "arrays": [{"name": "W", "shape": [2, 3], "values": flat(special)}]})

    bad("summarised print (np.arange(2000.))", capture(lambda: print(np.arange(2000.0))), "threshold")
    bad("summarised 3-D print", capture(lambda: print(np.zeros((3, 40, 40)))), "threshold")
    bad("ragged rows", "[[0.1 0.2 0.3]\n [0.4 0.5]]", "row 2 has 2 values")
    bad("ragged blocks", "[[[1 2]\n  [3 4]]\n\n [[5 6]]]", "block 2 has 1 rows")
    bad("uneven nesting", "[[1, 2], 3]", "nesting")
    bad("a word among the numbers", "[[0.1 abc]]", "line 1, column 7")
    bad("unclosed", "[[0.1 0.2]\n [0.3 0.4]", "never closed")
    bad("empty list", "[]", "empty")
    return cases


# --------------------------------------------------------------------------
# files
# --------------------------------------------------------------------------

def npy_bytes(arr, version=None, fortran=False):
    buf = io.BytesIO()
    if version is None and not fortran:
        np.save(buf, arr)
    else:
        a = np.asfortranarray(arr) if fortran else arr
        np.lib.format.write_array(buf, a, version=version)
    return buf.getvalue()


def npz_bytes(compressed, **arrays):
    buf = io.BytesIO()
    (np.savez_compressed if compressed else np.savez)(buf, **arrays)
    return buf.getvalue()


def file_cases():
    w, (x, wq, wk, wv) = lesson2_weights()
    heads = two_heads()
    q, k, v = mm(x, wq), mm(x, wk), mm(x, wv)
    cube = np.arange(24, dtype=np.float64).reshape(2, 3, 4) / 8 - 1
    files = {}
    listing = []

    def ok(fname, data, arrays):
        files[fname] = data
        listing.append({"file": fname, "expect": "ok",
                        "arrays": [{"name": n, "shape": list(np.shape(a)), "values": flat(a)} for n, a in arrays]})

    def bad(fname, data, includes):
        files[fname] = data
        listing.append({"file": fname, "expect": "error", "includes": includes})

    w32 = w.astype("<f4")
    ok("w_f4.npy", npy_bytes(w32), [("w_f4", w32)])
    ok("w_f8.npy", npy_bytes(w), [("w_f8", w)])
    ok("w_f2.npy", npy_bytes(w.astype("<f2")), [("w_f2", w.astype("<f2"))])
    ok("heads_f4.npy", npy_bytes(heads.astype("<f4")), [("heads_f4", heads.astype("<f4"))])
    ok("cube_fortran_f8.npy", npy_bytes(cube, fortran=True), [("cube_fortran_f8", cube)])
    ok("xt_fortran_f4.npy", npy_bytes(x.T.astype("<f4"), fortran=True), [("xt_fortran_f4", x.T.astype("<f4"))])
    ok("cube_v2.npy", npy_bytes(cube.astype("<f4"), version=(2, 0)), [("cube_v2", cube.astype("<f4"))])
    ok("cube_v3.npy", npy_bytes(cube, version=(3, 0)), [("cube_v3", cube)])
    ok("big_endian_f4.npy", npy_bytes(w.astype(">f4")), [("big_endian_f4", w.astype(">f4"))])
    ints = np.arange(12, dtype=np.int64).reshape(3, 4) - 5
    ok("ints_i8.npy", npy_bytes(ints), [("ints_i8", ints)])
    ok("ints_i4.npy", npy_bytes(ints.astype("<i4")), [("ints_i4", ints)])
    ok("bytes_u1.npy", npy_bytes(np.arange(6, dtype=np.uint8).reshape(2, 3) * 40), [("bytes_u1", np.arange(6).reshape(2, 3) * 40)])
    mask = np.tril(np.ones((6, 6), bool))
    ok("mask_b1.npy", npy_bytes(mask), [("mask_b1", mask)])
    ok("vector_f4.npy", npy_bytes(w32[5]), [("vector_f4", w32[5])])
    ok("qkv.npz", npz_bytes(False, Q=q, K=k, V=v, mask=mask), [("Q", q), ("K", k), ("V", v), ("mask", mask)])
    ok("qkv_compressed.npz", npz_bytes(True, Q=q.astype("<f4"), K=k.astype("<f4"), V=v.astype("<f4")),
       [("Q", q.astype("<f4")), ("K", k.astype("<f4")), ("V", v.astype("<f4"))])
    ok("lesson2.npz", npz_bytes(True, X=x, W_q=wq, W_k=wk, W_v=wv), [("X", x), ("W_q", wq), ("W_k", wk), ("W_v", wv)])
    buf = io.StringIO()
    np.savetxt(buf, w, delimiter=",", header="k0,k1,k2,k3,k4,k5", comments="")
    ok("w_header.csv", buf.getvalue().encode(), [("w_header", w)])
    buf = io.StringIO()
    np.savetxt(buf, x, delimiter=",")
    ok("x.csv", buf.getvalue().encode(), [("x", x)])
    ok("qkv.json", json.dumps({"Q": q.tolist(), "K": k.tolist(), "V": v.tolist(), "mask": mask.tolist()}).encode(),
       [("Q", q), ("K", k), ("V", v), ("mask", mask)])

    bad("object.npy", npy_bytes(np.array([1, "a", None], dtype=object)), "object")
    bad("structured.npy", npy_bytes(np.zeros(3, dtype=[("a", "<f4"), ("b", "<i4")])), "structured")
    bad("complex.npy", npy_bytes(np.zeros(3, dtype=np.complex64)), "complex")
    bad("strings.npy", npy_bytes(np.array(["a", "b"])), "strings")
    bad("scalar.npy", npy_bytes(np.float32(1.5)), "scalar")
    full = npy_bytes(w32)
    bad("truncated.npy", full[:-5], "truncated")
    bad("truncated_header.npy", full[:40], "header")
    # A header claiming a huge shape over 16 bytes of data: NumPy's own writer, then the shape edited
    # (the header keeps its length: NumPy pads it with spaces).
    h = npy_bytes(np.zeros((2, 2), "<f4"))
    hl = int.from_bytes(h[8:10], "little")
    head = h[10:10 + hl].decode("latin1").replace("(2, 2)", "(100000, 100000)")
    head = head.rstrip("\n").rstrip(" ")
    head = head + " " * (hl - 1 - len(head)) + "\n"
    bad("huge_shape.npy", h[:10] + head.encode("latin1") + h[10 + hl:], "limit")
    return files, listing


# --------------------------------------------------------------------------
# link strings from the notebook helper
# --------------------------------------------------------------------------

def link_cases():
    sys.path.insert(0, os.path.join(ROOT, "web", "public"))
    try:
        import attention_playground as ap  # noqa: E402
    except ImportError:
        return None
    w, (x, wq, wk, wv) = lesson2_weights()
    rng = np.random.default_rng(3)
    cases = []
    arrays = [
        ("lesson 2 W (6, 6)", w),
        ("two heads (2, 6, 6)", two_heads()),
        ("lesson 2 X (6, 8)", x),
        ("vector (5,)", np.array([0.1, -2.5, 3e-20, 1e30, -0.0])),
        ("NaN and inf", np.array([[np.nan, np.inf], [-np.inf, 1.0]])),
        ("random (16, 16)", rng.normal(size=(16, 16))),
        ("zeros (24, 24) (compresses)", np.zeros((24, 24))),
    ]
    for name, a in arrays:
        bits = np.asarray(a, dtype=np.float64).astype("<f4").tobytes().hex()
        cases.append({"name": name, "shape": list(np.shape(a)), "f4hex": bits,
                      "link": ap.encode_array(a), "linkRaw": ap.encode_array(a, compress=False)})
    return {"cases": cases}


def one_per_line(key, items):
    """{ key: [ ... ] } with one item per line (small diffs, no number per line)."""
    return ('{"%s": [\n' % key + ",\n".join(json.dumps(x, separators=(",", ":")) for x in items) + "\n]}\n").encode()


def render():
    out = {}
    out["prints.json"] = one_per_line("cases", print_cases())
    files, listing = file_cases()
    out.update(files)
    out["files.json"] = one_per_line("files", listing)
    links = link_cases()
    if links is not None:
        out["links.json"] = one_per_line("cases", links["cases"])
    return out


def npz_entries(data):
    with zipfile.ZipFile(io.BytesIO(data)) as z:
        return {n: z.read(n) for n in z.namelist()}


# A number as printed: its value and one unit of its last printed digit.
NUMBER = re.compile(r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?")


def last_digit_unit(tok):
    mant, _, exp = tok.lower().partition("e")
    decimals = len(mant.partition(".")[2])
    return 10.0 ** (-decimals + (int(exp) if exp else 0))


def same_text(a, b):
    """Equal but for numbers that differ by at most one unit of their last printed digit."""
    if a == b:
        return True
    ta, tb = NUMBER.split(a), NUMBER.split(b)
    na, nb = NUMBER.findall(a), NUMBER.findall(b)
    if ta != tb or len(na) != len(nb):
        return False
    for x, y in zip(na, nb):
        unit = max(last_digit_unit(x), last_digit_unit(y))
        if abs(float(x) - float(y)) > unit * (1 + 1e-9) + 1e-9 * max(abs(float(x)), abs(float(y))):
            return False
    return True


def same_npy(new, old):
    if new == old:
        return True
    try:  # hostile fixtures (truncated, object arrays) must match byte for byte
        x = np.load(io.BytesIO(new), allow_pickle=False)
        y = np.load(io.BytesIO(old), allow_pickle=False)
    except (ValueError, OSError, EOFError):
        return False
    if x.dtype != y.dtype or x.shape != y.shape or x.dtype.kind not in "fc":
        return False
    return bool(np.allclose(x, y, rtol=1e-9, atol=0, equal_nan=True))


def same(name, new, old):
    """Byte for byte, or numerically: NumPy picks its float64 exp by the CPU's vector units
    (AVX-512 or AVX2), whose results differ in the last bit, so arrays computed here (softmax
    weights) and what prints them may differ by one unit in the last place from machine to
    machine. Values within 1e-9 relative, printed numbers within a unit of their last digit."""
    if name.endswith(".npz"):
        try:
            e_new, e_old = npz_entries(new), npz_entries(old)
        except zipfile.BadZipFile:
            return False
        return e_new.keys() == e_old.keys() and all(same_npy(e_new[k], e_old[k]) for k in e_new)
    if new == old:
        return True
    if name.endswith(".npy"):
        return same_npy(new, old)
    try:
        a, b = new.decode("utf-8"), old.decode("utf-8")
    except UnicodeDecodeError:
        return False
    if name.endswith(".json"):
        diffs = []
        _same(json.loads(a), json.loads(b), name, diffs, text=same_text)
        return not diffs
    return same_text(a, b)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--check", action="store_true")
    args = ap.parse_args()
    out = render()
    if "links.json" not in out:
        print("the notebook helper web/public/attention_playground.py is missing")
        return 1
    if args.check:
        bad = 0
        for name, data in sorted(out.items()):
            path = os.path.join(OUT, name)
            old = open(path, "rb").read() if os.path.exists(path) else None
            if old is None or not same(name, data, old):
                print("DIFFERS  %s/%s: run /usr/bin/python3 tests/oracle/gen_array_prints.py" % (REL, name))
                bad += 1
        extra = sorted(set(os.listdir(OUT)) - set(out)) if os.path.isdir(OUT) else []
        for name in extra:
            print("EXTRA    %s/%s: not written by the generator" % (REL, name))
            bad += 1
        if bad:
            return 1
        print("same     %s/ (%d files, %d bytes)" % (REL, len(out), sum(len(d) for d in out.values())))
        return 0
    os.makedirs(OUT, exist_ok=True)
    for name, data in sorted(out.items()):
        path = os.path.join(OUT, name)
        if os.path.exists(path) and same(name, data, open(path, "rb").read()):
            continue  # keep the committed .npz when only its timestamps would change
        with open(path, "wb") as f:
            f.write(data)
    print("wrote    %s/ (%d files, %d bytes)" % (REL, len(out), sum(len(d) for d in out.values())))
    return 0


if __name__ == "__main__":
    sys.exit(main())
