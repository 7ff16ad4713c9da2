// The state-table engine: a page's whole state as ONE TABLE of fields (link key, kind, default,
// limits, whether the field affects the computation), split into sub-states, one per feature.
// Generic over the state type S: this file names no sub-state. The page composes its table from
// the features' sub-states (app/state.ts) and binds these functions to it once; the URL codec
// (state/codec.ts) and normalisation walk the rows and never name a field. Pure: no DOM, no
// globals.
//
// A feature's sub-state is a SubState<Sub, Slice>: one row per field of Sub (a missing or extra
// row is a type error), where Slice is the part of the whole state its limits read (e.g.
// { train: TrainState }, or { model: ModelState } for a limit that depends on the tokens). Rows
// are normalized in table order, sub-states in TABLE order, so a limit may read any earlier field.
// Cross-field rules that are not a limit go in the sub-state's `fix`.
import type { Kind } from './fields';

/** One row of the table: a field of a sub-state. S is (a slice of) the whole state. */
export interface Field<T, S = unknown> {
  /** Link key (short; part of the link format). */
  key: string;
  /** Name in notices. */
  label: string;
  kind: Kind<T, S>;
  default: T;
  /** Value used when the link's value is unusable, if it depends on the state (else `default`). */
  fallback?: (s: S) => T;
  /** What a link without this key means, when that depends on the link's other fields (else
   *  `default`). The codec leaves the key out exactly when the value equals it. */
  linkDefault?: (s: S) => T;
  /** Whether changing it must rerun the computation (the heatmap Worker). */
  compute: boolean;
}
/** Exactly one row per field of a sub-state. */
export type FieldTable<Sub, S = unknown> = { [K in keyof Sub]-?: Field<Sub[K], S> };
export interface SubState<Sub, S = unknown> {
  fields: FieldTable<Sub, S>;
  /** Cross-field rules that are not limits, run after the sub-state's rows. */
  fix?(s: S, notices: string[]): void;
}
/** The sub-state type a SubState describes. */
export type SubOf<X> = X extends { fields: infer F }
  ? { -readonly [K in keyof F]: F[K] extends Field<infer T, never> ? T : never }
  : never;

/** The whole table: one SubState per key of S, in link (= normalization) order. */
export type Table<S> = { [G in keyof S]: SubState<S[G], S> };
/** A change to some fields of some sub-states (what controls and views emit). */
export type Patch<S> = { [G in keyof S]?: Partial<S[G]> };
/** A state-shaped object with any sub-state or field possibly missing or wrong. */
export type StateDraft<S> = { [G in keyof S]?: { [K in keyof S[G]]?: unknown } };

type AnyField = Field<unknown, unknown>;
export type Row<S> = readonly [keyof S & string, string, AnyField];

/** The table's functions, bound to one table. */
export interface StateTable<S> {
  readonly table: Table<S>;
  /** Every row as [sub-state, field name, row], in table order. */
  rows(): readonly Row<S>[];
  defaultState(): S;
  cloneState(s: S): S;
  statesEqual(a: S, b: S): boolean;
  /** A string that changes exactly when a field with `compute: true` changes. */
  computeKey(s: S): string;
  /**
   * Bring any state-shaped object into the valid range, row by row in table order (a missing field
   * takes its default, which is then checked like any value: a default may break a limit that
   * depends on another field). Every change is reported as a human-readable notice. Used by the URL
   * decoder, the controls and the presets.
   */
  normalizeState(input: StateDraft<S> | S): { state: S; notices: string[] };
  /** A draft with `patch` laid over `base`, sub-state by sub-state (for presets and controls). */
  withPatch(base: S, patch: Patch<S> | StateDraft<S>): StateDraft<S>;
  /** The state keyed by link keys (flat, e.g. { src, tokens, … }): the shape of v1 links, used by
   *  the JSON export and the link tests. */
  linkFields(s: S): Record<string, unknown>;
  /** `base` with fields replaced by link key (e.g. { src: 'random', kv: 1 }); unknown keys throw.
   *  Not normalized: pass the result through normalizeState if the values may be out of range. */
  withLinkFields(base: S, fields: Record<string, unknown>): S;
}

function copy<T>(v: T): T {
  return Array.isArray(v) ? ([...v] as T) : v;
}

function get(s: unknown, g: string, name: string): unknown {
  const sub = (s as Record<string, unknown> | null)?.[g];
  return sub !== null && typeof sub === 'object' ? (sub as Record<string, unknown>)[name] : undefined;
}

export function createTable<S>(table: Table<S>): StateTable<S> {
  const groups = Object.keys(table) as (keyof S & string)[];
  const subOf = (g: keyof S & string) => table[g] as unknown as SubState<Record<string, unknown>, S>;
  let ROWS: readonly Row<S>[] | null = null;
  function rows(): readonly Row<S>[] {
    if (!ROWS) {
      const out: Row<S>[] = [];
      for (const g of groups)
        for (const [name, f] of Object.entries(subOf(g).fields)) out.push([g, name, f as AnyField]);
      ROWS = out;
    }
    return ROWS;
  }

  function defaultState(): S {
    const s = {} as Record<string, Record<string, unknown>>;
    for (const [g, name, f] of rows()) (s[g] ??= {})[name] = copy(f.default);
    return s as unknown as S;
  }

  function cloneState(s: S): S {
    const out = {} as Record<string, Record<string, unknown>>;
    for (const [g, name] of rows()) (out[g] ??= {})[name] = copy(get(s, g, name));
    return out as unknown as S;
  }

  return {
    table,
    rows,
    defaultState,
    cloneState,
    statesEqual: (a, b) => rows().every(([g, name, f]) => f.kind.same(get(a, g, name), get(b, g, name))),
    computeKey: (s) =>
      JSON.stringify(
        rows()
          .filter(([, , f]) => f.compute)
          .map(([g, n]) => get(s, g, n)),
      ),
    normalizeState(input) {
      const s = defaultState();
      const notices: string[] = [];
      for (const g of groups) {
        const sub = s[g] as unknown as Record<string, unknown>;
        for (const [name, row] of Object.entries(subOf(g).fields)) {
          const f = row as Field<unknown, S>;
          const given = get(input, g, name);
          const v = given === undefined ? copy(f.default) : given;
          sub[name] = f.kind.normalize(v, {
            state: s,
            label: f.label,
            fallback: f.fallback ? f.fallback(s) : f.default,
            notices,
          });
        }
        subOf(g).fix?.(s, notices);
      }
      return { state: s, notices };
    },
    withPatch(base, patch) {
      const out: Record<string, unknown> = {};
      for (const g of groups)
        out[g] = {
          ...(base as unknown as Record<string, object>)[g],
          ...((patch as Record<string, object | undefined>)[g] ?? {}),
        };
      return out as StateDraft<S>;
    },
    linkFields(s) {
      const out: Record<string, unknown> = {};
      for (const [g, name, f] of rows()) out[f.key] = copy(get(s, g, name));
      return out;
    },
    withLinkFields(base, fields) {
      const out = cloneState(base) as unknown as Record<string, Record<string, unknown>>;
      const byKey = new Map(rows().map(([g, name, f]) => [f.key, [g, name]] as const));
      for (const [k, v] of Object.entries(fields)) {
        const at = byKey.get(k);
        if (!at) throw new Error(`no field has the link key “${k}”`);
        out[at[0]][at[1]] = v;
      }
      return out as unknown as S;
    },
  };
}
