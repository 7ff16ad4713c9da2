// The URL codec: state <-> location hash, for any state table (state/table.ts); it names no
// field and no sub-state. Pure (no DOM, no globals), fully unit-tested. The page binds it to its
// table once (createCodec in app/state.ts).
//
// Format (version 1): `#v=1&key=value&...` with readable values, keys in table order
// (the TABLE of app/state.ts) and only the fields that differ from their defaults (a field's
// `linkDefault`, when it has one, is the default that depends on the link's other fields). Each field's kind
// (state/fields.ts) writes and reads its value; e.g. tokens are `tokens=the+cat+sat` (each token
// percent-encoded, joined by '+'), or `tz=<lz-string, URI-safe>` when the plain form is longer
// than LIMITS.compressAbove characters. Decoding never throws: anything invalid, unknown or corrupt
// is corrected or dropped and reported in `notices`.
//
// Versions: a link of an older version is first migrated, field map to field map, by the steps
// in MIGRATIONS (migrate(fields, fromVersion)), then read with the current table. Adding a field
// does not need a new version (old links lack the key and get its default).
import { brief, decodeComponent } from './fields';
import type { StateTable } from './table';

export const CODEC_VERSION = 1;

/** A step rewrites the link fields of version n into those of version n + 1 (pushing a notice
 *  for anything it cannot carry over). Index n holds the step n → n + 1. None yet: v1 is current. */
export type Migration = (fields: Map<string, string>, notices: string[]) => void;
export const MIGRATIONS: Readonly<Record<number, Migration>> = {};

/**
 * Bring the fields of a `fromVersion` link up to `toVersion`, in place, one step at a time.
 * Returns false (after a notice) when a step is missing, e.g. a link from a newer page.
 */
export function migrate(
  fields: Map<string, string>,
  fromVersion: number,
  notices: string[],
  steps: Readonly<Record<number, Migration>> = MIGRATIONS,
  toVersion = CODEC_VERSION,
): boolean {
  for (let v = fromVersion; v < toVersion; v++) {
    const step = steps[v];
    if (!step) {
      notices.push(`the link is version ${fromVersion}, which this page cannot read; showing the defaults`);
      return false;
    }
    step(fields, notices);
  }
  return fromVersion <= toVersion;
}

export interface Decoded<S> {
  state: S;
  /** Human-readable list of what was corrected or dropped. Empty for a clean link. */
  notices: string[];
}

export interface Codec<S> {
  /** Encode a (valid) state as a hash string starting with '#'. */
  encodeState(state: S): string;
  /** Decode a hash (with or without the leading '#'). Never throws. */
  decodeHash(hashIn: unknown): Decoded<S>;
}

/** The codec of one table. `maxHashLength`: a longer hash is not parsed at all. */
export function createCodec<S>(t: StateTable<S>, { maxHashLength }: { maxHashLength: number }): Codec<S> {
  const { rows, defaultState, normalizeState } = t;
  /** Every key a link may hold: the version and each row's key and aliases. */
  let KNOWN: Set<string> | null = null;
  function knownKeys(): Set<string> {
    if (KNOWN) return KNOWN;
    const keys = (KNOWN = new Set(['v']));
    for (const [, , f] of rows()) {
      keys.add(f.key);
      for (const a of f.kind.aliases ?? []) keys.add(a);
    }
    return keys;
  }

  /** Encode a (valid) state as a hash string starting with '#'. */
  function encodeState(state: S): string {
    const parts: string[] = [`v=${CODEC_VERSION}`];
    for (const [g, name, f] of rows()) {
      const v = (state[g] as unknown as Record<string, unknown>)[name];
      if (!f.kind.same(v, f.linkDefault ? f.linkDefault(state) : f.default)) {
        const [k, text] = f.kind.format(v, f.key);
        parts.push(`${k}=${text}`);
      }
    }
    return '#' + parts.join('&');
  }

  /** Decode a hash (with or without the leading '#'). Never throws. */
  function decodeHash(hashIn: unknown): Decoded<S> {
    const notices: string[] = [];
    let hash = typeof hashIn === 'string' ? hashIn : '';
    if (hash.startsWith('#')) hash = hash.slice(1);
    if (hash.trim() === '') return { state: defaultState(), notices };
    if (hash.length > maxHashLength) {
      notices.push(
        `the link's settings are ${hash.length.toLocaleString('en')} characters long (limit ${maxHashLength.toLocaleString('en')}); they were ignored`,
      );
      return { state: defaultState(), notices };
    }

    const known = knownKeys();
    const fields = new Map<string, string>();
    for (const part of hash.split('&')) {
      if (part === '') continue;
      const eq = part.indexOf('=');
      const rawKey = eq < 0 ? part : part.slice(0, eq);
      const rawVal = eq < 0 ? '' : part.slice(eq + 1);
      const key = decodeComponent(rawKey, true) ?? rawKey;
      if (!known.has(key)) {
        notices.push(`unknown setting “${brief(key)}” was ignored`);
        continue;
      }
      if (fields.has(key)) {
        notices.push(`setting “${key}” appeared more than once; the first value was used`);
        continue;
      }
      fields.set(key, rawVal);
    }

    const version = fields.get('v');
    fields.delete('v');
    if (version === undefined) {
      if (fields.size > 0) notices.push(`the link has no version; read it as v=${CODEC_VERSION}`);
    } else {
      const n = /^[1-9]\d{0,5}$/.test(version) ? Number(version) : NaN;
      if (!(n <= CODEC_VERSION)) {
        notices.push(
          `the link is version “${brief(decodeComponent(version, true) ?? version)}”, which this page does not know; showing the defaults`,
        );
        return { state: defaultState(), notices };
      }
      if (!migrate(fields, n, notices)) return { state: defaultState(), notices };
    }

    // Start from the defaults; each present field overrides with its parsed raw value (possibly
    // out of range), and normalizeState corrects and reports.
    const draft = defaultState() as unknown as Record<string, Record<string, unknown>>;
    for (const [g, name, f] of rows()) {
      const raw = f.kind.read
        ? f.kind.read(fields, f.key, notices)
        : fields.has(f.key)
          ? f.kind.parse(fields.get(f.key)!, f.key, notices)
          : undefined;
      if (raw !== undefined) draft[g][name] = raw;
    }
    // Absent keys whose meaning depends on other fields, read from the draft (every key parsed).
    for (const [g, name, f] of rows())
      if (f.linkDefault && !fields.has(f.key) && !(f.kind.aliases ?? []).some((a) => fields.has(a)))
        draft[g][name] = f.linkDefault(draft as unknown as S);
    const norm = normalizeState(draft);
    return { state: norm.state, notices: [...notices, ...norm.notices] };
  }

  return { encodeState, decodeHash };
}
