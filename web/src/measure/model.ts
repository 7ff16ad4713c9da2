// The timing lab's arithmetic: which T a sweep visits, the statistics of repeated timings, the
// least-squares exponent of t ∝ T^p, and the memory and time predictions that stop a sweep before
// it asks too much. Pure (no DOM, no Worker), unit-tested in tests/web/timing.test.ts; the memory
// figures are asked of a core passed in (tests/web/timing-core.test.ts).
import type { AttnCore, Kernel, Normalizer } from '../wasm/attn-core';

/** 'naive' and 'tiled': softmax attention through the core's two kernels. 'linear': linear
 *  attention (normalizer 'linear', φ = elu + 1) through the core's causal prefix-sum form
 *  (kernel 'tiled'): no T × T matrix and O(T·d_k·d_v) work. */
export type TimingKernel = 'naive' | 'tiled' | 'linear';
/** What the kernels select offers: 'both' = naive and tiled; 'linear' = tiled softmax next to
 *  linear attention (both without a T × T buffer, so only the normalizer differs). */
export type KernelChoice = 'both' | 'naive' | 'tiled' | 'linear';
export const TIMING_KERNEL_ORDER: readonly TimingKernel[] = ['naive', 'tiled', 'linear'];
/** 'qkv': core.attention on random Q, K, V. 'proj': core.multiHeadAttention on a random X (lesson 2's loop). */
export type TimingMode = 'qkv' | 'proj';

export interface SweepParams {
  tStart: number;
  tEnd: number;
  dModel: number;
  dk: number;
  heads: number;
  kernels: TimingKernel[];
  causal: boolean;
  mode: TimingMode;
  /** 'qkv' mode: module Workers each timed call is split across (web/src/timing/attn-split.js); 1 when absent. */
  workers?: number;
}

/** A point is skipped when its predicted cost (warm-up + repeats) is above this. */
export const TIME_BUDGET_MS = 15_000;
/** Only points at or above this median enter the fit (timer resolution and fixed costs flatten smaller ones). */
export const FIT_FLOOR_MS = 0.5;

export function kernelsOf(c: KernelChoice): TimingKernel[] {
  if (c === 'both') return ['naive', 'tiled'];
  if (c === 'linear') return ['tiled', 'linear'];
  return [c];
}

/** The core options that select a timed kernel (the page asks the core; it never computes). */
export function coreKernel(k: TimingKernel): { kernel: Kernel; normalizer?: Normalizer } {
  return k === 'linear' ? { kernel: 'tiled', normalizer: 'linear' } : { kernel: k };
}

/** T = start, 2·start, 4·start, … up to and including end. */
export function sweepTs(start: number, end: number): number[] {
  const out: number[] = [];
  for (let t = start; t <= end && out.length < 32; t *= 2) out.push(t);
  return out;
}

// Memory: every figure comes from the core (core.estimateBytes, core.estimateMultiHeadBytes,
// core.tiledScratchBytes, core.limits), computed where a core is (the timing Worker, or the
// compute Worker for the view before a sweep), never re-derived here.
export type MemoryParams = Pick<SweepParams, 'heads' | 'dk' | 'dModel' | 'mode'> & { ts: number[] };
export interface MemoryTable {
  /** core.limits.memoryCap */
  cap: number;
  /** core.tiledScratchBytes(d_k): the tiled kernel's constant scratch. */
  tiledScratch: number;
  /** core.limits.tile.keys: the key tile the tiled kernel uses in this build. */
  tileKeys: number;
  /** Per T: the bytes the core counts against its cap for one call of each kernel. */
  rows: { t: number; naive: number; tiled: number; linear: number }[];
}

type Estimator = Pick<AttnCore, 'estimateBytes' | 'estimateMultiHeadBytes'>;

/** What the core will count against its cap for one timed call: core.attention's estimate
 *  ('qkv'), or core.multiHeadAttention's ('proj'). Used to skip a point before calling. */
export function coreBytes(
  core: Estimator,
  p: Pick<SweepParams, 'heads' | 'dk' | 'dModel' | 'mode'>,
  t: number,
  kernel: TimingKernel,
): number {
  const { kernel: k, normalizer } = coreKernel(kernel);
  const variant = normalizer ? { normalizer } : {};
  if (p.mode === 'proj')
    return core.estimateMultiHeadBytes({ t, dModel: p.dModel, heads: p.heads, dk: p.dk, dv: p.dk, ...variant }, k);
  return core.estimateBytes({ heads: p.heads, tq: t, tk: t, dk: p.dk, dv: p.dk, ...variant }, k);
}

export function memoryTable(
  core: Estimator & Pick<AttnCore, 'limits' | 'tiledScratchBytes'>,
  p: MemoryParams,
): MemoryTable {
  return {
    cap: core.limits.memoryCap,
    tiledScratch: core.tiledScratchBytes(p.dk),
    tileKeys: core.limits.tile.keys,
    rows: p.ts.map((t) => ({
      t,
      naive: coreBytes(core, p, t, 'naive'),
      tiled: coreBytes(core, p, t, 'tiled'),
      linear: coreBytes(core, p, t, 'linear'),
    })),
  };
}

export interface Stats {
  median: number;
  min: number;
  max: number;
  q1: number;
  q3: number;
  n: number;
}

function quantile(sorted: number[], q: number): number {
  if (sorted.length === 1) return sorted[0];
  const pos = (sorted.length - 1) * q;
  const lo = Math.floor(pos);
  const hi = Math.ceil(pos);
  return sorted[lo] + (sorted[hi] - sorted[lo]) * (pos - lo);
}

export function stats(samples: readonly number[]): Stats {
  if (samples.length === 0) return { median: NaN, min: NaN, max: NaN, q1: NaN, q3: NaN, n: 0 };
  const s = [...samples].sort((a, b) => a - b);
  return {
    median: quantile(s, 0.5),
    min: s[0],
    max: s[s.length - 1],
    q1: quantile(s, 0.25),
    q3: quantile(s, 0.75),
    n: s.length,
  };
}

export interface Fit {
  /** The exponent p of t ∝ T^p. */
  exponent: number;
  /** log t = intercept + exponent · log T (natural logs). */
  intercept: number;
  /** Ts that entered the fit. */
  ts: number[];
}

/** Least-squares fit of ln t against ln T over points with t ≥ floor. Null with fewer than 2 such points. */
export function fitExponent(points: readonly { t: number; ms: number }[], floor = FIT_FLOOR_MS): Fit | null {
  const pts = points.filter((p) => Number.isFinite(p.ms) && p.ms >= floor && p.t > 0);
  if (pts.length < 2) return null;
  const xs = pts.map((p) => Math.log(p.t));
  const ys = pts.map((p) => Math.log(p.ms));
  const mx = xs.reduce((a, b) => a + b, 0) / xs.length;
  const my = ys.reduce((a, b) => a + b, 0) / ys.length;
  let sxy = 0;
  let sxx = 0;
  for (let i = 0; i < xs.length; i++) {
    sxy += (xs[i] - mx) * (ys[i] - my);
    sxx += (xs[i] - mx) ** 2;
  }
  if (sxx === 0) return null;
  const exponent = sxy / sxx;
  return { exponent, intercept: my - exponent * mx, ts: pts.map((p) => p.t) };
}

/** The ×4 rule: a quadratic cost at T, predicted at T'. */
export function predictQuadratic(msAtT: number, t: number, tNext: number): number {
  return msAtT * (tNext / t) ** 2;
}

/** How many timed calls a point gets: more for fast points (a steadier median), fewer for slow ones. */
export function plannedCalls(predictedMs: number): { warmup: number; repeats: number } {
  if (!Number.isFinite(predictedMs) || predictedMs < 50) return { warmup: 2, repeats: 9 };
  if (predictedMs < 1000) return { warmup: 1, repeats: 5 };
  return { warmup: 1, repeats: 3 };
}

/** Calls per timed sample so that one sample lasts ≥ minMs (the browser's timer is coarse: 0.1 ms or worse). */
export function batchSize(msPerCall: number, minMs = 10, cap = 256): number {
  if (!(msPerCall > 0)) return cap;
  return Math.max(1, Math.min(cap, Math.ceil(minMs / msPerCall)));
}

export type Skip =
  | { kind: 'memory'; t: number; bytes: number; cap: number }
  | { kind: 'time'; t: number; predictedMs: number; budgetMs: number };

/** Should the point at T be skipped (and the kernel's sweep end)? `bytes`: coreBytes for the
 *  point; `cap`: core.limits.memoryCap. */
export function checkBudget(
  bytes: number,
  cap: number,
  t: number,
  prev: { t: number; ms: number } | null,
  budgetMs = TIME_BUDGET_MS,
): Skip | null {
  if (bytes > cap) return { kind: 'memory', t, bytes, cap };
  if (prev && Number.isFinite(prev.ms)) {
    const call = predictQuadratic(prev.ms, prev.t, t);
    const { warmup, repeats } = plannedCalls(call);
    const predictedMs = call * (warmup + repeats);
    if (predictedMs > budgetMs) return { kind: 'time', t, predictedMs, budgetMs };
  }
  return null;
}

export function formatBytes(b: number): string {
  if (!Number.isFinite(b)) return '—';
  if (b < 1024) return `${b} B`;
  if (b < 1024 ** 2) return `${(b / 1024).toFixed(b < 10 * 1024 ? 1 : 0)} KiB`;
  if (b < 1024 ** 3) return `${(b / 1024 ** 2).toFixed(b < 10 * 1024 ** 2 ? 1 : 0)} MiB`;
  return `${(b / 1024 ** 3).toFixed(2)} GiB`;
}

export function formatMs(ms: number): string {
  if (!Number.isFinite(ms)) return '—';
  if (ms < 1) return `${ms.toFixed(3)} ms`;
  if (ms < 10) return `${ms.toFixed(2)} ms`;
  if (ms < 1000) return `${ms.toFixed(1)} ms`;
  // Long durations (a total generation time from the fits) with sensible digits, not "1964.82 s".
  const s = ms / 1000;
  if (s < 10) return `${s.toFixed(2)} s`;
  if (s < 100) return `${s.toFixed(1)} s`;
  if (s < 600) return `${s.toFixed(0)} s`;
  if (s < 3600 * 2) return `${(s / 60).toFixed(1)} min`;
  return `${(s / 3600).toFixed(1)} h`;
}

export function skipText(s: Skip, kernel: TimingKernel): string {
  if (s.kind === 'memory') {
    return `${kernel}: stopped before T = ${s.t}: it would need about ${formatBytes(s.bytes)} of working memory (the ${kernel === 'naive' ? 'H·T²·4-byte weight matrix and its inputs' : 'inputs and outputs'}), over the core's ${formatBytes(s.cap)} cap.`;
  }
  return `${kernel}: stopped before T = ${s.t}: by the ×4 rule that point would take about ${(s.predictedMs / 1000).toFixed(1)} s (warm-up and repeats), over the budget of ${Math.round(s.budgetMs / 1000)} s per point.`;
}
