// core.multiHeadAttention against tests/fixtures/multihead.json (both kernels, defaults).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  loadCore, loadFixture, compareArrays, f32, u8, num, ABS_TOL, REL_LSE, DeltaTable,
} from './helpers.mjs';

const fixture = loadFixture('multihead.json');
const table = new DeltaTable();
const lseTol = (e) => ABS_TOL + REL_LSE * Math.abs(e);

function args(c) {
  return [f32(c.x), f32(c.wq), f32(c.wk), f32(c.wv), f32(c.wo)];
}
function opts(c, extra = {}) {
  const o = c.opts;
  return {
    t: o.t, dModel: o.dModel, heads: o.heads, kvHeads: o.kvHeads, dk: o.dk, dv: o.dv,
    causal: o.causal, window: o.window, keyPadding: u8(o.keyPadding), mask: u8(o.mask),
    scale: o.scale === null ? null : num(o.scale), maskFill: o.maskFill, ...extra,
  };
}

function check(r, c, kernel, label) {
  const e = c.expect;
  const { t, dModel, heads, kvHeads, dk, dv } = c.opts;
  const d = {};
  d.output = compareArrays(r.output, e.output, ABS_TOL, `${label} output`);
  assert.equal(r.output.length, t * dModel);
  d.merged = compareArrays(r.merged, e.merged, ABS_TOL, `${label} merged`);
  d.headOutputs = compareArrays(r.headOutputs, e.headOutputs, ABS_TOL, `${label} headOutputs`);
  d.q = compareArrays(r.q, e.q, ABS_TOL, `${label} q (split_heads of x W_q)`);
  d.k = compareArrays(r.k, e.k, ABS_TOL, `${label} k`);
  d.v = compareArrays(r.v, e.v, ABS_TOL, `${label} v`);
  assert.equal(r.q.length, heads * t * dk);
  assert.equal(r.k.length, kvHeads * t * dk);
  assert.equal(r.v.length, kvHeads * t * dv);
  if (kernel === 'naive') {
    d.weights = compareArrays(r.weights, e.weights, ABS_TOL, `${label} weights`);
  } else {
    assert.equal(r.weights, null, `${label}: tiled weights must be null`);
  }
  d.entropy = compareArrays(r.entropy, e.entropy, ABS_TOL, `${label} entropy`);
  d.lse = compareArrays(r.lse, e.lse, lseTol, `${label} lse`);
  assert.equal(r.dk, dk, `${label} dk`);
  assert.equal(r.dv, dv, `${label} dv`);
  assert.equal(r.kvHeads, kvHeads, `${label} kvHeads`);
  assert.ok(Math.abs(r.scale - num(e.scale)) <= 1e-7 * num(e.scale), `${label} scale`);
  assert.equal(r.fullyMaskedRows, e.fullyMaskedRows, `${label} fullyMaskedRows`);
  assert.equal(r.nanRows, e.nanRows, `${label} nanRows`);
  assert.equal(r.infScoreRows, e.infScoreRows, `${label} infScoreRows`);
  table.add('multihead', kernel, 'case');
  for (const [key, val] of Object.entries(d)) table.add('multihead', kernel, key, val);
}

for (const kernel of ['naive', 'tiled']) {
  test(`multihead.json (${kernel})`, async (t) => {
    const core = await loadCore();
    for (const c of fixture.cases) {
      await t.test(c.name, () => {
        check(core.multiHeadAttention(...args(c), opts(c, { kernel })), c, kernel, `${c.name} [${kernel}]`);
      });
    }
  });
}

test('multihead defaults: kvHeads = heads, dk = dModel / heads, dv = dk, kernel naive', async () => {
  const core = await loadCore();
  let used = 0;
  for (const c of fixture.cases) {
    const o = opts(c);
    for (const key of ['kvHeads', 'dk', 'dv']) if (c.defaults[key]) delete o[key];
    if (!c.defaults.kvHeads && !c.defaults.dk && !c.defaults.dv) continue;
    delete o.kernel;
    for (const key of ['causal', 'window', 'keyPadding', 'mask', 'scale', 'maskFill']) {
      // drop options that are at their defaults too
      if (o[key] === null || o[key] === false || o[key] === 0 || o[key] === 'neg_inf') delete o[key];
    }
    check(core.multiHeadAttention(...args(c), o), c, 'naive', `${c.name} (defaults)`);
    used++;
  }
  assert.ok(used >= 3);
});

test('the fixture holds GQA, MQA and dk != dModel / heads cases', () => {
  const names = fixture.cases.map((c) => c.name);
  assert.ok(fixture.cases.some((c) => c.opts.kvHeads > 1 && c.opts.kvHeads < c.opts.heads), 'GQA');
  assert.ok(fixture.cases.some((c) => c.opts.kvHeads === 1 && c.opts.heads > 1), 'MQA');
  assert.ok(fixture.cases.some((c) => c.opts.dk * c.opts.heads !== c.opts.dModel), 'dk != dModel/heads');
  assert.ok(names.length >= 6);
});

test('max |Δ| for multi-head attention', () => {
  const text = table.format(['output', 'merged', 'headOutputs', 'q', 'k', 'v', 'weights', 'entropy', 'lse']);
  console.log('\nmax |Δ| vs NumPy oracle, multiHeadAttention\n' + text);
});

// The page's redraw when only the mask or scale changed: attention() on multiHeadAttention's own
// q, k, v, then mergeHeads, must give the full call's per-head outputs, merged and output bit for
// bit (and so the oracle's values), with any mask.
test('core.mergeHeads after attention() on the cached q, k, v: the full call, bit for bit', async () => {
  const core = await loadCore();
  const same = (a, b, what) => {
    assert.equal(a.length, b.length, `${what}: length`);
    assert.ok(a.every((x, i) => Object.is(x, b[i])), `${what}: not bit-identical`);
  };
  for (const c of fixture.cases) {
    const o = opts(c);
    const full = core.multiHeadAttention(...args(c), o);
    const a = core.attention(full.q, full.k, full.v, {
      heads: o.heads, kvHeads: full.kvHeads, tq: o.t, tk: o.t, dk: full.dk, dv: full.dv,
      causal: o.causal, window: o.window, keyPadding: o.keyPadding, mask: o.mask, scale: o.scale, maskFill: o.maskFill,
    });
    same(a.output, full.headOutputs, `${c.name} headOutputs`);
    same(a.weights, full.weights, `${c.name} weights`);
    const m = core.mergeHeads(a.output, f32(c.wo), { t: o.t, heads: o.heads, dv: full.dv, dModel: o.dModel });
    same(m.merged, full.merged, `${c.name} merged`);
    same(m.output, full.output, `${c.name} output`);
    compareArrays(m.output, c.expect.output, ABS_TOL, `${c.name} mergeHeads output vs oracle`);
    // into caller-owned arrays: the same bits, in the arrays given
    const into = { merged: new Float32Array(m.merged.length).fill(NaN), output: new Float32Array(m.output.length).fill(NaN) };
    const mi = core.mergeHeads(a.output, f32(c.wo), { t: o.t, heads: o.heads, dv: full.dv, dModel: o.dModel }, into);
    assert.equal(mi.merged, into.merged);
    assert.equal(mi.output, into.output);
    same(mi.merged, full.merged, `${c.name} merged into`);
    same(mi.output, full.output, `${c.name} output into`);
  }
});

test('core.mergeHeads: bad shapes throw AttnError naming the field; the module keeps working', async () => {
  const core = await loadCore();
  const y = new Float32Array(2 * 3 * 4).fill(1), wo = new Float32Array(8 * 5).fill(1);
  const good = { t: 3, heads: 2, dv: 4, dModel: 5 };
  const field = (fn) => { try { fn(); } catch (e) { assert.equal(e.name, 'AttnError'); return e.field; } return null; };
  assert.equal(field(() => core.mergeHeads(y.subarray(1), wo, good)), 'headOutputs');
  assert.equal(field(() => core.mergeHeads(y, wo.subarray(1), good)), 'wo');
  assert.equal(field(() => core.mergeHeads(y, wo, { ...good, heads: 0 })), 'heads');
  assert.equal(field(() => core.mergeHeads(y, wo, { ...good, dModel: 1.5 })), 'dModel');
  assert.equal(field(() => core.mergeHeads([1, 2], wo, good)), 'headOutputs');
  assert.equal(field(() => core.mergeHeads(y, wo, { ...good, memoryCap: 64 })), 'memory');
  assert.equal(field(() => core.mergeHeads(y, wo, good, { merged: new Float32Array(3 * 8 - 1) })), 'into.merged');
  assert.equal(field(() => core.mergeHeads(y, wo, good, { output: new Float64Array(3 * 5) })), 'into.output');
  const r = core.mergeHeads(y, wo, good);
  assert.deepEqual([...r.output.subarray(0, 5)], [8, 8, 8, 8, 8]);
  assert.equal(r.merged.length, 3 * 8);
});
