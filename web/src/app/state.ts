// The playground's whole state as ONE TABLE of fields: link key, type (kind), default, limits,
// and whether the field affects the computation. Pure: no DOM, no globals. The URL codec
// (app/codec.ts) and normalizeState below walk this table; neither names a field.
//
// The state is split into sub-states, one per feature:
//   state.model   what is computed: tokens, weights, mask, scale (Heads / Mask / Scale / Output views)
//   state.page    which view is shown and which head is zoomed
//   state.timing  the Timing lab (its rows live in web/src/timing/state.ts)
//   state.decode  the Decode tab (its rows live in web/src/decode/state.ts)
//
// HOW A NEW TAB ADDS ITS SUB-STATE (e.g. the Train tab, `train`):
//   1. Create web/src/train/state.ts with
//        import { int, real } from '../app/fields';
//        import type { SubState } from '../app/state';
//        export interface TrainState { steps: number; lr: number; … }   // readable names
//        export const TRAIN: SubState<TrainState> = { fields: {
//          steps: { key: 'tsteps', label: 'train: steps', kind: int(1, 10000), default: 200, compute: false },
//          lr:    { key: 'lr',     label: 'train: learning rate', kind: real(1e-5, 10), default: 0.1, compute: false },
//        } };
//      Import kinds from app/fields (int, real, pow2, oneOf, yesNo, positions, or your own Kind),
//      and only *types* from app/state (so there is no import cycle). Every field of the interface
//      needs exactly one row (FieldTable makes a missing or extra row a type error).
//      Link keys must be new (a test checks that keys are unique across the whole table); keep them
//      short, they are the link format. `compute: true` only if changing the field must rerun the
//      heatmap Worker (computeKey below); `fallback` if the value used for an invalid field depends
//      on the state; limits may be functions of the state (rows are normalized in table order,
//      sub-states in TABLE order, so a limit may read any earlier field). Cross-field rules that
//      are not a limit go in the sub-state's `fix`.
//   2. Here: add `train: TrainState` to `State` and `train: TRAIN` to `TABLE` (two lines), and the
//      tab's view id to VIEWS.
//   3. In the tab's view: read `ctx.state.train.steps`; change it with
//      `ctx.update({ train: { steps: 300 } })` (a Patch: the page merges, normalizes with notices,
//      writes the link). Tests may build states by link key: withLinkFields(defaultState(), { tsteps: 5 }).
//   That's all: defaults, link encoding/decoding, notices, normalization and the property tests
//   (tests/web/codec.property.test.ts) follow from the rows. No branch in the codec. Adding keys
//   does not change the link version: old links simply lack them and get the defaults. Change
//   CODEC_VERSION only when an existing key changes meaning, and add the step to MIGRATIONS in
//   app/codec.ts (tests/web/links.test.ts checks that every v1 link still opens the same view).
import LZString from 'lz-string';
import { brief, clampNumber, decodeComponent, int, oneOf, positions, real, yesNo, type Kind } from './fields';
import { TIMING, TIMING_LIMITS, type TimingState } from '../timing/state';
import { TRAIN } from '../train/state';
import type { TrainState } from '../train/config';
import { DECODE, type DecodeState } from '../decode/state';

export { brief } from './fields';
export type { TimingKernels, TimingInput, TimingState } from '../timing/state';
export { TIMING_KERNELS, TIMING_INPUTS, TIMING_WORKERS } from '../timing/state';

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

export interface PageState {
  /** Which view (tab) is shown. */
  view: ViewId;
  /** The selected (zoomed) head, 0-based. */
  head: number;
}

/** The whole state: one sub-state per feature. A new tab adds its sub-state here and in TABLE. */
export interface State {
  model: ModelState;
  page: PageState;
  timing: TimingState;
  train: TrainState;
  decode: DecodeState;
}

/** One row of the table: a field of a sub-state. */
export interface Field<T> {
  /** Link key (short; part of the link format). */
  key: string;
  /** Name in notices. */
  label: string;
  kind: Kind<T, State>;
  default: T;
  /** Value used when the link's value is unusable, if it depends on the state (else `default`). */
  fallback?: (s: State) => T;
  /** Whether changing it must rerun the computation (the heatmap Worker). */
  compute: boolean;
}
/** Exactly one row per field of a sub-state. */
export type FieldTable<Sub> = { [K in keyof Sub]-?: Field<Sub[K]> };
export interface SubState<Sub> {
  fields: FieldTable<Sub>;
  /** Cross-field rules that are not limits, run after the sub-state's rows. */
  fix?(s: State, notices: string[]): void;
}

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
  /** Token lists whose plain encoding is longer than this are lz-string compressed. */
  compressAbove: 300,
  ...TIMING_LIMITS,
} as const;

/** The induction example is lesson 1's two-head model; its shape is fixed by the core. */
export const INDUCTION_HEADS = 2;

/** Every view a link may name. A new view adds its id here and in app/views.ts. */
export const VIEWS = ['heads', 'mask', 'scale', 'output', 'timing', 'train', 'decode'] as const;
export type ViewId = (typeof VIEWS)[number];
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
const tokenKind: Kind<string[], State> = {
  aliases: ['tz'],
  same: (a, b) => a.length === b.length && a.every((x, i) => x === b[i]),
  format(v, key) {
    const plain = v.map((t) => encodeURIComponent(t)).join('+');
    return plain.length > LIMITS.compressAbove ? ['tz', LZString.compressToEncodedURIComponent(v.join(' '))] : [key, plain];
  },
  // '+' separates tokens; each token was percent-encoded.
  parse: (raw) => raw.split('+').map((t) => decodeComponent(t, false) ?? '').filter((t) => t !== ''),
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
    // Strip invisible control characters, cap length and count.
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
        if (chars.length <= LIMITS.maxTokenLength) return t;
        cut = true;
        return chars.slice(0, LIMITS.maxTokenLength).join('');
      });
    if (stripped) c.notices.push('tokens: invisible control characters were removed');
    if (cut) c.notices.push(`tokens: tokens longer than ${LIMITS.maxTokenLength} characters were shortened`);
    if (tokens.length > LIMITS.maxT) {
      c.notices.push(`tokens: ${tokens.length} tokens is more than the limit of ${LIMITS.maxT}; kept the first ${LIMITS.maxT}`);
      tokens = tokens.slice(0, LIMITS.maxT);
    }
    if (tokens.length === 0) {
      c.notices.push('tokens: the token list was empty; using the lesson sentence');
      tokens = [...LESSON_SENTENCE];
    }
    return tokens;
  },
};

/** Scale: `sqrt`, `none` or a positive number. */
const scaleKind: Kind<Scale, State> = {
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
    if (v < LIMITS.minScale || v > LIMITS.maxScale) {
      const x = Math.min(Math.max(v, LIMITS.minScale), LIMITS.maxScale);
      c.notices.push(`scale: ${v} is outside ${LIMITS.minScale}…${LIMITS.maxScale}; using ${x}`);
      return x;
    }
    return v;
  },
};

/** Number of query heads the computation will have. */
export function effectiveHeads(s: State): number {
  return s.model.source === 'induction' ? INDUCTION_HEADS : s.model.heads;
}
export function effectiveKvHeads(s: State): number {
  return s.model.source === 'induction' ? INDUCTION_HEADS : s.model.kvHeads;
}

/** The zoomed head: 0-based in the state, 1-based in notices ("Head 2 of 2" on the page). */
const headKind: Kind<number, State> = {
  ...int<State>(0, (s) => effectiveHeads(s) - 1),
  normalize(v, c) {
    const H = effectiveHeads(c.state);
    const quiet: string[] = [];
    const head = clampNumber('selected head', v, 0, H - 1, 0, quiet, true);
    if (quiet.length > 0)
      c.notices.push(typeof v === 'number' && Number.isInteger(v) ? `selected head: there is no head ${v + 1} (heads 1…${H}); showing head ${head + 1}` : `selected head: “${brief(v)}” is not a head number; showing head ${head + 1}`);
    return head;
  },
};

const T = (s: State) => s.model.tokens.length;

export const MODEL: SubState<ModelState> = {
  fields: {
    source: { key: 'src', label: 'weights source', kind: oneOf(['induction', 'random'] as const), default: 'induction', compute: true },
    tokens: { key: 'tokens', label: 'tokens', kind: tokenKind, default: [...LESSON_SENTENCE], compute: true },
    sharpness: { key: 'sharp', label: 'sharpness', kind: real(0, LIMITS.maxSharp), default: 14, compute: true },
    seed: { key: 'seed', label: 'seed', kind: int(0, LIMITS.maxSeed), default: 0, compute: true },
    init: { key: 'init', label: 'weight init', kind: oneOf(['normal', 'scaled'] as const, (l, v) => `${l} “${v}” is unknown; using N(0,1)`), default: 'normal', compute: true },
    generator: { key: 'gen', label: 'generator', kind: oneOf(['splitmix', 'numpy'] as const), default: 'splitmix', compute: true },
    heads: { key: 'heads', label: 'heads', kind: int(1, LIMITS.maxHeads), default: 2, compute: true },
    kvHeads: { key: 'kv', label: 'K/V heads', kind: int(1, (s) => s.model.heads), default: 2, fallback: (s) => Math.min(2, s.model.heads), compute: true },
    dModel: { key: 'dm', label: 'd_model', kind: int(1, LIMITS.maxDModel), default: 8, compute: true },
    dK: { key: 'dk', label: 'd_k', kind: int(1, LIMITS.maxDk), default: 4, compute: true },
    causal: { key: 'causal', label: 'causal', kind: yesNo(), default: true, compute: true },
    window: { key: 'win', label: 'window', kind: int(0, T), default: 0, compute: true },
    padding: { key: 'pad', label: 'padding', kind: positions((s) => T(s) - 1), default: [], compute: true },
    fill: { key: 'fill', label: 'mask fill', kind: oneOf(FILLS, (l, v) => `${l} “${v}” is unknown; using −∞`), default: 'neg_inf', compute: true },
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

export const PAGE: SubState<PageState> = {
  fields: {
    view: { key: 'view', label: 'view', kind: oneOf(VIEWS, (l, v) => `${l} “${v}” is unknown; showing the heads`), default: 'heads', compute: false },
    head: { key: 'head', label: 'selected head', kind: headKind, default: 0, compute: false },
  },
};

/** THE table. Order = link order = normalization order. */
export const TABLE: { [G in keyof State]: SubState<State[G]> } = { model: MODEL, page: PAGE, timing: TIMING, train: TRAIN, decode: DECODE };

type AnyField = Field<unknown>;
let ROWS: readonly (readonly [keyof State, string, AnyField])[] | null = null;
/** Every row as [sub-state, field name, row], in table order. */
export function rows(): readonly (readonly [keyof State, string, AnyField])[] {
  if (!ROWS) {
    const out: [keyof State, string, AnyField][] = [];
    for (const g of Object.keys(TABLE) as (keyof State)[]) for (const [name, f] of Object.entries(TABLE[g].fields)) out.push([g, name, f as AnyField]);
    ROWS = out;
  }
  return ROWS;
}

function copy<T>(v: T): T {
  return Array.isArray(v) ? ([...v] as T) : v;
}

export function defaultState(): State {
  const s = {} as Record<string, Record<string, unknown>>;
  for (const [g, name, f] of rows()) (s[g] ??= {})[name] = copy(f.default);
  return s as unknown as State;
}

export function cloneState(s: State): State {
  const out = {} as Record<string, Record<string, unknown>>;
  for (const [g, name] of rows()) (out[g] ??= {})[name] = copy((s[g] as unknown as Record<string, unknown>)[name]);
  return out as unknown as State;
}

export function statesEqual(a: State, b: State): boolean {
  return rows().every(([g, name, f]) => f.kind.same(get(a, g, name), get(b, g, name)));
}

/** A string that changes exactly when a field with `compute: true` changes. */
export function computeKey(s: State): string {
  return JSON.stringify(rows().filter(([, , f]) => f.compute).map(([g, n]) => get(s, g, n)));
}

function get(s: unknown, g: string, name: string): unknown {
  const sub = (s as Record<string, unknown> | null)?.[g];
  return sub !== null && typeof sub === 'object' ? (sub as Record<string, unknown>)[name] : undefined;
}

/** A change to some fields of some sub-states (what controls and views emit). */
export type Patch = { [G in keyof State]?: Partial<State[G]> };

/** A state-shaped object with any sub-state or field possibly missing or wrong. */
export type StateDraft = { [G in keyof State]?: { [K in keyof State[G]]?: unknown } };

/**
 * Bring any state-shaped object into the valid range, row by row in table order (a missing field
 * takes its default, which is then checked like any value: a default may break a limit that
 * depends on another field). Every change is reported as a human-readable notice. Used by the URL
 * decoder, the controls and the presets.
 */
export function normalizeState(input: StateDraft | State): { state: State; notices: string[] } {
  const s = defaultState();
  const notices: string[] = [];
  for (const g of Object.keys(TABLE) as (keyof State)[]) {
    const sub = s[g] as unknown as Record<string, unknown>;
    for (const [name, row] of Object.entries(TABLE[g].fields)) {
      const f = row as AnyField;
      const given = get(input, g, name);
      const v = given === undefined ? copy(f.default) : given;
      sub[name] = f.kind.normalize(v, { state: s, label: f.label, fallback: f.fallback ? f.fallback(s) : f.default, notices });
    }
    TABLE[g].fix?.(s, notices);
  }
  return { state: s, notices };
}

/** A draft with `patch` laid over `base`, sub-state by sub-state (for presets and controls). */
export function withPatch(base: State, patch: Patch | StateDraft): StateDraft {
  const out: Record<string, unknown> = {};
  for (const g of Object.keys(TABLE)) out[g] = { ...(base as unknown as Record<string, object>)[g], ...((patch as Record<string, object | undefined>)[g] ?? {}) };
  return out as StateDraft;
}

/** The state keyed by link keys (flat, e.g. { src, tokens, … }): the shape of v1 links, used by
 *  the JSON export and the link tests. */
export function linkFields(s: State): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [g, name, f] of rows()) out[f.key] = copy(get(s, g, name));
  return out;
}

/** `base` with fields replaced by link key (e.g. { src: 'random', kv: 1 }); unknown keys throw.
 *  Not normalized: pass the result through normalizeState if the values may be out of range. */
export function withLinkFields(base: State, fields: Record<string, unknown>): State {
  const out = cloneState(base) as unknown as Record<string, Record<string, unknown>>;
  const byKey = new Map(rows().map(([g, name, f]) => [f.key, [g, name]] as const));
  for (const [k, v] of Object.entries(fields)) {
    const at = byKey.get(k);
    if (!at) throw new Error(`no field has the link key “${k}”`);
    out[at[0]][at[1]] = v;
  }
  return out as unknown as State;
}
