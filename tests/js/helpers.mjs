// Shared helpers for the node --test suite of the wasm module's JS API.
// Expected values come only from the NumPy oracle's fixtures (tests/fixtures/*.json).
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { fileURLToPath } from 'node:url';
import path from 'node:path';

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
// ATTN_CORE=relaxed: the same suites against the relaxed-SIMD build (Node needs
// --experimental-wasm-relaxed-simd, see relaxed.test.mjs).
const CORE_NAME = process.env.ATTN_CORE === 'relaxed' ? 'attn_core_relaxed' : 'attn_core';
export const MJS = path.join(ROOT, 'build', 'wasm', `${CORE_NAME}.mjs`);
export const WASM = path.join(ROOT, 'build', 'wasm', `${CORE_NAME}.wasm`);

// float32 machine epsilon / 2: the unit roundoff of one float32 operation.
export const U32 = 2 ** -24;

// Tolerances (documented in tests/js/README.md):
//  ordinary cases        |Δ| <= 2e-5
//  large logits          |Δ| <= 2e-5 + 4·u32·S·M    (S = max |scaled score| of the case,
//                                                    M = max(1, max |v|) for output, 1 otherwise)
//  lse, any case         additionally + 2^-20·|expected| (lse of -1e9 fills, 1e24 overflow rows)
export const ABS_TOL = 2e-5;
export const REL_LSE = 2 ** -20;

let corePromise = null;
export function loadCore() {
  if (!corePromise) {
    corePromise = (async () => {
      if (!fs.existsSync(MJS) || !fs.existsSync(WASM)) {
        throw new Error(`wasm module not built: ${MJS} / ${WASM} missing (run cmake --workflow --preset wasm)`);
      }
      const { default: createAttnCore } = await import(MJS);
      return createAttnCore({ wasmBinary: fs.readFileSync(WASM) });
    })();
  }
  return corePromise;
}

export function loadFixture(name) {
  return JSON.parse(fs.readFileSync(path.join(ROOT, 'tests', 'fixtures', name), 'utf8'));
}

// "nan" / "inf" / "-inf" -> numbers; everything else unchanged.
export function num(x) {
  if (x === 'nan') return NaN;
  if (x === 'inf') return Infinity;
  if (x === '-inf') return -Infinity;
  return x;
}
export function nums(a) {
  return a === null || a === undefined ? a : a.map(num);
}
export const f32 = (a) => Float32Array.from(nums(a));
export const u8 = (a) => (a === null || a === undefined ? null : Uint8Array.from(a));

// JS options for core.attention from a fixture case (kernel added by the caller).
export function attnOpts(c, extra = {}) {
  const o = c.opts;
  return {
    heads: o.heads, kvHeads: o.kvHeads, tq: o.tq, tk: o.tk, dk: o.dk, dv: o.dv,
    causal: o.causal, window: o.window, keyPadding: u8(o.keyPadding), mask: u8(o.mask),
    scale: o.scale === null ? null : num(o.scale), maskFill: o.maskFill, ...extra,
  };
}
export function attnInputs(c) {
  return [f32(c.q), f32(c.k), f32(c.v)];
}

// max |scaled score| of a case, computed in float64 from its float32 inputs.
export function maxAbsScore(c) {
  const { heads, kvHeads, tq, tk, dk } = c.opts;
  const scale = c.opts.scale === null ? 1 / Math.sqrt(dk) : num(c.opts.scale);
  const q = nums(c.q), k = nums(c.k);
  const group = heads / kvHeads;
  let top = 0;
  for (let h = 0; h < heads; h++) {
    const g = Math.floor(h / group);
    for (let i = 0; i < tq; i++) {
      for (let j = 0; j < tk; j++) {
        let s = 0;
        for (let d = 0; d < dk; d++) s += q[(h * tq + i) * dk + d] * k[(g * tk + j) * dk + d];
        s = Math.abs(s * scale);
        if (Number.isFinite(s) && s > top) top = s;
      }
    }
  }
  return top;
}
export function maxAbs(a) {
  let m = 0;
  for (const x of a) if (Number.isFinite(x) && Math.abs(x) > m) m = Math.abs(x);
  return m;
}

// Compare got (typed array) with expected (fixture list). NaN must match NaN, ±inf must
// match exactly, finite values within tol(expected) . Returns max |Δ| over finite entries
// (entries with |expected| > skipAbove are checked but not counted in the returned figure).
export function compareArrays(got, expected, tol, label, skipAbove = Infinity) {
  const exp = nums(expected);
  assert.ok(got, `${label}: missing`);
  assert.equal(got.length, exp.length, `${label}: length`);
  let worst = 0;
  for (let i = 0; i < exp.length; i++) {
    const e = exp[i], g = got[i];
    if (Number.isNaN(e)) {
      assert.ok(Number.isNaN(g), `${label}[${i}]: expected NaN, got ${g}`);
    } else if (!Number.isFinite(e)) {
      assert.equal(g, e, `${label}[${i}]: expected ${e}, got ${g}`);
    } else {
      assert.ok(Number.isFinite(g), `${label}[${i}]: expected ${e}, got ${g}`);
      const d = Math.abs(g - e);
      const t = typeof tol === 'function' ? tol(e) : tol;
      assert.ok(d <= t, `${label}[${i}]: expected ${e}, got ${g}, |Δ| = ${d.toExponential(3)} > ${t.toExponential(3)}`);
      if (Math.abs(e) <= skipAbove && d > worst) worst = d;
    }
  }
  return worst;
}

// Error checks: an Error named AttnError whose message names one of `fields`
// and whose .field (documented) is one of them.
export function expectFieldError(fn, fields, label = '') {
  let err = null;
  try {
    fn();
  } catch (e) {
    err = e;
  }
  assert.ok(err, `${label}: expected an error naming ${fields.join(' or ')}, nothing was thrown`);
  assert.ok(err instanceof Error, `${label}: thrown value is not an Error: ${err}`);
  assert.equal(err.name, 'AttnError', `${label}: error name (message: ${err.message})`);
  assert.ok(fields.some((f) => err.message.includes(f)),
    `${label}: message "${err.message}" does not name ${fields.join(' or ')}`);
  assert.ok(fields.includes(err.field), `${label}: .field is ${err.field}, expected ${fields.join(' or ')}`);
  return err;
}

// Max |Δ| bookkeeping: table[family][kernel][quantity] = max.
export class DeltaTable {
  constructor() {
    this.t = new Map();
  }
  add(family, kernel, quantity, d) {
    const key = `${family}\u0000${kernel}`;
    if (!this.t.has(key)) this.t.set(key, { family, kernel, n: 0 });
    const row = this.t.get(key);
    if (quantity === 'case') {
      row.n++;
      return;
    }
    row[quantity] = Math.max(row[quantity] ?? 0, d);
  }
  format(quantities) {
    const head = ['family', 'kernel', 'cases', ...quantities];
    const rows = [head];
    for (const r of this.t.values()) {
      rows.push([r.family, r.kernel, String(r.n),
        ...quantities.map((q) => (r[q] === undefined ? '-' : r[q].toExponential(2)))]);
    }
    const w = head.map((_, i) => Math.max(...rows.map((r) => r[i].length)));
    return rows.map((r) => r.map((c, i) => c.padEnd(w[i])).join('  ')).join('\n');
  }
}

// Largest |a - b| / max(1, |b|); NaN must meet NaN and infinities their equal (else Infinity).
export function maxRelDiff(got, want) {
  if (got.length !== want.length) return Infinity;
  let m = 0;
  for (let i = 0; i < want.length; i++) {
    const x = got[i], y = want[i];
    if (Number.isNaN(x) || Number.isNaN(y)) {
      if (Number.isNaN(x) !== Number.isNaN(y)) return Infinity;
      continue;
    }
    if (!Number.isFinite(x) || !Number.isFinite(y)) {
      if (x !== y) return Infinity;
      continue;
    }
    m = Math.max(m, Math.abs(x - y) / Math.max(1, Math.abs(y)));
  }
  return m;
}
