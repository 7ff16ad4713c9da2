// Shared by the arrays*.test.ts files: the NumPy fixtures (tests/oracle/gen_array_prints.py).
// node:fs through a dynamic import, as tests/web/attn-split.test.ts does: the page's tsconfig has
// no Node types.
interface Fs {
  readFileSync(p: URL): Uint8Array;
}
const fs = (await import(/* @vite-ignore */ 'node:' + 'fs')) as Fs;

export const FIXTURES = new URL('./fixtures/arrays/', import.meta.url);

export function fixtureBytes(name: string): Uint8Array {
  return new Uint8Array(fs.readFileSync(new URL(name, FIXTURES)));
}
export function fixtureJson<T>(name: string): T {
  return JSON.parse(new TextDecoder().decode(fixtureBytes(name))) as T;
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
