// The text model's files, fetched and checked before anything uses them (no DOM): `model.json`
// (read by model-json.ts) and its `step-NNNNNNNN.npz` checkpoints (numpy.savez: a zip of .npy
// entries). Every array's name, dtype and shape is checked against model.json's config before its
// data is read; every value must be finite. Anything else (a truncated or corrupt zip, a lying
// model.json, a huge declared shape, a failed fetch) is a ModelFileError naming the file and the
// field, never another exception.
//
// .npy: "\x93NUMPY", version (1.0, 2.0, 3.0), header length (uint16 LE; uint32 LE from 2.0), a
// Python dict literal {'descr': '<f4', 'fortran_order': False, 'shape': (91, 128), }, the data.
// Only little-endian float32 ('<f4') and float16 ('<f2', widened exactly) in C order are read.
import { unzipSync } from 'fflate';
import {
  MODEL_FILE_LIMITS,
  ModelFileError,
  expectedArrays,
  parseModelJson,
  type TextModelConfig,
  type TextModelInfo,
} from './model-json';

export {
  MODEL_FILE_LIMITS,
  ModelFileError,
  expectedArrays,
  parseModelJson,
  type CheckpointInfo,
  type HeadGrid,
  type TextModelConfig,
  type TextModelInfo,
} from './model-json';

const LIM = MODEL_FILE_LIMITS;

/** The weights as tr.weights() shapes them (docs/train-api.md), float32. */
export interface TextWeights {
  embed: Float32Array;
  pos: Float32Array | null;
  layers: { wq: Float32Array; wk: Float32Array; wv: Float32Array; wo: Float32Array }[];
  lnGain: Float32Array | null;
  lnBias: Float32Array | null;
  unembed: Float32Array;
}

const NPY_MAGIC = [0x93, 0x4e, 0x55, 0x4d, 0x50, 0x59];

/** IEEE 754 binary16 bits → number (exact: every half is a float32). */
export function halfToFloat(h: number): number {
  const s = h & 0x8000 ? -1 : 1;
  const e = (h >> 10) & 0x1f;
  const f = h & 0x3ff;
  if (e === 0) return s * f * 2 ** -24;
  if (e === 31) return f === 0 ? s * Infinity : NaN;
  return s * (1 + f / 1024) * 2 ** (e - 15);
}

/** One .npy entry, checked against the shape it must have. */
export function readNpy(bytes: Uint8Array, file: string, name: string, shape: readonly number[]): Float32Array {
  const fail = (detail: string): never => {
    throw new ModelFileError(file, name, detail);
  };
  if (bytes.length < 12 || NPY_MAGIC.some((b, i) => bytes[i] !== b)) fail('not an .npy entry (no \\x93NUMPY)');
  const major = bytes[6];
  if (![1, 2, 3].includes(major) || bytes[7] !== 0) fail(`.npy version ${major}.${bytes[7]} is not read`);
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const start = major === 1 ? 10 : 12;
  const hlen = major === 1 ? view.getUint16(8, true) : view.getUint32(8, true);
  if (hlen > LIM.maxNpyHeader) fail(`a ${hlen}-byte header is over the limit`);
  if (start + hlen > bytes.length) fail('the entry ends inside its header');
  let header = '';
  for (let i = start; i < start + hlen; i++) {
    const b = bytes[i];
    if (b > 0x7e || (b < 0x20 && b !== 0x0a)) fail('the header is not plain text');
    header += String.fromCharCode(b);
  }
  const descr = /['"]descr['"]\s*:\s*['"]([^'"]{1,20})['"]/.exec(header)?.[1];
  const fortran = /['"]fortran_order['"]\s*:\s*(True|False)\b/.exec(header)?.[1];
  const sh = /['"]shape['"]\s*:\s*\(([^()]{0,200})\)/.exec(header)?.[1];
  if (descr === undefined || fortran === undefined || sh === undefined)
    fail('the header lacks descr, fortran_order or shape');
  if (descr !== '<f4' && descr !== '<f2')
    fail(`dtype “${descr}” is not read (little-endian float32 “<f4” or float16 “<f2”)`);
  if (fortran !== 'False') fail('Fortran order is not read (C order only)');
  const parts = sh!
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');
  if (!parts.every((p) => /^\d{1,12}$/.test(p))) fail(`the shape (${sh!.slice(0, 60)}) is not a tuple of sizes`);
  const got = parts.map(Number);
  if (got.length !== shape.length || got.some((n, i) => n !== shape[i]))
    fail(`shape (${got.join(', ')}) but model.json's config gives (${shape.join(', ')})`);
  const n = shape.reduce((a, b) => a * b, 1);
  const size = descr === '<f4' ? 4 : 2;
  const data = start + hlen;
  if (bytes.length - data < n * size)
    fail(
      `the data is truncated (${(bytes.length - data).toLocaleString('en')} of ${(n * size).toLocaleString('en')} bytes)`,
    );
  const out = new Float32Array(n);
  if (size === 4) for (let k = 0; k < n; k++) out[k] = view.getFloat32(data + 4 * k, true);
  else for (let k = 0; k < n; k++) out[k] = halfToFloat(view.getUint16(data + 2 * k, true));
  for (let k = 0; k < n; k++)
    if (!Number.isFinite(out[k])) fail(`value ${k} is ${out[k]} (every weight must be finite)`);
  return out;
}

const EOCD = 0x06054b50;

/** Read and check one checkpoint (.npz bytes) against the model's config. */
export function readCheckpoint(bytes: Uint8Array, file: string, cfg: TextModelConfig): TextWeights {
  const fail = (field: string, detail: string): never => {
    throw new ModelFileError(file, field, detail);
  };
  const want = expectedArrays(cfg);
  if (bytes.length > LIM.maxNpzBytes) fail('(file)', `${bytes.length.toLocaleString('en')} bytes is over the limit`);
  if (bytes.length < 22) fail('(file)', 'not a zip (.npz) file: too short');
  // The end-of-central-directory record (its entry count checked before fflate walks the entries).
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  let e = bytes.length - 22;
  const stop = Math.max(0, bytes.length - 22 - 0xffff);
  while (e >= stop && view.getUint32(e, true) !== EOCD) e--;
  if (e < stop) fail('(file)', 'not a zip (.npz) file: no end-of-central-directory record');
  const entries = view.getUint16(e + 10, true);
  if (entries !== want.size) fail('(file)', `${entries} entries, but model.json's config gives ${want.size} arrays`);
  // Each entry may unpack to at most its array's bytes (float32) and a header: fflate allocates
  // what an entry declares, so a lying size is refused before it is inflated.
  const maxBytes = (name: string) => 12 + LIM.maxNpyHeader + 4 * (want.get(name) ?? [0]).reduce((a, b) => a * b, 1);
  let files: Record<string, Uint8Array>;
  try {
    files = unzipSync(bytes, {
      filter(f) {
        const name = f.name.endsWith('.npy') ? f.name.slice(0, -4) : f.name;
        if (!want.has(name)) fail(name, 'is not an array of this model (model.json’s config names every array)');
        if (f.originalSize > maxBytes(name))
          fail(name, `declares ${f.originalSize.toLocaleString('en')} bytes, more than its shape needs`);
        if (f.compression !== 0 && f.compression !== 8)
          fail(name, `zip compression method ${f.compression} is not read`);
        return true;
      },
    });
  } catch (err) {
    if (err instanceof ModelFileError) throw err;
    return fail('(file)', `the zip is corrupt (${String((err as Error)?.message ?? err).slice(0, 100)})`);
  }
  const get = (name: string): Float32Array => {
    const b = files[`${name}.npy`];
    if (!b) return fail(name, 'missing');
    return readNpy(b, file, name, want.get(name)!);
  };
  for (const name of want.keys()) if (!files[`${name}.npy`]) fail(name, 'missing');
  return {
    embed: get('embed'),
    pos: want.has('pos') ? get('pos') : null,
    layers: Array.from({ length: cfg.layers }, (_, l) => ({
      wq: get(`layers.${l}.wq`),
      wk: get(`layers.${l}.wk`),
      wv: get(`layers.${l}.wv`),
      wo: get(`layers.${l}.wo`),
    })),
    lnGain: cfg.layerNorm ? get('ln_gain') : null,
    lnBias: cfg.layerNorm ? get('ln_bias') : null,
    unembed: get('unembed'),
  };
}

/** Where the model lives and how to get its files: `fetchBytes(name)` gives a file beside
 *  model.json (the page: fetch; tests: the file system). */
export interface ModelSource {
  fetchBytes(name: string): Promise<Uint8Array>;
}

/** The model's files through a source: model.json once, each checkpoint on demand (the last few
 *  kept). Every failure is a ModelFileError. */
export class ModelFiles {
  private info: Promise<TextModelInfo> | null = null;
  private cache = new Map<number, Promise<TextWeights>>();

  constructor(
    private readonly source: ModelSource,
    private readonly keep = 4,
  ) {}

  model(): Promise<TextModelInfo> {
    this.info ??= this.fetch('model.json').then((b) => {
      if (b.length > LIM.maxJsonBytes) throw new ModelFileError('model.json', '(file)', 'over the size limit');
      let text: string;
      try {
        text = new TextDecoder('utf-8', { fatal: true }).decode(b);
      } catch {
        throw new ModelFileError('model.json', '(file)', 'not UTF-8 text');
      }
      return parseModelJson(text);
    });
    // A failed fetch may succeed later (the network): forget it.
    this.info.catch(() => (this.info = null));
    return this.info;
  }

  async checkpoint(step: number): Promise<TextWeights> {
    const info = await this.model();
    const ck = info.checkpoints.find((c) => c.step === step);
    if (!ck) throw new ModelFileError('model.json', 'checkpoints', `no checkpoint at step ${step}`);
    let p = this.cache.get(step);
    if (!p) {
      p = this.fetch(ck.file).then((b) => readCheckpoint(b, ck.file, info.config));
      p.catch(() => this.cache.delete(step));
      this.cache.set(step, p);
      while (this.cache.size > this.keep) this.cache.delete(this.cache.keys().next().value!);
    } else {
      // Most recently used last.
      this.cache.delete(step);
      this.cache.set(step, p);
    }
    return p;
  }

  private async fetch(name: string): Promise<Uint8Array> {
    try {
      return await this.source.fetchBytes(name);
    } catch (err) {
      if (err instanceof ModelFileError) throw err;
      throw new ModelFileError(
        name,
        '(file)',
        `could not be read (${String((err as Error)?.message ?? err).slice(0, 120)})`,
      );
    }
  }
}

/** A source over HTTP: the files beside `base` (a folder URL ending in '/'). */
export function httpSource(base: string, fetchFn: typeof fetch = fetch): ModelSource {
  return {
    async fetchBytes(name) {
      const r = await fetchFn(new URL(name, base).href);
      if (!r.ok) throw new ModelFileError(name, '(file)', `HTTP ${r.status} ${r.statusText}`.trim());
      return new Uint8Array(await r.arrayBuffer());
    },
  };
}
