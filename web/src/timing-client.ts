// Starts a timing sweep in a fresh module Worker and cancels it by terminating that Worker, which
// stops even a call that is running inside the wasm core. One sweep at a time.
import type { TimingMessage } from './timing-protocol';
import type { SweepParams } from './timing-model';

export class TimingClient {
  private worker: Worker | null = null;

  get running(): boolean {
    return this.worker !== null;
  }

  run(params: SweepParams, budgetMs: number, onMessage: (m: TimingMessage) => void): void {
    this.cancel();
    const w = new Worker(new URL('./timing-worker.ts', import.meta.url), { type: 'module', name: 'attention-timing' });
    this.worker = w;
    const finish = () => {
      if (this.worker === w) this.worker = null;
      w.terminate(); // frees the sweep's wasm heap (the naive kernel's T×T weights)
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
      onMessage({ kind: 'fatal', message: `The timing worker failed: ${e.message || 'unknown error (is WebAssembly allowed?)'}` });
    };
    w.postMessage({ kind: 'run', params, budgetMs });
  }

  /** Stop the running sweep now. Returns whether one was running. */
  cancel(): boolean {
    const w = this.worker;
    if (!w) return false;
    this.worker = null;
    w.terminate();
    return true;
  }
}
