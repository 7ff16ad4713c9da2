// Arrays in share links: the strings the notebook helper (Python) writes decode here to the same
// float32 bits NumPy held (tests/web/fixtures/arrays/links.json, from
// tests/oracle/gen_array_prints.py); TS writes Python's uncompressed strings byte for byte;
// encode∘decode is exact (fast-check); hostile strings give a clear ArrayParseError.
import { describe, it, expect } from 'vitest';
import fc from 'fast-check';
import {
  encodeArrayLink,
  decodeArrayLink,
  encodeArrayFields,
  decodeArrayFields,
  readArraysMessage,
  readyMessage,
  receivedMessage,
  base64urlEncode,
  base64urlDecode,
  ArrayParseError,
  ARRAY_LINK_MAX_CHARS,
  ARRAY_LINK_KEYS,
  ARRAY_MESSAGE_TYPES,
  ARRAY_MESSAGE_VERSION,
} from '../../web/src/attention/arrays';
import { fixtureJson } from './arrays-helpers';

interface LinkCase { name: string; shape: number[]; f4hex: string; link: string; linkRaw: string }
const { cases } = fixtureJson<{ cases: LinkCase[] }>('links.json');

function hex(a: Float32Array): string {
  return Array.from(new Uint8Array(a.buffer, a.byteOffset, a.byteLength), (b) => b.toString(16).padStart(2, '0')).join('');
}
function errorOf(f: () => unknown): ArrayParseError {
  try {
    f();
  } catch (e) {
    if (e instanceof ArrayParseError) return e;
    throw new Error(`threw a non-ArrayParseError: ${String(e)}`);
  }
  throw new Error('did not throw');
}

describe('links written by the Python helper', () => {
  it('has the cases, some compressed', () => {
    expect(cases.length).toBeGreaterThanOrEqual(7);
    expect(cases.some((c) => c.link.split('.')[3] === 'z')).toBe(true);
  });
  for (const c of cases) {
    it(`${c.name}: same float32 bits as NumPy, both encodings`, () => {
      for (const s of [c.link, c.linkRaw]) {
        const a = decodeArrayLink(s);
        expect(a.shape).toEqual(c.shape);
        expect(a.data).toBeInstanceOf(Float32Array);
        expect(hex(a.data as Float32Array)).toBe(c.f4hex);
      }
      expect(encodeArrayLink(decodeArrayLink(c.link), { compress: false })).toBe(c.linkRaw);
    });
  }
});

describe('encode → decode is exact', () => {
  const f32 = fc.float({ noDefaultInfinity: false, noNaN: false });
  const shapeArb = fc.array(fc.integer({ min: 1, max: 7 }), { minLength: 1, maxLength: 4 });
  it('float32 arrays of any shape, any values (NaN payloads aside), with and without deflate', () => {
    fc.assert(
      fc.property(shapeArb, fc.boolean(), fc.infiniteStream(f32), (shape, compress, values) => {
        const n = shape.reduce((p, d) => p * d, 1);
        const data = new Float32Array(n);
        const it = values[Symbol.iterator]();
        for (let k = 0; k < n; k++) data[k] = it.next().value as number;
        const s = encodeArrayLink({ shape, data }, { compress });
        expect(s).toMatch(/^1\.f4\.[0-9x]+\.[bz]\.[A-Za-z0-9_-]*$/);
        const back = decodeArrayLink(s);
        expect(back.shape).toEqual(shape);
        for (let k = 0; k < n; k++) expect(Object.is(back.data[k], data[k]) || (Number.isNaN(back.data[k]) && Number.isNaN(data[k]))).toBe(true);
      }),
      { numRuns: 300 },
    );
  });
  it('float64 with dtype f8', () => {
    fc.assert(
      fc.property(fc.array(fc.double(), { minLength: 1, maxLength: 40 }), (xs) => {
        const back = decodeArrayLink(encodeArrayLink({ shape: [xs.length], data: Float64Array.from(xs) }, { dtype: 'f8' }));
        expect(back.data).toBeInstanceOf(Float64Array);
        xs.forEach((x, k) => expect(Object.is(back.data[k], x) || (Number.isNaN(x) && Number.isNaN(back.data[k]))).toBe(true));
      }),
      { numRuns: 200 },
    );
  });
  it('base64url round-trips any bytes and refuses what it did not write', () => {
    fc.assert(fc.property(fc.uint8Array({ maxLength: 64 }), (b) => {
      expect(base64urlDecode(base64urlEncode(b))).toEqual(b);
    }), { numRuns: 300 });
    expect(errorOf(() => base64urlDecode('AB')).message).toContain('bits set past the end'); // 'B' sets a dropped bit
    expect(errorOf(() => base64urlDecode('A')).message).toContain('no byte string');
    expect(errorOf(() => base64urlDecode('AA+A')).message).toContain('not base64url');
  });
  it('a 128 × 128 float32 W fits in the link limit uncompressed', () => {
    const s = encodeArrayLink({ shape: [128, 128], data: new Float32Array(128 * 128).map((_, k) => Math.sin(k)) }, { compress: false });
    expect(s.length).toBeLessThanOrEqual(ARRAY_LINK_MAX_CHARS);
  });
});

describe('hostile link values', () => {
  const good = encodeArrayLink({ shape: [2, 2], data: Float32Array.of(1, 0, 0.5, 0.5) }, { compress: false });
  const payload = good.split('.')[4];
  const cases: [string, string, string][] = [
    ['wrong version', `2.f4.2x2.b.${payload}`, 'version “2” is unknown'],
    ['no version', `f4.2x2.b.${payload}`, 'expected 5 parts'],
    ['unknown dtype', `1.i4.2x2.b.${payload}`, 'dtype “i4”'],
    ['bad base64', `1.f4.2x2.b.${payload.slice(0, -2)}!!`, 'not base64url'],
    ['length mismatch', `1.f4.2x3.b.${payload}`, 'needs 24'],
    ['huge shape', `1.f4.9999999x9999999.b.${payload}`, 'limit'],
    ['zero in the shape', `1.f4.2x0.b.${payload}`, 'not 1 to 4 positive sizes'],
    ['five dimensions', `1.f4.1x1x1x1x4.b.${payload}`, 'not 1 to 4'],
    ['unknown encoding', `1.f4.2x2.q.${payload}`, 'encoding “q”'],
    ['corrupt deflate', `1.f4.2x2.z.${payload}`, 'corrupt'],
    ['deflate that unpacks too long', encodeArrayLink({ shape: [64], data: new Float32Array(64) }).replace('.64.', '.32.'), 'more than 128'],
    ['over the link limit', `1.f4.2x2.b.${'A'.repeat(ARRAY_LINK_MAX_CHARS)}`, 'limit'],
    ['empty', '', 'expected 5 parts'],
  ];
  for (const [what, s, msg] of cases) it(what, () => expect(errorOf(() => decodeArrayLink(s, 'uw')).message).toContain(msg));
  it('names the link key', () => expect(errorOf(() => decodeArrayLink('x', 'uq')).message).toContain('“uq”'));
});

describe('link fields and the postMessage protocol', () => {
  const W = { shape: [2, 2], data: Float32Array.of(1, 0, 0.5, 0.5) };
  it('encodeArrayFields → decodeArrayFields, by role and link key', () => {
    const enc = encodeArrayFields({ weights: W, q: { shape: [2, 3], data: new Float32Array(6).fill(0.25) } });
    expect(enc.fields.map(([k]) => k)).toEqual(['uw', 'uq']);
    expect(enc.fits).toBe(true);
    const dec = decodeArrayFields(new Map(enc.fields));
    expect(dec.errors).toEqual([]);
    expect(Array.from(dec.arrays.weights!.data)).toEqual([1, 0, 0.5, 0.5]);
    expect(dec.arrays.q!.shape).toEqual([2, 3]);
    expect(ARRAY_LINK_KEYS).toEqual({ weights: 'uw', q: 'uq', k: 'uk', v: 'uv', mask: 'um', x: 'ux', wq: 'uwq', wk: 'uwk', wv: 'uwv' });
  });
  it('a bad value is left out and named; the others are kept', () => {
    const dec = decodeArrayFields({ uw: encodeArrayLink(W), uk: '1.f4.2x2.b.AAAA', uv: 42 });
    expect(Object.keys(dec.arrays)).toEqual(['weights']);
    expect(dec.errors.join(' | ')).toContain('“uk”');
    expect(dec.errors.join(' | ')).toContain('“uv”');
  });
  it('readArraysMessage: only its own type, version and id; values decoded with the message limit', () => {
    const big = encodeArrayLink({ shape: [300, 300], data: new Float32Array(90_000).map((_, k) => Math.cos(k)) }, { compress: false });
    expect(big.length).toBeGreaterThan(ARRAY_LINK_MAX_CHARS);
    const msg = { type: ARRAY_MESSAGE_TYPES.arrays, version: ARRAY_MESSAGE_VERSION, id: 'ap-1', arrays: { uw: big } };
    expect(readArraysMessage(msg, 'ap-1')!.arrays.weights!.shape).toEqual([300, 300]);
    expect(readArraysMessage(msg, 'ap-2')).toBeNull();
    expect(readArraysMessage({ ...msg, version: 2 }, 'ap-1')).toBeNull();
    expect(readArraysMessage({ type: 'attention-playground:resize' }, 'ap-1')).toBeNull();
    expect(readArraysMessage('hello', 'ap-1')).toBeNull();
    expect(readArraysMessage({ ...msg, arrays: null }, 'ap-1')!.errors[0]).toContain('no “arrays”');
    expect(readArraysMessage({ ...msg, arrays: { nope: 1 } }, 'ap-1')!.errors[0]).toContain('no known key');
    // The same value in a link is refused: links have the smaller limit.
    expect(decodeArrayFields({ uw: big }).errors[0]).toContain('limit');
    expect(readyMessage('ap-1')).toEqual({ type: 'attention-playground:arrays-ready', version: 1, id: 'ap-1' });
    expect(receivedMessage('ap-1', [])).toMatchObject({ ok: true });
  });
  it('any message data: null or a result, never a throw', () => {
    fc.assert(
      fc.property(fc.anything(), fc.dictionary(fc.constantFrom('uw', 'uq', 'um', 'x'), fc.oneof(fc.string(), fc.anything())), (junk, arrays) => {
        readArraysMessage(junk, 'a');
        readArraysMessage({ type: ARRAY_MESSAGE_TYPES.arrays, version: 1, id: 'a', arrays }, 'a');
      }),
      { numRuns: 300 },
    );
  });
});
