// Hostile input to every reader (fast-check): random text built from the grammar's own pieces,
// NumPy's real prints with random edits, random bytes, and .npy / .npz files with random edits.
// Each call must return arrays whose data length is the product of their shape, or throw an
// ArrayParseError (with a message): never another exception, never a hang.
import { describe, it, expect } from 'vitest';
import fc from 'fast-check';
import {
  parseArrayText,
  parseCsv,
  readNpy,
  readNpz,
  readArrayFile,
  decodeArrayLink,
  checkWeights,
  checkAttentionInputs,
  checkProjectionInputs,
  compareArrays,
  ArrayParseError,
  ARRAY_LIMITS,
  type NdArray,
} from '../../web/src/attention/arrays';
import { fixtureJson, fixtureBytes } from './arrays-helpers';

const RUNS = 500;
/** Not a timed assertion: room for thousands of runs on a loaded 2-core machine. */
const LIMIT = 120_000;

function valid(a: NdArray): void {
  expect(a.shape.length).toBeGreaterThanOrEqual(1);
  expect(a.shape.length).toBeLessThanOrEqual(ARRAY_LIMITS.maxNdim);
  expect(a.shape.every((d) => Number.isSafeInteger(d) && d > 0)).toBe(true);
  expect(a.data.length).toBe(a.shape.reduce((p, d) => p * d, 1));
  expect(a.data.length).toBeLessThanOrEqual(ARRAY_LIMITS.maxElements);
}

/** Runs f; a result must be valid arrays, a throw must be an ArrayParseError. */
function clean(f: () => NdArray | NdArray[]): void {
  let out: NdArray | NdArray[];
  try {
    out = f();
  } catch (e) {
    if (!(e instanceof ArrayParseError)) throw new Error(`threw ${e instanceof Error ? `${e.name}: ${e.message}` : String(e)}`);
    expect(e.message.length).toBeGreaterThan(0);
    return;
  }
  (Array.isArray(out) ? out : [out]).forEach(valid);
}

const piece = fc.oneof(
  fc.constantFrom('[', '[', ']', ']', ',', ' ', '  ', '\n', '\n\n', '0.', '1.', '-0.5', '0.25', '1e-3', '1.e+00', '.5', 'nan', '-inf', 'inf', 'NaN', 'Infinity', 'True', 'false', '...', '…', 'array(', 'np.array(', ')', 'dtype=float32', ', dtype=float32)', '{', '}', '"W"', "'Q'", ':', '=', ';', 'W', 'x', '\t', '"', "'", '1_0', '0x1f', '+', '-', 'e', '.', '9'.repeat(70), '\u00a0', '\r\n'),
  fc.string({ maxLength: 4 }),
  fc.double().map(String),
);
const grammarText = fc.array(piece, { maxLength: 60 }).map((a) => a.join(''));

const printed = fixtureJson<{ cases: { text: string }[] }>('prints.json').cases.map((c) => c.text);
const edit = fc.tuple(fc.nat(), fc.nat({ max: 3 }), fc.string({ maxLength: 3 }));
const editedPrint = fc.tuple(fc.constantFrom(...printed), fc.array(edit, { minLength: 1, maxLength: 4 })).map(([t, edits]) => {
  let s = t;
  for (const [pos, del, ins] of edits) {
    const p = pos % (s.length + 1);
    s = s.slice(0, p) + ins + s.slice(p + del);
  }
  return s;
});

describe('hostile text', () => {
  it('grammar pieces in random order', () => {
    fc.assert(fc.property(grammarText, (t) => clean(() => parseArrayText(t))), { numRuns: RUNS * 4 });
  }, LIMIT);
  it("NumPy's real prints with random edits", () => {
    fc.assert(fc.property(editedPrint, (t) => clean(() => parseArrayText(t))), { numRuns: RUNS * 2 });
  }, LIMIT);
  it('any string, and any string as CSV', () => {
    fc.assert(fc.property(fc.oneof(fc.string({ maxLength: 200 }), fc.string({ maxLength: 40, unit: 'binary' })), (t) => {
      clean(() => parseArrayText(t));
      clean(() => parseCsv(t));
    }), { numRuns: RUNS });
  }, LIMIT);
  it('deep nesting and long runs stay linear', () => {
    clean(() => parseArrayText('['.repeat(100_000)));
    clean(() => parseArrayText('[' + ']'.repeat(100_000)));
    clean(() => parseArrayText('[' + '1,'.repeat(200_000) + ']'));
    clean(() => parseArrayText('"' + 'a'.repeat(100_000)));
    clean(() => parseArrayText('1'.repeat(100_000)));
    clean(() => parseArrayText(','.repeat(100_000) + '['));
  }, LIMIT);
});

const files = ['w_f4.npy', 'w_f8.npy', 'w_f2.npy', 'cube_fortran_f8.npy', 'cube_v2.npy', 'cube_v3.npy', 'mask_b1.npy', 'qkv.npz', 'qkv_compressed.npz', 'lesson2.npz', 'qkv.json', 'x.csv'].map((n) => [n, fixtureBytes(n)] as const);
const byteEdit = fc.tuple(fc.nat(), fc.integer({ min: 0, max: 255 }));
const editedFile = fc.tuple(fc.constantFrom(...files), fc.array(byteEdit, { minLength: 1, maxLength: 6 }), fc.option(fc.nat())).map(([[name, bytes], edits, cut]) => {
  const b = bytes.slice();
  for (const [pos, v] of edits) b[pos % b.length] = v;
  return [name, cut === null ? b : b.subarray(0, cut % (b.length + 1))] as const;
});

describe('hostile bytes', () => {
  it('real files with random byte edits and cuts, through every reader', () => {
    fc.assert(fc.property(editedFile, ([name, b]) => {
      clean(() => readArrayFile(name, b));
      clean(() => readNpy(b));
      clean(() => readNpz(b));
    }), { numRuns: RUNS * 2 });
  }, LIMIT);
  it('random bytes, also behind the .npy and zip magic', () => {
    const magic = fc.constantFrom(new Uint8Array(0), Uint8Array.of(0x93, 0x4e, 0x55, 0x4d, 0x50, 0x59, 1, 0), Uint8Array.of(0x93, 0x4e, 0x55, 0x4d, 0x50, 0x59, 2, 0), Uint8Array.of(0x50, 0x4b, 3, 4));
    fc.assert(fc.property(magic, fc.uint8Array({ maxLength: 300 }), fc.constantFrom('a.npy', 'a.npz', 'a.json', 'a.csv', ''), (m, rest, name) => {
      const b = new Uint8Array(m.length + rest.length);
      b.set(m);
      b.set(rest, m.length);
      clean(() => readArrayFile(name, b));
      clean(() => readNpy(b));
      clean(() => readNpz(b));
    }), { numRuns: RUNS * 2 });
  }, LIMIT);
});

describe('hostile link values', () => {
  const linkPiece = fc.oneof(fc.constantFrom('1', '2', 'f4', 'f8', '.', '.', 'x', '6x6', '0', '9999999', 'b', 'z', 'AAAA', 'AACAPw', '-_', '=', '!'), fc.string({ maxLength: 5 }));
  it('random strings from the format’s pieces', () => {
    fc.assert(fc.property(fc.array(linkPiece, { maxLength: 12 }).map((a) => a.join('')), (s) => clean(() => decodeArrayLink(s))), { numRuns: RUNS * 2 });
  }, LIMIT);
  it('valid payload shapes with random base64 (compressed and not)', () => {
    fc.assert(fc.property(fc.constantFrom('1.f4.2x2.b.', '1.f4.2x2.z.', '1.f8.3.z.', '1.f4.64x64.z.'), fc.stringMatching(/^[A-Za-z0-9_-]{0,80}$/), (head, p) => clean(() => decodeArrayLink(head + p))), { numRuns: RUNS });
  }, LIMIT);
});

describe('role checks on random arrays', () => {
  const arr = (shape: number[]) => fc.array(fc.oneof(fc.double({ min: -2, max: 2 }), fc.constantFrom(NaN, Infinity, -Infinity, 0, 1)), { minLength: shape.reduce((p, d) => p * d, 1), maxLength: shape.reduce((p, d) => p * d, 1) }).map((xs): NdArray => ({ shape, data: Float64Array.from(xs), source: 'printed', printStep: 0.01 }));
  const anyShape = fc.array(fc.integer({ min: 1, max: 4 }), { minLength: 1, maxLength: 4 });
  const anyArr = anyShape.chain(arr);
  it('throw ArrayParseError or report; never anything else', () => {
    fc.assert(fc.property(anyArr, anyArr, anyArr, fc.option(anyArr), anyArr, (a, b, c, m, d) => {
      const wrap = (f: () => unknown) => clean(() => (f(), [a]));
      wrap(() => checkWeights(a));
      wrap(() => checkAttentionInputs({ Q: a, K: b, V: c, mask: m }));
      wrap(() => checkProjectionInputs({ X: a, W_q: b, W_k: c, W_v: d }, 1 + (a.shape[0] % 3)));
      wrap(() => compareArrays(a, b));
    }), { numRuns: RUNS });
  }, LIMIT);
});
