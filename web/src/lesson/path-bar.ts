// The guided path's bar ("Start here"): the step's title and sentences, ← / → between steps and
// a close button. The page (app/) shows it above every view while state.lesson.step > 0 and turns
// a step into its state (STEPS[n − 1].link with lstep = n); in ?embed=1 it is a slide sequence.
// A step with a question asks it first: the view under the bar is hidden (the stage gets the class
// `predicting`) until the student picks an answer or chooses to see it; the verdict then says what
// to look at. Answers are kept for the page's life, not in the link.
import { clear, el, setText } from '../ui/dom';
import { STEPS, type Prediction } from './path-steps';

export interface PathBar {
  root: HTMLElement;
  /** Show step n (1-based), or hide the bar for 0. */
  update(step: number): void;
}

/** `go(n)`: open step n (0 = close the path). `relayout`: the bar's height changed (a verdict
 *  replaced the choices), so a view fitted to the frame (fit mode) fits itself again. */
export function createPathBar(go: (step: number) => void, relayout: () => void = () => {}): PathBar {
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
  const ask = el('div', { class: 'path-predict', 'data-testid': 'path-predict' });
  const root = el(
    'section',
    { class: 'path-bar', 'aria-label': 'Guided path: both lessons in order', 'data-testid': 'path-bar' },
    el('div', { class: 'path-head' }, prev, count, next, title, close),
    text,
    ask,
  );
  root.hidden = true;
  /** The choice made at each step (-1: shown without a choice). */
  const answered = new Map<number, number>();
  const hideView = (on: boolean) => root.parentElement?.classList.toggle('predicting', on);
  const renderAsk = (n: number, p: Prediction | undefined) => {
    clear(ask);
    ask.hidden = !p;
    text.hidden = false;
    if (!p) return hideView(false);
    const picked = answered.get(n);
    hideView(picked === undefined);
    text.hidden = picked === undefined; // the step's sentences give the answer away
    ask.append(el('p', { class: 'path-question', text: `Predict first: ${p.question}` }));
    if (picked === undefined) {
      const choices = el('div', { class: 'path-choices', role: 'group', 'aria-label': 'your prediction' });
      p.choices.forEach((c, i) => {
        const b = el('button', { type: 'button', class: 'btn', text: c });
        b.addEventListener('click', () => {
          answered.set(n, i);
          shown = `${n}:${i}`;
          renderAsk(n, p);
          verdictFocus();
        });
        choices.append(b);
      });
      const skip = el('button', { type: 'button', class: 'link-btn', text: 'Just show me' });
      skip.addEventListener('click', () => {
        answered.set(n, -1);
        shown = `${n}:-1`;
        renderAsk(n, p);
        verdictFocus();
      });
      choices.append(skip);
      ask.append(choices);
      return;
    }
    const verdict =
      picked === -1
        ? `The answer: ${p.choices[p.answer]}.`
        : picked === p.answer
          ? `Right: ${p.choices[p.answer]}.`
          : `Not quite: you said “${p.choices[picked]}”; the view shows ${p.choices[p.answer]}.`;
    ask.append(
      el(
        'p',
        {
          class: 'path-verdict',
          tabindex: '-1',
          'data-verdict': picked === p.answer ? 'right' : picked === -1 ? 'shown' : 'wrong',
        },
        el('strong', { text: verdict }),
        ` ${p.look}`,
      ),
    );
  };
  const verdictFocus = () => {
    relayout();
    ask.querySelector<HTMLElement>('.path-verdict')?.focus();
  };
  /** What the question area shows now (a redraw of the same step keeps its buttons and focus). */
  let shown = '';
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
      if (n === 0) {
        shown = '';
        return hideView(false);
      }
      const s = STEPS[n - 1];
      const now = `${n}:${answered.get(n) ?? ''}`;
      if (now !== shown) renderAsk(n, s.predict);
      shown = now;
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
