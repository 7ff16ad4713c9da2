// The training module's JS surface: shapes and defaults, copies, errors naming
// the field, determinism, the PyTorch fixtures through lossAndGradients, and decoding with
// the KV cache against recomputation.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { loadFixture } from './helpers.mjs';
import { loadTrain, throwsField, bitsEqual, maxAbsDiff } from './train-helpers.mjs';

const SMALL = { vocab: 16, seqLen: 12, dModel: 16, heads: 2, batch: 4, seed: 1 };

test('createTrainer: defaults, shapes of every result', async () => {
  const lib = await loadTrain();
  const tr = lib.createTrainer();
  const w = tr.weights();
  assert.equal(w.embed.length, 32 * 64);
  assert.equal(w.pos.length, 32 * 64);
  assert.equal(w.layers.length, 2);
  assert.equal(w.layers[0].wq.length, 64 * 64);
  assert.equal(w.layers[1].wo.length, 64 * 64);
  assert.equal(w.lnGain, null);
  assert.equal(w.lnBias, null);
  assert.equal(w.unembed.length, 64 * 32);
  // initStd null: N(0, 1/dModel) for the embeddings.
  const rms = Math.sqrt(w.embed.reduce((s, x) => s + x * x, 0) / w.embed.length);
  assert.ok(Math.abs(rms - 1 / 8) < 0.01, `embedding rms ${rms}`);
  const r = tr.train(2);
  assert.ok(r.loss instanceof Float32Array && r.loss.length === 2);
  assert.ok(r.gradNorm instanceof Float32Array && r.gradNorm.length === 2);
  assert.equal(r.step, 2);
  assert.equal(r.finite, true);
  assert.equal(tr.step, 2);
  const e = tr.evaluate();
  assert.ok(e.loss > 0 && e.accuracy >= 0 && e.accuracy <= 1);
  const hs = tr.headScores();
  for (const k of ['previousToken', 'induction', 'duplicateToken', 'ablationLoss']) {
    assert.ok(hs[k] instanceof Float32Array && hs[k].length === 4, k);
  }
  assert.equal(hs.kComposition.length, 1 * 2 * 2);
  const b = tr.sampleBatch();
  assert.ok(b.tokens instanceof Int32Array && b.tokens.length === 32 * 32);
  assert.ok(b.lossMask instanceof Uint8Array && b.lossMask.length === 32 * 32);
  const a = tr.attention(b.tokens.subarray(0, 10));
  assert.equal(a.weights.length, 2 * 2 * 10 * 10);
  assert.equal(a.logits.length, 10 * 32);
  const g = tr.lossAndGradients(b.tokens, b.lossMask);
  assert.equal(g.grads.layers[1].wv.length, 64 * 64);
  assert.equal(g.grads.pos.length, 32 * 64);
  const s = tr.trainOn(b.tokens, b.lossMask);
  // The loss before its update (no dropout), summed over the fixed shards: equal to the one-pass
  // loss up to the order of the float64 sums.
  assert.ok(Math.abs(s.loss - g.loss) <= 1e-12 * g.loss, `trainOn reports the loss before its update (no dropout): ${s.loss} vs ${g.loss}`);
  assert.equal(tr.step, 3);
  const dec = tr.decoder();
  const d1 = dec.append(5);
  assert.equal(d1.logits.length, 32);
  assert.equal(d1.weights.length, 2 * 2 * 1);
  assert.equal(d1.cacheBytes, 2 * 2 * 2 * 32 * 32 * 4);
  assert.equal(dec.append(6).weights.length, 2 * 2 * 2);
  dec.reset();
  assert.equal(dec.append(5).weights.length, 4);
  assert.equal(tr.decoder({ cache: false }).append(5).cacheBytes, 0);
  const gen = tr.generate([1, 2, 3], 5);
  assert.ok(gen.tokens instanceof Int32Array && gen.tokens.length === 5);
  dec.delete();
  tr.delete();
});

test('weights: positional none, layerNorm on, GQA shapes; a trainer started from weights() matches', async () => {
  const lib = await loadTrain();
  const cfg = { ...SMALL, heads: 4, kvHeads: 2, positional: 'none', layerNorm: true, layers: 3 };
  const tr = lib.createTrainer(cfg);
  tr.train(3);
  const w = tr.weights();
  assert.equal(w.pos, null);
  assert.equal(w.lnGain.length, 16);
  assert.equal(w.layers[0].wk.length, 16 * 8);
  assert.equal(w.layers[0].wq.length, 16 * 16);
  const u = lib.createTrainer({ ...cfg, weights: w });
  const b = tr.sampleBatch();
  const g1 = tr.lossAndGradients(b.tokens, b.lossMask);
  const g2 = u.lossAndGradients(b.tokens, b.lossMask);
  assert.equal(g1.loss, g2.loss);
  assert.ok(bitsEqual(g1.grads.layers[2].wo, g2.grads.layers[2].wo));
  tr.delete();
  u.delete();
});

test('returned arrays are copies', async () => {
  const lib = await loadTrain();
  const tr = lib.createTrainer(SMALL);
  const w = tr.weights();
  const keep = w.embed.slice();
  w.embed.fill(0);
  assert.ok(bitsEqual(tr.weights().embed, keep));
  const r1 = tr.train(2);
  const l1 = r1.loss.slice();
  tr.train(2);
  assert.ok(bitsEqual(r1.loss, l1));
  tr.delete();
});

test('determinism: the same seed gives bit-identical loss histories (also with dropout)', async () => {
  const lib = await loadTrain();
  for (const dropout of [0, 0.1]) {
    const a = lib.createTrainer({ ...SMALL, dropout });
    const b = lib.createTrainer({ ...SMALL, dropout });
    const c = lib.createTrainer({ ...SMALL, dropout, seed: 2 });
    const ra = a.train(20), rb = b.train(20), rc = c.train(20);
    assert.ok(bitsEqual(ra.loss, rb.loss), `dropout ${dropout}: loss histories differ`);
    assert.ok(bitsEqual(ra.gradNorm, rb.gradNorm));
    assert.ok(!bitsEqual(ra.loss, rc.loss), 'another seed, another history');
    for (const t of [a, b, c]) t.delete();
  }
});

test('dataSeed: moves the batches, not the weights; null or equal to seed keeps the bits', async () => {
  const lib = await loadTrain();
  const a = lib.createTrainer(SMALL);
  const same = lib.createTrainer({ ...SMALL, dataSeed: SMALL.seed });
  const data = lib.createTrainer({ ...SMALL, dataSeed: 9 });
  const init = lib.createTrainer({ ...SMALL, seed: 4, dataSeed: 9 });
  assert.equal(a.config.dataSeed, null);
  assert.equal(data.config.dataSeed, 9);
  assert.ok(bitsEqual(a.weights().embed, data.weights().embed), 'the data seed moved the weights');
  assert.ok(!bitsEqual(data.weights().embed, init.weights().embed), 'the init seed did not move the weights');
  assert.deepEqual(Array.from(data.sampleBatch().tokens), Array.from(init.sampleBatch().tokens), 'same data seed, other batches');
  assert.notDeepEqual(Array.from(a.sampleBatch().tokens), Array.from(data.sampleBatch().tokens));
  assert.ok(bitsEqual(a.train(5).loss, same.train(5).loss), 'dataSeed = seed is not the derived run');
  for (const t of [a, same, data, init]) t.delete();
});

test('scoreGradients: Float64 per layer x head, and it leaves training untouched', async () => {
  const lib = await loadTrain();
  const a = lib.createTrainer(SMALL), b = lib.createTrainer(SMALL);
  a.train(3);
  b.train(3);
  const g = a.scoreGradients();
  assert.ok(g.scoreGrad instanceof Float64Array && g.scoreGrad.length === 2 * 2);
  assert.ok(g.wqGradNorm instanceof Float64Array && g.wqGradNorm.length === 2);
  assert.ok(g.scoreGrad.every((x) => Number.isFinite(x) && x > 0), String(g.scoreGrad));
  const ev = a.evaluate().loss;
  assert.ok(Math.abs(g.loss - ev) <= 1e-5 * ev, `held-out loss ${g.loss} vs evaluate ${ev}`);
  assert.ok(bitsEqual(a.train(4).loss, b.train(4).loss), 'scoreGradients disturbed training');
  // Saturated (scale 1, unit-variance init, d_k 64): layer 1's rows are all one-hot, where the
  // softmax Jacobian is exactly zero, so nothing reaches its scores; layer 0 keeps a few soft rows.
  const sat = lib.createTrainer({ seed: 0, scale: 'none', dModel: 128, initStd: 1 });
  const s = sat.scoreGradients();
  assert.deepEqual(Array.from(s.scoreGrad.subarray(2)), [0, 0], String(s.scoreGrad));
  assert.ok(s.scoreGrad[0] > 0 && s.scoreGrad[1] > 0, String(s.scoreGrad));
  assert.ok(s.loss > 1e5, `saturated loss ${s.loss}`);
  const dflt = lib.createTrainer({ seed: 0 });
  const d = dflt.scoreGradients();
  assert.ok(d.scoreGrad.every((x) => x > 0), String(d.scoreGrad));
  for (const t of [a, b, sat, dflt]) t.delete();
});

test('diagnostics: headScores, evaluate and scoreGradients in one call, bit for bit, training untouched', async () => {
  const lib = await loadTrain();
  for (const kernel of ['naive', 'tiled']) {
    const a = lib.createTrainer({ ...SMALL, kernel }), b = lib.createTrainer({ ...SMALL, kernel });
    a.train(3);
    b.train(3);
    a.setAblation(1, 1, true);
    const d = a.diagnostics();
    const hs = a.headScores(), ev = a.evaluate(), g = a.scoreGradients();
    for (const k of ['previousToken', 'induction', 'duplicateToken', 'ablationLoss', 'kComposition']) {
      assert.ok(d[k] instanceof Float32Array && bitsEqual(d[k], hs[k]), `${kernel} ${k}`);
    }
    assert.ok(d.scoreGrad instanceof Float64Array && bitsEqual(d.scoreGrad, g.scoreGrad), `${kernel} scoreGrad`);
    assert.ok(bitsEqual(d.wqGradNorm, g.wqGradNorm), `${kernel} wqGradNorm`);
    assert.equal(d.loss, ev.loss);
    assert.equal(d.loss, hs.loss);
    assert.equal(d.accuracy, ev.accuracy);
    a.setAblation(1, 1, false);
    assert.ok(bitsEqual(a.train(4).loss, b.train(4).loss), `${kernel}: diagnostics disturbed training`);
    a.delete();
    b.delete();
  }
});

test('lossAndGradients matches the PyTorch oracle with both kernels (model.json, float32 tolerance 2e-5 relative)', async () => {
  const lib = await loadTrain();
  const fx = loadFixture('model.json');
  let worst = 0;
  for (const c of fx.grad) for (const kernel of ['naive', 'tiled']) {
    const cfg = { ...c.config, task: 'random', batch: c.batch, kernel, scale: c.config.scale === null ? 'sqrt' : c.config.scale };
    const f = (a) => (a === null ? null : Float32Array.from(a));
    const weights = {
      embed: f(c.params.embed), pos: f(c.params.pos), lnGain: f(c.params.lnGain), lnBias: f(c.params.lnBias),
      unembed: f(c.params.unembed), layers: c.params.layers.map((L) => ({ wq: f(L.wq), wk: f(L.wk), wv: f(L.wv), wo: f(L.wo) })),
    };
    const tr = lib.createTrainer({ ...cfg, weights });
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
  console.log(`# model.json through the wasm module: max relative |delta| ${worst.toExponential(2)}`);
});

test('decoding: cached steps equal recomputed steps and the full forward at every position', async () => {
  const lib = await loadTrain();
  for (const cfg of [{ ...SMALL }, { ...SMALL, heads: 4, kvHeads: 1, layerNorm: true, kernel: 'tiled' }]) {
    const tr = lib.createTrainer(cfg);
    tr.train(30);
    const b = tr.sampleBatch();
    const toks = b.tokens.subarray(0, 12);
    const full = tr.attention(toks);
    const c = tr.decoder({ cache: true }), r = tr.decoder({ cache: false });
    let worst = 0;
    for (let i = 0; i < 12; i++) {
      const x = c.append(toks[i]), y = r.append(toks[i]);
      worst = Math.max(worst, maxAbsDiff(x.logits, y.logits), maxAbsDiff(x.logits, full.logits.subarray(i * 16, (i + 1) * 16)));
      worst = Math.max(worst, maxAbsDiff(x.weights, y.weights));
    }
    assert.ok(worst <= 2e-5, `max |delta| ${worst}`);
    throwsField(lib, () => c.append(1), 'token', 'append past seqLen');
    for (const temperature of [0, 0.8]) {
      const g1 = tr.generate([3, 4, 5], 9, { cache: true, temperature, seed: 7 });
      const g2 = tr.generate([3, 4, 5], 9, { cache: false, temperature, seed: 7 });
      assert.deepEqual(Array.from(g1.tokens), Array.from(g2.tokens), `temperature ${temperature}`);
    }
    c.delete();
    r.delete();
    tr.delete();
  }
});

test('bad config fields throw an AttnError naming the field', async () => {
  const lib = await loadTrain();
  const bad = [
    [{ vocab: 1 }, 'vocab'], [{ vocab: 1.5 }, 'vocab'], [{ vocab: '32' }, 'vocab'],
    [{ seqLen: 0 }, 'seqLen'], [{ seqLen: 8193 }, 'seqLen'], [{ layers: 0 }, 'layers'],
    [{ heads: 0 }, 'heads'], [{ kvHeads: 3 }, 'kvHeads'], [{ dModel: 63 }, 'dModel'],
    [{ positional: 'sinusoidal' }, 'positional'], [{ layerNorm: 1 }, 'layerNorm'],
    [{ scale: 'sqrtt' }, 'scale'], [{ scale: -1 }, 'scale'], [{ scale: Infinity }, 'scale'],
    [{ initStd: 0 }, 'initStd'], [{ initStd: NaN }, 'initStd'], [{ dropout: 1 }, 'dropout'],
    [{ dropout: -0.1 }, 'dropout'], [{ lr: NaN }, 'lr'], [{ lr: -1 }, 'lr'], [{ beta1: 1 }, 'beta1'],
    [{ beta2: -0.5 }, 'beta2'], [{ eps: 0 }, 'eps'], [{ weightDecay: -1 }, 'weightDecay'],
    [{ clip: -1 }, 'clip'], [{ batch: 0 }, 'batch'], [{ seed: -1 }, 'seed'], [{ seed: 0.5 }, 'seed'],
    [{ dataSeed: -1 }, 'dataSeed'], [{ dataSeed: 1.5 }, 'dataSeed'], [{ dataSeed: '3' }, 'dataSeed'],
    [{ kernel: 'flash' }, 'kernel'], [{ task: 'copy' }, 'task'], [{ vocab: 65537 }, 'vocab'],
    [{ lerningRate: 1 }, 'lerningRate'], [{ weights: 3 }, 'weights'],
    [{ weights: { embed: new Float32Array(3) } }, 'weights.embed'],
  ];
  for (const [cfg, field] of bad) {
    throwsField(lib, () => lib.createTrainer(cfg), field, JSON.stringify(cfg));
  }
  const e = throwsField(lib, () => lib.createTrainer({ seqLen: 4096, dModel: 1024, heads: 16, batch: 64 }), 'memory', 'memory cap');
  assert.equal(e.code, 'resource_exhausted');
  // Wrong shape of one layer matrix.
  const ok = lib.createTrainer(SMALL);
  const w = ok.weights();
  w.layers[1].wo = new Float32Array(5);
  throwsField(lib, () => lib.createTrainer({ ...SMALL, weights: w }), 'weights.layers[1].wo', 'wo shape');
  w.layers[1].wo = ok.weights().layers[1].wo;
  w.embed[3] = NaN;
  throwsField(lib, () => lib.createTrainer({ ...SMALL, weights: w }), 'weights', 'NaN weight');
  // Still usable.
  assert.equal(ok.train(1).loss.length, 1);
  ok.delete();
});

test('bad method arguments throw naming the field; the trainer keeps working', async () => {
  const lib = await loadTrain();
  const tr = lib.createTrainer(SMALL);
  const b = tr.sampleBatch();
  const cases = [
    [() => tr.train(-1), 'n'], [() => tr.train(1.5), 'n'],
    [() => tr.attention(new Int32Array(13)), 'tokens'], [() => tr.attention(new Int32Array(0)), 'tokens'],
    [() => tr.attention(Int32Array.from([1, 16])), 'tokens'], [() => tr.attention('abc'), 'tokens'],
    [() => tr.lossAndGradients(b.tokens.subarray(0, 13), b.lossMask.subarray(0, 13)), 'tokens'],
    [() => tr.lossAndGradients(b.tokens, b.lossMask.subarray(0, 12)), 'lossMask'],
    [() => tr.lossAndGradients(b.tokens, new Uint8Array(b.tokens.length)), 'lossMask'],
    [() => tr.trainOn(b.tokens, [2]), 'lossMask'],
    [() => tr.setLearningRate(NaN), 'lr'], [() => tr.setLearningRate('x'), 'lr'],
    [() => tr.setAblation(2, 0, true), 'layer'], [() => tr.setAblation(0, 2, true), 'head'],
    [() => tr.setAblation(0, 0, 1), 'on'],
    [() => tr.generate([1], 12), 'n'], [() => tr.generate([], 1), 'prompt'], [() => tr.generate([99], 1), 'prompt'],
    [() => tr.generate([1], 1, { temperature: -1 }), 'temperature'], [() => tr.generate([1], 1, { seed: -2 }), 'seed'],
    [() => tr.decoder({ cache: 'yes' }), 'cache'], [() => tr.decoder().append(16), 'token'],
    [() => tr.decoder().append(1.5), 'token'], [() => tr.decoder().append(1e300), 'token'],
    [() => tr.setAblation(1e300, 0, true), 'layer'], [() => tr.setAblation(0, 2 ** 40, true), 'head'],
    [() => tr.generate([1], 1e300), 'n'], [() => tr.train(1e300), 'n'],
  ];
  for (const [fn, field] of cases) throwsField(lib, fn, field, fn.toString());
  assert.equal(tr.train(2).loss.length, 2);
  tr.delete();
  throwsField(lib, () => tr.train(1), 'trainer', 'after delete');
});

test('ablation: zeroing a head changes the loss, restoring it restores the loss exactly', async () => {
  const lib = await loadTrain();
  const tr = lib.createTrainer(SMALL);
  tr.train(10);
  const b = tr.sampleBatch();
  const l0 = tr.lossAndGradients(b.tokens, b.lossMask).loss;
  tr.setAblation(0, 1, true);
  const l1 = tr.lossAndGradients(b.tokens, b.lossMask).loss;
  const hs = tr.headScores();
  tr.setAblation(0, 1, false);
  assert.notEqual(l1, l0);
  assert.equal(tr.lossAndGradients(b.tokens, b.lossMask).loss, l0);
  assert.ok(hs.ablationLoss.every(Number.isFinite));
  tr.delete();
});

test('a diverging run reports the non-finite step and the trainer stays usable', async () => {
  const lib = await loadTrain();
  const tr = lib.createTrainer({ ...SMALL, lr: 1000, initStd: 30, weightDecay: 0 });
  const r = tr.train(200);
  assert.equal(r.finite, false);
  const k = r.loss.length - 1;
  assert.ok(!Number.isFinite(r.loss[k]) || !Number.isFinite(r.gradNorm[k]));
  for (let i = 0; i < k; i++) assert.ok(Number.isFinite(r.loss[i]));
  assert.equal(r.step, k, 'the non-finite step is not applied');
  tr.setLearningRate(1e-3);
  tr.evaluate();
  tr.headScores();
  assert.ok(tr.train(1).loss.length === 1);
  tr.delete();
});
