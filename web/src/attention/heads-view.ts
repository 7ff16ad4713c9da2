// Heads view: a grid of every head's weights plus the selected head, zoomed, with token labels,
// hover/keyboard readout, a legend and a screen-reader table fallback.
import { Heatmap } from '../ui/heatmap';
import { rowLabelWidth } from '../ui/axis';
import { el, clear, fmt, tokenRef } from '../ui/dom';
import { legend } from '../ui/legend';
import type { View, ViewFactory } from '../ui/view';
import type { AttentionContext } from './context';
import { headSlice, describeWeight, kvHeadOf } from './util';
import { BreakdownPanel } from './breakdown-panel';
import { SelectionPanel } from './selection-panel';
import { MapPanel } from './map-panel';

class HeadsView implements View<AttentionContext> {
  readonly id = 'heads';
  readonly root: HTMLElement;
  private grid = el('div', { class: 'head-grid', role: 'list', 'aria-label': 'All heads (select one to zoom)' });
  private thumbs: { box: HTMLElement; hm: Heatmap; cap: HTMLElement }[] = [];
  private zoom: Heatmap;
  private zoomTitle = el('h3', { class: 'zoom-title' });
  /** Why the hand-built heads fade on a longer sentence (d_k grows with T). */
  private dkNote = el('p', { class: 'dk-note small', 'data-testid': 'dk-note', hidden: true });
  private readout = el('p', { class: 'readout', 'aria-live': 'polite', 'data-testid': 'readout' });
  private tableBox = el('details', { class: 'sr-table' });
  private tableBody = el('div');
  private ctx: AttentionContext | null = null;
  /** "Why this weight?" for the selected cell of the zoomed head. */
  private breakdown = new BreakdownPanel();
  /** Several queries and keys of the zoomed head, summed up. */
  readonly selection = new SelectionPanel();
  /** The zoomed head's queries and keys as points. */
  readonly map = new MapPanel();
  private gridPanel: HTMLElement;

  constructor() {
    this.zoom = new Heatmap({
      label: 'Selected head attention weights',
      maxSize: 560,
      minCell: 0.5,
      maxCell: 44,
      showLabels: true,
      interactive: true,
      axisTitles: ['keys →', 'queries ↓'],
      describe: (i, j, v, f) =>
        this.ctx ? describeWeight(this.ctx.result.tokens, i, j, v, f, this.ctx.result.keyTokens) : '',
      onCell: (text) => {
        this.readout.textContent = text;
      },
      // The selected cell goes into the state (the link's `cell`); the panel follows the state.
      onSelect: (i, j) =>
        this.ctx?.update({
          // A recorded what-if belongs to the cell it was made on.
          page: { cell: [Math.min(this.ctx.state.page.head, this.ctx.result.heads - 1), i, j], wif: '' },
        }),
      onMark: (axis, i, extend) => this.selection.mark(axis, i, extend),
    });
    this.tableBox.append(
      el('summary', { text: 'Weights as a table (for screen readers and exact values)' }),
      this.tableBody,
    );
    this.tableBox.addEventListener('toggle', () => this.ctx && this.renderTable(this.ctx));
    this.readout.textContent = 'Point at a cell, or focus the heatmap and use the arrow keys, to read a weight.';
    this.root = el(
      'div',
      { class: 'view-heads' },
      el(
        'section',
        { class: 'zoom-panel' },
        this.zoomTitle,
        this.dkNote,
        this.zoom.root,
        this.readout,
        el('div', { class: 'legend-row' }, legend()),
      ),
      (this.gridPanel = el(
        'section',
        { class: 'grid-panel' },
        el('h3', { class: 'panel-title', text: 'All heads' }),
        this.grid,
        this.tableBox,
      )),
      this.breakdown.root,
      this.map.root,
      this.selection.root,
    );
  }

  heatmaps() {
    // One entry per head (the zoomed head is one of them, not a second "head-N-weights"); the
    // thumbnails carry the token labels in their data, so every PNG is labelled.
    return this.thumbs.map((t, i) => ({ name: `head-${i + 1}-weights`, heatmap: t.hm }));
  }

  render(ctx: AttentionContext): void {
    this.breakdown.render(ctx);
    this.selection.render(ctx);
    this.map.render(ctx);
    this.ctx = ctx;
    const { result: r, state: s } = ctx;
    const T = r.t;
    const Tk = r.tk;
    const H = r.heads;
    const sel = Math.min(s.page.head, H - 1);
    const narrow = ctx.width < 760; // matches the @container (max-width: 759px) rule in styles.css
    // Fit mode in a narrow box: the thumbnails would go below the zoomed head, out of the box.
    this.gridPanel.hidden = narrow && ctx.height !== undefined;
    // Thumbnails
    while (this.thumbs.length > H) this.thumbs.pop()!.box.remove();
    while (this.thumbs.length < H) {
      const idx = this.thumbs.length;
      const hm = new Heatmap({
        label: `Head ${idx + 1}`,
        maxSize: 120,
        minCell: 0.25,
        maxCell: 16,
        onActivate: () => this.ctx?.selectHead(idx),
      });
      const cap = el('span', { class: 'thumb-cap' });
      const box = el('div', { class: 'thumb', role: 'listitem' }, hm.root, cap);
      this.grid.append(box);
      this.thumbs.push({ box, hm, cap });
    }
    const thumbSize = narrow ? Math.max(64, Math.min(110, (ctx.width - 40) / Math.min(H, 4) - 16)) : H > 4 ? 104 : 132;
    this.thumbs.forEach((t, h) => {
      t.hm.setMaxSize(thumbSize);
      t.hm.update({
        rows: T,
        cols: Tk,
        values: headSlice(r.weights, h, T * Tk),
        forbidden: ctx.forbidden,
        lo: 0,
        hi: 1,
        rowLabels: r.tokens,
        colLabels: r.keyTokens,
      });
      t.box.classList.toggle('selected', h === sel);
      t.hm.setLabel(`Head ${h + 1}${h === sel ? ' (selected)' : ''}. Press Enter to zoom.`);
      const kv = r.kvHeads !== r.heads ? ` · K/V ${kvHeadOf(h, r.heads, r.kvHeads) + 1}` : '';
      // Layers and heads are counted from 1 in every text, as in the lessons (exports keep 0-based indices).
      t.cap.textContent = r.source ? `${r.source} head ${h + 1}${kv}` : `Head ${h + 1}${kv}`;
    });
    // Zoomed head
    const labelW = rowLabelWidth(r.tokens);
    const avail = narrow ? ctx.width - labelW - 16 : Math.min(620, ctx.width - 360 - labelW);
    // No 160 px floor: in a 233 px notebook cell it pushed the last columns out of sight. The
    // heatmap scales down (its cells may go below a pixel; the labels thin out).
    let size = Math.max(48, avail);
    // Fit mode: the zoomed head also fits the frame's height, less what surrounds the heatmap in
    // its panel (title, column labels, readout, legend: measured on the last layout, estimated
    // before the first).
    if (ctx.height !== undefined) size = Math.max(48, Math.min(size, ctx.height - this.zoomChrome()));
    const src = r.source ? `${r.source}, ` : '';
    const num = r.source ? `head ${sel + 1} of ${H}` : `Head ${sel + 1} of ${H}`;
    this.zoomTitle.textContent = `${src}${num} — attention weights`;
    // Lesson 1's hand-built model gives every word and every position a dimension of its own:
    // d_k = max(12, words, T). A longer sentence makes d_k larger, 1/√d_k smaller, and the rows softer.
    const handBuilt = !r.source && s.model.source === 'induction' && r.dk > 12;
    this.dkNote.hidden = !handBuilt;
    if (handBuilt)
      this.dkNote.textContent = `Why the heads look faded: this hand-built model gives every word and every position a dimension of its own, so d_k = max(12, words, ${r.cross ? 'T_q, T_k' : 'T'}) = ${r.dk} here (12 for the lesson’s sentence). The scores are divided by √d_k = ${fmt(Math.sqrt(r.dk), 2)} instead of √12 = 3.46, so each row spreads its weight more. Raise Sharpness to sharpen them again.`;
    this.zoom.setLabel(`${src}${num} attention weights, ${T} queries by ${Tk} keys`);
    this.zoom.setMaxSize(size);
    this.zoom.update({
      rows: T,
      cols: Tk,
      values: headSlice(r.weights, sel, T * Tk),
      forbidden: ctx.forbidden,
      lo: 0,
      hi: 1,
      rowLabels: r.tokens,
      colLabels: r.keyTokens,
    });
    if (ctx.height !== undefined && this.root.isConnected) {
      // The labels' height depends on the cell size: lay out once more with the measured chrome.
      const again = Math.max(48, Math.min(Math.max(48, avail), ctx.height - this.zoomChrome()));
      if (Math.abs(again - size) >= 2) {
        this.zoom.setMaxSize(again);
        this.zoom.update({
          rows: T,
          cols: Tk,
          values: headSlice(r.weights, sel, T * Tk),
          forbidden: ctx.forbidden,
          lo: 0,
          hi: 1,
          rowLabels: r.tokens,
          colLabels: r.keyTokens,
        });
      }
    }
    this.zoom.setMarks(s.page.qsel ?? [], s.page.ksel ?? []);
    if (this.tableBox.open) this.renderTable(ctx);
  }

  /** The zoom panel's height less the heatmap's own (px); an estimate before the first layout. */
  private zoomChrome(): number {
    const panel = this.root.querySelector<HTMLElement>('.zoom-panel');
    const frame = this.zoom.root.querySelector<HTMLElement>('.hm-frame');
    if (!panel || !frame || !this.root.isConnected || frame.offsetHeight === 0) return 240;
    return panel.getBoundingClientRect().height - frame.getBoundingClientRect().height + 4;
  }

  private renderTable(ctx: AttentionContext): void {
    clear(this.tableBody);
    if (!this.tableBox.open) return;
    const r = ctx.result;
    const T = r.t;
    const Tk = r.tk;
    const h = Math.min(ctx.state.page.head, r.heads - 1);
    if (Math.max(T, Tk) > 64) {
      this.tableBody.append(
        el('p', {
          text: `The table is shown for up to 64 tokens (this sequence has ${Math.max(T, Tk)}). Use the JSON or CSV export for the full matrix.`,
        }),
      );
      return;
    }
    const w = headSlice(r.weights, h, T * Tk);
    const table = el('table', { class: 'weights-table' });
    const name = r.source ? `${r.source}, head ${h + 1}` : `Head ${h + 1}`;
    table.append(el('caption', { text: `${name} attention weights: rows are queries, columns are keys` }));
    const head = el('tr', {}, el('th', { scope: 'col', text: 'query \\ key' }));
    for (let j = 0; j < Tk; j++) head.append(el('th', { scope: 'col', text: tokenRef(r.keyTokens, j) }));
    table.append(el('thead', {}, head));
    const body = el('tbody');
    for (let i = 0; i < T; i++) {
      const tr = el('tr', {}, el('th', { scope: 'row', text: tokenRef(r.tokens, i) }));
      for (let j = 0; j < Tk; j++)
        tr.append(
          el('td', { text: ctx.forbidden[i * Tk + j] ? `${fmt(w[i * Tk + j])} (masked)` : fmt(w[i * Tk + j]) }),
        );
      body.append(tr);
    }
    table.append(body);
    this.tableBody.append(table);
  }
}

export const headsView: ViewFactory<AttentionContext, 'heads', true> = {
  id: 'heads',
  label: 'Heads',
  needsResult: true,
  create: () => new HeadsView(),
};
