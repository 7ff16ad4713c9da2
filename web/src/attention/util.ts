import { fmt, tokenRef } from '../ui/dom';
import { coreOptions, type CoreOptions, type CoreSettings } from '../shared/core-options';
import type { AttentionResult } from './protocol';

export function headSlice(a: Float32Array, h: number, size: number): Float32Array {
  return a.subarray(h * size, (h + 1) * size);
}

/** GQA: query head h reads K/V head floor(h / (H / H_kv)). */
export function kvHeadOf(h: number, heads: number, kvHeads: number): number {
  return Math.floor(h / (heads / kvHeads));
}

/** "query 'cat' (8) → key 'cat' (1): 0.471" */
export function describeWeight(
  tokens: readonly string[],
  i: number,
  j: number,
  v: number,
  forbidden: boolean,
  keyTokens: readonly string[] = tokens,
): string {
  const base = `query ${tokenRef(tokens, i)} → key ${tokenRef(keyTokens, j)}: ${fmt(v)}`;
  if (Number.isNaN(v)) return `${base} (the whole row is masked and the fill is −∞)`;
  return forbidden ? `${base} (masked)` : base;
}

/** A result's shape and the state's mask, scale and fill as the core's options: T_q = t rows,
 *  T_k = tk columns; in cross-attention (a second sentence, or the student's Q and K of different
 *  lengths) no causal mask or window (shared/core-options.ts). */
export function resultOptions(r: AttentionResult, m: CoreSettings): { tq: number; tk: number } & CoreOptions {
  return { tq: r.t, tk: r.tk, ...coreOptions(m, r.t, r.cross || r.tk !== r.t ? r.tk : undefined) };
}
