// The page's whole state, composed from the features' sub-states (app/features.ts), and the
// state-table engine (state/table.ts) and URL codec (state/codec.ts) bound to it. Pure: no DOM,
// no globals.
//
// The state is split into sub-states, one per feature:
//   state.model   what is computed: tokens, weights, mask, scale (rows in attention/state.ts)
//   state.page    which view is shown and which head is zoomed (rows below: the shell's)
//   state.timing  the Timing lab (rows in timing/state.ts)
//   state.train   the Train tab (rows in train/state.ts)
//   state.decode  the Decode tab (rows in decode/state.ts)
//   state.lesson  the Lesson view and the attention variant (rows in lesson/state.ts)
//   state.arrays  the student's own arrays (rows in attention/arrays/state.ts)
//   state.exercise the exercise a link opens (rows in attention/exercise/state.ts)
//   state.text    the Text model tab: text, checkpoint, head (rows in text/state.ts)
//
// HOW A NEW TAB ADDS ITS SUB-STATE (e.g. a tab `probe`):
//   1. Create web/src/probe/state.ts with
//        import { int, real } from '../state/fields';
//        import type { SubState } from '../state/table';
//        export interface ProbeState { steps: number; lr: number; … }   // readable names
//        export const PROBE: SubState<ProbeState, { probe: ProbeState }> = { fields: {
//          steps: { key: 'psteps', label: 'probe: steps', kind: int(1, 10000), default: 200, compute: false },
//          lr:    { key: 'plr',    label: 'probe: learning rate', kind: real(1e-5, 10), default: 0.1, compute: false },
//        } };
//      Import kinds from state/fields (int, real, pow2, oneOf, yesNo, positions, or your own Kind).
//      The second type argument is the part of the state your limits read. Every field of the
//      interface needs exactly one row (FieldTable makes a missing or extra row a type error).
//      Link keys must be new (a test checks that keys are unique across the whole table); keep them
//      short, they are the link format. `compute: true` only if changing the field must rerun the
//      heatmap Worker (computeKey); `fallback` if the value used for an invalid field depends
//      on the state; limits may be functions of the state (rows are normalized in table order,
//      sub-states in TABLE order, so a limit may read any earlier field). Cross-field rules that
//      are not a limit go in the sub-state's `fix`.
//   2. Its view: a ViewFactory<ProbeContext, 'probe', false> where ProbeContext is
//      LabContext<{ probe: ProbeState }, { probe?: Partial<ProbeState> }> (ui/view.ts): read
//      `ctx.state.probe.steps`; change it with `ctx.update({ probe: { steps: 300 } })` (a Patch: the
//      page merges, normalizes with notices, writes the link).
//   3. One line in app/features.ts: { key: 'probe', state: PROBE, views: [probeView] }.
//   That's all: the State type, defaults, link encoding/decoding, notices, normalization and the
//   property tests (tests/web/codec.property.test.ts) follow from the rows. No branch in the codec.
//   Tests may build states by link key: withLinkFields(defaultState(), { psteps: 5 }). Adding keys
//   does not change the link version: old links simply lack them and get the defaults. Change
//   CODEC_VERSION only when an existing key changes meaning, and add the step to MIGRATIONS in
//   state/codec.ts (tests/web/links.test.ts checks that every v1 link still opens the same view).
import { oneOf } from '../state/fields';
import {
  createTable,
  type Patch as TablePatch,
  type StateDraft as TableDraft,
  type Field,
  type SubOf,
  type SubState,
  type Table,
} from '../state/table';
import { createCodec } from '../state/codec';
import { MODEL_LIMITS, cellKind, headKind, selectionKind, whatIfKind, type ModelSlice } from '../attention/state';
import { TIMING_LIMITS } from '../timing/state';
import { FEATURES, VIEWS, type Feature, type ViewId } from './features';
import { START_KEYS, exerciseStart } from '../attention/exercise/catalogue';

export type { ViewId } from './features';
export { VIEWS } from './features';

export interface PageState {
  /** Which view (tab) is shown. */
  view: ViewId;
  /** The selected (zoomed) head, 0-based. */
  head: number;
  /** The cell "Why this weight?" takes apart: [head, query, key], or [] for none. */
  cell: number[];
  /** The zoomed head's selected queries and keys (0-based positions), or [] for none. */
  qsel: number[];
  ksel: number[];
  /** "Change it" put in the link ('q,2,1.5'), or '' for none. */
  wif: string;
}

/** The whole state: one sub-state per feature (app/features.ts), and the page's. */
export type State = { [F in Feature as F['key']]: SubOf<F['state']> } & { page: PageState };
export type Patch = TablePatch<State>;
export type StateDraft = TableDraft<State>;

export const LIMITS = {
  ...MODEL_LIMITS,
  /** A longer hash is not parsed at all. Generous: a link with thousands of tokens is read and its
   *  token list cut to maxT with a notice, as pasted text is. */
  maxHashLength: 256 * 1024,
  ...TIMING_LIMITS,
} as const;

export const PAGE: SubState<PageState, ModelSlice> = {
  fields: {
    view: {
      key: 'view',
      label: 'view',
      kind: oneOf(VIEWS, (l, v) => `${l} “${v}” is unknown; showing the heads`),
      default: 'heads',
      compute: false,
    },
    head: { key: 'head', label: 'selected head', kind: headKind, default: 0, compute: false },
    cell: { key: 'cell', label: 'selected cell', kind: cellKind, default: [], compute: false },
    qsel: { key: 'qsel', label: 'selected queries', kind: selectionKind, default: [], compute: false },
    ksel: { key: 'ksel', label: 'selected keys', kind: selectionKind, default: [], compute: false },
    wif: { key: 'wif', label: 'the what-if change', kind: whatIfKind, default: '', compute: false },
  },
};

/** Each feature's rows by its key (fromEntries forgets the keys' types; this names them again). */
const FEATURE_TABLE = Object.fromEntries(FEATURES.map((f) => [f.key, f.state])) as {
  [F in Feature as F['key']]: F['state'];
};
/** THE table. Order = link order = normalization order: the model, the page (its head's limit
 *  reads the model), then the labs in list order. The compiler checks that each feature's rows
 *  read only what the composed state has (its slice). */
const { model, ...labs } = FEATURE_TABLE;
export const TABLE: Table<State> = withExerciseStarts({ model, page: PAGE, ...labs });

/** An exercise's start (attention/exercise/catalogue.ts) replaces the defaults of the fields it
 *  sets: those rows get a link default that reads the link's `ex`. So `#v=1&ex=fix-nan` opens the
 *  exercise as it starts, and a student's link writes exactly what they changed from that start. */
function withExerciseStarts(t: Table<State>): Table<State> {
  const out: Record<string, unknown> = {};
  for (const [g, sub] of Object.entries(t) as [string, SubState<Record<string, unknown>, State>][]) {
    const fields: Record<string, Field<unknown, State>> = {};
    for (const [name, f] of Object.entries(sub.fields) as [string, Field<unknown, State>][]) {
      const base = f.linkDefault;
      fields[name] = !START_KEYS.includes(f.key)
        ? f
        : {
            ...f,
            linkDefault: (s) => {
              const start = exerciseStart((s as Partial<State>).exercise?.id);
              const v = start && f.key in start ? start[f.key] : base ? base(s) : f.default;
              return Array.isArray(v) ? [...v] : v;
            },
          };
    }
    out[g] = { ...sub, fields };
  }
  return out as Table<State>;
}

export const STATE = createTable<State>(TABLE);
export const {
  rows,
  defaultState,
  cloneState,
  statesEqual,
  computeKey,
  normalizeState,
  withPatch,
  linkFields,
  withLinkFields,
} = STATE;
const CODEC = createCodec(STATE, { maxHashLength: LIMITS.maxHashLength });
export const { encodeState } = CODEC;

/** A link that asks another tab for the text model (`src=text`, e.g. `view=heads&src=text` or
 *  `view=decode&src=text`) opens the Text tab, which is where that model is shown and continued:
 *  its text, checkpoint and sampling keys are the Text tab's own; a Decode link also generates
 *  (`tgen=1`). Returns the hash to decode and what to tell the reader (null: unchanged). */
export function textModelLink(hash: string): { hash: string; notice: string | null } {
  const parts = hash.replace(/^#/, '').split('&');
  if (!parts.includes('src=text')) return { hash, notice: null };
  const view = parts.find((p) => p.startsWith('view='))?.slice(5) ?? '';
  if (view === 'text') return { hash: '#' + parts.filter((p) => p !== 'src=text').join('&'), notice: null };
  const out = parts.filter((p) => p !== 'src=text' && !p.startsWith('view='));
  out.push('view=text');
  const decode = view === 'decode';
  if (decode && !out.some((p) => p.startsWith('tgen='))) out.push('tgen=1');
  const from = view ? `the ${view} view` : 'this link';
  return {
    hash: '#' + out.join('&'),
    notice: `src=text: the model trained on real text is shown in the Text tab, so ${from} opens there${decode ? ' and continues your text (“Continue the text”: dlen, temp, topk, topp, sseed)' : ''}.`,
  };
}

/** The codec's decodeHash, with textModelLink applied first. */
export function decodeHash(hashIn: unknown): ReturnType<typeof CODEC.decodeHash> {
  if (typeof hashIn !== 'string') return CODEC.decodeHash(hashIn);
  const t = textModelLink(hashIn);
  const d = CODEC.decodeHash(t.hash);
  return t.notice ? { ...d, notices: [t.notice, ...d.notices] } : d;
}

/** The link (hash) of the default state with `patch` laid over it, normalized. */
export function hashOf(patch: Patch): string {
  return encodeState(normalizeState(withPatch(defaultState(), patch)).state);
}
