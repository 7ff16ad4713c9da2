// The cards run on the drawn example: max shift, −∞ before vs zero after, shuffle, amplify, heads as a loop.
import type { AttnCore, CoreAttentionOptions, Precision } from '../wasm/attn-core';
import { exampleFor, maskOptions, maxAbsDelta, runModel, scaleOf, type Arr, type RunModel } from './run';
import { clampHead, exampleWords, f, headWords, scaleWords, type CardResult } from './card-format';
import { afterSnippet, amplifySnippet, loopSnippet, shiftSnippet, shuffleSnippet } from './card-snippets';

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
    numpy: shiftSnippet(logit, precision),
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
  const kvh = Math.floor(h / (H / before.kvHeads));
  const numpy = afterSnippet(
    `Head ${h + 1} of ${H}, ${exampleWords(m, T)}, ${scaleWords(m.scale)}`,
    rows(before.scores!, T),
    before.v.subarray(kvh * T * before.dv, (kvh + 1) * T * before.dv),
    core.allowedMask({ t: T, ...maskOptions(mm, T) }),
    T,
    before.dv,
  );
  return {
    id: 'after',
    numpy,
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
  const numpy = shuffleSnippet(
    `All ${H} heads, ${exampleWords(m, T)}`,
    r.q,
    r.k,
    r.v,
    H,
    kvH,
    T,
    dk,
    dv,
    scaleOf(m),
    perm,
  );
  return {
    id: 'shuffle',
    numpy,
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
  const base = runModel(core, ex, m, {});
  const kvh = Math.floor(h / (H / base.kvHeads));
  const numpy = amplifySnippet(
    `Head ${h + 1} of ${H}, ${exampleWords(m, T)}, ${scaleWords(m.scale)}`,
    base.scores!.subarray(h * T * T, (h + 1) * T * T),
    base.v.subarray(kvh * T * base.dv, (kvh + 1) * T * base.dv),
    allowed,
    T,
    base.dv,
  );
  return {
    id: 'amplify',
    numpy,
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
  const numpy = loopSnippet(
    `All ${H} heads, ${exampleWords(m, T)}, ${scaleWords(m.scale)}`,
    r.q,
    r.k,
    r.v,
    core.allowedMask({ t: T, ...maskOptions(m, T) }),
    H,
    r.kvHeads,
    T,
    dk,
    dv,
    scaleOf(m),
  );
  return {
    id: 'loop',
    numpy,
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
