// Timing lab: lesson 2's "Now watch the cost", measured in this browser. A sweep doubles T, times
// the naive and the tiled kernel in a separate Worker, and shows a table, a log–log chart with the
// fitted exponent and the "×4 per doubling" line, and what each kernel needs in memory.
// It needs no attention result (needsResult: false); its settings live in the URL (t* fields).
import { el, clear } from '../ui/dom';
import { download } from '../shared/export';
import { TIMING_LIMITS as L, TIMING_WORKERS, type TimingSlice as State, type TimingKernels, type TimingInput, type TimingState } from './state';
import type { CoreBuildInfo } from '../wasm/core-build';
import { TimingClient } from './client';
import { coreBuildLabel } from '../wasm/core-build';
import type { TimingMessage, TimingPoint } from './protocol';
import {
  FIT_FLOOR_MS, TIME_BUDGET_MS, fitExponent, formatBytes, formatMs, kernelsOf, skipText, sweepTs,
  type Fit, type MemoryParams, type MemoryTable, type SweepParams, type TimingKernel,
} from '../measure/model';
import type { LabContext, View, ViewFactory } from '../ui/view';
import { logLogChart } from '../ui/loglog-chart';

const KERNEL_LABEL: Record<TimingKernel, string> = { naive: 'naive (full T×T weights)', tiled: 'tiled (online softmax)' };
const POW2 = sweepTs(L.timingMinT, L.timingMaxT);

/** What the page gives the lab: its settings, and the compute Worker's answers about the core
 *  (which build runs; the memory each kernel needs), asked of the page's client. */
export interface TimingContext extends LabContext<State, { timing?: Partial<TimingState> }> {
  client: { about(): Promise<CoreBuildInfo>; memory(params: MemoryParams): Promise<MemoryTable> };
}

type Phase = 'idle' | 'running' | 'done' | 'cancelled' | 'error';

interface Sweep {
  params: SweepParams;
  points: TimingPoint[];
  notes: { text: string; kind: 'skip' | 'refused' }[];
  /** Why a kernel has no point from some T on. */
  stops: Map<TimingKernel, { t: number; why: string }>;
  heapBytes: number;
  startedAt: number;
}

export function paramsOf(st: State): SweepParams {
  // The worker split applies to core.attention ('qkv'); the lesson's loop runs in one instance.
  return { tStart: st.timing.firstT, tEnd: st.timing.lastT, dModel: st.timing.dModel, dk: st.timing.dK, heads: st.timing.heads, kernels: kernelsOf(st.timing.kernels), causal: st.timing.causal, mode: st.timing.input, workers: st.timing.input === 'qkv' ? st.timing.workers : 1 };
}

function describe(p: SweepParams): string {
  const shape = p.mode === 'proj'
    ? `X (T × ${p.dModel}) projected to d_k = ${p.dk}, core.multiHeadAttention`
    : `random Q, K, V (d_k = ${p.dk}), core.attention`;
  const w = p.workers ?? 1;
  const split = w > 1 ? ` · each call split across ${w} workers (${p.heads >= w ? 'by heads' : 'by query rows'})` : '';
  return `T = ${p.tStart} … ${p.tEnd} by doubling · ${shape} · ${p.heads} head${p.heads > 1 ? 's' : ''} · ${p.causal ? 'causal' : 'no mask'} · ${p.kernels.join(' and ')}${split}`;
}

class TimingView implements View<TimingContext> {
  readonly id = 'timing';
  readonly root: HTMLElement;
  private client = new TimingClient();
  private ctx: TimingContext | null = null;
  private sweep: Sweep | null = null;
  private phase: Phase = 'idle';
  private statusText = 'Press Run to start the sweep.';

  // Controls
  private tstart = el('select', { 'data-testid': 'timing-tstart', 'aria-label': 'First T' });
  private tend = el('select', { 'data-testid': 'timing-tend', 'aria-label': 'Last T' });
  private mode = el('select', { 'data-testid': 'timing-mode' },
    el('option', { value: 'qkv', text: 'random Q, K, V → core.attention' }),
    el('option', { value: 'proj', text: 'lesson 2’s loop: X → Wq, Wk, Wv → attention' }));
  private dm = el('input', { type: 'number', min: 1, max: L.timingMaxDModel, step: 1, inputmode: 'numeric', 'data-testid': 'timing-dm' });
  private dk = el('input', { type: 'number', min: 1, max: L.timingMaxDk, step: 1, inputmode: 'numeric', 'data-testid': 'timing-dk' });
  private heads = el('input', { type: 'number', min: 1, max: L.timingMaxHeads, step: 1, inputmode: 'numeric', 'data-testid': 'timing-heads' });
  private ker = el('select', { 'data-testid': 'timing-kernels' },
    el('option', { value: 'both', text: 'naive and tiled' }),
    el('option', { value: 'naive', text: 'naive only' }),
    el('option', { value: 'tiled', text: 'tiled only' }));
  private causal = el('input', { type: 'checkbox', 'data-testid': 'timing-causal' });
  private workers = el('select', { 'data-testid': 'timing-workers' },
    ...TIMING_WORKERS.map((n) => el('option', { value: n, text: n === 1 ? '1 (default)' : String(n) })));
  private workersNote = el('p', { class: 'timing-workers-note muted small', 'data-testid': 'timing-workers-note' });
  /** Which build of the core runs here (issue 12), as the compute Worker's core reports it. */
  private coreBuild = el('p', { class: 'timing-core-build muted small', 'data-testid': 'core-build', 'data-build': 'unknown' });
  private coreBuildAsked = false;
  private runBtn = el('button', { type: 'button', class: 'btn primary', 'data-testid': 'timing-run', text: 'Run sweep' });
  private cancelBtn = el('button', { type: 'button', class: 'btn', 'data-testid': 'timing-cancel', text: 'Cancel', disabled: true });
  private saveBtn = el('button', { type: 'button', class: 'btn small', 'data-testid': 'timing-export', text: 'Download JSON', disabled: true });

  // Output
  private progress = el('progress', { max: 1, value: 0, 'data-testid': 'timing-progress', 'aria-label': 'Sweep progress' });
  private status = el('p', { class: 'timing-status', 'data-testid': 'timing-status', 'data-state': 'idle', 'aria-live': 'polite' });
  private caption = el('p', { class: 'timing-caption muted' });
  private notes = el('ul', { class: 'timing-notes', 'data-testid': 'timing-notes' });
  private projNote = el('p', { class: 'timing-proj-note', 'data-testid': 'timing-proj-note' });
  private fit = el('div', { class: 'timing-fit' });
  private chart = el('div', { class: 'timing-chart' });
  private memory = el('div', { class: 'timing-memory', 'data-testid': 'timing-memory' });
  private table = el('table', { class: 'timing-table', 'data-testid': 'timing-table' });

  constructor() {
    for (const t of POW2) {
      this.tstart.append(el('option', { value: t, text: String(t) }));
      this.tend.append(el('option', { value: t, text: String(t) }));
    }
    const update = (p: Partial<TimingState>) => this.ctx?.update({ timing: p });
    this.tstart.addEventListener('change', () => update({ firstT: Number(this.tstart.value) }));
    this.tend.addEventListener('change', () => update({ lastT: Number(this.tend.value) }));
    this.mode.addEventListener('change', () => update({ input: this.mode.value as TimingInput }));
    this.ker.addEventListener('change', () => update({ kernels: this.ker.value as TimingKernels }));
    this.causal.addEventListener('change', () => update({ causal: this.causal.checked }));
    this.workers.addEventListener('change', () => update({ workers: Number(this.workers.value) }));
    for (const [input, key] of [[this.dm, 'dModel'], [this.dk, 'dK'], [this.heads, 'heads']] as const) {
      input.addEventListener('change', () => {
        const v = input.valueAsNumber;
        update({ [key]: Number.isNaN(v) ? undefined : v });
        if (this.ctx) this.syncControls(this.ctx.state);
      });
    }
    this.runBtn.addEventListener('click', () => this.start());
    this.cancelBtn.addEventListener('click', () => this.cancel());
    this.saveBtn.addEventListener('click', () => this.save());

    const field = (label: string, input: HTMLElement, cls = '') => el('label', { class: `tfield ${cls}` }, el('span', { text: label }), input);
    const controls = el('div', { class: 'timing-controls', role: 'group', 'aria-label': 'Sweep settings' },
      el('div', { class: 'trow' },
        field('T from', this.tstart), field('to', this.tend),
        field('Input', this.mode, 'wide'),
        field('d_model', this.dm), field('d_k', this.dk), field('heads', this.heads),
        field('Kernels', this.ker),
        el('label', { class: 'tfield check' }, this.causal, el('span', { text: 'causal mask' })),
        field('Workers per call', this.workers)),
      this.workersNote,
      this.coreBuild,
      el('div', { class: 'trow actions' }, this.runBtn, this.cancelBtn, el('div', { class: 'tprogress' }, this.progress, this.status)));

    this.root = el('div', { class: 'view-timing', 'data-testid': 'timing-view' },
      el('div', { class: 'timing-head' },
        el('h3', { class: 'panel-title', text: 'Now watch the cost: time attention as T doubles' }),
        el('p', { class: 'lead', text: 'Each doubling of the sequence length T roughly quadruples the time: the score matrix Q Kᵀ has T × T entries. Run the sweep and measure it in this browser.' })),
      controls,
      this.caption,
      this.projNote,
      this.notes,
      el('div', { class: 'timing-results' }, el('div', { class: 'timing-plot' }, this.fit, this.chart), this.memory),
      el('div', { class: 'table-scroll' }, this.table),
      el('div', { class: 'timing-save' }, this.saveBtn, el('span', { class: 'muted small', text: 'Every sample of the sweep, its settings and this browser, as JSON.' })),
      this.explainer());
    this.draw();
  }

  heatmaps() {
    return [];
  }

  render(ctx: TimingContext): void {
    this.ctx = ctx;
    this.showCoreBuild(ctx);
    this.syncControls(ctx.state);
    if (!this.sweep) this.draw();
  }

  private syncControls(st: State): void {
    this.tstart.value = String(st.timing.firstT);
    this.tend.value = String(st.timing.lastT);
    this.mode.value = st.timing.input;
    this.ker.value = st.timing.kernels;
    this.causal.checked = st.timing.causal;
    this.workers.value = String(st.timing.workers);
    this.workers.disabled = st.timing.input !== 'qkv' || this.phase === 'running';
    this.workers.title = st.timing.input === 'qkv' ? '' : 'The lesson’s loop runs in one instance; the split applies to core.attention';
    this.drawWorkersNote(st);
    if (document.activeElement !== this.dm) this.dm.value = String(st.timing.dModel);
    if (document.activeElement !== this.dk) this.dk.value = String(st.timing.dK);
    if (document.activeElement !== this.heads) this.heads.value = String(st.timing.heads);
    this.dm.disabled = st.timing.input !== 'proj' || this.phase === 'running';
    this.dm.title = st.timing.input === 'proj' ? '' : 'Only the lesson’s loop projects X of width d_model';
  }

  private showCoreBuild(ctx: TimingContext): void {
    if (this.coreBuildAsked) return;
    this.coreBuildAsked = true;
    this.coreBuild.textContent = 'core: …';
    ctx.client.about().then((a) => {
      this.coreBuild.dataset.build = a.relaxedSimd ? 'relaxed' : 'simd128';
      this.coreBuild.textContent = `core: ${coreBuildLabel(a.relaxedSimd)}` + (a.relaxedSimd
        ? ' — this browser validates WebAssembly relaxed SIMD, so the forward kernels fuse each multiply-add (results may differ from SIMD128 in the last bits); training stays SIMD128 so a run replays exactly.'
        : a.prefer === 'simd' ? ' — asked for with ?core=simd128.' : ' — this browser does not validate WebAssembly relaxed SIMD (no fused multiply-add), so the SIMD128 build runs.');
    }, (e: Error) => {
      this.coreBuildAsked = false;
      this.coreBuild.textContent = `core: unknown (${e.message})`;
    });
  }

  private drawWorkersNote(st: State): void {
    const cores = typeof navigator !== 'undefined' ? navigator.hardwareConcurrency : NaN;
    const isolated = typeof crossOriginIsolated !== 'undefined' && crossOriginIsolated;
    const w = st.timing.input === 'qkv' ? st.timing.workers : 1;
    const how = w === 1
      ? 'Each call runs in one WebAssembly instance (one core).'
      : `Each call is split across ${w} module Workers, each with its own WebAssembly instance: ${st.timing.heads >= w ? 'whole heads per worker' : 'blocks of query rows per worker (causal blocks balanced by area, each given only the keys it can see)'}; the time is the wall clock from posting the parts to merging their results.`;
    this.workersNote.textContent = `This browser: ${Number.isFinite(cores) ? cores : 'unknown'} logical cores (navigator.hardwareConcurrency), crossOriginIsolated = ${isolated}. ${how} `
      + 'The default is 1 because an embedding page cannot count on the COOP/COEP headers that shared-memory threads need; this option needs neither: it copies the inputs to each worker (no SharedArrayBuffer).'
      + (st.timing.input === 'qkv' ? '' : ' (The lesson’s loop always runs in one instance.)');
    this.workersNote.dataset.cores = String(cores);
    this.workersNote.dataset.isolated = String(isolated);
  }

  private save(): void {
    const sw = this.sweep;
    if (!sw) return;
    const fits = this.fits();
    const data = {
      what: 'Attention Playground timing lab: milliseconds per call of the wasm core',
      userAgent: navigator.userAgent,
      hardwareConcurrency: navigator.hardwareConcurrency,
      crossOriginIsolated: typeof crossOriginIsolated !== 'undefined' && crossOriginIsolated,
      coreBuild: this.coreBuild.dataset.build,
      status: this.phase,
      params: sw.params,
      fitFloorMs: FIT_FLOOR_MS,
      exponents: Object.fromEntries(Object.entries(fits).map(([k, f]) => [k, { exponent: f.exponent, ts: f.ts }])),
      notes: sw.notes.map((n) => n.text),
      points: sw.points,
    };
    download('attention-timing.json', JSON.stringify(data, null, 2), 'application/json');
  }

  private setRunning(on: boolean): void {
    for (const c of [this.tstart, this.tend, this.mode, this.dk, this.heads, this.ker, this.causal]) c.disabled = on;
    this.dm.disabled = on || this.ctx?.state.timing.input !== 'proj';
    this.workers.disabled = on || this.ctx?.state.timing.input !== 'qkv';
    this.runBtn.disabled = on;
    this.cancelBtn.disabled = !on;
    this.saveBtn.disabled = on || !this.sweep || this.sweep.points.length === 0;
  }

  private start(): void {
    const st = this.ctx?.state;
    if (!st) return;
    const params = paramsOf(st);
    this.sweep = { params, points: [], notes: [], stops: new Map(), heapBytes: NaN, startedAt: performance.now() };
    this.phase = 'running';
    this.statusText = 'Loading a fresh WebAssembly instance and warming it up…';
    this.progress.value = 0;
    this.setRunning(true);
    this.draw();
    this.client.run(params, TIME_BUDGET_MS, (m) => this.onMessage(m));
  }

  private cancel(): void {
    if (!this.client.cancel()) return;
    this.phase = 'cancelled';
    const n = this.sweep?.points.length ?? 0;
    this.statusText = `Cancelled. The worker was stopped; ${n} completed point${n === 1 ? '' : 's'} kept.`;
    this.setRunning(false);
    this.draw();
    this.ctx?.announce('Timing sweep cancelled');
  }

  private onMessage(m: TimingMessage): void {
    const sw = this.sweep;
    if (!sw) return;
    switch (m.kind) {
      case 'ready':
        sw.heapBytes = m.heapBytes;
        this.statusText = `Warmed up in ${formatMs(m.warmupMs)}; timing…`;
        break;
      case 'progress':
        this.progress.value = m.fraction;
        this.statusText = m.text;
        this.drawStatus();
        return;
      case 'point':
        sw.points.push(m.point);
        sw.heapBytes = m.point.heapBytes;
        break;
      case 'skip':
        sw.notes.push({ kind: 'skip', text: skipText(m.skip, m.kernel) });
        sw.stops.set(m.kernel, { t: m.skip.t, why: m.skip.kind === 'memory' ? 'skipped: over the memory cap' : 'skipped: over the time budget' });
        break;
      case 'refused':
        sw.notes.push({ kind: 'refused', text: `${m.kernel}: the core refused T = ${m.t}: ${m.message}${m.field ? ` (field: ${m.field})` : ''}` });
        sw.stops.set(m.kernel, { t: m.t, why: m.field === 'memory' ? 'refused by the core (memory)' : 'refused by the core' });
        break;
      case 'done': {
        sw.heapBytes = m.heapBytes;
        this.phase = 'done';
        this.progress.value = 1;
        const secs = ((performance.now() - sw.startedAt) / 1000).toFixed(1);
        const f = this.fits();
        const main = f.naive ?? f.tiled;
        this.statusText = `Done in ${secs} s.${main ? ` Fitted exponent ${main.exponent.toFixed(2)} (${f.naive ? 'naive' : 'tiled'}).` : ''}`;
        this.setRunning(false);
        this.ctx?.announce(this.statusText);
        break;
      }
      case 'fatal':
        this.phase = 'error';
        this.statusText = m.message;
        this.setRunning(false);
        break;
    }
    this.draw();
  }

  private fits(): Partial<Record<TimingKernel, Fit>> {
    const out: Partial<Record<TimingKernel, Fit>> = {};
    for (const k of this.sweep?.params.kernels ?? []) {
      const f = fitExponent(this.pointsOf(k).map((p) => ({ t: p.t, ms: p.stats.median })));
      if (f) out[k] = f;
    }
    return out;
  }

  private pointsOf(k: TimingKernel): TimingPoint[] {
    return (this.sweep?.points ?? []).filter((p) => p.kernel === k);
  }

  // ---------- drawing ----------
  private draw(): void {
    this.drawStatus();
    const sw = this.sweep;
    this.caption.textContent = sw ? `Sweep: ${describe(sw.params)}.` : '';
    this.caption.hidden = !sw;
    const pp = sw?.params ?? (this.ctx ? paramsOf(this.ctx.state) : null);
    this.projNote.hidden = pp?.mode !== 'proj';
    if (pp?.mode === 'proj') {
      this.projNote.textContent = `This is lesson 2’s loop: every call also multiplies X (T × ${pp.dModel}) by Wq, Wk and Wv and the result by Wo — about 4·T·${pp.dModel}·${pp.heads * pp.dk} multiply-adds, linear in T. While T is small next to d_model those projections take most of the time and a doubling costs little more than ×2; the ratio climbs toward ×4 as the T × T scores take over. Extend the sweep to larger T to watch it happen.`;
    }
    clear(this.notes);
    for (const n of sw?.notes ?? []) this.notes.append(el('li', { class: `note-${n.kind}`, text: n.text }));
    this.notes.hidden = !sw || sw.notes.length === 0;
    this.drawFit();
    this.drawChart();
    this.drawMemory();
    this.drawTable();
  }

  private drawStatus(): void {
    this.status.textContent = this.statusText;
    this.status.dataset.state = this.phase;
  }

  private drawFit(): void {
    clear(this.fit);
    const f = this.fits();
    const kernels = this.sweep?.params.kernels ?? [];
    const main = f.naive ? 'naive' : f.tiled ? 'tiled' : null;
    const headline = el('p', { class: 'fit-main', 'data-testid': 'timing-exponent' });
    if (main) {
      headline.dataset.value = f[main]!.exponent.toFixed(3);
      headline.dataset.kernel = main;
    }
    headline.append(el('span', { class: 'fit-label', text: 'Fitted exponent p in time ∝ Tᵖ:' }));
    if (kernels.length === 0 || Object.keys(f).length === 0) headline.append(el('strong', { text: 'p = — (needs two points above 0.5 ms)' }));
    for (const k of kernels) {
      const fk = f[k];
      if (!fk) continue;
      headline.append(el('span', { class: `fit-k k-${k}`, 'data-testid': `timing-exponent-${k}`, 'data-value': fk.exponent.toFixed(3) },
        el('span', { class: 'sw-line', 'aria-hidden': 'true' }), `${k} `, el('strong', { text: `p = ${fk.exponent.toFixed(2)}` })));
    }
    this.fit.append(headline, el('p', { class: 'muted small', text: `Least-squares fit of log t against log T over the points whose median is at least ${FIT_FLOOR_MS} ms (below that, the timer's resolution and fixed per-call costs flatten the curve). Quadratic cost means p ≈ 2.` }));
  }

  private drawChart(): void {
    clear(this.chart);
    const sw = this.sweep;
    const planned = sw ? sweepTs(sw.params.tStart, sw.params.tEnd) : sweepTs(this.ctx?.state.timing.firstT ?? 64, this.ctx?.state.timing.lastT ?? 4096);
    const f = this.fits();
    const series = (['naive', 'tiled'] as const).map((k) => ({
      label: k, cls: `k-${k}`, marker: k === 'naive' ? 'circle' as const : 'square' as const, labelDy: k === 'naive' ? -8 : 18, fit: f[k] ?? null,
      points: this.pointsOf(k).map((p) => ({ t: p.t, median: p.stats.median, min: p.stats.min, max: p.stats.max, title: `${k}, T = ${p.t}: median ${formatMs(p.stats.median)} (min ${formatMs(p.stats.min)}, max ${formatMs(p.stats.max)}, ${p.stats.n} samples)` })),
    }));
    // Reference: ×4 per doubling through the first fitted point of the first kernel with a fit;
    // without a fit yet, through the last point of the first kernel.
    const withFit = series.findIndex((se) => se.fit);
    const ref = withFit >= 0 ? withFit : series.findIndex((se) => se.points.length > 0);
    this.chart.append(logLogChart({
      ts: planned, series, testid: 'timing-chart', clipId: 'timing-clip', ariaLabel: this.chartLabel(),
      xLabel: 'sequence length T (log scale, ×2 per step)', yLabel: 'time per call, ms (log scale)',
      empty: this.phase === 'running' ? 'Measuring…' : 'Press “Run sweep” to measure',
      refs: ref >= 0 ? [{ slope: 2, label: '×4 per doubling', series: ref }] : [],
    }));
  }

  private chartLabel(): string {
    const f = this.fits();
    const parts = (['naive', 'tiled'] as const).filter((k) => f[k]).map((k) => `${k} kernel slope ${f[k]!.exponent.toFixed(2)}`);
    return `Log–log chart of time per call against T${parts.length ? ': ' + parts.join(', ') : ''}; a dashed line shows ×4 per doubling (slope 2).`;
  }

  /** The core's estimates for the memory panel before and during a sweep (asked of the compute
   *  Worker, which has a core; this view has none). Keyed by the shape they were asked for. */
  private memTable: { key: string; table: MemoryTable } | null = null;
  private memAsked = '';

  private coreEstimates(p: Pick<SweepParams, 'heads' | 'dk' | 'dModel' | 'mode'>, t: number): { naive: number; tiled: number; tiledScratch: number } | null {
    const key = JSON.stringify([p.heads, p.dk, p.dModel, p.mode, t]);
    if (this.memTable?.key === key) {
      const r = this.memTable.table.rows[0];
      return { naive: r.naive, tiled: r.tiled, tiledScratch: this.memTable.table.tiledScratch };
    }
    if (this.memAsked !== key && this.ctx) {
      this.memAsked = key;
      this.ctx.client.memory({ heads: p.heads, dk: p.dk, dModel: p.dModel, mode: p.mode, ts: [t] }).then((table) => {
        this.memTable = { key, table };
        if (this.memAsked === key) this.drawMemory();
      }, () => { /* the compute worker reports its own failures */ });
    }
    return null;
  }

  private drawMemory(): void {
    clear(this.memory);
    const sw = this.sweep;
    const st = this.ctx?.state;
    const p = sw?.params ?? (st ? paramsOf(st) : null);
    if (!p) return;
    const measured = sw?.points.map((x) => x.t) ?? [];
    const t = measured.length ? Math.max(...measured) : p.tEnd;
    const est = this.coreEstimates(p, t);
    const last = (k: TimingKernel) => this.pointsOf(k).filter((x) => x.t <= t).at(-1) ?? null;
    const split = (p.workers ?? 1) > 1;
    const rows: { label: string; bytes: number; cls: string; note: string; id: string }[] = [];
    for (const k of ['naive', 'tiled'] as const) {
      const e = est?.[k] ?? NaN;
      const stopped = sw?.stops.has(k) && t >= sw.stops.get(k)!.t;
      rows.push({
        label: `${k}: the core’s estimate`, bytes: e, cls: `k-${k}`, id: `mem-${k}-estimate`,
        note: (k === 'naive'
          ? `what the core counts against its cap: the ${p.heads} × ${t}² weights plus Q, K, V and the outputs — quadruples per doubling`
          : `what the core counts: Q, K, V, the outputs and ${est ? formatBytes(est.tiledScratch) : '…'} of tile scratch at any T — doubles per doubling`)
          + (stopped ? ` (the ${k} kernel stopped before this T)` : ''),
      });
      const pt = last(k);
      if (pt && !split) {
        rows.push({
          label: `${k}: measured`, bytes: pt.heapBytes, cls: `k-${k} measured`, id: `mem-${k}-measured`,
          note: `the WebAssembly memory of the instance that ran only the ${k} kernel, after T = ${pt.t}: ${pt.heapGrowth > 0 ? `it grew by ${formatBytes(pt.heapGrowth)}` : 'it never had to grow'} from the ${formatBytes(pt.heapBytes - pt.heapGrowth)} it started with (memory grows in 64 KiB pages and never shrinks, so this is the peak so far, allocator slack and the copied inputs included)`,
        });
      }
    }
    const max = Math.max(...rows.map((r) => (Number.isFinite(r.bytes) ? r.bytes : 0)), 1);
    const bar = (r: (typeof rows)[number]) => {
      const b = el('span', { class: `mbar ${r.cls}` });
      b.style.width = `${Math.max(0.4, ((Number.isFinite(r.bytes) ? r.bytes : 0) / max) * 100).toFixed(2)}%`;
      return el('div', { class: 'mrow', 'data-testid': r.id, 'data-bytes': String(r.bytes) },
        el('div', { class: 'mlabel' }, el('span', { text: r.label }), el('strong', { text: formatBytes(r.bytes) })),
        el('div', { class: 'mtrack' }, b),
        el('div', { class: 'mnote muted', text: r.note }));
    };
    this.memory.append(
      el('h4', { text: `Memory at T = ${t}${measured.length ? '' : ' (the core’s estimate; measured figures appear when a sweep runs)'}` }),
      ...rows.map(bar),
      split
        ? el('p', { class: 'muted small', text: 'With several workers each call runs in the part Workers’ own instances, so no per-kernel memory is measured here.' })
        : el('p', { class: 'muted small', text: 'Each kernel runs in its own WebAssembly instance in the timing Worker, so its memory is measured apart from the other’s.' }),
    );
  }

  private drawTable(): void {
    clear(this.table);
    const sw = this.sweep;
    const kernels = sw?.params.kernels ?? kernelsOf(this.ctx?.state.timing.kernels ?? 'both');
    const head1 = el('tr', {}, el('th', { scope: 'col', rowspan: 2, text: 'T' }));
    const head2 = el('tr');
    for (const k of kernels) {
      head1.append(el('th', { scope: 'colgroup', colspan: 2, class: `k-${k}`, text: KERNEL_LABEL[k] }));
      head2.append(el('th', { scope: 'col', text: 'median, min – max' }), el('th', { scope: 'col', text: '× prev. T' }));
    }
    // Memory columns carry class "mem": a phone hides them (the memory panel above has the figures).
    for (const k of kernels) head1.append(el('th', { scope: 'col', rowspan: 2, class: 'mem', text: `${k} memory: core estimate · its instance’s heap` }));
    this.table.append(el('caption', { text: 'Time per call (median of the repeats, after warm-up) for each T' }), el('thead', {}, head1, head2));
    const tb = el('tbody');
    const ts = [...new Set((sw?.points ?? []).map((p) => p.t))].sort((a, b) => a - b);
    for (const t of ts) {
      const tr = el('tr', { 'data-testid': 'timing-row', 'data-t': t }, el('th', { scope: 'row', text: String(t) }));
      const mem: HTMLElement[] = [];
      for (const k of kernels) {
        const ps = this.pointsOf(k);
        const i = ps.findIndex((p) => p.t === t);
        const p = ps[i];
        if (!p) {
          const stop = sw!.stops.get(k);
          tr.append(el('td', { colspan: 2, class: 'muted stopped', text: stop && t >= stop.t ? stop.why : '—' }));
          mem.push(el('td', { class: 'num muted mem', text: '—' }));
          continue;
        }
        const split = (sw!.params.workers ?? 1) > 1;
        mem.push(el('td', { class: 'num mem', 'data-mem-kernel': k, 'data-estimate': String(p.estimateBytes), 'data-measured': String(p.heapBytes), text: `${formatBytes(p.estimateBytes)} · ${split ? 'n/a' : formatBytes(p.heapBytes)}` }));
        const prev = ps[i - 1];
        const ratio = prev && prev.t * 2 === t ? p.stats.median / prev.stats.median : NaN;
        tr.append(
          el('td', { class: 'num', 'data-kernel': k, 'data-ms': p.stats.median.toFixed(4), title: `${p.stats.n} samples${p.batch > 1 ? `, each the mean of ${p.batch} calls` : ''}; interquartile range ${formatMs(p.stats.q1)} – ${formatMs(p.stats.q3)}` },
            el('span', { class: 'med', text: formatMs(p.stats.median) }),
            el('span', { class: 'spread', text: rangeText(p.stats.min, p.stats.max) })),
          el('td', { class: 'num ratio', text: Number.isFinite(ratio) ? `×${ratio.toFixed(1)}` : '' }),
        );
      }
      tr.append(...mem);
      tb.append(tr);
    }
    if (ts.length === 0) tb.append(el('tr', {}, el('td', { colspan: 1 + kernels.length * 3, class: 'muted', text: 'No measurements yet.' })));
    this.table.append(tb);
  }

  private explainer(): HTMLElement {
    const block = (title: string, ...ps: string[]) => el('section', {}, el('h4', { text: title }), ...ps.map((t) => el('p', { text: t })));
    return el('div', { class: 'timing-explain' },
      block('What is measured',
        'One call of the WebAssembly core per sample: scores Q Kᵀ · 1/√d_k, the mask, the softmax and weights · V, on random inputs made once per T. It runs in its own Web Worker, so the page stays responsive and the heatmaps keep their own worker.',
        'First come warm-up calls: the browser starts WebAssembly in a quick baseline compiler and swaps in optimised code after a while; a call that is already running is never upgraded. Each point is then the median of several repeats, with the fastest and slowest shown as a bar. Very short calls are timed in batches and divided, because the browser’s clock ticks only every 0.1 ms or so. The naive time includes copying the T × T weights back to JavaScript, as the heatmaps need them.'),
      block('Why ×4 per doubling',
        'Q Kᵀ has T × T entries and each costs d_k multiply-adds; weights · V costs as much again. Double T and there are 2T × 2T = 4T² entries: four times the work. Time ∝ T² is a straight line of slope 2 on a log–log chart — the dashed line. Small T sits above it: fixed costs per call, and copying Q, K and V, grow only linearly and matter only while T² is small.'),
      block('What the tiled kernel changes — and what it does not',
        'The tiled kernel is FlashAttention’s idea: it never builds the T × T matrix. It takes 64 queries at a time and walks the keys in tiles of 32, keeping a running maximum and sum for each query row and rescaling them when a new tile raises the maximum. Memory becomes linear in T: inputs, output and one small tile.',
        'The arithmetic is still quadratic, so its slope is still about 2. It is exact, not an approximation: its output equals the naive kernel’s up to floating-point rounding. On a GPU the saving is memory traffic, which is usually what costs time. Here, compare the two slopes (both about 2) and the memory panel: quadratic against linear.'),
    );
  }
}

/** "1.2 – 3.4 ms" (one unit when both ends share it), else "980 ms – 1.02 s". */
function rangeText(a: number, b: number): string {
  const x = formatMs(a), y = formatMs(b);
  const ux = x.split(' ')[1], uy = y.split(' ')[1];
  return ux === uy ? `${x.split(' ')[0]} – ${y}` : `${x} – ${y}`;
}

export const timingView: ViewFactory<TimingContext, 'timing', false> = { id: 'timing', label: 'Timing lab', needsResult: false, create: () => new TimingView() };
