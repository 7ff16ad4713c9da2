// The file readers against files NumPy 1.24 wrote (np.save, format.write_array versions 2.0 and
// 3.0, Fortran order, big-endian, float16, ints, bool, np.savez, np.savez_compressed, np.savetxt,
// json.dumps): values exact. Then hostile files: huge shapes, wrong dtypes, truncation, corrupt zips.
import { describe, it, expect } from 'vitest';
import { zipSync } from 'fflate';
import { readArrayFile, readNpy, readNpz, ArrayParseError, halfToFloat, type NdArray } from '../../web/src/attention/arrays';
import { fixtureJson, fixtureBytes, firstMismatch } from './arrays-helpers';

interface FileCase { file: string; expect: 'ok' | 'error'; includes?: string; arrays?: { name: string; shape: number[]; values: (number | string)[] }[] }
const { files } = fixtureJson<{ files: FileCase[] }>('files.json');

function errorOf(f: () => unknown): ArrayParseError {
  try {
    f();
  } catch (e) {
    if (e instanceof ArrayParseError) return e;
    throw new Error(`threw a non-ArrayParseError: ${String(e)}`);
  }
  throw new Error('did not throw');
}

describe('files NumPy wrote', () => {
  it('has the cases', () => expect(files.length).toBeGreaterThan(25));
  for (const c of files) {
    it(`${c.file} ${c.expect === 'ok' ? 'reads exactly' : `is refused (${c.includes})`}`, () => {
      const bytes = fixtureBytes(c.file);
      if (c.expect === 'error') {
        const e = errorOf(() => readArrayFile(c.file, bytes));
        expect(e.message).toContain(c.includes);
        expect(e.message).toContain(c.file);
        return;
      }
      const got: NdArray[] = readArrayFile(c.file, bytes);
      expect(got.map((a) => a.name)).toEqual(c.arrays!.map((a) => a.name));
      got.forEach((a, i) => {
        expect(a.shape).toEqual(c.arrays![i].shape);
        // .npy / .npz: bit-exact. Text files hold printed numbers (savetxt's %.18e is exact too).
        const bad = firstMismatch(a.data, c.arrays![i].values, 0, 0);
        expect(bad, bad >= 0 ? `${a.name}[${bad}]: ${a.data[bad]} vs ${c.arrays![i].values[bad]}` : '').toBe(-1);
        if (/\.np[yz]$/.test(c.file)) expect(a.source).toBe('exact');
      });
    });
  }
});

/** A hand-made .npy: header dict text and data bytes (version 1.0 unless told). */
function npy(header: string, data: Uint8Array = new Uint8Array(0), version = 1): Uint8Array {
  const pre = version === 1 ? 10 : 12;
  let h = header;
  while ((pre + h.length + 1) % 64 !== 0) h += ' ';
  h += '\n';
  const out = new Uint8Array(pre + h.length + data.length);
  out.set([0x93, 0x4e, 0x55, 0x4d, 0x50, 0x59, version, 0]);
  const v = new DataView(out.buffer);
  if (version === 1) v.setUint16(8, h.length, true);
  else v.setUint32(8, h.length, true);
  for (let i = 0; i < h.length; i++) out[pre + i] = h.charCodeAt(i);
  out.set(data, pre + h.length);
  return out;
}
const f4 = (...xs: number[]) => new Uint8Array(new Float32Array(xs).buffer);

describe('hostile .npy files', () => {
  const cases: [string, Uint8Array, string][] = [
    ['a shape over the element cap', npy("{'descr': '<f4', 'fortran_order': False, 'shape': (1048577,), }", f4(1)), 'limit'],
    ['a shape whose product overflows', npy("{'descr': '<f8', 'fortran_order': False, 'shape': (4294967296, 4294967296, 4294967296), }"), 'limit'],
    ['a dimension past 2^53', npy("{'descr': '<f8', 'fortran_order': False, 'shape': (99999999999999999,), }"), 'invalid dimension'],
    ['a negative dimension', npy("{'descr': '<f8', 'fortran_order': False, 'shape': (-1, 2), }"), 'not a tuple of sizes'],
    ['a zero dimension', npy("{'descr': '<f4', 'fortran_order': False, 'shape': (0, 3), }"), 'empty'],
    ['five dimensions', npy("{'descr': '<f4', 'fortran_order': False, 'shape': (1, 1, 1, 1, 1), }", f4(1)), '5 dimensions'],
    ['a dtype that does not exist', npy("{'descr': '<q9', 'fortran_order': False, 'shape': (1,), }", f4(1)), 'cannot be shown'],
    ['a multi-byte dtype without byte order', npy("{'descr': '|f4', 'fortran_order': False, 'shape': (1,), }", f4(1)), 'byte order'],
    ['no shape', npy("{'descr': '<f4', 'fortran_order': False, }", f4(1)), 'no “shape”'],
    ['no descr', npy("{'fortran_order': False, 'shape': (1,), }", f4(1)), 'no dtype'],
    ['not a dict', npy('[1, 2, 3]'), 'not a dict literal'],
    ['truncated data', npy("{'descr': '<f4', 'fortran_order': False, 'shape': (3,), }", f4(1, 2)), 'truncated'],
    ['an unknown version', (() => { const b = npy("{'descr': '<f4', 'fortran_order': False, 'shape': (1,), }", f4(1)); b[6] = 9; return b; })(), 'version 9.0'],
    ['a header length past the end', (() => { const b = npy("{'descr': '<f4', 'fortran_order': False, 'shape': (1,), }", f4(1)); b[8] = 0xff; b[9] = 0x7f; return b; })(), 'header'],
    ['a 4 GiB header length (v2)', (() => { const b = npy("{'descr': '<f4', 'fortran_order': False, 'shape': (1,), }", f4(1), 2); new DataView(b.buffer).setUint32(8, 0xffffffff, true); return b; })(), 'limit'],
    ['only the magic', new Uint8Array([0x93, 0x4e, 0x55, 0x4d, 0x50, 0x59]), 'not an .npy file'],
  ];
  for (const [what, bytes, msg] of cases) {
    it(what, () => expect(errorOf(() => readNpy(bytes, 'x.npy')).message).toContain(msg));
  }
  it('reads a hand-made v2.0 file and a Fortran-order 2-D float32 one', () => {
    expect(Array.from(readNpy(npy("{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }", f4(1.5, -2), 2)).data)).toEqual([1.5, -2]);
    // Fortran (2, 3): memory holds columns [a00 a10] [a01 a11] [a02 a12].
    const a = readNpy(npy("{'descr': '<f4', 'fortran_order': True, 'shape': (2, 3), }", f4(1, 4, 2, 5, 3, 6)));
    expect(Array.from(a.data)).toEqual([1, 2, 3, 4, 5, 6]);
  });
  it('converts float16 exactly (subnormal, inf, nan, -0)', () => {
    expect([0x0001, 0x3c00, 0xc000, 0x7bff, 0x7c00, 0xfc00, 0x8000].map(halfToFloat)).toEqual([2 ** -24, 1, -2, 65504, Infinity, -Infinity, -0]);
    expect(halfToFloat(0x7e00)).toBeNaN();
  });
});

describe('hostile .npz files', () => {
  const good = fixtureBytes('qkv.npz');
  it('a zip without .npy entries', () => {
    expect(errorOf(() => readNpz(zipSync({ 'a.txt': new Uint8Array([1, 2]) }))).message).toContain('no .npy entries');
  });
  it('an entry that is not an .npy file names the entry', () => {
    expect(errorOf(() => readNpz(zipSync({ 'W.npy': new Uint8Array([1, 2, 3]) }), 'x.npz')).message).toContain('entry “W.npy”');
  });
  it('more entries than the cap', () => {
    const many: Record<string, Uint8Array> = {};
    for (let i = 0; i < 20; i++) many[`a${i}.npy`] = new Uint8Array(1);
    expect(errorOf(() => readNpz(zipSync(many))).message).toContain('at most 16');
  });
  it('a declared size over the cap is refused before inflating', () => {
    const z = zipSync({ 'W.npy': new Uint8Array(1000) }, { level: 6 });
    const v = new DataView(z.buffer);
    // Patch the central directory's uncompressed size (offset 24 in the entry) to 1 GiB.
    let cd = -1;
    for (let i = z.length - 22; i >= 0; i--) if (v.getUint32(i, true) === 0x02014b50) { cd = i; break; }
    v.setUint32(cd + 24, 1 << 30, true);
    expect(errorOf(() => readNpz(z)).message).toContain('unpacks to 1,073,741,824 bytes');
  });
  it('an entry count of 65535 (ZIP64 marker) and a directory pointing past the end', () => {
    const a = good.slice();
    const v = new DataView(a.buffer);
    const e = a.length - 22;
    v.setUint16(e + 10, 0xffff, true);
    expect(errorOf(() => readNpz(a)).message).toContain('ZIP64');
    const b = good.slice();
    new DataView(b.buffer).setUint32(e + 16, b.length, true);
    expect(errorOf(() => readNpz(b)).message).toContain('corrupt');
  });
  it('truncated at every 97th byte: always an ArrayParseError', () => {
    for (const name of ['qkv.npz', 'qkv_compressed.npz']) {
      const bytes = fixtureBytes(name);
      for (let n = 0; n < bytes.length; n += 97) errorOf(() => readNpz(bytes.subarray(0, n)));
    }
  });
  it('flipped bytes: a result or an ArrayParseError, never another throw', () => {
    const bytes = fixtureBytes('qkv_compressed.npz');
    for (let i = 0; i < bytes.length; i += 7) {
      const b = bytes.slice();
      b[i] ^= 0x5a;
      try {
        readNpz(b);
      } catch (e) {
        expect(e).toBeInstanceOf(ArrayParseError);
      }
    }
  });
});

describe('text files', () => {
  it('a JSON object of Q, K, V names each array; a bare JSON array takes the file name', () => {
    const enc = new TextEncoder();
    expect(readArrayFile('mine.json', enc.encode('[[0.5, 0.5], [1, 0]]'))[0].name).toBe('mine');
    expect(readArrayFile('x.json', enc.encode('{"Q": [[1]], "K": [[2]], "V": [[3]]}')).map((a) => a.name)).toEqual(['Q', 'K', 'V']);
  });
  it('bytes that are not UTF-8 text', () => {
    expect(errorOf(() => readArrayFile('x.json', new Uint8Array([0xff, 0xfe, 0x00, 0xc3]))).message).toContain('neither .npy, .npz nor UTF-8 text');
  });
});
