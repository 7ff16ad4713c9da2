// A "build a head" exercise's grids as link text (state.exercise.grid, link key `exg`): the
// non-zero cells, `w<row>.<col>.<value>` (word grid), `p<row>.<col>.<value>` (position grid) or
// `n<row>.<col>.<value>` (layer 2's previous-word grid), joined by `_`, e.g. `p1.0.14_p2.1.14`. Pure: no DOM, no globals.
import type { GridName } from './catalogue';

/** Cells by `${grid}${row}.${col}` → value. */
export type Grid = Map<string, number>;

export const GRID_LIMITS = { maxIndex: 63, maxAbs: 100, maxCells: 2 * 64 * 64 } as const;

const CELL = /^([wpn])(\d{1,2})\.(\d{1,2})\.(-?\d{1,3}(?:\.\d{1,2})?)$/;

export const GRID_PREFIX: Record<GridName, string> = { word: 'w', position: 'p', previous: 'n' };
export const cellKey = (g: GridName, r: number, c: number) => `${GRID_PREFIX[g]}${r}.${c}`;

/** The cells of a grid's text; unreadable entries are returned in `bad` (the caller says so). */
export function parseGrid(text: string): { grid: Grid; bad: string[] } {
  const grid: Grid = new Map();
  const bad: string[] = [];
  if (text === '') return { grid, bad };
  for (const part of text.split('_').slice(0, GRID_LIMITS.maxCells)) {
    const m = CELL.exec(part);
    const r = m ? Number(m[2]) : NaN;
    const c = m ? Number(m[3]) : NaN;
    const v = m ? Number(m[4]) : NaN;
    if (!m || r > GRID_LIMITS.maxIndex || c > GRID_LIMITS.maxIndex || !(Math.abs(v) <= GRID_LIMITS.maxAbs)) {
      bad.push(part);
      continue;
    }
    if (v !== 0) grid.set(`${m[1]}${r}.${c}`, v);
  }
  return { grid, bad };
}

/** The canonical text: cells in grid, row, column order; zeros left out. */
export function formatGrid(grid: Grid): string {
  const keyOf = (k: string) => {
    const [r, c] = k.slice(1).split('.').map(Number);
    return ['wpn'.indexOf(k[0]), r, c];
  };
  return [...grid.entries()]
    .filter(([, v]) => v !== 0)
    .sort(([a], [b]) => {
      const x = keyOf(a);
      const y = keyOf(b);
      return x[0] - y[0] || x[1] - y[1] || x[2] - y[2];
    })
    .map(([k, v]) => `${k}.${Math.round(v * 100) / 100}`)
    .join('_');
}

/** A value typed into a cell: a number within ±maxAbs, rounded to 0.01; '' is 0; else null. */
export function cellValue(text: string): number | null {
  const t = text.trim().replace('−', '-');
  if (t === '') return 0;
  const v = Number(t);
  if (!Number.isFinite(v) || Math.abs(v) > GRID_LIMITS.maxAbs) return null;
  return Math.round(v * 100) / 100;
}
