// "Change it": one element of the selected query's (or key's) vector set to another value, and
// what the core then computes for that query's row: its score for the key, its weights and its
// output. A what-if on copies: the model is untouched. Every number is the core's (one attention
// call on the head's Q, K, V before and after, and the score breakdown). Pure: no DOM.
import type { AttnCore, CoreAttentionOptions } from '../wasm/attn-core';

export interface Cell {
  head: number;
  query: number;
  key: number;
}
export interface Change {
  /** Which vector: the query's row or the key's row (of its K/V head). */
  which: 'q' | 'k';
  dim: number;
  value: number;
}
export interface WhatIfRows {
  q: Float32Array;
  k: Float32Array;
  v: Float32Array;
  heads: number;
  kvHeads: number;
  t: number;
  /** T_k: the keys' rows (cross-attention); absent: t. */
  tk?: number;
  dk: number;
  dv: number;
  /** Mask, scale, fill and the variant, as for attention. */
  opts: Record<string, unknown>;
}
/** One side (before or after the change) of the query's row. */
export interface RowState {
  /** The element's value. */
  value: number;
  score: number;
  weight: number;
  /** (T) the query's weights. */
  weights: Float32Array;
  /** (d_v) the query's output. */
  output: Float32Array;
}

/** T_k of the rows: the keys' count. */
export function keyCount(r: Pick<WhatIfRows, 't' | 'tk'>): number {
  return r.tk ?? r.t;
}

/** Index of the changed element in q or k. */
function index(r: WhatIfRows, cell: Cell, c: Change): number {
  if (c.which === 'q') return (cell.head * r.t + cell.query) * r.dk + c.dim;
  const kvh = Math.floor(cell.head / (r.heads / r.kvHeads));
  return (kvh * keyCount(r) + cell.key) * r.dk + c.dim;
}

function rowOf(core: AttnCore, r: WhatIfRows, q: Float32Array, k: Float32Array, cell: Cell, value: number): RowState {
  const tk = keyCount(r);
  const shape = { heads: r.heads, kvHeads: r.kvHeads, tq: r.t, tk, dk: r.dk, dv: r.dv };
  const opts = { ...r.opts, ...shape } as CoreAttentionOptions;
  const a = core.attention(q, k, r.v, { ...opts, kernel: 'naive' });
  const b = core.scoreBreakdown(q, k, { ...opts, head: cell.head, query: cell.query, key: cell.key });
  const row = (cell.head * r.t + cell.query) * tk;
  const out = (cell.head * r.t + cell.query) * r.dv;
  return {
    value,
    score: b.score,
    weight: a.weights![row + cell.key],
    weights: a.weights!.slice(row, row + tk),
    output: a.output.slice(out, out + r.dv),
  };
}

/** The query's row before and after the change (copies of Q and K; the originals stay). */
export function whatIf(core: AttnCore, r: WhatIfRows, cell: Cell, c: Change): { before: RowState; after: RowState } {
  const i = index(r, cell, c);
  const src = c.which === 'q' ? r.q : r.k;
  const before = rowOf(core, r, r.q, r.k, cell, src[i]);
  const q = c.which === 'q' ? r.q.slice() : r.q,
    k = c.which === 'k' ? r.k.slice() : r.k;
  (c.which === 'q' ? q : k)[i] = c.value;
  return { before, after: rowOf(core, r, q, k, cell, Math.fround(c.value)) };
}

/** The raw element's current value (the what-if control's starting point). */
export function elementOf(r: WhatIfRows, cell: Cell, which: 'q' | 'k', dim: number): number {
  return (which === 'q' ? r.q : r.k)[index(r, cell, { which, dim, value: 0 })];
}
