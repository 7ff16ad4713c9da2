// Numerical edge cases through the wasm module, both kernels (see docs/numerics.md):
// NaN/Inf inputs reach only the rows they touch and are counted; logits near +-1e4 stay finite;
// float32 overflow in Q K^T is reported (infScoreRows) and never yields plausible numbers.
import test from 'node:test';
import assert from 'node:assert/strict';
import { loadCore } from './helpers.mjs';

const KERNELS = ['naive', 'tiled'];
const H = 2, T = 70, D = 8; // T > 64 so the tiled kernel crosses a tile boundary

function inputs(seed = 1) {
  let s = seed;
  const rnd = () => ((s = (s * 1103515245 + 12345) % 2147483648) / 2147483648) * 2 - 1;
  const mk = (n) => Float32Array.from({ length: n }, rnd);
  return { q: mk(H * T * D), k: mk(H * T * D), v: mk(H * T * D) };
}
const opts = (kernel, extra = {}) => ({ heads: H, tq: T, tk: T, dk: D, dv: D, causal: true, kernel, ...extra });
const rowOf = (a, row, w) => a.subarray(row * w, (row + 1) * w);
const hasNaN = (a) => a.some(Number.isNaN);
// Untouched rows keep their values. Not bit for bit: a non-finite input anywhere sends the whole
// call to the scalar kernel (the SIMD kernels take finite, bounded inputs only), whose exp
// differs from the SIMD one in the last bits; the kernels agree to 1e-5 (docs/numerics.md).
const same = (a, b) => a.length === b.length && a.every((x, i) => Math.abs(x - b[i]) <= 1e-5);

// Rows (h, i) that see key j of head h under the causal mask.
const seesKey = (i, j) => j <= i;

for (const kernel of KERNELS) {
  test(`${kernel}: a NaN in q touches only its own row, which is counted`, async () => {
    const core = await loadCore();
    const x = inputs();
    const clean = core.attention(x.q, x.k, x.v, opts(kernel));
    const q = x.q.slice();
    const bad = 1 * T + 33; // head 1, query 33
    q[bad * D + 2] = NaN;
    const r = core.attention(q, x.k, x.v, opts(kernel));
    assert.equal(r.nanRows, 1);
    for (let row = 0; row < H * T; row++) {
      const y = rowOf(r.output, row, D);
      if (row === bad) assert.ok(y.every(Number.isNaN), 'the NaN row is all NaN');
      else assert.ok(same(y, rowOf(clean.output, row, D)), `row ${row} changed`);
    }
    if (r.weights) assert.ok(rowOf(r.weights, bad, T).every(Number.isNaN));
  });

  test(`${kernel}: a NaN in k reaches exactly the rows that may see that key`, async () => {
    const core = await loadCore();
    const x = inputs(2);
    const clean = core.attention(x.q, x.k, x.v, opts(kernel));
    const k = x.k.slice();
    const j = 40; // head 0 key 40: causal rows 40..69 of head 0 see it
    k[j * D] = NaN;
    const r = core.attention(x.q, k, x.v, opts(kernel));
    assert.equal(r.nanRows, T - j);
    for (let row = 0; row < H * T; row++) {
      const y = rowOf(r.output, row, D);
      const touched = row < T && seesKey(row, j);
      assert.equal(hasNaN(y), touched, `row ${row}`);
      if (!touched) assert.ok(same(y, rowOf(clean.output, row, D)), `row ${row} changed`);
    }
  });

  test(`${kernel}: NaN and Inf in v reach only the outputs of rows that weigh that key`, async () => {
    const core = await loadCore();
    const x = inputs(3);
    const clean = core.attention(x.q, x.k, x.v, opts(kernel));
    for (const bad of [NaN, Infinity, -Infinity]) {
      const v = x.v.slice();
      const j = 50; // head 1 key 50
      v[(T + j) * D + 3] = bad;
      const r = core.attention(x.q, x.k, v, opts(kernel));
      for (let row = 0; row < H * T; row++) {
        const y = rowOf(r.output, row, D);
        const touched = row >= T && seesKey(row - T, j);
        if (!touched) assert.ok(same(y, rowOf(clean.output, row, D)), `${bad}: row ${row} changed`);
        else {
          assert.ok(!Number.isFinite(y[3]), `${bad}: row ${row} column 3 is ${y[3]}`);
          for (const c of [0, 1, 2, 4, 5, 6, 7]) assert.ok(Math.abs(y[c] - rowOf(clean.output, row, D)[c]) <= 1e-5, `${bad}: other columns untouched`);
        }
      }
      // Weights do not depend on v: still a distribution in every row.
      if (r.weights) assert.ok(same(r.weights, clean.weights), `${bad}: weights changed`);
      if (r.weights) for (let row = 0; row < H * T; row++) assert.ok(Math.abs(rowOf(r.weights, row, T).reduce((a, b) => a + b, 0) - 1) < 1e-5);
      assert.equal(r.nanRows, Number.isNaN(bad) ? T - j : 0);
    }
  });

  test(`${kernel}: logits near +-1e4 stay finite through the max subtraction`, async () => {
    const core = await loadCore();
    // One head, 6 keys, scale 1: scores exactly 1e4, -1e4, 9999, -5000, 9999.5, 0 (all exact in float32).
    const c = [1e4, -1e4, 9999, -5000, 9999.5, 0];
    const q = Float32Array.from([1, 0]);
    const k = Float32Array.from(c.flatMap((x) => [x, 0]));
    const v = Float32Array.from(c.map((_, j) => j));
    const r = core.attention(q, k, v, { heads: 1, tq: 1, tk: 6, dk: 2, dv: 1, scale: 1, kernel });
    assert.equal(r.nanRows, 0);
    assert.equal(r.infScoreRows, 0);
    assert.ok(Number.isFinite(r.output[0]) && Number.isFinite(r.lse[0]) && Number.isFinite(r.entropy[0]));
    // Scores 10000, 9999.5, 9999: weights ∝ 1, e^-0.5, e^-1; the rest underflow to exactly 0.
    const z = 1 + Math.exp(-0.5) + Math.exp(-1);
    const want = [1 / z, 0, Math.exp(-1) / z, 0, Math.exp(-0.5) / z, 0];
    // float32 rounding of intermediates scales with the logits: the suite's large-logit bound
    // 2e-5 + 4 u S (u = 2^-24, S = 1e4; tests/js/README.md), about 2.4e-3.
    const tol = 2e-5 + 4 * 2 ** -24 * 1e4;
    if (r.weights) want.forEach((w, j) => assert.ok(Math.abs(r.weights[j] - w) <= tol, `weight ${j}: ${r.weights[j]} vs ${w}`));
    if (r.weights) [1, 3, 5].forEach((j) => assert.equal(r.weights[j], 0, `weight ${j} underflows to 0`));
    const y = 2 * want[2] + 4 * want[4];
    assert.ok(Math.abs(r.output[0] - y) <= 5 * tol, `output ${r.output[0]} vs ${y}`);
    assert.ok(Math.abs(r.lse[0] - (1e4 + Math.log(z))) <= 1e-2, `lse ${r.lse[0]}`);
  });

  test(`${kernel}: float32 overflow in Q K^T is reported, never silently wrong`, async () => {
    const core = await loadCore();
    const x = inputs(4);
    const q = x.q.slice(), k = x.k.slice();
    // head 0 query 10: entries 1e20 -> q . k ~ 1e40 > FLT_MAX, scores overflow to +-inf.
    for (let c = 0; c < D; c++) q[10 * D + c] = 1e20;
    for (let c = 0; c < D; c++) k[5 * D + c] = 1e20;
    const r = core.attention(q, k, x.v, opts(kernel));
    assert.ok(r.infScoreRows >= 1, `infScoreRows ${r.infScoreRows}`);
    const y = rowOf(r.output, 10, D);
    assert.ok(y.every(Number.isNaN), `the overflowed row is NaN, not a plausible number: ${y}`);
    assert.ok(r.nanRows >= 1);
    // Large but representable logits (1e30 entries, scale tiny) are fine.
    const r2 = core.attention(q, k, x.v, opts(kernel, { scale: 1e-35 }));
    assert.equal(r2.infScoreRows, 0);
  });

  test(`${kernel}: a fully masked 'finite' row with NaN values is counted in nanRows`, async () => {
    const core = await loadCore();
    const x = inputs(5);
    const v = x.v.slice();
    v[7] = NaN; // head 0 key 0
    const keyPadding = new Uint8Array(T); // every key is padding: every row fully masked
    const r = core.attention(x.q, x.k, v, opts(kernel, { keyPadding, maskFill: 'finite' }));
    assert.equal(r.fullyMaskedRows, H * T);
    assert.equal(r.nanRows, T); // head 0's rows average the NaN value; head 1's do not
    assert.ok(rowOf(r.output, T, D).every(Number.isFinite));
  });
}
