// "Reproduce in NumPy" for the cards on the example and the size cards (the variant cards write
// theirs in variant-cards.ts): the lines, as text, from the data each card ran on. Pure: strings.
import type { Precision } from '../wasm/attn-core';
import { PY_SOFTMAX, pyArray, pyHead, pyMask, pyScale, pyValue, type NumpySnippet } from './numpy-snippets';

const code = (lines: string[]): string => lines.join('\n') + '\n';

/** Every head's Q, K and V as (heads, T, d) literals, with where they came from. */
function headsArrays(
  words: string,
  q: ArrayLike<number>,
  k: ArrayLike<number>,
  v: ArrayLike<number>,
  heads: number,
  kvHeads: number,
  t: number,
  dk: number,
  dv: number,
): string[] {
  return [
    'import numpy as np',
    '',
    `# ${words}: every head's queries, keys and values as the core computed them (float32).`,
    `${pyArray('Q', q, heads * t, dk)}.reshape(${heads}, ${t}, ${dk})`,
    `${pyArray('K', k, kvHeads * t, dk)}.reshape(${kvHeads}, ${t}, ${dk})`,
    `${pyArray('V', v, kvHeads * t, dv)}.reshape(${kvHeads}, ${t}, ${dv})`,
  ];
}

/** The opening of a snippet on one head's scores: the import, S, V and the mask as literals. */
function scoresHead(
  words: string,
  mask: string,
  s: ArrayLike<number>,
  v: ArrayLike<number>,
  allowed: ArrayLike<number>,
  t: number,
  dv: number,
): string[] {
  return [
    'import numpy as np',
    '',
    `# ${words}: its scores S = Q @ K.T * scale and values V as the core computed them (float32),`,
    `# and ${mask} (True = may attend).`,
    pyArray('S', s, t, t),
    pyArray('V', v, t, dv),
    pyMask('allowed', allowed, t, t),
  ];
}

export function shiftSnippet(logit: number, precision: Precision): NumpySnippet {
  return {
    code: code([
      'import numpy as np',
      '',
      `dt = np.${precision}                                # line 1's precision`,
      `s = dt(${pyValue(logit)}) * np.array([1, 0.5, 0.25, 0], dtype=dt)   # the card's row of scores`,
      'with np.errstate(over="ignore", invalid="ignore"):',
      '    e = np.exp(s)                                # the max shift off',
      '    print("NaN with the shift off:", np.isnan(e / e.sum()).any())',
      '    e = np.exp(s - s.max())                      # the max shift on',
      '    print("NaN with the shift on:", np.isnan(e / e.sum()).any())',
      '# exp(x) overflows once x passes the logarithm of the largest number of the format:',
      'for f in (np.float16, np.float32, np.float64):',
      '    print(f.__name__, "overflows above", np.log(float(np.finfo(f).max)))',
    ]),
    prints: ['nanShiftOff', 'nanShiftOn', 'thresholdF16', 'thresholdF32', 'thresholdF64'],
    // The card finds the edge by bisection on the core's own rounding (float16's steps are 1/128
    // near 11): within a few thousandths of the logarithm.
    tolerance: { thresholdF16: 5e-3, thresholdF32: 1e-3, thresholdF64: 1e-3 },
  };
}

/** −∞ before vs zero after: one head's scores and values under the causal mask. */
export function afterSnippet(
  words: string,
  s: ArrayLike<number>,
  v: ArrayLike<number>,
  allowed: ArrayLike<number>,
  t: number,
  dv: number,
): NumpySnippet {
  return {
    code: code([
      ...scoresHead(words, 'the causal mask', s, v, allowed, t, dv),
      PY_SOFTMAX,
      '',
      'W_before = softmax(S)                            # -inf before the softmax',
      'e = np.exp(S - S.max(-1, keepdims=True))',
      'W_after = np.where(allowed, e / e.sum(-1, keepdims=True), 0)   # zero after it',
      'print("smallest row sum after:", W_after.sum(-1).min())',
      'print("mean output length before:", np.linalg.norm(W_before @ V, axis=-1).mean())',
      'print("mean output length after:", np.linalg.norm(W_after @ V, axis=-1).mean())',
    ]),
    prints: ['minRowSumAfter', 'meanNormBefore', 'meanNormAfter'],
  };
}

/** Shuffle: every head's Q, K, V; the permutation the card drew. */
export function shuffleSnippet(
  words: string,
  q: ArrayLike<number>,
  k: ArrayLike<number>,
  v: ArrayLike<number>,
  heads: number,
  kvHeads: number,
  t: number,
  dk: number,
  dv: number,
  scale: number | null,
  perm: readonly number[],
): NumpySnippet {
  return {
    code: code([
      ...headsArrays(words, q, k, v, heads, kvHeads, t, dk, dv),
      `T, d_k = ${t}, ${dk}`,
      pyScale(scale),
      `perm = np.array([${perm.join(', ')}])            # the card's shuffle of the keys`,
      '',
      'def attend(Q, K, V, causal=False):',
      `    K, V = np.repeat(K, ${heads / kvHeads}, axis=0), np.repeat(V, ${heads / kvHeads}, axis=0)   # K/V heads shared by query heads`,
      '    S = Q @ K.transpose(0, 2, 1) * scale',
      '    if causal:',
      '        S = np.where(np.tril(np.ones((T, T), dtype=bool)), S, -np.inf)',
      '    e = np.exp(S - S.max(-1, keepdims=True))',
      '    return (e / e.sum(-1, keepdims=True)) @ V',
      '',
      'print("max |d output|, shuffled:", np.abs(attend(Q, K, V) - attend(Q, K[:, perm], V[:, perm])).max())',
      'print("max |d output|, causal mask not shuffled:",',
      '      np.abs(attend(Q, K, V, True) - attend(Q, K[:, perm], V[:, perm], True)).max())',
    ]),
    prints: ['maxDeltaNone', 'maxDeltaCausal'],
  };
}

/** Cannot amplify: one head's scores and values, each normalizer in turn. */
export function amplifySnippet(
  words: string,
  s: ArrayLike<number>,
  v: ArrayLike<number>,
  allowed: ArrayLike<number>,
  t: number,
  dv: number,
): NumpySnippet {
  return {
    code: code([
      ...scoresHead(words, 'the mask', s, v, allowed, t, dv),
      'T = S.shape[1]',
      PY_SOFTMAX,
      '',
      "def outside(W):                                  # how far an output leaves its values' range",
      '    worst = 0.0',
      '    for i in range(T):',
      '        lo, hi = V[allowed[i]].min(0), V[allowed[i]].max(0)',
      '        o = W[i] @ V',
      '        worst = max(worst, (o - hi).max(), (lo - o).max())',
      '    return worst',
      '',
      'Sm = np.where(allowed, S, -np.inf)',
      'm = np.maximum(Sm.max(-1, keepdims=True), 0)',
      'W_softmax1 = np.exp(Sm - m) / (np.exp(-m) + np.exp(Sm - m).sum(-1, keepdims=True))',
      'W_sigmoid = np.where(allowed, 1 / (1 + np.exp(-(S - np.log(T)))), 0)',
      'W_relu = np.where(allowed, np.maximum(S, 0) / T, 0)',
      'print("softmax, largest step outside:", outside(softmax(S)))',
      'print("sigmoid, largest row sum:", W_sigmoid.sum(-1).max())',
      'print("sigmoid, smallest row sum:", W_sigmoid.sum(-1).min())',
      'print("relu, largest row sum:", W_relu.sum(-1).max())',
      'print("relu, smallest row sum:", W_relu.sum(-1).min())',
      'print("sigmoid, largest step outside:", outside(W_sigmoid))',
      'print("relu, largest step outside:", outside(W_relu))',
      'print("softmax1, smallest row sum:", W_softmax1.sum(-1).min())',
    ]),
    prints: [
      'softmaxViolation',
      'sigmoidMaxRowSum',
      'sigmoidMinRowSum',
      'reluMaxRowSum',
      'reluMinRowSum',
      'sigmoidViolation',
      'reluViolation',
      'softmax1MinRowSum',
    ],
  };
}

/** Heads as a loop: every head's Q, K, V, one head at a time against all at once. */
export function loopSnippet(
  words: string,
  q: ArrayLike<number>,
  k: ArrayLike<number>,
  v: ArrayLike<number>,
  allowed: ArrayLike<number>,
  heads: number,
  kvHeads: number,
  t: number,
  dk: number,
  dv: number,
  scale: number | null,
): NumpySnippet {
  return {
    code: code([
      ...headsArrays(words, q, k, v, heads, kvHeads, t, dk, dv),
      pyMask('allowed', allowed, t, t),
      `d_k = ${dk}`,
      pyScale(scale),
      PY_SOFTMAX,
      `group = ${heads / kvHeads}                                     # query heads per K/V head`,
      '',
      'looped = np.stack([softmax(Q[h] @ K[h // group].T * scale) @ V[h // group] for h in range(len(Q))])',
      'Kg, Vg = np.repeat(K, group, axis=0), np.repeat(V, group, axis=0)',
      'packed = softmax(Q @ Kg.transpose(0, 2, 1) * scale) @ Vg   # all heads in one batched product',
      'print("max |d output|, loop vs packed:", np.abs(looped - packed).max())',
    ]),
    prints: ['maxDelta'],
    tolerance: { maxDelta: 1e-5 },
  };
}

/** Why √d_k: lesson 2's own example, with and without the division. */
export function sqrtSnippet(t: number): NumpySnippet {
  const rows = Array.from({ length: t }, (_, i) => i);
  return {
    code: code([
      'import numpy as np',
      '',
      "# Lesson 2's own example, as its code makes it: default_rng(0), T = 6, d = 8, d_k = 4, causal.",
      'rng = np.random.default_rng(0)',
      'T, d, d_k = 6, 8, 4',
      'X = rng.normal(size=(T, d))',
      'W_q, W_k, W_v = (rng.normal(size=(d, d_k)) for _ in range(3))',
      'Q, K = X @ W_q, X @ W_k',
      'allowed = np.tril(np.ones((T, T), dtype=bool))',
      PY_SOFTMAX,
      '',
      'W_with = softmax(Q @ K.T / np.sqrt(d_k))',
      'W_without = softmax(Q @ K.T)                   # the division deleted',
      ...rows.map((i) => `print("row ${i}, largest weight with the division:", W_with[${i}].max())`),
      ...rows.map((i) => `print("row ${i}, largest weight without:", W_without[${i}].max())`),
      'S = (Q @ K.T / np.sqrt(d_k))[allowed]',
      'print("spread of the allowed scores with the division:", S.std())',
    ]),
    prints: [...rows.map((i) => `lesson2With${i}`), ...rows.map((i) => `lesson2Without${i}`), 'lesson2ScoreStd'],
  };
}

/** Does each doubling quadruple the time: the count of lesson 2's loop. */
export function costSnippet(ts: readonly number[], d: number, dk: number): NumpySnippet {
  return {
    code: code([
      "# Lesson 2's timing loop, counted: X (T, d), three projections to d_k, Q @ K.T and W @ V;",
      '# an (a, b) @ (b, c) product is 2abc operations (a multiply and an add each).',
      `d, d_k = ${d}, ${dk}`,
      'def ops(T):',
      '    return 3 * 2 * T * d * d_k + 2 * T * d_k * T + 2 * T * T * d_k',
      `Ts = [${ts.join(', ')}]`,
      'for a, b in zip(Ts, Ts[1:]):',
      '    print(f"T = {a} -> {b}: x", ops(b) / ops(a))',
      'print("the T x T products equal the projections at T =", 1.5 * d)',
    ]),
    prints: [...ts.slice(1).map((t) => `ratio${t}`), 'crossover'],
  };
}

/** FlashAttention: the block sizes and the standard computation's bytes, from the IO model's rules. */
export function flashSnippet(sramKiB: number, d: number): NumpySnippet {
  return {
    code: code([
      '# The IO model of Dao et al. 2022 (Algorithm 1), float32, one head: the block sizes for an',
      '# on-chip memory of M floats, and how the footprint and the standard traffic grow with T.',
      'import math',
      `M = ${sramKiB} * 1024 // 4                       # floats on chip`,
      `d = ${d}`,
      'B_c = math.ceil(M / (4 * d))                   # keys per block',
      'B_r = min(B_c, d)                              # query rows per block',
      'print("query rows per block:", B_r)',
      'print("keys per block:", B_c)',
      '# Standard: S and W (T x T each) live in slow memory, next to Q, K, V and O (T x d each).',
      'footprint_std = lambda T: 4 * (2 * T * T + 4 * T * d)',
      '# Tiled: Q, K, V, O and two numbers per row (the running max and sum).',
      'footprint_tiled = lambda T: 4 * (4 * T * d + 2 * T)',
      'print("standard footprint, x per doubling at T = 8192:", footprint_std(8192) / footprint_std(4096))',
      'print("tiled footprint, x per doubling at T = 8192:", footprint_tiled(8192) / footprint_tiled(4096))',
      '# Standard traffic: load Q, K (scores), S (softmax), P and V (output); store S, P and O.',
      'moved_std = lambda T: 4 * (3 * T * d + 2 * T * T + 2 * T * T + T * d)',
      'print("standard bytes moved, x per doubling at T = 8192:", moved_std(8192) / moved_std(4096))',
    ]),
    prints: ['blockRows', 'blockCols', 'footprintStandardRatio', 'footprintTiledRatio', 'trafficStandardRatio'],
  };
}
