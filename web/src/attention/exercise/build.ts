// A "build a head" exercise's head, computed by the core: each token is the one-hot of its word
// (the exercise sentence's sorted vocabulary, as lesson 1 numbers them) followed by the one-hot of
// its position, x = [word | position] (d_model = words + T). The student's grids are W_Q's two
// diagonal blocks (word → word, position → position); W_K, W_V and W_O are the identity, so the
// score of query i for key j is word_grid[word_i][word_j] + position_grid[i][j] (scale 1, causal).
// The core runs the head (multiHeadAttention) and scores its role (patternScores). No DOM.
import type { AttnCore } from '../../wasm/load-core';
import type { BuildExercise } from './catalogue';
import type { Grid } from './grid';

export interface BuiltHead {
  t: number;
  /** (T, T) the head's weights. */
  weights: Float32Array;
  previousToken: number;
  duplicateToken: number;
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
  const d = nv + t;
  const x = new Float32Array(t * d);
  // Token ids for the role scores: a word of the vocabulary keeps its index; others get new ones.
  const ids = new Int32Array(t);
  const extra = new Map<string, number>();
  sentence.forEach((w, i) => {
    const k = vocab.indexOf(w);
    if (k >= 0) x[i * d + k] = 1;
    x[i * d + nv + i] = 1;
    ids[i] = k >= 0 ? k : nv + (extra.get(w) ?? extra.set(w, extra.size).get(w)!);
  });
  const wq = new Float32Array(d * d);
  for (const [key, v] of grid) {
    const [r, c] = key.slice(1).split('.').map(Number);
    const [off, n] = key[0] === 'w' ? [0, nv] : [nv, t];
    if (r < n && c < n && (key[0] === 'p' || e.grids.includes('word'))) wq[(off + r) * d + off + c] = v;
  }
  const eye = new Float32Array(d * d);
  for (let i = 0; i < d; i++) eye[i * d + i] = 1;
  const r = core.multiHeadAttention(x, wq, eye, eye, eye, {
    t,
    dModel: d,
    heads: 1,
    kvHeads: 1,
    dk: d,
    dv: d,
    causal: true,
    scale: 1,
  });
  if (!r.weights) throw new Error('the core returned no weights'); // the naive kernel always does
  const weights = r.weights.slice(0, t * t);
  const s = core.patternScores(ids, weights, { heads: 1 });
  return { t, weights, previousToken: s.previousToken[0], duplicateToken: s.duplicateToken[0] };
}
