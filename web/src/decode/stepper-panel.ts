// The Decode tab's "Step through generation" panel: the model line (loading, training here,
// ready), the prompt settings, the step buttons and slider, the token strip, the step in words,
// FLOPs of the step, and every head's new attention row and the K/V caches as pictures. It draws
// what the session holds and asks the view to change settings; it holds no run state itself.
import { el, clear, fmt, syncInput, commitInput } from '../ui/dom';
import { formatBytes } from '../measure/model';
import { drawCaches, drawFlops, drawHeads, stepTitle } from './stepper-pictures';
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
    drawFlops(this.flops, tj, n, cache);
    drawHeads(this.heads, this.host.width(), tj, st, n, cache);
    drawCaches(this.caches, this.host.width(), tj, st, n, cache);
  }
}
