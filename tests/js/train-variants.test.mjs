// The training module with the attention variants (normalizer, qkNorm, sigmoidBias, positional
// 'rope' / 'alibi'): the config's fields and their errors, the PyTorch autograd fixtures
// (model.json's "variants") through lossAndGradients with both kernels, the Heads view's weights
// (tr.attention) against the oracle's forward for each variant, and the old boolean spelling of
// positional.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { loadFixture } from './helpers.mjs';
import { loadTrain, throwsField, maxAbsDiff } from './train-helpers.mjs';

const SMALL = { vocab: 16, seqLen: 12, dModel: 16, heads: 2, batch: 4, seed: 1 };

test('variant config fields: defaults, accepted values, the boolean positional, errors naming the field', async () => {
  const lib = await loadTrain();
  const d = lib.createTrainer(SMALL);
  assert.equal(d.config.normalizer, 'softmax');
  assert.equal(d.config.qkNorm, false);
  assert.equal(d.config.sigmoidBias, null);
  assert.equal(d.config.positional, 'learned');
  d.delete();
  for (const patch of [{ normalizer: 'softmax1' }, { normalizer: 'sigmoid', sigmoidBias: -1.5 }, { normalizer: 'relu' },
    { normalizer: 'linear', positional: 'rope' }, { positional: 'alibi' }, { qkNorm: true, scale: 10 }]) {
    const tr = lib.createTrainer({ ...SMALL, ...patch });
    for (const k in patch) assert.equal(tr.config[k], patch[k], k);
    const r = tr.train(3);
    assert.ok(r.finite, JSON.stringify(patch));
    // rope and alibi have no learned table
    assert.equal(tr.weights().pos === null, patch.positional === 'rope' || patch.positional === 'alibi');
    tr.delete();
  }
  // positional true / false: the old boolean spelling of 'learned' / 'none', same bits.
  for (const [b, s] of [[true, 'learned'], [false, 'none']]) {
    const x = lib.createTrainer({ ...SMALL, positional: b });
    const y = lib.createTrainer({ ...SMALL, positional: s });
    assert.equal(x.config.positional, s);
    assert.deepEqual(x.train(2).loss, y.train(2).loss);
    x.delete();
    y.delete();
  }
  throwsField(lib, () => lib.createTrainer({ ...SMALL, normalizer: 'tanh' }), 'normalizer', 'unknown normalizer');
  throwsField(lib, () => lib.createTrainer({ ...SMALL, positional: 'sinusoidal' }), 'positional', 'unknown positional');
  throwsField(lib, () => lib.createTrainer({ ...SMALL, qkNorm: 1 }), 'qkNorm', 'qkNorm not boolean');
  throwsField(lib, () => lib.createTrainer({ ...SMALL, sigmoidBias: NaN }), 'sigmoidBias', 'sigmoidBias NaN');
  throwsField(lib, () => lib.createTrainer({ ...SMALL, sigmoidBias: 1e300 }), 'sigmoidBias', 'sigmoidBias past float32');
  throwsField(lib, () => lib.createTrainer({ ...SMALL, dModel: 6, heads: 2, positional: 'rope' }), 'positional', 'rope, odd d_h');
  throwsField(lib, () => lib.createTrainer({ ...SMALL, normalizer: 'linear', positional: 'alibi' }), 'positional', 'alibi with linear');
  // The module keeps working after the errors.
  const ok = lib.createTrainer({ ...SMALL, normalizer: 'relu' });
  assert.ok(ok.train(1).finite);
  ok.delete();
});

function fixtureTrainer(lib, c, kernel) {
  const cfg = { ...c.config, task: 'random', batch: c.batch, kernel, scale: c.config.scale === null ? 'sqrt' : c.config.scale };
  const f = (a) => (a === null ? null : Float32Array.from(a));
  const weights = {
    embed: f(c.params.embed), pos: f(c.params.pos), lnGain: f(c.params.lnGain), lnBias: f(c.params.lnBias),
    unembed: f(c.params.unembed), layers: c.params.layers.map((L) => ({ wq: f(L.wq), wk: f(L.wk), wv: f(L.wv), wo: f(L.wo) })),
  };
  return lib.createTrainer({ ...cfg, weights });
}

test('variants: lossAndGradients matches the PyTorch oracle with both kernels (float32, 2e-5 relative)', async () => {
  const lib = await loadTrain();
  const fx = loadFixture('model.json');
  assert.ok(fx.variants.length >= 15);
  let worst = 0;
  for (const c of fx.variants) for (const kernel of ['naive', 'tiled']) {
    const tr = fixtureTrainer(lib, c, kernel);
    const r = tr.lossAndGradients(Int32Array.from(c.tokens), Uint8Array.from(c.lossMask));
    const pairs = [[r.grads.embed, c.grads.embed], [r.grads.pos, c.grads.pos], [r.grads.unembed, c.grads.unembed],
      [r.grads.lnGain, c.grads.lnGain], [r.grads.lnBias, c.grads.lnBias]];
    r.grads.layers.forEach((L, l) => {
      for (const k of ['wq', 'wk', 'wv', 'wo']) pairs.push([L[k], c.grads.layers[l][k]]);
    });
    let gmax = 1;
    for (const [, want] of pairs) if (want) for (const x of want) gmax = Math.max(gmax, Math.abs(x));
    let d = Math.abs(r.loss - c.loss) / Math.max(1, Math.abs(c.loss));
    for (const [got, want] of pairs) {
      assert.equal(got === null, want === null, `${c.name}: null parts`);
      if (got) d = Math.max(d, maxAbsDiff(got, want) / gmax);
    }
    assert.ok(d <= 2e-5, `${c.name} (${kernel}): relative max |delta| ${d}`);
    worst = Math.max(worst, d);
    tr.delete();
  }
  console.log(`# model.json variants through the wasm module: max relative |delta| ${worst.toExponential(2)}`);
});

test('variants: the Heads view weights (tr.attention) are causal and follow each normalizer', async () => {
  const lib = await loadTrain();
  const toks = [3, 1, 4, 1, 5, 9, 2, 6, 5, 3];
  const T = toks.length, H = 2, L = 2;
  for (const patch of [{ normalizer: 'softmax1' }, { normalizer: 'sigmoid' }, { normalizer: 'relu' }, { normalizer: 'linear' },
    { positional: 'rope' }, { positional: 'alibi' }, { qkNorm: true, scale: 10 }]) {
    const tr = lib.createTrainer({ ...SMALL, ...patch, initStd: 0.5 });
    const a = tr.attention(toks);
    assert.equal(a.weights.length, L * H * T * T);
    for (let r = 0; r < L * H * T; r++) {
      const i = r % T;
      let sum = 0;
      for (let j = 0; j < T; j++) {
        const w = a.weights[r * T + j];
        assert.ok(Number.isFinite(w) && w >= 0, `${JSON.stringify(patch)} row ${r} col ${j}: ${w}`);
        if (j > i) assert.equal(w, 0);
        sum += w;
      }
      const n = patch.normalizer ?? 'softmax';
      if (n === 'softmax') assert.ok(Math.abs(sum - 1) < 1e-5, `row sums to 1 (${sum})`);
      if (n === 'softmax1' || n === 'linear') assert.ok(sum <= 1 + 1e-6 && sum > 0, `${n} row sum ${sum}`);
      if (n === 'relu') assert.ok(sum <= (i + 1) * 1e3, 'relu row');
      if (n === 'sigmoid') assert.ok(sum < i + 1 && sum > 0, `sigmoid row sum ${sum}`);
    }
    tr.delete();
  }
});

test('variants: the Heads view weights (tr.attention) equal the PyTorch oracle\'s weights, both kernels', async () => {
  const lib = await loadTrain();
  const fx = loadFixture('model.json');
  let worst = 0, n = 0;
  for (const c of fx.variants) {
    if (!c.weights0) continue;
    n++;
    for (const kernel of ['naive', 'tiled']) {
      const tr = fixtureTrainer(lib, c, kernel);
      const a = tr.attention(c.tokens.slice(0, c.config.seqLen));
      const d = maxAbsDiff(a.weights, c.weights0);
      assert.ok(d <= 1e-5, `${c.name} (${kernel}): weights max |delta| ${d}`);
      worst = Math.max(worst, d);
      tr.delete();
    }
  }
  assert.ok(n >= 14);
  console.log(`# Heads view weights of ${n} variant cases vs PyTorch: max |delta| ${worst.toExponential(2)}`);
});

test('shortformer: lossAndGradients and the Heads view weights match PyTorch; decoding cache == recompute', async () => {
  const lib = await loadTrain();
  const fx = loadFixture('model.json');
  assert.ok(fx.shortformer.length >= 8);
  let worst = 0;
  for (const c of fx.shortformer) for (const kernel of ['naive', 'tiled']) {
    const tr = fixtureTrainer(lib, c, kernel);
    assert.equal(tr.config.positional, 'shortformer');
    assert.equal(tr.weights().pos.length, c.config.seqLen * c.config.dModel);
    const r = tr.lossAndGradients(Int32Array.from(c.tokens), Uint8Array.from(c.lossMask));
    const pairs = [[r.grads.embed, c.grads.embed], [r.grads.pos, c.grads.pos], [r.grads.unembed, c.grads.unembed]];
    r.grads.layers.forEach((L, l) => {
      for (const k of ['wq', 'wk', 'wv', 'wo']) pairs.push([L[k], c.grads.layers[l][k]]);
    });
    let gmax = 1;
    for (const [, want] of pairs) for (const x of want) gmax = Math.max(gmax, Math.abs(x));
    let d = Math.abs(r.loss - c.loss) / Math.max(1, Math.abs(c.loss));
    for (const [got, want] of pairs) d = Math.max(d, maxAbsDiff(got, want) / gmax);
    assert.ok(d <= 2e-5, `${c.name} (${kernel}): relative max |delta| ${d}`);
    const a = tr.attention(c.tokens.slice(0, c.config.seqLen));
    const dw = maxAbsDiff(a.weights, c.weights0);
    assert.ok(dw <= 1e-5, `${c.name} (${kernel}): weights max |delta| ${dw}`);
    worst = Math.max(worst, d, dw);
    tr.delete();
  }
  console.log(`# model.json shortformer through the wasm module: max |delta| ${worst.toExponential(2)}`);
  const tr = lib.createTrainer({ ...SMALL, positional: 'shortformer', layerNorm: true });
  tr.train(20);
  const toks = [3, 1, 4, 1, 5, 9, 2, 6, 5, 3, 5, 8];
  const full = tr.attention(toks);
  const c = tr.decoder({ cache: true }), r = tr.decoder({ cache: false });
  let dd = 0;
  toks.forEach((t, i) => {
    const x = c.append(t), y = r.append(t);
    dd = Math.max(dd, maxAbsDiff(x.logits, y.logits), maxAbsDiff(x.weights, y.weights),
      maxAbsDiff(x.logits, full.logits.subarray(i * 16, (i + 1) * 16)));
  });
  assert.ok(dd <= 2e-5, `decoding max |delta| ${dd}`);
  for (const temperature of [0, 0.8]) {
    const g1 = tr.generate([3, 4, 5], 9, { cache: true, temperature, seed: 7 });
    const g2 = tr.generate([3, 4, 5], 9, { cache: false, temperature, seed: 7 });
    assert.deepEqual(Array.from(g1.tokens), Array.from(g2.tokens), `temperature ${temperature}`);
  }
  c.delete();
  r.delete();
  tr.delete();
});
