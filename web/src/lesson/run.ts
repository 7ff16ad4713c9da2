// The Lesson view's runs, without DOM: the standard computation and the changed one (the state's
// variant) on the same example, head and tokens, and the measurements the badges show. Every
// attention number comes from the core (core.multiHeadAttention with the variant options); this
// file only slices, subtracts and takes maxima of what the core returned.
import type { AttnCore, CoreAttentionOptions, CoreExample, CoreVariantOptions } from '../wasm/attn-core';
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

/** The model settings a Lesson run reads: the example's and the core options'. */
export type RunModel = ExampleSettings & CoreSettings;

export type Arr = Float32Array | Float64Array;

export function exampleFor(core: AttnCore, m: RunModel): CoreExample {
  // The Lesson runs on self-attention: a second sentence for the keys (kvTokens) is not read here.
  return coreExample(core, { ...m, kvTokens: [] });
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

/**
 * The student's own arrays, for the pictures: Q, K, V as given, or X, W_q, W_k, W_v for the core
 * to project (in the run's precision, as the page's own example is); Float64Arrays from a float64
 * file, used as they are by a float64 run (a float32 run rounds them to float32 first). The page's shell builds
 * these from "Your arrays"; the Lesson never reads the arrays panel itself.
 * q (H, T, d_k), k (H_kv, T, d_k), v (H_kv, T, d_v); x (T, d_model), w_* (d_model, H·d).
 */
export type StudentInputs = {
  /** What the pictures run on, in words ("your Q, K, V"). */
  source: string;
  /** One label per position: the page's tokens when there is one per row, else 0, 1, 2, … */
  tokens: string[];
  /** The call's shapes and the page's mask, fill and scale (the student's own mask ANDed in). */
  opts: CoreAttentionOptions;
} & ({ q: Arr; k: Arr; v: Arr } | { x: Arr; wq: Arr; wk: Arr; wv: Arr; dModel: number });

/** Whether every array of the student's came as float64 (a float64 .npy / .npz): then a float64
 *  run computes on the very numbers their notebook holds. */
export function studentFloat64(s: StudentInputs): boolean {
  const all = 'q' in s ? [s.q, s.k, s.v] : [s.x, s.wq, s.wk, s.wv];
  return all.every((a) => a instanceof Float64Array);
}

export interface Comparison {
  /** null: the page's example; else what the student's arrays are, in words. */
  student: string | null;
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

/** The two head views with their difference and badges. */
function comparison(
  student: string | null,
  tokens: readonly string[],
  heads: number,
  head: number,
  dv: number,
  allowed: Uint8Array,
  standard: HeadView,
  changed: HeadView,
  normalizer: string | undefined,
): Comparison {
  const T = tokens.length;
  const diff = new Float32Array(T * T);
  let maxAbsDiff = 0;
  for (let i = 0; i < T * T; i++) {
    diff[i] = changed.weights[i] - standard.weights[i];
    if (Math.abs(diff[i]) > maxAbsDiff) maxAbsDiff = Math.abs(diff[i]);
  }
  return {
    student,
    tokens: [...tokens],
    t: T,
    heads,
    head,
    dv,
    allowed,
    standard,
    changed,
    diff,
    maxAbsDiff,
    badges: {
      standard: badges(standard, allowed, T, dv, 'softmax'),
      changed: badges(changed, allowed, T, dv, normalizer ?? 'softmax'),
    },
  };
}

/** The standard computation and the state's variant on the student's Q, K, V (same head). */
function compareStudent(core: AttnCore, s: StudentInputs, variant: VariantState, head: number): Comparison {
  const o = s.opts,
    T = o.tq,
    dv = o.dv,
    kv = o.kvHeads ?? o.heads;
  const run = (extra: CoreVariantOptions & { scale?: number | null; maskFill?: CoreAttentionOptions['maskFill'] }) => {
    // A float64 run takes Float64Arrays as they are; float32 and float16 runs take float32 numbers.
    const a = (x: Arr): Float32Array =>
      (extra.precision === 'float64' || x instanceof Float32Array ? x : Float32Array.from(x)) as Float32Array;
    if ('q' in s) {
      const r = core.attention(a(s.q), a(s.k), a(s.v), { ...o, returnScores: true, kernel: 'naive', ...extra });
      return { ...r, headOutputs: r.output, v: s.v };
    }
    const wo = new Float32Array(o.heads * dv * s.dModel); // no W_o in lesson 2: the heads are drawn
    return core.multiHeadAttention(a(s.x), a(s.wq), a(s.wk), a(s.wv), wo, {
      t: T,
      dModel: s.dModel,
      heads: o.heads,
      kvHeads: kv,
      dk: o.dk,
      dv,
      causal: o.causal,
      window: o.window,
      keyPadding: o.keyPadding,
      scale: o.scale,
      maskFill: o.maskFill,
      returnScores: true,
      kernel: 'naive',
      ...extra,
    });
  };
  // The standard line: scale 1/√d_k and a −∞ fill whatever the controls say (standardModel).
  const std = run({ scale: null, maskFill: 'neg_inf' });
  const opts = variantOptions(variant);
  const chg = run(opts);
  const h = Math.min(Math.max(0, head), o.heads - 1);
  const view = (r: typeof std): HeadView => ({
    weights: slice(r.weights!, h, T * T),
    scores: r.scores ? slice(r.scores, h, T * T) : null,
    output: slice(r.headOutputs, h, T * dv),
    values: slice(r.v, Math.floor(h / (o.heads / kv)), T * dv),
    rowSums: slice(r.rowSums!, h, T),
  });
  const standard = view(std),
    changed = view(chg);
  const allowed = core.allowedMask({
    t: T,
    causal: o.causal,
    window: o.window,
    keyPadding: o.keyPadding,
    mask: o.mask,
  });
  return comparison(s.source, s.tokens, o.heads, h, dv, allowed, standard, changed, opts.normalizer);
}

/** The standard computation and the state's variant, same example (the page's, or the student's
 *  own Q, K, V when `student` is given), head and tokens. */
export function compare(
  core: AttnCore,
  m: RunModel,
  variant: VariantState,
  head: number,
  student: StudentInputs | null = null,
): Comparison {
  if (student) return compareStudent(core, student, variant, head);
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
  return comparison(null, ex.tokens, ex.heads, h, dv, allowed, standard, changed, opts.normalizer);
}
