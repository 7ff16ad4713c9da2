// The experiment cards' ids: their link values (lexp=…) and their order in the card list.
// Keep them: they are the link format.
export const EXPERIMENT_IDS = [
  'shift',
  'after',
  'shuffle',
  'amplify',
  'loop',
  'sqrtdk',
  'cost',
  'softmax1',
  'sigmoid',
  'relu',
  'linear',
  'rope',
  'alibi',
  'qknorm',
  'flash',
] as const;
export type ExperimentId = (typeof EXPERIMENT_IDS)[number];
