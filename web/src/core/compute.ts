// Turns a State into calls on the wasm core (docs/js-api.md). Runs inside the Worker.
import type { State } from '../app/state';
import { keyPadding } from './mask';
import type { AttentionResult, CheckResult } from './protocol';

import type { AttnCore, CoreMhaResult } from './attn-core';

export function scaleValue(s: State): number | null {
  const scale = s.model.scale;
  if (scale === 'sqrt') return null;
  if (scale === 'none') return 1;
  return scale;
}

/** Copy anything array-like into a fresh Float32Array (the core promises copies; be safe). */
function f32(a: ArrayLike<number> | null | undefined): Float32Array {
  return a ? Float32Array.from(a as ArrayLike<number>) : new Float32Array(0);
}

/** core.check runs about ten naive calls (float32, float64, tiled); the page runs it with every
 *  computation while H·T²·(d_k + d_v) stays under this, and on request above it. */
export const CHECK_AUTO_WORK = 1 << 23;

export function checkWork(heads: number, t: number, dk: number): number {
  return heads * t * t * 2 * dk;
}

function maskOpts(s: State, t: number) {
  return { causal: s.model.causal, window: s.model.window, keyPadding: keyPadding(t, s.model.padding) };
}

/** The state's example: tokens, X and the weights (lesson 1's model, or seeded random weights). */
export function exampleOf(core: AttnCore, s: State) {
  const m = s.model;
  return m.source === 'induction'
    ? core.example('induction', { tokens: m.tokens, sharpness: m.sharpness })
    : core.example('random', { seed: m.seed, t: m.tokens.length, dModel: m.dModel, heads: m.heads, kvHeads: m.kvHeads, dk: m.dK, dv: m.dK, causal: m.causal, tokens: m.tokens, init: m.init, generator: m.generator });
}

function project(core: AttnCore, s: State) {
  const m = s.model;
  const ex = exampleOf(core, s);
  const r = core.multiHeadAttention(ex.x, ex.wq, ex.wk, ex.wv, ex.wo, {
    t: ex.t,
    dModel: ex.dModel,
    heads: ex.heads,
    kvHeads: ex.kvHeads,
    dk: ex.dk,
    dv: ex.dv,
    ...maskOpts(s, ex.t),
    scale: scaleValue(s),
    maskFill: m.fill,
    returnScores: true,
    kernel: 'naive',
  });
  return { ex, r };
}

/** core.check on the state's own projected Q, K, V (the heads' attention, before W_o). */
function runCheck(core: AttnCore, s: State, ex: { t: number; heads: number; kvHeads: number; dk: number; dv: number }, r: CoreMhaResult): CheckResult {
  const t0 = performance.now();
  const c = core.check(r.q, r.k, r.v, {
    heads: ex.heads, kvHeads: ex.kvHeads, tq: ex.t, tk: ex.t, dk: ex.dk, dv: ex.dv,
    ...maskOpts(s, ex.t), scale: scaleValue(s), maskFill: s.model.fill,
  });
  return { ...c, ms: performance.now() - t0, t: ex.t, heads: ex.heads, dk: ex.dk };
}

export function computeAttention(core: AttnCore, s: State): AttentionResult {
  const t0 = performance.now();
  const { ex, r } = project(core, s);
  const computeMs = performance.now() - t0;
  // The mask every kernel applies, from the core (the page draws forbidden cells from it).
  const allowed = core.allowedMask({ t: ex.t, ...maskOpts(s, ex.t) });
  const check = checkWork(ex.heads, ex.t, ex.dk) <= CHECK_AUTO_WORK ? runCheck(core, s, ex, r) : null;
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
    allowed,
    nanRowsPerHead: Array.from(r.nanRowsPerHead),
    check,
    computeMs,
  };
}

/** The Check on request (for states above CHECK_AUTO_WORK). */
export function checkAttention(core: AttnCore, s: State): CheckResult {
  const { ex, r } = project(core, s);
  return runCheck(core, s, ex, r);
}
