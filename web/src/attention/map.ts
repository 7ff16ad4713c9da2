// Queries and keys as points: one head's query and key vectors (as the score uses them) projected
// by the core on two axes (core.qkMap: uncentred PCA of their union; exact when d_k ≤ 2), and a
// query's row of weights and scores with or without the scale, on the head's vectors or on a
// what-if copy where one vector was moved (the d_k = 2 playground). Every number is the core's.
// Pure: no DOM.
import { keyCount } from './what-if';
import type { AttnCore } from '../wasm/load-core';
import type { CoreAttentionOptions } from '../wasm/attn-core';
import type { Rows } from './head-rows';
import type { AttentionResult } from './protocol';

export interface HeadMap {
  head: number;
  dk: number;
  /** (T_q) and (T_k) points [x, y]. */
  queries: [number, number][];
  keys: [number, number][];
  /** Share of the squared length along each axis. */
  explained: [number, number];
  /** d_k ≤ 2: the map is the vectors themselves (x = dim 0, y = dim 1). */
  exact: boolean;
  /** q·k over every query–key pair of the head (raw, before the scale), and the call's scale. */
  dotMean: number;
  dotStd: number;
  /** One dimension's product q_c·k_c over every pair and dimension: its std. */
  prodStd: number;
  scale: number;
}

/** The head's points, from the core. */
export function headMap(core: Pick<AttnCore, 'qkMap'>, rows: Rows, head: number): HeadMap {
  const m = core.qkMap(rows.q, rows.k, { ...shapeOpts(rows), head } as Parameters<AttnCore['qkMap']>[2]);
  const pts = (a: ArrayLike<number>) =>
    Array.from({ length: a.length / 2 }, (_, i) => [a[2 * i], a[2 * i + 1]] as [number, number]);
  return {
    head,
    dk: rows.dk,
    queries: pts(m.queries),
    keys: pts(m.keys),
    explained: [m.explained[0], m.explained[1]],
    exact: rows.dk <= 2,
    dotMean: m.dotMean,
    dotStd: m.dotStd,
    prodStd: m.prodStd,
    scale: m.scale,
  };
}

function shapeOpts(rows: Rows): CoreAttentionOptions {
  return {
    ...rows.opts,
    heads: rows.heads,
    kvHeads: rows.kvHeads,
    tq: rows.t,
    tk: keyCount(rows),
    dk: rows.dk,
    dv: rows.dv,
  } as CoreAttentionOptions;
}

/** One query's row: its weights and scores over the keys, and its output (d_v). */
export interface QueryRow {
  weights: Float32Array;
  scores: Float32Array;
  output: Float32Array;
}

/** The head's rows computed by the core (every query), optionally without the scale. */
export function headRows(
  core: Pick<AttnCore, 'attention'>,
  rows: Rows,
  head: number,
  opts: { unscaled?: boolean } = {},
): { weights: Float32Array; scores: Float32Array; output: Float32Array } {
  const o = { ...shapeOpts(rows), kernel: 'naive', returnScores: true } as CoreAttentionOptions;
  if (opts.unscaled) (o as { scale?: number | null }).scale = 1;
  const a = core.attention(rows.q, rows.k, rows.v, o);
  const T = rows.t,
    Tk = keyCount(rows);
  return {
    weights: a.weights!.slice(head * T * Tk, (head + 1) * T * Tk),
    scores: a.scores!.slice(head * T * Tk, (head + 1) * T * Tk),
    output: a.output.slice(head * T * rows.dv, (head + 1) * T * rows.dv),
  };
}

/** A copy of the rows with one query's (or key's) vector set to `to` (d_k values): the what-if of
 *  the d_k = 2 playground. The key is the head's K/V head's row. */
export function moved(rows: Rows, head: number, which: 'q' | 'k', index: number, to: readonly number[]): Rows {
  const d = rows.dk;
  if (which === 'q') {
    const q = rows.q.slice();
    q.set(to, (head * rows.t + index) * d);
    return { ...rows, q };
  }
  const kvh = Math.floor(head / (rows.heads / rows.kvHeads));
  const k = rows.k.slice();
  k.set(to, (kvh * keyCount(rows) + index) * d);
  return { ...rows, k };
}

/** The head's value vectors (T_k, d_v), of its K/V head. */
export function headValues(rows: Rows, head: number): Float32Array {
  const kvh = Math.floor(head / (rows.heads / rows.kvHeads));
  const Tk = keyCount(rows);
  return rows.v.slice(kvh * Tk * rows.dv, (kvh + 1) * Tk * rows.dv);
}

/** The head's weights and outputs as the views draw them (the controller's result: the core's). */
export function drawn(
  r: Pick<AttentionResult, 't' | 'tk' | 'dv' | 'weights' | 'headOutputs'>,
  head: number,
): { weights: Float32Array; scores: Float32Array; output: Float32Array } {
  const T = r.t,
    Tk = r.tk;
  return {
    weights: r.weights.subarray(head * T * Tk, (head + 1) * T * Tk),
    scores: new Float32Array(0),
    output: r.headOutputs.subarray(head * T * r.dv, (head + 1) * T * r.dv),
  };
}
