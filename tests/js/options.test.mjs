// Every documented option of core.attention and its default (docs/js-api.md).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  loadCore, loadFixture, attnOpts, attnInputs, compareArrays, expectFieldError, num, ABS_TOL, REL_LSE,
} from './helpers.mjs';

// memory-cap errors: the option is memoryCap; the core reports .field 'memory' (accepted)
const MEM = ['memoryCap', 'memory'];

const cases = new Map(loadFixture('attention.json').cases.map((c) => [c.name, c]));
const get = (name) => {
  const c = cases.get(name);
  assert.ok(c, `fixture case ${name} missing`);
  return c;
};
const lseTol = (e) => ABS_TOL + REL_LSE * Math.abs(e);

function checkAgainst(r, c, label, { weights = true } = {}) {
  compareArrays(r.output, c.expect.output, ABS_TOL, `${label} output`);
  if (weights && c.expect.weights) compareArrays(r.weights, c.expect.weights, ABS_TOL, `${label} weights`);
  compareArrays(r.entropy, c.expect.entropy, ABS_TOL, `${label} entropy`);
  compareArrays(r.lse, c.expect.lse, lseTol, `${label} lse`);
  assert.equal(r.fullyMaskedRows, c.expect.fullyMaskedRows, `${label} fullyMaskedRows`);
  assert.equal(r.nanRows, c.expect.nanRows, `${label} nanRows`);
}

// Only the required fields of a case: heads, tq, tk, dk, dv.
function minimal(c) {
  const { heads, tq, tk, dk, dv } = c.opts;
  return { heads, tq, tk, dk, dv };
}

test('defaults: kvHeads = heads, causal false, window 0, no masks, scale 1/sqrt(dk), naive kernel', async () => {
  const core = await loadCore();
  for (const name of ['basic_h1_t4', 'basic_h3_t5_dk4_dv4', 'mha_h4_kv4', 'shapes_dv_gt_dk', 'shapes_t1']) {
    const c = get(name);
    assert.equal(c.opts.kvHeads, c.opts.heads);
    const r = core.attention(...attnInputs(c), minimal(c));
    checkAgainst(r, c, `${name} minimal opts`);
    assert.ok(r.weights instanceof Float32Array, 'default kernel is naive: weights returned');
    assert.ok(Math.abs(r.scale - 1 / Math.sqrt(c.opts.dk)) < 1e-7, `scale default is 1/sqrt(dk): ${r.scale}`);
  }
});

test('explicit null / undefined for every optional field behaves as the default', async () => {
  const core = await loadCore();
  const c = get('basic_h3_t5_dk4_dv4');
  const nulls = {
    ...minimal(c), kvHeads: undefined, causal: undefined, window: undefined, keyPadding: null,
    mask: null, scale: null, maskFill: undefined, kernel: undefined, returnScores: undefined,
    memoryCap: undefined,
  };
  checkAgainst(core.attention(...attnInputs(c), nulls), c, 'nulls');
});

test('maskFill defaults to neg_inf (fully masked row -> NaN)', async () => {
  const core = await loadCore();
  const c = get('policy_neg_inf_fully_masked_row');
  const opts = attnOpts(c);
  delete opts.maskFill;
  const r = core.attention(...attnInputs(c), opts);
  checkAgainst(r, c, 'maskFill omitted');
  assert.ok(r.nanRows > 0, 'a fully masked row must be NaN under the default policy');
});

test('maskFill finite and zero differ from the default exactly where the oracle says', async () => {
  const core = await loadCore();
  for (const fill of ['neg_inf', 'finite', 'zero']) {
    for (const kernel of ['naive', 'tiled']) {
      const c = get(`policy_${fill}_fully_masked_row`);
      const r = core.attention(...attnInputs(c), attnOpts(c, { kernel }));
      checkAgainst(r, c, `${fill} ${kernel}`, { weights: kernel === 'naive' });
    }
  }
});

test('causal, window, keyPadding, mask: each option alone matches the oracle', async () => {
  const core = await loadCore();
  for (const name of ['masks_causal', 'masks_window', 'masks_padding', 'masks_custom']) {
    const c = get(name);
    const o = attnOpts(c);
    const only = minimal(c);
    if (o.causal) only.causal = true;
    if (o.window) only.window = o.window;
    if (o.keyPadding) only.keyPadding = o.keyPadding;
    if (o.mask) only.mask = o.mask;
    checkAgainst(core.attention(...attnInputs(c), only), c, `${name} (only this option set)`);
  }
});

test('keyPadding of all ones equals no padding', async () => {
  const core = await loadCore();
  const c = get('policy_empty_padding_all_ones');
  const opts = attnOpts(c);
  checkAgainst(core.attention(...attnInputs(c), opts), c, 'padding all ones');
  opts.keyPadding = null;
  checkAgainst(core.attention(...attnInputs(c), opts), c, 'padding null');
});

test('scale: null, 1, 0.05, 3.7 and the reported scale', async () => {
  const core = await loadCore();
  for (const name of ['scale_default', 'scale_1', 'scale_0.05', 'scale_3.7', 'scale_0.001']) {
    const c = get(name);
    const r = core.attention(...attnInputs(c), attnOpts(c));
    checkAgainst(r, c, name);
    const s = num(c.expect.scale);
    assert.ok(Math.abs(r.scale - s) <= 1e-7 * s, `${name}: r.scale ${r.scale} != ${s}`);
  }
});

test('kernel: naive returns weights, tiled returns weights null with equal output/lse/entropy', async () => {
  const core = await loadCore();
  const c = get('tile_t65_causal');
  const naive = core.attention(...attnInputs(c), attnOpts(c, { kernel: 'naive' }));
  const tiled = core.attention(...attnInputs(c), attnOpts(c, { kernel: 'tiled' }));
  assert.ok(naive.weights instanceof Float32Array);
  assert.equal(tiled.weights, null);
  checkAgainst(naive, c, 'naive', { weights: false });
  checkAgainst(tiled, c, 'tiled', { weights: false });
});

test('returnScores: false by default (scores null); true gives the scaled unmasked scores', async () => {
  const core = await loadCore();
  const c = get('masks_causal_window_padding_custom');
  const plain = core.attention(...attnInputs(c), attnOpts(c));
  assert.equal(plain.scores, null, 'scores must be null without returnScores');
  const r = core.attention(...attnInputs(c), attnOpts(c, { returnScores: true }));
  compareArrays(r.scores, c.expect.scores, ABS_TOL, 'scores');
  checkAgainst(r, c, 'with returnScores');
  // scores are naive-only: with the tiled kernel, either scores null or an error naming returnScores
  let tiled = null;
  try {
    tiled = core.attention(...attnInputs(c), attnOpts(c, { returnScores: true, kernel: 'tiled' }));
  } catch (e) {
    assert.ok(e.name === 'AttnError' && e.message.includes('returnScores') && e.field === 'returnScores', e.message);
  }
  if (tiled) assert.equal(tiled.scores, null, 'the tiled kernel never materialises scores');
  checkAgainst(core.attention(...attnInputs(c), attnOpts(c)), c, 'after returnScores with tiled');
});

test('memoryCap: a lower cap rejects, a higher one accepts', async () => {
  const core = await loadCore();
  const c = get('basic_h2_t8_dk16');
  checkAgainst(core.attention(...attnInputs(c), attnOpts(c, { memoryCap: 1024 * 1024 * 1024 })), c, 'cap 1 GiB');
  expectFieldError(() => core.attention(...attnInputs(c), attnOpts(c, { memoryCap: 64 })), MEM, 'cap 64 B');
  checkAgainst(core.attention(...attnInputs(c), attnOpts(c)), c, 'after a capped call');
});

test('memoryCap: the tiled kernel needs no T_q x T_k buffer (T = 2048 under an 8 MiB cap)', async () => {
  const core = await loadCore();
  const T = 2048, dk = 4, dv = 4;
  const q = new Float32Array(T * dk), k = new Float32Array(T * dk), v = new Float32Array(T * dv);
  for (let i = 0; i < q.length; i++) q[i] = Math.sin(i * 0.37);
  for (let i = 0; i < k.length; i++) k[i] = Math.cos(i * 0.11);
  for (let i = 0; i < v.length; i++) v[i] = (i % 7) - 3;
  const opts = { heads: 1, tq: T, tk: T, dk, dv, causal: true, memoryCap: 8 * 1024 * 1024 };
  // naive would need 16 MiB for the weights alone
  expectFieldError(() => core.attention(q, k, v, { ...opts, kernel: 'naive' }), MEM, 'naive T=2048 cap 8 MiB');
  const r = core.attention(q, k, v, { ...opts, kernel: 'tiled' });
  assert.equal(r.output.length, T * dv);
  // row 0 under causal sees only key 0: output = v[0] exactly as a convex combination of one row
  for (let d = 0; d < dv; d++) assert.ok(Math.abs(r.output[d] - v[d]) <= 1e-6);
  // every causal row averages values in [-3, 3]
  for (const x of r.output) assert.ok(x >= -3 - 1e-5 && x <= 3 + 1e-5);
});

test('result shape: typed arrays of the documented lengths and integer counters', async () => {
  const core = await loadCore();
  const c = get('gqa_h6_kv3_tq4_tk7');
  const { heads, tq, tk, dv } = c.opts;
  const r = core.attention(...attnInputs(c), attnOpts(c));
  assert.ok(r.output instanceof Float32Array && r.output.length === heads * tq * dv);
  assert.ok(r.weights instanceof Float32Array && r.weights.length === heads * tq * tk);
  assert.ok(r.entropy instanceof Float32Array && r.entropy.length === heads * tq);
  assert.ok(r.lse instanceof Float32Array && r.lse.length === heads * tq);
  for (const key of ['fullyMaskedRows', 'nanRows', 'infScoreRows']) {
    assert.ok(Number.isInteger(r[key]) && r[key] >= 0, `${key} = ${r[key]}`);
  }
  assert.equal(typeof r.scale, 'number');
});
