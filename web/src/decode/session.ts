// The Decode tab's run state, without DOM: which model is loaded (or being trained), the decoded
// trajectory for the current (sequence, keep), and the timing sweep. It talks to the Workers only
// through a client (decode/client.ts in the page, a fake in tests/web/decode-session.test.ts) and
// tells the view what changed; the panels read it and draw.
import type { TrainedModel } from '../shared/trained-model';
import type { DecodeMessage, StateBytesRow, TimingParams, Trajectory } from './protocol';
import { cacheBytesFormula, fitOf, kvVariants, timingRows, type DecodeExport, type DecodePoint } from './model';
import type { DecodeState } from './state';

/** What the session needs of the Workers (DecodeClient has these). */
export interface DecodeClientLike {
  /** normalizer 'linear' with model null: train config A with linear attention. */
  setModel(model: TrainedModel | null, normalizer?: 'linear'): void;
  trajectory(seq: number, keep: number): void;
  cancelStepper(): boolean;
  runTiming(params: TimingParams, budgetMs: number, on: (m: DecodeMessage) => void): void;
  cancelTiming(): boolean;
}

/** The wider random model a timing run decodes with. */
export const TIMING_SHAPE = { dModel: 256, heads: 8, layers: 2 };
/** A point predicted to take longer (warm-up + repeats) is skipped: one recomputed step at
 *  T = 4096 takes 1.5–3 s here, so the whole recompute column fits. */
export const BUDGET_MS = 60_000;

export type ModelReady = Extract<DecodeMessage, { kind: 'model-ready' }>;

export interface Sweep {
  tStart: number;
  tEnd: number;
  points: DecodePoint[];
  notes: string[];
  memory: { t: number; rows: { name: string; kvHeads: number; bytes: number }[]; heapBytes: number } | null;
  heapBytes: number;
  phase: 'running' | 'done' | 'cancelled' | 'failed';
}

/** The linear-attention timing run: state and K/V cache steps, and the bytes of both per T. */
export interface StateSweep {
  tStart: number;
  tEnd: number;
  points: DecodePoint[];
  bytes: StateBytesRow[];
  notes: string[];
  phase: 'running' | 'done' | 'cancelled' | 'failed';
}

/** What changed, for the view: the model line, the stepper, or a timing panel. */
export type DecodeChange = 'model' | 'step' | 'timing' | 'timing-progress' | 'state' | 'state-progress';

export class DecodeSession {
  readonly client: DecodeClientLike;
  model: ModelReady | null = null;
  modelPending = false;
  /** The Train tab published a newer model than the one loaded. */
  modelStale = false;
  /** The sentence under the model's name: loading, training progress, ready, cancelled. */
  modelText = '';
  /** Training progress 0…1, or null when no training runs here. */
  trainFraction: number | null = null;
  /** The last error of the stepping Worker (shown above the strip), or null. */
  error: string | null = null;
  traj: Trajectory | null = null;
  private trajKey = '';
  private requested = '';
  sweep: Sweep | null = null;
  /** The timing run's progress, 0…1, and its status sentence. */
  timingFraction = 0;
  timingStatus: { state: string; text: string } = { state: 'idle', text: 'Press “Time decoding” to measure.' };
  /** The linear-attention run (recurrent state against the K/V cache), its progress and status. */
  stateSweep: StateSweep | null = null;
  stateFraction = 0;
  stateStatus: { state: string; text: string } = {
    state: 'idle',
    text: 'Press “Time the state and the cache” to measure.',
  };

  constructor(
    makeClient: (onStep: (m: DecodeMessage) => void) => DecodeClientLike,
    private changed: (what: DecodeChange) => void = () => {},
  ) {
    this.client = makeClient((m) => this.onStepMessage(m));
  }

  /** Whether the trajectory shown belongs to this (seq, keep). */
  trajectoryFor(seq: number, keep: number): Trajectory | null {
    return this.traj && this.trajKey === `${seq}/${keep}` ? this.traj : null;
  }

  // ---------- model ----------
  /** Load the Train tab's model (m), or train the default one here (m null; with 'linear', config A
   *  with linear attention). */
  loadModel(m: TrainedModel | null, normalizer?: 'linear'): void {
    this.modelPending = true;
    this.modelStale = false;
    this.model = null;
    this.traj = null;
    this.trajKey = this.requested = '';
    this.error = null;
    this.modelText = m
      ? `Loading the Train tab’s model (step ${m.step})…`
      : 'Starting the WebAssembly training module…';
    this.trainFraction = m ? null : 0;
    if (normalizer && !m) this.client.setModel(m, normalizer);
    else this.client.setModel(m);
    this.changed('model');
    this.changed('step');
  }

  markStale(): void {
    this.modelStale = true;
    this.changed('model');
  }

  cancelTraining(): void {
    this.client.cancelStepper();
    this.modelPending = false;
    this.trainFraction = null;
    this.modelText = 'Cancelled. Press “Train the default model” to start again.';
    this.changed('model');
  }

  onStepMessage(m: DecodeMessage): void {
    if (m.kind === 'progress') {
      this.trainFraction = m.fraction;
      this.modelText = m.text;
      this.changed('model');
    } else if (m.kind === 'model-ready') {
      this.model = m;
      this.modelPending = false;
      this.trainFraction = null;
      const acc = `held-out copy accuracy ${(m.accuracy * 100).toFixed(0)} %`;
      this.modelText =
        m.source === 'train-tab'
          ? `Model: the Train tab’s (step ${m.step}${this.linear ? ', linear attention' : ''}), ${acc}.`
          : this.linear
            ? `Model: config A with linear attention (normalizer linear), trained here for ${m.step} steps, ${acc}.`
            : `Model: the default induction model (config A), trained here for ${m.step} steps, ${acc}. Train your own in the Train tab.`;
      this.changed('model');
      this.changed('step');
    } else if (m.kind === 'trajectory') {
      this.traj = m.trajectory;
      this.trajKey = this.requested;
      this.error = null;
      this.changed('step');
    } else if (m.kind === 'error' || m.kind === 'fatal') {
      this.modelPending = false;
      this.trainFraction = null;
      this.error = `${m.message}${m.kind === 'error' && m.field ? ` (field: ${m.field})` : ''}`;
      this.changed('model');
      this.changed('step');
    }
  }

  /** Ask for the trajectory of (seq, keep) unless it is the one asked for last. */
  requestTrajectory(seq: number, keep: number): void {
    if (!this.model) return;
    const key = `${seq}/${keep}`;
    if (key === this.requested) return;
    this.requested = key;
    this.client.trajectory(seq, keep);
  }

  /** The loaded model uses linear attention: it decodes with the recurrent state too. */
  get linear(): boolean {
    return this.model?.config.normalizer === 'linear';
  }

  /** The recurrent state's check against the recompute path, for the trajectory shown. */
  stateCheck(): { checked: boolean; same: boolean; text: string } | null {
    const st = this.traj?.state;
    if (!this.traj || !st) return null;
    const n = st.tokens.length;
    const agree = st.tokens.filter((t, i) => t === this.traj!.recomputeTokens[i]).length;
    const diff = st.maxAbsDiff.toExponential(1);
    return st.sameTokens
      ? {
          checked: true,
          same: true,
          text: `Same tokens as recompute: checked (${n} of ${n} tokens; max |Δ logits| ${diff}).`,
        }
      : {
          checked: true,
          same: false,
          text: `Not the same tokens as recompute: ${agree} of ${n} agree (max |Δ logits| ${diff} while the prefixes matched).`,
        };
  }

  // ---------- timing ----------
  startTiming(tStart: number, tEnd: number): void {
    // One timing Worker at a time (the client cancels the other run).
    if (this.stateSweep?.phase === 'running') this.stopState('Cancelled by the other timing run.');
    const p = { tStart, tEnd, ...TIMING_SHAPE };
    this.sweep = { tStart, tEnd, points: [], notes: [], memory: null, heapBytes: NaN, phase: 'running' };
    this.timingFraction = 0;
    this.timingStatus = { state: 'running', text: 'Starting the timing worker…' };
    this.client.runTiming(p, BUDGET_MS, (m) => this.onTiming(m));
    this.changed('timing');
  }

  /** Stop the run; returns whether one was running. */
  cancelTiming(): boolean {
    if (!this.client.cancelTiming() || !this.sweep) return false;
    this.sweep.phase = 'cancelled';
    const n = this.sweep.points.length;
    this.timingStatus = { state: 'cancelled', text: `Cancelled; ${n} point${n === 1 ? '' : 's'} kept.` };
    this.changed('timing');
    return true;
  }

  get timingRunning(): boolean {
    return this.sweep?.phase === 'running';
  }

  onTiming(m: DecodeMessage): void {
    const sw = this.sweep;
    if (!sw) return;
    if (m.kind === 'progress') {
      this.timingFraction = m.fraction;
      this.timingStatus = { state: 'running', text: m.text };
      this.changed('timing-progress');
      return;
    }
    if (m.kind === 'point') sw.points.push(m.point);
    else if (m.kind === 'memory') sw.memory = { t: m.t, rows: m.rows, heapBytes: m.heapBytes };
    else if (m.kind === 'error') sw.notes.push(m.message);
    else if (m.kind === 'done' || m.kind === 'fatal') {
      sw.phase = m.kind === 'done' ? 'done' : 'failed';
      if (m.kind === 'done') {
        sw.heapBytes = m.heapBytes;
        this.timingFraction = 1;
        const c = fitOf(sw.points, 'cached'),
          r = fitOf(sw.points, 'recompute');
        this.timingStatus = {
          state: 'done',
          text: `Done: ${sw.points.length} points; exponents ${c ? c.exponent.toFixed(2) : '—'} with the cache, ${r ? r.exponent.toFixed(2) : '—'} without.`,
        };
      } else this.timingStatus = { state: 'failed', text: m.message };
    }
    this.changed('timing');
  }

  // ---------- the recurrent state against the K/V cache (a linear model) ----------
  startStateTiming(tStart: number, tEnd: number): void {
    if (this.sweep?.phase === 'running') {
      this.sweep.phase = 'cancelled';
      this.timingStatus = { state: 'cancelled', text: 'Cancelled by the state timing run.' };
      this.changed('timing');
    }
    const p: TimingParams = { tStart, tEnd, ...TIMING_SHAPE, linear: true };
    this.stateSweep = { tStart, tEnd, points: [], bytes: [], notes: [], phase: 'running' };
    this.stateFraction = 0;
    this.stateStatus = { state: 'running', text: 'Starting the timing worker…' };
    this.client.runTiming(p, BUDGET_MS, (m) => this.onStateTiming(m));
    this.changed('state');
  }

  private stopState(text: string): void {
    if (!this.stateSweep) return;
    this.stateSweep.phase = 'cancelled';
    this.stateStatus = { state: 'cancelled', text };
    this.changed('state');
  }

  cancelStateTiming(): boolean {
    if (!this.stateRunning || !this.client.cancelTiming()) return false;
    const n = this.stateSweep!.points.length;
    this.stopState(`Cancelled; ${n} point${n === 1 ? '' : 's'} kept.`);
    return true;
  }

  get stateRunning(): boolean {
    return this.stateSweep?.phase === 'running';
  }

  onStateTiming(m: DecodeMessage): void {
    const sw = this.stateSweep;
    if (!sw || sw.phase !== 'running') return;
    if (m.kind === 'progress') {
      this.stateFraction = m.fraction;
      this.stateStatus = { state: 'running', text: m.text };
      this.changed('state-progress');
      return;
    }
    if (m.kind === 'point') sw.points.push(m.point);
    else if (m.kind === 'state-bytes') sw.bytes = m.rows;
    else if (m.kind === 'error') sw.notes.push(m.message);
    else if (m.kind === 'done' || m.kind === 'fatal') {
      sw.phase = m.kind === 'done' ? 'done' : 'failed';
      if (m.kind === 'done') {
        this.stateFraction = 1;
        const fs = fitOf(sw.points, 'state'),
          fc = fitOf(sw.points, 'cached');
        this.stateStatus = {
          state: 'done',
          text: `Done: ${sw.points.length} points; exponents ${fs ? fs.exponent.toFixed(2) : '—'} with the recurrent state, ${fc ? fc.exponent.toFixed(2) : '—'} with the K/V cache.`,
        };
      } else this.stateStatus = { state: 'failed', text: m.message };
    }
    this.changed('state');
  }

  /** The measured heap of the timing Worker (after the cache variants, after the sweep). */
  heapBytes(): number {
    const sw = this.sweep;
    return sw?.memory ? Math.max(sw.memory.heapBytes, Number.isFinite(sw.heapBytes) ? sw.heapBytes : 0) : NaN;
  }

  // ---------- export ----------
  private stateExport(): DecodeExport['state'] {
    const sw = this.stateSweep,
      chk = this.stateCheck(),
      st = this.traj?.state;
    if (!sw && !st) return null;
    const pts = sw?.points ?? [];
    const fs = fitOf(pts, 'state'),
      fc = fitOf(pts, 'cached');
    const ms = (t: number, m: 'state' | 'cached') => pts.find((p) => p.t === t && p.mode === m)?.stats.median ?? null;
    return {
      exponents: { state: fs ? fs.exponent : null, cached: fc ? fc.exponent : null },
      rows: (sw?.bytes ?? []).map((r) => ({
        T: r.t,
        stateBytes: r.state,
        cacheBytes: r.cache,
        stateMs: ms(r.t, 'state'),
        cachedMs: ms(r.t, 'cached'),
      })),
      sameTokensAsRecompute: chk ? chk.same : null,
      maxAbsDiffLogits: st ? st.maxAbsDiff : null,
    };
  }

  exportData(ds: DecodeState | null, userAgent: string): DecodeExport {
    const tj = this.traj;
    const pts = this.sweep?.points ?? [];
    const fc = fitOf(pts, 'cached'),
      fr = fitOf(pts, 'recompute');
    const T = this.sweep?.memory?.t ?? ds?.tEnd ?? 4096;
    const heap = this.heapBytes();
    const st = this.stateExport();
    return {
      config: {
        decode: ds,
        model: this.model
          ? { source: this.model.source, step: this.model.step, accuracy: this.model.accuracy, ...this.model.shape }
          : null,
        prompt: tj
          ? { seq: tj.seq, promptLen: tj.promptLen, firstCopy: tj.firstCopy, secondCopy: tj.secondCopy, sLen: tj.sLen }
          : null,
        timingModel: TIMING_SHAPE,
        userAgent,
      },
      steps: tj
        ? tj.steps.map((s) => ({
            t: s.t,
            token: s.token,
            expected: s.expected,
            predicted: s.predicted,
            source: s.source,
          }))
        : [],
      timing: timingRows(pts),
      exponents: { cached: fc ? fc.exponent : null, recompute: fr ? fr.exponent : null },
      // Only when a linear model decoded or the state was timed: every other export keeps its keys.
      ...(st ? { state: st } : {}),
      cacheBytes: {
        steppingModel: tj?.cacheBytes ?? null,
        T,
        variants: kvVariants(TIMING_SHAPE.heads).map((v) => ({
          name: v.name,
          kvHeads: v.kvHeads,
          formula: cacheBytesFormula(TIMING_SHAPE, v.kvHeads, T),
          reported: this.sweep?.memory?.rows.find((r) => r.name === v.name)?.bytes ?? null,
        })),
        // The timing Worker's heap: after the MHA/GQA/MQA decoders, and after the sweep when it finished.
        heapBytes: Number.isFinite(heap) ? heap : null,
      },
    };
  }
}

/** Tokens in the sequence at the step shown (1…T): `dstep`, where 0 means the prompt alone. */
export function currentStep(tj: Trajectory | null, step: number): number {
  if (!tj) return 0;
  const s = step === 0 ? tj.promptLen : step;
  return Math.max(1, Math.min(tj.steps.length, s));
}
