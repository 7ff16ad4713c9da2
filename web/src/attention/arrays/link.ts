// Arrays in a share link: versioned, exact for float32 (the bytes themselves travel).
//
//   1.<dtype>.<shape>.<encoding>.<payload>        e.g. 1.f4.6x6.b.AACAPwAAAAA…
//
//   1          the format version (a decoder refuses any other)
//   dtype      f4 (float32) or f8 (float64), little-endian
//   shape      1 to 4 sizes joined by "x" (6x6, 2x6x6, 10)
//   encoding   b: the bytes as they are; z: raw DEFLATE (RFC 1951, no zlib header)
//   payload    base64url (RFC 4648 §5: A–Z a–z 0–9 - _), no padding
//
// Every character is URL-safe, so a value goes into `#…&uw=<value>` without percent-encoding.
// Python writes the same strings (web/public/attention_playground.py: base64.urlsafe_b64encode,
// zlib with wbits = -15). Decoding checks everything and throws ArrayParseError only.
import { deflateSync, inflateSync } from 'fflate';
import { ARRAY_LIMITS, ArrayParseError, asParseError, checkedSize, type NdArray } from './types';

export const ARRAY_LINK_VERSION = 1;

/** The link keys of the student's arrays. Values are array link strings (this file). */
export const ARRAY_LINK_KEYS = {
  /** weights W, (T_q, T_k) or (H, T_q, T_k) */
  weights: 'uw',
  q: 'uq',
  k: 'uk',
  v: 'uv',
  /** (T_q, T_k) or (T_k,), 1 = may attend */
  mask: 'um',
  /** lesson 2's X (T, d_model) and projections (d_model, d_k | d_v) */
  x: 'ux',
  wq: 'uwq',
  wk: 'uwk',
  wv: 'uwv',
} as const;
export type ArrayRole = keyof typeof ARRAY_LINK_KEYS;

/** All array values of one link together stay under this many characters; larger arrays do not
 *  go in the link (the page says so; the notebook helper sends them by postMessage). 96 Ki
 *  characters hold a 128 × 128 float32 W uncompressed (87 Ki), and keep a link well under the
 *  page's 256 Ki-character limit for a hash and under every browser's URL limit. */
export const ARRAY_LINK_MAX_CHARS = 96 * 1024;

/** The limit for one value sent by postMessage instead (the notebook helper's larger arrays):
 *  the largest array the page reads (maxElements float64 values) in base64, plus the header. */
export const ARRAY_MESSAGE_MAX_CHARS = Math.ceil((ARRAY_LIMITS.maxElements * 8 * 4) / 3) + 64;

/** Payloads shorter than this are not worth a deflate attempt. */
const COMPRESS_FROM = 96;

const B64 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
const B64_INDEX = (() => {
  const t = new Int16Array(128).fill(-1);
  for (let i = 0; i < 64; i++) t[B64.charCodeAt(i)] = i;
  return t;
})();

export function base64urlEncode(bytes: Uint8Array): string {
  let out = '';
  let i = 0;
  for (; i + 2 < bytes.length; i += 3) {
    const n = (bytes[i] << 16) | (bytes[i + 1] << 8) | bytes[i + 2];
    out += B64[n >> 18] + B64[(n >> 12) & 63] + B64[(n >> 6) & 63] + B64[n & 63];
  }
  const rest = bytes.length - i;
  if (rest === 1) {
    const n = bytes[i] << 16;
    out += B64[n >> 18] + B64[(n >> 12) & 63];
  } else if (rest === 2) {
    const n = (bytes[i] << 16) | (bytes[i + 1] << 8);
    out += B64[n >> 18] + B64[(n >> 12) & 63] + B64[(n >> 6) & 63];
  }
  return out;
}

/** Strict: only the 64 characters, no padding, no length of 4k + 1, zero unused bits. */
export function base64urlDecode(s: string): Uint8Array {
  if (s.length % 4 === 1)
    throw new ArrayParseError(`the payload has ${s.length} characters, which no byte string encodes to`);
  const out = new Uint8Array(Math.floor((s.length * 3) / 4));
  let o = 0;
  let acc = 0;
  let bits = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    const v = c < 128 ? B64_INDEX[c] : -1;
    if (v < 0) throw new ArrayParseError(`the payload holds “${s[i]}” at character ${i + 1}, which is not base64url`);
    acc = (acc << 6) | v;
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out[o++] = (acc >> bits) & 0xff;
    }
    acc &= (1 << bits) - 1;
  }
  if (acc !== 0) throw new ArrayParseError('the payload’s last character has bits set past the end of the data');
  return out;
}

export interface ArrayLinkOptions {
  /** f4 (default; what the core computes in) or f8. */
  dtype?: 'f4' | 'f8';
  /** Try raw DEFLATE and keep it when shorter (default true). */
  compress?: boolean;
}

/** An array as a link value. Exact for float32 data with dtype f4 (float64 data is rounded to
 *  float32 then, as the core would). */
export function encodeArrayLink(a: Pick<NdArray, 'shape' | 'data'>, opts: ArrayLinkOptions = {}): string {
  const dtype = opts.dtype ?? 'f4';
  const n = checkedSize(a.shape);
  if (a.data.length !== n) throw new ArrayParseError(`the data has ${a.data.length} values but the shape holds ${n}`);
  const size = dtype === 'f4' ? 4 : 8;
  const bytes = new Uint8Array(n * size);
  const view = new DataView(bytes.buffer);
  for (let k = 0; k < n; k++) {
    if (size === 4) view.setFloat32(k * 4, a.data[k], true);
    else view.setFloat64(k * 8, a.data[k], true);
  }
  let enc = 'b';
  let payload = bytes;
  if ((opts.compress ?? true) && bytes.length >= COMPRESS_FROM) {
    const z = deflateSync(bytes, { level: 9 });
    if (z.length < bytes.length) {
      enc = 'z';
      payload = z;
    }
  }
  return `${ARRAY_LINK_VERSION}.${dtype}.${a.shape.join('x')}.${enc}.${base64urlEncode(payload)}`;
}

/** A link value back to an array (source "exact"). Throws ArrayParseError naming what is wrong.
 *  `maxChars`: ARRAY_LINK_MAX_CHARS for links, ARRAY_MESSAGE_MAX_CHARS for postMessage. */
export function decodeArrayLink(value: string, name?: string, maxChars: number = ARRAY_LINK_MAX_CHARS): NdArray {
  const what = name ? `link value “${name}”` : 'the link’s array';
  try {
    if (typeof value !== 'string') throw new ArrayParseError('not text');
    if (value.length > maxChars)
      throw new ArrayParseError(
        `${value.length.toLocaleString('en')} characters is more than the limit of ${maxChars.toLocaleString('en')}`,
      );
    const parts = value.split('.');
    if (parts.length !== 5) throw new ArrayParseError('expected 5 parts “version.dtype.shape.encoding.payload”');
    const [ver, dtype, shapeStr, enc, payloadStr] = parts;
    if (ver !== String(ARRAY_LINK_VERSION))
      throw new ArrayParseError(
        `version “${ver.slice(0, 12)}” is unknown (this page reads version ${ARRAY_LINK_VERSION})`,
      );
    if (dtype !== 'f4' && dtype !== 'f8')
      throw new ArrayParseError(`dtype “${dtype.slice(0, 12)}” is unknown (f4 or f8)`);
    const dims = shapeStr.split('x');
    if (dims.length < 1 || dims.length > ARRAY_LIMITS.maxNdim || dims.some((d) => !/^[1-9]\d{0,6}$/.test(d)))
      throw new ArrayParseError(
        `shape “${shapeStr.slice(0, 40)}” is not 1 to ${ARRAY_LIMITS.maxNdim} positive sizes joined by “x”`,
      );
    const shape = dims.map(Number);
    const n = checkedSize(shape, what);
    const size = dtype === 'f4' ? 4 : 8;
    const expected = n * size;
    let bytes = base64urlDecode(payloadStr);
    if (enc === 'z') {
      let out: Uint8Array;
      try {
        // One byte of room past the expected size: a stream that fills it is too long.
        out = inflateSync(bytes, { out: new Uint8Array(expected + 1) });
      } catch (e) {
        throw asParseError(e, 'the compressed payload is corrupt');
      }
      if (out.length !== expected)
        throw new ArrayParseError(
          `the compressed payload unpacks to ${out.length >= expected + 1 ? 'more than ' + expected : out.length} bytes; shape ${shape.join('×')} of ${dtype} needs ${expected}`,
        );
      bytes = out;
    } else if (enc !== 'b') throw new ArrayParseError(`encoding “${enc.slice(0, 12)}” is unknown (b or z)`);
    else if (bytes.length !== expected)
      throw new ArrayParseError(
        `the payload holds ${bytes.length} bytes; shape ${shape.join('×')} of ${dtype} needs ${expected}`,
      );
    const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    const data = size === 4 ? new Float32Array(n) : new Float64Array(n);
    for (let k = 0; k < n; k++) data[k] = size === 4 ? view.getFloat32(k * 4, true) : view.getFloat64(k * 8, true);
    const out: NdArray = { shape, data, source: 'exact', printStep: 0 };
    if (name !== undefined) out.name = name;
    return out;
  } catch (e) {
    const err = asParseError(e, what);
    if (err.message.startsWith(what)) throw err;
    throw new ArrayParseError(err.message, what);
  }
}

/** The arrays of a link (or of a postMessage): every ARRAY_LINK_KEYS key present is decoded.
 *  Never throws: a bad value is left out and its error (naming the key) is listed. */
export function decodeArrayFields(
  fields: ReadonlyMap<string, string> | Readonly<Record<string, unknown>>,
  maxChars: number = ARRAY_LINK_MAX_CHARS,
): { arrays: Partial<Record<ArrayRole, NdArray>>; errors: string[] } {
  const get = (k: string): unknown =>
    fields instanceof Map
      ? fields.get(k)
      : Object.prototype.hasOwnProperty.call(fields, k)
        ? (fields as Record<string, unknown>)[k]
        : undefined;
  const arrays: Partial<Record<ArrayRole, NdArray>> = {};
  const errors: string[] = [];
  let total = 0;
  for (const role of Object.keys(ARRAY_LINK_KEYS) as ArrayRole[]) {
    const key = ARRAY_LINK_KEYS[role];
    const v = get(key);
    if (v === undefined) continue;
    try {
      if (typeof v !== 'string') throw new ArrayParseError('not text', `link value “${key}”`);
      total += v.length;
      if (total > maxChars)
        throw new ArrayParseError(
          `the arrays together are longer than the limit of ${maxChars.toLocaleString('en')} characters`,
          `link value “${key}”`,
        );
      arrays[role] = decodeArrayLink(v, key, maxChars);
    } catch (e) {
      errors.push(e instanceof Error ? e.message : String(e));
    }
  }
  return { arrays, errors };
}

/** Link fields for the given arrays, in ARRAY_LINK_KEYS order, with their total length and
 *  whether they fit in a link (ARRAY_LINK_MAX_CHARS). Throws ArrayParseError for a bad array. */
export function encodeArrayFields(
  arrays: Partial<Record<ArrayRole, Pick<NdArray, 'shape' | 'data'>>>,
  opts: ArrayLinkOptions = {},
): { fields: [string, string][]; chars: number; fits: boolean } {
  const fields: [string, string][] = [];
  let chars = 0;
  for (const role of Object.keys(ARRAY_LINK_KEYS) as ArrayRole[]) {
    const a = arrays[role];
    if (!a) continue;
    const v = encodeArrayLink(a, opts);
    fields.push([ARRAY_LINK_KEYS[role], v]);
    chars += v.length;
  }
  return { fields, chars, fits: chars <= ARRAY_LINK_MAX_CHARS };
}
