// The Timing lab's results: the fitted exponents, the log–log chart with the "×4 per doubling"
// line, and the table of medians per T. It draws what the session holds.
import { el, clear } from '../ui/dom';
import { logLogChart } from '../ui/loglog-chart';
import {
  FIT_FLOOR_MS,
  TIMING_KERNEL_ORDER,
  formatBytes,
  formatMs,
  kernelsOf,
  sweepTs,
  type TimingKernel,
} from '../measure/model';
import type { TimingPoint } from './protocol';
import type { TimingSession } from './session';
import type { TimingSlice } from './state';

const KERNEL_LABEL: Record<TimingKernel, string> = {
  naive: 'naive (full T×T weights)',
  tiled: 'tiled (online softmax)',
  linear: 'linear attention (prefix sums)',
};
const MARKER = { naive: 'circle', tiled: 'square', linear: 'diamond' } as const;

export class ResultsPanel {
  readonly fit = el('div', { class: 'timing-fit' });
  readonly chart = el('div', { class: 'timing-chart' });
  readonly table = el('table', { class: 'timing-table', 'data-testid': 'timing-table' });

  constructor(private session: TimingSession) {}

  draw(st: TimingSlice | null): void {
    this.drawFit();
    this.drawChart(st);
    this.drawTable(st);
  }

  private drawFit(): void {
    clear(this.fit);
    const f = this.session.fits();
    const kernels = this.session.sweep?.params.kernels ?? [];
    const main = f.naive ? 'naive' : f.tiled ? 'tiled' : f.linear ? 'linear' : null;
    const headline = el('p', { class: 'fit-main', 'data-testid': 'timing-exponent' });
    if (main) {
      headline.dataset.value = String(f[main]!.exponent);
      headline.dataset.kernel = main;
    }
    headline.append(el('span', { class: 'fit-label', text: 'Fitted exponent p in time ∝ Tᵖ:' }));
    if (kernels.length === 0 || Object.keys(f).length === 0)
      headline.append(el('strong', { text: 'p = — (needs two points above 0.5 ms)' }));
    for (const k of kernels) {
      const fk = f[k];
      if (!fk) continue;
      headline.append(
        el(
          'span',
          { class: `fit-k k-${k}`, 'data-testid': `timing-exponent-${k}`, 'data-value': String(fk.exponent) },
          el('span', { class: 'sw-line', 'aria-hidden': 'true' }),
          `${k} `,
          el('strong', { text: `p = ${fk.exponent.toFixed(2)}` }),
        ),
      );
    }
    this.fit.append(headline);
    const cmp = this.session.comparison();
    if (cmp) {
      // The two fits side by side, and what each means per doubling of T (2^p, from the fit).
      // The data attributes carry the unrounded fit, so a reader that rounds it gets the text's digits
      // (a 3-digit copy such as 0.975 rounds to 0.97 while the fit 0.9754 shows 0.98).
      const per = (p: number) => `×${(2 ** p).toFixed(1)}`;
      this.fit.append(
        el(
          'p',
          {
            class: 'fit-compare',
            'data-testid': 'timing-compare',
            'data-linear': String(cmp.linear.exponent),
            'data-softmax': String(cmp.softmax.exponent),
          },
          'Linear attention ',
          el('strong', { text: `p = ${cmp.linear.exponent.toFixed(2)}` }),
          ` (${per(cmp.linear.exponent)} per doubling of T) against ${cmp.softmaxKernel} softmax `,
          el('strong', { text: `p = ${cmp.softmax.exponent.toFixed(2)}` }),
          ` (${per(cmp.softmax.exponent)}): no T × T scores, so the work grows like T·d_k·d_v, not T²·d_k.`,
        ),
      );
    } else if (kernels.includes('linear')) {
      this.fit.append(
        el('p', {
          class: 'fit-compare muted',
          'data-testid': 'timing-compare',
          text: 'Linear attention’s exponent appears here next to softmax’s when both have two points above the fit’s floor.',
        }),
      );
    }
    this.fit.append(
      el('p', {
        class: 'muted small',
        text: `Least-squares fit of log t against log T over the points whose median is at least ${FIT_FLOOR_MS} ms (below that, the timer's resolution and fixed per-call costs flatten the curve). Quadratic cost means p ≈ 2${kernels.includes('linear') ? ', linear cost p ≈ 1' : ''}.`,
      }),
    );
  }

  private drawChart(st: TimingSlice | null): void {
    clear(this.chart);
    const s = this.session;
    const sw = s.sweep;
    const planned = sw
      ? sweepTs(sw.params.tStart, sw.params.tEnd)
      : sweepTs(st?.timing.firstT ?? 64, st?.timing.lastT ?? 4096);
    const f = s.fits();
    // naive and tiled always (as before); linear when this sweep (or the settings) time it.
    const timed = sw?.params.kernels ?? kernelsOf(st?.timing.kernels ?? 'both');
    const shown = TIMING_KERNEL_ORDER.filter((k) => k !== 'linear' || timed.includes('linear'));
    const series = shown.map((k) => ({
      label: k,
      cls: `k-${k}`,
      marker: MARKER[k],
      labelDy: k === 'naive' ? -8 : 18,
      fit: f[k] ?? null,
      points: s.pointsOf(k).map((p) => chartPoint(k, p)),
    }));
    // Reference: ×4 per doubling through the first fitted point of the first kernel with a fit;
    // without a fit yet, through the last point of the first kernel.
    // (Softmax's series only: linear attention gets its own ×2 line below.)
    const withFit = series.findIndex((se) => se.label !== 'linear' && se.fit);
    const ref = withFit >= 0 ? withFit : series.findIndex((se) => se.label !== 'linear' && se.points.length > 0);
    const parts = shown.filter((k) => f[k]).map((k) => `${k} kernel slope ${f[k]!.exponent.toFixed(2)}`);
    const refs = ref >= 0 ? [{ slope: 2, label: '×4 per doubling', series: ref }] : [];
    // Linear attention: a slope-1 line through its own first fitted point.
    const lin = series.findIndex((se) => se.label === 'linear' && se.points.length > 0);
    if (lin >= 0) refs.push({ slope: 1, label: '×2 per doubling', series: lin });
    this.chart.append(
      logLogChart({
        ts: planned,
        series,
        testid: 'timing-chart',
        clipId: 'timing-clip',
        ariaLabel: `Log–log chart of time per call against T${parts.length ? ': ' + parts.join(', ') : ''}; a dashed line shows ×4 per doubling (slope 2)${lin >= 0 ? ', another ×2 per doubling (slope 1)' : ''}.`,
        xLabel: 'sequence length T (log scale, ×2 per step)',
        yLabel: 'time per call, ms (log scale)',
        empty: s.phase === 'running' ? 'Measuring…' : 'Press “Run sweep” to measure',
        refs,
      }),
    );
  }

  private drawTable(st: TimingSlice | null): void {
    clear(this.table);
    const s = this.session;
    const sw = s.sweep;
    const kernels = sw?.params.kernels ?? kernelsOf(st?.timing.kernels ?? 'both');
    const head1 = el('tr', {}, el('th', { scope: 'col', rowspan: 2, text: 'T' }));
    const head2 = el('tr');
    for (const k of kernels) {
      head1.append(el('th', { scope: 'colgroup', colspan: 2, class: `k-${k}`, text: KERNEL_LABEL[k] }));
      head2.append(
        el('th', { scope: 'col', text: 'median, min – max' }),
        el('th', { scope: 'col', text: '× prev. T' }),
      );
    }
    // Memory columns carry class "mem": a phone hides them (the memory panel above has the figures).
    for (const k of kernels)
      head1.append(
        el('th', { scope: 'col', rowspan: 2, class: 'mem', text: `${k} memory: core estimate · its instance’s heap` }),
      );
    this.table.append(
      el('caption', { text: 'Time per call (median of the repeats, after warm-up) for each T' }),
      el('thead', {}, head1, head2),
    );
    const tb = el('tbody');
    const ts = [...new Set((sw?.points ?? []).map((p) => p.t))].sort((a, b) => a - b);
    for (const t of ts) {
      const tr = el('tr', { 'data-testid': 'timing-row', 'data-t': t }, el('th', { scope: 'row', text: String(t) }));
      const mem: HTMLElement[] = [];
      for (const k of kernels) {
        const ps = s.pointsOf(k);
        const i = ps.findIndex((p) => p.t === t);
        const p = ps[i];
        if (!p) {
          const stop = sw!.stops.get(k);
          tr.append(el('td', { colspan: 2, class: 'muted stopped', text: stop && t >= stop.t ? stop.why : '—' }));
          mem.push(el('td', { class: 'num muted mem', text: '—' }));
          continue;
        }
        const split = (sw!.params.workers ?? 1) > 1;
        mem.push(
          el('td', {
            class: 'num mem',
            'data-mem-kernel': k,
            'data-estimate': String(p.estimateBytes),
            'data-measured': String(p.heapBytes),
            text: `${formatBytes(p.estimateBytes)} · ${split ? 'n/a' : formatBytes(p.heapBytes)}`,
          }),
        );
        const prev = ps[i - 1];
        const ratio = prev && prev.t * 2 === t ? p.stats.median / prev.stats.median : NaN;
        tr.append(
          el(
            'td',
            {
              class: 'num',
              'data-kernel': k,
              'data-ms': p.stats.median.toFixed(4),
              title: `${p.stats.n} samples${p.batch > 1 ? `, each the mean of ${p.batch} calls` : ''}; interquartile range ${formatMs(p.stats.q1)} – ${formatMs(p.stats.q3)}`,
            },
            el('span', { class: 'med', text: formatMs(p.stats.median) }),
            el('span', { class: 'spread', text: rangeText(p.stats.min, p.stats.max) }),
          ),
          el('td', { class: 'num ratio', text: Number.isFinite(ratio) ? `×${ratio.toFixed(1)}` : '' }),
        );
      }
      tr.append(...mem);
      tb.append(tr);
    }
    if (ts.length === 0)
      tb.append(
        el('tr', {}, el('td', { colspan: 1 + kernels.length * 3, class: 'muted', text: 'No measurements yet.' })),
      );
    this.table.append(tb);
  }
}

/** "1.2 – 3.4 ms" (one unit when both ends share it), else "980 ms – 1.02 s". */
/** One measured size as the log–log chart draws it, with its tooltip. */
function chartPoint(k: TimingKernel, p: TimingPoint) {
  const { median, min, max, n } = p.stats;
  const title = `${k}, T = ${p.t}: median ${formatMs(median)} (min ${formatMs(min)}, max ${formatMs(max)}, ${n} samples)`;
  return { t: p.t, median, min, max, title };
}

function rangeText(a: number, b: number): string {
  const x = formatMs(a),
    y = formatMs(b);
  const ux = x.split(' ')[1],
    uy = y.split(' ')[1];
  return ux === uy ? `${x.split(' ')[0]} – ${y}` : `${x} – ${y}`;
}
