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
import { pageFits } from '../ui/fit';
import { NORMALIZERS, POSITIONS, PRECISIONS, STANDARD, isStandard } from '../shared/variant';
import { SRAM_KIB, type LessonState } from './state';
import { codeLines, type CodeLine, type Control, type LineId, type Picture } from './code-lines';
import { compare, type Arr, type Badges, type Comparison, type RunModel } from './run';
import { CARD_TITLES, CARD_VARIANT, runCard, scaleWords, type CardResult } from './experiments';
import { EXPERIMENT_IDS, type ExperimentId } from './experiment-ids';
import { STEPS } from './path-steps';
import './lesson.css';

export interface LessonSlice {
  model: RunModel;
  lesson: LessonState;
  page: { head: number };
}
export type LessonPatch = {
  lesson?: Partial<LessonState>;
  model?: { scale?: RunModel['scale'] };
  page?: { head?: number };
};
export interface LessonContext extends LabContext<LessonSlice, LessonPatch> {
  /** Open the guided path at its first step (the page turns a step into its whole state). */
  startPath(): void;
  hashOf(patch: { page?: { view: 'lesson' }; lesson?: Partial<LessonState> }): string;
}

const toF32 = (a: Arr): Float32Array => (a instanceof Float32Array ? a : Float32Array.from(a));

type MapKey = 'std' | 'chg' | 'diff' | 'scores' | 'outStd' | 'outChg';

/** The lesson view's standard line context: the lessons' scale and fill, whatever the controls say. */
const STANDARD_LINES = { variant: STANDARD, scale: 'sqrt', fill: 'neg_inf' } as const;

/** The guided path's step shown in the Lesson view (null: no step, or a step on another view). */
function lessonStep(step: number): (typeof STEPS)[number] | null {
  const s = step > 0 ? STEPS[step - 1] : undefined;
  return s && s.link.view === 'lesson' ? s : null;
}

class LessonView implements View<LessonContext> {
  readonly id = 'lesson';
  readonly root: HTMLElement;
  private ctx: LessonContext | null = null;
  private core: AttnCore | null = null;
  private loading = false;
  private lines = el('ol', { class: 'code-lines', 'aria-label': 'The computation, one line per step' });
  private status = el('p', { class: 'muted', 'aria-live': 'polite', text: 'Loading the core…' });
  private maps: Record<MapKey, Heatmap>;
  private figs: Record<string, HTMLElement> = {};
  /** Each picture's own legend (its own scale: weights 0…1, differences, scores and outputs ±m). */
  private legends = {} as Record<MapKey, HTMLElement>;
  private picsTitle = el('h3', { class: 'panel-title', text: 'Standard vs changed' });
  private headPick = el('select', { 'aria-label': 'head drawn', 'data-testid': 'lesson-head' });
  private headNote = el('span', { class: 'muted' });
  private headRow = el('p', { class: 'lesson-head-row' });
  private lead = el('p', {
    class: 'muted lesson-lead',
    text: 'The attention computation line by line. Each line carries its control; change one and the “Standard vs changed” pictures recompute with it, beside the standard computation (same head, same tokens).',
  });
  private top: HTMLElement;
  private startBtn: HTMLElement;
  private cardsTitle = el('h3', { class: 'panel-title', text: 'Experiments' });
  /** The step whose card was last brought into view. */
  private shownStep = 0;
  private badgeBox = el('div', { class: 'lesson-badges' });
  private readout = el('p', { class: 'readout', 'aria-live': 'polite', text: 'Point at or focus a cell to read it.' });
  private cardList = el('ul', { class: 'lesson-cards' });
  private cardBox = el('section', { class: 'lesson-card', 'aria-live': 'polite' });
  private lastKey = '';
  private prevVariant: LessonState | null = null;
  private justChanged: LineId | null = null;
  private prevScale: RunModel['scale'] | null = null;
  private prevStep = -1;
  private tokens: string[] = [];
  private width = 0;
  private size = 220;

  constructor() {
    const mk = (label: string, cols: 'keys' | 'dims') =>
      new Heatmap({
        label,
        maxSize: 220,
        minCell: 2,
        maxCell: 20,
        showLabels: true,
        interactive: true,
        axisTitles: [cols === 'keys' ? 'keys →' : 'dims →', 'queries ↓'],
        describe: (i, j, v) =>
          `${label}: ${cols === 'keys' ? `query ${tokenRef(this.tokens, i)} → key ${tokenRef(this.tokens, j)}` : `token ${tokenRef(this.tokens, i)}, dim ${j}`}: ${fmt(v)}`,
        onCell: (t) => (this.readout.textContent = t),
      });
    this.maps = {
      std: mk('Standard weights', 'keys'),
      chg: mk('Changed weights', 'keys'),
      diff: mk('Changed − standard', 'keys'),
      scores: mk('Changed scores', 'keys'),
      outStd: mk('Standard output', 'dims'),
      outChg: mk('Changed output', 'dims'),
    };
    const fig = (key: MapKey, caption: string, picture: Picture) => {
      this.legends[key] = el('div', { class: 'lesson-legend', 'data-legend': key });
      const f = el(
        'figure',
        { class: 'lesson-fig', 'data-picture': picture ?? '', 'data-map': key },
        el('figcaption', { text: caption }),
        this.maps[key].root,
        this.legends[key],
      );
      this.figs[key] = f;
      return f;
    };
    this.startBtn = el('button', { type: 'button', class: 'start-here', text: 'Start here: the guided path' });
    this.startBtn.addEventListener('click', () => this.ctx?.startPath());
    this.headPick.addEventListener('change', () => this.ctx?.update({ page: { head: Number(this.headPick.value) } }));
    this.headRow.append(el('label', {}, el('span', { text: 'Head ' }), this.headPick), this.headNote);
    this.top = el(
      'div',
      { class: 'lesson-top' },
      el(
        'section',
        { class: 'lesson-code' },
        el('h3', { class: 'panel-title', text: 'The computation' }),
        this.lines,
        this.status,
      ),
      el(
        'section',
        { class: 'lesson-pics' },
        this.picsTitle,
        this.headRow,
        this.badgeBox,
        el(
          'div',
          { class: 'lesson-figs' },
          fig('std', 'Standard: softmax weights, scale 1/√d_k', 'weights'),
          fig('chg', 'Changed: weights', 'weights'),
          fig('diff', 'Difference (changed − standard)', 'weights'),
          fig('scores', 'Changed: scores the normalizer receives (unmasked)', 'scores'),
          fig('outStd', 'Standard output W @ V', 'output'),
          fig('outChg', 'Changed output', 'output'),
        ),
        this.readout,
      ),
    );
    this.root = el(
      'div',
      { class: 'view-lesson' },
      this.lead,
      this.startBtn,
      this.top,
      this.cardsTitle,
      this.cardList,
      this.cardBox,
    );
  }

  heatmaps() {
    return [
      { name: 'lesson-standard', heatmap: this.maps.std },
      { name: 'lesson-changed', heatmap: this.maps.chg },
      { name: 'lesson-difference', heatmap: this.maps.diff },
    ];
  }

  render(ctx: LessonContext): void {
    this.ctx = ctx;
    if (!this.core) {
      if (!this.loading) {
        this.loading = true;
        loadCore(preferenceFromSearch(location.search)).then(
          (c) => {
            this.core = c;
            if (this.ctx) this.render(this.ctx);
          },
          (e: Error) => (this.status.textContent = `The core did not load: ${e.message}`),
        );
      }
      this.renderCards(ctx, null);
      return;
    }
    const l = ctx.state.lesson,
      m = ctx.state.model;
    // The line to highlight: a guided path step's own line when the step changes (none if it
    // names none), else the line the student just changed.
    const step = lessonStep(l.step);
    if (l.step !== this.prevStep) this.justChanged = step?.line ?? null;
    else if (this.prevVariant)
      this.justChanged = changedLine(this.prevVariant, l) ?? (this.prevScale !== m.scale ? 'scores' : this.justChanged);
    this.prevStep = l.step;
    this.prevVariant = { ...l };
    this.prevScale = m.scale;
    this.fitWidth(ctx.width);
    const key = JSON.stringify([m, ctx.state.page.head, l, ctx.height ?? null]);
    if (key === this.lastKey) return;
    this.lastKey = key;
    delete this.root.dataset.drawn;
    this.renderLines(ctx);
    try {
      const c = compare(this.core, m, l, ctx.state.page.head);
      this.draw(c, ctx);
      const standard = isStandard(l) && m.scale === 'sqrt' && m.fill === 'neg_inf';
      this.status.textContent = standard
        ? 'Standard computation: change a line to compare.'
        : `Changed lines highlighted; max |Δw| = ${fmt(c.maxAbsDiff)}.`;
    } catch (e) {
      const err = e as Error & { field?: string };
      this.status.textContent = `The core refused these settings${err.field ? ` (field ${err.field})` : ''}: ${err.message}`;
    }
    let card: CardResult | null = null;
    if (l.exp !== 'none') {
      try {
        card = runCard(this.core, l.exp, m, l.logit, l.precision, l.sram, ctx.state.page.head);
      } catch (e) {
        card = {
          id: l.exp,
          title: CARD_TITLES[l.exp],
          line: '',
          text: [`The core refused this run: ${(e as Error).message}`],
          figures: {},
        };
      }
    }
    this.renderCards(ctx, card);
    this.arrange(ctx);
    // What a test waits for: this state's pictures and card are drawn.
    this.root.dataset.drawn = key;
  }

  /**
   * While a guided path step opens a card, the card comes first (under the step's bar) and is
   * brought into view once per step; in fit mode (a slide) the code and pictures give it their
   * room and the card's longer paragraphs drop from the end until the page fits the frame.
   */
  private arrange(ctx: LessonContext): void {
    const l = ctx.state.lesson;
    const stepCard = lessonStep(l.step) !== null && l.exp !== 'none';
    this.root.classList.toggle('path-card', stepCard);
    if (stepCard) this.root.insertBefore(this.cardBox, this.lead);
    else this.root.append(this.cardBox);
    this.startBtn.hidden = l.step > 0;
    const fit = ctx.height !== undefined && stepCard;
    this.top.hidden = fit;
    this.lead.hidden = fit;
    this.cardsTitle.hidden = fit;
    this.cardList.hidden = fit;
    for (const p of this.cardBox.querySelectorAll<HTMLElement>('[data-fit-drop]')) p.hidden = false;
    if (fit) {
      const drop = [...this.cardBox.querySelectorAll<HTMLElement>('[data-fit-drop]')].sort(
        (a, b) => Number(b.dataset.fitDrop) - Number(a.dataset.fitDrop),
      );
      for (const p of drop) {
        if (pageFits()) break;
        p.hidden = true;
      }
    } else if (stepCard && this.shownStep !== l.step) {
      // Once per step: the step's bar (just above this view) and its card in sight.
      const bar = document.querySelector<HTMLElement>('[data-testid="path-bar"]');
      const target = bar && !bar.hidden ? bar : this.cardBox;
      const top = target.getBoundingClientRect().top;
      if (top < 0 || top > window.innerHeight * 0.3) target.scrollIntoView({ block: 'start' });
    }
    this.shownStep = stepCard ? l.step : 0;
  }

  private renderLines(ctx: LessonContext): void {
    const m = ctx.state.model,
      l = ctx.state.lesson;
    const cur = { variant: l, scale: m.scale, fill: m.fill };
    const lines = codeLines(cur, STANDARD_LINES);
    clear(this.lines);
    lines.forEach((line, n) => this.lines.append(this.lineItem(line, n + 1, ctx)));
  }

  private lineItem(line: CodeLine, n: number, ctx: LessonContext): HTMLElement {
    const cls = [
      'code-line',
      line.changed ? 'changed' : '',
      line.inactive ? 'inactive' : '',
      this.justChanged === line.id ? 'just-changed' : '',
    ]
      .filter(Boolean)
      .join(' ');
    const code = el('code', { id: `lesson-line-${line.id}`, text: line.code });
    const li = el(
      'li',
      { class: cls, 'data-line': line.id, 'data-picture': line.picture ?? '' },
      el('span', { class: 'line-no', 'aria-hidden': 'true', text: String(n) }),
      code,
    );
    const control = this.control(line, n, ctx);
    if (control) li.append(control);
    const hl = (on: boolean) => {
      for (const f of Object.values(this.figs))
        f.classList.toggle('hl', on && line.picture !== null && f.dataset.picture === line.picture);
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
    const T = c.t,
      labels = c.tokens;
    const forbidden = new Uint8Array(T * T);
    for (let i = 0; i < T * T; i++) forbidden[i] = c.allowed[i] ? 0 : 1;
    // Each picture with its own scale and legend (the Mask and Output views do the same).
    const show = (
      key: MapKey,
      values: Arr,
      cols: number,
      lo: number,
      hi: number,
      title: string,
      masked: boolean,
      colLabels: readonly string[],
    ) => {
      const v = toF32(values);
      this.maps[key].update({
        rows: T,
        cols,
        values: v,
        forbidden: masked ? forbidden : null,
        lo,
        hi,
        rowLabels: labels,
        colLabels,
      });
      clear(this.legends[key]);
      this.legends[key].dataset.lo = String(lo);
      this.legends[key].dataset.hi = String(hi);
      this.legends[key].append(legend({ lo, hi, title, masked, nan: v.some((x) => Number.isNaN(x)) }));
    };
    show('std', c.standard.weights, T, 0, 1, 'weight', true, labels);
    show('chg', c.changed.weights, T, 0, Math.max(1, maxFinite(c.changed.weights)), 'weight', true, labels);
    const d = Math.max(1e-6, c.maxAbsDiff);
    show('diff', c.diff, T, -d, d, 'Δ weight', true, labels);
    this.figs.scores.hidden = !c.changed.scores;
    if (c.changed.scores) {
      const sm = Math.max(1e-6, maxFinite(c.changed.scores, true));
      show('scores', c.changed.scores, T, -sm, sm, 'score', true, labels);
    }
    const dims = Array.from({ length: c.dv }, (_, i) => String(i));
    const om = Math.max(1e-6, maxFinite(c.standard.output, true), maxFinite(c.changed.output, true));
    show('outStd', c.standard.output, c.dv, -om, om, 'output', false, dims);
    show('outChg', c.changed.output, c.dv, -om, om, 'output', false, dims);
    // Which head is drawn, and the picker (the page's `head` row: the Heads view's zoomed head).
    const m = ctx.state.model;
    this.picsTitle.textContent = `Standard vs changed: head ${c.head + 1} of ${c.heads}`;
    if (this.headPick.options.length !== c.heads) {
      clear(this.headPick);
      for (let h = 0; h < c.heads; h++) this.headPick.append(el('option', { value: String(h), text: String(h + 1) }));
    }
    this.headPick.value = String(c.head);
    this.headNote.textContent = ` of ${c.heads}. Standard: softmax, scale 1/√d_k, −∞ before the softmax, float32. Changed: the lines as set, ${scaleWords(m.scale)}.`;
    clear(this.badgeBox);
    this.badgeBox.append(badgeRow('Standard', c.badges.standard), badgeRow('Changed', c.badges.changed));
    this.badgeBox.dataset.maxAbsDiff = String(c.maxAbsDiff);
    this.badgeBox.dataset.head = String(c.head);
  }

  private renderCards(ctx: LessonContext, card: CardResult | null): void {
    const open = ctx.state.lesson.exp;
    clear(this.cardList);
    for (const id of EXPERIMENT_IDS) {
      const a = el('a', {
        href: ctx.hashOf(cardPatch(id)),
        class: id === open ? 'card-chip open' : 'card-chip',
        'data-card': id,
        text: CARD_TITLES[id],
      });
      if (id === open) a.setAttribute('aria-current', 'true');
      this.cardList.append(el('li', {}, a));
    }
    clear(this.cardBox);
    this.cardBox.hidden = open === 'none';
    if (open === 'none') return;
    this.cardBox.append(el('h4', { text: CARD_TITLES[open] }));
    // The plain sentence first, then the card's own control.
    if (card?.lead) this.cardBox.append(el('p', { class: 'card-lead', text: card.lead }));
    if (open === 'shift') this.cardBox.append(this.logitSlider(ctx));
    if (open === 'flash') this.cardBox.append(this.sramSelect(ctx));
    if (!card) {
      this.cardBox.append(el('p', { class: 'muted', text: 'Running…' }));
      return;
    }
    this.cardBox.dataset.card = card.id;
    this.cardBox.dataset.figures = JSON.stringify(card.figures);
    // In fit mode (a slide) parts drop until the page fits, highest
    // data-fit-drop first: the table, the line, the later paragraphs from the end, what it
    // measured; the plain sentence and the first paragraph stay.
    if (card.line)
      this.cardBox.append(
        el(
          'p',
          { class: 'card-line', 'data-fit-drop': 95 },
          el('span', { text: 'Line: ' }),
          el('code', { text: card.line }),
        ),
      );
    if (card.measured)
      this.cardBox.append(
        el(
          'p',
          { class: 'card-measured', 'data-fit-drop': 40 },
          el('strong', { text: 'Measured on: ' }),
          el('span', { text: card.measured }),
        ),
      );
    card.text.forEach((t, i) =>
      this.cardBox.append(el('p', { class: 'card-text', 'data-fit-drop': i === 0 ? undefined : 50 + i, text: t })),
    );
    if (card.table) {
      const table = cardTable(card.table, card.id);
      table.dataset.fitDrop = '100';
      this.cardBox.append(table);
    }
  }

  /** The FlashAttention card's on-chip memory M (link key lsram); the card recomputes with it. */
  private sramSelect(ctx: LessonContext): HTMLElement {
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

  private logitSlider(ctx: LessonContext): HTMLElement {
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

function maxFinite(a: Arr, abs = false): number {
  let m = 0;
  for (const x of a) if (Number.isFinite(x)) m = Math.max(m, abs ? Math.abs(x) : x);
  return m;
}

function badgeRow(who: string, b: Badges): HTMLElement {
  const badge = (ok: boolean, text: string, key: string, value: number | string) =>
    el('span', { class: ok ? 'badge ok' : 'badge warn', 'data-badge': key, 'data-value': String(value), text });
  return el(
    'p',
    { class: 'badge-row' },
    el('strong', { text: `${who}: ` }),
    badge(b.maxRowSumError < 1e-5, `rows sum to 1: max |Σ−1| ${fmt(b.maxRowSumError)}`, 'rowsum', b.maxRowSumError),
    badge(
      b.rangeViolation <= 1e-6,
      `inside the values' range: max violation ${fmt(Math.max(0, b.rangeViolation))}`,
      'range',
      b.rangeViolation,
    ),
    badge(b.nanRows === 0, `NaN rows ${b.nanRows}`, 'nan', b.nanRows),
    badge(true, `cost ${b.cost}`, 'cost', b.cost),
  );
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
