// The Lesson feature's sub-state (state.lesson): the variant options (shared/variant.ts: they also
// apply in the Heads, Mask, Scale and Output views), the guided path's step, the open experiment
// card and its slider. Rows of the state table (app/state.ts explains how a tab adds its
// sub-state). Imports only foundations. Pure: no DOM, no globals.
import { int, oneOf, real } from '../state/fields';
import type { SubState } from '../state/table';
import { VARIANT_FIELDS, fixVariant, type VariantState } from '../shared/variant';
import { EXPERIMENT_IDS, type ExperimentId } from './experiment-ids';
import { STEP_COUNT } from './path-steps';

export interface LessonState extends VariantState {
  /** Guided path ("Start here"): 0 = closed, 1…STEP_COUNT = the step shown. */
  step: number;
  /** The experiment card open under the code ('none' = the code lines only). */
  exp: 'none' | ExperimentId;
  /** The max-shift card's largest logit (its slider). */
  logit: number;
  /** The FlashAttention card's on-chip memory M, KiB (its select). */
  sram: number;
}

export const LESSON_LIMITS = { minLogit: 1, maxLogit: 1000 } as const;
/** On-chip memory sizes the FlashAttention card offers, KiB: 16 … 228 (48 KiB is a GPU block's
 *  default shared memory; 96, 164 and 228 KiB are the most one streaming multiprocessor of a V100,
 *  an A100 and an H100 can give it). Default 64: the size the card has always used. */
export const SRAM_KIB: readonly number[] = [16, 32, 48, 64, 96, 128, 164, 192, 228];

/** The part of the whole state the lesson rows read: the random model's d_k (RoPE needs it even). */
export interface LessonSlice {
  lesson: LessonState;
  model: { source: string; dK: number };
}

export const LESSON: SubState<LessonState, LessonSlice> = {
  fields: {
    ...VARIANT_FIELDS,
    step: { key: 'lstep', label: 'guided path step', kind: int(0, STEP_COUNT), default: 0, compute: false },
    exp: {
      key: 'lexp',
      label: 'experiment',
      kind: oneOf(['none', ...EXPERIMENT_IDS] as const, (l, v) => `${l} “${v}” is unknown; showing the code lines`),
      default: 'none',
      compute: false,
    },
    logit: {
      key: 'llogit',
      label: 'largest logit',
      kind: real(LESSON_LIMITS.minLogit, LESSON_LIMITS.maxLogit),
      default: 80,
      compute: false,
    },
    sram: {
      key: 'lsram',
      label: 'on-chip memory (KiB)',
      kind: oneOf(SRAM_KIB, (l, v) => `${l} “${v}” is not one of ${SRAM_KIB.join(', ')}; using 64`),
      default: 64,
      compute: false,
    },
  },
  fix(s, notices) {
    fixVariant(s.lesson, notices, s.model.source === 'random' ? s.model.dK : null);
  },
};
