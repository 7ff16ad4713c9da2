// Soak test of the wasm module: 10 000 random calls, valid and hostile, through one instance
// (attention, attentionBackward with dropout, multi-head, examples, the entropy study).
//
// Every call either returns a result that passes the checks below or throws an Error naming a
// field; nothing may abort the instance. Every 250 calls a fixed reference call must give the
// same bits as before the soak; every 1000 calls fixture cases must still match the NumPy oracle.
// The wasm heap (HEAP8.buffer.byteLength) is measured after the first half and at the end: the
// second half, drawn from the same distribution, must not grow it again.
//
// Run: node --test tests/soak/   (ATTN_WASM_DIR=<dir> to test another build; SOAK_CALLS=n)
import test from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const DIR = process.env.ATTN_WASM_DIR ? path.resolve(process.env.ATTN_WASM_DIR) : path.join(ROOT, 'build', 'wasm');
const CALLS = Number(process.env.SOAK_CALLS || 10000);

// mulberry32: a tiny seeded generator, so a failing call can be replayed from its index.
function rng(seed) {
  let a = seed >>> 0;
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  return {
    next,
    int: (lo, hi) => lo + Math.floor(next() * (hi - lo + 1)),
    pick: (a) => a[Math.floor(next() * a.length)],
    bool: (p = 0.5) => next() < p,
  };
}

const SPECIAL = [NaN, Infinity, -Infinity, 1e30, -1e30, 1e-40, 0, -0, 1e4, -1e4];
function values(r, n, specials = true) {
  const a = new Float32Array(n);
  for (let i = 0; i < n; i++) a[i] = r.next() * 4 - 2;
  if (specials && n > 0 && r.bool(0.3)) for (let s = r.int(1, 3); s > 0; s--) a[r.int(0, n - 1)] = r.pick(SPECIAL);
  return a;
}
function bits(a) {
  return Buffer.from(new Uint8Array(a.buffer, a.byteOffset, a.byteLength)).toString('base64');
}
const num = (x) => (x === 'nan' ? NaN : x === 'inf' ? Infinity : x === '-inf' ? -Infinity : x);

function allowed(o, i, j) {
  const diag = i + o.tk - o.tq;
  if (o.causal && j > diag) return false;
  if (o.window > 0 && j <= diag - o.window) return false;
  if (o.keyPadding && !o.keyPadding[j]) return false;
  if (o.mask && !o.mask[i * o.tk + j]) return false;
  return true;
}

// Row invariants of a naive result: fully masked rows follow the policy, others sum to 1
// with exact zeros where forbidden (or are NaN rows, counted in nanRows).
function checkAttention(o, r) {
  const H = o.heads, rows = H * o.tq;
  assert.equal(r.output.length, rows * o.dv);
  assert.equal(r.entropy.length, rows);
  if (o.kernel === 'tiled') assert.equal(r.weights, null);
  let fully = 0;
  let nanRows = 0;
  for (let row = 0; row < rows; row++) {
    const i = row % o.tq;
    let n = 0;
    for (let j = 0; j < o.tk; j++) n += allowed(o, i, j);
    if (n === 0) fully++;
    const y = r.output.subarray(row * o.dv, (row + 1) * o.dv);
    const w = r.weights ? r.weights.subarray(row * o.tk, (row + 1) * o.tk) : null;
    const rowNan = y.some(Number.isNaN) || (w !== null && w.some(Number.isNaN));
    nanRows += rowNan;
    if (!w) continue;
    if (n === 0) {
      if (o.maskFill === 'zero') assert.ok(w.every((x) => x === 0) && y.every((x) => x === 0));
      if (o.maskFill === 'neg_inf') assert.ok(w.every(Number.isNaN));
      if (o.maskFill === 'finite') assert.ok(w.every((x) => Math.abs(x - 1 / o.tk) < 1e-6));
    } else if (!w.some(Number.isNaN)) {
      let sum = 0;
      for (let j = 0; j < o.tk; j++) {
        if (!allowed(o, i, j)) assert.equal(w[j], 0, `forbidden weight at row ${row} key ${j}`);
        sum += w[j];
      }
      assert.ok(Math.abs(sum - 1) < 1e-4, `row ${row} sums to ${sum}`);
    }
  }
  assert.equal(r.fullyMaskedRows, fully);
  assert.equal(r.nanRows, nanRows);
}

function randomAttentionOpts(r) {
  const heads = r.int(1, 4);
  const kvHeads = r.pick([heads, 1, heads % 2 === 0 ? 2 : heads]);
  const tq = r.int(1, 32);
  const tk = r.bool() ? tq : r.int(1, 32);
  const dk = r.int(1, 16);
  const o = { heads, kvHeads, tq, tk, dk, dv: r.bool() ? dk : r.int(1, 16) };
  o.causal = r.bool();
  o.window = r.bool(0.3) ? r.int(0, tk + 2) : 0;
  o.keyPadding = r.bool(0.25) ? Uint8Array.from({ length: tk }, () => (r.bool(0.8) ? 1 : 0)) : null;
  o.mask = r.bool(0.15) ? Uint8Array.from({ length: tq * tk }, () => (r.bool(0.7) ? 1 : 0)) : null;
  o.scale = r.pick([null, null, 1, 0.125, 14, 1e-3]);
  o.maskFill = r.pick(['neg_inf', 'finite', 'zero']);
  o.kernel = r.pick(['naive', 'tiled']);
  return o;
}

// Hostile option values and arguments; each call must throw an Error with a field, or succeed
// only if the value is one the API documents as valid.
const HOSTILE_NUMS = [NaN, -1, 0, 1.5, 1e10, 2 ** 53, Infinity, -Infinity, '4', '', null, true, {}, [], [4], 4n, Symbol('x'), () => 4];
function hostileCall(core, r) {
  const base = { heads: 1, tq: 2, tk: 2, dk: 2, dv: 2 };
  const q = new Float32Array(4), k = new Float32Array(4), v = new Float32Array(4);
  const kind = r.int(0, 12);
  if (process.env.SOAK_TRACE) console.log('hostile kind', kind);
  switch (kind) {
    case 0: { // a numeric field replaced by garbage
      const key = r.pick(['heads', 'kvHeads', 'tq', 'tk', 'dk', 'dv', 'window', 'memoryCap', 'scale']);
      return () => core.attention(q, k, v, { ...base, [key]: r.pick(HOSTILE_NUMS) });
    }
    case 1: // opts not an object
      return () => core.attention(q, k, v, r.pick([null, undefined, 42, 'opts', true, Symbol('o')]));
    case 2: { // arrays of the wrong class or length
      const bad = r.pick([new Float64Array(4), new Int32Array(4), [0, 0, 0, 0], 'abcd', { length: 4 }, new Float32Array(3), new Float32Array(5), new Uint8Array(16), null, new DataView(new ArrayBuffer(16))]);
      const which = r.int(0, 2);
      return () => core.attention(which === 0 ? bad : q, which === 1 ? bad : k, which === 2 ? bad : v, base);
    }
    case 3: // a getter that throws
      return () => core.attention(q, k, v, { ...base, get [r.pick(['tq', 'scale', 'mask', 'kernel', 'causal'])]() { throw new Error('getter boom'); } });
    case 4: // a Proxy that throws on every access
      return () => core.attention(q, k, v, new Proxy({}, { get() { throw new Error('proxy boom'); }, has() { throw new Error('proxy boom'); } }));
    case 5: // masks of the wrong class or length
      return () => core.attention(q, k, v, { ...base, [r.pick(['mask', 'keyPadding'])]: r.pick([new Uint8Array(1), new Uint8Array(100), new Float32Array(4), [1, 1], 'xx', new Uint8ClampedArray(4), {}]) });
    case 6: // enum fields
      return () => core.attention(q, k, v, { ...base, [r.pick(['maskFill', 'kernel'])]: r.pick(['NEG_INF', '', 'tiled ', 'zero\0', 1, {}, ['naive'], '<script>']) });
    case 7: // detached buffer: the typed array now has length 0
      return () => {
        const d = new Float32Array(4);
        structuredClone(d.buffer, { transfer: [d.buffer] });
        return core.attention(d, k, v, base);
      };
    case 8: // multiHeadAttention with hostile shapes
      return () => core.multiHeadAttention(new Float32Array(6), new Float32Array(9), new Float32Array(9), new Float32Array(9), new Float32Array(9),
        { t: r.pick([2, 0, -2, NaN, 1e12, '2']), dModel: r.pick([3, 0, 7, 1e9]), heads: r.pick([1, 2, 3, 0, NaN]), kvHeads: r.pick([undefined, 2, 5]), dk: r.pick([undefined, 0, 3, 1e12]) });
    case 9: // examples with hostile options
      return () => core.example(r.pick(['induction', 'random', 'nope', '', 42, null, '__proto__', 'constructor']),
        r.pick([{ tokens: [1, 2] }, { tokens: 'the cat' }, { tokens: [] }, { tokens: Array(5000).fill('a') }, { sharpness: NaN }, { sharpness: -1 },
          { t: 1e9 }, { t: 4096, dModel: 4096 }, { seed: -1 }, { seed: 1.5 }, { heads: 3, dModel: 8 }, { tokens: ['<img src=x onerror=alert(1)>'.repeat(200)] }, 7, 'x']));
    case 10: // entropy study out of range or over its work budget
      return () => core.entropyStudy(r.pick([{ dks: [] }, { dks: [0] }, { dks: [8193] }, { dks: Array(17).fill(16) }, { dks: 'abc' }, { keys: 0 }, { queries: 1e9 },
        { dks: Array(16).fill(8192), keys: 4096, queries: 100000 }, { dks: [NaN] }, { seed: -5 }, 5]));
    case 11: { // attentionBackward: hostile dOut, dropout, dropoutSeed or a backward over the cap
      const d = new Float32Array(4);
      const variant = r.int(0, 3);
      if (variant === 0) return () => core.attentionBackward(q, k, v, r.pick([new Float32Array(3), new Float64Array(4), [0, 0, 0, 0], null, 'dO']), base);
      if (variant === 1) return () => core.attentionBackward(q, k, v, d, { ...base, dropout: r.pick([1, -0.1, NaN, Infinity, '0.5', null, 1 + 1e-9]) });
      if (variant === 2) return () => core.attentionBackward(q, k, v, d, { ...base, dropoutSeed: r.pick([-1, 0.5, 2 ** 53, NaN, 'x', 5n]) });
      const T = 20000;
      return () => core.attentionBackward(new Float32Array(T), new Float32Array(T), new Float32Array(T), new Float32Array(T), { heads: 1, tq: T, tk: T, dk: 1, dv: 1 });
    }
    default: // over the memory cap: a naive request whose weights alone are gigabytes
      return () => {
        const T = r.pick([20000, 40000]);
        const H = r.int(2, 8);
        return core.attention(new Float32Array(H * T), new Float32Array(H * T), new Float32Array(H * T), { heads: H, tq: T, tk: T, dk: 1, dv: 1 });
      };
  }
}

test('soak: 10 000 random valid and hostile calls leave the module correct and its heap bounded', async (t) => {
  const mjs = path.join(DIR, 'attn_core.mjs');
  const { default: createAttnCore } = await import(mjs);
  const core = await createAttnCore({ wasmBinary: fs.readFileSync(path.join(DIR, 'attn_core.wasm')) });
  const heap = () => (typeof core.heapBytes === 'function' ? core.heapBytes() : core.HEAP8.buffer.byteLength);
  const fixtures = JSON.parse(fs.readFileSync(path.join(ROOT, 'tests', 'fixtures', 'attention.json'), 'utf8')).cases
    .filter((c) => c.family !== 'large_logits' && c.expect.weights !== null && c.opts.heads * c.opts.tq * c.opts.tk <= 4096);
  assert.ok(fixtures.length >= 10);

  // The reference call: its output and weights must keep the same bits all along.
  const R = rng(7);
  const refOpts = { heads: 2, kvHeads: 1, tq: 9, tk: 11, dk: 5, dv: 3, causal: true, window: 6, maskFill: 'finite' };
  const refIn = [values(R, 2 * 9 * 5, false), values(R, 11 * 5, false), values(R, 11 * 3, false)];
  const refRun = (kernel) => core.attention(...refIn, { ...refOpts, kernel });
  const ref = refRun('naive'), refTiled = refRun('tiled');
  const refBits = [bits(ref.output), bits(ref.weights), bits(refTiled.output)];
  const refDout = values(R, 2 * 9 * 3, false);
  const refBwd = (kernel) => {
    const g = core.attentionBackward(...refIn, refDout, { ...refOpts, kernel, dropout: 0.2, dropoutSeed: 99 });
    return [bits(g.dq), bits(g.dk), bits(g.dv)];
  };
  const refBwdBits = [...refBwd('naive'), ...refBwd('tiled')];
  const heapStart = heap();

  const checkFixtures = () => {
    for (const c of fixtures) {
      const o = c.opts;
      const res = core.attention(Float32Array.from(c.q.map(num)), Float32Array.from(c.k.map(num)), Float32Array.from(c.v.map(num)), {
        ...o, keyPadding: o.keyPadding && Uint8Array.from(o.keyPadding), mask: o.mask && Uint8Array.from(o.mask), scale: o.scale === null ? null : num(o.scale),
      });
      const want = c.expect.weights.map(num);
      for (let i = 0; i < want.length; i++) {
        const got = res.weights[i];
        assert.ok(Number.isNaN(want[i]) ? Number.isNaN(got) : Math.abs(got - want[i]) <= 2e-5, `${c.name} weight ${i}: ${got} vs ${want[i]}`);
      }
    }
  };
  checkFixtures();

  const r = rng(20240601);
  const counts = { valid: 0, refused: 0, hostile: 0, mha: 0, example: 0, study: 0, backward: 0 };
  let heapHalf = 0;
  const t0 = Date.now();
  for (let n = 0; n < CALLS; n++) {
    const kind = r.next();
    const where = `call #${n}`;
    if (process.env.SOAK_TRACE) console.log(where, kind.toFixed(3));
    if (kind < 0.45) { // valid attention, checked row by row
      const o = randomAttentionOpts(r);
      const q = values(r, o.heads * o.tq * o.dk), k = values(r, o.kvHeads * o.tk * o.dk), v = values(r, o.kvHeads * o.tk * o.dv);
      const res = core.attention(q, k, v, o);
      checkAttention(o, res);
      counts.valid++;
    } else if (kind < 0.55) { // valid multi-head attention
      const heads = r.int(1, 4), dk = r.int(1, 6), t = r.int(1, 24), dModel = r.int(1, 12);
      const o = { t, dModel, heads, dk, dv: dk, causal: r.bool(), maskFill: r.pick(['neg_inf', 'finite', 'zero']), kernel: r.pick(['naive', 'tiled']) };
      const res = core.multiHeadAttention(values(r, t * dModel), values(r, dModel * heads * dk), values(r, dModel * heads * dk), values(r, dModel * heads * dk), values(r, heads * dk * dModel), o);
      assert.equal(res.output.length, t * dModel, where);
      assert.equal(res.headOutputs.length, heads * t * dk, where);
      counts.mha++;
    } else if (kind < 0.62) { // examples, then the page's path: example -> multiHeadAttention
      const ex = r.bool() ? core.example('induction', { tokens: Array.from({ length: r.int(1, 20) }, () => r.pick(['the', 'cat', '<b>x</b>', '😀', '"', ''])).filter((s) => s !== '').concat(['z']) })
        : core.example('random', { seed: r.int(0, 2 ** 32 - 1), t: r.int(1, 24), dModel: r.pick([4, 8, 12]), heads: r.pick([1, 2, 4]) });
      const res = core.multiHeadAttention(ex.x, ex.wq, ex.wk, ex.wv, ex.wo, ex);
      const o = { heads: ex.heads, tq: ex.t, tk: ex.t, dv: ex.dv, causal: ex.causal, window: 0, keyPadding: null, mask: null, maskFill: 'neg_inf' };
      checkAttention(o, res);
      counts.example++;
    } else if (kind < 0.70) { // attentionBackward, both kernels, with dropout half the time
      const o = randomAttentionOpts(r);
      const plain = r.bool(0.6); // no special values: then every gradient is checked
      if (plain && o.maskFill === 'neg_inf') o.maskFill = 'finite';
      const p = r.bool() ? r.pick([0.1, 0.5, 0.9]) : 0;
      const seed = r.int(0, 2 ** 32 - 1);
      const q = values(r, o.heads * o.tq * o.dk, !plain), k = values(r, o.kvHeads * o.tk * o.dk, !plain);
      const v = values(r, o.kvHeads * o.tk * o.dv, !plain), d = values(r, o.heads * o.tq * o.dv, !plain);
      const opts = { ...o, dropout: p, dropoutSeed: seed };
      const a = core.attentionBackward(q, k, v, d, { ...opts, kernel: 'naive' });
      const b = core.attentionBackward(q, k, v, d, { ...opts, kernel: 'tiled' });
      for (const [name, len] of [['dq', o.heads * o.tq * o.dk], ['dk', o.kvHeads * o.tk * o.dk], ['dv', o.kvHeads * o.tk * o.dv], ['output', o.heads * o.tq * o.dv], ['lse', o.heads * o.tq]]) {
        assert.equal(a[name].length, len, `${where} naive ${name}`);
        assert.equal(b[name].length, len, `${where} tiled ${name}`);
      }
      if (plain) {
        for (const name of ['dq', 'dk', 'dv']) {
          let top = 0, diff = 0;
          for (let i = 0; i < a[name].length; i++) {
            assert.ok(Number.isFinite(a[name][i]) && Number.isFinite(b[name][i]), `${where} ${name}[${i}] not finite`);
            top = Math.max(top, Math.abs(a[name][i]));
            diff = Math.max(diff, Math.abs(a[name][i] - b[name][i]));
          }
          assert.ok(diff <= 1e-3 * (1 + top), `${where} ${name}: naive and tiled differ by ${diff}`);
        }
      }
      counts.backward++;
    } else if (kind < 0.72) {
      const s = core.entropyStudy({ dks: [r.int(1, 64), r.int(1, 256)], keys: r.int(1, 32), queries: r.int(1, 40), seed: r.int(0, 1000) });
      assert.ok(s.scaled.every((e) => e >= 0 && e <= s.ceiling + 1e-9), where);
      counts.study++;
    } else { // hostile: must throw an Error; ours carry a field the message names
      const call = hostileCall(core, r);
      let threw = null;
      try {
        call();
      } catch (e) {
        threw = e;
      }
      if (threw) {
        assert.ok(threw instanceof Error, `${where}: threw a non-Error ${String(threw)}`);
        if (threw.name === 'AttnError') {
          assert.ok(typeof threw.field === 'string' && threw.field.length > 0, `${where}: no field: ${threw.message}`);
          assert.ok(threw.message.includes(threw.field), `${where}: '${threw.message}' does not name '${threw.field}'`);
          if (threw.field === 'memory') counts.refused++;
        } else {
          // Only the test's own throwing getters/proxies may surface as plain Errors.
          assert.match(threw.message, /boom/, `${where}: unexpected ${threw.name}: ${threw.message}`);
        }
      }
      counts.hostile++;
    }
    if (n % 250 === 249) {
      const a = refRun('naive'), b = refRun('tiled');
      assert.deepEqual([bits(a.output), bits(a.weights), bits(b.output)], refBits, `reference call changed after ${where}`);
      assert.deepEqual([...refBwd('naive'), ...refBwd('tiled')], refBwdBits, `reference backward changed after ${where}`);
    }
    if (n % 1000 === 999) checkFixtures();
    if (n === Math.floor(CALLS / 2)) heapHalf = heap();
  }
  const heapEnd = heap();
  const secs = (Date.now() - t0) / 1000;
  t.diagnostic(`calls ${CALLS} in ${secs.toFixed(1)} s: ${JSON.stringify(counts)}`);
  t.diagnostic(`wasm heap bytes: start ${heapStart}, half ${heapHalf}, end ${heapEnd}`);
  assert.ok(counts.refused > 50, 'over-cap requests were exercised');
  // The second half draws from the same distribution as the first: it must not grow the heap
  // again (growth would mean leaked buffers), and the heap stays far below the 2 GiB maximum.
  assert.ok(heapEnd <= heapHalf, `heap grew in the second half: ${heapHalf} -> ${heapEnd}`);
  assert.ok(heapEnd <= 256 * 1024 * 1024, `heap ${heapEnd} bytes`);
});

test('soak: a request over the memory cap is refused and the next call is exact', async () => {
  const { default: createAttnCore } = await import(path.join(DIR, 'attn_core.mjs'));
  const core = await createAttnCore({ wasmBinary: fs.readFileSync(path.join(DIR, 'attn_core.wasm')) });
  const r = rng(3);
  const o = { heads: 1, tq: 5, tk: 5, dk: 3, dv: 3, causal: true };
  const args = [values(r, 15, false), values(r, 15, false), values(r, 15, false)];
  const before = core.attention(...args, o);
  const heap0 = core.HEAP8.buffer.byteLength;
  const T = 50000; // weights alone: 10 GB
  assert.throws(() => core.attention(new Float32Array(T), new Float32Array(T), new Float32Array(T), { heads: 1, tq: T, tk: T, dk: 1, dv: 1 }),
    (e) => e.name === 'AttnError' && e.field === 'memory' && e.code === 'resource_exhausted' && /cap/.test(e.message));
  assert.throws(() => core.attention(new Float32Array(T), new Float32Array(T), new Float32Array(T), { heads: 1, tq: T, tk: T, dk: 1, dv: 1, kernel: 'tiled', memoryCap: 1000 }),
    (e) => e.field === 'memory');
  assert.equal(core.HEAP8.buffer.byteLength, heap0, 'a refused request must not grow the heap');
  const after = core.attention(...args, o);
  assert.equal(bits(after.output), bits(before.output));
  assert.equal(bits(after.weights), bits(before.weights));
});

// The attention variants: random valid option sets (some combinations are refused with a named
// field, e.g. RoPE with an odd d_k or an unsupported tiled combination) and hostile values of
// every new field, through one instance; a third of the accepted calls also run attentionBackward
// with the same options; a fixed reference call keeps its bits throughout.
const VARIANT_CALLS = Math.max(200, Math.floor(CALLS / 5));
function randomVariantOpts(r) {
  const o = randomAttentionOpts(r);
  o.normalizer = r.pick(['softmax', 'softmax1', 'sigmoid', 'relu', 'linear']);
  o.position = r.pick(['none', 'rope', 'alibi']);
  o.qkNorm = r.bool();
  o.maxShift = r.bool(0.8);
  o.maskMode = r.pick(['before', 'before', 'after']);
  o.precision = r.pick(['float32', 'float32', 'float64', 'float16']);
  // Mostly combinations the kernels support; the rest must be refused naming the field.
  if (o.precision === 'float16' && r.bool(0.8)) Object.assign(o, { normalizer: 'softmax', position: 'none', qkNorm: false, kernel: 'naive' });
  if (o.kernel === 'tiled' && r.bool(0.8)) Object.assign(o, { maskMode: 'before', maxShift: true, precision: 'float32' });
  if (o.normalizer === 'linear' && o.position === 'alibi' && r.bool(0.8)) o.position = 'rope';
  if (o.position === 'rope' && o.dk % 2 === 1 && r.bool(0.8)) o.dk += 1;
  if (r.bool(0.3)) o.ropeBase = r.pick([100, 10000, 1e6]);
  if (r.bool(0.3)) o.sigmoidBias = r.pick([null, -2, 0, 3]);
  return o;
}
const VARIANT_FIELDS = ['qkNorm', 'position', 'ropeBase', 'normalizer', 'sigmoidBias', 'maxShift', 'maskMode', 'precision'];
function checkVariant(o, res, where) {
  const rows = o.heads * o.tq;
  assert.equal(res.rowSums.length, rows, where);
  const Ctor = o.precision === 'float64' ? Float64Array : Float32Array;
  assert.ok(res.output instanceof Ctor && res.rowSums instanceof Ctor, where);
  let fully = 0, nanRows = 0;
  for (let row = 0; row < rows; row++) {
    const i = row % o.tq;
    let n = 0;
    for (let j = 0; j < o.tk; j++) n += allowed(o, i, j);
    fully += n === 0;
    const y = res.output.subarray(row * o.dv, (row + 1) * o.dv);
    const w = res.weights ? res.weights.subarray(row * o.tk, (row + 1) * o.tk) : null;
    nanRows += y.some(Number.isNaN) || (w !== null && w.some(Number.isNaN));
    if (!w) continue;
    // Softmax 'before' keeps the original kernels' rules: the fill policy's fully masked row,
    // and a NaN row NaN throughout (forbidden cells included).
    const policyRow = o.normalizer === 'softmax' && o.maskMode === 'before' && (n === 0 || w.some(Number.isNaN));
    if (o.precision !== 'float16' && !policyRow) {
      for (let j = 0; j < o.tk; j++) if (!allowed(o, i, j)) assert.equal(w[j], 0, `${where}: forbidden weight row ${row} key ${j}`);
    }
    if (n === 0 && !policyRow && o.normalizer !== 'softmax') assert.ok(y.every((x) => x === 0), `${where}: fully masked row ${row}`);
    let sum = 0, mag = 0;
    for (const x of w) sum += x, mag += Math.abs(x);
    if (Number.isFinite(sum) && Number.isFinite(res.rowSums[row])) {
      assert.ok(Math.abs(sum - res.rowSums[row]) <= 1e-4 * (1 + mag), `${where}: rowSums row ${row}`);
    }
  }
  assert.equal(res.fullyMaskedRows, o.kernel === 'tiled' && o.normalizer === 'linear' ? res.fullyMaskedRows : fully, where);
  if (res.weights) assert.equal(res.nanRows, nanRows, where);
}

test('soak: random attention variants and hostile variant options keep the module correct', async (t) => {
  const { default: createAttnCore } = await import(path.join(DIR, 'attn_core.mjs'));
  const core = await createAttnCore({ wasmBinary: fs.readFileSync(path.join(DIR, 'attn_core.wasm')) });
  const r = rng(18);
  const refIn = [values(r, 2 * 6 * 4, false), values(r, 6 * 4, false), values(r, 6 * 3, false)];
  const refOpts = { heads: 2, kvHeads: 1, tq: 6, tk: 6, dk: 4, dv: 3, causal: true, normalizer: 'softmax1', position: 'rope', qkNorm: true };
  const ref = core.attention(...refIn, refOpts);
  const counts = { ok: 0, refused: 0, hostile: 0 };
  const HOSTILE = [NaN, -1, 0, 1.5, Infinity, '4', '', true, {}, [], 'SOFTMAX', 'float8', 'rope ', 4n, Symbol('x')];
  for (let n = 0; n < VARIANT_CALLS; n++) {
    const o = randomVariantOpts(r);
    const where = `variant call #${n} ${JSON.stringify({ ...o, keyPadding: o.keyPadding && Array.from(o.keyPadding).join(''), mask: o.mask && 'custom' })}`;
    const q = values(r, o.heads * o.tq * o.dk), k = values(r, o.kvHeads * o.tk * o.dk), v = values(r, o.kvHeads * o.tk * o.dv);
    if (r.bool(0.25)) { // a hostile value of one new field
      const key = r.pick(VARIANT_FIELDS);
      const bad = r.pick(HOSTILE);
      let res = null;
      try {
        res = core.attention(q, k, v, { ...o, [key]: bad });
      } catch (e) {
        assert.equal(e.name, 'AttnError', `${where}: ${e}`);
        assert.ok(e.field && e.message.includes(e.field), `${where}: ${e.field} / ${e.message}`);
        counts.hostile++;
        continue;
      }
      // Accepted: the value must be a valid one (e.g. sigmoidBias 0, ropeBase 1.5).
      const valid = (key === 'sigmoidBias' && Number.isFinite(bad)) || (key === 'ropeBase' && Number.isFinite(bad) && bad > 0) ||
        ((key === 'qkNorm' || key === 'maxShift') && typeof bad === 'boolean');
      assert.ok(valid, `${where}: ${key}=${String(bad)} accepted`);
      checkVariant({ ...o, [key]: bad }, res, where);
      continue;
    }
    let res;
    try {
      res = core.attention(q, k, v, o);
    } catch (e) {
      assert.equal(e.name, 'AttnError', `${where}: ${e}`);
      assert.ok(['position', 'kernel', 'maxShift', 'precision', 'dropout'].includes(e.field), `${where}: refused with ${e.field}: ${e.message}`);
      counts.refused++;
      continue;
    }
    checkVariant(o, res, where);
    counts.ok++;
    if (r.bool(0.3)) { // the backward pass with the same options: right sizes, or a forward-only option named
      const d = values(r, o.heads * o.tq * o.dv);
      try {
        const g = core.attentionBackward(q, k, v, d, o);
        // float64 trains too (naive kernel, as its forward); float16 is the forward's alone.
        assert.ok(o.maxShift !== false && o.maskMode !== 'after' && o.precision !== 'float16', `${where}: the backward accepted a forward-only option`);
        for (const [name, len] of [['dq', o.heads * o.tq * o.dk], ['dk', o.kvHeads * o.tk * o.dk], ['dv', o.kvHeads * o.tk * o.dv], ['output', o.heads * o.tq * o.dv]]) {
          assert.equal(g[name].length, len, `${where}: backward ${name}`);
        }
        counts.backward = (counts.backward ?? 0) + 1;
      } catch (e) {
        assert.equal(e.name, 'AttnError', `${where}: backward ${e}`);
        assert.ok(['maxShift', 'maskMode', 'precision'].includes(e.field), `${where}: backward refused with ${e.field}: ${e.message}`);
        counts.backwardRefused = (counts.backwardRefused ?? 0) + 1;
      }
    }
  }
  const after = core.attention(...refIn, refOpts);
  assert.equal(bits(after.output), bits(ref.output));
  assert.equal(bits(after.rowSums), bits(ref.rowSums));
  t.diagnostic(`variant calls ${VARIANT_CALLS}: ${JSON.stringify(counts)}`);
  assert.ok(counts.ok > VARIANT_CALLS / 3 && counts.refused > 0 && counts.hostile > 0, JSON.stringify(counts));
});
