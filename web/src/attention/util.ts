import { fmt, tokenRef } from '../ui/dom';

export function headSlice(a: Float32Array, h: number, size: number): Float32Array {
  return a.subarray(h * size, (h + 1) * size);
}

/** GQA: query head h reads K/V head floor(h / (H / H_kv)). */
export function kvHeadOf(h: number, heads: number, kvHeads: number): number {
  return Math.floor(h / (heads / kvHeads));
}

/** "query 'cat' (8) → key 'cat' (1): 0.471" */
export function describeWeight(tokens: readonly string[], i: number, j: number, v: number, forbidden: boolean): string {
  const base = `query ${tokenRef(tokens, i)} → key ${tokenRef(tokens, j)}: ${fmt(v)}`;
  if (Number.isNaN(v)) return `${base} (the whole row is masked and the fill is −∞)`;
  return forbidden ? `${base} (masked)` : base;
}
