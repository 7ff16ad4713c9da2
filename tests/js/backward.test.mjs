// core.attentionBackward against every case of tests/fixtures/backward.json (PyTorch
// autograd, float64) with both kernels; dropout through the JS surface; bad input throws an
// AttnError naming the field and the module keeps working. Prints max |Δ| per family.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  loadCore, loadFixture, attnOpts, compareArrays, expectFieldError, f32, maxAbsScore, maxAbs,
  nums, U32, DeltaTable,
} from './helpers.mjs';

const fixture = loadFixture('backward.json');
const cases = new Map(fixture.cases.map((c) => [c.name, c]));
const table = new DeltaTable();

// Tolerance of one case: 5e-5 absolute, plus for large logits a float32 score error of
// 4·u32·S (S = max |scaled score|) carried into weights times the gradients' scale.
function tolerance(c) {
  if (c.family !== 'large_logits') return 5e-5;
  const m = Math.max(1, maxAbs(nums(c.v)), maxAbs(nums(c.k)), maxAbs(nums(c.q)));
  return 5e-5 + 4 * U32 * maxAbsScore(c) * m * m;
}

const inputs = (c) => [f32(c.q), f32(c.k), f32(c.v), f32(c.dOut)];

function checkCase(core, c, kernel, extra = {}) {
  const g = core.attentionBackward(...inputs(c), attnOpts(c, { kernel, ...extra }));
  const { heads, kvHeads, tq, tk, dk, dv } = c.opts;
  const tol = tolerance(c);
  const label = `${c.name} [${kernel}]`;
  for (const [name, len] of [['dq', heads * tq * dk], ['dk', kvHeads * tk * dk],
    ['dv', kvHeads * tk * dv], ['output', heads * tq * dv], ['lse', heads * tq]]) {
    assert.ok(g[name] instanceof Float32Array, `${label}: ${name} is a Float32Array`);
    assert.equal(g[name].length, len, `${label}: ${name} length`);
  }
  const d = {};
  for (const name of ['output', 'dq', 'dk', 'dv']) {
    d[name] = compareArrays(g[name], c.expect[name], tol, `${label} ${name}`);
  }
  table.add(c.family, kernel, 'case');
  for (const [key, val] of Object.entries(d)) table.add(c.family, kernel, key, val);
  return g;
}

test('attentionBackward matches the PyTorch autograd fixtures (both kernels)', async () => {
  const core = await loadCore();
  assert.equal(typeof core.attentionBackward, 'function');
  for (const c of fixture.cases) {
    for (const kernel of ['naive', 'tiled']) checkCase(core, c, kernel);
  }
  console.log(`attentionBackward vs PyTorch (${fixture.cases.length} cases), max |Δ|:\n` +
    table.format(['output', 'dq', 'dk', 'dv']));
});

test('attentionBackward returns copies: a later call does not change earlier results', async () => {
  const core = await loadCore();
  const a = cases.get('basic_h1_t4'), b = cases.get('tile_t65_causal');
  const ga = core.attentionBackward(...inputs(a), attnOpts(a));
  const before = ga.dq.slice();
  core.attentionBackward(...inputs(b), attnOpts(b, { kernel: 'tiled' }));
  assert.deepEqual(ga.dq, before);
  ga.dq[0] = 1234;
  const again = core.attentionBackward(...inputs(a), attnOpts(a));
  assert.notEqual(again.dq[0], 1234);
});

test('dropout: same seed same result, both kernels agree, p = 0 changes nothing', async () => {
  const core = await loadCore();
  const c = cases.get('tile_tq70_tk130_causal_padding');
  const plain = core.attentionBackward(...inputs(c), attnOpts(c));
  const zero = core.attentionBackward(...inputs(c), attnOpts(c, { dropout: 0, dropoutSeed: 77 }));
  for (const name of ['dq', 'dk', 'dv', 'output']) assert.deepEqual(zero[name], plain[name], name);
  const o = attnOpts(c, { dropout: 0.3, dropoutSeed: 12345 });
  const n1 = core.attentionBackward(...inputs(c), { ...o, kernel: 'naive' });
  const n2 = core.attentionBackward(...inputs(c), { ...o, kernel: 'naive' });
  const t = core.attentionBackward(...inputs(c), { ...o, kernel: 'tiled' });
  for (const name of ['dq', 'dk', 'dv', 'output']) {
    assert.deepEqual(n1[name], n2[name], `${name}: deterministic`);
    compareArrays(t[name], Array.from(n1[name]), 1e-5, `tiled vs naive ${name}`);
  }
  // The forward with the same dropout gives the backward's output, and dropout changes it.
  const f = core.attention(...inputs(c).slice(0, 3), o);
  compareArrays(f.output, Array.from(n1.output), 1e-6, 'attention output with dropout');
  let changed = 0;
  for (let i = 0; i < f.output.length; i++) changed += f.output[i] !== plain.output[i];
  assert.ok(changed > f.output.length / 2, `dropout changed ${changed} of ${f.output.length} outputs`);
  const other = core.attention(...inputs(c).slice(0, 3), { ...o, dropoutSeed: 12346 });
  assert.notDeepEqual(other.output, f.output);
});

test('bad input throws an AttnError naming the field; the module keeps working', async () => {
  const core = await loadCore();
  const c = cases.get('masks_causal_padding');
  const [q, k, v, dOut] = inputs(c);
  const o = attnOpts(c);
  const bad = [
    ['dOut too short', ['dOut'], () => [q, k, v, dOut.subarray(1), o]],
    ['dOut too long', ['dOut'], () => [q, k, v, new Float32Array(dOut.length + 3), o]],
    ['dOut as Float64Array', ['dOut'], () => [q, k, v, Float64Array.from(dOut), o]],
    ['dOut missing', ['dOut'], () => [q, k, v, undefined, o]],
    ['dropout 1', ['dropout'], () => [q, k, v, dOut, { ...o, dropout: 1 }]],
    ['dropout -0.1', ['dropout'], () => [q, k, v, dOut, { ...o, dropout: -0.1 }]],
    ['dropout NaN', ['dropout'], () => [q, k, v, dOut, { ...o, dropout: NaN }]],
    ['dropout Infinity', ['dropout'], () => [q, k, v, dOut, { ...o, dropout: Infinity }]],
    ['dropout string', ['dropout'], () => [q, k, v, dOut, { ...o, dropout: '0.1' }]],
    ['dropoutSeed -1', ['dropoutSeed'], () => [q, k, v, dOut, { ...o, dropoutSeed: -1 }]],
    ['dropoutSeed 0.5', ['dropoutSeed'], () => [q, k, v, dOut, { ...o, dropoutSeed: 0.5 }]],
    ['q too short', ['q'], () => [q.subarray(1), k, v, dOut, o]],
    ['kvHeads not dividing', ['kvHeads'], () => [q, k, v, dOut, { ...o, kvHeads: 3 }]],
    ['kernel unknown', ['kernel'], () => [q, k, v, dOut, { ...o, kernel: 'flash' }]],
    ['returnScores', ['returnScores'], () => [q, k, v, dOut, { ...o, returnScores: true }]],
    ['memory cap', ['memoryCap', 'memory'], () => [q, k, v, dOut, { ...o, memoryCap: 1000 }]],
    ['opts null', ['opts'], () => [q, k, v, dOut, null]],
  ];
  for (const [label, fields, args] of bad) {
    expectFieldError(() => core.attentionBackward(...args()), fields, label);
    checkCase(core, c, 'naive');
  }
  for (const p of [1, NaN, -0.5]) {
    expectFieldError(() => core.attention(q, k, v, { ...o, dropout: p }), ['dropout'], `attention dropout ${p}`);
  }
  // NaN inputs are data, not errors: they reach the gradients they touch.
  const qn = q.slice();
  qn[0] = NaN;
  const g = core.attentionBackward(qn, k, v, dOut, o);
  assert.ok(Number.isNaN(g.dq[0]), 'a NaN query gives a NaN gradient for its row');
  checkCase(core, c, 'tiled');
});
