// The text model's files, read and checked before anything uses them (no DOM): `model.json`
// (docs/text-model.md, "What is written") and its `step-NNNNNNNN.npz` checkpoints (numpy.savez:
// a zip of .npy entries). Every array's name, dtype and shape is checked against model.json's
// config before its data is read; every value must be finite. Anything else (a truncated or
// corrupt zip, a lying model.json, a huge declared shape, a missing field, text that is not JSON)
// is a ModelFileError naming the file and the field, never another exception.
//
// .npy: "\x93NUMPY", version (1.0, 2.0, 3.0), header length (uint16 LE; uint32 LE from 2.0), a
// Python dict literal {'descr': '<f4', 'fortran_order': False, 'shape': (91, 128), }, the data.
// Only little-endian float32 ('<f4') and float16 ('<f2', widened exactly) in C order are read.
import { unzipSync } from 'fflate';

/** A problem with one of the model's files: `file` (e.g. "step-00000043.npz") and `field` (e.g.
 *  "layers.0.wq" or "config.dModel") are also in the message. */
export class ModelFileError extends Error {
  constructor(
    readonly file: string,
    readonly field: string,
    detail: string,
  ) {
    super(`${file}: ${field}: ${detail}`);
    this.name = 'ModelFileError';
  }
}

export const MODEL_FILE_LIMITS = {
  maxJsonBytes: 8 * 1024 * 1024,
  maxNpzBytes: 96 * 1024 * 1024,
  maxVocab: 65536,
  maxSeqLen: 2048,
  maxLayers: 16,
  maxHeads: 64,
  maxDModel: 2048,
  /** Every parameter together (float32: 256 MiB). */
  maxParams: 64 * 1024 * 1024,
  maxCheckpoints: 1000,
  maxNpyHeader: 4096,
  maxNoteChars: 2000,
} as const;
const LIM = MODEL_FILE_LIMITS;

/** The model's shape, from model.json's `config` (createTrainer's field names). */
export interface TextModelConfig {
  vocab: number;
  seqLen: number;
  layers: number;
  heads: number;
  kvHeads: number;
  dModel: number;
  positional: string;
  layerNorm: boolean;
}

export interface HeadGrid {
  /** [layer][head], 0-based; null where model.json has none. */
  induction: (number | null)[][];
  previous: (number | null)[][];
}

export interface CheckpointInfo {
  step: number;
  tokens: number;
  file: string;
  heldOutLoss: number | null;
  inContext: number | null;
  induction: number | null;
  previous: number | null;
  /** The probe's per-head scores at this checkpoint (null when model.json has none). */
  heads: HeadGrid | null;
}

export interface TextModelInfo {
  config: TextModelConfig;
  /** What createTrainer is given (the forward's fields of model.json's config). */
  trainerConfig: Record<string, unknown>;
  symbols: string[];
  /** Index of the unknown symbol in `symbols`. */
  unknownId: number;
  checkpoints: CheckpointInfo[];
  /** What the shipped model misses, when model.json says so. */
  shippedNote: string | null;
  /** model.json's `corpus`, when it names its package and split (else null). */
  corpus: { package: string; version: string; train: string; heldOut: string } | null;
}

/** The weights as tr.weights() shapes them (docs/train-api.md), float32. */
export interface TextWeights {
  embed: Float32Array;
  pos: Float32Array | null;
  layers: { wq: Float32Array; wk: Float32Array; wv: Float32Array; wo: Float32Array }[];
  lnGain: Float32Array | null;
  lnBias: Float32Array | null;
  unembed: Float32Array;
}

// ---------------------------------------------------------------- model.json

/** The config fields the forward reads, passed on to createTrainer when present. */
const FORWARD_FIELDS = [
  'vocab',
  'seqLen',
  'layers',
  'heads',
  'kvHeads',
  'dModel',
  'positional',
  'normalizer',
  'qkNorm',
  'sigmoidBias',
  'layerNorm',
  'scale',
] as const;
/** Positional schemes with a learned table `pos` (T, D) in the weights. */
const WITH_TABLE = ['learned', 'shortformer'];

const isObj = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Parse and check model.json's text. */
export function parseModelJson(text: string, file = 'model.json'): TextModelInfo {
  const fail = (field: string, detail: string): never => {
    throw new ModelFileError(file, field, detail);
  };
  if (typeof text !== 'string') fail('(file)', 'no text');
  if (text.length > LIM.maxJsonBytes)
    fail('(file)', `${text.length.toLocaleString('en')} characters is over the limit`);
  let j: unknown;
  try {
    j = JSON.parse(text);
  } catch (e) {
    fail('(file)', `not JSON (${String((e as Error).message).slice(0, 120)})`);
  }
  if (!isObj(j)) return fail('(file)', 'not a JSON object');
  const c = j.config;
  if (!isObj(c)) return fail('config', 'missing or not an object');
  const int = (name: string, lo: number, hi: number, dflt?: number): number => {
    const v = c[name] ?? dflt;
    if (typeof v !== 'number' || !Number.isInteger(v) || v < lo || v > hi)
      fail(`config.${name}`, `must be a whole number from ${lo} to ${hi} (got ${short(v)})`);
    return v as number;
  };
  const vocab = int('vocab', 2, LIM.maxVocab);
  const seqLen = int('seqLen', 2, LIM.maxSeqLen);
  const layers = int('layers', 1, LIM.maxLayers);
  const heads = int('heads', 1, LIM.maxHeads);
  const kvHeads = int('kvHeads', 1, heads, heads);
  const dModel = int('dModel', 1, LIM.maxDModel);
  if (dModel % heads !== 0) fail('config.dModel', `${dModel} is not divisible by heads (${heads})`);
  if (heads % kvHeads !== 0) fail('config.kvHeads', `${kvHeads} does not divide heads (${heads})`);
  const positional = c.positional ?? 'learned';
  if (typeof positional !== 'string' || positional.length > 40) return fail('config.positional', 'must be a name');
  const layerNorm = c.layerNorm ?? false;
  if (typeof layerNorm !== 'boolean') return fail('config.layerNorm', 'must be true or false');
  const cfg: TextModelConfig = { vocab, seqLen, layers, heads, kvHeads, dModel, positional, layerNorm };
  if (paramCount(cfg) > LIM.maxParams)
    fail(
      'config',
      `${paramCount(cfg).toLocaleString('en')} parameters is over the limit of ${LIM.maxParams.toLocaleString('en')}`,
    );
  const trainerConfig: Record<string, unknown> = {};
  for (const k of FORWARD_FIELDS) if (c[k] !== undefined) trainerConfig[k] = c[k];

  // tokenizer: { kind: 'char', symbols, unknown }
  const tk = j.tokenizer;
  if (!isObj(tk)) return fail('tokenizer', 'missing or not an object');
  if (tk.kind !== 'char') fail('tokenizer.kind', `${short(tk.kind)} is not read (only “char”)`);
  const symbols = tk.symbols;
  if (!Array.isArray(symbols)) return fail('tokenizer.symbols', 'missing or not a list');
  if (symbols.length !== vocab) fail('tokenizer.symbols', `${symbols.length} symbols, but config.vocab is ${vocab}`);
  const seen = new Set<string>();
  symbols.forEach((s, i) => {
    if (typeof s !== 'string' || Array.from(s).length !== 1)
      fail(`tokenizer.symbols[${i}]`, `must be one character (got ${short(s)})`);
    if (seen.has(s)) fail(`tokenizer.symbols[${i}]`, `“${s}” appears twice`);
    seen.add(s);
  });
  const unknownId = typeof tk.unknown === 'string' ? symbols.indexOf(tk.unknown) : -1;
  if (unknownId < 0) fail('tokenizer.unknown', 'must be one of the symbols');

  // checkpoints
  const cks = j.checkpoints;
  if (!Array.isArray(cks) || cks.length === 0) return fail('checkpoints', 'missing or empty');
  if (cks.length > LIM.maxCheckpoints) fail('checkpoints', `${cks.length} is over the limit of ${LIM.maxCheckpoints}`);
  const checkpoints = cks.map((ck, i) => readCheckpointInfo(ck, `checkpoints[${i}]`, cfg, fail));
  for (let i = 1; i < checkpoints.length; i++)
    if (checkpoints[i].step <= checkpoints[i - 1].step)
      fail(
        `checkpoints[${i}].step`,
        `${checkpoints[i].step} does not follow ${checkpoints[i - 1].step} (steps must increase)`,
      );

  let shippedNote: string | null = null;
  if (j.shippedNote !== undefined && j.shippedNote !== null) {
    if (typeof j.shippedNote !== 'string' || j.shippedNote.length > LIM.maxNoteChars)
      fail('shippedNote', `must be text of at most ${LIM.maxNoteChars} characters`);
    shippedNote = (j.shippedNote as string).trim() || null;
  }
  return {
    config: cfg,
    trainerConfig,
    symbols: symbols as string[],
    unknownId,
    checkpoints,
    shippedNote,
    corpus: corpusOf(j.corpus),
  };
}

/** The corpus's names, when every one is a short string (they are only shown, never used). */
function corpusOf(c: unknown): TextModelInfo['corpus'] {
  if (!isObj(c) || !isObj(c.split)) return null;
  const v = [c.package, c.version, c.split.train, c.split.heldOut];
  if (!v.every((x) => typeof x === 'string' && x.length > 0 && x.length <= 100)) return null;
  const [pkg, version, train, heldOut] = v as string[];
  return { package: pkg, version, train, heldOut };
}

function readCheckpointInfo(
  ck: unknown,
  where: string,
  cfg: TextModelConfig,
  fail: (field: string, detail: string) => never,
): CheckpointInfo {
  if (!isObj(ck)) return fail(where, 'not an object');
  const step = ck.step;
  if (typeof step !== 'number' || !Number.isSafeInteger(step) || step < 0)
    fail(`${where}.step`, `must be a whole number ≥ 0 (got ${short(step)})`);
  const tokens = ck.tokens;
  if (typeof tokens !== 'number' || !Number.isFinite(tokens) || tokens < 0)
    fail(`${where}.tokens`, `must be a number ≥ 0 (got ${short(tokens)})`);
  const file = ck.file;
  // A plain name beside model.json: never a path (the page fetches it relative to model.json).
  if (typeof file !== 'string' || !/^[A-Za-z0-9_-][A-Za-z0-9_.-]{0,99}\.npz$/.test(file))
    fail(`${where}.file`, `must be a file name ending in .npz (got ${short(file)})`);
  const num = (name: string): number | null => {
    const v = ck[name];
    if (v === undefined || v === null) return null;
    if (typeof v !== 'number' || !Number.isFinite(v)) fail(`${where}.${name}`, `must be a number (got ${short(v)})`);
    return v as number;
  };
  let heads: HeadGrid | null = null;
  if (ck.heads !== undefined && ck.heads !== null) {
    if (!isObj(ck.heads)) return fail(`${where}.heads`, 'not an object');
    const grid = (name: 'induction' | 'previous'): (number | null)[][] => {
      const g = (ck.heads as Record<string, unknown>)[name];
      const f = `${where}.heads.${name}`;
      if (!Array.isArray(g) || g.length !== cfg.layers) return fail(f, `must be ${cfg.layers} lists (one per layer)`);
      return g.map((row, l) => {
        if (!Array.isArray(row) || row.length !== cfg.heads)
          return fail(`${f}[${l}]`, `must be a list of ${cfg.heads} numbers (one per head)`);
        return row.map((v, h) => {
          if (v === null) return null;
          if (typeof v !== 'number' || !Number.isFinite(v)) fail(`${f}[${l}][${h}]`, `not a number (${short(v)})`);
          return v as number;
        });
      });
    };
    heads = { induction: grid('induction'), previous: grid('previous') };
  }
  return {
    step: step as number,
    tokens: tokens as number,
    file: file as string,
    heldOutLoss: num('heldOutLoss'),
    inContext: num('inContext'),
    induction: num('induction'),
    previous: num('previous'),
    heads,
  };
}

function short(v: unknown): string {
  let s: string;
  try {
    s = typeof v === 'string' ? `“${v}”` : (JSON.stringify(v) ?? String(v));
  } catch {
    s = String(v);
  }
  return s.length > 60 ? s.slice(0, 60) + '…' : s;
}

// ---------------------------------------------------------------- the arrays

/** Every array a checkpoint holds, by its name in the .npz, with its shape (docs/text-model.md). */
export function expectedArrays(cfg: TextModelConfig): Map<string, number[]> {
  const { vocab: V, seqLen: T, dModel: D, heads: H, kvHeads: Hkv } = cfg;
  const dh = D / H;
  const m = new Map<string, number[]>([['embed', [V, D]]]);
  if (WITH_TABLE.includes(cfg.positional)) m.set('pos', [T, D]);
  for (let l = 0; l < cfg.layers; l++) {
    m.set(`layers.${l}.wq`, [D, H * dh]);
    m.set(`layers.${l}.wk`, [D, Hkv * dh]);
    m.set(`layers.${l}.wv`, [D, Hkv * dh]);
    m.set(`layers.${l}.wo`, [H * dh, D]);
  }
  if (cfg.layerNorm) {
    m.set('ln_gain', [D]);
    m.set('ln_bias', [D]);
  }
  m.set('unembed', [D, V]);
  return m;
}

function paramCount(cfg: TextModelConfig): number {
  let n = 0;
  for (const s of expectedArrays(cfg).values()) n += s.reduce((a, b) => a * b, 1);
  return n;
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
