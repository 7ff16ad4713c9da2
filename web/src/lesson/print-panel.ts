// A code line's printed arrays (line-prints.ts) as a disclosure under the line: closed by default,
// each array in NumPy's print() layout with a Copy button, so a student can paste it beside their
// notebook's output. Which lines are open is kept by the caller across redraws.
import { el } from '../ui/dom';
import type { LinePrint } from './line-prints';

/** Copies text to the clipboard; where the clipboard is refused (an insecure context, a sandboxed
 *  frame) the text is selected instead and the button says how to copy it. */
async function copy(text: string, pre: HTMLElement, button: HTMLButtonElement): Promise<void> {
  try {
    await navigator.clipboard.writeText(text);
    button.textContent = 'Copied';
  } catch {
    const range = document.createRange();
    range.selectNodeContents(pre);
    const sel = window.getSelection();
    sel?.removeAllRanges();
    sel?.addRange(range);
    button.textContent = 'Selected: press Ctrl+C';
  }
  window.setTimeout(() => (button.textContent = 'Copy'), 2500);
}

/** A Copy button for a block of text (the pre that shows it is selected where the clipboard is refused). */
export function copyButton(text: string, pre: HTMLElement, label: string): HTMLButtonElement {
  const button = el('button', { type: 'button', class: 'btn small', text: 'Copy', 'aria-label': label });
  button.addEventListener('click', () => void copy(text, pre, button));
  return button;
}

/** The disclosure for one line. `open`: whether it starts open; `onToggle` reports the reader's choice. */
export function printDisclosure(
  lineNo: number,
  prints: readonly LinePrint[],
  open: boolean,
  onToggle: (open: boolean) => void,
): HTMLDetailsElement {
  const names = prints.map((p) => p.expr).join(', ');
  const details = el(
    'details',
    { class: 'line-print', 'data-testid': 'line-print' },
    el('summary', { text: `print ${names}`, 'aria-label': `line ${lineNo}: print ${names}` }),
  );
  details.open = open;
  details.addEventListener('toggle', () => onToggle(details.open));
  for (const p of prints) {
    const pre = el('pre', { class: 'np-print', 'data-expr': p.expr, text: p.text });
    const button = copyButton(p.text, pre, `copy print(${p.expr}) of line ${lineNo}`);
    details.append(el('div', { class: 'np-print-head' }, el('code', { text: `>>> print(${p.expr})` }), button), pre);
  }
  return details;
}
