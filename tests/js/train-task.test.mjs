// The task rule of the training module: [noise, s, s] fits any seqLen >= 4 (an odd one gives
// the noise the odd token), and a task that cannot be drawn stops only the calls that draw it
// (train, sampleBatch, evaluate, headScores, scoreGradients, diagnostics, profile): trainOn and
// lossAndGradients on the caller's own tokens neither check nor use the task.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { loadTrain, throwsField, bitsEqual } from './train-helpers.mjs';

const SMALL = { vocab: 16, dModel: 16, heads: 2, batch: 4, seed: 1 };

test("task 'induction' with an odd seqLen: [noise, s, s], the noise takes the odd token", async () => {
  const lib = await loadTrain();
  for (const seqLen of [5, 9, 31]) {
    const vocab = seqLen - Math.ceil(Math.floor(seqLen / 2) / 2); // the smallest that fits
    const tr = lib.createTrainer({ ...SMALL, task: 'induction', seqLen, vocab, batch: 16 });
    const r = tr.train(2);
    assert.equal(r.loss.length, 2);
    assert.ok(Number.isFinite(tr.evaluate().loss));
    const b = tr.sampleBatch();
    for (let s = 0; s < 16; s++) {
      const tok = b.tokens.subarray(s * seqLen, (s + 1) * seqLen);
      const mask = b.lossMask.subarray(s * seqLen, (s + 1) * seqLen);
      const L = mask.reduce((a, x) => a + x, 0) + 1; // the copy's length
      assert.ok(L >= 2 && 2 * L < seqLen, `seqLen ${seqLen}: copy of ${L} leaves no noise`);
      for (let i = 0; i < L; i++) assert.equal(tok[seqLen - L + i], tok[seqLen - 2 * L + i]);
      assert.equal(new Set(tok.subarray(0, seqLen - L)).size, seqLen - L, 'noise and s distinct');
      for (let i = 0; i < seqLen; i++) assert.equal(mask[i], i >= seqLen - L + 1 ? 1 : 0);
    }
    tr.delete();
  }
  throwsField(lib, () => lib.createTrainer({ ...SMALL, task: 'induction', seqLen: 3 }).train(1), 'seqLen', 'seqLen 3');
});

test('a task that cannot be drawn stops only the calls that draw it', async () => {
  const lib = await loadTrain();
  const cases = [
    [{ task: 'induction', seqLen: 32, vocab: 20 }, 'vocab'], // needs 24 distinct tokens
    [{ task: 'induction-fixed', seqLen: 31 }, 'seqLen'], // [s, s] needs an even seqLen
  ];
  for (const [cfg, field] of cases) {
    const bad = lib.createTrainer({ ...SMALL, ...cfg });
    const ok = lib.createTrainer({ ...SMALL, ...cfg, task: 'random' });
    const label = JSON.stringify(cfg);
    throwsField(lib, () => bad.train(1), field, `${label} train`);
    throwsField(lib, () => bad.sampleBatch(), field, `${label} sampleBatch`);
    throwsField(lib, () => bad.evaluate(), field, `${label} evaluate`);
    throwsField(lib, () => bad.headScores(), field, `${label} headScores`);
    throwsField(lib, () => bad.scoreGradients(), field, `${label} scoreGradients`);
    throwsField(lib, () => bad.diagnostics(), field, `${label} diagnostics`);
    throwsField(lib, () => bad.profile(1), field, `${label} profile`);
    // The caller's own tokens: the same numbers, bit for bit, whatever the task.
    const { tokens, lossMask } = ok.sampleBatch();
    const ga = bad.lossAndGradients(tokens, lossMask), gb = ok.lossAndGradients(tokens, lossMask);
    assert.equal(ga.loss, gb.loss, label);
    assert.ok(bitsEqual(ga.grads.embed, gb.grads.embed) && bitsEqual(ga.grads.unembed, gb.grads.unembed), label);
    for (let s = 0; s < 3; s++) {
      const a = bad.trainOn(tokens, lossMask), b = ok.trainOn(tokens, lossMask);
      assert.deepEqual(a, b, `${label} trainOn step ${s}`);
    }
    const wa = bad.weights(), wb = ok.weights();
    assert.ok(bitsEqual(wa.layers[0].wq, wb.layers[0].wq), label);
    const probe = tokens.subarray(0, cfg.seqLen);
    assert.ok(bitsEqual(bad.attention(probe).weights, ok.attention(probe).weights), label);
    assert.deepEqual(bad.generate([1], 3).tokens, ok.generate([1], 3).tokens);
    bad.delete();
    ok.delete();
  }
});
