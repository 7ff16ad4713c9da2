// The guided path ("Start here"): both lessons in order, one state and one or two sentences per
// step. Each step is a patch of the page's state in link-key form (state.lesson's `lstep` is
// added by whoever shows it). Data only; no numbers are stated here that a run would have to
// produce (the views show them).
import type { LineId } from './code-lines';

export interface PathStep {
  title: string;
  text: string;
  /** Link fields of the step's state over the default state (e.g. { view: 'mask', causal: true }). */
  link: Record<string, unknown>;
  /** The code line a Lesson-view step talks about: highlighted while the step is shown. */
  line?: LineId;
  /** Asked before the step's view is shown: the student predicts, then sees it (the view says why). */
  predict?: Prediction;
}

export interface Prediction {
  question: string;
  choices: readonly string[];
  /** Index of the choice the step's view shows. */
  answer: number;
  /** One sentence on what to look at in the view, shown with the verdict. */
  look: string;
}

export const STEPS: readonly PathStep[] = [
  {
    title: 'The toy and row 8',
    text: 'Lesson 1’s sentence with two hand-built heads. Read row 8, the second “cat”: head 1 looks at both “cat”s, head 2 at the token before it.',
    link: { view: 'heads' },
  },
  {
    title: 'Masks',
    text: 'The causal mask forbids every key after the query; the softmax then shares each row among the keys left.',
    link: { view: 'mask', causal: true },
    predict: {
      question: 'With the causal mask, how many keys may query 0, the first token, attend to?',
      choices: ['all of them', 'only itself', 'none'],
      answer: 1,
      look: 'Row 0 of the mask is one allowed cell, on the diagonal; its weight is 1.',
    },
  },
  {
    title: 'The fully masked row',
    text: 'Pad the first key: row 0 has no key left. With a −∞ fill the softmax computes exp(−∞ − (−∞)), which is NaN.',
    link: { view: 'heads', pad: [0] },
    predict: {
      question: 'Pad key 0: row 0 has no key left. With a −∞ fill, what does the softmax give row 0?',
      choices: ['uniform weights', 'all zeros', 'NaN'],
      answer: 2,
      look: 'Row 0 is drawn crimson with a cross: NaN, and the banner under this bar names the cause.',
    },
  },
  {
    title: 'The scale',
    text: 'Without 1/√d_k the scores of wide heads spread out and the rows saturate to one-hot; the entropy study shows it.',
    link: { view: 'scale' },
  },
  {
    title: 'Multi-head',
    text: 'Four heads of random weights, each with its own Q, K and V: four different maps from one sentence.',
    link: { view: 'heads', src: 'random', heads: 4, kv: 4, dm: 16, dk: 4, seed: 7 },
  },
  {
    title: 'Lesson 2’s W',
    text: 'NumPy’s default_rng(0) weights, T = 6, causal: the printed W of lesson 2, bit for bit.',
    link: {
      view: 'heads',
      src: 'random',
      gen: 'numpy',
      tokens: ['t0', 't1', 't2', 't3', 't4', 't5'],
      seed: 0,
      heads: 1,
      kv: 1,
      dm: 8,
      dk: 4,
    },
  },
  {
    title: 'Detail 1: the max shift',
    text: 'The max shift is off (line 8). On the toy the weights stay the same up to rounding: its scores are small. The card’s row has the slider’s value as its largest logit; past the format’s limit exp overflows and that row turns NaN.',
    link: { view: 'lesson', lexp: 'shift', llogit: 100, shift: false },
    line: 'shift',
    predict: {
      question: 'Max shift off, float32, a row whose largest logit is 100: what does that row become?',
      choices: ['the same weights as with the shift', 'NaN', 'all zeros'],
      answer: 1,
      look: 'exp(100) ≈ 2.7 × 10⁴³ is past float32’s largest number, so it becomes inf, and inf / inf is NaN: the card’s row says so.',
    },
  },
  {
    title: 'Detail 2: −∞ before, not zero after',
    text: 'Zeroing the masked weights after the softmax (line 7) leaves rows summing to less than one.',
    link: { view: 'lesson', lexp: 'after', mmode: 'after' },
    line: 'mask',
    predict: {
      question: 'Softmax over every key, then zero the masked weights: what do the rows sum to?',
      choices: ['exactly 1', 'less than 1 where a key was masked', 'more than 1'],
      answer: 1,
      look: 'The changed side’s row-sum badge and the card show the rows that lost weight.',
    },
  },
  {
    title: 'Detail 3: the √d_k',
    text: 'The spread of q·k grows like √d_k (line 5); measured from the core, and lesson 2’s own W with and without the division.',
    link: { view: 'lesson', lexp: 'sqrtdk' },
    line: 'scores',
  },
  {
    title: 'The cost',
    text: 'Double T and time it. The T × T part grows four times per doubling, but at lesson 2’s sizes the projections still weigh in, so expect less than four (the Lesson view’s card “Does each doubling quadruple the time?” counts it).',
    link: { view: 'timing' },
  },
  {
    title: 'FlashAttention',
    text: 'The tiled kernel never builds the T × T matrix: the memory it keeps only doubles per doubling, while the arithmetic and the traffic to slow memory stay quadratic.',
    link: { view: 'lesson', lexp: 'flash' },
  },
  {
    title: 'What production adds',
    text: 'Positions (RoPE) and grouped K/V heads: here RoPE rotates q and k by their positions (line 4).',
    link: { view: 'lesson', posenc: 'rope', lexp: 'rope' },
    line: 'rope',
  },
  {
    title: 'The variants',
    text: 'Each variant replaces one line of the computation; the code lines show which (here line 9, the normalizer).',
    link: { view: 'lesson', norm: 'softmax1', lexp: 'softmax1' },
    line: 'norm',
  },
];
export const STEP_COUNT = STEPS.length;
