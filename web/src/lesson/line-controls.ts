// The code lines' controls (a select or a checkbox on each line) and which line a variant change touched.
import { el } from '../ui/dom';
import { NORMALIZERS, POSITIONS, PRECISIONS } from '../shared/variant';
import type { LessonState } from './state';
import type { CodeLine, Control, LineId } from './code-lines';
import type { LessonContext } from './lesson-context';

/** A code line's own control (a select or a checkbox), or null for a line without one. */
export function lineControl(line: CodeLine, n: number, ctx: LessonContext): HTMLElement | null {
  const l = ctx.state.lesson;
  const aria = `line ${n}, ${line.label}`;
  const select = (values: readonly string[], value: string, set: (v: string) => void) => {
    const s = el('select', { 'aria-label': aria, 'aria-describedby': `lesson-line-${line.id}` });
    for (const v of values) s.append(el('option', { value: v, text: v }));
    s.value = value;
    s.addEventListener('change', () => set(s.value));
    return s;
  };
  const check = (value: boolean, text: string, set: (v: boolean) => void) => {
    const c = el('input', { type: 'checkbox', 'aria-label': aria, 'aria-describedby': `lesson-line-${line.id}` });
    c.checked = value;
    c.addEventListener('change', () => set(c.checked));
    return el('label', { class: 'line-check' }, c, el('span', { text }));
  };
  const up = (p: Partial<LessonState>) => ctx.update({ lesson: p });
  const c: Control = line.control;
  switch (c) {
    case 'precision':
      return select(PRECISIONS, l.precision, (v) => up({ precision: v as LessonState['precision'] }));
    case 'qkNorm':
      return check(l.qkNorm, 'qk-norm', (v) => up({ qkNorm: v }));
    case 'position':
      return select(POSITIONS, l.position, (v) => up({ position: v as LessonState['position'] }));
    case 'maskMode':
      return select(['before', 'after'], l.maskMode, (v) => up({ maskMode: v as LessonState['maskMode'] }));
    case 'maxShift':
      return check(l.maxShift, 'max shift', (v) => up({ maxShift: v }));
    case 'normalizer':
      return select(NORMALIZERS, l.normalizer, (v) => up({ normalizer: v as LessonState['normalizer'] }));
    case 'scale': {
      const m = ctx.state.model.scale;
      return select(['sqrt', 'none', '10'], typeof m === 'number' ? (m === 10 ? '10' : 'sqrt') : m, (v) =>
        ctx.update({ model: { scale: v === '10' ? 10 : (v as 'sqrt' | 'none') } }),
      );
    }
    default:
      return null;
  }
}

/** Which line a variant change touched (for the highlight). */
export function changedLine(a: LessonState, b: LessonState): LineId | null {
  if (a.precision !== b.precision) return 'dtype';
  if (a.qkNorm !== b.qkNorm) return 'qknorm';
  if (a.position !== b.position) return b.position === 'alibi' || a.position === 'alibi' ? 'alibi' : 'rope';
  if (a.maskMode !== b.maskMode) return 'mask';
  if (a.maxShift !== b.maxShift) return 'shift';
  if (a.normalizer !== b.normalizer || a.sigmoidBias !== b.sigmoidBias) return 'norm';
  return null;
}
