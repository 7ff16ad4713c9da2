// Talks to the compute Worker. Requests are coalesced: while one computation runs, only the
// latest pending request is kept, so dragging a slider never queues stale work.
import type { State } from '../app/state';
import type { AttentionResult, StudyResult, WorkerResponse } from './protocol';

export interface ComputeOutcome {
  state: State;
  /** performance.now() when the request was made (for recompute+redraw timing). */
  requestedAt: number;
  result?: AttentionResult;
  error?: { message: string; field: string | null; fatal: boolean };
  /** True when no newer request is waiting. */
  latest: boolean;
}

export class ComputeClient {
  private worker: Worker;
  private nextId = 1;
  private inflight: { id: number; state: State; requestedAt: number } | null = null;
  private pending: { state: State; requestedAt: number } | null = null;
  private studyWaiters = new Map<number, (s: StudyResult | null, err?: string) => void>();

  constructor(private onOutcome: (o: ComputeOutcome) => void) {
    this.worker = new Worker(new URL('./worker.ts', import.meta.url), { type: 'module', name: 'attention-core' });
    this.worker.onmessage = (e: MessageEvent<WorkerResponse>) => this.onMessage(e.data);
    this.worker.onerror = (e) => {
      const inflight = this.inflight;
      this.inflight = null;
      if (inflight) this.onOutcome({ state: inflight.state, requestedAt: inflight.requestedAt, error: { message: `The compute worker failed: ${e.message || 'unknown error'}`, field: null, fatal: true }, latest: !this.pending });
      this.pump();
    };
  }

  get busy(): boolean {
    return this.inflight !== null || this.pending !== null;
  }

  request(state: State): void {
    this.pending = { state, requestedAt: performance.now() };
    this.pump();
  }

  study(): Promise<StudyResult> {
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.studyWaiters.set(id, (s, err) => (s ? resolve(s) : reject(new Error(err))));
      this.worker.postMessage({ kind: 'study', id });
    });
  }

  private pump(): void {
    if (this.inflight || !this.pending) return;
    const id = this.nextId++;
    this.inflight = { id, ...this.pending };
    this.pending = null;
    this.worker.postMessage({ kind: 'compute', id, state: this.inflight.state });
  }

  private onMessage(m: WorkerResponse): void {
    if (m.kind === 'study') {
      const w = this.studyWaiters.get(m.id);
      this.studyWaiters.delete(m.id);
      if (w) m.ok ? w(m.study) : w(null, m.error.message);
      return;
    }
    const inflight = this.inflight;
    if (!inflight || inflight.id !== m.id) return;
    this.inflight = null;
    const latest = this.pending === null;
    if (m.ok) this.onOutcome({ state: inflight.state, requestedAt: inflight.requestedAt, result: m.result, latest });
    else this.onOutcome({ state: inflight.state, requestedAt: inflight.requestedAt, error: m.error, latest });
    this.pump();
  }
}
