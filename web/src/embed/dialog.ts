// The "Embed…" dialog: the iframe snippet (with its origin- and source-checking resize listener)
// and the custom-element snippet for the current view, each with a copy button.
import { el, clear } from '../ui/dom';
import { embedSnippet, cspSnippet } from './embed';

function button(text: string, testid: string, on: () => void): HTMLButtonElement {
  const b = el('button', { type: 'button', class: 'btn small', 'data-testid': testid, text });
  b.addEventListener('click', on);
  return b;
}

/** Fill `dialog` with the snippets for the state encoded in `hash` and open it. */
export function openEmbedDialog(
  dialog: HTMLDialogElement,
  hash: string,
  copy: (text: string, what: string) => void,
): void {
  clear(dialog);
  const page = new URL(location.href);
  page.search = '';
  page.hash = '';
  const iframe = embedSnippet(page.toString(), hash, { show: 'tokens,mask' });
  const script = new URL('attention-playground.js', page).toString();
  const element = `<script type="module" src="${script}"></script>\n<attention-playground hash="${hash.replace(/"/g, '&quot;')}" show="tokens,mask"></attention-playground>`;
  const ta1 = el('textarea', {
    readonly: true,
    rows: 9,
    'data-testid': 'embed-snippet',
    'aria-label': 'iframe snippet',
  });
  ta1.value = iframe;
  const strict = cspSnippet(page.toString(), hash, { show: 'tokens,mask' });
  const ta3 = el('textarea', {
    readonly: true,
    rows: 3,
    'data-testid': 'embed-snippet-csp',
    'aria-label': 'iframe snippet for strict Content-Security-Policy',
  });
  ta3.value = strict;
  const ta2 = el('textarea', { readonly: true, rows: 3, 'aria-label': 'custom element snippet' });
  ta2.value = element;
  const close = el('button', { type: 'button', class: 'btn', text: 'Close' });
  close.addEventListener('click', () => dialog.close());
  dialog.append(
    el('h2', { id: 'embed-title', text: 'Embed this view' }),
    el('p', {
      class: 'muted',
      text: 'Paste into a course page. The frame reports its height, and the listener checks the message origin and source before resizing.',
    }),
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
