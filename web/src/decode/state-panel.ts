// The Decode tab's "Linear attention: a recurrent state instead of the cache" panel. A model with
// normalizer 'linear' decodes with S = Σ φ(k)vᵀ and z = Σ φ(k) per layer and K/V head: the panel
// shows that its tokens equal the recompute path's (from the stepping Worker's trajectory), and
// times one step with the state and with the K/V cache as T doubles (a wider random linear model
// in the timing Worker), with the bytes of both as the module reports them. It draws what the
// session holds; it holds no run state.
import { el, clear, fmt } from '../ui/dom';
import { logLogChart } from '../ui/loglog-chart';
import { formatBytes, formatMs, sweepTs } from '../measure/model';
import { fitOf, stateBytesFormula, type DecodeMode } from './model';
import { TIMING_SHAPE, type DecodeSession } from './session';
import type { DecodeState } from './state';

export interface StatePanelHost {
  start(): void;
  cancel(): void;
  /** Train config A with linear attention in the stepping Worker. */
  trainLinear(): void;
}

type Mode = Extract<DecodeMode, 'state' | 'cached'>;
const LABEL: Record<Mode, string> = { state: 'recurrent state', cached: 'K/V cache' };

export class StatePanel {
  readonly root: HTMLElement;
  private ds: DecodeState | null = null;
  private modelNote = el('p', { class: 'decode-state-model', 'data-testid': 'decode-state-model' });
  private trainBtn = el('button', {
    type: 'button',
    class: 'btn small',
    'data-testid': 'decode-train-linear',
    text: 'Train a linear-attention model here',
  });
  private check = el('p', { class: 'decode-agree', 'data-testid': 'decode-state-check', hidden: true });
  private runBtn = el('button', {
    type: 'button',
    class: 'btn primary',
    'data-testid': 'decode-state-run',
    text: 'Time the state and the cache',
  });
  private cancelBtn = el('button', {
    type: 'button',
    class: 'btn',
    'data-testid': 'decode-state-cancel',
    text: 'Cancel',
    disabled: true,
  });
  private progress = el('progress', {
    max: 1,
    value: 0,
    'data-testid': 'decode-state-progress',
    'aria-label': 'State timing progress',
  });
  private status = el('p', {
    class: 'timing-status',
    'data-testid': 'decode-state-status',
    'data-state': 'idle',
    'aria-live': 'polite',
  });
  private fit = el('div', { class: 'timing-fit decode-fit' });
  private chart = el('div', { class: 'timing-chart decode-chart' });
  private notes = el('ul', { class: 'timing-notes', 'data-testid': 'decode-state-notes', hidden: true });
  private table = el('table', { class: 'timing-table', 'data-testid': 'decode-state-table' });
  private memory = el('div', { class: 'decode-memory', 'data-testid': 'decode-state-memory' });

  constructor(
    private session: DecodeSession,
    host: StatePanelHost,
  ) {
    this.runBtn.addEventListener('click', () => host.start());
    this.cancelBtn.addEventListener('click', () => host.cancel());
    this.trainBtn.addEventListener('click', () => host.trainLinear());
    const dh = TIMING_SHAPE.dModel / TIMING_SHAPE.heads;
    this.root = el(
      'section',
      { class: 'decode-state', 'aria-label': 'Linear attention: a recurrent state instead of the cache' },
      el('h4', { text: 'Linear attention: a recurrent state instead of the cache' }),
      el('p', {
        class: 'muted',
        text: 'With linear attention (φ(x) = elu(x) + 1, no softmax) a causal row is φ(q)ᵀ S / (φ(q) · z + 10⁻⁶) with S = Σ φ(k) vᵀ and z = Σ φ(k) over the keys so far. Decoding keeps S (d_head × d_head) and z per layer and K/V head and adds the new token’s φ(k) vᵀ: no keys are kept, the memory stays the same at every T, and a step costs the same at every T (after the projections). The K/V cache of the same model grows by a row per token and a step reads all of them.',
      }),
      el('div', { class: 'decode-modelrow' }, this.modelNote, this.trainBtn),
      this.check,
      el('p', {
        class: 'muted small',
        text: `Timing: a wider random linear model (d_model ${TIMING_SHAPE.dModel}, ${TIMING_SHAPE.heads} heads, ${TIMING_SHAPE.layers} layers; d_head ${dh}), one step at length T with the recurrent state and with the K/V cache, over the T range above. Bytes are dec.append(…).cacheBytes of a model made at each T.`,
      }),
      el(
        'div',
        { class: 'trow actions' },
        this.runBtn,
        this.cancelBtn,
        el('div', { class: 'tprogress' }, this.progress, this.status),
      ),
      this.notes,
      el('div', { class: 'timing-results' }, el('div', { class: 'timing-plot' }, this.fit, this.chart), this.memory),
      el('div', { class: 'table-scroll' }, this.table),
    );
    this.draw();
  }

  setState(d: DecodeState): void {
    this.ds = d;
  }

  /** The model line and the check against the recompute path (after a model or a trajectory). */
  drawModel(): void {
    const s = this.session;
    const m = s.model;
    this.modelNote.dataset.linear = s.linear ? '1' : '0';
    this.modelNote.textContent = !m
      ? s.modelPending
        ? 'Waiting for the model…'
        : 'No model loaded.'
      : s.linear
        ? 'The loaded model uses linear attention: the stepper above shows its K/V cache; its recurrent state decodes the same prompt beside it.'
        : `The loaded model uses ${String(m.config.normalizer ?? 'softmax')} attention, which has no recurrent form: train a linear one here (config A with normalizer linear), or pick “linear” in the Train tab and use that model.`;
    this.trainBtn.hidden = s.linear || s.modelPending;
    const chk = s.stateCheck();
    const st = s.traj?.state;
    this.check.hidden = !chk;
    clear(this.check);
    if (chk && st && m) {
      this.check.dataset.identical = chk.same ? '1' : '0';
      this.check.dataset.same = chk.same ? '1' : '0';
      const sh = m.shape;
      this.check.append(
        el('strong', { text: chk.text }),
        ` The state holds ${formatBytes(st.bytes)} (= ${sh.layers} layers · ${sh.kvHeads} K/V heads · (${sh.dModel / sh.heads}² + ${sh.dModel / sh.heads}) · 4 B${st.bytes === stateBytesFormula(sh, sh.kvHeads) ? '' : ' — ≠ the module’s figure!'}) at every length; this model’s K/V cache takes ${formatBytes(st.cacheBytes)} for its ${sh.seqLen} positions.`,
      );
    }
  }

  drawStatus(): void {
    const s = this.session;
    this.status.dataset.state = s.stateStatus.state;
    this.status.textContent = s.stateStatus.text;
    this.progress.value = s.stateFraction;
    this.runBtn.disabled = s.stateRunning;
    this.cancelBtn.disabled = !s.stateRunning;
  }

  draw(): void {
    this.drawStatus();
    const sw = this.session.stateSweep;
    const pts = sw?.points ?? [];
    const fits = { state: fitOf(pts, 'state'), cached: fitOf(pts, 'cached') };
    clear(this.fit);
    const head = el(
      'p',
      { class: 'fit-main', 'data-testid': 'decode-state-exponent' },
      el('span', { class: 'fit-label', text: 'Time per token ∝ Tᵖ:' }),
    );
    for (const mode of ['state', 'cached'] as Mode[]) {
      const f = fits[mode];
      head.append(
        el(
          'span',
          {
            class: `fit-k k-${mode}`,
            'data-testid': `decode-state-exponent-${mode}`,
            'data-value': f ? f.exponent.toFixed(3) : '',
          },
          el('span', { class: 'sw-line', 'aria-hidden': 'true' }),
          `${LABEL[mode]} `,
          el('strong', { text: f ? `p = ${f.exponent.toFixed(2)}` : 'p = —' }),
        ),
      );
    }
    this.fit.append(
      head,
      el('p', {
        class: 'muted small',
        text: 'Least-squares fit of log time against log T over the medians. The state’s step does the same work at every T: p ≈ 0. The cache’s step reads T keys (and computes φ of each): p ≈ 1 — the fixed cost of the projections pulls it below 1 at small T; at large T the keys leave the processor’s cache and a loaded machine adds noise, which can push it above.',
      }),
    );
    const ser = (mode: Mode) =>
      pts
        .filter((p) => p.mode === mode)
        .map((p) => ({
          t: p.t,
          median: p.stats.median,
          min: p.stats.min,
          max: p.stats.max,
          title: `${LABEL[mode]}, T = ${p.t}: median ${formatMs(p.stats.median)} (min ${formatMs(p.stats.min)}, max ${formatMs(p.stats.max)}, ${p.stats.n} samples)`,
        }));
    const ts = sweepTs(sw?.tStart ?? this.ds?.tStart ?? 256, sw?.tEnd ?? this.ds?.tEnd ?? 4096);
    clear(this.chart);
    this.chart.append(
      logLogChart({
        ts,
        testid: 'decode-state-chart',
        clipId: 'decode-state-clip',
        right: 175,
        series: [
          { label: 'K/V cache', cls: 'k-cached', marker: 'square', points: ser('cached'), fit: fits.cached },
          { label: 'state', cls: 'k-state', marker: 'circle', points: ser('state'), fit: fits.state },
        ],
        refs: [
          { slope: 1, label: '×2 per doubling', series: 0 },
          { slope: 0, label: 'flat', series: 1 },
        ],
        ariaLabel: `Log–log chart of the time of one decoding step of a linear-attention model against T${fits.state ? `: state slope ${fits.state.exponent.toFixed(2)}` : ''}${fits.cached ? `, K/V cache slope ${fits.cached.exponent.toFixed(2)}` : ''}.`,
        xLabel: 'sequence length T (log scale, ×2 per step)',
        yLabel: 'time per decoding step, ms (log)',
        empty: sw?.phase === 'running' ? 'Measuring…' : 'Press “Time the state and the cache” to measure',
      }),
    );
    clear(this.notes);
    for (const n of sw?.notes ?? []) this.notes.append(el('li', { class: 'note-skip', text: n }));
    this.notes.hidden = !sw || sw.notes.length === 0;
    this.drawTable();
    this.drawMemory();
  }

  /** Bytes each decoder keeps, per T, as bars on one scale (the largest cache). */
  private drawMemory(): void {
    clear(this.memory);
    const rows = this.session.stateSweep?.bytes ?? [];
    this.memory.append(
      el('h4', { text: 'Memory kept while decoding' }),
      el('p', {
        class: 'muted small',
        text: 'state: layers · K/V heads · (d_head² + d_head) · 4 B at every T; K/V cache: 2 · layers · K/V heads · T · d_head · 4 B',
      }),
    );
    const max = Math.max(1, ...rows.map((r) => Math.max(r.state, r.cache)));
    for (const r of rows) {
      const bar = (cls: string, b: number, label: string) => {
        const x = el('span', { class: `mbar ${cls}` });
        x.style.width = `${Math.max(0.5, (b / max) * 100).toFixed(2)}%`;
        return el(
          'div',
          { class: 'mrow', 'data-testid': `decode-state-mem-${cls}`, 'data-t': r.t, 'data-bytes': b },
          el(
            'div',
            { class: 'mlabel' },
            el('span', { text: `${label}, T = ${r.t}` }),
            el('strong', { text: formatBytes(b) }),
          ),
          el('div', { class: 'mtrack' }, x),
        );
      };
      this.memory.append(bar('kv-state', r.state, 'state'), bar('kv-mha', r.cache, 'K/V cache'));
    }
    if (rows.length === 0)
      this.memory.append(
        el('p', { class: 'muted small', text: 'The module’s figures appear when a timing run starts.' }),
      );
  }

  private drawTable(): void {
    clear(this.table);
    const sw = this.session.stateSweep;
    const pts = sw?.points ?? [];
    this.table.append(
      el('caption', { text: 'One decoding step of the linear model, and the memory each decoder keeps' }),
      el(
        'thead',
        {},
        el(
          'tr',
          {},
          ...['T', 'state step', '× prev. T', 'K/V cache step', '× prev. T', 'state bytes', 'K/V cache bytes'].map(
            (t) => el('th', { scope: 'col', text: t }),
          ),
        ),
      ),
    );
    const tb = el('tbody');
    const ts = [...new Set([...pts.map((p) => p.t), ...(sw?.bytes ?? []).map((r) => r.t)])].sort((a, b) => a - b);
    const med = (t: number, m: Mode) => pts.find((p) => p.t === t && p.mode === m)?.stats.median;
    for (const t of ts) {
      const cell = (m: Mode) => {
        const v = med(t, m);
        return v === undefined
          ? el('td', { class: 'muted', text: '—' })
          : el('td', { class: 'num', 'data-mode': m, 'data-ms': v.toFixed(4), text: formatMs(v) });
      };
      const ratio = (m: Mode) => {
        const a = med(t, m),
          b = med(t / 2, m);
        return el('td', { class: 'num ratio', text: a && b ? `×${fmt(a / b, 1)}` : '' });
      };
      const by = sw?.bytes.find((r) => r.t === t);
      tb.append(
        el(
          'tr',
          { 'data-testid': 'decode-state-row', 'data-t': t },
          el('th', { scope: 'row', text: String(t) }),
          cell('state'),
          ratio('state'),
          cell('cached'),
          ratio('cached'),
          el('td', { class: 'num', 'data-bytes': by?.state ?? '', text: by ? formatBytes(by.state) : '—' }),
          el('td', { class: 'num', 'data-bytes': by?.cache ?? '', text: by ? formatBytes(by.cache) : '—' }),
        ),
      );
    }
    if (ts.length === 0)
      tb.append(el('tr', {}, el('td', { colspan: 7, class: 'muted', text: 'No measurements yet.' })));
    this.table.append(tb);
  }
}
