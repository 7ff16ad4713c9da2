// The Decode tab's arithmetic: the copying prompt cut out of an induction sequence, FLOPs of one
// decoding step with and without the K/V cache, the cache's bytes for MHA / GQA / MQA, and the
// exports. Pure (no DOM, no Worker), unit-tested in tests/web/decode.test.ts. Timing statistics
// and the exponent fit are shared with the Timing lab (measure/model.ts).
import { fitExponent, type Fit, type Stats } from '../measure/model';

/** The model's shape as far as decoding cares. */
export interface DecodeShape {
  layers: number;
  heads: number;
  kvHeads: number;
  dModel: number;
  vocab: number;
  seqLen: number;
}

export function dHead(s: Pick<DecodeShape, 'heads' | 'dModel'>): number {
  return s.dModel / s.heads;
}

/**
 * An induction sequence [noise, s, s] (the task's lossMask marks the second copy from its 2nd
 * token) split into the prompt [noise, s, first `keep` tokens of s] and the continuation the copy
 * task expects. Returns null when the mask marks nothing.
 */
export interface CopyPrompt {
  /** The whole sequence, prompt followed by the expected continuation. */
  tokens: number[];
  promptLen: number;
  /** Start of the first and of the second copy of s, and len(s). */
  firstCopy: number;
  secondCopy: number;
  sLen: number;
}

export function copyPrompt(tokens: ArrayLike<number>, lossMask: ArrayLike<number>, keep = 2): CopyPrompt | null {
  const T = tokens.length;
  let m = -1;
  for (let i = 0; i < T; i++)
    if (lossMask[i]) {
      m = i;
      break;
    }
  if (m < 1) return null;
  const secondCopy = m - 1;
  const sLen = T - secondCopy;
  const firstCopy = secondCopy - sLen;
  if (firstCopy < 0) return null;
  const k = Math.max(1, Math.min(keep, sLen - 1));
  return { tokens: Array.from(tokens), promptLen: secondCopy + k, firstCopy, secondCopy, sLen };
}

/** The token the copy task expects at position t (the second copy of s), or null (noise, first copy). */
export function expectedAt(p: CopyPrompt, t: number): number | null {
  return t > p.secondCopy && t < p.tokens.length ? p.tokens[t] : null;
}

/**
 * Multiply-adds ×2 of one decoding step that brings the sequence to length t.
 * cached: the new token only — its q, k, v projections, one query row against t keys (scores and
 * weights·V), W_O, and the logits. recompute: the same for all t positions (the causal prefix
 * attends over 1 + 2 + … + t keys), of which only the last row is new — the rest is waste.
 * Element-wise work (softmax, residual adds) is left out: it is O(t) either way.
 */
export function stepFlops(s: DecodeShape, t: number): { cached: number; recompute: number; wasted: number } {
  const dh = dHead(s);
  const proj = 2 * s.dModel * (s.heads * dh + 2 * s.kvHeads * dh) + 2 * s.heads * dh * s.dModel; // W_Q, W_K, W_V, W_O
  const attnRow = (n: number) => 4 * s.heads * n * dh; // q·K^T over n keys, weights·V
  const logits = 2 * s.dModel * s.vocab;
  const cached = s.layers * (proj + attnRow(t)) + logits;
  // Σ_{i=1..t} attnRow(i) = 4·H·d_h·t(t+1)/2; logits only for the last position.
  const recompute = s.layers * (t * proj + 2 * s.heads * dh * t * (t + 1)) + logits;
  return { cached, recompute, wasted: recompute - cached };
}

/** The K/V cache at length T: 2 (K and V) · layers · K/V heads · T · d_head · 4 bytes. */
export function cacheBytesFormula(
  s: Pick<DecodeShape, 'layers' | 'heads' | 'dModel'>,
  kvHeads: number,
  t: number,
): number {
  return 2 * s.layers * kvHeads * t * dHead(s) * 4;
}

/** Linear attention's recurrent state: per layer and K/V head S (d_head × d_head) and z (d_head), 4 bytes each —
 *  the same at every T. */
export function stateBytesFormula(s: Pick<DecodeShape, 'layers' | 'heads' | 'dModel'>, kvHeads: number): number {
  const dh = dHead(s);
  return s.layers * kvHeads * (dh * dh + dh) * 4;
}

/** The MHA, GQA and MQA variants of a model with `heads` query heads: K/V heads H, a middle divisor, 1. */
export function kvVariants(heads: number): { name: 'MHA' | 'GQA' | 'MQA'; kvHeads: number }[] {
  const out: { name: 'MHA' | 'GQA' | 'MQA'; kvHeads: number }[] = [{ name: 'MHA', kvHeads: heads }];
  let g = 0;
  for (let k = Math.floor(heads / 4) || 1; k > 1; k--)
    if (heads % k === 0) {
      g = k;
      break;
    }
  if (g > 1 && g < heads) out.push({ name: 'GQA', kvHeads: g });
  if (heads > 1) out.push({ name: 'MQA', kvHeads: 1 });
  return out;
}

/** cached: the K/V cache; recompute: the whole prefix again; state: linear attention's recurrent state. */
export type DecodeMode = 'cached' | 'recompute' | 'state';

export interface DecodePoint {
  t: number;
  mode: DecodeMode;
  samples: number[];
  stats: Stats;
  heapBytes: number;
}

export function fitOf(points: readonly DecodePoint[], mode: DecodeMode, floor?: number): Fit | null {
  const pts = points.filter((p) => p.mode === mode).map((p) => ({ t: p.t, ms: p.stats.median }));
  // Cached and state steps are fast: fit them over every point (a floor of 0.5 ms would drop them all).
  return fitExponent(pts, floor ?? (mode === 'recompute' ? undefined : 0));
}

/**
 * Time to generate n tokens one by one from an empty cache, from a fitted per-token cost c·t^p:
 * the sum Σ_{t=1..n} c·t^p itself, not the integral c·n^(p+1)/(p+1), which turns negative for a
 * noisy fit with p ≤ −1 (the sum stays positive for any p).
 */
export function totalMs(fit: Fit, n: number): number {
  const c = Math.exp(fit.intercept);
  let s = 0;
  for (let t = 1; t <= n; t++) s += t ** fit.exponent;
  return c * s;
}

/** Whether the fitted exponent describes a cost that grows with T (p > −1 keeps N^(p+1) growing). */
export function growthLawHolds(fit: Fit): boolean {
  return fit.exponent > -1;
}

export interface StepRecord {
  t: number;
  token: number;
  expected: number | null;
  predicted: number;
  source: 'prompt' | 'generated';
}

export interface DecodeExport {
  config: Record<string, unknown>;
  steps: StepRecord[];
  timing: { T: number; cachedMs: number | null; recomputeMs: number | null }[];
  exponents: { cached: number | null; recompute: number | null };
  /** A linear model's recurrent state against its K/V cache (null when neither was run). */
  state?: {
    exponents: { state: number | null; cached: number | null };
    rows: { T: number; stateBytes: number; cacheBytes: number; stateMs: number | null; cachedMs: number | null }[];
    sameTokensAsRecompute: boolean | null;
    maxAbsDiffLogits: number | null;
  } | null;
  cacheBytes: Record<string, unknown>;
}

export function timingRows(points: readonly DecodePoint[]): DecodeExport['timing'] {
  const ts = [...new Set(points.map((p) => p.t))].sort((a, b) => a - b);
  const ms = (t: number, m: DecodeMode) => points.find((p) => p.t === t && p.mode === m)?.stats.median ?? null;
  return ts.map((T) => ({ T, cachedMs: ms(T, 'cached'), recomputeMs: ms(T, 'recompute') }));
}

export function exportCsv(e: DecodeExport): string {
  const lines = ['section,t_or_T,token,expected,predicted,source,cached_ms,recompute_ms'];
  for (const s of e.steps) lines.push(`step,${s.t},${s.token},${s.expected ?? ''},${s.predicted},${s.source},,`);
  for (const r of e.timing) lines.push(`timing,${r.T},,,,,${r.cachedMs ?? ''},${r.recomputeMs ?? ''}`);
  return lines.join('\n') + '\n';
}
