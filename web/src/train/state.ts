// The Train tab's sub-state: its rows of the state table (link key, kind, default, limits; see
// app/state.ts). compute: false everywhere: the Train tab runs its own Worker, never the heatmap
// one. Link keys beyond the config: `play=1` starts training on open (slides), `until=N` stops at
// step N, `uacc=x` stops at held-out accuracy ≥ x. Imports only the state foundation.
import { brief, decodeComponent, int, oneOf, real, yesNo, type Kind } from '../state/fields';
import type { SubState } from '../state/table';
import { sigmoidBiasKind } from '../shared/variant';
import {
  TRAIN_COMPARES,
  TRAIN_KERNELS,
  TRAIN_LIMITS as L,
  TRAIN_NORMALIZERS,
  TRAIN_POSITIONAL,
  TRAIN_TASKS,
  defaultTrainState,
  minVocab,
  type TrainScale,
  type TrainSigmoidBias,
  type TrainState,
} from './config';

/** Scale: `sqrt`, `none` or a number in minScale…maxScale. */
const scaleKind: Kind<TrainScale, TrainSlice> = {
  same: (a, b) => a === b,
  format: (v, key) => [key, String(v)],
  parse(raw, key, notices) {
    const v = decodeComponent(raw, true);
    if (v === null) {
      notices.push(`setting “${key}” is not valid percent-encoding; it was ignored`);
      return undefined;
    }
    if (v === 'sqrt' || v === 'none') return v;
    const x = /^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/.test(v.trim()) ? Number(v) : NaN;
    if (Number.isNaN(x)) {
      notices.push(`train: scale “${brief(v)}” is not sqrt, none or a number; using sqrt`);
      return undefined;
    }
    return x;
  },
  normalize(v, c) {
    if (v === 'sqrt' || v === 'none') return v;
    if (typeof v !== 'number' || !Number.isFinite(v)) {
      c.notices.push(`${c.label}: not a number; using 1/√d_k`);
      return 'sqrt';
    }
    if (v < L.minScale || v > L.maxScale) {
      const x = Math.min(Math.max(v, L.minScale), L.maxScale);
      c.notices.push(`${c.label}: ${v} is outside ${L.minScale}…${L.maxScale}; using ${x}`);
      return x;
    }
    return v;
  },
};

const D = defaultTrainState();
/** The part of the state the train rows read. */
export interface TrainSlice {
  train: TrainState;
}

const T = (s: TrainSlice) => s.train;
export const TRAIN: SubState<TrainState, TrainSlice> = {
  fields: {
    task: { key: 'task', label: 'train: task', kind: oneOf(TRAIN_TASKS), default: D.task, compute: false },
    vocab: { key: 'vocab', label: 'train: vocabulary', kind: int(2, L.maxVocab), default: D.vocab, compute: false },
    seqLen: {
      key: 'seqlen',
      label: 'train: sequence length',
      kind: int(L.minSeqLen, L.maxSeqLen),
      default: D.seqLen,
      compute: false,
    },
    layers: { key: 'layers', label: 'train: layers', kind: int(1, L.maxLayers), default: D.layers, compute: false },
    heads: { key: 'nh', label: 'train: heads', kind: int(1, L.maxHeads), default: D.heads, compute: false },
    kvHeads: {
      key: 'nkv',
      label: 'train: K/V heads',
      kind: int(1, (s: TrainSlice) => T(s).heads),
      default: D.kvHeads,
      fallback: (s) => T(s).heads,
      compute: false,
    },
    dModel: {
      key: 'dmodel',
      label: 'train: d_model',
      kind: int((s: TrainSlice) => T(s).heads, L.maxDModel),
      default: D.dModel,
      compute: false,
    },
    positional: {
      key: 'pos',
      label: 'train: positions',
      kind: oneOf(TRAIN_POSITIONAL),
      default: D.positional,
      compute: false,
    },
    normalizer: {
      key: 'tnorm',
      label: 'train: normalizer',
      kind: oneOf(TRAIN_NORMALIZERS),
      default: D.normalizer,
      compute: false,
    },
    qkNorm: { key: 'tqkn', label: 'train: qkNorm', kind: yesNo(), default: D.qkNorm, compute: false },
    sigmoidBias: {
      key: 'tsbias',
      label: 'train: sigmoid bias',
      kind: sigmoidBiasKind,
      default: D.sigmoidBias,
      compute: false,
    },
    layerNorm: { key: 'ln', label: 'train: LayerNorm', kind: yesNo(), default: D.layerNorm, compute: false },
    scale: { key: 'qks', label: 'train: scale', kind: scaleKind, default: D.scale, compute: false },
    initStd: { key: 'istd', label: 'train: init std', kind: real(0, L.maxInitStd), default: D.initStd, compute: false },
    dropout: { key: 'drop', label: 'train: dropout', kind: real(0, L.maxDropout), default: D.dropout, compute: false },
    batch: { key: 'batch', label: 'train: batch', kind: int(1, L.maxBatch), default: D.batch, compute: false },
    weightDecay: {
      key: 'wd',
      label: 'train: weight decay',
      kind: real(0, L.maxWeightDecay),
      default: D.weightDecay,
      compute: false,
    },
    kernel: { key: 'kernel', label: 'train: kernel', kind: oneOf(TRAIN_KERNELS), default: D.kernel, compute: false },
    seed: { key: 'tseed', label: 'train: seed', kind: int(0, L.maxSeed), default: D.seed, compute: false },
    dataSeed: {
      key: 'dseed',
      label: 'train: data seed',
      kind: int(-1, L.maxSeed),
      default: D.dataSeed,
      compute: false,
    },
    lr: { key: 'lr', label: 'train: learning rate', kind: real(L.minLr, L.maxLr), default: D.lr, compute: false },
    until: { key: 'until', label: 'train: stop at step', kind: int(0, L.maxUntil), default: D.until, compute: false },
    untilAcc: { key: 'uacc', label: 'train: stop at accuracy', kind: real(0, 1), default: D.untilAcc, compute: false },
    speed: { key: 'speed', label: 'train: speed', kind: int(0, L.maxSpeed), default: D.speed, compute: false },
    play: { key: 'play', label: 'train: play on open', kind: yesNo(), default: D.play, compute: false },
    compare: {
      key: 'cmp',
      label: 'train: compare with',
      kind: oneOf(TRAIN_COMPARES),
      default: D.compare,
      compute: false,
    },
    // 0 = one Worker per core (navigator.hardwareConcurrency, 1…4): a link names a count only when set.
    workers: { key: 'trw', label: 'train: Workers', kind: int(0, L.maxWorkers), default: D.workers, compute: false },
  },
  // Rules between fields that the core would refuse: K/V heads divide heads, heads divide
  // d_model, the induction tasks need an even length and enough distinct tokens.
  fix(s, notices) {
    const t = s.train;
    if (t.heads % t.kvHeads !== 0) {
      let k = t.kvHeads;
      while (t.heads % k !== 0) k -= 1;
      notices.push(`train: K/V heads ${t.kvHeads} does not divide ${t.heads} heads; using ${k}`);
      t.kvHeads = k;
    }
    if (t.dModel % t.heads !== 0) {
      const d = Math.min(L.maxDModel - (L.maxDModel % t.heads), Math.ceil(t.dModel / t.heads) * t.heads);
      notices.push(`train: d_model ${t.dModel} is not divisible by ${t.heads} heads; using ${d}`);
      t.dModel = d;
    }
    if (t.task !== 'random' && t.seqLen % 2 !== 0) {
      notices.push(`train: the induction tasks need an even sequence length; using ${t.seqLen + 1}`);
      t.seqLen += 1;
    }
    if (t.positional === 'rope' && (t.dModel / t.heads) % 2 !== 0) {
      notices.push(
        `train: RoPE rotates pairs of coordinates, and d_model / heads = ${t.dModel / t.heads} is odd; using a learned table`,
      );
      t.positional = 'learned';
    }
    if (t.positional === 'alibi' && t.normalizer === 'linear') {
      notices.push('train: ALiBi adds to the scores, which linear attention does not form; using RoPE');
      t.positional = (t.dModel / t.heads) % 2 === 0 ? 'rope' : 'learned';
    }
    const mv = minVocab(t.task, t.seqLen);
    if (t.vocab < mv) {
      notices.push(
        `train: a sequence of ${t.seqLen} needs a vocabulary of at least ${mv} distinct tokens for this task; using ${mv}`,
      );
      t.vocab = mv;
    }
  },
};

/** The Train tab's settings in a state. */
export function trainOf(s: TrainSlice): TrainState {
  return s.train;
}

/** The patch that sets the Train tab's settings. */
export function trainPatch(t: TrainState): { train: TrainState } {
  return { train: t };
}
