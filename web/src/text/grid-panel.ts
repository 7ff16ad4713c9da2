// The Text model tab's heads: every layer × head as a thumbnail of its attention map on the text
// (a button: click or Enter zooms it), labelled with its role and its scores on the text (the
// core's tr.textScores) and on the probe (model.json's checkpoint `heads`), a "knock out" toggle
// per head, and the selected head as a large map with the tokens on both axes.
import { clear, el, fmt } from '../ui/dom';
import { Heatmap } from '../ui/heatmap';
import { legend } from '../ui/legend';
import { MASKED_RGB, VIRIDIS_LUT, lutIndex } from '../ui/colormap';
import type { TextSession } from './session';
import { headLabel } from './state';
import { showChar } from './tokenizer';

export interface GridActions {
  select(layer: number, head: number): void;
  toggle(layer: number, head: number): void;
  readout(text: string): void;
}

/** One head's weights (t, t), row i = query i, drawn one pixel per cell; keys after the query
 *  (the causal mask) in the masked grey. */
function paintMap(canvas: HTMLCanvasElement, w: Float32Array, off: number, t: number): void {
  if (canvas.width !== t) canvas.width = t;
  if (canvas.height !== t) canvas.height = t;
  const g = canvas.getContext('2d');
  if (!g) return;
  const img = g.createImageData(t, t);
  for (let i = 0; i < t; i++)
    for (let j = 0; j < t; j++) {
      const p = (i * t + j) * 4;
      const c = lutIndex(w[off + i * t + j], 0, 1) * 3;
      const masked = j > i;
      img.data[p] = masked ? MASKED_RGB[0] : VIRIDIS_LUT[c];
      img.data[p + 1] = masked ? MASKED_RGB[1] : VIRIDIS_LUT[c + 1];
      img.data[p + 2] = masked ? MASKED_RGB[2] : VIRIDIS_LUT[c + 2];
      img.data[p + 3] = 255;
    }
  g.putImageData(img, 0, 0);
}

export class GridPanel {
  readonly root: HTMLElement;
  private readonly grid = el('div', { class: 'tx-grid', 'data-testid': 'text-grid' });
  private readonly caption = el('p', { class: 'tx-caption muted', 'data-testid': 'text-grid-caption' });
  private readonly zoomTitle = el('h4', { 'data-testid': 'text-zoom-title' });
  private readonly zoomText = el('p', { class: 'tx-zoom-text muted', 'data-testid': 'text-zoom-text' });
  private readonly zoomReadout = el('p', {
    class: 'tx-readout',
    'aria-live': 'polite',
    'data-testid': 'text-zoom-readout',
  });
  readonly zoom: Heatmap;
  private shape = '';

  constructor(
    private readonly s: TextSession,
    private readonly act: GridActions,
  ) {
    this.zoom = new Heatmap({
      label: 'The selected head’s attention weights',
      maxSize: 480,
      showLabels: true,
      interactive: true,
      axisTitles: ['keys (tokens read) →', 'queries ↓'],
      describe: (i, j, v, forbidden) => {
        const r = this.s.result;
        const c = (k: number) => `‘${showChar(r?.tokens.chars[k] ?? '?')}’ (${k})`;
        return forbidden
          ? `query ${c(i)} cannot read key ${c(j)}: it comes later (causal)`
          : `query ${c(i)} → key ${c(j)}: weight ${fmt(v, 3)}`;
      },
      onCell: (text) => (this.zoomReadout.textContent = text),
    });
    this.root = el(
      'section',
      { class: 'tx-panel tx-heads', 'aria-label': 'Heads on the text' },
      el('h3', { text: 'Heads on your text' }),
      this.caption,
      this.grid,
      el(
        'div',
        { class: 'tx-zoom', 'data-testid': 'text-zoom' },
        this.zoomTitle,
        this.zoomText,
        legend({ lo: 0, hi: 1, title: 'attention weight', masked: true, nan: false }),
        this.zoom.root,
        this.zoomReadout,
      ),
    );
  }

  /** The thumbnails' buttons are made again when the model's shape changes. */
  private build(L: number, H: number): void {
    const key = `${L}x${H}`;
    if (key === this.shape) return;
    this.shape = key;
    clear(this.grid);
    for (let l = 0; l < L; l++) {
      const row = el('div', { class: 'tx-layer', role: 'group', 'aria-label': `Layer ${l + 1}` });
      row.append(el('span', { class: 'tx-layer-name', text: `Layer ${l + 1}` }));
      for (let h = 0; h < H; h++) {
        const thumb = el(
          'button',
          { type: 'button', class: 'tx-thumb', 'data-testid': `text-head-${l + 1}-${h + 1}` },
          el('span', { class: 'tx-thumb-name', text: headLabel(l, h) }),
          el('canvas', { class: 'tx-thumb-map', 'aria-hidden': 'true' }),
          el('span', { class: 'tx-role' }),
          el('span', { class: 'tx-scores' }),
          el('span', { class: 'tx-probe' }),
        );
        thumb.addEventListener('click', () => this.act.select(l, h));
        const knock = el('button', {
          type: 'button',
          class: 'btn small tx-knock',
          'data-testid': `text-knock-${l + 1}-${h + 1}`,
          'aria-pressed': 'false',
          text: 'knock out',
        });
        knock.addEventListener('click', () => this.act.toggle(l, h));
        row.append(el('div', { class: 'tx-cell' }, thumb, knock));
      }
      this.grid.append(row);
    }
  }

  draw(width: number): void {
    const info = this.s.info;
    const r = this.s.result;
    if (!info) return;
    const { layers: L, heads: H } = info.config;
    this.build(L, H);
    const sel = this.s.selectedHead();
    const probe = r?.checkpoint.heads ?? null;
    const t = r ? r.tokens.ids.length : 0;
    const sc = r?.run.scores ?? null;
    const n = (v: number | null | undefined) => (v === null || v === undefined ? '—' : fmt(v, 2));
    for (let l = 0; l < L; l++)
      for (let h = 0; h < H; h++) {
        const k = l * H + h;
        const cell = this.grid.children[l].children[h + 1] as HTMLElement;
        const thumb = cell.children[0] as HTMLButtonElement;
        const knock = cell.children[1] as HTMLButtonElement;
        const on = this.s.isAblated(l, h);
        const selected = sel.layer === l && sel.head === h;
        thumb.setAttribute('aria-pressed', selected ? 'true' : 'false');
        thumb.classList.toggle('tx-ablated', on);
        const role = sc ? sc.roles[k] : null;
        const roleEl = thumb.querySelector<HTMLElement>('.tx-role')!;
        roleEl.textContent = role ?? `(needs 2 ${this.s.words.many})`;
        roleEl.dataset.role = role ?? '';
        // Each "name value" kept on one line; the spaces between them only for the text's readers.
        const pairs = (label: string, items: [string, number | null | undefined][]) =>
          items.length === 0
            ? [`${label} —`]
            : [label, ...items.flatMap(([k, v]) => [' ', el('span', { class: 'tx-pair', text: `${k} ${n(v)}` })])];
        const scoreBox = thumb.querySelector('.tx-scores')!;
        clear(scoreBox);
        scoreBox.append(
          ...pairs(
            'text:',
            sc
              ? [
                  ['prev', sc.previous[k]],
                  ['ind', sc.induction[k]],
                  ['dup', sc.duplicate[k]],
                  ['first', sc.first[k]],
                ]
              : [],
          ),
        );
        const probeBox = thumb.querySelector('.tx-probe')!;
        clear(probeBox);
        probeBox.append(
          ...pairs(
            'probe:',
            probe
              ? [
                  ['ind', probe.induction[l][h]],
                  ['prev', probe.previous[l][h]],
                ]
              : [],
          ),
        );
        const scores = sc
          ? `on the text: previous ${n(sc.previous[k])}, induction ${n(sc.induction[k])}, duplicate ${n(sc.duplicate[k])}, first ${n(sc.first[k])}`
          : 'no scores on the text';
        const pr = probe
          ? `on the probe: induction ${n(probe.induction[l][h])}, previous ${n(probe.previous[l][h])}`
          : 'no probe scores';
        thumb.setAttribute(
          'aria-label',
          `${headLabel(l, h)}${on ? ' (knocked out)' : ''}: ${role ?? 'no role yet'}; ${scores}; ${pr}. ${selected ? 'Shown below.' : 'Show it below.'}`,
        );
        knock.setAttribute('aria-pressed', on ? 'true' : 'false');
        knock.textContent = on ? 'put back' : 'knock out';
        knock.setAttribute('aria-label', `${on ? 'Put back' : 'Knock out'} ${headLabel(l, h)}`);
        if (r) paintMap(thumb.querySelector('canvas')!, r.run.weights, k * t * t, t);
      }
    const ck = r?.checkpoint;
    this.caption.textContent = ck
      ? `Checkpoint step ${ck.step.toLocaleString('en')}. Each map: rows are the ${this.s.words.many} reading (queries), columns the ${this.s.words.many} they read (keys); a cell is the weight. A knocked-out head outputs zero, so the layers above it see a changed input.`
      : '';
    this.drawZoom(sel.layer, sel.head, width);
  }

  private drawZoom(l: number, h: number, width: number): void {
    const r = this.s.result;
    const info = this.s.info!;
    const H = info.config.heads;
    const k = l * H + h;
    const sc = r?.run.scores ?? null;
    const on = this.s.isAblated(l, h);
    this.zoomTitle.textContent = `${headLabel(l, h)} at step ${r ? r.checkpoint.step.toLocaleString('en') : '…'}${on ? ' (knocked out: its output is zeroed; the map shows the weights it would use)' : ''}`;
    this.zoomText.textContent = sc
      ? `Role on this text: ${sc.roles[k]}. Scores: previous ${fmt(sc.previous[k], 3)}, induction ${fmt(sc.induction[k], 3)}, duplicate ${fmt(sc.duplicate[k], 3)}, first ${fmt(sc.first[k], 3)}.`
      : `Type at least two ${this.s.words.many} for the scores.`;
    if (!r) return;
    const t = r.tokens.ids.length;
    const values = r.run.weights.subarray(k * t * t, (k + 1) * t * t);
    const forbidden = new Uint8Array(t * t);
    for (let i = 0; i < t; i++) for (let j = i + 1; j < t; j++) forbidden[i * t + j] = 1;
    const labels = r.tokens.chars.map(showChar);
    this.zoom.setLabel(`${headLabel(l, h)}: attention weights of ${t} ${this.s.words.many}`);
    this.zoom.setMaxSize(Math.max(120, Math.min(560, width - 60)));
    this.zoom.update({ rows: t, cols: t, values, forbidden, lo: 0, hi: 1, rowLabels: labels, colLabels: labels });
  }
}
