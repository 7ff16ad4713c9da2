// The exercise a link opens (state.exercise, link key `ex`): '' for none, a gallery id
// (catalogue.ts) or a teacher's predict (`predict-h2-q8`). Rows of the state table (app/state.ts).
// Pure: no DOM, no globals.
import { brief, decodeComponent, type Kind } from '../../state/fields';
import type { SubState } from '../../state/table';
import { effectiveHeads, type ModelSlice } from '../state';
import { exerciseOf } from './catalogue';

export interface ExerciseState {
  /** The exercise shown, or '' for none. */
  id: string;
}
export interface ExerciseSlice {
  exercise: ExerciseState;
}

const MAX_ID = 40;

const idKind: Kind<string, unknown> = {
  same: (a, b) => a === b,
  format: (v, key) => [key, encodeURIComponent(v)],
  parse(raw, key, notices) {
    const v = decodeComponent(raw, true);
    if (v === null) notices.push(`setting “${key}” is not valid percent-encoding; it was ignored`);
    return v ?? undefined;
  },
  normalize(v, c) {
    if (v === '') return '';
    if (typeof v === 'string' && v.length <= MAX_ID && exerciseOf(v)) return v;
    c.notices.push(`${c.label} “${brief(v)}” is unknown; no exercise is shown (the gallery lists them)`);
    return '';
  },
};

export const EXERCISE: SubState<ExerciseState, ExerciseSlice & ModelSlice> = {
  fields: {
    id: { key: 'ex', label: 'exercise', kind: idKind, default: '', compute: false },
  },
  fix(s, notices) {
    const e = exerciseOf(s.exercise.id);
    if (e?.kind !== 'predict') return;
    // A teacher's predict names a head and a row: both must exist in the model the link opens.
    const heads = effectiveHeads(s);
    const t = s.model.tokens.length;
    if (e.head >= heads || e.query >= t) {
      notices.push(
        `exercise “${e.id}” asks about head ${e.head + 1}, row ${e.query}, but this model has ${heads} head${heads > 1 ? 's' : ''} and ${t} tokens; no exercise is shown`,
      );
      s.exercise.id = '';
    }
  },
};
