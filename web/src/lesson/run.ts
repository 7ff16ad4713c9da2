// The Lesson view's runs, without DOM: the standard computation and the changed one (the state's
// variant) on the same example, head and tokens, and the measurements the badges show. Every
// attention number comes from the core (core.multiHeadAttention with the variant options); this
// file only slices, subtracts and takes maxima of what the core returned.
import type { AttnCore, CoreExample, CoreVariantOptions } from '../wasm/attn-core';
import { variantOptions, type VariantState } from '../shared/variant';
import {
  coreExample,
  coreMaskOptions,
  coreOptions,
  coreScale,
  runExample,
  type CoreSettings,
  type ExampleSettings,
} from '../shared/core-options';

/** The model fields a run reads (structurally the attention feature's ModelState). */
/** The model settings a Lesson run reads: the example's and the core options'. */
export type RunModel = ExampleSettings & CoreSettings;

export type Arr = Float32Array | Float64Array;

export function exampleFor(core: AttnCore, m: RunModel): CoreExample {
  return coreExample(core, m);
}

/** The scale the core is given (shared/core-options.ts, as the attention views give it). */
export function scaleOf(m: RunModel): number | null {
  return coreScale(m.scale);
}

/** The page's mask settings as the core's options (the mask rule itself is the core's). */
export const maskOptions = coreMaskOptions;

/** One head of one multi-head call. */
export interface HeadView {
  /** (T, T) weights, (T, T) scores as the normalizer received them, (T, d_v) output, (T, d_v) values. */
  weights: Arr;
  scores: Arr | null;
  output: Arr;
  values: Arr;
  /** (T) Σ_j w_ij, the core's rowSums. */
  rowSums: Arr;
}

export interface Badges {
  /** max over rows of |Σ_j w_ij − 1| (the core's rowSums); NaN rows left out. */
  maxRowSumError: number;
  /** max over rows and coordinates of how far an output leaves [min, max] of the values its row
   *  may attend to (0 = inside); fully masked rows left out. */
  rangeViolation: number;
  nanRows: number;
  /** 'T' for linear attention (the prefix-sum form), 'T²' for every other normalizer. */
  cost: 'T' | 'T²';
}

export interface Comparison {
  tokens: string[];
  t: number;
  heads: number;
  head: number;
  dv: number;
  /** (T, T) 1 = allowed (core.allowedMask). */
  allowed: Uint8Array;
  standard: HeadView;
  changed: HeadView;
  /** (T, T) changed − standard weights (NaN where either is NaN). */
  diff: Float32Array;
  maxAbsDiff: number;
  badges: { standard: Badges; changed: Badges };
}

function slice(a: Arr, h: number, size: number): Arr {
  return a.subarray(h * size, (h + 1) * size);
}

/** multiHeadAttention on the example with the given variant, returning scores. */
export function runModel(core: AttnCore, ex: CoreExample, m: RunModel, variant: CoreVariantOptions) {
  return runExample(core, ex, m, variant);
}

function headView(
  r: ReturnType<typeof runModel>,
  h: number,
  t: number,
  heads: number,
  kvHeads: number,
  dv: number,
): HeadView {
  const kvh = Math.floor(h / (heads / kvHeads));
  return {
    weights: slice(r.weights!, h, t * t),
    scores: r.scores ? slice(r.scores, h, t * t) : null,
    output: slice(r.headOutputs, h, t * dv),
    values: slice(r.v, kvh, t * dv),
    rowSums: slice(r.rowSums!, h, t),
  };
}

/** The badges of one head's result (measured on what the core returned). */
export function badges(v: HeadView, allowed: Uint8Array, t: number, dv: number, normalizer: string): Badges {
  let maxRowSumError = 0;
  let nanRows = 0;
  let rangeViolation = 0;
  for (let i = 0; i < t; i++) {
    const s = v.rowSums[i];
    if (Number.isNaN(s)) {
      nanRows++;
      continue;
    }
    maxRowSumError = Math.max(maxRowSumError, Math.abs(s - 1));
    for (let c = 0; c < dv; c++) {
      let lo = Infinity,
        hi = -Infinity;
      for (let j = 0; j < t; j++) {
        if (!allowed[i * t + j]) continue;
        const x = v.values[j * dv + c];
        lo = Math.min(lo, x);
        hi = Math.max(hi, x);
      }
      if (lo > hi) continue; // fully masked row
      const o = v.output[i * dv + c];
      rangeViolation = Math.max(rangeViolation, o - hi, lo - o);
    }
  }
  return { maxRowSumError, rangeViolation, nanRows, cost: normalizer === 'linear' ? 'T' : 'T²' };
}

export function maxAbsDelta(a: ArrayLike<number>, b: ArrayLike<number>): number {
  let m = 0;
  for (let i = 0; i < a.length; i++) {
    const d = Math.abs(a[i] - b[i]);
    if (d > m) m = d;
  }
  return m;
}

/** The lessons' standard computation whatever the controls say: scale 1/√d_k and a −∞ fill
 *  (with the default variant: softmax, max shift, mask before, float32). */
export const standardModel = (m: RunModel): RunModel => ({ ...m, scale: 'sqrt', fill: 'neg_inf' });

/** The standard computation and the state's variant, same example, head and tokens. */
export function compare(core: AttnCore, m: RunModel, variant: VariantState, head: number): Comparison {
  const ex = exampleFor(core, m);
  const T = ex.t;
  const std = runModel(core, ex, standardModel(m), {});
  const opts = variantOptions(variant);
  const chg = runModel(core, ex, m, opts);
  const h = Math.min(Math.max(0, head), ex.heads - 1);
  const kv = std.kvHeads,
    dv = std.dv;
  const standard = headView(std, h, T, ex.heads, kv, dv);
  const changed = headView(chg, h, T, ex.heads, kv, dv);
  const allowed = core.allowedMask({ t: T, ...maskOptions(m, T) });
  const diff = new Float32Array(T * T);
  let maxAbsDiff = 0;
  for (let i = 0; i < T * T; i++) {
    diff[i] = changed.weights[i] - standard.weights[i];
    if (Math.abs(diff[i]) > maxAbsDiff) maxAbsDiff = Math.abs(diff[i]);
  }
  return {
    tokens: [...ex.tokens],
    t: T,
    heads: ex.heads,
    head: h,
    dv,
    allowed,
    standard,
    changed,
    diff,
    maxAbsDiff,
    badges: {
      standard: badges(standard, allowed, T, dv, 'softmax'),
      changed: badges(changed, allowed, T, dv, opts.normalizer),
    },
  };
}
