// The Decode tab: autoregressive decoding with a K/V cache you can watch (step by step: every
// head's new attention row over the cached keys, the K and V caches growing by a column per
// step, the copy the induction head makes) and time (one step with and without the cache as T
// doubles, on a wider random model). The model is the Train tab's when it has published one,
// else the default induction model (config A) trained in this tab's Worker first.
import './decode.css';
import { el, clear, fmt, syncInput, commitInput } from '../ui/dom';
import { download } from '../shared/export';
import { getTrainedModel, onTrainedModel } from '../shared/trained-model';
import { logLogChart } from '../ui/loglog-chart';
import { formatBytes, formatMs, sweepTs } from '../measure/model';
import type { LabContext, View, ViewFactory } from '../ui/view';
import { DecodeClient } from './client';
import type { DecodeMessage, StepData, Trajectory } from './protocol';
import { drawMatrix } from './matrix';
import {
  cacheBytesFormula, dHead, exportCsv, fitOf, kvVariants, stepFlops, timingRows, totalMs,
  type DecodeExport, type DecodeMode, type DecodePoint, type DecodeShape,
} from './model';
import { decodeStateOf, decodePatch, type DecodePatch } from './bridge';
import { DECODE_LIMITS, type DecodeSlice, type DecodeState } from './state';

/** What the page gives the Decode tab: its settings, and a way to change them. */
export type DecodeContext = LabContext<DecodeSlice, DecodePatch>;

const TIMING_SHAPE = { dModel: 256, heads: 8, layers: 2 };
const POW2 = [64, 128, 256, 512, 1024, 2048, 4096];
/** A point predicted to take longer (warm-up + repeats) is skipped: one recomputed step at
 *  T = 4096 takes 1.5–3 s here, so the whole recompute column fits. */
const BUDGET_MS = 60_000;

interface Sweep {
  tStart: number;
  tEnd: number;
  points: DecodePoint[];
  notes: string[];
  memory: { t: number; rows: { name: string; kvHeads: number; bytes: number }[]; heapBytes: number } | null;
  heapBytes: number;
  phase: 'running' | 'done' | 'cancelled' | 'failed';
}

class DecodeView implements View<DecodeContext> {
  readonly id = 'decode';
  readonly root: HTMLElement;
  private ctx: DecodeContext | null = null;
  private ds: DecodeState | null = null;
  private client = new DecodeClient((m) => this.onStepMessage(m));
  private model: Extract<DecodeMessage, { kind: 'model-ready' }> | null = null;
  private modelPending = false;
  private modelStale = false;
  private traj: Trajectory | null = null;
  private trajKey = '';
  private requested = '';
  private sweep: Sweep | null = null;
  private playTimer = 0;

  // model + stepping
  private modelLine = el('p', { class: 'decode-model', 'data-testid': 'decode-model', 'aria-live': 'polite' });
  private trainProgress = el('progress', { max: 1, value: 0, 'data-testid': 'decode-train-progress', 'aria-label': 'Training progress' });
  private trainCancel = el('button', { type: 'button', class: 'btn small', 'data-testid': 'decode-train-cancel', text: 'Cancel' });
  private useTrained = el('button', { type: 'button', class: 'btn small', 'data-testid': 'decode-use-trained', text: 'Use the Train tab’s newer model', hidden: true });
  private retrain = el('button', { type: 'button', class: 'btn small', 'data-testid': 'decode-retry', text: 'Train the default model', hidden: true });
  private seqInput = el('input', { type: 'number', min: 0, max: DECODE_LIMITS.maxSeq, step: 1, inputmode: 'numeric', 'data-testid': 'decode-seq', 'aria-label': 'Sequence number' });
  private nextSeq = el('button', { type: 'button', class: 'btn small', 'data-testid': 'decode-next-seq', text: 'Another sequence' });
  private keepInput = el('input', { type: 'number', min: DECODE_LIMITS.minKeep, max: DECODE_LIMITS.maxKeep, step: 1, inputmode: 'numeric', 'data-testid': 'decode-keep', 'aria-label': 'Tokens of the second copy in the prompt' });
  private cacheBox = el('input', { type: 'checkbox', 'data-testid': 'decode-cache' });
  private firstBtn = el('button', { type: 'button', class: 'btn small', 'data-testid': 'decode-first', text: '◀◀', 'aria-label': 'First token' });
  private backBtn = el('button', { type: 'button', class: 'btn small', 'data-testid': 'decode-back', text: '◀ Back', 'aria-label': 'One step back' });
  private stepBtn = el('button', { type: 'button', class: 'btn primary small', 'data-testid': 'decode-step', text: 'Step ▶', 'aria-label': 'Append one token' });
  private playBtn = el('button', { type: 'button', class: 'btn small', 'data-testid': 'decode-play', text: 'Play', 'aria-label': 'Play to the end' });
  private endBtn = el('button', { type: 'button', class: 'btn small', 'data-testid': 'decode-end', text: '▶▶', 'aria-label': 'Last token' });
  private slider = el('input', { type: 'range', min: 1, max: 32, step: 1, 'data-testid': 'decode-slider', 'aria-label': 'Tokens decoded' });
  private strip = el('ol', { class: 'decode-strip', 'data-testid': 'decode-tokens', 'aria-label': 'The sequence: prompt, then generated tokens' });
  private stepInfo = el('div', { class: 'decode-stepinfo', 'data-testid': 'decode-stepinfo', 'aria-live': 'polite' });
  private agree = el('p', { class: 'decode-agree', 'data-testid': 'decode-agree' });
  private flops = el('div', { class: 'decode-flops', 'data-testid': 'decode-flops' });
  private heads = el('div', { class: 'decode-heads', 'data-testid': 'decode-heads' });
  private caches = el('div', { class: 'decode-caches', 'data-testid': 'decode-caches' });
  private stepError = el('p', { class: 'banner error', role: 'alert', hidden: true, 'data-testid': 'decode-error' });

  // timing
  private tStart = el('select', { 'data-testid': 'decode-tstart', 'aria-label': 'First T' });
  private tEnd = el('select', { 'data-testid': 'decode-tend', 'aria-label': 'Last T' });
  private runBtn = el('button', { type: 'button', class: 'btn primary', 'data-testid': 'decode-run', text: 'Time decoding' });
  private cancelBtn = el('button', { type: 'button', class: 'btn', 'data-testid': 'decode-cancel', text: 'Cancel', disabled: true });
  private progress = el('progress', { max: 1, value: 0, 'data-testid': 'decode-progress', 'aria-label': 'Timing progress' });
  private status = el('p', { class: 'timing-status', 'data-testid': 'decode-status', 'data-state': 'idle', 'aria-live': 'polite', text: 'Press “Time decoding” to measure.' });
  private fit = el('div', { class: 'timing-fit decode-fit' });
  private chart = el('div', { class: 'timing-chart decode-chart' });
  private table = el('table', { class: 'timing-table', 'data-testid': 'decode-table' });
  private total = el('p', { class: 'decode-total', 'data-testid': 'decode-total' });
  private notes = el('ul', { class: 'timing-notes', 'data-testid': 'decode-notes', hidden: true });
  private memory = el('div', { class: 'decode-memory', 'data-testid': 'decode-memory' });

  constructor() {
    for (const t of POW2) {
      this.tStart.append(el('option', { value: t, text: String(t) }));
      this.tEnd.append(el('option', { value: t, text: String(t) }));
    }
    const upd = (p: Partial<DecodeState>) => this.ctx?.update(decodePatch(this.ctx.state, p));
    this.seqInput.addEventListener('change', () => { commitInput(this.seqInput); upd({ seq: this.seqInput.valueAsNumber, step: 0 }); });
    this.nextSeq.addEventListener('click', () => upd({ seq: ((this.ds?.seq ?? 0) + 1) % (DECODE_LIMITS.maxSeq + 1), step: 0 }));
    this.keepInput.addEventListener('change', () => { commitInput(this.keepInput); upd({ keep: this.keepInput.valueAsNumber, step: 0 }); });
    this.cacheBox.addEventListener('change', () => upd({ cache: this.cacheBox.checked }));
    this.tStart.addEventListener('change', () => upd({ tStart: Number(this.tStart.value) }));
    this.tEnd.addEventListener('change', () => upd({ tEnd: Number(this.tEnd.value) }));
    this.firstBtn.addEventListener('click', () => this.goto(1));
    this.backBtn.addEventListener('click', () => this.goto(this.current() - 1));
    this.stepBtn.addEventListener('click', () => this.goto(this.current() + 1));
    this.endBtn.addEventListener('click', () => this.goto(this.traj?.steps.length ?? 1));
    this.playBtn.addEventListener('click', () => this.togglePlay());
    this.slider.addEventListener('input', () => this.goto(this.slider.valueAsNumber));
    this.trainCancel.addEventListener('click', () => this.cancelTraining());
    this.retrain.addEventListener('click', () => this.loadModel(true));
    this.useTrained.addEventListener('click', () => this.loadModel(false));
    this.runBtn.addEventListener('click', () => this.startTiming());
    this.cancelBtn.addEventListener('click', () => this.cancelTiming());
    onTrainedModel(() => {
      this.modelStale = true;
      this.useTrained.hidden = false;
    });

    const field = (label: string, input: HTMLElement, cls = '') => el('label', { class: `tfield ${cls}` }, el('span', { text: label }), input);
    const stepper = el('section', { class: 'decode-stepper', 'aria-label': 'Step through generation' },
      el('h4', { text: 'Step through generation' }),

      el('div', { class: 'decode-modelrow' }, this.modelLine, el('span', { class: 'decode-train' }, this.trainProgress, this.trainCancel), this.useTrained, this.retrain),
      el('div', { class: 'trow', role: 'group', 'aria-label': 'Prompt and mode' },
        field('sequence', this.seqInput), this.nextSeq,
        field('prompt keeps', this.keepInput),
        el('label', { class: 'tfield check' }, this.cacheBox, el('span', { text: 'KV cache on' }))),
      el('div', { class: 'trow decode-nav', role: 'group', 'aria-label': 'Steps' }, this.firstBtn, this.backBtn, this.stepBtn, this.playBtn, this.endBtn, this.slider),
      el('p', { class: 'muted small decode-keys', text: 'Keys: ← → step, Home / End jump (with a stepper button focused).' }),
      this.stepError,
      this.strip,
      this.stepInfo,
      this.agree,
      this.flops,
      el('div', { class: 'decode-pics' }, this.heads, this.caches));
    // Keyboard: ← / → step back and forward, Home / End jump, anywhere in the stepper except in
    // a text field or the slider (which has its own arrow keys).
    stepper.addEventListener('keydown', (e) => {
      const t = e.target as HTMLElement;
      if (t instanceof HTMLInputElement || t instanceof HTMLSelectElement || e.altKey || e.ctrlKey || e.metaKey) return;
      const to = e.key === 'ArrowRight' ? this.current() + 1 : e.key === 'ArrowLeft' ? this.current() - 1 : e.key === 'Home' ? 1 : e.key === 'End' ? (this.traj?.steps.length ?? 1) : NaN;
      if (Number.isNaN(to) || !this.traj) return;
      e.preventDefault();
      this.goto(to);
    });
    const cost = el('section', { class: 'decode-cost', 'aria-label': 'Cost as the sequence grows' },
      el('h4', { text: 'Cost as the sequence grows' }),
      el('p', { class: 'muted', text: `A wider random model (d_model ${TIMING_SHAPE.dModel}, ${TIMING_SHAPE.heads} heads, ${TIMING_SHAPE.layers} layers): one decoding step at length T, with the cache (one query row against T cached keys) and without it (the whole prefix again). Warm-up first, then repeats; the median with its min–max spread.` }),
      el('div', { class: 'trow actions' }, field('T from', this.tStart), field('to', this.tEnd), this.runBtn, this.cancelBtn, el('div', { class: 'tprogress' }, this.progress, this.status)),
      this.notes,
      el('div', { class: 'timing-results' }, el('div', { class: 'timing-plot' }, this.fit, this.chart), this.memory),
      this.total,
      el('div', { class: 'table-scroll' }, this.table));
    const exp = el('div', { class: 'decode-export' },
      el('span', { class: 'export-title', text: 'Export' }),
      this.btn('JSON', 'decode-export-json', () => download('decode.json', JSON.stringify(this.exportData(), null, 1), 'application/json')),
      this.btn('CSV', 'decode-export-csv', () => download('decode.csv', exportCsv(this.exportData()), 'text/csv')),
      this.btn('PNG', 'decode-export-png', () => void this.savePng()));
    this.root = el('div', { class: 'view-decode', 'data-testid': 'decode-view' },
      el('div', { class: 'timing-head' },
        el('h3', { class: 'panel-title', text: 'Decode: a KV cache you can watch and time' }),
        el('p', { class: 'lead', text: 'A transformer writes one token at a time. Each new token needs the keys and values of every earlier one: keep them in a cache and a step is one query row against T keys; throw them away and every step recomputes the whole prefix.' })),
      exp, stepper, cost);
    this.drawTiming();
  }

  private btn(text: string, testid: string, on: () => void): HTMLButtonElement {
    const b = el('button', { type: 'button', class: 'btn small', 'data-testid': testid, text });
    b.addEventListener('click', on);
    return b;
  }

  heatmaps() {
    return [];
  }

  render(ctx: DecodeContext): void {
    this.ctx = ctx;
    this.ds = decodeStateOf(ctx.state);
    const d = this.ds;
    // A result arriving while the user types in these fields must not overwrite the typing.
    syncInput(this.seqInput, String(d.seq));
    syncInput(this.keepInput, String(d.keep));
    this.cacheBox.checked = d.cache;
    this.tStart.value = String(d.tStart);
    this.tEnd.value = String(d.tEnd);
    if (!this.model && !this.modelPending) this.loadModel(false);
    else if (this.model) this.requestTrajectory();
    this.drawStep();
    if (!this.sweep) this.drawTiming();
  }

  // ---------- model ----------
  private loadModel(forceDefault: boolean): void {
    const m = forceDefault ? null : getTrainedModel();
    this.modelPending = true;
    this.modelStale = false;
    this.useTrained.hidden = true;
    this.retrain.hidden = true;
    this.model = null;
    this.traj = null;
    this.trajKey = this.requested = '';
    this.modelLine.textContent = m ? `Loading the Train tab’s model (step ${m.step})…` : 'Starting the WebAssembly training module…';
    this.trainProgress.hidden = !!m;
    this.trainCancel.hidden = false;
    this.client.setModel(m);
    this.drawStep();
  }

  private cancelTraining(): void {
    this.client.cancelStepper();
    this.modelPending = false;
    this.trainProgress.hidden = true;
    this.trainCancel.hidden = true;
    this.retrain.hidden = false;
    this.modelLine.textContent = 'Cancelled. Press “Train the default model” to start again.';
    this.ctx?.announce('Training cancelled');
  }

  private onStepMessage(m: DecodeMessage): void {
    if (m.kind === 'progress') {
      this.trainProgress.value = m.fraction;
      this.modelLine.textContent = m.text;
    } else if (m.kind === 'model-ready') {
      this.model = m;
      this.modelPending = false;
      this.trainProgress.hidden = true;
      this.trainCancel.hidden = true;
      this.retrain.hidden = m.source === 'default';
      const acc = `held-out copy accuracy ${(m.accuracy * 100).toFixed(0)} %`;
      this.modelLine.textContent = m.source === 'train-tab'
        ? `Model: the Train tab’s (step ${m.step}), ${acc}.`
        : `Model: the default induction model (config A), trained here for ${m.step} steps, ${acc}. Train your own in the Train tab.`;
      this.modelLine.dataset.ready = '1';
      this.requestTrajectory();
    } else if (m.kind === 'trajectory') {
      this.traj = m.trajectory;
      this.trajKey = this.requested;
      this.stepError.hidden = true;
      this.drawStep();
    } else if (m.kind === 'error' || m.kind === 'fatal') {
      this.modelPending = false;
      this.trainCancel.hidden = true;
      this.trainProgress.hidden = true;
      this.stepError.hidden = false;
      this.stepError.textContent = `${m.message}${m.kind === 'error' && m.field ? ` (field: ${m.field})` : ''}`;
      if (!this.model) this.retrain.hidden = false;
    }
  }

  private requestTrajectory(): void {
    if (!this.model || !this.ds) return;
    const key = `${this.ds.seq}/${this.ds.keep}`;
    if (key === this.requested) return;
    this.requested = key;
    this.client.trajectory(this.ds.seq, this.ds.keep);
  }

  // ---------- stepping ----------
  /** Tokens appended at the step shown (1…T). */
  private current(): number {
    const tj = this.traj;
    if (!tj || !this.ds) return 0;
    const s = this.ds.step === 0 ? tj.promptLen : this.ds.step;
    return Math.max(1, Math.min(tj.steps.length, s));
  }

  private goto(n: number): void {
    const tj = this.traj;
    if (!tj || !this.ctx) return;
    const s = Math.max(1, Math.min(tj.steps.length, n));
    this.ctx.update(decodePatch(this.ctx.state, { step: s }));
  }

  private togglePlay(): void {
    if (this.playTimer) {
      clearInterval(this.playTimer);
      this.playTimer = 0;
      this.playBtn.textContent = 'Play';
      return;
    }
    const tj = this.traj;
    if (!tj) return;
    if (this.current() >= tj.steps.length) this.goto(tj.promptLen);
    this.playBtn.textContent = 'Pause';
    this.playTimer = window.setInterval(() => {
      if (!this.traj || this.current() >= this.traj.steps.length || !this.root.isConnected) {
        clearInterval(this.playTimer);
        this.playTimer = 0;
        this.playBtn.textContent = 'Play';
        return;
      }
      this.goto(this.current() + 1);
    }, 450);
  }

  private drawStep(): void {
    const tj = this.traj;
    const ok = !!tj && this.trajKey === `${this.ds?.seq}/${this.ds?.keep}`;
    for (const b of [this.firstBtn, this.backBtn, this.stepBtn, this.playBtn, this.endBtn, this.slider]) b.disabled = !ok;
    clear(this.strip);
    clear(this.heads);
    clear(this.caches);
    if (!tj || !ok) {
      this.stepInfo.textContent = this.model ? 'Decoding…' : '';
      this.agree.textContent = '';
      clear(this.flops);
      return;
    }
    const n = this.current();
    const cache = this.ds!.cache;
    this.slider.max = String(tj.steps.length);
    this.slider.value = String(n);
    this.root.dataset.step = String(n);
    const st = tj.steps[n - 1];
    // Token strip: the region of every position, what was appended, right or wrong.
    tj.steps.forEach((s, i) => {
      const region = tj.firstCopy < 0 || i < tj.firstCopy ? 'noise' : i < tj.secondCopy ? 'copy1' : 'copy2';
      const shown = i < n;
      const right = s.source === 'generated' ? (s.expected === null ? '' : s.token === s.expected ? ' right' : ' wrong') : '';
      const li = el('li', { class: `tok ${region} ${s.source}${shown ? '' : ' future'}${i === n - 1 ? ' now' : ''}${right}`, 'data-t': i, 'data-token': s.token, title: `position ${i}: ${s.source} token ${s.token}${s.expected !== null ? `, the copy expects ${s.expected}` : ''}` },
        el('span', { class: 'tok-id', text: shown ? String(s.token) : '·' }));
      this.strip.append(li);
    });
    // The step in words.
    clear(this.stepInfo);
    const next = tj.steps[n]; // the next position, if any
    const expNext = next ? next.expected : null;
    const pred = st.predicted;
    const copyNote = expNext === null ? '' : pred === expNext ? ' ✓ the copy' : ' ✗ not the copy';
    this.stepInfo.append(
      el('p', {}, el('strong', { text: `Step ${n} of ${tj.steps.length}: ` }),
        `appended ${st.source === 'prompt' ? 'prompt' : 'generated'} token ${st.token} at position ${n - 1}. `,
        el('span', { 'data-testid': 'decode-prediction', 'data-predicted': pred, 'data-expected': expNext ?? '', text: `Prediction for position ${n}: ${pred} (p = ${fmt(st.prob, 2)})` }),
        expNext === null ? (n < tj.steps.length ? ' — the task expects no particular token here.' : ' — the sequence is full.') : `; the copy task expects ${expNext}${copyNote}.`),
      tj.firstCopy < 0 ? el('p', { class: 'muted small', text: `This model's task has no copy to find: the first ${tj.promptLen} tokens of a held-out sequence are the prompt, and the model writes the rest.` }) : el('p', { class: 'muted small', text: `Prompt: noise (positions 0–${tj.firstCopy - 1}), s (${tj.firstCopy}–${tj.secondCopy - 1}, ${tj.sLen} tokens), then the first ${tj.promptLen - tj.secondCopy} token${tj.promptLen - tj.secondCopy > 1 ? 's' : ''} of s again; from position ${tj.promptLen} on the model writes. An induction head looks back to the token after the earlier occurrence of the current token, and copies it.` }));
    const gen = tj.steps.filter((s) => s.source === 'generated' && s.expected !== null);
    const copied = gen.filter((s) => s.token === s.expected).length;
    const same = tj.recomputeTokens.every((x, i) => x === tj.steps[i].token);
    this.agree.dataset.identical = same ? '1' : '0';
    this.agree.dataset.copied = String(copied);
    this.agree.dataset.generated = String(gen.length);
    this.agree.textContent = `${copied} of ${gen.length} generated tokens are the copy. Cached and recompute decoding ${same ? 'produced identical tokens' : 'produced DIFFERENT tokens'} (largest |Δ| of logits and weights ${tj.maxAbsDiff.toExponential(1)}). K/V cache: ${formatBytes(tj.cacheBytes)} reserved for ${tj.shape.seqLen} positions.`;
    // FLOPs per step.
    const f = stepFlops(tj.shape, n);
    clear(this.flops);
    const bar = (label: string, v: number, max: number, cls: string) => {
      const b = el('span', { class: `fbar ${cls}` });
      b.style.width = `${Math.max(0.5, (v / max) * 100).toFixed(2)}%`;
      return el('div', { class: 'frow' }, el('span', { class: 'flabel', text: label }), el('span', { class: 'ftrack' }, b), el('strong', { class: 'fnum', text: fmtFlops(v) }));
    };
    this.flops.append(
      el('h5', { text: `FLOPs of this step (length ${n})` }),
      bar('with the cache', f.cached, f.recompute, 'cached' + (cache ? ' on' : '')),
      bar('recompute', f.recompute, f.recompute, 'recompute' + (cache ? '' : ' on')),
      el('p', { class: 'muted small', text: `Recompute does ${fmt(f.recompute / f.cached, 1)}× the work; ${fmtFlops(f.wasted)} of it (${((f.wasted / f.recompute) * 100).toFixed(0)} %) recomputes keys, values and attention rows the previous steps already had.` }));
    this.drawHeads(tj, st, n, cache);
    this.drawCaches(tj, st, n, cache);
  }

  private drawHeads(tj: Trajectory, st: StepData, n: number, cache: boolean): void {
    const { layers: L, heads: H } = tj.shape;
    const T = tj.steps.length;
    const cell = Math.max(6, Math.min(14, Math.floor(((this.ctx?.width ?? 600) - 120) / T)));
    this.heads.append(el('h5', { text: cache ? 'New attention row of every head over the cached keys' : 'Recompute: every row again (hatched = already known), the last row is new' }));
    for (let l = 0; l < L; l++) {
      for (let h = 0; h < H; h++) {
        const c = el('canvas', { class: 'mat', 'data-testid': `decode-row-${l}-${h}`, role: 'img' });
        let arg = 0;
        for (let j = 1; j < n; j++) if (st.weights[(l * H + h) * n + j] > st.weights[(l * H + h) * n + arg]) arg = j;
        c.setAttribute('aria-label', `Layer ${l + 1} head ${h + 1}: the new query (position ${n - 1}) puts most weight, ${fmt(st.weights[(l * H + h) * n + arg], 2)}, on position ${arg} (token ${tj.steps[arg].token}).`);
        const bands = tj.firstCopy >= 0 ? [{ from: tj.firstCopy, to: tj.secondCopy, color: '#d08a00' }] : [];
        if (cache) {
          drawMatrix(c, { rows: 1, cols: T, filled: n, value: (_i, j) => st.weights[(l * H + h) * n + j], lo: 0, hi: 1, palette: 'seq', cell, newCol: n - 1, bands });
        } else {
          // Row i of the prefix's attention is step i's new row (causal): the recompute redoes them all.
          drawMatrix(c, {
            rows: n, cols: T, filled: n, lo: 0, hi: 1, palette: 'seq', cell: Math.max(4, Math.min(cell, Math.floor(220 / n))), bands,
            value: (i, j) => (j <= i ? tj.steps[i].weights[(l * H + h) * (i + 1) + j] : NaN),
            wasted: (i) => i < n - 1, newRow: n - 1,
          });
        }
        this.heads.append(el('figure', { class: 'decode-head' }, el('figcaption', { text: `L${l + 1} H${h + 1} → ${arg} (${fmt(st.weights[(l * H + h) * n + arg], 2)})` }), c));
      }
    }
  }

  private drawCaches(tj: Trajectory, st: StepData, n: number, cache: boolean): void {
    const { layers: L, kvHeads: G } = tj.shape;
    const dh = dHead(tj.shape);
    const T = tj.steps.length;
    const cell = Math.max(3, Math.min(8, Math.floor(((this.ctx?.width ?? 600) - 60) / T), Math.floor(180 / dh)));
    this.caches.append(el('h5', { text: cache ? `K and V caches: d_head ${dh} rows × one column per token (outlined: this step’s)` : 'K and V, recomputed: every column again (hatched = waste); only the outlined one is new' }));
    // One colour scale for all keys and one for all values (their magnitudes differ).
    const range = (arrs: Float32Array[]) => {
      let m = 1e-6;
      for (const a of arrs) for (const x of a) m = Math.max(m, Math.abs(x));
      return m;
    };
    const kr = range(st.k), vr = range(st.v);
    for (let l = 0; l < L; l++) {
      for (const [name, arr] of [['K', st.k[l]], ['V', st.v[l]]] as const) {
        for (let g = 0; g < G; g++) {
          const c = el('canvas', { class: 'mat', 'data-testid': `decode-${name.toLowerCase()}-${l}-${g}`, 'data-cols': n, role: 'img', 'aria-label': `Layer ${l + 1} ${name} cache${G > 1 ? `, K/V head ${g + 1}` : ''}: ${n} columns of ${dh}` });
          drawMatrix(c, { rows: dh, cols: T, filled: n, value: (i, j) => arr[(g * n + j) * dh + i], lo: -(name === 'K' ? kr : vr), hi: name === 'K' ? kr : vr, palette: 'div', cell, newCol: n - 1, wasted: cache ? undefined : (_i, j) => j < n - 1 });
          this.caches.append(el('figure', { class: 'decode-kv' }, el('figcaption', { text: `L${l + 1} ${name}${G > 1 ? ` (K/V head ${g + 1})` : ''}` }), c));
        }
      }
    }
  }

  // ---------- timing ----------
  private startTiming(): void {
    if (!this.ds) return;
    const p = { tStart: this.ds.tStart, tEnd: this.ds.tEnd, ...TIMING_SHAPE };
    this.sweep = { tStart: p.tStart, tEnd: p.tEnd, points: [], notes: [], memory: null, heapBytes: NaN, phase: 'running' };
    this.runBtn.disabled = true;
    this.cancelBtn.disabled = false;
    this.progress.value = 0;
    this.setStatus('running', 'Starting the timing worker…');
    this.client.runTiming(p, BUDGET_MS, (m) => this.onTiming(m));
    this.drawTiming();
  }

  private cancelTiming(): void {
    if (!this.client.cancelTiming() || !this.sweep) return;
    this.sweep.phase = 'cancelled';
    this.runBtn.disabled = false;
    this.cancelBtn.disabled = true;
    this.setStatus('cancelled', `Cancelled; ${this.sweep.points.length} point${this.sweep.points.length === 1 ? '' : 's'} kept.`);
    this.ctx?.announce('Timing cancelled');
    this.drawTiming();
  }

  private setStatus(state: string, text: string): void {
    this.status.dataset.state = state;
    this.status.textContent = text;
  }

  private onTiming(m: DecodeMessage): void {
    const sw = this.sweep;
    if (!sw) return;
    if (m.kind === 'progress') {
      this.progress.value = m.fraction;
      this.setStatus('running', m.text);
      return;
    }
    if (m.kind === 'point') sw.points.push(m.point);
    else if (m.kind === 'memory') sw.memory = { t: m.t, rows: m.rows, heapBytes: m.heapBytes };
    else if (m.kind === 'error') sw.notes.push(m.message);
    else if (m.kind === 'done' || m.kind === 'fatal') {
      sw.phase = m.kind === 'done' ? 'done' : 'failed';
      if (m.kind === 'done') sw.heapBytes = m.heapBytes;
      this.runBtn.disabled = false;
      this.cancelBtn.disabled = true;
      this.progress.value = m.kind === 'done' ? 1 : this.progress.value;
      if (m.kind === 'fatal') this.setStatus('failed', m.message);
      else {
        const c = fitOf(sw.points, 'cached'), r = fitOf(sw.points, 'recompute');
        this.setStatus('done', `Done: ${sw.points.length} points; exponents ${c ? c.exponent.toFixed(2) : '—'} with the cache, ${r ? r.exponent.toFixed(2) : '—'} without.`);
        this.ctx?.announce(this.status.textContent ?? '');
      }
    }
    this.drawTiming();
  }

  private drawTiming(): void {
    const sw = this.sweep;
    const pts = sw?.points ?? [];
    const fc = fitOf(pts, 'cached'), fr = fitOf(pts, 'recompute');
    clear(this.fit);
    const head = el('p', { class: 'fit-main', 'data-testid': 'decode-exponent' }, el('span', { class: 'fit-label', text: 'Fitted exponent p in time per step ∝ Tᵖ:' }));
    for (const [mode, f, label] of [['cached', fc, 'cached'], ['recompute', fr, 'recompute']] as const) {
      head.append(el('span', { class: `fit-k k-${mode}`, 'data-testid': `decode-exponent-${mode}`, 'data-value': f ? f.exponent.toFixed(3) : '' },
        el('span', { class: 'sw-line', 'aria-hidden': 'true' }), `${label} `, el('strong', { text: f ? `p = ${f.exponent.toFixed(2)}` : 'p = —' })));
    }
    this.fit.append(head, el('p', { class: 'muted small', text: 'Least-squares fit of log time against log T over the medians. With the cache a step reads T keys: p ≈ 1 — but a step also has a fixed cost (the q, k, v and output projections, 4·d_model² multiply-adds per layer, and the logits) that dominates at small T and pulls the fit below 1; the “× prev. T” column shows the growth per doubling approaching ×2. Without the cache a step recomputes the T × T causal attention: p → 2 (the projections, linear in T, pull it below 2 at small T).' }));
    const ser = (mode: DecodeMode) => pts.filter((p) => p.mode === mode).map((p) => ({ t: p.t, median: p.stats.median, min: p.stats.min, max: p.stats.max, title: `${mode}, T = ${p.t}: median ${formatMs(p.stats.median)} (min ${formatMs(p.stats.min)}, max ${formatMs(p.stats.max)}, ${p.stats.n} samples)` }));
    const ts = sweepTs(sw?.tStart ?? this.ds?.tStart ?? 256, sw?.tEnd ?? this.ds?.tEnd ?? 4096);
    clear(this.chart);
    this.chart.append(logLogChart({
      ts, testid: 'decode-chart', clipId: 'decode-clip', right: 175,
      series: [
        { label: 'recompute', cls: 'k-recompute', marker: 'circle', points: ser('recompute'), fit: fr },
        { label: 'cached', cls: 'k-cached', marker: 'square', points: ser('cached'), fit: fc },
      ],
      refs: [{ slope: 2, label: '×4 per doubling', series: 0 }, { slope: 1, label: '×2 per doubling', series: 1 }],
      ariaLabel: `Log–log chart of the time of one decoding step against T${fc ? `: cached slope ${fc.exponent.toFixed(2)}` : ''}${fr ? `, recompute slope ${fr.exponent.toFixed(2)}` : ''}.`,
      xLabel: 'sequence length T (log scale, ×2 per step)', yLabel: 'time per decoding step, ms (log)',
      empty: sw?.phase === 'running' ? 'Measuring…' : 'Press “Time decoding” to measure',
    }));
    // Total time to generate N tokens from the fits.
    clear(this.total);
    const N = sw?.tEnd ?? this.ds?.tEnd ?? 4096;
    if (fc && fr) {
      const a = totalMs(fc, N), b = totalMs(fr, N);
      this.total.dataset.cachedMs = a.toFixed(1);
      this.total.dataset.recomputeMs = b.toFixed(1);
      this.total.append(el('strong', { text: `Generating ${N} tokens one by one: about ${formatMs(a)} with the cache, ${formatMs(b)} without (${fmt(b / a, 0)}×). ` }),
        el('span', { class: 'muted', text: `Σ over t = 1…${N} of the fitted per-step time c·tᵖ ≈ c·N^(p+1)/(p+1): ≈ N² with the cache, ≈ N³ without.` }));
    } else this.total.append(el('span', { class: 'muted', text: 'The total time to generate N tokens appears when both fits are in.' }));
    clear(this.notes);
    for (const n of sw?.notes ?? []) this.notes.append(el('li', { class: 'note-skip', text: n }));
    this.notes.hidden = !sw || sw.notes.length === 0;
    this.drawTable(pts);
    this.drawMemory();
  }

  private drawTable(pts: DecodePoint[]): void {
    clear(this.table);
    this.table.append(el('caption', { text: 'Time of one decoding step (median of the repeats, after warm-up; min – max below)' }),
      el('thead', {}, el('tr', {}, ...['T', 'with the cache', '× prev. T', 'recompute', '× prev. T', 'recompute ÷ cached'].map((t) => el('th', { scope: 'col', text: t })))));
    const tb = el('tbody');
    const rows = timingRows(pts);
    for (const r of rows) {
      const cell = (mode: DecodeMode) => {
        const p = pts.find((q) => q.t === r.T && q.mode === mode);
        return p ? el('td', { class: 'num', 'data-mode': mode, 'data-ms': p.stats.median.toFixed(4) }, el('span', { class: 'med', text: formatMs(p.stats.median) }), el('span', { class: 'spread', text: `${formatMs(p.stats.min)} – ${formatMs(p.stats.max)}` })) : el('td', { class: 'muted', text: '—' });
      };
      // Growth per doubling of T: ×2 is linear, ×4 quadratic.
      const prev = rows.find((q) => q.T * 2 === r.T);
      const ratio = (a: number | null | undefined, b: number | null | undefined) => el('td', { class: 'num ratio', text: a && b ? `×${fmt(a / b, 1)}` : '' });
      tb.append(el('tr', { 'data-testid': 'decode-row', 'data-t': r.T }, el('th', { scope: 'row', text: String(r.T) }),
        cell('cached'), ratio(r.cachedMs, prev?.cachedMs), cell('recompute'), ratio(r.recomputeMs, prev?.recomputeMs),
        el('td', { class: 'num ratio', text: r.cachedMs && r.recomputeMs ? `×${fmt(r.recomputeMs / r.cachedMs, 0)}` : '' })));
    }
    if (rows.length === 0) tb.append(el('tr', {}, el('td', { colspan: 6, class: 'muted', text: 'No measurements yet.' })));
    this.table.append(tb);
  }

  private drawMemory(): void {
    clear(this.memory);
    const sw = this.sweep;
    const T = sw?.memory?.t ?? sw?.tEnd ?? this.ds?.tEnd ?? 4096;
    const shape = { layers: TIMING_SHAPE.layers, heads: TIMING_SHAPE.heads, dModel: TIMING_SHAPE.dModel };
    const vars = kvVariants(shape.heads);
    const max = cacheBytesFormula(shape, shape.heads, T);
    const heap = sw?.memory ? Math.max(sw.memory.heapBytes, Number.isFinite(sw.heapBytes) ? sw.heapBytes : 0) : NaN;
    this.memory.append(el('h4', { text: `K/V cache at T = ${T}` }),
      el('p', { class: 'muted small', text: `bytes = 2 · layers · K/V heads · T · d_head · 4 = 2 · ${shape.layers} · H_kv · ${T} · ${dHead(shape as DecodeShape)} · 4` }));
    for (const v of vars) {
      const formula = cacheBytesFormula(shape, v.kvHeads, T);
      const reported = sw?.memory?.rows.find((r) => r.name === v.name)?.bytes;
      const b = el('span', { class: `mbar kv-${v.name.toLowerCase()}` });
      b.style.width = `${Math.max(0.5, (formula / Math.max(max, Number.isFinite(heap) ? heap : 0)) * 100).toFixed(2)}%`;
      this.memory.append(el('div', { class: 'mrow', 'data-testid': `decode-mem-${v.name.toLowerCase()}`, 'data-bytes': reported ?? '', 'data-formula': formula },
        el('div', { class: 'mlabel' }, el('span', { text: `${v.name}: ${v.kvHeads} K/V head${v.kvHeads > 1 ? 's' : ''}` }), el('strong', { text: formatBytes(formula) })),
        el('div', { class: 'mtrack' }, b),
        el('div', { class: 'mnote muted', text: reported === undefined ? 'the module’s figure appears when a timing run starts' : `the module reports ${formatBytes(reported)}${reported === formula ? ' (= the formula)' : ' (≠ the formula!)'}` })));
    }
    if (Number.isFinite(heap)) {
      const b = el('span', { class: 'mbar heap' });
      b.style.width = `${Math.min(100, (heap / Math.max(max, heap)) * 100).toFixed(2)}%`;
      this.memory.append(el('div', { class: 'mrow', 'data-testid': 'decode-heap', 'data-bytes': heap },
        el('div', { class: 'mlabel' }, el('span', { text: 'measured wasm heap' }), el('strong', { text: formatBytes(heap) })),
        el('div', { class: 'mtrack' }, b),
        el('div', { class: 'mnote muted', text: 'the timing worker’s WebAssembly memory: weights, optimiser state, the cache and work buffers (it only grows)' })));
    }
    this.memory.append(el('p', { class: 'muted small', text: 'Grouped-query (GQA) and multi-query attention (MQA) let several query heads share one K/V head: the cache — often the largest thing in memory while generating — shrinks by the same factor.' }));
  }

  // ---------- export ----------
  exportData(): DecodeExport {
    const tj = this.traj;
    const pts = this.sweep?.points ?? [];
    const fc = fitOf(pts, 'cached'), fr = fitOf(pts, 'recompute');
    const T = this.sweep?.memory?.t ?? this.ds?.tEnd ?? 4096;
    return {
      config: {
        decode: this.ds,
        model: this.model ? { source: this.model.source, step: this.model.step, accuracy: this.model.accuracy, ...this.model.shape } : null,
        prompt: tj ? { seq: tj.seq, promptLen: tj.promptLen, firstCopy: tj.firstCopy, secondCopy: tj.secondCopy, sLen: tj.sLen } : null,
        timingModel: TIMING_SHAPE,
        userAgent: navigator.userAgent,
      },
      steps: tj ? tj.steps.map((s) => ({ t: s.t, token: s.token, expected: s.expected, predicted: s.predicted, source: s.source })) : [],
      timing: timingRows(pts),
      exponents: { cached: fc ? fc.exponent : null, recompute: fr ? fr.exponent : null },
      cacheBytes: {
        steppingModel: tj?.cacheBytes ?? null,
        T,
        variants: kvVariants(TIMING_SHAPE.heads).map((v) => ({ name: v.name, kvHeads: v.kvHeads, formula: cacheBytesFormula(TIMING_SHAPE, v.kvHeads, T), reported: this.sweep?.memory?.rows.find((r) => r.name === v.name)?.bytes ?? null })),
        // The timing Worker's heap: after the MHA/GQA/MQA decoders, and after the sweep when it finished.
        heapBytes: this.sweep?.memory ? Math.max(this.sweep.memory.heapBytes, Number.isFinite(this.sweep.heapBytes) ? this.sweep.heapBytes : 0) : null,
      },
    };
  }

  private async savePng(): Promise<void> {
    const canvases = [...this.root.querySelectorAll<HTMLCanvasElement>('.decode-pics canvas')];
    if (canvases.length === 0) return;
    const pad = 10, W = Math.max(...canvases.map((c) => c.width)) + 2 * pad + 140;
    const H = canvases.reduce((a, c) => a + c.height + 8, 50);
    const out = document.createElement('canvas');
    out.width = W;
    out.height = H;
    const g = out.getContext('2d')!;
    g.fillStyle = '#fff';
    g.fillRect(0, 0, W, H);
    g.fillStyle = '#111';
    g.font = '600 16px system-ui, sans-serif';
    g.fillText(`Attention Playground — decode step ${this.current()} (${this.ds?.cache ? 'cached' : 'recompute'})`, pad, 24);
    g.font = '12px system-ui, sans-serif';
    let y = 40;
    for (const c of canvases) {
      g.fillText(c.closest('figure')?.querySelector('figcaption')?.textContent ?? '', pad, y + 10, 130);
      g.drawImage(c, pad + 140, y);
      y += c.height + 8;
    }
    const blob = await new Promise<Blob | null>((r) => out.toBlob(r, 'image/png'));
    if (blob) download(`decode-step-${this.current()}.png`, blob);
  }
}

function fmtFlops(v: number): string {
  if (v >= 1e9) return `${(v / 1e9).toFixed(2)} GFLOP`;
  if (v >= 1e6) return `${(v / 1e6).toFixed(2)} MFLOP`;
  if (v >= 1e3) return `${(v / 1e3).toFixed(1)} kFLOP`;
  return `${v} FLOP`;
}

export const decodeView: ViewFactory<DecodeContext, 'decode', false> = { id: 'decode', label: 'Decode', needsResult: false, create: () => new DecodeView() };
