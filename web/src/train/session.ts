// The Train tab's run, without the DOM: one trainer (and an optional comparison trainer on the
// same data seed), what they reported (history, the latest snapshot, the probe), the run state
// (play/pause, the stop step, divergence, refusal) and the one status sentence that describes it.
// The view draws what this holds; the clients are injected, so a unit test drives a session with
// fake clients and no Worker (tests/web/train-session.test.ts). What it holds and the status
// sentence's methods are its base class (train/session-record.ts); here, the run and its messages.
import {
  EVAL_EVERY,
  SNAP_EVERY,
  parseProbe,
  type RunState,
  type TrainClientLike,
  type TrainMessage,
  type TrainRequest,
} from './protocol';
import { COMPARE_LABEL, archChanged, compareSettings, flopsPerStep, trainerConfig, type TrainState } from './config';
import { SessionRecord, type SessionOptions } from './session-record';
import { History, PHASE_TEXT, PLATEAU_GAIN, PLATEAU_WINDOW, crossing, phaseOf, plateaued, type Phase } from './history';
import { startCompareRun, type CompareRun } from './compare-run';
import { readyText, runningText, stoppedText } from './status-text';
import { num } from './numbers';

export type { CompareRun };
export type { Notice, SessionHooks, SessionOptions } from './session-record';

export { EVAL_EVERY, SNAP_EVERY, type RunState, type TrainClientLike };

/** Publish the model for the other tabs every this many steps while running. */
const PUBLISH_EVERY = 300;

export class TrainSession extends SessionRecord {
  readonly client: TrainClientLike;
  private phase: Phase | null = null;
  /** Play (not Step 1 / Step 10) is running: the only run a plateau ends */
  private playing = false;
  /** a plateau stop was asked for (its sentence, said when the run stops) */
  private plateauNote: string | null = null;
  /** evaluations from this step on count for the next plateau (after one, Play goes on) */
  private plateauFrom = 0;
  private playStartedAt = 0;
  private playMsTotal = 0;
  private lastPublished = 0;
  private resetNote = '';
  private readonly now: () => number;
  private readonly newClient: SessionOptions['newClient'];
  private readonly settings: () => TrainState | null;

  constructor(o: SessionOptions) {
    super(o.hooks ?? {});
    this.now = o.now ?? (() => Date.now());
    this.newClient = o.newClient;
    this.settings = o.settings;
    this.client = o.newClient((m) => this.onMessage(m));
  }

  // ---------- following the page's settings ----------

  /** The page's settings changed (or the first render): restart, or tell the running trainers. */
  apply(t: TrainState): void {
    if (!this.built) {
      this.wantPlay = t.play;
      this.start(t, '');
      return;
    }
    const changed = archChanged(this.built, t);
    if (changed.length > 0) {
      this.wantPlay = this.run === 'running';
      this.start(t, `Architecture changed (${changed.join(', ')}): training restarted from step 0.`);
      return;
    }
    if (t.lr !== this.built.lr) this.toBoth({ kind: 'lr', lr: t.lr });
    if (t.speed !== this.built.speed) this.toBoth({ kind: 'speed', speed: t.speed });
    // The comparison run keeps one Worker: two runs already share the cores.
    if (t.workers !== this.built.workers) this.client.send({ kind: 'workers', workers: t.workers });
    if (t.until !== this.built.until || t.untilAcc !== this.built.untilAcc)
      this.toBoth({ kind: 'stop', until: t.until, untilAcc: t.untilAcc });
    if (t.compare !== this.built.compare) {
      this.startCompare(t);
      if (this.cmp && this.step > 0)
        this.setStatus(
          `Comparison (${COMPARE_LABEL[t.compare]}) started from step 0; Reset to run both from the start together.`,
        );
    }
    this.built = { ...t };
  }

  // ---------- the run ----------

  start(t: TrainState, note: string): void {
    this.client.start(trainerConfig(t), EVAL_EVERY, SNAP_EVERY, t.workers);
    this.built = { ...t };
    this.history = new History();
    this.phaseAt = { crossed50: null, crossed90: null, ms90: null };
    this.snap = null;
    this.step = 0;
    this.evalLoss = NaN;
    this.evalAcc = NaN;
    this.ablated.clear();
    this.phase = null;
    this.speed.restart(flopsPerStep(t));
    this.phaseText = '';
    this.plateauNote = null;
    this.plateauFrom = 0;
    this.playMsTotal = 0;
    this.ms90 = null;
    this.lastPublished = 0;
    this.resetNote = note;
    this.hooks.restarted?.();
    this.startCompare(t);
    this.setRun('loading');
    this.hideNotice();
    this.hooks.changed?.();
  }

  startCompare(t: TrainState): void {
    this.cmp?.client.stop();
    this.cmp = null;
    const c = compareSettings(t);
    if (!c) return;
    this.cmp = startCompareRun(c, t, COMPARE_LABEL[t.compare], this.newClient, {
      isCurrent: (r) => this.cmp === r,
      mainRunning: () => this.run === 'running',
      sendRun: (client) => this.sendRun(client, null),
      changed: () => this.hooks.changed?.(),
      refused: (text) => this.setStatus(text),
    });
  }

  /** Both runs get the same run/lr/speed/stop messages (each stops at its own accuracy). */
  private sendRun(client: TrainClientLike, steps: number | null): void {
    const t = this.settings();
    if (!t) return;
    client.send(
      steps === null
        ? { kind: 'run', steps: null, until: t.until, untilAcc: t.untilAcc, speed: t.speed }
        : { kind: 'run', steps, until: 0, untilAcc: 0, speed: 0 },
    );
  }

  private toBoth(m: TrainRequest): void {
    this.client.send(m);
    this.cmp?.client.send(m);
  }

  reset(note = 'Reset: same seeds, so the same run again from step 0.'): void {
    const t = this.settings();
    if (!t) return;
    this.wantPlay = false;
    this.autoPaused = false;
    this.start(t, note);
  }

  togglePlay(): void {
    if (this.run === 'running') this.pause();
    else this.play();
  }

  play(): void {
    const t = this.settings();
    if (!t) return;
    if (this.run === 'loading') {
      this.wantPlay = true;
      return;
    }
    if (!this.canRun) return;
    if (this.run === 'diverged') this.hideNotice(); // going on from the last good step (e.g. after a lower rate)
    if (t.until > 0 && this.step >= t.until) {
      this.setStatus(`Already at step ${this.step}, the stop step. Raise “Stop at step” (or set it to 0) to go on.`);
      return;
    }
    this.sendRun(this.client, null);
    if (this.cmp && (this.cmp.run === 'idle' || this.cmp.run === 'stopped')) this.sendRun(this.cmp.client, null);
    this.startRun();
  }

  runSteps(n: number): void {
    if (!this.settings() || !this.canRun) return;
    this.hideNotice();
    this.sendRun(this.client, n);
    if (this.cmp && (this.cmp.run === 'idle' || this.cmp.run === 'stopped')) this.sendRun(this.cmp.client, n);
    this.startRun(n);
  }

  private startRun(steps: number | null = null): void {
    this.playing = steps === null;
    // The status says what is happening now (not the "Ready … Press Play" of before).
    this.setStatus(runningText(this.step, steps, this.cmp?.label ?? null));
    this.autoPaused = false;
    this.playStartedAt = this.now();
    this.speed.resume();
    this.setRun('running');
    this.hooks.changed?.();
  }

  pause(auto = false): void {
    if (this.run !== 'running') return;
    this.autoPaused = auto;
    this.toBoth({ kind: 'pause' });
  }

  private setRun(r: RunState): void {
    if (r !== 'running' && this.run === 'running') this.playMsTotal += this.now() - this.playStartedAt;
    this.run = r;
    this.hooks.runChanged?.(r);
  }

  onMessage(m: TrainMessage): void {
    switch (m.kind) {
      case 'ready':
        this.workers = m.workers ?? 1;
        this.onReady(m);
        break;
      case 'workers':
        this.workers = m.workers;
        if (m.note) this.setStatus(m.note);
        this.hooks.changed?.();
        break;
      case 'refused':
        if (this.run === 'loading') {
          this.setRun('refused');
          this.showNotice(
            `These settings were refused: ${m.message}${m.field ? ` (field: ${m.field})` : ''}. Change them to train.`,
            false,
          );
        } else this.showNotice(`Refused: ${m.message}`, false);
        break;
      case 'progress':
        this.onProgress(m);
        break;
      case 'stopped': {
        this.setRun(m.reason === 'diverged' ? 'diverged' : 'stopped');
        // One status, true now: at a divergence the notice says what went wrong, the status line where the run is.
        this.setStatus(
          this.plateauNote !== null && m.reason === 'paused'
            ? `Stopped at step ${m.step}: ${this.plateauNote}`
            : stoppedText(m.reason, m.step, this.autoPaused),
        );
        this.plateauNote = null;
        if (m.reason === 'diverged')
          this.showNotice(
            `${m.message ?? 'The loss became non-finite.'} Lower the learning rate and press Play to go on from there, or Reset.`,
            true,
          );
        void this.publish();
        this.hooks.changed?.();
        break;
      }
      case 'ablated':
        this.snap = m.snapshot;
        this.evalLoss = m.evalLoss;
        this.evalAcc = m.evalAccuracy;
        this.hooks.changed?.();
        break;
      case 'probe':
        this.probe = m.probe;
        this.probeMask = m.probeMask;
        this.snap = m.snapshot;
        this.hooks.probeChanged?.();
        this.setStatus(`Probe: ${m.probe.length} tokens.`);
        break;
      case 'probeRefused':
        this.setStatus(`That probe was refused: ${m.message}`);
        break;
      case 'fatal':
        this.setRun('error');
        this.showNotice(m.message, true);
        break;
      case 'weights':
        break;
    }
  }

  private onReady(m: Extract<TrainMessage, { kind: 'ready' }>): void {
    this.probe = m.probe;
    this.probeMask = m.probeMask;
    this.snap = m.snapshot;
    this.config = m.config;
    this.evalLoss = m.evalLoss;
    this.evalAcc = m.evalAccuracy;
    this.history.pushEval(0, m.evalLoss, m.evalAccuracy);
    this.history.pushScores(m.snapshot.scores);
    this.hooks.probeChanged?.();
    this.setRun('idle');
    this.setStatus(readyText(this.resetNote, m.startMs));
    this.resetNote = '';
    const t = this.settings();
    if (t && t.lr !== this.config.lr) this.client.send({ kind: 'lr', lr: t.lr });
    if (this.wantPlay) {
      this.wantPlay = false;
      if (this.visible) this.play();
      else this.autoPaused = true;
    }
  }

  private onProgress(m: Extract<TrainMessage, { kind: 'progress' }>): void {
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
    this.speed.add(m);
    this.trackPhase();
    this.stopAtPlateau();
    if (this.step - this.lastPublished >= PUBLISH_EVERY) void this.publish();
    this.hooks.changed?.();
  }

  private trackPhase(): void {
    const h = this.history;
    const c50 = crossing(h, 0.5);
    const c90 = crossing(h, 0.9);
    if (c90 !== null && this.ms90 === null)
      this.ms90 = this.playMsTotal + (this.run === 'running' ? this.now() - this.playStartedAt : 0);
    this.phaseAt = { crossed50: c50, crossed90: c90, ms90: this.ms90 };
    if (!Number.isFinite(this.evalAcc)) return;
    const p = phaseOf(this.evalAcc);
    if (this.phase !== null && p !== this.phase) {
      this.phaseText = `Step ${this.history.evalStep.at(-1) ?? this.step}: ${PHASE_TEXT[p]}`; // the evaluation's step
      this.hooks.announce?.(this.phaseText);
      this.hooks.statusChanged?.();
    }
    this.phase = p;
  }

  /** Play without a stop step ("Stop at step" 0) ends when the held-out loss has plateaued, saying
   *  so; Play again goes on (the next plateau is measured from there). */
  private stopAtPlateau(): void {
    if (this.run !== 'running' || !this.playing || this.plateauNote !== null || (this.built?.until ?? 0) > 0) return;
    const p = plateaued(this.history, this.plateauFrom);
    if (p === null) return;
    this.plateauFrom = this.step;
    const formed = this.phase === 'formed' ? '' : ', without induction heads forming';
    const w = PLATEAU_WINDOW.toLocaleString('en');
    this.plateauNote = `the held-out loss has plateaued: its best over the last ${w} steps, ${num(p.recent)}, is not ${PLATEAU_GAIN * 100}% below its best before them, ${num(p.before)}${formed}. Press Play to go on, or set “Stop at step” for a longer run.`;
    this.pause();
  }

  private async publish(): Promise<void> {
    this.lastPublished = this.step;
    const w = await this.client.weights();
    if (w && w.step >= 0) this.hooks.publish?.(w);
  }

  // ---------- heads and probes ----------

  /** Ablate or restore one head (paused only: an ablated head stays off while training too). */
  toggleAblation(l: number, h: number): void {
    if (this.run === 'running' || this.run === 'loading') {
      this.setStatus('Pause first to ablate a head (an ablated head stays off while training too).');
      return;
    }
    const key = `${l}-${h}`;
    const on = !this.ablated.has(key);
    if (on) this.ablated.add(key);
    else this.ablated.delete(key);
    this.client.send({ kind: 'ablate', layer: l, head: h, on });
    this.setStatus(`${on ? 'Ablated' : 'Restored'} layer ${l + 1} head ${h + 1}.`);
  }

  /** Draw the attention on the user's tokens (text of ids), or on the held-out probe (null). */
  useProbe(text: string | null): void {
    if (text === null) {
      this.client.send({ kind: 'probe', tokens: null });
      return;
    }
    const ids = parseProbe(text, Number(this.config.vocab ?? 0), Number(this.config.seqLen ?? 0));
    if (typeof ids === 'string') {
      this.setStatus(ids);
      return;
    }
    this.client.send({ kind: 'probe', tokens: ids });
  }

  // ---------- visibility ----------

  /** The page's tab was hidden or shown (`connected`: the view is in the page). */
  pageHidden(hidden: boolean, connected: boolean): void {
    if (hidden) {
      if (this.run === 'running') this.pause(true);
    } else this.maybeResume(connected);
  }

  /** An embed scrolled out of view or back (only embeds pause for this). */
  inView(on: boolean, embed: boolean, connected: boolean): void {
    this.visible = on;
    if (!embed) return;
    if (!on && this.run === 'running') this.pause(true);
    else if (on) this.maybeResume(connected);
  }

  private maybeResume(connected: boolean): void {
    if (this.autoPaused && connected) {
      this.autoPaused = false;
      if (this.run === 'stopped' || this.run === 'idle') this.play();
    }
  }
}
