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
