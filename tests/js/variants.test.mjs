// The attention variants through the JS API: every case of the NumPy oracle's variants.json in
// its precision, the result types (Float64Array under precision 'float64'), the tiled kernels,
// multiHeadAttention passing the options through, the estimates, and every error naming its
// field with the module working afterwards.
//
// Tolerances, |got - want| <= tol (as tests/cpp/test_variants.cpp):
//   precision 'float64' vs the float64 oracle     1e-9 (1 + |want|)
//   precision 'float32' vs the float64 oracle     2e-5 (1 + |want|)
//   float32 vs the float32 oracle (thresholds)    1e-5 (1 + |want|)
//   precision 'float16' vs its binary16 oracle    2^-9 (1 + |want|)
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { loadCore, loadFixture, compareArrays, expectFieldError, u8, nums } from './helpers.mjs';

const fx = loadFixture('variants.json');
const rel = (t) => (e) => t * (1 + Math.abs(e));

function inputsOf(c, Ctor = Float32Array) {
  const x = fx.inputs[c.inputs];
  // The fixture's inputs are float32 values in shortest decimal form: round to float32 first.
  const f = (a) => Ctor.from(Float32Array.from(nums(a)));
  return [f(x.q), f(x.k), f(x.v)];
}
function optsOf(c, extra = {}) {
  const x = fx.inputs[c.inputs], o = c.opts;
  return {
    heads: x.heads, kvHeads: x.kvHeads, tq: x.tq, tk: x.tk, dk: x.dk, dv: x.dv,
    causal: o.causal, window: o.window, keyPadding: u8(o.keyPadding), mask: u8(o.mask),
    scale: o.scale, maskFill: o.maskFill, qkNorm: o.qkNorm, position: o.position,
    ropeBase: o.ropeBase, normalizer: o.normalizer, sigmoidBias: o.sigmoidBias,
    maxShift: o.maxShift, maskMode: o.maskMode, precision: o.precision, ...extra,
  };
}
function compareAll(r, c, tol, label, fields = ['output', 'weights', 'rowSums', 'entropy', 'lse']) {
  for (const f of fields) compareArrays(r[f], c.expect[f], tol, `${label}: ${f}`);
}
const byName = new Map(fx.cases.map((c) => [c.name, c]));
const good = byName.get('softmax1 rope qkNorm=True before causal');

test('every oracle case matches in its precision (float64, float32, float16)', async () => {
  const core = await loadCore();
  let n = 0;
  for (const c of fx.cases) {
    if (c.opts.precision === 'float64') {
      const r = core.attention(...inputsOf(c), optsOf(c));
      assert.ok(r.output instanceof Float64Array && r.weights instanceof Float64Array &&
                r.rowSums instanceof Float64Array && r.lse instanceof Float64Array, c.name);
      compareAll(r, c, rel(1e-9), `${c.name} float64`);
      // The same inputs given as Float64Array.
      const r2 = core.attention(...inputsOf(c, Float64Array), optsOf(c));
      assert.deepEqual(r2.output, r.output, `${c.name}: Float64Array inputs`);
      if (!c.name.startsWith('threshold')) {
        const r32 = core.attention(...inputsOf(c), optsOf(c, { precision: 'float32' }));
        assert.ok(r32.output instanceof Float32Array && r32.rowSums instanceof Float32Array);
        compareAll(r32, c, rel(2e-5), `${c.name} float32`);
      }
    } else if (c.opts.precision === 'float32') {
      compareAll(core.attention(...inputsOf(c), optsOf(c)), c, rel(1e-5), c.name);
    } else {
      const r = core.attention(...inputsOf(c), optsOf(c));
      assert.ok(r.output instanceof Float32Array);
      compareAll(r, c, rel(2 ** -9), c.name);
    }
    n++;
  }
  assert.ok(n >= 350, `${n} cases`);
});

test('the tiled kernels: softmax1, sigmoid, relu with positions; linear as prefix sums', async () => {
  const core = await loadCore();
  let n = 0;
  for (const c of fx.cases) {
    const o = c.opts;
    if (o.precision !== 'float64' || o.maskMode !== 'before' || !o.maxShift) continue;
    if (o.normalizer === 'linear' && (o.keyPadding || o.mask || o.window)) continue;
    const r = core.attention(...inputsOf(c), optsOf(c, { precision: 'float32', kernel: 'tiled' }));
    assert.equal(r.weights, null, c.name);
    const fields = o.normalizer === 'linear' ? ['output', 'rowSums'] : ['output', 'rowSums', 'entropy', 'lse'];
    compareAll(r, c, rel(2e-5), `${c.name} tiled`, fields);
    if (o.normalizer === 'linear') assert.ok(r.entropy.every(Number.isNaN), `${c.name}: entropy NaN`);
    n++;
  }
  assert.ok(n >= 100, `${n} tiled cases`);
});

test('multiHeadAttention passes the variant through (float32 and float64)', async () => {
  const core = await loadCore();
  const t = 5, dModel = 8, heads = 2;
  let seed = 1;
  const rnd = (n) => Float32Array.from({ length: n }, () => ((seed = (seed * 16807) % 2147483647) / 2147483647) * 2 - 1);
  const x = rnd(t * dModel), wq = rnd(64), wk = rnd(64), wv = rnd(64), wo = rnd(64);
  const variant = { normalizer: 'relu', position: 'alibi', qkNorm: true, scale: 4, causal: true };
  for (const precision of ['float32', 'float64']) {
    const m = core.multiHeadAttention(x, wq, wk, wv, wo, { t, dModel, heads, ...variant, precision });
    const Ctor = precision === 'float64' ? Float64Array : Float32Array;
    assert.ok(m.output instanceof Ctor && m.weights instanceof Ctor && m.rowSums instanceof Ctor, precision);
    const a = core.attention(m.q, m.k, m.v, { heads, tq: t, tk: t, dk: 4, dv: 4, ...variant, precision });
    assert.deepEqual(a.output, m.headOutputs, `${precision}: headOutputs = attention on its q, k, v`);
    assert.deepEqual(a.rowSums, m.rowSums, `${precision}: rowSums`);
    // relu with qkNorm and scale 4: weights in [0, 4/T]; a row's sum is not 1.
    assert.ok(m.weights.every((w) => w >= 0 && w <= 4 / t + 1e-6));
  }
});

test('estimates cover the variant paths: a cap equal to the estimate passes, one byte less fails', async () => {
  const core = await loadCore();
  const c = good;
  for (const [extra, kernel] of [[{}, 'naive'], [{ qkNorm: true }, 'naive'], [{ precision: 'float16', qkNorm: false, position: 'none', normalizer: 'softmax' }, 'naive'],
    [{ precision: 'float64' }, 'naive'], [{ normalizer: 'linear', position: 'none', qkNorm: false }, 'tiled'], [{}, 'tiled']]) {
    const o = optsOf(c, { precision: 'float32', ...extra, kernel });
    const est = core.estimateBytes(o, kernel);
    core.attention(...inputsOf(c), { ...o, memoryCap: est });
    expectFieldError(() => core.attention(...inputsOf(c), { ...o, memoryCap: est - 1 }), ['memory'], JSON.stringify(extra));
  }
  assert.ok(core.estimateBytes(optsOf(c, { precision: 'float64' })) > core.estimateBytes(optsOf(c, { precision: 'float32' })));
  const mo = { t: 6, dModel: 8, heads: 2 };
  assert.ok(core.estimateMultiHeadBytes({ ...mo, precision: 'float64' }) > core.estimateMultiHeadBytes(mo));
});

test('every new option names its field when bad, given or unused, and the module keeps working', async () => {
  const core = await loadCore();
  const ins = inputsOf(good);
  const base = optsOf(good);
  const bad = [
    ['qkNorm', { qkNorm: 1 }],
    ['qkNorm', { qkNorm: 'yes' }],
    ['position', { position: 'sinusoidal' }],
    ['position', { position: 'rope', dk: 3, heads: 1, kvHeads: 1 }, 'rope odd dk'],
    ['position', { position: 'alibi', normalizer: 'linear' }],
    ['ropeBase', { ropeBase: 0 }],
    ['ropeBase', { ropeBase: -1, position: 'none' }, 'unused ropeBase'],
    ['ropeBase', { ropeBase: '10000' }],
    ['ropeBase', { ropeBase: Infinity }],
    ['normalizer', { normalizer: 'softmax2' }],
    ['normalizer', { normalizer: 3 }],
    ['sigmoidBias', { sigmoidBias: NaN }],
    ['sigmoidBias', { sigmoidBias: '1', normalizer: 'softmax' }, 'unused sigmoidBias'],
    ['maxShift', { maxShift: 0 }],
    ['maxShift', { maxShift: false, normalizer: 'sigmoid' }],
    ['maxShift', { maxShift: false, normalizer: 'linear', position: 'none' }],
    ['maskMode', { maskMode: 'during' }],
    ['precision', { precision: 'float8' }],
    ['precision', { precision: 'float16' }, 'float16 with rope and softmax1'],
    ['precision', { precision: 'float16', normalizer: 'softmax', qkNorm: true, position: 'none' }],
    ['kernel', { kernel: 'tiled', maskMode: 'after' }],
    ['kernel', { kernel: 'tiled', maxShift: false }],
    ['kernel', { kernel: 'tiled', precision: 'float64' }],
    ['kernel', { kernel: 'tiled', precision: 'float16', normalizer: 'softmax', qkNorm: false, position: 'none' }],
    ['kernel', { kernel: 'tiled', normalizer: 'linear', position: 'none', window: 2 }],
    ['q', { precision: 'float32' }, 'Float64Array input without float64', true],
    ['into', { precision: 'float64' }, 'into with float64', false, { output: new Float64Array(1) }],
  ];
  for (const [field, extra, label, f64in, into] of bad) {
    const [q, k, v] = f64in ? inputsOf(good, Float64Array) : ins;
    const o = { ...base, ...extra };
    const call = () => core.attention(extra.dk ? new Float32Array(1 * 4 * 3) : q, extra.dk ? new Float32Array(1 * 4 * 3) : k,
      extra.dk ? new Float32Array(4 * 3) : v, extra.dk ? { ...o, tq: 4, tk: 4, dv: 3, keyPadding: null, mask: null } : o, into);
    expectFieldError(call, [field], label || JSON.stringify(extra));
    const r = core.attention(...ins, base);
    compareAll(r, good, rel(1e-9), `after ${label || field}`);
  }
  // multiHeadAttention and the estimates check the same fields.
  const mo = { t: 4, dModel: 8, heads: 2 };
  const w = new Float32Array(64), x = new Float32Array(32);
  expectFieldError(() => core.multiHeadAttention(x, w, w, w, w, { ...mo, normalizer: 'soft' }), ['normalizer']);
  expectFieldError(() => core.multiHeadAttention(x, w, w, w, w, { ...mo, position: 'alibi', normalizer: 'linear' }), ['position']);
  expectFieldError(() => core.estimateBytes({ heads: 1, tq: 4, tk: 4, dk: 4, maskMode: 'x' }), ['maskMode']);
  expectFieldError(() => core.estimateMultiHeadBytes({ ...mo, precision: 'half' }), ['precision']);
  // The backward pass refuses the demonstrations training does not take, naming the field
  // (the trainable variants: tests/js/variant-backward.test.mjs).
  const d = new Float32Array(base.heads * base.tq * base.dv);
  expectFieldError(() => core.attentionBackward(...ins, d, { ...base, precision: 'float32', normalizer: 'relu', position: 'none', qkNorm: false, maxShift: false }), ['maxShift']);
  compareAll(core.attention(...ins, base), good, rel(1e-9), 'at the end');
});
