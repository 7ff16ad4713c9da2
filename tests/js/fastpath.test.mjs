// core.attention's cheap path (inputs copied once into buffers the session keeps,
// results copied once out), the optional caller-owned `into` arrays and core.lastKernelMs.
// Expected values come from the NumPy oracle's fixtures.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  loadCore, loadFixture, attnOpts, attnInputs, compareArrays, expectFieldError, ABS_TOL, REL_LSE,
} from './helpers.mjs';

const cases = new Map(loadFixture('attention.json').cases.map((c) => [c.name, c]));
const lseTol = (e) => ABS_TOL + REL_LSE * Math.abs(e);

function check(r, c, label) {
  compareArrays(r.output, c.expect.output, ABS_TOL, `${label} output`);
  compareArrays(r.entropy, c.expect.entropy, ABS_TOL, `${label} entropy`);
  compareArrays(r.lse, c.expect.lse, lseTol, `${label} lse`);
  assert.equal(r.nanRows, c.expect.nanRows, `${label} nanRows`);
}

test('buffers reused across calls of shrinking and growing sizes give the oracle results', async () => {
  const core = await loadCore();
  // big, small, big again, masks on and off: a stale byte of an earlier call would show here
  const order = ['tile_t100_causal_window_padding_mqa', 'basic_h1_t4', 'masks_causal_window_padding_custom',
    'tile_tq70_tk130_causal_padding', 'shapes_dk1', 'policy_zero_fully_masked_row', 'tile_t129_padding_tile_edge'];
  for (const kernel of ['naive', 'tiled']) {
    for (const name of order) check(core.attention(...attnInputs(cases.get(name)), attnOpts(cases.get(name), { kernel })),
      cases.get(name), `${kernel} ${name}`);
  }
});

test('nanRowsPerHead counts NaN rows per head (and is all zero without them)', async () => {
  const core = await loadCore();
  const c = cases.get('policy_neg_inf_fully_masked_row'); // fixture: 2 NaN rows
  for (const kernel of ['naive', 'tiled']) {
    const r = core.attention(...attnInputs(c), attnOpts(c, { kernel }));
    assert.equal(r.nanRowsPerHead.length, c.opts.heads);
    assert.equal(r.nanRowsPerHead.reduce((a, b) => a + b, 0), c.expect.nanRows);
    const ok = cases.get('gqa_h4_kv2_causal');
    assert.deepEqual(core.attention(...attnInputs(ok), attnOpts(ok, { kernel })).nanRowsPerHead, [0, 0, 0, 0]);
  }
});

test('into: results land in the caller\'s arrays, which the next call does not touch', async () => {
  const core = await loadCore();
  const c = cases.get('gqa_h4_kv2_causal');
  const rows = c.opts.heads * c.opts.tq;
  for (const kernel of ['naive', 'tiled']) {
    const into = { output: new Float32Array(rows * c.opts.dv), entropy: new Float32Array(rows), lse: new Float32Array(rows) };
    const r = core.attention(...attnInputs(c), attnOpts(c, { kernel }), into);
    assert.equal(r.output, into.output);
    assert.equal(r.entropy, into.entropy);
    assert.equal(r.lse, into.lse);
    check(r, c, `${kernel} into`);
    const kept = Float32Array.from(into.output);
    const other = cases.get('basic_h3_t5_dk4_dv4');
    const r2 = core.attention(...attnInputs(other), attnOpts(other, { kernel }));
    assert.notEqual(r2.output, into.output);
    assert.deepEqual(into.output, kept, 'a later call changed the caller\'s array');
    // only some fields given: the rest are fresh arrays
    const r3 = core.attention(...attnInputs(c), attnOpts(c, { kernel }), { lse: new Float32Array(rows) });
    check(r3, c, `${kernel} into lse only`);
  }
});

test('into: weights and scores land in the caller\'s arrays and match the oracle', async () => {
  const core = await loadCore();
  const c = cases.get('gqa_h4_kv2_causal');
  const cells = c.opts.heads * c.opts.tq * c.opts.tk;
  const into = { weights: new Float32Array(cells).fill(NaN), scores: new Float32Array(cells).fill(NaN) };
  const r = core.attention(...attnInputs(c), attnOpts(c, { kernel: 'naive', returnScores: true }), into);
  assert.equal(r.weights, into.weights);
  assert.equal(r.scores, into.scores);
  compareArrays(r.weights, c.expect.weights, ABS_TOL, 'into weights');
  compareArrays(r.scores, c.expect.scores, ABS_TOL, 'into scores', 1e6);
  check(r, c, 'naive into weights/scores');
  // the same bits as fresh arrays
  const fresh = core.attention(...attnInputs(c), attnOpts(c, { kernel: 'naive', returnScores: true }));
  assert.deepEqual(fresh.weights, into.weights);
  assert.deepEqual(fresh.scores, into.scores);
  assert.notEqual(fresh.weights, into.weights);
});

test('into: a wrong array throws naming the field before any work; the module keeps working', async () => {
  const core = await loadCore();
  const c = cases.get('masks_causal_padding');
  const rows = c.opts.heads * c.opts.tq;
  const bad = [
    [{ output: new Float32Array(rows * c.opts.dv + 1) }, 'into.output'],
    [{ output: new Float64Array(rows * c.opts.dv) }, 'into.output'],
    [{ entropy: new Float32Array(rows - 1) }, 'into.entropy'],
    [{ lse: [] }, 'into.lse'],
    ['nope', 'into'],
    [{ weights: new Float32Array(rows * c.opts.tk - 1) }, 'into.weights'],
    [{ scores: new Float32Array(rows * c.opts.tk) }, 'into.scores'], // without returnScores
  ];
  for (const [into, field] of bad) {
    expectFieldError(() => core.attention(...attnInputs(c), attnOpts(c), into), [field], field);
    check(core.attention(...attnInputs(c), attnOpts(c)), c, `after bad ${field}`);
  }
  // the tiled kernel has no weights to copy
  const weights = new Float32Array(rows * c.opts.tk);
  expectFieldError(() => core.attention(...attnInputs(c), attnOpts(c, { kernel: 'tiled' }), { weights }), ['into.weights'], 'into.weights tiled');
});

test('lastKernelMs: the kernel time of the last call, never more than the call', async () => {
  const core = await loadCore();
  const T = 512, dk = 64;
  const q = new Float32Array(T * dk).map((_, i) => Math.sin(i));
  const o = { heads: 1, tq: T, tk: T, dk, dv: dk, causal: true, kernel: 'tiled' };
  core.attention(q, q, q, o);
  const t0 = performance.now();
  core.attention(q, q, q, o);
  const call = performance.now() - t0;
  const k = core.lastKernelMs();
  assert.ok(Number.isFinite(k) && k > 0, `lastKernelMs ${k}`);
  assert.ok(k <= call + 1e-3, `kernel ${k} ms > call ${call} ms`);
});
