// Output view: per-head outputs A·V, the merged heads, and the output after W_o, as heatmaps.
import { Heatmap } from '../ui/heatmap';
import { el, clear, fmt, tokenRef } from '../ui/dom';
import { legend } from '../ui/legend';
import { drawToFit } from '../ui/fit';
import type { View, ViewFactory } from '../ui/view';
import type { AttentionContext } from './context';
import { headSlice } from './util';

class OutputView implements View<AttentionContext> {
  readonly id = 'output';
  readonly root: HTMLElement;
  private ctx: AttentionContext | null = null;
  private heads = el('div', { class: 'out-heads' });
  private headMaps: Heatmap[] = [];
  private merged: Heatmap;
  private output: Heatmap;
  private readout = el('p', { class: 'readout', 'aria-live': 'polite' });
  private legendBox = el('div', { class: 'legend-row' });
  private outLegendBox = el('div', { class: 'legend-row' });

  constructor() {
    // Below 2 px a cell is still drawn (the canvas is scaled): at T = 256 the hand-built model's
    // merged heads are 512 columns, which at 2 px ran past the card.
    this.merged = this.mk('Merged heads (T × H·d_v)', 'merged', 0.25);
    this.output = this.mk('Output after W_o (T × d_model)', 'output', 0.25);
    this.readout.textContent = 'Point at or focus a cell to read it.';
    this.root = el(
      'div',
      { class: 'view-output' },
      el('p', {
        class: 'muted fit-hide',
        text: 'Each row is a weighted average of value vectors. Columns are feature dimensions. The heads and their concatenation share one symmetric colour range; the output after W_o has its own (its values can be far larger), each with its legend.',
      }),
      this.legendBox,
      el(
        'div',
        { class: 'out-body' },
        el(
          'div',
          { class: 'out-per-head' },
          el('h3', { class: 'panel-title', text: 'Per head: A · V (T × d_v)' }),
          this.heads,
        ),
        el(
          'div',
          { class: 'out-final' },
          el('figure', {}, el('figcaption', { text: 'Merged heads (concatenated)' }), this.merged.root),
          el('figure', {}, el('figcaption', { text: 'Output = merged · W_o' }), this.outLegendBox, this.output.root),
        ),
      ),
      this.readout,
    );
  }

  private mk(label: string, what: string, minCell = 2): Heatmap {
    return new Heatmap({
      label,
      maxSize: 260,
      minCell,
      maxCell: 22,
      showLabels: true,
      interactive: true,
      axisTitles: ['dims →', 'tokens ↓'],
      describe: (i, j, v) => `${what}: token ${tokenRef(this.ctx?.result.tokens ?? [], i)}, dim ${j}: ${fmt(v)}`,
      onCell: (t) => (this.readout.textContent = t),
    });
  }

  heatmaps() {
    return [
      ...this.headMaps.map((hm, i) => ({ name: `head-${i + 1}-output`, heatmap: hm })),
      { name: 'merged', heatmap: this.merged },
      { name: 'output', heatmap: this.output },
    ];
  }

  render(ctx: AttentionContext): void {
    this.ctx = ctx;
    const r = ctx.result;
    const T = r.t;
    // One symmetric range for the heads and their concatenation (the same numbers), one for the
    // output: a shared range let W_o's larger values flatten every head to one colour.
    const absMax = (arrays: Float32Array[]) => {
      let m = 0;
      for (const a of arrays) {
        for (let k = 0; k < a.length; k++) {
          const v = Math.abs(a[k]);
          if (v > m && v !== Infinity) m = v; // NaN fails v > m
        }
      }
      return m === 0 ? 1 : m;
    };
    const m = absMax([r.headOutputs, r.merged]);
    const mo = absMax([r.output]);
    clear(this.legendBox);
    this.legendBox.append(legend({ lo: -m, hi: m, title: 'heads', masked: false }));
    clear(this.outLegendBox);
    this.outLegendBox.append(legend({ lo: -mo, hi: mo, title: 'output', masked: false }));
    while (this.headMaps.length > r.heads) this.headMaps.pop()!.root.parentElement?.remove();
    while (this.headMaps.length < r.heads) {
      const i = this.headMaps.length;
      const hm = this.mk(`Head ${i + 1} output`, `head ${i + 1} output`);
      this.headMaps.push(hm);
      this.heads.append(el('figure', {}, el('figcaption', { text: `Head ${i + 1}` }), hm.root));
    }
    const rowLabels = r.tokens;
    const dims = (n: number) => Array.from({ length: n }, (_, i) => String(i));
    const draw = (shrink: number) => {
      const size = Math.min(240, ctx.width - 120) * shrink;
      this.headMaps.forEach((hm, h) => {
        hm.setMaxSize(Math.min(size, 14 * Math.max(T, r.dv) * shrink));
        hm.update({
          rows: T,
          cols: r.dv,
          values: headSlice(r.headOutputs, h, T * r.dv),
          lo: -m,
          hi: m,
          rowLabels,
          colLabels: dims(r.dv),
        });
      });
      this.merged.setMaxSize(Math.min(ctx.width - 120, 420) * shrink);
      this.merged.update({
        rows: T,
        cols: r.heads * r.dv,
        values: r.merged,
        lo: -m,
        hi: m,
        rowLabels,
        colLabels: dims(r.heads * r.dv),
      });
      this.output.setMaxSize(Math.min(ctx.width - 120, 420) * shrink);
      this.output.update({
        rows: T,
        cols: r.dModel,
        values: r.output,
        lo: -mo,
        hi: mo,
        rowLabels,
        colLabels: dims(r.dModel),
      });
    };
    // Fit mode (a slide): the maps shrink until the whole picture shows without scrolling.
    if (ctx.height !== undefined && this.root.isConnected) drawToFit(draw);
    else draw(1);
  }
}

export const outputView: ViewFactory<AttentionContext, 'output', true> = {
  id: 'output',
  label: 'Output',
  needsResult: true,
  create: () => new OutputView(),
};
