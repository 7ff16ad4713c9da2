// core.scoreBreakdown: one score taken apart, against NumPy (tests/fixtures/breakdown.json,
// tests/oracle/gen_breakdown_fixtures.py), every variant, float32 and float64; and its score is
// the score the attention call itself returns.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { loadCore, loadFixture, nums, u8, expectFieldError } from './helpers.mjs';

const cases = loadFixture('breakdown.json').cases;
const rel = (a, b) => Math.abs(a - b) / Math.max(1, Math.abs(b));

function optsOf(c, precision) {
  return {
    heads: c.heads, kvHeads: c.kvHeads, tq: c.tq, tk: c.tk, dk: c.dk, dv: 1, causal: c.causal, window: c.window,
    keyPadding: u8(c.keyPadding), scale: c.scale, qkNorm: c.variant.qkNorm, position: c.variant.position,
    normalizer: c.variant.normalizer, precision,
  };
}

test('scoreBreakdown equals the NumPy oracle for every case, variant and cell (float32 and float64)', async () => {
  const core = await loadCore();
  assert.ok(cases.length >= 10);
  for (const c of cases)
    for (const precision of ['float32', 'float64']) {
      const A = precision === 'float64' ? Float64Array : Float32Array;
      const q = A.from(nums(c.q).map(Math.fround)), k = A.from(nums(c.k).map(Math.fround));
      const tol = precision === 'float64' ? 1e-12 : 2e-6;
      for (const w of c.cells) {
        const r = core.scoreBreakdown(q, k, { ...optsOf(c, precision), head: w.head, query: w.query, key: w.key });
        const where = `${c.name} ${precision} cell ${w.head},${w.query},${w.key}`;
        assert.ok(r.q instanceof A, `${where}: q in ${precision}`);
        w.q.forEach((x, d) => assert.ok(rel(r.q[d], x) <= tol, `${where}: q[${d}]`));
        w.products.forEach((x, d) => assert.ok(rel(r.products[d], x) <= tol, `${where}: products[${d}]`));
        assert.ok(rel(r.score, w.score) <= tol, `${where}: score ${r.score} vs ${w.score}`);
        assert.ok(rel(r.bias, w.bias) <= 1e-15 && rel(r.scale, w.scale) <= 1e-15, `${where}: scale, bias`);
        assert.equal(r.allowed, w.allowed, `${where}: allowed`);
        w.rowScores.forEach((x, j) => assert.ok(rel(r.rowScores[j], x) <= tol, `${where}: rowScores[${j}]`));
        if (w.nextBest === null) assert.equal(r.nextBest, -Infinity, where);
        else assert.ok(rel(r.nextBest, w.nextBest) <= tol, `${where}: nextBest`);
      }
    }
});

test('scoreBreakdown: its score is the one attention returns (returnScores), every variant', async () => {
  const core = await loadCore();
  for (const c of cases.filter((x) => x.variant.normalizer !== 'linear')) {
    const q = Float32Array.from(nums(c.q)), k = Float32Array.from(nums(c.k));
    const v = new Float32Array(c.kvHeads * c.tk);
    const o = optsOf(c, 'float32');
    const r = core.attention(q, k, v, { ...o, returnScores: true, kernel: 'naive' });
    for (const w of c.cells) {
      const b = core.scoreBreakdown(q, k, { ...o, head: w.head, query: w.query, key: w.key });
      const s = r.scores[(w.head * c.tq + w.query) * c.tk + w.key];
      assert.ok(rel(b.score, s) <= 2e-6, `${c.name} cell ${w.head},${w.query},${w.key}: ${b.score} vs attention's ${s}`);
    }
  }
});

test('scoreBreakdown: a cell out of range, a short q and bad options name their field', async () => {
  const core = await loadCore();
  const q = new Float32Array(8), k = new Float32Array(8);
  const o = { heads: 1, tq: 2, tk: 2, dk: 4, dv: 1 };
  assert.equal(core.scoreBreakdown(q, k, { ...o, query: 1, key: 1 }).score, 0);
  expectFieldError(() => core.scoreBreakdown(q, k, { ...o, query: 2, key: 0 }), ['cell'], 'query 2 of 2');
  expectFieldError(() => core.scoreBreakdown(q, k, { ...o, head: 1, query: 0, key: 0 }), ['cell'], 'head 1 of 1');
  expectFieldError(() => core.scoreBreakdown(q.subarray(1), k, { ...o, query: 0, key: 0 }), ['q'], 'short q');
  expectFieldError(() => core.scoreBreakdown(q, k, { ...o, query: 0, key: 0, position: 'nope' }), ['position'], 'position');
  expectFieldError(() => core.scoreBreakdown(q, k, { ...o, key: 0 }), ['query'], 'no query');
});
