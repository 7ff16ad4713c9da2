// Shared by the arrays*.test.ts files: the NumPy fixtures (tests/oracle/gen_array_prints.py).
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const FIXTURES = path.join(path.dirname(fileURLToPath(import.meta.url)), 'fixtures', 'arrays');

export function fixtureJson<T>(name: string): T {
  return JSON.parse(fs.readFileSync(path.join(FIXTURES, name), 'utf8')) as T;
}
export function fixtureBytes(name: string): Uint8Array {
  return new Uint8Array(fs.readFileSync(path.join(FIXTURES, name)));
}

/** The fixtures' numbers: plain JSON numbers, non-finite ones as strings. */
export function num(x: number | string): number {
  if (typeof x === 'number') return x;
  if (x === 'nan') return NaN;
  if (x === 'inf') return Infinity;
  if (x === '-inf') return -Infinity;
  throw new Error(`bad fixture number ${x}`);
}

/** Index of the first value that differs by more than atol + rtol·|expected| (NaN matches NaN,
 *  infinities match exactly), or -1. */
export function firstMismatch(got: ArrayLike<number>, want: (number | string)[], atol: number, rtol: number): number {
  if (got.length !== want.length) return -2;
  for (let k = 0; k < want.length; k++) {
    const w = num(want[k]);
    const g = got[k];
    if (Number.isNaN(w) || !Number.isFinite(w)) {
      if (!Object.is(g, w) && !(Number.isNaN(w) && Number.isNaN(g))) return k;
      continue;
    }
    if (!(Math.abs(g - w) <= atol + rtol * Math.abs(w))) return k;
  }
  return -1;
}
