// The Lesson view: the computation as code lines, each with its control; the standard computation
// beside the changed one with their difference and badges; the experiment cards. The runs are in
// run.ts and experiments.ts (no DOM); this file only draws them. The core runs on the page's
// thread (the lesson's states are small). The lines' controls are in line-controls.ts, the cards'
// panel in card-panel.ts, the badge rows in picture-parts.ts.
import { Heatmap } from '../ui/heatmap';
import { rowLabelWidth } from '../ui/axis';
import { el, clear, fmt, tokenRef } from '../ui/dom';
import { legend } from '../ui/legend';
import type { View, ViewFactory } from '../ui/view';
import { loadCore, type AttnCore } from '../wasm/load-core';
import { preferenceFromSearch } from '../wasm/core-build';
import { pageFits } from '../ui/fit';
import { STANDARD, isStandard } from '../shared/variant';
import type { LessonState } from './state';
import { codeLines, type CodeLine, type LineId, type Picture } from './code-lines';
import { compare, studentFloat64, type Arr, type Comparison, type RunModel, type StudentInputs } from './run';
import { CARD_TITLES, runCard, scaleWords, type CardResult } from './experiments';
import { STEPS } from './path-steps';
import type { LessonContext } from './lesson-context';
import { changedLine, lineControl } from './line-controls';
import { renderCards } from './card-panel';
import { badgeRow, maxFinite } from './picture-parts';
import { linePrints, printNote, type LinePrints } from './line-prints';
import { printDisclosure } from './print-panel';
import './lesson.css';

export type { LessonContext, LessonPatch, LessonSlice } from './lesson-context';
export { cardPatch } from './card-panel';

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
  private status = el('p', {
    class: 'muted',
    'aria-live': 'polite',
    'data-testid': 'lesson-status',
    text: 'Loading the core…',
  });
  /** What the lines' printed arrays are (precision, head, run). */
  private printNote = el('p', { class: 'muted print-note', 'data-testid': 'print-note' });
  /** The lines whose printed arrays the reader opened (kept across redraws). */
  private openPrints = new Set<LineId>();
  private maps: Record<MapKey, Heatmap>;
  private figs: Record<string, HTMLElement> = {};
  /** Each picture's own legend (its own scale: weights 0…1, differences, scores and outputs ±m). */
  private legends = {} as Record<MapKey, HTMLElement>;
  private picsTitle = el('h3', { class: 'panel-title', text: 'Standard vs changed' });
  private headPick = el('select', { 'aria-label': 'head drawn', 'data-testid': 'lesson-head' });
  private headNote = el('span', { class: 'muted' });
  private headRow = el('p', { class: 'lesson-head-row' });
  /** What the pictures run on when "Your arrays" holds some (hidden otherwise). */
  private sourceNote = el('p', { class: 'lesson-source', 'data-testid': 'lesson-source', hidden: true });
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
        this.printNote,
      ),
      el(
        'section',
        { class: 'lesson-pics' },
        this.picsTitle,
        this.sourceNote,
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
      renderCards(this.cardList, this.cardBox, ctx, null);
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
    const key = JSON.stringify([m, ctx.state.page.head, l, ctx.height ?? null, ctx.student?.key ?? null]);
    if (key === this.lastKey) return;
    this.lastKey = key;
    delete this.root.dataset.drawn;
    const student = this.studentInputs(ctx);
    let prints: LinePrints | null = null;
    try {
      const c = compare(this.core, m, l, ctx.state.page.head, student);
      prints = linePrints(this.core, c, l, m.fill);
      this.printNote.textContent = printNote(prints, c, student ? studentFloat64(student) : null);
      this.draw(c, ctx);
      const standard = isStandard(l) && m.scale === 'sqrt' && m.fill === 'neg_inf';
      this.status.textContent = standard
        ? 'Standard computation: change a line to compare.'
        : `Changed lines highlighted; max |Δw| = ${c.maxAbsDiff > 0 && c.maxAbsDiff < 5e-4 ? c.maxAbsDiff.toExponential(1).replace('e-', 'e−') : fmt(c.maxAbsDiff)}.`;
    } catch (e) {
      const err = e as Error & { field?: string };
      this.status.textContent = `The core refused these settings${err.field ? ` (field ${err.field})` : ''}: ${err.message}`;
      this.printNote.textContent = '';
    }
    this.renderLines(ctx, prints);
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
    renderCards(this.cardList, this.cardBox, ctx, card);
    this.arrange(ctx);
    // What a test waits for: this state's pictures and card are drawn.
    this.root.dataset.drawn = key;
  }

  /** The student's Q, K, V when "Your arrays" holds some the lines can run on; the note above the
   *  pictures says which (or why the page's example is drawn instead). */
  private studentInputs(ctx: LessonContext): StudentInputs | null {
    const s = ctx.student;
    // A second sentence for the keys (cross-attention, the attention views' kvtokens) is not read here.
    const cross = (ctx.state.model.kvTokens?.length ?? 0) > 0;
    this.sourceNote.hidden = s === null && !cross;
    this.cardsTitle.textContent = 'Experiments';
    if (!s && cross) {
      this.sourceNote.textContent =
        'The Lesson view runs on self-attention: the first sentence attends to itself here; the second sentence (the keys and values of the attention views’ cross-attention) is not read.';
      this.sourceNote.dataset.source = 'example';
    }
    if (!s || !this.core) return null;
    let inputs: StudentInputs | null = null;
    try {
      inputs = s.inputs(this.core);
      this.sourceNote.textContent = inputs
        ? `On ${inputs.source} from “Your arrays” (Heads view): every line runs on them${'x' in inputs ? ' (the core projects Q, K, V in line 1’s precision)' : ''}. Remove them there to return to the page’s example.`
        : `${s.what.replace(/^y/, 'Y')} (from “Your arrays”) has no Q, K and V to run the lines on; the pictures run on the page’s example. Give Q, K, V or X, W_q, W_k, W_v instead.`;
    } catch (e) {
      this.sourceNote.textContent = `Your arrays could not be run (${(e as Error).message}); the pictures run on the page’s example. Fix them in “Your arrays” (Heads view).`;
    }
    this.sourceNote.dataset.source = inputs ? 'student' : 'example';
    // The cards run their own experiments on the page's example; say so beside the student's pictures.
    if (inputs) this.cardsTitle.textContent = 'Experiments (on the page’s example, not your arrays)';
    return inputs;
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

  private renderLines(ctx: LessonContext, prints: LinePrints | null): void {
    const m = ctx.state.model,
      l = ctx.state.lesson;
    const cur = { variant: l, scale: m.scale, fill: m.fill };
    const lines = codeLines(cur, STANDARD_LINES);
    clear(this.lines);
    lines.forEach((line, n) => this.lines.append(this.lineItem(line, n + 1, ctx, prints?.byLine[line.id] ?? null)));
  }

  private lineItem(
    line: CodeLine,
    n: number,
    ctx: LessonContext,
    prints: readonly { expr: string; text: string }[] | null,
  ): HTMLElement {
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
    const control = lineControl(line, n, ctx);
    if (control) li.append(control);
    if (prints)
      li.append(
        printDisclosure(n, prints, this.openPrints.has(line.id), (open) =>
          open ? this.openPrints.add(line.id) : this.openPrints.delete(line.id),
        ),
      );
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
    this.picsTitle.textContent = `Standard vs changed: head ${c.head + 1} of ${c.heads}${c.student ? ', on your arrays' : ''}`;
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
}

export const lessonView: ViewFactory<LessonContext, 'lesson', false> = {
  id: 'lesson',
  label: 'Lesson',
  needsResult: false,
  create: () => new LessonView(),
};
