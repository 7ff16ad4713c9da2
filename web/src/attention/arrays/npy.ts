// .npy files (NumPy's format, versions 1.0, 2.0 and 3.0), read by a small reader of our own.
//
// Why not npyjs (1.2.0, the well-kept JS reader): it parses f4/f8/Fortran-order files correctly,
// but (a) it declares a cross-fetch dependency we would ship unused, (b) it trusts the header:
// no size cap before allocating, no check that the data is all there (a truncated file gives a
// short typed array or a RangeError), no refusal of object/structured dtypes with a message a
// student can act on, and (c) it hands back Fortran-order data untransposed and float16 as raw
// Uint16 bits. Each of those would need a wrapper as long as this reader, which is ~150 lines and
// checks everything before it allocates.
//
// Layout: "\x93NUMPY", major, minor, header length (uint16 LE for 1.0, uint32 LE for 2.0 / 3.0),
// then a Python dict literal {'descr': '<f4', 'fortran_order': False, 'shape': (3, 4), }
// (ASCII; UTF-8 in 3.0) padded with spaces and '\n', then the raw data.
import { ARRAY_LIMITS, ArrayParseError, checkedSize, type NdArray } from './types';

export const NPY_MAGIC = [0x93, 0x4e, 0x55, 0x4d, 0x50, 0x59]; // \x93NUMPY

interface Dtype {
  size: number;
  read: (v: DataView, off: number, le: boolean) => number;
  f64: boolean;
}
const DTYPES: Record<string, Dtype> = {
  f2: { size: 2, read: (v, o, le) => halfToFloat(v.getUint16(o, le)), f64: false },
  f4: { size: 4, read: (v, o, le) => v.getFloat32(o, le), f64: false },
  f8: { size: 8, read: (v, o, le) => v.getFloat64(o, le), f64: true },
  i1: { size: 1, read: (v, o) => v.getInt8(o), f64: false },
  u1: { size: 1, read: (v, o) => v.getUint8(o), f64: false },
  b1: { size: 1, read: (v, o) => (v.getUint8(o) !== 0 ? 1 : 0), f64: false },
  i2: { size: 2, read: (v, o, le) => v.getInt16(o, le), f64: false },
  u2: { size: 2, read: (v, o, le) => v.getUint16(o, le), f64: false },
  i4: { size: 4, read: (v, o, le) => v.getInt32(o, le), f64: true },
  u4: { size: 4, read: (v, o, le) => v.getUint32(o, le), f64: true },
  i8: { size: 8, read: (v, o, le) => Number(v.getBigInt64(o, le)), f64: true },
  u8: { size: 8, read: (v, o, le) => Number(v.getBigUint64(o, le)), f64: true },
};

/** IEEE 754 half (binary16) bits → number (exact: every half is a float32). */
export function halfToFloat(h: number): number {
  const s = h & 0x8000 ? -1 : 1;
  const e = (h >> 10) & 0x1f;
  const f = h & 0x3ff;
  if (e === 0) return s * f * 2 ** -24;
  if (e === 31) return f === 0 ? s * Infinity : NaN;
  return s * (1 + f / 1024) * 2 ** (e - 15);
}

function describeDescr(descr: string): string {
  const kind = descr.replace(/^[<>|=]/, '')[0];
  if (kind === 'O') return 'an object array (dtype=object)';
  if (kind === 'U' || kind === 'S' || kind === 'a') return 'an array of strings';
  if (kind === 'c') return 'a complex array';
  if (kind === 'M' || kind === 'm') return 'a datetime array';
  if (kind === 'V') return 'a structured (record) array';
  return `dtype “${descr}”`;
}

/** Read one .npy file. `label` names it in errors (e.g. "W.npy"). Throws ArrayParseError. */
export function readNpy(bytes: Uint8Array, label = 'the .npy file'): NdArray {
  if (bytes.length > ARRAY_LIMITS.maxFileBytes)
    throw new ArrayParseError(
      `${bytes.length.toLocaleString('en')} bytes is more than the limit of ${ARRAY_LIMITS.maxFileBytes.toLocaleString('en')}`,
      label,
    );
  if (bytes.length < 10 || NPY_MAGIC.some((b, i) => bytes[i] !== b))
    throw new ArrayParseError('not an .npy file (it does not start with \\x93NUMPY)', label);
  const major = bytes[6];
  const minor = bytes[7];
  if (![1, 2, 3].includes(major) || minor !== 0)
    throw new ArrayParseError(`.npy format version ${major}.${minor} is unknown (1.0, 2.0 and 3.0 are read)`, label);
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const lenSize = major === 1 ? 2 : 4;
  if (bytes.length < 8 + lenSize) throw new ArrayParseError('the file ends inside its header', label);
  const hlen = major === 1 ? view.getUint16(8, true) : view.getUint32(8, true);
  const start = 8 + lenSize;
  if (hlen > ARRAY_LIMITS.maxNpyHeader)
    throw new ArrayParseError(
      `the header is ${hlen.toLocaleString('en')} bytes long (limit ${ARRAY_LIMITS.maxNpyHeader.toLocaleString('en')})`,
      label,
    );
  if (start + hlen > bytes.length)
    throw new ArrayParseError(
      `the file ends inside its header (${bytes.length} bytes, header needs ${start + hlen})`,
      label,
    );
  let header: string;
  try {
    header = new TextDecoder(major === 3 ? 'utf-8' : 'latin1', { fatal: true }).decode(
      bytes.subarray(start, start + hlen),
    );
  } catch {
    throw new ArrayParseError('the header is not valid text', label);
  }
  const { descr, fortran, shape } = parseHeader(header, label);

  const order = descr[0] === '<' || descr[0] === '>' || descr[0] === '|' || descr[0] === '=' ? descr[0] : '';
  const code = order ? descr.slice(1) : descr;
  const dt = DTYPES[code === '?' ? 'b1' : code];
  if (!dt)
    throw new ArrayParseError(
      `${describeDescr(descr)} cannot be shown; save a numeric array, e.g. np.save(path, W.astype(np.float32))`,
      label,
    );
  if (dt.size > 1 && order === '|') throw new ArrayParseError(`dtype “${descr}” has no byte order`, label);
  const le = order !== '>';

  const n = checkedSize(shape, label);
  const dataStart = start + hlen;
  const need = n * dt.size;
  if (bytes.length - dataStart < need)
    throw new ArrayParseError(
      `the data is truncated: shape (${shape.join(', ')}) of ${descr} needs ${need.toLocaleString('en')} bytes, the file has ${(bytes.length - dataStart).toLocaleString('en')}`,
      label,
    );

  const out = dt.f64 ? new Float64Array(n) : new Float32Array(n);
  if (!fortran || shape.length === 1) {
    for (let k = 0; k < n; k++) out[k] = dt.read(view, dataStart + k * dt.size, le);
  } else {
    // Fortran (column-major) order: element idx sits at sum idx[d] * prod(shape[0..d)).
    // Walk the C-order indices with an odometer and move each element into place.
    const nd = shape.length;
    const fstride = new Array<number>(nd);
    fstride[0] = 1;
    for (let d = 1; d < nd; d++) fstride[d] = fstride[d - 1] * shape[d - 1];
    const idx = new Array<number>(nd).fill(0);
    let f = 0;
    for (let k = 0; k < n; k++) {
      out[k] = dt.read(view, dataStart + f * dt.size, le);
      for (let d = nd - 1; d >= 0; d--) {
        idx[d]++;
        f += fstride[d];
        if (idx[d] < shape[d]) break;
        f -= fstride[d] * shape[d];
        idx[d] = 0;
      }
    }
  }
  // float16 holds 11 significant bits: a weight in [0, 2) is within 2^-11 of what was saved from,
  // so the row-sum check allows for that (as it allows for printed rounding).
  return { shape, data: out, source: 'exact', printStep: code === 'f2' ? 2 ** -10 : 0 };
}

/** The header's three keys, from NumPy's dict literal. Strict: anything else is an error. */
function parseHeader(h: string, label: string): { descr: string; fortran: boolean; shape: number[] } {
  const where = `${label} header`;
  const t = h.trim();
  if (!t.startsWith('{') || !t.endsWith('}')) throw new ArrayParseError('the header is not a dict literal', where);
  if (/['"]descr['"]\s*:\s*\[/.test(t))
    throw new ArrayParseError('a structured (record) array cannot be shown; save a numeric array', where);
  const d = /['"]descr['"]\s*:\s*['"]([^'"]{1,20})['"]/.exec(t);
  if (!d) throw new ArrayParseError('no dtype (“descr”) in the header', where);
  const fo = /['"]fortran_order['"]\s*:\s*(True|False)\b/.exec(t);
  if (!fo) throw new ArrayParseError('no “fortran_order” in the header', where);
  const sh = /['"]shape['"]\s*:\s*\(([^()]{0,200})\)/.exec(t);
  if (!sh) throw new ArrayParseError('no “shape” in the header', where);
  const parts = sh[1].split(',').map((s) => s.trim());
  if (parts.length > 0 && parts[parts.length - 1] === '') parts.pop();
  const shape = parts.map((p) => {
    if (!/^\d{1,18}L?$/.test(p))
      throw new ArrayParseError(`the shape (${sh[1].slice(0, 60)}) is not a tuple of sizes`, where);
    return Number(p.replace('L', ''));
  });
  if (shape.length === 0)
    throw new ArrayParseError('the array is a scalar (shape ()); save an array of 1 to 4 dimensions', where);
  return { descr: d[1], fortran: fo[1] === 'True', shape };
}
