#!/usr/bin/python3
"""Bytes moved to and from slow memory by attention, counted by walking the loops.

An oracle for the core's IO model (cpp/include/attn/traffic.hpp), written from Dao et al. 2022
(FlashAttention, Algorithm 0 and Algorithm 1) and not from the core's closed forms: each
algorithm below runs its loops block by block and a `Slow` counter adds the elements of every
block it loads from or stores to slow memory. Nothing is computed on the data; only the loop
structure and what each step reads and writes are walked.

  standard        Algorithm 0 per head: read Q, K, write S; read S, write P; read P, V, write O.
  tiled q-outer   query blocks outside (the core's tiled kernel, FlashAttention-2's order):
                  read Q_i; for each key block with a visible key: read K_j, V_j; write O_i,
                  m_i, l_i.
  tiled kv-outer  Algorithm 1 (FlashAttention-1): write the initial O, l, m; for each key block:
                  read K_j, V_j; for each query block with a visible key: read Q_i, O_i, l_i, m_i,
                  write O_i, l_i, m_i.
Block sizes (Algorithm 1's, both orders): B_c = ceil(M / 4d), B_r = min(ceil(M / 4d), d), with
M = sramBytes // 4 float32 elements on chip and d = max(d_k, d_v). Causal masks are bottom-right
aligned (query q sees keys j <= q + tk - tq); a block pair is visited when one of its cells is
visible, checked cell by cell. Counts are per query head times `heads` (K and V reads too: each
head streams its group's K and V).
"""
import math


class Slow:
    """Slow memory: counts the float32 elements loaded and stored."""

    def __init__(self):
        self.loaded = 0
        self.stored = 0

    def load(self, n):
        self.loaded += n

    def store(self, n):
        self.stored += n


def blocks(n, size):
    """[(start, end)) of consecutive blocks of `size` covering 0 … n-1."""
    return [(s, min(s + size, n)) for s in range(0, n, size)]


def block_visible(r0, r1, c0, c1, tq, tk, causal):
    """Whether some query row in [r0, r1) may see some key in [c0, c1), cell by cell."""
    if not causal:
        return True
    return any(j <= i + tk - tq for i in range(r0, r1) for j in range(c0, c1))


def sizes(sram_bytes, dk, dv):
    d = max(dk, dv)
    m = sram_bytes // 4
    bc = math.ceil(m / (4 * d))
    return min(bc, d), bc


def standard(tq, tk, dk, dv, heads=1, kv_heads=1, causal=False):
    mem = Slow()
    for _ in range(heads):
        mem.load(tq * dk)          # Q_h
        mem.load(tk * dk)          # K_g
        mem.store(tq * tk)         # S = scale Q K^T (masked cells too: S is dense)
        for _ in range(tq):        # softmax row by row
            mem.load(tk)           # a row of S
            mem.store(tk)          # a row of P
        mem.load(tk * dv)          # V_g
        for _ in range(tq):
            mem.load(tk)           # a row of P
            mem.store(dv)          # a row of O
    footprint = heads * tq * dk + kv_heads * tk * (dk + dv) + heads * tq * dv + 2 * heads * tq * tk
    return {"loaded": 4 * mem.loaded, "stored": 4 * mem.stored, "footprint": 4 * footprint, "br": 0, "bc": 0}


def tiled(tq, tk, dk, dv, sram_bytes, order, heads=1, kv_heads=1, causal=False):
    br, bc = sizes(sram_bytes, dk, dv)
    rows, cols = blocks(tq, br), blocks(tk, bc)
    mem = Slow()
    for _ in range(heads):
        if order == "q-outer":
            for r0, r1 in rows:
                mem.load((r1 - r0) * dk)                  # Q_i
                for c0, c1 in cols:
                    if not block_visible(r0, r1, c0, c1, tq, tk, causal):
                        continue
                    mem.load((c1 - c0) * dk)              # K_j
                    mem.load((c1 - c0) * dv)              # V_j
                mem.store((r1 - r0) * dv)                 # O_i
                mem.store(2 * (r1 - r0))                  # m_i, l_i
        elif order == "kv-outer":
            mem.store(tq * dv + 2 * tq)                   # line 2: O = 0, l = 0, m = -inf
            for c0, c1 in cols:
                mem.load((c1 - c0) * dk)                  # K_j
                mem.load((c1 - c0) * dv)                  # V_j
                for r0, r1 in rows:
                    if not block_visible(r0, r1, c0, c1, tq, tk, causal):
                        continue
                    mem.load((r1 - r0) * (dk + dv + 2))   # Q_i, O_i, l_i, m_i
                    mem.store((r1 - r0) * (dv + 2))       # O_i, l_i, m_i
        else:
            raise ValueError(order)
    footprint = heads * tq * dk + kv_heads * tk * (dk + dv) + heads * tq * dv + 2 * heads * tq
    return {"loaded": 4 * mem.loaded, "stored": 4 * mem.stored, "footprint": 4 * footprint, "br": br, "bc": bc}
