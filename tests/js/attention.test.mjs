// core.attention against every case of tests/fixtures/attention.json, with both kernels,
// plus softmax.json rows expressed as attention calls; prints the max |Δ| per family.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  loadCore, loadFixture, attnOpts, attnInputs, compareArrays, maxAbsScore, maxAbs, num, nums,
  ABS_TOL, REL_LSE, U32, DeltaTable,
} from './helpers.mjs';

const fixture = loadFixture('attention.json');
const table = new DeltaTable();

// The tolerances of one case (see helpers.mjs / README.md).
export function tolerances(c) {
  const S = maxAbsScore(c);
  const large = c.family === 'large_logits';
  const vmax = Math.max(1, maxAbs(nums(c.v)));
  const extra = (m) => (large ? 4 * U32 * S * m : 0);
  return {
    output: ABS_TOL + extra(vmax),
    weights: ABS_TOL + extra(1),
    entropy: ABS_TOL + extra(1 + Math.log(c.opts.tk)),
    lse: (e) => ABS_TOL + REL_LSE * Math.abs(e) + extra(1),
    scores: ABS_TOL + 4 * U32 * S,
  };
}

function checkCase(core, c, kernel) {
  const [q, k, v] = attnInputs(c);
  const naive = kernel === 'naive';
  const r = core.attention(q, k, v, attnOpts(c, { kernel, returnScores: naive }));
  const tol = tolerances(c);
  const e = c.expect;
  const label = `${c.name} [${kernel}]`;
  const { heads, tq, tk, dv } = c.opts;
  const d = {};
  d.output = compareArrays(r.output, e.output, tol.output, `${label} output`);
  assert.equal(r.output.length, heads * tq * dv);
  if (naive) {
    assert.ok(r.weights instanceof Float32Array, `${label}: weights must be a Float32Array`);
    assert.equal(r.weights.length, heads * tq * tk, `${label}: weights length`);
    if (e.weights !== null) d.weights = compareArrays(r.weights, e.weights, tol.weights, `${label} weights`);
    assert.ok(r.scores instanceof Float32Array, `${label}: scores with returnScores`);
    if (e.scores !== null) d.scores = compareArrays(r.scores, e.scores, tol.scores, `${label} scores`, 1e6);
  } else {
    assert.equal(r.weights, null, `${label}: tiled returns weights null`);
    assert.equal(r.scores, null, `${label}: tiled returns scores null`);
  }
  d.entropy = compareArrays(r.entropy, e.entropy, tol.entropy, `${label} entropy`);
  d.lse = compareArrays(r.lse, e.lse, tol.lse, `${label} lse`, 1e6);
  assert.equal(r.fullyMaskedRows, e.fullyMaskedRows, `${label}: fullyMaskedRows`);
  assert.equal(r.nanRows, e.nanRows, `${label}: nanRows`);
  assert.equal(r.infScoreRows, e.infScoreRows, `${label}: infScoreRows`);
  const s = num(e.scale);
  assert.ok(Math.abs(r.scale - s) <= 1e-7 * s, `${label}: scale ${r.scale} != ${s}`);
  table.add(c.family, kernel, 'case');
  for (const [key, val] of Object.entries(d)) table.add(c.family, kernel, key, val);
  return r;
}

const families = [...new Set(fixture.cases.map((c) => c.family))];

test('fixture holds every required family', () => {
  for (const f of ['basic', 'masks', 'policy', 'scale', 'gqa', 'shapes', 'large_logits', 'tile']) {
    assert.ok(families.includes(f), `family ${f} missing from attention.json`);
  }
});

for (const kernel of ['naive', 'tiled']) {
  for (const family of families) {
    test(`attention.json ${family} (${kernel})`, async (t) => {
      const core = await loadCore();
      for (const c of fixture.cases.filter((x) => x.family === family)) {
        await t.test(c.name, () => {
          checkCase(core, c, kernel);
        });
      }
    });
  }
}

test('naive weights: rows sum to 1 (or NaN / 0 by policy), forbidden weights exactly 0', async () => {
  // Exactness of forbidden weights is a property the oracle also has (exp(-inf) = 0,
  // exp(-1e9 - m) = 0): compare zeros of the fixture exactly.
  const core = await loadCore();
  for (const c of fixture.cases) {
    if (c.expect.weights === null) continue;
    const [q, k, v] = attnInputs(c);
    const r = core.attention(q, k, v, attnOpts(c));
    const exp = nums(c.expect.weights);
    for (let i = 0; i < exp.length; i++) {
      if (exp[i] === 0) assert.equal(r.weights[i], 0, `${c.name} weights[${i}] must be exactly 0`);
    }
  }
});

test('softmax.json rows as attention calls (q = [1], k = the row, scale 1, padding for -inf)', async () => {
  const core = await loadCore();
  const sm = loadFixture('softmax.json');
  let checked = 0;
  for (const c of sm.cases) {
    const x = nums(c.x), ex = nums(c.expect), ent = nums(c.entropy), lse = nums(c.lse);
    for (let r = 0; r < c.rows; r++) {
      const row = x.slice(r * c.cols, (r + 1) * c.cols);
      // only rows exactly representable in float32 with no +inf / NaN (a key cannot carry them)
      if (!row.every((y) => y === -Infinity || (Number.isFinite(y) && Math.fround(y) === y))) continue;
      const tk = c.cols;
      const k = Float32Array.from(row, (y) => (Number.isFinite(y) ? y : 0));
      const keyPadding = Uint8Array.from(row, (y) => (Number.isFinite(y) ? 1 : 0));
      const v = new Float32Array(tk * tk);
      for (let j = 0; j < tk; j++) v[j * tk + j] = 1; // identity: output = weights
      for (const kernel of ['naive', 'tiled']) {
        const out = core.attention(Float32Array.of(1), k, v,
          { heads: 1, tq: 1, tk, dk: 1, dv: tk, scale: 1, keyPadding, kernel });
        const label = `softmax ${c.name} row ${r} [${kernel}]`;
        const tol = ABS_TOL + 16 * U32 * maxAbs(row);
        compareArrays(out.output, ex.slice(r * tk, (r + 1) * tk), tol, `${label} output`);
        if (kernel === 'naive') compareArrays(out.weights, ex.slice(r * tk, (r + 1) * tk), tol, `${label} weights`);
        compareArrays(out.entropy, [ent[r]], tol, `${label} entropy`);
        compareArrays(out.lse, [lse[r]], (e) => tol + REL_LSE * Math.abs(e), `${label} lse`);
        checked++;
      }
    }
  }
  assert.ok(checked >= 12, `only ${checked} softmax rows were checkable`);
});

test('max |Δ| against the NumPy oracle per family and kernel', () => {
  const text = table.format(['output', 'weights', 'scores', 'entropy', 'lse']);
  assert.ok(text.split('\n').length > 1, 'no cases were measured');
  console.log('\nmax |Δ| vs NumPy float64 oracle (float32 core; lse and scores figures exclude |x| > 1e6, checked relatively)\n' + text);
});
