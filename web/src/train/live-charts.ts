// The Train tab's live charts: the loss curve (training loss, held-out loss and accuracy, the
// comparison run dashed, the shelf and the crossings marked) with its caption, and the three
// head-score charts over steps with their legend. Redrawn from the session (while training, at most
// every 100 ms and only when on screen: train-view.ts).
import { el, clear, fmt } from '../ui/dom';
import { drawChart, type Series } from './chart';
import { crossing, shelfAndDrop, thin } from './history';
import { EVAL_EVERY, type TrainSession } from './session';
import { headName, num } from './numbers';

export const HEAD_COLORS = ['#2c5cc5', '#c2410c', '#1a7f37', '#8a3ffc', '#b3134f', '#0e7490', '#9a6700', '#475569'];

/** A colour swatch; the colour is set through the CSSOM (the page's CSP forbids style attributes). */
export function swatch(color: string): HTMLElement {
  const e = el('span', { class: 'tr-sw' });
  e.style.backgroundColor = color;
  return e;
}

export class LiveCharts {
  readonly lossCanvas = el('canvas', {
    class: 'tr-canvas',
    role: 'img',
    'aria-label': 'Loss curve',
    'data-testid': 'train-loss-chart',
  });
  readonly lossCaption = el('p', { class: 'tr-caption muted' });
  readonly scoreCanvases = {
    previousToken: el('canvas', {
      class: 'tr-canvas',
      role: 'img',
      'aria-label': 'Previous-token score per head over steps',
    }),
    induction: el('canvas', { class: 'tr-canvas', role: 'img', 'aria-label': 'Induction score per head over steps' }),
    duplicateToken: el('canvas', {
      class: 'tr-canvas',
      role: 'img',
      'aria-label': 'Duplicate-token score per head over steps',
    }),
  };
  readonly scoreLegend = el('div', { class: 'tr-legend' });
  /** Compare "without √d_k": why it can be the faster run here (set by the view) */
  readonly compareNote = el('p', { class: 'tr-note', 'data-testid': 'train-compare-note', hidden: true });
  readonly lossPanel: HTMLElement;
  readonly scoresPanel: HTMLElement;
  private xLog = el('input', { type: 'checkbox', 'data-testid': 'train-xlog' });

  constructor(onOption: () => void) {
    this.xLog.addEventListener('change', onOption);
    this.lossPanel = el(
      'section',
      { class: 'tr-panel tr-wide', 'aria-label': 'Loss' },
      el('h3', { text: 'Loss' }),
      el(
        'div',
        { class: 'tr-chart-opts' },
        el('label', {}, this.xLog, ' log step axis (the first steps of a long run get room)'),
      ),
      this.lossCanvas,
      this.lossCaption,
      this.compareNote,
    );
    this.scoresPanel = el(
      'section',
      { class: 'tr-panel', 'aria-label': 'Head scores over steps' },
      el('h3', { text: 'Head scores over steps' }),
      this.scoreLegend,
      el('h4', { text: 'previous token' }),
      this.scoreCanvases.previousToken,
      el('h4', { text: 'induction' }),
      this.scoreCanvases.induction,
      el('h4', { text: 'duplicate token' }),
      this.scoreCanvases.duplicateToken,
    );
  }

  /** The canvas behind a PNG name, or null. */
  canvasOf(name: string): HTMLCanvasElement | null {
    return name === 'loss-curve'
      ? this.lossCanvas
      : name === 'scores-previous-token'
        ? this.scoreCanvases.previousToken
        : name === 'scores-induction'
          ? this.scoreCanvases.induction
          : name === 'scores-duplicate-token'
            ? this.scoreCanvases.duplicateToken
            : null;
  }

  /** parts: which panels to draw (the view skips those off screen while training) */
  draw(s: TrainSession, width: number, until: number, parts = { loss: true, scores: true }): void {
    const h = s.history;
    const xMax = Math.max(50, until || 0, Math.ceil(h.steps * 1.1));
    if (parts.loss) this.drawLoss(s, width, xMax);
    if (parts.scores) this.drawScores(s, width, xMax);
  }

  private drawLoss(s: TrainSession, width: number, xMax: number): void {
    const h = s.history;
    const wide = Math.min(width - 4, 1100);
    const thinL = thin(h.loss, h.steps, Math.max(50, Math.floor(wide / 2)));
    // The loss axis covers every loss drawn. A saturated softmax starts near 10⁶ nats and a
    // typical run ends near 10⁻²: when a loss above ~20 nats is drawn beside ones 3× smaller, the
    // axis is logarithmic (said in the caption) instead of clipping the start or flattening the rest.
    const drawn = [...h.evalLoss, ...thinL.y, ...(s.cmp ? s.cmp.history.evalLoss : [])].filter(
      (v) => Number.isFinite(v) && v > 0,
    );
    const hi = Math.max(1, ...drawn);
    const lo = drawn.length > 0 ? Math.min(...drawn) : 1;
    const yLog = hi > 20 && hi / lo > 3;
    const yMin = yLog ? 10 ** Math.floor(Math.log10(lo)) : 0;
    const yMax = yLog ? 10 ** Math.ceil(Math.log10(hi)) : Math.ceil(hi * 2) / 2;
    const xLog = this.xLog.checked;
    const series: Series[] = [
      { x: thinL.x, y: thinL.y, color: '#9aa1ad', width: 1, label: 'training loss' },
      { x: h.evalStep, y: h.evalLoss, color: '#2c5cc5', width: 2, label: 'held-out loss (repeated half)' },
      { x: h.evalStep, y: h.evalAccuracy, color: '#c2410c', width: 2, axis: 'right', label: 'held-out accuracy' },
    ];
    const cmp = s.cmp;
    if (cmp) {
      series.push({
        x: cmp.history.evalStep,
        y: cmp.history.evalLoss,
        color: '#2c5cc5',
        width: 1.6,
        dash: [5, 4],
        label: `held-out loss, ${cmp.label}`,
      });
      series.push({
        x: cmp.history.evalStep,
        y: cmp.history.evalAccuracy,
        color: '#c2410c',
        width: 1.6,
        dash: [5, 4],
        axis: 'right',
        label: `accuracy, ${cmp.label}`,
      });
    }
    const markers = [];
    const c50 = crossing(h, 0.5);
    const c90 = crossing(h, 0.9);
    const sd = shelfAndDrop(h.evalStep, h.evalLoss);
    if (sd) markers.push({ x: sd.drop, label: `drop ${sd.drop}`, color: '#2c5cc5' });
    if (c50 !== null) markers.push({ x: c50, label: `acc 0.5 @ ${c50}`, color: '#c2410c' });
    if (c90 !== null) markers.push({ x: c90, label: `acc 0.9 @ ${c90}`, color: '#9a3412' });
    drawChart(this.lossCanvas, {
      width: wide,
      height: 220,
      xMax,
      yMin,
      yMax,
      yLog,
      xLog,
      yLabel: 'loss (nats)',
      rightLabel: 'accuracy',
      xLabel: xLog ? 'step (log)' : 'step',
      series,
      markers,
      bands: sd ? [{ x0: sd.shelfFrom, x1: sd.shelfTo, y: sd.shelfLoss, label: 'shelf', color: '#2c5cc5' }] : [],
    });
    this.lossCaption.textContent =
      `Grey: training loss per step (${h.steps} steps${h.steps > thinL.x.length ? `, drawn as ${thinL.x.length} bucket means` : ''}). Blue: held-out loss on the repeated half, every ${EVAL_EVERY} steps. Orange: held-out accuracy (right axis).` +
      (yLog ? ` The loss axis is logarithmic: the losses drawn span ${num(lo, 2)} to ${num(hi, 2)} nats.` : '') +
      (sd
        ? ` Shelf at ${num(sd.shelfLoss, 2)} nats (steps ${sd.shelfFrom}–${sd.shelfTo}), steepest drop at step ${sd.drop}.`
        : '') +
      (c90 !== null
        ? ` Accuracy ≥ 0.9 from step ${c90}${s.ms90 !== null ? ` (${fmt(s.ms90 / 1000, 1)} s of training)` : ''}.`
        : '') +
      (cmp
        ? ` Dashed: the same data seed, ${cmp.label} (step ${cmp.step}${crossing(cmp.history, 0.9) !== null ? `, accuracy ≥ 0.9 from step ${crossing(cmp.history, 0.9)}` : ', accuracy not yet 0.9'}).`
        : '');
    this.lossCanvas.setAttribute('aria-label', `Loss curve: ${this.lossCaption.textContent}`);
    this.lossCanvas.dataset.step = String(h.steps); // the step drawn (for tests and readers of the DOM)
  }

  /** the head scores over steps */
  private drawScores(s: TrainSession, width: number, xMax: number): void {
    const h = s.history;
    const xLog = this.xLog.checked;
    const wide = Math.min(width - 4, 1100);
    const { L, H } = s.dims();
    const sw = width < 640 ? wide : Math.min(520, Math.floor((width - 40) / 2));
    const sx = h.scores.map((x) => x.step);
    for (const key of ['previousToken', 'induction', 'duplicateToken'] as const) {
      const ser: Series[] = [];
      for (let k = 0; k < L * H; k++)
        ser.push({ x: sx, y: h.scores.map((x) => x[key][k]), color: HEAD_COLORS[k % HEAD_COLORS.length], width: 1.8 });
      drawChart(this.scoreCanvases[key], {
        width: sw,
        height: 120,
        xMax,
        xLog,
        yMin: 0,
        yMax: 1,
        yLabel: 'score',
        series: ser,
      });
      this.scoreCanvases[key].dataset.step = String(h.steps);
    }
    if (this.scoreLegend.childElementCount !== L * H) {
      clear(this.scoreLegend);
      for (let k = 0; k < L * H; k++)
        this.scoreLegend.append(
          el('span', {}, swatch(HEAD_COLORS[k % HEAD_COLORS.length]), headName(Math.floor(k / H), k % H)),
        );
    }
  }
}
