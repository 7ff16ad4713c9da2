// The presets gallery: each preset is a partial state; its share link is the encoded state.
// `figure` states what the lesson says you should see (the browser tests check these).
import { encodeState } from './state';
import { defaultState, normalizeState, withPatch, type Patch, type State } from './state';

export interface Preset {
  id: string;
  title: string;
  lesson: string;
  blurb: string;
  figure: string;
  state: Patch;
}

const PAD4 = ['pad', 'pad', 'pad', 'pad'];
const padPreset = (fill: State['model']['fill'], id: string, title: string, figure: string): Preset => ({
  id,
  title,
  lesson: 'Lesson 1 · warning box',
  blurb: 'Every key is padding, so every row is fully masked. The fill policy decides what the softmax returns.',
  figure,
  state: {
    model: {
      source: 'random',
      tokens: PAD4,
      heads: 1,
      kvHeads: 1,
      dModel: 8,
      dK: 4,
      causal: false,
      padding: [0, 1, 2, 3],
      fill,
      seed: 0,
    },
  },
});

export const PRESETS: Preset[] = [
  {
    id: 'induction',
    title: 'Induction heads (hand-built)',
    lesson: 'Lesson 1 · toy sequence',
    blurb: 'Head 1 matches the same word, head 2 looks one token back. Read row 8, the second “cat”.',
    figure: 'Row 8 “cat”: head 1 puts 0.47 on both “cat” positions (1 and 8); head 2 puts 0.88 on position 7.',
    state: {
      model: {
        source: 'induction',
        tokens: 'the cat sat on the mat because the cat was tired'.split(' '),
        sharpness: 14,
        causal: true,
      },
    },
  },
  {
    id: 'lesson2',
    title: 'Random T = 6, causal',
    lesson: 'Lesson 2 · forty lines of NumPy',
    blurb:
      'd_model 8, d_k 4, one head, NumPy’s default_rng(0) weights: X, W_q, W_k, W_v and the printed W of lesson 2, bit for bit.',
    figure: 'A lower-triangular 6 × 6 matrix whose every row sums to 1.',
    state: {
      model: {
        source: 'random',
        generator: 'numpy',
        tokens: ['t0', 't1', 't2', 't3', 't4', 't5'],
        seed: 0,
        heads: 1,
        kvHeads: 1,
        dModel: 8,
        dK: 4,
        causal: true,
      },
    },
  },
  {
    id: 'no-sqrt',
    title: 'Delete the √d_k',
    lesson: 'Lesson 2 · three details',
    blurb: 'd_k = 256 with scale “none”: the logits spread wide and the softmax saturates.',
    figure: 'Almost one-hot rows: nearly every query puts more than 0.99 on a single key.',
    state: {
      model: {
        source: 'random',
        tokens: 'a b c d e f g h'.split(' '),
        seed: 1,
        heads: 1,
        kvHeads: 1,
        dModel: 16,
        dK: 256,
        causal: false,
        scale: 'none',
      },
    },
  },
  padPreset(
    'neg_inf',
    'pad-neginf',
    'All padding · −∞ fill',
    'Every row is NaN (exp(−∞ − (−∞))): the banner counts 4 NaN rows.',
  ),
  padPreset('finite', 'pad-finite', 'All padding · −1e9 fill', 'Every row is uniform: 0.25 on each of the 4 keys.'),
  padPreset('zero', 'pad-zero', 'All padding · zero row', 'Every weight is 0 and the output is 0.'),
  {
    id: 'window',
    title: 'Sliding window (w = 3)',
    lesson: 'Beyond the lessons',
    blurb: 'Causal plus a window of 3: each query sees itself and the two tokens before it.',
    figure: 'A band three cells wide along the diagonal; each row still sums to 1.',
    state: {
      model: {
        source: 'induction',
        tokens: 'the cat sat on the mat because the cat was tired'.split(' '),
        causal: true,
        window: 3,
      },
    },
  },
  {
    id: 'gqa',
    title: 'Grouped-query attention',
    lesson: 'Lesson 1 · what it leaves out',
    blurb: '4 query heads share 2 K/V heads (heads 1–2 and 3–4 read the same keys and values).',
    figure: '4 weight maps from 2 K/V heads; each row sums to 1.',
    state: {
      model: {
        source: 'random',
        tokens: 'the cat sat on the mat because the cat was tired'.split(' '),
        seed: 7,
        heads: 4,
        kvHeads: 2,
        dModel: 16,
        dK: 4,
        causal: true,
      },
    },
  },
  {
    id: 'cross',
    title: 'One sentence attending to another',
    lesson: 'Beyond the lessons · cross-attention',
    blurb:
      'Queries from the English sentence, keys and values from its French translation (an encoder–decoder’s cross-attention). The hand-built heads: head 1 matches concepts, head 2 aligns relative positions. No causal mask: the keys are another sentence.',
    figure:
      'A 6 × 7 map: head 1 puts 0.90 on “cat” → “chat” (and “sat” → “assis”, “mat” → “tapis”) and splits “the” 0.48 / 0.48 between the two “le”; head 2 follows position, so “sat” goes to “était” (0.90).',
    state: {
      model: {
        source: 'induction',
        tokens: 'the cat sat on the mat'.split(' '),
        kvTokens: 'le chat était assis sur le tapis'.split(' '),
        sharpness: 14,
      },
      page: { view: 'heads', cell: [0, 1, 1] },
    },
  },
  {
    id: 'cross-order',
    title: 'Word order across languages',
    lesson: 'Beyond the lessons · cross-attention',
    blurb:
      '“the black cat” against “le chat noir”: French puts the adjective after the noun. The meaning head crosses over; the position head does not.',
    figure:
      'Head 1 (meaning) crosses: “black” → “noir” and “cat” → “chat”, 0.97 each; head 2 (position) stays on the diagonal: “black” → “chat” (0.97).',
    state: {
      model: {
        source: 'induction',
        tokens: 'the black cat'.split(' '),
        kvTokens: 'le chat noir'.split(' '),
        sharpness: 14,
      },
      page: { view: 'heads', cell: [0, 1, 2] },
    },
  },
  {
    id: 'dk2',
    title: 'd_k = 2: move the vectors',
    lesson: 'Lesson 1 · matching queries and keys',
    blurb:
      'One head whose queries, keys and values have two dimensions, so the map under the heatmap is exact. Drag a query or a key and the weights follow; the output stays inside the values’ hull.',
    figure:
      'Under the heatmap, the map is exact (x = dimension 0, y = dimension 1); query “mat” (5) is picked, its arrow points towards key “sat” (2), which takes 0.98 of its weight, and its output (×) lies inside the hull of the values.',
    state: {
      model: {
        source: 'random',
        tokens: 'the cat sat on the mat'.split(' '),
        seed: 3,
        heads: 1,
        kvHeads: 1,
        dModel: 4,
        dK: 2,
        causal: false,
      },
      page: { cell: [0, 5, 2] },
    },
  },
  {
    id: 'timing-lesson',
    title: 'Time the lesson’s loop',
    lesson: 'Lesson 2 · now watch the cost',
    blurb:
      'X of width 512 projected to d_k = 64 by Wq, Wk, Wv, causal, T = 256 … 2048: the lesson’s for-loop, timed in this browser. Press Run.',
    figure:
      'Not ×4 per doubling yet: at d_model 512 the projections X·W (linear in T) are most of the work; by the count the scores’ share grows from 20 % at T = 256 to 67 % at 2048, so a doubling costs about ×2.4 … ×3.',
    state: {
      page: { view: 'timing' },
      timing: { input: 'proj', firstT: 256, lastT: 2048, dModel: 512, dK: 64, heads: 1, causal: true, kernels: 'both' },
    },
  },
  {
    id: 'timing',
    title: 'Timing lab: naive vs tiled',
    lesson: 'Lesson 2 · FlashAttention',
    blurb: 'Random Q, K, V with d_k = 64, T = 64 … 4096, both kernels. The tiled kernel never builds the T × T matrix.',
    figure:
      'Both slopes ≈ 2 (the arithmetic is still quadratic); the naive kernel’s memory quadruples per doubling, the tiled kernel’s only doubles.',
    state: { page: { view: 'timing' } },
  },
  {
    id: 'timing-linear',
    title: 'Timing lab: linear attention vs softmax',
    lesson: 'Beyond the lessons · linear attention',
    blurb:
      'Tiled softmax next to linear attention (φ = elu + 1, the core’s prefix-sum form), random Q, K, V with d_k = 64, T = 512 … 8192. Press Run.',
    figure: 'Linear attention’s slope ≈ 1 (×2 per doubling) against softmax’s ≈ 2: it never forms the T × T scores.',
    state: { page: { view: 'timing' }, timing: { kernels: 'linear', firstT: 512, lastT: 8192 } },
  },
  {
    id: 'decode',
    title: 'KV cache: watch and time it',
    lesson: 'Lesson 1 · what production adds',
    blurb:
      'A trained induction model writes one token at a time: each step one query row against the cached keys. Step through the copy, then time it with and without the cache.',
    figure: 'The continuation of s is copied; per step, time grows ≈ T with the cache and → T² without.',
    state: { page: { view: 'decode' } },
  },
];

// The Lesson view's experiment cards (lesson/experiments.ts): each a link that opens its card.
// Their figures are measured by the card's run on the page; the sentences here state no number.
const lessonCard = (
  id: State['lesson']['exp'],
  title: string,
  lesson: string,
  blurb: string,
  figure: string,
  extra: Partial<State['lesson']> = {},
): Preset => ({
  id: `lesson-${id}`,
  title,
  lesson,
  blurb,
  figure,
  state: { page: { view: 'lesson' }, lesson: { exp: id, ...extra } },
});
PRESETS.push(
  lessonCard(
    'shift',
    'Max shift off',
    'Lesson 2 · three details',
    'Push the largest logit past each format’s limit with the row maximum not subtracted.',
    'The row turns NaN exactly at the threshold the card measures for the chosen precision; with the shift on it never does.',
    { logit: 100 },
  ),
  lessonCard(
    'after',
    '−∞ before, not zero after',
    'Lesson 2 · three details',
    'Mask the scores before the softmax, or zero the weights after it.',
    'Zeroing after leaves rows summing below 1 and shrinks every output; for sigmoid the two are the same.',
    { maskMode: 'after' },
  ),
  lessonCard(
    'shuffle',
    'Shuffle the keys and values',
    'Lesson 1 · no notion of order',
    'Permute K and V together and compare the outputs.',
    'Identical without positions; RoPE, ALiBi or an unpermuted causal mask break it.',
  ),
  lessonCard(
    'amplify',
    'Attention cannot amplify',
    'Lesson 1 · a weighted average',
    'Check each output against the range of the values its row attends to.',
    'Softmax stays inside; sigmoid and relu rows sum above 1 and leave it; softmax1 pulls toward 0.',
  ),
  lessonCard(
    'loop',
    'Heads as a loop',
    'Lesson 2 · conceptually the loop',
    'H single-head calls against one packed multi-head call.',
    'The same outputs up to float32 rounding.',
  ),
  lessonCard(
    'sqrtdk',
    'Why √d_k, measured',
    'Lesson 1 · the scale',
    'The spread of q·k for unit-variance vectors, d_k = 1 … 1024, from the core.',
    'It grows like √d_k: about 8× wider at 64 than at 1.',
  ),
  lessonCard(
    'flash',
    'What FlashAttention makes linear',
    'Lesson 2 · what FlashAttention changes',
    'Bytes kept in and moved to slow memory by the standard and the tiled computation as T doubles, from the core’s IO model.',
    'The tiled footprint doubles per doubling (linear); the traffic of both still quadruples: it is divided by the on-chip memory, not made linear.',
  ),
  lessonCard(
    'softmax1',
    'The variants: which line they replace',
    'Lesson 2 · the last sentence',
    'softmax1, sigmoid, relu, linear, RoPE, ALiBi and qk-norm, each one changed line beside the standard computation.',
    'The changed line is highlighted; the badges say what it does to row sums and the values’ range.',
    { normalizer: 'softmax1' },
  ),
);

export function presetState(p: Preset): State {
  return normalizeState(withPatch(defaultState(), p.state)).state;
}

export function presetHash(p: Preset): string {
  return encodeState(presetState(p));
}

export function findPreset(id: string): Preset | undefined {
  return PRESETS.find((p) => p.id === id);
}
