// The Q, K and V of the drawn computation, every head, as the core computes them: what "Why this
// weight?" takes apart and what the map of queries and keys projects. The example's projections
// (compute.ts), the student's Q, K, V, or their X and W_q, W_k, W_v; under the state's variant.
// Cached on the state that makes them. No DOM.
import type { AttnCore } from '../wasm/load-core';
import { coreOptions } from '../shared/core-options';
import { variantOptions, type VariantState } from '../shared/variant';
import { lessonInputs } from './arrays/compute';
import { arraysMode, type ArraysState } from './arrays/state';
import type { AttentionContext } from './context';
import { projections } from './compute';
import type { WhatIfRows } from './what-if';
import { getTrainedAttention, type TrainedAttention } from '../shared/trained-model';

export type Rows = WhatIfRows;

/** The state read besides the model (the page's state has both). */
interface Extra {
  lesson?: VariantState;
  arrays?: ArraysState;
}

const f = (x: Float32Array | Float64Array): Float32Array => (x instanceof Float32Array ? x : Float32Array.from(x));

export class HeadRows {
  private cache: { key: string; maskKey: string; rows: Rows | string } | null = null;
  private trained: { ta: TrainedAttention | null; layer: number; rows: Rows | string } | null = null;

  /** Q, K, V and the call's options, or a sentence saying why there are none. */
  get(core: AttnCore, ctx: AttentionContext): Rows | string {
    const s = ctx.state as AttentionContext['state'] & Extra;
    if (ctx.result.source) {
      // The Train tab's model ("Open in Heads view"): its layer's q, k, v as its attention read them.
      const ta = getTrainedAttention();
      if (this.trained?.ta !== ta || this.trained.layer !== ta?.layer)
        this.trained = { ta, layer: ta?.layer ?? -1, rows: trainedRows(ta, ctx.result.source) };
      return this.trained.rows;
    }
    // Q, K and V do not depend on the mask, the fill or the scale: a change of those (a slider's
    // drag) reuses them (at T = 256 the projections are ~2·10⁸ multiply-adds) with new options.
    const { causal, window, padding, fill, scale, ...weights } = s.model;
    const key = JSON.stringify([weights, s.lesson ?? null, s.arrays ?? null, ctx.result.source ?? null]);
    const maskKey = JSON.stringify([causal, window, padding, fill, scale]);
    if (this.cache?.key === key) {
      if (this.cache.maskKey !== maskKey) {
        const fresh = compute(core, ctx, s, typeof this.cache.rows === 'string' ? null : this.cache.rows);
        this.cache = { key, maskKey, rows: fresh };
      }
      return this.cache.rows;
    }
    const rows = compute(core, ctx, s, null);
    this.cache = { key, maskKey, rows };
    return rows;
  }
}

/** One layer of the Train tab's model: its q, k, v on the probe and the core's options that form
 *  the trainer's weights from them (shared/trained-model.ts). */
function trainedRows(ta: TrainedAttention | null, source: string): Rows | string {
  if (!ta?.rows) return `${source}: its queries and keys did not come with it; open it again from the Train tab.`;
  const l = Math.min(ta.layer, ta.layers - 1);
  const x = ta.rows.layers[l];
  return {
    q: x.q,
    k: x.k,
    v: x.v,
    heads: ta.heads,
    kvHeads: ta.kvHeads,
    t: ta.tokens.length,
    dk: ta.rows.dk,
    dv: ta.rows.dk,
    opts: { ...ta.rows.options, precision: 'float32' },
  };
}

/** `same`: the rows of the same weights under other mask options (only the options are new). */
function compute(
  core: AttnCore,
  ctx: AttentionContext,
  s: AttentionContext['state'] & Extra,
  same: Rows | null,
): Rows | string {
  const variant = variantOptions(s.lesson);
  const precision = variant.precision === 'float16' ? 'float32' : variant.precision;
  const v = { ...variant, precision };
  const mode = s.arrays ? arraysMode(s.arrays) : 'none';
  if (mode === 'weights') return 'Your W has no queries and keys to take apart: give Q, K, V or X, W_q, W_k, W_v.';
  try {
    if (mode === 'qkv' || mode === 'projections') {
      const a = lessonInputs(core, { model: s.model, arrays: s.arrays! })!;
      const o = a.opts;
      if ('q' in a) {
        return {
          q: f(a.q),
          k: f(a.k),
          v: f(a.v),
          heads: o.heads,
          kvHeads: o.kvHeads ?? o.heads,
          t: o.tq,
          tk: o.tk,
          dk: o.dk,
          dv: o.dv,
          opts: { ...o, ...v, precision: 'float32' },
        };
      }
      const r = core.multiHeadAttention(
        f(a.x),
        f(a.wq),
        f(a.wk),
        f(a.wv),
        new Float32Array(o.heads * o.dv * a.dModel),
        { t: o.tq, dModel: a.dModel, heads: o.heads, dk: o.dk, dv: o.dv, ...coreOptions(s.model, o.tq) },
      );
      return {
        q: r.q,
        k: r.k,
        v: r.v,
        heads: o.heads,
        kvHeads: o.heads,
        t: o.tq,
        dk: o.dk,
        dv: o.dv,
        opts: { ...coreOptions(s.model, o.tq), ...v, precision: 'float32' },
      };
    }
    // The example's projections, as the JSON export takes them (compute.ts).
    // Cross-attention: T_k keys from the second sentence, no causal mask or window.
    const r = ctx.result;
    const opts = { ...coreOptions(s.model, r.t, r.cross ? r.tk : undefined), ...v, precision: 'float32' };
    if (same) return { ...same, opts };
    const p = projections(core, s);
    return { ...p, heads: r.heads, t: r.t, tk: r.tk, opts };
  } catch (e) {
    return `The queries and keys could not be computed: ${(e as Error).message}`;
  }
}
