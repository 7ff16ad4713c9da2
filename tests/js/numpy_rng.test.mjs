// core.example('random', { generator: 'numpy' }) against NumPy's own default_rng stream
// (tests/fixtures/numpy_rng.json, written by tests/oracle/gen_numpy_rng.py).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { loadCore, loadFixture } from './helpers.mjs';

const fx = loadFixture('numpy_rng.json');
const l2 = fx.lesson2;
// NumPy's float64 (repr: parseFloat is exact), rounded to float32 as the example stores it.
const f32 = (a) => Float32Array.from(a.map(Number));

// The page's lesson-2 preset state (web/src/presets.ts) as compute.ts passes it.
const LESSON2 = {
  seed: 0, t: 6, dModel: 8, heads: 1, kvHeads: 1, dk: 4, dv: 4, causal: true,
  tokens: ['t0', 't1', 't2', 't3', 't4', 't5'], generator: 'numpy',
};

function sameBits(got, want, label) {
  assert.ok(got instanceof Float32Array, `${label} must be a Float32Array`);
  assert.equal(got.length, want.length, `${label} length`);
  for (let i = 0; i < got.length; i++) {
    if (!Object.is(got[i], want[i])) assert.fail(`${label}[${i}]: ${got[i]} != NumPy ${want[i]}`);
  }
}

test("generator 'numpy': lesson 2's X, W_q, W_k, W_v (and W_o) are NumPy's default_rng(0) draws, bit for bit", async () => {
  const core = await loadCore();
  const e = core.example('random', LESSON2);
  assert.equal(e.t, l2.t);
  assert.equal(e.dModel, l2.dModel);
  assert.equal(e.dk, l2.dk);
  for (const key of ['x', 'wq', 'wk', 'wv', 'wo']) sameBits(e[key], f32(l2[key]), key);
});

test("generator 'numpy': the page's weights round to the W lesson 2 prints", async () => {
  const core = await loadCore();
  const e = core.example('random', LESSON2);
  const want = l2.weights.map(Number), printed = l2.printed.map(Number);
  for (const kernel of ['naive']) {
    const r = core.multiHeadAttention(e.x, e.wq, e.wk, e.wv, e.wo, { ...e, kernel });
    let d = 0;
    for (let i = 0; i < want.length; i++) d = Math.max(d, Math.abs(r.weights[i] - want[i]));
    assert.ok(d < l2.printMargin, `max |dW| ${d} must stay below the rounding margin ${l2.printMargin}`);
    for (let i = 0; i < want.length; i++) {
      assert.equal(Math.round(r.weights[i] * 100) / 100, printed[i], `weight ${i}`);
    }
    console.log(`lesson 2 preset (numpy generator): max |dW| vs NumPy float64 = ${d.toExponential(2)}`);
  }
});

test("generator 'numpy': other shapes draw the stream in the order X, W_q, W_k, W_v, W_o", async () => {
  const core = await loadCore();
  let n = 0;
  for (const s of fx.streams) {
    const seed = Number(s.seed);
    if (!Number.isSafeInteger(seed)) continue;  // JS seeds stop at 2^53 - 1
    const e = core.example('random', { seed, t: 4, dModel: 4, heads: 2, kvHeads: 1, dk: 2, dv: 1, generator: 'numpy' });
    const all = [...e.x, ...e.wq, ...e.wk, ...e.wv, ...e.wo];
    sameBits(Float32Array.from(all), f32(s.normal.first.slice(0, all.length)), `seed ${s.seed}`);
    n++;
  }
  assert.ok(n >= 4);
});

test("generator defaults to 'splitmix' (the other examples' stream) and rejects unknown names", async () => {
  const core = await loadCore();
  const { generator, ...rest } = LESSON2;
  const a = core.example('random', rest);
  const b = core.example('random', { ...rest, generator: 'splitmix' });
  assert.deepEqual(a.x, b.x);
  assert.notDeepEqual(a.x, f32(l2.x));
  assert.throws(() => core.example('random', { ...rest, generator: 'mt19937' }),
    (err) => err.name === 'AttnError' && err.field === 'generator' && /generator/.test(err.message));
  assert.equal(generator, 'numpy');
});
