// The Train tab: a two-layer attention-only transformer learns induction heads, live. Training
// runs in its own module Worker (train/worker.ts); this view keeps the history (every step's
// loss), redraws at most once per animation frame, and lets the user play, pause, step, reset,
// change the learning rate while running, ablate heads, and export the run. Its settings are the
// `train` sub-state (train/state.ts), so a link replays the run: same config and seed → the same
// loss history bit for bit.
import './train.css';
import { el, clear, fmt } from '../ui/dom';
import { Heatmap } from '../ui/heatmap';
import { download, heatmapPng } from '../shared/export';
import { getTrainedModel, setTrainedAttention, setTrainedModel } from '../shared/trained-model';
import type { LabContext, View, ViewFactory } from '../ui/view';
import { TrainClient } from './client';
import type { HeadScores, Snapshot, TrainMessage } from './protocol';
import {
  COMPARE_LABEL, TRAIN_COMPARES, compareSettings, TASK_LABEL, TRAIN_KERNELS, TRAIN_LIMITS, TRAIN_POSITIONAL, TRAIN_TASKS, archChanged, flopsPerStep, trainerConfig,
  type TrainState,
} from './config';
import { History, PHASE_TEXT, crossing, phaseOf, shelfAndDrop, thin, type Phase } from './history';
import { drawChart, type Series } from './chart';
import { trainOf, trainPatch, type TrainSlice } from './state';
import { trainHash, trainPresetHash, type TrainLinkPatch } from './links';
import { TRAIN_PRESETS } from './presets';
import { exportCsv, exportDoc } from './export';

const EVAL_EVERY = 5;
const SNAP_EVERY = 10;
/** Publish the model for the other tabs every this many steps while running. */
const PUBLISH_EVERY = 300;
const HEAD_COLORS = ['#2c5cc5', '#c2410c', '#1a7f37', '#8a3ffc', '#b3134f', '#0e7490', '#9a6700', '#475569'];

/** What the page gives the Train tab: its settings, a way to change them (and to open the
 *  trained model in the Heads view), and the page's share-link writer. */
export interface TrainContext extends LabContext<TrainSlice, { train?: TrainState; page?: { view: 'heads'; head: number } }> {
  hashOf(patch: TrainLinkPatch): string;
}

type RunState = 'loading' | 'idle' | 'running' | 'stopped' | 'diverged' | 'refused' | 'error';

interface TrainDebug {
  history: History;
  run: () => RunState;
  step: () => number;
  stepsPerSec: () => number;
  gflops: () => number;
  frames: number[];
  /** ms spent in each redraw (the page's own work per frame) */
  drawMs: number[];
  compare: () => number[] | null;
  /** the step of the model last handed to the other tabs (shared/trained-model.ts), or null */
  published: () => number | null;
  phaseAt: { crossed50: number | null; crossed90: number | null; ms90: number | null };
}
declare global {
  interface Window { __trainTab?: TrainDebug }
}

/** A colour swatch; the colour is set through the CSSOM (the page's CSP forbids style attributes). */
function swatch(color: string): HTMLElement {
  const e = el('span', { class: 'tr-sw' });
  e.style.backgroundColor = color;
  return e;
}
function labelled(label: string, control: HTMLElement, hint?: string): HTMLElement {
  return el('label', { class: 'tr-field' }, el('span', { text: label }), control, hint ? el('span', { class: 'tr-hint', text: hint }) : null);
}
/** 3 significant digits, exponent form outside 1e-3…1e4 (gradients span many decades). */
function sci(x: number): string {
  if (x === 0 || !Number.isFinite(x)) return String(x);
  const a = Math.abs(x);
  return a >= 1e-3 && a < 1e4 ? x.toPrecision(3) : x.toExponential(2);
}
function numInput(testid: string, min: number, max: number, step: number | 'any'): HTMLInputElement {
  return el('input', { type: 'number', min, max, step, 'data-testid': testid, inputmode: 'decimal' });
}
function select(testid: string, options: readonly (readonly [string, string])[]): HTMLSelectElement {
  return el('select', { 'data-testid': testid }, ...options.map(([v, t]) => el('option', { value: v, text: t })));
}

class TrainView implements View<TrainContext> {
  readonly id = 'train';
  readonly root: HTMLElement;
  private ctx: TrainContext | null = null;
  private client = new TrainClient((m) => this.onMessage(m));
  /** the settings the current trainer was built from */
  private built: TrainState | null = null;
  private history = new History();
  private snap: Snapshot | null = null;
  /** the snapshot last drawn (heatmaps, table): redrawn only when a new one arrives */
  private drawnSnap: Snapshot | null = null;
  private builtWidth = 0;
  private probe: Int32Array = new Int32Array(0);
  private probeMask: Uint8Array = new Uint8Array(0);
  private run: RunState = 'loading';
  private step = 0;
  private evalLoss = NaN;
  private evalAcc = NaN;
  private wantPlay = false;
  private autoPaused = false;
  private visible = true;
  private ablated = new Set<string>();
  private phase: Phase | null = null;
  private rate = { steps: 0, wallMs: 0, trainMs: 0, flops: 0 };
  private stepsPerSec = 0;
  private gflops = 0;
  private playStartedAt = 0;
  private playMsTotal = 0;
  private ms90: number | null = null;
  private rafPending = false;
  private lastPublished = 0;
  private frames: number[] = [];
  private drawMs: number[] = [];
  private lastFrame = 0;
  private resetNote = '';
  private config: Record<string, unknown> = {};
  /** Compare: a second Worker on the same data seed with one setting changed; its curves are dashed. */
  private cmp: { client: TrainClient; history: History; run: RunState; label: string; step: number } | null = null;

  // controls
  private playBtn = el('button', { type: 'button', class: 'btn primary', 'data-testid': 'train-play', text: 'Play', 'aria-keyshortcuts': 'Space' });
  private step1 = el('button', { type: 'button', class: 'btn', 'data-testid': 'train-step-1', text: 'Step 1' });
  private step10 = el('button', { type: 'button', class: 'btn', 'data-testid': 'train-step-10', text: 'Step 10' });
  private resetBtn = el('button', { type: 'button', class: 'btn', 'data-testid': 'train-reset', text: 'Reset' });
  private compareSel = select('train-compare', TRAIN_COMPARES.map((c) => [c, COMPARE_LABEL[c]] as const));
  private speed = select('train-speed', [['0', 'as fast as possible'], ['10', '10 steps/s'], ['30', '30 steps/s'], ['60', '60 steps/s'], ['120', '120 steps/s'], ['300', '300 steps/s']]);
  private until = numInput('train-until', 0, TRAIN_LIMITS.maxUntil, 1);
  private untilAcc = numInput('train-until-acc', 0, 1, 0.05);
  private lr = numInput('train-lr', TRAIN_LIMITS.minLr, TRAIN_LIMITS.maxLr, 'any');
  private cfg = {
    task: select('train-task', TRAIN_TASKS.map((t) => [t, TASK_LABEL[t]] as const)),
    vocab: numInput('train-vocab', 2, TRAIN_LIMITS.maxVocab, 1),
    seqLen: numInput('train-seqlen', TRAIN_LIMITS.minSeqLen, TRAIN_LIMITS.maxSeqLen, 2),
    layers: numInput('train-layers', 1, TRAIN_LIMITS.maxLayers, 1),
    heads: numInput('train-heads', 1, TRAIN_LIMITS.maxHeads, 1),
    kvHeads: numInput('train-kvheads', 1, TRAIN_LIMITS.maxHeads, 1),
    dModel: numInput('train-dmodel', 1, TRAIN_LIMITS.maxDModel, 1),
    positional: select('train-positional', TRAIN_POSITIONAL.map((p) => [p, p === 'learned' ? 'learned table' : 'none'] as const)),
    layerNorm: el('input', { type: 'checkbox', 'data-testid': 'train-layernorm' }),
    scale: el('input', { type: 'text', 'data-testid': 'train-scale', size: 6, spellcheck: 'false' }),
    initStd: numInput('train-initstd', 0, TRAIN_LIMITS.maxInitStd, 'any'),
    dropout: numInput('train-dropout', 0, TRAIN_LIMITS.maxDropout, 0.05),
    batch: numInput('train-batch', 1, TRAIN_LIMITS.maxBatch, 1),
    weightDecay: numInput('train-wd', 0, TRAIN_LIMITS.maxWeightDecay, 'any'),
    kernel: select('train-kernel', TRAIN_KERNELS.map((k) => [k, k === 'naive' ? 'naive (stores weights)' : 'tiled (online softmax)'] as const)),
    seed: numInput('train-seed', 0, TRAIN_LIMITS.maxSeed, 1),
    dataSeed: numInput('train-dseed', -1, TRAIN_LIMITS.maxSeed, 1),
  };

  // readouts and panels
  private readStep = el('span', { class: 'tr-val', 'data-testid': 'train-step' });
  private readLoss = el('span', { class: 'tr-val', 'data-testid': 'train-loss' });
  private readEval = el('span', { class: 'tr-val', 'data-testid': 'train-eval' });
  private readRate = el('span', { class: 'tr-val', 'data-testid': 'train-rate' });
  private statusLine = el('p', { class: 'tr-status', 'data-testid': 'train-status', role: 'status' });
  private notice = el('div', { class: 'banner error tr-notice', role: 'alert', 'data-testid': 'train-notice', hidden: true });
  private lossCanvas = el('canvas', { class: 'tr-canvas', role: 'img', 'aria-label': 'Loss curve', 'data-testid': 'train-loss-chart' });
  private lossCaption = el('p', { class: 'tr-caption muted' });
  private scoreCanvases = {
    previousToken: el('canvas', { class: 'tr-canvas', role: 'img', 'aria-label': 'Previous-token score per head over steps' }),
    induction: el('canvas', { class: 'tr-canvas', role: 'img', 'aria-label': 'Induction score per head over steps' }),
    duplicateToken: el('canvas', { class: 'tr-canvas', role: 'img', 'aria-label': 'Duplicate-token score per head over steps' }),
  };
  private scoreLegend = el('div', { class: 'tr-legend' });
  private attnGrid = el('div', { class: 'tr-attn-grid' });
  private probeInput = el('input', { type: 'text', 'data-testid': 'train-probe', spellcheck: 'false', placeholder: 'e.g. 5 9 2 7 5 9 2 7', 'aria-label': 'Your own probe: token ids separated by spaces' });
  private attnReadout = el('p', { class: 'readout', 'aria-live': 'polite', 'data-testid': 'train-readout', text: 'Hover a cell (or focus a map and use the arrow keys) to read a weight.' });
  private maps: { name: string; heatmap: Heatmap }[] = [];
  private kcompBox = el('div', { class: 'tr-kcomp' });
  private kcompMaps: Heatmap[] = [];
  private headTable = el('table', { class: 'tr-heads', 'data-testid': 'train-heads' });
  private entropyLine = el('p', { class: 'tr-caption muted', 'data-testid': 'train-entropy' });
  private scoreGradLine = el('p', { class: 'tr-caption muted', 'data-testid': 'train-score-grad' });
  private pngSelect = el('select', { 'aria-label': 'Panel to save as PNG', 'data-testid': 'train-png-select' });
  private configBox: HTMLDetailsElement;

  constructor() {
    const runBar = el('div', { class: 'tr-bar', role: 'group', 'aria-label': 'Training' },
      this.playBtn, this.step1, this.step10, this.resetBtn,
      labelled('Speed', this.speed),
      labelled('Stop at step', this.until, '0 = never'),
      labelled('or accuracy ≥', this.untilAcc, '0 = off'),
      labelled('Learning rate', this.lr, 'live'),
      labelled('Compare with', this.compareSel, 'same data seed, dashed'));
    const reads = el('div', { class: 'tr-reads' },
      el('span', {}, 'step ', this.readStep), el('span', {}, 'loss ', this.readLoss),
      el('span', {}, 'held-out ', this.readEval), el('span', {}, this.readRate));
    const c = this.cfg;
    this.configBox = el('details', { class: 'tr-config', 'data-testid': 'train-config' },
      el('summary', { text: 'Model and data (changing these restarts training)' }),
      el('div', { class: 'tr-config-grid' },
        labelled('Task', c.task), labelled('Vocabulary', c.vocab), labelled('Sequence length', c.seqLen),
        labelled('Layers', c.layers), labelled('Heads', c.heads), labelled('K/V heads', c.kvHeads, 'divides heads'),
        labelled('d_model', c.dModel, 'divisible by heads'), labelled('Positions', c.positional),
        el('label', { class: 'tr-field tr-check' }, c.layerNorm, el('span', { text: 'final LayerNorm' })),
        labelled('Scale', c.scale, 'sqrt, none or a number'), labelled('Init std', c.initStd, '0 = 1/√d_model'),
        labelled('Dropout', c.dropout, 'on attention weights'), labelled('Batch', c.batch),
        labelled('Weight decay', c.weightDecay), labelled('Kernel', c.kernel), labelled('Init seed', c.seed, 'weights, dropout'),
        labelled('Data seed', c.dataSeed, 'batches, held-out; -1 = init seed')));
    const exportBar = el('div', { class: 'export tr-export' },
      el('span', { class: 'export-title', text: 'Export' }),
      this.button('JSON', 'train-export-json', () => void this.exportJson()),
      this.button('CSV', 'train-export-csv', () => download('training-history.csv', exportCsv(this.history), 'text/csv')),
      el('span', { class: 'png-group' }, this.pngSelect, this.button('PNG', 'train-export-png', () => void this.savePng())),
      this.button('Copy link to this step', 'train-copy-step', () => void this.copyStepLink()));
    const presets = el('section', { class: 'tr-presets', 'aria-labelledby': 'train-presets-title' },
      el('h3', { id: 'train-presets-title', text: 'Experiments' }),
      el('ul', { class: 'cards' }, ...TRAIN_PRESETS.map((p) => el('li', { class: 'card' },
        el('a', { 'data-train-preset': p.id, class: 'card-link' },
          el('span', { class: 'card-lesson', text: 'Train' }),
          el('strong', { class: 'card-title', text: p.title }),
          el('span', { class: 'card-blurb', text: p.blurb }),
          el('span', { class: 'card-figure', text: p.figure }))))));
    this.root = el('div', { class: 'view-train', 'data-testid': 'train-view' },
      el('h2', { class: 'panel-title', text: 'Train: watch induction heads form' }),
      el('p', { class: 'lead', text: 'A two-layer, attention-only transformer learns to continue [noise, s, s]: the second copy of s is predictable only by finding the earlier copy. Press play: the loss sits on a shelf, then drops as a layer-0 head learns to look one token back and a layer-1 head learns to look just after the earlier copy of the current token.' }),
      runBar, reads, this.statusLine, this.notice, this.configBox,
      el('div', { class: 'tr-panels' },
        el('section', { class: 'tr-panel tr-wide', 'aria-label': 'Loss' },
          el('h3', { text: 'Loss' }), this.lossCanvas, this.lossCaption),
        el('section', { class: 'tr-panel tr-wide', 'aria-label': 'Attention on the probe sequence' },
          el('h3', { text: 'Every head on a probe sequence' }),
          el('p', { class: 'tr-caption muted', text: 'Rows are queries, columns keys, labelled with token ids; the probe is a held-out [noise, s, s] sequence (targets marked ·).' }),
          el('div', { class: 'tr-probe-row' },
            labelled('Your own probe (token ids)', this.probeInput),
            this.button('Use', 'train-probe-use', () => this.useProbe(false)),
            this.button('Held-out probe', 'train-probe-reset', () => this.useProbe(true)),
            this.button('Open in Heads view', 'train-open-heads', () => this.openInHeads())),
          this.attnGrid, this.attnReadout, this.entropyLine, this.scoreGradLine),
        el('section', { class: 'tr-panel', 'aria-label': 'Head scores over steps' },
          el('h3', { text: 'Head scores over steps' }), this.scoreLegend,
          el('h4', { text: 'previous token' }), this.scoreCanvases.previousToken,
          el('h4', { text: 'induction' }), this.scoreCanvases.induction,
          el('h4', { text: 'duplicate token' }), this.scoreCanvases.duplicateToken),
        el('section', { class: 'tr-panel', 'aria-label': 'Heads: scores, ablation and K-composition' },
          el('h3', { text: 'Heads now: click to ablate' }), this.headTable,
          el('h4', { text: 'K-composition (layer l head → layer l+1 head)' }), this.kcompBox)),
      exportBar, presets);
    this.wire();
    document.addEventListener('keydown', (e) => this.onKey(e));
    document.addEventListener('visibilitychange', () => this.onVisibility());
    new IntersectionObserver((es) => {
      for (const e of es) this.onIntersect(e.isIntersecting);
    }).observe(this.root);
    window.__trainTab = {
      history: this.history,
      run: () => this.run,
      step: () => this.step,
      stepsPerSec: () => this.stepsPerSec,
      gflops: () => this.gflops,
      frames: this.frames,
      drawMs: this.drawMs,
      compare: () => (this.cmp ? this.cmp.history.lossArray() : null),
      published: () => getTrainedModel()?.step ?? null,
      phaseAt: { crossed50: null, crossed90: null, ms90: null },
    };
  }

  private button(text: string, testid: string, on: () => void): HTMLButtonElement {
    const b = el('button', { type: 'button', class: 'btn small', 'data-testid': testid, text });
    b.addEventListener('click', on);
    return b;
  }

  private get ts(): TrainState | null {
    return this.ctx ? trainOf(this.ctx.state) : null;
  }

  private patch(p: Partial<TrainState>): void {
    const t = this.ts;
    if (!t || !this.ctx) return;
    this.ctx.update(trainPatch({ ...t, ...p }));
  }

  private wire(): void {
    this.playBtn.addEventListener('click', () => this.togglePlay());
    this.step1.addEventListener('click', () => this.runSteps(1));
    this.step10.addEventListener('click', () => this.runSteps(10));
    this.resetBtn.addEventListener('click', () => this.reset('Reset: same seeds, so the same run again from step 0.'));
    this.speed.addEventListener('change', () => this.patch({ speed: Number(this.speed.value) }));
    this.compareSel.addEventListener('change', () => this.patch({ compare: this.compareSel.value as TrainState['compare'] }));
    const num = (input: HTMLInputElement, key: keyof TrainState) =>
      input.addEventListener('change', () => {
        if (input.value.trim() === '') return;
        this.patch({ [key]: Number(input.value) } as Partial<TrainState>);
      });
    num(this.until, 'until');
    num(this.untilAcc, 'untilAcc');
    num(this.lr, 'lr');
    const c = this.cfg;
    for (const k of ['vocab', 'seqLen', 'layers', 'kvHeads', 'dModel', 'initStd', 'dropout', 'batch', 'weightDecay', 'seed', 'dataSeed'] as const) num(c[k], k);
    // Heads: K/V heads follow when they were equal (plain multi-head stays plain, not GQA).
    c.heads.addEventListener('change', () => {
      const t = this.ts;
      const n = Number(c.heads.value);
      if (!t || c.heads.value.trim() === '' || !Number.isFinite(n)) return;
      this.patch(t.kvHeads === t.heads ? { heads: n, kvHeads: n } : { heads: n });
    });
    c.task.addEventListener('change', () => this.patch({ task: c.task.value as TrainState['task'] }));
    c.positional.addEventListener('change', () => this.patch({ positional: c.positional.value as TrainState['positional'] }));
    c.kernel.addEventListener('change', () => this.patch({ kernel: c.kernel.value as TrainState['kernel'] }));
    c.layerNorm.addEventListener('change', () => this.patch({ layerNorm: c.layerNorm.checked }));
    c.scale.addEventListener('change', () => {
      const v = c.scale.value.trim();
      this.patch({ scale: v === 'sqrt' || v === 'none' ? v : Number(v) });
    });
  }

  // ---------- the run ----------

  private start(t: TrainState, note: string): void {
    this.client.start(trainerConfig(t), EVAL_EVERY, SNAP_EVERY);
    this.built = { ...t };
    this.history = new History();
    if (window.__trainTab) {
      window.__trainTab.history = this.history;
      window.__trainTab.phaseAt = { crossed50: null, crossed90: null, ms90: null };
    }
    this.snap = null;
    this.step = 0;
    this.evalLoss = NaN;
    this.evalAcc = NaN;
    this.ablated.clear();
    this.phase = null;
    this.rate = { steps: 0, wallMs: 0, trainMs: 0, flops: flopsPerStep(t) };
    this.stepsPerSec = 0;
    this.gflops = 0;
    this.playMsTotal = 0;
    this.ms90 = null;
    this.lastPublished = 0;
    this.resetNote = note;
    this.startCompare(t);
    this.setRun('loading');
    this.hideNotice();
    this.schedule();
  }

  private startCompare(t: TrainState): void {
    this.cmp?.client.stop();
    this.cmp = null;
    const c = compareSettings(t);
    if (!c) return;
    const label = COMPARE_LABEL[t.compare];
    const cmp = { client: null as unknown as TrainClient, history: new History(), run: 'loading' as RunState, label, step: 0 };
    cmp.client = new TrainClient((m) => {
      if (this.cmp !== cmp) return;
      if (m.kind === 'ready') {
        cmp.run = 'idle';
        cmp.history.pushEval(0, m.evalLoss, m.evalAccuracy);
        if (t.lr !== m.config.lr) cmp.client.send({ kind: 'lr', lr: t.lr });
        if (this.run === 'running') this.sendRun(cmp.client, null);
      } else if (m.kind === 'progress') {
        cmp.history.pushLosses(m.firstStep, m.losses, m.gradNorms);
        for (const e of m.evals) cmp.history.pushEval(e.step, e.loss, e.accuracy);
        cmp.step = m.step;
        this.schedule();
      } else if (m.kind === 'stopped') {
        cmp.run = m.reason === 'diverged' ? 'diverged' : 'stopped';
      } else if (m.kind === 'refused' || m.kind === 'fatal') {
        cmp.run = 'refused';
        this.status(`The comparison run (${label}) was refused: ${m.message}`);
      }
    });
    cmp.client.start(trainerConfig(c), EVAL_EVERY, SNAP_EVERY);
    this.cmp = cmp;
  }

  /** Both runs get the same run/lr/speed/stop messages (each stops at its own accuracy). */
  private sendRun(client: TrainClient, steps: number | null): void {
    const t = this.ts;
    if (!t) return;
    client.send(steps === null ? { kind: 'run', steps: null, until: t.until, untilAcc: t.untilAcc, speed: t.speed } : { kind: 'run', steps, until: 0, untilAcc: 0, speed: 0 });
  }

  private toBoth(m: Parameters<TrainClient['send']>[0]): void {
    this.client.send(m);
    this.cmp?.client.send(m);
  }

  private reset(note: string): void {
    const t = this.ts;
    if (!t) return;
    this.wantPlay = false;
    this.autoPaused = false;
    this.start(t, note);
  }

  private togglePlay(): void {
    if (this.run === 'running') this.pause();
    else this.play();
  }

  private play(): void {
    const t = this.ts;
    if (!t) return;
    if (this.run === 'loading') {
      this.wantPlay = true;
      return;
    }
    if (this.run !== 'idle' && this.run !== 'stopped' && this.run !== 'diverged') return;
    if (this.run === 'diverged') this.hideNotice(); // going on from the last good step (e.g. after a lower rate)
    if (t.until > 0 && this.step >= t.until) {
      this.status(`Already at step ${this.step}, the stop step. Raise “Stop at step” (or set it to 0) to go on.`);
      return;
    }
    this.sendRun(this.client, null);
    if (this.cmp && (this.cmp.run === 'idle' || this.cmp.run === 'stopped')) this.sendRun(this.cmp.client, null);
    this.startRun();
  }

  private runSteps(n: number): void {
    const t = this.ts;
    if (!t || (this.run !== 'idle' && this.run !== 'stopped' && this.run !== 'diverged')) return;
    this.hideNotice();
    this.sendRun(this.client, n);
    if (this.cmp && (this.cmp.run === 'idle' || this.cmp.run === 'stopped')) this.sendRun(this.cmp.client, n);
    this.startRun();
  }

  private startRun(): void {
    this.autoPaused = false;
    this.playStartedAt = performance.now();
    this.rate.steps = 0;
    this.rate.wallMs = 0;
    this.rate.trainMs = 0;
    this.setRun('running');
    this.lastFrame = 0;
    this.schedule();
  }

  private pause(auto = false): void {
    if (this.run !== 'running') return;
    this.autoPaused = auto;
    this.toBoth({ kind: 'pause' });
  }

  private setRun(r: RunState): void {
    if (r !== 'running' && this.run === 'running') this.playMsTotal += performance.now() - this.playStartedAt;
    this.run = r;
    const busy = r === 'running';
    this.playBtn.textContent = busy ? 'Pause' : 'Play';
    this.playBtn.setAttribute('aria-pressed', busy ? 'true' : 'false');
    const can = r === 'idle' || r === 'stopped' || r === 'diverged';
    this.playBtn.disabled = !(can || busy || r === 'loading');
    this.step1.disabled = !can;
    this.step10.disabled = !can;
    this.root.dataset.run = r;
  }

  private onMessage(m: TrainMessage): void {
    switch (m.kind) {
      case 'ready': {
        this.probe = m.probe;
        this.probeMask = m.probeMask;
        this.snap = m.snapshot;
        this.config = m.config;
        this.evalLoss = m.evalLoss;
        this.evalAcc = m.evalAccuracy;
        this.history.pushEval(0, m.evalLoss, m.evalAccuracy);
        this.history.pushScores(m.snapshot.scores);
        this.buildHeatmaps();
        this.setRun('idle');
        this.status(`${this.resetNote ? this.resetNote + ' ' : ''}Ready (module and trainer started in ${fmt(m.startMs, 0)} ms). Press Play or Space.`);
        this.resetNote = '';
        const t = this.ts;
        if (t && t.lr !== this.config.lr) this.client.send({ kind: 'lr', lr: t.lr });
        if (this.wantPlay) {
          this.wantPlay = false;
          if (this.visible) this.play();
          else this.autoPaused = true;
        }
        break;
      }
      case 'refused':
        if (this.run === 'loading') {
          this.setRun('refused');
          this.showNotice(`These settings were refused: ${m.message}${m.field ? ` (field: ${m.field})` : ''}. Change them to train.`, false);
        } else this.showNotice(`Refused: ${m.message}`, false);
        break;
      case 'progress': {
        this.history.pushLosses(m.firstStep, m.losses, m.gradNorms);
        for (const e of m.evals) this.history.pushEval(e.step, e.loss, e.accuracy);
        for (const s of m.scores) this.history.pushScores(s);
        this.step = m.step;
        if (m.evals.length > 0) {
          const e = m.evals[m.evals.length - 1];
          this.evalLoss = e.loss;
          this.evalAcc = e.accuracy;
        }
        if (m.snapshot) this.snap = m.snapshot;
        if (m.losses.length > 0) {
          this.rate.steps += m.losses.length;
          this.rate.wallMs += m.wallMs;
          this.rate.trainMs += m.trainMs;
          if (this.rate.wallMs > 0) this.stepsPerSec = (this.rate.steps / this.rate.wallMs) * 1000;
          if (this.rate.trainMs > 0) this.gflops = (this.rate.steps * this.rate.flops) / (this.rate.trainMs * 1e6);
        }
        this.trackPhase();
        if (this.step - this.lastPublished >= PUBLISH_EVERY) void this.publish();
        this.schedule();
        break;
      }
      case 'stopped': {
        this.setRun(m.reason === 'diverged' ? 'diverged' : 'stopped');
        const why = {
          paused: 'Paused', steps: 'Stepped', until: 'Stopped at the stop step', accuracy: 'Stopped: accuracy reached the target', diverged: 'Diverged',
        }[m.reason];
        if (m.reason === 'diverged') this.showNotice(`${m.message ?? 'The loss became non-finite.'} Lower the learning rate and press Play to go on from there, or Reset.`, true);
        else this.status(`${why} at step ${m.step}.${this.autoPaused ? ' (Paused while out of view; resumes when back.)' : ''}`);
        void this.publish();
        this.schedule();
        break;
      }
      case 'ablated':
        this.snap = m.snapshot;
        this.evalLoss = m.evalLoss;
        this.evalAcc = m.evalAccuracy;
        this.schedule();
        break;
      case 'probe':
        this.probe = m.probe;
        this.probeMask = m.probeMask;
        this.snap = m.snapshot;
        this.buildHeatmaps();
        this.status(`Probe: ${m.probe.length} tokens.`);
        break;
      case 'probeRefused':
        this.status(`That probe was refused: ${m.message}`);
        break;
      case 'fatal':
        this.setRun('error');
        this.showNotice(m.message, true);
        break;
    }
  }

  private trackPhase(): void {
    const h = this.history;
    const dbg = window.__trainTab;
    const c50 = crossing(h, 0.5);
    const c90 = crossing(h, 0.9);
    if (c90 !== null && this.ms90 === null) this.ms90 = this.playMsTotal + (this.run === 'running' ? performance.now() - this.playStartedAt : 0);
    if (dbg && dbg.history === h) dbg.phaseAt = { crossed50: c50, crossed90: c90, ms90: this.ms90 };
    if (!Number.isFinite(this.evalAcc)) return;
    const p = phaseOf(this.evalAcc);
    if (this.phase !== null && p !== this.phase) this.ctx?.announce(`Step ${this.step}: ${PHASE_TEXT[p]}`);
    this.phase = p;
  }

  private async publish(): Promise<void> {
    this.lastPublished = this.step;
    const w = await this.client.weights();
    if (w && w.step >= 0) setTrainedModel({ config: w.config, weights: w.weights, step: w.step });
  }

  private status(text: string): void {
    this.statusLine.textContent = text;
  }

  private showNotice(text: string, offerReset: boolean): void {
    clear(this.notice);
    this.notice.append(el('span', { text }));
    if (offerReset) this.notice.append(' ', this.button('Reset', 'train-notice-reset', () => this.reset('Reset after the notice.')));
    this.notice.hidden = false;
  }

  private hideNotice(): void {
    this.notice.hidden = true;
  }

  // ---------- visibility, keyboard ----------

  private onVisibility(): void {
    if (document.hidden) {
      if (this.run === 'running') this.pause(true);
    } else this.maybeResume();
  }

  private onIntersect(on: boolean): void {
    this.visible = on;
    // Only an embed pauses when scrolled away; any page pauses when its tab is hidden.
    if (!document.documentElement.classList.contains('embed')) return;
    if (!on && this.run === 'running') this.pause(true);
    else if (on) this.maybeResume();
  }

  private maybeResume(): void {
    if (this.autoPaused && !document.hidden && this.root.isConnected) {
      this.autoPaused = false;
      if (this.run === 'stopped' || this.run === 'idle') this.play();
    }
  }

  private onKey(e: KeyboardEvent): void {
    if (e.key !== ' ' || !this.root.isConnected || e.ctrlKey || e.metaKey || e.altKey) return;
    const t = e.target as HTMLElement | null;
    if (t && t.closest('input, select, textarea, button, a, summary, [role="application"], [role="button"], [role="tab"]')) return;
    e.preventDefault();
    this.togglePlay();
  }

  // ---------- view ----------

  render(ctx: TrainContext): void {
    this.ctx = ctx;
    const t = trainOf(ctx.state);
    // The experiment cards' links are written with the page's link writer, which the first
    // render brings.
    for (const a of this.root.querySelectorAll<HTMLAnchorElement>('a[data-train-preset]:not([href])')) {
      const p = TRAIN_PRESETS.find((x) => x.id === a.dataset.trainPreset);
      if (p) a.href = trainPresetHash(p, (x) => ctx.hashOf(x));
    }
    if (!this.built) {
      this.wantPlay = t.play;
      this.start(t, '');
    } else {
      const changed = archChanged(this.built, t);
      if (changed.length > 0) {
        const wasRunning = this.run === 'running';
        this.wantPlay = wasRunning;
        this.start(t, `Architecture changed (${changed.join(', ')}): training restarted from step 0.`);
      } else {
        if (t.lr !== this.built.lr) this.toBoth({ kind: 'lr', lr: t.lr });
        if (t.speed !== this.built.speed) this.toBoth({ kind: 'speed', speed: t.speed });
        if (t.until !== this.built.until || t.untilAcc !== this.built.untilAcc) this.toBoth({ kind: 'stop', until: t.until, untilAcc: t.untilAcc });
        if (t.compare !== this.built.compare) {
          this.startCompare(t);
          if (this.cmp && this.step > 0) this.status(`Comparison (${COMPARE_LABEL[t.compare]}) started from step 0; Reset to run both from the start together.`);
        }
        this.built = { ...t };
      }
    }
    this.syncControls(t);
    // the maps are sized to the width: rebuild them when it changed noticeably
    if (this.maps.length > 0 && Math.abs(ctx.width - this.builtWidth) > 40) this.buildHeatmaps();
    this.schedule();
  }

  private syncControls(t: TrainState): void {
    const setNum = (i: HTMLInputElement, v: number) => {
      if (document.activeElement !== i || Number(i.value) !== v) i.value = String(v);
    };
    this.compareSel.value = t.compare;
    this.speed.value = String(t.speed);
    if (this.speed.value !== String(t.speed)) {
      this.speed.append(el('option', { value: String(t.speed), text: `${t.speed} steps/s` }));
      this.speed.value = String(t.speed);
    }
    setNum(this.until, t.until);
    setNum(this.untilAcc, t.untilAcc);
    setNum(this.lr, t.lr);
    const c = this.cfg;
    c.task.value = t.task;
    c.positional.value = t.positional;
    c.kernel.value = t.kernel;
    c.layerNorm.checked = t.layerNorm;
    c.scale.value = String(t.scale);
    for (const k of ['vocab', 'seqLen', 'layers', 'heads', 'kvHeads', 'dModel', 'initStd', 'dropout', 'batch', 'weightDecay', 'seed', 'dataSeed'] as const) setNum(c[k], t[k]);
  }

  heatmaps(): { name: string; heatmap: Heatmap }[] {
    return this.maps;
  }

  private schedule(): void {
    if (this.rafPending) return;
    this.rafPending = true;
    requestAnimationFrame((now) => {
      this.rafPending = false;
      if (this.run === 'running') {
        if (this.lastFrame > 0) {
          this.frames.push(now - this.lastFrame);
          if (this.frames.length > 5000) this.frames.splice(0, 1000);
        }
        this.lastFrame = now;
      } else this.lastFrame = 0;
      const t0 = performance.now();
      this.draw();
      this.drawMs.push(performance.now() - t0);
      if (this.drawMs.length > 5000) this.drawMs.splice(0, 1000);
    });
  }

  /** T is the probe's length (a typed probe may be shorter than seqLen). */
  /**
   * "Open in Heads view": the weights drawn here (tr.attention on the probe, this step) go to the
   * Heads view through an in-page store; nothing enters the link (it cannot carry weights).
   */
  private openInHeads(): void {
    const s = this.snap;
    const { L, H, T } = this.dims();
    if (!s || !this.ctx || s.attention.length !== L * H * T * T) return;
    const kv = (this.config as { kvHeads?: number }).kvHeads ?? H;
    // Start at the last layer: in the default run that is where the induction head is.
    setTrainedAttention({ weights: s.attention.slice(), tokens: Array.from(this.probe), layers: L, heads: H, kvHeads: kv, step: this.step, layer: L - 1 });
    this.ctx.update({ page: { view: 'heads', head: 0 } });
  }

  private dims(): { L: number; H: number; T: number } {
    const c = this.config as { layers?: number; heads?: number };
    return { L: c.layers ?? 0, H: c.heads ?? 0, T: this.probe.length };
  }

  private buildHeatmaps(): void {
    const { L, H, T } = this.dims();
    clear(this.attnGrid);
    this.maps = [];
    const width = this.ctx?.width ?? 600;
    this.builtWidth = width;
    // H maps per row (one per layer) while each can be at least 150 px; else fewer per row
    const perRow = Math.max(1, Math.min(H, Math.floor((width - 20) / 230)));
    const size = Math.max(120, Math.min(T * 12, 300, Math.floor((width - 20) / perRow) - 80));
    this.attnGrid.style.setProperty('--tr-cols', String(perRow));
    for (let l = 0; l < L; l++) {
      for (let h = 0; h < H; h++) {
        const name = `layer-${l}-head-${h}`;
        const hm = new Heatmap({
          label: `Layer ${l} head ${h} attention on the probe`, maxSize: size, showLabels: true, interactive: true,
          describe: (i, j, v, f) => f ? `L${l} H${h}: query ${this.probe[i]} (pos ${i}) → key ${this.probe[j]} (pos ${j}): masked (causal)` : `L${l} H${h}: query ${this.probe[i]} (pos ${i}) → key ${this.probe[j]} (pos ${j}): ${fmt(v, 3)}`,
          onCell: (text) => (this.attnReadout.textContent = text),
        });
        this.maps.push({ name, heatmap: hm });
        this.attnGrid.append(el('figure', { class: 'tr-head', 'data-head': `${l}-${h}` }, el('figcaption', { text: `layer ${l} · head ${h}` }), hm.root));
      }
    }
    clear(this.kcompBox);
    this.kcompMaps = [];
    for (let l = 0; l + 1 < L; l++) {
      const hm = new Heatmap({
        label: `K-composition from layer ${l} heads into layer ${l + 1} heads`, maxSize: Math.min(160, 40 * H), showLabels: true, interactive: true,
        axisTitles: [`layer ${l + 1} head →`, `layer ${l} head ↓`],
        describe: (i, j, v) => `layer ${l} head ${i} → layer ${l + 1} head ${j}: K-composition ${fmt(v, 3)}`,
        onCell: (text) => (this.attnReadout.textContent = text),
      });
      this.kcompMaps.push(hm);
      this.maps.push({ name: `kcomp-layer-${l}-to-${l + 1}`, heatmap: hm });
      this.kcompBox.append(hm.root);
    }
    if (L < 2) this.kcompBox.append(el('p', { class: 'muted', text: 'One layer: no composition.' }));
    this.drawSnapshot(true);
    this.fillPngSelect();
  }

  private fillPngSelect(): void {
    const keep = this.pngSelect.value;
    clear(this.pngSelect);
    for (const n of ['loss-curve', 'scores-previous-token', 'scores-induction', 'scores-duplicate-token', ...this.maps.map((h) => h.name)]) this.pngSelect.append(el('option', { value: n, text: n }));
    if ([...this.pngSelect.options].some((o) => o.value === keep)) this.pngSelect.value = keep;
  }

  private drawSnapshot(force = false): void {
    const s = this.snap;
    const { L, H, T } = this.dims();
    if (!s || this.maps.length < L * H || (s === this.drawnSnap && !force)) return;
    this.drawnSnap = s;
    const labels = Array.from(this.probe, (tok, i) => `${tok}${this.probeMask[i] ? '·' : ''}`);
    const forbidden = new Uint8Array(T * T);
    for (let i = 0; i < T; i++) for (let j = i + 1; j < T; j++) forbidden[i * T + j] = 1;
    const ents: string[] = [];
    for (let k = 0; k < L * H; k++) {
      const values = s.attention.subarray(k * T * T, (k + 1) * T * T);
      this.maps[k].heatmap.update({ rows: T, cols: T, values, forbidden, lo: 0, hi: 1, rowLabels: labels, colLabels: labels });
      let e = 0;
      for (let i = 0; i < T; i++) for (let j = 0; j <= i; j++) {
        const p = values[i * T + j];
        if (p > 0) e -= p * Math.log(p);
      }
      ents.push(`L${Math.floor(k / H)}H${k % H} ${fmt(e / T, 2)}`);
    }
    this.entropyLine.textContent = `Mean attention entropy per row (nats; uniform over the keys would be up to ln ${T} = ${fmt(Math.log(T), 2)}): ${ents.join(' · ')}`;
    // The gradient that reaches the scores, from the module's backward pass on the held-out batch.
    const sg = Array.from(s.scoreGrad, (g, k) => `L${Math.floor(k / H)}H${k % H} ${sci(g)}`);
    const wq = Array.from(s.wqGradNorm, (g, l) => `L${l} ${sci(g)}`);
    this.scoreGradLine.textContent = `Gradient reaching the scores, mean |∂loss/∂S| over the causal cells of the held-out batch (S = the softmax input): ${sg.join(' · ')}. For scale: ‖∂loss/∂W_Q‖ per layer ${wq.join(' · ')}.`;
    for (let l = 0; l + 1 < L; l++) {
      const v = s.scores.kComposition.subarray(l * H * H, (l + 1) * H * H);
      const lab = Array.from({ length: H }, (_, h) => `h${h}`);
      this.kcompMaps[l]?.update({ rows: H, cols: H, values: v, lo: 0, hi: Math.max(0.05, ...v), rowLabels: lab, colLabels: lab });
    }
    this.drawHeadTable(s.scores);
  }

  private drawHeadTable(sc: HeadScores): void {
    const { L, H } = this.dims();
    clear(this.headTable);
    this.headTable.append(el('caption', { class: 'muted', text: `At step ${sc.step}. Held-out loss ${fmt(sc.loss, 3)}; “without” = the loss with that head's output zeroed.` }),
      el('thead', {}, el('tr', {}, ...['head', 'prev', 'induct', 'dup', 'loss without', ''].map((t) => el('th', { scope: 'col', text: t })))));
    const body = el('tbody');
    for (let l = 0; l < L; l++) {
      for (let h = 0; h < H; h++) {
        const k = l * H + h;
        const key = `${l}-${h}`;
        const on = this.ablated.has(key);
        const b = el('button', { type: 'button', class: 'btn small' + (on ? ' tr-ablated' : ''), 'data-testid': `train-ablate-${key}`, 'aria-pressed': on ? 'true' : 'false', text: on ? 'restore' : 'ablate', 'aria-label': `${on ? 'Restore' : 'Ablate'} layer ${l} head ${h}` });
        b.addEventListener('click', () => this.toggleAblation(l, h));
        const cell = (v: number) => el('td', { text: fmt(v, 2), class: v >= 0.5 ? 'tr-strong' : '' });
        body.append(el('tr', {},
          el('th', { scope: 'row' }, swatch(HEAD_COLORS[k % HEAD_COLORS.length]), `L${l} H${h}`),
          cell(sc.previousToken[k]), cell(sc.induction[k]), cell(sc.duplicateToken[k]),
          el('td', { text: `${fmt(sc.ablationLoss[k], 3)} (${sc.ablationLoss[k] - sc.loss >= 0 ? '+' : ''}${fmt(sc.ablationLoss[k] - sc.loss, 2)})` }),
          el('td', {}, b)));
      }
    }
    this.headTable.append(body);
  }

  private useProbe(heldOut: boolean): void {
    if (heldOut) {
      this.probeInput.value = '';
      this.client.send({ kind: 'probe', tokens: null });
      return;
    }
    const parts = this.probeInput.value.trim().split(/[\s,]+/u).filter((x) => x !== '');
    const ids = parts.map((x) => (/^\d{1,7}$/.test(x) ? Number(x) : NaN));
    const V = Number(this.config.vocab ?? 0);
    const T = Number(this.config.seqLen ?? 0);
    if (ids.length === 0 || ids.some((x) => !Number.isInteger(x) || x >= V)) {
      this.status(`A probe is whole token ids 0…${V - 1}, separated by spaces.`);
      return;
    }
    if (ids.length > T) {
      this.status(`A probe holds at most ${T} tokens (the sequence length).`);
      return;
    }
    this.client.send({ kind: 'probe', tokens: ids });
  }

  private toggleAblation(l: number, h: number): void {
    if (this.run === 'running' || this.run === 'loading') {
      this.status('Pause first to ablate a head (an ablated head stays off while training too).');
      return;
    }
    const key = `${l}-${h}`;
    const on = !this.ablated.has(key);
    if (on) this.ablated.add(key);
    else this.ablated.delete(key);
    this.client.send({ kind: 'ablate', layer: l, head: h, on });
    this.status(`${on ? 'Ablated' : 'Restored'} layer ${l} head ${h}.`);
  }

  private draw(): void {
    const h = this.history;
    const width = Math.max(260, this.ctx?.width ?? 600);
    this.readStep.textContent = String(this.step);
    this.readLoss.textContent = h.steps > 0 ? `${fmt(h.loss[h.steps - 1], 3)} (gradient norm ${fmt(h.gradNorm[h.steps - 1], 3)})` : '–';
    this.readEval.textContent = Number.isFinite(this.evalLoss) ? `loss ${fmt(this.evalLoss, 3)}, accuracy ${fmt(this.evalAcc, 3)}` : '–';
    this.readRate.textContent = this.stepsPerSec > 0 ? `${fmt(this.stepsPerSec, 0)} steps/s · ${fmt(this.gflops, 2)} GFLOP/s in training` : '';
    this.readRate.title = 'steps/s: wall clock while running (evaluation and head scores included); GFLOP/s: GEMM operations counted from the shapes, divided by the time inside train() only';
    // loss curve
    const wide = Math.min(width - 4, 1100);
    const thinL = thin(h.loss, h.steps, Math.max(50, Math.floor(wide / 2)));
    const yMax = Math.max(1, ...h.evalLoss.filter(Number.isFinite), ...thinL.y.filter(Number.isFinite).slice(0, 20));
    const series: Series[] = [
      { x: thinL.x, y: thinL.y, color: '#9aa1ad', width: 1, label: 'training loss' },
      { x: h.evalStep, y: h.evalLoss, color: '#2c5cc5', width: 2, label: 'held-out loss (repeated half)' },
      { x: h.evalStep, y: h.evalAccuracy, color: '#c2410c', width: 2, axis: 'right', label: 'held-out accuracy' },
    ];
    const cmp = this.cmp;
    if (cmp) {
      series.push({ x: cmp.history.evalStep, y: cmp.history.evalLoss, color: '#2c5cc5', width: 1.6, dash: [5, 4], label: `held-out loss, ${cmp.label}` });
      series.push({ x: cmp.history.evalStep, y: cmp.history.evalAccuracy, color: '#c2410c', width: 1.6, dash: [5, 4], axis: 'right', label: `accuracy, ${cmp.label}` });
    }
    const markers = [];
    const c50 = crossing(h, 0.5);
    const c90 = crossing(h, 0.9);
    const sd = shelfAndDrop(h.evalStep, h.evalLoss);
    if (sd) markers.push({ x: sd.drop, label: `drop ${sd.drop}`, color: '#2c5cc5' });
    if (c50 !== null) markers.push({ x: c50, label: `acc 0.5 @ ${c50}`, color: '#c2410c' });
    if (c90 !== null) markers.push({ x: c90, label: `acc 0.9 @ ${c90}`, color: '#9a3412' });
    const xMax = Math.max(50, this.ts?.until || 0, Math.ceil(h.steps * 1.1));
    drawChart(this.lossCanvas, {
      width: wide, height: 220, xMax, yMin: 0, yMax: Math.ceil(yMax * 2) / 2, yLabel: 'loss (nats)', rightLabel: 'accuracy', xLabel: 'step',
      series, markers, bands: sd ? [{ x0: sd.shelfFrom, x1: sd.shelfTo, y: sd.shelfLoss, label: 'shelf', color: '#2c5cc5' }] : [],
    });
    this.lossCaption.textContent = `Grey: training loss per step (${h.steps} steps${h.steps > thinL.x.length ? `, drawn as ${thinL.x.length} bucket means` : ''}). Blue: held-out loss on the repeated half, every ${EVAL_EVERY} steps. Orange: held-out accuracy (right axis).` +
      (sd ? ` Shelf at ${fmt(sd.shelfLoss, 2)} nats (steps ${sd.shelfFrom}–${sd.shelfTo}), steepest drop at step ${sd.drop}.` : '') +
      (c90 !== null ? ` Accuracy ≥ 0.9 from step ${c90}${this.ms90 !== null ? ` (${fmt(this.ms90 / 1000, 1)} s of training)` : ''}.` : '') +
      (cmp ? ` Dashed: the same data seed, ${cmp.label} (step ${cmp.step}${crossing(cmp.history, 0.9) !== null ? `, accuracy ≥ 0.9 from step ${crossing(cmp.history, 0.9)}` : ', accuracy not yet 0.9'}).` : '');
    this.lossCanvas.setAttribute('aria-label', `Loss curve: ${this.lossCaption.textContent}`);
    // head scores over steps
    const { L, H } = this.dims();
    const sw = width < 640 ? wide : Math.min(520, Math.floor((width - 40) / 2));
    const sx = h.scores.map((s) => s.step);
    for (const key of ['previousToken', 'induction', 'duplicateToken'] as const) {
      const ser: Series[] = [];
      for (let k = 0; k < L * H; k++) ser.push({ x: sx, y: h.scores.map((s) => s[key][k]), color: HEAD_COLORS[k % HEAD_COLORS.length], width: 1.8 });
      drawChart(this.scoreCanvases[key], { width: sw, height: 120, xMax, yMin: 0, yMax: 1, yLabel: 'score', series: ser });
    }
    if (this.scoreLegend.childElementCount !== L * H) {
      clear(this.scoreLegend);
      for (let k = 0; k < L * H; k++) this.scoreLegend.append(el('span', {}, swatch(HEAD_COLORS[k % HEAD_COLORS.length]), `L${Math.floor(k / H)} H${k % H}`));
    }
    this.drawSnapshot();
  }

  // ---------- export ----------

  private async exportJson(): Promise<void> {
    const w = await this.client.weights();
    const doc = exportDoc(this.config, this.history, this.snap?.scores ?? null, this.dims(), w ? w.weights : null, this.ts);
    download('training-run.json', JSON.stringify(doc), 'application/json');
  }

  private async savePng(): Promise<void> {
    const name = this.pngSelect.value;
    const canvas = name === 'loss-curve' ? this.lossCanvas : name === 'scores-previous-token' ? this.scoreCanvases.previousToken : name === 'scores-induction' ? this.scoreCanvases.induction : name === 'scores-duplicate-token' ? this.scoreCanvases.duplicateToken : null;
    if (canvas) {
      const blob = await new Promise<Blob | null>((r) => canvas.toBlob(r, 'image/png'));
      if (blob) download(`${name}.png`, blob);
      return;
    }
    const item = this.maps.find((x) => x.name === name);
    const d = item?.heatmap.current;
    if (!item || !d) return;
    const blob = await heatmapPng(item.heatmap.dataCanvas, d, `Attention Playground — ${name} at step ${this.step}`);
    if (blob) download(`${name}.png`, blob);
  }

  private async copyStepLink(): Promise<void> {
    const t = this.ts;
    if (!t) return;
    const u = new URL(location.href);
    u.hash = trainHash({ ...t, until: this.step, play: true }, (p) => this.ctx!.hashOf(p));
    u.search = '';
    try {
      await navigator.clipboard.writeText(u.toString());
      this.status(`Link copied: it replays this run to step ${this.step}.`);
    } catch {
      window.prompt('Copy the link:', u.toString());
    }
  }
}

export const trainView: ViewFactory<TrainContext, 'train', false> = { id: 'train', label: 'Train', needsResult: false, create: () => new TrainView() };
