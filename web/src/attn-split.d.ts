// Types of attn-split.js (plain JavaScript so that bench/run.mjs can import it in Node).

export interface SplitOpts {
  heads: number;
  kvHeads?: number;
  tq: number;
  tk: number;
  dk: number;
  dv?: number;
  causal?: boolean;
  window?: number;
  keyPadding?: Uint8Array | null;
  mask?: Uint8Array | null;
  maskFill?: 'neg_inf' | 'finite' | 'zero';
  returnScores?: boolean;
  [key: string]: unknown;
}

export interface SplitPart {
  /** Query heads [h0, h1), K/V heads [g0, g1), query rows [i0, i1) of the full call. */
  heads: [number, number];
  kv: [number, number];
  rows: [number, number];
  /** The part's T_k: the first `keys` keys of the full call. */
  keys: number;
  /** The causal/window rule is passed as a custom mask (all keys) instead of the flags. */
  explicitMask: boolean;
}

export interface SplitPlan {
  by: 'none' | 'heads' | 'rows';
  parts: SplitPart[];
}

export interface AttnResultLike {
  output: Float32Array;
  weights: Float32Array | null;
  scores?: Float32Array | null;
  entropy: Float32Array;
  lse: Float32Array;
  fullyMaskedRows: number;
  nanRows: number;
  infScoreRows: number;
  scale: number;
}

export function normalizeOpts(opts: SplitOpts): Required<Pick<SplitOpts, 'heads' | 'kvHeads' | 'tq' | 'tk' | 'dk' | 'dv'>> & SplitOpts;
export function rowBounds(opts: SplitOpts, n: number, align?: number): number[];
export function planSplit(opts: SplitOpts, n: number, planOpts?: { align?: number }): SplitPlan;
export function partCall(q: Float32Array, k: Float32Array, v: Float32Array, opts: SplitOpts, part: SplitPart):
  { q: Float32Array; k: Float32Array; v: Float32Array; opts: SplitOpts };
export function mergeParts(opts: SplitOpts, plan: SplitPlan, results: AttnResultLike[]): AttnResultLike;
export function splitAttention(
  core: { attention(q: Float32Array, k: Float32Array, v: Float32Array, opts: SplitOpts): AttnResultLike },
  q: Float32Array, k: Float32Array, v: Float32Array, opts: SplitOpts, n: number, planOpts?: { align?: number },
): { plan: SplitPlan; result: AttnResultLike };
