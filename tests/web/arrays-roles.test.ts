// Role checks on NumPy's own arrays (fixtures) and on hand-made wrong ones: weights rows sum to 1
// within the printed rounding, causal shape, NaN / zero rows; Q/K/V and X/W_q/W_k/W_v shapes with
// errors naming the array and the dimension; the comparison with a reference W.
import { describe, it, expect } from 'vitest';
import { parseOneArray, readArrayFile, checkWeights, checkAttentionInputs, checkProjectionInputs, compareArrays, ArrayParseError, type NdArray } from '../../web/src/attention/arrays';
import { fixtureJson, fixtureBytes } from './arrays-helpers';

const prints = fixtureJson<{ cases: { name: string; text: string }[] }>('prints.json').cases;
const text = (name: string) => prints.find((c) => c.name === name)!.text;
const file = (name: string) => readArrayFile(name, fixtureBytes(name));
const arr = (shape: number[], xs: number[], printStep = 0): NdArray => ({ shape, data: Float64Array.from(xs), source: printStep ? 'printed' : 'exact', printStep });

function message(f: () => unknown): string {
  try {
    f();
  } catch (e) {
    if (e instanceof ArrayParseError) return e.message;
    throw e;
  }
  throw new Error('did not throw');
}

describe('weights W', () => {
  it("lesson 2's W as print(np.round(W, 2)): rows sum to 1 within 6 × 0.005, causal", () => {
    const w = parseOneArray(text('lesson 2 W, print(np.round(W, 2))'));
    const c = checkWeights(w);
    expect([c.heads, c.tq, c.tk]).toEqual([1, 6, 6]);
    expect(c.tolerance).toBeCloseTo(6 * 0.005, 5);
    expect(c.badRows).toBe(0);
    expect(c.causal).toBe(true);
    expect(c.findings).toEqual([]);
  });
  it('the same from the exact .npy: tolerance is float32 rounding only', () => {
    const c = checkWeights(file('w_f4.npy')[0]);
    expect(c.tolerance).toBeLessThan(1e-5);
    expect(c.badRows).toBe(0);
    expect(c.causal).toBe(true);
  });
  it('from a float16 .npy: the tolerance allows for half precision', () => {
    const w = file('w_f2.npy')[0];
    expect(w.printStep).toBe(2 ** -10);
    const c = checkWeights(w);
    expect([c.badRows, c.causal]).toEqual([0, true]);
    expect(c.maxRowError).toBeGreaterThan(6 * 2 ** -22); // more than float32 slack alone would allow
  });
  it('two heads (3-D), and a full (not causal) W', () => {
    const c = checkWeights(parseOneArray(text('two heads, repr (3-D)')));
    expect([c.heads, c.tq, c.tk, c.badRows, c.causal]).toEqual([2, 6, 6, 0, true]);
    expect(checkWeights(arr([2, 2], [0.5, 0.5, 0.25, 0.75])).causal).toBe(false);
  });
  it('rows off by more than the rounding are found and named; NaN and zero rows counted', () => {
    const c = checkWeights(arr([4, 3], [1, 0, 0, 0.5, 0.4, 0, NaN, NaN, NaN, 0, 0, 0], 0.01));
    expect(c.badRows).toBe(1);
    expect(c.badRowList).toEqual([{ head: 0, row: 1, sum: 0.9 }]);
    expect(c.nanRows).toBe(1);
    expect(c.zeroRows).toBe(1);
    // Rows count from 0, as NumPy indexes them and as the page labels positions.
    expect(c.findings.join(' ')).toContain('row 1 (W[1]) sums to 0.9');
    expect(checkWeights(arr([2, 2, 2], [1, 0, 0.5, 0.5, 1, 0, 0.5, 0.6])).findings.join(' ')).toContain('row 1 of head 2 (W[1, 1]) sums to 1.1');
    // A NaN in a given W is the student's: its cell is named, and no mask or fill is blamed.
    expect(c.nanAt).toEqual([2, 0]);
    const nan = c.findings.find((f) => f.includes('NaN'))!;
    expect(nan).toContain('first at W[2, 0]');
    expect(nan).toContain('masks and fills nothing');
    // Printed to 2 decimals: each row may be off by 3 × 0.005 = 0.015.
    expect(c.tolerance).toBeCloseTo(0.015, 5);
  });
  it('a row that printed rounding explains is not flagged', () => {
    // np.round to 1 decimal: 0.33 0.33 0.33 prints as 0.3 0.3 0.3 (sum 0.9, within 3 × 0.05).
    expect(checkWeights(parseOneArray('[[0.3 0.3 0.3]\n [1.  0.  0. ]]')).badRows).toBe(0);
    expect(checkWeights(parseOneArray('[[0.30 0.30 0.30]\n [1.00 0.00 0.00]]')).badRows).toBe(1);
  });
  it('refuses the wrong shape and infinities, naming the place', () => {
    expect(message(() => checkWeights(arr([6], [1, 0, 0, 0, 0, 0])))).toContain('W has shape (6,); weights are 2-D');
    expect(message(() => checkWeights(arr([2, 2], [1, 0, Infinity, 0])))).toContain('W[1, 0] is inf');
  });
  it('negative entries are reported', () => {
    expect(checkWeights(arr([1, 2], [1.5, -0.5])).findings.join(' ')).toContain('negative');
  });
});

describe('Q, K, V (+ mask)', () => {
  const [Q, K, V, mask] = file('qkv.npz');
  it("lesson 2's Q, K, V and causal mask from np.savez", () => {
    const r = checkAttentionInputs({ Q, K, V, mask });
    expect(r.dims).toEqual({ heads: 1, kvHeads: 1, tq: 6, tk: 6, dk: 4, dv: 4, mask: 'custom' });
    expect(r.warnings).toEqual([]);
  });
  const q = (shape: number[]) => arr(shape, new Array(shape.reduce((p, d) => p * d, 1)).fill(0.5));
  const cases: [string, () => unknown, string][] = [
    ['d_k', () => checkAttentionInputs({ Q: q([6, 4]), K: q([6, 5]), V: q([6, 4]) }), 'K has 5 columns but Q has 4 (d_k must match'],
    ['T_k', () => checkAttentionInputs({ Q: q([6, 4]), K: q([6, 4]), V: q([5, 4]) }), 'V has 5 rows but K has 6 (T_k must match'],
    ['ndim', () => checkAttentionInputs({ Q: q([6, 4]), K: q([1, 6, 4]), V: q([6, 4]) }), 'K is 3-D but Q is 2-D'],
    ['heads', () => checkAttentionInputs({ Q: q([3, 6, 4]), K: q([2, 6, 4]), V: q([2, 6, 4]) }), 'Q has 3 heads, which 2 K/V heads do not divide'],
    ['1-D Q', () => checkAttentionInputs({ Q: q([4]), K: q([6, 4]), V: q([6, 4]) }), 'Q has shape (4,)'],
    ['mask rows', () => checkAttentionInputs({ Q: q([6, 4]), K: q([6, 4]), V: q([6, 4]), mask: q([5, 6]) }), 'mask has 5 rows but Q has 6'],
    ['mask values', () => checkAttentionInputs({ Q: q([6, 4]), K: q([6, 4]), V: q([6, 4]), mask: q([6, 6]) }), 'mask holds 0.5'],
  ];
  for (const [what, f, msg] of cases) it(`names the array and the dimension: ${what}`, () => expect(message(f)).toContain(msg));
  it('grouped-query heads and a 1-D padding mask are accepted; NaN is a warning', () => {
    const r = checkAttentionInputs({ Q: q([4, 6, 4]), K: q([2, 6, 4]), V: q([2, 6, 3]), mask: arr([6], [1, 1, 1, 1, 0, 0]) });
    expect(r.dims).toMatchObject({ heads: 4, kvHeads: 2, dv: 3, mask: 'padding' });
    const n = checkAttentionInputs({ Q: arr([1, 2], [NaN, 1]), K: arr([1, 2], [1, 1]), V: arr([1, 1], [1]) });
    expect(n.warnings[0]).toContain('Q holds 1 NaN');
  });
  it("warns when the mask looks like lesson 2's np.triu(…, k=1) (True = forbidden)", () => {
    const triu = arr([3, 3], [0, 1, 1, 0, 0, 1, 0, 0, 0]);
    const r = checkAttentionInputs({ Q: q([3, 2]), K: q([3, 2]), V: q([3, 2]), mask: triu });
    expect(r.warnings.join(' ')).toContain('~mask');
    expect(r.warnings.join(' ')).toContain('allows only later keys');
    // Row 2 (the last) allows nothing: named, counting from 0.
    expect(r.warnings.join(' ')).toContain('the mask allows no key in row 2 (counting from 0)');
    // ~np.eye forbids every query its own position: inverted too. np.tril is not.
    const notEye = checkAttentionInputs({ Q: q([3, 2]), K: q([3, 2]), V: q([3, 2]), mask: arr([3, 3], [0, 1, 1, 1, 0, 1, 1, 1, 0]) });
    expect(notEye.warnings.join(' ')).toContain('the diagonal is all 0');
    expect(checkAttentionInputs({ Q: q([3, 2]), K: q([3, 2]), V: q([3, 2]), mask: arr([3, 3], [1, 0, 0, 1, 1, 0, 1, 1, 1]) }).warnings).toEqual([]);
  });
  it('a NaN warning names the first cell and what it reaches', () => {
    const k = arr([3, 2], [1, 1, 1, 1, 1, NaN]);
    expect(checkAttentionInputs({ Q: q([3, 2]), K: k, V: q([3, 2]) }).warnings[0]).toBe('K holds 1 NaN or infinite value, first at K[2, 1] (counting from 0): it makes every row that may attend to that key NaN');
  });
});

describe("lesson 2's X, W_q, W_k, W_v", () => {
  const [X, W_q, W_k, W_v] = file('lesson2.npz');
  it('from np.savez_compressed', () => {
    expect(checkProjectionInputs({ X, W_q, W_k, W_v }).dims).toEqual({ t: 6, dModel: 8, heads: 1, dk: 4, dv: 4 });
    expect(checkProjectionInputs({ X, W_q, W_k, W_v }, 2).dims).toEqual({ t: 6, dModel: 8, heads: 2, dk: 2, dv: 2 });
  });
  it('names the array and the dimension', () => {
    const short = arr([7, 4], new Array(28).fill(0));
    expect(message(() => checkProjectionInputs({ X, W_q: short, W_k, W_v }))).toContain('W_q has 7 rows but X has 8 columns (d_model must match');
    const wide = arr([8, 5], new Array(40).fill(0));
    expect(message(() => checkProjectionInputs({ X, W_q, W_k: wide, W_v }))).toContain('W_k has 5 columns but W_q has 4 (d_k must match');
    expect(message(() => checkProjectionInputs({ X, W_q, W_k, W_v }, 3))).toContain('do not split into 3 heads');
  });
});

describe('compare with the playground', () => {
  it('np.round(W, 2) matches the exact W to 0.005, the rounding it was printed with', () => {
    const mine = parseOneArray(text('lesson 2 W, print(np.round(W, 2))'));
    const ref = file('w_f8.npy')[0];
    const c = compareArrays(mine, ref);
    expect(c.matches).toBe(true);
    expect(c.maxAbs).toBeLessThanOrEqual(0.005);
    expect(c.maxAbs).toBeGreaterThan(0.0005);
    expect(c.tolerance).toBeCloseTo(0.005, 4);
    // A changed entry is found, with its place.
    const wrong = { ...mine, data: Float64Array.from(mine.data) };
    wrong.data[6 * 3 + 1] += 0.02;
    const d = compareArrays(wrong, ref);
    expect(d.matches).toBe(false);
    expect(d.at).toEqual([3, 1]);
  });
  it('shape mismatch and NaN mismatch', () => {
    expect(message(() => compareArrays(arr([2, 2], [1, 0, 0, 1]), { shape: [3, 3], data: [] }))).toContain('(2, 2) but the playground');
    const c = compareArrays(arr([2], [NaN, 1]), { shape: [2], data: [0, 1] });
    expect([c.matches, c.nanMismatches]).toEqual([false, 1]);
  });
});
