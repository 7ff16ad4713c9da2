// A "build a head" exercise's head, computed by the core: each token is the one-hot of its word
// (the exercise sentence's sorted vocabulary, as lesson 1 numbers them), then the one-hot of its
// position, then a spare slot of one dimension per word: x = [word | position | slot]
// (d_model = 2·words + T). The student's grids are blocks of W_Q; W_K is the identity, so the
// score of query i for key j is a sum of grid cells (scale 1, causal):
//   one head:  word_grid[word_i][word_j] + position_grid[i][j]  (W_V, W_O the identity)
//   induction: layer 1 scores position_grid[i][j]; its W_V copies the word into the slot, so its
//              output is the word it attended to (x's slot is empty: x + that output is a copy,
//              no sum). Layer 2 scores previous_grid[word_i][slot_j], slot_j being layer 1's word
//              for key j; its role score is the exercise's.
// The core runs each head (multiHeadAttention) and scores its role (patternScores). No DOM.
import type { AttnCore } from '../../wasm/load-core';
import type { BuildExercise } from './catalogue';
import type { Grid } from './grid';

export interface BuiltHead {
  t: number;
  /** (T, T) the head's weights (the second layer's, for an induction exercise). */
  weights: Float32Array;
  previousToken: number;
  duplicateToken: number;
  induction: number;
  /** The first layer's previous-token score (induction exercises), else null. */
  layer1: number | null;
}

/** The exercise sentence's words, sorted (the word grid's rows and columns). */
export function vocabulary(e: BuildExercise): string[] {
  return [...new Set(e.sentence)].sort();
}

/** The head built from `grid`, run on `sentence` (the shown one or the hidden one). */
export function buildHead(core: AttnCore, e: BuildExercise, grid: Grid, sentence: string[]): BuiltHead {
  const vocab = vocabulary(e);
  const nv = vocab.length;
  const t = sentence.length;
  const d = 2 * nv + t;
  const slot = nv + t;
  const x = new Float32Array(t * d);
  // Token ids for the role scores: a word of the vocabulary keeps its index; others get new ones.
  const ids = new Int32Array(t);
  const extra = new Map<string, number>();
  sentence.forEach((w, i) => {
    const k = vocab.indexOf(w);
    if (k >= 0) x[i * d + k] = 1;
    x[i * d + nv + i] = 1;
    if (k < 0 && !extra.has(w)) extra.set(w, extra.size);
    ids[i] = k >= 0 ? k : nv + extra.get(w)!;
  });
  // W_Q's blocks from the grid: (row offset, column offset, size) per grid.
  const block = { w: [0, 0, nv], p: [nv, nv, t], n: [0, slot, nv] } as const;
  const wqOf = (prefixes: string) => {
    const wq = new Float32Array(d * d);
    for (const [key, v] of grid) {
      if (!prefixes.includes(key[0])) continue;
      const [r, c] = key.slice(1).split('.').map(Number);
      const [ro, co, n] = block[key[0] as 'w' | 'p' | 'n'];
      if (r < n && c < n) wq[(ro + r) * d + co + c] = v;
    }
    return wq;
  };
  const eye = new Float32Array(d * d);
  for (let i = 0; i < d; i++) eye[i * d + i] = 1;
  const opts = { t, dModel: d, heads: 1, kvHeads: 1, dk: d, dv: d, causal: true, scale: 1 };
  const weightsOf = (r: { weights: Float32Array | null }) => {
    if (!r.weights) throw new Error('the core returned no weights'); // the naive kernel always does
    return r.weights.slice(0, t * t);
  };
  const scores = (w: Float32Array) => core.patternScores(ids, w, { heads: 1 });
  if (e.role !== 'induction') {
    const allowed = (e.grids.includes('word') ? 'w' : '') + 'p';
    const w = weightsOf(core.multiHeadAttention(x, wqOf(allowed), eye, eye, eye, opts));
    const s = scores(w);
    return {
      t,
      weights: w,
      previousToken: s.previousToken[0],
      duplicateToken: s.duplicateToken[0],
      induction: s.induction[0],
      layer1: null,
    };
  }
  // Layer 1: the position grid; W_V copies each word into the slot.
  const copy = new Float32Array(d * d);
  for (let k = 0; k < nv; k++) copy[k * d + slot + k] = 1;
  const r1 = core.multiHeadAttention(x, wqOf('p'), eye, copy, eye, opts);
  const s1 = scores(weightsOf(r1));
  // x + layer 1's output: the output lives in the slot only, where x is zero — a copy.
  const x2 = x.slice();
  for (let i = 0; i < t; i++) for (let k = 0; k < nv; k++) x2[i * d + slot + k] = r1.output[i * d + slot + k];
  const w2 = weightsOf(core.multiHeadAttention(x2, wqOf('n'), eye, eye, eye, opts));
  const s2 = scores(w2);
  return {
    t,
    weights: w2,
    previousToken: s2.previousToken[0],
    duplicateToken: s2.duplicateToken[0],
    induction: s2.induction[0],
    layer1: s1.previousToken[0],
  };
}
