// The experiment cards' runs, without DOM. Each card runs the core and states only numbers its
// run measured: `figures` holds them by name (the browser test reads them from the page), and the
// card's sentences are written from them. Input data is made here (a row of chosen logits, a
// seeded permutation of keys and values); every attention result is the core's.
import type { AttnCore, CoreAttentionOptions, Precision } from '../wasm/attn-core';
import { exampleFor, maskOptions, maxAbsDelta, runModel, scaleOf, type Arr, type RunModel } from './run';
import type { ExperimentId } from './experiment-ids';

export interface CardResult {
  id: ExperimentId;
  title: string;
  /** Which line of the computation it replaces or probes. */
  line: string;
  /** Sentences with the run's numbers in them. */
  text: string[];
  /** The numbers those sentences state, by name (what the tests check). */
  figures: Record<string, number>;
  /** A table of the run's numbers (the FlashAttention card's bytes per T); `data` holds each row's
   *  exact values for the tests. */
  table?: { caption: string; head: string[]; rows: { cells: string[]; data: Record<string, number> }[] };
}

const f = (x: number, d = 3): string => (Number.isNaN(x) ? 'NaN' : x === 0 ? '0' : Math.abs(x) < 1e-3 || Math.abs(x) >= 1e5 ? x.toExponential(2) : x.toFixed(d));

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
const rowIsNaN = (core: AttnCore, logit: number, p: Precision, shift: boolean) => Number.isNaN(logitRow(core, logit, p, shift).rowSums![0]);

/** The smallest largest-logit that turns the row NaN with the shift off, found by bisection on the
 *  core's answers (the row is finite at lo and NaN at hi). */
export function overflowThreshold(core: AttnCore, p: Precision): number {
  let lo = 1, hi = 2048;
  if (!rowIsNaN(core, hi, p, false)) return Infinity;
  for (let i = 0; i < 60 && hi - lo > 1e-9 * hi; i++) {
    const mid = (lo + hi) / 2;
    if (rowIsNaN(core, mid, p, false)) hi = mid;
    else lo = mid;
  }
  return (lo + hi) / 2;
}

export function shiftCard(core: AttnCore, logit: number, precision: Precision): CardResult {
  const th = { float16: overflowThreshold(core, 'float16'), float32: overflowThreshold(core, 'float32'), float64: overflowThreshold(core, 'float64') };
  const off = rowIsNaN(core, logit, precision, false);
  const on = rowIsNaN(core, logit, precision, true);
  return {
    id: 'shift', title: 'Max shift off', line: 'S = S − S.max(−1)',
    text: [
      `Largest logit ${f(logit, 2)} in ${precision}: with the shift off the row is ${off ? 'NaN (exp overflowed to ∞, and ∞/∞ is NaN)' : 'finite'}; with the shift on it is ${on ? 'NaN' : 'finite'}.`,
      `Measured here, the row first turns NaN above ${f(th.float16, 2)} in float16, ${f(th.float32, 2)} in float32 and ${f(th.float64, 2)} in float64: the logarithm of each format's largest number.`,
    ],
    figures: { logit, thresholdF16: th.float16, thresholdF32: th.float32, thresholdF64: th.float64, nanShiftOff: off ? 1 : 0, nanShiftOn: on ? 1 : 0 },
  };
}

// ---------- −∞ before vs zero after ----------
export function afterCard(core: AttnCore, m: RunModel): CardResult {
  const mm = { ...m, causal: true };
  const ex = exampleFor(core, mm);
  const T = ex.t, H = ex.heads;
  const before = runModel(core, ex, mm, {});
  const after = runModel(core, ex, mm, { maskMode: 'after' });
  let minSum = Infinity;
  for (const s of after.rowSums!) minSum = Math.min(minSum, s);
  const norm = (o: Arr, dv: number) => {
    let total = 0;
    for (let r = 0; r < H * T; r++) {
      let s = 0;
      for (let c = 0; c < dv; c++) s += o[r * dv + c] ** 2;
      total += Math.sqrt(s);
    }
    return total / (H * T);
  };
  const nb = norm(before.headOutputs, before.dv), na = norm(after.headOutputs, after.dv);
  const sb = runModel(core, ex, mm, { normalizer: 'sigmoid' });
  const sa = runModel(core, ex, mm, { normalizer: 'sigmoid', maskMode: 'after' });
  const sigDelta = maxAbsDelta(sb.weights!, sa.weights!);
  return {
    id: 'after', title: '−∞ before vs zero after', line: 'S = where(allowed, S, fill)',
    text: [
      `Zeroing the masked weights after the softmax (causal mask, ${T} tokens): the smallest row sum is ${f(minSum)} instead of 1, and the mean output-row norm falls from ${f(nb)} to ${f(na)} — every output is quietly scaled down.`,
      `Sigmoid normalizes nothing across the row, so zeroing after is the same computation: max |Δw| between before and after is ${f(sigDelta)}.`,
    ],
    figures: { minRowSumAfter: minSum, meanNormBefore: nb, meanNormAfter: na, sigmoidMaxDelta: sigDelta },
  };
}

// ---------- shuffle the keys and values ----------
export function shuffleCard(core: AttnCore, m: RunModel, seed = 7): CardResult {
  const ex = exampleFor(core, m);
  const r = runModel(core, ex, { ...m, padding: [] }, {});
  const T = ex.t, H = ex.heads, dk = r.dk, dv = r.dv, kvH = r.kvHeads;
  const perm = permutation(T, seed);
  // Permute each K/V head's rows (keys are rows of every head's block).
  const pk = new Float32Array(r.k.length), pv = new Float32Array(r.v.length);
  for (let h = 0; h < kvH; h++) {
    pk.set(permuteRows(r.k.subarray(h * T * dk, (h + 1) * T * dk), perm, dk), h * T * dk);
    pv.set(permuteRows(r.v.subarray(h * T * dv, (h + 1) * T * dv), perm, dv), h * T * dv);
  }
  const opts: CoreAttentionOptions = { heads: H, kvHeads: kvH, tq: T, tk: T, dk, dv, scale: scaleOf(m) };
  const run = (k: Float32Array, v: Float32Array, extra: Partial<CoreAttentionOptions>) => core.attention(r.q, k, v, { ...opts, ...extra }).output;
  const none = maxAbsDelta(run(r.k, r.v, {}), run(pk, pv, {}));
  const rope = dk % 2 === 0 ? maxAbsDelta(run(r.k, r.v, { position: 'rope' }), run(pk, pv, { position: 'rope' })) : NaN;
  const alibi = maxAbsDelta(run(r.k, r.v, { position: 'alibi' }), run(pk, pv, { position: 'alibi' }));
  const causal = maxAbsDelta(run(r.k, r.v, { causal: true }), run(pk, pv, { causal: true }));
  return {
    id: 'shuffle', title: 'Shuffle the keys and values', line: 'O = W @ V',
    text: [
      `K and V rows permuted together (seed ${seed}), no mask: max |Δ output| = ${f(none)}${none === 0 ? '' : ' (float32 rounding: the same sum in another order)'}. The weights' columns move with the keys and the weighted sum is the same sum in another order: attention has no notion of order by itself.`,
      `With RoPE max |Δ| = ${f(rope)}, with ALiBi ${f(alibi)}: both make a score depend on where a key sits, so moving a key changes its score. A causal mask that is not permuted with the keys lets each query see a different set of them: ${f(causal)}.`,
    ],
    figures: { seed, maxDeltaNone: none, maxDeltaRope: rope, maxDeltaAlibi: alibi, maxDeltaCausal: causal },
  };
}

// ---------- cannot amplify ----------
export function amplifyCard(core: AttnCore, m: RunModel): CardResult {
  const ex = exampleFor(core, m);
  const mm = { ...m, scale: 'none' as const };
  const measure = (normalizer: 'softmax' | 'softmax1' | 'sigmoid' | 'relu') => {
    const r = runModel(core, ex, mm, { normalizer });
    const allowed = core.allowedMask({ t: ex.t, ...maskOptions(mm, ex.t) });
    const T = ex.t, dv = r.dv;
    let viol = 0, maxSum = -Infinity, minSum = Infinity;
    for (let h = 0; h < ex.heads; h++) {
      const kvh = Math.floor(h / (ex.heads / r.kvHeads));
      for (let i = 0; i < T; i++) {
        const s = r.rowSums![h * T + i];
        if (Number.isNaN(s)) continue;
        maxSum = Math.max(maxSum, s);
        minSum = Math.min(minSum, s);
        for (let c = 0; c < dv; c++) {
          let lo = Infinity, hi = -Infinity;
          for (let j = 0; j < T; j++) if (allowed[i * T + j]) {
            const x = r.v[(kvh * T + j) * dv + c];
            lo = Math.min(lo, x);
            hi = Math.max(hi, x);
          }
          if (lo > hi) continue;
          const o = r.headOutputs[(h * T + i) * dv + c];
          viol = Math.max(viol, o - hi, lo - o);
        }
      }
    }
    return { viol, maxSum, minSum };
  };
  const sm = measure('softmax'), s1 = measure('softmax1'), sg = measure('sigmoid'), rl = measure('relu');
  return {
    id: 'amplify', title: 'Cannot amplify', line: 'W = softmax(S)',
    text: [
      `Softmax weights are ≥ 0 and sum to 1, so each output is an average of its values: largest step outside the values' range ${f(sm.viol)}.`,
      `Sigmoid rows sum up to ${f(sg.maxSum)} and relu rows up to ${f(rl.maxSum)}, so their outputs can leave the range (by up to ${f(sg.viol)} and ${f(rl.viol)}). Softmax1's rows sum to as little as ${f(s1.minSum)}: it pulls outputs toward 0.`,
    ],
    figures: { softmaxViolation: sm.viol, sigmoidMaxRowSum: sg.maxSum, reluMaxRowSum: rl.maxSum, sigmoidViolation: sg.viol, reluViolation: rl.viol, softmax1MinRowSum: s1.minSum },
  };
}

// ---------- heads as a loop ----------
export function loopCard(core: AttnCore, m: RunModel): CardResult {
  const ex = exampleFor(core, m);
  const r = runModel(core, ex, m, {});
  const T = ex.t, H = ex.heads, dk = r.dk, dv = r.dv;
  const group = H / r.kvHeads;
  const looped = new Float32Array(H * T * dv);
  for (let h = 0; h < H; h++) {
    const kvh = Math.floor(h / group);
    const o = core.attention(r.q.slice(h * T * dk, (h + 1) * T * dk), r.k.slice(kvh * T * dk, (kvh + 1) * T * dk), r.v.slice(kvh * T * dv, (kvh + 1) * T * dv),
      { heads: 1, tq: T, tk: T, dk, dv, ...maskOptions(m, T), scale: scaleOf(m), maskFill: m.fill }).output;
    looped.set(o, h * T * dv);
  }
  const d = maxAbsDelta(looped, r.headOutputs);
  return {
    id: 'loop', title: 'Heads as a loop', line: 'Q, K, V = X @ W_q, X @ W_k, X @ W_v',
    text: [`${H} single-head calls, one per head on its slice of Q, K and V, against one packed multi-head call: max |Δ output| = ${f(d)}${d === 0 ? ' (the same bits)' : ', float32 rounding (the packed call may sum in another order)'}. The reshape is the loop, done at once.`],
    figures: { heads: H, maxDelta: d },
  };
}

// ---------- why √d_k ----------
export const SQRT_DKS = [1, 4, 16, 64, 256, 1024];
export function sqrtCard(core: AttnCore, seed = 3): CardResult {
  const n = 64;
  const std: number[] = [];
  for (const dk of SQRT_DKS) {
    // Unit-variance vectors: rows of the core's N(0, 1) example input X (d_model = d_k).
    const a = core.example('random', { seed, t: n, dModel: dk, heads: 1, dk: 1, init: 'normal' }).x;
    const b = core.example('random', { seed: seed + 1, t: n, dModel: dk, heads: 1, dk: 1, init: 'normal' }).x;
    const s = core.attention(a, b, new Float32Array(n), { heads: 1, tq: n, tk: n, dk, dv: 1, scale: 1, returnScores: true }).scores!;
    let mean = 0;
    for (const x of s) mean += x;
    mean /= s.length;
    let v = 0;
    for (const x of s) v += (x - mean) ** 2;
    std.push(Math.sqrt(v / s.length));
  }
  const at = (dk: number) => std[SQRT_DKS.indexOf(dk)];
  return {
    id: 'sqrtdk', title: 'Why √d_k, measured', line: 'S = (Q @ K.T) * scale',
    text: [
      `Standard deviation of q·k for unit-variance vectors (${n}×${n} pairs each): ${SQRT_DKS.map((d, i) => `${f(std[i], 2)} at d_k = ${d}`).join(', ')}.`,
      `At d_k = 64 the spread is ${f(at(64) / at(1), 2)}× that at d_k = 1 (√64 = 8): dividing by √d_k brings it back to about ${f(at(64) / 8, 2)}.`,
    ],
    figures: Object.fromEntries(SQRT_DKS.map((d, i) => [`std${d}`, std[i]])),
  };
}

// ---------- what FlashAttention makes linear ----------
// Every byte count is the core's (core.traffic, the IO model of Dao et al. 2022, checked in
// tests/cpp/test_traffic.cpp against a simulation of both algorithms' loops).
export const FLASH_TS = [512, 1024, 2048, 4096, 8192];
/** The head width the card uses (the lesson's d_k). */
export const FLASH_D = 64;
/** The smallest on-chip memory the card offers (KiB): the chosen size is compared with it. */
const SMALL_KIB = 16;
export function flashCard(core: AttnCore, sramKiB = 64): CardResult {
  const d = FLASH_D, sramBytes = sramKiB * 1024;
  const at = (t: number, kernel: 'naive' | 'tiled', bytes = sramBytes) =>
    core.traffic({ tq: t, tk: t, dk: d, dv: d, heads: 1, causal: false, kernel, sramBytes: bytes });
  const sweep = FLASH_TS.map((t) => ({ t, std: at(t, 'naive'), tiled: at(t, 'tiled') }));
  const { std, tiled } = sweep[sweep.length - 1];
  const { std: stdPrev, tiled: tiledPrev, t: prev } = sweep[sweep.length - 2];
  const last = FLASH_TS[FLASH_TS.length - 1];
  const small = at(last, 'tiled', SMALL_KIB * 1024);
  // Algorithm 1's query blocks stop growing at d rows (B_r = min(⌈M/4d⌉, d)): from M = 4d² floats on.
  const capKiB = (4 * d * d * 4) / 1024;
  const atCap = at(last, 'tiled', capKiB * 1024);
  const mib = (b: number) => b / 2 ** 20;
  const figures: Record<string, number> = {
    sramKiB,
    footprintStandardRatio: std.footprintBytes / stdPrev.footprintBytes,
    footprintTiledRatio: tiled.footprintBytes / tiledPrev.footprintBytes,
    trafficStandardRatio: std.slowMemoryBytes / stdPrev.slowMemoryBytes,
    trafficTiledRatio: tiled.slowMemoryBytes / tiledPrev.slowMemoryBytes,
    footprintStandardMiB: mib(std.footprintBytes),
    footprintTiledMiB: mib(tiled.footprintBytes),
    trafficStandardMiB: mib(std.slowMemoryBytes),
    trafficTiledMiB: mib(tiled.slowMemoryBytes),
    trafficSmallSramRatio: small.slowMemoryBytes / tiled.slowMemoryBytes,
    trafficCapRatio: tiled.slowMemoryBytes / atCap.slowMemoryBytes,
    blockRows: tiled.blockRows,
    blockCols: tiled.blockCols,
  };
  const sizes = `M = ${sramKiB} KiB on chip (${sramBytes / 4} floats): blocks of ${tiled.blockRows} query rows × ${tiled.blockCols} keys`;
  const byM = sramKiB === SMALL_KIB
    ? `Choose more on-chip memory above and the tiled traffic falls in proportion to it, up to ${capKiB} KiB.`
    : `With ${SMALL_KIB} KiB instead of ${sramKiB} KiB it would move ×${f(figures.trafficSmallSramRatio, 2)} as much.`;
  const cap = tiled.blockRows === d
    ? ` From 4d² floats (${capKiB} KiB at d = ${d}) on, a query block stops growing at d = ${d} rows (B_r = min(⌈M/4d⌉, d) in the paper’s Algorithm 1), so more on-chip memory moves no fewer bytes in this model (×${f(figures.trafficCapRatio, 2)} the traffic at ${capKiB} KiB).`
    : '';
  const ratio = (a: number, b: number) => (b ? `×${f(a / b, 2)}` : '');
  return {
    id: 'flash', title: 'What FlashAttention makes linear', line: 'S = (Q @ K.T) * scale … O = W @ V (tiled: S and W stay on chip)',
    text: [
      `Footprint (what stays in slow memory), T = ${prev} → ${last}, d_k = ${d}: the standard computation ${f(figures.footprintStandardMiB, 1)} MiB, ×${f(figures.footprintStandardRatio, 2)} per doubling (S and W are T × T); the tiled one ${f(figures.footprintTiledMiB, 1)} MiB, ×${f(figures.footprintTiledRatio, 2)} (Q, K, V, O and two numbers per row): linear in T.`,
      `Traffic to and from slow memory with ${sizes}: standard ${f(figures.trafficStandardMiB, 0)} MiB (×${f(figures.trafficStandardRatio, 2)} per doubling), tiled ${f(figures.trafficTiledMiB, 0)} MiB (×${f(figures.trafficTiledRatio, 2)}): still quadratic. The tiled kernel reads K and V once per block of ${tiled.blockRows} query rows, so its traffic is about T²·d²/M. ${byM}${cap}`,
      `So what became linear is the footprint, not the traffic: the footprint is linear in T, while the traffic is Θ(N²d²/M) (Dao et al. 2022, Theorem 2) — quadratic, divided by the on-chip memory. Here it is ${f(figures.trafficStandardMiB / figures.trafficTiledMiB, 2)}× less than the standard computation’s, because S and W never go to slow memory.`,
    ],
    figures,
    table: {
      caption: `Bytes as T doubles (d_k = ${d}, one head, no mask, float32; tiled with M = ${sramKiB} KiB)`,
      // Bytes moved first: a phone shows these columns and scrolls to the footprints.
      head: ['T', 'moved: standard', 'moved: tiled', 'moved × prev. T: standard / tiled', 'footprint: standard', 'footprint: tiled'],
      rows: sweep.map((r, i) => ({
        cells: [String(r.t), mibText(r.std.slowMemoryBytes), mibText(r.tiled.slowMemoryBytes), i ? `${ratio(r.std.slowMemoryBytes, sweep[i - 1].std.slowMemoryBytes)} / ${ratio(r.tiled.slowMemoryBytes, sweep[i - 1].tiled.slowMemoryBytes)}` : '', mibText(r.std.footprintBytes), mibText(r.tiled.footprintBytes)],
        data: { t: r.t, stdFootprint: r.std.footprintBytes, tiledFootprint: r.tiled.footprintBytes, stdMoved: r.std.slowMemoryBytes, tiledMoved: r.tiled.slowMemoryBytes },
      })),
    },
  };
}

const mibText = (b: number): string => `${(b / 2 ** 20).toFixed(b < 10 * 2 ** 20 ? 2 : 1)} MiB`;

// ---------- one card per variant ----------
const VARIANT_CARDS = {
  softmax1: { title: 'softmax1 (off by one)', line: 'W = softmax(S)', verb: 'Replaces', what: 'adds a virtual key of score 0 and value 0, so a row can put weight on “nothing”', costs: 'one more term per row; same T² work', opts: { normalizer: 'softmax1' } },
  sigmoid: { title: 'Sigmoid attention', line: 'W = softmax(S)', verb: 'Replaces', what: 'weights each key on its own (σ(s − ln T)), with no normalization across the row', costs: 'no row maximum or sum to wait for; same T² work', opts: { normalizer: 'sigmoid' } },
  relu: { title: 'ReLU attention', line: 'W = softmax(S)', verb: 'Replaces', what: 'divides max(s, 0) by T: negative scores get weight 0 exactly and rows are not normalized', costs: 'no exp at all; same T² work', opts: { normalizer: 'relu' } },
  linear: { title: 'Linear attention', line: 'S = (Q @ K.T) * scale and W = softmax(S)', verb: 'Replaces', what: 'uses φ(q)·φ(k), φ = elu + 1, in place of exp(q·k) and divides each row by its sum', costs: 'the causal prefix-sum form never builds T × T: memory and work linear in T', opts: { normalizer: 'linear' } },
  rope: { title: 'RoPE', line: 'Q, K = rope(Q), rope(K)', verb: 'Adds', what: 'rotates pairs of coordinates of q and k by their positions, so q·k depends on i − j', costs: 'one rotation per q and k row: T·d_k, no T² term', opts: { position: 'rope' } },
  alibi: { title: 'ALiBi', line: 'S = S − m_h·|i − j|', verb: 'Adds', what: 'subtracts a per-head slope times the distance from each score', costs: 'one add per score: T² adds, no parameters', opts: { position: 'alibi' } },
  qknorm: { title: 'QK-norm (scale 10)', line: 'Q, K = Q/‖Q‖, K/‖K‖', verb: 'Adds', what: 'makes every score a cosine in [−1, 1]: with 1/√d_k the scores stay small and the rows flatten (the mean entropy rises, below), so it needs a larger scale such as 10', costs: 'one norm per q and k row: T·d_k', opts: { qkNorm: true } },
} as const;
export type VariantCardId = keyof typeof VARIANT_CARDS;
export const VARIANT_CARD_IDS = Object.keys(VARIANT_CARDS) as VariantCardId[];

function meanEntropy(e: Arr): number {
  let s = 0, n = 0;
  for (const x of e) if (!Number.isNaN(x)) {
    s += x;
    n++;
  }
  return n ? s / n : NaN;
}

export function variantCard(core: AttnCore, m: RunModel, id: VariantCardId): CardResult {
  const c = VARIANT_CARDS[id];
  const ex = exampleFor(core, m);
  const std = runModel(core, ex, m, {});
  const chg = runModel(core, ex, m, c.opts);
  const d = maxAbsDelta(std.weights!, chg.weights!);
  let sumErr = 0;
  for (const s of chg.rowSums!) if (!Number.isNaN(s)) sumErr = Math.max(sumErr, Math.abs(s - 1));
  const figures: Record<string, number> = { maxDeltaWeights: d, maxRowSumError: sumErr, entropyStandard: meanEntropy(std.entropy), entropyChanged: meanEntropy(chg.entropy) };
  const text = [
    `${c.verb} the line ${c.line}: it ${c.what}. Cost: ${c.costs}.`,
    `On this example: max |Δw| against softmax ${f(d)}, max |Σ − 1| ${f(sumErr)}, mean row entropy ${f(figures.entropyStandard)} → ${f(figures.entropyChanged)} nats.`,
  ];
  if (id === 'qknorm') {
    const ten = runModel(core, ex, { ...m, scale: 10 }, c.opts);
    figures.entropyScale10 = meanEntropy(ten.entropy);
    text.push(`With scale 10 instead of 1/√d_k the mean entropy is ${f(figures.entropyScale10)} nats.`);
  }
  return { id, title: c.title, line: c.line, text, figures };
}

/** The card for an id (the shift card needs its slider and precision, the FlashAttention card its on-chip memory). */
export function runCard(core: AttnCore, id: ExperimentId, m: RunModel, logit: number, precision: Precision, sramKiB = 64): CardResult {
  switch (id) {
    case 'shift': return shiftCard(core, logit, precision);
    case 'after': return afterCard(core, m);
    case 'shuffle': return shuffleCard(core, m);
    case 'amplify': return amplifyCard(core, m);
    case 'loop': return loopCard(core, m);
    case 'sqrtdk': return sqrtCard(core);
    case 'flash': return flashCard(core, sramKiB);
    default: return variantCard(core, m, id);
  }
}

export const CARD_TITLES: Record<ExperimentId, string> = {
  shift: 'Max shift off', after: '−∞ before vs zero after', shuffle: 'Shuffle the keys and values', amplify: 'Cannot amplify', loop: 'Heads as a loop', sqrtdk: 'Why √d_k, measured', flash: 'What FlashAttention makes linear',
  ...Object.fromEntries(VARIANT_CARD_IDS.map((k) => [k, VARIANT_CARDS[k].title])) as Record<VariantCardId, string>,
};
/** What opening a variant card sets in the code lines (the variant itself). */
export const CARD_VARIANT: Partial<Record<ExperimentId, Record<string, unknown>>> = Object.fromEntries(VARIANT_CARD_IDS.map((k) => [k, VARIANT_CARDS[k].opts]));
