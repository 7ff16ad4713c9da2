// The attention variants as page state: which line of the computation each option replaces
// (docs/js-api.md, "Attention variants"). The Lesson feature owns these rows (state.lesson, link
// keys norm, sbias, posenc, qkn, shift, mmode, prec); the attention views' compute service reads
// them too, so the Heads, Mask, Scale and Output views show the same variant. A foundation because
// two features read it (as shared/trained-model.ts is published by Train and read by Heads and
// Decode). Pure: no DOM, no globals. What the core refuses is asked of the core
// (wasm/core-tables.ts) and corrected with a notice before the core sees it; the maths is the core's.
import { brief, decodeComponent, oneOf, parseNumber, yesNo, type Kind } from '../state/fields';
import type { Field } from '../state/table';
import type { CoreVariantOptions, MaskMode, Normalizer, PositionEncoding, Precision } from '../wasm/attn-core';
import { variantRefusal, type VariantChoice } from '../wasm/core-tables';

export type { MaskMode, Normalizer, PositionEncoding, Precision } from '../wasm/attn-core';

export interface VariantState {
  normalizer: Normalizer;
  /** sigmoid's bias b: 'auto' = −ln T_k (the core's default), or a number. */
  sigmoidBias: 'auto' | number;
  position: PositionEncoding;
  qkNorm: boolean;
  maxShift: boolean;
  maskMode: MaskMode;
  precision: Precision;
}

/** The part of the whole state the compute service reads (absent in states built for tests of the
 *  attention views alone: then the defaults). */
export interface VariantSlice {
  lesson?: VariantState;
}

// The literal lists the link kinds need; tests/web/core-names.test.ts fails when they and the
// core's (core.names) differ.
export const NORMALIZERS: readonly Normalizer[] = ['softmax', 'softmax1', 'sigmoid', 'relu', 'linear'];
export const POSITIONS: readonly PositionEncoding[] = ['none', 'rope', 'alibi'];
export const MASK_MODES: readonly MaskMode[] = ['before', 'after'];
export const PRECISIONS: readonly Precision[] = ['float32', 'float64', 'float16'];
export const MAX_SIGMOID_BIAS = 100;

export const STANDARD: VariantState = {
  normalizer: 'softmax',
  sigmoidBias: 'auto',
  position: 'none',
  qkNorm: false,
  maxShift: true,
  maskMode: 'before',
  precision: 'float32',
};

/** sigmoid's bias: `auto` or a finite number in ±MAX_SIGMOID_BIAS (the Lesson view's and the
 *  Train tab's link kind). */
export const sigmoidBiasKind: Kind<'auto' | number, unknown> = {
  same: (a, b) => a === b,
  format: (v, key) => [key, String(v)],
  parse(raw, key, notices) {
    const v = decodeComponent(raw, true);
    if (v === null) {
      notices.push(`setting “${key}” is not valid percent-encoding; it was ignored`);
      return undefined;
    }
    if (v === 'auto') return v;
    const x = parseNumber(v);
    if (Number.isNaN(x)) {
      notices.push(`sigmoid bias: “${brief(v)}” is not auto or a number; using auto (−ln T)`);
      return undefined;
    }
    return x;
  },
  normalize(v, c) {
    if (v === 'auto') return v;
    if (typeof v !== 'number' || !Number.isFinite(v)) {
      c.notices.push(`${c.label}: “${brief(v)}” is not a number; using auto (−ln T)`);
      return 'auto';
    }
    if (Math.abs(v) > MAX_SIGMOID_BIAS) {
      const x = Math.sign(v) * MAX_SIGMOID_BIAS;
      c.notices.push(`${c.label}: ${v} is outside −${MAX_SIGMOID_BIAS}…${MAX_SIGMOID_BIAS}; using ${x}`);
      return x;
    }
    return v === 0 ? 0 : v;
  },
};

// compute: true everywhere: each reruns the heatmaps (the Heads, Mask, Scale and Output views).
export const VARIANT_FIELDS: { [K in keyof VariantState]: Field<VariantState[K], unknown> } = {
  normalizer: {
    key: 'norm',
    label: 'normalizer',
    kind: oneOf(NORMALIZERS, (l, v) => `${l} “${v}” is unknown; using softmax`),
    default: 'softmax',
    compute: true,
  },
  sigmoidBias: { key: 'sbias', label: 'sigmoid bias', kind: sigmoidBiasKind, default: 'auto', compute: true },
  position: {
    key: 'posenc',
    label: 'position encoding',
    kind: oneOf(POSITIONS, (l, v) => `${l} “${v}” is unknown; using none`),
    default: 'none',
    compute: true,
  },
  qkNorm: { key: 'qkn', label: 'qk-norm', kind: yesNo(), default: false, compute: true },
  maxShift: { key: 'shift', label: 'max shift', kind: yesNo(), default: true, compute: true },
  maskMode: {
    key: 'mmode',
    label: 'mask mode',
    kind: oneOf(MASK_MODES, (l, v) => `${l} “${v}” is unknown; using before`),
    default: 'before',
    compute: true,
  },
  precision: {
    key: 'prec',
    label: 'precision',
    kind: oneOf(PRECISIONS, (l, v) => `${l} “${v}” is unknown; using float32`),
    default: 'float32',
    compute: true,
  },
};

/**
 * The combinations the core refuses, corrected with a notice (the core would name the field and
 * draw nothing). Which ones are refused is the core's answer (wasm/core-tables.ts), not a copy of
 * its rule: while the core refuses an option, that option goes back to its default, with the page's
 * words for it. `dk`: the random model's d_k when known (RoPE rotates pairs: odd d_k is refused).
 */
export function fixVariant(v: VariantState, notices: string[], dk: number | null): void {
  for (let field = variantRefusal(v, dk); field !== null; field = variantRefusal(v, dk)) {
    if (v[field] === STANDARD[field]) return; // nothing left to correct (the core's defaults pass)
    notices.push(refusalNotice(v, field, dk));
    toDefault(v, field);
  }
}

function toDefault<K extends keyof VariantChoice>(v: VariantState, k: K): void {
  v[k] = STANDARD[k];
}

function refusalNotice(v: VariantState, field: keyof VariantChoice, dk: number | null): string {
  if (field === 'position' && v.position === 'alibi')
    return 'position encoding: ALiBi adds to the scores, which linear attention never forms; using none';
  if (field === 'position' && v.position === 'rope')
    return `position encoding: RoPE rotates pairs of coordinates and d_k = ${dk} is odd; using none`;
  if (field === 'maxShift')
    return `max shift: only softmax and softmax1 subtract the row maximum (${v.normalizer} has none to switch off); using on`;
  if (field === 'precision' && v.precision === 'float16')
    return 'precision: float16 is emulated for plain softmax only (no position encoding, no qk-norm); using float32';
  const f = VARIANT_FIELDS[field];
  return `${f.label}: the core refuses ${String(v[field])} with these settings; using ${String(f.default)}`;
}

/** The core's options for a variant state (defaults for an absent one). */
export function variantOptions(v: VariantState | undefined): Required<Omit<CoreVariantOptions, 'ropeBase'>> {
  const s = v ?? STANDARD;
  return {
    normalizer: s.normalizer,
    sigmoidBias: s.sigmoidBias === 'auto' ? null : s.sigmoidBias,
    position: s.position,
    qkNorm: s.qkNorm,
    maxShift: s.maxShift,
    maskMode: s.maskMode,
    precision: s.precision,
  };
}

export function isStandard(v: VariantState | undefined): boolean {
  if (!v) return true;
  return (Object.keys(STANDARD) as (keyof VariantState)[]).every((k) => v[k] === STANDARD[k]);
}
