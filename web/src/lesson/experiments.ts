// The experiment cards' runs, without DOM. Each card runs the core and states only numbers its
// run measured: `figures` holds them by name (the browser test reads them from the page), and the
// card's sentences are written from them. Input data is made here (a row of chosen logits, a
// seeded permutation of keys and values); every attention result is the core's.
import type { AttnCore, CoreAttentionOptions, Precision } from '../wasm/attn-core';
import { exampleFor, maskOptions, maxAbsDelta, runModel, scaleOf, standardModel, type Arr, type RunModel } from './run';
import type { ExperimentId } from './experiment-ids';

export interface CardResult {
  id: ExperimentId;
  title: string;
  /** Which line of the computation it replaces or probes. */
  line: string;
  /** One plain sentence first: what the card is about, without symbols. */
  lead?: string;
  /** What the run measured: which heads, which scale, which data. */
  measured?: string;
  /** Sentences with the run's numbers in them. */
  text: string[];
  /** The numbers those sentences state, by name (what the tests check). */
  figures: Record<string, number>;
  /** A table of the run's numbers (the FlashAttention card's bytes per T); `data` holds each row's
   *  exact values for the tests. */
  table?: { caption: string; head: string[]; rows: { cells: string[]; data: Record<string, number> }[] };
}

/** The scale as the code line shows it, in words. */
export function scaleWords(scale: RunModel['scale']): string {
  return scale === 'sqrt'
    ? 'scale 1/√d_k'
    : scale === 'none'
      ? 'no scale (scale 1: the division deleted)'
      : `scale ${scale} (instead of 1/√d_k)`;
}

/** Which head a card measured, as the page numbers heads (from 1). */
function headWords(h: number, heads: number): string {
  return `head ${h + 1} of ${heads} (the head the pictures show)`;
}

/** The drawn head, clamped to the example's heads. */
const clampHead = (h: number, heads: number) => Math.min(Math.max(0, Math.trunc(h) || 0), heads - 1);

/** The example's name for the "measured" lines. */
function exampleWords(m: RunModel, t: number): string {
  return m.source === 'induction'
    ? `lesson 1’s example (${t} tokens)`
    : `the random example (seed ${m.seed}, ${t} tokens)`;
}

const f = (x: number, d = 3): string =>
  Number.isNaN(x)
    ? 'NaN'
    : x === 0
      ? '0'
      : Math.abs(x) < 1e-3 || Math.abs(x) >= 1e5
        ? x.toExponential(2)
        : x.toFixed(d);

/** A seeded permutation of 0…n−1 (Fisher–Yates on a 32-bit LCG: data, not maths). */
export function permutation(n: number, seed: number): number[] {
  const p = Array.from({ length: n }, (_, i) => i);
  let s = seed >>> 0 || 1;
  for (let i = n - 1; i > 0; i--) {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    const j = s % (i + 1);
    [p[i], p[j]] = [p[j], p[i]];
  }
  return p;
}

function permuteRows(a: Float32Array, perm: readonly number[], width: number): Float32Array {
  const out = new Float32Array(a.length);
  perm.forEach((src, dst) => out.set(a.subarray(src * width, (src + 1) * width), dst * width));
  return out;
}

// ---------- max shift ----------
/** One query row whose largest logit is `logit`: d_k = 1, q = [logit], keys 1, ½, ¼, 0, scale 1. */
function logitRow(core: AttnCore, logit: number, precision: Precision, maxShift: boolean) {
  const q = new Float32Array([logit]);
  const k = new Float32Array([1, 0.5, 0.25, 0]);
  const v = new Float32Array([1, 2, 3, 4]);
  return core.attention(q, k, v, { heads: 1, tq: 1, tk: 4, dk: 1, dv: 1, scale: 1, maxShift, precision });
}
const rowIsNaN = (core: AttnCore, logit: number, p: Precision, shift: boolean) =>
  Number.isNaN(logitRow(core, logit, p, shift).rowSums![0]);

/** The smallest largest-logit that turns the row NaN with the shift off, found by bisection on the
 *  core's answers (the row is finite at lo and NaN at hi). */
export function overflowThreshold(core: AttnCore, p: Precision): number {
  let lo = 1,
    hi = 2048;
  if (!rowIsNaN(core, hi, p, false)) return Infinity;
  for (let i = 0; i < 60 && hi - lo > 1e-9 * hi; i++) {
    const mid = (lo + hi) / 2;
    if (rowIsNaN(core, mid, p, false)) hi = mid;
    else lo = mid;
  }
  return (lo + hi) / 2;
}

export function shiftCard(core: AttnCore, logit: number, precision: Precision): CardResult {
  const th = {
    float16: overflowThreshold(core, 'float16'),
    float32: overflowThreshold(core, 'float32'),
    float64: overflowThreshold(core, 'float64'),
  };
  const off = rowIsNaN(core, logit, precision, false);
  const on = rowIsNaN(core, logit, precision, true);
  return {
    id: 'shift',
    title: 'Max shift off',
    line: 'S = S − S.max(−1)',
    lead: 'Subtracting each row’s largest score before taking exp changes no weight; it only keeps exp from overflowing.',
    measured: `One query row against four keys, built for this card: d_k = 1, the query is the slider’s value, the keys are 1, ½, ¼ and 0 and the scale is 1, so the row’s scores are the slider’s value times 1, ½, ¼ and 0. In ${precision}: the card’s precision select is line 1’s, so changing it changes the pictures too.`,
    text: [
      `Largest logit ${f(logit, 2)} in ${precision}: with the shift off the row is ${off ? 'NaN (exp overflowed to ∞, and ∞/∞ is NaN)' : 'finite'}; with the shift on it is ${on ? 'NaN' : 'finite'}.`,
      `Measured here, the row first turns NaN above ${f(th.float16, 2)} in float16, ${f(th.float32, 2)} in float32 and ${f(th.float64, 2)} in float64: the logarithm of each format's largest number.`,
    ],
    figures: {
      logit,
      thresholdF16: th.float16,
      thresholdF32: th.float32,
      thresholdF64: th.float64,
      nanShiftOff: off ? 1 : 0,
      nanShiftOn: on ? 1 : 0,
    },
  };
}

// ---------- −∞ before vs zero after ----------
export function afterCard(core: AttnCore, m: RunModel, head = 0): CardResult {
  const mm = { ...m, causal: true };
  const ex = exampleFor(core, mm);
  const T = ex.t,
    H = ex.heads,
    h = clampHead(head, H);
  const before = runModel(core, ex, mm, {});
  const after = runModel(core, ex, mm, { maskMode: 'after' });
  const rows = (a: Arr, width: number) => a.subarray(h * T * width, (h + 1) * T * width);
  let minSum = Infinity;
  for (const s of rows(after.rowSums!, 1)) minSum = Math.min(minSum, s);
  const norm = (o: Arr, dv: number) => {
    const x = rows(o, dv);
    let total = 0;
    for (let r = 0; r < T; r++) {
      let s = 0;
      for (let c = 0; c < dv; c++) s += x[r * dv + c] ** 2;
      total += Math.sqrt(s);
    }
    return total / T;
  };
  const nb = norm(before.headOutputs, before.dv),
    na = norm(after.headOutputs, after.dv);
  const sb = runModel(core, ex, mm, { normalizer: 'sigmoid' });
  const sa = runModel(core, ex, mm, { normalizer: 'sigmoid', maskMode: 'after' });
  const sigDelta = maxAbsDelta(rows(sb.weights!, T), rows(sa.weights!, T));
  return {
    id: 'after',
    title: '−∞ before vs zero after',
    line: 'S = where(allowed, S, fill)',
    lead: 'A mask should give the forbidden keys weight 0 while the allowed weights still sum to 1; zeroing them after the softmax does only the first half.',
    measured: `${headWords(h, H)}, ${exampleWords(m, T)}, ${m.causal ? 'its causal mask' : 'a causal mask (the pictures have none)'}, ${scaleWords(m.scale)}.`,
    text: [
      `Zeroing the masked weights after the softmax: the smallest row sum is ${f(minSum)} instead of 1, and the mean length of an output row falls from ${f(nb)} to ${f(na)}: every output is quietly scaled down.`,
      `Sigmoid normalizes nothing across the row, so zeroing after is the same computation: max |Δw| between before and after is ${f(sigDelta)}.`,
    ],
    figures: { head: h, minRowSumAfter: minSum, meanNormBefore: nb, meanNormAfter: na, sigmoidMaxDelta: sigDelta },
  };
}

// ---------- shuffle the keys and values ----------
export function shuffleCard(core: AttnCore, m: RunModel, seed = 7): CardResult {
  const ex = exampleFor(core, m);
  const r = runModel(core, ex, { ...m, padding: [] }, {});
  const T = ex.t,
    H = ex.heads,
    dk = r.dk,
    dv = r.dv,
    kvH = r.kvHeads;
  const perm = permutation(T, seed);
  // Permute each K/V head's rows (keys are rows of every head's block).
  const pk = new Float32Array(r.k.length),
    pv = new Float32Array(r.v.length);
  for (let h = 0; h < kvH; h++) {
    pk.set(permuteRows(r.k.subarray(h * T * dk, (h + 1) * T * dk), perm, dk), h * T * dk);
    pv.set(permuteRows(r.v.subarray(h * T * dv, (h + 1) * T * dv), perm, dv), h * T * dv);
  }
  const opts: CoreAttentionOptions = { heads: H, kvHeads: kvH, tq: T, tk: T, dk, dv, scale: scaleOf(m) };
  const run = (k: Float32Array, v: Float32Array, extra: Partial<CoreAttentionOptions>) =>
    core.attention(r.q, k, v, { ...opts, ...extra }).output;
  const none = maxAbsDelta(run(r.k, r.v, {}), run(pk, pv, {}));
  const rope = dk % 2 === 0 ? maxAbsDelta(run(r.k, r.v, { position: 'rope' }), run(pk, pv, { position: 'rope' })) : NaN;
  const alibi = maxAbsDelta(run(r.k, r.v, { position: 'alibi' }), run(pk, pv, { position: 'alibi' }));
  const causal = maxAbsDelta(run(r.k, r.v, { causal: true }), run(pk, pv, { causal: true }));
  return {
    id: 'shuffle',
    title: 'Shuffle the keys and values',
    line: 'O = W @ V',
    lead: 'Attention has no built-in sense of order: shuffle the keys together with their values and every output stays the same.',
    measured: `All ${H} heads together (the largest change of any output), ${exampleWords(m, T)}, no mask, ${scaleWords(m.scale)}; the rows of K and V shuffled together by a permutation drawn with seed ${seed}.`,
    text: [
      `Shuffled: max |Δ output| = ${f(none)}${none === 0 ? '' : ' (float32 rounding: the same sum in another order)'}. The weights' columns move with the keys and the weighted sum is the same sum in another order.`,
      `With RoPE max |Δ| = ${f(rope)}, with ALiBi ${f(alibi)}: both make a score depend on where a key sits, so moving a key changes its score. A causal mask that is not permuted with the keys lets each query see a different set of them: ${f(causal)}.`,
    ],
    figures: { seed, maxDeltaNone: none, maxDeltaRope: rope, maxDeltaAlibi: alibi, maxDeltaCausal: causal },
  };
}

// ---------- cannot amplify ----------
export function amplifyCard(core: AttnCore, m: RunModel, head = 0): CardResult {
  const ex = exampleFor(core, m);
  const H = ex.heads,
    h = clampHead(head, H),
    T = ex.t;
  const allowed = core.allowedMask({ t: T, ...maskOptions(m, T) });
  const measure = (normalizer: 'softmax' | 'softmax1' | 'sigmoid' | 'relu') => {
    const r = runModel(core, ex, m, { normalizer });
    const dv = r.dv,
      kvh = Math.floor(h / (H / r.kvHeads));
    let viol = 0,
      maxSum = -Infinity,
      minSum = Infinity;
    for (let i = 0; i < T; i++) {
      const s = r.rowSums![h * T + i];
      if (Number.isNaN(s)) continue;
      maxSum = Math.max(maxSum, s);
      minSum = Math.min(minSum, s);
      for (let c = 0; c < dv; c++) {
        let lo = Infinity,
          hi = -Infinity;
        for (let j = 0; j < T; j++)
          if (allowed[i * T + j]) {
            const x = r.v[(kvh * T + j) * dv + c];
            lo = Math.min(lo, x);
            hi = Math.max(hi, x);
          }
        if (lo > hi) continue;
        const o = r.headOutputs[(h * T + i) * dv + c];
        viol = Math.max(viol, o - hi, lo - o);
      }
    }
    return { viol, maxSum, minSum };
  };
  const sm = measure('softmax'),
    s1 = measure('softmax1'),
    sg = measure('sigmoid'),
    rl = measure('relu');
  const sums = (x: { minSum: number; maxSum: number }) => `${f(x.minSum)} to ${f(x.maxSum)}`;
  return {
    id: 'amplify',
    title: 'Cannot amplify',
    line: 'W = softmax(S)',
    lead: 'An attention output is a weighted average of value vectors, so it stays inside their range, as long as the weights are at least 0 and sum to 1.',
    measured: `${headWords(h, H)}, ${exampleWords(m, T)}, the mask as drawn, ${scaleWords(m.scale)}; each normalizer in turn on line 9. “Outside the range” is measured per coordinate against the values its row may attend to.`,
    text: [
      `Softmax weights are ≥ 0 and sum to 1, so each output is an average of its values: largest step outside the values' range ${f(sm.viol)}.`,
      `Sigmoid rows sum to ${sums(sg)} and relu rows to ${sums(rl)}. A row that does not sum to 1 can push an output outside the range: here by up to ${f(sg.viol)} (sigmoid) and ${f(rl.viol)} (relu). Softmax1's rows sum to as little as ${f(s1.minSum)}: it pulls outputs toward 0.`,
    ],
    figures: {
      head: h,
      softmaxViolation: sm.viol,
      sigmoidMaxRowSum: sg.maxSum,
      sigmoidMinRowSum: sg.minSum,
      reluMaxRowSum: rl.maxSum,
      reluMinRowSum: rl.minSum,
      sigmoidViolation: sg.viol,
      reluViolation: rl.viol,
      softmax1MinRowSum: s1.minSum,
    },
  };
}

// ---------- heads as a loop ----------
export function loopCard(core: AttnCore, m: RunModel): CardResult {
  const ex = exampleFor(core, m);
  const r = runModel(core, ex, m, {});
  const T = ex.t,
    H = ex.heads,
    dk = r.dk,
    dv = r.dv;
  const group = H / r.kvHeads;
  const looped = new Float32Array(H * T * dv);
  for (let h = 0; h < H; h++) {
    const kvh = Math.floor(h / group);
    const o = core.attention(
      r.q.slice(h * T * dk, (h + 1) * T * dk),
      r.k.slice(kvh * T * dk, (kvh + 1) * T * dk),
      r.v.slice(kvh * T * dv, (kvh + 1) * T * dv),
      { heads: 1, tq: T, tk: T, dk, dv, ...maskOptions(m, T), scale: scaleOf(m), maskFill: m.fill },
    ).output;
    looped.set(o, h * T * dv);
  }
  const d = maxAbsDelta(looped, r.headOutputs);
  return {
    id: 'loop',
    title: 'Heads as a loop',
    line: 'Q, K, V = X @ W_q, X @ W_k, X @ W_v',
    lead: 'Multi-head attention is the one-head computation run once per head; packing the heads into one call is only for speed.',
    measured: `All ${H} heads, ${exampleWords(m, T)}, the mask as drawn, ${scaleWords(m.scale)}.`,
    text: [
      `${H} single-head calls, one per head on its slice of Q, K and V, against one packed multi-head call: max |Δ output| = ${f(d)}${d === 0 ? ' (the same bits)' : ', float32 rounding (the packed call may sum in another order)'}. The reshape is the loop, done at once.`,
    ],
    figures: { heads: H, maxDelta: d },
  };
}

// ---------- why √d_k ----------
export const SQRT_DKS = [1, 4, 16, 64, 256, 1024];
/** Lesson 2's own example (its code with default_rng(0): T = 6, d = 8, d_k = 4, causal). */
export const LESSON2_MODEL: RunModel = {
  source: 'random',
  tokens: ['t0', 't1', 't2', 't3', 't4', 't5'],
  sharpness: 14,
  seed: 0,
  init: 'normal',
  generator: 'numpy',
  heads: 1,
  kvHeads: 1,
  dModel: 8,
  dK: 4,
  causal: true,
  window: 0,
  padding: [],
  fill: 'neg_inf',
  scale: 'sqrt',
};
export function sqrtCard(core: AttnCore, seed = 3): CardResult {
  const n = 64;
  const std: number[] = [];
  for (const dk of SQRT_DKS) {
    // Unit-variance vectors: rows of the core's N(0, 1) example input X (d_model = d_k).
    const a = core.example('random', { seed, t: n, dModel: dk, heads: 1, dk: 1, init: 'normal' }).x;
    const b = core.example('random', { seed: seed + 1, t: n, dModel: dk, heads: 1, dk: 1, init: 'normal' }).x;
    const s = core.attention(a, b, new Float32Array(n), {
      heads: 1,
      tq: n,
      tk: n,
      dk,
      dv: 1,
      scale: 1,
      returnScores: true,
    }).scores!;
    let mean = 0;
    for (const x of s) mean += x;
    mean /= s.length;
    let v = 0;
    for (const x of s) v += (x - mean) ** 2;
    std.push(Math.sqrt(v / s.length));
  }
  const at = (dk: number) => std[SQRT_DKS.indexOf(dk)];
  // Lesson 2: "delete that division and re-run: the weight matrix becomes almost one-hot".
  const ex = exampleFor(core, LESSON2_MODEL);
  const T = ex.t;
  const rowMax = (scale: RunModel['scale']) => {
    const w = runModel(core, ex, { ...LESSON2_MODEL, scale }, {}).weights!;
    return Array.from({ length: T }, (_, i) => Math.max(...w.subarray(i * T, (i + 1) * T)));
  };
  const withDiv = rowMax('sqrt'),
    without = rowMax('none');
  // The spread of its scores with the division, over the cells the causal mask allows.
  const sc = runModel(core, ex, LESSON2_MODEL, {}).scores!;
  const allowed: number[] = [];
  for (let i = 0; i < T; i++) for (let j = 0; j <= i; j++) allowed.push(sc[i * T + j]);
  const mean = allowed.reduce((a, b) => a + b, 0) / allowed.length;
  const scoreStd = Math.sqrt(allowed.reduce((a, b) => a + (b - mean) ** 2, 0) / allowed.length);
  const above = (xs: number[]) => xs.filter((x) => x > 0.9).length;
  const list = (xs: number[]) => xs.map((x) => f(x)).join(', ');
  const figures: Record<string, number> = Object.fromEntries(SQRT_DKS.map((d, i) => [`std${d}`, std[i]]));
  withDiv.forEach((x, i) => (figures[`lesson2With${i}`] = x));
  without.forEach((x, i) => (figures[`lesson2Without${i}`] = x));
  figures.lesson2WithAbove09 = above(withDiv);
  figures.lesson2WithoutAbove09 = above(without);
  figures.lesson2ScoreStd = scoreStd;
  return {
    id: 'sqrtdk',
    title: 'Why √d_k, measured',
    line: 'S = (Q @ K.T) * scale',
    lead: 'A dot product of two random vectors spreads more the longer the vectors are; dividing by √d_k keeps the scores’ spread near 1 at any width.',
    measured: `Random unit-variance vectors from the core’s generator, ${n} queries × ${n} keys for each d_k, scale 1 (the raw q·k); then lesson 2’s own example (its code with default_rng(0): ${T} tokens, d = 8, d_k = 4, causal) with and without the division.`,
    text: [
      `Standard deviation of q·k: ${SQRT_DKS.map((d, i) => `${f(std[i], 2)} at d_k = ${d}`).join(', ')}.`,
      `At d_k = 64 the spread is ${f(at(64) / at(1), 2)}× that at d_k = 1 (√64 = 8): dividing by √d_k brings it back to about ${f(at(64) / 8, 2)}.`,
      `Lesson 2 says that without the division its W “becomes almost one-hot”. On its own example each row's largest weight (rows 0 to ${T - 1}) is ${list(withDiv)} with the division and ${list(without)} without: ${above(withDiv)} of ${T} rows put more than 0.9 on one key with it, ${above(without)} without.`,
      `So the claim overstates at this size: with the division ${above(withDiv)} of ${T} rows are already that close to one-hot, and deleting it makes ${above(without)}. At d_k = 4 the division only halves the scores, and lesson 2 draws X and the weights from N(0, 1), so each entry of q and k is a sum of 8 products (expected variance 8, not 1): divided by 2, the scores the mask allows still have a standard deviation of ${f(scoreStd, 2)}. The division matters where lesson 1 measures it: unit-variance q and k, and wide heads (at d_k = 64 it divides by 8).`,
    ],
    figures,
  };
}

// ---------- does each doubling quadruple the time? ----------
/** Lesson 2's timing loop: X (T, 512), three projections to d_k = 64, then Q Kᵀ and W V. */
export const COST_TS = [256, 512, 1024, 2048, 4096, 8192, 16384];
const COST_D = 512,
  COST_DK = 64;
export function costCard(): CardResult {
  // Operations of the matrix products, 2 per multiply-add (an (a, b) @ (b, c) product is 2abc).
  const mm = (a: number, b: number, c: number) => 2 * a * b * c;
  const rows = COST_TS.map((t) => ({
    t,
    proj: 3 * mm(t, COST_D, COST_DK),
    quad: mm(t, COST_DK, t) + mm(t, t, COST_DK),
  }));
  const total = (r: (typeof rows)[number]) => r.proj + r.quad;
  const ratios = rows.slice(1).map((r, i) => total(r) / total(rows[i]));
  // The T × T products equal the projections where 4 T² d_k = 6 T d d_k: T = 1.5 d.
  const crossover = (3 * COST_D) / 2;
  const lessonRatios = ratios.slice(0, 3);
  const figures: Record<string, number> = { crossover };
  ratios.forEach((r, i) => (figures[`ratio${COST_TS[i + 1]}`] = r));
  const ops = (x: number) => `${(x / 1e9).toFixed(x < 1e9 ? 3 : 2)} G`;
  return {
    id: 'cost',
    title: 'Does each doubling quadruple the time?',
    line: 'S = (Q @ K.T) … O = W @ V',
    lead: 'Lesson 2 times its function for T = 256 to 2048 and says each doubling roughly quadruples the time; only the T × T part of the work grows that fast.',
    measured: `Counted, not timed: the operations of the matrix products in lesson 2's loop (X of width ${COST_D}, three projections to d_k = ${COST_DK}, Q @ K.T and W @ V), two per multiply-add; the scale, the mask and the softmax are left out.`,
    text: [
      `Per doubling the count grows ×${lessonRatios.map((r) => f(r, 2)).join(', ×')} from T = 256 to 2048, the lesson's own sizes, then ×${ratios
        .slice(3)
        .map((r) => f(r, 2))
        .join(', ×')} up to T = ${COST_TS[COST_TS.length - 1]}.`,
      `The projections grow ×2 per doubling and the two T × T products ×4; the products catch up with the projections only at T = ${crossover} (1.5 × d = ${COST_D}). So “quadruples” holds once T is well above that; at the lesson's sizes the count gives ×${f(lessonRatios[0], 1)} to ×${f(lessonRatios[lessonRatios.length - 1], 1)}, and the Timing lab measures the time in this browser.`,
    ],
    figures,
    table: {
      caption: `Operations of lesson 2's loop (d = ${COST_D}, d_k = ${COST_DK}), in billions`,
      head: ['T', 'projections', 'T × T products', 'total', '× prev. T'],
      rows: rows.map((r, i) => ({
        cells: [String(r.t), ops(r.proj), ops(r.quad), ops(total(r)), i ? `×${f(ratios[i - 1], 2)}` : ''],
        data: { t: r.t, projections: r.proj, quadratic: r.quad, total: total(r) },
      })),
    },
  };
}

// ---------- what FlashAttention makes linear ----------
// Every byte count is the core's (core.traffic, the IO model of Dao et al. 2022, checked in
// tests/cpp/test_traffic.cpp against simulations of the loops and against the NumPy walk of the
// loops in tests/oracle/flash_io.py).
export const FLASH_TS = [512, 1024, 2048, 4096, 8192];
/** The head width the card uses (the lesson's d_k). */
export const FLASH_D = 64;
/** The smallest and largest on-chip memory the card offers (KiB). */
const SMALL_KIB = 16,
  LARGE_KIB = 228;
export function flashCard(core: AttnCore, sramKiB = 64): CardResult {
  const d = FLASH_D,
    sramBytes = sramKiB * 1024,
    M = sramBytes / 4;
  const at = (t: number, kernel: 'naive' | 'tiled', bytes = sramBytes, loopOrder: 'q-outer' | 'kv-outer' = 'q-outer') =>
    core.traffic({ tq: t, tk: t, dk: d, dv: d, heads: 1, causal: false, kernel, sramBytes: bytes, loopOrder });
  const sweep = FLASH_TS.map((t) => ({
    t,
    std: at(t, 'naive'),
    q: at(t, 'tiled'),
    kv: at(t, 'tiled', sramBytes, 'kv-outer'),
  }));
  const last = sweep[sweep.length - 1],
    prev = sweep[sweep.length - 2];
  const T = last.t;
  const kvAt = (kib: number) => at(T, 'tiled', kib * 1024, 'kv-outer').slowMemoryBytes;
  const qAt = (kib: number) => at(T, 'tiled', kib * 1024).slowMemoryBytes;
  const mib = (b: number) => b / 2 ** 20;
  // The paper's constant: about 12 T² d² / M elements with key blocks outside (Q, O, l, m re-read
  // per key block), 8 T² d² / M with query blocks outside (K, V re-read per query block).
  const kvModel = (4 * 12 * T * T * d * d) / M,
    qModel = (4 * 8 * T * T * d * d) / M;
  const capKiB = (4 * d * d * 4) / 1024; // M = 4d² floats: B_r reaches d
  const capped = last.q.blockRows === d && Math.ceil(M / (4 * d)) > d;
  const figures: Record<string, number> = {
    sramKiB,
    footprintStandardRatio: last.std.footprintBytes / prev.std.footprintBytes,
    footprintTiledRatio: last.q.footprintBytes / prev.q.footprintBytes,
    trafficStandardRatio: last.std.slowMemoryBytes / prev.std.slowMemoryBytes,
    trafficTiledRatio: last.q.slowMemoryBytes / prev.q.slowMemoryBytes,
    trafficKvOuterRatio: last.kv.slowMemoryBytes / prev.kv.slowMemoryBytes,
    footprintStandardMiB: mib(last.std.footprintBytes),
    footprintTiledMiB: mib(last.q.footprintBytes),
    trafficStandardMiB: mib(last.std.slowMemoryBytes),
    trafficTiledMiB: mib(last.q.slowMemoryBytes),
    trafficKvOuterMiB: mib(last.kv.slowMemoryBytes),
    trafficSmallSramRatio: qAt(SMALL_KIB) / last.q.slowMemoryBytes,
    kvOuterSmallMiB: mib(kvAt(SMALL_KIB)),
    kvOuterLargeMiB: mib(kvAt(LARGE_KIB)),
    qOuterSmallMiB: mib(qAt(SMALL_KIB)),
    qOuterLargeMiB: mib(qAt(LARGE_KIB)),
    kvOuterOverModel: last.kv.slowMemoryBytes / kvModel,
    qOuterOverModel: last.q.slowMemoryBytes / qModel,
    blockRows: last.q.blockRows,
    blockCols: last.q.blockCols,
  };
  const ratio = (a: number, b: number) => (b ? `×${f(a / b, 2)}` : '');
  return {
    id: 'flash',
    title: 'What FlashAttention makes linear',
    line: 'S = (Q @ K.T) * scale … O = W @ V (tiled: S and W stay on chip)',
    lead: 'FlashAttention computes the same result in tiles, so the T × T matrices never go to slow memory: the memory it needs grows in proportion to T, but the bytes it moves still grow with T².',
    measured: `The core’s IO model (core.traffic: counted, nothing is run): d_k = ${d}, one head, no mask, float32; M = ${sramKiB} KiB of on-chip memory = ${M} floats, so blocks of ${last.q.blockRows} query rows × ${last.q.blockCols} keys (the paper’s Algorithm 1: B_c = ⌈M/4d⌉ keys, B_r = min(⌈M/4d⌉, d) queries).`,
    text: [
      `Footprint (what stays in slow memory), T = ${prev.t} → ${T}: the standard computation ${f(figures.footprintStandardMiB, 1)} MiB, ×${f(figures.footprintStandardRatio, 2)} per doubling (S and W are T × T); the tiled one ${f(figures.footprintTiledMiB, 1)} MiB, ×${f(figures.footprintTiledRatio, 2)} (Q, K, V, O and two numbers per row): linear in T.`,
      `Bytes moved at T = ${T}: standard ${f(figures.trafficStandardMiB, 0)} MiB; tiled with the key blocks as the outer loop (the paper’s Algorithm 1, FlashAttention-1) ${f(figures.trafficKvOuterMiB, 0)} MiB; tiled with the query blocks outer (FlashAttention-2’s order, and this core’s tiled kernel) ${f(figures.trafficTiledMiB, 0)} MiB. Per doubling of T: ×${f(figures.trafficStandardRatio, 2)}, ×${f(figures.trafficKvOuterRatio, 2)} and ×${f(figures.trafficTiledRatio, 2)}: all still quadratic.`,
      `The constant: key blocks outer re-read Q, O and the two row statistics once per key block, about 12·T²·d²/M floats (this count is ${f(figures.kvOuterOverModel, 2)} times that); query blocks outer re-read K and V once per query block, about 8·T²·d²/M while a query block is under d rows${capped ? `; at this M it is capped at d rows, so K and V are re-read 2·T² floats’ worth (${f(figures.qOuterOverModel, 2)} times 8·T²·d²/M)` : ` (this count is ${f(figures.qOuterOverModel, 2)} times that)`}.`,
      `More on-chip memory: with key blocks outer the bytes keep falling, ${f(figures.kvOuterSmallMiB, 0)} MiB at ${SMALL_KIB} KiB to ${f(figures.kvOuterLargeMiB, 0)} MiB at ${LARGE_KIB} KiB. With query blocks outer they fall from ${f(figures.qOuterSmallMiB, 0)} MiB to ${f(figures.qOuterLargeMiB, 0)} MiB and stop at ${capKiB} KiB (4d² floats), because Algorithm 1 caps a query block at d = ${d} rows${capped ? ' (as at this M)' : ''}: a consequence of pairing that loop order with Algorithm 1’s block sizes in this model, not something either paper states.`,
      `Where lesson 2 simplifies: it says “what became linear is the memory traffic”. In the paper’s own IO model what became linear is the memory the computation keeps (the footprint); the traffic stays quadratic in T, Θ(T²d²/M) (Dao et al. 2022, Theorem 2). It beats the standard computation’s 4·T² floats of S and W traffic only when M is large next to d²: here key blocks outer move ${compared(figures.trafficKvOuterMiB, figures.trafficStandardMiB)} and query blocks outer ${compared(figures.trafficTiledMiB, figures.trafficStandardMiB)} than the standard computation.`,
    ],
    figures,
    table: {
      caption: `Bytes as T doubles (d_k = ${d}, one head, no mask, float32; tiled with M = ${sramKiB} KiB)`,
      // Bytes moved first: a phone shows these columns and scrolls to the footprints.
      head: [
        'T',
        'moved: standard',
        'moved: tiled, key blocks outer (FA-1)',
        'moved: tiled, query blocks outer (FA-2 order)',
        'moved × prev. T: standard / key outer / query outer',
        'footprint: standard',
        'footprint: tiled',
      ],
      rows: sweep.map((r, i) => ({
        cells: [
          String(r.t),
          mibText(r.std.slowMemoryBytes),
          mibText(r.kv.slowMemoryBytes),
          mibText(r.q.slowMemoryBytes),
          i
            ? `${ratio(r.std.slowMemoryBytes, sweep[i - 1].std.slowMemoryBytes)} / ${ratio(r.kv.slowMemoryBytes, sweep[i - 1].kv.slowMemoryBytes)} / ${ratio(r.q.slowMemoryBytes, sweep[i - 1].q.slowMemoryBytes)}`
            : '',
          mibText(r.std.footprintBytes),
          mibText(r.q.footprintBytes),
        ],
        data: {
          t: r.t,
          stdFootprint: r.std.footprintBytes,
          tiledFootprint: r.q.footprintBytes,
          stdMoved: r.std.slowMemoryBytes,
          tiledMoved: r.q.slowMemoryBytes,
          kvOuterMoved: r.kv.slowMemoryBytes,
        },
      })),
    },
  };
}

/** "1.31× fewer bytes" or "3.04× more bytes": a against b. */
const compared = (a: number, b: number): string =>
  a <= b ? `${f(b / a, 2)}× fewer bytes` : `${f(a / b, 2)}× more bytes`;

const mibText = (b: number): string => `${(b / 2 ** 20).toFixed(b < 10 * 2 ** 20 ? 2 : 1)} MiB`;

// ---------- one card per variant ----------
const VARIANT_CARDS = {
  softmax1: {
    title: 'softmax1 (off by one)',
    lead: 'softmax1 lets a row give part of its weight to “nothing”, so its weights may sum to less than 1.',
    line: 'W = softmax(S)',
    verb: 'Replaces',
    what: 'adds a virtual key of score 0 and value 0, so a row can put weight on “nothing”',
    costs: 'one more term per row; same T² work',
    opts: { normalizer: 'softmax1' },
  },
  sigmoid: {
    title: 'Sigmoid attention',
    lead: 'Sigmoid attention weighs each key on its own, so a row’s weights need not sum to 1.',
    line: 'W = softmax(S)',
    verb: 'Replaces',
    what: 'weights each key on its own (σ(s − ln T)), with no normalization across the row',
    costs: 'no row maximum or sum to wait for; same T² work',
    opts: { normalizer: 'sigmoid' },
  },
  relu: {
    title: 'ReLU attention',
    lead: 'ReLU attention keeps the positive scores, divided by T, and gives every negative score weight 0.',
    line: 'W = softmax(S)',
    verb: 'Replaces',
    what: 'divides max(s, 0) by T: negative scores get weight 0 exactly and rows are not normalized',
    costs: 'no exp at all; same T² work',
    opts: { normalizer: 'relu' },
  },
  linear: {
    title: 'Linear attention',
    lead: 'Linear attention compares queries and keys through positive features instead of exp, which lets it keep running sums instead of a T × T matrix.',
    line: 'S = (Q @ K.T) * scale and W = softmax(S)',
    verb: 'Replaces',
    what: 'uses φ(q)·φ(k), φ = elu + 1, in place of exp(q·k) and divides each row by its sum',
    costs: 'the causal prefix-sum form never builds T × T: memory and work linear in T',
    opts: { normalizer: 'linear' },
  },
  rope: {
    title: 'RoPE',
    lead: 'RoPE turns each query and key by an angle that grows with its position, so a score depends on how far apart the two tokens are.',
    line: 'Q, K = rope(Q), rope(K)',
    verb: 'Adds',
    what: 'rotates pairs of coordinates of q and k by their positions, so q·k depends on i − j',
    costs: 'one rotation per q and k row: T·d_k, no T² term',
    opts: { position: 'rope' },
  },
  alibi: {
    title: 'ALiBi',
    lead: 'ALiBi lowers each score in proportion to the distance between the query and the key.',
    line: 'S = S − m_h·|i − j|',
    verb: 'Adds',
    what: 'subtracts a per-head slope times the distance from each score',
    costs: 'one add per score: T² adds, no parameters',
    opts: { position: 'alibi' },
  },
  qknorm: {
    title: 'QK-norm (scale 10)',
    lead: 'QK-norm scales every query and key to length 1, so each score is a cosine between −1 and 1.',
    line: 'Q, K = Q/‖Q‖, K/‖K‖',
    verb: 'Adds',
    what: 'makes every score a cosine in [−1, 1]: with 1/√d_k the scores stay small and the rows flatten (the mean entropy rises, below), so it needs a larger scale such as 10',
    costs: 'one norm per q and k row: T·d_k',
    opts: { qkNorm: true },
  },
} as const;
export type VariantCardId = keyof typeof VARIANT_CARDS;
export const VARIANT_CARD_IDS = Object.keys(VARIANT_CARDS) as VariantCardId[];

function meanOf(e: ArrayLike<number>): number {
  let s = 0,
    n = 0;
  for (let i = 0; i < e.length; i++)
    if (!Number.isNaN(e[i])) {
      s += e[i];
      n++;
    }
  return n ? s / n : NaN;
}

/** The card's variant alone against the lessons' standard computation, on the head drawn (the
 *  same numbers as the badges above when line 9 or the position line shows this variant). */
export function variantCard(core: AttnCore, m: RunModel, id: VariantCardId, head = 0): CardResult {
  const c = VARIANT_CARDS[id];
  const ex = exampleFor(core, m);
  const T = ex.t,
    H = ex.heads,
    h = clampHead(head, H);
  const std = runModel(core, ex, standardModel(m), {});
  const chg = runModel(core, ex, m, c.opts);
  const part = (a: Arr, width: number) => a.subarray(h * T * width, (h + 1) * T * width);
  const d = maxAbsDelta(part(std.weights!, T), part(chg.weights!, T));
  let sumErr = 0,
    rowSumMin = Infinity,
    rowSumMax = -Infinity;
  for (const s of part(chg.rowSums!, 1))
    if (!Number.isNaN(s)) {
      sumErr = Math.max(sumErr, Math.abs(s - 1));
      rowSumMin = Math.min(rowSumMin, s);
      rowSumMax = Math.max(rowSumMax, s);
    }
  // Entropy is a property of a probability distribution: softmax's rows and linear's (weights
  // ≥ 0 divided by their sum). softmax1, sigmoid and relu rows need not sum to 1.
  const normalizer = 'normalizer' in c.opts ? c.opts.normalizer : 'softmax';
  const distribution = normalizer === 'softmax' || normalizer === 'linear';
  const figures: Record<string, number> = {
    head: h,
    maxDeltaWeights: d,
    maxRowSumError: sumErr,
    rowSumMin,
    rowSumMax,
    entropyStandard: meanOf(part(std.entropy, 1)),
  };
  const mask = m.causal || m.padding.length || m.window ? 'the mask as drawn' : 'no mask';
  const text = [`${c.verb} the line ${c.line}: it ${c.what}. Cost: ${c.costs}.`];
  if (distribution) {
    figures.entropyChanged = meanOf(part(chg.entropy, 1));
    text.push(
      `Against the standard weights: max |Δw| ${f(d)}; rows still sum to 1 (max |Σ − 1| ${f(sumErr)}); mean row entropy ${f(figures.entropyStandard)} → ${f(figures.entropyChanged)} nats (0 when a row puts all its weight on one key, higher the more evenly it spreads it).`,
    );
  } else {
    text.push(
      `Against the standard weights: max |Δw| ${f(d)}. Its rows sum to between ${f(rowSumMin)} and ${f(rowSumMax)} (max |Σ − 1| ${f(sumErr)}), so they are not probability distributions and an entropy would mean nothing here; the standard rows' mean entropy is ${f(figures.entropyStandard)} nats.`,
    );
  }
  if (id === 'qknorm') {
    const ten = runModel(core, ex, { ...m, scale: 10 }, c.opts);
    figures.entropyScale10 = meanOf(part(ten.entropy, 1));
    text.push(`With scale 10 instead of the scale drawn the mean entropy is ${f(figures.entropyScale10)} nats.`);
  }
  return {
    id,
    title: c.title,
    line: c.line,
    lead: c.lead,
    measured: `${headWords(h, H)}, ${exampleWords(m, T)}, ${mask}, ${scaleWords(m.scale)}; only this variant, against the standard computation (softmax, scale 1/√d_k, −∞ before).`,
    text,
    figures,
  };
}

/** The card for an id (the shift card needs its slider and precision, the FlashAttention card its
 *  on-chip memory; the cards on the example measure the head drawn). */
export function runCard(
  core: AttnCore,
  id: ExperimentId,
  m: RunModel,
  logit: number,
  precision: Precision,
  sramKiB = 64,
  head = 0,
): CardResult {
  switch (id) {
    case 'shift':
      return shiftCard(core, logit, precision);
    case 'after':
      return afterCard(core, m, head);
    case 'shuffle':
      return shuffleCard(core, m);
    case 'amplify':
      return amplifyCard(core, m, head);
    case 'loop':
      return loopCard(core, m);
    case 'sqrtdk':
      return sqrtCard(core);
    case 'cost':
      return costCard();
    case 'flash':
      return flashCard(core, sramKiB);
    default:
      return variantCard(core, m, id, head);
  }
}

export const CARD_TITLES: Record<ExperimentId, string> = {
  shift: 'Max shift off',
  after: '−∞ before vs zero after',
  shuffle: 'Shuffle the keys and values',
  amplify: 'Cannot amplify',
  loop: 'Heads as a loop',
  sqrtdk: 'Why √d_k, measured',
  cost: 'Does each doubling quadruple the time?',
  flash: 'What FlashAttention makes linear',
  ...(Object.fromEntries(VARIANT_CARD_IDS.map((k) => [k, VARIANT_CARDS[k].title])) as Record<VariantCardId, string>),
};
/** What opening a variant card sets in the code lines (the variant itself). */
export const CARD_VARIANT: Partial<Record<ExperimentId, Record<string, unknown>>> = Object.fromEntries(
  VARIANT_CARD_IDS.map((k) => [k, VARIANT_CARDS[k].opts]),
);
