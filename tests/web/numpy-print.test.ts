// The page's NumPy-style printing (shared/numpy-print.ts) against NumPy's own print() of the same
// arrays (tests/fixtures/numpy_print.json, from tests/oracle/gen_numpy_print.py): every character.
import { describe, expect, it } from 'vitest';
import fixtureText from '../fixtures/numpy_print.json?raw';
import { numpyStr, type PrintDtype } from '../../web/src/shared/numpy-print';

interface Case {
  name: string;
  dtype: PrintDtype;
  shape: number[];
  values: string[];
  text: string;
}
const fixture = JSON.parse(fixtureText) as {
  numpy: string;
  cases: Case[];
};

describe(`numpyStr writes what NumPy ${fixture.numpy}'s print() writes`, () => {
  it('has cases in both dtypes, with scientific, summarized and wrapped ones', () => {
    expect(fixture.cases.length).toBeGreaterThan(60);
    expect(fixture.cases.some((c) => c.text.includes('e-'))).toBe(true);
    expect(fixture.cases.some((c) => c.text.includes('...'))).toBe(true);
  });
  for (const c of fixture.cases)
    it(c.name, () => {
      const values = c.values.map(Number);
      const data = c.dtype === 'float32' ? Float32Array.from(values) : Float64Array.from(values);
      const text =
        c.shape.length === 1 ? numpyStr(data, 1, c.shape[0], c.dtype, true) : numpyStr(data, c.shape[0], c.shape[1], c.dtype);
      expect(text).toBe(c.text);
    });
});
