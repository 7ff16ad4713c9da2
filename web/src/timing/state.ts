// The Timing lab's sub-state: its fields, link keys, defaults and limits (rows of the state table,
// see app/state.ts for how a tab adds its sub-state). Imports only the state foundation.
import { int, oneOf, pow2, yesNo } from '../state/fields';
import type { SubState } from '../state/table';

/** 'linear': tiled softmax next to linear attention (see measure/model.ts, kernelsOf). */
export type TimingKernels = 'both' | 'naive' | 'tiled' | 'linear';
export type TimingInput = 'qkv' | 'proj';
export const TIMING_KERNELS: readonly TimingKernels[] = ['both', 'naive', 'tiled', 'linear'];
export const TIMING_INPUTS: readonly TimingInput[] = ['qkv', 'proj'];
export const TIMING_WORKERS: readonly number[] = [1, 2, 4];

export const TIMING_LIMITS = {
  /** T runs over powers of two in this range. */
  timingMinT: 8,
  timingMaxT: 16384,
  timingMaxDModel: 2048,
  timingMaxHeads: 16,
  timingMaxDk: 1024,
} as const;

export interface TimingState {
  /** The sweep doubles T from firstT to lastT (powers of two). */
  firstT: number;
  lastT: number;
  /** d_model: the width of X in the lesson's loop (input 'proj'). */
  dModel: number;
  dK: number;
  heads: number;
  /** Which kernels to time. */
  kernels: TimingKernels;
  causal: boolean;
  /** 'qkv' = random Q, K, V into core.attention; 'proj' = random X projected by Wq, Wk, Wv (lesson 2's loop). */
  input: TimingInput;
  /** Module Workers each timed call is split across (1, 2 or 4; 1 = one wasm instance). */
  workers: number;
}

const L = TIMING_LIMITS;
// compute: false everywhere — the lab runs only when the user presses Run; these fields never
// trigger the heatmap worker.
/** The part of the state the timing rows read. */
export interface TimingSlice {
  timing: TimingState;
}

export const TIMING: SubState<TimingState, TimingSlice> = {
  fields: {
    firstT: {
      key: 'tstart',
      label: 'timing: first T',
      kind: pow2(L.timingMinT, L.timingMaxT),
      default: 64,
      compute: false,
    },
    lastT: {
      key: 'tend',
      label: 'timing: last T',
      kind: pow2((s: TimingSlice) => s.timing.firstT, L.timingMaxT),
      default: 4096,
      fallback: (s) => Math.max(4096, s.timing.firstT),
      compute: false,
    },
    dModel: { key: 'tdm', label: 'timing: d_model', kind: int(1, L.timingMaxDModel), default: 512, compute: false },
    dK: { key: 'tdk', label: 'timing: d_k', kind: int(1, L.timingMaxDk), default: 64, compute: false },
    heads: { key: 'th', label: 'timing: heads', kind: int(1, L.timingMaxHeads), default: 1, compute: false },
    kernels: {
      key: 'tker',
      label: 'timing: kernels',
      kind: oneOf(TIMING_KERNELS, (l, v) => `${l} “${v}” is unknown; timing both`),
      default: 'both',
      compute: false,
    },
    causal: { key: 'tcausal', label: 'timing: causal', kind: yesNo(), default: false, compute: false },
    input: {
      key: 'tmode',
      label: 'timing: input',
      kind: oneOf(TIMING_INPUTS, (l, v) => `${l} “${v}” is unknown; using random Q, K, V`),
      default: 'qkv',
      compute: false,
    },
    workers: {
      key: 'tw',
      label: 'timing: workers',
      kind: oneOf(TIMING_WORKERS, (l, v) => `${l} “${v}” is not 1, 2 or 4; using 1`),
      default: 1,
      compute: false,
    },
  },
};
