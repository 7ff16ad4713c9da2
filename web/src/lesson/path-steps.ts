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
  },
  {
    title: 'The fully masked row',
    text: 'Pad the first key: row 0 has no key left. With a −∞ fill the softmax computes exp(−∞ − (−∞)), which is NaN.',
    link: { view: 'heads', pad: [0] },
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
  },
  {
    title: 'Detail 2: −∞ before, not zero after',
    text: 'Zeroing the masked weights after the softmax (line 7) leaves rows summing to less than one.',
    link: { view: 'lesson', lexp: 'after', mmode: 'after' },
    line: 'mask',
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
