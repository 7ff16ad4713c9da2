// The Decode tab's "Step through generation" panel: the model line (loading, training here,
// ready), the prompt settings, the step buttons and slider, the token strip, the step in words,
// FLOPs of the step, and every head's new attention row and the K/V caches as pictures. It draws
// what the session holds and asks the view to change settings; it holds no run state itself.
import { el, clear, fmt, syncInput, commitInput } from '../ui/dom';
import { formatBytes } from '../measure/model';
import type { StepData, Trajectory } from './protocol';
import { drawMatrix } from './matrix';
import { dHead, stepFlops } from './model';
import { currentStep, type DecodeSession } from './session';
import { DECODE_LIMITS, type DecodeState } from './state';

export interface StepperHost {
  /** Change the settings (written to the link). */
  update(p: Partial<DecodeState>): void;
  /** Load a model: the Train tab's (false) or train the default one here (true). */
  loadModel(forceDefault: boolean): void;
  cancelTraining(): void;
  width(): number;
}

export class StepperPanel {
  readonly root: HTMLElement;
  private ds: DecodeState | null = null;
  private playTimer = 0;

  private modelLine = el('p', { class: 'decode-model', 'data-testid': 'decode-model', 'aria-live': 'polite' });
  private trainProgress = el('progress', {
    max: 1,
    value: 0,
    'data-testid': 'decode-train-progress',
    'aria-label': 'Training progress',
  });
  private trainCancel = el('button', {
    type: 'button',
    class: 'btn small',
    'data-testid': 'decode-train-cancel',
    text: 'Cancel',
  });
  private useTrained = el('button', {
    type: 'button',
    class: 'btn small',
    'data-testid': 'decode-use-trained',
    text: 'Use the Train tab’s newer model',
    hidden: true,
  });
  private retrain = el('button', {
    type: 'button',
    class: 'btn small',
    'data-testid': 'decode-retry',
    text: 'Train the default model',
    hidden: true,
  });
  private seqInput = el('input', {
    type: 'number',
    min: 0,
    max: DECODE_LIMITS.maxSeq,
    step: 1,
    inputmode: 'numeric',
    'data-testid': 'decode-seq',
    'aria-label': 'Sequence number',
  });
  private nextSeq = el('button', {
    type: 'button',
    class: 'btn small',
    'data-testid': 'decode-next-seq',
    text: 'Another sequence',
  });
  private keepInput = el('input', {
    type: 'number',
    min: DECODE_LIMITS.minKeep,
    max: DECODE_LIMITS.maxKeep,
    step: 1,
    inputmode: 'numeric',
    'data-testid': 'decode-keep',
    'aria-label': 'Tokens of the second copy in the prompt',
  });
  private cacheBox = el('input', { type: 'checkbox', 'data-testid': 'decode-cache' });
  private firstBtn = el('button', {
    type: 'button',
    class: 'btn small',
    'data-testid': 'decode-first',
    text: '◀◀',
    'aria-label': 'First token',
  });
  private backBtn = el('button', {
    type: 'button',
    class: 'btn small',
    'data-testid': 'decode-back',
    text: '◀ Back',
    'aria-label': 'One step back',
  });
  private stepBtn = el('button', {
    type: 'button',
    class: 'btn primary small',
    'data-testid': 'decode-step',
    text: 'Step ▶',
    'aria-label': 'Append one token',
  });
  private playBtn = el('button', {
    type: 'button',
    class: 'btn small',
    'data-testid': 'decode-play',
    text: 'Play',
    'aria-label': 'Play to the end',
  });
  private endBtn = el('button', {
    type: 'button',
    class: 'btn small',
    'data-testid': 'decode-end',
    text: '▶▶',
    'aria-label': 'Last token',
  });
  private slider = el('input', {
    type: 'range',
    min: 1,
    max: 32,
    step: 1,
    'data-testid': 'decode-slider',
    'aria-label': 'Tokens decoded',
  });
  private strip = el('ol', {
    class: 'decode-strip',
    'data-testid': 'decode-tokens',
    'aria-label': 'The sequence: prompt, then generated tokens',
  });
  private stepInfo = el('div', { class: 'decode-stepinfo', 'data-testid': 'decode-stepinfo', 'aria-live': 'polite' });
  private agree = el('p', { class: 'decode-agree', 'data-testid': 'decode-agree' });
  private flops = el('div', { class: 'decode-flops', 'data-testid': 'decode-flops' });
  private heads = el('div', { class: 'decode-heads', 'data-testid': 'decode-heads' });
  private caches = el('div', { class: 'decode-caches', 'data-testid': 'decode-caches' });
  private stepError = el('p', { class: 'banner error', role: 'alert', hidden: true, 'data-testid': 'decode-error' });

  constructor(
    private session: DecodeSession,
    private host: StepperHost,
    private view: HTMLElement,
  ) {
    const upd = (p: Partial<DecodeState>) => host.update(p);
    this.seqInput.addEventListener('change', () => {
      commitInput(this.seqInput);
      upd({ seq: this.seqInput.valueAsNumber, step: 0 });
    });
    this.nextSeq.addEventListener('click', () =>
      upd({ seq: ((this.ds?.seq ?? 0) + 1) % (DECODE_LIMITS.maxSeq + 1), step: 0 }),
    );
    this.keepInput.addEventListener('change', () => {
      commitInput(this.keepInput);
      upd({ keep: this.keepInput.valueAsNumber, step: 0 });
    });
    this.cacheBox.addEventListener('change', () => upd({ cache: this.cacheBox.checked }));
    this.firstBtn.addEventListener('click', () => this.goto(1));
    this.backBtn.addEventListener('click', () => this.goto(this.current() - 1));
    this.stepBtn.addEventListener('click', () => this.goto(this.current() + 1));
    this.endBtn.addEventListener('click', () => this.goto(this.session.traj?.steps.length ?? 1));
    this.playBtn.addEventListener('click', () => this.togglePlay());
    this.slider.addEventListener('input', () => this.goto(this.slider.valueAsNumber));
    this.trainCancel.addEventListener('click', () => host.cancelTraining());
    this.retrain.addEventListener('click', () => host.loadModel(true));
    this.useTrained.addEventListener('click', () => host.loadModel(false));

    const field = (label: string, input: HTMLElement) =>
      el('label', { class: 'tfield' }, el('span', { text: label }), input);
    this.root = el(
      'section',
      { class: 'decode-stepper', 'aria-label': 'Step through generation' },
      el('h4', { text: 'Step through generation' }),
      el(
        'div',
        { class: 'decode-modelrow' },
        this.modelLine,
        el('span', { class: 'decode-train' }, this.trainProgress, this.trainCancel),
        this.useTrained,
        this.retrain,
      ),
      el(
        'div',
        { class: 'trow', role: 'group', 'aria-label': 'Prompt and mode' },
        field('sequence', this.seqInput),
        this.nextSeq,
        field('prompt keeps', this.keepInput),
        el('label', { class: 'tfield check' }, this.cacheBox, el('span', { text: 'KV cache on' })),
      ),
      el(
        'div',
        { class: 'trow decode-nav', role: 'group', 'aria-label': 'Steps' },
        this.firstBtn,
        this.backBtn,
        this.stepBtn,
        this.playBtn,
        this.endBtn,
        this.slider,
      ),
      el('p', {
        class: 'muted small decode-keys',
        text: 'Keys: ← → step, Home / End jump (with a stepper button focused).',
      }),
      this.stepError,
      this.strip,
      this.stepInfo,
      this.agree,
      this.flops,
      el('div', { class: 'decode-pics' }, this.heads, this.caches),
    );
    // Keyboard: ← / → step back and forward, Home / End jump, anywhere in the stepper except in
    // a text field or the slider (which has its own arrow keys).
    this.root.addEventListener('keydown', (e) => {
      const t = e.target as HTMLElement;
      if (t instanceof HTMLInputElement || t instanceof HTMLSelectElement || e.altKey || e.ctrlKey || e.metaKey) return;
      const to =
        e.key === 'ArrowRight'
          ? this.current() + 1
          : e.key === 'ArrowLeft'
            ? this.current() - 1
            : e.key === 'Home'
              ? 1
              : e.key === 'End'
                ? (this.session.traj?.steps.length ?? 1)
                : NaN;
      if (Number.isNaN(to) || !this.session.traj) return;
      e.preventDefault();
      this.goto(to);
    });
  }

  /** New settings from the page. A result arriving while the user types must not overwrite it. */
  setState(d: DecodeState): void {
    this.ds = d;
    syncInput(this.seqInput, String(d.seq));
    syncInput(this.keepInput, String(d.keep));
    this.cacheBox.checked = d.cache;
  }

  drawModel(): void {
    const s = this.session;
    this.modelLine.textContent = s.modelText;
    if (s.model) this.modelLine.dataset.ready = '1';
    this.trainProgress.hidden = s.trainFraction === null;
    if (s.trainFraction !== null) this.trainProgress.value = s.trainFraction;
    this.trainCancel.hidden = !s.modelPending;
    this.useTrained.hidden = !s.modelStale;
    this.retrain.hidden = s.model ? s.model.source === 'default' : s.modelPending;
    this.stepError.hidden = s.error === null;
    this.stepError.textContent = s.error ?? '';
  }

  /** Tokens appended at the step shown (1…T). */
  current(): number {
    return this.ds ? currentStep(this.session.traj, this.ds.step) : 0;
  }

  private goto(n: number): void {
    const tj = this.session.traj;
    if (!tj) return;
    this.host.update({ step: Math.max(1, Math.min(tj.steps.length, n)) });
  }

  private togglePlay(): void {
    if (this.playTimer) {
      clearInterval(this.playTimer);
      this.playTimer = 0;
      this.playBtn.textContent = 'Play';
      return;
    }
    const tj = this.session.traj;
    if (!tj) return;
    if (this.current() >= tj.steps.length) this.goto(tj.promptLen);
    this.playBtn.textContent = 'Pause';
    this.playTimer = window.setInterval(() => {
      const t = this.session.traj;
      if (!t || this.current() >= t.steps.length || !this.root.isConnected) {
        clearInterval(this.playTimer);
        this.playTimer = 0;
        this.playBtn.textContent = 'Play';
        return;
      }
      this.goto(this.current() + 1);
    }, 450);
  }

  drawStep(): void {
    const tj = this.ds ? this.session.trajectoryFor(this.ds.seq, this.ds.keep) : null;
    for (const b of [this.firstBtn, this.backBtn, this.stepBtn, this.playBtn, this.endBtn, this.slider])
      b.disabled = !tj;
    clear(this.strip);
    clear(this.heads);
    clear(this.caches);
    if (!tj) {
      this.stepInfo.textContent = this.session.model ? 'Decoding…' : '';
      this.agree.textContent = '';
      clear(this.flops);
      return;
    }
    const n = this.current();
    const cache = this.ds!.cache;
    this.slider.max = String(tj.steps.length);
    this.slider.value = String(n);
    this.view.dataset.step = String(n);
    const st = tj.steps[n - 1];
    // Token strip: the region of every position, what was appended, right or wrong.
    tj.steps.forEach((s, i) => {
      const region = tj.firstCopy < 0 || i < tj.firstCopy ? 'noise' : i < tj.secondCopy ? 'copy1' : 'copy2';
      const shown = i < n;
      const right =
        s.source === 'generated' ? (s.expected === null ? '' : s.token === s.expected ? ' right' : ' wrong') : '';
      const li = el(
        'li',
        {
          class: `tok ${region} ${s.source}${shown ? '' : ' future'}${i === n - 1 ? ' now' : ''}${right}`,
          'data-t': i,
          'data-token': s.token,
          title: `position ${i}: ${s.source} token ${s.token}${s.expected !== null ? `, the copy expects ${s.expected}` : ''}`,
        },
        el('span', { class: 'tok-id', text: shown ? String(s.token) : '·' }),
      );
      this.strip.append(li);
    });
    // The step in words.
    clear(this.stepInfo);
    const next = tj.steps[n]; // the next position, if any
    const expNext = next ? next.expected : null;
    const pred = st.predicted;
    const copyNote = expNext === null ? '' : pred === expNext ? ' ✓ the copy' : ' ✗ not the copy';
    this.stepInfo.append(
      el(
        'p',
        {},
        el('strong', { text: stepTitle(n, tj) }),
        n === tj.promptLen
          ? `nothing generated yet (the last prompt token, ${st.token}, is at position ${n - 1}; press Step ▶ to generate). `
          : `appended ${st.source === 'prompt' ? 'prompt' : 'generated'} token ${st.token} at position ${n - 1}. `,
        el('span', {
          'data-testid': 'decode-prediction',
          'data-predicted': pred,
          'data-expected': expNext ?? '',
          text: `Prediction for position ${n}: ${pred} (p = ${fmt(st.prob, 2)})`,
        }),
        expNext === null
          ? n < tj.steps.length
            ? ' — the task expects no particular token here.'
            : ' — the sequence is full.'
          : `; the copy task expects ${expNext}${copyNote}.`,
      ),
      tj.firstCopy < 0
        ? el('p', {
            class: 'muted small',
            text: `This model's task has no copy to find: the first ${tj.promptLen} tokens of a held-out sequence are the prompt, and the model writes the rest.`,
          })
        : el('p', {
            class: 'muted small',
            text: `Prompt: noise (positions 0–${tj.firstCopy - 1}), s (${tj.firstCopy}–${tj.secondCopy - 1}, ${tj.sLen} tokens), then the first ${tj.promptLen - tj.secondCopy} token${tj.promptLen - tj.secondCopy > 1 ? 's' : ''} of s again; from position ${tj.promptLen} on the model writes. An induction head looks back to the token after the earlier occurrence of the current token, and copies it.`,
          }),
    );
    const gen = tj.steps.filter((s) => s.source === 'generated' && s.expected !== null);
    const copied = gen.filter((s) => s.token === s.expected).length;
    const same = tj.recomputeTokens.every((x, i) => x === tj.steps[i].token);
    this.agree.dataset.identical = same ? '1' : '0';
    this.agree.dataset.copied = String(copied);
    this.agree.dataset.generated = String(gen.length);
    this.agree.textContent = `${copied} of ${gen.length} generated tokens are the copy. Cached and recompute decoding ${same ? 'produced identical tokens' : 'produced DIFFERENT tokens'} (largest |Δ| of logits and weights ${tj.maxAbsDiff.toExponential(1)}). K/V cache: ${formatBytes(tj.cacheBytes)} reserved for ${tj.shape.seqLen} positions.`;
    this.drawFlops(tj, n, cache);
    this.drawHeads(tj, st, n, cache);
    this.drawCaches(tj, st, n, cache);
  }

  private drawFlops(tj: Trajectory, n: number, cache: boolean): void {
    const f = stepFlops(tj.shape, n);
    clear(this.flops);
    const bar = (label: string, v: number, max: number, cls: string) => {
      const b = el('span', { class: `fbar ${cls}` });
      b.style.width = `${Math.max(0.5, (v / max) * 100).toFixed(2)}%`;
      return el(
        'div',
        { class: 'frow' },
        el('span', { class: 'flabel', text: label }),
        el('span', { class: 'ftrack' }, b),
        el('strong', { class: 'fnum', text: fmtFlops(v) }),
      );
    };
    this.flops.append(
      el('h5', { text: `FLOPs of this step (length ${n})` }),
      bar('with the cache', f.cached, f.recompute, 'cached' + (cache ? ' on' : '')),
      bar('recompute', f.recompute, f.recompute, 'recompute' + (cache ? '' : ' on')),
      el('p', {
        class: 'muted small',
        text: `Recompute does ${fmt(f.recompute / f.cached, 1)}× the work; ${fmtFlops(f.wasted)} of it (${((f.wasted / f.recompute) * 100).toFixed(0)} %) recomputes keys, values and attention rows the previous steps already had.`,
      }),
    );
  }

  private drawHeads(tj: Trajectory, st: StepData, n: number, cache: boolean): void {
    const { layers: L, heads: H } = tj.shape;
    const T = tj.steps.length;
    const cell = Math.max(6, Math.min(14, Math.floor((this.host.width() - 120) / T)));
    this.heads.append(
      el('h5', {
        text: cache
          ? 'New attention row of every head over the cached keys'
          : 'Recompute: every row again (hatched = already known), the last row is new',
      }),
    );
    for (let l = 0; l < L; l++) {
      for (let h = 0; h < H; h++) {
        const c = el('canvas', { class: 'mat', 'data-testid': `decode-row-${l}-${h}`, role: 'img' });
        let arg = 0;
        for (let j = 1; j < n; j++) if (st.weights[(l * H + h) * n + j] > st.weights[(l * H + h) * n + arg]) arg = j;
        c.setAttribute(
          'aria-label',
          `Layer ${l + 1} head ${h + 1}: the new query (position ${n - 1}) puts most weight, ${fmt(st.weights[(l * H + h) * n + arg], 2)}, on position ${arg} (token ${tj.steps[arg].token}).`,
        );
        const bands = tj.firstCopy >= 0 ? [{ from: tj.firstCopy, to: tj.secondCopy, color: '#d08a00' }] : [];
        if (cache) {
          drawMatrix(c, {
            rows: 1,
            cols: T,
            filled: n,
            value: (_i, j) => st.weights[(l * H + h) * n + j],
            lo: 0,
            hi: 1,
            palette: 'seq',
            cell,
            newCol: n - 1,
            bands,
          });
        } else {
          // Row i of the prefix's attention is step i's new row (causal): the recompute redoes them all.
          drawMatrix(c, {
            rows: n,
            cols: T,
            filled: n,
            lo: 0,
            hi: 1,
            palette: 'seq',
            cell: Math.max(4, Math.min(cell, Math.floor(220 / n))),
            bands,
            value: (i, j) => (j <= i ? tj.steps[i].weights[(l * H + h) * (i + 1) + j] : NaN),
            wasted: (i) => i < n - 1,
            newRow: n - 1,
          });
        }
        this.heads.append(
          el(
            'figure',
            { class: 'decode-head' },
            el('figcaption', { text: `L${l + 1} H${h + 1} → ${arg} (${fmt(st.weights[(l * H + h) * n + arg], 2)})` }),
            c,
          ),
        );
      }
    }
  }

  private drawCaches(tj: Trajectory, st: StepData, n: number, cache: boolean): void {
    const { layers: L, kvHeads: G } = tj.shape;
    const dh = dHead(tj.shape);
    const T = tj.steps.length;
    const cell = Math.max(3, Math.min(8, Math.floor((this.host.width() - 60) / T), Math.floor(180 / dh)));
    this.caches.append(
      el('h5', {
        text: cache
          ? `K and V caches: d_head ${dh} rows × one column per token (outlined: this step’s)`
          : 'K and V, recomputed: every column again (hatched = waste); only the outlined one is new',
      }),
    );
    // One colour scale for all keys and one for all values (their magnitudes differ).
    const range = (arrs: Float32Array[]) => {
      let m = 1e-6;
      for (const a of arrs) for (const x of a) m = Math.max(m, Math.abs(x));
      return m;
    };
    const kr = range(st.k),
      vr = range(st.v);
    for (let l = 0; l < L; l++) {
      for (const [name, arr] of [
        ['K', st.k[l]],
        ['V', st.v[l]],
      ] as const) {
        for (let g = 0; g < G; g++) {
          const c = el('canvas', {
            class: 'mat',
            'data-testid': `decode-${name.toLowerCase()}-${l}-${g}`,
            'data-cols': n,
            role: 'img',
            'aria-label': `Layer ${l + 1} ${name} cache${G > 1 ? `, K/V head ${g + 1}` : ''}: ${n} columns of ${dh}`,
          });
          drawMatrix(c, {
            rows: dh,
            cols: T,
            filled: n,
            value: (i, j) => arr[(g * n + j) * dh + i],
            lo: -(name === 'K' ? kr : vr),
            hi: name === 'K' ? kr : vr,
            palette: 'div',
            cell,
            newCol: n - 1,
            wasted: cache ? undefined : (_i, j) => j < n - 1,
          });
          this.caches.append(
            el(
              'figure',
              { class: 'decode-kv' },
              el('figcaption', { text: `L${l + 1} ${name}${G > 1 ? ` (K/V head ${g + 1})` : ''}` }),
              c,
            ),
          );
        }
      }
    }
  }
}

/** "Prompt: 25 of 32 tokens, ", "Generated 2 of 7 (token 27 of 32): ", or a prompt token's. */
function stepTitle(n: number, tj: Trajectory): string {
  const T = tj.steps.length,
    P = tj.promptLen;
  if (n === P) return `Prompt: ${P} of ${T} tokens, `;
  if (n < P) return `Prompt token ${n} of ${P}: `;
  return `Generated ${n - P} of ${T - P} (token ${n} of ${T}): `;
}

function fmtFlops(v: number): string {
  if (v >= 1e9) return `${(v / 1e9).toFixed(2)} GFLOP`;
  if (v >= 1e6) return `${(v / 1e6).toFixed(2)} MFLOP`;
  if (v >= 1e3) return `${(v / 1e3).toFixed(1)} kFLOP`;
  return `${v} FLOP`;
}
