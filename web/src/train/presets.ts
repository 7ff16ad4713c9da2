// The Train tab's presets: each is a TrainState patch; its card is a share link (the page encodes
// the state). `figure` says what you should see, and `claim` is the same statement as numbers
// about the run to its stop step (seed 0), which tests check against the card's own run (every
// card in Node, tests/web/train-cards.test.ts; the induction card's link in Chromium,
// tests/browser/train-defects.test.mjs), so a card's text cannot drift from what its run shows.
import { defaultTrainState, type TrainState } from './config';

export interface TrainPreset {
  id: string;
  title: string;
  blurb: string;
  figure: string;
  train: Partial<TrainState>;
  claim: PresetClaim;
}

/** What a preset's run shows at its stop step, as checks on its held-out history. */
export interface PresetClaim {
  /** held-out accuracy at the stop step within [min, max] */
  finalAccuracy?: [number, number];
  /** the highest held-out accuracy at any evaluation is at most this */
  maxAccuracy?: number;
  /** the first step with accuracy ≥ 0.9 lies within [lo, hi] */
  crossed90?: [number, number];
  /** held-out loss at the stop step within [min, max] (nats) */
  finalLoss?: [number, number];
  /** held-out loss at step 0 at least this (nats) */
  startLossAbove?: number;
  /** whether the loss curve has a shelf before its drop (history.ts shelfAndDrop) */
  shelf?: boolean;
}

export const TRAIN_PRESETS: TrainPreset[] = [
  {
    id: 'train-induction',
    title: 'Induction heads form (2 layers)',
    blurb: 'Two attention-only layers, two heads each, on [noise, s, s]. Press play.',
    figure:
      'The loss sits on a shelf, then drops (seed 0: accuracy 0.9 at step ~135): a head in layer 1 looks one token back, a head in layer 2 looks just after the earlier copy.',
    train: { until: 400 },
    claim: { shelf: true, crossed90: [100, 200], finalAccuracy: [0.9, 1] },
  },
  {
    id: 'train-one-layer',
    title: 'One layer cannot',
    blurb: 'The same task with a single layer: no head can read what the previous token was.',
    figure:
      'The loss does fall, from ln 32 ≈ 3.47 to about 2.5 nats (seed 0: 2.37 at step 400), but accuracy on the repeated half stays near 0.2 (seed 0: 0.18 at step 400) against 1.00 with two layers: finding the earlier copy needs a previous-token head composed with an induction head in the next layer.',
    train: { layers: 1, until: 400 },
    claim: { maxAccuracy: 0.3, finalLoss: [1.8, 2.9] },
  },
  {
    id: 'train-positional',
    title: 'The positional shortcut',
    blurb: 'Fixed offset [s, s]: the copy is always n tokens back, so position alone finds it.',
    figure:
      'Accuracy passes 0.9 by step ~40 with one layer and no previous-token head (seed 0), faster than induction with two: the model learns what the data lets it cheat with.',
    train: { task: 'induction-fixed', layers: 1, until: 400 },
    claim: { crossed90: [20, 80], finalAccuracy: [0.95, 1] },
  },
  {
    id: 'train-noscale-small',
    title: 'Without √d_k, small init',
    blurb: 'Scale 1 instead of 1/√d_k, with weights ~ N(0, 0.05²).',
    figure:
      'It still learns (seed 0: accuracy 0.9 at step ~165 against ~135 with the scale): small weights keep the scores small, so scores √d_k ≈ 5.7× larger do not saturate the softmax.',
    train: { scale: 'none', initStd: 0.05, until: 400 },
    claim: { crossed90: [140, 200], finalAccuracy: [0.9, 1] },
  },
  {
    id: 'train-noscale-large',
    title: 'Without √d_k, large d_k and unit-variance init',
    blurb: 'Scale 1, d_model 128 (d_k 64 per head), weights ~ N(0, 1): scores with variance in the thousands.',
    figure:
      'Measured at step 0 (seed 0): mean row entropy 0.007 and 0.000 nats in layer 1, 0.000 in layer 2 (2.55 with the defaults); loss ≈ 5.9·10⁵. The gradient reaching layer 2’s scores (“Gradient reaching the scores” under the maps) is exactly 0, and so is its W_Q gradient: every row is one-hot, where softmax’s gradient a_i(δ_ij − a_j) vanishes, so layer 2’s attention cannot move. Layer 1’s few unsaturated cells still get score gradients (0.0098, 0.0019 against ~6·10⁻⁶ with the defaults) because the loss is enormous, so its W_Q gradient reaches 1.5·10⁵ while accuracy stays near chance (0.03 at step 50).',
    train: { scale: 'none', dModel: 128, initStd: 1, until: 50 },
    claim: { startLossAbove: 1e5, maxAccuracy: 0.1, shelf: false },
  },
  {
    id: 'train-dropout',
    title: 'Dropout on the weights',
    blurb: 'Inverted dropout (p = 0.2) on the attention weights while training.',
    figure:
      'Induction still forms, later (seed 0: accuracy 0.9 at step ~165 against ~135 without dropout): the circuit has to survive random holes in its attention.',
    train: { dropout: 0.2, until: 600 },
    claim: { crossed90: [150, 300], finalAccuracy: [0.9, 1] },
  },
  {
    id: 'train-gqa',
    title: 'GQA',
    blurb: 'Four query heads sharing two K/V heads (grouped-query attention).',
    figure:
      'Induction forms with half the K/V parameters (seed 0: accuracy 0.9 at step ~165); heads that share K/V can still attend differently through their queries.',
    train: { heads: 4, kvHeads: 2, until: 400 },
    claim: { crossed90: [100, 250], finalAccuracy: [0.9, 1] },
  },
];

export function presetTrain(p: TrainPreset): TrainState {
  return { ...defaultTrainState(), ...p.train };
}
