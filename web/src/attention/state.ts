// The attention feature's sub-state (state.model): what the heatmap Worker computes — tokens,
// weights, mask, scale — as rows of the state table (state/table.ts explains rows and kinds), and
// the zoomed head's kind (the page's `head` field, whose limit is this model's head count).
// Pure: no DOM, no globals.
import LZString from 'lz-string';
import {
  brief,
  clampNumber,
  decodeComponent,
  int,
  oneOf,
  positions,
  real,
  textKind,
  yesNo,
  type Kind,
} from '../state/fields';
import type { SubState } from '../state/table';
import { arraysMode, type ArraysSlice } from './arrays/state';

/** The part of the whole state this feature reads: its limits depend only on the model. */
export interface ModelSlice {
  model: ModelState;
}

export const MODEL_LIMITS = {
  maxT: 256,
  maxTokenLength: 32,
  maxHeads: 8,
  maxDModel: 512,
  maxDk: 1024,
  maxSharp: 100,
  maxScale: 1000,
  /** The core needs a positive scale (0 would make every score 0; it refuses it). */
  minScale: 0.001,
  maxSeed: 0xffffffff,
  /** Token lists whose plain encoding is longer than this are lz-string compressed. */
  compressAbove: 300,
} as const;

export type Source = 'induction' | 'random';
/** Random model only: 'normal' = every weight N(0,1), as lesson 2 draws it; 'scaled' = N(0, 1/d_model). */
export type WeightInit = 'normal' | 'scaled';
/** Random model only: the core's generator. 'splitmix' = SplitMix64 + Box–Muller (the default);
 *  'numpy' = NumPy's default_rng(seed) stream, so lesson 2's X, Wq, Wk, Wv come out bit for bit. */
export type Generator = 'splitmix' | 'numpy';
export type Fill = 'neg_inf' | 'finite' | 'zero';
/** 'sqrt' = 1/sqrt(d_k) (the lesson's default), 'none' = 1 (the "delete the sqrt" experiment), or a custom number. */
export type Scale = 'sqrt' | 'none' | number;

/** What the heatmap Worker computes. */
export interface ModelState {
  source: Source;
  tokens: string[];
  /** Keys' and values' tokens: non-empty = cross-attention (queries from tokens, keys and values
   *  from these); [] = the sentence attends to itself. */
  kvTokens: string[];
  /** Sharpness of the hand-built induction model (lesson 1 uses 14). */
  sharpness: number;
  /** Seed of the random weights. */
  seed: number;
  init: WeightInit;
  generator: Generator;
  /** Random model only: query heads, K/V heads (GQA/MQA), d_model, d_k. */
  heads: number;
  kvHeads: number;
  dModel: number;
  dK: number;
  causal: boolean;
  /** Sliding window width; 0 = off. */
  window: number;
  /** Key positions marked as padding (sorted, unique, 0-based). */
  padding: number[];
  fill: Fill;
  scale: Scale;
}

export const LESSON_SENTENCE = 'the cat sat on the mat because the cat was tired'.split(' ');

/** The induction example is lesson 1's two-head model; its shape is fixed by the core. */
export const INDUCTION_HEADS = 2;

export const FILLS: readonly Fill[] = ['neg_inf', 'finite', 'zero'];
export const FILL_LABEL: Record<Fill, string> = {
  neg_inf: '−∞ (fully masked row → NaN)',
  finite: '−1e9 (fully masked row → uniform)',
  zero: 'zero row (fully masked row → 0)',
};

/** Split user text into tokens (whitespace separated). */
export function splitTokens(text: string): string[] {
  return text.split(/\s+/u).filter((t) => t.length > 0);
}

// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u001f\u007f-\u009f\u200b-\u200f\u202a-\u202e\u2066-\u2069]/gu;

/** Tokens: written `tokens=the+cat` (each token percent-encoded), or `tz=<lz-string>` when long. */
const tokenKind: Kind<string[], ModelSlice> = {
  aliases: ['tz'],
  same: (a, b) => a.length === b.length && a.every((x, i) => x === b[i]),
  format(v, key) {
    const plain = v.map((t) => encodeURIComponent(t)).join('+');
    return plain.length > MODEL_LIMITS.compressAbove
      ? ['tz', LZString.compressToEncodedURIComponent(v.join(' '))]
      : [key, plain];
  },
  // '+' separates tokens; each token was percent-encoded.
  parse: (raw) =>
    raw
      .split('+')
      .map((t) => decodeComponent(t, false) ?? '')
      .filter((t) => t !== ''),
  read(fields, key, notices) {
    const tz = fields.get('tz');
    const plain = fields.get(key);
    if (tz === undefined) return plain === undefined ? undefined : this.parse(plain, key, notices);
    if (plain !== undefined) notices.push('tokens: both “tokens” and “tz” were given; “tokens” was ignored');
    let list: string | null = null;
    try {
      list = LZString.decompressFromEncodedURIComponent(tz);
    } catch {
      list = null;
    }
    if (typeof list !== 'string' || list.trim() === '') {
      notices.push('tokens: the compressed token list is corrupt; using the lesson sentence');
      return undefined;
    }
    return list.split(/\s+/u).filter((t) => t !== '');
  },
  normalize(v, c) {
    const tokens = cleanTokens(v, 'tokens', c.notices);
    if (tokens.length > 0) return tokens;
    c.notices.push('tokens: the token list was empty; using the lesson sentence');
    return [...LESSON_SENTENCE];
  },
};

/** Keys' and values' tokens (cross-attention): written `kvtokens=le+chat` like `tokens`; empty
 *  (the default) = the sentence attends to itself. */
const kvTokenKind: Kind<string[], ModelSlice> = {
  same: tokenKind.same,
  format: (v, key) => [key, v.map((t) => encodeURIComponent(t)).join('+')],
  parse(raw, key, notices) {
    const parts = raw.split('+').map((t) => decodeComponent(t, false));
    if (parts.some((t) => t === null)) notices.push(`${key}: a token is not valid percent-encoding; it was left out`);
    return parts.filter((t): t is string => t !== null && t !== '');
  },
  normalize: (v, c) => cleanTokens(v, 'kvtokens', c.notices),
};

/** Tokens as the page takes them: invisible control characters stripped, each at most
 *  maxTokenLength characters, at most maxT of them (each cut said in a notice). */
function cleanTokens(v: unknown, label: string, notices: string[]): string[] {
  let stripped = false;
  let cut = false;
  let tokens = (Array.isArray(v) ? (v as unknown[]) : [])
    .map((t) => String(t))
    .map((t) => {
      const x = t.replace(CONTROL, '');
      if (x !== t) stripped = true;
      return x;
    })
    .flatMap((t) => splitTokens(t))
    .map((t) => {
      const chars = Array.from(t);
      if (chars.length <= MODEL_LIMITS.maxTokenLength) return t;
      cut = true;
      return chars.slice(0, MODEL_LIMITS.maxTokenLength).join('');
    });
  if (stripped) notices.push(`${label}: invisible control characters were removed`);
  if (cut) notices.push(`${label}: tokens longer than ${MODEL_LIMITS.maxTokenLength} characters were shortened`);
  if (tokens.length > MODEL_LIMITS.maxT) {
    notices.push(
      `${label}: ${tokens.length} tokens is more than the limit of ${MODEL_LIMITS.maxT}; kept the first ${MODEL_LIMITS.maxT}`,
    );
    tokens = tokens.slice(0, MODEL_LIMITS.maxT);
  }
  return tokens;
}

/** Scale: `sqrt`, `none` or a positive number. */
const scaleKind: Kind<Scale, ModelSlice> = {
  same: (a, b) => a === b,
  format: (v, key) => [key, String(v)],
  parse(raw, key, notices) {
    const v = decodeComponent(raw, true);
    if (v === null) {
      notices.push(`setting “${key}” is not valid percent-encoding; it was ignored`);
      return undefined;
    }
    if (v === 'sqrt' || v === 'none') return v;
    const x = Number(/^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/.test(v.trim()) ? v : NaN);
    if (Number.isNaN(x)) {
      notices.push(`scale: “${brief(v)}” is not sqrt, none or a number; using sqrt`);
      return undefined;
    }
    return x;
  },
  normalize(v, c) {
    if (v === 'sqrt' || v === 'none') return v;
    if (typeof v !== 'number' || !Number.isFinite(v)) {
      c.notices.push('scale: not a number; using 1/√d_k');
      return 'sqrt';
    }
    if (v < MODEL_LIMITS.minScale || v > MODEL_LIMITS.maxScale) {
      const x = Math.min(Math.max(v, MODEL_LIMITS.minScale), MODEL_LIMITS.maxScale);
      c.notices.push(`scale: ${v} is outside ${MODEL_LIMITS.minScale}…${MODEL_LIMITS.maxScale}; using ${x}`);
      return x;
    }
    return v;
  },
};

/** Number of query heads the computation will have. */
export function effectiveHeads(s: ModelSlice): number {
  return s.model.source === 'induction' ? INDUCTION_HEADS : s.model.heads;
}
export function effectiveKvHeads(s: ModelSlice): number {
  return s.model.source === 'induction' ? INDUCTION_HEADS : s.model.kvHeads;
}

const T = (s: ModelSlice) => s.model.tokens.length;
/** T_k: the keys' positions (the second sentence's in cross-attention). Padding marks keys. */
const Tk = (s: ModelSlice) => (s.model.kvTokens?.length ? s.model.kvTokens.length : T(s));
/** A link carrying lesson 2's X, W_q, W_k, W_v: one head (lesson 2's) unless it says `heads`, not
 *  the page's example's 2 (the arrays sub-state is read from the whole state the codec passes). */
const projections = (s: ModelSlice) => arraysMode((s as ModelSlice & Partial<ArraysSlice>).arrays) === 'projections';

export const MODEL: SubState<ModelState, ModelSlice> = {
  fields: {
    source: {
      key: 'src',
      label: 'weights source',
      kind: oneOf(['induction', 'random'] as const, (l, v, fallback) =>
        v === 'text'
          ? `${l} “text”: the model trained on real text has its own tab, Text (view=text, with text=…); these views show the hand-built (induction) or random heads, so using ${fallback}`
          : `${l} “${v}” is unknown; using ${fallback}`,
      ),
      default: 'induction',
      compute: true,
    },
    tokens: { key: 'tokens', label: 'tokens', kind: tokenKind, default: [...LESSON_SENTENCE], compute: true },
    kvTokens: { key: 'kvtokens', label: 'kvtokens', kind: kvTokenKind, default: [], compute: true },
    sharpness: { key: 'sharp', label: 'sharpness', kind: real(0, MODEL_LIMITS.maxSharp), default: 14, compute: true },
    seed: { key: 'seed', label: 'seed', kind: int(0, MODEL_LIMITS.maxSeed), default: 0, compute: true },
    init: {
      key: 'init',
      label: 'weight init',
      kind: oneOf(['normal', 'scaled'] as const, (l, v) => `${l} “${v}” is unknown; using N(0,1)`),
      default: 'normal',
      compute: true,
    },
    generator: {
      key: 'gen',
      label: 'generator',
      kind: oneOf(['splitmix', 'numpy'] as const),
      default: 'splitmix',
      compute: true,
    },
    heads: {
      key: 'heads',
      label: 'heads',
      kind: int(1, MODEL_LIMITS.maxHeads),
      default: 2,
      linkDefault: (s) => (projections(s) ? 1 : 2),
      compute: true,
    },
    kvHeads: {
      key: 'kv',
      label: 'K/V heads',
      kind: int(1, (s) => s.model.heads),
      default: 2,
      fallback: (s) => Math.min(2, s.model.heads),
      linkDefault: (s) => (projections(s) ? s.model.heads : 2),
      compute: true,
    },
    dModel: { key: 'dm', label: 'd_model', kind: int(1, MODEL_LIMITS.maxDModel), default: 8, compute: true },
    dK: { key: 'dk', label: 'd_k', kind: int(1, MODEL_LIMITS.maxDk), default: 4, compute: true },
    causal: { key: 'causal', label: 'causal', kind: yesNo(), default: true, compute: true },
    window: { key: 'win', label: 'window', kind: int(0, T), default: 0, compute: true },
    padding: { key: 'pad', label: 'padding', kind: positions((s) => Tk(s) - 1), default: [], compute: true },
    fill: {
      key: 'fill',
      label: 'mask fill',
      kind: oneOf(FILLS, (l, v) => `${l} “${v}” is unknown; using −∞`),
      default: 'neg_inf',
      compute: true,
    },
    scale: { key: 'scale', label: 'scale', kind: scaleKind, default: 'sqrt', compute: true },
  },
  fix(s, notices) {
    const m = s.model;
    if (m.heads % m.kvHeads !== 0) {
      let k = m.kvHeads;
      while (m.heads % k !== 0) k -= 1;
      notices.push(`K/V heads: ${m.kvHeads} does not divide ${m.heads} heads; using ${k}`);
      m.kvHeads = k;
    }
  },
};

/** The zoomed head: 0-based in the state, 1-based in notices ("Head 2 of 2" on the page). */
export const headKind: Kind<number, ModelSlice> = {
  ...int<ModelSlice>(0, (s) => effectiveHeads(s) - 1),
  normalize(v, c) {
    const H = effectiveHeads(c.state);
    const quiet: string[] = [];
    const head = clampNumber('selected head', v, 0, H - 1, 0, quiet, true);
    if (quiet.length > 0) {
      // The hand-built model always has its 2 heads: say so, or "heads: … using 8" above reads as
      // a contradiction of "heads 1…2" here.
      const why =
        c.state.model.source === 'induction' && c.state.model.heads !== H
          ? `; lesson 1’s hand-built model has ${H} heads whatever the link’s heads says (that applies to random weights)`
          : '';
      c.notices.push(
        typeof v === 'number' && Number.isInteger(v)
          ? `selected head: there is no head ${v + 1} (heads 1…${H}${why}); showing head ${head + 1}`
          : `selected head: “${brief(v)}” is not a head number; showing head ${head + 1}`,
      );
    }
    return head;
  },
};

/** The cell "Why this weight?" takes apart: [head, query, key], 0-based (link `cell=0,8,1`), or []
 *  for none. Checked against the model's heads and the page's largest T; a cell outside them is
 *  dropped with a notice (one past this state's T is the core's to refuse, and the panel says so). */
export const cellKind: Kind<number[], ModelSlice> = {
  same: (a, b) => a.length === b.length && a.every((x, i) => x === b[i]),
  format: (v, key) => [key, v.join(',')],
  parse(raw, key, notices) {
    const v = decodeComponent(raw, false);
    const parts = v === null ? [] : v.split(',').map((p) => (/^\d{1,6}$/.test(p.trim()) ? Number(p) : NaN));
    if (parts.length !== 3 || parts.some((p) => !Number.isInteger(p))) {
      notices.push(
        `cell: “${brief(v ?? raw)}” is not head,query,key (three whole numbers from 0); no cell is selected`,
      );
      return undefined;
    }
    return parts;
  },
  normalize(v, c) {
    if (!Array.isArray(v) || v.length === 0) return [];
    const H = effectiveHeads(c.state);
    const [h, i, j] = v as number[];
    const ok = (x: unknown, n: number) => typeof x === 'number' && Number.isInteger(x) && x >= 0 && x < n;
    if (v.length !== 3 || !ok(h, H) || !ok(i, MODEL_LIMITS.maxT) || !ok(j, MODEL_LIMITS.maxT)) {
      c.notices.push(
        `cell: ${brief(v.join(','))} is outside heads 0…${H - 1} and positions 0…${MODEL_LIMITS.maxT - 1}; no cell is selected`,
      );
      return [];
    }
    return [h, i, j];
  },
};

/** Several queries or keys of the zoomed head (links `qsel=2,3,4`, `ksel=1`, 0-based): what the
 *  Selection panel sums up. Positions past the page's largest T are dropped with a notice; ones
 *  past this state's T are named by the panel. */
export const selectionKind: Kind<number[], ModelSlice> = positions(MODEL_LIMITS.maxT - 1);

/** "Change it" recorded in a link when asked (`wif=q,2,1.5`: the selected cell's query (q) or key
 *  (k), the dimension, the value; a what-if on copies, the model unchanged), or '' for none. A
 *  value that is not that shape is dropped with a notice; a dimension past d_k is the panel's to
 *  name. */
export const whatIfKind = textKind<ModelSlice>((v, c) => {
  if (v === '' || typeof v !== 'string') return '';
  const m = /^([qk]),(\d{1,4}),(-?\d+(?:\.\d+)?(?:e[-+]?\d+)?)$/i.exec(v.trim());
  const x = m ? Number(m[3]) : NaN;
  if (!m || !Number.isFinite(x) || Math.abs(x) > 1e6) {
    c.notices.push(`${c.label}: “${brief(v)}” is not q|k,dimension,value (a value within ±10⁶); no change is applied`);
    return '';
  }
  return `${m[1].toLowerCase()},${Number(m[2])},${x}`;
});

/** The parts of a `wif` value (whatIfKind's canonical form), or null. */
export function parseWhatIf(v: string | undefined): { which: 'q' | 'k'; dim: number; value: number } | null {
  const m = /^([qk]),(\d+),(.+)$/.exec(v ?? '');
  return m ? { which: m[1] as 'q' | 'k', dim: Number(m[2]), value: Number(m[3]) } : null;
}
