// Turns a State into calls on the wasm core (docs/js-api.md). Runs inside the Worker.
import type { State } from './state';
import { keyPadding } from './mask';
import type { AttentionResult } from './protocol';

/** The subset of the core's API the page uses. */
export interface AttnCore {
  example(name: 'induction' | 'random', opts: Record<string, unknown>): {
    tokens: string[]; t: number; dModel: number; heads: number; kvHeads: number; dk: number; dv: number; causal: boolean;
    x: Float32Array; wq: Float32Array; wk: Float32Array; wv: Float32Array; wo: Float32Array;
  };
  multiHeadAttention(x: Float32Array, wq: Float32Array, wk: Float32Array, wv: Float32Array, wo: Float32Array, opts: Record<string, unknown>): {
    output: Float32Array; merged: Float32Array; headOutputs: Float32Array; weights: Float32Array | null; scores: Float32Array | null;
    entropy: Float32Array; dk: number; dv: number; kvHeads: number; scale: number;
  };
  entropyStudy(opts?: Record<string, unknown>): { dk: number[]; scaled: number[]; unscaled: number[]; ceiling: number };
}

export function scaleValue(s: State): number | null {
  if (s.scale === 'sqrt') return null;
  if (s.scale === 'none') return 1;
  return s.scale;
}

/** Copy anything array-like into a fresh Float32Array (the core promises copies; be safe). */
function f32(a: ArrayLike<number> | null | undefined): Float32Array {
  return a ? Float32Array.from(a as ArrayLike<number>) : new Float32Array(0);
}

export function computeAttention(core: AttnCore, s: State): AttentionResult {
  const t0 = performance.now();
  const T = s.tokens.length;
  const ex =
    s.src === 'induction'
      ? core.example('induction', { tokens: s.tokens, sharpness: s.sharp })
      : core.example('random', { seed: s.seed, t: T, dModel: s.dm, heads: s.heads, kvHeads: s.kv, dk: s.dk, dv: s.dk, causal: s.causal, tokens: s.tokens, init: s.init });
  const r = core.multiHeadAttention(ex.x, ex.wq, ex.wk, ex.wv, ex.wo, {
    t: ex.t,
    dModel: ex.dModel,
    heads: ex.heads,
    kvHeads: ex.kvHeads,
    dk: ex.dk,
    dv: ex.dv,
    causal: s.causal,
    window: s.win,
    keyPadding: keyPadding(ex.t, s.pad),
    scale: scaleValue(s),
    maskFill: s.fill,
    returnScores: true,
    kernel: 'naive',
  });
  return {
    tokens: [...ex.tokens],
    t: ex.t,
    heads: ex.heads,
    kvHeads: ex.kvHeads,
    dModel: ex.dModel,
    dk: ex.dk,
    dv: ex.dv,
    scale: r.scale,
    weights: f32(r.weights),
    scores: r.scores ? f32(r.scores) : null,
    entropy: f32(r.entropy),
    headOutputs: f32(r.headOutputs),
    merged: f32(r.merged),
    output: f32(r.output),
    computeMs: performance.now() - t0,
  };
}
