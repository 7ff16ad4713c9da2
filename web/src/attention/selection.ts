// Several queries, several keys of one head (the links' `qsel` and `ksel`): picking rows and
// columns, and what the core sums up of them (core.weightSelection): the mean and the sum of the
// picked queries' weights over the keys, and how much weight each query puts on the picked keys.
// Pure: no DOM.
import type { AttnCore } from '../wasm/load-core';

/** The list with i added, or removed when it was there (sorted). */
export function toggle(list: readonly number[], i: number): number[] {
  return list.includes(i) ? list.filter((x) => x !== i) : [...list, i].sort((a, b) => a - b);
}

/** The list with every position from anchor to i (either order) added (sorted, unique). */
export function span(list: readonly number[], anchor: number | null, i: number): number[] {
  if (anchor === null) return toggle(list, i);
  const [a, b] = anchor <= i ? [anchor, i] : [i, anchor];
  const out = new Set(list);
  for (let x = a; x <= b; x++) out.add(x);
  return [...out].sort((x, y) => x - y);
}

export interface SelectionSummary {
  head: number;
  /** The picked queries and keys that this computation has (positions below T_q, T_k). */
  queries: number[];
  keys: number[];
  /** Picked positions past this computation's length (kept in the link, not summed). */
  beyond: number[];
  /** (T_k) the mean and the sum of the picked queries' weights, per key; [] without queries. */
  mean: number[];
  sum: number[];
  /** (T_q) per query, its total weight on the picked keys; [] without keys. */
  column: number[];
}

/** The core's sums of the picked rows and columns of one head's weights (heads, T_q, T_k). */
export function summarize(
  core: Pick<AttnCore, 'weightSelection'>,
  weights: Float32Array,
  shape: { heads: number; tq: number; tk: number },
  head: number,
  qsel: readonly number[],
  ksel: readonly number[],
): SelectionSummary {
  const queries = qsel.filter((i) => i < shape.tq);
  const keys = ksel.filter((j) => j < shape.tk);
  const beyond = [...qsel.filter((i) => i >= shape.tq), ...ksel.filter((j) => j >= shape.tk)];
  const r = core.weightSelection(weights, { ...shape, head, queries, keys });
  return {
    head,
    queries,
    keys,
    beyond,
    mean: Array.from(r.mean),
    sum: Array.from(r.sum),
    column: Array.from(r.column),
  };
}
