// dec.cache(layer) (the Decode tab draws the K and V caches from it): layer 0's cached keys and
// values equal (E[token] + P[position]) W_K / W_V computed here in float64 from tr.weights();
// shapes (H_kv, t, d_h) for MHA and MQA; errors name the field.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { loadTrain, throwsField } from './train-helpers.mjs';

/** x W for x: (D), W: (D, N) row-major, in float64. */
function vecMat(x, w, D, N) {
  const out = new Float64Array(N);
  for (let d = 0; d < D; d++) for (let n = 0; n < N; n++) out[n] += x[d] * w[d * N + n];
  return out;
}

for (const kvHeads of [2, 1]) {
  test(`dec.cache: layer 0 keys and values equal (E + P) W_K, W_V (kvHeads ${kvHeads})`, async () => {
    const lib = await loadTrain();
    const cfg = { vocab: 16, seqLen: 12, dModel: 16, heads: 2, kvHeads, batch: 4, seed: 3 };
    const tr = lib.createTrainer(cfg);
    tr.train(3); // weights away from their initial draw
    const w = tr.weights();
    const D = 16, dh = 8, G = kvHeads;
    const toks = [3, 1, 4, 1, 5, 9, 2];
    const dec = tr.decoder({ cache: true });
    for (const t of toks) dec.append(t);
    const n = toks.length;
    const c0 = dec.cache(0);
    assert.equal(c0.k.length, G * n * dh);
    assert.equal(c0.v.length, G * n * dh);
    let worst = 0;
    for (let pos = 0; pos < n; pos++) {
      const x = new Float64Array(D);
      for (let d = 0; d < D; d++) x[d] = w.embed[toks[pos] * D + d] + w.pos[pos * D + d];
      const k = vecMat(x, w.layers[0].wk, D, G * dh);
      const v = vecMat(x, w.layers[0].wv, D, G * dh);
      for (let g = 0; g < G; g++) for (let i = 0; i < dh; i++) {
        worst = Math.max(worst, Math.abs(c0.k[(g * n + pos) * dh + i] - k[g * dh + i]), Math.abs(c0.v[(g * n + pos) * dh + i] - v[g * dh + i]));
      }
    }
    assert.ok(worst < 1e-5, `max |delta| ${worst}`);
    // Layer 1 has the same shape and grows with each append; reset empties it.
    assert.equal(dec.cache(1).k.length, G * n * dh);
    dec.append(7);
    assert.equal(dec.cache(1).v.length, G * (n + 1) * dh);
    dec.reset();
    assert.equal(dec.cache(0).k.length, 0);
    throwsField(lib, () => dec.cache(2), 'layer', 'layer out of range');
    throwsField(lib, () => dec.cache(0.5), 'layer', 'non-integer layer');
    throwsField(lib, () => tr.decoder({ cache: false }).cache(0), 'cache', 'recompute mode has no cache');
    assert.equal(dec.append(2).weights.length, 2 * 2, 'the decoder keeps working');
    dec.delete();
    tr.delete();
  });
}
