// The paste parser against what NumPy 1.24 really prints (tests/oracle/gen_array_prints.py writes
// tests/web/fixtures/arrays/prints.json): every value within the printed precision of NumPy's
// array, shapes exact, summarised prints refused with the fix named; then the hand-written cases
// for names, JSON, grids and each error's wording and place.
import { describe, it, expect } from 'vitest';
import { parseArrayText, parseOneArray, parseCsv, ArrayParseError, SUMMARISED_FIX, ARRAY_LIMITS } from '../../web/src/attention/arrays';
import { fixtureJson, firstMismatch } from './arrays-helpers';

interface OkCase { name: string; text: string; expect: 'ok'; shape: number[]; f32: boolean; values: (number | string)[]; atol: number; rtol: number }
interface ManyCase { name: string; text: string; expect: 'ok-many'; arrays: { name: string; shape: number[]; values: (number | string)[] }[] }
interface BadCase { name: string; text: string; expect: 'error'; includes: string }
const { cases } = fixtureJson<{ cases: (OkCase | ManyCase | BadCase)[] }>('prints.json');

function errorOf(f: () => unknown): ArrayParseError {
  try {
    f();
  } catch (e) {
    if (e instanceof ArrayParseError) return e;
    throw new Error(`threw a non-ArrayParseError: ${String(e)}`);
  }
  throw new Error('did not throw');
}

describe('what NumPy printed (fixtures from NumPy 1.24)', () => {
  it('has the cases', () => expect(cases.length).toBeGreaterThan(25));
  for (const c of cases) {
    it(c.name, () => {
      if (c.expect === 'error') {
        const e = errorOf(() => parseArrayText(c.text));
        expect(e.message).toContain(c.includes);
        return;
      }
      if (c.expect === 'ok-many') {
        const got = parseArrayText(c.text);
        expect(got.map((a) => a.name)).toEqual(c.arrays.map((a) => a.name));
        got.forEach((a, i) => {
          expect(a.shape).toEqual(c.arrays[i].shape);
          expect(firstMismatch(a.data, c.arrays[i].values, 0, 0)).toBe(-1);
        });
        return;
      }
      const a = parseOneArray(c.text);
      expect(a.shape).toEqual(c.shape);
      expect(a.data instanceof Float32Array).toBe(c.f32);
      expect(a.source).toBe('printed');
      const bad = firstMismatch(a.data, c.values, c.atol, c.rtol);
      expect(bad, bad >= 0 ? `value ${bad}: got ${a.data[bad]}, NumPy ${c.values[bad]}` : '').toBe(-1);
      // The printed step covers the real rounding: the values are within half of it.
      const step = a.printStep;
      expect(firstMismatch(a.data, c.values, step / 2 + 1e-15, c.f32 ? 2 ** -24 : 1e-15)).toBe(-1);
    });
  }
});

describe('names, JSON, grids', () => {
  it('reads W = …, W: … and print("W", W) names', () => {
    expect(parseOneArray('W = [[1, 0], [0.5, 0.5]]').name).toBe('W');
    expect(parseOneArray('W: [[1, 0], [0.5, 0.5]]').name).toBe('W');
    expect(parseOneArray('W [[1. 0. ]\n [0.5 0.5]]').name).toBe('W');
  });
  it('reads several named arrays in one paste', () => {
    const got = parseArrayText('Q = [[1, 2]]\nK = [[3, 4]]\nV = array([[5., 6.]], dtype=float32)');
    expect(got.map((a) => [a.name, a.shape, Array.from(a.data)])).toEqual([
      ['Q', [1, 2], [1, 2]],
      ['K', [1, 2], [3, 4]],
      ['V', [1, 2], [5, 6]],
    ]);
    expect(got[2].data).toBeInstanceOf(Float32Array);
  });
  it("reads a Python dict of arrays {'W': array(…)}", () => {
    const [a] = parseArrayText("{'W': array([[0.25, 0.75],\n       [1.  , 0.  ]])}");
    expect(a.name).toBe('W');
    expect(Array.from(a.data)).toEqual([0.25, 0.75, 1, 0]);
  });
  it('records the printed step: decimals, and the exponent in scientific notation', () => {
    expect(parseOneArray('[[0.47 0.53]]').printStep).toBeCloseTo(0.01, 15);
    expect(parseOneArray('[[1. 0.]]').printStep).toBe(1);
    expect(parseOneArray('[1.234e-03 5.000e-01]').printStep).toBeCloseTo(1e-4, 18); // the largest: 5.000e-01
    expect(parseOneArray('[1.234e-03 5.000e-03]').printStep).toBeCloseTo(1e-6, 20);
    expect(parseOneArray('[nan inf]').printStep).toBe(0);
  });
  it('reads a bare grid: CSV, spaces, tabs; blank lines make blocks', () => {
    expect(parseOneArray('1,2,3\n4,5,6\n').shape).toEqual([2, 3]);
    expect(parseOneArray('1 2\t3\n4 5 6').shape).toEqual([2, 3]);
    expect(parseOneArray('1 2 3').shape).toEqual([3]);
    const cube = parseOneArray('1 2\n3 4\n\n5 6\n7 8\n');
    expect(cube.shape).toEqual([2, 2, 2]);
    expect(Array.from(cube.data)).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
    expect(parseCsv('a,b\n1,2\n3,4').shape).toEqual([2, 2]);
  });
  it("reads NumPy 2's scalar reprs in lists: [np.float64(0.5), np.True_]", () => {
    const a = parseOneArray('[[np.float64(0.25), np.float64(0.75)], [np.float32(1.0), np.int64(0)]]');
    expect(Array.from(a.data)).toEqual([0.25, 0.75, 1, 0]);
    expect(Array.from(parseOneArray('[np.True_, np.False_, np.bool(True)]').data)).toEqual([1, 0, 1]);
    expect(() => parseOneArray('[np.float64(abc)]')).toThrow('expected a number inside np.float64( )');
    expect(() => parseOneArray('[np.evil(1)]')).toThrow('found “np.evil”');
  });
  it('reads numbers in every spelling NumPy and Python write', () => {
    const a = parseOneArray('[-0., 1., .5, 1.e-03, 2E+2, NaN, -inf, Infinity, True, False, +3]');
    expect(Array.from(a.data)).toEqual([-0, 1, 0.5, 0.001, 200, NaN, -Infinity, Infinity, 1, 0, 3]);
  });
});

describe('errors say where and what was expected', () => {
  const cases: [string, string, string][] = [
    ['[[0.1 0.2 0.3]\n [0.4 0.5]]', 'line 2, column 10', 'row 2 has 2 values, but the ones before it have 3'],
    ['[[[1 2]\n  [3 4]]\n\n [[5 6]\n  [7 8 9]]]', 'line 5', 'row 2 of block 2 has 3 values'],
    ['[[1, 2], 3]', 'line 1, column 10', 'nesting is uneven'],
    ['[1, [2, 3]]', 'line 1, column 5', 'expected a number'],
    ['[[0.1 abc]]', 'line 1, column 7', 'found “abc”'],
    ['[[0.1, , 0.2]]', 'line 1, column 8', 'two commas in a row'],
    ['[[0.1 0.2]\n [0.3 0.4]', 'line 2', 'never closed'],
    ['[]', 'line 1, column 2', 'empty'],
    ['[[1 2] [3 4]] ]', 'line 1, column 15', 'expected “[”'],
    ['[[0.1 0.2 ... 0.9]]', 'line 1, column 11', 'threshold='],
    ['[[[[[1]]]]]', 'line 1, column 5', 'more than 4 levels'],
    ['array([[1, 2]], dtype)', 'line 1', 'expected “=” after dtype'],
    ['1,2\n3,x', 'line 2', 'field 2 “x” is not a number'],
    ['1,2\n3', 'line 2', 'this row has 1 values, but the rows before it have 2'],
    ['[[1 2]]  \u0007', 'line 1, column 10', 'unexpected character'],
    ['[1' + '0'.repeat(70) + ']', 'line 1, column 2', 'longer than 64'],
  ];
  for (const [text, where, what] of cases) {
    it(`${JSON.stringify(text.slice(0, 30))} → ${what}`, () => {
      const e = errorOf(() => parseArrayText(text));
      expect(e.message).toContain(what);
      expect(e.message).toContain(where);
    });
  }
  it('names the fix for a summarised print', () => {
    expect(SUMMARISED_FIX).toContain('np.set_printoptions(threshold=sys.maxsize)');
    expect(errorOf(() => parseArrayText('[0. 1. … 9.]')).message).toContain('threshold');
  });
  it('refuses too much text before reading it, and too many numbers while reading', () => {
    expect(errorOf(() => parseArrayText(' '.repeat(ARRAY_LIMITS.maxTextLength + 1))).message).toContain('limit');
    const many = '[' + '0 '.repeat(ARRAY_LIMITS.maxElements + 1) + ']';
    expect(errorOf(() => parseArrayText(many)).message).toContain('more than 1,048,576 numbers');
    const grid = '0\n'.repeat(ARRAY_LIMITS.maxElements + 1);
    expect(errorOf(() => parseArrayText(grid)).message).toContain('more than 1,048,576 numbers');
  }, 60_000);
  it('reads a 1,000 × 1,000 print in linear time (no catastrophic regex)', () => {
    const row = '[' + Array.from({ length: 1000 }, (_, j) => (j / 1000).toFixed(8)).join(' ') + ']';
    const text = '[' + Array.from({ length: 1000 }, () => row).join('\n ') + ']';
    const a = parseOneArray(text);
    expect(a.shape).toEqual([1000, 1000]);
    expect(a.data[999_999]).toBeCloseTo(0.999, 12);
  }, 60_000);
});
