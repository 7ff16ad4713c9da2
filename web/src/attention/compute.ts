// Turns a State into calls on the wasm core (docs/js-api.md). Runs inside the Worker.
import type { ModelSlice } from './state';
import { isStandard, variantOptions, type VariantSlice } from '../shared/variant';
import { coreExample, coreMaskOptions, coreOptions, runExample } from '../shared/core-options';
import type { AttentionResult, CheckResult } from './protocol';

import type { AttnCore } from '../wasm/attn-core';
import { arraysCall, computeArrays } from './arrays/compute';
import { arraysMode, type ArraysSlice } from './arrays/state';

/** The model, and the attention variant the Lesson feature sets (state.lesson; absent = standard):
 *  the Heads, Mask, Scale and Output views show the variant too. */
type State = ModelSlice & VariantSlice;

/** Results of a float64 call as the Float32Arrays the views draw. */
function f32(a: Float32Array | Float64Array): Float32Array {
  return a instanceof Float32Array ? a : Float32Array.from(a);
}

/** core.check runs about ten naive calls (float32, float64, tiled); the page runs it with every
 *  computation while H·T²·(d_k + d_v) stays under this, and on request above it. */
export const CHECK_AUTO_WORK = 1 << 23;

export function checkWork(heads: number, t: number, dk: number, tk = t): number {
  return heads * t * tk * 2 * dk;
}

/** The state's example: tokens, X and the weights (lesson 1's model, or seeded random weights). */
export function exampleOf(core: AttnCore, s: State) {
  const m = s.model;
  return coreExample(core, m);
}

/** What the example depends on: the fields exampleOf reads (not the mask, scale or fill). */
export function exampleKey(s: State): string {
  const m = s.model;
  const kv = m.kvTokens ?? [];
  return m.source === 'induction'
    ? JSON.stringify(['induction', m.tokens, kv, m.sharpness])
    : JSON.stringify([
        'random',
        m.seed,
        m.tokens,
        kv,
        m.dModel,
        m.heads,
        m.kvHeads,
        m.dK,
        m.causal,
        m.init,
        m.generator,
      ]);
}

type Example = ReturnType<typeof exampleOf>;

/** T_k of an example: its key/value rows (cross-attention), else T. */
export function keysOf(ex: Example): number {
  return ex.xKv && ex.tk ? ex.tk : ex.t;
}
/** The core options' T_k argument: set for a cross-attention example only. */
function crossTk(ex: Example): number | undefined {
  return ex.xKv ? keysOf(ex) : undefined;
}
/** The projected, split Q, K, V of an example (multiHeadAttention's q, k, v). */
interface Projected {
  ex: Example;
  q: Float32Array;
  k: Float32Array;
  v: Float32Array;
  dk: number;
  dv: number;
  kvHeads: number;
}
/** One head-attention computation in the shape both paths give. */
interface Computed extends Pick<
  AttentionResult,
  'scale' | 'weights' | 'scores' | 'entropy' | 'headOutputs' | 'merged' | 'output'
> {
  rowSums: Float32Array;
  ex: Example;
  proj: Projected;
  nanRowsPerHead: ArrayLike<number>;
}

/**
 * Computes states on one core, keeping the last example and its projected Q, K, V: when only the
 * mask, the scale or the fill changed (a window slider being dragged), it reruns attention on them
 * and core.mergeHeads instead of the whole multiHeadAttention (the same bits: the core runs the
 * same steps; tests/js/multihead.test.mjs). Drawing a new example costs T·d_model + 4·d_model²
 * normal draws and the projections 6·T·d_model·H·d_k flops; at T = 256, d_model 512 that was most
 * of the page's 75 ms per change.
 */
export class Computer {
  private cache: { key: string; proj: Projected } | null = null;
  /** Arrays of results the page has replaced, for the next results to be copied into. */
  readonly pool = new ArrayPool();
  constructor(readonly core: AttnCore) {}

  private attend(s: State): Computed {
    const core = this.core;
    const m = s.model;
    const key = exampleKey(s);
    const variant = variantOptions(s.lesson);
    // Float64 and float16 run the whole call in that precision (projections included): no cache.
    const cached = this.cache && this.cache.key === key && variant.precision === 'float32' ? this.cache.proj : null;
    if (cached) {
      const { ex, q, k, v, dk, dv, kvHeads } = cached;
      const H = ex.heads,
        T = ex.t,
        Tk = keysOf(ex),
        pool = this.pool;
      // Copied into recycled arrays where there are some: in Chromium a fresh 2 MiB array costs
      // about as much as the whole kernel at T = 256 (its pages are touched for the first time).
      const a = core.attention(
        q,
        k,
        v,
        {
          heads: H,
          kvHeads,
          tq: T,
          tk: Tk,
          dk,
          dv,
          ...coreOptions(m, T, crossTk(ex)),
          returnScores: true,
          kernel: 'naive',
          ...variant,
          precision: 'float32',
        },
        {
          weights: pool.take(H * T * Tk),
          scores: pool.take(H * T * Tk),
          output: pool.take(H * T * dv),
          entropy: pool.take(H * T),
          rowSums: pool.take(H * T),
        },
      );
      const mo = core.mergeHeads(
        a.output,
        ex.wo,
        { t: T, heads: H, dv, dModel: ex.dModel },
        { merged: pool.take(T * H * dv), output: pool.take(T * ex.dModel) },
      );
      return {
        ex,
        proj: cached,
        scale: a.scale,
        weights: a.weights!,
        scores: a.scores ?? null,
        entropy: a.entropy,
        rowSums: a.rowSums!,
        headOutputs: a.output,
        merged: mo.merged,
        output: mo.output,
        nanRowsPerHead: a.nanRowsPerHead,
      };
    }
    this.cache = null;
    const ex = exampleOf(core, s);
    const r = runExample(core, ex, m, variant);
    const proj: Projected = { ex, q: f32(r.q), k: f32(r.k), v: f32(r.v), dk: r.dk, dv: r.dv, kvHeads: r.kvHeads };
    if (variant.precision === 'float32') this.cache = { key, proj };
    return {
      ex,
      proj,
      scale: r.scale,
      weights: f32(r.weights!),
      scores: r.scores ? f32(r.scores) : null,
      entropy: f32(r.entropy),
      rowSums: f32(r.rowSums!),
      headOutputs: f32(r.headOutputs),
      merged: f32(r.merged),
      output: f32(r.output),
      nanRowsPerHead: r.nanRowsPerHead,
    };
  }

  /** The state's result; with the Check when `check` and the state is small (CHECK_AUTO_WORK). */
  compute(s: State & Partial<ArraysSlice>, { check = true }: { check?: boolean } = {}): AttentionResult {
    if (s.arrays && arraysMode(s.arrays) !== 'none') {
      const withArrays = s as State & ArraysSlice;
      // The student's arrays are self-attention: the page's reference ignores a second sentence.
      const self = { ...s.model, kvTokens: [] };
      const r = computeArrays(this.core, withArrays, () => this.compute({ model: self }, { check: false }));
      // The Check runs on the student's Q, K, V (the weights mode has none: nothing to check).
      if (check && r.arrays!.mode !== 'weights' && checkWork(r.heads, r.t, r.dk) <= CHECK_AUTO_WORK)
        r.check = this.runArraysCheck(withArrays);
      return r;
    }
    const t0 = performance.now();
    const c = this.attend(s);
    const computeMs = performance.now() - t0;
    const ex = c.ex;
    // The mask every kernel applies, from the core (the page draws forbidden cells from it).
    const tk = keysOf(ex);
    const allowed = this.core.allowedMask({ tq: ex.t, tk, ...coreMaskOptions(s.model, ex.t, crossTk(ex)) });
    // core.check compares the standard computation's kernels; it takes no variant options.
    const doCheck = check && isStandard(s.lesson) && checkWork(ex.heads, ex.t, ex.dk, tk) <= CHECK_AUTO_WORK;
    return {
      tokens: [...ex.tokens],
      t: ex.t,
      tk,
      keyTokens: ex.xKv && ex.kvTokens ? [...ex.kvTokens] : [...ex.tokens],
      ...(ex.xKv ? { cross: true } : {}),
      heads: ex.heads,
      kvHeads: ex.kvHeads,
      dModel: ex.dModel,
      dk: ex.dk,
      dv: ex.dv,
      scale: c.scale,
      // The core's results are the caller's copies already: no second copy.
      weights: c.weights,
      scores: c.scores,
      entropy: c.entropy,
      rowSums: c.rowSums,
      headOutputs: c.headOutputs,
      merged: c.merged,
      output: c.output,
      allowed,
      nanRowsPerHead: Array.from(c.nanRowsPerHead),
      check: doCheck ? this.runCheck(s, c.proj) : null,
      computeMs,
    };
  }

  /** The Check on request (for states above CHECK_AUTO_WORK, or after a result drawn without it). */
  check(s: State & Partial<ArraysSlice>): CheckResult {
    const mode = s.arrays ? arraysMode(s.arrays) : 'none';
    if (mode === 'weights')
      throw Object.assign(
        new Error('your weights W were given, not computed: there is nothing for the Check to recompute'),
        { name: 'AttnError', field: 'uw' },
      );
    if (mode !== 'none') return this.runArraysCheck(s as State & ArraysSlice);
    const c = this.attend(s);
    this.pool.give([c.weights, c.scores, c.headOutputs, c.merged, c.output, c.entropy, c.rowSums]);
    return this.runCheck(s, c.proj);
  }

  /** Takes back the arrays of a result this Computer made, once nothing reads them any more. */
  recycle(r: AttentionResult): void {
    this.pool.give(resultArrays(r));
  }

  /** core.check on the student's Q, K, V (given, or projected from X by the core). */
  private runArraysCheck(s: State & ArraysSlice): CheckResult {
    const t0 = performance.now();
    const { q, k, v, opts } = arraysCall(this.core, s);
    const { returnScores: _r, kernel: _k, ...checkOpts } = opts;
    void _r;
    void _k;
    const c = this.core.check(q, k, v, checkOpts);
    return { ...c, ms: performance.now() - t0, t: opts.tq, heads: opts.heads, dk: opts.dk };
  }

  /** core.check on the state's own projected Q, K, V (the heads' attention, before W_o). */
  private runCheck(s: State, p: Projected): CheckResult {
    const ex = p.ex;
    if (!isStandard(s.lesson))
      throw new Error(
        'The Check compares the kernels of the standard computation; the core checks no attention variant (set the Lesson view’s lines back to standard to check).',
      );
    const t0 = performance.now();
    const c = this.core.check(p.q, p.k, p.v, {
      heads: ex.heads,
      kvHeads: p.kvHeads,
      tq: ex.t,
      tk: keysOf(ex),
      dk: p.dk,
      dv: p.dv,
      ...coreOptions(s.model, ex.t, crossTk(ex)),
    });
    return { ...c, ms: performance.now() - t0, t: ex.t, heads: ex.heads, dk: ex.dk };
  }
}

/** The projections Q, K, V of a state's example as X·W gives them (before qk-norm and RoPE), split
 *  per head: (H, T, d_k), (H_kv, T, d_k), (H_kv, T, d_v). For the JSON export, computed when it is
 *  asked for (not carried with every result: at T = 256 they are megabytes per change). */
export function projections(
  core: AttnCore,
  s: State,
): { q: Float32Array; k: Float32Array; v: Float32Array; dk: number; dv: number; kvHeads: number } {
  const ex = exampleOf(core, s);
  const m = s.model;
  const variant = variantOptions(s.lesson);
  const r = core.multiHeadAttention(ex.x, ex.wq, ex.wk, ex.wv, ex.wo, {
    t: ex.t,
    dModel: ex.dModel,
    heads: ex.heads,
    kvHeads: ex.kvHeads,
    dk: ex.dk,
    dv: ex.dv,
    ...(ex.xKv ? { xKv: ex.xKv, tk: ex.tk } : {}),
    ...coreOptions(m, ex.t, crossTk(ex)),
    kernel: 'naive',
    ...variant,
  });
  return { q: f32(r.q), k: f32(r.k), v: f32(r.v), dk: r.dk, dv: r.dv, kvHeads: r.kvHeads };
}

/** A result's large arrays (what the Worker transfers, and what the page gives back). */
export function resultArrays(r: AttentionResult): Float32Array[] {
  return [r.weights, r.scores, r.headOutputs, r.merged, r.output, r.entropy, r.rowSums].filter(
    (a): a is Float32Array => a !== null,
  );
}

/**
 * Float32Arrays to reuse, by length. Only whole, attached arrays are kept (a subarray or an array
 * transferred away is dropped), and only the most recent MAX of them, so a change of shape does
 * not pin old sizes.
 */
export class ArrayPool {
  static readonly MAX = 16;
  private free: Float32Array[] = [];

  take(length: number): Float32Array | undefined {
    const i = this.free.findIndex((a) => a.length === length);
    return i < 0 ? undefined : this.free.splice(i, 1)[0];
  }

  give(arrays: readonly (Float32Array | null | undefined)[]): void {
    for (const a of arrays) {
      if (!a || a.length === 0 || a.byteOffset !== 0 || a.byteLength !== a.buffer.byteLength) continue;
      if (this.free.includes(a)) continue;
      this.free.push(a);
    }
    if (this.free.length > ArrayPool.MAX) this.free.splice(0, this.free.length - ArrayPool.MAX);
  }

  get size(): number {
    return this.free.length;
  }
}

/** One-off helpers (tests): a fresh Computer each call, so no cache is involved. */
export function computeAttention(core: AttnCore, s: State): AttentionResult {
  return new Computer(core).compute(s);
}

export function checkAttention(core: AttnCore, s: State): CheckResult {
  return new Computer(core).check(s);
}

/** Rough flops of computing s (projections, attention, W_o), to choose where to compute it: the
 *  page computes small states on its own thread, inside the input event (a Worker's answer lands
 *  the picture a frame later), the rest in the Worker. A random model's shape is in the state;
 *  the hand-built model's is the core's choice, known here from `last` (the shown result) when it
 *  is the same model at the same length, and else null (unknown: the Worker computes it). */
export function computeFlops(
  s: State & Partial<ArraysSlice>,
  last: { state: State; result: AttentionResult } | null,
): number | null {
  if (s.arrays && arraysMode(s.arrays) !== 'none') return null; // the student's arrays: the Worker computes them
  const m = s.model;
  const t = m.tokens.length;
  const tk = m.kvTokens && m.kvTokens.length > 0 ? m.kvTokens.length : t;
  let h: number, kv: number, dm: number, dk: number;
  if (m.source === 'random') [h, kv, dm, dk] = [m.heads, m.kvHeads, m.dModel, m.dK];
  else if (last && last.state.model.source === m.source && last.result.t === t && last.result.tk === tk) {
    [h, kv, dm, dk] = [last.result.heads, last.result.kvHeads, last.result.dModel, last.result.dk];
  } else return null;
  return 2 * t * dm * h * dk + 4 * tk * dm * kv * dk + 4 * h * t * tk * dk + 2 * t * h * dk * dm;
}

/** A thrown core refusal (AttnError, or anything carrying a field) as the error a computation
 *  reports; null for anything else (a failure of the instance, not of the input). */
export function coreRefusal(err: unknown): { message: string; field: string | null; fatal: false } | null {
  const e = err as (Error & { field?: string }) | null;
  if (!e || (e.name !== 'AttnError' && typeof e.field !== 'string')) return null;
  return { message: String(e.message), field: e.field ?? null, fatal: false };
}
