// The model the Train tab trained most recently, for the tabs that reuse it (Decode, "Open in
// Heads view"). A plain in-page store: the Train tab publishes after training steps or a pause;
// readers take a snapshot (config + weights are copies, safe to post to a Worker).

/** A trainer config as accepted by `createTrainer` (docs/train-api.md), fully resolved. */
export type TrainerConfig = Record<string, unknown>;
/** The object `tr.weights()` returns (docs/train-api.md): typed arrays, row-major. */
export type TrainerWeights = Record<string, unknown>;

export interface TrainedModel {
  config: TrainerConfig;
  weights: TrainerWeights;
  step: number; // training steps taken when published
}

type Listener = (m: TrainedModel | null) => void;
let current: TrainedModel | null = null;
const listeners = new Set<Listener>();

export function setTrainedModel(m: TrainedModel | null): void {
  current = m;
  for (const l of listeners) l(m);
}

export function getTrainedModel(): TrainedModel | null {
  return current;
}

/** Calls `l` on every publish; returns the unsubscribe function. */
export function onTrainedModel(l: Listener): () => void {
  listeners.add(l);
  return () => listeners.delete(l);
}

/** A trained model's token as the Train tab and the Heads view both label it: "t" + its id, so a
 *  label never reads as the position beside it (a probe 0 1 2 … has id = position, and "7 7" read
 *  as 77). */
export function tokenLabel(id: number): string {
  return `t${id}`;
}

/**
 * The trained model's attention on one token sequence, for "Open in Heads view". Ephemeral: it
 * lives in this page only (a share link cannot carry trained weights) and is dropped when the
 * Heads view is left.
 */
export interface TrainedAttention {
  /** (L, H, T, T) row-major: tr.attention(tokens).weights */
  weights: Float32Array;
  tokens: number[];
  layers: number;
  heads: number;
  kvHeads: number;
  /** training steps taken when the weights were drawn */
  step: number;
  /** the layer to show first */
  layer: number;
  /** the attention variant it was trained with, in words (e.g. "sigmoid, RoPE"); absent = plain softmax */
  variant?: string;
  /** Each layer's q (H, T, d_h), k and v (H_kv, T, d_h) on these tokens, as the attention read
   *  them (before RoPE or qkNorm: tr.attention(tokens, { qkv: true })), with d_h and the core's
   *  attention options that form the same weights (trainedAttentionOptions). */
  rows?: {
    layers: { q: Float32Array; k: Float32Array; v: Float32Array }[];
    dk: number;
    options: Record<string, unknown>;
  };
}

/** The core's attention options (docs/js-api.md) under which core.attention on a trained layer's
 *  q, k, v forms the weights the trainer formed: causal, and the config's variant and scale (the
 *  trainer runs the core's definitions: docs/train-api.md). */
export function trainedAttentionOptions(c: TrainerConfig): Record<string, unknown> {
  const position = c.positional === 'rope' ? 'rope' : c.positional === 'alibi' ? 'alibi' : 'none';
  return {
    causal: true,
    position,
    normalizer: typeof c.normalizer === 'string' ? c.normalizer : 'softmax',
    qkNorm: c.qkNorm === true,
    sigmoidBias: typeof c.sigmoidBias === 'number' ? c.sigmoidBias : null,
    scale: typeof c.scale === 'number' ? c.scale : null,
  };
}

let attention: TrainedAttention | null = null;

export function setTrainedAttention(a: TrainedAttention | null): void {
  attention = a;
}

export function getTrainedAttention(): TrainedAttention | null {
  return attention;
}
