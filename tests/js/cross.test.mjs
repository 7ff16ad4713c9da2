// core.multiHeadAttention with opts.xKv (cross-attention: queries from x's T_q rows, keys and
// values from xKv's T_k rows) against tests/fixtures/cross_mha.json, float32 (both kernels) and
// float64, and its errors.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { loadCore, loadFixture, compareArrays, f32, u8 } from './helpers.mjs';

const fixture = loadFixture('cross_mha.json');
const F32_TOL = 1e-5;
const F64_TOL = 1e-12;

// The inputs are float32 values (rounded to float32 first, then widened for float64).
const f64 = (a) => Float64Array.from(f32(a));
function arrays(c, as = f32) {
  return ['x', 'wq', 'wk', 'wv', 'wo'].map((key) => as(c[key]));
}
function opts(c, extra = {}) {
  const o = c.opts;
  return {
    t: o.t, tk: o.tk, dModel: o.dModel, heads: o.heads, kvHeads: o.kvHeads, dk: o.dk, dv: o.dv,
    causal: o.causal, keyPadding: u8(o.keyPadding), xKv: f32(c.xKv), ...extra,
  };
}
// Outputs relative to their scale (sums of d_model products), weights absolute.
function check(r, c, tol, weights, label) {
  const e = c.expect;
  const { t, tk, dModel, heads, kvHeads, dk, dv } = c.opts;
  let scale = 1;
  for (const v of e.output) scale = Math.max(scale, Math.abs(v));
  assert.equal(r.output.length, t * dModel, `${label} output length`);
  assert.equal(r.q.length, heads * t * dk, `${label} q is (H, T_q, d_k)`);
  assert.equal(r.k.length, kvHeads * tk * dk, `${label} k is (H_kv, T_k, d_k)`);
  assert.equal(r.v.length, kvHeads * tk * dv, `${label} v is (H_kv, T_k, d_v)`);
  for (const key of ['output', 'merged', 'headOutputs', 'q', 'k', 'v']) {
    compareArrays(r[key], e[key], tol * scale, `${label} ${key}`);
  }
  if (weights) {
    assert.equal(r.weights.length, heads * t * tk, `${label} weights are (H, T_q, T_k)`);
    compareArrays(r.weights, e.weights, tol, `${label} weights`);
  } else {
    assert.equal(r.weights, null, `${label}: tiled weights must be null`);
  }
  assert.equal(r.fullyMaskedRows, 0);
}

test('cross_mha.json holds T_q < T_k, T_q > T_k with GQA, key padding and causal', () => {
  const cs = fixture.cases.map((c) => c.opts);
  assert.ok(cs.some((o) => o.t < o.tk && !o.causal && !o.keyPadding));
  assert.ok(cs.some((o) => o.t > o.tk && o.kvHeads < o.heads));
  assert.ok(cs.some((o) => o.keyPadding && o.keyPadding.length === o.tk && o.tk !== o.t));
  assert.ok(cs.some((o) => o.causal && o.t < o.tk));
});

for (const kernel of ['naive', 'tiled']) {
  test(`cross_mha.json, float32 (${kernel})`, async (t) => {
    const core = await loadCore();
    for (const c of fixture.cases) {
      await t.test(c.name, () => {
        const r = core.multiHeadAttention(...arrays(c), opts(c, { kernel }));
        check(r, c, F32_TOL, kernel === 'naive', `${c.name} [${kernel}]`);
        // tk defaults to xKv's rows
        const d = core.multiHeadAttention(...arrays(c), opts(c, { kernel, tk: undefined }));
        assert.deepEqual(d.output, r.output);
      });
    }
  });
}

test('cross_mha.json, precision float64 (Float64Array inputs and xKv)', async (t) => {
  const core = await loadCore();
  for (const c of fixture.cases) {
    await t.test(c.name, () => {
      const r = core.multiHeadAttention(...arrays(c, f64), opts(c, { precision: 'float64', xKv: f64(c.xKv) }));
      assert.ok(r.output instanceof Float64Array);
      check(r, c, F64_TOL, true, `${c.name} [float64]`);
    });
  }
});

test('self-attention given as xKv = x is the call without xKv, bit for bit', async () => {
  const core = await loadCore();
  const c = fixture.cases[0];
  const [x, wq, wk, wv, wo] = arrays(c);
  const o = { t: c.opts.t, dModel: c.opts.dModel, heads: c.opts.heads, causal: true };
  const self = core.multiHeadAttention(x, wq, wk, wv, wo, o);
  const cross = core.multiHeadAttention(x, wq, wk, wv, wo, { ...o, xKv: x });
  for (const key of ['output', 'merged', 'q', 'k', 'v', 'weights']) {
    assert.ok(self[key].every((v, i) => Object.is(v, cross[key][i])), key);
  }
});

test('cross-attention errors name their field; the module keeps working', async () => {
  const core = await loadCore();
  const c = fixture.cases[2];  // key padding, T_q 4, T_k 6
  const { t, tk } = c.opts;
  const field = (extra) => {
    try {
      core.multiHeadAttention(...arrays(c), opts(c, extra));
    } catch (e) {
      assert.equal(e.name, 'AttnError');
      return [e.field, e.message];
    }
    return null;
  };
  // xKv's length is not tk*dModel: one value short, or a tk that disagrees with it
  let [f, msg] = field({ xKv: f32(c.xKv).subarray(1) });
  assert.equal(f, 'xKv');
  assert.match(msg, /tk\*dModel/);
  assert.equal(field({ tk: tk - 1, keyPadding: null })[0], 'xKv');
  // keyPadding of T_q entries instead of T_k
  [f, msg] = field({ keyPadding: new Uint8Array(t).fill(1) });
  assert.equal(f, 'keyPadding');
  assert.match(msg, new RegExp(`tk = ${tk}`));
  // an explicit mask is (T_q, T_k)
  assert.equal(field({ keyPadding: null, mask: new Uint8Array(t * t).fill(1) })[0], 'mask');
  assert.equal(field({ keyPadding: null, mask: new Uint8Array(t * tk).fill(1) }), null);
  // tk without xKv (self-attention) must be t
  [f, msg] = field({ xKv: undefined, keyPadding: null });
  assert.equal(f, 'tk');
  assert.match(msg, /xKv/);
  assert.equal(field({ xKv: null, tk: t, keyPadding: null }), null);
  // xKv's type: a Float64Array only under precision 'float64'
  assert.equal(field({ xKv: f64(c.xKv) })[0], 'xKv');
  assert.equal(field({ xKv: [1, 2, 3] })[0], 'xKv');
  assert.equal(field({ tk: 0 })[0], 'tk');
  // and the next call works
  check(core.multiHeadAttention(...arrays(c), opts(c)), c, F32_TOL, true, 'after the errors');
});

test('estimateMultiHeadBytes counts T_k', async () => {
  const core = await loadCore();
  const o = { t: 3, dModel: 8, heads: 2 };
  const self = core.estimateMultiHeadBytes(o);
  assert.equal(core.estimateMultiHeadBytes({ ...o, tk: 3 }), self);
  assert.ok(core.estimateMultiHeadBytes({ ...o, tk: 50 }) > self);
});
