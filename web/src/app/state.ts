// The playground's whole state, its defaults and its limits. Pure: no DOM, no globals.
import { defaultDecodeState, normalizeDecode, type DecodeState } from '../decode/state';

export type Source = 'induction' | 'random';
/** Random model only: 'normal' = every weight N(0,1), as lesson 2 draws it; 'scaled' = N(0, 1/d_model). */
export type WeightInit = 'normal' | 'scaled';
export type Fill = 'neg_inf' | 'finite' | 'zero';
/** 'sqrt' = 1/sqrt(d_k) (the lesson's default), 'none' = 1 (the "delete the sqrt" experiment), or a custom number. */
export type Scale = 'sqrt' | 'none' | number;

export interface State {
  src: Source;
  tokens: string[];
  /** Sharpness of the hand-built induction model (lesson 1 uses 14). */
  sharp: number;
  /** Seed of the random weights (uint32). */
  seed: number;
  /** How the random weights are scaled (the core's example('random', { init })). */
  init: WeightInit;
  /** Random model only: number of query heads, K/V heads (GQA/MQA), d_model, d_k. */
  heads: number;
  kv: number;
  dm: number;
  dk: number;
  causal: boolean;
  /** Sliding window width; 0 = off. */
  win: number;
  /** Key positions marked as padding (sorted, unique, 0-based). */
  pad: number[];
  fill: Fill;
  scale: Scale;
  /** Which view (tab) is shown. */
  view: string;
  /** The selected (zoomed) head, 0-based. */
  head: number;
  /** Timing lab: sweep T from tstart to tend by doubling (powers of two). */
  tstart: number;
  tend: number;
  /** Timing lab: d_model (width of X in the lesson's loop), d_k and heads. */
  tdm: number;
  tdk: number;
  th: number;
  /** Timing lab: which kernels to time. */
  tker: TimingKernels;
  tcausal: boolean;
  /** Timing lab: 'qkv' = random Q, K, V into core.attention; 'proj' = random X projected by Wq, Wk, Wv (lesson 2's loop). */
  tmode: TimingInput;
  /** Timing lab: module Workers each timed call is split across (1, 2 or 4; 1 = one wasm instance, the default). */
  tw: number;
  /** Decode tab (decode/state.ts): probe sequence, prompt tokens of the second copy, step shown
   *  (0 = end of the prompt), KV cache on, timing T range. */
  dseq: number;
  dkeep: number;
  dstep: number;
  dcache: boolean;
  dts: number;
  dte: number;
}

export type TimingKernels = 'both' | 'naive' | 'tiled';
export type TimingInput = 'qkv' | 'proj';
export const TIMING_KERNELS: readonly TimingKernels[] = ['both', 'naive', 'tiled'];
export const TIMING_INPUTS: readonly TimingInput[] = ['qkv', 'proj'];
export const TIMING_WORKERS: readonly number[] = [1, 2, 4];

export const LESSON_SENTENCE = 'the cat sat on the mat because the cat was tired'.split(' ');

export const LIMITS = {
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
  /** A longer hash is not parsed at all. Generous: a link with thousands of tokens is read and its
   *  token list cut to maxT with a notice, as pasted text is. */
  maxHashLength: 256 * 1024,
  /** Timing lab: T runs over powers of two in this range. */
  timingMinT: 8,
  timingMaxT: 16384,
  timingMaxDModel: 2048,
  timingMaxHeads: 16,
  /** Token lists whose plain encoding is longer than this are lz-string compressed. */
  compressAbove: 300,
} as const;

/** The induction example is lesson 1's two-head model; its shape is fixed by the core. */
export const INDUCTION_HEADS = 2;

/** Every view a link may name. A new view (e.g. the timing lab) adds its id here and in app/views.ts. */
export const VIEWS = ['heads', 'mask', 'scale', 'output', 'timing', 'decode'] as const;
export const FILLS: readonly Fill[] = ['neg_inf', 'finite', 'zero'];
export const FILL_LABEL: Record<Fill, string> = {
  neg_inf: '−∞ (fully masked row → NaN)',
  finite: '−1e9 (fully masked row → uniform)',
  zero: 'zero row (fully masked row → 0)',
};

export function defaultState(): State {
  return {
    src: 'induction',
    tokens: [...LESSON_SENTENCE],
    sharp: 14,
    seed: 0,
    init: 'normal',
    heads: 2,
    kv: 2,
    dm: 8,
    dk: 4,
    causal: true,
    win: 0,
    pad: [],
    fill: 'neg_inf',
    scale: 'sqrt',
    view: 'heads',
    head: 0,
    tstart: 64,
    tend: 4096,
    tdm: 512,
    tdk: 64,
    th: 1,
    tker: 'both',
    tcausal: false,
    tmode: 'qkv',
    tw: 1,
    ...decodeFields(defaultDecodeState()),
  };
}

function decodeFields(d: DecodeState): Pick<State, 'dseq' | 'dkeep' | 'dstep' | 'dcache' | 'dts' | 'dte'> {
  return { dseq: d.seq, dkeep: d.keep, dstep: d.step, dcache: d.cache, dts: d.tStart, dte: d.tEnd };
}

export function cloneState(s: State): State {
  return { ...s, tokens: [...s.tokens], pad: [...s.pad] };
}

/** Number of query heads the computation will have. */
export function effectiveHeads(s: State): number {
  return s.src === 'induction' ? INDUCTION_HEADS : s.heads;
}

export function effectiveKvHeads(s: State): number {
  return s.src === 'induction' ? INDUCTION_HEADS : s.kv;
}

export function statesEqual(a: State, b: State): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

/** Split user text into tokens (whitespace separated). */
export function splitTokens(text: string): string[] {
  return text.split(/\s+/u).filter((t) => t.length > 0);
}

// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u001f\u007f-\u009f\u200b-\u200f\u202a-\u202e\u2066-\u2069]/gu;

/**
 * Bring any state-shaped object into the valid range. Every change is reported as a
 * human-readable notice. Used by the URL decoder and by the controls.
 */
export function normalizeState(input: State): { state: State; notices: string[] } {
  const d = defaultState();
  const n: string[] = [];
  const s = cloneState(input);

  if (s.src !== 'induction' && s.src !== 'random') {
    n.push(`weights source “${brief(s.src)}” is unknown; using ${d.src}`);
    s.src = d.src;
  }

  // Tokens: strip invisible control characters, cap length and count.
  let tokens = (Array.isArray(s.tokens) ? s.tokens : []).map((t) => String(t));
  let stripped = false;
  let cut = false;
  tokens = tokens
    .map((t) => {
      const c = t.replace(CONTROL, '');
      if (c !== t) stripped = true;
      return c;
    })
    .flatMap((t) => splitTokens(t))
    .map((t) => {
      const chars = Array.from(t);
      if (chars.length > LIMITS.maxTokenLength) {
        cut = true;
        return chars.slice(0, LIMITS.maxTokenLength).join('');
      }
      return t;
    });
  if (stripped) n.push('tokens: invisible control characters were removed');
  if (cut) n.push(`tokens: tokens longer than ${LIMITS.maxTokenLength} characters were shortened`);
  if (tokens.length > LIMITS.maxT) {
    n.push(`tokens: ${tokens.length} tokens is more than the limit of ${LIMITS.maxT}; kept the first ${LIMITS.maxT}`);
    tokens = tokens.slice(0, LIMITS.maxT);
  }
  if (tokens.length === 0) {
    n.push('tokens: the token list was empty; using the lesson sentence');
    tokens = [...LESSON_SENTENCE];
  }
  s.tokens = tokens;
  const T = tokens.length;

  if (s.init !== 'normal' && s.init !== 'scaled') {
    n.push(`weight init “${brief(s.init)}” is unknown; using N(0,1)`);
    s.init = d.init;
  }
  s.sharp = clampNumber('sharpness', s.sharp, 0, LIMITS.maxSharp, d.sharp, n, false);
  s.seed = clampNumber('seed', s.seed, 0, LIMITS.maxSeed, d.seed, n, true);
  s.heads = clampNumber('heads', s.heads, 1, LIMITS.maxHeads, d.heads, n, true);
  s.kv = clampNumber('K/V heads', s.kv, 1, s.heads, Math.min(d.kv, s.heads), n, true);
  if (s.heads % s.kv !== 0) {
    let k = s.kv;
    while (s.heads % k !== 0) k -= 1;
    n.push(`K/V heads: ${s.kv} does not divide ${s.heads} heads; using ${k}`);
    s.kv = k;
  }
  s.dm = clampNumber('d_model', s.dm, 1, LIMITS.maxDModel, d.dm, n, true);
  s.dk = clampNumber('d_k', s.dk, 1, LIMITS.maxDk, d.dk, n, true);
  if (typeof s.causal !== 'boolean') {
    n.push('causal: not a yes/no value; using on');
    s.causal = d.causal;
  }
  s.win = clampNumber('window', s.win, 0, T, 0, n, true);

  const padIn = Array.isArray(s.pad) ? s.pad : [];
  const pad = [...new Set(padIn.filter((p) => Number.isInteger(p) && p >= 0 && p < T))].sort((a, b) => a - b);
  if (pad.length !== padIn.length || pad.some((p, i) => p !== padIn[i])) {
    const dropped = padIn.filter((p) => !(Number.isInteger(p) && p >= 0 && p < T));
    if (dropped.length > 0) n.push(`padding: dropped positions outside 0…${T - 1}: ${dropped.slice(0, 8).join(', ')}${dropped.length > 8 ? ', …' : ''}`);
  }
  s.pad = pad;

  if (!FILLS.includes(s.fill)) {
    n.push(`mask fill “${brief(s.fill)}” is unknown; using −∞`);
    s.fill = d.fill;
  }
  if (s.scale !== 'sqrt' && s.scale !== 'none') {
    if (typeof s.scale !== 'number' || !Number.isFinite(s.scale)) {
      n.push('scale: not a number; using 1/√d_k');
      s.scale = 'sqrt';
    } else if (s.scale < LIMITS.minScale || s.scale > LIMITS.maxScale) {
      const c = Math.min(Math.max(s.scale, LIMITS.minScale), LIMITS.maxScale);
      n.push(`scale: ${s.scale} is outside ${LIMITS.minScale}…${LIMITS.maxScale}; using ${c}`);
      s.scale = c;
    }
  }
  if (!(VIEWS as readonly string[]).includes(s.view)) {
    n.push(`view “${brief(s.view)}” is unknown; showing the heads`);
    s.view = d.view;
  }
  const H = effectiveHeads(s);
  // The page numbers heads from 1 ("Head 2 of 2"), so the notices do too.
  const headNotes: string[] = [];
  const head = clampNumber('selected head', s.head, 0, H - 1, 0, headNotes, true);
  if (headNotes.length > 0) {
    n.push(typeof s.head === 'number' && Number.isInteger(s.head) ? `selected head: there is no head ${s.head + 1} (heads 1…${H}); showing head ${head + 1}` : `selected head: “${brief(s.head)}” is not a head number; showing head ${head + 1}`);
  }
  s.head = head;

  // Timing lab.
  s.tstart = clampPow2('timing: first T', s.tstart, LIMITS.timingMinT, LIMITS.timingMaxT, d.tstart, n);
  s.tend = clampPow2('timing: last T', s.tend, s.tstart, LIMITS.timingMaxT, Math.max(d.tend, s.tstart), n);
  s.tdm = clampNumber('timing: d_model', s.tdm, 1, LIMITS.timingMaxDModel, d.tdm, n, true);
  s.tdk = clampNumber('timing: d_k', s.tdk, 1, LIMITS.maxDk, d.tdk, n, true);
  s.th = clampNumber('timing: heads', s.th, 1, LIMITS.timingMaxHeads, d.th, n, true);
  if (!TIMING_KERNELS.includes(s.tker)) {
    n.push(`timing: kernels “${brief(s.tker)}” is unknown; timing both`);
    s.tker = d.tker;
  }
  if (typeof s.tcausal !== 'boolean') {
    n.push('timing: causal is not a yes/no value; using off');
    s.tcausal = d.tcausal;
  }
  if (!TIMING_INPUTS.includes(s.tmode)) {
    n.push(`timing: input “${brief(s.tmode)}” is unknown; using random Q, K, V`);
    s.tmode = d.tmode;
  }
  if (!TIMING_WORKERS.includes(s.tw)) {
    n.push(`timing: workers “${brief(s.tw)}” is not 1, 2 or 4; using 1`);
    s.tw = d.tw;
  }
  const dec = normalizeDecode({ seq: s.dseq, keep: s.dkeep, step: s.dstep, cache: s.dcache, tStart: s.dts, tEnd: s.dte });
  Object.assign(s, decodeFields(dec.state));
  n.push(...dec.notices);
  return { state: s, notices: n };
}

/** A whole number in lo…hi (powers of two) that is itself a power of two; others go to the nearest one. */
function clampPow2(label: string, v: unknown, lo: number, hi: number, fallback: number, notices: string[]): number {
  const x = clampNumber(label, v, lo, hi, fallback, notices, true);
  const p = 2 ** Math.round(Math.log2(x));
  if (p === x) return x;
  const c = Math.min(Math.max(p, lo), hi);
  notices.push(`${label}: ${x} is not a power of two (the sweep doubles T); using ${c}`);
  return c;
}

function clampNumber(
  label: string,
  v: unknown,
  lo: number,
  hi: number,
  fallback: number,
  notices: string[],
  integer: boolean,
): number {
  if (typeof v !== 'number' || Number.isNaN(v)) {
    notices.push(`${label}: “${brief(v)}” is not a number; using ${fallback}`);
    return fallback;
  }
  let x = v;
  if (integer && !Number.isInteger(x)) {
    if (!Number.isFinite(x)) {
      notices.push(`${label}: ${x} is not a whole number; using ${fallback}`);
      return fallback;
    }
    x = Math.round(x);
    notices.push(`${label}: ${v} rounded to ${x}`);
  }
  if (x < lo || x > hi) {
    const c = Math.min(Math.max(x, lo), hi);
    notices.push(`${label}: ${x} is outside ${lo}…${hi}; using ${c}`);
    return c;
  }
  return x === 0 ? 0 : x; // never -0: it encodes as "0" and would not round-trip
}

/** A value shortened for a notice, so hostile input cannot flood the page. */
export function brief(v: unknown): string {
  const t = Array.from(String(v));
  return t.length > 40 ? t.slice(0, 40).join('') + '…' : t.join('');
}
