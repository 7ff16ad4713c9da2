// Turns a State into calls on the wasm core (docs/js-api.md). Runs inside the Worker.
import type { State } from '../app/state';
import { keyPadding } from './mask';
import type { AttentionResult } from './protocol';

import type { AttnCore } from './attn-core';

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
