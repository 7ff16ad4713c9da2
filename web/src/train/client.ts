// The Train tab's handle on its Worker. Reset = a new Worker (the old one is terminated, which
// also stops a train() call that is running inside the wasm core); messages of an old Worker are
// dropped.
import type { TrainMessage, TrainRequest } from './protocol';
import { workerBlockedMessage } from '../wasm/core-build';

export class TrainClient {
  private worker: Worker | null = null;
  private nextId = 1;
  private waiting = new Map<number, (m: Extract<TrainMessage, { kind: 'weights' }> | null) => void>();

  constructor(private onMessage: (m: TrainMessage) => void) {}

  get started(): boolean {
    return this.worker !== null;
  }

  start(config: Record<string, unknown>, evalEvery: number, snapEvery: number, workers = 1): void {
    this.stop();
    let w: Worker;
    try {
      w = new Worker(new URL('./worker.ts', import.meta.url), { type: 'module', name: 'attention-train' });
    } catch (err) {
      this.onMessage({ kind: 'fatal', message: workerBlockedMessage('training', err) });
      return;
    }
    this.worker = w;
    w.onmessage = (e: MessageEvent<TrainMessage>) => {
      if (this.worker !== w) return;
      const m = e.data;
      if (m.kind === 'weights') {
        const f = this.waiting.get(m.id);
        this.waiting.delete(m.id);
        f?.(m);
        return;
      }
      this.onMessage(m);
    };
    w.onerror = (e) => {
      if (this.worker !== w) return;
      e.preventDefault();
      this.onMessage({
        kind: 'fatal',
        message: `The training worker failed: ${e.message || 'unknown error (is WebAssembly allowed?)'}`,
      });
    };
    this.send({ kind: 'init', config, evalEvery, snapEvery, workers });
  }

  send(m: TrainRequest): void {
    this.worker?.postMessage(m);
  }

  /** The trainer's current weights (copies), or null when there is no trainer. */
  weights(): Promise<Extract<TrainMessage, { kind: 'weights' }> | null> {
    if (!this.worker) return Promise.resolve(null);
    const id = this.nextId++;
    return new Promise((resolve) => {
      this.waiting.set(id, resolve);
      this.send({ kind: 'weights', id });
    });
  }

  stop(): void {
    this.worker?.terminate();
    this.worker = null;
    for (const f of this.waiting.values()) f(null);
    this.waiting.clear();
  }
}
