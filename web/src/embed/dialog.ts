// The "Embed…" dialog: the iframe snippet (with its origin- and source-checking resize listener)
// and the custom-element snippet for the current view, each with a copy button; and "Make an
// exercise": the same snippets for the view as a predict exercise on a row the teacher picks.
import { el, clear } from '../ui/dom';
import { embedSnippet, cspSnippet } from './embed';

function button(text: string, testid: string, on: () => void): HTMLButtonElement {
  const b = el('button', { type: 'button', class: 'btn small', 'data-testid': testid, text });
  b.addEventListener('click', on);
  return b;
}

/** "Make an exercise": the heads and tokens of the view, and the link of the view as a predict
 *  exercise on one head's row (the page builds it: the ids are the exercise feature's). */
export interface ExerciseMaker {
  heads: number;
  tokens: string[];
  head: number;
  hash(head: number, query: number): string;
}

/** Fill `dialog` with the snippets for the state encoded in `hash` and open it. */
export function openEmbedDialog(
  dialog: HTMLDialogElement,
  viewHash: string,
  copy: (text: string, what: string) => void,
  maker: ExerciseMaker | null = null,
): void {
  clear(dialog);
  const page = new URL(location.href);
  page.search = '';
  page.hash = '';
  const script = new URL('attention-playground.js', page).toString();
  let hash = viewHash;
  let iframe = '';
  let strict = '';
  let element = '';
  const ta1 = el('textarea', {
    readonly: true,
    rows: 9,
    'data-testid': 'embed-snippet',
    'aria-label': 'iframe snippet',
  });
  const ta3 = el('textarea', {
    readonly: true,
    rows: 3,
    'data-testid': 'embed-snippet-csp',
    'aria-label': 'iframe snippet for strict Content-Security-Policy',
  });
  const ta2 = el('textarea', { readonly: true, rows: 3, 'aria-label': 'custom element snippet' });
  const fill = () => {
    iframe = embedSnippet(page.toString(), hash, { show: 'tokens,mask' });
    strict = cspSnippet(page.toString(), hash, { show: 'tokens,mask' });
    element = `<script type="module" src="${script}"></script>\n<attention-playground hash="${hash.replace(/"/g, '&quot;')}" show="tokens,mask"></attention-playground>`;
    ta1.value = iframe;
    ta3.value = strict;
    ta2.value = element;
  };
  fill();
  const close = el('button', { type: 'button', class: 'btn', text: 'Close' });
  close.addEventListener('click', () => dialog.close());
  dialog.append(
    el('h2', { id: 'embed-title', text: 'Embed this view' }),
    el('p', {
      class: 'muted',
      text: 'Paste into a course page. The frame reports its height, and the listener checks the message origin and source before resizing.',
    }),
    maker ? makerFields(maker, (h) => ((hash = h ?? viewHash), fill())) : '',
    ta1,
    el(
      'div',
      { class: 'dialog-actions' },
      button('Copy iframe code', 'copy-iframe', () => copy(iframe, 'Embed code')),
    ),
    el('p', {
      class: 'muted',
      text: 'For a site with a strict Content-Security-Policy (no inline script or style): the same frame with attributes only, and a small listener script (copy embed-listener.js to the site, or allow its address in script-src; the frame’s address goes in frame-src).',
    }),
    ta3,
    el(
      'div',
      { class: 'dialog-actions' },
      button('Copy strict-CSP code', 'copy-iframe-csp', () => copy(strict, 'Strict-CSP embed code')),
    ),
    el('p', { class: 'muted', text: 'Or use the custom element:' }),
    ta2,
    el(
      'div',
      { class: 'dialog-actions' },
      button('Copy element code', 'copy-element', () => copy(element, 'Element code')),
      close,
    ),
  );
  dialog.showModal();
  // Opening the dialog focuses the first textarea with its caret at the end of the value, which
  // scrolled the snippet to its last line: start at the top.
  for (const ta of [ta1, ta3, ta2]) {
    ta.setSelectionRange(0, 0);
    ta.scrollTop = 0;
  }
}

/** "Make an exercise": none, or predict one row of one head (the weights hidden until checked). */
function makerFields(m: ExerciseMaker, changed: (hash: string | null) => void): HTMLElement {
  const on = el('input', { type: 'checkbox', id: 'embed-ex-on', 'data-testid': 'embed-exercise' });
  const head = el('select', { id: 'embed-ex-head', 'data-testid': 'embed-exercise-head', disabled: true });
  for (let h = 0; h < m.heads; h++) head.append(el('option', { value: h, text: `head ${h + 1}` }));
  head.value = String(Math.min(m.head, m.heads - 1));
  const row = el('select', { id: 'embed-ex-row', 'data-testid': 'embed-exercise-row', disabled: true });
  m.tokens.forEach((t, i) => row.append(el('option', { value: i, text: `row ${i} “${t}”` })));
  row.value = String(m.tokens.length - 1);
  const update = () => {
    head.disabled = row.disabled = !on.checked;
    changed(on.checked ? m.hash(Number(head.value), Number(row.value)) : null);
  };
  for (const c of [on, head, row]) c.addEventListener('change', update);
  return el(
    'fieldset',
    { class: 'embed-exercise' },
    el('legend', { text: 'Make an exercise' }),
    el(
      'label',
      { class: 'check', for: on.id },
      on,
      el('span', { text: ' Predict a row: hide the weights until the student checks a prediction' }),
    ),
    el(
      'div',
      {},
      el('label', { for: head.id, text: 'Head ' }),
      head,
      ' ',
      el('label', { for: row.id, text: 'Row ' }),
      row,
    ),
    el('p', {
      class: 'muted',
      text: 'The link stores this view and the row, never the answer: the page computes the weights when the student checks.',
    }),
  );
}
