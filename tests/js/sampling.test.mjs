// tr.generate's sampler (temperature, topK, topP, one uniform draw) through wasm: lib.sampleToken
// against the NumPy oracle's cases (tests/fixtures/sampling.json), and generate's options.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { loadFixture } from './helpers.mjs';
import { loadTrain, throwsField } from './train-helpers.mjs';

const SMALL = { vocab: 16, seqLen: 12, dModel: 16, heads: 2, batch: 4, seed: 1 };

test('sampleToken equals the NumPy oracle: token, top-5 ids, probabilities after filtering', async () => {
  const lib = await loadTrain();
  const { cases } = loadFixture('sampling.json');
  assert.ok(cases.length >= 200);
  for (const c of cases) {
    const r = lib.sampleToken(Float32Array.from(c.logits), { temperature: c.temperature, topK: c.topK, topP: c.topP }, c.u);
    assert.equal(r.token, c.token, c.name);
    assert.deepEqual(Array.from(r.topIds), c.topIds, c.name);
    for (let i = 0; i < c.topProbs.length; i++) assert.ok(Math.abs(r.topProbs[i] - c.topProbs[i]) < 1e-6, c.name);
  }
});

test('generate: temperature-only bits unchanged, topK 1 / tiny topP are greedy, top-5 rows, bad fields', async () => {
  const lib = await loadTrain();
  const tr = lib.createTrainer(SMALL);
  tr.train(3);
  const prompt = [3, 4, 5];
  const greedy = tr.generate(prompt, 9).tokens;
  const plain = tr.generate(prompt, 9, { temperature: 1.5, seed: 4 });
  const off = tr.generate(prompt, 9, { temperature: 1.5, seed: 4, topK: 0, topP: 1 });
  assert.deepEqual(off.tokens, plain.tokens);
  assert.equal(plain.topIds.length, 9 * 5);
  assert.equal(plain.topProbs.length, 9 * 5);
  assert.deepEqual(tr.generate(prompt, 9, { temperature: 1.5, seed: 4, topK: 1 }).tokens, greedy);
  assert.deepEqual(tr.generate(prompt, 9, { temperature: 1.5, seed: 4, topP: 1e-9 }).tokens, greedy);
  const k3 = tr.generate(prompt, 9, { temperature: 3, seed: 9, topK: 3 });
  for (let i = 0; i < 9; i++) {
    const row = Array.from(k3.topIds.subarray(i * 5, i * 5 + 3));
    assert.ok(row.includes(k3.tokens[i]), 'the token is among the 3 kept');
    assert.equal(k3.topProbs[i * 5 + 3], 0);
    assert.ok(Math.abs(k3.topProbs[i * 5] + k3.topProbs[i * 5 + 1] + k3.topProbs[i * 5 + 2] - 1) < 1e-5);
  }
  const bad = [
    [() => tr.generate([1], 1, { topK: -1 }), 'topK'], [() => tr.generate([1], 1, { topK: 1.5 }), 'topK'],
    [() => tr.generate([1], 1, { topP: 0 }), 'topP'], [() => tr.generate([1], 1, { topP: 1.01 }), 'topP'],
    [() => tr.generate([1], 1, { topP: NaN }), 'topP'], [() => lib.sampleToken([1, 2], { topP: -1 }, 0.5), 'topP'],
    [() => lib.sampleToken([], {}, 0.5), 'logits'], [() => lib.sampleToken([1], {}, 1), 'u'],
  ];
  for (const [fn, field] of bad) throwsField(lib, fn, field, fn.toString());
  tr.delete();
});
