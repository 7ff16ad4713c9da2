// What a Train session holds and shows (reports, run state, status, notice): TrainSession's base class.
import type { RunState, Snapshot, TrainClientLike, TrainMessage } from './protocol';
import type { TrainState } from './config';
import type { CompareRun } from './compare-run';
import { History } from './history';
import { Throughput } from './throughput';

type WeightsMessage = Extract<TrainMessage, { kind: 'weights' }>;

/** What the session tells its owner; every hook is optional. */
export interface SessionHooks {
  /** something to redraw (coalesced by the owner) */
  changed?(): void;
  /** a new probe or a new trainer: the per-head maps must be rebuilt */
  probeChanged?(): void;
  /** the status sentence or the notice changed */
  statusChanged?(): void;
  runChanged?(r: RunState): void;
  announce?(text: string): void;
  /** the trained weights, for the other tabs */
  publish?(m: WeightsMessage): void;
  /** a new history object (Reset, a new trainer) */
  restarted?(): void;
}

export interface Notice {
  text: string;
  offerReset: boolean;
}

export interface SessionOptions {
  newClient: (onMessage: (m: TrainMessage) => void) => TrainClientLike;
  /** the settings now (the page's state); null before the first render */
  settings: () => TrainState | null;
  hooks?: SessionHooks;
  /** ms clock (performance.now in the page) */
  now?: () => number;
}

export abstract class SessionRecord {
  /** the settings the current trainer was built from */
  built: TrainState | null = null;
  history = new History();
  snap: Snapshot | null = null;
  probe: Int32Array = new Int32Array(0);
  probeMask: Uint8Array = new Uint8Array(0);
  run: RunState = 'loading';
  step = 0;
  evalLoss = NaN;
  evalAcc = NaN;
  /** the trainer's config as the module reports it (layers, heads, vocab, …) */
  config: Record<string, unknown> = {};
  ablated = new Set<string>();
  /** steps/s, GFLOP/s and where the wall time went (train/throughput.ts) */
  protected readonly speed = new Throughput();
  /** Workers computing the shards of each step (the trainer's own included) */
  workers = 1;
  ms90: number | null = null;
  phaseAt: { crossed50: number | null; crossed90: number | null; ms90: number | null } = {
    crossed50: null,
    crossed90: null,
    ms90: null,
  };
  cmp: CompareRun | null = null;
  /** the status sentence (always describes the run now) and the notice (refusal, divergence) */
  statusText = '';
  /** the last phase change ("Step 180: Accuracy crossed 0.9: induction heads have formed."), shown
   *  on the page as well as announced; '' before the first */
  phaseText = '';
  notice: Notice | null = null;
  /** play as soon as the trainer is ready (a link with play=1, or a restart while running) */
  wantPlay = false;
  /** paused because the page or the embed went out of view; resumes when back */
  autoPaused = false;
  /** whether the view is on screen (an embed pauses when scrolled away) */
  visible = true;

  protected readonly hooks: SessionHooks;

  constructor(hooks: SessionHooks) {
    this.hooks = hooks;
  }

  get stepsPerSec(): number {
    return this.speed.stepsPerSec;
  }
  get gflops(): number {
    return this.speed.gflops;
  }
  /** ms totals of this trainer's run (the bench reads them: where the wall time goes) */
  get split(): Throughput['split'] {
    return this.speed.split;
  }

  dims(): { L: number; H: number; T: number } {
    const c = this.config as { layers?: number; heads?: number };
    return { L: c.layers ?? 0, H: c.heads ?? 0, T: this.probe.length };
  }

  /** True when Play/Step may start the trainer. */
  get canRun(): boolean {
    return this.run === 'idle' || this.run === 'stopped' || this.run === 'diverged';
  }

  // ---------- status ----------

  setStatus(text: string): void {
    this.statusText = text;
    this.hooks.statusChanged?.();
  }

  protected showNotice(text: string, offerReset: boolean): void {
    this.notice = { text, offerReset };
    this.hooks.statusChanged?.();
  }

  protected hideNotice(): void {
    if (!this.notice) return;
    this.notice = null;
    this.hooks.statusChanged?.();
  }
}
