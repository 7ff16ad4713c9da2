// The guided path's bar ("Start here"): the step's title and sentences, ← / → between steps and
// a close button. The page (app/) shows it above every view while state.lesson.step > 0 and turns
// a step into its state (STEPS[n − 1].link with lstep = n); in ?embed=1 it is a slide sequence.
import { el, setText } from '../ui/dom';
import { STEPS } from './path-steps';

export interface PathBar {
  root: HTMLElement;
  /** Show step n (1-based), or hide the bar for 0. */
  update(step: number): void;
}

/** `go(n)`: open step n (0 = close the path). */
export function createPathBar(go: (step: number) => void): PathBar {
  const title = el('strong', { class: 'path-title' });
  const text = el('p', { class: 'path-text' });
  const count = el('span', { class: 'path-count', 'aria-live': 'polite' });
  const prev = el('button', { type: 'button', class: 'btn', 'aria-label': 'previous step', text: '←' });
  const next = el('button', { type: 'button', class: 'btn', 'aria-label': 'next step', text: '→' });
  const close = el('button', { type: 'button', class: 'btn', 'aria-label': 'close the guided path', text: '×' });
  let step = 0;
  prev.addEventListener('click', () => step > 1 && go(step - 1));
  next.addEventListener('click', () => step < STEPS.length && go(step + 1));
  close.addEventListener('click', () => go(0));
  const root = el(
    'section',
    { class: 'path-bar', 'aria-label': 'Guided path: both lessons in order', 'data-testid': 'path-bar' },
    el('div', { class: 'path-head' }, prev, count, next, title, close),
    text,
  );
  root.hidden = true;
  // ← / → anywhere but in a field, a slider, the tabs or a heatmap (which use the arrow keys).
  document.addEventListener('keydown', (e) => {
    if (step === 0 || e.altKey || e.ctrlKey || e.metaKey) return;
    const t = e.target as HTMLElement | null;
    if (t && t.closest?.('input, select, textarea, [contenteditable], [role="tab"], .hm-frame')) return;
    if (e.key === 'ArrowRight' && step < STEPS.length) go(step + 1);
    else if (e.key === 'ArrowLeft' && step > 1) go(step - 1);
    else return;
    e.preventDefault();
  });
  return {
    root,
    update(n) {
      step = n;
      root.hidden = n === 0;
      if (n === 0) return;
      const s = STEPS[n - 1];
      setText(count, `Step ${n} of ${STEPS.length}`);
      setText(title, s.title);
      setText(text, s.text);
      prev.disabled = n <= 1;
      next.disabled = n >= STEPS.length;
    },
  };
}

/** The link fields of step n (its state over the default one, and the step itself). */
export function stepFields(n: number): Record<string, unknown> {
  return n === 0 ? {} : { ...STEPS[n - 1].link, lstep: n };
}
