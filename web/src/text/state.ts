// The Text model tab's sub-state (state.text): rows of the state table (app/state.ts explains how
// a tab adds its sub-state). The student's text, the checkpoint shown and the selected head.
// compute: false everywhere: the tab runs its own Worker. The model's sizes are not known here
// (model.json is fetched when the view opens), so the checkpoint and the head are checked against
// the model by the view, which says what it used instead. Imports only foundations.
import LZString from 'lz-string';
import { brief, decodeComponent, int, real, yesNo, type Kind } from '../state/fields';
import type { SubState } from '../state/table';

export interface TextState {
  /** The student's text, as typed (the view keeps its last seqLen tokens). */
  text: string;
  /** The checkpoint's step; −1 = the last one of the model. */
  ckpt: number;
  /** The selected head as `layer.head`, counted from 1 as the page counts them ('2.3'). */
  head: string;
  /** "Continue the text": tokens to generate (the view caps it at seqLen − prompt length). */
  dlen: number;
  /** Temperature; 0 = greedy, more = sampled. */
  temp: number;
  /** Keep the k most probable tokens (0 = off). */
  topk: number;
  /** Keep the most probable tokens up to probability p (1 = off). */
  topp: number;
  /** The sampler's seed (Rng(seed), one draw per token). */
  sseed: number;
  /** Generate on opening the link (the continuation is part of what the link shows). */
  tgen: boolean;
}

export interface TextSlice {
  text: TextState;
}

export const TEXT_LIMITS = {
  /** Characters (code points) a link may hold; more are cut with a notice. The model reads only
   *  its last seqLen of them. */
  maxChars: 4000,
  /** Text whose plain encoding is longer than this goes into the link lz-string compressed
   *  (`tx=`), as long token lists do (`tz=`). */
  compressAbove: 300,
  maxStep: 1e12,
  /** Layer and head numbers a link may name (the model's own counts are checked by the view). */
  maxIndex: 64,
  /** Continuation length, temperature, top-k and seed a link may ask for. */
  maxGen: 8192,
  maxTemp: 10,
  maxTopK: 65536,
  maxSeed: 4294967295,
} as const;

const toppBase = real<TextSlice>(0, 1);
/** top-p in (0, 1]: 0 keeps nothing, so it is refused (with a notice) and 1 (off) used. */
export const toppKind: Kind<number, TextSlice> = {
  ...toppBase,
  normalize(v, c) {
    const x = toppBase.normalize(v, c);
    if (x > 0) return x;
    c.notices.push(`${c.label}: must be more than 0 (1 = off); using 1`);
    return 1;
  },
};

/** A short sentence with a phrase said twice: the second "Mr. Lincoln" can be read from the first. */
export const DEFAULT_TEXT = 'Mr. Lincoln spoke to the Congress, and then Mr. Lincoln spoke to the people.';

// Unpaired UTF-16 surrogates cannot be percent-encoded (encodeURIComponent throws on them).
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;

/** Text: `text=<percent-encoded>`, or `tx=<lz-string>` when that is long. Empty text is kept
 *  (the student is typing anew); a lone surrogate becomes U+FFFD; at most maxChars code points. */
export const textKind: Kind<string, TextSlice> = {
  aliases: ['tx'],
  same: (a, b) => a === b,
  format(v, key) {
    const plain = encodeURIComponent(v);
    return plain.length > TEXT_LIMITS.compressAbove ? ['tx', LZString.compressToEncodedURIComponent(v)] : [key, plain];
  },
  parse(raw, key, notices) {
    const v = decodeComponent(raw, true);
    if (v === null) notices.push(`setting “${key}” is not valid percent-encoding; it was ignored`);
    return v ?? undefined;
  },
  read(fields, key, notices) {
    const tx = fields.get('tx');
    const plain = fields.get(key);
    if (tx === undefined) return plain === undefined ? undefined : this.parse(plain, key, notices);
    if (plain !== undefined) notices.push('text: both “text” and “tx” were given; “text” was ignored');
    let v: string | null = null;
    try {
      v = LZString.decompressFromEncodedURIComponent(tx);
    } catch {
      v = null;
    }
    if (typeof v !== 'string' || (v === '' && tx !== '')) {
      notices.push('text: the compressed text is corrupt; using the example sentence');
      return undefined;
    }
    return v;
  },
  normalize(v, c) {
    if (typeof v !== 'string') {
      c.notices.push(`${c.label}: not text; using the example sentence`);
      return DEFAULT_TEXT;
    }
    let t = v.replace(LONE_SURROGATE, '\ufffd');
    if (t !== v) c.notices.push(`${c.label}: unpaired UTF-16 surrogates were replaced by U+FFFD`);
    const chars = Array.from(t);
    if (chars.length > TEXT_LIMITS.maxChars) {
      c.notices.push(
        `${c.label}: ${chars.length.toLocaleString('en')} characters is more than the limit of ${TEXT_LIMITS.maxChars.toLocaleString('en')}; kept the last ${TEXT_LIMITS.maxChars.toLocaleString('en')}`,
      );
      t = chars.slice(-TEXT_LIMITS.maxChars).join('');
    }
    return t;
  },
};

const HEAD_RE = /^([1-9]\d{0,2})\.([1-9]\d{0,2})$/;

/** A head as `layer.head` (from 1), e.g. `2.3`. */
export const headKind: Kind<string, TextSlice> = {
  same: (a, b) => a === b,
  format: (v, key) => [key, v],
  parse(raw, key, notices) {
    const v = decodeComponent(raw, true);
    if (v === null) notices.push(`setting “${key}” is not valid percent-encoding; it was ignored`);
    return v ?? undefined;
  },
  normalize(v, c) {
    const m = typeof v === 'string' ? HEAD_RE.exec(v.trim()) : null;
    if (!m || Number(m[1]) > TEXT_LIMITS.maxIndex || Number(m[2]) > TEXT_LIMITS.maxIndex) {
      c.notices.push(
        `${c.label}: “${brief(v)}” is not layer.head (two whole numbers from 1, e.g. 2.1); using ${String(c.fallback)}`,
      );
      return c.fallback as string;
    }
    return `${Number(m[1])}.${Number(m[2])}`;
  },
};

/** The selected head, 0-based, from its `layer.head` text. */
export function parseHead(v: string): { layer: number; head: number } {
  const m = HEAD_RE.exec(v) ?? ['', '1', '1'];
  return { layer: Number(m[1]) - 1, head: Number(m[2]) - 1 };
}

/** A head's name in the page's text, counted from 1 as the rest of the page counts them. */
export function headLabel(layer: number, head: number): string {
  return `L${layer + 1} H${head + 1}`;
}

/** The `layer.head` text of a 0-based head. */
export function headText(layer: number, head: number): string {
  return `${layer + 1}.${head + 1}`;
}

export const TEXT: SubState<TextState, TextSlice> = {
  fields: {
    text: { key: 'text', label: 'text model: text', kind: textKind, default: DEFAULT_TEXT, compute: false },
    ckpt: {
      key: 'ckpt',
      label: 'text model: checkpoint step',
      kind: int(-1, TEXT_LIMITS.maxStep),
      default: -1,
      compute: false,
    },
    head: { key: 'thead', label: 'text model: head', kind: headKind, default: '1.1', compute: false },
    dlen: {
      key: 'dlen',
      label: 'text model: tokens to generate',
      kind: int(1, TEXT_LIMITS.maxGen),
      default: 40,
      compute: false,
    },
    temp: {
      key: 'temp',
      label: 'text model: temperature',
      kind: real(0, TEXT_LIMITS.maxTemp),
      default: 0,
      compute: false,
    },
    topk: { key: 'topk', label: 'text model: top-k', kind: int(0, TEXT_LIMITS.maxTopK), default: 0, compute: false },
    topp: { key: 'topp', label: 'text model: top-p', kind: toppKind, default: 1, compute: false },
    sseed: {
      key: 'sseed',
      label: 'text model: sampling seed',
      kind: int(0, TEXT_LIMITS.maxSeed),
      default: 0,
      compute: false,
    },
    tgen: { key: 'tgen', label: 'text model: continue the text', kind: yesNo(), default: false, compute: false },
  },
};
