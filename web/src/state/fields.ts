// Field kinds: how one state field is written into the link, read back, and brought into range.
// Pure (no DOM, no globals). The rows are the features' (each feature's state.ts; the engine is
// state/table.ts); this file only knows how each *kind* of value behaves, so the codec
// (state/codec.ts) never branches on a field name.
//
// A kind answers four questions:
//   format(v)        the link text of a value (already percent-encoded),
//   parse(text)      a link text back to a raw value (or undefined + a notice when unreadable),
//   normalize(v)     any raw value to a valid one (a notice for every change),
//   same(a, b)       whether two values are equal (the codec writes only non-defaults).

/** Everything a kind needs to normalize one value. `state` is the state being normalized, with
 *  every earlier row of the table already valid (so a limit may depend on an earlier field). */
export interface FieldContext<S> {
  state: S;
  /** Human name used in notices, e.g. "K/V heads" or "timing: first T". */
  label: string;
  /** The row's default (or a default computed from the state, see Field.fallback). */
  fallback: unknown;
  notices: string[];
}

export interface Kind<T, S = unknown> {
  /** Link text for a (valid) value, percent-encoded. May write under another key (tokens → tz). */
  format(v: T, key: string): [key: string, text: string];
  /** Raw (not yet percent-decoded) link text → a raw value; undefined (after a notice) if unreadable. */
  parse(raw: string, key: string, notices: string[]): unknown;
  normalize(v: unknown, ctx: FieldContext<S>): T;
  same(a: T, b: T): boolean;
  /** Extra link keys this kind reads (tokens also reads `tz`). */
  aliases?: readonly string[];
  /** Read the raw value from all link fields (only kinds with aliases need it). */
  read?(fields: ReadonlyMap<string, string>, key: string, notices: string[]): unknown;
}

/** A limit that may depend on the state being normalized (e.g. K/V heads ≤ heads). */
export type Bound<S> = number | ((s: S) => number);
const bound = <S>(b: Bound<S>, s: S): number => (typeof b === 'function' ? b(s) : b);

/** Shorten a value for a notice so a hostile link cannot flood the page. */
export function brief(v: unknown): string {
  const t = Array.from(String(v));
  return t.length > 40 ? t.slice(0, 40).join('') + '…' : t.join('');
}

export function decodeComponent(raw: string, plusIsSpace: boolean): string | null {
  try {
    return decodeURIComponent(plusIsSpace ? raw.replace(/\+/g, ' ') : raw);
  } catch {
    return null;
  }
}

/** Strict decimal number (no hex, no empty, no "Infinity"). */
export function parseNumber(v: string): number {
  if (!/^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/.test(v.trim())) return NaN;
  return Number(v);
}

/** Percent-decoded text of a field, or null (after a notice) when the encoding is broken. */
function text(raw: string, key: string, notices: string[]): string | null {
  const v = decodeComponent(raw, true);
  if (v === null) notices.push(`setting “${key}” is not valid percent-encoding; it was ignored`);
  return v;
}

export function clampNumber(
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

const parseNum = (raw: string, key: string, notices: string[]): unknown => {
  const v = text(raw, key, notices);
  if (v === null) return undefined;
  const x = parseNumber(v);
  if (Number.isNaN(x)) {
    notices.push(`${key}: “${brief(v)}” is not a number; it was ignored`);
    return undefined;
  }
  return x;
};

const scalar = { same: (a: unknown, b: unknown) => a === b };

/** Free text, percent-encoded in the link; `normalize` decides what is valid. */
export function textKind<S>(normalize: Kind<string, S>['normalize']): Kind<string, S> {
  return {
    ...scalar,
    format: (v, key) => [key, encodeURIComponent(v)],
    parse: (raw, key, notices) => text(raw, key, notices) ?? undefined,
    normalize,
  };
}

/** A number in min…max (whole when `integer`). */
export function numberKind<S>(min: Bound<S>, max: Bound<S>, integer: boolean): Kind<number, S> {
  return {
    ...scalar,
    format: (v, key) => [key, String(v)],
    parse: parseNum,
    normalize: (v, c) =>
      clampNumber(c.label, v, bound(min, c.state), bound(max, c.state), c.fallback as number, c.notices, integer),
  };
}
export const int = <S>(min: Bound<S>, max: Bound<S>) => numberKind<S>(min, max, true);
export const real = <S>(min: Bound<S>, max: Bound<S>) => numberKind<S>(min, max, false);

/** A power of two in min…max; others go to the nearest one (the timing sweep doubles T). */
export function pow2<S>(min: Bound<S>, max: Bound<S>): Kind<number, S> {
  const base = int<S>(min, max);
  return {
    ...base,
    normalize(v, c) {
      const lo = bound(min, c.state);
      const hi = bound(max, c.state);
      const x = base.normalize(v, c);
      const p = 2 ** Math.round(Math.log2(x));
      if (p === x) return x;
      const r = Math.min(Math.max(p, lo), hi);
      c.notices.push(`${c.label}: ${x} is not a power of two (the sweep doubles T); using ${r}`);
      return r;
    },
  };
}

/** One of a fixed list of words (or numbers, e.g. workers 1|2|4). `unknown` words the notice. */
export function oneOf<T extends string | number, S>(
  values: readonly T[],
  unknown = (label: string, v: string, fallback: string) => `${label} “${v}” is unknown; using ${fallback}`,
): Kind<T, S> {
  const numeric = typeof values[0] === 'number';
  return {
    ...scalar,
    format: (v, key) => [key, encodeURIComponent(String(v))],
    parse: numeric ? parseNum : (raw, key, notices) => text(raw, key, notices) ?? undefined,
    normalize(v, c) {
      if ((values as readonly unknown[]).includes(v)) return v as T;
      c.notices.push(unknown(c.label, brief(v), String(c.fallback)));
      return c.fallback as T;
    },
  };
}

/** Yes/no, written 1/0 (true/false also read). */
export function yesNo<S>(): Kind<boolean, S> {
  return {
    ...scalar,
    format: (v, key) => [key, v ? '1' : '0'],
    parse(raw, key, notices) {
      const v = text(raw, key, notices);
      if (v === null) return undefined;
      if (v === '1' || v === 'true') return true;
      if (v === '0' || v === 'false') return false;
      notices.push(`${key}: “${brief(v)}” is not 0 or 1; it was ignored`);
      return undefined;
    },
    normalize(v, c) {
      if (typeof v === 'boolean') return v;
      c.notices.push(`${c.label}: not a yes/no value; using ${c.fallback ? 'on' : 'off'}`);
      return c.fallback as boolean;
    },
  };
}

/** Sorted, unique whole positions in 0…max, written `0,3`. Others are dropped with a notice. */
export function positions<S>(max: Bound<S>): Kind<number[], S> {
  return {
    same: (a, b) => a.length === b.length && a.every((x, i) => x === b[i]),
    format: (v, key) => [key, v.join(',')],
    parse(raw, key, notices) {
      const v = text(raw, key, notices);
      if (v === null || v.trim() === '') return undefined;
      const items = v.split(',');
      const parsed = items.map((p) => parseNumber(p));
      const bad = items.filter((_, i) => !Number.isInteger(parsed[i]));
      if (bad.length > 0)
        notices.push(
          `${key}: ignored entries that are not positions: ${bad.slice(0, 5).map(brief).join(', ')}${bad.length > 5 ? ', …' : ''}`,
        );
      return parsed.filter((p) => Number.isInteger(p));
    },
    normalize(v, c) {
      const hi = bound(max, c.state);
      const input = Array.isArray(v) ? (v as unknown[]) : [];
      const ok = (p: unknown): p is number => typeof p === 'number' && Number.isInteger(p) && p >= 0 && p <= hi;
      const dropped = input.filter((p) => !ok(p));
      if (dropped.length > 0)
        c.notices.push(
          `${c.label}: dropped positions outside 0…${hi}: ${dropped.slice(0, 8).map(brief).join(', ')}${dropped.length > 8 ? ', …' : ''}`,
        );
      return [...new Set(input.filter(ok))].sort((a, b) => a - b);
    },
  };
}
