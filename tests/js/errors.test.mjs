// Every bad-input case throws an AttnError naming the field, and the module keeps
// working afterwards: after each bad call a good call is compared with the fixture.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  loadCore, loadFixture, attnOpts, attnInputs, compareArrays, expectFieldError, f32, u8,
  ABS_TOL, REL_LSE,
} from './helpers.mjs';

const attnCases = new Map(loadFixture('attention.json').cases.map((c) => [c.name, c]));
const mhaCases = new Map(loadFixture('multihead.json').cases.map((c) => [c.name, c]));
const good = attnCases.get('masks_causal_padding'); // H=2, T=6, d_k=4, d_v=3
const goodTile = attnCases.get('tile_t65_causal');
const lseTol = (e) => ABS_TOL + REL_LSE * Math.abs(e);
// memory-cap errors: the option is memoryCap; the core reports .field 'memory' (accepted)
const MEM = ['memoryCap', 'memory'];

function goodCallStillWorks(core, label) {
  for (const [c, kernel] of [[good, 'naive'], [goodTile, 'tiled']]) {
    const r = core.attention(...attnInputs(c), attnOpts(c, { kernel }));
    compareArrays(r.output, c.expect.output, ABS_TOL, `after ${label}: ${c.name} output`);
    if (kernel === 'naive') compareArrays(r.weights, c.expect.weights, ABS_TOL, `after ${label}: weights`);
    compareArrays(r.lse, c.expect.lse, lseTol, `after ${label}: lse`);
    assert.equal(r.nanRows, c.expect.nanRows, `after ${label}: nanRows`);
  }
}

// [label, fields the message may name, (q, k, v, opts) -> args of core.attention]
const base = () => {
  const [q, k, v] = attnInputs(good);
  return { q, k, v, o: attnOpts(good) };
};
const attnBad = [
  // wrong array types
  ['q as Float64Array', ['q'], ({ q, k, v, o }) => [Float64Array.from(q), k, v, o]],
  ['q as plain Array', ['q'], ({ q, k, v, o }) => [Array.from(q), k, v, o]],
  ['q null', ['q'], ({ k, v, o }) => [null, k, v, o]],
  ['k as Int32Array', ['k'], ({ q, k, v, o }) => [q, Int32Array.from(k), v, o]],
  ['v undefined', ['v'], ({ q, k, o }) => [q, k, undefined, o]],
  ['v as Uint8Array', ['v'], ({ q, k, v, o }) => [q, k, new Uint8Array(v.length), o]],
  // wrong lengths
  ['q one element short', ['q'], ({ q, k, v, o }) => [q.subarray(1), k, v, o]],
  ['k one element long', ['k'], ({ q, k, v, o }) => [q, Float32Array.from([...k, 0]), v, o]],
  ['v empty', ['v'], ({ q, k, o }) => [q, k, new Float32Array(0), o]],
  // heads / kvHeads
  ['heads not divisible by kvHeads', ['kvHeads', 'heads'], ({ q, k, v, o }) => [q, k, v, { ...o, kvHeads: 4 }]],
  ['heads missing', ['heads'], ({ q, k, v, o }) => [q, k, v, { ...o, heads: undefined }]],
  ['heads 0', ['heads'], ({ q, k, v, o }) => [q, k, v, { ...o, heads: 0 }]],
  ['kvHeads 0', ['kvHeads'], ({ q, k, v, o }) => [q, k, v, { ...o, kvHeads: 0 }]],
  ['heads negative', ['heads'], ({ q, k, v, o }) => [q, k, v, { ...o, heads: -2 }]],
  ['heads non-integer', ['heads'], ({ q, k, v, o }) => [q, k, v, { ...o, heads: 1.5 }]],
  // sizes: zero, negative, non-integer, NaN, missing
  ['tq 0 (q empty, consistent)', ['tq'], ({ k, v, o }) => [new Float32Array(0), k, v, { ...o, tq: 0 }]],
  ['tk 0 (k, v empty, consistent)', ['tk'], ({ q, o }) => [q, new Float32Array(0), new Float32Array(0), { ...o, tk: 0, keyPadding: null }]],
  ['dk 0 (q, k empty, consistent)', ['dk'], ({ v, o }) => [new Float32Array(0), new Float32Array(0), v, { ...o, dk: 0 }]],
  ['dv 0 (v empty, consistent)', ['dv'], ({ q, k, o }) => [q, k, new Float32Array(0), { ...o, dv: 0 }]],
  ['tq negative', ['tq'], ({ q, k, v, o }) => [q, k, v, { ...o, tq: -6 }]],
  ['tk negative', ['tk'], ({ q, k, v, o }) => [q, k, v, { ...o, tk: -1 }]],
  ['dk non-integer', ['dk'], ({ q, k, v, o }) => [q, k, v, { ...o, dk: 4.5 }]],
  ['dv NaN', ['dv'], ({ q, k, v, o }) => [q, k, v, { ...o, dv: NaN }]],
  ['dv Infinity', ['dv'], ({ q, k, v, o }) => [q, k, v, { ...o, dv: Infinity }]],
  ['tq missing', ['tq'], ({ q, k, v, o }) => [q, k, v, { ...o, tq: undefined }]],
  ['dk as string', ['dk'], ({ q, k, v, o }) => [q, k, v, { ...o, dk: '4' }]],
  // window
  ['window negative', ['window'], ({ q, k, v, o }) => [q, k, v, { ...o, window: -1 }]],
  ['window non-integer', ['window'], ({ q, k, v, o }) => [q, k, v, { ...o, window: 2.5 }]],
  // scale
  ['scale NaN', ['scale'], ({ q, k, v, o }) => [q, k, v, { ...o, scale: NaN }]],
  ['scale negative', ['scale'], ({ q, k, v, o }) => [q, k, v, { ...o, scale: -0.5 }]],
  ['scale 0', ['scale'], ({ q, k, v, o }) => [q, k, v, { ...o, scale: 0 }]],
  ['scale Infinity', ['scale'], ({ q, k, v, o }) => [q, k, v, { ...o, scale: Infinity }]],
  ['scale -Infinity', ['scale'], ({ q, k, v, o }) => [q, k, v, { ...o, scale: -Infinity }]],
  // enums
  ['unknown maskFill', ['maskFill'], ({ q, k, v, o }) => [q, k, v, { ...o, maskFill: 'minus_inf' }]],
  ['maskFill wrong case', ['maskFill'], ({ q, k, v, o }) => [q, k, v, { ...o, maskFill: 'NEG_INF' }]],
  ['unknown kernel', ['kernel'], ({ q, k, v, o }) => [q, k, v, { ...o, kernel: 'flash' }]],
  // masks
  ['mask of the wrong length', ['mask'], ({ q, k, v, o }) => [q, k, v, { ...o, mask: new Uint8Array(6 * 6 - 1).fill(1) }]],
  ['mask T_k long only', ['mask'], ({ q, k, v, o }) => [q, k, v, { ...o, mask: new Uint8Array(6).fill(1) }]],
  ['keyPadding of the wrong length', ['keyPadding'], ({ q, k, v, o }) => [q, k, v, { ...o, keyPadding: new Uint8Array(7).fill(1) }]],
  ['keyPadding as Float32Array', ['keyPadding'], ({ q, k, v, o }) => [q, k, v, { ...o, keyPadding: new Float32Array(6).fill(1) }]],
  // memory
  ['memoryCap tiny', MEM, ({ q, k, v, o }) => [q, k, v, { ...o, memoryCap: 16 }]],
];

test('core.attention: every bad input throws AttnError naming the field; the module keeps working', async (t) => {
  const core = await loadCore();
  goodCallStillWorks(core, 'nothing');
  for (const [label, fields, make] of attnBad) {
    await t.test(label, () => {
      expectFieldError(() => core.attention(...make(base())), fields, label);
      goodCallStillWorks(core, label);
    });
  }
});

test('core.attention: opts missing or not an object', async () => {
  const core = await loadCore();
  const [q, k, v] = attnInputs(good);
  for (const opts of [undefined, null, 42]) {
    let err = null;
    try {
      core.attention(q, k, v, opts);
    } catch (e) {
      err = e;
    }
    assert.ok(err instanceof Error, `opts ${opts}: must throw`);
    goodCallStillWorks(core, `opts ${opts}`);
  }
});

test('a request over the memory cap: T = 100000 with the naive kernel', async () => {
  const core = await loadCore();
  const T = 100000;
  const q = new Float32Array(T), k = new Float32Array(T), v = new Float32Array(T);
  const err = expectFieldError(
    () => core.attention(q, k, v, { heads: 1, tq: T, tk: T, dk: 1, dv: 1, kernel: 'naive' }),
    [...MEM, 'tq', 'tk'], 'T=100000 naive');
  assert.ok(/memory|MiB|bytes|cap/i.test(err.message), `message should say it is about memory: ${err.message}`);
  goodCallStillWorks(core, 'T=100000 naive');
  // a larger explicit cap does not make 40 GB of weights possible either
  expectFieldError(
    () => core.attention(q, k, v, { heads: 1, tq: T, tk: T, dk: 1, dv: 1, memoryCap: 2 ** 40 }),
    [...MEM, 'tq', 'tk'], 'T=100000 naive, cap 1 TiB');
  goodCallStillWorks(core, 'T=100000 naive with a huge cap');
});

test('sizes whose product overflows are rejected, not wrapped', async () => {
  const core = await loadCore();
  const [q, k, v] = attnInputs(good);
  const big = 2 ** 31 - 1;
  let err = null;
  try {
    core.attention(q, k, v, { ...attnOpts(good), tq: big, tk: big, dk: big });
  } catch (e) {
    err = e;
  }
  assert.ok(err instanceof Error && err.name === 'AttnError', `must throw AttnError, got ${err}`);
  goodCallStillWorks(core, 'huge sizes');
});

// ---- multiHeadAttention
const mGood = mhaCases.get('mha_gqa_h4_kv2_causal'); // T 6, dModel 16, H 4, kv 2, dk 4
function mArgs(c) {
  return [f32(c.x), f32(c.wq), f32(c.wk), f32(c.wv), f32(c.wo)];
}
function mOpts(c, extra = {}) {
  const o = c.opts;
  return {
    t: o.t, dModel: o.dModel, heads: o.heads, kvHeads: o.kvHeads, dk: o.dk, dv: o.dv,
    causal: o.causal, window: o.window, keyPadding: u8(o.keyPadding), mask: u8(o.mask),
    scale: o.scale, maskFill: o.maskFill, ...extra,
  };
}
function mhaStillWorks(core, label) {
  const r = core.multiHeadAttention(...mArgs(mGood), mOpts(mGood));
  compareArrays(r.output, mGood.expect.output, ABS_TOL, `after ${label}: mha output`);
  goodCallStillWorks(core, label);
}
const mhaBad = [
  ['x wrong length', ['x'], (a, o) => [a[0].subarray(1), a[1], a[2], a[3], a[4], o]],
  ['x as Float64Array', ['x'], (a, o) => [Float64Array.from(a[0]), a[1], a[2], a[3], a[4], o]],
  ['wq wrong length', ['wq'], (a, o) => [a[0], a[1].subarray(2), a[2], a[3], a[4], o]],
  ['wk wrong length', ['wk'], (a, o) => [a[0], a[1], a[1], a[3], a[4], o]],
  ['wv null', ['wv'], (a, o) => [a[0], a[1], a[2], null, a[4], o]],
  ['wo wrong length', ['wo'], (a, o) => [a[0], a[1], a[2], a[3], a[4].subarray(1), o]],
  ['dModel not divisible by heads (no dk)', ['dModel', 'heads'],
    (a, o) => [a[0], a[1], a[2], a[3], a[4], { ...o, heads: 3, kvHeads: 3, dk: undefined, dv: undefined }]],
  ['heads not divisible by kvHeads', ['kvHeads', 'heads'], (a, o) => [a[0], a[1], a[2], a[3], a[4], { ...o, kvHeads: 3 }]],
  ['t 0', ['t'], (a, o) => [new Float32Array(0), a[1], a[2], a[3], a[4], { ...o, t: 0 }]],
  ['dModel negative', ['dModel'], (a, o) => [a[0], a[1], a[2], a[3], a[4], { ...o, dModel: -16 }]],
  ['dk non-integer', ['dk'], (a, o) => [a[0], a[1], a[2], a[3], a[4], { ...o, dk: 2.5 }]],
  ['scale NaN', ['scale'], (a, o) => [a[0], a[1], a[2], a[3], a[4], { ...o, scale: NaN }]],
  ['unknown maskFill', ['maskFill'], (a, o) => [a[0], a[1], a[2], a[3], a[4], { ...o, maskFill: 'nan' }]],
  ['unknown kernel', ['kernel'], (a, o) => [a[0], a[1], a[2], a[3], a[4], { ...o, kernel: 'gpu' }]],
  ['mask wrong length', ['mask'], (a, o) => [a[0], a[1], a[2], a[3], a[4], { ...o, mask: new Uint8Array(5) }]],
  ['keyPadding wrong length', ['keyPadding'], (a, o) => [a[0], a[1], a[2], a[3], a[4], { ...o, keyPadding: new Uint8Array(5) }]],
  ['memoryCap tiny', MEM, (a, o) => [a[0], a[1], a[2], a[3], a[4], { ...o, memoryCap: 8 }]],
];

test('core.multiHeadAttention: bad inputs throw AttnError naming the field; module keeps working', async (t) => {
  const core = await loadCore();
  mhaStillWorks(core, 'nothing');
  for (const [label, fields, make] of mhaBad) {
    await t.test(label, () => {
      expectFieldError(() => core.multiHeadAttention(...make(mArgs(mGood), mOpts(mGood))), fields, label);
      mhaStillWorks(core, label);
    });
  }
});

test('core.example and core.entropyStudy: bad inputs throw and the module keeps working', async (t) => {
  const core = await loadCore();
  const cases = [
    ['unknown example name', () => core.example('bogus', {})],
    ['random example t 0', () => core.example('random', { t: 0 })],
    ['random example dModel not divisible by heads', () => core.example('random', { dModel: 10, heads: 3 })],
    ['induction sharpness NaN', () => core.example('induction', { sharpness: NaN })],
    ['random example unknown init', () => core.example('random', { init: 'xavier' })],
    ['entropyStudy keys 0', () => core.entropyStudy({ keys: 0 })],
    ['entropyStudy dk 0', () => core.entropyStudy({ dks: [16, 0] })],
  ];
  const fieldOf = { 'unknown example name': ['name', 'example'], 'random example t 0': ['t'],
    'random example dModel not divisible by heads': ['dModel', 'heads'],
    'induction sharpness NaN': ['sharpness'], 'random example unknown init': ['init'],
    'entropyStudy keys 0': ['keys'], 'entropyStudy dk 0': ['dks', 'dk'] };
  for (const [label, fn] of cases) {
    await t.test(label, () => {
      expectFieldError(fn, fieldOf[label], label);
      mhaStillWorks(core, label);
    });
  }
});

test('many bad calls in a row leak nothing: 2000 failures, then a good call', async () => {
  const core = await loadCore();
  const [q, k, v] = attnInputs(good);
  const o = attnOpts(good);
  for (let i = 0; i < 2000; i++) {
    assert.throws(() => core.attention(q, k, v, { ...o, maskFill: 'nope' }));
    assert.throws(() => core.attention(q, k, v, { ...o, memoryCap: 1 }));
  }
  goodCallStillWorks(core, '2000 failures');
});

test('the raw Embind Session class (which skips the JS checks) is not exposed', async () => {
  const core = await loadCore();
  assert.equal(core.Session, undefined);
  assert.equal(typeof core.attention, 'function');
  goodCallStillWorks(core, 'checking the module surface');
});
