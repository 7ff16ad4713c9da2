// The exercise a link opens (state.exercise, link key `ex`): '' for none, a gallery id
// (catalogue.ts) or a teacher's predict (`predict-h2-q8`). Rows of the state table (app/state.ts).
// Pure: no DOM, no globals.
import { brief, textKind } from '../../state/fields';
import type { SubState } from '../../state/table';
import { effectiveHeads, type ModelSlice } from '../state';
import { exerciseOf } from './catalogue';
import { formatGrid, parseGrid } from './grid';
import { vocabulary } from './build';

export interface ExerciseState {
  /** The exercise shown, or '' for none. */
  id: string;
  /** A "build a head" exercise's grids (grid.ts: the non-zero cells), or ''. */
  grid: string;
}
export interface ExerciseSlice {
  exercise: ExerciseState;
}

const MAX_ID = 40;

const idKind = textKind((v, c) => {
  if (v === '') return '';
  if (typeof v === 'string' && v.length <= MAX_ID && exerciseOf(v)) return v;
  c.notices.push(`${c.label} “${brief(v)}” is unknown; no exercise is shown (the gallery lists them)`);
  return '';
});

const gridKind = textKind((v, c) => {
  if (typeof v !== 'string') return '';
  const { grid, bad } = parseGrid(v);
  if (bad.length)
    c.notices.push(
      `${c.label}: ${bad.length} cell${bad.length > 1 ? 's' : ''} unreadable (e.g. “${brief(bad[0])}”); left out`,
    );
  return formatGrid(grid);
});

export const EXERCISE: SubState<ExerciseState, ExerciseSlice & ModelSlice> = {
  fields: {
    id: { key: 'ex', label: 'exercise', kind: idKind, default: '', compute: false },
    grid: { key: 'exg', label: 'your W_Q', kind: gridKind, default: '', compute: false },
  },
  fix(s, notices) {
    const e = exerciseOf(s.exercise.id);
    if (e?.kind === 'build' && s.exercise.grid !== '') {
      // Cells past the exercise's words or positions are left out.
      const { grid } = parseGrid(s.exercise.grid);
      const nv = vocabulary(e).length;
      const n = {
        w: e.grids.includes('word') ? nv : 0,
        p: e.sentence.length,
        n: e.grids.includes('previous') ? nv : 0,
      };
      let dropped = 0;
      for (const k of [...grid.keys()]) {
        const [r, c] = k.slice(1).split('.').map(Number);
        const size = n[k[0] as 'w' | 'p' | 'n'];
        if (r >= size || c >= size) {
          grid.delete(k);
          dropped++;
        }
      }
      if (dropped)
        notices.push(
          `your W_Q: ${dropped} cell${dropped > 1 ? 's are' : ' is'} outside this exercise's grid; left out`,
        );
      s.exercise.grid = formatGrid(grid);
    } else if (e?.kind !== 'build' && s.exercise.grid !== '') {
      s.exercise.grid = '';
    }
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
