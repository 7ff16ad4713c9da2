// The exercises' state rows and checks (web/src/attention/exercise/): an exercise's start replaces
// the defaults of the fields it sets (so a gallery link is `#v=1&ex=<id>` and a student's link
// keeps what they changed), hostile ids and impossible predict rows are corrected with a notice,
// and each check reads the result it is given (mask cell by cell, fix by NaN and row sums,
// predict by total variation distance computed here by hand).
import { describe, expect, it } from 'vitest';
import { decodeHash, encodeState, linkFields, withPatch, normalizeState, withLinkFields } from '../../web/src/app/state';
import { lineQuiz } from '../../web/src/lesson/code-lines';
import { exerciseFromQuery, parseEmbed, showExerciseControls } from '../../web/src/embed/embed';
import { EXERCISES, exerciseOf, exerciseStart, teacherPredictId } from '../../web/src/attention/exercise/catalogue';
import {
  checkFix,
  checkLines,
  checkMask,
  checkPredict,
  normalizedPrediction,
  targetMask,
  type CheckedResult,
} from '../../web/src/attention/exercise/check';
import type { FixExercise, LineExercise, MaskExercise, PredictExercise } from '../../web/src/attention/exercise/catalogue';

const byId = <T>(id: string) => exerciseOf(id) as T;

describe('the catalogue', () => {
  it('has at least 12 exercises with unique ids, each with a task and a hint; the two fixed ids exist', () => {
    expect(EXERCISES.length).toBeGreaterThanOrEqual(12);
    expect(new Set(EXERCISES.map((e) => e.id)).size).toBe(EXERCISES.length);
    for (const e of EXERCISES) {
      expect(e.task.length).toBeGreaterThan(20);
      expect(e.hints.length).toBeGreaterThan(0);
    }
    expect(exerciseOf('mask-window3')?.kind).toBe('mask');
    expect(exerciseOf('fix-nan')?.kind).toBe('fix');
  });
  it("every start is a valid state: normalizing it reports nothing", () => {
    for (const e of EXERCISES) {
      const d = decodeHash(`#v=1&ex=${e.id}`);
      expect(d.notices, e.id).toEqual([]);
      expect(d.state.exercise.id).toBe(e.id);
      const f = linkFields(d.state);
      for (const [k, v] of Object.entries(e.start)) expect(f[k], `${e.id} ${k}`).toEqual(v);
    }
  });
});

describe('links', () => {
  it('#v=1&ex=fix-nan opens the broken start: the first token padding under the −∞ fill', () => {
    const s = decodeHash('#v=1&ex=fix-nan').state;
    expect(s.model.padding).toEqual([0]);
    expect(s.model.fill).toBe('neg_inf');
    expect(s.model.tokens[0]).toBe('pad');
    expect(s.model.causal).toBe(true);
  });
  it('a start written back is the short link; the plain default state is unchanged by the starts', () => {
    for (const e of EXERCISES) expect(encodeState(decodeHash(`#v=1&ex=${e.id}`).state)).toBe(`#v=1&ex=${e.id}`);
    const plain = decodeHash('#v=1').state;
    expect(plain.model.padding).toEqual([]);
    expect(plain.model.causal).toBe(true);
    expect(encodeState(plain)).toBe('#v=1');
  });
  it('the mask-window3 link from the docs opens already solved: causal, window 3', () => {
    const s = decodeHash('#v=1&ex=mask-window3&causal=1&win=3').state;
    expect(s.model.causal).toBe(true);
    expect(s.model.window).toBe(3);
    // The start itself is not causal: a student's causal=1 must be written out.
    expect(decodeHash('#v=1&ex=mask-window3').state.model.causal).toBe(false);
  });
  it('what the student changes from the start survives the round trip, including a value equal to the plain default', () => {
    const start = decodeHash('#v=1&ex=fix-nan').state;
    const fixed = normalizeState(withPatch(start, { model: { fill: 'finite' } })).state;
    expect(decodeHash(encodeState(fixed)).state.model.fill).toBe('finite');
    const unpadded = normalizeState(withPatch(start, { model: { padding: [] } })).state; // [] is the plain default
    const h = encodeState(unpadded);
    expect(decodeHash(h).state.model.padding).toEqual([]);
    const overflow = decodeHash('#v=1&ex=fix-overflow').state;
    expect(overflow.lesson.precision).toBe('float16');
    expect(overflow.lesson.maxShift).toBe(false);
    const shifted = normalizeState(withPatch(overflow, { lesson: { maxShift: true } })).state; // true is the plain default
    expect(decodeHash(encodeState(shifted)).state.lesson.maxShift).toBe(true);
    // Leaving the exercise: the state stays, written against the plain defaults.
    const left = normalizeState(withPatch(fixed, { exercise: { id: '' } })).state;
    const back = decodeHash(encodeState(left)).state;
    expect(back.model.padding).toEqual([0]);
    expect(back.exercise.id).toBe('');
  });
  it('hostile ids are dropped with a notice; a teacher predict outside the model is dropped with a notice', () => {
    for (const bad of ['nope', '<script>', 'predict-h0-q1', 'x'.repeat(500), 'mask-window3%ZZ']) {
      const d = decodeHash(`#v=1&ex=${bad}`);
      expect(d.state.exercise.id, bad).toBe('');
      expect(d.notices.length, bad).toBeGreaterThan(0);
    }
    const far = decodeHash('#v=1&ex=predict-h3-q1'); // the hand-built model has 2 heads
    expect(far.state.exercise.id).toBe('');
    expect(far.notices.join(' ')).toMatch(/head 3, row 1, but this model has 2 heads and 11 tokens/);
    const late = decodeHash('#v=1&ex=predict-h1-q11');
    expect(late.state.exercise.id).toBe('');
    const ok = decodeHash(`#v=1&ex=${teacherPredictId(1, 8)}`);
    expect(ok.notices).toEqual([]);
    expect(exerciseOf(ok.state.exercise.id)).toMatchObject({ kind: 'predict', head: 1, query: 8 });
    expect(exerciseStart(ok.state.exercise.id)).toBeNull();
  });
});

/** A result of T tokens, one head, weights given per row. */
function result(tokens: string[], allowed: number[][], weights: number[][], rowSums?: number[], nan = 0): CheckedResult {
  const t = tokens.length;
  return {
    tokens,
    t,
    heads: 1,
    weights: Float32Array.from(weights.flat()),
    rowSums: Float32Array.from(rowSums ?? weights.map((r) => r.reduce((a, b) => a + b, 0))),
    nanRowsPerHead: [nan],
    allowed: Uint8Array.from(allowed.flat()),
  };
}
const causal3 = [
  [1, 0, 0],
  [1, 1, 0],
  [1, 1, 1],
];

describe('checks', () => {
  it('mask: equal cells pass; each differing cell is counted and one is named', () => {
    const e = byId<MaskExercise>('mask-causal');
    const r = result(['a', 'b', 'c'], causal3, causal3);
    expect(checkMask(e, r, Uint8Array.from(causal3.flat()))).toMatchObject({ passed: true, score: 1 });
    const full = result(['a', 'b', 'c'], [[1, 1, 1], [1, 1, 1], [1, 1, 1]], causal3);
    const v = checkMask(e, full, Uint8Array.from(causal3.flat()));
    expect(v.passed).toBe(false);
    expect(v.score).toBeCloseTo(6 / 9);
    expect(v.lines[0]).toMatch(/^3 of 9 cells differ from the target: 3 allowed that should be masked, 0 masked/);
    expect(v.lines[1]).toMatch(/query 0 “a” may see key 1 “b”/);
  });
  it('mask: the target over the tokens marks every "pad" token', () => {
    expect(targetMask({ causal: true, window: 2, padding: 'pad-tokens' }, ['a', 'pad', 'b', 'pad'])).toEqual({
      causal: true,
      window: 2,
      padding: [1, 3],
    });
    expect(targetMask({ causal: false, window: 0, padding: 'none' }, ['pad'])).toEqual({ causal: false, window: 0, padding: [] });
  });
  it('fix: NaN rows, rows off 1 and a changed kept setting each fail; all clear passes with the why', () => {
    const e = byId<FixExercise>('fix-nan');
    const good = result(['a', 'b', 'c'], causal3, causal3.map((r) => r.map((x, j, a) => x / a.reduce((p, q) => p + q, 0))));
    const ok = checkFix(e, good, [], 1e-3);
    expect(ok.passed).toBe(true);
    expect(ok.lines).toContain(e.why);
    const nan = result(['a', 'b', 'c'], causal3, [[NaN, NaN, NaN], [0.5, 0.5, 0], [0.2, 0.3, 0.5]], [NaN, 1, 1], 1);
    const v = checkFix(e, nan, [], 1e-3);
    expect(v.passed).toBe(false);
    expect(v.score).toBeCloseTo(2 / 3);
    expect(v.lines.join(' ')).toMatch(/1 row of weights is NaN\. .*1 of 3 rows do not sum to 1 \(within 0\.001\): head 1, row 0 “a” sums to NaN/);
    const zero = result(['a', 'b'], [[1, 0], [1, 1]], [[0, 0], [0.5, 0.5]]);
    expect(checkFix(e, zero, [], 1e-3).lines.join(' ')).toMatch(/row 0 “a” sums to 0\.0000/);
    const changed = checkFix(e, good, ['pad'], 1e-3);
    expect(changed).toMatchObject({ passed: false, score: 0 });
    expect(changed.lines[0]).toMatch(/Keep “pad” as the exercise started/);
  });
  it('predict: bars shared out over the allowed keys; TV distance = half the sum of the gaps; 0.25 passes', () => {
    const e: PredictExercise = { ...byId<PredictExercise>('predict-previous'), head: 0, query: 1 };
    const r = result(['a', 'b', 'c'], causal3, [[1, 0, 0], [0.1, 0.9, 0], [0.2, 0.3, 0.5]]);
    // A bar on a forbidden key counts for nothing.
    expect(normalizedPrediction(r, 1, [1, 3, 50])).toEqual([0.25, 0.75, 0]);
    expect(normalizedPrediction(r, 1, [0, 0, 5])).toBeNull();
    const v = checkPredict(e, r, [1, 3, 0]); // |0.25 − 0.1| + |0.75 − 0.9| = 0.3 → TV 0.15
    expect(v.passed).toBe(true);
    expect(v.score).toBeCloseTo(0.85, 6);
    expect(v.lines[0]).toMatch(/^Distance 0\.15 /);
    expect(v.lines[1]).toBe('The head puts most weight, 0.90, on key 1 “b”.');
    const far = checkPredict(e, r, [1, 0, 0]); // TV 0.9
    expect(far.passed).toBe(false);
    expect(far.lines[2]).toBe('Your largest gap: key 0 “a”, where you put 1.00 and the head puts 0.10.');
    expect(checkPredict(e, r, [0, 0, 0])).toMatchObject({ passed: false, score: 0 });
  });
});

describe('which line', () => {
  // What each variant changes in the standard computation, written here from the lessons (not
  // read from the page's code lines): RoPE, ALiBi and qk-norm each fill in their own line;
  // sigmoid replaces the normalizer, needs no max shift and masks by a zero weight instead of −∞;
  // masking after the normalizer empties the mask line before it.
  const WANT: Record<string, string[]> = {
    'line-rope': ['rope'],
    'line-alibi': ['alibi'],
    'line-qknorm': ['qknorm'],
    'line-sigmoid': ['mask', 'shift', 'norm'],
    'line-after': ['mask'],
  };
  it('each line exercise: its variant is valid link fields, and the lines it changes are the expected ones', () => {
    const lines = EXERCISES.filter((e): e is LineExercise => e.kind === 'line');
    expect(lines.map((e) => e.id).sort()).toEqual(Object.keys(WANT).sort());
    for (const e of lines) {
      const s = decodeHash(`#v=1&ex=${e.id}`).state;
      const variant = normalizeState(withLinkFields(s, e.variant)).state.lesson;
      const q = lineQuiz(s.model.scale, s.model.fill, variant);
      expect(q.changed, e.id).toEqual(WANT[e.id]);
      expect(q.lines.length).toBe(10);
    }
  });
  it('checkLines: exactly the changed lines pass; extra and missing lines are counted', () => {
    const lines = ['a', 'b', 'c', 'd'].map((id) => ({ id, code: `line ${id}` }));
    expect(checkLines(lines, ['b', 'c'], ['c', 'b'])).toMatchObject({ passed: true, score: 1 });
    const v = checkLines(lines, ['b', 'c'], ['a', 'b']);
    expect(v).toMatchObject({ passed: false, score: 0.5 });
    expect(v.lines).toEqual(['1 marked line stays as it is: line a', '1 line it changes is not marked.']);
    expect(checkLines(lines, ['b'], [])).toMatchObject({ passed: false, lines: ['Mark at least one line.'] });
  });
});

describe('embedding an exercise', () => {
  it('?ex= in the query goes into the hash unless the hash names one', () => {
    expect(exerciseFromQuery('?embed=1&ex=fix-nan', '')).toBe('#v=1&ex=fix-nan');
    expect(exerciseFromQuery('?embed=1&ex=fix-nan', '#v=1&causal=0')).toBe('#v=1&causal=0&ex=fix-nan');
    expect(exerciseFromQuery('?embed=1&ex=fix-nan', '#v=1&ex=mask-causal')).toBe('#v=1&ex=mask-causal');
    expect(exerciseFromQuery('?embed=1', '#v=1')).toBe('#v=1');
    expect(decodeHash(exerciseFromQuery('?ex=%3Cb%3E', '#v=1')).state.exercise.id).toBe('');
  });
  it('an embedded exercise shows the controls unless hide= names them; the galleries stay hidden', () => {
    const cfg = parseEmbed('?embed=1');
    showExerciseControls(cfg, '?embed=1');
    for (const s of ['controls', 'tokens', 'model', 'mask', 'scale'] as const) expect(cfg.hidden.has(s)).toBe(false);
    expect(cfg.hidden.has('presets')).toBe(true);
    expect(cfg.hidden.has('exercises')).toBe(true);
    const hidden = parseEmbed('?embed=1&hide=controls');
    showExerciseControls(hidden, '?embed=1&hide=controls');
    expect(hidden.hidden.has('controls')).toBe(true);
    expect(hidden.hidden.has('mask')).toBe(true);
  });
});
