// The experiment cards' panel: the chips that open a card, the open card with its slider or select, its table.
import { el, clear, fmt } from '../ui/dom';
import { PRECISIONS } from '../shared/variant';
import { SRAM_KIB, type LessonState } from './state';
import { CARD_TITLES, CARD_VARIANT, type CardResult } from './experiments';
import { EXPERIMENT_IDS, type ExperimentId } from './experiment-ids';
import type { LessonContext } from './lesson-context';
import { copyButton } from './print-panel';

/** The card chips (links that open a card) and the open card: its sentence, its control, its paragraphs
 *  and its table. */
export function renderCards(list: HTMLElement, box: HTMLElement, ctx: LessonContext, card: CardResult | null): void {
  const open = ctx.state.lesson.exp;
  clear(list);
  for (const id of EXPERIMENT_IDS) {
    const a = el('a', {
      href: ctx.hashOf(cardPatch(id)),
      class: id === open ? 'card-chip open' : 'card-chip',
      'data-card': id,
      text: CARD_TITLES[id],
    });
    if (id === open) a.setAttribute('aria-current', 'true');
    list.append(el('li', {}, a));
  }
  clear(box);
  box.hidden = open === 'none';
  if (open === 'none') return;
  box.append(el('h4', { text: CARD_TITLES[open] }));
  // The plain sentence first, then the card's own control.
  if (card?.lead) box.append(el('p', { class: 'card-lead', text: card.lead }));
  if (open === 'shift') box.append(logitSlider(ctx));
  if (open === 'flash') box.append(sramSelect(ctx));
  if (!card) {
    box.append(el('p', { class: 'muted', text: 'Running…' }));
    return;
  }
  box.dataset.card = card.id;
  box.dataset.figures = JSON.stringify(card.figures);
  // In fit mode (a slide) parts drop until the page fits, highest
  // data-fit-drop first: the table, the line, the later paragraphs from the end, what it
  // measured; the plain sentence and the first paragraph stay.
  if (card.line)
    box.append(
      el(
        'p',
        { class: 'card-line', 'data-fit-drop': 95 },
        el('span', { text: 'Line: ' }),
        el('code', { text: card.line }),
      ),
    );
  if (card.measured)
    box.append(
      el(
        'p',
        { class: 'card-measured', 'data-fit-drop': 40 },
        el('strong', { text: 'Measured on: ' }),
        el('span', { text: card.measured }),
      ),
    );
  card.text.forEach((t, i) =>
    box.append(el('p', { class: 'card-text', 'data-fit-drop': i === 0 ? undefined : 50 + i, text: t })),
  );
  if (card.table) {
    const table = cardTable(card.table, card.id);
    table.dataset.fitDrop = '100';
    box.append(table);
  }
  if (card.numpy) box.append(numpyBlock(card.numpy));
}

/** "Reproduce in NumPy": the card's lines, closed until asked for, with a Copy button. */
function numpyBlock(n: NonNullable<CardResult['numpy']>): HTMLElement {
  const pre = el('pre', {
    class: 'np-code',
    'data-testid': 'card-numpy',
    'data-prints': JSON.stringify(n.prints),
    'data-tolerance': JSON.stringify(n.tolerance ?? {}),
    text: n.code,
  });
  return el(
    'details',
    { class: 'card-numpy', 'data-fit-drop': 99 },
    el('summary', { text: 'Reproduce in NumPy' }),
    el(
      'p',
      { class: 'muted np-code-note' },
      'The lines below run as they are in a notebook (NumPy only) and print this card’s figures; the data the card ran on is written in as numbers. ',
      copyButton(n.code, pre, 'copy the NumPy lines'),
    ),
    pre,
  );
}

/** The FlashAttention card's on-chip memory M (link key lsram); the card recomputes with it. */
function sramSelect(ctx: LessonContext): HTMLElement {
  const s = el('select', { 'aria-label': 'on-chip memory M', 'data-testid': 'flash-sram' });
  for (const kib of SRAM_KIB)
    s.append(el('option', { value: String(kib), text: `${kib} KiB${SRAM_NOTE[kib] ? ` (${SRAM_NOTE[kib]})` : ''}` }));
  s.value = String(ctx.state.lesson.sram);
  s.addEventListener('change', () => ctx.update({ lesson: { sram: Number(s.value) } }));
  return el(
    'div',
    { class: 'logit-row' },
    el('label', {}, el('span', { text: 'On-chip memory M (fast SRAM per block) ' }), s),
  );
}

function logitSlider(ctx: LessonContext): HTMLElement {
  const l = ctx.state.lesson;
  const r = el('input', {
    type: 'range',
    min: '1',
    max: '800',
    step: '0.5',
    value: String(l.logit),
    'aria-label': 'largest logit',
  });
  r.addEventListener('change', () => ctx.update({ lesson: { logit: Number(r.value) } }));
  const p = el('select', { 'aria-label': 'precision (line 1: it changes the pictures too)' });
  for (const v of PRECISIONS) p.append(el('option', { value: v, text: v }));
  p.value = l.precision;
  p.addEventListener('change', () => ctx.update({ lesson: { precision: p.value as LessonState['precision'] } }));
  return el(
    'div',
    { class: 'logit-row' },
    el('label', {}, el('span', { text: `largest logit ${fmt(l.logit)} ` }), r),
    el('label', {}, el('span', { text: 'precision (line 1’s select) ' }), p),
  );
}

const SRAM_NOTE: Record<number, string> = {
  48: 'a GPU block’s default',
  64: 'default',
  96: 'V100’s most per SM',
  164: 'A100’s most per SM',
  228: 'H100’s most per SM',
};

function cardTable(t: NonNullable<CardResult['table']>, cardId: string): HTMLElement {
  // The caption sits above the scrolling box (a phone scrolls the table sideways, not its caption).
  const id = `card-table-${cardId}`;
  const table = el(
    'table',
    { class: 'card-table', 'data-testid': 'card-table', 'aria-labelledby': id },
    el('thead', {}, el('tr', {}, ...t.head.map((h) => el('th', { scope: 'col', text: h })))),
  );
  const body = el('tbody');
  for (const r of t.rows) {
    const tr = el('tr', { 'data-row': JSON.stringify(r.data) });
    r.cells.forEach((c, i) => tr.append(el(i === 0 ? 'th' : 'td', i === 0 ? { scope: 'row', text: c } : { text: c })));
    body.append(tr);
  }
  table.append(body);
  return el(
    'div',
    {},
    el('p', { class: 'card-table-caption', id, text: t.caption }),
    el('div', { class: 'table-scroll' }, table),
  );
}

/** A card's link: the Lesson view with the card open (and a variant card's variant set). */
export function cardPatch(id: ExperimentId): { page: { view: 'lesson' }; lesson: Partial<LessonState> } {
  return { page: { view: 'lesson' }, lesson: { exp: id, ...(CARD_VARIANT[id] ?? {}) } as Partial<LessonState> };
}
