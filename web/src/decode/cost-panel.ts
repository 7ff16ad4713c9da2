// The Decode tab's "Cost as the sequence grows" panel: the T range, Run / Cancel, the fitted
// exponents, the log–log chart, the total time to generate N tokens, the table of step times and
// the K/V cache's bytes for MHA / GQA / MQA. It draws the session's sweep; it holds no run state.
import { el, clear, fmt } from '../ui/dom';
import { logLogChart } from '../ui/loglog-chart';
import { formatBytes, formatMs, sweepTs } from '../measure/model';
import {
  cacheBytesFormula,
  dHead,
  fitOf,
  kvVariants,
  timingRows,
  totalMs,
  growthLawHolds,
  type DecodeMode,
  type DecodePoint,
  type DecodeShape,
} from './model';
import { TIMING_SHAPE, type DecodeSession } from './session';
import type { DecodeState } from './state';

const POW2 = [64, 128, 256, 512, 1024, 2048, 4096];

export interface CostHost {
  update(p: Partial<DecodeState>): void;
  start(): void;
  cancel(): void;
}

export class CostPanel {
  readonly root: HTMLElement;
  private ds: DecodeState | null = null;
  private tStart = el('select', { 'data-testid': 'decode-tstart', 'aria-label': 'First T' });
  private tEnd = el('select', { 'data-testid': 'decode-tend', 'aria-label': 'Last T' });
  private runBtn = el('button', {
    type: 'button',
    class: 'btn primary',
    'data-testid': 'decode-run',
    text: 'Time decoding',
  });
  private cancelBtn = el('button', {
    type: 'button',
    class: 'btn',
    'data-testid': 'decode-cancel',
    text: 'Cancel',
    disabled: true,
  });
  private progress = el('progress', {
    max: 1,
    value: 0,
    'data-testid': 'decode-progress',
    'aria-label': 'Timing progress',
  });
  private status = el('p', {
    class: 'timing-status',
    'data-testid': 'decode-status',
    'data-state': 'idle',
    'aria-live': 'polite',
  });
  private fit = el('div', { class: 'timing-fit decode-fit' });
  private chart = el('div', { class: 'timing-chart decode-chart' });
  private table = el('table', { class: 'timing-table', 'data-testid': 'decode-table' });
  private total = el('p', { class: 'decode-total', 'data-testid': 'decode-total' });
  private notes = el('ul', { class: 'timing-notes', 'data-testid': 'decode-notes', hidden: true });
  private memory = el('div', { class: 'decode-memory', 'data-testid': 'decode-memory' });

  constructor(
    private session: DecodeSession,
    host: CostHost,
  ) {
    for (const t of POW2) {
      this.tStart.append(el('option', { value: t, text: String(t) }));
      this.tEnd.append(el('option', { value: t, text: String(t) }));
    }
    this.tStart.addEventListener('change', () => host.update({ tStart: Number(this.tStart.value) }));
    this.tEnd.addEventListener('change', () => host.update({ tEnd: Number(this.tEnd.value) }));
    this.runBtn.addEventListener('click', () => host.start());
    this.cancelBtn.addEventListener('click', () => host.cancel());
    const field = (label: string, input: HTMLElement) =>
      el('label', { class: 'tfield' }, el('span', { text: label }), input);
    this.root = el(
      'section',
      { class: 'decode-cost', 'aria-label': 'Cost as the sequence grows' },
      el('h4', { text: 'Cost as the sequence grows' }),
      el('p', {
        class: 'muted',
        text: `A wider random model (d_model ${TIMING_SHAPE.dModel}, ${TIMING_SHAPE.heads} heads, ${TIMING_SHAPE.layers} layers): one decoding step at length T, with the cache (one query row against T cached keys) and without it (the whole prefix again). Warm-up first, then repeats; the median with its min–max spread.`,
      }),
      el(
        'div',
        { class: 'trow actions' },
        field('T from', this.tStart),
        field('to', this.tEnd),
        this.runBtn,
        this.cancelBtn,
        el('div', { class: 'tprogress' }, this.progress, this.status),
      ),
      this.notes,
      el('div', { class: 'timing-results' }, el('div', { class: 'timing-plot' }, this.fit, this.chart), this.memory),
      this.total,
      el('div', { class: 'table-scroll' }, this.table),
    );
    this.draw();
  }

  setState(d: DecodeState): void {
    this.ds = d;
    this.tStart.value = String(d.tStart);
    this.tEnd.value = String(d.tEnd);
  }

  drawStatus(): void {
    const s = this.session;
    this.status.dataset.state = s.timingStatus.state;
    this.status.textContent = s.timingStatus.text;
    this.progress.value = s.timingFraction;
    this.runBtn.disabled = s.timingRunning;
    this.cancelBtn.disabled = !s.timingRunning;
  }

  draw(): void {
    this.drawStatus();
    const sw = this.session.sweep;
    const pts = sw?.points ?? [];
    const fc = fitOf(pts, 'cached'),
      fr = fitOf(pts, 'recompute');
    clear(this.fit);
    const head = el(
      'p',
      { class: 'fit-main', 'data-testid': 'decode-exponent' },
      el('span', { class: 'fit-label', text: 'Fitted exponent p in time per step ∝ Tᵖ:' }),
    );
    for (const [mode, f, label] of [
      ['cached', fc, 'cached'],
      ['recompute', fr, 'recompute'],
    ] as const) {
      head.append(
        el(
          'span',
          {
            class: `fit-k k-${mode}`,
            'data-testid': `decode-exponent-${mode}`,
            'data-value': f ? f.exponent.toFixed(3) : '',
          },
          el('span', { class: 'sw-line', 'aria-hidden': 'true' }),
          `${label} `,
          el('strong', { text: f ? `p = ${f.exponent.toFixed(2)}` : 'p = —' }),
        ),
      );
    }
    this.fit.append(
      head,
      el('p', {
        class: 'muted small',
        text: 'Least-squares fit of log time against log T over the medians. With the cache a step reads T keys: p ≈ 1 — but a step also has a fixed cost (the q, k, v and output projections, 4·d_model² multiply-adds per layer, and the logits) that dominates at small T and pulls the fit below 1; the “× prev. T” column shows the growth per doubling approaching ×2. Without the cache a step recomputes the T × T causal attention: p → 2 (the projections, linear in T, pull it below 2 at small T).',
      }),
    );
    const ser = (mode: DecodeMode) =>
      pts
        .filter((p) => p.mode === mode)
        .map((p) => ({
          t: p.t,
          median: p.stats.median,
          min: p.stats.min,
          max: p.stats.max,
          title: `${mode}, T = ${p.t}: median ${formatMs(p.stats.median)} (min ${formatMs(p.stats.min)}, max ${formatMs(p.stats.max)}, ${p.stats.n} samples)`,
        }));
    const ts = sweepTs(sw?.tStart ?? this.ds?.tStart ?? 256, sw?.tEnd ?? this.ds?.tEnd ?? 4096);
    clear(this.chart);
    this.chart.append(
      logLogChart({
        ts,
        testid: 'decode-chart',
        clipId: 'decode-clip',
        right: 175,
        series: [
          { label: 'recompute', cls: 'k-recompute', marker: 'circle', points: ser('recompute'), fit: fr },
          { label: 'cached', cls: 'k-cached', marker: 'square', points: ser('cached'), fit: fc },
        ],
        refs: [
          { slope: 2, label: '×4 per doubling', series: 0 },
          { slope: 1, label: '×2 per doubling', series: 1 },
        ],
        ariaLabel: `Log–log chart of the time of one decoding step against T${fc ? `: cached slope ${fc.exponent.toFixed(2)}` : ''}${fr ? `, recompute slope ${fr.exponent.toFixed(2)}` : ''}.`,
        xLabel: 'sequence length T (log scale, ×2 per step)',
        yLabel: 'time per decoding step, ms (log)',
        empty: sw?.phase === 'running' ? 'Measuring…' : 'Press “Time decoding” to measure',
      }),
    );
    // Total time to generate N tokens from the fits.
    clear(this.total);
    const N = sw?.tEnd ?? this.ds?.tEnd ?? 4096;
    if (fc && fr) {
      const a = totalMs(fc, N),
        b = totalMs(fr, N);
      this.total.dataset.cachedMs = a.toFixed(1);
      this.total.dataset.recomputeMs = b.toFixed(1);
      this.total.append(
        el('strong', {
          text: `Generating ${N} tokens one by one: about ${formatMs(a)} with the cache, ${formatMs(b)} without (${fmt(b / a, 0)}×). `,
        }),
        el('span', {
          class: 'muted',
          'data-testid': 'decode-total-how',
          text:
            growthLawHolds(fc) && growthLawHolds(fr)
              ? `Σ over t = 1…${N} of the fitted per-step time c·tᵖ (≈ c·N^(p+1)/(p+1)): with the fitted p that grows as N^${(fc.exponent + 1).toFixed(2)} with the cache and N^${(fr.exponent + 1).toFixed(2)} without (an ideal cached step, p = 1, would give N²; an ideal recompute, p = 2, N³).`
              : `Σ over t = 1…${N} of the fitted per-step time c·tᵖ. The fitted p is ${fc.exponent.toFixed(2)} with the cache and ${fr.exponent.toFixed(2)} without: a step that gets cheaper as T grows is timing noise, not a growth law, so these totals are not a forecast — press “Time decoding” again (a wider range of T steadies the fit).`,
        }),
      );
    } else
      this.total.append(
        el('span', { class: 'muted', text: 'The total time to generate N tokens appears when both fits are in.' }),
      );
    clear(this.notes);
    for (const n of sw?.notes ?? []) this.notes.append(el('li', { class: 'note-skip', text: n }));
    this.notes.hidden = !sw || sw.notes.length === 0;
    this.drawTable(pts);
    this.drawMemory();
  }

  private drawTable(pts: DecodePoint[]): void {
    clear(this.table);
    this.table.append(
      el('caption', { text: 'Time of one decoding step (median of the repeats, after warm-up; min – max below)' }),
      el(
        'thead',
        {},
        el(
          'tr',
          {},
          ...['T', 'with the cache', '× prev. T', 'recompute', '× prev. T', 'recompute ÷ cached'].map((t) =>
            el('th', { scope: 'col', text: t }),
          ),
        ),
      ),
    );
    const tb = el('tbody');
    const rows = timingRows(pts);
    for (const r of rows) {
      const cell = (mode: DecodeMode) => {
        const p = pts.find((q) => q.t === r.T && q.mode === mode);
        return p
          ? el(
              'td',
              { class: 'num', 'data-mode': mode, 'data-ms': p.stats.median.toFixed(4) },
              el('span', { class: 'med', text: formatMs(p.stats.median) }),
              el('span', { class: 'spread', text: `${formatMs(p.stats.min)} – ${formatMs(p.stats.max)}` }),
            )
          : el('td', { class: 'muted', text: '—' });
      };
      // Growth per doubling of T: ×2 is linear, ×4 quadratic.
      const prev = rows.find((q) => q.T * 2 === r.T);
      const ratio = (a: number | null | undefined, b: number | null | undefined) =>
        el('td', { class: 'num ratio', text: a && b ? `×${fmt(a / b, 1)}` : '' });
      tb.append(
        el(
          'tr',
          { 'data-testid': 'decode-row', 'data-t': r.T },
          el('th', { scope: 'row', text: String(r.T) }),
          cell('cached'),
          ratio(r.cachedMs, prev?.cachedMs),
          cell('recompute'),
          ratio(r.recomputeMs, prev?.recomputeMs),
          el('td', {
            class: 'num ratio',
            text: r.cachedMs && r.recomputeMs ? `×${fmt(r.recomputeMs / r.cachedMs, 0)}` : '',
          }),
        ),
      );
    }
    if (rows.length === 0)
      tb.append(el('tr', {}, el('td', { colspan: 6, class: 'muted', text: 'No measurements yet.' })));
    this.table.append(tb);
  }

  private drawMemory(): void {
    clear(this.memory);
    const sw = this.session.sweep;
    const T = sw?.memory?.t ?? sw?.tEnd ?? this.ds?.tEnd ?? 4096;
    const shape = { layers: TIMING_SHAPE.layers, heads: TIMING_SHAPE.heads, dModel: TIMING_SHAPE.dModel };
    const vars = kvVariants(shape.heads);
    const max = cacheBytesFormula(shape, shape.heads, T);
    const heap = this.session.heapBytes();
    this.memory.append(
      el('h4', { text: `K/V cache at T = ${T}` }),
      el('p', {
        class: 'muted small',
        text: `bytes = 2 · layers · K/V heads · T · d_head · 4 = 2 · ${shape.layers} · H_kv · ${T} · ${dHead(shape as DecodeShape)} · 4`,
      }),
    );
    for (const v of vars) {
      const formula = cacheBytesFormula(shape, v.kvHeads, T);
      const reported = sw?.memory?.rows.find((r) => r.name === v.name)?.bytes;
      const b = el('span', { class: `mbar kv-${v.name.toLowerCase()}` });
      b.style.width = `${Math.max(0.5, (formula / Math.max(max, Number.isFinite(heap) ? heap : 0)) * 100).toFixed(2)}%`;
      this.memory.append(
        el(
          'div',
          {
            class: 'mrow',
            'data-testid': `decode-mem-${v.name.toLowerCase()}`,
            'data-bytes': reported ?? '',
            'data-formula': formula,
          },
          el(
            'div',
            { class: 'mlabel' },
            el('span', { text: `${v.name}: ${v.kvHeads} K/V head${v.kvHeads > 1 ? 's' : ''}` }),
            el('strong', { text: formatBytes(formula) }),
          ),
          el('div', { class: 'mtrack' }, b),
          el('div', {
            class: 'mnote muted',
            text:
              reported === undefined
                ? 'the module’s figure appears when a timing run starts'
                : `the module reports ${formatBytes(reported)}${reported === formula ? ' (= the formula)' : ' (≠ the formula!)'}`,
          }),
        ),
      );
    }
    if (Number.isFinite(heap)) {
      const b = el('span', { class: 'mbar heap' });
      b.style.width = `${Math.min(100, (heap / Math.max(max, heap)) * 100).toFixed(2)}%`;
      this.memory.append(
        el(
          'div',
          { class: 'mrow', 'data-testid': 'decode-heap', 'data-bytes': heap },
          el(
            'div',
            { class: 'mlabel' },
            el('span', { text: 'measured wasm heap' }),
            el('strong', { text: formatBytes(heap) }),
          ),
          el('div', { class: 'mtrack' }, b),
          el('div', {
            class: 'mnote muted',
            text: 'the timing worker’s WebAssembly memory: weights, optimiser state, the cache and work buffers (it only grows)',
          }),
        ),
      );
    }
    this.memory.append(
      el('p', {
        class: 'muted small',
        text: 'Grouped-query (GQA) and multi-query attention (MQA) let several query heads share one K/V head: the cache — often the largest thing in memory while generating — shrinks by the same factor.',
      }),
    );
  }
}
