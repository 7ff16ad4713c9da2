// Starts a timing sweep in a fresh module Worker and cancels it by terminating that Worker, which
// stops even a call that is running inside the wasm core. A split sweep's part Workers are started
// here too (not inside the timing Worker), so ending a sweep terminates every Worker it used, from
// the page, at once. One sweep at a time.
import type { TimingMessage, TimingRunRequest } from './protocol';
import type { PartRequest } from './part-worker';
import type { SweepParams } from '../measure/model';
import { coreWorkerName, workerBlockedMessage } from '../wasm/core-build';

export class TimingClient {
  private worker: Worker | null = null;
  private parts: Worker[] = [];

  get running(): boolean {
    return this.worker !== null;
  }

  run(params: SweepParams, budgetMs: number, onMessage: (m: TimingMessage) => void): void {
    this.cancel();
    let w: Worker;
    try {
      w = new Worker(new URL('./worker.ts', import.meta.url), {
        type: 'module',
        name: coreWorkerName('attention-timing'),
      });
    } catch (err) {
      onMessage({ kind: 'fatal', message: workerBlockedMessage('timing lab', err) });
      return;
    }
    this.worker = w;
    const ports: MessagePort[] = [];
    const parts: Worker[] = [];
    if (params.mode === 'qkv' && (params.workers ?? 1) > 1) {
      for (let i = 0; i < params.workers!; i++) {
        const pw = new Worker(new URL('./part-worker.ts', import.meta.url), {
          type: 'module',
          name: coreWorkerName(`attention-part-${i + 1}`),
        });
        const ch = new MessageChannel();
        pw.postMessage({ kind: 'port', port: ch.port1 } satisfies PartRequest, [ch.port1]);
        ports.push(ch.port2);
        parts.push(pw);
      }
    }
    this.parts = parts;
    const finish = () => {
      if (this.worker === w) {
        this.worker = null;
        this.parts = [];
      }
      // frees the sweep's wasm heaps (the naive kernel's T×T weights)
      w.terminate();
      for (const pw of parts) pw.terminate();
    };
    w.onmessage = (e: MessageEvent<TimingMessage>) => {
      if (this.worker !== w) return;
      const m = e.data;
      if (m.kind === 'done' || m.kind === 'fatal') finish();
      onMessage(m);
    };
    w.onerror = (e) => {
      if (this.worker !== w) return;
      e.preventDefault();
      finish();
      onMessage({
        kind: 'fatal',
        message: `The timing worker failed: ${e.message || 'unknown error (is WebAssembly allowed?)'}`,
      });
    };
    for (const pw of parts) {
      pw.onerror = (e) => {
        if (this.worker !== w) return;
        e.preventDefault();
        finish();
        onMessage({ kind: 'fatal', message: `A part worker failed: ${e.message || 'unknown error'}` });
      };
    }
    w.postMessage({ kind: 'run', params, budgetMs, ports } satisfies TimingRunRequest, ports);
  }

  /** Stop the running sweep now. Returns whether one was running. */
  cancel(): boolean {
    const w = this.worker;
    if (!w) return false;
    this.worker = null;
    w.terminate();
    for (const pw of this.parts) pw.terminate();
    this.parts = [];
    return true;
  }
}
