// What the text model's `model.json` says (docs/text-model.md, "What is written"), read and
// checked without DOM: the config (and the arrays and shapes it implies), the char tokenizer, the
// checkpoints with the trainer's figures, the optional shippedNote. Anything missing, malformed
// or out of range is a ModelFileError naming the file and the field. The checkpoints themselves
// are read by model-files.ts.

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
  /** Held-out windows and probe rows a knock-out is measured on (the core's cap per call). */
  maxWindows: 4096,
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

/** One of the trainer's targets (docs/text-model.md): what it asks, the figure, met or not. */
export interface TextTarget {
  name: string;
  want: string;
  got: number | null;
  met: boolean;
}

export interface TextModelInfo {
  config: TextModelConfig;
  /** What createTrainer is given (the forward's fields of model.json's config). */
  trainerConfig: Record<string, unknown>;
  /** model.json's tokenizer (makeTokenizer in tokenizer.ts builds the encoder). */
  tokenizer: TokenizerSpec;
  checkpoints: CheckpointInfo[];
  /** What the shipped model misses, when model.json says so. */
  shippedNote: string | null;
  /** The fraction of training rows that ended in a repeated passage (training.repeat; null without). */
  repeat: number | null;
  /** The trainer's targets judged on the last checkpoint (model.json's `targets`; [] without). */
  targets: TextTarget[];
  /** model.json's `corpus`, when it names its package and split (else null). */
  corpus: { package: string; version: string; train: string; heldOut: string } | null;
  /** The trainer's held-out windows as text (evaluation.windowText; null without): what a
   *  knock-out's held-out loss is measured on. */
  heldOutWindows: string[] | null;
  /** The same windows as ids (evaluation.windowIds, which a SentencePiece model's file carries: a
   *  window cut in token space need not encode back to the same ids); null without. */
  heldOutWindowIds: number[][] | null;
  /** How the trainer drew its probe (model.json's probe: rows, seed, candidateIds; null
   *  without): the page draws the same one with the core's makeProbe. */
  probe: { rows: number; seed: number; candidateIds: number[] } | null;
}

/** model.json's tokenizer: characters, or SentencePiece BPE pieces (scripts/text-model/spm.py). */
export type TokenizerSpec =
  | { kind: 'char'; symbols: string[]; unknownId: number }
  | { kind: 'sentencepiece'; pieces: string[]; scores: number[]; types: number[]; unknownId: number };

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

  const tokenizer = tokenizerOf(j.tokenizer, vocab, fail);

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
  const targets: TextTarget[] = [];
  if (j.targets !== undefined && j.targets !== null) {
    if (!Array.isArray(j.targets) || j.targets.length > 16) fail('targets', 'must be a list of at most 16 targets');
    (j.targets as unknown[]).forEach((t, i) => {
      const at = `targets[${i}]`;
      if (!isObj(t)) return fail(at, 'must be an object { name, want, got, met }');
      if (typeof t.name !== 'string' || t.name.length > 40) fail(`${at}.name`, 'must be text of at most 40 characters');
      if (typeof t.want !== 'string' || t.want.length > 300)
        fail(`${at}.want`, 'must be text of at most 300 characters');
      if (t.got !== null && !(typeof t.got === 'number' && Number.isFinite(t.got)))
        fail(`${at}.got`, 'must be a finite number or null');
      if (typeof t.met !== 'boolean') fail(`${at}.met`, 'must be true or false');
      targets.push({
        name: t.name as string,
        want: t.want as string,
        got: t.got as number | null,
        met: t.met as boolean,
      });
    });
  }
  const tr = isObj(j.training) ? j.training : {};
  const rep = tr.repeat;
  if (rep !== undefined && !(typeof rep === 'number' && rep >= 0 && rep <= 1))
    fail('training.repeat', 'must be a fraction in [0, 1]');
  return {
    config: cfg,
    trainerConfig,
    tokenizer,
    checkpoints,
    shippedNote,
    repeat: typeof rep === 'number' ? rep : null,
    targets,
    corpus: corpusOf(j.corpus),
    heldOutWindows: tokenizer.kind === 'char' ? windowsOf(j.evaluation, seqLen, fail) : null,
    heldOutWindowIds: windowIdsOf(j.evaluation, seqLen, vocab, fail),
    probe: probeOf(j.probe, vocab, fail),
  };
}

/** tokenizer: { kind: 'char', symbols, unknown } or { kind: 'sentencepiece', pieces, scores,
 *  types, unknownId, normalization: 'identity', addDummyPrefix: false } (the one SentencePiece
 *  set-up BpeTokenizer encodes exactly; any other is refused by name). */
function tokenizerOf(tk: unknown, vocab: number, fail: (field: string, detail: string) => never): TokenizerSpec {
  if (!isObj(tk)) return fail('tokenizer', 'missing or not an object');
  if (tk.kind === 'sentencepiece') {
    if (tk.model !== 'bpe') fail('tokenizer.model', `${short(tk.model)} is not read (only “bpe”)`);
    if (tk.normalization !== 'identity')
      fail('tokenizer.normalization', `${short(tk.normalization)} is not read (only “identity”)`);
    if (tk.addDummyPrefix !== false) fail('tokenizer.addDummyPrefix', 'must be false (the only form read)');
    const list = (name: 'pieces' | 'scores' | 'types'): unknown[] => {
      const v = tk[name];
      if (!Array.isArray(v) || v.length !== vocab)
        return fail(`tokenizer.${name}`, `must be a list of ${vocab} entries (config.vocab)`);
      return v;
    };
    const pieces = list('pieces'),
      scores = list('scores'),
      types = list('types');
    const seen = new Set<string>();
    pieces.forEach((p, i) => {
      if (typeof p !== 'string' || p.length === 0 || p.length > 64)
        fail(`tokenizer.pieces[${i}]`, `must be a text of 1 to 64 characters (got ${short(p)})`);
      if (seen.has(p as string)) fail(`tokenizer.pieces[${i}]`, `“${p as string}” appears twice`);
      seen.add(p as string);
    });
    scores.forEach((x, i) => {
      if (typeof x !== 'number' || !Number.isFinite(x)) fail(`tokenizer.scores[${i}]`, `not a number (${short(x)})`);
    });
    types.forEach((x, i) => {
      if (x !== 1 && x !== 2 && x !== 4)
        fail(`tokenizer.types[${i}]`, `must be 1, 2 or 4 (normal, unknown, user-defined; got ${short(x)})`);
    });
    const unknownId = tk.unknownId;
    if (
      typeof unknownId !== 'number' ||
      !Number.isInteger(unknownId) ||
      unknownId < 0 ||
      unknownId >= vocab ||
      types[unknownId] !== 2
    )
      fail('tokenizer.unknownId', 'must be the id of the one piece of type 2 (unknown)');
    if (types.filter((t) => t === 2).length !== 1)
      fail('tokenizer.types', 'must hold exactly one unknown piece (type 2)');
    return {
      kind: 'sentencepiece',
      pieces: pieces as string[],
      scores: scores as number[],
      types: types as number[],
      unknownId: unknownId as number,
    };
  }
  if (tk.kind !== 'char') fail('tokenizer.kind', `${short(tk.kind)} is not read (only “char” and “sentencepiece”)`);
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
  return { kind: 'char', symbols: symbols as string[], unknownId };
}

/** evaluation.windowIds: at most maxWindows lists of seqLen token ids. */
function windowIdsOf(
  e: unknown,
  seqLen: number,
  vocab: number,
  fail: (field: string, detail: string) => never,
): number[][] | null {
  if (!isObj(e) || e.windowIds === undefined || e.windowIds === null) return null;
  const w = e.windowIds;
  if (!Array.isArray(w) || w.length < 1 || w.length > LIM.maxWindows)
    return fail('evaluation.windowIds', `must be a list of 1 to ${LIM.maxWindows} lists of ids`);
  w.forEach((ids, i) => {
    if (!Array.isArray(ids) || ids.length !== seqLen)
      fail(`evaluation.windowIds[${i}]`, `must be a list of ${seqLen} token ids (config.seqLen)`);
    (ids as unknown[]).forEach((x) => {
      if (typeof x !== 'number' || !Number.isInteger(x) || x < 0 || x >= vocab)
        fail(`evaluation.windowIds[${i}]`, `must hold token ids from 0 to ${vocab - 1} (got ${short(x)})`);
    });
  });
  return w as number[][];
}

/** evaluation.windowText: at most maxWindows texts of exactly seqLen characters (code points). */
function windowsOf(e: unknown, seqLen: number, fail: (field: string, detail: string) => never): string[] | null {
  if (!isObj(e) || e.windowText === undefined || e.windowText === null) return null;
  const w = e.windowText;
  if (!Array.isArray(w) || w.length < 1 || w.length > LIM.maxWindows)
    return fail('evaluation.windowText', `must be a list of 1 to ${LIM.maxWindows} texts`);
  w.forEach((x, i) => {
    if (typeof x !== 'string' || x.length > 2 * seqLen || Array.from(x).length !== seqLen)
      fail(`evaluation.windowText[${i}]`, `must be a text of ${seqLen} characters (config.seqLen)`);
  });
  return w as string[];
}

/** probe: { rows, seed, candidateIds } when candidateIds is there (older files have only a count). */
function probeOf(p: unknown, vocab: number, fail: (field: string, detail: string) => never): TextModelInfo['probe'] {
  if (!isObj(p) || p.candidateIds === undefined || p.candidateIds === null) return null;
  const { rows, seed, candidateIds: ids } = p;
  if (typeof rows !== 'number' || !Number.isInteger(rows) || rows < 1 || rows > LIM.maxWindows)
    fail('probe.rows', `must be a whole number from 1 to ${LIM.maxWindows} (got ${short(rows)})`);
  if (typeof seed !== 'number' || !Number.isSafeInteger(seed) || seed < 0)
    fail('probe.seed', `must be a whole number from 0 to 2^53 − 1 (got ${short(seed)})`);
  if (!Array.isArray(ids) || ids.length < 1 || ids.length > vocab)
    return fail('probe.candidateIds', `must be a list of 1 to ${vocab} token ids (config.vocab)`);
  ids.forEach((x, i) => {
    if (typeof x !== 'number' || !Number.isInteger(x) || x < 0 || x >= vocab)
      fail(`probe.candidateIds[${i}]`, `must be a token id from 0 to ${vocab - 1} (got ${short(x)})`);
  });
  return { rows: rows as number, seed: seed as number, candidateIds: ids as number[] };
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
