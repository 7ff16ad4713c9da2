// Mask effect view: for the selected head, scores without the mask, the mask, and the weights
// with the mask, each row's sum shown so "still sums to one" is visible.
import { Heatmap } from '../ui/heatmap';
import { el, clear, fmt, setText, tokenRef } from '../ui/dom';
import { legend } from '../ui/legend';
import { drawToFit } from '../ui/fit';
import type { View, ViewFactory } from '../ui/view';
import type { AttentionContext } from './context';
import { headSlice, describeWeight } from './util';

class MaskView implements View<AttentionContext> {
  readonly id = 'mask';
  readonly root: HTMLElement;
  private ctx: AttentionContext | null = null;
  private readout = el('p', { class: 'readout', 'aria-live': 'polite' });
  private scores: Heatmap;
  private mask: Heatmap;
  private weights: Heatmap;
  private sums = el('div', { class: 'row-sums', 'aria-label': 'Row sums of the weights' });
  private title = el('h3', { class: 'panel-title' });
  /** This view's own head picker (the Heads view's thumbnails are not on screen here). */
  private headPick = el('select', { 'data-testid': 'mask-head', 'aria-label': 'Head shown' });
  private scoreLegend = el('div', { class: 'legend-row' });

  constructor() {
    const mk = (label: string, describe: (i: number, j: number, v: number, f: boolean) => string) =>
      new Heatmap({
        label,
        maxSize: 300,
        minCell: 0.5,
        maxCell: 28,
        showLabels: true,
        interactive: true,
        describe,
        onCell: (t) => (this.readout.textContent = t),
      });
    const toks = () => this.ctx?.result.tokens ?? [];
    const keys = () => this.ctx?.result.keyTokens ?? [];
    this.scores = mk(
      'Scores before the mask',
      (i, j, v) =>
        `score of query ${tokenRef(toks(), i)} → key ${tokenRef(keys(), j)}: ${fmt(v)} (scaled, before the mask)`,
    );
    this.mask = mk(
      'The mask',
      (i, j, _v, f) => `query ${tokenRef(toks(), i)} → key ${tokenRef(keys(), j)}: ${f ? 'forbidden' : 'allowed'}`,
    );
    this.weights = mk('Weights with the mask', (i, j, v, f) => describeWeight(toks(), i, j, v, f, keys()));
    const panel = (title: string, sub: string, hm: Heatmap, extra?: HTMLElement) =>
      el(
        'figure',
        { class: 'mask-panel' },
        el('figcaption', {}, el('strong', { text: title }), el('span', { class: 'muted', text: sub })),
        el('div', { class: 'mask-fig' }, hm.root, extra ?? null),
      );
    this.readout.textContent = 'Point at or focus a cell to read it.';
    this.headPick.addEventListener('change', () => this.ctx?.selectHead(Number(this.headPick.value)));
    this.root = el(
      'div',
      { class: 'view-mask' },
      el(
        'div',
        { class: 'mask-head' },
        this.title,
        el('label', { class: 'mask-pick' }, el('span', { text: 'Head ' }), this.headPick),
      ),
      el(
        'div',
        { class: 'mask-row' },
        panel('1 · Scores', 'QKᵀ · scale, no mask', this.scores),
        el('div', { class: 'op', 'aria-hidden': 'true', text: '+' }),
        panel('2 · Mask', 'yellow = allowed, grey (hatched) = forbidden', this.mask),
        el('div', { class: 'op', 'aria-hidden': 'true', text: '→' }),
        panel('3 · Weights', 'softmax per row, with the mask', this.weights, this.sums),
      ),
      this.readout,
      el('div', { class: 'legend-pair' }, this.scoreLegend, legend({ title: 'weight' })),
    );
  }

  heatmaps() {
    return [
      { name: 'scores-unmasked', heatmap: this.scores },
      { name: 'mask', heatmap: this.mask },
      { name: 'weights-masked', heatmap: this.weights },
    ];
  }

  render(ctx: AttentionContext): void {
    // Fit mode (a slide): the three maps shrink until the whole row shows without scrolling.
    if (ctx.height !== undefined && this.root.isConnected) drawToFit((f) => this.draw(ctx, f));
    else this.draw(ctx, 1);
  }

  /** Lays the view out with the maps at `scale` times the size the width allows. */
  private draw(ctx: AttentionContext, scale: number): void {
    this.ctx = ctx;
    const r = ctx.result;
    const T = r.t;
    const Tk = r.tk;
    const h = Math.min(ctx.state.page.head, r.heads - 1);
    this.title.textContent = `Head ${h + 1}: what the mask does (scale ${fmt(r.scale, 4)})`;
    if (this.headPick.options.length !== r.heads) {
      clear(this.headPick);
      for (let k = 0; k < r.heads; k++)
        this.headPick.append(el('option', { value: k, text: `${k + 1} of ${r.heads}` }));
    }
    this.headPick.value = String(h);
    this.headPick.disabled = r.heads < 2;
    // Wide: the three panels share one row; panels 2 and 3 label their rows by position only
    // (the tokens are on panel 1's rows), so the maps get the room. The widths: panel 1's token
    // labels, two position columns, the row sums, the two operators and the gaps.
    const wide = ctx.width >= 700;
    this.root.classList.toggle('mask-wide', wide);
    const chars = Math.max(...r.tokens.map((t) => Array.from(t).length), 1);
    const tokW = Math.min(150, 26 + 7 * chars),
      posW = 14 + 8 * String(T - 1).length;
    const full = wide
      ? Math.max(120, Math.floor((ctx.width - tokW - 2 * posW - 60 - 2 * 30 - 4 * 10) / 3))
      : ctx.width - 110;
    const size = Math.max(24, Math.floor(full * scale));
    for (const hm of [this.scores, this.mask, this.weights]) hm.setMaxSize(size);
    const scores = r.scores ? headSlice(r.scores, h, T * Tk) : new Float32Array(T * Tk).fill(NaN);
    // Indexed loops over the T² cells, not iterators or Float32Array.from with a callback: at
    // T = 256 those took most of this view's redraw (CPU profile).
    let lo = Infinity;
    let hi = -Infinity;
    for (let k = 0; k < scores.length; k++) {
      const v = scores[k];
      if (v - v === 0) {
        // finite
        if (v < lo) lo = v;
        if (v > hi) hi = v;
      }
    }
    if (!Number.isFinite(lo)) [lo, hi] = [0, 1];
    const labels = { rowLabels: r.tokens, colLabels: r.keyTokens };
    this.scores.update({ rows: T, cols: Tk, values: scores, forbidden: null, lo, hi, ...labels });
    // Allowed = 1 (yellow), forbidden = 0, which the heatmap paints grey at every size (and
    // hatches when the cells are large enough).
    const allowed = new Float32Array(T * Tk);
    for (let k = 0; k < allowed.length; k++) allowed[k] = ctx.forbidden[k] ? 0 : 1;
    this.mask.update({ rows: T, cols: Tk, values: allowed, forbidden: ctx.forbidden, lo: 0, hi: 1, ...labels });
    const w = headSlice(r.weights, h, T * Tk);
    this.weights.update({ rows: T, cols: Tk, values: w, forbidden: ctx.forbidden, lo: 0, hi: 1, ...labels });
    clear(this.scoreLegend);
    this.scoreLegend.append(legend({ lo, hi, title: 'score', masked: false, nan: false }));
    // Row sums, aligned with the weight rows: the core's (Σ_j w_ij as it returned the weights).
    // Only the Heads view draws results without them (the student's W, the trained model).
    // The cell height from the heatmap's own layout (reading it back from the DOM forced a
    // layout mid-redraw); the row spans are kept and only their text and class change.
    const cell = this.weights.rowHeight || size / T;
    const sums = r.rowSums ? headSlice(r.rowSums, h, T) : new Float32Array(T).fill(NaN);
    this.sums.style.setProperty('--cell', `${cell}px`);
    const every = Math.max(1, Math.ceil(14 / cell));
    if (!this.sums.firstChild) this.sums.append(el('span', { class: 'sum-head', text: 'Σ row' }));
    while (this.sums.childElementCount > T + 1) this.sums.lastElementChild!.remove();
    while (this.sums.childElementCount < T + 1) this.sums.append(el('span'));
    const spans = this.sums.children;
    sums.forEach((s, i) => {
      const span = spans[i + 1] as HTMLElement;
      span.className = 'sum' + (Number.isNaN(s) ? ' is-nan' : Math.abs(s - 1) < 1e-3 ? ' is-one' : ' is-off');
      setText(span, i % every === 0 ? (Number.isNaN(s) ? 'NaN' : fmt(s, 3)) : '');
      const height = `${cell}px`;
      if (span.style.height !== height) span.style.height = height;
    });
  }
}

export const maskView: ViewFactory<AttentionContext, 'mask', true> = {
  id: 'mask',
  label: 'Mask effect',
  needsResult: true,
  create: () => new MaskView(),
};
