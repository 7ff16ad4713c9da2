// The student's arrays (state.arrays) → an attention result, on the wasm core (runs in the Worker,
// or on the page's thread). Three modes (state.ts):
//   weights      W is shown as it is, after checkWeights (rows sum to 1, causal shape, NaN); when
//                the page's own example has the same T, it is computed too and compared (max |Δ|)
//   qkv          core.attention(Q, K, V) with the page's mask, fill and scale (+ the student's mask)
//   projections  core.multiHeadAttention(X, W_q, W_k, W_v) as lesson 2 writes it; the heads are
//                the page's `heads` (W_q's columns split evenly, lesson 1's form)
// Refusals are thrown as the core's are (name 'AttnError', `field` = the link key), so the page
// shows them in its error banner and keeps the last picture. Pure: no DOM.
import {
  ARRAY_LINK_KEYS,
  ARRAY_MESSAGE_MAX_CHARS,
  ArrayParseError,
  checkAttentionInputs,
  checkProjectionInputs,
  checkWeights,
  compareArrays,
  decodeArrayLink,
  shapeText,
  type ArrayRole,
  type NdArray,
  emptyRows,
  indexText,
  maskLooksInverted,
  rowsText,
  WEIGHTS_NAN_CAUSE,
} from './index';
import type { AttnCore } from '../../wasm/attn-core';
import { arraysMode, ROLE_NAME, type ArraysSlice } from './state';
import { coreOptions } from '../../shared/core-options';
import type { ArraysInfo, AttentionResult } from '../protocol';
import type { ModelSlice } from '../state';

export type ArraysComputeState = ModelSlice & ArraysSlice;

/** A refusal the page shows like the core's own (error banner, last picture kept). */
function refuse(message: string, role: ArrayRole | null): Error {
  return Object.assign(new Error(message), { name: 'AttnError', field: role ? ARRAY_LINK_KEYS[role] : 'arrays' });
}

function decode(s: ArraysSlice, role: ArrayRole): NdArray {
  try {
    const a = decodeArrayLink(s.arrays[role], ARRAY_LINK_KEYS[role], ARRAY_MESSAGE_MAX_CHARS);
    return { ...a, name: ROLE_NAME[role], printStep: s.arrays.step };
  } catch (e) {
    throw refuse(`your ${ROLE_NAME[role]}: ${(e as Error).message}`, role);
  }
}

/** Runs a role check, turning its ArrayParseError into a refusal. */
function checked<T>(f: () => T, role: ArrayRole | null): T {
  try {
    return f();
  } catch (e) {
    if (e instanceof ArrayParseError) throw refuse(e.message, role);
    throw e;
  }
}

type Arr = Float32Array | Float64Array;
const f32 = (a: NdArray): Float32Array => (a.data instanceof Float32Array ? a.data : Float32Array.from(a.data));

/** The labels: the page's tokens when there is one per position, else the positions. */
function labels(s: ModelSlice, t: number): { tokens: string[]; fromPositions: boolean } {
  if (s.model.tokens.length === t) return { tokens: [...s.model.tokens], fromPositions: false };
  return { tokens: Array.from({ length: t }, (_, i) => String(i)), fromPositions: true };
}

/** What core.attention / core.check are called with for the qkv and projections modes. */
export interface ArraysCall {
  q: Float32Array;
  k: Float32Array;
  v: Float32Array;
  opts: Parameters<AttnCore['attention']>[3];
  warnings: string[];
}

/** The student's Q, K, V (given, or projected by the core from X) and the options of the call. */
export function arraysCall(
  core: AttnCore,
  s: ArraysComputeState,
): ArraysCall & {
  mha?: ReturnType<AttnCore['multiHeadAttention']>;
  /** The projections mode's inputs as they arrived (float64 from a float64 file), for a caller that
   *  runs them in another precision. */
  projections?: { x: Arr; wq: Arr; wk: Arr; wv: Arr; dModel: number };
  /** The qkv mode's Q, K, V as they arrived. */
  given?: { q: Arr; k: Arr; v: Arr };
  dModel: number;
} {
  const mode = arraysMode(s.arrays);
  const common = { returnScores: true, kernel: 'naive' as const };
  if (mode === 'qkv') {
    const Q = decode(s, 'q'),
      K = decode(s, 'k'),
      V = decode(s, 'v');
    const M = s.arrays.mask !== '' ? decode(s, 'mask') : null;
    const { dims, warnings } = checked(() => checkAttentionInputs({ Q, K, V, mask: M }), null);
    // T_q ≠ T_k: cross-attention (T_q × T_k weights), as with the page's second sentence: the
    // causal mask and the window belong to a sequence attending to itself, so they are not applied.
    const tq = dims.tq,
      tk = dims.tk;
    const m = coreOptions(s.model, tq, tq !== tk ? tk : undefined);
    let mask: Uint8Array | null = null;
    if (M && dims.mask === 'padding') {
      // A (T_k,) key mask, 1 = may attend: ANDed with the page's padding.
      for (let j = 0; j < tk; j++) if (!(M.data[j] !== 0 && !Number.isNaN(M.data[j]))) m.keyPadding![j] = 0;
    } else if (M) {
      mask = new Uint8Array(tq * tk);
      for (let k = 0; k < mask.length; k++) mask[k] = M.data[k] !== 0 && !Number.isNaN(M.data[k]) ? 1 : 0;
    }
    const opts = {
      heads: dims.heads,
      kvHeads: dims.kvHeads,
      tq,
      tk,
      dk: dims.dk,
      dv: dims.dv,
      ...m,
      mask,
      ...common,
    };
    return {
      q: f32(Q),
      k: f32(K),
      v: f32(V),
      given: { q: Q.data, k: K.data, v: V.data },
      opts,
      warnings,
      dModel: dims.heads * dims.dv,
    };
  }
  if (mode === 'projections') {
    const X = decode(s, 'x'),
      Wq = decode(s, 'wq'),
      Wk = decode(s, 'wk'),
      Wv = decode(s, 'wv');
    const heads = s.model.heads;
    const { dims, warnings } = checked(() => checkProjectionInputs({ X, W_q: Wq, W_k: Wk, W_v: Wv }, heads), null);
    const t = dims.t;
    const m = coreOptions(s.model, t);
    // No W_o in lesson 2: a zero W_o (its output is not shown: the Output view shows the merged heads).
    const wo = new Float32Array(dims.heads * dims.dv * dims.dModel);
    const mha = core.multiHeadAttention(f32(X), f32(Wq), f32(Wk), f32(Wv), wo, {
      t,
      dModel: dims.dModel,
      heads: dims.heads,
      kvHeads: dims.heads,
      dk: dims.dk,
      dv: dims.dv,
      ...m,
      ...common,
    });
    const opts = {
      heads: dims.heads,
      kvHeads: dims.heads,
      tq: t,
      tk: t,
      dk: dims.dk,
      dv: dims.dv,
      ...m,
      mask: null,
      ...common,
    };
    const projections = { x: X.data, wq: Wq.data, wk: Wk.data, wv: Wv.data, dModel: dims.dModel };
    return { q: mha.q, k: mha.k, v: mha.v, opts, warnings, mha, projections, dModel: dims.heads * dims.dv };
  }
  throw refuse('no complete set of arrays: give W, or Q, K and V, or X, W_q, W_k and W_v', null);
}

/** The result for the student's arrays. `example`: the page's own result for the same state
 *  (only called in the weights mode, and only when its T matches, for the comparison). */
export function computeArrays(core: AttnCore, s: ArraysComputeState, example: () => AttentionResult): AttentionResult {
  const t0 = performance.now();
  const mode = arraysMode(s.arrays);
  if (mode === 'weights') return computeWeights(core, s, example, t0);
  if (mode === 'none') throw refuse('no complete set of arrays: give W, or Q, K and V, or X, W_q, W_k and W_v', null);
  const c = arraysCall(core, s);
  const { q, k, v, opts } = c;
  const t = opts.tq,
    tk = opts.tk ?? t,
    H = opts.heads,
    dv = opts.dv;
  let weights: Float32Array,
    scores: Float32Array | null,
    entropy: Float32Array,
    rowSums: Float32Array,
    headOutputs: Float32Array,
    nanRowsPerHead: number[],
    scale: number;
  if (c.mha) {
    const r = c.mha;
    [weights, scores, entropy, rowSums, headOutputs, nanRowsPerHead, scale] = [
      r.weights!,
      r.scores ?? null,
      r.entropy,
      r.rowSums!,
      r.headOutputs,
      Array.from(r.nanRowsPerHead),
      r.scale,
    ];
  } else {
    const r = core.attention(q, k, v, opts);
    [weights, scores, entropy, rowSums, headOutputs, nanRowsPerHead, scale] = [
      r.weights!,
      r.scores ?? null,
      r.entropy,
      r.rowSums!,
      r.output,
      Array.from(r.nanRowsPerHead),
      r.scale,
    ];
  }
  // The heads side by side (T, H·d_v), by the core (an identity W_o): what the Output view shows.
  const eye = new Float32Array(H * dv * H * dv);
  for (let i = 0; i < H * dv; i++) eye[i * H * dv + i] = 1;
  const merged = core.mergeHeads(headOutputs, eye, { t, heads: H, dv, dModel: H * dv }).merged;
  const allowed = core.allowedMask({
    tq: t,
    tk,
    causal: opts.causal,
    window: opts.window,
    keyPadding: opts.keyPadding,
    mask: opts.mask,
  });
  const { tokens, fromPositions } = labels(s, t);
  const keyTokens = tk === t ? tokens : labels(s, tk).tokens;
  const what =
    mode === 'qkv'
      ? `Q ${shapeText(shapeOf(H, t, opts.dk))}, K${tk !== t ? ` ${shapeText(shapeOf(opts.kvHeads ?? H, tk, opts.dk))}` : ''}, V`
      : `X, W_q, W_k, W_v (${H} head${H > 1 ? 's' : ''})`;
  const inverted = c.warnings.find((w) => w.startsWith('the mask looks inverted')) ?? null;
  const nanRows = rowsWithNaN(weights, H, t, tk);
  const nanCause = nanRows.length === 0 ? null : nanCauseOf(s, c, allowed, t, tk, nanRows, inverted);
  const arrays: ArraysInfo = {
    mode,
    findings: [
      tk === t
        ? `Computed by the core from your ${what} with the page’s mask, fill and scale.`
        : `Computed by the core from your ${what} as cross-attention (${t} queries × ${tk} keys) with the page’s padding, fill and scale; no causal mask or window (they belong to a sequence attending to itself).`,
      ...c.warnings,
    ],
    fromPositions,
    compare: null,
    compareNote: null,
    printStep: s.arrays.step,
    nanCause,
    headline: inverted ? 'the mask looks inverted: pass ~mask (1 = may attend)' : null,
  };
  return {
    tokens,
    t,
    tk,
    keyTokens,
    heads: H,
    kvHeads: opts.kvHeads ?? H,
    dModel: H * dv,
    dk: opts.dk,
    dv,
    scale,
    weights,
    scores,
    entropy,
    rowSums,
    headOutputs,
    merged,
    output: merged.slice(),
    allowed,
    nanRowsPerHead,
    check: null,
    computeMs: performance.now() - t0,
    arrays,
  };
}

const shapeOf = (h: number, t: number, d: number) => (h > 1 ? [h, t, d] : [t, d]);

const cap = (x: string) => x.charAt(0).toUpperCase() + x.slice(1);

/** The rows (0-based) that hold a NaN in any head. */
function rowsWithNaN(w: Float32Array, H: number, t: number, tk = t): number[] {
  const out: number[] = [];
  for (let i = 0; i < t; i++) {
    let nan = false;
    for (let h = 0; h < H && !nan; h++)
      nan = w.subarray((h * t + i) * tk, (h * t + i + 1) * tk).some((x) => Number.isNaN(x));
    if (nan) out.push(i);
  }
  return out;
}

/** Why the student's Q, K, V (or X, W_q…) gave NaN rows: rows left without a key under the −∞
 *  fill (which masks: the student's, the page's causal / window / padding; an inverted mask named
 *  as such), or NaN / ±inf in the inputs (the cell); and where to act. */
function nanCauseOf(
  s: ArraysComputeState,
  c: ArraysCall,
  allowed: Uint8Array,
  t: number,
  tk: number,
  nanRows: number[],
  inverted: string | null,
): string {
  // Rows without a key are NaN by the fill only under −∞ (else the cause is in the values).
  const empty = new Set(s.model.fill === 'neg_inf' ? emptyRows(allowed, t, tk) : []);
  const masked = nanRows.filter((i) => empty.has(i));
  const other = nanRows.filter((i) => !empty.has(i));
  const out: string[] = [];
  if (masked.length > 0) {
    const given = c.opts.mask ?? null;
    const mine = given ? emptyRows(given, t, tk) : [];
    const byMineAlone = masked.every((i) => mine.includes(i));
    const parts: string[] = [];
    if (c.opts.mask || s.arrays.mask !== '') parts.push('your mask');
    if (!byMineAlone || parts.length === 0) {
      if (c.opts.causal) parts.push('the page’s causal mask');
      if (c.opts.window && c.opts.window < tk) parts.push(`the page’s window of ${c.opts.window}`);
      const pad = s.model.padding.filter((p) => p >= 0 && p < tk);
      if (pad.length > 0) parts.push(`the page’s padding (${pad.join(', ')})`);
    }
    out.push(
      `${cap(rowsText(masked))} (counting from 0) may attend to no key under ${parts.join(' AND ')}, and the fill is −∞, so the softmax computes exp(−∞ − (−∞)) = NaN.`,
    );
    if (inverted && tk === t)
      out.push(
        `Your mask looks inverted: here 1 / True = may attend (lesson 1’s convention), and it ${maskLooksInverted(given!, t)}, as lesson 2’s np.triu(…, k=1) of forbidden keys does. Pass ~mask (in a notebook: ap.show(…, mask=~mask)).`,
      );
    else
      out.push(
        `Allow at least one key in each row${parts[0] === 'your mask' ? ' (in your mask' + (parts.length > 1 ? ', or turn Causal off at the side: causal=False in ap.show' : '') + ')' : ' (turn Causal off, widen the window or remove padding at the side)'}, or pick the −1e9 fill (uniform rows) or the zero fill (fill='finite' / 'zero' in ap.show).`,
      );
  }
  if (other.length > 0) {
    const inputs = c.warnings.filter((w) => / holds \d+ NaN or infinite/.test(w));
    out.push(
      `${cap(rowsText(other))} (counting from 0) ${other.length > 1 ? 'are' : 'is'} NaN because of your values, not a mask: ${inputs.length > 0 ? inputs.join('; ') : 'a score overflowed'}. Fix the array that computed them.`,
    );
  }
  return out.join(' ');
}

function computeWeights(
  core: AttnCore,
  s: ArraysComputeState,
  example: () => AttentionResult,
  t0: number,
): AttentionResult {
  const W = decode(s, 'weights');
  const c = checked(() => checkWeights(W, 'W'), 'weights');
  if (c.tq !== c.tk)
    throw refuse(
      `W has shape ${shapeText(W.shape)}: the page draws a W you give as square weights (one query per key), so T_q must equal T_k; give Q, K, V for cross-attention (T_q × T_k)`,
      'weights',
    );
  const t = c.tq,
    H = c.heads;
  const findings: string[] = [];
  const ok = c.badRows === 0 && c.negatives === 0;
  const rows = H * t - c.nanRows - c.zeroRows;
  if (ok)
    findings.push(
      `Every row${c.nanRows + c.zeroRows > 0 ? ` (${rows} of ${H * t}, leaving out NaN and all-zero rows)` : ''} sums to 1 (largest error ${c.maxRowError.toExponential(1)}, allowed ${c.tolerance.toExponential(1)}).`,
    );
  findings.push(...c.findings);
  findings.push(
    c.causal
      ? 'Causal shape: every entry above the diagonal is 0.'
      : 'Not causal: some entry above the diagonal is not 0.',
  );
  const { tokens, fromPositions } = labels(s, t);
  const allowed = core.allowedMask({ t }); // nothing is masked by the page: the student's zeros show as zeros
  const weights = f32(W).slice();
  const nanCause =
    c.nanRows === 0
      ? null
      : `Your W holds NaN in ${rowsText(rowsWithNaN(f32(W), H, t))} (first at ${indexText('W', c.nanAt!)}, counting from 0): ${WEIGHTS_NAN_CAUSE}.`;
  const arrays: ArraysInfo = {
    mode: 'weights',
    findings,
    fromPositions,
    compare: null,
    compareNote: null,
    printStep: s.arrays.step,
    nanCause,
    headline: null,
  };
  if (s.model.tokens.length !== t) {
    arrays.compareNote = `To compare, set up an example with ${t} tokens (the page’s has ${s.model.tokens.length}), e.g. lesson 2’s.`;
  } else {
    const ref = example();
    const sameHeads = ref.heads === H;
    if (!sameHeads && H !== 1)
      arrays.compareNote = `Your W has ${H} heads, the page’s example ${ref.heads}: nothing to compare head by head.`;
    else {
      const n = H * t * t;
      const refW = ref.weights.slice(0, n); // head 1 when your W is one head of several
      const cmp = compareArrays(W, { shape: W.shape, data: refW });
      const diff = Float32Array.from(cmp.diff);
      arrays.compare = {
        reference: refW,
        diff,
        maxAbs: cmp.maxAbs,
        at: cmp.at,
        tolerance: cmp.tolerance,
        matches: cmp.matches,
        nanMismatches: cmp.nanMismatches,
        refHeads: ref.heads,
      };
    }
  }
  return {
    tokens,
    t,
    tk: t,
    keyTokens: tokens,
    heads: H,
    kvHeads: H,
    dModel: 0,
    dk: 0,
    dv: 0,
    scale: 0,
    weights,
    scores: null,
    entropy: new Float32Array(H * t),
    rowSums: null,
    headOutputs: new Float32Array(0),
    merged: new Float32Array(0),
    output: new Float32Array(0),
    allowed,
    nanRowsPerHead: nanRowsPerHead(weights, H, t),
    check: null,
    computeMs: performance.now() - t0,
    arrays,
  };
}

function nanRowsPerHead(w: Float32Array, H: number, t: number): number[] {
  const out = new Array<number>(H).fill(0);
  for (let h = 0; h < H; h++)
    for (let i = 0; i < t; i++) {
      const row = w.subarray((h * t + i) * t, (h * t + i + 1) * t);
      if (row.some((x) => Number.isNaN(x))) out[h]++;
    }
  return out;
}

/** The student's arrays as the Lesson view runs them (its pictures and lines): Q, K, V, or X, W_q,
 *  W_k, W_v for the core to project in the run's own precision. null for a W alone (it has no Q,
 *  K, V) or no arrays. Throws the same refusals as the attention views. */
export function lessonInputs(core: AttnCore, s: ArraysComputeState): StudentArrays | null {
  const mode = arraysMode(s.arrays);
  if (mode !== 'qkv' && mode !== 'projections') return null;
  const c = arraysCall(core, s);
  const tokens = labels(s, c.opts.tq).tokens;
  if (c.projections) return { source: 'your X, W_q, W_k, W_v', tokens, opts: c.opts, ...c.projections };
  return { source: 'your Q, K, V', tokens, opts: c.opts, ...c.given! };
}

/** lessonInputs' result (structurally the Lesson's StudentInputs): the arrays as they arrived,
 *  Float64Arrays from a float64 file, Float32Arrays from a link or a float32 file. */
export type StudentArrays = { source: string; tokens: string[]; opts: ArraysCall['opts'] } & (
  { q: Arr; k: Arr; v: Arr } | { x: Arr; wq: Arr; wk: Arr; wv: Arr; dModel: number }
);
