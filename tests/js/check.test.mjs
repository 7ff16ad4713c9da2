// core.check(q, k, v, opts): the float32 kernel against the float64 scalar kernel and the tiled
// kernel against the naive one, with their tolerances. Its figures are checked against
// independent ones: the float32 kernel's distance from the NumPy oracle (attention.json) and
// the tiled/naive distance of two core.attention calls.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { loadCore, loadFixture, attnOpts, attnInputs, nums, expectFieldError } from './helpers.mjs';

const cases = loadFixture('attention.json').cases;

// max |a - b|; NaN must meet NaN (else Infinity), equal infinities count 0.
function maxAbsDiff(a, b) {
  let m = 0;
  for (let i = 0; i < a.length; i++) {
    const x = a[i], y = b[i];
    if (Number.isNaN(x) || Number.isNaN(y)) {
      if (Number.isNaN(x) !== Number.isNaN(y)) return Infinity;
      continue;
    }
    if (!Number.isFinite(x) || !Number.isFinite(y)) {
      if (x !== y) return Infinity;
      continue;
    }
    m = Math.max(m, Math.abs(x - y));
  }
  return m;
}

test('check: figures equal independent measurements and pass their tolerances on every oracle case', async () => {
  const core = await loadCore();
  const table = new Map();
  let compared = 0, simd = 0, overflow = 0;
  for (const c of cases) {
    const inputs = attnInputs(c);
    const r = core.check(...inputs, attnOpts(c));
    const naive = core.attention(...inputs, attnOpts(c, { kernel: 'naive' }));
    const tiled = core.attention(...inputs, attnOpts(c, { kernel: 'tiled' }));
    assert.equal(r.tiledVsNaive.maxAbs, maxAbsDiff(tiled.output, naive.output), `${c.name}: tiled vs naive`);
    if (r.simd) simd++;
    if (c.expect.infScoreRows > 0) {  // float32 scores overflow where float64 ones do not
      assert.equal(r.f32VsF64.maxAbs, Infinity, c.name);
      assert.equal(r.pass, false, c.name);
      overflow++;
      continue;
    }
    assert.equal(r.pass, true, `${c.name}: ${JSON.stringify(r)}`);
    assert.ok(r.f32VsF64.maxAbs <= r.f32VsF64.tolerance && r.tiledVsNaive.maxAbs <= r.tiledVsNaive.tolerance);
    if (c.expect.weights !== null) {
      const d = Math.max(maxAbsDiff(naive.output, nums(c.expect.output)), maxAbsDiff(naive.weights, nums(c.expect.weights)));
      assert.ok(Math.abs(r.f32VsF64.maxAbs - d) <= 1e-9 * Math.max(1, r.maxAbsV),
        `${c.name}: check says ${r.f32VsF64.maxAbs}, the oracle ${d}`);
      compared++;
    }
    const t = table.get(c.family) ?? { f32: 0, f32Tol: Infinity, tiled: 0, tiledTol: Infinity };
    t.f32 = Math.max(t.f32, r.f32VsF64.maxAbs);
    t.f32Tol = Math.min(t.f32Tol, r.f32VsF64.tolerance);
    t.tiled = Math.max(t.tiled, r.tiledVsNaive.maxAbs);
    t.tiledTol = Math.min(t.tiledTol, r.tiledVsNaive.tolerance);
    table.set(c.family, t);
  }
  assert.ok(compared >= 30 && overflow >= 1);
  assert.ok(simd >= 30, 'the browser module must check its SIMD128 kernels on ordinary inputs');
  console.log('core.check over attention.json (max |Δ| per family; smallest tolerance):');
  for (const [fam, t] of table) {
    console.log(`  ${fam.padEnd(13)} f32 vs f64 ${t.f32.toExponential(2)} (tol ${t.f32Tol.toExponential(2)})` +
      `   tiled vs naive ${t.tiled.toExponential(2)} (tol ${t.tiledTol.toExponential(2)})`);
  }
});

test('check: the presets (lesson 1 induction heads, lesson 2 NumPy example) pass', async () => {
  const core = await loadCore();
  const presets = [
    ['induction', core.example('induction')],
    ['lesson2 (numpy)', core.example('random', { seed: 0, t: 6, dModel: 8, heads: 1, dk: 4, dv: 4, causal: true, generator: 'numpy' })],
  ];
  for (const [name, e] of presets) {
    const m = core.multiHeadAttention(e.x, e.wq, e.wk, e.wv, e.wo, e);
    const opts = { heads: e.heads, kvHeads: m.kvHeads, tq: e.t, tk: e.t, dk: m.dk, dv: m.dv, causal: e.causal };
    const r = core.check(m.q, m.k, m.v, opts);
    assert.equal(r.pass, true, `${name}: ${JSON.stringify(r)}`);
    console.log(`check, preset ${name}: f32 vs f64 ${r.f32VsF64.maxAbs.toExponential(2)} (tol ${r.f32VsF64.tolerance.toExponential(2)}),` +
      ` tiled vs naive ${r.tiledVsNaive.maxAbs.toExponential(2)} (tol ${r.tiledVsNaive.tolerance.toExponential(2)}), simd ${r.simd}`);
  }
});

test('check: bad input and a small cap are refused with the field; the instance keeps working', async () => {
  const core = await loadCore();
  const q = new Float32Array(8).fill(0.5);
  const o = { heads: 1, tq: 4, tk: 4, dk: 2, dv: 2 };
  expectFieldError(() => core.check(q.subarray(1), q, q, o), ['q'], 'q length');
  expectFieldError(() => core.check([1, 2], q, q, o), ['q'], 'q type');
  expectFieldError(() => core.check(q, q, q, { ...o, heads: 0 }), ['heads'], 'heads');
  const e = expectFieldError(() => core.check(q, q, q, { ...o, memoryCap: 200 }), ['memory'], 'cap');
  assert.equal(e.code, 'resource_exhausted');
  assert.equal(core.check(q, q, q, o).pass, true);
});
