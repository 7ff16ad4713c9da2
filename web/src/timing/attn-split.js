// @ts-check
// Split one core.attention call across N workers, exactly, and merge the parts back.
// Pure JavaScript (no DOM, no Worker, no wasm), type-checked through its JSDoc (tsc --noEmit -p web)
// against the core's API types (wasm/attn-core.d.ts): the page's timing lab (TypeScript) and
// bench/run.mjs (Node worker_threads) import this same file.
//
// Two ways to split (planSplit picks one):
//  - 'heads' (H >= N): each part gets whole K/V head groups with their query heads; when there
//    are fewer K/V heads than parts (GQA/MQA), a group's query heads are shared out and each
//    part gets a copy of that one K/V head. Every part keeps the full T_q and T_k, so the
//    masks are unchanged.
//  - 'rows' (H < N, e.g. one head): query rows are independent. A block [i0, i1) keeps every
//    head. With a causal mask it gets only the first i1 + (T_k - T_q) keys (and key padding and
//    custom-mask columns): its own T_q' = i1 - i0, T_k' = i1 + T_k - T_q put the bottom-right
//    causal/window diagonal exactly where it was (query i sees key j iff j <= i + (T_k - T_q);
//    window: j > i + (T_k - T_q) - w). Where that cannot hold exactly (a window without causal,
//    which needs keys past the diagonal; the 'finite' fill with rows that may be fully masked,
//    whose uniform weights are 1/T_k; returnScores, which returns every key's score; a block
//    that sees no key at all) the block gets all keys and the causal/window rule as an explicit
//    custom mask (ANDed with the caller's). Without causal/window masks a block gets all keys.
//    Causal blocks are balanced by area (later rows see more keys), not by row count, and
//    their boundaries are rounded to multiples of `align` rows (64: the tiled kernel's query tile)
//    where T_q allows.
// Inputs are copied (compact arrays, ready to post to a Worker); nothing is shared, so this works
// without SharedArrayBuffer and without cross-origin isolation.
// The causal/window rule is the core's: a call with causal or a window passes `ranges`, the
// result of core.keyRanges({ tq, tk, causal, window }) for the full call (the key range [lo, hi)
// of every query row), and this file never restates the rule.

/**
 * The options of the call to split: core.attention's, with kvHeads defaulting to heads and dv to dk,
 * plus `ranges` = core.keyRanges({ tq, tk, causal, window }) (needed when causal or window > 0).
 * @typedef {Omit<import('../wasm/attn-core').CoreAttentionOptions, 'dv'> & { dv?: number, ranges?: Uint32Array | null }} SplitOpts
 */
/** What core.attention returns; each part returns one and mergeParts builds one.
 * @typedef {import('../wasm/attn-core').CoreAttentionResult} AttnResultLike */
/**
 * SplitOpts with every default filled in.
 * @typedef {import('../wasm/attn-core').CoreAttentionOptions & {
 *   kvHeads: number, causal: boolean, window: number, keyPadding: Uint8Array | null,
 *   mask: Uint8Array | null, maskFill: import('../wasm/attn-core').MaskFill, returnScores: boolean,
 *   ranges: Uint32Array | null }} FullOpts
 */
/**
 * One part of a split call.
 * @typedef {object} SplitPart
 * @property {[number, number]} heads query heads [h0, h1) of the full call
 * @property {[number, number]} kv K/V heads [g0, g1)
 * @property {[number, number]} rows query rows [i0, i1)
 * @property {number} keys the part's T_k: the first `keys` keys of the full call
 * @property {boolean} explicitMask the causal/window rule is passed as a custom mask (all keys) instead of the flags
 */
/** @typedef {{ by: 'none' | 'heads' | 'rows', parts: SplitPart[] }} SplitPlan */

/**
 * @param {SplitOpts} opts
 * @returns {FullOpts}
 */
export function normalizeOpts(opts) {
  const heads = opts.heads;
  const o = {
    ...opts,
    heads,
    kvHeads: opts.kvHeads ?? heads,
    dv: opts.dv ?? opts.dk,
    causal: !!opts.causal,
    window: opts.window ?? 0,
    keyPadding: opts.keyPadding ?? null,
    mask: opts.mask ?? null,
    maskFill: opts.maskFill ?? 'neg_inf',
    returnScores: !!opts.returnScores,
    ranges: opts.ranges ?? null,
  };
  for (const f of /** @type {const} */ (['heads', 'kvHeads', 'tq', 'tk', 'dk', 'dv'])) {
    if (!Number.isInteger(o[f]) || o[f] < 1) throw new Error(`attn-split: ${f} must be a positive integer`);
  }
  if (o.heads % o.kvHeads !== 0) throw new Error('attn-split: heads must be a multiple of kvHeads');
  if ((o.causal || o.window > 0) && (!o.ranges || o.ranges.length !== 2 * o.tq)) {
    throw new Error('attn-split: with causal or a window, pass ranges = core.keyRanges({ tq, tk, causal, window })');
  }
  return o;
}

/** Keys query row i may see under the causal/window rule (the core's ranges; padding and
 *  custom masks ignored).
 * @param {FullOpts} o
 * @param {number} i */
function visibleKeys(o, i) {
  return o.ranges ? o.ranges[2 * i + 1] - o.ranges[2 * i] : o.tk;
}

/** Split [0, n) into k contiguous counts as equal as possible.
 * @param {number} n
 * @param {number} k */
function evenCounts(n, k) {
  /** @type {number[]} */
  const out = [];
  for (let p = 0; p < k; p++) out.push(Math.floor(((p + 1) * n) / k) - Math.floor((p * n) / k));
  return out;
}

/**
 * Row-block boundaries [0, b1, ..., T_q] with about equal work (visible keys summed over rows),
 * rounded to multiples of `align` when every block can still get at least `align` rows.
 * @param {SplitOpts} opts
 * @param {number} n
 * @returns {number[]}
 */
export function rowBounds(opts, n, align = 64) {
  const o = normalizeOpts(opts);
  const parts = Math.max(1, Math.min(n, o.tq));
  const cost = new Float64Array(o.tq + 1); // cumulative
  for (let i = 0; i < o.tq; i++) cost[i + 1] = cost[i] + Math.max(1, visibleKeys(o, i));
  const total = cost[o.tq];
  const step = o.tq >= parts * align ? align : 1;
  const bounds = [0];
  for (let p = 1; p < parts; p++) {
    const goal = (total * p) / parts;
    let i = bounds[bounds.length - 1] + 1;
    while (i < o.tq && cost[i] < goal) i++;
    // the nearer of the two neighbouring boundaries, then rounded to the step
    if (i > 0 && goal - cost[i - 1] < cost[i] - goal) i--;
    i = Math.round(i / step) * step;
    const lo = bounds[bounds.length - 1] + step;
    const hi = o.tq - (parts - p) * step;
    bounds.push(Math.min(hi, Math.max(lo, i)));
  }
  bounds.push(o.tq);
  return bounds;
}

/**
 * Plan the split of one call into at most n parts.
 * Each part: { heads: [h0, h1], kv: [g0, g1], rows: [i0, i1], keys: T_k', explicitMask: boolean }.
 * @param {SplitOpts} opts
 * @param {number} n
 * @param {{ align?: number }} [planOpts]
 * @returns {SplitPlan}
 */
export function planSplit(opts, n, { align = 64 } = {}) {
  const o = normalizeOpts(opts);
  n = Math.max(1, Math.floor(n));
  /** @type {SplitPart} */
  const whole = { heads: [0, o.heads], kv: [0, o.kvHeads], rows: [0, o.tq], keys: o.tk, explicitMask: false };
  if (n === 1) return { by: 'none', parts: [whole] };
  /** @type {SplitPart[]} */
  const parts = [];
  if (o.heads >= n) {
    const group = o.heads / o.kvHeads;
    if (o.kvHeads >= n) {
      let g = 0;
      for (const c of evenCounts(o.kvHeads, n)) {
        parts.push({ ...whole, heads: [g * group, (g + c) * group], kv: [g, g + c] });
        g += c;
      }
    } else {
      // Fewer K/V heads than parts: every group gets at least one part; a group's query heads are
      // shared out among its parts (n <= H, so a group never gets more parts than query heads).
      const perGroup = evenCounts(n, o.kvHeads);
      for (let g = 0; g < o.kvHeads; g++) {
        let h = g * group;
        for (const c of evenCounts(group, perGroup[g])) {
          parts.push({ ...whole, heads: [h, h + c], kv: [g, g + 1] });
          h += c;
        }
      }
    }
    return { by: 'heads', parts };
  }
  const b = rowBounds(o, n, align);
  // Truncating keys keeps the rule exact unless a row could be fully masked under 'finite' (its
  // uniform weights span all T_k keys) or every key's score is wanted.
  const ranges = o.ranges;
  const mayBeFullyMasked = (/** @type {number} */ i0) =>
    o.keyPadding !== null || o.mask !== null || (ranges !== null && ranges[2 * i0 + 1] <= ranges[2 * i0]);
  for (let p = 0; p + 1 < b.length; p++) {
    const i0 = b[p],
      i1 = b[p + 1];
    // With causal, the block's last row sees the most keys: keep keys [0, its hi).
    const keys = o.causal && ranges ? ranges[2 * (i1 - 1) + 1] : o.tk;
    const truncate = o.causal && !o.returnScores && keys >= 1 && (o.maskFill !== 'finite' || !mayBeFullyMasked(i0));
    const explicitMask = !truncate && (o.causal || o.window > 0) && i1 !== o.tq;
    parts.push({ ...whole, rows: [i0, i1], keys: truncate ? keys : o.tk, explicitMask });
  }
  return { by: 'rows', parts };
}

/** The inputs and options of one part: fresh compact arrays (safe to post or transfer).
 * @param {Float32Array} q
 * @param {Float32Array} k
 * @param {Float32Array} v
 * @param {SplitOpts} opts
 * @param {SplitPart} part
 * @returns {{ q: Float32Array, k: Float32Array, v: Float32Array, opts: FullOpts }} */
export function partCall(q, k, v, opts, part) {
  const o = normalizeOpts(opts);
  const [h0, h1] = part.heads,
    [g0, g1] = part.kv,
    [i0, i1] = part.rows,
    tk = part.keys;
  const tq = i1 - i0;
  const pq = new Float32Array((h1 - h0) * tq * o.dk);
  for (let h = h0; h < h1; h++) {
    const src = (h * o.tq + i0) * o.dk;
    pq.set(q.subarray(src, src + tq * o.dk), (h - h0) * tq * o.dk);
  }
  const pk = new Float32Array((g1 - g0) * tk * o.dk);
  const pv = new Float32Array((g1 - g0) * tk * o.dv);
  for (let g = g0; g < g1; g++) {
    pk.set(k.subarray(g * o.tk * o.dk, (g * o.tk + tk) * o.dk), (g - g0) * tk * o.dk);
    pv.set(v.subarray(g * o.tk * o.dv, (g * o.tk + tk) * o.dv), (g - g0) * tk * o.dv);
  }
  let mask = null;
  if (part.explicitMask || o.mask) {
    mask = new Uint8Array(tq * tk);
    for (let i = i0; i < i1; i++) {
      // The core's range for row i (explicitMask implies causal or a window, so ranges exist).
      const lo = part.explicitMask && o.ranges ? o.ranges[2 * i] : 0;
      const hi = part.explicitMask && o.ranges ? o.ranges[2 * i + 1] : tk;
      for (let j = 0; j < tk; j++) {
        const ok = (o.mask ? o.mask[i * o.tk + j] !== 0 : true) && j >= lo && j < hi;
        mask[(i - i0) * tk + j] = ok ? 1 : 0;
      }
    }
  }
  const popts = {
    ...o,
    heads: h1 - h0,
    kvHeads: g1 - g0,
    tq,
    tk,
    causal: part.explicitMask ? false : o.causal,
    window: part.explicitMask ? 0 : o.window,
    keyPadding: o.keyPadding ? Uint8Array.from(o.keyPadding.subarray(0, tk)) : null,
    mask,
    ranges: null, // a part is one core call: the core applies its own flags
  };
  return { q: pq, k: pk, v: pv, opts: popts };
}

/** Merge the parts' results (in plan order) into the layout of the single call.
 * @param {SplitOpts} opts
 * @param {SplitPlan} plan
 * @param {AttnResultLike[]} results
 * @returns {AttnResultLike} */
export function mergeParts(opts, plan, results) {
  const o = normalizeOpts(opts);
  if (results.length !== plan.parts.length) throw new Error('attn-split: one result per part');
  if (plan.parts.length === 1) return results[0];
  const { heads: H, tq: TQ, tk: TK, dv } = o;
  const first = results[0];
  const out = {
    output: new Float32Array(H * TQ * dv),
    weights: first.weights ? new Float32Array(H * TQ * TK) : null,
    scores: first.scores ? new Float32Array(H * TQ * TK) : null,
    entropy: new Float32Array(H * TQ),
    lse: new Float32Array(H * TQ),
    fullyMaskedRows: 0,
    nanRows: 0,
    infScoreRows: 0,
    /** @type {number[]} */
    nanRowsPerHead: new Array(H).fill(0),
    scale: first.scale,
  };
  plan.parts.forEach((part, p) => {
    const r = results[p];
    const [h0, h1] = part.heads,
      [i0, i1] = part.rows,
      tk = part.keys;
    const tq = i1 - i0;
    for (let h = h0; h < h1; h++) {
      const lh = h - h0;
      out.output.set(r.output.subarray(lh * tq * dv, (lh + 1) * tq * dv), (h * TQ + i0) * dv);
      out.entropy.set(r.entropy.subarray(lh * tq, (lh + 1) * tq), h * TQ + i0);
      out.lse.set(r.lse.subarray(lh * tq, (lh + 1) * tq), h * TQ + i0);
      for (const [name, src] of /** @type {const} */ ([
        ['weights', r.weights],
        ['scores', r.scores],
      ])) {
        const dst = out[name];
        if (!dst || !src) continue;
        for (let i = 0; i < tq; i++) {
          const row = src.subarray((lh * tq + i) * tk, (lh * tq + i + 1) * tk);
          const at = (h * TQ + i0 + i) * TK;
          dst.set(row, at);
          // Keys past the block's last visible one: weight 0, except in a fully masked neg_inf
          // row, whose weights are all NaN (a truncated block never gets the 'finite' fill's
          // fully masked rows, nor scores).
          if (tk < TK && name === 'weights' && o.maskFill === 'neg_inf' && Number.isNaN(r.lse[lh * tq + i]))
            dst.fill(NaN, at + tk, at + TK);
        }
      }
    }
    out.fullyMaskedRows += r.fullyMaskedRows;
    out.nanRows += r.nanRows;
    out.infScoreRows += r.infScoreRows;
    for (let h = h0; h < h1; h++) out.nanRowsPerHead[h] += r.nanRowsPerHead[h - h0];
  });
  return out;
}

/** The split call run in this thread, part after part (the reference for the Workers' version).
 * @param {{ attention(q: Float32Array, k: Float32Array, v: Float32Array, opts: FullOpts): AttnResultLike }} core
 * @param {Float32Array} q
 * @param {Float32Array} k
 * @param {Float32Array} v
 * @param {SplitOpts} opts
 * @param {number} n
 * @param {{ align?: number }} [planOpts]
 * @returns {{ plan: SplitPlan, result: AttnResultLike }} */
export function splitAttention(core, q, k, v, opts, n, planOpts) {
  const plan = planSplit(opts, n, planOpts);
  const results = plan.parts.map((part) => {
    const c = partCall(q, k, v, opts, part);
    return core.attention(c.q, c.k, c.v, c.opts);
  });
  return { plan, result: mergeParts(opts, plan, results) };
}
