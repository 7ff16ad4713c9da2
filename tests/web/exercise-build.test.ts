// "Build a head" (web/src/attention/exercise/build.ts, grid.ts): the grid's link text, and the head
// the core builds from it — its weights against a softmax recomputed here from the grid, and its
// role score against the definition in tests/oracle/gen_roles_fixtures.py — for the reference
// solutions (lesson 1's constructions) and for a grid left empty.
import { describe, it, expect, beforeAll } from 'vitest';
import type { AttnCore } from '../../web/src/wasm/attn-core';
import { loadWasmCore } from './wasm-core';
import { exerciseOf, type BuildExercise } from '../../web/src/attention/exercise/catalogue';
import { buildHead, vocabulary } from '../../web/src/attention/exercise/build';
import { cellValue, formatGrid, parseGrid, type Grid } from '../../web/src/attention/exercise/grid';
import { decodeHash, encodeState } from '../../web/src/app/state';

let core: AttnCore;
beforeAll(async () => {
  core = await loadWasmCore();
});

const previous = exerciseOf('build-previous') as BuildExercise;
const same = exerciseOf('build-same-token') as BuildExercise;
const induction = exerciseOf('build-induction') as BuildExercise;

/** Lesson 1's previous-token construction: position p looks for position p − 1 with 14. */
function previousGrid(t: number): Grid {
  const g: Grid = new Map();
  for (let p = 1; p < t; p++) g.set(`p${p}.${p - 1}`, 14);
  return g;
}

/** softmax over the causal keys of scores s(i, j), in double. */
function causalSoftmax(t: number, s: (i: number, j: number) => number): number[] {
  const w: number[] = [];
  for (let i = 0; i < t; i++) {
    const row = Array.from({ length: t }, (_, j) => (j <= i ? s(i, j) : -Infinity));
    const m = Math.max(...row);
    const e = row.map((x) => Math.exp(x - m));
    const z = e.reduce((a, b) => a + b, 0);
    w.push(...e.map((x) => x / z));
  }
  return w;
}

describe('the grid in the link', () => {
  it('reads cells, leaves out zeros and unreadable entries, writes them back in order', () => {
    const { grid, bad } = parseGrid('p2.1.14_w0.0.-3.5_p1.0.14_x1.1.1_p1.1.0_p1.2.101');
    expect(bad).toEqual(['x1.1.1', 'p1.2.101']);
    expect(formatGrid(grid)).toBe('w0.0.-3.5_p1.0.14_p2.1.14');
    expect(cellValue(' −7.256 ')).toBe(-7.26);
    expect(cellValue('')).toBe(0);
    expect(cellValue('abc')).toBeNull();
    expect(cellValue('1e5')).toBeNull();
  });
  it('a link keeps the grid; cells past the exercise are dropped with a notice; other exercises drop it', () => {
    const d = decodeHash('#v=1&ex=build-previous&exg=p1.0.14_p2.1.14');
    expect(d.notices).toEqual([]);
    expect(d.state.exercise.grid).toBe('p1.0.14_p2.1.14');
    expect(encodeState(d.state)).toBe('#v=1&ex=build-previous&exg=p1.0.14_p2.1.14');
    const far = decodeHash('#v=1&ex=build-previous&exg=p1.0.14_p20.3.1_w0.0.5');
    expect(far.state.exercise.grid).toBe('p1.0.14');
    expect(far.notices.join(' ')).toMatch(/2 cells are outside this exercise's grid/);
    const bad = decodeHash('#v=1&ex=build-previous&exg=zz');
    expect(bad.notices.join(' ')).toMatch(/1 cell unreadable/);
    expect(decodeHash('#v=1&ex=mask-causal&exg=p1.0.14').state.exercise.grid).toBe('');
  });
});

describe('the head the core builds', () => {
  it('previous-token: the weights are the causal softmax of the grid; lesson 1’s construction scores ≥ 0.8 on both sentences', () => {
    const t = previous.sentence.length;
    const g = previousGrid(t);
    const h = buildHead(core, previous, g, previous.sentence);
    const want = causalSoftmax(t, (i, j) => (j === i - 1 ? 14 : 0));
    h.weights.forEach((w, k) => expect(Math.abs(w - want[k])).toBeLessThan(1e-6));
    // The score by its definition: rows 1…T−1, the weight on i − 1 over the row's sum (1).
    const prev = Array.from({ length: t - 1 }, (_, k) => want[(k + 1) * t + k]).reduce((a, b) => a + b, 0) / (t - 1);
    expect(Math.abs(h.previousToken - prev)).toBeLessThan(1e-6);
    expect(h.previousToken).toBeGreaterThan(0.8);
    expect(buildHead(core, previous, g, previous.hidden).previousToken).toBeGreaterThan(0.8);
    // An empty grid: uniform causal rows, score mean of 1/(i+1) over rows 1…T−1.
    const empty = buildHead(core, previous, new Map(), previous.sentence);
    const uniform = Array.from({ length: t - 1 }, (_, k) => 1 / (k + 2)).reduce((a, b) => a + b, 0) / (t - 1);
    expect(Math.abs(empty.previousToken - uniform)).toBeLessThan(1e-6);
  });
  it('same-token: lesson 1’s word diagonal alone scores about 0.54 (it also looks at itself); minus the position diagonal, ≥ 0.8 on both sentences', () => {
    const vocab = vocabulary(same);
    expect(vocab).toEqual(['because', 'cat', 'mat', 'on', 'sat', 'the', 'tired', 'was']);
    // The hidden sentence uses the same words, as many.
    expect(same.hidden.length).toBe(same.sentence.length);
    for (const w of same.hidden) expect(vocab).toContain(w);
    const words: Grid = new Map(vocab.map((_, k) => [`w${k}.${k}`, 14] as [string, number]));
    const lesson = buildHead(core, same, words, same.sentence);
    expect(lesson.duplicateToken).toBeGreaterThan(0.5);
    expect(lesson.duplicateToken).toBeLessThan(0.6);
    const skip = new Map(words);
    same.sentence.forEach((_, i) => skip.set(`p${i}.${i}`, -14));
    expect(buildHead(core, same, skip, same.sentence).duplicateToken).toBeGreaterThan(0.8);
    expect(buildHead(core, same, skip, same.hidden).duplicateToken).toBeGreaterThan(0.8);
  });
  it('induction: layer 1 a previous-token head, layer 2 matching its word with the copied previous word: ≥ 0.8 on both sentences; an empty layer 2 is not', () => {
    const t = induction.sentence.length;
    const vocab = vocabulary(induction);
    const g = previousGrid(t);
    const l1only = buildHead(core, induction, g, induction.sentence);
    expect(l1only.layer1!).toBeGreaterThan(0.99);
    expect(l1only.induction).toBeLessThan(0.5);
    vocab.forEach((_, k) => g.set(`n${k}.${k}`, 14));
    for (const s of [induction.sentence, induction.hidden]) {
      const h = buildHead(core, induction, g, s);
      expect(h.induction).toBeGreaterThan(0.8);
      // Row 9 ("cat", earlier at 2 after <s>) puts its weight on key 3, the token after the first "cat".
      if (s === induction.sentence) expect(h.weights[9 * t + 3]).toBeGreaterThan(0.99);
    }
    // The grid's link text takes the third grid's cells.
    expect(decodeHash('#v=1&ex=build-induction&exg=n0.0.14_p1.0.14').state.exercise.grid).toBe('p1.0.14_n0.0.14');
  });
});
