// core.example('alignment') (the hand-built cross-attention model) and the random example's
// kvTokens, against tests/fixtures/alignment.json (tests/oracle/gen_alignment_fixtures.py).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { loadCore, loadFixture, compareArrays, expectFieldError } from './helpers.mjs';

const fx = loadFixture('alignment.json').cases;

test('alignment: the builder reproduces the oracle matrices and its cross attention the weights', async () => {
  const core = await loadCore();
  assert.equal(fx.length, 3);
  for (const c of fx) {
    const e = core.example('alignment', { queries: c.queries, keys: c.keys, sharpness: c.sharpness });
    assert.deepEqual(e.tokens, c.queries, c.name);
    assert.deepEqual(e.kvTokens, c.keys, c.name);
    for (const key of ['t', 'tk', 'dModel', 'heads', 'dk', 'dv', 'causal']) {
      assert.equal(e[key], c[key], `${c.name}: ${key}`);
    }
    assert.equal(e.kvHeads, 2);
    for (const key of ['x', 'xKv', 'wq', 'wk', 'wv', 'wo']) {
      assert.ok(e[key] instanceof Float32Array, `${key} must be a Float32Array`);
      compareArrays(e[key], c[key], 0, `${c.name}: ${key}`);
    }
    for (const kernel of ['naive', 'tiled']) {
      // The example is its own opts: xKv and tk make it cross-attention.
      const r = core.multiHeadAttention(e.x, e.wq, e.wk, e.wv, e.wo, { ...e, kernel });
      compareArrays(r.output, c.expect.output, 1e-5, `${c.name}: output [${kernel}]`);
      compareArrays(r.headOutputs, c.expect.headOutputs, 1e-5, `${c.name}: headOutputs [${kernel}]`);
      if (kernel === 'naive') compareArrays(r.weights, c.expect.weights, 1e-5, `${c.name}: weights`);
    }
  }
});

test("alignment: the default pair; 'cat' looks at 'chat' in head 1, head 2 aligns monotonically", async () => {
  const core = await loadCore();
  const e = core.example('alignment');
  assert.deepEqual(e.tokens, ['the', 'cat', 'sat', 'on', 'the', 'mat']);
  assert.deepEqual(e.kvTokens, ['le', 'chat', 'était', 'assis', 'sur', 'le', 'tapis']);
  const r = core.multiHeadAttention(e.x, e.wq, e.wk, e.wv, e.wo, e);
  const argmax = (h, i) => {
    let best = 0;
    for (let j = 1; j < e.tk; j++) if (r.weights[(h * e.t + i) * e.tk + j] > r.weights[(h * e.t + i) * e.tk + best]) best = j;
    return best;
  };
  assert.equal(e.kvTokens[argmax(0, 1)], 'chat');
  for (let i = 1; i < e.t; i++) assert.ok(argmax(1, i) >= argmax(1, i - 1), `head 2 row ${i}`);
  assert.equal(argmax(1, e.t - 1), e.tk - 1);
});

test('alignment: bad options throw naming their field', async () => {
  const core = await loadCore();
  expectFieldError(() => core.example('alignment', { queries: [] }), ['queries']);
  expectFieldError(() => core.example('alignment', { keys: [] }), ['keys']);
  expectFieldError(() => core.example('alignment', { keys: ['le', 3] }), ['keys']);
  expectFieldError(() => core.example('alignment', { queries: Array(513).fill('cat') }), ['queries'], 'the core: over 512');
  expectFieldError(() => core.example('alignment', { keys: Array(513).fill('chat') }), ['keys'], 'the core: over 512');
  for (const sharpness of [0, -1, NaN, Infinity, '14']) {
    expectFieldError(() => core.example('alignment', { sharpness }), ['sharpness'], String(sharpness));
  }
  expectFieldError(() => core.example('random', { kvTokens: 'abc' }), ['kvTokens']);
});

test('random kvTokens: xKv is drawn after W_o, x and the weights stay those of the seed', async () => {
  const core = await loadCore();
  for (const generator of ['splitmix', 'numpy']) {
    const opts = { seed: 5, t: 4, dModel: 8, heads: 2, causal: false, generator };
    const self = core.example('random', opts);
    assert.equal(self.xKv, undefined);
    assert.equal(self.tk, undefined);
    const cross = core.example('random', { ...opts, kvTokens: ['a', 'b', 'c'] });
    for (const key of ['x', 'wq', 'wk', 'wv', 'wo']) assert.deepEqual(cross[key], self[key], `${generator} ${key}`);
    assert.equal(cross.tk, 3);
    assert.deepEqual(cross.kvTokens, ['a', 'b', 'c']);
    assert.equal(cross.xKv.length, 3 * 8);
    const r = core.multiHeadAttention(cross.x, cross.wq, cross.wk, cross.wv, cross.wo, cross);
    assert.equal(r.weights.length, 2 * 4 * 3);
  }
});
