// The Train tab's controls: the run bar (Play, Step, Reset, speed, stop conditions, learning
// rate, Compare), the readouts under it, the status line and notice, and the "Model and data"
// box. It turns edits into settings patches and shows the settings and the session's state; it
// holds no run state of its own.
import { el, clear, fmt } from '../ui/dom';
import {
  COMPARE_LABEL,
  NORMALIZER_LABEL,
  POSITIONAL_LABEL,
  TASK_LABEL,
  TRAIN_COMPARES,
  TRAIN_KERNELS,
  TRAIN_LIMITS,
  TRAIN_NORMALIZERS,
  TRAIN_POSITIONAL,
  TRAIN_TASKS,
  type TrainState,
} from './config';
import type { RunState, TrainSession } from './session';
import { num } from './numbers';
import { defaultWorkers } from './pool';

export function labelled(label: string, control: HTMLElement, hint?: string): HTMLElement {
  return el(
    'label',
    { class: 'tr-field' },
    el('span', { text: label }),
    control,
    hint ? el('span', { class: 'tr-hint', text: hint }) : null,
  );
}
export function smallButton(text: string, testid: string, on: () => void): HTMLButtonElement {
  const b = el('button', { type: 'button', class: 'btn small', 'data-testid': testid, text });
  b.addEventListener('click', on);
  return b;
}
function numInput(testid: string, min: number, max: number, step: number | 'any'): HTMLInputElement {
  return el('input', { type: 'number', min, max, step, 'data-testid': testid, inputmode: 'decimal' });
}
function select(testid: string, options: readonly (readonly [string, string])[]): HTMLSelectElement {
  return el('select', { 'data-testid': testid }, ...options.map(([v, t]) => el('option', { value: v, text: t })));
}

export interface ControlsActions {
  togglePlay(): void;
  runSteps(n: number): void;
  reset(): void;
  /** lay a patch over the current settings */
  patch(p: Partial<TrainState>): void;
  settings(): TrainState | null;
}

export class Controls {
  readonly runBar: HTMLElement;
  readonly reads: HTMLElement;
  readonly configBox: HTMLDetailsElement;
  readonly statusLine = el('p', { class: 'tr-status', 'data-testid': 'train-status', role: 'status' });
  /** The last phase change, in view (screen readers hear it from the page's live region). */
  readonly phaseLine = el('p', { class: 'tr-status tr-phase', 'data-testid': 'train-phase', hidden: true });
  readonly notice = el('div', {
    class: 'banner error tr-notice',
    role: 'alert',
    'data-testid': 'train-notice',
    hidden: true,
  });

  private playBtn = el('button', {
    type: 'button',
    class: 'btn primary',
    'data-testid': 'train-play',
    text: 'Play',
    'aria-keyshortcuts': 'Space',
  });
  private step1 = el('button', { type: 'button', class: 'btn', 'data-testid': 'train-step-1', text: 'Step 1' });
  private step10 = el('button', { type: 'button', class: 'btn', 'data-testid': 'train-step-10', text: 'Step 10' });
  private resetBtn = el('button', { type: 'button', class: 'btn', 'data-testid': 'train-reset', text: 'Reset' });
  private compareSel = select(
    'train-compare',
    TRAIN_COMPARES.map((c) => [c, COMPARE_LABEL[c]] as const),
  );
  private speed = select('train-speed', [
    ['0', 'as fast as possible'],
    ['10', '10 steps/s'],
    ['30', '30 steps/s'],
    ['60', '60 steps/s'],
    ['120', '120 steps/s'],
    ['300', '300 steps/s'],
  ]);
  private until = numInput('train-until', 0, TRAIN_LIMITS.maxUntil, 1);
  private untilAcc = numInput('train-until-acc', 0, 1, 0.05);
  private lr = numInput('train-lr', TRAIN_LIMITS.minLr, TRAIN_LIMITS.maxLr, 'any');
  // 0 = one per core; the bits are the same for every count (fixed shards), only the speed moves.
  private workers = select('train-workers', [
    [
      '0',
      `one per core (${defaultWorkers(typeof navigator === 'undefined' ? undefined : navigator.hardwareConcurrency)})`,
    ],
    ['1', '1'],
    ['2', '2'],
    ['3', '3'],
    ['4', '4'],
  ]);
  private cfg = {
    task: select(
      'train-task',
      TRAIN_TASKS.map((t) => [t, TASK_LABEL[t]] as const),
    ),
    vocab: numInput('train-vocab', 2, TRAIN_LIMITS.maxVocab, 1),
    seqLen: numInput('train-seqlen', TRAIN_LIMITS.minSeqLen, TRAIN_LIMITS.maxSeqLen, 2),
    layers: numInput('train-layers', 1, TRAIN_LIMITS.maxLayers, 1),
    heads: numInput('train-heads', 1, TRAIN_LIMITS.maxHeads, 1),
    kvHeads: numInput('train-kvheads', 1, TRAIN_LIMITS.maxHeads, 1),
    dModel: numInput('train-dmodel', 1, TRAIN_LIMITS.maxDModel, 1),
    positional: select(
      'train-positional',
      TRAIN_POSITIONAL.map((p) => [p, POSITIONAL_LABEL[p]] as const),
    ),
    normalizer: select(
      'train-normalizer',
      TRAIN_NORMALIZERS.map((n) => [n, NORMALIZER_LABEL[n]] as const),
    ),
    qkNorm: el('input', { type: 'checkbox', 'data-testid': 'train-qknorm' }),
    sigmoidBias: el('input', { type: 'text', 'data-testid': 'train-sbias', size: 6, spellcheck: 'false' }),
    layerNorm: el('input', { type: 'checkbox', 'data-testid': 'train-layernorm' }),
    scale: el('input', { type: 'text', 'data-testid': 'train-scale', size: 6, spellcheck: 'false' }),
    initStd: numInput('train-initstd', 0, TRAIN_LIMITS.maxInitStd, 'any'),
    dropout: numInput('train-dropout', 0, TRAIN_LIMITS.maxDropout, 0.05),
    batch: numInput('train-batch', 1, TRAIN_LIMITS.maxBatch, 1),
    weightDecay: numInput('train-wd', 0, TRAIN_LIMITS.maxWeightDecay, 'any'),
    kernel: select(
      'train-kernel',
      TRAIN_KERNELS.map((k) => [k, k === 'naive' ? 'naive (stores weights)' : 'tiled (online softmax)'] as const),
    ),
    seed: numInput('train-seed', 0, TRAIN_LIMITS.maxSeed, 1),
    dataSeed: numInput('train-dseed', -1, TRAIN_LIMITS.maxSeed, 1),
  };
  private readStep = el('span', { class: 'tr-val', 'data-testid': 'train-step' });
  private readLoss = el('span', { class: 'tr-val', 'data-testid': 'train-loss' });
  private readEval = el('span', { class: 'tr-val', 'data-testid': 'train-eval' });
  private readRate = el('span', { class: 'tr-val', 'data-testid': 'train-rate' });

  constructor(private readonly act: ControlsActions) {
    this.runBar = el(
      'div',
      { class: 'tr-bar', role: 'group', 'aria-label': 'Training' },
      this.playBtn,
      this.step1,
      this.step10,
      this.resetBtn,
      labelled('Speed', this.speed),
      labelled('Stop at step', this.until, '0 = at a plateau'),
      labelled('or accuracy ≥', this.untilAcc, '0 = off'),
      labelled('Learning rate', this.lr, 'live'),
      labelled('Workers', this.workers, 'same losses, faster'),
      labelled('Compare with', this.compareSel, 'same data seed, dashed'),
    );
    this.reads = el(
      'div',
      { class: 'tr-reads' },
      el('span', {}, 'step ', this.readStep),
      el('span', {}, 'loss ', this.readLoss),
      el('span', {}, 'held-out ', this.readEval),
      el('span', {}, this.readRate),
    );
    const c = this.cfg;
    this.configBox = el(
      'details',
      { class: 'tr-config', 'data-testid': 'train-config' },
      el('summary', { text: 'Model and data (changing these restarts training)' }),
      el(
        'div',
        { class: 'tr-config-grid' },
        labelled('Task', c.task),
        labelled('Vocabulary', c.vocab),
        labelled('Sequence length', c.seqLen),
        labelled('Layers', c.layers),
        labelled('Heads', c.heads),
        labelled('K/V heads', c.kvHeads, 'divides heads'),
        labelled('d_model', c.dModel, 'divisible by heads'),
        labelled('Positions', c.positional),
        labelled('Normalizer', c.normalizer, 'replaces softmax'),
        el(
          'label',
          { class: 'tr-field tr-check' },
          c.qkNorm,
          el('span', { text: 'qkNorm (unit q, k rows; try scale 10)' }),
        ),
        labelled('Sigmoid bias', c.sigmoidBias, 'auto = −ln T'),
        el('label', { class: 'tr-field tr-check' }, c.layerNorm, el('span', { text: 'final LayerNorm' })),
        labelled('Scale', c.scale, 'sqrt, none or a number'),
        labelled('Init std', c.initStd, '0 = 1/√d_model'),
        labelled('Dropout', c.dropout, 'on attention weights'),
        labelled('Batch', c.batch),
        labelled('Weight decay', c.weightDecay),
        labelled('Kernel', c.kernel),
        labelled('Init seed', c.seed, 'weights, dropout'),
        labelled('Data seed', c.dataSeed, 'batches, held-out; -1 = init seed'),
      ),
    );
    this.wire();
  }

  private wire(): void {
    const a = this.act;
    this.playBtn.addEventListener('click', () => a.togglePlay());
    this.step1.addEventListener('click', () => a.runSteps(1));
    this.step10.addEventListener('click', () => a.runSteps(10));
    this.resetBtn.addEventListener('click', () => a.reset());
    this.speed.addEventListener('change', () => a.patch({ speed: Number(this.speed.value) }));
    this.compareSel.addEventListener('change', () =>
      a.patch({ compare: this.compareSel.value as TrainState['compare'] }),
    );
    this.workers.addEventListener('change', () => a.patch({ workers: Number(this.workers.value) }));
    const num = (input: HTMLInputElement, key: keyof TrainState) =>
      input.addEventListener('change', () => {
        if (input.value.trim() === '') return;
        a.patch({ [key]: Number(input.value) } as Partial<TrainState>);
      });
    num(this.until, 'until');
    num(this.untilAcc, 'untilAcc');
    num(this.lr, 'lr');
    const c = this.cfg;
    for (const k of [
      'vocab',
      'seqLen',
      'layers',
      'kvHeads',
      'dModel',
      'initStd',
      'dropout',
      'batch',
      'weightDecay',
      'seed',
      'dataSeed',
    ] as const)
      num(c[k], k);
    // Heads: K/V heads follow when they were equal (plain multi-head stays plain, not GQA).
    c.heads.addEventListener('change', () => {
      const t = a.settings();
      const n = Number(c.heads.value);
      if (!t || c.heads.value.trim() === '' || !Number.isFinite(n)) return;
      a.patch(t.kvHeads === t.heads ? { heads: n, kvHeads: n } : { heads: n });
    });
    c.task.addEventListener('change', () => a.patch({ task: c.task.value as TrainState['task'] }));
    c.positional.addEventListener('change', () =>
      a.patch({ positional: c.positional.value as TrainState['positional'] }),
    );
    c.kernel.addEventListener('change', () => a.patch({ kernel: c.kernel.value as TrainState['kernel'] }));
    c.normalizer.addEventListener('change', () =>
      a.patch({ normalizer: c.normalizer.value as TrainState['normalizer'] }),
    );
    c.qkNorm.addEventListener('change', () => a.patch({ qkNorm: c.qkNorm.checked }));
    c.sigmoidBias.addEventListener('change', () => {
      const v = c.sigmoidBias.value.trim();
      a.patch({ sigmoidBias: v === '' || v === 'auto' ? 'auto' : Number(v) });
    });
    c.layerNorm.addEventListener('change', () => a.patch({ layerNorm: c.layerNorm.checked }));
    c.scale.addEventListener('change', () => {
      const v = c.scale.value.trim();
      a.patch({ scale: v === 'sqrt' || v === 'none' ? v : Number(v) });
    });
  }

  /** Show the settings (an input being edited keeps what the user typed). */
  sync(t: TrainState): void {
    const setNum = (i: HTMLInputElement, v: number) => {
      if (document.activeElement !== i || Number(i.value) !== v) i.value = String(v);
    };
    this.compareSel.value = t.compare;
    this.workers.value = String(t.workers);
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
    c.normalizer.value = t.normalizer;
    c.qkNorm.checked = t.qkNorm;
    c.sigmoidBias.value = String(t.sigmoidBias);
    c.sigmoidBias.disabled = t.normalizer !== 'sigmoid';
    c.layerNorm.checked = t.layerNorm;
    c.scale.value = String(t.scale);
    for (const k of [
      'vocab',
      'seqLen',
      'layers',
      'heads',
      'kvHeads',
      'dModel',
      'initStd',
      'dropout',
      'batch',
      'weightDecay',
      'seed',
      'dataSeed',
    ] as const)
      setNum(c[k], t[k]);
  }

  showRun(r: RunState): void {
    const busy = r === 'running';
    this.playBtn.textContent = busy ? 'Pause' : 'Play';
    this.playBtn.setAttribute('aria-pressed', busy ? 'true' : 'false');
    const can = r === 'idle' || r === 'stopped' || r === 'diverged';
    this.playBtn.disabled = !(can || busy || r === 'loading');
    this.step1.disabled = !can;
    this.step10.disabled = !can;
  }

  showStatus(s: TrainSession, onReset: () => void): void {
    this.statusLine.textContent = s.statusText;
    this.phaseLine.textContent = s.phaseText;
    this.phaseLine.hidden = s.phaseText === '';
    const n = s.notice;
    if (!n) {
      this.notice.hidden = true;
      return;
    }
    clear(this.notice);
    this.notice.append(el('span', { text: n.text }));
    if (n.offerReset) this.notice.append(' ', smallButton('Reset', 'train-notice-reset', onReset));
    this.notice.hidden = false;
  }

  showReadouts(s: TrainSession): void {
    const h = s.history;
    this.readStep.textContent = String(s.step);
    this.readLoss.textContent =
      h.steps > 0 ? `${num(h.loss[h.steps - 1])} (gradient norm ${num(h.gradNorm[h.steps - 1])})` : '–';
    this.readEval.textContent = Number.isFinite(s.evalLoss)
      ? `loss ${num(s.evalLoss)}, accuracy ${fmt(s.evalAcc, 3)}`
      : '–';
    const w = s.workers > 1 ? ` · ${s.workers} Workers` : '';
    this.readRate.textContent =
      s.stepsPerSec > 0 ? `${fmt(s.stepsPerSec, 0)} steps/s · ${fmt(s.gflops, 2)} GFLOP/s in training${w}` : '';
    this.readRate.title =
      'steps/s: wall clock while running (evaluation and head scores included); GFLOP/s: GEMM operations counted from the shapes, divided by the time inside train() only';
  }
}
