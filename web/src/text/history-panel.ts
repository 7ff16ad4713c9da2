// The Text model tab's training history: a range input over the checkpoints (scrubbing loads the
// checkpoint and redraws the view) and four small charts of model.json's per-checkpoint figures
// against the training tokens seen (log axis; step 0 at the left edge): the held-out loss, the
// probe's in-context score, its best induction head and its best previous-token head, with the
// checkpoint shown marked.
import { clear, el, fmt } from '../ui/dom';
import { svgEl } from '../ui/svg';
import type { CheckpointInfo } from './model-files';
import type { TextSession } from './session';

export interface HistoryActions {
  /** A checkpoint chosen by its index in model.json's list. */
  pick(index: number): void;
}

interface Series {
  key: 'heldOutLoss' | 'inContext' | 'induction' | 'previous';
  title: string;
  /** A fixed range (the probe's head scores are mean weights, in [0, 1]). */
  range?: [number, number];
  what: string;
}

const SERIES: Series[] = [
  { key: 'heldOutLoss', title: 'held-out loss (nats/token)', what: 'mean cross-entropy on the held-out addresses' },
  {
    key: 'inContext',
    title: 'in-context score (nats)',
    what: 'the probe’s second copy’s loss minus its first’s (negative: the repeat is predicted from context)',
  },
  { key: 'induction', title: 'best induction head (probe)', range: [0, 1], what: 'best head of layers ≥ 2' },
  { key: 'previous', title: 'best previous-token head (probe)', range: [0, 1], what: 'best head of layer 1' },
];

const SUP: Record<string, string> = {
  '-': '⁻',
  '0': '⁰',
  '1': '¹',
  '2': '²',
  '3': '³',
  '4': '⁴',
  '5': '⁵',
  '6': '⁶',
  '7': '⁷',
  '8': '⁸',
  '9': '⁹',
};
const pow10 = (e: number) => '10' + String(e).replace(/[-0-9]/g, (c) => SUP[c]);

export class HistoryPanel {
  readonly root: HTMLElement;
  readonly range: HTMLInputElement;
  private readonly label = el('output', { class: 'tx-ck-label', 'data-testid': 'text-ckpt-label' });
  private readonly charts = el('div', { class: 'tx-charts', 'data-testid': 'text-charts' });
  private drawnKey = '';

  constructor(
    private readonly s: TextSession,
    act: HistoryActions,
  ) {
    this.range = el('input', {
      type: 'range',
      min: 0,
      max: 0,
      step: 1,
      value: 0,
      class: 'tx-range',
      id: 'text-ckpt',
      'data-testid': 'text-ckpt',
    });
    this.range.addEventListener('input', () => act.pick(Number(this.range.value)));
    this.root = el(
      'section',
      { class: 'tx-panel tx-history', 'aria-label': 'Training history' },
      el('h3', { text: 'How it changed over training' }),
      el('div', { class: 'tx-scrub' }, el('label', { for: 'text-ckpt', text: 'Checkpoint' }), this.range, this.label),
      this.charts,
      el('p', {
        class: 'muted tx-help',
        text: 'Across: the training tokens seen (log scale; step 0 at the left edge); the checkpoint shown is marked. Figures recorded by the trainer at each checkpoint (model.json): the held-out loss on the addresses from 2000 on, and the probe, rows of random training tokens repeated once ([r, r]). They are not recomputed by the page.',
      }),
    );
  }

  /** `asked`: the checkpoint the state names (the range and its label); `shown`: the one whose
   *  result is on screen (marked in the charts; they differ while a checkpoint loads). */
  draw(asked: number, shown: number): void {
    const info = this.s.info;
    if (!info) return;
    const cks = info.checkpoints;
    this.range.max = String(cks.length - 1);
    if (this.range.value !== String(asked)) this.range.value = String(asked);
    const ck = cks[asked];
    const text = `step ${ck.step.toLocaleString('en')} of ${cks[cks.length - 1].step.toLocaleString('en')}, ${ck.tokens.toLocaleString('en')} training tokens`;
    this.label.textContent = text;
    this.range.setAttribute('aria-valuetext', text);
    const key = `${shown}/${cks.length}`;
    if (key === this.drawnKey) return;
    this.drawnKey = key;
    clear(this.charts);
    const nats = this.s.words.nats;
    for (const se of SERIES)
      this.charts.append(
        chart(cks, se.key === 'heldOutLoss' ? { ...se, title: `held-out loss (${nats})` } : se, shown),
      );
  }
}

function chart(cks: readonly CheckpointInfo[], se: Series, current: number): SVGSVGElement {
  const W = 260,
    H = 124,
    L = 46,
    R = 10,
    T = 22,
    B = 22,
    gap = 14;
  const pts = cks.map((c) => ({ c, v: c[se.key] })).filter((p): p is { c: CheckpointInfo; v: number } => p.v !== null);
  const pos = cks.map((c) => c.tokens).filter((t) => t > 0);
  const p0 = pos.length ? Math.min(...pos) : 1;
  const p1 = pos.length ? Math.max(...pos) : 10;
  const l0 = Math.log10(p0),
    span = Math.max(1e-9, Math.log10(p1) - l0);
  const x = (t: number) => (t <= 0 ? L : L + gap + ((Math.log10(t) - l0) / span) * (W - L - R - gap));
  let [lo, hi] = se.range ?? [Math.min(...pts.map((p) => p.v)), Math.max(...pts.map((p) => p.v))];
  if (!se.range) {
    const pad = (hi - lo) * 0.08 || Math.abs(hi) * 0.1 || 0.1;
    lo -= pad;
    hi += pad;
  }
  const y = (v: number) => T + (1 - (v - lo) / (hi - lo || 1)) * (H - T - B);
  const cur = cks[current];
  const cv = cur[se.key];
  const svg = svgEl('svg', {
    viewBox: `0 0 ${W} ${H}`,
    class: 'tx-chart',
    role: 'img',
    'data-series': se.key,
    'aria-label': pts.length
      ? `${se.title}, ${se.what}: from ${fmt(pts[0].v, 3)} at step ${pts[0].c.step} to ${fmt(pts[pts.length - 1].v, 3)} at step ${pts[pts.length - 1].c.step}; at the checkpoint shown (step ${cur.step}) ${cv === null ? 'not recorded' : fmt(cv, 3)}.`
      : `${se.title}: not recorded in this model.`,
  });
  svg.append(svgEl('text', { x: 4, y: 14, class: 'tx-chart-title' }, se.title));
  svg.append(svgEl('rect', { x: L, y: T, width: W - L - R, height: H - T - B, class: 'frame' }));
  if (!pts.length) {
    svg.append(
      svgEl(
        'text',
        { x: (L + W - R) / 2, y: (T + H - B) / 2, class: 'empty', 'text-anchor': 'middle' },
        'not recorded',
      ),
    );
    return svg;
  }
  for (const v of [lo, (lo + hi) / 2, hi]) {
    svg.append(svgEl('line', { x1: L, x2: W - R, y1: y(v), y2: y(v), class: 'grid' }));
    svg.append(
      svgEl(
        'text',
        { x: L - 4, y: y(v) + 4, class: 'tick', 'text-anchor': 'end' },
        fmt(v, Math.abs(hi - lo) < 0.3 ? 3 : 2),
      ),
    );
  }
  for (let e = Math.ceil(l0); e <= Math.floor(Math.log10(p1)); e++)
    svg.append(svgEl('text', { x: x(10 ** e), y: H - 6, class: 'tick', 'text-anchor': 'middle' }, pow10(e)));
  if (cks.some((c) => c.tokens <= 0))
    svg.append(svgEl('text', { x: L, y: H - 6, class: 'tick', 'text-anchor': 'middle' }, '0'));
  svg.append(svgEl('line', { x1: x(cur.tokens), x2: x(cur.tokens), y1: T, y2: H - B, class: 'tx-now' }));
  svg.append(svgEl('polyline', { points: pts.map((p) => `${x(p.c.tokens)},${y(p.v)}`).join(' '), class: 'series' }));
  for (const p of pts) {
    const at = p.c === cur;
    const dot = svgEl('circle', {
      cx: x(p.c.tokens),
      cy: y(p.v),
      r: at ? 5 : 2.5,
      class: at ? 'dot tx-dot-now' : 'dot',
    });
    dot.append(svgEl('title', {}, `step ${p.c.step}, ${p.c.tokens.toLocaleString('en')} tokens: ${fmt(p.v, 4)}`));
    svg.append(dot);
  }
  return svg;
}
