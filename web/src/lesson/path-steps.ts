// The guided path ("Start here"): both lessons in order, one state and one or two sentences per
// step. Each step is a patch of the page's state in link-key form (state.lesson's `lstep` is
// added by whoever shows it). Data only; no numbers are stated here that a run would have to
// produce (the views show them).
export interface PathStep {
  title: string;
  text: string;
  /** Link fields of the step's state over the default state (e.g. { view: 'mask', causal: true }). */
  link: Record<string, unknown>;
}


export const STEPS: readonly PathStep[] = [
  { title: 'The toy and row 8', text: 'Lesson 1’s sentence with two hand-built heads. Read row 8, the second “cat”: head 1 looks at both “cat”s, head 2 at the token before it.', link: { view: 'heads' } },
  { title: 'Masks', text: 'The causal mask forbids every key after the query; the softmax then shares each row among the keys left.', link: { view: 'mask', causal: true } },
  { title: 'The fully masked row', text: 'Pad the first key: row 1 has no key left. With a −∞ fill the softmax computes exp(−∞ − (−∞)), which is NaN.', link: { view: 'heads', pad: [0] } },
  { title: 'The scale', text: 'Without 1/√d_k the scores of wide heads spread out and the rows saturate to one-hot; the entropy study shows it.', link: { view: 'scale' } },
  { title: 'Multi-head', text: 'Four heads of random weights, each with its own Q, K and V: four different maps from one sentence.', link: { view: 'heads', src: 'random', heads: 4, kv: 4, dm: 16, dk: 4, seed: 7 } },
  { title: 'Lesson 2’s W', text: 'NumPy’s default_rng(0) weights, T = 6, causal: the printed W of lesson 2, bit for bit.', link: { view: 'heads', src: 'random', gen: 'numpy', tokens: ['t0', 't1', 't2', 't3', 't4', 't5'], seed: 0, heads: 1, kv: 1, dm: 8, dk: 4 } },
  { title: 'Detail 1: the max shift', text: 'Switch the shift off and push the largest logit past the format’s limit: exp overflows and the row turns NaN.', link: { view: 'lesson', lexp: 'shift', llogit: 100 } },
  { title: 'Detail 2: −∞ before, not zero after', text: 'Zeroing the masked weights after the softmax leaves rows summing to less than one.', link: { view: 'lesson', lexp: 'after', mmode: 'after' } },
  { title: 'Detail 3: the √d_k', text: 'The spread of q·k grows like √d_k; measured from the core.', link: { view: 'lesson', lexp: 'sqrtdk' } },
  { title: 'The cost', text: 'Double T and time it: the scores are T × T, so the time grows about four times per doubling.', link: { view: 'timing' } },
  { title: 'FlashAttention', text: 'The tiled kernel never builds the T × T matrix: the memory it keeps only doubles per doubling, while the arithmetic and the traffic to slow memory stay quadratic.', link: { view: 'lesson', lexp: 'flash' } },
  { title: 'What production adds', text: 'Positions (RoPE) and grouped K/V heads: here RoPE rotates q and k by their positions.', link: { view: 'lesson', posenc: 'rope', lexp: 'rope' } },
  { title: 'The variants', text: 'Each variant replaces one line of the computation; the code lines show which.', link: { view: 'lesson', norm: 'softmax1', lexp: 'softmax1' } },
];
export const STEP_COUNT = STEPS.length;
