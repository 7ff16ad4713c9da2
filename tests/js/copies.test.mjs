// Returned arrays belong to the caller: copies, not views of the wasm heap.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  loadCore, loadFixture, attnOpts, attnInputs, compareArrays, f32, u8, ABS_TOL, REL_LSE, U32,
} from './helpers.mjs';

const cases = new Map(loadFixture('attention.json').cases.map((c) => [c.name, c]));
const mha = loadFixture('multihead.json').cases[0];
const lseTol = (e) => ABS_TOL + REL_LSE * Math.abs(e);

function check(r, c, label, weights = true) {
  compareArrays(r.output, c.expect.output, ABS_TOL, `${label} output`);
  if (weights) compareArrays(r.weights, c.expect.weights, ABS_TOL, `${label} weights`);
  compareArrays(r.entropy, c.expect.entropy, ABS_TOL, `${label} entropy`);
  compareArrays(r.lse, c.expect.lse, lseTol, `${label} lse`);
}

test('mutating returned arrays does not change later results', async () => {
  const core = await loadCore();
  const c = cases.get('gqa_h4_kv2_causal');
  for (const kernel of ['naive', 'tiled']) {
    const r1 = core.attention(...attnInputs(c), attnOpts(c, { kernel, returnScores: kernel === 'naive' }));
    for (const key of ['output', 'weights', 'entropy', 'lse', 'scores']) if (r1[key]) r1[key].fill(12345);
    const r2 = core.attention(...attnInputs(c), attnOpts(c, { kernel }));
    check(r2, c, `${kernel} after mutating the first result`, kernel === 'naive');
    assert.notEqual(r1.output.buffer, r2.output.buffer, 'two results share a buffer');
  }
});

test('a later call does not overwrite an earlier result', async () => {
  const core = await loadCore();
  const a = cases.get('basic_h3_t5_dk4_dv4');
  const b = cases.get('scale_3.7');
  const ra = core.attention(...attnInputs(a), attnOpts(a));
  const rb = core.attention(...attnInputs(b), attnOpts(b));
  check(ra, a, 'first result after a second call');
  check(rb, b, 'second result');
});

test('results survive later calls that grow wasm memory', async () => {
  const core = await loadCore();
  const c = cases.get('masks_causal_window_padding_custom');
  const naive = core.attention(...attnInputs(c), attnOpts(c, { returnScores: true }));
  const tiled = core.attention(...attnInputs(c), attnOpts(c, { kernel: 'tiled' }));
  const m1 = core.multiHeadAttention(f32(mha.x), f32(mha.wq), f32(mha.wk), f32(mha.wv), f32(mha.wo),
    { ...mha.opts, keyPadding: u8(mha.opts.keyPadding), mask: u8(mha.opts.mask) });
  const ex = core.example('induction');
  const x0 = Float32Array.from(ex.x);
  // grow: naive T = 2500 needs 25 MB of weights (plus scores: 50 MB)
  for (const T of [1024, 2500]) {
    const q = new Float32Array(T * 8).fill(0.01), v = new Float32Array(T * 8).fill(1);
    const big = core.attention(q, q, v, { heads: 1, tq: T, tk: T, dk: 8, dv: 8, returnScores: true });
    assert.equal(big.weights.length, T * T);
    // v = 1 everywhere: output 1 up to the rounding of a T-term float32 sum
    assert.ok(Math.abs(big.output[0] - 1) <= 2 * T * U32, `big output ${big.output[0]}`);
  }
  assert.ok(naive.output.length > 0, 'result detached after memory growth');
  check(naive, c, 'naive result after memory growth');
  compareArrays(naive.scores, c.expect.scores, ABS_TOL, 'scores after memory growth');
  check(tiled, c, 'tiled result after memory growth', false);
  compareArrays(m1.output, mha.expect.output, ABS_TOL, 'mha output after memory growth');
  compareArrays(m1.weights, mha.expect.weights, ABS_TOL, 'mha weights after memory growth');
  compareArrays(m1.q, mha.expect.q, ABS_TOL, 'mha q after memory growth');
  assert.deepEqual(Array.from(ex.x), Array.from(x0), 'example matrices changed after memory growth');
});

test('inputs are not modified by a call', async () => {
  const core = await loadCore();
  const c = cases.get('policy_zero_fully_masked_row');
  const [q, k, v] = attnInputs(c);
  const o = attnOpts(c);
  const before = [q, k, v, o.mask].map((a) => Array.from(a));
  core.attention(q, k, v, o);
  core.attention(q, k, v, { ...o, kernel: 'tiled' });
  assert.deepEqual([q, k, v, o.mask].map((a) => Array.from(a)), before);
});

test('example() returns fresh arrays each call', async () => {
  const core = await loadCore();
  const a = core.example('random', { seed: 3 });
  const snapshot = Float32Array.from(a.wq);
  a.wq.fill(0);
  const b = core.example('random', { seed: 3 });
  assert.deepEqual(Array.from(b.wq), Array.from(snapshot));
  assert.notEqual(a.wq.buffer, b.wq.buffer);
});
