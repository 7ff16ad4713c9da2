// The core's own mask, memory estimate, limits and per-head NaN rows, as the page should read
// them instead of re-deriving them: core.allowedMask, core.estimateBytes,
// core.estimateMultiHeadBytes, core.limits, result.nanRowsPerHead.
// Expected values: the NumPy oracle's masks (tests/fixtures/masks.json, tests/oracle/gen_masks.py),
// the oracle's attention results (attention.json), and the core's own refusals at the cap.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { loadCore, loadFixture, attnOpts, attnInputs, nums, u8, expectFieldError } from './helpers.mjs';

const masks = loadFixture('masks.json').cases;
const attn = loadFixture('attention.json').cases;

test('allowedMask equals the NumPy oracle mask for every case (causal, window, padding, custom, T_q != T_k)', async () => {
  const core = await loadCore();
  assert.ok(masks.length >= 10);
  for (const c of masks) {
    const got = core.allowedMask({ tq: c.tq, tk: c.tk, causal: c.causal, window: c.window,
      keyPadding: u8(c.keyPadding), mask: u8(c.mask) });
    assert.ok(got instanceof Uint8Array, c.name);
    assert.equal(Array.from(got).join(''), c.allowed, c.name);
    if (c.tq === c.tk) {  // the page's square form
      const sq = core.allowedMask({ t: c.tq, causal: c.causal, window: c.window,
        keyPadding: u8(c.keyPadding), mask: u8(c.mask) });
      assert.deepEqual(sq, got, `${c.name} (t shorthand)`);
    }
  }
});

test('allowedMask refuses bad arguments with the field, and stays usable', async () => {
  const core = await loadCore();
  expectFieldError(() => core.allowedMask({ t: 0 }), ['t'], 't = 0');
  expectFieldError(() => core.allowedMask({ tq: 4 }), ['tk'], 'tk missing');
  expectFieldError(() => core.allowedMask({ t: 4, keyPadding: new Uint8Array(3) }), ['keyPadding'], 'padding length');
  expectFieldError(() => core.allowedMask({ t: 4, mask: new Uint8Array(15) }), ['mask'], 'mask length');
  expectFieldError(() => core.allowedMask({ t: 4, window: -1 }), ['window'], 'window');
  const e = expectFieldError(() => core.allowedMask({ t: 100000 }), ['memory'], 'T = 100000');
  assert.equal(e.code, 'resource_exhausted');
  assert.equal(Array.from(core.allowedMask({ t: 2, causal: true })).join(''), '1011');
});

function capBoundary(core, run, est, label) {
  run(est);  // a cap equal to the estimate is accepted
  const e = expectFieldError(() => run(est - 1), ['memory'], `${label}: cap one byte under the estimate`);
  assert.equal(e.code, 'resource_exhausted');
}

test("estimateBytes is exactly the core's cap rule for attention (both kernels, GQA, returnScores)", async () => {
  const core = await loadCore();
  const shapes = [
    { heads: 2, kvHeads: 2, tq: 64, tk: 64, dk: 16, dv: 16 },
    { heads: 4, kvHeads: 2, tq: 33, tk: 70, dk: 5, dv: 3 },
    { heads: 1, kvHeads: 1, tq: 1, tk: 1, dk: 1, dv: 1 },
  ];
  for (const s of shapes) {
    const q = new Float32Array(s.heads * s.tq * s.dk).fill(0.1);
    const k = new Float32Array(s.kvHeads * s.tk * s.dk).fill(0.2);
    const v = new Float32Array(s.kvHeads * s.tk * s.dv).fill(0.3);
    for (const [kernel, returnScores] of [['naive', false], ['naive', true], ['tiled', false]]) {
      const est = core.estimateBytes({ ...s, returnScores }, kernel);
      assert.ok(Number.isInteger(est) && est > 0);
      capBoundary(core, (cap) => core.attention(q, k, v, { ...s, kernel, returnScores, causal: true, memoryCap: cap }),
        est, `${JSON.stringify(s)} ${kernel}${returnScores ? ' + scores' : ''}`);
    }
    // The kernel may also be given in opts; dv defaults to dk.
    assert.equal(core.estimateBytes({ ...s, kernel: 'tiled' }), core.estimateBytes(s, 'tiled'));
  }
  assert.equal(core.estimateBytes({ heads: 1, tq: 8, tk: 8, dk: 4 }), core.estimateBytes({ heads: 1, tq: 8, tk: 8, dk: 4, dv: 4 }));
  // Over the default cap: refused without a memoryCap option.
  const big = { heads: 1, tq: 12000, tk: 12000, dk: 1, dv: 1 };
  assert.ok(core.estimateBytes(big, 'naive') > core.limits.memoryCap);
  const one = new Float32Array(12000);
  expectFieldError(() => core.attention(one, one, one, { ...big, kernel: 'naive' }), ['memory'], 'T = 12000 naive at the default cap');
  assert.equal(core.estimateBytes({ heads: 2 ** 31 - 1, tq: 2 ** 31 - 1, tk: 2 ** 31 - 1, dk: 1 }), Infinity);
  expectFieldError(() => core.estimateBytes({ heads: 1, tq: 8, tk: 8, dk: 4 }, 'flash'), ['kernel'], 'kernel');
});

test("estimateMultiHeadBytes is exactly the core's cap rule for multiHeadAttention", async () => {
  const core = await loadCore();
  for (const s of [{ t: 64, dModel: 16, heads: 2, kvHeads: 2, dk: 8, dv: 8 }, { t: 40, dModel: 12, heads: 4, kvHeads: 2 }]) {
    const dk = s.dk ?? s.dModel / s.heads, dv = s.dv ?? dk;
    const x = new Float32Array(s.t * s.dModel).fill(0.1);
    const wq = new Float32Array(s.dModel * s.heads * dk).fill(0.01);
    const wk = new Float32Array(s.dModel * s.kvHeads * dk).fill(0.02);
    const wv = new Float32Array(s.dModel * s.kvHeads * dv).fill(0.03);
    const wo = new Float32Array(s.heads * dv * s.dModel).fill(0.04);
    for (const kernel of ['naive', 'tiled']) {
      const est = core.estimateMultiHeadBytes(s, kernel);
      capBoundary(core, (cap) => core.multiHeadAttention(x, wq, wk, wv, wo, { ...s, kernel, causal: true, memoryCap: cap }),
        est, `MHA ${JSON.stringify(s)} ${kernel}`);
    }
  }
  expectFieldError(() => core.estimateMultiHeadBytes({ t: 4, dModel: 10, heads: 3 }), ['dModel'], 'dModel not divisible');
});

test('core.limits comes from the core: the cap, one name per tile size, the SIMD build', async () => {
  const core = await loadCore();
  const l = core.limits;
  assert.equal(typeof l.memoryCap, 'number');
  assert.equal(l.tile.simd, true, 'the browser module is built with SIMD128');
  assert.equal(l.tile.keys, l.tile.simdKeys, 'with SIMD the tiled kernel uses the SIMD key tile');
  // The SIMD key tile fits the scalar tile's buffer (the core's static_assert, seen from JS).
  assert.ok(l.tile.simdKeys <= l.tile.scalarKeys && l.tile.scalarKeys % l.tile.simdKeys === 0,
    'the SIMD key tile divides the scalar one');
});

test("tiledScratchBytes is the tiled estimate's only part that does not grow with T", async () => {
  const core = await loadCore();
  for (const dk of [1, 16, 64, 256]) {
    const scratch = core.tiledScratchBytes(dk);
    assert.ok(scratch > 0);
    // What is left (inputs and outputs) is proportional to T: no constant term.
    const rest = (t) => core.estimateBytes({ heads: 2, tq: t, tk: t, dk }, 'tiled') - scratch;
    assert.equal(rest(128), 2 * rest(64), `dk ${dk}`);
    assert.equal(rest(4096), 64 * rest(64), `dk ${dk}`);
  }
  expectFieldError(() => core.tiledScratchBytes(0), ['dk'], 'dk 0');
});

test("keyRanges are the oracle's causal/window rule row by row (and bound every allowed key)", async () => {
  const core = await loadCore();
  let exact = 0;
  for (const c of masks) {
    const r = core.keyRanges({ tq: c.tq, tk: c.tk, causal: c.causal, window: c.window });
    assert.ok(r instanceof Uint32Array && r.length === 2 * c.tq, c.name);
    const plain = c.keyPadding === null && c.mask === null;
    for (let i = 0; i < c.tq; i++) {
      const [lo, hi] = [r[2 * i], r[2 * i + 1]];
      for (let j = 0; j < c.tk; j++) {
        const allowed = c.allowed[i * c.tk + j] === '1';
        if (allowed) assert.ok(j >= lo && j < hi, `${c.name}: row ${i} key ${j} allowed outside [${lo}, ${hi})`);
        if (plain) assert.equal(allowed, j >= lo && j < hi, `${c.name}: row ${i} key ${j}`);
      }
    }
    if (plain) exact++;
  }
  assert.ok(exact >= 8);
  assert.deepEqual(Array.from(core.keyRanges({ t: 3, causal: true })), [0, 1, 0, 2, 0, 3]);
});

test('nanRowsPerHead counts, head by head, the rows the oracle says hold a NaN (both kernels)', async () => {
  const core = await loadCore();
  let withNan = 0;
  for (const c of attn) {
    const { heads, tq, tk, dv } = c.opts;
    const out = nums(c.expect.output), w = c.expect.weights ? nums(c.expect.weights) : null;
    const want = [];
    for (let h = 0; h < heads; h++) {
      let n = 0;
      for (let i = 0; i < tq; i++) {
        let nan = false;
        for (let j = 0; j < dv; j++) nan ||= Number.isNaN(out[(h * tq + i) * dv + j]);
        for (let j = 0; w && j < tk; j++) nan ||= Number.isNaN(w[(h * tq + i) * tk + j]);
        n += nan ? 1 : 0;
      }
      want.push(n);
    }
    for (const kernel of ['naive', 'tiled']) {
      const r = core.attention(...attnInputs(c), attnOpts(c, { kernel }));
      assert.deepEqual(r.nanRowsPerHead, want, `${c.name} [${kernel}]`);
      assert.equal(r.nanRowsPerHead.reduce((a, b) => a + b, 0), r.nanRows, `${c.name} [${kernel}] sum`);
    }
    if (want.some((n) => n > 0)) withNan++;
  }
  assert.ok(withNan >= 2);
});
