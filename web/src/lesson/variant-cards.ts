// One card per attention variant (softmax1, sigmoid, relu, linear, RoPE, ALiBi, QK-norm) against the standard.
import type { AttnCore } from '../wasm/attn-core';
import { exampleFor, maxAbsDelta, runModel, standardModel, type Arr, type RunModel } from './run';
import { clampHead, exampleWords, f, headWords, scaleWords, type CardResult } from './card-format';

// ---------- one card per variant ----------
export const VARIANT_CARDS = {
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
