// core.patternScores (attn/roles.hpp): each head's previous-token, induction and duplicate-token
// score on one sequence, against the NumPy oracle (tests/fixtures/roles.json,
// tests/oracle/gen_roles_fixtures.py), lesson 1's two hand-built heads among the cases; bad input
// names its field and the module keeps working.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { loadCore, loadFixture, expectFieldError } from './helpers.mjs';

const cases = loadFixture('roles.json').cases;

test('patternScores equals the NumPy oracle on every case, every head', async () => {
  const core = await loadCore();
  assert.ok(cases.length >= 5);
  for (const c of cases) {
    const r = core.patternScores(Int32Array.from(c.tokens), Float32Array.from(c.weights), { heads: c.heads });
    for (const k of ['previousToken', 'induction', 'duplicateToken']) {
      assert.equal(r[k].length, c.heads, `${c.name} ${k}`);
      r[k].forEach((x, h) => assert.ok(Math.abs(x - c[k][h]) < 1e-6, `${c.name} ${k} head ${h + 1}: ${x} vs ${c[k][h]}`));
    }
  }
  // Lesson 1: head 2 is a previous-token head; head 1 splits its weight between earlier copies
  // and the token itself, so its duplicate-token score is about one half.
  const l1 = cases[0];
  assert.ok(l1.previousToken[1] > 0.9 && l1.duplicateToken[0] > 0.5 && l1.duplicateToken[0] < 0.6);
});

test('patternScores: wrong lengths and types name their field; the module keeps working', async () => {
  const core = await loadCore();
  expectFieldError(() => core.patternScores(Int32Array.from([0, 1]), new Float32Array(3)), ['weights']);
  expectFieldError(() => core.patternScores(Int32Array.from([0, 1]), new Float32Array(8), { heads: 3 }), ['weights']);
  expectFieldError(() => core.patternScores([0, 1], new Float32Array(4)), ['tokens']);
  expectFieldError(() => core.patternScores(new Int32Array(0), new Float32Array(0)), ['tokens']);
  expectFieldError(() => core.patternScores(Int32Array.from([0, 1]), new Float64Array(4)), ['weights']);
  expectFieldError(() => core.patternScores(Int32Array.from([0, 1]), new Float32Array(4), { heads: 0 }), ['heads']);
  expectFieldError(() => core.patternScores(Int32Array.from([0, 1]), new Float32Array(4), { memoryCap: 8 }), ['memory']);
  const r = core.patternScores(Int32Array.from([0, 1, 0]), Float32Array.from([1, 0, 0, 1, 0, 0, 1, 0, 0]));
  assert.deepEqual(r, { previousToken: [0.5], induction: [0], duplicateToken: [1] });
});
