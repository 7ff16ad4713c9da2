// One card per attention variant (softmax1, sigmoid, relu, linear, RoPE, ALiBi, QK-norm) against the standard.
import type { AttnCore } from '../wasm/attn-core';
import { exampleFor, maskOptions, maxAbsDelta, runModel, scaleOf, standardModel, type Arr, type RunModel } from './run';
import { clampHead, exampleWords, f, headWords, scaleWords, type CardResult } from './card-format';
import { PY_ENTROPY, PY_SOFTMAX, pyHead, pyScale, type NumpySnippet } from './numpy-snippets';

/** Each variant's lines in NumPy, giving W from Q, K, the mask and the scale (docs/js-api.md). */
const PY_VARIANT: Record<VariantCardId, (h: number, heads: number) => string> = {
  softmax1: () => `S = np.where(allowed, Q @ K.T * scale, -np.inf)
m = np.maximum(S.max(-1, keepdims=True), 0)      # m' = max(0, the row's maximum)
e = np.exp(S - m)
W = e / (np.exp(-m) + e.sum(-1, keepdims=True))  # a virtual key of score 0 and value 0`,
  sigmoid: () => `W = np.where(allowed, 1 / (1 + np.exp(-(Q @ K.T * scale - np.log(T)))), 0)   # sigma(s - ln T)`,
  relu: () => `W = np.where(allowed, np.maximum(Q @ K.T * scale, 0) / T, 0)`,
  linear: () => `def phi(x):                                       # elu + 1: positive features
    return np.where(x > 0, x + 1, np.exp(np.minimum(x, 0)))
A = np.where(allowed, phi(Q) @ phi(K).T, 0)     # no scale
W = A / (A.sum(-1, keepdims=True) + 1e-6)`,
  rope: () => `def rope(X, base=10000.0):                        # turn each pair (2p, 2p+1) by pos * base^(-2p/d)
    T, d = X.shape
    angle = np.arange(T)[:, None] * base ** (-np.arange(0, d, 2) / d)
    c, s = np.cos(angle), np.sin(angle)
    out = X.copy()
    out[:, 0::2] = X[:, 0::2] * c - X[:, 1::2] * s
    out[:, 1::2] = X[:, 0::2] * s + X[:, 1::2] * c
    return out
W = softmax(rope(Q) @ rope(K).T * scale, fill)`,
  alibi: (h, heads) => `H, h = ${heads}, ${h}                                  # this head among the query heads
n = 2 ** int(np.log2(H))                           # Press et al.'s slopes
slopes = [2 ** (-8 * (i + 1) / n) for i in range(n)]
slopes += [2 ** (-8 * (i + 1) / (2 * n)) for i in range(0, 2 * (H - n), 2)]
distance = np.abs(np.arange(T)[:, None] - np.arange(T)[None, :])
W = softmax(Q @ K.T * scale - slopes[h] * distance, fill)`,
  qknorm: () => `def unit(X):                                      # every row to length 1
    return X / np.maximum(np.linalg.norm(X, axis=-1, keepdims=True), 1e-12)
W = softmax(unit(Q) @ unit(K).T * scale, fill)`,
};

function variantSnippet(
  id: VariantCardId,
  words: string,
  r: ReturnType<typeof runModel>,
  h: number,
  T: number,
  heads: number,
  allowed: Uint8Array,
  m: RunModel,
  distribution: boolean,
): NumpySnippet {
  const kvh = Math.floor(h / (heads / r.kvHeads));
  const q = r.q.subarray(h * T * r.dk, (h + 1) * T * r.dk),
    k = r.k.subarray(kvh * T * r.dk, (kvh + 1) * T * r.dk);
  const prints = ['maxDeltaWeights', 'rowSumMin', 'rowSumMax', 'entropyStandard'];
  const lines = [
    'import numpy as np',
    '',
    pyHead(words, q, k, null, allowed, T, r.dk, r.dv),
    `${pyScale(scaleOf(m))}                    # the scale drawn`,
    `fill = ${m.fill === 'finite' ? '-1e9' : '-np.inf'}                      # the fill drawn`,
    PY_SOFTMAX,
    PY_ENTROPY,
    '',
    'W_std = softmax(Q @ K.T / np.sqrt(d_k))          # the standard computation',
    PY_VARIANT[id](h, heads),
    '',
    'print("max |dw| against the standard:", np.nanmax(np.abs(W - W_std)))',
    'print("smallest row sum:", np.nanmin(W.sum(-1)))',
    'print("largest row sum:", np.nanmax(W.sum(-1)))',
    'print("mean row entropy, standard (nats):", np.nanmean(entropy(W_std)))',
  ];
  if (distribution) {
    lines.push('print("mean row entropy, changed (nats):", np.nanmean(entropy(W)))');
    prints.push('entropyChanged');
  }
  if (id === 'qknorm') {
    lines.push(
      'print("mean row entropy at scale 10 (nats):", np.nanmean(entropy(softmax(unit(Q) @ unit(K).T * 10, fill))))',
    );
    prints.push('entropyScale10');
  }
  return { code: lines.join('\n') + '\n', prints };
}

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
  const allowed = core.allowedMask({ t: T, ...maskOptions(m, T) });
  const numpy = variantSnippet(
    id,
    `Head ${h + 1} of ${H}, ${exampleWords(m, T)}`,
    std,
    h,
    T,
    H,
    allowed,
    m,
    distribution,
  );
  return {
    id,
    title: c.title,
    numpy,
    line: c.line,
    lead: c.lead,
    measured: `${headWords(h, H)}, ${exampleWords(m, T)}, ${mask}, ${scaleWords(m.scale)}; only this variant, against the standard computation (softmax, scale 1/√d_k, −∞ before).`,
    text,
    figures,
  };
}
