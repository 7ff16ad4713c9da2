// The two browser modules check the fields they share with one checker: the same bad value in
// the same field gets the same AttnError (field, code and words) from the core's
// multiHeadAttention options and from the trainer's config, and both modules keep working.
// Before the shared checker the two disagreed (e.g. a seed of -1, a dropout of 1, a scale of
// 'none', a memoryCap above the limit, an array as the options object).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { loadCore } from './helpers.mjs';
import { loadTrain } from './train-helpers.mjs';

// A small valid multi-head call: T = 4, d_model = 8, 2 heads.
function mhaArgs() {
  const t = 4, d = 8;
  const x = Float32Array.from({ length: t * d }, (_, i) => Math.sin(i));
  const w = () => Float32Array.from({ length: d * d }, (_, i) => Math.cos(i) / 4);
  return { x, wq: w(), wk: w(), wv: w(), wo: w(), base: { t, dModel: d, heads: 2 } };
}
const trainBase = { vocab: 8, seqLen: 8, layers: 1, heads: 2, dModel: 8, batch: 2 };

function errorOf(fn) {
  try {
    fn();
  } catch (e) {
    return e;
  }
  return null;
}

// The core call that takes each shared field (the trainer takes them all in its config):
// attention for shapes, kernel, scale, dropout and the cap, the random example for seed.
function coreCall(core, m, field, value) {
  if (field === 'seed') return () => core.example('random', { seed: value });
  const t = 4, dk = 4, q = m.x.subarray(0, 2 * t * dk);
  const opts = { heads: 2, tq: t, tk: t, dk, dv: dk, [field]: value };
  return () => core.attention(q, q, q, opts);
}

// [field, bad value]: fields both modules take, each with values one or the other used to
// accept, default or word differently.
const SHARED_BAD = [
  ['heads', 0], ['heads', 1.5], ['heads', '2'], ['heads', 2 ** 31],
  ['kvHeads', -1], ['kvHeads', NaN],
  ['seed', -1], ['seed', 0.5], ['seed', 2 ** 53], ['seed', '7'],
  ['kernel', 'flash'], ['kernel', 1],
  ['scale', 0], ['scale', -1], ['scale', Infinity], ['scale', 'sqrt2'], ['scale', true],
  ['dropout', 1], ['dropout', -0.1], ['dropout', NaN], ['dropout', '0.1'],
  ['memoryCap', 0], ['memoryCap', 1.5], ['memoryCap', 2 ** 40], ['memoryCap', '1e6'],
];

test('the same bad field gets the same error from the core and from the trainer', async () => {
  const core = await loadCore();
  const lib = await loadTrain();
  const m = mhaArgs();
  const mismatched = [];
  for (const [field, value] of SHARED_BAD) {
    const label = `${field} = ${String(value)}`;
    const eCore = errorOf(coreCall(core, m, field, value));
    const eTrain = errorOf(() => lib.createTrainer({ ...trainBase, [field]: value }));
    for (const [who, e] of [['core', eCore], ['trainer', eTrain]]) {
      assert.ok(e, `${who}: ${label} must throw`);
      assert.equal(e.name, 'AttnError', `${who}: ${label}: ${e}`);
      assert.equal(e.field, field, `${who}: ${label}: field (${e.message})`);
      assert.equal(e.code, 'invalid_argument', `${who}: ${label}: code`);
    }
    if (eCore.message !== eTrain.message) mismatched.push(`${label}:\n  core:    ${eCore.message}\n  trainer: ${eTrain.message}`);
  }
  assert.deepEqual(mismatched, [], 'the same words in both modules');
  // both instances still work after every error
  assert.equal(core.multiHeadAttention(m.x, m.wq, m.wk, m.wv, m.wo, m.base).output.length, 32);
  lib.createTrainer(trainBase).delete();
});

test('an array is not an options object in either module', async () => {
  const core = await loadCore();
  const lib = await loadTrain();
  const m = mhaArgs();
  const eCore = errorOf(() => core.traffic([]));
  const eCore2 = errorOf(() => core.multiHeadAttention(m.x, m.wq, m.wk, m.wv, m.wo, []));
  const eTrain = errorOf(() => lib.createTrainer([]));
  assert.equal(eCore?.field, 'opts');
  assert.equal(eCore2?.field, 'opts');
  assert.equal(eTrain?.field, 'config');
});

test("both modules read scale the same way: 'sqrt' and null are 1/sqrt(d_k), 'none' is 1", async () => {
  const core = await loadCore();
  const m = mhaArgs();
  const run = (scale) => core.multiHeadAttention(m.x, m.wq, m.wk, m.wv, m.wo, { ...m.base, scale }).output;
  assert.deepEqual(run('sqrt'), run(null));
  assert.deepEqual(run('none'), run(1));
  assert.notDeepEqual(run('none'), run(null));
  const lib = await loadTrain();
  for (const scale of ['sqrt', 'none', null, 0.5]) {
    const tr = lib.createTrainer({ ...trainBase, scale });
    tr.delete();
  }
});

test('missing fields take their defaults in both modules; a required one is named', async () => {
  const core = await loadCore();
  const lib = await loadTrain();
  const m = mhaArgs();
  const e = errorOf(() => core.multiHeadAttention(m.x, m.wq, m.wk, m.wv, m.wo, { t: 4, dModel: 8 }));
  assert.equal(e?.field, 'heads');
  assert.match(e.message, /heads is required/);
  // undefined and null read as missing everywhere (defaults), in both modules
  const r = core.multiHeadAttention(m.x, m.wq, m.wk, m.wv, m.wo,
    { ...m.base, kernel: undefined, memoryCap: null, scale: undefined });
  assert.equal(r.output.length, 4 * 8);
  const r2 = core.attention(m.x.subarray(0, 32), m.x.subarray(0, 32), m.x.subarray(0, 32),
    { heads: 2, tq: 4, tk: 4, dk: 4, dv: 4, kernel: undefined, dropout: null, dropoutSeed: null, memoryCap: null, scale: undefined });
  assert.equal(r2.output.length, 32);
  const tr = lib.createTrainer({ ...trainBase, seed: null, kernel: undefined, dropout: null, memoryCap: null });
  tr.delete();
  // and after every error above, both instances still work
  assert.equal(core.multiHeadAttention(m.x, m.wq, m.wk, m.wv, m.wo, m.base).output.length, 32);
});
