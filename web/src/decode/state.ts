// The Decode tab's sub-state (state.decode): rows of the state table (app/state.ts explains how a
// tab adds its sub-state). Which probe sequence, how much of the second copy the prompt keeps,
// the step shown, cache on/off, and the timing sweep's T range. Imports only the state foundation.
import { int, pow2, yesNo } from '../state/fields';
import type { SubState } from '../state/table';

export interface DecodeState {
  /** Probe sequence (index into the module's sampleBatch draws). */
  seq: number;
  /** Tokens of the second copy of s kept in the prompt (the rest is generated). */
  keep: number;
  /** Tokens appended so far (the step shown); 0 = the end of the prompt. */
  step: number;
  /** KV cache on (true) or recompute the prefix every step (false). */
  cache: boolean;
  /** Timing sweep: T from tStart to tEnd by doubling (at least two lengths). */
  tStart: number;
  tEnd: number;
}

export const DECODE_LIMITS = { maxSeq: 9999, minKeep: 1, maxKeep: 8, maxStep: 8192, minT: 64, maxT: 4096 } as const;
const L = DECODE_LIMITS;

// compute: false everywhere: the tab has its own Workers; nothing here reruns the heatmaps.
/** The part of the state the decode rows read. */
export interface DecodeSlice {
  decode: DecodeState;
}

export const DECODE: SubState<DecodeState, DecodeSlice> = {
  fields: {
    seq: { key: 'dseq', label: 'decode: sequence', kind: int(0, L.maxSeq), default: 0, compute: false },
    keep: {
      key: 'dkeep',
      label: 'decode: prompt tokens of the second copy',
      kind: int(L.minKeep, L.maxKeep),
      default: 2,
      compute: false,
    },
    step: { key: 'dstep', label: 'decode: step', kind: int(0, L.maxStep), default: 0, compute: false },
    cache: { key: 'dcache', label: 'decode: KV cache', kind: yesNo(), default: true, compute: false },
    tStart: { key: 'dts', label: 'decode: first T', kind: pow2(L.minT, L.maxT / 2), default: 256, compute: false },
    tEnd: {
      key: 'dte',
      label: 'decode: last T',
      kind: pow2((s: DecodeSlice) => s.decode.tStart * 2, L.maxT),
      default: 4096,
      fallback: (s) => Math.max(4096, s.decode.tStart * 2),
      compute: false,
    },
  },
};
