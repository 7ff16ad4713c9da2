// core.qkMap (attn/geometry.hpp: one head's queries and keys as points in a plane) and
// core.weightSelection (attn/selection.hpp: several queries, the keys of a span), against NumPy
// (tests/fixtures/geometry.json, tests/oracle/gen_geometry_fixtures.py): every case, float32 and
// float64; their errors; and that each result is the caller's copy, alive after later calls.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { loadCore, loadFixture, nums, expectFieldError } from './helpers.mjs';

const fx = loadFixture('geometry.json');
const rel = (a, b) => Math.abs(a - b) / Math.max(1, Math.abs(b));

function optsOf(c, precision) {
  return {
    heads: c.heads, kvHeads: c.kvHeads, tq: c.tq, tk: c.tk, dk: c.dk, dv: 1, causal: c.causal, window: c.window,
    scale: c.scale, qkNorm: c.variant.qkNorm, position: c.variant.position, normalizer: c.variant.normalizer,
    precision,
  };
}

function close(got, want, tol, where) {
  assert.equal(got.length, want.length, `${where}: length`);
  want.forEach((x, n) => assert.ok(rel(got[n], x) <= tol, `${where}[${n}]: ${got[n]} vs ${x}`));
}

function checkMap(r, m, tol, where) {
  for (const key of ['queries', 'keys', 'axes']) {
    assert.ok(r[key] instanceof Float64Array, `${where}: ${key} a Float64Array`);
    close(r[key], m[key], tol, `${where}: ${key}`);
  }
  assert.ok(Array.isArray(r.explained) && r.explained.length === 2, `${where}: explained [2]`);
  close(r.explained, m.explained, tol, `${where}: explained`);
  assert.ok(rel(r.dotMean, m.dotMean) <= tol, `${where}: dotMean ${r.dotMean} vs ${m.dotMean}`);
  assert.ok(rel(r.dotStd, m.dotStd) <= tol, `${where}: dotStd ${r.dotStd} vs ${m.dotStd}`);
  assert.ok(rel(r.prodStd, m.prodStd) <= tol, `${where}: prodStd ${r.prodStd} vs ${m.prodStd}`);
  assert.ok(rel(r.scale, m.scale) <= 1e-15, `${where}: scale`);
}

function inputs(c, precision) {
  const A = precision === 'float64' ? Float64Array : Float32Array;
  return [A.from(nums(c.q).map(Math.fround)), A.from(nums(c.k).map(Math.fround))];
}

test('qkMap equals the NumPy oracle for every case and head (float32 and float64)', async () => {
  const core = await loadCore();
  assert.ok(fx.cases.length >= 10);
  for (const c of fx.cases)
    for (const precision of ['float32', 'float64']) {
      const [q, k] = inputs(c, precision);
      const tol = precision === 'float64' ? 1e-9 : 1e-5;
      for (const m of c.maps) {
        const r = core.qkMap(q, k, { ...optsOf(c, precision), head: m.head });
        checkMap(r, m, tol, `${c.name} ${precision} head ${m.head}`);
      }
    }
});

test('qkMap: its points are scoreBreakdown\'s rows on its axes', async () => {
  const core = await loadCore();
  for (const c of fx.cases) {
    const [q, k] = inputs(c, 'float32');
    const h = c.heads - 1, i = c.tq - 1, j = 0;
    const m = core.qkMap(q, k, { ...optsOf(c, 'float32'), head: h });
    const b = core.scoreBreakdown(q, k, { ...optsOf(c, 'float32'), head: h, query: i, key: j });
    for (let a = 0; a < 2; a++) {
      let pq = 0, pk = 0;
      for (let d = 0; d < c.dk; d++) pq += b.q[d] * m.axes[a * c.dk + d], pk += b.k[d] * m.axes[a * c.dk + d];
      assert.ok(rel(m.queries[2 * i + a], pq) <= 1e-12, `${c.name}: query ${i} on axis ${a}`);
      assert.ok(rel(m.keys[2 * j + a], pk) <= 1e-12, `${c.name}: key ${j} on axis ${a}`);
    }
  }
});

test('weightSelection equals the NumPy oracle for every pick, empty picks give empty arrays', async () => {
  const core = await loadCore();
  assert.ok(fx.selections.length >= 2);
  for (const c of fx.selections) {
    const w = Float32Array.from(nums(c.weights));
    for (const p of c.picks) {
      const r = core.weightSelection(w, { heads: c.heads, tq: c.tq, tk: c.tk, head: p.head, queries: p.queries, keys: p.keys });
      const where = `${c.name} head ${p.head} queries [${p.queries}] keys [${p.keys}]`;
      for (const key of ['mean', 'sum', 'column']) {
        assert.ok(r[key] instanceof Float64Array, `${where}: ${key} a Float64Array`);
        close(r[key], p[key], 1e-12, `${where}: ${key}`);
      }
    }
  }
  // Typed index arrays work as well as plain ones; missing lists are none.
  const c = fx.selections[0], p = c.picks[1];
  const w = Float32Array.from(nums(c.weights));
  const r = core.weightSelection(w, { tq: c.tq, tk: c.tk, queries: Int32Array.from(p.queries), keys: Uint16Array.from(p.keys) });
  close(r.column, p.column, 1e-12, 'typed indices: column');
  const none = core.weightSelection(w, { tq: c.tq, tk: c.tk });
  assert.deepEqual([none.mean.length, none.sum.length, none.column.length], [0, 0, 0]);
});

test('qkMap and weightSelection: bad inputs name their field; the module keeps working', async () => {
  const core = await loadCore();
  const q = new Float32Array(16).fill(1), k = new Float32Array(12).fill(1);
  const o = { heads: 2, kvHeads: 1, tq: 2, tk: 3, dk: 4 };
  expectFieldError(() => core.qkMap(q, k, { ...o, head: 2 }), ['head'], 'head 2 of 2');
  expectFieldError(() => core.qkMap(q, k, { ...o, head: -1 }), ['head'], 'head -1');
  expectFieldError(() => core.qkMap(q.subarray(1), k, o), ['q'], 'short q');
  expectFieldError(() => core.qkMap(q, Float64Array.from(k), o), ['k'], 'k float64 under float32');
  expectFieldError(() => core.qkMap(q, k, { ...o, position: 'nope' }), ['position'], 'position');
  expectFieldError(() => core.qkMap(q, k, { ...o, dk: 3, position: 'rope' }), ['position', 'q'], 'odd rope');
  expectFieldError(() => core.qkMap(q, k, { ...o, memoryCap: 8 }), ['memory'], 'cap');
  expectFieldError(() => core.qkMap(q, k, null), ['opts'], 'no opts');

  const w = new Float32Array(2 * 3 * 4).fill(0.25);
  const s = { heads: 2, tq: 3, tk: 4, head: 1, queries: [0, 2], keys: [3, 1, 0] };
  expectFieldError(() => core.weightSelection(w.subarray(1), s), ['weights'], 'short weights');
  expectFieldError(() => core.weightSelection(Float64Array.from(w), s), ['weights'], 'float64 weights');
  expectFieldError(() => core.weightSelection(w, { ...s, head: 2 }), ['head'], 'head 2 of 2');
  expectFieldError(() => core.weightSelection(w, { ...s, queries: [0, 3] }), ['queries'], 'query 3 of 3');
  expectFieldError(() => core.weightSelection(w, { ...s, keys: [4] }), ['keys'], 'key 4 of 4');
  expectFieldError(() => core.weightSelection(w, { ...s, keys: [1, 3, 1] }), ['keys'], 'repeated key');
  expectFieldError(() => core.weightSelection(w, { ...s, queries: [0.5] }), ['queries'], 'fraction');
  expectFieldError(() => core.weightSelection(w, { ...s, queries: [-1] }), ['queries'], 'negative');
  expectFieldError(() => core.weightSelection(w, { ...s, queries: '0,1' }), ['queries'], 'a string');
  expectFieldError(() => core.weightSelection(w, { ...s, tq: undefined }), ['tq'], 'no tq');
  expectFieldError(() => core.weightSelection(w, { ...s, memoryCap: 8 }), ['memory'], 'cap');
  const err = expectFieldError(() => core.weightSelection(w, { ...s, queries: [2, 2] }), ['queries']);
  assert.match(err.message, /queries\[1\] = 2 repeats queries\[0\]/);

  const r = core.weightSelection(w, s);
  assert.deepEqual([Array.from(r.sum), Array.from(r.mean), Array.from(r.column)], [[0.5, 0.5, 0.5, 0.5], [0.25, 0.25, 0.25, 0.25], [0.75, 0.75, 0.75]]);
  const m = core.qkMap(q, k, o);
  m.axes.subarray(0, 4).forEach((x, d) => assert.ok(Math.abs(x - 0.5) <= 1e-15, `axis 0[${d}] ${x}`));
});

test('qkMap and weightSelection return copies that outlive the next calls and memory growth', async () => {
  const core = await loadCore();
  const [a, b] = [fx.cases[0], fx.cases[1]];
  const [qa, ka] = inputs(a, 'float32'), [qb, kb] = inputs(b, 'float64');
  const ra = core.qkMap(qa, ka, { ...optsOf(a, 'float32'), head: 0 });
  const rb = core.qkMap(qb, kb, { ...optsOf(b, 'float64'), head: 1 });
  const sc = fx.selections[1], sp = sc.picks[0];
  const sw = Float32Array.from(nums(sc.weights));
  const s1 = core.weightSelection(sw, { heads: sc.heads, tq: sc.tq, tk: sc.tk, head: sp.head, queries: sp.queries, keys: sp.keys });
  const s2 = core.weightSelection(sw, { heads: sc.heads, tq: sc.tq, tk: sc.tk, head: 0, queries: [0], keys: [0] });
  assert.notEqual(ra.queries.buffer, rb.queries.buffer, 'two maps share a buffer');
  assert.notEqual(s1.mean.buffer, s2.mean.buffer, 'two selections share a buffer');
  // Grow the wasm memory: a map of 3000 points in d_k 64 (about 1.5 MB of rows) and big weights.
  const T = 1500, dk = 64;
  const big = Float32Array.from({ length: T * dk }, (_, n) => Math.sin(n));
  core.qkMap(big, big, { heads: 1, tq: T, tk: T, dk });
  core.weightSelection(new Float32Array(T * T), { tq: T, tk: T, queries: [0], keys: [1] });
  checkMap(ra, a.maps[0], 1e-5, 'first map after later calls');
  checkMap(rb, b.maps[1], 1e-9, 'second map after later calls');
  close(s1.mean, sp.mean, 1e-12, 'first selection mean after later calls');
  close(s1.column, sp.column, 1e-12, 'first selection column after later calls');
});
