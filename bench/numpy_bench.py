"""NumPy side of `npm run bench`: the lessons' attention code as written, timed.

Usage: numpy_bench.py --dtype float64|float32 --T 256,512 --dk 64 --causal 1 --reps 1
Prints one JSON object per line: {"dtype","T","dk","causal","ms":[...]} and, first,
{"blas": ...} describing the BLAS NumPy runs on. Inputs are N(0, 1), seeded.
"""

import argparse
import json
import time

import numpy as np


# --- the lesson's code, as written (float64 in the lesson; the caller picks the dtype) ---
def softmax(x, axis=-1):
    x = x - x.max(axis=axis, keepdims=True)  # subtract max for numerical safety
    e = np.exp(x)
    return e / e.sum(axis=axis, keepdims=True)


def attention(Q, K, V, causal=True):
    scores = Q @ K.T / np.sqrt(Q.shape[-1])  # (T, T)
    if causal:
        mask = np.triu(np.ones_like(scores), k=1).astype(bool)
        scores = np.where(mask, -np.inf, scores)
    W = softmax(scores)  # (T, T) rows sum to 1
    return W @ V, W  # (T, dv)
# --- end of the lesson's code ---


def blas_info():
    info = {}
    try:
        from threadpoolctl import threadpool_info

        info["threadpoolctl"] = [
            {k: p.get(k) for k in ("internal_api", "version", "architecture", "num_threads", "filepath")}
            for p in threadpool_info()
        ]
    except Exception:
        pass
    libs = set()
    with open("/proc/self/maps") as f:
        for line in f:
            path = line.split()[-1] if len(line.split()) >= 6 else ""
            if "blas" in path or "lapack" in path:
                libs.add(path)
    info["loaded"] = sorted(libs)
    try:  # OpenBLAS reports the core it picked
        import ctypes

        for path in sorted(libs):
            if "openblas" in path:
                lib = ctypes.CDLL(path)
                lib.openblas_get_corename.restype = ctypes.c_char_p
                lib.openblas_get_config.restype = ctypes.c_char_p
                info["openblas_core"] = lib.openblas_get_corename().decode()
                info["openblas_config"] = lib.openblas_get_config().decode()
                info["openblas_threads"] = lib.openblas_get_num_threads()
                break
    except Exception as e:  # pragma: no cover
        info["openblas_error"] = str(e)
    return info


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--dtype", default="float64")
    ap.add_argument("--T", default="1024")
    ap.add_argument("--dk", type=int, default=64)
    ap.add_argument("--causal", type=int, default=1)
    ap.add_argument("--reps", type=int, default=1)
    ap.add_argument("--info", action="store_true")
    a = ap.parse_args()
    dt = np.dtype(a.dtype)
    # Warm-up: BLAS thread pool, page faults of the first big arrays.
    rng = np.random.default_rng(0)
    w = rng.standard_normal((256, a.dk)).astype(dt)
    for _ in range(3):
        attention(w, w, w, bool(a.causal))
    if a.info:
        print(json.dumps({"blas": blas_info(), "numpy": np.__version__}), flush=True)
    for T in [int(t) for t in a.T.split(",") if t]:
        Q, K, V = (rng.standard_normal((T, a.dk)).astype(dt) for _ in range(3))
        attention(Q[:256], K[:256], V[:256], bool(a.causal))
        ms = []
        for _ in range(a.reps):
            t0 = time.perf_counter()
            out, W = attention(Q, K, V, bool(a.causal))
            ms.append((time.perf_counter() - t0) * 1e3)
            del out, W
        print(json.dumps({"dtype": a.dtype, "T": T, "dk": a.dk, "causal": bool(a.causal), "ms": ms}), flush=True)


if __name__ == "__main__":
    main()
