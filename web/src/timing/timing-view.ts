// Timing lab: lesson 2's "Now watch the cost", measured in this browser. A sweep doubles T, times
// the naive and the tiled kernel in a separate Worker, and shows a table, a log–log chart with the
// fitted exponent and the "×4 per doubling" line, and what each kernel needs in memory.
// It needs no attention result (needsResult: false); its settings live in the URL (t* fields).
import { el, clear } from '../ui/dom';
import { download } from '../shared/export';
import {
  TIMING_LIMITS as L,
  TIMING_WORKERS,
  type TimingSlice as State,
  type TimingKernels,
  type TimingInput,
  type TimingState,
} from './state';
import type { CoreBuildInfo } from '../wasm/core-build';
import { TimingClient } from './client';
import { coreBuildLabel } from '../wasm/core-build';
import {
  FIT_FLOOR_MS,
  TIME_BUDGET_MS,
  kernelsOf,
  sweepTs,
  type MemoryParams,
  type MemoryTable,
  type SweepParams,
} from '../measure/model';
import type { LabContext, View, ViewFactory } from '../ui/view';
import { TimingSession, type TimingChange } from './session';
import { ResultsPanel } from './results-panel';
import { MemoryPanel } from './memory-panel';
import { describe, explainer, projText } from './timing-text';
const POW2 = sweepTs(L.timingMinT, L.timingMaxT);

/** What the page gives the lab: its settings, and the compute Worker's answers about the core
 *  (which build runs; the memory each kernel needs), asked of the page's client. */
export interface TimingContext extends LabContext<State, { timing?: Partial<TimingState> }> {
  client: { about(): Promise<CoreBuildInfo>; memory(params: MemoryParams): Promise<MemoryTable> };
}

export function paramsOf(st: State): SweepParams {
  // The worker split applies to core.attention ('qkv'); the lesson's loop runs in one instance.
  return {
    tStart: st.timing.firstT,
    tEnd: st.timing.lastT,
    dModel: st.timing.dModel,
    dk: st.timing.dK,
    heads: st.timing.heads,
    kernels: kernelsOf(st.timing.kernels),
    causal: st.timing.causal,
    mode: st.timing.input,
    workers: st.timing.input === 'qkv' ? st.timing.workers : 1,
  };
}

class TimingView implements View<TimingContext> {
  readonly id = 'timing';
  readonly root: HTMLElement;
  private ctx: TimingContext | null = null;
  private session = new TimingSession(new TimingClient(), (what) => this.onChange(what));
  private results = new ResultsPanel(this.session);
  private memory = new MemoryPanel(this.session, () => (this.ctx ? (p) => this.ctx!.client.memory(p) : null));

  // Controls
  private tstart = el('select', { 'data-testid': 'timing-tstart', 'aria-label': 'First T' });
  private tend = el('select', { 'data-testid': 'timing-tend', 'aria-label': 'Last T' });
  private mode = el(
    'select',
    { 'data-testid': 'timing-mode' },
    el('option', { value: 'qkv', text: 'random Q, K, V → core.attention' }),
    el('option', { value: 'proj', text: 'lesson 2’s loop: X → Wq, Wk, Wv → attention' }),
  );
  private dm = el('input', {
    type: 'number',
    min: 1,
    max: L.timingMaxDModel,
    step: 1,
    inputmode: 'numeric',
    'data-testid': 'timing-dm',
  });
  private dk = el('input', {
    type: 'number',
    min: 1,
    max: L.timingMaxDk,
    step: 1,
    inputmode: 'numeric',
    'data-testid': 'timing-dk',
  });
  private heads = el('input', {
    type: 'number',
    min: 1,
    max: L.timingMaxHeads,
    step: 1,
    inputmode: 'numeric',
    'data-testid': 'timing-heads',
  });
  private ker = el(
    'select',
    { 'data-testid': 'timing-kernels' },
    el('option', { value: 'both', text: 'naive and tiled' }),
    el('option', { value: 'naive', text: 'naive only' }),
    el('option', { value: 'tiled', text: 'tiled only' }),
    el('option', { value: 'linear', text: 'tiled softmax and linear attention' }),
  );
  private causal = el('input', { type: 'checkbox', 'data-testid': 'timing-causal' });
  private workers = el(
    'select',
    { 'data-testid': 'timing-workers' },
    ...TIMING_WORKERS.map((n) => el('option', { value: n, text: n === 1 ? '1 (default)' : String(n) })),
  );
  private workersNote = el('p', { class: 'timing-workers-note muted small', 'data-testid': 'timing-workers-note' });
  /** Which build of the core runs here, as the compute Worker's core reports it. */
  private coreBuild = el('span', {
    class: 'timing-core-build muted small',
    'data-testid': 'core-build',
    'data-build': 'unknown',
  });
  /** The same in a student's words first; the build's name under "details". */
  private coreBuildPlain = el('span', { 'data-testid': 'core-build-plain' });
  private coreBuildAsked = false;
  private runBtn = el('button', {
    type: 'button',
    class: 'btn primary',
    'data-testid': 'timing-run',
    text: 'Run sweep',
  });
  private cancelBtn = el('button', {
    type: 'button',
    class: 'btn',
    'data-testid': 'timing-cancel',
    text: 'Cancel',
    disabled: true,
  });
  private saveBtn = el('button', {
    type: 'button',
    class: 'btn small',
    'data-testid': 'timing-export',
    text: 'Download JSON',
    disabled: true,
  });

  // Output
  private progress = el('progress', {
    max: 1,
    value: 0,
    'data-testid': 'timing-progress',
    'aria-label': 'Sweep progress',
  });
  private status = el('p', {
    class: 'timing-status',
    'data-testid': 'timing-status',
    'data-state': 'idle',
    'aria-live': 'polite',
  });
  private caption = el('p', { class: 'timing-caption muted' });
  private notes = el('ul', { class: 'timing-notes', 'data-testid': 'timing-notes' });
  private projNote = el('p', { class: 'timing-proj-note', 'data-testid': 'timing-proj-note' });

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
    for (const [input, key] of [
      [this.dm, 'dModel'],
      [this.dk, 'dK'],
      [this.heads, 'heads'],
    ] as const) {
      input.addEventListener('change', () => {
        const v = input.valueAsNumber;
        update({ [key]: Number.isNaN(v) ? undefined : v });
        if (this.ctx) this.syncControls(this.ctx.state);
      });
    }
    this.runBtn.addEventListener('click', () => this.start());
    this.cancelBtn.addEventListener('click', () => this.cancel());
    this.saveBtn.addEventListener('click', () => this.save());

    const field = (label: string, input: HTMLElement, cls = '') =>
      el('label', { class: `tfield ${cls}` }, el('span', { text: label }), input);
    const controls = el(
      'div',
      { class: 'timing-controls', role: 'group', 'aria-label': 'Sweep settings' },
      el(
        'div',
        { class: 'trow' },
        field('T from', this.tstart),
        field('to', this.tend),
        field('Input', this.mode, 'wide'),
        field('d_model', this.dm),
        field('d_k', this.dk),
        field('heads', this.heads),
        field('Kernels', this.ker),
        el('label', { class: 'tfield check' }, this.causal, el('span', { text: 'causal mask' })),
        field('Workers per call', this.workers),
      ),
      this.workersNote,
      el(
        'div',
        { class: 'muted small' },
        this.coreBuildPlain,
        ' ',
        el('details', { class: 'check-details' }, el('summary', { text: 'details' }), ' ', this.coreBuild),
      ),
      el(
        'div',
        { class: 'trow actions' },
        this.runBtn,
        this.cancelBtn,
        el('div', { class: 'tprogress' }, this.progress, this.status),
      ),
    );

    this.root = el(
      'div',
      { class: 'view-timing', 'data-testid': 'timing-view' },
      el(
        'div',
        { class: 'timing-head' },
        el('h3', { class: 'panel-title', text: 'Now watch the cost: time attention as T doubles' }),
        el('p', {
          class: 'lead',
          text: 'Each doubling of the sequence length T roughly quadruples the time: the score matrix Q Kᵀ has T × T entries. Run the sweep and measure it in this browser.',
        }),
      ),
      controls,
      this.caption,
      this.projNote,
      this.notes,
      el(
        'div',
        { class: 'timing-results' },
        el('div', { class: 'timing-plot' }, this.results.fit, this.results.chart),
        this.memory.root,
      ),
      el('div', { class: 'table-scroll' }, this.results.table),
      el(
        'div',
        { class: 'timing-save' },
        this.saveBtn,
        el('span', {
          class: 'muted small',
          text: 'Every sample of the sweep, its settings and this browser, as JSON.',
        }),
      ),
      explainer(),
    );
    this.draw();
  }

  heatmaps() {
    return [];
  }

  render(ctx: TimingContext): void {
    this.ctx = ctx;
    this.showCoreBuild(ctx);
    this.syncControls(ctx.state);
    if (!this.session.sweep) this.draw();
  }

  private syncControls(st: State): void {
    this.tstart.value = String(st.timing.firstT);
    this.tend.value = String(st.timing.lastT);
    this.mode.value = st.timing.input;
    this.ker.value = st.timing.kernels;
    this.causal.checked = st.timing.causal;
    this.workers.value = String(st.timing.workers);
    this.workers.disabled = st.timing.input !== 'qkv' || this.session.phase === 'running';
    this.workers.title =
      st.timing.input === 'qkv' ? '' : 'The lesson’s loop runs in one instance; the split applies to core.attention';
    this.drawWorkersNote(st);
    if (document.activeElement !== this.dm) this.dm.value = String(st.timing.dModel);
    if (document.activeElement !== this.dk) this.dk.value = String(st.timing.dK);
    if (document.activeElement !== this.heads) this.heads.value = String(st.timing.heads);
    this.dm.disabled = st.timing.input !== 'proj' || this.session.phase === 'running';
    this.dm.title = st.timing.input === 'proj' ? '' : 'Only the lesson’s loop projects X of width d_model';
  }

  private showCoreBuild(ctx: TimingContext): void {
    if (this.coreBuildAsked) return;
    this.coreBuildAsked = true;
    this.coreBuild.textContent = 'core: …';
    ctx.client.about().then(
      (a) => {
        this.coreBuild.dataset.build = a.relaxedSimd ? 'relaxed' : 'simd128';
        this.coreBuildPlain.textContent = a.relaxedSimd
          ? 'This browser runs the faster build of the core: it does each multiply and add in one step, so the last digits may differ from another browser’s.'
          : 'This browser runs the standard build of the core (the same digits in every browser).';
        this.coreBuild.textContent =
          `core: ${coreBuildLabel(a.relaxedSimd)}` +
          (a.relaxedSimd
            ? ' — this browser validates WebAssembly relaxed SIMD, so the forward kernels fuse each multiply-add (results may differ from SIMD128 in the last bits); training stays SIMD128 so a run replays exactly.'
            : a.prefer === 'simd'
              ? ' — asked for with ?core=simd128.'
              : ' — this browser does not validate WebAssembly relaxed SIMD (no fused multiply-add), so the SIMD128 build runs.');
      },
      (e: Error) => {
        this.coreBuildAsked = false;
        this.coreBuild.textContent = `core: unknown (${e.message})`;
      },
    );
  }

  private drawWorkersNote(st: State): void {
    const cores = typeof navigator !== 'undefined' ? navigator.hardwareConcurrency : NaN;
    const isolated = typeof crossOriginIsolated !== 'undefined' && crossOriginIsolated;
    const w = st.timing.input === 'qkv' ? st.timing.workers : 1;
    const how =
      w === 1
        ? 'Each call runs in one WebAssembly instance (one core).'
        : `Each call is split across ${w} module Workers, each with its own WebAssembly instance: ${st.timing.heads >= w ? 'whole heads per worker' : 'blocks of query rows per worker (causal blocks balanced by area, each given only the keys it can see)'}; the time is the wall clock from posting the parts to merging their results.`;
    this.workersNote.textContent =
      `This browser: ${Number.isFinite(cores) ? cores : 'unknown'} logical cores (navigator.hardwareConcurrency), crossOriginIsolated = ${isolated}. ${how} ` +
      'The default is 1 because an embedding page cannot count on the COOP/COEP headers that shared-memory threads need; this option needs neither: it copies the inputs to each worker (no SharedArrayBuffer).' +
      (st.timing.input === 'qkv' ? '' : ' (The lesson’s loop always runs in one instance.)');
    this.workersNote.dataset.cores = String(cores);
    this.workersNote.dataset.isolated = String(isolated);
  }

  private save(): void {
    const sw = this.session.sweep;
    if (!sw) return;
    const fits = this.session.fits();
    const data = {
      what: 'Attention Playground timing lab: milliseconds per call of the wasm core',
      userAgent: navigator.userAgent,
      hardwareConcurrency: navigator.hardwareConcurrency,
      crossOriginIsolated: typeof crossOriginIsolated !== 'undefined' && crossOriginIsolated,
      coreBuild: this.coreBuild.dataset.build,
      status: this.session.phase,
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
    this.saveBtn.disabled = on || !this.session.sweep || this.session.sweep.points.length === 0;
  }

  private start(): void {
    const st = this.ctx?.state;
    if (!st) return;
    this.setRunning(true);
    this.session.start(paramsOf(st), TIME_BUDGET_MS);
  }

  private cancel(): void {
    if (this.session.cancel()) this.ctx?.announce('Timing sweep cancelled');
  }

  private onChange(what: TimingChange): void {
    const s = this.session;
    if (what === 'status') return this.drawStatus();
    if (s.phase !== 'running') this.setRunning(false);
    if (s.phase === 'done') this.ctx?.announce(s.statusText);
    this.draw();
  }

  // ---------- drawing ----------
  private draw(): void {
    this.drawStatus();
    const sw = this.session.sweep;
    this.caption.textContent = sw ? `Sweep: ${describe(sw.params)}.` : '';
    this.caption.hidden = !sw;
    const pp = sw?.params ?? (this.ctx ? paramsOf(this.ctx.state) : null);
    this.projNote.hidden = pp?.mode !== 'proj';
    if (pp?.mode === 'proj') {
      this.projNote.textContent = projText(pp, this.session);
    }
    clear(this.notes);
    for (const n of sw?.notes ?? []) this.notes.append(el('li', { class: `note-${n.kind}`, text: n.text }));
    this.notes.hidden = !sw || sw.notes.length === 0;
    this.results.draw(this.ctx?.state ?? null);
    this.memory.draw(pp);
  }

  private drawStatus(): void {
    this.status.textContent = this.session.statusText;
    this.status.dataset.state = this.session.phase;
    this.progress.value = this.session.fraction;
  }
}

export const timingView: ViewFactory<TimingContext, 'timing', false> = {
  id: 'timing',
  label: 'Timing lab',
  needsResult: false,
  create: () => new TimingView(),
};
