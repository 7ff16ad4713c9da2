// The Timing lab's run state, without DOM: the sweep's points, skip and refusal notes, where each
// kernel stopped, the phase and the status sentence. It talks to the timing Worker only through a
// client (timing/client.ts in the page, a fake in tests/web/timing-session.test.ts) and tells the
// view what changed; the panels read it and draw.
import type { TimingMessage, TimingPoint } from './protocol';
import { fitExponent, formatMs, skipText, type Fit, type SweepParams, type TimingKernel } from '../measure/model';

/** What the session needs of the Worker (TimingClient has these). */
export interface TimingClientLike {
  run(params: SweepParams, budgetMs: number, onMessage: (m: TimingMessage) => void): void;
  cancel(): boolean;
}

export type Phase = 'idle' | 'running' | 'done' | 'cancelled' | 'error';

export interface Sweep {
  params: SweepParams;
  points: TimingPoint[];
  notes: { text: string; kind: 'skip' | 'refused' }[];
  /** Why a kernel has no point from some T on. */
  stops: Map<TimingKernel, { t: number; why: string }>;
  heapBytes: number;
  startedAt: number;
}

/** 'status': only the status line and the progress changed; 'all': redraw everything. */
export type TimingChange = 'status' | 'all';

export class TimingSession {
  sweep: Sweep | null = null;
  phase: Phase = 'idle';
  statusText = 'Press Run to start the sweep.';
  /** Progress of the running sweep, 0…1. */
  fraction = 0;

  constructor(
    private client: TimingClientLike,
    private changed: (what: TimingChange) => void = () => {},
    private now: () => number = () => performance.now(),
  ) {}

  start(params: SweepParams, budgetMs: number): void {
    this.sweep = { params, points: [], notes: [], stops: new Map(), heapBytes: NaN, startedAt: this.now() };
    this.phase = 'running';
    this.statusText = 'Loading a fresh WebAssembly instance and warming it up…';
    this.fraction = 0;
    this.changed('all');
    this.client.run(params, budgetMs, (m) => this.onMessage(m));
  }

  /** Stop the running sweep; returns whether one was running. */
  cancel(): boolean {
    if (!this.client.cancel()) return false;
    this.phase = 'cancelled';
    const n = this.sweep?.points.length ?? 0;
    this.statusText = `Cancelled. The worker was stopped; ${n} completed point${n === 1 ? '' : 's'} kept.`;
    this.changed('all');
    return true;
  }

  onMessage(m: TimingMessage): void {
    const sw = this.sweep;
    if (!sw) return;
    switch (m.kind) {
      case 'ready':
        sw.heapBytes = m.heapBytes;
        this.statusText = `Warmed up in ${formatMs(m.warmupMs)}; timing…`;
        break;
      case 'progress':
        this.fraction = m.fraction;
        this.statusText = m.text;
        this.changed('status');
        return;
      case 'point':
        sw.points.push(m.point);
        sw.heapBytes = m.point.heapBytes;
        break;
      case 'skip':
        sw.notes.push({ kind: 'skip', text: skipText(m.skip, m.kernel) });
        sw.stops.set(m.kernel, {
          t: m.skip.t,
          why: m.skip.kind === 'memory' ? 'skipped: over the memory cap' : 'skipped: over the time budget',
        });
        break;
      case 'refused':
        sw.notes.push({
          kind: 'refused',
          text: `${m.kernel}: the core refused T = ${m.t}: ${m.message}${m.field ? ` (field: ${m.field})` : ''}`,
        });
        sw.stops.set(m.kernel, {
          t: m.t,
          why: m.field === 'memory' ? 'refused by the core (memory)' : 'refused by the core',
        });
        break;
      case 'done': {
        sw.heapBytes = m.heapBytes;
        this.phase = 'done';
        this.fraction = 1;
        const secs = ((this.now() - sw.startedAt) / 1000).toFixed(1);
        const f = this.fits();
        const main = f.naive ?? f.tiled;
        const cmp = this.comparison();
        this.statusText = cmp
          ? `Done in ${secs} s. Fitted exponents: linear attention ${cmp.linear.exponent.toFixed(2)}, ${cmp.softmaxKernel} softmax ${cmp.softmax.exponent.toFixed(2)}.`
          : `Done in ${secs} s.${main ? ` Fitted exponent ${main.exponent.toFixed(2)} (${f.naive ? 'naive' : 'tiled'}).` : f.linear ? ` Fitted exponent ${f.linear.exponent.toFixed(2)} (linear).` : ''}`;
        break;
      }
      case 'fatal':
        this.phase = 'error';
        this.statusText = m.message;
        break;
    }
    this.changed('all');
  }

  fits(): Partial<Record<TimingKernel, Fit>> {
    const out: Partial<Record<TimingKernel, Fit>> = {};
    for (const k of this.sweep?.params.kernels ?? []) {
      const f = fitExponent(this.pointsOf(k).map((p) => ({ t: p.t, ms: p.stats.median })));
      if (f) out[k] = f;
    }
    return out;
  }

  /** Linear attention's fit next to softmax's (the tiled kernel's, else the naive one's), when the
   *  sweep timed both and each has a fit; null otherwise. */
  comparison(): { linear: Fit; softmax: Fit; softmaxKernel: 'naive' | 'tiled' } | null {
    const f = this.fits();
    const softmaxKernel = f.tiled ? 'tiled' : f.naive ? 'naive' : null;
    if (!f.linear || !softmaxKernel) return null;
    return { linear: f.linear, softmax: f[softmaxKernel]!, softmaxKernel };
  }

  pointsOf(k: TimingKernel): TimingPoint[] {
    return (this.sweep?.points ?? []).filter((p) => p.kernel === k);
  }
}
