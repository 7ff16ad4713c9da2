// Turns a State into calls on the wasm core (docs/js-api.md). Runs inside the Worker.
import type { State } from '../app/state';
import { keyPadding } from './mask';
import type { AttentionResult } from './protocol';

import type { AttnCore } from './attn-core';

export function scaleValue(s: State): number | null {
  if (s.model.scale === 'sqrt') return null;
  if (s.model.scale === 'none') return 1;
  return s.model.scale;
}

/** Copy anything array-like into a fresh Float32Array (the core promises copies; be safe). */
function f32(a: ArrayLike<number> | null | undefined): Float32Array {
  return a ? Float32Array.from(a as ArrayLike<number>) : new Float32Array(0);
}

export function computeAttention(core: AttnCore, s: State): AttentionResult {
  const t0 = performance.now();
  const T = s.model.tokens.length;
  const ex =
    s.model.source === 'induction'
      ? core.example('induction', { tokens: s.model.tokens, sharpness: s.model.sharpness })
      : core.example('random', { seed: s.model.seed, t: T, dModel: s.model.dModel, heads: s.model.heads, kvHeads: s.model.kvHeads, dk: s.model.dK, dv: s.model.dK, causal: s.model.causal, tokens: s.model.tokens, init: s.model.init, generator: s.model.generator });
  const r = core.multiHeadAttention(ex.x, ex.wq, ex.wk, ex.wv, ex.wo, {
    t: ex.t,
    dModel: ex.dModel,
    heads: ex.heads,
    kvHeads: ex.kvHeads,
    dk: ex.dk,
    dv: ex.dv,
    causal: s.model.causal,
    window: s.model.window,
    keyPadding: keyPadding(ex.t, s.model.padding),
    scale: scaleValue(s),
    maskFill: s.model.fill,
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
