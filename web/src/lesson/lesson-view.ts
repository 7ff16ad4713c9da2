// The Lesson view: the computation as code lines, each with its control; the standard computation
// beside the changed one with their difference and badges; the experiment cards. The runs are in
// run.ts and experiments.ts (no DOM); this file only draws them. The core runs on the page's
// thread (the lesson's states are small).
import { Heatmap, rowLabelWidth } from '../ui/heatmap';
import { el, clear, fmt, tokenRef } from '../ui/dom';
import { legend } from '../ui/legend';
import type { LabContext, View, ViewFactory } from '../ui/view';
import { loadCore, type AttnCore } from '../wasm/load-core';
import { preferenceFromSearch } from '../wasm/core-build';
import { NORMALIZERS, POSITIONS, PRECISIONS, STANDARD, isStandard } from '../shared/variant';
import { SRAM_KIB, type LessonState } from './state';
import { codeLines, type CodeLine, type Control, type LineId, type Picture } from './code-lines';
import { compare, type Arr, type Badges, type Comparison, type RunModel } from './run';
import { CARD_TITLES, CARD_VARIANT, runCard, type CardResult } from './experiments';
import { EXPERIMENT_IDS, type ExperimentId } from './experiment-ids';
import './lesson.css';

export interface LessonSlice {
  model: RunModel;
  lesson: LessonState;
  page: { head: number };
}
export type LessonPatch = { lesson?: Partial<LessonState>; model?: { scale?: RunModel['scale'] } };
export interface LessonContext extends LabContext<LessonSlice, LessonPatch> {
  /** Open the guided path at its first step (the page turns a step into its whole state). */
  startPath(): void;
  hashOf(patch: { page?: { view: 'lesson' }; lesson?: Partial<LessonState> }): string;
}

const toF32 = (a: Arr): Float32Array => (a instanceof Float32Array ? a : Float32Array.from(a));

class LessonView implements View<LessonContext> {
  readonly id = 'lesson';
  readonly root: HTMLElement;
  private ctx: LessonContext | null = null;
  private core: AttnCore | null = null;
  private loading = false;
  private lines = el('ol', { class: 'code-lines', 'aria-label': 'The computation, one line per step' });
  private status = el('p', { class: 'muted', 'aria-live': 'polite', text: 'Loading the core…' });
  private maps: Record<'std' | 'chg' | 'diff' | 'scores' | 'outStd' | 'outChg', Heatmap>;
  private figs: Record<string, HTMLElement> = {};
  private badgeBox = el('div', { class: 'lesson-badges' });
  private readout = el('p', { class: 'readout', 'aria-live': 'polite', text: 'Point at or focus a cell to read it.' });
  private cardList = el('ul', { class: 'lesson-cards' });
  private cardBox = el('section', { class: 'lesson-card', 'aria-live': 'polite' });
  private lastKey = '';
  private prevVariant: LessonState | null = null;
  private justChanged: LineId | null = null;
  private prevScale: RunModel['scale'] | null = null;
  private tokens: string[] = [];
  private width = 0;
  private size = 220;

  constructor() {
    const mk = (label: string, cols: 'keys' | 'dims') => new Heatmap({
      label, maxSize: 220, minCell: 2, maxCell: 20, showLabels: true, interactive: true,
      axisTitles: [cols === 'keys' ? 'keys →' : 'dims →', 'queries ↓'],
      describe: (i, j, v) => `${label}: ${cols === 'keys' ? `query ${tokenRef(this.tokens, i)} → key ${tokenRef(this.tokens, j)}` : `token ${tokenRef(this.tokens, i)}, dim ${j}`}: ${fmt(v)}`,
      onCell: (t) => (this.readout.textContent = t),
    });
    this.maps = { std: mk('Standard weights', 'keys'), chg: mk('Changed weights', 'keys'), diff: mk('Changed − standard', 'keys'), scores: mk('Changed scores', 'keys'), outStd: mk('Standard output', 'dims'), outChg: mk('Changed output', 'dims') };
    const fig = (key: keyof LessonView['maps'], caption: string, picture: Picture) => {
      const f = el('figure', { class: 'lesson-fig', 'data-picture': picture ?? '', 'data-map': key }, el('figcaption', { text: caption }), this.maps[key].root);
      this.figs[key] = f;
      return f;
    };
    const start = el('button', { type: 'button', class: 'start-here', text: 'Start here: the guided path' });
    start.addEventListener('click', () => this.ctx?.startPath());
    this.root = el('div', { class: 'view-lesson' },
      el('p', { class: 'muted', text: 'The attention computation line by line. Each line carries its control; change one and the “Standard vs changed” pictures recompute with it, beside the standard computation (same head, same tokens).' }),
      start,
      el('div', { class: 'lesson-top' },
        el('section', { class: 'lesson-code' }, el('h3', { class: 'panel-title', text: 'The computation' }), this.lines, this.status),
        el('section', { class: 'lesson-pics' }, el('h3', { class: 'panel-title', text: 'Standard vs changed' }), this.badgeBox,
          el('div', { class: 'lesson-figs' }, fig('std', 'Standard: softmax weights', 'weights'), fig('chg', 'Changed: weights', 'weights'), fig('diff', 'Difference (changed − standard)', 'weights'), fig('scores', 'Changed: scores the normalizer receives (unmasked)', 'scores'), fig('outStd', 'Standard output W @ V', 'output'), fig('outChg', 'Changed output', 'output')),
          legend({ lo: 0, hi: 1, title: 'weight', masked: true, nan: true }), this.readout)),
      el('h3', { class: 'panel-title', text: 'Experiments' }), this.cardList, this.cardBox);
  }

  heatmaps() {
    return [{ name: 'lesson-standard', heatmap: this.maps.std }, { name: 'lesson-changed', heatmap: this.maps.chg }, { name: 'lesson-difference', heatmap: this.maps.diff }];
  }

  render(ctx: LessonContext): void {
    this.ctx = ctx;
    if (!this.core) {
      if (!this.loading) {
        this.loading = true;
        loadCore(preferenceFromSearch(location.search)).then((c) => {
          this.core = c;
          if (this.ctx) this.render(this.ctx);
        }, (e: Error) => (this.status.textContent = `The core did not load: ${e.message}`));
      }
      this.renderCards(ctx, null);
      return;
    }
    const l = ctx.state.lesson;
    if (this.prevVariant) this.justChanged = changedLine(this.prevVariant, l) ?? (this.prevScale !== ctx.state.model.scale ? 'scores' : this.justChanged);
    this.prevVariant = { ...l };
    this.prevScale = ctx.state.model.scale;
    this.fitWidth(ctx.width);
    const key = JSON.stringify([ctx.state.model, ctx.state.page.head, l]);
    if (key === this.lastKey) return;
    this.lastKey = key;
    delete this.root.dataset.drawn;
    this.renderLines(ctx);
    try {
      const c = compare(this.core, ctx.state.model, l, ctx.state.page.head);
      this.draw(c, ctx);
      this.status.textContent = isStandard(l) ? 'Standard computation: change a line to compare.' : `Changed lines highlighted; max |Δw| = ${fmt(c.maxAbsDiff)}.`;
    } catch (e) {
      const err = e as Error & { field?: string };
      this.status.textContent = `The core refused these settings${err.field ? ` (field ${err.field})` : ''}: ${err.message}`;
    }
    let card: CardResult | null = null;
    if (l.exp !== 'none') {
      try {
        card = runCard(this.core, l.exp, ctx.state.model, l.logit, l.precision, l.sram);
      } catch (e) {
        card = { id: l.exp, title: CARD_TITLES[l.exp], line: '', text: [`The core refused this run: ${(e as Error).message}`], figures: {} };
      }
    }
    this.renderCards(ctx, card);
    // What a test waits for: this state's pictures and card are drawn.
    this.root.dataset.drawn = key;
  }

  private renderLines(ctx: LessonContext): void {
    const m = ctx.state.model, l = ctx.state.lesson;
    const cur = { variant: l, scale: m.scale, fill: m.fill };
    const lines = codeLines(cur, { variant: STANDARD, scale: m.scale, fill: m.fill });
    clear(this.lines);
    lines.forEach((line, n) => this.lines.append(this.lineItem(line, n + 1, ctx)));
  }

  private lineItem(line: CodeLine, n: number, ctx: LessonContext): HTMLElement {
    const cls = ['code-line', line.changed ? 'changed' : '', line.inactive ? 'inactive' : '', this.justChanged === line.id ? 'just-changed' : ''].filter(Boolean).join(' ');
    const code = el('code', { id: `lesson-line-${line.id}`, text: line.code });
    const li = el('li', { class: cls, 'data-line': line.id, 'data-picture': line.picture ?? '' }, el('span', { class: 'line-no', 'aria-hidden': 'true', text: String(n) }), code);
    const control = this.control(line, n, ctx);
    if (control) li.append(control);
    const hl = (on: boolean) => {
      for (const f of Object.values(this.figs)) f.classList.toggle('hl', on && line.picture !== null && f.dataset.picture === line.picture);
    };
    li.addEventListener('mouseenter', () => hl(true));
    li.addEventListener('mouseleave', () => hl(false));
    li.addEventListener('focusin', () => hl(true));
    li.addEventListener('focusout', () => hl(false));
    return li;
  }

  private control(line: CodeLine, n: number, ctx: LessonContext): HTMLElement | null {
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
      case 'precision': return select(PRECISIONS, l.precision, (v) => up({ precision: v as LessonState['precision'] }));
      case 'qkNorm': return check(l.qkNorm, 'qk-norm', (v) => up({ qkNorm: v }));
      case 'position': return select(POSITIONS, l.position, (v) => up({ position: v as LessonState['position'] }));
      case 'maskMode': return select(['before', 'after'], l.maskMode, (v) => up({ maskMode: v as LessonState['maskMode'] }));
      case 'maxShift': return check(l.maxShift, 'max shift', (v) => up({ maxShift: v }));
      case 'normalizer': return select(NORMALIZERS, l.normalizer, (v) => up({ normalizer: v as LessonState['normalizer'] }));
      case 'scale': {
        const m = ctx.state.model.scale;
        return select(['sqrt', 'none', '10'], typeof m === 'number' ? (m === 10 ? '10' : 'sqrt') : m, (v) => ctx.update({ model: { scale: v === '10' ? 10 : (v as 'sqrt' | 'none') } }));
      }
      default: return null;
    }
  }

  /**
   * The pictures' edge for the view's width: 220 px where there is room, less in a phone's or a
   * notebook cell's width (233 px), where they sit beside their row labels in a one-column layout.
   */
  private fitWidth(width: number): void {
    this.width = width;
    const size = Math.max(48, Math.min(220, width - rowLabelWidth(this.tokens) - 20));
    if (size === this.size) return;
    this.size = size;
    for (const m of Object.values(this.maps)) m.setMaxSize(size);
  }

  private draw(c: Comparison, ctx: LessonContext): void {
    this.tokens = c.tokens;
    this.fitWidth(this.width); // the row labels' width follows the tokens
    const T = c.t, labels = c.tokens;
    const forbidden = new Uint8Array(T * T);
    for (let i = 0; i < T * T; i++) forbidden[i] = c.allowed[i] ? 0 : 1;
    const w = (a: Arr) => ({ rows: T, cols: T, values: toF32(a), forbidden, lo: 0, hi: 1, rowLabels: labels, colLabels: labels });
    this.maps.std.update(w(c.standard.weights));
    this.maps.chg.update({ ...w(c.changed.weights), hi: Math.max(1, maxFinite(c.changed.weights)) });
    const d = Math.max(1e-6, c.maxAbsDiff);
    this.maps.diff.update({ rows: T, cols: T, values: c.diff, forbidden, lo: -d, hi: d, rowLabels: labels, colLabels: labels });
    if (c.changed.scores) {
      const sm = Math.max(1e-6, maxFinite(c.changed.scores, true));
      this.maps.scores.update({ rows: T, cols: T, values: toF32(c.changed.scores), forbidden, lo: -sm, hi: sm, rowLabels: labels, colLabels: labels });
    }
    const dims = Array.from({ length: c.dv }, (_, i) => String(i));
    const om = Math.max(1e-6, maxFinite(c.standard.output, true), maxFinite(c.changed.output, true));
    this.maps.outStd.update({ rows: T, cols: c.dv, values: toF32(c.standard.output), lo: -om, hi: om, rowLabels: labels, colLabels: dims });
    this.maps.outChg.update({ rows: T, cols: c.dv, values: toF32(c.changed.output), lo: -om, hi: om, rowLabels: labels, colLabels: dims });
    clear(this.badgeBox);
    this.badgeBox.append(badgeRow('Standard', c.badges.standard), badgeRow('Changed', c.badges.changed));
    this.badgeBox.dataset.maxAbsDiff = String(c.maxAbsDiff);
    void ctx;
  }

  private renderCards(ctx: LessonContext, card: CardResult | null): void {
    const open = ctx.state.lesson.exp;
    clear(this.cardList);
    for (const id of EXPERIMENT_IDS) {
      const a = el('a', { href: ctx.hashOf(cardPatch(id)), class: id === open ? 'card-chip open' : 'card-chip', 'data-card': id, text: CARD_TITLES[id] });
      if (id === open) a.setAttribute('aria-current', 'true');
      this.cardList.append(el('li', {}, a));
    }
    clear(this.cardBox);
    this.cardBox.hidden = open === 'none';
    if (open === 'none') return;
    this.cardBox.append(el('h4', { text: CARD_TITLES[open] }));
    if (open === 'shift') this.cardBox.append(this.logitSlider(ctx));
    if (open === 'flash') this.cardBox.append(this.sramSelect(ctx));
    if (!card) {
      this.cardBox.append(el('p', { class: 'muted', text: 'Running…' }));
      return;
    }
    this.cardBox.dataset.card = card.id;
    this.cardBox.dataset.figures = JSON.stringify(card.figures);
    if (card.line) this.cardBox.append(el('p', { class: 'card-line' }, el('span', { text: 'Line: ' }), el('code', { text: card.line })));
    for (const t of card.text) this.cardBox.append(el('p', { text: t }));
    if (card.table) this.cardBox.append(cardTable(card.table, card.id));
  }

  /** The FlashAttention card's on-chip memory M (link key lsram); the card recomputes with it. */
  private sramSelect(ctx: LessonContext): HTMLElement {
    const s = el('select', { 'aria-label': 'on-chip memory M', 'data-testid': 'flash-sram' });
    for (const kib of SRAM_KIB) s.append(el('option', { value: String(kib), text: `${kib} KiB${SRAM_NOTE[kib] ? ` (${SRAM_NOTE[kib]})` : ''}` }));
    s.value = String(ctx.state.lesson.sram);
    s.addEventListener('change', () => ctx.update({ lesson: { sram: Number(s.value) } }));
    return el('div', { class: 'logit-row' }, el('label', {}, el('span', { text: 'On-chip memory M (fast SRAM per block) ' }), s));
  }

  private logitSlider(ctx: LessonContext): HTMLElement {
    const l = ctx.state.lesson;
    const r = el('input', { type: 'range', min: '1', max: '800', step: '0.5', value: String(l.logit), 'aria-label': 'largest logit' });
    r.addEventListener('change', () => ctx.update({ lesson: { logit: Number(r.value) } }));
    const p = el('select', { 'aria-label': 'precision' });
    for (const v of PRECISIONS) p.append(el('option', { value: v, text: v }));
    p.value = l.precision;
    p.addEventListener('change', () => ctx.update({ lesson: { precision: p.value as LessonState['precision'] } }));
    return el('div', { class: 'logit-row' }, el('label', {}, el('span', { text: `largest logit ${fmt(l.logit)} ` }), r), p);
  }
}

const SRAM_NOTE: Record<number, string> = { 48: 'a GPU block’s default', 64: 'default', 96: 'V100’s most per SM', 164: 'A100’s most per SM', 228: 'H100’s most per SM' };

function cardTable(t: NonNullable<CardResult['table']>, cardId: string): HTMLElement {
  // The caption sits above the scrolling box (a phone scrolls the table sideways, not its caption).
  const id = `card-table-${cardId}`;
  const table = el('table', { class: 'card-table', 'data-testid': 'card-table', 'aria-labelledby': id },
    el('thead', {}, el('tr', {}, ...t.head.map((h) => el('th', { scope: 'col', text: h })))));
  const body = el('tbody');
  for (const r of t.rows) {
    const tr = el('tr', { 'data-row': JSON.stringify(r.data) });
    r.cells.forEach((c, i) => tr.append(el(i === 0 ? 'th' : 'td', i === 0 ? { scope: 'row', text: c } : { text: c })));
    body.append(tr);
  }
  table.append(body);
  return el('div', {}, el('p', { class: 'card-table-caption', id, text: t.caption }), el('div', { class: 'table-scroll' }, table));
}

function maxFinite(a: Arr, abs = false): number {
  let m = 0;
  for (const x of a) if (Number.isFinite(x)) m = Math.max(m, abs ? Math.abs(x) : x);
  return m;
}

function badgeRow(who: string, b: Badges): HTMLElement {
  const badge = (ok: boolean, text: string, key: string, value: number | string) => el('span', { class: ok ? 'badge ok' : 'badge warn', 'data-badge': key, 'data-value': String(value), text });
  return el('p', { class: 'badge-row' }, el('strong', { text: `${who}: ` }),
    badge(b.maxRowSumError < 1e-5, `rows sum to 1: max |Σ−1| ${fmt(b.maxRowSumError)}`, 'rowsum', b.maxRowSumError),
    badge(b.rangeViolation <= 1e-6, `inside the values' range: max violation ${fmt(Math.max(0, b.rangeViolation))}`, 'range', b.rangeViolation),
    badge(b.nanRows === 0, `NaN rows ${b.nanRows}`, 'nan', b.nanRows),
    badge(true, `cost ${b.cost}`, 'cost', b.cost));
}

/** Which line a variant change touched (for the highlight). */
function changedLine(a: LessonState, b: LessonState): LineId | null {
  if (a.precision !== b.precision) return 'dtype';
  if (a.qkNorm !== b.qkNorm) return 'qknorm';
  if (a.position !== b.position) return b.position === 'alibi' || a.position === 'alibi' ? 'alibi' : 'rope';
  if (a.maskMode !== b.maskMode) return 'mask';
  if (a.maxShift !== b.maxShift) return 'shift';
  if (a.normalizer !== b.normalizer || a.sigmoidBias !== b.sigmoidBias) return 'norm';
  return null;
}

/** A card's link: the Lesson view with the card open (and a variant card's variant set). */
export function cardPatch(id: ExperimentId): { page: { view: 'lesson' }; lesson: Partial<LessonState> } {
  return { page: { view: 'lesson' }, lesson: { exp: id, ...(CARD_VARIANT[id] ?? {}) } as Partial<LessonState> };
}

export const lessonView: ViewFactory<LessonContext, 'lesson', false> = {
  id: 'lesson',
  label: 'Lesson',
  needsResult: false,
  create: () => new LessonView(),
};
