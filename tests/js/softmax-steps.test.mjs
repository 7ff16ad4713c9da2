// core.softmaxSteps: one head's softmax step by step, as the Lesson view prints it under its
// lines. Expected values: lesson 1's NumPy lines (tests/fixtures/softmax_steps.json,
// tests/oracle/gen_softmax_steps.py), in each case's own precision.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { loadCore, loadFixture, nums, u8, expectFieldError, maxRelDiff as maxRel } from './helpers.mjs';

const cases = loadFixture('softmax_steps.json').cases;

test('softmaxSteps: every step of every case equals the NumPy lines, in float32 and float64', async () => {
  const core = await loadCore();
  assert.ok(cases.length >= 20);
  for (const c of cases) {
    const f64 = c.dtype === 'float64';
    const scores = f64 ? Float64Array.from(nums(c.scores)) : Float32Array.from(nums(c.scores));
    const r = core.softmaxSteps(scores, u8(c.allowed), {
      rows: c.rows, cols: c.cols, maskFill: c.fill, maxShift: c.maxShift, normalizer: c.normalizer,
      precision: c.dtype,
    });
    const tol = f64 ? 1e-13 : 5e-7;
    for (const k of ['masked', 'shifted', 'exps', 'sums', 'weights']) {
      assert.ok(r[k] instanceof (f64 ? Float64Array : Float32Array), `${c.name}: ${k} in ${c.dtype}`);
      assert.ok(maxRel(r[k], nums(c[k])) <= tol, `${c.name}: ${k} differs from NumPy by ${maxRel(r[k], nums(c[k]))}`);
    }
  }
});

test('softmaxSteps: wrong sizes, types and options name their field', async () => {
  const core = await loadCore();
  const s = new Float32Array(4), a = new Uint8Array(4).fill(1);
  expectFieldError(() => core.softmaxSteps(s, a, { rows: 2, cols: 3 }), ['scores'], 'short scores');
  expectFieldError(() => core.softmaxSteps(s, new Uint8Array(3), { rows: 2, cols: 2 }), ['allowed'], 'short allowed');
  expectFieldError(() => core.softmaxSteps(s, [1, 1, 1, 1], { rows: 2, cols: 2 }), ['allowed'], 'not a Uint8Array');
  expectFieldError(() => core.softmaxSteps(new Float64Array(4), a, { rows: 2, cols: 2 }), ['scores'], 'float64 scores, float32 asked');
  expectFieldError(() => core.softmaxSteps(s, a, { rows: 2, cols: 2, normalizer: 'relu' }), ['normalizer'], 'relu has no steps');
  expectFieldError(() => core.softmaxSteps(s, a, { rows: 2, cols: 2, maskFill: 'nope' }), ['maskFill'], 'fill');
  expectFieldError(() => core.softmaxSteps(s, a, { rows: 2, cols: 2, memoryCap: 8 }), ['memory'], 'cap');
  expectFieldError(() => core.softmaxSteps(s, a, { rows: 0, cols: 2 }), ['rows'], 'rows 0');
});
