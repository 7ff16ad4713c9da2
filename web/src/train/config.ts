// The Train tab's settings (its sub-state) and how they become a trainer config for the
// attn_train module (docs/train-api.md). Pure: no DOM, no globals. The link rows for these fields
// are in train/state.ts.

export type TrainTask = 'induction' | 'induction-fixed' | 'random';
/** Positions: a learned table, none, inside attention (RoPE on q and k, ALiBi biases), or the
 *  learned table added only to every layer's query and key input (Shortformer). */
export type TrainPositional = 'learned' | 'none' | 'rope' | 'alibi' | 'shortformer';
/** The attention normalizer (the core's variants; docs/train-api.md). */
export type TrainNormalizer = 'softmax' | 'softmax1' | 'sigmoid' | 'relu' | 'linear';
/** sigmoid's bias: 'auto' = −ln seqLen, the model's context length (the module's default: the
 *  same bias whatever the length of the sequence a call sees), or a number. */
export type TrainSigmoidBias = 'auto' | number;
export type TrainKernel = 'naive' | 'tiled';
/** 'sqrt' = 1/√d_h, 'none' = 1, or a positive number. */
export type TrainScale = 'sqrt' | 'none' | number;

// The literal lists the link kinds need; tests/web/core-names.test.ts fails when they and the
// training module's (lib.names, from the cores' tables) differ.
export const TRAIN_TASKS: readonly TrainTask[] = ['induction', 'induction-fixed', 'random'];
export const TRAIN_POSITIONAL: readonly TrainPositional[] = ['learned', 'none', 'rope', 'alibi', 'shortformer'];
export const TRAIN_NORMALIZERS: readonly TrainNormalizer[] = ['softmax', 'softmax1', 'sigmoid', 'relu', 'linear'];
export const POSITIONAL_LABEL: Record<TrainPositional, string> = {
  learned: 'learned table',
  none: 'none',
  rope: 'RoPE (rotary, in attention)',
  alibi: 'ALiBi (distance bias)',
  shortformer: 'Shortformer (table into q and k only)',
};
export const NORMALIZER_LABEL: Record<TrainNormalizer, string> = {
  softmax: 'softmax',
  softmax1: 'softmax₁ (a sink key)',
  sigmoid: 'sigmoid(s + b)',
  relu: 'ReLU(s) / T',
  linear: 'linear (elu + 1 features)',
};
export const TRAIN_KERNELS: readonly TrainKernel[] = ['naive', 'tiled'];

/** Compare: a second run on the same data seed, one setting changed, curves overlaid. */
export type TrainCompare = 'none' | 'noscale' | 'onelayer' | 'nopos' | 'dropout' | 'gqa' | 'initseed' | 'softmax';
export const TRAIN_COMPARES: readonly TrainCompare[] = [
  'none',
  'noscale',
  'onelayer',
  'nopos',
  'dropout',
  'gqa',
  'initseed',
  'softmax',
];
export const COMPARE_LABEL: Record<TrainCompare, string> = {
  none: 'nothing',
  noscale: 'without √d_k (scale 1)',
  onelayer: 'one layer fewer',
  nopos: 'no positional embedding',
  dropout: 'dropout 0.2 on the weights',
  gqa: 'K/V heads halved (GQA)',
  initseed: 'another init seed (same data)',
  softmax: 'plain softmax, learned positions (no variant)',
};

/** The data seed a state trains on: its own, or (dataSeed = -1) the init seed's. */
export function effectiveDataSeed(t: TrainState): number {
  return t.dataSeed >= 0 ? t.dataSeed : t.seed;
}

/**
 * The settings of the comparison run, or null when there is none. Always the same data seed
 * (pinned explicitly, so the batches match even when the init seed differs).
 */
export function compareSettings(t: TrainState): TrainState | null {
  const c = compareOnly(t);
  return c && { ...c, dataSeed: effectiveDataSeed(t) };
}

/** The variant fields of plain softmax attention (a RoPE or ALiBi run gets the learned table back). */
export function plainAttention(
  t: TrainState,
): Pick<TrainState, 'normalizer' | 'qkNorm' | 'sigmoidBias' | 'positional'> {
  return {
    normalizer: 'softmax',
    qkNorm: false,
    sigmoidBias: 'auto',
    positional: t.positional === 'rope' || t.positional === 'alibi' ? 'learned' : t.positional,
  };
}

function compareOnly(t: TrainState): TrainState | null {
  switch (t.compare) {
    case 'none':
      return null;
    case 'noscale':
      return { ...t, scale: t.scale === 'none' ? 'sqrt' : 'none' };
    case 'onelayer':
      return t.layers > 1 ? { ...t, layers: t.layers - 1 } : { ...t, layers: 2 };
    case 'nopos':
      return { ...t, positional: t.positional === 'none' ? 'learned' : 'none' };
    case 'dropout':
      return { ...t, dropout: t.dropout > 0 ? 0 : 0.2 };
    case 'gqa':
      return { ...t, kvHeads: t.kvHeads % 2 === 0 ? t.kvHeads / 2 : t.kvHeads === t.heads ? t.kvHeads : t.heads };
    case 'initseed':
      return { ...t, seed: t.seed < TRAIN_LIMITS.maxSeed ? t.seed + 1 : 0 };
    // The variant against plain attention: every variant field back to its default (a run that
    // is already plain compares with itself).
    case 'softmax':
      return { ...t, ...plainAttention(t) };
  }
}

export const TASK_LABEL: Record<TrainTask, string> = {
  induction: 'induction: [noise, s, s]',
  'induction-fixed': 'fixed offset: [s, s] (positional shortcut)',
  random: 'random tokens (nothing to learn but unigrams)',
};

export interface TrainState {
  task: TrainTask;
  vocab: number;
  seqLen: number;
  layers: number;
  heads: number;
  kvHeads: number;
  dModel: number;
  positional: TrainPositional;
  /** The attention variant (link keys `tnorm`, `tqkn`, `tsbias`; defaults = plain softmax). */
  normalizer: TrainNormalizer;
  qkNorm: boolean;
  sigmoidBias: TrainSigmoidBias;
  layerNorm: boolean;
  scale: TrainScale;
  /** Standard deviation of every weight at initialisation; 0 = 1/√d_model (the module's default). */
  initStd: number;
  dropout: number;
  batch: number;
  weightDecay: number;
  kernel: TrainKernel;
  /** The init seed: initialisation and dropout (and, when dataSeed is -1, the data too). */
  seed: number;
  /** The data seed: training batches and the held-out batch; -1 = derived from seed (link key `dseed`). */
  dataSeed: number;
  /** Learning rate; changeable while training (not an architecture field). */
  lr: number;
  /** Stop at this step (0 = no step limit). Link key `until`. */
  until: number;
  /** Stop once held-out repeated-half accuracy ≥ this (0 = off). */
  untilAcc: number;
  /** Target steps per second; 0 = as fast as possible. */
  speed: number;
  /** Start training when the page opens (link key `play=1`, for slides). */
  play: boolean;
  /** A second run to compare with (same data seed, one setting changed). */
  compare: TrainCompare;
  /**
   * Workers that compute each step's shards: 0 = one per core the browser reports (1…4), else
   * 1…4 (link key `trw`, written only when set). The loss history is the same bits for any count.
   */
  workers: number;
}

export const TRAIN_LIMITS = {
  maxVocab: 1024,
  minSeqLen: 4,
  maxSeqLen: 256,
  maxLayers: 4,
  maxHeads: 8,
  maxDModel: 512,
  maxBatch: 256,
  maxInitStd: 10,
  maxDropout: 0.9,
  maxWeightDecay: 1,
  maxSeed: 0xffffffff,
  minLr: 1e-6,
  maxLr: 1000,
  maxUntil: 1_000_000,
  maxSpeed: 10_000,
  maxWorkers: 4,
  minScale: 0.001,
  maxScale: 1000,
} as const;

export function defaultTrainState(): TrainState {
  return {
    task: 'induction',
    vocab: 32,
    seqLen: 32,
    layers: 2,
    heads: 2,
    kvHeads: 2,
    dModel: 64,
    positional: 'learned',
    normalizer: 'softmax',
    qkNorm: false,
    sigmoidBias: 'auto',
    layerNorm: false,
    scale: 'sqrt',
    initStd: 0,
    dropout: 0,
    batch: 32,
    weightDecay: 0.01,
    kernel: 'naive',
    seed: 0,
    dataSeed: -1,
    lr: 0.01,
    until: 0,
    untilAcc: 0,
    speed: 0,
    play: false,
    compare: 'none',
    workers: 0,
  };
}

/** Fields whose change needs a fresh trainer (everything but the learning rate and the run controls). */
export const ARCH_FIELDS: readonly (keyof TrainState)[] = [
  'task',
  'vocab',
  'seqLen',
  'layers',
  'heads',
  'kvHeads',
  'dModel',
  'positional',
  'layerNorm',
  'scale',
  'initStd',
  'dropout',
  'batch',
  'weightDecay',
  'kernel',
  'seed',
  'dataSeed',
  'normalizer',
  'qkNorm',
  'sigmoidBias',
];

export function archChanged(a: TrainState, b: TrainState): (keyof TrainState)[] {
  return ARCH_FIELDS.filter((k) => a[k] !== b[k]);
}

/** The createTrainer config (docs/train-api.md) for these settings. */
export function trainerConfig(s: TrainState): Record<string, unknown> {
  return {
    task: s.task,
    vocab: s.vocab,
    seqLen: s.seqLen,
    layers: s.layers,
    heads: s.heads,
    kvHeads: s.kvHeads,
    dModel: s.dModel,
    positional: s.positional,
    layerNorm: s.layerNorm,
    scale: s.scale,
    initStd: s.initStd > 0 ? s.initStd : null,
    dropout: s.dropout,
    lr: s.lr,
    weightDecay: s.weightDecay,
    batch: s.batch,
    seed: s.seed,
    dataSeed: s.dataSeed >= 0 ? s.dataSeed : null,
    kernel: s.kernel,
    // The variant fields only when set (a plain config stays the object it always was).
    ...(s.normalizer !== 'softmax' ? { normalizer: s.normalizer } : {}),
    ...(s.qkNorm ? { qkNorm: true } : {}),
    ...(s.sigmoidBias !== 'auto' ? { sigmoidBias: s.sigmoidBias } : {}),
  };
}

/** Smallest vocabulary the task can draw its distinct tokens from (the module's rule). */
export function minVocab(task: TrainTask, seqLen: number): number {
  const n = Math.floor(seqLen / 2);
  if (task === 'induction') return seqLen - Math.ceil(n / 2);
  if (task === 'induction-fixed') return n;
  return 2;
}

/**
 * Floating-point operations of one training step (forward + backward ≈ 3 × forward; multiply and
 * add counted as 2), from the shapes: per layer the Q/K/V/O projections and the two T×T products
 * (the causal half is not subtracted: the naive kernel computes the full rows), plus the
 * unembedding. Embedding look-ups, softmax and AdamW are not counted (they are O(T·D), not GEMMs).
 */
export function flopsPerStep(s: TrainState): number {
  const B = s.batch,
    T = s.seqLen,
    D = s.dModel,
    H = s.heads,
    Hk = s.kvHeads,
    dh = D / H,
    V = s.vocab;
  const proj = 2 * B * T * D * (H * dh + 2 * Hk * dh + H * dh);
  const attn = 2 * 2 * B * H * T * T * dh;
  const fwd = s.layers * (proj + attn) + 2 * B * T * D * V;
  return 3 * fwd;
}
