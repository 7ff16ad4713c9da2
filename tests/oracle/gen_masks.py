#!/usr/bin/python3
"""The allowed mask of the NumPy oracle (attn_ref.allowed_matrix) for the cases the page draws.

    /usr/bin/python3 tests/oracle/gen_masks.py           # rewrite tests/fixtures/masks.json
    /usr/bin/python3 tests/oracle/gen_masks.py --check   # exit 1 if the committed file differs

Feeds tests/cpp/test_introspect.cpp and tests/js/introspect.test.mjs (attn::allowed_mask,
core.allowedMask). Format: { cases: [ { name, tq, tk, causal, window, keyPadding: [0/1 x T_k] |
null, mask: [0/1 x T_q*T_k] | null, allowed: "0101..." (T_q*T_k characters, row-major) } ] }.
"""

import argparse
import json
import os
import sys
import zlib

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import attn_ref as ref  # noqa: E402

OUT = os.path.normpath(os.path.join(HERE, "..", "fixtures", "masks.json"))


def pad_list(tk, padded):
    return [0 if j in padded else 1 for j in range(tk)]


def cases():
    out = []

    def add(name, tq, tk, causal=False, window=0, padded=None, mask=None):
        kp = pad_list(tk, padded) if padded is not None else None
        ok = ref.allowed_matrix(tq, tk, causal, window, kp, mask)
        out.append({"name": name, "tq": tq, "tk": tk, "causal": causal, "window": window,
                    "keyPadding": kp, "mask": None if mask is None else [int(x) for x in mask],
                    "allowed": "".join("1" if x else "0" for x in ok.ravel())})

    add("T=1, no mask", 1, 1)
    add("T=1, causal, padded", 1, 1, causal=True, padded={0})
    add("lesson 2: T=6 causal", 6, 6, causal=True)
    add("T=11 causal, window 3", 11, 11, causal=True, window=3)
    add("T=11 window 3 alone (both sides of the diagonal)", 11, 11, window=3)
    add("T=8 causal, padding 0 and 3", 8, 8, causal=True, padded={0, 3})
    add("T=4 all padding", 4, 4, causal=True, padded={0, 1, 2, 3})
    add("T=64 causal + window 5 + padding", 64, 64, causal=True, window=5, padded={0, 1, 40, 63})
    add("window wider than T", 7, 7, causal=True, window=50)
    add("T_q 3 < T_k 9, causal (bottom-right)", 3, 9, causal=True)
    add("T_q 9 > T_k 3, causal (first rows fully masked)", 9, 3, causal=True)
    add("T_q 5, T_k 12, causal + window 4", 5, 12, causal=True, window=4)
    rng = np.random.default_rng(zlib.crc32(b"masks custom"))
    custom = (rng.random(6 * 10) < 0.6).astype(int)
    add("custom (6, 10) mask with causal and padding", 6, 10, causal=True, padded={2}, mask=custom)
    add("custom mask alone", 6, 10, mask=custom)
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--check", action="store_true")
    args = ap.parse_args()
    text = json.dumps({"cases": cases()}, separators=(",", ":")).replace('},{', '},\n{') + "\n"
    if args.check:
        old = open(OUT).read() if os.path.exists(OUT) else None
        if old != text:
            print("DIFFERS  tests/fixtures/masks.json: run /usr/bin/python3 tests/oracle/gen_masks.py")
            return 1
        print("same     tests/fixtures/masks.json (%d bytes)" % len(text))
        return 0
    with open(OUT, "w") as f:
        f.write(text)
    print("wrote    tests/fixtures/masks.json (%d bytes)" % len(text))
    return 0


if __name__ == "__main__":
    sys.exit(main())
