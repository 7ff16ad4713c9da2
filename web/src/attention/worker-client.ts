// Talks to the compute Worker. Requests are coalesced: while one computation runs, only the
// latest pending request is kept, so dragging a slider never queues stale work.
import type { ModelSlice } from './state';
import type { AttentionResult, CheckResult, StudyResult, WorkerResponse } from './protocol';
import type { MemoryParams, MemoryTable } from '../measure/model';
import { coreWorkerName, type CoreBuildInfo } from '../wasm/core-build';
import { resultArrays } from './compute';
import { createCoreService } from './core-service';

/** What the client needs of a Worker; the page-thread stand-in provides the same. */
interface Port {
  postMessage(msg: unknown, transfer?: Transferable[]): void;
  onmessage: ((e: MessageEvent<WorkerResponse>) => void) | null;
  onerror: ((e: ErrorEvent) => void) | null;
}

/** The compute service on the page's own thread, behind a Worker-like port. Used where `new
 *  Worker()` throws: a frame sandboxed with `allow-scripts` only has an opaque origin, and
 *  Chromium refuses to start a Worker from it (SecurityError). Slower for large states (the page's
 *  thread computes), but the views draw instead of an empty stage. */
function pageThreadPort(name: string): Port {
  const port: Port = { postMessage: () => {}, onmessage: null, onerror: null };
  const handle = createCoreService(name, (msg) =>
    queueMicrotask(() => port.onmessage?.({ data: msg } as MessageEvent<WorkerResponse>)),
  );
  port.postMessage = (msg) => void handle(msg as never);
  return port;
}

/** True when the compute runs on the page's thread (no Worker could be created here). */
export let computeOnPageThread = false;

export interface ComputeOutcome<State extends ModelSlice = ModelSlice> {
  state: State;
  /** performance.now() when the request was made (for recompute+redraw timing). */
  requestedAt: number;
  result?: AttentionResult;
  error?: { message: string; field: string | null; fatal: boolean };
  /** True when no newer request is waiting. */
  latest: boolean;
}

/** `State`: the page's state type (the Worker reads its model; the outcome carries it back). */
export class ComputeClient<State extends ModelSlice = ModelSlice> {
  private worker: Port;
  private nextId = 1;
  private inflight: { id: number; state: State; requestedAt: number } | null = null;
  private pending: { state: State; requestedAt: number } | null = null;
  /** Side requests (study, check, memory): answered in order, outside the coalesced computations. */
  private waiters = new Map<number, { resolve: (v: never) => void; reject: (e: Error) => void }>();

  constructor(private onOutcome: (o: ComputeOutcome<State>) => void) {
    const name = coreWorkerName('attention-core');
    try {
      this.worker = new Worker(new URL('./worker.ts', import.meta.url), { type: 'module', name });
    } catch {
      computeOnPageThread = true;
      this.worker = pageThreadPort(name);
    }
    this.worker.onmessage = (e: MessageEvent<WorkerResponse>) => this.onMessage(e.data);
    this.worker.onerror = (e) => {
      const inflight = this.inflight;
      this.inflight = null;
      if (inflight)
        this.onOutcome({
          state: inflight.state,
          requestedAt: inflight.requestedAt,
          error: { message: `The compute worker failed: ${e.message || 'unknown error'}`, field: null, fatal: true },
          latest: !this.pending,
        });
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

  /** Gives a result the Worker computed back to it, once the page no longer reads it (its
   *  arrays are transferred: they are empty on the page afterwards). */
  recycle(r: AttentionResult): void {
    const arrays = resultArrays(r).filter((a) => a.byteLength > 0);
    if (arrays.length === 0) return;
    this.worker.postMessage(
      { kind: 'recycle', id: this.nextId++, arrays },
      arrays.map((a) => a.buffer),
    );
  }

  study(): Promise<StudyResult> {
    return this.ask({ kind: 'study' });
  }

  /** core.check for a state (the result carries it already when the state is small). */
  check(state: State): Promise<CheckResult> {
    return this.ask({ kind: 'check', state });
  }

  /** The core's memory estimates for the Timing lab. */
  memory(params: MemoryParams): Promise<MemoryTable> {
    return this.ask({ kind: 'memory', params });
  }

  /** Which build of the core the compute Worker runs (relaxed SIMD or SIMD128). */
  about(): Promise<CoreBuildInfo> {
    return this.ask({ kind: 'about' });
  }

  private ask<T>(
    req:
      | { kind: 'study' }
      | { kind: 'about' }
      | { kind: 'check'; state: State }
      | { kind: 'memory'; params: MemoryParams },
  ): Promise<T> {
    const id = this.nextId++;
    return new Promise<T>((resolve, reject) => {
      this.waiters.set(id, { resolve: resolve as (v: never) => void, reject });
      this.worker.postMessage({ ...req, id });
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
    if (m.kind !== 'compute') {
      const w = this.waiters.get(m.id);
      this.waiters.delete(m.id);
      if (!w) return;
      if (!m.ok) w.reject(Object.assign(new Error(m.error.message), { field: m.error.field }));
      else
        w.resolve(
          (m.kind === 'study'
            ? m.study
            : m.kind === 'check'
              ? m.check
              : m.kind === 'about'
                ? m.about
                : m.memory) as never,
        );
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
